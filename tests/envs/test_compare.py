"""Comparing runs (issue 25): ``servicegym report RUN RUN ...`` and ``servicegym.envs.cli.compare``:
one row per run with its headline metrics and errors, the paired per-task difference of two runs
with a seeded paired-bootstrap interval and win/tie counts, refusals of runs that cannot be paired,
the files it writes, and the ``run.json`` that ``evaluate`` leaves for it to label runs by."""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from servicegym.envs.cli import compare as cmpmod
from servicegym.envs.cli.main import main
from servicegym.envs.cli.report import BOOTSTRAP_SAMPLES
from servicegym.rewards.metrics import bootstrap_ci

DELIVERY = "servicegym/Delivery-v0"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rec(task: str, trial: int, success: bool, policy: str = "llm", error: str | None = None) -> dict[str, Any]:
    """A record as ``collect`` writes it (the fields the report and the comparison read)."""
    rec: dict[str, Any] = {"env_id": DELIVERY, "env_version": "v0", "domain": "delivery", "policy": policy,
                           "task_id": task, "trial": trial, "seed": 1000 + trial, "success": success and error is None,
                           "steps": 5, "tool_errors": 0, "termination_reason": "policy_error" if error else "user_stop",
                           "score": {} if error else {"rubric_fraction": 1.0 if success else 0.5}, "error": error}
    return rec


