"""The cross-scenario world (VitaBench's headline setting): one user, one clock and one address
book across the three life-service domains, and the 66 tools of all three at once.

``CrossWorld`` owns no entities or tools of its own. Its schema, place tables and catalogue tables
are the union of ``DeliveryWorld``'s, ``InStoreWorld``'s and ``TravelWorld``'s; each row is shown
the way its own domain shows it (``render_row`` and ``place_summary`` are delegated per table to
the domain world that owns the table), and ``prepare`` builds every domain's indexes. The domain
tools read only tables, ``extra`` and the few world methods delegated here, so they run
unchanged.

New ids never collide across domains: each domain's tools pass their own prefix to
``LifeWorld.new_order_id`` (delivery ``D``; in-store orders ``I``, bookings ``B``, reservations
``R``; travel ``HT``, ``AT``, ``FL``, ``TR``), and each prefix has its own seeded counter.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache, partial
from typing import Any

from servicegym.world_state.core import LazyRows, World
from servicegym.world_state.delivery import DELIVERY_TOOLS, DeliveryWorld
from servicegym.world_state.instore import INSTORE_TOOLS, InStoreWorld
from servicegym.world_state.life import SHARED_TOOLS, LifeWorld
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.life.tools import SearchIndex
from servicegym.world_state.travel import TRAVEL_TOOLS, TravelWorld

DOMAIN_WORLDS: tuple[type[LifeWorld], ...] = (DeliveryWorld, InStoreWorld, TravelWorld)

# table -> the domain world that owns it (the shared tables belong to LifeWorld itself)
TABLE_OWNER: dict[str, type[LifeWorld]] = {
    name: cls for cls in DOMAIN_WORLDS for name in cls.schema if name not in LifeWorld.schema
}


class CrossWorld(LifeWorld):
    """A task database holding every life-service domain's tables."""

    schema = {name: model for cls in DOMAIN_WORLDS for name, model in cls.schema.items()}
    place_tables = tuple(t for cls in DOMAIN_WORLDS for t in cls.place_tables)
    catalogue_tables = tuple(t for cls in DOMAIN_WORLDS for t in cls.catalogue_tables)
    # ``build_life_world`` hands over fresh row dicts: taken copy-on-write, not copied again
    shares_given_tables = True

    def render_row(self, table: str, row: Any) -> dict[str, Any]:
        return TABLE_OWNER.get(table, LifeWorld).render_row(self, table, row)

    def place_summary(self, table: str, row: Any) -> dict[str, Any]:
        return TABLE_OWNER.get(table, LifeWorld).place_summary(self, table, row)

    def build_indexes(self) -> None:
        for cls in DOMAIN_WORLDS:
            cls.build_indexes(self)

    def prepare(self) -> None:
        """``LifeWorld.prepare``; for a world whose catalogue tables are lazy (``build_lazy_life_world``)
        the views and indexes that read rows are made on their first use instead, from the rows
        the world was built with, and shared by its copies as the eager ones are: ``_view_rows``
        reads a table when a view asks for it, and each search index (and the store menus of
        ``products_of``) is built when first searched, by the domain's own ``build_indexes`` on a
        copy of the world as built. A reset to a new task then makes no row. A world of a
        VitaBench file, or one whose domains build an index this cannot defer, is prepared at once."""
        plan = _deferrable()
        if (
            plan is None
            or self.extra.get("vitabench_release") is not None
            or not any(self.tables[t].lazy is not None for t in self.catalogue_tables)
        ):
            super().prepare()
            return
        now_classes, later_classes, keys = plan
        built = World.copy(self)  # the world as built: its tables are never written (copies copy on write)
        self.extra["_view_rows"] = _BuiltRows(built.tables, self.catalogue_tables)
        self.extra["_views"] = {t: {} for t in self.catalogue_tables}
        self.extra["_view_json"] = {t: {} for t in self.catalogue_tables}
        deferred = _DeferredIndexes(built, later_classes)
        self.extra[_DEFERRED] = deferred
        for key in keys:
            self.extra[key] = _LazySearchIndex(deferred, key)
        for cls in now_classes:  # indexes that read no row (the travel catalogues' home): at once
            cls.build_indexes(self)

    def products_of(self, store_id: str) -> list[Any]:
        """The store's menu (the delivery tools list it through the world; the other domains use
        functions): ``DeliveryWorld.products_of``, its menu index taken from the deferred indexes when the
        world was prepared lazily (``prepare``)."""
        if _STORE_MENUS not in self.extra:
            deferred = self.extra.get(_DEFERRED)
            if deferred is not None:
                self.extra[_STORE_MENUS] = deferred.value(_STORE_MENUS)
        return DeliveryWorld.products_of(self, store_id)  # type: ignore[arg-type]


