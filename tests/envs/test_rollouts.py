"""``servicegym.envs.running.rollouts.collect``: one complete record per (task, trial), the same records whatever the
backend and concurrency, resume after a SIGKILL without duplicates or losses, policy errors
recorded without stopping the run."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicegym  # noqa: F401
from servicegym.envs.running.policies import OraclePolicy
from servicegym.envs.running.rollouts import RECORD_FIELDS, collect, comparable, episode_seed, read_records

ROOT = Path(__file__).resolve().parents[2]
DELIVERY = "servicegym/Delivery-v0"


def by_key(records):
    return {(r["task_id"], r["trial"]): comparable(r) for r in records}


def keys_of(path):
    return [(r["task_id"], r["trial"]) for r in read_records(path)]


def test_oracle_on_a_suite_writes_one_complete_record_per_task_and_trial(tmp_path):
    env_id = "servicegym/Payments-v0"
    summary = collect(env_id, "oracle", out=tmp_path, split="test", limit=6, trials=2, seed=3, progress=False)
    path = tmp_path / "rollouts.jsonl"
    assert summary.path == str(path) and summary.episodes == summary.collected == 12 and summary.skipped == 0
    assert summary.success_rate == 1.0 and summary.errors == 0
    records = read_records(path)
    ids = gym.make(env_id).unwrapped.task_ids("test")[:6]
    assert sorted(keys_of(path)) == sorted((t, k) for t in ids for k in range(2))
    env = gym.make(env_id)
    for rec in records:
        assert set(RECORD_FIELDS) <= set(rec)
        assert rec["env_id"] == env_id and rec["env_version"] == "v0" and rec["policy"] == "oracle"
        assert rec["servicegym_version"] == importlib.metadata.version("servicegym")
        assert rec["seed"] == episode_seed(3, rec["task_id"], rec["trial"])
        assert rec["success"] is True and rec["error"] is None
        assert rec["rewards"][-1] == 1.0 and rec["return"] == 1.0 and len(rec["rewards"]) == rec["steps"]
        assert {"goal", "process", "protection"} <= set(rec["score"])
        # the transcript is the env's own: replaying the golden route gives the same messages and tools
        obs, info = env.reset(seed=rec["seed"], options={"task_id": rec["task_id"]})
        for a in env.unwrapped.task.golden_actions:
            *_, term, trunc, last = env.step(a)
            if term or trunc:
                break
        assert rec["messages"] == json.loads(json.dumps(env.unwrapped.messages))
        assert rec["tools"] == info["tools"]
        assert rec["termination_reason"] == last["termination_reason"]
        assert rec["messages"][0]["role"] == "system" and any(m["role"] == "tool" for m in rec["messages"])


@pytest.mark.parametrize(("backend", "concurrency"), [("thread", 4), ("async", 4), ("process", 4)])
def test_backend_and_concurrency_do_not_change_the_records(tmp_path, backend, concurrency):
    kw = dict(limit=4, trials=2, seed=5, progress=False)
    collect(DELIVERY, "random", out=tmp_path / "one.jsonl", concurrency=1, **kw)
    collect(DELIVERY, "random", out=tmp_path / "many.jsonl", concurrency=concurrency, backend=backend, **kw)
    one, many = by_key(read_records(tmp_path / "one.jsonl")), by_key(read_records(tmp_path / "many.jsonl"))
    assert len(one) == 8 and one == many
    # the random policy really is seeded per episode: the two trials of a task differ
    tid = next(iter(one))[0]
    assert one[(tid, 0)]["messages"] != one[(tid, 1)]["messages"]


def test_resume_skips_what_is_there_and_adds_the_rest(tmp_path):
    out = tmp_path / "r.jsonl"
    first = collect(DELIVERY, "random", out=out, limit=3, trials=1, progress=False)
    assert first.collected == 3
    second = collect(DELIVERY, "random", out=out, limit=3, trials=2, progress=False)
    assert (second.skipped, second.collected, second.episodes) == (3, 3, 6)
    assert sorted(keys_of(out)) == sorted(set(keys_of(out))) and len(keys_of(out)) == 6
    again = collect(DELIVERY, "random", out=out, limit=3, trials=2, progress=False)
    assert again.collected == 0 and len(keys_of(out)) == 6
    fresh = collect(DELIVERY, "random", out=out, limit=2, trials=1, resume=False, progress=False)
    assert fresh.collected == 2 and len(keys_of(out)) == 2
    with pytest.raises(ValueError, match="seed"):
        collect(DELIVERY, "random", out=out, limit=2, trials=1, seed=9, progress=False)


def test_a_truncated_last_line_is_dropped_and_the_file_rewritten(tmp_path):
    out = tmp_path / "r.jsonl"
    collect(DELIVERY, "oracle", out=out, limit=3, progress=False)
    lines = out.read_bytes().split(b"\n")[:-1]
    out.write_bytes(lines[0] + b"\n" + lines[1] + b"\n" + lines[2][: len(lines[2]) // 2])  # killed mid-write
    assert len(read_records(out)) == 2
    summary = collect(DELIVERY, "oracle", out=out, limit=3, progress=False)
    assert (summary.skipped, summary.collected) == (2, 1)
    raw = out.read_bytes()
    assert raw.endswith(b"\n") and all(json.loads(line) for line in raw.split(b"\n")[:-1])
    assert sorted(keys_of(out)) == sorted({(r, 0) for r, _ in keys_of(out)}) and len(keys_of(out)) == 3


def test_a_corrupt_line_in_the_middle_is_an_error_not_silently_dropped(tmp_path):
    out = tmp_path / "r.jsonl"
    collect(DELIVERY, "oracle", out=out, limit=2, progress=False)
    lines = out.read_bytes().split(b"\n")
    out.write_bytes(b"{not json\n" + b"\n".join(lines))
    with pytest.raises(ValueError, match="line 1"):
        collect(DELIVERY, "oracle", out=out, limit=2, progress=False)


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    import servicegym
    from servicegym.envs.running.policies import OraclePolicy
    from servicegym.envs.running.rollouts import collect

    class SlowOracle(OraclePolicy):
        def act(self, obs):
            time.sleep(0.02)
            return super().act(obs)

    collect("servicegym/Delivery-v0", SlowOracle, out=sys.argv[1], limit=10, trials=2, concurrency=2,
            progress=False)
""")


