"""The twelve delivery tools, with VitaBench's names and arguments.

Pre-conditions VitaBench kept as prose are code here: for instance ``modify_delivery_order``
needs ``get_delivery_order_detail`` of that order earlier in the episode and a status that allows
a change, and ``cancel_delivery_order`` needs the order's status to have been looked up.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Optional

from servicegym.world_state.core import History, haversine_m, parse_time, time_hhmm
from servicegym.world_state.delivery.entities import (
    DeliveryWorld,
    Product,
    product_search_text,
    store_search_text,
    vitabench_product_text,
    vitabench_store_text,
)
from servicegym.world_state.life.entities import Order, OrderLine, OrderStatus
from servicegym.world_state.life.tools import (
    SHARED_TOOLS,
    geocode,
    order_check,
    search_hits,
    search_index,
    status_rule,
    top_k_problem,
    vitabench_release,
)
from servicegym.world_state.tools import (
    Postcondition,
    RawJson,
    ToolError,
    exists,
    field_in,
    json_array,
    json_object_with,
    requires_prior_call,
    rule,
    time_not_past,
    tool,
)

SEARCH_TOOLS = ("delivery_store_search_recommend", "delivery_product_search_recommend")
ORDER_SOURCES = ("create_delivery_order", "search_delivery_orders", "get_user_all_orders")
CANCELLABLE = ("unpaid", "paid", "processed", "in-progress")
MODIFIABLE = ("unpaid", "paid", "processed", "in-progress")


def delivery_minutes(distance_m: float) -> float:
    """VitaBench's delivery-time model: round(25 + metres x 0.006510) minutes."""
    return float(round(25.0 + int(distance_m) * 0.006510))


