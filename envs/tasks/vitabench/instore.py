"""VitaBench in-store tasks: shops, bookings and reservations; gold visits and golden routes."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from pydantic import AliasChoices, Field, ValidationError, field_validator

from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.vitabench.common import (
    STOP_MESSAGE,
    VCriteria,
    VLocation,
    VOrder,
    VTask,
    VWeather,
    _action,
    _as_dict,
    _built,
    _check_time,
    _clear_task_key,
    _Context,
    _fmt,
    _Model,
    _Notes,
    _unique_states,
    _vitabench_task,
    detect_language,
)
from servicegym.rewards.vitabench import (
    GoldLine,
    GoldOrder,
    GoldState,
    GoldVisit,
    lines_match,
    status_class,
    visit_status_class,
    visit_time,
)
from servicegym.world_state.core import parse_time
from servicegym.world_state.instore import InStoreWorld, build_instore_world, product_key
from servicegym.world_state.instore.entities import InStoreStatus
from servicegym.world_state.life.entities import OrderLine
from servicegym.world_state.tools import Toolkit

INSTORE_NAMES = ("instore", "in-store", "in-store consumption", "到店", "到店消费")


_VISIT_TIME = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")


def _visit_time(value: str) -> str:
    """A booking or reservation time as YYYY-MM-DD HH:MM:SS: the gold sometimes leaves out the
    seconds ("2024-10-26 16:00") or writes a one-digit day ("2024-12-2 18:00:00")."""
    m = _VISIT_TIME.match(value)
    if m is None:
        raise ValueError(f"{value!r} is not a time of the form YYYY-MM-DD HH:MM:SS")
    try:
        return _fmt(datetime(*(int(x or 0) for x in m.groups())))
    except ValueError:
        raise ValueError(f"{value!r} is not a valid date and time") from None


class VShopProduct(_Model):
    product_id: str
    name: str
    shop_id: str = ""
    price: float
    tags: list[str] = []
    quantity: int | None = None


class VShop(_Model):
    shop_id: str | None = None  # absent: the key in ``shops``
    shop_name: str
    score: float
    location: VLocation
    tags: list[str] = []
    category: str = ""
    enable_book: bool = False
    book_price: float = 0.0
    enable_reservation: bool = False
    products: list[VShopProduct] = []


class VBooking(_Model):
    # a few gold bookings call their id ``reservation_id``
    book_id: str = Field(validation_alias=AliasChoices("book_id", "reservation_id"))
    shop_id: str
    book_time: str = Field(validation_alias=AliasChoices("book_time", "reservation_time"))
    customer_id: str = ""
    customer_count: int
    book_price: float = 0.0
    status: InStoreStatus
    update_time: str = ""

    @field_validator("book_id", "shop_id")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()

    @field_validator("book_time")
    @classmethod
    def _time(cls, value: str) -> str:
        return _visit_time(value)


class VReservation(_Model):
    reservation_id: str = Field(validation_alias=AliasChoices("reservation_id", "book_id"))
    shop_id: str
    reservation_time: str = Field(validation_alias=AliasChoices("reservation_time", "book_time"))
    customer_id: str = ""
    customer_count: int
    status: InStoreStatus
    update_time: str = ""

    @field_validator("reservation_id", "shop_id")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()

    @field_validator("reservation_time")
    @classmethod
    def _time(cls, value: str) -> str:
        return _visit_time(value)


def _entry_kind(entry: Any) -> str:
    """What a required entry of an in-store state is: an order, a booking or a reservation. Its
    time field decides (some gold entries name a booking's id ``reservation_id``, or a
    reservation's ``book_id``); the id field only when there is no single time field. The shop's
    capability may still turn it into the other kind (``_instore_gold_visit``)."""
    if isinstance(entry, dict):
        if "order_id" in entry:
            return "order"
        book_time, reservation_time = "book_time" in entry, "reservation_time" in entry
        if book_time != reservation_time:
            return "book" if book_time else "reservation"
        if "book_id" in entry:
            return "book"
        if "reservation_id" in entry:
            return "reservation"
    return "order"


def _mixed_fields(entry: dict[str, Any], kind: str) -> str | None:
    """The id field of a booking or reservation entry when it is the other kind's (the time field
    decided its kind), else None."""
    other = {"book": "reservation_id", "reservation": "book_id"}.get(kind)
    own = {"book": "book_id", "reservation": "reservation_id"}.get(kind)
    return other if other in entry and own not in entry else None


_ENTRY_MODELS: dict[str, type[_Model]] = {"order": VOrder, "book": VBooking, "reservation": VReservation}


class VInstoreExpectedState(_Model):
    # orders, bookings and reservations mixed; each is validated by its kind during conversion
    required_orders: list[dict[str, Any]] = []
    optional_orders: list[Any] = []
    state_rubrics: list[str] = []


class VInstoreCriteria(VCriteria):
    expected_states: list[VInstoreExpectedState]


class VInstoreTask(VTask):
    evaluation_criteria: VInstoreCriteria


class VInstoreEnvironment(_Model):
    time: str
    user_id: str
    weather: list[VWeather] = []
    location: list[VLocation] = []
    user_historical_behaviors: dict[str, Any] = {}
    orders: dict[str, VOrder] = {}
    shops: dict[str, VShop]
    books: dict[str, VBooking] = {}
    reservations: dict[str, VReservation] = {}

    @field_validator("time")
    @classmethod
    def _now(cls, value: str) -> str:
        return _check_time(value, allow_empty=False) or ""

    @field_validator("orders", "books", "reservations", mode="before")
    @classmethod
    def _keyed(cls, value: Any, info: Any) -> Any:
        return _as_dict(value, {"orders": "order_id", "books": "book_id", "reservations": "reservation_id"}[info.field_name])


def _instore_shop_aliases(env: VInstoreEnvironment, notes: _Notes) -> dict[str, str]:
    """For shops whose key and ``shop_id`` differ, both names -> the id used (the one the shop's
    own products name, as for delivery stores), so records naming either find the shop."""
    aliases: dict[str, str] = {}
    for key, s in env.shops.items():
        if s.shop_id and s.shop_id.strip() != key:
            owners = {p.shop_id for p in s.products}
            sid = s.shop_id.strip() if owners == {s.shop_id} else key
            notes.add(f"shop listed under {key} says its shop_id is {s.shop_id}; {sid} is used, as its products name")
            aliases[key] = aliases[s.shop_id.strip()] = sid
    return aliases


def _instore_spec(raw: VTask, env: VInstoreEnvironment, task_key: str, language: str, aliases: dict[str, str],
                  notes: _Notes) -> dict[str, Any]:
    shops: list[dict[str, Any]] = []
    products: dict[str, dict[str, Any]] = {}
    for key, s in env.shops.items():
        sid = aliases.get(key, key)
        shops.append({"shop_id": sid, "shop_name": s.shop_name, "score": s.score, "location": s.location.model_dump(),
                      "tags": list(s.tags), "category": s.category, "enable_book": s.enable_book,
                      "book_price": s.book_price, "enable_reservation": s.enable_reservation})
        for p in s.products:
            pk = product_key(sid, p.product_id)
            if pk in products:
                notes.add(f"product {p.product_id} is listed twice in shop {sid}; the first listing is kept")
                continue
            products[pk] = {"product_id": p.product_id, "name": p.name, "shop_id": sid, "price": p.price,
                            "tags": list(p.tags), "quantity": p.quantity}
    names = {s["shop_id"]: s["shop_name"] for s in shops}
    orders = []
    for key, o in env.orders.items():
        store_id = aliases.get(o.store_id.strip(), o.store_id.strip())
        lines = []
        for line in o.lines:
            cat = products.get(product_key(store_id, line.product_id), {})
            lines.append(OrderLine(product_id=line.product_id, name=cat.get("name", ""), store_id=store_id,
                                   store_name=names.get(store_id, ""), price=line.price, quantity=line.quantity,
                                   tags=cat.get("tags", [])).model_dump())
        if o.order_id != key:
            notes.add(f"initial order {key} says its order_id is {o.order_id}; the key is used, as VitaBench does")
        orders.append({"order_id": key, "order_type": o.order_type, "user_id": o.user_id or env.user_id,
                       "store_id": store_id, "note": o.note or "", "total_price": o.total_price,
                       "create_time": o.create_time or "", "update_time": o.update_time or "", "status": o.status,
                       "products": lines})
    # a booking whose time is called reservation_time, or the other way round: its table decides
    for table, noun, own, other in (("books", "booking", "book_time", "reservation_time"),
                                    ("reservations", "reservation", "reservation_time", "book_time")):
        records = raw.environment.get(table)
        for rec in (records.values() if isinstance(records, dict) else records if isinstance(records, list) else []):
            if isinstance(rec, dict) and other in rec and own not in rec:
                rid = rec.get("book_id", rec.get("reservation_id", "?"))
                notes.add(f"initial {noun} {rid}: its time is given as {other}; read as its {own}")
    books = [b.model_dump() | {"book_id": key, "customer_id": b.customer_id or env.user_id,
                               "shop_id": aliases.get(b.shop_id, b.shop_id)} for key, b in env.books.items()]
    reservations = [r.model_dump() | {"reservation_id": key, "customer_id": r.customer_id or env.user_id,
                                      "shop_id": aliases.get(r.shop_id, r.shop_id)} for key, r in env.reservations.items()]
    return {
        "time": env.time,
        "user_id": env.user_id,
        "task_key": task_key,
        "language": language,
        "locations": [loc.model_dump() for loc in env.location],
        "weather": [{"id": f"W{i + 1:02d}", **w.model_dump()} for i, w in enumerate(env.weather)],
        "orders": orders,
        "shops": shops,
        "shop_products": list(products.values()),
        "books": books,
        "reservations": reservations,
        "user_profile": raw.user_scenario.user_profile,
        "user_historical_behaviors": env.user_historical_behaviors,
    }


def _instore_task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of the ids made in the episode (``<key>I01``, ``<key>B01``, ``<key>R01``), clear of existing ids."""
    return _clear_task_key(task_id, initial_ids, ("I", "B", "R"))


