"""A labelled check set for the VitaBench scorer, derived from the rubric text alone.

For each loaded VitaBench task this module builds variants of the task's golden route (the JSON
tool calls in ``task.golden_actions``) and labels each one ``accept`` or ``reject`` by reading the
task's natural-language rubric (``task.nl_rubric``) with its own regular expressions and keyword
lists (``labelled_reading.py``). It never asks the scorer and never imports its parser (``rewards/nl_rubric/``): the
labels are an independent reading, so comparing them with ``info["success"]`` measures how far the
code scorer agrees with the rubric.

Legal alternatives (label ``accept``)
    ``reorder``        the independent golden read calls (no later write's pre-conditions name
                       their tool, and no item requires them) moved after the last call, or two
                       adjacent order blocks (create, then pay) from different places swapped;
    ``extra_reads``    read-only calls (``ToolSpec.kind == "read"``) inserted;
    ``around_shift``   for an item "around T" (``左右``): the delivery (or visit) the golden route
                       puts near T moved to a few minutes (at most ``AROUND_SHIFT_MIN``) off T;
    ``other_product``  another product of the same store, only where no rubric item says anything
                       but addresses, times, notes and cancellations (conservative: rare).

Targeted violations (label ``reject``)
    ``late_delivery``      a delivery (or visit) 3 hours after a "before / around / between / at"
                           bound of an item;
    ``wrong_address``      another address of the task where an item names the delivery address;
    ``wrong_store``        another store (shop) of the catalogue where an item names the store;
    ``wrong_product``      another product of the same store where an item names the product;
    ``wrong_option``       another option of the product where an item names the chosen option;
    ``contradicting_note`` a note saying the opposite of the note an item asks for;
    ``missing_query``      the golden read call dropped where an item says it must be queried.

Rubric-silent deviations (label ``accept`` under ``scoring="rubric"``; out of scope under
``"strict"``, which also asks for the gold end state): the golden route changed in one detail the
gold holds but no rubric item mentions. Each is checked against every expected state (the gold
must hold the detail, in every state, for every gold record the changed call may be matched to,
and the variant must differ from it) and built only when no item says anything near the detail
(task-wide, so an item about another order suppresses it too):
    ``silent_time``     the delivery's dispatch time (or the visit's time) moved to "now" or a
                        feasible time at least ``SILENT_TIME_MIN`` minutes off the gold, where no
                        item has a date, a clock time or a word about time (``_TIME_WORDS``);
    ``silent_quantity`` a line's quantity (or a visit's party size) raised by one, where no item
                        has a digit, a number word, a measure, a price or a word about people;
    ``silent_option``   another catalogue option of a line's product, where no item uses a word
                        of any of the product's options nor a word about options, taste,
                        temperature, size or ingredients;
    ``silent_note``     the gold's note left empty, where no item mentions notes, the merchant or
                        rider, what notes ask for (cutlery, herbs, "no ..."), nor shares a word with it;
    ``silent_payment``  an order (or booking fee) the golden route pays left unpaid, where no item
                        mentions paying, buying, a status, validity, or success or completion
                        (outside a cancellation).
``silent_store`` is not built: a store choice touches distance, times and menus, and the text
cannot show conservatively that no item depends on it.

Unrequested writes (label ``reject`` under both scorings): a write the user never asked for.
    ``extra_order``        the golden route plus one order of a catalogue product no expected state
                           holds and no item names (paid when the golden route pays its orders);
    ``unrequested_cancel`` a pre-existing record (order, booking, reservation) that no expected
                           state holds and no item names (id, place or product), looked up and
                           cancelled; none where a cancellation item names no id;
    ``extra_visit``        the golden route's booking or reservation made a second time, where no
                           expected state has more of them at that shop.
The three groups (``TARGETED_KINDS``, ``SILENT_KINDS``, ``WRITE_KINDS``) are sampled separately, each
up to ``max_per_task``, so the figures of the targeted kinds stay comparable with earlier runs. A
variant of the new kinds whose run has more tool errors than the golden route's is infeasible and
left out of the figures (``Outcome.feasible``).

A kind yields a variant only when the text justifies it; each variant carries the item (and its
index) that did. Mentions are read conservatively: a name or option counts only in a clause
without negation before it and without example or preference words ("such as", "like",
"preferably", ``如``, ``等``, ``优先``), and not in an item about cancelling an existing order.

``golden_context`` runs a task's golden route through an env and collects what the variants need
(catalogue, addresses, the golden delivery times, the expected states as plain data, the
pre-existing records and the ids the next records will get); ``build_variants`` is pure (tests feed it
hand-written contexts); ``check_file`` runs everything for one task file.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_reading import (  # the labeller's reading of rubric text
    _ADDRESS,
    _CANCEL,
    _DATE_RES,
    _ORDER_REF,
    _TIME_H,
    _TIME_HM,
    _TIME_ZH,
    QUERY_TARGETS,
    ItemRef,
    Label,
    Reading,
    TimeBound,
    _address_value,
    _bracketless,
    _clause_around,
    _find_dates,
    _find_times,
    _is_zh,
    _new_tokens,
    _phrase_spans,
    _words,
    contradicting_note,
    named_anywhere,
    norm,
    option_classes,
    positive_mention,
    read_rubric,
)
from servicegym.envs.tasks.vitabench.labelled_reading import (
    parse_time_bound as parse_time_bound,
)
from servicegym.envs.tasks.vitabench.labelled_reading import (
    query_target as query_target,
)
from servicegym.envs.tasks.vitabench.labelled_reading import (
    rubric_kinds as rubric_kinds,
)

LEGAL_KINDS = ("reorder", "extra_reads", "around_shift", "other_product")
VIOLATION_KINDS = (
    "late_delivery",
    "wrong_address",
    "wrong_store",
    "wrong_product",
    "wrong_option",
    "contradicting_note",
    "missing_query",
)
TARGETED_KINDS = LEGAL_KINDS + VIOLATION_KINDS
SILENT_KINDS = ("silent_time", "silent_quantity", "silent_option", "silent_note", "silent_payment")
WRITE_KINDS = ("extra_order", "unrequested_cancel", "extra_visit")
KINDS = TARGETED_KINDS + SILENT_KINDS + WRITE_KINDS
# the label of each kind; the silent kinds' label holds under scoring="rubric" only
LABELS: dict[str, Label] = {k: ("accept" if k in LEGAL_KINDS + SILENT_KINDS else "reject") for k in KINDS}
# the order in which a task's variants are kept when a group has more kinds than the cap
PRIORITY = (
    "missing_query",
    "other_product",
    "around_shift",
    "contradicting_note",
    "wrong_option",
    "reorder",
    "wrong_product",
    "wrong_store",
    "late_delivery",
    "extra_reads",
    "wrong_address",
    "silent_time",
    "silent_option",
    "silent_note",
    "silent_quantity",
    "silent_payment",
    "extra_order",
    "unrequested_cancel",
    "extra_visit",
)
MAX_PER_TASK = 6
SILENT_TIME_MIN = 45  # a silent time change lands at least this far from every gold time
AROUND_SHIFT_MIN = 5  # a legal "around T" variant lands at most this many minutes off T
LATE_BY_MIN = 180  # a late variant lands this long after the bound
FAR_ADDRESS_M = 1000.0  # a wrong address is at least this far from the right one
TIME_FMT = "%Y-%m-%d %H:%M:%S"
SCORINGS = ("rubric", "strict")


def group_of(kind: str) -> str:
    """``"targeted"`` (the legal alternatives and targeted violations), ``"silent"`` or ``"write"``."""
    return "silent" if kind in SILENT_KINDS else "write" if kind in WRITE_KINDS else "targeted"



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


# ----- one builder per kind -------------------------------------------------------------------
def _v(ctx: TaskContext, kind: str, label: Label, steps: list[Step], ref: ItemRef | TimeBound | None, detail: str) -> Variant:
    return Variant(ctx.task_id, kind, label, _actions(steps), ref.item if ref else "", ref.index if ref else None, detail)


def _late_delivery(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for tb in r.times:
        if tb.relation == "after":
            continue
        recs = _bound_records(ctx, steps, tb)
        if not recs:
            continue
        target = tb.end + timedelta(minutes=LATE_BY_MIN)
        new = list(steps)
        for rec in recs:
            new[rec.step] = _move(steps[rec.step], rec, target)
        out.append(_v(ctx, "late_delivery", "reject", new, tb,
                      f"{len(recs)} record(s) moved to {_fmt(target)}, {LATE_BY_MIN} min after the {tb.relation} bound"))
    return out


def _around_shift(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for tb in r.times:
        if tb.relation != "around":
            continue
        recs = [rec for rec in _records(ctx, steps, tb.visits) if tb.holds(rec.time, 15.0)]
        if not recs:
            continue
        others = [o for o in r.times if not o.same(tb)]
        for off in (4, -4, 3, -3, 2, -2):
            new_t = tb.start + timedelta(minutes=off)
            ok = True
            for rec in recs:
                if rec.dispatch is not None and rec.dispatch + (new_t - rec.time) < ctx.now:
                    ok = False
                for o in others:
                    if not o.holds(rec.time, 15.0):
                        continue  # the golden record is not under that bound
                    if o.relation == "exact" or (o.relation == "around" and not o.holds(new_t, AROUND_SHIFT_MIN)):
                        ok = False
                    elif o.relation != "around" and not o.holds(new_t):
                        ok = False
            if not ok:
                continue
            new = list(steps)
            for rec in recs:
                new[rec.step] = _move(steps[rec.step], rec, new_t)
            out.append(_v(ctx, "around_shift", "accept", new, tb, f"{len(recs)} record(s) moved to {_fmt(new_t)} ({off:+d} min)"))
            break
    return out


def _wrong_address(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for ref in r.addresses:
        want = norm(ref.value)
        hits = []
        for i, s in enumerate(steps):
            if s.name != CREATE_DELIVERY:
                continue
            got = norm(s.args.get("address", ""))
            if got and (got == want or got in want or (len(want) >= 12 and want in got)):
                hits.append(i)
        if not hits:
            continue
        golden_addr = steps[hits[0]].args["address"]
        here = ctx.locations.get(golden_addr)
        if here is None:
            continue
        alt = next(
            (a for a, pos in sorted(ctx.locations.items())
             if norm(a) not in want and want not in norm(a) and _haversine_m(here, pos) >= FAR_ADDRESS_M),
            None,
        )
        if alt is None:
            continue
        new = list(steps)
        for i in hits:
            new[i] = steps[i].with_args(address=alt)
        out.append(_v(ctx, "wrong_address", "reject", new, ref, f"address -> {alt!r}"))
    return out


def _named_places(ctx: TaskContext) -> dict[str, ItemRef]:
    """Places an item asks for by name (full name, or the name without its bracketed branch when
    that is unique and long enough)."""
    return _named(ctx, {k: p.name for k, p in ctx.places.items()})


def _named_products(ctx: TaskContext) -> dict[str, ItemRef]:
    return _named(ctx, {k: p.name for k, p in ctx.products.items()})


def _named(ctx: TaskContext, names: dict[str, str]) -> dict[str, ItemRef]:
    out: dict[str, ItemRef] = {}
    for key, name in names.items():
        others = [n for k, n in names.items() if k != key and norm(n) != norm(name)]
        shadows = [n for n in others if norm(name) in norm(n)]
        for phrase in _name_forms(name, others):
            for i, item in enumerate(ctx.nl_rubric):
                if key not in out and positive_mention(item, phrase, shadows=shadows):
                    out[key] = ItemRef(i, item, phrase)
    return out


def _name_forms(name: str, others: list[str]) -> list[str]:
    """The full name, and the bracket-less name when it is long and no other name contains it."""
    forms = [name]
    base = _bracketless(name)
    long_enough = len(base) >= 4 if _is_zh(base) else len(base.split()) >= 2 and len(base) >= 8
    if base and base != norm(name) and long_enough and not any(base in norm(o) for o in others):
        forms.append(base)
    return forms


def _wrong_store(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    named = _named_places(ctx)
    out = []
    for pid, ref in named.items():
        hits = [i for i, s in enumerate(steps) if s.name in PLACE_CALLS and _place_arg(s) == pid]
        if not hits:
            continue
        kinds_needed = {s.name for s in (steps[i] for i in hits)}
        alt = None
        for qid, q in sorted(ctx.places.items()):
            if qid == pid or qid in named or norm(q.name) == norm(ctx.places[pid].name):
                continue
            if {CREATE_DELIVERY, CREATE_INSTORE} & kinds_needed and not q.products:
                continue
            if "instore_book" in kinds_needed and "book" not in q.takes:
                continue
            if "instore_reservation" in kinds_needed and "reservation" not in q.takes:
                continue
            alt = qid
            break
        if alt is None:
            continue
        q = ctx.places[alt]
        new = list(steps)
        for i in hits:
            s = steps[i]
            if s.name == CREATE_DELIVERY:
                new[i] = s.with_args(store_id=alt, product_ids=[q.products[0]], product_cnts=[1], attributes=[""])
            elif s.name == CREATE_INSTORE:
                new[i] = s.with_args(shop_id=alt, product_id=q.products[0])
            else:
                new[i] = s.with_args(shop_id=alt)
        out.append(_v(ctx, "wrong_store", "reject", new, ref, f"{ctx.places[pid].name!r} -> {q.name!r}"))
    return out


def _wrong_product(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    named = _named_products(ctx)
    out = []
    for prod_id, ref in named.items():
        hits = [i for i, s in enumerate(steps) if prod_id in _line_products(s)]
        if not hits:
            continue
        s0 = steps[hits[0]]
        place = _place_arg(s0)
        own = norm(ctx.products[prod_id].name)
        in_call = set(_line_products(s0))
        alt = next(
            (q for q in (ctx.places[place].products if place in ctx.places else [])
             if q not in in_call and q not in named and q in ctx.products
             and own not in norm(ctx.products[q].name) and norm(ctx.products[q].name) not in own),
            None,
        )
        if alt is None:
            continue
        new = list(steps)
        for i in hits:
            s = steps[i]
            if s.name == CREATE_DELIVERY:
                ids = list(s.args["product_ids"])
                attrs = list(s.args.get("attributes") or [""] * len(ids))
                attrs += [""] * (len(ids) - len(attrs))
                k = ids.index(prod_id)
                ids[k], attrs[k] = alt, ""
                new[i] = s.with_args(product_ids=ids, attributes=attrs)
            else:
                new[i] = s.with_args(product_id=alt)
        out.append(_v(ctx, "wrong_product", "reject", new, ref,
                      f"{ctx.products[prod_id].name!r} -> {ctx.products[alt].name!r}"))
    return out


_ATTR_SPLIT = re.compile(r"[,，;；、/|+]")


def _wrong_option(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    done: set[str] = set()
    for s in steps:
        if s.name != CREATE_DELIVERY:
            continue
        ids = list(s.args.get("product_ids") or [])
        attrs = list(s.args.get("attributes") or [])
        for k, pid in enumerate(ids):
            prod = ctx.products.get(pid)
            if prod is None or k >= len(attrs) or not attrs[k]:
                continue
            opts = {norm(o): o for o in prod.options}
            for part in (p.strip() for p in _ATTR_SPLIT.split(attrs[k])):
                if norm(part) not in opts or norm(part) in done:
                    continue  # an option the catalogue words differently: no sure reading
                ref = next((ItemRef(j, x, part) for j, x in enumerate(ctx.nl_rubric)
                            if positive_mention(x, part, single_zh_ok=True)), None)
                if ref is None:
                    continue
                spans = _phrase_spans(ref.item, part)
                text = norm(ref.item).replace("-", " ")
                _, clause = _clause_around(text, *spans[0])
                taken = option_classes(part) | option_classes(clause)
                clause_tokens = set(clause) if _is_zh(clause) else _words(clause)
                alt = next(
                    (o for o in prod.options
                     if norm(o) != norm(part) and not named_anywhere(ctx.nl_rubric, o)
                     and not (option_classes(o) & taken) and not (_new_tokens(o, part) & clause_tokens)),
                    None,
                )
                if alt is None:
                    continue
                new = list(steps)
                changed = 0
                for j, t in enumerate(steps):
                    if t.name != CREATE_DELIVERY:
                        continue
                    t_attrs = list(t.args.get("attributes") or [])
                    hit = False
                    for m, a in enumerate(t_attrs):
                        parts = [p.strip() for p in _ATTR_SPLIT.split(a or "")]
                        if any(norm(p) == norm(part) for p in parts):
                            t_attrs[m] = ", ".join(alt if norm(p) == norm(part) else p for p in parts)
                            hit = True
                    if hit:
                        new[j] = t.with_args(attributes=t_attrs)
                        changed += 1
                done.add(norm(part))
                out.append(_v(ctx, "wrong_option", "reject", new, ref, f"option {part!r} -> {alt!r} in {changed} order(s)"))
    return out


def _shares_content(a: str, b: str) -> bool:
    if _is_zh(a) or _is_zh(b):
        grams = lambda t: {t[i: i + 2] for i in range(len(t) - 1)}  # noqa: E731
        common = grams(norm(a).replace(" ", "")) & grams(norm(b).replace(" ", ""))
        return len(common - {"不要", "需要", "要求", "商家", "提供", "一份", "请给", "麻烦"}) >= 1 and len(common) >= 2
    stop = {"please", "the", "and", "a", "an", "for", "with", "request", "requesting", "note", "order", "merchant",
            "provide", "need", "needs", "include", "thanks", "thank", "you", "to", "of", "in", "it", "be"}
    return bool({w for w in _words(a) if len(w) >= 3} - stop & _words(b))


def _contradicting_note(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    seen: set[str] = set()
    for ref in r.notes:
        hits = [i for i, s in enumerate(steps)
                if s.name in NOTE_CALLS and s.args.get("note") and _shares_content(ref.value, s.args["note"])]
        if not hits:
            continue
        bad = contradicting_note(ref.value)
        key = norm(bad)
        if key in seen:
            continue
        seen.add(key)
        new = list(steps)
        for i in hits:
            new[i] = steps[i].with_args(note=bad)
        out.append(_v(ctx, "contradicting_note", "reject", new, ref, f"note -> {bad!r}"))
    return out


def _missing_query(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    seen: set[str] = set()
    for ref in r.queries:
        tools = next(t for name, _rx, t in QUERY_TARGETS if name == ref.value)
        drop = [i for i, s in enumerate(steps) if s.name in tools and s.name not in ctx.write_tools]
        if not drop or ref.value in seen:
            continue
        seen.add(ref.value)
        new = [s for i, s in enumerate(steps) if i not in drop]
        out.append(_v(ctx, "missing_query", "reject", new, ref,
                      f"dropped {', '.join(steps[i].name or '' for i in drop)}"))
    return out


def _query_tools(r: Reading) -> set[str]:
    out: set[str] = set()
    for ref in r.queries:
        out |= set(next(t for name, _rx, t in QUERY_TARGETS if name == ref.value))
    return out


def _pay_of(steps: list[Step], i: int) -> tuple[str, str] | None:
    """(argument name, id) of the pay call right after step ``i``, if there is one."""
    if i + 1 < len(steps) and (steps[i + 1].name or "").startswith("pay_"):
        for key in ("order_id", "book_id"):
            if key in steps[i + 1].args:
                return key, steps[i + 1].args[key]
    return None


def _reorder(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if r.forbids_queries:
        return []
    required = _query_tools(r)
    calls = [i for i, s in enumerate(steps) if s.is_call]

    def independent(i: int) -> bool:
        name = steps[i].name
        return name not in ctx.write_tools and name not in required and not any(
            name in ctx.depends.get(steps[j].name or "", ()) for j in calls if j > i
        )

    reads = [i for i in calls if independent(i)]
    if reads and len(calls) > len(reads):
        # the independent reads moved after the last call (nothing later needs them)
        rest = [s for i, s in enumerate(steps) if i not in reads]
        moved = [steps[i] for i in reads]
        k = max(j for j, s in enumerate(rest) if s.is_call) + 1
        new = rest[:k] + moved + rest[k:]
        if [s.raw for s in new] != [s.raw for s in steps]:
            return [_v(ctx, "reorder", "accept", new, None, f"{len(moved)} read call(s) moved to the end")]
    # two adjacent order blocks (create [+ pay]) from different places swapped
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE):
            continue
        pay_a = _pay_of(steps, i)
        j = i + (2 if pay_a else 1)
        if j >= len(steps) or steps[j].name != s.name or _place_arg(steps[j]) == _place_arg(s):
            continue
        pay_b = _pay_of(steps, j)
        if bool(pay_a) != bool(pay_b):
            continue
        end = j + (2 if pay_b else 1)
        block_a, block_b = steps[i:j], steps[j:end]
        if pay_a and pay_b:
            ids = {pay_a[1], pay_b[1]}
            later = " ".join(t.raw for t in steps[end:] + steps[:i])
            if any(x in later for x in ids):
                continue  # another call refers to one of the two orders
            block_b = [block_b[0], block_b[1].with_args(**{pay_b[0]: pay_a[1]})]
            block_a = [block_a[0], block_a[1].with_args(**{pay_a[0]: pay_b[1]})]
        new = steps[:i] + block_b + block_a + steps[end:]
        return [_v(ctx, "reorder", "accept", new, None, "two independent order blocks swapped")]
    return []


def _fill_args(ctx: TaskContext, name: str, schema: dict[str, Any], steps: list[Step]) -> dict[str, Any] | None:
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    place = next((_place_arg(s) for s in steps if _place_arg(s)), None)
    product = next((p for s in steps for p in _line_products(s)), None)
    address = next((s.args.get("address") for s in steps if s.args.get("address")), None)
    values: dict[str, Any] = {"user_id": ctx.user_id or next((s.args["user_id"] for s in steps if "user_id" in s.args), None)}
    if place:
        values["store_id"] = values["shop_id"] = place
        values["keywords"] = [ctx.places[place].name.split()[0] if place in ctx.places and ctx.places[place].name.split() else place]
    if product:
        values["product_id"] = product
    if address and address in ctx.locations:
        values["longitude"], values["latitude"] = ctx.locations[address]
        values["range"] = 1000
    args: dict[str, Any] = {}
    for key in required:
        if values.get(key) is None:
            return None
        args[key] = values[key]
    if "user_id" in props and "user_id" not in args and values.get("user_id"):
        args["user_id"] = values["user_id"]
    return args


def _extra_reads(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if r.forbids_queries or not ctx.read_tools:
        return []
    prefer = ("get_user_historical_behaviors", "get_user_all_orders", "get_delivery_store_info", "get_delivery_product_info",
              "get_instore_orders", "instore_shop_search_recommend", "delivery_store_search_recommend")
    names = sorted(ctx.read_tools, key=lambda n: (prefer.index(n) if n in prefer else len(prefer), n))
    chosen: list[Step] = []
    for n in names:
        args = _fill_args(ctx, n, ctx.read_tools[n], steps)
        if args is None:
            continue
        chosen.append(Step(json.dumps({"name": n, "arguments": args}, ensure_ascii=False), n, args))
        if len(chosen) == 3:
            break
    if not chosen:
        return []
    first_write = next((i for i, s in enumerate(steps) if s.name in ctx.write_tools), 0)
    last = max((i for i, s in enumerate(steps) if s.is_call), default=0)
    new = list(steps)
    # from the back, so earlier positions stay valid: before the end, after the first write, at the start
    for pos, st in sorted(zip((0, first_write + 1, last + 1), chosen), key=lambda x: -x[0]):
        new.insert(pos, st)
    return [_v(ctx, "extra_reads", "accept", new, None, "inserted " + ", ".join(s.name or "" for s in chosen))]


def _other_product(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not r.silent_on_products:
        return []
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE):
            continue
        place = _place_arg(s)
        have = set(_line_products(s))
        alt = next((q for q in (ctx.places[place].products if place in ctx.places else []) if q not in have), None)
        if alt is None:
            continue
        new = list(steps)
        if s.name == CREATE_DELIVERY:
            new[i] = s.with_args(product_ids=[alt], product_cnts=[1], attributes=[""])
        else:
            new[i] = s.with_args(product_id=alt, quantity=1)
        return [_v(ctx, "other_product", "accept", new, None,
                   f"products -> {ctx.products[alt].name if alt in ctx.products else alt!r} (the rubric names none)")]
    return []


# ----- rubric-silent deviations ---------------------------------------------------------------
# words that speak of a time or a date (with the dates and clock times ``_find_dates`` and
# ``_find_times`` read): any of them in any item and ``silent_time`` is not built
_TIME_WORDS = re.compile(
    r"\b(?:times?|timing|dates?|days?|today|tonight|tomorrow|yesterday|morning|noon|midday|afternoon|evening|"
    r"nights?|midnight|overnight|breakfast|brunch|lunch|dinner|supper|o'?clock|hours?|minutes?|mins?|asap|soon|"
    r"immediate\w*|now|quick\w*|fast\w*|early|earlier|earliest|late|later|latest|before|after|until|till|arriv\w*|"
    r"schedul\w*|wait\w*|punctual\w*|weekends?|weekdays?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|"
    r"saturdays?|sundays?|holidays?|festivals?|deadline|advance|prompt\w*|hurry|rush\w*|delay\w*|timely|"
    r"(?:a|p)\.?m\.?|during|while|meal ?times?|afterwards?|then|next|first|last|week|month|year)\b|"
    r"时|点|分钟|早|午|晚|夜|今天|明天|后天|当天|当日|日期|\d\s*[日号月年]|周|星期|节|尽快|马上|立即|立刻|及时|"
    r"准时|送达|到达|到店|之前|以前|之后|以后|前|后|截止|提前|等|期间|再|先"
)
# digits, number words, measures, prices and people: ``silent_quantity`` is not built
_QTY_WORDS = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|dozens?|single|double|triple|"
    r"twice|once|pairs?|couple|half|quantit\w*|numbers?|amounts?|counts?|counted|portions?|servings?|pieces?|pcs|"
    r"cups?|bowls?|box\w*|bottles?|packs?|packages?|sets?|only|total\w*|each|every\w*|per|all|both|several|"
    r"multiple|many|few|enough|whole|people|persons?|guests?|diners?|group|share|sharing|shared|family|"
    r"colleagues?|friends?|party|identical|same|different|prices?|priced|cost\w*|budget\w*|yuan|rmb|spend\w*|"
    r"expensive|cheap\w*|afford\w*|worth|more|less|extra|additional|another|again|also|too)\b|"
    r"[一二两三四五六七八九十百千万半双俩仨]|数量|份|个|杯|碗|盒|瓶|只|串|块|张|位|人|对|都|每|各|共|总|仅|单|整|"
    r"多|少|价|元|钱|预算|花费|便宜|贵|量|再|也|还"
)
# words about options, taste, temperature, size, ingredients or diet (besides the words of the
# product's own options): ``silent_option`` is not built
_OPTION_WORDS = re.compile(
    r"\b(?:options?|attributes?|specs?|specifications?|flavou?rs?|flavou?red|tastes?|tasting|temperatures?|sizes?|"
    r"cups?|bowls?|portions?|servings?|spic\w*|ice|iced|hot|warm|cold|chilled|sugar\w*|sweet\w*|sour|salt\w*|"
    r"topping\w*|sauces?|dressing\w*|soups?|broth|milk|dairy|cream\w*|eggs?|meat|vegetarian|vegan|caffeine\w*|"
    r"decaf\w*|ingredients?|contain\w*|large|medium|small|health\w*|oil\w*|fat\w*|calori\w*|diet\w*|allerg\w*)\b|"
    r"辣|麻|冰|热|温|凉|冷|糖|甜|酸|咸|淡|杯|碗|规格|口味|味|份|酱|汤|奶|蛋|肉|素|含|咖啡因|做法|口感|配料|小料|忌口|过敏|健康"
)
# notes, the merchant or rider, and what notes ask for: ``silent_note`` is not built
_NOTE_WORDS = re.compile(
    r"\b(?:notes?|noted|remarks?|comments?|memo|message\w*|instruct\w*|tell\w*|inform\w*|ask\w*|request\w*|"
    r"remind\w*|merchants?|riders?|couriers?|cutlery|utensils?|tableware|chopsticks|spoons?|forks?|napkins?|"
    r"gloves?|straws?|bags?|doors?|doorbell|knock\w*|ring|call\w*|phone\w*|front desk|reception|cilantro|"
    r"coriander|scallions?|onions?|garlic|allerg\w*|avoid\w*|without|no|not|dietary|restrict\w*|special)\b|"
    r"备注|留言|告知|告诉|提醒|要求|商家|骑手|餐具|筷子|勺|纸巾|手套|吸管|袋|门|前台|电话|香菜|葱|蒜|过敏|忌口|不|别|免|无"
)
# paying, buying, a status, a voucher's validity: ``silent_payment`` is not built; nor where an
# item not about a cancellation speaks of success or completion
_PAY_WORDS = re.compile(
    r"\b(?:pay\w*|paid|unpaid|purchas\w*|buy\w*|bought|checkout|check out|status\w*|settle\w*|charg\w*|fees?|"
    r"deposit\w*|transaction\w*|valid\w*|usable|redeem\w*)\b|支付|付|已付|未付|购买|买|状态|结算|费用|定金|押金|交易|"
    r"有效|可用|核销"
)
_DONE_WORDS = re.compile(r"\b(?:success\w*|complet\w*|finish\w*|done|place[sd]?|placing)\b|成功|完成|办妥")
PAY_TOOLS = ("pay_delivery_order", "pay_instore_order", "pay_instore_book")
ACTIVE = ("unpaid", "paid", "processed", "in-progress", "unconsumed")


def _without_address(item: str) -> str:
    """The item without the address it gives ("No. 75 ..." is no "no")."""
    if _ADDRESS.search(norm(item)):
        value = _address_value(item)
        if value:
            return item.replace(value, " ")
    return item


def mentions_time(items: Iterable[str]) -> bool:
    """Whether any item speaks of a time or a date (a date, a clock time, a word about time)."""
    return any(_TIME_WORDS.search(norm(t)) or _find_dates(t) or _find_times(t) for t in map(_without_address, items))


def _without_values(item: str) -> str:
    """The item without its address value and its dates and clock times (their digits are no
    quantities)."""
    text = _without_address(item)
    for _kind, rx in _DATE_RES:
        text = rx.sub(" ", text)
    for rx in (_TIME_HM, _TIME_H, _TIME_ZH):
        text = rx.sub(" ", text)
    return text


def mentions_quantity(items: Iterable[str]) -> bool:
    """Whether any item has a number, a measure, a price or a word about people (addresses,
    dates and clock times aside)."""
    return any(_QTY_WORDS.search(norm(_without_values(x))) for x in items)


def mentions_payment(items: Iterable[str]) -> bool:
    """Whether any item speaks of paying, buying or a status, or of success or completion outside
    a cancellation."""
    texts = [norm(_without_address(x)) for x in items]
    return any(_PAY_WORDS.search(t) or (_DONE_WORDS.search(t) and not _CANCEL.search(t)) for t in texts)


def mentions_note(items: Iterable[str], note: str = "") -> bool:
    """Whether any item speaks of notes, the merchant or rider, or what notes ask for, or shares a
    word with ``note``."""
    texts = [_without_address(x) for x in items]
    return any(_NOTE_WORDS.search(norm(t)) or (note and _shares_content(note, t)) for t in texts)


def _option_vocabulary(options: Iterable[str]) -> tuple[set[str], set[str]]:
    """The Latin words (two letters or more) and the Chinese character pairs of a product's options."""
    words: set[str] = set()
    pairs: set[str] = set()
    for o in options:
        words |= {w for w in _words(o) if len(w) >= 2}
        zh = re.sub(r"[^\u4e00-\u9fff]", "", norm(o))
        pairs |= {zh[i: i + 2] for i in range(len(zh) - 1)} | ({zh} if len(zh) == 1 else set())
    return words, pairs


