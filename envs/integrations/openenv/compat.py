"""What differs between the two openenv releases the server and clients run on, in one place.

OpenEnv ships as ``openenv-core`` (0.3, the last release under that name) and, since, as
``openenv`` (0.10): both install the import package ``openenv`` (``openenv.core``), so exactly
one of them is installed. The WebSocket session protocol (reset, step, state, close, mcp) is the
same in both; 0.10 adds, and the server and clients here use where it is there:

- ``HTTPEnvServer(env_name=, state_cls=, reset_observation_cls=)``: ``/schema`` publishes the
  server's state (``ServiceGymState``) and reset observation; ``env_name`` names the routes of
  openenv's Task API (``GET /list_environments``, ``GET /{env_name}/splits``, ``POST
  /{env_name}/tasks | num_tasks | task | task_range``), which call the env's ``list_splits``,
  ``list_tasks``, ``num_tasks``, ``get_task`` and ``get_task_range``.
- ``/ws?session_id=ID`` attaches a WebSocket to an HTTP MCP session (``openenv/session/create``):
  0.10's ``MCPToolClient`` does so by default (its production mode: reset and step over the
  WebSocket, ``list_tools``/``call_tool`` over ``POST /mcp``, one env). The server keeps such a
  session from its idle reaper while the WebSocket is attached (``attached_sessions``).
- ``EnvClient(headers=)`` and ``EnvClient._connect_async`` (``connect``, ``reset``, ... are sync
  or async by the caller; the client reconnects by itself on its own event loop): the bearer token
  travels as a header of openenv's own connect. On 0.3, ``connect`` is overridden instead.
- ``base_url`` is a read-only property of 0.10's ``EnvClient``.
- Observations carry ``metadata`` (inside ``observation``, and at the top of the reply when not
  empty); ``StepResult.metadata`` holds the latter.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import HTTPEnvServer

__all__ = ["CLIENT_CONNECT_ASYNC", "CLIENT_HEADERS", "OPENENV_DISTRIBUTION", "OPENENV_VERSION",
           "attached_sessions", "server_kwargs", "step_result"]


def _distribution() -> tuple[str, str]:
    for name in ("openenv", "openenv-core"):
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "openenv", "unknown"  # a source checkout on the path


OPENENV_DISTRIBUTION, OPENENV_VERSION = _distribution()

_SERVER_PARAMS = frozenset(inspect.signature(HTTPEnvServer.__init__).parameters)
CLIENT_HEADERS = "headers" in inspect.signature(EnvClient.__init__).parameters
CLIENT_CONNECT_ASYNC = hasattr(EnvClient, "_connect_async")
_STEP_METADATA = "metadata" in {f.name for f in dataclasses.fields(StepResult)}


def server_kwargs(**wanted: Any) -> dict[str, Any]:
    """Those of ``wanted`` (``env_name``, ``state_cls``, ``reset_observation_cls``) that this
    openenv's ``HTTPEnvServer`` takes."""
    return {k: v for k, v in wanted.items() if k in _SERVER_PARAMS}


def attached_sessions(server: HTTPEnvServer) -> set[str]:
    """The sessions a WebSocket is attached to by ``/ws?session_id=`` (openenv 0.10; none on 0.3)."""
    return getattr(server, "_session_websocket_attachments", set())


def step_result(payload: dict[str, Any]) -> StepResult[dict[str, Any]]:
    """A ``StepResult`` of a reply's ``data``, with its ``metadata`` where ``StepResult`` has it."""
    extra = {"metadata": payload.get("metadata")} if _STEP_METADATA else {}
    return StepResult(observation=payload.get("observation", {}), reward=payload.get("reward"),
                      done=bool(payload.get("done", False)), **extra)
