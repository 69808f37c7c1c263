"""Building a life-service world (delivery, in-store, travel, cross-scenario) from a task's world spec.

A world spec is a dict with ``time``, ``user_id``, ``task_key``, ``language``, ``user_profile``,
``user_historical_behaviors`` (a VitaBench task's also ``vitabench_release``) and one list of rows
per table of the domain's world class (table name = key, e.g. ``stores``, ``products``,
``orders``, ``locations``, ``weather``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from operator import attrgetter
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from servicegym.world_state.core import Entity, parse_time
from servicegym.world_state.life.entities import LifeWorld, Location

SCALAR_KEYS = (
    "time", "user_id", "task_key", "language", "user_profile", "user_historical_behaviors",
    # a VitaBench task file's world: the release whose tool behaviour it follows (see
    # ``world_state.life.tools.vitabench_release``); absent in generated tasks
    "vitabench_release",
)
RELEASES = ("2025-11", "2026")  # the values of ``vitabench_release``


class WorldSpecError(ValueError):
    """A world spec that does not validate; the message names the field."""


@cache
def _table_adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(list[model])


def _rows(model: Any, spec: dict[str, Any], section: str) -> list[Any]:
    items = spec.get(section, [])
    if not isinstance(items, list):
        raise WorldSpecError(f"field world.{section}: must be a list")
    try:
        # the whole table in one call: the same entities as row by row, at about half the cost
        return _table_adapter(model).validate_python(items)
    except ValidationError:
        pass  # find the first bad row, row by row, to name it
    rows = []
    for i, raw in enumerate(items):
        try:
            rows.append(model.model_validate(raw))
        except ValidationError as err:
            e = err.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in e["loc"])
            raise WorldSpecError(f"field world.{section}.{i}{'.' + loc if loc else ''}: {e['msg']}") from None
    return rows


_new_object = object.__new__
_set_attr = object.__setattr__


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
def _plain_fields(model: Any) -> tuple[str, ...] | None:
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


def vouched_rows(model: Any, items: Any) -> list[Any] | None:
    """The entities of a vouched table of a plain model (``_plain_fields``: a catalogue's dated
    products), made without validation: each row's values (a copy of its dict) as the entity's
    fields, which is what validation makes of a row its generator vouched for (every field, in
    order, of its type: tests/test_reset_new_task_lazy.py holds each generator to it). None
    for a model that is not plain or rows that are visibly not such (not dicts, another number of
    fields, the first row's keys in another order): the table is then validated."""
    names = _plain_fields(model)
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
        new = _new_object(model)
        _set_attr(new, "__dict__", row.copy())  # the spec's own row stays the task's
        _set_attr(new, "__pydantic_fields_set__", fields_set)
        _set_attr(new, "__pydantic_extra__", None)
        _set_attr(new, "__pydantic_private__", None)
        append(new)
    return out


def _parse_now(text: str) -> datetime:
    """``parse_time(text)``, read directly when ``text`` is ``YYYY-MM-DD HH:MM:SS`` to the letter
    (a new task's time misses ``parse_time``'s cache, and ``strptime`` costs microseconds)."""
    if (len(text) == 19 and text[4] == "-" and text[7] == "-" and text[10] == " " and text[13] == ":"
            and text[16] == ":"):
        digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:]
        if digits.isascii() and digits.isdigit():
            return datetime(int(text[:4]), int(text[5:7]), int(text[8:10]), int(text[11:13]), int(text[14:16]),
                            int(text[17:]))  # ValueError for a date or time that does not exist, as strptime
    return parse_time(text)


@cache
def _key_of(model: Any) -> Callable[[Any], str]:
    """``row.key`` of ``model``'s rows: its key field read directly unless the model computes its key."""
    return attrgetter(model.key_field) if model.key is Entity.key else attrgetter("key")


