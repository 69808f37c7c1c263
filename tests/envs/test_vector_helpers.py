"""``envs.vector``: make_vec's modes agree step for step, ThreadVectorEnv's partial and asyncio
stepping, and the three autoreset modes behave as the module docstring says."""

from __future__ import annotations

import asyncio

import gymnasium as gym
import numpy as np
import pytest

import servicegym  # noqa: E402  registers the ids
from servicegym.envs.running.vector import AutoresetMode, ThreadVectorEnv, make_vec

SEED = 31
EXTRA = ["Anything else I can do?", "Thanks, goodbye."]


def plain(x):
    """Infos, observations and arrays as plain Python values, so results compare with ``==``."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in sorted(x.items())}
    if isinstance(x, np.ndarray):
        return [plain(v) for v in x.tolist()]
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def golden_plans(env_id: str, n: int, seed: int = SEED) -> list[list[str]]:
    out = []
    for i in range(n):
        env = gym.make(env_id)
        env.reset(seed=seed + i)
        out.append(list(env.unwrapped.task.golden_actions) + EXTRA)
    return out


def drive(venv, plans: list[list[str]], steps: int, seed: int = SEED, disabled: bool = False) -> list:
    """Every result of a reset and ``steps`` steps, as plain values. With ``disabled``, finished
    envs are reset by mask before the next step (the DISABLED protocol)."""
    obs, info = venv.reset(seed=seed)
    rows = [plain((obs, info))]
    for t in range(steps):
        actions = tuple(p[t % len(p)] for p in plans)
        obs, rew, term, trunc, info = venv.step(actions)
        rows.append(plain((obs, rew, term, trunc, info)))
        if disabled and np.any(term | trunc):
            obs, info = venv.reset(options={"reset_mask": np.asarray(term | trunc)})
            rows.append(plain(("reset", obs, info)))
    return rows


def single_run(env_id: str, seed: int, plan: list[str], steps: int, mode: AutoresetMode) -> list[tuple]:
    """(obs, reward, terminated, truncated) per vector step of one sub-env, from a plain env."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    rows, done = [], False
    for t in range(steps):
        if done and mode == AutoresetMode.NEXT_STEP:
            obs, _ = env.reset()
            rows.append((obs, 0.0, False, False))
            done = False
            continue
        obs, reward, terminated, truncated, _ = env.step(plan[t % len(plan)])
        done = terminated or truncated
        if done and mode != AutoresetMode.NEXT_STEP:
            obs, _ = env.reset()  # SAME_STEP resets at once; DISABLED: the caller's masked reset
            done = False
        rows.append((obs, reward, terminated, truncated))
    return rows


@pytest.mark.parametrize("env_id", sorted(servicegym.ENV_IDS))
def test_sync_and_thread_give_identical_results(env_id):
    plans = golden_plans(env_id, 2)
    steps = max(len(p) for p in plans) + 2
    runs = {}
    for mode in ("sync", "thread"):
        venv = make_vec(env_id, 2, mode=mode)
        try:
            runs[mode] = drive(venv, plans, steps)
        finally:
            venv.close()
    assert runs["sync"] == runs["thread"]
    # episodes end once each (a workspace episode pays a reward at every session end, so count
    # final-step successes rather than summing rewards)
    ends = [(s, m) for r in runs["sync"][1:] for s, m in zip(r[4].get("success", []), r[4].get("_success", []))]
    assert sum(bool(s) and bool(m) for s, m in ends) == 2, "both golden routes succeed once"


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/Payments-v0"])
@pytest.mark.parametrize("autoreset", list(AutoresetMode))
def test_sync_async_and_thread_agree_under_every_autoreset_mode(env_id, autoreset):
    plans = golden_plans(env_id, 2)
    steps = max(len(p) for p in plans) + 2
    disabled = autoreset == AutoresetMode.DISABLED
    runs = {}
    for mode in ("sync", "async", "thread"):
        venv = make_vec(env_id, 2, mode=mode, autoreset_mode=autoreset)
        try:
            assert venv.metadata["autoreset_mode"] == autoreset
            runs[mode] = drive(venv, plans, steps, disabled=disabled)
        finally:
            venv.close()
    assert runs["sync"] == runs["async"] == runs["thread"]
    # and every mode matches plain single envs driven by the documented rule
    stepped = [r for r in runs["sync"][1:] if r[0] != "reset"]
    for i in range(2):
        expected = single_run(env_id, SEED + i, plans[i], steps, autoreset)
        got = [(r[0][i], r[1][i], r[2][i], r[3][i]) for r in stepped]
        if disabled:  # the observation after a masked reset is in the reset row, not the step row
            got = _apply_masked_resets(runs["sync"][1:], i)
        assert got == expected, (autoreset, i)


