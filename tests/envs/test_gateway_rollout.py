"""``servicegym.envs.integrations.rollout.rollout`` against the loopback chat-completions server:
golden routes replayed as native tool calls reach reward 1.0 on every env; within a conversation
every request body is the previous one plus the reply and the env's answer (append-only); the
completion ids returned are the server's; 32 rollouts at once give the records of one at a time;
a failing endpoint ends the rollout with a reason."""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading

import gymnasium as gym
import pytest

import servicegym
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.integrations.rollout import API_KEY_ENV_PREFIX, RolloutResult, _client, rollout
from servicegym.envs.running.episodes import episode_seed
from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
from servicegym.simulators.llm import aclose_clients, canonical_json
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply

ENV_IDS = sorted(servicegym.ENV_IDS)
WORKSPACE = "servicegym/Workspace-v0"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rollout")
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)


class Recorder:
    """A handler wrapper: every request body and the completion id given to its reply, which is
    a digest of the body (so the ids do not depend on the order requests arrive in)."""

    def __init__(self, inner):
        self.inner = inner
        self.seen: list[tuple[dict, str]] = []
        self._lock = threading.Lock()

    def __call__(self, body):
        reply = self.inner(body)
        if not isinstance(reply, dict):
            return reply
        cid = "chatcmpl-" + hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()[:24]
        with self._lock:
            self.seen.append((body, cid))
        return {**reply, "id": cid}


def _reply(action: str) -> dict:
    parsed = parse_action(action)
    if parsed.tool_calls:
        return tool_call_reply([(c.name, c.arguments) for c in parsed.tool_calls], content=parsed.message or None)
    return text_reply(parsed.message)


def workspace_handler(task_id: str):
    """The golden route of a whole Workspace episode, whose chat restarts at every session: each
    session is known by its opening message, whose offset into the golden actions is found by
    playing the route once."""
    env = gym.make(WORKSPACE, split="test")
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": task_id})
    golden = list(u.task.golden_actions)
    offsets = {u.messages[1]["content"]: 0}
    for i, action in enumerate(golden):
        *_, term, trunc, _ = env.step(action)
        turn = u.turn_messages()
        if turn and turn[0]["role"] == "system":
            offsets[turn[1]["content"]] = i + 1
        if term or trunc:
            break

    def handler(body):
        msgs = body["messages"]
        k = offsets[next(m["content"] for m in msgs if m["role"] == "user")] + sum(m["role"] == "assistant" for m in msgs)
        return _reply(golden[k] if k < len(golden) else "###STOP###")

    return handler, len(offsets)


def run(coro):
    async def main():
        try:
            return await coro
        finally:
            await aclose_clients()

    return asyncio.run(main())


def conversations_of(bodies: list[dict]) -> list[list[dict]]:
    """Request bodies grouped by chat (a new chat starts where the system message changes)."""
    groups: list[list[dict]] = []
    for body in bodies:
        if not groups or body["messages"][:2] != groups[-1][0]["messages"][:2]:
            groups.append([])
        groups[-1].append(body)
    return groups


def check_append_only(bodies: list[dict], replies: list[dict]) -> None:
    """Each request of a chat is the previous request's messages, then the reply's assistant
    message exactly as the server sent it, then the env's answer."""
    for prev, nxt in zip(bodies, bodies[1:]):
        n = len(prev["messages"])
        assert nxt["messages"][:n] == prev["messages"]
        sent = replies[bodies.index(prev)]
        assistant = nxt["messages"][n]
        assert assistant["role"] == "assistant" and assistant.get("content") == sent.get("content")
        assert [c["id"] for c in assistant.get("tool_calls") or []] == [c["id"] for c in sent.get("tool_calls") or []]
        assert [c["function"] for c in assistant.get("tool_calls") or []] == \
            [c["function"] for c in sent.get("tool_calls") or []]
        assert len(nxt["messages"]) > n + 1  # and the env answered
        assert nxt["tools"] == prev["tools"]


