"""The OpenEnv server (``servicegym serve``; ``servicegym.envs.integrations.openenv``): episodes over
openenv's WebSocket session protocol, MCP-style tools, the limits that keep it safe, several
server processes behind a client-side pool, and openenv's harness sessions (TRL's async GRPO).

Servers run in a thread of the test process on port 0, and in two subprocesses for the
multi-process test."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("openenv.core.env_server.http_server",
                    reason="openenv not installed (the server extra: pip install 'servicegym[server]')")

from openenv.core.generic_client import GenericEnvClient  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402
from websockets.asyncio.client import connect as ws_connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

import servicegym  # noqa: E402
from servicegym.envs.environments.base import USER_TOOL  # noqa: E402
from servicegym.envs.integrations.openenv.client import (  # noqa: E402
    ServiceGymClient,
    ServiceGymSessionFactory,
    SessionPool,
    as_tool_calls,
    remote_rollouts,
)
from servicegym.envs.integrations.openenv.compat import OPENENV_VERSION, server_kwargs  # noqa: E402
from servicegym.envs.integrations.openenv.server import (  # noqa: E402
    ServiceGymAction,
    ServiceGymEnvironment,
    action_text,
    serve_in_thread,
)
from servicegym.envs.running.episodes import EpisodeWorker, Job, PolicyMaker, episode_seed  # noqa: E402
from servicegym.envs.running.policies import OraclePolicy, run_episode  # noqa: E402
from servicegym.envs.running.rollouts import comparable  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# openenv 0.10 (the package ``openenv``) serves the Task API, a WebSocket attached to an HTTP MCP
# session (/ws?session_id=) and the server's state schema; openenv-core 0.3 does not
OPENENV_010 = bool(server_kwargs(env_name="x"))
ENV_IDS = sorted(servicegym.ENV_IDS)
DELIVERY = "servicegym/Delivery-v0"


def first_task(env_id: str, k: int = 0) -> str:
    return gym.make(env_id, split="test").unwrapped.task_ids("test")[k]


def golden(env_id: str, task_id: str) -> list[str]:
    env = gym.make(env_id, split="test")
    env.reset(seed=0, options={"task_id": task_id})
    return list(env.unwrapped.task.golden_actions)


def mcp_action(action: str) -> dict:
    """A golden action as the MCP form a tool-calling client sends: one ``call_tool``, or
    ``call_tools`` for several calls in one turn (a message becomes ``respond``)."""
    calls = as_tool_calls(action)
    if len(calls) == 1:
        return {"type": "call_tool", "tool_name": calls[0][0], "arguments": calls[0][1]}
    return {"type": "call_tools", "calls": [{"name": n, "arguments": a} for n, a in calls]}


def in_process(env_id: str, task_id: str, seed: int, actions: list[str]):
    """The same episode in-process (user tool on, as on the server): per step (obs, reward,
    done) and the transcript."""
    env = gym.make(env_id, user_tool=True)
    env.reset(seed=seed, options={"task_id": task_id})
    steps = []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        steps.append((obs, r, term or trunc))
        if term or trunc:
            break
    return steps, env.unwrapped.messages


def http_json(url: str, token: str | None = None, data: bytes | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


async def raw(ws, message) -> dict:
    await ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return json.loads(await asyncio.wait_for(ws.recv(), 30))


# ----- episodes over the protocol --------------------------------------------------------------
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_oracle_episode_over_the_websocket_reaches_reward_1(env_id):
    """Every env: the golden route sent as MCP tool calls (``call_tool``, ``call_tools``; messages
    through ``respond``) over one WebSocket session ends with reward 1.0, a reward and done on
    every observation, the score components on the last; the session's transcript is the
    in-process one of the same actions."""
    task_id = first_task(env_id)
    actions = [mcp_action(a) for a in golden(env_id, task_id)]
    with serve_in_thread(env_id, max_sessions=2) as srv:
        async def episode():
            async with ServiceGymClient(srv.url) as client:
                tools = await client.list_tools()  # before reset: discovery needs no episode
                first = await client.reset(seed=3, task_id=task_id)
                results = []
                for a in actions:
                    results.append(await client.step(a))
                    if results[-1].done:
                        break
                return tools, first, results, await client.transcript(), await client.state()

        tools, first, results, transcript, state = asyncio.run(episode())
    names = [t["name"] for t in tools]
    assert USER_TOOL in names and all(t["input_schema"].get("type") == "object" for t in tools)
    assert first.observation["info"]["task_id"] == task_id and first.reward == 0.0 and first.done is False
    assert [m["role"] for m in first.observation["messages"]] == ["system", "user"]
    assert all(isinstance(r.reward, float) and isinstance(r.done, bool) for r in results)
    last = results[-1]
    assert last.done and last.reward == 1.0
    info = last.observation["info"]
    assert info["success"] is True and info["terminated"] is True
    score_keys = gym.make(env_id).unwrapped.score_keys
    assert all(isinstance(info["score"][k], float) for k in score_keys)
    assert all("score" not in r.observation["info"] for r in results[:-1])
    one = next(r for r, a in zip(results, actions) if a["type"] == "call_tool")
    assert one.observation["tool_name"] and one.observation["result"]["content"][0]["type"] == "text"
    assert state["done"] is True and state["reward"] == 1.0 and state["step_count"] == len(results)
    steps, messages = in_process(env_id, task_id, 3, [action_text(ServiceGymAction(**a)) for a in actions])
    assert [(r.observation["text"], r.reward, r.done) for r in results] == steps
    assert transcript == messages


def test_same_seed_and_actions_give_the_in_process_transcript():
    """Raw completions (every form the env reads) over a session: the observations, rewards and
    the transcript are those of the in-process env with the same seed and actions; the user tool
    reaches the simulated user."""
    task_id = first_task(DELIVERY, 4)
    route = golden(DELIVERY, task_id)
    actions = ["How many people is this for?", *route[:3],
               json.dumps({"name": USER_TOOL, "arguments": {"message": "Which address should I use?"}}),
               '<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>', "{not json", *route[3:]]
    with serve_in_thread(DELIVERY) as srv:
        async def episode():
            async with ServiceGymClient(srv.url) as client:
                await client.reset(seed=11, task_id=task_id, episode_id="ep-1")
                out = []
                for a in actions:
                    out.append(await client.act(a))
                    if out[-1].done:
                        break
                return out, await client.state()

        results, state = asyncio.run(episode())
    steps, messages = in_process(DELIVERY, task_id, 11, actions)
    assert [(r.observation["text"], r.reward, r.done) for r in results] == steps
    assert state["messages"] == messages and state["episode_id"] == "ep-1"
    respond = results[len(route[:3]) + 1].observation
    assert respond["tool_results"][0]["name"] == USER_TOOL and not respond["tool_results"][0]["is_error"]
    assert results[len(route[:3]) + 2].observation["tool_results"][0]["is_error"] is True


def test_two_concurrent_sessions_never_see_each_others_state():
    tasks = [first_task(DELIVERY, 1), first_task(DELIVERY, 2)]
    routes = [golden(DELIVERY, t) for t in tasks]
    with serve_in_thread(DELIVERY) as srv:
        async def session(k):
            async with ServiceGymClient(srv.url) as client:
                await client.reset(seed=k, task_id=tasks[k])
                out = []
                for a in routes[k]:
                    out.append(await client.act(a))
                    await asyncio.sleep(0)  # interleave the two sessions' steps
                return out, await client.state()

        async def both():
            return await asyncio.gather(session(0), session(1))

        (a, sa), (b, sb) = asyncio.run(both())
    for k, (results, state) in enumerate(((a, sa), (b, sb))):
        steps, messages = in_process(DELIVERY, tasks[k], k, routes[k])
        assert [(r.observation["text"], r.reward, r.done) for r in results] == steps
        assert state["messages"] == messages and state["task_id"] == tasks[k] and results[-1].reward == 1.0


def test_the_openenv_clients_work_as_they_are():
    """openenv's own ``GenericEnvClient`` and ``MCPToolClient`` (no servicegym code on the client),
    MCP JSON-RPC in the session, and openenv's runtime validator."""
    from openenv.cli._validation import validate_running_environment

    task_id = first_task(DELIVERY)
    with serve_in_thread(DELIVERY) as srv:
        async def clients():
            async with GenericEnvClient(base_url=srv.url) as env:
                r = await env.reset(seed=2, split="train", difficulty=1)  # a generated task, as in-process
                local = gym.make(DELIVERY, user_tool=True).reset(seed=2, options={"split": "train", "difficulty": 1})
                assert r.observation["info"]["task_id"] == local[1]["task_id"] and local[1]["task_id"].endswith("/d1")
                assert r.observation["text"] == local[0]
                r = await env.reset(seed=0, task_id=task_id)
                assert r.observation["info"]["task_id"] == task_id
                r = await env.step({"type": "text", "text": "How many people is this for?"})
                assert "<user>" in r.observation["text"] and r.reward == 0.0 and r.done is False
            async with MCPToolClient(base_url=srv.url) as mcp:
                tools = await mcp.list_tools()
                assert USER_TOOL in [t.name for t in tools]
                await mcp.reset(seed=0, task_id=task_id)
                reply = await mcp.call_tool(USER_TOOL, message="How many people is this for?")
                assert isinstance(reply, str) and reply
            async with ServiceGymClient(srv.url) as client:
                await client.reset(seed=0, task_id=task_id)
                ws = client._ws
                listed = await raw(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}})
                called = await raw(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                                "params": {"name": USER_TOOL,
                                                                           "arguments": {"message": "Hello"}}}})
                bad = await raw(ws, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 3, "method": "nope"}})
                return listed, called, bad

        listed, called, bad = asyncio.run(clients())
        report = validate_running_environment(srv.url)
    assert USER_TOOL in [t["name"] for t in listed["data"]["result"]["tools"]]
    result = called["data"]["result"]
    assert result["is_error"] is False and result["data"] and result["reward"] == 0.0 and result["done"] is False
    assert bad["data"]["error"]["code"] == -32601
    assert report["passed"], report["criteria"]


