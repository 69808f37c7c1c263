"""world_state.core: tables, seeded ids, the clock, haversine, history, snapshot/restore."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from pydantic import ValidationError

from servicegym.world_state.core import (
    EARTH_RADIUS_M,
    Clock,
    History,
    IdCounter,
    Table,
    haversine_m,
    parse_time,
)
from servicegym.world_state.delivery import Product, Store, build_delivery_world
from servicegym.world_state.life import Location
from tests.conftest import FIRST_NEW_ORDER, HOME, OPEN_STORE, PAID_ORDER, QUINOA_SALAD, UNPAID_ORDER, make_delivery_spec


def _product(pid: str = "X1", **kw) -> Product:
    fields = {"product_id": pid, "name": "n", "store_id": "S", "store_name": "s", "price": 1.0} | kw
    return Product(**fields)


def test_entities_are_frozen_and_reject_unknown_fields():
    p = _product()
    with pytest.raises(ValidationError):
        p.price = 2.0
    with pytest.raises(ValidationError):
        _product(colour="red")
    assert p.key == "X1"
    assert Location(address="a", longitude=1, latitude=2).key == "a"


def test_table_put_insert_update_delete():
    t = Table("products", Product)
    t.insert(_product("A"))
    t.insert(_product("B"))
    assert len(t) == 2 and "A" in t and [p.product_id for p in t] == ["A", "B"]
    with pytest.raises(KeyError, match="already exists"):
        t.insert(_product("A"))
    old = t.require("A")
    new = t.update("A", price=9.5)
    assert new.price == 9.5 and t.get("A") is new
    assert old.price == 1.0, "update replaces the row, the old object is untouched"
    with pytest.raises(KeyError, match="no record"):
        t.require("Z")
    with pytest.raises(KeyError):
        t.update("Z", price=1.0)
    t.delete("B")
    assert "B" not in t and t.get("B") is None
    with pytest.raises(KeyError):
        t.delete("B")


def test_id_counter_is_per_prefix_and_seedable():
    ids = IdCounter()
    assert [ids.next("A"), ids.next("A"), ids.next("B", width=2)] == ["A001", "A002", "B01"]
    resumed = IdCounter({"A": 41})
    assert resumed.next("A") == "A042"
    assert ids.counts == {"A": 2, "B": 1}


def test_clock_parse_text_advance():
    c = Clock.parse(" 2025-06-21 23:50:00 ")
    assert c.text() == "2025-06-21 23:50:00"
    c.advance(15)
    assert c.text() == "2025-06-22 00:05:00"
    with pytest.raises(ValueError):
        parse_time("2025-06-21T23:50:00")
    with pytest.raises(ValueError):
        parse_time("tomorrow")


def test_haversine_known_distances():
    # one degree of longitude on the equator is 2*pi*R/360
    assert haversine_m(0, 0, 1, 0) == pytest.approx(2 * math.pi * EARTH_RADIUS_M / 360, rel=1e-12)
    assert haversine_m(0, 0, 1, 0) == pytest.approx(111_194.93, abs=0.01)
    # pole to pole is half the circumference, whatever the longitudes
    assert haversine_m(10, -90, 120, 90) == pytest.approx(math.pi * EARTH_RADIUS_M, rel=1e-12)
    # antipodes, and symmetry
    assert haversine_m(0, 0, 180, 0) == pytest.approx(math.pi * EARTH_RADIUS_M, rel=1e-12)
    a = (116.397, 39.909)  # Beijing, Tiananmen
    b = (121.473, 31.230)  # Shanghai, People's Square
    assert haversine_m(*a, *b) == pytest.approx(haversine_m(*b, *a), rel=1e-15)
    assert haversine_m(*a, *b) == pytest.approx(1_067_000, rel=0.005)
    assert haversine_m(*a, *a) == 0.0


def test_history_records_and_answers_called():
    h = History()
    h.append(step=0, time="t", kind="message", role="user", content="hi")
    h.append(step=1, time="t", kind="tool_call", name="get_delivery_order_detail",
             arguments={"order_id": "O1"}, outcome="executed")
    h.append(step=1, time="t", kind="tool_call", name="get_delivery_order_detail",
             arguments={"order_id": "O2"}, outcome="rejected")
    assert [e.index for e in h] == [0, 1, 2]
    assert h.called("get_delivery_order_detail", "O1")
    assert h.called("get_delivery_order_detail")
    assert not h.called("get_delivery_order_detail", "O2"), "a rejected call does not count"
    assert not h.called("get_delivery_order_status", "O1")
    assert len(h.tool_calls()) == 2 and len(h.tool_calls("executed")) == 1
    assert [m.content for m in h.messages("user")] == ["hi"] and h.messages("assistant") == []


def test_build_world_indexes_spec(initial_world):
    w = initial_world
    assert w.user_id == "U000001"
    assert w.clock.text() == "2025-06-21 11:20:00"
    assert len(w.table("stores")) == 4 and len(w.table("products")) == 12
    assert set(w.table("orders").rows) == {UNPAID_ORDER, PAID_ORDER}
    # the user's addresses plus every store's address are known to the map
    assert HOME in w.table("locations") and len(w.table("locations")) == 2 + 4
    assert [p.product_id for p in w.products_of(OPEN_STORE)] == ["P001", "P002", "P003"]
    assert isinstance(w.table("stores").require("S002"), Store)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s["stores"][0].update(rating=5), "world.stores.0.rating"),
        (lambda s: s["products"][3].pop("price"), "world.products.3.price"),
        (lambda s: s.pop("user_id"), "world.user_id"),
        (lambda s: s.update(time="noon"), "world.time"),
    ],
)
def test_build_world_rejects_malformed_spec(mutate, message):
    spec = make_delivery_spec()
    mutate(spec)
    with pytest.raises(ValueError, match=message):
        build_delivery_world(spec)


def test_snapshot_restore_roundtrip(world):
    before = world.state_dict()
    snap = world.snapshot()
    world.table("products").update(QUINOA_SALAD, quantity=0)
    world.table("orders").delete(PAID_ORDER)
    world.table("orders").update(UNPAID_ORDER, status="cancelled")
    world.ids.next("T1D", 2)
    world.clock.advance(30)
    world.extra["user_id"] = "someone else"
    assert world.state_dict() != before
    world.restore(snap)
    assert world.state_dict() == before
    # a snapshot stays valid for a second restore
    world.table("orders").delete(UNPAID_ORDER)
    world.restore(snap)
    assert world.state_dict() == before


def test_copy_is_independent(world):
    twin = world.copy()
    assert twin.state_dict() == world.state_dict()
    twin.table("orders").update(UNPAID_ORDER, status="paid")
    twin.ids.next("T1D", 2)
    twin.clock.advance(5)
    assert world.table("orders").require(UNPAID_ORDER).status == "unpaid"
    assert world.ids.counts == {} and world.clock.text() == "2025-06-21 11:20:00"
    assert world.new_order_id() == FIRST_NEW_ORDER


def test_state_dict_hides_private_caches_and_is_json(world):
    import json

    world.extra["_cache"] = {"x": object()}
    state = world.state_dict()
    assert "_cache" not in state["extra"]
    json.dumps(state)
    assert state["now"] == "2025-06-21 11:20:00"
    assert isinstance(datetime.strptime(state["now"], "%Y-%m-%d %H:%M:%S"), datetime)
