"""``ToolUseEnv``: the Gymnasium surface every servicegym domain shares.

A domain subclass supplies its tools, how to build a world from a task, its task source and its
system prompt; the control flow (parsing, tool execution, the user turn, limits, scoring, the
OpenAI-format transcript) lives here once.
"""

from __future__ import annotations

import html
import json
import warnings
from os import PathLike
from typing import Any, ClassVar

import gymnasium as gym
from pydantic import ValidationError

from servicegym.envs.environments.parsing import MAX_ACTION_CHARS, TOOL_CALL_FORM, parse_action, single_call
from servicegym.envs.environments.spaces import UnicodeText
from servicegym.envs.tasks.files import load_task_file
from servicegym.envs.tasks.model import (
    SkippedTask,
    Task,
    TaskFileError,
    TaskSkippedWarning,
    field_path,
    nothing_loaded,
    skip_text,
)
from servicegym.envs.tasks.sources import SPLITS, ListSource, TaskSource
from servicegym.rewards.rubric import SCORING_MODES, EpisodeView, score_rubric
from servicegym.simulators.llm import LLMConfig, LLMError
from servicegym.simulators.scripted_user import STOP, ScriptedUser
from servicegym.world_state.core import History, World
from servicegym.world_state.text import scrub
from servicegym.world_state.tools import Toolkit, ToolSpec

MAX_TEXT = MAX_ACTION_CHARS  # both spaces' max_length; an observation is cut to it
# the simulated user reads the first this many characters of a message (as a person skims a long
# one); it bounds the user's work, and an LLM user's prompt, whatever the agent sends
USER_READ_CHARS = 8000
_resolve_llm = LLMConfig.resolve  # a module name: __init__ may import LLMConfig locally
USER_TOOL = "respond"  # the simulated user as a tool (``user_tool=True``), as the trainers' peers name it
USER_TOOL_SCHEMA = {
    "type": "function",
    "function": {
        "name": USER_TOOL,
        "description": ("Send a message to the user and get their reply (the tool's result). Ask what you need to "
                        "know, confirm before you create or pay for anything, and report what you did. Put "
                        "###STOP### in the message to end the conversation; the user ends it the same way."),
        "parameters": {
            "type": "object",
            "properties": {"message": {"type": "string", "description": "the text the user reads"}},
            "required": ["message"],
            "additionalProperties": False,
        },
    },
}


def _attr(value: str) -> str:
    # tool names and call ids can come from the agent: keep them from forging tags (one C scan for
    # the usual identifier-like name or id, four otherwise: this runs twice for every tool result)
    if value.isidentifier() or not ('"' in value or "<" in value or ">" in value or "&" in value):
        return value
    return html.escape(value)


def _block(tag: str, body: str, name: str | None = None, call_id: str | None = None) -> str:
    if name is None:
        return f"<{tag}>{body}</{tag}>"
    return f'<{tag} name="{_attr(name)}" call_id="{_attr(call_id or "")}">{body}</{tag}>'


