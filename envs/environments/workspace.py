"""The persona workspace environment (pi-Bench: proactive assistants over many sessions)."""

from __future__ import annotations

import html
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from servicegym.envs.environments.base import ToolUseEnv
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.tasks.generators.content_workspace import PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace import (
    EpisodeDraft,
    episode_labels,
    generate_workspace_task,
    lazy_episode,
    seeded_tables,
)
from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.sources import GeneratedSource, TaskSource
from servicegym.envs.tasks.suites import suite_path
from servicegym.rewards import workspace as ws_rewards
from servicegym.rewards.rubric import CHECKS, EpisodeView, RubricItem
from servicegym.simulators.scripted_user import STOP, cue_pattern
from servicegym.simulators.workspace_user import IntentScript, SessionScript, WorkspaceUser, questions_in
from servicegym.world_state.core import History, LazyRows, World, parse_time, unvalidated
from servicegym.world_state.tools import Toolkit, ToolSpec
from servicegym.world_state.vouched import vouched_entities
from servicegym.world_state.workspace import COMMON_TOOLS, PERSONAS, WorkspaceWorld, persona_tools

__all__ = ["WorkspaceEnv", "SUITE_PATH", "WorkspaceSource", "golden_world", "session_summary", "summaries_block"]

SUITE_PATH = suite_path("workspace")
DOMAIN = "workspace"

PROMPT = (
    "You are the personal work assistant of {owner} ({title}, {organization}, {email}). You work in their persistent "
    "workspace: files (text, Markdown, CSV, JSON; paths relative to the workspace root), mail, calendar, notes, contacts, "
    "to-dos and the {title}'s own records and tools.\n"
    "This is session {index} of {total}; it is {time}. {carry}Requests are short; work out what {first} would expect from the workspace where you can, ask a specific "
    "question where you cannot, and say what you did when you are done.\n"
    "Call a tool by replying with {form}; several such blocks may go in one reply. Any other reply is sent to {first}. "
    "The session ends when {first} has nothing more to add."
)
# what the prompt says carries over between sessions (the history-ablation options change it)
CARRY = ("The chat starts fresh each session, but everything done in earlier sessions is still in the workspace: "
         "earlier reports, sent mail, events, notes and to-dos show how {first} likes things done. ")
CARRY_WIPED = ("The chat starts fresh each session, and so does the workspace: each session starts on it as it was "
               "before session 1. ")
CARRY_SUMMARIES = "Each later session opens with short summaries of the earlier ones (<history>). "


def _all_tools() -> list[ToolSpec]:
    """Common tools plus every persona's (the toolkit before a task picks its persona)."""
    seen: dict[str, ToolSpec] = {}
    for spec in [*COMMON_TOOLS, *(t for p in PERSONAS for t in persona_tools(p))]:
        seen.setdefault(spec.name, spec)
    return list(seen.values())


_TOOLKITS: dict[tuple[str, bool], Toolkit] = {}


def toolkit_for(persona: str, check_postconditions: bool = False) -> Toolkit:
    """The tools of one persona's agent: the common tools and the persona's own (cached)."""
    key = (persona, check_postconditions)
    if key not in _TOOLKITS:
        _TOOLKITS[key] = Toolkit([*COMMON_TOOLS, *persona_tools(persona)], check_postconditions=check_postconditions)
    return _TOOLKITS[key]


class WorkspaceSource(GeneratedSource):
    """Generated persona episodes plus the frozen suite. Ids name the persona:
    ``workspace-<persona>/<split>/<seed>/d<difficulty>``; ``make_id`` picks the persona ``seed % 5``."""

    def generate_domain(self) -> str:
        return DOMAIN

    def make_id(self, split: str, seed: int, difficulty: int | None = None) -> str:
        persona = PERSONA_ORDER[seed % len(PERSONA_ORDER)]
        return f"{DOMAIN}-{persona}/{split}/{seed}/d{self.difficulty if difficulty is None else difficulty}"

    def parse_id(self, task_id: str) -> tuple[int, int, str, dict[str, Any]]:
        parts = task_id.split("/") if isinstance(task_id, str) else []
        head = parts[0].split("-", 1) if parts else []
        if (len(parts) != 4 or len(head) != 2 or head[0] != DOMAIN or head[1] not in PERSONA_ORDER
                or parts[1] not in ("train", "test", "dev") or not parts[2].isdigit() or not parts[3][1:].isdigit()
                or not parts[3].startswith("d")):
            raise KeyError(f"unknown task_id {task_id!r}; generated ids look like {self.make_id('train', 7)} "
                           f"(personas: {', '.join(PERSONA_ORDER)})")
        return int(parts[2]), int(parts[3][1:]), parts[1], {"persona": head[1]}


