"""One env instance over ~2000 short episodes keeps its memory and object count flat.

Timing is left to ``scripts/bench_delivery.py``; here only memory (tracemalloc) and the number of
live objects are asserted, with bounds generous enough not to flake yet far below what keeping
one world, history or task per episode would cost.
"""

from __future__ import annotations

import gc
import tracemalloc

import gymnasium as gym
import pytest

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


# ----- no work left for reset or step 1 (counted calls, not time) ------------------------------
ENV_IDS = ("servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
           "servicegym/CrossScenario-v0", "servicegym/Payments-v0", "servicegym/Workspace-v0")


def _calls_made(fn, reps: int = 3) -> dict[tuple[str, str], int]:
    """Python-level calls ``fn`` makes (cProfile counts: deterministic, unlike time), summed."""
    import cProfile
    import gc
    import pstats

    pr = cProfile.Profile()
    # Everything alive before the first rep moves to gc's permanent generation, so the collection
    # before each rep walks only what the reps made (in a full test session, walking the whole heap
    # again costs seconds per collection); the garbage of one rep is still collected before the next.
    gc.collect()
    gc.freeze()
    try:
        for _ in range(reps):
            # no collection inside the profiled part: a gc callback (hypothesis registers one) would
            # count as calls of the code under test whenever a bigger episode happens to trigger one
            gc.collect()
            gc.disable()
            try:
                fn(pr)
            finally:
                gc.enable()
    finally:
        gc.unfreeze()
    return {(k[0].rsplit("/", 1)[-1], k[2]): v[1] for k, v in pstats.Stats(pr).stats.items()}


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_reset_after_a_played_episode_does_the_work_of_an_untouched_one(env_id: str) -> None:
    """A reset re-does nothing per earlier step: after a golden episode played to its end it makes
    exactly the calls of a reset right after a reset (what remains of the difference in time is
    CPython freeing the episode's own records, and cold caches: ``scripts/bench_envs.py``)."""
    env = gym.make(env_id)
    u = env.unwrapped
    opts = {"task_id": u.source.ids("test")[0]}
    env.reset(seed=0, options=opts)

    def untouched(pr) -> None:
        env.reset(options=opts)
        pr.enable()
        env.reset(options=opts)
        pr.disable()

    def played(pr) -> None:
        env.reset(options=opts)
        for a in u.task.golden_actions:
            out = env.step(a)
        assert out[2] or out[3]
        pr.enable()
        env.reset(options=opts)
        pr.disable()

    assert _calls_made(played) == _calls_made(untouched)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_step_one_does_the_work_of_a_later_step(env_id: str) -> None:
    """Nothing is built lazily on the first step of an episode: step 1 (the golden route's first
    read) makes the calls of the same step repeated later in the episode. (The first write to a
    table copies it: the world is copy-on-write, which is what keeps reset cheap.)"""
    import json

    env = gym.make(env_id)
    u = env.unwrapped
    opts = {"task_id": u.source.ids("test")[0]}
    env.reset(seed=0, options=opts)
    first = next(a for a in u.task.golden_actions if a.lstrip().startswith("{")
                 and (spec := u.toolkit.resolve(json.loads(a)["name"])) is not None and spec.kind == "read")

    def step_one(pr) -> None:
        env.reset(options=opts)
        pr.enable()
        env.step(first)
        pr.disable()

    def later(pr) -> None:
        env.reset(options=opts)
        env.step(first)
        env.step(first)
        pr.enable()
        env.step(first)
        pr.disable()

    _calls_made(step_one)  # what the process builds once (caches shared by every episode) is not the episode's
    one, again = _calls_made(step_one), _calls_made(later)
    # Payments summarises its documents once per world, on the first search: cached for the world
    once = {k for k in set(one) | set(again) if k[0] in ("world.py", "encoder.py") and one.get(k, 0) != again.get(k, 0)}
    assert {k: v for k, v in one.items() if k not in once} == {k: v for k, v in again.items() if k not in once}
