"""A reset to a new generated task (issue 29) makes no golden route and validates no row its
generator vouched for, counted, not timed; and the task is the same task byte for byte.

* The golden route of a generated task is made on its first read (``Task.defer_golden``): a reset
  never reads it, so a reset to a new task calls no route builder; a read, a dump, a comparison, a
  copy or a pickle of the task makes it once, and it is the route the generator made before.
* A generator vouches for its world (``Task.vouch_world``): the env builds its plain tables (the
  catalogues' dated products, most rows of a world) without validating them again. The entities
  are what validation makes of the same rows (type for type, field order, fields set), for every
  generator that vouches; a deep copy or a pickle of the task, or a copy with another world, is
  not vouched for, so a world edited in a copy is validated (and a bad row named) as ever.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.generators.cross as cross_gen
import servicegym.envs.tasks.generators.payments as payments_gen
import servicegym.envs.tasks.generators.travel as travel_gen
import servicegym.world_state.life.spec as life_spec
from servicegym.envs.tasks.model import Task
from servicegym.world_state.cross import CrossWorld
from servicegym.world_state.life.spec import WorldSpecError, build_life_world
from servicegym.world_state.payments import PAYMENTS_SCHEMA, PaymentsSpecError, build_payments_world
from servicegym.world_state.travel import TravelWorld

GENERATORS: dict[str, Callable[..., Task]] = {
    "travel": travel_gen.generate_travel_task,
    "cross": cross_gen.generate_cross_task,
    "payments": payments_gen.generate_payments_task,
}
ENVS = {"travel": "servicegym/Travel-v0", "cross": "servicegym/CrossScenario-v0", "payments": "servicegym/Payments-v0"}


def _count_routes(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the calls of every generator's route builder."""
    calls = {"travel": 0, "cross": 0, "payments": 0}
    for domain, owner, name in (("travel", travel_gen._Builder, "_actions"), ("cross", cross_gen._Builder, "_actions"),
                                ("payments", payments_gen, "payments_plan")):
        original = getattr(owner, name)

        def counting(*a: Any, _orig: Any = original, _d: str = domain, **k: Any) -> Any:
            calls[_d] += 1
            return _orig(*a, **k)

        monkeypatch.setattr(owner, name, counting)
    return calls


