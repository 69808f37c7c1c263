"""Clients of a servicegym OpenEnv server (``servicegym serve``; ``servicegym.envs.integrations.openenv.server``).

- ``ServiceGymClient``: openenv's ``EnvClient`` (async; ``.sync()`` for a blocking wrapper) for
  one session, which sends the bearer token (from ``token=`` or an environment variable, by
  default ``SERVICEGYM_SERVER_TOKEN``) and adds ``act``, ``call_tool``, ``call_tools``,
  ``list_tools`` and ``transcript``. openenv's own ``GenericEnvClient`` and ``MCPToolClient``
  work against a server without a token as they are.
- ``SessionPool``: spreads sessions over several servers (one base URL each) in turn.
- ``RemoteEnv``: a Gymnasium env whose episodes run in a server session: ``reset``/``step``
  give what the in-process env gives (observation, reward, flags, info; ``messages`` from the
  server), so ``run_episode`` and the rollout collector's ``EpisodeWorker`` drive it unchanged.
- ``remote_rollouts``: the rollout collector's records, with the episodes played on servers
  (``concurrency`` sessions spread over the pool): for the same seeds, the same records as
  ``collect``/``EpisodeWorker`` in-process with ``env_kwargs={"user_tool": True}`` (the
  server's envs have the user tool), ``elapsed_s`` aside.
- ``ServiceGymSessionFactory``: openenv's harness ``ResourceSessionFactory`` (what TRL's
  ``AsyncGRPOTrainer`` takes as ``harness_session_factory``): each session is a server session
  whose tools are the env's MCP tools; a tool call is a step, its ``ToolResult`` carries the
  reward, and ``verify`` forwards the episode's reward and score.
- ``as_tool_calls(action)``: an env action string as MCP tool calls (a message becomes
  ``respond``), e.g. to play a task's golden route through ``call_tool``.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import gymnasium as gym
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.mcp_types import Tool
from openenv.core.harness import ResourceSession, ResourceSessionFactory, ToolResult, VerifyResult
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from servicegym.envs.environments.base import USER_TOOL
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.integrations.openenv.compat import CLIENT_CONNECT_ASYNC, CLIENT_HEADERS, step_result
from servicegym.envs.running.episodes import EpisodeWorker, Job, PolicyMaker, episode_seed

__all__ = ["DEFAULT_TOKEN_ENV", "RemoteEnv", "ServiceGymClient", "ServiceGymSession", "ServiceGymSessionFactory",
           "SessionPool", "as_tool_calls", "remote_rollouts"]

DEFAULT_TOKEN_ENV = "SERVICEGYM_SERVER_TOKEN"
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _token(token: str | None, token_env: str | None) -> str | None:
    if token is not None:
        return token or None
    return (os.environ.get(token_env) or None) if token_env else None


class ServiceGymClient(EnvClient[Any, dict[str, Any], dict[str, Any]]):
    """One session of a servicegym server (openenv's ``EnvClient`` over ``/ws``).

    ``reset(seed=, task_id=, split=, difficulty=, episode_id=)`` and ``step(action)`` return
    openenv ``StepResult``s whose ``observation`` is the server's observation as a dict (``text``,
    ``messages``, ``tool_results``, ``info``); ``action`` is a raw completion (str), a
    ``ServiceGymAction`` or its dict, or openenv's ``CallToolAction``/``ListToolsAction``.
    """

    def __init__(self, base_url: str, *, token: str | None = None, token_env: str | None = DEFAULT_TOKEN_ENV,
                 connect_timeout_s: float = 10.0, message_timeout_s: float = 120.0,
                 max_message_size_mb: float = 64.0) -> None:
        self._token = _token(token, token_env)
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        # openenv 0.10 sends the headers from its own connect; on openenv-core 0.3 ``connect`` below does
        extra: dict[str, Any] = {"headers": headers} if CLIENT_HEADERS else {}
        super().__init__(base_url, connect_timeout_s=connect_timeout_s, message_timeout_s=message_timeout_s,
                         max_message_size_mb=max_message_size_mb, mode="simulation", **extra)
        self._server_url = base_url

    @property
    def base_url(self) -> str:
        """The server's URL as given (read only, as openenv 0.10's ``EnvClient.base_url``)."""
        return self._server_url

    if not CLIENT_CONNECT_ASYNC:  # openenv-core 0.3: its connect sends no headers
        async def connect(self) -> ServiceGymClient:
            if self._ws is not None:
                return self
            headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
            host = urlsplit(self._ws_url).hostname or ""
            try:
                self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout,
                                            max_size=self._max_message_size, additional_headers=headers,
                                            compression=None, proxy=None if host in _LOOPBACK else True)
            except Exception as err:  # the message names the URL, never the token
                raise ConnectionError(f"cannot connect to {self._ws_url}: {err}") from err
            return self

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._send(message)
        except ConnectionClosed as closed:
            # the server may have said why before it closed (full, idle): that reply is still queued
            try:
                response = await self._receive()
            except Exception:
                raise ConnectionError(f"{self._ws_url} closed the session: {closed}") from closed
        else:
            try:
                response = await self._receive()
            except ConnectionClosed as closed:
                raise ConnectionError(f"{self._ws_url} closed the session: {closed}") from closed
        if response.get("type") == "error":
            data = response.get("data", {})
            raise RuntimeError(f"Server error: {data.get('message', 'Unknown error')} (code: {data.get('code', 'UNKNOWN')})")
        return response

    # ----- openenv's hooks -----
    def _step_payload(self, action: Any) -> dict[str, Any]:
        if isinstance(action, str):
            return {"type": "text", "text": action}
        if isinstance(action, dict):
            return action
        if hasattr(action, "model_dump"):
            return action.model_dump(exclude_none=True)
        raise TypeError(f"an action is a str, a dict or an openenv Action, got {type(action).__name__}")

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[dict[str, Any]]:
        return step_result(payload)

    def _parse_state(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    # ----- conveniences -----
    async def act(self, text: str) -> StepResult[dict[str, Any]]:
        """One turn as the raw completion (what ``env.step(text)`` takes in-process)."""
        return await self.step({"type": "text", "text": text})

    async def call_tool(self, tool_name: str, arguments: dict[str, Any] | None = None) -> StepResult[dict[str, Any]]:
        """One MCP tool call as a turn (``respond`` reaches the user); the observation's
        ``result`` is MCP's tool result."""
        return await self.step({"type": "call_tool", "tool_name": tool_name, "arguments": arguments or {}})

    async def call_tools(self, calls: Iterable[tuple[str, dict[str, Any]] | dict[str, Any]],
                         content: str | None = None) -> StepResult[dict[str, Any]]:
        """Several calls in one turn: ``(name, arguments)`` pairs or ``{"name", "arguments", "id"}``
        (or OpenAI ``tool_calls`` entries); ``content``: the assistant's text beside them."""
        specs = [c if isinstance(c, dict) else {"name": c[0], "arguments": c[1]} for c in calls]
        data: dict[str, Any] = {"type": "call_tools", "calls": specs}
        if content is not None:
            data["content"] = content
        return await self.step(data)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The MCP tool list (``name``, ``description``, ``input_schema``); no env step."""
        result = await self.step({"type": "list_tools"})
        return list(result.observation.get("tools", []))

    async def transcript(self) -> list[dict[str, Any]]:
        """The session's conversation so far in OpenAI chat format."""
        return list((await self.state()).get("messages", []))


