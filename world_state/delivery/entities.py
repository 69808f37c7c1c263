"""Delivery entities: stores and their products, in VitaBench's shape."""

from __future__ import annotations

from typing import Any, ClassVar

from servicegym.world_state.core import Entity
from servicegym.world_state.life.entities import LifeWorld, Location, OpeningHours
from servicegym.world_state.life.tools import search_index, vitabench_release


class Store(OpeningHours, Entity):
    key_field: ClassVar[str] = "store_id"
    store_id: str
    name: str
    score: float
    location: Location
    tags: list[str] = []
    # opening hours as "HH:MM"; None means open around the clock (VitaBench stores carry none)
    open_time: str | None = None
    close_time: str | None = None


class Product(Entity):
    key_field: ClassVar[str] = "product_id"
    product_id: str
    name: str
    store_id: str
    store_name: str
    price: float
    tags: list[str] = []
    attributes: list[str] = []
    quantity: int | None = None  # stock; None = unlimited
    # the store whose menu lists the product, where that is not ``store_id``: VitaBench data has
    # products naming another store (or one absent from the task); the listing store sells them,
    # as in VitaBench. Not shown by the tools.
    listed_by: str | None = None

    @property
    def seller(self) -> str:
        """The store that sells the product: the one that lists it."""
        return self.listed_by or self.store_id


def store_search_text(s: Store) -> str:
    return f"{s.name} {' '.join(s.tags)}"


def product_search_text(p: Product) -> str:
    return f"{p.store_name} {p.name} {' '.join(p.tags)}"


# VitaBench's own search texts, which the searches of a VitaBench task's world match against
def vitabench_store_text(s: Store) -> str:
    """The name, then the tags joined by commas with no separator after the name."""
    return s.name + ",".join(s.tags)


def vitabench_product_text(p: Product) -> str:
    """The store's name, the product's name and the tag list as Python prints it."""
    return f"{p.store_name} {p.name} {list(p.tags)}"


class DeliveryWorld(LifeWorld):
    schema = {**LifeWorld.schema, "stores": Store, "products": Product}
    place_tables = ("stores",)
    order_prefix = "D"

    def products_of(self, store_id: str) -> list[Product]:
        """The products the store sells: those its menu lists."""
        index: dict[str, list[str]] | None = self.extra.get("_store_products")
        products = self.table("products")
        if index is None:
            index = {}
            for p in products:
                index.setdefault(p.seller, []).append(p.product_id)
            # the catalogue's structure never changes within an episode, only stock does
            self.extra["_store_products"] = index
        return [products.rows[pid] for pid in index.get(store_id, ()) if pid in products.rows]

    catalogue_tables = ("stores", "products")

    def build_indexes(self) -> None:
        self.products_of("")
        if vitabench_release(self):
            search_index(self, "stores", vitabench_store_text, "vitabench_stores")
            search_index(self, "products", vitabench_product_text, "vitabench_products")
        else:
            search_index(self, "stores", store_search_text)
            search_index(self, "products", product_search_text)

    def render_row(self, table: str, row: Any) -> dict[str, Any]:
        if table == "stores" and row.open_time is None:
            return row.model_dump(mode="json", exclude={"open_time", "close_time"})  # VitaBench stores: no hours
        if table == "products":
            return row.model_dump(mode="json", exclude={"listed_by"})
        return row.model_dump(mode="json")
