"""Comparing runs: two or more rollouts files side by side, and the paired difference of their tasks.

Input: runs, each a rollouts JSONL file (``collect``, ``rollout``) or an ``evaluate`` directory
holding ``rollouts.jsonl``, with the ``run.json`` that ``evaluate`` writes beside it (model, base
URL host, policy, env id and version, scoring mode, split, trials, seed, date, git commit,
servicegym version: ``run_metadata``). A run is labelled by its model, else its policy; a bare file
without ``run.json`` by its records' policy and its file name; two runs of one label get their
directory (then a number) added.

Output (``compare``, then ``markdown``, ``csv_text``, ``to_json``, ``plot_pass_hat``,
``print_compare``; ``write_compare`` writes ``compare.md``, ``compare.csv``, ``compare.json`` and
``compare.png``):

* one row per run and (domain, policy), as ``servicegym.envs.cli.report`` summarises it: tasks,
  trials K, Avg@K, Pass@1 and Pass^K with their bootstrap intervals over tasks, errors and their
  rate. An errored episode counts as a failure, by ``report.counted``, the one definition;
* for each run after the first, the paired comparison with the first (two runs: B against A): the
  per-task success rate (c / n over the task's trials, errors as failures) of the run minus the
  first's, its mean over the tasks both ran with a 95% percentile interval from a paired bootstrap
  over tasks (``rewards.metrics.bootstrap_ci`` of the per-task differences: ``BOOTSTRAP_SAMPLES``
  resamples, seed 0, so the same runs give the same interval), and how many tasks each run wins
  (a higher rate) and how many tie;
* the Pass^k curves (k = 1..K) of every run on one chart (matplotlib, Agg backend).

Runs whose task sets differ, or whose recorded scoring modes differ, are refused with a one-line
``CompareError`` unless ``allow_mismatch``, with which each paired comparison is over the tasks
both runs hold, and says so. A run holding several policies cannot be paired (its tasks would pool
them) and is refused as well.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from servicegym.envs.cli.report import (
    BOOTSTRAP_SAMPLES,
    CI_LEVEL,
    DomainSummary,
    ReportError,
    counted,
    finish_k_plot,
    load_rollouts,
    options_text,
    pass_hat_band,
    policy_label,
    summarize_records,
)
from servicegym.rewards import metrics as _metrics

ROLLOUTS_NAME = "rollouts.jsonl"
RUN_META_NAME = "run.json"
SEED = 0  # the paired bootstrap's seed
OUTPUTS = ("compare.md", "compare.csv", "compare.json", "compare.png")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


class CompareError(ReportError):
    """Runs that cannot be compared (different tasks or scoring modes, a run of several policies);
    the message is one line."""


# ----- run metadata (evaluate's run.json) ---------------------------------------------------------
def url_host(url: str | None) -> str | None:
    """The host (and port) of an endpoint URL: never its user, password, path, query or fragment."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url).strip())
    except ValueError:
        return None
    host = parts.netloc.rpartition("@")[2]
    return host or None


def _git_commit() -> str | None:
    """``git rev-parse HEAD`` of the checkout servicegym runs from; None when it is not one (an
    installed wheel) or git fails."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists() or not (root / "pyproject.toml").is_file():
        return None
    try:
        proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError):
        return None
    commit = proc.stdout.strip()
    return commit if proc.returncode == 0 and commit else None


def _version() -> str:
    import servicegym

    return str(getattr(servicegym, "__version__", "unknown"))


def run_metadata(*, env_id: str, policy: str, trials: int, seed: int, split: str, scoring: str | None = None,
                 tasks_file: str | None = None, task_ids: list[str] | None = None, tasks: int | None = None,
                 limit: int = 0, llm: dict[str, Any] | None = None, env_options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``evaluate`` records in ``run.json``. ``llm`` is ``--policy llm``'s endpoint config:
    only its model and its base URL's host are kept (no credentials, query or API key). ``split``
    reads ``file`` for a task file and ``custom`` for ``--task-ids``; ``scoring`` None is the
    envs' default, ``rubric``. ``env_options``: the env's experiment options that differ from
    their defaults (Payments' ``call_cap``, ``disclosure``, ``gold_documents``), kept only when
    there are any; the run's label shows them."""
    m = re.search(r"-(v\d+)$", env_id)
    meta: dict[str, Any] = {
        "model": (llm or {}).get("model") or None,
        "base_url_host": url_host((llm or {}).get("base_url")),
        "policy": policy,
        "env_id": env_id,
        "env_version": m.group(1) if m else None,
        "scoring": scoring or "rubric",
        "split": "file" if tasks_file else ("custom" if task_ids else split),
        "tasks_file": Path(tasks_file).name if tasks_file else None,
        "tasks": tasks,
        "limit": limit,
        "trials": trials,
        "seed": seed,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "servicegym_version": _version(),
    }
    if env_options:
        meta["env_options"] = dict(env_options)
    return meta


