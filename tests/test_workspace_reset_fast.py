"""A reset of the Workspace env to a new generated task (issue 29) does the least work that makes the
same task: counted and compared, never timed.

* The generator vouches for its world (``Task.vouch_world``): the env builds the workspace's
  tables without validating the generator's rows again (``vouched.vouched_entities``), and the
  generator builds the persona's seeded records the same way (``personas.seeded_persona_tables``).
  What they make is what validation makes of the same rows, type for type, fields set included.
* A reset parses only the session it starts (``LazySessions``); the checks and scripts of a vouched
  task are made without validation and equal the validated ones.
* Nothing is shared that an episode can write: two envs on the same task, one writing a file, a
  persona record (a list field) and a to-do, leave the other's world, the task, its cached initial
  world and a freshly generated copy of the task as they were; so does a reset after the writes.
* The generator's shortcuts give the same text: a skill script's JSON is ``json.dumps``'s, an item's
  JSON its ``model_dump``, a plan's route rendered once is the route, and the question-cue check
  still rejects a question that is not targeted.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.envs.environments.workspace as ws_env
import servicegym.envs.tasks.generators.workspace as ws_gen
import servicegym.envs.tasks.generators.workspace_episode as ws_episode
from servicegym.envs.tasks.generators.content_workspace import PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace import Episode, generate_workspace_task, item, item_json
from servicegym.envs.tasks.sources import _GENERATED
from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.workspace_user import IntentScript, SessionScript
from servicegym.world_state.vouched import vouched_entities
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace import skill_library as sl
from servicegym.world_state.workspace.personas import PERSONAS, build_persona_tables, seeded_persona_tables

ENV_ID = "servicegym/Workspace-v0"
SEEDS = range(6)


def _typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it (``1 == 1.0`` and ``True == 1`` hide a type)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_typed(v) for v in value])
    if hasattr(value, "__pydantic_fields_set__"):
        return (type(value).__name__, _typed(dict(value.__dict__)), sorted(value.__pydantic_fields_set__))
    return (type(value).__name__, value)


def _same_entities(made: list[Any], validated: list[Any]) -> None:
    assert [_typed(e) for e in made] == [_typed(e) for e in validated]
    assert [list(e.__dict__) for e in made] == [list(e.__dict__) for e in validated]  # field order


@pytest.mark.parametrize("persona", PERSONA_ORDER)
def test_vouched_rows_are_the_validated_rows(persona: str) -> None:
    """Every table of generated worlds, and the persona modules' own rows, made without validation
    are what validation makes of them (an int in a float field a float, lists copied)."""
    for seed in SEEDS:
        task = generate_workspace_task(seed * 5 + PERSONA_ORDER.index(persona), difficulty=seed % 2)
        assert task.world["persona"] == persona and task.vouched_world
        for name, rows in task.world["tables"].items():
            model = WorkspaceWorld.schema[name]
            _same_entities(vouched_entities(model, rows), [model.model_validate(r) for r in rows])
        raw, fast = seeded_persona_tables(persona, random.Random(seed))
        slow = build_persona_tables(persona, random.Random(seed))
        assert list(fast) == list(slow) == list(raw)
        for name in slow:
            assert list(fast[name]) == list(slow[name])
            _same_entities(list(fast[name].values()), list(slow[name].values()))


def test_vouched_entities_copy_what_validation_copies_and_validate_what_they_cannot_vouch_for() -> None:
    task = generate_workspace_task(0)  # researcher: papers hold tag lists
    rows = task.world["tables"]["res_papers"]
    model = WorkspaceWorld.schema["res_papers"]
    made = vouched_entities(model, rows)
    assert all(e.tags is not r["tags"] for e, r in zip(made, rows))  # the task's lists stay the task's
    with pytest.raises(ValueError):  # a row with a field the model lacks is validated, and refused
        vouched_entities(model, [{**rows[0], "unexpected": 1}])
    with pytest.raises(ValueError):  # so is a row that lacks one
        vouched_entities(model, [{k: v for k, v in rows[0].items() if k != "title"}])
    # nested models are validated as ever
    legal = generate_workspace_task(2)
    model = WorkspaceWorld.schema["legal_contracts"]
    rows = legal.world["tables"]["legal_contracts"]
    _same_entities(vouched_entities(model, rows), [model.model_validate(r) for r in rows])


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts ``model_validate`` of every workspace table model, ``RubricItem``, and the user's scripts."""
    calls: dict[str, int] = {}
    models = {**{m.__name__: m for m in WorkspaceWorld.schema.values()}, "RubricItem": RubricItem}
    for name, model in models.items():
        original = model.model_validate

        def counting(obj: Any, *a: Any, _orig: Any = original, _n: str = name, **k: Any) -> Any:
            calls[_n] = calls.get(_n, 0) + 1
            return _orig(obj, *a, **k)

        monkeypatch.setattr(model, "model_validate", counting)
    for model in (IntentScript, SessionScript):
        original_init = model.__init__

        def counting_init(self: Any, *a: Any, _orig: Any = original_init, _n: str = model.__name__, **k: Any) -> None:
            calls[_n] = calls.get(_n, 0) + 1
            _orig(self, *a, **k)

        monkeypatch.setattr(model, "__init__", counting_init)
    return calls


