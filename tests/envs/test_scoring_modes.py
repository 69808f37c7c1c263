"""Scoring modes of VitaBench-file tasks (issue 24): ``scoring="rubric"`` rewards what the rubric
states plus "no write the user never asked for"; ``scoring="strict"`` adds the gold end state.

The mini delivery task (tests/envs/test_vitabench.py) asks for two mild beef noodles home at
11:30 and the morning's tea cancelled. Its rubric here states only the delivery address and the
cancellation: the quantity, the option and the time are details only the gold holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401
from servicegym.envs.running.policies import run_episode
from servicegym.rewards.judge import SlidingWindowJudge
from servicegym.simulators.loopback import LoopbackServer
from tests.envs.test_vitabench import HOME, WORK, Scripted, _with_create_args, _write, mini_task

ENV_ID = "servicegym/Delivery-v0"
TID = "M0000001"


def _task() -> dict[str, Any]:
    raw = mini_task(TID)
    raw["evaluation_criteria"]["overall_rubrics"] = [f"The delivery address should be {HOME}", "tea order cancelled"]
    for state in raw["evaluation_criteria"]["expected_states"]:
        state["state_rubrics"] = ["The user must be told the total price"]  # read by no grammar: unchecked
    return raw


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return _write(tmp_path, [_task()])


def _run(env: gym.Env, actions: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record of the episode and its score."""
    rec = run_episode(env, Scripted(actions), seed=0, options={"task_id": TID})
    return rec, rec["score"]


