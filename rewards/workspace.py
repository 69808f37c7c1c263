"""Scoring of persona workspace sessions (pi-Bench): intent predicates, checklist rule checks,
PROC and COMP and their aggregates.

Intent predicates and checklist items are both ``RubricItem``s whose ``kind`` is a check
registered here (``ws.*``), read over an ``EpisodeView`` of one session: the world as it is, the
world at the session's start (``initial``), the history and the agent's messages of that session.
The checks never mutate anything.

- ``ws.file_exists``, ``ws.file_contains``, ``ws.file_lacks``: a workspace file and exact strings
  in (or absent from) it;
- ``ws.md_headings``: the level-2 headings of a markdown file, exactly and in order;
- ``ws.csv_header``, ``ws.csv_keys``, ``ws.csv_cells``: a CSV file's header, the values of its key
  column (as a set or in order) and exact cells by key;
- ``ws.json_schema``, ``ws.json_values``: a JSON file valid against a JSON Schema, and exact values
  at dotted paths;
- ``ws.record``: the last record of a table (mail, calendar, todos, notes, contacts or a persona
  table) that matches ``where`` exists and has the ``expect`` field values (lists compared as sets
  with ``expect_set``, list members with ``expect_includes``, substrings with ``expect_contains``);
- ``ws.reply_contains``: the agent said each text (case-insensitively) in the session.

Skill use (issue 28), reported and never part of success: a session a staged skill does records
whether the agent ran it (``sNN/skill_used``, or ``sNN/stale_skill_used`` when the skill is out of
date); ``skill_components`` gives the episode's ``skill_use`` and ``stale_skill_use``. COMP reads
the artifacts whatever route made them, and an intent a skill's output satisfied before the user
named it is Completed like any other.

Arithmetic (pure functions, tested on hand-computed values):

- a session's PROC = (Completed + Inferred) / hidden intents, over its own intents pooled with
  those of its precursors (the earlier sessions of its dependency group), as pi-Bench does;
- a session's COMP = sum of the weights of passed checklist items / sum of all weights;
- a session succeeds when COMP = 1 and each of its *own* intents is Completed or Inferred;
- episode (persona) aggregates: every dependency group (an independent session is a group of one)
  scores the pooled PROC of its last session and the mean COMP of its sessions, and the groups are
  averaged weighted by their size.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from servicegym.rewards.rubric import EpisodeView, RubricItem, check, evaluate
from servicegym.world_state.core import Entity

COMPLETED, INFERRED, PROVIDED, PENDING = "completed", "inferred", "provided", "pending"
INTENT_STATES = (COMPLETED, INFERRED, PROVIDED, PENDING)
PROACTIVE = (COMPLETED, INFERRED)


# ----- file checks ------------------------------------------------------------------------------
def file_text(view: EpisodeView, path: str) -> str | None:
    row = view.world.table("files").get(path)
    return None if row is None else row.content


@check("ws.file_exists")
def _file_exists(view: EpisodeView, p: dict[str, Any]) -> bool:
    return file_text(view, p["path"]) is not None


@check("ws.file_contains")
def _file_contains(view: EpisodeView, p: dict[str, Any]) -> bool:
    text = file_text(view, p["path"])
    return text is not None and all(t in text for t in p["texts"])


@check("ws.file_lacks")
def _file_lacks(view: EpisodeView, p: dict[str, Any]) -> bool:
    text = file_text(view, p["path"])
    return text is not None and not any(t in text for t in p["texts"])


def md_headings(text: str, level: int = 2) -> list[str]:
    mark = "#" * level + " "
    return [line[len(mark):].strip() for line in text.splitlines() if line.startswith(mark)]


@check("ws.md_headings")
def _md_headings(view: EpisodeView, p: dict[str, Any]) -> bool:
    text = file_text(view, p["path"])
    return text is not None and md_headings(text, p.get("level", 2)) == list(p["headings"])


def csv_rows(text: str) -> list[list[str]] | None:
    """The rows of a CSV text, or None when it is not CSV (ragged rows, no header)."""
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if r]
    except csv.Error:
        return None
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        return None
    return [[c.strip() for c in r] for r in rows]


def _csv(view: EpisodeView, path: str) -> list[list[str]] | None:
    text = file_text(view, path)
    return None if text is None else csv_rows(text)


@check("ws.csv_header")
def _csv_header(view: EpisodeView, p: dict[str, Any]) -> bool:
    rows = _csv(view, p["path"])
    return rows is not None and rows[0] == list(p["columns"])


def _column(rows: list[list[str]], name: str) -> list[str] | None:
    if name not in rows[0]:
        return None
    i = rows[0].index(name)
    return [r[i] for r in rows[1:]]


@check("ws.csv_keys")
def _csv_keys(view: EpisodeView, p: dict[str, Any]) -> bool:
    """The key column holds exactly ``values`` (in this order with ``ordered``, else as a set)."""
    rows = _csv(view, p["path"])
    col = None if rows is None else _column(rows, p["column"])
    if col is None:
        return False
    if p.get("ordered"):
        return col == list(p["values"])
    return sorted(col) == sorted(p["values"]) and len(set(col)) == len(col)


@check("ws.csv_cells")
def _csv_cells(view: EpisodeView, p: dict[str, Any]) -> bool:
    """``cells``: key value -> {column: exact text}; ``key`` names the key column."""
    rows = _csv(view, p["path"])
    if rows is None or p["key"] not in rows[0]:
        return False
    head = rows[0]
    by_key = {r[head.index(p["key"])]: r for r in rows[1:]}
    for key, cells in p["cells"].items():
        row = by_key.get(key)
        if row is None:
            return False
        for col, want in cells.items():
            if col not in head or row[head.index(col)] != want:
                return False
    return True


def _json(view: EpisodeView, path: str) -> tuple[bool, Any]:
    text = file_text(view, path)
    if text is None:
        return False, None
    try:
        return True, json.loads(text)
    except json.JSONDecodeError:
        return False, None


@check("ws.json_schema")
def _json_schema(view: EpisodeView, p: dict[str, Any]) -> bool:
    ok, data = _json(view, p["path"])
    if not ok:
        return False
    return jsonschema.Draft202012Validator(p["schema"]).is_valid(data)


def dotted(data: Any, path: str) -> tuple[bool, Any]:
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False, None
    return True, data


@check("ws.json_values")
def _json_values(view: EpisodeView, p: dict[str, Any]) -> bool:
    ok, data = _json(view, p["path"])
    if not ok:
        return False
    for path, want in p["values"].items():
        found, got = dotted(data, path)
        if not found or got != want:
            return False
    return True


# ----- record checks ----------------------------------------------------------------------------
def _matches(row: Entity, where: dict[str, Any]) -> bool:
    for key, want in where.items():
        if key.startswith("~"):
            got = getattr(row, key[1:], None)
            if not isinstance(got, str) or want.casefold() not in got.casefold():
                return False
        elif getattr(row, key, None) != want:
            return False
    return True


def last_match(view: EpisodeView, table: str, where: dict[str, Any]) -> Entity | None:
    """The most recently written record of ``table`` matching ``where`` (``"~field"``: substring,
    any case; other keys: equality). Records are ordered by insertion; the last one counts."""
    hit = None
    for row in view.world.table(table):
        if _matches(row, where):
            hit = row
    return hit


@check("ws.record")
def _record(view: EpisodeView, p: dict[str, Any]) -> bool:
    row = last_match(view, p["table"], p.get("where", {}))
    if row is None:
        return False
    for key, want in p.get("expect", {}).items():
        if getattr(row, key, None) != want:
            return False
    for key, want in p.get("expect_set", {}).items():
        got = getattr(row, key, None)
        if not isinstance(got, list) or sorted(x.casefold() for x in got) != sorted(x.casefold() for x in want):
            return False
    for key, want in p.get("expect_includes", {}).items():
        got = getattr(row, key, None)
        if not isinstance(got, list) or not all(w in got for w in want):
            return False
    for key, subs in p.get("expect_contains", {}).items():
        got = getattr(row, key, None)
        if not isinstance(got, str) or not all(s.casefold() in got.casefold() for s in subs):
            return False
    return True


@check("ws.reply_contains")
def _reply_contains(view: EpisodeView, p: dict[str, Any]) -> bool:
    said = "\n".join(view.agent_messages).casefold()
    return all(t.casefold() in said for t in p["texts"])


# ----- PROC, COMP, success and aggregates --------------------------------------------------------
def proc(states: Iterable[str]) -> float:
    """(Completed + Inferred) / intents; a session without hidden intents scores 1."""
    states = list(states)
    if not states:
        return 1.0
    return sum(s in PROACTIVE for s in states) / len(states)


def comp(items: list[RubricItem], results: dict[str, bool]) -> float:
    """Weighted fraction of checklist items that hold (weight 0 items are logged only)."""
    weighted = [i for i in items if i.weight > 0]
    total = sum(i.weight for i in weighted)
    if not total:
        return 1.0
    return sum(i.weight for i in weighted if results[i.name]) / total


@dataclass
class SessionResult:
    """One session's outcome: final intent states and checklist results."""

    index: int
    group: str
    precursors: list[int]
    states: dict[str, str]
    checks: dict[str, bool]
    comp: float
    played: bool = True
    proc: float = 0.0  # pooled with the precursors', filled by ``pool``
    own_proc: float = 0.0
    success: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def session_result(index: int, group: str, precursors: list[int], states: dict[str, str],
                   checklist: list[RubricItem], view: EpisodeView | None, skill: dict[str, Any] | None = None) -> SessionResult:
    """Score one session's checklist over ``view`` (None: the session was never played, all fails).
    ``skill``: the session's ``skill`` spec (``name``, ``stale``) when a staged skill does its work;
    whether the agent ran it goes to ``extra["skill"]`` (reported, never part of success)."""
    checks = evaluate(checklist, view) if view is not None else {i.name: False for i in checklist}
    c = comp(checklist, checks)
    own = proc(states.values())
    ok = view is not None and c == 1.0 and all(s in PROACTIVE for s in states.values())
    res = SessionResult(index, group, list(precursors), dict(states), checks, c, view is not None,
                        proc=own, own_proc=own, success=ok)
    if skill:
        used = view is not None and skill["name"] in skills_run(view)
        res.extra["skill"] = {"name": skill["name"], "stale": bool(skill.get("stale")), "used": used}
    return res


