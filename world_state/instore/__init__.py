"""In-store services: shops, their packages and vouchers, seat bookings and service reservations,
and the sixteen in-store tools (twenty-four with the shared ones)."""

from .entities import Booking, InStoreWorld, Reservation, Shop, ShopProduct, product_key
from .tools import INSTORE_TOOLS, TOOLS, looked_up

__all__ = [
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
