"""Skills in generated workspace episodes (issue 28): stage the persona's skill folders in the
initial workspace and let the golden route use them where they apply.

- The episode's conventions (report sections, excluded category, summary-mail cc list, meeting
  attendees and room, to-do label, note tags) are read off its sessions' own checks, so a skill
  applies exactly what the checklist asks for. Two of the persona's convention skills, drawn from
  a seed of their own (the episode's draws are untouched), are *stale*: built with an older
  convention, so their output fails the session's checks unless the agent corrects it.
- A session a skill does (a format-group report, an export table, a summary mail, a recurring
  meeting, a tagged note, a labelled to-do, the top-three JSON) records ``skill`` = ``{"name",
  "args", "stale"}`` and keeps its by-hand route as ``manual`` (``stale``: the skill is out of date
  *and* its old convention makes its output wrong here). Its golden route asks only the questions
  the skill cannot answer, runs the skill and reports; a session whose skill is stale keeps the
  by-hand route. ``world["manual_actions"]`` is the whole by-hand episode (it succeeds too, with
  more calls and turns); ``world["skills"]`` lists the staged skills.
"""

from __future__ import annotations

import json
import random
import re
from datetime import datetime, timedelta
from typing import Any

from servicegym.world_state.core import TIME_FORMAT
from servicegym.world_state.workspace.skill_library import (
    CONVENTION_KINDS,
    COVERS,
    SKILL_NAMES,
    build_skills,
    skill_index,
)

STALE_PER_EPISODE = 2
# (plan kind, plan group or None for any) -> skill kind
APPLIES = {("report", "format"): "report", ("table", None): "table", ("mail", "recipients"): "mail",
           ("meeting", "meetings"): "meeting", ("note", "note-tags"): "note", ("todo", "todo-label"): "todo", ("json", None): "json"}


def _facet_check(plans: list[Any], group: str, key: str) -> dict[str, Any]:
    for plan in plans:
        if plan.group == group:
            for f in plan.facets:
                if f.key == key:
                    return f.check.params
    raise ValueError(f"no {key!r} facet in group {group!r}")


def conventions_of_checks(ep: Any) -> dict[str, Any]:
    """The conventions an episode's checks hold its sessions to, read off its built plans."""
    plans = ep.plans
    att = _facet_check(plans, "meetings", "attendees")["expect_set"]["attendees"]
    prefix = _facet_check(plans, "todo-label", "prefix")["expect_contains"]["title"][0]
    return {"sections": list(_facet_check(plans, "format", "sections")["headings"]), "exclude": ep.exclude_cat,
            "cc": list(_facet_check(plans, "recipients", "cc")["expect_set"]["cc"]), "attendees": list(att[1:]),
            "room": _facet_check(plans, "meetings", "location")["expect"]["location"], "label": prefix[1:-1],
            "tags": list(_facet_check(plans, "note-tags", "tags")["expect_set"]["tags"])}


def conventions(ep: Any) -> dict[str, Any]:
    """The conventions an episode's checks hold its sessions to: as the episode drew them
    (``Episode.conv``, known before its sessions are built; ``Episode.finish`` holds every built
    episode's checks to them), a fresh copy."""
    conv = getattr(ep, "conv", None)
    if conv is None:
        return conventions_of_checks(ep)
    return {k: list(v) if type(v) is list else v for k, v in conv.items()}


