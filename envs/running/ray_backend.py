"""The Ray backend of ``servicegym.envs.running.rollouts.collect``: Ray actors each hosting an env.

``collect(..., backend="ray", concurrency=N)`` starts ``N`` actors (each an
``servicegym.envs.running.episodes.EpisodeWorker``: one env, the policy maker), keeps one episode in flight per
actor, and streams each finished episode back to the collector's single writer as soon as it is
done (``ray.wait``), so a run on a cluster resumes exactly like a local one.

Where Ray runs:

- ``ray_address=None`` and no Ray yet in this process: a local instance is started with
  ``num_cpus = concurrency`` (no dashboard) and shut down at the end.
- ``ray_address="auto"`` (a cluster started with ``ray start --head`` on this machine or reached
  through ``RAY_ADDRESS``) or ``"ray://HOST:10001"`` (Ray Client): the cluster's workers run the
  actors; every worker needs servicegym installed (``pip install servicegym`` on the nodes, or
  ``ray_init_kwargs={"runtime_env": {"pip": ["servicegym"]}}`` or
  ``{"runtime_env": {"working_dir": "."}}`` from a source checkout).
- Ray already initialised by the caller: used as it is and left running.

Episodes per actor: with ``episodes_per_actor=1`` (the default for a policy without ``aact``) an
actor runs one episode at a time, so ``concurrency`` actors run ``concurrency`` episodes. With
``episodes_per_actor=K > 1`` (the default, 32, for a policy with an ``aact`` coroutine, such as the
``"llm"`` policy) each actor is an async Ray actor hosting ``K`` envs and runs ``K`` episodes at
once on its event loop, as the ``"async"`` backend does in one process: ``concurrency=256`` LLM
episodes then need 8 actors (8 CPUs), not 256.

An actor that dies (``ray.kill``, its worker process killed or out of memory, its node lost) is
replaced by a fresh one, and every episode it had in flight runs again from its start there (the
same seed, so the same record); only finished episodes are written, so the file still ends with
one record per (task, trial). An episode that loses its actor ``MAX_WORKER_LOSSES`` times stops
the run with ``WorkerLost`` (the records so far are kept; a rerun resumes).

Each actor reserves one CPU by default (``ray_init_kwargs={"actor_options": {"num_cpus": 0.5}}``
changes that: the ``actor_options`` key is taken out before ``ray.init``). Ray is an optional
extra: ``pip install "servicegym[ray]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from servicegym.envs.running.episodes import (
    MAX_WORKER_LOSSES,
    EpisodeResult,
    EpisodeWorker,
    Job,
    PolicyMaker,
    WorkerLost,
    thread_per_episode,
)

ASYNC_EPISODES_PER_ACTOR = 32


class AsyncEpisodeActor:
    """``episodes_per_actor`` envs in one Ray actor, their episodes awaited together on the actor's
    event loop (``EpisodeWorker.arun``); Ray runs up to that many ``run`` calls at once."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None, maker: PolicyMaker, episodes: int,
                 inline_tools: bool = True) -> None:
        self.workers = [EpisodeWorker(env_id, env_kwargs, maker, inline_tools) for _ in range(episodes)]
        self._free: Any = None

    async def run(self, job: Job) -> EpisodeResult:
        import asyncio

        if self._free is None:  # first call, on the actor's loop: a queue of idle envs, a thread each
            self._free = asyncio.Queue()
            for w in self.workers:
                self._free.put_nowait(w)
            thread_per_episode(len(self.workers))
        worker = await self._free.get()
        try:
            return await worker.arun(job)
        finally:
            self._free.put_nowait(worker)

    async def close(self) -> None:
        from servicegym.simulators.llm import aclose_clients

        await aclose_clients()
        for w in self.workers:
            w.close()

MISSING_RAY = "backend='ray' needs Ray: pip install 'servicegym[ray]' (or pip install 'ray>=2.9')"


def require_ray():
    """Imports Ray, or raises ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(MISSING_RAY) from None
    return ray


def run_ray(
    jobs: Sequence[Job],
    *,
    env_id: str,
    env_kwargs: dict[str, Any],
    maker: PolicyMaker,
    concurrency: int,
    on_result: Callable[[EpisodeResult], None],
    address: str | None = None,
    init_kwargs: dict[str, Any] | None = None,
    episodes_per_actor: int | None = None,
    inline_tools: bool = True,
) -> None:
    """Runs ``jobs``, ``concurrency`` at a time, on actors of ``episodes_per_actor`` episodes each
    (``None``: 32 for a policy with ``aact``, else 1); calls ``on_result`` (in this thread) for
    each finished episode, in the order they finish."""
    ray = require_ray()
    per_actor = episodes_per_actor or (ASYNC_EPISODES_PER_ACTOR if maker.asynchronous else 1)
    slots = min(concurrency, len(jobs))
    per_actor = min(per_actor, slots)
    n_actors = -(-slots // per_actor)
    init_kwargs = dict(init_kwargs or {})
    actor_options = {"num_cpus": 1, **init_kwargs.pop("actor_options", {})}
    started = False
    if not ray.is_initialized():
        if address is None:
            init_kwargs.setdefault("num_cpus", max(1, n_actors))
            init_kwargs.setdefault("include_dashboard", False)
        init_kwargs.setdefault("logging_level", "ERROR")
        ray.init(address=address, **init_kwargs)
        started = True
    actors: list[Any] = []
    dead: list[Any] = []  # replaced actors, killed at the end all the same
    try:
        if per_actor == 1:
            actor_cls = ray.remote(**actor_options)(EpisodeWorker)

            def new_actor() -> Any:
                return actor_cls.remote(env_id, env_kwargs, maker, inline_tools)
        else:
            actor_cls = ray.remote(max_concurrency=per_actor, **actor_options)(AsyncEpisodeActor)

            def new_actor() -> Any:
                return actor_cls.remote(env_id, env_kwargs, maker, per_actor, inline_tools)
        actors = [new_actor() for _ in range(n_actors)]
        todo = iter(jobs)
        pending: dict[Any, tuple[int, Any, Job]] = {}  # in-flight episode -> its actor's index, the actor, the job
        losses: dict[Job, int] = {}

        def submit(i: int, job: Job | None = None) -> None:
            job = job if job is not None else next(todo, None)
            if job is not None:
                pending[actors[i].run.remote(job)] = (i, actors[i], job)

        for _ in range(per_actor):  # fill every actor's slots, round robin
            for i in range(len(actors)):
                if len(pending) < slots:
                    submit(i)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, actor, job = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayActorError as err:  # the actor died: a fresh one runs the episode again
                    losses[job] = losses.get(job, 0) + 1
                    if losses[job] >= MAX_WORKER_LOSSES:
                        raise WorkerLost(job, losses[job], err) from err
                    if actors[i] is actor:  # not yet replaced (an async actor loses several episodes at once)
                        dead.append(actor)
                        actors[i] = new_actor()
                    submit(i, job)
                    continue
                on_result(result)
                submit(i)  # the actor that finished one gets the next
    finally:
        if per_actor > 1 and actors:
            try:
                ray.get([a.close.remote() for a in actors], timeout=10)
            except Exception:  # an actor that died or hangs is killed below all the same
                pass
        for actor in [*actors, *dead]:
            ray.kill(actor)
        if started:
            ray.shutdown()
