"""Building a life-service world (delivery, in-store, travel, cross-scenario) from a task's world spec.

A world spec is a dict with ``time``, ``user_id``, ``task_key``, ``language``, ``user_profile``,
``user_historical_behaviors`` (a VitaBench task's also ``vitabench_release``) and one list of rows
per table of the domain's world class (table name = key, e.g. ``stores``, ``products``,
``orders``, ``locations``, ``weather``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache, partial
from operator import attrgetter
from typing import Any

from pydantic import TypeAdapter, ValidationError

from servicegym.world_state.core import Entity, LazyRows, parse_time
from servicegym.world_state.life.entities import LifeWorld, Location
from servicegym.world_state.vouched import lazy_vouched_rows, made_vouched_rows, vouched_rows

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


def _scalars(world_cls: type[LifeWorld], spec: dict[str, Any]) -> tuple[datetime, dict[str, Any]]:
    """The spec's time and the world's ``extra`` (user, task key, language, profile, habits,
    release), validated (``WorldSpecError``), with the check that every other key names a table."""
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
    extra = {
        "user_id": spec["user_id"],
        "task_key": spec.get("task_key", "T"),
        "language": spec.get("language", "en"),
        "user_profile": spec.get("user_profile", {}),
        "user_historical_behaviors": spec.get("user_historical_behaviors", {}),
    }
    if release is not None:
        extra["vitabench_release"] = release
    return now, extra


def _tables(world_cls: type[LifeWorld], spec: dict[str, Any], vouched: bool) -> dict[str, dict[str, Any]]:
    """Every table's row dict (key -> entity; of rows with one key the first wins), validated
    unless ``vouched`` makes a scalar table as its generator built it."""
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
    return tables


def _with_address_book(world_cls: type[LifeWorld], tables: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``tables`` with every place's and past order's address added to ``locations`` (for a world
    class whose ``locations_of`` is ``LifeWorld``'s): each model's location fields read directly."""
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
    return tables


def build_life_world(world_cls: type[LifeWorld], spec: dict[str, Any], *, vouched: bool = False) -> LifeWorld:
    """Validate a world spec and build the initial world of ``world_cls``.

    The address book holds the spec's ``locations`` and every place's and past order's address,
    for this task only (VitaBench's public code kept one process-wide registry).

    ``vouched``: the spec is a generator's own, whose rows hold every field in order with the
    entity's types (``Task.vouched_world``): the tables of plain models (every field a scalar:
    the catalogues' dated products, most of a world's rows) are built without validating them
    again; the others are validated as always. ``build_lazy_life_world`` builds the same world
    with every table made on its first read.
    """
    now, extra = _scalars(world_cls, spec)
    tables = _tables(world_cls, spec, vouched)
    if world_cls.locations_of is LifeWorld.locations_of:
        # the address book, made before the world
        return _prepared(world_cls(now, _with_address_book(world_cls, tables), extra=extra))
    world = world_cls(now, tables, extra=extra)
    book_table = world.table("locations")
    for name in (*world_cls.place_tables, "orders"):
        for row in world.table(name):
            for loc in world.locations_of(row):
                if loc.address not in book_table:
                    book_table.put(loc)
    return _prepared(world)


def _validated(model: Any, items: list[Any]) -> list[Any]:
    """A table validated (``WorldSpecError`` names a bad row): for rows a generator vouched for
    that turn out visibly not the entity's when they are made."""
    return _rows(model, {"rows": items}, "rows")


def _grouped_tables(world_cls: type[LifeWorld], spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The row dicts ``build_life_world(world_cls, spec, vouched=True)`` makes, address book included."""
    return _with_address_book(world_cls, _tables(world_cls, spec, True))


def _one_table(group: LazyRows, name: str) -> dict[str, Any]:
    return group.make()[name]


def build_lazy_life_world(
    world_cls: type[LifeWorld], spec: dict[str, Any], later: dict[str, Callable[[], list[Any]]] | None = None
) -> LifeWorld:
    """``build_life_world(world_cls, spec, vouched=True)`` (a spec its generator vouched for:
    ``Task.vouched_world``) with every table made on its first read (``core.LazyRows``): each table
    of a scalar model but ``locations`` (the catalogues' dated products: most rows of a task) on
    its own, the others (places, orders, weather and the address book they fill: a few dozen
    rows, validated) all at once, by the very build ``build_life_world`` does, the first time one
    of them is read. A table the spec leaves empty is made empty at once. A reset to a new task
    then makes no row its system prompt and opening do not read (none), and every table, once
    made, holds what the eager build's holds, in its order (tests/test_reset_lazy_life.py).

    The spec's scalars are validated now, as ever; a table that is not a list, and a world class
    with its own ``locations_of``, are built at once by ``build_life_world``. Whether the world's
    ``prepare`` reads tables at once is the world class's: ``TravelWorld``'s and ``CrossWorld``'s
    read none.

    ``later``: the tables of scalar models (not ``locations``) whose row lists are still to make
    (``Task.world_parts``: ``name -> maker``; ``spec[name]`` is then what the maker reads): each
    made on its first read from the rows its maker makes."""
    later = later or {}
    if world_cls.locations_of is not LifeWorld.locations_of or any(
        type(spec.get(name, [])) is not list for name in world_cls.schema if name not in later
    ) or any(name == "locations" or name not in world_cls.schema for name in later):
        return build_life_world(world_cls, {k: (later[k]() if k in later else v) for k, v in spec.items()}, vouched=True)
    now, extra = _scalars(world_cls, spec)
    tables: dict[str, Any] = {}
    grouped: dict[str, Any] = {}  # the spec of the tables made together
    for name, model in world_cls.schema.items():
        if name in later:
            tables[name] = made_vouched_rows(model, later[name], _validated)
            continue
        items = spec.get(name, [])
        if not items and name != "locations":
            tables[name] = {}
            continue
        rows = lazy_vouched_rows(model, items, _validated) if name != "locations" else None
        if rows is None:
            grouped[name] = items
        else:
            tables[name] = rows
    group = LazyRows(partial(_grouped_tables, world_cls, grouped))
    for name in grouped:
        tables[name] = LazyRows(partial(_one_table, group, name))
    return _prepared(world_cls(now, tables, extra=extra, shared=True))


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
