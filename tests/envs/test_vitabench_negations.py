"""No negated demand reads as the demand itself, on every item of the VitaBench files the reader reads.

Each item the reader turns into a check is negated the way a rubric writer would ("should" -> "should
not", "must" -> "must not", 应 -> 不应, 必须 -> 不能) and compiled again with the same task context; its
reading must differ from the positive one (or the item must go unread). A reading that ignores a
negation passes exactly the violations: worse than no check. The files are read from
``$SERVICEGYM_VITABENCH_DIR`` or ``shared/data/vitabench`` beside the repository root; the test skips
when they are absent. Items whose negation lands in a premise ("X should not be checked for Y, which is
available, so Z") keep their conclusion, and with it their reading, and an item read as the look-up it
demands only ("should inquire whether X; since there is none, ...") is the look-up whatever follows:
neither is failed.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from servicegym.envs import load_task_file
from servicegym.envs.tasks import files
from servicegym.envs.tasks.vitabench import delivery as vb_delivery
from servicegym.envs.tasks.vitabench import instore as vb_instore
from servicegym.rewards.nl_rubric import compile_item, describe_spec, item_context

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("SERVICEGYM_VITABENCH_DIR") or ROOT / ".." / "shared" / "data" / "vitabench")
FILES = {"delivery-zh": ("delivery/tasks.json", "delivery"), "delivery-en": ("delivery/tasks_en.json", "delivery"),
         "instore-en": ("instore/tasks_en.json", "instore")}


def _negated(text: str) -> tuple[str, int] | None:
    """The demand negated at its first modal, and where; None where the item has none."""
    if re.search(r"[\u4e00-\u9fff]", text):
        m = re.search(r"(?<!不)(应该|应当|应|必须)", text)
        return None if m is None else (text[:m.start()] + {"应该": "不应该", "应当": "不应当", "应": "不应", "必须": "不能"}[
            m.group(1)] + text[m.end():], m.start())
    m = re.search(r"\b(should|must)\b(?! not)", text)
    return None if m is None else (text[:m.end()] + " not" + text[m.end():], m.start())


# a conclusion after the negated modal: the negation fell in a premise ("X should not be checked for Y, ..., so Z")
_LATER_CONCLUSION = re.compile(r"\b(?:so|therefore|thus|hence|since|as)\b|所以|因此|因而|于是")


def _contexts(path: Path, domain: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[Any, list[str]]]:
    """Each task's item context, as the loader builds it (the gold's products as evidence), and its items."""
    seen: dict[str, tuple[Any, list[str]]] = {}
    module = vb_instore if domain == "instore" else vb_delivery
    original = module._vitabench_task

    def capture(raw: Any, dom: str, language: str, spec: Any, world: Any, states: Any, notes: Any, toolkit: Any,
                golden_for: Any) -> Any:
        ctx = item_context(world, toolkit.names)
        held = {(line.product_id, g.store_id) for s in states for g in s.orders for line in g.lines}
        ctx = replace(ctx, evidence=tuple(p for p in ctx.products if (p.product_id, p.place_id) in held))
        task = original(raw, dom, language, spec, world, states, notes, toolkit, golden_for)
        seen[raw.id] = (ctx, list(task.nl_rubric))
        return task

    monkeypatch.setattr(module, "_vitabench_task", capture)
    files._load_cached.cache_clear()  # loaded afresh, so the capture sees every task (another test may have loaded it)
    with pytest.warns(Warning):  # each file has one task its gold cannot reach (skipped, with a warning)
        load_task_file(path, domain)
    files._load_cached.cache_clear()  # later loads see the loader's own conversion again
    return seen


@pytest.mark.parametrize("name", list(FILES))
def test_no_negated_item_reads_as_its_positive(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rel, domain = FILES[name]
    path = DATA_DIR / rel
    if not path.is_file():
        pytest.skip(f"VitaBench file not found at {path} (set SERVICEGYM_VITABENCH_DIR)")
    same: list[str] = []
    negated = 0
    for tid, (ctx, items) in _contexts(path, domain, monkeypatch).items():
        for k, text in enumerate(items):
            positive = compile_item(text, ctx)
            if positive is None or type(positive).__name__ == "ProcessSpec":
                continue  # unread, or only the look-up an item demands ("should inquire whether ..."), which no modal negates
            made = _negated(text)
            if made is None:
                continue
            neg, at = made
            reading = compile_item(neg, ctx)
            if reading is None:
                continue
            negated += 1
            if describe_spec(reading) == describe_spec(positive) and not _LATER_CONCLUSION.search(neg[at:].casefold()):
                same.append(f"task {tid}, item {k}")  # ids only: run `servicegym rubrics` on the file to see the text
    assert negated > 50  # the check ran over the file's items
    assert not same, "negated items read as their positive:\n" + "\n".join(same[:20])