@pytest.mark.parametrize("domain", sorted(GENERATORS))
def test_a_reset_to_a_new_task_makes_no_golden_route(domain: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_routes(monkeypatch)
    env = gym.make(ENVS[domain])
    for seed in range(70_000, 70_004):  # fresh seeds: each reset generates a task and builds its world
        env.reset(seed=seed)
    assert calls[domain] == 0
    route = env.unwrapped.task.golden_actions  # the first read makes it, once
    assert calls[domain] == 1 and route and env.unwrapped.task.golden_actions is route
    assert calls[domain] == 1


@pytest.mark.parametrize("domain", sorted(GENERATORS))
def test_the_deferred_route_is_the_route_and_every_whole_task_read_makes_it(domain: str) -> None:
    gen = GENERATORS[domain]
    want = gen(11, 2, "train", violations=False).golden_actions  # read: made
    assert want and all(isinstance(a, str) for a in want)
    # every way of reading the task whole sees the route, never the placeholder
    readers: list[Callable[[Task], list[str]]] = [
        lambda t: json.loads(t.model_dump_json())["golden_actions"],
        lambda t: t.model_dump()["golden_actions"],
        lambda t: copy.copy(t).golden_actions,
        lambda t: copy.deepcopy(t).golden_actions,
        lambda t: t.model_copy().golden_actions,
        lambda t: pickle.loads(pickle.dumps(t)).golden_actions,
        lambda t: dict(t)["golden_actions"],
        lambda t: Task.model_validate(t.model_dump()).golden_actions,
    ]
    for read in readers:
        assert read(gen(11, 2, "train", violations=False)) == want
    assert gen(11, 2, "train", violations=False) == gen(11, 2, "train", violations=False)
    assert "not made yet" not in repr(gen(11, 2, "train", violations=False))
    # a route set by hand replaces the deferred one
    task = gen(11, 2, "train", violations=False)
    task.golden_actions = ["hello"]
    assert task.golden_actions == ["hello"] and task.model_dump()["golden_actions"] == ["hello"]


def _entities_as_validated(built: Any, validated: Any, schema: dict[str, Any]) -> None:
    for name in schema:
        a, b = list(built.table(name).rows.items()), list(validated.table(name).rows.items())
        assert [k for k, _ in a] == [k for k, _ in b], name
        for (_, x), (_, y) in zip(a, b):
            assert type(x) is type(y)
            assert [(k, type(v), v) for k, v in x.__dict__.items()] == [(k, type(v), v) for k, v in y.__dict__.items()], name
            assert x.__pydantic_fields_set__ == y.__pydantic_fields_set__
            assert x.__pydantic_extra__ is None and x.__pydantic_private__ is None
            assert x.model_dump_json() == y.model_dump_json() and x == y


@pytest.mark.parametrize("domain", sorted(GENERATORS))
def test_a_vouched_world_is_the_validated_world(domain: str) -> None:
    gen = GENERATORS[domain]
    for seed in range(24):
        task = gen(seed, seed % 6, "train", violations=False)
        assert task.vouched_world
        if domain == "payments":
            _entities_as_validated(build_payments_world(task.world, vouched=True), build_payments_world(task.world),
                                   PAYMENTS_SCHEMA)
        else:
            cls = TravelWorld if domain == "travel" else CrossWorld
            _entities_as_validated(build_life_world(cls, task.world, vouched=True), build_life_world(cls, task.world),
                                   cls.schema)


def test_the_env_builds_a_vouched_catalogue_without_validating_it(monkeypatch: pytest.MonkeyPatch) -> None:
    validated: list[str] = []
    original = life_spec._rows

    def counting(model: Any, spec: dict[str, Any], section: str) -> list[Any]:
        validated.append(section)
        return original(model, spec, section)

    monkeypatch.setattr(life_spec, "_rows", counting)
    env = gym.make("servicegym/Travel-v0")
    env.reset(seed=70_100)
    products = {"hotel_rooms", "flight_seats", "train_seats", "attraction_tickets"}
    assert not products & set(validated)  # the lazy world builds its tables on first read: none yet
    world = env.unwrapped.world
    for name in products:
        len(world.table(name).rows)  # the first read builds each product table, without validating it
    assert not products & set(validated)
    validated.clear()
    fresh = travel_gen.generate_travel_task(70_101, 3, "train", violations=False)
    env.reset(options={"task": fresh.model_copy(deep=True)})  # a copy is not vouched for
    assert products <= set(validated)


def test_copies_are_not_vouched_for_and_an_edited_copy_is_validated() -> None:
    task = travel_gen.generate_travel_task(3, 3, "train", violations=False)
    assert task.vouched_world and task.model_copy().vouched_world  # the same world
    assert not task.model_copy(deep=True).vouched_world
    assert not pickle.loads(pickle.dumps(task)).vouched_world
    assert not task.model_copy(update={"world": dict(task.world)}).vouched_world
    bad = task.model_copy(deep=True)
    bad.world["hotel_rooms"][5]["price"] = "cheap"
    env = gym.make("servicegym/Travel-v0")
    with pytest.raises(WorldSpecError, match=r"field world\.hotel_rooms\.5\.price: "):
        env.reset(options={"task": bad})
    pay = payments_gen.generate_payments_task(3, 2, "train", violations=False).model_copy(deep=True)
    pay.world["tables"]["payments"][0]["amount"] = "lots"
    with pytest.raises(PaymentsSpecError, match=r"field world\.tables\.payments\.0\.amount: "):
        build_payments_world(pay.world)


def test_rows_that_are_visibly_not_the_entity_s_are_validated_even_when_vouched() -> None:
    """A vouched table whose rows lack a field or hold them in another order is validated: the
    vouch never makes an entity validation would not."""
    task = travel_gen.generate_travel_task(5, 3, "train", violations=False).model_copy(deep=True)
    rows = task.world["hotel_rooms"]
    rows[0] = dict(reversed(list(rows[0].items())))  # another order
    del rows[1]["quantity"]  # a default
    world = build_life_world(TravelWorld, task.world, vouched=True)
    assert world.table("hotel_rooms").rows == build_life_world(TravelWorld, task.world).table("hotel_rooms").rows
    first = next(iter(world.table("hotel_rooms")))
    assert list(first.__dict__) == list(type(first).model_fields)
