"""verifiers adapter: every servicegym env as a verifiers 0.4 taskset (``pip install
"servicegym[verifiers]"``; ``verifiers>=0.4,<0.5``, its ``verifiers.v1`` API).

verifiers 0.4 splits an environment into a *taskset* (tasks and their scoring), a *harness* (the
agent program: it calls the model through verifiers' interception server and the task's tools
over MCP) and a *runtime* (where the harness and the tool servers run). This module is an
installable taskset plugin: its ``__all__`` exports one ``Taskset`` subclass (``ServiceGymTaskset``)
and one ``Harness`` subclass (``ServiceGymChatHarness``, the taskset's default harness), so
verifiers' loaders find it by its id, ``TASKSET_ID`` (``servicegym-verifiers``; see there for the
top-level alias that id needs), and ``load_environment(env_id, split=..., ...)`` builds the
``vf.Env`` in Python. verifiers' CLI runs it once this module is imported::

    python -c "import servicegym.envs.integrations.verifiers, sys; from verifiers.v1.cli.eval.main import main; sys.exit(main())" \
        servicegym-verifiers --env.taskset.env-id servicegym/Travel-v0 ...

What maps to what:

- a task: one servicegym task of a split (``train`` needs ``n``; ``dev``, ``test``) or of a task
  file (``tasks=PATH``) and the seed ``episode_seed(seed, task_id, 0)`` the dataset rows use. Its
  ``prompt`` is the user's opening, its ``system_prompt`` the env's with the tool-call line
  replaced as for TRL (``trl_prompt``: talk to the user through ``respond``; a reply without a tool
  call ends the episode).
- tools: per rollout verifiers launches one MCP tool server (``Task.toolsets``, in its own
  process and runtime); ours (``ServiceGymToolset``) builds one servicegym env for that rollout
  (``user_tool=True``, never shared), resets it to the task and serves exactly the env's tool
  schemas (``env.unwrapped.tool_schemas()``, bare names, ``respond`` included); each call is one
  ``env.step``, its result the text of the call's block (``is_error`` for a tool error).
- the simulated user: the ``respond(message)`` tool, whose result is the user's reply. verifiers'
  own user channel (``Env.run`` driving ``agent.interaction(task)`` turn by turn, as its
  ``user-sim`` env does) runs in the eval process, but the tools, and so the world the user
  reacts to, live in the per-rollout tool-server process; the user is part of ``env.step``, so
  it has to live where the tools do. A tool keeps one env per rollout, and a rollout stays a plain
  single-agent run that any MCP harness and trainer runs as it is.
- the end: the env ends the episode (the user or the agent says ``###STOP###``, ``max_steps``,
  ``max_errors``, ``user_error`` when an LLM user's endpoint failed); a ``@vf.stop`` then ends the
  rollout. A second stop, ``turns_without_env_steps``, ends a rollout whose model keeps making
  turns that never reach the env (tool calls with arguments that are not JSON, which the harness
  answers itself): ``max_errors`` more model turns than env steps, so such a model cannot loop
  forever under verifiers' default of no turn limit. A failing policy endpoint is verifiers' own
  to report (``trace.stop_condition`` ``provider_error``, ``trace.errors``); a failing LLM judge
  (``judge="llm"``) is ``state.judge_error``, the episode then scored 0.0. A rollout that ends while the
  conversation is open (a reply without a tool call, a turn or time limit) is finished as TRL's
  adapter does: ``Task.finalize`` replays the rollout's actions (recorded in the rollout's state)
  on a fresh env in the eval process and sends ``###STOP###``, so the env scores it.
- reward: one ``@vf.reward`` ``success`` (weight 1), the episode's strict success (1.0/0.0: all
  rubric items; Payments G and P and F; Workspace every session). The score components
  (``env.unwrapped.score_keys`` less the counts: ``rubric_fraction``, ``goal``, ``process``,
  ``protection``, ``proc``, ``comp``...) are ``@vf.metric`` values: logged, never summed into the
  reward (verifiers' metrics carry no weight, which is its weight 0); the counts
  (``count_keys``) are logged as ``n_<key>``, with ``steps`` and ``tool_errors``.

The default harness, ``ServiceGymChatHarness``, is verifiers' own ``null`` chat program (the
tool-calling loop over MCP that ``--env.agent.harness.id null`` runs) executed in the eval
process instead of a ``uv``-provisioned subprocess: no shell tool for the model, nothing to
install per rollout. Any MCP harness works (``--env.agent.harness.id null``, ``bash``...).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

try:
    import verifiers.v1 as vf
    from mcp.types import CallToolResult, TextContent, Tool
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("the verifiers adapter needs verifiers 0.4: pip install 'servicegym[verifiers]'") from err

import gymnasium as gym

from servicegym.envs.environments.base import STOP
from servicegym.envs.running.vector import resolve_env_id

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["TASKSET_ID", "ServiceGymChatHarness", "ServiceGymTaskset", "load_environment"]

TASKSET_ID = "servicegym-verifiers"
"""The taskset id (``--env.taskset.id``). verifiers resolves an id by importing it as a top-level
module (``servicegym_verifiers``) and the wheel ships only ``servicegym``, so importing this module
registers that name as an alias of itself (``sys.modules``): import it before verifiers loads the
id (``load_environment`` does)."""
_ALIAS = TASKSET_ID.replace("-", "_")
ENDED = "The conversation has ended; nothing was run. Reply without a tool call to finish."
FINISH_LIMIT = 200  # ###STOP### messages to end an open episode (a Workspace episode ends one session per STOP)
_BLOCK = re.compile(
    r'<(?P<tag>tool_result|tool_error|user|error)(?: name="[^"]*" call_id="[^"]*")?>(?P<body>.*?)</(?P=tag)>'
    r"(?P<rest>(?:\n<(?:tool_result|tool_error|user|error|session)\b.*)?)\Z",
    re.DOTALL,
)


def _make_env(env_id: str, env_kwargs: dict[str, Any]) -> gym.Env:
    kwargs = {k: v for k, v in env_kwargs.items() if k != "user_tool"}
    return gym.make(env_id, **kwargs, user_tool=True)


@cache
def _env_class(env_id: str) -> type:
    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        entry = getattr(__import__(module, fromlist=[name]), name)
    return entry


def _max_errors(env_id: str, env_kwargs: dict[str, Any]) -> int:
    """The env's ``max_errors``: the task's own argument, else the env class's default."""
    if env_kwargs.get("max_errors") is not None:
        return int(env_kwargs["max_errors"])
    for klass in _env_class(env_id).__mro__:
        init = klass.__dict__.get("__init__")
        param = inspect.signature(init).parameters.get("max_errors") if init is not None else None
        if param is not None and isinstance(param.default, int):
            return param.default
    return 10