def test_tasks_are_listed_by_split_and_index_and_reset_plays_one():
    """openenv 0.10's Task API (``TaskProvider``): the env lists its splits and tasks, and
    ``reset(split=, index=)`` plays the task at that index. Over HTTP (``/{env_name}/...``, behind
    the token) where the openenv release serves those routes; ``/schema`` has the server's state."""
    env = ServiceGymEnvironment(DELIVERY)
    ids = gym.make(DELIVERY).unwrapped.task_ids("test")
    assert [s["name"] for s in env.list_splits()] == ["train", "dev", "test"]
    assert env.num_tasks("test") == len(ids) and env.get_task("test", 3)["task_id"] == ids[3]
    assert [t["task_id"] for t in env.get_task_range("test", 2, 5)] == ids[2:5] == [
        t["task_id"] for t in env.list_tasks("test")[2:5]]
    with pytest.raises(IndexError):
        env.get_task("test", len(ids))
    with pytest.raises(ValueError, match="unknown split"):
        env.num_tasks("validation")
    env.close()
    secret = "task-api-token"
    with serve_in_thread(DELIVERY, token=secret) as srv:
        async def play():
            async with ServiceGymClient(srv.url, token=secret) as client:
                first = await client.reset(seed=0, split="test", index=3)
                errors = []
                for bad in ({"split": "test", "index": len(ids)}, {"index": 1, "task_id": ids[0]}, {"index": "1"}):
                    with pytest.raises(RuntimeError) as err:
                        await client.reset(**bad)
                    errors.append(str(err.value))
                return first.observation["info"]["task_id"], errors

        task_id, errors = asyncio.run(play())
        assert task_id == ids[3]
        assert "out of range" in errors[0] and "without task_id" in errors[1] and "integer" in errors[2]
        post = lambda path, body, token=secret: http_json(srv.url + path, token, json.dumps(body).encode())  # noqa: E731
        if OPENENV_010:
            assert http_json(srv.url + "/list_environments", secret) == (200, ["Delivery-v0"])
            status, splits = http_json(srv.url + "/Delivery-v0/splits", secret)
            assert status == 200 and {"name": "dev", "type": "validation"} in splits
            assert post("/Delivery-v0/num_tasks", {"split": "test"}) == (200, {"num_tasks": len(ids)})
            status, task = post("/Delivery-v0/task", {"split": "test", "index": 3})
            assert status == 200 and task["task"]["task_id"] == ids[3]
            status, some = post("/Delivery-v0/task_range", {"split": "dev", "start": 0, "stop": 2})
            assert [t["index"] for t in some["tasks"]] == [0, 1]
            assert post("/Delivery-v0/task", {"split": "test", "index": len(ids)})[0] == 400
            status, body = post("/Delivery-v0/num_tasks", {"split": "validation"})
            assert status == 400 and "unknown split" in body["detail"]
            assert post("/Delivery-v0/num_tasks", {"split": "test"}, token=None)[0] == 401
            status, schema = http_json(srv.url + "/schema", secret)
            assert "messages" in schema["state"]["properties"] and "total_reward" in schema["state"]["properties"]
        else:
            assert http_json(srv.url + "/list_environments", secret)[0] == 404


