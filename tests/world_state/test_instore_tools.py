"""The in-store tools: schemas, pre- and post-conditions, the three VitaBench defects fixed
(catalogue stock overwritten by an order, ``enable_reservation`` ignored, cancellation not giving
stock back), rollback of failed calls, and tools running on a world of another class.

The hand-written world has a spa (reservations only, open 10:00-22:00), a hot pot restaurant
(bookings with a 30 yuan fee) that reuses the spa's product id "P1" for a product of its own, a
free-booking karaoke, and a shop that takes neither; the user has a paid order, a reservation
and a booking already.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import servicegym.world_state.instore.tools as instore_tools
from servicegym.world_state.core import History
from servicegym.world_state.delivery import DELIVERY_TOOLS, DeliveryWorld
from servicegym.world_state.instore import INSTORE_TOOLS, TOOLS, InStoreWorld, build_instore_world, product_key
from servicegym.world_state.life import LifeWorld
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.tools import Toolkit, dependency_graph
from tests.conftest import UNPAID_ORDER, make_delivery_spec

NOW = "2025-06-21 11:20:00"
USER = "U000777"
KEY = "T7"
SPA, HOTPOT, KARAOKE, NOWHERE = "S-SPA", "S-POT", "S-KTV", "S-NONE"
RES0, BOOK0, ORDER0, USED = f"{KEY}Q01", f"{KEY}Q02", f"{KEY}O01", f"{KEY}O02"


def _shop(sid: str, name: str, *, book: bool = False, fee: float = 0.0, reserve: bool = False, **hours: str) -> dict:
    return {"shop_id": sid, "shop_name": name, "score": 4.6, "tags": ["Free Parking"], "category": "test",
            "location": {"address": f"{name}, 1 Test Road, Kunming", "longitude": 102.71, "latitude": 25.05},
            "enable_book": book, "book_price": fee, "enable_reservation": reserve, **hours}


def _product(pid: str, sid: str, name: str, price: float, stock: int | None) -> dict:
    return {"product_id": pid, "name": name, "shop_id": sid, "price": price, "tags": ["Voucher"], "quantity": stock}


def make_spec() -> dict[str, Any]:
    line = {"product_id": "P1", "name": "Deep Tissue Massage", "store_id": SPA, "store_name": "Calm Spa", "price": 198.0,
            "quantity": 1}
    order = {"order_id": ORDER0, "order_type": "instore", "user_id": USER, "store_id": SPA, "total_price": 198.0,
             "create_time": "2025-06-20 10:00:00", "update_time": "2025-06-20 10:00:00", "status": "paid", "products": [line]}
    return {
        "time": NOW, "user_id": USER, "task_key": KEY, "language": "en",
        "locations": [{"address": "No. 28 Fengning Road, Kunming", "longitude": 102.70, "latitude": 25.05}],
        "shops": [
            _shop(SPA, "Calm Spa", reserve=True, open_time="10:00", close_time="22:00"),
            _shop(HOTPOT, "Red Ember Hot Pot", book=True, fee=30.0),
            _shop(KARAOKE, "Echo Box Karaoke", book=True),
            _shop(NOWHERE, "Walk-in Only Cafe"),
        ],
        "shop_products": [
            _product("P1", SPA, "Deep Tissue Massage", 198.0, 3),
            _product("P2", SPA, "Hot Stone Massage", 298.0, 0),
            _product("P1", HOTPOT, "Mushroom Hot Pot Set for 2", 136.0, 5),  # the same id in another shop
            _product("P3", KARAOKE, "Evening Package for 4", 276.0, None),
            _product("P4", NOWHERE, "Coffee", 28.0, 10),
        ],
        "orders": [order, order | {"order_id": USED, "status": "consumed"}],
        "reservations": [{"reservation_id": RES0, "shop_id": SPA, "reservation_time": "2025-06-23 15:00:00",
                          "customer_id": USER, "customer_count": 2, "status": "unconsumed"}],
        "books": [{"book_id": BOOK0, "shop_id": HOTPOT, "book_time": "2025-06-22 18:00:00", "customer_id": USER,
                   "customer_count": 4, "book_price": 30.0, "status": "paid"}],
    }


@pytest.fixture(scope="module")
def initial() -> InStoreWorld:
    return build_instore_world(make_spec())


@pytest.fixture
def world(initial: InStoreWorld) -> InStoreWorld:
    return initial.copy()


@pytest.fixture(scope="module")
def kit() -> Toolkit:
    return Toolkit(TOOLS, check_postconditions=True)


class Session:
    """One episode's calls on a world: ``ok`` and ``refused`` assert the outcome."""

    def __init__(self, kit: Toolkit, world: LifeWorld) -> None:
        self.kit, self.world, self.history = kit, world, History()

    def call(self, name: str, **args: Any):
        return self.kit.call(self.world, self.history, name, args)

    def ok(self, name: str, **args: Any) -> Any:
        res = self.call(name, **args)
        assert res.outcome == "executed", res.content
        return json.loads(res.content)

    def refused(self, name: str, fragment: str, **args: Any) -> None:
        before = self.world.state_dict()
        res = self.call(name, **args)
        assert res.outcome == "rejected", res.content
        assert fragment in res.content, res.content
        assert self.world.state_dict() == before, "a refused call changed the world"


