"""The Ray backend of ``envs.rollouts.collect``: Ray actors each hosting an env.

``collect(..., backend="ray", concurrency=N)`` starts ``N`` actors (each an
``envs.rollouts.EpisodeWorker``: one env, the policy maker), keeps one episode in flight per
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

Each actor reserves one CPU by default (``ray_init_kwargs={"actor_options": {"num_cpus": 0.5}}``
changes that: the ``actor_options`` key is taken out before ``ray.init``). Ray is an optional
extra: ``pip install "servicegym[ray]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .rollouts import EpisodeResult, EpisodeWorker, Job, PolicyMaker

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
) -> None:
    """Runs ``jobs`` on ``min(concurrency, len(jobs))`` actors; calls ``on_result`` (in this
    thread) for each finished episode, in the order they finish."""
    ray = require_ray()
    init_kwargs = dict(init_kwargs or {})
    actor_options = {"num_cpus": 1, **init_kwargs.pop("actor_options", {})}
    started = False
    if not ray.is_initialized():
        if address is None:
            init_kwargs.setdefault("num_cpus", max(1, concurrency))
            init_kwargs.setdefault("include_dashboard", False)
        init_kwargs.setdefault("logging_level", "ERROR")
        ray.init(address=address, **init_kwargs)
        started = True
    actors = []
    try:
        actor_cls = ray.remote(**actor_options)(EpisodeWorker)
        actors = [actor_cls.remote(env_id, env_kwargs, maker) for _ in range(min(concurrency, len(jobs)))]
        todo = iter(jobs)
        pending: dict[Any, Any] = {}
        for actor in actors:
            job = next(todo, None)
            if job is None:
                break
            pending[actor.run.remote(job)] = actor
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                actor = pending.pop(ref)
                on_result(ray.get(ref))
                job = next(todo, None)
                if job is not None:
                    pending[actor.run.remote(job)] = actor
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
