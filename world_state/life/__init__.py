"""What the three life-service domains (delivery, in-store, travel) share: locations, weather,
orders and the eight shared VitaBench tools."""

from servicegym.world_state.life.entities import LifeWorld, Location, Order, OrderLine, OrderStatus, Weather
from servicegym.world_state.life.tools import SHARED_TOOLS, geocode, rank

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
