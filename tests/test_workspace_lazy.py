"""A new generated Workspace task builds its sessions as they are read (issue 29): a reset builds
the first of twenty, the env builds each later one when the episode reaches it, and whoever reads
the task's world (any read: a key, ``json.dumps``, a copy, a pickle, a comparison, a dump of the
task, pydantic's own serializer) reads the whole world: the task defers its world's ``tables``,
``sessions`` and ``manual_actions`` to the episode's draft (``Task.defer_world``, the mechanism
the life envs' generators use), so no unfinished world is ever there to be read. Counted and
compared, never timed:

* the sessions, world, golden route and labels are the ones the episode built at once gives, byte
  for byte, whenever and in whatever order they are read (the frozen suite and the pinned digests
  of ``test_generator_speed.py`` hold the content itself);
* a reset to a new task builds one session, and the env's session labels come from the slots
  learnt, equal to ``episode_labels`` of the whole episode;
* an unfinished episode goes with its task, without the cyclic collector, and a world kept alone
  after its task went is still the whole world.
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
import threading
import weakref
from typing import Any

import gymnasium as gym
import pytest
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.tasks.generators.workspace as ws_gen
from servicegym.envs.tasks.generators.content_workspace import PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace import episode_labels, generate_workspace_task, lazy_episode
from servicegym.envs.tasks.model import Task

ENV_ID = "servicegym/Workspace-v0"


def _eager(seed: int, difficulty: int = 1, split: str = "train") -> dict[str, Any]:
    """The task built at once (the checker's form, with violations), as the lazy one dumps: without
    what only the checker's form has."""
    data = generate_workspace_task(seed, difficulty, split, violations=True).model_dump(mode="json")
    data["violations"] = {}
    del data["world"]["generic_actions"]
    return data


def _lazy(seed: int, difficulty: int = 1, split: str = "train") -> Any:
    for d in (0, 1, 2):  # every slot's labels learnt: the task comes unfinished
        ws_gen._probe(d)
    task = generate_workspace_task(seed, difficulty, split, violations=False)
    assert lazy_episode(task) is not None and len(lazy_episode(task).ep.specs) == 1
    # the world deferred, as ``Task.defer_world`` defers it: its three episode-wide keys made on first read
    head, makers = task.world_parts()
    assert set(makers) == {"tables", "sessions", "manual_actions"} and type(task.__dict__["world"]) is not dict
    assert list(head) == ["version", "persona", "owner", "owner_email", "organization", "now", "tables", "sessions",
                          "skills", "manual_actions"]
    return task


@pytest.mark.parametrize("seed", range(10))
def test_a_lazy_task_is_the_task_built_at_once(seed: int) -> None:
    difficulty = seed % 3
    task = _lazy(seed, difficulty)
    assert json.dumps(task.model_dump(mode="json")) == json.dumps(_eager(seed, difficulty))
    assert lazy_episode(task) is None  # the dump finished it


READS = {
    "key": lambda t: t.world["sessions"],
    "len": lambda t: len(t.world),
    "in": lambda t: "manual_actions" in t.world,
    "items": lambda t: list(t.world.items()),
    "get": lambda t: t.world.get("tables"),
    "json": lambda t: json.dumps(t.world),
    "deepcopy": lambda t: copy.deepcopy(t.world),
    "copy": lambda t: copy.copy(t.world),
    "dict": lambda t: dict(t.world),
    "pickle": lambda t: pickle.loads(pickle.dumps(t.world)),
    "eq": lambda t: t.world == {},
    "repr": lambda t: repr(t.world),
    "golden": lambda t: t.golden_actions,
    "task deepcopy": lambda t: copy.deepcopy(t),
    "task pickle": lambda t: pickle.loads(pickle.dumps(t)),
    "task eq": lambda t: t == t,
    "task copy": lambda t: copy.copy(t),
    "task dump json": lambda t: t.model_dump_json(),
    "task iter": lambda t: dict(t),
    "task repr": lambda t: repr(t),
    "pydantic serializer": lambda t: to_jsonable_python(t),
    "type adapter": lambda t: TypeAdapter(Task).dump_json(t),
}


@pytest.mark.parametrize("how", list(READS))
def test_any_read_of_the_world_reads_the_whole_world(how: str) -> None:
    seed = 3 + list(READS).index(how)
    whole = _eager(seed)["world"]
    task = _lazy(seed)
    got = READS[how](task)
    assert lazy_episode(task) is None and task.world_parts()[1] == {}
    assert type(task.__dict__["world"]) is dict and task.vouched_world  # the made world is the one vouched for
    assert json.dumps(task.world) == json.dumps(whole)
    if how in ("task dump json", "type adapter"):  # what the serializer wrote is the whole task
        assert json.loads(got) == json.loads(json.dumps(_eager(seed)))
    if how == "pydantic serializer":
        assert json.dumps(got) == json.dumps(_eager(seed))
    assert dict(task.world) == whole and task.world == whole
    assert type(copy.deepcopy(task.world)) is dict and type(pickle.loads(pickle.dumps(task.world))) is dict


def test_a_reset_builds_one_session_and_each_later_one_when_the_episode_reaches_it() -> None:
    for d in (0, 1, 2):
        ws_gen._probe(d)
    env = gym.make(ENV_ID, max_steps=10**6, max_errors=10**6)
    u = env.unwrapped
    for seed in range(5):
        obs, info = env.reset(seed=900 + seed)
        task = u.task
        draft = lazy_episode(task)
        assert draft is not None and len(draft.ep.specs) == 1
        # the env's labels are the whole episode's
        whole = _eager(int(task.task_id.split("/")[2]), task.difficulty)
        sessions = whole["world"]["sessions"]
        meta = [{"index": s["index"], "group": s["group"], "precursors": s["precursors"], **lab}
                for s, lab in zip(sessions, episode_labels(sessions), strict=True)]
        assert info["session_meta"] == meta
        assert obs == sessions[0]["opening"]
        for k in range(1, 4):  # sessions 1..3 played: session k+1 is built when it starts, not before
            assert len(draft.ep.specs) == k
            for action in u._cache.sessions[k - 1].spec["golden"]:
                env.step(action)
            assert u._session == k + 1
        assert len(draft.ep.specs) == 4 and lazy_episode(task) is draft
        assert draft.ep.specs == sessions[:4]
        # the world's persona tables are made on their first read, the generator's own records
        persona = task.world  # any read finishes the task: the rest equals the whole episode
        assert json.dumps(persona) == json.dumps(whole["world"]) and task.golden_actions == whole["golden_actions"]


def test_a_single_session_reset_of_a_lazy_task_is_the_eager_one() -> None:
    env = gym.make(ENV_ID)
    u = env.unwrapped
    task = _lazy(41)
    twin = copy.deepcopy(_lazy(41))  # finished (and not vouched for): built from its rows
    for k in (1, 9, 20):
        obs, info = env.reset(seed=k, options={"task": task, "session": k})
        state = u.world.state_dict()
        obs_twin, info_twin = env.reset(seed=k, options={"task": twin, "session": k})
        assert obs == obs_twin and info == info_twin and state == u.world.state_dict()


def test_labels_by_slot_are_the_episode_labels() -> None:
    for seed in range(25):
        task = _lazy(300 + seed, seed % 3)
        draft = lazy_episode(task)
        meta = draft.meta
        sessions = task.world["sessions"]
        assert meta == [{"index": s["index"], "group": s["group"], "precursors": s["precursors"], **lab}
                        for s, lab in zip(sessions, episode_labels(sessions), strict=True)]


def test_an_unfinished_episode_goes_with_its_task_and_a_world_kept_alone_is_whole() -> None:
    task = _lazy(77)
    ep = weakref.ref(lazy_episode(task).ep)
    gc.disable()
    try:
        del task
        assert ep() is None  # freed at once: no cycle left for the collector
    finally:
        gc.enable()
    world = _lazy(78).world  # the task goes at once: its world is still read whole
    assert json.dumps(world) == json.dumps(_eager(78)["world"])
    # a task given another world still makes its golden route, and is no longer a lazy one
    task = _lazy(79)
    task.world = {"persona": "researcher"}
    assert lazy_episode(task) is None and task.world == {"persona": "researcher"}
    assert task.golden_actions == _eager(79)["golden_actions"]
    assert task.world == {"persona": "researcher"}
    # an episode whose sessions were partly built goes with its task too, and a finished one at once
    for finish in (False, True):
        task = _lazy(80)
        draft = lazy_episode(task)
        draft.session(7)
        if finish:
            task.golden_actions  # noqa: B018  (completes the episode: the world is made)
        ep = weakref.ref(draft.ep)
        del draft
        gc.disable()
        try:
            del task
            assert ep() is None
        finally:
            gc.enable()


def test_sessions_read_from_threads_are_the_sessions() -> None:
    task = _lazy(88)
    draft = lazy_episode(task)
    got: list[list[dict[str, Any]]] = []

    def read(order: list[int]) -> None:
        got.append([draft.session(k) for k in order])

    threads = [threading.Thread(target=read, args=(order,)) for order in ([19, 0, 5], [3, 12, 19], list(range(20)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sessions = _eager(88)["world"]["sessions"]
    for g in got:
        assert all(json.dumps(s) == json.dumps(sessions[s["index"] - 1]) for s in g)
    assert json.dumps(task.model_dump(mode="json")) == json.dumps(_eager(88))


@pytest.mark.parametrize("persona", PERSONA_ORDER)
def test_every_persona_starts_lazy_once_its_slots_are_known(persona: str) -> None:
    seed = 500 + PERSONA_ORDER.index(persona)
    task = _lazy(seed)
    assert task.world["persona"] == persona


def test_lazy_tasks_are_isolated_and_a_copy_is_whole_and_its_own() -> None:
    a, b = _lazy(61), _lazy(61)
    draft_b = lazy_episode(b)
    assert lazy_episode(a) is not draft_b
    json.dumps(a.world)  # reading one task's world finishes that task only
    assert lazy_episode(a) is None and lazy_episode(b) is draft_b and len(draft_b.ep.specs) == 1
    twin = copy.deepcopy(b)  # a whole-task read: the original is finished, the copy is whole, its own
    assert lazy_episode(b) is None and lazy_episode(twin) is None and not twin.vouched_world
    assert twin == b and twin.world is not b.world and twin.world["tables"] is not b.world["tables"]
    twin.world["tables"]["todos"].append({"id": "T999", "title": "x", "priority": "low"})
    assert json.dumps(b.world) == json.dumps(a.world) == json.dumps(_eager(61)["world"])
