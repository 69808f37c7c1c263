"""ToolUseEnv through the delivery env: the step contract, limits, transcripts, check_env, reset options."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.environments.parsing import TOOL_CALL_FORM
from tests.conftest import (
    BEEF_SOUP,
    FIRST_NEW_ORDER,
    GOLDEN_ACTIONS,
    OPEN_STORE,
    PAID_ORDER,
    UNPAID_ORDER,
    call,
    make_delivery_task,
    make_env,
)

ENV_ID = "servicegym/Delivery-v0"


def run(env, actions: list[str]) -> list[tuple]:
    out = []
    for a in actions:
        out.append(env.step(a))
        if out[-1][2] or out[-1][3]:
            break
    return out


def assert_valid_chat(messages: list[dict[str, Any]]) -> None:
    """OpenAI chat format: system, user, assistant (tool_calls answered in order by tool messages)."""
    json.dumps(messages)
    assert messages[0] == {"role": "system", "content": messages[0]["content"]}
    assert isinstance(messages[0]["content"], str) and messages[0]["content"]
    assert messages[1]["role"] == "user"
    pending: list[str] = []
    seen: set[str] = set()
    for m in messages[1:]:
        role = m["role"]
        if pending:
            assert role == "tool" and m["tool_call_id"] == pending.pop(0), m
        if role == "tool":
            assert set(m) == {"role", "tool_call_id", "content"} and isinstance(m["content"], str)
        elif role == "user":
            assert set(m) == {"role", "content"} and isinstance(m["content"], str)
        elif role == "assistant":
            if "tool_calls" in m:
                assert set(m) == {"role", "content", "tool_calls"} and m["tool_calls"]
                assert m["content"] is None or (isinstance(m["content"], str) and m["content"])
                for tc in m["tool_calls"]:
                    assert set(tc) == {"id", "type", "function"} and tc["type"] == "function"
                    assert isinstance(tc["id"], str) and tc["id"] and tc["id"] not in seen, "tool call ids are unique"
                    seen.add(tc["id"])
                    assert set(tc["function"]) == {"name", "arguments"}
                    assert isinstance(tc["function"]["name"], str) and isinstance(tc["function"]["arguments"], str)
                pending = [tc["id"] for tc in m["tool_calls"]]
            else:
                assert set(m) == {"role", "content"} and isinstance(m["content"], str)
        else:
            raise AssertionError(f"unexpected role {role!r}")
    assert not pending, "every tool call is answered"


# ----- the golden route ------------------------------------------------------------------
def test_golden_route_succeeds_with_terminal_reward():
    env = make_env()
    obs, info = env.reset(seed=0)
    assert obs == "Hi, I'd like some beef noodle soup delivered home for lunch, please."
    steps = run(env, GOLDEN_ACTIONS)
    assert len(steps) == len(GOLDEN_ACTIONS)
    assert [r for _, r, *_ in steps] == [0.0] * (len(steps) - 1) + [1.0]
    obs, reward, terminated, truncated, info = steps[-1]
    assert terminated and not truncated
    assert info["termination_reason"] == "user_stop" and info["success"] is True
    assert info["score"]["rubric_fraction"] == 1.0 and info["score"]["rubric_items"] == 9.0
    assert info["score"]["rubric/paid"] == 1.0 and "rubric/logged" in info["score"]
    assert "###STOP###" in obs and obs.startswith("<user>")
    for _, _, term, trunc, inf in steps[:-1]:
        assert not term and not trunc and "success" not in inf and "termination_reason" not in inf
    assert env.unwrapped.world.table("orders").require(FIRST_NEW_ORDER).status == "paid"
    assert_valid_chat(env.unwrapped.messages)


def test_reset_info_and_no_solution_leak():
    env = make_env()
    obs, info = env.reset(seed=1)
    assert set(info) >= {"task_id", "domain", "system_prompt", "tools"}
    assert info["task_id"] == "handmade/beef-soup" and info["domain"] == "delivery"
    assert len(info["tools"]) == 20 and all(t["type"] == "function" for t in info["tools"])
    assert "U000001" in info["system_prompt"] and "2025-06-21 11:20:00" in info["system_prompt"]
    assert TOOL_CALL_FORM in info["system_prompt"]
    assert env.unwrapped.task.golden_actions == GOLDEN_ACTIONS
    public = json.dumps([obs, info])
    for action in GOLDEN_ACTIONS:
        assert action not in public and json.dumps(action)[1:-1] not in public
    assert "two people" not in public, "hidden facts stay hidden until asked"


def test_observation_blocks_are_tagged_by_source():
    env = make_env()
    env.reset(seed=0)
    obs, *_ = env.step(call("get_delivery_store_info", store_id=OPEN_STORE) + call("nope"))
    first, second = obs.split("\n")
    assert first.startswith('<tool_result name="get_delivery_store_info" call_id="call_1">{')
    assert json.loads(first[first.index(">") + 1 : -len("</tool_result>")])["store_id"] == OPEN_STORE
    assert second.startswith('<tool_error name="nope" call_id="call_2">unknown tool')
    obs, *_ = env.step("How many people is this for?")
    assert obs == "<user>It's for two people.</user>"
    obs, _, _, _, info = env.step("<tool_call>{oops}</tool_call>")
    assert obs.startswith("<error>") and TOOL_CALL_FORM in obs


# ----- errors are observations -------------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "fragments"),
    [
        (call("order_food", dish="soup"), ['<tool_error name="order_food"', "unknown tool 'order_food'",
                                           "Available tools:", "create_delivery_order"]),
        (call("get_delivery_store_info", shop="S001"),
         ["invalid arguments for get_delivery_store_info", "shop: unknown argument", "store_id: Field required",
          "Usage: get_delivery_store_info(store_id: string)"]),
        (call("get_delivery_store_info", store_id="S404"), ["get_delivery_store_info refused: store 'S404' does not"]),
        (call("modify_delivery_order", order_id=UNPAID_ORDER, note="x"),
         ["modify_delivery_order refused: call `get_delivery_order_detail` for order 'ORD-UNPAID-1' first"]),
        (call("pay_delivery_order", order_id=PAID_ORDER), ["has status 'paid'; this needs status in ['unpaid']"]),
        ('{"name": "get_delivery_store_info", "arguments": {"store_id": ', ["<error>the tool call is not valid JSON",
                                                                           TOOL_CALL_FORM]),
        ("", ["<error>empty action", TOOL_CALL_FORM]),
        ('{"name": "get_delivery_store_info", "arguments": "S001"}',
         ["arguments of get_delivery_store_info must be a JSON object", "Usage: get_delivery_store_info("]),
    ],
)
def test_error_observations_say_what_was_wrong(action, fragments):
    env = make_env()
    env.reset(seed=0)
    before = env.unwrapped.world.state_dict()
    obs, reward, terminated, truncated, info = env.step(action)
    for f in fragments:
        assert f in obs
    assert reward == 0.0 and not terminated and not truncated
    assert info["tool_errors"] == 1
    assert env.unwrapped.world.state_dict() == before
    assert_valid_chat(env.unwrapped.messages)


def test_non_string_action_is_an_error_not_an_exception():
    env = make_env()
    env.reset(seed=0)
    obs, _, _, _, info = env.step({"name": "get_user_all_orders"})  # type: ignore[arg-type]
    assert "must be a string" in obs and info["tool_errors"] == 1


def test_tool_errors_counted_per_failed_call():
    env = make_env()
    env.reset(seed=0)
    _, _, _, _, info = env.step(call("a") + call("b") + call("get_user_all_orders"))
    assert info["tool_errors"] == 2
    _, _, _, _, info = env.step("What would you like?")
    assert info["tool_errors"] == 2


# ----- limits and stopping -----------------------------------------------------------------
def test_step_limit_truncates():
    env = make_env(max_steps=3)
    env.reset(seed=0)
    steps = run(env, [call("get_user_all_orders")] * 5)
    assert len(steps) == 3
    obs, reward, terminated, truncated, info = steps[-1]
    assert truncated and not terminated and reward == 0.0
    assert info["termination_reason"] == "max_steps" and info["success"] is False
    assert info["score"]["rubric/one_order"] == 0.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")


def test_error_limit_truncates():
    env = make_env(max_errors=4)
    env.reset(seed=0)
    steps = run(env, ["<tool_call>not json</tool_call>", call("nope"), call("x") + call("y"), "more"])
    assert len(steps) == 3
    _, reward, terminated, truncated, info = steps[-1]
    assert truncated and not terminated and reward == 0.0
    assert info["termination_reason"] == "max_errors" and info["tool_errors"] == 4


def test_error_limit_wins_over_step_limit_on_the_same_step():
    env = make_env(max_steps=2, max_errors=2)
    env.reset(seed=0)
    _, _, _, truncated, info = run(env, ["<tool_call>x</tool_call>", call("nope")])[-1]
    assert truncated and info["termination_reason"] == "max_errors"


def test_golden_route_reward_is_earned_on_the_last_step_even_at_the_step_limit():
    env = make_env(max_steps=4)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = run(env, GOLDEN_ACTIONS)[-1]
    assert truncated and not terminated and info["termination_reason"] == "max_steps"
    assert reward == 1.0 and info["success"], "the final state is scored whatever ends the episode"


def test_agent_stop_terminates():
    env = make_env()
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("Sorry, I cannot help. ###STOP###")
    assert terminated and not truncated and reward == 0.0
    assert info["termination_reason"] == "agent_stop" and info["success"] is False
    assert obs == ""
    assert env.unwrapped.messages[-1] == {"role": "assistant", "content": "Sorry, I cannot help. ###STOP###"}


def test_agent_stop_after_the_work_is_done_succeeds():
    env = make_env()
    env.reset(seed=0)
    run(env, GOLDEN_ACTIONS[:-1])
    _, reward, terminated, _, info = env.step("###STOP###")
    assert terminated and reward == 1.0 and info["termination_reason"] == "agent_stop"


def test_stop_inside_a_tool_call_action_does_not_stop():
    env = make_env()
    env.reset(seed=0)
    _, _, terminated, truncated, _ = env.step("###STOP### " + call("get_user_all_orders"))
    assert not terminated and not truncated


# ----- rendering and transcripts ------------------------------------------------------------
def test_render_ansi():
    env = make_env(render_mode="ansi")
    env.reset(seed=0)
    run(env, GOLDEN_ACTIONS[:2])
    text = env.render()
    assert isinstance(text, str) and text.endswith("\n")
    lines = text.splitlines()
    assert lines[0].startswith("[system] You are a food-delivery assistant")
    assert "[user] Hi, I'd like some beef noodle soup delivered home for lunch, please." in lines
    assert any(line.startswith('<tool_result name="delivery_product_search_recommend"') for line in lines)
    assert lines[-1] == "<user>It's for two people. That works for me, thank you. Please go ahead.</user>"
    assert make_env().render() is None
    with pytest.raises(ValueError, match="render_mode"):
        make_env(render_mode="human")


def test_messages_in_openai_format_with_ids_matching():
    env = make_env()
    env.reset(seed=0)
    message = {
        "role": "assistant",
        "content": "Checking two things.",
        "tool_calls": [
            {"id": "call_X", "type": "function",
             "function": {"name": "get_delivery_product_info", "arguments": json.dumps({"product_id": BEEF_SOUP})}},
            {"id": "call_Y", "type": "function",
             "function": {"name": "get_delivery_order_status", "arguments": {"order_id": UNPAID_ORDER}}},
        ],
    }
    env.step(json.dumps(message))
    env.step("Shall I order it?")
    env.step("<tool_call>{bad json}</tool_call>")
    env.step(call("get_user_all_orders") + call("nope"))
    msgs = env.unwrapped.messages
    assert_valid_chat(msgs)
    assistant = msgs[2]
    assert assistant["content"] == "Checking two things."
    assert [tc["id"] for tc in assistant["tool_calls"]] == ["call_X", "call_Y"]
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {"order_id": UNPAID_ORDER}
    assert [m["tool_call_id"] for m in msgs[3:5]] == ["call_X", "call_Y"]
    assert json.loads(msgs[4]["content"]) == {"order_id": UNPAID_ORDER, "status": "unpaid"}


def test_reused_tool_call_ids_are_made_unique():
    # regression: an agent reusing "call_1" (or clashing with generated ids) produced duplicate ids
    env = make_env()
    env.reset(seed=0)
    same = {"tool_calls": [{"id": "call_1", "function": {"name": "get_user_all_orders", "arguments": "{}"}}] * 2}
    env.step(json.dumps(same))
    env.step(json.dumps(same))
    env.step(call("get_user_all_orders"))
    assert_valid_chat(env.unwrapped.messages)
    ids = [tc["id"] for m in env.unwrapped.messages for tc in m.get("tool_calls", [])]
    assert ids[0] == "call_1" and len(set(ids)) == len(ids) == 5


action_pool = st.sampled_from(
    GOLDEN_ACTIONS
    + [
        "Hello! How many people is this for?",
        "What is your budget?",
        "Should I go ahead?",
        "###STOP###",
        call("get_delivery_order_detail", order_id=UNPAID_ORDER),
        call("modify_delivery_order", order_id=UNPAID_ORDER, note="no chilli"),
        call("cancel_delivery_order", order_id=UNPAID_ORDER),
        call("nope"),
        '{"tool_calls": [{"id": "call_2", "function": {"name": "get_user_all_orders", "arguments": "{}"}}]}',
        "<tool_call>{",
        "",
    ]
)
texts = st.one_of(action_pool, st.text(max_size=40))


@given(actions=st.lists(texts, min_size=1, max_size=12))
def test_messages_stay_valid_for_any_actions(actions):
    env = make_env(max_steps=20)
    env.reset(seed=0)
    run(env, actions)
    assert_valid_chat(env.unwrapped.messages)


# ----- never raising ----------------------------------------------------------------------
_SHARED = {}


def _shared_env():
    if "env" not in _SHARED:
        _SHARED["env"] = make_env(max_steps=30, max_errors=30)
    return _SHARED["env"]


@given(actions=st.lists(st.one_of(st.text(), texts, st.text(alphabet='{}[]"<>:,/ tool_calnamer')), max_size=8),
       seed=st.integers(0, 2**16))
def test_step_never_raises(actions, seed):
    env = _shared_env()
    env.reset(seed=seed)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and env.observation_space.contains(obs)
        assert reward in (0.0, 1.0) and isinstance(terminated, bool) and isinstance(truncated, bool)
        assert isinstance(info["tool_errors"], int)
        if terminated or truncated:
            assert info["termination_reason"] in ("user_stop", "agent_stop", "max_steps", "max_errors")
            env.reset()


# ----- gymnasium conformance --------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*alternative render modes")
def test_check_env_passes_on_the_unwrapped_env():
    check_env(make_env(render_mode="ansi"), skip_render_check=False)


def test_check_env_passes_through_make(delivery_task):
    env = gym.make(ENV_ID, tasks=[make_delivery_task()], render_mode="ansi")
    check_env(env.unwrapped)
    assert env.unwrapped.spec.id == ENV_ID


def test_check_env_passes_on_generated_tasks():
    check_env(gym.make(ENV_ID).unwrapped)


def test_spaces_admit_any_unicode_and_sample():
    env = make_env()
    space = env.observation_space
    assert space == env.action_space
    assert space.contains("外卖 😀 \x00") and not space.contains(b"bytes") and not space.contains(3)
    space.seed(0)
    samples = [space.sample() for _ in range(20)]
    assert all(space.contains(s) for s in samples)
    space.seed(0)
    assert [space.sample() for _ in range(20)] == samples


def test_close_is_idempotent():
    env = make_env()
    env.reset(seed=0)
    env.close()
    env.close()


# ----- determinism --------------------------------------------------------------------------
def transcript(env, seed: int | None, actions: list[str], options: dict | None = None) -> str:
    obs, info = env.reset(seed=seed, options=options)
    parts = [obs, json.dumps(info, sort_keys=True)]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        parts.append(json.dumps([obs, reward, terminated, truncated, info], sort_keys=True))
        if terminated or truncated:
            break
    parts.append(env.render())
    parts.append(json.dumps(env.unwrapped.messages, sort_keys=True))
    return "\n".join(parts)


@given(seed=st.integers(0, 2**31 - 1), actions=st.lists(texts, max_size=10))
def test_same_seed_same_actions_same_transcript(seed, actions):
    a = transcript(make_env(render_mode="ansi"), seed, actions)
    b = transcript(make_env(render_mode="ansi"), seed, actions)
    assert a == b


def test_generated_tasks_are_deterministic_per_seed():
    def golden_transcript(seed: int) -> str:
        env = gym.make(ENV_ID, render_mode="ansi")
        env.reset(seed=seed)
        return transcript(env, seed, env.unwrapped.task.golden_actions)

    assert golden_transcript(11) == golden_transcript(11)
    assert golden_transcript(11) != golden_transcript(12)


_TRANSCRIPT_SCRIPT = """
import hashlib, json, sys
import gymnasium as gym
import servicegym
h = hashlib.sha256()
for seed in range(6):
    env = gym.make("servicegym/Delivery-v0", render_mode="ansi")
    obs, info = env.reset(seed=seed)
    h.update(json.dumps([obs, info], sort_keys=True).encode())
    for a in env.unwrapped.task.golden_actions[:-1] + ["What is your budget?", "Shall I go ahead?", "<tool_call>x"]:
        step = env.step(a)
        h.update(json.dumps(step, sort_keys=True).encode())
        if step[2] or step[3]:
            break
    h.update(env.render().encode() + json.dumps(env.unwrapped.messages).encode())
