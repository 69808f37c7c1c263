"""Nothing an agent, a model endpoint or a disk does stops a run: lone surrogates, oversized
actions, too many calls, huge validation errors, quadratic inputs, per-task memory, failed
episodes and full disks, each reproduced as it was reported and now ending cleanly."""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st

import servicegym
from servicegym.envs.cli.main import main
from servicegym.envs.environments.parsing import MAX_ACTION_CHARS, MAX_TOOL_CALLS, parse_action
from servicegym.envs.running.rollouts import CollectFailed, collect, read_records
from servicegym.world_state.text import scrub
from servicegym.world_state.tools import MAX_ERROR_CHARS, MAX_QUERY_CHARS

DELIVERY = "servicegym/Delivery-v0"
SURROGATE_CALL = '{"name": "get_user_all_orders", "arguments": {"note": "\\ud83d"}}'


def _surrogate_policy(obs: str, info: dict) -> str:
    """Garbled model output: a JSON-escaped lone surrogate in a call, then one raw in a message."""
    step = info.get("step", 0)
    if step == 0:
        return SURROGATE_CALL
    if step == 1:
        return "Here you go \ud800 ###STOP###"
    return "###STOP###"


def test_a_lone_surrogate_is_recorded_and_the_run_completes_and_resumes(tmp_path):
    out = tmp_path / "s.jsonl"
    summary = collect(DELIVERY, _surrogate_policy, out=out, trials=1, limit=3, progress=False)
    assert summary.collected == 3 and summary.errors == 0 and summary.failed == 0
    text = out.read_text(encoding="utf-8")  # the file encodes: every record was written
    records = read_records(out)
    assert len(records) == 3
    calls = [m for m in records[0]["messages"] if m.get("tool_calls")]
    assert json.loads(calls[0]["tool_calls"][0]["function"]["arguments"]) == {"note": "\ufffd"}
    assert any(m.get("content") == "Here you go \ufffd ###STOP###" for m in records[0]["messages"])
    again = collect(DELIVERY, _surrogate_policy, out=out, trials=1, limit=3, progress=False)
    assert again.skipped == 3 and again.collected == 0 and out.read_text(encoding="utf-8") == text


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=40))
def test_scrub_always_gives_encodable_text(text):
    clean = scrub(text)
    clean.encode("utf-8")
    assert len(clean) <= len(text)
    assert scrub(clean) == clean
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert clean == text


@pytest.fixture(scope="module")
def delivery():
    env = gym.make(DELIVERY, split="test")
    yield env
    env.close()


def _calls(env) -> int:
    return sum(1 for e in env.unwrapped.history if e.kind == "tool_call")


def test_an_action_over_the_limit_gets_a_short_error_and_runs_nothing(delivery):
    delivery.reset(seed=0)
    before = delivery.unwrapped.world.snapshot() if hasattr(delivery.unwrapped.world, "snapshot") else None
    big = "[" + ",".join([SURROGATE_CALL] * 20_000) + "]"  # 1.3 MB
    assert len(big) > MAX_ACTION_CHARS
    obs, _, terminated, truncated, info = delivery.step(big)
    assert "limit" in obs and len(obs) < 500 and info["tool_errors"] == 1
    assert _calls(delivery) == 0 and not (terminated or truncated)
    if before is not None:
        assert delivery.unwrapped.world.snapshot() == before
    assert len(delivery.unwrapped.messages[-2]["content"]) < 2000  # the transcript keeps only the start


def test_too_many_calls_in_one_action_run_none(delivery):
    delivery.reset(seed=0)
    many = json.dumps([{"name": "get_user_all_orders", "arguments": {}}] * 15_000)
    assert len(many) < MAX_ACTION_CHARS
    obs, *_ = delivery.step(many)
    assert f"at most {MAX_TOOL_CALLS}" in obs and len(obs) < 500 and _calls(delivery) == 0
    ok = json.dumps([{"name": "get_user_all_orders", "arguments": {}}] * MAX_TOOL_CALLS)
    delivery.step(ok)
    assert _calls(delivery) == MAX_TOOL_CALLS


@given(st.text(max_size=300), st.integers(0, 3))
def test_observations_never_exceed_the_observation_space(delivery, text, repeat):
    delivery.reset(seed=1)
    action = text * (1 + repeat * 5000)
    obs, *_ = delivery.step(action)
    assert delivery.observation_space.contains(obs)
    assert parse_action(action) is not None


