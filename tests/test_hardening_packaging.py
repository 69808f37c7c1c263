"""Hardening (issue 30): walking the ``servicegym`` package visits each module once. A source
checkout (and an editable install) adds the repository's subpackages to ``servicegym.__path__``;
it must not add the repository root itself, where ``servicegym/`` sits again (``servicegym.
servicegym...`` without end) beside ``tests/`` and the rest."""

from __future__ import annotations

import collections
import os
import pkgutil
import site
import subprocess
import sys
from pathlib import Path

import servicegym

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = {"servicegym.envs", "servicegym.world_state", "servicegym.rewards", "servicegym.simulators"}

WALK = r"""
import collections, pkgutil, servicegym
skipped = []
names = [m.name for m in pkgutil.walk_packages(servicegym.__path__, "servicegym.", onerror=skipped.append)]
counts = collections.Counter(names)
print(len(names), len(skipped))
print(" ".join(sorted(n for n, k in counts.items() if k > 1)) or "-")
print(" ".join(sorted(n for n in names if "servicegym.servicegym" in n or n.startswith("servicegym.tests"))) or "-")
print(" ".join(sorted(names)))
"""


def _walk() -> list[str]:
    skipped: list[str] = []  # optional extras whose imports fail are left out, not an error
    names = []
    for info in pkgutil.walk_packages(servicegym.__path__, "servicegym.", onerror=skipped.append):
        names.append(info.name)
        assert len(names) < 5000, "the walk does not end"
    return names


def test_walking_the_package_visits_each_module_once():
    names = _walk()
    repeated = [n for n, k in collections.Counter(names).items() if k > 1]
    assert repeated == []
    assert not [n for n in names if "servicegym.servicegym" in n or n.startswith("servicegym.tests")]
    assert SUBPACKAGES <= set(names)
    assert {"servicegym.envs.tasks.files", "servicegym.world_state.workspace.world"} <= set(names)


def test_a_source_checkout_walks_the_same_modules_once(tmp_path):
    """PYTHONPATH at the checkout and no site processing (Ray's working_dir, tests/ without an
    install): the same modules, each once, and the subpackages still import from the checkout."""
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
           "PYTHONPATH": os.pathsep.join([str(ROOT), *deps])}
    proc = subprocess.run([sys.executable, "-S", "-c", WALK + f"\nimport servicegym.envs as e; "
                           f"assert e.__file__.startswith({str(ROOT / 'envs')!r}), e.__file__"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _counts, repeated, recursive, names = (proc.stdout.splitlines() + [""] * 4)[:4]
    assert repeated == "-" and recursive == "-", (repeated, recursive)
    assert SUBPACKAGES <= set(names.split())
    assert set(names.split()) == set(_walk())
