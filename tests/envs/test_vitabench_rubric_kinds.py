"""The rubric decides, for every compiled kind: addresses, process items, stores and their
features, ratings, distances, party sizes and quantities, prices, notes and statuses become rubric
items of their own (``nl_<kind>_<k>``), the gold comparisons they take over are relaxed, and the
golden routes follow the rubric where the gold does not.

Hand-written tasks in VitaBench's format always run; the real files' tests skip without the data.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.rewards.nl_rubric import parse_spec, spec_parts
from tests.envs.test_instore import mini_instore_task
from tests.envs.test_vitabench import (
    DATA_DIR,
    HOME,
    WORK,
    Scripted,
    _calls,
    _make,
    _product,
    _with_create_args,
    _write,
    mini_task,
)

TID = "M0000001"


def _task(rubrics: list[str], *, replace: bool = False, **gold: Any) -> dict[str, Any]:
    """The delivery mini task with ``rubrics`` added to (or, ``replace``, instead of) its rubric,
    and changes to the noodle order's gold fields."""
    raw = mini_task(TID)
    for state in raw["evaluation_criteria"]["expected_states"]:
        state["required_orders"][0].update(gold)
        if replace:
            state["state_rubrics"] = []
    crit = raw["evaluation_criteria"]
    crit["overall_rubrics"] = rubrics if replace else crit["overall_rubrics"] + rubrics
    return raw


def _env(tmp_path: Path, raw: dict[str, Any], domain: str = "delivery") -> gym.Env:
    if domain == "delivery":
        return _make(_write(tmp_path, [raw]))
    path = tmp_path / "instore.json"
    path.write_text(json.dumps([raw], ensure_ascii=False), encoding="utf-8")
    return gym.make("servicegym/InStore-v0", tasks=str(path), scoring="strict")


def _item(task: Any, text: str) -> Any:
    k = task.nl_rubric.index(text)
    found = [r for r in task.rubric if r.params.get("nl_index") == k]
    assert found, (text, task.notes)
    return found[0]


def _play(env: gym.Env, actions: list[str], task_id: str = TID) -> dict[str, Any]:
    return run_episode(env, Scripted(actions), seed=0, options={"task_id": task_id})


def _without(actions: list[str], *tools: str) -> list[str]:
    return [a for a in actions if not (a.startswith("{") and json.loads(a)["name"] in tools)]


def _ok(rec: dict[str, Any], item: Any) -> bool:
    return rec["score"][f"rubric/{item.name}"] == 1.0


# ----- addresses -------------------------------------------------------------------------------------
def test_address_item_checks_the_order_address(tmp_path: Path) -> None:
    text = f"The delivery address for the beef noodles should be {HOME}"
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_address" and item.name == f"nl_address_{task.nl_rubric.index(text)}"
    gold = next(o for o in item.params["states"][0]["orders"] if o["kind"] == "new")
    assert "address" in gold["rubric"]  # the rubric decides the address, not the gold
    assert any(n.startswith(f"{item.name}: rubric item") for n in task.notes)
    assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})["success"]
    work = _play(env, _with_create_args(task.golden_actions, address=WORK))
    assert not work["success"] and not _ok(work, item) and work["score"]["rubric/required_orders"] == 1.0


def test_rubric_address_wins_over_the_gold(tmp_path: Path) -> None:
    """The gold sends the noodles home; the rubric says the office: the golden route goes there."""
    text = f"配送地址应为{WORK}"
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    create = next(c for _, c in _calls(task.golden_actions) if c["name"] == "create_delivery_order")
    assert create["arguments"]["address"] == WORK
    assert any("wins over the gold" in n for n in task.notes)
    assert _play(env, task.golden_actions)["success"]
    home = _play(env, _with_create_args(task.golden_actions, address=HOME))
    assert not home["success"] and not _ok(home, item)


