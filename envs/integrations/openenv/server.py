"""An OpenEnv server for one servicegym env id: ``servicegym serve --env ID``.

Built on openenv's own server (``openenv.core.env_server.HTTPEnvServer``, the app its
``EnvClient`` / ``GenericEnvClient`` / ``MCPToolClient`` talk to), in its *production* route set:
``/ws`` (a persistent WebSocket session: reset, step, state, close, and MCP JSON-RPC), ``/mcp``
(MCP JSON-RPC, over HTTP POST and WebSocket), ``/health``, ``/metadata``, ``/schema``; plus
``/sessions`` (how many sessions are open, of how many). The stateless HTTP ``/reset`` and
``/step`` of openenv's simulation route set are left out: a multi-turn episode needs a session.

One WebSocket connection is one session with its own env (``gym.make(ID, user_tool=True)``, so
the simulated user is also the tool ``respond(message)``). Its messages are openenv's
(``openenv.core.env_server.types``):

- ``{"type": "reset", "data": {"seed": 3, "task_id": "delivery/test/1/d2"}}``: also ``split``,
  ``index`` (the task at that index of ``split``, as openenv's Task API lists them),
  ``difficulty``, ``episode_id``; any other key is refused. The observation's ``text`` is the
  user's opening, ``messages`` the chat so far (system, user), ``info`` the reset info
  (``task_id``, ``domain``, ``system_prompt``, ``tools`` as OpenAI function schemas, ``env_id``).
- ``{"type": "step", "data": ACTION}``: one agent turn. ``ACTION`` is a ``ServiceGymAction``:
  ``{"type": "text", "text": "<the raw completion>"}`` (any form the env accepts: a JSON call,
  ``<tool_call>`` blocks, a message to the user); the MCP forms ``{"type": "call_tool",
  "tool_name": ..., "arguments": {...}}`` (one call, as openenv's ``CallToolAction`` and
  ``MCPToolClient.call_tool`` send it) and ``{"type": "list_tools"}`` (``ListToolsAction``: the
  MCP tool list, not an env step); and ``{"type": "call_tools", "calls": [{"name": ...,
  "arguments": {...}}, ...], "content": "..."}`` (several calls in one turn; OpenAI
  ``tool_calls`` entries are accepted as they are). Every step observation has ``reward`` and
  ``done``, ``text`` (the env's observation), ``messages`` (what the step added after the
  assistant's own message, OpenAI format), ``tool_results`` (per call: ``tool_call_id``,
  ``name``, ``is_error``; the content is in the ``tool`` message) and ``info`` (``step``,
  ``tool_errors``, ``terminated``, ``truncated``; on the last step ``termination_reason``,
  ``success`` and ``score``, every score component). A
  ``call_tool`` observation also has ``tool_name`` and ``result`` (``{"content": [{"type":
  "text", "text": ...}], "data": ..., "is_error": ...}``, MCP's tool result), so
  ``MCPToolClient`` reads it as a ``CallToolObservation``.
- ``{"type": "state"}``: ``episode_id``, ``step_count``, ``env_id``, ``task_id``, ``domain``,
  ``done``, ``reward``, ``total_reward``, ``tool_errors`` and ``messages``, the whole transcript in
  OpenAI format.
- ``{"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/list" | "tools/call", ...}}``:
  the same tools over JSON-RPC; a ``tools/call`` is a step of the session's episode, and its
  result carries ``reward``, ``done`` and, at the end, ``score``. (Over HTTP ``POST /mcp``,
  ``tools/list`` needs no session; a ``tools/call`` needs a running episode, which only a reset
  in a WebSocket session starts.)

On openenv 0.10 (``compat``), also openenv's Task API (``GET /list_environments``, ``GET
/{name}/splits``, ``POST /{name}/tasks | num_tasks | task | task_range``, ``name`` the env id
without its namespace: ``route_name``), and ``/ws?session_id=ID`` attaches a WebSocket to an HTTP
MCP session (0.10's ``MCPToolClient``: reset over the WebSocket, tools over ``POST /mcp``).
Both releases, openenv 0.10 and openenv-core 0.3, are supported; what differs is in ``compat``.

Where the time goes: a ``/ws`` session runs on the server's own loop (``session.run_session``:
openenv's protocol, reply for reply, without its per-message pydantic models; the env's
``reset_payload``/``step_payload`` build the reply's data directly), every message through one
JSON codec (``protocol``: orjson where installed), env steps awaited on the event loop (no thread),
uvicorn without compression, reading on while one message waits (``session.ws_protocol``); ``serve``
also freezes what is loaded at start out of the garbage collector's sight. A ``/ws?session_id=``
WebSocket, and every WebSocket where openenv's JSON-RPC handler cannot be found, is served by
openenv's own handler. ``scripts/bench_server.py --compare`` sets it against openenv's echo env.

Safe by default: ``serve`` binds 127.0.0.1; with a token (read by the caller from an environment
variable, never from argv, never logged) every route but ``/health`` needs ``Authorization:
Bearer <token>`` (a WebSocket without it is refused at the handshake with 401); a message over
``max_message_bytes`` gets an error reply and is not run (a frame over twice that closes the
connection, 1009); a session idle for ``idle_timeout_s`` gets an error reply (``IDLE_TIMEOUT``) and is
closed with code 1001 and the reason ``idle timeout: no message for N s`` (``serve --idle-timeout``,
default 300 s; an idle session costs a timer, no task or thread of its own: about 24 KiB of memory
each, 5,000 of them measured by ``scripts/bench_server.py --idle 5000``);
a binary frame, a message that is not a JSON object or one nesting arrays and objects deeper than
``MAX_JSON_DEPTH`` gets an error reply (``INVALID_JSON``) and the session goes on; over HTTP, every
route reads its body whole first: over ``max_message_bytes`` is a 413, nested too deep a 400 (on
``/mcp`` a JSON-RPC error, -32600), whether the route reads a body or not; a disconnect closes
the session and releases its env (kept, up to ``max_sessions``, for a later session, whose first
reset starts it from scratch: ``EnvPool``); shutdown (Ctrl-C, SIGTERM) closes every open session.

Layout: this module holds the server (``ServiceGymServer``), the app factory ``build_app`` and the
ways to run it (``serve``, ``serve_in_thread``, ``bind_socket``), and re-exports what its siblings
define: ``models`` (the actions, observations and state: ``ServiceGymAction``, ``action_text``,
...), ``environment`` (one session's env, ``ServiceGymEnvironment``, the ``EnvPool`` of closed
sessions' envs, ``RESET_KEYS``), ``guard`` (the ASGI front: the token and the limits),
``session`` (the ``/ws`` session loop), ``protocol`` (the JSON codec and the frames' checks) and
``compat`` (what differs between openenv releases).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from openenv.core.env_server.exceptions import SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, ServerMode

import servicegym
from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.integrations.openenv.compat import attached_sessions, server_kwargs
from servicegym.envs.integrations.openenv.environment import (
    RESET_KEYS,
    EnvPool,
    ServiceGymEnvironment,
    TaskLookupError,
)
from servicegym.envs.integrations.openenv.guard import _IN_WEBSOCKET, _Guard
from servicegym.envs.integrations.openenv.models import (
    ServiceGymAction,
    ServiceGymObservation,
    ServiceGymState,
    ToolCallSpec,
    action_text,
)
from servicegym.envs.integrations.openenv.protocol import (
    MAX_JSON_DEPTH,
    idle_close_reason,
    nests_deeper,
)
from servicegym.envs.integrations.openenv.session import IDLE_CLOSE_CODE, ws_protocol

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S", "DEFAULT_MAX_MESSAGE_BYTES", "DEFAULT_MAX_SESSIONS", "DEFAULT_PORT", "IDLE_CLOSE_CODE",
    "MAX_JSON_DEPTH",
    "RESET_KEYS", "EnvPool", "RunningServer", "ServiceGymAction", "ServiceGymEnvironment", "ServiceGymObservation",
    "ServiceGymServer", "ServiceGymState", "TaskLookupError", "ToolCallSpec", "action_text", "build_app", "bind_socket",
    "idle_close_reason", "nests_deeper", "route_name", "serve", "serve_in_thread",
]

log = logging.getLogger("servicegym.server")

DEFAULT_PORT = 8100  # not 8000: where model endpoints (vLLM, servicegym loopback-model) usually listen
DEFAULT_MAX_SESSIONS = 64
DEFAULT_IDLE_TIMEOUT_S = 300.0
# an action holds at most 1,048,576 characters (the env's limit); as JSON with \uXXXX escapes a
# message of that many non-ASCII characters is about 6 MiB
DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024


def route_name(env_id: str) -> str:
    """The env's name in openenv's Task API routes (``/{env_name}/tasks``): the id without its
    namespace (``servicegym/Delivery-v0`` -> ``Delivery-v0``)."""
    return env_id.rsplit("/", 1)[-1]


# ----- the server --------------------------------------------------------------------------------
class ServiceGymServer(HTTPEnvServer):
    """openenv's ``HTTPEnvServer`` with a clearer capacity error, sessions counted, idle HTTP MCP
    sessions reaped (WebSocket sessions close with their connection), and every open session
    closed at shutdown."""

    def __init__(self, env_id: str, *, max_sessions: int, idle_timeout_s: float | None,
                 env_kwargs: dict[str, Any] | None = None) -> None:
        self.env_id = env_id
        # closed sessions' envs, kept for the next sessions (as many as can be open at once)
        self.env_pool = EnvPool(env_id, {"user_tool": True, **(env_kwargs or {})}, max_sessions)
        factory = functools.partial(ServiceGymEnvironment, env_id, env_kwargs, self.env_pool)
        super().__init__(factory, ServiceGymAction, ServiceGymObservation,
                         concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                              session_timeout=idle_timeout_s),
                         **server_kwargs(env_name=route_name(env_id), state_cls=ServiceGymState))
        # openenv gives each session a thread of its own (a one-worker executor) to make and close
        # its env in; this env never needs its thread (reset and step are awaited on the loop), so
        # the sessions share a few: an idle session costs no thread (5,000 idle sessions, 5,000
        # threads otherwise)
        if getattr(self, "_shared_session_executor", False) is None:
            self._shared_session_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="servicegym-session")
        self.opened = 0
        self.closed = 0
        self.closed_at_shutdown = 0  # by close_all (the connections' own ends close theirs first)
        self.open_at_shutdown = 0

    async def _create_session(self) -> tuple[str, Environment]:
        active = len(self._sessions)
        if active >= self._max_concurrent_envs:
            raise SessionCapacityError(
                active, self._max_concurrent_envs,
                message=(f"servicegym server full: {active} of {self._max_concurrent_envs} sessions in use "
                         "(serve --max-sessions); close a session, retry later or use another server"))
        session_id, env = await super()._create_session()
        env.attached = _IN_WEBSOCKET.get()  # type: ignore[attr-defined]
        self.opened += 1
        return session_id, env

    async def _destroy_session(self, session_id: str) -> None:
        if session_id in self._sessions:
            self.closed += 1
        await super()._destroy_session(session_id)

    async def _reap_idle_sessions(self) -> None:
        timeout = self._session_idle_timeout_s
        if timeout is None:
            return
        interval = min(max(timeout / 4, 0.05), 5.0)
        while True:
            try:
                await asyncio.sleep(interval)
                now = time.monotonic()
                # not those a WebSocket serves: its own connection, or attached by /ws?session_id= (0.10)
                attached = attached_sessions(self)
                stale = [sid for sid, env in list(self._sessions.items())
                         if env is not None and not getattr(env, "attached", False) and sid not in attached
                         and now - getattr(env, "last_active", now) > timeout]
                for sid in stale:
                    await self._destroy_session(sid)
            except asyncio.CancelledError:
                break
            except Exception as err:  # keep reaping
                log.warning("idle-session reaper: %s", err)

    async def close_all(self) -> int:
        """Close every open session (at shutdown); returns how many there were."""
        ids = list(self._sessions)
        for sid in ids:
            await self._destroy_session(sid)
        self.closed_at_shutdown += len(ids)
        self.env_pool.close()
        return len(ids)

    def sessions(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "active": len(self._sessions), "max": self._max_concurrent_envs,
                "opened": self.opened, "closed": self.closed}


def build_app(env_id: str, *, max_sessions: int = DEFAULT_MAX_SESSIONS, token: str | None = None,
              idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
              max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
              env_kwargs: dict[str, Any] | None = None) -> tuple[Any, ServiceGymServer]:
    """The ASGI app serving ``env_id`` (see the module docstring) and its ``ServiceGymServer``.
    ``token``: the bearer token clients must send (None: none); pass its value, read from an
    environment variable by the caller. Makes one env now, so a bad id or ``env_kwargs`` fails here."""
    from fastapi import FastAPI

    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env {env_id!r}; known: {', '.join(ENV_IDS)}")
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
    if idle_timeout_s is not None and idle_timeout_s <= 0:
        raise ValueError(f"idle_timeout_s must be positive (or None), got {idle_timeout_s}")
    if max_message_bytes < 1024:
        raise ValueError(f"max_message_bytes must be at least 1024, got {max_message_bytes}")
    if token is not None and not (token.isascii() and token.isprintable() and token.strip() == token and token):
        raise ValueError("the token must be a non-empty string of printable ASCII without surrounding spaces "
                         "(it travels in an HTTP header)")
    probe = ServiceGymEnvironment(env_id, env_kwargs)
    probe.tool_schemas()  # makes the env (and loads its task source) once: errors show now
    probe.close()

    app = FastAPI(title=f"servicegym OpenEnv server: {env_id}", version=servicegym.__version__,
                  docs_url=None, redoc_url=None)
    server = ServiceGymServer(env_id, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s, env_kwargs=env_kwargs)
    server.register_routes(app, mode=ServerMode.PRODUCTION)

    @app.exception_handler(TaskLookupError)
    async def task_lookup_error(request: Any, err: TaskLookupError) -> Any:
        from fastapi.responses import JSONResponse

        return JSONResponse({"detail": str(err)}, status_code=400)

    @app.get("/sessions", tags=["Health"], summary="Open sessions of this server")
    async def sessions() -> dict[str, Any]:
        return server.sessions()

    async def close_sessions() -> None:
        n = await server.close_all()
        if n:
            log.warning("shutdown: closed %d open session%s", n, "s" if n != 1 else "")

    app.router.on_shutdown.append(close_sessions)
    guarded = _Guard(app, token=token, max_message_bytes=max_message_bytes, idle_timeout_s=idle_timeout_s,
                     server=server)
    return guarded, server


def bind_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free one)."""
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn(app: Any, server: ServiceGymServer, max_message_bytes: int, log_level: str) -> Any:
    """A ``uvicorn.Server`` for ``app`` that notes how many sessions were open when shutdown began."""
    import uvicorn

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            server.open_at_shutdown = len(server._sessions)
            await super().shutdown(sockets)

    return Server(_uvicorn_config(app, max_message_bytes, log_level))