def write_run_meta(out_dir: str | Path, meta: dict[str, Any]) -> Path:
    """``out_dir/run.json``, written whole (a temporary file renamed over it)."""
    out = Path(out_dir) / RUN_META_NAME
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return out


# ----- loading runs -----------------------------------------------------------------------------
@dataclass
class Run:
    """One run: its rollouts file, its ``run.json`` (empty when absent), records and summaries."""

    source: str  # as given on the command line
    path: Path  # the rollouts file
    meta: dict[str, Any]
    records: list[dict[str, Any]]
    summaries: list[DomainSummary]
    label: str = ""

    @property
    def scoring(self) -> str | None:
        return self.meta.get("scoring") or None

    @property
    def policies(self) -> list[str]:
        return sorted({policy_label(r) for r in self.records})

    @property
    def task_ids(self) -> set[str]:
        return {str(r["task_id"]) for r in self.records}

    def task_rates(self) -> dict[str, float]:
        """Each task's success rate over its trials, an errored trial a failure (``report.counted``)."""
        trials: dict[str, list[bool]] = defaultdict(list)
        for r in counted(self.records):
            trials[str(r["task_id"])].append(bool(r["success"]))
        return {t: row["avg"] for t, row in _metrics.per_task(trials, [1]).items()}

    def where(self) -> str:
        """The run's name on disk: its directory for an evaluate run, else the file's name."""
        return self.path.parent.name if self.path.name == ROLLOUTS_NAME else self.path.name


def resolve_run(inp: str | Path) -> Path:
    """The rollouts file of a RUN argument: the file itself, or ``rollouts.jsonl`` in a directory."""
    p = Path(inp)
    if p.is_dir():
        if not (p / ROLLOUTS_NAME).is_file():
            raise ReportError(f"no {ROLLOUTS_NAME} in directory {p}")
        return p / ROLLOUTS_NAME
    if not p.is_file():
        raise ReportError(f"rollouts file not found: {p}")
    return p


def read_run_meta(path: Path) -> dict[str, Any]:
    """``run.json`` beside an evaluate run's ``rollouts.jsonl`` (a bare file has none)."""
    meta = path.with_name(RUN_META_NAME)
    if path.name != ROLLOUTS_NAME or not meta.is_file():
        return {}
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ReportError(f"{meta}: not a run.json ({err})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{meta}: not a run.json (not an object)")
    return data


def load_run(inp: str | Path, bootstrap: int = BOOTSTRAP_SAMPLES) -> Run:
    path = resolve_run(inp)
    records = load_rollouts(path)
    return Run(source=str(inp), path=path, meta=read_run_meta(path), records=records,
               summaries=summarize_records(records, bootstrap))


def _base_label(run: Run) -> str:
    if run.meta:
        # a run made with env options (Payments' call_cap, disclosure, gold_documents) says so in its label
        opts = options_text(run.meta.get("env_options")) or "; ".join(
            sorted({options_text(r.get("env_options")) for r in run.records} - {""}))
        base = str(run.meta.get("model") or run.meta.get("policy") or "/".join(run.policies))
        return f"{base} [{opts}]" if opts and opts not in base else base
    return f"{'/'.join(run.policies) or 'run'} ({run.where()})"


