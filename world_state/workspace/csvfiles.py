"""CSV tools: read, query, write, append, update, delete and aggregate rows of ``.csv`` files.

Queries take conditions from a fixed operator set (``eq ne lt le gt ge contains in``), never code.
A condition compares numbers when its value is a number (or a numeric string) and text otherwise;
text compares case-insensitively, so ISO dates order correctly. Sums use decimal arithmetic, so
money columns add up exactly.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from servicegym.world_state.tools import ToolError, tool
from servicegym.world_state.workspace.files import file_exists
from servicegym.world_state.workspace.structured import cell_number, parse_csv, plain_number, render_csv, to_cell
from servicegym.world_state.workspace.world import WorkspaceWorld, file_extension, get_file, put_file

Cell = str | int | float | bool | None
Op = Literal["eq", "ne", "lt", "le", "gt", "ge", "contains", "in"]
CSV_SOURCES = ("list_files", "search_files", "write_csv")


class Condition(BaseModel):
    """One filter: ``column op value``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    column: str = Field(description="a column name from the header")
    op: Op = Field("eq", description="eq, ne, lt, le, gt, ge, contains (text, case-insensitive) or in (value is a list)")
    value: Cell | list[str | int | float] = Field(description="the value to compare with")


def _inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    return schema


Where = list[Annotated[Condition, WithJsonSchema(_inline_schema(Condition))]]
Rows = list[list[Cell] | dict[str, Cell]]


def _csv(world: WorkspaceWorld, path: str) -> tuple[Any, list[str], list[tuple[int, list[str]]]]:
    f = get_file(world, path)
    if file_extension(f.path) != ".csv":
        raise ToolError(f"{f.path} is not a CSV file; use read_file, or read_json for .json")
    columns, rows = parse_csv(f.content, f.path)
    return f, columns, rows


def _column(columns: list[str], name: str, what: str = "column") -> int:
    try:
        return columns.index(name.strip())
    except ValueError:
        raise ToolError(f"no {what} {name!r}; the columns are {', '.join(columns) or '(none: the file is empty)'}") from None


def _compile(columns: list[str], where: list[Condition] | None) -> list[tuple[int, str, Any, Decimal | None]]:
    out = []
    for c in where or []:
        i = _column(columns, c.column)
        if c.op == "in":
            if not isinstance(c.value, list):
                raise ToolError(f"op 'in' needs a list value, e.g. [\"a\", \"b\"] (column {c.column!r})")
            out.append((i, "in", [to_cell(v, "value").strip().casefold() for v in c.value], None))
            continue
        if isinstance(c.value, list):
            raise ToolError(f"op {c.op!r} takes one value, not a list (use op 'in' for a list)")
        text = to_cell(c.value, "value").strip()
        num = None if isinstance(c.value, bool) or c.op == "contains" else cell_number(text)
        out.append((i, c.op, text.casefold(), num))
    return out


def _holds(cell: str, op: str, text: Any, num: Decimal | None) -> bool:
    s = cell.strip()
    if op == "in":
        return s.casefold() in text or any(
            (a := cell_number(s)) is not None and (b := cell_number(t)) is not None and a == b for t in text
        )
    if op == "contains":
        return text in s.casefold()
    if num is not None:
        x = cell_number(s)
        if x is None:
            return op == "ne"
        left, right = x, num
    else:
        if not s and op not in ("eq", "ne"):
            return False
        left, right = s.casefold(), text
    return {"eq": left == right, "ne": left != right, "lt": left < right, "le": left <= right,
            "gt": left > right, "ge": left >= right}[op]


def _select(rows: list[tuple[int, list[str]]], conds: list[tuple[int, str, Any, Decimal | None]]) -> list[tuple[int, list[str]]]:
    return [(n, r) for n, r in rows if all(_holds(r[i], op, t, num) for i, op, t, num in conds)]


def _record(columns: list[str], row: list[str]) -> dict[str, str]:
    return dict(zip(columns, row, strict=True))


def _cells(columns: list[str], rows: Rows) -> list[list[str]]:
    out = []
    for k, row in enumerate(rows, 1):
        where = f"row {k}"
        if isinstance(row, dict):
            unknown = [c for c in row if c not in columns]
            if unknown:
                raise ToolError(f"{where} has key {unknown[0]!r}, which is not a column ({', '.join(columns)})")
            out.append([to_cell(row.get(c), where) for c in columns])
        else:
            if len(row) != len(columns):
                raise ToolError(f"{where} has {len(row)} values; there are {len(columns)} columns ({', '.join(columns)})")
            out.append([to_cell(v, where) for v in row])
    return out


