"""Static tools see the package Python imports: after the README's install (an editable install in
setuptools' strict mode, a tree of links to the repository's files, with ``servicegym/py.typed``),
mypy resolves every ``servicegym.*`` module, each to its own file under ``servicegym/``, ``envs/``,
``world_state/``, ``rewards/`` or ``simulators/``. Under setuptools' default editable mode (an import
hook that static tools cannot read) or without ``py.typed``, none of them resolves, and this fails.

mypy is in the ``dev`` extra, so CI runs this; it skips only where mypy is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_packaging import ROOT, _modules

REINSTALL = 'pip install -e ".[dev]" --config-settings editable_mode=strict'
# mypy -v: each module it found but does not analyse (--follow-imports=skip), with its file
SKIPPING = re.compile(r"^LOG:\s+Skipping (?P<path>.+) \((?P<module>servicegym(?:\.\w+)*)\)$")


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """mypy on one file holding ``source``, run outside the checkout (so its ``servicegym/``
    folder, which lacks the subpackages, is not on mypy's search path) with no config file: the
    package is found where the interpreter finds installed packages, as an editor finds it."""
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    empty = tmp_path / "mypy.ini"
    empty.write_text("[mypy]\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "-v", "--config-file", str(empty), "--follow-imports=skip",
         "--no-incremental", "--cache-dir", str(tmp_path / "cache"), "--python-executable", sys.executable,
         str(probe)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_mypy_resolves_every_servicegym_module_to_its_file_in_the_repository(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (it comes with the dev extra)")
    modules = _modules()
    assert len(modules) > 100  # the walk found the package, not an empty folder
    proc = _mypy(tmp_path, "".join(f"import {name}\n" for name in sorted(modules)))
    # the probe holds imports only: any error is one of them not resolving
    assert proc.returncode == 0 and "Success" in proc.stdout, (
        f"mypy cannot resolve servicegym modules; install as the README says ({REINSTALL}), and run "
        f"it again after adding a module:\n{proc.stdout[-4000:]}{proc.stderr[-2000:] if proc.returncode > 1 else ''}")
    found = {}
    for line in proc.stderr.splitlines():
        m = SKIPPING.match(line.strip())
        if m:
            found[m["module"]] = Path(m["path"])
    missing = sorted(set(modules) - set(found))
    assert not missing, f"mypy's log names no file for {missing[:10]} ({len(missing)} modules)"
    elsewhere = {name: str(found[name]) for name, path in modules.items()
                 if found[name].resolve() != path.resolve()}
    assert not elsewhere, (f"mypy resolves these modules to files that are not the repository's ({ROOT}): "
                           f"{dict(list(elsewhere.items())[:5])}; reinstall with {REINSTALL}")


def test_mypy_reports_a_module_that_does_not_exist(tmp_path):
    """The check above can fail: a name with no file behind it is reported as not found."""
    pytest.importorskip("mypy", reason="mypy is not installed (it comes with the dev extra)")
    proc = _mypy(tmp_path, "import servicegym.envs\nimport servicegym.envs.no_such_module\n")
    assert proc.returncode == 1
    assert 'module named "servicegym.envs.no_such_module"' in proc.stdout
    assert "probe.py:1:" not in proc.stdout  # the package itself resolves
