"""Endpoint faults end episodes with a reason, never with an exception out of ``env.step`` or
``run_episode``: the LLM user (``user="llm"``), the payments customer, the workspace user and the
LLM agent policy against a hostile loopback server (trickling, reset, deeply nested, oversized,
overflowing and surrogate-laden replies), and the per-episode budget of model-call seconds."""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.llm_policy import LLMAgentPolicy
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.simulators.llm import LLMClient, LLMError, aclose_clients
from servicegym.simulators.llm_workspace_user import parse_decision
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply
from tests.conftest import make_env


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-fault-episodes")
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)


def quick(server: LoopbackServer, **kw) -> dict:
    return server.config(**{"timeout_s": 0.5, "deadline_s": 1.0, "max_retries": 1, "backoff_base_s": 0.01, **kw})


def encodes(value) -> bool:
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    return True


# each fault, the LLMError kind it becomes, and what the error text says
FAILING = {
    "deep-nesting": (lambda: Fault.deep_nesting(100_000), {}, "malformed", "nests deeper"),
    "oversized": (lambda: text_reply("x" * 5000), {"max_response_bytes": 1000}, "malformed", "byte limit"),
    "trickle": (lambda: Fault.trickle(0.05), {}, "deadline", "deadline"),
    "reset": (lambda: Fault.reset(8), {}, "reset", "reset or closed"),
}


@pytest.mark.parametrize("fault", list(FAILING))
def test_a_failing_user_endpoint_ends_the_episode_as_a_user_error(fault):
    make_fault, extra, kind, text = FAILING[fault]
    with LoopbackServer(lambda body: make_fault()) as server:
        env = make_env(user="llm", llm=quick(server, **extra))
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step("How many people is it for?")
        assert truncated and not terminated and reward == 0.0
        assert info["termination_reason"] == "user_error" and "could not reply" in obs and text in obs
        event = env.history.entries[-1]
        assert (event.name, event.arguments["kind"]) == ("user_error", kind)
        assert encodes(env.messages) and encodes([list(e) for e in env.history])


@pytest.mark.parametrize("fault", list(FAILING))
def test_run_episode_records_a_failing_user_endpoint(fault):
    make_fault, extra, kind, text = FAILING[fault]
    with LoopbackServer(lambda body: make_fault()) as server:
        env = make_env(user="llm", llm=quick(server, **extra))
        rec = run_episode(env, OraclePolicy(), seed=0)
        assert rec["termination_reason"] == "user_error" and not rec["success"]
        assert encodes(rec)


@pytest.mark.parametrize("fault", list(FAILING))
def test_run_episode_records_a_failing_policy_endpoint(fault):
    make_fault, extra, kind, text = FAILING[fault]
    with LoopbackServer(lambda body: make_fault()) as server:
        env = make_env()
        policy = LLMAgentPolicy(quick(server, **extra))
        rec = run_episode(env, policy, seed=0)
        assert rec["termination_reason"] == "policy_error" and text in rec["error"] and rec["steps"] == 0
        assert policy.last_error.kind == kind and encodes(rec)


@pytest.mark.parametrize("fault", ["trickle", "deep-nesting", "reset"])
def test_aact_turns_the_fault_into_llm_error(fault):
    make_fault, extra, kind, _ = FAILING[fault]
    with LoopbackServer(lambda body: make_fault()) as server:
        env = make_env()
        obs, info = env.reset(seed=0)
        policy = LLMAgentPolicy(quick(server, **extra))
        policy.reset(env, obs, info)

        async def main():
            try:
                return await policy.aact(obs)
            finally:
                await aclose_clients()

        with pytest.raises(LLMError) as err:
            asyncio.run(main())
        assert err.value.kind == kind and policy.messages[-1]["role"] == "user"  # the conversation is as it was


def test_surrogates_and_overflowing_usage_keep_the_episode_going(tmp_path):
    with LoopbackServer(script=[Fault.surrogate("Two of us \ud800."), Fault.overflow_usage("No coriander.")]) as server:
        env = make_env(user="llm", llm=quick(server, cache_dir=str(tmp_path)))
        env.reset(seed=0)
        obs, _, terminated, truncated, info = env.step("How many people is it for?")
        assert not (terminated or truncated) and obs == "<user>Two of us \ufffd.</user>"
        obs, _, terminated, truncated, info = env.step("Anything else?")
        assert not (terminated or truncated) and obs == "<user>No coriander.</user>"
        assert info["llm_usage"]["user"]["prompt_tokens"] >= 0
        assert encodes(env.messages) and encodes([list(e) for e in env.history])
    files = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 2 and not [f for f in files if f.startswith(".tmp-")]  # both cached, no orphan