def label_runs(runs: list[Run]) -> list[Run]:
    """Give every run a distinct label: its model or policy (a bare file: policy and file name);
    a label two runs share gets the run's directory or file name, then its position."""
    labels = [_base_label(r) for r in runs]

    def parent(r: Run) -> str:
        return r.path.parent.parent.name if r.path.name == ROLLOUTS_NAME else r.path.parent.name

    # a bare file's label already names its file: its directory is the next thing that tells runs apart
    for suffix in (lambda r: r.where() if r.meta else parent(r), parent):
        groups: dict[str, list[int]] = defaultdict(list)
        for i, label in enumerate(labels):
            groups[label].append(i)
        for idxs in groups.values():
            names = [suffix(runs[i]) for i in idxs]
            if len(idxs) > 1 and len(set(names)) > 1:
                for i, name in zip(idxs, names):
                    labels[i] = f"{labels[i]} ({name})" if name else labels[i]
    same = [labels.count(label) > 1 for label in labels]
    labels = [f"{label} #{i + 1}" if dup else label for i, (label, dup) in enumerate(zip(labels, same))]
    for r, label in zip(runs, labels):
        r.label = label
    return runs


def load_runs(inputs: list[str | Path], bootstrap: int = BOOTSTRAP_SAMPLES) -> list[Run]:
    return label_runs([load_run(x, bootstrap) for x in inputs])


# ----- comparing --------------------------------------------------------------------------------
@dataclass
class Paired:
    """Run ``b`` against run ``a`` over the tasks both hold: per-task success rate, b - a."""

    a: str
    b: str
    tasks: int  # compared: the tasks both runs hold
    only_a: int
    only_b: int
    diff: float  # mean over tasks of b's rate - a's rate
    ci: tuple[float, float]
    b_wins: int
    a_wins: int
    ties: int
    intersection: bool  # the task sets differ and only the common tasks are compared


@dataclass
class Comparison:
    runs: list[Run]
    pairs: list[Paired]  # runs[i] against runs[0], i >= 1
    notes: list[str] = field(default_factory=list)
    bootstrap: int = BOOTSTRAP_SAMPLES


def paired(a: Run, b: Run, bootstrap: int = BOOTSTRAP_SAMPLES, seed: int = SEED) -> Paired:
    """``b`` against ``a``: the paired bootstrap over the tasks both runs hold."""
    ra, rb = a.task_rates(), b.task_rates()
    common = sorted(set(ra) & set(rb))
    if not common:
        raise CompareError(f"{a.label} and {b.label} have no task in common")
    diffs = [rb[t] - ra[t] for t in common]
    mean = float(sum(diffs) / len(diffs))
    lo, hi = _metrics.bootstrap_ci(diffs, max(1, bootstrap), CI_LEVEL, seed)
    # an interval of identical differences is exactly that value (no rounding noise around it)
    if len(set(diffs)) == 1:
        lo = hi = mean
    return Paired(a=a.label, b=b.label, tasks=len(common), only_a=len(set(ra) - set(rb)), only_b=len(set(rb) - set(ra)),
                  diff=mean, ci=(float(lo), float(hi)), b_wins=sum(d > 0 for d in diffs),
                  a_wins=sum(d < 0 for d in diffs), ties=sum(d == 0 for d in diffs),
                  intersection=set(ra) != set(rb))


def compare(runs: list[Run], allow_mismatch: bool = False, bootstrap: int = BOOTSTRAP_SAMPLES) -> Comparison:
    """The comparison of two or more labelled runs; a ``CompareError`` (one line) for runs that
    cannot be paired unless ``allow_mismatch``."""
    if len(runs) < 2:
        raise CompareError("a comparison needs two runs or more")
    for r in runs:
        if len(r.policies) > 1:
            raise CompareError(f"{r.source} holds episodes of {len(r.policies)} policies ({', '.join(r.policies)}); "
                               "compare runs of one policy each")
    notes: list[str] = []
    first = runs[0]
    modes = {r.label: r.scoring for r in runs if r.scoring}
    if len(set(modes.values())) > 1:
        text = ", ".join(f"{label} {mode}" for label, mode in modes.items())
        if not allow_mismatch:
            raise CompareError(f"the runs were scored differently ({text}); --allow-mismatch compares them anyway")
        notes.append(f"The runs were scored differently ({text}).")
    unknown = [r.label for r in runs if not r.scoring]
    if modes and unknown:
        notes.append(f"The scoring mode of {', '.join(unknown)} is not recorded (no run.json): it was not checked.")
    for r in runs[1:]:
        a, b = first.task_ids, r.task_ids
        if a != b:
            common = len(a & b)
            if not common:
                raise CompareError(f"{first.label} and {r.label} have no task in common ({len(a)} and {len(b)} tasks)")
            if not allow_mismatch:
                raise CompareError(f"{first.label} and {r.label} ran different tasks ({len(a)} and {len(b)}, {common} in "
                                   f"common); --allow-mismatch compares the {common} in common")
            notes.append(f"{first.label} and {r.label} ran different tasks ({len(a)} and {len(b)}): their paired "
                         f"comparison is over the {common} tasks in common.")
    trials = {s.trials for r in runs for s in r.summaries if s.tasks}
    if len(trials) > 1:
        notes.append(f"The runs have different numbers of trials (K = {', '.join(map(str, sorted(trials)))}): "
                     "Pass^K of different K are not comparable; the paired comparison uses every trial.")
    pairs = [paired(first, r, bootstrap) for r in runs[1:]]
    return Comparison(runs=runs, pairs=pairs, notes=notes, bootstrap=bootstrap)