@tool("read", pre=[file_exists(after=CSV_SOURCES)])
def read_csv(world: WorkspaceWorld, path: str, offset: Annotated[int, Field(ge=0)] = 0,
             limit: Annotated[int, Field(ge=1, le=500)] = 100) -> dict[str, Any]:
    """Read a CSV file as its header and rows (each row an object keyed by column).

    Args:
        path: a .csv file
        offset: data rows to skip first
        limit: most rows returned (1-500)
    """
    f, columns, rows = _csv(world, path)
    part = rows[offset:offset + limit]
    out: dict[str, Any] = {"path": f.path, "columns": columns, "total_rows": len(rows),
                           "rows": [_record(columns, r) for _, r in part]}
    if offset + limit < len(rows):
        out["note"] = f"rows {offset + 1}-{offset + len(part)} of {len(rows)}; read on with offset={offset + limit}"
    return out


def _sort_key(i: int, rows: list[tuple[int, list[str]]]) -> Any:
    values = [r[i].strip() for _, r in rows]
    if all(cell_number(v) is not None for v in values if v):
        return lambda nr: (not nr[1][i].strip(), cell_number(nr[1][i]) or 0)
    return lambda nr: (not nr[1][i].strip(), nr[1][i].strip().casefold())


@tool("read", pre=[file_exists(after=CSV_SOURCES)])
def query_csv(world: WorkspaceWorld, path: str, where: Where | None = None, columns: list[str] | None = None,
              sort_by: str | None = None, descending: bool = False,
              limit: Annotated[int, Field(ge=1, le=500)] = 50) -> dict[str, Any]:
    """Select the rows of a CSV file that meet every condition, optionally sorted and with only
    some columns.

    Args:
        path: a .csv file
        where: conditions that must all hold, e.g. [{"column": "amount", "op": "gt", "value": 100}]
        columns: columns to return (default all)
        sort_by: a column to sort by (numeric when all its cells are numbers; blanks last)
        descending: sort from high to low
        limit: most rows returned (1-500)
    """
    f, header, rows = _csv(world, path)
    hits = _select(rows, _compile(header, where))
    if sort_by is not None:
        i = _column(header, sort_by, "sort column")
        key = _sort_key(i, hits)
        blanks = [nr for nr in hits if not nr[1][i].strip()]
        filled = sorted((nr for nr in hits if nr[1][i].strip()), key=key, reverse=descending)
        hits = filled + blanks
    picked = [_column(header, c) for c in columns] if columns else list(range(len(header)))
    names = [header[i] for i in picked]
    return {"path": f.path, "columns": names, "matched": len(hits),
            "rows": [{header[i]: r[i] for i in picked} for _, r in hits[:limit]]}


@tool("write")
def write_csv(world: WorkspaceWorld, path: str, columns: Annotated[list[str], Field(min_length=1)], rows: Rows,
              overwrite: bool = False) -> dict[str, Any]:
    """Create (or with overwrite, replace) a CSV file from a header and rows.

    Args:
        path: a path ending in .csv
        columns: the header, distinct non-empty names
        rows: each row a list of values in column order, or an object keyed by column (missing keys are blank)
        overwrite: replace the file if it exists
    """
    if file_extension(path.strip()) != ".csv":
        raise ToolError(f"write_csv writes .csv files; {path!r} is not one (use write_file for other types)")
    cols = [c.strip() for c in columns]
    if any(not c for c in cols) or len(set(cols)) != len(cols):
        raise ToolError("columns must be distinct, non-empty names")
    cells = _cells(cols, rows)
    f = put_file(world, path, render_csv(cols, cells), overwrite=overwrite)
    return {"path": f.path, "columns": cols, "rows": len(cells)}


@tool("write", pre=[file_exists(after=CSV_SOURCES)])
def append_csv_rows(world: WorkspaceWorld, path: str, rows: Annotated[Rows, Field(min_length=1)]) -> dict[str, Any]:
    """Add rows at the end of an existing CSV file (the header decides the column order).

    Args:
        path: a .csv file
        rows: each row a list of values in column order, or an object keyed by column
    """
    f, columns, old = _csv(world, path)
    if not columns:
        raise ToolError(f"{f.path} is empty and has no header; create it with write_csv")
    text = render_csv(columns, _cells(columns, rows)).split("\n", 1)[1]
    base = f.content if not f.content or f.content.endswith("\n") else f.content + "\n"
    put_file(world, f.path, base + text)
    return {"path": f.path, "appended": len(rows), "total_rows": len(old) + len(rows)}


