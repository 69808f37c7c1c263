"""``servicegym view RUN [RUN ...]``: several runs on one page, filtered by run, each episode linking
to the same task in the other runs (issue 25). The command's arguments as text; the page in
headless Chromium, driven through its command line as ``test_view`` drives it: the state a URL hash
gives, and clicks made by a small script appended to a copy of the page. Chromium's console is
read from its log (``--enable-logging=stderr``): the page writes nothing to it, so any console line
(an uncaught exception included) fails the test.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from servicegym.envs.cli import compare
from servicegym.envs.cli.main import main
from tests.envs.test_view import body_attrs, browser, main_text, page_blocks, read_jsonl, side_text  # noqa: F401


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> dict[str, Path]:
    """Two small evaluations of the same three delivery tasks: oracle (one trial) and random (two)."""
    base = tmp_path_factory.mktemp("view-multi")
    out = {}
    for name, extra in (("oracle", []), ("random", ["--trials", "2"])):
        d = base / name
        assert main(["evaluate", "--env", "servicegym/Delivery-v0", "--policy", name, "--limit", "3", *extra,
                     "--out", str(d), "--quiet"]) == 0
        out[name] = d
    return out


def _page(tmp: Path, *runs: Path, name: str = "ab.html") -> Path:
    out = tmp / name
    assert main(["view", *map(str, runs), "--out", str(out)]) == 0
    return out


def load(exe: str, tmp: Path, page: Path, fragment: str = "", script: str = "") -> tuple[str, str]:
    """The DOM Chromium renders of ``page#fragment`` (after ``script``, appended to a copy of the
    page, ran) and its console lines, asserted to be none."""
    if script:
        text = page.read_text(encoding="utf-8")
        head, _, tail = text.rpartition("</body>")
        page = tmp / f"driven-{time.monotonic_ns()}.html"
        page.write_text(f"{head}<script>{script}</script></body>{tail}", encoding="utf-8")
    profile = tmp / f"profile-{time.monotonic_ns()}"
    cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}", "--virtual-time-budget=3000",
           "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri() + fragment]
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    dom, log = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    assert "<body" in dom, f"chromium dumped no DOM (rc {proc.returncode}): {log[-2000:]}"
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not console, console
    return dom, log


def attrs_of(dom: str) -> dict[str, str]:
    """``<body>``'s attributes, their entities decoded."""
    return {k: html.unescape(v) for k, v in body_attrs(dom).items()}


def rows(dom: str) -> list[int]:
    """The global indices of the episode rows the virtual list shows."""
    return [int(i) for i in re.findall(r'<div class="row[^"]*"[^>]*data-index="(\d+)"', dom)]


def flat(text: str) -> str:
    return " ".join(text.split())


# ----- the command line -------------------------------------------------------------------------
def test_several_runs_make_one_page_labelled_as_report_labels_them(two_runs, tmp_path, capsys):
    a, b = two_runs["oracle"], two_runs["random"]
    out = _page(tmp_path, a, b)
    assert f"wrote {out} (9 episodes of 2 runs: oracle, random" in capsys.readouterr().out
    named, records = page_blocks(out.read_text(encoding="utf-8"))
    meta = named["sg-meta"]
    ra, rb = read_jsonl(a / "rollouts.jsonl"), read_jsonl(b / "rollouts.jsonl")
    assert records == [{**r, "tools": 0} for r in ra + rb]  # both runs' records, once, in order; one tool list
    assert len(named["sg-tools"]) == 1
    assert [row[12] for row in named["sg-index"]] == [0] * 3 + [1] * 6
    assert [r["label"] for r in meta["runs"]] == [r.label for r in compare.load_runs([a, b])] == ["oracle", "random"]
    assert [(r["first"], r["episodes"], r["tasks"], r["successes"], r["errors"]) for r in meta["runs"]] == \
        [(0, 3, 3, 3, 0), (3, 6, 3, 0, 0)]
    assert meta["runs"][0]["source"] == str(a) and meta["runs"][1]["policy"] == "random"
    assert meta["episodes"] == 9 and "2 runs (oracle, random)" in meta["title"]


def test_in_joins_the_runs_first_and_the_default_page_is_compare_view_html(two_runs, tmp_path, monkeypatch, capsys):
    a, b = two_runs["oracle"], two_runs["random"]
    monkeypatch.chdir(tmp_path)
    assert main(["view", str(a), "--in", str(b)]) == 0
    page = tmp_path / "compare.view.html"  # several runs, no --out: here
    assert f"wrote {page.name} (9 episodes of 2 runs: random, oracle" in capsys.readouterr().out
    named, _ = page_blocks(page.read_text(encoding="utf-8"))
    assert [r["label"] for r in named["sg-meta"]["runs"]] == ["random", "oracle"]
    # one RUN, named either way, is the page of today beside it
    assert main(["view", str(a / "rollouts.jsonl")]) == 0 and (a / "view.html").is_file()
    named, _ = page_blocks((a / "view.html").read_text(encoding="utf-8"))
    assert len(named["sg-meta"]["runs"]) == 1 and named["sg-meta"]["skipped"] == []


