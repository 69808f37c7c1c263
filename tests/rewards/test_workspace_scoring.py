"""Workspace scoring: each rule check on a hand-built workspace (passing and failing), and the
PROC/COMP arithmetic (pooling precursors' intents, group-size weighting) on hand-computed values."""

from __future__ import annotations

from datetime import datetime

import pytest

from servicegym.rewards.rubric import EpisodeView, RubricItem, evaluate
from servicegym.rewards.workspace import (
    SessionResult,
    aggregate,
    comp,
    groups_of,
    pool,
    proc,
    session_components,
    session_result,
)
from servicegym.world_state.workspace import File, Mail, Todo, WorkspaceWorld

NOW = "2026-03-02 09:00:00"


def world() -> WorkspaceWorld:
    w = WorkspaceWorld(datetime(2026, 3, 2, 9), extra={"persona": "researcher"})
    files = {
        "r.md": "# T\n\n## Summary\nx\n\n## Results\n- R-101: 87.3%\nBest: R-101\n",
        "t.csv": "id,name,score\nR-2,b,0.9\nR-1,a,0.5\n",
        "ragged.csv": "a,b\n1\n",   # written around put_file, which would refuse it
        "d.json": '{"as_of": "2026-03-02", "items": [{"id": "R-1", "value": 0.5}], "count": 1}',
    }
    for p, c in files.items():
        w.table("files").put(File(path=p, content=c, created=NOW, modified=NOW))
    w.table("mail").put(Mail(id="M1", folder="sent", sender="me@x.org", to=["a@x.org"], cc=["b@x.org", "c@x.org"],
                             subject="Weekly summary: week 1", body="The best run was R-101.", time=NOW, attachments=["r.md"]))
    w.table("mail").put(Mail(id="M2", folder="inbox", sender="a@x.org", to=["me@x.org"], subject="Weekly summary: week 1",
                             body="", time=NOW))
    w.table("todos").put(Todo(id="T1", title="[Thesis] Clean scripts", priority="high", due="2026-03-06"))
    return w


def holds(kind: str, **params) -> bool:
    w = world()
    view = EpisodeView(world=w, initial=w, history=None, agent_messages=["I saved r.md; the best run is R-101."])
    return evaluate([RubricItem(name="x", kind=kind, params=params)], view)["x"]


@pytest.mark.parametrize(("kind", "good", "bad"), [
    ("ws.file_exists", {"path": "r.md"}, {"path": "nope.md"}),
    ("ws.file_contains", {"path": "r.md", "texts": ["87.3%", "Best: R-101"]}, {"path": "r.md", "texts": ["87.3%", "Best: R-102"]}),
    ("ws.file_lacks", {"path": "r.md", "texts": ["R-102"]}, {"path": "r.md", "texts": ["R-101"]}),
    ("ws.md_headings", {"path": "r.md", "headings": ["Summary", "Results"]}, {"path": "r.md", "headings": ["Results", "Summary"]}),
    ("ws.csv_header", {"path": "t.csv", "columns": ["id", "name", "score"]}, {"path": "t.csv", "columns": ["id", "name"]}),
    ("ws.csv_keys", {"path": "t.csv", "column": "id", "values": ["R-2", "R-1"], "ordered": True},
     {"path": "t.csv", "column": "id", "values": ["R-1", "R-2"], "ordered": True}),
    ("ws.csv_keys", {"path": "t.csv", "column": "id", "values": ["R-1", "R-2"]}, {"path": "t.csv", "column": "id", "values": ["R-1"]}),
    ("ws.csv_cells", {"path": "t.csv", "key": "id", "cells": {"R-1": {"score": "0.5"}}},
     {"path": "t.csv", "key": "id", "cells": {"R-1": {"score": "0.50"}}}),
    ("ws.json_schema", {"path": "d.json", "schema": {"type": "object", "required": ["as_of", "items"]}},
     {"path": "d.json", "schema": {"type": "object", "required": ["generated"]}}),
    ("ws.json_values", {"path": "d.json", "values": {"count": 1, "items.0.id": "R-1"}}, {"path": "d.json", "values": {"count": 2}}),
    ("ws.record", {"table": "mail", "where": {"folder": "sent", "~subject": "week 1"}, "expect_set": {"cc": ["c@x.org", "B@x.org"]}},
     {"table": "mail", "where": {"folder": "sent", "~subject": "week 1"}, "expect_set": {"cc": ["b@x.org"]}}),
    ("ws.record", {"table": "mail", "where": {"folder": "sent"}, "expect_set": {"attachments": ["r.md"]},
                   "expect_contains": {"body": ["best run was R-101"]}},
     {"table": "mail", "where": {"folder": "inbox"}, "expect_set": {"attachments": ["r.md"]}}),
    ("ws.record", {"table": "todos", "where": {"~title": "clean scripts"}, "expect": {"priority": "high", "due": "2026-03-06"}},
     {"table": "todos", "where": {"~title": "clean scripts"}, "expect": {"priority": "normal"}}),
    ("ws.reply_contains", {"texts": ["best run is R-101"]}, {"texts": ["R-102"]}),
])
def test_each_check_passes_and_fails(kind, good, bad):
    assert holds(kind, **good)
    assert not holds(kind, **bad)


