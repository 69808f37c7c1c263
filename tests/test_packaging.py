"""The import name and the layout: one top-level package, ``servicegym``, in the built wheel; it
works beside another distribution's top-level ``envs`` and from a directory with its own
``envs/``; every package folder is shipped; no module imports a module that imports it back."""

from __future__ import annotations

import ast
import base64
import hashlib
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# repository folder -> the package it ships as (pyproject.toml's package-dir)
FOLDERS = {"servicegym": "servicegym", "envs": "servicegym.envs", "world_state": "servicegym.world_state",
           "rewards": "servicegym.rewards", "simulators": "servicegym.simulators"}
GENERIC = ("envs", "world_state", "rewards", "simulators")


def _modules() -> dict[str, Path]:
    """Dotted name (``servicegym....``) -> file, for every module of the package."""
    out = {}
    for folder, dotted in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((dotted, *rel))
            out[name.removesuffix(".__init__")] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Project modules ``name`` imports anywhere in its file (functions included), resolved the
    way Python does: ``import a.b`` and ``from a.b import c`` (c a module or a name), relative too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(target: str) -> str | None:
        while target:
            if target in modules:
                return target
            target = target.rpartition(".")[0]
        return None

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                head = ".".join(base + ([node.module] if node.module else []))
            else:
                head = node.module or ""
            targets = [f"{head}.{a.name}" if f"{head}.{a.name}" in modules else head for a in node.names]
        for t in targets:
            r = resolve(t)
            if r and r != name:
                found.add(r)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_module_imports_a_module_that_imports_it_back():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _cycles(graph) == []
    # the check itself finds a circle where there is one
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_nothing_imports_the_old_top_level_names():
    """Package, tests and scripts import ``servicegym.<...>``: a bare ``import envs`` would load a
    second copy of the modules from a checkout, or the user's own ``envs``."""
    offenders = []
    files = [*_modules().values(), *(ROOT / "tests").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in GENERIC]
    assert offenders == []


def test_pyproject_ships_every_package_folder():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {dotted: folder for folder, dotted in FOLDERS.items()}
    on_disk = {
        ".".join((dotted, *d.relative_to(ROOT / folder).parts))
        for folder, dotted in FOLDERS.items()
        for d in [ROOT / folder, *(ROOT / folder).rglob("*")]
        if d.is_dir() and (d / "__init__.py").exists()
    }
    assert sorted(config["packages"]) == sorted(on_disk)


def _write_wheel(directory: Path, dist: str, files: dict[str, str]) -> Path:
    """A minimal valid wheel holding ``files`` (path in the wheel -> text), for a stand-in project."""
    info = f"{dist}-1.0.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: servicegym-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    path = directory / f"{dist}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """servicegym built as a wheel from a copy of the sources (the checkout stays untouched)."""
    if shutil.which("git") is None and not (ROOT / "pyproject.toml").exists():
        pytest.skip("no source tree to build from")
    try:
        import setuptools  # noqa: F401
    except ImportError:
        pytest.skip("building the wheel needs setuptools (pip install -e '.[dev]')")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                           str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = out.glob("servicegym-*.whl")
    return path


def test_the_wheel_holds_only_servicegym(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"servicegym", next(t for t in tops if t.endswith(".dist-info"))}
    assert next(t for t in tops if t.endswith(".dist-info")).startswith("servicegym-")
    # the frozen suites and every package travel with it
    assert {f"servicegym/envs/tasks/data/{d}_test.json.gz" for d in ("delivery", "workspace")} <= set(names)
    assert "servicegym/world_state/workspace/personas/legal.py" in names
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "servicegym = servicegym.envs.cli.main:main" in entry


def test_installed_wheel_works_beside_another_envs_and_a_local_envs_folder(wheel, tmp_path):
    """A fresh virtual environment holding the servicegym wheel and a distribution that owns a
    top-level ``envs``; run from a directory with its own ``envs/`` package: both ``envs`` stay
    the user's, and servicegym (its ids, an oracle episode, a spawned worker process) works."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    standin = _write_wheel(tmp_path, "standin_envs", {"envs/__init__.py": 'OWNER = "the envs distribution"\n'})
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", str(standin), str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    assert (purelib / "envs" / "__init__.py").read_text() == 'OWNER = "the envs distribution"\n'
    assert {p.name for p in purelib.iterdir() if not p.name.endswith(".dist-info")} >= {"envs", "servicegym"}
    assert not any((purelib / g).exists() for g in ("world_state", "rewards", "simulators"))
    # dependencies (gymnasium, pydantic, ...) from this environment, added after the install so pip
    # never sees this environment's own (editable) servicegym; .pth files there are not processed
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "zz_test_dependencies.pth").write_text("\n".join(deps) + "\n")

    work = tmp_path / "project"
    (work / "envs").mkdir(parents=True)
    (work / "envs" / "__init__.py").write_text('OWNER = "the user project"\n')
    script = r'''
import gymnasium as gym
import envs
import servicegym
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.envs.running.rollouts import collect, read_records

assert envs.OWNER == "the user project", envs.__file__
assert servicegym.__file__.startswith(PURELIB), servicegym.__file__
import servicegym.envs as sg_envs
assert sg_envs.__file__.startswith(PURELIB), sg_envs.__file__
env = gym.make("servicegym/Delivery-v0", split="test")
task_id = env.unwrapped.task_ids("test")[0]
record = run_episode(env, OraclePolicy(), seed=0, options={"task_id": task_id})
assert record["success"] is True and record["reward"] == 1.0, record
if __name__ == "__main__":
    summary = collect("servicegym/Payments-v0", "oracle", out="runs/p", trials=1, limit=2, concurrency=2,
                      backend="process", progress=False)
    assert summary.successes == 2, summary
    assert all(r["success"] for r in read_records("runs/p/rollouts.jsonl"))
    print("OK", task_id)
'''.replace("PURELIB", repr(str(purelib)))
    (work / "run_oracle.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    proc = subprocess.run([str(python), "run_oracle.py"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.startswith("OK delivery/")
    # elsewhere, the other distribution's envs is the one imported
    other = subprocess.run([str(python), "-c", "import envs, servicegym; print(envs.OWNER)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
    assert other.stdout.strip() == "the envs distribution", other.stderr[-2000:]


def test_a_source_checkout_imports_without_installing(tmp_path):
    """PYTHONPATH pointing at the checkout (Ray's working_dir does the same) finds the packages
    beside ``servicegym/``; no site processing, so no installed copy can stand in."""
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "PYTHONPATH": os.pathsep.join([str(ROOT), *deps])}
    code = ("import gymnasium as gym, servicegym, servicegym.envs as e; "
            f"assert e.__file__.startswith({str(ROOT / 'envs')!r}), e.__file__; "
            "env = gym.make('servicegym/Workspace-v0'); print(env.reset(seed=0)[1]['domain'])")
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "workspace"
