"""The common workspace tools (files, CSV, JSON, Markdown, mail, calendar, notes, contacts, to-dos):
each tool's happy path and its refusals, called through the Toolkit as an agent would.

The world is small and hand-written: a Monday morning, a weekly report in Markdown, an expenses
CSV, a JSON config, one malformed CSV and one malformed JSON file seeded directly, four messages
(unread inbox with an attachment, read inbox, sent, draft), two events, a note, three contacts and
two to-dos.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import (
    COMMON_TOOLS,
    MAX_FILE_CHARS,
    Contact,
    Event,
    File,
    Mail,
    Note,
    Todo,
    WorkspaceWorld,
    put_file,
)

NOW = "2026-03-02 09:00:00"
OWNER = "dana@lab.example.org"
ALICE = "alice@partner.example.com"
BOB = "bob@lab.example.org"
REPORT = """# Weekly report

## Summary

Two experiments ran.

## Results

| run | score |
| --- | --- |
| a | 1 |

```
## not a heading
```

### Detail

Fine print.

## Next steps

Write the paper.
"""
EXPENSES = "date,category,amount,owner\n2026-02-01,travel,120.50,dana\n2026-02-03,books,30,bob\n" \
           "2026-02-10,travel,80.25,bob\n2026-02-12,software,,dana\n2026-02-20,books,19.99,dana\n"
CONFIG = {"name": "lab", "version": 2, "members": [{"name": "dana"}, {"name": "bob"}], "flags": {"beta": True}}

KIT = Toolkit(COMMON_TOOLS, check_postconditions=True)


def _file(path: str, content: str) -> File:
    return File(path=path, content=content, created="2026-02-27 10:00:00", modified="2026-02-27 10:00:00")


def make_world() -> WorkspaceWorld:
    files = [
        _file("reports/weekly.md", REPORT),
        _file("data/expenses.csv", EXPENSES),
        _file("data/config.json", json.dumps(CONFIG, indent=2) + "\n"),
        _file("data/broken.csv", "a,b\n1,2\n3,4,5\n"),
        _file("data/broken.json", '{"a": 1,\n "b": }\n'),
        _file("todo.txt", "buy milk\ncall bob\n"),
        _file("archive/2025/old.md", "# Old\n"),
    ]
    mail = [
        Mail(id="M001", folder="inbox", sender=ALICE, to=[OWNER], cc=[BOB], subject="Budget figures",
             body="Please check the travel budget.", time="2026-03-01 17:00:00", attachments=["data/expenses.csv"]),
        Mail(id="M002", folder="inbox", sender=BOB, to=[OWNER], subject="Lunch", body="Noon?", time="2026-02-28 11:00:00",
             read=True),
        Mail(id="M003", folder="sent", sender=OWNER, to=[ALICE], subject="Report", body="Attached.",
             time="2026-02-27 16:00:00", read=True),
        Mail(id="M004", folder="drafts", sender=OWNER, to=[], subject="Plan", body="draft text", time="2026-02-27 16:30:00",
             read=True),
    ]
    events = [
        Event(id="EV001", title="Group meeting", start="2026-03-02 10:00:00", end="2026-03-02 11:00:00",
              attendees=[BOB]),
        Event(id="EV002", title="Seminar", start="2026-03-03 14:00:00", end="2026-03-03 15:30:00", location="Room 2"),
    ]
    notes = [Note(id="N001", title="Ideas", body="try dropout", tags=["research"], created="2026-02-20 09:00:00",
                  modified="2026-02-20 09:00:00")]
    contacts = [
        Contact(id="C001", name="Alice Moreau", email=ALICE, organization="Partner Co", groups=["clients"]),
        Contact(id="C002", name="Bob Tanaka", email=BOB, role="postdoc", groups=["team"]),
        Contact(id="C003", name="Cleo Varga", email="cleo@lab.example.org", groups=["team"]),
    ]
    todos = [
        Todo(id="T001", title="Submit expenses", due="2026-03-01", priority="high"),
        Todo(id="T002", title="Book room", status="done"),
    ]
    tables: dict[str, dict[str, Any]] = {
        "files": {f.path: f for f in files}, "mail": {m.id: m for m in mail}, "calendar": {e.id: e for e in events},
        "notes": {n.id: n for n in notes}, "contacts": {c.id: c for c in contacts}, "todos": {t.id: t for t in todos},
    }
    return WorkspaceWorld(datetime(2026, 3, 2, 9, 0, 0), tables=tables,
                          extra={"persona": "researcher", "owner": "Dana Okafor", "owner_email": OWNER})


class Agent:
    """Calls tools on one world and history; ``ok`` expects success, ``refused`` a refusal that
    leaves the world as it was."""

    def __init__(self, world: WorkspaceWorld | None = None) -> None:
        self.world = world or make_world()
        self.history = History()

    def call(self, tool: str, **args: Any):
        return KIT.call(self.world, self.history, tool, args)

    def ok(self, tool: str, **args: Any) -> Any:
        r = self.call(tool, **args)
        assert r.outcome == "executed", r.content
        return json.loads(r.content)

    def refused(self, tool: str, *needles: str, **args: Any) -> str:
        before = self.world.state_dict()
        r = self.call(tool, **args)
        assert r.outcome == "rejected", r.content
        assert self.world.state_dict() == before
        for n in needles:
            assert n.casefold() in r.content.casefold(), r.content
        return r.content

    def text(self, path: str) -> str:
        return self.world.table("files").require(path).content


@pytest.fixture
def agent() -> Agent:
    return Agent()


# --- files -------------------------------------------------------------------------------------


def test_list_files_recursive_pattern_and_directories(agent):
    out = agent.ok("list_files")
    assert [f["path"] for f in out["files"]] == sorted(agent.world.table("files").rows)
    csvs = agent.ok("list_files", directory="data", pattern="*.csv")
    assert [f["path"] for f in csvs["files"]] == ["data/broken.csv", "data/expenses.csv"]
    top = agent.ok("list_files", recursive=False)
    assert [f["path"] for f in top["files"]] == ["todo.txt"]
    assert top["directories"] == ["archive", "data", "reports"]
    assert agent.ok("list_files", directory="archive/", recursive=False)["directories"] == ["archive/2025"]
    assert agent.ok("list_files", limit=2)["note"].startswith("showing 2 of 7")


def test_list_files_refusals(agent):
    agent.refused("list_files", "no directory", directory="missing")
    agent.refused("list_files", "is a file", directory="todo.txt")
    agent.refused("list_files", "leaves the workspace", directory="../etc")
    agent.refused("list_files", "absolute", directory="/etc")


def test_read_file_whole_range_and_truncation(agent):
    out = agent.ok("read_file", path="todo.txt")
    assert out["content"] == "buy milk\ncall bob" and out["total_lines"] == 2 and "truncated" not in out
    assert agent.ok("read_file", path="reports/weekly.md", start_line=3, end_line=3)["content"] == "## Summary"
    big = "\n".join(f"line {i} " + "x" * 90 for i in range(1, 1001)) + "\n"
    put_file(agent.world, "big.txt", big)
    part = agent.ok("read_file", path="big.txt")
    assert part["truncated"] and part["end_line"] < 1000 and len(part["content"]) <= 20_000
    rest = agent.ok("read_file", path="big.txt", start_line=part["end_line"] + 1)
    assert rest["content"].startswith(f"line {part['end_line'] + 1} ")


def test_read_file_refusals(agent):
    agent.refused("read_file", "no file", path="nope.md")
    agent.refused("read_file", "leaves the workspace", path="../x.md")
    agent.refused("read_file", "absolute", path="/etc/passwd")
    agent.refused("read_file", "not allowed", path="a\\b.md")
    agent.refused("read_file", "must end in", path="script.py")
    agent.refused("read_file", "past the end", path="todo.txt", start_line=5)
    agent.refused("read_file", "before start_line", path="todo.txt", start_line=2, end_line=1)
    agent.refused("read_file", "greater than or equal to 1", path="todo.txt", start_line=0)


def test_file_info(agent):
    info = agent.ok("file_info", path="data/expenses.csv")
    assert info == {"path": "data/expenses.csv", "type": "csv", "size": len(EXPENSES), "modified": "2026-02-27 10:00:00",
                    "lines": 6, "created": "2026-02-27 10:00:00", "directory": "data"}


def test_write_file_creates_and_protects(agent):
    out = agent.ok("write_file", path="./out/summary.md", content="# S\n")
    assert out["path"] == "out/summary.md" and out["created"] is True
    assert agent.world.table("files").require("out/summary.md").created == NOW
    agent.refused("write_file", "already exists", path="out/summary.md", content="x")
    assert agent.ok("write_file", path="out/summary.md", content="y", overwrite=True)["created"] is False
    assert agent.text("out/summary.md") == "y"


def test_write_file_refusals(agent):
    agent.refused("write_file", "leaves the workspace", path="../x.md", content="x")
    agent.refused("write_file", "absolute", path="/tmp/x.md", content="x")
    agent.refused("write_file", "not allowed", path="a\\b.md", content="x")
    agent.refused("write_file", "must end in", path="run.sh", content="x")
    agent.refused("write_file", "must end in", path="data", content="x")
    agent.refused("write_file", "at most", path="huge.txt", content="x" * (MAX_FILE_CHARS + 1))
    agent.refused("write_file", "is a file", path="todo.txt/inner.md", content="x")
    agent.refused("write_file", "line 3 has 3 fields", path="bad.csv", content="a,b\n1,2\n1,2,3\n")
    agent.refused("write_file", "malformed json", path="bad.json", content="{'a': 1}")
    agent.refused("write_file", "nan", path="nan.json", content='{"a": NaN}')
    agent.refused("write_file", "unknown argument", path="x.md", content="x", mode="w")


def test_write_file_is_refused_where_a_directory_is(agent):
    agent.ok("write_file", path="v1.md/readme.md", content="inside")
    agent.refused("write_file", "is a directory", path="v1.md", content="x")


def test_append_file_adds_a_line_break_once(agent):
    agent.ok("append_file", path="todo.txt", content="pay rent")
    assert agent.text("todo.txt") == "buy milk\ncall bob\npay rent"
    agent.ok("append_file", path="todo.txt", content="!")
    assert agent.text("todo.txt").endswith("pay rent\n!")
    agent.refused("append_file", "no file", path="new.txt", content="x")
    agent.refused("append_file", "has 2 fields", path="data/expenses.csv", content="x,y")
    agent.ok("append_file", path="data/expenses.csv", content="2026-02-21,food,5,bob")
    assert agent.text("data/expenses.csv").endswith("20,books,19.99,dana\n2026-02-21,food,5,bob")


def test_edit_file_exact_unique_or_all(agent):
    out = agent.ok("edit_file", path="reports/weekly.md", old_text="Two experiments", new_text="Three experiments")
    assert out["replacements"] == 1 and "Three experiments ran." in agent.text("reports/weekly.md")
    agent.refused("edit_file", "does not occur", path="reports/weekly.md", old_text="Four", new_text="x")
    agent.refused("edit_file", "occurs 3 times", path="todo.txt", old_text="l", new_text="L")
    assert agent.ok("edit_file", path="todo.txt", old_text="l", new_text="L", replace_all=True)["replacements"] == 3
    assert agent.text("todo.txt") == "buy miLk\ncaLL bob\n"
    agent.refused("edit_file", "at least 1 character", path="todo.txt", old_text="", new_text="x")
    agent.refused("edit_file", "malformed json", path="data/config.json", old_text='"version"', new_text="version")


def test_copy_move_delete(agent):
    agent.ok("copy_file", source="todo.txt", destination="backup/todo.txt")
    assert agent.text("backup/todo.txt") == agent.text("todo.txt")
    agent.refused("copy_file", "already exists", source="todo.txt", destination="backup/todo.txt")
    agent.refused("copy_file", "same file", source="todo.txt", destination="./todo.txt")
    agent.refused("copy_file", "no file", source="none.txt", destination="x.txt")
    agent.refused("copy_file", "leaves the workspace", source="todo.txt", destination="../todo.txt")
    out = agent.ok("move_file", source="todo.txt", destination="lists/todo.md")
    files = agent.world.table("files")
    assert "todo.txt" not in files and files.require("lists/todo.md").created == "2026-02-27 10:00:00"
    assert out["source"] == "todo.txt" and out["created"] is True
    agent.refused("move_file", "already exists", source="lists/todo.md", destination="backup/todo.txt")
    agent.refused("move_file", "line 1", source="reports/weekly.md", destination="weekly.json")
    assert agent.ok("delete_file", path="archive/2025/old.md") == {"deleted": "archive/2025/old.md"}
    assert "archive" not in agent.ok("list_files", recursive=False)["directories"]
    agent.refused("delete_file", "no file", path="archive/2025/old.md")


def test_search_files_by_words_in_names_and_content(agent):
    out = agent.ok("search_files", query="travel 120.50")
    assert [f["path"] for f in out["files"]] == ["data/expenses.csv"]
    assert out["files"][0]["lines"][0] == {"line": 2, "text": "2026-02-01,travel,120.50,dana"}
    names = agent.ok("search_files", query="WEEKLY")
    assert names["files"][0]["path"] == "reports/weekly.md" and names["files"][0]["in_name"]
    assert agent.ok("search_files", query="milk", directory="data")["total"] == 0
    agent.refused("search_files", "no words", query="   ")
    agent.refused("search_files", "leaves the workspace", query="x", directory="..")


# --- markdown ----------------------------------------------------------------------------------


def test_markdown_outline_skips_code_fences(agent):
    heads = agent.ok("markdown_outline", path="reports/weekly.md")["headings"]
    assert [(h["level"], h["title"]) for h in heads] == [(1, "Weekly report"), (2, "Summary"), (2, "Results"),
                                                       (3, "Detail"), (2, "Next steps")]
    assert heads[1]["line"] == 3
    agent.refused("markdown_outline", "not a markdown", path="todo.txt")


def test_read_markdown_section_runs_to_the_next_peer_heading(agent):
    sec = agent.ok("read_markdown_section", path="reports/weekly.md", heading="## results")
    assert sec["heading"] == "Results" and sec["level"] == 2 and "### Detail" in sec["content"]
    assert "Next steps" not in sec["content"]
    assert agent.ok("read_markdown_section", path="reports/weekly.md", heading="Next steps")["content"] == "Write the paper."
    agent.refused("read_markdown_section", "no heading", path="reports/weekly.md", heading="Methods")


def test_update_markdown_section_replaces_or_adds(agent):
    agent.ok("update_markdown_section", path="reports/weekly.md", heading="Summary", content="Three ran.\n")
    text = agent.text("reports/weekly.md")
    assert "## Summary\n\nThree ran.\n\n## Results" in text and "Two experiments" not in text
    agent.ok("update_markdown_section", path="reports/weekly.md", heading="Next steps", content="Rest.")
    assert agent.text("reports/weekly.md").endswith("## Next steps\n\nRest.\n")
    agent.refused("update_markdown_section", "no heading", path="reports/weekly.md", heading="Risks", content="x")
    out = agent.ok("update_markdown_section", path="reports/weekly.md", heading="### Risks", content="None.",
                   add_if_missing=True)
    assert out["added"] and agent.text("reports/weekly.md").endswith("Rest.\n\n### Risks\n\nNone.\n")
    agent.ok("write_file", path="two.md", content="## A\nx\n## A\ny\n")
    agent.refused("update_markdown_section", "2 headings", path="two.md", heading="A", content="z", add_if_missing=True)


# --- CSV ---------------------------------------------------------------------------------------


def test_read_csv_rows_and_paging(agent):
    out = agent.ok("read_csv", path="data/expenses.csv", limit=2)
    assert out["columns"] == ["date", "category", "amount", "owner"] and out["total_rows"] == 5
    assert out["rows"][0] == {"date": "2026-02-01", "category": "travel", "amount": "120.50", "owner": "dana"}
    assert "offset=2" in out["note"]
    assert agent.ok("read_csv", path="data/expenses.csv", offset=4)["rows"][0]["amount"] == "19.99"


def test_read_csv_refusals_name_the_line(agent):
    agent.refused("read_csv", "line 3 has 3 fields", path="data/broken.csv")
    agent.refused("read_csv", "not a csv", path="todo.txt")
    agent.refused("read_csv", "no file", path="data/none.csv")


def test_query_csv_filters_sorts_and_selects(agent):
    out = agent.ok("query_csv", path="data/expenses.csv", where=[{"column": "category", "op": "eq", "value": "TRAVEL"}],
                   columns=["amount"], sort_by="amount")
    assert out["rows"] == [{"amount": "80.25"}, {"amount": "120.50"}] and out["matched"] == 2
    big = agent.ok("query_csv", path="data/expenses.csv", where=[{"column": "amount", "op": "ge", "value": 30}],
                   sort_by="amount", descending=True)
    assert [r["amount"] for r in big["rows"]] == ["120.50", "80.25", "30"]
    dated = agent.ok("query_csv", path="data/expenses.csv", where=[{"column": "date", "op": "lt", "value": "2026-02-10"},
                                                                   {"column": "owner", "op": "in", "value": ["bob", "eve"]}])
    assert [r["date"] for r in dated["rows"]] == ["2026-02-03"]
    blank_last = agent.ok("query_csv", path="data/expenses.csv", sort_by="amount")
    assert blank_last["rows"][-1]["category"] == "software"
    assert agent.ok("query_csv", path="data/expenses.csv", where=[{"column": "category", "op": "contains", "value": "oo"}],
                    limit=1)["matched"] == 2


def test_query_csv_refusals(agent):
    agent.refused("query_csv", "no column 'cost'", path="data/expenses.csv", where=[{"column": "cost", "value": 1}])
    agent.refused("query_csv", "needs a list", path="data/expenses.csv",
                  where=[{"column": "owner", "op": "in", "value": "bob"}])
    agent.refused("query_csv", "input should be", path="data/expenses.csv",
                  where=[{"column": "owner", "op": "regex", "value": ".*"}])
    agent.refused("query_csv", "unknown argument", path="data/expenses.csv", where=[{"column": "owner", "value": 1, "x": 2}])
    agent.refused("query_csv", "no sort column", path="data/expenses.csv", sort_by="price")


def test_write_csv_from_lists_and_objects(agent):
    out = agent.ok("write_csv", path="out/t.csv", columns=["name", "n", "ok"],
                   rows=[["a, b", 1, True], {"name": 'say "hi"', "n": 2.5}])
    assert out == {"path": "out/t.csv", "columns": ["name", "n", "ok"], "rows": 2}
    assert agent.text("out/t.csv") == 'name,n,ok\n"a, b",1,true\n"say ""hi""",2.5,\n'
    assert agent.ok("read_csv", path="out/t.csv")["rows"][0]["name"] == "a, b"
    agent.refused("write_csv", "has 2 values", path="out/u.csv", columns=["a", "b", "c"], rows=[[1, 2]])
    agent.refused("write_csv", "not a column", path="out/u.csv", columns=["a"], rows=[{"b": 1}])
    agent.refused("write_csv", "distinct", path="out/u.csv", columns=["a", "a"], rows=[])
    agent.refused("write_csv", "writes .csv", path="out/u.md", columns=["a"], rows=[])
    agent.refused("write_csv", "already exists", path="out/t.csv", columns=["a"], rows=[])


