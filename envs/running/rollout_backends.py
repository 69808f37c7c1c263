"""The in-process backends of ``servicegym.envs.running.rollouts.collect``: ``"thread"`` (a pool
of threads, each with its own env), ``"async"`` (episodes on one asyncio event loop) and
``"process"`` (``ProcessWorkers``: worker processes, each building its env once, sent batches of
episodes). Each calls ``on_result(EpisodeResult)`` from the calling thread, so the collector's
single writer sees every finished episode in turn.

The functions a worker process runs (``_process_init``, ``_process_batch``, ``_process_ready``)
live here at module level, so a spawned or fork-server child finds them by this module's path;
the fork server preloads this module (``_mp_context``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from typing import Any

from servicegym.envs.running.episodes import (
    MAX_WORKER_LOSSES,
    BatchSizer,
    EpisodeResult,
    EpisodeWorker,
    Job,
    PolicyMaker,
    WorkerLost,
    next_run,
    run_config,
    thread_per_episode,
)
from servicegym.envs.running.vector import resolve_env_id
from servicegym.rewards.rubric import BUILTIN_CHECK_MODULES

__all__ = ["ProcessWorkers"]


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
    first worker, and every worker is forked from it with servicegym (and the rubric checks' modules)
    already imported: a worker starts in milliseconds, not the second a fresh interpreter's imports
    take, and a later pool (a later ``collect``) starts as fast. When the main module is not a file a child can re-import
    (``python - <<EOF``), only ``fork`` works."""
    methods = multiprocessing.get_all_start_methods()
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and not os.path.exists(main_file) and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # and the rubric checks' modules, which scoring loads on first use (``rewards.rubric``): a
        # worker scores its first episode without importing the rubric reader
        ctx.set_forkserver_preload([__name__, *BUILTIN_CHECK_MODULES])
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
