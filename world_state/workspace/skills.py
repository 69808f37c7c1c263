"""Workspace skills (pi-Bench): reusable procedures staged in the workspace, run by a sandboxed
interpreter of workspace operations.

A skill is a folder ``skills/<name>/`` in the workspace's virtual file system holding ``SKILL.md``
(front matter ``name``, ``description``, ``persona``, ``updated``; then when to use it, its inputs,
its outputs and the conventions it applies) and one or more scripts (``run.json`` is the default
one). Scripts are data, never code: a JSON object

``{"params": {name: spec}, "steps": [step, ...], "result": value}``

read by the interpreter below. Nothing here starts a process, touches the real file system or
evaluates workspace text as Python: a step either calls one of the persona's existing workspace
tools (with the same argument validation and pre-conditions an agent's call gets) or applies one
of a few pure transforms to values.

Values (anywhere a step takes one): JSON literals; a string ``"$a.b.0"`` reads variable ``a``
(``args`` holds the validated arguments, ``now`` the workspace clock) and walks keys and list
indexes (``"$$x"`` is the literal ``"$x"``); ``{"$fmt": "text {args.batch|pad2}"}`` fills a
template (placeholders name the same paths; filters ``pad2``, ``pad3``, ``date`` (the
``YYYY-MM-DD`` of a time), ``lower``, ``upper``;
``{{``/``}}`` are braces). Containers resolve member by member.

Parameters: ``type`` is ``integer``, ``number``, ``string``, ``datetime`` (``YYYY-MM-DD HH:MM:SS``),
``date`` (``YYYY-MM-DD``) or ``list`` (of strings); optional ``min``/``max`` (numbers),
``max_chars``, ``max_items``, ``choices``, ``default`` (a parameter without one is required),
``description``. Unknown arguments are refused.

Steps (``as`` names the result; every step but ``require`` and ``call`` needs it):

- ``call``: ``tool``, ``args``: one workspace tool call; its result (JSON) is the value;
- ``let``: ``value``;
- ``filter``: ``from`` (list of objects), ``where`` (``[{"field", "op", "value"}]``, ops ``eq ne lt
  le gt ge in contains``; numbers compare as numbers);
- ``compute``: ``from``, ``field``, ``expr`` (arithmetic over the row's numeric fields: ``+ - * /``,
  parentheses, numbers), optional ``format`` (``decimals``, ``scale``, ``sign``, ``thousands``,
  ``trim``, ``prefix``, ``suffix``) or ``round`` (decimals): each row with ``field`` added;
- ``project``: ``from``, ``fields`` (new name -> row field): smaller objects;
- ``to_json``: ``value``: its JSON text (indented);
- ``sort`` (``from``, ``by``, ``descending``), ``slice`` (``from``, ``start``, ``stop``), ``pluck``
  (``from``, ``field``), ``count`` (``from``), ``sum`` (``from``, ``field``: exact decimal sum),
  ``concat`` (``from``: a list of lists);
- ``map``: ``from``, ``template``: one string per item (placeholders name the item's fields, or
  ``item`` for a plain item, then variables);
- ``join``: ``from`` (strings), ``sep``, optional ``prefix``/``suffix`` (added when not empty);
- ``table``: ``from`` (objects), ``columns``: rows of cells for ``write_csv``;
- ``add_minutes``: ``from`` (a datetime), ``minutes``;
- ``require``: ``value``, ``message``: refuse the run with ``message`` unless the value is
  non-empty (or, with ``equals``, equal to it).

Bounds: a script of at most ``MAX_SCRIPT_CHARS`` characters and ``MAX_STEPS`` steps, at most
``MAX_CALLS`` tool calls, ``MAX_WORK`` units of work (each step costs one plus the items it walks),
lists of at most ``MAX_ITEMS`` items, values of at most ``MAX_VALUE_CHARS`` characters (templates,
joins and JSON texts are measured as they are built) and scripts nested at most ``MAX_DEPTH`` deep.

All or nothing: a run that fails at any step (bad arguments, a refused tool call, a bound) leaves
the workspace as it was: under the toolkit's transaction (``run_skill`` is a write tool), or
under its own when called directly. ``dry_run`` runs on a copy and reports what it would do.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import ValidationError

from servicegym.world_state.core import TIME_FORMAT, History
from servicegym.world_state.tools import ToolError, ToolSpec, _chars, dumps, tool
from servicegym.world_state.workspace.world import WorkspaceWorld

SKILLS_DIR = "skills"
SKILL_DOC = "SKILL.md"
DEFAULT_SCRIPT = "run.json"
MAX_SCRIPT_CHARS = 40_000
MAX_STEPS = 60
MAX_CALLS = 16
MAX_WORK = 50_000
MAX_ITEMS = 2_000
MAX_VALUE_CHARS = 200_000
MAX_RESULT_CHARS = 8_000
MAX_EXPR_CHARS = 200
MAX_TEMPLATE_CHARS = 8_000
MAX_DEPTH = 32
SKILL_TOOL_NAMES = ("list_skills", "read_skill", "run_skill")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,47}$")
_SCRIPT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}\.json$")


# ----- the skill folders ------------------------------------------------------------------------
def skill_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name.strip()):
        raise ToolError(f"skill name {name!r} is not valid: lower-case letters, digits and '-' (see list_skills)")
    return name.strip()


def front_matter(text: str) -> dict[str, str]:
    """The ``key: value`` lines between the leading ``---`` lines of a SKILL.md (empty if none)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:60]:
        if line.strip() == "---":
            return out
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return {}


