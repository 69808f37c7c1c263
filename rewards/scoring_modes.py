"""What VitaBench-file scoring adds to the gold matching of ``rewards/vitabench.py``.

- ``no_unrequested_writes``: the one check beyond the rubric's text, counted under both scoring
  modes (``scoring="rubric"`` and ``"strict"``): no write the user never asked for
  (``unrequested_writes``);
- ``item_report``: what a finished episode reports about each natural-language item (how it was
  checked, its verdict) as flat ``info["score"]`` components and as the record's details.

The gold matching's own items (``required_orders``, ``no_unrequested_orders``, ``untouched_orders``)
are registered ``strict_only`` there; ``rewards/rubric.py`` says which items count in which mode.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from servicegym.rewards.nl_rubric import TimeWindow, describe_spec, parse_spec
from servicegym.rewards.rubric import EpisodeView, check
from servicegym.rewards.vitabench import VISIT_TABLES, GoldState, parse_states, parsed, visit_time
from servicegym.world_state.life.entities import Order


# ----- unrequested writes (both scoring modes) ------------------------------------------------
def _order_changed(before: Order, after: Order | None) -> bool:
    return after is None or (after.status, after.note, after.products) != (before.status, before.note, before.products)


def _visit_changed(before: Any, after: Any) -> bool:
    return after is None or (after.status, visit_time(after), after.customer_count) != (
        before.status, visit_time(before), before.customer_count)


def _unrequested_in_state(view: EpisodeView, state: GoldState, initial_ids: set[str], named: set[str]) -> list[str]:
    """The writes of the episode that ``state`` does not ask for (see ``unrequested_writes``)."""
    out: list[str] = []
    groups: list[tuple[str, Any, Any, dict[str, Any], Counter[str], Any]] = [(
        "orders", view.world.table("orders"), view.initial.table("orders"),
        {g.order_id: g for g in state.orders if g.kind != "new"},
        Counter(g.order_type for g in state.orders if g.kind != "existing"), _order_changed)]
    for table in VISIT_TABLES:
        if table in view.world.tables:
            golds = [g for g in state.visits if g.table == table]
            groups.append((table, view.world.table(table), view.initial.table(table),
                           {g.record_id: g for g in golds if g.kind != "new"},
                           Counter(table for g in golds if g.kind != "existing"), _visit_changed))
    for table, now, then, mentioned, wanted, changed in groups:
        before_ids = initial_ids if table == "orders" else set(then.rows)
        made: dict[str, list[str]] = {}
        for row in now:
            if row.key not in before_ids and row.status != "cancelled":
                made.setdefault(row.order_type if table == "orders" else table, []).append(row.key)
        for what, keys in made.items():
            extra = len(keys) - wanted.get(what, 0)
            if extra > 0:
                noun = f"{what} order" if table == "orders" else table[:-1]
                out += [f"{noun} {k}: one more {noun} than the task asks for" for k in keys[-extra:]]
        for key, before in then.rows.items():
            after = now.get(key)
            if not changed(before, after):
                continue
            gold = mentioned.get(key)
            if gold is None:
                if key not in named:
                    out.append(f"{table[:-1]} {key}: changed ({getattr(after, 'status', 'removed')}) although the task "
                               "never asks for it")
            elif (after is not None and after.status == "cancelled" and before.status != "cancelled"
                  and gold.kind == "existing" and gold.status != "cancelled"):
                out.append(f"{table[:-1]} {key}: cancelled although the task asks only to change it")
    return out


def unrequested_writes(view: EpisodeView, params: dict[str, Any]) -> list[str]:
    """The writes of the episode the user never asked for, each described; empty when there are
    none. Under either scoring mode this is a component of its own (``no_unrequested_writes``):

    - a record created and left active beyond the number of new records of its kind (an order of
      each order type, a booking, a reservation) that an expected state creates: an extra order is
      a charge nobody asked for, whatever its content;
    - a pre-existing record changed (status, note, lines; a visit's time or party size) that no
      expected state mentions and no rubric item names by id (``named_ids``);
    - a pre-existing record cancelled where the expected state keeps it active (asks only to pay
      or change it).

    Content is not compared: which store, products, times or notes were right is the rubric's
    business. The expected state that leaves the fewest writes unrequested is the one used."""
    key = ("unrequested", id(params["states"]))
    hit = view.memo.get(key)
    if hit is not None and hit[0] is params["states"]:
        return hit[1]
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    named = set(params.get("named_ids") or ())
    best: list[str] | None = None
    for state in parse_states(params):
        found = _unrequested_in_state(view, state, initial_ids, named)
        if best is None or len(found) < len(best):
            best = found
        if not best:
            break
    out = best or []
    view.memo[key] = (params["states"], out)
    return out


@check("no_unrequested_writes")
def no_unrequested_writes(view: EpisodeView, params: dict[str, Any]) -> bool:
    """No write the user never asked for (``unrequested_writes``)."""
    return not unrequested_writes(view, params)



# ----- what a finished episode reports about each natural-language item ---------------------------
def _check_text(params: dict[str, Any]) -> str:
    if "window" in params:
        return describe_spec(parsed("window", params["window"], TimeWindow.model_validate))
    if "spec" in params:
        return describe_spec(parsed("spec", params["spec"], parse_spec))
    return ""


def item_report(task: Any, score: dict[str, Any], view: EpisodeView, judged: bool = False,
                scoring: str = "rubric") -> dict[str, Any]:
    """Each natural-language rubric item of a VitaBench-file task: how it was checked and its
    verdict, added to ``score`` as flat components, and returned as details for the record.

    ``score`` gains ``item/<k>`` (1.0 / 0.0) for every item ``k`` of ``task.nl_rubric`` that was
    checked, by code (its ``nl_<kind>_<k>`` rubric items, all of them) or by the LLM judge
    (``judge/rubric_<k>``, when ``judged``); ``rubric_items_code``, ``rubric_items_judge``,
    ``rubric_items_unchecked`` (items neither read by code nor given to a judge: never passed,
    never handed to the gold, just counted), ``rubric_nl_coverage`` (the share read by code) and
    ``unrequested_writes`` (how many). The returned dict has ``scoring``, ``items`` (``index``,
    ``text``, ``source``: ``code`` / ``judge`` / ``unchecked``, ``checks``: the rubric items and what
    each checks, ``verdict``: true, false or null) and ``unrequested_writes`` (each described)."""
    coded: dict[int, list[Any]] = {}
    for item in task.rubric:
        k = (item.params or {}).get("nl_index")
        if item.kind.startswith("nl_") and isinstance(k, int) and item.weight > 0:
            coded.setdefault(k, []).append(item)
    items: list[dict[str, Any]] = []
    counts = {"code": 0, "judge": 0, "unchecked": 0}
    for k, text in enumerate(task.nl_rubric):
        entry: dict[str, Any] = {"index": k, "text": text}
        if k in coded:
            verdict = all(score.get(f"rubric/{i.name}", 0.0) for i in coded[k])
            entry.update(source="code", verdict=verdict,
                         checks=[{"name": i.name, "check": _check_text(i.params)} for i in coded[k]])
        elif judged and f"judge/rubric_{k}" in score:
            verdict = bool(score[f"judge/rubric_{k}"])
            entry.update(source="judge", verdict=verdict, checks=[])
        else:
            verdict = None
            entry.update(source="unchecked", verdict=None, checks=[])
        counts[entry["source"]] += 1
        if verdict is not None:
            score[f"item/{k}"] = float(verdict)
        items.append(entry)
    writes = next((unrequested_writes(view, i.params) for i in task.rubric if i.kind == "no_unrequested_writes"), [])
    n = len(task.nl_rubric)
    score.update(rubric_items_code=float(counts["code"]), rubric_items_judge=float(counts["judge"]),
                 rubric_items_unchecked=float(counts["unchecked"]),
                 rubric_nl_coverage=counts["code"] / n if n else 1.0, unrequested_writes=float(len(writes)))
    return {"scoring": scoring, "items": items, "unrequested_writes": writes}
