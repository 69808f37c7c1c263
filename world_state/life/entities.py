"""Entities every life-service world has: addresses, weather, the user's orders."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from servicegym.world_state.core import Entity, World
from servicegym.world_state.tools import dumps

OrderStatus = Literal[
    "unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress", "delivered", "cancelled"
]
OrderType = Literal["delivery", "instore", "hotel", "attraction", "flight", "train"]


class OpeningHours:
    """For places with ``open_time``/``close_time`` ("HH:MM", None = not known, so always open)."""

    open_time: str | None
    close_time: str | None

    def is_open_at(self, hhmm: str) -> bool:
        opens, closes = self.open_time, self.close_time  # read once (every booking asks)
        if opens is None or closes is None:
            return True
        if opens <= closes:
            return opens <= hhmm < closes
        return hhmm >= opens or hhmm < closes  # open past midnight


class Location(Entity):
    key_field: ClassVar[str] = "address"
    address: str
    longitude: float
    latitude: float


class Weather(Entity):
    key_field: ClassVar[str] = "id"
    id: str
    city: str
    category: str
    datetime: str
    temperature: list[float]
    humidity: float | None = None


class OrderLine(Entity):
    """One product line of an order (catalogue fields copied at order time)."""

    key_field: ClassVar[str] = "product_id"
    product_id: str
    name: str = ""
    store_id: str = ""
    store_name: str = ""
    price: float
    quantity: int
    attributes: str = ""
    tags: list[str] = []
    # a travel line's night, visit or departure date (YYYY-MM-DD); empty in other domains
    date: str = ""


class Order(Entity):
    key_field: ClassVar[str] = "order_id"
    order_id: str
    order_type: OrderType
    user_id: str
    store_id: str
    note: str = ""
    location: Location | None = None
    dispatch_time: str = ""
    shipping_time: float | None = None
    delivery_time: str = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: list[OrderLine] = []


class LifeWorld(World):
    """A life-service task database. ``extra`` holds ``user_id``, ``user_profile`` and
    ``user_historical_behaviors``; ``place_tables`` lists the tables ``get_nearby`` searches."""

    schema = {"locations": Location, "weather": Weather, "orders": Order}
    place_tables: ClassVar[tuple[str, ...]] = ()
    order_prefix: ClassVar[str] = "O"

    @property
    def user_id(self) -> str:
        return self.extra.get("user_id", "")

    def new_order_id(self, prefix: str | None = None, table: str = "orders") -> str:
        """``<task_key><prefix><nn>`` from the seeded counter, skipping ids ``table`` already holds.

        Each domain passes its own prefix (delivery ``D``), so one cross-scenario world can hold
        every domain's orders without collisions."""
        rows = self.tables[table].rows  # read directly: ``Table.__contains__``'s own test
        counter = self.ids.next
        key = f"{self.extra.get('task_key', 'T')}{self.order_prefix if prefix is None else prefix}"
        while True:
            oid = counter(key, 2)
            if oid not in rows:
                return oid

    def render_row(self, table: str, row: Any) -> dict[str, Any]:
        """How tools show a row of ``table``; a domain may trim or enrich it."""
        return row.model_dump(mode="json")

    def view(self, table: str, row: Any) -> dict[str, Any]:
        """``render_row``, cached for the catalogue tables' rows of the initial world: built on
        first use (most of a catalogue is never shown) and kept for every episode of the task
        (rows are immutable: a stock change makes a new row, which misses and is not kept)."""
        cache = self.extra.get("_views", {}).get(table)
        if cache is None:
            return self.render_row(table, row)
        hit = cache.get(row.key)
        if hit is not None and hit[0] is row:
            return dict(hit[1])
        view = self.render_row(table, row)
        if hit is None and self._initial_row(table, row):
            cache[row.key] = (row, view)
            return dict(view)
        return view

    def view_json(self, table: str, row: Any) -> str:
        """``dumps(view(table, row))``, cached like the view for catalogue rows."""
        cache = self.extra.get("_view_json", {}).get(table)
        if cache is None:
            return dumps(self.render_row(table, row))
        hit = cache.get(row.key)
        if hit is not None and hit[0] is row:
            return hit[1]
        text = dumps(self.render_row(table, row))
        if hit is None and self._initial_row(table, row):
            cache[row.key] = (row, text)
        return text

    def _initial_row(self, table: str, row: Any) -> bool:
        """Whether ``row`` is the initial world's row of its key (what the view caches keep)."""
        return self.extra["_view_rows"][table].get(row.key) is row

    def place_summary(self, table: str, row: Any) -> dict[str, Any]:
        """How ``get_nearby`` and searches show a place."""
        return self.view(table, row)

    def place_location(self, row: Any) -> Location | None:
        return getattr(row, "location", None)

    def locations_of(self, row: Any) -> list[Location]:
        """Every address a row names (a store has one; a flight two), for the task's address book."""
        return [v for v in row.__dict__.values() if isinstance(v, Location)]

    # tables whose rows tools show often and never change but for stock: their views are cached
    catalogue_tables: ClassVar[tuple[str, ...]] = ()

    def prepare(self) -> None:
        """Build derived indexes once on the initial world; episode copies share them. The view
        caches start empty (filled on first use, shared by the copies through ``extra``), so a
        reset to a new task renders no row it never shows."""
        self.extra["_view_rows"] = {t: self.table(t).rows for t in self.catalogue_tables}
        self.extra["_views"] = {t: {} for t in self.catalogue_tables}
        self.extra["_view_json"] = {t: {} for t in self.catalogue_tables}
        self.build_indexes()

    def build_indexes(self) -> None:
        """A domain's search indexes and lookups, built by ``prepare`` after the views. A hook
        rather than an override of ``prepare``, so a world holding several domains' tables (the
        cross-scenario one) can run each domain's in turn."""