def skill_files(world: WorkspaceWorld, name: str) -> dict[str, str]:
    """``{file name: content}`` of the skill folder ``skills/<name>/`` (ToolError when it has no SKILL.md)."""
    prefix = f"{SKILLS_DIR}/{name}/"
    files = {f.path[len(prefix):]: f.content for f in world.table("files")
             if f.path.startswith(prefix) and "/" not in f.path[len(prefix):]}
    if SKILL_DOC not in files:
        known = ", ".join(s["name"] for s in _skills(world)) or "none"
        raise ToolError(f"no skill {name!r} in the workspace (no {prefix}{SKILL_DOC}); skills: {known}")
    return files


def _skills(world: WorkspaceWorld) -> list[dict[str, Any]]:
    out = []
    for f in world.table("files"):
        parts = f.path.split("/")
        if len(parts) == 3 and parts[0] == SKILLS_DIR and parts[2] == SKILL_DOC and _NAME.match(parts[1]):
            meta = front_matter(f.content)
            scripts = sorted(g.path.rsplit("/", 1)[1] for g in world.table("files")
                             if g.path.startswith(f"{SKILLS_DIR}/{parts[1]}/") and g.path.endswith(".json"))
            out.append({"name": parts[1], "description": meta.get("description", "")[:300],
                        "updated": meta.get("updated", "")[:40], "scripts": scripts})
    return sorted(out, key=lambda s: s["name"])


