"""Reward wrappers: each one's rewards on real episodes, the shaping telescoping identity, the
custom hook, and use through gymnasium.make and make_vec."""

from __future__ import annotations

import functools
import json

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy
from servicegym.rewards.wrappers import (
    CustomReward,
    PartialCreditReward,
    PotentialShapingReward,
    StrictSuccessReward,
    ToolErrorPenalty,
    TurnPenalty,
    rubric_progress,
)

DELIVERY = "servicegym/Delivery-v0"
PAYMENTS = "servicegym/Payments-v0"


def rollout(env, policy, seed):
    """(rewards, infos) of one episode; infos[0] is the reset info."""
    obs, info = env.reset(seed=seed)
    policy.reset(env, obs, info)
    rewards, infos = [], [info]
    while True:
        obs, r, term, trunc, info = env.step(policy.act(obs))
        rewards.append(r)
        infos.append(info)
        if term or trunc:
            return rewards, infos


def episodes(env_id):
    """(policy factory, seed) of an oracle and random episodes."""
    if env_id == DELIVERY:
        return [(OraclePolicy, 3), (lambda: RandomPolicy(seed=0), 0), (lambda: RandomPolicy(seed=4), 4)]
    return [(OraclePolicy, 0), (lambda: RandomPolicy(seed=1), 1)]


def test_strict_success_is_the_default_reward_made_explicit():
    raw, wrapped = gym.make(DELIVERY), StrictSuccessReward(gym.make(DELIVERY))
    for make, seed in episodes(DELIVERY):
        r1, _ = rollout(raw, make(), seed)
        r2, i2 = rollout(wrapped, make(), seed)
        assert r1 == r2
        assert r2[:-1] == [0.0] * (len(r2) - 1) and r2[-1] == float(i2[-1]["success"])
    # as the outermost wrapper it undoes what inner wrappers did
    env = StrictSuccessReward(TurnPenalty(gym.make(DELIVERY), per_turn=0.5))
    rewards, infos = rollout(env, OraclePolicy(), 3)
    assert rewards == [0.0] * (len(rewards) - 1) + [1.0]


def test_partial_credit_rubric_fraction():
    env = PartialCreditReward(gym.make(DELIVERY))
    rewards, infos = rollout(env, RandomPolicy(seed=0), 0)
    frac = infos[-1]["score"]["rubric_fraction"]
    assert 0.0 < frac < 1.0 and infos[-1]["success"] is False  # a partly right random episode
    assert rewards[-1] == pytest.approx(frac) and infos[-1]["partial_credit"] == rewards[-1]
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    item = PartialCreditReward(gym.make(DELIVERY), component="rubric/dish")
    r, i = rollout(item, RandomPolicy(seed=0), 0)
    assert r[-1] == i[-1]["score"]["rubric/dish"]


def test_partial_credit_payments_components():
    r, i = rollout(PartialCreditReward(gym.make(PAYMENTS)), RandomPolicy(seed=1), 1)
    s = i[-1]["score"]
    assert (s["goal"], s["process"], s["protection"]) == (0.0, 1.0, 1.0)
    assert r[-1] == pytest.approx(2 / 3)
    r, _ = rollout(PartialCreditReward(gym.make(PAYMENTS), component="goal"), RandomPolicy(seed=1), 1)
    assert r[-1] == 0.0
    r, _ = rollout(PartialCreditReward(gym.make(PAYMENTS), component=("process", "protection")), RandomPolicy(seed=1), 1)
    assert r[-1] == 1.0
    with pytest.raises(KeyError, match="score has no proc; it has"):
        rollout(PartialCreditReward(gym.make(PAYMENTS), component="proc"), OraclePolicy(), 0)
    with pytest.raises(ValueError):
        PartialCreditReward(gym.make(PAYMENTS), component=())


class SessionEnv(gym.Env):
    """A stand-in for a multi-session env: a score dict at each session end (every 2nd step)."""

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(1)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        info = {"tool_errors": 0}
        done = self.t == 6
        if self.t % 2 == 0:
            info["score"] = {"proc": self.t / 10, "comp": 0.5, "note": "text is ignored"}
            info["success"] = False
        return 0, 1.0 if self.t % 2 == 0 else 0.0, done, False, info


class SessionEndEnv(SessionEnv):
    """Like the workspace: ``session_end`` at each session end, the episode ``score`` at the last."""

    def step(self, action):
        obs, r, done, trunc, info = super().step(action)
        if "score" in info:
            info["session_end"] = info.pop("score")
            if done:
                info["score"] = {"proc": 0.9, "comp": 0.9}
        return obs, r, done, trunc, info


def test_partial_credit_prefers_the_session_end():
    env = PartialCreditReward(SessionEndEnv())
    env.reset()
    rewards = [env.step(0)[1] for _ in range(6)]
    assert rewards == pytest.approx([0.0, 0.35, 0.0, 0.45, 0.0, 0.55])


