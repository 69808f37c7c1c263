"""The delivery tools: pre-conditions as code, post-conditions, the delivery-time model."""

from __future__ import annotations

import json

import pytest

from servicegym.world_state.core import History, haversine_m
from servicegym.world_state.delivery import Store, delivery_minutes
from servicegym.world_state.life import Location
from tests.conftest import (
    AVOCADO_TOAST,
    BEEF_SOUP,
    FAR_STORE,
    FIRST_NEW_ORDER,
    HOME,
    HOME_LOC,
    LAMB_SKEWERS,
    NIGHT_STORE,
    NOW,
    OPEN_STORE,
    PAID_ORDER,
    PORK_DUMPLINGS,
    QUINOA_SALAD,
    STOCK_STORE,
    UNPAID_ORDER,
    USER_ID,
    WORK,
    create_args,
)


@pytest.fixture
def history() -> History:
    return History()


def run(toolkit, world, history, name, **arguments):
    return toolkit.call(world, history, name, arguments)


def rejected(result, *fragments: str) -> bool:
    return result.outcome == "rejected" and all(f in result.content for f in fragments)


# ----- delivery time model ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("metres", "minutes"),
    [(0, 25), (76.7, 25), (77, 26), (230.9, 26), (1000, 32), (1535.9, 35), (2500, 41), (10_000, 90)],
)
def test_delivery_minutes_formula(metres, minutes):
    assert delivery_minutes(metres) == minutes
    assert delivery_minutes(metres) == round(25 + int(metres) * 0.006510)


def test_distance_to_time_tool(toolkit, world, history):
    r = run(toolkit, world, history, "delivery_distance_to_time", distance=2500)
    assert r.ok and json.loads(r.content) == 41.0
    assert rejected(run(toolkit, world, history, "delivery_distance_to_time", distance=-1), "must not be negative")


def test_created_order_uses_haversine_and_time_model(toolkit, world, history):
    r = run(toolkit, world, history, "create_delivery_order", **create_args())
    assert r.ok, r.content
    order = json.loads(r.content)
    store = world.table("stores").require(OPEN_STORE).location
    metres = haversine_m(HOME_LOC["longitude"], HOME_LOC["latitude"], store.longitude, store.latitude)
    assert order["order_id"] == FIRST_NEW_ORDER
    assert order["shipping_time"] == round(25 + int(metres) * 0.006510)
    assert order["dispatch_time"] == NOW
    assert order["delivery_time"] == "2025-06-21 11:46:00"
    assert order["status"] == "unpaid" and order["total_price"] == 56.0
    assert order["location"]["address"] == HOME
    assert order["products"][0]["attributes"] == "mild" and order["products"][0]["quantity"] == 2
    assert world.new_order_id() == "T1D02", "ids continue from the seeded counter"


# ----- pre-conditions --------------------------------------------------------------------
def test_modify_needs_detail_of_that_same_order(toolkit, world, history):
    r = run(toolkit, world, history, "modify_delivery_order", order_id=UNPAID_ORDER, note="no onions")
    assert rejected(r, "call `get_delivery_order_detail` for order 'ORD-UNPAID-1' first")
    # the status is not enough, and the detail of another order is not either
    assert run(toolkit, world, history, "get_delivery_order_status", order_id=UNPAID_ORDER).ok
    assert run(toolkit, world, history, "get_delivery_order_detail", order_id=PAID_ORDER).ok
    r = run(toolkit, world, history, "modify_delivery_order", order_id=UNPAID_ORDER, note="no onions")
    assert rejected(r, "get_delivery_order_detail")
    # a rejected detail call does not count either
    assert not run(toolkit, world, history, "get_delivery_order_detail", order_id="nope").ok
    assert run(toolkit, world, history, "get_delivery_order_detail", order_id=UNPAID_ORDER).ok
    r = run(toolkit, world, history, "modify_delivery_order", order_id=UNPAID_ORDER, note="no onions")
    assert r.ok and json.loads(r.content)["note"] == "no onions"
    assert world.table("orders").require(UNPAID_ORDER).note == "no onions"


