"""The travel env: registration, the generator (golden route succeeds, each violation breaks exactly
its rubric item, at every difficulty), the frozen suite, reasoning points, decoys, a legal route
other than the golden one, the random baseline, and VitaBench OTA files (hand-written tasks in
VitaBench's format, written to tmp_path: no copy of VitaBench's OTA file is available).
"""

from __future__ import annotations

import copy
import gzip
import json
import statistics
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.environments.travel import SUITE_PATH, TravelEnv
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy, run_episode
from servicegym.envs.tasks.generators.common import verify_task
from servicegym.envs.tasks.generators.travel import DEFAULT_DIFFICULTY, generate_travel_task, reasoning_points_for
from servicegym.envs.tasks.suites import build_suite
from servicegym.simulators.scripted_user import STOP
from tests.envs.test_vitabench import MAX_RANDOM_RATE, Scripted, check_malformed_file

ENV_ID = "servicegym/Travel-v0"


@pytest.fixture(scope="module")
def suite_env() -> TravelEnv:
    return gym.make(ENV_ID, split="test").unwrapped


def _calls(actions: list[str]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, json.loads(a)) for i, a in enumerate(actions) if a.startswith("{")]


def _score(env: gym.Env, actions: list[str], **options: Any) -> dict[str, Any]:
    rec = run_episode(env, Scripted(actions), seed=0, options=options)
    return {k.split("/", 1)[1]: v for k, v in rec["score"].items() if k.startswith("rubric/")} | {
        "success": rec["success"]
    }


# ----- the env ---------------------------------------------------------------------------------
def test_registered_with_38_tools(suite_env: TravelEnv) -> None:
    obs, info = suite_env.reset(seed=1)
    assert info["domain"] == "travel" and len(info["tools"]) == 38 and obs
    assert "servicegym/Travel-v0" in servicegym.ENV_IDS
    sections = {line.strip() for line in TravelEnv.__doc__.splitlines()}
    assert {"## Description", "## Action Space", "## Reward", "## Arguments", "## Version History"} <= sections


def test_solutions_stay_out_of_observations(suite_env: TravelEnv) -> None:
    tid = suite_env.task_ids("test")[0]
    obs, info = suite_env.reset(seed=0, options={"task_id": tid})
    task = suite_env.task
    seen = obs + json.dumps(info, ensure_ascii=False)
    assert task.golden_actions[-1] not in seen and "violations" not in seen


def test_generated_tasks_are_deterministic() -> None:
    assert generate_travel_task(3, 4).model_dump() == generate_travel_task(3, 4).model_dump()
    assert generate_travel_task(3, 4).model_dump() != generate_travel_task(3, 4, "test").model_dump()
    with pytest.raises(ValueError, match="split"):
        generate_travel_task(0, 3, "validation")


# ----- generated tasks ---------------------------------------------------------------------------
def test_frozen_suite_is_the_generators_output(tmp_path: Path) -> None:
    """The shipped suite is exactly what the generator makes; a generator change must rebuild it."""
    rebuilt = tmp_path / "travel_test.json.gz"
    build_suite("travel", rebuilt)
    with gzip.open(rebuilt) as a, gzip.open(SUITE_PATH) as b:
        assert a.read() == b.read(), "generator changed: bump the env version and run scripts/build_suites.py travel"


def test_oracle_succeeds_on_the_whole_frozen_suite(suite_env: TravelEnv) -> None:
    ids = suite_env.task_ids("test")
    assert len(ids) == 100
    failed = [t for t in ids if not run_episode(suite_env, OraclePolicy(), seed=0, options={"task_id": t})["success"]]
    assert not failed, failed[:5]


def test_suite_points_centre_on_vitabench_ota(suite_env: TravelEnv) -> None:
    points = [suite_env.source.get(t).reasoning_points for t in suite_env.task_ids("test")]
    assert statistics.median(points) == 10 and set(points) == {8, 10, 12}  # VitaBench OTA: 9.7


