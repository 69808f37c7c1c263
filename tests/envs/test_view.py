"""``servicegym view``: the HTML page over a rollouts file, checked as text and in a real browser.

The browser tests drive headless Chromium through its command line (``--dump-dom`` of the page
with an episode chosen in the URL's hash, ``--screenshot``); no driver library. They skip, saying
why, when no chromium / chromium-browser / google-chrome binary is found; with
``SERVICEGYM_INSTALL_BROWSER=1`` they first try ``apt-get install -y chromium``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from servicegym.envs.cli import view
from servicegym.envs.cli.main import main
from tests.conftest import one_browser_install_at_a_time

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
SCREENSHOT_COPY = Path("/tmp/servicegym_view.png")
BLOCK = re.compile(r'<script type="application/json"( id="(sg-\w+)"| class="sg-records" data-first="(\d+)")>(.*?)</script>', re.S)


# ----- helpers --------------------------------------------------------------------------------
def _find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def browser() -> str:
    found = _find_browser()
    if found is None and os.environ.get("SERVICEGYM_INSTALL_BROWSER") == "1" and shutil.which("apt-get"):
        with one_browser_install_at_a_time():  # another xdist worker may be installing it right now
            found = _find_browser()
            if found is None:
                subprocess.run(["apt-get", "update"], capture_output=True, timeout=600)
                subprocess.run(["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=1200)
                found = _find_browser()
    if found is None:
        pytest.skip("no headless browser: none of chromium, chromium-browser, google-chrome on PATH "
                    "(apt-get install -y chromium, or set SERVICEGYM_INSTALL_BROWSER=1 to let the test try)")
    return found


def _chrome(browser: str, tmp: Path, url: str, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{time.monotonic_ns()}"
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}", "--virtual-time-budget=3000",
           *extra, url]
    return subprocess.run(cmd, capture_output=True, timeout=timeout)


def dump_dom(browser: str, tmp: Path, page: Path, fragment: str = "", timeout: float = 120) -> str:
    proc = _chrome(browser, tmp, page.resolve().as_uri() + fragment, "--dump-dom", timeout=timeout)
    dom = proc.stdout.decode("utf-8", "replace")
    assert "<body" in dom, f"chromium dumped no DOM (rc {proc.returncode}): {proc.stderr.decode()[-2000:]}"
    return dom


def screenshot(browser: str, tmp: Path, page: Path, fragment: str, out: Path) -> None:
    proc = _chrome(browser, tmp, page.resolve().as_uri() + fragment, f"--screenshot={out}", "--window-size=1400,900")
    assert out.is_file() and out.stat().st_size > 10_000, f"no screenshot (rc {proc.returncode}): {proc.stderr.decode()[-2000:]}"


def body_attrs(dom: str) -> dict[str, str]:
    tag = re.search(r"<body([^>]*)>", dom).group(1)
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def main_text(dom: str) -> str:
    """The rendered page's ``<main>`` (the episode), tags stripped and entities decoded."""
    start = dom.index('<main id="main">')
    end = dom.index("</main>", start)
    return html.unescape(re.sub(r"<[^>]+>", " ", dom[start:end]))


def side_text(dom: str) -> str:
    start = dom.index('<aside id="side">')
    return html.unescape(re.sub(r"<[^>]+>", " ", dom[start:dom.index("</aside>", start)]))


