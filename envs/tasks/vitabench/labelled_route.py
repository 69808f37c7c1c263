"""The task as the labelled variants see it (``labelled.py``): the plain-data context of a task
(``TaskContext``: places, products, pre-existing records, golden delivery times, expected states),
the golden route parsed into steps (``Step``, ``parse_route``), the records a time bound governs,
and the small helpers the variant builders of ``labelled_kinds.py`` and ``labelled_silent.py``
share (tool names, argument readers, time formatting, ``_v`` making a ``Variant``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_reading import (
    ItemRef,
    Label,
    TimeBound,
    _is_zh,
    _words,
    norm,
)

TIME_FMT = "%Y-%m-%d %H:%M:%S"


# ----- the task as the variants see it --------------------------------------------------------
@dataclass
class Place:
    """A store (delivery) or shop (in-store)."""

    name: str
    products: list[str] = field(default_factory=list)
    takes: frozenset[str] = frozenset({"book", "reservation"})
    hours: tuple[str, str] | None = None  # ("HH:MM", "HH:MM") opening hours; None: always open

    def open_at(self, t: datetime) -> bool:
        if self.hours is None:
            return True
        hhmm, (a, b) = t.strftime("%H:%M"), self.hours
        return a <= hhmm < b if a <= b else (hhmm >= a or hhmm < b)


@dataclass
class Product:
    name: str
    place: str
    options: list[str] = field(default_factory=list)
    stock: int | None = None  # None: unlimited


@dataclass
class Record:
    """A pre-existing order, booking or reservation of the task's initial database."""

    table: str  # "orders", "books" or "reservations"
    record_id: str
    place: str
    status: str
    user_id: str = ""
    names: list[str] = field(default_factory=list)  # its place's and products' names


@dataclass
class TaskContext:
    """What ``build_variants`` needs of a task: plain data, built by ``golden_context`` from an
    env or by hand in tests."""

    task_id: str
    nl_rubric: list[str]
    golden: list[str]
    now: datetime
    user_id: str = ""
    places: dict[str, Place] = field(default_factory=dict)
    products: dict[str, Product] = field(default_factory=dict)
    locations: dict[str, tuple[float, float]] = field(default_factory=dict)
    # golden step index of a create_delivery_order call -> (dispatch, delivery) of the order it made
    delivery_times: dict[int, tuple[datetime, datetime]] = field(default_factory=dict)
    # read-only tools (kind "read") -> their JSON-schema parameters
    read_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    write_tools: frozenset[str] = frozenset()
    # write tool -> the tools its pre-conditions may need called first (the env's tool graph): a
    # read one of the later writes may need is not independent, and is never moved
    depends: dict[str, frozenset[str]] = field(default_factory=dict)
    # the expected states as plain data, each {"orders": [...], "visits": [...]} (the gold
    # records: kind new/existing/replaced, ids, place, status, lines, note, times, party size)
    expected: list[dict[str, Any]] = field(default_factory=list)
    initial: list[Record] = field(default_factory=list)
    # table -> the id the next record created after the golden route gets
    next_ids: dict[str, str] = field(default_factory=dict)


@dataclass
class Variant:
    task_id: str
    kind: str
    label: Label
    actions: list[str]
    item: str = ""  # the rubric item that justified the label ("" for process-only kinds)
    item_index: int | None = None
    detail: str = ""


@dataclass
class Step:
    raw: str
    name: str | None = None  # None: a message to the user
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def is_call(self) -> bool:
        return self.name is not None

    def with_args(self, **changes: Any) -> Step:
        args = {**self.args, **changes}
        return Step(json.dumps({"name": self.name, "arguments": args}, ensure_ascii=False), self.name, args)


def parse_route(actions: list[str]) -> list[Step]:
    """The golden actions as steps (a JSON list of calls becomes one step per call)."""
    steps: list[Step] = []
    for a in actions:
        try:
            data = json.loads(a)
        except (json.JSONDecodeError, TypeError):
            steps.append(Step(a))
            continue
        calls = data if isinstance(data, list) else [data]
        if not all(isinstance(c, dict) and "name" in c for c in calls):
            steps.append(Step(a))
            continue
        for c in calls:
            args = c.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {}
            raw = a if len(calls) == 1 else json.dumps(c, ensure_ascii=False)
            steps.append(Step(raw, str(c["name"]), dict(args) if isinstance(args, dict) else {}))
    return steps