@pytest.mark.parametrize("difficulty", range(7))
def test_generated_train_tasks_verify(difficulty: int) -> None:
    env = TravelEnv(tasks=[generate_travel_task(0, difficulty)], check_postconditions=True)
    for seed in range(2000, 2005):
        task = generate_travel_task(seed, difficulty)
        assert task.reasoning_points == reasoning_points_for(difficulty) == 4 + 2 * difficulty
        assert set(task.violations) == {i.name for i in task.rubric}, "every rubric item has a violation"
        assert verify_task(env, task) == [], task.task_id


def test_median_reasoning_points_at_default_difficulty() -> None:
    env = gym.make(ENV_ID)
    points = []
    for seed in range(30):
        env.reset(seed=seed)
        points.append(env.unwrapped.task.reasoning_points)
    assert DEFAULT_DIFFICULTY == 3 and statistics.median(points) in (9, 10), points  # VitaBench OTA: 9.7


def test_suite_covers_every_constraint_and_the_date_change(suite_env: TravelEnv) -> None:
    tasks = [suite_env.source.get(t) for t in suite_env.task_ids("test")]
    items = {i.name for t in tasks for i in t.rubric}
    assert {
        "outbound",
        "check_in",
        "nights",
        "arrive_by",
        "depart_after",
        "seat_class",
        "ticket_budget",
        "travellers",
        "hotel_distance",
        "hotel_rating",
        "hotel_tag",
        "room_type",
        "hotel_price",
        "attraction",
        "ticket_date",
        "ticket_type",
        "ticket_quantity",
        "cancel_mistaken",
        "keep_other_order",
        "informed_changes",
    } <= items
    moved = [t for t in tasks if t.user.intent_change]
    assert moved and all(any('"modify_' in a for a in t.golden_actions) for t in moved)
    golden = " ".join(a for t in moved for a in t.golden_actions)
    assert "extra, which has been paid" in golden and "the cheaper fare saves you" in golden, "both kinds of difference"
    assert any('"get_holiday_date"' in a for t in tasks for a in t.golden_actions)
    assert {t.world["flights"] != [] and t.world["trains"] != [] for t in tasks} == {True}


def _task_with(items: set[str], difficulty: int = 6) -> Any:
    return next(
        t for t in (generate_travel_task(s, difficulty) for s in range(300)) if items <= {i.name for i in t.rubric}
    )


def test_decoys_are_in_the_world() -> None:
    task = _task_with({"arrive_by", "depart_after", "ticket_budget", "hotel_distance", "hotel_rating", "room_type"})
    w = task.world
    params = {i.name: i.params for i in task.rubric}
    mode = params["outbound"]["order_type"]
    services = [
        s
        for s in w[f"{mode}s"]
        if s["departure_city"] == params["outbound"]["departure_city"]
        and s["arrival_city"] == params["outbound"]["arrival_city"]
    ]
    assert any(s["arrival_time"] > params["arrive_by"]["by"] for s in services), "a flight landing too late"
    assert any(s["departure_time"] < params["depart_after"]["after"] for s in services), "one leaving too early"
    names = [h["hotel_name"].split(" (")[0] for h in w["hotels"]]
    assert len(set(names)) == len(names) >= 6, "look-alike hotels under other names"
    assert any(h["score"] < params["hotel_rating"]["min_score"] for h in w["hotels"])
    assert any(r["quantity"] == 0 for r in w["hotel_rooms"]), "a room sold out on one night"
    assert len({r["room_type"] for r in w["hotel_rooms"]}) >= 3


def test_closed_attraction_has_no_tickets_on_the_visit_day() -> None:
    task = _task_with({"attraction", "ticket_date"}, difficulty=3)
    p = {i.name: i.params for i in task.rubric}
    target, closed = p["attraction"]["attraction_ids"]
    day = p["ticket_date"]["date"]
    sold = {(t["attraction_id"], t["date"]) for t in task.world["attraction_tickets"]}
    assert (target, day) in sold and (closed, day) not in sold
    assert "closed on" in next(a for a in task.world["attractions"] if a["attraction_id"] == closed)["opening_hours"]