@pytest.mark.skipif(not OPENENV_010, reason=f"openenv {OPENENV_VERSION} has no /ws?session_id= (openenv 0.10 has)")
def test_a_websocket_attached_to_an_http_mcp_session_shares_its_env():
    """openenv 0.10's ``MCPToolClient`` (production mode, its default) makes an HTTP MCP session,
    attaches its WebSocket to it (``/ws?session_id=``), resets over the WebSocket and calls tools
    over ``POST /mcp``: one session, one env, not reaped while attached, closed with the client."""
    task_id = first_task(DELIVERY)
    with serve_in_thread(DELIVERY, idle_timeout_s=1.0) as srv:
        async def attached():
            async with MCPToolClient(base_url=srv.url) as mcp:
                assert mcp.use_production_mode
                await mcp.reset(seed=0, task_id=task_id)
                ws = mcp._ws
                reply = await mcp.call_tool(USER_TOOL, message="How many people is this for?")
                counts = srv.sessions()
                for _ in range(6):  # 1.8 s of tool calls over HTTP, none over the WebSocket: not idle
                    await asyncio.sleep(0.3)
                    await mcp.call_tool(USER_TOOL, message="Thanks, one moment please.")
                state = await mcp.state()
                assert mcp._ws is ws  # the same WebSocket: the server did not close it as idle
                return reply, counts, state, srv.sessions()

        reply, counts, state, later = asyncio.run(attached())
        assert isinstance(reply, str) and reply
        assert counts["active"] == 1 and counts["opened"] == 1
        assert state.step_count == 7 and later["active"] == 1 and later["opened"] == 1 and later["closed"] == 0
        assert wait_for(lambda: srv.sessions()["active"] == 0)


