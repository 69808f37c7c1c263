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
from typing import Any

from pydantic import TypeAdapter, ValidationError

from servicegym.world_state.core import Entity, parse_time
from servicegym.world_state.life.entities import LifeWorld, Location
from servicegym.world_state.vouched import vouched_rows

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