class ToolUseEnv(gym.Env[str, str]):
    """Base class; see a domain env (e.g. ``DeliveryEnv``) for the documented contract."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    domain: ClassVar[str] = ""
    tool_specs: ClassVar[list[ToolSpec]] = []
    # the components of ``info["score"]`` every finished episode of the env reports, as floats
    # (more may follow, e.g. ``rubric/<item>`` per task)
    score_keys: ClassVar[tuple[str, ...]] = ()
    # those of ``score_keys`` that are counts (how many rubric items or sessions), not rewards:
    # trainer adapters log them as counts (``n_<key>``), never as a reward column
    count_keys: ClassVar[tuple[str, ...]] = ()
    # the most tool calls an episode may make (a domain's ``call_cap`` sets it at reset; None: no cap).
    # The step whose calls reach it ends the episode, truncated with reason ``"call_cap"``; calls of
    # that action beyond it are not run. The user tool (``respond``) is a message, not a call.
    _call_limit: int | None = None

    def __init__(
        self,
        tasks: str | PathLike[str] | list[Task] | None = None,
        split: str = "train",
        difficulty: int | None = None,
        user: str = "scripted",
        judge: str = "code",
        llm: dict[str, Any] | None = None,
        max_steps: int = 50,
        max_errors: int = 10,
        render_mode: str | None = None,
        check_postconditions: bool = False,
        strict_tasks: bool = False,
        user_tool: bool = False,
        scoring: str = "rubric",
        rubric_checks: str | PathLike[str] | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if user not in ("scripted", "llm"):
            raise ValueError(f"user={user!r} is not a user simulator; use user='scripted' or user='llm'")
        # user="llm": the task's script played by a model (simulators/llm_user.py); the endpoint is
        # resolved now, so a missing or bad one fails at make time rather than mid-episode
        self.user = user
        self._llm_user = user == "llm"
        self._llm_client: Any = None
        if self._llm_user:
            _resolve_llm(llm)
        if judge not in ("code", "llm"):
            raise ValueError(f"judge={judge!r} is not a judge; use judge='code' or judge='llm'")
        # judge="llm": the sliding-window judge (rewards/judge.py) decides success on the final step;
        # built on first use from LLMConfig.resolve(llm), or set ``llm_judge`` to any SlidingWindowJudge
        self.judge = judge
        self.llm_judge: Any = None
        if judge == "llm":
            _resolve_llm(llm)  # a missing or bad endpoint fails here, not at an episode's end
        # scoring="rubric": a VitaBench-file task is scored by its rubric (plus "no write the user
        # never asked for"); "strict" adds the gold end state. Generated tasks score alike in both.
        if scoring not in SCORING_MODES:
            raise ValueError(f"scoring={scoring!r} is not a scoring mode; use scoring='rubric' or scoring='strict'")
        self.scoring = scoring
        self._rubric_details: dict[str, Any] = {}
        if split not in SPLITS:
            raise ValueError(f"split must be 'train', 'dev' or 'test', got {split!r}")
        if max_steps < 1 or max_errors < 1:
            raise ValueError("max_steps and max_errors must be positive")
        # user_tool=True: the simulated user is also reachable as the tool ``respond(message)``, whose
        # result is the user's reply (for trainer loops that end at a reply without a tool call)
        self.user_tool = bool(user_tool)
        self._turn_start = 0
        self.render_mode = render_mode
        self.split = split
        self.max_steps = max_steps
        self.max_errors = max_errors
        self.llm = llm
        self.observation_space = UnicodeText(MAX_TEXT)
        self.action_space = UnicodeText(MAX_TEXT)
        self.toolkit = Toolkit(self.tool_specs, check_postconditions=check_postconditions)
        if tasks is None:
            self.source: TaskSource = self.default_source(difficulty)
        elif isinstance(tasks, list):
            self.source = ListSource(tasks)
        else:
            # a task of the file that cannot be used is skipped with a warning and listed in
            # ``skipped_tasks``; strict_tasks=True fails at the first instead
            more = {} if rubric_checks is None else {"rubric_checks": rubric_checks}
            loaded = load_task_file(tasks, self.domain, strict=strict_tasks, **more)
            kept, skipped = [], list(loaded.skipped)
            scratch: ToolUseEnv | None = None
            for i, task in zip(loaded.indexes, loaded):
                # build every world now, so a bad task shows here rather than mid-training
                try:
                    task.cached_world(self.build_world)
                    if task.source != "vitabench":  # the VitaBench loader replays its own routes
                        scratch = scratch or type(self)(tasks=[task], max_steps=self.max_steps, max_errors=self.max_errors)
                        scratch.check_golden_route(task)
                except (ValidationError, KeyError, ValueError, TypeError) as err:
                    where = field_path(err) if isinstance(err, ValidationError) else str(err)
                    field, _, reason = where.removeprefix("field ").partition(": ")
                    if not where.startswith("field ") or not reason:
                        field, reason = "world", where
                    skip = SkippedTask(task_id=task.task_id, index=i, field=field, reason=reason)
                    if strict_tasks:
                        raise TaskFileError(f"{tasks}: task {task.task_id} (index {i}): {where}", skip) from None
                    warnings.warn(f"skipped {skip_text(tasks, skip)}", TaskSkippedWarning, stacklevel=2)
                    skipped.append(skip)
                    continue
                kept.append(task)
            if not kept and skipped:
                raise nothing_loaded(tasks, skipped)
            self.source = ListSource(kept, skipped)
        self.task: Task | None = None
        self.world: World | None = None
        self.history = History()
        # the conversation as compact records; ``messages`` turns them into OpenAI format on demand,
        # so a step pays for no dict building or argument re-encoding it may never need
        self._log: list[tuple[Any, ...]] = []
        self._messages: list[dict[str, Any]] = []
        self._materialized = 0
        self._initial: World | None = None
        self._user: ScriptedUser | None = None
        self._steps = 0
        self._tool_errors = 0
        self._call_counter = 0
        self._agent_calls = 0  # tool calls run this episode (what a call cap counts)
        self._call_ids: set[str] = set()
        self._done = True
        self._system_prompt = ""
        # render()'s lines: strings, or (prefix, text) pairs it joins (a step builds no string for them)
        self._transcript: list[str | tuple[str, str]] = []

    # ----- domain hooks -------------------------------------------------------------------
    def default_source(self, difficulty: int | None) -> TaskSource:
        raise NotImplementedError

    def build_world(self, task: Task) -> World:
        raise NotImplementedError

    def system_prompt(self, task: Task, world: World) -> str:
        raise NotImplementedError

    def score(self, task: Task, view: EpisodeView) -> tuple[bool, dict[str, float]]:
        return score_rubric(task.rubric, view, self.scoring)

    def make_llm_user(self, task: Task, seed: int) -> Any:
        """The LLM user of ``user="llm"`` (a domain with its own customer overrides this)."""
        from servicegym.simulators.llm_user import LLMUser

        return LLMUser(task.user, self.llm_client(), seed=seed)

    def llm_client(self) -> Any:
        """The env's ``LLMClient`` (from ``llm=`` / the environment), built on first use and kept."""
        if self._llm_client is None:
            from servicegym.simulators.llm import LLMClient

            self._llm_client = LLMClient.shared(self.llm)
        return self._llm_client

    def check_golden_route(self, task: Task) -> None:
        """ValueError naming the field when ``task``'s golden route is missing, calls a tool this
        env does not have, or does not succeed when replayed with the scripted user (a task file's
        tasks are checked so at load). Plays one episode on this env."""
        if not task.golden_actions:
            raise ValueError("field golden_actions: a task needs a golden route (the actions that succeed)")
        for k, action in enumerate(task.golden_actions):
            for call in parse_action(action).tool_calls:
                if call.name not in self.toolkit:
                    raise ValueError(f"field golden_actions.{k}: calls {call.name!r}, which is not a tool of "
                                     f"{type(self).__name__}")
        self.reset(seed=0, options={"task": task})
        info: dict[str, Any] = {}
        for k, action in enumerate(task.golden_actions):
            if self._done:
                raise ValueError(f"field golden_actions.{k}: the episode ended before this action")
            *_, info = self.step(action)
        if not info.get("success"):
            end = info.get("termination_reason") or "the route ran out before the episode ended"
            raise ValueError(f"field golden_actions: the golden route does not succeed ({end})")

    # ----- public API ---------------------------------------------------------------------
    @property
    def skipped_tasks(self) -> list[SkippedTask]:
        """The tasks of the env's task file that were not loaded: ``task_id``, ``index`` (in the
        file), ``field`` and ``reason`` each (empty for generated tasks and suites)."""
        return list(self.source.skipped)

    def task_ids(self, split: str | None = None) -> list[str]:
        """Ids of the task source: ``"test"`` = the frozen suite, ``"train"`` = generated training ids."""
        return self.source.ids(split)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"task_id", "task", "split", "difficulty"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use task_id, task, split or difficulty")
        task = self._choose_task(options)
        self.task = task
        initial = task.cached_world(self.build_world)
        self._initial = initial
        self.world = initial.copy()
        self.history = History()
        self._steps = 0
        self._tool_errors = 0
        self._call_counter = 0
        self._agent_calls = 0
        self._call_ids = set()
        self._done = False
        self._rubric_details = {}
        user_seed = int(self.np_random.integers(0, 2**31 - 1))
        self._user = self.make_llm_user(task, user_seed) if self._llm_user else ScriptedUser(task.user, seed=user_seed)
        opening = self._user.opening()
        self._system_prompt = self.system_prompt(task, self.world)
        self._log = [("system", self._system_prompt), ("user", opening)]
        self._messages = []
        self._materialized = 0
        self.history.append(step=0, time=self.world.clock.text(), kind="message", role="user", content=opening)
        self._transcript = [("[system] ", self._system_prompt), ("[user] ", opening)]
        info = {
            "task_id": task.task_id,
            "domain": self.domain,
            "system_prompt": self._system_prompt,
            "tools": self.tool_schemas(),
        }
        return opening, info

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """``reset`` as a coroutine (in a worker thread when the user is an LLM, whose opening may
        call its model)."""
        if not self._llm_user:
            return self.reset(seed=seed, options=options)
        import asyncio

        return await asyncio.to_thread(self.reset, seed=seed, options=options)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The OpenAI function schemas the agent sees (with ``respond`` when ``user_tool=True``)."""
        schemas = self.toolkit.schemas()
        return [*schemas, USER_TOOL_SCHEMA] if self.user_tool else schemas

    def _choose_task(self, options: dict[str, Any]) -> Task:
        if options.get("task") is not None:
            task = options["task"]
            if isinstance(task, dict):
                task = Task.model_validate(task)
            if not isinstance(task, Task):
                raise TypeError("options['task'] must be a Task or a dict in the task format")
            return task
        if options.get("task_id") is not None:
            return self.source.get(str(options["task_id"]))
        split = options.get("split", self.split)
        if options.get("difficulty") is not None:
            diff = int(options["difficulty"])
            make_id = getattr(self.source, "make_id", None)
            if make_id is None:
                raise ValueError("difficulty applies to generated tasks only")
            seed = int(self.np_random.integers(0, 1_000_000))
            return self.source.get(make_id(split if split != "test" else "dev", seed, diff))
        return self.source.sample(self.np_random, split)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One assistant turn; see the domain env's docstring for the contract."""
        action = self._before_step(action)
        if type(action) is str and not self._done and self.task is not None:
            # the common step, one tool call: run without the generator of the general path
            # (``_step_events`` gives the same result, transcript and records for it)
            single = single_call(action)
            if single is not None and not (self.user_tool and single[1] == USER_TOOL):
                return self._after_step(self._call_step(*single))
        return self._after_step(self._drive(self._step_events(action)))

    def _drive(self, events: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Run a step generator (``_step_events``, ``_ending``) to its result, answering its
        requests in this thread: the simulated user's reply, the LLM judge's verdict."""
        try:
            request = next(events)
            while True:
                kind, payload = request
                try:
                    value = self._user.reply(payload) if kind == "user" else self._judge(*payload)
                except LLMError as err:  # the episode records it and goes on
                    request = events.throw(err)
                    continue
                request = events.send(value)
        except StopIteration as stop:
            return stop.value

    def _call_step(self, raw: str, name: str, arguments: dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """``_step_events`` of an action that is one tool call without a call id (``single_call``:
        ``raw`` the action as scrubbed, the call's ``name`` and ``arguments``), not the user tool,
        on a running episode: the same records, observation and result, without the generator."""
        self._steps += 1
        log = self._log
        self._turn_start = len(log) + 1  # after the assistant's own record
        used = self._call_ids
        self._call_counter += 1
        cid = f"call_{self._call_counter}"
        while cid in used:
            self._call_counter += 1
            cid = f"call_{self._call_counter}"
        used.add(cid)
        log.append(("calls", None, [(cid, name, arguments)]))
        self._transcript.append(("[assistant] ", raw))  # joined by render(), if it is ever called
        call_limit = self._call_limit
        if call_limit is not None and self._agent_calls >= call_limit:
            content = f"not run: the call cap ({call_limit} tool calls) was reached"
            obs = _block("tool_error", content, name=name, call_id=cid)
        else:
            self._agent_calls += 1
            name, outcome, content = self.toolkit.call(self.world, self.history, name, arguments, self._steps, cid)
            if outcome == "executed":
                # ``cid`` is this env's own ``call_<n>``: nothing to escape, nor in a tool's name
                # (an identifier; ``_attr`` for any other)
                obs = f'<tool_result name="{name if name.isidentifier() else _attr(name)}" call_id="{cid}">{content}</tool_result>'
            else:
                self._tool_errors += 1
                obs = _block("tool_error", content, name=name, call_id=cid)
        log.append(("tool", cid, content))
        if len(obs) > MAX_TEXT:  # a large result: the observation stays within its space
            note = f"\n<error>observation cut at {MAX_TEXT} characters; make fewer calls at once</error>"
            obs = obs[: MAX_TEXT - len(note)] + note
        self._transcript.append(obs)
        if call_limit is None and self._tool_errors < self.max_errors and self._steps < self.max_steps and not self._llm_user:
            # ``_limits`` of a step that ends nothing, with no call cap and no LLM user: its info
            return obs, 0.0, False, False, {"step": self._steps, "tool_errors": self._tool_errors}
        truncated, reason, info = self._limits(False, "", "")
        if truncated:
            return self._drive(self._ending(obs, False, truncated, reason, info))
        return obs, 0.0, False, False, info

    async def astep(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """``step`` as a coroutine, so one event loop drives many episodes: what blocks (an LLM
        user's reply, the LLM judge) is awaited (an ``areply`` coroutine of the user) or runs in a
        worker thread; tools and the scripted user run inline. Same transcript as ``step``."""
        import asyncio

        events = self._step_events(self._before_step(action))
        try:
            request = next(events)
            while True:
                kind, payload = request
                try:
                    if kind == "user" and hasattr(self._user, "areply"):
                        value = await self._user.areply(payload)
                    elif kind == "user" and not self._llm_user:
                        value = self._user.reply(payload)
                    elif kind == "user":
                        value = await asyncio.to_thread(self._user.reply, payload)
                    else:
                        value = await asyncio.to_thread(self._judge, *payload)
                except LLMError as err:
                    request = events.throw(err)
                    continue
                request = events.send(value)
        except StopIteration as stop:
            return self._after_step(stop.value)

    def _before_step(self, action: Any) -> Any:
        """Domain hook: the action as the base step should read it (Payments maps its conversation calls)."""
        return action

    def _after_step(self, result: tuple[str, float, bool, bool, dict[str, Any]]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Domain hook: the step's result as the agent should get it (Workspace moves to the next session)."""
        return result

    def _judge(self, success: bool, score: dict[str, Any]) -> tuple[bool, dict[str, Any], dict[str, Any]]:
        from servicegym.rewards.judge import score_with_llm_judge

        return score_with_llm_judge(self, success, score)

    def turn_messages(self) -> list[dict[str, Any]]:
        """What the last step added after the assistant's own message, in OpenAI format: the tool
        results (``role: tool``, by ``tool_call_id``), the user's reply (``role: user``) or an
        error turn. For trainers that keep the conversation themselves and append only this.
        A Workspace step that starts the next session returns that session's new conversation
        (system message first): the chat restarts there."""
        return self.messages[self._turn_start :]

    def _user_turn(self, text: str):
        """Send ``text`` to the simulated user (a generator: yields ``("user", text)`` for the
        reply). Returns ``(reply, terminated, reason, user_error)``; ``reply`` is None when the
        agent ended the conversation or the user's model failed."""
        self.history.append(step=self._steps, time=self.world.clock.text(), kind="message", role="assistant", content=text)
        if STOP in text:
            return None, True, "agent_stop", ""
        try:
            reply = yield ("user", text[:USER_READ_CHARS])
        except LLMError as err:
            # the user model failed (after its retries): the episode ends truncated, and says why
            self.history.append(step=self._steps, time=self.world.clock.text(), kind="event", role="env",
                                name="user_error", arguments=err.to_json(), content=str(err))
            return None, False, "", str(err)
        self.history.append(step=self._steps, time=self.world.clock.text(), kind="message", role="user", content=reply)
        return reply, STOP in reply, "user_stop" if STOP in reply else "", ""

    def _step_events(self, action: Any):
        """The step as a generator: it yields ``("user", text)`` for a reply of the simulated user
        and ``("judge", (success, score))`` for the LLM judge, is sent their results (or thrown
        ``LLMError``), and returns the step's 5-tuple. ``step`` and ``astep`` drive it: one
        logic, two ways to wait."""
        if self._done or self.task is None:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        self._steps += 1
        self._turn_start = len(self._log) + 1  # after the assistant's own record
        parsed = parse_action(action)
        blocks: list[str] = []
        terminated = False
        reason = ""
        user_error = ""
        if not isinstance(action, str):
            raw = repr(action)[:1000]
        elif len(action) > MAX_ACTION_CHARS:  # refused unread; the transcript keeps its start
            raw = f"{scrub(action[:1000])}... [{len(action)} characters, over the limit]"
        else:
            raw = scrub(action)

        if parsed.tool_calls:
            calls = []
            used = self._call_ids
            for call in parsed.tool_calls:
                self._call_counter += 1
                cid = call.call_id
                if not cid or cid in used:
                    # each tool message must answer exactly one call: a missing or reused id is replaced
                    cid = f"call_{self._call_counter}"
                    while cid in used:
                        self._call_counter += 1
                        cid = f"call_{self._call_counter}"
                used.add(cid)
                calls.append((cid, call.name, call.arguments))
            log = self._log
            log.append(("calls", parsed.message or None, calls))
            self._transcript.append(("[assistant] ", raw))  # joined by render(), if it is ever called
            call_limit = self._call_limit
            for call, (cid, _, _) in zip(parsed.tool_calls, calls):
                if terminated or user_error:  # the conversation ended at an earlier call of this action
                    content = "not run: the conversation ended at an earlier call of this action"
                    blocks.append(_block("tool_error", content, name=call.name, call_id=cid))
                    self._log.append(("tool", cid, content))
                    continue
                if self.user_tool and call.name == USER_TOOL:
                    text = call.arguments.get("message") if isinstance(call.arguments, dict) else None
                    if not isinstance(text, str) or not text.strip():
                        self._tool_errors += 1
                        content = f'{USER_TOOL} needs a "message": the text to send to the user. Usage: {USER_TOOL}(message: string)'
                        blocks.append(_block("tool_error", content, name=USER_TOOL, call_id=cid))
                        self._log.append(("tool", cid, content))
                        continue
                    reply, terminated, reason, user_error = yield from self._user_turn(text)
                    content = reply if reply is not None else (
                        f"the user simulator could not reply: {user_error}" if user_error else "conversation ended")
                    blocks.append(_block("tool_error" if user_error else "tool_result", content, name=USER_TOOL, call_id=cid))
                    self._log.append(("tool", cid, content))
                    continue
                if call_limit is not None and self._agent_calls >= call_limit:
                    content = f"not run: the call cap ({call_limit} tool calls) was reached"
                    blocks.append(_block("tool_error", content, name=call.name, call_id=cid))
                    log.append(("tool", cid, content))
                    continue
                self._agent_calls += 1
                name, outcome, content = self.toolkit.call(self.world, self.history, call.name, call.arguments,
                                                           self._steps, cid)
                if outcome == "executed":
                    blocks.append(f'<tool_result name="{_attr(name)}" call_id="{_attr(cid)}">{content}</tool_result>')
                else:
                    self._tool_errors += 1
                    blocks.append(_block("tool_error", content, name=name, call_id=cid))
                log.append(("tool", cid, content))
        elif parsed.errors:
            self._log.append(("assistant", raw))
            self._transcript.append(("[assistant] ", raw))
        else:
            text = parsed.message
            self._log.append(("assistant", text))
            self._transcript.append(("[assistant] ", text))
            reply, terminated, reason, user_error = yield from self._user_turn(text)
            if user_error:
                blocks.append(_block("error", f"the user simulator could not reply: {user_error}"))
            elif reply is not None:
                self._log.append(("user", reply))
                blocks.append(_block("user", reply))

        if parsed.errors:
            # parse errors reach the model as an environment turn (OpenAI format has no better role)
            self._tool_errors += len(parsed.errors)
            self.history.append(step=self._steps, time=self.world.clock.text(), kind="event", role="env",
                                name="parse_error", content="; ".join(parsed.errors))
            errors = [_block("error", e) for e in parsed.errors]
            blocks.extend(errors)
            self._log.append(("user", "\n".join(errors)))
        obs = "\n".join(blocks)
        if len(obs) > MAX_TEXT:  # many large results at once: the observation stays within its space
            note = f"\n<error>observation cut at {MAX_TEXT} characters; make fewer calls at once</error>"
            obs = obs[: MAX_TEXT - len(note)] + note
        if obs:
            self._transcript.append(obs)
        truncated, reason, info = self._limits(terminated, reason, user_error)
        if terminated or truncated:
            return (yield from self._ending(obs, terminated, truncated, reason, info))
        return obs, 0.0, terminated, truncated, info

    def _limits(self, terminated: bool, reason: str, user_error: str) -> tuple[bool, str, dict[str, Any]]:
        """The step's ``truncated``, termination reason and ``info`` (before any scoring)."""
        truncated = False
        if user_error:
            truncated, reason = True, "user_error"
        elif not terminated:
            if self._call_limit is not None and self._agent_calls >= self._call_limit:
                truncated, reason = True, "call_cap"
            elif self._tool_errors >= self.max_errors:
                truncated, reason = True, "max_errors"
            elif self._steps >= self.max_steps:
                truncated, reason = True, "max_steps"
        info: dict[str, Any] = {"step": self._steps, "tool_errors": self._tool_errors}
        if self._call_limit is not None:
            info["tool_calls"], info["call_limit"] = self._agent_calls, self._call_limit
        if self._llm_user:
            info["llm_usage"] = {"user": dict(self._user.usage)}
        return truncated, reason, info

    def _ending(self, obs: str, terminated: bool, truncated: bool, reason: str, info: dict[str, Any]):
        """The last step's scoring, as a generator (it yields ``("judge", (success, score))`` for
        the LLM judge); returns the step's 5-tuple."""
        self._done = True
        view = self.episode_view()
        success, score = self.score(self.task, view)
        if self.judge == "llm":
            success, score, judged = yield ("judge", (success, score))
            info.update(judged)
        if self.task.nl_rubric:
            # per natural-language item: how it was checked (code, the judge, unchecked) and its verdict;
            # once, at the episode's end (a shaping wrapper's per-step scoring does not pay for it);
            # imported here: only a natural-language rubric needs the reader it loads
            from servicegym.rewards.scoring_modes import item_report

            self._rubric_details = item_report(self.task, score, view, self.judge == "llm", self.scoring)
            info["rubric_items"] = self._rubric_details["items"]
        reward = float(success)
        info.update(termination_reason=reason, success=success, score=self._fixed_score(score))
        return obs, reward, terminated, truncated, info

    def _fixed_score(self, score: dict[str, Any]) -> dict[str, Any]:
        """``score`` with every key of ``score_keys`` present, numbers as floats (bools too), so an
        env's episodes all report the same components (trainers log them as reward functions)."""
        out = {k: 0.0 for k in self.score_keys}
        for k, v in score.items():
            out[k] = float(v) if isinstance(v, (bool, int)) else v
        return out

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far in OpenAI chat format (system, user, assistant with
        ``tool_calls``, tool with ``tool_call_id``), extended incrementally from the step log."""
        out, log = self._messages, self._log
        for rec in log[self._materialized :]:
            kind = rec[0]
            if kind == "calls":
                out.append({
                    "role": "assistant",
                    "content": rec[1],
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": name,
                                "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                            },
                        }
                        for cid, name, args in rec[2]
                    ],
                })
            elif kind == "tool":
                out.append({"role": "tool", "tool_call_id": rec[1], "content": rec[2]})
            else:
                out.append({"role": kind, "content": rec[1]})
        self._materialized = len(log)
        return out

    @property
    def env_options(self) -> dict[str, Any]:
        """The experiment options of this env that differ from their defaults (Payments:
        ``call_cap``, ``disclosure``, ``gold_documents``), as plain JSON; ``{}`` when none do. A
        rollout record carries them as ``env_options`` and reports label its runs by them."""
        return {}

    def episode_details(self) -> dict[str, Any]:
        """What the episode's outcome holds beyond ``info["score"]``'s floats, as plain JSON: a
        rollout record keeps it as ``details`` and ``servicegym view`` shows it. A VitaBench-file
        task's finished episode gives ``rubric``: each natural-language item with its text, how it
        was checked (``code``, ``judge`` or ``unchecked``), its verdict and the unrequested writes
        (``rewards/scoring_modes.py: item_report``); the Workspace env gives each closed session's intents
        with their final states; otherwise empty."""
        return {"rubric": self._rubric_details} if self._rubric_details and self._done else {}

    def episode_view(self) -> EpisodeView:
        agent = [e.content for e in self.history.messages("assistant")]
        return EpisodeView(world=self.world, initial=self._initial, history=self.history, agent_messages=agent)

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            # the transcript's lines, some kept as (prefix, text) by step so it builds no string for them
            return "\n".join(t if type(t) is str else "".join(t) for t in self._transcript) + "\n"
        return None

    def close(self) -> None:
        self._done = True

    # ----- helpers for policies and tests -------------------------------------------------
    @property
    def tool_call_form(self) -> str:
        return TOOL_CALL_FORM
