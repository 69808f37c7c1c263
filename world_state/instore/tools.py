"""The sixteen in-store tools, with VitaBench's names and arguments (twenty-four with the shared ones).

Rules VitaBench kept as prose, or did not keep at all, are code here:

- buying decrements the stock of the bought row only (VitaBench overwrote the catalogue's stock
  with the ordered quantity, on whichever shop's product shared the id), and is refused beyond
  stock; cancelling an order gives its stock back;
- ``instore_book`` needs a shop with ``enable_book`` and ``instore_reservation`` one with
  ``enable_reservation`` (VitaBench never looked at the latter); times are
  ``YYYY-MM-DD HH:MM:SS``, not in the past (a VitaBench task's world, as VitaBench, accepts past
  times) and within the shop's opening hours when it has any;
  party sizes are positive, and a modification that names no party size keeps the old one
  (VitaBench set it to 0);
- cancelling an order, a booking or a reservation, and modifying a reservation, need the record
  to have been looked up first (shown by a lookup tool earlier in the episode);
- paying needs an unpaid record; nothing already cancelled or consumed can be cancelled again (a
  VitaBench task's world, as VitaBench, refuses only cancelled records; a consumed reservation
  still cannot be changed).

The tools use only the world's tables (``shops``, ``shop_products``, ``books``, ``reservations``
and the shared ``orders``), never its class, so a cross-scenario world holding them runs them too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Optional

from servicegym.world_state.core import History, parse_time, time_hhmm, time_text, unvalidated
from servicegym.world_state.instore.entities import (
    Booking,
    Reservation,
    Shop,
    ShopProduct,
    product_index,
    product_key,
    shop_index,
    vitabench_product_index,
    vitabench_shop_index,
)
from servicegym.world_state.life.entities import LifeWorld, Order, OrderLine
from servicegym.world_state.life.tools import (
    RELEASE_KEY,
    SHARED_TOOLS,
    order_check,
    search_hits,
    status_problem,
    status_rule,
    top_k_problem,
    vitabench_release,
)
from servicegym.world_state.tools import (
    Postcondition,
    Precondition,
    exists,
    field_in,
    field_problem,
    no_record,
    rule,
    tool,
)

ORDER_PREFIX, BOOK_PREFIX, RESERVATION_PREFIX = "I", "B", "R"
SHOP_SOURCES = ("instore_shop_search_recommend", "instore_product_search_recommend", "get_nearby")
ORDER_LOOKUPS = ("get_instore_orders", "get_user_all_orders")
BOOK_LOOKUPS = ("get_instore_books", "search_instore_book")
RESERVATION_LOOKUPS = ("get_instore_reservations", "search_instore_reservation")
LIVE = ("unpaid", "paid", "unconsumed")  # what can still be cancelled or changed


# ----- pre-condition helpers ------------------------------------------------------------------
def looked_up(tools: Sequence[str], arg: str, what: str) -> Precondition:
    """``args[arg]`` appeared in the result of an executed call of one of ``tools`` earlier."""
    names = tuple(tools)
    shown = " or ".join(f"`{n}`" for n in names)

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        value = args.get(arg)
        if isinstance(value, str) and value:
            needle = encode_basestring(value)  # json.dumps(value, ensure_ascii=False): quoted, so "R1" is not in "R10"
            # newest first, over the results of those tools alone (``History.results_of``)
            for content in reversed(history.results_of(names)):
                if needle in content:
                    return None
        return f"look the {what} {value!r} up with {shown} first"

    return Precondition(f"the {what} must have been looked up earlier with {shown}", check, names)


def _user_matches(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    return None if args.get("user_id") == world.user_id else f"user_id {args.get('user_id')!r} is not this user's id"


def _shop(world: LifeWorld, shop_id: str) -> Shop:
    return world.tables["shops"].require(shop_id)


def _product_in_shop(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    if args["shop_id"] not in world.tables["shops"]:
        return None  # reported by the shop rule
    if product_key(args["shop_id"], args["product_id"]) in world.tables["shop_products"]:
        return None
    return f"shop {args['shop_id']} sells no product {args['product_id']!r}"


def _positive(arg: str, optional: bool = False) -> Callable[[LifeWorld, History, dict[str, Any]], str | None]:
    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        value = args.get(arg)
        if value is None and optional:
            return None
        return None if value is not None and value > 0 else f"{arg} must be a positive integer, got {value!r}"

    return check


def _in_stock(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    p = world.tables["shop_products"].rows.get(product_key(args["shop_id"], args["product_id"]))
    if p is not None and p.quantity is not None and p.quantity < args["quantity"]:
        return f"only {p.quantity} of product {p.product_id} left at shop {p.shop_id}, {args['quantity']} requested"
    return None


def _closed_problem(shop: Shop | None, time: str) -> str | None:
    """Why ``shop`` cannot serve at ``time`` (it is closed then), or None (also for no shop, or a
    time not of the form the time rule asks, which that rule reports)."""
    try:
        hhmm = time_hhmm(time)
    except ValueError:
        return None  # reported by the time rule
    if shop is not None and not shop.is_open_at(hhmm):
        return f"shop {shop.shop_id} is closed at {hhmm} (open {shop.open_time}-{shop.close_time})"
    return None


def _open_at_time(shop_of: Callable[[LifeWorld, dict[str, Any]], Shop | None]):
    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        return _closed_problem(shop_of(world, args), args["time"])

    return check


def _shop_named(world: LifeWorld, args: dict[str, Any]) -> Shop | None:
    return world.tables["shops"].rows.get(args["shop_id"])


def _shop_of_reservation(world: LifeWorld, args: dict[str, Any]) -> Shop | None:
    r = world.tables["reservations"].rows.get(args["reservation_id"])
    return None if r is None else world.tables["shops"].rows.get(r.shop_id)


def _service_problem(shop: Shop, flag: str, service: str) -> str | None:
    return None if getattr(shop, flag) else f"shop {shop.shop_id} does not take {service} ({flag} is false)"


def _shop_allows(flag: str, service: str):
    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        shop = world.tables["shops"].rows.get(args["shop_id"])
        return None if shop is None else _service_problem(shop, flag, service)

    return check


def _instore_problem(order: Order) -> str | None:
    """Why ``order`` is not for the in-store tools (another domain's order), or None."""
    if order.order_type != "instore":
        return f"order {order.order_id} is a {order.order_type} order, not an in-store order"
    return None


def _is_instore_order(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    order = world.tables["orders"].rows.get(args.get("order_id"))
    return None if order is None else _instore_problem(order)


def _owned(table: str, arg: str, what: str, owner: str = "customer_id"):
    """When ``args[arg]`` is given, it names a record of ``table`` that belongs to the user."""

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        value = args.get(arg)
        if value is None:
            return None
        row = world.tables[table].rows.get(value)
        if row is None:
            return f"{what} {value!r} does not exist"
        if getattr(row, owner) != args["user_id"]:
            return f"{what} {value} does not belong to user {args['user_id']}"
        return None

    return check


def _search_pre(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    kws = args["keywords"]
    if not kws or not all(isinstance(k, str) and k.strip() for k in kws):
        return "keywords must be a non-empty list of non-empty strings"
    return top_k_problem(world, "instore", args["top_k"])


def _time_ok(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    """``time`` is YYYY-MM-DD HH:MM:SS and, in a generated task, not in the past (VitaBench
    checks only the form)."""
    try:
        t = parse_time(args["time"])
    except ValueError:
        return f"time {args['time']!r} must have the form YYYY-MM-DD HH:MM:SS"
    if t < world.clock.now and not vitabench_release(world):
        return f"time {args['time']} is before the current time {world.clock.text()}"
    return None


_USER = rule("user_id must be the current user's id", _user_matches)
_SEARCH = rule("keywords must be non-empty; top_k, when given, between 1 and the search's cap", _search_pre)
_SHOP_EXISTS = exists("shops", "shop_id", "shop", SHOP_SOURCES)
_TIME = rule(
    "time has the form YYYY-MM-DD HH:MM:SS and is not in the past (in VitaBench tasks, as in VitaBench, a past "
    "time is accepted)",
    _time_ok,
)
_ORDER_EXISTS = exists("orders", "order_id", "order", ("create_instore_product_order", *ORDER_LOOKUPS))
_INSTORE_ONLY = rule("the order must be an in-store order", _is_instore_order)
_BOOK_EXISTS = exists("books", "book_id", "booking", ("instore_book", *BOOK_LOOKUPS))
_RESERVATION_EXISTS = exists("reservations", "reservation_id", "reservation", ("instore_reservation", *RESERVATION_LOOKUPS))
_ORDER_LOOKED_UP = looked_up(ORDER_LOOKUPS, "order_id", "order")
_BOOK_LOOKED_UP = looked_up(BOOK_LOOKUPS, "book_id", "booking")
_RESERVATION_LOOKED_UP = looked_up(RESERVATION_LOOKUPS, "reservation_id", "reservation")
_COUNT = _positive("customer_count")
_COUNT_IF_GIVEN = _positive("customer_count", optional=True)


# ----- each write's rules in one function (``tool(check=...)``): its record looked up once --------


def _record_check(table: str, arg: str, what: str, prior: Precondition | None, allowed: tuple[str, ...],
                  vitabench_refused: tuple[str, ...] | None) -> Any:
    """``[exists, prior, status]`` of a booking or reservation: ``status`` is ``status_rule(...,
    allowed, vitabench_refused)``, or ``field_in(..., allowed)`` when ``vitabench_refused`` is None."""
    prior_check = prior.check if prior is not None else None

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        key = args.get(arg)
        row = world.tables[table].rows.get(key)
        if row is None:
            return no_record(what, key)
        if prior_check is not None:
            problem = prior_check(world, history, args)
            if problem:
                return problem
        if vitabench_refused is None:
            return field_problem(row, what, allowed)
        return status_problem(world, row, what, allowed, vitabench_refused)

    return check


def _when_problem(world: LifeWorld, shop: Shop | None, time: str, release: str | None) -> str | None:
    """``_time_ok`` then ``_closed_problem(shop, time)``, the same messages in the same order, for a
    check that has looked up the shop and the world's VitaBench release (``vitabench_release``)
    already (``time`` is ``args["time"]``)."""
    try:
        t = parse_time(time)
    except ValueError:
        return f"time {time!r} must have the form YYYY-MM-DD HH:MM:SS"
    if t < world.clock.now and not release:
        return f"time {time} is before the current time {world.clock.text()}"
    if shop is not None and not shop.is_open_at(time_hhmm(time)):  # (the time parsed: so does its HH:MM)
        return _closed_problem(shop, time)
    return None


def _new_visit_check(flag: str, service: str) -> Any:
    """The rules of ``instore_book`` (``enable_book``) and ``instore_reservation``
    (``enable_reservation``): the user, the shop (looked up once), its service, the time, the
    shop's hours and the party size."""

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        extra = world.extra
        user_id = args.get("user_id")
        if user_id != extra.get("user_id", ""):  # ``_user_matches``, ``world.user_id`` read directly
            return f"user_id {user_id!r} is not this user's id"
        sid = args.get("shop_id")
        shop = world.tables["shops"].rows.get(sid)
        if shop is None:
            return no_record("shop", sid)
        if not getattr(shop, flag):
            return _service_problem(shop, flag, service)
        problem = _when_problem(world, shop, args["time"], extra.get(RELEASE_KEY))
        if problem:
            return problem
        count = args.get("customer_count")  # ``_COUNT``
        return None if count is not None and count > 0 else f"customer_count must be a positive integer, got {count!r}"

    return check


_MOVED_LIVE = ("consumed", "cancelled")  # what a VitaBench task refuses to move
_reservation_looked_up = _RESERVATION_LOOKED_UP.check


def _modify_reservation_check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
    """The rules of ``instore_modify_reservation``, the reservation looked up once and the
    world's VitaBench release read once."""
    rid = args.get("reservation_id")
    r = world.tables["reservations"].rows.get(rid)
    if r is None:
        return no_record("reservation", rid)
    problem = _reservation_looked_up(world, history, args)
    if problem:
        return problem
    release = world.extra.get(RELEASE_KEY)
    status = r.status
    # ``status_problem(world, r, "reservation", LIVE, _MOVED_LIVE)``, with the release read above
    if status not in LIVE if release is None else status in _MOVED_LIVE:
        return status_problem(world, r, "reservation", LIVE, _MOVED_LIVE)
    problem = _when_problem(world, world.tables["shops"].rows.get(r.shop_id), args["time"], release)
    if problem:
        return problem
    count = args.get("customer_count")  # ``_COUNT_IF_GIVEN``
    return None if count is None or count > 0 else f"customer_count must be a positive integer, got {count!r}"


# ----- stock ----------------------------------------------------------------------------------
def _adjust_stock(world: LifeWorld, shop_id: str, product_id: str, delta: int) -> None:
    products = world.tables["shop_products"]
    key = product_key(shop_id, product_id)
    p = products.get(key)
    if p is not None and p.quantity is not None:
        products.update(key, quantity=p.quantity + delta)


# ----- post-conditions ------------------------------------------------------------------------
def _post_order_created(world, args, result, before) -> str | None:
    order = world.tables["orders"].get(result.order_id)
    if order is None or order.order_id in before.tables["orders"]:
        return "no new order was stored"
    if order.status != "unpaid" or order.order_type != "instore":
        return f"new order is a {order.status} {order.order_type} order"
    line = order.products[0]
    if abs(order.total_price - round(line.price * line.quantity, 2)) > 1e-6:
        return f"total_price {order.total_price} is not {line.quantity} x {line.price}"
    key = product_key(args["shop_id"], args["product_id"])
    now, then = world.tables["shop_products"].rows, before.tables["shop_products"].rows
    if then[key].quantity is not None and now[key].quantity != then[key].quantity - args["quantity"]:
        return f"stock of {key} went from {then[key].quantity} to {now[key].quantity}"
    changed = [k for k in then if k != key and now.get(k) != then[k]]
    return f"other product rows changed: {changed}" if changed else None


def _post_status(table: str, arg: str, status: str):
    def check(world, args, result, before) -> str | None:
        row = world.tables[table].require(args[arg])
        return None if row.status == status else f"status is {row.status}, expected {status}"

    return check


def _post_stock_restored(world, args, result, before) -> str | None:
    order = world.tables["orders"].require(args["order_id"])
    for line in order.products:
        key = product_key(line.store_id or order.store_id, line.product_id)
        now, then = world.tables["shop_products"].get(key), before.tables["shop_products"].get(key)
        if now is not None and now.quantity is not None and now.quantity != then.quantity + line.quantity:
            return f"stock of {key} not restored"
    return None


def _post_booked(world, args, result, before) -> str | None:
    b = world.tables["books"].get(result.book_id)
    if b is None or b.book_id in before.tables["books"]:
        return "no new booking was stored"
    fee = _shop(world, args["shop_id"]).book_price
    want = "unpaid" if fee > 0 else "paid"
    if b.status != want or b.book_price != fee:
        return f"booking is {b.status} at fee {b.book_price}; expected {want} at {fee}"
    return None


def _post_reserved(world, args, result, before) -> str | None:
    r = world.tables["reservations"].get(result.reservation_id)
    if r is None or r.reservation_id in before.tables["reservations"]:
        return "no new reservation was stored"
    if r.status != "unconsumed" or parse_time(r.reservation_time) != parse_time(args["time"]):
        return f"reservation is {r.status} at {r.reservation_time}"
    return None


def _post_modified(world, args, result, before) -> str | None:
    r = world.tables["reservations"].require(args["reservation_id"])
    old = before.tables["reservations"].require(args["reservation_id"])
    count = old.customer_count if args.get("customer_count") is None else args["customer_count"]
    if parse_time(r.reservation_time) != parse_time(args["time"]) or r.customer_count != count:
        return f"reservation is at {r.reservation_time} for {r.customer_count}"
    return None


# ----- search ---------------------------------------------------------------------------------
def _product_view(world: LifeWorld, p: ShopProduct) -> dict[str, Any]:
    shop = world.tables["shops"].get(p.shop_id)
    return world.view("shop_products", p) | {"shop_name": shop.shop_name if shop is not None else ""}


@tool(kind="read", pre=[_SEARCH], aliases=["instore_shop_search_recommand"])
def instore_shop_search_recommend(
    world: LifeWorld, keywords: list[str], top_k: Optional[int] = None
) -> list[dict[str, Any]]:
    """Search shops (restaurants, spas, gyms, salons, ...) by keywords from the user's request (name, category, features), most relevant first. Results show rating, location, tags, whether the shop takes seat bookings (and the fee) or service reservations. In tasks from VitaBench files, as in VitaBench, every shop of the task comes back, ranked by how well the keywords (joined into one text) match its name and tags, up to 50 (1000 in the 2025-11 release); in generated tasks only shops matching the keywords well, 10 by default.

    Args:
        keywords: Keywords describing the shop.
        top_k: Maximum number of shops returned (default: 10 in generated tasks, all up to the cap in VitaBench tasks).
    """
    shops = world.tables["shops"].rows
    hits = search_hits(world, "instore", keywords, top_k, lambda: shop_index(world), lambda: vitabench_shop_index(world))
    return [world.view("shops", shops[sid]) | {"relevance": score} for sid, score in hits]


@tool(kind="read", pre=[_SEARCH], aliases=["instore_product_search_recommand"])
def instore_product_search_recommend(
    world: LifeWorld, keywords: list[str], top_k: Optional[int] = None
) -> list[dict[str, Any]]:
    """Search the packages, vouchers and set meals shops sell, by keywords (product, shop, tags), most relevant first. Results show the shop, price, tags and stock. In tasks from VitaBench files, as in VitaBench, every product of the task comes back, ranked by how well the keywords (joined into one text) match its name and tags (not the shop's name), up to 50 (1000 in the 2025-11 release); in generated tasks only products matching the keywords well, 10 by default.

    Args:
        keywords: Keywords describing the package or the shop.
        top_k: Maximum number of products returned (default: 10 in generated tasks, all up to the cap in VitaBench tasks).
    """
    products = world.tables["shop_products"].rows
    hits = search_hits(world, "instore", keywords, top_k, lambda: product_index(world),
                       lambda: vitabench_product_index(world))
    return [_product_view(world, products[k]) | {"relevance": score} for k, score in hits]


# ----- orders ---------------------------------------------------------------------------------
@tool(
    kind="write",
    pre=[
        _USER,
        _SHOP_EXISTS,
        rule("the product must be one the shop sells", _product_in_shop, ("instore_product_search_recommend",)),
        rule("quantity must be positive", _positive("quantity")),
        rule("enough stock of the product at that shop", _in_stock, ("instore_product_search_recommend",)),
    ],
    post=[
        Postcondition(
            "a new unpaid in-store order priced at quantity x price is stored, and the stock of that shop's "
            "product (only) drops by the quantity",
            _post_order_created,
        )
    ],
)
def create_instore_product_order(world: LifeWorld, user_id: str, shop_id: str, product_id: str, quantity: int = 1) -> Order:
    """Buy a package or voucher of one shop for in-store use; the order starts unpaid, so ask the user to confirm payment next.

    Args:
        user_id: The user's id.
        shop_id: The shop selling the product.
        product_id: The product's id.
        quantity: How many to buy.
    """
    shop = _shop(world, shop_id)
    p: ShopProduct = world.tables["shop_products"].require(product_key(shop_id, product_id))
    line = OrderLine(
        product_id=product_id,
        name=p.name,
        store_id=shop_id,
        store_name=shop.shop_name,
        price=p.price,
        quantity=quantity,
        tags=p.tags,
    )
    now = world.clock.text()
    order = Order(
        order_id=world.new_order_id(ORDER_PREFIX),
        order_type="instore",
        user_id=user_id,
        store_id=shop_id,
        total_price=round(p.price * quantity, 2),
        create_time=now,
        update_time=now,
        status="unpaid",
        products=[line],
    )
    _adjust_stock(world, shop_id, product_id, -quantity)
    return world.tables["orders"].insert(order)


@tool(
    kind="write",
    pre=[_ORDER_EXISTS, _INSTORE_ONLY, field_in("orders", "order_id", "order", ["unpaid"])],
    post=[Postcondition("the order is paid", _post_status("orders", "order_id", "paid"))],
    check=order_check(_instore_problem, None, ("unpaid",), vitabench_any=False),
)
def pay_instore_order(world: LifeWorld, order_id: str) -> str:
    """Pay an unpaid in-store order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    world.tables["orders"].update(order_id, status="paid", update_time=world.clock.text())
    return f"Order {order_id} paid"


@tool(
    kind="write",
    pre=[
        _ORDER_EXISTS,
        _INSTORE_ONLY,
        _ORDER_LOOKED_UP,
        status_rule("orders", "order_id", "order", LIVE),
    ],
    post=[
        Postcondition("the order is cancelled", _post_status("orders", "order_id", "cancelled")),
        Postcondition("its products' stock is restored", _post_stock_restored),
    ],
    check=order_check(_instore_problem, _ORDER_LOOKED_UP, LIVE, vitabench_any=True),
)
def instore_cancel_order(world: LifeWorld, order_id: str) -> str:
    """Cancel an in-store order (or its pending payment); its stock goes back to the shop. An order already cancelled cannot be cancelled; in generated tasks neither can a consumed one (tasks from VitaBench files, as VitaBench, allow any other status).

    Args:
        order_id: The order's id.
    """
    order = world.tables["orders"].require(order_id)
    world.tables["orders"].update(order_id, status="cancelled", update_time=world.clock.text())
    for line in order.products:
        _adjust_stock(world, line.store_id or order.store_id, line.product_id, line.quantity)
    return f"Order {order_id} cancelled"


@tool(kind="read", pre=[_USER])
def get_instore_orders(world: LifeWorld, user_id: str) -> list[Order]:
    """All of the user's in-store orders, of every status.

    Args:
        user_id: The user's id.
    """
    return [o for o in world.tables["orders"] if o.order_type == "instore" and o.user_id == user_id]


# ----- seat bookings --------------------------------------------------------------------------
# every field of the model: the set fields of a row made with all of them. One set shared by those
# rows, as ``Table.update`` shares a row's with its copy (rows are frozen: never changed in place)
_ALL_FIELDS = {model: set(model.model_fields) for model in (Booking, Reservation)}


def _row(model: type[Booking] | type[Reservation], fields: dict[str, Any], plain: bool) -> Any:
    """``model(**fields)`` (``fields``: every field of ``model``, in field order): made without
    validation when ``plain`` (the caller checked that every value has its field's exact type),
    else by pydantic."""
    return unvalidated(model, fields, _ALL_FIELDS[model]) if plain else model(**fields)


@tool(
    kind="write",
    pre=[
        _USER,
        _SHOP_EXISTS,
        rule("the shop must take seat bookings (enable_book)", _shop_allows("enable_book", "seat bookings"),
             ("instore_shop_search_recommend", "get_nearby")),
        _TIME,
        rule("the shop must be open at that time", _open_at_time(_shop_named)),
        rule("customer_count must be positive", _COUNT),
    ],
    post=[Postcondition("a new booking is stored, unpaid if the shop charges a fee and paid if not", _post_booked)],
    check=_new_visit_check("enable_book", "seat bookings"),
)
def instore_book(world: LifeWorld, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> Booking:
    """Book a seat or table at a shop that takes bookings. A booking with a fee starts unpaid (ask the user to confirm paying it); a free one is paid at once. A time in the past is refused in generated tasks and accepted in tasks from VitaBench files (as VitaBench does).

    Args:
        user_id: The user's id.
        shop_id: The shop's id.
        time: Arrival time, YYYY-MM-DD HH:MM:SS.
        customer_count: Number of people (default 1).
    """
    price = _shop(world, shop_id).book_price
    fields = {
        "book_id": world.new_order_id(BOOK_PREFIX, "books"),
        "shop_id": shop_id,
        "book_time": time_text(time),
        "update_time": world.clock.text(),
        "customer_id": user_id,
        "customer_count": customer_count,
        "book_price": price,
        "status": "unpaid" if price > 0 else "paid",
    }
    # the ids, times and status are strings made here; the rest must have their fields' types
    plain = type(shop_id) is str and type(user_id) is str and type(customer_count) is int and type(price) is float
    return world.tables["books"].insert(_row(Booking, fields, plain))


@tool(
    kind="write",
    pre=[_BOOK_EXISTS, field_in("books", "book_id", "booking", ["unpaid"])],
    post=[Postcondition("the booking is paid", _post_status("books", "book_id", "paid"))],
    check=_record_check("books", "book_id", "booking", None, ("unpaid",), None),
)
def pay_instore_book(world: LifeWorld, book_id: str) -> str:
    """Pay the fee of an unpaid seat booking once the user has confirmed the payment.

    Args:
        book_id: The booking's id.
    """
    world.tables["books"].update(book_id, status="paid", update_time=world.clock.text())
    return f"Booking {book_id} paid"


@tool(
    kind="write",
    pre=[_BOOK_EXISTS, _BOOK_LOOKED_UP, status_rule("books", "book_id", "booking", LIVE)],
    post=[Postcondition("the booking is cancelled", _post_status("books", "book_id", "cancelled"))],
    check=_record_check("books", "book_id", "booking", _BOOK_LOOKED_UP, LIVE, ("cancelled",)),
)
def instore_cancel_book(world: LifeWorld, book_id: str) -> str:
    """Cancel a seat booking; one already cancelled cannot be cancelled, and in generated tasks neither can a consumed one (tasks from VitaBench files, as VitaBench, allow any other status).

    Args:
        book_id: The booking's id.
    """
    world.tables["books"].update(book_id, status="cancelled", update_time=world.clock.text())
    return f"Booking {book_id} cancelled"


@tool(kind="read", pre=[_USER])
def get_instore_books(world: LifeWorld, user_id: str) -> list[Booking]:
    """All of the user's seat bookings, of every status.

    Args:
        user_id: The user's id.
    """
    return [b for b in world.tables["books"] if b.customer_id == user_id]


@tool(
    kind="read",
    pre=[_USER, rule("a given book_id must be one of the user's bookings", _owned("books", "book_id", "booking"),
                     ("instore_book", "get_instore_books"))],
)
def search_instore_book(world: LifeWorld, user_id: str, book_id: Optional[str] = None) -> list[Booking]:
    """The user's seat bookings: the one named by book_id, or all of them when it is omitted.

    Args:
        user_id: The user's id.
        book_id: A booking's id (optional).
    """
    if book_id is not None:
        return [world.tables["books"].require(book_id)]
    return [b for b in world.tables["books"] if b.customer_id == user_id]


# ----- service reservations -------------------------------------------------------------------
@tool(
    kind="write",
    pre=[
        _USER,
        _SHOP_EXISTS,
        rule("the shop must take service reservations (enable_reservation)",
             _shop_allows("enable_reservation", "service reservations"), ("instore_shop_search_recommend", "get_nearby")),
        _TIME,
        rule("the shop must be open at that time", _open_at_time(_shop_named)),
        rule("customer_count must be positive", _COUNT),
    ],
    post=[Postcondition("a new unconsumed reservation at that time is stored", _post_reserved)],
    check=_new_visit_check("enable_reservation", "service reservations"),
)
def instore_reservation(world: LifeWorld, user_id: str, shop_id: str, time: str, customer_count: int = 1) -> Reservation:
    """Reserve a service time at a shop that takes reservations (e.g. to use a voucher bought there); tell the user to arrive on time. A time in the past is refused in generated tasks and accepted in tasks from VitaBench files (as VitaBench does).

    Args:
        user_id: The user's id.
        shop_id: The shop's id.
        time: Service time, YYYY-MM-DD HH:MM:SS.
        customer_count: Number of people (default 1).
    """
    fields = {
        "reservation_id": world.new_order_id(RESERVATION_PREFIX, "reservations"),
        "shop_id": shop_id,
        "reservation_time": time_text(time),
        "update_time": world.clock.text(),
        "customer_id": user_id,
        "customer_count": customer_count,
        "status": "unconsumed",
    }
    # the ids, times and status are strings made here; the rest must have their fields' types
    plain = type(shop_id) is str and type(user_id) is str and type(customer_count) is int
    return world.tables["reservations"].insert(_row(Reservation, fields, plain))


@tool(
    kind="write",
    pre=[
        _RESERVATION_EXISTS,
        _RESERVATION_LOOKED_UP,
        status_rule("reservations", "reservation_id", "reservation", LIVE, _MOVED_LIVE),
        _TIME,
        rule("the shop must be open at the new time", _open_at_time(_shop_of_reservation)),
        rule("customer_count, when given, must be positive", _COUNT_IF_GIVEN),
    ],
    post=[Postcondition("the reservation has the new time and party size", _post_modified)],
    check=_modify_reservation_check,
)
def instore_modify_reservation(
    world: LifeWorld, reservation_id: str, time: str, customer_count: Optional[int] = None
) -> Reservation:
    """Change the time (and optionally the party size) of a reservation found with a reservation lookup. A cancelled or consumed reservation cannot be changed; a new time in the past is refused in generated tasks and accepted in tasks from VitaBench files (as VitaBench does).

    Args:
        reservation_id: The reservation's id.
        time: The new service time, YYYY-MM-DD HH:MM:SS.
        customer_count: The new number of people; omit it to keep the current one.
    """
    reservations = world.tables["reservations"]
    if customer_count is None:
        return reservations.update(reservation_id, reservation_time=time_text(time), update_time=world.clock.text())
    return reservations.update(reservation_id, reservation_time=time_text(time), update_time=world.clock.text(),
                               customer_count=customer_count)


@tool(
    kind="write",
    pre=[
        _RESERVATION_EXISTS,
        _RESERVATION_LOOKED_UP,
        status_rule("reservations", "reservation_id", "reservation", LIVE),
    ],
    post=[Postcondition("the reservation is cancelled", _post_status("reservations", "reservation_id", "cancelled"))],
    check=_record_check("reservations", "reservation_id", "reservation", _RESERVATION_LOOKED_UP, LIVE, ("cancelled",)),
)
def instore_cancel_reservation(world: LifeWorld, reservation_id: str) -> str:
    """Cancel a reservation; one already cancelled cannot be cancelled, and in generated tasks neither can a consumed one (tasks from VitaBench files, as VitaBench, allow any other status).

    Args:
        reservation_id: The reservation's id.
    """
    world.tables["reservations"].update(reservation_id, status="cancelled", update_time=world.clock.text())
    return f"Reservation {reservation_id} cancelled"


@tool(kind="read", pre=[_USER])
def get_instore_reservations(world: LifeWorld, user_id: str) -> list[Reservation]:
    """All of the user's service reservations, of every status.

    Args:
        user_id: The user's id.
    """
    return [r for r in world.tables["reservations"] if r.customer_id == user_id]


@tool(
    kind="read",
    pre=[
        _USER,
        rule("a given reservation_id must be one of the user's reservations",
             _owned("reservations", "reservation_id", "reservation"), ("instore_reservation", "get_instore_reservations")),
    ],
)
def search_instore_reservation(world: LifeWorld, user_id: str, reservation_id: Optional[str] = None) -> list[Reservation]:
    """The user's service reservations: the one named by reservation_id, or all of them when it is omitted.

    Args:
        user_id: The user's id.
        reservation_id: A reservation's id (optional).
    """
    if reservation_id is not None:
        return [world.tables["reservations"].require(reservation_id)]
    return [r for r in world.tables["reservations"] if r.customer_id == user_id]


INSTORE_TOOLS = [
    instore_shop_search_recommend,
    instore_product_search_recommend,
    create_instore_product_order,
    pay_instore_order,
    instore_cancel_order,
    instore_book,
    pay_instore_book,
    instore_cancel_book,
    instore_reservation,
    instore_modify_reservation,
    instore_cancel_reservation,
    get_instore_orders,
    get_instore_reservations,
    get_instore_books,
    search_instore_book,
    search_instore_reservation,
]
TOOLS = SHARED_TOOLS + INSTORE_TOOLS
