"""The thirty travel tools on a small hand-written world: names and schemas, searches, bookings
with dated stock, payments and the ledger, date changes with a price difference, cancellations
with refunds, pre-conditions (each refused call leaves the world as it was), post-conditions,
and the tools on a world that also holds delivery tables.

The world: now is 2025-07-01 10:00. Hangzhou has the Lakeside Hotel (twin rooms for the nights of
07-10..07-12; king rooms sold out on 07-11) and the Hill Hotel; a museum with tickets on 07-11
only; flight F1 Shanghai-Hangzhou 08:00-09:05 with economy seats on 07-09 (350), 07-10 (400, three
left), 07-11 (460) and two business seats on 07-10; the overnight F2 (23:30-00:40); train T1 on
07-10 and 07-11 (cheaper). The user has a paid train order for 07-10 and a paid flight that left
yesterday.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servicegym.world_state.core import History
from servicegym.world_state.delivery import DELIVERY_TOOLS, DeliveryWorld, build_delivery_world
from servicegym.world_state.life import SHARED_TOOLS, LifeWorld
from servicegym.world_state.tools import Toolkit, dependency_graph
from servicegym.world_state.travel import (
    TOOLS,
    TRAVEL_PLACE_TABLES,
    TRAVEL_SCHEMA,
    TRAVEL_TOOLS,
    build_travel_world,
    net_paid,
)
from servicegym.world_state.travel import rules as travel_rules

UID = "U000077"
NOW = "2025-07-01 10:00:00"
PAID_TRAIN = "ORD-TRAIN-1"
PAST_FLIGHT = "ORD-PAST-1"

# VitaBench's thirty OTA tool names (hotel search as VitaBench spells it is an alias)
VITABENCH_OTA = {
    "get_ota_hotel_info",
    "get_ota_attraction_info",
    "get_ota_flight_info",
    "get_ota_train_info",
    "hotel_search_recommend",
    "attractions_search_recommend",
    "flight_search_recommend",
    "train_ticket_search",
    "create_hotel_order",
    "create_attraction_order",
    "create_flight_order",
    "create_train_order",
    "pay_hotel_order",
    "pay_attraction_order",
    "pay_flight_order",
    "pay_train_order",
    "search_hotel_order",
    "search_attraction_order",
    "search_flight_order",
    "search_train_order",
    "get_hotel_order_detail",
    "get_attraction_order_detail",
    "get_flight_order_detail",
    "get_train_order_detail",
    "modify_train_order",
    "modify_flight_order",
    "cancel_hotel_order",
    "cancel_attraction_order",
    "cancel_flight_order",
    "cancel_train_order",
}


def _loc(address: str, lon: float, lat: float) -> dict[str, Any]:
    return {"address": address, "longitude": lon, "latitude": lat}


SH_AIRPORT = _loc("Shanghai East Airport, Shanghai", 121.80, 31.14)
HZ_AIRPORT = _loc("Hangzhou Xiaoshan Airport, Hangzhou", 120.43, 30.23)
VENUE = _loc("Hangzhou Expo Hall, No. 3 Garden Road, Binjiang District, Hangzhou", 120.2100, 30.2100)


def _room(pid: str, hotel: str, rtype: str, date: str, price: float, qty: int | None) -> dict[str, Any]:
    return {"product_id": pid, "hotel_id": hotel, "room_type": rtype, "date": date, "price": price, "quantity": qty}


def _seat(pid: str, owner_key: str, owner: str, stype: str, date: str, price: float, qty: int | None) -> dict[str, Any]:
    return {"product_id": pid, owner_key: owner, "seat_type": stype, "date": date, "price": price, "quantity": qty}


def travel_spec() -> dict[str, Any]:
    return {
        "time": NOW,
        "user_id": UID,
        "task_key": "T1",
        "language": "en",
        "locations": [_loc("Room 501, No. 8 Lotus Road, Xuhui District, Shanghai", 121.44, 31.19), VENUE],
        "hotels": [
            {
                "hotel_id": "H1",
                "hotel_name": "Lakeside Hotel",
                "score": 4.7,
                "star_rating": 4,
                "location": _loc("No. 1 Lake Road, Binjiang District, Hangzhou", 120.2120, 30.2110),
                "tags": ["Free breakfast", "Gym"],
            },
            {
                "hotel_id": "H2",
                "hotel_name": "Hill Hotel",
                "score": 4.2,
                "star_rating": 3,
                "location": _loc("No. 9 Hill Road, Xihu District, Hangzhou", 120.1000, 30.2600),
                "tags": [],
            },
        ],
        "hotel_rooms": [
            _room("R-T10", "H1", "Twin Room", "2025-07-10", 500, 2),
            _room("R-T11", "H1", "Twin Room", "2025-07-11", 560, 2),
            _room("R-T12", "H1", "Twin Room", "2025-07-12", 520, 2),
            _room("R-K10", "H1", "King Room", "2025-07-10", 450, 1),
            _room("R-K11", "H1", "King Room", "2025-07-11", 480, 0),
            _room("R-K12", "H1", "King Room", "2025-07-12", 470, 1),
            _room("R-H10", "H2", "Standard Room", "2025-07-10", 300, None),
        ],
        "attractions": [
            {
                "attraction_id": "A1",
                "attraction_name": "Hangzhou City Museum",
                "score": 4.8,
                "location": _loc("No. 5 Museum Road, Shangcheng District, Hangzhou", 120.17, 30.26),
                "description": "A museum of the city's history.",
                "opening_hours": "09:00-17:00, closed on Saturdays",
                "ticket_price": 60,
            },
        ],
        "attraction_tickets": [
            {
                "product_id": "K-S11",
                "attraction_id": "A1",
                "ticket_type": "Standard Admission",
                "date": "2025-07-11",
                "price": 60,
                "quantity": 5,
            },
            {
                "product_id": "K-G11",
                "attraction_id": "A1",
                "ticket_type": "Admission with Guided Tour",
                "date": "2025-07-11",
                "price": 95,
                "quantity": 5,
            },
        ],
        "flights": [
            {
                "flight_id": "F1",
                "flight_number": "CW1001",
                "departure_city": "Shanghai",
                "arrival_city": "Hangzhou",
                "departure_airport_location": SH_AIRPORT,
                "arrival_airport_location": HZ_AIRPORT,
                "departure_time": "08:00",
                "arrival_time": "09:05",
                "tags": ["Direct"],
            },
            {
                "flight_id": "F2",
                "flight_number": "CW2002",
                "departure_city": "Shanghai",
                "arrival_city": "Hangzhou",
                "departure_airport_location": SH_AIRPORT,
                "arrival_airport_location": HZ_AIRPORT,
                "departure_time": "23:30",
                "arrival_time": "00:40",
                "tags": [],
            },
            {
                "flight_id": "F0",
                "flight_number": "CW0999",
                "departure_city": "Shanghai",
                "arrival_city": "Hangzhou",
                "departure_airport_location": SH_AIRPORT,
                "arrival_airport_location": HZ_AIRPORT,
                "departure_time": "08:00",
                "arrival_time": "09:05",
                "tags": [],
            },
        ],
        "flight_seats": [
            _seat("S-E09", "flight_id", "F1", "Economy", "2025-07-09", 350, 3),
            _seat("S-E10", "flight_id", "F1", "Economy", "2025-07-10", 400, 3),
            _seat("S-E11", "flight_id", "F1", "Economy", "2025-07-11", 460, 3),
            _seat("S-B10", "flight_id", "F1", "Business", "2025-07-10", 900, 2),
            _seat("S-N10", "flight_id", "F2", "Economy", "2025-07-10", 300, 5),
            _seat("S-P30", "flight_id", "F0", "Economy", "2025-06-30", 380, 5),
        ],
        "trains": [
            {
                "train_id": "T1",
                "train_number": "G7301",
                "departure_city": "Shanghai",
                "arrival_city": "Hangzhou",
                "departure_station_location": _loc("Shanghai Hongqiao Station, Shanghai", 121.32, 31.19),
                "arrival_station_location": _loc("Hangzhou East Station, Hangzhou", 120.21, 30.29),
                "departure_time": "09:00",
                "arrival_time": "10:00",
                "tags": ["High-speed"],
            },
        ],
        "train_seats": [
            _seat("TS-10", "train_id", "T1", "Second Class", "2025-07-10", 120, 5),
            _seat("TS-11", "train_id", "T1", "Second Class", "2025-07-11", 100, 5),
        ],
        "orders": [
            {
                "order_id": PAID_TRAIN,
                "order_type": "train",
                "user_id": UID,
                "store_id": "T1",
                "total_price": 120,
                "create_time": "2025-06-20 09:00:00",
                "status": "paid",
                "products": [
                    {
                        "product_id": "TS-10",
                        "name": "Second Class",
                        "store_id": "T1",
                        "store_name": "G7301",
                        "price": 120,
                        "quantity": 1,
                        "date": "2025-07-10",
                    }
                ],
            },
            {
                "order_id": PAST_FLIGHT,
                "order_type": "flight",
                "user_id": UID,
                "store_id": "F0",
                "total_price": 380,
                "create_time": "2025-06-01 09:00:00",
                "status": "paid",
                "products": [
                    {
                        "product_id": "S-P30",
                        "name": "Economy",
                        "store_id": "F0",
                        "store_name": "CW0999",
                        "price": 380,
                        "quantity": 1,
                        "date": "2025-06-30",
                    }
                ],
            },
        ],
        "user_profile": {"user id": UID},
        "user_historical_behaviors": {"user id": UID, "residence": "Shanghai"},
    }


@pytest.fixture(scope="module")
def initial():
    return build_travel_world(travel_spec())


@pytest.fixture
def world(initial):
    return initial.copy()


@pytest.fixture(scope="module")
def kit() -> Toolkit:
    return Toolkit(TOOLS, check_postconditions=True)


class Session:
    """Calls tools on one world with one history and decodes the JSON results."""

    def __init__(self, world, kit: Toolkit) -> None:
        self.world, self.kit, self.history = world, kit, History()

    def __call__(self, name: str, **args: Any):
        res = self.kit.call(self.world, self.history, name, args)
        return res, (json.loads(res.content) if res.ok else res.content)

    def ok(self, name: str, **args: Any) -> Any:
        res, value = self(name, **args)
        assert res.ok, res.content
        return value

    def refused(self, name: str, fragment: str, **args: Any) -> None:
        before = self.world.state_dict()
        res, _ = self(name, **args)
        assert res.outcome == "rejected", res.content
        assert fragment in res.content, res.content
        assert self.world.state_dict() == before, "a refused call leaves the world unchanged"


@pytest.fixture
def s(world, kit) -> Session:
    return Session(world, kit)


def stock(world, table: str, pid: str) -> int | None:
    return world.table(table).require(pid).quantity


# ----- names and schemas ------------------------------------------------------------------
def test_thirty_travel_tools_and_thirty_eight_in_all():
    assert len(TRAVEL_TOOLS) == 30 and {t.name for t in TRAVEL_TOOLS} == VITABENCH_OTA
    assert len(TOOLS) == 38 and len(Toolkit(TOOLS)) == 38
    assert [t.name for t in TOOLS[:8]] == [t.name for t in SHARED_TOOLS]


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("hotel_search_recommand", "hotel_search_recommend"),
        ("attractions_search_recommand", "attractions_search_recommend"),
        ("flight_search_recommand", "flight_search_recommend"),
    ],
)
def test_vitabench_spellings_are_aliases(alias: str, name: str):
    assert Toolkit(TOOLS).resolve(alias).name == name


@pytest.mark.parametrize(
    ("name", "required", "optional"),
    [
        ("create_hotel_order", ["hotel_id", "room_id", "user_id"], ["check_out_date"]),
        ("create_attraction_order", ["attraction_id", "ticket_id", "user_id", "date", "quantity"], []),
        ("create_flight_order", ["flight_id", "seat_id", "user_id", "date", "quantity"], []),
        ("create_train_order", ["train_id", "seat_id", "user_id", "date", "quantity"], []),
        ("modify_flight_order", ["order_id", "user_id", "new_date"], []),
        ("modify_train_order", ["order_id", "user_id", "new_date"], []),
        ("cancel_hotel_order", ["order_id", "user_id"], []),
        ("search_train_order", ["user_id"], ["date", "status"]),
        ("hotel_search_recommend", ["city_name"], ["key_words"]),
        ("attractions_search_recommend", ["city_name", "key_words"], []),
        ("flight_search_recommend", ["departure", "destination"], []),
        ("train_ticket_search", ["departure", "destination", "date"], []),
    ],
)
def test_schemas_follow_vitabench_arguments(name: str, required: list[str], optional: list[str]):
    fn = Toolkit(TOOLS).resolve(name).schema["function"]
    params = fn["parameters"]
    assert params["required"] == required and list(params["properties"]) == required + optional
    assert params["additionalProperties"] is False
    assert all(p.get("description") for p in params["properties"].values()), "every argument is documented"
    assert fn["description"]


def test_status_filter_is_an_enum_defaulting_to_paid():
    prop = Toolkit(TOOLS).resolve("search_hotel_order").parameters["properties"]["status"]
    assert prop["enum"] == ["unpaid", "paid", "cancelled"] and prop["default"] == "paid"


def test_dependency_graph_edges_follow_the_rules():
    g = dependency_graph(Toolkit(TOOLS))
    edges = set(g.edges)
    assert ("get_flight_order_detail", "modify_flight_order") in edges
    assert ("get_hotel_order_detail", "cancel_hotel_order") in edges
    assert ("get_ota_hotel_info", "create_hotel_order") in edges
    assert ("modify_train_order", "pay_train_order") in edges  # a dearer date leaves the difference due
    assert ("get_holiday_date", "create_flight_order") in edges
    assert g.summary()["V"] == 38


# ----- searches and info -------------------------------------------------------------------
def test_hotel_search_by_city_ranked_by_keywords(s: Session):
    hits = s.ok("hotel_search_recommand", city_name="hangzhou", key_words=["gym"])
    assert [h["hotel_id"] for h in hits] == ["H1", "H2"] and "products" not in hits[0]
    assert hits[0]["relevance"] >= hits[1]["relevance"]
    assert s.ok("hotel_search_recommend", city_name="Ningbo") == []


def test_info_lists_dated_products(s: Session):
    info = s.ok("get_ota_hotel_info", hotel_id="H1")
    assert [p["date"] for p in info["products"]] == sorted(p["date"] for p in info["products"])
    assert {
        "product_id": "R-K11",
        "room_type": "King Room",
        "date": "2025-07-11",
        "price": 480.0,
        "quantity": 0,
    } in info["products"]
    tickets = s.ok("get_ota_attraction_info", attraction_id="A1")["products"]
    assert {t["date"] for t in tickets} == {"2025-07-11"}
    s.refused("get_ota_flight_info", "does not exist", flight_id="F9")


def test_flight_and_train_search(s: Session):
    flights = s.ok("flight_search_recommend", departure="Shanghai", destination="Hangzhou")
    assert [f["flight_id"] for f in flights] == ["F0", "F1", "F2"] and "products" not in flights[0]
    assert s.ok("flight_search_recommend", departure="Hangzhou", destination="Shanghai") == []
    assert [
        t["train_id"]
        for t in s.ok("train_ticket_search", departure="Shanghai", destination="Hangzhou", date="2025-07-11")
    ] == ["T1"]
    assert s.ok("train_ticket_search", departure="Shanghai", destination="Hangzhou", date="2025-07-12") == []
    s.refused("train_ticket_search", "YYYY-MM-DD", departure="Shanghai", destination="Hangzhou", date="next Friday")
    s.refused("flight_search_recommend", "must not be empty", departure=" ", destination="Hangzhou")


def test_get_nearby_finds_hotels_and_attractions_and_airports_geocode(s: Session):
    near = s.ok("get_nearby", longitude=VENUE["longitude"], latitude=VENUE["latitude"], range=1000)
    assert [p.get("hotel_id") for p in near] == ["H1"]
    assert s.ok("address_to_longitude_latitude", address=HZ_AIRPORT["address"]) == [
        HZ_AIRPORT["longitude"],
        HZ_AIRPORT["latitude"],
    ]


# ----- booking ----------------------------------------------------------------------------
def test_flight_order_takes_stock_and_ids_have_kind_prefixes(s: Session, world):
    order = s.ok("create_flight_order", flight_id="F1", seat_id="S-E10", user_id=UID, date="2025-07-10", quantity=2)
    assert order["order_id"] == "T1FL01" and order["status"] == "unpaid" and order["total_price"] == 800
    assert order["products"] == [
        {"product_id": "S-E10", "seat_type": "Economy", "date": "2025-07-10", "price": 400.0, "quantity": 2}
    ]
    assert order["departure_time"] == "2025-07-10 08:00" and order["amount_due"] == 800
    assert stock(world, "flight_seats", "S-E10") == 1
    hotel = s.ok("create_hotel_order", hotel_id="H1", room_id="R-T10", user_id=UID)
    tickets = s.ok(
        "create_attraction_order", attraction_id="A1", ticket_id="K-S11", user_id=UID, date="2025-07-11", quantity=2
    )
    train = s.ok("create_train_order", train_id="T1", seat_id="TS-11", user_id=UID, date="2025-07-11", quantity=1)
    assert (hotel["order_id"], tickets["order_id"], train["order_id"]) == ("T1HT01", "T1AT01", "T1TR01")
    assert (
        s.ok("create_flight_order", flight_id="F1", seat_id="S-B10", user_id=UID, date="2025-07-10", quantity=1)[
            "order_id"
        ]
        == "T1FL02"
    )


def test_overnight_flight_lands_next_day(s: Session):
    order = s.ok("create_flight_order", flight_id="F2", seat_id="S-N10", user_id=UID, date="2025-07-10", quantity=1)
    assert order["arrival_time"] == "2025-07-11 00:40"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"user_id": "U999"}, "not this user's id"),
        ({"flight_id": "F9"}, "flight 'F9' does not exist"),
        ({"seat_id": "S-E11"}, "is for 2025-07-11, not 2025-07-10"),
        ({"seat_id": "S-N10"}, "not a product of flight F1"),
        ({"quantity": 0}, "quantity must be at least 1"),
        ({"quantity": 4}, "only 3 left"),
        ({"date": "10/07/2025"}, "YYYY-MM-DD"),
    ],
)
def test_flight_booking_preconditions(s: Session, args: dict[str, Any], fragment: str):
    base = {"flight_id": "F1", "seat_id": "S-E10", "user_id": UID, "date": "2025-07-10", "quantity": 1}
    s.refused("create_flight_order", fragment, **(base | args))


def test_departed_flight_cannot_be_booked(s: Session):
    s.refused(
        "create_flight_order",
        "has already departed",
        flight_id="F0",
        seat_id="S-P30",
        user_id=UID,
        date="2025-06-30",
        quantity=1,
    )


def test_hotel_stay_books_every_night(s: Session, world):
    order = s.ok("create_hotel_order", hotel_id="H1", room_id="R-T10", user_id=UID, check_out_date="2025-07-13")
    assert [p["date"] for p in order["products"]] == ["2025-07-10", "2025-07-11", "2025-07-12"]
    assert order["total_price"] == 500 + 560 + 520
    assert (order["check_in_date"], order["check_out_date"]) == ("2025-07-10", "2025-07-13")
    assert [stock(world, "hotel_rooms", p) for p in ("R-T10", "R-T11", "R-T12")] == [1, 1, 1]
    one = s.ok("create_hotel_order", hotel_id="H1", room_id="R-K12", user_id=UID)
    assert [p["date"] for p in one["products"]] == ["2025-07-12"], "one night by default"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"room_id": "R-K10", "check_out_date": "2025-07-12"}, "sold out on the night of 2025-07-11"),
        ({"check_out_date": "2025-07-10"}, "must be after the check-in date"),
        ({"check_out_date": "2025-07-14"}, "not sold for the night of 2025-07-13"),
        ({"room_id": "R-H10"}, "not a product of hotel H1"),
        ({"check_out_date": "July 12"}, "YYYY-MM-DD"),
    ],
)
def test_hotel_booking_preconditions(s: Session, args: dict[str, Any], fragment: str):
    s.refused("create_hotel_order", fragment, **({"hotel_id": "H1", "room_id": "R-T10", "user_id": UID} | args))


def test_attraction_tickets_only_on_open_days(s: Session):
    s.refused(
        "create_attraction_order",
        "is for 2025-07-11, not 2025-07-12",
        attraction_id="A1",
        ticket_id="K-S11",
        user_id=UID,
        date="2025-07-12",
        quantity=1,
    )
    s.refused(
        "create_attraction_order",
        "only 5 left",
        attraction_id="A1",
        ticket_id="K-S11",
        user_id=UID,
        date="2025-07-11",
        quantity=6,
    )


# ----- paying, moving, cancelling -------------------------------------------------------------
def test_pay_only_unpaid_and_ledger_records_it(s: Session, world):
    oid = s.ok("create_flight_order", flight_id="F1", seat_id="S-E10", user_id=UID, date="2025-07-10", quantity=2)[
        "order_id"
    ]
    s.refused("pay_hotel_order", "not a hotel order", order_id=oid)
    assert s.ok("pay_flight_order", order_id=oid)["amount_paid"] == 800
    s.refused("pay_flight_order", "needs status in ['unpaid']", order_id=oid)
    [entry] = list(world.table("travel_ledger"))
    assert (entry.order_id, entry.kind, entry.amount) == (oid, "payment", 800)


def _paid_flight(s: Session, seat: str = "S-E10", date: str = "2025-07-10") -> str:
    oid = s.ok("create_flight_order", flight_id="F1", seat_id=seat, user_id=UID, date=date, quantity=2)["order_id"]
    s.ok("pay_flight_order", order_id=oid)
    return oid


def test_modify_needs_the_detail_first_and_a_paid_order(s: Session):
    unpaid = s.ok("create_flight_order", flight_id="F1", seat_id="S-E10", user_id=UID, date="2025-07-10", quantity=1)[
        "order_id"
    ]
    s.refused(
        "modify_flight_order", "call `get_flight_order_detail`", order_id=unpaid, user_id=UID, new_date="2025-07-11"
    )
    s.ok("get_flight_order_detail", order_id=unpaid)
    s.refused("modify_flight_order", "needs status in ['paid']", order_id=unpaid, user_id=UID, new_date="2025-07-11")


def test_dearer_date_leaves_the_difference_due(s: Session, world):
    oid = _paid_flight(s)
    s.ok("get_flight_order_detail", order_id=oid)
    res = s.ok("modify_flight_order", order_id=oid, user_id=UID, new_date="2025-07-11")
    assert (res["price_difference"], res["amount_due"], res["refund"]) == (120, 120, 0)
    order = res["order"]
    assert order["status"] == "unpaid" and order["total_price"] == 920 and order["amount_paid"] == 800
    assert order["products"][0]["date"] == "2025-07-11" and order["products"][0]["product_id"] == "S-E11"
    assert (stock(world, "flight_seats", "S-E10"), stock(world, "flight_seats", "S-E11")) == (3, 1)
    assert s.ok("pay_flight_order", order_id=oid)["amount_paid"] == 120
    assert net_paid(world, world.table("orders").require(oid)) == 920


def test_cheaper_date_is_refunded(s: Session, world):
    oid = _paid_flight(s)
    s.ok("get_flight_order_detail", order_id=oid)
    res = s.ok("modify_flight_order", order_id=oid, user_id=UID, new_date="2025-07-09")
    assert (res["price_difference"], res["refund"], res["order"]["status"]) == (-100, 100, "paid")
    assert [(e.kind, e.amount) for e in world.table("travel_ledger")] == [("payment", 800), ("refund", 100)]


def test_modify_of_a_pre_existing_train_opens_the_ledger(s: Session, world):
    s.ok("get_train_order_detail", order_id=PAID_TRAIN)
    res = s.ok("modify_train_order", order_id=PAID_TRAIN, user_id=UID, new_date="2025-07-11")
    assert res["refund"] == 20 and res["order"]["amount_paid"] == 100
    kinds = [(e.kind, e.amount, e.reason) for e in world.table("travel_ledger")]
    assert kinds[0] == ("payment", 120, "paid before this conversation") and kinds[1][:2] == ("refund", 20)


@pytest.mark.parametrize(
    ("new_date", "fragment"),
    [
        ("2025-07-10", "already for 2025-07-10"),
        ("2025-07-12", "sells no Economy seats on 2025-07-12"),
        ("2025-7-11", "YYYY-MM-DD"),
    ],
)
def test_modify_preconditions(s: Session, new_date: str, fragment: str):
    oid = _paid_flight(s)
    s.ok("get_flight_order_detail", order_id=oid)
    s.refused("modify_flight_order", fragment, order_id=oid, user_id=UID, new_date=new_date)


def test_modify_refused_without_seats_on_the_new_date(s: Session):
    oid = _paid_flight(s, seat="S-E09", date="2025-07-09")
    s.ok("get_flight_order_detail", order_id=oid)
    _paid_flight(s, seat="S-E11", date="2025-07-11")  # leaves one seat on 07-11
    s.refused(
        "modify_flight_order",
        "only 1 Economy seats left on 2025-07-11",
        order_id=oid,
        user_id=UID,
        new_date="2025-07-11",
    )


def test_cancel_refunds_what_was_paid_and_restores_stock(s: Session, world):
    hid = s.ok("create_hotel_order", hotel_id="H1", room_id="R-T10", user_id=UID, check_out_date="2025-07-12")[
        "order_id"
    ]
    s.ok("pay_hotel_order", order_id=hid)
    s.refused("cancel_hotel_order", "call `get_hotel_order_detail`", order_id=hid, user_id=UID)
    s.ok("get_hotel_order_detail", order_id=hid)
    assert s.ok("cancel_hotel_order", order_id=hid, user_id=UID)["refund"] == 1060
    assert [stock(world, "hotel_rooms", p) for p in ("R-T10", "R-T11")] == [2, 2]
    assert net_paid(world, world.table("orders").require(hid)) == 0
    s.refused("cancel_hotel_order", "needs status in ['unpaid', 'paid']", order_id=hid, user_id=UID)


def test_cancel_unpaid_refunds_nothing_and_a_moved_unpaid_order_refunds_its_old_price(s: Session):
    tid = s.ok(
        "create_attraction_order", attraction_id="A1", ticket_id="K-S11", user_id=UID, date="2025-07-11", quantity=1
    )["order_id"]
    s.ok("get_attraction_order_detail", order_id=tid)
    assert s.ok("cancel_attraction_order", order_id=tid, user_id=UID)["refund"] == 0
    oid = _paid_flight(s)
    s.ok("get_flight_order_detail", order_id=oid)
    s.ok("modify_flight_order", order_id=oid, user_id=UID, new_date="2025-07-11")  # 120 now due, 800 paid
    assert s.ok("cancel_flight_order", order_id=oid, user_id=UID)["refund"] == 800


def test_pre_existing_paid_order_is_refunded_in_full(s: Session, world):
    s.ok("search_train_order", user_id=UID)
    s.ok("get_train_order_detail", order_id=PAID_TRAIN)
    assert s.ok("cancel_train_order", order_id=PAID_TRAIN, user_id=UID)["refund"] == 120
    assert stock(world, "train_seats", "TS-10") == 6


def test_a_trip_that_started_cannot_be_changed(s: Session):
    s.ok("get_flight_order_detail", order_id=PAST_FLIGHT)
    s.refused("cancel_flight_order", "departed on 2025-06-30", order_id=PAST_FLIGHT, user_id=UID)
    s.refused(
        "modify_flight_order", "departed on 2025-06-30", order_id=PAST_FLIGHT, user_id="U000077", new_date="2025-07-10"
    )


def test_order_searches_filter_by_status_and_date(s: Session):
    assert [o["order_id"] for o in s.ok("search_train_order", user_id=UID)] == [PAID_TRAIN]
    assert s.ok("search_train_order", user_id=UID, status="unpaid") == []
    assert [o["order_id"] for o in s.ok("search_flight_order", user_id=UID, status=None)] == [PAST_FLIGHT]
    assert s.ok("search_train_order", user_id=UID, date="2025-07-11") == []
    s.refused("search_hotel_order", "not this user's id", user_id="someone")
    s.refused("get_hotel_order_detail", "not a hotel order", order_id=PAID_TRAIN)


# ----- post-conditions and rollback -----------------------------------------------------------
def test_post_conditions_catch_a_booking_that_forgets_the_stock(world, kit, monkeypatch):
    monkeypatch.setattr(travel_rules, "_adjust", lambda *a, **k: None)  # where the bookings take the stock
    sess = Session(world, kit)
    before = world.state_dict()
    res, _ = sess("create_flight_order", flight_id="F1", seat_id="S-E10", user_id=UID, date="2025-07-10", quantity=1)
    assert res.outcome == "error" and "post-condition" in res.content and "stock" in res.content
    assert world.state_dict() == before


_SEATS = {  # seat -> (kind, place, date)
    "S-E09": ("flight", "F1", "2025-07-09"),
    "S-E10": ("flight", "F1", "2025-07-10"),
    "S-E11": ("flight", "F1", "2025-07-11"),
    "S-B10": ("flight", "F1", "2025-07-10"),
    "S-N10": ("flight", "F2", "2025-07-10"),
    "TS-10": ("train", "T1", "2025-07-10"),
    "TS-11": ("train", "T1", "2025-07-11"),
}
_DATES = ["2025-07-09", "2025-07-10", "2025-07-11", "2025-07-12"]
# one step of a random session; order indexes pick among the orders known so far
_STEPS = st.one_of(
    st.tuples(st.just("book"), st.sampled_from(sorted(_SEATS)), st.integers(0, 3)),
    st.tuples(st.just("stay"), st.sampled_from(["R-T10", "R-T11", "R-K10", "R-K12"]), st.sampled_from(_DATES)),
    st.tuples(st.just("tickets"), st.sampled_from(["K-S11", "K-G11"]), st.integers(1, 6)),
    st.tuples(st.sampled_from(["pay", "cancel", "detail_only"]), st.integers(0, 9)),
    st.tuples(st.just("modify"), st.integers(0, 9), st.sampled_from(_DATES)),
)


def _run_step(sess: Session, orders: list[str], step: tuple) -> list[Any]:
    """The calls of one step (a change looks the order up first); returns their results."""
    op = step[0]
    if op == "book":
        kind, place, date = _SEATS[step[1]]
        calls = [
            (
                f"create_{kind}_order",
                {f"{kind}_id": place, "seat_id": step[1], "user_id": UID, "date": date, "quantity": step[2]},
            )
        ]
    elif op == "stay":
        calls = [
            ("create_hotel_order", {"hotel_id": "H1", "room_id": step[1], "user_id": UID, "check_out_date": step[2]})
        ]
    elif op == "tickets":
        calls = [
            (
                "create_attraction_order",
                {
                    "attraction_id": "A1",
                    "ticket_id": step[1],
                    "user_id": UID,
                    "date": "2025-07-11",
                    "quantity": step[2],
                },
            )
        ]
    else:
        oid = orders[step[1] % len(orders)]
        kind = sess.world.table("orders").require(oid).order_type
        detail = (f"get_{kind}_order_detail", {"order_id": oid})
        calls = {
            "pay": [(f"pay_{kind}_order", {"order_id": oid})],
            "cancel": [detail, (f"cancel_{kind}_order", {"order_id": oid, "user_id": UID})],
            "detail_only": [detail],
            "modify": [detail, (f"modify_{kind}_order", {"order_id": oid, "user_id": UID, "new_date": step[-1]})],
        }[op]
    results = []
    for name, args in calls:
        before = sess.world.state_dict()
        res, value = sess(name, **args)
        if res.ok and name.startswith("create_"):
            orders.append(value["order_id"])
        elif not res.ok:
            assert sess.world.state_dict() == before, f"refused {name} changed the world"
        results.append(res)
    return results


def _used(order) -> dict[str, int]:
    out: dict[str, int] = {}
    if order is not None and order.status != "cancelled":
        for x in order.products:
            out[x.product_id] = out.get(x.product_id, 0) + x.quantity
    return out


@given(st.lists(_STEPS, max_size=30))
def test_stock_and_money_stay_consistent(initial, kit, steps):
    """Whatever is called: stock taken equals what active orders hold, a refused call changes
    nothing, no call fails as a defect, and every order's net payment fits its status."""
    world = initial.copy()
    sess = Session(world, kit)
    orders = [PAID_TRAIN, PAST_FLIGHT]
    for step in steps:
        for res in _run_step(sess, orders, step):
            assert res.outcome in ("executed", "rejected"), res.content
    for table in ("flight_seats", "hotel_rooms", "train_seats", "attraction_tickets"):
        for p in world.table(table):
            then = initial.table(table).require(p.product_id).quantity
            if then is None:
                continue
            delta = sum(
                _used(initial.table("orders").get(o.order_id)).get(p.product_id, 0) - _used(o).get(p.product_id, 0)
                for o in world.table("orders")
            )
            assert p.quantity - then == delta, p.product_id
            assert p.quantity >= 0
    for o in world.table("orders"):
        paid = net_paid(world, o)
        if o.status == "paid":
            assert paid == pytest.approx(o.total_price)
        elif o.status == "cancelled":
            assert paid == pytest.approx(0)
        else:
            assert 0 <= paid < o.total_price


