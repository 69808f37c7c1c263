"""VitaBench delivery tasks: world spec, gold orders and golden routes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.vitabench.common import (
    STOP_MESSAGE,
    VDeliveryEnvironment,
    VExpectedState,
    VTask,
    _action,
    _built,
    _clear_task_key,
    _Context,
    _fmt,
    _Notes,
    _unique_states,
    _vitabench_task,
    detect_language,
)
from servicegym.rewards.vitabench import (
    ADDRESS_TOLERANCE_M,
    TIME_TOLERANCE_MIN,
    GoldLine,
    GoldOrder,
    GoldState,
    lines_match,
    status_class,
)
from servicegym.world_state.core import haversine_m, parse_time
from servicegym.world_state.delivery import DeliveryWorld, build_delivery_world, delivery_minutes
from servicegym.world_state.life.entities import OrderLine
from servicegym.world_state.tools import Toolkit


def _world_spec(raw: VTask, env: VDeliveryEnvironment, task_key: str, language: str, notes: _Notes) -> dict[str, Any]:
    stores: list[dict[str, Any]] = []
    products: dict[str, dict[str, Any]] = {}
    for key, s in env.stores.items():
        sid = key
        if s.store_id and s.store_id != key:
            # VitaBench looks stores up by key, but when the two disagree the id the store's own
            # products name is the one an order can be placed under
            owners = {p.store_id for p in s.products}
            sid = s.store_id if owners == {s.store_id} else key
            notes.add(f"store listed under {key} says its store_id is {s.store_id}; {sid} is used, as its products name")
        stores.append({"store_id": sid, "name": s.name, "score": s.score, "location": s.location.model_dump(),
                       "tags": list(s.tags)})
        for p in s.products:
            if p.product_id in products:
                notes.add(f"product {p.product_id} is listed twice; the first listing is kept")
                continue
            products[p.product_id] = p.model_dump()
            if p.store_id != sid:
                # VitaBench sells a product from the store whose menu lists it, whatever its store_id says
                products[p.product_id]["listed_by"] = sid
                notes.add(f"product {p.product_id} names store {p.store_id} but is on the menu of {sid}, which sells "
                          "it (as in VitaBench)")
    store_names = {s["store_id"]: s["name"] for s in stores}
    orders = []
    for key, o in env.orders.items():
        lines = []
        for line in o.lines:
            cat = products.get(line.product_id, {})
            lines.append(OrderLine(
                product_id=line.product_id,
                name=cat.get("name", ""),
                store_id=cat.get("store_id", o.store_id),
                store_name=cat.get("store_name", store_names.get(o.store_id, "")),
                price=line.price,
                quantity=line.quantity,
                attributes=line.attributes,
                tags=cat.get("tags", []),
            ).model_dump())
        if o.dropped_entries:
            notes.add(f"initial order {o.order_id}: {o.dropped_entries} product entries without product_id ignored")
        if o.order_id != key:
            notes.add(f"initial order {key} says its order_id is {o.order_id}; the key is used, as VitaBench does")
        orders.append({
            "order_id": key,
            "order_type": o.order_type,
            "user_id": o.user_id or env.user_id,
            "store_id": o.store_id,
            "note": o.note or "",
            "location": o.location.model_dump() if o.location else None,
            "dispatch_time": o.dispatch_time or "",
            "shipping_time": o.shipping_time,
            "delivery_time": o.delivery_time or "",
            "total_price": o.total_price,
            "create_time": o.create_time or "",
            "update_time": o.update_time or "",
            "status": o.status,
            "products": lines,
        })
    return {
        "time": env.time,
        "user_id": env.user_id,
        "task_key": task_key,
        "language": language,
        "locations": [loc.model_dump() for loc in env.location],
        "weather": [{"id": f"W{i + 1:02d}", **w.model_dump()} for i, w in enumerate(env.weather)],
        "orders": orders,
        "stores": stores,
        "products": list(products.values()),
        "user_profile": raw.user_scenario.user_profile,
        "user_historical_behaviors": env.user_historical_behaviors,
    }


def _task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of order ids created in the episode (``<key>D01``...), clear of existing ids."""
    return _clear_task_key(task_id, initial_ids, ("D",))


