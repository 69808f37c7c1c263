"""The rubric decides time: VitaBench's natural-language time items as rubric items of their own
(``nl_time_<k>``, kind ``nl_time_window``), golden routes aimed into their windows, and the gold
order matching no longer comparing the times they govern.

Hand-written tasks in VitaBench's format always run; the real files' tests skip without the data.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.rewards.nl_rubric import TimeWindow
from servicegym.rewards.vitabench import governed_records, record_time
from servicegym.world_state.core import parse_time
from tests.envs.test_vitabench import (
    DATA_DIR,
    DELIVERY_FILES,
    NOW,
    Scripted,
    _calls,
    _line,
    _make,
    _order,
    _write,
    mini_task,
)

TID = "M0000001"
MINUTES = 28  # the mini task's trip from Noodle House (S1) to home


def _task_with(rubrics: list[str], *, tea_order: bool = False, **gold: Any) -> dict[str, Any]:
    """The mini task with ``rubrics`` added to its overall rubric (and optionally a second new gold
    order, one jasmine tea from Tea Corner, and changes to the noodle order's gold fields)."""
    raw = mini_task(TID)
    for state in raw["evaluation_criteria"]["expected_states"]:
        state["required_orders"][0].update(gold)
        if tea_order:
            state["required_orders"].append(_order(f"{TID}T03", "S2", "paid", [_line("P3", 1, 12)]))
    raw["evaluation_criteria"]["overall_rubrics"] += rubrics
    return raw


def _env(tmp_path: Path, raw: dict[str, Any]) -> gym.Env:
    return _make(_write(tmp_path, [raw]))


def _time_items(task: Any) -> list[Any]:
    return [r for r in task.rubric if r.kind == "nl_time_window"]


def _play(env: gym.Env, actions: list[str], task_id: str = TID) -> dict[str, Any]:
    return run_episode(env, Scripted(actions), seed=0, options={"task_id": task_id})


def _shift(actions: list[str], minutes: float, which: set[int] | None = None, name: str = "create_delivery_order",
           arg: str = "dispatch_time") -> list[str]:
    """The actions with the time argument of the (``which``-th, counting from 0) ``name`` calls moved."""
    out = list(actions)
    n = -1
    for i, call in _calls(out):
        if call["name"] != name:
            continue
        n += 1
        if which is not None and n not in which:
            continue
        t = parse_time(call["arguments"][arg]) + timedelta(minutes=minutes)
        call["arguments"][arg] = f"{t:%Y-%m-%d %H:%M:%S}"
        out[i] = json.dumps(call, ensure_ascii=False)
    return out


def _drop_creates(actions: list[str]) -> list[str]:
    keep = []
    for a in actions:
        if a.startswith("{") and json.loads(a)["name"] in ("create_delivery_order", "pay_delivery_order"):
            continue
        keep.append(a)
    return keep


def _dispatch(actions: list[str], n: int = 0) -> str:
    return [c for _, c in _calls(actions) if c["name"] == "create_delivery_order"][n]["arguments"]["dispatch_time"]


# ----- hand-written tasks ------------------------------------------------------------------------
def test_around_item_decides_over_the_gold_time(tmp_path: Path) -> None:
    """The gold order says 11:30 dispatch (arrival 11:58); the rubric says around 12:30: the rubric wins."""
    text = "The delivery time for the beef noodles should be around 12:30"
    env = _env(tmp_path, _task_with([text]))
    task = env.unwrapped.source.get(TID)
    (item,) = _time_items(task)
    k = task.nl_rubric.index(text)
    assert item.name == f"nl_time_{k}" and item.description == text
    window = TimeWindow.model_validate(item.params["window"])
    assert (window.relation, window.latest) == ("around", parse_time("2025-06-21 12:30:00"))
    gold = next(o for o in item.params["states"][0]["orders"] if o["kind"] == "new")
    assert gold["time_rule"] == "rubric" and gold["delivery_time"] == "2025-06-21 12:30:00"
    assert item.params["refs"] == {"0": [{"table": "orders", "id": f"{TID}T01", "order_type": "delivery",
                                          "place": "S1", "product_ids": ["P1"]}]}
    assert any(n.startswith(f"nl_time_{k}: rubric item {k} is checked by code") for n in task.notes)
    n_nl = len(task.nl_rubric)  # the mini task's "...", its two items and this one
    # this item and the mini task's "tea order cancelled" (a status item) are checked by code
    assert n_nl == 4 and any(n.startswith(f"natural-language rubric: 2 of {n_nl} items checked by code")
                             for n in task.notes)
    # the golden route lands on the rubric's time
    assert _dispatch(task.golden_actions) == "2025-06-21 12:02:00"
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})
    assert rec["success"] and rec["reward"] == 1.0
    assert rec["score"][f"rubric/{item.name}"] == 1.0 and rec["score"]["rubric_nl_coverage"] == pytest.approx(2 / n_nl)
    # five minutes off "around" is accepted, either way
    for off in (5, -5):
        assert _play(env, _shift(task.golden_actions, off))["success"], off
    # three hours late: the time item fails, and only it (the gold match ignores the time it governs)
    late = _play(env, _shift(task.golden_actions, 180))
    assert not late["success"] and late["reward"] == 0.0
    assert late["score"][f"rubric/{item.name}"] == 0.0 and late["score"]["rubric/required_orders"] == 1.0
    # the old gold time (dispatch 11:30, arrival 11:58) misses the rubric by 32 minutes
    old = _play(env, _shift(task.golden_actions, -32))
    assert not old["success"] and old["score"][f"rubric/{item.name}"] == 0.0


