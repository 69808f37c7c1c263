"""The cross-scenario env: the 66 tools and the world holding every domain's tables, the generator
(golden routes succeed, each violation breaks exactly its item, at every difficulty), the frozen
suite, reasoning points, decoys, single wrong choices that break the chained legs, the random
baseline, and VitaBench cross-domain files (composed, in tmp_path, from the hand-written
single-domain tasks of the other test modules: no copy of VitaBench's cross file is available).
"""

from __future__ import annotations

import copy
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: E402  registers the ids
from servicegym.envs.environments.cross import SUITE_PATH, CrossScenarioEnv
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy, run_episode
from servicegym.envs.tasks.generators.common import verify_task
from servicegym.envs.tasks.generators.cross import (
    DEFAULT_DIFFICULTY,
    QUESTIONS,
    generate_cross_task,
    reasoning_points_for,
)
from servicegym.simulators.scripted_user import DONE_RE, ScriptedUser, asks_confirmation
from servicegym.world_state.core import haversine_m
from servicegym.world_state.cross import DOMAIN_WORLDS, TABLE_OWNER, TOOLS, CrossWorld
from servicegym.world_state.delivery import DELIVERY_TOOLS, DeliveryWorld
from servicegym.world_state.instore import INSTORE_TOOLS, InStoreWorld
from servicegym.world_state.life import SHARED_TOOLS, LifeWorld
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.tools import Toolkit, dependency_graph
from servicegym.world_state.travel import TRAVEL_TOOLS, Flight, Train, TravelWorld, arrival_at
from tests.envs.test_instore import mini_instore_task
from tests.envs.test_travel import mini_ota_task
from tests.envs.test_vitabench import MAX_RANDOM_RATE, Scripted, check_malformed_file, mini_task

ENV_ID = "servicegym/CrossScenario-v0"


@pytest.fixture(scope="module")
def suite_env() -> CrossScenarioEnv:
    return gym.make(ENV_ID, split="test").unwrapped


def _calls(actions: list[str]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, json.loads(a)) for i, a in enumerate(actions) if a.startswith("{")]


def _score(env: gym.Env, actions: list[str], task: Any) -> dict[str, Any]:
    rec = run_episode(env, Scripted(actions), seed=0, options={"task": task})
    return {k.split("/", 1)[1]: v for k, v in rec["score"].items() if k.startswith("rubric/")} | {
        "success": rec["success"]
    }


def _failed(score: dict[str, Any]) -> set[str]:
    return {k for k, v in score.items() if v == 0.0}


def _with_args(actions: list[str], tool: str, **changes: Any) -> list[str]:
    """The actions with the arguments of the first ``tool`` call changed."""
    out = list(actions)
    i, c = next((i, c) for i, c in _calls(out) if c["name"] == tool)
    c["arguments"].update(changes)
    out[i] = json.dumps(c, ensure_ascii=False)
    return out


def _task_with(items: set[str], difficulty: int = 4, intent: bool | None = None) -> Any:
    for seed in range(400):
        t = generate_cross_task(seed, difficulty)
        if items <= {i.name for i in t.rubric} and (intent is None or bool(t.user.intent_change) == intent):
            return t
    raise AssertionError(f"no generated task has {items}")


def _params(task: Any) -> dict[str, dict[str, Any]]:
    return {i.name: i.params for i in task.rubric}


ALL_LEGS = {"outbound", "product", "dish"}


def _landing(mode: str, row: dict[str, Any], day: str) -> datetime:
    return arrival_at((Flight if mode == "flight" else Train).model_validate(row), day)


# ----- the tools and the world -------------------------------------------------------------------
def test_registered_with_the_66_tools_of_the_three_domains(suite_env: CrossScenarioEnv) -> None:
    obs, info = suite_env.reset(seed=1)
    names = [t["function"]["name"] for t in info["tools"]]
    assert info["domain"] == "cross" and obs and ENV_ID in servicegym.ENV_IDS
    assert len(names) == len(set(names)) == 66
    assert (len(SHARED_TOOLS), len(DELIVERY_TOOLS), len(INSTORE_TOOLS), len(TRAVEL_TOOLS)) == (8, 12, 16, 30)
    assert names == [t.name for t in SHARED_TOOLS + DELIVERY_TOOLS + INSTORE_TOOLS + TRAVEL_TOOLS]
    toolkit = Toolkit(TOOLS)
    assert not set(toolkit.aliases) & set(toolkit.names), "an alias must not shadow another tool"
    sections = {line.strip() for line in CrossScenarioEnv.__doc__.splitlines()}
    assert {"## Description", "## Action Space", "## Reward", "## Arguments", "## Version History"} <= sections