def _result(obs: str) -> tuple[str, bool]:
    """The text of the call's block and whether it is an error; what followed the block (the user's
    goodbye, a new session) is kept as tagged text."""
    m = _BLOCK.match(obs)
    if m is None:
        return obs, False
    error = m.group("tag") in ("tool_error", "error")
    body = m.group("body")
    rest = m.group("rest").strip()
    return (f"{body}\n{rest}" if rest else body), error


# ----- task data, rollout state, tool server ------------------------------------------------------

class ServiceGymData(vf.TaskData):
    """One servicegym episode: the env, the task and the seed its rollout resets to."""

    env_id: str
    task_id: str
    seed: int | None = None
    env_kwargs: dict[str, Any] = {}


class ServiceGymState(vf.State):
    """What the rollout's tool server reports after each call (verifiers' state channel), and the
    host's finished episode: whether the env ended it, its strict success and numeric score, and the
    actions stepped so far (to finish an episode the rollout left open)."""

    done: bool = False
    success: bool = False
    score: dict[str, float] = {}
    termination_reason: str = ""
    judge_error: str = ""
    steps: int = 0
    tool_errors: int = 0
    actions: list[str] = []


def _numeric(score: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in score.items() if isinstance(v, (bool, int, float))}


def _record_end(state: ServiceGymState, info: dict[str, Any]) -> None:
    state.done = True
    state.success = bool(info.get("success"))
    state.score = _numeric(dict(info.get("score") or {}))
    state.termination_reason = str(info.get("termination_reason") or "ended")
    state.judge_error = str(info.get("judge_error") or "")
    state.tool_errors = int(info.get("tool_errors", state.tool_errors))