def _gold_orders(state: VExpectedState, k: int, world: DeliveryWorld, notes: _Notes) -> list[GoldOrder]:
    """Expected state ``k``, normalised (see ``rewards/vitabench.py`` for what each field means)."""
    now = world.clock.now
    initial = world.table("orders")
    products = world.table("products")
    stores = world.table("stores")
    options_of = {p.product_id: list(p.attributes) for p in products}
    out: list[GoldOrder] = []
    seen: set[str] = set()
    for o in state.required_orders:
        where = f"expected state {k}, order {o.order_id}"
        sig = o.model_dump_json()
        if sig in seen:
            notes.add(f"{where}: listed twice with the same content; counted once")
            continue
        seen.add(sig)
        if o.dropped_entries:
            notes.add(f"{where}: {o.dropped_entries} product entries without product_id ignored")
        if o.nested_in:
            notes.add(f"{where}: found nested inside the products of order {o.nested_in}; read as a required order of its own")
        lines = [GoldLine(product_id=x.product_id, quantity=x.quantity, attributes=x.attributes) for x in o.lines]
        before = initial.get(o.order_id)
        if before is not None and o.nested_in and before.store_id != o.store_id:
            # a nested copy that reuses an existing id for another store describes a new order
            notes.add(f"{where}: reuses the id of a pre-existing order of another store; read as a new order")
            before = None
        store_id = o.store_id
        if before is not None:
            same = before.store_id == o.store_id and lines_match(lines, before.products, options_of)
            if same or status_class(o.status) == "cancelled":
                note = o.note or ""
                out.append(GoldOrder(
                    kind="existing",
                    order_id=o.order_id,
                    order_type=o.order_type,
                    store_id=before.store_id,
                    status=o.status,
                    note=None if note.strip() == before.note.strip() else note,
                ))
                continue
            notes.add(f"{where}: the gold changes the dishes or store of a pre-existing order, which no tool "
                      "can do; it is scored as cancel and re-order")
            kind = "replaced"
        else:
            kind = "new"
        known = [x for x in lines if x.product_id in products]
        if known and len(known) < len(lines):
            missing = sorted({x.product_id for x in lines} - {x.product_id for x in known})
            notes.add(f"{where}: line(s) for {', '.join(missing)} dropped: not in the task's catalogue, so no agent "
                      "could order them")
            lines = known
        owners = {products.require(x.product_id).seller for x in lines if x.product_id in products}
        if len(owners) == 1 and store_id not in owners:
            (owner,) = owners
            notes.add(f"{where}: store_id {store_id} replaced by {owner}, the store all its products belong to")
            store_id = owner
        loc = o.location
        store = stores.get(store_id)
        minutes = None
        if loc is not None and store is not None:
            to = store.location
            minutes = delivery_minutes(haversine_m(loc.longitude, loc.latitude, to.longitude, to.latitude))
        disp = parse_time(o.dispatch_time) if o.dispatch_time else None
        deliv = parse_time(o.delivery_time) if o.delivery_time else None
        if disp is not None and disp < now:
            notes.add(f"{where}: dispatch_time {_fmt(disp)} lies before the task's now; the target is now")
            disp = now
        if deliv is not None and minutes is not None and deliv < now + timedelta(minutes=minutes):
            notes.add(f"{where}: delivery_time {_fmt(deliv)} is earlier than any order placed now can arrive; "
                      "the target is the earliest arrival")
            deliv = now + timedelta(minutes=minutes)
        if disp is not None and deliv is not None:
            rule = "both"
            if minutes is not None:
                gap = (deliv - disp).total_seconds() / 60.0
                # the agent sets only dispatch_time (delivery follows from the model); asking for
                # both is fair only when the gold pair leaves it half the tolerance either way
                if abs(gap - minutes) > TIME_TOLERANCE_MIN / 2:
                    notes.add(f"{where}: dispatch {_fmt(disp)} and delivery {_fmt(deliv)} are {gap:.0f} min apart but "
                              f"the delivery model gives {minutes:.0f} min; either time is accepted")
                    rule = "either"
        else:
            rule = "dispatch" if disp is not None else "delivery" if deliv is not None else "none"
        out.append(GoldOrder(
            kind=kind,  # type: ignore[arg-type]
            order_id=o.order_id,
            order_type=o.order_type,
            store_id=store_id,
            status=o.status,
            note=(o.note or "").strip() or None,
            address=loc.address if loc else None,
            longitude=loc.longitude if loc else None,
            latitude=loc.latitude if loc else None,
            dispatch_time=_fmt(disp) if disp else None,
            delivery_time=_fmt(deliv) if deliv else None,
            time_rule=rule,  # type: ignore[arg-type]
            lines=lines,
        ))
    return out


