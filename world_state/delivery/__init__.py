"""Food delivery: stores, their products, and the twelve delivery tools (twenty with the shared ones)."""

from .entities import DeliveryWorld, Product, Store
from .tools import DELIVERY_TOOLS, TOOLS, delivery_minutes

__all__ = ["DeliveryWorld", "Product", "Store", "DELIVERY_TOOLS", "TOOLS", "delivery_minutes"]
