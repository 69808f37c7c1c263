"""Properties of the common workspace tools as a whole: their schemas, their dependency graph,
and, over random call sequences, that nothing raises, that a call which is not executed leaves the
world exactly as it was, that no call ends in an internal error, and that the same calls on the
same world give the same results and the same state.

Arguments are drawn per parameter name from pools that mix real values of the fixture world (its
paths, ids, addresses, columns) with hostile ones (``../x.md``, ``/etc/passwd``, ``a\\b.md``,
oversized content, malformed CSV and JSON, bad addresses and times), plus plain garbage.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from servicegym.world_state.core import History
from servicegym.world_state.tools import dependency_graph
from servicegym.world_state.workspace import COMMON_TOOLS, MAX_FILE_CHARS, PERSONAS, persona_tools
from tests.world_state.test_workspace_tools import ALICE, BOB, KIT, make_world

HUGE = "x" * (MAX_FILE_CHARS + 1)
FILES = ["todo.txt", "reports/weekly.md", "data/expenses.csv", "data/config.json", "archive/2025/old.md",
         "new/report.md", "new/table.csv", "new/doc.json", "./todo.txt"]
BAD_PATHS = ["data/broken.csv", "data/broken.json", "data", "", "../x.md", "/etc/passwd", "a\\b.md", "C:/x.md",
             "data/../todo.txt", "todo.txt/inner.md", "x.py", "ünï/cødé.md", "a//b.md", "~/x.md"]
CONTENTS = ["hello\n", "amount\n1e400\n1e-400\n2\n", "# Title\n\n## Part\ntext\n", "a,b\n1,2\n", '{"k": [1, 2], "name": "x"}',
            "date,category,amount,owner\n2026-03-01,food,5,dana\n", "travel", ""]
BAD_CONTENTS = ["[" * 100_000 + "]" * 100_000, "a,b\n1,2,3\n", 'a,"b\n', "{bad json", "[1, NaN]", HUGE, "l"]
EDITS = ["buy milk", "travel", "Two experiments", '"version"', "## Summary", "dana"]
EMAILS = [ALICE, BOB, "new@site.example.com", "ALICE@partner.example.com"]
BAD_EMAILS = ["bob", "@x.org", "a@b", "", "x@y.z"]
TIMES = ["2026-03-02 10:30:00", "2026-03-02 12:00:00", "2026-03-02 13:00:00", "2026-03-03 09:00:00",
         "2026-03-03 16:00:00"]
BAD_TIMES = ["2026-03-01 09:00:00", "2026-03-02 25:00:00", "soon", "", "2026-03-02"]
DATES = ["2026-03-02", "2026-03-03", "2026-3-9"]
BAD_DATES = ["2026-02-30", "friday", "", "2026-03-02 10:00:00"]
COLUMNS = ["date", "category", "amount", "owner", "a", "b"]
LOCATIONS = ["name", "/members/0/name", "members.-", "/members/-", "flags.beta", "a.b.c", "k", "version"]
BAD_LOCATIONS = ["", "/", "members.x", "..", "/~1odd", "members.99"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=8))
garbage = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(st.text(max_size=5), scalars, max_size=3))
cell = st.one_of(st.none(), st.booleans(), st.integers(-5, 500), st.sampled_from(["travel", "dana", "10.5", "x,y", "", "1e400", "-0.0"]))
ops = ["eq", "ne", "lt", "le", "gt", "ge", "contains", "in"]
condition = st.fixed_dictionaries(
    {"column": st.sampled_from(COLUMNS[:4]), "value": st.one_of(cell, st.lists(cell.filter(lambda v: v is not None), max_size=3))},
    optional={"op": st.sampled_from(ops)},
)
bad_condition = st.fixed_dictionaries({"column": st.sampled_from(["missing", ""]), "value": cell},
                                      optional={"op": st.sampled_from(["regex", "in", ""])})
row = st.one_of(st.lists(cell, min_size=4, max_size=4), st.dictionaries(st.sampled_from(COLUMNS[:4]), cell, max_size=4))
bad_row = st.one_of(st.lists(cell, max_size=6), st.dictionaries(st.sampled_from(COLUMNS), garbage, max_size=3))
json_value = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                          st.dictionaries(st.text(max_size=4), kids, max_size=3)),
                          max_leaves=6)


def pool(values: list[Any]) -> Any:
    return st.sampled_from(values)


def pools(**named: tuple[Any, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return {k: g for k, (g, _) in named.items()}, {k: b for k, (_, b) in named.items()}


paths = (pool(FILES), pool(BAD_PATHS))
BAD_IDS = pool(["M999", "", "EV404", "m001", "N001", "T001"])


def ids(*good: str) -> tuple[Any, Any]:
    return pool(list(good)), BAD_IDS


# the good paths of a tool whose name says which kind of file it works on
PATHS_FOR = {"csv": st.just("data/expenses.csv"), "json": st.just("data/config.json"),
             "markdown": pool(["reports/weekly.md", "archive/2025/old.md"])}
GOOD, BAD = pools(
    path=paths, source=paths, destination=paths, schema_file=paths,
    directory=(pool(["", "data", "reports", "archive", "new"]), pool(BAD_PATHS)),
    content=(pool(CONTENTS), pool(BAD_CONTENTS)), body=(pool(CONTENTS), pool(BAD_CONTENTS)),
    text=(pool(CONTENTS), pool(BAD_CONTENTS)), new_text=(pool(CONTENTS), pool(BAD_CONTENTS)),
    old_text=(pool(EDITS), pool(["", "absent text", "l"])),
    mail_id=ids("M001", "M002", "M003", "M005"), draft_id=ids("M004", "M005", "M006"), event_id=ids("EV001", "EV002", "EV003"),
    note_id=ids("N001", "N002"), contact_id=ids("C001", "C002", "C004"), todo_id=ids("T001", "T002", "T003"),
    to=(st.lists(pool(EMAILS), min_size=1, max_size=2), st.lists(pool(BAD_EMAILS), max_size=2)),
    cc=(st.lists(pool(EMAILS), max_size=2), st.lists(pool(BAD_EMAILS), min_size=1, max_size=2)),
    attendees=(st.lists(pool(EMAILS), max_size=2), st.lists(pool(BAD_EMAILS), min_size=1, max_size=2)),
    email=(pool(EMAILS), pool(BAD_EMAILS)),
    attachments=(st.lists(pool(FILES[:5]), max_size=2), st.lists(pool(BAD_PATHS), min_size=1, max_size=2)),
    start=(pool(TIMES), pool(BAD_TIMES)), end=(pool(TIMES), pool(BAD_TIMES)),
    date=(pool(DATES), pool(BAD_DATES)), start_date=(pool(DATES), pool(BAD_DATES)),
    end_date=(pool(DATES), pool(BAD_DATES)), due=(pool(DATES), pool(BAD_DATES)),
    due_before=(pool(DATES), pool(BAD_DATES)),
    day_start=(pool(["09:00", "08:00", "13:00"]), pool(["17:00", "9am", ""])),
    day_end=(pool(["17:00", "12:00"]), pool(["08:00", "x"])),
    where=(st.lists(condition, min_size=1, max_size=2), st.lists(bad_condition, max_size=2)),
    values=(st.dictionaries(pool(COLUMNS[:4]), cell, min_size=1, max_size=2),
            st.dictionaries(st.text(max_size=4), garbage, max_size=2)),
    rows=(st.lists(row, min_size=1, max_size=3), st.lists(bad_row, max_size=3)),
    columns=(st.lists(pool(COLUMNS[:4]), min_size=1, max_size=3, unique=True), st.lists(pool(["", "x", "a"]), max_size=3)),
    sort_by=(pool(COLUMNS[:4]), pool(["missing"])), group_by=(pool(COLUMNS[:4]), pool(["missing"])),
    column=(pool(COLUMNS[:4]), pool(["missing", ""])),
    location=(pool(LOCATIONS), pool(BAD_LOCATIONS)), value=(json_value, st.just(float("nan"))),
    json_schema=(pool([{"type": "object", "required": ["name"]}, {"properties": {"version": {"type": "integer"}}},
                       {"type": "array", "items": {"type": "string"}}, {}]),
                 pool([{"minLength": 1}, {"type": "float"}, {"required": "name"}, {"properties": []}])),
    query=(pool(["travel", "budget", "bob", "dropout", "team"]), pool(["", "  ", "zzz"])),
    heading=(pool(["Summary", "## Results", "Next steps", "### New"]), pool(["Missing", "#######x", ""])),
    tags=(st.lists(pool(["research", "Reading"]), max_size=2), st.lists(pool([" ", ""]), min_size=1, max_size=2)),
    groups=(st.lists(pool(["team", "clients", "New"]), max_size=2), st.lists(pool([" ", ""]), min_size=1)),
    group=(pool(["team", "clients"]), pool(["board", ""])),
    start_line=(st.integers(1, 4), st.integers(-2, 2000)), end_line=(st.integers(1, 6), st.integers(-2, 2000)),
    offset=(st.integers(0, 4), st.integers(-3, 10)), limit=(st.integers(1, 10), st.integers(-1, 5000)),
    duration_minutes=(st.integers(15, 120), st.integers(-5, 2000)),
    title=(pool(["Review", "Plan", "Notes"]), pool(["", " " * 3])),
    subject=(pool(["Hello", "Re: Budget figures"]), pool(["", "  "])),
)


def by_type(prop: dict[str, Any]) -> Any:
    t = prop.get("type")
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if t == "boolean":
        return st.booleans()
    if t == "integer":
        return st.integers(0, 10)
    if t == "array":
        return st.lists(st.text(max_size=6), max_size=3)
    if t == "object":
        return st.dictionaries(st.text(max_size=4), scalars, max_size=2)
    return st.text(max_size=12)


@st.composite
def tool_call(draw) -> tuple[Any, Any]:
    """A call that is mostly well-formed: each argument is a good value 7 times in 10, a hostile
    one 2 in 10, garbage 1 in 10; a few calls name no tool or pass no object at all."""
    if draw(st.integers(0, 29)) == 0:
        return draw(st.one_of(st.sampled_from(["no_such_tool", ""]), st.none(), st.integers())), draw(garbage)
    spec = draw(st.sampled_from(list(KIT.specs.values())))
    props = spec.parameters["properties"]
    required = set(spec.parameters.get("required", []))
    args: dict[str, Any] = {}
    for name, prop in props.items():
        if name not in required and draw(st.integers(0, 2)) > 0:
            continue
        k = draw(st.integers(0, 9))
        if k == 0:
            args[name] = draw(garbage)
        elif k <= 2:
            args[name] = draw(BAD.get(name, garbage))
        else:
            kind = next((k for k in PATHS_FOR if k in spec.name), None)
            good = PATHS_FOR[kind] if name == "path" and kind else GOOD.get(name, by_type(prop))
            args[name] = draw(good)
    if draw(st.integers(0, 29)) == 0:
        args["unexpected"] = 1
    if draw(st.integers(0, 29)) == 0:
        return spec.name, draw(garbage)
    return spec.name, args


@given(st.lists(tool_call(), min_size=1, max_size=25))
def test_random_calls_never_raise_and_failed_calls_change_nothing(calls):
    world, history = make_world(), History()
    for k, (name, args) in enumerate(calls):
        before = world.state_dict()
        r = KIT.call(world, history, name, args, step=k)
        assert len(history) == k + 1
        assert r.outcome != "error", (name, args, r.content)
        if r.outcome == "executed":
            json.loads(r.content)
        else:
            assert world.state_dict() == before, (name, args, r.content)
    for f in world.table("files"):  # every file the tools leave behind is still a valid one
        assert len(f.content) <= MAX_FILE_CHARS
        if f.path.endswith(".csv") and f.path != "data/broken.csv":
            assert KIT.call(world, History(), "read_csv", {"path": f.path}).ok
        if f.path.endswith(".json") and f.path != "data/broken.json":
            assert KIT.call(world, History(), "read_json", {"path": f.path}).ok


@given(st.lists(tool_call(), min_size=1, max_size=15))
def test_same_calls_same_results_and_state(calls):
    runs = []
    for _ in range(2):
        world, history = make_world(), History()
        results = [KIT.call(world, history, name, args) for name, args in calls]
        runs.append(([tuple(r) for r in results], world.state_dict()))
    assert runs[0] == runs[1]


def test_every_tool_has_a_described_closed_schema():
    assert 55 <= len(COMMON_TOOLS) <= 70
    for spec in COMMON_TOOLS:
        params = spec.parameters
        assert spec.kind in ("read", "write"), spec.name
        assert spec.summary and spec.summary[-1] in ".)", spec.name
        assert params["type"] == "object" and params["additionalProperties"] is False, spec.name
        assert "$defs" not in json.dumps(params) and "$ref" not in json.dumps(params), spec.name
        for name, prop in params["properties"].items():
            assert prop.get("description"), (spec.name, name)
        sig = inspect.signature(spec.fn).parameters
        required = {n for n, p in list(sig.items())[1:] if p.default is inspect.Parameter.empty}
        assert set(params.get("required", [])) == required, spec.name
        assert spec.schema["function"]["name"] == spec.name


def test_tool_names_are_unique_and_leave_room_for_the_personas():
    names = [s.name for s in COMMON_TOOLS]
    assert len(names) == len(set(names))
    for persona in PERSONAS:
        assert not set(names) & {s.name for s in persona_tools(persona)}, persona


def test_dependency_graph_links_producers_to_consumers():
    graph = dependency_graph(KIT)
    edges = set(graph.edges)
    for edge in [("list_mail", "read_mail"), ("search_mail", "reply_mail"), ("create_draft", "send_draft"),
                 ("write_file", "send_mail"), ("list_files", "read_file"), ("write_csv", "query_csv"),
                 ("list_events", "cancel_event"), ("add_todo", "complete_todo"), ("search_contacts", "update_contact"),
                 ("create_note", "append_to_note"), ("write_file", "validate_json")]:
        assert edge in edges, edge
    assert len(edges) >= 100
    assert all(a != b for a, b in edges)


def test_read_tools_never_change_the_world():
    """Read tools run outside a transaction, so one that wrote would leak on refusal: check that
    a read leaves the state as it was, on every read tool with its happy-path arguments."""
    happy = {
        "list_files": {}, "read_file": {"path": "todo.txt"}, "file_info": {"path": "todo.txt"},
        "search_files": {"query": "travel"}, "markdown_outline": {"path": "reports/weekly.md"},
        "read_markdown_section": {"path": "reports/weekly.md", "heading": "Summary"},
        "read_csv": {"path": "data/expenses.csv"}, "query_csv": {"path": "data/expenses.csv", "sort_by": "amount"},
        "csv_aggregate": {"path": "data/expenses.csv", "function": "sum", "column": "amount", "group_by": "owner"},
        "read_json": {"path": "data/config.json"}, "json_get": {"path": "data/config.json", "location": "members.0"},
        "validate_json": {"path": "data/config.json", "json_schema": {"type": "object"}}, "list_mail": {},
        "search_mail": {"query": "budget"}, "get_current_time": {}, "list_events": {}, "get_event": {"event_id": "EV001"},
        "find_free_slots": {"date": "2026-03-02", "duration_minutes": 30}, "list_notes": {},
        "search_notes": {"query": "dropout"}, "read_note": {"note_id": "N001"}, "search_contacts": {},
        "get_contact": {"contact_id": "C001"}, "list_contact_group": {"group": "team"}, "list_todos": {},
        "workspace_summary": {}, "list_skills": {}, "read_skill": {"name": "demo"},
    }
    reads = {s.name for s in COMMON_TOOLS if s.kind == "read"}
    assert reads == set(happy)
    world = make_world()
    assert KIT.call(world, History(), "write_file", {"path": "skills/demo/SKILL.md", "content": "---\nname: demo\n---\n"}).ok
    before = world.state_dict()
    for name, args in happy.items():
        assert KIT.call(world, History(), name, args).ok, name
    assert world.state_dict() == before