def test_checks_on_missing_or_malformed_files_fail():
    assert not holds("ws.file_lacks", path="missing.md", texts=["x"])
    assert not holds("ws.csv_header", path="ragged.csv", columns=["a", "b"])  # not a rectangular CSV
    assert not holds("ws.json_schema", path="t.csv", schema={})          # not JSON


def test_proc_and_comp_arithmetic():
    assert proc(["completed", "inferred", "provided", "pending"]) == 0.5
    assert proc([]) == 1.0
    items = [RubricItem(name="a", kind="k", weight=2.0), RubricItem(name="b", kind="k", weight=1.0),
             RubricItem(name="log", kind="k", weight=0.0)]
    assert comp(items, {"a": True, "b": False, "log": False}) == pytest.approx(2 / 3)


def res(i: int, group: str, pre: list[int], states: list[str], c: float) -> SessionResult:
    return SessionResult(i, group, pre, {f"s{i}.{j}": s for j, s in enumerate(states)}, {}, c)


def test_pooling_and_group_size_weighting_by_hand():
    results = {
        1: res(1, "g", [], ["completed", "provided"], 1.0),              # own 1/2
        2: res(2, "", [], ["provided", "provided", "inferred"], 0.5),    # independent: 1/3
        3: res(3, "g", [1], ["completed", "completed"], 0.75),           # pooled with s1: 3/4
        4: res(4, "g", [1, 3], ["pending"], 0.25),                       # pooled with s1, s3: 3/5
    }
    agg = aggregate(results)
    assert results[3].proc == pytest.approx(3 / 4) and results[4].proc == pytest.approx(3 / 5)
    assert groups_of(results) == [[1, 3, 4], [2]]
    # group g (size 3): pooled PROC of its last session 3/5, mean COMP (1 + .75 + .25)/3; group {2} (size 1)
    assert agg["proc"] == pytest.approx((3 * 3 / 5 + 1 * 1 / 3) / 4)
    assert agg["comp"] == pytest.approx((3 * (2.0 / 3) + 1 * 0.5) / 4)


def test_missing_precursors_are_left_out_of_the_pool():
    results = {3: res(3, "g", [1], ["completed", "provided"], 1.0)}
    pool(results)
    assert results[3].proc == 0.5


def test_session_success_needs_full_comp_and_no_provided_intent():
    items = [RubricItem(name="f", kind="ws.file_exists", params={"path": "r.md"})]
    w = world()
    view = EpisodeView(world=w, initial=w, history=None, agent_messages=[])
    ok = session_result(2, "", [], {"s02.a": "completed", "s02.b": "inferred"}, items, view)
    assert ok.success and ok.comp == 1.0
    assert not session_result(2, "", [], {"s02.a": "provided"}, items, view).success
    unplayed = session_result(2, "", [], {"s02.a": "pending"}, items, None)
    assert not unplayed.success and unplayed.comp == 0.0
    comps = session_components(ok)
    assert comps["rubric/s02"] == 1.0 and comps["s02/check/f"] == 1.0 and comps["s02/intent/a"] == 1.0
