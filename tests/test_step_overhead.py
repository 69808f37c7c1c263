"""The fixed work of a step (issue 29) stays what it replaced: a tool's argument check is written
out once per tool (``_compile_plan``) and answers as ``_fast_args`` of its plan for every input; a Payments write reads the ledger's
indexed prefix and the holds without ``prefix_cached``'s and ``held``'s calls; encoding a row reads
its class's verdict without ``_plain_fields``. No timings: equalities and counts of calls."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from typing import Any

import gymnasium as gym
import pytest

import servicegym
from servicegym.world_state.payments.capabilities import CATALOGUE
from servicegym.world_state.tools import MAX_ARGUMENT_CHARS, _compile_plan, _fast_args, _plan, dumps

_SAMPLES: dict[type, Any] = {str: "x", int: 3, float: 2.5, bool: True, dict: {"a": 1}, type(None): None}
_ODD = ["", "y" * (MAX_ARGUMENT_CHARS + 1), 0, -1, 10**6, 0.0, -2.5, math.nan, math.inf, False, None,
        {"k": "v" * (MAX_ARGUMENT_CHARS + 1)}, {1: "a"}, {"n": {"m": [1, 2]}}, [1], "payout"]


def _argument_cases(plan: tuple[tuple[str, tuple[type, ...], Any, Any], ...]) -> list[dict[str, Any]]:
    """Valid calls, each field missing, an unknown argument, and every odd value in every field."""
    base = {name: _SAMPLES[kinds[0]] for name, kinds, _, _ in plan}
    cases = [dict(base), {}, {**base, "unknown": 1}]
    for name, kinds, _, _ in plan:
        cases.append({k: v for k, v in base.items() if k != name})
        for kind in kinds:
            cases.append({**base, name: _SAMPLES[kind]})
        for odd in _ODD:
            cases.append({**base, name: odd})
    return cases


def _specs() -> list[Any]:
    out = []
    for env_id in sorted(servicegym.ENV_IDS):
        env = gym.make(env_id)
        out.extend(env.unwrapped.toolkit.specs.values())
        env.close()
    return out


def test_the_compiled_argument_check_answers_as_fast_args_for_every_tool_and_capability():
    checked = 0
    plans = [(s.name, s.plan, s.argument_check()) for s in _specs()]
    plans += [(c.name, c.plan, _compile_plan(c.plan)) for c in CATALOGUE.values()]
    for name, plan, fast in plans:
        assert (fast is None) == (plan is None), name
        if plan is None:
            continue
        for args in _argument_cases(plan):
            want = _fast_args(plan, args)
            got = fast(args)
            if want is None:
                assert got is None, (name, args)
            else:
                assert got is not None and list(got.items()) == list(want.items()), (name, args)
                for k, v in got.items():  # a dict argument is the call's copy, as _fast_args makes
                    if type(v) is dict:
                        assert v is not args[k]
            checked += 1
    assert checked > 1000


def test_the_compiled_check_of_bounds_and_literals():
    from typing import Annotated, Literal

    from pydantic import ConfigDict, Field, create_model

    model = create_model("m", __config__=ConfigDict(extra="forbid"),
                         n=(Annotated[int, Field(ge=1, le=5)], 2), kind=(Literal["a", "b"], ...),
                         note=(Annotated[str, Field(max_length=3)] | None, None))
    plan = _plan(model)
    fast = _compile_plan(plan)
    for args in ({"kind": "a"}, {"kind": "c"}, {"kind": "a", "n": 0}, {"kind": "b", "n": 5, "note": "abc"},
                 {"kind": "b", "note": "abcd"}, {"kind": "b", "note": None}, {"n": 3}, {"kind": "a", "x": 1}):
        assert fast(args) == _fast_args(plan, args), args


class _Calls:
    """Python-level calls made while it is active, by function name (``sys.setprofile``)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __enter__(self) -> _Calls:
        def prof(frame: Any, event: str, arg: Any) -> None:
            if event == "call":
                self.counts[frame.f_code.co_name] += 1

        sys.setprofile(prof)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(None)