def test_a_killed_and_restarted_collection_has_exactly_one_record_per_task_and_trial(tmp_path):
    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(out)], cwd=ROOT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 4):
        assert proc.poll() is None, "the collection ended before it could be killed"
        time.sleep(0.005)
    assert proc.poll() is None, "the collection ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = out.read_bytes().count(b"\n")
    assert 4 <= written < 20
    with open(out, "ab") as f:  # as if the kill had landed in the middle of a write
        f.write(out.read_bytes().split(b"\n")[0][:100])
    subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(out)], cwd=ROOT, check=True, timeout=300)
    keys = keys_of(out)
    assert len(keys) == len(set(keys)) == 20
    # and the records are those of an uninterrupted run
    collect(DELIVERY, OraclePolicy, out=tmp_path / "whole.jsonl", limit=10, trials=2, progress=False)
    assert by_key(read_records(out)) == by_key(read_records(tmp_path / "whole.jsonl"))


class FlakyPolicy(OraclePolicy):
    """The oracle, except that it raises on the second step of every other task."""

    name = "flaky"

    def reset(self, env, obs, info):
        super().reset(env, obs, info)
        self.fails = int(info["task_id"].split("/")[2]) % 2 == 1

    def act(self, obs):
        if self.fails and self.i == 1:
            raise RuntimeError("model endpoint timed out")
        return super().act(obs)


def test_a_policy_that_raises_is_recorded_with_its_error_and_the_run_goes_on(tmp_path):
    out = tmp_path / "r.jsonl"
    summary = collect(DELIVERY, FlakyPolicy, out=out, limit=6, concurrency=2, progress=False)
    records = read_records(out)
    assert len(records) == summary.collected == 6
    failed = [r for r in records if r["error"]]
    assert summary.errors == len(failed) == 3
    for r in failed:
        assert r["error"] == "RuntimeError: model endpoint timed out"
        assert r["success"] is False and r["termination_reason"] == "policy_error" and r["steps"] == 1
        assert r["policy"] == "flaky" and [m["role"] for m in r["messages"]][:2] == ["system", "user"]
    assert all(r["success"] for r in records if not r["error"])
    assert summary.success_rate == 0.5


def stop_at_once(obs, info):
    assert "task_id" in info
    return "###STOP###"


def test_a_plain_callable_policy_and_the_progress_bar(tmp_path, capsys):
    summary = collect(DELIVERY, stop_at_once, out=tmp_path, limit=3, progress=True)
    records = read_records(tmp_path / "rollouts.jsonl")
    assert summary.policy == "stop_at_once" and summary.success_rate == 0.0
    assert all(r["steps"] == 1 and r["termination_reason"] == "agent_stop" and r["error"] is None for r in records)
    err = capsys.readouterr().err
    assert "3/3" in err and "success=0.0%" in err
    collect(DELIVERY, stop_at_once, out=tmp_path / "quiet.jsonl", limit=2, progress=False)
    assert capsys.readouterr().err == ""