# ----- per-task caches: parsed sessions and golden-history worlds ------------------------------
@dataclass
class SessionData:
    spec: dict[str, Any]
    script: SessionScript
    intent_checks: dict[str, RubricItem]
    checklist: list[RubricItem]


_CHECK_FIELDS = ("name", "kind", "description", "params", "weight")


def _check_item(check: dict[str, Any], vouched: bool) -> RubricItem:
    """``RubricItem.model_validate(check)``; a check the generator wrote itself (``vouched``: every
    field, in order, as the item's JSON dump gives it) is made without validating it again (the
    same fields: ``params`` a shallow copy, as validation makes it)."""
    if vouched and type(check) is dict and tuple(check) == _CHECK_FIELDS and type(check["params"]) is dict \
            and type(check["weight"]) is float:
        return unvalidated(RubricItem, {**check, "params": dict(check["params"])}, set(_CHECK_FIELDS))
    return RubricItem.model_validate(check)


_INTENT_FIELDS = {"id", "reveal", "answer", "cues"}
_SCRIPT_FIELDS = {"index", "opening", "intents"}


def _session_data(s: dict[str, Any], vouched: bool) -> SessionData:
    """One session spec parsed: its user script, intent checks and checklist (a vouched spec's
    without validating the generator's own values again)."""
    if vouched:
        intents = [unvalidated(IntentScript, {"id": i["id"], "reveal": i["reveal"], "answer": i["answer"],
                                              "cues": list(i["cues"])}, set(_INTENT_FIELDS)) for i in s["intents"]]
        script = unvalidated(SessionScript, {"index": s["index"], "opening": s["opening"], "intents": intents,
                                             "style": "polite"}, set(_SCRIPT_FIELDS))
    else:
        script = SessionScript(index=s["index"], opening=s["opening"],
                               intents=[IntentScript(id=i["id"], reveal=i["reveal"], answer=i["answer"], cues=i["cues"])
                                        for i in s["intents"]])
    return SessionData(s, script, {i["id"]: _check_item(i["check"], vouched) for i in s["intents"]},
                       [_check_item(c, vouched) for c in s["checklist"]])


class LazySessions(Sequence[SessionData]):
    """A task's sessions parsed (``SessionData``), each on first use: a reset reads the first one
    it plays, a session start its own."""

    def __init__(self, specs: list[dict[str, Any]], vouched: bool) -> None:
        self._specs = specs
        self._vouched = vouched
        self._made: list[SessionData | None] = [None] * len(specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self._specs)))]
        hit = self._made[i]
        if hit is None:
            hit = self._made[i] = _session_data(self._specs[i], self._vouched)
        return hit

    def built(self) -> int:
        """How many sessions have been parsed so far."""
        return sum(m is not None for m in self._made)


@dataclass
class TaskCache:
    sessions: Sequence[SessionData]
    # per session (in order): {"index", "group", "precursors", "action", "reasoning"}
    meta: list[dict[str, Any]] = field(default_factory=list)
    # session k > 1 -> world at its start (session 1 starts on the key itself: holding it here would
    # keep the key, and so the entry, alive for ever)
    golden: dict[int, WorkspaceWorld] = field(default_factory=dict)


# keyed by a task's built initial world, which lives exactly as long as the task object; no value
# refers back to its key, so an entry goes with its task
_CACHE: weakref.WeakKeyDictionary[World, TaskCache] = weakref.WeakKeyDictionary()


def _task_cache(task: Task, initial: World) -> TaskCache:
    hit = _CACHE.get(initial)
    if hit is None:
        draft = lazy_episode(task)
        if draft is not None:  # a new generated task: its sessions are built as the episode reaches them
            hit = TaskCache(LazySessions(draft.specs, True), [dict(m, precursors=list(m["precursors"])) for m in draft.meta])
        else:
            specs = task.world["sessions"]
            sessions = LazySessions(specs, task.vouched_world)
            meta = [{"index": s["index"], "group": s["group"], "precursors": list(s["precursors"]), **labels}
                    for s, labels in zip(specs, episode_labels(specs), strict=True)]
            hit = TaskCache(sessions, meta)
        _CACHE[initial] = hit
    return hit


