"""``scripts/fuzz.py`` (issue 30): CI runs a short fuzz of every env (the nightly run is the same
script at 1,000,000 actions per env) and it must end with 0 exceptions; each env's line names its
slowest step (duration, kind, the action itself), and an env that raises is counted, not hidden."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import servicegym

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def fuzz_module():
    sys.path.insert(0, str(SCRIPTS))
    try:
        import fuzz
    finally:
        sys.path.remove(str(SCRIPTS))
    return fuzz


def test_a_short_fuzz_of_every_env_raises_nothing_and_names_the_slowest_step(fuzz_module, tmp_path):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = fuzz_module.main(["all", "250", "--seed", "11", "--json", str(tmp_path / "fuzz.json")])
    text = out.getvalue()
    assert code == 0, text
    assert "total: 1500 actions, 0 exceptions" in text
    import json

    results = {r["env"]: r for r in json.loads((tmp_path / "fuzz.json").read_text(encoding="utf-8"))}
    assert set(results) == set(servicegym.ENV_IDS)
    for env_id, r in results.items():
        assert r["actions"] == 250 and r["exceptions"] == 0 and r["first"] == []
        assert r["worst_ms"] > 0 and r["worst_kind"] in fuzz_module.KINDS and len(r["worst_action"]) <= 160
        line = next(line for line in text.splitlines() if line.startswith(env_id))
        assert f"({r['worst_kind']}): {r['worst_action']!r}" in line


class _Breaks(gym.Wrapper):
    """Raises on every action that mentions ``###STOP###``: what a crash path in ``step`` looks like."""

    def step(self, action):
        if "###STOP###" in action:
            raise RuntimeError("a crash path")
        return self.env.step(action)


def test_an_env_that_raises_is_counted_and_fails_the_run(fuzz_module, monkeypatch):
    made = fuzz_module.gym.make
    monkeypatch.setattr(fuzz_module.gym, "make", lambda *a, **kw: _Breaks(made(*a, **kw)))
    result = fuzz_module.fuzz("servicegym/Delivery-v0", 400, seed=2)
    assert result["actions"] == 400 and result["exceptions"] > 0
    assert len(result["first"]) == min(3, result["exceptions"])
    assert "RuntimeError: a crash path" in result["first"][0] and "###STOP###" in result["first"][0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert fuzz_module.main(["servicegym/Delivery-v0", "400", "--seed", "2"]) == 1
    assert f"total: 400 actions, {result['exceptions']} exceptions" in out.getvalue()