# ----- any life-service world holding the travel tables --------------------------------------------
class CrossWorld(LifeWorld):
    schema = {**DeliveryWorld.schema, **TRAVEL_SCHEMA}
    place_tables = DeliveryWorld.place_tables + TRAVEL_PLACE_TABLES


def test_tools_run_on_a_world_that_also_holds_delivery(delivery_task):
    from servicegym.world_state.life.spec import build_life_world

    spec = travel_spec()
    dspec = delivery_task.world
    for key in ("stores", "products"):
        spec[key] = dspec[key]
    spec["orders"] = spec["orders"] + dspec["orders"]
    spec["locations"] = spec["locations"] + dspec["locations"]
    world = build_life_world(CrossWorld, spec)
    sess = Session(world, Toolkit(TOOLS + DELIVERY_TOOLS, check_postconditions=True))
    oid = sess.ok("create_flight_order", flight_id="F1", seat_id="S-E10", user_id=UID, date="2025-07-10", quantity=1)[
        "order_id"
    ]
    assert oid == "T1FL01" and sess.ok("pay_flight_order", order_id=oid)["amount_paid"] == 400
    sess.ok("get_train_order_detail", order_id=PAID_TRAIN)
    assert sess.ok("cancel_train_order", order_id=PAID_TRAIN, user_id=UID)["refund"] == 120
    assert {o["order_type"] for o in sess.ok("get_user_all_orders")} == {"train", "flight", "delivery"}
    store = build_delivery_world(dspec).table("stores").rows["S001"].location
    near = sess.ok("get_nearby", longitude=store.longitude, latitude=store.latitude, range=500)
    assert any(p.get("store_id") == "S001" for p in near)
    hotels = sess.ok("get_nearby", longitude=VENUE["longitude"], latitude=VENUE["latitude"], range=1000)
    assert [p.get("hotel_id") for p in hotels] == ["H1"]


