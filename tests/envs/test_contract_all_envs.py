"""The contract of DESIGN.md, checked once for every registered env (not a copy per domain).

Whatever the domain: the frozen suite's golden routes succeed; random agents rarely do; the
parser and ``step`` never raise; a failed tool call leaves the world exactly as it was; the same
seed and actions give byte-identical transcripts; ``check_env`` passes; sync and async vector
envs match single envs.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import servicegym  # noqa: E402  registers the ids
from servicegym.envs.environments.parsing import MAX_ACTION_CHARS
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy, run_episode
from servicegym.envs.tasks import save_task_file
from servicegym.envs.tasks.generators.common import verify_task
from servicegym.envs.tasks.suites import SUITE_DIR as DATA_DIR
from servicegym.envs.tasks.suites import SUITE_SIZE, SUITE_SIZES, SUITES

ENV_IDS = sorted(servicegym.ENV_IDS)
_ENVS: dict[str, gym.Env] = {}


def shared(env_id: str) -> gym.Env:
    """One env per id for the property tests (building one per example would dominate their time)."""
    if env_id not in _ENVS:
        _ENVS[env_id] = gym.make(env_id, max_steps=40, max_errors=40)
    return _ENVS[env_id]


def suite_sample(env_id: str, k: int) -> list[str]:
    ids = gym.make(env_id).unwrapped.task_ids("test")
    return ids[:: max(1, len(ids) // k)][:k]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_frozen_suite_has_its_size_and_every_golden_route_succeeds(env_id):
    env = gym.make(env_id)
    ids = env.unwrapped.task_ids("test")
    assert len(ids) == SUITE_SIZES.get(env.unwrapped.domain, SUITE_SIZE)
    failed = []
    for tid in ids:
        rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})
        if not rec["success"]:
            failed.append((tid, rec["termination_reason"], {k: v for k, v in rec["score"].items() if v == 0}))
    assert not failed, failed[:5]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_violation_trajectories_fail_exactly_their_item(env_id):
    env = gym.make(env_id)
    for tid in suite_sample(env_id, 12):
        task = env.unwrapped.source.get(tid)
        assert task.violations, f"{tid} has no violation trajectories"
        assert verify_task(env, task) == [], tid


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_policy_rarely_succeeds(env_id):
    env = gym.make(env_id)
    ids = suite_sample(env_id, 40)
    wins = sum(run_episode(env, RandomPolicy(seed=i), seed=i, options={"task_id": t})["success"] for i, t in enumerate(ids))
    assert wins / len(ids) <= 0.05


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.filterwarnings("ignore:.*alternative render modes")
def test_check_env(env_id):
    check_env(gym.make(env_id, render_mode="ansi").unwrapped, skip_render_check=False)


def _tool_actions(env: gym.Env, rng: random.Random, n: int) -> list[str]:
    """Well-formed and malformed calls of this env's own tools, with ids from its world."""
    u = env.unwrapped
    pool = [u.world.extra.get("user_id", "")] + [k for t in u.world.tables.values() for k in list(t.rows)[:6]]
    pool += ["", "2025-01-01 00:00:00", "nope", "9999-99-99"]
    out = []
    for _ in range(n):
        fn = rng.choice(u.toolkit.schemas())["function"]
        args = {}
        for name, schema in fn["parameters"].get("properties", {}).items():
            t = schema.get("type")
            if "enum" in schema:
                args[name] = rng.choice(schema["enum"])
            elif t == "integer":
                args[name] = rng.choice([-1, 0, 1, 2, 10**6])
            elif t == "number":
                args[name] = rng.choice([-5.0, 0.0, 120.15, 30.2, 1e9])
            elif t == "array":
                args[name] = [rng.choice(pool)] if schema.get("items", {}).get("type") == "string" else [rng.choice([0, 1, 3])]
            else:
                args[name] = rng.choice(pool)
            if rng.random() < 0.1:
                args.pop(name)
        if rng.random() < 0.05:
            args["unexpected"] = 1
        out.append(json.dumps({"name": fn["name"], "arguments": args}))
    return out


# what garbled or hostile model output looks like: lone surrogates (raw and JSON-escaped), deep
# JSON, more calls than one action may hold, an action over the size limit
HOSTILE = [
    '{"name": "get_user_all_orders", "arguments": {"note": "\\ud83d"}}',
    "Sure \ud800 I will check.",
    "<tool_call>" + "[" * 5000 + "</tool_call>",
    "[" * 100_000,
    json.dumps([{"name": "nope", "arguments": {}}] * 100),
    "x" * (MAX_ACTION_CHARS + 1),
    '{"role": "assistant", "content": "\\udfff", "tool_calls": []}',
]


