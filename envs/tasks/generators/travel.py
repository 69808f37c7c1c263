"""Seeded generator of online-travel tasks.

A task is a trip: the user lives in one city and must get to another for an event at a venue
(by flight or by train, on a date that may be given as a public holiday), stay in a hotel there
for some nights, perhaps visit an attraction, perhaps cancel a booking made by mistake, and
perhaps change their mind after everything is booked (move the trip a day: the ticket's date is
changed and its price difference paid or refunded, the hotel cancelled and rebooked).

Every constraint comes with a tempting wrong option in the world: a cheaper flight that lands too
late or leaves too early, a dearer one over the budget, a cheaper seat class, a hotel identical to
the right one but too far from the venue, rated lower, lacking the amenity or dearer a night, a
cheaper room type, an attraction of the wanted kind closed on the visit day, another kind of
attraction, a cheaper ticket type; and from difficulty 2 a look-alike hotel whose room is sold out
on one night (booking it is refused). Each rubric item is a code predicate, and for each there is
a trajectory that breaks only that item (``task.violations``).

Reasoning points are the constraint items of the rubric plus one for a change of intent;
``difficulty`` d gives exactly 4 + 2d of them (10 at the default 3, near VitaBench's OTA mean of
9.7). Generation is a pure function of (seed, difficulty, split): splits draw from disjoint streams.

A reset of the env generates a task, so generation is kept lean without changing a byte of what it
draws: what depends on no seed (city pairs, the holiday calendar, sorted content) is computed once
per process, the catalogue's hot loops (about 200 priced products a task) draw their ids and stock
with ``getrandbits`` directly (the values ``randrange`` gives), and the violation routes are made
only when asked for, and the golden route on its first read (a reset reads none); the products
are indexed by (place, type, date) per place on first lookup (``SlotIndex``); their rows are made
from the draws when the task's world is first read (``ProductBlock``, ``Task.defer_world``: a reset
reads none); the env builds the catalogues it vouches for unvalidated (``Task.vouch_world``), each
table on its first read (``envs.environments.travel.build_lazy_travel_world``), the products' from
the draws directly; tests/test_generator_speed_travel.py pins digests of the output.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from servicegym.envs.tasks.generators.common import (
    FactSheet,
    IdPool,
    Retry,
    Rubric,
    article,
    at_distance,
    call,
    check_split,
    draw_user,
    first_attempt,
    fmt_amount,
    generated_task,
    hhmm,
    task_rng,
    user_script,
)
from servicegym.envs.tasks.generators.content_travel import (
    AIRLINES,
    ATTRACTIONS,
    BUILDINGS,
    CITIES,
    EVENTS,
    FLIGHT_CLASSES,
    FLIGHT_TAGS,
    HOLIDAYS,
    HOTEL_STEMS,
    HOTEL_TAGS,
    MODE_FARE,
    MODE_SPEED,
    MODE_WISH,
    NIGHTLY_BASE,
    OPENINGS,
    ROOM_REASONS,
    ROOM_TYPES,
    STREETS,
    TICKET_REASONS,
    TICKET_TYPES,
    TRAIN_CLASSES,
    TRAIN_PREFIXES,
    TRAIN_TAGS,
    WEEKDAYS,
)
from servicegym.envs.tasks.model import Task
from servicegym.world_state.core import DATE_FORMAT, TIME_FORMAT, haversine_m
from servicegym.world_state.life.tools import china_holidays
from servicegym.world_state.travel import KINDS

GENERATOR_VERSION = 1
DEFAULT_DIFFICULTY = 3
MAX_DIFFICULTY = 6
MAX_ATTEMPTS = 20
BASE_ITEMS = ("outbound", "check_in", "nights")
FEATURES = (
    "arrive_by",
    "depart_after",
    "seat_class",
    "ticket_budget",
    "travellers",
    "hotel_distance",
    "hotel_rating",
    "hotel_tag",
    "room_type",
    "hotel_price",
    "attraction",
    "ticket_type",
    "cancel_old",
    "intent",
)
CREATE_TOOLS = ["create_flight_order", "create_train_order", "create_hotel_order", "create_attraction_order"]
CHANGE_TOOLS = [
    "modify_flight_order",
    "modify_train_order",
    "cancel_flight_order",
    "cancel_train_order",
    "cancel_hotel_order",
    "cancel_attraction_order",
]
STANDARD_ROOM = ROOM_TYPES[0][0]
STANDARD_TICKET = TICKET_TYPES[0][0]
# the id prefixes of new orders, as the tools assign them
PREFIX = {k: kind.order_prefix for k, kind in KINDS.items()}

# what the agent asks about each hidden topic, in this order; none may read as a request for
# confirmation (that would count as asking the user to confirm the booking)
QUESTIONS = {
    "travel_date": "Which day are you travelling?",
    "party_size": "How many people are travelling?",
    "deadline": "By what time do you need to arrive?",
    "departure": "What is the earliest time you can leave?",
    "seat": "Which seat class do you prefer?",
    "ticket_budget": "What is your budget for the tickets?",
    "stay": "How long will you stay, and on which day do you check out?",
    "distance": "How far from the venue may the hotel be?",
    "hotel_rating": "What minimum hotel rating do you accept?",
    "hotel_tag": "Does the hotel need any particular amenity?",
    "room_type": "Which room type do you need?",
    "hotel_price": "How much may the hotel cost per night?",
    "visit_date": "On which day do you plan to visit?",
    "ticket_type": "Which kind of admission ticket do you need?",
}
KEYWORDS = {
    "travel_date": ["which day", "what day", "travel date", "date of travel", "travelling", "traveling"],
    "departure": ["earliest", "leave", "depart"],
    "seat": ["seat", "class", "cabin"],
    "ticket_budget": ["budget", "fare", "ticket price"],
    "stay": ["how long", "night", "check out", "check-out", "checkout"],
    "hotel_rating": ["rating", "rated", "stars", "score"],
    "hotel_tag": ["amenit", "facilit", "must have", "hotel need", "requirement"],
    "room_type": ["room type", "kind of room", "which room", "bed"],
    "hotel_price": ["per night", "nightly", "room rate", "hotel cost", "hotel price", "a night"],
    "visit_date": ["visit", "which day"],
    "ticket_type": ["ticket type", "kind of ticket", "admission", "which ticket"],
}


def reasoning_points_for(difficulty: int) -> int:
    return 4 + 2 * max(0, min(MAX_DIFFICULTY, difficulty))


def _cost(feature: str, chosen: set[str]) -> int:
    if feature == "travellers":
        return 1 + int("attraction" in chosen)  # the ticket count too
    if feature == "attraction":
        return 2 + int("travellers" in chosen)  # which attraction, which day (and how many tickets)
    if feature == "cancel_old":
        return 2  # cancel one booking, keep the other
    return 1


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

# the draws of the catalogue's hot loops, inlined: ``random.Random.randrange(n)`` is
# ``_randbelow(n)``: ``getrandbits(n.bit_length())`` until below ``n`` (CPython 3.10-3.13), so
# these give the very values, from the very stream, that ``randrange``/``randint`` and
# ``IdPool.new`` give (the pinned digests in tests/test_generator_speed_travel.py hold them to it)
_ID_BOUND = {d: (10**d, (10**d).bit_length()) for d in (6, 7)}
_ID7, _ID7_BITS = _ID_BOUND[7]  # the catalogue loops' product ids (7 digits), their draw inlined


def _new_id(ids: IdPool, prefix: str, digits: int) -> str:
    """``ids.new(prefix, digits)``: the same id from the same draws, without ``randrange``'s checks."""
    n, k = _ID_BOUND[digits]
    getbits = ids.rng.getrandbits
    r = getbits(k)
    while r >= n:
        r = getbits(k)
    value = prefix + str(r).zfill(digits)  # f"{prefix}{r:0{digits}d}", at half the cost
    if value in ids.used:  # a repeat (about once in 10**5 tasks): draw on as IdPool does
        return ids.new(prefix, digits)
    ids.used.add(value)
    return value


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