def check_tool_messages_answer_their_calls(messages: list[dict]) -> None:
    calls: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            calls = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            assert m["tool_call_id"] in calls, m
        else:
            calls = set()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_golden_routes_through_the_endpoint_reach_reward_1(env_id):
    env = gym.make(env_id, split="test")
    task = replayable_tasks(env, 1)[0]
    if env_id == WORKSPACE:
        inner, sessions = workspace_handler(task.task_id)
    else:
        inner, sessions = golden_replay_handler([task]), 1
    recorder = Recorder(inner)
    with LoopbackServer(handler=recorder) as server:
        result = run(rollout(env_id, task.task_id, 3, base_url=server.base_url, model=server.model))
    assert isinstance(result, RolloutResult)
    assert result.reward == 1.0 and result.success and result.error is None
    assert result.termination_reason in ("user_stop", "agent_stop")
    assert result.score and all(isinstance(result.score[k], float) for k in env.unwrapped.score_keys)
    assert result.steps == len(recorder.seen) == len(result.completion_ids) == result.usage["calls"]
    assert result.completion_ids == [cid for _, cid in recorder.seen]
    assert result.rewards[-1] == 1.0
    # append-only within each chat; a Workspace episode is one chat per session
    bodies = [b for b, _ in recorder.seen]
    groups = conversations_of(bodies)
    assert len(groups) == len(result.conversations) == sessions
    for group, conv in zip(groups, result.conversations):
        replies = [_served(recorder, b) for b in group]
        check_append_only(group, replies)
        assert conv[: len(group[-1]["messages"])] == group[-1]["messages"]
        assert group[0]["tools"] == result.tools
        check_tool_messages_answer_their_calls(conv)
    assert result.to_json()["messages"] == result.messages


def _served(recorder: Recorder, body: dict) -> dict:
    """The assistant message the server sent for ``body`` (the inner handler is deterministic)."""
    reply = recorder.inner(body)
    return reply["choices"][0]["message"]


def test_rows_drive_the_rollout_and_an_explicit_seed_wins():
    from servicegym.envs.integrations.dataset import task_rows

    env = gym.make("servicegym/Delivery-v0", split="test")
    task = replayable_tasks(env, 1)[0]
    row = next(r for r in task_rows("servicegym/Delivery-v0", "test", n=5, seed=11) if r["task_id"] == task.task_id)
    with LoopbackServer(handler=golden_replay_handler([task])) as server:
        a = run(rollout(None, row, base_url=server.base_url, model=server.model))
        b = run(rollout("Delivery-v0", row, 5, base_url=server.base_url, model=server.model))
        with pytest.raises(ValueError, match="not"):
            run(rollout("servicegym/Travel-v0", row, base_url=server.base_url, model=server.model))
    assert a.seed == row["seed"] and b.seed == 5 and a.reward == b.reward == 1.0
    assert a.conversations[0][:2] == row["prompt"] and a.env_id == "servicegym/Delivery-v0"


def test_calls_written_as_text_are_answered_by_a_user_message():
    """An endpoint without a tool parser returns ``<tool_call>`` text: the env still runs the
    calls, and the conversation stays valid (no tool message answers a call the model never
    made natively) and append-only."""
    env = gym.make("servicegym/Delivery-v0", split="test")
    task = replayable_tasks(env, 1)[0]
    by_opening = {task.user.opening: task.golden_actions}

    def as_text(body):
        msgs = body["messages"]
        golden = by_opening[msgs[1]["content"]]
        k = sum(m["role"] == "assistant" for m in msgs)
        return text_reply(golden[k] if k < len(golden) else "###STOP###")

    recorder = Recorder(as_text)
    with LoopbackServer(handler=recorder) as server:
        result = run(rollout("servicegym/Delivery-v0", task.task_id, 0, base_url=server.base_url, model=server.model))
    assert result.reward == 1.0
    bodies = [b for b, _ in recorder.seen]
    check_append_only(bodies, [as_text(b)["choices"][0]["message"] for b in bodies])
    roles = {m["role"] for m in result.messages}
    assert "tool" not in roles
    assert any("<tool_result" in (m.get("content") or "") for m in result.messages if m["role"] == "user")