def _write(path: Path, recs: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    if meta is not None:
        (path.parent / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def _synthetic(rates: dict[str, int], trials: int = 2, policy: str = "llm", errors: int = 0) -> list[dict[str, Any]]:
    """Per task, ``rates[task]`` successes out of ``trials``; the last ``errors`` trials of every
    task that failed are endpoint errors instead."""
    out = []
    for task, c in rates.items():
        for t in range(trials):
            err = "LLMError: 500" if t >= trials - errors and t >= c else None
            out.append(_rec(task, t, t < c, policy, err))
    return out


def _meta(model: str, scoring: str = "rubric") -> dict[str, Any]:
    return {"model": model, "policy": "llm", "env_id": DELIVERY, "scoring": scoring, "split": "test", "trials": 2}


# ----- the paired comparison on synthetic runs ---------------------------------------------------
def test_paired_difference_interval_and_wins(tmp_path):
    a = {"t1": 0, "t2": 1, "t3": 2, "t4": 2, "t5": 0, "t6": 1}
    b = {"t1": 2, "t2": 2, "t3": 2, "t4": 1, "t5": 1, "t6": 1}
    pa = _write(tmp_path / "a" / "rollouts.jsonl", _synthetic(a), _meta("model-a"))
    pb = _write(tmp_path / "b" / "rollouts.jsonl", _synthetic(b), _meta("model-b"))
    cmp = cmpmod.compare(cmpmod.load_runs([pa.parent, pb]))
    assert [r.label for r in cmp.runs] == ["model-a", "model-b"]
    (p,) = cmp.pairs
    diffs = [(b[t] - a[t]) / 2 for t in sorted(a)]
    assert p.diff == pytest.approx(np.mean(diffs))
    assert p.ci == pytest.approx(bootstrap_ci(diffs, BOOTSTRAP_SAMPLES, 0.95, seed=0))  # seeded: reproducible
    assert p.ci[0] <= p.diff <= p.ci[1]
    assert (p.b_wins, p.a_wins, p.ties) == (3, 1, 2) and p.tasks == 6 and not p.intersection
    # the same runs give the same interval
    assert cmpmod.compare(cmpmod.load_runs([pa, pb])).pairs[0].ci == p.ci


def test_identical_runs_differ_by_zero(tmp_path):
    recs = _synthetic({"t1": 1, "t2": 2, "t3": 0})
    pa = _write(tmp_path / "x" / "rollouts.jsonl", recs, _meta("m"))
    pb = _write(tmp_path / "y" / "rollouts.jsonl", recs, _meta("m"))
    cmp = cmpmod.compare(cmpmod.load_runs([pa, pb]))
    (p,) = cmp.pairs
    assert p.diff == 0 and p.ci == (0.0, 0.0) and (p.b_wins, p.a_wins, p.ties) == (0, 0, 3)
    assert [r.label for r in cmp.runs] == ["m (x)", "m (y)"]  # one label twice: the directory added


def test_errored_episodes_are_failures_in_rows_and_pairs(tmp_path):
    # b: t1 one success then an endpoint error; t2 two errors
    a = _synthetic({"t1": 2, "t2": 2}, policy="oracle")
    b = [_rec("t1", 0, True), _rec("t1", 1, False, error="LLMError: 500"),
         _rec("t2", 0, False, error="LLMError: timeout"), _rec("t2", 1, False, error="LLMError: timeout")]
    cmp = cmpmod.compare(cmpmod.load_runs([_write(tmp_path / "a.jsonl", a), _write(tmp_path / "b.jsonl", b)]))
    (s,) = cmp.runs[1].summaries
    assert s.errors == 3 and s.error_rate == 0.75 and s.metrics["avg@2"] == pytest.approx(0.25)
    (p,) = cmp.pairs
    assert p.diff == pytest.approx(((0.5 - 1) + (0 - 1)) / 2) and (p.b_wins, p.a_wins, p.ties) == (0, 2, 0)
    # bare files are labelled by their records' policy and the file name
    assert [r.label for r in cmp.runs] == ["oracle (a.jsonl)", "llm (b.jsonl)"]
    md = cmpmod.markdown(cmp, plot=None)
    assert md.splitlines()[2].startswith("**3 of 8 episodes ended in an endpoint or policy error")
    assert "| 3 (75%) |" in md


def test_more_than_two_runs_compare_each_with_the_first(tmp_path):
    base = _write(tmp_path / "base.jsonl", _synthetic({"t1": 1, "t2": 1}))
    up = _write(tmp_path / "up.jsonl", _synthetic({"t1": 2, "t2": 2}))
    down = _write(tmp_path / "down.jsonl", _synthetic({"t1": 0, "t2": 1}))
    cmp = cmpmod.compare(cmpmod.load_runs([base, up, down]))
    assert [(p.a, p.b) for p in cmp.pairs] == [("llm (base.jsonl)", "llm (up.jsonl)"), ("llm (base.jsonl)", "llm (down.jsonl)")]
    assert [p.diff for p in cmp.pairs] == [pytest.approx(0.5), pytest.approx(-0.25)]


# ----- refusals ----------------------------------------------------------------------------------
def test_mismatched_tasks_are_refused_unless_allowed(tmp_path, capsys):
    pa = _write(tmp_path / "a" / "rollouts.jsonl", _synthetic({"t1": 2, "t2": 0, "t3": 1}), _meta("a"))
    pb = _write(tmp_path / "b" / "rollouts.jsonl", _synthetic({"t2": 2, "t3": 1, "t4": 0}), _meta("b"))
    with pytest.raises(cmpmod.CompareError, match="ran different tasks"):
        cmpmod.compare(cmpmod.load_runs([pa, pb]))
    assert main(["report", str(pa.parent), str(pb.parent), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("servicegym: error: a and b ran different tasks") and "--allow-mismatch" in err
    assert "\n" not in err and not (tmp_path / "c" / "compare.md").exists()

    cmp = cmpmod.compare(cmpmod.load_runs([pa, pb]), allow_mismatch=True)
    (p,) = cmp.pairs
    assert p.intersection and p.tasks == 2 and (p.only_a, p.only_b) == (1, 1)
    assert p.diff == pytest.approx(((1 - 0) + (0.5 - 0.5)) / 2)  # t2: 0 -> 1, t3: tie
    assert (p.b_wins, p.a_wins, p.ties) == (1, 0, 1)
    assert any("2 tasks in common" in n for n in cmp.notes)
    assert main(["report", str(pa.parent), str(pb.parent), "--out", str(tmp_path / "c"), "--allow-mismatch"]) == 0
    assert "2 tasks in common" in (tmp_path / "c" / "compare.md").read_text()
    # no task in common: nothing to pair, allowed or not
    pc = _write(tmp_path / "c.jsonl", _synthetic({"t9": 1}))
    with pytest.raises(cmpmod.CompareError, match="no task in common"):
        cmpmod.compare(cmpmod.load_runs([pa, pc]), allow_mismatch=True)


def test_different_scoring_modes_are_refused_unless_allowed(tmp_path, capsys):
    recs = _synthetic({"t1": 1, "t2": 2})
    pa = _write(tmp_path / "a" / "rollouts.jsonl", recs, _meta("m", "rubric"))
    pb = _write(tmp_path / "b" / "rollouts.jsonl", recs, _meta("m", "strict"))
    assert main(["report", str(pa.parent), str(pb.parent), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert "scored differently" in err and "rubric" in err and "strict" in err and "\n" not in err
    cmp = cmpmod.compare(cmpmod.load_runs([pa, pb]), allow_mismatch=True)
    assert any("scored differently" in n for n in cmp.notes)


def test_a_run_of_several_policies_or_no_run_is_refused(tmp_path, capsys):
    mixed = _write(tmp_path / "mixed.jsonl", _synthetic({"t1": 1}, policy="a") + _synthetic({"t1": 1}, policy="b"))
    one = _write(tmp_path / "one.jsonl", _synthetic({"t1": 1}))
    with pytest.raises(cmpmod.CompareError, match="2 policies"):
        cmpmod.compare(cmpmod.load_runs([one, mixed]))
    assert main(["report", str(one), str(tmp_path / "missing"), "--out", str(tmp_path / "c")]) == 2
    assert "rollouts file not found" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(one), str(tmp_path / "empty"), "--out", str(tmp_path / "c")]) == 2
    assert "no rollouts.jsonl in directory" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path / "c")]) == 2
    assert "needs a RUN" in capsys.readouterr().err


# ----- the files -------------------------------------------------------------------------------
def test_written_files_csv_json_md_and_plot(tmp_path):
    pa = _write(tmp_path / "a" / "rollouts.jsonl", _synthetic({"t1": 0, "t2": 1, "t3": 2}), _meta("model-a"))
    pb = _write(tmp_path / "b" / "rollouts.jsonl", _synthetic({"t1": 2, "t2": 2, "t3": 2}, errors=0), _meta("model-b"))
    cmp = cmpmod.compare(cmpmod.load_runs([pa, pb]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = cmpmod.write_compare(cmp, tmp_path / "out", title="A vs B")
    assert [p.name for p in written] == list(cmpmod.OUTPUTS)
    assert (tmp_path / "out" / "compare.png").read_bytes()[:8] == PNG_MAGIC
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "compare.csv").read_text())))
    assert [r["label"] for r in rows] == ["model-a", "model-b"] and [r["run"] for r in rows] == ["A", "B"]
    assert rows[0]["vs"] == "" and rows[1]["vs"] == "model-a"
    assert float(rows[0]["avg_k"]) == pytest.approx(0.5) and float(rows[1]["pass_hat_k"]) == 1.0
    assert float(rows[1]["diff"]) == pytest.approx(0.5) and (rows[1]["wins"], rows[1]["losses"], rows[1]["ties"]) == ("2", "0", "1")
    assert float(rows[1]["diff_lo"]) <= 0.5 <= float(rows[1]["diff_hi"])
    assert rows[0]["trials"] == "2" and rows[0]["errors"] == "0" and rows[0]["scoring"] == "rubric"
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    (c,) = data["comparisons"]
    assert (c["a"], c["b"], c["tasks"], c["b_wins"], c["a_wins"], c["ties"]) == ("model-a", "model-b", 3, 2, 0, 1)
    assert c["diff"] == pytest.approx(0.5) and c["ci"] == list(cmp.pairs[0].ci)
    assert data["bootstrap"] == BOOTSTRAP_SAMPLES and data["seed"] == 0
    assert data["runs"][0]["meta"]["model"] == "model-a"
    assert data["runs"][1]["rows"][0]["pass_hat_curve"] == [1.0, 1.0]
    md = (tmp_path / "out" / "compare.md").read_text()
    assert md.startswith("# A vs B\n") and "![Pass^k versus k](compare.png)" in md
    assert "| model-a | model-b | 3 | +0.500 |" in md


