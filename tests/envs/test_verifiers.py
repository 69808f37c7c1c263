"""The verifiers adapter (envs/integrations/verifiers.py), run through verifiers' own rollout loop
(``Env.serving`` / ``run_episode``: interception server, per-rollout MCP tool servers, harness,
stops, finalize, scoring) against a LoopbackServer on 127.0.0.1; never a live endpoint.

Needs ``servicegym[verifiers]`` (verifiers>=0.4,<0.5, which pins openai<3), so it runs in a venv
of its own: ``python -m pytest -q tests/envs/test_verifiers.py``; elsewhere it skips, saying so."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.environments.base import STOP, USER_TOOL
from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply

DELIVERY, PAYMENTS = "servicegym/Delivery-v0", "servicegym/Payments-v0"
KEY_VAR = "SERVICEGYM_LOOPBACK_KEY"


@pytest.fixture
def vf(monkeypatch):
    vf = pytest.importorskip("verifiers.v1", reason="needs servicegym[verifiers] (verifiers>=0.4,<0.5, which pins openai<3)")
    monkeypatch.setenv(KEY_VAR, "loopback")
    return vf


def respond_replay(tasks):
    """``golden_replay_handler`` with its messages to the user sent through the ``respond`` tool
    (under the adapter the user is a tool; a reply without a tool call ends the episode)."""
    golden = golden_replay_handler(tasks)

    def handler(body):
        reply = golden(body)
        message = reply["choices"][0]["message"]
        if message.get("tool_calls"):
            return reply
        return tool_call_reply([(USER_TOOL, {"message": message["content"]})])

    return handler


def run_episodes(vf, venv, tasks, server):
    ctx = vf.ModelContext(model=server.model,
                          client=vf.EvalClientConfig(base_url=server.base_url, api_key_var=KEY_VAR))

    async def main():
        async with venv.serving():
            return await asyncio.gather(*(venv.run_episode(t, ctx) for t in tasks))

    return asyncio.run(main())


def one_trace(episode):
    assert episode.ok and not episode.errors, episode.errors
    (trace,) = episode.traces
    assert not trace.errors, trace.errors
    return trace


def vf_tasks(venv, task_ids):
    by_id = {t.data.task_id: t for t in venv.taskset}
    return [by_id[tid] for tid in task_ids]


@pytest.mark.parametrize("env_id", [DELIVERY, PAYMENTS])
def test_golden_routes_through_verifiers_rollouts_reach_reward_1(vf, env_id):
    from servicegym.envs.integrations.verifiers import load_environment

    env = gym.make(env_id, split="test")
    tasks = replayable_tasks(env, 2 if env_id == DELIVERY else 1)
    venv = load_environment(env_id, split="test", max_steps=200)
    # the same task twice at once as well: each rollout has its own env (a shared one would end early)
    ids = [t.task_id for t in tasks] + [tasks[0].task_id]
    with LoopbackServer(handler=respond_replay(tasks)) as server:
        episodes = run_episodes(vf, venv, vf_tasks(venv, ids), server)
    counts = set(env.unwrapped.count_keys)
    for episode, tid in zip(episodes, ids):
        trace = one_trace(episode)
        assert trace.reward == 1.0 and set(trace.rewards) == {"success"}, (tid, trace.rewards)
        assert trace.state.done and trace.state.success
        assert trace.state.termination_reason in ("user_stop", "agent_stop")
        assert trace.stop_condition == "episode_ended"
        for key in env.unwrapped.score_keys:  # components logged (weight 0: metrics), counts as n_<key>
            name = f"n_{key}" if key in counts else key
            assert isinstance(trace.metrics[name], float), name
        assert not any(key in trace.rewards for key in env.unwrapped.score_keys)
    if env_id == PAYMENTS:
        assert trace.metrics["goal"] == trace.metrics["process"] == trace.metrics["protection"] == 1.0
    else:
        assert trace.metrics["rubric_fraction"] == 1.0


def test_the_model_sees_our_tool_schemas_and_our_prompt(vf):
    from servicegym.envs.integrations.verifiers import load_environment

    env = gym.make(DELIVERY, split="test", user_tool=True)
    task = replayable_tasks(env, 1)[0]
    venv = load_environment(DELIVERY, split="test")
    (vtask,) = vf_tasks(venv, [task.task_id])
    opening, info = env.reset(seed=vtask.data.seed, options={"task_id": task.task_id})
    with LoopbackServer(handler=respond_replay([task])) as server:
        run_episodes(vf, venv, [vtask], server)
    first = server.requests[0]
    assert first["tools"] == env.unwrapped.tool_schemas() == info["tools"]
    assert [t["function"]["name"] for t in first["tools"]].count(USER_TOOL) == 1
    assert first["messages"][0]["role"] == "system" and USER_TOOL in first["messages"][0]["content"]
    assert first["messages"][1] == {"role": "user", "content": opening}
    # every request of the rollout offers the same tools
    assert all(body["tools"] == first["tools"] for body in server.requests)


@pytest.mark.parametrize("script", [
    pytest.param([text_reply(STOP)], id="text-stop-at-once"),
    pytest.param([tool_call_reply([(USER_TOOL, {"message": STOP})])], id="respond-stop-at-once"),
    pytest.param([Fault.malformed_tool_call(USER_TOOL, '{"message": '), text_reply("done")], id="malformed-call"),
    pytest.param([tool_call_reply([("no_such_tool", {})]), tool_call_reply([(USER_TOOL, {})]), text_reply("bye")],
                 id="unknown-tool-and-bad-arguments"),
])
def test_a_broken_model_gets_reward_0_and_no_exception(vf, script):
    from servicegym.envs.integrations.verifiers import load_environment

    venv = load_environment(DELIVERY, split="test", n=1)
    with LoopbackServer(script=script, handler=lambda body: text_reply(STOP)) as server:
        (episode,) = run_episodes(vf, venv, list(venv.taskset), server)
    trace = one_trace(episode)
    assert trace.reward == 0.0 and trace.rewards["success"].score == 0.0
    assert trace.state.done and not trace.state.success  # ended (by the env or by finalize) and scored
    assert trace.metrics["rubric_fraction"] < 1.0


def test_taskset_rows_and_options(vf):
    from servicegym.envs.integrations.dataset import task_rows
    from servicegym.envs.integrations.verifiers import TASKSET_ID, ServiceGymTaskset, load_environment

    venv = load_environment("Delivery-v0", split="test", n=3, seed=7)
    assert isinstance(venv.taskset, ServiceGymTaskset) and venv.config.taskset.id == TASKSET_ID
    rows = task_rows(DELIVERY, "test", 3, 7, {"user_tool": True})
    tasks = list(venv.taskset)
    assert [t.data.task_id for t in tasks] == [r["task_id"] for r in rows]
    assert [t.data.seed for t in tasks] == [r["seed"] for r in rows]
    assert [t.data.prompt for t in tasks] == [r["prompt"][1]["content"] for r in rows]
    assert all("A reply without a tool call ends the episode" in t.data.system_prompt for t in tasks)
    assert len({t.key for t in tasks}) == 3
    with pytest.raises(ValueError, match="needs n"):
        list(load_environment(DELIVERY, split="train").taskset)
    assert len(list(load_environment(DELIVERY, split="train", n=2).taskset)) == 2


def test_without_verifiers_the_error_names_the_extra():
    code = ("import sys; sys.modules['verifiers'] = None\n"
            "try:\n    import servicegym.envs.integrations.verifiers\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'servicegym[verifiers]'" in out.stdout, out.stderr
    assert len(out.stdout.strip().splitlines()) == 1
