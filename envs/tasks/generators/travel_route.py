"""A travel task's routes: a ``Route`` is one way of carrying out the task (what is booked, when,
and what is said); ``RouteActions``, a base of the travel generator's ``_Builder``, prices a route
from the task's products (its tickets, stay and totals, the differences and refunds the tools
report along it) and writes it out as the agent's action strings: the golden route, and one route
per rubric item that breaks only that item.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import Retry, call, fmt_amount
from servicegym.envs.tasks.generators.travel_shared import _day, hotel_booking, transport_booking
from servicegym.world_state.travel import KINDS

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


class RouteActions:
    """The prices and the action strings of a route, for ``_Builder`` (which draws what they read:
    the products by slot, the places, the task's context and, with an attraction, its keyword)."""

    mode: str
    slot: dict[tuple[str, str, str], tuple[str, float]]
    places: dict[str, dict[str, Any]]
    ctx: dict[str, Any]
    keyword: str

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