def test_append_update_delete_csv_rows(agent):
    out = agent.ok("append_csv_rows", path="data/expenses.csv", rows=[["2026-02-25", "travel", "10", "cleo"],
                                                                       {"date": "2026-02-26", "amount": 1}])
    assert out["total_rows"] == 7 and agent.text("data/expenses.csv").endswith("cleo\n2026-02-26,,1,\n")
    up = agent.ok("update_csv_rows", path="data/expenses.csv", where=[{"column": "owner", "value": "bob"}],
                  values={"owner": "robert"})
    assert up["updated"] == 2
    assert agent.ok("query_csv", path="data/expenses.csv", where=[{"column": "owner", "value": "robert"}])["matched"] == 2
    none = agent.ok("update_csv_rows", path="data/expenses.csv", where=[{"column": "owner", "value": "zed"}],
                    values={"owner": "x"})
    assert none["updated"] == 0 and "nothing changed" in none["note"]
    gone = agent.ok("delete_csv_rows", path="data/expenses.csv", where=[{"column": "category", "value": "travel"}])
    assert gone == {"path": "data/expenses.csv", "deleted": 3, "total_rows": 4}
    agent.refused("append_csv_rows", "has 1 values", path="data/expenses.csv", rows=[["x"]])
    agent.refused("update_csv_rows", "no column", path="data/expenses.csv", where=[{"column": "owner", "value": "x"}],
                  values={"cost": 1})
    agent.refused("delete_csv_rows", "at least 1 item", path="data/expenses.csv", where=[])
    agent.refused("append_csv_rows", "line 3", path="data/broken.csv", rows=[[1, 2]])


