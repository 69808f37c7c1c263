"""In-store services: shops, their packages and vouchers, seat bookings and service reservations,
and the sixteen in-store tools (twenty-four with the shared ones)."""

from __future__ import annotations

from typing import Any

from servicegym.world_state.instore.entities import Booking, InStoreWorld, Reservation, Shop, ShopProduct, product_key
from servicegym.world_state.instore.tools import INSTORE_TOOLS, TOOLS, looked_up
from servicegym.world_state.life.spec import build_life_world

__all__ = [
    "build_instore_world",
    "Booking",
    "InStoreWorld",
    "Reservation",
    "Shop",
    "ShopProduct",
    "product_key",
    "INSTORE_TOOLS",
    "TOOLS",
    "looked_up",
]


def build_instore_world(spec: dict[str, Any]) -> InStoreWorld:
    """Validate a task's world spec and build its initial ``InStoreWorld`` (``WorldSpecError`` names a bad field)."""
    return build_life_world(InStoreWorld, spec)