# ----- values -----------------------------------------------------------------------------------
class _Run:
    """One script run: variables, counters and the tools it may call."""

    def __init__(self, world: WorkspaceWorld, tools: dict[str, ToolSpec], args: dict[str, Any]) -> None:
        self.world = world
        self.tools = tools
        self.vars: dict[str, Any] = {"args": args, "now": world.clock.text()}
        self.work = 0
        self.calls: list[dict[str, Any]] = []
        self.history = History()

    def charge(self, units: int) -> None:
        self.work += units
        if self.work > MAX_WORK:
            raise ToolError(f"the script did more than {MAX_WORK} units of work; it was stopped and nothing was changed")

    # references and templates
    def lookup(self, path: str, local: dict[str, Any] | None = None) -> Any:
        parts = path.split(".")
        if local is not None and parts[0] in local:
            value: Any = local[parts[0]]
        elif parts[0] in self.vars:
            value = self.vars[parts[0]]
        else:
            raise ToolError(f"the script refers to {path!r}, but nothing is named {parts[0]!r} at that point")
        for part in parts[1:]:
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                raise ToolError(f"the script refers to {path!r}, which does not exist (no {part!r})")
        return value

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            if v.startswith("$$"):
                return v[1:]
            if v.startswith("$"):
                return self.lookup(v[1:])
            return v
        if isinstance(v, dict):
            if set(v) == {"$fmt"}:
                return self.template(v["$fmt"])
            self.charge(len(v))
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, list):
            self.charge(len(v))
            return [self.value(x) for x in v]
        return v

    _PLACE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.]*)(?:\|([a-z0-9]+))?\}")

    def template(self, text: Any, local: dict[str, Any] | None = None) -> str:
        if not isinstance(text, str) or len(text) > MAX_TEMPLATE_CHARS:
            raise ToolError(f"a template must be a string of at most {MAX_TEMPLATE_CHARS} characters")
        self.charge(1 + len(text) // 200)
        produced = [0]

        def fill(m: re.Match[str]) -> str:
            piece = _fill(m)
            produced[0] += len(piece)
            if produced[0] > MAX_VALUE_CHARS:
                raise ToolError(f"a template produced more than {MAX_VALUE_CHARS} characters")
            return piece

        def _fill(m: re.Match[str]) -> str:
            if m.group(0) in ("{{", "}}"):
                return m.group(0)[0]
            value = self.lookup(m.group(1), local)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            f = m.group(2)
            if f in ("pad2", "pad3"):
                if not isinstance(value, int):
                    raise ToolError(f"filter {f} needs a whole number, got {value!r}")
                return f"{value:0{f[-1]}d}"
            if f == "date":
                return text[:10]
            if f == "lower":
                return text.lower()
            if f == "upper":
                return text.upper()
            if f is not None:
                raise ToolError(f"unknown template filter {f!r} (pad2, pad3, date, lower, upper)")
            return text

        out = self._PLACE.sub(fill, text)
        if len(out) > MAX_VALUE_CHARS:
            raise ToolError(f"a template produced more than {MAX_VALUE_CHARS} characters")
        return out

    def items(self, v: Any, what: str) -> list[Any]:
        value = self.value(v)
        if not isinstance(value, list):
            raise ToolError(f"{what} needs a list, got {type(value).__name__}")
        if len(value) > MAX_ITEMS:
            raise ToolError(f"{what}: a list of {len(value)} items is over the limit of {MAX_ITEMS}")
        self.charge(len(value))
        return value

    def rows(self, v: Any, what: str) -> list[dict[str, Any]]:
        value = self.items(v, what)
        if not all(isinstance(r, dict) for r in value):
            raise ToolError(f"{what} needs a list of objects (rows)")
        return value


# ----- arithmetic and number formats -------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise ToolError(f"{what} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(Decimal(str(value).strip()))
    except (InvalidOperation, ValueError):
        raise ToolError(f"{what} is {value!r}, not a number") from None


def evaluate(expr: Any, row: dict[str, Any]) -> float:
    """``expr`` (``+ - * /``, parentheses, numbers and the row's fields) over ``row``; a tiny
    recursive-descent parser, never ``eval``."""
    if not isinstance(expr, str) or not expr.strip() or len(expr) > MAX_EXPR_CHARS:
        raise ToolError(f"an expression must be a non-empty string of at most {MAX_EXPR_CHARS} characters")
    tokens: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(expr):
        num, name, sym = m.groups()
        if num is not None:
            tokens.append(("num", num))
        elif name is not None:
            tokens.append(("name", name))
        elif sym is not None and sym.strip():
            if sym not in "+-*/()":
                raise ToolError(f"expression {expr!r}: {sym!r} is not allowed (use + - * / and parentheses)")
            tokens.append(("sym", sym))
    pos = 0

    def peek() -> tuple[str, str] | None:
        return tokens[pos] if pos < len(tokens) else None

    def atom(depth: int) -> float:
        nonlocal pos
        if depth > 20:
            raise ToolError(f"expression {expr!r} is nested too deeply")
        t = peek()
        if t is None:
            raise ToolError(f"expression {expr!r} ends too early")
        pos += 1
        if t == ("sym", "-"):
            return -atom(depth + 1)
        if t == ("sym", "("):
            v = add(depth + 1)
            if peek() != ("sym", ")"):
                raise ToolError(f"expression {expr!r}: missing ')'")
            pos += 1
            return v
        if t[0] == "num":
            return float(t[1])
        if t[0] == "name":
            if t[1] not in row:
                raise ToolError(f"expression {expr!r}: the row has no field {t[1]!r} (fields: {', '.join(map(str, row))})")
            return _number(row[t[1]], f"field {t[1]!r}")
        raise ToolError(f"expression {expr!r}: unexpected {t[1]!r}")

    def mul(depth: int) -> float:
        nonlocal pos
        v = atom(depth)
        while peek() in (("sym", "*"), ("sym", "/")):
            op = tokens[pos][1]
            pos += 1
            r = atom(depth)
            if op == "/" and r == 0:
                raise ToolError(f"expression {expr!r} divides by zero for row {json.dumps(row, ensure_ascii=False)[:200]}")
            v = v * r if op == "*" else v / r
        return v

    def add(depth: int) -> float:
        nonlocal pos
        v = mul(depth)
        while peek() in (("sym", "+"), ("sym", "-")):
            op = tokens[pos][1]
            pos += 1
            r = mul(depth)
            v = v + r if op == "+" else v - r
        return v

    v = add(0)
    if pos != len(tokens):
        raise ToolError(f"expression {expr!r}: unexpected {tokens[pos][1]!r}")
    return v


def format_number(value: float, fmt: Any) -> str:
    """``value`` in a number format: ``scale`` (multiplier), ``decimals`` (0-6), ``sign`` (+ for
    positives), ``thousands`` (``,`` separators), ``trim`` (shortest form, like ``%g``),
    ``prefix`` and ``suffix``."""
    if not isinstance(fmt, dict) or set(fmt) - {"scale", "decimals", "sign", "thousands", "trim", "prefix", "suffix"}:
        raise ToolError("format takes scale, decimals, sign, thousands, trim, prefix and suffix")
    decimals = fmt.get("decimals", 2)
    if isinstance(decimals, bool) or not isinstance(decimals, int) or not 0 <= decimals <= 6:
        raise ToolError("format.decimals must be a whole number 0-6")
    scale = fmt.get("scale", 1)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ToolError("format.scale must be a number")
    prefix, suffix = fmt.get("prefix", ""), fmt.get("suffix", "")
    if not isinstance(prefix, str) or not isinstance(suffix, str) or len(prefix) > 20 or len(suffix) > 20:
        raise ToolError("format.prefix and format.suffix must be short strings")
    v = value * scale if scale != 1 else value
    if fmt.get("trim"):
        body = f"{v:g}"
    else:
        spec = ("+" if fmt.get("sign") else "") + ("," if fmt.get("thousands") else "") + f".{decimals}f"
        body = format(v, spec)
    return f"{prefix}{body}{suffix}"


def _compare(a: Any, op: str, b: Any) -> bool:
    if op == "in":
        if not isinstance(b, list):
            raise ToolError("op 'in' needs a list value")
        return str(a).casefold() in [str(x).casefold() for x in b]
    if op == "contains":
        return str(b).casefold() in str(a).casefold()
    try:
        x, y = _number(a, "a"), _number(b, "b")
    except ToolError:
        x, y = str(a).casefold(), str(b).casefold()  # type: ignore[assignment]
    ops = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    if op not in ops:
        raise ToolError(f"unknown filter op {op!r} (eq ne lt le gt ge in contains)")
    return ops[op]


# ----- steps ------------------------------------------------------------------------------------
def _call(run: _Run, step: dict[str, Any]) -> Any:
    name = step.get("tool")
    spec = run.tools.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ToolError(f"tool {name!r} is not a workspace tool this skill may call")
    if len(run.calls) >= MAX_CALLS:
        raise ToolError(f"the script makes more than {MAX_CALLS} tool calls")
    arguments = run.value(step.get("args", {}))
    if not isinstance(arguments, dict):
        raise ToolError(f"the arguments of {name} must be an object")
    if _chars(arguments, MAX_VALUE_CHARS) > MAX_VALUE_CHARS:
        raise ToolError(f"the arguments of {name} are over {MAX_VALUE_CHARS} characters")
    try:
        args = spec.args_model.model_validate(arguments).__dict__
    except ValidationError as err:
        first = err.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "arguments"
        raise ToolError(f"invalid arguments for {name}: {where}: {first['msg']}") from None
    for p in spec.pre:
        problem = p.check(run.world, run.history, args)
        if problem:
            raise ToolError(f"{name} refused: {problem}")
    try:
        value = spec.fn(run.world, **args)
    except ToolError as err:
        raise ToolError(f"{name} refused: {err}") from None
    text = dumps(value)
    if len(text) > MAX_VALUE_CHARS:
        raise ToolError(f"the result of {name} is over {MAX_VALUE_CHARS} characters")
    run.history.add_call(0, run.world.clock.text(), spec.name, arguments, "executed", "", "")
    shown = {k: (v if _chars(v, 200) <= 200 else "...") for k, v in arguments.items() if k != "content"}
    run.calls.append({"tool": spec.name, "arguments": shown})
    return json.loads(text)


def _step(run: _Run, step: dict[str, Any]) -> Any:  # noqa: C901  one branch per op, kept together
    op = step.get("op")
    if op == "call":
        return _call(run, step)
    if op == "let":
        return run.value(step.get("value"))
    if op == "filter":
        rows = run.rows(step.get("from"), "filter")
        conds = run.value(step.get("where", []))
        if not isinstance(conds, list) or not all(isinstance(c, dict) and "field" in c for c in conds):
            raise ToolError("filter.where must be a list of {field, op, value}")
        return [r for r in rows if all(_compare(r.get(c["field"], ""), c.get("op", "eq"), c.get("value")) for c in conds)]
    if op == "compute":
        rows = run.rows(step.get("from"), "compute")
        field, fmt = step.get("field"), step.get("format")
        if not isinstance(field, str) or not field:
            raise ToolError("compute needs a field name")
        out = []
        for r in rows:
            v = evaluate(step.get("expr"), r)
            if fmt is not None:
                out.append({**r, field: format_number(v, fmt)})
            else:
                nd = step.get("round")
                if nd is not None and (isinstance(nd, bool) or not isinstance(nd, int) or not 0 <= nd <= 8):
                    raise ToolError("compute.round must be a whole number 0-8")
                out.append({**r, field: round(v, nd) if nd is not None else v})
        return out
    if op == "project":
        rows = run.rows(step.get("from"), "project")
        fields = step.get("fields")
        if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
            raise ToolError("project.fields must map new names to row fields")
        missing = sorted({v for v in fields.values() if any(v not in r for r in rows)})
        if missing:
            raise ToolError(f"project: rows lack the fields {', '.join(missing)}")
        return [{k: r[v] for k, v in fields.items()} for r in rows]
    if op == "to_json":
        value = run.value(step.get("value"))
        if _chars(value, MAX_VALUE_CHARS // 2) > MAX_VALUE_CHARS // 2:
            raise ToolError(f"to_json: the value is over {MAX_VALUE_CHARS // 2} characters")
        return json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    if op == "sort":
        rows = run.rows(step.get("from"), "sort")
        by = step.get("by")
        if not isinstance(by, str) or any(by not in r for r in rows):
            raise ToolError(f"sort: every row needs the field {by!r}")
        try:
            return sorted(rows, key=lambda r: _number(r[by], by), reverse=bool(step.get("descending")))
        except ToolError:
            return sorted(rows, key=lambda r: str(r[by]).casefold(), reverse=bool(step.get("descending")))
    if op == "slice":
        items = run.items(step.get("from"), "slice")
        start, stop = run.value(step.get("start", 0)), run.value(step.get("stop"))
        if not isinstance(start, int) or not (stop is None or isinstance(stop, int)):
            raise ToolError("slice.start and slice.stop must be whole numbers")
        return items[start:stop]
    if op == "pluck":
        rows = run.rows(step.get("from"), "pluck")
        field = step.get("field")
        if any(field not in r for r in rows):
            raise ToolError(f"pluck: every row needs the field {field!r}")
        return [r[field] for r in rows]
    if op == "count":
        return len(run.items(step.get("from"), "count"))
    if op == "sum":
        rows = run.rows(step.get("from"), "sum")
        total = Decimal(0)
        for r in rows:
            try:
                total += Decimal(str(r.get(step.get("field"), "")).strip())
            except InvalidOperation:
                raise ToolError(f"sum: {r.get(step.get('field'))!r} in {step.get('field')!r} is not a number") from None
        return float(total)
    if op == "concat":
        parts = run.items(step.get("from"), "concat")
        out: list[Any] = []
        for p in parts:
            if not isinstance(p, list):
                raise ToolError("concat needs a list of lists")
            out += p
        if len(out) > MAX_ITEMS:
            raise ToolError(f"concat: more than {MAX_ITEMS} items")
        return out
    if op == "map":
        items = run.items(step.get("from"), "map")
        tpl = step.get("template")
        return [run.template(tpl, it if isinstance(it, dict) else {"item": it}) for it in items]
    if op == "join":
        items = run.items(step.get("from"), "join")
        sep, prefix, suffix = step.get("sep", "\n"), step.get("prefix", ""), step.get("suffix", "")
        if not all(isinstance(x, str) and len(x) <= 1000 for x in (sep, prefix, suffix)) or not all(isinstance(x, str) for x in items):
            raise ToolError("join needs a list of strings, and sep, prefix and suffix of at most 1000 characters")
        if sum(map(len, items)) + len(sep) * len(items) > MAX_VALUE_CHARS:
            raise ToolError(f"join: the text would be over {MAX_VALUE_CHARS} characters")
        text = sep.join(items)
        return prefix + text + suffix if text else text
    if op == "table":
        rows = run.rows(step.get("from"), "table")
        cols = run.value(step.get("columns"))
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
            raise ToolError("table.columns must be a list of field names")
        missing = [c for c in cols if any(c not in r for r in rows)]
        if missing:
            raise ToolError(f"table: rows lack the fields {', '.join(missing)}")
        return [[r[c] for c in cols] for r in rows]
    if op == "add_minutes":
        start, minutes = run.value(step.get("from")), run.value(step.get("minutes"))
        try:
            t = datetime.strptime(start, TIME_FORMAT)
        except (TypeError, ValueError):
            raise ToolError(f"add_minutes: {start!r} is not a time like 2026-03-04 10:00:00") from None
        if isinstance(minutes, bool) or not isinstance(minutes, int) or not 0 < minutes <= 24 * 60:
            raise ToolError("add_minutes: minutes must be a whole number 1-1440")
        return (t + timedelta(minutes=minutes)).strftime(TIME_FORMAT)
    if op == "require":
        v = run.value(step.get("value"))
        ok = v == run.value(step["equals"]) if "equals" in step else bool(v)
        if not ok:
            msg = run.value(step.get("message", "a requirement of the skill does not hold"))
            raise ToolError(msg[:500] if isinstance(msg, str) else "a requirement of the skill does not hold")
        return v
    raise ToolError(f"unknown step op {op!r}")


# ----- parameters -------------------------------------------------------------------------------
def check_args(params: dict[str, Any], args: Any) -> dict[str, Any]:
    """The validated arguments of a run, or ToolError saying which one is wrong and how."""
    if not isinstance(args, dict):
        raise ToolError("args must be an object of the skill's inputs (see read_skill)")
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise ToolError(f"unknown input(s) {', '.join(map(repr, unknown))}; the skill takes {', '.join(params) or 'nothing'}")
    out: dict[str, Any] = {}
    for name, spec in params.items():
        if name not in args:
            if "default" not in spec:
                raise ToolError(f"input {name!r} is required ({spec.get('description', spec.get('type'))})")
            out[name] = spec["default"]
            continue
        v, kind = args[name], spec.get("type", "string")
        desc = f"input {name!r}"
        if kind in ("integer", "number"):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind == "integer" and not float(v).is_integer()):
                raise ToolError(f"{desc} must be a {'whole ' if kind == 'integer' else ''}number, got {v!r}")
            v = int(v) if kind == "integer" else float(v)
            if "min" in spec and v < spec["min"] or "max" in spec and v > spec["max"]:
                raise ToolError(f"{desc} must be between {spec.get('min')} and {spec.get('max')}, got {v}")
        elif kind in ("string", "datetime", "date"):
            if not isinstance(v, str):
                raise ToolError(f"{desc} must be a string, got {type(v).__name__}")
            v = v.strip()
            if len(v) > spec.get("max_chars", 500) or (not v and "default" not in spec):
                raise ToolError(f"{desc} must be 1-{spec.get('max_chars', 500)} characters")
            if kind != "string":
                try:
                    datetime.strptime(v, TIME_FORMAT if kind == "datetime" else "%Y-%m-%d")
                except ValueError:
                    shape = "YYYY-MM-DD HH:MM:SS" if kind == "datetime" else "YYYY-MM-DD"
                    raise ToolError(f"{desc} must be a {shape} {kind}, got {v!r}") from None
        elif kind == "list":
            if not isinstance(v, list) or not all(isinstance(x, str) and 0 < len(x) <= spec.get("max_chars", 500) for x in v):
                raise ToolError(f"{desc} must be a list of non-empty strings")
            if len(v) > spec.get("max_items", 20):
                raise ToolError(f"{desc} takes at most {spec.get('max_items', 20)} items")
        else:
            raise ToolError(f"the skill declares {name!r} with an unknown type {kind!r}")
        if "choices" in spec and v not in spec["choices"]:
            raise ToolError(f"{desc} must be one of {', '.join(map(str, spec['choices']))}, got {v!r}")
        out[name] = v
    return out


def parse_script(text: str, where: str) -> dict[str, Any]:
    if len(text) > MAX_SCRIPT_CHARS:
        raise ToolError(f"{where} is over {MAX_SCRIPT_CHARS} characters")
    try:
        script = json.loads(text)
    except json.JSONDecodeError as err:
        raise ToolError(f"{where} is not valid JSON: {err.msg} at line {err.lineno}") from None
    except RecursionError:
        raise ToolError(f"{where} is nested too deeply") from None
    if _depth(script) > MAX_DEPTH:
        raise ToolError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if not isinstance(script, dict) or not isinstance(script.get("steps"), list) or not isinstance(script.get("params", {}), dict):
        raise ToolError(f"{where} must be an object with 'params' (object) and 'steps' (list)")
    if len(script["steps"]) > MAX_STEPS:
        raise ToolError(f"{where} has {len(script['steps'])} steps; the limit is {MAX_STEPS}")
    return script


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (iteratively, so any JSON can be measured)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)
    return deepest