_DEFERRED = "_deferred_indexes"
_STORE_MENUS = "_store_products"  # ``DeliveryWorld.products_of``'s index of each store's menu


class _BuiltRows(dict):  # type: ignore[type-arg]
    """``extra["_view_rows"]`` of a lazily prepared world: table -> the row dict the world was built
    with, read from the world as built when a view first asks for the table."""

    __slots__ = ("_tables",)

    def __init__(self, tables: dict[str, Any], names: tuple[str, ...]) -> None:
        super().__init__()
        self._tables = {name: tables[name] for name in names}

    def __missing__(self, name: str) -> dict[str, Any]:
        rows = self[name] = self._tables[name].rows
        return rows

    def __reduce__(self) -> Any:
        # a pickle or deep copy holds the rows themselves, in a plain dict
        return (dict, ({name: self[name] for name in self._tables},))


class _DeferredIndexes:
    """The indexes of the domains that read rows (delivery, in-store), built once, on first use,
    by their own ``build_indexes`` on ``built`` (the world as built, never written)."""

    __slots__ = ("built", "classes", "made")

    def __init__(self, built: CrossWorld, classes: tuple[type[LifeWorld], ...]) -> None:
        self.built, self.classes, self.made = built, classes, False

    def value(self, key: str) -> Any:
        if not self.made:
            for cls in self.classes:
                cls.build_indexes(self.built)
            self.made = True
        return self.built.extra[key]


class _LazySearchIndex(SearchIndex):
    """A search index of a lazily prepared world (``CrossWorld.prepare``): ``ids`` and ``texts``
    are those of the index its domain builds, made on first read. Pickled as a plain index."""

    __slots__ = ("_deferred", "_key")

    def __init__(self, deferred: _DeferredIndexes, key: str) -> None:  # noqa: D107 (no docs to index yet)
        self._deferred, self._key = deferred, key

    def __getattr__(self, name: str) -> Any:
        # only for an unset slot: ``ids`` and ``texts`` before the index is made
        if name in ("ids", "texts"):
            made = self._deferred.value(self._key)
            self.ids, self.texts = made.ids, made.texts
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __reduce__(self) -> Any:
        return (_plain_index, (self.ids, self.texts))


def _plain_index(ids: list[str], texts: list[str]) -> SearchIndex:
    index = SearchIndex.__new__(SearchIndex)
    index.ids, index.texts = ids, texts
    return index


def _probe_read(reads: list[str], name: str) -> dict[str, Any]:
    reads.append(name)
    return {}


@cache
def _deferrable() -> tuple[tuple[type[LifeWorld], ...], tuple[type[LifeWorld], ...], tuple[str, ...]] | None:
    """How ``CrossWorld.prepare`` defers the domains' indexes, found once by running each domain's
    ``build_indexes`` on an empty world that notes every table read: (the domains that read no
    row, run at once; those that do, deferred; the keys of the search indexes the latter make).
    None when a domain that reads rows makes anything but search indexes and the store menus
    (then nothing is deferred)."""
    reads: list[str] = []
    probe = CrossWorld(datetime(2000, 1, 1), {name: LazyRows(partial(_probe_read, reads, name)) for name in CrossWorld.schema})
    now: list[type[LifeWorld]] = []
    later: list[type[LifeWorld]] = []
    keys: list[str] = []
    for cls in DOMAIN_WORLDS:
        before, n = set(probe.extra), len(reads)
        cls.build_indexes(probe)
        added = [k for k in probe.extra if k not in before]
        if len(reads) == n:
            now.append(cls)
            continue
        for key in added:
            if type(probe.extra[key]) is SearchIndex:
                keys.append(key)
            elif key != _STORE_MENUS:
                return None
        later.append(cls)
    return tuple(now), tuple(later), tuple(keys)


# 8 shared + 12 delivery + 16 in-store + 30 travel, VitaBench's cross-scenario agent
TOOLS = SHARED_TOOLS + DELIVERY_TOOLS + INSTORE_TOOLS + TRAVEL_TOOLS

__all__ = ["CrossWorld", "DOMAIN_WORLDS", "TABLE_OWNER", "TOOLS"]


def build_cross_world(spec: dict[str, Any]) -> CrossWorld:
    """Validate a task's world spec and build its initial ``CrossWorld`` (``WorldSpecError`` names a bad field)."""
    return build_life_world(CrossWorld, spec)  # type: ignore[return-value]
