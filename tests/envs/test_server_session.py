"""The server's own WebSocket session loop (``servicegym.envs.integrations.openenv.session``) and
its wire codec (``protocol``): what a client reads is what openenv's own ``/ws`` handler sends,
reply for reply; pipelined messages are all answered in order; the codec encodes what the
standard library would. Servers run in a thread of the test process on port 0."""

from __future__ import annotations

import asyncio
import json
import math

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("openenv.core.env_server.http_server",
                    reason="openenv not installed (the server extra: pip install 'servicegym[server]')")

from websockets.asyncio.client import connect as ws_connect  # noqa: E402

import servicegym  # noqa: E402, F401  registers the ids
from servicegym.envs.integrations.openenv import guard, protocol  # noqa: E402
from servicegym.envs.integrations.openenv import server as server_module  # noqa: E402
from servicegym.envs.integrations.openenv.client import as_tool_calls  # noqa: E402
from servicegym.envs.integrations.openenv.session import find_mcp_handler  # noqa: E402

DELIVERY = "servicegym/Delivery-v0"


def oracle(k: int = 0) -> tuple[str, list[str]]:
    env = gym.make(DELIVERY, split="test").unwrapped
    task_id = env.task_ids("test")[k]
    return task_id, list(env.source.get(task_id).golden_actions)


def script(task_id: str, actions: list[str]) -> list[object]:
    """One session's messages: every form of action and message the protocol has, good and bad."""
    calls = [as_tool_calls(a) for a in actions]
    steps: list[object] = []
    for k, (a, c) in enumerate(zip(actions, calls)):
        if k % 3 == 0 or len(c) > 1:
            steps.append({"type": "step", "data": {"type": "text", "text": a}} if k % 3 == 0 or len(c) == 1 else
                         {"type": "step", "data": {"type": "call_tools",
                                                   "calls": [{"name": n, "arguments": x} for n, x in c]}})
        else:
            steps.append({"type": "step", "data": {"type": "call_tool", "tool_name": c[0][0], "arguments": c[0][1]}})
    return [
        {"type": "step", "data": {"type": "text", "text": "hi"}},  # before any reset
        {"type": "reset", "data": {"seed": 5, "task_id": task_id, "episode_id": "e-1"}},
        {"type": "step", "data": {"type": "list_tools"}},
        {"type": "state"},
        *steps[:2],
        {"type": "step", "data": {"type": "dance"}},  # not an action
        {"type": "step"},  # no data
        {"type": "state", "x": 1},  # an extra key
        {"type": "launch"},  # no such message
        {"type": "reset", "data": {"colour": "red"}},
        {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
        {"type": "mcp", "data": {"method": "tools/list"}},
        "[1, 2]",
        *steps[2:],
        {"type": "step", "data": {"type": "text", "text": "after the end"}},
        {"type": "state"},
    ]


async def play(url: str, messages: list[object]) -> list[dict]:
    async with ws_connect(url.replace("http", "ws", 1) + "/ws", proxy=None, max_size=None) as ws:
        replies = []
        for m in messages:
            await ws.send(m if isinstance(m, str) else json.dumps(m))
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 30)))
        return replies


def test_every_reply_is_what_openenvs_own_handler_sends(monkeypatch):
    """The same session on the server's loop and on openenv's own ``/ws`` handler (the server
    without the loop): every reply the same JSON, observations, state, MCP and errors alike."""
    task_id, actions = oracle(1)
    messages = script(task_id, actions)
    with server_module.serve_in_thread(DELIVERY) as srv:
        assert srv.uvicorn.config.app._mcp_handler is not None  # the server's own loop serves /ws
        ours = asyncio.run(play(srv.url, messages))
    monkeypatch.setattr(guard, "find_mcp_handler", lambda endpoint: None)
    with server_module.serve_in_thread(DELIVERY) as srv:
        assert srv.uvicorn.config.app._mcp_handler is None  # openenv's own handler serves /ws
        theirs = asyncio.run(play(srv.url, messages))
    assert len(ours) == len(theirs) == len(messages)
    for m, a, b in zip(messages, ours, theirs):
        assert a == b, m
    kinds = [r["type"] for r in ours]
    assert kinds.count("error") >= 6 and "mcp" in kinds and "state" in kinds
    done = [r for r in ours if r["type"] == "observation" and r["data"]["done"]]
    assert len(done) == 1 and done[0]["data"]["reward"] == 1.0


def test_pipelined_messages_are_all_answered_in_order_and_counted():
    """A client that sends a whole episode before reading a reply gets every reply, in order (the
    server reads on while one message waits unread, and stops at two); the session's step count
    (openenv's ``SessionInfo``) counts every step."""
    task_id, actions = oracle(2)
    messages = [{"type": "reset", "data": {"seed": 1, "task_id": task_id}},
                *({"type": "step", "data": {"type": "text", "text": a}} for a in actions), {"type": "state"}]
    with server_module.serve_in_thread(DELIVERY) as srv:
        async def pipelined():
            async with ws_connect(srv.url.replace("http", "ws", 1) + "/ws", proxy=None, max_size=None) as ws:
                for m in messages:
                    await ws.send(json.dumps(m))
                replies = [json.loads(await asyncio.wait_for(ws.recv(), 30)) for _ in messages]
                infos = list(srv.server._session_info.values())
                return replies, infos

        replies, infos = asyncio.run(pipelined())
    env = gym.make(DELIVERY, user_tool=True)
    env.reset(seed=1, options={"task_id": task_id})
    expected = [env.step(a)[0] for a in actions]
    assert [r["data"]["observation"]["text"] for r in replies[1:-1]] == expected
    assert replies[-2]["data"]["done"] is True and replies[-1]["data"]["step_count"] == len(actions)
    assert len(infos) == 1 and infos[0].step_count == len(actions)


