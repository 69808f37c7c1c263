"""The eight tools every VitaBench life-service agent sees, and the relevance ranking and
geocoding they rely on.

Geocoding reads only the task's own address table (VitaBench's public code kept a process-wide
registry that leaked addresses across tasks and grew without bound).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from functools import lru_cache
from typing import Any

import holidays
import numpy as np
from rapidfuzz import fuzz, process, utils

from servicegym.world_state.core import DATE_FORMAT, haversine_m
from servicegym.world_state.life.entities import LifeWorld, Location
from servicegym.world_state.tools import ToolError, tool

SEARCH_THRESHOLD = 60.0
GEOCODE_THRESHOLD = 85.0


class SearchIndex:
    """Search texts of a catalogue, normalised once (lower case, no punctuation)."""

    __slots__ = ("ids", "texts")

    def __init__(self, docs: dict[str, str]) -> None:
        self.ids = list(docs)
        self.texts = [utils.default_process(t) for t in docs.values()]


def rank(
    keywords: list[str], docs: dict[str, str] | SearchIndex, top_k: int, threshold: float = SEARCH_THRESHOLD
) -> list[tuple[str, float]]:
    """Ids of ``docs`` ranked by fuzzy relevance to ``keywords`` (mean of the per-keyword best
    partial match, rounded to 0.01), keeping those at or above ``threshold``; ties keep catalogue
    order."""
    index = docs if isinstance(docs, SearchIndex) else SearchIndex(docs)
    if not index.ids or not keywords:
        return []
    queries = [utils.default_process(k) for k in keywords]
    # with one keyword the threshold can prune each comparison early; a mean cannot be pruned so
    cutoff = threshold if len(queries) == 1 else 0
    matrix = process.cdist(queries, index.texts, scorer=fuzz.partial_ratio, score_cutoff=cutoff)
    scores = np.round(matrix.mean(axis=0), 2)
    out: list[tuple[str, float]] = []
    for i in np.argsort(-scores, kind="stable"):
        s = float(scores[i])
        if s < threshold or len(out) == top_k:
            break
        out.append((index.ids[i], s))
    return out


def search_index(world: LifeWorld, table: str, text: Callable[[Any], str]) -> SearchIndex:
    """The search index of ``table``, built once per task and shared by its episodes (build it in
    the world's ``prepare``; searches only read it)."""
    key = f"_index_{table}"
    index = world.extra.get(key)
    if index is None:
        index = SearchIndex({row.key: text(row) for row in world.table(table)})
        world.extra[key] = index
    return index


def geocode(world: LifeWorld, address: str) -> Location:
    """The task's address closest in wording to ``address``; ToolError when none is close."""
    table = world.table("locations")
    address = address.strip()
    if not address:
        raise ToolError("address is empty")
    hit = table.get(address)
    if hit is not None:
        return hit
    best = process.extractOne(
        address, list(table.rows), scorer=fuzz.token_set_ratio, processor=utils.default_process
    )
    if best is None or best[1] < GEOCODE_THRESHOLD:
        raise ToolError(
            f"no coordinates known for address {address!r}; use an address from the user's profile, "
            "order history or the conversation"
        )
    return table.rows[best[0]]


def _check_date(text: str, what: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT)
    except ValueError:
        raise ToolError(f"{what} must be a date in the form YYYY-MM-DD, got {text!r}") from None


@lru_cache(maxsize=64)
def china_holidays(year: int, language: str) -> dict[Any, str]:
    return dict(holidays.China(years=year, language=language))


def _holiday_language(world: LifeWorld) -> str:
    return "zh_CN" if world.extra.get("language") == "zh" else "en_US"


@tool(kind="generic")
def longitude_latitude_to_distance(
    world: LifeWorld, longitude1: float, latitude1: float, longitude2: float, latitude2: float
) -> float:
    """Great-circle distance in metres between two points, rounded to the metre.

    Args:
        longitude1: Longitude of the first point.
        latitude1: Latitude of the first point.
        longitude2: Longitude of the second point.
        latitude2: Latitude of the second point.
    """
    return round(haversine_m(longitude1, latitude1, longitude2, latitude2), 0)


@tool(kind="generic")
def weather(world: LifeWorld, address: str, date_start: str, date_end: str) -> list[dict[str, Any]]:
    """Weather forecast for the city of an address over a date range (inclusive).

    Args:
        address: An address or a city name.
        date_start: First date, YYYY-MM-DD.
        date_end: Last date, YYYY-MM-DD.
    """
    start, end = _check_date(date_start, "date_start"), _check_date(date_end, "date_end")
    rows = list(world.table("weather"))
    cities = sorted({w.city for w in rows})
    if not cities:
        raise ToolError("no weather information is available")
    best = process.extractOne(address, cities, scorer=fuzz.partial_ratio, processor=utils.default_process)
    if best is None or best[1] < 50:
        raise ToolError(f"no weather information for {address!r}; known cities: {', '.join(cities)}")
    hits = [
        w for w in rows if w.city == best[0] and start <= datetime.strptime(w.datetime, DATE_FORMAT) <= end
    ]
    hits.sort(key=lambda w: w.datetime)
    return [w.model_dump(mode="json", exclude={"id"}) for w in hits]


@tool(kind="generic")
def address_to_longitude_latitude(world: LifeWorld, address: str) -> list[float]:
    """Coordinates [longitude, latitude] of an address known to this task.

    Args:
        address: The full address text.
    """
    loc = geocode(world, address)
    return [loc.longitude, loc.latitude]


@tool(kind="generic")
def get_date_holiday_info(world: LifeWorld, date: str) -> str:
    """Whether a date is a public holiday in China, and which.

    Args:
        date: The date, YYYY-MM-DD.
    """
    day = _check_date(date, "date").date()
    name = china_holidays(day.year, _holiday_language(world)).get(day)
    return name if name else f"{date} is not a holiday"


@tool(kind="generic")
def get_holiday_date(world: LifeWorld, year: str, holiday_name: str) -> list[str]:
    """Dates of a named public holiday in a given year.

    Args:
        year: The year, e.g. 2025.
        holiday_name: The holiday's name, e.g. Dragon Boat Festival.
    """
    # ASCII digits only: str.isdigit() also admits "²", which int() refuses
    if not re.fullmatch(r"[0-9]{1,4}", year.strip()):
        raise ToolError(f"year must be a number such as 2025, got {year!r}")
    table = china_holidays(int(year), _holiday_language(world))
    names = sorted(set(table.values()))
    best = process.extractOne(holiday_name, names, scorer=fuzz.WRatio, processor=utils.default_process)
    if best is None or best[1] < 70:
        raise ToolError(f"no holiday named {holiday_name!r} in {year}; known: {', '.join(names)}")
    return sorted(d.isoformat() for d, n in table.items() if n == best[0])


@tool(kind="read")
def get_user_historical_behaviors(world: LifeWorld) -> dict[str, Any]:
    """The user's profile and historical consumption habits (preferences, recent orders, searches)."""
    return world.extra.get("user_historical_behaviors", {})


@tool(kind="read")
def get_user_all_orders(world: LifeWorld) -> list[Any]:
    """All of the user's orders, of every type and status."""
    return list(world.table("orders"))


@tool(kind="read")
def get_nearby(world: LifeWorld, longitude: float, latitude: float, range: float) -> list[dict[str, Any]]:
    """Places (stores, shops, hotels, ...) within a radius of a point, nearest first.

    Args:
        longitude: Longitude of the centre.
        latitude: Latitude of the centre.
        range: Radius in metres.
    """
    found = []
    for name in world.place_tables:
        for row in world.table(name):
            loc = world.place_location(row)
            if loc is None:
                continue
            d = round(haversine_m(longitude, latitude, loc.longitude, loc.latitude), 0)
            if d <= range:
                found.append((d, world.place_summary(name, row) | {"distance_m": d}))
    found.sort(key=lambda x: x[0])
    return [f for _, f in found]


SHARED_TOOLS = [
    longitude_latitude_to_distance,
    weather,
    address_to_longitude_latitude,
    get_date_holiday_info,
    get_holiday_date,
    get_user_historical_behaviors,
    get_user_all_orders,
    get_nearby,
]
