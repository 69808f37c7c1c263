"""Success metrics over k trials per task, as VitaBench reports them, with bootstrap intervals.

With c successes out of n >= k trials of a task, the unbiased estimators are
Avg@k = c / n (the mean success of a run), pass@k = 1 - C(n-c, k) / C(n, k) (at least one of k
runs succeeds) and pass^k = C(c, k) / C(n, k) (all k succeed); a suite's value is the mean of
its tasks' values. ``n < k`` is a ``ValueError``.

Confidence intervals (``bootstrap_ci``) resample *tasks* with replacement (trials stay with
their task), ``n_boot`` times with a seeded ``numpy`` generator, and take the percentile
interval of the resampled means; the same seed gives the same interval.

``report`` groups rollout records (``{"task_id", "success", "score", ...}``, e.g. the lines of
``rollouts.jsonl``) overall, by domain (or any record key) and by score component.
``cohen_kappa`` measures agreement of two raters; ``judge_agreement`` pools the LLM judge's
item verdicts against the code checks over many episodes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from math import comb
from typing import Any

import numpy as np


def _check(n: int, c: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} trials (need n >= k)")
    if not 0 <= c <= n:
        raise ValueError(f"c={c} successes is not between 0 and n={n}")


def avg_at_k(n: int, c: int, k: int) -> float:
    """Avg@k: the expected mean success of k runs, c / n (``n >= k`` trials)."""
    _check(n, c, k)
    return c / n


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k = 1 - C(n-c, k) / C(n, k): the chance that some of k runs drawn from n succeeds."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k = C(c, k) / C(n, k): the chance that all of k runs drawn from n succeed."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def summarize(results: Mapping[str, Sequence[bool]], ks: Iterable[int] | None = None) -> dict[str, float]:
    """``results`` maps task id -> successes of its trials (all tasks the same number of trials)."""
    if not results:
        return {"tasks": 0.0}
    trials = {len(v) for v in results.values()}
    if len(trials) != 1:
        raise ValueError(f"every task needs the same number of trials, got {sorted(trials)}")
    n = trials.pop()
    ks = list(ks) if ks is not None else list(range(1, n + 1))
    out = {"tasks": float(len(results)), "trials": float(n)}
    out[f"avg@{n}"] = sum(sum(v) for v in results.values()) / (n * len(results))
    for k in ks:
        out[f"pass@{k}"] = sum(pass_at_k(n, sum(v), k) for v in results.values()) / len(results)
        out[f"pass^{k}"] = sum(pass_hat_k(n, sum(v), k) for v in results.values()) / len(results)
    return out


# ----- per task values and bootstrap intervals ----------------------------------------------------
def per_task(results: Mapping[str, Sequence[bool]], ks: Iterable[int]) -> dict[str, dict[str, float]]:
    """Each task's ``avg@n``-style mean (key ``avg``), ``pass@k`` and ``pass^k`` for every k
    (tasks may have different numbers of trials, each at least max(ks))."""
    ks = list(ks)
    out: dict[str, dict[str, float]] = {}
    for tid, trials in results.items():
        n, c = len(trials), int(sum(bool(x) for x in trials))
        row = {"avg": c / n if n else 0.0}
        for k in ks:
            try:
                row[f"pass@{k}"] = pass_at_k(n, c, k)
                row[f"pass^{k}"] = pass_hat_k(n, c, k)
            except ValueError as err:
                raise ValueError(f"task {tid}: {err}") from None
        out[tid] = row
    return out


def bootstrap_ci(values: Sequence[float], n_boot: int = 1000, confidence: float = 0.95,
                 seed: int | None = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one value per task)."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("no values to bootstrap")
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n_boot, arr.size))].mean(axis=1)
    lo, hi = np.percentile(means, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def metric_table(results: Mapping[str, Sequence[bool]], ks: Iterable[int] | None = None, n_boot: int = 1000,
                 confidence: float = 0.95, seed: int | None = 0) -> dict[str, dict[str, Any]]:
    """``{"avg@n" | "pass@k" | "pass^k": {"value", "ci": (lo, hi)}}`` plus ``tasks`` and
    ``trials`` (the fewest trials of a task); ``ks`` defaults to 1..that number."""
    if not results:
        raise ValueError("no tasks")
    n = min(len(v) for v in results.values())
    ks = list(ks) if ks is not None else list(range(1, n + 1))
    rows = per_task(results, ks)
    out: dict[str, dict[str, Any]] = {"tasks": {"value": float(len(rows))}, "trials": {"value": float(n)}}
    names = [f"avg@{n}"] + [f"{m}{k}" for k in ks for m in ("pass@", "pass^")]
    for name in names:
        col = [r["avg" if name.startswith("avg@") else name] for r in rows.values()]
        out[name] = {"value": float(np.mean(col)), "ci": bootstrap_ci(col, n_boot, confidence, seed)}
    return out


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def report(records: Iterable[Mapping[str, Any]], ks: Iterable[int] | None = None, group_by: str | Callable[[Mapping[str, Any]], str] = "domain",
           n_boot: int = 1000, confidence: float = 0.95, seed: int | None = 0) -> dict[str, Any]:
    """Metrics of rollout records: ``overall`` and ``by_<group>`` metric tables of strict
    success, and ``components``: for every numeric score key, the mean over tasks of its per-task
    mean with a bootstrap interval, plus pass@k / pass^k when the component is 0/1 throughout.

    ``group_by`` is a record key (records without it go to ``"unknown"``) or a function of the record.
    """
    records = list(records)
    if not records:
        raise ValueError("no records")
    ks = list(ks) if ks is not None else None
    key_of = group_by if callable(group_by) else (lambda r: str(r.get(group_by) or "unknown"))
    label = group_by if isinstance(group_by, str) else "group"
    success: dict[str, list[bool]] = defaultdict(list)
    groups: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    comps: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        tid = str(r["task_id"])
        success[tid].append(bool(r["success"]))
        groups[key_of(r)][tid].append(bool(r["success"]))
        for k, v in (r.get("score") or {}).items():
            if _numeric(v):
                comps[k][tid].append(float(v))
    out: dict[str, Any] = {
        "overall": metric_table(success, ks, n_boot, confidence, seed),
        f"by_{label}": {g: metric_table(res, ks, n_boot, confidence, seed) for g, res in sorted(groups.items())},
    }
    components: dict[str, dict[str, Any]] = {}
    for name, by_task in sorted(comps.items()):
        means = [float(np.mean(v)) for v in by_task.values()]
        entry: dict[str, Any] = {"value": float(np.mean(means)), "ci": bootstrap_ci(means, n_boot, confidence, seed),
                                 "tasks": float(len(means))}
        if all(x in (0.0, 1.0) for v in by_task.values() for x in v):
            table = metric_table({t: [x == 1.0 for x in v] for t, v in by_task.items()}, ks, n_boot, confidence, seed)
            entry.update({k: v for k, v in table.items() if k.startswith("pass")})
        components[name] = entry
    out["components"] = components
    return out


# ----- agreement ------------------------------------------------------------------------------------
def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's kappa of two raters' labels of the same items: (p_o - p_e) / (1 - p_e).

    When chance agreement is already perfect (both raters give one and the same label to every
    item, so p_o = p_e = 1) the agreement is perfect and 1.0 is returned (scikit-learn returns
    nan there). Pool items over many episodes before computing it: per-episode kappas of a few
    items are mostly this degenerate case.
    """
    if len(a) != len(b):
        raise ValueError(f"the raters labelled {len(a)} and {len(b)} items")
    if not a:
        raise ValueError("no items to compare")
    m = len(a)
    p_o = sum(x == y for x, y in zip(a, b)) / m
    labels = set(a) | set(b)
    p_e = sum((sum(x == lab for x in a) / m) * (sum(y == lab for y in b) / m) for lab in labels)
    if p_e >= 1.0:
        return 1.0
    return (p_o - p_e) / (1.0 - p_e)


def judge_agreement(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The LLM judge against the code checks, pooled over episodes: every rubric item scored both
    ways (``judge/<name>`` and ``rubric/<name>`` in a record's score) is one pair. Returns the
    number of pairs, the observed agreement and Cohen's kappa (natural-language VitaBench items
    have no code twin and are not counted)."""
    code: list[bool] = []
    judged: list[bool] = []
    for r in records:
        score = r.get("score") or {}
        for k, v in score.items():
            if k.startswith("judge/") and _numeric(v) and _numeric(score.get("rubric/" + k[6:])):
                judged.append(bool(v))
                code.append(bool(score["rubric/" + k[6:]]))
    if not code:
        raise ValueError("no rubric item was scored by both the judge and the code")
    return {"pairs": float(len(code)), "agreement": sum(a == b for a, b in zip(code, judged)) / len(code),
            "kappa": cohen_kappa(code, judged)}