def test_validation_errors_are_summarised(tmp_path):
    env = gym.make("servicegym/Workspace-v0")
    env.reset(seed=0)
    rows = [[{"bad": i}] for i in range(20_000)]  # every cell the wrong type
    action = json.dumps({"name": "write_csv", "arguments": {"path": "x.csv", "columns": ["a"], "rows": rows}})
    assert len(action) < MAX_ACTION_CHARS
    obs, *_ = env.step(action)
    assert "tool_error" in obs and len(obs) < MAX_ERROR_CHARS + 500
    assert "more" in obs  # the first few items, then a count


def test_a_huge_search_query_is_refused_before_searching():
    env = gym.make("servicegym/Payments-v0")
    env.reset(seed=0)
    action = json.dumps({"name": "search_documents", "arguments": {"query": "refund reserve " * 10_000}})
    t0 = time.perf_counter()
    obs, *_ = env.step(action)
    big = time.perf_counter() - t0
    assert "tool_error" in obs and str(MAX_QUERY_CHARS) in obs and len(obs) < MAX_ERROR_CHARS + 500
    small = json.dumps({"name": "search_documents", "arguments": {"query": "refund reserve"}})
    t0 = time.perf_counter()
    obs, *_ = env.step(small)
    assert "tool_result" in obs
    assert big < 20 * (time.perf_counter() - t0) + 0.05  # refused at the edge: no search of 1 MB


def test_edit_file_checks_the_size_before_building_the_text():
    env = gym.make("servicegym/Workspace-v0")
    env.reset(seed=0)
    write = {"name": "write_file", "arguments": {"path": "a.txt", "content": "ab" * 90_000}}
    assert "tool_result" in env.step(json.dumps(write))[0]
    edit = {"name": "edit_file", "arguments": {"path": "a.txt", "old_text": "a", "new_text": "x" * 50_000,
                                                "replace_all": True}}
    tracemalloc.start()
    obs, *_ = env.step(json.dumps(edit))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "tool_error" in obs and "at most" in obs
    assert peak < 50_000_000  # the 4.5 GB result was never built


def _median_step(env, message: str, n: int) -> float:
    times = []
    for _ in range(n):
        env.reset(seed=0, options={"task_id": env.unwrapped.task_ids("test")[0], "session": 1})
        t0 = time.perf_counter()
        env.step(message)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def test_a_long_workspace_message_costs_a_bounded_multiple_of_a_short_one():
    """The scripted workspace user's question scan was quadratic (a 1 MB message took half an hour).
    A complexity guard, not a speed figure: the long message is 1,000x the short one, a linear step
    costs 10-30x (the short step's fixed work dominates it), a quadratic one 10^5x and more, so the
    bound sits far from both (it was 20, which a faster short step alone broke)."""
    env = gym.make("servicegym/Workspace-v0", split="test")
    short = ("Could you tell me which format the report should use? " * 20)[:1000]
    long = ("I am going through the files and will write the summary now, " * 20_000)[: 1 << 20]
    long = long[:-50] + " which format should the report use?"
    _median_step(env, short, 3)  # warm
    ratio = _median_step(env, long, 5) / _median_step(env, short, 15)
    assert ratio <= 300, ratio


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the resident set from /proc (Linux)")
@pytest.mark.parametrize("env_id", sorted(servicegym.ENV_IDS))
def test_fresh_generated_tasks_leave_memory_flat(env_id):
    """A training loop over fresh generated tasks must not grow: each Workspace task left ~0.5 MB
    behind (a cache value held its own weak key), so 400 of them added 200 MB. 400 fresh tasks
    for Workspace, as reported; 150 for the others (past the 64-task cache of generated tasks)."""
    env = gym.make(env_id)
    n = 400 if env_id == "servicegym/Workspace-v0" else 150
    marks = []
    for i in range(n):
        if i in (80, n - 1):
            gc.collect()
            marks.append(_rss_mb())
        env.reset(seed=50_000 + i)  # a new generated task each time
        env.step("Hello! What should I do first?")
    assert marks[1] <= marks[0] * 1.10, marks


