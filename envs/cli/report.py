"""Evaluation reports from rollout records: metrics per domain, a markdown report, a table, a plot.

Input: the JSONL records that ``servicegym.envs.running.rollouts.collect`` writes (one episode a line, with
``env_id``, ``task_id``, ``trial``, ``success``, ``score``, ``steps``, ``termination_reason``,
``tool_errors`` and ``error``). Output, per domain (one env id is one domain):

* Avg@k, Pass@k and Pass^k for k = 1..K (the unbiased estimators of ``rewards.metrics``, K the
  smallest number of trials any task has), with its bootstrap confidence intervals over tasks;
* the mean over tasks of every score component the episodes carry (``rubric_fraction``; payments ``goal``,
  ``process``, ``protection`` as G/P/F; workspace ``proc``, ``comp``), and each rubric item's pass
  rate, worst first;
* how episodes ended, mean steps and tool errors.

An episode whose ``error`` is set (the policy or its endpoint failed) counts as a failure in Avg@k,
Pass@k and Pass^k, as VitaBench counts it: a model that errors on hard tasks must not score above
one that fails them. The errors are counted and shown beside the metrics (``errors``, their rate),
and the report's first line says so when there are any; score components and mean steps are over
the episodes that ended without an error (an errored one has no score). ``write_report`` writes ``report.md`` and ``pass_k.png``
(matplotlib, Agg backend); ``print_table`` prints the headline table with rich.
"""

from __future__ import annotations

import importlib
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from servicegym.rewards import metrics as _metrics

# score components shown under their papers' names; any other top-level numeric component is shown as is
COMPONENT_LABELS = {
    "rubric_fraction": "rubric fraction",
    "goal": "G (goal)",
    "process": "P (process)",
    "protection": "F (protection)",
    "strict": "G and P and F",
    "proc": "PROC",
    "comp": "COMP",
}
COMPONENT_SHORT = {"rubric_fraction": "rubric", "goal": "G", "process": "P", "protection": "F", "strict": "GPF",
                   "proc": "PROC", "comp": "COMP"}
BOOTSTRAP_SAMPLES = 1000
CI_LEVEL = 0.95


class ReportError(ValueError):
    """Records that cannot make a report (none, or not rollout records); the message is one line."""


@dataclass
class DomainSummary:
    domain: str
    env_ids: list[str]
    policies: list[str]
    tasks: int
    trials: int  # K: the smallest number of valid trials of any task
    episodes: int
    errors: int  # episodes whose ``error`` is set: counted as failures in the metrics
    uneven: bool  # tasks have different numbers of trials
    metrics: dict[str, float]  # avg@K, pass@k, pass^k
    ci: dict[str, tuple[float, float]]  # same keys, bootstrap interval over tasks
    components: dict[str, float]
    items: dict[str, float]
    reasons: dict[str, int]
    mean_steps: float
    mean_tool_errors: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def error_rate(self) -> float:
        return self.errors / self.episodes if self.episodes else 0.0

    def pass_hat(self) -> list[float]:
        return [self.metrics[f"pass^{k}"] for k in range(1, self.trials + 1)]

    def as_dict(self) -> dict[str, Any]:
        """The summary as JSON-able data (``report.json``): the same numbers as the table and
        report.md, intervals as ``[low, high]``, the error count and rate beside them."""
        return {"domain": self.domain, "env_ids": self.env_ids, "policies": self.policies, "tasks": self.tasks,
                "trials": self.trials, "episodes": self.episodes, "errors": self.errors, "error_rate": self.error_rate,
                "uneven_trials": self.uneven, "metrics": self.metrics, "ci": {k: list(v) for k, v in self.ci.items()},
                "components": self.components, "items": self.items, "reasons": self.reasons,
                "mean_steps": self.mean_steps, "mean_tool_errors": self.mean_tool_errors}

    def pass_at(self) -> list[float]:
        return [self.metrics[f"pass@{k}"] for k in range(1, self.trials + 1)]


