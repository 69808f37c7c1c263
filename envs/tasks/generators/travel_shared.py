"""What the travel and the cross-scenario generators share about a trip (``travel`` builds on it,
``cross`` imports it through ``travel``): the date helpers, the city pairs each means of travel
serves and the holidays a user may name (both computed once per process), the travel content
sorted in the order draws pick from, the facts a user states about the journey and the hotel, the
journey's rubric items (``TravelItems``), the drawn weather, journey time and fare, ticket budget
and wanted hotel, the golden calls that book a ticket or a room, and the routes that break one
booking-process item each.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from servicegym.envs.tasks.generators.common import Rubric, call, fmt_amount, hhmm
from servicegym.envs.tasks.generators.content_travel import (
    ATTRACTIONS,
    CITIES,
    HOLIDAYS,
    HOTEL_TAGS,
    MODE_FARE,
    MODE_SPEED,
    TICKET_REASONS,
    WEEKDAYS,
)
from servicegym.world_state.core import DATE_FORMAT, haversine_m
from servicegym.world_state.life.tools import china_holidays


@lru_cache(maxsize=8192)
def _day(d: datetime) -> str:
    """``d`` as ``YYYY-MM-DD`` (memoised: a task names the same few days dozens of times)."""
    return d.strftime(DATE_FORMAT)


@lru_cache(maxsize=8192)
def _weekday(day: str) -> int:
    """The weekday (Monday 0) of a ``YYYY-MM-DD`` date."""
    return datetime.fromisoformat(day).weekday()


@lru_cache(maxsize=2)
def city_pairs(mode: str) -> tuple[tuple[str, str, float], ...]:
    """(from, to, km) of the city pairs a flight (350 km or more) or a train (150-1300 km) serves,
    in the order of the sorted city names (computed once per process)."""
    out = []
    for a in CITY_NAMES:
        for b in CITY_NAMES:
            if a != b:
                km = haversine_m(CITIES[a][0], CITIES[a][1], CITIES[b][0], CITIES[b][1]) / 1000
                if (mode == "flight" and km >= 350) or (mode == "train" and 150 <= km <= 1300):
                    out.append((a, b, km))
    return tuple(out)


@lru_cache(maxsize=1)
def holiday_options() -> tuple[tuple[str, int, date, bool], ...]:
    """(name, year, first day, lasts several days) of the holidays a user may name: each of
    ``HOLIDAYS`` in 2025 and 2026 that starts after January 30 (computed once per process)."""
    out = []
    for year in (2025, 2026):
        table = china_holidays(year, "en_US")  # the same (cached) calendar the tools answer from
        for name in HOLIDAYS:
            days = sorted(d for d, n in table.items() if n == name)
            if days and days[0].timetuple().tm_yday > 30:
                out.append((name, year, days[0], len(days) > 1))
    return tuple(out)


# content in the order draws pick from, sorted once per process (a draw from a tuple is the draw
# from the same list)
CITY_NAMES = tuple(sorted(CITIES))
HOTEL_TAG_NAMES = tuple(sorted(HOTEL_TAGS))
ATTRACTION_KINDS = tuple(sorted(ATTRACTIONS))
TICKET_REASON_TYPES = tuple(sorted(TICKET_REASONS))


def _spoken_day(d: datetime) -> str:
    return f"{WEEKDAYS[d.weekday()]}, {d:%B} {d.day}"


def state_travel_date(
    fact: Callable[..., None], holiday: tuple[str, int, bool] | None, arrive: datetime, keywords: list[str]
) -> None:
    """The ``travel_date`` fact: the holiday the user names (its first day when it lasts several),
    else the arrival day spoken as a weekday and date."""
    if holiday is not None:
        hname, _, multi = holiday
        fact(
            "travel_date",
            f"I want to arrive on the first day of this year's {hname} holiday."
            if multi
            else f"I want to arrive on {hname} this year.",
            keywords,
        )
    else:
        fact("travel_date", f"I want to arrive on {_spoken_day(arrive)}.", keywords)


def state_ticket_wishes(
    fact: Callable[..., None],
    keywords: dict[str, list[str]],
    mode: str,
    after: int | None,
    seat_type: str | None,
    budget: float | None,
) -> None:
    """The ticket facts a travel task may have, in this order: the earliest departure, the seat
    class and the budget for all the tickets (each only when given)."""
    if after is not None:
        fact("departure", f"I can't leave before {hhmm(after)}.", keywords["departure"])
    if seat_type is not None:
        fact("seat", f"I want {seat_type} seats.", keywords["seat"])
    if budget is not None:
        fact(
            "ticket_budget",
            f"The {mode} tickets shouldn't cost more than {fmt_amount(budget)} yuan in total.",
            keywords["ticket_budget"],
        )


def state_hotel_wishes(
    fact: Callable[..., None], keywords: dict[str, list[str]], min_score: float | None, tag: str | None
) -> None:
    """The hotel's minimum rating and required amenity, each only when given."""
    if min_score is not None:
        fact("hotel_rating", f"The hotel should be rated at least {min_score:g}.", keywords["hotel_rating"])
    if tag is not None:
        fact("hotel_tag", HOTEL_TAGS[tag], keywords["hotel_tag"])


