"""The thirty online-travel tools, with VitaBench's names and arguments (thirty-eight with the
eight shared ones).

For each product kind (hotel, attraction, flight, train): info, search, create order, pay,
search orders, order detail and cancel; flights and trains can also move to another date.
The rules VitaBench kept as prose or asserts are code here: pre-conditions (the product
belongs to the place and is sold on that date, dates are real and not in the past, check-out
after check-in, stock on every night, paying only an unpaid order, modifying or cancelling only
after the order's detail was looked up) and post-conditions (stock taken on booking and given
back on cancellation, which VitaBench's public code forgot; prices; refunds).

Money is kept in the ``travel_ledger`` table: paying records a payment, a cheaper new date or a
cancellation records a refund, and a dearer new date leaves the order unpaid for the difference.
A pre-existing paid order has no entries; its first entry is an opening payment of its price.

The tools read only tables and ``world.extra``, never the world's class, so any ``LifeWorld``
holding ``TRAVEL_SCHEMA`` (a cross-scenario world) can run them.
"""
from __future__ import annotations

from typing import Any, Optional

from servicegym.world_state.core import History, World
from servicegym.world_state.life.entities import LifeWorld
from servicegym.world_state.life.tools import (
    RELEASE_KEY,
    SEARCH_CAPS,
    SHARED_TOOLS,
    SearchIndex,
    rank,
    rank_all,
    status_problem,
    status_rule,
    vitabench_release,
)
from servicegym.world_state.tools import (
    Postcondition,
    RawJson,
    exists,
    field_in,
    field_problem,
    no_record,
    requires_prior_call,
    rule,
    tool,
)
from servicegym.world_state.travel.entities import (
    Kind,
    parse_day,
    products_by_slot,
    products_of,
)
from servicegym.world_state.travel.rules import (
    SEARCH_RULE,
    USER_RULE,
    _cancel,
    _date_problem,
    _date_rule,
    _departs_in_future,
    _in_stock,
    _kind_problem,
    _move,
    _new_date_ok,
    _new_date_problem,
    _new_order,
    _night_products,
    _order_belongs,
    _order_detail,
    _order_exists,
    _order_of_kind,
    _orders_of,
    _owner_problem,
    _pay,
    _positive_quantity,
    _post_cancelled,
    _post_created,
    _post_moved,
    _post_paid,
    _product_rule,
    _rooms_free,
    _single_line,
    _single_line_problem,
    _started_problem,
    _stay_valid,
    _trip_not_started,
    _user_is_current,
    _visit_not_past,
    place_matches,
)
from servicegym.world_state.travel.views import (
    _CANCELLABLE,
    _DATE_SOURCES,
    _PAID_ONLY,
    _SEARCH,
    _UNPAID,
    ATTRACTION,
    FLIGHT,
    HOTEL,
    SEARCH_LIMIT,
    TRAIN,
    TravelStatus,
    _departs,
    _detail_tool,
    _info_tool,
    place_json,
    place_view,
)


# ----- info ---------------------------------------------------------------------------------------
@tool(kind="read", pre=[exists("hotels", "hotel_id", "hotel", _SEARCH["hotel"])])
def get_ota_hotel_info(world: LifeWorld, hotel_id: str) -> dict[str, Any]:
    """Details of a hotel: id, name, rating, star level, address and coordinates, tags, and its rooms (one product per room type and night, with price and rooms left).

    Args:
        hotel_id: The hotel's id.
    """
    return place_json(world, HOTEL, hotel_id)


@tool(kind="read", pre=[exists("attractions", "attraction_id", "attraction", _SEARCH["attraction"])])
def get_ota_attraction_info(world: LifeWorld, attraction_id: str) -> dict[str, Any]:
    """Details of an attraction: id, name, address, description, rating, opening hours, default ticket price, and its tickets (one product per ticket type and day; a day without tickets is a day it is closed).

    Args:
        attraction_id: The attraction's id.
    """
    return place_json(world, ATTRACTION, attraction_id)


@tool(kind="read", pre=[exists("flights", "flight_id", "flight", _SEARCH["flight"])])
def get_ota_flight_info(world: LifeWorld, flight_id: str) -> dict[str, Any]:
    """Details of a flight: number, cities, airports, departure and arrival times (an arrival earlier than the departure is the next day), tags, and its seats (one product per seat class and date).

    Args:
        flight_id: The flight's id.
    """
    return place_json(world, FLIGHT, flight_id)


