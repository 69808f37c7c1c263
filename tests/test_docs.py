"""The documentation site (``mkdocs.yml``, ``docs/``, ``scripts/gen_docs.py``).

- Every Python block of the tutorials (``docs/tutorials/*.md``) runs as written, as the README's
  do (tests/test_readme.py): each in a fresh interpreter, in a scratch directory laid out like the
  repository's (``../shared`` beside it). A block marked ``<!-- snippet: not run (reason) -->`` is
  skipped with its reason; ``<!-- snippet: needs MOD, MOD -->`` runs where those modules import
  (an extra: trl, ray, openenv) and is skipped, saying which, elsewhere. The other pages' blocks
  run too, except those the README holds as well (tests/test_readme.py runs them there).
- The site builds with ``mkdocs build --strict`` (warnings are errors: broken links, a public
  name without a docstring, an env docstring missing a Gymnasium section), with a page per
  registered env generated from its docstring, the API reference and the figures page; skipped,
  saying so, without the ``docs`` extra.
- The built pages render in headless Chromium served over HTTP on 127.0.0.1: every page loads
  with its article and images, no console message, and the search finds an env by name; skipped
  without a chromium binary (``SERVICEGYM_INSTALL_BROWSER=1`` lets it apt-get one, as the viewer's
  tests do).
"""

from __future__ import annotations

import html
import http.server
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import servicegym
from tests.conftest import one_browser_install_at_a_time

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(<!-- snippet: (not run \(([^)]*)\)|needs ([\w.]+(?:, *[\w.]+)*)) -->\n)?```python\n(.*?)```", re.S)
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def blocks(page: Path) -> list[tuple[str, int, str | None, list[str], str]]:
    """(page, line, reason not run, modules needed, code) of each Python block of a page."""
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(DOCS).as_posix()
    return [(name, text[: m.start()].count("\n") + 1, m.group(3), [s.strip() for s in (m.group(4) or "").split(",")
             if s.strip()], m.group(5)) for m in BLOCK.finditer(text)]


def tutorial_blocks() -> list[tuple[str, int, str | None, list[str], str]]:
    return [b for page in sorted((DOCS / "tutorials").glob("*.md")) for b in blocks(page)]


def other_blocks() -> list[tuple[str, int, str | None, list[str], str]]:
    pages = [p for p in sorted(DOCS.rglob("*.md")) if p.parent.name != "tutorials"]
    return [b for page in pages for b in blocks(page)]