# ----- process items ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "tool"), [
    ("Need to query the user's historical behavior to learn which noodles they like", "get_user_historical_behaviors"),
    ("必须先查询天气", "weather"),
])
def test_process_item_needs_the_look_up(tmp_path: Path, text: str, tool: str) -> None:
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_process" and tool in item.params["spec"]["tools"]
    assert json.loads(task.golden_actions[0])["name"] == tool  # the golden route looks it up first
    assert _play(env, task.golden_actions)["success"]
    skipped = _play(env, _without(task.golden_actions, *item.params["spec"]["tools"]))
    assert not skipped["success"] and not _ok(skipped, item) and skipped["score"]["rubric/required_orders"] == 1.0


# ----- stores and their features, ratings, distances ----------------------------------------------
def _palace(raw: dict[str, Any]) -> dict[str, Any]:
    """A third store, rated 4.5, that sells beef noodles too."""
    raw["environment"]["stores"]["S3"] = {
        "name": "Noodle Palace", "store_id": "S3", "score": 4.5, "tags": ["noodles", "Dine-in available"],
        "location": {"address": "5 Palace Road, Dalian", "longitude": 121.5820, "latitude": 38.9010},
        "products": [{**_product("P5", "S1", "Beef Noodles", 26, ["Mild", "Extra Spicy"]), "store_id": "S3",
                      "store_name": "Noodle Palace"}],
    }
    return raw


def _from_palace(actions: list[str], **more: Any) -> list[str]:
    return _with_create_args(actions, store_id="S3", product_ids=["P5"], **more)


def test_store_items_let_another_store_do(tmp_path: Path) -> None:
    """Every item about the noodle order is compiled and some are about its store: an order from
    another store meeting them all is as good as the gold's, one failing them is not."""
    items = [f"The delivery address should be {HOME}", "The noodle restaurant rating should be 4.5 or above",
             "The noodle restaurant must support Dine-in available", "The order should include beef noodles",
             "The beef noodles should be mild", "Cancel the order with order ID M0000001O01"]
    raw = _palace(_task(items, replace=True))
    raw["environment"]["stores"]["S1"]["tags"].append("Dine-in available")
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    assert {_item(task, t).kind for t in items} == {"nl_address", "nl_rating", "nl_feature", "nl_status"}
    gold = next(o for o in task.rubric[0].params["states"][0]["orders"] if o["kind"] == "new")
    # no item speaks of paying or of how many: the rubric leaves both open
    assert set(gold["rubric"]) == {"address", "payment", "quantity", "store"}
    assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})["success"]
    palace = _play(env, _from_palace(task.golden_actions, attributes=["Mild"]))
    assert palace["success"], palace["score"]
    unpaid = _play(env, _without(task.golden_actions, "pay_delivery_order"))
    assert unpaid["success"], unpaid["score"]  # the rubric never asks for payment
    spicy = _play(env, _from_palace(task.golden_actions, attributes=["Extra Spicy"]))
    assert not spicy["success"] and not _ok(spicy, _item(task, "The beef noodles should be mild"))
    tea = _play(env, _with_create_args(task.golden_actions, store_id="S2", product_ids=["P4"], attributes=[""]))
    assert not tea["success"]
    assert not _ok(tea, _item(task, "The noodle restaurant rating should be 4.5 or above"))
    assert not _ok(tea, _item(task, "The order should include beef noodles"))


def test_the_gold_store_stays_while_an_item_is_left_to_the_judge(tmp_path: Path) -> None:
    items = ["The noodle restaurant rating should be 4.5 or above", "The noodles should taste like home"]
    env = _env(tmp_path, _palace(_task(items, replace=True)))
    task = env.unwrapped.source.get(TID)
    assert _item(task, items[0]).kind == "nl_rating"
    assert not any(r.params.get("nl_index") == 1 for r in task.rubric)  # not compiled
    gold = next(o for o in task.rubric[0].params["states"][0]["orders"] if o["kind"] == "new")
    assert "store" not in gold.get("rubric", [])  # an uncompiled item may be about it: the gold store stays
    assert not _play(env, _from_palace(task.golden_actions, attributes=["mild"]))["success"]