# ----- failed episodes: recorded, retried on resume, and evaluate says so -------------------------
class FlakyPolicy:
    """Raises on its first call while ``FAIL`` is set: an endpoint that is down."""

    FAIL = True
    name = "flaky"

    def reset(self, env, obs, info) -> None:
        self.actions = list(env.unwrapped.task.golden_actions)

    def act(self, obs: str) -> str:
        if FlakyPolicy.FAIL:
            raise ConnectionError("the endpoint is down")
        return self.actions.pop(0) if self.actions else "###STOP###"


def test_failed_episodes_are_recorded_then_retried_on_resume(tmp_path):
    out = tmp_path / "f.jsonl"
    FlakyPolicy.FAIL = True
    with pytest.raises(CollectFailed) as every_one_failed:  # a run where nothing worked says so
        collect(DELIVERY, FlakyPolicy, out=out, trials=2, limit=2, progress=False)
    first = every_one_failed.value.summary
    assert first.failed == first.errors == 4 and first.successes == 0
    assert {r["termination_reason"] for r in read_records(out)} == {"policy_error"}
    FlakyPolicy.FAIL = False
    second = collect(DELIVERY, FlakyPolicy, out=out, trials=2, limit=2, progress=False)
    assert second.skipped == 0 and second.collected == 4 and second.failed == 0 and second.successes == 4
    records = read_records(out)
    assert len(records) == 4 and all(r["success"] and r["error"] is None for r in records)
    third = collect(DELIVERY, FlakyPolicy, out=out, trials=2, limit=2, progress=False)
    assert third.skipped == 4 and third.collected == 0