# ----- limits ------------------------------------------------------------------------------------
def test_a_disconnect_mid_episode_frees_the_session():
    task_id = first_task(DELIVERY)
    with serve_in_thread(DELIVERY) as srv:
        async def drop():
            ws = await ws_connect(srv.url.replace("http", "ws") + "/ws", proxy=None)
            assert (await raw(ws, {"type": "reset", "data": {"seed": 0, "task_id": task_id}}))["type"] == "observation"
            assert srv.sessions()["active"] == 1
            await raw(ws, {"type": "step", "data": {"type": "text", "text": "How many people?"}})
            ws.transport.abort()  # the peer vanishes: no close frame

        asyncio.run(drop())
        assert wait_for(lambda: srv.sessions()["active"] == 0)
        counts = srv.sessions()
        assert counts["opened"] == 1 and counts["closed"] == 1 and not srv.server._sessions
        assert http_json(srv.url + "/sessions")[1]["active"] == 0


def test_bad_messages_and_oversize_payloads_get_errors_and_the_session_lives_on():
    task_id = first_task(DELIVERY)
    with serve_in_thread(DELIVERY, max_message_bytes=64 * 1024) as srv:
        async def abuse():
            ws = await ws_connect(srv.url.replace("http", "ws") + "/ws", proxy=None, max_size=None)
            replies = {
                "not json": await raw(ws, "not json"),
                "array": await raw(ws, "[1, 2]"),
                "bad json": await raw(ws, "{oops"),
                "binary": await raw(ws, b'{"type": "state"}'),
                "type": await raw(ws, {"type": "launch"}),
                "no data": await raw(ws, {"type": "step"}),
                "extra": await raw(ws, {"type": "state", "x": 1}),
                "action": await raw(ws, {"type": "step", "data": {"type": "call_tool"}}),
                "action type": await raw(ws, {"type": "step", "data": {"type": "dance"}}),
                "before reset": await raw(ws, {"type": "step", "data": {"type": "text", "text": "hi"}}),
                "reset option": await raw(ws, {"type": "reset", "data": {"colour": "red"}}),
                "seed": await raw(ws, {"type": "reset", "data": {"seed": -1}}),
                "task": await raw(ws, {"type": "reset", "data": {"task_id": "delivery/test/nope"}}),
                "oversize": await raw(ws, json.dumps({"type": "step", "data": {"type": "text", "text": "x" * 100_000}})),
                "mcp": await raw(ws, {"type": "mcp", "data": {"method": "tools/list"}}),
            }
            ok = await raw(ws, {"type": "reset", "data": {"seed": 0, "task_id": task_id}})
            step = await raw(ws, {"type": "step", "data": {"type": "text", "text": "How many people?"}})
            await ws.send("y" * 200_000)  # over twice the limit: the connection is closed (1009)
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return replies, ok, step, ws.close_code

        replies, ok, step, code = asyncio.run(abuse())
        assert wait_for(lambda: srv.sessions()["active"] == 0)
        status, body = http_json(srv.url + "/mcp", data=b"{" + b" " * 70_000 + b"}")
    codes = {k: (v["type"], v["data"].get("code")) for k, v in replies.items()}
    assert codes["not json"] == codes["array"] == codes["binary"] == ("error", "INVALID_JSON")
    assert codes["bad json"] == ("error", "INVALID_JSON")
    assert codes["type"] == ("error", "UNKNOWN_TYPE")
    assert codes["no data"] == codes["extra"] == codes["action"] == codes["action type"] == ("error", "VALIDATION_ERROR")
    assert "call_tool" in json.dumps(replies["action"]["data"]["errors"])
    assert codes["before reset"] == ("error", "EXECUTION_ERROR") and "reset first" in replies["before reset"]["data"]["message"]
    assert "unknown reset option" in replies["reset option"]["data"]["message"]
    assert "seed" in replies["seed"]["data"]["message"] and "delivery/test/nope" in replies["task"]["data"]["message"]
    assert codes["oversize"] == ("error", "PAYLOAD_TOO_LARGE")
    assert replies["mcp"]["type"] == "mcp" and replies["mcp"]["data"]["error"]["code"] == -32600
    assert ok["type"] == "observation" and step["type"] == "observation" and step["data"]["done"] is False
    assert code == 1009
    assert status == 413 and "limit" in body["detail"]