# ----- rendering --------------------------------------------------------------------------------
def _short_env(env_ids: list[str]) -> str:
    return ", ".join(e.removeprefix("servicegym/") for e in env_ids) or "-"


def _value(s: DomainSummary, key: str) -> tuple[float, float, float] | None:
    if not s.tasks or key not in s.metrics:
        return None
    lo, hi = s.ci.get(key, (s.metrics[key], s.metrics[key]))
    return s.metrics[key], lo, hi


def _cell(s: DomainSummary, key: str) -> str:
    v = _value(s, key)
    return "-" if v is None else f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"


def _errors(s: DomainSummary) -> str:
    return f"{s.errors} ({s.error_rate:.0%})"


def _rows(cmp: Comparison) -> list[tuple[int, Run, DomainSummary]]:
    return [(i, r, s) for i, r in enumerate(cmp.runs) for s in r.summaries]


def run_key(i: int) -> str:
    """A, B, ... Z, AA, AB, ...: the runs' short names in the terminal table."""
    key = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        key = chr(65 + rem) + key
    return key


def _describe(r: Run, when: bool = False) -> str:
    m = r.meta
    bits = [", ".join(sorted({str(x.get("env_id", "")) for x in r.records if x.get("env_id")})) or None]
    if m:
        bits += [f"policy {m.get('policy')}" if m.get("model") else None,
                 f"at {m['base_url_host']}" if m.get("base_url_host") else None,
                 f"split {m.get('split')}" if m.get("split") else None,
                 f"scoring {m.get('scoring')}" if m.get("scoring") else None,
                 f"seed {m.get('seed')}" if m.get("seed") is not None else None,
                 f"{m['date']}" if when and m.get("date") else None,
                 f"commit {str(m['git_commit'])[:12]}" if when and m.get("git_commit") else None]
    else:
        bits.append("no run.json")
    return ", ".join([r.source] + [b for b in bits if b])