def test_evaluate_exits_non_zero_when_the_endpoint_refuses(tmp_path, capsys, monkeypatch):
    from servicegym.simulators.loopback import Fault, LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with LoopbackServer(handler=lambda body: Fault.status(401, message="bad key")) as server:
        code = main(["evaluate", "--env", DELIVERY, "--policy", "llm", "--base-url", server.base_url, "--model",
                     server.model, "--limit", "2", "--out", str(tmp_path / "ev"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "2 of 2 episodes failed (2 policy_error)" in err and "run the same command again" in err
    assert "sk-wrong" not in err


# ----- a full disk ---------------------------------------------------------------------------------
_FULL_DISK = r"""
import resource, signal, sys
from servicegym.envs.running.rollouts import RolloutWriteError, collect
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
limit = int(sys.argv[2])
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    s = collect("servicegym/Payments-v0", "oracle", out=sys.argv[1], trials=1, limit=6, progress=False)
except RolloutWriteError as err:
    print("WRITE-ERROR", err.strerror)
    sys.exit(3)
print("DONE", s.collected, s.skipped)
"""


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="RLIMIT_FSIZE is a POSIX/Linux limit")
def test_a_full_disk_stops_the_run_with_one_line_keeps_whole_records_and_resumes(tmp_path):
    out = tmp_path / "p.jsonl"
    one = len(json.dumps(collect("servicegym/Payments-v0", "oracle", out=tmp_path / "probe.jsonl", trials=1, limit=1,
                                 progress=False).as_dict()))
    size = (tmp_path / "probe.jsonl").stat().st_size
    assert one > 0
    proc = subprocess.run([sys.executable, "-c", _FULL_DISK, str(out), str(int(size * 2.5))], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert proc.stdout.startswith("WRITE-ERROR") and "whole records" in proc.stdout and "Traceback" not in proc.stdout
    kept = out.read_bytes()
    assert kept.endswith(b"\n") and len(read_records(out)) == kept.count(b"\n") >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl", "probe.jsonl"]  # no lock files left
    # still full: the resume fails the same way and leaves no temporary file
    proc = subprocess.run([sys.executable, "-c", _FULL_DISK, str(out), str(len(kept) + 10)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 3 and not list(tmp_path.glob("*.tmp"))
    assert out.read_bytes() == kept
    # space freed: the resume completes with one record per task
    proc = subprocess.run([sys.executable, "-c", _FULL_DISK, str(out), "0"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith("DONE"), proc.stderr[-2000:]
    records = read_records(out)
    assert len(records) == 6 and len({r["task_id"] for r in records}) == 6 and all(r["success"] for r in records)


def test_contract_limits_are_stated():
    assert servicegym.ENV_IDS
    env = gym.make(DELIVERY)
    assert env.action_space.max_length == MAX_ACTION_CHARS == env.observation_space.max_length
    assert Path(servicegym.__file__).exists()


def test_an_argument_over_its_limit_is_refused_unread():
    from servicegym.world_state.tools import MAX_ARGUMENT_CHARS

    env = gym.make("servicegym/Workspace-v0")
    env.reset(seed=0)
    action = json.dumps({"name": "write_file", "arguments": {"path": "big.txt", "content": "x" * (MAX_ARGUMENT_CHARS + 1)}})
    obs, *_ = env.step(action)
    assert "tool_error" in obs and f"over {MAX_ARGUMENT_CHARS} characters" in obs and len(obs) < MAX_ERROR_CHARS + 500
    assert "big.txt" not in env.unwrapped.world.table("files")


# ----- task files: every malformed input is a TaskFileError or a skipped task with its reason ------
def _project_file(tmp_path, tasks) -> Path:
    from servicegym.envs.tasks import save_task_file

    path = tmp_path / "tasks.json"
    save_task_file(tasks, path)
    return path


def test_a_deeply_nested_task_file_is_a_task_file_error(tmp_path):
    from servicegym.envs.tasks import TaskFileError

    for name, text in [("deep.json", "[" * 100_000 + "]" * 100_000),
                       ("deep_vb.json", '[{"id": "1", "user_scenario": {}, "evaluation_criteria": ' + "[" * 50_000 + "]" * 50_000 + "}]")]:
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(TaskFileError, match=name):
            gym.make(DELIVERY, tasks=str(path))


def test_project_task_files_are_validated(tmp_path, recwarn):
    env = gym.make(DELIVERY, split="test")
    ids = env.unwrapped.task_ids("test")[:5]
    tasks = [env.unwrapped.source.get(i).model_copy(deep=True) for i in ids]
    tasks[1].golden_actions = []
    tasks[2].golden_actions = ['{"name": "teleport_order", "arguments": {}}', *tasks[2].golden_actions]
    tasks[3].golden_actions = tasks[3].golden_actions[:1]  # a route that does not reach success
    tasks[4] = tasks[0].model_copy(deep=True)  # the same id twice
    path = _project_file(tmp_path, tasks)
    loaded = gym.make(DELIVERY, tasks=str(path))
    skipped = {s["task_id"] + "@" + str(s["index"]): (s["field"], s["reason"]) for s in loaded.unwrapped.skipped_tasks}
    assert loaded.unwrapped.task_ids() == [ids[0]]
    assert skipped[f"{ids[1]}@1"][0] == "golden_actions" and "golden route" in skipped[f"{ids[1]}@1"][1]
    assert skipped[f"{ids[2]}@2"][0] == "golden_actions.0" and "teleport_order" in skipped[f"{ids[2]}@2"][1]
    assert skipped[f"{ids[3]}@3"][0] == "golden_actions" and "does not succeed" in skipped[f"{ids[3]}@3"][1]
    assert skipped[f"{ids[0]}@4"][0] == "task_id" and "duplicate" in skipped[f"{ids[0]}@4"][1]
    assert all(str(path) in str(w.message) for w in recwarn.list if "skipped" in str(w.message))


def test_a_wrong_typed_world_field_is_named(tmp_path):
    from servicegym.envs.tasks import TaskFileError

    env = gym.make(DELIVERY, split="test")
    task = env.unwrapped.source.get(env.unwrapped.task_ids("test")[0]).model_copy(deep=True)
    task.world["stores"][0]["score"] = "five stars"
    path = _project_file(tmp_path, [task])
    with pytest.raises(TaskFileError, match=r"tasks\.json.*world\.stores\.0\.score"):
        gym.make(DELIVERY, tasks=str(path))


def test_lone_surrogates_in_a_task_file_are_replaced(tmp_path):
    env = gym.make(DELIVERY, split="test")
    task = env.unwrapped.source.get(env.unwrapped.task_ids("test")[0])
    path = _project_file(tmp_path, [task])
    data = json.loads(path.read_text())
    data["tasks"][0]["user"]["style"] = "\ud83d"
    path.write_text(json.dumps(data))  # ASCII with a \ud83d escape
    loaded = gym.make(DELIVERY, tasks=str(path))
    assert loaded.unwrapped.source.get(task.task_id).user.style == "\ufffd"
