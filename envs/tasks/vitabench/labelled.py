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

Layout: this module holds the kinds and their labels, the driver (``build_variants``,
``golden_time_misses``), the checks of a task file (``check_task``, ``check_file``, ``reader_part``)
and the figures (``agreement``, ``by_kind``), and re-exports (``__all__``) the names scripts and
tests import from it. The task context and the golden route are in ``labelled_route.py``, the
targeted builders in ``labelled_kinds.py``, the rubric-silent deviations and unrequested writes in
``labelled_silent.py``, the runs through an env in ``labelled_env.py``, and the reading of the
rubric text in ``labelled_reading.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_env import (
    _run,
    expected_states,
    golden_context,
    make_env,
)
from servicegym.envs.tasks.vitabench.labelled_kinds import (
    AROUND_SHIFT_MIN,
    FAR_ADDRESS_M,
    LATE_BY_MIN,
    _around_shift,
    _contradicting_note,
    _extra_reads,
    _late_delivery,
    _missing_query,
    _other_product,
    _reorder,
    _wrong_address,
    _wrong_option,
    _wrong_product,
    _wrong_store,
)
from servicegym.envs.tasks.vitabench.labelled_reading import (  # the labeller's reading of rubric text
    QUERY_TARGETS,
    ItemRef,
    Label,
    Reading,
    TimeBound,
    _is_zh,
    contradicting_note,
    named_anywhere,
    norm,
    option_classes,
    parse_time_bound,
    positive_mention,
    query_target,
    read_rubric,
    rubric_kinds,
)
from servicegym.envs.tasks.vitabench.labelled_route import (
    CREATE_DELIVERY,
    CREATE_INSTORE,
    NOTE_CALLS,
    PLACE_CALLS,
    TIME_FMT,
    VISIT_TOOLS,
    Place,
    Product,
    Record,
    Step,
    TaskContext,
    Variant,
    _actions,
    _records,
    parse_route,
)
from servicegym.envs.tasks.vitabench.labelled_silent import (
    ACTIVE,
    PAY_TOOLS,
    SILENT_TIME_MIN,
    _extra_order,
    _extra_visit,
    _silent_note,
    _silent_option,
    _silent_payment,
    _silent_quantity,
    _silent_time,
    _unrequested_cancel,
    mentions_note,
    mentions_option,
    mentions_payment,
    mentions_quantity,
    mentions_time,
)

__all__ = [
    # the kinds, their labels and the driver (defined here)
    "LEGAL_KINDS", "VIOLATION_KINDS", "TARGETED_KINDS", "SILENT_KINDS", "WRITE_KINDS", "KINDS", "LABELS",
    "PRIORITY", "MAX_PER_TASK", "SCORINGS", "PARTS", "BUILDERS", "group_of", "build_variants", "TimeMiss",
    "golden_time_misses", "Outcome", "TaskResult", "FileResult", "run_variant", "check_task", "reader_part",
    "check_file", "agreement", "by_kind",
    # labelled_route
    "TIME_FMT", "CREATE_DELIVERY", "CREATE_INSTORE", "VISIT_TOOLS", "PLACE_CALLS", "NOTE_CALLS", "Place",
    "Product", "Record", "TaskContext", "Variant", "Step", "parse_route",
    # labelled_kinds
    "AROUND_SHIFT_MIN", "LATE_BY_MIN", "FAR_ADDRESS_M",
    # labelled_silent
    "SILENT_TIME_MIN", "PAY_TOOLS", "ACTIVE", "mentions_time", "mentions_quantity", "mentions_payment",
    "mentions_note", "mentions_option",
    # labelled_env
    "golden_context", "expected_states", "make_env",
    # labelled_reading
    "QUERY_TARGETS", "ItemRef", "Label", "Reading", "TimeBound", "_is_zh", "contradicting_note",
    "named_anywhere", "norm", "option_classes", "positive_mention", "read_rubric", "parse_time_bound",
    "query_target", "rubric_kinds",
]

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
SCORINGS = ("rubric", "strict")


def group_of(kind: str) -> str:
    """``"targeted"`` (the legal alternatives and targeted violations), ``"silent"`` or ``"write"``."""
    return "silent" if kind in SILENT_KINDS else "write" if kind in WRITE_KINDS else "targeted"


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


# ----- checking a task file -------------------------------------------------------------------
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
