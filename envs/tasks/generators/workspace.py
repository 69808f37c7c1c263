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
"""

from __future__ import annotations

import csv
import io
import json
import random
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from pydantic_core import to_jsonable_python

from servicegym.envs.tasks.generators.common import call, task_rng
from servicegym.envs.tasks.generators.content_workspace import (
    GENERIC_QUESTIONS,
    PERSONA_CONTENT,
    PERSONA_ORDER,
    PersonaContent,
    draw_values,
    people,
)
from servicegym.envs.tasks.model import Task
from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.scripted_user import UserScript, cue_pattern
from servicegym.simulators.workspace_user import questions_in
from servicegym.world_state.core import TIME_FORMAT, unvalidated

VERSION = 1
DOMAIN = "workspace"
SESSIONS = 20
# pi-Bench's episode shape: six strongly dependent groups of 2-3 sessions and five independent ones
GROUPS = 6
GROUP_SIZES = (2, 3)
INDEPENDENT = 5
SEEDED_MAIL_IDS = ("M001", "M002")  # the mails in the initial workspace
START = "2026-03-02 09:00:00"  # a Monday; used when the persona profile names no start


# ----- the tools the golden routes call (one place, should a tool be renamed) -------------------
class Ops:
    @staticmethod
    def write(path: str, content: str) -> str:
        return call("write_file", path=path, content=content, overwrite=True)

    @staticmethod
    def read(path: str) -> str:
        return call("read_file", path=path)

    @staticmethod
    def sent_mail() -> str:
        return call("list_mail", folder="sent")

    @staticmethod
    def open_mail(mail_id: str) -> str:
        return call("read_mail", mail_id=mail_id)

    @staticmethod
    def send(to: list[str], subject: str, body: str, cc: list[str], attachments: list[str]) -> str:
        args: dict[str, Any] = {"to": to, "subject": subject, "body": body}
        if cc:
            args["cc"] = cc
        if attachments:
            args["attachments"] = attachments
        return call("send_mail", **args)

    @staticmethod
    def events(since: str = "") -> str:
        """The calendar from ``since`` (a day, ``YYYY-MM-DD``; default today) for a week."""
        return call("list_events", start_date=since) if since else call("list_events")

    @staticmethod
    def event(title: str, start: str, end: str, attendees: list[str], location: str, description: str) -> str:
        return call("create_event", title=title, start=start, end=end, attendees=attendees, location=location,
                    description=description)

    @staticmethod
    def todos() -> str:
        return call("list_todos")

    @staticmethod
    def todo(title: str, due: str, priority: str, notes: str) -> str:
        args: dict[str, Any] = {"title": title, "priority": priority}
        if due:
            args["due"] = due
        if notes:
            args["notes"] = notes
        return call("add_todo", **args)

    @staticmethod
    def notes() -> str:
        return call("list_notes")

    @staticmethod
    def note(title: str, body: str, tags: list[str]) -> str:
        return call("create_note", title=title, body=body, tags=tags)


# ----- plans ------------------------------------------------------------------------------------
_ITEM_FIELDS_SET = frozenset(("name", "kind", "description", "params"))


def item(name: str, kind: str, description: str, **params: Any) -> RubricItem:
    """``RubricItem(name=name, kind=kind, description=description, params=params)`` without
    validating again what the generator wrote itself (three strings and a fresh keyword dict): the
    same fields and fields set (an episode makes about seventy)."""
    return unvalidated(RubricItem, {"name": name, "kind": kind, "description": description, "params": params, "weight": 1.0},
                       set(_ITEM_FIELDS_SET))


def item_json(it: RubricItem) -> dict[str, Any]:
    """``it.model_dump(mode="json")`` (a fresh dict; ``params`` made JSON by pydantic's own
    converter, which is what the dump does with a ``dict[str, Any]`` field)."""
    return {"name": it.name, "kind": it.kind, "description": it.description, "params": to_jsonable_python(it.params),
            "weight": it.weight}


@dataclass
class Facet:
    """A hidden intent of a session: ``key`` names it within the session."""

    key: str
    check: RubricItem
    reveal: str
    answer: str
    cues: list[str]
    question: str
    carried: bool = False          # inferable from the workspace (an earlier session's artifact)
    evidence: list[str] = field(default_factory=list)  # the reads that show it


@dataclass
class Plan:
    index: int
    start: str
    kind: str
    title: str
    opening: str
    base: list[RubricItem]
    facets: list[Facet]
    render: Callable[[frozenset[str]], list[str]]
    done: str
    group: str = ""
    precursors: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        # ``render`` is a pure function of the active facets (it draws nothing): the golden route, the
        # skill staging and the violation routes ask for the same sets, each rendered once
        make, made = self.render, {}

        def render(active: frozenset[str]) -> list[str]:
            hit = made.get(active)
            if hit is None:
                hit = made[active] = make(active)
            return list(hit)

        self.render = render

    def all_keys(self) -> frozenset[str]:
        return frozenset(f.key for f in self.facets)

    def golden(self) -> list[str]:
        out = []
        asks = [f.question for f in self.facets if not f.carried]
        if asks:
            out.append("Before I start: " + " ".join(asks))
        for f in self.facets:
            if f.carried:
                out += f.evidence
        out += self.render(self.all_keys())
        out.append(self.done)
        return out

    def generic(self, rng: random.Random) -> list[str]:
        out = [rng.choice(GENERIC_QUESTIONS) for _ in self.facets]
        out += self.render(self.all_keys())
        out.append(rng.choice(GENERIC_QUESTIONS))
        return out

    def ignoring_carried(self) -> list[str]:
        """The golden route with every carried preference left out (asked intents still asked)."""
        out = []
        asks = [f.question for f in self.facets if not f.carried]
        if asks:
            out.append("Before I start: " + " ".join(asks))
        out += self.render(frozenset(f.key for f in self.facets if not f.carried))
        # each done report gets one carried preference revealed; the last one ends the session
        out += [self.done] * (1 + sum(f.carried for f in self.facets))
        return out

    def to_spec(self) -> dict[str, Any]:
        return {
            "index": self.index, "start": self.start, "kind": self.kind, "title": self.title, "group": self.group,
            "precursors": list(self.precursors), "opening": self.opening,
            "intents": [{"id": f"s{self.index:02d}.{f.key}", "key": f.key, "reveal": f.reveal, "answer": f.answer,
                         "cues": f.cues, "carried": f.carried, "evidence": list(f.evidence),
                         "check": item_json(f.check)} for f in self.facets],
            "checklist": [item_json(i) for i in self.base + [f.check for f in self.facets]],
            "golden": self.golden(),
        }


def csv_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


CUES = {
    "sections": ["section", "heading", "structure", "layout", "template"],
    "best": ["best", "highlight", "stand out"],
    "units": ["number format", "units", "decimal", "formatted"],
    "exclude": ["exclude", "leave out", "omit", "filter out"],
    "sort": ["sort", "order the rows", "ranked"],
    "derived": ["extra column", "additional column", "derived"],
    "cc": ["cc", "copy in", "copied"],
    "attach": ["attach"],
    "mention": ["mention", "in the body", "point to add"],
    "attendees": ["invite", "attendee", "participants"],
    "location": ["location", "room", "where should"],
    "duration": ["how long", "duration"],
    "agenda": ["agenda"],
    "due": ["due", "deadline", "by when"],
    "priority": ["priority", "urgent"],
    "prefix": ["label", "prefix"],
    "notes": ["notes field", "reference"],
    "tags": ["tag"],
    "schema": ["schema", "fields", "keys"],
    "count": ["count", "how many"],
}


# ----- the episode's world and sessions ---------------------------------------------------------
_RESERVED_KEYS = frozenset(("EUR", "CSV", "USD", "NDA", "MSA", "SOW", "UTM", "CEO", "JSON"))  # never a ticker
_TICKER_LETTERS = "ABCDEFGHJKLMNPQRSTVWXZ"  # ``content_workspace.ticker``'s


class Batches(Mapping[int, list[dict[str, str]]]):
    """An episode's batches of records, batch number -> its records (rows), each batch's made on
    its first read from the values drawn for it (``drawn``: number -> ``[(key, category,
    values)]``, filled by ``Episode.batch``): a reset to a new task draws the nine batches (the
    stream goes on after them) but makes only the rows its first session reads."""

    __slots__ = ("_p", "drawn", "_made")

    def __init__(self, p: PersonaContent) -> None:
        self._p = p
        self.drawn: dict[int, list[tuple[str, str, list[Any]]]] = {}
        self._made: dict[int, list[dict[str, str]]] = {}

    def __getitem__(self, n: int) -> list[dict[str, str]]:
        rows = self._made.get(n)
        if rows is None:
            row = self._p.row
            rows = self._made[n] = [row(key, cat, values) for key, cat, values in self.drawn[n]]
        return rows

    def __iter__(self) -> Iterator[int]:
        return iter(self.drawn)

    def __len__(self) -> int:
        return len(self.drawn)


_STARTS: dict[str, datetime] = {}  # persona -> its episodes' start (``_start_of``)


def _start_of(persona: str) -> datetime:
    """The start of a persona's episodes: its profile's ``start``, else ``START`` (parsed once per
    persona; datetimes are immutable)."""
    hit = _STARTS.get(persona)
    if hit is None:
        try:
            from servicegym.world_state.workspace import persona_profile

            start = persona_profile(persona).get("start")
        except (ImportError, KeyError):
            start = None
        hit = _STARTS[persona] = datetime.strptime(start if isinstance(start, str) and start else START, TIME_FORMAT)
    return hit


class Episode:
    """Builds one persona's 20 sessions over one seeded world."""

    def __init__(self, persona: str, seed: int, difficulty: int, split: str) -> None:
        self.rng = task_rng(DOMAIN, f"{persona}/{split}", seed, difficulty, VERSION)
        self.p: PersonaContent = PERSONA_CONTENT[persona]
        self.persona = persona
        self.difficulty = difficulty
        self.seed, self.split = seed, split
        rng = self.rng
        self.start = _start_of(persona)
        self.people = people(rng, self.p)
        self.advisor = self.people[0]
        self.exclude_cat = self.p.extra.get("exclude") or rng.choice(self.p.categories)
        self._keys: set[str] = set()
        self.specs: list[dict[str, Any]] = []  # the sessions' specs, made once by ``build``
        self._key_n = 100 + 100 * PERSONA_ORDER.index(persona)
        self.batches = Batches(self.p)  # batch number -> its records, made on first read
        self.plans: list[Plan] = []
        self.meeting_days: dict[str, str] = {}  # meeting title -> its day
        self.mail_ids: list[str] = []  # the ids of the mails the golden route sends, in order
        # the persona's seeded records come from a stream of their own, seeded by this draw: they are
        # made on first use (``seeded``), the same records whenever that is
        self._seeded_seed = rng.randrange(2**31)
        self._seeded: dict[str, dict[str, Any]] | None = None
        # set by ``begin``: the sessions still to build (slot, facet keys, builder), in order, and
        # what the episode's sessions are known to be before they are built
        self._queue: list[tuple[tuple[str, int], list[str] | None, Callable[[list[str] | None], Plan]]] = []
        self._next = 0
        self._day = self.start
        self._members: dict[str, list[int]] = {}
        self.slots: list[tuple[str, int]] = []  # each session's (group or "", position in it or in the singles)
        self.precursors: list[list[int]] = []
        self.conv: dict[str, Any] | None = None  # the conventions the episode's checks hold (``workspace_skills``)
        self.facet_total = 0  # the hidden intents of all sessions

    @property
    def seeded(self) -> dict[str, dict[str, Any]]:
        """The persona's seeded records, table -> key -> entity (made on first use)."""
        made = self._seeded
        if made is None:
            made = self._seeded = seed_persona_tables(self.persona, random.Random(self._seeded_seed))
        return made


    # --- data -------------------------------------------------------------------------------
    def _key(self) -> str:
        if not self.p.key_prefix:
            # ``ticker(rng, self._keys | _RESERVED_KEYS)``'s draws, without the union made each time
            choice, keys = self.rng.choice, self._keys
            while True:
                key = choice(_TICKER_LETTERS) + choice(_TICKER_LETTERS) + choice(_TICKER_LETTERS)
                if key not in keys and key not in _RESERVED_KEYS:
                    keys.add(key)
                    return key
        self._key_n += self.rng.randint(1, 4)  # (``KEY_STEP``)
        return f"{self.p.key_prefix}{self._key_n}"

    def batch(self, n: int, need_excluded: bool = False) -> None:
        """Draw batch ``n`` of records (distinct metrics, not already in metric order), a data file.

        Only the draws are made here (each record's values, ``PersonaContent.draws``); the records
        and the file's text are made from them on first read (``batches``, ``data_files``)."""
        p, rng = self.p, self.rng
        draws, keyed, prefix, value_metric, excluded = p.draws, p.keyed_draws, p.key_prefix, p.value_metric, self.exclude_cat
        while True:
            size = rng.randint(5, 7)
            cats = draw_values(rng, (p.category_draw,) * size)  # ``rng.choice(p.categories)`` each
            if need_excluded:
                cats[rng.randrange(size)] = excluded
                others = [c for c in p.categories if c != excluded]
                while sum(c != excluded for c in cats) < 3:
                    cats[cats.index(excluded)] = rng.choice(others)
                    cats[rng.randrange(size)] = excluded
                if excluded not in cats:
                    cats[0] = excluded
            else:
                cats = [c if c != excluded else rng.choice(p.categories) for c in cats]
            saved = set(self._keys), self._key_n
            if prefix:  # each record's key (``_key``: its number's step drawn first) and values in one go
                drawn = []
                for c in cats:
                    values = draw_values(rng, keyed[c])
                    self._key_n += values[0]
                    drawn.append((f"{prefix}{self._key_n}", c, values[1:]))
            else:
                drawn = [(self._key(), c, draw_values(rng, draws[c])) for c in cats]
            metrics = [value_metric(c, v) for _key, c, v in drawn]
            # distinct metrics, and neither the records nor those kept by the exclusion already in
            # metric order (``sorted(rs, key=metric, reverse=True) != rs``: with distinct metrics, a
            # strictly falling run of metrics)
            if len(set(metrics)) == len(metrics):
                kept = [m for m, (_key, c, _v) in zip(metrics, drawn) if c != excluded]
                if all(len(ms) < 2 or not all(a > b for a, b in zip(ms, ms[1:])) for ms in (metrics, kept)):
                    break
            self._keys, self._key_n = saved
        self.batches.drawn[n] = drawn

    def data_files(self) -> list[dict[str, str]]:
        """The data files of the batches drawn, in order: ``{"path", "content"}`` (the CSV text)."""
        p = self.p
        return [{"path": self.data_path(n), "content": csv_text([p.columns] + [[r[c] for c in p.columns] for r in self.batches[n]])}
                for n in self.batches.drawn]

    def data_path(self, n: int) -> str:
        return f"{self.p.data_dir}/{self.p.batch_noun}_{n:02d}.csv"

    def key(self, r: dict[str, str]) -> str:
        return r[self.p.columns[0]]

    def label(self, r: dict[str, str]) -> str:
        return r[self.p.columns[1]]

    def cat(self, r: dict[str, str]) -> str:
        return r[self.p.columns[2]]

    def included(self, recs: list[dict[str, str]], exclude: bool) -> list[dict[str, str]]:
        return [r for r in recs if not (exclude and self.cat(r) == self.exclude_cat)]

    def best(self, recs: list[dict[str, str]]) -> dict[str, str]:
        return max(recs, key=self.p.metric)

    # --- facets shared by several kinds -------------------------------------------------------
    def exclude_facet(self, path: str, recs: list[dict[str, str]], carried: bool, earlier: str) -> Facet:
        p = self.p
        dropped = [self.key(r) for r in recs if self.cat(r) == self.exclude_cat]
        rule = f"leave out every {p.noun} of the {self.exclude_cat} {p.category_noun}: {p.exclusion_reason}"
        if carried:
            reveal = f"Same rule as before: {rule}."
            answer = f"Yes, as last time ({earlier}): {rule}."
        else:
            reveal = f"Please {rule}. That goes for every export from now on."
            answer = f"Yes: {rule}. Keep that rule for every export from now on."
        return Facet("exclude", item("exclude", "ws.file_lacks", f"no {self.exclude_cat} {p.noun}s in {path}", path=path, texts=dropped),
                     reveal, answer, CUES["exclude"], f"Should I exclude any {p.category_noun} from it?", carried,
                     [Ops.read(earlier)] if carried else [])

    def units_facet(self, path: str, recs: list[dict[str, str]]) -> Facet:
        p = self.p
        return Facet("units", item("units", "ws.file_contains", f"numbers in {path} in the house format", path=path,
                                   texts=[p.unit(r) for r in recs]),
                     f"Write the numbers in my usual format: {p.unit_words}.", f"Use {p.unit_words}.",
                     CUES["units"], "How should the numbers be formatted?")

    def best_facet(self, path: str, recs: list[dict[str, str]]) -> Facet:
        p = self.p
        b = self.key(self.best(recs))
        return Facet("best", item("best", "ws.file_contains", f"{path} names the best {p.noun}", path=path, texts=[f"Best: {b}"]),
                     f"End the list with a line 'Best: <id>' naming the {p.noun} with the {p.metric_words}.",
                     f"Yes, add a line 'Best: <id>' for the {p.noun} with the {p.metric_words}.",
                     CUES["best"], f"Should I highlight the best {p.noun}?")

    # --- session kinds ----------------------------------------------------------------------
    def report(self, n: int, facets: list[str], carried: set[str], sections: list[str] | None, earlier: str = "",
               side: bool = False) -> Plan:
        """A markdown write-up of batch ``n`` (the weekly report, or with ``side`` the plain note)."""
        p = self.p
        spec = p.side_report if side else p.report
        path = f"{spec['dir']}/{spec['stem']}_{p.batch_noun}_{n:02d}.md"
        title = f"{spec['title']}: {p.batch_noun} {n}"
        recs = self.batches[n]
        exclude = "exclude" in facets
        inc = self.included(recs, exclude)
        fs: list[Facet] = []
        for key in facets:
            if key == "sections":
                assert sections is not None
                shown = ", ".join(sections)
                if "sections" in carried:
                    fs.append(Facet("sections", item("sections", "ws.md_headings", f"{path} has the agreed sections", path=path, headings=sections),
                                    f"Use the same sections as the last one: {shown}.", f"The same as last time: {shown}.",
                                    CUES["sections"], "Which sections should the report have?", True, [Ops.read(earlier)]))
                else:
                    fs.append(Facet("sections", item("sections", "ws.md_headings", f"{path} has the agreed sections", path=path, headings=sections),
                                    f"Please give it exactly these sections, in order: {shown}. I want every {spec['title'].lower()} in that format.",
                                    f"Use these sections, in this order: {shown}. Keep that format for every {spec['title'].lower()}.",
                                    CUES["sections"], "Which sections should the report have?"))
            elif key == "exclude":
                fs.append(self.exclude_facet(path, recs, "exclude" in carried, earlier))
            elif key == "units":
                fs.append(self.units_facet(path, inc))
            elif key == "best":
                fs.append(self.best_facet(path, inc))
        base = [item("file", "ws.file_exists", f"{path} exists", path=path),
                item("records", "ws.file_contains", f"{path} lists every {p.noun} of {p.batch_noun} {n}", path=path,
                     texts=[self.key(r) for r in inc])]

        def render(active: frozenset[str]) -> list[str]:
            rs = self.included(recs, "exclude" in active)
            val = p.unit if "units" in active else p.raw
            lines = [f"- {self.key(r)} ({self.label(r)}, {self.cat(r)}): {val(r)}" for r in rs]
            if "best" in active:
                lines.append(f"\nBest: {self.key(self.best(rs))}")
            summary = f"{len(rs)} {p.noun}s from {self.data_path(n)}."
            if "sections" in active and sections:
                parts = [f"# {title}", "", f"## {sections[0]}", summary, "", f"## {sections[1]}", *lines]
                for s in sections[2:]:
                    parts += ["", f"## {s}", "- To discuss at the next check-in."]
            else:
                parts = [f"# {title}", "", "## Overview", summary, "", *lines]
            return [Ops.write(path, "\n".join(parts) + "\n")]

        data = self.data_path(n)
        if side:
            opening = self.rng.choice((
                f"Could you put together a short {spec['title'].lower()} for {p.batch_noun} {n} ({data})? Save it as {path}.",
                f"I need a {spec['title'].lower()} on {p.batch_noun} {n}; the data is in {data}. Please write it to {path}.",
            ))
        elif carried:
            opening = self.rng.choice((
                f"Time for the {p.batch_noun} {n} {spec['title'].lower()}: the {p.noun}s are in {data}. Please write it to {path}.",
                f"Please do the {spec['title'].lower()} for {p.batch_noun} {n} ({data}) and save it as {path}.",
            ))
        else:
            opening = self.rng.choice((
                f"Could you write up the {p.batch_noun} {n} {p.noun}s ({data}) as a {spec['title'].lower()}? Save it as {path}.",
                f"Please summarise the {p.noun}s in {data} as a {spec['title'].lower()} in {path}.",
            ))
        return Plan(0, "", "report", title, opening, base, fs, render, f"Done: the {spec['title'].lower()} is saved as {path}.")

    def table(self, n: int, facets: list[str], carried: set[str], earlier: str = "") -> Plan:
        p = self.p
        path = f"tables/{p.noun}s_{p.batch_noun}_{n:02d}.csv"
        recs = self.batches[n]
        exclude = "exclude" in facets
        inc = self.included(recs, exclude)
        keycol, labcol = p.columns[0], p.columns[1]
        dcol, dfn, dwords = p.derived
        fs: list[Facet] = []
        for key in facets:
            if key == "exclude":
                fs.append(self.exclude_facet(path, recs, "exclude" in carried, earlier))
            elif key == "sort":
                order = [self.key(r) for r in sorted(inc, key=p.metric, reverse=True)]
                fs.append(Facet("sort", item("sort", "ws.csv_keys", f"rows of {path} sorted by {p.metric_words}", path=path,
                                             column=keycol, values=order, ordered=True),
                                f"Sort the rows so the {p.noun} with the {p.metric_words} comes first.",
                                f"Yes, sort them by {p.metric_words}, best first.", CUES["sort"], "Should I sort the rows in some way?"))
            elif key == "derived":
                fs.append(Facet("derived", item("derived", "ws.csv_cells", f"{path} has the {dcol} column", path=path, key=keycol,
                                                cells={self.key(r): {dcol: dfn(r)} for r in inc}),
                                f"Add a column {dcol} with the {dwords}.", f"Yes: a column {dcol} with the {dwords}.",
                                CUES["derived"], "Do you want an extra column with a derived value?"))
        base = [item("rows", "ws.csv_cells", f"{path} has a row for every {p.noun}", path=path, key=keycol,
                     cells={self.key(r): {labcol: self.label(r)} for r in inc})]

        def render(active: frozenset[str]) -> list[str]:
            rs = self.included(recs, "exclude" in active)
            if "sort" in active:
                rs = sorted(rs, key=p.metric, reverse=True)
            head = list(p.columns) + ([dcol] if "derived" in active else [])
            rows = [head] + [[r[c] for c in p.columns] + ([dfn(r)] if "derived" in active else []) for r in rs]
            return [Ops.write(path, csv_text(rows))]

        data = self.data_path(n)
        opening = self.rng.choice((
            f"Please export the {p.noun}s of {p.batch_noun} {n} ({data}) as a CSV table to {path}.",
            f"I need the {p.batch_noun} {n} {p.noun}s from {data} as a clean CSV in {path}, please.",
        ))
        return Plan(0, "", "table", f"{p.noun} table {p.batch_noun} {n}", opening, base, fs, render, f"Done: the table is in {path}.")

    def json_doc(self, n: int, facets: list[str]) -> Plan:
        p = self.p
        spec = p.json_doc
        path = f"{spec['dir']}/{spec['stem']}_{p.batch_noun}_{n:02d}.json"
        recs = self.batches[n]
        top = sorted(recs, key=p.metric, reverse=True)[:3]
        as_of = self.day
        fs: list[Facet] = []
        for key in facets:
            if key == "schema":
                schema = {"type": "object", "required": ["as_of", "items"],
                          "properties": {"as_of": {"type": "string", "const": as_of},
                                         "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                                   "items": {"type": "object", "required": ["id", "value"],
                                                             "properties": {"id": {"type": "string"}, "value": {"type": "number"}}}}}}
                fs.append(Facet("schema", item("schema", "ws.json_schema", f"{path} follows the agreed schema", path=path, schema=schema),
                                f"The JSON needs two keys: 'as_of' with today's date ({as_of}) and 'items', a list of objects with 'id' and 'value' (the number).",
                                f"Use keys 'as_of' (today, {as_of}) and 'items': a list of objects with 'id' and 'value'.",
                                CUES["schema"], "Which fields should the JSON have?"))
            elif key == "count":
                fs.append(Facet("count", item("count", "ws.json_values", f"{path} has a count", path=path, values={"count": 3}),
                                "Add a 'count' key with the number of items.", "Yes, a 'count' key with the number of items.",
                                CUES["count"], "Should it include a count?"))
        base = [item("top", "ws.file_contains", f"{path} names the {spec['what']}", path=path, texts=[self.key(r) for r in top])]
        metric_value = {self.key(r): round(p.metric(r), 4) for r in top}

        def render(active: frozenset[str]) -> list[str]:
            if "schema" in active:
                data: dict[str, Any] = {"as_of": as_of, "items": [{"id": self.key(r), "value": metric_value[self.key(r)]} for r in top]}
            else:
                data = {"items": [self.key(r) for r in top]}
            if "count" in active:
                data["count"] = len(top)
            return [Ops.write(path, json.dumps(data, indent=2) + "\n")]

        opening = (f"Could you save the three {spec['what']} of {p.batch_noun} {n} (by {p.metric_words}, data in "
                   f"{self.data_path(n)}) as JSON in {path}?")
        return Plan(0, "", "json", f"{spec['what']} {p.batch_noun} {n}", opening, base, fs, render, f"Done: saved {path}.")

    def mail(self, report_path: str, title: str, recs: list[dict[str, str]], facets: list[str], carried: set[str], cc: list[dict[str, str]]) -> Plan:
        p = self.p
        adv = self.advisor
        subject = title
        cc_emails = [c["email"] for c in cc]
        cc_words = " and ".join(f"{c['name']} ({c['email']})" for c in cc)
        best = self.key(self.best(recs))
        mention = f"The best {p.noun} was {best}."
        where = {"folder": "sent", "~subject": subject}
        fs: list[Facet] = []
        for key in facets:
            if key == "cc":
                chk = item("cc", "ws.record", f"the mail copies {cc_words}", table="mail", where=where, expect_set={"cc": cc_emails})
                if "cc" in carried:
                    fs.append(Facet("cc", chk, f"Copy the same people as on the last summary mail: {cc_words}.",
                                    f"The same as last time: {cc_words}.", CUES["cc"], "Who should I cc on it?", True,
                                    # a listing shows no cc: the golden route opens the last summary mail
                                    [Ops.sent_mail(), Ops.open_mail(self.mail_ids[-1])]))
                else:
                    fs.append(Facet("cc", chk, f"Please copy in {cc_words}; they should be on every summary mail I send {adv['first']}.",
                                    f"Copy in {cc_words}, on every summary mail from now on.", CUES["cc"], "Who should I cc on it?"))
            elif key == "attach":
                fs.append(Facet("attach", item("attach", "ws.record", f"the mail attaches {report_path}", table="mail", where=where,
                                               expect_set={"attachments": [report_path]}),
                                f"Attach the file {report_path} itself rather than pasting it.", f"Yes, attach {report_path}.",
                                CUES["attach"], "Should I attach the report file?"))
            elif key == "mention":
                fs.append(Facet("mention", item("mention", "ws.record", f"the mail names the best {p.noun}", table="mail", where=where,
                                                expect_contains={"body": [mention]}),
                                f"In the body, say which {p.noun} was best, in the words 'The best {p.noun} was <id>.'",
                                f"Yes: write 'The best {p.noun} was <id>.' with the {p.noun} of the {p.metric_words}.",
                                CUES["mention"], "Is there a point you want me to mention in the body?"))
        base = [item("sent", "ws.record", f"a mail '{subject}' sent to {adv['name']}", table="mail", where=where,
                     expect_set={"to": [adv["email"]]})]

        def render(active: frozenset[str]) -> list[str]:
            body = f"Hi {adv['first']},\n\nhere is the {title.lower()} ({report_path})."
            if "mention" in active:
                body += f" {mention}"
            body += f"\n\nBest,\n{self.owner.split()[-1] if self.owner.startswith('Dr.') else self.owner.split()[0]}"
            return [Ops.send([adv["email"]], subject, body, cc_emails if "cc" in active else [],
                             [report_path] if "attach" in active else [])]

        # the id this session's mail gets (seeded counters; only these sessions send mail)
        self.mail_ids.append(f"M{len(SEEDED_MAIL_IDS) + len(self.mail_ids) + 1:03d}")
        opening = self.rng.choice((
            f"Please mail the {title.lower()} ({report_path}) to {adv['name']} ({adv['email']}), subject '{subject}'.",
            f"Could you send {adv['name']} ({adv['email']}) the {title.lower()} from {report_path}? Use the subject '{subject}'.",
        ))
        return Plan(0, "", "mail", f"mail: {subject}", opening, base, fs, render, f"Done: the mail '{subject}' is sent.")

    def meeting(self, title: str, when: datetime, person: dict[str, str], facets: list[str], carried: set[str],
                attendees: list[dict[str, str]], room: str, agenda: list[str], since: str = "") -> Plan:
        """A calendar event; ``since``: the day of the earlier meeting whose conventions it carries
        (the golden route's calendar read starts there, or it could miss it)."""
        self.meeting_days[title] = when.strftime("%Y-%m-%d")
        start = when.strftime(TIME_FORMAT)
        where = {"~title": title}
        others = [a["email"] for a in attendees]
        names = " and ".join(f"{a['name']} ({a['email']})" for a in attendees)
        fs: list[Facet] = []
        for key in facets:
            if key == "attendees":
                chk = item("attendees", "ws.record", f"{title} invites {names}", table="calendar", where=where,
                           expect_set={"attendees": [person["email"]] + others})
                if "attendees" in carried:
                    fs.append(Facet("attendees", chk, f"Invite the same people as to the last one: {names}.",
                                    f"The same people as last time: {names}.", CUES["attendees"], "Who else should I invite?", True,
                                    [Ops.events(since)]))
                else:
                    fs.append(Facet("attendees", chk, f"Invite {names} as well; they join every {title.lower()}.",
                                    f"Invite {names} too; they join every one of these.", CUES["attendees"], "Who else should I invite?"))
            elif key == "location":
                chk = item("location", "ws.record", f"{title} is in {room}", table="calendar", where=where, expect={"location": room})
                if "location" in carried:
                    fs.append(Facet("location", chk, f"Same place as last time: {room}.", f"{room}, as usual.", CUES["location"],
                                    "Which room should I book?", True, [] if "attendees" in carried else [Ops.events(since)]))
                else:
                    fs.append(Facet("location", chk, f"Put {room} as the location; we always meet there.", f"{room}; we always meet there.",
                                    CUES["location"], "Which room should I book?"))
            elif key == "duration":
                end = (when + timedelta(minutes=30)).strftime(TIME_FORMAT)
                fs.append(Facet("duration", item("duration", "ws.record", f"{title} lasts 30 minutes", table="calendar", where=where,
                                                 expect={"end": end}),
                                "Keep it to 30 minutes.", "30 minutes.", CUES["duration"], "How long should it be?"))
            elif key == "agenda":
                fs.append(Facet("agenda", item("agenda", "ws.record", f"{title} carries the agenda", table="calendar", where=where,
                                               expect_contains={"description": agenda}),
                                f"Put the agenda in the description: {'; '.join(agenda)}.", f"The agenda: {'; '.join(agenda)}.",
                                CUES["agenda"], "Is there an agenda to add?"))
        base = [item("event", "ws.record", f"{title} at {start}", table="calendar", where=where, expect={"start": start})]

        def render(active: frozenset[str]) -> list[str]:
            minutes = 30 if "duration" in active else 60
            end = (when + timedelta(minutes=minutes)).strftime(TIME_FORMAT)
            att = [person["email"]] + (others if "attendees" in active else [])
            desc = "Agenda: " + "; ".join(agenda) if "agenda" in active else ""
            return [Ops.event(title, start, end, att, room if "location" in active else "", desc)]

        day = when.strftime("%A %d %B")
        opening = self.rng.choice((
            f"Please put a '{title}' with {person['name']} ({person['email']}) in my calendar on {day} at {when:%H:%M}.",
            f"Can you schedule '{title}' with {person['name']} ({person['email']}) for {day}, {when:%H:%M}?",
        ))
        return Plan(0, "", "meeting", title, opening, base, fs, render, f"Done: '{title}' is in the calendar for {start}.")

    def todo(self, title: str, facets: list[str], carried: set[str], label: str, due: str, ref: str) -> Plan:
        where = {"~title": title}
        fs: list[Facet] = []
        for key in facets:
            if key == "prefix":
                chk = item("prefix", "ws.record", f"the to-do carries the label [{label}]", table="todos", where=where,
                           expect_contains={"title": [f"[{label}]"]})
                if "prefix" in carried:
                    fs.append(Facet("prefix", chk, f"Label it [{label}] at the start of the title, like the other ones.",
                                    f"Yes, [{label}] at the start, as usual.", CUES["prefix"], "Should the title carry a project label?",
                                    True, [Ops.todos()]))
                else:
                    fs.append(Facet("prefix", chk, f"Start the title with [{label}]; all my {label} to-dos are labelled that way.",
                                    f"Yes: start the title with [{label}]; I label all {label} to-dos like that.", CUES["prefix"],
                                    "Should the title carry a project label?"))
            elif key == "priority":
                fs.append(Facet("priority", item("priority", "ws.record", "the to-do has high priority", table="todos", where=where,
                                                 expect={"priority": "high"}),
                                "Make it high priority.", "High.", CUES["priority"], "What priority should it have?"))
            elif key == "due":
                fs.append(Facet("due", item("due", "ws.record", f"the to-do is due {due}", table="todos", where=where, expect={"due": due}),
                                f"It needs to be done by {due}.", f"It's due {due}.", CUES["due"], "When is it due?"))
            elif key == "notes":
                fs.append(Facet("notes", item("notes", "ws.record", f"the to-do's notes point to {ref}", table="todos", where=where,
                                              expect_contains={"notes": [ref]}),
                                f"Put a pointer to {ref} in its notes.", f"Yes, reference {ref} in the notes field.", CUES["notes"],
                                "Should I add a reference in the notes field?"))
        base = [item("todo", "ws.record", f"a to-do '{title}'", table="todos", where=where)]

        def render(active: frozenset[str]) -> list[str]:
            t = f"[{label}] {title}" if "prefix" in active else title
            return [Ops.todo(t, due if "due" in active else "", "high" if "priority" in active else "normal",
                             f"See {ref}." if "notes" in active else "")]

        opening = self.rng.choice((f"Add a to-do: {title.lower()}.", f"Please put '{title}' on my to-do list."))
        return Plan(0, "", "todo", title, opening, base, fs, render, f"Done: '{title}' is on your to-do list.")

    def note(self, title: str, points: list[str], facets: list[str], carried: set[str], tags: list[str], extra: str) -> Plan:
        where = {"~title": title}
        fs: list[Facet] = []
        shown = ", ".join(tags)
        for key in facets:
            if key == "tags":
                chk = item("tags", "ws.record", f"the note is tagged {shown}", table="notes", where=where, expect_set={"tags": tags})
                if "tags" in carried:
                    fs.append(Facet("tags", chk, f"Tag it like my other notes of this kind: {shown}.", f"The same tags as before: {shown}.",
                                    CUES["tags"], "Which tags should the note get?", True, [Ops.notes()]))
                else:
                    fs.append(Facet("tags", chk, f"Tag it {shown}; I tag every note of this kind like that.",
                                    f"Tag it {shown}; every note of this kind gets those tags.", CUES["tags"], "Which tags should the note get?"))
            elif key == "mention":
                fs.append(Facet("mention", item("mention", "ws.record", "the note has the extra point", table="notes", where=where,
                                                expect_contains={"body": [extra]}),
                                f"Also add this point: {extra}", f"Yes, add: {extra}", CUES["mention"], "Is there another point to add?"))
        base = [item("note", "ws.record", f"a note '{title}' with the points", table="notes", where=where, expect_contains={"body": points})]

        def render(active: frozenset[str]) -> list[str]:
            body = "\n".join(f"- {x}" for x in points + ([extra] if "mention" in active else []))
            return [Ops.note(title, body, tags if "tags" in active else [])]

        opening = f"Please make a note titled '{title}' with these points: " + " ".join(points)
        return Plan(0, "", "note", title, opening, base, fs, render, f"Done: the note '{title}' is saved.")

    def persona_record(self) -> Plan:
        """A decision or record in the persona's own tables, through the persona's own tools (the
        seeded records decide which one; its checks read the persona table)."""
        rng, t = self.rng, self.seeded
        fs: list[Facet] = []
        if self.persona == "researcher":
            listed = set(t.get("res_reading_list", {}))
            paper = rng.choice([pp for pp in t["res_papers"].values() if pp.id not in listed and "to-cite" not in pp.tags])
            table, where = "res_reading_list", {"paper_id": paper.id}
            opening = f"Please put the paper '{paper.title}' ({paper.id}) on my reading list."
            base = [item("listed", "ws.record", f"{paper.id} is on the reading list", table=table, where=where, expect={"status": "to_read"})]
            fs.append(Facet("priority", item("priority", "ws.record", f"{paper.id} has high priority", table=table, where=where,
                                             expect={"priority": "high"}),
                            "Give it high priority; I need it for the chapter I'm writing.", "High priority.", CUES["priority"],
                            "What priority should it have?"))
            fs.append(Facet("tags", item("tags", "ws.record", f"{paper.id} is tagged to-cite", table="res_papers", where={"id": paper.id},
                                         expect_includes={"tags": ["to-cite"]}),
                            "Also tag the paper to-cite.", "Yes, tag it to-cite.", CUES["tags"], "Should I tag the paper?"))

            def render(active: frozenset[str]) -> list[str]:
                out = [call("add_to_reading_list", paper_id=paper.id, priority="high" if "priority" in active else "normal")]
                if "tags" in active:
                    out.append(call("tag_paper", paper_id=paper.id, tags=["to-cite"]))
                return out
            title = f"reading list: {paper.id}"
        elif self.persona == "pharmacist":
            noted = {n.prescription_id for n in t.get("rx_counseling_notes", {}).values()}
            rx = rng.choice([r for r in t["rx_prescriptions"].values() if r.status == "pending" and r.id not in noted])
            table, where = "rx_prescriptions", {"id": rx.id}
            why = "prescriber to confirm the dose"
            opening = f"Prescription {rx.id} ({rx.drug}) can't go out yet; please put it on hold."
            base = [item("held", "ws.record", f"{rx.id} is on hold", table=table, where=where, expect={"status": "on_hold"})]
            fs.append(Facet("reason", item("reason", "ws.record", f"the hold of {rx.id} gives the reason", table=table, where=where,
                                           expect_contains={"decision_reason": [why]}),
                            f"The reason to record: {why}.", f"The reason: {why}.", ["reason", "why"], "What reason should I record?"))
            fs.append(Facet("counsel", item("counsel", "ws.record", f"a counselling note on {rx.id}", table="rx_counseling_notes",
                                            where={"prescription_id": rx.id}, expect_set={"topics": ["dose query"]}),
                            "Add a counselling note to it with the topic 'dose query' saying the patient was told about the delay.",
                            "Yes: a counselling note with the topic 'dose query', saying the patient was told about the delay.",
                            ["counsel"], "Should I add a counselling note?"))

            def render(active: frozenset[str]) -> list[str]:
                out = [call("hold_prescription", prescription_id=rx.id, reason=f"On hold: {why}." if "reason" in active else "On hold.")]
                if "counsel" in active:
                    out.append(call("add_counseling_note", prescription_id=rx.id, text="Patient told about the delay while the dose is confirmed.",
                                    topics=["dose query"]))
                return out
            title = f"hold {rx.id}"
        elif self.persona == "legal":
            contract = rng.choice(list(t["legal_contracts"].values()))
            matter = t["legal_matters"][contract.matter_id]
            due = (self.day_dt + timedelta(days=rng.randint(10, 20))).strftime("%Y-%m-%d")
            dtitle = rng.choice(("Serve the renewal notice", "Send the termination notice", "File the consent form"))
            table, where = "legal_deadlines", {"~title": dtitle}
            opening = f"Please add a deadline to matter {matter.id} ({matter.name}): '{dtitle}', due {due}."
            base = [item("deadline", "ws.record", f"deadline '{dtitle}' due {due}", table=table, where=where, expect={"due": due})]
            fs.append(Facet("kind", item("kind", "ws.record", "the deadline is a notice", table=table, where=where, expect={"kind": "notice"}),
                            "Mark it as a notice deadline.", "It's a notice deadline.", ["kind of deadline", "type of deadline"],
                            "What kind of deadline is it?"))
            fs.append(Facet("contract", item("contract", "ws.record", f"the deadline concerns {contract.id}", table=table, where=where,
                                             expect={"contract_id": contract.id}),
                            f"Link it to contract {contract.id} ({contract.title}).", f"Contract {contract.id}.", ["contract"],
                            "Which contract does it concern?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"matter_id": matter.id, "title": dtitle, "due": due}
                if "kind" in active:
                    args["kind"] = "notice"
                if "contract" in active:
                    args["contract_id"] = contract.id
                return [call("add_deadline", **args)]
            title = dtitle
        elif self.persona == "marketer":
            parent = rng.choice([a for a in t["mkt_audiences"].values() if len(a.regions) >= 2 and len(a.interests) >= 2])
            name = f"{parent.name} core {rng.randint(2, 9)}"
            lo = parent.age_min + rng.randint(0, 4)
            hi = lo + rng.randint(8, 12)
            regs = sorted(rng.sample(parent.regions, len(parent.regions) - 1))
            ints = sorted(rng.sample(parent.interests, 1))
            table, where = "mkt_audiences", {"name": name}
            opening = f"Please create a segment '{name}' of audience {parent.id} ({parent.name}) for ages {lo} to {hi}."
            base = [item("segment", "ws.record", f"segment '{name}' for ages {lo}-{hi}", table=table, where=where,
                         expect={"parent_id": parent.id, "age_min": max(lo, parent.age_min), "age_max": min(hi, parent.age_max)})]
            fs.append(Facet("regions", item("regions", "ws.record", "the segment keeps the agreed regions", table=table, where=where,
                                            expect_set={"regions": regs}),
                            f"Only the regions {', '.join(regs)}.", f"Keep only {', '.join(regs)}.", ["region"], "Which regions should it cover?"))
            fs.append(Facet("interests", item("interests", "ws.record", "the segment keeps the agreed interest", table=table, where=where,
                                              expect_set={"interests": ints}),
                            f"Narrow it to people interested in {ints[0]}.", f"Only {ints[0]}.", ["interest"],
                            "Which interests should it keep?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"parent_id": parent.id, "name": name, "age_min": lo, "age_max": hi}
                if "regions" in active:
                    args["regions"] = regs
                if "interests" in active:
                    args["interests"] = ints
                return [json.dumps({"name": "create_segment", "arguments": args}, ensure_ascii=False)]  # its own "name" argument
            title = name
        else:
            watched = set(t.get("fin_watchlist", {}))
            company = rng.choice([c for c in t["fin_companies"].values() if c.ticker not in watched])
            target = float(rng.randrange(20, 200))
            why = "waiting for a better entry after earnings"
            table, where = "fin_watchlist", {"ticker": company.ticker}
            opening = f"Please add {company.name} ({company.ticker}) to my watchlist."
            base = [item("watched", "ws.record", f"{company.ticker} is on the watchlist", table=table, where=where)]
            fs.append(Facet("target", item("target", "ws.record", f"target price {target:g}", table=table, where=where,
                                           expect={"target_price": target}),
                            f"Set a target price of {target:g}.", f"{target:g}.", ["target"], "Should I set a target price?"))
            fs.append(Facet("note", item("note", "ws.record", "the watchlist note says why", table=table, where=where,
                                         expect_contains={"note": [why]}),
                            f"Note why: {why}.", f"Because I'm {why}.", ["note", "why"], "Should I add a note on why it is watched?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"ticker": company.ticker}
                if "target" in active:
                    args["target_price"] = target
                if "note" in active:
                    args["note"] = f"Watching: {why}."
                return [call("add_to_watchlist", **args)]
            title = f"watch {company.ticker}"
        keys = [f.key for f in fs][: self.persona_facets()]
        return Plan(0, "", "persona", title, opening, base, [f for f in fs if f.key in keys], render,
                    f"Done: {title}.")

    # --- the episode --------------------------------------------------------------------------
    @property
    def owner(self) -> str:
        return self.p.owner

    def build(self) -> None:
        """Every session, in order (``begin``, ``build_next`` until none is left, ``finish``)."""
        self.begin()
        while self.build_next() is not None:
            pass
        self.finish()

    def persona_facets(self) -> int:
        """How many hidden intents the persona-record session has (``persona_record``)."""
        return 1 if self.difficulty <= 0 else 2

    def begin(self) -> None:
        """The episode's data files, conventions and session order: everything the sessions draw
        before the first of them is built (``build_next`` builds them in order)."""
        rng, p = self.rng, self.p
        d = self.difficulty
        for n in (1, 2, 3):
            self.batch(n)
        for n in (4, 5, 6):
            self.batch(n, need_excluded=True)
        for n in (7, 8, 9):
            self.batch(n)
        sections = rng.choice(p.report["sections"])
        cc = rng.sample(self.people[1:], 2)
        meet_people = rng.sample(self.people[1:], 3)
        room = rng.choice(p.rooms)
        label = rng.choice(p.project_labels)
        tags = rng.choice(p.tag_options)
        titles_m = rng.sample(p.meeting["titles"], 3)
        titles_t = rng.sample(p.todo["titles"], 3)
        titles_n = rng.sample(p.note["titles"], 3)
        # what the checks of the sessions that set each convention hold (``workspace_skills.conventions``;
        # ``finish`` compares them with the built checks)
        self.conv = {"sections": list(sections), "exclude": self.exclude_cat, "cc": [c["email"] for c in cc],
                     "attendees": [a["email"] for a in meet_people[1:]], "room": room, "label": label, "tags": list(tags)}

        def trim(fs: list[str]) -> list[str]:
            return fs[:2] if d <= 0 else fs

        rep = lambda n: f"{p.report['dir']}/{p.report['stem']}_{p.batch_noun}_{n:02d}.md"  # noqa: E731
        tab = lambda n: f"tables/{p.noun}s_{p.batch_noun}_{n:02d}.csv"  # noqa: E731
        rtitle = lambda n: f"{p.report['title']}: {p.batch_noun} {n}"  # noqa: E731
        # (group, [(facet keys, builder of those facets)]) in each group's order; builders run once the
        # session date is known. A builder given keys makes one hidden intent per key.
        Make = Callable[[Any], Plan]
        groups: list[tuple[str, list[tuple[list[str] | None, Make]]]] = [
            ("format", [(trim(["sections", "best", "units"]), lambda fs: self.report(1, fs, set(), sections)),
                        (trim(["sections", "units"]), lambda fs: self.report(2, fs, {"sections"}, sections, rep(1))),
                        (trim(["sections", "best"]), lambda fs: self.report(3, fs, {"sections"}, sections, rep(2)))]),
            ("exclusion", [(trim(["exclude", "sort"]), lambda fs: self.table(4, fs, set())),
                           (trim(["exclude", "derived"]), lambda fs: self.table(5, fs, {"exclude"}, tab(4))),
                           (trim(["exclude", "units", "best"]),
                            lambda fs: self.report(6, fs, {"exclude"}, None, tab(5), side=True))]),
            ("recipients", [(trim(["cc", "attach"]), lambda fs: self.mail(rep(1), rtitle(1), self.batches[1], fs, set(), cc)),
                            (trim(["cc", "attach", "mention"]),
                             lambda fs: self.mail(rep(2), rtitle(2), self.batches[2], fs, {"cc"}, cc)),
                            (trim(["cc", "mention"]), lambda fs: self.mail(rep(3), rtitle(3), self.batches[3], fs, {"cc"}, cc))]),
            ("meetings", [(trim(["attendees", "location"]),
                           lambda fs: self.meeting(titles_m[0], self.meet_time(), meet_people[0], fs, set(), meet_people[1:], room, [])),
                          (trim(["attendees", "location", "duration"]),
                           lambda fs: self.meeting(titles_m[1], self.meet_time(), meet_people[0], fs, {"attendees", "location"},
                                                   meet_people[1:], room, [], since=self.meeting_days[titles_m[0]]))]),
            ("todo-label", [(trim(["prefix", "priority"]), lambda fs: self.todo(titles_t[0], fs, set(), label, self.due(), "")),
                            (trim(["prefix", "due"]), lambda fs: self.todo(titles_t[1], fs, {"prefix"}, label, self.due(), ""))]),
            ("note-tags", [(trim(["tags", "mention"]), lambda fs: self.note(titles_n[0], self.points(2), fs, set(), tags, self.point())),
                           (trim(["tags", "mention"]), lambda fs: self.note(titles_n[1], self.points(2), fs, {"tags"}, tags, self.point()))]),
        ]
        singles: list[tuple[list[str] | None, Make]] = [
            (trim(["duration", "agenda"]),
             lambda fs: self.meeting(titles_m[2], self.meet_time(), rng.choice(self.people), fs, set(), [], room, self.points(2))),
            (trim(["due", "notes", "priority"]), lambda fs: self.todo(titles_t[2], fs, set(), label, self.due(), self.data_path(7))),
            (trim(["schema", "count"]), lambda fs: self.json_doc(7, fs)),
            (None, lambda _fs: self.persona_record()),
            (trim(["sort", "derived"]), lambda fs: self.table(9, fs, set())),
        ]
        # order: a random interleaving that keeps each group's order and mails after their reports
        queues = {g: list(range(len(b))) for g, b in groups}
        done: dict[tuple[str, int], int] = {}
        order: list[tuple[str, int]] = []
        single_left = list(range(len(singles)))
        while len(order) < SESSIONS:
            heads = [(g, q[0]) for g, q in queues.items() if q and (g != "recipients" or ("format", q[0]) in done)]
            heads += [("", i) for i in single_left]
            g, i = heads[rng.randrange(len(heads))]
            order.append((g, i))
            done[(g, i)] = len(order)
            if g:
                queues[g].pop(0)
            else:
                single_left.remove(i)
        builders = dict(groups)
        self._queue = [((g, i), *(builders[g][i] if g else singles[i])) for g, i in order]
        self.slots = order
        members: dict[str, list[int]] = {}
        for idx, (g, _i) in enumerate(order, 1):
            self.precursors.append(list(members.get(g, [])) if g else [])
            if g:
                members.setdefault(g, []).append(idx)
        self.facet_total = sum(len(fs) if fs is not None else self.persona_facets() for _slot, fs, _make in self._queue)
        self._day = self.start

    def build_next(self) -> Plan | None:
        """The next session's plan (its spec appended to ``specs``), or None when all are built."""
        k = self._next
        if k >= len(self._queue):
            return None
        (g, _i), fs, make = self._queue[k]
        self._next = k + 1
        day = self._day
        self.day_dt = day
        self.day = day.strftime("%Y-%m-%d")
        plan = make(fs)
        idx = k + 1
        plan.index, plan.start = idx, day.strftime(TIME_FORMAT)
        if g:
            plan.group = g
            plan.precursors = list(self.precursors[k])
        self.plans.append(plan)
        self._day = next_workday(day)
        self.specs.append(plan.to_spec())
        return plan

    def release(self) -> None:
        """Drop the plans and the builders still queued: each closes over the episode, so without
        the cycle the episode (a thousand objects) goes at once when its task goes, not at the
        cyclic collector's next pass. No session can be built after."""
        self.plans.clear()
        self._queue = []

    def finish(self) -> None:
        """The checks every built episode passes: targeted questions, pi-Bench's shape, and the
        conventions and intent count known before the sessions were built."""
        self.check_cues()
        check_structure(self.specs)
        from servicegym.envs.tasks.generators.workspace_skills import conventions_of_checks

        if conventions_of_checks(self) != self.conv or sum(len(pl.facets) for pl in self.plans) != self.facet_total:
            raise AssertionError(f"{self.persona}: the conventions or intent count drawn differ from the sessions built")

    def meet_time(self) -> datetime:
        return next_workday(next_workday(self.day_dt)).replace(hour=self.rng.choice((10, 11, 14, 15)), minute=self.rng.choice((0, 30)))

    def due(self) -> str:
        return (self.day_dt + timedelta(days=self.rng.randint(3, 9))).strftime("%Y-%m-%d")

    _POINTS = ("check the numbers against last month", "ask for the raw export", "book time for the write-up",
               "compare with the baseline", "follow up on the open question from the last meeting", "share the draft early",
               "keep a log of every change", "double-check the dates")

    def points(self, k: int) -> list[str]:
        return [x[0].upper() + x[1:] + "." for x in self.rng.sample(self._POINTS, k)]

    def point(self) -> str:
        return self.rng.choice(("Remember to thank the reviewers.", "Flag anything unusual early.", "Keep it short."))

    def check_cues(self) -> None:
        """Every golden question is targeted at exactly its own intent; generic questions at none.
        The outcome depends only on each plan's (key, cues, question) of its facets, a few dozen
        combinations per persona: a combination that passed once is not checked again."""
        for plan in self.plans:
            sig = tuple((f.key, tuple(f.cues), f.question) for f in plan.facets)
            if sig in _CUES_CHECKED:
                continue
            pats = {f.key: cue_pattern(tuple(f.cues)) for f in plan.facets}
            for f in plan.facets:
                q = questions_in(f.question)
                hits = [k for k, pat in pats.items() if pat.search(q)]
                if hits != [f.key]:
                    raise AssertionError(f"session {plan.index}: question {f.question!r} hits {hits}")
            for g in GENERIC_QUESTIONS:
                if any(pat.search(questions_in(g)) for pat in pats.values()):
                    raise AssertionError(f"generic question {g!r} is targeted")
            if len(_CUES_CHECKED) < _MAX_CUES_CHECKED:
                _CUES_CHECKED.add(sig)


# the facet combinations ``Episode.check_cues`` has passed (bounded; a pure function of the combination)
_CUES_CHECKED: set[tuple[tuple[str, tuple[str, ...], str], ...]] = set()
_MAX_CUES_CHECKED = 4096


def next_workday(day: datetime) -> datetime:
    day += timedelta(days=1)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def seed_persona_tables(persona: str, rng: random.Random) -> dict[str, dict[str, Any]]:
    """The persona's seeded records, table -> key -> entity, made without validating the persona
    module's own rows again (``personas.seeded_persona_tables``; the same draws and entities as
    ``build_persona_tables``)."""
    from servicegym.world_state.workspace.personas import seeded_persona_tables

    return seeded_persona_tables(persona, rng)[1]


def initial_tables(ep: Episode, persona_rows: bool = True, files: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The workspace at the episode's start: data files, a README, contacts, a few mails, events and
    to-dos of the persona's own, and the persona's seeded records (without ``persona_rows``, each
    persona table an empty list, in its place, for ``persona_table_rows`` to fill; without
    ``files``, the files table an empty list, for ``file_rows`` to fill)."""
    p = ep.p
    tables: dict[str, list[dict[str, Any]]] = {"files": file_rows(ep) if files else []}
    contacts = [{"id": f"CT{i:03d}", "name": c["name"], "email": c["email"], "role": c["role"], "organization": p.organization}
                for i, c in enumerate(ep.people, 1)]
    adv = ep.advisor
    mail = [{"id": SEEDED_MAIL_IDS[0], "folder": "inbox", "sender": adv["email"], "to": [p.owner_email],
             "subject": f"{p.report['title']}s", "body": f"Hi,\n\nplease keep sending me the {p.report['title'].lower()}s as they are ready.\n\n{adv['first']}",
             "time": (ep.start - timedelta(days=3)).strftime(TIME_FORMAT)},
            {"id": SEEDED_MAIL_IDS[1], "folder": "inbox", "sender": ep.people[3]["email"], "to": [p.owner_email],
             "subject": "Data files", "body": f"The {p.batch_noun} files are all in {p.data_dir}/ now.\n\n{ep.people[3]['first']}",
             "time": (ep.start - timedelta(days=1)).strftime(TIME_FORMAT)}]
    todos = [{"id": "T001", "title": "Tidy the shared folder", "priority": "low"}]
    tables.update(contacts=contacts, mail=mail, todos=todos)
    if persona_rows:
        tables.update(persona_table_rows(ep))
    else:
        for name in persona_table_names(ep):
            tables[name] = []
    return tables


def file_rows(ep: Episode) -> list[dict[str, Any]]:
    """The files at the episode's start (before its skills): the README, then the data files."""
    p = ep.p
    now = ep.start.strftime(TIME_FORMAT)
    readme = (f"# {p.organization} workspace of {p.owner}\n\nData files ({p.noun}s by {p.batch_noun}) are in {p.data_dir}/.\n"
              f"Finished documents go next to them in their own folders.\n")
    files = [{"path": "README.md", "content": readme, "created": now, "modified": now}]
    files += [{**f, "created": now, "modified": now} for f in ep.data_files()]
    return files


def persona_table_rows(ep: Episode) -> dict[str, list[dict[str, Any]]]:
    """The persona's seeded records as the world's rows (their JSON dumps), table by table."""
    return {name: [r.model_dump(mode="json") for r in rows.values()] for name, rows in ep.seeded.items()}


_PERSONA_TABLES: dict[str, tuple[str, ...]] = {}  # persona -> the tables its seeded records fill, in order


def persona_table_names(ep: Episode) -> tuple[str, ...]:
    """The tables the persona's seeded records fill, in their order (the same for every seed of a
    persona: each module's ``seed_tables`` returns one dict literal; learnt from the first episode
    of the persona made here, and checked by every episode that makes its records)."""
    names = _PERSONA_TABLES.get(ep.persona)
    if names is None:
        names = _PERSONA_TABLES[ep.persona] = tuple(ep.seeded)
    return names


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


# the generator's episode of each generated task (for its persona's seeded records, made once),
# until the env builds the task's world: keyed by the task's id, with a weak reference that drops
# the entry when the task goes
_SEEDED: dict[int, tuple[weakref.ref[Task], Episode]] = {}


def _remember_seeded(task: Task, ep: Episode) -> None:
    key = id(task)
    _SEEDED[key] = (weakref.ref(task, lambda _ref, key=key: _SEEDED.pop(key, None)), ep)


def seeded_tables(task: Task) -> dict[str, dict[str, Any]] | None:
    """The persona tables (name -> key -> entity) the generator built for ``task``'s world, once:
    the first call for a task this module generated and vouched for hands them over (entities are
    immutable: a world that shares them replaces a row it writes in its own table), any other call
    returns None (build the tables from the task's rows)."""
    entry = _SEEDED.pop(id(task), None)
    if entry is None or entry[0]() is not task or not task.vouched_world:
        return None
    return entry[1].seeded


# ----- episode structure and session labels (derived from what each session requires) ------------
# Our taxonomy of 18 action and reasoning types. pi-Bench labels its sessions with 18 fine-grained
# action and reasoning types but the notes we hold do not list them; these are ours, nine of each,
# and every label is derived by rule from a session's checklist and hidden intents (never typed per
# session), so generated and frozen episodes are labelled alike.
ACTION_TYPES = (
    "write_report",      # a Markdown document (headings, contents)
    "export_table",      # a CSV file (rows, cells, order)
    "write_json",        # a JSON document (schema, values)
    "send_mail",         # a sent mail
    "attach_file",       # a workspace file attached to a mail
    "schedule_meeting",  # a calendar event
    "manage_todo",       # a to-do
    "write_note",        # a note
    "update_records",    # a record in the persona's own tables, through its own tools
)
REASONING_TYPES = (
    "recall_convention",     # apply a convention an earlier session set (a carried hidden intent)
    "elicit_hidden_intent",  # a hidden intent the workspace cannot tell: ask a targeted question
    "reuse_artifact",        # the session's result must use an artifact an earlier session made
    "filter_records",        # leave records out by a rule
    "rank_select",           # order records or pick the best / top ones by a metric
    "compute_value",         # derive a value (a column, a count)
    "apply_format",          # a house format (sections, number format, schema)
    "resolve_dates",         # a date or time (start, end, due date, as-of date)
    "resolve_people",        # who is copied or invited
)
LABEL_TYPES = ACTION_TYPES + REASONING_TYPES
_COMMON_TABLES = {"mail": "send_mail", "calendar": "schedule_meeting", "todos": "manage_todo", "notes": "write_note"}
_FILE_KINDS = {".md": "write_report", ".csv": "export_table", ".json": "write_json"}
_RANK_ITEMS = {"best", "sort", "top"}
_COMPUTE_ITEMS = {"derived", "count"}
_FORMAT_ITEMS = {"sections", "units", "schema"}
_DATE_FIELDS = {"start", "end", "due"}
_PEOPLE_FIELDS = {"cc", "attendees"}


def _item_paths(params: dict[str, Any]) -> list[str]:
    """The workspace paths an item reads: its ``path`` and any attachments it expects."""
    out = [params["path"]] if isinstance(params.get("path"), str) else []
    for field_ in ("expect_set", "expect_includes"):
        out += [x for x in (params.get(field_) or {}).get("attachments", []) if isinstance(x, str)]
    return out


def _item_actions(kind: str, params: dict[str, Any]) -> set[str]:
    table = params.get("table")
    if kind == "ws.record" and isinstance(table, str):
        out = {_COMMON_TABLES.get(table, "update_records")}
        if "attachments" in (params.get("expect_set") or {}):
            out.add("attach_file")
        return out
    if kind.startswith("ws.md_"):
        return {"write_report"}
    if kind.startswith("ws.csv_"):
        return {"export_table"}
    if kind.startswith("ws.json_"):
        return {"write_json"}
    path = params.get("path")
    return {v for ext, v in _FILE_KINDS.items() if isinstance(path, str) and path.endswith(ext)}


def session_labels(spec: dict[str, Any], made_before: set[str] = frozenset()) -> dict[str, list[str]]:
    """``{"action": [...], "reasoning": [...]}`` of one session spec (``to_spec``'s form), in the
    order of ``ACTION_TYPES``/``REASONING_TYPES``, derived from its checklist and hidden intents;
    ``made_before`` holds the paths earlier sessions' checklists require to exist (for
    ``reuse_artifact``)."""
    action: set[str] = set()
    reasoning: set[str] = set()
    for it in spec["checklist"]:
        kind, params, name = it["kind"], it.get("params") or {}, it["name"]
        action |= _item_actions(kind, params)
        expect = {**(params.get("expect") or {}), **(params.get("expect_set") or {})}
        if kind == "ws.file_lacks":
            reasoning.add("filter_records")
        if name in _RANK_ITEMS or (kind == "ws.csv_keys" and params.get("ordered")) or (
                params.get("table") == "mail" and name == "mention"):
            reasoning.add("rank_select")
        if name in _COMPUTE_ITEMS:
            reasoning.add("compute_value")
        if name in _FORMAT_ITEMS:
            reasoning.add("apply_format")
        if _DATE_FIELDS & set(expect) or "as_of" in ((params.get("schema") or {}).get("required") or []):
            reasoning.add("resolve_dates")
        if _PEOPLE_FIELDS & set(expect):
            reasoning.add("resolve_people")
        if any(p in made_before for p in _item_paths(params)):
            reasoning.add("reuse_artifact")
    for intent in spec["intents"]:
        reasoning.add("recall_convention" if intent.get("carried") else "elicit_hidden_intent")
    return {"action": [a for a in ACTION_TYPES if a in action], "reasoning": [r for r in REASONING_TYPES if r in reasoning]}


def check_values(check: dict[str, Any]) -> list[str]:
    """The strings a checklist item (``RubricItem`` as JSON) requires to be present: a report's
    headings, a record's expected values (recipients, attendees, room, label, tags...); empty
    for an item that requires an absence (``ws.file_lacks``) or other kinds."""
    params = check.get("params") or {}
    out: list[str] = []
    if check.get("kind") == "ws.md_headings":
        out += [h for h in params.get("headings") or [] if isinstance(h, str)]
    elif check.get("kind") == "ws.record":
        for v in (params.get("expect") or {}).values():
            if isinstance(v, str):
                out.append(v)
        for fld in ("expect_set", "expect_includes", "expect_contains"):
            for vs in (params.get(fld) or {}).values():
                out += [x for x in vs if isinstance(x, str)] if isinstance(vs, list) else []
    return out


def episode_labels(sessions: list[dict[str, Any]]) -> list[dict[str, list[str]]]:
    """``session_labels`` of every session of an episode, in order."""
    out, made = [], set()
    for spec in sorted(sessions, key=lambda s: s["index"]):
        out.append(session_labels(spec, made))
        made |= {it["params"]["path"] for it in spec["checklist"] if it["kind"] == "ws.file_exists"}
    return out


def episode_structure(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"groups": {name: [session indices]}, "independent": [indices]}`` of an episode."""
    groups: dict[str, list[int]] = {}
    independent = []
    for s in sorted(sessions, key=lambda s: s["index"]):
        if s["group"]:
            groups.setdefault(s["group"], []).append(s["index"])
        else:
            independent.append(s["index"])
    return {"groups": groups, "independent": independent}


def check_structure(sessions: list[dict[str, Any]]) -> None:
    """pi-Bench's shape, or AssertionError: ``SESSIONS`` sessions, ``GROUPS`` groups of 2-3 whose
    later members each carry at least one hidden intent over from an earlier member (their
    precursors), and ``INDEPENDENT`` sessions that carry nothing."""
    st = episode_structure(sessions)
    by_index = {s["index"]: s for s in sessions}
    sizes = sorted(len(g) for g in st["groups"].values())
    if (len(sessions) != SESSIONS or len(st["groups"]) != GROUPS or len(st["independent"]) != INDEPENDENT
            or not all(GROUP_SIZES[0] <= n <= GROUP_SIZES[1] for n in sizes)):
        raise AssertionError(f"episode shape: {len(sessions)} sessions, groups {sizes}, {len(st['independent'])} independent")
    for name, members in st["groups"].items():
        for pos, k in enumerate(members):
            s = by_index[k]
            carried = {i["key"] for i in s["intents"] if i["carried"]}
            if s["precursors"] != members[:pos] or bool(carried) != (pos > 0):
                raise AssertionError(f"group {name}: session {k} precursors {s['precursors']}, carried {sorted(carried)}")
            if pos and not carried & {i["key"] for j in members[:pos] for i in by_index[j]["intents"]}:
                raise AssertionError(f"group {name}: session {k} carries nothing an earlier member asked for")
    for k in st["independent"]:
        if by_index[k]["precursors"] or any(i["carried"] for i in by_index[k]["intents"]):
            raise AssertionError(f"independent session {k} depends on an earlier one")