def test_dependency_graph_joins_the_domain_graphs_with_cross_domain_edges() -> None:
    graph = dependency_graph(Toolkit(TOOLS))
    edges = set(graph.edges)
    for tools in (SHARED_TOOLS + DELIVERY_TOOLS, SHARED_TOOLS + INSTORE_TOOLS, SHARED_TOOLS + TRAVEL_TOOLS):
        assert set(dependency_graph(Toolkit(tools)).edges) <= edges
    assert ("get_ota_hotel_info", "create_delivery_order") in edges, "a delivery to the booked hotel"
    assert graph.summary()["V"] == 66 and 0 < graph.density < 0.2


def test_world_holds_every_domains_tables() -> None:
    assert set(CrossWorld.schema) == {t for cls in DOMAIN_WORLDS for t in cls.schema}
    assert CrossWorld.place_tables == ("stores", "shops", "hotels", "attractions", "flights", "trains")
    assert CrossWorld.catalogue_tables == ("stores", "products", "shops", "shop_products")
    assert TABLE_OWNER["stores"] is DeliveryWorld and TABLE_OWNER["books"] is InStoreWorld
    assert TABLE_OWNER["flight_seats"] is TravelWorld and "orders" not in TABLE_OWNER


def _spec_for(cls: type[LifeWorld], spec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k in cls.schema or not isinstance(v, list)}


def test_rows_are_shown_by_their_own_domain_and_every_index_is_built(cross_file: Path) -> None:
    task = gym.make(ENV_ID, tasks=str(cross_file), scoring="strict").unwrapped.source.get("X1")
    world = build_life_world(CrossWorld, task.world)
    for table, owner in (("stores", DeliveryWorld), ("shops", InStoreWorld), ("hotels", TravelWorld)):
        row = next(iter(world.table(table)))
        assert world.render_row(table, row) == owner.render_row(world, table, row)
        assert world.place_summary(table, row) == owner.place_summary(world, table, row)
    store, shop = next(iter(world.table("stores"))), next(iter(world.table("shops")))
    # VitaBench stores and shops carry no opening hours, which their domains leave out of views
    assert "open_time" not in world.view("stores", store) and "open_time" not in world.view("shops", shop)
    assert set(world.extra["_views"]) == {"stores", "products", "shops", "shop_products"}
    built = {k for k in world.extra if k.startswith("_")}
    for cls in DOMAIN_WORLDS:
        alone = build_life_world(cls, _spec_for(cls, task.world))
        assert {k for k in alone.extra if k.startswith("_")} - {"_views"} <= built, cls.__name__


def test_new_ids_never_collide_across_domains(suite_env: CrossScenarioEnv) -> None:
    task = next(
        t
        for t in (suite_env.source.get(i) for i in suite_env.task_ids("test"))
        if ALL_LEGS <= {x.name for x in t.rubric}
    )
    world = build_life_world(CrossWorld, task.world)
    key = world.extra["task_key"]
    made = [
        world.new_order_id(p, table)
        for p, table in (
            ("D", "orders"),
            ("I", "orders"),
            ("B", "books"),
            ("R", "reservations"),
            ("HT", "orders"),
            ("AT", "orders"),
            ("FL", "orders"),
            ("TR", "orders"),
        )
    ]
    assert len(set(made)) == 8 and all(m.startswith(key) and m.endswith("01") for m in made)
    # replayed: each domain's records get their own prefix and nothing created shares an id
    run_episode(suite_env, OraclePolicy(), seed=0, options={"task_id": task.task_id})
    created = [
        k
        for name in ("orders", "books", "reservations")
        for k in suite_env.world.table(name).rows
        if k not in suite_env._initial.table(name).rows
    ]
    assert len(created) == len(set(created)) >= 5
    suffixes = {c[len(key) : -2] for c in created}
    assert {"D", "I", "HT"} <= suffixes and suffixes & {"B", "R"} and suffixes & {"FL", "TR"}