def _actions(steps: list[Step]) -> list[str]:
    return [s.raw for s in steps]


CREATE_DELIVERY = "create_delivery_order"
CREATE_INSTORE = "create_instore_product_order"
VISIT_TOOLS = ("instore_book", "instore_reservation", "instore_modify_reservation")
PLACE_CALLS = (CREATE_DELIVERY, CREATE_INSTORE, "instore_book", "instore_reservation")
NOTE_CALLS = (CREATE_DELIVERY, "modify_delivery_order")


def _place_arg(step: Step) -> str | None:
    return step.args.get("store_id") or step.args.get("shop_id")


def _line_products(step: Step) -> list[str]:
    if step.name == CREATE_DELIVERY:
        return list(step.args.get("product_ids") or [])
    if step.name == CREATE_INSTORE:
        return [step.args.get("product_id")] if step.args.get("product_id") else []
    return []


def _fmt(t: datetime) -> str:
    return t.strftime(TIME_FMT)


def _parse_dt(text: str) -> datetime | None:
    for fmt in (TIME_FMT, "%Y-%m-%d %H:%M"):
        try:
            return datetime.strptime(str(text).strip(), fmt)
        except ValueError:
            pass
    return None


def _haversine_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    lon1, lat1, lon2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371000.0 * math.asin(math.sqrt(h))


# ----- the records a time bound governs -------------------------------------------------------
@dataclass
class _Record:
    step: int
    time: datetime  # delivery time, or the visit time
    dispatch: datetime | None  # delivery orders only


def _records(ctx: TaskContext, steps: list[Step], visits: bool) -> list[_Record]:
    out: list[_Record] = []
    for i, s in enumerate(steps):
        if not visits and s.name == CREATE_DELIVERY and i in ctx.delivery_times:
            d, t = ctx.delivery_times[i]
            out.append(_Record(i, t, d))
        elif visits and s.name in VISIT_TOOLS:
            t = _parse_dt(s.args.get("time", ""))
            if t is not None:
                out.append(_Record(i, t, None))
    return out


def _bound_records(ctx: TaskContext, steps: list[Step], tb: TimeBound) -> list[_Record]:
    """The golden records an item's bound can be about: those the golden route puts in it."""
    recs = _records(ctx, steps, tb.visits)
    if not recs and not tb.visits:
        recs = _records(ctx, steps, True)
    slack = 30.0 if tb.relation in ("around", "exact") else 0.0
    return [r for r in recs if tb.holds(r.time, slack)]


def _move(step: Step, rec: _Record, new_time: datetime) -> Step:
    if rec.dispatch is not None:
        return step.with_args(dispatch_time=_fmt(rec.dispatch + (new_time - rec.time)))
    return step.with_args(time=_fmt(new_time))


# ----- shared by the builders -----------------------------------------------------------------
def _v(ctx: TaskContext, kind: str, label: Label, steps: list[Step], ref: ItemRef | TimeBound | None, detail: str) -> Variant:
    return Variant(ctx.task_id, kind, label, _actions(steps), ref.item if ref else "", ref.index if ref else None, detail)


_ATTR_SPLIT = re.compile(r"[,，;；、/|+]")


def _shares_content(a: str, b: str) -> bool:
    if _is_zh(a) or _is_zh(b):
        grams = lambda t: {t[i: i + 2] for i in range(len(t) - 1)}  # noqa: E731
        common = grams(norm(a).replace(" ", "")) & grams(norm(b).replace(" ", ""))
        return len(common - {"不要", "需要", "要求", "商家", "提供", "一份", "请给", "麻烦"}) >= 1 and len(common) >= 2
    stop = {"please", "the", "and", "a", "an", "for", "with", "request", "requesting", "note", "order", "merchant",
            "provide", "need", "needs", "include", "thanks", "thank", "you", "to", "of", "in", "it", "be"}
    return bool({w for w in _words(a) if len(w) >= 3} - stop & _words(b))


def _pay_of(steps: list[Step], i: int) -> tuple[str, str] | None:
    """(argument name, id) of the pay call right after step ``i``, if there is one."""
    if i + 1 < len(steps) and (steps[i + 1].name or "").startswith("pay_"):
        for key in ("order_id", "book_id"):
            if key in steps[i + 1].args:
                return key, steps[i + 1].args[key]
    return None
