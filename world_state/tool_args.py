"""The limits on one tool call and the argument checks of ``world_state.tools``, which re-exports
every name here (the private ones its tests and the Payments capabilities import included):
``_plan`` reads a tool's argument model once into ``(field, exact types, default, check)`` rows;
``_fast_args`` takes a call whose arguments already have their fields' exact types and bounds as
it is (nothing for pydantic to coerce), and ``_compile_plan`` writes that check out as one
function per plan (``_compiled_plan`` keeps one per distinct plan in a process), which
``Toolkit.call`` runs at every step; ``_chars`` and ``_dict_chars`` bound the characters of an
argument's value without walking all of it."""

from __future__ import annotations

import math
import operator
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

# Limits on one call, checked before any validation or tool work (see DESIGN's action limits):
MAX_ARGUMENT_CHARS = 256 * 1024  # characters in one argument's value (a workspace file holds 200,000)
MAX_QUERY_CHARS = 1000  # a search query (search tools annotate their query with ``Query``)
MAX_ERROR_CHARS = 2000  # an error message shown to the agent (the first problems, then a count)
MAX_LISTED_ERRORS = 5  # invalid items named in one validation message

Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]
"""A search query argument: longer ones are refused before the search runs (its cost grows with
the query)."""


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
