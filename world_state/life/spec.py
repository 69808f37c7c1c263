"""Building a life-service world (delivery, in-store, travel, cross-scenario) from a task's world spec.

A world spec is a dict with ``time``, ``user_id``, ``task_key``, ``language``, ``user_profile``,
``user_historical_behaviors`` (a VitaBench task's also ``vitabench_release``) and one list of rows
per table of the domain's world class (table name = key, e.g. ``stores``, ``products``,
``orders``, ``locations``, ``weather``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from operator import attrgetter
from typing import Any

from pydantic import TypeAdapter, ValidationError

from servicegym.world_state.core import Entity, parse_time
from servicegym.world_state.life.entities import LifeWorld

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


@cache
def _key_of(model: Any) -> Callable[[Any], str]:
    """``row.key`` of ``model``'s rows: its key field read directly unless the model computes its key."""
    return attrgetter(model.key_field) if model.key is Entity.key else attrgetter("key")


def build_life_world(world_cls: type[LifeWorld], spec: dict[str, Any]) -> LifeWorld:
    """Validate a world spec and build the initial world of ``world_cls``.

    The address book holds the spec's ``locations`` and every place's and past order's address,
    for this task only (VitaBench's public code kept one process-wide registry).
    """
    for key in ("time", "user_id"):
        if not isinstance(spec.get(key), str):
            raise WorldSpecError(f"field world.{key}: required string")
    try:
        now = parse_time(spec["time"])
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
    world = world_cls(now, tables, extra=extra)
    book = world.table("locations")
    for name in (*world_cls.place_tables, "orders"):
        for row in world.table(name):
            for loc in world.locations_of(row):
                if loc.address not in book:
                    book.put(loc)
    world.prepare()
    return world
