"""Online travel (VitaBench "OTA"): hotels, attractions, flights and trains with dated stock, a
payment ledger, and the thirty travel tools (thirty-eight with the shared ones)."""

from .entities import (
    KINDS,
    TRAVEL_PLACE_TABLES,
    TRAVEL_SCHEMA,
    Attraction,
    AttractionTicket,
    Flight,
    FlightSeat,
    Hotel,
    HotelRoom,
    Kind,
    LedgerEntry,
    Train,
    TrainSeat,
    TravelWorld,
    arrival_at,
    departure_at,
)
from .tools import TOOLS, TRAVEL_TOOLS, net_paid, order_view

__all__ = [
    "KINDS",
    "TRAVEL_PLACE_TABLES",
    "TRAVEL_SCHEMA",
    "Attraction",
    "AttractionTicket",
    "Flight",
    "FlightSeat",
    "Hotel",
    "HotelRoom",
    "Kind",
    "LedgerEntry",
    "Train",
    "TrainSeat",
    "TravelWorld",
    "arrival_at",
    "departure_at",
    "TOOLS",
    "TRAVEL_TOOLS",
    "net_paid",
    "order_view",
]
