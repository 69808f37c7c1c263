"""How faithfully the code scorer reads the VitaBench task files.

Per task file (and per release, "2025-11" or "2026", when a file holds both): tasks loaded and
skipped (with the loader's reasons), oracle success (the golden route through the env), the share
of natural-language rubric items checked by code (two figures, each labelled: ``items``, the
item-weighted share, checked items over all items; ``task average``, ``rubric_nl_coverage``
averaged over tasks), and the scorer's agreement with a labelled check set built from the rubric text
(``servicegym.envs.tasks.vitabench.labelled``): legal variants of the golden route it accepts,
violations it rejects (targeted ones and unrequested writes) and, under ``--scoring rubric``,
rubric-silent deviations it accepts (under ``strict`` they are out of scope and listed apart), per
kind, with every disagreement listed.

    python scripts/fidelity_report.py                                   # ../shared/data/vitabench
    python scripts/fidelity_report.py --data DIR --out runs/fidelity.md
    python scripts/fidelity_report.py --scoring strict --part build      # the gold end state too
    python scripts/fidelity_report.py --max-per-task 0                   # every kind a task yields
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import servicegym  # noqa: E402,F401  registers the ids
from servicegym.envs.tasks.vitabench import vitabench_domain  # noqa: E402
from servicegym.envs.tasks.vitabench.labelled import (  # noqa: E402
    KINDS,
    LABELS,
    MAX_PER_TASK,
    PARTS,
    SCORINGS,
    SILENT_KINDS,
    FileResult,
    Outcome,
    agreement,
    by_kind,
    check_file,
)

ENV_OF_DOMAIN = {
    "delivery": "servicegym/Delivery-v0",
    "instore": "servicegym/InStore-v0",
    "travel": "servicegym/Travel-v0",
    "cross": "servicegym/CrossScenario-v0",
}


def default_data_dir() -> Path:
    override = os.environ.get("SERVICEGYM_VITABENCH_DIR")
    return Path(override) if override else ROOT.parent / "shared" / "data" / "vitabench"


def task_files(data: Path) -> list[tuple[Path, str]]:
    """The VitaBench task files under ``data`` with the env id of their domain."""
    out = []
    for path in sorted(data.rglob("*.json")):
        try:
            tasks = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(tasks, list) or not tasks or not isinstance(tasks[0], dict):
            continue
        domain = None
        for part in (path.parent.name, str(tasks[0].get("domain", ""))):
            domain = vitabench_domain(part) or ("cross" if part.startswith("cross") else None)
            if domain:
                break
        if domain in ENV_OF_DOMAIN:
            out.append((path, ENV_OF_DOMAIN[domain]))
    return out


def pct(a: int, n: int) -> str:
    return f"{a}/{n} ({100.0 * a / n:.1f}%)" if n else "-"


def coverage_cell(covs: list[float], compiled: int, total: int) -> str:
    """The NL-coverage cell, both figures labelled: the average of the tasks' ``rubric_nl_coverage``
    (each task weighs the same) and the items checked by code over all items (each item weighs the
    same). The two differ where tasks have different numbers of items."""
    if not covs:
        return "-"
    items = f"{100.0 * compiled / total:.1f}%" if total else "-"
    return f"items {compiled}/{total} ({items}); task average {100.0 * sum(covs) / len(covs):.1f}%"


def label_of(path: Path, data: Path) -> str:
    rel = path.relative_to(data) if path.is_relative_to(data) else path
    return f"`{rel.as_posix()}`"


def summary_rows(fr: FileResult, name: str) -> list[list[str]]:
    """One row per release of the file (one row when the file holds one release)."""
    by_release: dict[str, list] = defaultdict(list)
    for t in fr.tasks:
        by_release[t.release or "-"].append(t)
    rows = []
    releases = sorted(by_release) or ["-"]
    for k, rel in enumerate(releases):
        tasks = by_release.get(rel, [])
        outs = [o for t in tasks for o in t.outcomes]
        ag = agreement(outs)
        covs = [t.coverage for t in tasks if t.coverage is not None]
        compiled = sum(round((t.coverage or 0.0) * t.nl_total) for t in tasks)
        total = sum(t.nl_total for t in tasks)
        skipped = ""
        if k == 0:
            skipped = str(len(fr.skipped))
            if fr.skipped:
                skipped += " (" + ", ".join(str(s.get("task_id")) for s in fr.skipped) + ")"
        rows.append([
            name, rel, str(len(tasks)), skipped,
            pct(sum(t.oracle for t in tasks), len(tasks)),
            coverage_cell(covs, compiled, total),
            pct(*ag["accept"]), pct(*ag["reject"]),
            pct(*ag["silent"]) if fr.scoring == "rubric" and fr.scoring_applied else "-",
        ])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def scorer_said(o: Outcome) -> str:
    if o.success:
        return "success"
    said = "failure: " + (", ".join(o.failed) if o.failed else "no rubric item failed (ended early?)")
    if o.tool_errors:
        said += f"; {o.tool_errors} tool error(s)"
    return said


SUMMARY_HEADER = ["file", "release", "tasks", "skipped", "oracle", "NL rubric checked by code", "legal accepted",
                  "violations rejected", "rubric-silent deviations accepted"]


def _variant_line(name: str, o: Outcome) -> str:
    v = o.variant
    item = f" item {v.item_index}: \"{v.item}\"" if v.item else ""
    return f"- {name} task {v.task_id}, {v.kind} (label {v.label}; {v.detail}); scorer: {scorer_said(o)}.{item}"


def _withheld(lines: list[str], blind: bool) -> list[str]:
    """The item lines of a section, or, for the held part (``blind``), only how many there are: the held part
    is measured without being read, so its item texts stay out of the report unless asked for."""
    if not blind or not lines or lines == ["None."]:
        return lines
    return [f"{len(lines)} (item texts withheld for the held part; pass --show-held to print them)."]


def build_report(results: list[tuple[str, FileResult]], max_per_task: int | None, scoring: str = "rubric",
                 blind: bool = False) -> str:
    out = ["# VitaBench fidelity report", ""]
    not_applied = [name for name, fr in results if not fr.scoring_applied]
    out += [f"Scoring: `{scoring}`" + (f" (not taken by the env of {', '.join(not_applied)}: its default ran)"
                                       if not_applied else "") + ".", ""]
    rows = [r for name, fr in results for r in summary_rows(fr, name)]
    out.append(table(SUMMARY_HEADER, rows))
    out += ["", f"Labelled variants: at most {max_per_task or 'all'} per task and group (targeted kinds, "
                "rubric-silent deviations, unrequested writes), one per kind; a task whose golden route "
                "fails gives none. Legal: golden route variants the rubric accepts; violations: variants "
                "the rubric rejects, targeted ones and unrequested writes (an order, booking or cancellation "
                "the user never asked for); rubric-silent deviations: the golden route changed in a detail "
                "the gold holds and no rubric item mentions, accepted under `rubric` scoring, out of scope "
                "under `strict` (`envs/tasks/vitabench/labelled.py`). NL rubric checked by code: items is the "
                "share of all the rubric items checked by code (each item weighs the same); task average is "
                "the mean of the tasks' `rubric_nl_coverage` (each task weighs the same).", ""]
    # per kind
    out += ["## Agreement per kind", ""]
    header = ["kind", "label"] + [name for name, _ in results]
    krows = []
    per_file = [by_kind(o for t in fr.tasks for o in t.outcomes) for _, fr in results]
    for kind in KINDS:
        if not any(kind in k for k in per_file):
            continue
        label = LABELS[kind]
        if kind in SILENT_KINDS:
            label = "accept" if scoring == "rubric" else "out of scope (accepted shown)"
        krows.append([kind, label] + [pct(*k[kind]) if kind in k else "-" for k in per_file])
    out.append(table(header, krows))
    # disagreements
    out += ["", "## Disagreements", ""]
    in_scope = (lambda o: True) if scoring == "rubric" else (lambda o: o.variant.kind not in SILENT_KINDS)
    dis = [(name, o) for name, fr in results for t in fr.tasks for o in t.outcomes
           if o.feasible and in_scope(o) and not o.agrees]
    out += _withheld([_variant_line(name, o) for name, o in dis] or ["None."], blind)
    if scoring != "rubric":
        silent = [(name, o) for name, fr in results for t in fr.tasks for o in t.outcomes
                  if o.feasible and o.variant.kind in SILENT_KINDS]
        out += ["", "## Rubric-silent deviations under strict scoring (out of scope)", "",
                f"Accepted {sum(o.success for _, o in silent)} of {len(silent)}; strict scoring also asks for "
                "the gold end state, so a rejection here is no disagreement. Rejected:", ""]
        rejected = [(name, o) for name, o in silent if not o.success]
        out += _withheld([_variant_line(name, o) for name, o in rejected] or ["None."], blind)
    infeasible = [(name, o) for name, fr in results for t in fr.tasks for o in t.outcomes if not o.feasible]
    if infeasible:
        out += ["", "## Infeasible variants (more tool errors than the golden route; left out)", ""]
        out += _withheld([_variant_line(name, o) for name, o in infeasible], blind)
    # golden routes against the rubric's times
    misses = [(name, t.task_id, m) for name, fr in results for t in fr.tasks for m in t.time_misses]
    out += ["", "## Time items the golden route does not meet (read by the labeller)", "",
            "The oracle passes these tasks, so the scorer does not check the item as worded (or, where "
            "marked, no order could arrive in time and the loader widened the window).", ""]
    lines = []
    for name, tid, m in misses:
        tb = m.bound
        got = ", ".join(x.strftime("%Y-%m-%d %H:%M") for x in m.golden)
        why = f" (no order could arrive before {m.earliest:%H:%M})" if m.earliest else ""
        lines.append(f"- {name} task {tid}, item {tb.index} ({tb.relation} "
                     f"{tb.start:%Y-%m-%d %H:%M}{'' if tb.start == tb.end else f' - {tb.end:%H:%M}'}); golden: {got}"
                     f"{why}: \"{tb.item}\"")
    out += _withheld(lines or ["None."], blind)
    # skipped tasks
    out += ["", "## Skipped tasks", ""]
    skipped = [(name, s) for name, fr in results for s in fr.skipped]
    if not skipped:
        out.append("None.")
    for name, s in skipped:
        reason = str(s.get("reason", ""))
        out.append(f"- {name} task {s.get('task_id')} ({s.get('field')}): {reason[:300]}{'...' if len(reason) > 300 else ''}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir(), help="the VitaBench data directory")
    ap.add_argument("--out", type=Path, default=None, help="write the markdown report here too")
    ap.add_argument("--max-per-task", type=int, default=MAX_PER_TASK, help="labelled variants per task (0: all kinds)")
    ap.add_argument("--max-tasks", type=int, default=None, help="only the first N tasks of each file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--part", choices=PARTS, default="all",
                    help="only the tasks of one part of the reader's split (labelled.reader_part): build or held")
    ap.add_argument("--show-held", action="store_true",
                    help="with --part held, print the held items' texts too (by default only figures: the held part "
                         "is measured, not read)")
    ap.add_argument("--scoring", choices=SCORINGS, default="rubric",
                    help="the envs' scoring: rubric (the rubric, and no unrequested write) or strict (the gold end "
                         "state too); passed to gymnasium.make where the env takes it")
    args = ap.parse_args(argv)
    if not args.data.is_dir():
        print(f"no VitaBench data at {args.data} (pass --data or set SERVICEGYM_VITABENCH_DIR)", file=sys.stderr)
        return 2
    files = task_files(args.data)
    if not files:
        print(f"no VitaBench task files under {args.data}", file=sys.stderr)
        return 2
    cap = args.max_per_task or None
    results = [(label_of(p, args.data), check_file(str(p), env_id, args.seed, cap, args.max_tasks, args.part, args.scoring))
               for p, env_id in files]
    report = build_report(results, cap, args.scoring, blind=args.part == "held" and not args.show_held)
    print(report, end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
