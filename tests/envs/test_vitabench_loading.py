"""Loading VitaBench files never loses the file for one task: a task that cannot be converted
faithfully is skipped (warned once, listed on the env and its source, ``strict_tasks=True`` fails
instead); the booking/reservation field mix-up loads by the shop and the time field; a product
listed by a store is sold by that store whatever store_id it names (the gold order keeps its store).
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.envs.tasks import LoadedTasks, TaskFileError, TaskSkippedWarning, load_task_file, save_task_file
from tests.envs.test_instore import INSTORE_FILE, mini_instore_task
from tests.envs.test_vitabench import ENV_ID, mini_task

INSTORE = "servicegym/InStore-v0"


def _write(tmp_path: Path, tasks: Any, name: str = "tasks.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


def _oracle(env: gym.Env, task_id: str) -> bool:
    return run_episode(env, OraclePolicy(), seed=0, options={"task_id": task_id})["success"]


def _skip_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, TaskSkippedWarning)]


# ----- one bad task among good ones --------------------------------------------------------------
def _three_with_bad_middle() -> list[dict[str, Any]]:
    tasks = [mini_task("M0000001"), mini_task("M0000002"), mini_task("M0000003")]
    tasks[1]["environment"]["stores"]["S1"]["products"][0]["price"] = "cheap"
    return tasks


def test_one_malformed_task_is_skipped_and_listed(tmp_path: Path) -> None:
    path = _write(tmp_path, _three_with_bad_middle())
    with pytest.warns(TaskSkippedWarning) as caught:
        env = gym.make(ENV_ID, tasks=str(path))
    (message,) = _skip_warnings(caught)
    assert str(path) in message and "task M0000002 (index 1)" in message
    assert "field environment.stores.S1.products.0.price" in message and "valid number" in message
    u = env.unwrapped
    assert u.task_ids() == ["M0000001", "M0000003"]
    assert u.skipped_tasks == [{"task_id": "M0000002", "index": 1, "field": "environment.stores.S1.products.0.price",
                                "reason": "Input should be a valid number, unable to parse string as a number"}]
    assert u.source.skipped == u.skipped_tasks
    assert all(_oracle(env, t) for t in u.task_ids()), "the good tasks are whole"


def test_load_task_file_reports_skips_and_strict_raises(tmp_path: Path) -> None:
    path = _write(tmp_path, _three_with_bad_middle())
    with pytest.warns(TaskSkippedWarning):
        loaded = load_task_file(path, "delivery")
    assert isinstance(loaded, LoadedTasks) and [t.task_id for t in loaded] == ["M0000001", "M0000003"]
    assert loaded.indexes == [0, 2] and [s["task_id"] for s in loaded.skipped] == ["M0000002"]
    with pytest.raises(TaskFileError, match=r"task M0000002 \(index 1\): field environment\.stores\.S1") as err:
        load_task_file(path, "delivery", strict=True)
    assert err.value.task is not None and err.value.task["field"] == "environment.stores.S1.products.0.price"
    with pytest.raises(TaskFileError, match=r"task M0000002 \(index 1\)"):
        gym.make(ENV_ID, tasks=str(path), strict_tasks=True)


def test_all_bad_file_raises_with_every_reason(tmp_path: Path) -> None:
    tasks = _three_with_bad_middle()
    tasks[0].pop("instructions")
    tasks[2]["environment"]["time"] = "noon"
    path = _write(tmp_path, tasks)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TaskFileError) as err:
            gym.make(ENV_ID, tasks=str(path))
    text = str(err.value)
    assert text.startswith(f"{path}: no task could be loaded (3 skipped")
    assert "task M0000001 (index 0): field instructions" in text and "task M0000002 (index 1): field environment.stores" in text
    assert "task M0000003 (index 2): field environment.time" in text
    assert [s["task_id"] for s in err.value.skipped] == ["M0000001", "M0000002", "M0000003"]
    assert _skip_warnings(caught) == [], "the error lists them; no warning repeats them"


def test_project_format_file_skips_a_bad_task(tmp_path: Path) -> None:
    with pytest.warns(TaskSkippedWarning):
        tasks = load_task_file(_write(tmp_path, _three_with_bad_middle()), "delivery")
    path = tmp_path / "project.json"
    save_task_file(tasks, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tasks"][0]["rubric"] = "none"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.warns(TaskSkippedWarning, match=r"task M0000001 \(index 0\): field rubric"):
        env = gym.make(ENV_ID, tasks=str(path))
    assert env.unwrapped.task_ids() == ["M0000003"] and env.unwrapped.skipped_tasks[0]["field"] == "rubric"
    with pytest.raises(TaskFileError, match=r"task M0000001 \(index 0\): field rubric"):
        gym.make(ENV_ID, tasks=str(path), strict_tasks=True)


def test_project_format_task_whose_world_does_not_build_is_skipped(tmp_path: Path) -> None:
    tasks = load_task_file(_write(tmp_path, [mini_task("M0000001"), mini_task("M0000002")]), "delivery")
    path = tmp_path / "project.json"
    save_task_file(tasks, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tasks"][1]["world"]["time"] = "noon"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.warns(TaskSkippedWarning, match=r"task M0000002 \(index 1\): field world.time: 'noon'"):
        env = gym.make(ENV_ID, tasks=str(path))
    assert env.unwrapped.task_ids() == ["M0000001"] and env.unwrapped.skipped_tasks[0]["field"] == "world.time"
    with pytest.raises(TaskFileError, match=r"task M0000002 \(index 1\): field world.time"):
        gym.make(ENV_ID, tasks=str(path), strict_tasks=True)


def test_task_no_golden_route_solves_is_skipped_unless_strict(tmp_path: Path) -> None:
    tasks = [mini_task("M0000001"), mini_task("M0000002")]
    tasks[1]["environment"]["stores"]["S1"]["products"][0]["quantity"] = 0  # the gold noodles are sold out
    path = _write(tmp_path, tasks)
    with pytest.warns(TaskSkippedWarning, match=r"task M0000002 \(index 1\): field evaluation_criteria\.expected_states"):
        env = gym.make(ENV_ID, tasks=str(path))
    (skip,) = env.unwrapped.skipped_tasks
    assert skip["reason"].startswith("no golden route reaches an expected state") and "left" in skip["reason"]
    strict = gym.make(ENV_ID, tasks=str(path), strict_tasks=True).unwrapped
    assert strict.task_ids() == ["M0000001", "M0000002"] and strict.skipped_tasks == []
    assert any(n.startswith("no golden route reaches") for n in strict.source.get("M0000002").notes)


# ----- the booking/reservation field mix-up ------------------------------------------------------
def _required(task: dict[str, Any], record_id: str) -> list[dict[str, Any]]:
    return [e for st in task["evaluation_criteria"]["expected_states"] for e in st["required_orders"]
            if record_id in (e.get("reservation_id"), e.get("book_id"))]


def test_book_id_with_reservation_time_loads_by_shop_and_time(tmp_path: Path) -> None:
    """A required record with a ``book_id`` but a ``reservation_time`` (the gold of a held-back
    VitaBench task): at a shop taking reservations it is a reservation, at a booking-only shop a
    booking; either way the task loads, says so in its notes and its golden route succeeds."""
    raw = mini_instore_task("M1")
    for e in _required(raw, "M1T002") + _required(raw, "M1T004"):
        e["book_id"] = e.pop("reservation_id")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TaskSkippedWarning)
        env = gym.make(INSTORE, tasks=str(_write(tmp_path, [raw])))
    task = env.unwrapped.source.get("M1")
    (state,) = task.rubric[0].params["states"]
    visits = {v["record_id"]: v for v in state["visits"]}
    assert visits["M1T002"]["table"] == "reservations", "the swim club takes reservations"
    assert visits["M1T004"]["table"] == "books", "the bistro takes only bookings"
    notes = " | ".join(task.notes)
    assert "reservation M1T002: has a book_id but a reservation_time; read as a reservation" in notes
    assert "takes seat bookings, not reservations; read as a booking" in notes
    assert _oracle(env, "M1")


def test_initial_booking_with_reservation_time_loads(tmp_path: Path) -> None:
    raw = mini_instore_task("M1")
    raw["environment"]["books"] = {"M1B9": {"book_id": "M1B9", "shop_id": "S1_I00002", "reservation_time":
                                            "2025-06-25 12:00:00", "customer_id": "U500001", "customer_count": 2,
                                            "book_price": 20, "status": "paid"}}
    env = gym.make(INSTORE, tasks=str(_write(tmp_path, [raw])))
    task = env.unwrapped.source.get("M1")
    assert "initial booking M1B9: its time is given as reservation_time; read as its book_time" in task.notes
    assert env.unwrapped.skipped_tasks == [] and _oracle(env, "M1")


@pytest.fixture(scope="module")
def real_instore() -> list[dict[str, Any]]:
    if not INSTORE_FILE.is_file():
        pytest.skip(f"VitaBench data not found at {INSTORE_FILE} (set SERVICEGYM_VITABENCH_DIR to the vitabench data dir)")
    return json.loads(INSTORE_FILE.read_text(encoding="utf-8"))


def test_real_file_with_the_mixup_loads_whole(tmp_path: Path, real_instore: list[dict[str, Any]]) -> None:
    """The real in-store file with the mix-up put into a task (a required reservation at a shop that
    takes reservations, its id called ``book_id``): every task loads as before, that one noted."""
    tasks = copy.deepcopy(real_instore)
    target = None
    for t in tasks:
        shops = t["environment"]["shops"]
        for st in t["evaluation_criteria"]["expected_states"]:
            for e in st["required_orders"]:
                shop = shops.get(str(e.get("shop_id", "")).strip(), {})
                if "reservation_id" in e and "reservation_time" in e and shop.get("enable_reservation"):
                    e["book_id"] = e.pop("reservation_id")
                    target = t["id"]
        if target:
            break
    assert target is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TaskSkippedWarning)
        before = gym.make(INSTORE, tasks=str(INSTORE_FILE)).unwrapped
        env = gym.make(INSTORE, tasks=str(_write(tmp_path, tasks)))
    u = env.unwrapped
    assert u.task_ids() == before.task_ids() and u.skipped_tasks == before.skipped_tasks
    assert len(u.task_ids()) + len(u.skipped_tasks) == len(tasks)
    assert any("has a book_id but a reservation_time; read as a reservation" in n for n in u.source.get(target).notes)
    assert _oracle(env, target)


# ----- a product whose store_id names another store ----------------------------------------------
def _absent_store_task() -> dict[str, Any]:
    """The mini task with the noodle shop's dishes naming store S9, which is not in the task."""
    raw = mini_task("M0000001")
    for p in raw["environment"]["stores"]["S1"]["products"]:
        p["store_id"], p["store_name"] = "S9", "Noodle House (old branch)"
    return raw