def _vouched_table(model: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A vouched table's rows, key -> entity (``vouched_entities``)."""
    return {row.key: row for row in vouched_entities(model, rows)}


def _draft_table(draft: EpisodeDraft, model: Any, name: str) -> dict[str, Any]:
    """A table of a task still being built (``EpisodeDraft.table_rows``), key -> entity."""
    return _vouched_table(model, draft.table_rows(name))


def _head(task: Task) -> dict[str, Any]:
    """The task's world fields the env reads besides its tables and sessions (persona, owner,
    owner_email, organization, now), without completing a generated episode still being built."""
    draft = lazy_episode(task)
    return draft.head if draft is not None else task.world


def _session_count(task: Task) -> int:
    draft = lazy_episode(task)
    return len(draft.specs) if draft is not None else len(task.world["sessions"])


def _begin_session(world: WorkspaceWorld, spec: dict[str, Any]) -> None:
    world.clock.now = parse_time(spec["start"])
    world.extra["session"] = spec["index"]


def golden_world(task: Task, k: int, build: Any, toolkit: Toolkit) -> WorkspaceWorld:
    """The workspace at the start of session ``k`` after a golden run of sessions 1..k-1: their golden
    tool calls replayed through ``toolkit`` (messages do not change the workspace). Cached per task,
    each session's start built from the previous one's."""
    initial = task.cached_world(build)
    cache = _task_cache(task, initial)
    j = max((i for i in cache.golden if i <= k), default=1)
    world = cache.golden.get(j, initial)
    for s in range(j, k):
        spec = cache.sessions[s - 1].spec
        world = world.copy()
        _begin_session(world, spec)
        history = History()
        for action in spec["golden"]:
            for call in parse_action(action).tool_calls:
                result = toolkit.call(world, history, call.name, call.arguments)
                if not result.ok:
                    raise RuntimeError(f"{task.task_id}: golden call {call.name} of session {s} failed: {result.content}")
        cache.golden[s + 1] = world
    return world


# ----- the history ablation: summaries of earlier sessions --------------------------------------
SUMMARY_CHARS = 1000     # one session's summary at most
SUMMARIES_CHARS = 12000  # all summaries at most (the most recent sessions kept)
_CLIP = 240              # one quoted message
_ARG_CLIP = 60           # one argument value in a call


def _clip(text: Any, n: int) -> str:
    t = " ".join(str(text).replace(STOP, " ").split())
    return t if len(t) <= n else t[: n - 3] + "..."


def _call_text(name: str, arguments: dict[str, Any]) -> str:
    parts = []
    for k, v in arguments.items():
        shown = "[" + ", ".join(_clip(x, _ARG_CLIP) for x in v[:6]) + "]" if isinstance(v, list) else _clip(v, _ARG_CLIP)
        parts.append(f"{k}={shown}")
    return f"{name}({', '.join(parts)})"


def session_summary(index: int, start: str, asked: str, told: list[str], done: list[tuple[str, dict[str, Any]]]) -> str:
    """One earlier session in one line of at most ``SUMMARY_CHARS``: what was asked (the opening),
    what the user added (their later messages, the closing one left out), what was done (the write calls that succeeded,
    arguments clipped). Text from the conversation is HTML-escaped (no tag can close the block)."""
    told = [t for t in (_clip(x, _CLIP) for x in told) if t]
    line = f'Session {index} ({start[:10]}): asked "{_clip(asked, _CLIP)}"'
    if told:
        line += "; the user added " + " / ".join(f'"{t}"' for t in told[:3]) + (f" (+{len(told) - 3} more)" if len(told) > 3 else "")
    calls = [_call_text(n, a) for n, a in done]
    line += "; done: " + ("; ".join(calls[:5]) + (f" (+{len(calls) - 5} more)" if len(calls) > 5 else "") if calls else "nothing")
    return _clip(html.escape(line, quote=False), SUMMARY_CHARS)


def summaries_block(summaries: list[str]) -> str:
    """The ``<history>`` block a session starts with: the most recent summaries that fit
    ``SUMMARIES_CHARS``, oldest first; empty when there are none."""
    kept: list[str] = []
    size = 0
    for line in reversed(summaries):
        if size + len(line) + 3 > SUMMARIES_CHARS:
            break
        kept.append(f"- {line}")
        size += len(line) + 3
    if not kept:
        return ""
    left = len(summaries) - len(kept)
    head = "Summaries of earlier sessions" + (f" (the {left} oldest left out)" if left else "") + ":"
    return "<history>" + "\n".join([head, *reversed(kept)]) + "</history>"


def _golden_summary(spec: dict[str, Any], toolkit: Toolkit) -> str:
    """The summary a golden run of a session leaves: the opening, the user's answers to the golden
    route's targeted questions, the golden write calls."""
    done, said = [], []
    for action in spec["golden"]:
        parsed = parse_action(action)
        if not parsed.tool_calls:
            said.append(parsed.message)
        for c in parsed.tool_calls:
            tool = toolkit.resolve(c.name)
            if tool is not None and tool.kind == "write" and isinstance(c.arguments, dict):
                done.append((tool.name, c.arguments))
    asked = questions_in(" ".join(said))
    told = [i["answer"] for i in spec["intents"] if cue_pattern(tuple(i["cues"])).search(asked)]
    return session_summary(spec["index"], spec["start"], spec["opening"], told, done)


class WorkspaceEnv(ToolUseEnv):
    """
    ## Description
    Proactive personal assistance after pi-Bench: the agent works for one persona (researcher,
    marketer, legal intern, pharmacist or financial analyst) through an *episode* of 20 sessions
    in one persistent workspace: a virtual file system (text, Markdown, CSV, JSON; paths confined
    to the workspace, ``..`` and absolute paths are errors, writes are size-limited and CSV/JSON
    must be well formed), mail, calendar, notes, contacts, to-dos and the persona's own records
    and tools (about 150-200 tools in all; an episode's agent sees the common ones and its
    persona's). Each session opens with a short request that leaves things unsaid: 1-3 hidden
    intents. As in pi-Bench, an episode has six dependency groups of two or three sessions that
    carry something over (a report format, an exclusion rule, a recipient list, meeting
    conventions, a to-do label, note tags) and five independent sessions: in later sessions of a
    group the workspace holds the evidence, so a proactive agent can apply it unasked. The chat
    (``messages``) resets between sessions; the workspace does not (unless ``wipe_workspace``).
    Every session is labelled with its action and reasoning types (our taxonomy of 18, nine of
    each: ``generators.workspace.ACTION_TYPES``/``REASONING_TYPES``), derived by rule from its
    checklist and hidden intents.

    Skills (pi-Bench's): the workspace ships the persona's 4-5 skills as folders ``skills/<name>/``
    (``SKILL.md``: when to use it, inputs, outputs, the conventions it applies; JSON scripts run by
    the sandboxed interpreter ``world_state.workspace.skills``: existing workspace tools and pure
    transforms only, bounded, all or nothing), found and run with ``list_skills``, ``read_skill``
    and ``run_skill``. A session a skill does (a format report, an export, a summary mail, a
    recurring meeting, a tagged note, a labelled to-do, a JSON extract) is cheaper with it; two
    skills of each generated episode are out of date (built with an earlier convention), so their
    output fails the session's checks unless the agent checks and corrects it.

    The user (``simulators.workspace_user``) resolves intents in two stages at every agent message:
    an intent already met by the workspace or the message is *Completed*; else intents a targeted
    question asks about are *Inferred* and answered; else the user reveals one intent
    (*Provided*). When every intent has a final state the user ends the session (``###STOP###``).
    Satisfaction and targeted questions are decided by code (predicates over artifacts, cue
    phrases in question sentences).

    ## Action Space
    ``UnicodeText``: the raw assistant completion; JSON calls, OpenAI ``tool_calls`` or
    ``<tool_call>`` blocks call tools, anything else is a message to the user.

    ## Observation Space
    ``UnicodeText``: ``<tool_result>``/``<tool_error>`` blocks, ``<user>`` for the user's reply,
    ``<error>`` for unreadable actions. When a session ends, the same observation carries the next
    session's opening as ``<session index="k" of="20" start="YYYY-MM-DD HH:MM:SS">...</session>``.

    ## Starting State
    The persona's seeded workspace (data files, contacts, a few mails and to-dos, the persona's
    records) and session 1's request; or, with ``reset(options={"session": k})``, the workspace a
    golden run of sessions 1..k-1 leaves and session k's request (to measure the value of prior
    history). Golden-history worlds are cached per task, so repeated resets to k are cheap.

    ## Reward
    At the end of each session: 1 if the session succeeded (COMP = 1 and each of its hidden
    intents Completed or Inferred), else 0; 0 on every other step. COMP is the weighted checklist
    over the session's final artifacts and decisions (file exists, exact strings, Markdown
    headings, CSV header/rows/cells, JSON Schema validity and values, mail recipients and
    attachments, events, to-dos, notes), checked by code. PROC = (Completed + Inferred) / hidden
    intents, a dependent session pooling its precursors' intents.

    ## Episode End
    Terminated after the last session (session 20, or session k in single-session mode); the user
    or the agent saying ``###STOP###`` ends a session. Truncated when a session exceeds
    ``max_steps`` actions or ``max_errors`` failed calls (both per session); sessions not reached
    score 0.

    ## Information
    ``reset``: ``task_id``, ``domain``, ``system_prompt``, ``tools``, ``persona``, ``session`` and
    ``sessions`` (the range played), ``labels`` (the first session's ``{"group", "action",
    "reasoning"}``), ``session_meta`` (per session played: ``index``, ``group`` ("" for an
    independent one), ``precursors``, ``action``, ``reasoning``), ``history_summaries`` and
    ``wipe_workspace``. A session's last step: ``session_end`` = ``{"index", "success", "proc",
    "own_proc", "comp", "intents": {id: state}, "checks": {item: bool}, "group", "action",
    "reasoning"}``, and when another session follows, ``session_start`` (its ``session_meta``). Final step:
    ``success`` (every session played succeeded) and ``score``: ``proc`` and ``comp`` (episode
    aggregates, each dependency group's pooled PROC / mean COMP weighted by its size),
    ``sessions_passed`` (fraction), ``sessions``, and per session ``sNN/proc``, ``sNN/own_proc``,
    ``sNN/comp``, ``sNN/check/<item>``, ``sNN/intent/<key>`` and ``rubric/sNN`` (strict success).
    In single-session mode PROC is over the session's own intents. Skill use (reported, never part
    of success): ``skill_use`` (fraction of the sessions an up-to-date staged skill does in which the
    agent ran it; 0 when none), ``skills_applicable``, ``stale_skill_use`` (fraction of the sessions
    whose skill is out of date in which the agent ran it anyway), ``stale_skills``, and per such
    session ``sNN/skill_used`` or ``sNN/stale_skill_used``.

    ## Arguments
    ```python
    env = gym.make("servicegym/Workspace-v0")                # generated episodes, persona = seed % 5
    env = gym.make("servicegym/Workspace-v0", split="test")  # the frozen suite: one episode per persona
    obs, info = env.reset(options={"task_id": "workspace-pharmacist/test/3/d1", "session": 12})
    ```
    ``difficulty`` 0-1 (0: at most two hidden intents a session), ``max_steps`` (60) and
    ``max_errors`` (20) per session, ``render_mode`` (``ansi``), ``tasks`` (a task file or list).

    The history ablation (pi-Bench: prior interaction history raises proactivity;
    ``scripts/workspace_ablation.py`` runs the grid):
    ``history_summaries`` (False): each session after the first starts with a ``<history>`` block
    before its request, one line per earlier session built by code from the transcript: what was
    asked (the opening), what the user added (their later messages but the closing), what was done
    (the write calls that succeeded, arguments clipped); at most 1,000 characters a session and 12,000 in all
    (the most recent kept). In single-session mode (``options={"session": k}``) the summaries are
    those a golden run of sessions 1..k-1 leaves. ``wipe_workspace`` (False): every session starts
    on the persona's initial workspace (nothing an earlier session made or changed is left; in
    single-session mode the golden history is not applied), so what an earlier session carries is
    only in the summaries, if at all; a session that must reuse an earlier artifact (a mail that
    attaches an earlier report) then fails even for the golden route. The system prompt says what
    carries over under the options in force (default prompts unchanged).

    Every servicegym env also takes ``user_tool`` (``True``: the simulated user is also the tool
    ``respond(message)``, whose result is the reply, for trainer loops that end at a reply
    without a tool call), and offers ``astep``/``areset`` (awaitable), ``turn_messages()`` (the
    OpenAI messages a step added) and ``score_keys`` (the components of ``info["score"]`` every
    finished episode reports as floats).

    ## References
    pi-Bench (proactive personal assistants over many sessions).

    ## Version History
    * v0: initial release (generator v1, frozen suite of 5 episodes x 20 sessions).
    * v0, before the first published release: action limits at the edge (1 MiB, 32 calls, 256 KiB
      an argument, 1,000-character search queries), lone surrogates replaced by U+FFFD, the
      user reads the first 8,000 characters of a message, ``score_keys`` always present as
      floats; generated tasks, suites and their scores unchanged.
    * v0, issue 28 (before the first published release): pi-Bench's episode shape checked at
      generation (six groups of 2-3, five independent sessions), session labels (18
      action/reasoning types) in ``info``, and the history-ablation options ``history_summaries``
      and ``wipe_workspace`` (both off by default). The golden route's calendar read before a
      meeting that carries an earlier one's conventions now starts on the earlier meeting's day
      (it read the current week, which missed that meeting in 3 of the 5 frozen episodes and
      about half of generated ones): those golden actions changed and the frozen suite was
      rebuilt; the rest of every task, and all scores, unchanged.
    * v0, issue 28 part 1 (before the first published release): skills. Generated episodes stage
      the persona's skills (22 over the five personas; two stale per episode), their golden route
      runs a skill where an up-to-date one applies (``sessions[k]["skill"]``; the by-hand route
      stays as ``manual`` and ``world["manual_actions"]``), three tools more (``list_skills``,
      ``read_skill``, ``run_skill``: 64 common tools, 194 in all) and the reported components
      ``skill_use``, ``skills_applicable``, ``stale_skill_use``, ``stale_skills``,
      ``sNN/skill_used``/``sNN/stale_skill_used``; success, PROC and COMP unchanged.
    * v0: an analyst's tickers never repeat (two holdings could share one, which made an
      exclusion check unpassable); only the episodes that drew a repeat change.
    * v0, issue 29: a reset to a new generated task builds its first session only; each later
      session is built when the episode reaches it (or when anything reads the task's world or
      golden route), and every table of its world is made on its first read. Generated tasks,
      observations and scores unchanged, byte for byte.
    """

    domain = DOMAIN
    tool_specs = _all_tools()
    score_keys = ("proc", "comp", "sessions", "sessions_passed", "skill_use", "skills_applicable", "stale_skill_use",
                  "stale_skills")
    count_keys = ("sessions", "sessions_passed", "skills_applicable", "stale_skills")
    default_difficulty = 1

    def __init__(self, *args: Any, max_steps: int = 60, max_errors: int = 20, check_postconditions: bool = False,
                 history_summaries: bool = False, wipe_workspace: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, max_steps=max_steps, max_errors=max_errors, check_postconditions=check_postconditions, **kwargs)
        self.history_summaries = bool(history_summaries)
        self.wipe_workspace = bool(wipe_workspace)
        self._summaries: list[str] = []
        self.session_max_steps = max_steps
        self.session_max_errors = max_errors
        self._check_post = check_postconditions
        self._cache: TaskCache | None = None
        self._session = 0
        self._first = 1
        self._last = 0
        self._single = False
        self._results: dict[int, ws_rewards.SessionResult] = {}
        self._wsuser: WorkspaceUser | None = None
        self._session_initial: WorkspaceWorld | None = None
        self._hist0 = 0
        self._user_seed = 0
        self._budget: Any = None

    def default_source(self, difficulty: int | None) -> TaskSource:
        return WorkspaceSource(DOMAIN, generate_workspace_task, SUITE_PATH,
                               self.default_difficulty if difficulty is None else int(difficulty))

    def build_world(self, task: Task) -> WorkspaceWorld:
        draft = lazy_episode(task)
        spec = draft.head if draft is not None else task.world
        if spec.get("persona") not in PERSONAS:
            raise ValueError(f"world.persona must be one of {', '.join(PERSONAS)}")
        vouched = task.vouched_world  # the generator's own rows: made without validating them again
        # the persona's records as the generator built them (its first build of the task only); a
        # task still being built makes them on the first read of one of its persona's tables
        seeded = seeded_tables(task) if vouched and draft is None else None
        lazy = draft.persona_tables if draft is not None else ()
        tables: dict[str, Any] = {}
        for name, rows in (draft.tables if draft is not None else spec.get("tables", {})).items():
            model = WorkspaceWorld.schema.get(name)
            if model is None:
                raise ValueError(f"world.tables.{name}: unknown table")
            if draft is not None:  # each table made on its first read (the persona's records as generated)
                tables[name] = LazyRows(partial(draft.persona_rows, name) if name in lazy else partial(_draft_table, draft, model, name))
                continue
            if seeded is not None and name in seeded:
                tables[name] = dict(seeded[name])  # the world's own table of the shared, immutable rows
                continue
            table: dict[str, Any] = {}
            for row in (vouched_entities(model, rows) if vouched else (model.model_validate(raw) for raw in rows)):
                table[row.key] = row
            tables[name] = table
        extra = {k: spec[k] for k in ("persona", "owner", "owner_email", "organization")}
        extra["session"] = 0
        return WorkspaceWorld(parse_time(spec["now"]), tables=tables, extra=extra)

    def system_prompt(self, task: Task, world: WorkspaceWorld) -> str:
        w = _head(task)
        first = w["owner"].split()[1] if w["owner"].startswith("Dr.") else w["owner"].split()[0]
        carry = (CARRY_WIPED if self.wipe_workspace else CARRY) + (CARRY_SUMMARIES if self.history_summaries else "")
        return PROMPT.format(owner=w["owner"], title=w["persona"] if w["persona"] != "legal" else "legal intern",
                             organization=w["organization"], email=w["owner_email"], index=self._session,
                             total=_session_count(task), time=world.clock.text(), first=first, form=self.tool_call_form,
                             carry=carry.format(first=first))

    # ----- episodes and sessions -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        options = dict(options or {})
        session = options.pop("session", None)
        super().reset(seed=seed, options=options)
        task = self.task
        persona = _head(task)["persona"]
        self.toolkit = toolkit_for(persona, self._check_post)
        initial = task.cached_world(self.build_world)
        self._cache = _task_cache(task, initial)
        n = len(self._cache.sessions)
        if session is None:
            self._first, self._last, self._single = 1, n, False
        else:
            if isinstance(session, bool) or not isinstance(session, int) or not 1 <= session <= n:
                raise ValueError(f"options['session'] must be a session number 1..{n}, got {session!r}")
            self._first, self._last, self._single = session, session, True
            if not self.wipe_workspace:
                self.world = golden_world(task, session, self.build_world, self.toolkit).copy()
        # single-session mode: the summaries a golden run of the earlier sessions leaves
        self._summaries = [_golden_summary(self._cache.sessions[j - 1].spec, self.toolkit)
                           for j in range(1, self._first)] if self.history_summaries else []
        self._results = {}
        self._user_seed = int(self.np_random.integers(0, 2**31 - 1))
        self._budget = None  # user="llm": one budget of model-call seconds for the whole episode
        self.history = History()
        self._transcript = []
        opening = self._start_session(self._first)
        meta = self._cache.meta
        info = {
            "task_id": task.task_id, "domain": self.domain, "system_prompt": self._system_prompt,
            "tools": self.tool_schemas(), "persona": persona, "session": self._first, "sessions": [self._first, self._last],
            "labels": _labels(meta[self._first - 1]), "session_meta": [dict(m) for m in meta[self._first - 1:self._last]],
            "history_summaries": self.history_summaries, "wipe_workspace": self.wipe_workspace,
        }
        return opening, info

    def _start_session(self, k: int) -> str:
        data = self._cache.sessions[k - 1]
        self._session = k
        if self.wipe_workspace:  # every session starts on the persona's initial workspace
            self.world = self.task.cached_world(self.build_world).copy()
        _begin_session(self.world, data.spec)
        self._session_initial = self.world.copy()
        self._initial = self._session_initial
        self._hist0 = len(self.history)
        self.history.append(step=self._steps, time=self.world.clock.text(), kind="event", role="env", name="session_start",
                            content=str(k))
        checks = data.intent_checks
        def satisfied(iid: str) -> bool:
            return bool(CHECKS[checks[iid].kind](self.episode_view(), checks[iid].params))

        if self._llm_user:  # user="llm": the two-stage decisions by the model, the code check as its fallback
            from servicegym.simulators.llm_workspace_user import LLMWorkspaceUser

            if self._budget is None:
                from servicegym.simulators.llm import EpisodeBudget

                self._budget = EpisodeBudget(self.llm_client().config.episode_budget_s)
            self._wsuser = LLMWorkspaceUser(data.script, satisfied, self.llm_client(), seed=self._user_seed * 100 + k,
                                            budget=self._budget)
        else:
            self._wsuser = WorkspaceUser(data.script, satisfied, seed=self._user_seed * 100 + k)
        self._user = self._wsuser
        opening = self._wsuser.opening()
        self._system_prompt = self.system_prompt(self.task, self.world)
        block = summaries_block(self._summaries) if self.history_summaries else ""
        if block:  # the agent sees them before the request; the user's words stay the opening alone
            self.history.append(step=self._steps, time=self.world.clock.text(), kind="event", role="env",
                                name="session_summaries", content=block)
        self._log = [("system", self._system_prompt), ("user", f"{block}\n{opening}" if block else opening)]
        self._messages = []
        self._materialized = 0
        self._turn_start = 0  # a new session's chat: turn_messages() starts with its system message
        self.history.append(step=self._steps, time=self.world.clock.text(), kind="message", role="user", content=opening)
        self._transcript += [f"[session {k}]", f"[system] {self._system_prompt}", f"[user] {opening}"]
        self.max_steps = self._steps + self.session_max_steps
        self.max_errors = self._tool_errors + self.session_max_errors
        self._done = False
        return f"{block}\n{opening}" if block else opening

    def _summarize(self, k: int) -> str:
        """Session ``k``'s summary from the history since its start."""
        entries = self.history.entries[self._hist0:]
        users = [e.content for e in entries if e.kind == "message" and e.role == "user"]
        users = users[:1] + [u for u in users[1:] if STOP not in u]  # the user's closing adds nothing
        done = []
        for e in entries:
            tool = self.toolkit.resolve(e.name) if e.kind == "tool_call" and e.outcome == "executed" else None
            if tool is not None and tool.kind == "write":
                done.append((tool.name, e.arguments))
        spec = self._cache.sessions[k - 1].spec
        return session_summary(k, spec["start"], users[0] if users else spec["opening"], users[1:], done)

    def episode_view(self) -> EpisodeView:
        agent = [e.content for e in self.history.entries[self._hist0:] if e.kind == "message" and e.role == "assistant"]
        return EpisodeView(world=self.world, initial=self._session_initial, history=self.history, agent_messages=agent)

    def _close_session(self, view: EpisodeView | None, k: int, states: dict[str, str]) -> ws_rewards.SessionResult:
        spec = self._cache.sessions[k - 1].spec
        precursors = [] if self._single else spec["precursors"]
        return ws_rewards.session_result(k, spec["group"], precursors, states, self._cache.sessions[k - 1].checklist, view,
                                         skill=spec.get("skill"))

    def episode_details(self) -> dict[str, Any]:
        """``{"sessions": [...]}``: each closed session's ``session_end`` (index, success, PROC, own
        PROC, COMP, ``intents`` {id: final state: completed, inferred, provided or pending},
        ``checks``), in order; a session a truncation never reached has every intent pending."""
        return {"sessions": [_session_end(self._results[j]) for j in sorted(self._results)]}

    def score(self, task: Task, view: EpisodeView) -> tuple[bool, dict[str, Any]]:
        """Closes the current session (``step`` turns it into the session's or episode's outcome)."""
        res = self._close_session(view, self._session, dict(self._wsuser.states))
        self._results[self._session] = res
        return res.success, {}

    def _after_step(self, result: tuple[str, float, bool, bool, dict[str, Any]]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, _, terminated, truncated, info = result
        if not (terminated or truncated):
            return obs, 0.0, False, False, info
        k = self._session
        res = self._results[k]
        reward = float(res.success)
        ws_rewards.pool(self._results)
        info["session_end"] = {**_session_end(res), **_labels(self._cache.meta[k - 1])}
        if terminated and k < self._last:
            for key in ("termination_reason", "success", "score"):
                info.pop(key, None)
            if self.history_summaries:
                self._summaries.append(self._summarize(k))
            opening = self._start_session(k + 1)
            spec = self._cache.sessions[k].spec
            info["session_start"] = dict(self._cache.meta[k])
            block = (f'<session index="{k + 1}" of="{len(self._cache.sessions)}" start="{spec["start"]}">'
                     f"{opening}</session>")
            self._transcript.append(block)
            return f"{obs}\n{block}" if obs else block, reward, False, False, info
        for j in range(k + 1, self._last + 1):  # truncated: the sessions never reached score 0
            data = self._cache.sessions[j - 1]
            self._results[j] = self._close_session(None, j, {i.id: "pending" for i in data.script.intents})
        agg = ws_rewards.aggregate(self._results)
        score: dict[str, Any] = {**agg, "sessions": float(len(self._results)), **ws_rewards.skill_components(self._results)}
        for j in sorted(self._results):
            score.update(ws_rewards.session_components(self._results[j]))
        info["success"] = all(r.success for r in self._results.values())
        info["score"] = self._fixed_score(score)
        return obs, reward, terminated, truncated, info


def _labels(meta: dict[str, Any]) -> dict[str, Any]:
    return {"group": meta["group"], "action": list(meta["action"]), "reasoning": list(meta["reasoning"])}


def _session_end(res: ws_rewards.SessionResult) -> dict[str, Any]:
    return {"index": res.index, "success": res.success, "proc": res.proc, "own_proc": res.own_proc, "comp": res.comp,
            "intents": dict(res.states), "checks": dict(res.checks)}
