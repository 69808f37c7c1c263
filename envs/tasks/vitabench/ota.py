"""VitaBench OTA (travel) tasks: hotels, attractions, flights and trains with dated products."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from pydantic import AliasChoices, Field, field_validator

from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.vitabench.common import (
    STOP_MESSAGE,
    VCriteria,
    VExpectedState,
    VLocation,
    VOrder,
    VTask,
    VWeather,
    _action,
    _as_dict,
    _built,
    _check_time,
    _clear_task_key,
    _Context,
    _Model,
    _Notes,
    _unique_states,
    _vitabench_task,
    detect_language,
)
from servicegym.rewards.vitabench import (
    GoldLine,
    GoldOrder,
    GoldState,
    norm_text,
    status_class,
    travel_lines_match,
)
from servicegym.world_state.life.entities import OrderLine
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.travel import KINDS as TRAVEL_KINDS
from servicegym.world_state.travel import TravelWorld, build_travel_world
from servicegym.world_state.travel.entities import TRANSPORT_KINDS, products_by_slot

OTA_NAMES = ("ota", "travel", "online travel", "酒旅", "在线旅行")


_OTA_KIND_PLACES = {"hotel": "hotels", "attraction": "attractions", "flight": "flights", "train": "trains"}


_DAY = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})")


_CLOCK = re.compile(r"(?:.*[ T])?(\d{1,2}):(\d{2})(?::\d{2})?\s*$")


def _ota_day(value: str) -> str:
    """A product or line date as YYYY-MM-DD (a time after it is dropped, one-digit parts padded)."""
    m = _DAY.match(value)
    if m is None:
        raise ValueError(f"{value!r} is not a date of the form YYYY-MM-DD")
    try:
        return datetime(*(int(x) for x in m.groups())).strftime("%Y-%m-%d")
    except ValueError:
        raise ValueError(f"{value!r} is not a valid date") from None


def _ota_clock(value: str) -> str:
    """A departure or arrival time as HH:MM (from HH:MM, HH:MM:SS or a full date and time)."""
    m = _CLOCK.match(value.strip())
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ValueError(f"{value!r} is not a time of day HH:MM")
    return f"{int(m.group(1)):02d}:{m.group(2)}"


class VOtaProduct(_Model):
    product_id: str
    price: float
    quantity: int | None = None  # absent: unlimited
    date: str
    # VitaBench calls it room_type, ticket_type or seat_type by kind
    type_name: str = Field(validation_alias=AliasChoices("room_type", "ticket_type", "seat_type"))

    @field_validator("date")
    @classmethod
    def _date(cls, value: str) -> str:
        return _ota_day(value)


class VHotel(_Model):
    hotel_id: str | None = None  # absent: the key in ``hotels``
    hotel_name: str
    score: float
    star_rating: int = 0
    location: VLocation
    tags: list[str] = []
    products: list[VOtaProduct] = []


class VAttraction(_Model):
    attraction_id: str | None = None
    attraction_name: str
    location: VLocation
    description: str = ""
    score: float = 0.0
    opening_hours: str = ""
    ticket_price: float = 0.0
    products: list[VOtaProduct] = []


class _VTransport(_Model):
    departure_city: str
    arrival_city: str
    departure_time: str
    arrival_time: str
    tags: list[str] = []
    products: list[VOtaProduct] = []

    @field_validator("departure_time", "arrival_time")
    @classmethod
    def _clock(cls, value: str) -> str:
        return _ota_clock(value)


class VFlight(_VTransport):
    flight_id: str | None = None
    flight_number: str
    departure_airport_location: VLocation
    arrival_airport_location: VLocation


class VTrain(_VTransport):
    train_id: str | None = None
    train_number: str
    departure_station_location: VLocation
    arrival_station_location: VLocation


class VOtaLine(_Model):
    product_id: str
    price: float = 0.0
    quantity: int = 1
    date: str | None = None
    type_name: str | None = Field(default=None, validation_alias=AliasChoices("room_type", "ticket_type", "seat_type"))

    @field_validator("date")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        return _ota_day(value) if value else None


class VOtaOrder(VOrder):
    products: list[VOtaLine | None] = []  # type: ignore[assignment]


class VOtaExpectedState(VExpectedState):
    required_orders: list[VOtaOrder] = []  # type: ignore[assignment]


class VOtaCriteria(VCriteria):
    expected_states: list[VOtaExpectedState]


class VOtaTask(VTask):
    evaluation_criteria: VOtaCriteria


class VOtaEnvironment(_Model):
    time: str
    user_id: str
    weather: list[VWeather] = []
    location: list[VLocation] = []
    user_historical_behaviors: dict[str, Any] = {}
    orders: dict[str, VOtaOrder] = {}
    hotels: dict[str, VHotel] = {}
    attractions: dict[str, VAttraction] = {}
    flights: dict[str, VFlight] = {}
    trains: dict[str, VTrain] = {}

    @field_validator("time")
    @classmethod
    def _now(cls, value: str) -> str:
        return _check_time(value, allow_empty=False) or ""

    @field_validator("orders", mode="before")
    @classmethod
    def _keyed(cls, value: Any) -> Any:
        return _as_dict(value, "order_id")


def _ota_spec(raw: VTask, env: VOtaEnvironment, task_key: str, language: str, notes: _Notes) -> dict[str, Any]:
    """The world spec: each place's nested products become rows of the kind's product table; a
    product id listed twice (VitaBench may reuse one across dates) is made unique per date."""
    tables: dict[str, list[dict[str, Any]]] = {}
    names: dict[tuple[str, str], str] = {}  # (kind, place id) -> display name
    by_slot: dict[tuple[str, str, str, str], str] = {}  # (kind, place id, type, date) -> product id
    by_id: dict[tuple[str, str], dict[str, Any]] = {}  # (kind, original product id) -> first row
    for kind_name, places in (("hotel", env.hotels), ("attraction", env.attractions), ("flight", env.flights),
                              ("train", env.trains)):
        kind = TRAVEL_KINDS[kind_name]
        rows, products = tables.setdefault(kind.places, []), tables.setdefault(kind.products, [])
        seen: set[str] = set()
        for key, place in places.items():
            own = getattr(place, kind.owner)
            if own and own.strip() != key:
                notes.add(f"{kind_name} listed under {key} says its {kind.owner} is {own}; the key is used, as VitaBench does")
            row = place.model_dump(exclude={"products", kind.owner}) | {kind.owner: key}
            rows.append(row)
            names[(kind_name, key)] = getattr(place, kind.name_field)
            for p in place.products:
                pid = p.product_id
                if pid in seen:
                    pid = f"{p.product_id}@{p.date}"
                    notes.add(f"{kind_name} product {p.product_id} is listed more than once; repeats get ids <id>@<date>")
                    if pid in seen:
                        notes.add(f"{kind_name} product {p.product_id} is listed twice for {p.date}; the first is kept")
                        continue
                seen.add(pid)
                prod = {"product_id": pid, kind.owner: key, kind.type_field: p.type_name, "date": p.date,
                        "price": p.price, "quantity": p.quantity}
                products.append(prod)
                by_slot.setdefault((kind_name, key, p.type_name, p.date), pid)
                by_id.setdefault((kind_name, p.product_id), prod)
    orders = []
    for key, o in env.orders.items():
        kind = TRAVEL_KINDS.get(o.order_type)
        lines = []
        for line in o.lines:
            cat = by_id.get((o.order_type, line.product_id), {}) if kind else {}
            date = line.date or cat.get("date", "")
            tname = line.type_name or (cat.get(kind.type_field, "") if kind else "")
            pid = by_slot.get((o.order_type, o.store_id, tname, date), line.product_id)
            lines.append(OrderLine(product_id=pid, name=tname, store_id=o.store_id,
                                   store_name=names.get((o.order_type, o.store_id), ""), price=line.price,
                                   quantity=line.quantity, date=date).model_dump())
        if o.order_id != key:
            notes.add(f"initial order {key} says its order_id is {o.order_id}; the key is used, as VitaBench does")
        orders.append({"order_id": key, "order_type": o.order_type, "user_id": o.user_id or env.user_id,
                       "store_id": o.store_id, "note": o.note or "", "total_price": o.total_price,
                       "create_time": o.create_time or "", "update_time": o.update_time or "", "status": o.status,
                       "products": lines})
    return {
        "time": env.time,
        "user_id": env.user_id,
        "task_key": task_key,
        "language": language,
        "locations": [loc.model_dump() for loc in env.location],
        "weather": [{"id": f"W{i + 1:02d}", **w.model_dump()} for i, w in enumerate(env.weather)],
        "orders": orders,
        **tables,
        "user_profile": raw.user_scenario.user_profile,
        "user_historical_behaviors": env.user_historical_behaviors,
    }


def _ota_task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of order ids made in the episode (``<key>HT01``, ``<key>FL01``...), clear of existing ids."""
    return _clear_task_key(task_id, initial_ids, tuple(k.order_prefix for k in TRAVEL_KINDS.values()))


