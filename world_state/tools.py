"""Typed tools: ``@tool`` turns an annotated function into an OpenAI function schema, with
pre-conditions checked before it runs and post-conditions after, and a dependency graph derived
from those pre-conditions.

A tool is ``fn(world, **arguments) -> JSON-able``. Arguments are validated by a pydantic model
derived from the signature (unknown arguments rejected). A call that fails validation or a
pre-condition, or raises ``ToolError``, is *rejected*; any other exception is an *error*; in both
cases the world is restored to its state before the call.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from servicegym.world_state.core import Entity, History, World, parse_time

ToolKind = Literal["read", "write", "generic"]

# Limits on one call, checked before any validation or tool work (see DESIGN's action limits):
MAX_ARGUMENT_CHARS = 256 * 1024  # characters in one argument's value (a workspace file holds 200,000)
MAX_QUERY_CHARS = 1000  # a search query (search tools annotate their query with ``Query``)
MAX_ERROR_CHARS = 2000  # an error message shown to the agent (the first problems, then a count)
MAX_LISTED_ERRORS = 5  # invalid items named in one validation message

Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
"""A search query argument: longer ones are refused before the search runs (its cost grows with
the query)."""


class ToolError(Exception):
    """A business rule refused the call; the message is shown to the agent."""


@dataclass(frozen=True)
class Precondition:
    """A rule checked before the tool runs.

    ``check(world, history, args)`` returns an error message, or None when satisfied.
    ``after`` names tools that precede this one in the dependency graph because of this rule.
    """

    text: str
    check: Callable[[World, History, dict[str, Any]], str | None]
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class Postcondition:
    """A rule that must hold after a successful call: ``check(world, args, result, before)``."""

    text: str
    check: Callable[[World, dict[str, Any], Any, World], str | None]


def requires_prior_call(tools: str | Sequence[str], arg: str, what: str | None = None) -> Precondition:
    """The agent must have executed one of ``tools`` on the same ``arg`` value earlier."""
    names = (tools,) if isinstance(tools, str) else tuple(tools)
    shown = " or ".join(f"`{n}`" for n in names)
    label = what or arg

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        value = args.get(arg)
        called = history.called
        for n in names:
            if called(n, value):
                return None
        return f"call {shown} for {label} {value!r} first"

    return Precondition(f"{shown} must have been called earlier for the same {label}", check, names)


def no_record(what: str, value: Any) -> str:
    """The refusal of a call that names no record (one wording for ``exists``, ``field_in`` and the
    rules that look a record up themselves)."""
    return f"{what} {value!r} does not exist"


def exists(table: str, arg: str, what: str, produced_by: Iterable[str] = ()) -> Precondition:
    """``args[arg]`` names a record of ``table``; ``produced_by`` are the tools that reveal its id."""

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        # the table's rows read directly (``Table.__contains__``'s own test, without its call)
        return None if args.get(arg) in world.tables[table].rows else no_record(what, args.get(arg))

    return Precondition(f"the {what} must exist", check, tuple(produced_by))


def field_problem(row: Entity, what: str, allowed: tuple[str, ...], attr: str = "status") -> str | None:
    """Why ``row`` (a ``what``) fails ``field_in``: its ``attr`` is not in ``allowed``; None when it is."""
    value = getattr(row, attr)
    if value in allowed:
        return None
    return f"{what} {row.key} has {attr} {value!r}; this needs {attr} in {list(allowed)}"


def field_in(table: str, arg: str, what: str, allowed: Iterable[str], attr: str = "status") -> Precondition:
    """The record named by ``args[arg]`` has ``attr`` in ``allowed``."""
    allowed_t = tuple(allowed)

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        row = world.tables[table].rows.get(args.get(arg))  # ``Table.get``, without its call
        if row is None:
            return no_record(what, args.get(arg))
        return field_problem(row, what, allowed_t, attr)

    return Precondition(f"the {what}'s {attr} must be one of {', '.join(allowed_t)}", check)


def time_not_past(arg: str) -> Precondition:
    """``args[arg]`` is a time ``YYYY-MM-DD HH:MM:SS`` no earlier than the world's clock."""

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        try:
            t = parse_time(args[arg])
        except ValueError:
            return f"{arg} {args[arg]!r} must have the form YYYY-MM-DD HH:MM:SS"
        if t < world.clock.now:
            return f"{arg} {args[arg]} is before the current time {world.clock.text()}"
        return None

    return Precondition(f"{arg} has the form YYYY-MM-DD HH:MM:SS and is not in the past", check)