class SessionPool:
    """Hands out sessions over several servers in turn (round robin over ``base_urls``), so
    ``concurrency`` sessions spread evenly; ``opened`` counts the sessions given each URL."""

    def __init__(self, base_urls: str | Sequence[str], *, token: str | None = None,
                 token_env: str | None = DEFAULT_TOKEN_ENV, **client_kwargs: Any) -> None:
        urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
        if not urls:
            raise ValueError("SessionPool needs at least one base URL")
        self.urls = urls
        self._token = _token(token, token_env)
        self._client_kwargs = client_kwargs
        self._turn = itertools.cycle(urls)
        self._lock = threading.Lock()
        self.opened: Counter[str] = Counter()

    def next_url(self) -> str:
        with self._lock:
            url = next(self._turn)
            self.opened[url] += 1
            return url

    def client(self) -> ServiceGymClient:
        """A client (not yet connected) of the next server."""
        return ServiceGymClient(self.next_url(), token=self._token, token_env=None, **self._client_kwargs)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[ServiceGymClient]:
        """``async with pool.session() as client:`` a connected session of the next server."""
        client = self.client()
        await client.connect()
        try:
            yield client
        finally:
            await client.close()

    def remote_env(self, env_id: str, env_kwargs: dict[str, Any] | None = None) -> RemoteEnv:
        """A ``RemoteEnv`` on the next server."""
        return RemoteEnv(self.client(), env_id, env_kwargs=env_kwargs)