class TravelItems:
    """The journey's rubric items that travel tasks and cross-scenario tasks share, each added to
    ``rubric`` in the order the generator calls them; an item whose constraint is None is left out."""

    def __init__(self, rubric: Rubric, mode: str) -> None:
        self.add, self.mode = rubric.add, mode

    def outbound(self, a: str, b: str, date: str) -> None:
        self.add(
            "outbound",
            "transport_route",
            f"a {self.mode} from {a} to {b} on {date}",
            order_type=self.mode,
            departure_city=a,
            arrival_city=b,
            date=date,
        )

    def depart_after(self, after: int | None) -> None:
        if after is not None:
            self.add(
                "depart_after",
                "depart_after",
                f"leaves at or after {hhmm(after)}",
                order_type=self.mode,
                after=hhmm(after),
            )

    def seat_class(self, seat_type: str | None) -> None:
        if seat_type is not None:
            self.add("seat_class", "product_type", f"seat class {seat_type}", order_type=self.mode, value=seat_type)

    def ticket_budget(self, budget: float | None) -> None:
        if budget is not None:
            self.add(
                "ticket_budget",
                "budget",
                f"{self.mode} tickets at most {fmt_amount(budget)} in total",
                order_type=self.mode,
                max_total=budget,
            )

    def travellers(self, qty: int | None) -> None:
        if qty is not None:
            self.add("travellers", "quantity", f"{qty} {self.mode} seats", order_type=self.mode, count=qty)

    def hotel_distance(self, max_m: float, lon: float, lat: float) -> None:
        self.add(
            "hotel_distance",
            "hotel_distance",
            f"hotel within {fmt_amount(max_m)} m of the venue",
            max_m=max_m,
            longitude=lon,
            latitude=lat,
        )

    def hotel_wishes(self, min_score: float | None, tag: str | None) -> None:
        if min_score is not None:
            self.add("hotel_rating", "hotel_rating", f"hotel rated at least {min_score}", min_score=min_score)
        if tag is not None:
            self.add("hotel_tag", "hotel_tag", f"hotel offers {tag}", tag=tag)


def weather(rng: random.Random, city: str, dates: list[str], first_id: int = 0) -> list[dict[str, Any]]:
    """A drawn forecast for ``city`` on each of ``dates``, ids ``W<first_id>``, ``W<first_id + 1>``, ..."""
    return [
        {
            "id": f"W{first_id + i}",
            "city": city,
            "category": rng.choice(["sunny", "cloudy", "rainy"]),
            "datetime": date,
            "temperature": [rng.randint(2, 18), rng.randint(19, 33)],
            "humidity": rng.randint(30, 90),
        }
        for i, date in enumerate(dates)
    ]


def journey(mode: str, km: float) -> tuple[int, float]:
    """The minutes (to 5) a flight or train takes for ``km`` and its base fare."""
    speed, overhead = MODE_SPEED[mode]
    per_km, floor = MODE_FARE[mode]
    return int(round((km / speed * 60 + overhead) / 5) * 5), max(floor, km * per_km)


def ticket_budget(rng: random.Random, fares: dict[str, dict[str, float]], seat_type: str, qty: int) -> float:
    """A ticket budget (to 50) 5-20% above the dearest fare of ``qty`` seats of ``seat_type``."""
    top = max(f[seat_type] for f in fares.values()) * qty
    return float(math.ceil(top * rng.uniform(1.05, 1.2) / 50) * 50)


def draw_hotel(
    rng: random.Random, rating: bool, amenity: bool
) -> tuple[int, float | None, float, str | None, list[str]]:
    """The wanted hotel's stars, the minimum rating (with ``rating``), its score, the required
    amenity (with ``amenity``) and its amenities."""
    star = rng.choice([3, 4, 5])
    min_score = rng.choice([4.5, 4.6, 4.7]) if rating else None
    score = math.ceil(rng.uniform(min_score, 5.0) * 10) / 10 if min_score else rng.uniform(4.0, 4.9)
    tag = rng.choice(HOTEL_TAG_NAMES) if amenity else None
    tags = sorted(set(rng.sample([t for t in HOTEL_TAGS if t != tag], rng.randint(0, 2)) + ([tag] if tag else [])))
    return star, min_score, score, tag, tags


def transport_booking(
    mode: str, transport_id: str, seat_id: str, user_id: str, date: str, qty: int, pay: str | None
) -> list[str]:
    """The golden calls that book ``qty`` seats on a flight or train and, with ``pay`` (the order
    id the tools will assign), pay for them."""
    out = [
        call(
            f"create_{mode}_order",
            **{f"{mode}_id": transport_id},
            seat_id=seat_id,
            user_id=user_id,
            date=date,
            quantity=qty,
        )
    ]
    if pay is not None:
        out.append(call(f"pay_{mode}_order", order_id=pay))
    return out


def hotel_booking(hotel_id: str, room_id: str, user_id: str, check_out: str, pay: str | None) -> list[str]:
    """The golden calls that book a room until ``check_out`` and, with ``pay`` (the order id), pay for it."""
    out = [call("create_hotel_order", hotel_id=hotel_id, room_id=room_id, user_id=user_id, check_out_date=check_out)]
    if pay is not None:
        out.append(call("pay_hotel_order", order_id=pay))
    return out


def process_violations(golden: Any) -> dict[str, Any]:
    """The routes that break one booking-process item each (a second ticket or room, an unpaid
    ticket or room, no confirmation, no totals told): for any route type with the fields ``extra``,
    ``pay_transport``, ``pay_hotel``, ``confirm`` and ``tell_totals``."""
    return {
        "transport_count": replace(golden, extra=frozenset({"transport"})),
        "hotel_count": replace(golden, extra=frozenset({"hotel"})),
        "transport_paid": replace(golden, pay_transport=False),
        "hotel_paid": replace(golden, pay_hotel=False),
        "confirmed": replace(golden, confirm=False),
        "informed_totals": replace(golden, tell_totals=False),
    }