def test_exact_time_missed_by_eight_minutes_fails(tmp_path: Path) -> None:
    text = "The delivery time should be 18:00"
    env = _env(tmp_path, _task_with([text], dispatch_time=""))
    task = env.unwrapped.source.get(TID)
    (item,) = _time_items(task)
    assert item.params["window"]["relation"] == "exact" and item.params["window"]["tolerance_min"] == 5.0
    assert _dispatch(task.golden_actions) == "2025-06-21 17:32:00"  # 18:00 less the 28-minute trip
    assert _play(env, task.golden_actions)["success"]
    for off, ok in ((8, False), (-8, False), (4, True), (-4, True)):
        rec = _play(env, _shift(task.golden_actions, off))
        assert rec["success"] is ok and rec["score"][f"rubric/{item.name}"] == float(ok), off


@pytest.mark.parametrize(
    ("text", "relation", "aim", "bad_shift"),
    [
        ("送达时间应在2025-06-21 13:00之前", "before", "12:50", 20),
        ("The noodles should be delivered as soon as possible", "asap", "11:48", 30),
        ("牛肉面的送达时间应在12:00到13:00之间", "between", "12:30", 45),
        ("The beef noodles should be delivered after 2 PM", "after", "14:10", -30),
        ("面条应在一小时内送达", "within", "11:48", 40),
        ("The beef noodles should arrive no later than 12:40 today", "before", "12:30", 15),
    ],
)
def test_each_kind_of_window(tmp_path: Path, text: str, relation: str, aim: str, bad_shift: int) -> None:
    env = _env(tmp_path, _task_with([text], dispatch_time=""))
    task = env.unwrapped.source.get(TID)
    (item,) = _time_items(task)
    assert item.params["window"]["relation"] == relation
    arrival = parse_time(_dispatch(task.golden_actions)) + timedelta(minutes=MINUTES)
    assert f"{arrival:%H:%M}" == aim
    assert _play(env, task.golden_actions)["success"]
    bad = _play(env, _shift(task.golden_actions, bad_shift))
    assert not bad["success"] and bad["score"][f"rubric/{item.name}"] == 0.0


def test_no_order_fails_the_time_item(tmp_path: Path) -> None:
    env = _env(tmp_path, _task_with(["The delivery time should be around 12:30"]))
    task = env.unwrapped.source.get(TID)
    (item,) = _time_items(task)
    rec = _play(env, _drop_creates(task.golden_actions))
    assert rec["score"][f"rubric/{item.name}"] == 0.0 and not rec["success"]


