"""Hardening (issue 30): task files. An integer literal too long for Python to convert skips its
task with a clear reason naming the file and the task (the others load); a bad first task of a
VitaBench file is skipped like a bad task anywhere else, not the whole file refused."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.tasks import TaskFileError, TaskSkippedWarning, load_task_file, save_task_file
from tests.envs.test_vitabench import mini_task

DELIVERY = "servicegym/Delivery-v0"
LIMIT = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
BIG = "9" * (LIMIT + 700)


def _with_big(path: Path, data, marker: str = "@@BIG@@") -> Path:
    path.write_text(json.dumps(data).replace(json.dumps(marker), BIG), encoding="utf-8")
    return path


def _loaded(path: Path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_task_file(path, "delivery", **kw)
    return loaded, [str(w.message) for w in caught if issubclass(w.category, TaskSkippedWarning)]


def test_an_oversized_integer_skips_its_project_task_and_names_file_and_task(tmp_path):
    env = gym.make(DELIVERY, split="test")
    ids = env.unwrapped.task_ids("test")[:3]
    plain = tmp_path / "plain.json"
    save_task_file([env.unwrapped.source.get(i) for i in ids], plain)
    data = json.loads(plain.read_text())
    data["tasks"][1]["world"]["stores"][0]["score"] = "@@BIG@@"
    path = _with_big(tmp_path / "big.json", data)
    loaded, messages = _loaded(path)
    assert [t.task_id for t in loaded] == [ids[0], ids[2]] and loaded.indexes == [0, 2]
    (skip,) = loaded.skipped
    assert skip["task_id"] == ids[1] and skip["index"] == 1 and skip["field"] == "world.stores.0.score"
    assert f"{len(BIG)} digits" in skip["reason"] and str(LIMIT) in skip["reason"]
    (message,) = messages
    assert str(path) in message and f"task {ids[1]} (index 1)" in message
    with pytest.raises(TaskFileError, match=rf"big\.json: task {ids[1]} \(index 1\): field world\.stores\.0\.score"):
        load_task_file(path, "delivery", strict=True)
    # through gym.make too, and a file of nothing else is a TaskFileError listing it
    assert gym.make(DELIVERY, tasks=str(path)).unwrapped.task_ids() == [ids[0], ids[2]]
    data["tasks"] = [data["tasks"][1]]
    with pytest.raises(TaskFileError, match=r"no task could be loaded.*digits"):
        load_task_file(_with_big(tmp_path / "only.json", data), "delivery")


def test_an_oversized_integer_skips_its_vitabench_task(tmp_path):
    tasks = [mini_task("M0000001"), mini_task("M0000002"), mini_task("M0000003")]
    tasks[0]["environment"]["stores"]["S1"]["products"][0]["price"] = "@@BIG@@"  # the first task, too
    path = _with_big(tmp_path / "vb.json", tasks)
    loaded, messages = _loaded(path)
    assert [t.task_id for t in loaded] == ["M0000002", "M0000003"] and loaded.indexes == [1, 2]
    assert loaded.skipped == [{"task_id": "M0000001", "index": 0, "field": "environment.stores.S1.products.0.price",
                               "reason": loaded.skipped[0]["reason"]}]
    assert "digits" in loaded.skipped[0]["reason"] and str(path) in messages[0]
    with pytest.raises(TaskFileError, match=r"task M0000001 \(index 0\): field environment\.stores"):
        load_task_file(path, "delivery", strict=True)


@pytest.mark.parametrize("breakage", ["no evaluation_criteria", "no user_scenario", "not an object", "empty object"])
def test_a_bad_first_vitabench_task_is_skipped_like_any_other(tmp_path, breakage):
    def bad() -> object:
        task = mini_task("M0000001")
        if breakage == "no evaluation_criteria":
            task.pop("evaluation_criteria")
        elif breakage == "no user_scenario":
            task.pop("user_scenario")
        elif breakage == "not an object":
            return ["M0000001"]
        else:
            return {}
        return task

    first, _ = _loaded(_write(tmp_path / "first.json", [bad(), mini_task("M0000002"), mini_task("M0000003")]))
    later, _ = _loaded(_write(tmp_path / "later.json", [mini_task("M0000002"), bad(), mini_task("M0000003")]))
    assert [t.task_id for t in first] == [t.task_id for t in later] == ["M0000002", "M0000003"]
    assert [s["index"] for s in first.skipped] == [0] and [s["index"] for s in later.skipped] == [1]
    assert first.skipped[0]["field"] == later.skipped[0]["field"]
    assert first.skipped[0]["reason"] == later.skipped[0]["reason"]


def test_a_list_with_no_vitabench_task_is_still_neither_format(tmp_path):
    with pytest.raises(TaskFileError, match="neither a VitaBench task list nor a servicegym task file"):
        load_task_file(_write(tmp_path / "x.json", [{"a": 1}, 2]), "delivery")


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
