"""Rows a task generator vouches for, made into entities without validating them again.

A generator that builds a world's rows itself (every field of the model, in order, each of its
type) marks its task ``vouch_world``; an env then builds those tables here instead of through
pydantic validation, with the same entities as a result (tests/test_reset_new_task_lazy.py,
tests/test_reset_travel_payments_fast.py and tests/test_workspace_reset_fast.py hold each generator
to it). Three forms:

- ``vouched_rows``: a whole table of a scalar model (a catalogue's dated products), or None for the
  caller to validate it;
- ``lazy_vouched_rows``: the same, made on the table's first read (``core.LazyRows``);
- ``vouched_entities``: row by row, for models with list, dict or defaulted fields (Workspace's
  persona records); a row it cannot vouch for is validated.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any, Literal

from servicegym.world_state.core import Entity, LazyRows, unvalidated


def _key_getter(model: Any) -> Callable[[Any], str]:
    """``row.key`` of ``model``'s rows: its key field read directly unless the model computes its key."""
    return attrgetter(model.key_field) if model.key is Entity.key else attrgetter("key")


def keyed_rows(model: Any, entities: list[Any]) -> dict[str, Any]:
    """``{row.key: row}`` of ``entities`` in order; of rows with the same key the first wins, in
    its place (what ``setdefault`` row by row gives)."""
    rows = dict(zip(map(_key_getter(model), entities), entities))
    if len(rows) < len(entities):  # duplicate keys: the first of them wins
        rows = {}
        for r in entities:
            rows.setdefault(r.key, r)
    return rows


def lazy_vouched_rows(model: Any, items: Any, validate: Callable[[Any, Any], list[Any]]) -> LazyRows | None:
    """The rows of a vouched table (``vouched_rows``) as ``LazyRows``: made on first read, each row
    as ``vouched_rows`` makes it (``validate(model, items)`` when a row turns out visibly not the
    entity's: the generator broke its word). None when the table is visibly not vouchable now (a
    model with other than scalar fields, the first row's fields in another order): the caller
    then builds it at once, as ever. The rows are read when made: a vouched spec is not edited."""
    names = _scalar_fields(model)
    if names is None or type(items) is not list or not items:
        return None
    if type(items[0]) is not dict or tuple(items[0]) != names:
        return None

    def build() -> dict[str, Any]:
        entities = vouched_rows(model, items)
        return keyed_rows(model, entities if entities is not None else validate(model, items))

    return LazyRows(build)


def _scalar_types(annotation: Any) -> frozenset[Any] | None:
    """The types a scalar field may hold (str, int, float, bool, None, a union or ``Literal`` of
    them), or None when the field is not a scalar."""
    if annotation in (str, int, float, bool, type(None)):
        return frozenset((annotation,))
    if getattr(annotation, "__origin__", None) is Literal:
        values = annotation.__args__
        return frozenset(type(v) for v in values) if all(type(v) in (str, int, bool) for v in values) else None
    args = getattr(annotation, "__args__", None)
    if args is None or getattr(annotation, "__origin__", None) is list:
        return None
    out: set[Any] = set()
    for a in args:  # ``X | None`` or ``Union[...]`` of scalars
        types = _scalar_types(a)
        if types is None:
            return None
        out |= types
    return frozenset(out)


@cache
def _scalar_fields(model: Any) -> tuple[str, ...] | None:
    """The field names of ``model``, in order, when every field is a scalar (``_scalar_types``)
    and the model has no validators, aliases or private attributes: then validation keeps a row
    that holds each field, in order, with a value of its type, as it is. None otherwise."""
    deco = model.__pydantic_decorators__
    if (deco.field_validators or deco.model_validators or deco.validators or deco.root_validators
            or model.__private_attributes__ or model.model_config.get("extra") != "forbid"):
        return None
    for f in model.model_fields.values():
        if f.alias is not None or f.validation_alias is not None or f.metadata or _scalar_types(f.annotation) is None:
            return None
    return tuple(model.model_fields)