def test_partial_credit_is_key_driven_for_session_scores():
    env = PartialCreditReward(SessionEnv())
    env.reset()
    rewards = [env.step(0)[1] for _ in range(6)]
    assert rewards == pytest.approx([0.0, (0.2 + 0.5) / 2, 0.0, (0.4 + 0.5) / 2, 0.0, (0.6 + 0.5) / 2])
    env = PartialCreditReward(SessionEnv(), component="comp")
    env.reset()
    assert [env.step(0)[1] for _ in range(2)] == [0.0, 0.5]


def _shaping_identity(env, policy, seed, gamma):
    rewards, infos = rollout(env, policy, seed)
    terms = [i["shaping"] for i in infos[1:]]
    phi = [infos[0]["potential"]] + [i["potential"] for i in infos[1:]]
    T = len(terms)
    discounted = sum(gamma**t * f for t, f in enumerate(terms))
    assert discounted == pytest.approx(gamma**T * phi[-1] - phi[0], abs=1e-12)
    for t, f in enumerate(terms):  # every term is gamma * Phi(s_{t+1}) - Phi(s_t)
        assert f == pytest.approx(gamma * phi[t + 1] - phi[t], abs=1e-15)
    return rewards, infos, terms, phi


@pytest.mark.parametrize("env_id", [DELIVERY, PAYMENTS])
@pytest.mark.parametrize("gamma", [0.9, 1.0])
def test_shaping_terms_telescope(env_id, gamma):
    for make, seed in episodes(env_id):
        base_rewards, _ = rollout(gym.make(env_id), make(), seed)
        env = PotentialShapingReward(gym.make(env_id), gamma=gamma)
        policy = make()
        rewards, infos, terms, phi = _shaping_identity(env, policy, seed, gamma)
        assert rewards == pytest.approx([b + f for b, f in zip(base_rewards, terms)], abs=1e-12)
        assert phi[-1] == pytest.approx(rubric_progress(env))  # the final potential is the state's
        if isinstance(policy, OraclePolicy):
            assert phi[-1] == 1.0 and phi[0] < 1.0 and any(b > a for a, b in zip(phi, phi[1:]))


@settings(max_examples=25)
@given(gamma=st.floats(0.0, 1.0), seed=st.integers(0, 10_000), zero=st.booleans())
def test_shaping_identity_on_random_episodes(gamma, seed, zero):
    env = PotentialShapingReward(gym.make(DELIVERY, max_steps=12), gamma=gamma, zero_at_terminal=zero)
    _shaping_identity(env, RandomPolicy(seed=seed), seed, gamma)


def test_shaping_zero_at_terminal():
    env = PotentialShapingReward(gym.make(DELIVERY), gamma=0.95, zero_at_terminal=True)
    rewards, infos, terms, phi = _shaping_identity(env, OraclePolicy(), 3, 0.95)
    assert infos[-1]["potential"] == 0.0 and sum(0.95**t * f for t, f in enumerate(terms)) == pytest.approx(-phi[0])
    # a truncated episode is not terminal: its last potential is the state's own
    env = PotentialShapingReward(gym.make(DELIVERY, max_steps=2), gamma=0.95, zero_at_terminal=True)
    rewards, infos, terms, phi = _shaping_identity(env, OraclePolicy(), 3, 0.95)
    assert infos[-1]["termination_reason"] == "max_steps" and phi[-1] == pytest.approx(rubric_progress(env))
    with pytest.raises(ValueError, match="gamma"):
        PotentialShapingReward(gym.make(DELIVERY), gamma=1.5)


def test_shaping_with_a_custom_potential():
    def orders(env):
        return float(len(env.unwrapped.world.table("orders").rows))

    env = PotentialShapingReward(gym.make(DELIVERY), gamma=0.99, potential=orders)
    rewards, infos, terms, phi = _shaping_identity(env, OraclePolicy(), 3, 0.99)
    assert phi[-1] == orders(env) and phi[-1] > phi[0]


def test_tool_error_penalty_counts_new_errors():
    env = ToolErrorPenalty(gym.make(DELIVERY), per_error=0.25)
    rewards, infos = rollout(env, RandomPolicy(seed=0), 0)
    errors = infos[-1]["tool_errors"]
    assert errors >= 2
    assert sum(i["tool_error_penalty"] for i in infos[1:]) == pytest.approx(0.25 * errors)
    base, _ = rollout(gym.make(DELIVERY), RandomPolicy(seed=0), 0)
    assert sum(rewards) == pytest.approx(sum(base) - 0.25 * errors)
    # one step with two malformed calls costs two errors; a reset starts the count again
    env.reset(seed=1)
    bad = '<tool_call>{"name": "nope", "arguments": {}}</tool_call><tool_call>{"name": "nope2", "arguments": {}}</tool_call>'
    _, r, *_ , info = env.step(bad)
    assert info["tool_errors"] == 2 and r == pytest.approx(-0.5)
    _, r, *_ = env.step("Hello, what would you like?")
    assert r == 0.0


