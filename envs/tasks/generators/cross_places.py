"""The places of a cross-scenario task as its builder (``cross_builder._Builder``, a subclass of
``CrossPlaces``) draws them: ids, street addresses and place names not used yet in the world, the
dates and times of the trip (days counted from the arrival day), the flights and trains and the
hotels on the task's ``TravelCatalogue``, the shops with their packages on a ``ShopWorld`` and the
food stores with their dishes on a ``StoreWorld`` (look-alikes of a shop or a store included).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import IdPool, Retry, street_address
from servicegym.envs.tasks.generators.content_delivery import CUISINES
from servicegym.envs.tasks.generators.content_travel import CITIES, FLIGHT_CLASSES, TRAIN_CLASSES
from servicegym.envs.tasks.generators.delivery import StoreWorld
from servicegym.envs.tasks.generators.instore import ShopWorld
from servicegym.envs.tasks.generators.travel import TravelCatalogue
from servicegym.world_state.core import DATE_FORMAT

SHOP_HOURS = ("10:00", "22:00")
STORE_HOURS = ("10:00", "23:30")


class CrossPlaces:
    """The place drawers of ``_Builder``, which sets up what they read: the task's ``rng`` and
    ``ids``, the addresses and names used so far, the travel catalogue (``cat``), the shop and store
    worlds, the memoised dates (``days``) and, once drawn, the arrival day, the nights of the stay,
    the destination city and the cuisine of the delivery."""

    rng: random.Random
    ids: IdPool
    addresses: set[str]
    names: set[str]
    days: dict[int, str]
    arrive: datetime
    n0: int
    city_b: str
    cuisine: str
    cat: TravelCatalogue
    shop_world: ShopWorld
    store_world: StoreWorld

    # ----- ids, names, addresses ----------------------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _address(self, city: str, district: str | None = None) -> str:
        """A street address not used yet in this world: a delivery names its address by text, so
        two places sharing one would be confused."""
        for _ in range(40):
            text = street_address(self.rng, district or self.rng.choice(CITIES[city][2]), city)
            if text not in self.addresses:
                self.addresses.add(text)
                return text
        raise Retry("no free address")

    def _loc(self, city: str, lon: float, lat: float, district: str | None = None) -> dict[str, Any]:
        return {"address": self._address(city, district), "longitude": lon, "latitude": lat}

    def _name(self, stems: tuple[str, ...] | list[str]) -> str:
        """A place name not used yet (look-alikes must still be told apart by name)."""
        for _ in range(30):
            name = f"{self.rng.choice(stems)} ({self.rng.choice(CITIES[self.city_b][2])} Branch)"
            if name not in self.names:
                self.names.add(name)
                return name
        raise Retry("no free name")

    def day(self, k: int) -> str:
        """The date ``k`` days after the arrival day (memoised: every row and action names dates)."""
        text = self.days.get(k)
        if text is None:
            text = self.days[k] = (self.arrive + timedelta(days=k)).strftime(DATE_FORMAT)
        return text

    def at(self, k: int, minutes: int) -> datetime:
        return self.arrive + timedelta(days=k, minutes=minutes)

    # ----- flights and trains -----------------------------------------------------------------
    def _fares(self, mode: str, base: float, days: tuple[int, ...]) -> dict[str, dict[str, float]]:
        classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        return self.cat.fares(classes, base, [self.day(k) for k in days])

    def _service(self, *args: Any, tags: list[str] | None = None) -> dict[str, Any]:
        """``TravelCatalogue.service`` (mode, from, to, departure, duration, fares) with 20 seats a product."""
        return self.cat.service(*args, stock=20, tags=tags)

    # ----- hotels -----------------------------------------------------------------------------
    def _room_prices(self, star: int, types: list[tuple[str, float]]) -> dict[str, dict[str, float]]:
        return self.cat.room_prices(star, types, [self.day(k) for k in range(-1, self.n0 + 1)])

    def _hotel(
        self, coords: tuple[float, float], star: int, score: float, tags: list[str], prices: dict[str, dict[str, float]]
    ) -> dict[str, Any]:
        def stem() -> str:
            return self.cat.hotel_stem(self.names)

        return self.cat.hotel(self.city_b, stem, coords, star, score, tags, prices, self._address, stock=10)

    # ----- shops and their packages -------------------------------------------------------------
    def _shop(
        self,
        category: str,
        coords: tuple[float, float],
        score: float,
        tags: list[str],
        fee: float,
        stems: tuple[str, ...] | list[str] | None = None,
    ) -> dict[str, Any]:
        return self.shop_world.shop(category, coords, score, tags, stems=stems, hours=SHOP_HOURS, fee=fee)

    def _package(self, shop: dict[str, Any], name: str, price: float, tags: list[str]) -> dict[str, Any]:
        return self.shop_world.product(shop, name, price, tags, 30)

    def _clone_shop(
        self, src: dict[str, Any], coords: tuple[float, float], **changes: Any
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """A look-alike shop (same menu under new ids); returns it and old -> new product ids."""
        return self.shop_world.clone(src, coords, **changes)

    # ----- food stores and their dishes ---------------------------------------------------------
    def _store(
        self,
        cuisine: str,
        city: str,
        coords: tuple[float, float],
        score: float,
        tags: list[str],
        stems: tuple[str, ...] | list[str] | None = None,
    ) -> dict[str, Any]:
        return self.store_world.store(
            cuisine,
            coords,
            score,
            tags,
            name=self._store_name(cuisine, city, stems),
            hours=STORE_HOURS,
            address=lambda: self._address(city),
        )

    def _store_name(self, cuisine: str, city: str, stems: tuple[str, ...] | list[str] | None) -> str:
        """A food store name not used yet in this world (drawn before the store's id)."""
        rng = self.rng
        name = f"{rng.choice(stems or CUISINES[cuisine][0])} ({rng.choice(CITIES[city][2])} Branch)"
        while name in self.names:
            name = f"{rng.choice(CUISINES[cuisine][0])} ({rng.choice(CITIES[city][2])} Branch {len(self.names)})"
        self.names.add(name)
        return name

    def _dish(self, store: dict[str, Any], name: str, price: float, tags: list[str]) -> dict[str, Any]:
        return self.store_world.product(store, name, price, tags, [])

    def _clone_store(
        self, src: dict[str, Any], city: str, coords: tuple[float, float]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        stems = [s for s in CUISINES[self.cuisine][0] if not src["name"].startswith(s)] or list(
            CUISINES[self.cuisine][0]
        )
        name = self._store_name(self.cuisine, city, stems)
        return self.store_world.clone(src, self.cuisine, name, coords, address=lambda: self._address(city))