def test_a_reset_to_a_new_task_validates_nothing_the_generator_wrote_and_parses_one_session(
        monkeypatch: pytest.MonkeyPatch) -> None:
    env = gym.make(ENV_ID)
    u = env.unwrapped
    for persona in PERSONA_ORDER:
        task = generate_workspace_task(PERSONA_ORDER.index(persona) + 5 * 11)
        calls = _count_validations(monkeypatch)
        env.reset(options={"task": task})
        assert calls == {}, calls
        assert u._cache.sessions.built() == 1  # the first session only: the others are parsed when they start
        monkeypatch.undo()
        # the world is the one validation builds from the task's rows, type for type
        fast = u.task.cached_world(u.build_world)
        slow = u.build_world(copy.deepcopy(task))
        assert list(fast.tables) == list(slow.tables)
        for name in slow.tables:
            assert list(fast.tables[name].rows) == list(slow.tables[name].rows), name
            _same_entities(list(fast.tables[name].rows.values()), list(slow.tables[name].rows.values()))
    # a task that is not its generator's own (a deep copy) is validated as ever, and plays the same
    task = generate_workspace_task(3)
    twin = copy.deepcopy(task)
    assert not twin.vouched_world
    calls = _count_validations(monkeypatch)
    obs_twin, _ = env.reset(seed=1, options={"task": twin})
    assert calls.get("File", 0) == len(twin.world["tables"]["files"]) and calls.get("RubricItem", 0) > 0
    monkeypatch.undo()
    world_twin = u.world.state_dict()
    obs, _ = env.reset(seed=1, options={"task": task})
    assert obs == obs_twin and u.world.state_dict() == world_twin


def test_the_generator_hands_its_persona_records_over_once_and_only_for_its_own_task() -> None:
    task = generate_workspace_task(8, violations=False)
    twin = copy.deepcopy(task)
    assert ws_gen.seeded_tables(twin) is None  # not the generator's own task
    handed = ws_gen.seeded_tables(task)
    assert handed is not None and set(handed) == {n for n in task.world["tables"] if n.startswith("rx_")}
    assert ws_gen.seeded_tables(task) is None  # once: a second build makes its own entities
    env = gym.make(ENV_ID)
    first, second = env.unwrapped.build_world(task), env.unwrapped.build_world(task)
    assert first.state_dict() == second.state_dict() == env.unwrapped.build_world(twin).state_dict()
    # an entry goes with its task
    other = generate_workspace_task(9, violations=False)
    key = id(other)
    assert key in ws_gen._SEEDED
    del other
    assert key not in ws_gen._SEEDED