def _apply_masked_resets(rows, i):
    out = []
    for r in rows:
        if r[0] == "reset":
            if r[2]["_task_id"][i]:
                out[-1] = (r[1][i], *out[-1][1:])
            continue
        out.append((r[0][i], r[1][i], r[2][i], r[3][i]))
    return out


@pytest.mark.parametrize("mode", ["sync", "thread"])
def test_next_step_autoreset_returns_the_reset_obs_on_the_step_after_done(mode):
    env_id = "servicegym/Delivery-v0"
    (plan,) = golden_plans(env_id, 1)
    golden = plan[: -len(EXTRA)]
    venv = make_vec(env_id, 1, mode=mode, autoreset_mode="NextStep")
    ref = gym.make(env_id)
    ref.reset(seed=SEED)
    try:
        venv.reset(seed=SEED)
        for a in golden:
            obs, rew, term, trunc, info = venv.step([a])
            ref.step(a)
        assert term[0] and rew[0] == 1.0 and info["success"][0]
        reset_obs, reset_info = ref.reset()
        obs, rew, term, trunc, info = venv.step(["this action is ignored"])
        assert obs[0] == reset_obs and rew[0] == 0.0 and not term[0] and not trunc[0]
        assert info["task_id"][0] == reset_info["task_id"] and "success" not in info
        assert [m["role"] for m in venv.envs[0].unwrapped.messages] == ["system", "user"], "a fresh episode"
    finally:
        venv.close()


@pytest.mark.parametrize("mode", ["sync", "thread"])
def test_same_step_autoreset_puts_the_final_obs_and_info_in_info(mode):
    env_id = "servicegym/Delivery-v0"
    (plan,) = golden_plans(env_id, 1)
    golden = plan[: -len(EXTRA)]
    venv = make_vec(env_id, 1, mode=mode, autoreset_mode=AutoresetMode.SAME_STEP)
    ref = gym.make(env_id)
    ref.reset(seed=SEED)
    try:
        venv.reset(seed=SEED)
        for a in golden:
            obs, rew, term, trunc, info = venv.step([a])
            final = ref.step(a)
        assert term[0] and rew[0] == 1.0
        assert info["_final_obs"][0] and info["final_obs"][0] == final[0]
        assert info["final_info"]["success"][0] and info["final_info"]["termination_reason"][0] == "user_stop"
        reset_obs, reset_info = ref.reset()
        assert obs[0] == reset_obs and info["task_id"][0] == reset_info["task_id"]
    finally:
        venv.close()


@pytest.mark.parametrize("mode", ["sync", "thread"])
def test_disabled_autoreset_needs_a_masked_reset(mode):
    env_id = "servicegym/Delivery-v0"
    (plan,) = golden_plans(env_id, 1)
    venv = make_vec(env_id, 1, mode=mode, autoreset_mode=AutoresetMode.DISABLED)
    try:
        venv.reset(seed=SEED)
        for a in plan[: -len(EXTRA)]:
            venv.step([a])
        with pytest.raises((AssertionError, RuntimeError)):
            venv.step(["Hello?"])
        obs, info = venv.reset(options={"reset_mask": np.array([True])})
        assert info["_task_id"][0]
        obs2, rew, term, trunc, _ = venv.step(["Hello?"])
        assert not term[0] and obs2[0].startswith("<user>")
    finally:
        venv.close()


def _thread_env(n: int = 3, env_id: str = "servicegym/Delivery-v0") -> ThreadVectorEnv:
    return ThreadVectorEnv([lambda: gym.make(env_id)] * n)