@tool(kind="read", pre=[exists("trains", "train_id", "train", _SEARCH["train"])])
def get_ota_train_info(world: LifeWorld, train_id: str) -> dict[str, Any]:
    """Details of a train: number, cities, stations, departure and arrival times (an arrival earlier than the departure is the next day), tags, and its seats (one product per seat class and date).

    Args:
        train_id: The train's id.
    """
    return place_json(world, TRAIN, train_id)


# ----- search -------------------------------------------------------------------------------------
def _ranked_places(
    world: LifeWorld, kind: Kind, city: str, key_words: list[str] | None, text, vitabench_text
) -> list[dict[str, Any]]:
    """The places of a city ranked by keywords: a generated task's ``rank`` (no threshold, 100 at
    most), or in a VitaBench task VitaBench's (its city match, then ``rank_all`` of the keywords
    joined into one text over its search texts, the release's cap at most)."""
    release = vitabench_release(world)
    places = [p for p in world.tables[kind.places] if place_matches(city, p.location.address, release is not None)]
    limit = SEARCH_LIMIT if release is None else SEARCH_CAPS[release]["ota"]
    if release is not None:
        docs = {p.key: vitabench_text(p) for p in places}
        hits: list[tuple[str, float | None]] = list(rank_all("".join(key_words or []), SearchIndex(docs), limit))
    elif key_words:
        hits = list(rank(key_words, {p.key: text(p) for p in places}, limit, threshold=0.0))
    else:
        hits = [(p.key, None) for p in places[:limit]]
    out = []
    for pid, score in hits:
        view = place_view(world, kind, pid, with_products=False)
        if score is not None:
            view["relevance"] = score
        out.append(view)
    return out


@tool(kind="read", pre=[SEARCH_RULE], aliases=["hotel_search_recommand"])
def hotel_search_recommend(
    world: LifeWorld, city_name: str, key_words: Optional[list[str]] = None
) -> list[dict[str, Any]]:
    """Hotels in a city, most relevant to the keywords first: id, name, rating, star level, address, tags (rooms and prices come from get_ota_hotel_info). VitaBench spells this tool hotel_search_recommand; both names work. In tasks from VitaBench files, as in VitaBench, the city is matched loosely against each hotel's address (hotels of other cities may come back too), every matching hotel is ranked by how well the keywords (joined into one text) match its name and tags, up to 50 (100 in the 2025-11 release); in generated tasks up to 100 hotels of the city.

    Args:
        city_name: The city.
        key_words: Keywords matched against hotel names and tags.
    """
    return _ranked_places(world, HOTEL, city_name, key_words, lambda h: f"{h.hotel_name} {' '.join(h.tags)}",
                          lambda h: h.hotel_name + ",".join(h.tags))


@tool(kind="read", pre=[SEARCH_RULE], aliases=["attractions_search_recommand", "attraction_search_recommend"])
def attractions_search_recommend(world: LifeWorld, city_name: str, key_words: list[str]) -> list[dict[str, Any]]:
    """Attractions in a city, most relevant to the keywords first: id, name, address, description, rating, opening hours (tickets come from get_ota_attraction_info). In tasks from VitaBench files, as in VitaBench, the city is matched loosely against each attraction's address (attractions of other cities may come back too), every matching attraction is ranked by how well the keywords (joined into one text) match its name, description and address, up to 50 (100 in the 2025-11 release); in generated tasks up to 100 attractions of the city.

    Args:
        city_name: The city.
        key_words: Keywords matched against names, descriptions and addresses.
    """
    return _ranked_places(
        world, ATTRACTION, city_name, key_words, lambda a: f"{a.attraction_name} {a.description} {a.location.address}",
        lambda a: f"{a.attraction_name},{a.description},{a.location.address}",
    )


def _route(world: LifeWorld, kind: Kind, departure: str, destination: str, date: str | None) -> list[dict[str, Any]]:
    """Flights or trains between two cities (on a date): by departure time, or in a VitaBench
    task as VitaBench finds them (its loose city match, catalogue order, each once)."""
    vitabench = vitabench_release(world) is not None
    found = []
    for t in world.tables[kind.places]:
        if not (place_matches(departure, t.departure_city, vitabench)
                and place_matches(destination, t.arrival_city, vitabench)):
            continue
        if date is not None and not any(p.date == date.strip() for p in products_of(world, kind, t.key)):
            continue
        found.append(t)
    if not vitabench:
        found.sort(key=lambda t: (t.departure_time, t.key))
    return [t.model_dump(mode="json") for t in found]


