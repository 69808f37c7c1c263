"""VitaBench task files: the schema models, conversion helpers and the steps every domain's
conversion shares (world building, expected states, rubric and replay-verified golden route)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from servicegym.envs.tasks.model import SkippedTask, Task, TaskFileError, field_path
from servicegym.envs.tasks.vitabench.checks_file import supplied_checks
from servicegym.envs.tasks.vitabench.nl_items import nl_items, process_calls
from servicegym.envs.tasks.vitabench.time_rubric import time_items
from servicegym.rewards.nl_rubric import item_context
from servicegym.rewards.rubric import EpisodeView, RubricItem, score_rubric
from servicegym.rewards.vitabench import (
    GoldState,
    best_state,
)
from servicegym.simulators.scripted_user import UserScript, split_points, to_first_person
from servicegym.world_state.core import TIME_FORMAT, History, parse_time
from servicegym.world_state.delivery import DeliveryWorld
from servicegym.world_state.life.entities import OrderStatus
from servicegym.world_state.tools import Toolkit

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

    def error(self, what: str, field: str | None = None) -> TaskFileError:
        """The error of this task; ``what`` reads "field PATH: reason" or is the reason of ``field``."""
        if field is None:
            m = re.match(r"field (.+?): (.*)", what, re.S)
            field, reason = (m.group(1), m.group(2)) if m else ("", what)
        else:
            reason, what = what, f"field {field}: {what}" if field else what
        skip = SkippedTask(task_id=self.task_id, index=self.index, field=field, reason=reason)
        return TaskFileError(f"{self.path}: task {self.task_id} (index {self.index}): {what}", skip)

    def environment(self, model: type[_Model], data: Any) -> Any:
        """``data`` read as a domain's environment model; a field that does not fit is the file's
        error, with its path under ``environment``."""
        try:
            return model.model_validate(data)
        except ValidationError as err:
            raise self.validation(err, "environment") from None

    def validation(self, err: ValidationError, prefix: str = "") -> TaskFileError:
        e = err.errors(include_url=False)[0]
        parts = [*(prefix.split(".") if prefix else []), *(str(x) for x in e["loc"])]
        loc = ".".join(parts)
        return self.error(f"field {loc or '(root)'}: {e['msg']}")


def _clear_task_key(task_id: str, initial_ids: set[str], prefixes: tuple[str, ...]) -> str:
    """The task id (letters, digits, ``_`` and ``-``), extended with ``X`` until no existing id
    starts with it followed by one of the ``prefixes`` of the ids the tools create."""
    key = re.sub(r"[^0-9A-Za-z_-]", "", task_id) or "T"
    while any(i.startswith(f"{key}{p}") for i in initial_ids for p in prefixes):
        key += "X"
    return key


def _replay(actions: list[str], world: DeliveryWorld, rubric: list[RubricItem],
            toolkit: Toolkit) -> tuple[bool, list[str], dict[str, float]]:
    """Run the golden tool calls on a copy of the world; success, what went wrong, the score."""
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
    success, score = score_rubric(rubric, view)
    if not success:
        problems.extend(best_state(view, rubric[0].params).problems)
        problems.extend(f"{i.name} ({i.description!r}) fails" for i in rubric
                        if i.kind.startswith("nl_") and not score[f"rubric/{i.name}"])
    return success, problems, score


def vitabench_release(spec: dict[str, Any]) -> str:
    """The VitaBench release a converted task's world follows: ``"2025-11"`` when it has delivery
    products and none has a ``quantity`` (2026 gives every one ``quantity: 9999``, the only data
    change), else ``"2026"`` (a task without delivery products looks the same in both)."""
    products = spec.get("products") or []
    return "2025-11" if products and all(p.get("quantity") is None for p in products) else "2026"


def _built(ctx: _Context, build: Callable[[dict[str, Any]], Any], spec: dict[str, Any]) -> Any:
    """The world of a converted spec; a spec that does not build is the file's error, with its field.
    The spec gets its ``vitabench_release`` first, so the tools follow that release's behaviour."""
    spec.setdefault("vitabench_release", vitabench_release(spec))
    try:
        return build(spec)
    except ValidationError as err:
        raise ctx.error(f"building the world: {field_path(err)}", "environment") from None
    except (KeyError, ValueError, TypeError) as err:
        raise ctx.error(f"building the world: {err}", "environment") from None


def _unique_states(raw: VTask, notes: _Notes, state_of: Callable[[Any, int, _Notes], GoldState]) -> list[GoldState]:
    """The task's expected states, converted, each once: VitaBench often lists the same state
    several times (once per group of state rubrics); its notes are said once too."""
    states: list[GoldState] = []
    for k, st in enumerate(raw.evaluation_criteria.expected_states):
        state_notes = _Notes()
        state = _distinct_new_ids(state_of(st, k, state_notes), k, state_notes)
        if state in states:
            continue
        states.append(state)
        for n in state_notes.items:
            notes.add(n)
    return states