def _instore_gold_orders(o: VOrder, where: str, world: InStoreWorld, notes: _Notes) -> list[GoldOrder]:
    """One required in-store order, normalised; an order of several products becomes one gold
    order per product, since ``create_instore_product_order`` buys one product per order."""
    products = world.table("shop_products")
    store_id = o.store_id.strip()
    lines = [GoldLine(product_id=x.product_id.strip(), quantity=x.quantity) for x in o.lines]
    before = world.table("orders").get(o.order_id)
    if before is not None:
        if (before.store_id == store_id and lines_match(lines, before.products)) or status_class(o.status) == "cancelled":
            return [GoldOrder(kind="existing", order_id=o.order_id, order_type="instore", store_id=before.store_id,
                              status=o.status)]
        notes.add(f"{where}: the gold changes the products or shop of a pre-existing order, which no tool can do; "
                  "it is scored as cancel and re-order")
        kind = "replaced"
    else:
        kind = "new"
    holders: dict[str, set[str]] = {}
    for p in products:
        holders.setdefault(p.product_id, set()).add(p.shop_id)
    if any(product_key(store_id, x.product_id) not in products for x in lines):
        common = set.intersection(*(holders.get(x.product_id, set()) for x in lines)) if lines else set()
        if len(common) == 1:
            (owner,) = common
            notes.add(f"{where}: store_id {store_id} replaced by {owner}, the shop that sells all its products")
            store_id = owner
        else:
            known = [x for x in lines if x.product_id in holders]
            if known and len(known) < len(lines):
                missing = sorted({x.product_id for x in lines} - {x.product_id for x in known})
                notes.add(f"{where}: line(s) for {', '.join(missing)} dropped: in no shop of the task's catalogue, so "
                          "no agent could order them")
                lines = known
    if len(lines) > 1:
        notes.add(f"{where}: {len(lines)} products in one order, but an in-store order holds one product; read as "
                  f"{len(lines)} orders of one product each")
    parts = [[line] for line in lines] or [[]]
    return [GoldOrder(kind=kind, order_id=o.order_id if len(parts) == 1 else f"{o.order_id}/{j + 1}",  # type: ignore[arg-type]
                      order_type="instore", store_id=store_id, status=o.status, lines=part)
            for j, part in enumerate(parts)]


