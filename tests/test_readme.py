"""Every Python snippet of the README runs as written: each block is run in a fresh interpreter,
in a scratch directory laid out like the repository's (``../shared`` beside it), except the
blocks the README itself marks ``<!-- snippet: not run (reason) -->`` (a model endpoint, a
cluster, a GPU), whose reasons are listed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- snippet: not run \(([^)]*)\) -->\n)?```python\n(.*?)```", re.S)


def snippets() -> list[tuple[int, str | None, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 1, m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


def test_the_readme_has_snippets_and_says_why_any_is_not_run():
    found = snippets()
    assert len(found) >= 1  # the quick start; the guides' and tutorials' blocks run in tests/test_docs.py
    assert all(reason.strip() for _, reason, _ in found if reason is not None)
    assert sum(reason is None for _, reason, _ in found) >= len(found) // 2  # most of them run


@pytest.mark.parametrize("line,reason,code", snippets(), ids=[f"line{s[0]}" for s in snippets()])
def test_readme_snippet_runs_as_written(line, reason, code, tmp_path):
    if reason is not None:
        pytest.skip(f"README line {line}: {reason}")
    work = tmp_path / "work"
    work.mkdir()
    shared = ROOT.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    elif "../shared" in code:
        pytest.skip("the snippet reads ../shared/data, which is absent here")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"README line {line}:\n{code}\n{proc.stderr[-3000:]}"
