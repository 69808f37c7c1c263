"""Kill and resume on every collection backend (issue 30): a ``collect`` killed with SIGKILL
mid-run on the thread, async, process and Ray backends, then run again with the same command,
ends with exactly one record per (task, trial), no partial line, and the records of an
uninterrupted run; a killed worker (a process-pool worker killed with SIGKILL, a Ray actor killed
with ``ray.kill``) does not stop the run, whose episode is run again on a fresh worker."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

import servicegym  # noqa: F401
from servicegym.envs.running.policies import OraclePolicy
from servicegym.envs.running.rollouts import collect, comparable, read_records

ROOT = Path(__file__).resolve().parents[1]
DELIVERY = "servicegym/Delivery-v0"
TASKS, TRIALS = 8, 2
RAY_LOCAL = {"_node_ip_address": "127.0.0.1", "num_cpus": 2, "include_dashboard": False}

# a file of its own, not ``python -c``: the process backend's spawned workers import the policy from it
SCRIPT = textwrap.dedent(f"""
    import sys, time
    import servicegym
    from servicegym.envs.running.policies import OraclePolicy
    from servicegym.envs.running.rollouts import collect

    class SlowOracle(OraclePolicy):
        name = "slow-oracle"

        def act(self, obs):
            time.sleep(0.02)
            return super().act(obs)

    if __name__ == "__main__":
        backend = sys.argv[2]
        collect("{DELIVERY}", SlowOracle, out=sys.argv[1], limit={TASKS}, trials={TRIALS}, concurrency=2,
                backend=backend, progress=False, policy_name="slow-oracle",
                ray_init_kwargs={RAY_LOCAL!r} if backend == "ray" else None)