def _first_day_at(clock: str, now: datetime) -> datetime:
    """The first time of day ``clock`` (HH:MM:SS) not before ``now``."""
    t = datetime.combine(now.date(), datetime.strptime(clock, "%H:%M:%S").time())
    return t if t >= now else t + timedelta(days=1)


def _instore_gold_visit(v: VBooking | VReservation, where: str, world: InStoreWorld, notes: _Notes) -> GoldVisit:
    """One required booking or reservation, normalised (see ``GoldVisit``)."""
    table = "books" if isinstance(v, VBooking) else "reservations"
    rid = v.book_id if isinstance(v, VBooking) else v.reservation_id
    time = v.book_time if isinstance(v, VBooking) else v.reservation_time
    for t in ("books", "reservations"):
        before = world.table(t).get(rid)
        if before is None:
            continue
        if before.shop_id == v.shop_id:
            new_time = None if parse_time(time) == parse_time(visit_time(before)) else time
            count = None if v.customer_count == before.customer_count else v.customer_count
            cancelled = visit_status_class(t, v.status) == "cancelled"
            if cancelled or t == "reservations" or (new_time is None and count is None):
                return GoldVisit(kind="existing", table=t, record_id=rid, shop_id=v.shop_id, status=v.status,  # type: ignore[arg-type]
                                 time=None if cancelled else new_time, customer_count=None if cancelled else count)
            notes.add(f"{where}: the gold changes a pre-existing booking, which no tool can do; it is scored as "
                      "cancel and book anew")
        else:
            notes.add(f"{where}: the gold moves a pre-existing record to another shop; it is scored as cancel and anew")
        return GoldVisit(kind="replaced", table=t, record_id=rid, shop_id=v.shop_id, status=v.status,  # type: ignore[arg-type]
                         time=time, customer_count=v.customer_count)
    shop = world.table("shops").get(v.shop_id)
    if shop is None:
        notes.add(f"{where}: shop {v.shop_id} is not in the task's catalogue")
    elif table == "reservations" and not shop.enable_reservation and shop.enable_book:
        notes.add(f"{where}: shop {v.shop_id} takes seat bookings, not reservations; read as a booking")
        table = "books"
    elif table == "books" and not shop.enable_book and shop.enable_reservation:
        notes.add(f"{where}: shop {v.shop_id} takes reservations, not seat bookings; read as a reservation")
        table = "reservations"
    now = world.clock.now
    check = parse_time(time) >= now
    if not check:
        notes.add(f"{where}: time {time} lies before the task's now, so no tool can book it; the time is not scored")
        time = _fmt(_first_day_at(time[11:], now))
    return GoldVisit(kind="new", table=table, record_id=rid, shop_id=v.shop_id, status=v.status, time=time,  # type: ignore[arg-type]
                     customer_count=v.customer_count, check_time=check)


