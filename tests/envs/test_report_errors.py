"""One definition of the headline numbers (issue 25): an episode that ended in an endpoint or policy
error counts as a failure in Avg@k, Pass@k and Pass^k, the errors are shown beside them, and a
report of a run with errors says so in its first line."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.envs.cli.report import markdown, summarize_records, table_rows
from servicegym.rewards.metrics import avg_at_k, pass_at_k, pass_hat_k


def _rec(task: str, trial: int, success: bool, error: str | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"env_id": "servicegym/Delivery-v0", "domain": "delivery", "policy": "llm", "task_id": task,
                           "trial": trial, "success": success and error is None, "steps": 5, "tool_errors": 0,
                           "termination_reason": "policy_error" if error else "user_stop",
                           "score": {} if error else {"rubric_fraction": 1.0 if success else 0.5}}
    if error:
        rec["error"] = error
    return rec


def _run() -> list[dict[str, Any]]:
    # task a: two successes; task b: one success and one endpoint error; task c: two endpoint errors
    return [_rec("a", 0, True), _rec("a", 1, True), _rec("b", 0, True), _rec("b", 1, False, "LLMError: 500"),
            _rec("c", 0, False, "LLMError: timeout"), _rec("c", 1, False, "LLMError: timeout")]


def test_errored_episodes_count_as_failures_in_every_metric():
    (s,) = summarize_records(_run(), bootstrap=0)
    assert s.tasks == 3 and s.trials == 2 and s.episodes == 6 and s.errors == 3 and s.error_rate == 0.5
    # per task (n=2, c): a 2, b 1, c 0
    expect = {"avg@2": (1 + 0.5 + 0) / 3,
              "pass@2": (pass_at_k(2, 2, 2) + pass_at_k(2, 1, 2) + pass_at_k(2, 0, 2)) / 3,
              "pass^2": (pass_hat_k(2, 2, 2) + pass_hat_k(2, 1, 2) + pass_hat_k(2, 0, 2)) / 3,
              "pass@1": (avg_at_k(2, 2, 1) + avg_at_k(2, 1, 1) + avg_at_k(2, 0, 1)) / 3}
    for key, value in expect.items():
        assert s.metrics[key] == pytest.approx(value), key
    # components are over the episodes that have a score
    assert s.components["rubric_fraction"] == pytest.approx(1.0)
    assert s.mean_steps == 5.0


def test_a_run_with_errors_says_so_first_and_beside_the_metrics():
    summaries = summarize_records(_run(), bootstrap=0)
    md = markdown(summaries, plot=None).splitlines()
    assert md[0].startswith("# ") and md[2].startswith("**3 of 6 episodes (50%) ended in an endpoint or policy error")
    assert "count as failures" in md[2]
    row = next(line for line in md if line.startswith("| delivery |"))
    assert row.endswith("| 3 (50%) |") and "0.500" in row  # avg@2 = 0.5, the errors beside it
    assert any("3 of them errored (counted as failures)" in line for line in md)
    head, rows = table_rows(summaries)
    assert rows[0][head.index("errors")] == "3 (50%)" and rows[0][head.index("avg@k")] == "0.500"


def test_a_run_without_errors_says_that_too():
    ok = [r for r in _run() if "error" not in r]
    md = markdown(summarize_records(ok, bootstrap=0), plot=None).splitlines()
    assert md[2] == "No errors: all 3 episodes ended without an endpoint or policy error."
    head, rows = table_rows(summarize_records(ok, bootstrap=0))
    assert rows[0][head.index("errors")] == "0"


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_the_table_fits_the_terminal_and_never_splits_a_word(columns, monkeypatch):
    """At any width a cell is whole: the table when it fits without splitting words, else one block
    of name/value lines per row (the vertical layout)."""
    import io

    from servicegym.envs.cli.report import print_table

    records = _run() + [{**r, "env_id": "servicegym/Payments-v0", "domain": "payments", "policy": "oracle",
                         "score": {} if r.get("error") else {"goal": 1.0, "process": 0.5, "protection": 1.0, "strict": 0.0}}
                        for r in _run()]
    summaries = summarize_records(records, bootstrap=50)
    monkeypatch.setenv("COLUMNS", str(columns))
    buf = io.StringIO()
    print_table(summaries, file=buf, title="servicegym evaluation: two domains")
    out = buf.getvalue()
    assert max(len(line) for line in out.splitlines()) <= columns
    head, rows = table_rows(summaries)
    words = {w for row in rows for cell in row for w in cell.split()} | set(head[2:])  # domain / policy head a block
    flat = " ".join(out.split())
    for word in words:  # every word of every cell appears whole
        assert word in flat, (word, out)
    assert "delivery" in out and "payments" in out and "3 (50%)" in out


def test_a_run_where_every_episode_errored_draws_no_plot_and_says_why(tmp_path):
    import warnings

    from servicegym.envs.cli.report import write_report

    (tmp_path / "pass_k.png").write_bytes(b"stale")  # from an earlier run into this directory
    records = [_rec("a", 0, False, "LLMError: connection refused"), _rec("b", 0, False, "LLMError: connection refused")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no library warning either
        summaries, md, png = write_report(records, tmp_path)
    assert png is None and not (tmp_path / "pass_k.png").exists()
    text = md.read_text()
    assert "every episode ended in an error" in text and "![" not in text
    # one scored episode is enough for a plot
    _, _, png = write_report([*records, _rec("c", 0, True)], tmp_path)
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_json_holds_the_same_numbers_as_the_table(tmp_path):
    import json

    from servicegym.envs.cli.report import write_report

    summaries, _, _ = write_report(_run(), tmp_path, bootstrap=50)
    data = json.loads((tmp_path / "report.json").read_text())
    (d,) = data["domains"]
    (s,) = summaries
    assert data["errors_count_as_failures"] and d["errors"] == 3 and d["error_rate"] == 0.5
    assert d["metrics"] == s.metrics and d["ci"] == {k: list(v) for k, v in s.ci.items()}
    _, rows = table_rows(summaries)
    assert rows[0][4].startswith(f"{d['metrics']['avg@2']:.3f} [{d['ci']['avg@2'][0]:.3f}")
