"""Travel records as the tools show them: a product's and a place's view, an order's view and its JSON
text built directly (``order_json``, byte-identical to ``dumps(order_view(...))``), what an order has
been paid (``net_paid``, from the ``travel_ledger``), and a transport's departure and arrival clocks.
Also the kinds' shared names (``HOTEL`` ... ``TRAIN``, the tool names per kind)."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal, NamedTuple

from servicegym.world_state.core import World, round2
from servicegym.world_state.life.entities import Order
from servicegym.world_state.tools import (
    RawJson,
    dumps,
    json_array,
    json_object_with,
)
from servicegym.world_state.travel.entities import (
    KINDS,
    Kind,
    add_days,
    arrival_at,
    departure_at,
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


_money = round2  # ``round(x + 0.0, 2)``, memoized


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
    return round2(sum(signed))  # _money, of the amounts summed as one sequence


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
    goes through ``_num_json``. What never changes in an order's life (its ids and place name, a
    trip's departure and arrival on a date) is encoded once (``_order_head``, ``_trip_json``)."""
    order_type = order.order_type
    if paid is None:
        paid = net_paid(world, order)
    enc, num, fr = encode_basestring, _num_json, _float_repr
    products = order.products
    type_key = _KIND_JSON[order_type].type_key
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
    due = round2(total - paid) if status == "unpaid" else 0.0  # _money
    text = (
        f'{_order_head(order.order_id, order_type, order.user_id, order.store_id, products[0].store_name if products else "")}'
        f'{fr(total) if type(total) is float and total - total == 0.0 else num(total)}, '
        f'"amount_paid": {fr(paid) if type(paid) is float and paid - paid == 0.0 else num(paid)}, '
        f'"amount_due": {fr(due) if type(due) is float and due - due == 0.0 else num(due)}, '
        f'"create_time": {enc(order.create_time)}, "update_time": {enc(order.update_time)}, '
        f'"status": {enc(status)}, "products": [{", ".join(lines)}]'
    )
    if products:
        if order_type == "flight" or order_type == "train":
            place = world.tables[KINDS[order_type].places].rows.get(order.store_id)
            if place is not None:
                return RawJson(f"{text}{_trip_json(place.departure_time, place.arrival_time, products[0].date)}}}")
        elif order_type == "hotel":
            if len(products) == 1:
                first = last = products[0].date
            else:
                nights = sorted([x.date for x in products])
                first, last = nights[0], nights[-1]
            text += f', "check_in_date": {enc(first)}, "check_out_date": {enc(add_days(last, 1))}'
    return RawJson(text + "}")


@lru_cache(maxsize=4096)
def _order_head(order_id: str, order_type: str, user_id: str, store_id: str, store_name: str) -> str:
    """The JSON of an order view (``order_json``) up to its total price's value: the order's ids,
    its place's and the place's name, which an order keeps for life (kept per order)."""
    frag, enc = _KIND_JSON[order_type], encode_basestring
    return (
        f'{{"order_id": {enc(order_id)}{frag.order_type}{enc(user_id)}{frag.owner}{enc(store_id)}'
        f'{frag.name_field}{enc(store_name)}, "total_price": '
    )


@lru_cache(maxsize=4096)
def _trip_json(departure_time: str, arrival_time: str, date: str) -> str:
    """The departure and arrival fields of a flight or train order's JSON (``order_json``), kept
    per timetable and date like ``_trip_times``."""
    dep, arr = _trip_times(departure_time, arrival_time, date)
    return f', "departure_time": {encode_basestring(dep)}, "arrival_time": {encode_basestring(arr)}'


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
