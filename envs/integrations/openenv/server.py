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
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import signal
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium as gym
from openenv.core.env_server.exceptions import SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import ListToolsObservation, Tool
from openenv.core.env_server.types import (
    Action,
    ConcurrencyConfig,
    EnvironmentMetadata,
    Observation,
    ServerMode,
    State,
)
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

import servicegym
from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.integrations.openenv.compat import attached_sessions, server_kwargs
from servicegym.envs.integrations.openenv.guard import _IN_WEBSOCKET, _Guard
from servicegym.envs.integrations.openenv.protocol import (
    MAX_JSON_DEPTH,
    idle_close_reason,
    jsonable,
    nests_deeper,
)
from servicegym.envs.integrations.openenv.session import IDLE_CLOSE_CODE, ws_protocol
from servicegym.envs.tasks.sources import SPLITS

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
RESET_KEYS = ("seed", "task_id", "split", "index", "difficulty", "episode_id")
# the Task API's split descriptors (openenv 0.10: GET /{env_name}/splits)
SPLIT_TYPES = {"train": "train", "dev": "validation", "test": "test"}


# ----- actions, observations, state ------------------------------------------------------------
class ToolCallSpec(BaseModel):
    """One call of a ``call_tools`` action: ``{"name", "arguments", "id"?}``, or an OpenAI
    ``tool_calls`` entry ``{"id", "type": "function", "function": {"name", "arguments"}}``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _openai_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            fn = data["function"]
            return {"name": fn.get("name"), "arguments": fn.get("arguments", {}), "id": data.get("id")}
        return data


class ServiceGymAction(Action):
    """One agent turn (see the module docstring): ``text``, ``call_tool``, ``call_tools`` or
    ``list_tools``. ``action_text(action)`` is the string the env steps on."""

    type: Literal["text", "call_tool", "call_tools", "list_tools"] = "text"
    text: str | None = Field(default=None, description="type text: the raw assistant completion")
    tool_name: str | None = Field(default=None, description="type call_tool: the tool (MCP)")
    arguments: dict[str, Any] | str = Field(default_factory=dict, description="type call_tool: its arguments")
    calls: list[ToolCallSpec] | None = Field(default=None, description="type call_tools: the calls, in order")
    content: str | None = Field(default=None, description="type call_tools: the assistant's text beside the calls")

    @model_validator(mode="after")
    def _complete(self) -> ServiceGymAction:
        # PydanticCustomError, not ValueError: the error reply carries ``errors()``, which must encode
        if self.type == "text" and self.text is None:
            raise PydanticCustomError("action", 'a "text" action needs "text": the raw assistant completion')
        if self.type == "call_tool" and not self.tool_name:
            raise PydanticCustomError("action", 'a "call_tool" action needs "tool_name" (and "arguments")')
        if self.type == "call_tools" and not self.calls:
            raise PydanticCustomError("action", 'a "call_tools" action needs "calls": [{"name": ..., "arguments": {...}}, ...]')
        return self


def action_text(action: ServiceGymAction) -> str:
    """The action string the env steps on for ``action``: what the same turn is in-process
    (``env.step(action_text(a))`` gives the transcript the server's step gives)."""
    if action.type == "text":
        return action.text or ""
    if action.type == "call_tool":
        return json.dumps({"name": action.tool_name, "arguments": action.arguments}, ensure_ascii=False)
    calls = action.calls or []
    if action.content is None and all(c.id is None for c in calls):
        return json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
    return json.dumps({
        "role": "assistant",
        "content": action.content,
        "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str)
                          else json.dumps(c.arguments, ensure_ascii=False)}}
            for c in calls
        ],
    }, ensure_ascii=False)


class ServiceGymObservation(Observation):
    """What reset and each step return (``reward`` and ``done`` always set)."""

    text: str = Field(default="", description="the env's observation: the opening, or all that is new since the action")
    messages: list[dict[str, Any]] = Field(default_factory=list,
                                           description="OpenAI-format messages the step added after the assistant's own")
    tool_results: list[dict[str, Any]] = Field(
        default_factory=list, description="per call, in order: tool_call_id, name, is_error (the content is in messages)")
    info: dict[str, Any] = Field(default_factory=dict, description="the env's info (on the last step: score, success)")


