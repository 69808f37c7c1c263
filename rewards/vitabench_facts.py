"""What VitaBench's compiled natural-language items read of a finished episode.

``record_facts`` turns a final order, booking or reservation into the ``RecordFacts`` a compiled item
(``rewards/nl_rubric/``) checks, finding its products in the catalogue (``catalogue_product``);
``place_info`` turns a store, shop or travel place into its ``PlaceInfo``; ``episode_orders`` lists
the orders the episode made and did not cancel (for items about several orders at once) and
``executed_tools`` the tools it executed (for process items). The loader (``envs/tasks/vitabench/``)
reads the gold records' places and products with the same functions.
"""

from __future__ import annotations

from typing import Any

from servicegym.rewards.nl_rubric import LineFacts, PlaceInfo, RecordFacts
from servicegym.rewards.nl_rubric.world import TRAVEL_TABLES, travel_place
from servicegym.rewards.rubric import EpisodeView
from servicegym.world_state.core import World


def place_info(world: World, place_id: str) -> PlaceInfo | None:
    """A store or shop of ``world`` as the compiled items read it."""
    for table, name_field in (("stores", "name"), ("shops", "shop_name")):
        if table in world.tables:
            row = world.table(table).get(place_id)
            if row is not None:
                loc = getattr(row, "location", None)
                return PlaceInfo(place_id=place_id, name=str(getattr(row, name_field, "") or ""),
                                 tags=tuple(row.tags or ()), category=str(getattr(row, "category", "") or ""),
                                 score=float(row.score or 0.0), longitude=getattr(loc, "longitude", None),
                                 latitude=getattr(loc, "latitude", None), address=str(getattr(loc, "address", "") or ""))
    for table, kind, _owner, name_field, _products, _type in TRAVEL_TABLES:
        if table in world.tables:
            row = world.table(table).get(place_id)
            if row is not None:
                return travel_place(kind, name_field, row)
    return None


def catalogue_product(world: World, place_id: str, product_id: str) -> Any:
    """The catalogue row of a product sold at a place (delivery ``products``, in-store
    ``shop_products``, a travel place's dated rooms, tickets or seats)."""
    if "products" in world.tables:
        row = world.table("products").get(product_id)
        if row is not None:
            return row
    if "shop_products" in world.tables:
        row = world.table("shop_products").get(f"{place_id}/{product_id}")
        if row is not None:
            return row
    for _table, _kind, owner, _name, products, _type in TRAVEL_TABLES:
        if products in world.tables:
            row = world.table(products).get(product_id)
            if row is not None and getattr(row, owner) == place_id:
                return row
    return None


def record_facts(world: World, table: str, row: Any) -> RecordFacts:
    """A final order, booking or reservation as the compiled items read it."""
    if table != "orders":
        return RecordFacts(table=table, record_id=row.key, place_id=row.shop_id, status=row.status,
                           customer_count=row.customer_count)
    lines = []
    for x in row.products:
        cat = catalogue_product(world, row.store_id, x.product_id)
        lines.append(LineFacts(product_id=x.product_id, name=x.name or getattr(cat, "name", ""),
                               tags=tuple(x.tags or getattr(cat, "tags", ()) or ()), attributes=x.attributes or "",
                               quantity=x.quantity, price=float(x.price),
                               options=tuple(getattr(cat, "attributes", ()) or ()), date=str(getattr(x, "date", "") or "")))
    loc = row.location
    return RecordFacts(table="orders", record_id=row.order_id, place_id=row.store_id, status=row.status,
                       lines=tuple(lines), note=row.note or "", address=loc.address if loc else "",
                       longitude=loc.longitude if loc else None, latitude=loc.latitude if loc else None,
                       total=float(row.total_price))


def episode_orders(view: EpisodeView, params: dict[str, Any]) -> list[tuple[RecordFacts, PlaceInfo | None]]:
    """The orders the episode made and did not cancel, each with its place (``JointSpec`` items)."""
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    out = []
    for row in view.world.table("orders"):
        if row.key in initial_ids or row.status == "cancelled":
            continue
        facts = record_facts(view.world, "orders", row)
        out.append((facts, place_info(view.world, facts.place_id)))
    return out


def executed_tools(view: EpisodeView) -> frozenset[str]:
    """The names of the tools executed in the episode."""
    return frozenset(e.name for e in view.history.tool_calls("executed"))