# ----- generated tasks ---------------------------------------------------------------------------
def test_frozen_suite_is_small_and_centred_on_vitabench_cross(suite_env: CrossScenarioEnv) -> None:
    assert SUITE_PATH.stat().st_size < 1_000_000
    points = [suite_env.source.get(t).reasoning_points for t in suite_env.task_ids("test")]
    assert len(points) == 100 and statistics.median(points) == 11 and set(points) == {10, 11, 12}  # VitaBench: 10.3


def test_oracle_succeeds_on_the_whole_frozen_suite(suite_env: CrossScenarioEnv) -> None:
    ids = suite_env.task_ids("test")
    failed = [t for t in ids if not run_episode(suite_env, OraclePolicy(), seed=0, options={"task_id": t})["success"]]
    assert not failed, failed[:5]


def test_random_policy_rarely_succeeds(suite_env: CrossScenarioEnv) -> None:
    ids = suite_env.task_ids("test")
    wins = [
        t
        for k, t in enumerate(ids)
        if run_episode(suite_env, RandomPolicy(seed=k), seed=k, options={"task_id": t})["success"]
    ]
    assert len(wins) / len(ids) <= MAX_RANDOM_RATE, wins


@pytest.mark.parametrize("difficulty", range(7))
def test_generated_train_tasks_verify(difficulty: int) -> None:
    env = CrossScenarioEnv(tasks=[generate_cross_task(0, difficulty)], check_postconditions=True)
    for seed in range(3000, 3004):
        task = generate_cross_task(seed, difficulty)
        assert task.reasoning_points == reasoning_points_for(difficulty) == 8 + difficulty
        assert set(task.violations) == {i.name for i in task.rubric}, "every rubric item has a violation"
        assert len(task.golden_actions) < 50, "within VitaBench's turn limit"
        assert verify_task(env, task) == [], task.task_id


def test_generation_is_deterministic_and_the_env_path_only_drops_violations() -> None:
    a, b = generate_cross_task(7, 4), generate_cross_task(7, 4)
    assert a.model_dump() == b.model_dump()
    assert a.model_dump() != generate_cross_task(7, 4, "test").model_dump()
    lean = generate_cross_task(7, 4, violations=False)
    assert lean.violations == {} and lean.model_dump() | {"violations": a.violations} == a.model_dump()
    with pytest.raises(ValueError, match="split"):
        generate_cross_task(0, 3, "validation")


def test_median_reasoning_points_at_default_difficulty() -> None:
    env = gym.make(ENV_ID)
    points = []
    for seed in range(30):
        env.reset(seed=seed)
        points.append(env.unwrapped.task.reasoning_points)
    assert DEFAULT_DIFFICULTY == 3 and statistics.median(points) in (10, 11), points  # VitaBench cross: 10.3


def test_the_question_reveals_every_hidden_fact_and_asks_no_confirmation() -> None:
    assert not [q for q in QUESTIONS.values() if asks_confirmation(q) or DONE_RE.search(q.casefold())]
    for seed in range(40):
        task = generate_cross_task(seed, 5)
        if not task.user.facts:
            continue
        question = next(a for a in task.golden_actions if a.startswith("Happy to help"))
        user = ScriptedUser(task.user)
        user.reply(question)
        assert user.revealed == {f.topic for f in task.user.facts}, task.task_id