def test_csv_aggregate_exact_sums_groups_and_errors(agent):
    total = agent.ok("csv_aggregate", path="data/expenses.csv", function="sum", column="amount")
    assert total["value"] == 250.74 and total["rows"] == 4  # 120.50 + 30 + 80.25 + 19.99, blank skipped
    by = agent.ok("csv_aggregate", path="data/expenses.csv", function="sum", column="amount", group_by="category")
    assert by["groups"] == [{"group": "books", "value": 49.99, "rows": 2}, {"group": "software", "value": None, "rows": 0},
                            {"group": "travel", "value": 200.75, "rows": 2}]
    assert agent.ok("csv_aggregate", path="data/expenses.csv", function="count")["value"] == 5
    assert agent.ok("csv_aggregate", path="data/expenses.csv", function="max", column="amount",
                    where=[{"column": "owner", "value": "dana"}])["value"] == 120.5
    assert agent.ok("csv_aggregate", path="data/expenses.csv", function="mean", column="amount",
                    where=[{"column": "category", "value": "books"}])["value"] == 24.995
    agent.refused("csv_aggregate", "line 2: category is 'travel', not a number", path="data/expenses.csv",
                  function="sum", column="category")
    agent.refused("csv_aggregate", "needs a column", path="data/expenses.csv", function="mean")
    agent.refused("csv_aggregate", "input should be", path="data/expenses.csv", function="median", column="amount")