def test_product_naming_absent_store_is_sold_by_the_listing_store(tmp_path: Path) -> None:
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [_absent_store_task()])))
    u = env.unwrapped
    task = u.source.get("M0000001")
    assert u.skipped_tasks == []
    (state,) = task.rubric[0].params["states"]
    new = next(o for o in state["orders"] if o["kind"] == "new")
    assert new["store_id"] == "S1", "the gold order keeps the store it names"
    create = next(json.loads(a) for a in task.golden_actions if a.startswith('{"name": "create_delivery_order"'))
    assert create["arguments"]["store_id"] == "S1"
    assert any("P1 names store S9 but is on the menu of S1" in n for n in task.notes)
    assert _oracle(env, "M0000001")

    env.reset(options={"task_id": "M0000001"})
    obs = env.step(json.dumps({"name": "get_delivery_store_info", "arguments": {"store_id": "S1"}}))[0]
    assert '"P1"' in obs and '"store_id": "S9"' in obs and "listed_by" not in obs, "the menu is shown as written"
    bad = {"name": "create_delivery_order", "arguments": {
        "user_id": "U000049", "store_id": "S9", "product_ids": ["P1"], "product_cnts": [1],
        "address": task.world["locations"][0]["address"], "dispatch_time": "2025-06-21 12:00:00"}}
    obs, _, _, _, info = env.step(json.dumps(bad))
    assert info["tool_errors"] == 1 and "S9" in obs


def test_product_naming_another_present_store_is_not_sold_there(tmp_path: Path) -> None:
    raw = mini_task("M0000001")
    raw["environment"]["stores"]["S1"]["products"][0]["store_id"] = "S2"  # P1 names the tea shop
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])))
    task = env.unwrapped.source.get("M0000001")
    (state,) = task.rubric[0].params["states"]
    assert next(o for o in state["orders"] if o["kind"] == "new")["store_id"] == "S1"
    assert _oracle(env, "M0000001")
    env.reset(options={"task_id": "M0000001"})
    wrong = {"name": "create_delivery_order", "arguments": {
        "user_id": "U000049", "store_id": "S2", "product_ids": ["P1"], "product_cnts": [1],
        "address": task.world["locations"][0]["address"], "dispatch_time": "2025-06-21 12:00:00"}}
    obs, _, _, _, info = env.step(json.dumps(wrong))
    assert info["tool_errors"] == 1 and "product P1 is on the menu of store S1, not S2" in obs