def test_suite_covers_every_option_both_visits_and_both_changes(suite_env: CrossScenarioEnv) -> None:
    tasks = [suite_env.source.get(t) for t in suite_env.task_ids("test")]
    items = {i.name for t in tasks for i in t.rubric}
    assert {
        "seat_class",
        "travellers",
        "party",
        "portions",
        "depart_after",
        "ticket_budget",
        "hotel_rating",
        "hotel_tag",
        "shop_rating",
        "instore_budget",
        "store_distance",
        "diet",
        "delivery_note",
        "cancel_mistaken",
        "keep_other_order",
        "informed_changes",
        "booking_paid",
    } <= items
    legs = [ALL_LEGS & {i.name for i in t.rubric} for t in tasks]
    assert ALL_LEGS in legs and {"outbound", "product"} in legs and {"outbound", "dish"} in legs
    tables = {i.params["table"] for t in tasks for i in t.rubric if i.name == "visit_time"}
    assert tables == {"books", "reservations"}
    moved = [t for t in tasks if t.user.intent_change]
    assert {'"instore_modify_reservation"' in " ".join(t.golden_actions) for t in moved} == {True, False}
    assert any('"get_holiday_date"' in a for t in tasks for a in t.golden_actions)
    assert {i.params["order_type"] for t in tasks for i in t.rubric if i.name == "outbound"} == {"flight", "train"}


def test_decoys_are_in_the_world() -> None:
    task = _task_with(ALL_LEGS | {"store_distance"}, difficulty=5)
    w, p = task.world, _params(task)
    mode = p["outbound"]["order_type"]
    venue = (p["hotel_distance"]["longitude"], p["hotel_distance"]["latitude"])
    golden = {c["name"]: c["arguments"] for _, c in _calls(task.golden_actions)}
    hotel = next(h for h in w["hotels"] if h["hotel_id"] == golden["create_hotel_order"]["hotel_id"])

    def far(a: dict[str, Any], b: tuple[float, float]) -> float:
        return haversine_m(a["longitude"], a["latitude"], *b)

    hotel_at = (hotel["location"]["longitude"], hotel["location"]["latitude"])
    assert any(far(h["location"], venue) > p["hotel_distance"]["max_m"] for h in w["hotels"]), "a hotel too far"
    shop = golden["create_instore_product_order"]["shop_id"]
    same_menu = [
        s for s in w["shops"] if s["category"] == next(x for x in w["shops"] if x["shop_id"] == shop)["category"]
    ]
    decoy = [s for s in same_menu if far(s["location"], hotel_at) > p["shop_near_hotel"]["max_m"]]
    assert decoy and far(decoy[0]["location"], venue) < far(decoy[0]["location"], hotel_at), (
        "near the venue, far from the hotel"
    )
    day = p["outbound"]["date"]
    visit = datetime.fromisoformat(f"{day} {p['visit_time']['time']}")
    late = [
        s
        for s in w[f"{mode}s"]
        if s["arrival_city"] == p["outbound"]["arrival_city"]
        and _landing(mode, s, day) + timedelta(minutes=p["after_arrival"]["margin_min"]) > visit
    ]
    assert late, f"a {mode} that lands too late for the evening"
    stores = [s for s in w["stores"] if far(s["location"], hotel_at) > p["store_distance"]["max_m"]]
    assert len(stores) >= 2, "a look-alike store too far from the hotel, and the usual one back home"


# ----- one wrong choice breaks the chained legs ----------------------------------------------------
@pytest.fixture(scope="module")
def chained() -> Any:
    return _task_with(ALL_LEGS, difficulty=3, intent=False)


def _check_golden(task: Any) -> CrossScenarioEnv:
    env = CrossScenarioEnv(tasks=[task])
    assert _score(env, task.golden_actions, task)["success"]
    return env


def test_wrong_travel_date_breaks_the_hotel_and_the_evening_too(chained: Any) -> None:
    env, p = _check_golden(chained), _params(chained)
    mode = p["outbound"]["order_type"]
    _, create = next((i, c) for i, c in _calls(chained.golden_actions) if c["name"] == f"create_{mode}_order")
    seats = chained.world[f"{mode}_seats"]
    seat = next(s for s in seats if s["product_id"] == create["arguments"]["seat_id"])
    later = (datetime.fromisoformat(seat["date"]) + timedelta(days=1)).strftime("%Y-%m-%d")
    other = next(
        s
        for s in seats
        if s[f"{mode}_id"] == seat[f"{mode}_id"] and s["seat_type"] == seat["seat_type"] and s["date"] == later
    )
    score = _score(
        env,
        _with_args(chained.golden_actions, f"create_{mode}_order", date=later, seat_id=other["product_id"]),
        chained,
    )
    assert not score["success"]
    assert {"outbound", "check_in", "visit_time", "after_arrival"} <= _failed(score)