# ----- reading --------------------------------------------------------------------------------
def load_rollouts(path: str | Path) -> list[dict[str, Any]]:
    """The records of a rollouts JSONL file; a ``ReportError`` naming the line if one is not a record."""
    p = Path(path)
    if not p.is_file():
        raise ReportError(f"rollouts file not found: {p}")
    out = []
    with open(p, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise ReportError(f"{p}:{n}: not JSON ({err.msg})") from None
            if not isinstance(rec, dict) or "task_id" not in rec or "success" not in rec:
                raise ReportError(f"{p}:{n}: not a rollout record (needs task_id and success)")
            out.append(rec)
    if not out:
        raise ReportError(f"no episodes in {p}")
    return out


def options_text(options: Any) -> str:
    """An env's experiment options as a run's label shows them: ``call_cap=1.2, gold_documents``
    (``""`` for none)."""
    if not isinstance(options, dict) or not options:
        return ""
    return ", ".join(k if v is True else f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(options.items()))


def policy_label(rec: dict[str, Any]) -> str:
    """The record's policy, with the env's experiment options it ran under (its ``env_options``:
    Payments' ``call_cap``, ``disclosure``, ``gold_documents``) in brackets: ``oracle
    [call_cap=1.2]``. Records of one policy under different options are never pooled."""
    policy = str(rec.get("policy", ""))
    opts = options_text(rec.get("env_options"))
    return f"{policy} [{opts}]" if opts else policy


def domain_of(rec: dict[str, Any]) -> str:
    """The record's domain: its ``domain`` field, else the domain of its env class, else the env id."""
    if rec.get("domain"):
        return str(rec["domain"])
    env_id = str(rec.get("env_id", ""))
    return _env_domain(env_id) if env_id else "unknown"


def _env_domain(env_id: str) -> str:
    import gymnasium as gym

    import servicegym.envs.environments.registration  # noqa: F401  registers the ids

    try:
        entry = gym.spec(env_id).entry_point
        if isinstance(entry, str):
            module, _, name = entry.partition(":")
            return getattr(importlib.import_module(module), name).domain or env_id
    except Exception:  # an id of another package, or no longer registered: group by the id itself
        pass
    return env_id


# ----- metrics --------------------------------------------------------------------------------
def counted(recs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as every metric counts them: an errored episode (its ``error`` set) is a failed
    trial of its task with no score (VitaBench's reading), never left out. The one definition that
    the report, the comparison (``servicegym.envs.cli.compare``) and their plots share."""
    return [r if not r.get("error") else {**r, "success": False, "score": {}} for r in recs]


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def summarize_domain(domain: str, recs: list[dict[str, Any]], bootstrap: int = BOOTSTRAP_SAMPLES) -> DomainSummary:
    """The metrics of one domain's records, through ``rewards.metrics.report`` (one mechanism for
    the estimators and their bootstrap intervals)."""
    valid = [r for r in recs if not r.get("error")]
    scored = counted(recs)
    counts = Counter(str(r["task_id"]) for r in scored)
    metrics: dict[str, float] = {}
    ci: dict[str, tuple[float, float]] = {}
    components: dict[str, float] = {}
    items: dict[str, float] = {}
    k_max = min(counts.values()) if counts else 0
    if scored:
        rep = _metrics.report(scored, group_by=lambda r: domain, n_boot=max(1, bootstrap), confidence=CI_LEVEL)
        for name, entry in rep["overall"].items():
            if name in ("tasks", "trials"):
                continue
            metrics[name] = entry["value"]
            if bootstrap:
                ci[name] = tuple(entry["ci"])
        for name, entry in rep["components"].items():
            if name == "rubric_items":
                continue
            if name.startswith("rubric/"):
                items[name.removeprefix("rubric/")] = entry["value"]
            else:
                components[name] = entry["value"]
    return DomainSummary(
        domain=domain,
        env_ids=sorted({str(r.get("env_id", "")) for r in recs if r.get("env_id")}),
        policies=sorted({policy_label(r) for r in recs if r.get("policy")}),
        tasks=len(counts),
        trials=k_max,
        episodes=len(recs),
        errors=len(recs) - len(valid),
        uneven=len(set(counts.values())) > 1,
        metrics=metrics,
        ci=ci,
        components=components,
        items=dict(sorted(items.items(), key=lambda kv: (kv[1], kv[0]))),
        reasons=dict(Counter(str(r.get("termination_reason") or ("error" if r.get("error") else "")) for r in recs)),
        mean_steps=float(np.mean([r.get("steps", 0) for r in valid])) if valid else 0.0,
        mean_tool_errors=float(np.mean([r.get("tool_errors", 0) for r in valid])) if valid else 0.0,
    )


def summarize_records(records: Iterable[dict[str, Any]], bootstrap: int = BOOTSTRAP_SAMPLES) -> list[DomainSummary]:
    """One summary per domain and policy, in order of first appearance: episodes of different
    policies are never pooled (two policies' one trial each would read as one policy's k = 2), nor
    of one policy under different env options (``policy_label``)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault((domain_of(r), policy_label(r)), []).append(r)
    if not groups:
        raise ReportError("no episodes to report")
    return [summarize_domain(d, recs, bootstrap) for (d, _), recs in groups.items()]


# ----- rendering ------------------------------------------------------------------------------
def _fmt(s: DomainSummary, key: str) -> str:
    v = s.metrics[key]
    if key in s.ci:
        lo, hi = s.ci[key]
        return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
    return f"{v:.3f}"


def errors_text(s: DomainSummary) -> str:
    return f"{s.errors} ({s.error_rate:.0%})" if s.errors else "0"


def errors_line(summaries: list[DomainSummary]) -> str:
    """The report's first line: how many episodes ended in an endpoint or policy error (counted as
    failures), or that none did."""
    errors = sum(s.errors for s in summaries)
    total = sum(s.episodes for s in summaries)
    if not errors:
        return f"No errors: all {total} episodes ended without an endpoint or policy error."
    return (f"**{errors} of {total} episodes ({errors / total:.0%}) ended in an endpoint or policy error; they count "
            "as failures in every metric below** (`evaluate` runs them again on its next run).")


def markdown(summaries: list[DomainSummary], title: str = "servicegym evaluation", plot: str | None = "pass_k.png") -> str:
    lines = [f"# {title}", "", errors_line(summaries), ""]
    total = sum(s.episodes for s in summaries)
    lines.append(f"{total} episodes over {len(summaries)} domain(s). Metrics are the unbiased estimators over the "
                 f"tasks' trials, an errored episode counting as a failure; intervals are {int(CI_LEVEL * 100)}% "
                 f"percentile bootstrap over tasks ({BOOTSTRAP_SAMPLES} resamples).")
    lines += ["", "## Summary", "", "| domain | env | policy | tasks | k | avg@k | pass@k | pass^k | errors |",
              "|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        if not s.tasks:
            lines.append(f"| {s.domain} | {', '.join(s.env_ids)} | {', '.join(s.policies)} | 0 | 0 | - | - | - | {errors_text(s)} |")
            continue
        k = s.trials
        lines.append(f"| {s.domain} | {', '.join(s.env_ids)} | {', '.join(s.policies)} | {s.tasks} | {k} | "
                     f"{_fmt(s, f'avg@{k}')} | {_fmt(s, f'pass@{k}')} | {_fmt(s, f'pass^{k}')} | {errors_text(s)} |")
    if plot:
        lines += ["", f"![Pass^k versus k]({plot})"]
    elif all(s.errors == s.episodes for s in summaries):
        lines += ["", "No Pass^k plot: every episode ended in an error, so nothing was measured."]
    for s in summaries:
        lines += ["", f"## {s.domain}", ""]
        lines.append(f"{s.tasks} tasks, {s.episodes} episodes"
                     + (f", {s.errors} of them errored (counted as failures)" if s.errors else "")
                     + (f"; tasks have different numbers of trials, k runs to the smallest ({s.trials})" if s.uneven else "")
                     + f"; mean {s.mean_steps:.1f} steps and {s.mean_tool_errors:.2f} tool errors per episode.")
        if s.tasks:
            lines += ["", "| k | pass@k | pass^k |", "|---|---|---|"]
            lines += [f"| {k} | {_fmt(s, f'pass@{k}')} | {_fmt(s, f'pass^{k}')} |" for k in range(1, s.trials + 1)]
            lines += ["", f"Avg@{s.trials}: {_fmt(s, f'avg@{s.trials}')}"]
        if s.components:
            lines += ["", "### Score components (mean over tasks)", "", "| component | mean |", "|---|---|"]
            lines += [f"| {COMPONENT_LABELS.get(k, k)} | {v:.3f} |" for k, v in s.components.items()]
        if s.items:
            lines += ["", "### Rubric items (pass rate, worst first)", "", "| item | pass rate |", "|---|---|"]
            lines += [f"| {k} | {v:.3f} |" for k, v in s.items.items()]
        lines += ["", "### How episodes ended", "", "| reason | episodes |", "|---|---|"]
        lines += [f"| {k or '(none)'} | {v} |" for k, v in sorted(s.reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + "\n"


def plot_pass_k(summaries: list[DomainSummary], path: str | Path) -> Path:
    """Pass^k (solid, with its bootstrap band) and Pass@k (dashed) against k, one colour per domain."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    try:
        for i, s in enumerate(x for x in summaries if x.tasks):
            ks = list(range(1, s.trials + 1))
            color = f"C{i % 10}"
            name = f"{s.domain} {'/'.join(s.policies)}"
            ax.plot(ks, s.pass_hat(), marker="o", color=color, label=f"{name} pass^k")
            ax.plot(ks, s.pass_at(), linestyle="--", marker=".", color=color, alpha=0.7, label=f"{name} pass@k")
            pass_hat_band(ax, s, color)
        top = max((s.trials for s in summaries if s.tasks), default=1)
        return finish_k_plot(fig, ax, top, "rate", "Pass^k (solid) and Pass@k (dashed) versus k", path)
    finally:
        plt.close(fig)


def pass_hat_band(ax: Any, s: DomainSummary, color: str) -> None:
    """The bootstrap band of ``s``'s Pass^k curve (when every k has its interval)."""
    ks = list(range(1, s.trials + 1))
    if all(f"pass^{k}" in s.ci for k in ks):
        ax.fill_between(ks, [s.ci[f"pass^{k}"][0] for k in ks], [s.ci[f"pass^{k}"][1] for k in ks],
                        color=color, alpha=0.15, linewidth=0)


def finish_k_plot(fig: Any, ax: Any, kmax: int, ylabel: str, title: str, path: str | Path) -> Path:
    """Axes, integer k ticks (at most about ten), grid, legend; the figure saved as PNG at ``path``."""
    ax.set_xlabel("k (trials)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(0.5, kmax + 0.5)
    ax.set_xticks(range(1, kmax + 1) if kmax <= 20 else range(1, kmax + 1, max(1, kmax // 10)))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, format="png")
    return out


def table_rows(summaries: list[DomainSummary], wide: bool = False) -> tuple[list[str], list[list[str]]]:
    """The terminal table's rows. Components: the headline ones (no ``/`` in the name: rubric
    fraction, G/P/F, PROC/COMP); ``wide`` adds every per-item and per-session one."""
    head = ["domain", "policy", "tasks", "k", "avg@k", "pass@1", "pass@k", "pass^k", "components", "errors"]
    rows = []
    for s in summaries:
        policy = "/".join(s.policies)
        if not s.tasks:
            rows.append([s.domain, policy, "0", "0", "-", "-", "-", "-", "", errors_text(s)])
            continue
        k = s.trials
        comps = " ".join(f"{COMPONENT_SHORT.get(c, c)}={v:.2f}" for c, v in s.components.items() if wide or "/" not in c)
        rows.append([s.domain, policy, str(s.tasks), str(k), _fmt(s, f"avg@{k}"), f"{s.metrics['pass@1']:.3f}",
                     _fmt(s, f"pass@{k}"), _fmt(s, f"pass^{k}"), comps, errors_text(s)])
    return head, rows


def print_table(summaries: list[DomainSummary], file: Any = None, title: str = "servicegym evaluation",
                wide: bool = False) -> None:
    """The headline table, with rich, as wide as the terminal (80 columns when the output is not
    one, e.g. a pipe); ``wide`` prints every component at 200 columns whatever the terminal.

    No cell is ever split inside a word: the numeric columns do not wrap, the components wrap at
    their spaces; when the table cannot fit so, each row is printed as a block of ``name value``
    lines instead (the vertical layout), which fits any width of 40 columns or more."""
    import shutil

    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    head, rows = table_rows(summaries, wide)
    width = 200 if wide else shutil.get_terminal_size((80, 24)).columns
    console = Console(file=file, width=width)
    table = Table(title=title, show_lines=False)
    for h in head:
        wraps = h == "components"
        table.add_column(h, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis", min_width=len(h))
    for r in rows:
        table.add_row(*r)
    # the narrowest the table can be without splitting a word: every column as wide as its widest
    # cell (components: its longest word), plus rich's padding (1 + 1) and borders (n + 1)
    needed = len(head) * 3 + 1
    for i, h in enumerate(head):
        cells = [r[i] for r in rows]
        words = [w for c in cells for w in c.split()] if h == "components" else cells
        needed += max([cell_len(h), *(cell_len(w) for w in words)])
    if needed <= width:
        console.print(table)
        return
    console.print(title, style="italic")
    for r in rows:
        block = Table.grid(padding=(0, 2))
        block.add_column(no_wrap=True, style="bold")
        block.add_column(overflow="fold")
        for name, value in zip(head[2:], r[2:]):
            if value:
                block.add_row(name, value)
        console.print(f"{r[0]} / {r[1]}", style="bold")
        console.print(block)


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float as None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def write_report(records: list[dict[str, Any]], out_dir: str | Path, title: str = "servicegym evaluation",
                 bootstrap: int = BOOTSTRAP_SAMPLES) -> tuple[list[DomainSummary], Path, Path | None]:
    """Summarise ``records``; write ``out_dir/report.md``, ``out_dir/report.json`` (``DomainSummary.as_dict``
    per domain, with the error and interval conventions) and ``out_dir/pass_k.png``. When every
    episode errored nothing was measured: no plot is drawn (``None``; a stale one is removed) and
    the report says why."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summaries = summarize_records(records, bootstrap)
    png: Path | None = out / "pass_k.png"
    if all(s.errors == s.episodes for s in summaries):
        png.unlink(missing_ok=True)
        png = None
    else:
        png = plot_pass_k(summaries, png)
    md = out / "report.md"
    md.write_text(markdown(summaries, title, plot=png.name if png else None), encoding="utf-8")
    data = {"title": title, "ci_level": CI_LEVEL, "bootstrap": bootstrap, "errors_count_as_failures": True,
            "domains": [s.as_dict() for s in summaries]}
    (out / "report.json").write_text(json.dumps(_finite(data), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return summaries, md, png