@dataclass(frozen=True)
class Route:
    """One way of carrying out the task: what is booked, when, and what is said."""

    transport_id: str
    seat_type: str
    date0: str
    qty: int
    move_to: str | None
    hotel_id: str
    room_type: str
    stay0: tuple[str, str]
    stay1: tuple[str, str] | None
    attraction_id: str | None
    ticket_type: str
    visit_date: str
    ticket_qty: int
    pay_transport: bool = True
    pay_hotel: bool = True
    pay_tickets: bool = True
    extra: frozenset[str] = field(default_factory=frozenset)
    cancel_old: bool = True
    cancel_kept: bool = False
    confirm: bool = True
    tell_totals: bool = True
    tell_changes: bool = True


class ProductBlock:
    """The dated products one catalogue call drew for one place (``TravelCatalogue.hotel`` or
    ``service`` with a ``SlotIndex``): the draws only (each product's id number and, unless the
    stock is one number, its quantity), its rows made when read (``rows``). ``prices`` is the
    call's ``prices[date][type]`` (as the catalogue read it: no generator changes a price table
    after a place is drawn from it), walked in the order the products were drawn."""

    __slots__ = ("prefix", "owner_field", "owner", "type_field", "prices", "numbers", "quantities", "stock")

    def __init__(self, prefix: str, owner_field: str, owner: str, type_field: str, prices: dict[str, dict[str, float]],
                 numbers: list[int], quantities: list[int] | None, stock: int | None) -> None:
        self.prefix, self.owner_field, self.owner, self.type_field = prefix, owner_field, owner, type_field
        self.prices, self.numbers, self.quantities, self.stock = prices, numbers, quantities, stock

    def rows(self) -> list[dict[str, Any]]:
        """The product rows, as the catalogue's eager loop writes them (fields in the entity's order)."""
        prefix, owner_field, owner, type_field = self.prefix, self.owner_field, self.owner, self.type_field
        numbers, quantities, qty = self.numbers, self.quantities, self.stock
        out: list[dict[str, Any]] = []
        append = out.append
        i = 0
        for day, by_type in self.prices.items():
            for kind, price in by_type.items():
                if quantities is not None:
                    qty = quantities[i]
                append({"product_id": prefix + str(numbers[i]).zfill(7), owner_field: owner, type_field: kind,
                        "date": day, "price": float(price), "quantity": qty})
                i += 1
        return out

    def slots(self) -> Iterator[tuple[tuple[str, str, str], tuple[str, float]]]:
        """``((owner, type, date), (product id, price))`` of each product, in order."""
        prefix, owner, numbers = self.prefix, self.owner, self.numbers
        i = 0
        for day, by_type in self.prices.items():
            for kind, price in by_type.items():
                yield (owner, kind, day), (prefix + str(numbers[i]).zfill(7), float(price))
                i += 1


# the tables of the dated products a catalogue draws as ``ProductBlock``s when its slot is a ``SlotIndex``
PRODUCT_TABLES = ("hotel_rooms", "flight_seats", "train_seats")


class DrawnTable:
    """A product table a catalogue draws as ``ProductBlock``s (``append``): its rows, in the order
    drawn, are ``rows()`` (a fresh list of fresh dicts each call), or iterated."""

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: list[ProductBlock] = []

    def append(self, block: ProductBlock) -> None:
        self.blocks.append(block)

    def rows(self) -> list[dict[str, Any]]:
        return [row for block in self.blocks for row in block.rows()]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())


class SlotIndex(dict[tuple[str, str, str], tuple[str, float]]):
    """``slot[(place id, type, date)] = (product id, price)`` of a catalogue's products, made per
    place on its first lookup: a catalogue notes each place's products (``note``, a
    ``ProductBlock``) instead of indexing each of its two hundred rows as it draws them, and a task
    looks up the products of a few places only (its golden route's, its past orders'). The golden
    route's are looked up while the task is generated (its amounts are checked), so a route made
    later reads what was indexed then."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict[str, ProductBlock] = {}

    def note(self, place: str, block: ProductBlock) -> None:
        """The products of ``place`` are ``block``'s."""
        self.spans[place] = block

    def __missing__(self, key: tuple[str, str, str]) -> tuple[str, float]:
        block = self.spans.pop(key[0], None)
        if block is None:
            raise KeyError(key)
        self.update(block.slots())
        return self[key]


