"""Reward wrappers: plain ``gymnasium.Wrapper`` subclasses over any servicegym env.

Each changes only the reward (and adds one ``info`` key saying what it did); observations,
termination and the episode itself are untouched, so they stack in any order, work on the
result of ``gymnasium.make`` and on every sub-env of ``gymnasium.make_vec(..., wrappers=[...])``.
Wrappers apply from the inside out: the outermost one sees the rewards the inner ones made.

- ``StrictSuccessReward``: terminal strict success: 0, then ``float(info["success"])`` on the
  step that ends the episode (the default reward of every env but the workspace, which pays per session).
- ``PartialCreditReward(component=...)``: the reward of every step whose ``info`` carries a
  ``session_end`` dict (a workspace session end) or a ``score`` dict (the final step) becomes a
  score component, or the mean of several: by default ``rubric_fraction`` (VitaBench domains),
  else the mean of ``goal``, ``process`` and ``protection`` (payments), else the mean of
  ``proc`` and ``comp`` (workspace); any key such as ``"goal"`` or ``"judge_fraction"``, or a
  tuple of keys, may be chosen.
- ``PotentialShapingReward(gamma, potential)``: adds ``F_t = gamma * Phi(s_{t+1}) - Phi(s_t)``
  (Ng, Harada and Russell's potential-based shaping, which keeps the optimal policies), where
  ``Phi`` defaults to rubric progress: the share of rubric items the current state already
  satisfies. The terms of an episode of T steps telescope:
  ``sum_t gamma^t F_t = gamma^T Phi(s_T) - Phi(s_0)``.
- ``ToolErrorPenalty(per_error)``: subtracts ``per_error`` per new tool or parse error.
- ``TurnPenalty(per_turn)``: subtracts ``per_turn`` on every step.
- ``CustomReward(fn)``: adds (or, ``mode="replace"``, substitutes) ``fn(world, history, info)``.

Example::

    env = gym.make("servicegym/Delivery-v0")
    env = PartialCreditReward(env)                       # rubric fraction at the end
    env = PotentialShapingReward(env, gamma=0.99)        # dense progress signal
    env = ToolErrorPenalty(env, per_error=0.05)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

__all__ = [
    "StrictSuccessReward", "PartialCreditReward", "PotentialShapingReward", "ToolErrorPenalty", "TurnPenalty",
    "CustomReward", "rubric_progress", "DEFAULT_COMPONENTS",
]

Step = tuple[Any, float, bool, bool, dict[str, Any]]

# the partial-credit components tried in order when none is chosen: the first whose keys are all present
DEFAULT_COMPONENTS: tuple[tuple[str, ...], ...] = (("rubric_fraction",), ("goal", "process", "protection"),
                                                   ("proc", "comp"))


class StrictSuccessReward(gym.Wrapper):
    """Terminal strict success: 0 on every step, ``float(info["success"])`` on the step that ends
    the episode (terminated or truncated). The life-service and payments envs' own default, made
    explicit (e.g. as the outermost wrapper of a stack, to reset whatever inner wrappers did). On
    the workspace, whose own reward pays each session, it pays once: 1 if every session succeeded."""

    def step(self, action: Any) -> Step:
        obs, _, terminated, truncated, info = self.env.step(action)
        done = terminated or truncated
        return obs, float(bool(info.get("success", False))) if done else 0.0, terminated, truncated, info


class PartialCreditReward(gym.Wrapper):
    """Partial credit from the score components (see the module docstring).

    Args:
        component: a score key (``"rubric_fraction"``, ``"goal"``, ``"proc"``,
            ``"judge_fraction"``, ``"rubric/<item>"``, ...), a sequence of keys (their mean), or
            None for the first of ``DEFAULT_COMPONENTS`` whose keys the score has.

    The credited dict is ``info["session_end"]`` where the step has one (the workspace's session
    outcome, with ``proc`` and ``comp``), else ``info["score"]``; steps with neither keep their reward. ``info["partial_credit"]`` holds the value
    given. A chosen key the score lacks is a ``KeyError`` naming the keys it has.
    """

    def __init__(self, env: gym.Env, component: str | Sequence[str] | None = None) -> None:
        super().__init__(env)
        if isinstance(component, str):
            component = (component,)
        self.component = tuple(component) if component is not None else None
        if self.component == ():
            raise ValueError("component must name at least one score key")

    def keys_for(self, score: Mapping[str, Any]) -> tuple[str, ...]:
        if self.component is not None:
            missing = [k for k in self.component if k not in score]
            if missing:
                have = ", ".join(sorted(k for k, v in score.items() if _numeric(v)))
                raise KeyError(f"score has no {', '.join(missing)}; it has {have}")
            return self.component
        for keys in DEFAULT_COMPONENTS:
            if all(k in score for k in keys):
                return keys
        raise KeyError(f"no default partial-credit component in the score ({', '.join(sorted(score))}); "
                       "choose one with component=...")

    def credit(self, score: Mapping[str, Any]) -> float:
        keys = self.keys_for(score)
        return sum(float(score[k]) for k in keys) / len(keys)

    def step(self, action: Any) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        # a session end (workspace: info["session_end"], also on the last step) credits that
        # session, like the env's own per-session reward; else the episode's final score
        score = info.get("session_end") if isinstance(info.get("session_end"), Mapping) else info.get("score")
        if isinstance(score, Mapping):
            reward = self.credit(score)
            info["partial_credit"] = reward
        return obs, reward, terminated, truncated, info


def rubric_progress(env: gym.Env) -> float:
    """Phi(s): the share of the rubric the current state already satisfies.

    An env with a ``rubric_progress()`` method answers itself. The workspace (whose ``score``
    closes the session) gives the COMP of the current session's checklist over the current
    state. Every other env is scored by its own code (``env.score(task, env.episode_view())``):
    ``rubric_fraction`` where the domain reports it, else the mean of the ``rubric/<item>``
    components (payments' checks); 0 without any."""
    base = env.unwrapped
    hook = getattr(base, "rubric_progress", None)
    if callable(hook):
        return float(hook())
    if getattr(base, "domain", "") == "workspace":
        return _workspace_progress(base)
    _, score = base.score(base.task, base.episode_view())
    return progress_of(score)


def _workspace_progress(base: Any) -> float:
    from servicegym.rewards.rubric import evaluate
    from servicegym.rewards.workspace import comp

    k = getattr(base, "_session", 0)
    cache = getattr(base, "_cache", None)
    if not k or cache is None:
        return 0.0
    items = cache.sessions[k - 1].checklist
    return comp(items, evaluate(items, base.episode_view()))


def _score_is_progress(base: Any) -> bool:
    """Whether a final ``info["score"]`` gives the default potential (no hook, not the workspace)."""
    return not callable(getattr(base, "rubric_progress", None)) and getattr(base, "domain", "") != "workspace"


def progress_of(score: Mapping[str, Any]) -> float:
    if "rubric_fraction" in score:
        return float(score["rubric_fraction"])
    items = [float(v) for k, v in score.items() if k.startswith("rubric/") and _numeric(v)]
    return sum(items) / len(items) if items else 0.0


class PotentialShapingReward(gym.Wrapper):
    """Adds the potential-based shaping term ``F_t = gamma * Phi(s_{t+1}) - Phi(s_t)``.

    Args:
        gamma: the discount of the learner (the identity below holds for this gamma).
        potential: ``Phi(env) -> float`` over the unwrapped env's current state; default
            ``rubric_progress`` (the code rubric even when ``judge="llm"``: no judge calls).
        zero_at_terminal: ``Phi(s_T) = 0`` when the episode *terminates* (not when it is
            truncated: a truncated state is not an end state of the task). This is the
            convention under which shaping provably leaves the optimal policies of an episodic
            task unchanged; with False (the default) ``Phi(s_T)`` is the state's own potential, so
            an episode's terms reward the progress it made.

    Over an episode of T steps ``sum_{t<T} gamma^t F_t = gamma^T Phi(s_T) - Phi(s_0)``.
    ``info["shaping"]`` is ``F_t`` and ``info["potential"]`` is ``Phi(s_{t+1})``. On the final
    step the potential reuses the env's ``info["score"]`` when ``potential`` is the default.
    """

    def __init__(self, env: gym.Env, gamma: float = 0.99, potential: Callable[[gym.Env], float] | None = None,
                 zero_at_terminal: bool = False) -> None:
        super().__init__(env)
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        self.gamma = float(gamma)
        self.potential = potential or rubric_progress
        self.zero_at_terminal = zero_at_terminal
        self._phi = 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._phi = float(self.potential(self.env))
        info["potential"] = self._phi
        return obs, info

    def step(self, action: Any) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated and self.zero_at_terminal:
            phi = 0.0
        elif (self.potential is rubric_progress and isinstance(info.get("score"), Mapping)
              and _score_is_progress(self.env.unwrapped)):
            phi = progress_of(info["score"])
        else:
            phi = float(self.potential(self.env))
        shaping = self.gamma * phi - self._phi
        self._phi = phi
        info["shaping"] = shaping
        info["potential"] = phi
        return obs, reward + shaping, terminated, truncated, info


class ToolErrorPenalty(gym.Wrapper):
    """Subtracts ``per_error`` for every tool or parse error a step adds to ``info["tool_errors"]``
    (the env's running count); ``info["tool_error_penalty"]`` is the amount subtracted."""

    def __init__(self, env: gym.Env, per_error: float = 0.1) -> None:
        super().__init__(env)
        self.per_error = float(per_error)
        self._seen = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._seen = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        count = int(info.get("tool_errors", self._seen))
        penalty = self.per_error * max(0, count - self._seen)
        self._seen = count
        info["tool_error_penalty"] = penalty
        return obs, reward - penalty, terminated, truncated, info


class TurnPenalty(gym.Wrapper):
    """Subtracts ``per_turn`` on every step (every agent action is a turn);
    ``info["turn_penalty"]`` is the amount subtracted."""

    def __init__(self, env: gym.Env, per_turn: float = 0.01) -> None:
        super().__init__(env)
        self.per_turn = float(per_turn)

    def step(self, action: Any) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["turn_penalty"] = self.per_turn
        return obs, reward - self.per_turn, terminated, truncated, info


class CustomReward(gym.Wrapper):
    """A user's own reward term: ``fn(world, history, info) -> float`` after every step, over the
    unwrapped env's current world (``world_state.core.World``), its execution history (every tool
    call, message and event so far) and the step's ``info``. ``fn`` must not change the world.

    Args:
        fn: the term.
        mode: ``"add"`` (default) adds it to the reward, ``"replace"`` makes it the reward.

    ``info["custom_reward"]`` is the value ``fn`` returned.
    """

    def __init__(self, env: gym.Env, fn: Callable[[Any, Any, dict[str, Any]], float], mode: str = "add") -> None:
        super().__init__(env)
        if mode not in ("add", "replace"):
            raise ValueError(f"mode must be 'add' or 'replace', got {mode!r}")
        self.fn = fn
        self.mode = mode

    def step(self, action: Any) -> Step:
        obs, reward, terminated, truncated, info = self.env.step(action)
        base = self.env.unwrapped
        value = float(self.fn(base.world, base.history, info))
        info["custom_reward"] = value
        return obs, value if self.mode == "replace" else reward + value, terminated, truncated, info


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
