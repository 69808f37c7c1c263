"""The stable-baselines3 adapter: menu honesty and masks, features, SB3's env checker, the clear
error for a raw text env, and learning that beats random (a smaller budget than the script)."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest

import servicegym  # noqa: F401
from servicegym.envs.integrations.sb3 import SB3EnvError, ToolMenuWrapper, check_sb3_env, make_sb3_env

TASK = "delivery/dev/3/d0"


def _ids_in(text: str) -> set[str]:
    return set(re.findall(r"\b[SP]\d{6}\b|\bG\d{6}D\d\d\b", text))


def test_empty_history_menu_reveals_no_world_ids():
    env = make_sb3_env(difficulty=0)
    obs, info = env.reset(seed=0, options={"task_id": TASK})
    menu = env.get_wrapper_attr("menu")()
    task = env.unwrapped.task
    golden_ids = _ids_in(" ".join(task.golden_actions))
    assert golden_ids  # the task has store/product ids the agent has not seen
    for action in menu:
        if action is not None:
            assert not (_ids_in(action) & golden_ids)
    names = env.get_wrapper_attr("slot_names")
    valid = {n for n, a in zip(names, menu) if a is not None}
    assert valid == {"profile", "search", "ask", "find_unpaid", "stop"}


def test_masks_match_filled_slots_and_ids_come_from_observations():
    env = make_sb3_env(difficulty=0)
    env.reset(seed=0, options={"task_id": TASK})
    names = env.get_wrapper_attr("slot_names")
    seen_text = ""
    for slot in ("profile", "search", "store_info[0]"):
        _, _, _, _, info = env.step(names.index(slot))
        seen_text += " ".join(m.get("content") or "" for m in env.unwrapped.messages if m["role"] == "tool")
        menu, mask = env.get_wrapper_attr("menu")(), env.get_wrapper_attr("action_masks")()
        assert mask.dtype == bool and mask.shape == (len(names),)
        assert list(mask) == [a is not None for a in menu]
        for action in menu:
            if action is not None:
                assert _ids_in(action) <= _ids_in(seen_text)  # every id in the menu was seen in a result
    assert not env.get_wrapper_attr("action_masks")()[names.index("profile")]  # a read is offered once


def test_features_shape_dtype_and_range():
    env = make_sb3_env(difficulty=0)
    obs, _ = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape
    rng = np.random.default_rng(0)
    for _ in range(15):
        mask = env.get_wrapper_attr("action_masks")()
        obs, r, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        if term or trunc:
            break


def test_masked_slot_is_a_real_turn_not_an_exception():
    env = make_sb3_env(difficulty=0)
    env.reset(seed=0, options={"task_id": TASK})
    pay = env.get_wrapper_attr("slot_names").index("pay")
    assert not env.get_wrapper_attr("action_masks")()[pay]
    _, _, _, _, info = env.step(pay)
    assert info["menu_template"] == "invalid" and info["step"] == 1


def test_other_domains_are_refused_clearly():
    with pytest.raises(ValueError, match="delivery"):
        ToolMenuWrapper(gym.make("servicegym/Payments-v0"))


def test_raw_text_env_gets_a_clear_error():
    raw = gym.make("servicegym/Delivery-v0")
    with pytest.raises(SB3EnvError, match="ToolMenuWrapper"):
        check_sb3_env(raw)
    check_sb3_env(make_sb3_env(difficulty=0))


def test_sb3_env_checker_and_raw_env_rejected_by_sb3():
    pytest.importorskip("torch", reason="the rl extra (torch, stable-baselines3) is not installed")
    pytest.importorskip("stable_baselines3", reason="the rl extra is not installed")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env

    check_env(make_sb3_env(difficulty=0), warn=True)
    # SB3's own failure on the raw env does not name the problem (hence check_sb3_env / make_sb3_env)
    with pytest.raises((TypeError, AssertionError, ValueError)):
        PPO("MlpPolicy", gym.make("servicegym/Delivery-v0"))


def test_training_beats_random_on_held_out_tasks(tmp_path):
    pytest.importorskip("torch", reason="the rl extra (torch, stable-baselines3) is not installed")
    pytest.importorskip("sb3_contrib", reason="the rl extra (sb3-contrib) is not installed")
    from servicegym.envs.integrations.sb3 import train

    r = train(total_timesteps=16_000, eval_tasks=30, seed=0, out_dir=tmp_path, eval_every=8_000)
    assert r["success_random"] <= 0.1
    assert r["success_trained"] >= r["success_random"] + 0.4, r
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
    assert json.loads((tmp_path / "curve.json").read_text())["timesteps"] >= 16_000