def build_life_world(world_cls: type[LifeWorld], spec: dict[str, Any], *, vouched: bool = False) -> LifeWorld:
    """Validate a world spec and build the initial world of ``world_cls``.

    The address book holds the spec's ``locations`` and every place's and past order's address,
    for this task only (VitaBench's public code kept one process-wide registry).

    ``vouched``: the spec is a generator's own, whose rows hold every field in order with the
    entity's types (``Task.vouched_world``): the tables of plain models (every field a scalar:
    the catalogues' dated products, most of a world's rows) are built without validating them
    again; the others are validated as always.
    """
    for key in ("time", "user_id"):
        if not isinstance(spec.get(key), str):
            raise WorldSpecError(f"field world.{key}: required string")
    try:
        now = _parse_now(spec["time"])
    except ValueError:
        raise WorldSpecError(f"field world.time: {spec['time']!r} is not YYYY-MM-DD HH:MM:SS") from None
    release = spec.get("vitabench_release")
    if release is not None and release not in RELEASES:
        raise WorldSpecError(f"field world.vitabench_release: {release!r} is not one of {', '.join(RELEASES)}")
    unknown = set(spec) - set(SCALAR_KEYS) - set(world_cls.schema)
    if unknown:
        raise WorldSpecError(f"field world.{sorted(unknown)[0]}: not a table of {world_cls.__name__}")
    tables: dict[str, dict[str, Any]] = {}
    for name, model in world_cls.schema.items():
        entities = vouched_rows(model, spec.get(name, [])) if vouched else None
        if entities is None:
            entities = _rows(model, spec, name)
        rows: dict[str, Any] = dict(zip(map(_key_of(model), entities), entities))
        if len(rows) < len(entities):  # duplicate keys: the first of them wins
            rows = {}
            for r in entities:
                rows.setdefault(r.key, r)
        tables[name] = rows
    extra = {
        "user_id": spec["user_id"],
        "task_key": spec.get("task_key", "T"),
        "language": spec.get("language", "en"),
        "user_profile": spec.get("user_profile", {}),
        "user_historical_behaviors": spec.get("user_historical_behaviors", {}),
    }
    if release is not None:
        extra["vitabench_release"] = release
    if world_cls.locations_of is LifeWorld.locations_of:
        # the address book, made before the world: each model's location fields read directly
        book = tables["locations"]
        for name in (*world_cls.place_tables, "orders"):
            fields = _location_fields(world_cls.schema[name])
            if fields is None:
                for row in tables[name].values():
                    for loc in LifeWorld.locations_of(None, row):  # type: ignore[arg-type]
                        book.setdefault(loc.address, loc)
                continue
            for row in tables[name].values():
                for loc in map(row.__dict__.get, fields):
                    if loc is not None and loc.address not in book:
                        book[loc.address] = loc
        return _prepared(world_cls(now, tables, extra=extra))
    world = world_cls(now, tables, extra=extra)
    book_table = world.table("locations")
    for name in (*world_cls.place_tables, "orders"):
        for row in world.table(name):
            for loc in world.locations_of(row):
                if loc.address not in book_table:
                    book_table.put(loc)
    return _prepared(world)


def _prepared(world: LifeWorld) -> LifeWorld:
    world.prepare()
    return world


@cache
def _location_fields(model: Any) -> tuple[str, ...] | None:
    """The fields of ``model`` that hold a ``Location`` (or None), in order: where
    ``LifeWorld.locations_of`` finds a row's addresses. None when a field could hold one among
    other kinds of value (then rows are searched as ``locations_of`` does)."""
    out = []
    for name, f in model.model_fields.items():
        ann = f.annotation
        if ann is Location or ann == (Location | None):
            out.append(name)
        elif _may_hold_location(ann):
            return None
    return tuple(out)


def _may_hold_location(annotation: Any) -> bool:
    if annotation is Location or annotation is Any:
        return True
    if isinstance(annotation, type):
        return issubclass(Location, annotation)
    args = getattr(annotation, "__args__", None)
    if getattr(annotation, "__origin__", None) in (list, tuple, dict):
        return False  # a Location inside a container is not one of the row's own values
    return bool(args) and any(_may_hold_location(a) for a in args if not isinstance(a, (str, int, float, bool)))