@tool(kind="read", pre=[SEARCH_RULE], aliases=["flight_search_recommand"])
def flight_search_recommend(world: LifeWorld, departure: str, destination: str) -> list[dict[str, Any]]:
    """Flights from one city to another, by departure time: id, number, airports, departure and arrival times, tags (seats, dates and prices come from get_ota_flight_info). In tasks from VitaBench files, as in VitaBench, cities are matched loosely (flights of other cities may come back too) and flights come in catalogue order.

    Args:
        departure: The departure city.
        destination: The destination city.
    """
    return _route(world, FLIGHT, departure, destination, None)


@tool(kind="read", pre=[SEARCH_RULE, _date_rule("date")])
def train_ticket_search(world: LifeWorld, departure: str, destination: str, date: str) -> list[dict[str, Any]]:
    """Trains from one city to another that run on a date, by departure time: id, number, stations, departure and arrival times, tags (seats and prices come from get_ota_train_info). In tasks from VitaBench files, as in VitaBench, cities are matched loosely (trains of other cities may come back too) and trains come in catalogue order.

    Args:
        departure: The departure city.
        destination: The destination city.
        date: The travel date, YYYY-MM-DD.
    """
    return _route(world, TRAIN, departure, destination, date)


# ----- create -------------------------------------------------------------------------------------
@tool(
    kind="write",
    pre=[
        USER_RULE,
        exists("hotels", "hotel_id", "hotel", _SEARCH["hotel"]),
        _product_rule(HOTEL, "room_id", None),
        _date_rule("check_out_date", optional=True),
        rule(
            "check-out is after check-in (the room's night) and check-in is not in the past (in VitaBench tasks "
            "it may be)",
            _stay_valid,
            (_info_tool(HOTEL),) + _DATE_SOURCES,
        ),
        rule("that room type is sold, and not sold out, on every night of the stay", _rooms_free, (_info_tool(HOTEL),)),
    ],
    post=[_post_created(HOTEL)],
)
def create_hotel_order(
    world: LifeWorld, hotel_id: str, room_id: str, user_id: str, check_out_date: Optional[str] = None
) -> dict[str, Any]:
    """Book one room of a hotel; the room product's night is the check-in date, and the same room type is booked for every night until check-out. A check-in date in the past is refused in generated tasks, accepted in tasks from VitaBench files (as VitaBench does). The order starts unpaid: confirm with the user, then pay it.

    Args:
        hotel_id: The hotel's id.
        room_id: The room product id of the first night (from get_ota_hotel_info).
        user_id: The user's id.
        check_out_date: Check-out date, YYYY-MM-DD; default the day after check-in (one night).
    """
    args = {"room_id": room_id, "check_out_date": check_out_date}
    picks = [(pid, 1) for pid in _night_products(world, args)]
    return _new_order(world, HOTEL, hotel_id, picks, user_id)  # type: ignore[arg-type]


