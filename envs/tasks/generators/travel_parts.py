"""The parts of the travel task builder (``travel_builder._Builder``) that stand apart from its draws, kept
here so that the builder's module stays short: the trip's sections as the builder draws them (``_Plan``,
``_Transport``, ``_Stay``, ``_Sights``, ``_PastOrders``), and ``TripText``, a base of ``_Builder`` with what
the user says (the facts stated up front or held back, the opening, the change of plan) and what the rubric
checks, with the constants these read (the facts' ``KEYWORDS``, the tools the process items name, the
reasoning points of a difficulty, ``reasoning_points_for``). It does not import ``travel_builder``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from servicegym.envs.tasks.generators.common import (
    FactSheet,
    Retry,
    Rubric,
    article,
    fmt_amount,
    hhmm,
    user_script,
)
from servicegym.envs.tasks.generators.content_travel import (
    MODE_WISH,
    OPENINGS,
    ROOM_REASONS,
    TICKET_REASONS,
    WEEKDAYS,
)
from servicegym.envs.tasks.generators.travel_shared import (
    TravelItems,
    _spoken_day,
    state_hotel_wishes,
    state_ticket_wishes,
    state_travel_date,
)
from servicegym.simulators.scripted_user import HiddenFact, UserScript

MAX_DIFFICULTY = 6
CREATE_TOOLS = ["create_flight_order", "create_train_order", "create_hotel_order", "create_attraction_order"]
CHANGE_TOOLS = [
    "modify_flight_order",
    "modify_train_order",
    "cancel_flight_order",
    "cancel_train_order",
    "cancel_hotel_order",
    "cancel_attraction_order",
]

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


@dataclass(frozen=True)
class _Plan:
    """When and for how many: the task's now, the arrival and check-out (``D``, ``C`` as days, ``D1`` the
    day after the arrival), the nights (``n0``), the travellers, the holiday, and with a change of plan
    (``intent``) the check-in day and nights it leaves (``final_arrival``, ``final_nights``)."""

    now: datetime
    arrive: datetime
    check_out: datetime
    n0: int
    qty: int
    intent: bool
    holiday: tuple[str, int, bool] | None
    D: str
    C: str
    D1: str
    final_arrival: str
    final_nights: int


@dataclass(frozen=True)
class _Transport:
    """The service to book, its decoys (by the wish each breaks), the seat class asked for and the
    cheapest one, and the user's wishes on the times (minutes of the day) and the budget."""

    target: dict[str, Any]
    decoys: dict[str, dict[str, Any]]
    seat_type: str
    cheap_class: str
    by: int | None
    after: int | None
    budget: float | None


@dataclass(frozen=True)
class _Stay:
    """The event and its venue, the hotel to book, its clones (by the wish each breaks) and the user's
    wishes on the hotel."""

    event: str
    event_noun: str
    venue: dict[str, Any]
    v_lon: float
    v_lat: float
    hotel: dict[str, Any]
    clones: dict[str, dict[str, Any]]
    max_m: float | None
    min_score: float | None
    tag: str | None
    room_type: str
    max_price: float | None


@dataclass(frozen=True)
class _Sights:
    """The attraction to visit (``None`` without the feature), the one of another kind, the kind, the
    visit day, the ticket type and the ids of the attractions of that kind."""

    attraction: dict[str, Any] | None
    other_attraction: dict[str, Any] | None
    kind: str | None
    visit: str | None
    ticket_type: str
    attraction_ids: list[str]


@dataclass(frozen=True)
class _PastOrders:
    """The user's past orders, and with the feature the mistaken booking, the one to keep and their kind."""

    orders: list[dict[str, Any]]
    mistaken: dict[str, Any] | None
    kept: dict[str, Any] | None
    old_kind: str | None

