"""What the persona modules share: seeded dates and names, fresh ids, table rendering for file
exports, and history look-ups for "done earlier with these arguments" pre-conditions.

Seeded records are dated relative to ``SEED_START`` (a Monday); a persona world is meant to start
at ``SEED_START_TIME`` (each ``PROFILE["start"]``), so "recent", "overdue" and "upcoming" hold.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterable, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from servicegym.world_state.core import DATE_FORMAT, History, Table
from servicegym.world_state.tools import ToolError

SEED_START = date(2026, 3, 2)
SEED_START_TIME = "2026-03-02 09:00:00"

FIRST_NAMES = (
    "Amara", "Bruno", "Chen", "Dalia", "Elias", "Farah", "Goran", "Hana", "Ivan", "Jasmin", "Kofi", "Lena",
    "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sami", "Tariq", "Uma", "Viktor", "Wen", "Yara", "Zoe",
)
LAST_NAMES = (
    "Abara", "Bergstrom", "Castillo", "Dufour", "Eze", "Fischer", "Gallo", "Haddad", "Ibrahim", "Jensen", "Kowalski",
    "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rahman", "Santos", "Tanaka", "Uddin", "Varga",
    "Walsh", "Yilmaz", "Zeller",
)


_FULL_NAMES = tuple(f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES)


def person_names(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct "First Last" names."""
    return rng.sample(_FULL_NAMES, n)


_DAYS: dict[int, str] = {}  # offset -> day (a pure function; the seeded records use a few hundred offsets)


def day(offset: int) -> str:
    """``SEED_START`` moved by ``offset`` days, as YYYY-MM-DD (remembered: a persona's seeded
    records name a hundred or more days each)."""
    hit = _DAYS.get(offset) if type(offset) is int else None
    if hit is None:
        hit = (SEED_START + timedelta(days=offset)).isoformat()
        if type(offset) is int and len(_DAYS) < 4096:
            _DAYS[offset] = hit
    return hit


def parse_day(text: str, what: str = "date") -> date:
    """A YYYY-MM-DD date (a YYYY-MM-DD HH:MM:SS time is cut to its day), or ToolError."""
    if not isinstance(text, str):
        raise ToolError(f"{what} must be a string YYYY-MM-DD")
    try:
        return datetime.strptime(text.strip()[:10], DATE_FORMAT).date()
    except ValueError:
        raise ToolError(f"{what} {text!r} must have the form YYYY-MM-DD") from None


def new_id(table: Table, ids: Any, prefix: str, width: int = 3) -> str:
    """The next counter id of ``prefix`` that no row of ``table`` holds (seeded rows use the same
    scheme, so the counter skips past them; deterministic given the state)."""
    while True:
        key = ids.next(prefix, width)
        if key not in table:
            return key


def clamp_limit(limit: int, top: int = 100) -> int:
    return max(1, min(int(limit), top))


def render_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str) -> str:
    """Rows as CSV (RFC 4180, ``\\n`` line ends) or a GitHub-flavoured Markdown table."""
    rows = [["" if v is None else v for v in r] for r in rows]
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "markdown":
        def cell(v: Any) -> str:
            return str(v).replace("|", "\\|").replace("\n", " ")

        lines = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "|".join(" --- " for _ in columns) + "|"]
        lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    raise ToolError(f"unknown format {fmt!r}; use csv or markdown")


def last_call_index(history: History, tools: Sequence[str], **args: Any) -> int:
    """Index of the latest executed call of one of ``tools`` whose arguments include ``args``
    (equal values), or -1."""
    names = set(tools)
    for e in reversed(history.entries):
        if e.kind == "tool_call" and e.outcome == "executed" and e.name in names:
            if all(e.arguments.get(k) == v for k, v in args.items()):
                return e.index
    return -1


def round2(x: float) -> float:
    return round(x + 0.0, 2)


def ratio(num: float, den: float, digits: int = 4) -> float | None:
    """``num / den`` rounded, or None when the denominator is zero (undefined, never infinite)."""
    return None if den == 0 else round(num / den, digits)