def old_conventions(ep: Any, now: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A different, earlier convention for each kind (what a stale skill still applies)."""
    p = ep.p
    colleagues = [c["email"] for c in ep.people[1:]]
    cc = list(now["cc"])
    cc[rng.randrange(len(cc))] = rng.choice([e for e in colleagues if e not in now["cc"]])
    att = list(now["attendees"])
    att[rng.randrange(len(att))] = rng.choice([e for e in colleagues if e not in now["attendees"]])
    return {"sections": list(rng.choice([s for s in p.report["sections"] if s != now["sections"]])),
            "exclude": rng.choice([c for c in p.categories if c != now["exclude"]]), "cc": cc, "attendees": att,
            "room": rng.choice([r for r in p.rooms if r != now["room"]]),
            "label": rng.choice([x for x in p.project_labels if x != now["label"]]),
            "tags": list(rng.choice([t for t in p.tag_options if t != now["tags"]]))}


def context(ep: Any, key: str) -> dict[str, Any]:
    p = ep.p
    rng = random.Random(f"{key}/skills")
    now = conventions(ep)
    kinds = [k for k in SKILL_NAMES[ep.persona] if k in CONVENTION_KINDS]
    first = p.owner.split()[-1] if p.owner.startswith("Dr.") else p.owner.split()[0]
    adv = ep.advisor
    return {
        "persona": ep.persona, "owner_first": first, "noun": p.noun, "batch_noun": p.batch_noun, "data_dir": p.data_dir,
        "columns": list(p.columns), "category_noun": p.category_noun, "metric_words": p.metric_words,
        "unit_words": p.unit_words, "derived_column": p.derived[0], "derived_words": p.derived[2],
        "report": {k: p.report[k] for k in ("title", "dir", "stem")}, "json_doc": dict(p.json_doc),
        "advisor": {k: adv[k] for k in ("name", "first", "email")}, "meeting_titles": list(p.meeting["titles"]),
        "note_titles": list(p.note["titles"]), "conventions": now, "old": old_conventions(ep, now, rng),
        "stale": sorted(rng.sample(kinds, STALE_PER_EPISODE)),
        "updated": (ep.start - timedelta(days=3)).strftime("%Y-%m-%d"),
        "stale_updated": (ep.start - timedelta(days=rng.randint(60, 120))).strftime("%Y-%m-%d"),
    }


def _batch(text: str) -> int:
    m = re.search(r"(\d+)(?:\.\w+)?$", text)
    if m is None:
        raise ValueError(f"no batch number in {text!r}")
    return int(m.group(1))


def skill_args(kind: str, plan: Any, label: str) -> dict[str, Any]:
    """The skill's inputs for ``plan``, read off its by-hand route with every intent applied."""
    calls = [json.loads(a) for a in plan.render(plan.all_keys())]
    a = calls[-1]["arguments"]
    if kind in ("report", "table", "json"):
        return {"batch": _batch(a["path"])}
    if kind == "mail":
        return {"batch": _batch(a["subject"])}
    if kind == "meeting":
        start, end = (datetime.strptime(a[k], TIME_FORMAT) for k in ("start", "end"))
        out: dict[str, Any] = {"title": a["title"], "start": a["start"], "person": a["attendees"][0],
                               "minutes": int((end - start).total_seconds() // 60)}
        if a.get("description", "").startswith("Agenda: "):
            out["agenda"] = a["description"][len("Agenda: "):].split("; ")
        return out
    if kind == "note":
        return {"title": a["title"], "points": [line[2:] for line in a["body"].split("\n")]}
    if kind == "todo":
        title = a["title"]
        if title.startswith(f"[{label}] "):
            title = title[len(label) + 3:]
        return {"title": title, **{k: a[k] for k in ("due", "priority", "notes") if a.get(k)}}
    raise ValueError(f"unknown skill kind {kind!r}")


def drops_records(ep: Any, batch: int, category: str) -> bool:
    """Whether batch ``batch`` holds records of ``category`` (an export skill would leave them out)."""
    return any(ep.cat(r) == category for r in ep.batches[batch])


def skill_route(plan: Any, kind: str, name: str, args: dict[str, Any]) -> list[str]:
    """Ask what the skill cannot know, run it, report."""
    asks = [f.question for f in plan.facets if not f.carried and f.key not in COVERS[kind]]
    assert all(f.key in COVERS[kind] for f in plan.facets if f.carried), (plan.index, kind)
    out = ["Before I start: " + " ".join(asks)] if asks else []
    return [*out, json.dumps({"name": "run_skill", "arguments": {"name": name, "args": args}}, ensure_ascii=False), plan.done]


class SkillStage:
    """An episode's skills staged: the skill folders added to ``world["tables"]["files"]`` and
    ``world["skills"]`` at once, each session given its ``skill``, ``manual`` and skill-using
    ``golden`` route by ``session`` (in any order: a session's staging reads only its own plan).
    Without ``files`` the folders are left out of the files table: ``file_rows`` makes them when
    they are first needed (a session's staging needs only each skill's name and staleness)."""

    def __init__(self, ep: Any, world: dict[str, Any], key: str, files: bool = True) -> None:
        c = context(ep, key)
        skills = skill_index(c)
        world["skills"] = [dict(s) for s in skills]
        self.ep = ep
        self.c = c
        self.by_kind = {s["kind"]: s for s in skills}
        if files:
            world["tables"]["files"] += self.file_rows()

    def file_rows(self) -> list[dict[str, Any]]:
        """The files of the skill folders, as the files table's rows (in the skills' order)."""
        stamp = (self.ep.start - timedelta(days=3)).strftime("%Y-%m-%d 17:00:00")
        return [{"path": path, "content": text, "created": stamp, "modified": stamp}
                for s in build_skills(self.c) for path, text in s["files"].items()]

    def session(self, plan: Any, spec: dict[str, Any]) -> None:
        """Stage one session (``spec`` is ``plan``'s, changed in place)."""
        spec["manual"] = list(spec["golden"])
        kind = APPLIES.get((plan.kind, plan.group)) or APPLIES.get((plan.kind, None))
        if kind is None or kind not in self.by_kind:
            return
        c = self.c
        skill = self.by_kind[kind]
        args = skill_args(kind, plan, c["conventions"]["label"])
        stale = skill["stale"]
        if kind == "table" and "exclude" not in plan.all_keys():  # an export without the exclusion rule
            if drops_records(self.ep, args["batch"], c["old" if stale else "conventions"]["exclude"]):
                if not stale:
                    return  # the skill would leave out records this export keeps: it does not apply
            else:
                stale = False  # the old convention plays no part here: the output is right
        spec["skill"] = {"name": skill["name"], "kind": kind, "args": args, "stale": stale}
        if not stale:
            spec["golden"] = skill_route(plan, kind, skill["name"], args)


def stage_skills(ep: Any, world: dict[str, Any], key: str) -> None:
    """Stage the skill folders in ``world["tables"]["files"]`` and give each session a skill does
    its ``skill``, ``manual`` and skill-using ``golden`` route (``world["sessions"]`` in place)."""
    stage = SkillStage(ep, world, key)
    manual: list[str] = []
    for plan, spec in zip(ep.plans, world["sessions"]):
        stage.session(plan, spec)
        manual += spec["manual"]
    world["manual_actions"] = manual
