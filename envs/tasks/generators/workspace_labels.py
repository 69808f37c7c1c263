"""A workspace episode's structure and its sessions' labels, derived by rule from what each session
requires: our taxonomy of action and reasoning types (``ACTION_TYPES``, ``REASONING_TYPES``), the
labels of a session (``session_labels``) and of an episode (``episode_labels``), the values a
checklist item requires (``check_values``), the episode's groups (``episode_structure``) and the
check that it has pi-Bench's shape (``check_structure``).
"""

from __future__ import annotations

from typing import Any

from servicegym.envs.tasks.generators.workspace_plans import GROUP_SIZES, GROUPS, INDEPENDENT, SESSIONS

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