def test_cancelling_and_rebooking_instead_of_moving_also_succeeds() -> None:
    """Scoring reads the final state, so another legal route to it passes: cancel the ticket and
    book the new day (telling the user the refund) rather than modify it."""
    task = next(t for t in (generate_travel_task(s, 4) for s in range(200)) if t.user.intent_change)
    env = TravelEnv(tasks=[task])
    actions = list(task.golden_actions)
    calls = _calls(actions)
    i, modify = next((i, c) for i, c in calls if c["name"].startswith("modify_"))
    kind = modify["name"].split("_")[1]
    create = next(c for _, c in calls if c["name"] == f"create_{kind}_order")["arguments"]
    owner = create[f"{kind}_id"]
    seat_type = next(s["seat_type"] for s in task.world[f"{kind}_seats"] if s["product_id"] == create["seat_id"])
    new_date = modify["arguments"]["new_date"]
    new_seat = next(
        s
        for s in task.world[f"{kind}_seats"]
        if s[f"{kind}_id"] == owner and s["seat_type"] == seat_type and s["date"] == new_date
    )
    old_total = (
        next(s["price"] for s in task.world[f"{kind}_seats"] if s["product_id"] == create["seat_id"])
        * create["quantity"]
    )
    oid = modify["arguments"]["order_id"]
    new_oid = oid[:-2] + "02"
    end = i + 1 + int(i + 1 < len(actions) and f'"pay_{kind}_order"' in actions[i + 1])
    replacement = [
        json.dumps({"name": f"cancel_{kind}_order", "arguments": {"order_id": oid, "user_id": create["user_id"]}}),
        json.dumps(
            {
                "name": f"create_{kind}_order",
                "arguments": create | {"seat_id": new_seat["product_id"], "date": new_date},
            }
        ),
        json.dumps({"name": f"pay_{kind}_order", "arguments": {"order_id": new_oid}}),
    ]
    actions[i:end] = replacement
    actions[-1] = actions[-1].replace(
        "All done:", f"All done: the old ticket was cancelled and {old_total:.0f} yuan refunded;"
    )
    assert _score(env, actions, task_id=task.task_id)["success"]
    broken = [a for a in actions if f'"pay_{kind}_order", "arguments": {{"order_id": "{new_oid}"' not in a]
    assert _score(env, broken, task_id=task.task_id)["transport_paid"] == 0.0


def test_random_policy_rarely_succeeds(suite_env: TravelEnv) -> None:
    ids = suite_env.task_ids("test")
    wins = [
        t
        for k, t in enumerate(ids)
        if run_episode(suite_env, RandomPolicy(seed=k), seed=k, options={"task_id": t})["success"]
    ]
    assert len(wins) / len(ids) <= MAX_RANDOM_RATE, wins


# ----- hand-written tasks in VitaBench's OTA format ---------------------------------------------
UID = "U000077"
HOME = "Room 501, No. 8 Lotus Road, Xuhui District, Shanghai"


def _loc(address: str, lon: float, lat: float) -> dict[str, Any]:
    return {"address": address, "longitude": lon, "latitude": lat}


def _product(
    pid: str, date: str, price: float, type_key: str, type_name: str, quantity: int | None = 9
) -> dict[str, Any]:
    row = {"product_id": pid, "price": price, "date": date, type_key: type_name}
    if quantity is not None:
        row["quantity"] = quantity
    return row


def _line(pid: str, date: str, price: float, type_key: str, type_name: str, quantity: int = 1) -> dict[str, Any]:
    return {"product_id": pid, "price": price, "quantity": quantity, "date": date, type_key: type_name}


