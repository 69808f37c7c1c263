"""In-store entities: shops, their products, seat bookings and service reservations, in VitaBench's shape.

A shop's products live in their own table, keyed by (shop, product): VitaBench's data reuses a
product id in several shops (a "P00019" that is a board-game ticket in one shop and a bouquet in
another), and each of those rows has its own stock.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, ClassVar, Literal

from servicegym.world_state.core import Entity
from servicegym.world_state.life.entities import LifeWorld, Location, OpeningHours
from servicegym.world_state.life.tools import SearchIndex, search_index, vitabench_release

InStoreStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "cancelled"]


def product_key(shop_id: str, product_id: str) -> str:
    """The key of a shop's product row."""
    return f"{shop_id}/{product_id}"


class Shop(OpeningHours, Entity):
    key_field: ClassVar[str] = "shop_id"
    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: list[str] = []
    category: str = ""
    enable_book: bool = False  # takes seat/table bookings (``instore_book``)
    book_price: float = 0.0  # the booking fee; 0 means a booking is free (and paid at once)
    enable_reservation: bool = False  # takes service reservations (``instore_reservation``)
    # opening hours as "HH:MM"; None means not known, so any time is accepted (VitaBench shops carry none)
    open_time: str | None = None
    close_time: str | None = None


class ShopProduct(Entity):
    """A package, voucher or set a shop sells; ``quantity`` is its stock (None = unlimited)."""

    product_id: str
    name: str
    shop_id: str
    price: float
    tags: list[str] = []
    quantity: int | None = None

    @property
    def key(self) -> str:
        return product_key(self.shop_id, self.product_id)


class Booking(Entity):
    """A seat or table booked at a shop (VitaBench's ``BookInfo``)."""

    key_field: ClassVar[str] = "book_id"
    book_id: str
    shop_id: str
    book_time: str
    update_time: str = ""
    customer_id: str
    customer_count: int
    book_price: float = 0.0
    status: InStoreStatus

    def json_text(self) -> str | None:
        """The row's JSON as a tool result prints it (``Entity.json_text``), written out: the row
        ``instore_book`` returns (``_row_text``)."""
        return _row_text(self, _BOOKING_FIELDS, _booking_text)


class Reservation(Entity):
    """A service appointment at a shop (VitaBench's ``ReservationInfo``)."""

    key_field: ClassVar[str] = "reservation_id"
    reservation_id: str
    shop_id: str
    reservation_time: str
    update_time: str = ""
    customer_id: str
    customer_count: int
    status: InStoreStatus

    def json_text(self) -> str | None:
        """The row's JSON as a tool result prints it (``Entity.json_text``), written out: the row
        ``instore_reservation`` and ``instore_modify_reservation`` return (``_row_text``)."""
        return _row_text(self, _RESERVATION_FIELDS, _reservation_text)


def _row_text(row: Entity, fields: list[str], write: Any) -> str | None:
    """The row's JSON as the tool result encoder prints it (``world_state.tools.dumps``): ``write`` of its
    values, which refuses (TypeError) a value not of its field's plain type; None (the encoder's text) then,
    or when the row's fields are not ``fields`` in that order."""
    d = row.__dict__
    if list(d) != fields:
        return None
    try:
        return write(*d.values())
    except TypeError:
        return None


_enc = encode_basestring  # a string's JSON text (TypeError for anything but a string, a subclass included)


def _plain(count: Any, price: Any = 0.0) -> None:
    """TypeError unless ``count`` is an int and ``price`` a finite float (what the encoder writes as their repr)."""
    if type(count) is not int or type(price) is not float or not math.isfinite(price):
        raise TypeError("not a plain count or price")


def _booking_text(book_id: str, shop_id: str, book_time: str, update_time: str, customer_id: str, count: int,
                  price: float, status: str) -> str:
    _plain(count, price)
    return (f'{{"book_id": {_enc(book_id)}, "shop_id": {_enc(shop_id)}, "book_time": {_enc(book_time)}, '
            f'"update_time": {_enc(update_time)}, "customer_id": {_enc(customer_id)}, "customer_count": {count!r}, '
            f'"book_price": {price!r}, "status": {_enc(status)}}}')


def _reservation_text(reservation_id: str, shop_id: str, reservation_time: str, update_time: str, customer_id: str,
                      count: int, status: str) -> str:
    _plain(count)
    return (f'{{"reservation_id": {_enc(reservation_id)}, "shop_id": {_enc(shop_id)}, '
            f'"reservation_time": {_enc(reservation_time)}, "update_time": {_enc(update_time)}, '
            f'"customer_id": {_enc(customer_id)}, "customer_count": {count!r}, "status": {_enc(status)}}}')


# the field order the writers above take (a row's dict in another order is left to the encoder)
_BOOKING_FIELDS = list(Booking.model_fields)
_RESERVATION_FIELDS = list(Reservation.model_fields)


class InStoreWorld(LifeWorld):
    """A task database of the in-store domain. The tools read only the four tables below (and the
    shared ones), so any life world that holds them, e.g. a cross-scenario one, can run them."""

    schema = {
        **LifeWorld.schema,
        "shops": Shop,
        "shop_products": ShopProduct,
        "books": Booking,
        "reservations": Reservation,
    }
    place_tables = ("shops",)
    order_prefix = "I"

    catalogue_tables = ("shops", "shop_products")

    def build_indexes(self) -> None:
        if vitabench_release(self):
            vitabench_shop_index(self)
            vitabench_product_index(self)
        else:
            shop_index(self)
            product_index(self)

    def render_row(self, table: str, row: Any) -> dict[str, Any]:
        if table == "shops" and row.open_time is None:
            return row.model_dump(mode="json", exclude={"open_time", "close_time"})  # VitaBench shops: no hours
        return row.model_dump(mode="json")


def shop_index(world: LifeWorld) -> SearchIndex:
    """What shop searches match: name, category and tags."""
    return search_index(world, "shops", lambda s: f"{s.shop_name} {s.category} {' '.join(s.tags)}")


def product_index(world: LifeWorld) -> SearchIndex:
    """What product searches match: the shop's name, the product's name and its tags."""
    shops = world.table("shops").rows

    def text(p: ShopProduct) -> str:
        shop = shops.get(p.shop_id)
        return f"{shop.shop_name if shop else ''} {p.name} {' '.join(p.tags)}"

    return search_index(world, "shop_products", text)


def vitabench_shop_index(world: LifeWorld) -> SearchIndex:
    """What a VitaBench task's shop searches match, as in VitaBench: the name, then the tags,
    joined by commas."""
    return search_index(world, "shops", lambda s: ",".join([s.shop_name, *s.tags]), "vitabench_shops")


def vitabench_product_index(world: LifeWorld) -> SearchIndex:
    """What a VitaBench task's product searches match, as in VitaBench: the product's name, then
    its tags, joined by commas (not the shop's name)."""
    return search_index(world, "shop_products", lambda p: ",".join([p.name, *p.tags]), "vitabench_shop_products")
