"""The Ray backend of ``collect``: the same records as the thread backend, on a local instance."""

from __future__ import annotations

import json
import sys

import pytest

import servicegym  # noqa: F401
from servicegym.envs.running.ray_backend import MISSING_RAY, require_ray
from servicegym.envs.running.rollouts import collect, comparable, read_records

DELIVERY = "servicegym/Delivery-v0"


def by_key(path):
    return {(r["task_id"], r["trial"]): comparable(r) for r in read_records(path)}


def test_ray_backend_gives_the_thread_backends_records_and_resumes(tmp_path):
    pytest.importorskip("ray", reason="the Ray backend is the optional extra servicegym[ray]")
    kw = dict(limit=3, trials=2, seed=7, progress=False)
    collect(DELIVERY, "random", out=tmp_path / "thread.jsonl", **kw)
    # one record already there: the Ray run resumes past it, streaming the rest into the same file
    first = read_records(tmp_path / "thread.jsonl")[0]
    (tmp_path / "ray.jsonl").write_text(json.dumps(first) + "\n", encoding="utf-8")
    # ... with its tool lists stored once (a file of inline and referring records reads back whole)
    summary = collect(DELIVERY, "random", out=tmp_path / "ray.jsonl", backend="ray", concurrency=2,
                      ray_init_kwargs={"num_cpus": 2}, inline_tools=False, **kw)
    assert (summary.skipped, summary.collected) == (1, 5)
    ray_records = by_key(tmp_path / "ray.jsonl")
    assert len(read_records(tmp_path / "ray.jsonl")) == len(ray_records) == 6
    assert ray_records == by_key(tmp_path / "thread.jsonl")
    import ray

    assert not ray.is_initialized(), "a local instance the collector started is shut down"


def test_a_missing_ray_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(ImportError, match=r"servicegym\[ray\]"):
        require_ray()
    assert "pip install" in MISSING_RAY


def test_async_ray_actors_run_several_llm_episodes_each(tmp_path, monkeypatch):
    """An LLM policy on Ray: each actor hosts several envs and awaits their episodes together, so
    6 episodes run at once on 2 actors (2 CPUs), with the thread backend's records."""
    pytest.importorskip("ray", reason="the Ray backend is the optional extra servicegym[ray]")
    import gymnasium as gym

    from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-ray")
    tasks = replayable_tasks(gym.make(DELIVERY), 6)
    ids = [t.task_id for t in tasks]
    with LoopbackServer(handler=golden_replay_handler(tasks), latency_s=0.3) as server:
        kw = dict(task_ids=ids, progress=False, policy_kwargs={"llm": server.config(timeout_s=20, max_retries=0)})
        collect(DELIVERY, "llm", out=tmp_path / "thread.jsonl", backend="thread", concurrency=6, **kw)
        server.max_in_flight = 0
        summary = collect(DELIVERY, "llm", out=tmp_path / "ray.jsonl", backend="ray", concurrency=6,
                          ray_episodes_per_actor=3, ray_init_kwargs={"num_cpus": 2}, **kw)
        assert server.max_in_flight == 6  # 2 actors x 3 episodes in flight at once
    assert summary.collected == 6 and summary.success_rate == 1.0
    assert by_key(tmp_path / "ray.jsonl") == by_key(tmp_path / "thread.jsonl")