def mentions_option(items: Iterable[str], options: Iterable[str]) -> bool:
    """Whether any item speaks of options, taste, temperature, size or ingredients, or uses a word
    of one of ``options`` (the product's whole option list: its attribute families)."""
    words, pairs = _option_vocabulary(options)
    for x in items:
        t = norm(_without_address(x))
        if _OPTION_WORDS.search(t) or _words(t) & words or any(p in t for p in pairs):
            return True
    return False


def _gold_records(ctx: TaskContext, table: str, place: str | None) -> list[list[dict[str, Any]]] | None:
    """Per expected state, the gold records (new or replaced ones) a golden create/visit call at
    ``place`` may be matched to: ``table`` ``"orders"``, ``"books"`` or ``"reservations"``. None
    when there are no states or one has no such record (no sure grounding)."""
    if not ctx.expected or not place:
        return None
    out = []
    for st in ctx.expected:
        if table == "orders":
            recs = [o for o in st.get("orders") or [] if o.get("store_id") == place and o.get("kind") in ("new", "replaced")]
        else:
            recs = [v for v in st.get("visits") or []
                    if v.get("table") == table and v.get("shop_id") == place and v.get("kind") in ("new", "replaced")]
        if not recs:
            return None
        out.append(recs)
    return out


def _all_differ(golds: list[list[dict[str, Any]]] | None, differs: Any) -> bool:
    return golds is not None and all(differs(g) for recs in golds for g in recs)