# --- JSON --------------------------------------------------------------------------------------


def test_read_json_and_json_get(agent):
    assert agent.ok("read_json", path="data/config.json")["data"] == CONFIG
    got = agent.ok("json_get", path="data/config.json", location="/members/1/name")
    assert got == {"path": "data/config.json", "location": "/members/1/name", "type": "string", "value": "bob"}
    assert agent.ok("json_get", path="data/config.json", location="flags.beta")["value"] is True
    assert agent.ok("json_get", path="data/config.json", location="")["value"] == CONFIG
    agent.refused("json_get", "no key 'owner'", path="data/config.json", location="owner")
    agent.refused("json_get", "past the end", path="data/config.json", location="members.5")
    agent.refused("json_get", "is a list", path="data/config.json", location="members.x")
    agent.refused("json_get", "no 'x'", path="data/config.json", location="version.x")
    agent.refused("read_json", "line 2, column 7", path="data/broken.json")
    agent.refused("read_json", "not a json", path="todo.txt")


def test_json_set_and_delete(agent):
    out = agent.ok("json_set", path="data/config.json", location="/flags/beta", value=False)
    assert out["old_value"] is True
    agent.ok("json_set", path="data/config.json", location="stats.runs.total", value=3)
    agent.ok("json_set", path="data/config.json", location="/members/-", value={"name": "cleo"})
    data = json.loads(agent.text("data/config.json"))
    assert data["flags"]["beta"] is False and data["stats"] == {"runs": {"total": 3}} and data["members"][2]["name"] == "cleo"
    agent.refused("json_set", "create_missing", path="data/config.json", location="a.b", value=1, create_missing=False)
    agent.refused("json_set", "whole document", path="data/config.json", location=" ", value=1)
    agent.refused("json_set", "past the end", path="data/config.json", location="members.9", value=1)
    agent.refused("json_set", "cannot be stored", path="data/config.json", location="x", value=float("nan"))
    removed = agent.ok("json_delete", path="data/config.json", location="members.0")
    assert removed["removed"] == {"name": "dana"}
    agent.refused("json_delete", "no key", path="data/config.json", location="nothing")