def page_blocks(text: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The page's named JSON blocks and its records, parsed as JSON (``<\\/`` is a JSON escape)."""
    named, records = {}, []
    for _, name, first, body in BLOCK.findall(text):
        value = json.loads(body)
        if name:
            named[name] = value
        else:
            assert int(first) == len(records)
            records.extend(value)
    return named, records


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def user_reply(rec: dict[str, Any]) -> str | None:
    """The text of a user message that answers an assistant message (not the opening request)."""
    seen_assistant = False
    for m in rec["messages"]:
        if m["role"] == "assistant":
            seen_assistant = True
        elif m["role"] == "user" and seen_assistant and m.get("content") and not m["content"].startswith("<"):
            return m["content"]
    return None


def tool_name(rec: dict[str, Any]) -> str | None:
    for m in rec["messages"]:
        for tc in m.get("tool_calls") or []:
            return tc["function"]["name"]
    return None


def first_line(text: str, n: int = 60) -> str:
    return " ".join(text.split())[:n]


# ----- runs ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Three small real evaluations (delivery random with its tool lists stored once, payments and
    workspace oracle)."""
    base = tmp_path_factory.mktemp("view-runs")
    specs = {
        "delivery": ["--env", "servicegym/Delivery-v0", "--policy", "random", "--limit", "4", "--tools-once"],
        "payments": ["--env", "servicegym/Payments-v0", "--policy", "oracle", "--limit", "1"],
        "workspace": ["--env", "servicegym/Workspace-v0", "--policy", "oracle", "--limit", "1"],
    }
    out = {}
    for name, args in specs.items():
        d = base / name
        assert main(["evaluate", *args, "--out", str(d), "--quiet"]) == 0
        out[name] = d
    return out


# ----- the page as text ------------------------------------------------------------------------
def test_view_writes_a_self_contained_page_holding_every_record(runs, capsys):
    d = runs["delivery"]
    assert (d / "rollouts.tools.jsonl").is_file()  # --tools-once: the lists live in the sidecar
    assert main(["view", "--in", str(d)]) == 0
    page = d / "view.html"
    assert f"wrote {page}" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    # nothing fetched at view time: no external scripts, styles, images or fonts
    assert not re.search(r"<(link|img|iframe)\b", text)
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert "http://" not in text.split("<script", 1)[0] and "https://" not in text
    assert "@import" not in text and "url(" not in text
    named, records = page_blocks(text)
    source = view.load_run(d / "rollouts.jsonl").records
    assert named["sg-meta"]["episodes"] == len(records) == len(source) == 4
    assert named["sg-meta"]["skipped"] == []
    assert len(named["sg-tools"]) == 1 and len(named["sg-tools"][0]) == 20  # resolved from the sidecar, stored once
    for rec, src in zip(records, source):
        assert rec["tools"] == 0
        assert {k: v for k, v in rec.items() if k != "tools"} == {k: v for k, v in src.items() if k != "tools"}
    assert [row[2] for row in named["sg-index"]] == [r["task_id"] for r in source]


def test_workspace_records_keep_each_intents_final_state(runs):
    (rec,) = read_jsonl(runs["workspace"] / "rollouts.jsonl")
    sessions = rec["details"]["sessions"]
    assert [e["index"] for e in sessions] == list(range(1, int(rec["score"]["sessions"]) + 1))
    for e in sessions:
        tag = f"s{e['index']:02d}"
        assert e["intents"] and set(e["intents"].values()) <= {"completed", "inferred", "provided", "pending"}
        for key, state in e["intents"].items():  # the score's 0/1 is the state read as proactive or not
            assert rec["score"][f"{tag}/intent/{key.split('.', 1)[-1]}"] == float(state in ("completed", "inferred"))
        assert e["success"] == (rec["score"][f"rubric/{tag}"] == 1.0)
    assert read_jsonl(runs["payments"] / "rollouts.jsonl")[0]["details"] == {}


def test_out_option_and_file_input_name_the_page(runs, tmp_path, capsys):
    p = runs["payments"] / "rollouts.jsonl"
    copy = tmp_path / "pay.jsonl"
    shutil.copy(p, copy)
    assert main(["view", "--in", str(copy)]) == 0
    assert (tmp_path / "pay.view.html").is_file()  # NAME.view.html beside NAME.jsonl
    out = tmp_path / "sub" / "page.html"
    assert main(["view", "--in", str(p), "--out", str(out), "--title", "Payments <run>"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "<title>Payments &lt;run&gt;</title>" in text


def test_transcript_text_cannot_close_the_script_or_become_html(runs, tmp_path):
    recs = read_jsonl(runs["payments"] / "rollouts.jsonl")
    evil = '</script><script>document.title="pwned"</script><!-- <img src=x onerror="document.title=1"> </SCRIPT>'
    recs[0]["messages"][1]["content"] = evil
    recs[0]["task_id"] = "evil</script>task"
    src = tmp_path / "rollouts.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    page = view.default_out(src)
    assert main(["view", "--in", str(src)]) == 0
    text = page.read_text(encoding="utf-8")
    # the only script end tags are the page's own: its JSON blocks and its script
    assert text.lower().count("</script") == len(BLOCK.findall(text)) + 1
    assert "<!--" not in text
    named, records = page_blocks(text)
    assert records[0]["messages"][1]["content"] == evil and records[0]["task_id"] == "evil</script>task"
    assert named["sg-index"][0][2] == "evil</script>task"


def test_bad_input_is_a_one_line_error_with_status_2(runs, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"task_id": "a"}, {"task_id": "b"}], indent=2))
    cases = [
        ([str(tmp_path / "missing.jsonl")], "rollouts file not found"),
        ([str(tmp_path)], "no rollouts.jsonl in directory"),
        ([str(runs["delivery"] / "pass_k.png")], "is not a rollouts file: line 1 is not UTF-8"),
        ([str(runs["delivery"] / "report.md")], "is not a rollouts file: line 1 is not JSON"),
        ([str(tasks)], "is not a rollouts file"),
        ([str(empty)], "holds no episodes"),
    ]
    for args, message in cases:
        capsys.readouterr()
        assert main(["view", "--in", *args]) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("servicegym: error: "), err
        assert message in err, err
    assert main(["view", "--in", str(runs["delivery"]), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["view", "--in", str(runs["delivery"]), "--port", "70000"]) == 2


def test_a_malformed_line_is_skipped_and_reported(runs, tmp_path, capsys):
    lines = (runs["payments"] / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    lines += (runs["workspace"] / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    bad = [lines[0], '{"task_id": "cut short', lines[1], "[1, 2]", lines[0][: len(lines[0]) // 2]]
    src = tmp_path / "rollouts.jsonl"
    src.write_text("\n".join(bad) + "\n", encoding="utf-8")
    assert main(["view", "--in", str(tmp_path)]) == 0
    cap = capsys.readouterr()
    assert "skipped line 2 of" in cap.err and "not JSON" in cap.err
    assert "skipped line 4 of" in cap.err and "not an object" in cap.err
    assert "skipped line 5 of" in cap.err
    assert "2 episodes, 3 lines skipped" in cap.out
    named, records = page_blocks((tmp_path / "view.html").read_text(encoding="utf-8"))
    assert [s[0] for s in named["sg-meta"]["skipped"]] == [2, 4, 5]
    assert len(records) == 2


def test_a_missing_tools_sidecar_is_a_note_not_an_error(runs, tmp_path, capsys):
    shutil.copy(runs["delivery"] / "rollouts.jsonl", tmp_path / "rollouts.jsonl")
    assert main(["view", "--in", str(tmp_path)]) == 0
    assert "rollouts.tools.jsonl, which is not beside" in capsys.readouterr().err
    named, records = page_blocks((tmp_path / "view.html").read_text(encoding="utf-8"))
    assert named["sg-tools"] == [] and all(r["tools"] is None for r in records)
    assert named["sg-meta"]["notes"]


def test_serve_answers_on_localhost(runs, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "servicegym", "view", "--in", str(runs["payments"]), "--serve",
                             "--port", "0", "--out", str(tmp_path / "v.html")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
            if m:
                url = m.group(1)
                break
        assert url, proc.stderr.read() if proc.poll() is not None else "no 'serving' line"
        with urllib.request.urlopen(url, timeout=30) as resp:
            assert resp.headers["Content-Type"].startswith("text/html")
            assert resp.read() == (tmp_path / "v.html").read_bytes()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + "other", timeout=30)
        assert err.value.code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ----- the page in a browser -------------------------------------------------------------------
def _check_episode(browser: str, tmp: Path, page: Path, records: list[dict[str, Any]], i: int) -> str:
    rec = records[i]
    dom = dump_dom(browser, tmp, page, f"#episode={i}")
    attrs = body_attrs(dom)
    assert attrs.get("data-ready") == "1" and attrs.get("data-episode") == str(i), attrs
    shown = main_text(dom)
    assert rec["task_id"] in shown
    name = tool_name(rec)
    assert name and f"\u2192 {name}" in " ".join(shown.split())
    reply = user_reply(rec)
    assert reply, "the chosen episode has a user reply"
    assert first_line(reply) in " ".join(shown.split())
    return shown


def test_browser_shows_a_delivery_episode_with_its_rubric(runs, browser, tmp_path):
    d = runs["delivery"]
    assert main(["view", "--in", str(d)]) == 0
    records = view.load_run(d / "rollouts.jsonl").records
    i = next(n for n, r in enumerate(records) if user_reply(r) and tool_name(r))
    shown = _check_episode(browser, tmp_path, d / "view.html", records, i)
    items = [k.removeprefix("rubric/") for k in records[i]["score"] if k.startswith("rubric/")]
    assert items and all(item in shown for item in items)
    passed = sum(1 for k, v in records[i]["score"].items() if k.startswith("rubric/") and v >= 1)
    assert f"{passed} of {len(items)} passed" in shown
    assert "FAILURE" in shown or "SUCCESS" in shown
    assert "Tools" in shown and "20 tools" in shown and "System prompt" in shown
    shot = tmp_path / "delivery.png"
    screenshot(browser, tmp_path, d / "view.html", f"#episode={i}", shot)
    try:
        shutil.copy(shot, SCREENSHOT_COPY)
    except OSError:
        pass


def test_browser_shows_payments_gpf_and_workspace_sessions(runs, browser, tmp_path):
    p = runs["payments"]
    assert main(["view", "--in", str(p)]) == 0
    records = read_jsonl(p / "rollouts.jsonl")
    shown = _check_episode(browser, tmp_path, p / "view.html", records, 0)
    for label in ("G goal", "P process", "F protection", "Violations", "governing_document", "reserve_floor", "SUCCESS"):
        assert label.lower() in shown.lower(), label
    screenshot(browser, tmp_path, p / "view.html", "#episode=0", tmp_path / "payments.png")

    w = runs["workspace"]
    assert main(["view", "--in", str(w)]) == 0
    records = read_jsonl(w / "rollouts.jsonl")
    shown = _check_episode(browser, tmp_path, w / "view.html", records, 0)
    assert "PROC" in shown and "COMP" in shown and "20 of 20 passed" in shown and "session 20" in shown
    intent = next(k.split("/")[-1] for k in records[0]["score"] if "/intent/" in k)
    check = next(k.split("/")[-1] for k in records[0]["score"] if "/check/" in k)
    assert intent in shown and check in shown  # inside the (closed) session blocks: rendered, folded
    # each intent with its final state (the record's details), not a 0/1 read back from the score
    states = {st for e in records[0]["details"]["sessions"] for st in e["intents"].values()}
    assert states and all(st in shown for st in states) and "completed / inferred" not in shown
    screenshot(browser, tmp_path, w / "view.html", "#episode=0", tmp_path / "workspace.png")


def test_browser_filters_and_error_events(runs, browser, tmp_path):
    recs = read_jsonl(runs["payments"] / "rollouts.jsonl") + read_jsonl(runs["workspace"] / "rollouts.jsonl")
    recs[0]["messages"].insert(3, {"role": "user", "content": "<error>could not parse the action: unbalanced brace</error>"})
    src = tmp_path / "rollouts.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert main(["view", "--in", str(src)]) == 0
    page = tmp_path / "view.html"
    dom = dump_dom(browser, tmp_path, page, "#episode=0")
    assert "env \u00b7 error" in main_text(dom) and "unbalanced brace" in main_text(dom)
    assert 'class="msg event"' in dom
    # the filters, preset from the hash, narrow the virtual list
    dom = dump_dom(browser, tmp_path, page, "#env=Workspace-v0")
    side = " ".join(side_text(dom).split())
    assert "1 of 2 episodes" in side and recs[1]["task_id"] in side and recs[0]["task_id"] not in side
    dom = dump_dom(browser, tmp_path, page, f"#q={recs[0]['task_id'][:12]}&outcome=bad")
    assert "0 of 2 episodes" in " ".join(side_text(dom).split())
    dom = dump_dom(browser, tmp_path, page, f"#task={recs[1]['task_id']}")
    assert body_attrs(dom)["data-episode"] == "1"


def test_transcript_text_is_shown_as_text_in_the_browser(runs, browser, tmp_path):
    recs = read_jsonl(runs["payments"] / "rollouts.jsonl")
    evil = '</script><script>document.body.dataset.pwned="1"</script><img src=x onerror="document.body.dataset.pwned=2">'
    recs[0]["messages"][1]["content"] = evil
    src = tmp_path / "rollouts.jsonl"
    src.write_text(json.dumps(recs[0]) + "\n", encoding="utf-8")
    assert main(["view", "--in", str(src)]) == 0
    dom = dump_dom(browser, tmp_path, tmp_path / "view.html", "#episode=0")
    attrs = body_attrs(dom)
    assert attrs.get("data-ready") == "1" and "data-pwned" not in attrs
    assert "<img" not in dom[dom.index('<main id="main">'):dom.index("</main>")]
    assert evil in main_text(dom)


def test_ten_thousand_episodes_open_in_the_browser(runs, browser, tmp_path, capsys):
    """10,000 records (the delivery run's, duplicated under new task ids, tool lists in the sidecar
    as --tools-once writes them): the page is about the size of the file and opens within seconds."""
    d = runs["delivery"]
    base = read_jsonl(d / "rollouts.jsonl")
    src = tmp_path / "rollouts.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for n in range(10_000):
            rec = dict(base[n % len(base)], task_id=f"{base[n % len(base)]['task_id']}/copy{n:05d}")
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    shutil.copy(d / "rollouts.tools.jsonl", tmp_path / "rollouts.tools.jsonl")
    t0 = time.perf_counter()
    assert main(["view", "--in", str(tmp_path)]) == 0
    build_s = time.perf_counter() - t0
    page = tmp_path / "view.html"
    size, source = page.stat().st_size, src.stat().st_size + (tmp_path / "rollouts.tools.jsonl").stat().st_size
    assert size < 1.1 * source + 1_000_000, (size, source)  # the records, once; CSS/JS/index are small
    t0 = time.perf_counter()
    dom = dump_dom(browser, tmp_path, page, "#episode=9999", timeout=180)
    wall_s = time.perf_counter() - t0
    attrs = body_attrs(dom)
    assert attrs.get("data-ready") == "1" and attrs.get("data-episode") == "9999"
    assert f"{base[9999 % len(base)]['task_id']}/copy09999" in main_text(dom)
    assert "10000 episodes" in side_text(dom)
    assert dom.count('class="row') < 100  # a virtual list: the rows in view, not 10,000
    assert len(dom) < size / 5  # the records' text left the DOM once read
    with capsys.disabled():
        print(f"\n[view] 10,000 episodes: file {source / 1e6:.1f} MB, page {size / 1e6:.1f} MB, built in {build_s:.1f} s; "
              f"chromium: loaded in {attrs['data-load-ms']} ms (script {attrs['data-script-ms']} ms, "
              f"episode {attrs.get('data-open-ms')} ms), {wall_s:.1f} s with browser start")


def test_browser_shows_each_rubric_item_of_a_vitabench_file(browser, tmp_path):
    """A VitaBench-file episode: each natural-language item with how it was checked (code, judge or
    unchecked), its check and verdict, and both scoring modes' verdicts (``details.rubric``)."""
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "vitabench" / "delivery" / "tasks_en.json"
    if not data.is_file():
        pytest.skip(f"VitaBench data not found at {data}")
    d = tmp_path / "vb"
    assert main(["evaluate", "--env", "servicegym/Delivery-v0", "--tasks", str(data), "--policy", "oracle",
                 "--limit", "1", "--out", str(d), "--quiet"]) == 0
    assert main(["view", "--in", str(d)]) == 0
    rec = view.load_run(d / "rollouts.jsonl").records[0]
    items = rec["details"]["rubric"]["items"]
    assert rec["details"]["rubric"]["scoring"] == "rubric" and items
    shown = " ".join(main_text(dump_dom(browser, tmp_path, d / "view.html", "#episode=0")).split())
    checked = [e for e in items if e["verdict"] is not None]
    assert "Rubric items (scoring: rubric)" in shown
    assert f"{sum(e['verdict'] for e in checked)} of {len(checked)} checked items met, {len(items) - len(checked)} unchecked" in shown
    for e in items:
        assert " ".join(e["text"].split())[:50] in shown
        for c in e["checks"]:
            assert c["name"] in shown
    assert "rubric mode" in shown and "strict mode" in shown and "unrequested writes" in shown


def test_browser_counts_errored_episodes_as_failures(runs, browser, tmp_path):
    """The viewer's numbers are the report's: an errored episode is not a success, and the errors
    are shown beside the rate, in the header and the overview table (issue 25)."""
    recs = read_jsonl(runs["payments"] / "rollouts.jsonl") * 4
    for i, r in enumerate(recs):
        r["trial"] = i
    recs[1] = {**recs[1], "success": False, "error": "LLMError: 500 from the endpoint", "score": {}}
    src = tmp_path / "rollouts.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert main(["view", "--in", str(src)]) == 0
    dom = dump_dom(browser, tmp_path, tmp_path / "view.html")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", dom)).split())
    ok = sum(1 for r in recs if r.get("success") and not r.get("error"))
    assert f"4 episodes \u00b7 {ok} succeeded ({round(100 * ok / 4)}%) \u00b7 1 errored (25%), counted as failures" in text
    assert "errored (failures)" in text and "1 (25.0%)" in text
