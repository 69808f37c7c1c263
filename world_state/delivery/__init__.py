"""Food delivery: stores, their products, and the twelve delivery tools (twenty with the shared ones)."""

from __future__ import annotations

from typing import Any

from servicegym.world_state.delivery.entities import DeliveryWorld, Product, Store
from servicegym.world_state.delivery.tools import DELIVERY_TOOLS, TOOLS, delivery_minutes
from servicegym.world_state.life.spec import build_life_world

__all__ = ["build_delivery_world", "DeliveryWorld", "Product", "Store", "DELIVERY_TOOLS", "TOOLS", "delivery_minutes"]


def build_delivery_world(spec: dict[str, Any]) -> DeliveryWorld:
    """Validate a task's world spec and build its initial ``DeliveryWorld`` (``WorldSpecError`` names a bad field)."""
    return build_life_world(DeliveryWorld, spec)