def test_odd_tool_calls_keep_the_conversation_valid_and_append_only():
    """Arguments that are not JSON, a call without a name, an unknown tool, and call ids the model
    reuses every turn (the env renames them internally): every call is answered by a tool message
    with the model's own id, and the requests stay append-only."""
    replies = [
        tool_call_reply([("delivery_product_search_recommend", '{"keywords": ["beef')]),
        tool_call_reply([("", {})]),
        tool_call_reply([("get_user_all_orders", {}), ("no_such_tool", {"a": 1})]),
        text_reply("###STOP###"),
    ]

    def handler(body):
        return replies[sum(m["role"] == "assistant" for m in body["messages"])]

    recorder = Recorder(handler)
    with LoopbackServer(handler=recorder) as server:
        result = run(rollout("servicegym/Delivery-v0", "delivery/test/0/d0", 0, base_url=server.base_url,
                             model=server.model))
    assert result.termination_reason == "agent_stop" and result.steps == 4 and result.reward == 0.0
    bodies = [b for b, _ in recorder.seen]
    check_append_only(bodies, [handler(b)["choices"][0]["message"] for b in bodies])
    check_tool_messages_answer_their_calls(result.messages)
    tools = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["call_lb_1", "call_lb_1", "call_lb_1", "call_lb_2"]
    assert "JSON object" in tools[0]["content"] and "not run" in tools[1]["content"]
    assert "unknown tool" in tools[3]["content"]


def test_32_concurrent_rollouts_match_one_at_a_time():
    env = gym.make("servicegym/Delivery-v0", split="test")
    tasks = replayable_tasks(env, 32)
    rows = [{"env_id": "servicegym/Delivery-v0", "task_id": t.task_id, "seed": episode_seed(7, t.task_id, 0)}
            for t in tasks]
    recorder = Recorder(golden_replay_handler(tasks))
    with LoopbackServer(handler=recorder, latency_s=0.01) as server:
        kw = {"base_url": server.base_url, "model": server.model}

        async def one_at_a_time():
            return [await rollout(None, row, **kw) for row in rows]

        async def all_at_once():
            return await asyncio.gather(*(rollout(None, row, **kw) for row in rows))

        sequential = run(one_at_a_time())
        first_max = server.max_in_flight
        concurrent = run(all_at_once())
        assert first_max == 1 and server.max_in_flight >= 8
    assert [r.to_json() for r in concurrent] == [r.to_json() for r in sequential]
    assert all(r.reward == 1.0 for r in sequential)
    ids = [cid for r in sequential for cid in r.completion_ids]
    assert len(set(ids)) == len(ids) == sum(r.steps for r in sequential)
    assert {cid for _, cid in recorder.seen} == set(ids)


def quick(server: LoopbackServer) -> dict:
    return {"timeout_s": 0.5, "deadline_s": 5.0, "max_retries": 1, "backoff_base_s": 0.01}


@pytest.mark.parametrize("fault", ["status", "garbage", "refused"])
def test_a_failing_endpoint_ends_the_rollout_with_a_reason(fault):
    env = gym.make("servicegym/Delivery-v0", split="test")
    task = replayable_tasks(env, 1)[0]
    golden = golden_replay_handler([task])
    bad = {"status": Fault.status(500), "garbage": Fault.garbage(), "refused": None}[fault]
    with LoopbackServer(script=[golden], handler=lambda body: bad) as server:
        url = server.base_url
        if fault == "refused":
            server.close()  # nothing listens there any more
        result = run(rollout("servicegym/Delivery-v0", task.task_id, 0, base_url=url, model=server.model,
                             llm=quick(server)))
    assert result.termination_reason == "policy_error" and result.reward == 0.0 and not result.success
    assert result.error is not None and result.error["kind"] in ("status", "malformed", "connection", "reset", "timeout")
    assert result.score == {}
    if fault == "refused":
        assert result.steps == 0 and result.completion_ids == []
    else:
        assert result.steps == 1 and len(result.completion_ids) == 1
        assert result.error["attempts"] == 2
    if fault == "status":
        assert result.error["status"] == 500
    # what was played is kept: the opening, and the first reply with the env's answer
    assert result.conversations[0][0]["role"] == "system"


def test_api_key_reaches_the_client_through_its_own_variable():
    url, model = "http://127.0.0.1:9/v1", "m"
    a = _client(None, url, model, "sk-session-a", None)
    b = _client(None, url, model, "sk-session-b", None)
    try:
        assert a is not b and a is _client(None, url, model, "sk-session-a", None)
        for client, key in ((a, "sk-session-a"), (b, "sk-session-b")):
            name = client.config.api_key_env
            assert name.startswith(API_KEY_ENV_PREFIX) and os.environ[name] == key
        with pytest.raises(ValueError, match="either"):
            _client(a, url, None, None, None)
    finally:
        for client in (a, b):
            os.environ.pop(client.config.api_key_env, None)
