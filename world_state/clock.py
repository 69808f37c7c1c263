"""The task clock and the time, date, money and geometry helpers of the world's core
(``world_state.core`` re-exports every name here): ``Clock``, the task's simulated time, which
moves only when the world says so; the cached parsing and formatting of times and dates
(``parse_time``, ``time_text``, ``time_hhmm``, ``parse_date``, ``date_text``; ``TIME_FORMAT``,
``DATE_FORMAT``); ``round2`` for amounts of money; ``haversine_m`` for distances."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

EARTH_RADIUS_M = 6_371_000.0
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
DATE_FORMAT = "%Y-%m-%d"


class Clock:
    """The task's simulated clock; it moves only when the world says so, never by itself."""

    __slots__ = ("_now", "_text")

    def __init__(self, now: datetime) -> None:
        self.now = now

    @property
    def now(self) -> datetime:
        return self._now

    @now.setter
    def now(self, value: datetime) -> None:
        self._now = value
        self._text: str | None = None

    @classmethod
    def parse(cls, text: str) -> Clock:
        return cls(parse_time(text))

    def copy(self) -> Clock:
        """The same time, with its text if already formatted (a world copy at every reset would
        otherwise format it again on its first step)."""
        new = Clock.__new__(Clock)
        new._now, new._text = self._now, self.text()
        return new

    def text(self) -> str:
        # every history entry is stamped with it, so format once per clock move
        if self._text is None:
            self._text = self._now.strftime(TIME_FORMAT)
        return self._text

    def advance(self, minutes: float) -> None:
        self.now = self.now + timedelta(minutes=minutes)


@lru_cache(maxsize=4096)
def parse_time(text: str) -> datetime:
    """Parse ``YYYY-MM-DD HH:MM:SS`` (surrounding blanks allowed); raise ValueError otherwise.

    Cached: strptime is slow and tools re-read the same few times (now, dispatch times) often."""
    return datetime.strptime(text.strip(), TIME_FORMAT)


@lru_cache(maxsize=4096)
def time_text(text: str) -> str:
    """``parse_time(text).strftime(TIME_FORMAT)``: the canonical form of a time a tool stores
    (blanks trimmed, fields zero-padded); cached like ``parse_time`` (strftime costs a microsecond)."""
    return parse_time(text).strftime(TIME_FORMAT)


@lru_cache(maxsize=4096)
def time_hhmm(text: str) -> str:
    """``parse_time(text).strftime("%H:%M")``, cached (opening-hour rules ask it on every booking)."""
    return parse_time(text).strftime("%H:%M")


@lru_cache(maxsize=4096)
def parse_date(text: str) -> datetime:
    """Cached like ``parse_time``."""
    return datetime.strptime(text.strip(), DATE_FORMAT)


@lru_cache(maxsize=4096)
def date_text(text: str) -> str:
    """``parse_date(text).strftime(DATE_FORMAT)``: the canonical form of a date, cached."""
    return parse_date(text).strftime(DATE_FORMAT)


def round2(x: Any) -> float:
    """``round(float(x) + 0.0, 2)``: an amount of money to the cent (``-0.0`` made ``0.0``), shared by the
    payments and travel worlds."""
    return round(float(x) + 0.0, 2)


def haversine_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance in metres on a sphere of radius 6,371,000 m (VitaBench's model)."""
    if lon1 == lon2 and lat1 == lat2:
        return 0.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))
