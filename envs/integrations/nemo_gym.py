"""NeMo-Gym adapter: every servicegym env as a NeMo-Gym *resources server*.

NeMo-Gym (https://github.com/NVIDIA-NeMo/Gym; ``nemo-gym`` >= 0.4, Python >= 3.12) runs three kinds
of servers: a model server (``/v1/responses``), an agent server that plays a rollout, and a
resources server that holds the environment. Written against nemo-gym 0.4.0, read in its code:
``nemo_gym/base_resources_server.py`` (``SimpleResourcesServer``, ``BaseResourcesServerConfig``,
``BaseSeedSessionRequest`` / ``BaseVerifyRequest`` / ``BaseVerifyResponse``),
``nemo_gym/server_utils.py`` (the session cookie, ``SESSION_ID_KEY``; ``run_webserver``),
``responses_api_agents/simple_agent/app.py`` (the rollout loop) and the stateful example servers
(``resources_servers/example_session_state_mgmt``, ``workplace_assistant``). What the simple agent
does for one dataset row:

1. ``POST /seed_session`` with the whole row (``responses_create_params`` and every other field);
   the resources server's session middleware gives the rollout a session id (a signed cookie that
   the agent sends back on every later call);
2. calls the model with ``responses_create_params`` (``input``: the chat so far; ``tools``: the
   Responses API function tools) and, for every ``function_call`` in the output, ``POST
   /{name}`` on the resources server with the parsed arguments as the JSON body; the HTTP body of
   the reply is the ``function_call_output`` the model reads; repeats until the model replies
   without a tool call (or ``max_steps``);
3. ``POST /verify`` with the row and the whole ``response``; the reply's ``reward`` is the
   rollout's reward, and every other numeric field of it is averaged by ``/aggregate_metrics``.

``ServiceGymResourcesServer`` (importable where ``nemo_gym`` is, Python 3.12+) follows that:

- ``/seed_session`` makes the session's own env (``gym.make(env_id, user_tool=True,
  **env_kwargs)``; never shared between sessions) and resets it to the row's ``task_id`` and
  ``seed``; ``env_id`` is the row's, else the server config's;
- ``POST /{tool}``, any tool name: one ``env.step`` with that call (``astep``: an LLM user's reply
  is awaited). The simulated user is the tool ``respond(message)`` (``user_tool=True``), since a
  reply without a tool call ends NeMo-Gym's rollout; its result is the user's reply. The reply
  body is the call's text (the env's observation without its tag; a tool error starts with
  ``Error:``); the step that ends the episode adds ``[The conversation has ended (REASON).]`` and a
  later call runs nothing (``ENDED``). An unknown tool or a bad argument is the env's own error
  observation, never an HTTP error;
- ``/verify`` ends an episode that is still open (the agent sends ``###STOP###``, as the TRL
  adapter does), then answers ``reward`` = the episode's strict success (1.0 or 0.0: every rubric
  item; Payments G, P and F; Workspace every session), ``success``, ``termination_reason``,
  ``steps``, ``tool_errors``, ``score`` (every component, as ``info["score"]``) and, at the top
  level, each score component that is a reward (``score_keys`` less ``count_keys``:
  ``rubric_fraction``; ``goal``, ``process``, ``protection``, ``strict``; ``proc``, ``comp``), so
  NeMo-Gym's metrics average them; then closes the session's env. ``judge_error`` is ``""``
  unless the LLM judge (``judge="llm"``) could not score the episode (reward 0.0 then).

A model endpoint inside the episode (``user="llm"``, ``judge="llm"``) never makes an endpoint
answer with an HTTP error: each call is bounded by its ``LLMConfig`` (retries, ``deadline_s``), and a
failed LLM user ends the episode, the ``respond`` result saying ``Error: the user simulator could
not reply: ...`` and ``[The conversation has ended (user_error).]``; ``/verify`` then reports
``termination_reason="user_error"``.

Sessions live in the server's process (run it with one worker, NeMo-Gym's default); at most
``max_sessions`` are open (config, default 4096): seeding one more closes the least recently used.

The servicegym side has no NeMo-Gym import and runs on Python 3.10+: ``ServiceGymSession`` (one
env), ``SessionRegistry`` (session id -> session: ``seed``, ``call`` / ``acall``, ``verify`` /
``averify``), ``responses_tools`` (our OpenAI function schemas as Responses API function tools)
and ``nemo_gym_rows`` (dataset rows in NeMo-Gym's JSONL format: ``responses_create_params``
with ``input``, the system prompt as ``trl_prompt`` words it for a rollout where a reply without a
tool call ends the episode, and the user's opening, and ``tools``; ``env_id``, ``task_id``,
``seed``, ``split``, ``domain``; ``agent_ref``)::

    python -m servicegym.envs.integrations.nemo_gym rows --env servicegym/Delivery-v0 --split train --n 1000 --out train.jsonl
    python -m servicegym.envs.integrations.nemo_gym serve   # what examples/nemo_gym/.../app.py runs

``serve`` first checks the interpreter and that nemo-gym is installed (``preflight.require_nemo_gym``:
one sentence, exit status 2); NeMo-Gym's ``gym env start`` runs it with the server's config in its
environment variables (``examples/nemo_gym``: the server directory, config and example rows).

No ``from __future__ import annotations`` here: FastAPI reads the endpoints' annotations at runtime,
and the request models are classes local to ``_server_classes``.
"""

