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
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from servicegym.envs.running.episodes import (
    MAX_WORKER_LOSSES,
    RECORD_FIELDS,
    TIMING_FIELDS,
    TOOLS_REF,
    BatchSizer,
    EpisodeResult,
    EpisodeWorker,
    Job,
    PolicyMaker,
    WorkerLost,
    episode_seed,
    failed,
    next_run,
    run_config,
    thread_per_episode,
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


def _out_path(out: str | os.PathLike[str]) -> Path:
    path = Path(out)
    if path.is_dir() or (not path.exists() and path.suffix == ""):
        return path / "rollouts.jsonl"
    return path


def tools_path(out: str | os.PathLike[str]) -> Path:
    """The sidecar of a rollouts file that holds its tool lists (``inline_tools=False``):
    ``rollouts.jsonl`` -> ``rollouts.tools.jsonl``."""
    path = _out_path(out)
    return path.with_name(path.stem + ".tools.jsonl")


class CollectFailed(RuntimeError):
    """Every episode of a ``collect`` run failed for a reason other than the agent's behaviour (an
    endpoint or policy error, a crashed worker): usually a wrong base URL, model name or key rather
    than a bad agent. The records are written (a rerun resumes and runs them again); ``summary`` is
    the ``CollectSummary`` that ``collect`` would have returned."""

    def __init__(self, message: str, summary: CollectSummary) -> None:
        super().__init__(message)
        self.summary = summary


class RolloutWriteError(OSError):
    """Writing a rollouts file failed (a full disk, a file-size limit); the message says what the
    file holds and how to go on."""


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` through a temporary file that never outlives a failed write."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise RolloutWriteError(err.errno, f"cannot rewrite {path}: {err.strerror or err}; it is unchanged") from None


def _read_jsonl(path: Path, repair: bool, drop: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """The records of a JSONL file; ``drop(record)`` True leaves a record out (and, with ``repair``,
    out of the file)."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    parts = raw.split(b"\n")
    last = max((n for n, p in enumerate(parts) if p.strip()), default=-1)
    records, good = [], []
    for n, line in enumerate(parts):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if n == last:
                break  # cut short by a kill: dropped
            raise ValueError(f"{path}: line {n + 1} is not a JSON record (not something a kill leaves behind)") from None
        if drop is not None and drop(record):
            continue
        records.append(record)
        good.append(line)
    clean = b"".join(line + b"\n" for line in good)
    if repair and clean != raw:
        _write_atomic(path, clean)
    return records


def read_records(path: str | os.PathLike[str], repair: bool = False, resolve_tools: bool = True) -> list[dict[str, Any]]:
    """The records of a rollouts file. A last line cut short by a kill (no newline, not JSON) is
    dropped; with ``repair=True`` the file is rewritten without it. A bad line elsewhere raises
    ``ValueError`` (that is not what a kill leaves). Records written with ``inline_tools=False``
    get their tool lists back from the sidecar (``resolve_tools=False`` keeps ``{"$ref": ...}``)."""
    path = Path(path)
    records = _read_jsonl(path, repair)
    refs = [r for r in records if isinstance(r.get("tools"), dict) and TOOLS_REF in r["tools"]]
    if resolve_tools and refs:
        side = tools_path(path)
        lists = {t["digest"]: t["tools"] for t in _read_jsonl(side, repair=False)}
        for r in refs:
            digest = r["tools"][TOOLS_REF]
            if digest not in lists:
                raise ValueError(f"{path}: task {r.get('task_id')!r} refers to tool list {digest}, which {side} "
                                 f"does not hold (keep the .tools.jsonl file beside its rollouts)")
            r["tools"] = lists[digest]
    return records


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


# ----- backends: each calls on_result(EpisodeResult) from the calling thread -------------------

def _run_threads(jobs: list[Job], env_id: str, env_kwargs: dict[str, Any], maker: PolicyMaker, concurrency: int,
                 on_result: Callable[[EpisodeResult], None], inline_tools: bool = True) -> None:
    local = threading.local()
    workers: list[EpisodeWorker] = []
    lock = threading.Lock()

    def worker() -> EpisodeWorker:
        """This thread's worker, built on first use."""
        w = getattr(local, "worker", None)
        if w is None:
            w = local.worker = EpisodeWorker(env_id, env_kwargs, maker, inline_tools)
            with lock:
                workers.append(w)
        return w

    def run(job: Job) -> EpisodeResult:
        return worker().run(job)

    size = min(concurrency, len(jobs))
    pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="servicegym-rollout")
    try:
        _start_threads(pool, size, worker)
        _drain(pool, run, jobs, concurrency, on_result)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        for w in workers:
            w.close()


def _start_threads(pool: ThreadPoolExecutor, size: int, prepare: Callable[[], Any]) -> None:
    """Start all ``size`` threads of ``pool``, each running ``prepare`` (its worker built), before
    any episode. A thread started while the earlier ones run episodes waits for the GIL at every
    step of its start, and ``submit`` waits on it: 64 episodes' first requests went out over
    60-100 ms, one thread start after another; started idle, the threads are up in ~20 ms and
    the episodes' first steps follow at once. Each start waits at a barrier until all are up, so
    the pool makes ``size`` threads instead of reusing the first ones."""
    if size < 2:
        return
    barrier = threading.Barrier(size)

    def start() -> None:
        try:
            prepare()
        except BaseException:
            barrier.abort()  # the others go on; this error comes out of result() below
            raise
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()

    for fut in [pool.submit(start) for _ in range(size)]:
        fut.result()


def _run_async(jobs: list[Job], env_id: str, env_kwargs: dict[str, Any], maker: PolicyMaker, concurrency: int,
               on_result: Callable[[EpisodeResult], None], inline_tools: bool = True) -> None:
    """``concurrency`` episodes on one asyncio event loop, each with its own env: the policy's
    ``aact`` is awaited, so 64 episodes waiting on a model cost one thread, not 64. Runs the loop
    in this thread, or in a helper thread when this one already runs a loop (a notebook)."""
    import asyncio

    from servicegym.simulators.llm import aclose_clients

    async def main() -> None:
        todo = iter(jobs)
        workers = [EpisodeWorker(env_id, env_kwargs, maker, inline_tools) for _ in range(min(concurrency, len(jobs)))]
        thread_per_episode(len(workers))

        async def drain(worker: EpisodeWorker) -> None:
            for job in todo:  # one iterator shared by every worker: each job runs once
                on_result(await worker.arun(job))

        tasks = [asyncio.ensure_future(drain(w)) for w in workers]
        try:
            await asyncio.gather(*tasks)
        finally:  # one drain failed (e.g. the writer's disk is full): stop the others before closing their envs
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for w in workers:
                w.close()
            await aclose_clients()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return
    with ThreadPoolExecutor(1, thread_name_prefix="servicegym-async") as pool:
        pool.submit(asyncio.run, main()).result()


_PROCESS_WORKER: EpisodeWorker | None = None

def _exit_with_parent() -> None:
    """In a pool worker: exit as soon as the collector that started it is gone (a SIGKILL leaves
    its workers waiting forever on a queue that nobody feeds, each holding an env)."""
    from multiprocessing.connection import wait as wait_for

    parent = multiprocessing.parent_process()
    sentinel = getattr(parent, "sentinel", None)
    if sentinel is None:
        return

    def watch() -> None:
        wait_for([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="servicegym-parent-watch", daemon=True).start()


def _process_init(env_id: str, env_kwargs: dict[str, Any], maker: PolicyMaker, inline_tools: bool,
                  environ: dict[str, str] | None = None) -> None:
    global _PROCESS_WORKER
    _exit_with_parent()
    if environ is not None:  # a forkserver child has the server's environment: take the collector's, as spawn does
        os.environ.clear()
        os.environ.update(environ)
    _PROCESS_WORKER = EpisodeWorker(env_id, env_kwargs, maker, inline_tools)
    _PROCESS_WORKER.warm()


def _process_batch(run: int, jobs: list[Job]) -> tuple[list[EpisodeResult], float]:
    assert _PROCESS_WORKER is not None
    return _PROCESS_WORKER.run_batch(jobs, run)


def _process_ready(hold_s: float) -> int:
    """A worker's pid once its env is built (the initializer ran); ``hold_s`` keeps it busy so the
    next call goes to another worker."""
    time.sleep(hold_s)
    return os.getpid()


def _mp_context():
    """``forkserver`` where there is one (POSIX), else ``spawn``: never a fork of this process, which
    may have threads (tqdm's, the caller's). The fork server imports this module once, before its
    first worker, and every worker is forked from it with servicegym already imported: a worker
    starts in milliseconds, not the second a fresh interpreter's imports take, and a later pool
    (a later ``collect``) starts as fast. When the main module is not a file a child can re-import
    (``python - <<EOF``), only ``fork`` works."""
    methods = multiprocessing.get_all_start_methods()
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and not os.path.exists(main_file) and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return multiprocessing.get_context("spawn")


class ProcessWorkers:
    """``size`` worker processes for ``collect(..., backend="process")``, each building its env and
    its policy maker once and then running batches of episodes (``(task id, trial, seed)`` in,
    finished records out, ``BatchSizer``); started once and reused by every ``collect`` given them
    as ``workers=``, so those runs pay no process start, import or env construction:

        with ProcessWorkers("servicegym/Delivery-v0", "oracle", size=4) as workers:
            for seed in range(10):
                collect("servicegym/Delivery-v0", "oracle", out=f"runs/{seed}", seed=seed, workers=workers)

    ``env_kwargs``, ``policy_name``, ``policy_kwargs`` and ``inline_tools`` are those of ``collect``
    (a ``collect`` given these workers must ask for the same). The policy must be picklable (a name,
    a module-level function or class). A worker that dies (killed, out of memory) breaks the pool:
    fresh processes run the unfinished episodes again (``MAX_WORKER_LOSSES``). ``start()`` starts
    the processes now (else the first run does); ``close()`` (or leaving the ``with``) stops them.
    Workers exit by themselves when the process that started them dies."""

    backend = "process"

    def __init__(self, env_id: str, policy: Any, size: int, *, env_kwargs: dict[str, Any] | None = None,
                 policy_name: str | None = None, policy_kwargs: dict[str, Any] | None = None,
                 inline_tools: bool = True) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.env_id = resolve_env_id(env_id)
        self.env_kwargs = dict(env_kwargs or {})
        self.maker = policy if isinstance(policy, PolicyMaker) else PolicyMaker.from_policy(policy, policy_name,
                                                                                            policy_kwargs)
        if self.maker.kind == "instance":
            raise ValueError("process workers need a policy name, factory or callable, not a policy object")
        try:
            self._maker_bytes = pickle.dumps(self.maker)
        except Exception as err:
            raise ValueError(f"backend='process' needs a picklable policy (a name, or a module-level function or "
                             f"class): {err}") from None
        self.size = size
        self.inline_tools = inline_tools
        self.pools_started = 0  # over the workers' life: 1, plus 1 for each pool a dead worker broke
        self.batches_sent = 0  # over the workers' life: each is one round trip, of one episode or many
        self._pool: ProcessPoolExecutor | None = None

    def matches(self, env_id: str, env_kwargs: dict[str, Any], maker: PolicyMaker, inline_tools: bool) -> bool:
        """Whether these workers run what a ``collect`` with these settings asks for."""
        return (env_id == self.env_id and run_config(env_kwargs, maker.kwargs) == run_config(self.env_kwargs, self.maker.kwargs)
                and pickle.dumps(maker) == self._maker_bytes and inline_tools == self.inline_tools)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            ctx = _mp_context()
            environ = dict(os.environ) if ctx.get_start_method() == "forkserver" else None
            self._pool = ProcessPoolExecutor(max_workers=self.size, mp_context=ctx, initializer=_process_init,
                                             initargs=(self.env_id, self.env_kwargs, self.maker, self.inline_tools,
                                                       environ))
            self.pools_started += 1
        return self._pool

    def start(self, timeout_s: float = 300.0) -> list[int]:
        """Starts every worker and waits until each has built its env; returns their pids."""
        pool = self._executor()
        pids: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while len(pids) < self.size:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.size - len(pids)} of {self.size} workers not ready after {timeout_s:.0f} s")
            pids.update(f.result() for f in [pool.submit(_process_ready, 0.02) for _ in range(self.size)])
        return sorted(pids)

    def run(self, jobs: Sequence[Job], on_result: Callable[[EpisodeResult], None]) -> None:
        """Runs ``jobs`` on the workers and calls ``on_result`` (in this thread) for each finished
        episode; a broken pool (a worker died) is replaced and the unfinished episodes run again."""
        from concurrent.futures.process import BrokenProcessPool

        run = next_run()
        remaining = list(jobs)
        losses: dict[Job, int] = {}
        sizer = BatchSizer(self.size)
        while remaining:
            finished: set[Job] = set()
            submitted: set[Job] = set()
            try:
                self._drain(run, remaining, sizer, on_result, finished, submitted)
                return
            except BrokenProcessPool as err:  # a worker died: the episodes it broke run again on a fresh pool
                self._discard()
                if "initializer" in str(err):  # the env or the policy cannot be made: no rerun helps
                    raise
                remaining = [j for j in remaining if j not in finished]
                sizer.careful = True
                for job in [j for j in remaining if j in submitted]:
                    losses[job] = losses.get(job, 0) + 1
                    if losses[job] >= MAX_WORKER_LOSSES:
                        raise WorkerLost(job, losses[job], err) from err

    def _drain(self, run: int, jobs: list[Job], sizer: BatchSizer, on_result: Callable[[EpisodeResult], None],
               finished: set[Job], submitted: set[Job]) -> None:
        """Keeps ``sizer.depth`` batches in flight per worker and hands results over as batches
        finish, in submission order among those done together."""
        pool = self._executor()
        todo = deque(jobs)
        pending: dict[Future, list[Job]] = {}

        def fill() -> None:
            while todo and len(pending) < sizer.depth * self.size:
                batch = [todo.popleft() for _ in range(min(sizer.size(len(todo)), len(todo)))]
                pending[pool.submit(_process_batch, run, batch)] = batch
                submitted.update(batch)
                self.batches_sent += 1

        try:
            fill()
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in [f for f in pending if f in done]:  # in submission order (a set's order is arbitrary)
                    batch = pending.pop(fut)
                    results, seconds = fut.result()
                    sizer.observe(len(results), seconds)
                    for result in results:
                        on_result(result)
                    finished.update(batch)
                fill()
        finally:
            for fut in pending:  # the run stopped early (a write failed): what has not started never runs
                fut.cancel()

    def _discard(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        """Stops the worker processes (a later run starts fresh ones)."""
        self._discard()

    def __enter__(self) -> ProcessWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drain(pool, fn: Callable[[Job], EpisodeResult], jobs: Iterable[Job], concurrency: int,
           on_result: Callable[[EpisodeResult], None], depth: int = 2) -> None:
    """Keeps at most ``depth x concurrency`` jobs submitted; hands results over as they finish."""
    todo = iter(jobs)
    pending: dict[Future, Job] = {}

    def fill() -> None:
        while len(pending) < depth * concurrency:
            job = next(todo, None)
            if job is None:
                return
            pending[pool.submit(fn, job)] = job

    fill()
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in [f for f in pending if f in done]:  # in submission order (a set's order is arbitrary)
            pending.pop(fut)
            on_result(fut.result())
        fill()


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

