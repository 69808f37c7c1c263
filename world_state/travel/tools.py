"""The thirty online-travel tools, with VitaBench's names and arguments (thirty-eight with the
eight shared ones).

For each product kind (hotel, attraction, flight, train): info, search, create order, pay,
search orders, order detail and cancel; flights and trains can also move to another date.
The rules VitaBench kept as prose or asserts are code here: pre-conditions (the product
belongs to the place and is sold on that date, dates are real and not in the past, check-out
after check-in, stock on every night, paying only an unpaid order, modifying or cancelling only
after the order's detail was looked up) and post-conditions (stock taken on booking and given
back on cancellation, which VitaBench's public code forgot; prices; refunds).

Money is kept in the ``travel_ledger`` table: paying records a payment, a cheaper new date or a
cancellation records a refund, and a dearer new date leaves the order unpaid for the difference.
A pre-existing paid order has no entries; its first entry is an opening payment of its price.

The tools read only tables and ``world.extra``, never the world's class, so any ``LifeWorld``
holding ``TRAVEL_SCHEMA`` (a cross-scenario world) can run them.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal, NamedTuple, Optional

from rapidfuzz import fuzz, utils

from servicegym.world_state.core import History, Table, World, _copy_with, unvalidated
from servicegym.world_state.life.entities import LifeWorld, Order, OrderLine
from servicegym.world_state.life.tools import (
    RELEASE_KEY,
    SEARCH_CAPS,
    SHARED_TOOLS,
    SearchIndex,
    rank,
    rank_all,
    status_problem,
    status_rule,
    unless_vitabench,
    vitabench_release,
)
from servicegym.world_state.tools import (
    Postcondition,
    RawJson,
    dumps,
    exists,
    field_in,
    field_problem,
    json_array,
    json_object_with,
    no_record,
    requires_prior_call,
    rule,
    tool,
)
from servicegym.world_state.travel.entities import (
    KINDS,
    Kind,
    LedgerEntry,
    add_days,
    arrival_at,
    departure_at,
    parse_day,
    products_by_slot,
    products_of,
)

HOTEL, ATTRACTION, FLIGHT, TRAIN = (KINDS[k] for k in ("hotel", "attraction", "flight", "train"))
CITY_SIMILARITY = 85.0
MAX_NIGHTS = 30
SEARCH_LIMIT = 100  # a generated task's most results of a hotel or attraction search
VITABENCH_CITY_SCORE = 40  # VitaBench's city match (``fuzzy_match``): partial match of the raw texts
TravelStatus = Literal["unpaid", "paid", "cancelled"]
# the statuses a pay, a date change and a cancellation take (the rules and their one-function checks)
_UNPAID, _PAID_ONLY, _CANCELLABLE = ("unpaid",), ("paid",), ("unpaid", "paid")

_SEARCH = {
    "hotel": ("hotel_search_recommend", "get_nearby"),
    "attraction": ("attractions_search_recommend", "get_nearby"),
    "flight": ("flight_search_recommend",),
    "train": ("train_ticket_search",),
}
# a date argument may be a holiday the user named, which only these tools resolve
_DATE_SOURCES = ("get_holiday_date", "get_date_holiday_info")


def _info_tool(kind: Kind) -> str:
    return f"get_ota_{kind.name}_info"


def _detail_tool(kind: Kind) -> str:
    return f"get_{kind.name}_order_detail"


def _order_sources(kind: Kind) -> tuple[str, ...]:
    return (f"create_{kind.name}_order", f"search_{kind.name}_order", "get_user_all_orders")


def _money(x: float) -> float:
    return round(x + 0.0, 2)


# ----- views ----------------------------------------------------------------------------------
def product_view(kind: Kind, p: Any) -> dict[str, Any]:
    """A product as VitaBench shows it: id, type, date, price, stock."""
    return {
        "product_id": p.product_id,
        kind.type_field: getattr(p, kind.type_field),
        "date": p.date,
        "price": p.price,
        "quantity": p.quantity,
    }


def _row_json(world: World, table: str, row: Any, render: Any) -> str:
    """``dumps(render(row))``, kept per world lineage while the row is unchanged (rows are
    immutable: a changed row is a new object, which misses)."""
    cache = world.extra.get("_row_json")
    if cache is None:
        cache = world.extra["_row_json"] = {}
    key = (table, row.key)
    hit = cache.get(key)
    if hit is not None and hit[0] is row:
        return hit[1]
    text = dumps(render(row))
    cache[key] = (row, text)
    return text


def place_json(world: World, kind: Kind, place_id: str) -> RawJson:
    """The JSON text of ``place_view(..., with_products=True)``, assembled from each row's cached
    JSON (the info reads run often, and encoding a place's dozens of products each time costs
    more than the rest of the step)."""
    def build() -> str:
        place = world.tables[kind.places].require(place_id)
        text = _row_json(world, kind.places, place, lambda r: r.model_dump(mode="json"))
        render = lambda p: product_view(kind, p)  # noqa: E731
        products = [_row_json(world, kind.products, p, render) for p in products_of(world, kind, place_id)]
        return json_object_with(text, products=json_array(products))

    # the whole text, kept while neither table changes (a place's info is read again and again)
    return world.cached_text((kind.places, place_id), (kind.places, kind.products), build)  # a RawJson


def place_view(world: World, kind: Kind, place_id: str, with_products: bool) -> dict[str, Any]:
    view = world.tables[kind.places].require(place_id).model_dump(mode="json")
    if with_products:
        view["products"] = [product_view(kind, p) for p in products_of(world, kind, place_id)]
    return view


def _signed_amounts(world: World, order_id: str) -> list[float]:
    """The order's ledger amounts in ledger order, payments positive and refunds negative (one pass
    over the rows)."""
    out: list[float] = []
    for e in world.tables["travel_ledger"].rows.values():
        if e.order_id == order_id:
            out.append(e.amount if e.kind == "payment" else -e.amount)
    return out


def _paid_of(order: Order, signed: list[float]) -> float:
    """``net_paid`` of ``order`` whose ledger amounts are ``signed`` (``_signed_amounts``): a write
    that has just read them, or added to them, does not scan the ledger again."""
    if not signed:
        return order.total_price if order.status == "paid" else 0.0
    return round(sum(signed) + 0.0, 2)  # _money, of the amounts summed as one sequence


def net_paid(world: World, order: Order) -> float:
    """What the user has paid for ``order`` and not been refunded."""
    return _paid_of(order, _signed_amounts(world, order.order_id))


def order_view(world: World, order: Order, paid: float | None = None) -> dict[str, Any]:
    """A travel order in VitaBench's shape, plus what is paid and what is still due (``paid``:
    ``net_paid`` when the caller has it already)."""
    kind = KINDS[order.order_type]
    if paid is None:
        paid = net_paid(world, order)
    view: dict[str, Any] = {
        "order_id": order.order_id,
        "order_type": order.order_type,
        "user_id": order.user_id,
        kind.owner: order.store_id,
        kind.name_field: order.products[0].store_name if order.products else "",
        "total_price": order.total_price,
        "amount_paid": paid,
        "amount_due": _money(order.total_price - paid) if order.status == "unpaid" else 0.0,
        "create_time": order.create_time,
        "update_time": order.update_time,
        "status": order.status,
        "products": [
            {
                "product_id": x.product_id,
                kind.type_field: x.name,
                "date": x.date,
                "price": x.price,
                "quantity": x.quantity,
            }
            for x in order.products
        ],
    }
    place = world.tables[kind.places].rows.get(order.store_id)
    if kind.name in ("flight", "train") and place is not None and order.products:
        view["departure_time"], view["arrival_time"] = _trip_times(
            place.departure_time, place.arrival_time, order.products[0].date)
    if kind.name == "hotel" and order.products:
        nights = sorted(x.date for x in order.products)
        view["check_in_date"], view["check_out_date"] = nights[0], add_days(nights[-1], 1)
    return view


def _num_json(value: Any) -> str:
    """``dumps(value)`` of a number field: a finite float's ``repr`` (what the encoder writes),
    anything else (an int, a non-finite float) by ``dumps`` itself."""
    t = type(value)
    if t is float:
        if value - value == 0.0:  # finite (inf - inf and nan - nan are nan)
            return float.__repr__(value)
    elif t is int:
        return int.__repr__(value)
    return dumps(value)


class _KindJson(NamedTuple):
    """The fixed pieces of a kind's order JSON (``order_json``), encoded once."""

    order_type: str  # ', "order_type": "flight", "user_id": '
    owner: str  # ', "flight_id": '
    name_field: str  # ', "flight_number": '
    type_key: str  # ', "seat_type": '


