"""What became of a VitaBench file's natural-language rubric items: an audit before training.

``servicegym rubrics --tasks FILE`` loads the file as an env would (the same loader, rubric-checks
file included) and reports, for every rubric item of every loaded task, the code check it became
(the rubric item ``nl_<kind>_<k>`` and its spec in words; read by the grammar or supplied by the
rubric-checks file) or why it stays with the LLM judge: the task's note when the loader dropped it
(it contradicts the gold, no expected state tells which record it is about, no golden route meets
it, ...), else "no grammar read it". Coverage is counted per kind of item (``item_topic``: what the
item is about, read or not) and per file; skipped tasks are listed with their reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from servicegym.rewards.nl_rubric import TOPICS, compile_item, describe_spec, item_context, item_topic, parse_spec

NO_GRAMMAR = "no grammar read it"
GRAMMAR = "grammar"
SIDECAR = "rubric-checks"
_ALL_TOGETHER = "no golden route meets the rubric's compiled items together"


@dataclass
class ItemAudit:
    """One rubric item: the check it became (``checked``: its rubric item name and spec in words,
    and who read it) or why it is unread."""

    index: int
    text: str
    topic: str
    checked: bool
    check: str = ""
    spec: str = ""
    source: str = ""  # GRAMMAR or SIDECAR, for a checked item
    reason: str = ""  # why an unread item is unread

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TaskAudit:
    task_id: str
    language: str
    items: list[ItemAudit] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return sum(i.checked for i in self.items)

    def to_json(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "language": self.language, "checked": self.checked,
                "items": [i.to_json() for i in self.items]}


@dataclass
class FileAudit:
    path: str
    env_id: str
    rubric_checks: str | None
    tasks: list[TaskAudit]
    skipped: list[dict[str, Any]]
    checks_problems: list[str] = field(default_factory=list)

    def coverage(self) -> dict[str, Any]:
        """Items and items checked by code per kind (``by_kind``, in ``TOPICS`` order, kinds with
        items only) and for the whole file (``total``, with ``from_rubric_checks``)."""
        counts: dict[str, list[int]] = {}
        for item in (i for t in self.tasks for i in t.items):
            c = counts.setdefault(item.topic, [0, 0])
            c[0] += 1
            c[1] += item.checked
        order = [t for t in TOPICS if t in counts] + sorted(set(counts) - set(TOPICS))
        items = sum(c[0] for c in counts.values())
        checked = sum(c[1] for c in counts.values())
        return {
            "by_kind": {t: _share(*counts[t]) for t in order},
            "total": {**_share(items, checked), "tasks": len(self.tasks), "skipped_tasks": len(self.skipped),
                      "from_rubric_checks": sum(i.source == SIDECAR for t in self.tasks for i in t.items)},
        }

    def to_json(self) -> dict[str, Any]:
        return {"file": self.path, "env": self.env_id, "rubric_checks": self.rubric_checks,
                "coverage": self.coverage(), "tasks": [t.to_json() for t in self.tasks],
                "skipped": list(self.skipped), "rubric_checks_problems": list(self.checks_problems)}


def _share(items: int, checked: int) -> dict[str, Any]:
    return {"items": items, "checked": checked, "share": round(checked / items, 4) if items else None}


def _drop_notes(notes: Iterable[str], k: int) -> list[str]:
    """The notes saying why the loader left rubric item ``k`` to the judge."""
    head = re.compile(rf"rubric item {k}\b")
    return [n for n in notes if head.match(n) and "judge" in n]


def audit_task(task: Any, world: Any = None, tools: Iterable[str] = (),
               supplied: Mapping[str, Any] | None = None) -> TaskAudit:
    """The audit of one loaded task. ``world`` and ``tools`` (its initial world, the domain's tool
    names) let an item the loader did not check be told apart: read but dropped, or unread;
    ``supplied``: the task's checks from the rubric-checks file (item text -> spec)."""
    supplied = supplied or {}
    checks: dict[int, Any] = {}
    for r in task.rubric:
        k = r.params.get("nl_index") if r.kind.startswith("nl_") else None
        if isinstance(k, int):
            checks.setdefault(k, r)
    context = None
    out = TaskAudit(task.task_id, task.language)
    for k, text in enumerate(task.nl_rubric):
        topic = item_topic(text)
        r = checks.get(k)
        if r is not None:
            raw = r.params.get("spec") or r.params.get("window")
            try:
                said = describe_spec(parse_spec(raw)) if raw else r.description
            except ValueError:
                said = r.description
            out.items.append(ItemAudit(k, text, topic, True, r.name, said, SIDECAR if text in supplied else GRAMMAR))
            continue
        reasons = _drop_notes(task.notes, k)
        if not reasons:
            if context is None and world is not None:
                context = replace(item_context(world, tools), compiled=dict(supplied))
            spec = compile_item(text, context) if context is not None else None
            if spec is None:
                reasons = [NO_GRAMMAR]
            else:
                reasons = [n for n in task.notes if n.startswith(_ALL_TOGETHER)] or \
                          [f"reads as {describe_spec(spec)}, but the loader does not check it"]
        out.items.append(ItemAudit(k, text, topic, False, reason="; ".join(reasons)))
    return out