print(h.hexdigest())
"""


def test_transcripts_identical_across_processes_and_hash_seeds():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    digests = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(root))
        out = subprocess.run([sys.executable, "-c", _TRANSCRIPT_SCRIPT], cwd=root, env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_reused_env_matches_fresh_env():
    env = make_env(render_mode="ansi")
    transcript(env, 3, GOLDEN_ACTIONS)
    transcript(env, 4, ["hello", call("nope")])
    assert transcript(env, 5, GOLDEN_ACTIONS) == transcript(make_env(render_mode="ansi"), 5, GOLDEN_ACTIONS)


def test_reset_restores_the_initial_world():
    env = make_env()
    env.reset(seed=0)
    initial = env.unwrapped.world.state_dict()
    run(env, GOLDEN_ACTIONS)
    assert env.unwrapped.world.state_dict() != initial
    env.reset(seed=0)
    assert env.unwrapped.world.state_dict() == initial
    assert len(env.unwrapped.history) == 1 and len(env.unwrapped.messages) == 2
    assert set(env.unwrapped.world.table("orders").rows) == {UNPAID_ORDER, PAID_ORDER}


# ----- reset options ----------------------------------------------------------------------
def test_reset_option_task_id_and_task():
    from servicegym.envs.environments.delivery import DeliveryEnv

    other = make_delivery_task("handmade/other")

    env = DeliveryEnv(tasks=[make_delivery_task(), other])
    assert env.task_ids() == ["handmade/beef-soup", "handmade/other"]
    for _ in range(3):
        _, info = env.reset(options={"task_id": "handmade/other"})
        assert info["task_id"] == "handmade/other" and env.task is other
    fresh = make_delivery_task("handmade/passed-in")
    _, info = env.reset(options={"task": fresh})
    assert info["task_id"] == "handmade/passed-in" and env.task is fresh
    _, info = env.reset(options={"task": fresh.model_dump(mode="json") | {"task_id": "handmade/as-dict"}})
    assert info["task_id"] == "handmade/as-dict"
    assert run(env, GOLDEN_ACTIONS)[-1][1] == 1.0
    # a task given in options does not join the source
    assert "handmade/passed-in" not in env.task_ids()


def test_reset_rejects_bad_options():
    env = make_env()
    with pytest.raises(ValueError, match=r"unknown reset options \['colour'\]"):
        env.reset(options={"colour": "red"})
    with pytest.raises(KeyError, match="unknown task_id 'nope'"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(TypeError, match="must be a Task"):
        env.reset(options={"task": 42})
    with pytest.raises(ValueError, match="difficulty applies to generated tasks only"):
        env.reset(options={"difficulty": 3})
    with pytest.raises(ValueError):
        env.reset(options={"task": {"task_id": "x"}})
    # the env is still usable after a refused reset
    obs, info = env.reset(seed=0)
    assert info["task_id"] == "handmade/beef-soup"


def test_reset_options_on_generated_tasks():
    env = gym.make(ENV_ID).unwrapped
    _, info = env.reset(seed=0)
    assert info["task_id"].startswith("delivery/train/")
    _, info = env.reset(seed=0, options={"split": "test"})
    assert info["task_id"] in env.task_ids("test")
    assert len(env.task_ids("test")) == 100
    _, info = env.reset(seed=0, options={"difficulty": 4})
    assert info["task_id"].endswith("/d4") and env.task.difficulty == 4
    _, info = env.reset(options={"task_id": "delivery/train/7/d1"})
    assert info["task_id"] == "delivery/train/7/d1" and env.task.difficulty == 1
    with pytest.raises(KeyError, match="unknown task_id"):
        env.reset(options={"task_id": "delivery/train/seven/d1"})
    with pytest.raises(KeyError):
        env.reset(options={"task_id": "delivery/nosuchsplit/7/d1"})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"seed": 3})


def test_constructor_rejects_bad_arguments():
    for kwargs, match in [({"user": "llm-typo"}, "user="), ({"judge": "gpt"}, "judge="), ({"split": "validation"}, "split"),
                          ({"max_steps": 0}, "positive")]:
        with pytest.raises(ValueError, match=match):
            make_env(**kwargs)
