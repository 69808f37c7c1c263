"""The servicegym command line: verbs work end to end; user errors are one line with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.cli.main import main
from tests.envs.test_instore import mini_instore_task
from tests.envs.test_vitabench import mini_task

DELIVERY = "servicegym/Delivery-v0"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_list_shows_every_env_with_tools_and_suite(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for env_id in servicegym.ENV_IDS:
        assert env_id in out
    assert main(["list", "--suites"]) == 0
    assert "delivery_test.json.gz" in capsys.readouterr().out


def test_play_with_piped_golden_actions_succeeds():
    env = gym.make(DELIVERY, split="test")
    task_id = env.unwrapped.task_ids("test")[2]
    env.reset(seed=3, options={"task_id": task_id})
    lines = ["/tools"] + ["\\\n".join(a.split("\n")) for a in env.unwrapped.task.golden_actions]
    proc = subprocess.run([sys.executable, "-m", "servicegym", "play", "--env", DELIVERY, "--task-id", task_id,
                           "--seed", "3"], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "get_user_all_orders" in proc.stdout  # /tools listed the tools
    assert "success=True" in proc.stdout
    assert "reward=1" in proc.stdout


def test_rollout_resume_adds_no_duplicates(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    args = ["rollout", "--env", "servicegym/Payments-v0", "--policy", "random", "--limit", "3", "--out", str(out), "--quiet"]
    assert main(args + ["--trials", "2"]) == 0
    assert main(args + ["--trials", "3"]) == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    keys = [(r["task_id"], r["trial"]) for r in recs]
    assert len(keys) == 9 and len(set(keys)) == 9
    assert "resumed 6" in capsys.readouterr().out


def test_evaluate_writes_rollouts_report_and_plot(tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["evaluate", "--env", DELIVERY, "--policy", "oracle", "--trials", "2", "--limit", "4",
                 "--out", str(out), "--quiet"]) == 0
    recs = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(recs) == 8 and all(r["success"] for r in recs)
    report = (out / "report.md").read_text()
    assert "| k | pass@k | pass^k |" in report
    assert "| 2 | 1.000 [1.000, 1.000] | 1.000 [1.000, 1.000] |" in report
    assert (out / "pass_k.png").read_bytes()[:8] == PNG_MAGIC
    # the report rebuilt from the saved rollouts agrees
    rebuilt = tmp_path / "rep"
    assert main(["report", "--in", str(out / "rollouts.jsonl"), "--out", str(rebuilt)]) == 0
    assert "| 2 | 1.000 [1.000, 1.000] | 1.000 [1.000, 1.000] |" in (rebuilt / "report.md").read_text()
    assert (rebuilt / "pass_k.png").read_bytes()[:8] == PNG_MAGIC


def test_evaluate_an_llm_agent_through_a_local_endpoint(tmp_path, capsys, monkeypatch):
    """``evaluate --policy llm`` against the loopback model replaying golden routes: the default
    backend is async for it, episodes overlap at the endpoint, and every episode succeeds."""
    from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")
    tasks = replayable_tasks(gym.make(DELIVERY), 6)
    out = tmp_path / "llm"
    with LoopbackServer(handler=golden_replay_handler(tasks), latency_s=0.2) as server:
        assert main(["evaluate", "--env", DELIVERY, "--policy", "llm", "--base-url", server.base_url, "--model",
                     server.model, "--task-ids", ",".join(t.task_id for t in tasks), "--concurrency", "6",
                     "--max-prompt-tokens", "100000", "--out", str(out), "--quiet"]) == 0
        assert server.max_in_flight == 6
    recs = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(recs) == 6 and all(r["success"] and r["policy"] == "llm" for r in recs)
    assert "successes=6" in capsys.readouterr().out


def test_report_components_for_payments(tmp_path):
    out = tmp_path / "ev"
    assert main(["evaluate", "--env", "servicegym/Payments-v0", "--policy", "random", "--trials", "1", "--limit", "3",
                 "--out", str(out), "--quiet"]) == 0
    report = (out / "report.md").read_text()
    assert "| G (goal) |" in report and "| F (protection) |" in report
    assert "| 1 | 0.000" in report  # random never completes a payments task


@pytest.mark.parametrize("argv", [
    ["rollout", "--env", "Nope-v0", "--out", "{tmp}/x.jsonl"],
    ["evaluate", "--tasks", "{tmp}/missing.json", "--out", "{tmp}/e"],
    ["evaluate", "--trials", "0", "--out", "{tmp}/e"],
    ["evaluate", "--policy", "smart", "--out", "{tmp}/e"],
    ["evaluate", "--policy", "llm", "--out", "{tmp}/e"],
    ["rollout", "--backend", "mpi", "--out", "{tmp}/x.jsonl"],
    ["evaluate", "--policy", "oracle", "--max-prompt-tokens", "900", "--out", "{tmp}/e"],
    ["evaluate", "--ray-address", "auto", "--out", "{tmp}/e"],
    ["evaluate", "--backend", "ray", "--ray-episodes-per-actor", "0", "--out", "{tmp}/e"],
    ["evaluate", "--policy", "llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--max-prompt-tokens", "0",
     "--out", "{tmp}/e"],
    ["play", "--task-id", "bogus"],
    ["report", "--in", "{tmp}/missing.jsonl", "--out", "{tmp}/r"],
    ["bench", "--which", "nope"],
    ["check", "--tasks", "{tmp}/missing.json"],
])
def test_user_errors_are_one_line_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SERVICEGYM_BASE_URL", raising=False)
    monkeypatch.delenv("SERVICEGYM_MODEL", raising=False)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("servicegym: error: ") and err.count("\n") == 1
    assert not (tmp_path / "e").exists()  # nothing written on a rejected run


def test_wrong_env_in_a_subprocess_exits_2_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "servicegym", "evaluate", "--env", "servicegym/Nope-v0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_train_without_the_rl_extra_says_what_to_install(capsys, monkeypatch):
    from servicegym.envs.integrations import sb3

    def missing() -> None:
        raise ImportError("train() needs torch, stable_baselines3: install a CPU torch")

    monkeypatch.setattr(sb3, "_require_sb3", missing)
    assert main(["train", "--timesteps", "10"]) == 2
    err = capsys.readouterr().err
    assert "servicegym[rl]" in err and err.count("\n") == 1


def test_the_rollout_benchmark_runs_and_prints_its_table(capsys):
    """``servicegym bench --which rollouts`` on a tiny LLM-latency run: the script works end to end
    (its figures are for people to read; nothing here times anything)."""
    assert main(["bench", "--which", "rollouts", "--only-llm", "--quick", "--episodes", "4", "--latency", "0.01",
                 "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "questions" in out and "async x" in out and "4 episodes" in out


# ----- check -----------------------------------------------------------------------------------
def _vitabench_file(tmp_path, tasks, name="tasks.json"):
    path = tmp_path / name
    path.write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf-8")
    return path


def test_check_a_good_file(tmp_path, capsys):
    path = _vitabench_file(tmp_path, [mini_task("M0000001"), mini_task("M0000002")])
    assert main(["check", "--tasks", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"servicegym check: {path} with {DELIVERY}" in out, "the env comes from the file's domain"
    # one screen by default: nothing went wrong, so the header and the summary only
    lines = out.splitlines()
    assert lines[0] == f"servicegym check: {path} with {DELIVERY}" and len(lines) <= 3
    assert lines[-1] == "summary: 2 loaded, 0 skipped; golden route ok for 2 of 2" and "  loaded  " not in out
    assert main(["check", "--tasks", str(path), "--verbose"]) == 0  # every task
    out = capsys.readouterr().out
    assert "M0000001  loaded  golden route ok" in out and "M0000002  loaded  golden route ok" in out
    assert out.rstrip().endswith("summary: 2 loaded, 0 skipped; golden route ok for 2 of 2")


def test_check_a_partly_bad_file_lists_the_skipped_task_and_notes(tmp_path, capsys):
    tasks = [mini_task("M0000001"), mini_task("M0000002"), mini_task("M0000003")]
    tasks[1]["environment"].pop("time")
    tasks[2]["environment"]["stores"]["S1"]["products"][0]["store_id"] = "S9"  # a repair note
    path = _vitabench_file(tmp_path, tasks)
    assert main(["check", "--tasks", str(path), "--env", DELIVERY]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [  # by default: the problems, then the counts
        "M0000002  skipped  (index 1) field environment.time: Field required",
        "2 tasks loaded with 5 repair notes (--verbose shows them)",
        "summary: 2 loaded, 1 skipped; golden route ok for 2 of 2"]
    assert main(["check", "--tasks", str(path), "--env", DELIVERY, "--verbose"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines[1:] if not line.startswith("    note: ")]
    assert rows[:3] == ["M0000001  loaded  golden route ok",
                        "M0000002  skipped  (index 1) field environment.time: Field required",
                        "M0000003  loaded  golden route ok"]
    third = lines.index("M0000003  loaded  golden route ok")
    notes = [line for line in lines[third + 1:] if line.startswith("    note: ")]
    assert any(n.startswith("    note: product P1 names store S9") for n in notes)  # the repair, under its task
    assert lines[-1] == "summary: 2 loaded, 1 skipped; golden route ok for 2 of 2"
    assert main(["check", "--tasks", str(path), "--strict"]) == 1, "strict: the file does not load"


def test_check_a_file_with_no_good_task_exits_1(tmp_path, capsys):
    path = _vitabench_file(tmp_path, [dict(mini_task("M0000001"), instructions=["not", "text"])])
    assert main(["check", "--tasks", str(path)]) == 1
    out = capsys.readouterr().out
    assert "M0000001  skipped  (index 0) field instructions: Input should be a valid string" in out
    assert out.rstrip().endswith("summary: 0 loaded, 1 skipped: no task of the file loads")


def test_check_detects_the_in_store_env(tmp_path, capsys):
    path = _vitabench_file(tmp_path, [mini_instore_task("M1")])
    assert main(["check", "--tasks", str(path), "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "with servicegym/InStore-v0" in out and "M1  loaded  golden route ok" in out


@pytest.mark.parametrize(("extra", "expected"), [
    (["--env", "servicegym/Nope-v0"], "unknown env 'servicegym/Nope-v0'"),
    ([], "cannot tell the env of"),
])
def test_check_usage_errors_exit_2(tmp_path, capsys, extra, expected):
    path = _vitabench_file(tmp_path, [dict(mini_task("M0000001"), domain="bowling")])
    assert main(["check", "--tasks", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("servicegym: error: ") and expected in err and err.count("\n") == 1