def test_hotel_too_far_from_the_venue_fails(chained: Any) -> None:
    env, p = _check_golden(chained), _params(chained)
    venue, max_m = (p["hotel_distance"]["longitude"], p["hotel_distance"]["latitude"]), p["hotel_distance"]["max_m"]
    _, create = next((i, c) for i, c in _calls(chained.golden_actions) if c["name"] == "create_hotel_order")
    room = next(r for r in chained.world["hotel_rooms"] if r["product_id"] == create["arguments"]["room_id"])
    far = min(
        (
            h
            for h in chained.world["hotels"]
            if haversine_m(h["location"]["longitude"], h["location"]["latitude"], *venue) > max_m
        ),
        key=lambda h: haversine_m(h["location"]["longitude"], h["location"]["latitude"], *venue),
    )
    far_room = next(
        r
        for r in chained.world["hotel_rooms"]
        if r["hotel_id"] == far["hotel_id"] and r["room_type"] == room["room_type"] and r["date"] == room["date"]
    )
    score = _score(
        env,
        _with_args(
            chained.golden_actions, "create_hotel_order", hotel_id=far["hotel_id"], room_id=far_room["product_id"]
        ),
        chained,
    )
    assert not score["success"]
    # the food still goes to the hotel first chosen, which is now not the one booked
    assert {"hotel_distance", "delivery_to_hotel"} <= _failed(score)


def test_booking_before_the_arrival_fails(chained: Any) -> None:
    env, p = _check_golden(chained), _params(chained)
    mode = p["outbound"]["order_type"]
    _, create = next((i, c) for i, c in _calls(chained.golden_actions) if c["name"] == f"create_{mode}_order")
    svc = next(s for s in chained.world[f"{mode}s"] if s[f"{mode}_id"] == create["arguments"][f"{mode}_id"])
    landing = _landing(mode, svc, create["arguments"]["date"])
    tool = "instore_book" if p["visit_time"]["table"] == "books" else "instore_reservation"
    early = (landing - timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S")
    score = _score(env, _with_args(chained.golden_actions, tool, time=early), chained)
    assert not score["success"] and "after_arrival" in _failed(score)


def test_delivery_home_instead_of_to_the_hotel_fails(chained: Any) -> None:
    env = _check_golden(chained)
    home = chained.world["user_profile"]["home address"]
    score = _score(env, _with_args(chained.golden_actions, "create_delivery_order", address=home), chained)
    assert not score["success"] and "delivery_to_hotel" in _failed(score)


def test_without_the_hotel_no_leg_that_relies_on_it_passes(chained: Any) -> None:
    env = _check_golden(chained)
    actions = [a for a in chained.golden_actions if '"create_hotel_order"' not in a and '"pay_hotel_order"' not in a]
    failed = _failed(_score(env, actions, chained))
    assert {"check_in", "nights", "shop_near_hotel", "delivery_to_hotel", "delivery_time"} <= failed


# ----- VitaBench cross-domain files --------------------------------------------------------------
UID = "U777777"


def mini_cross_task(task_id: str = "X1", parts: tuple[str, ...] = ("delivery", "instore", "ota")) -> dict[str, Any]:
    """The hand-written delivery, in-store and OTA tasks of the other test modules as one user's
    task: one id, one clock (the earliest), one address book and one order table; required
    records of every type in each expected state."""
    made = {
        "delivery": mini_task(f"{task_id}D"),
        "instore": mini_instore_task(f"{task_id}I"),
        "ota": mini_ota_task(f"{task_id}O"),
    }
    text = json.dumps([made[p] for p in parts], ensure_ascii=False)
    for uid in ("U000049", "U500001", "U000077"):
        text = text.replace(uid, UID)
    raws = json.loads(text)
    env: dict[str, Any] = {
        "time": "2025-06-20 10:00:00",
        "user_id": UID,
        "weather": [],
        "location": [],
        "orders": {},
        "user_historical_behaviors": {"user id": UID},
    }
    for raw in raws:
        e = raw["environment"]
        env["weather"] += e.get("weather", [])
        env["location"] += e.get("location", [])
        env["orders"] |= e.get("orders", {})
        env |= {
            k: v
            for k, v in e.items()
            if k in ("stores", "shops", "books", "reservations", "hotels", "attractions", "flights", "trains")
        }
    states = [
        {
            "required_orders": [o for s in group for o in s["required_orders"]],
            "optional_orders": [],
            "state_rubrics": ["..."],
        }
        for group in zip(*(raw["evaluation_criteria"]["expected_states"] for raw in raws))
    ]
    return {
        "id": task_id,
        "domain": "cross_domain",
        "instructions": " ".join(raw["instructions"] for raw in raws),
        "user_scenario": {"user_profile": {"user id": UID, "personality": "calm and patient"}},
        "environment": env,
        "evaluation_criteria": {
            "expected_states": states,
            "overall_rubrics": [r for raw in raws for r in raw["evaluation_criteria"]["overall_rubrics"]],
        },
    }


def _write(tmp_path: Path, tasks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cross_tasks.json"
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def cross_file(tmp_path: Path) -> Path:
    return _write(tmp_path, [mini_cross_task()])


def test_cross_file_converts_and_the_oracle_succeeds(cross_file: Path) -> None:
    env = gym.make(ENV_ID, tasks=str(cross_file), scoring="strict")
    task = env.unwrapped.source.get("X1")
    assert task.source == "vitabench" and task.domain == "cross" and task.reasoning_points == 13
    (state,) = task.rubric[0].params["states"]  # the duplicate expected states collapse
    assert {o["order_type"] for o in state["orders"]} == {
        "delivery",
        "instore",
        "flight",
        "train",
        "hotel",
        "attraction",
    }
    assert {v["table"] for v in state["visits"]} == {"books", "reservations"}
    notes = " | ".join(task.notes)
    assert "read as a booking" in notes and "read as 2 orders" in notes, "the in-store repairs apply"
    names = [c["name"] for _, c in _calls(task.golden_actions)]
    assert {"create_delivery_order", "instore_book", "modify_train_order", "create_hotel_order"} <= set(names)
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": "X1"})
    assert rec["success"] and rec["tool_errors"] == 0


def test_cross_file_with_two_domains_and_other_spellings(tmp_path: Path) -> None:
    tasks = [
        mini_cross_task("X1", ("delivery", "ota")) | {"domain": "delivery_instore_ota"},
        mini_cross_task("X2", ("instore", "ota")) | {"domain": "Cross-Domain"},
        mini_cross_task("X3") | {"domain": "cross"},
    ]
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, tasks)), scoring="strict")
    for tid in ("X1", "X2", "X3"):
        assert run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})["success"], tid