class ServiceGymToolset(vf.Toolset[vf.ToolsetConfig, ServiceGymState]):
    """The per-rollout MCP tool server: one servicegym env, reset to the rollout's task, whose tool
    schemas it serves as they are (``respond`` included) and whose ``step`` runs each call."""

    TOOL_PREFIX = None  # bare tool names: the model sees the env's own

    def __init__(self, config: vf.ToolsetConfig) -> None:
        super().__init__(config)
        self.env: gym.Env | None = None
        self.schemas: list[dict[str, Any]] = []
        self._lock = asyncio.Lock()

    async def setup_task(self, task: ServiceGymData) -> None:
        self.env = _make_env(task.env_id, task.env_kwargs)
        options = {"task_id": task.task_id}
        await asyncio.to_thread(self.env.reset, seed=task.seed, options=options)
        self.schemas = self.env.unwrapped.tool_schemas()

    def register(self, mcp: MCPServer) -> None:
        # as verifiers' NeMo Gym toolset does: MCPServer's handlers call these public methods, so the
        # env's JSON schemas are served exactly instead of schemas derived from Python signatures
        server: Any = mcp
        server.list_tools = self.list_tools
        server.call_tool = self._with_state(self.call_tool)

    async def list_tools(self) -> list[Tool]:
        return [Tool(name=s["function"]["name"], description=s["function"].get("description") or None,
                     input_schema=s["function"].get("parameters") or {"type": "object", "properties": {}})
                for s in self.schemas]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        state: ServiceGymState = self.state
        async with self._lock:
            if self.env is None or state.done:
                return CallToolResult(content=[TextContent(type="text", text=ENDED)], is_error=True)
            action = json.dumps({"name": name, "arguments": arguments or {}}, ensure_ascii=False, default=str)
            state.actions.append(action)
            obs, _, terminated, truncated, info = await asyncio.to_thread(self.env.step, action)
        state.steps += 1
        state.tool_errors = int(info.get("tool_errors", 0))
        text, error = _result(obs)
        if terminated or truncated:
            _record_end(state, info)
            text = f"{text}\n[The conversation has ended ({state.termination_reason}).]"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def finish_episode(data: ServiceGymData, actions: list[str]) -> dict[str, Any]:
    """Replay ``actions`` on a fresh env reset to ``data``'s task and seed, then end the episode as
    the agent would (``###STOP###``, once per open Workspace session); the last step's info."""
    env = _make_env(data.env_id, data.env_kwargs)
    try:
        env.reset(seed=data.seed, options={"task_id": data.task_id})
        for action in actions:
            *_, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                return info
        for _ in range(FINISH_LIMIT):
            *_, terminated, truncated, info = env.step(STOP)
            if (terminated or truncated) and "score" in info:
                return info
        raise RuntimeError(f"{data.env_id}: the episode did not end after {FINISH_LIMIT} {STOP} messages")
    finally:
        env.close()


# ----- task and taskset ---------------------------------------------------------------------------

class ServiceGymTaskConfig(vf.TaskConfig):
    tools: vf.ToolsetConfig = vf.ToolsetConfig()
    """Placement of the per-rollout tool server (``--env.taskset.task.tools.runtime.*``)."""


