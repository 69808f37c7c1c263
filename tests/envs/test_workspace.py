"""The persona workspace env: oracle and generic-question routes on every frozen session (full
episode and single-session-k modes), carried preferences, session boundaries, the file system's
confinement through ``step``, resets to session k and generated episodes of every persona."""

from __future__ import annotations

import json
import os

import gymnasium as gym
import pytest

import servicegym  # noqa: F401
from servicegym.envs.tasks.generators.common import call, verify_task
from servicegym.envs.tasks.generators.content_workspace import PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace import generate_workspace_task
from servicegym.rewards.rubric import CHECKS, EpisodeView, RubricItem

ENV_ID = "servicegym/Workspace-v0"


@pytest.fixture(scope="module")
def env():
    return gym.make(ENV_ID, split="test")


@pytest.fixture(scope="module")
def suite(env):
    return [env.unwrapped.source.get(t) for t in env.unwrapped.task_ids("test")]


def play(env, task, actions, options=None):
    """Feed ``actions``; returns (session_end infos, final info, rewards)."""
    env.reset(seed=0, options={"task": task, **(options or {})})
    ends, rewards = [], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        if "session_end" in info:
            ends.append(info["session_end"])
        if term or trunc:
            return ends, info, rewards
    raise AssertionError("the episode did not end")


def test_suite_is_one_twenty_session_episode_per_persona(suite):
    assert sorted(t.world["persona"] for t in suite) == sorted(PERSONA_ORDER)
    for t in suite:
        sessions = t.world["sessions"]
        assert len(sessions) == 20
        groups = {}
        for s in sessions:
            if s["group"]:
                groups.setdefault(s["group"], []).append(s["index"])
            assert 1 <= len(s["intents"]) <= 4
        assert len(groups) == 6 and all(2 <= len(g) <= 3 for g in groups.values())
        assert sum(len(g) for g in groups.values()) == 15  # plus five independent sessions


def test_oracle_scores_proc_and_comp_one_on_every_frozen_session(env, suite):
    for task in suite:
        ends, info, rewards = play(env, task, task.golden_actions)
        assert info["success"] and info["termination_reason"] == "user_stop", task.task_id
        assert info["score"]["proc"] == 1.0 and info["score"]["comp"] == 1.0 and info["score"]["sessions_passed"] == 1.0
        assert [e["index"] for e in ends] == list(range(1, 21))
        assert all(e["success"] and e["proc"] == 1.0 and e["comp"] == 1.0 for e in ends)
        assert sum(rewards) == 20.0  # one reward per session end
        # carried preferences were applied unasked: every carried intent is Completed
        carried = [(s["index"], i["id"]) for s in task.world["sessions"] for i in s["intents"] if i["carried"]]
        assert carried and all(ends[k - 1]["intents"][iid] == "completed" for k, iid in carried)


def test_oracle_single_session_with_golden_history_on_every_frozen_session(env, suite):
    for task in suite:
        for s in task.world["sessions"]:
            ends, info, rewards = play(env, task, s["golden"], options={"session": s["index"]})
            assert info["success"], (task.task_id, s["index"], ends)
            assert info["score"]["proc"] == 1.0 and info["score"]["comp"] == 1.0
            assert len(ends) == 1 and ends[0]["index"] == s["index"] and rewards[-1] == 1.0


def test_golden_history_world_is_the_world_a_played_golden_run_leaves(env, suite):
    task = suite[2]
    u = env.unwrapped
    env.reset(seed=0, options={"task": task})
    seen = {1: u.world.state_dict()}
    for a in task.golden_actions:
        _, _, term, _, info = env.step(a)
        if "session_end" in info and not term:
            seen[u._session] = u.world.state_dict()
    for k in (2, 9, 20):
        env.reset(seed=0, options={"task": task, "session": k})
        assert u.world.state_dict() == seen[k], k


def test_generic_question_agent_gets_proc_zero_and_comp_one(env):
    for persona in PERSONA_ORDER:
        task = generate_workspace_task(PERSONA_ORDER.index(persona), 1, "test")
        ends, info, _ = play(env, task, task.world["generic_actions"])
        assert info["score"]["proc"] == 0.0 and info["score"]["comp"] == 1.0, persona
        assert not info["success"] and len(ends) == 20
        assert all(set(e["intents"].values()) == {"provided"} and e["comp"] == 1.0 for e in ends)


def test_ignoring_a_carried_preference_fails_that_session_only(env, suite):
    for task in suite:
        assert len(task.violations) >= 6, task.task_id
        for kind, actions in task.violations.items():
            k = int(kind[1:])
            ends, info, _ = play(env, task, actions)
            failed = [e["index"] for e in ends if not e["success"]]
            assert failed == [k], (task.task_id, kind, failed)
            spec = task.world["sessions"][k - 1]
            for intent in spec["intents"]:
                if intent["carried"]:
                    assert ends[k - 1]["intents"][intent["id"]] == "provided"
                    assert ends[k - 1]["checks"][intent["key"]] is False
        # the same sessions pass when the preference is honoured: the golden route (test above)


def test_no_hidden_intent_holds_at_its_session_start(env, suite):
    u = env.unwrapped
    for task in suite:
        for s in task.world["sessions"]:
            env.reset(seed=0, options={"task": task, "session": s["index"]})
            view = EpisodeView(world=u.world, initial=u.world, history=u.history, agent_messages=[])
            for intent in s["intents"]:
                check = RubricItem.model_validate(intent["check"])
                assert not CHECKS[check.kind](view, check.params), (task.task_id, intent["id"])