_KIND_JSON = {
    k.name: _KindJson(
        f', "order_type": {encode_basestring(k.name)}, "user_id": ',
        f", {encode_basestring(k.owner)}: ",
        f", {encode_basestring(k.name_field)}: ",
        f", {encode_basestring(k.type_field)}: ",
    )
    for k in KINDS.values()
}
_float_repr, _int_repr = float.__repr__, int.__repr__


def order_json(world: World, order: Order, paid: float | None = None) -> RawJson:
    """``dumps(order_view(world, order, paid))``, written directly: the keys are fixed per kind
    (encoded once, ``_KIND_JSON``) and the values are the row's own strings and numbers, so the
    text is built without a dict of the view or the encoder's walk of it (a date change shows the
    moved order). String fields are strings (the rows are validated, or made from validated
    values), encoded as the encoder encodes them; a finite float is its ``repr``, any other number
    goes through ``_num_json``."""
    order_type = order.order_type
    kind = KINDS[order_type]
    if paid is None:
        paid = net_paid(world, order)
    enc, num, fr = encode_basestring, _num_json, _float_repr
    frag = _KIND_JSON[order_type]
    products = order.products
    type_key = frag.type_key
    lines = []
    for x in products:
        price, q = x.price, x.quantity
        lines.append(
            f'{{"product_id": {enc(x.product_id)}{type_key}{enc(x.name)}, "date": {enc(x.date)}, '
            f'"price": {fr(price) if type(price) is float and price - price == 0.0 else num(price)}, '
            f'"quantity": {_int_repr(q) if type(q) is int else num(q)}}}'
        )
    total = order.total_price
    status = order.status
    due = round(total - paid + 0.0, 2) if status == "unpaid" else 0.0  # _money
    text = (
        f'{{"order_id": {enc(order.order_id)}{frag.order_type}{enc(order.user_id)}{frag.owner}{enc(order.store_id)}'
        f'{frag.name_field}{enc(products[0].store_name if products else "")}, '
        f'"total_price": {fr(total) if type(total) is float and total - total == 0.0 else num(total)}, '
        f'"amount_paid": {fr(paid) if type(paid) is float and paid - paid == 0.0 else num(paid)}, '
        f'"amount_due": {fr(due) if type(due) is float and due - due == 0.0 else num(due)}, '
        f'"create_time": {enc(order.create_time)}, "update_time": {enc(order.update_time)}, '
        f'"status": {enc(status)}, "products": [{", ".join(lines)}]'
    )
    if products:
        if order_type == "flight" or order_type == "train":
            place = world.tables[kind.places].rows.get(order.store_id)
            if place is not None:
                dep, arr = _trip_times(place.departure_time, place.arrival_time, products[0].date)
                text += f', "departure_time": {enc(dep)}, "arrival_time": {enc(arr)}'
        elif order_type == "hotel":
            if len(products) == 1:
                first = last = products[0].date
            else:
                nights = sorted([x.date for x in products])
                first, last = nights[0], nights[-1]
            text += f', "check_in_date": {enc(first)}, "check_out_date": {enc(add_days(last, 1))}'
    return RawJson(text + "}")