class TravelCatalogue:
    """The flights, trains and hotels of one task's world, drawn from the task's ``rng`` and ``ids``.

    Rows go into ``tables`` (``flights``, ``flight_seats``, ``trains``, ``train_seats``, ``hotels``,
    ``hotel_rooms``), every service and hotel into ``places`` by id, and every seat or room product
    into ``slot[(place id, seat or room type, date)] = (product id, price)`` (a ``SlotIndex``
    makes those entries when they are first looked up; its products are then drawn as a
    ``ProductBlock`` each place, into a ``DrawnTable``, their rows made when the world is read).
    The travel generator and the cross-scenario generator both build their travel world with it."""

    def __init__(
        self,
        rng: random.Random,
        ids: IdPool,
        tables: dict[str, Any],
        places: dict[str, dict[str, Any]],
        slot: dict[tuple[str, str, str], tuple[str, float]],
    ) -> None:
        self.rng, self.ids, self.tables, self.places, self.slot = rng, ids, tables, places, slot
        self.hubs: dict[tuple[str, str], dict[str, Any]] = {}

    def hub(self, city: str, mode: str) -> dict[str, Any]:
        """The city's airport or railway station (one per task and mode)."""
        if (city, mode) not in self.hubs:
            lon, lat, _, airport, station = CITIES[city]
            far = self.rng.uniform(18_000, 32_000) if mode == "flight" else self.rng.uniform(3_000, 9_000)
            x, y = at_distance(self.rng, lon, lat, far)
            name = airport if mode == "flight" else station
            self.hubs[(city, mode)] = {"address": f"{name}, {city}", "longitude": x, "latitude": y}
        return self.hubs[(city, mode)]

    def fares(self, classes: tuple[tuple[str, float], ...], base: float, dates: list[str]) -> dict[str, dict[str, float]]:
        """``fares[date][class]``: ``base`` times the class's multiplier, one level per service, jittered per date."""
        factor = self.rng.uniform(0.85, 1.25)
        out = {}
        for day in dates:
            f = factor * self.rng.uniform(0.92, 1.12)
            out[day] = {cls: float(round(base * m * f)) for cls, m in classes}
        return out

    def cheaper(self, fares: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        """The same fares 10-25% cheaper: a decoy must tempt."""
        f = self.rng.uniform(0.75, 0.9)
        return {day: {cls: float(round(p * f)) for cls, p in row.items()} for day, row in fares.items()}

    def service(
        self,
        mode: str,
        a: str,
        b: str,
        dep: int,
        dur: int,
        prices: dict[str, dict[str, float]],
        stock: int | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """A flight or train from ``a`` to ``b`` leaving at ``dep`` minutes; ``prices[date][class]``;
        ``stock`` seats per product (None: drawn)."""
        rng = self.rng
        if mode == "flight":
            sid = self.ids.new("F", 6)
            airline = rng.choice(AIRLINES)
            row = {
                "flight_id": sid,
                "flight_number": f"{airline[1]}{rng.randint(1000, 9899)}",
                "departure_city": a,
                "arrival_city": b,
                "departure_airport_location": self.hub(a, mode),
                "arrival_airport_location": self.hub(b, mode),
            }
            pool, seats, owner, pid_prefix = FLIGHT_TAGS, "flight_seats", "flight_id", "FS"
        else:
            sid = self.ids.new("T", 6)
            row = {
                "train_id": sid,
                "train_number": f"{rng.choice(TRAIN_PREFIXES)}{rng.randint(10, 2999)}",
                "departure_city": a,
                "arrival_city": b,
                "departure_station_location": self.hub(a, mode),
                "arrival_station_location": self.hub(b, mode),
            }
            pool, seats, owner, pid_prefix = TRAIN_TAGS, "train_seats", "train_id", "TS"
        row["departure_time"] = hhmm(dep)
        row["arrival_time"] = hhmm((dep + dur) % (24 * 60))
        row["tags"] = tags if tags is not None else sorted(rng.sample(pool, rng.randint(1, 2)))
        self.tables["flights" if mode == "flight" else "trains"].append(row)
        self.places[sid] = row
        ids, slot, append, getbits = self.ids, self.slot, self.tables[seats].append, rng.getrandbits
        if type(slot) is SlotIndex:  # the draws only: the rows are made when read (``ProductBlock``)
            numbers = self._numbers(pid_prefix, prices, 5 if stock is None else 0)
            block = ProductBlock(pid_prefix, owner, sid, "seat_type", prices, numbers[0], numbers[1], stock)
            append(block)
            slot.note(sid, block)
            return row
        used, use = ids.used, ids.used.add
        qty = stock
        for day, by_class in prices.items():
            for cls, price in by_class.items():
                r = getbits(_ID7_BITS)  # _new_id(ids, pid_prefix, 7), inlined
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                pid = pid_prefix + str(r).zfill(7)
                if pid in used:
                    pid = ids.new(pid_prefix, 7)
                else:
                    use(pid)
                price = float(price)
                if stock is None:  # rng.randint(9, 30)
                    qty = getbits(5)
                    while qty >= 22:
                        qty = getbits(5)
                    qty += 9
                append({"product_id": pid, owner: sid, "seat_type": cls, "date": day, "price": price, "quantity": qty})
                slot[(sid, cls, day)] = (pid, price)
        return row

    def _numbers(
        self, prefix: str, prices: dict[str, dict[str, float]], qty_bits: int,
        per_night: dict[tuple[str, str], int] | None = None,
    ) -> tuple[list[int], list[int] | None]:
        """The draws of the eager loops of ``service`` and ``hotel``, in their order, for a
        ``ProductBlock``: per product its id number (``IdPool.new(prefix, 7)``'s draw, a repeat of
        the task's ids of ``prefix`` drawn on as it does; ``IdPool.drawn`` keeps those ids as
        numbers) and, with ``qty_bits``, its quantity (5 bits: ``rng.randint(9, 30)``; 4 bits:
        ``rng.randint(3, 10)``, or ``per_night``'s number of the (type, date) where it names one)."""
        getbits = self.rng.getrandbits
        drawn = self.ids.drawn.setdefault(prefix, set())
        use = drawn.add
        numbers: list[int] = []
        quantities: list[int] | None = [] if qty_bits else None
        add, add_qty = numbers.append, (quantities.append if quantities is not None else None)
        night = per_night or {}
        for day, by_type in prices.items():
            for kind in by_type:
                r = getbits(_ID7_BITS)
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                while r in drawn:  # a repeat (about once in 10**5 tasks): draw on as IdPool.new does
                    r = getbits(_ID7_BITS)
                    while r >= _ID7:
                        r = getbits(_ID7_BITS)
                use(r)
                add(r)
                if qty_bits == 5:  # rng.randint(9, 30)
                    q = getbits(5)
                    while q >= 22:
                        q = getbits(5)
                    add_qty(q + 9)  # type: ignore[misc]
                elif qty_bits == 4:  # rng.randint(3, 10), drawn even where ``per_night`` names the number
                    q = getbits(4)
                    while q >= 8:
                        q = getbits(4)
                    add_qty(night.get((kind, day), q + 3))  # type: ignore[misc]
        return numbers, quantities

    def over_budget(
        self,
        mode: str,
        a: str,
        b: str,
        dep: int,
        dur: int,
        classes: tuple[tuple[str, float], ...],
        dates: list[str],
        budget: float,
        qty: int,
        seat_type: str,
    ) -> dict[str, Any]:
        """The budget decoy: a comfortable service whose ``qty`` seats of ``seat_type`` cost more than ``budget``."""
        dear = math.ceil(budget / qty) + self.rng.randint(4, 16) * 10
        mult = dict(classes)
        prices = {dt: {k: float(round(dear * mult[k] / mult[seat_type])) for k in mult} for dt in dates}
        tags = ["Direct", "Meal included"] if mode == "flight" else ["High-speed", "Dining car"]
        return self.service(mode, a, b, dep, dur, prices, stock=20, tags=tags)

    def room_prices(self, star: int, types: list[tuple[str, float]], dates: list[str]) -> dict[str, dict[str, float]]:
        """``prices[date][room type]`` of a hotel of ``star`` stars; Friday and Saturday nights dearer."""
        lo, hi = NIGHTLY_BASE[star]
        base = self.rng.uniform(lo, hi)
        out = {}
        for day in dates:
            weekend = _weekday(day) in (4, 5)  # Friday and Saturday nights
            f = base * (1.15 if weekend else 1.0) * self.rng.uniform(0.96, 1.04)
            out[day] = {t: float(round(f * m / 10) * 10) for t, m in types}
        return out

    def hotel_stem(self, used: set[str]) -> str:
        """A hotel name stem not in ``used`` (which it joins): look-alike hotels differ by name."""
        stem = self.rng.choice([s for s in HOTEL_STEMS if s not in used])
        used.add(stem)
        return stem

    def hotel(
        self,
        city: str,
        stem: str | Callable[[], str],
        coords: tuple[float, float],
        star: int,
        score: float,
        tags: list[str],
        prices: dict[str, dict[str, float]],
        address: Callable[[str, str], str],
        stock: int | dict[tuple[str, str], int] | None = None,
    ) -> dict[str, Any]:
        """A hotel in a random district of ``city`` named after ``stem`` (or what it returns, once
        the id is drawn), with rooms at ``prices[date][room type]``; ``address(city, district)``
        writes its street address; ``stock`` rooms per product: a number, a number per (room type,
        date) or None (drawn)."""
        hid = self.ids.new("H", 6)
        if callable(stem):
            stem = stem()
        district = self.rng.choice(CITIES[city][2])
        row = {
            "hotel_id": hid,
            "hotel_name": f"{stem} ({district})",
            "score": round(score, 1),
            "star_rating": star,
            "location": {"address": address(city, district), "longitude": coords[0], "latitude": coords[1]},
            "tags": list(tags),
        }
        self.tables["hotels"].append(row)
        self.places[hid] = row
        ids, slot, append, getbits = self.ids, self.slot, self.tables["hotel_rooms"].append, self.rng.getrandbits
        fixed = isinstance(stock, int)
        per_night = stock or {}
        if type(slot) is SlotIndex:  # the draws only: the rows are made when read (``ProductBlock``)
            numbers = self._numbers("HR", prices, 0 if fixed else 4, per_night)  # type: ignore[arg-type]
            block = ProductBlock("HR", "hotel_id", hid, "room_type", prices, numbers[0], numbers[1],
                                 stock if fixed else None)  # type: ignore[arg-type]
            append(block)
            slot.note(hid, block)
            return row
        used, use = ids.used, ids.used.add
        qty = stock
        for day, by_type in prices.items():
            for rtype, price in by_type.items():
                r = getbits(_ID7_BITS)  # _new_id(ids, "HR", 7), inlined
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                pid = "HR" + str(r).zfill(7)
                if pid in used:
                    pid = ids.new("HR", 7)
                else:
                    use(pid)
                if not fixed:
                    # rng.randint(3, 10), drawn even where ``stock`` names the number (as ever)
                    drawn = getbits(4)
                    while drawn >= 8:
                        drawn = getbits(4)
                    qty = per_night.get((rtype, day), drawn + 3)
                price = float(price)
                append({"product_id": pid, "hotel_id": hid, "room_type": rtype, "date": day, "price": price,
                        "quantity": qty})
                slot[(hid, rtype, day)] = (pid, price)
        return row


class _Builder:
    def __init__(self, seed: int, difficulty: int, split: str, attempt: int, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("travel", split, seed, difficulty, GENERATOR_VERSION, attempt)
        self.ids = IdPool(self.rng)
        # the dated products' tables are drawn (``DrawnTable``): their rows are made when the world is read
        self.tables: dict[str, Any] = {
            t: DrawnTable() if t in PRODUCT_TABLES else []
            for t in (
                "hotels",
                "hotel_rooms",
                "attractions",
                "attraction_tickets",
                "flights",
                "flight_seats",
                "trains",
                "train_seats",
            )
        }
        # (place id, type, date) -> (product id, price), indexed per place when first looked up
        self.slot: dict[tuple[str, str, str], tuple[str, float]] = SlotIndex()
        self.places: dict[str, dict[str, Any]] = {}
        self.cat = TravelCatalogue(self.rng, self.ids, self.tables, self.places, self.slot)

    # ----- ids and places ---------------------------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _street_address(self, city: str, district: str | None = None) -> str:
        rng = self.rng
        district = district or rng.choice(CITIES[city][2])
        return f"No. {rng.randint(1, 499)} {rng.choice(STREETS)} Road, {district} District, {city}"

    def _fares(self, base: float, dates: list[str]) -> dict[str, dict[str, float]]:
        return self.cat.fares(self.classes, base, dates)

    # ----- hotels -----------------------------------------------------------------------------
    def _hotel(
        self,
        stem: str,
        lon: float,
        lat: float,
        star: int,
        score: float,
        tags: list[str],
        prices: dict[str, dict[str, float]],
        stock: dict[tuple[str, str], int] | None = None,
    ) -> dict[str, Any]:
        return self.cat.hotel(self.city_b, stem, (lon, lat), star, score, tags, prices, self._street_address, stock)

    def _room_prices(self, star: int, types: list[tuple[str, float]], dates: list[str]) -> dict[str, dict[str, float]]:
        return self.cat.room_prices(star, types, dates)

    def _hotel_name(self) -> str:
        return self.cat.hotel_stem(self.used_stems)

    # ----- attractions ------------------------------------------------------------------------
    def _attraction(
        self,
        name: str,
        description: str,
        lon: float,
        lat: float,
        score: float,
        types: list[tuple[str, float]],
        dates: list[str],
        closed: int | None,
    ) -> dict[str, Any]:
        aid = self._id("S", 6)
        hours = "09:00-17:30" if closed is None else f"09:00-17:00, closed on {WEEKDAYS[closed]}s"
        base = float(self.rng.randrange(40, 181, 5))
        row = {
            "attraction_id": aid,
            "attraction_name": f"{self.city_b} {name}",
            "location": {"address": self._street_address(self.city_b), "longitude": lon, "latitude": lat},
            "description": description,
            "score": round(score, 1),
            "opening_hours": hours,
            "ticket_price": base,
        }
        self.tables["attractions"].append(row)
        self.places[aid] = row
        for day in dates:
            if closed is not None and _weekday(day) == closed:
                continue  # no tickets on a closed day
            for ttype, m in types:
                pid = _new_id(self.ids, "K", 7)
                price = float(round(base * m))
                self.tables["attraction_tickets"].append(
                    {
                        "product_id": pid,
                        "attraction_id": aid,
                        "ticket_type": ttype,
                        "date": day,
                        "price": price,
                        "quantity": 60,
                    }
                )
                self.slot[(aid, ttype, day)] = (pid, price)
        return row

    # ----- the task ---------------------------------------------------------------------------
    def _choose_features(self) -> set[str]:
        need = reasoning_points_for(self.difficulty) - len(BASE_ITEMS)
        order = self.rng.sample(FEATURES, len(FEATURES))
        chosen: set[str] = set()
        total = 0
        progress = True
        while total < need and progress:
            progress = False
            for f in order:
                if f in chosen or (f == "ticket_type" and "attraction" not in chosen):
                    continue
                c = _cost(f, chosen)
                if total + c <= need:
                    chosen.add(f)
                    total += c
                    progress = True
                    if total == need:
                        break
        if total != need:
            raise Retry("no feature set of the right size")
        return chosen

    def build(self) -> Task:
        rng = self.rng
        d = max(0, min(MAX_DIFFICULTY, self.difficulty))
        c = self._choose_features()
        self.used_stems: set[str] = set()

        # -- who, from where to where, how
        self.mode = mode = rng.choice(["flight", "train"])
        self.classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        other_mode = "train" if mode == "flight" else "flight"
        city_a, city_b, km = rng.choice(city_pairs(mode))
        self.city_b = city_b
        dur, base_fare = journey(mode, km)

        name, style, user_id = draw_user(rng)
        task_key = f"G{self.seed % 10**6:06d}"
        home_lon, home_lat = at_distance(rng, CITIES[city_a][0], CITIES[city_a][1], rng.uniform(1500, 7000))
        home = {
            "address": f"{rng.choice(BUILDINGS)}, {self._street_address(city_a)}",
            "longitude": home_lon,
            "latitude": home_lat,
        }

        # -- when: the arrival day (maybe a holiday), the stay, the change of plan
        holiday = None
        if d >= 2 and rng.random() < 0.4:
            hname, year, first, multi = rng.choice(holiday_options())
            arrive = datetime(first.year, first.month, first.day)
            now = arrive - timedelta(days=rng.randint(6, 25))
            holiday = (hname, year, multi)
        else:
            now = datetime(2025, 1, 6) + timedelta(days=rng.randrange(560))
            arrive = now + timedelta(days=rng.randint(4, 30))
            arrive = arrive.replace(hour=0, minute=0)
        now = now.replace(hour=rng.randint(8, 20), minute=rng.randrange(0, 60, 5), second=0)
        intent = "intent" in c
        n0 = rng.randint(2, 4) if intent else rng.choice([1, 2, 2, 3, 3, 4])
        check_out = arrive + timedelta(days=n0)
        D, C = _day(arrive), _day(check_out)
        D1 = _day(arrive + timedelta(days=1))
        final_arrival, final_nights = (D1, n0 - 1) if intent else (D, n0)
        qty = rng.randint(2, 4) if "travellers" in c else 1

        # -- the target service and its decoys
        seat_dates = [_day(arrive + timedelta(days=k)) for k in range(-1, 3)]
        t0 = rng.randrange(8 * 60, 14 * 60 + 1, 5)
        by = after = None
        if "arrive_by" in c:
            by = int(math.ceil((t0 + dur + rng.choice([20, 30, 45, 60])) / 15) * 15)
        if "depart_after" in c:
            after = int(math.floor((t0 - rng.choice([15, 30, 45, 60])) / 15) * 15)
        seat_type = rng.choice([x for x, _ in self.classes[1:]]) if "seat_class" in c else self.classes[0][0]
        cheap_class = self.classes[0][0]
        fares = self._fares(base_fare, seat_dates)
        diff_per_seat = 0.0
        if intent:
            diff_per_seat = float(rng.randrange(30, 260, 10) * (1 if rng.random() < 0.7 else -1))
            if fares[D][seat_type] + diff_per_seat < 50:
                diff_per_seat = abs(diff_per_seat)
            fares[D1] = {**fares[D1], seat_type: fares[D][seat_type] + diff_per_seat}
        budget = None
        if "ticket_budget" in c:
            budget = ticket_budget(rng, fares, seat_type, qty)
        target = self.cat.service(mode, city_a, city_b, t0, dur, fares, stock=20)
        decoys: dict[str, dict[str, Any]] = {}

        def scaled(src: dict[str, dict[str, float]], lo: float, hi: float) -> dict[str, dict[str, float]]:
            f = rng.uniform(lo, hi)
            return {dt: {k: float(round(v * f)) for k, v in row.items()} for dt, row in src.items()}

        if by is not None:
            decoys["arrive_by"] = self.cat.service(
                mode, city_a, city_b, by - dur + rng.choice([20, 40, 60]), dur, scaled(fares, 0.75, 0.9), stock=20
            )
        if after is not None:
            decoys["depart_after"] = self.cat.service(
                mode, city_a, city_b, after - rng.choice([30, 45, 60, 90]), dur, scaled(fares, 0.75, 0.9), stock=20
            )
        if budget is not None:
            decoys["ticket_budget"] = self.cat.over_budget(
                mode, city_a, city_b, t0 + 10, dur, self.classes, seat_dates, budget, qty, seat_type
            )
        for _ in range(rng.randint(1, 2)):  # other departures of the same route
            self.cat.service(
                mode, city_a, city_b, rng.randrange(6 * 60, 20 * 60, 5), dur, self._fares(base_fare, seat_dates)
            )
        # the other means of travel, and the way back: both wrong for this trip
        self.classes, saved = (TRAIN_CLASSES if mode == "flight" else FLIGHT_CLASSES), self.classes
        o_dur, o_fare = journey(other_mode, km)
        for _ in range(rng.randint(1, 2)):
            self.cat.service(
                other_mode, city_a, city_b, rng.randrange(7 * 60, 14 * 60, 5), o_dur, self._fares(o_fare, seat_dates)
            )
        self.classes = saved
        self.cat.service(mode, city_b, city_a, rng.randrange(7 * 60, 18 * 60, 5), dur, self._fares(base_fare, seat_dates))

        # -- the venue and the hotels
        event, event_noun, venue_stem = rng.choice(EVENTS)
        clon, clat = CITIES[city_b][0], CITIES[city_b][1]
        v_lon, v_lat = at_distance(rng, clon, clat, rng.uniform(1000, 5000))
        venue = {
            "address": f"{city_b} {venue_stem}, {self._street_address(city_b)}",
            "longitude": v_lon,
            "latitude": v_lat,
        }
        max_m = float(rng.choice([800, 1000, 1500, 2000])) if "hotel_distance" in c else None
        near = (200.0, (max_m or 2600.0) - 250.0)
        star, min_score, score, tag, tags = draw_hotel(rng, "hotel_rating" in c, "hotel_tag" in c)
        room_dates = [_day(arrive + timedelta(days=k)) for k in range(-1, n0 + 2)]
        extra_types = rng.sample(ROOM_TYPES[1:], 2)
        room_type = rng.choice([t for t, _ in extra_types if t in ROOM_REASONS]) if "room_type" in c else STANDARD_ROOM
        types = [ROOM_TYPES[0], *extra_types]
        if room_type not in dict(types):
            types.append(next(x for x in ROOM_TYPES if x[0] == room_type))
        prices = self._room_prices(star, types, room_dates)
        max_price = None
        if "hotel_price" in c:
            top = max(p[room_type] for p in prices.values())
            max_price = float(math.ceil(top * rng.uniform(1.03, 1.15) / 10) * 10)
        full_stock = {(t, dt): 10 for t, _ in types for dt in room_dates}

        def near_venue() -> tuple[float, float]:
            return at_distance(rng, v_lon, v_lat, rng.uniform(*near))

        hotel = self._hotel(self._hotel_name(), *near_venue(), star, score, tags, prices, full_stock)
        clones: dict[str, dict[str, Any]] = {}
        if max_m is not None:
            far = at_distance(rng, v_lon, v_lat, max_m + rng.uniform(400, 1200))
            clones["hotel_distance"] = self._hotel(self._hotel_name(), *far, star, score, tags, prices, full_stock)
        if min_score is not None:
            low = round(min_score - rng.choice([0.2, 0.3, 0.5]), 1)
            clones["hotel_rating"] = self._hotel(self._hotel_name(), *near_venue(), star, low, tags, prices, full_stock)
        if tag is not None:
            clones["hotel_tag"] = self._hotel(
                self._hotel_name(), *near_venue(), star, score, [t for t in tags if t != tag], prices, full_stock
            )
        if max_price is not None:
            dear = {
                dt: {t: float(max_price + rng.randrange(30, 160, 10) + (p - row[room_type])) for t, p in row.items()}
                for dt, row in prices.items()
            }
            clones["hotel_price"] = self._hotel(self._hotel_name(), *near_venue(), star, score, tags, dear, full_stock)
        if d >= 2:  # an otherwise perfect hotel whose room is sold out on one night of the stay
            night = _day(arrive + timedelta(days=1 if n0 >= 2 else 0))
            sold = {**full_stock, (room_type, night): 0}
            self._hotel(
                self._hotel_name(),
                *at_distance(rng, v_lon, v_lat, rng.uniform(150, near[0] + 100)),
                star,
                min(5.0, round(score + 0.1, 1)),
                tags,
                prices,
                sold,
            )
        for _ in range(rng.randint(2, 3)):
            s2 = rng.choice([3, 4, 5])
            t2 = [ROOM_TYPES[0], *rng.sample(ROOM_TYPES[1:], rng.randint(1, 2))]
            self._hotel(
                self._hotel_name(),
                *at_distance(rng, v_lon, v_lat, rng.uniform(500, 6000)),
                s2,
                rng.uniform(3.8, 4.8),
                sorted(rng.sample(HOTEL_TAG_NAMES, rng.randint(0, 2))),
                self._room_prices(s2, t2, room_dates),
            )

        # -- the attraction
        attraction = closed_decoy = other_attraction = None
        kind = visit = None
        ticket_type = STANDARD_TICKET
        attraction_ids: list[str] = []
        if "attraction" in c:
            kind = rng.choice(ATTRACTION_KINDS)
            keyword, stems = ATTRACTIONS[kind]
            first_visit = arrive + timedelta(days=1)
            last_visit = max(first_visit, check_out - timedelta(days=1))
            visit_day = first_visit + timedelta(days=rng.randint(0, (last_visit - first_visit).days))
            visit = _day(visit_day)
            tdates = [_day(visit_day + timedelta(days=k)) for k in range(-1, 3)]
            ticket_type = rng.choice(TICKET_REASON_TYPES) if "ticket_type" in c else STANDARD_TICKET
            ttypes = [TICKET_TYPES[0], *[x for x in TICKET_TYPES[1:] if x[0] == ticket_type]]
            ttypes += rng.sample([x for x in TICKET_TYPES[1:] if x not in ttypes], 1)
            s_main, s_closed = rng.sample(stems, 2)
            attraction = self._attraction(
                s_main[0],
                s_main[1],
                *at_distance(rng, v_lon, v_lat, rng.uniform(1500, 8000)),
                rng.uniform(4.3, 4.8),
                ttypes,
                tdates,
                None,
            )
            closed_decoy = self._attraction(
                s_closed[0],
                s_closed[1],
                *at_distance(rng, v_lon, v_lat, rng.uniform(1500, 8000)),
                rng.uniform(4.8, 5.0),
                ttypes,
                tdates,
                visit_day.weekday(),
            )
            o_kind = rng.choice([k for k in ATTRACTION_KINDS if k != kind])
            o_name, o_desc = rng.choice(ATTRACTIONS[o_kind][1])
            other_attraction = self._attraction(
                o_name,
                o_desc,
                *at_distance(rng, v_lon, v_lat, rng.uniform(1000, 6000)),
                rng.uniform(4.5, 4.9),
                ttypes,
                tdates,
                None,
            )
            attraction_ids = [attraction["attraction_id"], closed_decoy["attraction_id"]]
            self.keyword = keyword

        # -- past orders: a finished trip, and the mistaken booking to cancel next to one to keep
        orders: list[dict[str, Any]] = []

        def past_order(seq: int, svc: dict[str, Any], date: str, status: str, with_product: bool) -> dict[str, Any]:
            k = "flight" if "flight_id" in svc else "train"
            sid = svc["flight_id" if k == "flight" else "train_id"]
            cls = (FLIGHT_CLASSES if k == "flight" else TRAIN_CLASSES)[0][0]
            pid, price = self.slot[(sid, cls, date)] if with_product else (f"X{sid}{seq}", float(round(base_fare)))
            t = (now - timedelta(days=rng.randint(3, 40))).strftime(TIME_FORMAT)
            o = {
                "order_id": f"{task_key}O{seq:02d}",
                "order_type": k,
                "user_id": user_id,
                "store_id": sid,
                "total_price": price,
                "create_time": t,
                "update_time": t,
                "status": status,
                "products": [
                    {
                        "product_id": pid,
                        "name": cls,
                        "store_id": sid,
                        "store_name": svc["flight_number" if k == "flight" else "train_number"],
                        "price": price,
                        "quantity": 1,
                        "date": date,
                    }
                ],
            }
            orders.append(o)
            return o

        past_day = _day(now - timedelta(days=rng.randint(20, 90)))
        past_order(
            1,
            self.cat.service(
                mode,
                city_a,
                rng.choice([x for x in CITY_NAMES if x not in (city_a, city_b)]),
                rng.randrange(7 * 60, 18 * 60, 5),
                dur,
                {},
            ),
            past_day,
            "paid",
            False,
        )
        mistaken = kept = None
        old_kind = None
        if "cancel_old" in c:
            old_kind = rng.choice(["flight", "train"])
            self.classes, saved = (FLIGHT_CLASSES if old_kind == "flight" else TRAIN_CLASSES), self.classes
            elsewhere = [x for x in CITY_NAMES if x not in (city_a, city_b)]
            c2, c3 = rng.sample(elsewhere, 2)
            d2 = _day(check_out + timedelta(days=rng.randint(3, 9)))
            d3 = _day(check_out + timedelta(days=rng.randint(10, 20)))
            fare = MODE_FARE[old_kind]
            s2 = self.cat.service(
                old_kind,
                city_a,
                c2,
                rng.randrange(7 * 60, 18 * 60, 5),
                150,
                self._fares(max(fare[1], 600 * fare[0]), [d2]),
            )
            s3 = self.cat.service(
                old_kind,
                city_a,
                c3,
                rng.randrange(7 * 60, 18 * 60, 5),
                150,
                self._fares(max(fare[1], 600 * fare[0]), [d3]),
            )
            self.classes = saved
            mistaken = past_order(2, s2, d2, "paid", True)
            kept = past_order(3, s3, d3, "paid", True)
            self.old = {"c2": c2, "c3": c3, "kind": old_kind}

        # -- facts: stated up front or held back
        sheet = FactSheet(rng)
        fact = sheet.add
        state_travel_date(fact, holiday, arrive, KEYWORDS["travel_date"])
        if "travellers" in c:
            fact("party_size", f"There will be {qty} of us travelling, so we need {qty} of everything except the room.")
        if by is not None:
            fact("deadline", f"I need to arrive by {hhmm(by)}.")
        state_ticket_wishes(fact, KEYWORDS, mode, after, seat_type if "seat_class" in c else None, budget)
        if d >= 2 and rng.random() < 0.5:
            fact("stay", f"I'll check out on {WEEKDAYS[check_out.weekday()]}.", KEYWORDS["stay"])
        else:
            fact("stay", f"I'll stay {n0} night{'s' if n0 > 1 else ''}.", KEYWORDS["stay"])
        if max_m is not None:
            fact("distance", f"The hotel should be within {fmt_amount(max_m)} metres of the venue.")
        state_hotel_wishes(fact, KEYWORDS, min_score, tag)
        if "room_type" in c:
            fact("room_type", ROOM_REASONS[room_type], KEYWORDS["room_type"])
        if max_price is not None:
            fact(
                "hotel_price",
                f"The hotel shouldn't cost more than {fmt_amount(max_price)} yuan a night.",
                KEYWORDS["hotel_price"],
            )
        if visit is not None:
            fact(
                "visit_date",
                f"I'd like to visit the {kind} on {_spoken_day(datetime.fromisoformat(visit))}.",
                KEYWORDS["visit_date"],
            )
        if "ticket_type" in c:
            fact("ticket_type", TICKET_REASONS[ticket_type], KEYWORDS["ticket_type"])
        facts, stated = sheet.hidden, sheet.stated

        opening = rng.choice(OPENINGS[style]).format(city=city_b, event=event)
        opening += f" {MODE_WISH[mode]} The {event_noun} is at the {venue['address']}."
        if kind is not None:
            opening += f" While I'm there I'd also like to visit {article(kind)} {kind}."
        if mistaken is not None:
            opening += (
                f" And I booked a {old_kind} to {self.old['c2']} by mistake, please cancel it, but keep my "
                f"{old_kind} to {self.old['c3']}."
            )
        if stated:
            opening += " " + " ".join(stated)
        change_msg = None
        if intent:
            change_msg = (
                f"Oh, one more thing, my plans changed: could you move my {mode} to one day later, and push the "
                "hotel check-in back by a day as well? I'll keep the same check-out day."
            )
        user = user_script(rng, name, style, ("home city", city_a), opening, facts, change_msg, "first_done")

        # -- rubric
        items = Rubric()
        item = items.add

        trip_items = TravelItems(items, mode)
        trip_items.outbound(city_a, city_b, final_arrival)
        item("check_in", "check_in_date", f"hotel check-in on {final_arrival}", date=final_arrival)
        item("nights", "nights", f"{final_nights} night(s) at the hotel", count=final_nights)
        if by is not None:
            item("arrive_by", "arrive_by", f"arrives by {hhmm(by)}", order_type=mode, by=hhmm(by))
        trip_items.depart_after(after)
        trip_items.seat_class(seat_type if "seat_class" in c else None)
        trip_items.ticket_budget(budget)
        trip_items.travellers(qty if "travellers" in c else None)
        if max_m is not None:
            trip_items.hotel_distance(max_m, v_lon, v_lat)
        trip_items.hotel_wishes(min_score, tag)
        if "room_type" in c:
            item("room_type", "product_type", f"room type {room_type}", order_type="hotel", value=room_type)
        if max_price is not None:
            item(
                "hotel_price",
                "unit_price",
                f"at most {fmt_amount(max_price)} a night",
                order_type="hotel",
                max_price=max_price,
            )
        if attraction is not None:
            item("attraction", "attraction_visit", f"tickets for a {kind}", attraction_ids=attraction_ids)
            item("ticket_date", "travel_date", f"tickets for {visit}", order_type="attraction", date=visit)
            if "ticket_type" in c:
                item(
                    "ticket_type", "product_type", f"{ticket_type} tickets", order_type="attraction", value=ticket_type
                )
            if "travellers" in c:
                item("ticket_quantity", "quantity", f"{qty} tickets", order_type="attraction", count=qty)
        if mistaken is not None:
            item(
                "cancel_mistaken",
                "order_status",
                "the mistaken booking is cancelled",
                order_id=mistaken["order_id"],
                status="cancelled",
            )
            item("keep_other_order", "untouched", "the other booking is kept", order_ids=[kept["order_id"]])
        content_items = len(items)
        item("transport_count", "order_count", f"exactly one {mode} order", order_type=mode, count=1)
        item("hotel_count", "order_count", "exactly one hotel order", order_type="hotel", count=1)
        if attraction is not None:
            item("ticket_count", "order_count", "exactly one ticket order", order_type="attraction", count=1)
        item("transport_paid", "paid", f"the {mode} order is paid", order_type=mode)
        item("hotel_paid", "paid", "the hotel order is paid", order_type="hotel")
        if attraction is not None:
            item("ticket_paid", "paid", "the ticket order is paid", order_type="attraction")
        item(
            "confirmed", "confirmed_before_booking", "the user confirmed before anything was booked", tools=CREATE_TOOLS
        )
        types_booked = [mode, "hotel"] + (["attraction"] if attraction is not None else [])
        item("informed_totals", "informed_totals", "the user was told each booking's total", order_types=types_booked)
        if intent or mistaken is not None:
            item(
                "informed_changes",
                "informed_changes",
                "the user was told every price difference and refund",
                tools=CHANGE_TOOLS,
            )
        points = content_items + int(intent)
        if points != reasoning_points_for(d):
            raise Retry(f"{points} reasoning points, expected {reasoning_points_for(d)}")

        # -- golden route and violations
        def shift(day: str, k: int) -> str:
            return _day(datetime.fromisoformat(day) + timedelta(days=k))

        golden = Route(
            transport_id=target[f"{mode}_id"],
            seat_type=seat_type,
            date0=D,
            qty=qty,
            move_to=D1 if intent else None,
            hotel_id=hotel["hotel_id"],
            room_type=room_type,
            stay0=(D, C),
            stay1=(D1, C) if intent else None,
            attraction_id=attraction["attraction_id"] if attraction else None,
            ticket_type=ticket_type,
            visit_date=visit or "",
            ticket_qty=qty,
        )
        def violation_routes() -> dict[str, Route]:
            """One route per rubric item that breaks only that item (made only when asked for)."""
            v: dict[str, Route] = {
                "outbound": replace(golden, move_to=None) if intent else replace(golden, date0=shift(D, 1)),
                "check_in": replace(golden, stay1=(shift(D1, 1), shift(C, 1)))
                if intent
                else replace(golden, stay0=(shift(D, 1), shift(C, 1))),
                **process_violations(golden),
            }
            if intent:
                v["nights"] = replace(golden, stay1=(D1, shift(C, -1) if final_nights >= 2 else shift(C, 1)))
            else:
                v["nights"] = replace(golden, stay0=(D, shift(C, -1) if n0 >= 2 else shift(C, 1)))
            for key in ("arrive_by", "depart_after", "ticket_budget"):
                if key in decoys:
                    v[key] = replace(golden, transport_id=decoys[key][f"{mode}_id"])
            if "seat_class" in c:
                v["seat_class"] = replace(golden, seat_type=cheap_class)
            if "travellers" in c:
                v["travellers"] = replace(golden, qty=qty - 1)
            for key, h in clones.items():
                v[key] = replace(golden, hotel_id=h["hotel_id"])
            if "room_type" in c:
                v["room_type"] = replace(golden, room_type=STANDARD_ROOM)
            if attraction is not None:
                v["attraction"] = replace(golden, attraction_id=other_attraction["attraction_id"])
                v["ticket_date"] = replace(golden, visit_date=shift(visit, 1))
                v["ticket_count"] = replace(golden, extra=frozenset({"attraction"}))
                v["ticket_paid"] = replace(golden, pay_tickets=False)
                if "ticket_type" in c:
                    v["ticket_type"] = replace(golden, ticket_type=STANDARD_TICKET)
                if "travellers" in c:
                    v["ticket_quantity"] = replace(golden, ticket_qty=qty - 1)
            if mistaken is not None:
                v["cancel_mistaken"] = replace(golden, cancel_old=False)
                v["keep_other_order"] = replace(golden, cancel_kept=True)
            if "informed_changes" in {i.name for i in items}:
                v["informed_changes"] = replace(golden, tell_changes=False)
            missing = {i.name for i in items} - set(v)
            if missing:
                raise RuntimeError(f"rubric items without a violation trajectory: {sorted(missing)}")
            return v

        self.ctx = dict(
            user_id=user_id,
            task_key=task_key,
            facts=facts,
            holiday=holiday,
            city_a=city_a,
            city_b=city_b,
            venue=venue,
            max_m=max_m,
            tag=tag,
            intent=intent,
            mistaken=mistaken,
            kept=kept,
            old_kind=old_kind,
            kind=kind,
        )
        violations = {k: self._actions(r) for k, r in violation_routes().items()} if self.with_violations else {}
        self._check_amounts(golden)

        world = {
            "time": now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, venue],
            "weather": weather(rng, city_b, [_day(arrive + timedelta(days=i - 1)) for i in range(n0 + 2)]),
            "orders": orders,
            **self.tables,
            "user_profile": {"user id": user_id, "name": name, "home city": city_a, "home address": home["address"]},
            "user_historical_behaviors": {
                "user id": user_id,
                "residence": city_a,
                "home address": home["address"],
                "travel habits": [
                    f"usually travels by {mode}",
                    rng.choice(["books hotels near the venue", "prefers quiet rooms", "travels light"]),
                ],
            },
        }
        task = generated_task(
            "travel", self.split, self.seed, self.difficulty, points,
            world, user, items, lambda: self._actions(golden), violations
        )
        # the dated products (most rows of a task) are drawn, their rows made on the world's first read
        return task.defer_world({name: world[name].rows for name in PRODUCT_TABLES})

    # ----- prices of a route -------------------------------------------------------------------
    def _seat(self, r: Route, date: str) -> tuple[str, float]:
        return self.slot[(r.transport_id, r.seat_type, date)]

    def _stay(self, hotel_id: str, room_type: str, stay: tuple[str, str]) -> tuple[str, float]:
        """(first night's room id, total price) of a stay."""
        start, end = (datetime.fromisoformat(x) for x in stay)
        nights = [_day(start + timedelta(days=k)) for k in range((end - start).days)]
        return self.slot[(hotel_id, room_type, nights[0])][0], sum(
            self.slot[(hotel_id, room_type, n)][1] for n in nights
        )

    def _totals(self, r: Route) -> dict[str, float]:
        final_date = r.move_to or r.date0
        out = {
            "transport": self._seat(r, final_date)[1] * r.qty,
            "hotel": self._stay(r.hotel_id, r.room_type, r.stay1 or r.stay0)[1],
        }
        if r.attraction_id:
            out["attraction"] = self.slot[(r.attraction_id, r.ticket_type, r.visit_date)][1] * r.ticket_qty
        return out

    def _changes(self, r: Route) -> list[float]:
        """The price differences and refunds the tools report along route ``r`` (non-zero ones)."""
        out = []
        if self.ctx["mistaken"] is not None and r.cancel_old:
            out.append(self.ctx["mistaken"]["total_price"])
        if self.ctx["mistaken"] is not None and r.cancel_kept:
            out.append(self.ctx["kept"]["total_price"])
        if self.ctx["intent"]:
            if r.pay_transport and r.move_to:
                out.append(abs(self._seat(r, r.move_to)[1] - self._seat(r, r.date0)[1]) * r.qty)
            if r.pay_hotel:
                out.append(self._stay(r.hotel_id, r.room_type, r.stay0)[1])
        return [x for x in out if x > 0]

    def _check_amounts(self, golden: Route) -> None:
        """Totals and change amounts must differ, or a message omitting one would still name it."""
        totals = set(self._totals(golden).values())
        if totals & set(self._changes(golden)):
            raise Retry("a total equals a price difference or refund")

    # ----- the action strings of a route --------------------------------------------------------
    def _actions(self, r: Route) -> list[str]:
        ctx = self.ctx
        mode, uid = self.mode, ctx["user_id"]
        counters = {k: 0 for k in PREFIX}

        def new_id(k: str) -> str:
            counters[k] += 1
            return f"{ctx['task_key']}{PREFIX[k]}{counters[k]:02d}"

        out = [call("get_user_historical_behaviors")]
        hidden = {f.topic for f in ctx["facts"]}
        if hidden:
            out.append("Happy to help with the trip. " + " ".join(q for t, q in QUESTIONS.items() if t in hidden))
        if ctx["holiday"] is not None:
            hname, year, _ = ctx["holiday"]
            out.append(call("get_holiday_date", year=str(year), holiday_name=hname))
        if mode == "flight":
            out.append(call("flight_search_recommend", departure=ctx["city_a"], destination=ctx["city_b"]))
        else:
            out.append(call("train_ticket_search", departure=ctx["city_a"], destination=ctx["city_b"], date=r.date0))
        out.append(call(f"get_ota_{mode}_info", **{f"{mode}_id": r.transport_id}))
        if ctx["max_m"] is not None:
            venue = ctx["venue"]
            out.append(call("address_to_longitude_latitude", address=venue["address"]))
            out.append(call("get_nearby", longitude=venue["longitude"], latitude=venue["latitude"], range=ctx["max_m"]))
        out.append(
            call("hotel_search_recommend", city_name=ctx["city_b"], key_words=[ctx["tag"]] if ctx["tag"] else None)
        )
        out.append(call("get_ota_hotel_info", hotel_id=r.hotel_id))
        if r.attraction_id:
            out.append(call("attractions_search_recommend", city_name=ctx["city_b"], key_words=[self.keyword]))
            out.append(call("get_ota_attraction_info", attraction_id=r.attraction_id))
        svc = self.places[r.transport_id]
        number = svc["flight_number" if mode == "flight" else "train_number"]
        seat_id, seat_price = self._seat(r, r.date0)
        room_id, stay_total = self._stay(r.hotel_id, r.room_type, r.stay0)
        if r.confirm:
            plan = (
                f"{mode} {number} on {r.date0}, {svc['departure_time']}-{svc['arrival_time']}, {r.seat_type} x{r.qty} "
                f"for {fmt_amount(seat_price * r.qty)} yuan; {self.places[r.hotel_id]['hotel_name']}, {r.room_type}, "
                f"{r.stay0[0]} to {r.stay0[1]}, {fmt_amount(stay_total)} yuan"
            )
            if r.attraction_id:
                tid, tprice = self.slot[(r.attraction_id, r.ticket_type, r.visit_date)]
                plan += (
                    f"; {self.places[r.attraction_id]['attraction_name']}, {r.ticket_type} x{r.ticket_qty} on "
                    f"{r.visit_date}, {fmt_amount(tprice * r.ticket_qty)} yuan"
                )
            out.append(f"Here is the plan: {plan}. Shall I book and pay for all of it?")

        def book_transport(date: str, pay: bool) -> str:
            oid = new_id(mode)
            sid = self._seat(r, date)[0]
            out.extend(transport_booking(mode, r.transport_id, sid, uid, date, r.qty, oid if pay else None))
            return oid

        def book_hotel(stay: tuple[str, str], pay: bool) -> str:
            oid = new_id("hotel")
            rid = self._stay(r.hotel_id, r.room_type, stay)[0]
            out.extend(hotel_booking(r.hotel_id, rid, uid, stay[1], oid if pay else None))
            return oid

        def book_tickets(pay: bool) -> str:
            oid = new_id("attraction")
            tid = self.slot[(r.attraction_id, r.ticket_type, r.visit_date)][0]
            out.append(
                call(
                    "create_attraction_order",
                    attraction_id=r.attraction_id,
                    ticket_id=tid,
                    user_id=uid,
                    date=r.visit_date,
                    quantity=r.ticket_qty,
                )
            )
            if pay:
                out.append(call("pay_attraction_order", order_id=oid))
            return oid

        def extras(final_date: str, stay: tuple[str, str]) -> None:
            if "transport" in r.extra:
                book_transport(final_date, r.pay_transport)
            if "hotel" in r.extra:
                book_hotel(stay, r.pay_hotel)
            if "attraction" in r.extra:
                book_tickets(r.pay_tickets)

        transport_oid = book_transport(r.date0, r.pay_transport)
        hotel_oid = book_hotel(r.stay0, r.pay_hotel)
        if r.attraction_id:
            book_tickets(r.pay_tickets)
        old_kind = ctx["old_kind"]
        refunds = []
        for o, wanted in ((ctx["mistaken"], r.cancel_old), (ctx["kept"], r.cancel_kept)):
            if o is None:
                continue
            if o is ctx["mistaken"]:
                out.append(call(f"search_{old_kind}_order", user_id=uid))
            if wanted:
                out.append(call(f"get_{old_kind}_order_detail", order_id=o["order_id"]))
                out.append(call(f"cancel_{old_kind}_order", order_id=o["order_id"], user_id=uid))
                refunds.append(o["total_price"])
        if not ctx["intent"]:
            extras(r.date0, r.stay0)
        all_paid = r.pay_transport and r.pay_hotel and (r.pay_tickets or not r.attraction_id)

        def totals_text() -> str:
            t = self._totals(r)
            parts = [f"the {mode} {fmt_amount(t['transport'])} yuan", f"the hotel {fmt_amount(t['hotel'])} yuan"]
            if "attraction" in t:
                parts.append(f"the tickets {fmt_amount(t['attraction'])} yuan")
            return " Totals: " + ", ".join(parts) + "." if r.tell_totals else ""

        done = "All done: everything has been booked" + (" and paid." if all_paid else ".")
        if refunds:
            done += f" The {old_kind} booking you no longer need has been cancelled"
            done += f" and {' + '.join(fmt_amount(x) for x in refunds)} yuan will be refunded." if r.tell_changes else "."
        if not ctx["intent"]:
            out.append(done + totals_text())
            return out
        # the plan is said done; the user now moves the trip a day
        out.append(done)
        if r.pay_transport:
            note = ""
            if r.move_to:
                out.append(call(f"get_{mode}_order_detail", order_id=transport_oid))
                out.append(call(f"modify_{mode}_order", order_id=transport_oid, user_id=uid, new_date=r.move_to))
                diff = (self._seat(r, r.move_to)[1] - self._seat(r, r.date0)[1]) * r.qty
                if diff > 0:
                    out.append(call(f"pay_{mode}_order", order_id=transport_oid))
                if r.tell_changes and diff:
                    note = (
                        f", with {fmt_amount(diff)} yuan extra, which has been paid"
                        if diff > 0
                        else f", and the cheaper fare saves you {fmt_amount(-diff)} yuan, which will be refunded"
                    )
            moved = f"All done: your {mode} has been moved to the next day{note}"
        else:
            # an unpaid booking cannot be moved: cancel it and book the new day
            out.append(call(f"get_{mode}_order_detail", order_id=transport_oid))
            out.append(call(f"cancel_{mode}_order", order_id=transport_oid, user_id=uid))
            book_transport(r.move_to or r.date0, False)
            moved = f"All done: your {mode} has been rebooked for the next day"
        out.append(call("get_hotel_order_detail", order_id=hotel_oid))
        out.append(call("cancel_hotel_order", order_id=hotel_oid, user_id=uid))
        book_hotel(r.stay1 or r.stay0, r.pay_hotel)
        extras(r.move_to or r.date0, r.stay1 or r.stay0)
        moved += "; the hotel has been rebooked from the new arrival day, keeping your check-out day"
        if r.pay_hotel and r.tell_changes:
            moved += f", and the first booking's {fmt_amount(self._stay(r.hotel_id, r.room_type, r.stay0)[1])} yuan will be refunded"
        out.append(moved + "." + totals_text())
        return out


def generate_travel_task(
    seed: int, difficulty: int = DEFAULT_DIFFICULTY, split: str = "train", violations: bool = True
) -> Task:
    """The travel task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` skips the checker-validation trajectories (everything else is identical)."""
    check_split(split)
    return first_attempt(
        lambda attempt: _Builder(int(seed), int(difficulty), split, attempt, violations).build(),
        MAX_ATTEMPTS,
        f"travel task for seed {seed}, difficulty {difficulty}",
    ).vouch_world()  # its rows are as the entities hold them: the env builds its catalogues unvalidated