def _ota_gold_lines(o: VOtaOrder, world: TravelWorld, where: str, notes: _Notes) -> list[GoldLine]:
    """Gold lines with their date and type, read from the catalogue where the gold leaves them out."""
    kind = TRAVEL_KINDS[o.order_type]
    products = world.table(kind.products)
    out = []
    for x in o.lines:
        date, tname = x.date, x.type_name
        p = products.get(x.product_id)
        if p is not None and getattr(p, kind.owner) == o.store_id:
            date = date or p.date
            tname = tname or getattr(p, kind.type_field)
        elif date is None or tname is None:
            notes.add(f"{where}: product {x.product_id} is not in the catalogue of {kind.name} {o.store_id}; "
                      "its line can only match by product id")
        out.append(GoldLine(product_id=x.product_id, quantity=x.quantity, date=date, product_type=tname))
    return out


def _ota_state(st: VOtaExpectedState, k: int, world: TravelWorld, notes: _Notes) -> GoldState:
    initial = world.table("orders")
    out: list[GoldOrder] = []
    seen: set[str] = set()
    for o in st.required_orders:
        where = f"expected state {k}, order {o.order_id}"
        if o.order_type not in TRAVEL_KINDS:
            notes.add(f"{where}: order type {o.order_type!r} is not a travel order; ignored")
            continue
        sig = o.model_dump_json()
        if sig in seen:
            notes.add(f"{where}: listed twice with the same content; counted once")
            continue
        seen.add(sig)
        if o.dropped_entries:
            notes.add(f"{where}: {o.dropped_entries} product entries without product_id ignored")
        lines = _ota_gold_lines(o, world, where, notes)
        before = initial.get(o.order_id)
        kind = "new"
        if before is not None:
            same_place = before.store_id == o.store_id and before.order_type == o.order_type
            if status_class(o.status) == "cancelled" or (same_place and travel_lines_match(lines, before.products)):
                out.append(GoldOrder(kind="existing", order_id=o.order_id, order_type=o.order_type,
                                     store_id=before.store_id, status=o.status))
                continue
            moved = (same_place and o.order_type in TRANSPORT_KINDS and len(lines) == 1 == len(before.products)
                     and lines[0].quantity == before.products[0].quantity
                     and norm_text(lines[0].product_type or "") == norm_text(before.products[0].name))
            if moved:
                out.append(GoldOrder(kind="existing", order_id=o.order_id, order_type=o.order_type,
                                     store_id=before.store_id, status=o.status, lines=lines))
                continue
            notes.add(f"{where}: the gold changes a pre-existing order in a way no tool can; it is scored as cancel "
                      "and re-order")
            kind = "replaced"
        out.append(GoldOrder(kind=kind, order_id=o.order_id, order_type=o.order_type,  # type: ignore[arg-type]
                             store_id=o.store_id, status=o.status, lines=lines))
    return GoldState(orders=out)


