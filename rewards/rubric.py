"""Rubric items checked by code.

A rubric is a list of named items, each a registered check ``kind`` with parameters. Checks read
an ``EpisodeView`` (final world, initial world, history, agent messages) and never mutate it.
Strict success is "every item with weight > 0 holds"; weight 0 items are logged only.

Scoring modes
    A check may be registered ``strict_only`` (``check(kind, strict_only=True)``): it compares
    the end state with a gold one beyond what the task's own rubric states (VitaBench's
    ``required_orders``, ``no_unrequested_orders``, ``untouched_orders``). Under
    ``scoring="strict"`` every item counts; under ``scoring="rubric"`` those items are still
    evaluated and reported (``rubric/<name>``) but do not decide success or ``rubric_fraction``.
    A rubric without such items (every generated task) scores the same in both modes.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from servicegym.world_state.core import History, World


class RubricItem(BaseModel):
    """One code-checked rubric item: ``name`` (its ``rubric/<name>`` score key), ``kind`` (the check
    registered with ``check``), ``params`` for the check, and its ``weight`` in ``rubric_fraction``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    kind: str
    description: str = ""
    params: dict[str, Any] = {}
    weight: float = 1.0


@dataclass
class EpisodeView:
    """What a rubric check reads of a finished episode: the final and the initial world, the
    execution history and the agent's messages; checks never change it."""

    world: World
    initial: World
    history: History
    agent_messages: list[str] = field(default_factory=list)
    # what checks computed on this view, for the other items of the same scoring (e.g. the
    # expected state the final world matches best); a view is of one final state, so never stale
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)


Check = Callable[[EpisodeView, dict[str, Any]], bool]
# the modules that register the built-in checks (life-service, scoring modes, VitaBench): imported
# on the first read of the registry, not with the package, so ``import servicegym`` and an env
# that never scores a natural-language rubric do not load the rubric reader (~0.45 s)
BUILTIN_CHECK_MODULES = ("servicegym.rewards.life_service", "servicegym.rewards.scoring_modes", "servicegym.rewards.vitabench")
_builtin_loaded = False
_loading = threading.local()  # set in the thread importing them (their registrations may read the registry)


def _load_builtin() -> None:
    """Import the modules that register the built-in checks, once. Another thread reading the
    registry meanwhile waits on the same imports (Python's per-module import locks) and so sees
    every check; the flag is set only after all of them are imported."""
    global _builtin_loaded
    if _builtin_loaded or getattr(_loading, "on", False):
        return
    _loading.on = True
    try:
        for name in BUILTIN_CHECK_MODULES:
            importlib.import_module(name)
    finally:
        _loading.on = False
    _builtin_loaded = True


class _Registry(dict):  # type: ignore[type-arg]
    """``kind -> check``: a dict whose reads first register the built-in checks
    (``BUILTIN_CHECK_MODULES``), so every reader sees them whatever it imported."""

    def __getitem__(self, kind: str) -> Check:
        _load_builtin()
        return dict.__getitem__(self, kind)

    def get(self, kind: str, default: Any = None) -> Any:  # type: ignore[override]
        _load_builtin()
        return dict.get(self, kind, default)

    def __contains__(self, kind: object) -> bool:
        _load_builtin()
        return dict.__contains__(self, kind)

    def __iter__(self):  # type: ignore[no-untyped-def]
        _load_builtin()
        return dict.__iter__(self)

    def __len__(self) -> int:
        _load_builtin()
        return dict.__len__(self)

    def keys(self):  # type: ignore[no-untyped-def]
        _load_builtin()
        return dict.keys(self)

    def values(self):  # type: ignore[no-untyped-def]
        _load_builtin()
        return dict.values(self)

    def items(self):  # type: ignore[no-untyped-def]
        _load_builtin()
        return dict.items(self)


CHECKS: dict[str, Check] = _Registry()
# the kinds that count under scoring="strict" only (see "Scoring modes")
STRICT_ONLY: set[str] = set()
SCORING_MODES = ("rubric", "strict")


def check(kind: str, strict_only: bool = False) -> Callable[[Check], Check]:
    """Register the check function for rubric items of ``kind`` (``strict_only``: an item of
    this kind decides success under ``scoring="strict"`` only)."""

    def wrap(fn: Check) -> Check:
        if not (getattr(fn, "__module__", None) or "").startswith("servicegym."):
            # a check of the user's own: the built-in ones first, so a kind of theirs it repeats is
            # refused here, as it was when they were registered with the package
            _load_builtin()
        old = dict.get(CHECKS, kind)
        if old is not None:
            raise ValueError(f"rubric kind {kind!r} registered twice ({_where(old)} and {_where(fn)})")
        CHECKS[kind] = fn
        if strict_only:
            STRICT_ONLY.add(kind)
        return fn

    return wrap


def _where(fn: Check) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def counts_in(item: RubricItem, scoring: str) -> bool:
    """Whether ``item`` decides success under ``scoring`` (weight > 0, and not strict-only under
    ``"rubric"``)."""
    _load_builtin()  # STRICT_ONLY is filled by their registrations
    return item.weight > 0 and (scoring == "strict" or item.kind not in STRICT_ONLY)


def evaluate(items: list[RubricItem], view: EpisodeView) -> dict[str, bool]:
    """Each item's verdict (name -> passed) by its kind's registered check; ``KeyError`` for a kind
    no check is registered for."""
    results = {}
    for item in items:
        fn = CHECKS.get(item.kind)
        if fn is None:
            raise KeyError(f"no check registered for rubric kind {item.kind!r}")
        results[item.name] = bool(fn(view, item.params))
    return results


def score_rubric(items: list[RubricItem], view: EpisodeView, scoring: str = "strict") -> tuple[bool, dict[str, float]]:
    """Success under ``scoring`` and the flat score dict: ``rubric_fraction`` and
    ``rubric_items`` over the items that count in that mode, ``rubric/<name>`` for every item;
    when some item is strict-only, also ``success_strict`` and ``success_rubric`` (both modes'
    verdicts)."""
    if scoring not in SCORING_MODES:
        raise ValueError(f"scoring={scoring!r} is not a scoring mode; use one of {', '.join(SCORING_MODES)}")
    results = evaluate(items, view)
    weighted = [i for i in items if counts_in(i, scoring)]
    passed = sum(i.weight for i in weighted if results[i.name])
    total = sum(i.weight for i in weighted)
    success = all(results[i.name] for i in weighted)
    score = {"rubric_fraction": (passed / total) if total else 1.0, "rubric_items": float(len(weighted))}
    if any(i.kind in STRICT_ONLY for i in items):
        verdicts = {m: all(results[i.name] for i in items if counts_in(i, m)) for m in SCORING_MODES}
        score.update({f"success_{m}": float(ok) for m, ok in verdicts.items()})
    score.update({f"rubric/{name}": float(ok) for name, ok in results.items()})
    return success, score