@pytest.fixture
def s(kit: Toolkit, world: InStoreWorld) -> Session:
    return Session(kit, world)


class CrossWorld(LifeWorld):
    """Delivery and in-store tables in one world, as a cross-scenario task holds them."""

    schema = {**DeliveryWorld.schema, **InStoreWorld.schema}
    place_tables = ("stores", "shops")


def cross_world() -> CrossWorld:
    spec = make_delivery_spec() | {k: v for k, v in make_spec().items() if k in ("shops", "shop_products", "reservations")}
    return build_life_world(CrossWorld, spec | {"task_key": KEY})


def stock(world: LifeWorld, shop: str, pid: str) -> int | None:
    return world.table("shop_products").require(product_key(shop, pid)).quantity


# ----- schemas and the graph ----------------------------------------------------------------
VITABENCH_NAMES = [
    "instore_shop_search_recommend", "instore_product_search_recommend", "create_instore_product_order",
    "pay_instore_order", "instore_cancel_order", "instore_book", "pay_instore_book", "instore_cancel_book",
    "instore_reservation", "instore_modify_reservation", "instore_cancel_reservation", "get_instore_orders",
    "get_instore_reservations", "get_instore_books", "search_instore_book", "search_instore_reservation",
]


def test_sixteen_tools_with_vitabench_names_and_arguments(kit: Toolkit) -> None:
    assert [t.name for t in INSTORE_TOOLS] == VITABENCH_NAMES and len(kit) == 24
    params = {n: kit.resolve(n).parameters for n in VITABENCH_NAMES}
    assert params["create_instore_product_order"]["required"] == ["user_id", "shop_id", "product_id"]
    assert set(params["instore_book"]["properties"]) == {"user_id", "shop_id", "time", "customer_count"}
    assert params["instore_modify_reservation"]["required"] == ["reservation_id", "time"]
    assert params["search_instore_book"]["required"] == ["user_id"]
    for name in VITABENCH_NAMES:
        spec = kit.resolve(name)
        assert spec.parameters["additionalProperties"] is False
        assert all(p.get("description") for p in spec.parameters["properties"].values()), name
        assert spec.kind == ("read" if name.startswith(("get_", "search_", "instore_shop", "instore_product")) else "write")


def test_old_spelling_is_an_alias(s: Session) -> None:
    assert s.kit.resolve("instore_shop_search_recommand").name == "instore_shop_search_recommend"
    hits = s.ok("instore_product_search_recommand", keywords=["massage"])
    assert {h["product_id"] for h in hits} >= {"P1", "P2"}