class RemoteEnv(gym.Env):
    """A Gymnasium env whose episodes run in one session of a servicegym server.

    ``reset(seed=, options={"task_id"|"split"|"difficulty"})`` and ``step(action)`` return what
    the in-process env returns (the server's envs are made with ``user_tool=True``). For policies
    that read the task (the oracle's golden actions) or the initial world, ``task`` and ``world``
    come from a local env of the same id (``env_kwargs``: e.g. the same ``tasks`` file as the
    server's); ``messages`` is fetched from the server.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, client: ServiceGymClient | str, env_id: str, *, env_kwargs: dict[str, Any] | None = None,
                 local: gym.Env | None = None, token: str | None = None,
                 token_env: str | None = DEFAULT_TOKEN_ENV) -> None:
        if isinstance(client, str):
            client = ServiceGymClient(client, token=token, token_env=token_env)
        self.client = client
        self._sync = client.sync()
        self.env_id = env_id
        self._local = local if local is not None else gym.make(env_id, **{"user_tool": True, **(env_kwargs or {})})
        self.observation_space = self._local.observation_space
        self.action_space = self._local.action_space
        self.domain = getattr(self._local.unwrapped, "domain", "")
        self.task_id: str | None = None
        self._task: Any = None
        self._closed = False

    @property
    def task(self) -> Any:
        """The episode's task (from the local env's task source)."""
        if self._task is None and self.task_id is not None:
            self._task = self._local.unwrapped.source.get(self.task_id)
        return self._task

    @property
    def world(self) -> Any:
        """The task's initial world (read only: the episode's world lives on the server)."""
        return self.task.cached_world(self._local.unwrapped.build_world) if self.task is not None else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self._sync.state().get("messages", []))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        options = dict(options or {})
        unknown = set(options) - {"task_id", "split", "difficulty"}
        if unknown:
            raise ValueError(f"reset options {sorted(unknown)} do not go to a server; use task_id, split or difficulty")
        result = self._sync.reset(seed=seed, **{k: v for k, v in options.items() if v is not None})
        obs = result.observation
        info = dict(obs.get("info", {}))
        served = info.pop("env_id", self.env_id)
        if served != self.env_id:
            raise ValueError(f"{self.client.base_url} serves {served}, not {self.env_id}")
        self.task_id, self._task = info.get("task_id"), None
        return obs.get("text", ""), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result = self._sync.step({"type": "text", "text": action})
        obs = result.observation
        info = dict(obs.get("info", {}))
        terminated = bool(info.pop("terminated", False))
        truncated = bool(info.pop("truncated", False))
        return obs.get("text", ""), float(result.reward or 0.0), terminated, truncated, info

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._sync.close()
            finally:
                self._local.close()


def remote_rollouts(base_urls: str | Sequence[str], env_id: str, policy: Any = "oracle", *,
                    task_ids: Sequence[str] | None = None, split: str = "test", limit: int | None = None,
                    trials: int = 1, seed: int = 0, concurrency: int = 4, env_kwargs: dict[str, Any] | None = None,
                    policy_kwargs: dict[str, Any] | None = None, token: str | None = None,
                    token_env: str | None = DEFAULT_TOKEN_ENV) -> list[dict[str, Any]]:
    """Play ``policy`` on each task ``trials`` times on the servers at ``base_urls`` and return
    the records (in task, trial order), as ``servicegym.envs.running.rollouts.collect`` writes
    them: the same episode seeds (``episode_seed(seed, task_id, trial)``), and for the same seeds
    the same records as in-process with ``env_kwargs={"user_tool": True, **env_kwargs}``
    (``elapsed_s`` aside). ``concurrency`` sessions at once, spread over the servers in turn;
    each runs its episodes one after another. ``env_kwargs`` make the local env that gives
    policies the task (use the server's ``tasks`` file, if it has one)."""
    if trials < 1 or concurrency < 1:
        raise ValueError("trials and concurrency must be at least 1")
    local_kwargs = {"user_tool": True, **(env_kwargs or {})}
    maker = PolicyMaker.from_policy(policy, None, policy_kwargs)
    if task_ids is None:
        probe = gym.make(env_id, **local_kwargs)
        task_ids = probe.unwrapped.task_ids(split)
        probe.close()
    ids = list(task_ids)[:limit] if limit else list(task_ids)
    jobs = [Job(t, k, episode_seed(seed, t, k)) for t in ids for k in range(trials)]
    pool = SessionPool(base_urls, token=token, token_env=token_env)
    todo: queue.SimpleQueue[Job] = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    lines: dict[tuple[str, int], str] = {}

    def work() -> None:
        worker = EpisodeWorker(env_id, local_kwargs, maker)
        local = worker.env
        worker.env = RemoteEnv(pool.client(), env_id, local=local)
        try:
            while True:
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    return
                result = worker.run(job)
                lines[(job.task_id, job.trial)] = result.line
        finally:
            worker.env.close()

    n = min(concurrency, len(jobs))
    with ThreadPoolExecutor(max_workers=max(n, 1), thread_name_prefix="servicegym-remote") as ex:
        for f in [ex.submit(work) for _ in range(n)]:
            f.result()
    return [json.loads(lines[(j.task_id, j.trial)]) for j in jobs]


def as_tool_calls(action: str) -> list[tuple[str, dict[str, Any]]]:
    """An env action string as MCP tool calls ``(name, arguments)``: its tool calls, or, for a
    message to the user, one call of ``respond`` (the server's envs have the user tool)."""
    parsed = parse_action(action)
    if parsed.tool_calls:
        return [(c.name, c.arguments if isinstance(c.arguments, dict) else {}) for c in parsed.tool_calls]
    return [(USER_TOOL, {"message": parsed.message or action})]


# ----- openenv's harness (TRL's AsyncGRPOTrainer: harness_session_factory) -----------------------
class ServiceGymSession(ResourceSession):
    """One rollout's session on a server, as openenv's harness drives it: the env's MCP tools
    (``respond`` included: the user's reply is its result; ``###STOP###`` in the message ends
    the conversation), one env step per ``call_tool``, each ``ToolResult`` with the step's
    ``reward`` (and on the last step ``score``, ``success``) in ``metadata``."""

    def __init__(self, client: ServiceGymClient, reset_kwargs: dict[str, Any]) -> None:
        self._client = client.sync()
        try:
            first = self._client.reset(**reset_kwargs)
        except Exception:
            self._client.close()
            raise
        obs = first.observation
        self.info = dict(obs.get("info", {}))
        self._initial = list(obs.get("messages", []))
        self._tools = [Tool(name=t["function"]["name"], description=t["function"].get("description", ""),
                            input_schema=t["function"].get("parameters", {})) for t in self.info.get("tools", [])]
        self.reward = 0.0
        self.done = False
        self.score: dict[str, Any] = {}
        self._closed = False

    def initial_messages(self) -> list[dict[str, Any]]:
        return list(self._initial)

    def list_tools(self) -> list[Tool]:
        return list(self._tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name in ("reset", "step", "state", "close"):
            raise KeyError(f"Reserved orchestration tool: {name}")
        if self.done:
            return ToolResult(data=None, done=True, metadata={"reward": self.reward}, error="the episode has ended")
        result = self._client.call_tool(name, dict(arguments))
        obs = result.observation
        self.reward = float(result.reward or 0.0)
        self.done = bool(result.done)
        metadata: dict[str, Any] = {"reward": self.reward, "is_error": bool((obs.get("result") or {}).get("is_error"))}
        info = obs.get("info", {})
        if "score" in info:
            self.score = dict(info["score"])
            metadata.update(score=self.score, success=info.get("success"),
                            termination_reason=info.get("termination_reason"))
        return ToolResult(data=(obs.get("result") or {}).get("data", obs.get("text", "")), done=self.done,
                          metadata=metadata)

    def verify(self, transcript: list[dict[str, Any]], final_state: Any | None = None) -> VerifyResult:
        metrics = {k: v for k, v in self.score.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        return VerifyResult(env_reward=self.reward, done=self.done, metrics=metrics,
                            artifacts={"task_id": self.info.get("task_id"), "transcript_length": len(transcript)})

    def transcript(self) -> list[dict[str, Any]]:
        """The server's transcript of the episode (OpenAI format)."""
        return list(self._client.state().get("messages", []))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._client.close()


class ServiceGymSessionFactory(ResourceSessionFactory):
    """openenv's harness ``ResourceSessionFactory`` over servicegym servers (round robin over
    ``base_urls``). ``create(task, seed, episode_id)``: ``task`` is a task id, a dataset row with
    ``task_id`` (and ``seed``, used when ``seed`` is None; ``servicegym dataset`` writes such
    rows) or anything else (a prompt): then the server draws a task of ``split`` from ``seed``,
    so a GRPO group given one seed shares its task. TRL: ``AsyncGRPOTrainer(...,
    harness_session_factory=lambda **_: ServiceGymSessionFactory(urls))``."""

    def __init__(self, base_urls: str | Sequence[str], *, split: str | None = None, token: str | None = None,
                 token_env: str | None = DEFAULT_TOKEN_ENV, **client_kwargs: Any) -> None:
        self.pool = SessionPool(base_urls, token=token, token_env=token_env, **client_kwargs)
        self.split = split

    def create(self, task: Any, seed: int | None = None, episode_id: str | None = None) -> ServiceGymSession:
        kwargs: dict[str, Any] = {}
        if isinstance(task, str):
            kwargs["task_id"] = task
        elif isinstance(task, dict) and task.get("task_id"):
            kwargs["task_id"] = task["task_id"]
            if seed is None and task.get("seed") is not None:
                seed = int(task["seed"])
        elif self.split is not None:
            kwargs["split"] = self.split
        if seed is not None:
            kwargs["seed"] = int(seed)
        if episode_id is not None:
            kwargs["episode_id"] = str(episode_id)[:255]
        return ServiceGymSession(self.pool.client(), kwargs)