def markdown(cmp: Comparison, title: str = "servicegym comparison", plot: str | None = "compare.png") -> str:
    total = sum(s.episodes for r in cmp.runs for s in r.summaries)
    errors = sum(s.errors for r in cmp.runs for s in r.summaries)
    lines = [f"# {title}", ""]
    lines.append((f"**{errors} of {total} episodes ended in an endpoint or policy error; they count as failures in "
                  "every metric below.**") if errors else
                 f"No errors: all {total} episodes ended without an endpoint or policy error.")
    lines += ["", f"{len(cmp.runs)} runs. Metrics are the unbiased estimators over the tasks' trials, an errored "
              f"episode counting as a failure; intervals are {int(CI_LEVEL * 100)}% percentile bootstrap over tasks "
              f"({cmp.bootstrap} resamples)."]
    lines += ["", "## Runs", ""]
    lines += [f"- **{run_key(i)} = {r.label}**: {_describe(r, when=True)}" for i, r in enumerate(cmp.runs)]
    lines += ["", "| run | label | env | policy | tasks | K | Avg@K | Pass@1 | Pass^K | errors |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for i, r, s in _rows(cmp):
        k = s.trials
        lines.append(f"| {run_key(i)} | {r.label} | {', '.join(s.env_ids)} | {'/'.join(s.policies)} | {s.tasks} | {k} | "
                     f"{_cell(s, f'avg@{k}')} | {_cell(s, 'pass@1')} | {_cell(s, f'pass^{k}')} | {_errors(s)} |")
    lines += ["", "## Paired comparison", "",
              "The per-task success rate (successes over trials, an errored trial a failure) of each run minus the "
              f"first's, averaged over the tasks both ran, with a {int(CI_LEVEL * 100)}% interval from a paired "
              f"bootstrap over tasks ({cmp.bootstrap} resamples, seed {SEED}); a run wins a task when its rate is higher.",
              "", "| A | B | tasks | B - A | 95% interval | B wins | A wins | ties |", "|---|---|---|---|---|---|---|---|"]
    for p in cmp.pairs:
        lines.append(f"| {p.a} | {p.b} | {p.tasks}{' (common)' if p.intersection else ''} | {p.diff:+.3f} | "
                     f"[{p.ci[0]:+.3f}, {p.ci[1]:+.3f}] | {p.b_wins} | {p.a_wins} | {p.ties} |")
    if cmp.notes:
        lines += [""] + [f"- {n}" for n in cmp.notes]
    if plot:
        lines += ["", f"![Pass^k versus k]({plot})"]
    return "\n".join(lines) + "\n"


CSV_FIELDS = ["run", "label", "source", "env_ids", "policy", "model", "scoring", "split", "tasks", "trials", "episodes",
              "avg_k", "avg_k_lo", "avg_k_hi", "pass_1", "pass_1_lo", "pass_1_hi", "pass_hat_k", "pass_hat_k_lo",
              "pass_hat_k_hi", "errors", "error_rate", "vs", "paired_tasks", "diff", "diff_lo", "diff_hi", "wins",
              "losses", "ties"]


def _summary_dict(s: DomainSummary) -> dict[str, Any]:
    k = s.trials
    out: dict[str, Any] = {"domain": s.domain, "env_ids": s.env_ids, "policies": s.policies, "tasks": s.tasks,
                           "trials": k, "episodes": s.episodes, "errors": s.errors, "error_rate": s.error_rate}
    for name, key in (("avg_k", f"avg@{k}"), ("pass_1", "pass@1"), ("pass_hat_k", f"pass^{k}")):
        v = _value(s, key)
        out[name] = None if v is None else {"value": v[0], "ci": [v[1], v[2]]}
    out["pass_hat_curve"] = [s.metrics[f"pass^{j}"] for j in range(1, k + 1)] if s.tasks else []
    return out


def csv_text(cmp: Comparison) -> str:
    """One row per run and (domain, policy); a row of a run after the first carries its paired
    comparison with the first (``vs``, ``paired_tasks``, ``diff``, its interval, wins, losses, ties)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    pair_of = {p.b: p for p in cmp.pairs}
    for i, r, s in _rows(cmp):
        d = _summary_dict(s)
        row: dict[str, Any] = {"run": run_key(i), "label": r.label, "source": r.source, "env_ids": " ".join(s.env_ids),
                               "policy": "/".join(s.policies), "model": r.meta.get("model") or "",
                               "scoring": r.scoring or "", "split": r.meta.get("split") or "", "tasks": s.tasks,
                               "trials": s.trials, "episodes": s.episodes, "errors": s.errors,
                               "error_rate": f"{s.error_rate:.6g}"}
        for name in ("avg_k", "pass_1", "pass_hat_k"):
            if d[name] is not None:
                row[name] = f"{d[name]['value']:.6g}"
                row[f"{name}_lo"], row[f"{name}_hi"] = (f"{x:.6g}" for x in d[name]["ci"])
        p = pair_of.get(r.label)
        if p is not None:
            row.update({"vs": p.a, "paired_tasks": p.tasks, "diff": f"{p.diff:.6g}", "diff_lo": f"{p.ci[0]:.6g}",
                        "diff_hi": f"{p.ci[1]:.6g}", "wins": p.b_wins, "losses": p.a_wins, "ties": p.ties})
        w.writerow(row)
    return buf.getvalue()


def to_json(cmp: Comparison) -> dict[str, Any]:
    return {
        "ci_level": CI_LEVEL, "bootstrap": cmp.bootstrap, "seed": SEED,
        "runs": [{"run": run_key(i), "label": r.label, "source": r.source, "path": str(r.path), "meta": r.meta,
                  "tasks": len(r.task_ids), "rows": [_summary_dict(s) for s in r.summaries]}
                 for i, r in enumerate(cmp.runs)],
        "comparisons": [{"a": p.a, "b": p.b, "tasks": p.tasks, "only_a": p.only_a, "only_b": p.only_b,
                         "intersection": p.intersection, "diff": p.diff, "ci": list(p.ci), "b_wins": p.b_wins,
                         "a_wins": p.a_wins, "ties": p.ties} for p in cmp.pairs],
        "notes": cmp.notes,
    }


def plot_pass_hat(cmp: Comparison, path: str | Path) -> Path | None:
    """Pass^k against k (k = 1..K) of every run, with its bootstrap band, on one chart with a
    legend; None (and no file) when no run has a task to plot."""
    curves = [(r.label if len(r.summaries) == 1 else f"{r.label} {s.domain}", s) for _, r, s in _rows(cmp) if s.tasks]
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    try:
        for i, (name, s) in enumerate(curves):
            ks = list(range(1, s.trials + 1))
            color = f"C{i % 10}"
            # each run its own marker, the later ones smaller: runs on the same points stay visible
            ax.plot(ks, s.pass_hat(), marker=MARKERS[i % len(MARKERS)], markersize=max(3.0, 9.0 - 1.2 * i),
                    color=color, label=name)
            pass_hat_band(ax, s, color)
        return finish_k_plot(fig, ax, max(s.trials for _, s in curves), "pass^k",
                             "Pass^k versus k (bands: 95% bootstrap over tasks)", path)
    finally:
        plt.close(fig)


def write_compare(cmp: Comparison, out_dir: str | Path, title: str = "servicegym comparison") -> list[Path]:
    """``compare.md``, ``compare.csv``, ``compare.json`` and ``compare.png`` (when a run has a task
    to plot) in ``out_dir``; the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png = plot_pass_hat(cmp, out / "compare.png")
    written = []
    for name, text in (("compare.md", markdown(cmp, title, plot=png.name if png else None)),
                       ("compare.csv", csv_text(cmp)), ("compare.json", json.dumps(to_json(cmp), indent=2) + "\n")):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written + ([png] if png else [])


def print_compare(cmp: Comparison, file: Any = None, width: int | None = None, title: str = "servicegym comparison") -> None:
    """The runs (A, B, ...: label and where they come from), one table row per run and (domain,
    policy), and the paired comparisons, as wide as the terminal (80 columns when the output is not
    one); words are wrapped, never split."""
    import shutil

    from rich import box
    from rich.console import Console
    from rich.table import Table

    width = width or shutil.get_terminal_size((80, 24)).columns
    console = Console(file=file, width=width, highlight=False, markup=False)
    wrap = textwrap.TextWrapper(width=width, break_long_words=False, break_on_hyphens=False, subsequent_indent="    ")
    console.print(title)
    for i, r in enumerate(cmp.runs):
        console.print(wrap.fill(f"{run_key(i)} = {r.label}: {_describe(r)}"), soft_wrap=True)
    # the short columns never wrap; a metric is its value over its interval, which wraps at its space
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True, show_edge=False)
    for name in ("run", "env", "policy", "tasks", "K", "Avg@K", "Pass@1", "Pass^K", "errors"):
        table.add_column(name, no_wrap=name in ("run", "env", "policy", "tasks", "K"))
    for i, _r, s in _rows(cmp):
        k = s.trials
        table.add_row(run_key(i), _short_env(s.env_ids), "/".join(s.policies), str(s.tasks), str(k),
                      *(_cell(s, key).replace(" [", "\n[", 1) for key in (f"avg@{k}", "pass@1", f"pass^{k}")),
                      _errors(s))
    console.print(table)
    keys = {r.label: run_key(i) for i, r in enumerate(cmp.runs)}
    for p in cmp.pairs:
        lo, hi = p.ci
        where = f" (the {p.tasks} in common)" if p.intersection else ""
        text = (f"{keys[p.b]} - {keys[p.a]} per-task success over {p.tasks} tasks{where}: {p.diff:+.3f} "
                f"[{lo:+.3f}, {hi:+.3f}]; {keys[p.b]} wins {p.b_wins}, {keys[p.a]} wins {p.a_wins}, {p.ties} tied")
        console.print(wrap.fill(text), soft_wrap=True)
    for n in cmp.notes:
        console.print(wrap.fill(n), soft_wrap=True)