def test_validate_json_subset_schema(agent):
    schema = {"type": "object", "required": ["name", "owner"], "properties": {
        "version": {"type": "string"}, "members": {"type": "array", "items": {"type": "object", "required": ["role"]}}}}
    out = agent.ok("validate_json", path="data/config.json", json_schema=schema)
    assert not out["valid"] and out["error_count"] == 4
    assert "at /: missing required key 'owner'" in out["errors"]
    assert "at /version: expected string, found integer" in out["errors"]
    agent.ok("write_file", path="schema.json", content=json.dumps({"type": "object", "required": ["name"]}))
    assert agent.ok("validate_json", path="data/config.json", schema_file="schema.json")["valid"]
    assert agent.ok("validate_json", path="data/config.json", json_schema={"properties": {"version": {"type": "number"}}})["valid"]
    agent.refused("validate_json", "supported keywords", path="data/config.json", json_schema={"minLength": 3})
    agent.refused("validate_json", "exactly one", path="data/config.json")
    agent.refused("validate_json", "type must be one of", path="data/config.json", json_schema={"type": "float"})


# --- mail --------------------------------------------------------------------------------------


def test_list_and_search_mail(agent):
    inbox = agent.ok("list_mail")
    assert [m["id"] for m in inbox["messages"]] == ["M001", "M002"] and inbox["unread"] == 1
    assert [m["id"] for m in agent.ok("list_mail", unread_only=True)["messages"]] == ["M001"]
    assert agent.ok("list_mail", folder="drafts")["messages"][0]["id"] == "M004"
    assert [m["id"] for m in agent.ok("search_mail", query="budget travel")["messages"]] == ["M001"]
    assert [m["id"] for m in agent.ok("search_mail", sender="bob")["messages"]] == ["M002"]
    assert agent.ok("search_mail", query="report", folder="inbox")["total"] == 0
    agent.refused("list_mail", "input should be", folder="spam")


def test_read_mail_marks_read(agent):
    out = agent.ok("read_mail", mail_id="M001")
    assert out["body"] == "Please check the travel budget." and out["read"] is True
    assert agent.world.table("mail").require("M001").read
    agent.refused("read_mail", "does not exist", mail_id="M999")


