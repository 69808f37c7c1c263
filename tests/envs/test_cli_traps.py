"""The command line without traps: one --out never mixes runs, report never pools policies,
--no-resume says what it removes, tables fit the terminal, play edits lines, bench names one
benchmark from one list and passes --quick."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time

import pytest

from servicegym.envs.cli import main as cli
from servicegym.envs.cli.main import BENCHES, main
from servicegym.envs.cli.report import print_table, summarize_records
from servicegym.envs.running.rollouts import collect, read_records

DELIVERY = "servicegym/Delivery-v0"


def test_out_refuses_a_run_of_another_policy_env_or_settings(tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["evaluate", "--env", DELIVERY, "--policy", "oracle", "--limit", "2", "--out", str(out), "--quiet"]) == 0
    before = (out / "rollouts.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["evaluate", "--env", DELIVERY, "--policy", "random", "--limit", "2", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "holds episodes of another run" in err and "policy 'oracle'" in err and err.count("\n") == 1
    assert main(["evaluate", "--env", "servicegym/Payments-v0", "--policy", "oracle", "--limit", "2", "--out", str(out),
                 "--quiet"]) == 2
    with pytest.raises(ValueError, match="other settings"):  # same env and policy, other env arguments
        collect(DELIVERY, "oracle", out=out / "rollouts.jsonl", limit=2, env_kwargs={"max_steps": 30}, progress=False)
    assert (out / "rollouts.jsonl").read_bytes() == before  # nothing appended, nothing lost
    # the same run resumes as before
    assert main(["evaluate", "--env", DELIVERY, "--policy", "oracle", "--limit", "2", "--out", str(out), "--quiet"]) == 0


def test_no_resume_says_what_it_removes(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert main(["rollout", "--env", DELIVERY, "--policy", "oracle", "--limit", "3", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["rollout", "--env", DELIVERY, "--policy", "random", "--limit", "2", "--out", str(out), "--quiet",
                 "--no-resume"]) == 0
    assert f"removing the 3 episodes already in {out}" in capsys.readouterr().err
    assert {r["policy"] for r in read_records(out)} == {"random"}


def test_report_never_pools_policies(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    collect(DELIVERY, "oracle", out=a, limit=3, progress=False)
    collect(DELIVERY, "random", out=b, limit=3, progress=False)
    records = read_records(a) + read_records(b)
    summaries = summarize_records(records, bootstrap=10)
    assert [(s.domain, s.policies, s.trials) for s in summaries] == [("delivery", ["oracle"], 1), ("delivery", ["random"], 1)]
    assert summaries[0].metrics["pass^1"] == 1.0 and summaries[1].metrics["pass^1"] == 0.0


def test_tables_fit_the_terminal_and_wide_shows_everything(tmp_path, monkeypatch):
    out = tmp_path / "ws.jsonl"
    collect("servicegym/Workspace-v0", "oracle", out=out, limit=1, progress=False)
    summaries = summarize_records(read_records(out), bootstrap=10)
    monkeypatch.setenv("COLUMNS", "100")
    buf = io.StringIO()
    print_table(summaries, file=buf)
    lines = buf.getvalue().splitlines()
    assert max(len(x) for x in lines) <= 100 and len(lines) <= 20, buf.getvalue()
    wide = io.StringIO()
    print_table(summaries, file=wide, wide=True)
    assert len(wide.getvalue()) > 2 * len(buf.getvalue())  # every per-session component


def test_bench_names_one_benchmark_and_passes_quick(monkeypatch, capsys):
    seen = []

    def fake_run(cmd, **kwargs):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout="", stderr="")

    monkeypatch.setattr(cli.subprocess, "run", fake_run)
    assert main(["bench"]) == 2
    assert "name a benchmark" in capsys.readouterr().err
    assert main(["bench", "nope"]) == 2
    for name in BENCHES:
        assert main(["bench", name, "--quick"]) == 0
        assert seen[-1][1].endswith(f"bench_{name}.py") and "--quick" in seen[-1]
    assert main(["bench", "--which", "envs"]) == 0 and "--quick" not in seen[-1]
    for name in BENCHES:  # every script the list names exists and takes --quick
        assert (cli.scripts_dir() / f"bench_{name}.py").is_file()
        assert "--quick" in (cli.scripts_dir() / f"bench_{name}.py").read_text()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_play_edits_lines_at_a_terminal(tmp_path):
    """Arrow keys move the cursor (readline), they do not reach the user as ^[[D."""
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "servicegym", "play", "--env", DELIVERY, "--task-id", "delivery/test/0/d0"],
                            stdin=slave, stdout=slave, stderr=slave, env={**os.environ, "TERM": "xterm"}, close_fds=True)
    os.close(slave)
    out = b""

    def read_until(marker: bytes, timeout: float = 60.0) -> None:
        nonlocal out
        end = time.monotonic() + timeout
        while marker not in out and time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    out += os.read(master, 4096)
                except OSError:
                    break

    try:
        read_until(b"agent> ")
        os.write(master, b"/tools xy\x1b[DZ\r")  # type "xy", one left, "Z": the line is "xZy"
        read_until(b"no tool")
        read_until(b"agent> ")
        os.write(master, b"/quit\r")
        read_until(b"quit before")
    finally:
        proc.kill()
        os.close(master)
    text = out.decode("utf-8", "replace")
    assert "no tool 'xZy'" in text, text[-500:]
    assert "\x1b[D" not in text.split("no tool", 1)[1][:20]
    json.dumps(text)