def _distinct_new_ids(state: GoldState, k: int, notes: _Notes) -> GoldState:
    """``state`` with every new record's gold id made unique: a gold file may give two required
    orders (or visits) one id. A new record is matched by content, never by its gold id, but the
    id keys what the rubric's items are about, so two records must not share one; the second and
    later ones become ``<id>~2``, ``<id>~3``... (noted)."""
    seen: dict[tuple[str, str], int] = {}

    def fresh(table: str, rid: str, kind: str) -> str:
        n = seen[(table, rid)] = seen.get((table, rid), 0) + 1
        return rid if n == 1 or kind != "new" else f"{rid}~{n}"

    orders = []
    for g in state.orders:
        rid = fresh("orders", g.order_id, g.kind)
        if rid != g.order_id:
            notes.add(f"expected state {k}: two required orders share the id {g.order_id}; the new one "
                      f"{'with ' + ', '.join(x.product_id for x in g.lines) if g.lines else ''} is {rid}")
            g = g.model_copy(update={"order_id": rid})
        orders.append(g)
    visits = []
    for v in state.visits:
        rid = fresh(v.table, v.record_id, v.kind)
        if rid != v.record_id:
            notes.add(f"expected state {k}: two required {v.table} share the id {v.record_id}; the new one is {rid}")
            v = v.model_copy(update={"record_id": rid})
        visits.append(v)
    if orders == list(state.orders) and visits == list(state.visits):
        return state
    return GoldState(orders=orders, visits=visits)


def _as_dict(value: Any, key: str) -> Any:
    # the database keys records by id; a list of records is accepted too
    if isinstance(value, list):
        return {str(o.get(key, i)) if isinstance(o, dict) else str(i): o for i, o in enumerate(value)}
    return value


def nl_rubric(raw: VTask) -> list[str]:
    """The task's natural-language rubric for the LLM judge: every expected state's
    ``state_rubrics`` then the ``overall_rubrics``, each string once (as VitaBench's judge)."""
    out: list[str] = []
    texts = [r for state in raw.evaluation_criteria.expected_states for r in getattr(state, "state_rubrics", None) or []]
    for text in texts + list(raw.evaluation_criteria.overall_rubrics):
        if text not in out:
            out.append(text)
    return out


class UnsolvableTask(Exception):
    """A converted task whose golden route reaches none of its expected states: a loader that is
    not strict skips it with ``reason``; a strict one keeps ``task`` (the reason is in its notes)."""

    field = "evaluation_criteria.expected_states"

    def __init__(self, reason: str, task: Task) -> None:
        super().__init__(reason)
        self.reason = reason
        self.task = task


def _vitabench_task(raw: VTask, domain: str, language: str, spec: dict[str, Any], world: Any, states: list[GoldState],
                    notes: _Notes, toolkit: Toolkit, golden_for: Callable[[GoldState], list[str]]) -> Task:
    """The task of converted expected states: the three matching rubric items, the rubric's
    compiled natural-language items (time windows: ``time_rubric.py``; every other kind:
    ``nl_items.py``), and the golden route of the first state whose replay succeeds;
    ``UnsolvableTask`` when none does. A compiled item the golden route of no state meets, while
    the gold matching passes, is the rubric read in a way the gold does not bear out: it is left to
    the judge (noted) and the task converted again without it; a last try leaves every compiled
    item but the time windows to the judge, as before they were compiled."""
    nl = nl_rubric(raw)
    context = item_context(world, toolkit.names)
    held = {(line.product_id, g.store_id) for state in states for g in state.orders for line in g.lines}
    context = replace(context, evidence=tuple(p for p in context.products if (p.product_id, p.place_id) in held))
    supplied = supplied_checks(raw.id)  # a rubric-checks file's specs of this task (checks_file.py)
    if supplied:
        context = replace(context, compiled=supplied)
    exclude: set[int] = set()
    dropped: list[str] = []
    first: tuple[Any, ...] | None = None
    for attempt in range(3):
        tries = _Notes()
        masked = [t if k not in exclude else "" for k, t in enumerate(nl)]
        timed_states, timed = time_items(masked, states, world, tries, context)
        by_time = {s: {f"{r['table']}:{r['id']}" for t in timed for r in t.refs.get(s, [])} for s in range(len(states))}
        final_states, others = nl_items(masked, timed_states, world, tries, context, by_time, timed)
        golden, route_notes, unsolvable, failing = _golden_route(final_states, timed, others, world, toolkit, golden_for)
        first = first or (tries, timed, final_states, others, golden, route_notes, unsolvable)
        if unsolvable and attempt == 2:
            # leaving items to the judge did not help: the gold itself is out of reach, keep them all
            tries, timed, final_states, others, golden, route_notes, unsolvable = first
            dropped = []
        if not unsolvable or attempt == 2:
            break
        compiled_others = {o.index for o in others}
        if attempt == 0 and failing:
            exclude |= failing
            dropped += [f"rubric item {k} ({nl[k]!r}) compiles, but no golden route meets it; it is left to the LLM judge"
                        for k in sorted(failing)]
        elif compiled_others:
            exclude |= compiled_others
            dropped.append("no golden route meets the rubric's compiled items together: only its time items are "
                           "checked by code")
        else:
            tries, timed, final_states, others, golden, route_notes, unsolvable = first
            dropped = []
            break
    for n in tries.items:
        notes.add(n)
    for n in dropped:
        notes.add(n)
    checked = sorted([*timed, *others], key=lambda i: i.index)
    if checked:
        notes.add(f"natural-language rubric: {len({i.index for i in checked})} of {len(nl)} items checked by code "
                  f"({', '.join(i.name for i in checked)})")
    for n in route_notes:
        notes.add(n)
    rubric = _rubric(final_states, world, timed, others, nl)
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
        nl_rubric=nl,
        golden_actions=golden,
        notes=notes.items,
    )
    task.cached_world(lambda _t: world)  # validated above; reuse it rather than building twice
    if unsolvable:
        raise UnsolvableTask(unsolvable, task)
    return task