import argparse
import json
import sys
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from servicegym.envs.environments.base import STOP
from servicegym.envs.integrations.dataset import task_rows, write_rows
from servicegym.envs.integrations.preflight import nemo_gym_problem, require_nemo_gym
from servicegym.envs.integrations.trl import ENDED, result_text, trl_prompt
from servicegym.envs.running.vector import resolve_env_id
from servicegym.envs.tasks.sources import SPLITS

__all__ = [
    "DEFAULT_AGENT", "DEFAULT_ENV", "ROW_FIELDS", "ServiceGymSession", "SessionRegistry", "main", "nemo_gym_rows",
    "responses_tools",
]

DEFAULT_ENV = "servicegym/Delivery-v0"
DEFAULT_AGENT = "servicegym_simple_agent"  # the agent instance of examples/nemo_gym's config
DEFAULT_MAX_SESSIONS = 4096
ROW_FIELDS = ("responses_create_params", "env_id", "task_id", "seed", "split", "domain", "agent_ref")
_FINISH_LIMIT = 200  # ###STOP### messages to end an episode (a Workspace episode ends one session per STOP)


# ----- schemas and rows ------------------------------------------------------------------------

def responses_tools(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat-completions function schemas (``{"type": "function", "function": {...}}``, what
    ``env.unwrapped.tool_schemas()`` gives) as Responses API function tools, the form
    ``responses_create_params.tools`` holds: ``{"type": "function", "name", "description",
    "parameters", "strict": false}`` (not strict: our tools have optional parameters)."""
    out = []
    for schema in schemas:
        fn = schema.get("function", schema)
        out.append({"type": "function", "name": fn["name"], "description": fn.get("description") or "",
                    "parameters": fn.get("parameters") or {"type": "object", "properties": {}}, "strict": False})
    return out


def nemo_gym_rows(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
                  env_kwargs: dict[str, Any] | None = None, agent_name: str | None = DEFAULT_AGENT
                  ) -> list[dict[str, Any]]:
    """``task_rows`` (envs made with ``user_tool=True``) in NeMo-Gym's JSONL format: one row per
    task, ``responses_create_params`` (``input``: the system prompt, its tool-call line replaced
    by ``trl_prompt``'s, and the user's opening; ``tools``: ``responses_tools`` of the env's
    schemas, ``respond`` included), the fields ``seed_session`` reads (``env_id``, ``task_id``,
    ``seed``), ``split``, ``domain`` and ``agent_ref`` (which agent server plays the row; ``None``
    leaves it out, for ``gym eval run --agent``)."""
    rows = task_rows(env_id, split, n, seed, {**(env_kwargs or {}), "user_tool": True})
    out = []
    for row in rows:
        opening = row["prompt"][-1]["content"]
        params = {"input": [{"role": "system", "content": trl_prompt(row["system_prompt"])},
                            {"role": "user", "content": opening}],
                  "tools": responses_tools(json.loads(row["tools"]))}
        item: dict[str, Any] = {"responses_create_params": params, "env_id": row["env_id"], "task_id": row["task_id"],
                                "seed": row["seed"], "split": row["split"], "domain": row["domain"]}
        if agent_name:
            item["agent_ref"] = {"type": "responses_api_agents", "name": agent_name}
        out.append(item)
    return out


# ----- one session: one env --------------------------------------------------------------------

def _row_value(row: Mapping[str, Any], key: str) -> Any:
    """A row's field, at the top level or under ``verifier_metadata`` / ``extra_info``."""
    if row.get(key) is not None:
        return row[key]
    for inner in ("verifier_metadata", "extra_info"):
        nested = row.get(inner)
        if isinstance(nested, Mapping) and nested.get(key) is not None:
            return nested[key]
    return None


class ServiceGymSession:
    """One NeMo-Gym session's episode: its own env (``gym.make(env_id, user_tool=True,
    **env_kwargs)``), reset to a row's task and seed; tool calls step it; ``verify`` scores it."""

    def __init__(self, env_id: str = DEFAULT_ENV, env_kwargs: dict[str, Any] | None = None) -> None:
        self.env_id = resolve_env_id(env_id)
        self.env = gym.make(self.env_id, **{**(env_kwargs or {}), "user_tool": True})
        self.task_id: str | None = None
        self.seed: int | None = None
        self.started = False
        self.done = True
        self.success = False
        self.score: dict[str, Any] = {}
        self.reason = ""
        self.judge_error = ""
        self.steps = 0
        self.tool_errors = 0
        self.last_used = time.monotonic()

    # ----- reset ---------------------------------------------------------------------------
    def _options(self, task_id: Any, seed: Any) -> tuple[int | None, dict[str, Any] | None]:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        if task_id is not None and (not isinstance(task_id, str) or not task_id):
            raise ValueError(f"task_id must be a non-empty string, got {task_id!r}")
        return seed, ({"task_id": task_id} if task_id else None)

    def _started(self, info: dict[str, Any], seed: int | None) -> dict[str, Any]:
        self.task_id, self.seed = info["task_id"], seed
        self.started, self.done, self.success, self.score, self.reason = True, False, False, {}, ""
        self.judge_error = ""
        self.steps = self.tool_errors = 0
        return {"env_id": self.env_id, "task_id": self.task_id, "seed": seed, "domain": info["domain"]}

    def reset(self, task_id: str | None = None, seed: int | None = None) -> dict[str, Any]:
        """Reset to ``task_id`` (a random task of the env's split when None) with ``seed``; the
        episode's ``env_id``, ``task_id``, ``seed`` and ``domain``."""
        seed, options = self._options(task_id, seed)
        _, info = self.env.reset(seed=seed, options=options)
        return self._started(info, seed)

    async def areset(self, task_id: str | None = None, seed: int | None = None) -> dict[str, Any]:
        """``reset`` awaiting the env's ``areset`` (an LLM user's opening runs in a thread)."""
        seed, options = self._options(task_id, seed)
        _, info = await self.env.unwrapped.areset(seed=seed, options=options)
        return self._started(info, seed)

    # ----- tool calls ----------------------------------------------------------------------
    def _action(self, name: str, arguments: Any) -> str:
        self.last_used = time.monotonic()
        return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, default=str)

    def _stepped(self, result: tuple[str, float, bool, bool, dict[str, Any]]) -> str:
        obs, _, terminated, truncated, info = result
        self.steps += 1
        self.tool_errors = int(info.get("tool_errors", self.tool_errors))
        text = result_text(obs)
        if terminated or truncated:
            self._end(info)
            text = f"{text}\n[The conversation has ended ({self.reason}).]"
        return text

    def call(self, name: str, arguments: Any) -> str:
        """One tool call as one env step; the text the model reads (``ENDED`` once the episode is over)."""
        if self.done:
            return ENDED
        return self._stepped(self.env.step(self._action(name, arguments)))

    async def acall(self, name: str, arguments: Any) -> str:
        """``call`` awaiting the env's ``astep`` (what the server runs)."""
        if self.done:
            return ENDED
        return self._stepped(await self.env.unwrapped.astep(self._action(name, arguments)))

    # ----- the end ---------------------------------------------------------------------------
    def _end(self, info: dict[str, Any]) -> None:
        self.done = True
        self.success = bool(info.get("success"))
        self.score = dict(info.get("score") or {})
        self.reason = str(info.get("termination_reason") or "ended")
        self.judge_error = str(info.get("judge_error") or "")

    def finish(self) -> None:
        """End an open episode as if the agent had sent ###STOP### (Workspace: one per session)."""
        for _ in range(_FINISH_LIMIT):
            if not self.started or self.done:
                return
            self._after_stop(self.env.step(STOP))
        self._check_finished()

    async def afinish(self) -> None:
        """``finish`` awaiting ``astep``."""
        for _ in range(_FINISH_LIMIT):
            if not self.started or self.done:
                return
            self._after_stop(await self.env.unwrapped.astep(STOP))
        self._check_finished()

    def _after_stop(self, out: tuple) -> None:
        *_, terminated, truncated, info = out
        if (terminated or truncated) and "score" in info:
            self._end(info)

    def _check_finished(self) -> None:
        if self.started and not self.done:
            raise RuntimeError(f"{self.env_id}: the episode did not end after {_FINISH_LIMIT} {STOP} messages")

    def result(self) -> dict[str, Any]:
        """What ``/verify`` adds to the row: ``reward`` (strict success, 1.0/0.0), ``success``,
        ``termination_reason``, ``judge_error`` (``""`` unless the LLM judge could not score the
        episode), ``steps``, ``tool_errors``, ``score`` (every component) and each reward component
        of ``score_keys`` (not the counts of ``count_keys``) at the top level."""
        u = self.env.unwrapped
        out: dict[str, Any] = {"reward": 1.0 if self.success else 0.0, "success": self.success,
                               "termination_reason": self.reason, "judge_error": self.judge_error,
                               "steps": self.steps, "tool_errors": self.tool_errors,
                               "score": _jsonable(self.score)}
        counts = set(u.count_keys)
        for key in u.score_keys:
            value = self.score.get(key)
            if key not in counts:
                out[key] = float(value) if isinstance(value, (bool, int, float)) else 0.0
        return out

    def close(self) -> None:
        self.env.close()


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


