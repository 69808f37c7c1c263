"""Online travel (VitaBench "OTA"): hotels, attractions, flights and trains with dated stock, a
payment ledger, and the thirty travel tools (thirty-eight with the shared ones)."""

from __future__ import annotations

from typing import Any

from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.travel.entities import (
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
from servicegym.world_state.travel.tools import TOOLS, TRAVEL_TOOLS
from servicegym.world_state.travel.views import net_paid, order_view

__all__ = [
    "build_travel_world",
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


def build_travel_world(spec: dict[str, Any]) -> TravelWorld:
    """Validate a task's world spec and build its initial ``TravelWorld`` (``WorldSpecError`` names a bad field)."""
    return build_life_world(TravelWorld, spec)  # type: ignore[return-value]