class ServiceGymToolObservation(ServiceGymObservation):
    """A ``call_tool`` step: also ``tool_name`` and MCP's ``result`` (``CallToolObservation``'s fields)."""

    tool_name: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class ServiceGymState(State):
    """The session's episode (``state``), with its transcript in OpenAI format."""

    env_id: str = ""
    task_id: str | None = None
    domain: str = ""
    done: bool = True
    reward: float = 0.0
    total_reward: float = 0.0
    tool_errors: int = 0
    messages: list[dict[str, Any]] = Field(default_factory=list)


def _mcp_result(content: str, is_error: bool) -> dict[str, Any]:
    """An MCP tool result as FastMCP's ``CallToolResult`` serializes (``MCPToolClient.call_tool``
    returns its ``data``)."""
    return {"content": [{"type": "text", "text": content}], "structured_content": None, "data": content,
            "is_error": is_error}


def _tool_results(obs: str, assistant: dict[str, Any] | None, turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per call of the step: its id, name and whether the env answered it as an error (the
    observation's block for it is ``<tool_error ...>``; the blocks come in call order, each the
    tag, the tool message's content and the closing tag)."""
    if not assistant or not assistant.get("tool_calls"):
        return []
    names = {c.get("id"): c.get("function", {}).get("name", "") for c in assistant["tool_calls"]}
    out: list[dict[str, Any]] = []
    pos = 0
    for m in turn:
        if m.get("role") != "tool":
            continue
        content = m.get("content") or ""
        is_error = obs.startswith("<tool_error ", pos)
        tag = "tool_error" if is_error else "tool_result"
        head_end = obs.find('">', pos)  # attribute values are escaped: the first '">' ends the tag
        if head_end >= 0 and obs.startswith(f"<{tag} ", pos):
            pos = head_end + 2 + len(content) + len(f"</{tag}>") + 1
        out.append({"tool_call_id": m.get("tool_call_id"), "name": names.get(m.get("tool_call_id"), ""),
                    "is_error": is_error})
    return out


def route_name(env_id: str) -> str:
    """The env's name in openenv's Task API routes (``/{env_name}/tasks``): the id without its
    namespace (``servicegym/Delivery-v0`` -> ``Delivery-v0``)."""
    return env_id.rsplit("/", 1)[-1]


class TaskLookupError(ValueError):
    """A Task API request for a split or range the env does not have (answered 400)."""


# ----- the env ---------------------------------------------------------------------------------
@dataclass
class _McpTool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Any


class _McpTools:
    """The env's tools for openenv's MCP JSON-RPC handler (``tools/list``, ``tools/call``): it
    reads ``env.mcp_server`` through ``get_tools()``; a call is a step of the session's episode."""

    def __init__(self, env: ServiceGymEnvironment) -> None:
        self._env = env

    async def get_tools(self) -> dict[str, _McpTool]:
        out = {}
        for schema in self._env.tool_schemas():
            fn = schema["function"]
            out[fn["name"]] = _McpTool(fn["name"], fn.get("description", ""), fn.get("parameters", {}),
                                       functools.partial(self._env._mcp_call, fn["name"]))
        return out


class EnvPool:
    """The gym envs of a server's closed sessions, kept for its next sessions (at most ``limit``;
    thread-safe: openenv makes and closes session envs in worker threads). A session takes one on
    its first use, or makes one; its first reset starts from scratch as every reset does (the
    task's world, history, user, counters, the seeded generator), so a kept env plays an episode
    exactly as a new one does, without paying ``gym.make`` and a new env's first-episode caches
    (about half a millisecond a session). ``close`` closes them all (at shutdown)."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any], limit: int) -> None:
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.limit = limit
        self._free: list[gym.Env] = []
        self._lock = threading.Lock()

    def take(self) -> gym.Env:
        with self._lock:
            if self._free:
                return self._free.pop()
        return gym.make(self.env_id, **self.env_kwargs)

    def give(self, env: gym.Env) -> None:
        with self._lock:
            if len(self._free) < self.limit:
                self._free.append(env)
                return
        env.close()

    def __len__(self) -> int:
        return len(self._free)

    def close(self) -> None:
        with self._lock:
            free, self._free, self.limit = self._free, [], 0
        for env in free:
            env.close()


class ServiceGymEnvironment(Environment):
    """One session's env on the server: ``gym.make(env_id, user_tool=True, **env_kwargs)``, made
    on first use (or, with a ``pool``, a closed session's env taken from it, and given back on
    ``close``). ``reset``/``step`` (and their ``_async`` forms, which the WebSocket session
    awaits: an LLM user's reply is awaited, many sessions on one loop) follow the module
    docstring's protocol."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, pool: EnvPool | None = None) -> None:
        super().__init__()
        self.env_id = env_id
        self.env_kwargs = {"user_tool": True, **(env_kwargs or {})}
        self._pool = pool
        self._gym: gym.Env | None = None
        self._closed = False
        self._done = True
        self._reward = 0.0
        self._return = 0.0
        self._steps = 0
        self._tool_errors = 0
        self._task_id: str | None = None
        self._episode_id: str | None = None
        self.attached = False  # served by a WebSocket connection (set by the server)
        self.last_active = time.monotonic()
        self.mcp_server = _McpTools(self)

    # ----- helpers -----
    @property
    def gym_env(self) -> gym.Env:
        if self._closed:
            raise RuntimeError("this session is closed")
        if self._gym is None:
            self._gym = self._pool.take() if self._pool is not None else gym.make(self.env_id, **self.env_kwargs)
        return self._gym

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.gym_env.unwrapped.tool_schemas()

    def _touch(self) -> None:
        self.last_active = time.monotonic()

    def _reset_args(self, seed: Any, episode_id: Any, task_id: Any, split: Any, difficulty: Any,
                    extra: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
        index = extra.pop("index", None)
        if extra:
            raise ValueError(f"unknown reset option{'s' if len(extra) > 1 else ''} {sorted(extra)}; "
                             f"use {', '.join(RESET_KEYS)}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > 255):
            raise ValueError("episode_id must be a string of at most 255 characters")
        options: dict[str, Any] = {}
        if task_id is not None:
            if not isinstance(task_id, str) or not task_id:
                raise ValueError(f"task_id must be a non-empty string, got {task_id!r}")
            options["task_id"] = task_id
        if split is not None:
            if split not in SPLITS:
                raise ValueError(f"split must be 'train', 'dev' or 'test', got {split!r}")
            options["split"] = split
        if difficulty is not None:
            if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty < 0:
                raise ValueError(f"difficulty must be a non-negative integer, got {difficulty!r}")
            options["difficulty"] = difficulty
        if index is not None:  # the Task API's way to pick a task: split and index (get_task)
            if isinstance(index, bool) or not isinstance(index, int):
                raise ValueError(f"index must be an integer, got {index!r}")
            if "task_id" in options or "difficulty" in options:
                raise ValueError("index picks a task of split: send it without task_id and difficulty")
            split = options.pop("split", self.gym_env.unwrapped.split)
            ids = self._ids(split)
            if not 0 <= index < len(ids):
                raise ValueError(f"index {index} is out of range: split {split!r} has {len(ids)} tasks")
            options["task_id"] = ids[index]
        return seed, options

    def _reset_failed(self, err: Exception, options: dict[str, Any]) -> ValueError:
        what = err.args[0] if isinstance(err, KeyError) and err.args else err
        if "task_id" in options:
            return ValueError(f"cannot reset {self.env_id} to task {options['task_id']!r}: {what}")
        return ValueError(f"cannot reset {self.env_id}: {what}")

    def _reset_fields(self, obs: str, info: dict[str, Any], episode_id: str | None) -> dict[str, Any]:
        """The reset observation's fields but ``reward`` and ``done`` (0.0 and False)."""
        u = self.gym_env.unwrapped
        self._done = False
        self._reward = self._return = 0.0
        self._steps = self._tool_errors = 0
        self._task_id = info.get("task_id")
        self._episode_id = episode_id or uuid.uuid4().hex
        return {"text": obs, "messages": list(u.messages), "tool_results": [], "info": {**info, "env_id": self.env_id}}

    def _step_fields(self, action: ServiceGymAction, result: tuple[str, float, bool, bool, dict[str, Any]],
                     wire: bool = False) -> dict[str, Any]:
        """The step observation's fields, ``reward`` and ``done`` among them (a ``call_tool``
        step's also ``tool_name``, ``result`` and ``error``: a ``ServiceGymToolObservation``).
        ``wire``: the fields go straight to ``protocol.dumps``, which encodes the info as its JSON
        round trip would (no copy made first)."""
        obs, reward, terminated, truncated, info = result
        u = self.gym_env.unwrapped
        done = bool(terminated or truncated)
        messages = u.messages
        turn = u.turn_messages()
        start = len(messages) - len(turn)
        # a Workspace step that starts the next session returns that session's chat (system first)
        new_chat = bool(turn) and turn[0].get("role") == "system"
        assistant = messages[start - 1] if not new_chat and start >= 1 else None
        results = _tool_results(obs, assistant, turn)
        self._steps += 1
        self._reward = float(reward)
        self._return += float(reward)
        self._tool_errors = int(info.get("tool_errors", 0))
        self._done = done
        fields = {"text": obs, "messages": list(turn), "tool_results": results,
                  "info": {**(info if wire else jsonable(info)), "terminated": bool(terminated),
                           "truncated": bool(truncated)},
                  "reward": float(reward), "done": done}
        if action.type != "call_tool":
            return fields
        tool_messages = [m for m in turn if m.get("role") == "tool"]
        if results and tool_messages:
            result = _mcp_result(tool_messages[0].get("content") or "", results[0]["is_error"])
        else:  # refused before any call ran (e.g. an argument over the limits): the error says why
            result = _mcp_result(obs, True)
        return {**fields, "tool_name": action.tool_name or "", "result": result, "error": None}

    @staticmethod
    def _observation(fields: dict[str, Any]) -> ServiceGymObservation:
        return (ServiceGymToolObservation if "tool_name" in fields else ServiceGymObservation)(**fields)

    @staticmethod
    def _payload(fields: dict[str, Any]) -> dict[str, Any]:
        """What openenv's ``serialize_observation`` makes of the observation with ``fields``:
        ``{"observation": {the fields but reward and done, "metadata": {}}, "reward", "done"}``."""
        observation = {"metadata": {}, **fields}
        return {"observation": observation, "reward": observation.pop("reward"), "done": observation.pop("done")}

    def _list_tools(self) -> ListToolsObservation:
        tools = [Tool(name=s["function"]["name"], description=s["function"].get("description", ""),
                      input_schema=s["function"].get("parameters", {})) for s in self.tool_schemas()]
        return ListToolsObservation(tools=tools, reward=0.0, done=self._done)

    def _check_step(self, action: Any) -> ServiceGymAction:
        if not isinstance(action, ServiceGymAction):
            action = ServiceGymAction.model_validate(action.model_dump() if isinstance(action, BaseModel) else action)
        if action.type != "list_tools" and self._done:
            raise RuntimeError("no episode running: send a reset first" if self._task_id is None
                               else "the episode has ended: send a reset to start another")
        return action

    # ----- openenv's Environment -----
    def reset(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
              split: str | None = None, difficulty: int | None = None, **kwargs: Any) -> ServiceGymObservation:
        self._touch()
        seed, options = self._reset_args(seed, episode_id, task_id, split, difficulty, kwargs)
        try:
            obs, info = self.gym_env.unwrapped.reset(seed=seed, options=options)
        except (KeyError, ValueError, TypeError) as err:
            raise self._reset_failed(err, options) from None
        return ServiceGymObservation(**self._reset_fields(obs, info, episode_id), reward=0.0, done=False)

    async def _areset_fields(self, seed: Any, episode_id: Any, task_id: Any, split: Any, difficulty: Any,
                             kwargs: dict[str, Any]) -> dict[str, Any]:
        self._touch()
        seed, options = self._reset_args(seed, episode_id, task_id, split, difficulty, kwargs)
        try:
            obs, info = await self.gym_env.unwrapped.areset(seed=seed, options=options)
        except (KeyError, ValueError, TypeError) as err:
            raise self._reset_failed(err, options) from None
        return self._reset_fields(obs, info, episode_id)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
                          split: str | None = None, difficulty: int | None = None,
                          **kwargs: Any) -> ServiceGymObservation:
        fields = await self._areset_fields(seed, episode_id, task_id, split, difficulty, kwargs)
        return ServiceGymObservation(**fields, reward=0.0, done=False)

    async def reset_payload(self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None,
                            split: str | None = None, difficulty: int | None = None,
                            **kwargs: Any) -> dict[str, Any]:
        """``reset_async`` as its reply's ``data`` (what openenv's ``serialize_observation`` makes
        of the observation), built without the model: the WebSocket session's reset."""
        fields = await self._areset_fields(seed, episode_id, task_id, split, difficulty, kwargs)
        return self._payload({**fields, "reward": 0.0, "done": False})

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._touch()
        action = self._check_step(action)
        if action.type == "list_tools":
            return self._list_tools()
        return self._observation(self._step_fields(action, self.gym_env.unwrapped.step(action_text(action))))

    async def _astep_fields(self, action: Any, wire: bool = False) -> dict[str, Any] | ListToolsObservation:
        self._touch()
        action = self._check_step(action)
        if action.type == "list_tools":
            return self._list_tools()
        result = await self.gym_env.unwrapped.astep(action_text(action))
        self._touch()
        return self._step_fields(action, result, wire)

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        fields = await self._astep_fields(action)
        return fields if isinstance(fields, ListToolsObservation) else self._observation(fields)

    async def step_payload(self, action: Any) -> dict[str, Any]:
        """``step_async`` as its reply's ``data`` (see ``reset_payload``): the WebSocket session's step."""
        fields = await self._astep_fields(action, wire=True)
        if isinstance(fields, ListToolsObservation):
            from openenv.core.env_server.serialization import serialize_observation

            return serialize_observation(fields)
        return self._payload(fields)

    async def _mcp_call(self, name: str, **arguments: Any) -> dict[str, Any]:
        """``tools/call`` over JSON-RPC: a ``call_tool`` step; the tool result with the step's
        ``reward``, ``done`` and (on the last step) ``score``."""
        action = ServiceGymAction(type="call_tool", tool_name=name, arguments=arguments)
        try:
            obs = await self.step_async(action)
        except RuntimeError as err:
            return {**_mcp_result(str(err), True), "reward": None, "done": self._done}
        assert isinstance(obs, ServiceGymToolObservation)
        out = {**(obs.result or {}), "reward": obs.reward, "done": obs.done}
        if "score" in obs.info:
            out.update(score=obs.info["score"], success=obs.info.get("success"))
        return out

    @property
    def state(self) -> ServiceGymState:
        self._touch()
        u = self._gym.unwrapped if self._gym is not None and not self._closed else None
        started = u is not None and self._task_id is not None
        return ServiceGymState(
            episode_id=self._episode_id, step_count=self._steps, env_id=self.env_id, task_id=self._task_id,
            domain=getattr(u, "domain", "") if u is not None else "", done=self._done, reward=self._reward,
            total_reward=self._return, tool_errors=self._tool_errors,
            messages=list(u.messages) if started else [],
        )

    # ----- openenv's Task API (openenv 0.10's TaskProvider: GET /{env_name}/splits, POST
    # /{env_name}/tasks, num_tasks, task, task_range; reset(split=, index=) plays one) -----
    def _ids(self, split: Any) -> list[str]:
        if split not in SPLITS:
            raise TaskLookupError(f"unknown split {split!r}; the splits are {', '.join(SPLITS)}")
        return self.gym_env.unwrapped.task_ids(split)

    @staticmethod
    def _task_spec(split: str, index: int, task_id: str) -> dict[str, Any]:
        return {"id": task_id, "task_id": task_id, "index": index, "split": split}

    def list_splits(self) -> list[dict[str, str]]:
        return [{"name": s, "type": SPLIT_TYPES[s]} for s in SPLITS]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [self._task_spec(split, i, t) for i, t in enumerate(self._ids(split))]

    def num_tasks(self, split: str) -> int:
        return len(self._ids(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        ids = self._ids(split)
        if not 0 <= index < len(ids):
            raise IndexError(index)  # openenv answers 400 "Invalid task index"
        return self._task_spec(split, index, ids[index])

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        ids = self._ids(split)
        lo, hi, _ = slice(start, stop).indices(len(ids))
        return [self._task_spec(split, i, ids[i]) for i in range(lo, hi)]

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.env_id,
            description=(f"servicegym {self.env_id}: an LLM agent serves a simulated user with tools; the user is "
                         "also the tool respond(message). Reward on the last step: the task's strict success; "
                         "every score component in the final observation's info.score."),
            version=servicegym.__version__,
            author="servicegym",
        )

    def close(self) -> None:
        self._closed = True
        self._done = True
        env, self._gym = self._gym, None
        if env is None:
            return
        if self._pool is not None:
            self._pool.give(env)
        else:
            env.close()


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