def test_bad_arguments_fail_before_anything_runs(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(ValueError, match="backend"):
        collect(DELIVERY, "oracle", out=out, backend="dask")
    with pytest.raises(ValueError, match="unknown policy"):
        collect(DELIVERY, "gpt", out=out)
    with pytest.raises(ValueError, match="unknown task ids"):
        collect(DELIVERY, "oracle", out=out, task_ids=["delivery/test/0/d0", "no/such/task"])
    with pytest.raises(ValueError, match="factory"):
        collect(DELIVERY, OraclePolicy(), out=out, concurrency=2)
    with pytest.raises(ValueError, match="picklable"):
        collect(DELIVERY, lambda obs, info: "hi", out=out, backend="process", limit=1, progress=False)
    with pytest.raises(ValueError, match="trials"):
        collect(DELIVERY, "oracle", out=out, trials=0)
    assert not out.exists() or read_records(out) == []


@pytest.mark.parametrize("backend", ["auto", "thread"])
def test_the_llm_policy_through_a_local_endpoint_with_failures_recorded(tmp_path, monkeypatch, backend):
    """The "llm" policy (envs.llm_policy) against the loopback chat server, four episodes at a time:
    a 500 on the tasks whose opening message has odd length, ``###STOP###`` on the others."""
    from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rollouts")
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)

    def handler(body):
        opening = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return Fault.status(500) if len(opening) % 2 else text_reply("Goodbye! ###STOP###")

    with LoopbackServer(handler=handler, latency_s=0.02) as server:
        llm = server.config(timeout_s=2.0, max_retries=0, backoff_base_s=0.01)
        summary = collect(DELIVERY, "llm", out=tmp_path, limit=8, concurrency=4, progress=False,
                          policy_kwargs={"llm": llm}, backend=backend)
    assert summary.backend == ("async" if backend == "auto" else "thread")  # auto: the llm policy has aact
    records = read_records(tmp_path / "rollouts.jsonl")
    assert len(records) == summary.collected == 8 and {r["policy"] for r in records} == {"llm"}
    odd = {r["task_id"] for r in records if len(r["messages"][1]["content"]) % 2}
    assert odd and odd != {r["task_id"] for r in records}, "the test needs both kinds of task"
    for r in records:
        if r["task_id"] in odd:
            assert r["error"] and r["termination_reason"] == "policy_error" and r["steps"] == 0
        else:
            assert r["error"] is None and r["termination_reason"] == "agent_stop"
            assert r["messages"][-1] == {"role": "assistant", "content": "Goodbye! ###STOP###"}
    assert summary.errors == len(odd)


def test_the_llm_policy_gives_the_same_records_on_every_backend(tmp_path, monkeypatch):
    """Thread and async backends (and concurrency 1) write the same LLM-agent transcripts: golden
    routes replayed by the loopback model as native tool calls, so every episode succeeds."""
    from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rollouts")
    tasks = replayable_tasks(gym.make(DELIVERY), 6)
    ids = [t.task_id for t in tasks]
    runs = {}
    with LoopbackServer(handler=golden_replay_handler(tasks)) as server:
        llm = server.config(timeout_s=5.0, max_retries=0)
        for backend, conc in [("thread", 1), ("thread", 3), ("async", 6)]:
            out = tmp_path / f"{backend}{conc}.jsonl"
            summary = collect(DELIVERY, "llm", out=out, task_ids=ids, trials=2, concurrency=conc, backend=backend,
                              progress=False, policy_kwargs={"llm": llm})
            assert summary.success_rate == 1.0 and summary.errors == 0
            runs[(backend, conc)] = by_key(read_records(out))
    first = runs[("thread", 1)]
    assert len(first) == 12 and all(r == first for r in runs.values())
    assert all(any(m.get("tool_calls") for m in r["messages"]) for r in first.values())


@pytest.fixture(scope="module")
def three_records(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("three") / "r.jsonl"
    collect("servicegym/Payments-v0", "random", out=out, limit=3, progress=False)
    return out.read_bytes()


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=10**9))
def test_a_file_cut_at_any_byte_keeps_exactly_its_complete_records(three_records, tmp_path_factory, cut):
    """Wherever a kill cuts the file, reading it back keeps every record whose JSON is whole and
    repairs the file to exactly those lines."""
    raw = three_records[: cut % (len(three_records) + 1)]
    path = tmp_path_factory.mktemp("cut") / "r.jsonl"
    path.write_bytes(raw)
    lines = three_records.split(b"\n")[:-1]
    whole = [line for i, line in enumerate(lines) if len(b"\n".join(lines[: i + 1])) <= len(raw)]
    assert [json.dumps(r, ensure_ascii=False).encode() for r in read_records(path, repair=True)] == whole
    assert path.read_bytes() == b"".join(line + b"\n" for line in whole)