def test_modify_refused_for_cancelled_order(toolkit, world, history):
    run(toolkit, world, history, "get_delivery_order_detail", order_id=UNPAID_ORDER)
    assert run(toolkit, world, history, "cancel_delivery_order", order_id=UNPAID_ORDER).ok
    r = run(toolkit, world, history, "modify_delivery_order", order_id=UNPAID_ORDER, note="x")
    assert rejected(r, "has status 'cancelled'")


def test_cancel_needs_status_lookup_and_a_cancellable_status(toolkit, world, history):
    r = run(toolkit, world, history, "cancel_delivery_order", order_id=PAID_ORDER)
    assert rejected(r, "get_delivery_order_status", "get_delivery_order_detail", "first")
    assert run(toolkit, world, history, "get_delivery_order_status", order_id=PAID_ORDER).ok
    r = run(toolkit, world, history, "cancel_delivery_order", order_id=PAID_ORDER)
    assert r.ok and world.table("orders").require(PAID_ORDER).status == "cancelled"
    r = run(toolkit, world, history, "cancel_delivery_order", order_id=PAID_ORDER)
    assert rejected(r, "has status 'cancelled'")
    assert rejected(run(toolkit, world, history, "cancel_delivery_order", order_id="ORD-404"), "does not exist")


def test_cancel_refused_for_delivered_order(toolkit, world, history):
    world.table("orders").update(PAID_ORDER, status="delivered")
    run(toolkit, world, history, "get_delivery_order_status", order_id=PAID_ORDER)
    assert rejected(run(toolkit, world, history, "cancel_delivery_order", order_id=PAID_ORDER), "'delivered'")


def test_pay_only_unpaid_orders(toolkit, world, history):
    assert rejected(run(toolkit, world, history, "pay_delivery_order", order_id=PAID_ORDER), "has status 'paid'",
                    "['unpaid']")
    assert rejected(run(toolkit, world, history, "pay_delivery_order", order_id="ORD-404"), "does not exist")
    r = run(toolkit, world, history, "pay_delivery_order", order_id=UNPAID_ORDER)
    assert r.ok and world.table("orders").require(UNPAID_ORDER).status == "paid"
    assert rejected(run(toolkit, world, history, "pay_delivery_order", order_id=UNPAID_ORDER), "'paid'")


def test_order_tools_refuse_other_order_types(toolkit, world, history):
    order = world.table("orders").require(PAID_ORDER)
    world.table("orders").put(order.model_copy(update={"order_id": "H1", "order_type": "hotel", "status": "unpaid"}))
    for name in ("pay_delivery_order", "get_delivery_order_status", "get_delivery_order_detail"):
        assert rejected(run(toolkit, world, history, name, order_id="H1"), "is a hotel order, not a delivery order")


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        ({"product_ids": [LAMB_SKEWERS]}, ["product P004 belongs to store S002, not S001"]),
        ({"product_ids": ["P999"]}, ["product 'P999' does not exist"]),
        ({"store_id": "S999"}, ["store 'S999' does not exist"]),
        ({"user_id": "U999"}, ["user_id 'U999' is not this user's id"]),
        ({"dispatch_time": "2025-06-21 11:19:59"}, ["is before the current time 2025-06-21 11:20:00"]),
        ({"dispatch_time": "2025-06-21 noon"}, ["must have the form YYYY-MM-DD HH:MM:SS"]),
        ({"store_id": NIGHT_STORE, "product_ids": [LAMB_SKEWERS], "attributes": None},
         ["store S002 is closed at 11:20 (open 17:00-02:00)"]),
        ({"store_id": STOCK_STORE, "product_ids": [QUINOA_SALAD], "product_cnts": [3], "attributes": None},
         ["only 2 of product P007 left, 3 requested"]),
        ({"store_id": STOCK_STORE, "product_ids": [QUINOA_SALAD, QUINOA_SALAD], "product_cnts": [1, 2],
          "attributes": None}, ["only 2 of product P007 left, 3 requested"]),
        ({"store_id": STOCK_STORE, "product_ids": [AVOCADO_TOAST], "product_cnts": [1], "attributes": None},
         ["only 0 of product P008 left"]),
        ({"address": "Mars Base One, Olympus Mons"}, ["no coordinates known for address 'Mars Base One"]),
        ({"address": "   "}, ["address is empty"]),
        ({"product_cnts": [2, 1]}, ["product_cnts has 2 entries for 1 product_ids"]),
        ({"product_cnts": [0]}, ["positive integer"]),
        ({"product_ids": [], "product_cnts": []}, ["at least one product"]),
        ({"attributes": ["mild", "hot"]}, ["attributes has 2 entries for 1 products"]),
        ({"product_cnts": ["two"]}, ["invalid arguments", "product_cnts.0", "Usage: create_delivery_order("]),
    ],
)
def test_create_refusals(toolkit, world, history, overrides, fragments):
    before = world.state_dict()
    r = run(toolkit, world, history, "create_delivery_order", **create_args(**overrides))
    assert rejected(r, *fragments), r.content
    assert r.content.startswith("create_delivery_order refused:") or r.content.startswith("invalid arguments")
    assert world.state_dict() == before


