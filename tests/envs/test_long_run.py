"""One env instance over ~2000 short episodes keeps its memory and object count flat.

Timing is left to ``scripts/bench_delivery.py``; here only memory (tracemalloc) and the number of
live objects are asserted, with bounds generous enough not to flake yet far below what keeping
one world, history or task per episode would cost.
"""

from __future__ import annotations

import gc
import tracemalloc

import gymnasium as gym

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.sources as tasks_module
from tests.conftest import OPEN_STORE, call, make_env

EPISODES = 2000
MARKS = (500, 1250, 2000)


def short_episode(env, seed: int, store_id: str | None = None) -> None:
    env.reset(seed=seed)
    store_id = store_id or next(iter(env.unwrapped.world.table("stores").rows))
    env.step(call("get_delivery_store_info", store_id=store_id) + call("nope"))
    env.step("How many people is this for?")
    _, _, terminated, _, info = env.step("###STOP###")
    assert terminated and "score" in info


def live_objects() -> int:
    gc.collect()
    return len(gc.get_objects())


def test_memory_flat_over_many_episodes_of_one_task():
    env = make_env()
    for seed in range(MARKS[0]):
        short_episode(env, seed, OPEN_STORE)
    gc.collect()
    tracemalloc.start()
    try:
        memory, objects = [], []
        for seed in range(MARKS[0], EPISODES + 1):
            if seed in MARKS:
                objects.append(live_objects())
                memory.append(tracemalloc.get_traced_memory()[0])
            short_episode(env, seed, OPEN_STORE)
    finally:
        tracemalloc.stop()
    # 1500 episodes: a leak of 1 KB per episode would show as 1.5 MB
    assert memory[-1] - memory[0] < 1_000_000, memory
    assert objects[-1] - objects[0] < 300, objects
    assert len(env.unwrapped.history) == 6 and len(env.unwrapped.messages) == 8


def test_objects_flat_over_many_generated_tasks():
    """Each reset draws a new generated task; the source's cache must stay bounded."""
    env = gym.make("servicegym/Delivery-v0")
    objects = []
    for seed in range(EPISODES + 1):
        if seed in MARKS:
            objects.append(live_objects())
        short_episode(env, seed)
    # a leaked task or world per episode would add thousands of objects each time
    assert max(objects) - objects[0] < 1500, objects
    assert len(tasks_module._GENERATED) <= tasks_module.GENERATED_CACHE_SIZE