""")


def by_key(records):
    return {(r["task_id"], r["trial"]): comparable(r) for r in records}


@functools.cache
def whole_run(tmp: str) -> dict:
    """The records of an uninterrupted run (the thread backend: every backend writes the same)."""
    out = Path(tmp) / "whole.jsonl"
    collect(DELIVERY, OraclePolicy, out=out, limit=TASKS, trials=TRIALS, progress=False, policy_name="slow-oracle")
    return by_key(read_records(out))


def _name(proc: psutil.Process) -> str:
    try:
        return proc.name()
    except psutil.Error:
        return ""


def _ray_or_skip(backend: str) -> None:
    if backend == "ray":
        pytest.importorskip("ray", reason="the Ray backend is the optional extra servicegym[ray]; not installed")


@pytest.mark.parametrize("backend", ["thread", "async", "process", "ray"])
def test_a_collection_killed_with_sigkill_resumes_to_one_record_per_task_and_trial(tmp_path_factory, backend):
    _ray_or_skip(backend)
    tmp = tmp_path_factory.mktemp(f"kill-{backend}")
    script = tmp / "collect_slowly.py"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp / "rollouts.jsonl"
    proc = subprocess.Popen([sys.executable, str(script), str(out), backend], cwd=ROOT)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 3):
        assert proc.poll() is None, "the collection ended before it could be killed"
        time.sleep(0.005)
    assert proc.poll() is None, "the collection ended before it could be killed"
    helpers = psutil.Process(proc.pid).children(recursive=True)  # process workers; Ray's own processes
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = out.read_bytes().count(b"\n")
    assert 3 <= written < TASKS * TRIALS
    # nothing of the killed run goes on working: its workers (process-pool workers, Ray's actors,
    # raylet and GCS) notice and exit. Ray's dashboard and runtime-env agents are left out: they exit
    # by themselves once their raylet is gone, but only after a GCS timeout of a minute or more
    agents = [p for p in helpers if _name(p).endswith("Agent")]
    gone, alive = psutil.wait_procs([p for p in helpers if p not in agents], timeout=60)
    assert not alive, f"left running after the kill: {[(p.pid, _name(p)) for p in alive]}"
    for agent in agents:  # not to leave them behind the test
        with contextlib.suppress(psutil.Error):
            agent.terminate()
    with open(out, "ab") as f:  # as if the kill had landed in the middle of a write
        f.write(out.read_bytes().split(b"\n")[0][:100])
    subprocess.run([sys.executable, str(script), str(out), backend], cwd=ROOT, check=True, timeout=300)
    raw = out.read_bytes()
    assert raw.endswith(b"\n") and all(json.loads(line) for line in raw.splitlines())  # no partial line
    keys = [(r["task_id"], r["trial"]) for r in read_records(out)]
    assert len(keys) == len(set(keys)) == TASKS * TRIALS
    assert by_key(read_records(out)) == whole_run(str(tmp_path_factory.getbasetemp()))


class KillsItsWorkerOnce(OraclePolicy):
    """The oracle, except that the first episode to reach its third step (across every worker:
    ``marker``, a file, says it has happened) kills the worker it runs in, the way the backend's
    own tools do: ``ray.kill`` of its actor, or SIGKILL of its process-pool process."""

    name = "slow-oracle"

    def __init__(self, marker: str, how: str, seed: int = 0) -> None:
        super().__init__()
        self.marker, self.how = marker, how

    def act(self, obs):
        time.sleep(0.02)
        if self.i == 2:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                if self.how == "ray":
                    import ray

                    ray.kill(ray.get_runtime_context().current_actor)
                else:
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(30)  # the kill lands while the episode is in flight
        return super().act(obs)


@pytest.mark.parametrize("backend", ["process", "ray"])
def test_a_worker_killed_mid_run_is_replaced_and_the_run_completes(tmp_path_factory, tmp_path, backend):
    _ray_or_skip(backend)
    marker = tmp_path / "killed"
    out = tmp_path / "rollouts.jsonl"
    policy = functools.partial(KillsItsWorkerOnce, str(marker), backend)
    summary = collect(DELIVERY, policy, out=out, limit=TASKS, trials=TRIALS, concurrency=2, backend=backend,
                      progress=False, policy_name="slow-oracle", ray_init_kwargs=RAY_LOCAL if backend == "ray" else None)
    assert marker.exists(), "no worker was killed"
    assert int(marker.read_text()) != os.getpid()
    assert summary.collected == TASKS * TRIALS and summary.errors == 0 and summary.success_rate == 1.0
    keys = [(r["task_id"], r["trial"]) for r in read_records(out)]
    assert len(keys) == len(set(keys)) == TASKS * TRIALS
    assert by_key(read_records(out)) == whole_run(str(tmp_path_factory.getbasetemp()))
    if backend == "ray":
        import ray

        assert not ray.is_initialized()


class KillsItsWorkerOnTask(OraclePolicy):
    """The oracle, except that on task ``doomed`` it kills its process-pool worker every time."""

    name = "slow-oracle"

    def __init__(self, doomed: str, seed: int = 0) -> None:
        super().__init__()
        self.doomed = doomed

    def reset(self, env, obs, info):
        super().reset(env, obs, info)
        self.kills = info["task_id"] == self.doomed

    def act(self, obs):
        if self.kills:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().act(obs)


def test_an_episode_that_keeps_killing_its_worker_stops_the_run_naming_it(tmp_path):
    import gymnasium as gym

    from servicegym.envs.running.rollouts import MAX_WORKER_LOSSES, WorkerLost

    ids = gym.make(DELIVERY).unwrapped.task_ids("train")[:3]
    out = tmp_path / "rollouts.jsonl"
    policy = functools.partial(KillsItsWorkerOnTask, ids[1])
    with pytest.raises(WorkerLost, match=rf"task '{ids[1]}' trial 0 lost its worker {MAX_WORKER_LOSSES} times"):
        collect(DELIVERY, policy, out=out, task_ids=ids, concurrency=1, backend="process", progress=False,
                policy_name="slow-oracle")
    # the episode finished before it is kept, whole; a rerun (here with a policy that does not crash) resumes
    assert [r["task_id"] for r in read_records(out)] == [ids[0]]
    summary = collect(DELIVERY, OraclePolicy, out=out, task_ids=ids, progress=False, policy_name="slow-oracle")
    assert (summary.skipped, summary.collected) == (1, 2)
