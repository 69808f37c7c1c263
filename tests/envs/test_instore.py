"""The in-store env: registration, the generator (every task verified: golden route succeeds,
each violation breaks exactly its rubric item), the frozen suite, reasoning points, the random
baseline, and VitaBench in-store files (a hand-written task in VitaBench's format, always run;
the real file, skipped when the data is absent: ``$SERVICEGYM_VITABENCH_DIR`` or else
``shared/data/vitabench`` beside the repository root).
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
from servicegym.envs.environments.instore import SUITE_PATH, InStoreEnv
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy, run_episode
from servicegym.envs.tasks.generators.common import verify_task
from servicegym.envs.tasks.generators.instore import CONSTRAINTS, generate_instore_task
from servicegym.envs.tasks.suites import build_suite
from servicegym.simulators.scripted_user import STOP
from tests.envs.test_vitabench import (
    DATA_DIR,
    MAX_RANDOM_RATE,
    MIN_ORACLE_RATE,
    Scripted,
    assert_whole_file_loads,
    check_malformed_file,
)

ENV_ID = "servicegym/InStore-v0"
INSTORE_FILE = DATA_DIR / "instore" / "tasks_en.json"

# Tasks of the real English file whose golden route cannot reach any expected state, by task id.
# Each is a defect of the VitaBench gold data that no conversion rule can repair honestly; the
# loader skips the task with the reason ("no golden route reaches an expected state").
KNOWN_ORACLE_FAILURES: dict[str, str] = {
    "10826077": (
        "required order 10826077T001 buys 'Fencing Basics Single Trial Class' (P00020) at Jianfeng Fencing Club, "
        "whose stock is 0: the public code never checked stock, here a sold-out product cannot be bought (and the "
        "task's own state rubric says no basic trial class is available, so the gold contradicts itself)"
    ),
}


@pytest.fixture(scope="module")
def suite_env() -> InStoreEnv:
    return gym.make(ENV_ID, split="test").unwrapped


# ----- the env ---------------------------------------------------------------------------------
def test_registered_with_24_tools(suite_env: InStoreEnv) -> None:
    obs, info = suite_env.reset(seed=1)
    assert info["domain"] == "instore" and len(info["tools"]) == 24 and obs
    assert "servicegym/InStore-v0" in servicegym.ENV_IDS
    assert {"## Description", "## Reward", "## Version History"} <= {line.strip() for line in InStoreEnv.__doc__.splitlines()}


def test_generated_tasks_are_deterministic() -> None:
    assert generate_instore_task(3, 4).model_dump() == generate_instore_task(3, 4).model_dump()
    assert generate_instore_task(3, 4).model_dump() != generate_instore_task(3, 4, "test").model_dump()


# ----- generated tasks ---------------------------------------------------------------------------
def test_frozen_suite_is_the_generators_output(tmp_path: Path) -> None:
    """The shipped suite is exactly what the generator makes; a generator change must rebuild it."""
    rebuilt = tmp_path / "instore_test.json.gz"
    build_suite("instore", rebuilt)
    with gzip.open(rebuilt) as a, gzip.open(SUITE_PATH) as b:
        assert a.read() == b.read(), "generator changed: bump the env version and run scripts/build_suites.py instore"


def test_every_suite_task_verifies(suite_env: InStoreEnv) -> None:
    """Oracle 100% on the frozen suite, and every violation trajectory fails exactly its item."""
    ids = suite_env.task_ids("test")
    assert len(ids) == 100
    problems = {tid: p for tid in ids if (p := verify_task(suite_env, suite_env.source.get(tid)))}
    assert not problems, dict(list(problems.items())[:3])


@pytest.mark.parametrize("difficulty", [0, 1, 2, 3, 5, 6])
def test_generated_train_tasks_verify(difficulty: int) -> None:
    env = InStoreEnv(tasks=[generate_instore_task(0, difficulty)])
    for seed in range(1000, 1008):
        task = generate_instore_task(seed, difficulty)
        assert task.reasoning_points == 3 + difficulty
        assert set(task.violations) == {i.name for i in task.rubric}, "every rubric item has a violation"
        assert verify_task(env, task) == [], task.task_id


def test_median_reasoning_points_at_default_difficulty() -> None:
    env = gym.make(ENV_ID)
    points = []
    for seed in range(40):
        env.reset(seed=seed)
        points.append(env.unwrapped.task.reasoning_points)
    assert statistics.median(points) in (5, 6), points  # VitaBench in-store: 5.6


def test_suite_covers_every_constraint_and_both_changes_of_intent(suite_env: InStoreEnv) -> None:
    tasks = [suite_env.source.get(t) for t in suite_env.task_ids("test")]
    items = {i.name for t in tasks for i in t.rubric}
    assert {"shop_rating", "shop_feature", "shop_distance", "budget", "diet", "quantity", "booking_paid",
            "cancel_mistaken", "keep_other"} <= items
    kinds = {t.user.intent_change.trigger for t in tasks if t.user.intent_change}
    assert kinds == {"first_confirmation", "first_done"}
    time_changes = [t for t in tasks if t.user.intent_change and t.user.intent_change.trigger == "first_done"]
    assert all(any('"instore_modify_reservation"' in a for a in t.golden_actions) for t in time_changes)
    assert len(CONSTRAINTS) == 10


def test_decoys_are_in_the_world() -> None:
    """A task with every constraint holds each look-alike shop and each variant the docs promise."""
    wanted = {"shop_rating", "shop_feature", "shop_distance", "budget"}
    tasks = (generate_instore_task(seed, 6) for seed in range(200))
    task = next(t for t in tasks if wanted <= {i.name for i in t.rubric})
    shops = task.world["shops"]
    by_name = {}
    for p in task.world["shop_products"]:
        by_name.setdefault(p["name"], set()).add(p["shop_id"])
    target_product = next(i for i in task.rubric if i.name == "product").params["product_ids"][0]
    target = next(p for p in task.world["shop_products"] if p["product_id"] == target_product)
    twins = by_name[target["name"]]
    assert len(twins) >= 5, "the same package is sold by look-alike shops"
    assert any(s["open_time"] == "07:00" for s in shops if s["shop_id"] in twins), "a look-alike is closed at visit time"
    assert any(p["name"].startswith("Deluxe ") for p in task.world["shop_products"]), "a dearer variant"


def test_random_policy_rarely_succeeds(suite_env: InStoreEnv) -> None:
    ids = suite_env.task_ids("test")
    wins = [t for k, t in enumerate(ids) if run_episode(suite_env, RandomPolicy(seed=k), seed=k, options={"task_id": t})["success"]]
    assert len(wins) / len(ids) <= MAX_RANDOM_RATE, wins


# ----- a hand-written task in VitaBench's in-store format ----------------------------------------
USER = "U500001"
NOW = "2025-06-20 10:00:00"
HOME = {"address": "Room 3, 8 Lake Road, Xiaodian District, Taiyuan", "longitude": 112.57, "latitude": 37.78}


def _shop(sid: str, name: str, *, book: bool, fee: float, reserve: bool, products: list[dict]) -> dict[str, Any]:
    return {"shop_id": sid, "shop_name": name, "score": 4.7, "tags": ["Gym"], "category": "other in-store services",
            "shop_type": "target", "enable_book": book, "book_price": fee, "enable_reservation": reserve,
            "location": {"address": f"{name}, Taiyuan", "longitude": 112.58, "latitude": 37.79}, "products": products}


def _p(pid: str, sid: str, name: str, price: float, qty: int) -> dict[str, Any]:
    return {"product_id": pid, "name": name, "price": price, "shop_id": sid, "tags": ["Voucher"], "quantity": qty,
            "product_type": "target"}


def _order(oid: str, sid: str, status: str, lines: list[tuple[str, int, float]]) -> dict[str, Any]:
    return {"order_id": oid, "order_type": "instore", "user_id": USER, "store_id": sid, "note": "", "location": None,
            "dispatch_time": "", "shipping_time": None, "delivery_time": "", "total_price": sum(q * p for _, q, p in lines),
            "create_time": NOW, "update_time": NOW, "status": status,
            "products": [{"product_id": pid, "name": "x", "price": p, "quantity": q} for pid, q, p in lines]}


def mini_instore_task(task_id: str = "M1") -> dict[str, Any]:
    """Buy two swim vouchers and reserve for two at 16:00 tomorrow; book a table for 3 at the
    restaurant (20 yuan fee) at 18:30 and buy one set meal and one dessert there; cancel the old
    sauna reservation. The gold has the quirks of the real files: a reservation at a booking-only
    shop, a time without seconds, two products in one order."""
    sid_gym, sid_food, sid_sauna = "S1_I00001", "S1_I00002", "S1_I00003"
    gold = [
        _order(f"{task_id}T001", sid_gym, "paid", [("S1_P00001", 2, 68)]),
        {"reservation_id": f"{task_id}T002", "shop_id": sid_gym, "reservation_time": "2025-06-21 16:00:00",
         "update_time": NOW, "customer_id": USER, "customer_count": 2, "status": "paid"},
        _order(f"{task_id}T003", sid_food, "paid", [("S1_P00011", 1, 288), ("S1_P00012", 1, 30)]),
        {"reservation_id": f"{task_id}T004", "shop_id": sid_food, "reservation_time": "2025-06-21 18:30",
         "update_time": NOW, "customer_id": USER, "customer_count": 3, "status": "paid"},
        {"reservation_id": f"{task_id}S01", "shop_id": sid_sauna, "reservation_time": "2025-06-22 15:00:00",
         "update_time": NOW, "customer_id": USER, "customer_count": 1, "status": "cancelled"},
    ]
    return {
        "id": task_id,
        "domain": "in-store consumption",
        "message_history": [],
        "instructions": "You want to learn to swim with your son and buy two swimming vouchers, then reserve for "
                        "tomorrow at 4 PM. Afterwards the three of you want dinner at 6:30 PM at the restaurant next "
                        "door: the family set and a dessert. Cancel your sauna reservation on Sunday.",
        "user_scenario": {"user_profile": {"user id": USER, "home address": HOME["address"],
                                           "personality": "Calm and patient"}},
        "environment": {
            "time": NOW,
            "user_id": USER,
            "orders": {},
            "weather": [{"city": "Taiyuan", "category": "sunny", "datetime": "2025-06-21", "temperature": [20, 30],
                         "humidity": 40}],
            "location": [HOME],
            "shops": {
                sid_gym: _shop(sid_gym, "Blue Wave Swim Club", book=False, fee=0, reserve=True,
                               products=[_p("S1_P00001", sid_gym, "Swim Voucher", 68, 5),
                                         _p("S1_P00002", sid_gym, "Swim Month Card", 680, 3)]),
                sid_food: _shop(sid_food, "Garden Bistro", book=True, fee=20, reserve=False,
                                products=[_p("S1_P00011", sid_food, "Family Set for 3", 288, 4),
                                          _p("S1_P00012", sid_food, "Mango Pudding", 30, 9),
                                          _p("S1_P00001", sid_food, "Bistro Lemonade", 18, 0)]),
                sid_sauna: _shop(sid_sauna, "Cedar Sauna", book=False, fee=0, reserve=True,
                                 products=[_p("S1_P00021", sid_sauna, "Sauna Pass", 58, 9)]),
            },
            "books": {},
            "reservations": {f"{task_id}S01": {"reservation_id": f"{task_id}S01", "shop_id": sid_sauna,
                                              "reservation_time": "2025-06-22 15:00:00", "update_time": NOW,
                                              "customer_id": USER, "customer_count": 1, "status": "paid"}},
            "user_historical_behaviors": {"user id": USER},
        },
        "evaluation_criteria": {
            "expected_states": [
                {"required_orders": gold, "optional_orders": [], "state_rubrics": ["swim"]},
                {"required_orders": copy.deepcopy(gold), "optional_orders": [], "state_rubrics": ["dinner"]},
            ],
            "overall_rubrics": ["swim vouchers", "swim reservation", "dinner set", "table", "sauna cancelled"],
        },
    }


def _write(tmp_path: Path, tasks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "instore_tasks.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def mini_env(tmp_path: Path) -> gym.Env:
    return gym.make(ENV_ID, tasks=str(_write(tmp_path, [mini_instore_task()])), scoring="strict")


def _names(actions: list[str]) -> list[str]:
    return [json.loads(a)["name"] if a.startswith("{") else "STOP" for a in actions]


def _edit(actions: list[str], tool: str, **changes: Any) -> list[str]:
    """The golden route with the arguments of its first ``tool`` call changed."""
    out = list(actions)
    i = next(i for i, a in enumerate(out) if a.startswith("{") and json.loads(a)["name"] == tool)
    call = json.loads(out[i])
    call["arguments"].update(changes)
    out[i] = json.dumps(call)
    return out


def _success(env: gym.Env, actions: list[str]) -> bool:
    return run_episode(env, Scripted(actions), seed=0, options={"task_id": "M1"})["success"]


def test_mini_task_converts(mini_env: gym.Env) -> None:
    task = mini_env.unwrapped.source.get("M1")
    assert task.domain == "instore" and task.source == "vitabench", "the domain's other spellings are accepted"
    # "sauna cancelled" compiles (a status item, rewards/nl_rubric/); the rest stays with the judge
    assert [r.kind for r in task.rubric] == ["required_orders", "no_unrequested_orders", "untouched_orders",
                                            "no_unrequested_writes", "nl_status"]
    (state,) = task.rubric[0].params["states"]  # duplicate states collapse
    visits = {v["record_id"]: v for v in state["visits"]}
    assert visits["M1T004"]["table"] == "books" and visits["M1T004"]["time"] == "2025-06-21 18:30:00"
    assert visits["M1T002"]["table"] == "reservations" and visits["M1S01"]["kind"] == "existing"
    assert len([o for o in state["orders"] if o["store_id"] == "S1_I00002"]) == 2, "two products: two orders"
    notes = " | ".join(task.notes)
    assert "takes seat bookings, not reservations; read as a booking" in notes and "read as 2 orders" in notes
    assert _names(task.golden_actions) == [
        "get_instore_reservations", "instore_cancel_reservation",
        "create_instore_product_order", "pay_instore_order", "create_instore_product_order", "pay_instore_order",
        "create_instore_product_order", "pay_instore_order", "instore_reservation", "instore_book", "pay_instore_book",
        "STOP",
    ]
    world = task.cached_world(mini_env.unwrapped.build_world)
    rows = world.table("shop_products")
    assert rows.require("S1_I00001/S1_P00001").name == "Swim Voucher"
    assert rows.require("S1_I00002/S1_P00001").name == "Bistro Lemonade", "a product id reused by two shops: two rows"


def test_mini_task_oracle_succeeds(mini_env: gym.Env) -> None:
    rec = run_episode(mini_env, OraclePolicy(), seed=0, options={"task_id": "M1"})
    assert rec["success"] and rec["tool_errors"] == 0


@pytest.mark.parametrize(
    ("tool", "changes", "success"),
    [
        ("instore_reservation", {"time": "2025-06-21 16:10:00"}, True),  # within the 10-minute tolerance
        ("instore_reservation", {"time": "2025-06-21 16:30:00"}, False),
        ("instore_reservation", {"customer_count": 3}, False),
        ("instore_book", {"customer_count": 2}, False),
        ("instore_book", {"time": "2025-06-21 19:30:00"}, False),
        ("create_instore_product_order", {"quantity": 1}, False),
        ("instore_reservation", {"shop_id": "S1_I00003"}, False),
    ],
)
def test_bookings_and_reservations_match_by_content(mini_env: gym.Env, tool: str, changes: dict, success: bool) -> None:
    golden = mini_env.unwrapped.source.get("M1").golden_actions
    assert _success(mini_env, _edit(golden, tool, **changes)) is success


def test_each_item_can_fail(mini_env: gym.Env) -> None:
    golden = mini_env.unwrapped.source.get("M1").golden_actions

    def score(actions: list[str]) -> dict[str, float]:
        rec = run_episode(mini_env, Scripted(actions), seed=0, options={"task_id": "M1"})
        return {k.split("/", 1)[1]: v for k, v in rec["score"].items() if k.startswith("rubric/")}

    ok = {"required_orders": 1.0, "no_unrequested_orders": 1.0, "untouched_orders": 1.0, "no_unrequested_writes": 1.0,
          "nl_status_6": 1.0}
    assert score(golden) == ok
    unpaid_fee = [a for a in golden if '"pay_instore_book"' not in a]  # the booking fee stays unpaid
    assert score(unpaid_fee) == ok | {"required_orders": 0.0, "no_unrequested_orders": 0.0}
    book = next(a for a in golden if '"instore_book"' in a)
    assert score(golden[:-1] + [book, golden[-1]]) == ok | {"no_unrequested_orders": 0.0, "no_unrequested_writes": 0.0}
    kept_sauna = [a for a in golden if '"instore_cancel_reservation"' not in a]
    assert score(kept_sauna)["required_orders"] == 0.0 and score(kept_sauna)["nl_status_6"] == 0.0
    moved = golden[:-1] + ['{"name": "search_instore_reservation", "arguments": {"user_id": "U500001"}}',
                           '{"name": "instore_modify_reservation", "arguments": {"reservation_id": "M1R01", '
                           '"time": "2025-06-21 17:00:00"}}', golden[-1]]
    assert score(moved)["required_orders"] == 0.0


def test_untouched_covers_pre_existing_reservations(tmp_path: Path) -> None:
    raw = mini_instore_task()
    for st in raw["evaluation_criteria"]["expected_states"]:
        st["required_orders"] = [o for o in st["required_orders"] if o.get("reservation_id") != "M1S01"]
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    golden = env.unwrapped.source.get("M1").golden_actions
    assert "instore_cancel_reservation" not in _names(golden) and _success(env, golden)
    cancel = ['{"name": "get_instore_reservations", "arguments": {"user_id": "U500001"}}',
              '{"name": "instore_cancel_reservation", "arguments": {"reservation_id": "M1S01"}}']
    rec = run_episode(env, Scripted(golden[:-1] + cancel + [golden[-1]]), seed=0, options={"task_id": "M1"})
    assert rec["score"]["rubric/untouched_orders"] == 0.0


def test_past_gold_time_is_not_scored(tmp_path: Path) -> None:
    raw = mini_instore_task()
    for st in raw["evaluation_criteria"]["expected_states"]:
        st["required_orders"][1]["reservation_time"] = "2025-06-2 16:00:00"
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    task = env.unwrapped.source.get("M1")
    assert any("lies before the task's now" in n for n in task.notes)
    assert _success(env, task.golden_actions)
    assert _success(env, _edit(task.golden_actions, "instore_reservation", time="2025-06-23 11:00:00"))


def test_nested_records_and_shop_key_aliases_are_repaired(tmp_path: Path) -> None:
    raw = mini_instore_task()
    shops = raw["environment"]["shops"]
    shops["S9_I00001"] = shops.pop("S1_I00001")  # listed under another key; its products say S1_I00001
    for st in raw["evaluation_criteria"]["expected_states"]:
        order, reservation = st["required_orders"][:2]
        order["store_id"] = "S9_I00001"  # the gold names the key
        order["products"].append(reservation)  # and nests the reservation inside the order
        del st["required_orders"][1]
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    task = env.unwrapped.source.get("M1")
    notes = " | ".join(task.notes)
    assert "says its shop_id is S1_I00001" in notes and "found nested inside the products of order M1T001" in notes
    (state,) = task.rubric[0].params["states"]
    assert {v["record_id"] for v in state["visits"]} == {"M1T002", "M1T004", "M1S01"}
    assert _success(env, task.golden_actions)


def _mutated(mutate) -> list[dict[str, Any]]:
    tasks = [mini_instore_task("M1"), mini_instore_task("M2")]
    mutate(tasks)
    return tasks


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda t: t[1]["environment"]["shops"]["S1_I00001"]["products"][0].update(price="cheap"),
         "task M2 (index 1): field environment.shops.S1_I00001.products.0.price: Input should be a valid number"),
        (lambda t: t[0]["environment"]["shops"]["S1_I00002"].pop("shop_name"),
         "task M1 (index 0): field environment.shops.S1_I00002.shop_name: Field required"),
        (lambda t: t[1]["environment"]["reservations"]["M2S01"].update(status="done"),
         "task M2 (index 1): field environment.reservations.M2S01.status"),
        (lambda t: t[0]["evaluation_criteria"]["expected_states"][1]["required_orders"][1].update(customer_count="two"),
         "task M1 (index 0): field evaluation_criteria.expected_states.1.required_orders.1.customer_count"),
        (lambda t: t[0]["evaluation_criteria"]["expected_states"][0]["required_orders"][3].update(
            reservation_time="tomorrow evening"),
         "task M1 (index 0): field evaluation_criteria.expected_states.0.required_orders.3.reservation_time"),
        (lambda t: t[1]["evaluation_criteria"]["expected_states"][0]["required_orders"][0].pop("store_id"),
         "task M2 (index 1): field evaluation_criteria.expected_states.0.required_orders.0.store_id: Field required"),
        (lambda t: t[0]["environment"].pop("shops"), "task M1 (index 0): field environment.shops: Field required"),
        (lambda t: t[1].update(domain="delivery"), "task M2 (index 1): field domain: is 'delivery', expected 'instore'"),
    ],
)
def test_malformed_file_skips_or_fails_strict(tmp_path: Path, mutate, expected: str) -> None:
    check_malformed_file(ENV_ID, _write(tmp_path, _mutated(mutate)), expected)


# ----- the real VitaBench in-store file --------------------------------------------------------
@pytest.fixture(scope="module")
def real_env() -> gym.Env:
    if not INSTORE_FILE.is_file():
        pytest.skip(f"VitaBench data not found at {INSTORE_FILE} (set SERVICEGYM_VITABENCH_DIR to the vitabench data dir)")
    return gym.make(ENV_ID, tasks=str(INSTORE_FILE), scoring="strict")


def test_real_file_loads(real_env: gym.Env) -> None:
    u = real_env.unwrapped
    ids = u.task_ids()
    assert_whole_file_loads(INSTORE_FILE, real_env)
    for tid in ids:
        task = u.source.get(tid)
        assert task.domain == "instore" and task.user.opening
        assert task.golden_actions and STOP in task.golden_actions[-1]
        assert task.rubric[0].params["states"], tid


def test_real_oracle_success_rate(real_env: gym.Env) -> None:
    u = real_env.unwrapped
    failed = {tid: u.source.get(tid).notes for tid in u.task_ids()
              if not run_episode(real_env, OraclePolicy(), seed=0, options={"task_id": tid})["success"]}
    # the load-time replay of the golden route agrees with playing it through env.step: a kept
    # task's golden route succeeds, one that fails was skipped
    assert not failed
    skipped = {s["task_id"]: s["reason"] for s in u.skipped_tasks}
    unexplained = {t: r for t, r in skipped.items() if t not in KNOWN_ORACLE_FAILURES}
    rate = len(u.task_ids()) / (len(u.task_ids()) + len(skipped))
    assert rate >= MIN_ORACLE_RATE, f"oracle success {rate:.3f}; unexplained failures: {unexplained}"


def test_real_random_policy_rarely_succeeds(real_env: gym.Env) -> None:
    ids = real_env.unwrapped.task_ids()
    wins = [t for k, t in enumerate(ids) if run_episode(real_env, RandomPolicy(seed=k), seed=k, options={"task_id": t})["success"]]
    assert len(wins) / len(ids) <= MAX_RANDOM_RATE, wins


def test_real_golden_perturbations_fail(real_env: gym.Env) -> None:
    """On every solved task, a reservation or booking an hour later, or for one more person, fails."""
    u = real_env.unwrapped
    checked = 0
    for tid in u.task_ids():
        task = u.source.get(tid)
        made = [n for n in _names(task.golden_actions) if n in ("instore_reservation", "instore_book")]
        if tid in KNOWN_ORACLE_FAILURES or not made or any("not scored" in n for n in task.notes):
            continue
        call = json.loads(next(a for a in task.golden_actions if a.startswith("{") and json.loads(a)["name"] == made[0]))
        args = call["arguments"]
        later = f"{args['time'][:11]}{(int(args['time'][11:13]) + 1) % 24:02d}{args['time'][13:]}"
        for changes in ({"time": later}, {"customer_count": args["customer_count"] + 1}):
            rec = run_episode(real_env, Scripted(_edit(task.golden_actions, made[0], **changes)), seed=0,
                              options={"task_id": tid})
            assert not rec["success"], (tid, changes)
        checked += 1
    assert checked >= len(u.task_ids()) // 2


def test_chinese_file_format_loads_and_scores(tmp_path: Path) -> None:
    """The Chinese in-store file is not in this checkout; its format differs from the English one
    only in text: Chinese instructions, Chinese profile keys, the domain as ``到店``."""
    raw = mini_instore_task("Z1")
    raw["domain"] = "到店"
    raw["instructions"] = "你想和儿子一起学游泳，买两张游泳体验券，并预约明天下午4点。之后三个人想在隔壁餐厅吃晚饭：家庭套餐和一份甜点。取消周日的桑拿预约。"
    raw["user_scenario"]["user_profile"] = {"用户id": USER, "家庭住址": HOME["address"], "性格": "冷静、有耐心"}
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    task = env.unwrapped.source.get("Z1")
    assert task.language == "zh" and task.user.language == "zh"
    assert task.user.opening.startswith("我想和儿子一起学游泳"), "the instructions are spoken in the first person"
    obs, info = env.reset(options={"task_id": "Z1"})
    assert "当前时间" in info["system_prompt"]
    assert run_episode(env, Scripted(task.golden_actions), seed=0, options={"task_id": "Z1"})["success"]
    wrong = _edit(task.golden_actions, "instore_reservation", customer_count=5)
    assert not run_episode(env, Scripted(wrong), seed=0, options={"task_id": "Z1"})["success"]