def test_session_boundary_resets_the_chat_but_not_the_workspace(env, suite):
    task = suite[0]
    u = env.unwrapped
    first = task.world["sessions"][0]
    obs, info = env.reset(seed=0, options={"task": task})
    assert obs == first["opening"] and info["session"] == 1 and info["persona"] == task.world["persona"]
    assert {t["function"]["name"] for t in info["tools"]} == set(u.toolkit.names)
    for a in first["golden"]:
        obs, r, term, trunc, info = env.step(a)
    second = task.world["sessions"][1]
    assert not term and r == 1.0 and info["session_end"]["index"] == 1
    assert f'<session index="2" of="20" start="{second["start"]}">{second["opening"]}</session>' in obs
    msgs = u.messages
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[1]["content"] == second["opening"]
    assert "session 2 of 20" in msgs[0]["content"]
    assert u.world.clock.text() == second["start"]
    written = [json.loads(a)["arguments"]["path"] for a in first["golden"] if a.startswith("{") and "write_file" in a]
    for path in written:
        assert path in u.world.table("files")


def test_agent_stop_ends_the_session_not_the_episode(env, suite):
    task = suite[1]
    env.reset(seed=0, options={"task": task})
    obs, r, term, trunc, info = env.step("That's all. ###STOP###")
    assert not term and r == 0.0 and not info["session_end"]["success"]
    assert set(info["session_end"]["intents"].values()) == {"pending"}
    assert '<session index="2"' in obs


def test_truncation_scores_the_sessions_never_reached_zero(suite):
    env = gym.make(ENV_ID, split="test", max_steps=3)
    task = suite[0]
    env.reset(seed=0, options={"task": task})
    for _ in range(3):
        obs, r, term, trunc, info = env.step(call("list_files"))
    assert trunc and not term and info["termination_reason"] == "max_steps"
    assert not info["success"] and info["score"]["sessions"] == 20.0
    assert info["score"]["comp"] == 0.0 and info["score"]["sessions_passed"] == 0.0


@pytest.mark.parametrize("action", [
    call("write_file", path="../outside.txt", content="x"),
    call("write_file", path="/etc/outside.txt", content="x"),
    call("write_file", path="a/../../outside.md", content="x"),
    call("read_file", path="../../etc/passwd.txt"),
    call("write_file", path="big.txt", content="x" * 200_001),
    call("write_file", path="bad.csv", content="a,b\n1,2,3\n\"unclosed\n"),
    call("write_file", path="bad.json", content="{\"a\": 1,"),
    call("write_file", path="README.md", content="overwrite without asking"),
])
def test_bad_file_actions_are_error_observations_and_change_nothing(env, suite, action, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    u = env.unwrapped
    env.reset(seed=0, options={"task": suite[0]})
    before = u.world.state_dict()
    obs, r, term, trunc, info = env.step(action)
    assert obs.startswith("<tool_error") and info["tool_errors"] == 1 and not (term or trunc)
    assert u.world.state_dict() == before
    assert os.listdir(tmp_path) == []  # nothing reached the real file system


def test_reset_options(env, suite):
    tid = suite[0].task_id
    for bad in (0, 21, "3", True):
        with pytest.raises(ValueError):
            env.reset(options={"task_id": tid, "session": bad})
    with pytest.raises(ValueError):
        env.reset(options={"task_id": tid, "sessions": 3})
    obs, info = env.reset(options={"task_id": tid, "session": 7})
    assert info["sessions"] == [7, 7] and obs == suite[0].world["sessions"][6]["opening"]


@pytest.mark.parametrize("persona", PERSONA_ORDER)
@pytest.mark.parametrize("difficulty", [0, 1])
def test_generated_episodes_of_every_persona_verify(persona, difficulty):
    env = gym.make(ENV_ID)
    task = generate_workspace_task(17, difficulty, "train", persona=persona)
    assert task.task_id == f"workspace-{persona}/train/17/d{difficulty}"
    assert verify_task(env, task) == []
    if difficulty == 0:
        assert all(len(s["intents"]) <= 2 for s in task.world["sessions"])


def test_generation_is_a_function_of_its_inputs():
    a = generate_workspace_task(5, 1, "train").model_dump_json()
    assert a == generate_workspace_task(5, 1, "train").model_dump_json()
    assert a != generate_workspace_task(10, 1, "train").model_dump_json()  # same persona, another seed


def test_generated_ids_name_the_persona(env):
    u = env.unwrapped
    ids = u.task_ids("train")[:5]
    assert [i.split("/")[0] for i in ids] == [f"workspace-{p}" for p in PERSONA_ORDER]
    assert u.source.get("workspace-legal/train/3/d1").world["persona"] == "legal"
    with pytest.raises(KeyError):
        u.source.get("workspace-chef/train/3/d1")


def test_the_persona_is_one_person_in_the_prompt_the_world_and_its_profile():
    """Who the persona is comes from one place (its module's PROFILE): the generated sessions, the
    world and ``persona_profile`` agree (they once named two different people)."""
    from servicegym.world_state.workspace import persona_profile

    env = gym.make("servicegym/Workspace-v0").unwrapped
    for tid in env.task_ids("test"):
        _, info = env.reset(seed=0, options={"task_id": tid})
        profile = persona_profile(env.world.extra["persona"])
        assert env.world.extra["owner"] == profile["owner"]
        for key in ("owner", "owner_email", "organization"):
            assert profile[key] in info["system_prompt"], (tid, key)
        assert profile["owner_email"].endswith("@" + profile["domain"])