_ID_KEYS = {"order": "order_id", "book": "book_id", "reservation": "reservation_id"}


def _lift_nested(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """A required entry, and after it the whole records some gold files nest inside an order's
    ``products`` (a misplaced bracket), marked ``nested_in``."""
    inner = entry.get("products")
    if not isinstance(inner, list):
        return [entry]
    nested = [x for x in inner if isinstance(x, dict) and "product_id" not in x and any(k in x for k in _ID_KEYS.values())]
    if not nested:
        return [entry]
    parent = dict(entry, products=[x for x in inner if not any(x is n for n in nested)])
    return [parent, *(dict(n, nested_in=str(entry.get("order_id", "?"))) for n in nested)]


def _instore_state(st: VInstoreExpectedState, k: int, world: InStoreWorld, aliases: dict[str, str], notes: _Notes,
                   ctx: _Context) -> GoldState:
    orders: list[GoldOrder] = []
    visits: list[GoldVisit] = []
    seen: set[str] = set()
    for j, raw_entry in enumerate(st.required_orders):
        for entry in _lift_nested(raw_entry):
            kind = _entry_kind(entry)
            try:
                rec = _ENTRY_MODELS[kind].model_validate(entry)
            except ValidationError as err:
                raise ctx.validation(err, f"evaluation_criteria.expected_states.{k}.required_orders.{j}") from None
            sig = f"{kind}:{rec.model_dump_json()}"
            noun = {"order": "order", "book": "booking", "reservation": "reservation"}[kind]
            where = f"expected state {k}, {noun} {getattr(rec, _ID_KEYS[kind])}"
            if sig in seen:
                notes.add(f"{where}: listed twice with the same content; counted once")
                continue
            seen.add(sig)
            if entry.get("nested_in"):
                notes.add(f"{where}: found nested inside the products of order {entry['nested_in']}; read as a "
                          "required record of its own")
            mixed = _mixed_fields(entry, kind)
            if mixed:
                time_key = "book_time" if kind == "book" else "reservation_time"
                notes.add(f"{where}: has a {mixed} but a {time_key}; read as a {noun}, as its time says")
            if isinstance(rec, VOrder):
                if rec.dropped_entries:
                    notes.add(f"{where}: {rec.dropped_entries} product entries without product_id ignored")
                shop = rec.store_id.strip()
                orders += _instore_gold_orders(rec.model_copy(update={"store_id": aliases.get(shop, shop)}), where,
                                               world, notes)
            else:
                rec = rec.model_copy(update={"shop_id": aliases.get(rec.shop_id, rec.shop_id)})
                visits.append(_instore_gold_visit(rec, where, world, notes))  # type: ignore[arg-type]
    return GoldState(orders=orders, visits=visits)


_VISIT_TOOLS = {  # table -> (lookup, cancel, id argument, create, id prefix)
    "books": ("get_instore_books", "instore_cancel_book", "book_id", "instore_book", "B"),
    "reservations": ("get_instore_reservations", "instore_cancel_reservation", "reservation_id", "instore_reservation", "R"),
}


def _instore_golden(state: GoldState, world: InStoreWorld, task_key: str, language: str) -> list[str]:
    """Tool calls that turn the initial world into ``state``, then the agent's closing message."""
    uid = world.user_id
    actions: list[str] = []
    done: set[str] = set()
    for g in state.orders:
        if g.kind == "new" or g.order_id in done:
            continue
        done.add(g.order_id)  # a replaced order split into several gold orders is cancelled once
        before = world.table("orders").require(g.order_id)
        want = "cancelled" if g.kind == "replaced" else status_class(g.status)
        if want == "cancelled" and before.status != "cancelled":
            actions += [_action("get_instore_orders", user_id=uid), _action("instore_cancel_order", order_id=g.order_id)]
        elif want == "paid" and before.status == "unpaid":
            actions.append(_action("pay_instore_order", order_id=g.order_id))
    for g in state.visits:
        if g.kind == "new":
            continue
        lookup, cancel, id_arg, _, _ = _VISIT_TOOLS[g.table]
        before = world.table(g.table).require(g.record_id)
        cls = "cancelled" if g.kind == "replaced" else visit_status_class(g.table, g.status)
        if cls == "cancelled":
            if before.status != "cancelled":
                actions += [_action(lookup, user_id=uid), _action(cancel, **{id_arg: g.record_id})]
            continue
        if g.time is not None or g.customer_count is not None:
            args: dict[str, Any] = {"reservation_id": g.record_id, "time": g.time or visit_time(before)}
            if g.customer_count is not None:
                args["customer_count"] = g.customer_count
            actions += [_action("search_instore_reservation", user_id=uid, reservation_id=g.record_id),
                        _action("instore_modify_reservation", **args)]
        if g.table == "books" and cls == "paid" and before.status == "unpaid":
            actions.append(_action("pay_instore_book", book_id=g.record_id))
    created = 0
    for g in state.orders:
        if g.kind == "new" or g.kind == "replaced":
            if not g.lines:
                continue  # nothing to buy; the replay reports the order as unmatched
            created += 1
            # mirrors LifeWorld.new_order_id: <task_key><prefix><2-digit counter>, from 1 per episode
            oid = f"{task_key}I{created:02d}"
            actions.append(_action("create_instore_product_order", user_id=uid, shop_id=g.store_id,
                                   product_id=g.lines[0].product_id, quantity=g.lines[0].quantity))
            cls = status_class(g.status)
            if cls == "paid":
                actions.append(_action("pay_instore_order", order_id=oid))
            elif cls == "cancelled":
                actions += [_action("get_instore_orders", user_id=uid), _action("instore_cancel_order", order_id=oid)]
    made = {"books": 0, "reservations": 0}
    for g in state.visits:
        if g.kind == "new" or g.kind == "replaced":
            lookup, cancel, id_arg, create, prefix = _VISIT_TOOLS[g.table]
            made[g.table] += 1
            rid = f"{task_key}{prefix}{made[g.table]:02d}"
            actions.append(_action(create, user_id=uid, shop_id=g.shop_id, time=g.time, customer_count=g.customer_count))
            cls = visit_status_class(g.table, g.status)
            shop = world.table("shops").get(g.shop_id)
            if cls == "paid" and shop is not None and shop.book_price > 0:
                actions.append(_action("pay_instore_book", book_id=rid))
            elif cls == "cancelled":
                actions += [_action(lookup, user_id=uid), _action(cancel, **{id_arg: rid})]
    actions.append(STOP_MESSAGE[language])
    return actions


def _convert_instore(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    env = ctx.environment(VInstoreEnvironment, raw.environment)
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _instore_task_key(raw.id, set(env.orders) | set(env.books) | set(env.reservations))
    aliases = _instore_shop_aliases(env, notes)
    spec = _instore_spec(raw, env, task_key, language, aliases, notes)
    world = _built(ctx, build_instore_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _instore_state(st, k, world, aliases, state_notes, ctx))
    return _vitabench_task(raw, "instore", language, spec, world, states, notes, toolkit,
                           lambda s: _instore_golden(s, world, task_key, language))