@tool("write", pre=[file_exists(after=CSV_SOURCES)])
def update_csv_rows(world: WorkspaceWorld, path: str, where: Annotated[Where, Field(min_length=1)],
                    values: Annotated[dict[str, Cell], Field(min_length=1)]) -> dict[str, Any]:
    """Set columns of every row that meets all conditions (the file is rewritten in standard CSV).

    Args:
        path: a .csv file
        where: conditions that must all hold (see query_csv)
        values: column -> new value
    """
    f, columns, rows = _csv(world, path)
    conds = _compile(columns, where)
    sets = [(_column(columns, k), to_cell(v, f"values[{k!r}]")) for k, v in values.items()]
    out, n = [], 0
    for _, r in rows:
        if all(_holds(r[i], op, t, num) for i, op, t, num in conds):
            r = list(r)
            for i, v in sets:
                r[i] = v
            n += 1
        out.append(r)
    if n:
        put_file(world, f.path, render_csv(columns, out))
    return {"path": f.path, "updated": n, **({} if n else {"note": "no row met the conditions; nothing changed"})}


@tool("write", pre=[file_exists(after=CSV_SOURCES)])
def delete_csv_rows(world: WorkspaceWorld, path: str, where: Annotated[Where, Field(min_length=1)]) -> dict[str, Any]:
    """Delete every row that meets all conditions (the file is rewritten in standard CSV).

    Args:
        path: a .csv file
        where: conditions that must all hold (see query_csv)
    """
    f, columns, rows = _csv(world, path)
    conds = _compile(columns, where)
    keep = [r for _, r in rows if not all(_holds(r[i], op, t, num) for i, op, t, num in conds)]
    n = len(rows) - len(keep)
    if n:
        put_file(world, f.path, render_csv(columns, keep))
    return {"path": f.path, "deleted": n, "total_rows": len(keep)}


def _aggregate(function: str, values: list[Decimal], rows: int) -> int | float | None:
    if function == "count":
        return rows
    if not values:
        return None
    if function == "sum":
        return plain_number(sum(values, Decimal(0)))
    if function == "mean":
        return plain_number(sum(values, Decimal(0)) / len(values))
    return plain_number(min(values) if function == "min" else max(values))


@tool("read", pre=[file_exists(after=CSV_SOURCES)])
def csv_aggregate(world: WorkspaceWorld, path: str, function: Literal["sum", "mean", "min", "max", "count"],
                  column: str | None = None, group_by: str | None = None, where: Where | None = None) -> dict[str, Any]:
    """Sum, average, minimum, maximum or count of a column, over all rows or per group, after
    optional conditions. Blank cells are skipped; any other non-numeric cell is an error.

    Args:
        path: a .csv file
        function: sum, mean, min, max or count (count needs no column; with one, it counts non-blank cells)
        column: the numeric column to aggregate
        group_by: a column whose values form the groups (sorted by group)
        where: conditions rows must meet first (see query_csv)
    """
    f, header, rows = _csv(world, path)
    if column is None and function != "count":
        raise ToolError(f"{function} needs a column")
    ci = _column(header, column) if column is not None else None
    gi = _column(header, group_by, "group_by column") if group_by is not None else None
    groups: dict[str, tuple[list[Decimal], list[int]]] = {}
    for n, r in _select(rows, _compile(header, where)):
        key = r[gi].strip() if gi is not None else ""
        vals, count = groups.setdefault(key, ([], [0]))
        if ci is None:
            count[0] += 1
            continue
        cell = r[ci].strip()
        if not cell:
            continue
        count[0] += 1
        if function != "count":
            x = cell_number(cell)
            if x is None:
                raise ToolError(f"{f.path}: line {n}: {column} is {cell!r}, not a number")
            vals.append(x)
    result = {k: {"value": _aggregate(function, v, c[0]), "rows": c[0]} for k, (v, c) in groups.items()}
    base = {"path": f.path, "function": function, "column": column}
    if gi is None:
        only = result.get("", {"value": 0 if function == "count" else None, "rows": 0})
        return {**base, **only}
    return {**base, "group_by": group_by, "groups": [{"group": k, **result[k]} for k in sorted(result)]}


CSV_TOOLS = [read_csv, query_csv, write_csv, append_csv_rows, update_csv_rows, delete_csv_rows, csv_aggregate]
