"""Reusable collection workers (issue 29): ``ProcessWorkers`` and ``RayWorkers`` are started once,
build their env once, run batches of episodes, serve several ``collect`` runs, and give the same
records as one in-process worker whatever their count and batch sizes."""

from __future__ import annotations

import functools
import os
import signal
import time

import pytest

import servicegym  # noqa: F401
from servicegym.envs.running.episodes import BATCH_S, MAX_BATCH, BatchSizer
from servicegym.envs.running.policies import OraclePolicy
from servicegym.envs.running.rollouts import ProcessWorkers, collect, comparable, read_records

DELIVERY = "servicegym/Delivery-v0"
RAY_LOCAL = {"_node_ip_address": "127.0.0.1", "num_cpus": 2, "include_dashboard": False}


def by_key(path):
    return {(r["task_id"], r["trial"]): comparable(r) for r in read_records(path)}


@functools.cache
def reference(tmp: str, seed: int, limit: int, trials: int) -> dict:
    """The records of one in-process worker (the thread backend, concurrency 1)."""
    out = os.path.join(tmp, f"ref-{seed}-{limit}-{trials}.jsonl")
    collect(DELIVERY, "random", out=out, limit=limit, trials=trials, seed=seed, progress=False, resume=False)
    return by_key(out)


def test_batch_sizes_follow_the_episode_time_and_the_work_left():
    sizer = BatchSizer(workers=2)
    assert sizer.size(left=1000) == 1 and sizer.depth == 2  # nothing measured yet: one episode
    sizer.observe(episodes=1, seconds=0.002)
    assert sizer.size(left=1000) == int(BATCH_S / 0.002)  # ~50 ms of 2 ms episodes
    assert sizer.size(left=20) == 5  # an even share of the rest: 20 / (2 x 2 workers)
    fast = BatchSizer(workers=2)
    fast.observe(episodes=10, seconds=10 * 1e-5)
    assert fast.size(left=10_000) == MAX_BATCH
    slow = BatchSizer(workers=1)
    slow.observe(episodes=1, seconds=2.0)
    assert slow.size(left=100) == 1  # an episode longer than a batch's worth goes alone
    sizer.careful = True  # after a worker died: one episode at a time, one in flight
    assert sizer.size(left=1000) == 1 and sizer.depth == 1


def test_process_workers_serve_several_runs_in_batches_with_one_workers_records(tmp_path):
    with ProcessWorkers(DELIVERY, "random", size=2) as workers:
        pids = workers.start()
        assert len(set(pids)) == 2 and os.getpid() not in pids
        for seed in (1, 2):
            out = tmp_path / f"run{seed}.jsonl"
            summary = collect(DELIVERY, "random", out=out, limit=30, trials=2, seed=seed, workers=workers,
                              progress=False)
            assert (summary.backend, summary.concurrency, summary.collected) == ("process", 2, 60)
            assert by_key(out) == reference(str(tmp_path), seed, 30, 2)
        assert workers.start() == pids and workers.pools_started == 1  # the same two processes throughout
        assert workers.batches_sent < 120 / 2  # 120 episodes went in batches, not one round trip each


@pytest.mark.parametrize("size", [1, 3])
def test_the_records_do_not_depend_on_the_worker_count(tmp_path, size):
    with ProcessWorkers(DELIVERY, "random", size=size) as workers:
        collect(DELIVERY, "random", out=tmp_path / "p.jsonl", limit=24, trials=2, seed=4, workers=workers,
                progress=False)
        assert workers.batches_sent < 48
    assert by_key(tmp_path / "p.jsonl") == reference(str(tmp_path), 4, 24, 2)


def test_reused_workers_hand_their_tool_lists_to_each_runs_sidecar(tmp_path):
    with ProcessWorkers("servicegym/Workspace-v0", "oracle", size=2, inline_tools=False) as workers:
        for name in ("a", "b"):
            collect("servicegym/Workspace-v0", "oracle", out=tmp_path / f"{name}.jsonl", limit=6, workers=workers,
                    inline_tools=False, progress=False)
    a, b = read_records(tmp_path / "a.jsonl"), read_records(tmp_path / "b.jsonl")  # raise if a list is missing
    assert [r["tools"] for r in a] and all(isinstance(r["tools"], list) and r["tools"] for r in a + b)
    assert sorted(map(str, (r["tools"] for r in a))) == sorted(map(str, (r["tools"] for r in b)))