def test_runs_of_one_label_are_told_apart_as_report_tells_them(two_runs, tmp_path):
    a = two_runs["oracle"]
    copy = tmp_path / "again"
    copy.mkdir()
    shutil.copy(a / "rollouts.jsonl", copy / "rollouts.jsonl")
    shutil.copy(a / "run.json", copy / "run.json")
    bare = tmp_path / "bare.jsonl"
    shutil.copy(a / "rollouts.jsonl", bare)
    out = _page(tmp_path, a, copy, bare, a)
    named, _ = page_blocks(out.read_text(encoding="utf-8"))
    labels = [r["label"] for r in named["sg-meta"]["runs"]]
    assert labels == [r.label for r in compare.load_runs([a, copy, bare, a])]
    assert len(set(labels)) == 4 and "oracle (bare.jsonl)" in labels


def test_errored_episodes_count_as_failures_per_run(two_runs, tmp_path):
    recs = read_jsonl(two_runs["oracle"] / "rollouts.jsonl")
    recs[1] = {**recs[1], "error": "LLMError: 500 from the endpoint"}  # success left true: still a failure
    src = tmp_path / "err.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    out = _page(tmp_path, two_runs["oracle"], src)
    named, _ = page_blocks(out.read_text(encoding="utf-8"))
    r = named["sg-meta"]["runs"][1]
    assert (r["episodes"], r["successes"], r["errors"]) == (3, 2, 1)


def test_bad_runs_are_one_line_errors_with_status_2(two_runs, tmp_path, capsys):
    a = two_runs["oracle"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cases = [
        (["view", str(a), str(tmp_path / "missing")], "rollouts file not found"),
        (["view", "--in", str(tmp_path / "missing.jsonl"), str(a)], "rollouts file not found"),
        (["view", str(a), str(tmp_path)], "no rollouts.jsonl in directory"),
        (["view", str(a), str(empty)], "holds no episodes"),
        (["view"], "view needs a RUN"),
        (["view", str(a), str(a), "--out", str(tmp_path)], "is a directory"),
    ]
    for args, message in cases:
        capsys.readouterr()
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("servicegym: error: "), err
        assert message in err, err
    assert not (tmp_path / "compare.view.html").exists()


def test_a_bad_run_json_is_a_note_and_labels_stay_text(two_runs, browser, tmp_path):  # noqa: F811
    """A run.json that is not JSON is named in the page, not an error; a label holding markup is
    only ever text, in the page's file and in the browser."""
    evil = '<img src=x onerror="document.body.dataset.pwned=1">'
    d1, d2 = tmp_path / "r1", tmp_path / "r2"
    for d in (d1, d2):
        d.mkdir()
        shutil.copy(two_runs["oracle"] / "rollouts.jsonl", d / "rollouts.jsonl")
    (d1 / "run.json").write_text("{not json", encoding="utf-8")
    meta = json.loads((two_runs["oracle"] / "run.json").read_text(encoding="utf-8"))
    (d2 / "run.json").write_text(json.dumps({**meta, "model": evil}), encoding="utf-8")
    out = _page(tmp_path, d1, d2)
    text = out.read_text(encoding="utf-8")
    named, _ = page_blocks(text)
    assert [r["label"] for r in named["sg-meta"]["runs"]] == ["oracle (r1)", evil]
    assert any("not a run.json" in n for n in named["sg-meta"]["notes"])
    assert "<img" not in text.split('<script type="application/json"', 1)[0]  # the title is escaped
    dom, _ = load(browser, tmp_path, out, "#run=1&episode=0")
    attrs = attrs_of(dom)
    assert attrs.get("data-ready") == "1" and attrs.get("data-episode") == "3" and "data-pwned" not in attrs
    elements = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)  # the DOM outside the JSON blocks
    assert "<img" not in elements and evil in html.unescape(re.sub(r"<[^>]+>", " ", elements))


# ----- the page in a browser --------------------------------------------------------------------
def test_browser_lists_both_runs_and_filters_by_run(two_runs, browser, tmp_path):  # noqa: F811
    page = _page(tmp_path, two_runs["oracle"], two_runs["random"])
    dom, _ = load(browser, tmp_path, page)
    assert attrs_of(dom).get("data-ready") == "1"
    side = flat(side_text(dom))
    assert "9 episodes" in side and "all runs (2)" in side and "oracle \u00b7 3" in side and "random \u00b7 6" in side
    assert rows(dom) == list(range(9))
    assert len(re.findall(r'<span class="rtag"[^>]*>oracle</span>', dom)) == 3
    assert len(re.findall(r'<span class="rtag"[^>]*>random</span>', dom)) == 6
    text = flat(html.unescape(re.sub(r"<[^>]+>", " ", dom)))
    assert "oracle 3/3 (100%) \u00b7 random 0/6 (0%)" in text  # the header: each run's headline numbers
    assert "0 oracle" in text and "1 random" in text  # the overview's table of runs
    # the run filter, preset from the hash (by number or label) ...
    for frag in ("#run=1", "#run=random"):
        dom, _ = load(browser, tmp_path, page, frag)
        assert "6 of 9 episodes" in flat(side_text(dom)) and rows(dom) == list(range(3, 9))
    # ... and chosen in its select, as a user does
    pick = ('setTimeout(function () { var s = document.getElementById("f-run"); s.value = "0";'
            ' s.dispatchEvent(new Event("change")); }, 50);')
    dom, _ = load(browser, tmp_path, page, "", pick)
    assert "3 of 9 episodes" in flat(side_text(dom)) and rows(dom) == [0, 1, 2]
    assert "random" not in flat(side_text(dom)).split("clear filters", 1)[1]


