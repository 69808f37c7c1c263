"""The parts of a cross-scenario task's builder (``cross_builder._Builder``) kept apart from it
so that each module stays short: the section records it passes from section to section (``_Who``,
``_When``, ``_Transport``, ``_Stay``, ``_Evening``, ``_Supper``), and ``TaskText``, a base of
``_Builder`` with its methods about what the user says (the facts stated or held back, the opening
and the scripted user) and what the rubric checks (its content and process items).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from servicegym.envs.tasks.generators.common import FactSheet, Rubric, article, fmt_amount, hhmm, user_script
from servicegym.envs.tasks.generators.content_cross import (
    DELIVERY_WISH,
    EVENING_VISITS,
    HOTEL_NOTES,
    HUB_NOUN,
    OPENINGS,
    WRONG_WEEK,
)
from servicegym.envs.tasks.generators.content_delivery import DIETS
from servicegym.envs.tasks.generators.content_travel import MODE_WISH
from servicegym.envs.tasks.generators.cross_features import CHANGE_TOOLS, CREATE_TOOLS, KEYWORDS
from servicegym.envs.tasks.generators.travel import (
    TravelItems,
    state_hotel_wishes,
    state_ticket_wishes,
    state_travel_date,
)
from servicegym.rewards.life_service import HOTEL_CHECK_IN
from servicegym.simulators.scripted_user import HiddenFact, UserScript


@dataclass
class _Who:
    """Who travels, from where, and how long the journey is (``_Builder._who``; the means of travel
    and the destination city are kept on the builder)."""

    name: str
    style: str
    user_id: str
    task_key: str
    city_a: str  # the home city
    home_coords: tuple[float, float]
    home: dict[str, Any]  # the home's location
    km: float
    dur: int  # the journey's minutes
    base_fare: float


@dataclass
class _When:
    """The times of the trip (``_Builder._when``; the arrival day and the nights are kept on the
    builder). Times of day are minutes after midnight."""

    holiday: tuple[str, int, bool] | None  # (name, year, lasts several days) when the user names one
    now: datetime
    qty: int  # the travellers
    visit0: int  # the evening visit as first asked for
    visit: int  # the evening visit after the change of intent (``visit0`` without one)
    margin: int  # the transfer from the station or airport to the evening visit
    t0: int  # the wanted service's departure
    window: int  # the delivery arrives within 30 minutes of this


@dataclass
class _Transport:
    """The flight or train there, its decoys and the way home (``_Builder._transport``)."""

    seat_type: str
    cheap_class: str
    target: dict[str, Any]
    decoys: dict[str, dict[str, Any]]  # rubric item -> the service that breaks only it
    after: int | None  # the earliest departure the user states
    budget: float | None  # the ticket budget the user states
    back: dict[str, Any]  # the way home on the check-out day


@dataclass
class _Stay:
    """The venue and the hotels in a row: venue - hotel - (shop) - far hotel (``_Builder._venue_and_hotels``)."""

    event: str
    event_noun: str
    venue: dict[str, Any]  # the venue's location
    v_lon: float
    v_lat: float
    max_m: float  # the hotel's greatest distance from the venue
    shop_m: float  # the evening shop's greatest distance from the hotel
    u: float  # how far the hotel lies inside ``max_m``
    bearing: float  # of the row, seen from the venue
    along: Callable[..., tuple[float, float]]  # (metres from the venue[, bearing]) -> the point on the row
    h_pos: tuple[float, float]  # the hotel's coordinates
    mid: tuple[float, float]  # halfway between the hotel and the far hotel
    min_score: float | None
    tag: str | None
    prices: dict[str, dict[str, float]]  # the hotel's room prices
    hotel: dict[str, Any]
    hotels: dict[str, dict[str, Any]]  # rubric item -> the hotel that breaks only it
    filler_hotel: dict[str, Any]


@dataclass
class _Evening:
    """The evening visit (``_Builder._evening_visit``): its shop, packages and look-alikes; empty
    without one."""

    shop: dict[str, Any] | None = None
    package: dict[str, Any] | None = None
    other_package: dict[str, Any] | None = None
    # rubric item -> (the look-alike shop that breaks only it, old -> new product ids)
    shops: dict[str, tuple[dict[str, Any], dict[str, str]]] = field(default_factory=dict)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)  # rubric item -> the package breaking it
    same_kind: dict[str, Any] | None = None  # a shop of the same kind of visit, selling something else
    category: str | None = None
    kind: str | None = None
    item_phrase: str = ""
    fee: float = 0.0
    instore_budget: float | None = None
    shop_min: float | None = None


@dataclass
class _Supper:
    """The late-night delivery (``_Builder._late_delivery``): its store, dishes and look-alikes; empty
    without one."""

    store: dict[str, Any] | None = None
    dish: dict[str, Any] | None = None
    other_dish: dict[str, Any] | None = None
    # rubric item -> (the look-alike store that breaks only it, old -> new product ids)
    stores: dict[str, tuple[dict[str, Any], dict[str, str]]] = field(default_factory=dict)
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)  # rubric item -> the dish breaking it
    diet_key: str | None = None
    forbidden: str | None = None
    store_max: float | None = None
    note_key: str | None = None
    dish_type: str = ""

    @property
    def hint(self) -> str:
        """The diet's note on the user's past order ("" without a diet)."""
        return DIETS[self.diet_key][2] if self.diet_key else ""


class TaskText:
    """What the user says and what the rubric checks, for ``_Builder`` (which sets up what they
    read: the task's ``rng``, the options (``opts``), the legs (``instore``, ``delivery``), the
    change of intent (``intent``), the means of travel (``mode``), the destination (``city_b``),
    the arrival day (``arrive``), the nights of the stay (``n0``) and the dates (``day``, of its
    base ``CrossPlaces``)); the rest comes in as the section records."""

    rng: random.Random
    opts: set[str]
    instore: bool
    delivery: bool
    intent: bool
    mode: str
    city_b: str
    arrive: datetime
    n0: int
    day: Callable[[int], str]

    # ----- what the user says -------------------------------------------------------------------
    def _user(
        self,
        who: _Who,
        when: _When,
        transport: _Transport,
        stay: _Stay,
        evening: _Evening,
        supper: _Supper,
        mistaken: dict[str, Any] | None,
    ) -> tuple[list[HiddenFact], UserScript]:
        """The facts the user states in the opening or holds back, the opening, and the scripted user
        (with the change of intent)."""
        rng, c, mode, n0, city_b = self.rng, self.opts, self.mode, self.n0, self.city_b
        instore, delivery, intent = self.instore, self.delivery, self.intent
        name, style, city_a = who.name, who.style, who.city_a
        qty, visit0, visit, margin, window = when.qty, when.visit0, when.visit, when.margin, when.window
        max_m, shop_m, min_score, tag = stay.max_m, stay.shop_m, stay.min_score, stay.tag
        category, kind = evening.category, evening.kind
        shop_min, instore_budget = evening.shop_min, evening.instore_budget
        seat_type, after, budget = transport.seat_type, transport.after, transport.budget
        diet_key, store_max, note_key = supper.diet_key, supper.store_max, supper.note_key
        sheet = FactSheet(rng)
        fact = sheet.add
        state_travel_date(fact, when.holiday, self.arrive, KEYWORDS["travel_date"])
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

        opening = rng.choice(OPENINGS[style]).format(city=city_b, event=stay.event)
        opening += f" {MODE_WISH[mode]} The {stay.event_noun} is at the {stay.venue['address']}."
        if instore:
            visit_text = EVENING_VISITS[category][0].format(item=evening.item_phrase)
            opening += f" On the evening I arrive I'd like {article(visit_text)} {visit_text} close to my hotel."
        if delivery:
            opening += " " + DELIVERY_WISH.format(dish=supper.dish_type)
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
        return facts, user

    # ----- the rubric ---------------------------------------------------------------------------
    def _content_items(
        self,
        items: Rubric,
        who: _Who,
        when: _When,
        transport: _Transport,
        stay: _Stay,
        evening: _Evening,
        supper: _Supper,
        mistaken: dict[str, Any] | None,
        kept: dict[str, Any] | None,
    ) -> None:
        """The rubric's content items (the reasoning points, less the change of intent) onto ``items``."""
        c, mode, n0, instore, delivery = self.opts, self.mode, self.n0, self.instore, self.delivery
        qty, visit, margin, window = when.qty, when.visit, when.margin, when.window
        seat_type, after, budget = transport.seat_type, transport.after, transport.budget
        max_m, shop_m, min_score, tag = stay.max_m, stay.shop_m, stay.min_score, stay.tag
        kind, package, shops = evening.kind, evening.package, evening.shops
        shop_min, instore_budget = evening.shop_min, evening.instore_budget
        dish, stores, dish_type = supper.dish, supper.stores, supper.dish_type
        store_max, forbidden, note_key = supper.store_max, supper.forbidden, supper.note_key
        item = items.add

        table = "books" if kind == "book" else "reservations"
        trip_items = TravelItems(items, mode)
        trip_items.outbound(who.city_a, self.city_b, self.day(0))
        item("check_in", "check_in_matches_arrival", "hotel check-in on the arrival day", order_type=mode)
        item("nights", "nights", f"{n0} night(s) at the hotel", count=n0)
        trip_items.hotel_distance(max_m, stay.v_lon, stay.v_lat)
        trip_items.seat_class(seat_type if "seat_class" in c else None)
        trip_items.travellers(qty if "travellers" in c else None)
        trip_items.depart_after(after)
        trip_items.ticket_budget(budget)
        trip_items.hotel_wishes(min_score, tag)
        if instore:
            variants = evening.variants
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
            variants = supper.variants
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

    def _process_items(self, items: Rubric, qty: int, evening: _Evening, mistaken: dict[str, Any] | None) -> None:
        """The rubric's process items (what is booked and paid, and what the user is told) onto ``items``."""
        c, mode, instore, delivery = self.opts, self.mode, self.instore, self.delivery
        kind, fee = evening.kind, evening.fee
        item = items.add
        table = "books" if kind == "book" else "reservations"
        noun = "booking" if kind == "book" else "reservation"
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