def _golden_address(world: DeliveryWorld, g: GoldOrder) -> str:
    """The address to order to: the gold one if the map knows it, else the known one at its coordinates."""
    table = world.table("locations").rows
    if g.address is not None and g.address in table:
        return g.address
    if g.longitude is not None and g.latitude is not None and table:
        near = min(table.values(), key=lambda x: haversine_m(g.longitude, g.latitude, x.longitude, x.latitude))
        if haversine_m(g.longitude, g.latitude, near.longitude, near.latitude) <= ADDRESS_TOLERANCE_M:
            return near.address
    if g.address is not None:
        return g.address
    return next(iter(table), "")


def _golden(state: GoldState, world: DeliveryWorld, task_key: str, language: str) -> list[str]:
    """Tool calls that turn the initial world into ``state``, then the agent's closing message."""
    now = world.clock.now
    initial = world.table("orders")
    stores = world.table("stores")
    actions: list[str] = []
    done: set[str] = set()
    for g in state.orders:
        if g.kind == "new" or g.order_id in done:
            continue
        done.add(g.order_id)
        before = initial.require(g.order_id)
        want = "cancelled" if g.kind == "replaced" else status_class(g.status)
        if want == "cancelled":
            if before.status != "cancelled":
                actions += [_action("get_delivery_order_status", order_id=g.order_id),
                            _action("cancel_delivery_order", order_id=g.order_id)]
            continue
        if g.note is not None:
            actions += [_action("get_delivery_order_detail", order_id=g.order_id),
                        _action("modify_delivery_order", order_id=g.order_id, note=g.note)]
        if want == "paid" and before.status == "unpaid":
            actions.append(_action("pay_delivery_order", order_id=g.order_id))
    created = 0
    for g in state.orders:
        if g.kind == "new" or g.kind == "replaced":
            address = _golden_address(world, g)
            # an order a rubric time item governs (time_rule "rubric", see time_rubric.py) carries
            # only delivery_time, the window's aim: dispatch so that the trip lands on it
            if g.dispatch_time is not None:
                dispatch = parse_time(g.dispatch_time)
            elif g.delivery_time is not None:
                store = stores.get(g.store_id)
                loc = world.table("locations").get(address)
                minutes = 0.0
                if store is not None and loc is not None:
                    to = store.location
                    minutes = delivery_minutes(haversine_m(loc.longitude, loc.latitude, to.longitude, to.latitude))
                dispatch = parse_time(g.delivery_time) - timedelta(minutes=minutes)
            else:
                dispatch = now
            dispatch = max(dispatch, now)
            args: dict[str, Any] = {
                "user_id": world.user_id,
                "store_id": g.store_id,
                "product_ids": [x.product_id for x in g.lines],
                "product_cnts": [x.quantity for x in g.lines],
                "address": address,
                "dispatch_time": _fmt(dispatch),
                "attributes": [x.attributes for x in g.lines],
                "note": g.note or "",
            }
            actions.append(_action("create_delivery_order", **args))
            created += 1
            # mirrors LifeWorld.new_order_id: <task_key>D<2-digit counter>, counting from 1 per episode
            oid = f"{task_key}D{created:02d}"
            cls = status_class(g.status)
            if cls == "paid":
                actions.append(_action("pay_delivery_order", order_id=oid))
            elif cls == "cancelled":
                actions += [_action("get_delivery_order_status", order_id=oid),
                            _action("cancel_delivery_order", order_id=oid)]
    actions.append(STOP_MESSAGE[language])
    return actions


def _convert_delivery(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    env = ctx.environment(VDeliveryEnvironment, raw.environment)
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _task_key(raw.id, set(env.orders))
    spec = _world_spec(raw, env, task_key, language, notes)
    world = _built(ctx, build_delivery_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: GoldState(orders=_gold_orders(st, k, world, state_notes)))
    return _vitabench_task(raw, "delivery", language, spec, world, states, notes, toolkit,
                           lambda s: _golden(s, world, task_key, language))