def test_sessions_parsed_lazily_are_the_validated_sessions() -> None:
    task = generate_workspace_task(4)
    fast = ws_env.LazySessions(task.world["sessions"], True)
    slow = ws_env.LazySessions(task.world["sessions"], False)
    assert len(fast) == len(slow) == 20 and fast.built() == 0
    for a, b in zip(fast, slow):
        assert a.script == b.script and _typed(a.script) == _typed(b.script)
        assert a.intent_checks == b.intent_checks and a.checklist == b.checklist
        assert [_typed(c) for c in a.checklist] == [_typed(c) for c in b.checklist]
    assert fast.built() == 20
    assert fast[-1] is fast[19] and fast[1:3] == [fast[1], fast[2]]


def _call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def test_a_write_in_one_episode_never_reaches_another_task_world_or_a_shared_row() -> None:
    """Two envs on the same (cached) task: one writes a seeded file, a persona record's list field and
    a to-do; the other env, the task, its built initial world and a regenerated task never see it,
    and neither does the writer after a reset."""
    task_id = "workspace-researcher/train/0/d1"
    a, b = gym.make(ENV_ID), gym.make(ENV_ID)
    a.reset(options={"task_id": task_id})
    b.reset(options={"task_id": task_id})
    ua, ub = a.unwrapped, b.unwrapped
    assert ua.task is ub.task  # the same task object, one built initial world
    before_task = ua.task.model_dump_json()
    before_world = ub.world.state_dict()
    initial = ua.task.cached_world(ua.build_world)
    before_initial = initial.state_dict()
    paper = next(p for p in ua.world.table("res_papers") if "zz-mark" not in p.tags)
    tags_before = list(paper.tags)
    for action in (_call("write_file", path="README.md", content="# overwritten\n", overwrite=True),
                   _call("tag_paper", paper_id=paper.id, tags=["zz-mark"]),
                   _call("add_todo", title="Leaked to-do", priority="high")):
        obs, *_ = a.step(action)
        assert "<tool_result" in obs, obs
    assert ua.world.table("files").get("README.md").content == "# overwritten\n"
    assert "zz-mark" in ua.world.table("res_papers").get(paper.id).tags
    # the other env, the seeded entity, the task and its initial world are untouched
    assert ub.world.state_dict() == before_world
    assert list(paper.tags) == tags_before and "zz-mark" not in ub.world.table("res_papers").get(paper.id).tags
    assert initial.state_dict() == before_initial
    assert ua.task.model_dump_json() == before_task
    assert all("zz-mark" not in r["tags"] for r in ua.task.world["tables"]["res_papers"])
    # a reset after the writes, in either env, starts on the task's world; a regenerated task is the same
    for env in (a, b):
        env.reset(options={"task_id": task_id})
        assert env.unwrapped.world.state_dict() == before_world
    assert generate_workspace_task(0, violations=False).model_dump_json() == before_task  # as the env's source makes it
    # and a task generated afresh (not the cached one) builds the same world
    _GENERATED.pop(task_id, None)
    a.reset(options={"task_id": task_id})
    assert ua.task is not ub.task and ua.world.state_dict() == before_world


def test_skill_scripts_are_json_dumps_text() -> None:
    for value in ({}, [], {"a": [], "b": {}}, [1, 2.5, -0.0, 1e300, 10**30, None, True, False], "é \u2028 \"q\"\n",
                  {"k": [{"a": [1, [2, {}]]}]}, (1, 2), {1: "int key"}, float("nan")):
        assert sl._dumps(value) == json.dumps(value, ensure_ascii=False, indent=1)
    for seed in range(10):
        task = generate_workspace_task(seed)
        for f in task.world["tables"]["files"]:
            if f["path"].startswith("skills/") and f["path"].endswith(".json"):
                assert f["content"] == json.dumps(json.loads(f["content"]), ensure_ascii=False, indent=1) + "\n"


