"""Persona workspace episodes (pi-Bench): 20 sessions in one persistent workspace, with hidden
intents, carried-over preferences and rule-checked checklists.

An episode belongs to one persona (``content_workspace``). Its 20 sessions are:

- six dependency groups of two or three sessions that share something carried over: a report
  format (the section headings of a weekly report), an exclusion rule (a category of records left
  out of every export), a recipient list (who is copied on every summary mail), meeting
  conventions (who is invited, where), a to-do label and note tags. The first session of a group
  hides the preference (the user answers when asked, or reveals it); later sessions hide it too,
  but now the workspace holds the evidence (the earlier report, the sent mail, the earlier event),
  so a proactive agent can apply it unasked;
- five independent sessions.

Each session is built from *facets*: the stated request (the base checks) and 1-3 hidden intents,
each intent with a predicate over the final artifacts (also a checklist item), the user's words
when revealing or answering it, the cue phrases that make a question about it targeted, and the
golden agent's targeted question. ``render(active facets)`` writes the actions that produce the
session's artifacts with those facets applied, so the golden route, the generic-question route
and the "carried preference ignored" routes all come from one place:

- golden: a targeted question for every intent the workspace cannot tell, the reads that reveal
  the carried ones, the artifacts with every facet, a report of what was done;
- generic: only generic questions (each reveals one intent), then the artifacts: COMP 1, PROC 0;
- ignored: like golden but with the carried facets left out: the session fails.

The shape is pi-Bench's at every seed (``check_structure`` runs on each built episode), a carried
intent's spec names the golden reads that show it (``evidence``), and ``episode_labels`` gives each
session its action and reasoning types (``ACTION_TYPES``/``REASONING_TYPES``, our taxonomy of
18), derived from its checklist and intents.

Every draw of an episode comes from its stream in one order: the data files, the conventions and
the session order (``Episode.begin``), then each session in turn (``build_next``). So a task made
for an env (``violations=False``) builds only its first session: the others are built when first
read (``EpisodeDraft``), from the stream as it stood, and whoever reads the task's world reads the
whole of it (``Task.defer_world``): the same task, byte for byte, as one built at once. The env reads a
new task's first session, world and session labels (learnt by slot: ``_known_meta``) from the draft.

The generator's parts live in sibling modules: ``workspace_plans`` (the episode's constants, the
tools the golden routes call, checklist items, a session's facets and plan, the cue phrases),
``workspace_data`` (an episode's batches of records, its start and workdays, the persona's seeded
records), ``workspace_episode`` (``Episode``: the draws before the sessions, each session kind and
the episode's checks), ``workspace_world`` (the workspace's tables at the episode's start, and the
seeded records handed to the env) and ``workspace_labels`` (the episode's structure and the
sessions' action and reasoning labels). This module is the entry point, ``generate_workspace_task``,
with the episodes built as they are read (``EpisodeDraft``, ``lazy_episode``) and the session labels
learnt by slot; it re-exports the names the env, the scripts and the tests import from it.
"""

from __future__ import annotations

import random
import threading
import weakref
from collections.abc import Sequence
from functools import partial
from typing import Any

from servicegym.envs.tasks.generators.content_workspace import PERSONA_CONTENT, PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace_episode import Episode
from servicegym.envs.tasks.generators.workspace_labels import (
    ACTION_TYPES,
    LABEL_TYPES,
    REASONING_TYPES,
    _item_paths,
    check_values,
    episode_labels,
    episode_structure,
    session_labels,
)
from servicegym.envs.tasks.generators.workspace_plans import DOMAIN, SESSIONS, VERSION, Plan, item, item_json
from servicegym.envs.tasks.generators.workspace_world import (
    _SEEDED,
    _remember_seeded,
    file_rows,
    initial_tables,
    persona_table_names,
    persona_table_rows,
    seeded_tables,
)
from servicegym.envs.tasks.model import Task
from servicegym.simulators.scripted_user import UserScript
from servicegym.world_state.core import TIME_FORMAT

__all__ = [
    "ACTION_TYPES",
    "DraftSessions",
    "Episode",
    "EpisodeDraft",
    "LABEL_TYPES",
    "Plan",
    "REASONING_TYPES",
    "_SEEDED",
    "check_values",
    "episode_labels",
    "episode_structure",
    "file_rows",
    "generate_workspace_task",
    "item",
    "item_json",
    "lazy_episode",
    "seeded_tables",
    "session_labels",
]


