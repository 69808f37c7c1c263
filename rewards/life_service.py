"""Rubric checks over a life-service world's orders (delivery now; in-store and travel reuse them).

"New orders" are those created during the episode; "active" ones are not cancelled. Checks on
the content of an order apply to every new active order of the task's type, so an extra order
that breaks a constraint fails it too. The in-store checks at the end also read the shops of
orders and the episode's bookings and reservations ("appointments": created or changed in the
episode and not cancelled). The cross-scenario checks last relate one domain's records to
another's (check-in on the arrival day, a visit after the arrival, the shop near the hotel, a
delivery to the hotel on its check-in night).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from servicegym.rewards.rubric import EpisodeView, check
from servicegym.simulators.scripted_user import asks_confirmation
from servicegym.world_state.core import haversine_m, parse_time
from servicegym.world_state.life.entities import Order
from servicegym.world_state.travel.entities import arrival_at, departure_at, minutes_of, parse_day


def new_active_orders(view: EpisodeView, order_type: str = "delivery") -> list[Order]:
    before = view.initial.table("orders").rows
    return [
        o
        for o in view.world.table("orders")
        if o.order_id not in before and o.order_type == order_type and o.status != "cancelled"
    ]


def _orders(view: EpisodeView, params: dict[str, Any], default_type: str = "delivery") -> list[Order]:
    return new_active_orders(view, params.get("order_type", default_type))


def _all(view: EpisodeView, params: dict[str, Any], pred, default_type: str = "delivery") -> bool:
    orders = _orders(view, params, default_type)
    return bool(orders) and all(pred(o) for o in orders)


def _place_all(view: EpisodeView, params: dict[str, Any], table: str, default_type: str, pred) -> bool:
    """Every new active order's place (its row in ``table``: a store, a shop) satisfies ``pred``."""
    places = view.world.table(table)
    return _all(view, params, lambda o: (p := places.get(o.store_id)) is not None and pred(p), default_type)


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