def test_workers_refuse_a_collect_that_asks_for_something_else(tmp_path):
    with ProcessWorkers(DELIVERY, "oracle", size=1) as workers:
        with pytest.raises(ValueError, match="another env, policy or settings"):
            collect(DELIVERY, "random", out=tmp_path / "r.jsonl", workers=workers, progress=False)
        with pytest.raises(ValueError, match="another env, policy or settings"):
            collect(DELIVERY, "oracle", out=tmp_path / "r.jsonl", workers=workers, env_kwargs={"max_steps": 9},
                    progress=False)
        with pytest.raises(ValueError, match="backend must be 'process'"):
            collect(DELIVERY, "oracle", out=tmp_path / "r.jsonl", workers=workers, backend="thread", progress=False)
        assert workers.pools_started == 0  # nothing started for a refused run
    with pytest.raises(ValueError, match="picklable"):
        ProcessWorkers(DELIVERY, lambda obs, info: "hi", size=1)
    assert not (tmp_path / "r.jsonl").exists() or read_records(tmp_path / "r.jsonl") == []


class KillsItsWorkerOnce(OraclePolicy):
    """The oracle, except that the first episode to reach its third step (``marker``, a file,
    says it happened) kills its worker process."""

    def __init__(self, marker: str, seed: int = 0) -> None:
        super().__init__()
        self.marker = marker

    def act(self, obs):
        if self.i == 2:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(30)
        return super().act(obs)


def test_reused_workers_survive_a_killed_worker_and_serve_the_next_run(tmp_path):
    policy = functools.partial(KillsItsWorkerOnce, str(tmp_path / "killed"))
    kw = dict(limit=20, policy_name="oracle", progress=False)
    collect(DELIVERY, "oracle", out=tmp_path / "ref.jsonl", **{k: v for k, v in kw.items() if k != "policy_name"})
    with ProcessWorkers(DELIVERY, policy, size=2, policy_name="oracle") as workers:
        first = collect(DELIVERY, policy, out=tmp_path / "a.jsonl", workers=workers, **kw)
        assert (tmp_path / "killed").exists() and workers.pools_started == 2  # a fresh pair replaced the pool
        second = collect(DELIVERY, policy, out=tmp_path / "b.jsonl", workers=workers, **kw)
        assert workers.pools_started == 2  # the next run reuses the fresh pair
    assert first.collected == second.collected == 20 and first.success_rate == second.success_rate == 1.0
    assert by_key(tmp_path / "a.jsonl") == by_key(tmp_path / "b.jsonl") == by_key(tmp_path / "ref.jsonl")


def test_ray_workers_serve_several_runs_with_one_workers_records(tmp_path):
    ray = pytest.importorskip("ray", reason="the Ray backend is the optional extra servicegym[ray]")
    from servicegym.envs.running.ray_backend import RayWorkers

    with RayWorkers(DELIVERY, "random", size=2, init_kwargs=dict(RAY_LOCAL)) as workers:
        pids = workers.start()
        assert len(set(pids)) == 2
        for seed in (1, 2):
            out = tmp_path / f"ray{seed}.jsonl"
            summary = collect(DELIVERY, "random", out=out, limit=30, trials=2, seed=seed, workers=workers,
                              progress=False)
            assert (summary.backend, summary.concurrency, summary.collected) == ("ray", 2, 60)
            assert by_key(out) == reference(str(tmp_path), seed, 30, 2)
        assert workers.start() == pids and not workers.dead  # the same actors throughout
        assert workers.batches_sent < 120 / 2
        with pytest.raises(ValueError, match="backend must be 'ray'"):
            collect(DELIVERY, "random", out=tmp_path / "x.jsonl", workers=workers, backend="process", progress=False)
    assert not ray.is_initialized(), "the Ray instance the workers started is shut down with them"


def says_what_the_environment_says(obs, info):
    """A callable policy whose one message comes from the worker's environment."""
    return os.environ.get("SERVICEGYM_TEST_SAY", "nothing set") + " ###STOP###"


def test_process_workers_see_the_collectors_environment_as_it_was_when_they_started(tmp_path, monkeypatch):
    # an earlier pool has already started the fork server, with the environment of that time
    collect(DELIVERY, says_what_the_environment_says, out=tmp_path / "a.jsonl", limit=1, backend="process",
            progress=False)
    monkeypatch.setenv("SERVICEGYM_TEST_SAY", "the key set later")
    collect(DELIVERY, says_what_the_environment_says, out=tmp_path / "b.jsonl", limit=2, backend="process",
            concurrency=2, progress=False)
    said = {m["content"] for r in read_records(tmp_path / "b.jsonl") for m in r["messages"] if m["role"] == "assistant"}
    assert said == {"the key set later ###STOP###"}
