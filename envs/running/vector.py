"""Vector helpers for text envs: ``make_vec`` with defaults that work for ``str`` observations,
and ``ThreadVectorEnv``, a vector env whose sub-envs run in a thread pool and can be stepped a
few at a time (``step_some``) or from asyncio (``astep``, ``astep_some``, ``areset``).

Why a thread vector env: in an LLM-agent loop the time goes into waiting for completions, not
into ``env.step``. With ``step_some`` a loop steps each env as soon as its completion arrives,
instead of waiting for the slowest of the batch; with the asyncio API it does so from coroutines.

Batch layout (the same for every mode, so transcripts compare equal across modes):
observations are a ``tuple`` of ``str`` (gymnasium batches the project's ``UnicodeText`` space as
a ``Tuple``); rewards ``float64``, terminations and truncations ``bool`` arrays of shape
``(num_envs,)``; infos a dict of arrays with a ``_key`` mask per key (gymnasium's layout: numbers
become typed arrays, everything else numpy object arrays).

Autoreset modes (``gymnasium.vector.AutoresetMode``; all three behave identically in the sync,
async and thread vector envs):

- ``NEXT_STEP`` (default): the step that ends an episode returns its final observation, reward
  and info as usual; the *next* ``step`` of that env ignores its action, resets the env (no new
  seed: the env's generator continues) and returns the reset observation with reward 0,
  ``terminated = truncated = False`` and the reset info (``task_id``, ``tools``, ...).
- ``SAME_STEP``: the step that ends an episode resets the env at once; it returns the reset
  observation and the reset info, with the final observation and info of the finished episode
  in ``info["final_obs"]`` and ``info["final_info"]`` (``_final_obs`` / ``_final_info`` mark which
  envs finished), and the reward, terminated and truncated of the final step.
- ``DISABLED``: nothing resets by itself; the caller resets finished envs with
  ``reset(options={"reset_mask": mask})`` before stepping them again (stepping a finished env is
  an error).

An asyncio agent loop that steps each env as soon as its completion is ready::

    venv = make_vec("servicegym/Delivery-v0", 8, mode="thread")

    async def agent(i, obs):
        while True:
            action = await llm(obs)                     # your model call
            (obs,), (reward,), (term,), (trunc,), info = await venv.astep_some([i], [action])
            if term or trunc:
                return reward

    async def main():
        obs, info = await venv.areset(seed=0)
        return await asyncio.gather(*(agent(i, o) for i, o in enumerate(obs)))
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import Env
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from servicegym.envs.environments.registration import ENV_IDS

__all__ = ["AutoresetMode", "ThreadVectorEnv", "make_vec", "resolve_env_id"]

MODES = ("sync", "async", "thread")


def resolve_env_id(env_id: str) -> str:
    """``"Delivery-v0"`` -> ``"servicegym/Delivery-v0"``; full ids and other registered ids pass through."""
    if env_id in ENV_IDS or env_id in gym.registry:
        return env_id
    full = f"servicegym/{env_id}"
    if full in ENV_IDS:
        return full
    raise ValueError(f"unknown env {env_id!r}; known: {', '.join(ENV_IDS)}")


def make_vec(
    env_id: str,
    num_envs: int = 1,
    mode: str = "async",
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    *,
    vector_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[Callable[[Env], gym.Wrapper]] | None = None,
    max_workers: int | None = None,
    **env_kwargs: Any,
) -> VectorEnv:
    """A vector env of ``num_envs`` copies of ``env_id`` (``env_kwargs`` go to each env).

    ``mode``: ``"async"`` (default: one subprocess per env, ``shared_memory=False`` because
    gymnasium's shared-memory path returns stale text observations), ``"sync"`` (one process, a
    for loop) or ``"thread"`` (``ThreadVectorEnv``; ``max_workers`` threads, default ``num_envs``).
    ``autoreset_mode``: see the module docstring. ``vector_kwargs`` go to the gymnasium vector
    class (async/sync); ``wrappers`` wrap each sub-env.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if num_envs < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    env_id = resolve_env_id(env_id)
    autoreset_mode = AutoresetMode(autoreset_mode)
    wrappers = list(wrappers or [])
    if mode == "thread":
        if vector_kwargs:
            raise ValueError("vector_kwargs apply to the sync and async modes; the thread mode takes max_workers")

        def env_fn() -> Env:
            env = gym.make(env_id, **env_kwargs)
            for wrapper in wrappers:
                env = wrapper(env)
            return env

        return ThreadVectorEnv([env_fn] * num_envs, max_workers=max_workers, autoreset_mode=autoreset_mode)
    kwargs = dict(vector_kwargs or {})
    if mode == "async":
        kwargs.setdefault("shared_memory", False)
    kwargs["autoreset_mode"] = autoreset_mode
    return gym.make_vec(env_id, num_envs, vectorization_mode=mode, vector_kwargs=kwargs, wrappers=wrappers,
                        **env_kwargs)


class _InfoBatcher:
    """Gymnasium's info batching (``VectorEnv._add_info``) for a batch of any size."""

    _add_info = VectorEnv._add_info

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs


class ThreadVectorEnv(VectorEnv):
    """A vector env whose sub-envs step in a thread pool; some of them at a time if you like.

    ``step(actions)`` steps every env, like ``SyncVectorEnv`` and with the same results.
    ``step_some(indices, actions)`` steps only the envs at ``indices`` (one action each, in the
    same order) and returns ``(obs, rewards, terminations, truncations, infos)`` *for those envs
    only*: a batch of ``len(indices)`` laid out as ``step`` lays out ``num_envs`` (position ``j``
    is env ``indices[j]``). The other envs are left exactly as they were. Autoreset applies per
    env: under ``NEXT_STEP`` the first ``step_some`` that includes a finished env resets it.
    ``reset(seed=..., options=...)`` resets all envs, or those of ``options["reset_mask"]``.

    Async API (for an asyncio agent loop): ``await astep(actions)``, ``await astep_some(indices,
    actions)``, ``await areset(seed=..., options=...)`` run the same work in the pool without
    blocking the event loop. Coroutines may step disjoint sets of envs concurrently; stepping an
    env that another call is stepping raises ``RuntimeError``.

    Args:
        env_fns: zero-argument callables that build the sub-envs (called in the constructor).
        max_workers: threads in the pool (default: the number of envs).
        autoreset_mode: ``NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED`` (see ``servicegym.envs.running.vector``).
        copy: return copies of the batched observations (as ``SyncVectorEnv``).
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], Env]],
        max_workers: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
    ) -> None:
        super().__init__()
        if not env_fns:
            raise ValueError("ThreadVectorEnv needs at least one env")
        self.env_fns = env_fns
        self.copy = copy
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.envs = [fn() for fn in env_fns]
        self.num_envs = len(self.envs)
        self.metadata = dict(self.envs[0].metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = self.envs[0].render_mode
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        for env in self.envs:
            if env.observation_space != self.single_observation_space or env.action_space != self.single_action_space:
                raise RuntimeError("ThreadVectorEnv needs sub-envs with identical observation and action spaces")
        self._pool = ThreadPoolExecutor(max_workers=max_workers or self.num_envs, thread_name_prefix="servicegym-env")
        self._env_obs: list[Any] = [None] * self.num_envs
        self._observations = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        self._rewards = np.zeros((self.num_envs,), dtype=np.float64)
        self._terminations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._truncations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._autoreset_envs = np.zeros((self.num_envs,), dtype=np.bool_)
        self._busy: set[int] = set()
        self._lock = threading.Lock()

    # ----- per-env work (runs in the pool) ------------------------------------------------
    def _reset_one(self, i: int, seed: int | None, options: dict[str, Any] | None) -> dict[str, Any]:
        self._env_obs[i], info = self.envs[i].reset(seed=seed, options=options)
        self._rewards[i] = 0.0
        self._terminations[i] = False
        self._truncations[i] = False
        self._autoreset_envs[i] = False
        return info

    def _step_one(self, i: int, action: Any) -> list[dict[str, Any]]:
        """Steps env ``i`` under the autoreset mode; returns the info dicts to batch, in order."""
        env = self.envs[i]
        infos: list[dict[str, Any]] = []
        mode = self.autoreset_mode
        if mode == AutoresetMode.NEXT_STEP and self._autoreset_envs[i]:
            self._env_obs[i], info = env.reset()
            self._rewards[i] = 0.0
            self._terminations[i] = False
            self._truncations[i] = False
        else:
            if mode == AutoresetMode.DISABLED and self._autoreset_envs[i]:
                raise RuntimeError(f"env {i} finished its episode; with autoreset DISABLED reset it first "
                                   "(reset(options={'reset_mask': mask}))")
            obs, reward, terminated, truncated, info = env.step(action)
            self._env_obs[i] = obs
            self._rewards[i], self._terminations[i], self._truncations[i] = reward, terminated, truncated
            if mode == AutoresetMode.SAME_STEP and (terminated or truncated):
                infos.append({"final_obs": obs, "final_info": info})
                self._env_obs[i], info = env.reset()
        infos.append(info)
        self._autoreset_envs[i] = self._terminations[i] or self._truncations[i]
        return infos

    # ----- bookkeeping ----------------------------------------------------------------------
    def _claim(self, indices: list[int]) -> None:
        with self._lock:
            clash = self._busy.intersection(indices)
            if clash:
                raise RuntimeError(f"envs {sorted(clash)} are being stepped by another call")
            self._busy.update(indices)

    def _release(self, indices: list[int]) -> None:
        with self._lock:
            self._busy.difference_update(indices)

    def _check_indices(self, indices: Sequence[int], actions: Sequence[Any]) -> tuple[list[int], list[Any]]:
        idx = [int(i) for i in indices]
        acts = list(actions)
        if len(idx) != len(acts):
            raise ValueError(f"got {len(idx)} indices but {len(acts)} actions")
        if len(set(idx)) != len(idx):
            raise ValueError(f"indices must be distinct, got {idx}")
        bad = [i for i in idx if not 0 <= i < self.num_envs]
        if bad:
            raise IndexError(f"env indices {bad} out of range for {self.num_envs} envs")
        return idx, acts

    def _batch(self, indices: list[int], infos_per_env: list[list[dict[str, Any]]], full: bool):
        batcher: Any = self if full else _InfoBatcher(len(indices))
        infos: dict[str, Any] = {}
        for pos, (i, env_infos) in enumerate(zip(indices, infos_per_env)):
            for info in env_infos:
                infos = batcher._add_info(infos, info, i if full else pos)
        if full:
            self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
            obs = deepcopy(self._observations) if self.copy else self._observations
            return obs, np.copy(self._rewards), np.copy(self._terminations), np.copy(self._truncations), infos
        obs = concatenate(self.single_observation_space, [self._env_obs[i] for i in indices],
                          create_empty_array(self.single_observation_space, n=len(indices), fn=np.zeros))
        return obs, self._rewards[indices].copy(), self._terminations[indices].copy(), self._truncations[indices].copy(), infos

    def _reset_plan(self, seed, options) -> tuple[list[int], list[int | None], dict[str, Any] | None]:
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"If seeds are passed as a list the length must match num_envs={self.num_envs} "
                                 f"but got length={len(seeds)}.")
        options = dict(options) if options is not None else None
        if options is not None and "reset_mask" in options:
            mask = options.pop("reset_mask")
            if not isinstance(mask, np.ndarray) or mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise TypeError(f"options['reset_mask'] must be a bool numpy array of shape ({self.num_envs},)")
            if not mask.any():
                raise ValueError("options['reset_mask'] must contain at least one True value")
            indices = [i for i in range(self.num_envs) if mask[i]]
        else:
            indices = list(range(self.num_envs))
        return indices, seeds, options

    # ----- the VectorEnv API ----------------------------------------------------------------
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        indices, seeds, options = self._reset_plan(seed, options)
        self._claim(indices)
        try:
            futures = [self._pool.submit(self._reset_one, i, seeds[i], options) for i in indices]
            infos = [[f.result()] for f in futures]
        finally:
            self._release(indices)
        obs, _, _, _, info = self._batch(indices, infos, full=True)
        return obs, info

    def step(self, actions: Sequence[Any]):
        indices, acts = self._check_indices(range(self.num_envs), actions)
        return self._run_step(indices, acts, full=True)

    def step_some(self, indices: Sequence[int], actions: Sequence[Any]):
        """Steps only the envs at ``indices``; returns their batch (position j = env indices[j])."""
        idx, acts = self._check_indices(indices, actions)
        return self._run_step(idx, acts, full=False)

    def _run_step(self, indices: list[int], actions: list[Any], full: bool):
        self._claim(indices)
        try:
            futures = [self._pool.submit(self._step_one, i, a) for i, a in zip(indices, actions)]
            infos = [f.result() for f in futures]
        finally:
            self._release(indices)
        return self._batch(indices, infos, full)

    # ----- asyncio ----------------------------------------------------------------------------
    async def _arun_step(self, indices: list[int], actions: list[Any], full: bool):
        loop = asyncio.get_running_loop()
        self._claim(indices)
        try:
            infos = await asyncio.gather(*(loop.run_in_executor(self._pool, self._step_one, i, a)
                                           for i, a in zip(indices, actions)))
        finally:
            self._release(indices)
        return self._batch(indices, list(infos), full)

    async def astep(self, actions: Sequence[Any]):
        """``step`` for asyncio: awaits every env's step in the pool."""
        indices, acts = self._check_indices(range(self.num_envs), actions)
        return await self._arun_step(indices, acts, full=True)

    async def astep_some(self, indices: Sequence[int], actions: Sequence[Any]):
        """``step_some`` for asyncio."""
        idx, acts = self._check_indices(indices, actions)
        return await self._arun_step(idx, acts, full=False)

    async def areset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """``reset`` for asyncio."""
        indices, seeds, options = self._reset_plan(seed, options)
        loop = asyncio.get_running_loop()
        self._claim(indices)
        try:
            infos = await asyncio.gather(*(loop.run_in_executor(self._pool, self._reset_one, i, seeds[i], options)
                                           for i in indices))
        finally:
            self._release(indices)
        obs, _, _, _, info = self._batch(indices, [[i] for i in infos], full=True)
        return obs, info

    # ----- the rest of the VectorEnv surface ------------------------------------------------
    def render(self) -> tuple[Any, ...]:
        return tuple(env.render() for env in self.envs)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        results = []
        for env in self.envs:
            fn = env.get_wrapper_attr(name)
            results.append(fn(*args, **kwargs) if callable(fn) else fn)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"values must have length num_envs={self.num_envs}, got {len(values)}")
        for env, value in zip(self.envs, values):
            env.set_wrapper_attr(name, value)

    def close_extras(self, **kwargs: Any) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for env in self.envs:
            env.close()

    def __repr__(self) -> str:
        return f"ThreadVectorEnv(num_envs={self.num_envs}, autoreset_mode={self.autoreset_mode.name})"