def test_a_surrogate_laden_agent_reply_is_a_safe_action():
    with LoopbackServer(lambda body: Fault.surrogate("I will look \udfff into it.", tool_call=True)) as server:
        env = make_env(max_steps=2)
        rec = run_episode(env, LLMAgentPolicy(quick(server)), seed=0)
        assert rec["termination_reason"] == "max_steps" and encodes(rec)
        assert "\ufffd" in json.dumps(rec["messages"], ensure_ascii=False)


# ----- the per-episode budget --------------------------------------------------------------------
def test_user_episode_budget_ends_the_episode_with_the_reason():
    """User replies take 0.5 s and the budget is 0.8 s: the second reply is cut at the budget."""
    with LoopbackServer(lambda body: text_reply("Two of us."), latency_s=0.5) as server:
        env = make_env(user="llm", llm=quick(server, timeout_s=5.0, deadline_s=30.0, episode_budget_s=0.8))
        env.reset(seed=0)
        assert not env.step("How many people is it for?")[3]
        obs, _, terminated, truncated, info = env.step("And the address?")
        assert truncated and info["termination_reason"] == "user_error" and "budget of 0.8 s" in obs
        assert env.history.entries[-1].arguments["kind"] == "budget"
        assert env._user.budget.spent_s < 0.8 + 0.5
        env.reset(seed=1)  # a new episode, a new budget
        assert env._user.budget.spent_s == 0.0 and not env.step("How many people?")[3]


def test_policy_episode_budget_ends_the_episode_with_the_reason():
    with LoopbackServer(lambda body: text_reply("Let me check."), latency_s=0.5) as server:
        env = make_env(max_steps=10)
        policy = LLMAgentPolicy(quick(server, timeout_s=5.0, deadline_s=30.0), episode_budget_s=0.8)
        rec = run_episode(env, policy, seed=0)
        assert rec["termination_reason"] == "policy_error" and "budget of 0.8 s" in rec["error"]
        assert rec["steps"] == 1 and policy.last_error.kind == "budget"
        rec = run_episode(env, policy, seed=1)  # reset gives the next episode its whole budget again
        assert rec["steps"] == 1 and "budget" in rec["error"]
    with pytest.raises(ValueError, match="budget"):
        LLMAgentPolicy({"base_url": "http://h/v1", "model": "m"}, episode_budget_s=-1)


def test_policy_budget_comes_from_the_config():
    policy = LLMAgentPolicy({"base_url": "http://h/v1", "model": "m", "episode_budget_s": 12})
    assert policy.budget.seconds == 12.0 and "episode_budget_s" not in policy.chat_extra


# ----- model-written JSON too deep for json --------------------------------------------------------
def test_payments_customer_tool_arguments_nested_too_deep_get_an_error_result():
    deep = "[" * 100_000 + "]" * 100_000
    script = [tool_call_reply([("upload_document", deep)]), "Sorry, that did not work."]
    with LoopbackServer(script=script) as server:
        env = gym.make("servicegym/Payments-v0", difficulty=1, user="llm", llm=quick(server))
        env.reset(seed=3)
        obs, _, terminated, truncated, _ = env.step("Please upload your bank statement.")
        assert not (terminated or truncated) and "did not work" in obs
        customer = env.unwrapped._user
        assert "not valid JSON" in [m for m in customer.messages if m["role"] == "tool"][0]["content"]


def test_workspace_decision_nested_too_deep_falls_back():
    assert parse_decision("[" * 100_000 + "]" * 100_000, {"tone"}) is None
    assert parse_decision('{"completed": ["tone"], "asked": []}', {"tone"}) == ({"tone"}, set())


def test_llm_user_budget_is_shared_when_given():
    from servicegym.simulators.llm import EpisodeBudget
    from servicegym.simulators.llm_user import LLMUser
    from tests.conftest import make_delivery_task

    client = LLMClient({"base_url": "http://127.0.0.1:9/v1", "model": "m", "episode_budget_s": 3})
    assert LLMUser(make_delivery_task().user, client).budget.seconds == 3.0
    shared = EpisodeBudget(5)
    assert LLMUser(make_delivery_task().user, client, budget=shared).budget is shared