def test_a_second_collect_into_the_same_file_is_refused(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "r.jsonl"
    with open(tmp_path / "r.jsonl.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running collect holds it
        with pytest.raises(RuntimeError, match="another collect"):
            collect(DELIVERY, "oracle", out=out, limit=1, progress=False)
        fcntl.flock(lock, fcntl.LOCK_UN)
    assert collect(DELIVERY, "oracle", out=out, limit=1, progress=False).collected == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]  # the finished run leaves no lock file


def test_the_lock_is_not_lost_when_its_holder_removes_the_file_under_a_waiting_collect(tmp_path, monkeypatch):
    """A collect that opened the lock file just before its holder finished (and removed it) must
    lock the new file, not the removed one, or two collects would write at once."""
    from servicegym.envs.running import rollouts

    out = tmp_path / "r.jsonl"
    lock_path = tmp_path / "r.jsonl.lock"
    stale = open(lock_path, "a")  # what the racing collect opened: then the holder unlinks it
    lock_path.unlink()
    real_open = open
    opened = []

    def racing_open(path, *a, **k):
        if str(path) == str(lock_path) and not opened:
            opened.append(path)
            return stale  # the first open returns the removed file, as in the race
        return real_open(path, *a, **k)

    monkeypatch.setattr(rollouts, "open", racing_open, raising=False)
    with rollouts._exclusive(out):
        assert lock_path.exists() and len(opened) == 1  # it retried and holds the file at the path
        fcntl = pytest.importorskip("fcntl")
        with real_open(lock_path, "a") as other, pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert not lock_path.exists() and stale.closed


def two_turns(obs, info):
    """Greets, then ends the conversation once the (loopback) user has answered."""
    return "###STOP###" if "noodles" in obs else "Hello, what can I do for you?"


def test_async_backend_runs_blocking_llm_users_a_thread_per_episode(tmp_path, monkeypatch):
    """With ``user="llm"`` the env's step blocks on the model: the async backend steps each episode
    in a thread of its own (12 at once here, more than asyncio's default executor would give), and
    writes what the thread backend writes."""
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-rollouts")
    runs = {}
    with LoopbackServer(handler=lambda body: "I would like some noodles, please.", latency_s=0.3) as server:
        kw = dict(limit=12, progress=False, env_kwargs={"user": "llm", "llm": server.config(timeout_s=10)})
        for backend in ("async", "thread"):
            server.max_in_flight = 0
            summary = collect(DELIVERY, two_turns, out=tmp_path / f"{backend}.jsonl", concurrency=12, backend=backend,
                              **kw)
            assert summary.errors == 0 and summary.collected == 12
            assert server.max_in_flight == 12
            runs[backend] = by_key(read_records(tmp_path / f"{backend}.jsonl"))
    assert runs["async"] == runs["thread"]
    assert all([m["role"] for m in r["messages"]] == ["system", "user", "assistant", "user", "assistant"]
               and r["messages"][3]["content"] == "I would like some noodles, please." for r in runs["async"].values())


def test_async_backend_called_from_a_running_event_loop(tmp_path):
    """``collect`` is a plain function: called from inside a running loop (a notebook cell), the
    async backend runs its own loop in a helper thread instead of failing."""
    import asyncio

    async def notebook_cell():
        return collect(DELIVERY, "oracle", out=tmp_path / "nb.jsonl", limit=3, concurrency=3, backend="async",
                       progress=False)

    summary = asyncio.run(notebook_cell())
    assert summary.backend == "async" and summary.collected == 3 and summary.success_rate == 1.0
    collect(DELIVERY, "oracle", out=tmp_path / "plain.jsonl", limit=3, progress=False)
    assert by_key(read_records(tmp_path / "nb.jsonl")) == by_key(read_records(tmp_path / "plain.jsonl"))


@pytest.mark.parametrize(("env_id", "backend", "lists"), [(DELIVERY, "thread", 1), ("servicegym/Workspace-v0", "process", 5)])
def test_tool_lists_stored_once_read_back_as_if_inline(tmp_path, env_id, backend, lists):
    """``inline_tools=False``: each distinct tool list is one line of the sidecar, written once
    whichever worker met it first; ``read_records`` gives back exactly the inline records."""
    from servicegym.envs.running.rollouts import TOOLS_REF, tools_path

    kw = dict(limit=5, trials=2, seed=1, progress=False, concurrency=2, backend=backend)
    collect(env_id, "oracle", out=tmp_path / "inline.jsonl", **kw)
    collect(env_id, "oracle", out=tmp_path / "refs.jsonl", inline_tools=False, **kw)
    side = tools_path(tmp_path / "refs.jsonl")
    assert side.name == "refs.tools.jsonl"
    stored = [json.loads(line) for line in side.read_text(encoding="utf-8").splitlines()]
    assert len(stored) == len({t["digest"] for t in stored}) == lists
    raw = [json.loads(line) for line in (tmp_path / "refs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(set(r["tools"]) == {TOOLS_REF} for r in raw)
    assert read_records(tmp_path / "refs.jsonl", resolve_tools=False) == raw
    assert by_key(read_records(tmp_path / "refs.jsonl")) == by_key(read_records(tmp_path / "inline.jsonl"))
    assert (tmp_path / "refs.jsonl").stat().st_size < 0.6 * (tmp_path / "inline.jsonl").stat().st_size


def test_tool_lists_survive_resume_and_a_missing_sidecar_is_named(tmp_path):
    from servicegym.envs.running.rollouts import tools_path

    out = tmp_path / "r.jsonl"
    collect(DELIVERY, "random", out=out, limit=2, progress=False, inline_tools=False)
    summary = collect(DELIVERY, "random", out=out, limit=5, progress=False, inline_tools=False)
    assert (summary.skipped, summary.collected) == (2, 3)
    assert len(tools_path(out).read_text(encoding="utf-8").splitlines()) == 1  # not written again on resume
    assert len(read_records(out)) == 5 and all(isinstance(r["tools"], list) for r in read_records(out))
    tools_path(out).unlink()
    with pytest.raises(ValueError, match=r"r\.tools\.jsonl"):
        read_records(out)
    collect(DELIVERY, "random", out=out, limit=1, progress=False, resume=False)  # a fresh start is inline again
    assert not tools_path(out).exists() and isinstance(read_records(out)[0]["tools"], list)


def test_a_failure_outside_the_episodes_stops_the_async_backend_cleanly(tmp_path, monkeypatch):
    """A failure that is not an episode's own (here the worker, as a full disk would be the writer)
    stops the async run with that error; the file keeps only whole records and a rerun resumes."""
    import servicegym.envs.running.rollouts as rollouts

    out = tmp_path / "r.jsonl"
    real = rollouts.EpisodeWorker.arun
    calls = {"n": 0}

    async def arun(self, job):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError(28, "No space left on device")
        return await real(self, job)

    monkeypatch.setattr(rollouts.EpisodeWorker, "arun", arun)
    with pytest.raises(OSError, match="No space"):
        collect(DELIVERY, "oracle", out=out, limit=10, concurrency=3, backend="async", progress=False)
    kept = read_records(out)
    assert 0 < len(kept) < 10 and len({r["task_id"] for r in kept}) == len(kept)
    monkeypatch.setattr(rollouts.EpisodeWorker, "arun", real)
    summary = collect(DELIVERY, "oracle", out=out, limit=10, concurrency=3, backend="async", progress=False)
    assert summary.skipped == len(kept) and len(read_records(out)) == 10


def test_a_run_where_every_episode_errors_raises_with_the_summary_and_keeps_the_records(tmp_path, capsys):
    """An endpoint that is down makes every episode error: that must not pass quietly as a result."""
    from servicegym.envs.cli.main import main
    from servicegym.envs.running.rollouts import CollectFailed

    def broken(obs, info):
        raise ConnectionError("endpoint unreachable at 127.0.0.1:9")

    out = tmp_path / "r.jsonl"
    with pytest.raises(CollectFailed, match=r"every one of the 3 episodes failed \(3 with an endpoint or policy error\)"
                                            r"; the first error: .*endpoint unreachable") as caught:
        collect(DELIVERY, broken, out=out, limit=3, progress=False)
    assert caught.value.summary.errors == caught.value.summary.failed == 3 and len(read_records(out)) == 3
    # one that fails some episodes only returns as before
    calls = []

    def flaky(obs, info):
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("once")
        return "###STOP###"

    assert collect(DELIVERY, flaky, out=tmp_path / "f.jsonl", limit=3, progress=False).errors == 1
    # the CLI says so on stderr and exits 1, with its summary line
    code = main(["rollout", "--policy", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--limit", "2",
                 "--quiet", "--out", str(tmp_path / "cli.jsonl")])
    captured = capsys.readouterr()
    assert code == 1 and "every one of the 2 episodes failed" in captured.err and "errors=2" in captured.out
