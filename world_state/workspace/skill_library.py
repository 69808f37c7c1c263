"""The skills each persona's workspace ships with (pi-Bench's 21 skills; here 22 over five personas).

``build_skills(context)`` writes the skill folders (``skills/<name>/SKILL.md``, ``run.json`` and, for
a skill that applies a convention, ``conventions.json``) of one persona's episode, with the
episode's conventions baked into the scripts: the report's sections, the category an export
leaves out, who a summary mail copies, who a recurring meeting invites and where, a to-do label,
note tags. ``context`` is plain data (the generator supplies it); a skill listed in
``context["stale"]`` is built with the *old* convention from ``context["old"]`` and an earlier
``updated`` date: it still runs, but its output is wrong for the convention now in force.

Kinds (each persona has the first three and one or two of the rest):

- ``report``: a batch's data file -> the persona's report in the house format (sections, numbers
  in the house unit, a ``Best: <id>`` line);
- ``table``: a batch's data file -> ``tables/<noun>s_<batch>_NN.csv`` without the excluded
  category, best first, with the derived column;
- ``mail``: mails a batch's report to the advisor, copying the usual people, attaching the file
  and naming the best record;
- ``meeting``: a recurring meeting with the usual attendees in the usual room;
- ``note``: a note with the agreed tags;
- ``todo``: a to-do with the project label;
- ``json``: the top three records of a batch as JSON (``as_of``, ``items`` of ``id``/``value``,
  ``count``).

The per-persona arithmetic (what "best" means, the house number format, the derived column) is
written here in the script language of ``skills``; the tests compare it with the generator's
Python definitions on every record.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from typing import Any

SKILL_KINDS = ("report", "table", "mail", "meeting", "note", "todo", "json")
CONVENTION_KINDS = ("report", "table", "mail", "meeting", "note", "todo")

# kind -> name, per persona (a persona's skills are the kinds it names)
SKILL_NAMES: dict[str, dict[str, str]] = {
    "researcher": {"report": "experiment-summary", "table": "runs-table", "mail": "advisor-update",
                   "meeting": "lab-meeting", "note": "research-note"},
    "marketer": {"report": "performance-brief", "table": "campaigns-table", "mail": "brief-mail",
                 "todo": "launch-todo", "json": "top-campaigns-json"},
    "legal": {"report": "review-memo", "table": "contracts-table", "mail": "memo-to-partner", "meeting": "case-meeting"},
    "pharmacist": {"report": "check-log", "table": "prescriptions-table", "mail": "log-to-lead", "note": "pharmacy-note"},
    "analyst": {"report": "portfolio-memo", "table": "holdings-table", "mail": "memo-to-pm", "todo": "desk-todo"},
}

# the covered hidden intents of each kind: a run with the current convention satisfies them unasked
COVERS: dict[str, frozenset[str]] = {
    "report": frozenset({"sections", "best", "units"}), "table": frozenset({"exclude", "sort", "derived"}),
    "mail": frozenset({"cc", "attach", "mention"}), "meeting": frozenset({"attendees", "location"}),
    "note": frozenset({"tags"}), "todo": frozenset({"prefix"}), "json": frozenset({"schema", "count"}),
}

# per persona: "best" (metric), the house number format and the derived column, in script terms
ARITHMETIC: dict[str, dict[str, Any]] = {
    "researcher": {"metric": "accuracy", "unit": {"expr": "accuracy", "format": {"scale": 100, "decimals": 1, "suffix": "%"}},
                   "derived": {"expr": "1 - accuracy", "format": {"decimals": 4}}},
    "marketer": {"metric": "conversions / spend",
                 "unit": {"expr": "spend", "format": {"decimals": 2, "thousands": True, "prefix": "$"}},
                 "derived": {"expr": "spend / conversions", "format": {"decimals": 2}}},
    "legal": {"metric": "value", "unit": {"expr": "value", "format": {"decimals": 0, "thousands": True, "prefix": "EUR "}},
              "derived": {"expr": "value / 12", "format": {"decimals": 2}}},
    "pharmacist": {"metric": "dose_mg * doses_per_day", "unit": {"template": "{dose_mg} mg x{doses_per_day}"},
                   "derived": {"expr": "dose_mg * doses_per_day", "format": {"trim": True}}},
    "analyst": {"metric": "(price - cost) / cost",
                "unit": {"expr": "(price - cost) / cost", "format": {"scale": 100, "decimals": 2, "sign": True, "suffix": "%"}},
                "derived": {"expr": "price - cost", "format": {"decimals": 2}}},
}


def esc(text: str) -> str:
    """``text`` as literal template text (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def _batch_param(c: dict[str, Any]) -> dict[str, Any]:
    return {"batch": {"type": "integer", "min": 1, "max": 99,
                      "description": f"the {c['batch_noun']} number; the data is {c['data_dir']}/{c['batch_noun']}_NN.csv"}}


def _load(c: dict[str, Any]) -> list[dict[str, Any]]:
    """Steps: the batch's data file read and checked, ``rows`` with ``_metric``, ``ranked`` best first."""
    a = ARITHMETIC[c["persona"]]
    return [
        {"op": "let", "as": "data_path", "value": {"$fmt": esc(f"{c['data_dir']}/{c['batch_noun']}_") + "{args.batch|pad2}.csv"}},
        {"op": "call", "tool": "read_csv", "args": {"path": "$data_path", "limit": 500}, "as": "data"},
        {"op": "require", "value": "$data.rows", "message": {"$fmt": "{data_path} has no rows"}},
        {"op": "require", "value": "$data.columns", "equals": c["columns"],
         "message": {"$fmt": "{data_path} does not have the columns " + esc(", ".join(c["columns"]))}},
        {"op": "compute", "from": "$data.rows", "field": "_metric", "expr": a["metric"], "as": "rows"},
        {"op": "sort", "from": "$rows", "by": "_metric", "descending": True, "as": "ranked"},
    ]


def _report(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    a, key, label, cat = ARITHMETIC[c["persona"]], *c["columns"][:3]
    r = c["report"]
    sections = conv["sections"]
    steps = _load(c)
    if "template" in a["unit"]:
        unit = "- {" + key + "} ({" + label + "}, {" + cat + "}): " + a["unit"]["template"]
    else:
        steps.append({"op": "compute", "from": "$rows", "field": "_unit", "expr": a["unit"]["expr"], "format": a["unit"]["format"],
                      "as": "rows"})
        unit = "- {" + key + "} ({" + label + "}, {" + cat + "}): {_unit}"
    body = [f"# {esc(r['title'])}: {esc(c['batch_noun'])} {{args.batch}}", "", f"## {esc(sections[0])}",
            f"{{n}} {esc(c['noun'])}s from {{data_path}}.", "", f"## {esc(sections[1])}", "{lines}", "", "Best: {best}"]
    for s in sections[2:]:
        body += ["", f"## {esc(s)}", "- To discuss at the next check-in."]
    steps += [
        {"op": "map", "from": "$rows", "template": unit, "as": "line_list"},
        {"op": "join", "from": "$line_list", "sep": "\n", "as": "lines"},
        {"op": "count", "from": "$rows", "as": "n"},
        {"op": "let", "value": f"$ranked.0.{key}", "as": "best"},
        {"op": "let", "as": "path", "value": {"$fmt": esc(f"{r['dir']}/{r['stem']}_{c['batch_noun']}_") + "{args.batch|pad2}.md"}},
        {"op": "call", "tool": "write_file", "args": {"path": "$path", "content": {"$fmt": "\n".join(body) + "\n"}, "overwrite": True}},
    ]
    script = {"params": _batch_param(c), "steps": steps,
              "result": {"path": "$path", "sections": sections, "records": "$n", "best": "$best"}}
    doc = {
        "description": f"Write the {r['title'].lower()} of one {c['batch_noun']} in the house format.",
        "when": f"{c['owner_first']} asks for the {r['title'].lower()} of a {c['batch_noun']} (the data file is in {c['data_dir']}/).",
        "inputs": [f"batch (integer 1-99): the {c['batch_noun']} number"],
        "outputs": [f"{r['dir']}/{r['stem']}_{c['batch_noun']}_NN.md (replaced if it exists): a level-1 title, the sections "
                    f"below, every {c['noun']} of the {c['batch_noun']} with its number in the house format, and a line "
                    f"'Best: <id>' naming the {c['noun']} with the {c['metric_words']}",
                    "returns the path, the sections used, the number of records and the best one"],
        "conventions": [f"sections, in order: {', '.join(sections)}", f"numbers: {c['unit_words']}"],
    }
    return doc, script


def _table(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    a, cat = ARITHMETIC[c["persona"]], c["columns"][2]
    dcol = c["derived_column"]
    steps = _load(c) + [
        {"op": "filter", "from": "$ranked", "where": [{"field": cat, "op": "ne", "value": conv["exclude"]}], "as": "kept"},
        {"op": "compute", "from": "$kept", "field": dcol, "expr": a["derived"]["expr"], "format": a["derived"]["format"], "as": "kept"},
        {"op": "table", "from": "$kept", "columns": [*c["columns"], dcol], "as": "cells"},
        {"op": "let", "as": "path", "value": {"$fmt": esc(f"tables/{c['noun']}s_{c['batch_noun']}_") + "{args.batch|pad2}.csv"}},
        {"op": "call", "tool": "write_csv", "args": {"path": "$path", "columns": [*c["columns"], dcol], "rows": "$cells", "overwrite": True}},
        {"op": "count", "from": "$kept", "as": "n"},
        {"op": "count", "from": "$rows", "as": "total"},
    ]
    script = {"params": _batch_param(c), "steps": steps,
              "result": {"path": "$path", "rows": "$n", "of": "$total", "excluded": f"{c['category_noun']} {conv['exclude']}"}}
    doc = {
        "description": f"Export one {c['batch_noun']}'s {c['noun']}s as a clean CSV table, the house way.",
        "when": f"{c['owner_first']} wants the {c['noun']}s of a {c['batch_noun']} as a CSV export or table.",
        "inputs": [f"batch (integer 1-99): the {c['batch_noun']} number"],
        "outputs": [f"tables/{c['noun']}s_{c['batch_noun']}_NN.csv (replaced if it exists): the data file's columns plus "
                    f"{dcol} ({c['derived_words']}), sorted by {c['metric_words']} (best first)",
                    "returns the path and how many rows were kept"],
        "conventions": [f"leaves out every {c['noun']} of the {c['category_noun']} {conv['exclude']}"],
    }
    return doc, script


def _mail(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    key = c["columns"][0]
    r, adv = c["report"], c["advisor"]
    steps = _load(c) + [
        {"op": "let", "as": "report", "value": {"$fmt": esc(f"{r['dir']}/{r['stem']}_{c['batch_noun']}_") + "{args.batch|pad2}.md"}},
        {"op": "call", "tool": "file_info", "args": {"path": "$report"}, "as": "report_file"},
        {"op": "let", "value": f"$ranked.0.{key}", "as": "best"},
        {"op": "let", "as": "subject", "value": {"$fmt": esc(f"{r['title']}: {c['batch_noun']} ") + "{args.batch}"}},
        {"op": "call", "tool": "send_mail", "as": "sent", "args": {
            "to": [adv["email"]], "subject": "$subject", "cc": conv["cc"], "attachments": ["$report"],
            "body": {"$fmt": esc(f"Hi {adv['first']},\n\nhere is the {r['title'].lower()}: {c['batch_noun']} ") + "{args.batch} ({report}). "
                     + esc(f"The best {c['noun']} was ") + "{best}." + esc(f"\n\nBest,\n{c['owner_first']}")}}},
    ]
    script = {"params": _batch_param(c), "steps": steps,
              "result": {"mail_id": "$sent.id", "subject": "$subject", "to": [adv["email"]], "cc": conv["cc"], "attached": "$report"}}
    doc = {
        "description": f"Mail one {c['batch_noun']}'s {r['title'].lower()} to {adv['name']}.",
        "when": f"{c['owner_first']} asks to send {adv['first']} a {r['title'].lower()} that is already written.",
        "inputs": [f"batch (integer 1-99): the {c['batch_noun']} number; {r['dir']}/{r['stem']}_{c['batch_noun']}_NN.md must exist"],
        "outputs": [f"a sent mail to {adv['email']} with the subject '{r['title']}: {c['batch_noun']} N', the report attached and "
                    f"the sentence 'The best {c['noun']} was <id>.' in the body", "returns the mail id, subject and recipients"],
        "conventions": [f"copies in: {', '.join(conv['cc'])}"],
    }
    return doc, script


def _meeting(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    params = {"title": {"type": "string", "max_chars": 120, "description": "the meeting's title"},
              "start": {"type": "datetime", "description": "start, YYYY-MM-DD HH:MM:SS"},
              "person": {"type": "string", "max_chars": 254, "description": "e-mail of the person the meeting is with"},
              "minutes": {"type": "integer", "min": 15, "max": 240, "default": 60, "description": "length in minutes"},
              "agenda": {"type": "list", "max_items": 10, "default": [], "description": "agenda points"}}
    steps = [
        {"op": "add_minutes", "from": "$args.start", "minutes": "$args.minutes", "as": "end"},
        {"op": "join", "from": "$args.agenda", "sep": "; ", "prefix": "Agenda: ", "as": "description"},
        {"op": "concat", "from": [["$args.person"], conv["attendees"]], "as": "attendees"},
        {"op": "call", "tool": "create_event", "as": "event", "args": {
            "title": "$args.title", "start": "$args.start", "end": "$end", "location": conv["room"], "attendees": "$attendees",
            "description": "$description"}},
    ]
    script = {"params": params, "steps": steps,
              "result": {"event_id": "$event.id", "start": "$args.start", "end": "$end", "location": conv["room"], "attendees": "$attendees"}}
    doc = {
        "description": "Put one of the recurring team meetings in the calendar, with the usual people and room.",
        "when": f"{c['owner_first']} asks to schedule one of the regular meetings ({', '.join(c['meeting_titles'])}).",
        "inputs": ["title (text)", "start (YYYY-MM-DD HH:MM:SS)", "person (e-mail of who it is with)",
                   "minutes (15-240, default 60)", "agenda (list of points, default none)"],
        "outputs": ["a calendar event: the person plus the usual attendees, the usual room, 'Agenda: ...' as its description"],
        "conventions": [f"also invites: {', '.join(conv['attendees'])}", f"room: {conv['room']}"],
    }
    return doc, script


def _note(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    params = {"title": {"type": "string", "max_chars": 120, "description": "the note's title"},
              "points": {"type": "list", "max_items": 20, "description": "the points, one per item"}}
    steps = [
        {"op": "require", "value": "$args.points", "message": "points must list at least one point"},
        {"op": "map", "from": "$args.points", "template": "- {item}", "as": "bullets"},
        {"op": "join", "from": "$bullets", "sep": "\n", "as": "body"},
        {"op": "call", "tool": "create_note", "as": "note", "args": {"title": "$args.title", "body": "$body", "tags": conv["tags"]}},
    ]
    script = {"params": params, "steps": steps, "result": {"note_id": "$note.id", "tags": conv["tags"]}}
    doc = {
        "description": "File a working note as a bullet list, tagged the agreed way.",
        "when": f"{c['owner_first']} asks for a note of points ({', '.join(c['note_titles'])}).",
        "inputs": ["title (text)", "points (list of texts)"],
        "outputs": ["a note whose body lists the points as '- ' bullets"],
        "conventions": [f"tags: {', '.join(conv['tags'])}"],
    }
    return doc, script


def _todo(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    params = {"title": {"type": "string", "max_chars": 150, "description": "what to do"},
              "due": {"type": "date", "default": "", "description": "due date YYYY-MM-DD (default none)"},
              "priority": {"type": "string", "choices": ["low", "normal", "high"], "default": "normal", "description": "priority"},
              "notes": {"type": "string", "max_chars": 500, "default": "", "description": "details"}}
    steps = [{"op": "call", "tool": "add_todo", "as": "todo", "args": {
        "title": {"$fmt": esc(f"[{conv['label']}] ") + "{args.title}"}, "due": "$args.due", "priority": "$args.priority",
        "notes": "$args.notes"}}]
    script = {"params": params, "steps": steps, "result": {"todo_id": "$todo.id", "title": "$todo.title"}}
    doc = {
        "description": "Add a project to-do with the project label.",
        "when": f"{c['owner_first']} asks for a to-do of the current project.",
        "inputs": ["title (text, without the label)", "due (YYYY-MM-DD, optional)", "priority (low, normal or high; default normal)",
                   "notes (text, optional)"],
        "outputs": [f"an open to-do titled '[{conv['label']}] <title>'"],
        "conventions": [f"label: [{conv['label']}] at the start of the title"],
    }
    return doc, script


def _json(c: dict[str, Any], conv: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    key = c["columns"][0]
    j = c["json_doc"]
    steps = _load(c) + [
        {"op": "slice", "from": "$ranked", "start": 0, "stop": 3, "as": "top"},
        {"op": "compute", "from": "$top", "field": "_value", "expr": ARITHMETIC[c["persona"]]["metric"], "round": 4, "as": "top"},
        {"op": "project", "from": "$top", "fields": {"id": key, "value": "_value"}, "as": "items"},
        {"op": "count", "from": "$items", "as": "n"},
        {"op": "to_json", "value": {"as_of": {"$fmt": "{now|date}"}, "items": "$items", "count": "$n"}, "as": "text"},
        {"op": "let", "as": "path", "value": {"$fmt": esc(f"{j['dir']}/{j['stem']}_{c['batch_noun']}_") + "{args.batch|pad2}.json"}},
        {"op": "call", "tool": "write_file", "args": {"path": "$path", "content": "$text", "overwrite": True}},
    ]
    script = {"params": _batch_param(c), "steps": steps, "result": {"path": "$path", "items": "$items"}}
    doc = {
        "description": f"Save the three {j['what']} of one {c['batch_noun']} as JSON.",
        "when": f"{c['owner_first']} asks for the {j['what']} of a {c['batch_noun']} as a JSON file.",
        "inputs": [f"batch (integer 1-99): the {c['batch_noun']} number"],
        "outputs": [f"{j['dir']}/{j['stem']}_{c['batch_noun']}_NN.json: {{'as_of': today, 'items': [{{'id', 'value'}} x3 by "
                    f"{c['metric_words']}], 'count': 3}}"],
        "conventions": ["as_of is today's date (YYYY-MM-DD); value is the ranking number rounded to four decimals"],
    }
    return doc, script


BUILDERS = {"report": _report, "table": _table, "mail": _mail, "meeting": _meeting, "note": _note, "todo": _todo, "json": _json}


def skill_doc(name: str, persona: str, updated: str, doc: dict[str, Any], scripts: list[str]) -> str:
    lines = ["---", f"name: {name}", f"description: {doc['description']}", f"persona: {persona}", f"updated: {updated}", "---",
             f"# {name}", "", "## When to use", doc["when"], "", "## Inputs", *(f"- {x}" for x in doc["inputs"]),
             "", "## Outputs", *(f"- {x}" for x in doc["outputs"]), "", "## Conventions it applies",
             *(f"- {x}" for x in doc["conventions"]), "", "## How to run",
             f"run_skill(name=\"{name}\", args={{...the inputs...}}); dry_run=true shows what it would do without changing "
             "anything. The conventions above are the ones in force when the skill was last updated: if the workspace or "
             "the user shows a newer convention, check the output and fix it (or do the work by hand).",
             "", "## Scripts", *(f"- {s}" for s in scripts)]
    return "\n".join(lines) + "\n"


class _NotPlain(Exception):
    """A value ``_dumps`` leaves to ``json.dumps``."""


def _encode(value: Any, out: list[str], newline: str) -> None:
    t = type(value)
    if t is str:
        out.append(encode_basestring(value))
    elif t is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + " "
        sep = "{" + inner
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out.append(sep + encode_basestring(k) + ": ")
            _encode(v, out, inner)
            sep = "," + inner
        out.append(newline + "}")
    elif t is list:
        if not value:
            out.append("[]")
            return
        inner = newline + " "
        sep = "[" + inner
        for v in value:
            out.append(sep)
            _encode(v, out, inner)
            sep = "," + inner
        out.append(newline + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif t is int:
        out.append(int.__repr__(value))
    elif t is float and math.isfinite(value):
        out.append(float.__repr__(value))
    else:
        raise _NotPlain


def _dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1)``, the same text, for the plain JSON values
    skill scripts are (dicts with string keys, lists, strings, ints, finite floats, booleans,
    None) written without the pure-Python encoder's generators (an episode stages a dozen
    scripts); anything else goes to ``json.dumps`` itself."""
    out: list[str] = []
    try:
        _encode(value, out, "\n")
    except _NotPlain:
        return json.dumps(value, ensure_ascii=False, indent=1)
    return "".join(out)


# the conventions each kind's builder reads (it is given only these), and the context fields no
# builder reads (it is given the others: the persona's own, and the advisor for the mail skill)
CONVENTION_KEYS: dict[str, tuple[str, ...]] = {"report": ("sections",), "table": ("exclude",), "mail": ("cc",),
                                               "meeting": ("attendees", "room"), "note": ("tags",), "todo": ("label",), "json": ()}
_EPISODE_FIELDS = frozenset(("conventions", "old", "stale", "updated", "stale_updated"))
# (kind, persona, owner_first, the conventions it reads, the advisor for a mail skill) -> its doc and
# script texts: every other field a builder reads is the persona's own (``context``); bounded
_MADE: dict[tuple[Any, ...], tuple[dict[str, Any], str, str | None]] = {}
_MAX_MADE = 4096


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if type(value) is list else value


def _build(c: dict[str, Any], kind: str, conv: dict[str, Any]) -> tuple[dict[str, Any], str, str | None]:
    """``(doc, run.json text, conventions.json text or None)`` of one skill kind, built now: its
    builder is given the persona's fields of ``c`` (and the advisor for the mail skill) and only the
    conventions it applies."""
    keys = CONVENTION_KEYS[kind]
    view = {k: v for k, v in c.items() if k not in _EPISODE_FIELDS and (k != "advisor" or kind == "mail")}
    doc, script = BUILDERS[kind](view, {k: conv[k] for k in keys})
    conventions = None
    if kind in CONVENTION_KINDS:
        conventions = _dumps({"params": {}, "steps": [], "result": {k: conv[k] for k in keys}}) + "\n"
    return doc, _dumps(script) + "\n", conventions


# the mail and meeting skills hold values that differ in almost every episode (the advisor, who is
# copied or invited): they are made once per persona with a placeholder for each, then the values
# are put in. A value goes in as it is written everywhere it appears (verbatim in a doc, in a
# script's JSON string and in a template's literal text): no brace, quote, backslash or control character
_SLOT = "\ue000{}\ue001"


def _plain(value: Any) -> bool:
    return (type(value) is str and encode_basestring(value)[1:-1] == value and "{" not in value and "}" not in value
            and "\ue000" not in value and "\ue001" not in value)


def _placeholders(c: dict[str, Any], kind: str, conv: dict[str, Any]) -> tuple[Any, list[str], dict[str, Any], dict[str, Any]] | None:
    """``(key, values, context, conventions)``: the mail or meeting skill's varying values, and the
    context and conventions with a placeholder in place of each; None for another kind, or a value
    that cannot be put in verbatim."""
    if kind == "mail":
        adv = c["advisor"]
        if type(adv) is not dict or tuple(adv) != ("name", "first", "email") or type(conv["cc"]) is not list:
            return None
        values = [adv["name"], adv["first"], adv["email"], *conv["cc"]]
        slots = [_SLOT.format(i) for i in range(len(values))]
        c = {**c, "advisor": dict(zip(("name", "first", "email"), slots[:3], strict=True))}
        conv = {"cc": slots[3:]}
        key = ("mail", c["persona"], c["owner_first"], len(values))
    elif kind == "meeting":
        if type(conv["attendees"]) is not list:
            return None
        values = list(conv["attendees"])
        conv = {"attendees": [_SLOT.format(i) for i in range(len(values))], "room": conv["room"]}
        key = ("meeting", c["persona"], c["owner_first"], len(values), conv["room"])
    else:
        return None
    return (key, values, c, conv) if all(_plain(v) for v in values) else None


def _put(value: Any, values: list[str]) -> Any:
    if type(value) is str:
        for i, v in enumerate(values):
            value = value.replace(_SLOT.format(i), v)
        return value
    if type(value) is list:
        return [_put(v, values) for v in value]
    if type(value) is dict:
        return {k: _put(v, values) for k, v in value.items()}
    return value


def skill_files(c: dict[str, Any], kind: str, conv: dict[str, Any]) -> tuple[dict[str, Any], str, str | None]:
    """``(doc, run.json text, conventions.json text or None)`` of one skill kind built with ``conv``:
    ``_build``'s, made once per persona and conventions (the mail and meeting skills once per
    persona with placeholders for their advisor, copied and invited people, put in here)."""
    templated = _placeholders(c, kind, conv)
    if templated is not None:
        key, values, c, conv = templated
    else:
        keys = CONVENTION_KEYS[kind]
        advisor = c["advisor"] if kind == "mail" else None
        key = (kind, c["persona"], c["owner_first"], tuple(_freeze(conv[k]) for k in keys),
               None if advisor is None else tuple(sorted(advisor.items())))
    hit = _MADE.get(key)
    if hit is None:
        hit = _build(c, kind, conv)
        if len(_MADE) < _MAX_MADE:
            _MADE[key] = hit
    if templated is None:
        return hit
    doc, run, conventions = hit
    return _put(doc, values), _put(run, values), None if conventions is None else _put(conventions, values)


def build_skills(c: dict[str, Any]) -> list[dict[str, Any]]:
    """The skill folders of one persona episode: ``[{"name", "kind", "stale", "updated", "files": {path: text}}]``.

    ``c``: ``persona``, ``owner_first``, ``noun``, ``batch_noun``, ``data_dir``, ``columns``,
    ``category_noun``, ``metric_words``, ``unit_words``, ``derived_column``, ``derived_words``,
    ``report`` (title, dir, stem), ``json_doc`` (dir, stem, what), ``advisor`` (name, first, email),
    ``meeting_titles``, ``note_titles``, ``conventions`` (sections, exclude, cc, attendees, room,
    tags, label), ``old`` (the same keys: the conventions before the episode), ``stale`` (kinds
    built with ``old``), ``updated`` and ``stale_updated`` (dates). Every field but ``advisor``,
    the conventions and the dates is the persona's own (``skill_files`` makes a kind's texts once)."""
    out = []
    for skill in skill_index(c):
        name, kind, updated = skill["name"], skill["kind"], skill["updated"]
        doc, run, conventions = skill_files(c, kind, c["old"] if skill["stale"] else c["conventions"])
        scripts = ["run.json"]
        files = {f"skills/{name}/run.json": run}
        if conventions is not None:
            scripts.append("conventions.json")
            files[f"skills/{name}/conventions.json"] = conventions
        files[f"skills/{name}/SKILL.md"] = skill_doc(name, c["persona"], updated, doc, scripts)
        out.append({**skill, "files": files})
    return out


def skill_index(c: dict[str, Any]) -> list[dict[str, Any]]:
    """``build_skills(c)`` without the files: ``[{"name", "kind", "stale", "updated"}]``, in the
    same order (what a session needs to know of its skill before the skill's files are made)."""
    out = []
    for kind, name in SKILL_NAMES[c["persona"]].items():
        stale = kind in c["stale"]
        out.append({"name": name, "kind": kind, "stale": stale, "updated": c["stale_updated"] if stale else c["updated"]})
    return out


def skill_count() -> dict[str, int]:
    """Skills per persona (the complexity report's column beside pi-Bench's 21)."""
    return {p: len(names) for p, names in SKILL_NAMES.items()}