def _ota_golden(state: GoldState, world: TravelWorld, task_key: str, language: str) -> list[str]:
    """Tool calls that turn the initial world into ``state``, then the agent's closing message."""
    uid = world.user_id
    initial = world.table("orders")
    actions: list[str] = []
    counters: dict[str, int] = {}

    def detail_and(tool: str, kind: str, oid: str, **more: Any) -> None:
        actions.append(_action(f"get_{kind}_order_detail", order_id=oid))
        actions.append(_action(f"{tool}_{kind}_order", order_id=oid, **more))

    for g in state.orders:
        if g.kind == "new":
            continue
        before = initial.require(g.order_id)
        want = "cancelled" if g.kind == "replaced" else status_class(g.status)
        if want == "cancelled":
            if before.status != "cancelled":
                detail_and("cancel", g.order_type, g.order_id, user_id=uid)
            continue
        status = before.status
        if g.lines and not travel_lines_match(g.lines, before.products):
            if status == "unpaid":
                actions.append(_action(f"pay_{g.order_type}_order", order_id=g.order_id))
            new_date = g.lines[0].date or before.products[0].date
            detail_and("modify", g.order_type, g.order_id, user_id=uid, new_date=new_date)
            kind = TRAVEL_KINDS[g.order_type]
            pid = products_by_slot(world, kind).get((before.store_id, before.products[0].name, new_date))
            new_price = world.table(kind.products).require(pid).price if pid else before.products[0].price
            status = "unpaid" if new_price * before.products[0].quantity > before.total_price else "paid"
        if want == "paid" and status == "unpaid":
            actions.append(_action(f"pay_{g.order_type}_order", order_id=g.order_id))
    for g in state.orders:
        if g.kind not in ("new", "replaced") or not g.lines:
            continue
        kind = TRAVEL_KINDS[g.order_type]
        slots = products_by_slot(world, kind)
        first = min(g.lines, key=lambda x: x.date or "")
        pid = slots.get((g.store_id, first.product_type or "", first.date or ""), first.product_id)
        if g.order_type == "hotel":
            last = max(x.date or "" for x in g.lines)
            args: dict[str, Any] = {"hotel_id": g.store_id, "room_id": pid, "user_id": uid}
            if last:
                args["check_out_date"] = (datetime.strptime(last, "%Y-%m-%d") + timedelta(days=1)).strftime("%Y-%m-%d")
        else:
            seat = "ticket_id" if g.order_type == "attraction" else "seat_id"
            args = {kind.owner: g.store_id, seat: pid, "user_id": uid, "date": first.date or "",
                    "quantity": first.quantity}
        actions.append(_action(f"create_{g.order_type}_order", **args))
        counters[kind.order_prefix] = counters.get(kind.order_prefix, 0) + 1
        # mirrors LifeWorld.new_order_id: <task_key><prefix><2-digit counter>, from 1 per episode
        oid = f"{task_key}{kind.order_prefix}{counters[kind.order_prefix]:02d}"
        cls = status_class(g.status)
        if cls == "paid":
            actions.append(_action(f"pay_{g.order_type}_order", order_id=oid))
        elif cls == "cancelled":
            detail_and("cancel", g.order_type, oid, user_id=uid)
    actions.append(STOP_MESSAGE[language])
    return actions


def _convert_ota(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    env = ctx.environment(VOtaEnvironment, raw.environment)
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _ota_task_key(raw.id, set(env.orders))
    spec = _ota_spec(raw, env, task_key, language, notes)
    world = _built(ctx, build_travel_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _ota_state(st, k, world, state_notes))
    return _vitabench_task(raw, "travel", language, spec, world, states, notes, toolkit,
                           lambda s: _ota_golden(s, world, task_key, language))