def test_create_accepts_open_store_inside_its_hours_and_fuzzy_address(toolkit, world, history):
    r = run(toolkit, world, history, "create_delivery_order",
            **create_args(store_id=NIGHT_STORE, product_ids=[LAMB_SKEWERS], product_cnts=[10],
                          attributes=None, dispatch_time="2025-06-21 23:30:00"))
    assert r.ok, r.content
    # an address close in wording to a known one geocodes to it
    r = run(toolkit, world, history, "create_delivery_order",
            **create_args(address="no. 28 fengning road, wuhua district kunming", attributes=None))
    assert r.ok and json.loads(r.content)["location"]["address"] == HOME


def test_store_hours_past_midnight():
    loc = Location(address="a", longitude=0, latitude=0)
    night = Store(store_id="N", name="n", score=4, location=loc, open_time="17:00", close_time="02:00")
    day = Store(store_id="D", name="d", score=4, location=loc, open_time="09:00", close_time="21:00")
    always = Store(store_id="A", name="a", score=4, location=loc)
    assert [night.is_open_at(t) for t in ("16:59", "17:00", "23:59", "01:59", "02:00", "11:20")] == [
        False, True, True, True, False, False]
    assert [day.is_open_at(t) for t in ("08:59", "09:00", "20:59", "21:00")] == [False, True, True, False]
    assert always.is_open_at("03:00")


def test_stock_is_taken_and_restored(toolkit, world, history):
    args = create_args(store_id=STOCK_STORE, product_ids=[QUINOA_SALAD], product_cnts=[2], attributes=None, address=WORK)
    r = run(toolkit, world, history, "create_delivery_order", **args)
    assert r.ok and world.table("products").require(QUINOA_SALAD).quantity == 0
    assert rejected(run(toolkit, world, history, "create_delivery_order", **args), "only 0 of product P007 left")
    oid = json.loads(r.content)["order_id"]
    run(toolkit, world, history, "get_delivery_order_status", order_id=oid)
    assert run(toolkit, world, history, "cancel_delivery_order", order_id=oid).ok
    assert world.table("products").require(QUINOA_SALAD).quantity == 2
    # unlimited stock stays unlimited
    assert run(toolkit, world, history, "create_delivery_order", **create_args()).ok
    assert world.table("products").require(BEEF_SOUP).quantity is None