def test_a_run_whose_every_episode_errored_plots_without_warnings(tmp_path):
    ok = _write(tmp_path / "ok.jsonl", _synthetic({"t1": 2, "t2": 1}))
    bad = _write(tmp_path / "bad.jsonl", _synthetic({"t1": 0, "t2": 0}, errors=2))
    cmp = cmpmod.compare(cmpmod.load_runs([ok, bad]))
    assert cmp.runs[1].summaries[0].errors == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = cmpmod.plot_pass_hat(cmp, tmp_path / "c.png")
    assert png is not None and png.read_bytes()[:8] == PNG_MAGIC
    # a comparison with nothing to plot writes no (empty) chart, and no legend warning
    for r in cmp.runs:
        for s in r.summaries:
            s.tasks = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cmpmod.plot_pass_hat(cmp, tmp_path / "none.png") is None
        written = cmpmod.write_compare(cmp, tmp_path / "out")
    assert not (tmp_path / "none.png").exists() and not (tmp_path / "out" / "compare.png").exists()
    assert len(written) == 3 and "compare.png" not in (tmp_path / "out" / "compare.md").read_text()


def test_terminal_table_fits_80_columns_without_splitting_words(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    pa = _write(tmp_path / "run-a" / "rollouts.jsonl", _synthetic({"t1": 0, "t2": 1, "t3": 2}, errors=1),
                _meta("org/some-model-7b"))
    pb = _write(tmp_path / "run-b" / "rollouts.jsonl", _synthetic({"t1": 2, "t2": 2, "t3": 1}),
                _meta("org/another-model-70b-instruct"))
    monkeypatch.chdir(tmp_path)
    assert main(["report", "run-a", "run-b", "--out", "c"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-1].startswith("wrote c/compare.md")
    assert max(len(line) for line in lines) <= 80, out
    words = set(out.split())
    cmp = cmpmod.compare(cmpmod.load_runs([pa, pb]))
    expected = {"org/some-model-7b:", "org/another-model-70b-instruct:", "Delivery-v0", "Avg@K", "Pass@1", "Pass^K",
                "errors", "llm"}
    for r in cmp.runs:
        (s,) = r.summaries
        k = s.trials
        for key in (f"avg@{k}", "pass@1", f"pass^{k}"):
            lo, hi = s.ci[key]
            expected |= {f"{s.metrics[key]:.3f}", f"[{lo:.3f},", f"{hi:.3f}]"}
    p = cmp.pairs[0]
    expected |= {f"{p.diff:+.3f}", f"[{p.ci[0]:+.3f},", f"{p.ci[1]:+.3f}];"}
    assert expected <= words, expected - words
    assert re.search(r"^B - A per-task success over 3 tasks", out, re.M)


# ----- real runs through the command line ---------------------------------------------------------
@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for policy in ("random", "oracle"):
        assert main(["evaluate", "--env", DELIVERY, "--policy", policy, "--limit", "5", "--out", str(root / policy),
                     "--quiet"]) == 0
    return root


def test_oracle_against_random_through_the_cli(real_runs, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "cmp"
    assert main(["report", str(real_runs / "random"), str(real_runs / "oracle"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "A = random" in text and "B = oracle" in text
    data = json.loads((out / "compare.json").read_text())
    (c,) = data["comparisons"]
    assert (c["a"], c["b"], c["tasks"]) == ("random", "oracle", 5)
    assert c["diff"] == 1.0 and c["ci"][0] > 0  # the oracle wins every task: the interval excludes 0
    assert (c["b_wins"], c["a_wins"], c["ties"]) == (5, 0, 0)
    for name in cmpmod.OUTPUTS:
        assert (out / name).is_file(), name
    # a run against itself: no difference
    assert main(["report", str(real_runs / "oracle"), str(real_runs / "oracle" / "rollouts.jsonl"),
                 "--out", str(tmp_path / "same")]) == 0
    (c,) = json.loads((tmp_path / "same" / "compare.json").read_text())["comparisons"]
    assert c["diff"] == 0 and c["ci"] == [0, 0] and c["ties"] == 5


def test_one_run_is_todays_report_and_in_takes_a_directory(real_runs, tmp_path):
    assert main(["report", "--in", str(real_runs / "oracle"), "--out", str(tmp_path / "a")]) == 0
    assert main(["report", str(real_runs / "oracle"), "--out", str(tmp_path / "b")]) == 0
    assert main(["report", "--in", str(real_runs / "oracle" / "rollouts.jsonl"), "--out", str(tmp_path / "c")]) == 0
    for d in "abc":
        assert "| 1 | 1.000 [1.000, 1.000] | 1.000 [1.000, 1.000] |" in (tmp_path / d / "report.md").read_text()
        assert not (tmp_path / d / "compare.md").exists()
    # --in and a RUN together are two runs
    assert main(["report", "--in", str(real_runs / "random"), str(real_runs / "oracle"), "--out", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "compare.csv").is_file()


def test_evaluate_writes_run_json(real_runs):
    meta = json.loads((real_runs / "oracle" / "run.json").read_text())
    assert meta["policy"] == "oracle" and meta["env_id"] == DELIVERY and meta["env_version"] == "v0"
    assert meta["scoring"] == "rubric" and meta["split"] == "test" and meta["trials"] == 1 and meta["seed"] == 0
    assert meta["model"] is None and meta["base_url_host"] is None and meta["tasks"] == 5
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", meta["date"])
    import servicegym

    assert meta["servicegym_version"] == servicegym.__version__
    assert meta["git_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", meta["git_commit"])


def test_run_json_of_an_llm_run_keeps_no_secret(tmp_path, monkeypatch):
    """``--policy llm`` with credentials and a query string in the base URL and an API key in the
    environment: run.json keeps the model and the host only."""
    from servicegym.simulators.loopback import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key-123")
    with LoopbackServer() as server:
        host = server.base_url.split("//", 1)[1].split("/", 1)[0]
        url = server.base_url.replace("//", "//alice:hunter2@", 1) + "?token=qsecret"
        out = tmp_path / "llm"
        rc = main(["evaluate", "--env", DELIVERY, "--policy", "llm", "--base-url", url, "--model", "my-model",
                   "--task-ids", "delivery/test/0/d0", "--split", "test", "--out", str(out), "--quiet"])
    assert rc in (0, 1)  # the episode may fail against the stand-in model; run.json is written either way
    text = (out / "run.json").read_text()
    meta = json.loads(text)
    assert meta["model"] == "my-model" and meta["base_url_host"] == host and meta["policy"] == "llm"
    assert meta["split"] == "custom"
    for secret in ("alice", "hunter2", "qsecret", "token", "sk-secret-key-123", "/v1"):
        assert secret not in text, secret


def test_run_metadata_split_and_host():
    m = cmpmod.run_metadata(env_id="servicegym/Payments-v2", policy="llm", trials=3, seed=7, split="test",
                            scoring="strict", tasks_file="/private/path/tasks.json", tasks=4,
                            llm={"base_url": "https://u:p@api.example.com:8443/v1?key=abc#frag", "model": "m"})
    assert (m["env_version"], m["split"], m["tasks_file"], m["scoring"], m["trials"], m["seed"]) == \
        ("v2", "file", "tasks.json", "strict", 3, 7)
    assert m["base_url_host"] == "api.example.com:8443"
    assert cmpmod.run_metadata(env_id=DELIVERY, policy="oracle", trials=1, seed=0, split="dev",
                               task_ids=["a"])["split"] == "custom"
    assert cmpmod.run_metadata(env_id=DELIVERY, policy="oracle", trials=1, seed=0, split="dev")["split"] == "dev"
    assert cmpmod.url_host(None) is None and cmpmod.url_host("http://[::1]:8000/v1") == "[::1]:8000"
