"""The SkyRL-Gym adapter: every servicegym env registered with ``skyrl_gym`` and made the way
SkyRL's generator makes it (``skyrl_gym.make(env_class, env_config=..., extras=row)``); the golden
route through ``init``/``step`` pays 1.0 on the last step, a broken one 0.0; the observations are
the env's own messages."""

from __future__ import annotations

import json

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason='skyrl-gym not installed (pip install "servicegym[skyrl]")')

import servicegym  # noqa: E402
from servicegym.envs.integrations.skyrl import (  # noqa: E402
    SKYRL_IDS,
    ServiceGymTextEnv,
    register_skyrl_envs,
    skyrl_id,
    skyrl_rows,
)
from servicegym.envs.running.llm_policy import TEXT_TOOLS_PROMPT  # noqa: E402

ENV_IDS = sorted(servicegym.ENV_IDS)


def make_from_row(row: dict, env_config=None, **extra) -> ServiceGymTextEnv:
    """As SkyRL's generator does: the row without prompt and env_class is ``extras``, plus ``max_turns``."""
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    extras.update(extra)
    return skyrl_gym.make(row["env_class"], env_config=env_config or {}, extras=extras)


def test_every_env_has_a_registered_id():
    assert set(SKYRL_IDS.values()) == set(ENV_IDS)
    assert skyrl_id("servicegym/CrossScenario-v0") == "servicegym-cross-scenario"
    assert skyrl_id("Delivery-v0") == "servicegym-delivery" and skyrl_id("servicegym/InStore-v0") == "servicegym-in-store"
    assert register_skyrl_envs() == list(SKYRL_IDS)  # again: already there, no error
    for sid, env_id in SKYRL_IDS.items():
        spec = skyrl_gym.spec(sid)
        assert spec.kwargs == {"env_id": env_id}
        env = skyrl_gym.make(sid, env_config={}, extras={})
        assert isinstance(env, skyrl_gym.Env) and env.env_id == env_id and env.spec.id == sid
        env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_golden_route_pays_1_and_observations_are_the_envs_messages(env_id):
    row = skyrl_rows(env_id, "test", n=1, seed=3)[0]
    assert row["env_class"] == skyrl_id(env_id)
    env = make_from_row(row, max_turns=80)
    messages, meta = env.init(row["prompt"])
    u = env.env.unwrapped
    assert meta["task_id"] == row["task_id"] and meta["seed"] == row["seed"]
    # the env's conversation, with the tool schemas appended to the system prompt
    assert messages[1] == row["prompt"][1] and messages[0]["role"] == "system"
    assert messages[0]["content"] == row["prompt"][0]["content"] + TEXT_TOOLS_PROMPT.format(tools=row["tools"])
    assert [m["content"] for m in messages[1:]] == [m["content"] for m in u.messages[1:]]
    golden = u.task.golden_actions
    outs = []
    for i, action in enumerate(golden):
        out = env.step(action)
        outs.append(out)
        if out["done"]:
            break
        assert out["observations"] == u.turn_messages() and out["reward"] == 0.0
        assert out["metadata"]["step"] == i + 1 and "success" not in out["metadata"]
    last = outs[-1]
    assert last["done"] and len(outs) == len(golden)
    assert last["reward"] == 1.0 and last["metadata"]["success"] is True and last["observations"] == []
    assert last["metadata"]["observations"] == u.turn_messages()
    assert last["metadata"]["termination_reason"] in ("user_stop", "agent_stop")
    score = last["metadata"]["score"]
    metrics = env.get_metrics()
    assert metrics["success"] == 1.0 and metrics["steps"] == len(golden)
    assert all(metrics[k] == score[k] for k in u.score_keys if k not in u.count_keys)
    assert all(metrics[f"n_{k}"] == score[k] for k in u.count_keys) and "rubric_items" not in metrics  # counts as counts
    assert skyrl_gym.envs.base_text_env.BaseTextEnv.aggregate_metrics([metrics])["success"] == 1.0
    json.dumps(last["metadata"])  # SkyRL logs it


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/Payments-v0", "servicegym/Workspace-v0"])
def test_broken_route_pays_0(env_id):
    row = skyrl_rows(env_id, "test", n=1)[0]
    env = make_from_row(row, max_turns=80)
    env.init(row["prompt"])
    golden = env.env.unwrapped.task.golden_actions
    out = None
    for action in golden[: len(golden) // 2]:
        out = env.step(action)
        assert not out["done"]
    while out is None or not out["done"]:  # the agent gives up (each Workspace session)
        out = env.step("###STOP###")
    assert out["reward"] == 0.0 and out["metadata"]["success"] is False
    assert env.get_metrics()["success"] == 0.0


def test_max_turns_from_the_generator_ends_and_scores_the_episode():
    row = skyrl_rows("servicegym/Delivery-v0", "test", n=1)[0]
    env = make_from_row(row, max_turns=2)
    env.init(row["prompt"])
    assert env.max_turns == 2
    first = env.step("How many people is this for?")
    second = env.step("Which address?")
    assert not first["done"] and second["done"] and second["reward"] == 0.0
    assert second["metadata"]["termination_reason"] == "max_steps" and "score" in second["metadata"]


def test_env_config_and_extra_info():
    """``env_config`` (here an OmegaConf DictConfig, as SkyRL passes it) sets env arguments and the
    adapter's options; ``task_id``/``seed`` may sit under ``extra_info``."""
    from omegaconf import DictConfig

    row = skyrl_rows("servicegym/Delivery-v0", "test", n=1, env_kwargs={"user_tool": True})[0]
    extras = {"extra_info": {"task_id": row["task_id"], "seed": row["seed"]}}
    config = DictConfig({"user_tool": True, "tools_in_prompt": False, "observations": "text"})
    env = skyrl_gym.make(row["env_class"], env_config=config, extras=extras)
    messages, _ = env.init(row["prompt"])
    assert messages == row["prompt"]  # no tools appended
    assert "respond" in [t["function"]["name"] for t in env.reset_info["tools"]]
    out = env.step('<tool_call>{"name": "get_user_historical_behaviors", "arguments": {}}</tool_call>')
    assert out["observations"] == [{"role": "user", "content": out["observations"][0]["content"]}]
    assert out["observations"][0]["content"].startswith("<tool_result")
    with pytest.raises(ValueError, match="observations"):
        skyrl_gym.make(row["env_class"], env_config={"observations": "xml"}, extras=extras)


def test_step_rewards_pay_each_workspace_session():
    row = skyrl_rows("servicegym/Workspace-v0", "test", n=1)[0]
    env = make_from_row(row, env_config={"step_rewards": True})
    env.init(row["prompt"])
    rewards, restarts = [], 0
    for action in env.env.unwrapped.task.golden_actions:
        out = env.step(action)
        rewards.append(out["reward"])
        if out["observations"] and out["observations"][0]["role"] == "system":
            restarts += 1  # the next session's conversation
        if out["done"]:
            break
    assert out["done"] and out["metadata"]["success"] is True
    assert restarts >= 1 and sum(rewards) == restarts + 1  # 1.0 at the end of every session


def test_rows_command(tmp_path, capsys):
    from servicegym.envs.integrations.skyrl import main

    out = tmp_path / "rows.json"
    assert main(["--env", "servicegym/Payments-v0", "--split", "test", "--n", "2", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["env_class"] for r in rows] == ["servicegym-payments"] * 2 and rows[0]["prompt"][0]["role"] == "system"
    with pytest.raises(SystemExit) as exit_:
        main(["--env", "servicegym/Payments-v0", "--split", "train", "--out", str(out)])
    assert exit_.value.code == 2 and "--n" in capsys.readouterr().err


def test_env_config_takes_a_trainers_names_and_refuses_others_in_one_line():
    env = ServiceGymTextEnv({"max_turns": 7, "scoring": "strict"}, {})
    assert env.max_turns == 7 and env.env.unwrapped.scoring == "strict"
    with pytest.raises(ValueError, match=r"^env_config 'temperature' is not an argument of servicegym/Delivery-v0; "
                                         r"it takes .*max_steps.*the aliases max_turns"):
        ServiceGymTextEnv({"temperature": 0.7}, {})


def test_the_trainer_example_says_in_one_sentence_what_this_interpreter_lacks():
    import os
    import subprocess
    import sys
    from pathlib import Path

    from servicegym.envs.integrations.preflight import skyrl_train_problem

    root = Path(__file__).resolve().parents[2]
    problem = skyrl_train_problem()
    if problem is None:
        pytest.skip("skyrl-train can run here: nothing to refuse")
    for cmd in ([sys.executable, str(root / "examples/skyrl/main_servicegym.py")],
                ["bash", str(root / "examples/skyrl/run_grpo_delivery.sh")]):
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the script's `python`: ours
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": path})
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == f"servicegym: {problem}" and "Traceback" not in proc.stderr
        assert "Python 3.12" in proc.stderr
