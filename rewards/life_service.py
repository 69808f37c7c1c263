"""Rubric checks over a life-service world's orders (delivery now; in-store and travel reuse them).

"New orders" are those created during the episode; "active" ones are not cancelled. Checks on
the content of an order apply to every new active order of the task's type, so an extra order
that breaks a constraint fails it too.
"""

from __future__ import annotations

import re
from typing import Any

from simulators.scripted_user import asks_confirmation
from world_state.core import haversine_m, parse_time
from world_state.life.entities import Order

from .rubric import EpisodeView, check


def new_active_orders(view: EpisodeView, order_type: str = "delivery") -> list[Order]:
    before = view.initial.table("orders").rows
    return [
        o
        for o in view.world.table("orders")
        if o.order_id not in before and o.order_type == order_type and o.status != "cancelled"
    ]


def _orders(view: EpisodeView, params: dict[str, Any]) -> list[Order]:
    return new_active_orders(view, params.get("order_type", "delivery"))


def _all(view: EpisodeView, params: dict[str, Any], pred) -> bool:
    orders = _orders(view, params)
    return bool(orders) and all(pred(o) for o in orders)


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
    stores = view.world.table("stores")
    return _all(view, params, lambda o: (s := stores.get(o.store_id)) is not None and s.score >= params["min_score"])


@check("store_tag")
def store_tag(view: EpisodeView, params: dict[str, Any]) -> bool:
    """The store carries ``tag``."""
    stores = view.world.table("stores")
    tag = _norm(params["tag"])
    return _all(view, params, lambda o: (s := stores.get(o.store_id)) is not None and tag in map(_norm, s.tags))


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