@check("order_count")
def order_count(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Exactly ``count`` new active orders."""
    return len(_orders(view, params)) == params["count"]


@check("paid")
def paid(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active order is paid."""
    return _all(view, params, lambda o: o.status == "paid")


@check("dish")
def dish(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active order contains at least one of ``product_ids``."""
    wanted = set(params["product_ids"])
    return _all(view, params, lambda o: any(line.product_id in wanted for line in o.products))


@check("quantity")
def quantity(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active order holds ``count`` portions in all (of ``product_ids`` if given)."""
    wanted = set(params.get("product_ids") or ())
    return _all(
        view,
        params,
        lambda o: sum(x.quantity for x in o.products if not wanted or x.product_id in wanted) == params["count"],
    )


@check("store_distance")
def store_distance(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The store is at most ``max_m`` metres from the delivery address."""
    stores = view.world.table("stores")

    def ok(o: Order) -> bool:
        s = stores.get(o.store_id)
        if s is None or o.location is None:
            return False
        d = haversine_m(o.location.longitude, o.location.latitude, s.location.longitude, s.location.latitude)
        return d <= params["max_m"]

    return _all(view, params, ok)


@check("deadline")
def deadline(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The order arrives no later than ``by`` (and no earlier than ``after`` if given)."""
    by = parse_time(params["by"])
    after = parse_time(params["after"]) if params.get("after") else None

    def ok(o: Order) -> bool:
        try:
            t = parse_time(o.delivery_time)
        except ValueError:
            return False
        return t <= by and (after is None or t >= after)

    return _all(view, params, ok)


@check("budget")
def budget(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active order costs at most ``max_total``."""
    return _all(view, params, lambda o: o.total_price <= params["max_total"] + 1e-9)


@check("diet")
def diet(view: EpisodeView, params: dict[str, Any]) -> bool:
    """No ordered product carries a tag in ``forbidden_tags``."""
    bad = {_norm(t) for t in params["forbidden_tags"]}
    return _all(view, params, lambda o: not any(_norm(t) in bad for x in o.products for t in x.tags))


@check("store_rating")
def store_rating(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The store is rated at least ``min_score``."""
    return _place_all(view, params, "stores", "delivery", lambda s: s.score >= params["min_score"])


@check("store_tag")
def store_tag(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The store carries ``tag``."""
    tag = _norm(params["tag"])
    return _place_all(view, params, "stores", "delivery", lambda s: tag in map(_norm, s.tags))


@check("address")
def address(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active order goes to ``address``."""
    return _all(view, params, lambda o: o.location is not None and o.location.address == params["address"])


@check("attribute")
def attribute(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every line of ``product_ids`` carries the specification ``value`` (the dish item checks presence)."""
    wanted, value = set(params["product_ids"]), _norm(params["value"])
    return _all(
        view, params, lambda o: all(_norm(x.attributes) == value for x in o.products if x.product_id in wanted)
    )


@check("note_mentions")
def note_mentions(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The note of every new active order (or of ``order_id``) mentions one of ``keywords``."""
    kws = [_norm(k) for k in params["keywords"]]
    if params.get("order_id"):
        o = view.world.table("orders").get(params["order_id"])
        return o is not None and any(k in _norm(o.note) for k in kws)
    return _all(view, params, lambda o: any(k in _norm(o.note) for k in kws))


@check("order_status")
def order_status(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The order ``order_id`` ends with status ``status``."""
    o = view.world.table("orders").get(params["order_id"])
    return o is not None and o.status == params["status"]


@check("untouched")
def untouched(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The orders ``order_ids`` end exactly as they started."""
    now, then = view.world.table("orders"), view.initial.table("orders")
    return all(now.get(i) == then.get(i) for i in params["order_ids"])


@check("confirmed_before_order")
def confirmed_before_order(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Before the first executed ``tool`` call the agent asked the user to confirm, and the user replied."""
    tool = params.get("tool", "create_delivery_order")
    asked = replied = False
    for e in view.history:
        if e.kind == "message" and e.role == "assistant" and asks_confirmation(e.content):
            asked, replied = True, False
        elif e.kind == "message" and e.role == "user" and asked:
            replied = True
        elif e.kind == "tool_call" and e.name == tool and e.outcome == "executed":
            return asked and replied
    return False


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@check("informed_total")
def informed_total(view: EpisodeView, params: dict[str, Any]) -> bool:
    """After creating the orders, the agent told the user each new order's total price."""
    orders = _orders(view, params)
    if not orders:
        return False
    last_create = max(
        (e.index for e in view.history if e.kind == "tool_call" and e.outcome == "executed" and e.name.startswith("create_")),
        default=-1,
    )
    said = {
        float(n)
        for e in view.history
        if e.kind == "message" and e.role == "assistant" and e.index > last_create
        for n in _NUMBER.findall(e.content)
    }
    return all(any(abs(o.total_price - x) < 0.01 for x in said) for o in orders)


# ----- in-store: the shops of orders, seat bookings and service reservations ---------------------
def episode_appointments(view: EpisodeView, table: str) -> list[Any]:
    """Active rows of ``table`` (``books`` or ``reservations``) created or changed in the episode."""
    before = view.initial.table(table).rows
    return [r for r in view.world.table(table) if r.status != "cancelled" and before.get(r.key) != r]


def _appointments(view: EpisodeView, params: dict[str, Any]) -> list[Any]:
    return episode_appointments(view, params.get("table", "reservations"))


def _appointment_time(row: Any) -> str:
    return row.book_time if hasattr(row, "book_time") else row.reservation_time


def _instore_all(view: EpisodeView, params: dict[str, Any], pred) -> bool:
    return _all(view, params, pred, "instore")


@check("appointment_count")
def appointment_count(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Exactly ``count`` active bookings/reservations (``table``) made or changed in the episode."""
    return len(_appointments(view, params)) == params["count"]


@check("appointment_at_order_shop")
def appointment_at_order_shop(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The episode's bookings/reservations are at the shops of its new in-store orders, and the other way round."""
    rows = _appointments(view, params)
    orders = new_active_orders(view, params.get("order_type", "instore"))
    if not rows or not orders:
        return False
    return {r.shop_id for r in rows} == {o.store_id for o in orders}


@check("appointment_time")
def appointment_time(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every booking/reservation of the episode is for ``time`` (give or take ``tolerance_min``)."""
    want = parse_time(params["time"])
    slack = float(params.get("tolerance_min", 0)) * 60

    def ok(row: Any) -> bool:
        try:
            return abs((parse_time(_appointment_time(row)) - want).total_seconds()) <= slack
        except ValueError:
            return False

    rows = _appointments(view, params)
    return bool(rows) and all(ok(r) for r in rows)


@check("appointment_party")
def appointment_party(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every booking/reservation of the episode is for ``count`` people."""
    rows = _appointments(view, params)
    return bool(rows) and all(r.customer_count == params["count"] for r in rows)


@check("appointment_paid")
def appointment_paid(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every booking/reservation of the episode is paid (a booking fee was paid)."""
    rows = _appointments(view, params)
    return bool(rows) and all(r.status == "paid" for r in rows)


@check("shop_rating")
def shop_rating(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The shop of every new in-store order is rated at least ``min_score``."""
    return _place_all(view, params, "shops", "instore", lambda s: s.score >= params["min_score"])


@check("shop_tag")
def shop_tag(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The shop of every new in-store order carries ``tag``."""
    tag = _norm(params["tag"])
    return _place_all(view, params, "shops", "instore", lambda s: tag in map(_norm, s.tags))


@check("shop_distance")
def shop_distance(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The shop of every new in-store order is at most ``max_m`` metres from (``longitude``, ``latitude``)."""
    shops = view.world.table("shops")

    def ok(o: Order) -> bool:
        s = shops.get(o.store_id)
        if s is None:
            return False
        d = haversine_m(params["longitude"], params["latitude"], s.location.longitude, s.location.latitude)
        return d <= params["max_m"]

    return _instore_all(view, params, ok)


@check("record_status")
def record_status(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The row ``record_id`` of ``table`` ends with status ``status``."""
    row = view.world.table(params["table"]).get(params["record_id"])
    return row is not None and row.status == params["status"]


@check("records_untouched")
def records_untouched(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The rows ``record_ids`` of ``table`` end exactly as they started."""
    now, then = view.world.table(params["table"]), view.initial.table(params["table"])
    return all(now.get(i) == then.get(i) for i in params["record_ids"])


# ----- travel: routes, schedules, classes, stays, tickets, and what the agent told the user --------
_TRAVEL_PLACES = {"hotel": "hotels", "attraction": "attractions", "flight": "flights", "train": "trains"}


def _travel_all(view: EpisodeView, params: dict[str, Any], pred) -> bool:
    orders = new_active_orders(view, params["order_type"])
    return bool(orders) and all(pred(o) for o in orders)


def _travel_place(view: EpisodeView, o: Order) -> Any:
    return view.world.table(_TRAVEL_PLACES[o.order_type]).get(o.store_id)


def _travel_day(o: Order) -> str:
    return min(x.date for x in o.products) if o.products else ""


@check("transport_route")
def transport_route(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active ``order_type`` order goes from ``departure_city`` to ``arrival_city`` on ``date``."""

    def ok(o: Order) -> bool:
        t = _travel_place(view, o)
        return (
            t is not None
            and _norm(t.departure_city) == _norm(params["departure_city"])
            and _norm(t.arrival_city) == _norm(params["arrival_city"])
            and bool(o.products)
            and all(x.date == params["date"] for x in o.products)
        )

    return _travel_all(view, params, ok)


def _on_day(day: str, hhmm: str) -> datetime:
    return parse_day(day) + timedelta(minutes=minutes_of(hhmm))


@check("arrive_by")
def arrive_by(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active ``order_type`` order arrives no later than ``by`` (HH:MM) on its departure day."""

    def ok(o: Order) -> bool:
        t = _travel_place(view, o)
        return t is not None and bool(o.products) and arrival_at(t, _travel_day(o)) <= _on_day(_travel_day(o), params["by"])

    return _travel_all(view, params, ok)


@check("depart_after")
def depart_after(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active ``order_type`` order departs no earlier than ``after`` (HH:MM)."""

    def ok(o: Order) -> bool:
        t = _travel_place(view, o)
        return t is not None and bool(o.products) and departure_at(t, _travel_day(o)) >= _on_day(_travel_day(o), params["after"])

    return _travel_all(view, params, ok)


@check("product_type")
def product_type(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every line of every new active ``order_type`` order is of type ``value`` (seat class, room or ticket type)."""
    want = _norm(params["value"])
    return _travel_all(view, params, lambda o: bool(o.products) and all(_norm(x.name) == want for x in o.products))


@check("unit_price")
def unit_price(view: EpisodeView, params: dict[str, Any]) -> bool:
    """No line of a new active ``order_type`` order costs more than ``max_price`` a unit (a night, a seat)."""
    return _travel_all(view, params, lambda o: all(x.price <= params["max_price"] + 1e-9 for x in o.products))


@check("travel_date")
def travel_date(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every line of every new active ``order_type`` order is dated ``date``."""
    return _travel_all(view, params, lambda o: bool(o.products) and all(x.date == params["date"] for x in o.products))


@check("check_in_date")
def check_in_date(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active hotel order's first night is ``date``."""
    return _travel_all(view, {"order_type": "hotel", **params}, lambda o: _travel_day(o) == params["date"])


@check("nights")
def nights(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active hotel order covers ``count`` consecutive nights."""

    def ok(o: Order) -> bool:
        days = sorted({x.date for x in o.products})
        if len(days) != params["count"] or len(o.products) != len(days):
            return False
        return all((parse_day(b) - parse_day(a)).days == 1 for a, b in zip(days, days[1:]))

    return _travel_all(view, {"order_type": "hotel", **params}, ok)


@check("hotel_distance")
def hotel_distance(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The hotel of every new active hotel order is at most ``max_m`` metres from (``longitude``, ``latitude``)."""

    def ok(o: Order) -> bool:
        h = _travel_place(view, o)
        if h is None:
            return False
        return haversine_m(params["longitude"], params["latitude"], h.location.longitude, h.location.latitude) <= params["max_m"]

    return _travel_all(view, {"order_type": "hotel", **params}, ok)


@check("hotel_rating")
def hotel_rating(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The hotel of every new active hotel order is rated at least ``min_score`` (and ``min_stars`` if given)."""

    def ok(o: Order) -> bool:
        h = _travel_place(view, o)
        return h is not None and h.score >= params["min_score"] and h.star_rating >= params.get("min_stars", 0)

    return _travel_all(view, {"order_type": "hotel", **params}, ok)


@check("hotel_tag")
def hotel_tag(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The hotel of every new active hotel order carries ``tag``."""
    tag = _norm(params["tag"])
    return _travel_all(
        view, {"order_type": "hotel", **params}, lambda o: (h := _travel_place(view, o)) is not None and tag in map(_norm, h.tags)
    )


@check("attraction_visit")
def attraction_visit(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active attraction order is for one of ``attraction_ids``."""
    wanted = set(params["attraction_ids"])
    return _travel_all(view, {"order_type": "attraction", **params}, lambda o: o.store_id in wanted)


@check("confirmed_before_booking")
def confirmed_before_booking(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Before the first executed call of any of ``tools`` the agent asked the user to confirm, and the user replied."""
    tools = set(params["tools"])
    asked = replied = False
    for e in view.history:
        if e.kind == "message" and e.role == "assistant" and asks_confirmation(e.content):
            asked, replied = True, False
        elif e.kind == "message" and e.role == "user" and asked:
            replied = True
        elif e.kind == "tool_call" and e.name in tools and e.outcome == "executed":
            return asked and replied
    return False


def _said_after(view: EpisodeView, index: int) -> set[float]:
    return {
        float(n)
        for e in view.history
        if e.kind == "message" and e.role == "assistant" and e.index > index
        for n in _NUMBER.findall(e.content)
    }


@check("informed_totals")
def informed_totals(view: EpisodeView, params: dict[str, Any]) -> bool:
    """After the last executed booking or date change, the agent told the user the total of every new
    active order of ``order_types``."""
    orders = [o for t in params["order_types"] for o in new_active_orders(view, t)]
    if not orders:
        return False
    last = max(
        (e.index for e in view.history if e.kind == "tool_call" and e.outcome == "executed"
         and e.name.startswith(("create_", "modify_"))),
        default=-1,
    )
    said = _said_after(view, last)
    return all(any(abs(o.total_price - x) < 0.01 for x in said) for o in orders)


@check("informed_changes")
def informed_changes(view: EpisodeView, params: dict[str, Any]) -> bool:
    """After every executed call of ``tools`` (date changes, cancellations), the agent told the user the
    price difference or refund it returned (when not zero)."""
    tools = set(params["tools"])
    for e in view.history:
        if e.kind != "tool_call" or e.outcome != "executed" or e.name not in tools:
            continue
        try:
            result = json.loads(e.content)
        except ValueError:
            continue
        if not isinstance(result, dict):
            continue
        amount = abs(float(result.get("price_difference") or 0.0)) or float(result.get("refund") or 0.0)
        if amount > 0 and not any(abs(amount - x) < 0.01 for x in _said_after(view, e.index)):
            return False
    return True


# ----- cross-scenario: the legs of one trip agree with each other ----------------------------------
# Each check relates every new active record of one leg to every one of another (a duplicate that
# agrees passes, one that disagrees fails), and fails when either side is missing.
HOTEL_CHECK_IN = "14:00"  # when a room is ready on the first night, unless a task says otherwise


def _arrivals(view: EpisodeView, order_type: str) -> list[datetime] | None:
    """When each new active ``order_type`` (flight or train) order arrives; None if one cannot be read."""
    out = []
    for o in new_active_orders(view, order_type):
        t = _travel_place(view, o)
        if t is None or not o.products:
            return None
        out.append(arrival_at(t, _travel_day(o)))
    return out


def _hotels(view: EpisodeView) -> list[tuple[Order, Any]] | None:
    """The new active hotel orders with their hotels; None if a hotel is unknown."""
    out = []
    for o in new_active_orders(view, "hotel"):
        h = _travel_place(view, o)
        if h is None or not o.products:
            return None
        out.append((o, h))
    return out


def _when(text: str) -> datetime | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


@check("check_in_matches_arrival")
def check_in_matches_arrival(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active hotel order's first night is the day every new active ``order_type`` order arrives."""
    arrivals, hotels = _arrivals(view, params["order_type"]), _hotels(view)
    if not arrivals or not hotels:
        return False
    return all(_travel_day(o) == a.strftime("%Y-%m-%d") for o, _ in hotels for a in arrivals)


@check("booking_after_arrival")
def booking_after_arrival(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every booking/reservation of the episode (``table``) is at least ``margin_min`` minutes after every
    new active ``order_type`` order arrives (the transfer from the airport or station)."""
    arrivals, rows = _arrivals(view, params["order_type"]), _appointments(view, params)
    if not arrivals or not rows:
        return False
    margin = timedelta(minutes=float(params.get("margin_min", 0)))
    times = [_when(_appointment_time(r)) for r in rows]
    return all(t is not None and t >= a + margin for t in times for a in arrivals)


@check("appointment_on_arrival_day")
def appointment_on_arrival_day(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every booking/reservation of the episode (``table``) is at ``time`` (HH:MM, give or take
    ``tolerance_min``) on the day every new active ``order_type`` order arrives."""
    arrivals, rows = _arrivals(view, params["order_type"]), _appointments(view, params)
    if not arrivals or not rows:
        return False
    slack = float(params.get("tolerance_min", 0)) * 60
    times = [_when(_appointment_time(r)) for r in rows]
    return all(
        t is not None and abs((t - _on_day(a.strftime("%Y-%m-%d"), params["time"])).total_seconds()) <= slack
        for t in times
        for a in arrivals
    )


@check("shop_near_hotel")
def shop_near_hotel(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The shop of every new in-store order and of every booking/reservation of the episode (``table``)
    is at most ``max_m`` metres from the hotel of every new active hotel order."""
    shops = view.world.table("shops")
    ids = {o.store_id for o in new_active_orders(view, "instore")} | {r.shop_id for r in _appointments(view, params)}
    hotels = _hotels(view)
    if not ids or not hotels:
        return False
    for sid in ids:
        s = shops.get(sid)
        if s is None:
            return False
        for _, h in hotels:
            d = haversine_m(s.location.longitude, s.location.latitude, h.location.longitude, h.location.latitude)
            if d > params["max_m"]:
                return False
    return True


@check("delivery_to_hotel")
def delivery_to_hotel(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active delivery order goes to the hotel of every new active hotel order (its location
    within ``tolerance_m`` metres of the hotel, default 50)."""
    orders, hotels = new_active_orders(view, "delivery"), _hotels(view)
    if not orders or not hotels:
        return False
    tol = float(params.get("tolerance_m", 50.0))
    return all(
        o.location is not None
        and haversine_m(o.location.longitude, o.location.latitude, h.location.longitude, h.location.latitude) <= tol
        for o in orders
        for _, h in hotels
    )


@check("delivery_after_check_in")
def delivery_after_check_in(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every new active delivery order arrives on the check-in day of every new active hotel order, not
    before ``check_in`` (HH:MM, default 14:00), and between ``after`` and ``by`` (HH:MM) when given."""
    orders, hotels = new_active_orders(view, "delivery"), _hotels(view)
    if not orders or not hotels:
        return False
    for o in orders:
        t = _when(o.delivery_time)
        if t is None:
            return False
        for h_order, _ in hotels:
            day = _travel_day(h_order)
            if t < _on_day(day, params.get("check_in", HOTEL_CHECK_IN)) or t >= _on_day(day, "00:00") + timedelta(days=1):
                return False
            if params.get("after") and t < _on_day(day, params["after"]):
                return False
            if params.get("by") and t > _on_day(day, params["by"]):
                return False
    return True