def run_block(page: str, line: int, reason: str | None, needs: list[str], code: str, tmp_path: Path) -> None:
    if reason is not None:
        pytest.skip(f"{page} line {line}: {reason}")
    missing = [m for m in needs if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{page} line {line} needs {', '.join(missing)} (not installed; see its extra in pyproject.toml)")
    work = tmp_path / "work"
    work.mkdir()
    shared = ROOT.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    elif "../shared" in code:
        pytest.skip("the block reads ../shared/data, which is absent here")
    env = {**os.environ, "MPLBACKEND": "Agg", "TQDM_DISABLE": "1"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{page} line {line}:\n{code}\n{proc.stderr[-3000:]}"


# ----- the tutorials' code -------------------------------------------------------------------------
def test_every_tutorial_has_code_that_runs_and_says_why_any_does_not():
    pages = sorted(p.stem for p in (DOCS / "tutorials").glob("*.md"))
    assert pages == ["audit-vitabench", "evaluate-and-compare", "ray-rollouts", "reward-shaping", "serve-remote",
                     "train-trl"]
    found = tutorial_blocks()
    for stem in pages:  # each tutorial has at least one block that is run (here, or where its extra is)
        assert any(page == f"tutorials/{stem}.md" and reason is None for page, _, reason, _, _ in found), stem
    assert all(reason.strip() for _, _, reason, _, _ in found if reason is not None)


@pytest.mark.parametrize("page,line,reason,needs,code", tutorial_blocks(),
                         ids=[f"{b[0].removeprefix('tutorials/').removesuffix('.md')}-line{b[1]}" for b in tutorial_blocks()])
def test_tutorial_block_runs_as_written(page, line, reason, needs, code, tmp_path):
    run_block(page, line, reason, needs, code, tmp_path)


def _in_readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page,line,reason,needs,code", other_blocks(),
                         ids=[f"{b[0].removesuffix('.md')}-line{b[1]}" for b in other_blocks()])
def test_page_block_runs_as_written(page, line, reason, needs, code, tmp_path):
    if code.strip() in _in_readme():
        pytest.skip(f"{page} line {line}: the README holds this block too; tests/test_readme.py runs it there")
    run_block(page, line, reason, needs, code, tmp_path)


# ----- the build -----------------------------------------------------------------------------------
def _docs_extra_missing() -> list[str]:
    return [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
            if importlib.util.find_spec(m.split(".")[0]) is None
            or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec("mkdocstrings_handlers") is None)]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = _docs_extra_missing()
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def test_the_site_builds_strictly_with_a_generated_page_per_env(site):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    classes = gen_docs.env_classes()
    assert list(classes) == list(servicegym.ENV_IDS)
    table = " ".join(_text(site / "envs" / "index.html").split())
    for env_id, cls in classes.items():
        page = site / "envs" / gen_docs.env_slug(env_id) / "index.html"
        assert page.is_file(), f"no page for {env_id}"
        text = " ".join(_text(page).split())
        assert f"{cls.__module__}.{cls.__qualname__}" in text
        for section in gen_docs.REQUIRED_SECTIONS:
            assert section in text, (env_id, section)
        # the docstring's own words, e.g. its last version-history entry, are on the page
        sections = gen_docs.docstring_sections(inspect.cleandoc(cls.__doc__ or ""))
        words = lambda s: " ".join(re.findall(r"[A-Za-z0-9]+", s))  # noqa: E731  markup aside
        last_words = " ".join(words(sections["Version History"]).split()[-8:])
        assert last_words in words(text), (env_id, last_words)
        assert env_id in table  # the generated env table lists it
    # the API reference renders the public names from their docstrings
    api = " ".join(_text(site / "api" / "index.html").split())
    for name in servicegym.__all__:
        if name != "__version__":
            assert name in api
    assert "Avg@k" in " ".join(_text(site / "api" / "rewards" / "index.html").split())
    # the figures page is generated from docs/figures.json: each section's command is on it
    figures = " ".join(_text(site / "figures" / "index.html").split())
    for sec in json.loads((DOCS / "figures.json").read_text(encoding="utf-8"))["sections"]:
        assert sec["title"] in figures and (not sec["command"] or sec["command"] in figures)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {d["location"].split("#")[0] for d in index["docs"]}
    assert {"envs/delivery/", "tutorials/evaluate-and-compare/", "api/rewards/"} <= locations


def test_an_env_docstring_without_a_gymnasium_section_is_a_build_warning():
    # (a public name without a docstring is one too: the strict build above passes only without any)
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.remove(str(ROOT / "scripts"))

    class BareEnv:
        """## Description\nNothing else."""

    class Capture(list):
        def warning(self, msg, *args):
            self.append(msg % args)

    captured, real = Capture(), gen_docs.log
    gen_docs.log = captured
    try:
        facts = {"action_space": "UnicodeText", "max_length": 10, "observation_space": "UnicodeText",
                 "obs_max_length": 10, "tools": "1", "suite": 1, "max_steps": 5, "max_errors": 2}
        page = gen_docs.env_page("servicegym/Bare-v0", BareEnv, facts)
    finally:
        gen_docs.log = real
    assert "# Bare-v0" in page and len(captured) == 1
    assert "Action Space" in captured[0] and "Version History" in captured[0]


def test_the_architecture_picture_is_drawn_from_the_imports_and_they_flow_one_way(site):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    edges = gen_docs.package_imports()
    order = list(gen_docs.ARCH_NODES)  # the layers top to bottom: envs' own, then rewards, simulators, world_state
    assert {u for edge in edges for u in edge} - {"envs"} <= set(order)
    # every import made at module level points down the layers; only deferred ones (inside a function) may not
    upward = [(a, b) for (a, b), (_, deferred) in edges.items() if a in order and order.index(a) > order.index(b)
              and not deferred]
    assert not upward, upward
    assert ("envs/environments", "world_state") in edges and not any(a == "world_state" for a, _ in edges)
    svg = (site / "assets" / "architecture.svg").read_text(encoding="utf-8")
    assert svg == gen_docs.architecture_svg(edges)  # the site's picture is today's code, not a stale file
    assert svg.count("marker-end=") == sum(1 for a, b in edges if a in order and b in order)