def test_items_and_their_json_are_the_validated_items() -> None:
    it = item("x", "ws.file_contains", "d", path="a.md", texts=("t",), values={"n": 3, "f": 1.5})
    assert it == RubricItem(name="x", kind="ws.file_contains", description="d",
                            params={"path": "a.md", "texts": ("t",), "values": {"n": 3, "f": 1.5}})
    assert item_json(it) == it.model_dump(mode="json") and json.dumps(item_json(it)) == json.dumps(it.model_dump(mode="json"))
    ep = Episode("legal", 7, 1, "train")
    ep.build()
    for plan in ep.plans:
        for i in plan.base + [f.check for f in plan.facets]:
            assert json.dumps(item_json(i)) == json.dumps(i.model_dump(mode="json"))


def test_a_rendered_route_is_rendered_once_and_never_shared() -> None:
    ep = Episode("marketer", 1, 1, "train")
    ep.build()
    plan = ep.plans[0]
    first = plan.render(plan.all_keys())
    first.append("mutated")
    assert plan.render(plan.all_keys()) == first[:-1]
    assert plan.golden() == ep.specs[0]["golden"]
    calls: list[frozenset[str]] = []

    def render(active: frozenset[str]) -> list[str]:
        calls.append(active)
        return [f"route {sorted(active)}"]

    counted = ws_gen.Plan(1, "", "note", "t", "open", [], [], render, "done")
    for active in (frozenset({"a"}), frozenset({"a"}), frozenset(), frozenset({"a"})):
        assert counted.render(active) == [f"route {sorted(active)}"]
    assert calls == [frozenset({"a"}), frozenset()]  # each set of facets rendered once


def test_the_cue_check_still_rejects_an_untargeted_question(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = Episode("pharmacist", 2, 1, "train")
    ep.build()  # its combinations pass, and are remembered
    ep.check_cues()
    plan = next(p for p in ep.plans if len(p.facets) >= 2)
    f0, f1 = plan.facets[0], plan.facets[1]
    monkeypatch.setattr(f0, "question", f1.question)  # asks about the other intent
    with pytest.raises(AssertionError):
        ep.check_cues()
    monkeypatch.undo()
    monkeypatch.setattr(ws_episode, "_CUES_CHECKED", set())  # (the cache of ``Episode``'s module)
    ep.check_cues()
    assert ws_episode._CUES_CHECKED


def test_generated_tasks_are_a_function_of_their_inputs() -> None:
    for persona in PERSONAS:
        seed = PERSONA_ORDER.index(persona) + 40
        a = generate_workspace_task(seed, difficulty=0)
        b = generate_workspace_task(seed, difficulty=0)
        assert a.model_dump_json() == b.model_dump_json() and a is not b


def test_skill_texts_made_once_are_the_texts_built_now() -> None:
    """A skill's doc and scripts made once per persona and conventions (the mail and meeting skills'
    advisor, copied and invited people put into placeholders) are what its builder writes now."""
    from servicegym.envs.tasks.generators.workspace_skills import context

    for seed in range(60):
        ep = Episode(PERSONA_ORDER[seed % 5], 7000 + seed, seed % 3, "train")
        ep.begin()
        c = context(ep, f"k/{seed}")
        for kind in sl.SKILL_NAMES[c["persona"]]:
            for conv in (c["conventions"], c["old"]):
                assert sl.skill_files(c, kind, conv) == sl._build(c, kind, conv)
    # a value that cannot go in verbatim is built with it
    ep = Episode("researcher", 1, 1, "train")
    ep.begin()
    c = context(ep, "k")
    c["advisor"] = {**c["advisor"], "first": 'Jo "{x}"'}
    assert sl.skill_files(c, "mail", c["conventions"]) == sl._build(c, "mail", c["conventions"])