# ----- VitaBench parity: a world from a VitaBench task file follows its release's rules -----------
def vitabench_session(kit: Toolkit, release: str = "2026", **changes: Any) -> Session:
    return Session(build_travel_world(travel_spec() | {"vitabench_release": release} | changes), kit)


def test_vitabench_searches_match_cities_loosely_and_rank_every_place(kit: Toolkit, s: Session):
    v = vitabench_session(kit)
    # VitaBench's city match is a partial match of at least 40: "Ningbo" meets "Hangzhou" at 50
    assert s.ok("hotel_search_recommend", city_name="Ningbo", key_words=["gym"]) == []
    assert [h["hotel_id"] for h in v.ok("hotel_search_recommend", city_name="Ningbo", key_words=["gym"])] == ["H1", "H2"]
    # ranked by the keywords joined into one text against name + tags (VitaBench's text)
    hits = v.ok("hotel_search_recommend", city_name="Hangzhou", key_words=["Hill", "Hotel"])
    assert [h["hotel_id"] for h in hits] == ["H2", "H1"] and hits[0]["relevance"] >= hits[1]["relevance"]
    assert [a["attraction_id"] for a in v.ok("attractions_search_recommend", city_name="Hangzhou",
                                             key_words=["museum"])] == ["A1"]
    # flights and trains: the same loose match, in catalogue order (a generated task sorts by time)
    assert [f["flight_id"] for f in s.ok("flight_search_recommend", departure="Shanghai",
                                         destination="Hangzhou")] == ["F0", "F1", "F2"]
    assert [f["flight_id"] for f in v.ok("flight_search_recommend", departure="Shanghai",
                                         destination="Hangzhou")] == ["F1", "F2", "F0"]
    assert [f["flight_id"] for f in v.ok("flight_search_recommend", departure="Hangzhou",
                                         destination="Shanghai")] == ["F1", "F2", "F0"]
    assert s.ok("flight_search_recommend", departure="Hangzhou", destination="Shanghai") == []


