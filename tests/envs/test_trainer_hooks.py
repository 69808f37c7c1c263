"""Env-side hooks the LLM-trainer adapters build on: the messages of one turn in OpenAI format,
the simulated user as a tool (``respond``), an awaitable step, and score components that every
finished episode of an env reports as floats."""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest

import servicegym
from servicegym.envs.environments.base import USER_TOOL
from servicegym.envs.environments.parsing import parse_action

ENV_IDS = sorted(servicegym.ENV_IDS)


def as_respond(action: str) -> str:
    """A golden action with its message to the user sent through the ``respond`` tool instead."""
    parsed = parse_action(action)
    if parsed.tool_calls:
        return action
    return json.dumps({"name": USER_TOOL, "arguments": {"message": parsed.message}}, ensure_ascii=False)


def play(env, actions, stepper=None):
    out = []
    for a in actions:
        result = stepper(a) if stepper else env.step(a)
        out.append(result)
        if result[2] or result[3]:
            break
    return out


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_turn_messages_are_what_the_step_added_after_the_assistant(env_id):
    env = gym.make(env_id, split="test")
    env.reset(seed=0, options={"task_id": env.unwrapped.task_ids("test")[0]})
    u = env.unwrapped
    for action in u.task.golden_actions[:6]:
        before = len(u.messages)
        *_, term, trunc, _ = env.step(action)
        turn = u.turn_messages()
        if turn and turn[0]["role"] == "system":  # a Workspace session ended: the next one's chat
            assert turn == u.messages and turn[1]["role"] == "user"
            continue
        assert u.messages[before + 1:] == turn  # everything after the assistant's message
        assistant = u.messages[before]
        assert assistant["role"] == "assistant"
        ids = [c["id"] for c in assistant.get("tool_calls") or []]
        assert [m["tool_call_id"] for m in turn if m["role"] == "tool"] == ids
        if not ids and not term:
            assert turn and turn[0]["role"] == "user"
        if term or trunc:
            break


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_the_user_as_a_tool_reaches_the_same_end(env_id):
    """The golden route with every message sent through ``respond`` succeeds as the plain one does,
    and the user's replies come back as tool results."""
    env = gym.make(env_id, split="test", user_tool=True)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids("test")[0]})
    assert [t["function"]["name"] for t in info["tools"]].count(USER_TOOL) == 1
    results = play(env, [as_respond(a) for a in env.unwrapped.task.golden_actions])
    assert results[-1][2] and results[-1][4]["success"] is True
    replies = [m for m in env.unwrapped.messages if m["role"] == "tool" and USER_TOOL in json.dumps(m)]
    calls = [c for m in env.unwrapped.messages if m.get("tool_calls") for c in m["tool_calls"]
             if c["function"]["name"] == USER_TOOL]
    assert calls and all(m["role"] != "user" for m in env.unwrapped.messages[2:] if "session" not in str(m.get("content")))
    del replies


def test_respond_stop_and_bad_arguments():
    env = gym.make("servicegym/Delivery-v0", split="test", user_tool=True)
    env.reset(seed=0)
    obs, _, term, _, info = env.step(json.dumps({"name": USER_TOOL, "arguments": {}}))
    assert "tool_error" in obs and "message" in obs and not term and info["tool_errors"] == 1
    obs, _, term, _, _ = env.step(json.dumps({"name": USER_TOOL, "arguments": {"message": "How many people?"}}))
    assert 'tool_result name="respond"' in obs and not term
    obs, r, term, trunc, info = env.step(json.dumps([
        {"name": USER_TOOL, "arguments": {"message": "Goodbye ###STOP###"}},
        {"name": "get_user_all_orders", "arguments": {}}]))
    assert term and info["termination_reason"] == "agent_stop" and "not run" in obs
    # without user_tool the name is just an unknown tool
    plain = gym.make("servicegym/Delivery-v0", split="test")
    plain.reset(seed=0)
    assert "unknown tool" in plain.step(json.dumps({"name": USER_TOOL, "arguments": {"message": "hi"}}))[0]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_astep_gives_the_transcript_of_step(env_id):
    def run(use_async: bool):
        env = gym.make(env_id, split="test")
        u = env.unwrapped
        tid = u.task_ids("test")[0]
        if use_async:
            async def main():
                await u.areset(seed=3, options={"task_id": tid})
                return [await u.astep(a) for a in u.task.golden_actions]
            results = asyncio.run(main())
        else:
            env.reset(seed=3, options={"task_id": tid})
            results = [env.step(a) for a in u.task.golden_actions]
        return json.dumps([r[:4] for r in results], default=str), json.dumps(u.messages), results[-1][4].get("success")

    sync, asyn = run(False), run(True)
    assert sync == asyn and sync[2] is True


