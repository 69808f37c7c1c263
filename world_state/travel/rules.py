"""The rules and shared work of the travel tools (``tools.py``): the ledger and stock (a payment, a
refund, stock taken and given back), the pre-conditions (user, dates, product and stock, nights,
the order's kind, owner, status, a trip not started, a new date that is sold), the post-conditions
each write is checked against, and the implementations several tools share (a new order, pay,
cancel, move to another date, the orders of a user)."""

from __future__ import annotations

import re
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal

from rapidfuzz import fuzz, utils

from servicegym.world_state.core import History, Table, World, _copy_with, round2, unvalidated
from servicegym.world_state.life.entities import LifeWorld, Order, OrderLine
from servicegym.world_state.life.tools import (
    unless_vitabench,
    vitabench_release,
)
from servicegym.world_state.tools import (
    Postcondition,
    RawJson,
    exists,
    rule,
)
from servicegym.world_state.travel.entities import (
    Kind,
    LedgerEntry,
    add_days,
    parse_day,
    products_by_slot,
)
from servicegym.world_state.travel.views import (
    _DATE_SOURCES,
    _SEARCH,
    CITY_SIMILARITY,
    HOTEL,
    MAX_NIGHTS,
    VITABENCH_CITY_SCORE,
    _departs,
    _info_tool,
    _money,
    _num_json,
    _order_sources,
    _paid_of,
    _signed_amounts,
    net_paid,
    order_json,
    order_view,
)

# ----- ledger and stock -------------------------------------------------------------------------
_LEDGER_FIELDS = frozenset(LedgerEntry.model_fields)


def _entry(world: World, order: Order, kind: Literal["payment", "refund"], amount: float, reason: str) -> float:
    """Record a payment or refund of ``order`` (``amount`` already to the cent: ``round2`` of it is
    itself); its signed amount (``_signed_amounts``' term). The callers are this module's writes,
    whose kinds, amounts and reasons have the entry's field types: the row ``LedgerEntry(...)``
    makes, made without validation."""
    entry_id = world.ids.next(world.extra.get("task_key", "T") + "LG", 3)
    world.tables["travel_ledger"].insert(unvalidated(
        LedgerEntry,
        {"entry_id": entry_id, "order_id": order.order_id, "kind": kind, "amount": amount, "reason": reason,
         "time": world.clock.text()},
        set(_LEDGER_FIELDS),
    ))
    return amount if kind == "payment" else -amount


def _adjust(world: World, kind: Kind, product_id: str, delta: int) -> None:
    _adjust_in(world.tables[kind.products], product_id, delta)


def _adjust_in(table: Table, product_id: str, delta: int) -> None:
    """Stock of ``product_id`` (a row of ``table``, a kind's products) moved by ``delta``; a
    product without a stock count, or no longer in the catalogue, is left as it is."""
    p = table.rows.get(product_id)
    if p is not None:
        q = p.quantity
        if q is not None:
            table.update(product_id, quantity=q + delta)