def test_reads_need_existing_records(toolkit, world, history):
    assert rejected(run(toolkit, world, history, "get_delivery_store_info", store_id="S9"), "store 'S9' does not exist")
    assert rejected(run(toolkit, world, history, "get_delivery_product_info", product_id="P9"), "does not exist")
    info = json.loads(run(toolkit, world, history, "get_delivery_store_info", store_id=OPEN_STORE).content)
    assert [p["product_id"] for p in info["products"]] == ["P001", "P002", "P003"]
    assert "open_time" not in info, "24h stores show no opening hours"
    night = json.loads(run(toolkit, world, history, "get_delivery_store_info", store_id=NIGHT_STORE).content)
    assert night["open_time"] == "17:00" and night["close_time"] == "02:00"


def test_search_orders_and_user_check(toolkit, world, history):
    r = run(toolkit, world, history, "search_delivery_orders", user_id=USER_ID)
    assert r.ok and [o["order_id"] for o in json.loads(r.content)] == [UNPAID_ORDER]
    r = run(toolkit, world, history, "search_delivery_orders", user_id=USER_ID, status="paid")
    assert [o["order_id"] for o in json.loads(r.content)] == [PAID_ORDER]
    assert rejected(run(toolkit, world, history, "search_delivery_orders", user_id="U2"), "not this user's id")
    assert rejected(run(toolkit, world, history, "search_delivery_orders", user_id=USER_ID, status="lost"),
                    "invalid arguments")


def test_searches_rank_relevant_first(toolkit, world, history):
    r = run(toolkit, world, history, "delivery_store_search_recommend", keywords=["salad"], top_k=2)
    stores = json.loads(r.content)
    assert stores[0]["store_id"] == STOCK_STORE and len(stores) <= 2
    r = run(toolkit, world, history, "delivery_product_search_recommend", keywords=["dumplings"])
    ids = [p["product_id"] for p in json.loads(r.content)]
    assert PORK_DUMPLINGS in ids[:3]
    assert rejected(run(toolkit, world, history, "delivery_product_search_recommend", keywords=[]), "non-empty")
    assert rejected(run(toolkit, world, history, "delivery_product_search_recommend", keywords=["x"], top_k=0),
                    "between 1 and 50")


def test_shared_tools(toolkit, world, history):
    r = run(toolkit, world, history, "address_to_longitude_latitude", address=HOME)
    assert json.loads(r.content) == [HOME_LOC["longitude"], HOME_LOC["latitude"]]
    r = run(toolkit, world, history, "longitude_latitude_to_distance",
            longitude1=0, latitude1=0, longitude2=1, latitude2=0)
    assert json.loads(r.content) == 111195.0
    r = run(toolkit, world, history, "get_nearby", longitude=HOME_LOC["longitude"], latitude=HOME_LOC["latitude"],
            range=1000)
    near = json.loads(r.content)
    assert [s["store_id"] for s in near] == [OPEN_STORE, NIGHT_STORE]
    assert near[0]["distance_m"] <= near[1]["distance_m"] <= 1000
    assert FAR_STORE not in r.content
    r = run(toolkit, world, history, "weather", address="Kunming", date_start="2025-06-21", date_end="2025-06-22")
    assert [w["category"] for w in json.loads(r.content)] == ["rainy", "cloudy"]
    assert rejected(run(toolkit, world, history, "weather", address="Kunming", date_start="21/06", date_end="x"),
                    "YYYY-MM-DD")
    r = run(toolkit, world, history, "get_date_holiday_info", date="2025-05-31")
    assert r.ok and "Dragon Boat" in r.content
    r = run(toolkit, world, history, "get_holiday_date", year="2025", holiday_name="Dragon Boat Festival")
    assert "2025-05-31" in json.loads(r.content)
    r = run(toolkit, world, history, "get_user_all_orders")
    assert {o["order_id"] for o in json.loads(r.content)} == {UNPAID_ORDER, PAID_ORDER}
    r = run(toolkit, world, history, "get_user_historical_behaviors")
    assert json.loads(r.content)["user id"] == USER_ID