def audit_env(env: Any, path: str, env_id: str, task_ids: list[str] | None = None,
              supplied: Mapping[str, Mapping[str, Any]] | None = None, rubric_checks: str | None = None,
              checks_problems: list[str] | None = None) -> FileAudit:
    """The audit of the tasks of an env made on a task file (``task_ids``: only these)."""
    u = env.unwrapped
    supplied = supplied or {}
    tasks = []
    for tid in u.task_ids():
        if task_ids is not None and tid not in task_ids:
            continue
        task = u.source.get(tid)
        world = task.cached_world(u.build_world)
        tasks.append(audit_task(task, world, u.toolkit.names, supplied.get(tid)))
    skipped = [dict(s) for s in u.skipped_tasks if task_ids is None or s["task_id"] in task_ids]
    return FileAudit(str(path), env_id, rubric_checks, tasks, skipped, list(checks_problems or []))


# ----- rendering ---------------------------------------------------------------------------------
def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def _skip_text(s: Mapping[str, Any]) -> str:
    field_ = f"field {s['field']}: " if s.get("field") else ""
    return f"{s['task_id']}  (index {s['index']}) {field_}{s['reason']}"


def summary_line(report: FileAudit) -> str:
    t = report.coverage()["total"]
    extra = f", {t['from_rubric_checks']} of them from the rubric-checks file" if t["from_rubric_checks"] else ""
    return (f"summary: {t['tasks']} tasks audited, {t['skipped_tasks']} skipped; {t['checked']} of {t['items']} "
            f"rubric items checked by code ({_pct(t['share'])}){extra}")


def render_text(report: FileAudit) -> str:
    """The audit as a readable table (stdout)."""
    lines = [f"servicegym rubrics: {report.path} with {report.env_id} "
             f"(rubric checks: {report.rubric_checks or 'none'})"]
    lines += [f"warning: {p}" for p in report.checks_problems]
    width = max([len(t) for t in TOPICS] + [len(i.topic) for t in report.tasks for i in t.items])
    for t in report.tasks:
        lines.append(f"{t.task_id}  {t.checked} of {len(t.items)} items checked by code")
        for i in t.items:
            what = f"{i.check}: {i.spec}" + (" [rubric-checks file]" if i.source == SIDECAR else "") \
                if i.checked else i.reason
            lines.append(f"  [{i.index}] {i.topic:<{width}}  {'code  ' if i.checked else 'unread'}  {what}")
            lines.append(f"      {' ' * width}          {' '.join(i.text.split())}")
    if report.skipped:
        lines.append("skipped tasks:")
        lines += [f"  {_skip_text(s)}" for s in report.skipped]
    cov = report.coverage()
    lines.append("coverage by kind (checked by code / items):")
    for kind, c in cov["by_kind"].items():
        lines.append(f"  {kind:<{width}}  {c['checked']:>5} / {c['items']:<5} {_pct(c['share']):>5}")
    t = cov["total"]
    lines.append(f"  {'all':<{width}}  {t['checked']:>5} / {t['items']:<5} {_pct(t['share']):>5}")
    lines.append(summary_line(report))
    return "\n".join(lines)


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(report: FileAudit) -> str:
    """The audit as a markdown page (``--out``)."""
    cov = report.coverage()
    t = cov["total"]
    out = [f"# Rubric audit: {_cell(report.path)}", "",
           f"Env `{report.env_id}`; rubric checks: {_cell(report.rubric_checks or 'none')}.", "",
           f"{t['tasks']} tasks audited, {t['skipped_tasks']} skipped; **{t['checked']} of {t['items']} rubric items "
           f"checked by code ({_pct(t['share'])})**" + (f", {t['from_rubric_checks']} from the rubric-checks file"
                                                        if t["from_rubric_checks"] else "") + ".", ""]
    if report.checks_problems:
        out += ["Rubric-checks file problems:", ""] + [f"- {_cell(p)}" for p in report.checks_problems] + [""]
    out += ["## Coverage by kind", "", "| kind | checked | items | share |", "|---|---:|---:|---:|"]
    out += [f"| {k} | {c['checked']} | {c['items']} | {_pct(c['share'])} |" for k, c in cov["by_kind"].items()]
    out += [f"| **all** | {t['checked']} | {t['items']} | {_pct(t['share'])} |", ""]
    if report.skipped:
        out += ["## Skipped tasks", ""] + [f"- {_cell(_skip_text(s))}" for s in report.skipped] + [""]
    out += ["## Items", ""]
    for task in report.tasks:
        out += [f"### {_cell(task.task_id)} ({task.checked} of {len(task.items)} checked)", "",
                "| # | kind | status | check or reason | item |", "|---:|---|---|---|---|"]
        for i in task.items:
            what = f"`{i.check}`: {_cell(i.spec)}" + (" (rubric-checks file)" if i.source == SIDECAR else "") \
                if i.checked else _cell(i.reason)
            out.append(f"| {i.index} | {i.topic} | {'code' if i.checked else 'unread'} | {what} | {_cell(i.text)} |")
        out.append("")
    return "\n".join(out)