def test_turn_penalty():
    env = TurnPenalty(gym.make(DELIVERY), per_turn=0.02)
    rewards, infos = rollout(env, OraclePolicy(), 3)
    assert rewards[:-1] == pytest.approx([-0.02] * (len(rewards) - 1))
    assert rewards[-1] == pytest.approx(1.0 - 0.02)


def test_custom_reward_sees_world_history_and_info():
    seen = []

    def fn(world, history, info):
        seen.append((len(history.entries), info["step"]))
        return 0.1 * sum(1 for o in world.table("orders") if o.status == "paid")

    env = CustomReward(gym.make(DELIVERY), fn)
    rewards, infos = rollout(env, OraclePolicy(), 3)
    paid = sum(1 for o in env.unwrapped.world.table("orders") if o.status == "paid")
    assert infos[-1]["custom_reward"] == pytest.approx(0.1 * paid)
    assert rewards[-1] == pytest.approx(1.0 + 0.1 * paid)
    assert [s for _, s in seen] == list(range(1, len(rewards) + 1))
    assert [n for n, _ in seen] == sorted(n for n, _ in seen)  # the history only grows
    env = CustomReward(gym.make(DELIVERY), lambda w, h, i: -1.0, mode="replace")
    rewards, _ = rollout(env, OraclePolicy(), 3)
    assert rewards == [-1.0] * len(rewards)
    with pytest.raises(ValueError, match="mode"):
        CustomReward(gym.make(DELIVERY), fn, mode="mul")


def test_stacked_wrappers_compose():
    env = ToolErrorPenalty(TurnPenalty(PotentialShapingReward(PartialCreditReward(gym.make(DELIVERY)), gamma=1.0),
                                       per_turn=0.01), per_error=0.1)
    rewards, infos = rollout(env, RandomPolicy(seed=0), 0)
    last = infos[-1]
    total_shaping = sum(i["shaping"] for i in infos[1:])
    expected = last["score"]["rubric_fraction"] + total_shaping - 0.01 * len(rewards) - 0.1 * last["tool_errors"]
    assert sum(rewards) == pytest.approx(expected)


ACTIONS = [json.dumps({"name": "get_user_historical_behaviors", "arguments": {}}), "###STOP###"]


def _returns(step, n, steps=10):
    """Each env's return over its first episode; env k plays ACTIONS[k % 2] every step."""
    total, done = np.zeros(n), np.zeros(n, dtype=bool)
    for _ in range(steps):
        r, term, trunc = step(tuple(ACTIONS[k % 2] for k in range(n)))
        total += np.where(done, 0.0, r)
        done |= np.asarray(term) | np.asarray(trunc)
        if done.all():
            return total
    raise AssertionError("episodes did not end")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_with_wrappers(mode):
    wrappers = [functools.partial(TurnPenalty, per_turn=0.5), functools.partial(PartialCreditReward, component="rubric_fraction")]
    kw = {"vector_kwargs": {"shared_memory": False}} if mode == "async" else {}
    vec = gym.make_vec(DELIVERY, num_envs=2, vectorization_mode=mode, wrappers=wrappers, max_steps=3, **kw)
    try:
        vec.reset(seed=[3, 4])
        got = _returns(lambda a: vec.step(a)[1:4], 2)
    finally:
        vec.close()
    # the same wrappers over single envs, the same seeds and actions
    for k, seed in enumerate((3, 4)):
        env = PartialCreditReward(TurnPenalty(gym.make(DELIVERY, max_steps=3), per_turn=0.5), component="rubric_fraction")
        env.reset(seed=seed)
        rewards = []
        while True:
            _, r, term, trunc, info = env.step(ACTIONS[k % 2])
            rewards.append(r)
            if term or trunc:
                break
        # inner turn penalties on the steps before the last; the last reward is the rubric fraction
        assert rewards == pytest.approx([-0.5] * (len(rewards) - 1) + [info["score"]["rubric_fraction"]])
        assert got[k] == pytest.approx(sum(rewards))
    assert len(rewards) == 1  # env 1 stopped at once; env 0 ran to the step limit


def test_workspace_partial_credit_and_shaping():
    env = PartialCreditReward(PotentialShapingReward(gym.make("servicegym/Workspace-v0"), gamma=0.95))
    rewards, infos, terms, phi = _shaping_identity(env, OraclePolicy(), 0, 0.95)
    ends = [i for i in infos[1:] if "session_end" in i]
    assert len(ends) == infos[-1]["score"]["sessions"]  # one credit per session
    for i in ends:
        assert i["partial_credit"] == pytest.approx((i["session_end"]["proc"] + i["session_end"]["comp"]) / 2)
    assert phi[-1] == pytest.approx(rubric_progress(env)) and phi[-1] > phi[0]
