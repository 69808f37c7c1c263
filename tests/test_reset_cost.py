"""A reset does no work proportional to the episode before it (issue 29), counted, not timed.

``tests/envs/test_long_run.py`` compares a reset after a golden episode with one right after a
reset. Here the episodes are long and mixed: a reset after 200 steps (reads, failed calls and
messages to the user, so the history, the messages and the transcript all grow) must make exactly
the Python calls of a reset after 5 such steps, on every env. Any walk over the previous history,
messages or records would show as calls that grow with the episode. What remains of a long
episode's cost is CPython freeing its records; ``scripts/bench_envs.py`` times that.
"""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.sources as sources
from tests.envs.test_long_run import ENV_IDS, _calls_made

BIG = 10**9
BAD_CALL = json.dumps({"name": "no_such_tool", "arguments": {}})
MESSAGE = "Could you tell me a bit more about what you need?"


def _first_read(u) -> str:
    """The task's golden route's first read call (a lookup the episode may repeat at will)."""
    for a in u.task.golden_actions:
        if not a.lstrip().startswith("{"):
            continue
        spec = u.toolkit.resolve(json.loads(a)["name"])
        if spec is not None and spec.kind == "read":
            return a
    raise AssertionError(f"{u.task.task_id}: no read call in the golden route")


def _play(env, opts: dict, steps: int) -> None:
    """Reset to the task and take ``steps`` actions: a read, a failed call, every tenth a message."""
    env.reset(options=opts)
    read = _first_read(env.unwrapped)
    for k in range(steps):
        action = MESSAGE if k % 10 == 9 else (read if k % 2 == 0 else BAD_CALL)
        _, _, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated), f"the episode ended at step {k + 1}"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_after_200_steps_makes_the_calls_of_a_reset_after_5(env_id: str) -> None:
    env = gym.make(env_id, max_steps=BIG, max_errors=BIG)
    u = env.unwrapped
    opts = {"task_id": u.source.ids("test")[0]}
    env.reset(seed=0, options=opts)

    def after(steps: int):
        def run(pr) -> None:
            _play(env, opts, steps)
            assert len(u.history) > steps  # every step left its records
            pr.enable()
            env.reset(options=opts)
            pr.disable()
        return run

    short, long = _calls_made(after(5)), _calls_made(after(200))
    grown = {k: (short.get(k, 0), n) for k, n in long.items() if n != short.get(k, 0)}
    assert not grown, f"calls that differ after 200 steps (after 5, after 200): {grown}"
    assert short == long
    env.close()


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Payments-v0"])
def test_reset_to_a_new_generated_task_after_200_steps_makes_the_calls_of_one_after_5(env_id: str) -> None:
    """The same for the reset the generators serve, to a task not generated yet: the seeded reset
    draws the same task after either episode, generated afresh each time (the generated-task cache
    emptied), once before so that every per-process cache it fills is warm for both."""
    env = gym.make(env_id, max_steps=BIG, max_errors=BIG)
    u = env.unwrapped
    opts = {"task_id": u.source.ids("test")[0]}
    env.reset(seed=0, options=opts)

    def after(steps: int, seed: int):
        def run(pr) -> None:
            _play(env, opts, steps)
            sources._GENERATED.clear()
            pr.enable()
            env.reset(seed=seed)
            pr.disable()
        return run

    for seed in (10_001, 10_002, 10_003):
        sources._GENERATED.clear()
        env.reset(seed=seed)
        drawn = u.task.task_id
        short, long = _calls_made(after(5, seed), reps=1), _calls_made(after(200, seed), reps=1)
        assert u.task.task_id == drawn and drawn.split("/")[1] == "train"
        grown = {k: (short.get(k, 0), n) for k, n in long.items() if n != short.get(k, 0)}
        assert not grown, f"{drawn}: calls that differ after 200 steps (after 5, after 200): {grown}"
        assert short == long
    env.close()
