"""Success metrics over k trials per task, as VitaBench reports them.

With c successes out of n trials of a task, the unbiased estimators are
pass@k = 1 - C(n-c, k) / C(n, k) and pass^k = C(c, k) / C(n, k); Avg@k is the mean success.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} trials")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} trials")
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