def _far(text: Any, t: datetime) -> bool:
    g = _parse_dt(text) if text else None
    return g is not None and abs((g - t).total_seconds()) > SILENT_TIME_MIN * 60


def _time_candidates(ctx: TaskContext, t: datetime) -> list[datetime]:
    now = ctx.now.replace(microsecond=0)
    cands = [now] + [t + timedelta(minutes=m) for m in (90, -90, 150, -150, 240, -240)]
    return [c for c in cands if c >= now]


def _last_call(steps: list[Step]) -> int:
    return max((i for i, s in enumerate(steps) if s.is_call), default=-1) + 1


def _visit_table(step: Step) -> str:
    return "books" if step.name == "instore_book" else "reservations"


def _silent_time(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_time(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        place = _place_arg(s)
        if s.name == CREATE_DELIVERY and i in ctx.delivery_times:
            golds = _gold_records(ctx, "orders", place)
            d, t = ctx.delivery_times[i]
            for new_d in _time_candidates(ctx, d):
                new_t = new_d + (t - d)
                if place in ctx.places and not ctx.places[place].open_at(new_d):
                    continue

                def differs(g: dict[str, Any], new_d: datetime = new_d, new_t: datetime = new_t) -> bool:
                    given = [(k, v) for k, v in (("dispatch", g.get("dispatch_time")), ("delivery", g.get("delivery_time"))) if v]
                    return bool(given) and all(_far(v, new_d if k == "dispatch" else new_t) for k, v in given)

                if _all_differ(golds, differs):
                    new = list(steps)
                    new[i] = s.with_args(dispatch_time=_fmt(new_d))
                    what = "now" if new_d == ctx.now.replace(microsecond=0) else f"{(new_d - d).total_seconds() / 60:+.0f} min"
                    return [_v(ctx, "silent_time", "accept", new, None,
                               f"dispatch {_fmt(d)} -> {_fmt(new_d)} ({what}); no item speaks of time")]
        elif s.name in ("instore_book", "instore_reservation"):
            t0 = _parse_dt(s.args.get("time", ""))
            if t0 is None:
                continue
            golds = _gold_records(ctx, _visit_table(s), place)
            for new_t in _time_candidates(ctx, t0):
                if place in ctx.places and not ctx.places[place].open_at(new_t):
                    continue
                if _all_differ(golds, lambda g, new_t=new_t: _far(g.get("time"), new_t)):
                    new = list(steps)
                    new[i] = s.with_args(time=_fmt(new_t))
                    return [_v(ctx, "silent_time", "accept", new, None,
                               f"{s.name} time {_fmt(t0)} -> {_fmt(new_t)}; no item speaks of time")]
    return []


def _merged(lines: Iterable[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for pid, n in lines:
        out[pid] = out.get(pid, 0) + int(n)
    return out


def _gold_counts(g: dict[str, Any]) -> dict[str, int]:
    return _merged((ln.get("product_id", ""), ln.get("quantity", 0)) for ln in g.get("lines") or [])


def _silent_quantity(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_quantity(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        if s.name == CREATE_DELIVERY:
            ids, cnts = list(s.args.get("product_ids") or []), list(s.args.get("product_cnts") or [])
            if not ids or len(ids) != len(cnts):
                continue
            for k, pid in enumerate(ids):
                new_cnts = list(cnts)
                new_cnts[k] = int(cnts[k]) + 1
                ours = _merged(zip(ids, new_cnts))
                stock = ctx.products[pid].stock if pid in ctx.products else None
                if stock is not None and stock < ours[pid]:
                    continue
                if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g, ours=ours: _gold_counts(g) != ours):
                    new = list(steps)
                    new[i] = s.with_args(product_cnts=new_cnts)
                    return [_v(ctx, "silent_quantity", "accept", new, None,
                               f"quantity of {pid} {cnts[k]} -> {new_cnts[k]}; no item speaks of numbers")]
        elif s.name == CREATE_INSTORE and s.args.get("product_id"):
            pid, q = s.args["product_id"], int(s.args.get("quantity", 1) or 1)
            stock = ctx.products[pid].stock if pid in ctx.products else None
            if stock is not None and stock < q + 1:
                continue
            if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g, pid=pid, q=q: _gold_counts(g) != {pid: q + 1}):
                new = list(steps)
                new[i] = s.with_args(quantity=q + 1)
                return [_v(ctx, "silent_quantity", "accept", new, None,
                           f"quantity of {pid} {q} -> {q + 1}; no item speaks of numbers")]
    for i, s in enumerate(steps):
        if s.name in ("instore_book", "instore_reservation"):
            c = int(s.args.get("customer_count", 1) or 1)
            golds = _gold_records(ctx, _visit_table(s), _place_arg(s))
            if _all_differ(golds, lambda g, c=c: g.get("customer_count") is not None and g["customer_count"] != c + 1):
                new = list(steps)
                new[i] = s.with_args(customer_count=c + 1)
                return [_v(ctx, "silent_quantity", "accept", new, None,
                           f"{s.name} party size {c} -> {c + 1}; no item speaks of numbers")]
    return []


def _same_option(a: str, b: str) -> bool:
    x, y = norm(a), norm(b)
    return bool(x) and bool(y) and (x == y or x in y or y in x)


def _silent_option(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    for i, s in enumerate(steps):
        if s.name != CREATE_DELIVERY:
            continue
        ids = list(s.args.get("product_ids") or [])
        attrs = list(s.args.get("attributes") or [])
        for k, pid in enumerate(ids):
            prod = ctx.products.get(pid)
            if prod is None or len(prod.options) < 2 or k >= len(attrs) or not attrs[k]:
                continue
            if sum(1 for x in ids if x == pid) > 1 or mentions_option(ctx.nl_rubric, prod.options):
                continue
            parts = [p.strip() for p in _ATTR_SPLIT.split(attrs[k]) if p.strip()]
            opts = {norm(o): o for o in prod.options}
            for m, part in enumerate(parts):
                if norm(part) not in opts:
                    continue  # an option the catalogue words differently: no sure reading
                others = [o for o in prod.options if not _same_option(o, part) and not any(_same_option(o, p) for p in parts)]
                # prefer an option of the same family (sharing a word or a character pair)
                w, pr = _option_vocabulary([part])
                others.sort(key=lambda o: not (_option_vocabulary([o])[0] & w or _option_vocabulary([o])[1] & pr))
                for alt in others:
                    new_attr = ", ".join(alt if j == m else p for j, p in enumerate(parts))

                    def differs(g: dict[str, Any], pid: str = pid, alt: str = alt) -> bool:
                        gl = [ln for ln in g.get("lines") or [] if ln.get("product_id") == pid]
                        if not gl:
                            return True  # the gold record holds other products: the lines differ anyway
                        return all(ln.get("attributes") and not any(_same_option(alt, p) for p in _ATTR_SPLIT.split(ln["attributes"]))
                                   for ln in gl)

                    if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), differs):
                        new_attrs = list(attrs)
                        new_attrs[k] = new_attr
                        new = list(steps)
                        new[i] = s.with_args(attributes=new_attrs)
                        return [_v(ctx, "silent_option", "accept", new, None,
                                   f"option {part!r} -> {alt!r} of {prod.name!r}; no item speaks of its options")]
    return []


def _silent_note(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    for i, s in enumerate(steps):
        note = str(s.args.get("note") or "")
        if s.name != CREATE_DELIVERY or not note.strip() or mentions_note(ctx.nl_rubric, note):
            continue
        if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g: bool((g.get("note") or "").strip())):
            new = list(steps)
            new[i] = s.with_args(note="")
            return [_v(ctx, "silent_note", "accept", new, None, f"note {note!r} left empty; no item speaks of notes")]
    return []


def _silent_payment(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_payment(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE, "instore_book"):
            continue
        pay = _pay_of(steps, i)
        if pay is None:
            continue
        later = " ".join(t.raw for t in steps[i + 2:])
        if json.dumps(pay[1], ensure_ascii=False) in later:
            continue  # a later call uses the paid record
        table = "books" if s.name == "instore_book" else "orders"
        golds = _gold_records(ctx, table, _place_arg(s))
        if _all_differ(golds, lambda g: str(g.get("status", "")) not in ("unpaid", "cancelled", "")):
            new = steps[: i + 1] + steps[i + 2:]
            return [_v(ctx, "silent_payment", "accept", new, None,
                       f"{steps[i + 1].name} of {pay[1]} dropped (left unpaid); no item speaks of paying")]
    return []


# ----- unrequested writes ---------------------------------------------------------------------
def _call_step(name: str, **args: Any) -> Step:
    return Step(json.dumps({"name": name, "arguments": args}, ensure_ascii=False), name, args)


def _insert_at_end(steps: list[Step], extra: list[Step]) -> list[Step]:
    k = _last_call(steps)
    return steps[:k] + extra + steps[k:]


def _named_in_items(items: list[str], name: str) -> bool:
    forms = [name] + ([_bracketless(name)] if _bracketless(name) and _bracketless(name) != norm(name) else [])
    return any(named_anywhere(items, f) for f in forms if len(norm(f)) >= 2)


def _extra_order(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not ctx.expected:
        return []
    template = next((s for s in steps if s.name in (CREATE_DELIVERY, CREATE_INSTORE)), None)
    if template is None:
        return []
    gold_products = {ln.get("product_id") for st in ctx.expected for o in st.get("orders") or [] for ln in o.get("lines") or []}
    golden_places = [p for p in dict.fromkeys(_place_arg(s) for s in steps if s.name == template.name) if p]
    pays = any(t.name in ("pay_delivery_order", "pay_instore_order") for t in steps)
    if pays and "orders" not in ctx.next_ids:
        return []
    dispatch = _parse_dt(template.args.get("dispatch_time", "")) if template.name == CREATE_DELIVERY else None
    for place in golden_places + sorted(p for p in ctx.places if p not in golden_places):
        if place not in ctx.places or (dispatch is not None and not ctx.places[place].open_at(dispatch)):
            continue
        for pid in ctx.places[place].products:
            prod = ctx.products.get(pid)
            if pid in gold_products or prod is None or (prod.stock is not None and prod.stock < 1):
                continue
            if _named_in_items(ctx.nl_rubric, prod.name):
                continue
            if template.name == CREATE_DELIVERY:
                extra = [template.with_args(store_id=place, product_ids=[pid], product_cnts=[1], attributes=[""], note="")]
                pay_name = "pay_delivery_order"
            else:
                extra = [template.with_args(shop_id=place, product_id=pid, quantity=1)]
                pay_name = "pay_instore_order"
            if pays:
                extra.append(_call_step(pay_name, order_id=ctx.next_ids["orders"]))
            return [_v(ctx, "extra_order", "reject", _insert_at_end(steps, extra), None,
                       f"one more order of {prod.name!r} at {ctx.places[place].name!r}{' (paid)' if pays else ''}")]
    return []


def _unrequested_cancel(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    items = ctx.nl_rubric
    if any(_CANCEL.search(norm(x)) and not _ORDER_REF.search(x) for x in items):
        return []  # a cancellation item that names no id: which record it means is not sure
    held = {str(o.get("order_id")) for st in ctx.expected for o in st.get("orders") or []}
    held |= {str(v.get("record_id")) for st in ctx.expected for v in st.get("visits") or []}
    golden_text = " ".join(s.raw for s in steps)
    recs = sorted(ctx.initial, key=lambda x: x.status not in ACTIVE)
    for rec in recs:
        if rec.record_id in held or rec.status == "cancelled" or (rec.user_id and ctx.user_id and rec.user_id != ctx.user_id):
            continue
        if json.dumps(rec.record_id, ensure_ascii=False) in golden_text or any(rec.record_id in x for x in items):
            continue
        if any(_named_in_items(items, n) for n in rec.names):
            continue
        user = ctx.user_id or rec.user_id
        if rec.table == "orders" and "cancel_delivery_order" in ctx.write_tools:
            extra = [_call_step("get_delivery_order_detail", order_id=rec.record_id),
                     _call_step("cancel_delivery_order", order_id=rec.record_id)]
        elif rec.table == "orders" and "instore_cancel_order" in ctx.write_tools:
            extra = [_call_step("get_instore_orders", user_id=user), _call_step("instore_cancel_order", order_id=rec.record_id)]
        elif rec.table == "books" and "instore_cancel_book" in ctx.write_tools:
            extra = [_call_step("get_instore_books", user_id=user), _call_step("instore_cancel_book", book_id=rec.record_id)]
        elif rec.table == "reservations" and "instore_cancel_reservation" in ctx.write_tools:
            extra = [_call_step("get_instore_reservations", user_id=user),
                     _call_step("instore_cancel_reservation", reservation_id=rec.record_id)]
        else:
            continue
        return [_v(ctx, "unrequested_cancel", "reject", _insert_at_end(steps, extra), None,
                   f"pre-existing {rec.table[:-1]} {rec.record_id} ({rec.status}) cancelled; no expected state or item holds it")]
    return []


def _extra_visit(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not ctx.expected:
        return []
    for i, s in enumerate(steps):
        if s.name not in ("instore_book", "instore_reservation"):
            continue
        table, place = _visit_table(s), _place_arg(s)
        made = sum(1 for t in steps if t.name == s.name and _place_arg(t) == place)
        if any(sum(1 for v in st.get("visits") or [] if v.get("table") == table and v.get("shop_id") == place
                   and v.get("kind") in ("new", "replaced")) > made for st in ctx.expected):
            continue  # an expected state holds more of them: a second one may be asked for
        extra = [Step(s.raw, s.name, dict(s.args))]
        pay = _pay_of(steps, i)
        if pay is not None:
            if table not in ctx.next_ids:
                continue
            extra.append(_call_step(steps[i + 1].name or "pay_instore_book", **{pay[0]: ctx.next_ids[table]}))
        return [_v(ctx, "extra_visit", "reject", _insert_at_end(steps, extra), None,
                   f"{s.name} at {ctx.places[place].name if place in ctx.places else place!r} made twice")]
    return []


BUILDERS = {
    "reorder": _reorder,
    "extra_reads": _extra_reads,
    "around_shift": _around_shift,
    "other_product": _other_product,
    "late_delivery": _late_delivery,
    "wrong_address": _wrong_address,
    "wrong_store": _wrong_store,
    "wrong_product": _wrong_product,
    "wrong_option": _wrong_option,
    "contradicting_note": _contradicting_note,
    "missing_query": _missing_query,
    "silent_time": _silent_time,
    "silent_quantity": _silent_quantity,
    "silent_option": _silent_option,
    "silent_note": _silent_note,
    "silent_payment": _silent_payment,
    "extra_order": _extra_order,
    "unrequested_cancel": _unrequested_cancel,
    "extra_visit": _extra_visit,
}


def build_variants(ctx: TaskContext, max_per_task: int | None = MAX_PER_TASK, kinds: Iterable[str] = PRIORITY) -> list[Variant]:
    """Labelled variants of the task's golden route: at most one per kind, the kinds taken in
    ``PRIORITY`` order up to ``max_per_task`` in each group (``group_of``: the targeted kinds,
    the rubric-silent deviations and the unrequested writes are counted apart)."""
    steps = parse_route(ctx.golden)
    reading = read_rubric(ctx.nl_rubric)
    out: list[Variant] = []
    taken: dict[str, int] = {}
    golden_raw = _actions(steps)
    for kind in kinds:
        group = group_of(kind)
        if max_per_task is not None and taken.get(group, 0) >= max_per_task:
            continue
        cands = [v for v in BUILDERS[kind](ctx, steps, reading) if v.actions != golden_raw]
        if cands:
            out.append(cands[0])
            taken[group] = taken.get(group, 0) + 1
    return out


@dataclass
class TimeMiss:
    """A time item no record of the golden route meets (around: within 15 min, at: within 10 min)."""

    bound: TimeBound
    golden: list[datetime]
    # the earliest any golden delivery could arrive, when even that is after the window closes
    earliest: datetime | None = None


def golden_time_misses(ctx: TaskContext) -> list[TimeMiss]:
    """Time items the golden route does not meet: where its oracle passes, the scorer does not
    check the item as the rubric words it (or no order could arrive in time: ``earliest``)."""
    steps = parse_route(ctx.golden)
    out = []
    for tb in read_rubric(ctx.nl_rubric).times:
        recs = _records(ctx, steps, tb.visits) or _records(ctx, steps, not tb.visits)
        slack = {"around": 15.0, "exact": 10.0}.get(tb.relation, 0.0)
        if not recs or any(tb.holds(r.time, slack) for r in recs):
            continue
        closes = tb.end + timedelta(minutes=slack)
        soonest = [ctx.now + (r.time - r.dispatch) for r in recs if r.dispatch is not None]
        late = min(soonest) if soonest and tb.relation != "after" and min(soonest) > closes else None
        out.append(TimeMiss(tb, [r.time for r in recs], late))
    return out


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


@dataclass
class Outcome:
    variant: Variant
    success: bool
    tool_errors: int
    failed: list[str]  # score components below 1 (rubric items that failed)
    # False for a variant of the new kinds (silent, write) whose run had more tool errors than the
    # golden route's: it is not the deviation it was built as, and is left out of the figures
    feasible: bool = True

    @property
    def agrees(self) -> bool:
        return self.success == (self.variant.label == "accept")


@dataclass
class TaskResult:
    task_id: str
    release: str | None
    oracle: bool
    coverage: float | None
    nl_total: int
    outcomes: list[Outcome] = field(default_factory=list)
    time_misses: list[TimeMiss] = field(default_factory=list)


def run_variant(env: Any, v: Variant, seed: int = 0) -> Outcome:
    info = _run(env, v.task_id, v.actions, seed)
    score = info.get("score") or {}
    failed = sorted(k for k, x in score.items() if k.startswith("rubric/") and isinstance(x, (int, float)) and x < 1)
    return Outcome(v, bool(info.get("success")), int(info.get("tool_errors") or 0), failed)


def check_task(env: Any, task_id: str, seed: int = 0, max_per_task: int | None = MAX_PER_TASK) -> TaskResult:
    task = env.unwrapped.source.get(task_id)
    ctx, info = golden_context(env, task_id, seed)
    score = info.get("score") or {}
    cov = score.get("rubric_nl_coverage")
    world = task.world if isinstance(task.world, dict) else {}
    res = TaskResult(task_id, world.get("vitabench_release"), bool(info.get("success")),
                     float(cov) if cov is not None else None, len(task.nl_rubric or []))
    if res.oracle:  # a variant of a failing golden route says nothing about the scorer
        golden_errors = int(info.get("tool_errors") or 0)
        res.outcomes = [run_variant(env, v, seed) for v in build_variants(ctx, max_per_task)]
        for o in res.outcomes:
            if group_of(o.variant.kind) != "targeted" and o.tool_errors > golden_errors:
                o.feasible = False
        res.time_misses = golden_time_misses(ctx)
    return res


@dataclass
class FileResult:
    path: str
    env_id: str
    loaded: int
    skipped: list[dict[str, Any]]
    tasks: list[TaskResult]
    scoring: str = "rubric"  # the scoring asked for
    scoring_applied: bool = True  # False: the env takes no ``scoring`` argument (its own default ran)


PARTS = ("build", "held", "all")


def reader_part(task_id: str) -> str:
    """The part of the visible tasks a task belongs to when the rubric reader is developed:
    ``"held"`` for about a quarter of the tasks (a stable hash of the id, so the same task is held
    in every file and release), ``"build"`` for the rest. Work on the reader reads only the
    ``build`` part; the ``held`` part is measured after the reader is frozen."""
    digest = hashlib.sha256(str(task_id).encode("utf-8")).hexdigest()
    return "held" if int(digest[:8], 16) % 4 == 0 else "build"


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


def check_file(path: str, env_id: str, seed: int = 0, max_per_task: int | None = MAX_PER_TASK,
               max_tasks: int | None = None, part: str = "all", scoring: str = "rubric") -> FileResult:
    """Load a VitaBench task file into ``env_id`` (with ``scoring``, ``"rubric"`` or ``"strict"``,
    where the env takes it) and check every task (or the first ``max_tasks``; or those of one
    ``part``, see ``reader_part``): the oracle, the rubric coverage and the labelled variants."""
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, got {scoring!r}")
    env, applied = make_env(env_id, path, scoring)
    u = env.unwrapped
    skipped = [dict(s) if isinstance(s, dict) else dict(vars(s)) for s in u.skipped_tasks]
    if part not in PARTS:
        raise ValueError(f"part must be one of {', '.join(PARTS)}, got {part!r}")
    ids = [t for t in u.task_ids() if part == "all" or reader_part(t) == part]
    skipped = [s for s in skipped if part == "all" or reader_part(str(s.get("task_id", ""))) == part]
    results = [check_task(env, tid, seed, max_per_task) for tid in ids[:max_tasks]]
    env.close()
    return FileResult(str(path), env_id, len(ids), skipped, results, scoring, applied)


def agreement(outcomes: Iterable[Outcome]) -> dict[str, tuple[int, int]]:
    """(variants the scorer agrees on, variants): ``accept`` the legal alternatives, ``reject``
    the violations (targeted ones and unrequested writes), ``silent`` the rubric-silent
    deviations (label accept, in scope under ``scoring="rubric"`` only). Infeasible variants are
    left out."""
    out = {"accept": [0, 0], "reject": [0, 0], "silent": [0, 0]}
    for o in outcomes:
        if not o.feasible:
            continue
        cell = out["silent" if o.variant.kind in SILENT_KINDS else o.variant.label]
        cell[0] += int(o.agrees)
        cell[1] += 1
    return {k: (a, n) for k, (a, n) in out.items()}


def by_kind(outcomes: Iterable[Outcome]) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = {}
    for o in outcomes:
        if not o.feasible:
            continue
        cell = out.setdefault(o.variant.kind, [0, 0])
        cell[0] += int(o.agrees)
        cell[1] += 1
    return {k: (a, n) for k, (a, n) in sorted(out.items(), key=lambda kv: KINDS.index(kv[0]))}
