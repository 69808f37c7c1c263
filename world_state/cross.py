"""The cross-scenario world (VitaBench's headline setting): one user, one clock and one address
book across the three life-service domains, and the 66 tools of all three at once.

``CrossWorld`` owns no entities or tools of its own. Its schema, place tables and catalogue tables
are the union of ``DeliveryWorld``'s, ``InStoreWorld``'s and ``TravelWorld``'s; each row is shown
the way its own domain shows it (``render_row`` and ``place_summary`` are delegated per table to
the domain world that owns the table), and ``prepare`` builds every domain's indexes. The domain
tools read only tables, ``extra`` and the few world methods delegated here, so they run
unchanged.

New ids never collide across domains: each domain's tools pass their own prefix to
``LifeWorld.new_order_id`` (delivery ``D``; in-store orders ``I``, bookings ``B``, reservations
``R``; travel ``HT``, ``AT``, ``FL``, ``TR``), and each prefix has its own seeded counter.
"""

from __future__ import annotations

from typing import Any

from servicegym.world_state.delivery import DELIVERY_TOOLS, DeliveryWorld
from servicegym.world_state.instore import INSTORE_TOOLS, InStoreWorld
from servicegym.world_state.life import SHARED_TOOLS, LifeWorld
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.travel import TRAVEL_TOOLS, TravelWorld

DOMAIN_WORLDS: tuple[type[LifeWorld], ...] = (DeliveryWorld, InStoreWorld, TravelWorld)

# table -> the domain world that owns it (the shared tables belong to LifeWorld itself)
TABLE_OWNER: dict[str, type[LifeWorld]] = {
    name: cls for cls in DOMAIN_WORLDS for name in cls.schema if name not in LifeWorld.schema
}


class CrossWorld(LifeWorld):
    """A task database holding every life-service domain's tables."""

    schema = {name: model for cls in DOMAIN_WORLDS for name, model in cls.schema.items()}
    place_tables = tuple(t for cls in DOMAIN_WORLDS for t in cls.place_tables)
    catalogue_tables = tuple(t for cls in DOMAIN_WORLDS for t in cls.catalogue_tables)
    # ``build_life_world`` hands over fresh row dicts: taken copy-on-write, not copied again
    shares_given_tables = True

    # the delivery tools list a store's menu through the world (the other domains use functions)
    products_of = DeliveryWorld.products_of

    def render_row(self, table: str, row: Any) -> dict[str, Any]:
        return TABLE_OWNER.get(table, LifeWorld).render_row(self, table, row)

    def place_summary(self, table: str, row: Any) -> dict[str, Any]:
        return TABLE_OWNER.get(table, LifeWorld).place_summary(self, table, row)

    def build_indexes(self) -> None:
        for cls in DOMAIN_WORLDS:
            cls.build_indexes(self)


# 8 shared + 12 delivery + 16 in-store + 30 travel, VitaBench's cross-scenario agent
TOOLS = SHARED_TOOLS + DELIVERY_TOOLS + INSTORE_TOOLS + TRAVEL_TOOLS

__all__ = ["CrossWorld", "DOMAIN_WORLDS", "TABLE_OWNER", "TOOLS"]


def build_cross_world(spec: dict[str, Any]) -> CrossWorld:
    """Validate a task's world spec and build its initial ``CrossWorld`` (``WorldSpecError`` names a bad field)."""
    return build_life_world(CrossWorld, spec)  # type: ignore[return-value]