def _user_matches(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    return None if args.get("user_id") == world.user_id else f"user_id {args.get('user_id')!r} is not this user's id"


def _delivery_problem(order: Order) -> str | None:
    """Why ``order`` is not for the delivery tools (another domain's order), or None."""
    if order.order_type != "delivery":
        return f"order {order.order_id} is a {order.order_type} order, not a delivery order"
    return None


def _is_delivery_order(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    order = world.tables["orders"].rows.get(args.get("order_id"))
    return None if order is None else _delivery_problem(order)




def _products_in_store(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    products = world.tables["products"]
    for pid in args["product_ids"]:
        p = products.get(pid)
        if p is None:
            return f"product {pid!r} does not exist"
        if p.seller != args["store_id"]:
            if p.listed_by:
                return f"product {pid} is on the menu of store {p.seller}, not {args['store_id']}"
            return f"product {pid} belongs to store {p.store_id}, not {args['store_id']}"
    return None


def _counts_valid(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    ids, cnts = args["product_ids"], args["product_cnts"]
    if not ids:
        return "product_ids must name at least one product"
    if len(ids) != len(cnts):
        return f"product_cnts has {len(cnts)} entries for {len(ids)} product_ids"
    if any(c <= 0 for c in cnts):
        return "every entry of product_cnts must be a positive integer"
    attrs = args.get("attributes")
    # VitaBench ignores attributes beyond the products; a generated task refuses them
    if attrs is not None and len(attrs) > len(ids) and not vitabench_release(world):
        return f"attributes has {len(attrs)} entries for {len(ids)} products"
    return None


def _store_open(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    store = world.tables["stores"].rows.get(args["store_id"])
    try:
        hhmm = time_hhmm(args["dispatch_time"])
    except ValueError:
        return None  # reported by the dispatch-time rule
    if store is not None and not store.is_open_at(hhmm):
        return f"store {store.store_id} is closed at {hhmm} (open {store.open_time}-{store.close_time})"
    return None


def _in_stock(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    need: dict[str, int] = {}
    for pid, cnt in zip(args["product_ids"], args["product_cnts"]):
        need[pid] = need.get(pid, 0) + cnt
    for pid, cnt in need.items():
        p = world.tables["products"].rows.get(pid)
        if p is not None and p.quantity is not None and p.quantity < cnt:
            return f"only {p.quantity} of product {pid} left, {cnt} requested"
    return None


def _address_known(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    try:
        geocode(world, args["address"])
    except ToolError as err:
        return str(err)
    return None


def _adjust_stock(world: DeliveryWorld, lines: list[OrderLine], sign: int) -> None:
    products = world.tables["products"]
    for line in lines:
        p = products.rows.get(line.product_id)
        if p is not None and p.quantity is not None:
            products.update(p.product_id, quantity=p.quantity + sign * line.quantity)


def _post_created(world, args, result, before) -> str | None:
    order = world.tables["orders"].get(result.order_id)
    if order is None or order.order_id in before.tables["orders"]:
        return "no new order was stored"
    if order.status != "unpaid":
        return f"new order has status {order.status}"
    expected = round(sum(line.price * line.quantity for line in order.products), 2)
    if abs(order.total_price - expected) > 1e-6:
        return f"total_price {order.total_price} != {expected}"
    due = parse_time(order.dispatch_time) + timedelta(minutes=order.shipping_time or 0)
    if parse_time(order.delivery_time) != due:
        return "delivery_time is not dispatch_time + shipping_time"
    return None


def _post_status(status: str):
    def check(world, args, result, before) -> str | None:
        order = world.tables["orders"].require(args["order_id"])
        return None if order.status == status else f"status is {order.status}, expected {status}"

    return check


def _post_stock_restored(world, args, result, before) -> str | None:
    order = world.tables["orders"].require(args["order_id"])
    for line in order.products:
        now, then = world.tables["products"].get(line.product_id), before.tables["products"].get(line.product_id)
        if now is not None and now.quantity is not None and now.quantity != then.quantity + line.quantity:
            return f"stock of {line.product_id} not restored"
    return None


def _post_note(world, args, result, before) -> str | None:
    order = world.tables["orders"].require(args["order_id"])
    return None if order.note == args["note"] else "note not updated"


def _order(world: DeliveryWorld, order_id: str) -> Order:
    return world.tables["orders"].require(order_id)


def _store_json(world: DeliveryWorld, store_id: str, with_products: bool, **fields: Any) -> RawJson:
    """A store (and its menu) as JSON, assembled from the rows' cached JSON: these reads run on
    nearly every step, and encoding a menu afresh each time would cost more than the rest."""
    text = world.view_json("stores", world.tables["stores"].require(store_id))
    if with_products:
        fields = {"products": json_array([world.view_json("products", p) for p in world.products_of(store_id)]), **fields}
    return json_object_with(text, **fields)


@tool(kind="generic")
def delivery_distance_to_time(world: DeliveryWorld, distance: float) -> float:
    """Delivery duration in minutes for a distance in metres from store to address.

    Args:
        distance: Distance in metres.
    """
    if distance < 0:
        raise ToolError("distance must not be negative")
    return delivery_minutes(distance)


@tool(kind="read", pre=[exists("stores", "store_id", "store", SEARCH_TOOLS + ("get_nearby",))])
def get_delivery_store_info(world: DeliveryWorld, store_id: str) -> dict[str, Any]:
    """Details of a delivery store: id, name, rating, address and coordinates, tags and its products.

    Args:
        store_id: The store's id.
    """
    # the whole text, kept while neither table changes (a store and its menu are read again and again)
    return world.cached_text(("store_info", store_id), ("stores", "products"),
                             lambda: _store_json(world, store_id, with_products=True))


@tool(
    kind="read",
    pre=[exists("products", "product_id", "product", SEARCH_TOOLS + ("get_delivery_store_info",))],
)
def get_delivery_product_info(world: DeliveryWorld, product_id: str) -> dict[str, Any]:
    """Details of a product: name, id, store, price, tags, selectable attributes and stock.

    Args:
        product_id: The product's id.
    """
    return RawJson(world.view_json("products", world.tables["products"].require(product_id)))


def _search_pre(world: DeliveryWorld, history: History, args: dict[str, Any]) -> str | None:
    kws = args["keywords"]
    if not kws or not all(isinstance(k, str) and k.strip() for k in kws):
        return "keywords must be a non-empty list of non-empty strings"
    return top_k_problem(world, "delivery", args["top_k"])


_SEARCH_RULE = rule("keywords must be non-empty; top_k, when given, between 1 and the search's cap", _search_pre)


@tool(kind="read", pre=[_SEARCH_RULE], aliases=["delivery_store_search_recommand"])
def delivery_store_search_recommend(
    world: DeliveryWorld, keywords: list[str], top_k: Optional[int] = None
) -> list[dict[str, Any]]:
    """Search delivery stores by keywords taken from the user's request (name, cuisine, tags), most relevant first. In tasks from VitaBench files, as in VitaBench, every store of the task comes back, ranked by how well the keywords (joined into one text) match its name and tags, up to 50 (100 in the 2025-11 release); in generated tasks only stores matching the keywords well, 10 by default.

    Args:
        keywords: Keywords describing the store.
        top_k: Maximum number of stores returned (default: 10 in generated tasks, all up to the cap in VitaBench tasks).
    """
    hits = search_hits(world, "delivery", keywords, top_k,
                       lambda: search_index(world, "stores", store_search_text),
                       lambda: search_index(world, "stores", vitabench_store_text, "vitabench_stores"))
    return json_array([_store_json(world, sid, with_products=False, relevance=score) for sid, score in hits])


@tool(kind="read", pre=[_SEARCH_RULE], aliases=["delivery_product_search_recommand"])
def delivery_product_search_recommend(
    world: DeliveryWorld, keywords: list[str], top_k: Optional[int] = None
) -> list[dict[str, Any]]:
    """Search delivery products by keywords taken from the user's request (dish, store, tags), most relevant first. In tasks from VitaBench files, as in VitaBench, every product of the task comes back, ranked by how well the keywords (joined into one text) match its store's name, its name and tags, up to 50 (100 in the 2025-11 release); in generated tasks only products matching the keywords well, 10 by default.

    Args:
        keywords: Keywords describing the food.
        top_k: Maximum number of products returned (default: 10 in generated tasks, all up to the cap in VitaBench tasks).
    """
    hits = search_hits(world, "delivery", keywords, top_k,
                       lambda: search_index(world, "products", product_search_text),
                       lambda: search_index(world, "products", vitabench_product_text, "vitabench_products"))
    products = world.tables["products"].rows
    return json_array([json_object_with(world.view_json("products", products[pid]), relevance=score) for pid, score in hits])


@tool(
    kind="write",
    pre=[
        rule("user_id must be the current user's id", _user_matches),
        exists("stores", "store_id", "store", SEARCH_TOOLS + ("get_nearby",)),
        rule(
            "every product must exist and be on that one store's menu",
            _products_in_store,
            SEARCH_TOOLS + ("get_delivery_store_info", "get_delivery_product_info"),
        ),
        rule(
            "product_cnts pairs one positive count with each product; attributes has no more entries than "
            "product_ids (in VitaBench tasks extra entries are ignored)",
            _counts_valid,
        ),
        time_not_past("dispatch_time"),
        rule("the store must be open at dispatch_time", _store_open),
        rule("enough stock of every product", _in_stock),
        rule(
            "the address must be one whose coordinates are known",
            _address_known,
            # in a cross-scenario world the address may be a hotel's or a shop's (tools absent from
            # a toolkit add no edge, so the delivery graph is unchanged)
            ("get_user_historical_behaviors", "address_to_longitude_latitude", "get_ota_hotel_info",
             "hotel_search_recommend", "instore_shop_search_recommend"),
        ),
    ],
    post=[
        Postcondition(
            "a new unpaid order is stored, priced at the sum of its lines, due at dispatch_time plus the delivery duration",
            _post_created,
        )
    ],
)
def create_delivery_order(
    world: DeliveryWorld,
    user_id: str,
    store_id: str,
    product_ids: list[str],
    product_cnts: list[int],
    address: str,
    dispatch_time: str,
    attributes: Optional[list[str]] = None,
    note: str = "",
) -> Order:
    """Create a delivery order from one store (several products allowed); it starts unpaid. Put dietary restrictions in the note, never time requirements. A store sells every product on its menu (get_delivery_store_info), even one whose own store_id names another store.

    Args:
        user_id: The user's id.
        store_id: The one store the order is from.
        product_ids: Ids of the products ordered.
        product_cnts: Quantity of each product, in the same order.
        address: Delivery address.
        dispatch_time: When the rider leaves the store, YYYY-MM-DD HH:MM:SS.
        attributes: Chosen specification of each product (e.g. spice level), in the same order; empty string for none. More entries than products are refused in generated tasks and ignored in VitaBench tasks.
        note: Order note, e.g. a dietary restriction.
    """
    store = world.tables["stores"].require(store_id)
    loc = geocode(world, address)
    minutes = delivery_minutes(haversine_m(loc.longitude, loc.latitude, store.location.longitude, store.location.latitude))
    dispatch = parse_time(dispatch_time)
    attrs = list(attributes or [])
    attrs += [""] * (len(product_ids) - len(attrs))
    products = world.tables["products"]
    lines = []
    for pid, cnt, attr in zip(product_ids, product_cnts, attrs):
        p: Product = products.require(pid)
        lines.append(
            OrderLine(
                product_id=pid,
                name=p.name,
                store_id=p.store_id,
                store_name=p.store_name,
                price=p.price,
                quantity=cnt,
                attributes=attr or "",
                tags=p.tags,
            )
        )
    now = world.clock.text()
    order = Order(
        order_id=world.new_order_id("D"),
        order_type="delivery",
        user_id=user_id,
        store_id=store_id,
        note=note,
        location=loc,
        dispatch_time=dispatch.strftime("%Y-%m-%d %H:%M:%S"),
        shipping_time=minutes,
        delivery_time=(dispatch + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M:%S"),
        total_price=round(sum(line.price * line.quantity for line in lines), 2),
        create_time=now,
        update_time=now,
        status="unpaid",
        products=lines,
    )
    _adjust_stock(world, lines, -1)
    return world.tables["orders"].insert(order)


_ORDER_EXISTS = exists("orders", "order_id", "order", ORDER_SOURCES)
_DELIVERY_ONLY = rule("the order must be a delivery order", _is_delivery_order)
_CANCEL_LOOKUP = requires_prior_call(("get_delivery_order_status", "get_delivery_order_detail"), "order_id", "order")
_MODIFY_LOOKUP = requires_prior_call("get_delivery_order_detail", "order_id", "order")


@tool(
    kind="write",
    pre=[_ORDER_EXISTS, _DELIVERY_ONLY, field_in("orders", "order_id", "order", ["unpaid"])],
    post=[Postcondition("the order is paid", _post_status("paid"))],
    check=order_check(_delivery_problem, None, ("unpaid",), vitabench_any=False),
)
def pay_delivery_order(world: DeliveryWorld, order_id: str) -> str:
    """Pay an unpaid delivery order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    world.tables["orders"].update(order_id, status="paid", update_time=world.clock.text())
    return f"Order {order_id} paid"


@tool(kind="read", pre=[_ORDER_EXISTS, _DELIVERY_ONLY])
def get_delivery_order_status(world: DeliveryWorld, order_id: str) -> dict[str, str]:
    """The status of a delivery order.

    Args:
        order_id: The order's id.
    """
    return {"order_id": order_id, "status": _order(world, order_id).status}


@tool(
    kind="write",
    pre=[
        _ORDER_EXISTS,
        _DELIVERY_ONLY,
        _CANCEL_LOOKUP,
        status_rule("orders", "order_id", "order", CANCELLABLE),
    ],
    post=[
        Postcondition("the order is cancelled", _post_status("cancelled")),
        Postcondition("its products' stock is restored", _post_stock_restored),
    ],
    check=order_check(_delivery_problem, _CANCEL_LOOKUP, CANCELLABLE, vitabench_any=True),
)
def cancel_delivery_order(world: DeliveryWorld, order_id: str) -> str:
    """Cancel a delivery order (or its pending payment); its products' stock is restored. An order already cancelled cannot be cancelled; in generated tasks neither can a delivered one (tasks from VitaBench files, as VitaBench, allow any other status).

    Args:
        order_id: The order's id.
    """
    order = _order(world, order_id)
    world.tables["orders"].update(order_id, status="cancelled", update_time=world.clock.text())
    _adjust_stock(world, order.products, +1)
    return f"Order {order_id} cancelled"


@tool(
    kind="write",
    pre=[
        _ORDER_EXISTS,
        _DELIVERY_ONLY,
        _MODIFY_LOOKUP,
        status_rule("orders", "order_id", "order", MODIFIABLE),
    ],
    post=[Postcondition("the order's note is the new note", _post_note)],
    check=order_check(_delivery_problem, _MODIFY_LOOKUP, MODIFIABLE, vitabench_any=True),
)
def modify_delivery_order(world: DeliveryWorld, order_id: str, note: str) -> Order:
    """Replace the note of a delivery order; if the order is still unpaid, ask the user to confirm payment afterwards. A cancelled order cannot be modified; in generated tasks neither can a delivered one (tasks from VitaBench files, as VitaBench, allow any other status).

    Args:
        order_id: The order's id.
        note: The new note.
    """
    return world.tables["orders"].update(order_id, note=note, update_time=world.clock.text())


@tool(kind="read", pre=[rule("user_id must be the current user's id", _user_matches)])
def search_delivery_orders(world: DeliveryWorld, user_id: str, status: OrderStatus = "unpaid") -> list[Order]:
    """The user's delivery orders with a given status (default unpaid).

    Args:
        user_id: The user's id.
        status: Order status to filter on.
    """
    return [
        o for o in world.tables["orders"] if o.order_type == "delivery" and o.status == status and o.user_id == user_id
    ]


@tool(kind="read", pre=[_ORDER_EXISTS, _DELIVERY_ONLY])
def get_delivery_order_detail(world: DeliveryWorld, order_id: str) -> Order:
    """Full details of a delivery order: store, address, dispatch and delivery times, price, status, products, note.

    Args:
        order_id: The order's id.
    """
    return _order(world, order_id)


DELIVERY_TOOLS = [
    delivery_distance_to_time,
    get_delivery_store_info,
    get_delivery_product_info,
    delivery_store_search_recommend,
    delivery_product_search_recommend,
    create_delivery_order,
    pay_delivery_order,
    get_delivery_order_status,
    cancel_delivery_order,
    modify_delivery_order,
    search_delivery_orders,
    get_delivery_order_detail,
]
TOOLS = SHARED_TOOLS + DELIVERY_TOOLS