def _episode_task(ep: Episode, world: dict[str, Any], opening: str, golden: list[str], viol: dict[str, list[str]]) -> Task:
    """The task of an episode whose first session is built (the others may be still to build)."""
    p, persona = ep.p, ep.persona
    groups = sorted({g for g, _i in ep.slots if g})
    return Task(
        task_id=f"{DOMAIN}-{persona}/{ep.split}/{ep.seed}/d{ep.difficulty}", domain=DOMAIN, difficulty=ep.difficulty,
        reasoning_points=ep.facet_total, world=world,
        user=UserScript(opening=opening, persona={"name": p.owner, "persona": persona}),
        rubric=[], golden_actions=golden, violations=viol,
        notes=[f"{persona} episode: {SESSIONS} sessions, {len(groups)} dependency groups ({', '.join(groups)}), "
               f"{ep.facet_total} hidden intents"],
    )


def generate_workspace_task(seed: int, difficulty: int = 1, split: str = "train", violations: bool = True,
                            persona: str | None = None) -> Task:
    """One persona episode; the persona is ``PERSONA_ORDER[seed % 5]`` unless named.

    Without ``violations`` the task's sessions after the first are built when first read
    (``EpisodeDraft``, ``Task.defer_world``): the same sessions, drawn in the same order, whenever
    that is."""
    persona = persona or PERSONA_ORDER[seed % len(PERSONA_ORDER)]
    if persona not in PERSONA_CONTENT:
        raise ValueError(f"unknown persona {persona!r}; choose from {', '.join(PERSONA_ORDER)}")
    ep = Episode(persona, seed, difficulty, split)
    if not violations:
        return _lazy_task(ep)
    ep.build()
    p = ep.p
    sessions = ep.specs
    world: dict[str, Any] = {
        "version": VERSION, "persona": persona, "owner": p.owner, "owner_email": p.owner_email,
        "organization": p.organization, "now": ep.start.strftime(TIME_FORMAT), "tables": initial_tables(ep),
        "sessions": sessions,
    }
    from servicegym.envs.tasks.generators.workspace_skills import stage_skills  # issue 28 part 1: the persona's skills

    stage_skills(ep, world, f"{persona}/{split}/{seed}/d{difficulty}")  # sessions a skill does use it in their golden route
    _learn_labels(ep)
    golden = [a for s in sessions for a in s["golden"]]
    viol: dict[str, list[str]] = {}
    grng = random.Random(f"{persona}/{split}/{seed}/generic")
    world["generic_actions"] = [a for plan in ep.plans for a in plan.generic(grng)]
    routes = [plan.golden() for plan in ep.plans]  # each plan's route once (``Plan.golden`` draws nothing)
    for k, plan in enumerate(ep.plans):
        if any(f.carried for f in plan.facets):
            viol[f"s{plan.index:02d}"] = ([a for r in routes[:k] for a in r] + plan.ignoring_carried()
                                          + [a for r in routes[k + 1:] for a in r])
    # the generator's word that the world's rows are as it wrote them: the env builds them unvalidated
    task = _episode_task(ep, world, sessions[0]["opening"], golden, viol).vouch_world()
    # each plan's render closes over the episode that holds the plans: without the cycle the episode
    # (a thousand objects) goes at once, not at the cyclic collector's next pass
    ep.release()
    _remember_seeded(task, ep)
    return task