def test_cross_file_scores_every_leg(cross_file: Path) -> None:
    env = gym.make(ENV_ID, tasks=str(cross_file), scoring="strict")
    golden = env.unwrapped.source.get("X1").golden_actions
    # the legs' "... cancelled" items are status items checked by code (rewards/nl_rubric/); "flight cancelled"
    # names two flight orders alike, and its own test picks the one the gold cancels (rubric_refs.resolve)
    ok = {"required_orders": 1.0, "no_unrequested_orders": 1.0, "untouched_orders": 1.0, "no_unrequested_writes": 1.0,
          "nl_status_2": 1.0, "nl_status_7": 1.0, "nl_status_12": 1.0, "success": True}

    def score(actions: list[str]) -> dict[str, Any]:
        rec = run_episode(env, Scripted(actions), seed=0, options={"task_id": "X1"})
        return {k.split("/", 1)[1]: v for k, v in rec["score"].items() if k.startswith("rubric/")} | {
            "success": rec["success"]
        }

    assert score(golden) == ok
    for tool, changes in (
        ("create_delivery_order", {"product_cnts": [1]}),
        ("instore_book", {"customer_count": 2}),
        ("create_hotel_order", {"check_out_date": "2025-07-11"}),
    ):
        assert score(_with_args(golden, tool, **changes))["required_orders"] == 0.0, tool
    touched = golden[:-1] + [
        json.dumps({"name": "get_hotel_order_detail", "arguments": {"order_id": "X1OO3"}}),
        json.dumps({"name": "cancel_hotel_order", "arguments": {"order_id": "X1OO3", "user_id": UID}}),
        golden[-1],
    ]
    assert score(touched) == ok | {"untouched_orders": 0.0, "no_unrequested_writes": 0.0, "success": False}