@pytest.mark.parametrize("env_id", ENV_IDS)
@settings(max_examples=30)
@given(seed=st.integers(0, 2**16), junk=st.lists(st.text(max_size=60), max_size=4),
       hostile=st.lists(st.sampled_from(HOSTILE), max_size=2))
def test_step_never_raises_and_failed_calls_change_nothing(env_id, seed, junk, hostile):
    env = shared(env_id)
    env.reset(seed=seed)
    u = env.unwrapped
    actions = _tool_actions(env, random.Random(seed), 12) + junk + hostile
    random.Random(seed).shuffle(actions)
    for action in actions:
        before = u.world.state_dict()
        n_calls = len(u.history.tool_calls())
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and reward in (0.0, 1.0)
        assert env.observation_space.contains(obs)
        json.dumps(u.messages, ensure_ascii=False).encode("utf-8")  # the transcript always encodes
        new = u.history.tool_calls()[n_calls:]
        if new and all(e.outcome != "executed" for e in new):
            assert u.world.state_dict() == before, (action, new[-1].content)
        if terminated or truncated:
            env.reset(seed=seed)


def _transcript(env_id: str, seed: int, actions: list[str]) -> str:
    env = gym.make(env_id, render_mode="ansi")
    obs, info = env.reset(seed=seed)
    parts = [obs, info["task_id"]]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        parts += [obs, repr(r), json.dumps(info, sort_keys=True, default=str)]
        if term or trunc:
            break
    parts.append(env.render())
    parts.append(json.dumps(env.unwrapped.messages, sort_keys=True))
    return "\n".join(parts)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_same_seed_same_actions_same_transcript(env_id):
    env = gym.make(env_id)
    env.reset(seed=5)
    actions = list(env.unwrapped.task.golden_actions) + _tool_actions(env, random.Random(5), 5)
    assert _transcript(env_id, 5, actions) == _transcript(env_id, 5, actions)


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs_match_single_envs(env_id, mode):
    n, seed = 2, 11
    singles = [gym.make(env_id) for _ in range(n)]
    firsts = [s.reset(seed=seed + i)[0] for i, s in enumerate(singles)]
    plans = [list(s.unwrapped.task.golden_actions) for s in singles]
    steps = min(len(p) for p in plans)
    kwargs = {"shared_memory": False} if mode == "async" else {}
    vec = gym.make_vec(env_id, n, vectorization_mode=mode, vector_kwargs=kwargs)
    try:
        obs, _ = vec.reset(seed=[seed + i for i in range(n)])
        assert list(obs) == firsts
        for t in range(steps):
            obs, rew, term, trunc, _ = vec.step([plans[i][t] for i in range(n)])
            for i, s in enumerate(singles):
                o, r, te, tr, _ = s.step(plans[i][t])
                assert (obs[i], float(rew[i]), bool(term[i]), bool(trunc[i])) == (o, r, te, tr)
        assert np.all(np.asarray(rew) >= 0)
    finally:
        vec.close()


@pytest.mark.parametrize("domain", sorted(SUITES))
def test_frozen_suites_are_what_the_generators_make(domain, tmp_path):
    """A generator change that would alter a frozen task fails here: bump the env version and
    rebuild the suite (scripts/build_suites.py) on purpose instead."""
    shipped = DATA_DIR / f"{domain}_test.json.gz"
    rebuilt = tmp_path / shipped.name
    save_task_file(SUITES[domain](), rebuilt)
    assert gzip.decompress(rebuilt.read_bytes()) == gzip.decompress(shipped.read_bytes())


_DIGEST_SCRIPT = r"""
import hashlib, json
import gymnasium as gym, servicegym
out = []
for env_id in sorted(servicegym.ENV_IDS):
    env = gym.make(env_id, render_mode="ansi")
    obs, info = env.reset(seed=3)
    parts = [obs]
    for a in env.unwrapped.task.golden_actions:
        o, r, te, tr, i = env.step(a)
        parts.append(o + repr(r) + json.dumps(i, sort_keys=True, default=str))
        if te or tr:
            break
    parts += [env.render(), json.dumps(env.unwrapped.messages, sort_keys=True)]
    out.append(env_id + ":" + hashlib.sha256("\n".join(parts).encode()).hexdigest())
print(" ".join(out))
"""


def test_every_env_replays_identically_across_processes_and_hash_seeds():
    """Nothing in any env depends on set/dict hash order, ids of objects or the wall clock."""
    digests = []
    for hash_seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        run = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT], capture_output=True, text=True, env=env, check=True)
        digests.append(run.stdout.strip())
    assert digests[0] == digests[1]
    assert len(digests[0].split()) == len(ENV_IDS)