# ----- episodes built as they are read ------------------------------------------------------------
class EpisodeDraft:
    """A generated episode whose first session is built and whose others are built when first read
    (``session``), in order, from the episode's stream as it stood: the same sessions as an episode
    built at once. ``complete`` builds the rest; the task's world defers its ``tables``,
    ``sessions`` and ``manual_actions`` to it (``Task.defer_world``: ``world_tables``,
    ``world_sessions``, ``world_manual``), so any whole read of the task or of its world reads the
    whole episode. The env reads a new task's opening session, world and session labels from here
    (``lazy_episode``), so a reset to a new task builds one session of twenty."""

    __slots__ = ("ep", "stage", "_task", "head", "tables", "persona_tables", "meta", "manual", "_staged", "_files_made",
                 "_lock")

    def __init__(self, ep: Episode, stage: Any, head: dict[str, Any], tables: dict[str, list[Any]],
                 persona_tables: tuple[str, ...], meta: list[dict[str, Any]]) -> None:
        self.ep = ep
        self.stage = stage
        self._task: weakref.ref[Task] | None = None  # the task (``watch``), weakly
        self.head = head  # version, persona, owner, owner_email, organization, now
        self.tables = tables  # the world's tables (the files by ``table_rows``, the persona's by ``complete``)
        self.persona_tables = persona_tables
        self.meta = meta  # per session: index, group, precursors, action, reasoning (``episode_labels``)
        self.manual: list[str] | None = None  # the by-hand route, once ``complete``
        self._staged = len(ep.specs)  # the sessions built and staged (their specs final)
        self._files_made = False  # the files table filled (``table_rows``)
        self._lock = threading.RLock()

    @property
    def specs(self) -> DraftSessions:
        """The sessions' specs, each built on first read."""
        return DraftSessions(self)

    def watch(self, task: Task) -> None:
        """Hold ``task`` weakly: when it goes with its episode unfinished, the episode's cycles go
        (``Episode.release``; nothing here refers back to this draft)."""
        self._task = weakref.ref(task, partial(_drop_episode, self.ep))

    def session(self, k: int) -> dict[str, Any]:
        """Session ``k``'s spec (0-based), built now if it was not (with every session before it)."""
        if 0 <= k < self._staged:
            return self.ep.specs[k]
        if not 0 <= k < SESSIONS:
            raise IndexError(f"session index {k} out of range")
        with self._lock:
            ep = self.ep
            while self._staged <= k:
                plan = ep.build_next()
                assert plan is not None
                self.stage.session(plan, ep.specs[-1])
                self._staged += 1  # (after its staging: a read without the lock sees it final)
            return ep.specs[k]

    def table_rows(self, name: str) -> list[dict[str, Any]]:
        """The rows of the world's table ``name`` (not a persona table's: ``persona_rows``). The
        files table's are made on its first read: the README, the data files (their records made
        from the batches' draws) and the skill folders, in that order."""
        if name == "files" and not self._files_made:
            with self._lock:
                if not self._files_made:
                    self.tables["files"] += file_rows(self.ep) + self.stage.file_rows()
                    self._files_made = True
        return self.tables[name]

    def persona_rows(self, name: str) -> dict[str, Any]:
        """The persona table ``name``'s seeded entities (key -> entity), a dict of its own."""
        with self._lock:
            return dict(self.ep.seeded[name])

    def complete(self) -> None:
        """Build every session left and fill what the world still lacks: its persona tables' rows,
        its by-hand route (``manual``); the episode's checks run (``Episode.finish``). Once."""
        with self._lock:
            if self.manual is not None:
                return
            ep = self.ep
            self.session(SESSIONS - 1)
            self.table_rows("files")
            ep.finish()
            if tuple(ep.seeded) != self.persona_tables:
                raise AssertionError(f"{ep.persona}: seeded tables {tuple(ep.seeded)} differ from {self.persona_tables}")
            self.tables.update(persona_table_rows(ep))  # the keys are in place: the order stays
            manual = [a for s in ep.specs for a in s["manual"]]
            _learn_labels(ep)
            ep.release()
            self.manual = manual

    # the world's deferred keys (``Task.defer_world``): the first to run completes the episode
    def world_tables(self) -> dict[str, list[Any]]:
        self.complete()
        return self.tables

    def world_sessions(self) -> list[dict[str, Any]]:
        self.complete()
        return self.ep.specs

    def world_manual(self) -> list[str]:
        self.complete()
        assert self.manual is not None
        return self.manual

    def golden(self) -> list[str]:
        """The whole golden route (``Task.defer_golden``: every session built)."""
        self.complete()
        return [a for s in self.ep.specs for a in s["golden"]]


def _drop_episode(ep: Episode, _task: Any) -> None:
    """A draft's task went: drop the episode's cycles (``Episode.release``; a no-op when the
    episode was completed, which released them)."""
    ep.release()


class DraftSessions(Sequence[dict[str, Any]]):
    """An episode draft's session specs, each built on first read (``EpisodeDraft.session``)."""

    __slots__ = ("_draft",)

    def __init__(self, draft: EpisodeDraft) -> None:
        self._draft = draft

    def __len__(self) -> int:
        return SESSIONS

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(SESSIONS))]
        if k < 0:
            k += SESSIONS
        return self._draft.session(k)


def lazy_episode(task: Task) -> EpisodeDraft | None:
    """The draft of ``task``'s episode while its world is still deferred (``Task.defer_world``),
    for the task its generator made (a copy, and a task whose world was read, is whole); None
    otherwise."""
    maker = task.world_parts()[1].get("sessions")
    draft = getattr(maker, "__self__", None)
    if type(draft) is EpisodeDraft and task.vouched_world:
        return draft
    return None


