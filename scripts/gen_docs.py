"""The documentation site's generator: the pages that come from the code, and the pictures.

As an mkdocs hook (``mkdocs.yml``: ``hooks: [scripts/gen_docs.py]``), at every build:

- one page per registered env id (``servicegym.ENV_IDS``), generated from its class docstring
  (the Gymnasium sections: description, spaces, starting state, reward, episode end, information,
  arguments, version history) with the facts the env itself reports (tool count, test suite
  size, step limits); a docstring missing a required section is a build warning (an error under
  ``mkdocs build --strict``);
- the env table of ``envs/index.md`` (the ``<!-- servicegym:env-table -->`` marker);
- one API reference page per public module (``API_MODULES``), listing what the module exports in
  ``__all__`` (mkdocstrings); a public class or function without a docstring is a build warning;
- the measured figures of ``figures.md`` (the ``<!-- servicegym:figures -->`` marker) from
  ``docs/figures.json``, which ``record`` below fills from the benchmarks' output.

As a script (from the repository root):

    python scripts/gen_docs.py pages --out DIR        # the generated pages, as files, for a look
    python scripts/gen_docs.py pictures               # docs/assets: viewer screenshot, pass^k and
                                                      # comparison plots, architecture diagram
    python scripts/gen_docs.py record ID -- CMD ...   # run a benchmark, keep its output in figures.json

The pictures are made by the project itself: two ``servicegym evaluate`` runs of a stand-in model
on the loopback chat-completions server (the tutorial "Evaluate a model and compare two runs"),
their ``pass_k.png`` and ``compare.png``, a headless-Chromium screenshot of ``servicegym view`` of
one of them, and an SVG of the top-level folders drawn from the imports the code really makes.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ASSETS = DOCS / "assets"
FIGURES = DOCS / "figures.json"
# where the hook lays the packages out as installed (servicegym/envs, ...) for mkdocstrings to read
API_SOURCE = ROOT / "build" / "docs-src"
SUBPACKAGES = ("envs", "rewards", "simulators", "world_state")

log = logging.getLogger("mkdocs.plugins.servicegym_docs")

ENV_TABLE_MARK = "<!-- servicegym:env-table -->"
FIGURES_MARK = "<!-- servicegym:figures -->"
# the sections every env class documents (the Gymnasium way); a missing one fails a strict build
REQUIRED_SECTIONS = ("Description", "Action Space", "Observation Space", "Reward", "Episode End", "Arguments",
                     "Version History")

# (module, page title, members: None = the module's __all__). One page each, under api/.
API_MODULES: list[tuple[str, str, list[str] | None]] = [
    ("servicegym", "servicegym", None),
    ("servicegym.envs.tasks", "Tasks and task files", None),
    ("servicegym.envs.running.policies", "Reference policies", ["OraclePolicy", "RandomPolicy"]),
    ("servicegym.envs.running.episodes", "Episodes", None),
    ("servicegym.envs.running.rollouts", "Rollouts", None),
    ("servicegym.envs.running.vector", "Vector envs", None),
    ("servicegym.envs.running.llm_policy", "LLM agent policy", None),
    ("servicegym.rewards", "Rewards and metrics", None),
    ("servicegym.simulators", "Simulated users and the LLM client", None),
    ("servicegym.simulators.loopback", "Loopback chat-completions server", None),
    ("servicegym.world_state", "World state and tools", None),
    ("servicegym.envs.integrations.trl", "TRL",
     ["environment_factory", "score_reward_funcs", "trl_rows", "trl_dataset", "TRLEnvironment"]),
    ("servicegym.envs.integrations.trl_curve", "TRL learning curves", None),
    ("servicegym.envs.integrations.tiny_model", "Tiny test model", None),
    ("servicegym.envs.integrations.rollout", "Gateway rollout", None),
    ("servicegym.envs.integrations.openenv.server", "OpenEnv server", None),
    ("servicegym.envs.integrations.openenv.client", "OpenEnv clients", None),
]


# ----- env pages ---------------------------------------------------------------------------------
def env_slug(env_id: str) -> str:
    """``servicegym/CrossScenario-v0`` -> ``cross-scenario`` (the page's file name)."""
    name = env_id.split("/")[-1].rsplit("-v", 1)[0]
    return re.sub(r"(?<!^)(?=[A-Z][a-z])", "-", name).lower()


def env_classes() -> dict[str, type]:
    """Every registered env id and its class, in registration order."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    import servicegym

    return {env_id: load_env_creator(gym.spec(env_id).entry_point) for env_id in servicegym.ENV_IDS}


def docstring_sections(doc: str) -> dict[str, str]:
    """The ``## Name`` sections of a Gymnasium-style docstring, in order."""
    sections: dict[str, str] = {}
    name = None
    for line in doc.splitlines():
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            name = m.group(1)
            sections[name] = ""
        elif name is not None:
            sections[name] += line + "\n"
    return {k: v.strip() for k, v in sections.items()}


def env_facts(env_id: str) -> dict[str, Any]:
    """What the env reports about itself: tools (over the first test tasks), suite size, limits."""
    import gymnasium as gym

    env = gym.make(env_id, split="test")
    try:
        base = env.unwrapped
        ids = base.task_ids("test")
        tools = set()
        for tid in ids[:3]:
            _, info = env.reset(seed=0, options={"task_id": tid})
            tools.add(len(info["tools"]))
        return {"tools": "-".join(str(n) for n in sorted({min(tools), max(tools)})), "suite": len(ids),
                "max_steps": getattr(base, "max_steps", None), "max_errors": getattr(base, "max_errors", None),
                "action_space": type(env.action_space).__name__,
                "max_length": getattr(env.action_space, "max_length", None),
                "observation_space": type(env.observation_space).__name__,
                "obs_max_length": getattr(env.observation_space, "max_length", None)}
    finally:
        env.close()


def env_page(env_id: str, cls: type, facts: dict[str, Any]) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    sections = docstring_sections(doc)
    missing = [s for s in REQUIRED_SECTIONS if s not in sections]
    if missing:
        log.warning("%s (%s.%s): its docstring lacks the section(s) %s", env_id, cls.__module__, cls.__qualname__,
                    ", ".join(missing))
    name = env_id.split("/")[-1]
    first = sections.get("Description", "").split(". ")[0].replace("\n", " ")
    rows = [("id", f"`{env_id}`"), ("class", f"`{cls.__module__}.{cls.__qualname__}`"),
            ("make", f'`gymnasium.make("{env_id}")` after `import servicegym`'),
            ("action space", f"`{facts['action_space']}` (text, at most {facts['max_length']:,} characters)"),
            ("observation space", f"`{facts['observation_space']}` (text, at most {facts['obs_max_length']:,} characters)"),
            ("tools", f"{facts['tools']} (the first test tasks' `info[\"tools\"]`)"),
            ("frozen test suite", f"{facts['suite']} tasks (`env.unwrapped.task_ids(\"test\")`)"),
            ("limits", f"`max_steps={facts['max_steps']}`, `max_errors={facts['max_errors']}`")]
    out = [f"# {name}", "", f"{first}." if first and not first.endswith(".") else first, "",
           "| | |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows], "",
           f"*Generated from the class docstring (`help({cls.__module__}.{cls.__qualname__})`) by "
           "`scripts/gen_docs.py`.*", ""]
    for title, body in sections.items():
        out += [f"## {title}", "", body, ""]
    return "\n".join(out)


def env_table(classes: dict[str, type], facts: dict[str, dict[str, Any]]) -> str:
    out = ["| id | what | tools | test suite | page |", "|---|---|---|---|---|"]
    for env_id, cls in classes.items():
        desc = docstring_sections(inspect.cleandoc(cls.__doc__ or "")).get("Description", "")
        first = desc.split(". ")[0].replace("\n", " ").split(":")[0]
        f = facts[env_id]
        out.append(f"| `{env_id}` | {first} | {f['tools']} | {f['suite']} | [{env_id.split('/')[-1]}]"
                   f"({env_slug(env_id)}.md) |")
    return "\n".join(out)


# ----- API reference -------------------------------------------------------------------------------
def module_source(module: str) -> Path:
    """The file of a ``servicegym...`` module in the repository (no import)."""
    parts = module.split(".")[1:]
    base = ROOT / "servicegym" if not parts else ROOT.joinpath(*parts)
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def module_exports(module: str) -> list[str]:
    """The module's ``__all__``, read from its source."""
    tree = ast.parse(module_source(module).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [n for n in ast.literal_eval(node.value) if n != "__version__"]
    raise ValueError(f"{module} has no __all__")


def api_members(module: str, members: list[str] | None) -> list[str]:
    names = members if members is not None else module_exports(module)
    # re-exports from outside servicegym (gymnasium's AutoresetMode) are documented there
    source = module_source(module).read_text(encoding="utf-8")
    foreign = {a.asname or a.name for node in ast.parse(source).body if isinstance(node, ast.ImportFrom)
               and node.module and not node.module.startswith("servicegym") and node.level == 0 for a in node.names}
    return [n for n in names if n not in foreign]


def api_slug(module: str) -> str:
    return module.replace("servicegym.", "").replace("servicegym", "index").replace(".", "-")


def api_page(module: str, title: str, members: list[str] | None) -> str:
    names = api_members(module, members)
    lines = [f"# {title}", "", f"`{module}`: what it exports (`__all__`)." if members is None
             else f"`{module}`: its public entry points.", "", f"::: {module}", "    options:",
             "      members:", *[f"        - {n}" for n in names], ""]
    return "\n".join(lines)


def layout_api_source() -> Path:
    """``build/docs-src/servicegym``: the package laid out as a wheel installs it (links into the
    repository), so mkdocstrings reads ``servicegym.envs`` & co. statically, with no import."""
    pkg = API_SOURCE / "servicegym"
    pkg.mkdir(parents=True, exist_ok=True)
    for entry in [p.name for p in (ROOT / "servicegym").glob("*.py")] + list(SUBPACKAGES):
        link, target = pkg / entry, (ROOT / "servicegym" / entry if entry.endswith(".py") else ROOT / entry)
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.is_file():
            link.unlink()
        link.symlink_to(target)
    return API_SOURCE


def missing_docstrings() -> list[str]:
    """Public classes and functions of the API pages without a docstring (griffe, as rendered)."""
    import griffe

    pkg = griffe.load("servicegym", search_paths=[str(layout_api_source())], resolve_aliases=True, try_relative_path=False,
                      resolve_external=False)
    missing = []
    for module, _, members in API_MODULES:
        mod = pkg if module == "servicegym" else pkg[module.split(".", 1)[1]]
        for name in api_members(module, members):
            try:
                obj = mod[name]
                kind = obj.kind.value
                doc = obj.docstring
            except Exception as exc:  # noqa: BLE001  an alias griffe cannot follow is reported as such
                missing.append(f"{module}.{name} (not found: {type(exc).__name__})")
                continue
            if kind in ("class", "function") and not (doc and doc.value.strip()):
                missing.append(f"{module}.{name}")
    return missing


# ----- measured figures ----------------------------------------------------------------------------
def load_figures() -> dict[str, Any]:
    return json.loads(FIGURES.read_text(encoding="utf-8"))


def md_table(table: dict[str, Any]) -> str:
    cols = table["columns"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in table["rows"]:
        if len(r) != len(cols):
            raise ValueError(f"a figures row has {len(r)} cells for {len(cols)} columns: {r}")
        rows.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(rows)


def figures_markdown(doc: dict[str, Any]) -> str:
    out = [doc.get("intro", ""), ""]
    for sec in doc["sections"]:
        out += [f"## {sec['title']} {{#{sec['id']}}}", ""]
        if sec.get("command"):
            out += [f"Measured with `{sec['command']}`.", ""]
        for block in sec["blocks"]:
            out += [block["text"] if "text" in block else md_table(block["table"]), ""]
        for run in sec.get("runs", []):
            out += [f"??? note \"Output of `{run['command']}` ({run['recorded']}, exit {run['exit']})\"", "",
                    "    ```text", *["    " + line for line in run["output"].splitlines()], "    ```", ""]
    return "\n".join(out)


def record(section_id: str, command: list[str], limit: int = 64_000) -> int:
    """Runs a benchmark command from the repository root and keeps its output (the last
    ``limit`` characters) as the section's latest run in ``docs/figures.json``."""
    doc = load_figures()
    sec = next((s for s in doc["sections"] if s["id"] == section_id), None)
    if sec is None:
        print(f"gen_docs: no figures section {section_id!r}; have {', '.join(s['id'] for s in doc['sections'])}",
              file=sys.stderr)
        return 2
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr[-4000:])
    sec["runs"] = [{"command": " ".join(command), "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                    "exit": proc.returncode, "python": sys.version.split()[0], "output": proc.stdout[-limit:]}]
    FIGURES.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return proc.returncode


# ----- the mkdocs hook -----------------------------------------------------------------------------
_cache: dict[str, Any] = {}


def generated_pages() -> dict[str, str]:
    """Every generated page, by its path under docs/ (computed once per process)."""
    if "pages" not in _cache:
        classes = env_classes()
        facts = {env_id: env_facts(env_id) for env_id in classes}
        pages = {f"envs/{env_slug(i)}.md": env_page(i, c, facts[i]) for i, c in classes.items()}
        pages.update({f"api/{api_slug(m)}.md": api_page(m, t, mem) for m, t, mem in API_MODULES})
        _cache["pages"] = pages
        _cache["env_table"] = env_table(classes, facts)
        _cache["env_nav"] = [{i.split("/")[-1]: f"envs/{env_slug(i)}.md"} for i in classes]
        _cache["api_nav"] = [{t: f"api/{api_slug(m)}.md"} for m, t, _ in API_MODULES]
    return _cache["pages"]


def _fill_nav(nav: list[Any], title: str, entries: list[dict[str, str]]) -> None:
    for item in nav:
        if isinstance(item, dict) and title in item and isinstance(item[title], list):
            have = {json.dumps(e, sort_keys=True) for e in item[title]}
            item[title] += [e for e in entries if json.dumps(e, sort_keys=True) not in have]
            return
    raise ValueError(f"mkdocs.yml's nav has no section {title!r} to list the generated pages under")


def on_startup(command: str, dirty: bool) -> None:
    # before mkdocstrings' Python handler reads its ``paths`` (it drops a folder that does not exist
    # yet, and a fresh clone has no build/docs-src): lay the package out first
    layout_api_source()


def on_config(config: Any) -> Any:
    _cache.clear()  # every build (mkdocs serve rebuilds) reads the code afresh
    layout_api_source()
    generated_pages()
    _fill_nav(config["nav"], "Environments", _cache["env_nav"])
    _fill_nav(config["nav"], "API reference", _cache["api_nav"])
    return config


def on_pre_build(config: Any) -> None:
    for name in missing_docstrings():
        log.warning("public name without a docstring: %s", name)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in generated_pages().items():
        if files.get_file_from_path(path) is None:
            files.append(File.generated(config, path, content=text))
    # the architecture picture is drawn afresh from the code at every build
    stale = files.get_file_from_path("assets/architecture.svg")
    if stale is not None:
        files.remove(stale)
    files.append(File.generated(config, "assets/architecture.svg", content=architecture_svg(package_imports())))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if ENV_TABLE_MARK in markdown:
        generated_pages()
        markdown = markdown.replace(ENV_TABLE_MARK, _cache["env_table"])
    if FIGURES_MARK in markdown:
        markdown = markdown.replace(FIGURES_MARK, figures_markdown(load_figures()))
    return markdown


# ----- pictures ------------------------------------------------------------------------------------
def two_runs(work: Path, n_tasks: int = 8, trials: int = 4) -> tuple[Path, Path, Path]:
    """The tutorial's two evaluate runs of stand-in models on the loopback server (model-a replays
    each task's golden route; model-b gives up on about 30% of conversations) and their comparison."""
    import random

    import gymnasium as gym

    from servicegym.envs.cli.main import main
    from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
    from servicegym.simulators.loopback import LoopbackServer, text_reply

    tasks = replayable_tasks(gym.make("servicegym/Delivery-v0"), n_tasks)
    ids = ",".join(t.task_id for t in tasks)
    golden = golden_replay_handler(tasks)
    rng = random.Random(0)

    def flaky(body: dict[str, Any]) -> Any:
        if [m["role"] for m in body["messages"]] == ["system", "user"] and rng.random() < 0.3:
            return text_reply("Sorry, I cannot place this order. ###STOP###")
        return golden(body)

    for name, handler in (("model-a", golden), ("model-b", flaky)):
        with LoopbackServer(handler=handler, model=name) as server:
            code = main(["evaluate", "--env", "servicegym/Delivery-v0", "--policy", "llm", "--base-url",
                         server.base_url, "--model", name, "--task-ids", ids, "--trials", str(trials),
                         "--concurrency", "1", "--out", str(work / name), "--quiet"])
            if code != 0:
                raise RuntimeError(f"servicegym evaluate of {name} exited {code}")
    if main(["report", str(work / "model-a"), str(work / "model-b"), "--out", str(work / "compare")]) != 0:
        raise RuntimeError("servicegym report exited non-zero")
    return work / "model-a", work / "model-b", work / "compare"


def find_browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chrome_cmd(browser: str, profile: Path, *extra: str) -> list[str]:
    return [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}", *extra]


def viewer_screenshot(run: Path, out: Path, browser: str, work: Path) -> None:
    from servicegym.envs.cli.main import main

    page = work / "view.html"
    if main(["view", "--in", str(run), "--out", str(page)]) != 0:
        raise RuntimeError("servicegym view exited non-zero")
    cmd = chrome_cmd(browser, work / "profile", "--virtual-time-budget=3000", "--window-size=1400,900",
                     f"--screenshot={out}", page.resolve().as_uri() + "#episode=0")
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    if not out.is_file():
        raise RuntimeError(f"chromium made no screenshot (exit {proc.returncode}): {proc.stderr.decode()[-2000:]}")


def package_imports() -> dict[tuple[str, str], tuple[int, bool]]:
    """(importer, imported) -> (modules that import it, whether only inside functions): the imports
    between the top-level folders and the layers of envs/, read from the source."""
    def unit(path: Path) -> str:
        rel = path.relative_to(ROOT).parts
        return f"envs/{rel[1]}" if rel[0] == "envs" and len(rel) > 2 else rel[0]

    def target(name: str) -> str | None:
        parts = name.split(".")
        if parts[0] != "servicegym" or len(parts) < 2 or parts[1] not in SUBPACKAGES:
            return None
        return f"envs/{parts[2]}" if parts[1] == "envs" and len(parts) > 2 else parts[1]

    def imports(tree: ast.AST) -> list[tuple[str, bool]]:
        """(module imported, inside a function) of every import statement, in one walk."""
        found: list[tuple[str, bool]] = []
        todo: list[tuple[ast.AST, bool]] = [(tree, False)]
        while todo:
            node, deferred = todo.pop()
            if isinstance(node, ast.Import):
                found += [(a.name, deferred) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((node.module, deferred))
            inner = deferred or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            todo += [(child, inner) for child in ast.iter_child_nodes(node)
                     if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case))]
        return found

    edges: dict[tuple[str, str], tuple[int, bool]] = {}
    for top in SUBPACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            src = unit(path)
            found: dict[str, bool] = {}  # target -> only inside functions so far
            for name, deferred in imports(ast.parse(path.read_text(encoding="utf-8"))):
                t = target(name)
                if t and t != src:
                    found[t] = found.get(t, True) and deferred
            for t, only_deferred in found.items():
                n, was = edges.get((src, t), (0, True))
                edges[(src, t)] = (n + 1, was and only_deferred)
    return edges


ARCH_NODES = {  # unit -> (x, y, label, what); every module-level import points down or right
    "envs/cli": (40, 40, "envs/cli", "the servicegym command line, reports, viewer"),
    "envs/integrations": (40, 130, "envs/integrations", "SB3, TRL, verl, SkyRL, verifiers, server"),
    "envs/running": (40, 220, "envs/running", "policies, rollout collector, vector envs"),
    "envs/environments": (40, 310, "envs/environments", "ToolUseEnv, action parsing, one env a domain"),
    "envs/tasks": (40, 400, "envs/tasks", "task model, files, generators, suites, VitaBench"),
    "rewards": (560, 130, "rewards", "rubrics, G/P/F, PROC/COMP, judge, metrics, wrappers"),
    "simulators": (560, 265, "simulators", "scripted and LLM users, LLM client, loopback server"),
    "world_state": (560, 400, "world_state", "tables, tools, history; one world a domain"),
}


def architecture_svg(edges: dict[tuple[str, str], tuple[int, bool]]) -> str:
    """The folders as boxes and the imports between them as arrows (importer -> imported; dashed:
    an import made only inside a function): the layers of envs/ on the left, the shared packages on
    the right."""
    w, h, bw, bh = 920, 500, 340, 56
    nodes = ARCH_NODES
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
           'font-family="Helvetica, Arial, sans-serif">',
           "<title>servicegym: folders and the imports between them</title>",
           '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#607d8b"/></marker></defs>',
           f'<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>',
           '<rect x="20" y="24" width="450" height="452" rx="10" fill="#e8eaf6" stroke="#9fa8da"/>',
           '<text x="30" y="17" font-size="12" fill="#3949ab">envs/: the Gymnasium surface</text>']
    for (src, dst), (n, deferred) in sorted(edges.items()):
        if src not in nodes or dst not in nodes:
            continue
        (x1, y1, *_), (x2, y2, *_) = nodes[src], nodes[dst]
        if x1 == x2 == 40:  # between layers of envs/: an arc beside the boxes' right edges
            sy, ey = y1 + bh / 2, y2 + bh / 2
            bend = x1 + bw + 10 + 16 * abs(ey - sy) / 90
            path = f"M{x1 + bw},{sy} C{bend},{sy} {bend},{ey} {x2 + bw},{ey}"
        elif x1 == x2:  # between the shared packages: straight down their left side
            path = f"M{x1 + 24},{y1 + bh} L{x2 + 24},{y2}"
        else:
            path = f"M{x1 + bw},{y1 + bh / 2} L{x2},{y2 + bh / 2}"
        dash = ' stroke-dasharray="5,4"' if deferred else ""
        how = "inside functions only" if deferred else "module level"
        out.append(f'<path d="{path}" fill="none" stroke="#607d8b" stroke-width="{1 + min(n, 20) / 8:.2f}"{dash} '
                   f'marker-end="url(#a)" opacity="0.75"><title>{src} imports {dst} ({n} modules, {how})'
                   "</title></path>")
    for key, (x, y, label, what) in nodes.items():
        fill = "#c5cae9" if key.startswith("envs/") else "#ffe0b2"
        out += [f'<rect x="{x}" y="{y}" width="{bw}" height="{bh}" rx="8" fill="{fill}" stroke="#455a64"/>',
                f'<text x="{x + 12}" y="{y + 23}" font-size="16" font-weight="bold" fill="#263238">{label}/</text>',
                f'<text x="{x + 12}" y="{y + 44}" font-size="12" fill="#37474f">{what}</text>']
    notes = ["An action string enters envs/; tool calls go to", "world_state/, messages to simulators/; rewards/",
             "reads the final state and the history.", "Arrow: A imports B (width: how many modules;",
             "dashed: only inside functions)."]
    out += [f'<text x="560" y="{34 + 18 * i}" font-size="13" fill="#263238">{s}</text>' for i, s in enumerate(notes)]
    out.append("</svg>")
    return "\n".join(out) + "\n"


def pictures(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    made = []
    svg = out / "architecture.svg"
    svg.write_text(architecture_svg(package_imports()), encoding="utf-8")
    made.append(svg)
    os.environ.setdefault("MPLBACKEND", "Agg")
    out = out.resolve()
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the runs are named runs/model-a, runs/model-b in the pictures, as in the tutorial
        try:
            _, model_b, compare = two_runs(Path("runs"))
            shutil.copyfile(model_b / "pass_k.png", out / "pass-k.png")
            shutil.copyfile(compare / "compare.png", out / "compare.png")
            made += [out / "pass-k.png", out / "compare.png"]
            browser = find_browser()
            if browser is None:
                print("gen_docs: no chromium on PATH: the viewer screenshot is left as it is", file=sys.stderr)
            else:
                viewer_screenshot(model_b, out / "viewer.png", browser, Path(tmp))
                made.append(out / "viewer.png")
        finally:
            os.chdir(here)
    return made


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gen_docs.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pages", help="write the generated pages to a directory")
    p.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("pictures", help="regenerate the pictures in docs/assets")
    p.add_argument("--out", type=Path, default=ASSETS)
    p = sub.add_parser("record", help="run a benchmark and keep its output in docs/figures.json")
    p.add_argument("section")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.cmd == "pages":
        for path, text in generated_pages().items():
            (args.out / path).parent.mkdir(parents=True, exist_ok=True)
            (args.out / path).write_text(text, encoding="utf-8")
        (args.out / "figures.md").write_text(figures_markdown(load_figures()), encoding="utf-8")
        (args.out / "env-table.md").write_text(_cache["env_table"] + "\n", encoding="utf-8")
        print(f"wrote {len(generated_pages()) + 2} pages under {args.out}")
        return 0
    if args.cmd == "pictures":
        for path in pictures(args.out):
            print(f"wrote {path}")
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("record needs a command after --")
    return record(args.section, command)


if __name__ == "__main__":
    sys.exit(main())
