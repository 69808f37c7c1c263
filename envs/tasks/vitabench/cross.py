"""VitaBench cross-domain tasks: the three domains' records in one task, each read by its own conversion."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.vitabench.common import (
    VCriteria,
    VDeliveryEnvironment,
    VExpectedState,
    VOrder,
    VTask,
    _as_dict,
    _built,
    _clear_task_key,
    _Context,
    _Model,
    _Notes,
    _unique_states,
    _vitabench_task,
    detect_language,
)
from servicegym.envs.tasks.vitabench.delivery import (
    _gold_orders,
    _golden,
    _world_spec,
)
from servicegym.envs.tasks.vitabench.instore import (
    _ENTRY_MODELS,
    VInstoreEnvironment,
    VInstoreExpectedState,
    _entry_kind,
    _instore_golden,
    _instore_shop_aliases,
    _instore_spec,
    _instore_state,
)
from servicegym.envs.tasks.vitabench.ota import (
    VOtaEnvironment,
    VOtaExpectedState,
    VOtaOrder,
    _ota_golden,
    _ota_spec,
    _ota_state,
)
from servicegym.rewards.vitabench import (
    GoldState,
)
from servicegym.world_state.cross import build_cross_world
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.travel import KINDS as TRAVEL_KINDS

# A cross-domain file has the single-domain schema with the union of the environment tables and
# required orders of any type; each part is read by its own domain's conversion above.
CROSS_NAMES = ("cross", "cross_domain", "cross-domain", "cross domain", "crossdomain", "cross-scenario",
               "cross_scenario", "cross scenario", "delivery_instore_ota", "multi-domain", "跨场景", "跨域")


# the prefixes of every id the 66 tools create (delivery; in-store orders, bookings, reservations; travel)
CROSS_PREFIXES = ("D", "I", "B", "R", *(k.order_prefix for k in TRAVEL_KINDS.values()))


_CROSS_ORDER_MODELS: dict[str, type[_Model]] = {"delivery": VOrder, "instore": VOrder, "travel": VOtaOrder}


def _order_domain(entry: Any) -> str:
    """The domain that reads an order (an order without ``order_type`` is a delivery order)."""
    kind = entry.get("order_type", "delivery") if isinstance(entry, dict) else "delivery"
    return "travel" if kind in TRAVEL_KINDS else "instore" if kind == "instore" else "delivery"


class VCrossExpectedState(_Model):
    # orders of every type, bookings and reservations; each is validated by its kind during conversion
    required_orders: list[dict[str, Any]] = []
    optional_orders: list[Any] = []
    state_rubrics: list[str] = []


class VCrossCriteria(VCriteria):
    expected_states: list[VCrossExpectedState]


class VCrossTask(VTask):
    evaluation_criteria: VCrossCriteria


def _cross_environments(raw: VTask, ctx: _Context) -> tuple[VDeliveryEnvironment, VInstoreEnvironment, VOtaEnvironment]:
    """The environment read as each domain's: the shared fields, that domain's tables and orders
    (a domain's tables may be absent)."""
    env = raw.environment
    orders = _as_dict(env.get("orders", {}), "order_id")
    split: dict[str, Any] = {"delivery": {}, "instore": {}, "travel": {}}
    if isinstance(orders, dict):
        for key, o in orders.items():
            split[_order_domain(o)][key] = o
    else:
        split["delivery"] = orders  # not a table of orders: the delivery model says why
    shared = {k: v for k, v in env.items() if k != "orders"}
    parts = []
    for model, domain, empty in ((VDeliveryEnvironment, "delivery", {"stores": {}}),
                                 (VInstoreEnvironment, "instore", {"shops": {}}), (VOtaEnvironment, "travel", {})):
        parts.append(ctx.environment(model, empty | shared | {"orders": split[domain]}))
    return parts[0], parts[1], parts[2]  # type: ignore[return-value]


def _cross_state(st: VCrossExpectedState, k: int, world: Any, aliases: dict[str, str], notes: _Notes,
                 ctx: _Context) -> GoldState:
    """One expected state: each required entry validated by its kind (for field paths into the
    file), then each domain's part normalised by that domain's conversion."""
    parts: dict[str, list[dict[str, Any]]] = {"delivery": [], "instore": [], "travel": []}
    for j, entry in enumerate(st.required_orders):
        kind = _entry_kind(entry)
        domain = _order_domain(entry) if kind == "order" else "instore"
        model = _CROSS_ORDER_MODELS[domain] if kind == "order" else _ENTRY_MODELS[kind]
        try:
            model.model_validate(entry)
        except ValidationError as err:
            raise ctx.validation(err, f"evaluation_criteria.expected_states.{k}.required_orders.{j}") from None
        parts[domain].append(entry)
    delivery = _gold_orders(VExpectedState.model_validate({"required_orders": parts["delivery"]}), k, world, notes)
    instore = _instore_state(VInstoreExpectedState(required_orders=parts["instore"]), k, world, aliases, notes, ctx)
    travel = _ota_state(VOtaExpectedState.model_validate({"required_orders": parts["travel"]}), k, world, notes)
    return GoldState(orders=delivery + instore.orders + travel.orders, visits=instore.visits)


def _cross_golden(state: GoldState, world: Any, task_key: str, language: str) -> list[str]:
    """Each domain's golden route for its part of ``state``, one after the other, then the closing message."""
    def part(types: tuple[str, ...], visits: bool = False) -> GoldState:
        return GoldState(orders=[g for g in state.orders if g.order_type in types], visits=state.visits if visits else [])

    return (_golden(part(("delivery",)), world, task_key, language)[:-1]
            + _instore_golden(part(("instore",), visits=True), world, task_key, language)[:-1]
            + _ota_golden(part(tuple(TRAVEL_KINDS)), world, task_key, language))


def _convert_cross(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    d_env, i_env, t_env = _cross_environments(raw, ctx)
    notes = _Notes()
    language = detect_language(raw.instructions)
    initial = set(d_env.orders) | set(i_env.orders) | set(t_env.orders) | set(i_env.books) | set(i_env.reservations)
    task_key = _clear_task_key(raw.id, initial, CROSS_PREFIXES)
    aliases = _instore_shop_aliases(i_env, notes)
    specs = [_world_spec(raw, d_env, task_key, language, notes),
             _instore_spec(raw, i_env, task_key, language, aliases, notes),
             _ota_spec(raw, t_env, task_key, language, notes)]
    # the shared fields are the same in every part; the tables and orders are each part's own
    spec = specs[0] | {k: v for s in specs[1:] for k, v in s.items() if k not in specs[0]}
    spec["orders"] = [o for s in specs for o in s["orders"]]
    world = _built(ctx, build_cross_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _cross_state(st, k, world, aliases, state_notes, ctx))
    return _vitabench_task(raw, "cross", language, spec, world, states, notes, toolkit,
                           lambda s: _cross_golden(s, world, task_key, language))