@tool(
    kind="write",
    pre=[
        USER_RULE,
        exists("attractions", "attraction_id", "attraction", _SEARCH["attraction"]),
        _date_rule("date"),
        _product_rule(ATTRACTION, "ticket_id", "date"),
        rule("quantity is at least 1", _positive_quantity),
        rule("the visit date is not in the past (not checked in VitaBench tasks)", _visit_not_past),
        _in_stock(ATTRACTION, "ticket_id"),
    ],
    post=[_post_created(ATTRACTION)],
)
def create_attraction_order(
    world: LifeWorld, attraction_id: str, ticket_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy tickets of an attraction for one day (a past day is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        attraction_id: The attraction's id.
        ticket_id: The ticket product id for that day (from get_ota_attraction_info).
        user_id: The user's id.
        date: The visit date, YYYY-MM-DD.
        quantity: Number of tickets.
    """
    return _new_order(world, ATTRACTION, attraction_id, [(ticket_id, quantity)], user_id)


def _transport_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        exists(kind.places, kind.owner, kind.name, _SEARCH[kind.name]),
        _date_rule("date"),
        _product_rule(kind, "seat_id", "date"),
        rule("quantity is at least 1", _positive_quantity),
        _departs_in_future(kind, "seat_id"),
        _in_stock(kind, "seat_id"),
    ]


@tool(kind="write", pre=_transport_pre(FLIGHT), post=[_post_created(FLIGHT)])
def create_flight_order(
    world: LifeWorld, flight_id: str, seat_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy seats of one class on a flight for one date (one already departed is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        flight_id: The flight's id.
        seat_id: The seat product id for that date and class (from get_ota_flight_info).
        user_id: The user's id.
        date: The departure date, YYYY-MM-DD.
        quantity: Number of seats (one per traveller).
    """
    return _new_order(world, FLIGHT, flight_id, [(seat_id, quantity)], user_id)


@tool(kind="write", pre=_transport_pre(TRAIN), post=[_post_created(TRAIN)])
def create_train_order(
    world: LifeWorld, train_id: str, seat_id: str, user_id: str, date: str, quantity: int
) -> dict[str, Any]:
    """Buy seats of one class on a train for one date (one already departed is refused in generated tasks, accepted in tasks from VitaBench files, as VitaBench does); the order starts unpaid: confirm with the user, then pay it.

    Args:
        train_id: The train's id.
        seat_id: The seat product id for that date and class (from get_ota_train_info).
        user_id: The user's id.
        date: The departure date, YYYY-MM-DD.
        quantity: Number of seats (one per traveller).
    """
    return _new_order(world, TRAIN, train_id, [(seat_id, quantity)], user_id)


# ----- pay ----------------------------------------------------------------------------------------
def _pay_pre(kind: Kind) -> list[Any]:
    unpaid = field_in("orders", "order_id", "order", ["unpaid"])
    # a dearer new date makes a paid order unpaid again, for the difference
    unpaid = rule(unpaid.text, unpaid.check, (f"modify_{kind.name}_order",) if kind.name in ("flight", "train") else ())
    return [_order_exists(kind), _order_of_kind(kind), unpaid]


def _pay_check(kind: Kind) -> Any:
    """``_pay_pre(kind)`` in one function (``tool(check=...)``): the order looked up once."""

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        oid = args.get("order_id")
        o = world.tables["orders"].rows.get(oid)
        if o is None:
            return no_record("order", oid)
        return _kind_problem(kind, o) or field_problem(o, "order", _UNPAID)

    return check


_PAID = Postcondition("the order is paid in full", _post_paid)


@tool(kind="write", pre=_pay_pre(HOTEL), post=[_PAID], check=_pay_check(HOTEL))
def pay_hotel_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid hotel order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(ATTRACTION), post=[_PAID], check=_pay_check(ATTRACTION))
def pay_attraction_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid attraction ticket order once the user has confirmed the payment.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(FLIGHT), post=[_PAID], check=_pay_check(FLIGHT))
def pay_flight_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid flight order (or the price difference still due after a date change) once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


@tool(kind="write", pre=_pay_pre(TRAIN), post=[_PAID], check=_pay_check(TRAIN))
def pay_train_order(world: LifeWorld, order_id: str) -> RawJson:
    """Pay an unpaid train order (or the price difference still due after a date change) once the user has confirmed.

    Args:
        order_id: The order's id.
    """
    return _pay(world, order_id)


# ----- search orders ------------------------------------------------------------------------------
_SEARCH_ORDERS_PRE = [USER_RULE, _date_rule("date", optional=True)]


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_hotel_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's hotel orders with a given status (default paid; null for any), optionally only those with a night on a date.

    Args:
        user_id: The user's id.
        date: Only orders with a night on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, HOTEL, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_attraction_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's attraction ticket orders with a given status (default paid; null for any), optionally only those for a date.

    Args:
        user_id: The user's id.
        date: Only orders for this visit date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, ATTRACTION, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_flight_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's flight orders with a given status (default paid; null for any), optionally only those departing on a date.

    Args:
        user_id: The user's id.
        date: Only orders departing on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, FLIGHT, user_id, date, status)


@tool(kind="read", pre=_SEARCH_ORDERS_PRE)
def search_train_order(
    world: LifeWorld, user_id: str, date: Optional[str] = None, status: Optional[TravelStatus] = "paid"
) -> list[dict[str, Any]]:
    """The user's train orders with a given status (default paid; null for any), optionally only those departing on a date.

    Args:
        user_id: The user's id.
        date: Only orders departing on this date, YYYY-MM-DD.
        status: Order status to filter on.
    """
    return _orders_of(world, TRAIN, user_id, date, status)


