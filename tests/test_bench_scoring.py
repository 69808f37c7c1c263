"""scripts/bench_scoring.py runs to the end on the VitaBench files and prints its table (it asserts
nothing about speed: figures come from running it, never from timed tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "vitabench"
sys.path.insert(0, str(ROOT / "scripts"))


def test_bench_scoring_prints_a_row_per_file(capsys):
    if not DATA.is_dir():
        pytest.skip(f"VitaBench data not found at {DATA}")
    import bench_scoring

    assert bench_scoring.main(["--limit", "2", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("primitive (shared/tools/primitive.py): ")
    for name in ("delivery/tasks.json", "delivery/tasks_en.json", "instore/tasks_en.json"):
        row = next(line for line in out.splitlines() if line.startswith(name))
        cells = [c.strip() for c in row.split("|")]
        assert cells[1] == "2" and cells[2].endswith(" ms") and cells[7].endswith("x")
    assert "goal: median <= 1 ms and worst <= 5 ms per task" in out


def test_bench_scoring_refuses_bad_options(tmp_path, capsys):
    import bench_scoring

    assert bench_scoring.main(["--reps", "0"]) == 2
    assert bench_scoring.main(["--data", str(tmp_path / "missing")]) == 2
    assert "no VitaBench data" in capsys.readouterr().err