def made_vouched_rows(model: Any, make: Callable[[], list[Any]], validate: Callable[[Any, Any], list[Any]]) -> LazyRows:
    """The rows of a vouched table whose row dicts ``make()`` makes (fresh dicts, no one else's:
    a generator's deferred table, ``Task.defer_world``) as ``LazyRows``: each made as
    ``vouched_rows`` makes it, taking the dicts made for it as they are (no copy), or
    ``validate(model, items)`` when they are visibly not the entity's."""

    def build() -> dict[str, Any]:
        items = make()
        entities = vouched_rows(model, items, copy=False)
        return keyed_rows(model, entities if entities is not None else validate(model, items))

    return LazyRows(build)


def vouched_rows(model: Any, items: Any, *, copy: bool = True) -> list[Any] | None:
    """The entities of a vouched table of a scalar model (``_scalar_fields``: a catalogue's dated
    products), made without validation (``unvalidated``): each row's values (a copy of its dict) as
    the entity's fields, which is what validation makes of a row its generator vouched for (every
    field, in order, of its type: tests/test_reset_new_task_lazy.py holds each generator to it).
    None for a model that is not scalar or rows that are visibly not such (not dicts, another
    number of fields, the first row's keys in another order): the table is then validated."""
    names = _scalar_fields(model)
    if names is None or type(items) is not list:
        return None
    n = len(names)
    if items and (type(items[0]) is not dict or tuple(items[0]) != names):
        return None
    fields_set = set(names)  # one per table: pydantic copies it before any change (``model_copy``)
    out = []
    append = out.append
    for row in items:
        if type(row) is not dict or len(row) != n:
            return None
        # the spec's own row stays the task's (``copy``); dicts made for the table alone are taken
        append(unvalidated(model, row.copy() if copy else row, fields_set))
    return out


# ----- rows a generator vouches for, row by row (``vouched_rows`` is the whole-table fast path of scalar models) ---
# how a field's value becomes the entity's (what validation makes of a value of the field's type)
_AS_IS, _FLOAT, _LIST, _FLOAT_LIST, _DICT, _FLOAT_DICT = range(6)
_SCALARS = (str, int, bool)


def _scalar_kind(annotation: Any) -> int | None:
    """``_AS_IS`` for str, int, bool, a ``Literal`` of them or a union of such with float (a value of
    the union's exact type is kept), ``_FLOAT`` for float or ``float | None`` (an int becomes a
    float), None for anything else."""
    if annotation in _SCALARS:
        return _AS_IS
    if annotation is float:
        return _FLOAT
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return _AS_IS if all(type(a) in _SCALARS for a in args) else None
    if origin in (typing.Union, types.UnionType):
        if set(args) == {float, type(None)}:
            return _FLOAT
        # smart-mode unions keep a value whose type is one of the members as it is
        return _AS_IS if float in args and all(a in (*_SCALARS, float) for a in args) else None
    return None


def _field_kind(annotation: Any) -> int | None:
    kind = _scalar_kind(annotation)
    if kind is not None:
        return kind
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(args) == 1:
        inner = _scalar_kind(args[0])
        return None if inner is None else (_FLOAT_LIST if inner == _FLOAT else _LIST)
    if origin is dict and len(args) == 2 and args[0] is str:
        inner = _scalar_kind(args[1])
        return None if inner is None else (_FLOAT_DICT if inner == _FLOAT else _DICT)
    return None


_ROW_PLANS: dict[type, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}


