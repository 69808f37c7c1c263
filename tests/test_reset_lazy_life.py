"""A reset to a new generated life-service task (issue 29) makes no table, no index and no golden
route its opening does not need, counted, not timed; and what it makes later is what the eager
build makes, shared by every copy of the world and never written through one of them.

* ``build_lazy_life_world`` (Travel and CrossScenario, whose generators vouch for their worlds):
  each scalar table but the address book on its own first read, the other tables together; the
  tables, once made, equal ``build_life_world``'s row for row (keys, order, types, fields set).
* ``CrossWorld.prepare`` of such a world defers its views, search indexes and store menus; once
  used they are the eager ones, built once for the world and every episode copy of it.
* Copies: an episode's writes stay in its copy (copy-on-write over the rows made once); the world
  as built, the next episode and another task's world are untouched; a pickle or deep copy of a
  world whose tables are not made yet holds them made.
* The travel generator draws its dated products (``ProductBlock``: the draws only) and makes their
  rows when the task's world is first read (``Task.defer_world``) or, in the env, straight into the
  table an episode first reads; a repeated id is drawn on as ``IdPool.new`` does.
* Delivery and InStore defer their golden routes too; ``Task.generated`` and the scripted user's
  parts the generators make without validation are what validation makes.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.generators.delivery as delivery_gen
import servicegym.envs.tasks.generators.instore as instore_gen
import servicegym.world_state.cross as cross_world
import servicegym.world_state.life.spec as life_spec
import servicegym.world_state.vouched as vouched
from servicegym.envs.tasks.generators.common import FactSheet, TaskRandom, user_script
from servicegym.envs.tasks.generators.cross import generate_cross_task
from servicegym.envs.tasks.generators.travel import generate_travel_task
from servicegym.envs.tasks.model import Task
from servicegym.simulators.scripted_user import HiddenFact, IntentChange, UserScript
from servicegym.world_state.core import Table
from servicegym.world_state.cross import CrossWorld
from servicegym.world_state.delivery import DeliveryWorld
from servicegym.world_state.instore import InStoreWorld
from servicegym.world_state.life.spec import build_lazy_life_world, build_life_world
from servicegym.world_state.life.tools import SearchIndex
from servicegym.world_state.travel import TravelWorld

CROSS, TRAVEL = "servicegym/CrossScenario-v0", "servicegym/Travel-v0"
INDEX_KEYS = ("_index_stores", "_index_products", "_index_shops", "_index_shop_products")


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """Counts the calls of ``owner.name`` (the first argument of each is kept)."""
    calls: list[Any] = []
    original = getattr(owner, name)

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(a[0] if a else None)
        return original(*a, **k)

    monkeypatch.setattr(owner, name, counting)
    return calls


def _rows_as(a: Any, b: Any) -> None:
    """Two tables' rows: the same keys in the same order, entities equal field for field and type for type."""
    assert list(a.rows) == list(b.rows)
    for x, y in zip(a.rows.values(), b.rows.values()):
        assert type(x) is type(y) and x == y
        assert [(k, type(v), v) for k, v in x.__dict__.items()] == [(k, type(v), v) for k, v in y.__dict__.items()]
        assert x.__pydantic_fields_set__ == y.__pydantic_fields_set__


def _unmade(world: Any) -> list[str]:
    return [name for name, t in world.tables.items() if t.lazy is not None]


def _step(env: Any, name: str, **arguments: Any) -> str:
    return env.step(json.dumps({"name": name, "arguments": arguments}))[0]