@pytest.mark.parametrize(("text", "kind"), [
    ("The noodles should be ordered from Noodle House", "nl_store"),
    ("The noodle order must not be from Tea Corner", "nl_store"),
    ("面条订单的商家评分应在4.6分及以上", "nl_rating"),
    (f"The noodle restaurant should be within 1km (inclusive) of {HOME}", "nl_distance"),
])
def test_store_item_rejects_another_store(tmp_path: Path, text: str, kind: str) -> None:
    raw = _task([text])
    raw["environment"]["stores"]["S2"]["location"] = {"address": "3 Tea Lane, Dalian", "longitude": 121.64,
                                                      "latitude": 38.93}
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == kind
    assert _play(env, task.golden_actions)["success"]
    tea = _play(env, _with_create_args(task.golden_actions, store_id="S2", product_ids=["P3"], attributes=[""]))
    assert not _ok(tea, item)


# ----- product features, with negations and notes that contradict them -------------------------------
@pytest.mark.parametrize("text", ["The beef noodles should be mild", "牛肉面应选择mild口味",
                                  "The beef noodles must not be extra spicy",
                                  "The beef noodles should be selected as mild",
                                  "When choosing the beef noodles, select mild"])
def test_product_feature_item(tmp_path: Path, text: str) -> None:
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_feature"
    assert _play(env, task.golden_actions)["success"]
    spicy = _play(env, _with_create_args(task.golden_actions, attributes=["Extra Spicy"]))
    assert not _ok(spicy, item)
    # the gold note is empty, so any note passes the order matching; "extra spicy" contradicts "mild"
    noted = _play(env, _with_create_args(task.golden_actions, note="extra spicy please"))
    assert noted["score"]["rubric/required_orders"] == 1.0
    assert _ok(noted, item) is item.params["spec"].get("negated", False)


# ----- counts -----------------------------------------------------------------------------------------
def test_quantity_item_decides_the_quantity(tmp_path: Path) -> None:
    text = "The total number of items in the noodle order should be 2 portions"
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_count"
    assert _play(env, task.golden_actions)["success"]
    three = _play(env, _with_create_args(task.golden_actions, product_cnts=[3]))
    assert not three["success"] and not _ok(three, item)
    assert three["score"]["rubric/required_orders"] == 1.0  # the rubric's count, not the gold's, decides


def test_party_size_item_wins_over_the_gold(tmp_path: Path) -> None:
    raw = mini_instore_task("M1")
    text = "The number of people for the Blue Wave Swim Club reservation should be 3"  # the gold says 2
    raw["evaluation_criteria"]["overall_rubrics"].append(text)
    env = _env(tmp_path, raw, "instore")
    task = env.unwrapped.source.get("M1")
    item = _item(task, text)
    assert item.kind == "nl_count" and item.params["refs"]["0"][0]["id"] == "M1T002"
    reserve = next(c for _, c in _calls(task.golden_actions) if c["name"] == "instore_reservation")
    assert reserve["arguments"]["customer_count"] == 3
    assert _play(env, task.golden_actions, "M1")["success"]
    two = [a.replace('"customer_count": 3', '"customer_count": 2') if '"instore_reservation"' in a else a
           for a in task.golden_actions]
    rec = _play(env, two, "M1")
    assert not rec["success"] and not _ok(rec, item) and rec["score"]["rubric/required_orders"] == 1.0


# ----- prices -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "bad"), [
    ("Total price of the noodle order should be around 56 yuan", [3]),  # 84 is not within 10 %
    ("面条订单的总价格应控制在60元以内", [3]),
    ("The noodle order price should be between 50-60 yuan (inclusive)", [1]),
])
def test_price_item(tmp_path: Path, text: str, bad: list[int]) -> None:
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_price"
    assert _play(env, task.golden_actions)["success"]
    assert not _ok(_play(env, _with_create_args(task.golden_actions, product_cnts=bad)), item)


