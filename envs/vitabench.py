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

Only the delivery domain is converted so far; ``DOMAINS`` maps a domain to its adapter, so
in-store and OTA add an environment model and a converter beside ``_convert_delivery``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from rewards.rubric import EpisodeView, RubricItem, score_rubric
from rewards.vitabench import (
    ADDRESS_TOLERANCE_M,
    TIME_TOLERANCE_MIN,
    GoldLine,
    GoldOrder,
    GoldState,
    best_state,
    lines_match,
    status_class,
)
from simulators.scripted_user import UserScript, split_points, to_first_person
from world_state.core import TIME_FORMAT, History, haversine_m, parse_time
from world_state.delivery import TOOLS as DELIVERY_TOOLS
from world_state.delivery import DeliveryWorld, delivery_minutes
from world_state.life.entities import OrderLine, OrderStatus
from world_state.tools import Toolkit

from .delivery import build_delivery_world
from .tasks import Task, TaskFileError, field_path

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


def _task_key(task_id: str, initial_ids: set[str]) -> str:
    """The prefix of order ids created in the episode (``<key>D01``...), clear of existing ids."""
    key = re.sub(r"[^0-9A-Za-z_-]", "", task_id) or "T"
    while any(i.startswith(f"{key}D") for i in initial_ids):
        key += "X"
    return key


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


def _convert_delivery(raw: VTask, ctx: _Context, toolkit: Toolkit) -> Task:
    try:
        env = VDeliveryEnvironment.model_validate(raw.environment)
    except ValidationError as err:
        raise ctx.validation(err, "environment") from None
    notes = _Notes()
    language = detect_language(raw.instructions)
    task_key = _task_key(raw.id, set(env.orders))
    spec = _world_spec(raw, env, task_key, language, notes)
    try:
        world = build_delivery_world(spec)
    except ValidationError as err:
        raise ctx.error(f"building the world: {field_path(err)}") from None
    except (KeyError, ValueError, TypeError) as err:
        raise ctx.error(f"building the world: {err}") from None

    states: list[GoldState] = []
    for k, st in enumerate(raw.evaluation_criteria.expected_states):
        state_notes = _Notes()
        state = GoldState(orders=_gold_orders(st, k, world, state_notes))
        if state in states:
            continue  # VitaBench often lists the same state several times; its notes are said once
        states.append(state)
        for n in state_notes.items:
            notes.add(n)
    params = {"states": [s.model_dump(mode="json") for s in states], "initial_order_ids": sorted(world.table("orders").rows)}
    rubric = [
        RubricItem(name="required_orders", kind="required_orders", params=params,
                   description="every required order of an expected state is in the final database"),
        RubricItem(name="no_unrequested_orders", kind="no_unrequested_orders", params=params,
                   description="no order beyond the expected state's is left active"),
        RubricItem(name="untouched_orders", kind="untouched_orders", params=params,
                   description="pre-existing orders the expected state does not mention are unchanged"),
    ]
    golden: list[str] = []
    first_problems: list[str] = []
    for k, state in enumerate(states):
        actions = _golden(state, world, task_key, language)
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
        domain="delivery",
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


@dataclass(frozen=True)
class DomainAdapter:
    """How one VitaBench domain's tasks become servicegym tasks."""

    domain: str
    tools: list[Any]  # the domain agent's tool specs, to replay golden routes with
    convert: Callable[[VTask, _Context, Toolkit], Task]


DOMAINS: dict[str, DomainAdapter] = {
    "delivery": DomainAdapter("delivery", DELIVERY_TOOLS, _convert_delivery),
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
            raw = VTask.model_validate(item)
        except ValidationError as err:
            raise ctx.validation(err) from None
        if raw.domain != domain:
            raise ctx.error(f"field domain: is {raw.domain!r}, expected {domain!r}")
        if raw.id in seen:
            raise ctx.error(f"field id: duplicate of the task at index {seen[raw.id]}")
        seen[raw.id] = i
        tasks.append(adapter.convert(raw, ctx, toolkit))
    if not tasks:
        raise TaskFileError(f"{path}: the VitaBench file holds no tasks")
    return tasks
