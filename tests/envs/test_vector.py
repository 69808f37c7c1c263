"""Vectorized envs (sync and async) step exactly like single envs with the same seeds and actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import servicegym  # noqa: F401  registers the ids
from tests.conftest import call

ENV_ID = "servicegym/Delivery-v0"
N = 3
SEED = 21


def plans() -> list[list[str]]:
    """Per sub-env: its task's golden route, then a few more actions past the autoreset."""
    out = []
    for i in range(N):
        env = gym.make(ENV_ID)
        env.reset(seed=SEED + i)
        out.append(list(env.unwrapped.task.golden_actions) + ["(ignored: autoreset step)", "Hello!",
                                                              call("get_user_all_orders")])
    return out


def single_runs(plan: list[list[str]], steps: int) -> list[list[tuple]]:
    """What each sub-env must produce under NEXT_STEP autoreset, from plain single envs."""
    runs = []
    for i in range(N):
        env = gym.make(ENV_ID)
        obs, _ = env.reset(seed=SEED + i)
        rows, done = [(obs, 0.0, False, False)], False
        for t in range(steps):
            if done:
                obs, _ = env.reset()
                rows.append((obs, 0.0, False, False))
                done = False
                continue
            action = plan[i][t] if t < len(plan[i]) else "Anything else?"
            obs, reward, terminated, truncated, _ = env.step(action)
            rows.append((obs, reward, terminated, truncated))
            done = terminated or truncated
        runs.append(rows)
    return runs


@pytest.mark.parametrize(
    ("mode", "kwargs"),
    [("sync", {}), ("async", {"vector_kwargs": {"shared_memory": False}})],
)
def test_vector_matches_single_envs(mode, kwargs):
    plan = plans()
    steps = max(len(p) for p in plan) + 1
    expected = single_runs(plan, steps)
    venv = gym.make_vec(ENV_ID, N, vectorization_mode=mode, **kwargs)
    try:
        obs, info = venv.reset(seed=SEED)
        assert list(obs) == [expected[i][0][0] for i in range(N)]
        assert len(set(info["task_id"])) == N
        total = np.zeros(N)
        for t in range(steps):
            actions = tuple(plan[i][t] if t < len(plan[i]) else "Anything else?" for i in range(N))
            obs, reward, terminated, truncated, info = venv.step(actions)
            for i in range(N):
                assert (obs[i], float(reward[i]), bool(terminated[i]), bool(truncated[i])) == expected[i][t + 1], (
                    mode, t, i)
            total += reward
        assert list(total) == [1.0] * N, "every golden route succeeds once"
    finally:
        venv.close()