def test_items_resolve_to_the_order_they_name(tmp_path: Path) -> None:
    noodles = "The beef noodles should be delivered around 13:00"
    tea = "茉莉花茶订单的送达时间应在12:00之前"
    raw = _task_with([noodles, "The delivery time for the jasmine tea order should be before 12:00", tea],
                     tea_order=True)
    raw["environment"]["stores"]["S2"]["products"][0]["name"] = "Jasmine Tea 茉莉花茶"
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    items = {i.description: i for i in _time_items(task)}
    assert len(items) == 3
    assert items[noodles].params["refs"]["0"][0]["id"] == f"{TID}T01"
    assert {items[t].params["refs"]["0"][0]["id"] for t in items if t != noodles} == {f"{TID}T03"}
    assert _play(env, task.golden_actions)["success"]
    # the tea late and the noodles early (their times swapped) fails both kinds of item
    swapped = _shift(_shift(task.golden_actions, 70, {1}), -70, {0})
    rec = _play(env, swapped)
    assert not rec["success"]
    assert all(rec["score"][f"rubric/{i.name}"] == 0.0 for i in items.values())


def test_item_tied_through_the_items_that_share_its_subject(tmp_path: Path) -> None:
    # the time item names no product or store; another item about "the user's personal meal" does
    text = "The delivery time for the user's personal meal should be around 13:00"
    raw = _task_with([text, "The user's personal meal should be ordered from Tea Corner",
                      "The delivery address for the user's personal meal should be the home address"], tea_order=True)
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    (item,) = [i for i in _time_items(task) if i.description == text]
    assert item.params["refs"]["0"][0]["id"] == f"{TID}T03"
    assert _play(env, task.golden_actions)["success"]
    # the tea three hours late fails the item the tea order was tied to
    rec = _play(env, _shift(task.golden_actions, 180, {1}))
    assert not rec["success"] and rec["score"][f"rubric/{item.name}"] == 0.0


def test_item_tied_to_the_one_order_another_window_leaves(tmp_path: Path) -> None:
    # "the afternoon order" names nothing; the tea order is tied to "before 12:00", which admits no
    # time in common with "around 14:30", so the afternoon order is the noodles
    afternoon = "The delivery time for the afternoon order should be around 14:30"
    tea = "The delivery time for the jasmine tea order should be before 12:00"
    raw = _task_with([afternoon, tea], tea_order=True)
    raw["environment"]["stores"]["S2"]["products"][0]["name"] = "Jasmine Tea"
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    items = {i.description: i for i in _time_items(task)}
    assert items[afternoon].params["refs"]["0"][0]["id"] == f"{TID}T01"
    assert items[tea].params["refs"]["0"][0]["id"] == f"{TID}T03"
    assert _play(env, task.golden_actions)["success"]
    assert not _play(env, _shift(task.golden_actions, -150, {0}))["success"]  # the noodles at noon


def test_items_about_distinct_subjects_take_distinct_orders(tmp_path: Path) -> None:
    # two time items, two orders, two subjects; only the user's meal is named (through another
    # item); the colleague's meal, whose window overlaps, takes the other order, and a second
    # wording of it ("Colleague's meal should be delivered before ...") the same one
    user = "The delivery time for the user's meal should be around 12:30"
    colleague = "The delivery time for the colleague's meal should be between 11:50 and 13:30"
    again = "Colleague's meal should be delivered before 13:30"
    raw = _task_with([user, colleague, again, "The user's meal should be ordered from Tea Corner"], tea_order=True)
    env = _env(tmp_path, raw)
    task = env.unwrapped.source.get(TID)
    items = {i.description: i for i in _time_items(task)}
    assert items[user].params["refs"]["0"][0]["id"] == f"{TID}T03"
    assert items[colleague].params["refs"]["0"][0]["id"] == f"{TID}T01"
    assert items[again].params["refs"]["0"][0]["id"] == f"{TID}T01"
    assert _play(env, task.golden_actions)["success"]
    rec = _play(env, _shift(task.golden_actions, 180, {0}))  # the noodles (the colleague's) 3 hours late
    assert not rec["success"] and rec["score"][f"rubric/{items[colleague].name}"] == 0.0