# ----- order detail -------------------------------------------------------------------------------
@tool(kind="read", pre=[_order_exists(HOTEL), _order_of_kind(HOTEL)])
def get_hotel_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a hotel order: hotel, nights (room type, date, price), check-in and check-out, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(ATTRACTION), _order_of_kind(ATTRACTION)])
def get_attraction_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of an attraction ticket order: attraction, ticket type, date, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(FLIGHT), _order_of_kind(FLIGHT)])
def get_flight_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a flight order: flight, seat class, date, departure and arrival, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


@tool(kind="read", pre=[_order_exists(TRAIN), _order_of_kind(TRAIN)])
def get_train_order_detail(world: LifeWorld, order_id: str) -> dict[str, Any]:
    """Full details of a train order: train, seat class, date, departure and arrival, price, quantity, total, paid and due amounts, status.

    Args:
        order_id: The order's id.
    """
    return _order_detail(world, order_id)


# ----- modify -------------------------------------------------------------------------------------
def _modify_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        _order_exists(kind),
        _order_of_kind(kind),
        rule("the order must belong to the user", _order_belongs),
        requires_prior_call(_detail_tool(kind), "order_id", "order"),
        field_in("orders", "order_id", "order", ["paid"]),
        rule("the order must hold a single ticket line", _single_line),
        _trip_not_started(kind),
        _date_rule("new_date"),
        _new_date_ok(kind),
    ]


def _named_order(kind: Kind, name: str, detail: str, prior: Any, world: World, history: History,
                 args: dict[str, Any]) -> tuple[str | None, Any]:
    """The rules a date change and a cancellation share, in their order (the user is the current
    one, the order exists, is of ``kind``, is the user's, and its details were read before): the
    first problem and no order, or no problem and the order."""
    problem = _user_is_current(world, history, args)
    if problem:
        return problem, None
    oid = args.get("order_id")
    o = world.tables["orders"].rows.get(oid)
    if o is None:
        return no_record("order", oid), None
    if o.order_type != name:
        return _kind_problem(kind, o), None
    if o.user_id != args["user_id"]:
        return _owner_problem(o, args["user_id"]), None
    if not history.called(detail, oid):
        return prior(world, history, args), None
    return None, o


def _modify_check(kind: Kind) -> Any:
    """``_modify_pre(kind)`` in one function (``tool(check=...)``): the order looked up once, each
    record (the order, its place, the new date's product) read once, and a rule's message made
    only when it fails (the same first problem, the same message, as the rules one by one)."""
    prior = requires_prior_call(_detail_tool(kind), "order_id", "order").check
    detail, name, places, products = _detail_tool(kind), kind.name, kind.places, kind.products

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        problem, o = _named_order(kind, name, detail, prior, world, history, args)
        if o is None:
            return problem
        tables = world.tables
        if o.status != "paid":
            return field_problem(o, "order", _PAID_ONLY)
        lines = o.products
        if len(lines) != 1:
            return _single_line_problem(o)
        release = world.extra.get(RELEASE_KEY)  # vitabench_release
        now = world.clock.now
        line = lines[0]
        place = tables[places].rows.get(o.store_id)
        if not release:  # ``_started_problem`` of a single line
            if place is not None:
                if _departs(place.departure_time, line.date) < now:
                    return _started_problem(kind, world, o)
            elif parse_day(line.date).date() < now.date():
                return _started_problem(kind, world, o)
        new_date = args.get("new_date")
        problem = _date_problem(new_date, "new_date")
        if problem:
            return problem
        # ``_new_date_problem``
        day = new_date.strip()
        pid = None if day == line.date else products_by_slot(world, kind).get((o.store_id, line.name, day))
        if pid is None:
            return _new_date_problem(kind, world, o, new_date)
        p = tables[products].rows[pid]
        if p.quantity is not None and p.quantity < line.quantity:
            return _new_date_problem(kind, world, o, new_date)
        if place is not None and not release and _departs(place.departure_time, day) < now:
            return _new_date_problem(kind, world, o, new_date)
        return None

    return check


@tool(kind="write", pre=_modify_pre(TRAIN), post=[_post_moved(TRAIN)], check=_modify_check(TRAIN))
def modify_train_order(world: LifeWorld, order_id: str, user_id: str, new_date: str) -> RawJson:
    """Move a paid train order to another departure date, same train and seat class. In generated tasks neither the old nor the new departure may be past; tasks from VitaBench files, as VitaBench, do not check that. A dearer date leaves the difference due (the order becomes unpaid: ask the user to pay it); a cheaper one refunds the difference.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new departure date, YYYY-MM-DD.
    """
    return _move(world, TRAIN, order_id, new_date)