def _named_ids(world: Any, nl: list[str]) -> list[str]:
    """The pre-existing orders, bookings and reservations some rubric item names by id: a change
    of one of them is something the task asks about, never an unrequested write."""
    text = "\n".join(nl)
    out = []
    for table in ("orders", "books", "reservations"):
        if table in world.tables:
            out += [key for key in world.table(table).rows if len(key) >= 4 and key in text]
    return sorted(out)


def _rubric(states: list[GoldState], world: Any, timed: list[Any], others: list[Any],
            nl: list[str] | None = None) -> list[RubricItem]:
    """The three order-matching items (``scoring="strict"`` only), the unrequested-writes item
    and the compiled natural-language ones, sharing the states."""
    params: dict[str, Any] = {"states": [s.model_dump(mode="json") for s in states],
                              "initial_order_ids": sorted(world.table("orders").rows)}
    if others:
        # which compiled items are about which gold record: the matching prefers records meeting them
        params["nl_specs"] = {str(o.index): o.spec.model_dump(mode="json") for o in others}
        refs: dict[str, dict[str, list[int]]] = {}
        for o in others:
            for s, rs in o.refs.items():
                for r in rs:
                    refs.setdefault(str(s), {}).setdefault(f"{r['table']}:{r['id']}", []).append(o.index)
        params["nl_refs"] = refs
    rubric = [
        RubricItem(name="required_orders", kind="required_orders", params=params,
                   description="every required order, booking and reservation of an expected state is in the final database"),
        RubricItem(name="no_unrequested_orders", kind="no_unrequested_orders", params=params,
                   description="no order, booking or reservation beyond the expected state's is left active"),
        RubricItem(name="untouched_orders", kind="untouched_orders", params=params,
                   description="pre-existing records the expected state does not mention are unchanged"),
        RubricItem(name="no_unrequested_writes", kind="no_unrequested_writes",
                   params={**params, "named_ids": _named_ids(world, nl or [])},
                   description="no write the user never asked for: no record beyond the number the task creates "
                               "of its kind, no change to a record the task never mentions"),
    ]
    items = sorted([*timed, *others], key=lambda i: i.index)
    return rubric + [i.rubric_item(params) for i in items]


def _golden_route(states: list[GoldState], timed: list[Any], others: list[Any], world: Any, toolkit: Toolkit,
                  golden_for: Callable[[GoldState], list[str]]) -> tuple[list[str], list[str], str, set[int]]:
    """The golden route of the first state whose replay succeeds (the process items' look-ups
    first): the actions, the notes to keep, why none succeeds ("" when one does), and the compiled
    items failing in the first state's replay while its order matching passes."""
    rubric = _rubric(states, world, timed, others)
    lookups = process_calls(others, world, toolkit.names)
    golden: list[str] = []
    first_problems: list[str] = []
    failing: set[int] = set()
    for k, state in enumerate(states):
        actions = lookups + golden_for(state)
        ok, problems, score = _replay(actions, world, rubric, toolkit)
        if ok:
            reached = [f"golden route reaches expected state {k}; the earlier ones are unreachable"] if k else []
            return actions, reached, "", set()
        if k == 0:
            golden, first_problems = actions, problems
            base = ("required_orders", "no_unrequested_orders", "untouched_orders")
            if all(score.get(f"rubric/{b}") for b in base):
                failing = {i.params["nl_index"] for i in rubric if i.kind.startswith("nl_") and not score[f"rubric/{i.name}"]}
    why = "no golden route reaches an expected state: " + "; ".join(first_problems)
    return golden, [why], why, failing
