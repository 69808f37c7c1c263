"""The best-state matching of VitaBench scoring: how the final world matches each expected state.

One order: ``content_mismatch`` (type, store, status class, lines, address, times, note; None when it
matches), with ``status_class`` / ``status_matches``, ``times_match`` (``TIME_TOLERANCE_MIN``) and
``address_matches``; one booking or reservation: ``visit_mismatch`` (``visit_status_class``,
``visit_time``). One state: ``evaluate_state`` matches the pre-existing gold records by id and the new
ones by content through an injective assignment (``best_assignment_pairs``, exhaustive backtracking;
among equally good ones, the records that meet the most compiled natural-language items of their gold
records win, ``_preferences``) and reports a ``StateResult``. ``best_state`` is the expected state the
final world matches best, computed once per episode view for the rubric items that share it. The rules
are in the docstring of ``rewards/vitabench.py``, which "the module docstring" below means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from servicegym.rewards.nl_rubric import ADDRESS_TOLERANCE_M, TimeWindow, parse_spec, spec_holds
from servicegym.rewards.rubric import EpisodeView
from servicegym.rewards.vitabench_facts import place_info, record_facts
from servicegym.rewards.vitabench_gold import TRAVEL_ORDER_TYPES, GoldOrder, GoldState, GoldVisit, parse_states, parsed
from servicegym.rewards.vitabench_lines import lines_match, norm_text, note_matches, travel_lines_match
from servicegym.world_state.core import World, haversine_m, parse_time
from servicegym.world_state.life.entities import Order

TIME_TOLERANCE_MIN = 10.0

StatusClass = Literal["unpaid", "paid", "cancelled"]


def status_class(status: str) -> StatusClass:
    """The equivalence class of an order status (see the module docstring)."""
    if status == "unpaid":
        return "unpaid"
    if status == "cancelled":
        return "cancelled"
    return "paid"


# ----- one order ----------------------------------------------------------------------------
def _minutes_apart(a: str, b: str) -> float | None:
    try:
        return abs((parse_time(a) - parse_time(b)).total_seconds()) / 60.0
    except ValueError:
        return None


def _time_ok(ours: str, target: str | None) -> bool:
    if target is None:
        return True
    gap = _minutes_apart(ours, target)
    return gap is not None and gap <= TIME_TOLERANCE_MIN


def times_match(gold: GoldOrder, order: Order) -> bool:
    d_ok = _time_ok(order.dispatch_time, gold.dispatch_time)
    v_ok = _time_ok(order.delivery_time, gold.delivery_time)
    if gold.time_rule == "either":
        return d_ok or v_ok
    if gold.time_rule in ("none", "rubric"):
        return True
    return d_ok and v_ok


def address_matches(gold: GoldOrder, order: Order) -> bool:
    if gold.address is None and gold.longitude is None:
        return True
    loc = order.location
    if loc is None:
        return False
    if gold.address is not None and norm_text(gold.address) == norm_text(loc.address):
        return True
    if gold.longitude is None or gold.latitude is None:
        return False
    return haversine_m(gold.longitude, gold.latitude, loc.longitude, loc.latitude) <= ADDRESS_TOLERANCE_M


def status_matches(gold_status: str, status: str, rubric: list[str]) -> bool:
    """Equivalent statuses; with the "payment" aspect (the rubric is silent about payment) only
    cancelled or not counts."""
    if "payment" in rubric:
        return (status == "cancelled") == (status_class(gold_status) == "cancelled")
    return status_class(status) == status_class(gold_status)


def content_mismatch(gold: GoldOrder, order: Order, options_of: dict[str, list[str]]) -> str | None:
    """Why ``order`` does not match the gold content, or None when it does (a comparison the
    gold's ``rubric`` aspects hand to the natural-language items is skipped)."""
    rubric = gold.rubric
    if order.order_type != gold.order_type:
        return f"order type {order.order_type} is not {gold.order_type}"
    if order.store_id != gold.store_id and "store" not in rubric:
        return f"store {order.store_id} is not {gold.store_id}"
    if not status_matches(gold.status, order.status, rubric):
        return f"status {order.status} is not equivalent to {gold.status}"
    if "store" in rubric:
        pass  # another store's products: the rubric's items about them decide
    elif gold.order_type in TRAVEL_ORDER_TYPES:
        if not travel_lines_match(gold.lines, order.products):
            return "dates, room/ticket/seat types or quantities differ"
    elif not lines_match(gold.lines, order.products, options_of, quantities="quantity" not in rubric):
        return "products, quantities or attributes differ"
    if "address" not in rubric and not address_matches(gold, order):
        return "delivery address differs"
    if not times_match(gold, order):
        return "dispatch or delivery time is off"
    if "note" not in rubric and gold.note is not None and not note_matches(gold.note, order.note):
        return f"note {order.note!r} is not like {gold.note!r}"
    return None


def _options_of(world: World) -> dict[str, list[str]]:
    if "products" not in world.tables:
        return {}
    return {p.product_id: list(getattr(p, "attributes", []) or []) for p in world.table("products")}


# ----- one state ----------------------------------------------------------------------------
@dataclass
class StateResult:
    """How well the final world matches one expected state."""

    index: int
    required: bool
    no_extras: bool
    untouched: bool
    matched: int
    problems: list[str] = field(default_factory=list)
    # "<table>:<gold id>" -> the key of the final record matched to that gold record
    assigned: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return (int(self.required) + int(self.no_extras) + int(self.untouched), self.matched)


def best_assignment(cands: list[list[int]], active: set[int]) -> tuple[int, frozenset[int]]:
    """An injective assignment of golds to candidates (``cands[k]``: the created records gold k
    may take): as many golds matched as possible, then as many ``active`` records covered.
    Returns the number matched and the records taken (exhaustive backtracking, pruned)."""
    n, pairs = best_assignment_pairs(cands, active)
    return n, frozenset(pairs.values())


def best_assignment_pairs(cands: list[list[int]], active: set[int],
                          prefer: dict[tuple[int, int], int] | None = None) -> tuple[int, dict[int, int]]:
    """``best_assignment`` with the assignment itself: gold index -> record index. Among equally
    good assignments, the one with the most ``prefer[(gold, record)]`` (the compiled rubric items
    of the gold that the record meets) wins."""
    best: list[Any] = [-1, -1, {}, -1]
    used: set[int] = set()
    pairs: dict[int, int] = {}
    prefer = prefer or {}

    def rec(k: int, count: int) -> None:
        if count + (len(cands) - k) < best[0]:
            return  # cannot beat the best assignment found so far
        if k == len(cands):
            cov = len(active & used)
            pref = sum(prefer.get(kv, 0) for kv in pairs.items())
            if (count, cov, pref) > (best[0], best[1], best[3]):
                best[0], best[1], best[2], best[3] = count, cov, dict(pairs), pref
            return
        for i in cands[k]:
            if i not in used:
                used.add(i)
                pairs[k] = i
                rec(k + 1, count + 1)
                del pairs[k]
                used.discard(i)
        rec(k + 1, count)

    rec(0, 0)
    return best[0], best[2]


# ----- bookings and reservations ------------------------------------------------------------
VISIT_TABLES = ("books", "reservations")


def visit_status_class(table: str, status: str) -> str:
    """The equivalence class of a booking's or reservation's status (see the module docstring)."""
    if table == "reservations":
        return "cancelled" if status == "cancelled" else "active"
    return status_class(status)


def visit_time(row: Any) -> str:
    return row.book_time if hasattr(row, "book_time") else row.reservation_time


def visit_mismatch(gold: GoldVisit, row: Any) -> str | None:
    """Why the booking/reservation ``row`` does not match the gold one, or None when it does."""
    if row.shop_id != gold.shop_id and "place" not in gold.rubric:
        return f"shop {row.shop_id} is not {gold.shop_id}"
    if "payment" in gold.rubric:
        if (row.status == "cancelled") != (visit_status_class(gold.table, gold.status) == "cancelled"):
            return f"status {row.status} is not equivalent to {gold.status}"
    elif visit_status_class(gold.table, row.status) != visit_status_class(gold.table, gold.status):
        return f"status {row.status} is not equivalent to {gold.status}"
    if gold.check_time and not _time_ok(visit_time(row), gold.time):
        return f"time {visit_time(row)} is not within {TIME_TOLERANCE_MIN:g} min of {gold.time}"
    if "count" not in gold.rubric and gold.customer_count is not None and row.customer_count != gold.customer_count:
        return f"party of {row.customer_count}, not {gold.customer_count}"
    return None


@dataclass
class _VisitResult:
    required: bool = True
    matched: int = 0
    extras: list[str] = field(default_factory=list)
    untouched: bool = True
    problems: list[str] = field(default_factory=list)
    assigned: dict[str, str] = field(default_factory=dict)


def _evaluate_visits(view: EpisodeView, state: GoldState, nl: dict[str, list[Any]] | None = None) -> _VisitResult:
    """The bookings and reservations part of ``evaluate_state`` (worlds without them: all true)."""
    res = _VisitResult()
    for table in VISIT_TABLES:
        if table not in view.world.tables:
            continue
        now, then = view.world.table(table), view.initial.table(table)
        golds = [g for g in state.visits if g.table == table]
        mentioned: set[str] = set()
        for g in golds:
            if g.kind == "new":
                continue
            mentioned.add(g.record_id)
            final = now.get(g.record_id)
            if final is not None and g.kind == "existing":
                res.assigned[f"{table}:{g.record_id}"] = g.record_id
            if final is None:
                why = "missing"
            elif g.kind == "replaced":
                why = None if final.status == "cancelled" else f"must be cancelled and made anew, is {final.status}"
            else:
                why = visit_mismatch(g, final)
            if why is not None:
                res.required = False
                res.problems.append(f"{g.record_id}: {why}")
            res.matched += int(why is None)
        new = [g for g in golds if g.kind in ("new", "replaced")]
        created = [r for r in now if r.key not in then.rows]
        active = {i for i, r in enumerate(created) if r.status != "cancelled"}
        cands = [[i for i, r in enumerate(created) if visit_mismatch(g, r) is None] for g in new]
        prefer = _preferences(view, table, [f"{table}:{g.record_id}" for g in new], created, cands, nl)
        n_new, pairs = best_assignment_pairs(cands, active, prefer)
        image = frozenset(pairs.values())
        res.assigned.update({f"{table}:{new[k].record_id}": created[i].key for k, i in pairs.items()})
        res.matched += n_new
        if n_new < len(new):
            res.required = False
            for g, row in zip(new, cands):
                if not row:
                    why = [visit_mismatch(g, r) for r in created if r.shop_id == g.shop_id]
                    res.problems.append(f"{g.record_id} ({g.kind}): no matching {table[:-1]}: "
                                        f"{why[0] if why else 'none at that shop'}")
        extras = [created[i].key for i in sorted(active - image)]
        if extras:
            res.extras += extras
            res.problems.append(f"unrequested {table}: {', '.join(extras)}")
        for key, before in then.rows.items():
            after = now.get(key)
            if key in mentioned:
                continue
            if after is None or (after.status, visit_time(after), after.customer_count) != (
                before.status, visit_time(before), before.customer_count
            ):
                res.untouched = False
                res.problems.append(f"{key}: pre-existing {table[:-1]} changed although no expected state asks for it")
    return res


def evaluate_state(view: EpisodeView, state: GoldState, index: int, initial_ids: set[str],
                   nl: dict[str, list[Any]] | None = None) -> StateResult:
    """How the final world matches one expected state; ``nl`` ("<table>:<gold id>" -> the compiled
    natural-language items about that gold record) breaks ties between equally good assignments."""
    now_orders = view.world.table("orders")
    then_orders = view.initial.table("orders")
    options_of = _options_of(view.initial)
    problems: list[str] = []
    matched = 0
    required = True
    mentioned: set[str] = set()

    assigned: dict[str, str] = {}
    for g in state.orders:
        if g.kind == "new":
            continue
        mentioned.add(g.order_id)
        final = now_orders.get(g.order_id)
        if final is not None and g.kind == "existing":
            assigned[f"orders:{g.order_id}"] = g.order_id
        if final is None:
            required = False
            problems.append(f"{g.order_id}: missing")
            continue
        if g.kind == "replaced":
            ok = final.status == "cancelled"
            if not ok:
                problems.append(f"{g.order_id}: must be cancelled and re-ordered, is {final.status}")
        else:
            ok = status_matches(g.status, final.status, g.rubric)
            if not ok:
                problems.append(f"{g.order_id}: status {final.status} is not equivalent to {g.status}")
            elif g.note is not None and "note" not in g.rubric and not note_matches(g.note, final.note):
                ok = False
                problems.append(f"{g.order_id}: note {final.note!r} is not like {g.note!r}")
            elif g.lines and g.order_type in TRAVEL_ORDER_TYPES and not travel_lines_match(g.lines, final.products):
                ok = False
                problems.append(f"{g.order_id}: dates, types or quantities differ from the gold's")
        required &= ok
        matched += int(ok)

    golds = [g for g in state.orders if g.kind in ("new", "replaced")]
    created = [o for o in now_orders if o.order_id not in initial_ids]
    active = {i for i, o in enumerate(created) if o.status != "cancelled"}
    cands: list[list[int]] = []
    for g in golds:
        row = []
        for i, o in enumerate(created):
            if content_mismatch(g, o, options_of) is None:
                row.append(i)
        cands.append(row)

    prefer = _preferences(view, "orders", [f"orders:{g.order_id}" for g in golds], created, cands, nl)
    n_new, pairs = best_assignment_pairs(cands, active, prefer)
    image = frozenset(pairs.values())
    assigned.update({f"orders:{golds[k].order_id}": created[i].order_id for k, i in pairs.items()})
    matched += n_new
    if n_new < len(golds):
        required = False
        for g, row in zip(golds, cands):
            if not row:
                # the closest created order's reason, for the report
                why = [content_mismatch(g, o, options_of) for o in created if o.store_id == g.store_id]
                reason = why[0] if why else "no order from that store"
                problems.append(f"{g.order_id} ({g.kind}): no matching order: {reason}")
    extras = [created[i].order_id for i in sorted(active - image)]
    if extras:
        problems.append(f"unrequested orders: {', '.join(extras)}")

    untouched = True
    for oid, before in then_orders.rows.items():
        if oid in mentioned:
            continue
        after = now_orders.get(oid)
        if after is None or after.status != before.status or after.note != before.note or after.products != before.products:
            untouched = False
            problems.append(f"{oid}: pre-existing order changed although no expected state asks for it")
    visits = _evaluate_visits(view, state, nl)
    return StateResult(index, required and visits.required, not extras and not visits.extras,
                       untouched and visits.untouched, matched + visits.matched, problems + visits.problems,
                       assigned | visits.assigned)


def _nl_of_state(params: dict[str, Any], index: int) -> dict[str, list[Any]]:
    """"<table>:<gold id>" -> the compiled natural-language items tied to it in expected state ``index``."""
    specs = params.get("nl_specs") or {}
    refs = (params.get("nl_refs") or {}).get(str(index)) or {}
    if not refs:
        return {}
    by_index = parsed("nl_specs", specs, lambda raw: {k: parse_spec(v) for k, v in raw.items()})
    return {key: [by_index[str(k)] for k in ks if str(k) in by_index] for key, ks in refs.items()}


def _preferences(view: EpisodeView, table: str, keys: list[str], created: list[Any], cands: list[list[int]],
                 nl: dict[str, list[Any]] | None) -> dict[tuple[int, int], int]:
    """(gold, record) -> how many of the gold's compiled items the record meets, for the candidates."""
    if not nl:
        return {}
    out: dict[tuple[int, int], int] = {}
    for k, (key, row) in enumerate(zip(keys, cands)):
        specs = nl.get(key)
        if not specs or len(row) < 2:
            continue
        for i in row:
            facts = record_facts(view.world, table, created[i])
            place = place_info(view.world, facts.place_id)
            out[(k, i)] = sum(spec_holds(sp, facts, place) for sp in specs if not isinstance(sp, TimeWindow))
    return out


def best_state(view: EpisodeView, params: dict[str, Any]) -> StateResult:
    """The expected state the final world matches best (ties: the first); computed once per view
    for the items that share the task's states (``EpisodeView.memo``)."""
    key = ("best_state", id(params["states"]), id(params.get("nl_specs")), id(params.get("nl_refs")))
    hit = view.memo.get(key)
    if hit is not None and hit[0] is params["states"]:
        return hit[1]
    best = _best_state(view, params)
    view.memo[key] = (params["states"], best)
    return best


def _best_state(view: EpisodeView, params: dict[str, Any]) -> StateResult:
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    best: StateResult | None = None
    for i, state in enumerate(parse_states(params)):
        res = evaluate_state(view, state, i, initial_ids, _nl_of_state(params, i))
        if best is None or res.key > best.key:
            best = res
        if res.key[0] == 3:
            break
    if best is None:
        raise ValueError("a VitaBench rubric item needs at least one expected state")
    return best