def test_step_some_steps_only_the_chosen_envs():
    env_id = "servicegym/Delivery-v0"
    plans = golden_plans(env_id, 3)
    singles = [gym.make(env_id) for _ in range(3)]
    for i, s in enumerate(singles):
        s.reset(seed=SEED + i)
    venv = _thread_env(3, env_id)
    try:
        venv.reset(seed=SEED)
        before = len(venv.envs[1].unwrapped.messages)
        obs, rew, term, trunc, info = venv.step_some([2, 0], [plans[2][0], plans[0][0]])
        # the batch holds the chosen envs only, in the order asked
        assert isinstance(obs, tuple) and len(obs) == 2
        assert rew.shape == term.shape == trunc.shape == (2,)
        assert list(info["step"]) == [1, 1] and info["_step"].shape == (2,)
        assert obs[0] == singles[2].step(plans[2][0])[0]
        assert obs[1] == singles[0].step(plans[0][0])[0]
        assert len(venv.envs[1].unwrapped.messages) == before, "env 1 was not stepped"
        # a full step now: env 1 takes its first step, the others their second
        obs, *_ , info = venv.step([plans[0][1], plans[1][0], plans[2][1]])
        assert list(info["step"]) == [2, 1, 2]
        assert obs[1] == singles[1].step(plans[1][0])[0]
        assert obs[0] == singles[0].step(plans[0][1])[0]
    finally:
        venv.close()


def test_step_some_rejects_bad_indices():
    venv = _thread_env(2)
    try:
        venv.reset(seed=0)
        with pytest.raises(IndexError):
            venv.step_some([2], ["hi"])
        with pytest.raises(ValueError):
            venv.step_some([0, 0], ["hi", "hi"])
        with pytest.raises(ValueError):
            venv.step_some([0, 1], ["hi"])
    finally:
        venv.close()


def test_async_api_matches_the_sync_api():
    env_id = "servicegym/Payments-v0"
    plans = golden_plans(env_id, 2)
    steps = max(len(p) for p in plans) + 2
    sync = make_vec(env_id, 2, mode="sync")
    try:
        expected = drive(sync, plans, steps)
    finally:
        sync.close()
    venv = _thread_env(2, env_id)

    async def main():
        obs, info = await venv.areset(seed=SEED)
        rows = [plain((obs, info))]
        for t in range(steps):
            out = await venv.astep(tuple(p[t % len(p)] for p in plans))
            rows.append(plain(out))
        return rows

    try:
        assert asyncio.run(main()) == expected
    finally:
        venv.close()


def test_astep_some_runs_disjoint_envs_concurrently_and_refuses_overlaps():
    env_id = "servicegym/Delivery-v0"
    plans = golden_plans(env_id, 2)
    singles = [gym.make(env_id) for _ in range(2)]
    firsts = [s.reset(seed=SEED + i)[0] for i, s in enumerate(singles)]
    venv = _thread_env(2, env_id)

    async def main():
        obs, _ = await venv.areset(seed=SEED)
        assert list(obs) == firsts
        a, b = await asyncio.gather(venv.astep_some([0], [plans[0][0]]), venv.astep_some([1], [plans[1][0]]))
        assert a[0][0] == singles[0].step(plans[0][0])[0]
        assert b[0][0] == singles[1].step(plans[1][0])[0]
        venv._claim([1])  # as if another coroutine were stepping env 1
        try:
            with pytest.raises(RuntimeError, match="being stepped"):
                await venv.astep_some([1, 0], ["hi", "hi"])
        finally:
            venv._release([1])

    try:
        asyncio.run(main())
    finally:
        venv.close()


def test_make_vec_defaults_and_errors():
    venv = make_vec("Delivery-v0", 2)  # short ids resolve; async without shared memory by default
    try:
        assert isinstance(venv, gym.vector.AsyncVectorEnv) and venv.shared_memory is False
        obs, _ = venv.reset(seed=1)
        assert all(isinstance(o, str) and o for o in obs)
    finally:
        venv.close()
    thread = make_vec("servicegym/Payments-v0", 2, mode="thread", max_steps=7)
    try:
        assert isinstance(thread, ThreadVectorEnv) and thread.get_attr("max_steps") == (7, 7)
    finally:
        thread.close()
    assert thread._pool._shutdown
    with pytest.raises(ValueError, match="mode"):
        make_vec("Delivery-v0", 2, mode="ray")
    with pytest.raises(ValueError, match="unknown env"):
        make_vec("Nope-v0", 2, mode="sync")