def _order(oid: str, kind: str, store: str, status: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "order_id": oid,
        "order_type": kind,
        "user_id": UID,
        "store_id": store,
        "total_price": sum(x["price"] * x["quantity"] for x in lines),
        "create_time": "2025-06-20 09:00:00",
        "update_time": "2025-06-20 09:00:00",
        "status": status,
        "products": lines,
    }


def mini_ota_task(task_id: str = "OTA0001") -> dict[str, Any]:
    """Fly two to Hangzhou on 07-10 (economy), two nights in a twin room, two museum tickets on 07-11;
    move the pre-existing train from 07-15 to 07-16 (20 yuan dearer); cancel the unpaid spare
    flight; leave the paid hotel in Ningbo alone. Times and dates are in VitaBench's loose forms."""
    sh_airport = _loc("Shanghai Airport, Shanghai", 121.80, 31.14)
    gold = [
        _order(f"{task_id}N1", "flight", "F1", "paid", [_line("F1E10", "2025-07-10", 420, "seat_type", "Economy", 2)]),
        _order(
            f"{task_id}N2",
            "hotel",
            "H1",
            "paid",
            [
                _line("H1T10", "2025-07-10", 500, "room_type", "Twin Room"),
                _line("H1T11", "2025-07-11", 560, "room_type", "Twin Room"),
            ],
        ),
        _order(
            f"{task_id}N3", "attraction", "A1", "paid", [_line("A1S11", "2025-07-11", 60, "ticket_type", "Standard", 2)]
        ),
        _order(f"{task_id}O1", "train", "T2", "paid", [_line("T2S16", "2025-07-16", 150, "seat_type", "Second Class")]),
        _order(
            f"{task_id}O2", "flight", "F2", "cancelled", [_line("F2E20", "2025-07-20", 380, "seat_type", "Economy")]
        ),
    ]
    return {
        "id": task_id,
        "domain": "ota",
        "instructions": "You are going to Hangzhou with a colleague on July 10. You want to fly in economy, "
        "stay two nights in a twin room at the Lakeside Hotel and visit the museum on July 11. "
        "Move your train to Suzhou from July 15 to July 16 and cancel the spare flight on July 20.",
        "user_scenario": {"user_profile": {"user id": UID, "home address": HOME, "personality": "calm and polite"}},
        "environment": {
            "time": "2025-07-01 10:00:00",
            "user_id": UID,
            "weather": [{"city": "Hangzhou", "category": "sunny", "datetime": "2025-07-10", "temperature": [24, 33]}],
            "location": [_loc(HOME, 121.44, 31.19)],
            "user_historical_behaviors": {"user id": UID, "residence": "Shanghai"},
            "orders": {
                f"{task_id}O1": _order(
                    f"{task_id}O1",
                    "train",
                    "T2",
                    "paid",
                    [_line("T2S15", "2025-07-15", 130, "seat_type", "Second Class")],
                ),
                f"{task_id}O2": _order(
                    f"{task_id}O2",
                    "flight",
                    "F2",
                    "unpaid",
                    [_line("F2E20", "2025-07-20", 380, "seat_type", "Economy")],
                ),
                f"{task_id}O3": _order(
                    f"{task_id}O3", "hotel", "H2", "paid", [_line("H2K20", "2025-07-20", 300, "room_type", "King Room")]
                ),
            },
            "hotels": {
                "H1": {
                    "hotel_id": "H1",
                    "hotel_name": "Lakeside Hotel",
                    "score": 4.7,
                    "star_rating": 4,
                    "location": _loc("No. 1 Lake Road, Xihu District, Hangzhou", 120.15, 30.25),
                    "tags": ["Free breakfast"],
                    "products": [
                        _product("H1T10", "2025-07-10", 500, "room_type", "Twin Room"),
                        _product("H1T11", "2025-07-11", 560, "room_type", "Twin Room"),
                        _product("H1K10", "2025-07-10", 450, "room_type", "King Room"),
                        _product("H1K11", "2025-07-11", 480, "room_type", "King Room", quantity=0),
                    ],
                },
                "H2": {
                    "hotel_name": "Harbor Inn",
                    "score": 4.1,
                    "star_rating": 3,
                    "location": _loc("No. 9 Harbor Road, Jiangbei District, Ningbo", 121.55, 29.88),
                    "products": [_product("H2K20", "2025-07-20", 300, "room_type", "King Room")],
                },
            },
            "attractions": {
                "A1": {
                    "attraction_id": "A1",
                    "attraction_name": "Hangzhou City Museum",
                    "score": 4.8,
                    "location": _loc("No. 5 Museum Road, Shangcheng District, Hangzhou", 120.17, 30.26),
                    "description": "History museum",
                    "opening_hours": "09:00-17:00",
                    "ticket_price": 60,
                    "products": [_product("A1S11", "2025-07-11", 60, "ticket_type", "Standard", quantity=None)],
                },
            },
            "flights": {
                "F1": {
                    "flight_id": "F1",
                    "flight_number": "CW1001",
                    "departure_city": "Shanghai",
                    "arrival_city": "Hangzhou",
                    "departure_airport_location": sh_airport,
                    "arrival_airport_location": _loc("Hangzhou Airport, Hangzhou", 120.43, 30.23),
                    "departure_time": "08:00:00",
                    "arrival_time": "2025-07-10 09:00:00",
                    "tags": ["Direct"],
                    "products": [
                        _product("F1E10", "2025-07-10", 420, "seat_type", "Economy"),
                        _product("F1B10", "2025-07-10", 900, "seat_type", "Business"),
                    ],
                },
                "F2": {
                    "flight_id": "F2",
                    "flight_number": "CW2002",
                    "departure_city": "Shanghai",
                    "arrival_city": "Ningbo",
                    "departure_airport_location": sh_airport,
                    "arrival_airport_location": _loc("Ningbo Airport, Ningbo", 121.46, 29.82),
                    "departure_time": "18:00",
                    "arrival_time": "19:00",
                    "tags": [],
                    "products": [_product("F2E20", "2025-07-20", 380, "seat_type", "Economy")],
                },
            },
            "trains": {
                "T2": {
                    "train_id": "T2",
                    "train_number": "G7001",
                    "departure_city": "Shanghai",
                    "arrival_city": "Suzhou",
                    "departure_station_location": _loc("Shanghai Station, Shanghai", 121.45, 31.25),
                    "arrival_station_location": _loc("Suzhou Station, Suzhou", 120.61, 31.33),
                    "departure_time": "09:00",
                    "arrival_time": "09:30",
                    "tags": ["High-speed"],
                    "products": [
                        _product("T2S15", "2025-07-15", 130, "seat_type", "Second Class"),
                        _product("T2S16", "2025-07-16", 150, "seat_type", "Second Class"),
                    ],
                },
            },
        },
        "evaluation_criteria": {
            "expected_states": [
                {"required_orders": gold, "optional_orders": [], "state_rubrics": ["..."]},
                {"required_orders": copy.deepcopy(gold), "optional_orders": [], "state_rubrics": ["..."]},
            ],
            "overall_rubrics": ["flight", "hotel", "museum", "train moved", "flight cancelled", "hotel kept"],
        },
    }


