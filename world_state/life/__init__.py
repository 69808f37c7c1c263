"""What the three life-service domains (delivery, in-store, travel) share: locations, weather,
orders and the eight shared VitaBench tools."""

from .entities import Location, Order, OrderLine, OrderStatus, Weather, LifeWorld
from .tools import SHARED_TOOLS, rank, geocode

__all__ = [
    "Location",
    "Order",
    "OrderLine",
    "OrderStatus",
    "Weather",
    "LifeWorld",
    "SHARED_TOOLS",
    "rank",
    "geocode",
]
