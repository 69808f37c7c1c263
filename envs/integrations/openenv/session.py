"""One WebSocket session of the OpenEnv server (``/ws``), run straight on the ASGI connection.

openenv's own ``/ws`` handler (``HTTPEnvServer.register_routes``' ``websocket_endpoint``) speaks
the protocol through Starlette's ``WebSocket`` and validates every message and reply with
pydantic models (the incoming message, the action, the observation, the reply), and steps a
synchronous env in a thread. ``run_session`` speaks the same protocol, message for message and
reply for reply (``reset``, ``step``, ``state``, ``close``, ``mcp``; the same error codes), at
a fraction of the cost per message:

- one JSON decode and one encode per message (``protocol``: orjson where installed); the
  observation goes out as the dict openenv's ``serialize_observation`` would make of it, built
  by the env (``ServiceGymEnvironment.reset_payload`` / ``step_payload``), no model in between;
- a message of the plain form ``{"type": ..., "data": {...}}`` is taken as it is (any other
  goes through openenv's own ``WSStepMessage`` / ``WSResetMessage``, so what is refused and the
  error it gets stay openenv's); the action is openenv's ``deserialize_action`` (one pydantic
  validation, a few microseconds);
- the env's ``reset_async`` / ``step_async`` are awaited on the event loop (a servicegym step
  is well under a millisecond, and an LLM user's reply is awaited, not waited on in a thread);
- the idle limit is one timer per session, moved lazily (a message costs a clock read, not a
  timer), and the frames' checks (``protocol.screen``: size, depth, a JSON object) run first;
- uvicorn reads a connection on while one message waits unread (``ws_protocol``).

``mcp`` messages are answered by openenv's own JSON-RPC handler (``mcp_handler``, taken from its
``/ws`` route: ``find_mcp_handler``); where it cannot be found, the server keeps openenv's handler
for every session (``_Guard``).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any

from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.serialization import deserialize_action
from openenv.core.env_server.types import WSResetMessage, WSStepMessage
from pydantic import ValidationError

from servicegym.envs.integrations.openenv.protocol import dumps, error_frame, idle_close_reason, loads, screen

__all__ = ["IDLE_CLOSE_CODE", "find_mcp_handler", "run_session", "ws_protocol"]

# a WebSocket session silent for the idle limit is closed with 1001 ("going away": RFC 6455 7.4.1)
# and a reason naming the limit, after an error reply (code IDLE_TIMEOUT)
IDLE_CLOSE_CODE = 1001
_MESSAGE_KEYS = frozenset({"type", "data"})


def find_mcp_handler(ws_endpoint: Any) -> Callable[..., Awaitable[Any]] | None:
    """openenv's JSON-RPC handler (``mcp_handler(request, session_env=, session_id=)``) that its
    ``/ws`` handler answers ``mcp`` messages with; None where that handler has none."""
    names = getattr(getattr(ws_endpoint, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, getattr(ws_endpoint, "__closure__", None) or ()):
        if name == "mcp_handler":
            try:
                handler = cell.cell_contents
            except ValueError:
                return None
            if inspect.iscoroutinefunction(handler) and {"session_env", "session_id"} <= set(
                    inspect.signature(handler).parameters):
                return handler
    return None


def ws_protocol() -> Any:
    """The WebSocket protocol class uvicorn serves with (``uvicorn.Config(ws=...)``): uvicorn's
    own ``websockets-sansio`` protocol, except that it stops reading a connection when two
    messages wait unread rather than one. uvicorn's stops after every message and starts again
    when the app reads it: two ``epoll_ctl`` calls per message of a request-reply client, about
    6 us of the ~45 us uvicorn spends on one. The bound on unread data per connection stays
    (two messages, each at most uvicorn's ``ws_max_size``). ``"auto"`` where that protocol is
    not there or not as expected."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # uvicorn without the sansio protocol, or websockets missing
        return "auto"
    if not all(hasattr(WebSocketsSansIOProtocol, name) for name in ("send_receive_event_to_app", "receive")):
        return "auto"

    class Protocol(WebSocketsSansIOProtocol):
        def send_receive_event_to_app(self) -> None:
            paused = self.read_paused
            self.read_paused = True  # uvicorn's pause is skipped: it pauses only when not paused
            try:
                super().send_receive_event_to_app()
            finally:
                self.read_paused = paused
            if not paused and self.queue.qsize() >= _UNREAD_MESSAGES:
                self.read_paused = True
                self.transport.pause_reading()

    return Protocol


_UNREAD_MESSAGES = 2


class _Idle:
    """The idle limit of one session: one timer, moved lazily. ``waiting()`` before each receive
    restarts the clock (a float stored); the timer, when it fires, either finds the session busy
    or heard from since (and sets itself again for the rest) or cancels the receive."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.since = self.loop.time()
        self.busy = False
        self.fired = False
        self.handle = self.loop.call_at(self.since + limit_s, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        due = (now if self.busy else self.since) + self.limit_s
        if due > now:
            self.handle = self.loop.call_at(due, self._check)
            return
        self.fired = True
        if self.task is not None:
            self.task.cancel()

    def cancel(self) -> None:
        self.handle.cancel()


async def run_session(server: Any, receive: Any, send: Any, *, max_bytes: int, idle_s: float | None,
                      mcp_handler: Callable[..., Awaitable[Any]]) -> None:
    """Serve one ``/ws`` connection (its ``websocket.connect`` not yet received) as openenv's
    handler does: accept, open a session (``server._create_session``), answer messages until
    ``close``, a disconnect or the idle limit, then close the session."""
    first = await receive()
    if first.get("type") != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    gone = False  # the client went away: nothing more is sent
    session_id = None
    try:
        try:
            session_id, env = await server._create_session()
        except SessionCapacityError as err:
            await send({"type": "websocket.send", "text": error_frame(
                str(err), "CAPACITY_REACHED", active_sessions=err.active_sessions, max_sessions=err.max_sessions)})
            return
        except EnvironmentFactoryError as err:
            await send({"type": "websocket.send", "text": error_frame(
                str(err), "FACTORY_ERROR", factory_name=err.factory_name)})
            return
        idle = _Idle(idle_s) if idle_s else None
        try:
            while True:
                if idle is not None:
                    idle.since, idle.busy = idle.loop.time(), False
                    try:
                        msg = await receive()
                    except asyncio.CancelledError:
                        uncancel = getattr(idle.task, "uncancel", None)
                        if not idle.fired or (uncancel is not None and uncancel() > 0):
                            raise  # not (only) the idle limit: a shutdown
                        await send({"type": "websocket.send", "text": error_frame(
                            f"session idle for {idle_s:g} s: closed, its env released", "IDLE_TIMEOUT")})
                        await send({"type": "websocket.close", "code": IDLE_CLOSE_CODE,
                                    "reason": idle_close_reason(idle_s)})
                        gone = True
                        return
                    idle.busy = True
                else:
                    msg = await receive()
                kind = msg["type"]
                if kind == "websocket.disconnect":
                    gone = True
                    return
                if kind != "websocket.receive":
                    continue
                refused = screen(msg, max_bytes)
                if refused is not None:
                    await send({"type": "websocket.send", "text": refused})
                    continue
                reply = await _answer(server, session_id, env, msg["text"], mcp_handler)
                if reply is None:  # close
                    return
                await send({"type": "websocket.send", "text": reply})
        finally:
            if idle is not None:
                idle.cancel()
    except Exception as err:  # what openenv's handler answers SESSION_ERROR: the session ends
        if not gone:
            try:
                await send({"type": "websocket.send", "text": error_frame(str(err), "SESSION_ERROR")})
            except Exception:
                gone = True
    finally:
        if session_id is not None:
            await asyncio.shield(server._destroy_session(session_id))
        if not gone:
            try:
                await send({"type": "websocket.close", "code": 1000})
            except Exception:  # the peer is gone (a disconnect, a shutdown): nothing is left to tell
                pass


def _note_activity(server: Any, session_id: str, step: bool) -> None:
    """What openenv's ``_update_session_activity`` notes after a reset or a step (the session's
    ``SessionInfo``: ``last_activity_at`` and, for a step, ``step_count``), written to the model's
    fields as they are: ``SessionInfo`` validates every assignment (two pydantic validations a
    step for a float and an int this code computes)."""
    info = getattr(server, "_session_info", {}).get(session_id)
    fields = getattr(info, "__dict__", None)
    if not isinstance(fields, dict) or "last_activity_at" not in fields or "step_count" not in fields:
        server._update_session_activity(session_id, increment_step=step)
        return
    fields["last_activity_at"] = time.time()
    if step:
        fields["step_count"] += 1


async def _answer(server: Any, session_id: str, env: Any, text: str,
                  mcp_handler: Callable[..., Awaitable[Any]]) -> str | None:
    """The reply to one message (JSON text), or None for ``close``."""
    try:
        message = loads(text)
    except ValueError as err:
        return error_frame(f"Invalid JSON: {err}", "INVALID_JSON")
    if not isinstance(message, dict):
        return error_frame('a message is a JSON object: {"type": "reset" | "step" | "state" | "close" | "mcp", '
                           '"data": ...}', "INVALID_JSON")
    kind = message.get("type", "")
    plain = message.keys() <= _MESSAGE_KEYS
    try:
        if kind == "step":
            data = message.get("data")
            if not (plain and isinstance(data, dict)):
                data = WSStepMessage(**message).data
            payload = await env.step_payload(deserialize_action(data, server.action_cls))
            _note_activity(server, session_id, True)
            return dumps({"type": "observation", "data": payload})
        if kind == "reset":
            data = message.get("data", {})
            if not (plain and isinstance(data, dict)):
                data = WSResetMessage(**message).data
            payload = await env.reset_payload(**data)
            _note_activity(server, session_id, False)
            return dumps({"type": "observation", "data": payload})
        if kind == "state":
            from openenv.core.env_server.types import WSStateMessage, WSStateResponse

            WSStateMessage(**message)
            return WSStateResponse(data=env.state.model_dump()).model_dump_json()
        if kind == "close":
            from openenv.core.env_server.types import WSCloseMessage

            WSCloseMessage(**message)
            return None
        if kind == "mcp":
            from openenv.core.env_server.mcp_types import (
                JsonRpcErrorCode,
                JsonRpcRequest,
                JsonRpcResponse,
                WSMCPMessage,
                WSMCPResponse,
            )

            msg = WSMCPMessage(**message)
            try:
                request = JsonRpcRequest(**msg.data)
            except Exception as err:
                response = JsonRpcResponse.error_response(JsonRpcErrorCode.INVALID_REQUEST, f"Invalid request: {err}")
            else:
                response = await mcp_handler(request, session_env=env, session_id=session_id)
            return WSMCPResponse(data=response.model_dump()).model_dump_json()
        return error_frame(f"Unknown message type: {kind}", "UNKNOWN_TYPE")
    except ValidationError as err:
        return error_frame("Invalid message", "VALIDATION_ERROR", errors=err.errors())
    except Exception as err:
        return error_frame(str(err), "EXECUTION_ERROR")
