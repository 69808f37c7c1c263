"""Seeded generator of cross-scenario tasks: one trip that the travel, in-store and delivery tools
must get right together (VitaBench's headline setting).

The user lives in one city and travels to another for an event at a venue: a flight or train that
arrives on a date (maybe a public holiday the user names, resolved with ``get_holiday_date``),
a hotel near the venue from that day, and, in the same conversation, an evening out at a shop near
the hotel (buy the package, book the table or reserve the service) at a time the journey leaves
room for, and a late-night delivery to the hotel on the first night. The legs are tied by
consistency items checked by code (``rewards/life_service.py``): check-in on the arrival day, the
visit at the user's time on the arrival day and at least the transfer margin after landing, the
shop within reach of the hotel, the delivery to the hotel's address on its check-in night. So one
wrong early choice (the wrong date, a cheaper flight that lands too late, a hotel too far from the
venue) breaks the later legs too.

Every constraint has a decoy in the world: a cheaper service landing too late for the evening, one
leaving too early, a dearer one over the budget, a cheaper seat class; a hotel identical to the
right one but too far from the venue, rated lower or lacking the amenity; a shop of the same
chain near the venue but far from the hotel, one rated lower, a dearer package, another shop by the
hotel; a food store of the same menu far from the hotel, dishes that break the diet, and the user's
usual late-night store back home, where the order history is.
Each rubric item has a trajectory that breaks only it (``task.violations``); so the legs can be
broken one at a time, the consistency items relate legs to each other rather than to fixed dates.

Legs and points: a task has the travel leg and one or both of the others. Reasoning points are the
constraint items of the rubric plus one for a change of intent (the evening visit moved an hour
later after everything is booked): the base items (travel 4, in-store 4, delivery 3) and options.
``difficulty`` d gives exactly 8 + d points, so 11 at the default 3, near VitaBench's cross-scenario
mean of 10.3; from 11 points most tasks have all three legs.

Generation is a pure function of (seed, difficulty, split); splits draw from disjoint streams. It is
kept lean (small catalogues, trajectories assembled from memoised segments) because a reset of the
env generates a task.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cache
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
    offset,
    street_address,
    task_rng,
    user_script,
)
from servicegym.envs.tasks.generators.content_cross import (
    DAYTIME_WORDS,
    DELIVERY_WISH,
    EVENING_VISITS,
    HOTEL_NOTES,
    HUB_NOUN,
    OPENINGS,
    SUPPER_CUISINES,
    WRONG_WEEK,
)
from servicegym.envs.tasks.generators.content_delivery import CUISINES, DIETS
from servicegym.envs.tasks.generators.content_instore import CATEGORIES, ProductType
from servicegym.envs.tasks.generators.content_travel import (
    CITIES,
    EVENTS,
    FLIGHT_CLASSES,
    MODE_WISH,
    ROOM_TYPES,
    TRAIN_CLASSES,
)
from servicegym.envs.tasks.generators.delivery import (
    _DIET_VARIANT as DIET_VARIANT,  # how a dish is named with what a diet forbids
)
from servicegym.envs.tasks.generators.delivery import StoreWorld
from servicegym.envs.tasks.generators.instore import ShopWorld
from servicegym.envs.tasks.generators.travel import (
    HOTEL_TAG_NAMES,
    PRODUCT_TABLES,
    DrawnTable,
    SlotIndex,
    TravelCatalogue,
    TravelItems,
    city_pairs,
    draw_hotel,
    holiday_options,
    hotel_booking,
    journey,
    process_violations,
    state_hotel_wishes,
    state_ticket_wishes,
    state_travel_date,
    ticket_budget,
    transport_booking,
    weather,
)
from servicegym.envs.tasks.model import Task
from servicegym.rewards.life_service import HOTEL_CHECK_IN
from servicegym.world_state.core import DATE_FORMAT, TIME_FORMAT, haversine_m
from servicegym.world_state.delivery.tools import delivery_minutes
from servicegym.world_state.travel import KINDS

GENERATOR_VERSION = 1
DEFAULT_DIFFICULTY = 3
MAX_DIFFICULTY = 6
MAX_ATTEMPTS = 20
LEGS = ("travel", "instore", "delivery")
BASE_ITEMS: dict[str, tuple[str, ...]] = {
    "travel": ("outbound", "check_in", "nights", "hotel_distance"),
    "instore": ("product", "visit_time", "shop_near_hotel", "after_arrival"),
    "delivery": ("dish", "delivery_to_hotel", "delivery_time"),
}
# option -> the leg it needs
OPTIONS: dict[str, str] = {
    "seat_class": "travel",
    "travellers": "travel",
    "depart_after": "travel",
    "ticket_budget": "travel",
    "hotel_rating": "travel",
    "hotel_tag": "travel",
    "cancel_old": "travel",
    "shop_rating": "instore",
    "instore_budget": "instore",
    "intent": "instore",
    "store_distance": "delivery",
    "diet": "delivery",
    "delivery_note": "delivery",
}
SEAT_DATES = (0, 1)  # seats are sold on the arrival day and the next (the whole trip a day late)
SHOP_HOURS = ("10:00", "22:00")
STORE_HOURS = ("10:00", "23:30")
CREATE_TOOLS = [
    "create_flight_order",
    "create_train_order",
    "create_hotel_order",
    "create_instore_product_order",
    "instore_book",
    "instore_reservation",
    "create_delivery_order",
]
CHANGE_TOOLS = ["cancel_hotel_order", "cancel_flight_order", "cancel_train_order"]
PREFIX = {k: kind.order_prefix for k, kind in KINDS.items()} | {
    "instore": "I",
    "book": "B",
    "reservation": "R",
    "delivery": "D",
}

# what the agent asks about each hidden topic, in this order; none may read as a request for
# confirmation or a report that the job is done
QUESTIONS = {
    "travel_date": "Which day will you arrive?",
    "party_size": "How many people are travelling?",
    "departure": "What is the earliest time you can leave?",
    "seat": "Which seat class do you prefer?",
    "ticket_budget": "What is your budget for the tickets?",
    "stay": "How long will you stay, and on which day do you check out?",
    "distance": "How far from the venue may the hotel be?",
    "hotel_rating": "What minimum hotel rating do you accept?",
    "hotel_tag": "Does the hotel need any particular amenity?",
    "visit_time": "What time should the evening booking be, and how long is your transfer?",
    "shop_distance": "How close to the hotel should the place be?",
    "shop_rating": "What minimum rating should the place have?",
    "instore_budget": "How much may the package cost?",
    "delivery_time": "At what time should the food be delivered to the hotel?",
    "diet": "Do you have any allergies or dietary restrictions?",
    "store_distance": "How far from the hotel may the food store be?",
    "delivery_note": "Any note for the delivery rider?",
}
KEYWORDS = {
    "travel_date": ["which day", "what day", "travel date", "arrive on"],
    "departure": ["earliest", "leave", "depart"],
    "seat": ["seat", "class", "cabin"],
    "ticket_budget": ["budget", "fare", "ticket price"],
    "stay": ["how long", "night", "check out", "check-out", "checkout"],
    "distance": ["venue"],
    "hotel_rating": ["hotel rating", "rated", "stars"],
    "hotel_tag": ["amenit", "facilit", "hotel need"],
    "visit_time": ["evening booking", "transfer"],
    "shop_distance": ["how close", "close to the hotel"],
    "shop_rating": ["minimum rating", "place have"],
    "instore_budget": ["package cost", "how much"],
    "delivery_time": ["delivered", "food be"],
    "store_distance": ["food store"],
    "delivery_note": ["note", "rider"],
}


def reasoning_points_for(difficulty: int) -> int:
    return 8 + max(0, min(MAX_DIFFICULTY, difficulty))


def _cost(option: str, legs: set[str]) -> int:
    if option == "travellers":  # seats, and the party of the visit and the portions of the delivery
        return 1 + int("instore" in legs) + int("delivery" in legs)
    if option == "cancel_old":
        return 2  # cancel one booking, keep the other
    return 1


EVENING_CATEGORIES = tuple(sorted(EVENING_VISITS))  # sorted once per process, as the draws pick
HOTEL_NOTE_KEYS = tuple(sorted(HOTEL_NOTES))


@cache
def _evening_types(category: str) -> tuple[ProductType, ...]:
    """The product types of an in-store category that suit an evening (once per process)."""
    return tuple(t for t in CATEGORIES[category].products if not any(w in t[0] for w in DAYTIME_WORDS))


@dataclass(frozen=True)
class Route:
    """One way of carrying out the task. Days are offsets from the user's arrival day, times of day
    are minutes after midnight."""

    transport_id: str
    seat_type: str
    qty: int
    hotel_id: str
    stay: tuple[int, int]  # check-in and check-out day
    day: int = 0  # the travel day
    # in-store (empty without that leg): the package's shop, and the visit's shop, day and time
    shop_id: str = ""
    product_id: str = ""
    visit_shop: str = ""
    visit_day: int = 0
    visit_min: int = 0
    final_min: int | None = None  # after the change of intent, the visit is moved to this time
    party: int = 1
    # delivery (empty without that leg)
    store_id: str = ""
    dish_id: str = ""
    portions: int = 1
    delivery_to: str = ""  # the hotel delivered to; empty: the route's own hotel
    delivery_day: int = 0
    delivery_min: int = 0
    note: str = ""
    # the process
    pay_transport: bool = True
    pay_hotel: bool = True
    pay_instore: bool = True
    pay_book: bool = True
    pay_delivery: bool = True
    extra: frozenset[str] = field(default_factory=frozenset)  # legs booked twice
    cancel_old: bool = True
    cancel_kept: bool = False
    confirm: bool = True
    tell_totals: bool = True
    tell_changes: bool = True


class _Builder:
    def __init__(self, seed: int, difficulty: int, split: str, attempt: int, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("cross", split, seed, difficulty, GENERATOR_VERSION, attempt)
        self.ids = IdPool(self.rng)
        self.addresses: set[str] = set()
        self.names: set[str] = set()
        # the dated products' tables are drawn (``DrawnTable``): their rows are made when the world is read
        self.tables: dict[str, Any] = {
            t: DrawnTable() if t in PRODUCT_TABLES else []
            for t in (
                "flights",
                "flight_seats",
                "trains",
                "train_seats",
                "hotels",
                "hotel_rooms",
                "shops",
                "shop_products",
                "stores",
                "products",
            )
        }
        self.places: dict[str, dict[str, Any]] = {}  # id -> row (services, hotels, shops, stores)
        self.items: dict[str, dict[str, Any]] = {}  # product id -> row (packages and dishes)
        # (place, type, date) -> (product id, price), indexed per place when first looked up
        self.slot: dict[tuple[str, str, str], tuple[str, float]] = SlotIndex()
        self.cat = TravelCatalogue(self.rng, self.ids, self.tables, self.places, self.slot)
        self.segments: dict[tuple[Any, ...], list[str]] = {}
        self.days: dict[int, str] = {}
        self.store_world = StoreWorld(
            self.rng,
            self.ids,
            self.tables["stores"],
            self.tables["products"],
            lambda stems: self._store_name(self.cuisine, self.city_b, stems),
            lambda: self._address(self.city_b),
            self.places,
            self.items,
        )
        self.shop_world = ShopWorld(
            self.rng,
            self.ids,
            self.tables["shops"],
            self.tables["shop_products"],
            self._name,
            lambda: self._address(self.city_b),
            self.places,
            self.items,
        )

    # ----- ids, names, addresses ----------------------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _address(self, city: str, district: str | None = None) -> str:
        """A street address not used yet in this world: a delivery names its address by text, so
        two places sharing one would be confused."""
        for _ in range(40):
            text = street_address(self.rng, district or self.rng.choice(CITIES[city][2]), city)
            if text not in self.addresses:
                self.addresses.add(text)
                return text
        raise Retry("no free address")

    def _loc(self, city: str, lon: float, lat: float, district: str | None = None) -> dict[str, Any]:
        return {"address": self._address(city, district), "longitude": lon, "latitude": lat}

    def _name(self, stems: tuple[str, ...] | list[str]) -> str:
        """A place name not used yet (look-alikes must still be told apart by name)."""
        for _ in range(30):
            name = f"{self.rng.choice(stems)} ({self.rng.choice(CITIES[self.city_b][2])} Branch)"
            if name not in self.names:
                self.names.add(name)
                return name
        raise Retry("no free name")

    def day(self, k: int) -> str:
        """The date ``k`` days after the arrival day (memoised: every row and action names dates)."""
        text = self.days.get(k)
        if text is None:
            text = self.days[k] = (self.arrive + timedelta(days=k)).strftime(DATE_FORMAT)
        return text

    def at(self, k: int, minutes: int) -> datetime:
        return self.arrive + timedelta(days=k, minutes=minutes)

    # ----- flights and trains -----------------------------------------------------------------
    def _fares(self, mode: str, base: float, days: tuple[int, ...]) -> dict[str, dict[str, float]]:
        classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        return self.cat.fares(classes, base, [self.day(k) for k in days])

    def _service(self, *args: Any, tags: list[str] | None = None) -> dict[str, Any]:
        """``TravelCatalogue.service`` (mode, from, to, departure, duration, fares) with 20 seats a product."""
        return self.cat.service(*args, stock=20, tags=tags)

    # ----- hotels -----------------------------------------------------------------------------
    def _room_prices(self, star: int, types: list[tuple[str, float]]) -> dict[str, dict[str, float]]:
        return self.cat.room_prices(star, types, [self.day(k) for k in range(-1, self.n0 + 1)])

    def _hotel(
        self, coords: tuple[float, float], star: int, score: float, tags: list[str], prices: dict[str, dict[str, float]]
    ) -> dict[str, Any]:
        def stem() -> str:
            return self.cat.hotel_stem(self.names)

        return self.cat.hotel(self.city_b, stem, coords, star, score, tags, prices, self._address, stock=10)

    # ----- shops and their packages -------------------------------------------------------------
    def _shop(
        self,
        category: str,
        coords: tuple[float, float],
        score: float,
        tags: list[str],
        fee: float,
        stems: tuple[str, ...] | list[str] | None = None,
    ) -> dict[str, Any]:
        return self.shop_world.shop(category, coords, score, tags, stems=stems, hours=SHOP_HOURS, fee=fee)

    def _package(self, shop: dict[str, Any], name: str, price: float, tags: list[str]) -> dict[str, Any]:
        return self.shop_world.product(shop, name, price, tags, 30)

    def _clone_shop(
        self, src: dict[str, Any], coords: tuple[float, float], **changes: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """A look-alike shop (same menu under new ids); returns it and old -> new product ids."""
        return self.shop_world.clone(src, coords, **changes)

    # ----- food stores and their dishes ---------------------------------------------------------
    def _store(
        self,
        cuisine: str,
        city: str,
        coords: tuple[float, float],
        score: float,
        tags: list[str],
        stems: tuple[str, ...] | list[str] | None = None,
    ) -> dict[str, Any]:
        return self.store_world.store(
            cuisine,
            coords,
            score,
            tags,
            name=self._store_name(cuisine, city, stems),
            hours=STORE_HOURS,
            address=lambda: self._address(city),
        )

    def _store_name(self, cuisine: str, city: str, stems: tuple[str, ...] | list[str] | None) -> str:
        """A food store name not used yet in this world (drawn before the store's id)."""
        rng = self.rng
        name = f"{rng.choice(stems or CUISINES[cuisine][0])} ({rng.choice(CITIES[city][2])} Branch)"
        while name in self.names:
            name = f"{rng.choice(CUISINES[cuisine][0])} ({rng.choice(CITIES[city][2])} Branch {len(self.names)})"
        self.names.add(name)
        return name

    def _dish(self, store: dict[str, Any], name: str, price: float, tags: list[str]) -> dict[str, Any]:
        return self.store_world.product(store, name, price, tags, [])

    def _clone_store(
        self, src: dict[str, Any], city: str, coords: tuple[float, float]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        stems = [s for s in CUISINES[self.cuisine][0] if not src["name"].startswith(s)] or list(
            CUISINES[self.cuisine][0]
        )
        name = self._store_name(self.cuisine, city, stems)
        return self.store_world.clone(src, self.cuisine, name, coords, address=lambda: self._address(city))

    # ----- what to build ------------------------------------------------------------------------
    def _choose(self) -> tuple[set[str], set[str]]:
        """The legs and the options, adding up to exactly ``reasoning_points_for(difficulty)``."""
        rng = self.rng
        points = reasoning_points_for(self.difficulty)
        if points >= sum(len(v) for v in BASE_ITEMS.values()) and rng.random() < 0.75:
            legs = set(LEGS)
        else:
            legs = {"travel", rng.choice(["instore", "delivery"])}
        need = points - sum(len(BASE_ITEMS[leg]) for leg in legs)
        order = rng.sample(
            sorted(o for o, leg in OPTIONS.items() if leg in legs), k=sum(OPTIONS[o] in legs for o in OPTIONS)
        )
        chosen: set[str] = set()
        total = 0
        for o in order:
            c = _cost(o, legs)
            if total + c <= need:
                chosen.add(o)
                total += c
        if total != need:
            raise Retry("no option set of the right size")
        return legs, chosen

    def build(self) -> Task:
        rng = self.rng
        d = max(0, min(MAX_DIFFICULTY, self.difficulty))
        legs, c = self._choose()
        instore, delivery = "instore" in legs, "delivery" in legs
        intent = "intent" in c

        # -- who, from where to where, how
        self.mode = mode = rng.choice(["flight", "train"])
        classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        other_mode = "train" if mode == "flight" else "flight"
        city_a, city_b, km = rng.choice(city_pairs(mode))
        self.city_b = city_b
        dur, base_fare = journey(mode, km)
        name, style, user_id = draw_user(rng)
        task_key = f"G{self.seed % 10**6:06d}"
        home_coords = at_distance(rng, CITIES[city_a][0], CITIES[city_a][1], rng.uniform(1500, 7000))
        home = {"address": self._address(city_a), "longitude": home_coords[0], "latitude": home_coords[1]}

        # -- when: the arrival day (maybe a holiday), the stay, the evening visit, the delivery
        holiday = None
        if d >= 2 and rng.random() < 0.4:
            hname, year, first, multi = rng.choice(holiday_options())
            self.arrive = datetime(first.year, first.month, first.day)
            now = self.arrive - timedelta(days=rng.randint(6, 25))
            holiday = (hname, year, multi)
        else:
            now = datetime(2025, 1, 6) + timedelta(days=rng.randrange(560))
            self.arrive = now.replace(hour=0, minute=0) + timedelta(days=rng.randint(4, 30))
        now = now.replace(hour=rng.randint(8, 20), minute=rng.randrange(0, 60, 5), second=0)
        self.n0 = n0 = rng.choice([1, 2, 2, 3])
        qty = rng.randint(2, 3) if "travellers" in c else 1
        visit0 = rng.randrange(18 * 60, 19 * 60 + 31, 30)
        visit = visit0 + 60 if intent else visit0
        margin = rng.choice([45, 60, 90])
        t_arr = visit0 - margin - rng.randrange(15, 61, 5)
        t0 = t_arr - dur
        if t0 < 6 * 60 + 30:
            raise Retry("the journey is too long for the evening")
        window = rng.randrange(21 * 60, 21 * 60 + 46, 15)  # the delivery arrives within 30 minutes of this

        # -- the flight or train, and its decoys
        seat_type = rng.choice([x for x, _ in classes[1:]]) if "seat_class" in c else classes[0][0]
        cheap_class = classes[0][0]
        fares = self._fares(mode, base_fare, SEAT_DATES)
        target = self._service(mode, city_a, city_b, t0, dur, fares)
        decoys: dict[str, dict[str, Any]] = {}
        # cheaper, but lands too late to make the evening booking after the transfer
        late = rng.randrange(visit - margin + 15, visit + 21, 5)
        decoys["after_arrival"] = self._service(mode, city_a, city_b, late - dur, dur, self.cat.cheaper(fares))
        after = None
        if "depart_after" in c:
            after = int(math.floor((t0 - rng.choice([15, 30, 45])) / 15) * 15)
            decoys["depart_after"] = self._service(
                mode, city_a, city_b, after - rng.choice([30, 45, 60]), dur, self.cat.cheaper(fares)
            )
        budget = None
        if "ticket_budget" in c:
            budget = ticket_budget(rng, fares, seat_type, qty)
            decoys["ticket_budget"] = self.cat.over_budget(
                mode, city_a, city_b, t0 + 10, dur, classes, [self.day(k) for k in SEAT_DATES], budget, qty, seat_type
            )
        self._service(
            mode, city_a, city_b, rng.randrange(6 * 60, 12 * 60, 5), dur, self._fares(mode, base_fare, SEAT_DATES)
        )
        o_dur, o_fare = journey(other_mode, km)
        self._service(
            other_mode,
            city_a,
            city_b,
            rng.randrange(7 * 60, 13 * 60, 5),
            o_dur,
            self._fares(other_mode, o_fare, SEAT_DATES),
        )
        # the way home on the check-out day: the booking the user keeps when cancelling another
        back = self._service(
            mode, city_b, city_a, rng.randrange(13 * 60, 18 * 60, 5), dur, self._fares(mode, base_fare, (n0,))
        )

        # -- the venue, and the hotels in a row: venue - hotel - (shop) - far hotel
        event, event_noun, venue_stem = rng.choice(EVENTS)
        v_lon, v_lat = at_distance(rng, CITIES[city_b][0], CITIES[city_b][1], rng.uniform(1000, 5000))
        venue = {"address": f"{city_b} {venue_stem}, {self._address(city_b)}", "longitude": v_lon, "latitude": v_lat}
        max_m = float(rng.choice([1000, 1500, 2000]))
        shop_m = float(rng.choice([800, 1000, 1200]))
        u, w = rng.uniform(150, 300), rng.uniform(300, 500)
        bearing = rng.uniform(0, 2 * math.pi)

        def along(dist: float, b: float = bearing) -> tuple[float, float]:
            return offset(v_lon, v_lat, dist * math.cos(b), dist * math.sin(b))

        h_pos, far_pos, mid = along(max_m - u), along(max_m + w), along((2 * max_m - u + w) / 2)
        star, min_score, score, tag, tags = draw_hotel(rng, "hotel_rating" in c, "hotel_tag" in c)
        types = [ROOM_TYPES[0], rng.choice(ROOM_TYPES[1:])]
        prices = self._room_prices(star, types)
        hotel = self._hotel(h_pos, star, score, tags, prices)
        hotels: dict[str, dict[str, Any]] = {"hotel_distance": self._hotel(far_pos, star, score, tags, prices)}

        def beside_hotel() -> tuple[float, float]:
            # close enough that the venue, the shop and the store stay in reach of the look-alike
            return at_distance(rng, *h_pos, rng.uniform(30, u - 30))

        if min_score is not None:
            hotels["hotel_rating"] = self._hotel(
                beside_hotel(), star, round(min_score - rng.choice([0.2, 0.3, 0.5]), 1), tags, prices
            )
        if tag is not None:
            hotels["hotel_tag"] = self._hotel(beside_hotel(), star, score, [t for t in tags if t != tag], prices)
        s2 = rng.choice([3, 4, 5])
        filler_hotel = self._hotel(
            at_distance(rng, v_lon, v_lat, rng.uniform(2500, 6000)),
            s2,
            rng.uniform(3.8, 4.8),
            sorted(rng.sample(HOTEL_TAG_NAMES, rng.randint(0, 2))),
            self._room_prices(s2, [ROOM_TYPES[0], rng.choice(ROOM_TYPES[1:])]),
        )

        # -- the evening visit
        shop = package = other_package = None
        shops: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        variants: dict[str, dict[str, Any]] = {}
        same_kind = None
        category = kind = None
        item_phrase = ""
        fee = 0.0
        instore_budget = shop_min = None
        if instore:
            category = rng.choice(EVENING_CATEGORIES)
            cat = CATEGORIES[category]
            kind = cat.kind
            t_type, o_type = rng.sample(_evening_types(category), 2)
            item_phrase = t_type[0]
            shop_min = rng.choice([4.5, 4.6, 4.7]) if "shop_rating" in c else None
            s_score = rng.uniform(shop_min, 5.0) if shop_min else rng.uniform(4.0, 4.9)
            fee = float(rng.choice([0, 20, 30])) if kind == "book" else 0.0
            shop = self._shop(category, at_distance(rng, *mid, rng.uniform(0, 120)), s_score, sorted(cat.tags[:2]), fee)
            markup = float(rng.choice([0, 2, 4]))
            package = self._package(shop, f"{t_type[1]} for {qty}", (t_type[2] + markup) * qty, list(t_type[3]))
            self._package(shop, f"{t_type[1]} for {qty + 1}", (t_type[2] + markup) * (qty + 1), list(t_type[3]))
            other_package = self._package(
                shop, f"{o_type[1]} for {qty}", min((o_type[2] + markup) * qty, package["price"]), list(o_type[3])
            )
            if "instore_budget" in c:
                instore_budget = float(math.ceil(package["price"] * rng.uniform(1.1, 1.3)))
                variants["instore_budget"] = self._package(
                    shop, f"Deluxe {package['name']}", math.ceil(instore_budget) + rng.randint(10, 40), package["tags"]
                )
            # the same chain by the venue, beyond it seen from the hotel: near the venue, far from the hotel
            a = max_m - u
            shops["shop_near_hotel"] = self._clone_shop(
                shop, along(max(120.0, shop_m + rng.uniform(250, 450) - a), bearing + math.pi)
            )
            if shop_min is not None:
                s_lon, s_lat = shop["location"]["longitude"], shop["location"]["latitude"]
                shops["shop_rating"] = self._clone_shop(
                    shop,
                    at_distance(rng, s_lon, s_lat, rng.uniform(80, 200)),
                    score=shop_min - rng.choice([0.2, 0.3, 0.5]),
                )
            # another shop of the same kind of visit by the hotel, selling something else
            others = [k for k in EVENING_CATEGORIES if k != category and CATEGORIES[k].kind == kind]
            sk = rng.choice(others)
            same_kind = self._shop(
                sk,
                at_distance(rng, shop["location"]["longitude"], shop["location"]["latitude"], rng.uniform(80, 200)),
                rng.uniform(3.9, 4.8),
                sorted(CATEGORIES[sk].tags[:2]),
                float(rng.choice([0, 20])),
            )
            st = rng.choice(_evening_types(sk))
            self._package(same_kind, f"{st[1]} for 2", st[2] * 2, list(st[3]))

        # -- the late-night delivery
        store = dish = other_dish = None
        stores: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        diet_key = forbidden = None
        store_max = None
        note_key = None
        dish_type = ""
        if delivery:
            self.cuisine = rng.choice(SUPPER_CUISINES)
            dishes = CUISINES[self.cuisine][1]
            dish_type = rng.choice(sorted(dishes))
            base = rng.choice(dishes[dish_type])
            if "diet" in c:
                options = [k for k, v in sorted(DIETS.items()) if v[0] not in base[2]]
                if not options:
                    raise Retry("no diet spares the dish")
                diet_key = rng.choice(options)
                forbidden = DIETS[diet_key][0]
            store = self._store(
                self.cuisine, city_b, at_distance(rng, *mid, rng.uniform(100, 500)), rng.uniform(4.2, 4.9), []
            )
            dish = self._dish(store, base[0], base[1] + rng.choice([0, 2, 4]), list(base[2]))
            o_type = rng.choice([t for t in sorted(dishes) if t != dish_type] or [dish_type])
            o_name, o_price, o_tags = next(x for x in dishes[o_type] if x[0] != dish["name"])
            other_dish = self._dish(store, o_name, min(o_price, dish["price"]), [t for t in o_tags if t != forbidden])
            if forbidden:
                variants["diet"] = self._dish(
                    store,
                    DIET_VARIANT[forbidden].format(dish["name"]),
                    dish["price"],
                    sorted(set(dish["tags"]) | {forbidden}),
                )
            if "store_distance" in c:
                store_max = float(rng.choice([1500, 2000]))
                stores["store_distance"] = self._clone_store(
                    store, city_b, at_distance(rng, *h_pos, store_max + rng.uniform(600, 1200))
                )
            note_key = rng.choice(HOTEL_NOTE_KEYS) if "delivery_note" in c else None
        # the user's usual late-night store back home, where their order history is
        cz = self.cuisine if delivery else rng.choice(SUPPER_CUISINES)
        home_store = self._store(
            cz, city_a, at_distance(rng, *home_coords, rng.uniform(300, 1500)), rng.uniform(4.0, 4.8), []
        )
        u_name, u_price, u_tags = rng.choice(
            [x for v in CUISINES[cz][1].values() for x in v if not dish or x[0] != dish["name"]]
        )
        usual = self._dish(home_store, u_name, u_price, [t for t in u_tags if t != forbidden])

        # -- past orders: the usual delivery back home; the hotel booked by mistake and the ticket home
        orders: list[dict[str, Any]] = []

        def order(
            seq: int,
            kind_: str,
            place: dict[str, Any],
            status: str,
            lines: list[dict[str, Any]],
            when: datetime,
            **more: Any,
        ) -> dict[str, Any]:
            t = when.strftime(TIME_FORMAT)
            pid_field = {"delivery": "store_id", "hotel": "hotel_id", "flight": "flight_id", "train": "train_id"}[kind_]
            o = {
                "order_id": f"{task_key}O{seq:02d}",
                "order_type": kind_,
                "user_id": user_id,
                "store_id": place[pid_field],
                "total_price": float(round(sum(x["price"] * x["quantity"] for x in lines), 2)),
                "create_time": t,
                "update_time": t,
                "status": status,
                "products": lines,
                **more,
            }
            orders.append(o)
            return o

        hint = DIETS[diet_key][2] if diet_key else ""
        past = now - timedelta(days=rng.randint(5, 40))
        order(
            1,
            "delivery",
            home_store,
            "delivered",
            [
                {
                    "product_id": usual["product_id"],
                    "name": usual["name"],
                    "store_id": home_store["store_id"],
                    "store_name": home_store["name"],
                    "price": usual["price"],
                    "quantity": 1,
                    "tags": usual["tags"],
                }
            ],
            past,
            note=hint,
            location=home,
            dispatch_time=past.strftime(TIME_FORMAT),
            delivery_time=past.strftime(TIME_FORMAT),
        )
        mistaken = kept = None
        if "cancel_old" in c:
            week = [self.day(7 + k) for k in range(n0)]
            price = prices[self.day(0)][ROOM_TYPES[0][0]]
            mistaken = order(
                2,
                "hotel",
                filler_hotel,
                "paid",
                [
                    {
                        "product_id": f"X{filler_hotel['hotel_id']}{k}",
                        "name": ROOM_TYPES[0][0],
                        "store_id": filler_hotel["hotel_id"],
                        "store_name": filler_hotel["hotel_name"],
                        "price": price,
                        "quantity": 1,
                        "date": day,
                    }
                    for k, day in enumerate(week)
                ],
                now - timedelta(days=rng.randint(1, 3)),
            )
            pid, p = self.slot[(back[f"{mode}_id"], cheap_class, self.day(n0))]
            number = back["flight_number" if mode == "flight" else "train_number"]
            kept = order(
                3,
                mode,
                back,
                "paid",
                [
                    {
                        "product_id": pid,
                        "name": cheap_class,
                        "store_id": back[f"{mode}_id"],
                        "store_name": number,
                        "price": p,
                        "quantity": 1,
                        "date": self.day(n0),
                    }
                ],
                now - timedelta(days=rng.randint(1, 3)),
            )

        # -- what the user says up front and what it holds back
        sheet = FactSheet(rng)
        fact = sheet.add
        state_travel_date(fact, holiday, self.arrive, KEYWORDS["travel_date"])
        if "travellers" in c:
            fact("party_size", f"There will be {qty} of us, so we need {qty} of everything except the room.")
        state_ticket_wishes(fact, KEYWORDS, mode, after, seat_type if "seat_class" in c else None, budget)
        fact("stay", f"I'll stay {n0} night{'s' if n0 > 1 else ''}.", KEYWORDS["stay"])
        fact("distance", f"The hotel should be within {fmt_amount(max_m)} metres of the venue.", KEYWORDS["distance"])
        state_hotel_wishes(fact, KEYWORDS, min_score, tag)
        hub = HUB_NOUN[mode]
        if instore:
            place = EVENING_VISITS[category][1]
            fact(
                "visit_time",
                f"Make it {hhmm(visit0)} on the evening I arrive; I need {margin} minutes to get there "
                f"from the {hub}.",
                KEYWORDS["visit_time"],
            )
            fact(
                "shop_distance",
                f"The {place} should be within {fmt_amount(shop_m)} metres of my hotel.",
                KEYWORDS["shop_distance"],
            )
            if shop_min is not None:
                fact("shop_rating", f"The {place} should be rated {shop_min:g} or higher.", KEYWORDS["shop_rating"])
            if instore_budget is not None:
                fact(
                    "instore_budget",
                    f"The package shouldn't cost more than {fmt_amount(instore_budget)} yuan.",
                    KEYWORDS["instore_budget"],
                )
        if delivery:
            fact(
                "delivery_time",
                f"The food should arrive between {hhmm(window)} and {hhmm(window + 30)} that night.",
                KEYWORDS["delivery_time"],
            )
            if diet_key:
                fact("diet", DIETS[diet_key][1], hide=True)
            if store_max is not None:
                fact(
                    "store_distance",
                    f"The food store should be within {fmt_amount(store_max)} metres of the hotel, so it arrives hot.",
                    KEYWORDS["store_distance"],
                )
            if note_key:
                fact("delivery_note", HOTEL_NOTES[note_key][0], KEYWORDS["delivery_note"])
        facts, stated = sheet.hidden, sheet.stated

        opening = rng.choice(OPENINGS[style]).format(city=city_b, event=event)
        opening += f" {MODE_WISH[mode]} The {event_noun} is at the {venue['address']}."
        if instore:
            visit_text = EVENING_VISITS[category][0].format(item=item_phrase)
            opening += f" On the evening I arrive I'd like {article(visit_text)} {visit_text} close to my hotel."
        if delivery:
            opening += " " + DELIVERY_WISH.format(dish=dish_type)
        if mistaken is not None:
            opening += " " + WRONG_WEEK.format(city=city_b, mode=mode)
        if stated:
            opening += " " + " ".join(stated)
        change_msg = None
        if intent:
            noun = "booking" if kind == "book" else "reservation"
            change_msg = (
                f"Oh, one change: my evening plans shifted, could you move the {noun} one hour later, "
                f"to {hhmm(visit)}?"
            )
        user = user_script(rng, name, style, ("home city", city_a), opening, facts, change_msg, "first_done")

        # -- rubric: content items first (the reasoning points), then the process items
        items = Rubric()
        item = items.add

        table = "books" if kind == "book" else "reservations"
        trip_items = TravelItems(items, mode)
        trip_items.outbound(city_a, city_b, self.day(0))
        item("check_in", "check_in_matches_arrival", "hotel check-in on the arrival day", order_type=mode)
        item("nights", "nights", f"{n0} night(s) at the hotel", count=n0)
        trip_items.hotel_distance(max_m, v_lon, v_lat)
        trip_items.seat_class(seat_type if "seat_class" in c else None)
        trip_items.travellers(qty if "travellers" in c else None)
        trip_items.depart_after(after)
        trip_items.ticket_budget(budget)
        trip_items.hotel_wishes(min_score, tag)
        if instore:
            noun = "booking" if kind == "book" else "reservation"
            same = [package] + ([variants["instore_budget"]] if "instore_budget" in variants else [])
            ids = [p["product_id"] for p in same] + [m[p["product_id"]] for _, m in shops.values() for p in same]
            item("product", "dish", f"the package is {package['name']}", order_type="instore", product_ids=ids)
            item(
                "visit_time",
                "appointment_on_arrival_day",
                f"the {noun} is at {hhmm(visit)} on the arrival day",
                order_type=mode,
                table=table,
                time=hhmm(visit),
            )
            item(
                "shop_near_hotel",
                "shop_near_hotel",
                f"the shop is within {fmt_amount(shop_m)} m of the hotel",
                table=table,
                max_m=shop_m,
            )
            item(
                "after_arrival",
                "booking_after_arrival",
                f"the {noun} is at least {margin} min after the arrival",
                order_type=mode,
                table=table,
                margin_min=margin,
            )
            if "travellers" in c:
                item("party", "appointment_party", f"the {noun} is for {qty}", table=table, count=qty)
            if shop_min is not None:
                item(
                    "shop_rating", "shop_rating", f"shop rated >= {shop_min}", order_type="instore", min_score=shop_min
                )
            if instore_budget is not None:
                item(
                    "instore_budget",
                    "budget",
                    f"package at most {fmt_amount(instore_budget)}",
                    order_type="instore",
                    max_total=instore_budget,
                )
        if delivery:
            same = [dish] + ([variants["diet"]] if "diet" in variants else [])
            ids = [p["product_id"] for p in same] + [m[p["product_id"]] for _, m in stores.values() for p in same]
            item("dish", "dish", f"the delivery contains {dish_type}", product_ids=ids)
            item("delivery_to_hotel", "delivery_to_hotel", "the food goes to the booked hotel")
            item(
                "delivery_time",
                "delivery_after_check_in",
                f"delivered on the check-in night between {hhmm(window)} and {hhmm(window + 30)}",
                check_in=HOTEL_CHECK_IN,
                after=hhmm(window),
                by=hhmm(window + 30),
            )
            if "travellers" in c:
                item("portions", "quantity", f"{qty} portions", count=qty)
            if store_max is not None:
                item(
                    "store_distance",
                    "store_distance",
                    f"store within {fmt_amount(store_max)} m of the hotel",
                    max_m=store_max,
                )
            if forbidden:
                item("diet", "diet", f"nothing tagged {forbidden}", forbidden_tags=[forbidden])
            if note_key:
                item("delivery_note", "note_mentions", f"note: {note_key}", keywords=list(HOTEL_NOTES[note_key][2]))
        if mistaken is not None:
            item(
                "cancel_mistaken",
                "order_status",
                "the hotel booked for the wrong week is cancelled",
                order_id=mistaken["order_id"],
                status="cancelled",
            )
            item("keep_other_order", "untouched", "the ticket home is kept", order_ids=[kept["order_id"]])
        points = len(items) + int(intent)
        if points != reasoning_points_for(d):
            raise Retry(f"{points} reasoning points, expected {reasoning_points_for(d)}")
        item("transport_count", "order_count", f"exactly one {mode} order", order_type=mode, count=1)
        item("hotel_count", "order_count", "exactly one hotel order", order_type="hotel", count=1)
        item("transport_paid", "paid", f"the {mode} order is paid", order_type=mode)
        item("hotel_paid", "paid", "the hotel order is paid", order_type="hotel")
        types_booked = [mode, "hotel"]
        if instore:
            item("instore_count", "order_count", "exactly one package order", order_type="instore", count=1)
            item("instore_paid", "paid", "the package is paid", order_type="instore")
            item("visit_count", "appointment_count", f"exactly one {noun}", table=table, count=1)
            item("same_shop", "appointment_at_order_shop", f"the {noun} is at the package's shop", table=table)
            if "travellers" not in c:
                item("party", "appointment_party", f"the {noun} is for {qty}", table=table, count=qty)
            if fee > 0:
                item("booking_paid", "appointment_paid", "the booking fee is paid", table=table)
            types_booked.append("instore")
        if delivery:
            item("delivery_count", "order_count", "exactly one delivery order", order_type="delivery", count=1)
            item("delivery_paid", "paid", "the delivery is paid", order_type="delivery")
            types_booked.append("delivery")
        item(
            "confirmed", "confirmed_before_booking", "the user confirmed before anything was booked", tools=CREATE_TOOLS
        )
        item("informed_totals", "informed_totals", "the user was told each order's total", order_types=types_booked)
        if mistaken is not None:
            item("informed_changes", "informed_changes", "the user was told the refund", tools=CHANGE_TOOLS)

        # -- the golden route and one violation per item
        golden = Route(
            transport_id=target[f"{mode}_id"],
            seat_type=seat_type,
            qty=qty,
            hotel_id=hotel["hotel_id"],
            stay=(0, n0),
            shop_id=shop["shop_id"] if shop else "",
            product_id=package["product_id"] if package else "",
            visit_shop=shop["shop_id"] if shop else "",
            visit_min=visit0,
            final_min=visit if intent else None,
            party=qty,
            store_id=store["store_id"] if store else "",
            dish_id=dish["product_id"] if dish else "",
            portions=qty,
            delivery_min=window + 10,
            note=note_key or "",
        )

        def violation_routes() -> dict[str, Route]:
            """One route per rubric item that breaks only that item (made only when asked for)."""
            v: dict[str, Route] = {
                "outbound": replace(golden, day=1, stay=(1, n0 + 1), visit_day=1, delivery_day=1),
                "check_in": replace(golden, stay=(-1, n0 - 1), delivery_day=-1),
                "nights": replace(golden, stay=(0, n0 - 1 if n0 >= 2 else n0 + 1)),
                **process_violations(golden),
            }
            for key, h in hotels.items():
                v[key] = replace(golden, hotel_id=h["hotel_id"])
            for key, svc in decoys.items():
                if key != "after_arrival" or instore:  # without the visit, the late service is only one more option
                    v[key] = replace(golden, transport_id=svc[f"{mode}_id"])
            if "seat_class" in c:
                v["seat_class"] = replace(golden, seat_type=cheap_class)
            if "travellers" in c:
                v["travellers"] = replace(golden, qty=qty - 1)
            if instore:
                v["product"] = replace(golden, product_id=other_package["product_id"])
                v["visit_time"] = replace(golden, final_min=None) if intent else replace(golden, visit_min=visit0 + 30)
                for key, (s, m) in shops.items():
                    v[key] = replace(
                        golden, shop_id=s["shop_id"], visit_shop=s["shop_id"], product_id=m[package["product_id"]]
                    )
                v["party"] = replace(golden, party=qty + 1)
                if instore_budget is not None:
                    v["instore_budget"] = replace(golden, product_id=variants["instore_budget"]["product_id"])
                v["instore_count"] = replace(golden, extra=frozenset({"instore"}))
                v["instore_paid"] = replace(golden, pay_instore=False)
                v["visit_count"] = replace(golden, extra=frozenset({"visit"}))
                v["same_shop"] = replace(golden, visit_shop=same_kind["shop_id"])
                if fee > 0:
                    v["booking_paid"] = replace(golden, pay_book=False)
            if delivery:
                v["dish"] = replace(golden, dish_id=other_dish["product_id"])
                v["delivery_to_hotel"] = replace(golden, delivery_to=hotels["hotel_distance"]["hotel_id"])
                v["delivery_time"] = replace(golden, delivery_min=window + 60)
                if "travellers" in c:
                    v["portions"] = replace(golden, portions=qty - 1)
                for key, (s, m) in stores.items():
                    v[key] = replace(golden, store_id=s["store_id"], dish_id=m[dish["product_id"]])
                if forbidden:
                    v["diet"] = replace(golden, dish_id=variants["diet"]["product_id"])
                if note_key:
                    v["delivery_note"] = replace(golden, note="")
                v["delivery_count"] = replace(golden, extra=frozenset({"delivery"}))
                v["delivery_paid"] = replace(golden, pay_delivery=False)
            if mistaken is not None:
                v["cancel_mistaken"] = replace(golden, cancel_old=False)
                v["keep_other_order"] = replace(golden, cancel_kept=True)
                v["informed_changes"] = replace(golden, tell_changes=False)
            missing = {i.name for i in items} ^ set(v)
            if missing:
                raise RuntimeError(f"rubric items and violation trajectories differ: {sorted(missing)}")
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
            shop_m=shop_m,
            tag=tag,
            mistaken=mistaken,
            kept=kept,
            kind=kind,
            instore=instore,
            delivery=delivery,
            intent=intent,
            fee=fee,
            dish_type=dish_type,
        )
        self._check_amounts(golden)
        violations = {k: self._actions(r) for k, r in violation_routes().items()} if self.with_violations else {}

        world = {
            "time": now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, venue],
            "weather": weather(rng, city_b, [self.day(k) for k in range(2)], first_id=1),
            "orders": orders,
            **self.tables,
            "user_profile": {"user id": user_id, "name": name, "home city": city_a, "home address": home["address"]},
            "user_historical_behaviors": {
                "user id": user_id,
                "residence": city_a,
                "home address": home["address"],
                "travel habits": [f"usually travels by {mode}", "books hotels near the venue"],
                "dietary notes": [hint] if hint else [],
                "usual late-night store": home_store["name"],
            },
        }
        task = generated_task(
            "cross", self.split, self.seed, self.difficulty, points,
            world, user, items, lambda: self._actions(golden), violations
        )
        # the dated products (most rows of a task) are drawn, their rows made on the world's first read
        return task.defer_world({name: world[name].rows for name in PRODUCT_TABLES})

    # ----- what a route costs and what the tools report ----------------------------------------------
    def _seat(self, r: Route) -> tuple[str, float]:
        return self.slot[(r.transport_id, r.seat_type, self.day(r.day))]

    def _stay(self, r: Route) -> tuple[str, float]:
        """(first night's room id, total price) of the route's stay, in the standard room."""
        room = ROOM_TYPES[0][0]
        nights = [self.day(k) for k in range(*r.stay)]
        return self.slot[(r.hotel_id, room, nights[0])][0], sum(self.slot[(r.hotel_id, room, n)][1] for n in nights)

    def _totals(self, r: Route) -> dict[str, float]:
        out = {"transport": self._seat(r)[1] * r.qty, "hotel": self._stay(r)[1]}
        if self.ctx["instore"]:
            out["instore"] = self.items[r.product_id]["price"]
        if self.ctx["delivery"]:
            out["delivery"] = self.items[r.dish_id]["price"] * r.portions
        return {k: round(x, 2) for k, x in out.items()}

    def _refunds(self, r: Route) -> list[float]:
        out = []
        if self.ctx["mistaken"] is not None and r.cancel_old:
            out.append(self.ctx["mistaken"]["total_price"])
        if self.ctx["mistaken"] is not None and r.cancel_kept:
            out.append(self.ctx["kept"]["total_price"])
        return out

    def _check_amounts(self, golden: Route) -> None:
        """Totals and refunds must differ, or a message leaving one out would still name it."""
        if set(self._totals(golden).values()) & set(self._refunds(golden)):
            raise Retry("a total equals a refund")

    # ----- the action strings of a route ----------------------------------------------------------
    def _seg(self, key: tuple[Any, ...], make: Callable[[], list[str]]) -> list[str]:
        """A part of a trajectory, made once per task for the route fields in ``key``: the
        violations share most of their parts with the golden route."""
        hit = self.segments.get(key)
        if hit is None:
            hit = self.segments[key] = make()
        return hit

    def _intro(self) -> list[str]:
        ctx = self.ctx
        out = [call("get_user_historical_behaviors")]
        hidden = {f.topic for f in ctx["facts"]}
        if hidden:
            out.append("Happy to help with the whole trip. " + " ".join(q for t, q in QUESTIONS.items() if t in hidden))
        if ctx["holiday"] is not None:
            hname, year, _ = ctx["holiday"]
            out.append(call("get_holiday_date", year=str(year), holiday_name=hname))
        venue = ctx["venue"]
        out.append(call("address_to_longitude_latitude", address=venue["address"]))
        out.append(call("get_nearby", longitude=venue["longitude"], latitude=venue["latitude"], range=ctx["max_m"]))
        return out

    def _lookups(self, r: Route) -> list[str]:
        ctx, mode = self.ctx, self.mode
        out = list(self._seg(("intro",), self._intro))

        def transport() -> list[str]:
            if mode == "flight":
                first = call("flight_search_recommend", departure=ctx["city_a"], destination=ctx["city_b"])
            else:
                first = call(
                    "train_ticket_search", departure=ctx["city_a"], destination=ctx["city_b"], date=self.day(r.day)
                )
            return [first, call(f"get_ota_{mode}_info", **{f"{mode}_id": r.transport_id})]

        out += self._seg(("transport_lookup", r.transport_id, r.day), transport)

        def hotel() -> list[str]:
            h = self.places[r.hotel_id]["location"]
            found = (
                [call("hotel_search_recommend", city_name=ctx["city_b"], key_words=[ctx["tag"]])] if ctx["tag"] else []
            )
            found.append(call("get_ota_hotel_info", hotel_id=r.hotel_id))
            if ctx["instore"]:
                found.append(call("get_nearby", longitude=h["longitude"], latitude=h["latitude"], range=ctx["shop_m"]))
            return found

        out += self._seg(("hotel_lookup", r.hotel_id), hotel)
        if ctx["instore"]:
            out += self._seg(
                ("shop_lookup", r.product_id),
                lambda: [
                    call("instore_product_search_recommend", keywords=[self.items[r.product_id]["name"]], top_k=20)
                ],
            )
        if ctx["delivery"]:
            out += self._seg(
                ("store_lookup", r.store_id, r.dish_id),
                lambda: [
                    call("delivery_product_search_recommend", keywords=[self.items[r.dish_id]["name"]]),
                    call("get_delivery_store_info", store_id=r.store_id),
                ],
            )
        return out

    def _plan(self, r: Route) -> str:
        ctx, mode = self.ctx, self.mode
        svc = self.places[r.transport_id]
        number = svc["flight_number" if mode == "flight" else "train_number"]
        t = self._totals(r)
        parts = [
            f"{mode} {number} on {self.day(r.day)}, {svc['departure_time']}-{svc['arrival_time']}, {r.seat_type} x{r.qty} "
            f"for {fmt_amount(t['transport'])} yuan",
            f"{self.places[r.hotel_id]['hotel_name']}, {ROOM_TYPES[0][0]}, {self.day(r.stay[0])} to {self.day(r.stay[1])}, "
            f"{fmt_amount(t['hotel'])} yuan",
        ]
        if ctx["instore"]:
            what = "a booking" if ctx["kind"] == "book" else "a reservation"
            parts.append(
                f"{self.items[r.product_id]['name']} at {self.places[r.shop_id]['shop_name']} for "
                f"{fmt_amount(t['instore'])} yuan, and {what} for {r.party} at {self.places[r.visit_shop]['shop_name']} "
                f"at {hhmm(r.visit_min)}"
            )
        if ctx["delivery"]:
            parts.append(
                f"{self.items[r.dish_id]['name']} x{r.portions} from {self.places[r.store_id]['name']}, "
                f"{fmt_amount(t['delivery'])} yuan, delivered to the hotel at about {hhmm(r.delivery_min)}"
            )
        return f"Here is the plan: {'; '.join(parts)}. Shall I book and pay for all of it?"

    def _bookings(self, r: Route) -> list[str]:
        ctx, mode, uid, key = self.ctx, self.mode, self.ctx["user_id"], self.ctx["task_key"]

        def oid(kind: str, n: int) -> str:
            return f"{key}{PREFIX[kind]}{n:02d}"

        def transport() -> list[str]:
            out = []
            for n in range(1, 2 + int("transport" in r.extra)):
                pay = oid(mode, n) if r.pay_transport else None
                out += transport_booking(mode, r.transport_id, self._seat(r)[0], uid, self.day(r.day), r.qty, pay)
            return out

        def hotel() -> list[str]:
            out = []
            for n in range(1, 2 + int("hotel" in r.extra)):
                pay = oid("hotel", n) if r.pay_hotel else None
                out += hotel_booking(r.hotel_id, self._stay(r)[0], uid, self.day(r.stay[1]), pay)
            return out

        out = list(
            self._seg(
                ("transport", r.transport_id, r.seat_type, r.day, r.qty, r.pay_transport, "transport" in r.extra),
                transport,
            )
        )
        out += self._seg(("hotel", r.hotel_id, r.stay, r.pay_hotel, "hotel" in r.extra), hotel)
        if ctx["instore"]:

            def package() -> list[str]:
                out = []
                for n in range(1, 2 + int("instore" in r.extra)):
                    out.append(
                        call(
                            "create_instore_product_order",
                            user_id=uid,
                            shop_id=r.shop_id,
                            product_id=r.product_id,
                            quantity=1,
                        )
                    )
                    if r.pay_instore:
                        out.append(call("pay_instore_order", order_id=oid("instore", n)))
                return out

            out += self._seg(("package", r.shop_id, r.product_id, r.pay_instore, "instore" in r.extra), package)
            out += self._seg(
                ("visit", r.visit_shop, r.visit_day, r.visit_min, r.party, r.pay_book, "visit" in r.extra),
                lambda: self._visits(r, r.visit_min, 1),
            )
        if ctx["delivery"]:

            def food() -> list[str]:
                address = self.places[r.delivery_to or r.hotel_id]["location"]
                s = self.places[r.store_id]["location"]
                minutes = delivery_minutes(
                    haversine_m(address["longitude"], address["latitude"], s["longitude"], s["latitude"])
                )
                dispatch = self.at(r.delivery_day, r.delivery_min) - timedelta(minutes=minutes)
                args = dict(
                    user_id=uid,
                    store_id=r.store_id,
                    product_ids=[r.dish_id],
                    product_cnts=[r.portions],
                    address=address["address"],
                    dispatch_time=dispatch.strftime(TIME_FORMAT),
                )
                if r.note:
                    args["note"] = HOTEL_NOTES[r.note][1]
                out = []
                for n in range(1, 2 + int("delivery" in r.extra)):
                    out.append(call("create_delivery_order", **args))
                    if r.pay_delivery:
                        out.append(call("pay_delivery_order", order_id=oid("delivery", n)))
                return out

            out += self._seg(
                (
                    "food",
                    r.store_id,
                    r.dish_id,
                    r.portions,
                    r.delivery_to or r.hotel_id,
                    r.delivery_day,
                    r.delivery_min,
                    r.note,
                    r.pay_delivery,
                    "delivery" in r.extra,
                ),
                food,
            )
        return out

    def _visits(self, r: Route, minutes: int, first: int) -> list[str]:
        """Book the table or reserve the service (twice for the duplicate), numbered from ``first``."""
        ctx, uid = self.ctx, self.ctx["user_id"]
        tool, prefix = ("instore_book", "book") if ctx["kind"] == "book" else ("instore_reservation", "reservation")
        fee = self.places[r.visit_shop]["book_price"]
        out = []
        for n in range(first, first + 1 + int("visit" in r.extra)):
            when = self.at(r.visit_day, minutes).strftime(TIME_FORMAT)
            out.append(call(tool, user_id=uid, shop_id=r.visit_shop, time=when, customer_count=r.party))
            if prefix == "book" and fee > 0 and r.pay_book:
                out.append(call("pay_instore_book", book_id=f"{ctx['task_key']}B{n:02d}"))
        return out

    def _cancels(self, r: Route) -> list[str]:
        ctx, uid = self.ctx, self.ctx["user_id"]
        out = [call("search_hotel_order", user_id=uid)]
        if r.cancel_old:
            oid = ctx["mistaken"]["order_id"]
            out += [call("get_hotel_order_detail", order_id=oid), call("cancel_hotel_order", order_id=oid, user_id=uid)]
        if r.cancel_kept:
            oid = ctx["kept"]["order_id"]
            out += [
                call(f"get_{self.mode}_order_detail", order_id=oid),
                call(f"cancel_{self.mode}_order", order_id=oid, user_id=uid),
            ]
        return out

    def _moves(self, r: Route) -> list[str]:
        """After the change of intent: the visit moved to ``final_min`` (a reservation is modified;
        a booking, which no tool can change, is cancelled and made anew)."""
        ctx, uid, key = self.ctx, self.ctx["user_id"], self.ctx["task_key"]
        n = 1 + int("visit" in r.extra)
        out: list[str] = []
        if r.final_min is not None:
            if ctx["kind"] == "book":
                out.append(call("get_instore_books", user_id=uid))
                out += [call("instore_cancel_book", book_id=f"{key}B{i:02d}") for i in range(1, n + 1)]
                out += self._visits(r, r.final_min, n + 1)
            else:
                for i in range(1, n + 1):
                    rid = f"{key}R{i:02d}"
                    out += [
                        call("search_instore_reservation", user_id=uid, reservation_id=rid),
                        call(
                            "instore_modify_reservation",
                            reservation_id=rid,
                            time=self.at(r.visit_day, r.final_min).strftime(TIME_FORMAT),
                        ),
                    ]
        noun = "booking" if ctx["kind"] == "book" else "reservation"
        out.append(f"All set: your {noun} has been moved one hour later.")
        return out

    def _actions(self, r: Route) -> list[str]:
        ctx = self.ctx
        out = self._lookups(r)
        if r.confirm:
            out.append(self._plan(r))
        out += self._bookings(r)
        refunds = self._refunds(r)
        if ctx["mistaken"] is not None:
            out += self._seg(("cancel", r.cancel_old, r.cancel_kept), lambda: self._cancels(r))
        paid = (
            r.pay_transport
            and r.pay_hotel
            and (r.pay_instore or not ctx["instore"])
            and (r.pay_delivery or not ctx["delivery"])
        )
        done = "All done: everything has been booked" + (" and paid." if paid else ".")
        if refunds:
            done += " The hotel booked for the wrong week has been cancelled"
            done += f" and {' + '.join(fmt_amount(x) for x in refunds)} yuan will be refunded." if r.tell_changes else "."
        if r.tell_totals:
            names = {
                "transport": f"the {self.mode}",
                "hotel": "the hotel",
                "instore": "the package",
                "delivery": "the food",
            }
            done += " Totals: " + ", ".join(f"{names[k]} {fmt_amount(x)} yuan" for k, x in self._totals(r).items()) + "."
        out.append(done)
        if ctx["intent"]:
            out += self._seg(
                ("moves", r.visit_shop, r.visit_day, r.final_min, r.party, r.pay_book, "visit" in r.extra),
                lambda: self._moves(r),
            )
        return out


def generate_cross_task(
    seed: int, difficulty: int = DEFAULT_DIFFICULTY, split: str = "train", violations: bool = True
) -> Task:
    """The cross-scenario task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` leaves out the checker-validation trajectories (an env needs none), and
    nothing else changes."""
    check_split(split)
    return first_attempt(
        lambda attempt: _Builder(int(seed), int(difficulty), split, attempt, violations).build(),
        MAX_ATTEMPTS,
        f"cross-scenario task for seed {seed}, difficulty {difficulty}",
    ).vouch_world()  # its rows are as the entities hold them: the env builds its catalogues unvalidated