# ----- post-conditions -------------------------------------------------------------------
def test_postconditions_hold_for_every_successful_write(toolkit, world, history):
    """``toolkit`` checks post-conditions: a violated one turns the call into an error."""
    calls = [
        ("create_delivery_order", create_args()),
        ("pay_delivery_order", {"order_id": FIRST_NEW_ORDER}),
        ("create_delivery_order", create_args(store_id=STOCK_STORE, product_ids=[QUINOA_SALAD, "P009"],
                                              product_cnts=[1, 3], attributes=None, address=WORK, note="no nuts")),
        ("get_delivery_order_detail", {"order_id": "T1D02"}),
        ("modify_delivery_order", {"order_id": "T1D02", "note": "no nuts, no dairy"}),
        ("cancel_delivery_order", {"order_id": "T1D02"}),
        ("get_delivery_order_detail", {"order_id": UNPAID_ORDER}),
        ("modify_delivery_order", {"order_id": UNPAID_ORDER, "note": "ring twice"}),
        ("pay_delivery_order", {"order_id": UNPAID_ORDER}),
        ("cancel_delivery_order", {"order_id": UNPAID_ORDER}),
        ("get_delivery_order_status", {"order_id": PAID_ORDER}),
        ("cancel_delivery_order", {"order_id": PAID_ORDER}),
    ]
    assert toolkit.check_postconditions
    for name, arguments in calls:
        r = toolkit.call(world, history, name, arguments)
        assert r.ok, (name, r.content)
    writes = [e for e in history.tool_calls("executed") if toolkit.resolve(e.name).kind == "write"]
    assert len(writes) == 9
    orders = world.table("orders")
    assert [orders.require(i).status for i in (FIRST_NEW_ORDER, "T1D02", UNPAID_ORDER, PAID_ORDER)] == [
        "paid", "cancelled", "cancelled", "cancelled"]
    assert world.table("products").require(QUINOA_SALAD).quantity == 2


def test_postcondition_violation_is_caught(world, history):
    """A tool that breaks its promise is reported as an error and undone."""
    from servicegym.world_state.delivery import tools as delivery_tools
    from servicegym.world_state.tools import Toolkit

    broken = delivery_tools.pay_delivery_order
    original = broken.fn
    try:
        broken.fn = lambda w, order_id: "pretended to pay"
        kit = Toolkit([broken], check_postconditions=True)
        before = world.state_dict()
        r = kit.call(world, history, "pay_delivery_order", {"order_id": UNPAID_ORDER})
        assert r.outcome == "error" and "post-condition (the order is paid)" in r.content
        assert world.state_dict() == before
    finally:
        broken.fn = original


# ----- regressions -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("longitude_latitude_to_distance", {"longitude1": float("inf"), "latitude1": 0, "longitude2": 0,
                                            "latitude2": 0}),
        ("delivery_distance_to_time", {"distance": float("nan")}),
        ("delivery_distance_to_time", {"distance": "Infinity"}),
        ("get_nearby", {"longitude": float("nan"), "latitude": 25.0, "range": 1000}),
    ],
)
def test_non_finite_numbers_are_rejected_not_crashing(toolkit, world, history, name, arguments):
    # JSON from a model may carry NaN/Infinity; they used to crash haversine and int() ("error")
    r = toolkit.call(world, history, name, arguments)
    assert rejected(r, "Input should be a finite number", f"Usage: {name}(")


@pytest.mark.parametrize("year", ["²", "9" * 5000, "12345", "-1", "twenty"])
def test_holiday_year_must_be_plain_digits(toolkit, world, history, year):
    # "²".isdigit() is True but int("²") raises; 5000 digits exceed int()'s limit
    r = run(toolkit, world, history, "get_holiday_date", year=year, holiday_name="Spring Festival")
    assert rejected(r, "year must be a number such as 2025")


