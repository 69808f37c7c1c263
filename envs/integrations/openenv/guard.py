"""The OpenEnv server's ASGI front (``_Guard``, in front of openenv's app): the bearer token,
the message size and nesting limits over HTTP and WebSocket, the idle limit of a WebSocket session
openenv's own handler serves, and the choice of handler for a WebSocket (the server's own session
loop, ``session.run_session``, for ``/ws``; openenv's for the rest). See ``server``'s docstring
for what a client sees."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hmac
import json
import time
from typing import Any
from urllib.parse import parse_qs

from servicegym.envs.integrations.openenv.protocol import (
    error_frame,
    idle_close_reason,
    nests_deeper,
    screen,
    too_deep_text,
)
from servicegym.envs.integrations.openenv.session import IDLE_CLOSE_CODE, find_mcp_handler, run_session

__all__ = ["IN_WEBSOCKET", "OPEN_PATHS"]

OPEN_PATHS = frozenset({"/health"})  # the routes that need no token (a load balancer's probe)
_TIMEOUT = getattr(asyncio, "timeout", None)  # Python 3.11+: a timer, no task

# set while a WebSocket connection is being served: the sessions it opens are closed by the
# connection's end (or its idle limit); the others (HTTP MCP sessions) by the idle reaper
IN_WEBSOCKET: contextvars.ContextVar[bool] = contextvars.ContextVar("servicegym_in_websocket", default=False)
_IN_WEBSOCKET = IN_WEBSOCKET



def _ws_endpoint(app: Any) -> Any:
    """openenv's ``/ws`` handler (``websocket_endpoint(websocket)``), which ``_Guard`` calls itself:
    FastAPI's routing and middleware around a WebSocket route (three exit stacks and two exception
    wrappers held for the connection's life, for a handler that uses none of them) cost an idle
    session about 9 KiB of its 38. None (go through the app) when the route is not that plain."""
    import inspect

    for route in getattr(app, "routes", ()):
        if getattr(route, "path", None) != "/ws" or "WebSocket" not in type(route).__name__:
            continue
        endpoint = getattr(route, "endpoint", None)
        if getattr(route, "dependencies", None) or not inspect.iscoroutinefunction(endpoint):
            return None
        if list(inspect.signature(endpoint).parameters) != ["websocket"]:
            return None
        return endpoint
    return None


class _Guard:
    """ASGI middleware in front of openenv's app: the bearer token, the message size limit, the
    session idle limit, and error replies for frames openenv's handler cannot read. ``server``:
    the ``ServiceGymServer`` whose sessions ``/ws`` opens (None: every WebSocket goes to openenv's
    handler)."""

    def __init__(self, app: Any, *, token: str | None, max_message_bytes: int, idle_timeout_s: float | None,
                 server: Any = None) -> None:
        self.app = app
        self._expected = token.encode() if token else None
        self.max_bytes = max_message_bytes
        self.idle_s = idle_timeout_s
        self.server = server
        self._ws_endpoint = _ws_endpoint(app)
        # openenv's /ws protocol served by ``session.run_session`` (straight on the ASGI connection);
        # openenv's own handler where its JSON-RPC handler cannot be found, or without a server
        self._mcp_handler = find_mcp_handler(self._ws_endpoint) if server is not None else None

    def _idle_left(self, scope: dict[str, Any]) -> float:
        """For a WebSocket attached to an HTTP MCP session (``/ws?session_id=``, openenv 0.10's
        ``MCPToolClient``: its tool calls go over ``POST /mcp``), the seconds until that session
        is idle too; 0 for any other WebSocket."""
        if self.server is None or not self.idle_s:
            return 0.0
        session_id = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [""])[0]
        last = getattr(self.server._sessions.get(session_id), "last_active", None) if session_id else None
        return 0.0 if last is None else self.idle_s - (time.monotonic() - last)

    def _authorized(self, scope: dict[str, Any]) -> bool:
        if self._expected is None or scope.get("path") in OPEN_PATHS:
            return True
        for name, value in scope.get("headers") or ():
            if name == b"authorization":
                scheme, _, given = value.strip().partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._expected)
        return False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            await self._refuse(kind, scope, receive, send)
            return
        if kind == "http":
            await self._http(scope, receive, send)
        else:
            await self._websocket(scope, receive, send)

    async def _refuse(self, kind: str, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = json.dumps({"detail": "missing or wrong bearer token (Authorization: Bearer <token>)"}).encode()
        headers = [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]
        if kind == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        first = await receive()
        if first.get("type") != "websocket.connect":
            return
        if "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        for name, value in scope.get("headers") or ():
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._too_large(send, int(value))
                return
        # the body is read whole here, whatever the route (one that never reads its body too),
        # bounded by the limit, and checked once before any route parses it
        chunks: list[bytes] = []
        seen = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away before its body was complete
            chunk = msg.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await self._too_large(send, seen)
                return
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        if nests_deeper(body.decode("latin-1")):  # byte for byte: UTF-8 never hides an ASCII bracket
            await self._too_deep(scope, send)
            return
        replayed = False

        async def replay_receive() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay_receive, send)

    async def _too_deep(self, scope: dict[str, Any], send: Any) -> None:
        if scope.get("path") == "/mcp":  # JSON-RPC's own error (an invalid request), as MCP clients read it
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": too_deep_text()}}
        else:
            reply = {"detail": too_deep_text()}
        await send({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(reply).encode()})

    async def _too_large(self, send: Any, size: int) -> None:
        body = json.dumps({"detail": f"request body of {size} bytes is over the server's limit of {self.max_bytes}"})
        await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body.encode()})

    async def _websocket(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        via_session = b"session_id=" in (scope.get("query_string") or b"")  # attached to an HTTP MCP session
        if self._mcp_handler is not None and not via_session and scope.get("path") == "/ws":
            marker = _IN_WEBSOCKET.set(True)
            try:
                await run_session(self.server, receive, send, max_bytes=self.max_bytes, idle_s=self.idle_s,
                                  mcp_handler=self._mcp_handler)
            finally:
                _IN_WEBSOCKET.reset(marker)
            return
        await self._openenv_websocket(scope, receive, send, via_session)

    async def _openenv_websocket(self, scope: dict[str, Any], receive: Any, send: Any, via_session: bool) -> None:
        """A WebSocket served by openenv's own handler (``/ws?session_id=``, the harness and MCP
        WebSocket routes), with the Guard's checks on each frame and the idle limit."""
        accepted = closed = idle = False
        pending: asyncio.Future[dict[str, Any]] | None = None  # a receive that outlived an idle check

        async def guarded_send(msg: dict[str, Any]) -> None:
            nonlocal accepted, closed
            if msg["type"] == "websocket.accept":
                accepted = True
            elif idle:  # closed as idle already (code 1001 and its reason): nothing more goes out
                return
            elif msg["type"] == "websocket.close":
                # openenv's handler closes the socket on its way out even when the peer is gone
                # (a disconnect, a shutdown): nothing is left to tell, so that close is dropped
                closed = True
                with contextlib.suppress(Exception):
                    await send(msg)
                return
            await send(msg)

        async def idle_receive() -> dict[str, Any] | None:
            """The next message, or None once the session has been idle for ``idle_s``."""
            nonlocal pending
            if not via_session:
                # one timer per waiting session (asyncio.timeout), not a task: thousands of idle
                # sessions cost a timer handle each; a receive cancelled by it loses no message
                try:
                    if _TIMEOUT is not None:
                        async with _TIMEOUT(self.idle_s):
                            return await receive()
                    return await asyncio.wait_for(receive(), self.idle_s)  # Python 3.10
                except asyncio.TimeoutError:
                    return None
            if pending is None:
                pending = asyncio.ensure_future(receive())
            wait = self.idle_s
            while True:
                try:
                    msg = await asyncio.wait_for(asyncio.shield(pending), wait)
                except asyncio.TimeoutError:
                    wait = self._idle_left(scope)  # an attached session busy over HTTP is not idle
                    if wait > 0:
                        continue
                    pending.cancel()
                    pending = None
                    return None
                pending = None
                return msg

        async def guarded_receive() -> dict[str, Any]:
            nonlocal idle
            while True:
                if accepted and self.idle_s:
                    msg = await idle_receive()
                    if msg is None:  # an error reply, then the close (1001, with the reason), then the session ends
                        with contextlib.suppress(Exception):
                            await send({"type": "websocket.send", "text": error_frame(
                                f"session idle for {self.idle_s:g} s: closed, its env released", "IDLE_TIMEOUT")})
                        with contextlib.suppress(Exception):
                            await send({"type": "websocket.close", "code": IDLE_CLOSE_CODE,
                                        "reason": idle_close_reason(self.idle_s)})
                        idle = True
                        return {"type": "websocket.disconnect", "code": IDLE_CLOSE_CODE}
                else:
                    msg = await receive()
                if msg["type"] != "websocket.receive":
                    return msg
                refused = screen(msg, self.max_bytes)
                if refused is not None:
                    await send({"type": "websocket.send", "text": refused})
                    continue
                return msg

        marker = _IN_WEBSOCKET.set(True)
        try:
            if self._ws_endpoint is not None and scope.get("path") == "/ws":
                from starlette.websockets import WebSocket

                await self._ws_endpoint(WebSocket(scope, guarded_receive, guarded_send))
            else:
                await self.app(scope, guarded_receive, guarded_send)
        finally:
            _IN_WEBSOCKET.reset(marker)
            if pending is not None:
                pending.cancel()
