"""What a generated workspace episode's sessions are made of (``workspace_episode`` builds them):
the episode's constants (version, domain, pi-Bench's shape of 20 sessions, the seeded mails' ids,
the default start), the tools the golden routes call (``Ops``), the checklist items made without
validating again (``item``, ``item_json``), a session's hidden intents (``Facet``) and its plan
(``Plan``: the golden, generic-question and "carried preference ignored" routes, and its spec),
CSV text, and the cue phrases that make a question about each intent targeted (``CUES``).
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from servicegym.envs.tasks.generators.common import call
from servicegym.envs.tasks.generators.content_workspace import GENERIC_QUESTIONS
from servicegym.rewards.rubric import RubricItem
from servicegym.world_state.core import unvalidated

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