def test_drafts_lifecycle(agent):
    d = agent.ok("create_draft", to=[ALICE], subject="Figures", body="See attached.", attachments=["data/expenses.csv"])
    assert d["id"] == "M005" and d["folder"] == "drafts" and d["from"] == OWNER
    agent.world.clock.advance(30)
    up = agent.ok("update_draft", draft_id="M005", cc=[BOB], body="See the attached file.")
    assert up["cc"] == [BOB] and up["subject"] == "Figures" and up["time"] == "2026-03-02 09:30:00"
    sent = agent.ok("send_draft", draft_id="M005")
    assert sent["folder"] == "sent" and sent["time"] == "2026-03-02 09:30:00"
    agent.refused("send_draft", "not drafts", draft_id="M005")
    agent.refused("update_draft", "not drafts", draft_id="M001", body="x")
    agent.refused("send_draft", "no recipient", draft_id="M004")
    agent.refused("update_draft", "nothing to change", draft_id="M004")
    agent.ok("update_draft", draft_id="M004", to=[BOB])
    agent.ok("delete_draft", draft_id="M004")
    assert "M004" not in agent.world.table("mail")
    agent.refused("delete_draft", "does not exist", draft_id="M004")


def test_send_mail_validates_addresses_and_attachments(agent):
    out = agent.ok("send_mail", to=[ALICE, ALICE.upper()], subject="Hi", body="Hello", cc=[BOB],
                   attachments=["./data/expenses.csv"])
    assert out["to"] == [ALICE] and out["attachments"] == ["data/expenses.csv"] and out["time"] == NOW
    assert out["id"] == "M005" and agent.world.ids.counts["M"] == 5
    agent.refused("send_mail", "not an e-mail address", to=["alice"], subject="x", body="y")
    agent.refused("send_mail", "not an e-mail address", to=[ALICE], cc=["bob@"], subject="x", body="y")
    agent.refused("send_mail", "not a workspace file", to=[ALICE], subject="x", body="y", attachments=["nope.md"])
    agent.refused("send_mail", "leaves the workspace", to=[ALICE], subject="x", body="y", attachments=["../x.md"])
    agent.refused("send_mail", "no subject", to=[ALICE], subject="  ", body="y")
    agent.refused("send_mail", "at least 1 item", to=[], subject="x", body="y")
    agent.world.extra.pop("owner_email")
    agent.refused("send_mail", "no owner address", to=[ALICE], subject="x", body="y")


def test_send_draft_refuses_an_attachment_deleted_since(agent):
    agent.ok("create_draft", to=[ALICE], subject="x", body="y", attachments=["todo.txt"])
    agent.ok("delete_file", path="todo.txt")
    agent.refused("send_draft", "no longer exists", draft_id="M005")


def test_reply_and_forward(agent):
    r = agent.ok("reply_mail", mail_id="M001", body="Checked.", reply_all=True)
    assert r["to"] == [ALICE] and r["cc"] == [BOB] and r["subject"] == "Re: Budget figures" and r["in_reply_to"] == "M001"
    again = agent.ok("reply_mail", mail_id=r["id"], body="More.", as_draft=True)
    assert again["subject"] == "Re: Budget figures" and again["folder"] == "drafts" and again["to"] == [ALICE]
    agent.refused("reply_mail", "is a draft", mail_id=again["id"], body="x")
    f = agent.ok("forward_mail", mail_id="M001", to=[BOB], body="FYI")
    assert f["subject"] == "Fwd: Budget figures" and f["attachments"] == ["data/expenses.csv"]
    assert f["body"].startswith("FYI\n\n---------- Forwarded message ----------\nFrom: " + ALICE)
    agent.ok("delete_file", path="data/expenses.csv")
    g = agent.ok("forward_mail", mail_id="M001", to=[BOB])
    assert g["attachments"] == [] and g["dropped_attachments"] == ["data/expenses.csv"]
    agent.refused("forward_mail", "does not exist", mail_id="M999", to=[BOB])


def test_label_mail(agent):
    out = agent.ok("label_mail", mail_id="M002", add=["follow-up", "team"], mark_unread=True)
    assert out["labels"] == ["follow-up", "team"] and out["read"] is False
    assert [m["id"] for m in agent.ok("list_mail", label="team")["messages"]] == ["M002"]
    assert agent.ok("label_mail", mail_id="M002", remove=["team"])["labels"] == ["follow-up"]
    agent.refused("label_mail", "no label 'x'", mail_id="M002", remove=["x"])
    agent.refused("label_mail", "nothing to change", mail_id="M002")


# --- calendar ----------------------------------------------------------------------------------


def test_time_and_events(agent):
    assert agent.ok("get_current_time") == {"now": NOW, "date": "2026-03-02", "weekday": "Monday"}
    week = agent.ok("list_events")
    assert [e["id"] for e in week["events"]] == ["EV001", "EV002"] and week["end_date"] == "2026-03-08"
    assert [e["id"] for e in agent.ok("list_events", start_date="2026-03-03", end_date="2026-03-03")["events"]] == ["EV002"]
    assert agent.ok("get_event", event_id="EV002")["location"] == "Room 2"
    agent.refused("list_events", "before start_date", start_date="2026-03-05", end_date="2026-03-01")
    agent.refused("list_events", "yyyy-mm-dd", start_date="March 5")
    agent.refused("get_event", "does not exist", event_id="EV404")


