"""A reset to a new generated task builds nothing its episode may never read (issue 29, reset part,
round 2): the catalogue views (the row dicts and JSON the delivery, in-store and cross-scenario
tools show) and the travel product indexes are built on first use, then kept for every episode of
the task; a world's tables are keyed without a per-row property call. What a tool shows must not
change: the same rows, the same JSON, the same transcript, whether a view comes from the cache or
is rendered, in the first episode of a task or a later one. No timing here (scripts/bench_envs.py).
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.tasks.generators.cross import generate_cross_task
from servicegym.envs.tasks.generators.delivery import generate_delivery_task
from servicegym.envs.tasks.generators.instore import generate_instore_task
from servicegym.envs.tasks.generators.travel import generate_travel_task
from servicegym.envs.tasks.model import Task
from servicegym.world_state.cross import CrossWorld
from servicegym.world_state.delivery.entities import DeliveryWorld
from servicegym.world_state.instore.entities import InStoreWorld, product_key
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.tools import dumps
from servicegym.world_state.travel import KINDS, TravelWorld
from servicegym.world_state.travel.entities import INDEX_HOME, products_by_slot, products_of

CATALOGUE = {
    "delivery": (generate_delivery_task, DeliveryWorld),
    "instore": (generate_instore_task, InStoreWorld),
    "cross": (generate_cross_task, CrossWorld),
}
ENV_IDS = ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0", "servicegym/CrossScenario-v0"]


@pytest.mark.parametrize("domain", sorted(CATALOGUE))
def test_views_are_built_on_first_use_and_are_the_rendered_rows(domain: str) -> None:
    gen, cls = CATALOGUE[domain]
    for seed in range(4):
        world = build_life_world(cls, gen(seed, 3, "train", violations=False).world)
        assert set(world.extra["_views"]) == set(cls.catalogue_tables)
        assert all(not world.extra["_views"][t] and not world.extra["_view_json"][t] for t in cls.catalogue_tables)
        episode = world.copy()
        for table in cls.catalogue_tables:
            rows = list(world.table(table))
            assert rows, table
            for row in rows:
                expected = world.render_row(table, row)
                # first use (in an episode copy), then from the cache (in the initial world)
                assert episode.view(table, row) == expected and world.view(table, row) == expected
                assert episode.view_json(table, row) == dumps(expected) == world.view_json(table, row)
            # filled once, for both worlds: the copy wrote into the initial world's caches
            assert list(world.extra["_views"][table]) == list(world.extra["_view_json"][table]) == [r.key for r in rows]
            # a caller may change the dict a view returns: the cached one stays as rendered
            shown = world.view(table, rows[0])
            shown.clear()
            assert world.view(table, rows[0]) == world.render_row(table, rows[0])


def test_a_changed_row_is_shown_as_it_is_and_not_kept() -> None:
    world = build_life_world(DeliveryWorld, generate_delivery_task(2, 3, "train", violations=False).world)
    product = next(iter(world.table("products")))
    episode = world.copy()
    changed = episode.table("products").update(product.product_id, name="Renamed dish", quantity=1)
    # the changed row is shown first (nothing cached yet): rendered, and not kept for the task
    assert episode.view("products", changed)["name"] == "Renamed dish"
    assert '"Renamed dish"' in episode.view_json("products", changed)
    assert product.product_id not in world.extra["_views"]["products"]
    assert product.product_id not in world.extra["_view_json"]["products"]
    # the task's own row is then cached, and each world still shows its own row
    assert world.view("products", product)["name"] == product.name
    assert world.extra["_views"]["products"][product.product_id][0] is product
    assert episode.view("products", changed)["name"] == "Renamed dish"
    assert '"Renamed dish"' not in world.view_json("products", product)
    assert episode.view("products", episode.table("products").require(product.product_id))["quantity"] == 1


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_episodes_of_a_task_show_the_same_text_first_and_later(env_id: str) -> None:
    """The golden route played in a task's first episode (views rendered and cached as the tools ask)
    and again (every view from the cache) gives the same observations, and the same as an env whose
    caches and indexes were filled before the first step."""
    env = gym.make(env_id)
    u = env.unwrapped
    for seed in (911_011, 911_012):  # tasks no other test of the process has built
        tid = u.source.make_id("train", seed)
        env.reset(seed=0, options={"task_id": tid})
        task = u.task
        first = [env.step(a)[0] for a in task.golden_actions]
        env.reset(seed=0, options={"task_id": tid})
        again = [env.step(a)[0] for a in task.golden_actions]
        assert first == again
        # the task through its JSON, its world built anew and every view and index filled up front
        fresh = Task.model_validate_json(task.model_dump_json())
        world = fresh.cached_world(u.build_world)
        assert world.state_dict() == u.build_world(task).state_dict()
        for table in world.catalogue_tables:
            for row in world.table(table):
                world.view(table, row)
                world.view_json(table, row)
        if INDEX_HOME in world.extra:
            for kind in KINDS.values():
                products_by_slot(world, kind)
                products_of(world, kind, "")
        env.reset(seed=0, options={"task": fresh})
        assert [env.step(a)[0] for a in fresh.golden_actions] == first
    env.close()


@pytest.mark.parametrize("cls", [TravelWorld, CrossWorld])
def test_travel_indexes_are_built_on_first_use_and_shared_by_the_episodes(cls: Any) -> None:
    gen = generate_travel_task if cls is TravelWorld else generate_cross_task
    world = build_life_world(cls, gen(5, 4, "train", violations=False).world)
    home = world.extra[INDEX_HOME]
    assert home == {}
    episode = world.copy()
    for kind in KINDS.values():
        slots = products_by_slot(episode, kind)
        assert home[f"_slots_{kind.products}"] is slots is products_by_slot(world, kind)
        assert products_of(episode, kind, "no such place") == []
        owners = {getattr(p, kind.owner) for p in world.table(kind.products)}
        for owner in owners:
            assert [p.product_id for p in products_of(episode, kind, owner)] == \
                   [p.product_id for p in products_of(world, kind, owner)]
    assert {f"_{n}_{k.products}" for k in KINDS.values() for n in ("slots", "owned")} == set(home)
    # a later episode's copy finds them built: nothing lands in its own ``extra``
    later = world.copy()
    assert products_by_slot(later, KINDS["hotel"]) is home["_slots_hotel_rooms"]
    assert not any(k.startswith(("_slots_", "_owned_")) for k in later.extra)


def test_tables_keep_the_first_of_duplicate_keys_and_computed_keys() -> None:
    spec = copy.deepcopy(generate_delivery_task(4, 3, "train", violations=False).world)
    products = spec["products"]
    dup = {**products[0], "name": "A second row with the first one's id"}
    spec["products"] = [*products, dup]
    world = build_life_world(DeliveryWorld, spec)
    assert list(world.table("products").rows) == [p["product_id"] for p in products]
    assert world.table("products").require(products[0]["product_id"]).name == products[0]["name"]
    # in-store products are keyed by shop and product (a computed key, not a field)
    ispec = generate_instore_task(4, 3, "train", violations=False).world
    iworld = build_life_world(InStoreWorld, ispec)
    assert list(iworld.table("shop_products").rows) == \
           [product_key(p["shop_id"], p["product_id"]) for p in ispec["shop_products"]]