def test_dependency_graph_edges_come_from_the_rules(kit: Toolkit) -> None:
    graph = dependency_graph(kit)
    edges = set(graph.edges)
    assert ("get_instore_reservations", "instore_modify_reservation") in edges
    assert ("search_instore_reservation", "instore_cancel_reservation") in edges
    assert ("get_instore_orders", "instore_cancel_order") in edges
    assert ("instore_product_search_recommend", "create_instore_product_order") in edges
    assert ("instore_book", "pay_instore_book") in edges
    assert graph.summary()["V"] == 24 and 0 < graph.density < 0.2


# ----- searching ------------------------------------------------------------------------------
def test_product_search_shows_each_shops_row(s: Session) -> None:
    hits = s.ok("instore_product_search_recommend", keywords=["Mushroom Hot Pot Set"])
    assert hits[0]["shop_id"] == HOTPOT and hits[0]["product_id"] == "P1" and hits[0]["shop_name"] == "Red Ember Hot Pot"
    assert hits[0]["quantity"] == 5


def test_shop_search_shows_flags_and_known_hours_only(s: Session) -> None:
    spa = s.ok("instore_shop_search_recommend", keywords=["Calm Spa"])[0]
    assert spa["shop_id"] == SPA and spa["enable_reservation"] is True and spa["open_time"] == "10:00"
    pot = s.ok("instore_shop_search_recommend", keywords=["Red Ember Hot Pot"])[0]
    assert pot["shop_id"] == HOTPOT and pot["book_price"] == 30.0 and "open_time" not in pot
    s.refused("instore_shop_search_recommend", "non-empty", keywords=[" "])
    s.refused("instore_shop_search_recommend", "top_k", keywords=["spa"], top_k=0)


# ----- orders and stock (defects 1 and 3) -----------------------------------------------------
def test_ordering_takes_stock_from_its_own_row_only(s: Session) -> None:
    order = s.ok("create_instore_product_order", user_id=USER, shop_id=SPA, product_id="P1", quantity=2)
    assert order["order_id"] == f"{KEY}I01" and order["status"] == "unpaid" and order["order_type"] == "instore"
    assert order["total_price"] == 396.0 and order["products"][0]["store_name"] == "Calm Spa"
    assert stock(s.world, SPA, "P1") == 1
    assert stock(s.world, HOTPOT, "P1") == 5, "the other shop's row with the same product id is untouched"
    s.refused("create_instore_product_order", "only 1 of product P1 left", user_id=USER, shop_id=SPA, product_id="P1", quantity=2)
    s.refused("create_instore_product_order", "only 0", user_id=USER, shop_id=SPA, product_id="P2")
    unlimited = s.ok("create_instore_product_order", user_id=USER, shop_id=KARAOKE, product_id="P3", quantity=40)
    assert unlimited["order_id"] == f"{KEY}I02" and stock(s.world, KARAOKE, "P3") is None


def test_order_preconditions(s: Session) -> None:
    base = {"user_id": USER, "shop_id": SPA, "product_id": "P1"}
    s.refused("create_instore_product_order", "not this user's id", **(base | {"user_id": "U1"}))
    s.refused("create_instore_product_order", "does not exist", **(base | {"shop_id": "S-404"}))
    s.refused("create_instore_product_order", "sells no product 'P4'", **(base | {"product_id": "P4"}))
    s.refused("create_instore_product_order", "quantity must be a positive integer", **(base | {"quantity": 0}))
    s.refused("create_instore_product_order", "unknown argument", **(base | {"note": "x"}))


def test_pay_only_unpaid_and_cancel_gives_stock_back(s: Session) -> None:
    s.ok("create_instore_product_order", user_id=USER, shop_id=SPA, product_id="P1", quantity=3)
    oid = f"{KEY}I01"
    assert stock(s.world, SPA, "P1") == 0
    s.ok("pay_instore_order", order_id=oid)
    s.refused("pay_instore_order", "needs status in ['unpaid']", order_id=oid)
    s.refused("instore_cancel_order", "look the order", order_id=oid)
    listed = s.ok("get_instore_orders", user_id=USER)
    assert [o["order_id"] for o in listed] == [ORDER0, USED, oid]
    s.ok("instore_cancel_order", order_id=oid)
    assert s.world.table("orders").require(oid).status == "cancelled"
    assert stock(s.world, SPA, "P1") == 3, "cancelling gives the stock back"
    s.refused("instore_cancel_order", "has status 'cancelled'", order_id=oid)
    s.refused("instore_cancel_order", "has status 'consumed'", order_id=USED)