class TripText:
    """What the user says and what the rubric checks, as ``_Builder`` (which sets up what they read)
    draws them: its ``rng``, the features, the clamped difficulty (``level``), the means of travel
    (``mode``), the two cities and the mistaken booking's and the kept one's cities (``old``)."""

    rng: random.Random
    features: set[str]
    level: int
    mode: str
    city_a: str
    city_b: str
    old: dict[str, str]

    # ----- what the user says, what the rubric checks -----------------------------------------
    def _facts_and_user(
        self,
        plan: _Plan,
        name: str,
        style: str,
        transport: _Transport,
        stay: _Stay,
        sights: _Sights,
        past: _PastOrders,
    ) -> tuple[list[HiddenFact], UserScript]:
        """The facts the user states up front or holds back, the opening, the change of plan, and the
        user's script made of them; returns the held-back facts and the script."""
        rng, c, d, mode, city_b = self.rng, self.features, self.level, self.mode, self.city_b
        qty, check_out, n0, intent = plan.qty, plan.check_out, plan.n0, plan.intent
        by, after, seat_type, budget = transport.by, transport.after, transport.seat_type, transport.budget
        max_m, min_score, tag = stay.max_m, stay.min_score, stay.tag
        room_type, max_price = stay.room_type, stay.max_price
        kind, visit, ticket_type = sights.kind, sights.visit, sights.ticket_type

        # -- facts: stated up front or held back
        sheet = FactSheet(rng)
        fact = sheet.add
        state_travel_date(fact, plan.holiday, plan.arrive, KEYWORDS["travel_date"])
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

        opening = rng.choice(OPENINGS[style]).format(city=city_b, event=stay.event)
        opening += f" {MODE_WISH[mode]} The {stay.event_noun} is at the {stay.venue['address']}."
        if kind is not None:
            opening += f" While I'm there I'd also like to visit {article(kind)} {kind}."
        if past.mistaken is not None:
            opening += (
                f" And I booked a {past.old_kind} to {self.old['c2']} by mistake, please cancel it, but keep my "
                f"{past.old_kind} to {self.old['c3']}."
            )
        if stated:
            opening += " " + " ".join(stated)
        change_msg = None
        if intent:
            change_msg = (
                f"Oh, one more thing, my plans changed: could you move my {mode} to one day later, and push the "
                "hotel check-in back by a day as well? I'll keep the same check-out day."
            )
        user = user_script(rng, name, style, ("home city", self.city_a), opening, facts, change_msg, "first_done")
        return facts, user

    def _build_rubric(
        self, plan: _Plan, transport: _Transport, stay: _Stay, sights: _Sights, past: _PastOrders
    ) -> tuple[Rubric, int]:
        """The rubric: the trip's content items, then the counts, payments and process items; returns it
        with the task's reasoning points (checked against the difficulty)."""
        c, d, mode = self.features, self.level, self.mode
        qty, intent, final_arrival, final_nights = plan.qty, plan.intent, plan.final_arrival, plan.final_nights
        by, seat_type, room_type, max_price = transport.by, transport.seat_type, stay.room_type, stay.max_price
        attraction, kind, visit, ticket_type = sights.attraction, sights.kind, sights.visit, sights.ticket_type
        mistaken, kept = past.mistaken, past.kept

        # -- rubric
        items = Rubric()
        item = items.add

        trip_items = TravelItems(items, mode)
        trip_items.outbound(self.city_a, self.city_b, final_arrival)
        item("check_in", "check_in_date", f"hotel check-in on {final_arrival}", date=final_arrival)
        item("nights", "nights", f"{final_nights} night(s) at the hotel", count=final_nights)
        if by is not None:
            item("arrive_by", "arrive_by", f"arrives by {hhmm(by)}", order_type=mode, by=hhmm(by))
        trip_items.depart_after(transport.after)
        trip_items.seat_class(seat_type if "seat_class" in c else None)
        trip_items.ticket_budget(transport.budget)
        trip_items.travellers(qty if "travellers" in c else None)
        if stay.max_m is not None:
            trip_items.hotel_distance(stay.max_m, stay.v_lon, stay.v_lat)
        trip_items.hotel_wishes(stay.min_score, stay.tag)
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
            item("attraction", "attraction_visit", f"tickets for a {kind}", attraction_ids=sights.attraction_ids)
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
        return items, points