def _lazy_task(ep: Episode) -> Task:
    from servicegym.envs.tasks.generators.workspace_skills import SkillStage

    ep.begin()
    plan = ep.build_next()
    assert plan is not None
    p, persona = ep.p, ep.persona
    tables = initial_tables(ep, persona_rows=False, files=False)  # (the files made on first read: ``table_rows``)
    head = {"version": VERSION, "persona": persona, "owner": p.owner, "owner_email": p.owner_email,
            "organization": p.organization, "now": ep.start.strftime(TIME_FORMAT)}
    world: dict[str, Any] = {**head, "tables": tables, "sessions": ep.specs}
    stage = SkillStage(ep, world, f"{persona}/{ep.split}/{ep.seed}/d{ep.difficulty}", files=False)
    stage.session(plan, ep.specs[0])
    world["manual_actions"] = []  # (its place: ``complete`` makes it)
    task = _episode_task(ep, {}, ep.specs[0]["opening"], [], {})
    task.world = world  # set, not validated (vouched for below)
    draft = EpisodeDraft(ep, stage, head, tables, persona_table_names(ep), [])
    meta = _known_meta(ep)
    if meta is None and _probe(ep.difficulty):
        meta = _known_meta(ep)
    if meta is None:  # a session whose labels are not known yet: build them all now (and learn them)
        draft.complete()
        world["manual_actions"] = draft.world_manual()
        task.golden_actions = [a for s in ep.specs for a in s["golden"]]
    else:
        draft.meta[:] = meta
        draft.watch(task)
        # the rest of the episode is built when the world or the golden route is first read
        task.defer_world({"tables": draft.world_tables, "sessions": draft.world_sessions,
                          "manual_actions": draft.world_manual})
        task.defer_golden(draft.golden)
    task.vouch_world()
    _remember_seeded(task, ep)
    return task


# session labels by slot: a session's labels (``session_labels``) follow from its place in the
# episode's structure (the group, or the singles, and its position there), the persona and the
# difficulty, and from which paths earlier sessions made that its checks read; learnt from every
# episode built whole, so a new episode's are known before its sessions are built (bounded)
# (persona, difficulty) -> slot -> (paths its checks read, paths it requires to exist, labels by the
# paths of the first kind earlier sessions made)
_SLOTS: dict[tuple[str, int], dict[tuple[str, int], tuple[frozenset[str], frozenset[str], dict[frozenset[str], Any]]]] = {}
_MAX_SLOTS = 4096
_NONE: frozenset[str] = frozenset()


def _learn_labels(ep: Episode) -> None:
    """Remember the labels of every session of a built episode, by slot (checking those known)."""
    slots = _SLOTS.get((ep.persona, ep.difficulty))
    if slots is None:
        if len(_SLOTS) >= _MAX_SLOTS:
            return
        slots = _SLOTS[(ep.persona, ep.difficulty)] = {}
    made: set[str] = set()
    for slot, spec in zip(ep.slots, ep.specs, strict=True):
        reads = frozenset(p for it in spec["checklist"] for p in _item_paths(it.get("params") or {}))
        exists = frozenset(it["params"]["path"] for it in spec["checklist"] if it["kind"] == "ws.file_exists")
        seen = slots.get(slot)
        if seen is None:
            seen = slots[slot] = (reads, exists, {})
        elif seen[:2] != (reads, exists):
            raise AssertionError(f"session {spec['index']} of {ep.persona}: paths {reads}, {exists} differ from its slot's {seen[:2]}")
        labels = session_labels(spec, made)
        labels = (tuple(labels["action"]), tuple(labels["reasoning"]))
        inter = frozenset(made & reads)
        known = seen[2].get(inter)
        if known is None:
            if len(seen[2]) < 64:
                seen[2][inter] = labels
        elif known != labels:
            raise AssertionError(f"session {spec['index']} of {ep.persona}: labels {labels} differ from its slot's {known}")
        made |= exists


_PROBED: set[int] = set()  # the difficulties ``_probe`` has learnt the slots of


def _probe(difficulty: int) -> bool:
    """Learn the session labels of every persona's slots at ``difficulty`` from one episode of
    each built whole (once per difficulty: what the labels follow from is the same at every seed;
    ``_learn_labels`` checks it of every episode built whole). False when already done."""
    if difficulty in _PROBED or len(_PROBED) >= 64:
        return False
    _PROBED.add(difficulty)
    for persona in PERSONA_ORDER:
        ep = Episode(persona, 0, difficulty, "train")
        ep.build()
        _learn_labels(ep)
        persona_table_names(ep)
        ep.release()
    return True


def _known_meta(ep: Episode) -> list[dict[str, Any]] | None:
    """Each session's ``{"index", "group", "precursors", "action", "reasoning"}`` (the env's
    session meta: ``episode_labels`` of the sessions) from the slots learnt, or None when one is not known."""
    slots = _SLOTS.get((ep.persona, ep.difficulty))
    if slots is None:
        return None
    out = []
    made: frozenset[str] = _NONE
    for idx, (slot, precursors) in enumerate(zip(ep.slots, ep.precursors, strict=True), 1):
        known = slots.get(slot)
        if known is None:
            return None
        reads, exists, by_made = known
        labels = by_made.get(made & reads if reads else _NONE)
        if labels is None:
            return None
        out.append({"index": idx, "group": slot[0], "precursors": list(precursors), "action": list(labels[0]),
                    "reasoning": list(labels[1])})
        if exists:
            made = made | exists
    return out