def test_cancel_accepts_a_lookup_through_all_orders(s: Session) -> None:
    s.ok("get_user_all_orders")
    s.ok("instore_cancel_order", order_id=ORDER0)
    assert stock(s.world, SPA, "P1") == 4


def test_delivery_orders_are_not_instore_orders() -> None:
    s = Session(Toolkit(TOOLS + DELIVERY_TOOLS, check_postconditions=True), cross_world())
    s.ok("get_user_all_orders")
    s.refused("pay_instore_order", "not an in-store order", order_id=UNPAID_ORDER)
    s.refused("instore_cancel_order", "not an in-store order", order_id=UNPAID_ORDER)


# ----- bookings --------------------------------------------------------------------------------
def test_booking_needs_enable_book_and_the_fee_is_paid_separately(s: Session) -> None:
    s.refused("instore_book", "does not take seat bookings", user_id=USER, shop_id=SPA, time="2025-06-22 18:00:00")
    b = s.ok("instore_book", user_id=USER, shop_id=HOTPOT, time="2025-06-22 19:00:00", customer_count=4)
    assert (b["book_id"], b["status"], b["book_price"], b["customer_count"]) == (f"{KEY}B01", "unpaid", 30.0, 4)
    s.ok("pay_instore_book", book_id=b["book_id"])
    s.refused("pay_instore_book", "needs status in ['unpaid']", book_id=b["book_id"])
    free = s.ok("instore_book", user_id=USER, shop_id=KARAOKE, time="2025-06-22 20:00:00")
    assert free["status"] == "paid" and free["book_price"] == 0.0 and free["customer_count"] == 1


def test_booking_cancel_needs_a_lookup(s: Session) -> None:
    s.refused("instore_cancel_book", "look the booking", book_id=BOOK0)
    assert [b["book_id"] for b in s.ok("search_instore_book", user_id=USER, book_id=BOOK0)] == [BOOK0]
    s.ok("instore_cancel_book", book_id=BOOK0)
    s.refused("instore_cancel_book", "has status 'cancelled'", book_id=BOOK0)
    s.refused("search_instore_book", "does not exist", user_id=USER, book_id="nope")
    assert [b["book_id"] for b in s.ok("get_instore_books", user_id=USER)] == [BOOK0]


# ----- reservations (defect 2) -----------------------------------------------------------------
def test_reservation_needs_enable_reservation(s: Session) -> None:
    for shop in (HOTPOT, NOWHERE):
        s.refused("instore_reservation", "does not take service reservations", user_id=USER, shop_id=shop,
                  time="2025-06-22 18:00:00")
    r = s.ok("instore_reservation", user_id=USER, shop_id=SPA, time="2025-06-22 18:00:00", customer_count=2)
    assert (r["reservation_id"], r["status"], r["customer_count"]) == (f"{KEY}R01", "unconsumed", 2)


@pytest.mark.parametrize(
    ("time", "count", "fragment"),
    [
        ("2025-06-22 18:00", 1, "must have the form YYYY-MM-DD HH:MM:SS"),
        ("tomorrow evening", 1, "must have the form"),
        ("2025-06-21 11:00:00", 1, "before the current time"),
        ("2025-06-22 09:30:00", 1, "closed at 09:30 (open 10:00-22:00)"),
        ("2025-06-22 22:00:00", 1, "closed at 22:00"),
        ("2025-06-22 18:00:00", 0, "customer_count must be a positive integer"),
        ("2025-06-22 18:00:00", -3, "customer_count must be a positive integer"),
    ],
)
def test_reservation_time_and_party_rules(s: Session, time: str, count: int, fragment: str) -> None:
    s.refused("instore_reservation", fragment, user_id=USER, shop_id=SPA, time=time, customer_count=count)