class _Timetable(NamedTuple):
    departure_time: str
    arrival_time: str


@lru_cache(maxsize=4096)
def _trip_times(departure_time: str, arrival_time: str, date: str) -> tuple[str, str]:
    """The departure and arrival of a flight or train leaving on ``date`` as an order shows them
    (``departure_at``/``arrival_at`` formatted), kept per timetable and date: order views show
    them on every write and detail read."""
    slot = _Timetable(departure_time, arrival_time)
    return departure_at(slot, date).strftime("%Y-%m-%d %H:%M"), arrival_at(slot, date).strftime("%Y-%m-%d %H:%M")


@lru_cache(maxsize=4096)
def _departs(departure_time: str, date: str) -> datetime:
    """``departure_at`` of a flight or train leaving at ``departure_time`` on ``date``, kept per
    time and date (the write pre-conditions ask it on every booking, move and cancellation)."""
    return departure_at(_Timetable(departure_time, ""), date)


# ----- ledger and stock -------------------------------------------------------------------------
_LEDGER_FIELDS = frozenset(LedgerEntry.model_fields)


def _entry(world: World, order: Order, kind: Literal["payment", "refund"], amount: float, reason: str) -> float:
    """Record a payment or refund of ``order``; its signed amount (``_signed_amounts``' term)."""
    entry_id = world.ids.next(f"{world.extra.get('task_key', 'T')}LG", width=3)
    amount = round(amount + 0.0, 2)  # _money: a float
    if (kind == "payment" or kind == "refund") and type(reason) is str:
        # every value already has its field's type: the entry ``LedgerEntry(...)`` makes, unvalidated
        row = unvalidated(LedgerEntry, {"entry_id": entry_id, "order_id": order.order_id, "kind": kind, "amount": amount,
                                        "reason": reason, "time": world.clock.text()}, set(_LEDGER_FIELDS))
    else:
        row = LedgerEntry(entry_id=entry_id, order_id=order.order_id, kind=kind, amount=amount, reason=reason,
                          time=world.clock.text())
    world.tables["travel_ledger"].insert(row)
    return amount if kind == "payment" else -amount


def _open_ledger(world: World, order: Order, signed: list[float] | None = None) -> list[float]:
    """Before the first money movement of an order paid before this episode, record that payment.
    The order's signed ledger amounts after it (``signed``: before it, when the caller has them)."""
    if signed is None:
        signed = _signed_amounts(world, order.order_id)
    if order.status == "paid" and not signed:
        signed.append(_entry(world, order, "payment", order.total_price, "paid before this conversation"))
    return signed


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


