"""pass@k, pass^k and Avg@k as VitaBench reports them."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servicegym.rewards.metrics import pass_at_k, pass_hat_k, summarize


def test_known_values():
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)
    assert pass_at_k(4, 2, 3) == 1.0
    assert pass_at_k(4, 0, 4) == 0.0
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 4, 4) == 1.0 and pass_hat_k(4, 3, 4) == 0.0
    with pytest.raises(ValueError, match="exceeds"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError, match="exceeds"):
        pass_hat_k(2, 1, 3)


@given(n=st.integers(1, 12), data=st.data())
def test_bounds_and_monotonicity(n, data):
    c = data.draw(st.integers(0, n))
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert all(0.0 <= x <= 1.0 for x in ats + hats)
    assert ats == sorted(ats) and hats == sorted(hats, reverse=True)
    assert ats[0] == pytest.approx(c / n) and hats[0] == pytest.approx(c / n)
    assert hats[-1] == (1.0 if c == n else 0.0)


def test_summarize():
    out = summarize({"a": [True, True, False], "b": [False, False, False]})
    assert out["tasks"] == 2.0 and out["trials"] == 3.0
    assert out["avg@3"] == pytest.approx(2 / 6)
    assert out["pass@1"] == pytest.approx((2 / 3 + 0) / 2)
    assert out["pass@3"] == pytest.approx(0.5)
    assert out["pass^2"] == pytest.approx((1 / 3) / 2)
    assert math.isclose(out["pass^3"], 0.0)
    assert summarize({}) == {"tasks": 0.0}
    with pytest.raises(ValueError, match="same number of trials"):
        summarize({"a": [True], "b": [True, False]})
    assert set(summarize({"a": [True, False]}, ks=[2])) == {"tasks", "trials", "avg@2", "pass@2", "pass^2"}


# ----- avg@k, edge cases, bootstrap intervals, grouping, kappa ----------------------------------------
from servicegym.rewards.metrics import (  # noqa: E402
    avg_at_k,
    bootstrap_ci,
    cohen_kappa,
    judge_agreement,
    metric_table,
    per_task,
    report,
)


def test_hand_computed_values():
    # n=5, c=2: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # n=6, c=3, k=3: pass@3 = 1 - 1/20, pass^3 = 1/20
    assert pass_at_k(6, 3, 3) == pytest.approx(0.95) and pass_hat_k(6, 3, 3) == pytest.approx(0.05)
    assert avg_at_k(5, 2, 3) == pytest.approx(0.4)


@pytest.mark.parametrize("n,k", [(1, 1), (4, 1), (4, 2), (4, 4), (7, 3)])
def test_edge_cases_c0_cn_nk(n, k):
    assert pass_at_k(n, 0, k) == 0.0 and pass_hat_k(n, 0, k) == 0.0 and avg_at_k(n, 0, k) == 0.0
    assert pass_at_k(n, n, k) == 1.0 and pass_hat_k(n, n, k) == 1.0 and avg_at_k(n, n, k) == 1.0
    # n = k: pass@n is "any success", pass^n is "all successes"
    for c in range(n + 1):
        assert pass_at_k(n, c, n) == (1.0 if c > 0 else 0.0)
        assert pass_hat_k(n, c, n) == (1.0 if c == n else 0.0)


def test_bad_arguments():
    for fn in (avg_at_k, pass_at_k, pass_hat_k):
        with pytest.raises(ValueError, match="n >= k"):
            fn(3, 1, 4)
        with pytest.raises(ValueError, match="at least 1"):
            fn(3, 1, 0)
        with pytest.raises(ValueError, match="between 0 and n"):
            fn(3, 4, 1)
    with pytest.raises(ValueError, match="task b: k=3 exceeds"):
        per_task({"a": [True] * 3, "b": [True, False]}, [3])


def test_bootstrap_ci_deterministic_and_contains_the_estimate():
    values = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    lo, hi = bootstrap_ci(values, n_boot=2000, seed=7)
    assert lo <= sum(values) / len(values) <= hi and lo < hi
    assert bootstrap_ci(values, n_boot=2000, seed=7) == (lo, hi)
    floats = [0.11, 0.93, 0.47, 0.62, 0.05, 0.78, 0.34, 0.29, 0.86]
    assert bootstrap_ci(floats, n_boot=200, seed=8) != bootstrap_ci(floats, n_boot=200, seed=9)
    wide = bootstrap_ci(values, n_boot=2000, confidence=0.99, seed=7)
    assert wide[0] <= lo and wide[1] >= hi
    assert bootstrap_ci([0.3], n_boot=50) == pytest.approx((0.3, 0.3))
    assert bootstrap_ci([1.0] * 5) == (1.0, 1.0)
    for bad in ({"n_boot": 0}, {"confidence": 1.0}):
        with pytest.raises(ValueError):
            bootstrap_ci(values, **bad)
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])


def test_metric_table_matches_summarize():
    results = {"a": [True, True, False], "b": [False, False, False], "c": [True, True, True], "d": [True, False, False]}
    table = metric_table(results, n_boot=500, seed=1)
    flat = summarize(results)
    for key in ("avg@3", "pass@1", "pass@2", "pass@3", "pass^1", "pass^2", "pass^3"):
        assert table[key]["value"] == pytest.approx(flat[key])
        lo, hi = table[key]["ci"]
        assert lo <= table[key]["value"] <= hi
    assert table["tasks"]["value"] == 4.0 and table["trials"]["value"] == 3.0
    assert metric_table(results, n_boot=500, seed=1) == table


def _records():
    recs = []
    # delivery: task d1 2/2, d2 0/2; payments: p1 1/2 with G always, P once
    for tid, dom, succ, extra in [
        ("d1", "delivery", [True, True], [{"rubric_fraction": 1.0}, {"rubric_fraction": 1.0}]),
        ("d2", "delivery", [False, False], [{"rubric_fraction": 0.5}, {"rubric_fraction": 0.25}]),
        ("p1", "payments", [True, False], [{"goal": 1.0, "process": 1.0}, {"goal": 1.0, "process": 0.0}]),
    ]:
        for s, sc in zip(succ, extra):
            recs.append({"task_id": tid, "domain": dom, "success": s, "score": dict(sc, violations=[], flag=True)})
    return recs


def test_report_by_domain_and_component():
    out = report(_records(), ks=[1, 2], n_boot=300, seed=0)
    assert out["overall"]["avg@2"]["value"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert out["overall"]["pass@2"]["value"] == pytest.approx((1 + 0 + 1) / 3)
    assert out["overall"]["pass^2"]["value"] == pytest.approx((1 + 0 + 0) / 3)
    dom = out["by_domain"]
    assert set(dom) == {"delivery", "payments"}
    assert dom["delivery"]["avg@2"]["value"] == 0.5 and dom["payments"]["pass@2"]["value"] == 1.0
    comps = out["components"]
    assert set(comps) == {"rubric_fraction", "goal", "process"}  # lists and bools are not components
    assert comps["rubric_fraction"]["value"] == pytest.approx((1.0 + 0.375) / 2)
    assert "pass@1" not in comps["rubric_fraction"]  # fractional: a mean only
    assert comps["process"]["pass@2"]["value"] == 1.0 and comps["process"]["pass^2"]["value"] == 0.0
    assert comps["goal"]["pass^2"]["value"] == 1.0
    lo, hi = comps["rubric_fraction"]["ci"]
    assert lo <= comps["rubric_fraction"]["value"] <= hi
    assert report(_records(), ks=[1, 2], n_boot=300, seed=0) == out
    by_prefix = report(_records(), ks=[1], group_by=lambda r: r["task_id"][0], n_boot=10)
    assert set(by_prefix["by_group"]) == {"d", "p"}
    with pytest.raises(ValueError, match="no records"):
        report([])


def test_cohen_kappa():
    # hand-computed: 10 items, a says yes 6, b says yes 5, 4 joint yes, 3 joint no
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 1, 0, 0, 0]
    p_o = 7 / 10
    p_e = 0.6 * 0.5 + 0.4 * 0.5
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(a, a) == 1.0
    assert cohen_kappa([True, False], [False, True]) == pytest.approx(-1.0)
    assert cohen_kappa([True] * 4, [True] * 4) == 1.0  # degenerate: perfect agreement
    assert cohen_kappa([True] * 4, [False] * 4) == 0.0
    with pytest.raises(ValueError):
        cohen_kappa([1], [1, 0])
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_judge_agreement_pools_items_over_episodes():
    recs = [
        {"score": {"rubric/a": 1.0, "judge/a": 1.0, "rubric/b": 0.0, "judge/b": 1.0, "judge/rubric_0": 1.0}},
        {"score": {"rubric/a": 0.0, "judge/a": 0.0, "rubric/b": 0.0, "judge/b": 0.0}},
    ]
    got = judge_agreement(recs)
    code, judged = [1, 0, 0, 0], [1, 1, 0, 0]
    assert got == {"pairs": 4.0, "agreement": 0.75, "kappa": pytest.approx(cohen_kappa(code, judged))}
    assert got["kappa"] == pytest.approx(0.5)  # p_o = 3/4, p_e = 1/4*1/2 + 3/4*1/2 = 1/2
    with pytest.raises(ValueError, match="no rubric item"):
        judge_agreement([{"score": {"judge/rubric_0": 1.0}}])