def _mutated(mutate) -> list[dict[str, Any]]:
    tasks = [mini_cross_task("X1"), mini_cross_task("X2")]
    mutate(tasks)
    return tasks


def _required(t: dict[str, Any], state: int, pred) -> dict[str, Any]:
    return next(o for o in t["evaluation_criteria"]["expected_states"][state]["required_orders"] if pred(o))


def _index(t: dict[str, Any], state: int, pred) -> int:
    return next(
        j for j, o in enumerate(t["evaluation_criteria"]["expected_states"][state]["required_orders"]) if pred(o)
    )


def _is_train(o: dict[str, Any]) -> bool:
    return o.get("order_type") == "train"


def _is_reservation(o: dict[str, Any]) -> bool:
    return "reservation_time" in o


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            lambda t: t[1]["environment"]["stores"]["S1"]["products"][0].update(price="cheap"),
            "task X2 (index 1): field environment.stores.S1.products.0.price: Input should be a valid number",
        ),
        (
            lambda t: t[0]["environment"]["shops"]["S1_I00002"].pop("shop_name"),
            "task X1 (index 0): field environment.shops.S1_I00002.shop_name: Field required",
        ),
        (
            lambda t: t[1]["environment"]["hotels"]["H1"]["products"][0].pop("room_type"),
            "task X2 (index 1): field environment.hotels.H1.products.0.room_type",
        ),
        (
            lambda t: t[0]["environment"]["orders"]["X1OO1"].update(status="done"),
            "task X1 (index 0): field environment.orders.X1OO1.status",
        ),
        (
            lambda t: t[1]["environment"]["orders"]["X2DO01"]["products"][0].update(quantity="one"),
            "task X2 (index 1): field environment.orders.X2DO01.products.0.quantity",
        ),
        (
            lambda t: _required(t[1], 0, _is_train)["products"][0].update(quantity="two"),
            "task X2 (index 1): field evaluation_criteria.expected_states.0.required_orders."
            f"{_index(mini_cross_task(), 0, _is_train)}.products.0.quantity",
        ),
        (
            lambda t: _required(t[0], 1, _is_reservation).update(customer_count="two"),
            "task X1 (index 0): field evaluation_criteria.expected_states.1.required_orders."
            f"{_index(mini_cross_task(), 1, _is_reservation)}.customer_count",
        ),
        (
            lambda t: t[0]["evaluation_criteria"]["expected_states"][0]["required_orders"][0].pop("store_id"),
            "task X1 (index 0): field evaluation_criteria.expected_states.0.required_orders.0.store_id: Field required",
        ),
        (lambda t: t[1].update(domain="delivery"), "task X2 (index 1): field domain: is 'delivery', expected 'cross'"),
        (lambda t: t[0]["environment"].pop("time"), "task X1 (index 0): field environment.time: Field required"),
    ],
)
def test_malformed_cross_file_skips_or_fails_strict(tmp_path: Path, mutate, expected: str) -> None:
    check_malformed_file(ENV_ID, _write(tmp_path, _mutated(mutate)), expected)


def test_cross_task_key_clears_every_domains_prefix(tmp_path: Path) -> None:
    raw = mini_cross_task()
    order = copy.deepcopy(raw["environment"]["orders"]["X1OO1"]) | {"order_id": "X1HT01"}
    raw["environment"]["orders"]["X1HT01"] = order  # an existing id that a new hotel order would take
    env = gym.make(ENV_ID, tasks=str(_write(tmp_path, [raw])), scoring="strict")
    u = env.unwrapped
    assert u.source.get("X1").world["task_key"] == "X1X"
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": "X1"})
    assert rec["success"] and rec["tool_errors"] == 0
    orders, before = u.world.table("orders"), u._initial.table("orders")
    assert "X1XHT01" in set(orders.rows) - set(before.rows), "the new hotel order takes the cleared key"
    assert orders.require("X1HT01") == before.require("X1HT01"), "the existing order keeps its id and content"
