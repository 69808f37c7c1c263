"""VitaBench task files: schema validation, conversion to servicegym ``Task``s, golden routes.

This module owns the VitaBench task-file format (a JSON list of tasks with ``environment``,
``user_scenario``, ``instructions`` and ``evaluation_criteria``), in both public releases
(2025-11: products without ``quantity``; 2026: ``quantity: 9999``), Chinese or English. It

- validates every raw task with pydantic models of the VitaBench schema (unknown keys ignored,
  required fields typed); a malformed task raises ``TaskFileError`` naming the file, the task id
  and index, and the field path;
- converts it: the world spec for the domain's world builder, the scripted user, the rubric
  (``rewards/vitabench.py`` scores it by matching orders, no LLM), and a golden route that is
  replayed through the tools at load: it is built for the first expected state it reaches, and
  when it reaches none the reason goes into ``task.notes``;
- repairs the known quirks of the data: silently the harmless ones (``attribute`` for
  ``attributes``, list attributes, padded times and addresses, duplicate states), and with a
  line in ``task.notes`` each one that changes what is scored (nested order dicts inside
  ``products``, a store id its products contradict, lines naming a product missing from the
  catalogue, times no order can meet, dishes changed on an existing order).

``DOMAINS`` maps a domain to its adapter: delivery (``_convert_delivery``) and in-store
(``_convert_instore``: shops with per-shop product rows, gold states mixing orders, bookings
and reservations; further repairs noted: an order of several products split into one order per
product, a booking listed as a reservation or the other way round when the shop takes only the
other, booking times in the past left unscored) and online travel (``_convert_ota``, files with
domain ``ota``: hotels, attractions, flights and trains with nested dated products become product
rows; orders match by content, see ``rewards/vitabench.py``; a flight or train date the gold
changes is reached with ``modify_*_order``; noted repairs: a product id reused across dates made
unique per date, gold lines without date or type completed from the catalogue) and cross-scenario
(``_convert_cross``, files with domain ``cross``, ``cross_domain``, ...: the union of the three
environments' tables and required records of any type, each part read by its own domain's
conversion, with the same repairs; ids made in the episode clear of every domain's prefix).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rewards.rubric import EpisodeView, RubricItem, score_rubric
from rewards.vitabench import (
    ADDRESS_TOLERANCE_M,
    TIME_TOLERANCE_MIN,
    GoldLine,
    GoldOrder,
    GoldState,
    GoldVisit,
    best_state,
    lines_match,
    norm_text,
    status_class,
    travel_lines_match,
    visit_status_class,
    visit_time,
)
from simulators.scripted_user import UserScript, split_points, to_first_person
from world_state.core import TIME_FORMAT, History, haversine_m, parse_time
from world_state.cross import TOOLS as CROSS_TOOLS
from world_state.delivery import TOOLS as DELIVERY_TOOLS
from world_state.delivery import DeliveryWorld, delivery_minutes
from world_state.instore import TOOLS as INSTORE_TOOLS
from world_state.instore import InStoreWorld, product_key
from world_state.instore.entities import InStoreStatus
from world_state.life.entities import OrderLine, OrderStatus
from world_state.tools import Toolkit
from world_state.travel import KINDS as TRAVEL_KINDS
from world_state.travel import TOOLS as OTA_TOOLS
from world_state.travel import TravelWorld
from world_state.travel.entities import TRANSPORT_KINDS, products_by_slot

from .cross import build_cross_world
from .delivery import build_delivery_world
from .instore import build_instore_world
from .tasks import Task, TaskFileError, field_path
from .travel import build_travel_world

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# an opening point shorter than this says too little alone ("Hi." / "你好。"), so the next joins it
SHORT_OPENING = {"en": 40, "zh": 12}
STOP_MESSAGE = {"en": "All your requests are handled. ###STOP###", "zh": "您的需求都已处理完毕。###STOP###"}

# personality text -> scripted-user style, first match wins (VitaBench's eight personality types)
_STYLE_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("impatient", ("impatient", "rush", "hurr", "urge", "急躁", "催促", "不耐烦")),
    ("terse", ("concise", "cold", "controlling", "dominant", "简洁", "冷漠", "主导", "控制")),
    ("chatty", ("emotion", "mood", "scattered", "jump", "talkative", "情绪", "情感", "跳跃", "散漫", "健谈")),
)


# ----- the VitaBench schema ------------------------------------------------------------------
class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _check_time(value: str | None, allow_empty: bool) -> str | None:
    if value is None:
        return value
    text = value.strip()
    if not text and allow_empty:
        return ""
    try:
        parse_time(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a time of the form YYYY-MM-DD HH:MM:SS") from None
    return text


class VLocation(_Model):
    address: str
    longitude: float
    latitude: float

    @field_validator("address")
    @classmethod
    def _trim(cls, value: str) -> str:
        # some address tables pad entries with blanks the gold and the profile do not have
        return value.strip()


class VWeather(_Model):
    city: str
    category: str
    datetime: str
    temperature: list[float]
    humidity: float | None = None


class VProduct(_Model):
    product_id: str
    name: str
    store_id: str
    store_name: str
    price: float
    tags: list[str] = []
    attributes: list[str] = []
    quantity: int | None = None  # absent in the 2025-11 release: unlimited


class VStore(_Model):
    store_id: str | None = None  # absent: the key in ``stores``
    name: str
    score: float
    location: VLocation
    tags: list[str] = []
    products: list[VProduct] = []


class VOrderLine(_Model):
    product_id: str
    price: float = 0.0
    quantity: int
    attributes: str = ""

    @model_validator(mode="before")
    @classmethod
    def _attribute_key(cls, data: Any) -> Any:
        # some gold lines spell the key ``attribute``; some give a list of choices
        if isinstance(data, dict):
            data = dict(data)
            if "attributes" not in data and "attribute" in data:
                data["attributes"] = data.pop("attribute")
            if isinstance(data.get("attributes"), list):
                data["attributes"] = ", ".join(str(a) for a in data["attributes"] if str(a).strip())
            elif data.get("attributes") is None:
                data["attributes"] = ""
        return data


class VOrder(_Model):
    order_id: str
    order_type: str = "delivery"
    user_id: str = ""
    store_id: str
    note: str | None = ""
    location: VLocation | None = None
    dispatch_time: str | None = ""
    shipping_time: float | None = None
    delivery_time: str | None = ""
    total_price: float = 0.0
    create_time: str | None = ""
    update_time: str | None = ""
    status: OrderStatus
    # None marks an entry without ``product_id`` that could not be read as a line
    products: list[VOrderLine | None] = []
    nested_in: str = ""  # set when this order was found nested inside another order's products

    @field_validator("products", mode="before")
    @classmethod
    def _drop_entries_without_product(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [None if isinstance(x, dict) and "product_id" not in x else x for x in value]
        return value

    @field_validator("dispatch_time", "delivery_time")
    @classmethod
    def _times(cls, value: str | None) -> str | None:
        return _check_time(value, allow_empty=True)

    @property
    def lines(self) -> list[VOrderLine]:
        return [x for x in self.products if x is not None]

    @property
    def dropped_entries(self) -> int:
        return sum(x is None for x in self.products)


def _unnest(orders: list[Any], parent: str = "") -> list[Any]:
    """Required orders with the whole orders some gold files nest inside ``products`` (a misplaced
    bracket) lifted out beside their parent, marked ``nested_in``."""
    out: list[Any] = []
    for o in orders:
        if not isinstance(o, dict):
            out.append(o)
            continue
        o = dict(o, nested_in=parent) if parent else dict(o)
        inner = o.get("products")
        if isinstance(inner, list):
            nested = [x for x in inner if isinstance(x, dict) and "product_id" not in x and "order_id" in x]
            if nested:
                o["products"] = [x for x in inner if not any(x is n for n in nested)]
                out.append(o)
                out.extend(_unnest(nested, str(o.get("order_id", "?"))))
                continue
        out.append(o)
    return out


class VExpectedState(_Model):
    required_orders: list[VOrder] = []

    @field_validator("required_orders", mode="before")
    @classmethod
    def _lift_nested(cls, value: Any) -> Any:
        return _unnest(value) if isinstance(value, list) else value
    optional_orders: list[Any] = []
    state_rubrics: list[str] = []


class VCriteria(_Model):
    expected_states: list[VExpectedState]
    overall_rubrics: list[str] = []

    @field_validator("expected_states")
    @classmethod
    def _some_state(cls, value: list[VExpectedState]) -> list[VExpectedState]:
        if not value:
            raise ValueError("needs at least one expected state")
        return value


class VUserScenario(_Model):
    user_profile: dict[str, Any]


class VTask(_Model):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)  # a numeric id is still an id
    id: str
    domain: str
    user_scenario: VUserScenario
    instructions: str
    environment: dict[str, Any]
    evaluation_criteria: VCriteria
    message_history: list[Any] | None = None


class VDeliveryEnvironment(_Model):
    time: str
    user_id: str
    weather: list[VWeather] = []
    location: list[VLocation] = []
    user_historical_behaviors: dict[str, Any] = {}
    orders: dict[str, VOrder] = {}
    stores: dict[str, VStore]

    @field_validator("time")
    @classmethod
    def _now(cls, value: str) -> str:
        return _check_time(value, allow_empty=False) or ""

    @field_validator("orders", mode="before")
    @classmethod
    def _orders_as_dict(cls, value: Any) -> Any:
        # the database keys orders by id; a list of orders is accepted too
        if isinstance(value, list):
            return {str(o.get("order_id", i)) if isinstance(o, dict) else str(i): o for i, o in enumerate(value)}
        return value


# ----- conversion helpers --------------------------------------------------------------------
def detect_language(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def style_of(personality: str) -> str:
    """The scripted user's style for a VitaBench personality text (deterministic)."""
    text = personality.casefold()
    for style, cues in _STYLE_CUES:
        if any(c in text for c in cues):
            return style
    return "polite"


