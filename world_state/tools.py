"""Typed tools: ``@tool`` turns an annotated function into an OpenAI function schema, with
pre-conditions checked before it runs and post-conditions after, and a dependency graph derived
from those pre-conditions.

A tool is ``fn(world, **arguments) -> JSON-able``. Arguments are validated by a pydantic model
derived from the signature (unknown arguments rejected). A call that fails validation or a
pre-condition, or raises ``ToolError``, is *rejected*; any other exception is an *error*; in both
cases the world is restored to its state before the call.

Layout: this module holds the rules (``Precondition``, ``Postcondition`` and their makers), the
``tool`` decorator and ``ToolSpec``, ``Toolkit`` with its ``call``, and the dependency graph;
``tool_args.py`` holds the limits on one call and the argument checks (``_plan``, ``_fast_args``
and its compiled form ``_compile_plan``, ``validate_arguments``), and ``tool_json.py`` the JSON
encoding of tool results (``dumps``, ``RawJson``, ``json_object_with``). This module re-exports
both (``__all__``): every name keeps its import from here.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from servicegym.world_state.core import Entity, History, World, parse_time
from servicegym.world_state.tool_args import (
    _LAZY_CHECK,
    _SCALARS,
    MAX_ARGUMENT_CHARS,
    MAX_ERROR_CHARS,
    MAX_LISTED_ERRORS,
    MAX_QUERY_CHARS,
    Query,
    _chars,
    _compile_plan,
    _compiled_plan,
    _fast_args,
    _plan,
    validate_arguments,
    validate_with,
)
from servicegym.world_state.tool_json import (
    _ENCODER,
    RawJson,
    _encode_chunks,
    _join,
    dumps,
    json_array,
    json_object_with,
    to_jsonable,
)

__all__ = [
    "ToolKind", "ToolError", "Precondition", "Postcondition", "requires_prior_call", "no_record", "exists",
    "field_problem", "field_in", "time_not_past", "rule", "ToolSpec", "tool", "ToolResult", "cap_error", "Toolkit",
    "ToolGraph", "dependency_graph",
    # re-exported from tool_args.py (the private names: the tests' and the Payments capabilities') and tool_json.py
    "MAX_ARGUMENT_CHARS", "MAX_QUERY_CHARS", "MAX_ERROR_CHARS", "MAX_LISTED_ERRORS", "Query", "validate_arguments",
    "validate_with", "_plan", "_fast_args", "_compile_plan", "_chars",
    "to_jsonable", "RawJson", "dumps", "json_object_with", "json_array",
]

ToolKind = Literal["read", "write", "generic"]


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


_new_tuple = tuple.__new__  # a named tuple without its Python-level __new__


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