def test_astep_overlaps_episodes_with_an_llm_user(monkeypatch):
    """Twelve episodes on one loop: the LLM user's replies are awaited or run in threads, so the
    endpoint sees them at once."""
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with LoopbackServer(handler=lambda body: "Two people, please.", latency_s=0.3) as server:
        envs = [gym.make("servicegym/Delivery-v0", split="test", user="llm",
                         llm={"base_url": server.base_url, "model": server.model}).unwrapped for _ in range(12)]

        async def episode(env, i):
            await env.areset(seed=i)
            obs, r, term, trunc, info = await env.astep("How many people is this for?")
            return obs

        async def main():
            return await asyncio.gather(*(episode(e, i) for i, e in enumerate(envs)))

        replies = asyncio.run(main())
        assert all("Two people" in r for r in replies)
        assert server.max_in_flight >= 8


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_finished_episode_reports_the_envs_score_keys_as_floats(env_id):
    env = gym.make(env_id, split="test")
    keys = env.unwrapped.score_keys
    assert keys
    for how in ("golden", "stop"):
        env.reset(seed=0, options={"task_id": env.unwrapped.task_ids("test")[0]})
        actions = env.unwrapped.task.golden_actions if how == "golden" else ["###STOP###"] * 40
        info = play(env, actions)[-1][4]
        if "score" not in info:  # a multi-session episode ends later; stop every session
            while "score" not in info:
                info = env.step("###STOP###")[4]
        assert all(isinstance(info["score"][k], float) for k in keys), info["score"]


def test_dataset_rows_drive_reset_deterministically(tmp_path):
    from servicegym.envs.integrations.dataset import ROW_FIELDS, task_rows, write_rows

    rows = task_rows("servicegym/Payments-v0", "train", n=3, seed=7)
    assert [tuple(r) for r in rows] == [ROW_FIELDS] * 3
    assert task_rows("servicegym/Payments-v0", "train", n=3, seed=7) == rows
    env = gym.make(rows[1]["env_id"])
    opening, info = env.reset(seed=rows[1]["seed"], options={"task_id": rows[1]["task_id"]})
    assert rows[1]["prompt"] == [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": opening}]
    assert json.loads(rows[1]["tools"]) == info["tools"]
    path = write_rows(rows, tmp_path / "d.jsonl")
    assert [json.loads(x) for x in path.read_text().splitlines()] == rows
    test_rows = task_rows("servicegym/Workspace-v0", "test")
    assert [r["task_id"] for r in test_rows] == gym.make("servicegym/Workspace-v0").unwrapped.task_ids("test")
    more = task_rows("servicegym/Delivery-v0", "train", n=1200)
    assert len({r["task_id"] for r in more}) == 1200
    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets not installed (pip install datasets)")
    ds = datasets.load_dataset("json", data_files=str(path), split="train")
    assert ds.num_rows == 3 and ds[1]["task_id"] == rows[1]["task_id"] and ds[1]["prompt"] == rows[1]["prompt"]


def test_dataset_command(tmp_path, capsys):
    from servicegym.envs.cli.main import main

    out = tmp_path / "rows.jsonl"
    assert main(["dataset", "--env", "servicegym/Delivery-v0", "--split", "test", "--n", "4", "--user-tool",
                 "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 4 and USER_TOOL in rows[0]["tools"]
    assert main(["dataset", "--env", "servicegym/Delivery-v0", "--split", "test", "--n", "101", "--out", str(out)]) == 2
    assert "holds 100 tasks" in capsys.readouterr().err
