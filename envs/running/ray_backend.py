"""The Ray backend of ``servicegym.envs.running.rollouts.collect``: Ray actors each hosting an env.

``collect(..., backend="ray", concurrency=N)`` starts ``N`` actors (each an
``servicegym.envs.running.episodes.EpisodeWorker``: one env, the policy maker; ``RayWorkers``), sends each
batches of episodes (``BatchSizer``: about 50 ms of episodes a batch once the first have come back,
one Ray call per batch, a second batch queued behind the running one), and streams each finished
batch back to the collector's single writer as soon as it is done (``ray.wait``), so a run on a
cluster resumes exactly like a local one. ``collect(..., workers=RayWorkers(...))`` reuses actors
made once (no actor start or env construction per run).

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

from collections import deque
from collections.abc import Callable, Sequence
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
    thread_per_episode,
)
from servicegym.envs.running.vector import resolve_env_id

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

    def ready(self) -> int:
        """This actor's process id, once its envs are built and warm."""
        return [w.ready() for w in self.workers][0]

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


class RayWorkers:
    """Ray actors for ``collect(..., backend="ray")``, each hosting an env (``EpisodeWorker``, or
    ``AsyncEpisodeActor`` with ``episodes_per_actor`` envs), created once and reused by every
    ``collect`` given them as ``workers=``, so those runs pay no actor start or env construction:

        with RayWorkers("servicegym/Delivery-v0", "oracle", size=4) as workers:
            collect("servicegym/Delivery-v0", "oracle", out="runs/a", workers=workers)

    ``size`` is how many episodes run at once (``collect``'s ``concurrency``); an actor of one
    episode at a time is sent batches of episodes (``BatchSizer``: one Ray round trip for many short
    episodes) with the next batch queued behind the running one. ``address``, ``init_kwargs`` and
    ``episodes_per_actor`` are ``collect``'s ``ray_address``, ``ray_init_kwargs`` and
    ``ray_episodes_per_actor``; Ray is started here when it is not running yet, and shut down by
    ``close()`` (or leaving the ``with``) if it was started here."""

    backend = "ray"

    def __init__(self, env_id: str, policy: Any, size: int, *, env_kwargs: dict[str, Any] | None = None,
                 policy_name: str | None = None, policy_kwargs: dict[str, Any] | None = None,
                 inline_tools: bool = True, address: str | None = None, init_kwargs: dict[str, Any] | None = None,
                 episodes_per_actor: int | None = None) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        ray = self._ray = require_ray()
        self.env_id = resolve_env_id(env_id)
        self.env_kwargs = dict(env_kwargs or {})
        self.maker = policy if isinstance(policy, PolicyMaker) else PolicyMaker.from_policy(policy, policy_name,
                                                                                            policy_kwargs)
        self.inline_tools = inline_tools
        self.size = size
        per_actor = episodes_per_actor or (ASYNC_EPISODES_PER_ACTOR if self.maker.asynchronous else 1)
        self.per_actor = min(per_actor, size)
        n_actors = -(-size // self.per_actor)
        init_kwargs = dict(init_kwargs or {})
        actor_options = {"num_cpus": 1, **init_kwargs.pop("actor_options", {})}
        self._started = False
        if not ray.is_initialized():
            if address is None:
                init_kwargs.setdefault("num_cpus", max(1, n_actors))
                init_kwargs.setdefault("include_dashboard", False)
            init_kwargs.setdefault("logging_level", "ERROR")
            ray.init(address=address, **init_kwargs)
            self._started = True
        if self.per_actor == 1:
            self._actor_cls = ray.remote(**actor_options)(EpisodeWorker)
        else:
            self._actor_cls = ray.remote(max_concurrency=self.per_actor, **actor_options)(AsyncEpisodeActor)
        self.dead: list[Any] = []  # replaced actors, killed at the end all the same
        self.batches_sent = 0  # over the actors' life: each is one Ray call, of one episode or many
        self.actors: list[Any] = []
        try:
            self.actors = [self._new_actor() for _ in range(n_actors)]
        except BaseException:
            self.close()
            raise

    def _new_actor(self) -> Any:
        if self.per_actor == 1:
            return self._actor_cls.remote(self.env_id, self.env_kwargs, self.maker, self.inline_tools)
        return self._actor_cls.remote(self.env_id, self.env_kwargs, self.maker, self.per_actor, self.inline_tools)

    def matches(self, env_id: str, env_kwargs: dict[str, Any], maker: PolicyMaker, inline_tools: bool) -> bool:
        """Whether these actors run what a ``collect`` with these settings asks for."""
        return (env_id == self.env_id and env_kwargs == self.env_kwargs and maker == self.maker
                and inline_tools == self.inline_tools)

    def start(self, timeout_s: float = 300.0) -> list[int]:
        """Waits until every actor has built its env; returns their process ids."""
        return list(self._ray.get([a.ready.remote() for a in self.actors], timeout=timeout_s))

    def run(self, jobs: Sequence[Job], on_result: Callable[[EpisodeResult], None]) -> None:
        """Runs ``jobs`` on the actors and calls ``on_result`` (in this thread) for each finished
        episode, as they finish; an actor that dies is replaced and its episodes run again."""
        ray = self._ray
        run = next_run()
        todo = deque(jobs)
        sizer = BatchSizer(len(self.actors))
        inflight = [0] * len(self.actors)
        pending: dict[Any, tuple[int, Any, list[Job]]] = {}  # in flight -> its actor's index, the actor, its jobs
        losses: dict[Job, int] = {}

        def fill() -> None:
            cap = self.per_actor if self.per_actor > 1 else sizer.depth
            placed = True
            while todo and placed:  # round robin over the actors with room
                placed = False
                for i, actor in enumerate(self.actors):
                    if not todo or inflight[i] >= cap:
                        continue
                    if self.per_actor > 1:
                        batch = [todo.popleft()]
                        ref = actor.run.remote(batch[0])
                    else:
                        batch = [todo.popleft() for _ in range(min(sizer.size(len(todo)), len(todo)))]
                        ref = actor.run_batch.remote(batch, run)
                    pending[ref] = (i, actor, batch)
                    inflight[i] += 1
                    self.batches_sent += 1
                    placed = True

        fill()
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, actor, batch = pending.pop(ref)
                current = self.actors[i] is actor
                if current:
                    inflight[i] -= 1
                try:
                    value = ray.get(ref)
                except ray.exceptions.RayActorError as err:  # the actor died: a fresh one runs the episodes again
                    sizer.careful = True
                    for job in batch:
                        losses[job] = losses.get(job, 0) + 1
                        if losses[job] >= MAX_WORKER_LOSSES:
                            raise WorkerLost(job, losses[job], err) from err
                    if current:  # not yet replaced (an actor loses all it had in flight at once)
                        self.dead.append(actor)
                        self.actors[i] = self._new_actor()
                        inflight[i] = 0
                    todo.extendleft(reversed(batch))
                    continue
                if self.per_actor > 1:
                    on_result(value)
                    continue
                results, seconds = value
                sizer.observe(len(results), seconds)
                for result in results:
                    on_result(result)
            fill()

    def close(self) -> None:
        """Kills the actors (and shuts Ray down if it was started here)."""
        ray = self._ray
        if self.per_actor > 1 and self.actors:
            try:
                ray.get([a.close.remote() for a in self.actors], timeout=10)
            except Exception:  # an actor that died or hangs is killed below all the same
                pass
        for actor in [*self.actors, *self.dead]:
            ray.kill(actor)
        self.actors, self.dead = [], []
        if self._started:
            self._started = False
            ray.shutdown()

    def __enter__(self) -> RayWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
    """Runs ``jobs``, ``concurrency`` at a time, on fresh ``RayWorkers`` of ``episodes_per_actor``
    episodes an actor (``None``: 32 for a policy with ``aact``, else 1), closed at the end; calls
    ``on_result`` (in this thread) for each finished episode, in the order they finish."""
    with RayWorkers(env_id, maker, min(concurrency, len(jobs)), env_kwargs=env_kwargs, inline_tools=inline_tools,
                    address=address, init_kwargs=init_kwargs, episodes_per_actor=episodes_per_actor) as workers:
        workers.run(jobs, on_result)