# ----- notes ------------------------------------------------------------------------------------------
def test_note_item_wins_over_the_gold_note(tmp_path: Path) -> None:
    text = "The noodle order should include a note requesting no cilantro"
    env = _env(tmp_path, _task([text], note="less salt"))  # the gold asks for another note
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_note"
    create = next(c for _, c in _calls(task.golden_actions) if c["name"] == "create_delivery_order")
    assert create["arguments"]["note"] == "no cilantro"
    assert _play(env, task.golden_actions)["success"]
    for note, ok in (("No cilantro please", True), ("", False), ("extra cilantro", False), ("less salt", False)):
        rec = _play(env, _with_create_args(task.golden_actions, note=note))
        assert rec["success"] is ok and _ok(rec, item) is ok, note
        assert rec["score"]["rubric/required_orders"] == 1.0  # the gold note is not compared


# ----- statuses ---------------------------------------------------------------------------------------
def test_status_item_by_id_the_gold_is_silent_about(tmp_path: Path) -> None:
    """The gold does not mention order O02; the rubric asks to cancel it: the rubric decides."""
    text = "Successfully cancel the oolong tea order with id M0000001O02, the order status should be cancelled"
    env = _env(tmp_path, _task([text]))
    task = env.unwrapped.source.get(TID)
    item = _item(task, text)
    assert item.kind == "nl_status" and item.params["direct"] == {"table": "orders", "id": "M0000001O02"}
    assert any("does not mention order M0000001O02" in n for n in task.notes)
    assert _play(env, task.golden_actions)["success"]
    kept = [a for a in task.golden_actions if "M0000001O02" not in a]
    rec = _play(env, kept)
    assert not rec["success"] and not _ok(rec, item)


# ----- bookkeeping --------------------------------------------------------------------------------------
def test_coverage_counts_every_kind(tmp_path: Path) -> None:
    items = [f"The delivery address should be {HOME}", "The delivery time should be around 11:58",
             "The beef noodles should be mild", "The noodles should taste like home"]
    env = _env(tmp_path, _task(items, replace=True))
    task = env.unwrapped.source.get(TID)
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})
    assert rec["success"] and rec["score"]["rubric_nl_coverage"] == pytest.approx(3 / 4)
    assert any(n.startswith("natural-language rubric: 3 of 4 items checked by code") for n in task.notes)


def test_kinds_survive_the_project_format(tmp_path: Path) -> None:
    from servicegym.envs.tasks import load_task_file, save_task_file

    raw = _task([f"The delivery address should be {HOME}", "The beef noodles should be mild",
                 "Need to query the user's historical behavior"])
    tasks = list(load_task_file(_write(tmp_path, [raw]), "delivery"))
    save_task_file(tasks, tmp_path / "project.json.gz")
    env = _make(tmp_path / "project.json.gz")
    again = env.unwrapped.source.get(TID)
    assert again.model_dump() == tasks[0].model_dump()
    assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})["success"]


def test_generated_tasks_are_unchanged() -> None:
    env = gym.make("servicegym/Delivery-v0")
    task = env.unwrapped.source.get(env.unwrapped.task_ids("test")[0])
    assert not any(r.kind.startswith("nl_") for r in task.rubric)


# ----- the real VitaBench files -----------------------------------------------------------------------
REAL = {"delivery/tasks_en.json": "servicegym/Delivery-v0", "delivery/tasks.json": "servicegym/Delivery-v0",
        "instore/tasks_en.json": "servicegym/InStore-v0"}