@tool(kind="write", pre=_modify_pre(FLIGHT), post=[_post_moved(FLIGHT)], check=_modify_check(FLIGHT))
def modify_flight_order(world: LifeWorld, order_id: str, user_id: str, new_date: str) -> RawJson:
    """Move a paid flight order to another departure date, same flight and seat class. In generated tasks neither the old nor the new departure may be past; tasks from VitaBench files, as VitaBench, do not check that. A dearer date leaves the difference due (the order becomes unpaid: ask the user to pay it); a cheaper one refunds the difference.

    Args:
        order_id: The order's id.
        user_id: The user's id.
        new_date: The new departure date, YYYY-MM-DD.
    """
    return _move(world, FLIGHT, order_id, new_date)


# ----- cancel -------------------------------------------------------------------------------------
def _cancel_pre(kind: Kind) -> list[Any]:
    return [
        USER_RULE,
        _order_exists(kind),
        _order_of_kind(kind),
        rule("the order must belong to the user", _order_belongs),
        requires_prior_call(_detail_tool(kind), "order_id", "order"),
        status_rule("orders", "order_id", "order", _CANCELLABLE),
        _trip_not_started(kind),
    ]


def _cancel_check(kind: Kind) -> Any:
    """``_cancel_pre(kind)`` in one function (``tool(check=...)``): the order looked up once, and a
    rule's message made only when it fails (the same first problem, the same message, as the
    rules one by one)."""
    prior = requires_prior_call(_detail_tool(kind), "order_id", "order").check
    detail, name = _detail_tool(kind), kind.name

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        problem, o = _named_order(kind, name, detail, prior, world, history, args)
        if o is None:
            return problem
        release = world.extra.get(RELEASE_KEY)  # ``vitabench_release``
        if release is None:  # ``status_problem``
            if o.status not in _CANCELLABLE:
                return field_problem(o, "order", _CANCELLABLE)
        elif o.status == "cancelled":  # a VitaBench task's: any status but cancelled
            return status_problem(world, o, "order", _CANCELLABLE)
        return None if release else _started_problem(kind, world, o)

    return check


@tool(kind="write", pre=_cancel_pre(HOTEL), post=[_post_cancelled(HOTEL)], check=_cancel_check(HOTEL))
def cancel_hotel_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a hotel order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, HOTEL, order_id)


@tool(kind="write", pre=_cancel_pre(ATTRACTION), post=[_post_cancelled(ATTRACTION)], check=_cancel_check(ATTRACTION))
def cancel_attraction_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel an attraction ticket order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, ATTRACTION, order_id)


@tool(kind="write", pre=_cancel_pre(FLIGHT), post=[_post_cancelled(FLIGHT)], check=_cancel_check(FLIGHT))
def cancel_flight_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a flight order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, FLIGHT, order_id)


@tool(kind="write", pre=_cancel_pre(TRAIN), post=[_post_cancelled(TRAIN)], check=_cancel_check(TRAIN))
def cancel_train_order(world: LifeWorld, order_id: str, user_id: str) -> RawJson:
    """Cancel a train order; whatever was paid is refunded (tell the user the amount). An order already cancelled cannot be cancelled; in generated tasks neither can one whose trip has started (tasks from VitaBench files, as VitaBench, allow any other status and date).

    Args:
        order_id: The order's id.
        user_id: The user's id.
    """
    return _cancel(world, TRAIN, order_id)


TRAVEL_TOOLS = [
    get_ota_hotel_info,
    get_ota_attraction_info,
    get_ota_flight_info,
    get_ota_train_info,
    hotel_search_recommend,
    attractions_search_recommend,
    flight_search_recommend,
    train_ticket_search,
    create_hotel_order,
    create_attraction_order,
    create_flight_order,
    create_train_order,
    pay_hotel_order,
    pay_attraction_order,
    pay_flight_order,
    pay_train_order,
    search_hotel_order,
    search_attraction_order,
    search_flight_order,
    search_train_order,
    get_hotel_order_detail,
    get_attraction_order_detail,
    get_flight_order_detail,
    get_train_order_detail,
    modify_train_order,
    modify_flight_order,
    cancel_hotel_order,
    cancel_attraction_order,
    cancel_flight_order,
    cancel_train_order,
]
TOOLS = SHARED_TOOLS + TRAVEL_TOOLS
