"""Online-travel (VitaBench "OTA") entities: hotels, attractions, flights and trains, their
dated products, and the payment ledger of travel orders.

VitaBench nests each place's products inside it; here a product is its own row (one room type
for one night, one ticket type for one day, one seat class on one date) in a table beside its
place, so stock changes one frozen row at a time and a snapshot stays a shallow copy.

``KINDS`` describes the four product kinds once (tables, id field, type field, order-id prefix),
so the tools and the rubric checks are written once for all of them. ``TRAVEL_SCHEMA`` and
``TRAVEL_PLACE_TABLES`` are what any world holding travel data adds to its own (``TravelWorld``
here; a cross-scenario world adds them beside the delivery and in-store tables).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from operator import attrgetter
from typing import Any, ClassVar, Literal

from servicegym.world_state.core import DATE_FORMAT, Entity, World
from servicegym.world_state.life.entities import LifeWorld, Location

TravelKind = Literal["hotel", "attraction", "flight", "train"]
TRAVEL_KINDS: tuple[TravelKind, ...] = ("hotel", "attraction", "flight", "train")
# the statuses a travel order can have; VitaBench's OTA tools know no later life-cycle stage
TRAVEL_STATUSES = ("unpaid", "paid", "cancelled")


class Hotel(Entity):
    key_field: ClassVar[str] = "hotel_id"
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int
    location: Location
    tags: list[str] = []


class HotelRoom(Entity):
    """One room type of a hotel for one night (``date`` is the night's check-in date)."""

    key_field: ClassVar[str] = "product_id"
    product_id: str
    hotel_id: str
    room_type: str
    date: str
    price: float
    quantity: int | None = None  # rooms left; None = unlimited


class Attraction(Entity):
    key_field: ClassVar[str] = "attraction_id"
    attraction_id: str
    attraction_name: str
    location: Location
    description: str = ""
    score: float
    opening_hours: str = ""
    ticket_price: float = 0.0


class AttractionTicket(Entity):
    key_field: ClassVar[str] = "product_id"
    product_id: str
    attraction_id: str
    ticket_type: str
    date: str
    price: float
    quantity: int | None = None


class Flight(Entity):
    """A scheduled flight; times are ``HH:MM`` of the travel date, an arrival earlier than the
    departure lands the next day."""

    key_field: ClassVar[str] = "flight_id"
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []


class FlightSeat(Entity):
    key_field: ClassVar[str] = "product_id"
    product_id: str
    flight_id: str
    seat_type: str
    date: str
    price: float
    quantity: int | None = None


class Train(Entity):
    """A scheduled train; times as for ``Flight``."""

    key_field: ClassVar[str] = "train_id"
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: list[str] = []


class TrainSeat(Entity):
    key_field: ClassVar[str] = "product_id"
    product_id: str
    train_id: str
    seat_type: str
    date: str
    price: float
    quantity: int | None = None


class LedgerEntry(Entity):
    """Money moved for a travel order: a payment by the user or a refund to them."""

    key_field: ClassVar[str] = "entry_id"
    entry_id: str
    order_id: str
    kind: Literal["payment", "refund"]
    amount: float
    reason: str = ""
    time: str = ""


@dataclass(frozen=True)
class Kind:
    """Where one product kind lives and how its tools name things."""

    name: TravelKind
    places: str  # table of the places (hotels, ...)
    products: str  # table of their dated products
    owner: str  # the product's field naming its place, also the place's key
    type_field: str  # room_type / ticket_type / seat_type
    name_field: str  # the place's display name field
    order_prefix: str  # new order ids: <task_key><prefix><nn>


KINDS: dict[str, Kind] = {
    "hotel": Kind("hotel", "hotels", "hotel_rooms", "hotel_id", "room_type", "hotel_name", "HT"),
    "attraction": Kind(
        "attraction", "attractions", "attraction_tickets", "attraction_id", "ticket_type", "attraction_name", "AT"
    ),
    "flight": Kind("flight", "flights", "flight_seats", "flight_id", "seat_type", "flight_number", "FL"),
    "train": Kind("train", "trains", "train_seats", "train_id", "seat_type", "train_number", "TR"),
}
TRANSPORT_KINDS = ("flight", "train")

TRAVEL_SCHEMA: dict[str, type[Entity]] = {
    "hotels": Hotel,
    "hotel_rooms": HotelRoom,
    "attractions": Attraction,
    "attraction_tickets": AttractionTicket,
    "flights": Flight,
    "flight_seats": FlightSeat,
    "trains": Train,
    "train_seats": TrainSeat,
    "travel_ledger": LedgerEntry,
}
# flights and trains have no single ``location`` (``get_nearby`` skips them), but their airports
# and stations still enter the task's address book through ``LifeWorld.locations_of``
TRAVEL_PLACE_TABLES: tuple[str, ...] = ("hotels", "attractions", "flights", "trains")


@lru_cache(maxsize=4096)
def parse_day(text: str) -> datetime:
    """Cached (datetimes are immutable): a travel write reads the same few dates several times."""
    return datetime.strptime(text.strip(), DATE_FORMAT)


def day_text(day: datetime) -> str:
    return day.strftime(DATE_FORMAT)


def add_days(text: str, days: int) -> str:
    return day_text(parse_day(text) + timedelta(days=days))


@lru_cache(maxsize=4096)
def minutes_of(hhmm: str) -> int:
    """Minutes after midnight of ``HH:MM`` (seconds, if present, are ignored)."""
    h, m = hhmm.strip().split(":")[:2]
    return int(h) * 60 + int(m)


def departure_at(place: Any, date: str) -> datetime:
    """When a flight or train leaves on ``date``."""
    return parse_day(date) + timedelta(minutes=minutes_of(place.departure_time))


def arrival_at(place: Any, date: str) -> datetime:
    """When a flight or train that leaves on ``date`` arrives (the next day if overnight)."""
    dep, arr = minutes_of(place.departure_time), minutes_of(place.arrival_time)
    return parse_day(date) + timedelta(minutes=arr + (24 * 60 if arr < dep else 0))


INDEX_HOME = "_travel_indexes"


def index_home(world: World) -> dict[str, Any]:
    """Where a world's catalogue indexes live: the dict its ``prepare`` made (``extra[INDEX_HOME]``,
    shared by every episode copy, so an index built on first use in any episode serves the task's
    later ones too), else the world's own ``extra`` (a world that was never prepared)."""
    home = world.extra.get(INDEX_HOME)
    return world.extra if home is None else home


def products_by_slot(world: World, kind: Kind) -> dict[tuple[str, str, str], str]:
    """``(owner id, type, date) -> product id`` of a kind's catalogue, built once per task.

    The catalogue's structure never changes within an episode (only stock does), so the index
    is kept where ``index_home`` says and shared by the episode copies of the initial world.
    """
    home = index_home(world)
    key = f"_slots_{kind.products}"
    index = home.get(key)
    if index is None:
        index = {}
        slot_of = attrgetter(kind.owner, kind.type_field, "date")
        for p in world.table(kind.products):
            index.setdefault(slot_of(p), p.product_id)
        home[key] = index
    return index


def products_of(world: World, kind: Kind, owner_id: str) -> list[Entity]:
    """A place's products, ordered by date then type (the catalogue order within a date)."""
    home = index_home(world)
    key = f"_owned_{kind.products}"
    index = home.get(key)
    if index is None:
        owned: dict[str, list[Entity]] = {}
        owner_of = attrgetter(kind.owner)
        for p in world.table(kind.products):
            owned.setdefault(owner_of(p), []).append(p)
        by_date = attrgetter("date")
        index = {owner: [p.product_id for p in sorted(ps, key=by_date)] for owner, ps in owned.items()}
        home[key] = index
    rows = world.table(kind.products).rows
    return [rows[pid] for pid in index.get(owner_id, ()) if pid in rows]


class TravelWorld(LifeWorld):
    """A travel task's database: the shared life-service tables plus ``TRAVEL_SCHEMA``."""

    schema = {**LifeWorld.schema, **TRAVEL_SCHEMA}
    place_tables = TRAVEL_PLACE_TABLES
    # ``build_life_world`` hands over fresh row dicts: taken copy-on-write, not copied again
    shares_given_tables = True

    def build_indexes(self) -> None:
        # the catalogue indexes are built on first use (a reset to a new task pays for none that
        # its episode never reads); the dict made here holds them for every copy of this world
        self.extra[INDEX_HOME] = {}