# ----- the lazy build is the eager build ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(0, 70, 9))
@pytest.mark.parametrize("world_cls, generate", [(CrossWorld, generate_cross_task), (TravelWorld, generate_travel_task)])
def test_the_lazy_world_is_the_eager_world(world_cls: Any, generate: Any, seed: int) -> None:
    task = generate(seed, seed % 7, "train", violations=False)
    eager = build_life_world(world_cls, task.world, vouched=True)
    lazy = build_lazy_life_world(world_cls, task.world)
    assert list(lazy.tables) == list(eager.tables)
    assert {n for n, rows in task.world.items() if n in world_cls.schema and rows} <= set(_unmade(lazy)) | {"locations"}
    assert "locations" in _unmade(lazy)  # the address book: made with the places it is made from
    pickled = pickle.loads(pickle.dumps(lazy.copy()))  # a pickle of a copy makes its rows, equal
    deep = copy.deepcopy(lazy)
    for name in eager.tables:
        _rows_as(lazy.table(name), eager.table(name))
        _rows_as(pickled.table(name), eager.table(name))
        _rows_as(deep.table(name), eager.table(name))
    assert lazy.state_dict() == eager.state_dict() == pickled.state_dict() == deep.state_dict()
    assert lazy.clock.text() == eager.clock.text() and lazy.user_id == eager.user_id


@pytest.mark.parametrize("seed", range(0, 40, 7))
def test_the_deferred_cross_indexes_are_the_eager_ones(seed: int) -> None:
    task = generate_cross_task(seed, seed % 7, "train", violations=False)
    eager = build_life_world(CrossWorld, task.world, vouched=True)
    lazy = build_lazy_life_world(CrossWorld, task.world)
    assert set(eager.extra) - {"_store_products"} <= set(lazy.extra)  # the menus: on the first ``products_of``
    assert "_store_products" not in lazy.extra
    for key in INDEX_KEYS:
        made, want = lazy.extra[key], eager.extra[key]
        assert isinstance(made, SearchIndex) and type(want) is SearchIndex
        assert (made.ids, made.texts) == (want.ids, want.texts)
        plain = pickle.loads(pickle.dumps(made))
        assert type(plain) is SearchIndex and (plain.ids, plain.texts) == (want.ids, want.texts)
    for t in CrossWorld.catalogue_tables:
        assert lazy.extra["_view_rows"][t] == eager.extra["_view_rows"][t]
        assert lazy.extra["_view_rows"][t] is lazy.table(t).rows  # the rows as built, those the copies share
    for store in lazy.table("stores"):
        assert lazy.products_of(store.store_id) == eager.products_of(store.store_id)
    assert lazy.extra["_store_products"] == eager.extra["_store_products"]
    assert copy.deepcopy(lazy).state_dict() == eager.state_dict()


def test_an_eager_or_vitabench_cross_world_is_prepared_at_once() -> None:
    task = generate_cross_task(3, 3, "train", violations=False)
    eager = build_life_world(CrossWorld, task.world, vouched=True)
    assert all(type(eager.extra[k]) is SearchIndex for k in INDEX_KEYS) and "_deferred_indexes" not in eager.extra
    plan = cross_world._deferrable()
    assert plan is not None
    now, later, keys = plan
    assert [c.__name__ for c in later] == ["DeliveryWorld", "InStoreWorld"] and sorted(keys) == sorted(INDEX_KEYS)
    assert [c.__name__ for c in now] == ["TravelWorld"]


# ----- what a reset makes: nothing, counted ----------------------------------------------------------


def test_a_cross_reset_makes_no_table_and_no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    grouped = _count(monkeypatch, life_spec, "_grouped_tables")
    scalar = _count(monkeypatch, vouched, "vouched_rows")
    delivery_indexes = _count(monkeypatch, DeliveryWorld, "build_indexes")
    instore_indexes = _count(monkeypatch, InStoreWorld, "build_indexes")
    env = gym.make(CROSS)
    u = env.unwrapped
    for seed in range(73_000, 73_004):  # fresh seeds: each reset generates a task and builds its world
        env.reset(seed=seed)
        assert set(_unmade(u._initial)) == {n for n, t in u._initial.tables.items() if t.lazy is not None}
        assert {"locations", "hotels", "hotel_rooms", "stores", "shops"} <= set(_unmade(u._initial))
    assert grouped == [] and scalar == [] and delivery_indexes == [] and instore_indexes == []
    # the first search builds the indexes once, from the world as built; the places are made with them
    task = u.task
    name = task.world["products"][0]["name"]
    assert "<tool_result" in _step(u, "delivery_product_search_recommend", keywords=[name])
    assert len(delivery_indexes) == len(instore_indexes) == 1 and len(grouped) == 1
    assert [m.__name__ for m in scalar] == []  # no dated product made: the episode read none
    # the next episode of the task reads what was made: nothing made again
    env.reset(seed=1, options={"task": task})
    _step(u, "delivery_product_search_recommend", keywords=[name])
    _step(u, "instore_product_search_recommend", keywords=[task.world["shop_products"][0]["name"]])
    assert len(delivery_indexes) == len(instore_indexes) == 1 and len(grouped) == 1
    room = task.world["hotel_rooms"][0]
    _step(u, "get_ota_hotel_info", hotel_id=room["hotel_id"])
    assert [m.__name__ for m in scalar] == ["HotelRoom"]  # that one table, once
    env.reset(seed=2, options={"task": task})
    _step(u, "get_ota_hotel_info", hotel_id=room["hotel_id"])
    assert [m.__name__ for m in scalar] == ["HotelRoom"] and len(grouped) == 1