# ----- skill use (issue 28): reported beside PROC and COMP, never part of success ---------------
def skills_run(view: EpisodeView) -> set[str]:
    """Names of the skills the agent ran (``run_skill`` executed, not a dry run) in the view's
    session: the calls after the last ``session_start`` event of the history."""
    entries = view.history.entries
    start = 0
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if e.kind == "event" and e.name == "session_start":
            start = i
            break
    out = set()
    for e in entries[start:]:
        if (e.kind == "tool_call" and e.name == "run_skill" and e.outcome == "executed"
                and not e.arguments.get("dry_run") and isinstance(e.arguments.get("name"), str)):
            out.add(e.arguments["name"].strip())
    return out


def skill_components(results: dict[int, SessionResult]) -> dict[str, float]:
    """Episode skill use: ``skill_use`` = fraction of the *applicable* sessions (a skill that is
    up to date does the session's work) in which the agent ran that skill (0 when none applies),
    ``skills_applicable`` (how many), ``stale_skill_use`` = fraction of the sessions whose skill
    is stale in which the agent ran it anyway (0 when none), ``stale_skills`` (how many)."""
    fresh = [r.extra["skill"] for r in results.values() if "skill" in r.extra and not r.extra["skill"]["stale"]]
    stale = [r.extra["skill"] for r in results.values() if "skill" in r.extra and r.extra["skill"]["stale"]]
    return {"skill_use": sum(s["used"] for s in fresh) / len(fresh) if fresh else 0.0,
            "skills_applicable": float(len(fresh)),
            "stale_skill_use": sum(s["used"] for s in stale) / len(stale) if stale else 0.0,
            "stale_skills": float(len(stale))}


