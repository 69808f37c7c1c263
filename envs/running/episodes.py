"""Running one episode: the worker every rollout backend uses, and what it hands back.

``EpisodeWorker`` owns one env and runs episodes on it as one generator (``_episode``) that two
drivers step: ``run`` (threads, processes, Ray) and ``arun`` (an asyncio loop). Every backend of
``servicegym.envs.running.rollouts.collect`` and ``ray_backend`` goes through it, so they all
write the same records. ``PolicyMaker`` builds each episode's policy from a name, a factory, a
callable or an instance; ``episode_seed`` derives an episode's seed from the run's.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import inspect
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

import servicegym.envs.environments.registration  # noqa: F401  (the ids, in a fresh worker process)
from servicegym.envs.running.policies import episode_details, make_policy
from servicegym.world_state.text import scrub

__all__ = ["BATCH_S", "FAILED_REASONS", "MAX_BATCH", "BatchSizer", "MAX_WORKER_LOSSES", "RECORD_FIELDS", "failed", "run_config", "EpisodeResult", "EpisodeWorker",
           "Job", "PolicyMaker", "WorkerLost", "episode_seed", "next_run", "thread_per_episode"]

RECORD_FIELDS = (
    "env_id", "env_version", "servicegym_version", "domain", "task_id", "trial", "seed", "policy", "config",
    "messages", "tools", "rewards", "return", "success", "score", "steps", "termination_reason",
    "tool_errors", "details", "error", "elapsed_s",
)
"""Fields of every record. ``env_version`` is the ``-vN`` of the id, ``servicegym_version`` the
installed package's version; ``config`` a digest of the run's settings (env and policy keyword
arguments: ``run_config``), so one file never mixes runs made with other settings; ``error`` is ``None`` or ``"ExceptionType: message"`` when the policy
(or the env) raised, in which case the episode is recorded as it stood, unsuccessful, with
``termination_reason`` ``"policy_error"`` (or ``"env_error"``, e.g. a reset that failed). ``details``
is the env's ``episode_details()`` at the end (Workspace: each session's intents with their final
states; ``{}`` elsewhere or when the episode did not end). ``elapsed_s`` is the only field that differs between two runs.
A record of an env made with experiment options (Payments' ``call_cap``, ``disclosure``, ``gold_documents``) also has
``env_options``, those that differ from their defaults (``env.unwrapped.env_options``); ``servicegym report`` and
``compare`` label its policy with them (``oracle [call_cap=1.2]``), so such runs are never pooled with others."""
TIMING_FIELDS = ("elapsed_s",)
FAILED_REASONS = ("policy_error", "env_error", "user_error")
"""Termination reasons of an episode that *failed*: it ended for a reason other than the agent's
own behaviour (its model endpoint, the env, or the user simulator's model broke down). A failed
episode is recorded, with its reason, and run again on resume; ``servicegym evaluate`` exits
non-zero when any episode of its run failed."""


def failed(record: dict[str, Any]) -> bool:
    """Whether a record is of a failed episode (see ``FAILED_REASONS``)."""
    return record.get("error") is not None or record.get("termination_reason") in FAILED_REASONS
TOOLS_REF = "$ref"
"""With ``collect(..., inline_tools=False)`` a record's ``tools`` is ``{"$ref": digest}`` and the
list itself is a line ``{"digest": ..., "tools": [...]}`` of the sidecar ``tools_path(out)``,
written once per distinct list before any record that refers to it; ``read_records`` puts the
lists back (``resolve_tools=False`` leaves the references)."""


def run_config(env_kwargs: dict[str, Any] | None, policy_kwargs: dict[str, Any] | None) -> str:
    """A short digest of a run's settings: the env's and the policy's keyword arguments."""
    text = json.dumps({"env": env_kwargs or {}, "policy": policy_kwargs or {}}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def episode_seed(seed: int, task_id: str, trial: int) -> int:
    """The seed of episode (task, trial) of a run with base ``seed``: a hash, in [0, 2**31)."""
    digest = hashlib.sha256(f"{seed}\x1f{task_id}\x1f{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


@functools.cache
def _package_version() -> str:
    try:
        return importlib.metadata.version("servicegym")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _env_version(env_id: str) -> str:
    m = re.search(r"-(v\d+)$", env_id)
    return m.group(1) if m else ""


@dataclass(frozen=True)
class Job:
    """One episode to run: task, trial and its derived seed."""

    task_id: str
    trial: int
    seed: int


@dataclass
class EpisodeResult:
    """What a worker hands back: the record's JSON line and what the progress bar needs."""

    task_id: str
    trial: int
    success: bool
    error: str | None
    line: str
    tools: tuple[str, str] | None = None  # (digest, JSON) of a tool list the record refers to, first time only
    failed: bool = False  # ``failed(record)``: ended for a reason other than the agent's behaviour


BATCH_S = 0.05
"""Seconds of episodes a process or Ray worker is sent at once, once the first results have shown
how long an episode takes there: short episodes go in batches (one round trip each, not one per
episode), episodes longer than this one at a time."""
MAX_BATCH = 64
_RUNS = itertools.count(1)


def next_run() -> int:
    """A fresh id for one run served by reused workers (``EpisodeWorker.run_batch``'s ``run``)."""
    return next(_RUNS)


class BatchSizer:
    """How many episodes to send a worker at once: 1 until a batch has come back, then about
    ``BATCH_S`` seconds of episodes (at most ``MAX_BATCH``), never more than an even share of what
    is left (``left / (2 x workers)``: the last batches finish together), and 1 in ``careful`` mode
    (after a worker died: a death is then blamed on the one episode it ran)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.per_episode: float | None = None
        self.careful = False

    def observe(self, episodes: int, seconds: float) -> None:
        if episodes:
            each = seconds / episodes
            self.per_episode = each if self.per_episode is None else 0.5 * (self.per_episode + each)

    def size(self, left: int) -> int:
        if self.careful or self.per_episode is None:
            return 1
        n = int(BATCH_S / max(self.per_episode, 1e-6))
        return max(1, min(MAX_BATCH, n, -(-left // (2 * self.workers))))

    @property
    def depth(self) -> int:
        """Batches in flight per worker: 2 (the next one waits while one runs), 1 when careful."""
        return 1 if self.careful else 2


class _CallablePolicy:
    """Adapts ``fn(obs, info) -> action`` to the policy protocol; ``info`` is the latest info."""

    def __init__(self, fn: Callable[[str, dict[str, Any]], str]) -> None:
        self.fn = fn
        self.info: dict[str, Any] = {}

    def reset(self, env: gym.Env, obs: str, info: dict[str, Any]) -> None:
        self.info = info

    def act(self, obs: str) -> str:
        return self.fn(obs, self.info)


def _required_positional(fn: Callable) -> int | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return sum(1 for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)


def _has_aact(policy: Any) -> bool:
    """Whether a policy (or policy class) has an ``aact`` coroutine the async backends await."""
    return inspect.iscoroutinefunction(getattr(policy, "aact", None))


def _accepts_seed(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


@dataclass
class PolicyMaker:
    """Builds the policy of one episode from what ``collect`` was given (picklable when that is).

    ``kind`` is ``"name"`` (``make_policy(name, seed=episode seed, **kwargs)``), ``"factory"`` (a
    zero-argument callable returning an object with ``reset``/``act``; given ``seed=`` when it
    accepts one), ``"callable"`` (``fn(obs, info) -> action``) or ``"instance"`` (an object with
    ``reset``/``act``, reused for every episode: one worker only).
    """

    kind: str
    target: Any
    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    asynchronous: bool = False
    """Whether the policies made have an ``aact`` coroutine (the ``"auto"`` backend is then
    ``"async"``): known for names (from the policy built to check the name) and classes, not
    other factories."""

    @classmethod
    def from_policy(cls, policy: Any, name: str | None = None, kwargs: dict[str, Any] | None = None) -> PolicyMaker:
        kwargs = dict(kwargs or {})
        if isinstance(policy, str):
            probe = make_policy(policy, seed=0, **kwargs)  # fails now, with make_policy's message, on a bad name
            return cls("name", policy, name or policy, kwargs, _has_aact(probe))
        if kwargs:
            raise ValueError("policy_kwargs apply to policy names only")
        if hasattr(policy, "reset") and hasattr(policy, "act") and not isinstance(policy, type):
            return cls("instance", policy, name or getattr(policy, "name", None) or type(policy).__name__)
        if not callable(policy):
            raise TypeError("policy must be a name, a policy factory, a callable fn(obs, info) or a policy object")
        label = name or getattr(policy, "name", None) or getattr(policy, "__qualname__", None) or repr(policy)
        required = _required_positional(policy)
        if required == 0:
            return cls("factory", policy, str(label), asynchronous=isinstance(policy, type) and _has_aact(policy))
        if required == 2:
            return cls("callable", policy, str(label))
        raise TypeError(f"a callable policy takes (obs, info) or nothing (a factory); {label} takes {required} arguments")

    def make(self, seed: int) -> Any:
        if self.kind == "name":
            return make_policy(self.target, seed=seed, **self.kwargs)
        if self.kind == "factory":
            return self.target(seed=seed) if _accepts_seed(self.target) else self.target()
        if self.kind == "callable":
            return _CallablePolicy(self.target)
        return self.target


@dataclass(frozen=True)
class _Act:
    """One policy decision, as ``EpisodeWorker._episode`` asks for it: ``act(obs)``, or awaited
    ``aact(obs)`` where the policy has that coroutine."""

    act: Callable[[str], str]
    aact: Callable[[str], Any] | None
    obs: str

    def __call__(self) -> str:
        return self.act(self.obs)


class EpisodeWorker:
    """Owns one env and runs episodes on it; every backend runs episodes through this class
    (the Ray backend hosts one per actor), so they all produce the same records."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None, maker: PolicyMaker,
                 inline_tools: bool = True) -> None:
        self.env_id = env_id
        self.inline_tools = inline_tools
        self._tools_sent: set[str] = set()  # digests of the tool lists this worker has handed over
        self._run: Any = None  # the collection the batches come from (``run_batch``)
        self._warm = False
        self.env = gym.make(env_id, **(env_kwargs or {}))
        self.maker = maker
        self._static = {"env_id": env_id, "env_version": _env_version(env_id), "servicegym_version": _package_version()}
        self._config = run_config(env_kwargs, maker.kwargs)
        base = self.env.unwrapped
        # the env's experiment options that differ from their defaults (Payments' call_cap, disclosure,
        # gold_documents): a record carries them as ``env_options`` (only when there are any), and reports
        # label and group runs by them
        self._options = dict(getattr(base, "env_options", None) or {})
        # an env whose user or judge calls a model blocks in step: the async backend steps it in a thread
        self._blocking_env = getattr(base, "user", "") == "llm" or getattr(base, "judge", "") == "llm"

    def run(self, job: Job) -> EpisodeResult:
        """Runs one episode, calling the policy's ``act`` (threads, processes, Ray)."""
        episode = self._episode(job)
        try:
            request = next(episode)
            while True:
                try:
                    value = request[1]()
                except Exception as err:  # recorded by the episode, which then ends
                    request = episode.throw(err)
                    continue
                request = episode.send(value)
        except StopIteration as stop:
            return stop.value

    def run_batch(self, jobs: Sequence[Job], run: Any = None) -> tuple[list[EpisodeResult], float]:
        """Runs ``jobs`` one after another and returns their results with the seconds they took: the
        process and Ray backends send batches, one round trip for many short episodes. ``run`` names
        the collection the batch belongs to: a worker that a later ``collect`` reuses hands its tool
        lists over again (``inline_tools=False``: that run's sidecar may not hold them)."""
        if run != self._run:
            self._run = run
            self._tools_sent.clear()
        t = time.perf_counter()
        results = [self.run(job) for job in jobs]
        return results, time.perf_counter() - t

    def warm(self) -> None:
        """One reset, so that what the env loads lazily (its task suites) is loaded before the first
        episode is timed; skipped for an env with a model behind its user or judge (no call to it
        before a run). The episodes reset with their own seed and task, so this changes no record."""
        if not self._warm and not self._blocking_env:
            self._warm = True
            with contextlib.suppress(Exception):  # a broken env is reported by the episodes themselves
                self.env.reset(seed=0)

    def ready(self) -> int:
        """This worker's process id, once its env is built and warm (a Ray actor's readiness check)."""
        self.warm()
        return os.getpid()

    async def arun(self, job: Job) -> EpisodeResult:
        """Runs one episode on the running event loop (the ``"async"`` backend): a policy with an
        ``aact`` coroutine (``LLMAgentPolicy``) is awaited, one without runs its ``act`` in a worker
        thread; the env steps on the loop, or in a worker thread when its user or judge is an LLM
        (their calls block)."""
        import asyncio

        episode = self._episode(job)
        try:
            request = next(episode)
            while True:
                kind, call = request
                try:
                    if isinstance(call, _Act) and call.aact is not None:
                        value = await call.aact(call.obs)
                    elif kind == "act" or self._blocking_env:
                        value = await asyncio.to_thread(call)
                    else:
                        value = call()
                except Exception as err:  # recorded by the episode, which then ends
                    request = episode.throw(err)
                    continue
                request = episode.send(value)
        except StopIteration as stop:
            return stop.value

    def _episode(self, job: Job):
        """The episode as a generator: it yields ``(kind, call)`` for every call to the policy
        (``"act"``, ``call`` an ``_Act``) or the env (``"env"``, a ``partial``), is sent the
        call's value, and returns the ``EpisodeResult``. ``run`` and ``arun`` drive it: one episode
        logic, two ways to wait."""
        t0 = time.perf_counter()
        env = self.env
        rewards: list[float] = []
        info: dict[str, Any] = {}
        tools: list[dict[str, Any]] = []
        domain = getattr(env.unwrapped, "domain", "")
        error = None
        steps, done, started = 0, False, False
        phase = "policy"  # whose call raised, if one does: the policy's or the env's
        try:
            policy = self.maker.make(job.seed)
            aact = policy.aact if _has_aact(policy) else None
            phase = "env"
            obs, info = yield ("env", functools.partial(env.reset, seed=job.seed, options={"task_id": job.task_id}))
            started = True
            tools = info.get("tools", [])
            domain = info.get("domain", domain)
            phase = "policy"
            policy.reset(env, obs, info)
            while not done:
                phase = "policy"
                action = yield ("act", _Act(policy.act, aact, obs))
                phase = "env"
                obs, reward, terminated, truncated, info = yield ("env", functools.partial(env.step, action))
                if isinstance(policy, _CallablePolicy):
                    policy.info = info
                rewards.append(float(reward))
                steps += 1
                done = bool(terminated or truncated)
        except Exception as err:  # the episode is recorded with the error; the run goes on
            error = f"{type(err).__name__}: {err}"
        success = bool(info.get("success", False)) if done and error is None else False
        record = {
            **self._static,
            "domain": domain,
            "task_id": job.task_id,
            "trial": job.trial,
            "seed": job.seed,
            "policy": self.maker.name,
            "config": self._config,
            **({"env_options": self._options} if self._options else {}),
            "messages": list(env.unwrapped.messages) if started else [],
            "tools": tools,
            "rewards": rewards,
            "return": float(sum(rewards)),
            "success": success,
            "score": info.get("score", {}) if done else {},
            "steps": steps,
            "termination_reason": info.get("termination_reason", "") if error is None else f"{phase}_error",
            "tool_errors": int(info.get("tool_errors", 0)),
            "details": episode_details(env) if done else {},
            "error": error,
            "elapsed_s": round(time.perf_counter() - t0, 6),
        }
        handed = None
        if not self.inline_tools:
            record["tools"], handed = self._tools_ref(tools)
        # scrubbed: an exception message or a policy's text may hold a lone surrogate, which no
        # UTF-8 writer accepts (actions are scrubbed at the env's edge already)
        line = scrub(json.dumps(record, ensure_ascii=False, default=str))
        return EpisodeResult(job.task_id, job.trial, success, error, line, handed, failed(record))

    def _tools_ref(self, tools: list[dict[str, Any]]) -> tuple[dict[str, str], tuple[str, str] | None]:
        """``{"$ref": digest}`` for a record, and ``(digest, JSON)`` the first time this worker
        hands that tool list over (the writer stores each list once, whichever worker sent it)."""
        text = json.dumps(tools, ensure_ascii=False, default=str)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        if digest in self._tools_sent:
            return {TOOLS_REF: digest}, None
        self._tools_sent.add(digest)
        return {TOOLS_REF: digest}, (digest, text)

    def close(self) -> None:
        self.env.close()


MAX_WORKER_LOSSES = 3
"""How many times one episode may lose the worker running it (a process-pool worker killed, a Ray
actor killed or crashed) before the run stops with ``WorkerLost``; each time the episode runs
again from its start on a fresh worker (its seed makes the rerun the same episode)."""


class WorkerLost(RuntimeError):
    """An episode lost its worker ``MAX_WORKER_LOSSES`` times (see there): likely the episode itself
    kills it (memory, a crash in native code). The file keeps every whole record; a rerun resumes."""

    def __init__(self, job: Job, losses: int, last: BaseException) -> None:
        super().__init__(f"task {job.task_id!r} trial {job.trial} lost its worker {losses} times (the last: "
                         f"{type(last).__name__}: {str(last)[:300]}); the records finished so far are kept, "
                         "and a rerun resumes")
        self.job = job


def thread_per_episode(episodes: int) -> None:
    """Give the running loop a thread for each of its ``episodes``: what ``EpisodeWorker.arun``
    runs in threads (a policy without ``aact``, an env whose LLM user or judge blocks) would
    otherwise queue for the default executor's few. The loop shuts it down when it closes."""
    import asyncio

    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=episodes, thread_name_prefix="servicegym-async"))

