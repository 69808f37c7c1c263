"""Reference policies: the oracle (a task's golden actions) and random (well-formed random calls).

A policy is ``reset(env, obs, info)`` then ``act(obs) -> action string`` until the episode ends.
A policy that waits on a network may also have ``async def aact(obs) -> action string`` (the same
decision as a coroutine): the rollout collector's ``"async"`` backend then awaits it, many
episodes on one event loop (``servicegym.envs.running.llm_policy.LLMAgentPolicy`` has one).
"""

from __future__ import annotations

import json
import random
from typing import Any

import gymnasium as gym

from servicegym.simulators.llm import LLMError
from servicegym.world_state.core import World


class OraclePolicy:
    """Plays the task's golden actions in order (then ends the conversation itself)."""

    name = "oracle"

    def reset(self, env: gym.Env, obs: str, info: dict[str, Any]) -> None:
        self.actions = list(env.unwrapped.task.golden_actions)
        self.i = 0

    def act(self, obs: str) -> str:
        if self.i >= len(self.actions):
            return "###STOP###"
        self.i += 1
        return self.actions[self.i - 1]


def _world_strings(world: World) -> list[str]:
    """Ids and addresses of the world: the values a random but well-formed call draws from."""
    values = [world.extra.get("user_id", "")]
    for table in world.tables.values():
        values.extend(table.rows.keys())
    return [v for v in values if v]


class RandomPolicy:
    """Random tool calls with schema-valid arguments drawn from the world's ids, and random chat.

    ``p_message`` of the actions are messages to the user (a canned question or confirmation).
    """

    name = "random"
    MESSAGES = ("What would you like?", "Shall I place the order?", "Could you tell me more?", "Your order has been placed and paid.")

    def __init__(self, seed: int = 0, p_message: float = 0.25) -> None:
        self.rng = random.Random(seed)
        self.p_message = p_message

    def reset(self, env: gym.Env, obs: str, info: dict[str, Any]) -> None:
        self.tools = info["tools"]
        self.pool = _world_strings(env.unwrapped.world)
        self.now = env.unwrapped.world.clock.now

    def _value(self, schema: dict[str, Any]) -> Any:
        rng = self.rng
        if "enum" in schema:
            return rng.choice(schema["enum"])
        t = schema.get("type")
        if t == "string":
            r = rng.random()
            if r < 0.2:
                return self.now.strftime("%Y-%m-%d %H:%M:%S")
            if r < 0.3:
                return self.now.strftime("%Y-%m-%d")
            return rng.choice(self.pool)
        if t == "integer":
            return rng.randint(1, 5)
        if t == "number":
            return round(rng.uniform(0, 5000), 1) if rng.random() < 0.5 else round(rng.uniform(20, 45), 4)
        if t == "boolean":
            return rng.random() < 0.5
        if t == "array":
            return [self._value(schema.get("items", {})) for _ in range(rng.randint(1, 2))]
        return rng.choice(self.pool)

    def act(self, obs: str) -> str:
        if self.rng.random() < self.p_message:
            return self.rng.choice(self.MESSAGES)
        fn = self.rng.choice(self.tools)["function"]
        props = fn["parameters"].get("properties", {})
        required = set(fn["parameters"].get("required", []))
        args = {k: self._value(v) for k, v in props.items() if k in required or self.rng.random() < 0.5}
        return json.dumps({"name": fn["name"], "arguments": args}, ensure_ascii=False)


def _llm_policy(*args: Any, **kwargs: Any):
    from servicegym.envs.running.llm_policy import LLMAgentPolicy

    return LLMAgentPolicy(*args, **kwargs)


POLICIES = {"oracle": OraclePolicy, "random": RandomPolicy, "llm": _llm_policy}


def make_policy(name: str, seed: int = 0, llm: dict[str, Any] | None = None, **options: Any):
    """A policy by name; ``llm`` (or SERVICEGYM_BASE_URL / SERVICEGYM_MODEL) is the endpoint of
    ``"llm"``, and ``options`` go to ``LLMAgentPolicy`` (``max_prompt_tokens``, ``native_tools``,
    ``tool_choice``, extra request fields)."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}")
    if name == "llm":
        return _llm_policy(llm, **options)
    if options or llm is not None:
        raise ValueError(f"policy {name!r} takes no options, got {sorted([*options, *(['llm'] if llm else [])])}")
    return OraclePolicy() if name == "oracle" else RandomPolicy(seed)


def run_episode(env: gym.Env, policy, seed: int | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one episode; returns a JSON-able record (task, reward, success, score, steps, transcript).

    When the policy's endpoint fails (``act`` raises ``LLMError``) the episode stops there and the
    record says so: ``error`` is the message, ``termination_reason`` is ``"policy_error"``.
    """
    obs, info = env.reset(seed=seed, options=options)
    policy.reset(env, obs, info)
    task_id = info["task_id"]
    steps, reward = 0, 0.0
    error = ""
    while True:
        try:
            action = policy.act(obs)
        except LLMError as err:
            error = str(err)
            info = {"termination_reason": "policy_error", "tool_errors": info.get("tool_errors", 0)}
            break
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    record = {
        "task_id": task_id,
        "seed": seed,
        "reward": float(reward),
        "success": bool(info.get("success", False)),
        "termination_reason": info.get("termination_reason", ""),
        "steps": steps,
        "tool_errors": info.get("tool_errors", 0),
        "score": info.get("score", {}),
        "messages": env.unwrapped.messages,
        "details": episode_details(env),
    }
    if error:
        record["error"] = error
    if "llm_usage" in info:
        record["llm_usage"] = info["llm_usage"]
    if isinstance(getattr(policy, "usage", None), dict):
        record["policy_usage"] = dict(policy.usage)
    return record


def episode_details(env: Any) -> dict[str, Any]:
    """The env's ``episode_details()`` for a record (``{}`` for an env without it, or when it
    raises: a record is written whatever the env's extras do)."""
    get = getattr(env.unwrapped, "episode_details", None)
    try:
        out = get() if get is not None else {}
    except Exception:  # noqa: BLE001
        return {}
    return out if isinstance(out, dict) else {}
