"""LLMAgentPolicy through the loopback server: native tool calls, the text fallback, malformed
tool-call JSON, and endpoint failures recorded by the rollout."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import servicegym  # noqa: F401
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.running.llm_policy import LLMAgentPolicy, observation_messages
from servicegym.envs.running.policies import make_policy, run_episode
from servicegym.simulators.llm import LLMError
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply
from tests.conftest import GOLDEN_ACTIONS, make_env


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-policy")
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)


def quick(server: LoopbackServer, **kw) -> dict:
    return server.config(timeout_s=0.3, max_retries=1, backoff_base_s=0.01, **kw)


def as_native(action: str) -> dict:
    """A golden action string as the chat completion a tool-calling model would return."""
    parsed = parse_action(action)
    if parsed.tool_calls:
        return tool_call_reply([(c.name, c.arguments) for c in parsed.tool_calls], content=parsed.message or None)
    return text_reply(parsed.message)


def test_native_tool_calls_complete_the_delivery_task():
    with LoopbackServer(script=[as_native(a) for a in GOLDEN_ACTIONS]) as server:
        env = make_env()
        policy = LLMAgentPolicy(quick(server))
        rec = run_episode(env, policy, seed=0)
        assert rec["success"] and rec["reward"] == 1.0 and rec["termination_reason"] == "user_stop"
        assert rec["steps"] == len(GOLDEN_ACTIONS) and "error" not in rec
        assert rec["policy_usage"]["calls"] == len(GOLDEN_ACTIONS) == len(server.requests)
        first, second = server.requests[0], server.requests[1]
        assert first["tools"] == env.toolkit.schemas()
        assert first["messages"][0]["content"] == env.system_prompt(env.task, env.world)
        # the tool result comes back as a tool message answering the call by its id
        tool_msg = second["messages"][-1]
        assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_lb_1"
        assert json.loads(tool_msg["content"])[0]["product_id"] == "P001"
        # and the env's transcript keeps the model's call ids
        calls = [m for m in env.messages if m.get("tool_calls")]
        assert calls[0]["tool_calls"][0]["id"] == "call_lb_1"


def test_malformed_tool_call_json_gets_an_error_observation_and_the_episode_goes_on():
    script = [Fault.malformed_tool_call("delivery_product_search_recommend", '{"keywords": ["beef'),
              *[as_native(a) for a in GOLDEN_ACTIONS]]
    with LoopbackServer(script=script) as server:
        env = make_env()
        obs, info = env.reset(seed=0)
        policy = LLMAgentPolicy(quick(server))
        policy.reset(env, obs, info)
        obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        assert "<tool_error" in obs and "must be a JSON object" in obs
        assert not (terminated or truncated) and info["tool_errors"] == 1
        for _ in GOLDEN_ACTIONS:
            obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        assert terminated and reward == 1.0
        # the model was told about its mistake through the tool message of that call
        assert "must be a JSON object" in server.requests[1]["messages"][-1]["content"]


def test_text_fallback_by_config():
    with LoopbackServer(script=list(GOLDEN_ACTIONS)) as server:
        env = make_env()
        policy = LLMAgentPolicy(quick(server, native_tools=False))
        rec = run_episode(env, policy, seed=0)
        assert rec["success"] and not policy.native
        assert all("tools" not in r for r in server.requests)
        system = server.requests[0]["messages"][0]["content"]
        assert "delivery_product_search_recommend" in system and "<tool_call>" in system
        # the tool results come back as the observation text
        assert server.requests[1]["messages"][-1]["content"].startswith("<tool_result")


def test_endpoint_without_tools_falls_back_to_text():
    script = [Fault.status(400, message="This model does not support tools."), *GOLDEN_ACTIONS]
    with LoopbackServer(script=script) as server:
        env = make_env()
        policy = LLMAgentPolicy(quick(server))
        rec = run_episode(env, policy, seed=0)
        assert rec["success"] and policy.native is False
        assert "tools" in server.requests[0] and all("tools" not in r for r in server.requests[1:])


def test_fallback_mid_episode_rewrites_the_conversation():
    script = [as_native(GOLDEN_ACTIONS[0]), Fault.status(400, message="tool_choice is not supported"), *GOLDEN_ACTIONS[1:]]
    with LoopbackServer(script=script) as server:
        env = make_env()
        rec = run_episode(env, LLMAgentPolicy(quick(server)), seed=0)
        assert rec["success"]
        roles = [m["role"] for m in server.requests[2]["messages"]]
        assert "tool" not in roles and roles[:3] == ["system", "user", "assistant"]
        assert server.requests[2]["messages"][2]["content"].startswith("<tool_call>")


def test_endpoint_failure_is_recorded_not_hung():
    with LoopbackServer(script=[as_native(GOLDEN_ACTIONS[0])], handler=lambda body: Fault.status(500)) as server:
        env = make_env()
        policy = LLMAgentPolicy(quick(server))
        rec = run_episode(env, policy, seed=0)
        assert rec["termination_reason"] == "policy_error" and not rec["success"] and rec["reward"] == 0.0
        assert "HTTP 500" in rec["error"] and server.base_url in rec["error"]
        assert rec["steps"] == 1 and policy.last_error is not None and policy.last_error.attempts == 2
        assert len(server.requests) == 3


def test_act_failure_leaves_the_conversation_as_it_was():
    with LoopbackServer(script=[as_native(GOLDEN_ACTIONS[0]), Fault.status(503), Fault.status(503)]) as server:
        env = make_env()
        obs, info = env.reset(seed=0)
        policy = LLMAgentPolicy(quick(server))
        policy.reset(env, obs, info)
        obs, *_ = env.step(policy.act(obs))
        before = [dict(m) for m in policy.messages]
        with pytest.raises(LLMError):
            policy.act(obs)
        assert policy.messages == before
        server.handler = lambda body: as_native(GOLDEN_ACTIONS[1])
        assert policy.act(obs) == GOLDEN_ACTIONS[1]  # a retry by the caller picks up where it was
        assert [m["role"] for m in policy.messages][-2:] == ["tool", "assistant"]


def test_make_policy_llm(monkeypatch):
    with pytest.raises(ValueError, match="SERVICEGYM_BASE_URL"):
        make_policy("llm")
    with LoopbackServer() as server:
        monkeypatch.setenv("SERVICEGYM_BASE_URL", server.base_url)
        monkeypatch.setenv("SERVICEGYM_MODEL", server.model)
        assert isinstance(make_policy("llm"), LLMAgentPolicy)
        policy = make_policy("llm", llm={"model": "other"})
        assert policy.client.config.model == "other" and policy.client.config.base_url == server.base_url


def test_payments_with_native_tools():
    env = gym.make("servicegym/Payments-v0", difficulty=1)
    obs, info = env.reset(seed=3)
    golden = env.unwrapped.task.golden_actions
    with LoopbackServer(script=[as_native(a) for a in golden]) as server:
        policy = LLMAgentPolicy(quick(server))
        rec = run_episode(env, policy, seed=3)
        assert rec["success"], rec["score"]


def test_observation_messages():
    obs = ('<tool_result name="a" call_id="c1">{"x": 1}</tool_result>\n'
           '<tool_error name="b" call_id="c&quot;2">bad</tool_error>\n<user>hi</user>')
    msgs = observation_messages(obs, ["c1", 'c"2', "c3"])
    assert msgs[0] == {"role": "tool", "tool_call_id": "c1", "content": '{"x": 1}'}
    assert msgs[1]["content"] == "ERROR: bad" and msgs[2]["content"].startswith("no result")
    assert msgs[3] == {"role": "user", "content": "<user>hi</user>"}


def test_golden_replay_refuses_tasks_it_cannot_tell_apart():
    import gymnasium as gym
    import pytest

    from servicegym.envs.running.llm_policy import golden_replay_handler

    env = gym.make("servicegym/Delivery-v0").unwrapped
    task = env.source.get(env.task_ids("test")[0])
    twin = task.model_copy(update={"task_id": "twin", "golden_actions": ["###STOP###"]})
    with pytest.raises(ValueError, match="same message"):
        golden_replay_handler([task, twin])
    handler = golden_replay_handler([task])
    first = handler({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": task.user.opening}]})
    assert first["choices"][0]["message"]["tool_calls"] or first["choices"][0]["message"]["content"]


def _play_payments(limit):
    """A long Payments suite task played by the LLM agent, the loopback model replaying its golden
    route in order; returns the record, the policy and every request body the server received."""
    from servicegym.simulators.loopback import count_tokens

    env = gym.make("servicegym/Payments-v0")
    tid = env.unwrapped.task_ids("test")[0]
    env.reset(seed=0, options={"task_id": tid})
    golden = env.unwrapped.task.golden_actions
    with LoopbackServer(script=[as_native(a) for a in golden]) as server:
        policy = LLMAgentPolicy(server.config(timeout_s=5, max_retries=0), max_prompt_tokens=limit)
        rec = run_episode(env, policy, seed=0, options={"task_id": tid})
        sizes = [count_tokens(body["messages"]) for body in server.requests]
        return rec, policy, server.requests, sizes


def test_max_prompt_tokens_keeps_long_episodes_within_the_limit():
    full, _, _, sizes = _play_payments(None)
    assert full["success"] and max(sizes) > 1500, "the test needs a long episode"
    limit = max(sizes) // 4
    rec, policy, requests, trimmed = _play_payments(limit)
    assert rec["success"] and rec["score"] == full["score"]  # the env's transcript and score are the agent's own
    assert policy.dropped_messages > 0
    assert max(trimmed) <= 1.15 * limit < max(sizes)
    opening = requests[0]["messages"][:2]
    for body in requests:
        msgs = body["messages"]
        assert msgs[:2] == opening  # the system prompt and the request always stay
        called = set()
        for m in msgs:
            called |= {c["id"] for c in m.get("tool_calls") or []}
            if m["role"] == "tool":
                assert m["tool_call_id"] in called  # no tool result without its call
        assert msgs[2]["role"] == "assistant" if len(msgs) > 2 else True


def test_max_prompt_tokens_is_checked_and_reaches_the_policy_through_collect(tmp_path):
    with pytest.raises(ValueError, match="max_prompt_tokens"):
        LLMAgentPolicy({"base_url": "http://127.0.0.1:9/v1", "model": "m"}, max_prompt_tokens=0)
    with pytest.raises(ValueError, match="takes no options"):
        make_policy("oracle", max_prompt_tokens=100)
    policy = make_policy("llm", llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"}, max_prompt_tokens=2048)
    assert policy.max_prompt_tokens == 2048