def test_modify_and_cancel_need_a_lookup_and_keep_the_party(s: Session) -> None:
    s.refused("instore_modify_reservation", "look the reservation", reservation_id=RES0, time="2025-06-23 17:00:00")
    s.refused("instore_cancel_reservation", "look the reservation", reservation_id=RES0)
    s.ok("search_instore_reservation", user_id=USER)
    r = s.ok("instore_modify_reservation", reservation_id=RES0, time="2025-06-23 17:00:00")
    assert r["reservation_time"] == "2025-06-23 17:00:00" and r["customer_count"] == 2, "an omitted party size is kept"
    s.refused("instore_modify_reservation", "closed at 23:00", reservation_id=RES0, time="2025-06-23 23:00:00")
    s.refused("instore_modify_reservation", "positive", reservation_id=RES0, time="2025-06-23 17:00:00", customer_count=0)
    r = s.ok("instore_modify_reservation", reservation_id=RES0, time="2025-06-23 16:00:00", customer_count=3)
    assert r["customer_count"] == 3
    s.ok("instore_cancel_reservation", reservation_id=RES0)
    s.refused("instore_modify_reservation", "has status 'cancelled'", reservation_id=RES0, time="2025-06-23 17:00:00")
    s.refused("instore_cancel_reservation", "has status 'cancelled'", reservation_id=RES0)


def test_lookups_must_name_the_users_own_records(s: Session) -> None:
    s.refused("get_instore_reservations", "not this user's id", user_id="U1")
    s.refused("search_instore_reservation", "does not exist", user_id=USER, reservation_id=f"{KEY}R99")
    s.world.table("reservations").update(RES0, customer_id="U-OTHER")
    s.refused("search_instore_reservation", "does not belong to user", user_id=USER, reservation_id=RES0)


def test_a_listing_naming_a_longer_id_is_not_a_lookup(s: Session) -> None:
    """"T7Q0" is not looked up by a result that only shows "T7Q01"."""
    s.world.table("reservations").put(s.world.table("reservations").require(RES0).model_copy(update={"reservation_id": "T7Q0"}))
    s.ok("search_instore_reservation", user_id=USER, reservation_id=RES0)
    s.refused("instore_cancel_reservation", "look the reservation", reservation_id="T7Q0")


