"""pass@k, pass^k and Avg@k as VitaBench reports them."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewards.metrics import pass_at_k, pass_hat_k, summarize


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