def test_a_full_server_says_so():
    with serve_in_thread(DELIVERY, max_sessions=1) as srv:
        async def two():
            async with ServiceGymClient(srv.url) as first:
                await first.reset(seed=0)
                second = ServiceGymClient(srv.url)
                with pytest.raises(RuntimeError, match="server full: 1 of 1 sessions.*CAPACITY_REACHED"):
                    await second.reset(seed=0)
                await second.close()
            async with ServiceGymClient(srv.url) as third:  # the slot is free again
                return (await third.reset(seed=0)).done

        assert asyncio.run(two()) is False


def test_a_server_with_a_token_refuses_a_client_without_it(monkeypatch):
    secret = "s3cret-token-for-the-test"
    with serve_in_thread(DELIVERY, token=secret) as srv:
        async def attempt(**kwargs):
            async with ServiceGymClient(srv.url, **kwargs) as client:
                return (await client.reset(seed=0)).observation["info"]["task_id"]

        monkeypatch.delenv("SERVICEGYM_SERVER_TOKEN", raising=False)
        for kwargs in ({}, {"token": "wrong"}):
            with pytest.raises(ConnectionError, match="401") as err:
                asyncio.run(attempt(**kwargs))
            assert secret not in str(err.value)
        with pytest.raises(ConnectionError):
            asyncio.run(GenericEnvClient(base_url=srv.url).connect())
        monkeypatch.setenv("MY_TOKEN", secret)
        assert asyncio.run(attempt(token_env="MY_TOKEN"))
        assert asyncio.run(attempt(token=secret))
        assert http_json(srv.url + "/sessions")[0] == 401
        assert http_json(srv.url + "/metadata", token="wrong")[0] == 401
        assert http_json(srv.url + "/sessions", token=secret)[0] == 200
        assert http_json(srv.url + "/health")[0] == 200  # the probe stays open


