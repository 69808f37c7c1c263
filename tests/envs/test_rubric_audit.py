"""``servicegym rubrics``: the audit of a task file's natural-language rubric items, ``--compile``
against the project's loopback chat-completions server (scripted replies and faults; never a live
endpoint), and the loader's pick-up of the rubric-checks sidecar, broken ones included.

The audit runs on a real VitaBench file when the data is present (``$SERVICEGYM_VITABENCH_DIR`` or
``shared/data/vitabench`` beside the repository root; skipped otherwise) and always on a small
hand-written task whose two rubric items no grammar reads.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.cli.main import main
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.envs.tasks import TaskFileError, TaskSkippedWarning, load_task_file
from servicegym.envs.tasks.vitabench import checks_file, llm_checks
from servicegym.envs.tasks.vitabench.checks_file import RubricChecksWarning, default_checks_path, task_digest
from servicegym.simulators.llm import ENV_BASE_URL, ENV_CACHE_DIR, ENV_MODEL
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply
from tests.envs.test_vitabench import DATA_DIR, ENV_ID, mini_task

SECRET = "sk-test-DO-NOT-LEAK-rubrics-0987654321"
STORE_ITEM = "The noodles should come from the shop the user's colleague recommended"
TEA_ITEM = "The tea order must be cancelled at once because the user hates it"
GOOD = {"kind": "store", "place_ids": ["S1"], "name": "Noodle House", "about": "noodles"}
WRONG = {"kind": "store", "place_ids": ["S2"], "name": "Tea Corner", "about": "noodles"}
TEA = {"kind": "status", "status": "cancelled", "record_id": "M0000001O01"}


def reply(spec: dict[str, Any] | None, reason: str = "read") -> str:
    return json.dumps({"spec": spec, "reason": reason})


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (ENV_BASE_URL, ENV_MODEL, ENV_CACHE_DIR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    """One delivery task (order two beef noodles from S1, cancel the tea order M0000001O01) whose
    rubric is two items no grammar reads: [0] the store, [1] the cancellation."""
    task = mini_task()
    for state in task["evaluation_criteria"]["expected_states"]:
        state["state_rubrics"] = []
    task["evaluation_criteria"]["overall_rubrics"] = [STORE_ITEM, TEA_ITEM]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]), encoding="utf-8")
    return path


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


def _audit(path: Path, capsys: pytest.CaptureFixture[str], *more: str) -> dict[str, Any]:
    assert main(["rubrics", "--tasks", str(path), "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def _compile(path: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str], *more: str) -> dict[str, Any]:
    assert main(["rubrics", "--tasks", str(path), "--compile", "--base-url", server.base_url, "--model", "m",
                 "--json", *more]) == 0
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    return json.loads(out.out)


def _fast(server: LoopbackServer, path: Path, out: Path | None = None, **kw: Any) -> llm_checks.CompileReport:
    """``compile_checks`` with a client whose backoff is tiny (the fault tests)."""
    cfg = server.config(backoff_base_s=0.001, backoff_max_s=0.01, max_retries=kw.pop("max_retries", 1), timeout_s=5.0,
                        max_response_bytes=llm_checks.MAX_RESPONSE_BYTES)
    return llm_checks.compile_checks(path, ENV_ID, cfg, out, **kw)


def _oracle_ok(env: gym.Env, task_id: str) -> bool:
    return run_episode(env, OraclePolicy(), seed=0, options={"task_id": task_id})["success"]


# ----- the audit -------------------------------------------------------------------------------------
def test_audit_of_a_real_file_lists_every_item_with_its_check_or_reason(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA_DIR / "delivery" / "tasks_en.json"
    if not path.is_file():
        pytest.skip(f"VitaBench data not found at {path} (set SERVICEGYM_VITABENCH_DIR to the vitabench data dir)")
    report = _audit(path, capsys)
    assert set(report) >= {"file", "env", "rubric_checks", "coverage", "tasks", "skipped"}
    assert report["env"] == ENV_ID and report["tasks"] and report["skipped"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TaskSkippedWarning)  # the audit lists them
        env = gym.make(ENV_ID, tasks=str(path))
    u = env.unwrapped
    assert [t["task_id"] for t in report["tasks"]] == u.task_ids()
    assert {s["task_id"] for s in report["skipped"]} == {s["task_id"] for s in u.skipped_tasks}
    items = checked = 0
    for t in report["tasks"]:
        task = u.source.get(t["task_id"])
        assert [i["index"] for i in t["items"]] == list(range(len(task.nl_rubric)))
        names = {r.name for r in task.rubric if r.kind.startswith("nl_")}
        assert {i["check"] for i in t["items"] if i["checked"]} == names  # every code check, and only those
        for i in t["items"]:
            assert i["text"] == task.nl_rubric[i["index"]] and i["topic"]
            if i["checked"]:
                assert i["check"].endswith(f"_{i['index']}") and i["spec"] and i["source"] == "grammar"
            else:
                assert i["reason"] and not i["check"]
                assert i["reason"] == "no grammar read it" or "judge" in i["reason"] or "loader" in i["reason"]
        items += len(t["items"])
        checked += t["checked"]
    total = report["coverage"]["total"]
    assert (total["items"], total["checked"]) == (items, checked) and 0 < checked < items
    by_kind = report["coverage"]["by_kind"]
    assert sum(c["items"] for c in by_kind.values()) == items and sum(c["checked"] for c in by_kind.values()) == checked
    # the readable table of one task, restricted by --task-id
    tid = report["tasks"][0]["task_id"]
    assert main(["rubrics", "--tasks", str(path), "--task-id", tid]) == 0
    text = capsys.readouterr().out
    assert f"{tid}  " in text and "coverage by kind" in text and "summary: 1 tasks audited" in text


def test_audit_table_json_and_markdown_of_a_small_file(task_file: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "audit.md"
    assert main(["rubrics", "--tasks", str(task_file), "--out", str(md)]) == 0
    text = capsys.readouterr().out
    assert "0 of 2 items checked by code" in text and text.count("no grammar read it") == 2
    assert STORE_ITEM in text and "summary: 1 tasks audited, 0 skipped; 0 of 2 rubric items" in text
    page = md.read_text(encoding="utf-8")
    assert page.startswith("# Rubric audit") and "| **all** | 0 | 2 | 0% |" in page and STORE_ITEM in page
    report = _audit(task_file, capsys)
    (task,) = report["tasks"]
    assert task["task_id"] == "M0000001" and [i["checked"] for i in task["items"]] == [False, False]
    assert report["coverage"]["total"] == {"items": 2, "checked": 0, "share": 0.0, "tasks": 1, "skipped_tasks": 0,
                                           "from_rubric_checks": 0}


def test_bad_paths_and_options_exit_non_zero_with_a_message(task_file: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["--tasks", str(tmp_path / "missing.json")], "task file not found"),
        (["--tasks", str(task_file), "--env", "servicegym/Nope-v0"], "unknown env"),
        (["--tasks", str(task_file), "--task-id", "NOPE"], "unknown task id(s) NOPE"),
        (["--tasks", str(task_file), "--rubric-checks", str(tmp_path / "none.json")], "rubric checks file not found"),
        (["--tasks", str(task_file), "--model", "m"], "apply to --compile only"),
        (["--tasks", str(task_file), "--compile"], "endpoint not configured"),
        (["--tasks", str(task_file), "--compile", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
          "--max-items", "0"], "--max-items must be at least 1"),
        (["--tasks", str(task_file), "--compile", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
          "--out", str(tmp_path / "c.json"), "--task-id", "NOPE"], "unknown task id(s) NOPE"),
    ]
    for argv, message in cases:
        assert main(["rubrics", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("servicegym: error: ") and message in err, (argv, err)
    not_json = tmp_path / "bad.json"
    not_json.write_text("{", encoding="utf-8")
    assert main(["rubrics", "--tasks", str(not_json), "--env", ENV_ID]) == 2
    assert "not a JSON task file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["rubrics", "--tasks", str(task_file), "--no-such-option"])
    assert info.value.code == 2


# ----- --compile ---------------------------------------------------------------------------------------
def test_compile_keeps_a_correct_check_and_the_reloaded_env_checks_it_by_code(
        task_file: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str]) -> None:
    server.push(reply(GOOD), reply(WRONG))
    report = _compile(task_file, server, capsys)
    assert [(i["index"], i["status"]) for i in report["items"]] == [(0, "kept"), (1, "dropped")]
    kept, dropped = report["items"]
    assert kept["check"] == "nl_store_0" and kept["spec"]["place_ids"] == ["S1"]
    assert "judge" in dropped["reason"] or "golden route" in dropped["reason"]  # S2 is not the gold's store
    assert report["counts"] == {"unread": 2, "asked": 2, "kept": 1, "dropped": 1, "failed": 0, "calls": 2}
    request = server.requests[0]
    assert request["response_format"]["type"] == "json_schema" and request["max_tokens"] == llm_checks.MAX_REPLY_TOKENS
    sent = json.loads(request["messages"][1]["content"])
    assert sent["item"] == STORE_ITEM and sent["task_context"]["places"][0]["id"] in ("S1", "S2")
    assert '"store"' in request["messages"][0]["content"]  # the schema of the allowed specs
    sidecar = default_checks_path(task_file)
    assert report["written"] and report["sidecar"] == str(sidecar)
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    raw = json.loads(task_file.read_text(encoding="utf-8"))[0]
    assert data["format"] == "servicegym-rubric-checks" and data["version"] == 1
    assert data["source"] == "tasks.json" and data["model"] == "m" and SECRET not in sidecar.read_text()
    assert list(data["checks"]) == ["M0000001"] and list(data["checks"]["M0000001"]) == [STORE_ITEM]
    assert data["task_sha256"] == {"M0000001": task_digest(raw)}
    # a fresh env over the file picks the sidecar up: the item is a code check, the oracle succeeds
    env = gym.make(ENV_ID, tasks=str(task_file))
    task = env.unwrapped.source.get("M0000001")
    (item,) = [r for r in task.rubric if r.kind.startswith("nl_")]
    assert item.name == "nl_store_0" and item.params["nl_index"] == 0 and item.params["spec"]["place_ids"] == ["S1"]
    assert _oracle_ok(env, "M0000001")
    audit = _audit(task_file, capsys)
    assert audit["rubric_checks"] == str(sidecar) and audit["coverage"]["total"]["from_rubric_checks"] == 1
    assert audit["tasks"][0]["items"][0]["source"] == "rubric-checks"
    # a second run asks only about the item still unread, and keeps the first check
    server.push(reply(TEA))
    again = _compile(task_file, server, capsys)
    assert [(i["index"], i["status"]) for i in again["items"]] == [(1, "kept")]
    data = json.loads(sidecar.read_text(encoding="utf-8"))
    assert list(data["checks"]["M0000001"]) == [STORE_ITEM, TEA_ITEM]
    env = gym.make(ENV_ID, tasks=str(task_file))
    assert {r.name for r in env.unwrapped.source.get("M0000001").rubric if r.kind.startswith("nl_")} == \
        {"nl_store_0", "nl_status_1"}
    assert _oracle_ok(env, "M0000001")


def test_malformed_replies_are_retried_once_with_the_error_then_given_up(
        task_file: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "checks.json"
    # item 0: not JSON, then a spec that does not validate: given up; item 1: not JSON, then a good spec
    server.push("certainly! here is the check", reply({"kind": "store", "name": "Noodle House"}),
                "```json\n{oops\n```", reply(TEA))
    report = _compile(task_file, server, capsys, "--out", str(out))
    first, second = report["items"]
    assert first["status"] == "failed" and first["calls"] == 2 and "invalid reply after a retry" in first["reason"]
    assert "place_ids" in first["reason"]
    assert second["status"] == "kept" and second["calls"] == 2 and second["check"] == "nl_status_1"
    retry = server.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "certainly! here is the check"}
    assert "not a valid check" in retry[-1]["content"] and "not JSON" in retry[-1]["content"]
    assert list(json.loads(out.read_text())["checks"]["M0000001"]) == [TEA_ITEM]
    assert not default_checks_path(task_file).exists()


def test_a_model_that_declines_or_names_unknown_ids_keeps_nothing(
        task_file: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str]) -> None:
    server.push(reply(None, "needs the colleague's words"),
                reply({**GOOD, "place_ids": ["S9"]}), reply({**GOOD, "place_ids": ["S9"]}))
    report = _compile(task_file, server, capsys)
    assert report["items"][0]["status"] == "dropped" and "not checkable" in report["items"][0]["reason"]
    assert report["items"][1]["status"] == "failed" and "['S9'] are not in the task context" in report["items"][1]["reason"]
    assert not report["written"] and not default_checks_path(task_file).exists()


def test_rate_limits_and_server_errors_are_retried_by_the_client_and_bounded(
        task_file: Path, server: LoopbackServer, tmp_path: Path) -> None:
    server.push(Fault.status(429, retry_after=0), Fault.status(500), reply(GOOD))
    server.handler = lambda body: Fault.status(500)
    report = _fast(server, task_file, tmp_path / "a.json", max_retries=2)
    first, second = report.items
    assert first.status == "kept" and first.calls == 1  # one call of the client, three attempts
    assert second.status == "failed" and "endpoint error" in second.reason and "HTTP 500" in second.reason
    assert SECRET not in second.reason
    assert len(server.requests) == 3 + 3  # each call bounded by the client's retries
    # an endpoint that keeps failing ends the run after MAX_CONSECUTIVE_ERRORS items, not at the last
    many = json.loads(task_file.read_text())
    many[0]["evaluation_criteria"]["overall_rubrics"] += [f"The user would like item number {n} to be nice"
                                                          for n in range(5)]
    task_file.write_text(json.dumps(many))
    server.requests.clear()
    report = _fast(server, task_file, tmp_path / "b.json", max_retries=1)
    assert len(report.items) == llm_checks.MAX_CONSECUTIVE_ERRORS and "endpoint errors in a row" in report.stopped
    assert len(server.requests) == llm_checks.MAX_CONSECUTIVE_ERRORS * 2 and not report.written


def test_over_large_replies_are_refused(task_file: Path, server: LoopbackServer, tmp_path: Path) -> None:
    huge = text_reply("x" * (llm_checks.MAX_RESPONSE_BYTES + 10))
    long_json = json.dumps({"spec": GOOD, "reason": "y" * llm_checks.MAX_REPLY_CHARS})
    # item 0: a body over the client's byte limit, twice (the client's one retry): given up;
    # item 1: a reply over the character limit, then the same again: given up after the retry
    server.push(huge, huge, long_json, long_json)
    report = _fast(server, task_file, tmp_path / "c.json", max_retries=1)
    first, second = report.items
    assert first.status == "failed" and "endpoint error" in first.reason
    assert second.status == "failed" and "character limit" in second.reason and second.calls == 2
    assert not report.written


def test_max_items_bounds_the_calls(task_file: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str],
                                    tmp_path: Path) -> None:
    server.push(reply(GOOD), reply(TEA))
    report = _compile(task_file, server, capsys, "--max-items", "1", "--out", str(tmp_path / "x.json"))
    assert len(report["items"]) == 1 and len(server.requests) == 1 and "--max-items 1" in report["stopped"]


def test_compile_needs_out_when_the_task_folder_is_not_writable(
        task_file: Path, server: LoopbackServer, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    task_file.parent.chmod(0o555)
    try:
        assert main(["rubrics", "--tasks", str(task_file), "--compile", "--base-url", server.base_url,
                     "--model", "m"]) == 2
        assert "is not writable); pass --out FILE" in capsys.readouterr().err
        assert server.requests == []  # refused before any call
    finally:
        task_file.parent.chmod(0o755)


# ----- the loader's pick-up of the sidecar ----------------------------------------------------------
def _write_sidecar(path: Path, checks: dict[str, Any], digests: dict[str, str] | None = None, **over: Any) -> None:
    body = {"format": "servicegym-rubric-checks", "version": 1, "source": "tasks.json", "model": "hand",
            "checks": checks, "task_sha256": digests or {}, **over}
    path.write_text(json.dumps(body), encoding="utf-8")


def _load(task_file: Path, **kw: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_task_file(task_file, "delivery", **kw)
    return loaded, [str(w.message) for w in caught if issubclass(w.category, RubricChecksWarning)]


def _nl_names(loaded: Any) -> set[str]:
    return {r.name for r in loaded[0].rubric if r.kind.startswith("nl_")}


def test_loader_applies_a_sidecar_and_its_cache_keys_on_it(task_file: Path, tmp_path: Path) -> None:
    loaded, problems = _load(task_file)
    assert _nl_names(loaded) == set() and problems == []
    sidecar = default_checks_path(task_file)
    assert sidecar.name == "tasks.rubric-checks.json"
    _write_sidecar(sidecar, {"M0000001": {STORE_ITEM: GOOD}})
    loaded, problems = _load(task_file)
    assert _nl_names(loaded) == {"nl_store_0"} and problems == []
    # an explicit path wins over the default one; a missing explicit path is an error
    other = tmp_path / "other.json"
    _write_sidecar(other, {"M0000001": {TEA_ITEM: TEA}})
    assert _nl_names(_load(task_file, rubric_checks=other)[0]) == {"nl_status_1"}
    with pytest.raises(TaskFileError, match="no such rubric checks file"):
        load_task_file(task_file, "delivery", rubric_checks=tmp_path / "missing.json")
    sidecar.unlink()
    assert _nl_names(_load(task_file)[0]) == set()


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a JSON file"),
    (json.dumps({"format": "something-else", "checks": {}}), "not a rubric-checks file"),
    (json.dumps({"format": "servicegym-rubric-checks", "version": 7, "checks": {}}), "version 7 is not supported"),
    (json.dumps({"format": "servicegym-rubric-checks", "version": 1, "checks": []}), '"checks" must be an object'),
])
def test_a_broken_sidecar_warns_and_the_tasks_load_without_it(task_file: Path, content: str, message: str) -> None:
    sidecar = default_checks_path(task_file)
    sidecar.write_text(content, encoding="utf-8")
    loaded, problems = _load(task_file)
    assert [t.task_id for t in loaded] == ["M0000001"] and _nl_names(loaded) == set()
    (problem,) = problems
    assert str(sidecar) in problem and message in problem


def test_bad_entries_are_left_out_each_named_and_the_good_ones_kept(task_file: Path) -> None:
    raw = json.loads(task_file.read_text())[0]
    sidecar = default_checks_path(task_file)
    _write_sidecar(sidecar, {"M0000001": {STORE_ITEM: GOOD, TEA_ITEM: {"kind": "status", "status": "eaten"}},
                             "GHOST": {STORE_ITEM: GOOD}, "M0000002": "nope"},
                   {"M0000001": task_digest(raw)})
    loaded, problems = _load(task_file)
    assert _nl_names(loaded) == {"nl_store_0"}
    assert len(problems) == 3 and all(str(sidecar) in p for p in problems)
    assert any("task M0000001, item" in p and "The tea order" in p and "status" in p for p in problems)
    assert any("task GHOST is not in the task file" in p for p in problems)
    assert any("task M0000002: must be an object" in p for p in problems)
    # a task changed since its checks were made: they are stale, left out
    _write_sidecar(sidecar, {"M0000001": {STORE_ITEM: GOOD}}, {"M0000001": "0" * 64})
    loaded, problems = _load(task_file)
    assert _nl_names(loaded) == set() and len(problems) == 1 and "stale" in problems[0]


def test_an_over_large_sidecar_is_ignored(task_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_sidecar(default_checks_path(task_file), {"M0000001": {STORE_ITEM: GOOD}})
    monkeypatch.setattr(checks_file, "MAX_CHECKS_BYTES", 64)
    loaded, problems = _load(task_file)
    assert _nl_names(loaded) == set() and len(problems) == 1 and "over the 64-byte limit" in problems[0]


def test_the_env_takes_a_sidecar_by_argument(task_file: Path, tmp_path: Path) -> None:
    """``gymnasium.make(..., rubric_checks=PATH)``: the sidecar's check becomes a rubric item of the
    env's task, scored by code; a missing path fails at make with the file named."""
    other = tmp_path / "checks.json"
    _write_sidecar(other, {"M0000001": {TEA_ITEM: TEA}})
    env = gym.make("servicegym/Delivery-v0", tasks=str(task_file), rubric_checks=str(other))
    task = env.unwrapped.source.get("M0000001")
    assert {r.name for r in task.rubric if r.kind.startswith("nl_")} == {"nl_status_1"}
    with pytest.raises(TaskFileError, match="no such rubric checks file"):
        gym.make("servicegym/Delivery-v0", tasks=str(task_file), rubric_checks=str(tmp_path / "missing.json"))
