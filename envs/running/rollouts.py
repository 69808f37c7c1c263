"""Rollout collection: run a policy over tasks x trials with bounded concurrency into a JSONL file.

    from servicegym.envs.running.rollouts import collect
    summary = collect("servicegym/Delivery-v0", "oracle", out="runs/oracle", trials=4, concurrency=8)

One line of the JSONL file is one finished episode (see ``RECORD_FIELDS``): the OpenAI-format
conversation, the tool schemas, the reward of every step, the final ``info["score"]`` and where
the episode came from (env id and version, task id, trial, seed, policy).

Determinism: the seed of episode (task, trial) is derived from ``(seed, task_id, trial)`` alone
(``episode_seed``), the env is reset with it and a named or seed-taking policy is built with it,
so the transcript of an episode does not depend on the backend, the concurrency or the order in
which episodes run.

Resume: with ``resume=True`` (default) an existing file is read first, a truncated last line (a
kill in the middle of a write) is dropped and the file rewritten cleanly, the (task, trial) pairs
already present are skipped and the rest appended. Failed episodes (``episodes.failed``: the
policy's endpoint, the env or the user model broke down, not the agent) are recorded like any
other, with ``error`` and ``termination_reason``, and run again on resume: their records are
removed and replaced, so a file always ends with one record per (task, trial).

A write that fails (a full disk, a file-size limit) stops the run with ``RolloutWriteError``
naming the file and how many records it holds; the file keeps only whole records, no temporary
file is left, and a rerun after space is freed resumes. Records are written by one writer (the calling
thread), one ``write`` + ``flush`` each, so a killed run loses at most the episodes in flight and
never duplicates a finished one.

Backends:

- ``"async"``: ``concurrency`` episodes on one asyncio event loop, each with its own env; a
  policy's ``aact`` coroutine (``LLMAgentPolicy``: ``LLMClient.achat``) is awaited, so episodes
  waiting on a model cost no thread each. The choice for LLM policies; a policy without ``aact``
  runs its ``act`` in a worker thread.
- ``"thread"``: a pool of ``concurrency`` threads, each with its own env (blocking policies,
  ``act`` only; policies that release the GIL).
- ``"process"``: ``concurrency`` worker processes (``ProcessWorkers``), each building its env once:
  the choice for CPU-bound policies; the policy must be picklable, i.e. a name, a module-level
  function or class. Workers are sent batches of ``(task id, trial, seed)`` and send back finished
  records in batches (``BatchSizer``: about ``BATCH_S`` seconds of episodes each, so a short episode
  costs no round trip of its own), with a second batch queued behind the running one. A collect
  starts its workers and stops them at the end; ``workers=ProcessWorkers(...)`` are started once
  and reused by every collect given them (no process start, import or env construction per run).
  A worker that dies (killed, out of memory) breaks the pool: a fresh pool runs the unfinished
  episodes again, one at a time (an episode that loses its worker ``MAX_WORKER_LOSSES`` times stops
  the run with ``WorkerLost``); a worker whose collector dies (SIGKILL) exits too, instead of
  waiting on a pipe nobody feeds.
- ``"ray"``: ``servicegym.envs.running.ray_backend``, Ray actors each hosting an env, locally or on a
  cluster, sent batches like process workers (``workers=RayWorkers(...)`` reuses them); an actor
  that dies (``ray.kill``, a crashed node) is replaced and its episodes run again.

Which records a run writes never depends on the backend, the worker count or the batches: each
episode resets its env with its own seed and task.
- ``"auto"`` (the default): ``"async"`` for a policy with ``aact`` at ``concurrency > 1``,
  else ``"thread"``.

Layout: this module holds the collector (``collect``, ``comparable``, ``CollectSummary``,
``CollectFailed``, the run's file lock) and re-exports the names callers import from it;
``rollout_records`` holds the rollouts file itself (its path and tool-list sidecar, atomic
rewrites, reading with a cut last line dropped, ``RolloutWriteError``); ``rollout_backends``
holds the ``"thread"``, ``"async"`` and ``"process"`` backends (``ProcessWorkers`` and the
functions its worker processes run).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from servicegym.envs.running.episodes import (
    MAX_WORKER_LOSSES,
    RECORD_FIELDS,
    TIMING_FIELDS,
    TOOLS_REF,  # noqa: F401  (re-exported: callers import it from here)
    EpisodeResult,
    EpisodeWorker,
    Job,
    PolicyMaker,
    WorkerLost,
    episode_seed,
    failed,
    run_config,
)
from servicegym.envs.running.rollout_backends import ProcessWorkers, _run_async, _run_threads
from servicegym.envs.running.rollout_records import (
    RolloutWriteError,
    _out_path,
    _read_jsonl,
    read_records,
    tools_path,
)
from servicegym.envs.running.vector import resolve_env_id

if TYPE_CHECKING:
    from servicegym.envs.running.ray_backend import RayWorkers

__all__ = [
    "MAX_WORKER_LOSSES",
    "RECORD_FIELDS",
    "RolloutWriteError",
    "WorkerLost",
    "failed",
    "CollectSummary",
    "EpisodeWorker",
    "Job",
    "PolicyMaker",
    "ProcessWorkers",
    "collect",
    "episode_seed",
    "read_records",
    "tools_path",
]

BACKENDS = ("auto", "thread", "async", "process", "ray")
@dataclass
class CollectSummary:
    """What ``collect`` did: ``episodes`` = tasks x trials of this run; ``skipped`` were already in
    the file (resume); ``collected`` were run now; ``successes``, ``errors`` and ``success_rate``
    count every episode of the run, resumed or new; ``failed`` counts the episodes that failed for a