def test_the_codec_encodes_what_the_standard_library_would():
    """``protocol.dumps``: non-finite floats as null, anything JSON has no form for as its str,
    non-string keys as strings, integers over 64 bits exactly; ``loads`` refuses what is not
    JSON with a ValueError; the standard-library path gives the same values."""
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    value = {"nan": math.nan, "inf": [math.inf, -math.inf], 3: "three", None: 1, "big": 2 ** 70, "thing": Thing(),
             "tuple": (1, "é"), "nested": {"f": 0.5, "b": True}}
    want = {"nan": None, "inf": [None, None], "3": "three", "null": 1, "big": 2 ** 70, "thing": "a thing",
            "tuple": [1, "é"], "nested": {"f": 0.5, "b": True}}
    assert json.loads(protocol.dumps(value)) == want
    assert json.loads(protocol._std_dumps(value)) == want
    assert protocol.jsonable(value) == want
    assert protocol.loads('{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    for bad in ("{oops", "", "[1,", "NaN"):
        with pytest.raises(ValueError):
            protocol.loads(bad)
    frame = json.loads(protocol.error_frame("no", "INVALID_JSON", errors=[{"ctx": {"error": ValueError("x")}}]))
    assert frame == {"type": "error", "data": {"message": "no", "code": "INVALID_JSON",
                                               "errors": [{"ctx": {"error": "x"}}]}}


def _typed(value: object) -> object:
    """``value`` with each number tagged by its type (``1 == 1.0`` would hide a float read for an int)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_loads_reads_every_message_as_json_does_wide_integers_included(value):
    """``protocol.loads`` (orjson) reads what ``json.loads`` reads, types included: an integer beyond
    64 bits in a structured tool call's arguments reaches the env exact, as the same call sent as
    text does, never as the float orjson reads it as."""
    text = json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "t", "arguments": {"v": value}}})
    assert _typed(protocol.loads(text)) == _typed(json.loads(text))
    assert _typed(protocol.loads(text.encode())) == _typed(json.loads(text))
    wide = json.dumps({"id": 2 ** 64 + 1, "n": [-(2 ** 63) - 1, 10 ** 30]})
    assert protocol.loads(wide) == {"id": 2 ** 64 + 1, "n": [-(2 ** 63) - 1, 10 ** 30]}
    assert protocol.loads(str(2 ** 64 + 1)) == 2 ** 64 + 1


def test_the_screen_refuses_what_is_not_run():
    assert protocol.screen({"type": "websocket.receive", "text": '{"type": "state"}'}, 1024) is None
    refused = {
        "binary": {"bytes": b"{}"},
        "large": {"text": '{"x": "' + "é" * 600 + '"}'},
        "deep": {"text": "[" * (protocol.MAX_JSON_DEPTH + 1) + "]" * (protocol.MAX_JSON_DEPTH + 1)},
        "array": {"text": " [1]"},
    }
    codes = {k: json.loads(protocol.screen({"type": "websocket.receive", **m}, 1024))["data"]["code"]
             for k, m in refused.items()}
    assert codes == {"binary": "INVALID_JSON", "large": "PAYLOAD_TOO_LARGE", "deep": "INVALID_JSON",
                     "array": "INVALID_JSON"}


def test_without_openenvs_mcp_handler_the_server_keeps_openenvs_handler():
    def plain(websocket):  # no mcp_handler in its closure
        return websocket

    assert find_mcp_handler(plain) is None
    assert find_mcp_handler(None) is None


def test_a_closed_sessions_env_plays_the_next_sessions_episode_as_a_new_env_would():
    """A closed session's env is kept for the next session (``EnvPool``): that session, after
    another played part of a generated episode on it, gets the transcript a new env gives for its
    seed and actions, and a state with no episode before its first reset."""
    task_id, actions = oracle(3)
    with server_module.serve_in_thread(DELIVERY, max_sessions=4) as srv:
        url = srv.url.replace("http", "ws", 1) + "/ws"

        async def two_sessions():
            async with ws_connect(url, proxy=None, max_size=None) as ws:
                for m in ({"type": "reset", "data": {"seed": 9, "split": "train", "difficulty": 2}},
                          {"type": "step", "data": {"type": "text", "text": "Hello, what do you need?"}}):
                    await ws.send(json.dumps(m))
                    assert json.loads(await ws.recv())["type"] == "observation"
            for _ in range(200):  # the first session's close has been handled
                if len(srv.server.env_pool) == 1:
                    break
                await asyncio.sleep(0.02)
            kept = len(srv.server.env_pool)
            async with ws_connect(url, proxy=None, max_size=None) as ws:
                replies = []
                for m in [{"type": "state"}, {"type": "reset", "data": {"seed": 4, "task_id": task_id}},
                          *({"type": "step", "data": {"type": "text", "text": a}} for a in actions), {"type": "state"}]:
                    await ws.send(json.dumps(m))
                    replies.append(json.loads(await ws.recv()))
                taken = len(srv.server.env_pool)
            return kept, taken, replies

        kept, taken, replies = asyncio.run(two_sessions())
    assert kept == 1 and taken == 0
    assert replies[0]["data"]["messages"] == [] and replies[0]["data"]["task_id"] is None
    env = gym.make(DELIVERY, user_tool=True)
    first = env.reset(seed=4, options={"task_id": task_id})
    steps = [env.step(a) for a in actions]
    assert replies[1]["data"]["observation"]["text"] == first[0]
    assert [(r["data"]["observation"]["text"], r["data"]["reward"], r["data"]["done"]) for r in replies[2:-1]] == [
        (s[0], s[1], s[2] or s[3]) for s in steps]
    assert replies[-1]["data"]["messages"] == env.unwrapped.messages