# ----- VitaBench parity: a world from a VitaBench task file follows its release's rules -----------
def vitabench_world(release: str = "2026", **changes):
    from servicegym.world_state.delivery import build_delivery_world
    from tests.conftest import make_delivery_spec

    spec = make_delivery_spec() | {"vitabench_release": release}
    for key, value in changes.items():
        spec[key] = value(spec[key]) if callable(value) else value
    return build_delivery_world(spec)


def _ids(result, key: str) -> list[str]:
    assert result.ok, result.content
    return [x[key] for x in json.loads(result.content)]


def test_vitabench_search_returns_every_match_ranked(toolkit, world, history):
    from servicegym.world_state.delivery.entities import vitabench_product_text, vitabench_store_text
    from servicegym.world_state.life.tools import SearchIndex, rank_all

    vworld = vitabench_world()
    assert vworld.extra["vitabench_release"] == "2026" and "vitabench_release" not in world.extra
    # a generated task's world: only stores matching well; a VitaBench one: every store, best first
    generated = _ids(run(toolkit, world, history, "delivery_store_search_recommend", keywords=["Green Bowl Salads"]),
                     "store_id")
    assert generated == [STOCK_STORE]
    stores = _ids(run(toolkit, vworld, history, "delivery_store_search_recommend", keywords=["Green Bowl Salads"]),
                  "store_id")
    assert stores[0] == STOCK_STORE and sorted(stores) == sorted(vworld.table("stores").rows)
    # the keywords are joined into one text with no separator, matched against VitaBench's texts
    keywords = ["Beef", "Noodle", "Soup"]
    products = _ids(run(toolkit, vworld, history, "delivery_product_search_recommend", keywords=keywords), "product_id")
    index = SearchIndex({p.product_id: vitabench_product_text(p) for p in vworld.table("products")})
    assert products == [pid for pid, _ in rank_all("BeefNoodleSoup", index, 50)] and products[0] == BEEF_SOUP
    assert len(products) == len(vworld.table("products"))
    assert vitabench_store_text(vworld.table("stores").require(OPEN_STORE)) == "Sunny Noodle Housenoodles,Chinese,soup"
    # top_k still cuts the list; its range is the release's cap
    assert len(_ids(run(toolkit, vworld, history, "delivery_store_search_recommend", keywords=["x"], top_k=2),
                    "store_id")) == 2
    assert rejected(run(toolkit, vworld, history, "delivery_store_search_recommend", keywords=["x"], top_k=51),
                    "between 1 and 50")
    old = vitabench_world("2025-11")
    assert run(toolkit, old, history, "delivery_store_search_recommend", keywords=["x"], top_k=100).ok
    assert rejected(run(toolkit, world, history, "delivery_store_search_recommend", keywords=["x"], top_k=51),
                    "between 1 and 50")


@pytest.mark.parametrize(("release", "cap"), [("2026", 50), ("2025-11", 100)])
def test_vitabench_search_cap_per_release(toolkit, history, release, cap):
    def more(products):
        extra = [dict(products[0], product_id=f"PX{i:03d}", name=f"Noodle Dish {i}") for i in range(120)]
        return products + extra

    vworld = vitabench_world(release, products=more)
    hits = _ids(run(toolkit, vworld, history, "delivery_product_search_recommend", keywords=["noodle"]), "product_id")
    assert len(hits) == cap == len(set(hits))


def _delivered(orders):
    return [dict(o, status="delivered") if o["order_id"] == PAID_ORDER else o for o in orders]