def _uvicorn_config(app: Any, max_message_bytes: int, log_level: str) -> Any:
    import uvicorn

    # frames up to twice the limit get a polite error reply (_Guard); larger ones close the connection
    return uvicorn.Config(app, log_level=log_level, access_log=False, lifespan="on", ws=ws_protocol(),
                          ws_max_size=2 * max_message_bytes, ws_per_message_deflate=False,
                          timeout_graceful_shutdown=10)


def serve(env_id: str, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT, max_sessions: int = DEFAULT_MAX_SESSIONS,
          token: str | None = None, idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
          max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, env_kwargs: dict[str, Any] | None = None,
          ready: Any = None, log_level: str = "warning") -> ServiceGymServer:
    """Serve ``env_id`` until SIGINT/SIGTERM (in the main thread), then close every open session.
    ``ready(url)`` is called once the socket listens. Returns the server (its counts)."""
    app, server = build_app(env_id, max_sessions=max_sessions, token=token, idle_timeout_s=idle_timeout_s,
                            max_message_bytes=max_message_bytes, env_kwargs=env_kwargs)
    # what is loaded by now (the modules, the env's task suite) lives as long as the process: out
    # of the collector's sight, a full collection under load walks the sessions' objects only; and
    # a young-generation collection every 10,000 allocations, not 700 (a step allocates hundreds:
    # the collector's share of the server's time under load, 9%, falls to about 3%)
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    sock = bind_socket(host, port)
    uv = _uvicorn(app, server, max_message_bytes, log_level)
    # uvicorn raises the signal that stopped it again once it has shut down (a KeyboardInterrupt,
    # or death by SIGTERM before anything is reported): a stop is a normal end here
    quiet = {}
    if threading.current_thread() is threading.main_thread():
        quiet = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    if ready is not None:
        ready(_url(sock))
    try:
        uv.run(sockets=[sock])
    finally:
        sock.close()
        for sig, handler in quiet.items():
            signal.signal(sig, handler)
    return server