def test_create_update_cancel_event(agent):
    ev = agent.ok("create_event", title="Review", start="2026-03-02 10:30:00", end="2026-03-02 11:30:00",
                  attendees=[ALICE])
    assert ev["id"] == "EV003" and ev["conflicts"] == ["EV001"] and ev["status"] == "confirmed"
    agent.refused("create_event", "after start", title="x", start="2026-03-02 12:00:00", end="2026-03-02 12:00:00")
    agent.refused("create_event", "before the current time", title="x", start="2026-03-01 12:00:00", end="2026-03-01 13:00:00")
    agent.refused("create_event", "yyyy-mm-dd hh:mm:ss", title="x", start="tomorrow", end="2026-03-01 13:00:00")
    agent.refused("create_event", "not an e-mail", title="x", start="2026-03-04 12:00:00", end="2026-03-04 13:00:00",
                  attendees=["bob"])
    moved = agent.ok("update_event", event_id="EV003", start="2026-03-02 12:00:00", end="2026-03-02 12:30:00")
    assert moved["conflicts"] == [] and moved["attendees"] == [ALICE]
    agent.refused("update_event", "before it starts", event_id="EV003", end="2026-03-02 11:00:00")
    agent.refused("update_event", "before the current time", event_id="EV003", start="2026-03-01 08:00:00")
    agent.refused("update_event", "nothing to change", event_id="EV003")
    assert agent.ok("cancel_event", event_id="EV003")["status"] == "cancelled"
    agent.refused("cancel_event", "already cancelled", event_id="EV003")
    agent.refused("update_event", "is cancelled", event_id="EV003", title="y")
    assert "EV003" not in [e["id"] for e in agent.ok("list_events")["events"]]
    assert "EV003" in [e["id"] for e in agent.ok("list_events", include_cancelled=True)["events"]]


def test_find_free_slots_around_events_and_now(agent):
    out = agent.ok("find_free_slots", date="2026-03-02", duration_minutes=90)
    assert out["slots"] == [{"start": "2026-03-02 11:00:00", "end": "2026-03-02 17:00:00", "minutes": 360}]
    short = agent.ok("find_free_slots", date="2026-03-02", duration_minutes=30, day_start="08:00")
    assert short["slots"][0] == {"start": NOW, "end": "2026-03-02 10:00:00", "minutes": 60}
    tue = agent.ok("find_free_slots", date="2026-03-03", duration_minutes=120, day_start="09:00", day_end="18:00")
    assert [s["start"][11:16] for s in tue["slots"]] == ["09:00", "15:30"]
    agent.ok("cancel_event", event_id="EV002")
    assert len(agent.ok("find_free_slots", date="2026-03-03", duration_minutes=120)["slots"]) == 1
    assert agent.ok("find_free_slots", date="2026-03-01", duration_minutes=30)["slots"] == []
    agent.refused("find_free_slots", "after day_start", date="2026-03-03", duration_minutes=30, day_start="17:00",
                  day_end="09:00")
    agent.refused("find_free_slots", "hh:mm", date="2026-03-03", duration_minutes=30, day_start="9am")


# --- notes, contacts, to-dos -------------------------------------------------------------------


def test_notes(agent):
    n = agent.ok("create_note", title="Reading list", body="paper A", tags=["Research", "reading", "research"])
    assert n["id"] == "N002" and n["tags"] == ["research", "reading"] and n["created"] == NOW
    assert [x["id"] for x in agent.ok("list_notes", tag="research")["notes"]] == ["N002", "N001"]
    assert [x["id"] for x in agent.ok("search_notes", query="dropout")["notes"]] == ["N001"]
    assert agent.ok("read_note", note_id="N001")["body"] == "try dropout"
    agent.ok("append_to_note", note_id="N002", text="paper B")
    assert agent.ok("read_note", note_id="N002")["body"] == "paper A\npaper B"
    assert agent.ok("update_note", note_id="N002", tags=[])["tags"] == []
    agent.refused("update_note", "nothing to change", note_id="N002")
    agent.refused("read_note", "does not exist", note_id="N009")
    agent.refused("create_note", "at least 1 character", title="", body="x")
    agent.ok("delete_note", note_id="N002")
    agent.refused("delete_note", "does not exist", note_id="N002")


def test_contacts(agent):
    assert [c["id"] for c in agent.ok("search_contacts", query="lab.example.org")["contacts"]] == ["C002", "C003"]
    assert agent.ok("get_contact", contact_id="C001")["organization"] == "Partner Co"
    c = agent.ok("add_contact", name="Eve Quinn", email="eve@vendor.example.net", groups=["Vendors"])
    assert c["id"] == "C004" and c["groups"] == ["vendors"]
    agent.refused("add_contact", "already belongs to contact C002", name="B", email=BOB.upper())
    agent.refused("add_contact", "not an e-mail", name="B", email="b at example")
    assert agent.ok("update_contact", contact_id="C002", role="lecturer", groups=["team", "faculty"])["role"] == "lecturer"
    agent.refused("update_contact", "already belongs", contact_id="C002", email=ALICE)
    agent.ok("update_contact", contact_id="C002", email=BOB)  # its own address is no clash
    team = agent.ok("list_contact_group", group="TEAM")
    assert [x["name"] for x in team["contacts"]] == ["Bob Tanaka", "Cleo Varga"]
    assert team["all_groups"] == ["clients", "faculty", "team", "vendors"]
    agent.refused("list_contact_group", "the groups are", group="board")