@pytest.fixture(scope="module", params=sorted(REAL))
def real(request: pytest.FixtureRequest) -> tuple[str, gym.Env]:
    path = DATA_DIR / request.param
    if not path.is_file():
        pytest.skip(f"VitaBench data not found at {path} (set SERVICEGYM_VITABENCH_DIR)")
    return request.param, gym.make(REAL[request.param], tasks=str(path), scoring="strict")


def _kind_of(item: Any) -> str:
    if item.kind == "nl_time_window":
        return "time_window"
    return "+".join(p.kind for p in spec_parts(parse_spec(item.params["spec"])))


def test_real_coverage_and_golden_routes(real: tuple[str, gym.Env], capsys: pytest.CaptureFixture[str]) -> None:
    name, env = real
    u = env.unwrapped
    total = compiled = 0
    kinds: Counter[str] = Counter()
    for tid in u.task_ids():
        task = u.source.get(tid)
        items = [r for r in task.rubric if r.kind.startswith("nl_")]
        total += len(task.nl_rubric)
        compiled += len({r.params["nl_index"] for r in items})
        kinds.update(_kind_of(r) for r in items)
        rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})
        assert rec["success"], (tid, {k: v for k, v in rec["score"].items() if v == 0.0})
        assert all(rec["score"][f"rubric/{r.name}"] == 1.0 for r in items)
        assert rec["score"]["rubric_nl_coverage"] == pytest.approx(len({r.params["nl_index"] for r in items})
                                                                   / len(task.nl_rubric))
    assert len(u.task_ids()) == 79
    with capsys.disabled():
        print(f"\n{name}: {compiled} of {total} NL items checked by code ({compiled / total:.1%}): "
              + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    assert compiled / total >= 0.45
    non_time = sum(n for k, n in kinds.items() if k != "time_window")
    assert non_time >= 0.25 * total


def test_real_address_items_reject_another_address(real: tuple[str, gym.Env]) -> None:
    """After each golden route, every order made is moved 5 km away under another address: every
    address item of the task then fails (most tasks' address books hold one address, so the move is
    made in the final world rather than through the tools)."""
    from servicegym.rewards.rubric import CHECKS
    from servicegym.world_state.life.entities import Location

    name, env = real
    if not name.startswith("delivery"):
        pytest.skip("in-store orders carry no address")
    u = env.unwrapped
    checked = 0
    for tid in u.task_ids():
        task = u.source.get(tid)
        items = [r for r in task.rubric if r.kind == "nl_address"]
        if not items:
            continue
        run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})
        view = u.episode_view()
        assert all(CHECKS["nl_address"](view, r.params) for r in items), tid
        orders = view.world.table("orders")
        for o in list(orders):
            if o.order_id not in view.initial.table("orders") and o.location is not None:
                orders.update(o.order_id, location=Location(address="Somewhere Else", longitude=o.location.longitude + 0.06,
                                                            latitude=o.location.latitude))
        assert not any(CHECKS["nl_address"](view, r.params) for r in items), tid
        checked += 1
    assert checked >= 40, checked


def test_real_party_size_items_reject_another_party(real: tuple[str, gym.Env]) -> None:
    name, env = real
    if not name.startswith("instore"):
        pytest.skip("delivery tasks have no party sizes")
    u = env.unwrapped
    checked = 0
    for tid in u.task_ids():
        task = u.source.get(tid)
        items = [r for r in task.rubric if r.kind == "nl_count" and r.params["spec"]["what"] == "people"]
        made = [(i, c) for i, c in _calls(task.golden_actions) if c["name"] in ("instore_reservation", "instore_book")]
        if len(items) != 1 or len(made) != 1:
            continue
        i, call = made[0]
        moved = list(task.golden_actions)
        call = copy.deepcopy(call)
        call["arguments"]["customer_count"] += 1
        moved[i] = json.dumps(call, ensure_ascii=False)
        rec = _play(env, moved, tid)
        assert not rec["success"] and not _ok(rec, items[0]), tid
        checked += 1
    assert checked >= 10