def test_unresolvable_item_is_left_to_the_judge(tmp_path: Path) -> None:
    text = "The delivery time for the order should be around 13:00"
    env = _env(tmp_path, _task_with([text], tea_order=True))
    task = env.unwrapped.source.get(TID)
    assert not _time_items(task)
    assert any("left to the LLM judge" in n for n in task.notes)
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})
    # only the mini task's status item ("tea order cancelled") is checked by code
    assert rec["success"] and rec["score"]["rubric_nl_coverage"] == pytest.approx(1 / len(task.nl_rubric))


def test_infeasible_window_is_widened_to_the_earliest_arrival(tmp_path: Path) -> None:
    text = "The beef noodles should be delivered before 11:30"  # now 11:20, the trip takes 28 minutes
    env = _env(tmp_path, _task_with([text]))
    task = env.unwrapped.source.get(TID)
    (item,) = _time_items(task)
    assert item.params["window"]["repaired"] and item.params["window"]["latest"] == "2025-06-21 11:48:00"
    assert any("ends before the earliest possible arrival" in n for n in task.notes)
    assert _dispatch(task.golden_actions) == NOW
    assert _play(env, task.golden_actions)["success"]
    assert not _play(env, _shift(task.golden_actions, 10))["success"]


def test_generated_tasks_have_no_nl_coverage() -> None:
    env = gym.make("servicegym/Delivery-v0")
    rec = run_episode(env, OraclePolicy(), seed=0)
    assert rec["success"] and "rubric_nl_coverage" not in rec["score"]


def test_time_items_survive_the_project_format(tmp_path: Path) -> None:
    from servicegym.envs.tasks import load_task_file, save_task_file

    tasks = list(load_task_file(_write(tmp_path, [_task_with(["送达时间应在12:30左右"])]), "delivery"))
    save_task_file(tasks, tmp_path / "project.json.gz")
    env = _make(tmp_path / "project.json.gz")
    again = env.unwrapped.source.get(TID)
    assert again.model_dump() == tasks[0].model_dump() and _time_items(again)
    assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": TID})["success"]


# ----- the real VitaBench files ------------------------------------------------------------------
@pytest.fixture(scope="module", params=sorted(DELIVERY_FILES))
def real_env(request: pytest.FixtureRequest) -> gym.Env:
    path = DATA_DIR / DELIVERY_FILES[request.param]
    if not path.is_file():
        pytest.skip(f"VitaBench data not found at {path} (set SERVICEGYM_VITABENCH_DIR)")
    return gym.make("servicegym/Delivery-v0", tasks=str(path))


def _timed(env: gym.Env) -> list[Any]:
    u = env.unwrapped
    return [u.source.get(t) for t in u.task_ids() if _time_items(u.source.get(t))]


def _golden_times(env: gym.Env, task: Any) -> tuple[dict[str, Any], dict[str, list[tuple[str, Any]]]]:
    """Play the golden route; its record and, per time item, the orders it bounds with their times."""
    rec = _play(env, task.golden_actions, task.task_id)
    view = env.unwrapped.episode_view()
    bound = {i.name: [(row.order_id, record_time(t, row)) for t, row in governed_records(view, i.params)]
             for i in _time_items(task)}
    return rec, bound


def test_real_golden_routes_meet_every_time_item(real_env: gym.Env) -> None:
    tasks = _timed(real_env)
    assert len(tasks) >= 40
    for task in tasks:
        rec = _play(real_env, task.golden_actions, task.task_id)
        assert rec["success"] and rec["reward"] == 1.0, (task.task_id, rec["score"])
        assert all(rec["score"][f"rubric/{i.name}"] == 1.0 for i in _time_items(task))


def test_real_three_hours_late_is_rejected(real_env: gym.Env) -> None:
    checked = 0
    for task in _timed(real_env):
        _, bound = _golden_times(real_env, task)
        late = _play(real_env, _shift(task.golden_actions, 180), task.task_id)
        now = real_env.unwrapped.source.get(task.task_id).world["time"]
        for item in _time_items(task):
            window = TimeWindow.model_validate(item.params["window"])
            if window.relation == "after":
                continue
            # the window closes less than three hours after the golden arrival: late must fail it
            hi = window.latest if window.relation != "asap" else parse_time(now) + timedelta(hours=2)
            if all(t + timedelta(hours=3) > hi + timedelta(minutes=window.tolerance_min) for _, t in bound[item.name]):
                assert late["score"][f"rubric/{item.name}"] == 0.0, (task.task_id, item.description)
                assert not late["success"] and late["reward"] == 0.0
                checked += 1
    assert checked >= 60


