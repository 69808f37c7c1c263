"""One session's env on the OpenEnv server (``ServiceGymEnvironment``, openenv's ``Environment``
over ``gym.make(ID, user_tool=True)``): reset and step as ``server``'s docstring describes them,
their replies built straight for the wire (``reset_payload`` / ``step_payload``, what
``session.run_session`` sends), the env's tools for openenv's MCP JSON-RPC handler (``_McpTools``)
and openenv 0.10's Task API (``list_splits``, ``list_tasks``, ...); ``EnvPool``, the envs of a
server's closed sessions kept for its next sessions."""

from __future__ import annotations

import functools
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import ListToolsObservation, Tool
from openenv.core.env_server.types import EnvironmentMetadata, Observation
from pydantic import BaseModel

import servicegym
from servicegym.envs.integrations.openenv.models import (
    ServiceGymAction,
    ServiceGymObservation,
    ServiceGymState,
    ServiceGymToolObservation,
    action_text,
)
from servicegym.envs.integrations.openenv.protocol import jsonable
from servicegym.envs.tasks.sources import SPLITS

__all__ = ["RESET_KEYS", "SPLIT_TYPES", "EnvPool", "ServiceGymEnvironment", "TaskLookupError"]

RESET_KEYS = ("seed", "task_id", "split", "index", "difficulty", "episode_id")
# the Task API's split descriptors (openenv 0.10: GET /{env_name}/splits)
SPLIT_TYPES = {"train": "train", "dev": "validation", "test": "test"}


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