def rule(
    text: str, check: Callable[[World, History, dict[str, Any]], str | None], after: Iterable[str] = ()
) -> Precondition:
    """A pre-condition in code; ``after`` names the tools whose results it relies on."""
    return Precondition(text, check, tuple(after))


def _arg_docs(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and its ``Args:`` descriptions."""
    doc = inspect.cleandoc(doc or "")
    summary, _, rest = doc.partition("\nArgs:")
    args: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        m = re.match(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?:\s*(.*)$", line)
        if m:
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current and line.strip() and not re.match(r"^\S", line):
            args[current] += " " + line.strip()
        elif re.match(r"^\S", line):
            current = None
    return " ".join(summary.split()), args


_JSON_TYPE_NAMES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def _type_label(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    t = schema.get("type")
    if t == "array":
        return f"list[{_type_label(schema.get('items', {}))}]"
    if "anyOf" in schema:
        return "|".join(_type_label(s) for s in schema["anyOf"] if s.get("type") != "null")
    return _JSON_TYPE_NAMES.get(t, t or "any")


@dataclass
class ToolSpec:
    """A registered tool: its function, kind (read or write), argument model and OpenAI schema,
    pre- and post-conditions, aliases and the description the agent reads."""

    name: str
    fn: Callable[..., Any]
    kind: ToolKind
    summary: str
    args_model: type[BaseModel]
    parameters: dict[str, Any]
    pre: tuple[Precondition, ...] = ()
    post: tuple[Postcondition, ...] = ()
    aliases: tuple[str, ...] = ()
    usage: str = ""
    description: str = ""
    schema: dict[str, Any] = field(default_factory=dict)
    # ``pre`` in one function (``tool(check=...)``): the first problem of ``pre`` in its order, with
    # the same message, or None; for a tool whose rules read the same records, which it then looks
    # up once instead of once per rule. ``pre`` stays the rules the agent reads and the graph uses
    check: Callable[[World, History, dict[str, Any]], str | None] | None = None

    def argument_check(self) -> Callable[[dict[str, Any]], dict[str, Any] | None] | None:
        """The tool's compiled argument check (``_compile_plan`` of its plan), made at the first call."""
        if self.fast_args is _LAZY_CHECK:
            self.fast_args = _compiled_plan(self.plan)
        return self.fast_args

    def __post_init__(self) -> None:
        self.plan = _plan(self.args_model)
        # ``_fast_args(self.plan, arguments)`` written out, compiled at the tool's first call (``argument_check``):
        # tools declared again for each task (a workspace's skills) cost nothing at reset
        self.fast_args: Any = _LAZY_CHECK
        props = self.parameters.get("properties", {})
        required = set(self.parameters.get("required", []))
        parts = [f"{k}{'' if k in required else '?'}: {_type_label(v)}" for k, v in props.items()]
        self.usage = f"{self.name}({', '.join(parts)})"
        text = self.summary
        if self.pre:
            text += " Pre-conditions: " + "; ".join(p.text for p in self.pre) + "."
        if self.post:
            text += " Post-conditions: " + "; ".join(p.text for p in self.post) + "."
        self.description = text
        self.schema = {
            "type": "function",
            "function": {"name": self.name, "description": text, "parameters": self.parameters},
        }


_REQUIRED = object()
_PLAIN = {str: (str,), int: (int,), float: (float,), bool: (bool,)}
_IMMUTABLE_DEFAULTS = (str, int, float, bool, type(None))
_BOUNDS = {"min_length": operator.ge, "max_length": operator.le, "ge": operator.ge, "gt": operator.gt,
           "le": operator.le, "lt": operator.lt}


def _field_plan(ann: Any, metadata: list[Any]) -> tuple[tuple[type, ...], Callable[[Any], bool] | None] | None:
    """The exact types a plain value of ``ann`` has and a check of its constraints (None: none),
    or None when ``ann`` is more than a plain ``str``/``int``/``float``/``bool``, a ``Literal`` of
    strings, a ``dict[str, Any]`` or one of them or None, with length and number bounds."""
    nullable = False
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        parts = typing.get_args(ann)
        if len(parts) != 2 or type(None) not in parts:
            return None
        nullable, ann = True, next(a for a in parts if a is not type(None))
    metas = list(metadata)
    if typing.get_origin(ann) is Annotated:
        ann, *extra = typing.get_args(ann)
        for m in extra:
            if isinstance(m, FieldInfo):
                if m.alias or m.default_factory is not None:
                    return None
                metas.extend(m.metadata)
            else:
                metas.append(m)
    checks: list[Callable[[Any], bool]] = []
    if typing.get_origin(ann) is Literal:
        allowed = typing.get_args(ann)
        if not all(type(v) is str for v in allowed):
            return None
        allowed_set = frozenset(allowed)
        kinds: tuple[type, ...] = (str,)
        checks.append(allowed_set.__contains__)
    elif ann in _PLAIN:
        kinds = _PLAIN[ann]
    elif typing.get_origin(ann) is dict and typing.get_args(ann) == (str, Any) and not metas:
        kinds = (dict,)  # an object of any values (``_fast_args`` checks its keys and size, and copies it)
    else:
        return None
    bounds: dict[str, Any] = {}
    for m in metas:
        known = [(k, getattr(m, k)) for k in _BOUNDS if getattr(m, k, None) is not None]
        if len(known) != 1 or type(m).__name__ not in ("MinLen", "MaxLen", "Ge", "Gt", "Le", "Lt"):
            return None
        (key, bound), cmp = known[0], _BOUNDS[known[0][0]]
        if key.endswith("_length"):
            if kinds != (str,):
                return None
            checks.append(lambda v, cmp=cmp, bound=bound: cmp(len(v), bound))
        else:
            if kinds not in ((int,), (float,)) or type(bound) not in (int, float):
                return None
            checks.append(lambda v, cmp=cmp, bound=bound: cmp(v, bound))
        bounds[key] = bound if key not in bounds else None  # a bound given twice: the general check
    if len(bounds) == len(checks) and None not in bounds.values():
        # only bounds, each once: one comparison chain instead of a check per bound (a title's
        # min and max length, a number's range), the same test
        checks = [_bounds_check(bounds)] if bounds else []
    if nullable:
        kinds = (*kinds, type(None))
    if not checks:
        return kinds, None
    if len(checks) == 1:
        check = checks[0]
    else:
        check = lambda v, checks=tuple(checks): all(c(v) for c in checks)  # noqa: E731
    return kinds, (check if not nullable else (lambda v, check=check: v is None or check(v)))


def _bounds_check(b: dict[str, Any]) -> Callable[[Any], bool]:
    """One check of a string's length (``min_length``, ``max_length``) or a number's value
    (``ge``/``gt``, ``le``/``lt``) against every bound in ``b``."""
    if "min_length" in b or "max_length" in b:
        lo, hi = b.get("min_length"), b.get("max_length")
        if lo is not None and hi is not None:
            return lambda v: lo <= len(v) <= hi
        if lo is not None:
            return lambda v: len(v) >= lo
        return lambda v: len(v) <= hi
    ge, gt, le, lt = b.get("ge"), b.get("gt"), b.get("le"), b.get("lt")
    if (ge is not None and gt is not None) or (le is not None and lt is not None):
        tests = [(operator.ge, ge), (operator.gt, gt), (operator.le, le), (operator.lt, lt)]
        tests = [(cmp, x) for cmp, x in tests if x is not None]
        return lambda v: all(cmp(v, x) for cmp, x in tests)
    if ge is not None and le is not None:
        return lambda v: ge <= v <= le
    if ge is not None and lt is not None:
        return lambda v: ge <= v < lt
    if gt is not None and le is not None:
        return lambda v: gt < v <= le
    if gt is not None and lt is not None:
        return lambda v: gt < v < lt
    if ge is not None:
        return lambda v: v >= ge
    if gt is not None:
        return lambda v: v > gt
    if le is not None:
        return lambda v: v <= le
    return lambda v: v < lt


def _plan(model: type[BaseModel]) -> tuple[tuple[str, tuple[type, ...], Any, Any], ...] | None:
    """``(field, exact types, default, check)`` of each argument when every field is plain (see
    ``_field_plan``), for ``_fast_args``; None when any field is more than that (pydantic validates
    those calls)."""
    if model.model_config.get("extra") != "forbid" or model.model_config.get("strict"):
        return None
    plan = []
    for name, f in model.model_fields.items():
        if f.alias or f.default_factory is not None:
            return None
        fp = _field_plan(f.annotation, f.metadata)
        if fp is None:
            return None
        if f.is_required():
            default = _REQUIRED
        elif type(f.default) in _IMMUTABLE_DEFAULTS:
            default = f.default
        else:
            return None
        plan.append((name, fp[0], default, fp[1]))
    return tuple(plan)


def _fast_args(plan: tuple[tuple[str, tuple[type, ...], Any, Any], ...], arguments: dict[str, Any]) -> dict[str, Any] | None:
    """What ``args_model.model_validate(arguments).__dict__`` gives, when every argument already
    has its field's exact type and meets its bounds (nothing to coerce, no unknown or missing
    argument, floats finite, strings within ``MAX_ARGUMENT_CHARS``); None otherwise, and the
    general path decides (the size limit, then pydantic with its own messages)."""
    out = {}
    given = 0
    get = arguments.get
    for name, kinds, default, check in plan:
        v = get(name, _REQUIRED)
        if v is _REQUIRED:
            if default is _REQUIRED:
                return None
            out[name] = default
            continue
        t = type(v)
        if t not in kinds or (t is float and not math.isfinite(v)) or (t is str and len(v) > MAX_ARGUMENT_CHARS):
            return None
        if t is dict:
            # as pydantic's dict[str, Any]: string keys, a new dict (the call's own stays as logged)
            if _dict_chars(v) > MAX_ARGUMENT_CHARS:
                return None
            v = dict(v)
        if check is not None and not check(v):
            return None
        out[name] = v
        given += 1
    return out if given == len(arguments) else None


_COMPILED_PLANS: dict[Any, Any] = {}
_LAZY_CHECK: Any = object()  # a tool's argument check not compiled yet


def _compiled_plan(plan: tuple[tuple[str, tuple[type, ...], Any, Any], ...] | None) -> Callable[[dict[str, Any]], dict[str, Any] | None] | None:
    """``_compile_plan(plan)``, compiled once per distinct plan in a process: tools declared again for
    each task (a workspace's skills) reuse it instead of compiling at every reset."""
    try:
        fast = _COMPILED_PLANS.get(plan)
    except TypeError:  # a default that cannot be hashed: compiled for this tool alone
        return _compile_plan(plan)
    if fast is None and plan is not None:
        fast = _COMPILED_PLANS[plan] = _compile_plan(plan)
    return fast


def _compile_plan(plan: tuple[tuple[str, tuple[type, ...], Any, Any], ...] | None) -> Callable[[dict[str, Any]], dict[str, Any] | None] | None:
    """``lambda arguments: _fast_args(plan, arguments)`` as one function made for ``plan`` (once per
    tool, when it is declared): the same result for every input, with each field's look-up, type
    test and bound written out (no loop over the plan, no per-field tuple unpacking; a step runs it
    once, a capability call twice). None when ``plan`` is None."""
    if plan is None:
        return None
    env: dict[str, Any] = {"_REQUIRED": _REQUIRED, "_isfinite": math.isfinite, "_dict_chars": _dict_chars,
                           "_MAX": MAX_ARGUMENT_CHARS, "_dict": dict, "_len": len, "_type": type}
    lines = ["def fast(arguments):", "    get = arguments.get", "    given = 0"]
    out = []
    for i, (name, kinds, default, check) in enumerate(plan):
        v, n = f"v{i}", repr(name)
        env[f"_d{i}"], env[f"_c{i}"] = default, check
        for j, k in enumerate(kinds):
            env[f"_k{i}_{j}"] = k
        lines.append(f"    {v} = get({n}, _REQUIRED)")
        lines.append(f"    if {v} is _REQUIRED:")
        lines.append("        return None" if default is _REQUIRED else f"        {v} = _d{i}")
        lines.append("    else:")
        lines.append(f"        t = _type({v})")
        lines.append("        if " + " and ".join(f"t is not _k{i}_{j}" for j in range(len(kinds))) + ":")
        lines.append("            return None")
        if float in kinds:
            lines.append(f"        if t is float and not _isfinite({v}):")
            lines.append("            return None")
        if str in kinds:
            lines.append(f"        if t is str and _len({v}) > _MAX:")
            lines.append("            return None")
        if dict in kinds:
            lines.append("        if t is dict:")
            lines.append(f"            if _dict_chars({v}) > _MAX:")
            lines.append("                return None")
            lines.append(f"            {v} = _dict({v})")
        if check is not None:
            lines.append(f"        if not _c{i}({v}):")
            lines.append("            return None")
        lines.append("        given += 1")
        out.append(f"{n}: {v}")
    lines.append("    if given != _len(arguments):")
    lines.append("        return None")
    lines.append("    return {" + ", ".join(out) + "}")
    exec(compile("\n".join(lines), f"<argument check of {len(plan)} fields>", "exec"), env)  # noqa: S102
    return env["fast"]


def _dict_chars(value: dict[Any, Any]) -> int:
    """``_chars(value, MAX_ARGUMENT_CHARS)`` of a dict with string keys, or more than the limit
    when a key is not a string (``_fast_args`` then leaves the call to pydantic). A flat dict of
    strings and scalars (a capability's arguments) is counted in one pass, without the walk."""
    n = len(value)
    for k, v in value.items():
        if type(k) is not str:
            return MAX_ARGUMENT_CHARS + 1
        t = type(v)
        if t is str:
            n += len(k) + len(v)
        elif t in _SCALARS:
            n += len(k) + 1
        else:
            # nested: the bounded walk, once every key is known to be a string
            return _chars(value, MAX_ARGUMENT_CHARS) if all(type(k) is str for k in value) else MAX_ARGUMENT_CHARS + 1
    return n


def validate_arguments(model: type[BaseModel], plan: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """``model.model_validate(arguments).__dict__`` (raising its ``ValidationError``), taking plain
    arguments of the right types as they are when ``plan`` (``_plan(model)``) allows: the parsed
    call is not validated again field by field."""
    args = _fast_args(plan, arguments) if plan is not None else None
    return args if args is not None else model.model_validate(arguments).__dict__


def validate_with(model: type[BaseModel], fast: Callable[[dict[str, Any]], dict[str, Any] | None] | None,
                  arguments: dict[str, Any]) -> dict[str, Any]:
    """``validate_arguments`` with the plan's compiled check (``_compile_plan``) instead of the plan."""
    args = fast(arguments) if fast is not None else None
    return args if args is not None else model.model_validate(arguments).__dict__


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's JSON schema, trimmed to what function-calling APIs expect."""
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        if "anyOf" in prop:
            non_null = [s for s in prop["anyOf"] if s.get("type") != "null"]
            if len(non_null) == 1:
                default = prop.get("default")
                desc = prop.get("description")
                prop.clear()
                prop.update(non_null[0])
                if desc:
                    prop["description"] = desc
                if default is not None:
                    prop["default"] = default
    schema["additionalProperties"] = False
    return schema


def tool(
    kind: ToolKind = "read",
    pre: Sequence[Precondition] = (),
    post: Sequence[Postcondition] = (),
    aliases: Sequence[str] = (),
    name: str | None = None,
    check: Callable[[World, History, dict[str, Any]], str | None] | None = None,
) -> Callable[[Callable[..., Any]], ToolSpec]:
    """Declare a tool. The first parameter receives the world; the rest become the schema.

    ``check``, when given, is every rule of ``pre`` in one function (see ``ToolSpec.check``): a call
    runs it instead of the rules one by one; it must refuse exactly what they refuse, with the
    first failing rule's message (tests compare the two)."""

    def wrap(fn: Callable[..., Any]) -> ToolSpec:
        summary, arg_docs = _arg_docs(fn.__doc__ or "")
        hints = typing.get_type_hints(fn, include_extras=True)
        params = list(inspect.signature(fn).parameters.values())[1:]
        fields: dict[str, Any] = {}
        for p in params:
            ann = hints.get(p.name, Any)
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (ann, FieldInfo(default=default, description=arg_docs.get(p.name)))
        model = create_model(
            f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid", allow_inf_nan=False), **fields
        )
        parameters = _clean_schema(model.model_json_schema())
        return ToolSpec(
            name=name or fn.__name__,
            fn=fn,
            kind=kind,
            summary=summary,
            args_model=model,
            parameters=parameters,
            pre=tuple(pre),
            post=tuple(post),
            aliases=tuple(aliases),
            check=check,
        )

    return wrap


class ToolResult(NamedTuple):
    """The outcome of one tool call, with the text the agent reads: ``executed``, ``rejected`` (an
    unknown tool, bad arguments, a failed pre-condition or the tool's refusal) or ``error`` (a
    defect, or a failed post-condition); a call not executed leaves the world unchanged."""

    name: str
    outcome: Literal["executed", "rejected", "error"]
    content: str

    @property
    def ok(self) -> bool:
        return self.outcome == "executed"


def to_jsonable(value: Any) -> Any:
    if isinstance(value, Entity):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def _entity_json(value: Any) -> Any:
    if isinstance(value, Entity):
        # the row's own fields when they are plain JSON (the encoder only reads them), else its dump
        fields = value.json_fields()
        return fields if fields is not None else value.model_dump(mode="json")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_new_tuple = tuple.__new__  # a named tuple without its Python-level __new__

_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_entity_json)
# the C encoder ``_ENCODER.encode`` makes on every call, made once: no circular-reference markers (a
# tool result is a tree, built fresh or from immutable rows), the same separators, float text and
# entity callback, so the same text without the Python frames of ``encode``/``iterencode``
_encode_chunks = (c_make_encoder(None, _entity_json, encode_basestring, None, ": ", ", ", False, False, True)
                  if c_make_encoder is not None else None)
_join = "".join


class RawJson(str):
    """Text that already is the JSON of a tool result (built from cached row JSON); ``dumps``
    returns it as it is."""


def dumps(value: Any) -> str:
    """``json.dumps(to_jsonable(value), ensure_ascii=False)``, letting the C encoder walk plain
    containers itself: it calls back only for entities, instead of a Python pass over every value."""
    t = type(value)
    if t is RawJson:
        return value
    if t is str or _encode_chunks is None:
        return _ENCODER.encode(value)
    return _join(_encode_chunks(value, 0))


def json_object_with(obj_json: str, **fields: Any) -> RawJson:
    """The JSON object ``obj_json`` with ``fields`` appended, as ``dumps`` of the merged dict would
    print it (the same separators), without decoding and re-encoding the object."""
    extra = ", ".join(f"{_ENCODER.encode(k)}: {dumps(v)}" for k, v in fields.items())
    if obj_json == "{}":
        return RawJson("{" + extra + "}")
    return RawJson(f"{obj_json[:-1]}, {extra}}}" if extra else obj_json)


def json_array(items: list[str]) -> RawJson:
    return RawJson("[" + ", ".join(items) + "]")


def _validation_message(err: ValidationError) -> str:
    parts = []
    errors = err.errors(include_url=False, include_input=False, include_context=False)
    for e in errors[:MAX_LISTED_ERRORS]:
        loc = ".".join(str(x) for x in e["loc"]) or "arguments"
        msg = "unknown argument" if e["type"] == "extra_forbidden" else e["msg"]
        parts.append(f"{loc}: {msg}")
    if len(errors) > MAX_LISTED_ERRORS:
        parts.append(f"and {len(errors) - MAX_LISTED_ERRORS} more invalid items")
    return "; ".join(parts)


_SCALARS = frozenset((int, float, bool, type(None)))


def _chars(value: Any, budget: int) -> int:
    """Characters of the strings (and keys) in ``value``, counted until ``budget`` is exceeded:
    the work is bounded by the budget, not by the value's size."""
    total, stack = 0, [value]
    while stack and total <= budget:
        v = stack.pop()
        if isinstance(v, str):
            total += len(v)
        elif isinstance(v, dict):
            total += len(v)
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            total += len(v)
            stack.extend(v)
        else:
            total += 1
    return total


def cap_error(message: str) -> str:
    """An error message shown to the agent, cut to ``MAX_ERROR_CHARS`` with a note of the rest."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    return f"{message[:MAX_ERROR_CHARS]}... ({len(message) - MAX_ERROR_CHARS} more characters)"


class Toolkit:
    """The tools one agent sees, by name (aliases resolve to their tool)."""

    def __init__(self, specs: Iterable[ToolSpec], check_postconditions: bool = False) -> None:
        self.specs: dict[str, ToolSpec] = {}
        self.aliases: dict[str, str] = {}
        for spec in specs:
            if spec.name in self.specs:
                raise ValueError(f"duplicate tool {spec.name}")
            self.specs[spec.name] = spec
            for alias in spec.aliases:
                self.aliases[alias] = spec.name
        self.check_postconditions = check_postconditions
        self._schemas = [s.schema for s in self.specs.values()]

    def __len__(self) -> int:
        return len(self.specs)

    def __contains__(self, name: object) -> bool:
        return name in self.specs or name in self.aliases

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def schemas(self) -> list[dict[str, Any]]:
        return self._schemas

    def resolve(self, name: str) -> ToolSpec | None:
        return self.specs.get(self.aliases.get(name, name))

    def call(
        self,
        world: World,
        history: History,
        name: str,
        arguments: Any,
        step: int = 0,
        call_id: str = "",
    ) -> ToolResult:
        """Run one call and record it in ``history``; never raises for bad input."""
        spec = self.specs.get(self.aliases.get(name, name)) if isinstance(name, str) else None
        if spec is None or not isinstance(arguments, dict):
            log_args = arguments if isinstance(arguments, dict) else {"_raw": arguments}
            if spec is None:
                close = ", ".join(self.names[:60])
                msg = f"unknown tool {name!r}. Available tools: {close}"
                return self._record(history, step, call_id, str(name), log_args, "rejected", msg, world)
            msg = f"arguments of {spec.name} must be a JSON object. Usage: {spec.usage}"
            return self._record(history, step, call_id, spec.name, log_args, "rejected", msg, world)
        fast = spec.fast_args
        if fast is _LAZY_CHECK:
            fast = spec.argument_check()
        # plain arguments of the right types are taken as they are (the parsed dict is kept: no
        # re-validation); anything else is size-checked, then validated by pydantic
        args = fast(arguments) if fast is not None else None
        if args is None:
            for key, value in arguments.items():
                if (type(value) is str and len(value) <= MAX_ARGUMENT_CHARS) or type(value) in _SCALARS:
                    continue  # the common cases, without the walk
                if _chars(value, MAX_ARGUMENT_CHARS) > MAX_ARGUMENT_CHARS:
                    msg = (f"argument {str(key)[:100]!r} of {spec.name} is over {MAX_ARGUMENT_CHARS} characters; "
                           f"send smaller arguments. Usage: {spec.usage}")
                    return self._record(history, step, call_id, spec.name, {"_oversized": str(key)[:100]}, "rejected",
                                        msg, world)
            try:
                args = spec.args_model.model_validate(arguments).__dict__
            except ValidationError as err:
                msg = f"invalid arguments for {spec.name}: {_validation_message(err)}. Usage: {spec.usage}"
                return self._record(history, step, call_id, spec.name, arguments, "rejected", msg, world)
        check = spec.check
        if check is not None:  # the rules in one function, each record looked up once
            problem = check(world, history, args)
            if problem:
                msg = f"{spec.name} refused: {problem}."
                return self._record(history, step, call_id, spec.name, arguments, "rejected", msg, world)
        else:
            for p in spec.pre:
                problem = p.check(world, history, args)
                if problem:
                    msg = f"{spec.name} refused: {problem}."
                    return self._record(history, step, call_id, spec.name, arguments, "rejected", msg, world)
        txn = world.begin() if spec.kind == "write" else None
        before = world.copy() if (self.check_postconditions and spec.post) else None
        try:
            value = spec.fn(world, **args)
            # ``dumps`` inlined for the common results (a dict, a list, a row, text already JSON)
            t = type(value)
            if t is RawJson:
                content = value
            elif t is str:
                content = encode_basestring(value)  # what ``_ENCODER.encode`` gives for a string
            elif _encode_chunks is not None and isinstance(value, Entity):
                # a row: its class's own text when it writes one (``Entity.json_text``), else what the
                # encoder's callback (``_entity_json``) gives for it, encoded without the callback
                write = value.json_text
                content = write() if write is not None else None
                if content is None:
                    fields = value.json_fields()
                    content = _join(_encode_chunks(fields if fields is not None else value.model_dump(mode="json"), 0))
            elif _encode_chunks is None:
                content = _ENCODER.encode(value)
            else:
                content = _join(_encode_chunks(value, 0))
        except ToolError as err:
            if txn is not None:
                world.rollback(txn)
            msg = f"{spec.name} refused: {err}"
            return self._record(history, step, call_id, spec.name, arguments, "rejected", msg, world)
        except Exception as err:  # a defect or an unforeseen input: undo and report, never raise
            if txn is not None:
                world.rollback(txn)
            msg = f"{spec.name} failed: {type(err).__name__}: {err}"
            return self._record(history, step, call_id, spec.name, arguments, "error", msg, world)
        if before is not None:
            for p in spec.post:
                try:
                    problem = p.check(world, args, value, before)
                except Exception as err:  # a broken post-condition is a defect, reported like one
                    problem = f"{type(err).__name__}: {err}"
                if problem:
                    if txn is not None:
                        world.rollback(txn)
                    msg = f"{spec.name} failed its post-condition ({p.text}): {problem}"
                    return self._record(history, step, call_id, spec.name, arguments, "error", msg, world)
        if txn is not None:
            world.commit(txn)
        name = spec.name
        clock = world.clock
        # ``clock.text()``: its text, formatted once per clock move (read without the call when it is)
        history.add_call(step, clock._text or clock.text(), name, arguments, "executed", content, call_id)
        return _new_tuple(ToolResult, (name, "executed", content))

    @staticmethod
    def _record(history, step, call_id, name, arguments, outcome, content, world) -> ToolResult:
        if outcome != "executed":
            content = cap_error(content)
        history.add_call(step, world.clock.text(), name, arguments, outcome, content, call_id)
        return ToolResult(name, outcome, content)


@dataclass(frozen=True)
class ToolGraph:
    """Dependency graph of tools: an edge (a, b) means "a must (or may need to) precede b"."""

    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]

    @property
    def density(self) -> float:
        n = len(self.nodes)
        return len(self.edges) / (n * (n - 1)) if n > 1 else 0.0

    def summary(self) -> dict[str, float]:
        return {"V": len(self.nodes), "E": len(self.edges), "density": self.density}


def dependency_graph(toolkit: Toolkit) -> ToolGraph:
    """The tool dependency graph derived from the pre-conditions: an edge A -> B when B requires
    an earlier call of A."""
    nodes = tuple(toolkit.names)
    edges: set[tuple[str, str]] = set()
    for spec in toolkit.specs.values():
        for p in spec.pre:
            for a in p.after:
                target = toolkit.resolve(a)
                if target is not None and target.name != spec.name:
                    edges.add((target.name, spec.name))
    return ToolGraph(nodes, tuple(sorted(edges)))