# ----- post-conditions and rollback -----------------------------------------------------------
def test_a_broken_transition_fails_its_post_condition_and_is_undone(s: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    # VitaBench's defect, re-created: the ordered quantity overwrites the row's stock
    def overwrite(world: LifeWorld, shop_id: str, product_id: str, delta: int) -> None:
        world.table("shop_products").update(product_key(shop_id, product_id), quantity=abs(delta))

    monkeypatch.setattr(instore_tools, "_adjust_stock", overwrite)
    before = s.world.state_dict()
    res = s.call("create_instore_product_order", user_id=USER, shop_id=HOTPOT, product_id="P1", quantity=1)
    assert res.outcome == "error" and "post-condition" in res.content and "went from 5 to 1" in res.content
    assert s.world.state_dict() == before


_POOL_IDS = [ORDER0, USED, RES0, BOOK0, f"{KEY}I01", f"{KEY}B01", f"{KEY}R01", "nope"]
_CALLS = st.one_of(
    st.builds(lambda shop, pid, q: ("create_instore_product_order", {"user_id": USER, "shop_id": shop, "product_id": pid,
                                                                     "quantity": q}),
              st.sampled_from([SPA, HOTPOT, KARAOKE, NOWHERE]), st.sampled_from(["P1", "P2", "P3", "P4"]), st.integers(-1, 4)),
    st.builds(lambda name, i: (name, {"order_id": i}), st.sampled_from(["pay_instore_order", "instore_cancel_order"]),
              st.sampled_from(_POOL_IDS)),
    st.builds(lambda name, i: (name, {"book_id": i}), st.sampled_from(["pay_instore_book", "instore_cancel_book"]),
              st.sampled_from(_POOL_IDS)),
    st.builds(lambda i: ("instore_cancel_reservation", {"reservation_id": i}), st.sampled_from(_POOL_IDS)),
    st.builds(lambda name, shop, t, n: (name, {"user_id": USER, "shop_id": shop, "time": t, "customer_count": n}),
              st.sampled_from(["instore_book", "instore_reservation"]), st.sampled_from([SPA, HOTPOT, KARAOKE, NOWHERE]),
              st.sampled_from(["2025-06-22 18:00:00", "2025-06-22 08:00:00", "2025-06-20 18:00:00", "soon"]),
              st.integers(-1, 5)),
    st.builds(lambda i, t: ("instore_modify_reservation", {"reservation_id": i, "time": t}), st.sampled_from(_POOL_IDS),
              st.sampled_from(["2025-06-24 12:00:00", "2025-06-24 23:30:00"])),
    st.sampled_from([(n, {"user_id": USER}) for n in ("get_instore_orders", "get_instore_books", "get_instore_reservations")]),
)


@given(calls=st.lists(_CALLS, max_size=25))
def test_failed_calls_change_nothing_and_stock_is_conserved(initial: InStoreWorld, kit: Toolkit, calls) -> None:
    """Any call sequence: a refused call leaves the world as it was, no stock goes negative, and
    each row's stock plus what live orders made in the episode hold of it, less what cancelling
    pre-existing orders gave back, equals its initial stock."""
    s = Session(kit, initial.copy())
    for name, args in calls:
        before = s.world.state_dict()
        res = s.call(name, **args)
        assert res.outcome != "error", res.content
        if res.outcome == "executed":
            json.loads(res.content)  # results are JSON
        else:
            assert s.world.state_dict() == before
    held: dict[str, int] = {}
    for o in s.world.table("orders"):
        before = initial.table("orders").get(o.order_id)
        if before is None and o.status != "cancelled":
            sign = 1
        elif before is not None and before.status != "cancelled" and o.status == "cancelled":
            sign = -1  # a pre-existing order's stock was taken before the episode; cancelling returns it
        else:
            continue
        for line in o.products:
            k = product_key(line.store_id or o.store_id, line.product_id)
            held[k] = held.get(k, 0) + sign * line.quantity
    for row in s.world.table("shop_products"):
        start = initial.table("shop_products").require(row.key).quantity
        if start is not None:
            assert row.quantity >= 0 and row.quantity + held.get(row.key, 0) == start


# ----- any world holding the tables -------------------------------------------------------------
def test_tools_run_on_a_world_of_another_class() -> None:
    """A cross-scenario world (delivery and in-store tables together) runs the in-store tools."""
    world = cross_world()
    s = Session(Toolkit(TOOLS + DELIVERY_TOOLS, check_postconditions=True), world)
    s.ok("create_instore_product_order", user_id=world.user_id, shop_id=SPA, product_id="P1")
    s.ok("pay_instore_order", order_id=f"{KEY}I01")
    s.ok("instore_reservation", user_id=world.user_id, shop_id=SPA, time="2025-06-22 18:00:00")
    near = s.ok("get_nearby", longitude=102.71, latitude=25.05, range=100.0)
    assert {p.get("shop_id") for p in near} >= {SPA, HOTPOT}
    assert [o["order_id"] for o in s.ok("get_instore_orders", user_id=world.user_id)] == [f"{KEY}I01"]
    assert stock(world, SPA, "P1") == 2


# ----- VitaBench parity: a world from a VitaBench task file follows its release's rules -----------
def vitabench_session(kit: Toolkit, release: str = "2026", **changes: Any) -> Session:
    return Session(kit, build_instore_world(make_spec() | {"vitabench_release": release} | changes))


def test_vitabench_searches_return_every_shop_and_product_ranked(kit: Toolkit, s: Session):
    from servicegym.world_state.life.tools import SearchIndex, rank_all

    v = vitabench_session(kit)
    assert [x["shop_id"] for x in s.ok("instore_shop_search_recommend", keywords=["Calm Spa"])] == [SPA]
    shops = [x["shop_id"] for x in v.ok("instore_shop_search_recommend", keywords=["Calm Spa"])]
    assert shops[0] == SPA and sorted(shops) == sorted([SPA, HOTPOT, KARAOKE, NOWHERE])
    # products match on their own name and tags (not the shop's), keywords joined into one text;
    # both rows with id P1 come back (VitaBench's registry kept one product per id)
    rows = [(x["shop_id"], x["product_id"]) for x in v.ok("instore_product_search_recommend", keywords=["Hot", "Pot"])]
    index = SearchIndex({p.key: ",".join([p.name, *p.tags]) for p in v.world.table("shop_products")})
    expected = [v.world.table("shop_products").rows[k] for k, _ in rank_all("HotPot", index, 50)]
    assert rows == [(p.shop_id, p.product_id) for p in expected] and len(rows) == 5
    assert rows[0] == (HOTPOT, "P1")
    v.refused("instore_product_search_recommend", "between 1 and 50", keywords=["spa"], top_k=51)
    assert len(vitabench_session(kit, "2025-11").ok("instore_shop_search_recommend", keywords=["spa"], top_k=1000)) == 4
    s.refused("instore_shop_search_recommend", "between 1 and 50", keywords=["spa"], top_k=1000)


def test_vitabench_accepts_past_booking_and_reservation_times(kit: Toolkit, s: Session):
    past = "2025-06-20 15:00:00"  # the day before NOW, within the spa's hours
    s.refused("instore_book", "before the current time", user_id=USER, shop_id=KARAOKE, time=past)
    s.refused("instore_reservation", "before the current time", user_id=USER, shop_id=SPA, time=past)
    v = vitabench_session(kit)
    assert v.ok("instore_book", user_id=USER, shop_id=KARAOKE, time=past)["book_time"] == past
    assert v.ok("instore_reservation", user_id=USER, shop_id=SPA, time=past)["reservation_time"] == past
    v.ok("get_instore_reservations", user_id=USER)
    assert v.ok("instore_modify_reservation", reservation_id=RES0, time=past)["reservation_time"] == past
    # the form is still checked, and the shop's rules (enable_book, opening hours) still hold
    v.refused("instore_book", "YYYY-MM-DD HH:MM:SS", user_id=USER, shop_id=KARAOKE, time="yesterday")
    v.refused("instore_book", "does not take seat bookings", user_id=USER, shop_id=SPA, time=past)


def test_vitabench_cancels_consumed_records_but_not_cancelled_ones(kit: Toolkit, s: Session):
    consumed = {
        "reservations": [dict(make_spec()["reservations"][0], status="consumed")],
        "books": [dict(make_spec()["books"][0], status="consumed")],
    }
    g = Session(kit, build_instore_world(make_spec() | consumed))
    for sess in (g, vitabench_session(kit, **consumed)):
        for lookup in ("get_instore_orders", "get_instore_reservations", "get_instore_books"):
            sess.ok(lookup, user_id=USER)
        # a consumed reservation cannot be moved, in VitaBench either
        sess.refused("instore_modify_reservation", "consumed", reservation_id=RES0, time="2025-06-24 15:00:00")
    for name, arg, rid in (("instore_cancel_order", "order_id", USED), ("instore_cancel_book", "book_id", BOOK0),
                           ("instore_cancel_reservation", "reservation_id", RES0)):
        g.refused(name, "consumed", **{arg: rid})
    v = vitabench_session(kit, **consumed)
    for lookup in ("get_instore_orders", "get_instore_reservations", "get_instore_books"):
        v.ok(lookup, user_id=USER)
    v.ok("instore_cancel_order", order_id=USED)
    v.ok("instore_cancel_book", book_id=BOOK0)
    v.ok("instore_cancel_reservation", reservation_id=RES0)
    v.refused("instore_cancel_order", "already cancelled", order_id=USED)
    v.refused("instore_cancel_reservation", "already cancelled", reservation_id=RES0)