@pytest.mark.parametrize("domain, generator, env_id", [
    ("delivery", delivery_gen, "servicegym/Delivery-v0"), ("instore", instore_gen, "servicegym/InStore-v0"),
])
def test_delivery_and_instore_resets_make_no_golden_route(domain: str, generator: Any, env_id: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    routes = _count(monkeypatch, generator._Builder, "_actions")
    env = gym.make(env_id)
    for seed in range(74_000, 74_004):
        env.reset(seed=seed)
    assert routes == []
    task = env.unwrapped.task
    route = task.golden_actions
    assert len(routes) == 1 and route and task.golden_actions is route
    again = generator.__dict__[f"generate_{domain}_task"](*_seed_of(task), violations=True)
    assert again.golden_actions == route  # with its violations (each made from its own route) the same route
    assert again.model_dump() == task.model_dump() | {"violations": again.violations}


def _seed_of(task: Task) -> tuple[int, int, str]:
    _, split, seed, diff = task.task_id.split("/")
    return int(seed), int(diff[1:]), split


# ----- copies never share a write ---------------------------------------------------------------------


def test_a_cross_episode_s_writes_stay_in_its_copy() -> None:
    env = gym.make(CROSS)
    env.reset(seed=5)
    u = env.unwrapped
    task = u.task
    eager = build_life_world(CrossWorld, task.world, vouched=True).state_dict()
    other = generate_cross_task(99, 3, "train", violations=False)
    other_world = build_lazy_life_world(CrossWorld, other.world)
    built = {name: t.lazy for name, t in u._initial.tables.items()}
    info: dict[str, Any] = {}
    for action in task.golden_actions:  # books, pays, cancels in three domains
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert info["success"]
    assert u.world.state_dict() != eager  # the episode changed its world...
    assert u._initial.state_dict() == eager  # ...never the initial one
    for name, rows in built.items():  # nor the rows made once for every copy
        if rows is not None and rows.rows is not None:
            assert rows.rows is u._initial.table(name).rows
    assert other_world.state_dict() == build_life_world(CrossWorld, other.world, vouched=True).state_dict()
    env.reset(seed=5, options={"task": task})
    assert u.world.state_dict() == eager


def test_copies_made_before_the_first_read_share_the_rows_and_copy_on_write() -> None:
    task = generate_cross_task(8, 4, "train", violations=False)
    world = build_lazy_life_world(CrossWorld, task.world)
    eager = build_life_world(CrossWorld, task.world, vouched=True)
    a, b = world.copy(), world.copy()
    assert "hotel_rooms" in _unmade(a) and "hotel_rooms" in _unmade(b) and "stores" in _unmade(world)
    room = next(iter(eager.table("hotel_rooms")))
    store = next(iter(eager.table("stores")))
    txn = a.begin()
    a.table("hotel_rooms").update(room.key, quantity=0)
    a.table("stores").update(store.key, score=1.0)
    assert a.table("hotel_rooms").rows is not b.table("hotel_rooms").rows
    a.rollback(txn)  # a failed call leaves the copy as it was
    _rows_as(a.table("hotel_rooms"), eager.table("hotel_rooms"))
    a.table("hotel_rooms").update(room.key, quantity=0)
    a.table("stores").update(store.key, score=1.0)
    assert a.table("hotel_rooms").require(room.key).quantity == 0
    for w in (b, world):  # the other copy and the world itself read the rows as built
        _rows_as(w.table("hotel_rooms"), eager.table("hotel_rooms"))
        _rows_as(w.table("stores"), eager.table("stores"))
        assert type(w.table("stores")) is Table
    # the views and indexes a copy uses are those of the rows as built, whatever the copy wrote
    assert world.extra["_view_rows"]["stores"][store.key] is world.table("stores").require(store.key)
    assert a.extra["_index_stores"].ids == eager.extra["_index_stores"].ids
    assert a.state_dict() != b.state_dict() == eager.state_dict()


def test_a_lazy_episode_plays_as_an_eager_one() -> None:
    for seed in (21, 22, 23):
        env = gym.make(CROSS)
        env.reset(seed=seed)
        task = env.unwrapped.task
        eager_task = Task.model_validate(task.model_dump())  # not vouched for: built eagerly and validated
        assert task.vouched_world and not eager_task.vouched_world
        twin = gym.make(CROSS)
        twin.reset(seed=seed, options={"task": eager_task})
        env.reset(seed=seed, options={"task": task})
        assert _unmade(env.unwrapped._initial) and not _unmade(twin.unwrapped._initial)
        for action in task.golden_actions:
            a, b = env.step(action), twin.step(action)
            assert a[:4] == b[:4]
            if a[2] or a[3]:
                break
        assert env.unwrapped.world.state_dict() == twin.unwrapped.world.state_dict()


# ----- the generators' own values, unvalidated, are the validated ones ------------------------------------


def _same_model(a: Any, b: Any) -> None:
    assert type(a) is type(b) and a == b
    assert list(a.__dict__) == list(b.__dict__)
    assert [(k, type(v)) for k, v in a.__dict__.items()] == [(k, type(v)) for k, v in b.__dict__.items()]
    assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__
    assert a.__pydantic_private__ == b.__pydantic_private__ and a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.model_dump_json() == b.model_dump_json()


def test_a_generated_task_is_the_validated_task() -> None:
    for gen in (generate_cross_task, generate_travel_task, delivery_gen.generate_delivery_task):
        t = gen(4, 3, "train", violations=True)
        kw = dict(task_id=t.task_id, domain=t.domain, difficulty=t.difficulty, reasoning_points=t.reasoning_points,
                  world=t.world, user=t.user, rubric=list(t.rubric), golden_actions=list(t.golden_actions),
                  violations=t.violations)
        fast = Task.generated(**kw)
        slow = Task(source="generated", language="en", **kw)
        _same_model(fast, slow)
        assert fast.world is not t.world and fast.world == t.world  # a shallow copy, as validation makes
    with pytest.raises(ValueError):  # a value visibly not its field's is validated, and refused
        Task.generated("x/train/1/d0", "x", "two", 0, {}, t.user, [], [], {})  # type: ignore[arg-type]


def test_the_scripted_user_made_unvalidated_is_the_validated_one() -> None:
    rng, same = TaskRandom("u"), TaskRandom("u")
    sheet = FactSheet(rng)
    sheet.add("budget", "At most 80 yuan.", ["budget", "price"], hide=True)
    sheet.add("diet", "No peanuts.", None, hide=True)
    want = [HiddenFact(topic="budget", keywords=["budget", "price"], answer="At most 80 yuan."),
            HiddenFact(topic="diet", keywords=[], answer="No peanuts.")]
    for a, b in zip(sheet.hidden, want):
        _same_model(a, b)
    for change in (None, "Make it 19:00."):
        made = user_script(rng, "Ana", "polite", ("home city", "Chengdu"), "Hello.", sheet.hidden, change, "first_done")
        persona = {"name": "Ana", "occupation": made.persona["occupation"], "personality": made.persona["personality"],
                   "home city": "Chengdu"}
        same.choice([0])  # the occupation's draw, as ``user_script`` takes it
        validated = UserScript(language="en", style="polite", persona=persona, opening="Hello.", facts=sheet.hidden,
                               intent_change=IntentChange(trigger="first_done", message=change) if change else None)
        _same_model(made, validated)
        assert made.facts is not sheet.hidden and made.persona is not persona


# ----- the travel generator's products: drawn, their rows made when read ------------------------------------


def test_a_travel_task_s_products_are_made_when_its_world_is_read() -> None:
    task = generate_travel_task(12, 3, "train", violations=False)
    assert task.vouched_world  # asked without making the world
    head, later = task.world_parts()
    assert sorted(later) == ["flight_seats", "hotel_rooms", "train_seats"]
    assert all(k in head for k in later) and list(head)[:2] == ["time", "user_id"]
    again = generate_travel_task(12, 3, "train", violations=False)
    for read in (lambda t: t.world, lambda t: t.model_dump(), lambda t: copy.deepcopy(t).world,
                 lambda t: pickle.loads(pickle.dumps(t)).world, lambda t: t == again):
        t = generate_travel_task(12, 3, "train", violations=False)
        read(t)
        assert t.world_parts()[1] == {} and type(t.__dict__["world"]) is dict
    made = generate_travel_task(12, 3, "train", violations=False)
    world = made.world
    assert made.vouched_world and made.world is world  # made once, the one vouched for
    assert list(world) == list(head) and all(type(world[k]) is list for k in later)
    assert world["hotel_rooms"] and all(list(r) == ["product_id", "hotel_id", "room_type", "date", "price", "quantity"]
                                        for r in world["hotel_rooms"])
    assert made.model_dump() == again.model_dump()


def test_a_travel_reset_makes_no_product_row(monkeypatch: pytest.MonkeyPatch) -> None:
    import servicegym.envs.tasks.generators.travel as travel_gen

    blocks = _count(monkeypatch, travel_gen.ProductBlock, "rows")
    env = gym.make(TRAVEL)
    u = env.unwrapped
    for seed in range(75_000, 75_004):
        env.reset(seed=seed)
    assert blocks == [] and u.task.world_parts()[1]  # no row made, the world not read
    n = len(u.world.table("flight_seats"))  # the table read makes its rows, and only its
    assert n and blocks and {b.type_field for b in blocks} == {"seat_type"} and all(b.prefix == "FS" for b in blocks)
    assert u.task.world_parts()[1]  # the task's world is still unmade
    eager = build_life_world(TravelWorld, u.task.world, vouched=True)
    _rows_as(u.world.table("flight_seats"), eager.table("flight_seats"))


def test_a_repeated_product_id_is_drawn_on_as_the_id_pool_does() -> None:
    import random

    import servicegym.envs.tasks.generators.travel as travel_gen
    from servicegym.envs.tasks.generators.common import IdPool

    prices = {f"2025-03-0{d}": {"Standard room": 300.0 + d, "Deluxe room": 420.0} for d in range(1, 5)}
    for stock in (None, 10, {("Standard room", "2025-03-02"): 0}):
        state = TaskRandom("collide").getstate()
        peek = random.Random()
        peek.setstate(state)
        first = peek.getrandbits(24)
        while first >= 10**7:
            first = peek.getrandbits(24)
        out = []
        for slot in (travel_gen.SlotIndex(), {}):  # drawn (``ProductBlock``), and the eager loop
            rng = TaskRandom("x")
            rng.setstate(state)
            ids = IdPool(rng)
            ids.used.add(f"HR{first:07d}")  # the first id drawn is taken already
            ids.drawn["HR"] = {first}
            drawn = type(slot) is travel_gen.SlotIndex
            tables: dict[str, Any] = {"hotels": [], "hotel_rooms": travel_gen.DrawnTable() if drawn else []}
            cat = travel_gen.TravelCatalogue(rng, ids, tables, {}, slot)
            cat.hotel("Chengdu", "Stem", (104.0, 30.6), 4, 4.5, [], prices, lambda c, d: f"{d}, {c}", stock)
            rows = list(tables["hotel_rooms"])
            out.append((rows, rng.getstate(), [slot[(r["hotel_id"], r["room_type"], r["date"])] for r in rows]))
        assert out[0] == out[1]
        assert all(r["product_id"] != f"HR{first:07d}" for r in out[0][0])