def _write(tmp_path: Path, tasks: list[dict[str, Any]], name: str = "ota.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def ota_env(tmp_path: Path) -> gym.Env:
    return gym.make(ENV_ID, tasks=str(_write(tmp_path, [mini_ota_task()])), scoring="strict")


def test_ota_file_converts(ota_env: gym.Env) -> None:
    task = ota_env.unwrapped.source.get("OTA0001")
    assert task.source == "vitabench" and task.domain == "travel"
    # "flight cancelled" compiles to a status item (rewards/nl_rubric/): its notes are the only ones
    assert all(n.startswith(("nl_status_", "natural-language rubric:")) for n in task.notes)
    assert task.reasoning_points == 6 and task.user.opening.startswith("I am going to Hangzhou")
    flight = next(f for f in task.world["flights"] if f["flight_id"] == "F1")
    assert (flight["departure_time"], flight["arrival_time"]) == ("08:00", "09:00"), "loose times normalised"
    assert {r["product_id"]: r["quantity"] for r in task.world["attraction_tickets"]} == {"A1S11": None}
    states = task.rubric[0].params["states"]
    assert len(states) == 1, "duplicate expected states collapse into one"
    kinds = {o["order_id"]: o["kind"] for o in states[0]["orders"]}
    assert kinds == {
        "OTA0001N1": "new",
        "OTA0001N2": "new",
        "OTA0001N3": "new",
        "OTA0001O1": "existing",
        "OTA0001O2": "existing",
    }
    names = [json.loads(a)["name"] for a in task.golden_actions[:-1]]
    assert names == [
        "get_train_order_detail",
        "modify_train_order",
        "pay_train_order",
        "get_flight_order_detail",
        "cancel_flight_order",
        "create_flight_order",
        "pay_flight_order",
        "create_hotel_order",
        "pay_hotel_order",
        "create_attraction_order",
        "pay_attraction_order",
    ]
    assert STOP in task.golden_actions[-1]


def test_ota_oracle_succeeds(ota_env: gym.Env) -> None:
    rec = run_episode(ota_env, OraclePolicy(), seed=0, options={"task_id": "OTA0001"})
    assert rec["success"] and rec["tool_errors"] == 0 and rec["termination_reason"] == "agent_stop"


def _with_args(actions: list[str], tool: str, **changes: Any) -> list[str]:
    out = list(actions)
    i, c = next((i, c) for i, c in _calls(out) if c["name"] == tool)
    c["arguments"].update(changes)
    out[i] = json.dumps(c)
    return out


@pytest.mark.parametrize(
    ("tool", "changes", "failed"),
    [
        ("create_flight_order", {"seat_id": "F1B10"}, "required_orders"),  # business, not economy
        ("create_flight_order", {"quantity": 1}, "required_orders"),
        ("create_hotel_order", {"check_out_date": "2025-07-11"}, "required_orders"),  # one night
        ("create_attraction_order", {"quantity": 3}, "required_orders"),
    ],
)
def test_ota_orders_match_by_content(ota_env: gym.Env, tool: str, changes: dict[str, Any], failed: str) -> None:
    golden = ota_env.unwrapped.source.get("OTA0001").golden_actions
    score = _score(ota_env, _with_args(golden, tool, **changes), task_id="OTA0001")
    assert not score["success"] and score[failed] == 0.0


def test_ota_each_item_can_fail(ota_env: gym.Env) -> None:
    golden = ota_env.unwrapped.source.get("OTA0001").golden_actions
    # "flight cancelled" is a status item checked by code (rewards/nl_rubric/)
    ok = {"required_orders": 1.0, "no_unrequested_orders": 1.0, "untouched_orders": 1.0, "no_unrequested_writes": 1.0, "nl_status_5": 1.0,
          "success": True}
    assert _score(ota_env, golden, task_id="OTA0001") == ok
    unmoved = [a for a in golden if '"modify_train_order"' not in a and '"pay_train_order"' not in a]
    assert _score(ota_env, unmoved, task_id="OTA0001")["required_orders"] == 0.0, "the train must move to 07-16"
    extra = golden[:-1] + [a for a in golden if '"create_attraction_order"' in a] + [golden[-1]]
    assert _score(ota_env, extra, task_id="OTA0001") == ok | {"no_unrequested_orders": 0.0, "no_unrequested_writes": 0.0, "success": False}
    touched = golden[:-1] + [
        json.dumps({"name": "get_hotel_order_detail", "arguments": {"order_id": "OTA0001O3"}}),
        json.dumps({"name": "cancel_hotel_order", "arguments": {"order_id": "OTA0001O3", "user_id": UID}}),
        golden[-1],
    ]
    assert _score(ota_env, touched, task_id="OTA0001") == ok | {"untouched_orders": 0.0, "no_unrequested_writes": 0.0, "success": False}


def test_ota_unrequested_date_change_is_not_untouched(tmp_path: Path) -> None:
    raw = mini_ota_task()
    raw["environment"]["trains"]["T2"]["products"].append(
        _product("T2S17", "2025-07-17", 150, "seat_type", "Second Class")
    )
    for st in raw["evaluation_criteria"]["expected_states"]:
        st["required_orders"] = [o for o in st["required_orders"] if o["order_id"] != "OTA0001O1"]
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    golden = env.unwrapped.source.get("OTA0001").golden_actions
    assert _score(env, golden, task_id="OTA0001")["success"]
    moved = golden[:-1] + [
        json.dumps({"name": "get_train_order_detail", "arguments": {"order_id": "OTA0001O1"}}),
        json.dumps(
            {
                "name": "modify_train_order",
                "arguments": {"order_id": "OTA0001O1", "user_id": UID, "new_date": "2025-07-17"},
            }
        ),
        golden[-1],
    ]
    assert _score(env, moved, task_id="OTA0001")["untouched_orders"] == 0.0


def test_ota_product_ids_reused_across_dates_are_made_unique(tmp_path: Path) -> None:
    raw = mini_ota_task()
    rooms = raw["environment"]["hotels"]["H1"]["products"]
    rooms[1]["product_id"] = "H1T10"  # the twin room keeps one id for both nights
    for st in raw["evaluation_criteria"]["expected_states"]:
        st["required_orders"][1]["products"][1]["product_id"] = "H1T10"
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    task = env.unwrapped.source.get("OTA0001")
    assert any("listed more than once" in n for n in task.notes)
    assert "H1T10@2025-07-11" in {r["product_id"] for r in task.world["hotel_rooms"]}
    assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": "OTA0001"})["success"]


def _mutated(mutate) -> list[dict[str, Any]]:
    tasks = [mini_ota_task("OTA0001"), mini_ota_task("OTA0002")]
    mutate(tasks)
    return tasks


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda t: t[1]["environment"]["flights"]["F1"]["products"][0].update(price="cheap"),
            "task OTA0002 (index 1): field environment.flights.F1.products.0.price: Input should be a valid number",
        ),
        (
            lambda t: t[0]["environment"]["hotels"]["H1"]["products"][0].pop("room_type"),
            "task OTA0001 (index 0): field environment.hotels.H1.products.0.room_type",
        ),
        (
            lambda t: t[1]["environment"]["trains"]["T2"].update(departure_time="morning"),
            "task OTA0002 (index 1): field environment.trains.T2.departure_time",
        ),
        (
            lambda t: t[0]["environment"]["attractions"]["A1"]["products"][0].update(date="soon"),
            "task OTA0001 (index 0): field environment.attractions.A1.products.0.date",
        ),
        (
            lambda t: t[1]["evaluation_criteria"]["expected_states"][0]["required_orders"][0]["products"][0].update(
                quantity="two"
            ),
            "task OTA0002 (index 1): field evaluation_criteria.expected_states.0.required_orders.0.products.0.quantity",
        ),
        (
            lambda t: t[0]["environment"]["orders"]["OTA0001O1"].update(status="done"),
            "task OTA0001 (index 0): field environment.orders.OTA0001O1.status",
        ),
        (lambda t: t[1].update(domain="delivery"), "task OTA0002 (index 1): field domain: is 'delivery'"),
        (lambda t: t[1]["environment"].pop("time"), "task OTA0002 (index 1): field environment.time: Field required"),
    ],
)
def test_malformed_ota_file_skips_or_fails_strict(tmp_path: Path, mutate, expected: str) -> None:
    check_malformed_file(ENV_ID, _write(tmp_path, _mutated(mutate)), expected)
