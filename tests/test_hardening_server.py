"""Hardening (issue 30): the OpenEnv server's edge. A message nested 100,000 deep, over the
WebSocket or POSTed to any HTTP route, is a protocol error with a clear message (nothing internal)
and the session goes on, the others untouched; every HTTP route, ``/mcp`` included, answers a
body over the configured limit with 413 (with or without a Content-Length), never 500 or a hang.
Servers bind 127.0.0.1."""

from __future__ import annotations

import asyncio
import http.client
import json
from urllib.parse import urlsplit

import pytest

pytest.importorskip("openenv.core.env_server.http_server",
                    reason="openenv not installed (the server extra: pip install 'servicegym[server]')")

from websockets.asyncio.client import connect as ws_connect  # noqa: E402

from servicegym.envs.integrations.openenv.server import (  # noqa: E402
    MAX_JSON_DEPTH,
    build_app,
    nests_deeper,
    route_name,
    serve_in_thread,
)

DELIVERY = "servicegym/Delivery-v0"
LIMIT = 64 * 1024
DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_MESSAGES = {
    "step": '{"type": "step", "data": ' + DEEP_ARRAY + "}",
    "objects": "{" + '"a": {' * 50_000 + "}" * 50_000 + "}",
    "mcp": '{"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + DEEP_ARRAY + "}}",
    "reset": '{"type": "reset", "data": {"seed": ' + DEEP_ARRAY + "}}",
}
INTERNAL = ("recursion", "Traceback", "RecursionError", "maximum")


def _http_paths() -> list[tuple[str, str]]:
    """(method, path) of every HTTP route the app serves, path parameters filled in."""
    app, _ = build_app(DELIVERY)
    out = []
    for r in app.app.routes:
        for method in sorted(getattr(r, "methods", None) or []):
            if method != "HEAD":
                out.append((method, r.path.replace("{env_name}", route_name(DELIVERY))))
    return out


HTTP_PATHS = _http_paths()


def _request(url: str, method: str, path: str, body, *, chunked: bool = False) -> tuple[int, bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        if chunked:
            conn.request(method, path, body=iter([body[i:i + 8192] for i in range(0, len(body), 8192)]),
                         headers={"Content-Type": "application/json"}, encode_chunked=True)
        else:
            conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_the_depth_check_counts_brackets_outside_strings_only():
    assert nests_deeper("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert not nests_deeper("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    assert not nests_deeper(json.dumps({"text": "[" * 10_000}))
    assert not nests_deeper(json.dumps(["\\\"[" * 500]))
    assert nests_deeper('["\\\\"' + ",[" * 300 + "]" * 300 + "]")


def test_a_deeply_nested_websocket_message_is_a_protocol_error_and_the_session_goes_on():
    with serve_in_thread(DELIVERY, max_sessions=4) as srv:
        async def run():
            url = srv.url.replace("http", "ws") + "/ws"
            ws = await ws_connect(url, proxy=None, max_size=None)
            other = await ws_connect(url, proxy=None, max_size=None)
            await other.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            other_reset = json.loads(await asyncio.wait_for(other.recv(), 30))
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            json.loads(await asyncio.wait_for(ws.recv(), 30))
            replies = {}
            for name, message in DEEP_MESSAGES.items():
                await ws.send(message)
                replies[name] = json.loads(await asyncio.wait_for(ws.recv(), 30))
            await ws.send(json.dumps({"type": "step", "data": {"type": "text", "text": "How many people?"}}))
            step = json.loads(await asyncio.wait_for(ws.recv(), 30))
            await other.send(json.dumps({"type": "state"}))
            other_state = json.loads(await asyncio.wait_for(other.recv(), 30))
            await ws.close()
            await other.close()
            return replies, step, other_reset, other_state

        replies, step, other_reset, other_state = asyncio.run(run())
        sessions = srv.sessions()
    for name, reply in replies.items():
        assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON", (name, reply)
        message = reply["data"]["message"]
        assert f"deeper than {MAX_JSON_DEPTH} levels" in message, (name, message)
        assert not any(word in message for word in INTERNAL), (name, message)
    assert step["type"] == "observation" and step["data"]["done"] is False  # the same session, its episode intact
    assert other_reset["type"] == "observation" and other_state["type"] == "state"
    assert other_state["data"]["episode_id"] is not None and other_state["data"]["done"] is False
    assert sessions["opened"] == 2


@pytest.mark.parametrize("name", ["step", "mcp"])
def test_a_deeply_nested_body_over_http_is_a_400_on_every_route(name):
    body = DEEP_MESSAGES[name].encode()
    with serve_in_thread(DELIVERY) as srv:
        results = {(m, p): _request(srv.url, "POST" if m == "GET" else m, p, body) for m, p in HTTP_PATHS}
        mcp_list = _request(srv.url, "POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode())
    for (method, path), (status, raw) in results.items():
        if method == "GET":  # a route that takes no POST: refused before any route reads it
            assert status in (400, 405), (path, status, raw[:200])
            continue
        assert status == 400, (path, status, raw[:200])
        text = raw.decode()
        assert f"deeper than {MAX_JSON_DEPTH} levels" in text and not any(w in text for w in INTERNAL)
        if path == "/mcp":
            assert json.loads(raw)["error"]["code"] == -32600
    assert mcp_list[0] == 200 and "tools" in json.loads(mcp_list[1])["result"], "the server goes on"


def test_every_http_route_refuses_a_body_over_the_limit_with_413():
    over = b"{" + b" " * (LIMIT + 10) + b"}"
    with serve_in_thread(DELIVERY, max_message_bytes=LIMIT) as srv:
        results = {}
        for method, path in HTTP_PATHS:
            results[(method, path, "length")] = _request(srv.url, method, path, over)
            results[(method, path, "chunked")] = _request(srv.url, method, path, over, chunked=True)
        health = _request(srv.url, "GET", "/health", None)
    for key, (status, raw) in results.items():
        assert status == 413, (key, status, raw[:200])
        assert f"limit of {LIMIT}" in json.loads(raw)["detail"], key
    assert health[0] == 200, "the server goes on"