def _date_problem(text: str, what: str) -> str | None:
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
    first = products[0].date if len(products) == 1 else min(x.date for x in products)
    place = world.tables[kind.places].rows.get(o.store_id)
    if kind.name in ("flight", "train") and place is not None:
        if _departs(place.departure_time, first) < world.clock.now:
            return f"{kind.name} of order {o.order_id} departed on {first}; it can no longer be changed"
        return None
    if parse_day(first).date() < world.clock.now.date():
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
        paid = round(sum(signed) + 0.0, 2)
    else:
        paid = total if order.status == "paid" else 0.0
    due = round(total - paid + 0.0, 2)  # _money
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
    if signed:  # ``_paid_of`` after ``_open_ledger``
        paid = round(sum(signed) + 0.0, 2)
    elif order.status == "paid":  # paid before this episode: the opening entry first
        signed.append(_entry(world, order, "payment", order.total_price, "paid before this conversation"))
        paid = round(sum(signed) + 0.0, 2)
    else:
        paid = 0.0
    refund = max(0.0, paid)
    if refund > 0:
        _entry(world, order, "refund", refund, "cancellation")
    _restock(world.tables[kind.products], order.products, 1)
    orders.update(order_id, status="cancelled", update_time=world.clock.text())
    return RawJson(
        f'{{"order_id": {encode_basestring(order_id)}, "status": "cancelled", "refund": {_num_json(refund)}, '
        f'"message": {encode_basestring(f"Cancellation successful, refund amount: {refund:g}")}}}'
    )