NO_SESSION = {"reward": 0.0, "success": False, "termination_reason": "no_session", "judge_error": "", "steps": 0,
              "tool_errors": 0, "score": {}}
"""``/verify`` for a session that was never seeded (or already verified, or evicted)."""


class SessionRegistry:
    """Session id -> ``ServiceGymSession``: what the resources server keeps (one env per session,
    never shared). ``env_id`` and ``env_kwargs`` are the defaults for rows that name no env."""

    def __init__(self, env_id: str = DEFAULT_ENV, env_kwargs: dict[str, Any] | None = None,
                 max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.env_id = resolve_env_id(env_id)
        self.env_kwargs = {k: v for k, v in (env_kwargs or {}).items() if k != "user_tool"}
        self.max_sessions = max_sessions
        self.sessions: OrderedDict[str, ServiceGymSession] = OrderedDict()

    def __len__(self) -> int:
        return len(self.sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.sessions

    def _new(self, session_id: str, row: Mapping[str, Any]) -> tuple[ServiceGymSession, Any, Any]:
        env_id = _row_value(row, "env_id") or self.env_id
        session = ServiceGymSession(str(env_id), self.env_kwargs)
        self.drop(session_id)
        while len(self.sessions) >= self.max_sessions:  # the least recently used goes
            _, old = self.sessions.popitem(last=False)
            old.close()
        self.sessions[session_id] = session
        return session, _row_value(row, "task_id"), _row_value(row, "seed")

    def seed(self, session_id: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """A new env for ``session_id`` (a session seeded again starts over), reset to the row's
        ``task_id`` and ``seed`` (top level, or under ``verifier_metadata`` / ``extra_info``)."""
        session, task_id, seed = self._new(session_id, row)
        try:
            return session.reset(task_id, seed)
        except BaseException:
            self.drop(session_id)
            raise

    async def aseed(self, session_id: str, row: Mapping[str, Any]) -> dict[str, Any]:
        """``seed`` awaiting the env's ``areset``."""
        session, task_id, seed = self._new(session_id, row)
        try:
            return await session.areset(task_id, seed)
        except BaseException:
            self.drop(session_id)
            raise

    def get(self, session_id: str) -> ServiceGymSession | None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions.move_to_end(session_id)
        return session

    def call(self, session_id: str, name: str, arguments: Any) -> str:
        """The session's tool call (``NOT_SEEDED`` text for a session that was never seeded)."""
        session = self.get(session_id)
        return NOT_SEEDED if session is None else session.call(name, arguments)

    async def acall(self, session_id: str, name: str, arguments: Any) -> str:
        session = self.get(session_id)
        return NOT_SEEDED if session is None else await session.acall(name, arguments)

    def verify(self, session_id: str) -> dict[str, Any]:
        """End the session's episode if open, score it and close its env (``NO_SESSION`` for an
        unknown session)."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            return dict(NO_SESSION)
        try:
            session.finish()
            return session.result()
        finally:
            session.close()

    async def averify(self, session_id: str) -> dict[str, Any]:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return dict(NO_SESSION)
        try:
            await session.afinish()
            return session.result()
        finally:
            session.close()

    def drop(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def close(self) -> None:
        while self.sessions:
            self.sessions.popitem()[1].close()


NOT_SEEDED = "Error: this session has no episode (seed_session was not called); nothing was run."


# ----- the NeMo-Gym server (Python 3.12+, nemo-gym installed) -----------------------------------

def _server_classes() -> dict[str, Any]:
    """Build the NeMo-Gym classes on NeMo-Gym's own bases (imported here, not at module import)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import PlainTextResponse
    from nemo_gym.base_resources_server import (
        BaseResourcesServerConfig,
        BaseSeedSessionRequest,
        BaseSeedSessionResponse,
        BaseVerifyRequest,
        BaseVerifyResponse,
        SimpleResourcesServer,
    )
    from nemo_gym.server_utils import SESSION_ID_KEY
    from pydantic import ConfigDict, Field

    class ServiceGymResourcesServerConfig(BaseResourcesServerConfig):
        """The resources server's config (its YAML block): the default ``env_id`` (a row's own
        ``env_id`` wins), ``env_kwargs`` for ``gym.make`` (``user_tool=True`` is always added) and
        ``max_sessions``."""

        env_id: str = DEFAULT_ENV
        env_kwargs: dict[str, Any] = Field(default_factory=dict)
        max_sessions: int = DEFAULT_MAX_SESSIONS

    class ServiceGymSeedSessionRequest(BaseSeedSessionRequest):
        model_config = ConfigDict(extra="allow")  # the whole row comes: responses_create_params, agent_ref...

        env_id: str | None = None
        task_id: str | None = None
        seed: int | None = None

    class ServiceGymSeedSessionResponse(BaseSeedSessionResponse):
        env_id: str
        task_id: str
        seed: int | None = None
        domain: str

    class ServiceGymVerifyRequest(BaseVerifyRequest):
        model_config = ConfigDict(extra="allow")

    class ServiceGymVerifyResponse(BaseVerifyResponse):
        model_config = ConfigDict(extra="allow")

        success: bool = False
        termination_reason: str = ""
        steps: int = 0
        judge_error: str = ""
        tool_errors: int = 0
        score: dict[str, Any] = Field(default_factory=dict)

    class ServiceGymResourcesServer(SimpleResourcesServer):
        """servicegym envs behind NeMo-Gym's resources-server endpoints (module docstring)."""

        config: ServiceGymResourcesServerConfig
        registry: Any = Field(default=None, exclude=True)

        def model_post_init(self, context: Any) -> None:
            super().model_post_init(context)
            self.registry = SessionRegistry(self.config.env_id, self.config.env_kwargs, self.config.max_sessions)

        def setup_webserver(self) -> FastAPI:
            app = super().setup_webserver()  # /seed_session, /verify, /aggregate_metrics first
            app.post("/{tool_name}")(self.call_tool)
            return app

        async def seed_session(self, request: Request,
                               body: ServiceGymSeedSessionRequest) -> ServiceGymSeedSessionResponse:
            started = await self.registry.aseed(request.session[SESSION_ID_KEY], body.model_dump())
            return ServiceGymSeedSessionResponse(**started)

        async def call_tool(self, tool_name: str, request: Request) -> PlainTextResponse:
            try:
                arguments = await request.json()
            except ValueError:
                arguments = {}
            text = await self.registry.acall(request.session[SESSION_ID_KEY], tool_name, arguments)
            return PlainTextResponse(text)

        async def verify(self, request: Request, body: ServiceGymVerifyRequest) -> ServiceGymVerifyResponse:
            result = await self.registry.averify(request.session[SESSION_ID_KEY])
            return ServiceGymVerifyResponse(**{**body.model_dump(), **result})

    return {cls.__name__: cls for cls in (ServiceGymResourcesServerConfig, ServiceGymSeedSessionRequest,
                                          ServiceGymSeedSessionResponse, ServiceGymVerifyRequest,
                                          ServiceGymVerifyResponse, ServiceGymResourcesServer)}


_NEMO_GYM_NAMES = ("ServiceGymResourcesServerConfig", "ServiceGymSeedSessionRequest", "ServiceGymSeedSessionResponse",
                   "ServiceGymVerifyRequest", "ServiceGymVerifyResponse", "ServiceGymResourcesServer")
_built: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """The NeMo-Gym classes, built on first use (``from ... import ServiceGymResourcesServer``); where
    nemo-gym cannot run, an ImportError that says what to install."""
    if name not in _NEMO_GYM_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _built:
        problem = nemo_gym_problem()
        if problem is not None:
            raise ImportError(problem)
        _built.update(_server_classes())
    return _built[name]


# ----- command line ------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """``rows``: ``nemo_gym_rows`` as JSON lines; ``serve``: the resources server, as NeMo-Gym's
    ``gym env start`` runs it (the check of ``require_nemo_gym`` first)."""
    parser = argparse.ArgumentParser(prog="python -m servicegym.envs.integrations.nemo_gym",
                                     description="servicegym as a NeMo-Gym resources server")
    sub = parser.add_subparsers(dest="command", required=True)
    rows = sub.add_parser("rows", help="NeMo-Gym dataset rows (JSONL) for a split of an env")
    rows.add_argument("--env", required=True, help="a servicegym env id, e.g. servicegym/Delivery-v0")
    rows.add_argument("--split", default="train", choices=SPLITS)
    rows.add_argument("--n", type=int, default=None, help="rows (default: the whole split; train needs --n)")
    rows.add_argument("--seed", type=int, default=0)
    rows.add_argument("--agent", default=DEFAULT_AGENT, help=f"agent_ref name (default {DEFAULT_AGENT}; '' for none)")
    rows.add_argument("--tasks", default=None, help="a task file (VitaBench JSON) instead of the built-in tasks")
    rows.add_argument("--out", required=True, help="output file (.jsonl)")
    sub.add_parser("serve", help="run the resources server (under `gym env start`, which passes its config)")
    args = parser.parse_args(argv)
    if args.command == "serve":
        require_nemo_gym()
        __getattr__("ServiceGymResourcesServer").run_webserver()
        return 0
    if args.split == "train" and args.n is None and args.tasks is None:
        parser.error("--split train needs --n (generated tasks are unlimited)")
    try:
        out = nemo_gym_rows(args.env, args.split, args.n, args.seed,
                            {"tasks": args.tasks} if args.tasks else None, args.agent or None)
    except (ValueError, KeyError, OSError) as err:
        parser.exit(2, f"error: {err}\n")
    path = write_rows(out, args.out)
    print(f"{len(out)} rows ({resolve_env_id(args.env)}) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