@dataclass
class RunningServer:
    """A server running in a thread of this process (``serve_in_thread``)."""

    url: str
    server: ServiceGymServer
    uvicorn: Any
    thread: threading.Thread

    def sessions(self) -> dict[str, Any]:
        return self.server.sessions()


@contextlib.contextmanager
def serve_in_thread(env_id: str, *, host: str = "127.0.0.1", port: int = 0,
                    max_sessions: int = DEFAULT_MAX_SESSIONS, token: str | None = None,
                    idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
                    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, env_kwargs: dict[str, Any] | None = None,
                    log_level: str = "warning", start_timeout_s: float = 30.0) -> Iterator[RunningServer]:
    """Serve ``env_id`` from a thread of this process (tests, notebooks, examples); yields a
    ``RunningServer`` (``.url``); on exit the server shuts down as ``serve`` does."""
    app, server = build_app(env_id, max_sessions=max_sessions, token=token, idle_timeout_s=idle_timeout_s,
                            max_message_bytes=max_message_bytes, env_kwargs=env_kwargs)
    sock = bind_socket(host, port)
    uv = _uvicorn(app, server, max_message_bytes, log_level)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, name="servicegym-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            uv.should_exit = True
            sock.close()
            raise RuntimeError(f"the server of {env_id} did not start")
        time.sleep(0.01)
    try:
        yield RunningServer(_url(sock), server, uv, thread)
    finally:
        uv.should_exit = True
        thread.join(timeout=30)
        sock.close()