# ----- pre-condition helpers ----------------------------------------------------------------------
def _user_is_current(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    return None if args.get("user_id") == world.user_id else f"user_id {args.get('user_id')!r} is not this user's id"


USER_RULE = rule("user_id must be the current user's id", _user_is_current)


_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@lru_cache(maxsize=4096)
def _date_problem(text: str, what: str) -> str | None:
    """Why ``text`` (argument ``what``) is not a ``YYYY-MM-DD`` date, or None; kept per text (the
    rules of a booking or date change ask it of the same few dates again and again)."""
    # strptime alone would take "2025-7-1", which then names no product's date
    try:
        if not _ISO_DAY.fullmatch(text.strip()):
            raise ValueError(text)
        parse_day(text)
    except ValueError:
        return f"{what} must be a date of the form YYYY-MM-DD, got {text!r}"
    return None


def _date_rule(arg: str, optional: bool = False) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        value = args.get(arg)
        if value is None and optional:
            return None
        return _date_problem(value, arg)

    return rule(f"{arg} has the form YYYY-MM-DD", check, _DATE_SOURCES)


def _not_before_today(world: World, date: str, what: str) -> str | None:
    # a VitaBench task's world, as VitaBench, books, moves and cancels whatever the date
    if parse_day(date).date() < world.clock.now.date() and not vitabench_release(world):
        return f"{what} {date} is in the past (today is {world.clock.now.date().isoformat()})"
    return None


def _product_rule(kind: Kind, product_arg: str, date_arg: str | None) -> Any:
    """The product named by ``product_arg`` belongs to the place and, if given, is for ``date_arg``."""
    what = {"hotel": "room", "attraction": "ticket", "flight": "seat", "train": "seat"}[kind.name]

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        p = world.tables[kind.products].get(args[product_arg])
        owner = args[kind.owner]
        if p is None or getattr(p, kind.owner) != owner:
            return f"{what} {args[product_arg]!r} is not a product of {kind.name} {owner}; see {_info_tool(kind)}"
        if date_arg is not None and p.date != args[date_arg].strip():
            return (
                f"{what} {p.product_id} is for {p.date}, not {args[date_arg]}; each date has its own "
                f"{kind.type_field} ids, see {_info_tool(kind)}"
            )
        return None

    text = f"the {what} must be one of that {kind.name}'s products" + (" for that date" if date_arg else "")
    return rule(text, check, _SEARCH[kind.name] + (_info_tool(kind),))


def _positive_quantity(world: World, history: History, args: dict[str, Any]) -> str | None:
    return None if args["quantity"] >= 1 else f"quantity must be at least 1, got {args['quantity']}"


def _in_stock(kind: Kind, product_arg: str) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        p = world.tables[kind.products].require(args[product_arg])
        if p.quantity is not None and p.quantity < args["quantity"]:
            return f"only {p.quantity} left of {p.product_id} ({getattr(p, kind.type_field)}, {p.date}), {args['quantity']} requested"
        return None

    return rule("enough left in stock for the quantity", check, (_info_tool(kind),))


def _departs_in_future(kind: Kind, product_arg: str) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        place = world.tables[kind.places].require(args[kind.owner])
        p = world.tables[kind.products].require(args[product_arg])
        if _departs(place.departure_time, p.date) < world.clock.now:
            return f"{kind.name} {getattr(place, kind.name_field)} on {p.date} has already departed"
        return None

    return unless_vitabench(rule(f"the {kind.name} must not have departed yet", check))


def _visit_not_past(world: World, history: History, args: dict[str, Any]) -> str | None:
    return _not_before_today(world, args["date"].strip(), "date")


# ----- hotel nights -------------------------------------------------------------------------------
def _nights(world: World, args: dict[str, Any]) -> tuple[str, str]:
    """(check-in, check-out) of a hotel booking: the room's night, and the next day by default."""
    first = world.tables["hotel_rooms"].require(args["room_id"]).date
    out = args.get("check_out_date")
    return first, (out.strip() if out else add_days(first, 1))


def _stay_valid(world: World, history: History, args: dict[str, Any]) -> str | None:
    check_in, check_out = _nights(world, args)
    n = (parse_day(check_out) - parse_day(check_in)).days
    if n < 1:
        return f"check_out_date {check_out} must be after the check-in date {check_in} (the room's date)"
    if n > MAX_NIGHTS:
        return f"a stay is at most {MAX_NIGHTS} nights, {n} requested"
    return _not_before_today(world, check_in, "check-in date")


def _night_products(world: World, args: dict[str, Any]) -> list[str | None]:
    room = world.tables["hotel_rooms"].require(args["room_id"])
    check_in, check_out = _nights(world, args)
    slots = products_by_slot(world, HOTEL)
    n = (parse_day(check_out) - parse_day(check_in)).days
    return [slots.get((room.hotel_id, room.room_type, add_days(check_in, i))) for i in range(n)]


def _rooms_free(world: World, history: History, args: dict[str, Any]) -> str | None:
    room = world.tables["hotel_rooms"].require(args["room_id"])
    check_in, _ = _nights(world, args)
    rooms = world.tables["hotel_rooms"]
    for i, pid in enumerate(_night_products(world, args)):
        night = add_days(check_in, i)
        if pid is None:
            return f"{room.room_type} at hotel {room.hotel_id} is not sold for the night of {night}"
        left = rooms.rows[pid].quantity
        if left is not None and left < 1:
            return f"{room.room_type} at hotel {room.hotel_id} is sold out on the night of {night}"
    return None


# ----- orders -------------------------------------------------------------------------------------
# Each order rule below is a ``..._problem`` of the order already looked up, so a tool's rules in
# one function (``_order_check``) look the order up once; the rule itself looks it up and asks it.
def _kind_problem(kind: Kind, o: Order) -> str | None:
    return None if o.order_type == kind.name else f"order {o.order_id} is a {o.order_type} order, not a {kind.name} order"


def _order_of_kind(kind: Kind) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        # it exists: ``_order_exists`` comes first
        return _kind_problem(kind, world.tables["orders"].rows[args["order_id"]])

    return rule(f"the order must be a {kind.name} order", check)


def _owner_problem(o: Order, user_id: str) -> str | None:
    return None if o.user_id == user_id else f"order {o.order_id} does not belong to user {user_id}"


def _order_belongs(world: World, history: History, args: dict[str, Any]) -> str | None:
    # it exists: ``_order_exists`` comes first
    return _owner_problem(world.tables["orders"].rows[args["order_id"]], args["user_id"])


def _started_problem(kind: Kind, world: World, o: Order) -> str | None:
    """Why the trip of ``o`` can no longer be changed (it has departed or started), or None."""
    products = o.products
    if not products:
        return None
    first = products[0].date if len(products) == 1 else min([x.date for x in products])
    now = world.clock.now
    if kind.name in ("flight", "train"):
        place = world.tables[kind.places].rows.get(o.store_id)
        if place is not None:
            if _departs(place.departure_time, first) < now:
                return f"{kind.name} of order {o.order_id} departed on {first}; it can no longer be changed"
            return None
    if parse_day(first).date() < now.date():
        return f"order {o.order_id} started on {first}; it can no longer be changed"
    return None


def _trip_not_started(kind: Kind) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        # it exists: ``_order_exists`` comes first
        return _started_problem(kind, world, world.tables["orders"].rows[args["order_id"]])

    return unless_vitabench(rule("the trip must not have started yet", check))


def _single_line_problem(o: Order) -> str | None:
    n = len(o.products)
    return None if n == 1 else f"order {o.order_id} has {n} lines; only single-ticket orders can be moved"


def _single_line(world: World, history: History, args: dict[str, Any]) -> str | None:
    # it exists: ``_order_exists`` comes first
    return _single_line_problem(world.tables["orders"].rows[args["order_id"]])


def _new_date_problem(kind: Kind, world: World, o: Order, new_date: str) -> str | None:
    """Why the single line of ``o`` cannot move to ``new_date`` (as given), or None."""
    line = o.products[0]
    new_date = new_date.strip()
    if new_date == line.date:
        return f"order {o.order_id} is already for {new_date}"
    pid = products_by_slot(world, kind).get((o.store_id, line.name, new_date))
    if pid is None:
        return f"{kind.name} {o.store_id} sells no {line.name} seats on {new_date}"
    p = world.tables[kind.products].rows[pid]
    if p.quantity is not None and p.quantity < line.quantity:
        return f"only {p.quantity} {line.name} seats left on {new_date}, {line.quantity} needed"
    place = world.tables[kind.places].rows.get(o.store_id)
    if place is not None and _departs(place.departure_time, new_date) < world.clock.now and not vitabench_release(world):
        return f"the {kind.name} on {new_date} has already departed"
    return None


def _new_date_ok(kind: Kind) -> Any:
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        # it exists: ``_order_exists`` comes first
        return _new_date_problem(kind, world, world.tables["orders"].rows[args["order_id"]], args["new_date"])

    return rule(
        "the same seat class must be on sale on new_date, with enough seats, not departed yet (in VitaBench "
        "tasks it may have departed)",
        check,
        (_info_tool(kind),),
    )


def _search_text(world: World, history: History, args: dict[str, Any]) -> str | None:
    for name in ("city_name", "departure", "destination"):
        if name in args and not str(args[name]).strip():
            return f"{name} must not be empty"
    kws = args.get("key_words")
    if kws is not None and not all(isinstance(k, str) and k.strip() for k in kws):
        return "key_words must be non-empty strings"
    return None


SEARCH_RULE = rule("search texts must not be empty", _search_text)


def place_matches(query: str, text: str, vitabench: bool = False) -> bool:
    """Whether a city name the agent typed names this city or address: a generated task's rule
    (contained, or a close partial match), or with ``vitabench`` VitaBench's ``fuzzy_match`` (a
    partial match of the texts as typed rounding to at least 40, which also lets through many
    places of other cities)."""
    if vitabench:
        return int(round(fuzz.partial_ratio(query, text))) >= VITABENCH_CITY_SCORE
    q, t = query.strip().casefold(), text.strip().casefold()
    if not q or not t:
        return False
    if q in t or t in q:
        return True
    return fuzz.partial_ratio(q, t, processor=utils.default_process) >= CITY_SIMILARITY


def _order_exists(kind: Kind) -> Any:
    return exists("orders", "order_id", "order", _order_sources(kind))


# ----- post-conditions ----------------------------------------------------------------------------
def _post_created(kind: Kind):
    def check(world, args, result, before) -> str | None:
        order = world.tables["orders"].get(result["order_id"])
        if order is None or order.order_id in before.tables["orders"]:
            return "no new order was stored"
        if order.status != "unpaid":
            return f"new order has status {order.status}"
        if abs(order.total_price - _money(sum(x.price * x.quantity for x in order.products))) > 1e-6:
            return "total_price is not the sum of its lines"
        for x in order.products:
            now, then = world.tables[kind.products].get(x.product_id), before.tables[kind.products].get(x.product_id)
            if then is not None and then.quantity is not None and now.quantity != then.quantity - x.quantity:
                return f"stock of {x.product_id} not reduced by {x.quantity}"
        return None

    return Postcondition("a new unpaid order is stored, priced at the sum of its lines, and its stock is taken", check)


def _post_paid(world, args, result, before) -> str | None:
    order = world.tables["orders"].require(args["order_id"])
    if order.status != "paid":
        return f"status is {order.status}"
    return (
        None if abs(net_paid(world, order) - order.total_price) < 1e-6 else "the amount paid is not the order's price"
    )


def _post_cancelled(kind: Kind):
    def check(world, args, result, before) -> str | None:
        order = world.tables["orders"].require(args["order_id"])
        if order.status != "cancelled":
            return f"status is {order.status}"
        for x in order.products:
            now, then = world.tables[kind.products].get(x.product_id), before.tables[kind.products].get(x.product_id)
            if then is not None and then.quantity is not None and now.quantity != then.quantity + x.quantity:
                return f"stock of {x.product_id} not restored"
        if abs(net_paid(world, order)) > 1e-6:
            return "what was paid is not fully refunded"
        return None

    return Postcondition("the order is cancelled, its stock restored and all that was paid refunded", check)


def _post_moved(kind: Kind):
    def check(world, args, result, before) -> str | None:
        old, new = before.tables["orders"].require(args["order_id"]), world.tables["orders"].require(args["order_id"])
        a, b = old.products[0], new.products[0]
        if b.date != args["new_date"].strip() or b.name != a.name or b.quantity != a.quantity:
            return "the line is not the same seat class and quantity on the new date"
        if abs(new.total_price - _money(b.price * b.quantity)) > 1e-6:
            return "total_price is not the new date's price"
        products, then = world.tables[kind.products], before.tables[kind.products]
        for pid, delta in ((a.product_id, a.quantity), (b.product_id, -b.quantity)):
            p, q = products.get(pid), then.get(pid)
            if q is not None and q.quantity is not None and p.quantity != q.quantity + delta:
                return f"stock of {pid} not moved"
        diff = _money(new.total_price - old.total_price)
        expected_status = "unpaid" if diff > 0 else old.status
        if new.status != expected_status:
            return f"status is {new.status}, expected {expected_status}"
        paid_before = net_paid(before, old)
        expected_paid = paid_before if diff > 0 else _money(paid_before + diff)
        return None if abs(net_paid(world, new) - expected_paid) < 1e-6 else "the price difference is not settled"

    return Postcondition(
        "the order holds the same seat class on the new date at its price; a dearer date leaves the difference "
        "due (status unpaid), a cheaper one refunds it",
        check,
    )


# ----- shared implementations ---------------------------------------------------------------------
def _new_order(
    world: LifeWorld, kind: Kind, owner_id: str, picks: list[tuple[str, int]], user_id: str
) -> dict[str, Any]:
    place = world.tables[kind.places].require(owner_id)
    products = world.tables[kind.products]
    lines = []
    for pid, qty in picks:
        p = products.require(pid)
        lines.append(
            OrderLine(
                product_id=pid,
                name=getattr(p, kind.type_field),
                store_id=owner_id,
                store_name=getattr(place, kind.name_field),
                price=p.price,
                quantity=qty,
                date=p.date,
            )
        )
        _adjust(world, kind, pid, -qty)
    now = world.clock.text()
    order = Order(
        order_id=world.new_order_id(kind.order_prefix),
        order_type=kind.name,
        user_id=user_id,
        store_id=owner_id,
        total_price=_money(sum(x.price * x.quantity for x in lines)),
        create_time=now,
        update_time=now,
        status="unpaid",
        products=lines,
    )
    world.tables["orders"].insert(order)
    return order_view(world, order)


def _pay(world: LifeWorld, order_id: str) -> RawJson:
    """Pay what is due on the order; the result's JSON text (``dumps`` of {"order_id", "status",
    "amount_paid", "message"}, written directly)."""
    orders = world.tables["orders"]
    order = orders.require(order_id)
    total = order.total_price
    signed = _signed_amounts(world, order_id)
    if signed:  # ``net_paid``
        paid = round2(sum(signed))
    else:
        paid = total if order.status == "paid" else 0.0
    due = round2(total - paid)  # _money
    if due > 0:
        _entry(world, order, "payment", due, "payment")
    orders.update(order_id, status="paid", update_time=world.clock.text())
    return RawJson(
        f'{{"order_id": {encode_basestring(order_id)}, "status": "paid", "amount_paid": {_num_json(max(due, 0.0))}, '
        '"message": "Payment successful"}'
    )


def _restock(table: Table, lines: list[OrderLine], sign: int) -> None:
    """``_adjust_in(table, line.product_id, sign * line.quantity)`` for each line, in order (the
    rows read afresh each time: the first change of a shared table replaces its row dict)."""
    for x in lines:
        pid = x.product_id
        p = table.rows.get(pid)
        if p is not None:
            q = p.quantity
            if q is not None:
                table.update(pid, quantity=q + sign * x.quantity)


def _cancel(world: LifeWorld, kind: Kind, order_id: str) -> RawJson:
    """Cancel the order, refund what was paid and give its stock back; the result's JSON text
    (``dumps`` of {"order_id", "status", "refund", "message"}, written directly)."""
    orders = world.tables["orders"]
    order = orders.require(order_id)
    signed = _signed_amounts(world, order_id)
    if signed:  # ``_paid_of``
        refund = round2(sum(signed))
    elif order.status == "paid":  # paid before this episode: the opening entry first, of the whole price
        refund = _entry(world, order, "payment", round2(order.total_price), "paid before this conversation")
    else:
        refund = 0.0
    if refund > 0:
        _entry(world, order, "refund", refund, "cancellation")
        message = f"Cancellation successful, refund amount: {refund:g}"
    else:
        refund = 0.0  # ``max(0.0, paid)``
        message = "Cancellation successful, refund amount: 0"
    lines = order.products
    if lines:
        _restock(world.tables[kind.products], lines, 1)
    orders.update(order_id, status="cancelled", update_time=world.clock.text())
    return RawJson(
        f'{{"order_id": {encode_basestring(order_id)}, "status": "cancelled", "refund": {_num_json(refund)}, '
        f'"message": {encode_basestring(message)}}}'
    )


def _move(world: LifeWorld, kind: Kind, order_id: str, new_date: str) -> RawJson:
    """Move the order's single line to ``new_date``; the result's JSON text (an object of the moved
    order's view, the price difference, what is due, what was refunded and a message).

    The ledger is read once (an order paid before this episode gets its opening entry first: a
    payment of its price), each stock row is changed as ``_adjust_in`` changes it, and the
    new line is the old one's copy with the new product, price and date (``_copy_with``)."""
    tables = world.tables
    orders = tables["orders"]
    order = orders.require(order_id)
    line = order.products[0]
    new_date = new_date.strip()
    pid = products_by_slot(world, kind)[(order.store_id, line.name, new_date)]
    products = tables[kind.products]
    price = products.require(pid).price
    status = order.status
    signed = _signed_amounts(world, order_id)
    if status == "paid" and not signed:  # paid before this episode: the opening entry
        signed.append(_entry(world, order, "payment", round2(order.total_price), "paid before this conversation"))
    qty = line.quantity
    _adjust_in(products, line.product_id, qty)
    _adjust_in(products, pid, -qty)
    new_total = round2(price * qty)  # _money
    diff = round2(new_total - order.total_price)  # _money
    due = refund = 0.0  # ``max(diff, 0.0)``, the refund
    if diff > 0:
        status = "unpaid"
        due = diff
        message = f"Modification successful, please pay the additional {diff:g}"
    elif diff < 0:
        if status == "paid":
            refund = -diff
            signed.append(_entry(world, order, "refund", refund, "cheaper new date " + new_date))
        message = f"Modification successful, {refund:g} refunded"
    else:  # 0.0, -0.0 (or nan): ``max(diff, 0.0)`` is ``diff`` itself
        due = diff
        message = "Modification successful, no price difference"
    new_line = _copy_with(line, {"product_id": pid, "price": price, "date": new_date})
    moved = orders.update(
        order_id, products=[new_line], total_price=new_total, status=status, update_time=world.clock.text()
    )
    # ``dumps`` of {"order": order_view(...), "price_difference": ..., "amount_due": ..., "refund":
    # ..., "message": ...}, written directly (``order_json``)
    return RawJson(
        f'{{"order": {order_json(world, moved, _paid_of(moved, signed))}, "price_difference": {_num_json(diff)}, '
        f'"amount_due": {_num_json(due)}, "refund": {_num_json(refund)}, '
        f'"message": {encode_basestring(message)}}}'
    )


def _orders_of(
    world: LifeWorld, kind: Kind, user_id: str, date: str | None, status: str | None
) -> list[dict[str, Any]]:
    out = []
    for o in world.tables["orders"]:
        if o.order_type != kind.name or o.user_id != user_id or (status is not None and o.status != status):
            continue
        if date is not None and not any(x.date == date.strip() for x in o.products):
            continue
        out.append(order_view(world, o))
    return out


def _order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    return order_view(world, world.tables["orders"].require(order_id))
