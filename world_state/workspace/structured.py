"""Parsing and rendering of the workspace's structured text: CSV, JSON and Markdown.

Everything works on strings held in the world (``io.StringIO``, never a real file). Malformed
input is a ``ToolError`` that names the file and the line, so the agent can fix it. ``check_content``
is what ``put_file`` runs on every write: a ``.csv`` file always parses to a header and rows of the
header's width, a ``.json`` file always parses.
"""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from servicegym.world_state.tools import ToolError

CELL_TYPES = (str, int, float, bool, type(None))
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")


# --- CSV -------------------------------------------------------------------------------------


def parse_csv(text: str, path: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the rows of a CSV text, each row with the line it starts on.

    Blank lines are skipped; an empty text has no columns and no rows. A quoting error, an empty
    or repeated column name, or a row whose width differs from the header's is a ToolError.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    start = 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if header is None:
                header = [c.strip() for c in row]
                if any(not c for c in header):
                    raise ToolError(f"{path}: line {line}: the header has an empty column name")
                dup = sorted({c for c in header if header.count(c) > 1})
                if dup:
                    raise ToolError(f"{path}: line {line}: the header repeats column {dup[0]!r}")
                continue
            if len(row) != len(header):
                raise ToolError(
                    f"{path}: line {line} has {len(row)} fields; the header has {len(header)} "
                    f"({', '.join(header)})"
                )
            rows.append((line, row))
    except csv.Error as err:
        raise ToolError(f"{path}: line {reader.line_num}: malformed CSV ({err})") from None
    return header or [], rows


def render_csv(columns: list[str], rows: list[list[str]]) -> str:
    """RFC 4180 text with ``\\n`` line ends; the header first."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    w.writerows(rows)
    return buf.getvalue()


def to_cell(value: Any, where: str) -> str:
    """A JSON scalar as CSV cell text (null is empty; booleans are true/false)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ToolError(f"{where}: a cell must be text, a number, a boolean or null, not {type(value).__name__}")


def cell_number(text: str) -> Decimal | None:
    """The number in a cell (blanks around it and thousands separators allowed), or None."""
    s = text.strip().replace(",", "")
    if not _NUMBER.match(s):
        return None
    try:
        d = Decimal(s)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid literals
        return None
    # beyond this a sum could overflow a float; such a cell is treated as text, not a number
    return d if d.is_zero() or abs(d.adjusted()) <= 300 else None


def plain_number(d: Decimal) -> int | float:
    """A Decimal as the JSON number a reader expects: an int when integral, else a float."""
    if d == d.to_integral_value() and abs(d) < Decimal(10) ** 15:
        return int(d)
    return round(float(d), 10)


# --- JSON ------------------------------------------------------------------------------------


def parse_json(text: str, path: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ToolError(f"{path}: the JSON is nested too deeply to read") from None
    except json.JSONDecodeError as err:
        raise ToolError(f"{path}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except ValueError as err:
        raise ToolError(f"{path}: malformed JSON: {err}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def render_json(value: Any) -> str:
    """Two-space indented JSON with a final newline (NaN and infinities refused)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except RecursionError:
        raise ToolError("the value is nested too deeply to store as JSON") from None
    except ValueError as err:
        raise ToolError(f"the value cannot be stored as JSON: {err}") from None


# --- Markdown --------------------------------------------------------------------------------


def markdown_headings(text: str) -> list[tuple[int, str, int]]:
    """ATX headings ``(level, title, line index)``; lines inside fenced code blocks are skipped."""
    out: list[tuple[int, str, int]] = []
    fence = ""
    for i, line in enumerate(text.split("\n")):
        m = _FENCE.match(line)
        if m:
            if not fence:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = ""
            continue
        if fence:
            continue
        h = _HEADING.match(line)
        if h:
            title = re.sub(r"[ \t]+#+$", "", h.group(2)).strip()
            out.append((len(h.group(1)), title, i))
    return out


def markdown_section(text: str, heading: str, path: str) -> tuple[int, int, int]:
    """``(heading line, first body line, end line)`` of the section titled ``heading``.

    The section runs to the next heading of the same or a higher level. ``heading`` may carry its
    leading ``#`` marks; the match is case-insensitive. No match or several matches: ToolError.
    """
    want = heading.strip().lstrip("#").strip().casefold()
    heads = markdown_headings(text)
    hits = [k for k, (_, title, _) in enumerate(heads) if title.casefold() == want]
    if not hits:
        shown = ", ".join(repr(t) for _, t, _ in heads[:20]) or "none"
        raise ToolError(f"{path} has no heading {heading!r}; its headings: {shown}")
    if len(hits) > 1:
        lines = ", ".join(str(heads[k][2] + 1) for k in hits)
        raise ToolError(f"{path} has {len(hits)} headings {heading!r} (lines {lines}); rename one to tell them apart")
    k = hits[0]
    level, _, start = heads[k]
    end = len(text.split("\n"))
    for lv, _, line in heads[k + 1:]:
        if lv <= level:
            end = line
            break
    return start, start + 1, end


# --- write-time checks -----------------------------------------------------------------------


def check_content(path: str, content: str) -> None:
    """Refuse content a structured file could not hold: malformed CSV or JSON."""
    ext = path[path.rfind("."):].lower()
    if ext == ".csv":
        parse_csv(content, path)
    elif ext == ".json":
        try:
            parse_json(content, path)
        except ToolError as err:
            raise ToolError(f"{err}; fix the JSON, or save free text under a .txt or .md name") from None