def _capability_step(name: str) -> tuple[Any, int, str]:
    env = gym.make("servicegym/Payments-v0", max_steps=10**9, max_errors=10**9)
    u = env.unwrapped
    for tid in u.task_ids("test"):
        for i, action in enumerate(u.source.get(tid).golden_actions):
            call = json.loads(action) if action.startswith("{") else {}
            if call.get("name") == "call_capability" and call["arguments"].get("name") == name:
                return env, i, tid
    raise AssertionError(f"no golden route calls {name}")


@pytest.mark.parametrize("capability", ["payouts.create", "refunds.create"])
def test_a_payments_write_step_makes_no_call_it_can_do_without(capability):
    env, index, tid = _capability_step(capability)
    u = env.unwrapped
    counts = []
    for _ in range(2):  # the first time builds the per-task indexes; the second is a write's usual work
        env.reset(seed=0, options={"task_id": tid})
        for a in u.task.golden_actions[:index]:
            env.step(a)
        action = u.task.golden_actions[index]
        with _Calls() as calls:
            obs, _, _, _, info = env.step(action)
        assert not info["tool_errors"], obs[:300]
        counts.append(calls.counts)
    c = counts[1]
    for fn in ("_fast_args", "prefix_cached", "held", "available", "_plain_fields",
               "_amounts_by_account", "build", "validate_arguments", "model_validate"):
        assert c[fn] == 0, (fn, c[fn])
    assert c["fast"] == 2  # the tool's and the capability's compiled argument checks, once each
    assert c["_available"] == 1 and c["insert"] == 2 and c["add_call"] == 1
    assert sum(c.values()) <= 60, c  # the whole step (51 for payouts.create, 57 for refunds.create now)


def test_available_after_a_replaced_ledger_row_falls_back_to_the_scan():
    from servicegym.world_state.payments.capabilities import _available

    env, index, tid = _capability_step("payouts.create")
    env.reset(seed=0, options={"task_id": tid})
    w = env.unwrapped.world
    ledger = w.table("ledger")
    first = next(iter(ledger))
    accounts = {e.account_id for e in ledger}
    assert all(_available(w, a) == w.available(a) for a in accounts)
    ledger.put(first.model_copy(update={"amount": first.amount + 1.0}))  # a replaced row: no prefix index
    assert ledger.base is False
    with _Calls() as calls:
        got = _available(w, first.account_id)
    assert got == w.available(first.account_id) and calls.counts["available"] == 1


def test_encoding_a_row_reads_its_class_verdict_once():
    env, index, tid = _capability_step("payouts.create")
    env.reset(seed=0, options={"task_id": tid})
    row = next(iter(env.unwrapped.world.table("ledger")))
    first = dumps({"row": row})
    with _Calls() as calls:
        again = dumps({"row": row, "rows": [row, row]})
    assert calls.counts["_plain_fields"] == 0 and calls.counts["json_fields"] == 3
    assert json.loads(again)["row"] == json.loads(first)["row"] == row.model_dump(mode="json")


def test_tools_compile_their_argument_check_at_the_first_call_not_when_declared(monkeypatch):
    """A workspace declares its skills' tools again for each task and a Payments world has ~600 capabilities:
    compiling every check up front cost ~190 us a tool at env construction. Only a called tool compiles, once."""
    import gymnasium as gym

    import servicegym.world_state.tool_args as tool_args_mod  # where ``_compiled_plan`` looks ``_compile_plan`` up

    compiled = []
    real = tool_args_mod._compile_plan
    monkeypatch.setattr(tool_args_mod, "_compile_plan", lambda plan: compiled.append(plan) or real(plan))
    env = gym.make("servicegym/Workspace-v0")
    for seed in range(3):  # each a new generated task, its skills' tools declared again
        env.reset(seed=seed)
    assert compiled == []
    u = env.unwrapped
    action = u.task.golden_actions[0]
    env.step(action)
    env.step(action)
    assert len(compiled) <= 1