def _persona_tools(world: WorkspaceWorld) -> dict[str, ToolSpec]:
    # the common tools from their own module, not the package (which imports this one)
    from servicegym.world_state.workspace.base_tools import BASE_TOOLS
    from servicegym.world_state.workspace.personas import PERSONAS, persona_tools

    specs = [*BASE_TOOLS, *(persona_tools(world.persona) if world.persona in PERSONAS else [])]
    return {s.name: s for s in specs if s.name not in SKILL_TOOL_NAMES}


def execute(world: WorkspaceWorld, name: str, args: Any, script: str = DEFAULT_SCRIPT) -> dict[str, Any]:
    """Run a skill's script on ``world`` (changes stay on success). Raises ToolError; the caller
    undoes partial changes (``run_skill`` does)."""
    name = skill_name(name)
    if not isinstance(script, str) or not _SCRIPT.match(script):
        raise ToolError(f"script {script!r} is not a script file name like 'run.json'")
    files = skill_files(world, name)
    if script not in files:
        raise ToolError(f"skill {name!r} has no script {script!r}; its scripts: {', '.join(sorted(s for s in files if s.endswith('.json'))) or 'none'}")
    where = f"{SKILLS_DIR}/{name}/{script}"
    prog = parse_script(files[script], where)
    run = _Run(world, _persona_tools(world), check_args(prog.get("params", {}), args))
    for i, step in enumerate(prog["steps"], 1):
        run.charge(1)
        if not isinstance(step, dict):
            raise ToolError(f"{where}: step {i} is not an object")
        try:
            value = _step(run, step)
        except ToolError as err:
            raise ToolError(f"skill {name!r} stopped at step {i} ({step.get('op')}{' ' + str(step.get('tool')) if step.get('op') == 'call' else ''}): {err}") from None
        except (TypeError, ValueError, KeyError, OverflowError, RecursionError) as err:  # a malformed script
            raise ToolError(f"skill {name!r} stopped at step {i} ({step.get('op')}): malformed step ({type(err).__name__}: {err})") from None
        target = step.get("as")
        if target is not None:
            if not isinstance(target, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$", target) or target in ("args", "now"):
                raise ToolError(f"{where}: step {i} names its result {target!r}; use a plain name other than args or now")
            if _chars(value, MAX_VALUE_CHARS) > MAX_VALUE_CHARS:
                raise ToolError(f"skill {name!r} stopped at step {i}: a value over {MAX_VALUE_CHARS} characters")
            run.vars[target] = value
    result = run.value(prog.get("result"))
    if _chars(result, MAX_RESULT_CHARS) > MAX_RESULT_CHARS:
        result = "(the result is over the limit; see the files and records the run wrote)"
    text = json.dumps(result, ensure_ascii=False)
    if len(text) > MAX_RESULT_CHARS:
        result = text[:MAX_RESULT_CHARS] + f"... ({len(text) - MAX_RESULT_CHARS} more characters)"
    return {"skill": name, "script": script, "calls": run.calls, "result": result, "work": run.work}


# ----- tools ------------------------------------------------------------------------------------
@tool("read")
def list_skills(world: WorkspaceWorld) -> dict[str, Any]:
    """The skills staged in the workspace (folders skills/<name>/ with a SKILL.md): name, what each
    does, when it was last updated and its scripts. Read one with read_skill before relying on it."""
    skills = _skills(world)
    return {"skills": skills, "count": len(skills)}


@tool("read")
def read_skill(world: WorkspaceWorld, name: str) -> dict[str, Any]:
    """A skill's SKILL.md (when to use it, inputs, outputs, the conventions it applies) and its
    scripts.

    Args:
        name: the skill's name, as list_skills shows it
    """
    name = skill_name(name)
    files = skill_files(world, name)
    return {"name": name, "doc": files[SKILL_DOC][:MAX_RESULT_CHARS],
            "scripts": {k: v[:MAX_RESULT_CHARS] for k, v in sorted(files.items()) if k.endswith(".json")}}


@tool("write")
def run_skill(world: WorkspaceWorld, name: str, args: dict[str, Any] | None = None, script: str = DEFAULT_SCRIPT,
              dry_run: bool = False) -> dict[str, Any]:
    """Run a skill's script with its inputs. All or nothing: a run that fails changes nothing.
    A skill applies the conventions written into it; check its output against the current ones.

    Args:
        name: the skill's name, as list_skills shows it
        args: the skill's inputs, as its SKILL.md lists them
        script: which of its scripts (default run.json)
        dry_run: run on a copy of the workspace and report what it would do, changing nothing
    """
    if dry_run:
        out = execute(world.copy(), name, args or {}, script)
        return {**out, "dry_run": True}
    tables = list(world.tables.values())
    own = tables[0].journal is None if tables else False  # no caller's transaction: keep our own
    txn = world.begin() if own else None
    try:
        out = execute(world, name, args or {}, script)
    except BaseException:
        if txn is not None:
            world.rollback(txn)
        raise
    if txn is not None:
        world.commit(txn)
    return out


SKILL_TOOLS = [list_skills, read_skill, run_skill]