def test_vitabench_cancels_and_modifies_any_order_not_cancelled(toolkit, history):
    from servicegym.world_state.delivery import build_delivery_world
    from tests.conftest import make_delivery_spec

    generated = build_delivery_world(make_delivery_spec() | {"orders": _delivered(make_delivery_spec()["orders"])})
    run(toolkit, generated, history, "get_delivery_order_detail", order_id=PAID_ORDER)
    assert rejected(run(toolkit, generated, history, "cancel_delivery_order", order_id=PAID_ORDER), "status")
    assert rejected(run(toolkit, generated, history, "modify_delivery_order", order_id=PAID_ORDER, note="x"), "status")

    vworld = vitabench_world(orders=_delivered)
    h = History()
    run(toolkit, vworld, h, "get_delivery_order_detail", order_id=PAID_ORDER)
    assert run(toolkit, vworld, h, "modify_delivery_order", order_id=PAID_ORDER, note="no cilantro").ok
    assert run(toolkit, vworld, h, "cancel_delivery_order", order_id=PAID_ORDER).ok
    assert vworld.table("orders").require(PAID_ORDER).status == "cancelled"
    # a cancelled order stays refused, as in VitaBench
    assert rejected(run(toolkit, vworld, h, "cancel_delivery_order", order_id=PAID_ORDER), "already cancelled")
    assert rejected(run(toolkit, vworld, h, "modify_delivery_order", order_id=PAID_ORDER, note="y"), "already cancelled")


def test_vitabench_ignores_attributes_beyond_the_products(toolkit, world, history):
    args = create_args(attributes=["mild", "extra spicy", "no onion"])
    assert rejected(run(toolkit, world, history, "create_delivery_order", **args), "attributes has 3 entries")
    vworld = vitabench_world()
    r = run(toolkit, vworld, history, "create_delivery_order", **args)
    assert r.ok, r.content
    assert [line["attributes"] for line in json.loads(r.content)["products"]] == ["mild"]


CN_HOME = "云南省昆明市五华区丰宁路28号"


def test_vitabench_geocodes_part_of_an_address(toolkit, world, history):
    def with_cn(locations):
        return [{"address": "云南省昆明市盘龙区北京路100号", "longitude": 102.72, "latitude": 25.06},
                {"address": CN_HOME, "longitude": 102.705, "latitude": 25.045}, *locations]

    from servicegym.world_state.delivery import build_delivery_world
    from tests.conftest import make_delivery_spec

    generated = build_delivery_world(make_delivery_spec() | {"locations": with_cn(make_delivery_spec()["locations"])})
    vworld = vitabench_world(locations=with_cn)
    part = "丰宁路28号"  # road and number only
    assert rejected(run(toolkit, generated, history, "address_to_longitude_latitude", address=part), "no coordinates")
    r = run(toolkit, vworld, history, "address_to_longitude_latitude", address=part)
    assert r.ok and json.loads(r.content) == [102.705, 25.045]
    # an exact address is always itself (VitaBench could answer another one containing it)
    assert json.loads(run(toolkit, vworld, history, "address_to_longitude_latitude", address=HOME).content) == [
        HOME_LOC["longitude"], HOME_LOC["latitude"]]
    # a text like none of the task's addresses is refused...
    assert rejected(run(toolkit, vworld, history, "address_to_longitude_latitude", address="xyz"), "no coordinates")
    # ...but VitaBench's thresholds are low: a long English address sharing a few letters with a
    # known one resolves to it (partial match 41 >= 30, similarity 23 >= 20), as in VitaBench
    r = run(toolkit, vworld, history, "address_to_longitude_latitude", address="Room 5, 99 Unknown Avenue")
    assert json.loads(r.content) == [HOME_LOC["longitude"], HOME_LOC["latitude"]]
    assert rejected(run(toolkit, generated, history, "address_to_longitude_latitude",
                        address="Room 5, 99 Unknown Avenue"), "no coordinates")
    assert run(toolkit, vworld, history, "create_delivery_order", **create_args(address=part)).ok


def test_vitabench_release_is_validated():
    from servicegym.world_state.delivery import build_delivery_world
    from servicegym.world_state.life.spec import WorldSpecError
    from tests.conftest import make_delivery_spec

    with pytest.raises(WorldSpecError, match="vitabench_release"):
        build_delivery_world(make_delivery_spec() | {"vitabench_release": "2024"})
