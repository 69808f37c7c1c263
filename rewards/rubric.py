"""Rubric items checked by code.

A rubric is a list of named items, each a registered check ``kind`` with parameters. Checks read
an ``EpisodeView`` (final world, initial world, history, agent messages) and never mutate it.
Strict success is "every item with weight > 0 holds"; weight 0 items are logged only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from servicegym.world_state.core import History, World


class RubricItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    kind: str
    description: str = ""
    params: dict[str, Any] = {}
    weight: float = 1.0


@dataclass
class EpisodeView:
    world: World
    initial: World
    history: History
    agent_messages: list[str] = field(default_factory=list)


Check = Callable[[EpisodeView, dict[str, Any]], bool]
CHECKS: dict[str, Check] = {}


def check(kind: str) -> Callable[[Check], Check]:
    """Register the check function for rubric items of ``kind``."""

    def wrap(fn: Check) -> Check:
        if kind in CHECKS:
            raise ValueError(f"rubric kind {kind!r} registered twice")
        CHECKS[kind] = fn
        return fn

    return wrap


def evaluate(items: list[RubricItem], view: EpisodeView) -> dict[str, bool]:
    results = {}
    for item in items:
        fn = CHECKS.get(item.kind)
        if fn is None:
            raise KeyError(f"no check registered for rubric kind {item.kind!r}")
        results[item.name] = bool(fn(view, item.params))
    return results


def score_rubric(items: list[RubricItem], view: EpisodeView) -> tuple[bool, dict[str, float]]:
    """Strict success and the flat score dict: ``rubric_fraction`` and ``rubric/<name>`` per item."""
    results = evaluate(items, view)
    weighted = [i for i in items if i.weight > 0]
    passed = sum(i.weight for i in weighted if results[i.name])
    total = sum(i.weight for i in weighted)
    success = all(results[i.name] for i in weighted)
    score = {"rubric_fraction": (passed / total) if total else 1.0, "rubric_items": float(len(weighted))}
    score.update({f"rubric/{name}": float(ok) for name, ok in results.items()})
    return success, score
