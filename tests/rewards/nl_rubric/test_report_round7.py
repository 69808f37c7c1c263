"""``scripts/fidelity_report.py``'s coverage cell labels both figures it prints: the item-weighted
share (checked items over all items) and the average of the tasks' coverage, which differ where
tasks have different numbers of items."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _report() -> object:
    spec = importlib.util.spec_from_file_location("fidelity_report_r7", ROOT / "scripts" / "fidelity_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coverage_cell_labels_the_item_share_and_the_task_average() -> None:
    report = _report()
    # two tasks: 1 of 1 item (100%) and 1 of 9 items (11.1%): average 55.6%, items 2/10 (20.0%)
    cell = report.coverage_cell([1.0, 1 / 9], 2, 10)  # type: ignore[attr-defined]
    assert cell == "items 2/10 (20.0%); task average 55.6%"
    assert report.coverage_cell([], 0, 0) == "-"  # type: ignore[attr-defined]
    assert report.coverage_cell([1.0], 0, 0) == "items 0/0 (-); task average 100.0%"  # type: ignore[attr-defined]
