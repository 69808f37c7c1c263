"""The world's deterministic core: typed entity tables, seeded ids, the task clock, geometry,
the execution history and snapshot/restore.

Entities are frozen pydantic models, so the only way to change the world is through a
``Table``. That makes a snapshot a shallow copy of each table's row dict (rows are shared, never
mutated) and lets a failed tool call be undone by restoring that snapshot.

Layout: this module holds the entities (``Entity``), the tables (``Table``, ``LazyRows``) and their
row helpers (``unvalidated``, ``_copy_with``), the id counter and the world (``Snapshot``,
``Transaction``, ``World``); ``clock.py`` holds the clock, the cached time and date helpers,
``round2`` and ``haversine_m``, and ``history.py`` the execution history (``HistoryEntry``,
``History``). This module re-exports both (``__all__``): every name keeps its import from here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict

from servicegym.world_state.clock import (
    DATE_FORMAT,
    EARTH_RADIUS_M,
    TIME_FORMAT,
    Clock,
    date_text,
    haversine_m,
    parse_date,
    parse_time,
    round2,
    time_hhmm,
    time_text,
)
from servicegym.world_state.history import History, HistoryEntry, Outcome, _new_tuple

__all__ = [
    "Entity", "E", "Table", "LazyRows", "M", "unvalidated", "IdCounter", "Snapshot", "Transaction", "World",
    # re-exported from clock.py and history.py
    "EARTH_RADIUS_M", "TIME_FORMAT", "DATE_FORMAT", "Clock", "parse_time", "time_text", "time_hhmm", "parse_date",
    "date_text", "round2", "haversine_m", "Outcome", "HistoryEntry", "History",
]


class Entity(BaseModel):
    """Base of every stored record: unknown fields are rejected and rows are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key_field: ClassVar[str] = "id"
    # a class whose rows a write returns on most of its steps may write their JSON text out itself:
    # a method ``json_text(self) -> str | None`` giving exactly what the tool result encoder prints
    # for the row (``world_state.tools.dumps``), or None to leave the row to the encoder (a value
    # not of its field's plain type). None here: the encoder makes every row's text
    json_text: ClassVar[Callable[[Any], str | None] | None] = None

    @property
    def key(self) -> str:
        return getattr(self, self.key_field)

    def json_fields(self) -> dict[str, Any] | None:
        """The row's own field dict when it already is what ``model_dump(mode="json")`` gives
        (every value a string, integer, finite float, boolean, None or a list of them, and the
        class has no aliases, computed fields or custom serializers); None otherwise. Read only:
        the JSON encoder of tool results walks it instead of a fresh dump."""
        fields = self.__dict__
        n = _PLAIN_MODELS.get(type(self))  # decided once per class (``_plain_fields``)
        if len(fields) != (n if n is not None else _plain_fields(type(self))):
            return None
        for v in fields.values():
            t = type(v)
            if t in _PLAIN_VALUES or (t is float and math.isfinite(v)):
                continue
            if t is list and all(type(x) in _PLAIN_VALUES or (type(x) is float and math.isfinite(x)) for x in v):
                continue
            return None
        return fields

    def model_dump(self, *, mode: str = "python", **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        """pydantic's ``model_dump``; ``mode="json"`` with no other option copies ``json_fields``
        when the row has them (the same dict, made without the serializer: tools show rows on
        most steps)."""
        if mode == "json" and not kwargs:
            fields = self.json_fields()
            if fields is not None:
                return {k: (v[:] if type(v) is list else v) for k, v in fields.items()}
        return super().model_dump(mode=mode, **kwargs)


_PLAIN_MODELS: dict[type, int] = {}
_PLAIN_VALUES = frozenset((str, int, bool, type(None)))


def _plain_fields(cls: type[Entity]) -> int:
    """The number of fields of ``cls`` when ``model_dump(mode="json")`` of its rows is their field
    dict whenever every value is plain JSON (no aliases, computed fields or custom serializers),
    else -1; decided once per class."""
    n = _PLAIN_MODELS.get(cls)
    if n is None:
        deco, fields = cls.__pydantic_decorators__, cls.__pydantic_fields__
        plain = (
            not cls.__pydantic_computed_fields__ and not deco.field_serializers and not deco.model_serializers
            and all(f.alias is None and f.serialization_alias is None for f in fields.values())
            and cls.model_config.get("extra") == "forbid"
        )
        n = _PLAIN_MODELS[cls] = len(fields) if plain else -1
    return n


E = TypeVar("E", bound=Entity)


_ABSENT = object()


_new_object = object.__new__
_stamps = itertools.count(1)  # table content stamps, unique across every table of the process


class _Journal:
    """The undo journal every table of one world writes to: ``entries`` is the open transaction's
    list of changes, or None when none is open. One per world, so opening or closing a
    transaction costs the same whatever the number of tables (Payments has over 200)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] | None = None


class Table(Generic[E]):
    """An ordered mapping ``key -> entity``; every change goes through ``put``/``update``/``delete``.

    While a transaction is open (``World.begin``) each change is written to ``journal`` first, so
    a failed tool call is undone in proportion to what it changed, not to the size of the world.
    The journal is the world's (``_Journal``, shared by its tables): a table made on its own has
    its own.

    Copies are copy-on-write: ``share`` gives a table that uses the same row dict, and both copy
    the dict on their first change (``_own``). A world's copy, at every reset, therefore costs in
    proportion to its number of tables, and an episode copies only the tables it changes. Code that
    reads ``rows`` reads the current dict; every change goes through the methods below.

    ``stamp`` names the table's content: every change (and a rollback or restore) gives it a new
    one, unique in the process, and a shared copy keeps it; so text built from a table stays valid
    while its stamp is the same (``World.cached_text``).

    ``base`` says what the rows start with, for indexes of append-only tables: None while they
    are the content its stamp names (unchanged since the table was made or copied); ``(stamp, n)``
    once rows were inserted: the ``n`` rows of the content that stamp named, then only insertions;
    False once a row was replaced or deleted. A copy takes its table's. An index built over that
    prefix therefore holds for every copy of the lineage, with the inserted rows read after it
    (``World.prefix_cached``: an append-only ledger's sums per account).

    A table may be made lazily (``LazyRows``, a generator's vouched catalogue): its row dict is
    made on the first read of ``rows`` (any read, count or change), once for the table and every
    copy of it, which then share that dict copy-on-write like any other. Until then the table is a
    ``_LazyTable`` whose ``rows`` is unset and ``lazy`` holds the maker; the first read makes it a
    ``Table`` again, so a made table's reads take no extra step.
    """

    __slots__ = ("name", "model", "rows", "shared", "_log", "stamp", "base", "lazy")

    def __init__(
        self, name: str, model: type[E], rows: dict[str, E] | None = None, shared: bool = False,
        log: _Journal | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.rows: dict[str, E] = rows if rows is not None else {}
        self.shared = shared  # ``rows`` may be another table's too: copy it before a change
        self._log = log if log is not None else _Journal()
        self.stamp = next(_stamps)
        self.base: tuple[int, int] | bool | None = None
        self.lazy: LazyRows | None = None

    @property
    def journal(self) -> list[tuple[Any, ...]] | None:
        """The open transaction's changes (shared by the world's tables), or None."""
        return self._log.entries

    @journal.setter
    def journal(self, value: list[tuple[Any, ...]] | None) -> None:
        self._log.entries = value

    def share(self, log: _Journal | None = None) -> Table[E]:
        """A copy of this table that shares its rows until either of them changes (journaling to
        ``log``, its world's journal)."""
        self.shared = True
        lazy = self.lazy
        if lazy is not None and lazy.rows is not None:  # made by a copy: this table reads them too
            self.rows, self.lazy, lazy = lazy.rows, None, None
            self.__class__ = Table
        if lazy is None:
            new = _new_object(Table)  # without __init__: a world's copy shares every table at each reset
            new.rows = self.rows
        else:
            new = _new_object(_LazyTable)
        new.name, new.model, new.shared, new.lazy = self.name, self.model, True, lazy  # lazy: made once for both
        new._log = log if log is not None else _Journal()
        new.stamp = self.stamp  # the same rows
        new.base = self.base  # the same rows, so the same start
        return new

    def __getstate__(self) -> dict[str, Any]:
        self.rows  # noqa: B018  a lazy table's rows are made: a pickle or deep copy holds them
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.lazy = None  # a pickle holds the rows made (``__getstate__``)
        for name, value in state.items():
            setattr(self, name, value)
        if type(self) is not Table and self.lazy is None:
            self.__class__ = Table
        self.stamp = next(_stamps)  # stamps are unique within one process only: take a new one
        self.base = None  # it named a stamp of the process that pickled it (the rows are the new stamp's)

    def _own(self) -> None:
        self.rows = dict(self.rows)
        self.shared = False

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[E]:
        return iter(self.rows.values())

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def get(self, key: str) -> E | None:
        return self.rows.get(key)

    def require(self, key: str) -> E:
        row = self.rows.get(key)
        if row is None:
            raise KeyError(f"{self.name}: no record with id {key!r}")
        return row

    def put(self, row: E) -> E:
        key = row.key
        if key in self.rows:
            self.base = False  # a row replaced: no longer a prefix and insertions
        elif self.base is None:
            self.base = (self.stamp, len(self.rows))  # the first insertion: the rows so far are the prefix
        if self.shared:
            self._own()
        journal = self._log.entries
        if journal is not None:
            journal.append((self, key, self.rows.get(key, _ABSENT)))
        self.rows[key] = row
        self.stamp = next(_stamps)
        return row

    def insert(self, row: E) -> E:
        key = row.key  # read once (a class may compute it: ShopProduct)
        if key in self.rows:
            raise KeyError(f"{self.name}: id {key!r} already exists")
        if self.base is None:
            self.base = (self.stamp, len(self.rows))  # the first insertion: the rows so far are the prefix
        if self.shared:
            self._own()
        journal = self._log.entries
        if journal is not None:
            journal.append((self, key, _ABSENT))
        self.rows[key] = row
        self.stamp = next(_stamps)
        return row

    def update(self, key: str, **changes: Any) -> E:
        rows = self.rows
        old = rows.get(key)
        if old is None:
            raise KeyError(f"{self.name}: no record with id {key!r}")
        if old.__pydantic_extra__ is None and old.__pydantic_private__ is None:
            # ``_copy_with`` inlined (a write's every update): the fields with ``changes``, unvalidated
            row = _new_object(old.__class__)
            _set_fields(row, {**old.__dict__, **changes})
            fields_set = old.__pydantic_fields_set__  # grown by ``changes`` (rows are frozen: never changed in place)
            _set_fields_set(row, fields_set if changes.keys() <= fields_set else fields_set | changes.keys())
            _set_extra(row, None)
            _set_private(row, None)
        else:
            row = _copy_with(old, changes)
        self.base = False
        if self.shared:
            rows = self.rows = dict(rows)  # ``_own``: the first change of a shared table copies its rows
            self.shared = False
        journal = self._log.entries
        if journal is not None:
            journal.append((self, key, old))
        rows[key] = row
        self.stamp = next(_stamps)
        return row

    def delete(self, key: str) -> None:
        self.require(key)
        self.base = False
        if self.shared:
            self._own()
        journal = self._log.entries
        if journal is not None:
            # re-inserting would move the key to the end: keep the whole order instead (rare)
            journal.append((self, None, dict(self.rows)))
        del self.rows[key]
        self.stamp = next(_stamps)


class _LazyTable(Table[E]):
    """A lazy table (``Table.lazy``) before its first read: ``rows`` is unset, and reading it makes
    the rows and turns the table into a plain ``Table`` (the same slots)."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> Any:
        self.rows  # noqa: B018  made: a pickle or copy holds a plain ``Table`` and its rows
        return object.__reduce_ex__(self, protocol)

    def __getattr__(self, name: str) -> Any:
        # only for an unset attribute: ``rows`` not made yet
        if name == "rows":
            lazy = self.lazy
            if lazy is not None:
                rows = self.rows = lazy.make()
                self.lazy = None
                self.__class__ = Table
                return rows
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _new_table(name: str, model: type[E], rows: dict[str, E], shared: bool, log: _Journal) -> Table[E]:
    """``Table(name, model, rows, shared, log)`` without the class call (a Payments world has over
    200 tables, all made at each world build)."""
    new = _new_object(Table)
    new.name, new.model, new.rows, new.shared, new._log = name, model, rows, shared, log
    new.stamp = next(_stamps)
    new.base = new.lazy = None
    return new


class LazyRows:
    """The rows of a table made on its first read (``Table.lazy``): ``make()`` is ``build()``, the
    table's row dict (key -> entity), called once and kept, so the table and all its copies read
    the same dict. A world given one for a table (``World(tables=...)``) makes that table lazy: a
    reset to a new task then makes no entity of a catalogue its episode never reads."""

    __slots__ = ("build", "rows")

    def __init__(self, build: Callable[[], dict[str, Any]]) -> None:
        self.build: Callable[[], dict[str, Any]] | None = build
        self.rows: dict[str, Any] | None = None

    def make(self) -> dict[str, Any]:
        rows = self.rows
        if rows is None:
            build = self.build
            if build is not None:
                made = build()
                if self.rows is None:  # (another thread may have made them meanwhile: the first stays)
                    self.rows = made
                self.build = None  # what it held (the spec's rows) is no longer needed here
            rows = self.rows  # set before ``build`` is cleared
            assert rows is not None
        return rows


_set_attr = object.__setattr__
M = TypeVar("M", bound=BaseModel)


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    """``lambda obj, value: object.__setattr__(obj, name, value)`` for one of the attributes every
    pydantic model instance has in its own slots (``BaseModel.__slots__``): the slot's descriptor's
    own ``__set__`` when pydantic declares it, the very thing ``object.__setattr__`` looks up and
    calls, without the look-up (every row a write makes sets four of them)."""
    descriptor = BaseModel.__dict__.get(name)
    setter = getattr(descriptor, "__set__", None)
    if setter is None:
        return lambda obj, value: _set_attr(obj, name, value)
    return setter


_set_fields = _slot_setter("__dict__")
_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def unvalidated(model: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``model`` (a pydantic model with no extra fields or private attributes) whose
    fields are ``fields`` (the dict itself, not a copy) and set fields ``fields_set``, made without
    validation: for values the caller has already validated or built itself (a row's copy with a
    change, a generator's own rows). ``model.model_construct`` does the same with its generic steps."""
    new = _new_object(model)
    _set_fields(new, fields)
    _set_fields_set(new, fields_set)
    _set_extra(new, None)
    _set_private(new, None)
    return new


def _copy_with(row: E, changes: dict[str, Any]) -> E:
    """``row.model_copy(update=changes)`` without its generic steps (the same attributes: a
    shallow copy of the fields with ``changes`` applied, the set fields grown by them)."""
    if row.__pydantic_extra__ is not None or row.__pydantic_private__ is not None:
        return row.model_copy(update=changes)
    fields = row.__dict__.copy()
    fields.update(changes)
    return unvalidated(row.__class__, fields, row.__pydantic_fields_set__ | changes.keys())


class IdCounter:
    """Seeded, per-prefix counters: ids never depend on the wall clock or on other episodes."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict[str, int] | None = None) -> None:
        self.counts: dict[str, int] = dict(counts or {})

    def next(self, prefix: str, width: int = 3) -> str:
        n = self.counts.get(prefix, 0) + 1
        self.counts[prefix] = n
        return prefix + str(n).zfill(width)  # f"{prefix}{n:0{width}d}", without the nested format spec


@dataclass(slots=True)
class Snapshot:
    tables: dict[str, dict[str, Entity]]
    counters: dict[str, int]
    now: datetime
    extra: dict[str, Any]


class Transaction(NamedTuple):
    """An open transaction (``World.begin``): its journal and what it restores on rollback (a named
    tuple: every write makes one)."""

    journal: list[tuple[Any, ...]]
    counters: dict[str, int]
    now: datetime
    extra: dict[str, Any]


class World:
    """A task's database: named tables, an id counter and a clock, plus domain scalars in ``extra``.

    Subclasses declare their tables in ``schema`` (table name -> entity model).
    """

    schema: ClassVar[dict[str, type[Entity]]] = {}
    # ``shared``'s default: a world class whose builder hands over its row dicts says True
    shares_given_tables: ClassVar[bool] = False

    def __init__(
        self,
        now: datetime,
        tables: dict[str, dict[str, Entity]] | None = None,
        counters: dict[str, int] | None = None,
        extra: dict[str, Any] | None = None,
        *,
        shared: bool | None = None,
    ) -> None:
        """``tables``' row dicts are copied; with ``shared`` (default: the class's
        ``shares_given_tables``) they are taken copy-on-write instead (each table copies its dict
        on its first change), for a builder that hands its fresh dicts over or passes dicts that
        nothing changes (background rows shared by every world built from them): a world of
        thousands of rows is then built, and later freed, without a copy of them. A ``LazyRows``
        instead of a dict makes a lazy table (``Table.lazy``: made on its first read, then shared
        copy-on-write by the world and its copies)."""
        tables = tables or {}
        if shared is None:
            shared = self.shares_given_tables
        self._journal = log = _Journal()
        self.tables: dict[str, Table] = {}
        for name, model in self.schema.items():
            rows = tables.get(name)
            if rows is None:
                self.tables[name] = _new_table(name, model, {}, False, log)
            elif type(rows) is LazyRows:  # made on first read, shared by every copy (so: shared)
                t = self.tables[name] = _new_object(_LazyTable)
                t.name, t.model, t.shared, t._log, t.lazy = name, model, True, log, rows
                t.stamp, t.base = next(_stamps), None
            else:
                self.tables[name] = _new_table(name, model, rows if shared else dict(rows), shared, log)
        self.ids = IdCounter(counters)
        self.clock = Clock(now)
        self.extra: dict[str, Any] = dict(extra or {})
        self._texts: dict[Hashable, tuple[Any, str, Any]] = {}  # ``cached_text``'s, shared by the world's copies

    def table(self, name: str) -> Table:
        return self.tables[name]

    def make_lazy(self, name: str, rows: LazyRows) -> None:
        """Make table ``name`` (empty and unchanged since the world was built, never copied) the
        lazy table of ``rows``: its rows are made on its first read (``Table.lazy``), for a world
        builder whose catalogue a reset should not make before an episode reads it."""
        old = self.tables[name]
        if old.lazy is not None or old.rows or old.base is not None:
            raise ValueError(f"table {name!r} is not a new, empty table")
        t = self.tables[name] = _new_object(_LazyTable)
        t.name, t.model, t.shared, t._log, t.lazy = name, old.model, True, self._journal, rows
        t.stamp, t.base = next(_stamps), None

    def __getstate__(self) -> dict[str, Any]:
        # a pickled or deep-copied world starts its own text cache: its tables take new stamps
        return {**self.__dict__, "_texts": {}}

    def snapshot(self) -> Snapshot:
        return Snapshot(
            {name: dict(t.rows) for name, t in self.tables.items()},
            dict(self.ids.counts),
            self.clock.now,
            dict(self.extra),
        )

    def restore(self, snap: Snapshot) -> None:
        for name, rows in snap.tables.items():
            t = self.tables[name]
            t.rows, t.shared, t.stamp, t.base, t.lazy = dict(rows), False, next(_stamps), None, None
            if type(t) is not Table:
                t.__class__ = Table  # a lazy table restored: its rows are the snapshot's
        self.ids.counts = dict(snap.counters)
        self.clock.now = snap.now
        self.extra = dict(snap.extra)

    def copy(self) -> World:
        """An independent world with the same state (rows are immutable, so sharing them is safe)."""
        new = object.__new__(type(self))
        new._journal = log = _Journal()
        new.tables = {name: t.share(log) for name, t in self.tables.items()}
        new.ids = IdCounter(self.ids.counts)
        new.clock = self.clock.copy()
        new.extra = dict(self.extra)
        new._texts = self._texts  # stamped entries: valid for any world of the lineage
        return new

    def cached_text(self, key: Hashable, tables: tuple[str, ...], build: Callable[[], str], source: Any = None) -> str:
        """``build()``, kept while none of ``tables`` has changed (their stamps) and ``source`` (an
        object the text is made from, e.g. a value of ``extra`` that is never changed in place) is
        the same object, for text a tool shows often (a store with its menu, a hotel with its
        rooms). The cache is shared by this world's copies: an entry holds for any world whose
        tables carry the same stamps, so the next episode of the task reads it too; one entry per
        key (a change replaces it)."""
        if len(tables) == 1:
            stamps: Any = self.tables[tables[0]].stamp
        else:
            stamps = tuple([self.tables[t].stamp for t in tables])
        hit = self._texts.get(key)
        if hit is not None and hit[0] == stamps and hit[2] is source:
            return hit[1]
        text = build()
        self._texts[key] = (stamps, text, source)  # holds ``source``: its identity cannot be reused
        return text

    def prefix_cached(self, key: Hashable, table: str, build: Callable[[Iterator[Any]], Any]) -> tuple[Any, int] | None:
        """``(build(rows), n)``: ``build`` of the first ``n`` rows of ``table``, the rows it was
        copied with (``Table.base``), kept for every world of the lineage whose table starts with
        the same rows (one entry per key, like ``cached_text``); the caller reads the rows after
        the first ``n`` itself. None when the table has changed other than by insertions since it
        was copied, or was never copied (then the caller scans it)."""
        t = self.tables[table]
        base = t.base
        if base is None:
            base = (t.stamp, len(t.rows))  # unchanged: all its rows
        elif base is False:
            return None
        hit = self._texts.get(key)
        if hit is not None and hit[0] == base:
            return hit[1], base[1]
        value = build(itertools.islice(t.rows.values(), base[1]))
        self._texts[key] = (base, value, None)
        return value, base[1]

    def begin(self) -> Transaction:
        """Start journaling changes; ``rollback`` undoes them, ``commit`` keeps them."""
        journal: list[tuple[Any, ...]] = []
        self._journal.entries = journal  # every table's (one cell, whatever their number)
        return _new_tuple(Transaction, (journal, self.ids.counts.copy(), self.clock._now, self.extra.copy()))

    def rollback(self, txn: Transaction) -> None:
        for table, key, old in reversed(txn.journal):
            table.stamp = next(_stamps)
            if table.shared and key is not None:  # a copy made during the transaction keeps its rows
                table._own()
            if key is None:
                table.rows, table.shared, table.lazy = old, False, None  # the journal's own copy
            elif old is _ABSENT:
                del table.rows[key]
            else:
                table.rows[key] = old
        self.ids.counts = txn.counters
        self.clock.now = txn.now
        self.extra = txn.extra
        self.commit(txn)

    def commit(self, txn: Transaction) -> None:
        self._journal.entries = None

    def state_dict(self) -> dict[str, Any]:
        """A JSON-able view of the whole state, for equality checks and debugging."""
        return {
            "now": self.clock.text(),
            "counters": dict(self.ids.counts),
            "extra": {k: v for k, v in self.extra.items() if not k.startswith("_")},
            "tables": {
                name: {k: r.model_dump(mode="json") for k, r in t.rows.items()} for name, t in self.tables.items()
            },
        }