def _both(path: Path, actions: list[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for mode in ("rubric", "strict"):
        env = gym.make(ENV_ID, tasks=str(path), scoring=mode)
        rec, score = _run(env, actions)
        out[mode] = {"success": rec["success"], **score}
    return out


def _golden(path: Path) -> list[str]:
    return gym.make(ENV_ID, tasks=str(path)).unwrapped.source.get(TID).golden_actions


def test_rubric_is_the_default_and_bad_modes_are_refused(path: Path) -> None:
    assert gym.make(ENV_ID, tasks=str(path)).unwrapped.scoring == "rubric"
    with pytest.raises(ValueError, match="scoring='rubric' or scoring='strict'"):
        gym.make(ENV_ID, tasks=str(path), scoring="lenient")


def test_golden_route_succeeds_in_both_modes_and_reports_both(path: Path) -> None:
    r = _both(path, _golden(path))
    for mode in ("rubric", "strict"):
        s = r[mode]
        assert s["success"] and s["success_rubric"] == 1.0 and s["success_strict"] == 1.0
        assert s["rubric/no_unrequested_writes"] == 1.0 and s["unrequested_writes"] == 0.0
    # strict counts the gold items, rubric does not
    assert r["strict"]["rubric_items"] == r["rubric"]["rubric_items"] + 3


@pytest.mark.parametrize(
    "changes",
    [
        {"product_cnts": [1]},                           # one bowl: no item speaks of the quantity
        {"attributes": ["Extra Spicy"]},                 # another option: no item names one
        {"dispatch_time": "2025-06-21 12:30:00"},        # another time: no item gives a time
    ],
)
def test_a_deviation_the_rubric_never_mentions_fails_only_strict(path: Path, changes: dict[str, Any]) -> None:
    r = _both(path, _with_create_args(_golden(path), **changes))
    assert r["rubric"]["success"] is True and r["rubric"]["success_strict"] == 0.0
    assert r["strict"]["success"] is False and r["strict"]["success_rubric"] == 1.0
    assert r["strict"]["rubric/required_orders"] == 0.0


def test_what_the_rubric_states_fails_both_modes(path: Path) -> None:
    golden = _golden(path)
    wrong_address = _both(path, _with_create_args(golden, address=WORK))
    kept_tea = _both(path, [a for a in golden if '"cancel_delivery_order"' not in a])
    for r in (wrong_address, kept_tea):
        assert r["rubric"]["success"] is False and r["strict"]["success"] is False
        assert r["rubric"]["success_rubric"] == 0.0 == r["rubric"]["success_strict"]


def test_writes_nobody_asked_for_fail_both_modes(path: Path) -> None:
    golden = _golden(path)
    create = next(a for a in golden if '"create_delivery_order"' in a)
    extra_order = golden[:-1] + [create, golden[-1]]
    paid_other = golden[:-1] + [json.dumps({"name": "pay_delivery_order", "arguments": {"order_id": f"{TID}O02"}}),
                                golden[-1]]
    look = json.dumps({"name": "get_delivery_order_status", "arguments": {"order_id": f"{TID}O02"}})
    cancelled_other = golden[:-1] + [look, json.dumps({"name": "cancel_delivery_order",
                                                       "arguments": {"order_id": f"{TID}O02"}}), golden[-1]]
    for actions in (extra_order, paid_other, cancelled_other):
        r = _both(path, actions)
        for mode in ("rubric", "strict"):
            assert r[mode]["success"] is False, (mode, actions[-2])
            assert r[mode]["rubric/no_unrequested_writes"] == 0.0 and r[mode]["unrequested_writes"] == 1.0


def test_an_order_created_then_cancelled_is_no_unrequested_write(path: Path) -> None:
    golden = _golden(path)
    create = next(a for a in golden if '"create_delivery_order"' in a)
    # a first attempt cancelled before the right order: nothing extra stays active
    detour = [create, json.dumps({"name": "get_delivery_order_status", "arguments": {"order_id": f"{TID}D01"}}),
              json.dumps({"name": "cancel_delivery_order", "arguments": {"order_id": f"{TID}D01"}})]
    r = _both(path, detour + golden)
    assert r["rubric"]["rubric/no_unrequested_writes"] == 1.0 and r["rubric"]["success"] is True


def test_each_item_reports_how_it_was_checked(path: Path) -> None:
    env = gym.make(ENV_ID, tasks=str(path))
    env.reset(seed=0, options={"task_id": TID})
    u = env.unwrapped
    info: dict[str, Any] = {}
    for action in u.task.golden_actions:
        _obs, _r, term, trunc, info = env.step(action)
        if term or trunc:
            break
    nl = u.task.nl_rubric
    items = info["rubric_items"]
    assert [i["index"] for i in items] == list(range(len(nl))) and [i["text"] for i in items] == nl
    by_text = {i["text"]: i for i in items}
    unread = by_text["The user must be told the total price"]
    assert unread["source"] == "unchecked" and unread["verdict"] is None
    assert by_text["tea order cancelled"]["source"] == "code" and by_text["tea order cancelled"]["verdict"] is True
    assert by_text["tea order cancelled"]["checks"][0]["check"] == "status cancelled"
    score = info["score"]
    k_unread = nl.index("The user must be told the total price")
    assert f"item/{k_unread}" not in score and score[f"item/{nl.index('tea order cancelled')}"] == 1.0
    assert score["rubric_items_unchecked"] == 1.0 and score["rubric_items_code"] == 2.0
    assert score["rubric_items_judge"] == 0.0 and score["rubric_nl_coverage"] == pytest.approx(2 / 3)
    details = u.episode_details()["rubric"]
    assert details["scoring"] == "rubric" and details["items"] == items and details["unrequested_writes"] == []
    env.reset(seed=0, options={"task_id": TID})
    assert u.episode_details() == {}, "a new episode reports nothing until it ends"


def test_unread_items_go_to_the_judge_and_the_state_items_stay_with_the_code(path: Path) -> None:
    asked: list[list[str]] = []

    def says_all_met(window, items, state):
        asked.append([i.text for i in items])
        return {i.key: "met" for i in items}

    golden = _golden(path)
    create = next(a for a in golden if '"create_delivery_order"' in a)
    for mode in ("rubric", "strict"):
        with LoopbackServer() as server:
            env = gym.make(ENV_ID, tasks=str(path), judge="llm", llm=server.config(), scoring=mode)
        env.unwrapped.llm_judge = SlidingWindowJudge(says_all_met)
        ok = run_episode(env, Scripted(golden), seed=0, options={"task_id": TID})
        assert ok["success"] and ok["score"]["success_rubric"] == 1.0 == ok["score"]["success_strict"]
        assert asked and all(texts == ["The user must be told the total price"] for texts in asked)
        assert ok["score"]["rubric_items_judge"] == 1.0 and ok["score"]["rubric_items_unchecked"] == 0.0
        judged = next(i for i in ok["details"]["rubric"]["items"] if i["source"] == "judge")
        assert judged["verdict"] is True
        # an extra order: the judge calls every item it sees met, the code's unrequested-writes check fails
        extra = run_episode(env, Scripted(golden[:-1] + [create, golden[-1]]), seed=0, options={"task_id": TID})
        assert extra["success"] is False and extra["score"]["success_rubric"] == 0.0
        # a silent deviation: the rubric mode accepts it, strict does not
        silent = run_episode(env, Scripted(_with_create_args(golden, product_cnts=[1])), seed=0,
                             options={"task_id": TID})
        assert silent["score"]["success_rubric"] == 1.0 and silent["score"]["success_strict"] == 0.0
        assert silent["success"] is (mode == "rubric")


def test_generated_tasks_score_alike_in_both_modes() -> None:
    for env_id in ("servicegym/Delivery-v0", "servicegym/InStore-v0"):
        recs = []
        for mode in ("rubric", "strict"):
            env = gym.make(env_id, split="test", scoring=mode)
            tid = env.unwrapped.task_ids("test")[0]
            golden = env.unwrapped.source.get(tid).golden_actions
            recs.append(run_episode(env, Scripted(golden[:-1]), seed=0, options={"task_id": tid}))
        assert recs[0]["score"] == recs[1]["score"] and recs[0]["success"] == recs[1]["success"]
        assert "success_rubric" not in recs[0]["score"]


def test_two_required_orders_sharing_one_id_are_told_apart(tmp_path: Path) -> None:
    """A gold file may give two required orders one id: the second becomes ``<id>~2`` (noted), and
    the rubric's item about each is tied to its own order."""
    from tests.envs.test_vitabench import _line, _order

    raw = _task()
    for st in raw["evaluation_criteria"]["expected_states"]:
        st["required_orders"].append(_order(f"{TID}T01", "S1", "delivered", [_line("P2", 1, 22)],
                                            dispatch_time="2025-06-21 12:00:00"))
    raw["evaluation_criteria"]["overall_rubrics"] = ["The beef noodles should be delivered around 12:00",
                                                     "The veggie noodles should be delivered around 12:30",
                                                     "tea order cancelled"]
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])))
    task = env.unwrapped.source.get(TID)
    assert any(f"share the id {TID}T01" in n for n in task.notes)
    refs = {i.name: i.params["refs"]["0"][0]["id"] for i in task.rubric if i.kind == "nl_time_window"}
    assert refs == {"nl_time_1": f"{TID}T01", "nl_time_2": f"{TID}T01~2"}
    golden = task.golden_actions
    assert run_episode(env, Scripted(golden), seed=0, options={"task_id": TID})["success"]
    # the two deliveries' times swapped: each item fails on its own order
    creates = [i for i, a in enumerate(golden) if '"create_delivery_order"' in a]
    swapped = list(golden)
    calls = [json.loads(golden[i]) for i in creates]
    times = [c["arguments"]["dispatch_time"] for c in calls]
    for i, c, t in zip(creates, calls, reversed(times)):
        c["arguments"]["dispatch_time"] = t
        swapped[i] = json.dumps(c)
    rec = run_episode(env, Scripted(swapped), seed=0, options={"task_id": TID})
    assert not rec["success"] and rec["score"]["rubric/nl_time_1"] == 0.0 and rec["score"]["rubric/nl_time_2"] == 0.0