def pool(results: dict[int, SessionResult]) -> None:
    """Set each session's ``proc`` to PROC over its own and its precursors' intents (precursors
    missing from ``results``, e.g. in a single-session episode, are left out)."""
    for r in results.values():
        states = list(r.states.values())
        for p in r.precursors:
            if p in results:
                states += list(results[p].states.values())
        r.proc = proc(states)


def groups_of(results: dict[int, SessionResult]) -> list[list[int]]:
    """Dependency groups (session indices in order); an independent session is its own group."""
    by: dict[str, list[int]] = {}
    out: list[list[int]] = []
    for i in sorted(results):
        g = results[i].group
        if not g:
            out.append([i])
        elif g in by:
            by[g].append(i)
        else:
            by[g] = [i]
            out.append(by[g])
    return out


def aggregate(results: dict[int, SessionResult]) -> dict[str, float]:
    """Episode PROC and COMP weighted by dependency-group size, and the fraction of sessions passed.

    A group scores the pooled PROC of its last session and the mean COMP of its sessions."""
    pool(results)
    groups = groups_of(results)
    total = sum(len(g) for g in groups)
    if not total:
        return {"proc": 0.0, "comp": 0.0, "sessions_passed": 0.0}
    p = sum(len(g) * results[g[-1]].proc for g in groups) / total
    c = sum(len(g) * (sum(results[i].comp for i in g) / len(g)) for g in groups) / total
    passed = sum(r.success for r in results.values()) / len(results)
    return {"proc": p, "comp": c, "sessions_passed": passed}


def session_components(r: SessionResult) -> dict[str, float]:
    """The flat score components of one session: ``sNN/proc`` (pooled), ``sNN/own_proc``,
    ``sNN/comp``, ``sNN/check/<item>``, ``sNN/intent/<id>`` (1 when Completed or Inferred) and
    ``rubric/sNN`` (strict success)."""
    tag = f"s{r.index:02d}"
    out = {f"{tag}/proc": r.proc, f"{tag}/own_proc": r.own_proc, f"{tag}/comp": r.comp, f"rubric/{tag}": float(r.success)}
    out.update({f"{tag}/check/{k}": float(v) for k, v in r.checks.items()})
    out.update({f"{tag}/intent/{k.split('.', 1)[-1]}": float(v in PROACTIVE) for k, v in r.states.items()})
    skill = r.extra.get("skill")
    if skill:  # sessions a staged skill does: whether the agent ran it (a stale one: ran it anyway)
        out[f"{tag}/{'stale_skill_used' if skill['stale'] else 'skill_used'}"] = float(skill["used"])
    return out