reason other than the agent's behaviour (``episodes.failed``; a resume runs them again);
``episodes_per_s`` = collected / elapsed."""

    path: str
    env_id: str
    policy: str
    backend: str
    concurrency: int
    tasks: int
    trials: int
    episodes: int
    skipped: int
    collected: int
    successes: int
    errors: int
    failed: int
    success_rate: float
    elapsed_s: float
    episodes_per_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class CollectFailed(RuntimeError):
    """Every episode of a ``collect`` run failed for a reason other than the agent's behaviour (an
    endpoint or policy error, a crashed worker): usually a wrong base URL, model name or key rather
    than a bad agent. The records are written (a rerun resumes and runs them again); ``summary`` is
    the ``CollectSummary`` that ``collect`` would have returned."""

    def __init__(self, message: str, summary: CollectSummary) -> None:
        super().__init__(message)
        self.summary = summary


def _resolve_task_ids(env: gym.Env, task_ids: Sequence[str] | None, split: str, limit: int | None) -> list[str]:
    if task_ids is None:
        ids = list(env.unwrapped.task_ids(split))
    else:
        ids = [str(t) for t in task_ids]
        unknown = []
        for tid in ids:
            try:
                env.unwrapped.source.get(tid)
            except (KeyError, ValueError):
                unknown.append(tid)
        if unknown:
            raise ValueError(f"unknown task ids for {env.spec.id if env.spec else 'this env'}: {unknown[:5]}")
        if len(set(ids)) != len(ids):
            raise ValueError("task_ids must be distinct")
    if limit:
        ids = ids[:limit]
    if not ids:
        raise ValueError(f"no tasks to run (split {split!r})")
    return ids


@contextlib.contextmanager
def _exclusive(path: Path):
    """Holds an exclusive lock on ``PATH.lock`` while collecting, so a second ``collect`` into the
    same file fails at once instead of interleaving records; the lock file is removed when the
    collection ends (none is left beside a finished file).

    Removal is safe against a racing ``collect``: the holder unlinks the file before it unlocks,
    and whoever gets the lock checks that the path still names the file it locked, else opens the
    new one and tries again."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock
        yield
        return
    lock_path = path.with_name(path.name + ".lock")
    for _ in range(100):
        lock = open(lock_path, "a")  # noqa: SIM115  closed below, on every path
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise RuntimeError(f"another collect is writing {path}; wait for it or choose another out") from None
        try:
            current = os.stat(lock_path)
        except FileNotFoundError:
            current = None
        mine = os.fstat(lock.fileno())
        if current is None or (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
            lock.close()  # the previous holder removed it after we opened it: lock the new one
            continue
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(lock_path)
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
        return
    raise RuntimeError(f"could not lock {lock_path}: it keeps being replaced")


# ----- the collector ---------------------------------------------------------------------------

def collect(
    env_id: str,
    policy: Any,
    *,
    out: str | os.PathLike[str],
    task_ids: Sequence[str] | None = None,
    split: str = "train",
    trials: int = 1,
    concurrency: int = 1,
    backend: str = "auto",
    env_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    resume: bool = True,
    progress: bool = True,
    limit: int | None = None,
    policy_name: str | None = None,
    policy_kwargs: dict[str, Any] | None = None,
    ray_address: str | None = None,
    ray_init_kwargs: dict[str, Any] | None = None,
    ray_episodes_per_actor: int | None = None,
    inline_tools: bool = True,
    workers: ProcessWorkers | RayWorkers | None = None,
) -> CollectSummary:
    """Runs ``policy`` on every task (``task_ids``, or the ids of ``split``, ``train`` by default:
    trajectories for fine-tuning must not come from the frozen ``test`` suite unless asked for; the
    first ``limit``)
    ``trials`` times, ``concurrency`` episodes at a time on ``backend``, and appends one JSON line
    per episode to ``out`` (a ``.jsonl`` path, or a directory that gets ``rollouts.jsonl``).

    ``policy``: a name for ``servicegym.envs.running.policies.make_policy`` (``"oracle"``, ``"random"``, ``"llm"``;
    ``policy_kwargs`` go with it), a zero-argument factory returning an object with
    ``reset(env, obs, info)`` / ``act(obs)`` (given ``seed=`` if it takes one), a callable
    ``fn(obs, info) -> action``, or a policy object (reused as is; ``concurrency=1``, thread
    backend only). ``policy_name`` overrides the name written into the records.

    ``resume=True`` skips the (task, trial) pairs of this env and policy already in the file (a
    record there with another seed for the pair raises ``ValueError``: resume with the same
    ``seed``); ``resume=False`` starts the file afresh. ``ray_address`` / ``ray_init_kwargs`` /
    ``ray_episodes_per_actor``: see ``servicegym.envs.running.ray_backend``. ``inline_tools=False`` stores each
    distinct tool list once, in the sidecar ``tools_path(out)``, and the records refer to it (see
    ``TOOLS_REF``; the tool schemas are most of a record's bytes). Returns a ``CollectSummary``;
    raises ``CollectFailed`` (holding it) when every episode of the run failed for a reason other
    than the agent's behaviour (an endpoint down, a wrong model name), so that never passes quietly.
    A process or Ray worker that dies mid-run is replaced and its episodes run again; one episode
    losing its worker ``MAX_WORKER_LOSSES`` times raises ``WorkerLost`` (the file keeps its whole
    records; a rerun resumes). ``workers``: a started ``ProcessWorkers`` or
    ``ray_backend.RayWorkers`` made with this collect's env id, policy and settings, reused as they
    are (``backend`` is theirs, ``concurrency`` their size; they stay up after the run).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if ray_episodes_per_actor is not None and ray_episodes_per_actor < 1:
        raise ValueError(f"ray_episodes_per_actor must be at least 1, got {ray_episodes_per_actor}")
    env_id = resolve_env_id(env_id)
    env_kwargs = dict(env_kwargs or {})
    maker = PolicyMaker.from_policy(policy, policy_name, policy_kwargs)
    if workers is not None:
        if backend not in ("auto", workers.backend):
            raise ValueError(f"workers= are {workers.backend} workers: backend must be {workers.backend!r} (or 'auto'), "
                             f"got {backend!r}")
        if not workers.matches(env_id, env_kwargs, maker, inline_tools):
            raise ValueError("these workers run another env, policy or settings than this collect asks for: make "
                             "them with the same env id, policy, env_kwargs, policy_kwargs and inline_tools")
        backend, concurrency = workers.backend, workers.size
    if backend == "auto":
        backend = "async" if maker.asynchronous and concurrency > 1 else "thread"
    if maker.kind == "instance" and (concurrency > 1 or backend != "thread"):
        raise ValueError("a policy object serves one episode at a time; for concurrency > 1 or another backend pass "
                         "a factory (e.g. the policy's class) or a name")
    if backend == "process" and workers is None:
        ProcessWorkers(env_id, maker, concurrency)  # a policy that cannot go to a process fails now, before the file
    probe = gym.make(env_id, **env_kwargs)
    try:
        ids = _resolve_task_ids(probe, task_ids, split, limit)
    finally:
        probe.close()

    path = _out_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path):
        side = tools_path(path)
        wanted = {(tid, trial): episode_seed(seed, tid, trial) for trial in range(trials) for tid in ids}
        if resume:
            def retry(rec: dict[str, Any]) -> bool:  # a failed episode of this run: run it again
                return (failed(rec) and rec.get("env_id") == env_id and rec.get("policy") == maker.name
                        and (rec.get("task_id"), rec.get("trial")) in wanted)

            existing = _read_jsonl(path, repair=True, drop=retry)
        else:
            existing = []
            path.write_bytes(b"")
            side.unlink(missing_ok=True)
        stored_tools = {t.get("digest") for t in _read_jsonl(side, repair=True)}
        done: dict[tuple[str, int], dict[str, Any]] = {}
        config = run_config(env_kwargs, maker.kwargs)
        for rec in existing:
            if rec.get("env_id") != env_id or rec.get("policy") != maker.name or rec.get("config", config) != config:
                other = f"env {rec.get('env_id')}, policy {rec.get('policy')!r}"
                same = rec.get("env_id") == env_id and rec.get("policy") == maker.name
                raise ValueError(f"{path} holds episodes of another run ({other}{', other settings' if same else ''}); "
                                 "write to another out, or pass resume=False (CLI --no-resume) to replace them")
            key = (rec.get("task_id"), rec.get("trial"))
            if key in wanted:
                if rec.get("seed") != wanted[key]:
                    raise ValueError(f"{path} holds task {key[0]!r} trial {key[1]} with seed {rec.get('seed')}, but seed={seed} "
                                     f"gives {wanted[key]}: resume with the seed of the first run, or use another out / resume=False")
                done[key] = rec
        jobs = [Job(tid, trial, s) for (tid, trial), s in wanted.items() if (tid, trial) not in done]

        successes = sum(bool(r.get("success")) for r in done.values())
        errors = sum(r.get("error") is not None for r in done.values())
        failures = sum(failed(r) for r in done.values())
        finished = len(done)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(wanted), initial=finished, desc=env_id.split("/")[-1], unit="ep", dynamic_ncols=True)
            if finished:
                bar.set_postfix(success=f"{successes / finished:.1%}")
        t0 = time.perf_counter()
        collected = 0
        first_error: str | None = None

        with open(path, "ab") as f:
            def on_result(result: EpisodeResult) -> None:
                nonlocal successes, errors, failures, finished, collected, first_error
                if result.tools is not None and result.tools[0] not in stored_tools:
                    # the tool list goes out before the first record that refers to it
                    digest, text = result.tools
                    try:
                        with open(side, "ab") as sf:
                            sf.write(f'{{"digest": "{digest}", "tools": {text}}}\n'.encode())
                    except OSError as err:  # a cut line is dropped on resume, like a cut record
                        raise RolloutWriteError(
                            err.errno, f"cannot write {side}: {err.strerror or err}; {path} holds {finished} whole "
                            f"records of this run's {len(wanted)}; free space and run again to resume") from None
                    stored_tools.add(digest)
                start = f.tell()
                try:
                    f.write(result.line.encode("utf-8") + b"\n")
                    f.flush()
                except OSError as err:
                    with contextlib.suppress(OSError):  # keep whole records only
                        f.truncate(start)
                    raise RolloutWriteError(
                        err.errno, f"cannot write {path}: {err.strerror or err}; it holds {finished} whole records "
                        f"of this run's {len(wanted)}; free space and run again to resume") from None
                collected += 1
                finished += 1
                successes += result.success
                errors += result.error is not None
                failures += result.failed
                if first_error is None and result.error is not None:
                    first_error = str(result.error)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(success=f"{successes / finished:.1%}", errors=errors, refresh=False)

            try:
                if not jobs:
                    pass
                elif backend == "thread":
                    if maker.kind == "instance":
                        worker = EpisodeWorker(env_id, env_kwargs, maker, inline_tools)
                        try:
                            for job in jobs:
                                on_result(worker.run(job))
                        finally:
                            worker.close()
                    else:
                        _run_threads(jobs, env_id, env_kwargs, maker, concurrency, on_result, inline_tools)
                elif backend == "async":
                    _run_async(jobs, env_id, env_kwargs, maker, concurrency, on_result, inline_tools)
                elif backend == "process":
                    if workers is not None:
                        workers.run(jobs, on_result)
                    else:
                        with ProcessWorkers(env_id, maker, concurrency, env_kwargs=env_kwargs,
                                            inline_tools=inline_tools) as fresh:
                            fresh.run(jobs, on_result)
                elif workers is not None:
                    workers.run(jobs, on_result)
                else:
                    from servicegym.envs.running.ray_backend import run_ray

                    run_ray(jobs, env_id=env_id, env_kwargs=env_kwargs, maker=maker, concurrency=concurrency,
                            on_result=on_result, address=ray_address, init_kwargs=ray_init_kwargs,
                            episodes_per_actor=ray_episodes_per_actor, inline_tools=inline_tools)
            finally:
                if bar is not None:
                    bar.close()
    elapsed = time.perf_counter() - t0
    summary = CollectSummary(
        path=str(path), env_id=env_id, policy=maker.name, backend=backend, concurrency=concurrency,
        tasks=len(ids), trials=trials, episodes=len(wanted), skipped=len(done), collected=collected,
        successes=successes, errors=errors, failed=failures, success_rate=successes / len(wanted) if wanted else 0.0,
        elapsed_s=elapsed, episodes_per_s=collected / elapsed if elapsed > 0 else 0.0,
    )
    if collected and failures == len(wanted):
        first = f"; the first error: {first_error[:300]}" if first_error else ""
        raise CollectFailed(f"every one of the {len(wanted)} episodes failed ({errors} with an endpoint or policy "
                            f"error){first}; the records are in {path}, and a rerun runs them again", summary)
    return summary


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without its timing fields (what two runs of the same episodes agree on)."""
    return {k: v for k, v in record.items() if k not in TIMING_FIELDS}