def test_browser_same_task_link_opens_that_task_in_the_other_run(two_runs, browser, tmp_path):  # noqa: F811
    page = _page(tmp_path, two_runs["oracle"], two_runs["random"])
    ra, rb = read_jsonl(two_runs["oracle"] / "rollouts.jsonl"), read_jsonl(two_runs["random"] / "rollouts.jsonl")
    assert {r["trial"] for r in ra} == {0} and sorted(r["trial"] for r in rb) == [0, 0, 0, 1, 1, 1]

    def where(recs: list[dict[str, Any]], task: str, trial: int) -> int:  # (the file's order is the workers')
        return next(n for n, r in enumerate(recs) if r["task_id"] == task and r["trial"] == trial)

    # a random episode of trial 1: oracle ran its task once (trial 0), the task's first trial
    n = next(n for n, r in enumerate(rb) if r["trial"] == 1)
    task = rb[n]["task_id"]
    m = where(ra, task, 0)
    dom, _ = load(browser, tmp_path, page, f"#run=1&episode={n}")
    attrs = attrs_of(dom)
    assert attrs.get("data-episode") == str(3 + n) and attrs.get("data-run") == "1"
    assert "same task in oracle (trial 0)" in flat(main_text(dom))
    assert re.search(rf'<a class="same-task" href="#run=0&amp;episode={m}"', dom)
    # click it: the oracle episode of that task opens, and the run filter (random) follows it
    click = ('setTimeout(function () { var a = document.querySelector("a.same-task");'
             ' document.body.dataset.clicked = a.getAttribute("href"); a.click(); }, 50);')
    dom, _ = load(browser, tmp_path, page, f"#run=1&episode={n}", click)
    attrs = attrs_of(dom)
    assert attrs.get("data-clicked") == f"#run=0&episode={m}"
    assert attrs.get("data-episode") == str(m) and attrs.get("data-run") == "0"
    shown = flat(main_text(dom))
    assert task in shown and "trial 0" in shown and "same task in random" in shown
    assert "3 of 9 episodes" in flat(side_text(dom)) and rows(dom) == [0, 1, 2]
    # from oracle, the same trial (0) of the task in random
    dom, _ = load(browser, tmp_path, page, f"#run=0&episode={m}")
    assert re.search(rf'<a class="same-task" href="#run=1&amp;episode={where(rb, task, 0)}"', dom)
    assert "(trial" not in flat(main_text(dom)).split("same task in random", 1)[1][:12]
    # a task another run lacks says so
    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.dumps(r) + "\n" for r in ra if r["task_id"] != task), encoding="utf-8")
    page2 = _page(tmp_path, two_runs["random"], short, name="short.html")
    dom, _ = load(browser, tmp_path, page2, "#task=" + task)
    assert attrs_of(dom).get("data-episode") == str(min(where(rb, task, 0), where(rb, task, 1)))
    assert "task not in oracle (short.jsonl)" in flat(main_text(dom))


def test_browser_keys_and_hash_move_within_the_runs(two_runs, browser, tmp_path):  # noqa: F811
    page = _page(tmp_path, two_runs["oracle"], two_runs["random"])
    # j moves down the filtered list (here: random's episodes only) and the hash names run and episode
    keys = ('setTimeout(function () { document.dispatchEvent(new KeyboardEvent("keydown", {key: "j"}));'
            ' document.body.dataset.hash = location.hash; }, 50);')
    dom, _ = load(browser, tmp_path, page, "#run=1&episode=2", keys)
    attrs = attrs_of(dom)
    assert (attrs.get("data-episode"), attrs.get("data-run"), attrs.get("data-hash")) == ("6", "1", "#run=1&episode=3")
    assert rows(dom) == list(range(3, 9))
    # the hash's task and trial, within the named run
    rb = read_jsonl(two_runs["random"] / "rollouts.jsonl")
    n = next(n for n, r in enumerate(rb) if r["trial"] == 1)
    dom, _ = load(browser, tmp_path, page, f"#run=random&task={rb[n]['task_id']}&trial=1")
    assert attrs_of(dom).get("data-episode") == str(3 + n)
    dom, _ = load(browser, tmp_path, page, "#run=7&episode=0")  # no such run: nothing opens
    assert "data-episode" not in attrs_of(dom) and "Select an episode" in main_text(dom)

