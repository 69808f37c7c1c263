"""Running routes of the labelled check set (``labelled.py``) through a VitaBench env:
``golden_context`` runs a task's golden route and collects the ``TaskContext`` its variants need
(catalogue, addresses, golden delivery times, expected states, pre-existing records, the ids the
next records get); ``_run`` plays a list of actions to the end; ``make_env`` makes the env with
or without a ``scoring`` argument.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_route import (
    CREATE_DELIVERY,
    Place,
    Product,
    Record,
    TaskContext,
    _parse_dt,
    parse_route,
)


# ----- running against an env -----------------------------------------------------------------
def _run(env: Any, task_id: str, actions: list[str], seed: int) -> dict[str, Any]:
    env.reset(seed=seed, options={"task_id": task_id})
    info: dict[str, Any] = {}
    ended = False
    for a in actions:
        _obs, _r, term, trunc, info = env.step(a)
        if term or trunc:
            ended = True
            break
    if not ended:
        _obs, _r, term, trunc, info = env.step("###STOP###")
    return info


def golden_context(env: Any, task_id: str, seed: int = 0) -> tuple[TaskContext, dict[str, Any]]:
    """Run the task's golden route through ``env`` (the unwrapped env's world is read) and return
    the context the variants need, and the final info of that run (the oracle)."""
    u = env.unwrapped
    task = u.source.get(task_id)
    env.reset(seed=seed, options={"task_id": task_id})
    w0 = u.world
    initial_orders = set(w0.table("orders").rows) if "orders" in w0.tables else set()
    now = w0.clock.now
    places: dict[str, Place] = {}
    products: dict[str, Product] = {}
    if "stores" in w0.tables:
        for s in w0.table("stores"):
            places[s.store_id] = Place(s.name, hours=_hours(s))
        for p in w0.table("products"):
            seller = getattr(p, "seller", p.store_id)
            products[p.product_id] = Product(p.name, seller, list(getattr(p, "attributes", []) or []),
                                             getattr(p, "quantity", None))
            if seller in places:
                places[seller].products.append(p.product_id)
    if "shops" in w0.tables:
        for s in w0.table("shops"):
            takes = frozenset(k for k, on in (("book", s.enable_book), ("reservation", s.enable_reservation)) if on)
            places[s.shop_id] = Place(s.shop_name, takes=takes, hours=_hours(s))
        for p in w0.table("shop_products"):
            products[p.product_id] = Product(p.name, p.shop_id, stock=getattr(p, "quantity", None))
            if p.shop_id in places:
                places[p.shop_id].products.append(p.product_id)
    initial = _initial_records(w0, places)
    locations = {loc.address: (loc.longitude, loc.latitude) for loc in w0.table("locations")} if "locations" in w0.tables else {}
    specs = u.toolkit.specs
    schemas = {}
    for t in u.tool_schemas() if hasattr(u, "tool_schemas") else []:
        fn = t.get("function", t)
        schemas[fn["name"]] = fn.get("parameters") or {}
    read_tools = {n: schemas.get(n, {}) for n, s in specs.items() if s.kind == "read"}
    write_tools = frozenset(n for n, s in specs.items() if s.kind == "write")
    depends = {n: frozenset(a for p in s.pre for a in p.after) for n, s in specs.items() if s.kind == "write"}
    user_id = getattr(w0, "user_id", "") or ""
    info = _run(env, task_id, list(task.golden_actions), seed)
    steps = parse_route(list(task.golden_actions))
    delivery_times: dict[int, tuple[datetime, datetime]] = {}
    w = u.world
    if "orders" in w.tables:
        made = [o for o in w.table("orders") if o.order_id not in initial_orders and o.order_type == "delivery"]
        made.sort(key=lambda o: o.order_id)
        creates = [i for i, s in enumerate(steps) if s.name == CREATE_DELIVERY]
        if len(made) == len(creates):
            for i, o in zip(creates, made):
                d, t = _parse_dt(o.dispatch_time), _parse_dt(o.delivery_time)
                if d is not None and t is not None:
                    delivery_times[i] = (d, t)
    next_ids: dict[str, str] = {}
    probe = w.copy()
    for table, prefix in _ID_PREFIXES.get(getattr(u, "domain", ""), ()):
        if table in probe.tables:
            next_ids[table] = probe.new_order_id(prefix, table)
    ctx = TaskContext(task_id, list(task.nl_rubric or []), list(task.golden_actions), now, user_id, places, products,
                      locations, delivery_times, read_tools, write_tools, depends, expected_states(task), initial,
                      next_ids)
    return ctx, info


# the id prefix of the records each domain's tools create (``world.new_order_id``)
_ID_PREFIXES = {
    "delivery": (("orders", "D"),),
    "instore": (("orders", "I"), ("books", "B"), ("reservations", "R")),
}


def _hours(place: Any) -> tuple[str, str] | None:
    a, b = getattr(place, "open_time", None), getattr(place, "close_time", None)
    return (a, b) if a and b else None


def expected_states(task: Any) -> list[dict[str, Any]]:
    """The task's expected states as plain data (the parameters of its order-matching item: the
    gold records, not any reading of the rubric)."""
    for item in getattr(task, "rubric", None) or []:
        params = getattr(item, "params", None) or {}
        if isinstance(params.get("states"), list):
            return [dict(st) for st in params["states"] if isinstance(st, dict)]
    return []


def _initial_records(w0: Any, places: dict[str, Place]) -> list[Record]:
    out: list[Record] = []
    if "orders" in w0.tables:
        for o in w0.table("orders"):
            names = [ln.name for ln in o.products if ln.name] + [ln.store_name for ln in o.products if ln.store_name]
            if o.store_id in places:
                names.append(places[o.store_id].name)
            out.append(Record("orders", o.order_id, o.store_id, o.status, o.user_id, list(dict.fromkeys(names))))
    for table, key, user in (("books", "book_id", "customer_id"), ("reservations", "reservation_id", "customer_id")):
        if table in w0.tables:
            for b in w0.table(table):
                names = [places[b.shop_id].name] if b.shop_id in places else []
                out.append(Record(table, getattr(b, key), b.shop_id, b.status, getattr(b, user, ""), names))
    return out


def make_env(env_id: str, path: str, scoring: str) -> tuple[Any, bool]:
    """``gymnasium.make(env_id, tasks=path, scoring=scoring)``, or without ``scoring`` when the env
    takes no such argument; the env and whether ``scoring`` was passed."""
    import warnings

    import gymnasium as gym

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return gym.make(env_id, tasks=str(path), scoring=scoring), True
        except TypeError as err:
            if "scoring" not in str(err):
                raise
            return gym.make(env_id, tasks=str(path)), False