def test_todos(agent):
    listed = agent.ok("list_todos")
    assert [t["id"] for t in listed["todos"]] == ["T001"] and listed["todos"][0]["overdue"] is True
    t = agent.ok("add_todo", title="Draft abstract", due="2026-3-5", priority="high")
    assert t["id"] == "T003" and t["due"] == "2026-03-05" and t["status"] == "open"
    agent.ok("add_todo", title="Someday")
    assert [x["id"] for x in agent.ok("list_todos")["todos"]] == ["T001", "T003", "T004"]
    assert [x["id"] for x in agent.ok("list_todos", due_before="2026-03-03")["todos"]] == ["T001"]
    assert [x["id"] for x in agent.ok("list_todos", status="all")["todos"]] == ["T001", "T003", "T002", "T004"]
    agent.ok("complete_todo", todo_id="T001")
    agent.refused("complete_todo", "status 'done'", todo_id="T001")
    assert agent.ok("update_todo", todo_id="T001", status="open", due="")["due"] == ""
    agent.refused("add_todo", "yyyy-mm-dd", title="x", due="friday")
    agent.refused("update_todo", "nothing to change", todo_id="T001")
    agent.ok("delete_todo", todo_id="T004")
    agent.refused("delete_todo", "does not exist", todo_id="T004")


def test_workspace_summary(agent):
    s = agent.ok("workspace_summary")
    assert s["owner"] == "Dana Okafor" and s["persona"] == "researcher" and s["files"] == 7
    assert s["unread_mail"] == 1 and s["drafts"] == 1 and s["upcoming_events"] == 2
    assert s["open_todos"] == 1 and s["overdue_todos"] == 1 and s["notes"] == 1 and s["contacts"] == 3
    assert {"directory": "data", "files": 4} in s["directories"]


def test_seeded_ids_skip_rows_already_there(agent):
    agent.world.table("notes").put(Note(id="N002", title="seeded", body="", created=NOW, modified=NOW))
    assert agent.ok("create_note", title="t", body="b")["id"] == "N003"


def test_the_whole_workspace_has_a_size_limit(agent):
    from servicegym.world_state.workspace import MAX_WORKSPACE_CHARS

    chunk = "y" * MAX_FILE_CHARS
    used = agent.world.workspace_chars()
    n = (MAX_WORKSPACE_CHARS - used) // MAX_FILE_CHARS
    for i in range(n):
        put_file(agent.world, f"fill/{i}.txt", chunk)
    agent.refused("write_file", "the limit is", path="fill/last.txt", content=chunk)
    agent.refused("copy_file", "the limit is", source="fill/0.txt", destination="fill/copy.txt")
    agent.ok("write_file", path="fill/0.txt", content="small", overwrite=True)  # replacing frees its old size


def test_a_session_composes_the_tools_into_a_report_sent_by_mail(agent):
    """Read the request, total the expenses by category, write the report, send it with the table
    attached to the requester and the team, plan the review and leave a to-do: the artifacts a
    workspace checklist looks at."""
    req = agent.ok("read_mail", mail_id=agent.ok("search_mail", query="budget")["messages"][0]["id"])
    by = agent.ok("csv_aggregate", path="data/expenses.csv", function="sum", column="amount", group_by="category")
    lines = [f"- {g['group']}: {g['value']}" for g in by["groups"] if g["value"] is not None]
    agent.ok("write_file", path="reports/budget.md", content="# Budget\n\n## Totals\n\n" + "\n".join(lines) + "\n")
    agent.ok("write_csv", path="reports/budget.csv", columns=["category", "total"],
             rows=[[g["group"], g["value"]] for g in by["groups"] if g["value"] is not None])
    team = [c["email"] for c in agent.ok("list_contact_group", group="team")["contacts"]]
    sent = agent.ok("reply_mail", mail_id=req["id"], body="Totals attached.", as_draft=True)
    agent.ok("update_draft", draft_id=sent["id"], cc=team, attachments=["reports/budget.md", "reports/budget.csv"])
    out = agent.ok("send_draft", draft_id=sent["id"])
    slot = agent.ok("find_free_slots", date="2026-03-03", duration_minutes=60)["slots"][0]
    agent.ok("create_event", title="Budget review", start=slot["start"], end="2026-03-03 10:00:00", attendees=[ALICE])
    agent.ok("add_todo", title="Follow up on budget", due="2026-03-06")

    w = agent.world
    assert agent.ok("read_markdown_section", path="reports/budget.md", heading="Totals")["content"] == \
        "- books: 49.99\n- travel: 200.75"
    assert agent.ok("read_csv", path="reports/budget.csv")["rows"][1] == {"category": "travel", "total": "200.75"}
    mail = w.table("mail").require(out["id"])
    assert (mail.folder, mail.to, mail.cc, mail.subject) == ("sent", [ALICE], [BOB, "cleo@lab.example.org"],
                                                          "Re: Budget figures")
    assert mail.attachments == ["reports/budget.md", "reports/budget.csv"] and mail.in_reply_to == "M001"
    assert [e.title for e in w.table("calendar") if e.start == "2026-03-03 09:00:00"] == ["Budget review"]
    assert agent.ok("workspace_summary")["open_todos"] == 2
    assert all(e.outcome == "executed" for e in agent.history.tool_calls())