class ServiceGymTask(vf.Task[ServiceGymData, ServiceGymState, ServiceGymTaskConfig]):
    """A servicegym episode: its tool server, the stop when the env ends it, its reward and metrics."""

    @property
    def key(self) -> str:
        return f"{self.data.env_id}/{self.data.task_id}/{self.data.seed}"

    @classmethod
    def toolsets(cls, config: ServiceGymTaskConfig) -> list[vf.Toolset]:
        return [ServiceGymToolset(config.tools)]

    @vf.stop
    async def episode_ended(self, trace: vf.Trace) -> bool:
        """The env ended the episode (a tool result said so): no further model turn."""
        return bool(trace.state.done)

    @vf.stop
    async def turns_without_env_steps(self, trace: vf.Trace) -> bool:
        """The model made ``max_errors`` more turns than the env took steps: its tool calls do not
        reach the env (arguments that are not JSON, which the harness answers itself), so neither
        the env's step limit nor its error limit can end the rollout, and a model that keeps doing
        so would loop forever (verifiers sets no turn limit by default)."""
        state: ServiceGymState = trace.state
        return trace.num_turns - state.steps >= _max_errors(self.data.env_id, self.data.env_kwargs)

    async def finalize(self, trace: vf.Trace, runtime: Any = None) -> None:
        state: ServiceGymState = trace.state
        if state.done:
            return
        info = await asyncio.to_thread(finish_episode, self.data, list(state.actions))
        _record_end(state, info)

    @vf.reward
    async def success(self, trace: vf.Trace) -> float:
        """Strict success of the finished episode (the env's reward on its last step)."""
        return 1.0 if trace.state.done and trace.state.success else 0.0

    @vf.metric
    async def components(self, trace: vf.Trace) -> dict[str, float]:
        """The score components (logged, weight 0), the counts as ``n_<key>``, steps and tool errors."""
        cls = _env_class(self.data.env_id)
        counts = set(cls.count_keys)
        state: ServiceGymState = trace.state
        out = {(f"n_{k}" if k in counts else k): float(state.score.get(k, 0.0)) for k in cls.score_keys}
        out.update(steps=float(state.steps), tool_errors=float(state.tool_errors))
        return out


class ServiceGymTasksetConfig(vf.TasksetConfig):
    env_id: str = "servicegym/Delivery-v0"
    """A servicegym env id (``servicegym/Delivery-v0``...; ``Delivery-v0`` works too)."""
    split: Literal["train", "dev", "test"] = "test"
    """``test``: the frozen suite; ``train`` (needs ``n``): generated tasks from the training seeds."""
    n: int | None = None
    """The first ``n`` tasks of the split (all of a frozen split by default)."""
    tasks: str | None = None
    """A task file (the project's format or a VitaBench file) instead of the built-in tasks."""
    seed: int = 0
    """Base seed: a task's episode seed is ``episode_seed(seed, task_id, 0)``, as in the dataset rows."""
    env_kwargs: dict[str, Any] = {}
    """Further ``gym.make`` arguments (``max_steps``, ``max_errors``, ``user``, ``scoring``...)."""
    task: ServiceGymTaskConfig = ServiceGymTaskConfig()


class ServiceGymTaskset(vf.Taskset[ServiceGymTask, ServiceGymTasksetConfig]):
    """The tasks of one servicegym env (see ``ServiceGymTasksetConfig``), built lazily."""

    def load(self) -> Iterator[ServiceGymTask]:
        from servicegym.envs.integrations.dataset import task_ids
        from servicegym.envs.integrations.trl import trl_prompt
        from servicegym.envs.running.episodes import episode_seed

        cfg = self.config
        env_id = resolve_env_id(cfg.env_id)
        kwargs = dict(cfg.env_kwargs)
        if cfg.tasks is not None:
            kwargs["tasks"] = cfg.tasks
        if cfg.split == "train" and cfg.n is None and cfg.tasks is None:
            raise ValueError("split 'train' needs n (generated tasks are unlimited)")
        env = _make_env(env_id, kwargs)
        try:
            for tid in task_ids(env, cfg.split, cfg.n):
                seed = episode_seed(cfg.seed, tid, 0)
                opening, info = env.reset(seed=seed, options={"task_id": tid})
                data = ServiceGymData(id=tid, name=tid, prompt=opening, system_prompt=trl_prompt(info["system_prompt"]),
                                      env_id=env_id, task_id=tid, seed=seed, env_kwargs=kwargs)
                yield ServiceGymTask(data, cfg.task)
        finally:
            env.close()


# ----- the default harness: verifiers' null chat program, in process ------------------------------

class ServiceGymChatHarnessConfig(vf.HarnessConfig):
    pass


@cache
def _chat_program() -> Any:
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE

    return compile(CHAT_PROGRAM_SOURCE, "<verifiers null chat program>", "exec")


