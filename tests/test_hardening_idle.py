"""Idle WebSocket sessions on the OpenEnv server (issue 30): a session silent for the idle limit
gets an error reply and a close frame with code 1001 and a reason naming the limit, its env is
released, and the other sessions go on; many idle sessions cost no thread each (the figure of
memory per idle session comes from ``scripts/bench_server.py --idle 5000``, not from a test)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

pytest.importorskip("openenv.core.env_server.http_server",
                    reason="the OpenEnv server is the optional extra servicegym[server]")
from websockets.asyncio.client import connect as ws_connect  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from servicegym.envs.integrations.openenv.server import (  # noqa: E402
    IDLE_CLOSE_CODE,
    idle_close_reason,
    serve_in_thread,
)

DELIVERY = "servicegym/Delivery-v0"


def wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


async def send(ws, message: dict) -> dict:
    await ws.send(json.dumps(message))
    return json.loads(await asyncio.wait_for(ws.recv(), 30))


def test_an_idle_session_is_closed_with_1001_and_its_reason_while_a_busy_one_goes_on():
    with serve_in_thread(DELIVERY, idle_timeout_s=0.6) as srv:
        url = srv.url.replace("http", "ws") + "/ws"

        async def scenario():
            silent = await ws_connect(url, proxy=None)
            busy = await ws_connect(url, proxy=None)
            assert (await send(silent, {"type": "reset", "data": {"seed": 0}}))["type"] == "observation"
            assert (await send(busy, {"type": "reset", "data": {"seed": 1}}))["type"] == "observation"
            # the busy session sends something every 0.15 s (well inside the limit) until the silent one is closed
            deadline = time.monotonic() + 30
            while silent.close_code is None and time.monotonic() < deadline:
                state = await send(busy, {"type": "state"})
                assert state["type"] == "state" and not state["data"]["done"]
                await asyncio.sleep(0.15)
            assert silent.close_code == IDLE_CLOSE_CODE
            assert silent.close_reason == idle_close_reason(0.6) == "idle timeout: no message for 0.6 s"
            with pytest.raises(ConnectionClosed):
                await silent.send(json.dumps({"type": "state"}))
            counts = srv.sessions()
            # the busy session goes on: a step of its episode still runs
            step = await send(busy, {"type": "step", "data": {"type": "text", "text": "How many people is this for?"}})
            assert step["type"] == "observation" and "observation" in step["data"]
            await busy.close()
            return counts

        counts = asyncio.run(scenario())
        assert counts["active"] == 1 and counts["closed"] >= 1
        assert wait_for(lambda: srv.sessions()["active"] == 0)


def test_the_idle_session_reads_the_error_reply_before_the_close():
    with serve_in_thread(DELIVERY, idle_timeout_s=0.3) as srv:
        async def run():
            ws = await ws_connect(srv.url.replace("http", "ws") + "/ws", proxy=None)
            assert (await send(ws, {"type": "reset", "data": {"seed": 0}}))["type"] == "observation"
            reply = json.loads(await asyncio.wait_for(ws.recv(), 20))
            with pytest.raises(ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 20)
            return reply, closed.value.rcvd

        reply, frame = asyncio.run(run())
        assert reply["type"] == "error" and reply["data"]["code"] == "IDLE_TIMEOUT"
        assert "0.3 s" in reply["data"]["message"]
        assert frame is not None and frame.code == 1001 and frame.reason == "idle timeout: no message for 0.3 s"
        assert wait_for(lambda: srv.sessions()["active"] == 0)


def test_many_idle_sessions_hold_no_thread_each_and_all_close_as_idle():
    n = 200
    with serve_in_thread(DELIVERY, idle_timeout_s=2.0, max_sessions=n) as srv:
        url = srv.url.replace("http", "ws") + "/ws"
        threads_before = threading.active_count()

        async def run():
            conns = []
            for start in range(0, n, 50):
                conns += await asyncio.gather(*(ws_connect(url, proxy=None) for _ in range(min(50, n - start))))
            await asyncio.sleep(0.3)
            open_now, threads = srv.sessions()["active"], threading.active_count()
            await asyncio.gather(*(asyncio.wait_for(ws.wait_closed(), 60) for ws in conns))
            return open_now, threads, [ws.close_code for ws in conns]

        open_now, threads, codes = asyncio.run(run())
        assert open_now == n
        assert threads - threads_before < 16, f"{threads - threads_before} more threads for {n} idle sessions"
        assert codes == [IDLE_CLOSE_CODE] * n
        assert wait_for(lambda: srv.sessions()["active"] == 0)
        assert srv.sessions()["closed"] >= n