@pytest.mark.parametrize(("release", "cap"), [("2026", 50), ("2025-11", 100)])
def test_vitabench_hotel_search_cap_per_release(kit: Toolkit, release: str, cap: int):
    hotel = travel_spec()["hotels"][1]
    more = [dict(hotel, hotel_id=f"HX{i:03d}", hotel_name=f"Hill Hotel {i}") for i in range(120)]
    v = vitabench_session(kit, release, hotels=travel_spec()["hotels"] + more)
    hits = v.ok("hotel_search_recommend", city_name="Hangzhou", key_words=["Hill Hotel"])
    assert len(hits) == cap == len({h["hotel_id"] for h in hits})
    # without keywords every hotel scores 0: catalogue order
    assert [h["hotel_id"] for h in v.ok("hotel_search_recommend", city_name="Hangzhou")][:3] == ["H1", "H2", "HX000"]


def test_vitabench_books_and_cancels_whatever_the_date(kit: Toolkit, s: Session):
    past = {"user_id": UID, "flight_id": "F0", "seat_id": "S-P30", "date": "2025-06-30", "quantity": 1}
    s.refused("create_flight_order", "already departed", **past)
    s.ok("get_flight_order_detail", order_id=PAST_FLIGHT)
    s.refused("cancel_flight_order", "departed on 2025-06-30", order_id=PAST_FLIGHT, user_id=UID)
    v = vitabench_session(kit)
    assert v.ok("create_flight_order", **past)["status"] == "unpaid"
    v.ok("get_flight_order_detail", order_id=PAST_FLIGHT)
    assert v.ok("cancel_flight_order", order_id=PAST_FLIGHT, user_id=UID)["refund"] == 380
    v.refused("cancel_flight_order", "already cancelled", order_id=PAST_FLIGHT, user_id=UID)