class ServiceGymChatHarness(vf.Harness[ServiceGymChatHarnessConfig]):
    """verifiers' ``null`` harness program (its bundled chat loop: the model through the rollout's
    interception endpoint, the task's tools over MCP, until a reply without a tool call) run in the
    eval process rather than as a ``uv`` script in the runtime. Every model call still goes through
    the interception endpoint, as ``Harness.launch`` requires of an in-process loop."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    SUPPORTS_RESUME = True
    SUPPORTS_TOOL_INTERCEPTION = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: vf.TaskData,
                     tool_interception_url: str | None = None) -> vf.ProgramResult:
        from verifiers.v1.dialects.chat import message_to_wire

        system_prompt, prompt = self.resolve_prompt(data)
        argv = [f"--base-url={endpoint}", f"--api-key={secret}", f"--model={ctx.model}"]
        if tool_interception_url:
            argv.append(f"--tool-interception-url={tool_interception_url}")
        if system_prompt:
            argv.append(f"--system-prompt={system_prompt}")
        if mcp_urls:
            servers = {name: {"url": url, "timeout": self.config.tool_timeout} for name, url in mcp_urls.items()}
            argv.append("--mcp-config=" + json.dumps({"mcpServers": servers}))
        if isinstance(prompt, str):
            argv.append(f"--prompt={prompt}")
        elif prompt is not None:
            fd, path = tempfile.mkstemp(prefix="vf-initial-messages-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump([message_to_wire(m) for m in prompt], f)
            argv.append(f"--initial-messages-file={path}")
        program: dict[str, Any] = {"__name__": "vf_chat_program"}
        exec(_chat_program(), program)
        saved = sys.argv
        sys.argv = ["vf-chat-program", *argv]  # parse_args reads argv; nothing awaits in between
        try:
            args: argparse.Namespace = program["parse_args"]()
        finally:
            sys.argv = saved
        program["parse_args"] = lambda: args
        code, detail = 0, ""
        try:
            await program["main"]()
        except SystemExit as exit_:  # the program's exit on a model transport error
            code = exit_.code if isinstance(exit_.code, int) else 1
            detail = f"model transport error (exit {code})"
        except Exception:  # noqa: BLE001 - reported as the program's failure, as a subprocess's would be
            code, detail = 1, traceback.format_exc()
        return vf.ProgramResult(exit_code=code, stdout="", stderr=detail)


# ----- entry points -------------------------------------------------------------------------------

def load_environment(env_id: str = "servicegym/Delivery-v0", split: str = "test", n: int | None = None,
                     tasks: str | None = None, seed: int = 0, harness: str | None = None,
                     runtime: str = "subprocess", max_turns: int | None = None,
                     rollout_timeout_s: float | None = None, **env_kwargs: Any) -> vf.Env:
    """The ``vf.Env`` (verifiers' single-agent env) over ``env_id``'s tasks: ``split`` (``train``
    needs ``n``), or a task file ``tasks``; ``harness``: a verifiers harness id (default: this
    module's in-process chat loop); ``runtime``: the agent's runtime type (``subprocess``: this
    machine; ``docker``, ``prime``... for a harness that runs code); ``max_turns``: the agent's model-turn cap (default: the env's
    own ``max_steps`` ends the episode); ``rollout_timeout_s``: the seconds one rollout's agent may
    take (verifiers' ``agent.timeout.rollout``; default none: verifiers' client then waits on an
    endpoint that never answers as long as it keeps the connection, since it sets no read timeout);
    ``env_kwargs`` go to ``gym.make`` (``max_steps``, ``user``...)."""
    taskset = ServiceGymTasksetConfig(id=TASKSET_ID, env_id=resolve_env_id(env_id), split=split, n=n, tasks=tasks,
                                      seed=seed, env_kwargs=env_kwargs)
    # the agent's runtime: verifiers' default is a remote sandbox; the in-process harness needs none,
    # and the tool servers then run as local subprocesses (no tunnel)
    agent: dict[str, Any] = {"runtime": {"type": runtime}}
    if harness is not None:
        agent["harness"] = {"id": harness}
    if max_turns is not None:
        agent["max_turns"] = max_turns
    if rollout_timeout_s is not None:
        agent["timeout"] = {"rollout": rollout_timeout_s}
    config = vf.resolve_env_config({"taskset": taskset.model_dump(), "agent": agent})
    return vf.load_environment(config)


if __name__ != "__main__":
    sys.modules.setdefault(_ALIAS, sys.modules[__name__])

if __name__ == "__main__":  # verifiers launches the per-rollout tool server as `python -m <this module>`
    ServiceGymToolset.run()
