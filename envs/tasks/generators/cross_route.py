"""A cross-scenario task's routes: a ``Route`` is one way of carrying out the task (what is
booked, when, and what is said); ``RouteActions``, a base of the cross-scenario generator's
``_Builder``, prices a route from the task's products (its ticket, stay and totals, the refunds the
tools report along it) and writes it out as the agent's action strings, assembled from segments
memoised per task: the golden route, and one route per rubric item that breaks only that item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import Retry, call, fmt_amount, hhmm
from servicegym.envs.tasks.generators.content_cross import HOTEL_NOTES
from servicegym.envs.tasks.generators.content_travel import ROOM_TYPES
from servicegym.envs.tasks.generators.travel import hotel_booking, transport_booking
from servicegym.world_state.core import TIME_FORMAT, haversine_m
from servicegym.world_state.delivery.tools import delivery_minutes
from servicegym.world_state.travel import KINDS

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


class RouteActions:
    """The prices and the action strings of a route, for ``_Builder`` (which draws what they read:
    the means of travel, the products by slot and by id, the places, the task's context, the
    segments made so far, and the dates of the trip from its base ``CrossPlaces``)."""

    mode: str
    slot: dict[tuple[str, str, str], tuple[str, float]]
    places: dict[str, dict[str, Any]]
    items: dict[str, dict[str, Any]]
    ctx: dict[str, Any]
    segments: dict[tuple[Any, ...], list[str]]
    day: Callable[[int], str]
    at: Callable[[int, int], datetime]

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