def _personality(profile: dict[str, Any]) -> str:
    for key in ("personality", "性格"):
        if isinstance(profile.get(key), str):
            return profile[key]
    return ""


def make_user(instructions: str, profile: dict[str, Any], language: str) -> UserScript:
    """The scripted user: opens with the first instruction point(s) and conveys the rest one by one."""
    # VitaBench writes instructions to the user ("You want ..."); the scripted user says them as its own
    points = [to_first_person(p, language) for p in split_points(instructions)] or [instructions.strip() or "..."]
    take = 2 if len(points) > 1 and len(points[0]) < SHORT_OPENING[language] else 1
    sep = "" if language == "zh" else " "
    return UserScript(
        language=language,  # type: ignore[arg-type]
        style=style_of(_personality(profile)),
        persona=profile,
        opening=sep.join(points[:take]),
        points=points[take:],  # the opening is said once, not repeated later
    )


def _fmt(t: datetime) -> str:
    return t.strftime(TIME_FORMAT)


def _action(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


class _Notes:
    """Collects a task's repair notes once each, in order."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)


@dataclass
class _Context:
    path: Path
    index: int
    task_id: str

    def error(self, what: str) -> TaskFileError:
        return TaskFileError(f"{self.path}: task {self.task_id} (index {self.index}): {what}")

    def validation(self, err: ValidationError, prefix: str = "") -> TaskFileError:
        e = err.errors(include_url=False)[0]
        parts = [*(prefix.split(".") if prefix else []), *(str(x) for x in e["loc"])]
        loc = ".".join(parts)
        return self.error(f"field {loc or '(root)'}: {e['msg']}")


# ----- delivery --------------------------------------------------------------------------------
def _world_spec(raw: VTask, env: VDeliveryEnvironment, task_key: str, language: str, notes: _Notes) -> dict[str, Any]:
    stores: list[dict[str, Any]] = []
    products: dict[str, dict[str, Any]] = {}
    for key, s in env.stores.items():
        sid = key
        if s.store_id and s.store_id != key:
            # VitaBench looks stores up by key, but when the two disagree the id the store's own
            # products name is the one an order can be placed under
            owners = {p.store_id for p in s.products}
            sid = s.store_id if owners == {s.store_id} else key
            notes.add(f"store listed under {key} says its store_id is {s.store_id}; {sid} is used, as its products name")
        stores.append({"store_id": sid, "name": s.name, "score": s.score, "location": s.location.model_dump(),
                       "tags": list(s.tags)})
        for p in s.products:
            if p.product_id in products:
                notes.add(f"product {p.product_id} is listed twice; the first listing is kept")
                continue
            products[p.product_id] = p.model_dump()
    store_names = {s["store_id"]: s["name"] for s in stores}
    orders = []
    for key, o in env.orders.items():
        lines = []
        for line in o.lines:
            cat = products.get(line.product_id, {})
            lines.append(OrderLine(
                product_id=line.product_id,
                name=cat.get("name", ""),
                store_id=cat.get("store_id", o.store_id),
                store_name=cat.get("store_name", store_names.get(o.store_id, "")),
                price=line.price,
                quantity=line.quantity,
                attributes=line.attributes,
                tags=cat.get("tags", []),
            ).model_dump())
        if o.dropped_entries:
            notes.add(f"initial order {o.order_id}: {o.dropped_entries} product entries without product_id ignored")
        if o.order_id != key:
            notes.add(f"initial order {key} says its order_id is {o.order_id}; the key is used, as VitaBench does")
        orders.append({
            "order_id": key,
            "order_type": o.order_type,
            "user_id": o.user_id or env.user_id,
            "store_id": o.store_id,
            "note": o.note or "",
            "location": o.location.model_dump() if o.location else None,
            "dispatch_time": o.dispatch_time or "",
            "shipping_time": o.shipping_time,
            "delivery_time": o.delivery_time or "",
            "total_price": o.total_price,
            "create_time": o.create_time or "",
            "update_time": o.update_time or "",
            "status": o.status,
            "products": lines,
        })
    return {
        "time": env.time,
        "user_id": env.user_id,
        "task_key": task_key,
        "language": language,
        "locations": [loc.model_dump() for loc in env.location],
        "weather": [{"id": f"W{i + 1:02d}", **w.model_dump()} for i, w in enumerate(env.weather)],
        "orders": orders,
        "stores": stores,
        "products": list(products.values()),
        "user_profile": raw.user_scenario.user_profile,
        "user_historical_behaviors": env.user_historical_behaviors,
    }


def _clear_task_key(task_id: str, initial_ids: set[str], prefixes: tuple[str, ...]) -> str:
    """The task id (letters, digits, ``_`` and ``-``), extended with ``X`` until no existing id
    starts with it followed by one of the ``prefixes`` of the ids the tools create."""
    key = re.sub(r"[^0-9A-Za-z_-]", "", task_id) or "T"
    while any(i.startswith(f"{key}{p}") for i in initial_ids for p in prefixes):
        key += "X"
    return key


def _task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of order ids created in the episode (``<key>D01``...), clear of existing ids."""
    return _clear_task_key(task_id, initial_ids, ("D",))


def _gold_orders(state: VExpectedState, k: int, world: DeliveryWorld, notes: _Notes) -> list[GoldOrder]:
    """Expected state ``k``, normalised (see ``rewards/vitabench.py`` for what each field means)."""
    now = world.clock.now
    initial = world.table("orders")
    products = world.table("products")
    stores = world.table("stores")
    options_of = {p.product_id: list(p.attributes) for p in products}
    out: list[GoldOrder] = []
    seen: set[str] = set()
    for o in state.required_orders:
        where = f"expected state {k}, order {o.order_id}"
        sig = o.model_dump_json()
        if sig in seen:
            notes.add(f"{where}: listed twice with the same content; counted once")
            continue
        seen.add(sig)
        if o.dropped_entries:
            notes.add(f"{where}: {o.dropped_entries} product entries without product_id ignored")
        if o.nested_in:
            notes.add(f"{where}: found nested inside the products of order {o.nested_in}; read as a required order of its own")
        lines = [GoldLine(product_id=x.product_id, quantity=x.quantity, attributes=x.attributes) for x in o.lines]
        before = initial.get(o.order_id)
        if before is not None and o.nested_in and before.store_id != o.store_id:
            # a nested copy that reuses an existing id for another store describes a new order
            notes.add(f"{where}: reuses the id of a pre-existing order of another store; read as a new order")
            before = None
        store_id = o.store_id
        if before is not None:
            same = before.store_id == o.store_id and lines_match(lines, before.products, options_of)
            if same or status_class(o.status) == "cancelled":
                note = o.note or ""
                out.append(GoldOrder(
                    kind="existing",
                    order_id=o.order_id,
                    order_type=o.order_type,
                    store_id=before.store_id,
                    status=o.status,
                    note=None if note.strip() == before.note.strip() else note,
                ))
                continue
            notes.add(f"{where}: the gold changes the dishes or store of a pre-existing order, which no tool "
                      "can do; it is scored as cancel and re-order")
            kind = "replaced"
        else:
            kind = "new"
        known = [x for x in lines if x.product_id in products]
        if known and len(known) < len(lines):
            missing = sorted({x.product_id for x in lines} - {x.product_id for x in known})
            notes.add(f"{where}: line(s) for {', '.join(missing)} dropped: not in the task's catalogue, so no agent "
                      "could order them")
            lines = known
        owners = {products.require(x.product_id).store_id for x in lines if x.product_id in products}
        if len(owners) == 1 and store_id not in owners:
            (owner,) = owners
            notes.add(f"{where}: store_id {store_id} replaced by {owner}, the store all its products belong to")
            store_id = owner
        loc = o.location
        store = stores.get(store_id)
        minutes = None
        if loc is not None and store is not None:
            to = store.location
            minutes = delivery_minutes(haversine_m(loc.longitude, loc.latitude, to.longitude, to.latitude))
        disp = parse_time(o.dispatch_time) if o.dispatch_time else None
        deliv = parse_time(o.delivery_time) if o.delivery_time else None
        if disp is not None and disp < now:
            notes.add(f"{where}: dispatch_time {_fmt(disp)} lies before the task's now; the target is now")
            disp = now
        if deliv is not None and minutes is not None and deliv < now + timedelta(minutes=minutes):
            notes.add(f"{where}: delivery_time {_fmt(deliv)} is earlier than any order placed now can arrive; "
                      "the target is the earliest arrival")
            deliv = now + timedelta(minutes=minutes)
        if disp is not None and deliv is not None:
            rule = "both"
            if minutes is not None:
                gap = (deliv - disp).total_seconds() / 60.0
                # the agent sets only dispatch_time (delivery follows from the model); asking for
                # both is fair only when the gold pair leaves it half the tolerance either way
                if abs(gap - minutes) > TIME_TOLERANCE_MIN / 2:
                    notes.add(f"{where}: dispatch {_fmt(disp)} and delivery {_fmt(deliv)} are {gap:.0f} min apart but "
                              f"the delivery model gives {minutes:.0f} min; either time is accepted")
                    rule = "either"
        else:
            rule = "dispatch" if disp is not None else "delivery" if deliv is not None else "none"
        out.append(GoldOrder(
            kind=kind,  # type: ignore[arg-type]
            order_id=o.order_id,
            order_type=o.order_type,
            store_id=store_id,
            status=o.status,
            note=(o.note or "").strip() or None,
            address=loc.address if loc else None,
            longitude=loc.longitude if loc else None,
            latitude=loc.latitude if loc else None,
            dispatch_time=_fmt(disp) if disp else None,
            delivery_time=_fmt(deliv) if deliv else None,
            time_rule=rule,  # type: ignore[arg-type]
            lines=lines,
        ))
    return out


def _golden_address(world: DeliveryWorld, g: GoldOrder) -> str:
    """The address to order to: the gold one if the map knows it, else the known one at its coordinates."""
    table = world.table("locations").rows
    if g.address is not None and g.address in table:
        return g.address
    if g.longitude is not None and g.latitude is not None and table:
        near = min(table.values(), key=lambda x: haversine_m(g.longitude, g.latitude, x.longitude, x.latitude))
        if haversine_m(g.longitude, g.latitude, near.longitude, near.latitude) <= ADDRESS_TOLERANCE_M:
            return near.address
    if g.address is not None:
        return g.address
    return next(iter(table), "")


def _golden(state: GoldState, world: DeliveryWorld, task_key: str, language: str) -> list[str]:
    """Tool calls that turn the initial world into ``state``, then the agent's closing message."""
    now = world.clock.now
    initial = world.table("orders")
    stores = world.table("stores")
    actions: list[str] = []
    done: set[str] = set()
    for g in state.orders:
        if g.kind == "new" or g.order_id in done:
            continue
        done.add(g.order_id)
        before = initial.require(g.order_id)
        want = "cancelled" if g.kind == "replaced" else status_class(g.status)
        if want == "cancelled":
            if before.status != "cancelled":
                actions += [_action("get_delivery_order_status", order_id=g.order_id),
                            _action("cancel_delivery_order", order_id=g.order_id)]
            continue
        if g.note is not None:
            actions += [_action("get_delivery_order_detail", order_id=g.order_id),
                        _action("modify_delivery_order", order_id=g.order_id, note=g.note)]
        if want == "paid" and before.status == "unpaid":
            actions.append(_action("pay_delivery_order", order_id=g.order_id))
    created = 0
    for g in state.orders:
        if g.kind == "new" or g.kind == "replaced":
            address = _golden_address(world, g)
            if g.dispatch_time is not None:
                dispatch = parse_time(g.dispatch_time)
            elif g.delivery_time is not None:
                store = stores.get(g.store_id)
                loc = world.table("locations").get(address)
                minutes = 0.0
                if store is not None and loc is not None:
                    to = store.location
                    minutes = delivery_minutes(haversine_m(loc.longitude, loc.latitude, to.longitude, to.latitude))
                dispatch = parse_time(g.delivery_time) - timedelta(minutes=minutes)
            else:
                dispatch = now
            dispatch = max(dispatch, now)
            args: dict[str, Any] = {
                "user_id": world.user_id,
                "store_id": g.store_id,
                "product_ids": [x.product_id for x in g.lines],
                "product_cnts": [x.quantity for x in g.lines],
                "address": address,
                "dispatch_time": _fmt(dispatch),
                "attributes": [x.attributes for x in g.lines],
                "note": g.note or "",
            }
            actions.append(_action("create_delivery_order", **args))
            created += 1
            # mirrors LifeWorld.new_order_id: <task_key>D<2-digit counter>, counting from 1 per episode
            oid = f"{task_key}D{created:02d}"
            cls = status_class(g.status)
            if cls == "paid":
                actions.append(_action("pay_delivery_order", order_id=oid))
            elif cls == "cancelled":
                actions += [_action("get_delivery_order_status", order_id=oid),
                            _action("cancel_delivery_order", order_id=oid)]
    actions.append(STOP_MESSAGE[language])
    return actions


def _replay(actions: list[str], world: DeliveryWorld, rubric: list[RubricItem], toolkit: Toolkit) -> tuple[bool, list[str]]:
    """Run the golden tool calls on a copy of the world; success and what went wrong."""
    live = world.copy()
    history = History()
    problems = []
    for i, a in enumerate(actions):
        if not a.startswith("{"):
            continue
        call = json.loads(a)
        res = toolkit.call(live, history, call["name"], call["arguments"], step=i + 1)
        if not res.ok:
            problems.append(f"golden step {i + 1} ({call['name']}) failed: {res.content}")
    view = EpisodeView(world=live, initial=world, history=history)
    success, _ = score_rubric(rubric, view)
    if not success:
        problems.extend(best_state(view, rubric[0].params).problems)
    return success, problems


def _built(ctx: _Context, build: Callable[[dict[str, Any]], Any], spec: dict[str, Any]) -> Any:
    """The world of a converted spec; a spec that does not build is the file's error, with its field."""
    try:
        return build(spec)
    except ValidationError as err:
        raise ctx.error(f"building the world: {field_path(err)}") from None
    except (KeyError, ValueError, TypeError) as err:
        raise ctx.error(f"building the world: {err}") from None


def _unique_states(raw: VTask, notes: _Notes, state_of: Callable[[Any, int, _Notes], GoldState]) -> list[GoldState]:
    """The task's expected states, converted, each once: VitaBench often lists the same state
    several times (once per group of state rubrics); its notes are said once too."""
    states: list[GoldState] = []
    for k, st in enumerate(raw.evaluation_criteria.expected_states):
        state_notes = _Notes()
        state = state_of(st, k, state_notes)
        if state in states:
            continue
        states.append(state)
        for n in state_notes.items:
            notes.add(n)
    return states


def _convert_delivery(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    try:
        env = VDeliveryEnvironment.model_validate(raw.environment)
    except ValidationError as err:
        raise ctx.validation(err, "environment") from None
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _task_key(raw.id, set(env.orders))
    spec = _world_spec(raw, env, task_key, language, notes)
    world = _built(ctx, build_delivery_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: GoldState(orders=_gold_orders(st, k, world, state_notes)))
    return _vitabench_task(raw, "delivery", language, spec, world, states, notes, toolkit,
                           lambda s: _golden(s, world, task_key, language))


# ----- in-store ----------------------------------------------------------------------------------
INSTORE_NAMES = ("instore", "in-store", "in-store consumption", "到店", "到店消费")
_VISIT_TIME = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")


def _visit_time(value: str) -> str:
    """A booking or reservation time as YYYY-MM-DD HH:MM:SS: the gold sometimes leaves out the
    seconds ("2024-10-26 16:00") or writes a one-digit day ("2024-12-2 18:00:00")."""
    m = _VISIT_TIME.match(value)
    if m is None:
        raise ValueError(f"{value!r} is not a time of the form YYYY-MM-DD HH:MM:SS")
    try:
        return _fmt(datetime(*(int(x or 0) for x in m.groups())))
    except ValueError:
        raise ValueError(f"{value!r} is not a valid date and time") from None


class VShopProduct(_Model):
    product_id: str
    name: str
    shop_id: str = ""
    price: float
    tags: list[str] = []
    quantity: int | None = None


class VShop(_Model):
    shop_id: str | None = None  # absent: the key in ``shops``
    shop_name: str
    score: float
    location: VLocation
    tags: list[str] = []
    category: str = ""
    enable_book: bool = False
    book_price: float = 0.0
    enable_reservation: bool = False
    products: list[VShopProduct] = []


class VBooking(_Model):
    # a few gold bookings call their id ``reservation_id``
    book_id: str = Field(validation_alias=AliasChoices("book_id", "reservation_id"))
    shop_id: str
    book_time: str
    customer_id: str = ""
    customer_count: int
    book_price: float = 0.0
    status: InStoreStatus
    update_time: str = ""

    @field_validator("book_id", "shop_id")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()

    @field_validator("book_time")
    @classmethod
    def _time(cls, value: str) -> str:
        return _visit_time(value)


class VReservation(_Model):
    reservation_id: str = Field(validation_alias=AliasChoices("reservation_id", "book_id"))
    shop_id: str
    reservation_time: str
    customer_id: str = ""
    customer_count: int
    status: InStoreStatus
    update_time: str = ""

    @field_validator("reservation_id", "shop_id")
    @classmethod
    def _trim(cls, value: str) -> str:
        return value.strip()

    @field_validator("reservation_time")
    @classmethod
    def _time(cls, value: str) -> str:
        return _visit_time(value)


def _entry_kind(entry: Any) -> str:
    """What a required entry of an in-store state is: an order, a booking or a reservation (an
    entry with ``book_time`` is a booking whatever its id is called)."""
    if isinstance(entry, dict):
        if "order_id" in entry:
            return "order"
        if "book_time" in entry or "book_id" in entry:
            return "book"
        if "reservation_time" in entry or "reservation_id" in entry:
            return "reservation"
    return "order"


_ENTRY_MODELS: dict[str, type[_Model]] = {"order": VOrder, "book": VBooking, "reservation": VReservation}


class VInstoreExpectedState(_Model):
    # orders, bookings and reservations mixed; each is validated by its kind during conversion
    required_orders: list[dict[str, Any]] = []
    optional_orders: list[Any] = []
    state_rubrics: list[str] = []


class VInstoreCriteria(VCriteria):
    expected_states: list[VInstoreExpectedState]


class VInstoreTask(VTask):
    evaluation_criteria: VInstoreCriteria


def _as_dict(value: Any, key: str) -> Any:
    # the database keys records by id; a list of records is accepted too
    if isinstance(value, list):
        return {str(o.get(key, i)) if isinstance(o, dict) else str(i): o for i, o in enumerate(value)}
    return value


class VInstoreEnvironment(_Model):
    time: str
    user_id: str
    weather: list[VWeather] = []
    location: list[VLocation] = []
    user_historical_behaviors: dict[str, Any] = {}
    orders: dict[str, VOrder] = {}
    shops: dict[str, VShop]
    books: dict[str, VBooking] = {}
    reservations: dict[str, VReservation] = {}

    @field_validator("time")
    @classmethod
    def _now(cls, value: str) -> str:
        return _check_time(value, allow_empty=False) or ""

    @field_validator("orders", "books", "reservations", mode="before")
    @classmethod
    def _keyed(cls, value: Any, info: Any) -> Any:
        return _as_dict(value, {"orders": "order_id", "books": "book_id", "reservations": "reservation_id"}[info.field_name])


def _instore_shop_aliases(env: VInstoreEnvironment, notes: _Notes) -> dict[str, str]:
    """For shops whose key and ``shop_id`` differ, both names -> the id used (the one the shop's
    own products name, as for delivery stores), so records naming either find the shop."""
    aliases: dict[str, str] = {}
    for key, s in env.shops.items():
        if s.shop_id and s.shop_id.strip() != key:
            owners = {p.shop_id for p in s.products}
            sid = s.shop_id.strip() if owners == {s.shop_id} else key
            notes.add(f"shop listed under {key} says its shop_id is {s.shop_id}; {sid} is used, as its products name")
            aliases[key] = aliases[s.shop_id.strip()] = sid
    return aliases


def _instore_spec(raw: VTask, env: VInstoreEnvironment, task_key: str, language: str, aliases: dict[str, str],
                  notes: _Notes) -> dict[str, Any]:
    shops: list[dict[str, Any]] = []
    products: dict[str, dict[str, Any]] = {}
    for key, s in env.shops.items():
        sid = aliases.get(key, key)
        shops.append({"shop_id": sid, "shop_name": s.shop_name, "score": s.score, "location": s.location.model_dump(),
                      "tags": list(s.tags), "category": s.category, "enable_book": s.enable_book,
                      "book_price": s.book_price, "enable_reservation": s.enable_reservation})
        for p in s.products:
            pk = product_key(sid, p.product_id)
            if pk in products:
                notes.add(f"product {p.product_id} is listed twice in shop {sid}; the first listing is kept")
                continue
            products[pk] = {"product_id": p.product_id, "name": p.name, "shop_id": sid, "price": p.price,
                            "tags": list(p.tags), "quantity": p.quantity}
    names = {s["shop_id"]: s["shop_name"] for s in shops}
    orders = []
    for key, o in env.orders.items():
        store_id = aliases.get(o.store_id.strip(), o.store_id.strip())
        lines = []
        for line in o.lines:
            cat = products.get(product_key(store_id, line.product_id), {})
            lines.append(OrderLine(product_id=line.product_id, name=cat.get("name", ""), store_id=store_id,
                                   store_name=names.get(store_id, ""), price=line.price, quantity=line.quantity,
                                   tags=cat.get("tags", [])).model_dump())
        if o.order_id != key:
            notes.add(f"initial order {key} says its order_id is {o.order_id}; the key is used, as VitaBench does")
        orders.append({"order_id": key, "order_type": o.order_type, "user_id": o.user_id or env.user_id,
                       "store_id": store_id, "note": o.note or "", "total_price": o.total_price,
                       "create_time": o.create_time or "", "update_time": o.update_time or "", "status": o.status,
                       "products": lines})
    books = [b.model_dump() | {"book_id": key, "customer_id": b.customer_id or env.user_id,
                               "shop_id": aliases.get(b.shop_id, b.shop_id)} for key, b in env.books.items()]
    reservations = [r.model_dump() | {"reservation_id": key, "customer_id": r.customer_id or env.user_id,
                                      "shop_id": aliases.get(r.shop_id, r.shop_id)} for key, r in env.reservations.items()]
    return {
        "time": env.time,
        "user_id": env.user_id,
        "task_key": task_key,
        "language": language,
        "locations": [loc.model_dump() for loc in env.location],
        "weather": [{"id": f"W{i + 1:02d}", **w.model_dump()} for i, w in enumerate(env.weather)],
        "orders": orders,
        "shops": shops,
        "shop_products": list(products.values()),
        "books": books,
        "reservations": reservations,
        "user_profile": raw.user_scenario.user_profile,
        "user_historical_behaviors": env.user_historical_behaviors,
    }


def _instore_task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of the ids made in the episode (``<key>I01``, ``<key>B01``, ``<key>R01``), clear of existing ids."""
    return _clear_task_key(task_id, initial_ids, ("I", "B", "R"))


def _instore_gold_orders(o: VOrder, where: str, world: InStoreWorld, notes: _Notes) -> list[GoldOrder]:
    """One required in-store order, normalised; an order of several products becomes one gold
    order per product, since ``create_instore_product_order`` buys one product per order."""
    products = world.table("shop_products")
    store_id = o.store_id.strip()
    lines = [GoldLine(product_id=x.product_id.strip(), quantity=x.quantity) for x in o.lines]
    before = world.table("orders").get(o.order_id)
    if before is not None:
        if (before.store_id == store_id and lines_match(lines, before.products)) or status_class(o.status) == "cancelled":
            return [GoldOrder(kind="existing", order_id=o.order_id, order_type="instore", store_id=before.store_id,
                              status=o.status)]
        notes.add(f"{where}: the gold changes the products or shop of a pre-existing order, which no tool can do; "
                  "it is scored as cancel and re-order")
        kind = "replaced"
    else:
        kind = "new"
    holders: dict[str, set[str]] = {}
    for p in products:
        holders.setdefault(p.product_id, set()).add(p.shop_id)
    if any(product_key(store_id, x.product_id) not in products for x in lines):
        common = set.intersection(*(holders.get(x.product_id, set()) for x in lines)) if lines else set()
        if len(common) == 1:
            (owner,) = common
            notes.add(f"{where}: store_id {store_id} replaced by {owner}, the shop that sells all its products")
            store_id = owner
        else:
            known = [x for x in lines if x.product_id in holders]
            if known and len(known) < len(lines):
                missing = sorted({x.product_id for x in lines} - {x.product_id for x in known})
                notes.add(f"{where}: line(s) for {', '.join(missing)} dropped: in no shop of the task's catalogue, so "
                          "no agent could order them")
                lines = known
    if len(lines) > 1:
        notes.add(f"{where}: {len(lines)} products in one order, but an in-store order holds one product; read as "
                  f"{len(lines)} orders of one product each")
    parts = [[line] for line in lines] or [[]]
    return [GoldOrder(kind=kind, order_id=o.order_id if len(parts) == 1 else f"{o.order_id}/{j + 1}",  # type: ignore[arg-type]
                      order_type="instore", store_id=store_id, status=o.status, lines=part)
            for j, part in enumerate(parts)]


def _first_day_at(clock: str, now: datetime) -> datetime:
    """The first time of day ``clock`` (HH:MM:SS) not before ``now``."""
    t = datetime.combine(now.date(), datetime.strptime(clock, "%H:%M:%S").time())
    return t if t >= now else t + timedelta(days=1)


def _instore_gold_visit(v: VBooking | VReservation, where: str, world: InStoreWorld, notes: _Notes) -> GoldVisit:
    """One required booking or reservation, normalised (see ``GoldVisit``)."""
    table = "books" if isinstance(v, VBooking) else "reservations"
    rid = v.book_id if isinstance(v, VBooking) else v.reservation_id
    time = v.book_time if isinstance(v, VBooking) else v.reservation_time
    for t in ("books", "reservations"):
        before = world.table(t).get(rid)
        if before is None:
            continue
        if before.shop_id == v.shop_id:
            new_time = None if parse_time(time) == parse_time(visit_time(before)) else time
            count = None if v.customer_count == before.customer_count else v.customer_count
            cancelled = visit_status_class(t, v.status) == "cancelled"
            if cancelled or t == "reservations" or (new_time is None and count is None):
                return GoldVisit(kind="existing", table=t, record_id=rid, shop_id=v.shop_id, status=v.status,  # type: ignore[arg-type]
                                 time=None if cancelled else new_time, customer_count=None if cancelled else count)
            notes.add(f"{where}: the gold changes a pre-existing booking, which no tool can do; it is scored as "
                      "cancel and book anew")
        else:
            notes.add(f"{where}: the gold moves a pre-existing record to another shop; it is scored as cancel and anew")
        return GoldVisit(kind="replaced", table=t, record_id=rid, shop_id=v.shop_id, status=v.status,  # type: ignore[arg-type]
                         time=time, customer_count=v.customer_count)
    shop = world.table("shops").get(v.shop_id)
    if shop is None:
        notes.add(f"{where}: shop {v.shop_id} is not in the task's catalogue")
    elif table == "reservations" and not shop.enable_reservation and shop.enable_book:
        notes.add(f"{where}: shop {v.shop_id} takes seat bookings, not reservations; read as a booking")
        table = "books"
    elif table == "books" and not shop.enable_book and shop.enable_reservation:
        notes.add(f"{where}: shop {v.shop_id} takes reservations, not seat bookings; read as a reservation")
        table = "reservations"
    now = world.clock.now
    check = parse_time(time) >= now
    if not check:
        notes.add(f"{where}: time {time} lies before the task's now, so no tool can book it; the time is not scored")
        time = _fmt(_first_day_at(time[11:], now))
    return GoldVisit(kind="new", table=table, record_id=rid, shop_id=v.shop_id, status=v.status, time=time,  # type: ignore[arg-type]
                     customer_count=v.customer_count, check_time=check)


_ID_KEYS = {"order": "order_id", "book": "book_id", "reservation": "reservation_id"}


def _lift_nested(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """A required entry, and after it the whole records some gold files nest inside an order's
    ``products`` (a misplaced bracket), marked ``nested_in``."""
    inner = entry.get("products")
    if not isinstance(inner, list):
        return [entry]
    nested = [x for x in inner if isinstance(x, dict) and "product_id" not in x and any(k in x for k in _ID_KEYS.values())]
    if not nested:
        return [entry]
    parent = dict(entry, products=[x for x in inner if not any(x is n for n in nested)])
    return [parent, *(dict(n, nested_in=str(entry.get("order_id", "?"))) for n in nested)]


def _instore_state(st: VInstoreExpectedState, k: int, world: InStoreWorld, aliases: dict[str, str], notes: _Notes,
                   ctx: _Context) -> GoldState:
    orders: list[GoldOrder] = []
    visits: list[GoldVisit] = []
    seen: set[str] = set()
    for j, raw_entry in enumerate(st.required_orders):
        for entry in _lift_nested(raw_entry):
            kind = _entry_kind(entry)
            try:
                rec = _ENTRY_MODELS[kind].model_validate(entry)
            except ValidationError as err:
                raise ctx.validation(err, f"evaluation_criteria.expected_states.{k}.required_orders.{j}") from None
            sig = f"{kind}:{rec.model_dump_json()}"
            noun = {"order": "order", "book": "booking", "reservation": "reservation"}[kind]
            where = f"expected state {k}, {noun} {getattr(rec, _ID_KEYS[kind])}"
            if sig in seen:
                notes.add(f"{where}: listed twice with the same content; counted once")
                continue
            seen.add(sig)
            if entry.get("nested_in"):
                notes.add(f"{where}: found nested inside the products of order {entry['nested_in']}; read as a "
                          "required record of its own")
            if isinstance(rec, VOrder):
                if rec.dropped_entries:
                    notes.add(f"{where}: {rec.dropped_entries} product entries without product_id ignored")
                shop = rec.store_id.strip()
                orders += _instore_gold_orders(rec.model_copy(update={"store_id": aliases.get(shop, shop)}), where,
                                               world, notes)
            else:
                rec = rec.model_copy(update={"shop_id": aliases.get(rec.shop_id, rec.shop_id)})
                visits.append(_instore_gold_visit(rec, where, world, notes))  # type: ignore[arg-type]
    return GoldState(orders=orders, visits=visits)


_VISIT_TOOLS = {  # table -> (lookup, cancel, id argument, create, id prefix)
    "books": ("get_instore_books", "instore_cancel_book", "book_id", "instore_book", "B"),
    "reservations": ("get_instore_reservations", "instore_cancel_reservation", "reservation_id", "instore_reservation", "R"),
}


def _instore_golden(state: GoldState, world: InStoreWorld, task_key: str, language: str) -> list[str]:
    """Tool calls that turn the initial world into ``state``, then the agent's closing message."""
    uid = world.user_id
    actions: list[str] = []
    done: set[str] = set()
    for g in state.orders:
        if g.kind == "new" or g.order_id in done:
            continue
        done.add(g.order_id)  # a replaced order split into several gold orders is cancelled once
        before = world.table("orders").require(g.order_id)
        want = "cancelled" if g.kind == "replaced" else status_class(g.status)
        if want == "cancelled" and before.status != "cancelled":
            actions += [_action("get_instore_orders", user_id=uid), _action("instore_cancel_order", order_id=g.order_id)]
        elif want == "paid" and before.status == "unpaid":
            actions.append(_action("pay_instore_order", order_id=g.order_id))
    for g in state.visits:
        if g.kind == "new":
            continue
        lookup, cancel, id_arg, _, _ = _VISIT_TOOLS[g.table]
        before = world.table(g.table).require(g.record_id)
        cls = "cancelled" if g.kind == "replaced" else visit_status_class(g.table, g.status)
        if cls == "cancelled":
            if before.status != "cancelled":
                actions += [_action(lookup, user_id=uid), _action(cancel, **{id_arg: g.record_id})]
            continue
        if g.time is not None or g.customer_count is not None:
            args: dict[str, Any] = {"reservation_id": g.record_id, "time": g.time or visit_time(before)}
            if g.customer_count is not None:
                args["customer_count"] = g.customer_count
            actions += [_action("search_instore_reservation", user_id=uid, reservation_id=g.record_id),
                        _action("instore_modify_reservation", **args)]
        if g.table == "books" and cls == "paid" and before.status == "unpaid":
            actions.append(_action("pay_instore_book", book_id=g.record_id))
    created = 0
    for g in state.orders:
        if g.kind == "new" or g.kind == "replaced":
            if not g.lines:
                continue  # nothing to buy; the replay reports the order as unmatched
            created += 1
            # mirrors LifeWorld.new_order_id: <task_key><prefix><2-digit counter>, from 1 per episode
            oid = f"{task_key}I{created:02d}"
            actions.append(_action("create_instore_product_order", user_id=uid, shop_id=g.store_id,
                                   product_id=g.lines[0].product_id, quantity=g.lines[0].quantity))
            cls = status_class(g.status)
            if cls == "paid":
                actions.append(_action("pay_instore_order", order_id=oid))
            elif cls == "cancelled":
                actions += [_action("get_instore_orders", user_id=uid), _action("instore_cancel_order", order_id=oid)]
    made = {"books": 0, "reservations": 0}
    for g in state.visits:
        if g.kind == "new" or g.kind == "replaced":
            lookup, cancel, id_arg, create, prefix = _VISIT_TOOLS[g.table]
            made[g.table] += 1
            rid = f"{task_key}{prefix}{made[g.table]:02d}"
            actions.append(_action(create, user_id=uid, shop_id=g.shop_id, time=g.time, customer_count=g.customer_count))
            cls = visit_status_class(g.table, g.status)
            shop = world.table("shops").get(g.shop_id)
            if cls == "paid" and shop is not None and shop.book_price > 0:
                actions.append(_action("pay_instore_book", book_id=rid))
            elif cls == "cancelled":
                actions += [_action(lookup, user_id=uid), _action(cancel, **{id_arg: rid})]
    actions.append(STOP_MESSAGE[language])
    return actions


def _convert_instore(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    try:
        env = VInstoreEnvironment.model_validate(raw.environment)
    except ValidationError as err:
        raise ctx.validation(err, "environment") from None
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _instore_task_key(raw.id, set(env.orders) | set(env.books) | set(env.reservations))
    aliases = _instore_shop_aliases(env, notes)
    spec = _instore_spec(raw, env, task_key, language, aliases, notes)
    world = _built(ctx, build_instore_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _instore_state(st, k, world, aliases, state_notes, ctx))
    return _vitabench_task(raw, "instore", language, spec, world, states, notes, toolkit,
                           lambda s: _instore_golden(s, world, task_key, language))


def _vitabench_task(raw: VTask, domain: str, language: str, spec: dict[str, Any], world: Any, states: list[GoldState],
                    notes: _Notes, toolkit: Toolkit, golden_for: Callable[[GoldState], list[str]]) -> Task:
    """The task of converted expected states: the three matching rubric items, and the golden
    route of the first state whose replay succeeds (the reason in the notes when none does)."""
    params = {"states": [s.model_dump(mode="json") for s in states], "initial_order_ids": sorted(world.table("orders").rows)}
    rubric = [
        RubricItem(name="required_orders", kind="required_orders", params=params,
                   description="every required order, booking and reservation of an expected state is in the final database"),
        RubricItem(name="no_unrequested_orders", kind="no_unrequested_orders", params=params,
                   description="no order, booking or reservation beyond the expected state's is left active"),
        RubricItem(name="untouched_orders", kind="untouched_orders", params=params,
                   description="pre-existing records the expected state does not mention are unchanged"),
    ]
    golden: list[str] = []
    first_problems: list[str] = []
    for k, state in enumerate(states):
        actions = golden_for(state)
        ok, problems = _replay(actions, world, rubric, toolkit)
        if ok:
            golden = actions
            if k:
                notes.add(f"golden route reaches expected state {k}; the earlier ones are unreachable")
            break
        if k == 0:
            golden, first_problems = actions, problems
    else:
        notes.add("no golden route reaches an expected state: " + "; ".join(first_problems))
    if raw.message_history:
        notes.add(f"message_history of {len(raw.message_history)} messages ignored")
    task = Task(
        task_id=raw.id,
        domain=domain,
        source="vitabench",
        language=language,  # type: ignore[arg-type]
        reasoning_points=len(raw.evaluation_criteria.overall_rubrics),
        world=spec,
        user=make_user(raw.instructions, raw.user_scenario.user_profile, language),
        rubric=rubric,
        golden_actions=golden,
        notes=notes.items,
    )
    task.cached_world(lambda _t: world)  # validated above; reuse it rather than building twice
    return task


# ----- online travel (OTA) -----------------------------------------------------------------------
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
    try:
        env = VOtaEnvironment.model_validate(raw.environment)
    except ValidationError as err:
        raise ctx.validation(err, "environment") from None
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _ota_task_key(raw.id, set(env.orders))
    spec = _ota_spec(raw, env, task_key, language, notes)
    world = _built(ctx, build_travel_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _ota_state(st, k, world, state_notes))
    return _vitabench_task(raw, "travel", language, spec, world, states, notes, toolkit,
                           lambda s: _ota_golden(s, world, task_key, language))


# ----- cross-scenario: the three domains in one task ---------------------------------------------
# A cross-domain file has the single-domain schema with the union of the environment tables and
# required orders of any type; each part is read by its own domain's conversion above.
CROSS_NAMES = ("cross", "cross_domain", "cross-domain", "cross domain", "crossdomain", "cross-scenario",
               "cross_scenario", "cross scenario", "delivery_instore_ota", "multi-domain", "跨场景", "跨域")
# the prefixes of every id the 66 tools create (delivery; in-store orders, bookings, reservations; travel)
CROSS_PREFIXES = ("D", "I", "B", "R", *(k.order_prefix for k in TRAVEL_KINDS.values()))
_CROSS_ORDER_MODELS: dict[str, type[_Model]] = {"delivery": VOrder, "instore": VOrder, "travel": VOtaOrder}


def _order_domain(entry: Any) -> str:
    """The domain that reads an order (an order without ``order_type`` is a delivery order)."""
    kind = entry.get("order_type", "delivery") if isinstance(entry, dict) else "delivery"
    return "travel" if kind in TRAVEL_KINDS else "instore" if kind == "instore" else "delivery"


class VCrossExpectedState(_Model):
    # orders of every type, bookings and reservations; each is validated by its kind during conversion
    required_orders: list[dict[str, Any]] = []
    optional_orders: list[Any] = []
    state_rubrics: list[str] = []


class VCrossCriteria(VCriteria):
    expected_states: list[VCrossExpectedState]


class VCrossTask(VTask):
    evaluation_criteria: VCrossCriteria


def _cross_environments(raw: VTask, ctx: _Context) -> tuple[VDeliveryEnvironment, VInstoreEnvironment, VOtaEnvironment]:
    """The environment read as each domain's: the shared fields, that domain's tables and orders
    (a domain's tables may be absent)."""
    env = raw.environment
    orders = _as_dict(env.get("orders", {}), "order_id")
    split: dict[str, Any] = {"delivery": {}, "instore": {}, "travel": {}}
    if isinstance(orders, dict):
        for key, o in orders.items():
            split[_order_domain(o)][key] = o
    else:
        split["delivery"] = orders  # not a table of orders: the delivery model says why
    shared = {k: v for k, v in env.items() if k != "orders"}
    parts = []
    for model, domain, empty in ((VDeliveryEnvironment, "delivery", {"stores": {}}),
                                 (VInstoreEnvironment, "instore", {"shops": {}}), (VOtaEnvironment, "travel", {})):
        try:
            parts.append(model.model_validate(empty | shared | {"orders": split[domain]}))
        except ValidationError as err:
            raise ctx.validation(err, "environment") from None
    return parts[0], parts[1], parts[2]  # type: ignore[return-value]


def _cross_state(st: VCrossExpectedState, k: int, world: Any, aliases: dict[str, str], notes: _Notes,
                 ctx: _Context) -> GoldState:
    """One expected state: each required entry validated by its kind (for field paths into the
    file), then each domain's part normalised by that domain's conversion."""
    parts: dict[str, list[dict[str, Any]]] = {"delivery": [], "instore": [], "travel": []}
    for j, entry in enumerate(st.required_orders):
        kind = _entry_kind(entry)
        domain = _order_domain(entry) if kind == "order" else "instore"
        model = _CROSS_ORDER_MODELS[domain] if kind == "order" else _ENTRY_MODELS[kind]
        try:
            model.model_validate(entry)
        except ValidationError as err:
            raise ctx.validation(err, f"evaluation_criteria.expected_states.{k}.required_orders.{j}") from None
        parts[domain].append(entry)
    delivery = _gold_orders(VExpectedState.model_validate({"required_orders": parts["delivery"]}), k, world, notes)
    instore = _instore_state(VInstoreExpectedState(required_orders=parts["instore"]), k, world, aliases, notes, ctx)
    travel = _ota_state(VOtaExpectedState.model_validate({"required_orders": parts["travel"]}), k, world, notes)
    return GoldState(orders=delivery + instore.orders + travel.orders, visits=instore.visits)


def _cross_golden(state: GoldState, world: Any, task_key: str, language: str) -> list[str]:
    """Each domain's golden route for its part of ``state``, one after the other, then the closing message."""
    def part(types: tuple[str, ...], visits: bool = False) -> GoldState:
        return GoldState(orders=[g for g in state.orders if g.order_type in types], visits=state.visits if visits else [])

    return (_golden(part(("delivery",)), world, task_key, language)[:-1]
            + _instore_golden(part(("instore",), visits=True), world, task_key, language)[:-1]
            + _ota_golden(part(tuple(TRAVEL_KINDS)), world, task_key, language))


def _convert_cross(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    d_env, i_env, t_env = _cross_environments(raw, ctx)
    notes = _Notes()
    language = detect_language(raw.instructions)
    initial = set(d_env.orders) | set(i_env.orders) | set(t_env.orders) | set(i_env.books) | set(i_env.reservations)
    task_key = _clear_task_key(raw.id, initial, CROSS_PREFIXES)
    aliases = _instore_shop_aliases(i_env, notes)
    specs = [_world_spec(raw, d_env, task_key, language, notes),
             _instore_spec(raw, i_env, task_key, language, aliases, notes),
             _ota_spec(raw, t_env, task_key, language, notes)]
    # the shared fields are the same in every part; the tables and orders are each part's own
    spec = specs[0] | {k: v for s in specs[1:] for k, v in s.items() if k not in specs[0]}
    spec["orders"] = [o for s in specs for o in s["orders"]]
    world = _built(ctx, build_cross_world, spec)
    states = _unique_states(raw, notes, lambda st, k, state_notes: _cross_state(st, k, world, aliases, state_notes, ctx))
    return _vitabench_task(raw, "cross", language, spec, world, states, notes, toolkit,
                           lambda s: _cross_golden(s, world, task_key, language))


@dataclass(frozen=True)
class DomainAdapter:
    """How one VitaBench domain's tasks become servicegym tasks."""

    domain: str
    tools: list[Any]  # the domain agent's tool specs, to replay golden routes with
    convert: Callable[[VTask, _Context, Toolkit], Task]
    task_model: type[VTask] = VTask  # a domain whose gold states differ validates with its own
    names: tuple[str, ...] = ()  # other spellings of the domain in the files' ``domain`` field


DOMAINS: dict[str, DomainAdapter] = {
    "delivery": DomainAdapter("delivery", DELIVERY_TOOLS, _convert_delivery),
    "instore": DomainAdapter("instore", INSTORE_TOOLS, _convert_instore, VInstoreTask, INSTORE_NAMES),
    # the travel env's tasks; VitaBench names the domain "ota"
    "travel": DomainAdapter("travel", OTA_TOOLS, _convert_ota, VOtaTask, OTA_NAMES),
    # the cross-scenario env's tasks: any mix of the three domains' records in one task
    "cross": DomainAdapter("cross", CROSS_TOOLS, _convert_cross, VCrossTask, CROSS_NAMES),
}


def convert_vitabench_file(data: list, path: Path, domain: str) -> list[Task]:
    """Validate and convert the tasks of one VitaBench task file for the env of ``domain``."""
    adapter = DOMAINS.get(domain)
    if adapter is None:
        raise TaskFileError(
            f"{path}: VitaBench domain {domain!r} is not supported yet (supported: {', '.join(DOMAINS)})"
        )
    toolkit = Toolkit(adapter.tools)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        tid = str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}"
        ctx = _Context(path, i, tid)
        if not isinstance(item, dict):
            raise ctx.error(f"a task must be a JSON object, got {type(item).__name__}")
        try:
            raw = adapter.task_model.model_validate(item)
        except ValidationError as err:
            raise ctx.validation(err) from None
        if raw.domain != domain and raw.domain.strip().casefold() not in adapter.names:
            raise ctx.error(f"field domain: is {raw.domain!r}, expected {domain!r}")
        if raw.id in seen:
            raise ctx.error(f"field id: duplicate of the task at index {seen[raw.id]}")
        seen[raw.id] = i
        tasks.append(adapter.convert(raw, ctx, toolkit))
    if not tasks:
        raise TaskFileError(f"{path}: the VitaBench file holds no tasks")
    return tasks