def _row_plan(model: type[Entity]) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The field names of ``model`` in order and how each value is taken (``_field_kind``), or
    None when rows of ``model`` must be validated (a nested model, a validator, an alias...)."""
    if model in _ROW_PLANS:
        return _ROW_PLANS[model]
    plan: tuple[tuple[str, ...], tuple[int, ...]] | None = None
    deco = model.__pydantic_decorators__
    if not (deco.field_validators or deco.model_validators or deco.validators or deco.root_validators
            or model.__private_attributes__ or model.model_config.get("extra") != "forbid"
            or getattr(model, "__pydantic_post_init__", None) is not None):
        kinds = []
        for f in model.model_fields.values():
            kind = None if (f.alias is not None or f.validation_alias is not None or f.metadata) else _field_kind(f.annotation)
            if kind is None:
                break
            kinds.append(kind)
        else:
            plan = (tuple(model.model_fields), tuple(kinds))
    _ROW_PLANS[model] = plan
    return plan


def _floats(value: Any) -> Any:
    return float(value) if type(value) is int else value


def vouched_entities(model: type[Entity], rows: list[dict[str, Any]]) -> list[Entity]:
    """The entities of ``rows``, rows a generator built itself (every field of ``model``, in
    order, each value of its field's type: ``tests/test_workspace_reset_fast.py`` holds the
    workspace generator and the persona modules to it), made without validation: what
    ``model.model_validate(row)`` makes of each (the same values, an int in a float field a
    float, lists and dicts copied, every field set). A model whose rows need validation (nested
    models, validators) and a row with other keys than the model's fields are validated. The row by
    row form of ``vouched_rows`` (which takes a scalar model's whole table, or leaves it to validation)."""
    plan = _row_plan(model)
    if plan is None:
        return [model.model_validate(r) for r in rows]
    names, kinds = plan
    # the fields validation changes (a float field's int, a list or dict it copies): the rest stay as they are
    special = [(name, kind) for name, kind in zip(names, kinds) if kind != _AS_IS]
    fields_set = set(names)  # one per call, as ``vouched_rows``: pydantic copies it before any change
    partial: dict[tuple[str, ...], tuple[dict[str, Any], set[str]] | None] = {}  # rows that leave out defaults
    out: list[Entity] = []
    for row in rows:
        if type(row) is not dict:
            out.append(model.model_validate(row))
            continue
        keys = tuple(row)
        if keys == names:
            fields, row_set = row.copy(), fields_set
        else:
            if keys not in partial:
                partial[keys] = _defaults(model, names, keys)
            hit = partial[keys]
            if hit is None:  # another field, a field out of order or a required one left out
                out.append(model.model_validate(row))
                continue
            defaults, row_set = hit
            fields = {name: row[name] if name in row else _fresh_default(defaults[name]) for name in names}
        for name, kind in special:
            value = fields[name]
            if kind == _FLOAT:
                if type(value) is int:
                    fields[name] = float(value)
            elif kind == _LIST:
                fields[name] = list(value)
            elif kind == _FLOAT_LIST:
                fields[name] = [_floats(v) for v in value]
            elif kind == _DICT:
                fields[name] = dict(value)
            else:
                fields[name] = {k: _floats(v) for k, v in value.items()}
        out.append(unvalidated(model, fields, row_set))
    return out


def _defaults(model: type[Entity], names: tuple[str, ...], keys: tuple[str, ...]) -> tuple[dict[str, Any], set[str]] | None:
    """For a row with ``keys``: the defaults of the fields it leaves out and its fields set, when its
    keys are fields in the model's order and every field left out has a plain default; else None."""
    pos = [names.index(k) if k in names else -1 for k in keys]
    if -1 in pos or pos != sorted(pos):
        return None
    defaults: dict[str, Any] = {}
    for name in names:
        if name in keys:
            continue
        f = model.model_fields[name]
        if f.is_required() or f.default_factory is not None or type(f.default) not in (*_SCALARS, float, type(None), list, dict):
            return None
        defaults[name] = f.default
    return defaults, set(keys)


def _fresh_default(value: Any) -> Any:
    """A field's default as validation gives it (a list or dict default copied)."""
    return copy.deepcopy(value) if type(value) in (list, dict) else value