# ----- the pages in a browser ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> str:
    def find() -> str | None:
        return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)

    found = find()
    if found is None and os.environ.get("SERVICEGYM_INSTALL_BROWSER") == "1" and shutil.which("apt-get"):
        with one_browser_install_at_a_time():  # another xdist worker may be installing it right now
            found = find()
            if found is None:
                subprocess.run(["apt-get", "update"], capture_output=True, timeout=600)  # as the viewer's tests do
                subprocess.run(["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=1200)
                found = find()
    if found is None:
        pytest.skip("no headless browser: none of chromium, chromium-browser, google-chrome on PATH "
                    "(apt-get install -y chromium, or set SERVICEGYM_INSTALL_BROWSER=1 to let the test try)")
    return found


def site_handler(site: Path, done: threading.Event, result: dict) -> type[http.server.SimpleHTTPRequestHandler]:
    """Serves the built site to Chromium, plus the check page's two routes: ``POST /_result`` takes
    its findings, and ``GET /_wait`` (an image of the check page) is answered only then, so the
    check page's load event, after which ``--dump-dom`` ends Chromium, waits for the checks."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(site), **kwargs)

        def log_message(self, *args):  # the test reads the browser's log, not the server's
            pass

        def do_GET(self):
            if self.path.startswith("/_wait"):
                done.wait(180)
                self.send_response(204)
                self.end_headers()
                return
            super().do_GET()

        def do_POST(self):
            body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 4_000_000))
            result["raw"] = body.decode("utf-8", "replace")
            done.set()
            self.send_response(204)
            self.end_headers()

    return Handler


CHECKER = """<!doctype html><html><head><meta charset="utf-8"><title>check</title></head><body>
<script>
const pages = %s;
const out = {pages: {}, search: null};
const sleep = ms => new Promise(r => setTimeout(r, ms));
function frame(url) {
  return new Promise(resolve => {
    const f = document.createElement("iframe");
    f.style.width = "1200px"; f.style.height = "800px";
    f.onload = () => resolve(f);
    f.src = url;
    document.body.appendChild(f);
  });
}
(async () => {
  for (const p of pages) {
    const f = await frame(p);
    const d = f.contentDocument;
    const article = d.querySelector("article");
    out.pages[p] = {title: d.title, h1: (d.querySelector("article h1") || {}).textContent || "",
                    article: article ? article.textContent.length : 0,
                    images: [...d.querySelectorAll("article img")].map(i => [i.getAttribute("src"), i.naturalWidth])};
    f.remove();
  }
  const f = await frame("index.html");
  const d = f.contentDocument, input = d.querySelector("input.md-search__input");
  for (let i = 0; i < 150 && !out.search; i++) {
    await sleep(100);
    input.value = "Delivery"; input.focus();
    input.dispatchEvent(new Event("focus")); input.dispatchEvent(new Event("keyup")); input.dispatchEvent(new Event("input"));
    const hits = [...d.querySelectorAll(".md-search-result__item a")].map(a => a.getAttribute("href"));
    if (hits.length) out.search = hits;
  }
  return JSON.stringify(out);
})().catch(e => "ERROR " + e).then(text => fetch("/_result", {method: "POST", body: text}));
</script><img src="/_wait" alt=""></body></html>"""


def test_every_page_renders_in_chromium_without_console_errors_and_search_works(site, browser, tmp_path):
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html"))
    assert len(pages) >= 30
    (site / "_check.html").write_text(CHECKER % json.dumps(pages), encoding="utf-8")
    done, found = threading.Event(), {}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), site_handler(site, done, found))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/_check.html"
        profile = tmp_path / f"profile-{time.monotonic_ns()}"
        cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}", "--enable-logging=stderr",
               "--v=0", "--dump-dom", url]
        proc = subprocess.run(cmd, capture_output=True, timeout=240)
    finally:
        done.set()
        server.shutdown()
        (site / "_check.html").unlink()
    log = proc.stderr.decode("utf-8", "replace")
    raw = found.get("raw", "")
    assert raw.startswith("{"), f"the check page did not finish (rc {proc.returncode}): {raw[:500]}\n{log[-2000:]}"
    result = json.loads(raw)
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert not console, console
    assert sorted(result["pages"]) == pages
    for page, seen in result["pages"].items():
        assert seen["article"] > 200 and seen["h1"].strip(), (page, seen)
        assert seen["title"].endswith("servicegym"), (page, seen["title"])
        for src, width in seen["images"]:
            assert width > 0, f"{page}: image {src} did not load"
    assert result["search"], "searching 'Delivery' found nothing"
    assert any("envs/delivery/" in hit for hit in result["search"]), result["search"]