def test_an_idle_session_is_closed_and_its_env_released():
    with serve_in_thread(DELIVERY, idle_timeout_s=0.5) as srv:
        async def idle():
            ws = await ws_connect(srv.url.replace("http", "ws") + "/ws", proxy=None)
            await raw(ws, {"type": "reset", "data": {"seed": 0}})
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return reply

        reply = asyncio.run(idle())
        assert reply["data"]["code"] == "IDLE_TIMEOUT"
        assert wait_for(lambda: srv.sessions()["active"] == 0)
        # an HTTP MCP session (openenv's session/create) is reaped as well
        status, made = http_json(srv.url + "/mcp", data=json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}).encode())
        assert status == 200 and made["result"]["session_id"] and srv.sessions()["active"] == 1
        assert wait_for(lambda: srv.sessions()["active"] == 0)


# ----- beyond one process ------------------------------------------------------------------------
def start_server(env_id: str, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "servicegym.envs.cli.main", "serve", "--env", env_id, "--port", "0",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    return proc, proc.stdout


def test_two_server_processes_give_the_in_process_records_and_stop_cleanly():
    """Sessions spread over two ``servicegym serve`` processes by the client's pool: the records
    are the in-process collector's for the same seeds; SIGTERM closes a session left open and
    the process exits 0."""
    procs = [start_server(DELIVERY, "--max-sessions", "4")[0] for _ in range(2)]
    try:
        urls = []
        for proc in procs:
            line = proc.stdout.readline()
            assert "servicegym serve: servicegym/Delivery-v0 on http://127.0.0.1:" in line, line
            urls.append(line.split(" on ")[1].split(" ")[0])
        tasks = gym.make(DELIVERY).unwrapped.task_ids("test")[:6]
        records = remote_rollouts(urls, DELIVERY, "oracle", task_ids=tasks, seed=7, concurrency=4)
        worker = EpisodeWorker(DELIVERY, {"user_tool": True}, PolicyMaker.from_policy("oracle"))
        local = [json.loads(worker.run(Job(t, 0, episode_seed(7, t, 0))).line) for t in tasks]
        assert [comparable(r) for r in records] == [comparable(r) for r in local]
        assert all(r["success"] and r["return"] == 1.0 for r in records)
        opened = [http_json(u + "/sessions")[1]["opened"] for u in urls]
        assert opened == [2, 2]  # four sessions, in turn over the two servers

        # a RemoteEnv is a Gymnasium env: run_episode drives it as the in-process env
        remote = SessionPool(urls).remote_env(DELIVERY)
        rec = run_episode(remote, OraclePolicy(), seed=5, options={"task_id": tasks[0]})
        assert rec == run_episode(gym.make(DELIVERY, user_tool=True), OraclePolicy(), seed=5,
                                  options={"task_id": tasks[0]})
        remote.reset(seed=1)  # left open: the shutdown closes it
        assert http_json(urls[0] + "/sessions")[1]["active"] + http_json(urls[1] + "/sessions")[1]["active"] == 1
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        outs = [proc.communicate(timeout=60)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    assert sum("1 open at shutdown (closed" in o for o in outs) == 1, outs
    assert all("Traceback" not in o for o in outs), outs


def test_the_serve_command_refuses_bad_options(capsys, monkeypatch):
    from servicegym.envs.cli.main import main

    monkeypatch.delenv("NO_SUCH_TOKEN_VAR", raising=False)
    cases = {
        ("--env", "servicegym/Nope-v0"): "unknown env",
        ("--env", DELIVERY, "--port", "70000"): "--port must be 0-65535",
        ("--env", DELIVERY, "--max-sessions", "0"): "--max-sessions must be at least 1",
        ("--env", DELIVERY, "--idle-timeout", "0"): "--idle-timeout must be a positive",
        ("--env", DELIVERY, "--token-env", "NO_SUCH_TOKEN_VAR"): "not set or is empty",
        ("--env", DELIVERY, "--token-env", "hunter2 hunter2"): "the NAME of the environment variable",
        ("--env", DELIVERY, "--tasks", "/no/such/file.json"): "task file not found",
    }
    for argv, message in cases.items():
        assert main(["serve", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("servicegym: error: ") and message in err and err.count("\n") == 1, err
        assert "hunter2" not in err
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openenv" else real(name, *a))
    assert main(["serve", "--env", DELIVERY]) == 2
    assert "pip install 'servicegym[server]'" in capsys.readouterr().err


# ----- openenv's harness (TRL's async GRPO sessions) --------------------------------------------
def test_harness_sessions_play_an_episode_and_forward_its_reward():
    """``ServiceGymSessionFactory`` under openenv's ``MCPHarnessAdapter`` and
    ``build_harness_rollout_func`` (the rollout function TRL's trainers take): a scripted model
    that calls the golden route's tools gets the env's reward 1.0 and its score."""
    from openenv.core.harness import HarnessRunLimits, MCPHarnessAdapter, ModelStepResult, build_harness_rollout_func
    from openenv.core.llm_client import LLMResponse, ToolCall

    task_id = first_task(DELIVERY, 3)
    route = golden(DELIVERY, task_id)

    def model_step_builder(trainer, session):
        turns = iter(route)

        def model_step(messages, tools, sampling):
            assert {t.name for t in tools} >= {USER_TOOL}
            calls = [ToolCall(id=f"c{len(messages)}_{i}", name=n, args=a) for i, (n, a) in enumerate(as_tool_calls(next(turns)))]
            return ModelStepResult(response=LLMResponse(content="", tool_calls=calls))

        return model_step

    with serve_in_thread(DELIVERY) as srv:
        factory = ServiceGymSessionFactory([srv.url])
        rollout = build_harness_rollout_func(session_factory=factory, harness_adapter=MCPHarnessAdapter(),
                                             model_step_builder=model_step_builder,
                                             limits=HarnessRunLimits(max_turns=len(route) + 1))
        out = rollout([{"task_id": task_id, "seed": 4}], trainer=None)
        session = factory.create(task_id, seed=4)
        assert session.initial_messages()[0]["role"] == "system"
        session.close()
        assert wait_for(lambda: srv.sessions()["active"] == 0)
    assert out["env_reward"] == [1.0]
    assert out["verify_metrics"][0]["rubric_fraction"] == 1.0