def test_real_five_minutes_off_around_is_accepted(real_env: gym.Env) -> None:
    """An order bounded only by "around T" items, delivered at T + 5 min or T - 5 min, passes."""
    checked = 0
    for task in _timed(real_env):
        items = _time_items(task)
        _, bound = _golden_times(real_env, task)
        now = parse_time(task.world["time"])
        targets: dict[str, set[Any]] = {}  # order -> the "around" times bounding it (None: another kind)
        for item in items:
            w = TimeWindow.model_validate(item.params["window"])
            for oid, _ in bound[item.name]:
                targets.setdefault(oid, set()).add(w.latest if w.relation == "around" and not w.repaired else None)
        for oid, ts in sorted(targets.items()):
            if len(ts) != 1 or None in ts:
                continue
            (t,) = ts
            n = int(oid[-2:]) - 1  # <task_key>D01 is the order of the first create call
            arrival = dict(sum(bound.values(), []))[oid]
            trip = arrival - parse_time(_dispatch(task.golden_actions, n))
            for off in (5, -5):
                dispatch = t + timedelta(minutes=off) - trip
                if dispatch < now:
                    continue  # that early no order can arrive
                moved = _shift(task.golden_actions, (dispatch - parse_time(_dispatch(task.golden_actions, n))
                                                     ).total_seconds() / 60, {n})
                rec = _play(real_env, moved, task.task_id)
                assert rec["success"], (task.task_id, oid, off, rec["score"])
                checked += 1
    assert checked >= 20


def test_real_instore_exact_time_missed_by_eight_minutes_is_rejected() -> None:
    path = DATA_DIR / "instore/tasks_en.json"
    if not path.is_file():
        pytest.skip(f"VitaBench data not found at {path}")
    env = gym.make("servicegym/InStore-v0", tasks=str(path))
    u = env.unwrapped
    checked = 0
    for tid in u.task_ids():
        task = u.source.get(tid)
        items = [i for i in _time_items(task) if i.params["window"]["relation"] == "exact"]
        calls = [c["name"] for _, c in _calls(task.golden_actions)]
        made = [n for n in ("instore_reservation", "instore_book") if calls.count(n) == 1]
        if not items or len(made) != 1 or calls.count("instore_reservation") + calls.count("instore_book") != 1:
            continue  # one visit made in the episode, bounded by an exact time
        ok = _play(env, task.golden_actions, tid)
        assert ok["success"], tid
        for off, accepted in ((8, False), (-8, False), (4, True)):
            rec = _play(env, _shift(task.golden_actions, off, name=made[0], arg="time"), tid)
            assert rec["success"] is accepted, (tid, off, rec["score"])
            assert all(rec["score"][f"rubric/{i.name}"] == float(accepted) for i in items), (tid, off)
        checked += 1
        if checked == 8:
            break
    assert checked >= 5


def test_real_gold_time_no_longer_blocks_the_rubric(real_env: gym.Env) -> None:
    """Every order an item governs is matched without its gold time (``time_rule="rubric"``)."""
    for task in _timed(real_env):
        for item in _time_items(task):
            for s, refs in item.params["refs"].items():
                orders = {o["order_id"]: o for o in item.params["states"][int(s)]["orders"]}
                assert all(orders[r["id"]]["time_rule"] == "rubric" for r in refs), task.task_id


def test_real_state_rubric_copies_are_each_an_item(real_env: gym.Env) -> None:
    """Items are named by their index in ``Task.nl_rubric`` and carry its text."""
    for task in _timed(real_env):
        for item in _time_items(task):
            assert task.nl_rubric[item.params["nl_index"]] == item.description
            assert item.name == f"nl_time_{item.params['nl_index']}"