def _move(world: LifeWorld, kind: Kind, order_id: str, new_date: str) -> RawJson:
    """Move the order's single line to ``new_date``; the result's JSON text (an object of the moved
    order's view, the price difference, what is due, what was refunded and a message)."""
    orders = world.tables["orders"]
    order = orders.require(order_id)
    line = order.products[0]
    new_date = new_date.strip()
    pid = products_by_slot(world, kind)[(order.store_id, line.name, new_date)]
    products = world.tables[kind.products]
    p = products.require(pid)
    signed = _open_ledger(world, order)
    qty = line.quantity
    _adjust_in(products, line.product_id, qty)
    _adjust_in(products, pid, -qty)
    price = p.price
    new_total = round(price * qty + 0.0, 2)  # _money
    diff = round(new_total - order.total_price + 0.0, 2)  # _money
    refund = 0.0
    status = order.status
    if diff < 0 and status == "paid":
        refund = -diff
        signed.append(_entry(world, order, "refund", refund, f"cheaper new date {new_date}"))
    if diff > 0:
        status = "unpaid"
        message = f"Modification successful, please pay the additional {diff:g}"
    elif diff < 0:
        message = f"Modification successful, {refund:g} refunded"
    else:
        message = "Modification successful, no price difference"
    moved = orders.update(
        order_id,
        products=[_copy_with(line, {"product_id": pid, "price": price, "date": new_date})],
        total_price=new_total,
        status=status,
        update_time=world.clock.text(),
    )
    # ``dumps`` of {"order": order_view(...), "price_difference": ..., "amount_due": ..., "refund":
    # ..., "message": ...}, written directly (``order_json``)
    return RawJson(
        f'{{"order": {order_json(world, moved, _paid_of(moved, signed))}, "price_difference": {_num_json(diff)}, '
        f'"amount_due": {_num_json(max(diff, 0.0))}, "refund": {_num_json(refund)}, '
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


# ----- info ---------------------------------------------------------------------------------------
@tool(kind="read", pre=[exists("hotels", "hotel_id", "hotel", _SEARCH["hotel"])])
def get_ota_hotel_info(world: LifeWorld, hotel_id: str) -> dict[str, Any]:
    """Details of a hotel: id, name, rating, star level, address and coordinates, tags, and its rooms (one product per room type and night, with price and rooms left).

    Args:
        hotel_id: The hotel's id.
    """
    return place_json(world, HOTEL, hotel_id)


@tool(kind="read", pre=[exists("attractions", "attraction_id", "attraction", _SEARCH["attraction"])])
def get_ota_attraction_info(world: LifeWorld, attraction_id: str) -> dict[str, Any]:
    """Details of an attraction: id, name, address, description, rating, opening hours, default ticket price, and its tickets (one product per ticket type and day; a day without tickets is a day it is closed).

    Args:
        attraction_id: The attraction's id.
    """
    return place_json(world, ATTRACTION, attraction_id)


@tool(kind="read", pre=[exists("flights", "flight_id", "flight", _SEARCH["flight"])])
def get_ota_flight_info(world: LifeWorld, flight_id: str) -> dict[str, Any]:
    """Details of a flight: number, cities, airports, departure and arrival times (an arrival earlier than the departure is the next day), tags, and its seats (one product per seat class and date).

    Args:
        flight_id: The flight's id.
    """
    return place_json(world, FLIGHT, flight_id)


@tool(kind="read", pre=[exists("trains", "train_id", "train", _SEARCH["train"])])
def get_ota_train_info(world: LifeWorld, train_id: str) -> dict[str, Any]:
    """Details of a train: number, cities, stations, departure and arrival times (an arrival earlier than the departure is the next day), tags, and its seats (one product per seat class and date).

    Args:
        train_id: The train's id.
    """
    return place_json(world, TRAIN, train_id)


# ----- search -------------------------------------------------------------------------------------
def _ranked_places(
    world: LifeWorld, kind: Kind, city: str, key_words: list[str] | None, text, vitabench_text
) -> list[dict[str, Any]]:
    """The places of a city ranked by keywords: a generated task's ``rank`` (no threshold, 100 at
    most), or in a VitaBench task VitaBench's (its city match, then ``rank_all`` of the keywords
    joined into one text over its search texts, the release's cap at most)."""
    release = vitabench_release(world)
    places = [p for p in world.tables[kind.places] if place_matches(city, p.location.address, release is not None)]
    limit = SEARCH_LIMIT if release is None else SEARCH_CAPS[release]["ota"]
    if release is not None:
        docs = {p.key: vitabench_text(p) for p in places}
        hits: list[tuple[str, float | None]] = list(rank_all("".join(key_words or []), SearchIndex(docs), limit))
    elif key_words:
        hits = list(rank(key_words, {p.key: text(p) for p in places}, limit, threshold=0.0))
    else:
        hits = [(p.key, None) for p in places[:limit]]
    out = []
    for pid, score in hits:
        view = place_view(world, kind, pid, with_products=False)
        if score is not None:
            view["relevance"] = score
        out.append(view)
    return out


@tool(kind="read", pre=[SEARCH_RULE], aliases=["hotel_search_recommand"])
def hotel_search_recommend(
    world: LifeWorld, city_name: str, key_words: Optional[list[str]] = None
) -> list[dict[str, Any]]:
    """Hotels in a city, most relevant to the keywords first: id, name, rating, star level, address, tags (rooms and prices come from get_ota_hotel_info). VitaBench spells this tool hotel_search_recommand; both names work. In tasks from VitaBench files, as in VitaBench, the city is matched loosely against each hotel's address (hotels of other cities may come back too), every matching hotel is ranked by how well the keywords (joined into one text) match its name and tags, up to 50 (100 in the 2025-11 release); in generated tasks up to 100 hotels of the city.

    Args:
        city_name: The city.
        key_words: Keywords matched against hotel names and tags.
    """
    return _ranked_places(world, HOTEL, city_name, key_words, lambda h: f"{h.hotel_name} {' '.join(h.tags)}",
                          lambda h: h.hotel_name + ",".join(h.tags))


@tool(kind="read", pre=[SEARCH_RULE], aliases=["attractions_search_recommand", "attraction_search_recommend"])
def attractions_search_recommend(world: LifeWorld, city_name: str, key_words: list[str]) -> list[dict[str, Any]]:
    """Attractions in a city, most relevant to the keywords first: id, name, address, description, rating, opening hours (tickets come from get_ota_attraction_info). In tasks from VitaBench files, as in VitaBench, the city is matched loosely against each attraction's address (attractions of other cities may come back too), every matching attraction is ranked by how well the keywords (joined into one text) match its name, description and address, up to 50 (100 in the 2025-11 release); in generated tasks up to 100 attractions of the city.

    Args:
        city_name: The city.
        key_words: Keywords matched against names, descriptions and addresses.
    """
    return _ranked_places(
        world, ATTRACTION, city_name, key_words, lambda a: f"{a.attraction_name} {a.description} {a.location.address}",
        lambda a: f"{a.attraction_name},{a.description},{a.location.address}",
    )


def _route(world: LifeWorld, kind: Kind, departure: str, destination: str, date: str | None) -> list[dict[str, Any]]:
    """Flights or trains between two cities (on a date): by departure time, or in a VitaBench
    task as VitaBench finds them (its loose city match, catalogue order, each once)."""
    vitabench = vitabench_release(world) is not None
    found = []
    for t in world.tables[kind.places]:
        if not (place_matches(departure, t.departure_city, vitabench)
                and place_matches(destination, t.arrival_city, vitabench)):
            continue
        if date is not None and not any(p.date == date.strip() for p in products_of(world, kind, t.key)):
            continue
        found.append(t)
    if not vitabench:
        found.sort(key=lambda t: (t.departure_time, t.key))
    return [t.model_dump(mode="json") for t in found]


@tool(kind="read", pre=[SEARCH_RULE], aliases=["flight_search_recommand"])
def flight_search_recommend(world: LifeWorld, departure: str, destination: str) -> list[dict[str, Any]]:
    """Flights from one city to another, by departure time: id, number, airports, departure and arrival times, tags (seats, dates and prices come from get_ota_flight_info). In tasks from VitaBench files, as in VitaBench, cities are matched loosely (flights of other cities may come back too) and flights come in catalogue order.

    Args:
        departure: The departure city.
        destination: The destination city.
    """
    return _route(world, FLIGHT, departure, destination, None)


@tool(kind="read", pre=[SEARCH_RULE, _date_rule("date")])
def train_ticket_search(world: LifeWorld, departure: str, destination: str, date: str) -> list[dict[str, Any]]:
    """Trains from one city to another that run on a date, by departure time: id, number, stations, departure and arrival times, tags (seats and prices come from get_ota_train_info). In tasks from VitaBench files, as in VitaBench, cities are matched loosely (trains of other cities may come back too) and trains come in catalogue order.

    Args:
        departure: The departure city.
        destination: The destination city.
        date: The travel date, YYYY-MM-DD.
    """
    return _route(world, TRAIN, departure, destination, date)


# ----- create -------------------------------------------------------------------------------------
@tool(
    kind="write",
    pre=[
        USER_RULE,
        exists("hotels", "hotel_id", "hotel", _SEARCH["hotel"]),
        _product_rule(HOTEL, "room_id", None),
        _date_rule("check_out_date", optional=True),
        rule(
            "check-out is after check-in (the room's night) and check-in is not in the past (in VitaBench tasks "
            "it may be)",
            _stay_valid,
            (_info_tool(HOTEL),) + _DATE_SOURCES,
        ),
        rule("that room type is sold, and not sold out, on every night of the stay", _rooms_free, (_info_tool(HOTEL),)),
    ],
    post=[_post_created(HOTEL)],
)
def create_hotel_order(
    world: LifeWorld, hotel_id: str, room_id: str, user_id: str, check_out_date: Optional[str] = None
) -> dict[str, Any]:
    """Book one room of a hotel; the room product's night is the check-in date, and the same room type is booked for every night until check-out. A check-in date in the past is refused in generated tasks, accepted in tasks from VitaBench files (as VitaBench does). The order starts unpaid: confirm with the user, then pay it.

    Args:
        hotel_id: The hotel's id.
        room_id: The room product id of the first night (from get_ota_hotel_info).
        user_id: The user's id.
        check_out_date: Check-out date, YYYY-MM-DD; default the day after check-in (one night).
    """
    args = {"room_id": room_id, "check_out_date": check_out_date}
    picks = [(pid, 1) for pid in _night_products(world, args)]
    return _new_order(world, HOTEL, hotel_id, picks, user_id)  # type: ignore[arg-type]


@tool(
    kind="write",
    pre=[
        USER_RULE,
        exists("attractions", "attraction_id", "attraction", _SEARCH["attraction"]),
        _date_rule("date"),
        _product_rule(ATTRACTION, "ticket_id", "date"),
        rule("quantity is at least 1", _positive_quantity),
        rule("the visit date is not in the past (not checked in VitaBench tasks)", _visit_not_past),
        _in_stock(ATTRACTION, "ticket_id"),
    ],
    post=[_post_created(ATTRACTION)],
)
def create_attraction_order(
    world: LifeWorld, attraction_id: str, ticket_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy tickets of an attraction for one day (a past day is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        attraction_id: The attraction's id.
        ticket_id: The ticket product id for that day (from get_ota_attraction_info).
        user_id: The user's id.
        date: The visit date, YYYY-MM-DD.
        quantity: Number of tickets.
    """
    return _new_order(world, ATTRACTION, attraction_id, [(ticket_id, quantity)], user_id)


def _transport_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        exists(kind.places, kind.owner, kind.name, _SEARCH[kind.name]),
        _date_rule("date"),
        _product_rule(kind, "seat_id", "date"),
        rule("quantity is at least 1", _positive_quantity),
        _departs_in_future(kind, "seat_id"),
        _in_stock(kind, "seat_id"),
    ]


@tool(kind="write", pre=_transport_pre(FLIGHT), post=[_post_created(FLIGHT)])
def create_flight_order(
    world: LifeWorld, flight_id: str, seat_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy seats of one class on a flight for one date (one already departed is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        flight_id: The flight's id.
        seat_id: The seat product id for that date and class (from get_ota_flight_info).
        user_id: The user's id.
        date: The departure date, YYYY-MM-DD.
        quantity: Number of seats (one per traveller).
    """
    return _new_order(world, FLIGHT, flight_id, [(seat_id, quantity)], user_id)


@tool(kind="write", pre=_transport_pre(TRAIN), post=[_post_created(TRAIN)])
def create_train_order(
    world: LifeWorld, train_id: str, seat_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy seats of one class on a train for one date (one already departed is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        train_id: The train's id.
        seat_id: The seat product id for that date and class (from get_ota_train_info).
        user_id: The user's id.
        date: The departure date, YYYY-MM-DD.
        quantity: Number of seats (one per traveller).
    """
    return _new_order(world, TRAIN, train_id, [(seat_id, quantity)], user_id)


# ----- pay ----------------------------------------------------------------------------------------
def _pay_pre(kind: Kind) -> list[Any]:
    unpaid = field_in("orders", "order_id", "order", ["unpaid"])
    # a dearer new date makes a paid order unpaid again, for the difference
    unpaid = rule(unpaid.text, unpaid.check, (f"modify_{kind.name}_order",) if kind.name in ("flight", "train") else ())
    return [_order_exists(kind), _order_of_kind(kind), unpaid]


def _pay_check(kind: Kind) -> Any:
    """``_pay_pre(kind)`` in one function (``tool(check=...)``): the order looked up once."""

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        oid = args.get("order_id")
        o = world.tables["orders"].rows.get(oid)
        if o is None:
            return no_record("order", oid)
        return _kind_problem(kind, o) or field_problem(o, "order", _UNPAID)

    return check


_PAID = Postcondition("the order is paid in full", _post_paid)


@tool(kind="write", pre=_pay_pre(HOTEL), post=[_PAID], check=_pay_check(HOTEL))
def pay_hotel_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid hotel order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(ATTRACTION), post=[_PAID], check=_pay_check(ATTRACTION))
def pay_attraction_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid attraction ticket order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(FLIGHT), post=[_PAID], check=_pay_check(FLIGHT))
def pay_flight_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid flight order (or the price difference still due after a date change) once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(TRAIN), post=[_PAID], check=_pay_check(TRAIN))
def pay_train_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid train order (or the price difference still due after a date change) once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


# ----- search orders ------------------------------------------------------------------------------
_SEARCH_ORDERS_PRE = [USER_RULE, _date_rule("date", optional=True)]


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_hotel_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's hotel orders with a given status (default paid; null for any), optionally only those with a night on a date.

    Args:
        user_id: The user's id.
        date: Only orders with a night on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, HOTEL, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_attraction_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's attraction ticket orders with a given status (default paid; null for any), optionally only those for a date.

    Args:
        user_id: The user's id.
        date: Only orders for this visit date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, ATTRACTION, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_flight_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's flight orders with a given status (default paid; null for any), optionally only those departing on a date.

    Args:
        user_id: The user's id.
        date: Only orders departing on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, FLIGHT, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_train_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's train orders with a given status (default paid; null for any), optionally only those departing on a date.

    Args:
        user_id: The user's id.
        date: Only orders departing on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, TRAIN, user_id, date, status)


# ----- order detail -------------------------------------------------------------------------------
@tool(kind="read", pre=[_order_exists(HOTEL), _order_of_kind(HOTEL)])
def get_hotel_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a hotel order: hotel, nights (room type, date, price), check-in and check-out, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(ATTRACTION), _order_of_kind(ATTRACTION)])
def get_attraction_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of an attraction ticket order: attraction, ticket type, date, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(FLIGHT), _order_of_kind(FLIGHT)])
def get_flight_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a flight order: flight, seat class, date, departure and arrival, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(TRAIN), _order_of_kind(TRAIN)])
def get_train_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a train order: train, seat class, date, departure and arrival, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


# ----- modify -------------------------------------------------------------------------------------
def _modify_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        _order_exists(kind),
        _order_of_kind(kind),
        rule("the order must belong to the user", _order_belongs),
        requires_prior_call(_detail_tool(kind), "order_id", "order"),
        field_in("orders", "order_id", "order", ["paid"]),
        rule("the order must hold a single ticket line", _single_line),
        _trip_not_started(kind),
        _date_rule("new_date"),
        _new_date_ok(kind),
    ]


def _modify_check(kind: Kind) -> Any:
    """``_modify_pre(kind)`` in one function (``tool(check=...)``): the order looked up once, each
    record (the order, its place, the new date's product) read once, and a rule's message made
    only when it fails (the same first problem, the same message, as the rules one by one)."""
    prior = requires_prior_call(_detail_tool(kind), "order_id", "order").check
    detail, name, places, products = _detail_tool(kind), kind.name, kind.places, kind.products

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        problem = _user_is_current(world, history, args)
        if problem:
            return problem
        oid = args.get("order_id")
        tables = world.tables
        o = tables["orders"].rows.get(oid)
        if o is None:
            return no_record("order", oid)
        if o.order_type != name:
            return _kind_problem(kind, o)
        if o.user_id != args["user_id"]:
            return _owner_problem(o, args["user_id"])
        if not history.called(detail, oid):
            return prior(world, history, args)
        if o.status != "paid":
            return field_problem(o, "order", _PAID_ONLY)
        lines = o.products
        if len(lines) != 1:
            return _single_line_problem(o)
        release = world.extra.get(RELEASE_KEY)  # vitabench_release
        now = world.clock.now
        line = lines[0]
        place = tables[places].rows.get(o.store_id)
        if not release:  # ``_started_problem`` of a single line
            if place is not None:
                if _departs(place.departure_time, line.date) < now:
                    return _started_problem(kind, world, o)
            elif parse_day(line.date).date() < now.date():
                return _started_problem(kind, world, o)
        new_date = args.get("new_date")
        problem = _date_problem(new_date, "new_date")
        if problem:
            return problem
        # ``_new_date_problem``
        day = new_date.strip()
        pid = None if day == line.date else products_by_slot(world, kind).get((o.store_id, line.name, day))
        if pid is None:
            return _new_date_problem(kind, world, o, new_date)
        p = tables[products].rows[pid]
        if p.quantity is not None and p.quantity < line.quantity:
            return _new_date_problem(kind, world, o, new_date)
        if place is not None and not release and _departs(place.departure_time, day) < now:
            return _new_date_problem(kind, world, o, new_date)
        return None

    return check


@tool(kind="write", pre=_modify_pre(TRAIN), post=[_post_moved(TRAIN)], check=_modify_check(TRAIN))
def modify_train_order(world: LifeWorld, order_id: str, user_id: str, new_date: str) -> RawJson:
    """Move a paid train order to another departure date, same train and seat class. In generated tasks neither the old nor the new departure may be past; tasks from VitaBench files, as VitaBench, do not check that. A dearer date leaves the difference due (the order becomes unpaid: ask the user to pay it); a cheaper one refunds the difference.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new departure date, YYYY-MM-DD.
    """
    return _move(world, TRAIN, order_id, new_date)


@tool(kind="write", pre=_modify_pre(FLIGHT), post=[_post_moved(FLIGHT)], check=_modify_check(FLIGHT))
def modify_flight_order(world: LifeWorld, order_id: str, user_id: str, new_date: str) -> RawJson:
    """Move a paid flight order to another departure date, same flight and seat class. In generated tasks neither the old nor the new departure may be past; tasks from VitaBench files, as VitaBench, do not check that. A dearer date leaves the difference due (the order becomes unpaid: ask the user to pay it); a cheaper one refunds the difference.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new departure date, YYYY-MM-DD.
    """
    return _move(world, FLIGHT, order_id, new_date)


# ----- cancel -------------------------------------------------------------------------------------
def _cancel_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        _order_exists(kind),
        _order_of_kind(kind),
        rule("the order must belong to the user", _order_belongs),
        requires_prior_call(_detail_tool(kind), "order_id", "order"),
        status_rule("orders", "order_id", "order", _CANCELLABLE),
        _trip_not_started(kind),
    ]


def _cancel_check(kind: Kind) -> Any:
    """``_cancel_pre(kind)`` in one function (``tool(check=...)``): the order looked up once."""
    prior = requires_prior_call(_detail_tool(kind), "order_id", "order").check

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        problem = _user_is_current(world, history, args)
        if problem:
            return problem
        oid = args.get("order_id")
        o = world.tables["orders"].rows.get(oid)
        if o is None:
            return no_record("order", oid)
        release = vitabench_release(world)
        return (
            _kind_problem(kind, o) or _owner_problem(o, args["user_id"]) or prior(world, history, args)
            or status_problem(world, o, "order", _CANCELLABLE)
            or (None if release else _started_problem(kind, world, o))
        )

    return check


@tool(kind="write", pre=_cancel_pre(HOTEL), post=[_post_cancelled(HOTEL)], check=_cancel_check(HOTEL))
def cancel_hotel_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a hotel order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, HOTEL, order_id)


@tool(kind="write", pre=_cancel_pre(ATTRACTION), post=[_post_cancelled(ATTRACTION)], check=_cancel_check(ATTRACTION))
def cancel_attraction_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel an attraction ticket order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, ATTRACTION, order_id)


@tool(kind="write", pre=_cancel_pre(FLIGHT), post=[_post_cancelled(FLIGHT)], check=_cancel_check(FLIGHT))
def cancel_flight_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a flight order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, FLIGHT, order_id)


@tool(kind="write", pre=_cancel_pre(TRAIN), post=[_post_cancelled(TRAIN)], check=_cancel_check(TRAIN))
def cancel_train_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a train order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, TRAIN, order_id)


TRAVEL_TOOLS = [
    get_ota_hotel_info,
    get_ota_attraction_info,
    get_ota_flight_info,
    get_ota_train_info,
    hotel_search_recommend,
    attractions_search_recommend,
    flight_search_recommend,
    train_ticket_search,
    create_hotel_order,
    create_attraction_order,
    create_flight_order,
    create_train_order,
    pay_hotel_order,
    pay_attraction_order,
    pay_flight_order,
    pay_train_order,
    search_hotel_order,
    search_attraction_order,
    search_flight_order,
    search_train_order,
    get_hotel_order_detail,
    get_attraction_order_detail,
    get_flight_order_detail,
    get_train_order_detail,
    modify_train_order,
    modify_flight_order,
    cancel_hotel_order,
    cancel_attraction_order,
    cancel_flight_order,
    cancel_train_order,
]
TOOLS = SHARED_TOOLS + TRAVEL_TOOLS
