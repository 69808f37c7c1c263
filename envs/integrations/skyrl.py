"""SkyRL-Gym adapter: every servicegym env as a ``skyrl_gym`` ``BaseTextEnv`` (``pip install
"servicegym[skyrl]"``; skyrl-gym >= 0.4).

Importing this module registers one SkyRL id per servicegym env (``SKYRL_IDS``:
``servicegym-delivery``, ``servicegym-in-store``, ``servicegym-travel``,
``servicegym-cross-scenario``, ``servicegym-payments``, ``servicegym-workspace``) with
``skyrl_gym.register``; ``skyrl_gym.make(id, env_config=..., extras=...)`` then builds a
``ServiceGymTextEnv``, as SkyRL's generator does for every trajectory.

What SkyRL passes, as read in skyrl-gym 0.4 (``envs/base_text_env.py``, ``envs/registration.py``)
and skyrl-train's ``SkyRLGymGenerator`` / ``PromptDataset``:

- ``extras``: the dataset row without ``prompt`` and ``env_class`` (plus ``max_turns``, set by the
  generator from ``generator.max_turns``). The row's ``task_id`` and ``seed`` (top level or under
  ``extra_info``) choose the episode: rows of ``skyrl_rows`` (``task_rows`` with ``env_class``)
  carry both. ``max_turns`` becomes the env's ``max_steps``, so the env itself ends (truncated,
  ``max_steps``) and scores the episode at the last turn SkyRL allows.
- ``env_config``: ``environment.skyrl_gym.<id>`` of the SkyRL config (a dict or an OmegaConf
  ``DictConfig``): ``tools_in_prompt`` (default true: the tool schemas are appended to the system
  message, since SkyRL's generator applies the chat template without ``tools``), ``observations``
  (``"messages"``, the default: the env's ``turn_messages()``, with ``tool`` messages; ``"text"``:
  one ``user`` message holding the tagged observation, for chat templates without a tool role),
  ``step_rewards`` (default false; see below); every other key goes to ``gym.make`` (``user``,
  ``split``, ``max_steps``, ``user_tool``, ``tasks``...).

``init(prompt)`` resets the env to the row's task and seed and returns the env's own conversation
(system prompt, with the tools when ``tools_in_prompt``, and the user's opening), which equals
``task_rows``' prompt for that row. ``step(action)`` steps the env with the model's raw text (the
env reads ``<tool_call>`` blocks, JSON calls, or a message to the user) and returns
``observations`` (see above; a Workspace step that ends a session returns the next session's
conversation, system message first; ``[]`` on the last step, as in SkyRL's own envs, since nothing
follows it), ``done`` (terminated or truncated), ``reward`` and ``metadata`` (``step``,
``tool_errors``, and on the last step ``termination_reason``, ``success``, ``score``, every
component as in ``info["score"]``, ``observations``, that step's turn messages, and ``judge_error``:
``""`` unless the LLM judge of ``judge="llm"`` could not score the episode, which then pays 0.0).
A model endpoint inside the episode never raises out of ``step``: a failed LLM user
(``user="llm"``) ends it with ``termination_reason="user_error"``, each call bounded by its
``LLMConfig`` (retries, ``deadline_s``). ``reward`` is 0.0 until the last step,
which pays the env's strict success (1.0/0.0: all rubric items; payments G and P and F; Workspace
every session). With ``step_rewards`` every step pays the env's own reward instead (the same
except in Workspace, whose session-ending steps pay that session's success). ``get_metrics()``
returns ``success``, ``steps``, ``tool_errors`` and the env's ``score_keys`` as floats, which
SkyRL averages per env class; a key that is a count (``count_keys``: ``rubric_items``, workspace
``sessions``) is named ``n_<key>``, so no log reads it as a reward.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError('the SkyRL adapter needs skyrl-gym: pip install "servicegym[skyrl]" (skyrl-gym>=0.4)') from err

from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.running.llm_policy import TEXT_TOOLS_PROMPT
from servicegym.envs.running.vector import resolve_env_id
from servicegym.envs.tasks.sources import SPLITS

__all__ = ["SKYRL_IDS", "ServiceGymTextEnv", "register_skyrl_envs", "skyrl_id", "skyrl_rows"]

ENTRY_POINT = "servicegym.envs.integrations.skyrl:ServiceGymTextEnv"
_OPTIONS = ("tools_in_prompt", "observations", "step_rewards")


def skyrl_id(env_id: str) -> str:
    """``"servicegym/CrossScenario-v0"`` -> ``"servicegym-cross-scenario"``."""
    name = resolve_env_id(env_id).split("/", 1)[1].rsplit("-v", 1)[0]
    return "servicegym-" + re.sub(r"(?<=[a-z])(?=[A-Z])", "-", name).lower()


SKYRL_IDS: dict[str, str] = {skyrl_id(env_id): env_id for env_id in ENV_IDS}
"""SkyRL id -> servicegym env id."""


def _plain(config: Any) -> dict[str, Any]:
    """``env_config`` as a plain dict (None, a mapping, or an OmegaConf ``DictConfig``)."""
    if config is None:
        return {}
    try:  # OmegaConf ships with skyrl-gym; a DictConfig's nested values become plain too
        from omegaconf import DictConfig, OmegaConf

        if isinstance(config, DictConfig):
            return dict(OmegaConf.to_container(config, resolve=True))
    except ImportError:  # pragma: no cover
        pass
    if isinstance(config, Mapping):
        return dict(config)
    # a dataclass-like config object: its public attributes
    return {k: v for k, v in vars(config).items() if not k.startswith("_")}


def _pick(extras: dict[str, Any], key: str) -> Any:
    if extras.get(key) is not None:
        return extras[key]
    inner = extras.get("extra_info")
    return inner.get(key) if isinstance(inner, Mapping) else None


# what a trainer's env_config naturally calls our arguments
CONFIG_ALIASES = {"max_turns": "max_steps", "max_env_steps": "max_steps", "max_tool_errors": "max_errors"}


def _env_params(env_id: str) -> set[str]:
    """The keyword arguments ``gym.make(env_id, ...)`` takes: every ``__init__`` of the env class's MRO."""
    import inspect

    cls = gym.spec(env_id).entry_point
    if isinstance(cls, str):
        module, _, name = cls.partition(":")
        cls = getattr(__import__(module, fromlist=[name]), name)
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass in (gym.Env, object):
            continue
        names |= {p.name for p in inspect.signature(init).parameters.values()
                  if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"}
    return names


def _check_env_config(env_id: str, config: dict[str, Any]) -> None:
    """Map a trainer's natural names (``CONFIG_ALIASES``: ``max_turns`` is our ``max_steps``) in
    place; any other key the env does not take is a one-line ``ValueError`` naming what it takes."""
    for alias, name in CONFIG_ALIASES.items():
        if alias in config:
            value = config.pop(alias)
            config.setdefault(name, int(value))
    unknown = sorted(set(config) - _env_params(env_id))
    if unknown:
        raise ValueError(f"env_config {', '.join(map(repr, unknown))} is not an argument of {env_id}; it takes "
                         f"{', '.join(sorted(_env_params(env_id)))}, the aliases {', '.join(CONFIG_ALIASES)}, "
                         f"and {', '.join(_OPTIONS)}")


class ServiceGymTextEnv(BaseTextEnv):
    """One servicegym episode as a SkyRL-Gym text env; see the module docstring."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None, *,
                 env_id: str = "servicegym/Delivery-v0") -> None:
        super().__init__()
        config = _plain(env_config)
        extras = dict(extras or {})
        self.env_id = resolve_env_id(env_id)
        self.tools_in_prompt = bool(config.pop("tools_in_prompt", True))
        self.observations = str(config.pop("observations", "messages"))
        if self.observations not in ("messages", "text"):
            raise ValueError(f"env_config observations must be 'messages' or 'text', got {self.observations!r}")
        self.step_rewards = bool(config.pop("step_rewards", False))
        _check_env_config(self.env_id, config)
        task_id, seed = _pick(extras, "task_id"), _pick(extras, "seed")
        self.task_id = None if task_id is None else str(task_id)
        self.seed = None if seed is None else int(seed)
        max_turns = extras.get("max_turns")
        if max_turns is not None and "max_steps" not in config:
            config["max_steps"] = int(max_turns)
        self.env = gym.make(self.env_id, **config)
        self.max_turns = int(self.env.unwrapped.max_steps)
        self.turns = 0
        self.done = False
        self.info: dict[str, Any] = {}
        self.reset_info: dict[str, Any] = {}

    def init(self, prompt: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset to the row's task and seed; the env's system prompt and opening as chat messages
        (``prompt``, SkyRL's copy of the row's, is not read: the env is the source)."""
        options = {"task_id": self.task_id} if self.task_id is not None else None
        _, info = self.env.reset(seed=self.seed, options=options)
        self.reset_info = info
        self.turns, self.done, self.info = 0, False, {}
        messages = [dict(m) for m in self.env.unwrapped.messages]
        if self.tools_in_prompt and messages and messages[0]["role"] == "system":
            tools = json.dumps(info["tools"], ensure_ascii=False)
            messages[0]["content"] = messages[0]["content"] + TEXT_TOOLS_PROMPT.format(tools=tools)
        metadata = {"env_id": self.env_id, "task_id": info["task_id"], "seed": self.seed, "domain": info["domain"]}
        return messages, metadata

    def step(self, action: str) -> BaseTextEnvStepOutput:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.turns += 1
        self.info = info
        self.done = bool(terminated or truncated)
        u = self.env.unwrapped
        turn = [dict(m) for m in u.turn_messages()]
        if self.observations == "text" and not (turn and turn[0].get("role") == "system"):
            turn = [{"role": "user", "content": obs}] if obs else []
        metadata: dict[str, Any] = {"step": self.turns, "tool_errors": int(info.get("tool_errors", 0))}
        if self.done:
            success = bool(info.get("success", False))
            # nothing follows the last step: its turn (e.g. the user's goodbye) goes to metadata, and
            # observations are [] as in SkyRL's own envs (else the generator appends masked tokens)
            metadata.update(termination_reason=info.get("termination_reason", ""), success=success,
                            score=info.get("score", {}), observations=turn,
                            judge_error=str(info.get("judge_error") or ""))
            paid = float(reward) if self.step_rewards else float(success)
        else:
            paid = float(reward) if self.step_rewards else 0.0
        return BaseTextEnvStepOutput(observations=[] if self.done else turn, reward=paid, done=self.done,
                                     metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        score = self.info.get("score", {}) if self.done else {}
        out: dict[str, Any] = {"success": float(bool(self.info.get("success", False))) if self.done else 0.0,
                               "steps": self.turns, "tool_errors": int(self.info.get("tool_errors", 0))}
        counts = set(self.env.unwrapped.count_keys)
        for key in self.env.unwrapped.score_keys:
            value = score.get(key)
            if isinstance(value, (int, float)):
                out[f"n_{key}" if key in counts else key] = float(value)  # a count is logged as one
        return out

    def close(self) -> None:
        self.env.close()


def register_skyrl_envs() -> list[str]:
    """Register every id of ``SKYRL_IDS`` with ``skyrl_gym`` (those not registered yet); the ids."""
    for sid, env_id in SKYRL_IDS.items():
        if sid not in skyrl_gym.registry:
            skyrl_gym.register(id=sid, entry_point=ENTRY_POINT, kwargs={"env_id": env_id})
    return list(SKYRL_IDS)


def skyrl_rows(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
               env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``task_rows`` with ``env_class`` (the SkyRL id) added: SkyRL's dataset format (``prompt``
    and ``env_class``; the other fields reach the env as ``extras``). Write them as parquet with
    ``hf_dataset(rows).to_parquet(PATH)``."""
    from servicegym.envs.integrations.dataset import task_rows

    env_class = skyrl_id(env_id)
    return [{**row, "env_class": env_class} for row in task_rows(env_id, split, n, seed, env_kwargs)]


def main(argv: list[str] | None = None) -> int:
    """``python -m servicegym.envs.integrations.skyrl --env ID --split train --n N --out FILE``:
    ``skyrl_rows`` as JSON lines (SkyRL's ``PromptDataset`` reads ``.json`` and ``.parquet``)."""
    import argparse

    from servicegym.envs.integrations.dataset import write_rows

    parser = argparse.ArgumentParser(prog="python -m servicegym.envs.integrations.skyrl",
                                     description="SkyRL dataset rows (prompt, env_class, task_id, seed, ...)")
    parser.add_argument("--env", required=True, help="a servicegym env id, e.g. servicegym/Delivery-v0")
    parser.add_argument("--split", default="train", choices=SPLITS)
    parser.add_argument("--n", type=int, default=None, help="rows (default: the whole split; train needs --n)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="output file (.json: JSON lines)")
    args = parser.parse_args(argv)
    if args.split == "train" and args.n is None:
        parser.error("--split train needs --n (generated tasks are unlimited)")
    try:
        rows = skyrl_rows(args.env, args.split, args.n, args.seed)
    except ValueError as err:
        parser.exit(2, f"error: {err}\n")
    path = write_rows(rows, args.out)
    print(f"{len(rows)} rows ({skyrl_id(args.env)}) -> {path}")
    return 0


register_skyrl_envs()

if __name__ == "__main__":
    raise SystemExit(main())
