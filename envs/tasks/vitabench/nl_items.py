"""The natural-language rubric items other than time, checked by code (the loader's side).

Every item of ``Task.nl_rubric`` goes through ``rewards/nl_rubric/``'s ``compile_item``; the
time windows are ``time_rubric.py``'s, every other kind is tied here to the gold records it
constrains and becomes a rubric item of its own:

1. the item is tied, in each expected state, to the records of its target (``rubric_refs.resolve``:
   the order for an address, a note, a quantity, a price or a product; the booking or reservation
   for a party size; the order or visit whose place a store, rating, distance or place feature is
   about; any record for a status). An item naming a record by id ("cancel order X") is about that
   record, whatever the state. A process item (a look-up the history must hold) is about no record.
   An item tied to nothing in every state is noted and left to the judge;
   A superlative ("the closest", "the cheapest": ``BestSpec``) is tied without its own test, then
   takes the tied gold records' value of its attribute as its ``bound`` (they must agree, and some
   other candidate of the task must be worse, else the check could not fail: the judge's); a
   distance from "the user" is measured from where the gold order is delivered;
2. each tied gold record must meet the item: the rubric wins where the gold can follow it (a gold
   address, note or party size that differs is replaced by the rubric's, which the golden route
   then uses); where it cannot (the gold's store has a lower rating than the item asks, its product
   another flavour), the gold and the rubric contradict each other, so the item is noted and left
   to the judge;
3. the gold comparison the item takes over is relaxed for that record (``GoldOrder.rubric``):
   ``address``, ``note``, ``quantity`` (a compiled count), ``count`` (a party size); and, for a
   new record some compiled item governs, what the rubric is silent about: ``payment`` (no item of
   the task speaks of paying: unpaid and paid are one), ``quantity`` (no item that may be about the
   record speaks of a number or portion), ``store``/``place`` (every item that may be about the
   record is compiled and one of them is about its place: another store meeting them all is as
   good, its products judged by the compiled items only). Extra orders stay unrequested and
   untouched pre-existing records stay untouched whatever the rubric says: an extra active order is
   a charge the user never asked for, and the compiled checks read the records tied to gold ones, so
   spare orders would let an agent hedge;
4. each compiled item becomes the rubric item ``nl_<kind>_<k>`` (``k``: its index in
   ``Task.nl_rubric``; kind ``nl_<kind>``, checked in ``rewards/vitabench.py``), its process items'
   look-ups join the golden route, and the notes say which items are checked by code and how.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from servicegym.envs.tasks.vitabench.rubric_refs import (
    Gold,
    candidates,
    gold_id,
    ref_of,
    resolve,
    table_of,
)
from servicegym.envs.tasks.vitabench.time_rubric import TimeItem, mentions, subjects_tied
from servicegym.rewards.nl_rubric import (
    AddressSpec,
    AllOf,
    BestSpec,
    CountSpec,
    DistanceSpec,
    FeatureSpec,
    ItemContext,
    LineFacts,
    NoteSpec,
    ProcessSpec,
    RatingSpec,
    RecordFacts,
    StatusSpec,
    StoreSpec,
    TimeWindow,
    best_can_fail,
    best_value,
    compile_item,
    describe_spec,
    spec_holds,
    spec_parts,
    spec_target,
)
from servicegym.rewards.rubric import RubricItem
from servicegym.rewards.vitabench import GoldOrder, GoldState, GoldVisit, catalogue_product, place_info, record_facts

# an item that speaks of paying, or of a number, a portion or a party, keeps the gold's payment
# status, or quantities, compared
_PAYMENT = re.compile(r"\bpa(?:y|id|ying|yment)\b|支付|付款|付费|已付|买单|结账")
_QUANTITY = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|single|double|couple|pair|both|twice|half|dozen|"
    r"portions?|servings?|quantity|amount|pieces?|cups?|bowls?|boxes?|people|persons?|each|total|several|"
    r"multiple)\b|[一二两三四五六七八九十半双]|份|个|件|杯|碗|盒|人|数量|多少")


class _Notes(Protocol):
    def add(self, text: str) -> None: ...


@dataclass
class NLItem:
    """One compiled natural-language item (not a time window) and what it is about, per state."""

    index: int
    text: str
    spec: Any
    refs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    direct: dict[str, str] | None = None

    @property
    def kind(self) -> str:
        return f"nl_{self.spec.kind}"

    @property
    def name(self) -> str:
        return f"nl_{self.spec.kind}_{self.index}"

    def rubric_item(self, params: dict[str, Any]) -> RubricItem:
        extra: dict[str, Any] = {"nl_index": self.index, "spec": self.spec.model_dump(mode="json"),
                                 "refs": {str(k): v for k, v in sorted(self.refs.items())}}
        if self.direct:
            extra["direct"] = dict(self.direct)
        return RubricItem(name=self.name, kind=self.kind, description=self.text, params={**params, **extra})


def gold_facts(g: Gold, world: Any) -> RecordFacts:
    """A gold record as the compiled items read it (what it leaves unchanged: the initial record's)."""
    if isinstance(g, GoldVisit):
        before = world.table(g.table).get(g.record_id) if g.table in world.tables else None
        count = g.customer_count if g.customer_count is not None else getattr(before, "customer_count", None)
        return RecordFacts(table=g.table, record_id=g.record_id, place_id=g.shop_id, status=g.status,
                           customer_count=count)
    before = world.table("orders").get(g.order_id) if g.kind != "new" else None
    if g.kind == "existing" and before is not None:
        facts = record_facts(world, "orders", before)
        return RecordFacts(**{**facts.__dict__, "status": g.status,
                              "note": g.note if g.note is not None else facts.note})
    lines = []
    for x in g.lines:
        cat = catalogue_product(world, g.store_id, x.product_id)
        lines.append(LineFacts(product_id=x.product_id, name=getattr(cat, "name", "") or (x.product_type or ""),
                               tags=tuple(getattr(cat, "tags", ()) or ()), attributes=x.attributes, quantity=x.quantity,
                               price=float(getattr(cat, "price", 0.0) or 0.0),
                               options=tuple(getattr(cat, "attributes", ()) or ()), date=x.date or ""))
    return RecordFacts(table="orders", record_id=g.order_id, place_id=g.store_id, status=g.status, lines=tuple(lines),
                       note=g.note or "", address=g.address or "", longitude=g.longitude, latitude=g.latitude,
                       total=sum(x.price * x.quantity for x in lines))


def _holds(spec: Any, g: Gold, world: Any) -> bool:
    facts = gold_facts(g, world)
    return spec_holds(spec, facts, place_info(world, facts.place_id))


def _holds_direct(spec: Any, g: Gold, world: Any) -> bool:
    """``_holds`` for an item about the record with the gold's id itself: a replaced record is the
    pre-existing one, cancelled."""
    if g.kind == "replaced":
        table = table_of(g)
        before = world.table(table).get(gold_id(g)) if table in world.tables else None
        if before is None:
            return False
        facts = record_facts(world, table, before)
        return spec_holds(spec, RecordFacts(**{**facts.__dict__, "status": "cancelled"}), None)
    return _holds(spec, g, world)


def _repair(spec: Any, g: Gold) -> dict[str, Any]:
    """Where the rubric wins over a gold record that does not meet it: the gold fields to change
    (the golden route then follows the rubric), for the parts the golden route can follow."""
    out: dict[str, Any] = {}
    for p in spec_parts(spec):
        if isinstance(p, AddressSpec) and isinstance(g, GoldOrder) and p.longitude is not None:
            out.update(address=p.address, longitude=p.longitude, latitude=p.latitude)
        elif isinstance(p, NoteSpec) and isinstance(g, GoldOrder):
            out.update(note=p.text)
        elif (isinstance(p, CountSpec) and p.what == "people" and p.op == "==" and isinstance(g, GoldVisit)
              and (g.kind != "existing" or g.table == "reservations")):
            out.update(customer_count=p.value)
    return out


def _aspects(spec: Any, g: Gold) -> set[str]:
    """The gold comparisons a compiled item takes over."""
    out: set[str] = set()
    for p in spec_parts(spec):
        if isinstance(p, AddressSpec):
            out.add("address")
        elif isinstance(p, NoteSpec):
            out.add("note")
        elif isinstance(p, CountSpec):
            out.add("count" if p.what == "people" else "quantity")
    if isinstance(g, GoldOrder):
        out.discard("count")
    else:
        out -= {"address", "note", "quantity"}
    return out


def _about_place(spec: Any) -> bool:
    return any(isinstance(p, (StoreSpec, RatingSpec, DistanceSpec)) or (isinstance(p, FeatureSpec) and p.scope == "place")
               or isinstance(p, BestSpec) and p.attribute in ("rating", "distance") for p in spec_parts(spec))


def _unbounded(spec: Any) -> bool:
    """Whether a superlative part of the item still waits for the gold's value."""
    return any(isinstance(p, BestSpec) and p.bound is None for p in spec_parts(spec))


def _bounded(spec: Any, ties: list[tuple[int, int, Gold]], world: Any, context: ItemContext) -> tuple[Any | None, str]:
    """The item with each superlative's ``bound`` filled from the gold records it is tied to (they
    must agree on the value), or (None, why) where the gold does not tell it, the records disagree,
    or no candidate of the world is worse than the gold (a check that could not fail)."""
    parts: list[Any] = []
    for p in spec_parts(spec):
        if not isinstance(p, BestSpec) or p.bound is not None:
            parts.append(p)
            continue
        if p.attribute == "distance" and p.longitude is None:  # from the user: where the gold order is delivered
            points = {(f.longitude, f.latitude) for f in (gold_facts(g, world) for _s, _i, g in ties)}
            if len(points) != 1 or None in next(iter(points)):
                return None, "compiles, but the gold records it is tied to do not tell one point where the user is"
            lon, lat = points.pop()
            p = p.model_copy(update={"longitude": lon, "latitude": lat})
        values = set()
        for _s, _i, g in ties:
            facts = gold_facts(g, world)
            values.add(best_value(p, facts, place_info(world, facts.place_id)))
        if len(values) != 1 or None in values:
            return None, "compiles, but the gold records it is tied to do not tell one value to compare with"
        filled = p.model_copy(update={"bound": values.pop()})
        if not all(best_can_fail(filled, context, gold_facts(g, world).place_id) for _s, _i, g in ties):
            return None, "compiles, but no other candidate of the task is worse than the gold (the check could not fail)"
        parts.append(filled)
    return (parts[0] if len(parts) == 1 else AllOf(parts=parts, about=spec.about)), ""


def _direct_id(spec: Any) -> str:
    return next((p.record_id for p in spec_parts(spec) if isinstance(p, (StatusSpec, NoteSpec)) and p.record_id), "")


def _find(state: GoldState, rid: str) -> tuple[int, Gold] | None:
    pool: list[Gold] = [*state.orders, *state.visits]
    for i, g in enumerate(pool):
        if gold_id(g) == rid:
            return i, g
    return None


def _record_table(world: Any, rid: str) -> str:
    return next((t for t in ("orders", "books", "reservations") if t in world.tables and world.table(t).get(rid)), "")


def _whom(refs: dict[int, list[dict[str, Any]]]) -> str:
    return ", ".join(sorted({f"{r['table'][:-1]} {r['id']}" for rs in refs.values() for r in rs}))


def nl_items(nl: list[str], states: list[GoldState], world: Any, notes: _Notes, context: ItemContext,
             governed: dict[int, set[str]] | None = None,
             timed: list[TimeItem] | None = None) -> tuple[list[GoldState], list[NLItem]]:
    """The states with the gold comparisons the compiled items take over relaxed (and the gold
    fields they repair), and the items (see the module docstring). ``governed``: per state, the
    "<table>:<gold id>" keys the time items already bound; ``timed``: the time items, whose
    subjects ("the delivery time for the dinner order") name the record of an item that says only
    that subject ("the dinner order needs a note ...")."""
    items: list[NLItem] = []
    edits: dict[tuple[int, int], dict[str, Any]] = {}
    aspects: dict[tuple[int, int], set[str]] = {}
    governed_keys: dict[int, set[str]] = {s: set(v) for s, v in (governed or {}).items()}
    place_items: dict[tuple[int, int], int] = {}
    specs = {k: spec for k, text in enumerate(nl)
             if text and (spec := compile_item(text, context)) is not None and not isinstance(spec, TimeWindow)}
    states = _with_named_records(states, specs, world, notes)
    subjects = subjects_tied(timed or [])

    def current(s: int, i: int, g: Gold) -> Gold:
        return g.model_copy(update=edits[(s, i)]) if (s, i) in edits else g

    for k, spec in specs.items():
        text = nl[k]
        item = NLItem(k, text, spec)
        target = spec_target(spec)
        ties: list[tuple[int, int, Gold]] = []
        if target == "direct":
            rid = _direct_id(spec)
            table = _record_table(world, rid)
            if not table:
                notes.add(f"rubric item {k} names record {rid}, which the task does not have; it is left to the LLM judge")
                continue
            item.direct = {"table": table, "id": rid}
            for s, state in enumerate(states):
                found = _find(state, rid)
                if found is not None:
                    ties.append((s, found[0], found[1]))
                elif not spec_holds(spec, record_facts(world, table, world.table(table).require(rid)), None):
                    ties = []
                    notes.add(f"rubric item {k} ({describe_spec(spec)}) asks a change of {table[:-1]} {rid} that expected "
                              f"state {s} does not make; it is left to the LLM judge")
                    break
            else:
                if not ties:  # the record is as the item asks and no state changes it
                    items.append(item)
                    continue
            if not ties:
                continue
        elif target in ("none", "episode"):  # a process item; an item about every order the episode makes
            items.append(item)
            continue
        elif target is None:
            continue
        else:
            pool_target = "party" if target == "visit" else target
            whole = all(isinstance(x, AddressSpec) for x in spec_parts(spec))  # what holds of a whole order
            for s, state in enumerate(states):
                pool: list[Gold] = [*state.orders, *state.visits]
                cands = [current(s, next(j for j, x in enumerate(pool) if x is g), g)
                         for g in candidates(state, pool_target)]

                def agrees(g: Gold, spec: Any = spec) -> bool | None:
                    return None if _unbounded(spec) else _holds(spec, g, world)

                tied = resolve(spec.about or text, cands, world, agrees, one_place=target == "place", all_agree=True,
                               unnamed_subset=whole) or _by_subject(text, s, cands, subjects)
                for g in tied:
                    i = next(j for j, x in enumerate(pool) if gold_id(x) == gold_id(g) and table_of(x) == table_of(g))
                    ties.append((s, i, g))
            if not ties:
                notes.add(f"rubric item {k} ({describe_spec(spec)}) compiles, but no expected state tells which record "
                          "it is about; it is left to the LLM judge")
                continue
        if _unbounded(spec):  # a superlative: at least as good as the gold records it is tied to
            bounded, why = _bounded(spec, ties, world, context)
            if bounded is None:
                notes.add(f"rubric item {k} ({describe_spec(spec)}) {why}; it is left to the LLM judge")
                continue
            spec = item.spec = bounded
        # the rubric wins where the golden route can follow it; otherwise gold and rubric contradict
        repairs: dict[tuple[int, int], dict[str, Any]] = {}
        clash = ""
        holds = _holds if item.direct is None else _holds_direct
        for s, i, g in ties:
            g = current(s, i, g)
            if holds(spec, g, world):
                continue
            fix = _repair(spec, g)
            if fix and holds(spec, g.model_copy(update=fix), world):
                repairs[(s, i)] = fix
                continue
            clash = f"expected state {s}'s {table_of(g)[:-1]} {gold_id(g)}"
            break
        if clash:
            notes.add(f"rubric item {k} ({describe_spec(spec)}) contradicts {clash}; it is left to the LLM judge")
            continue
        for (s, i), fix in repairs.items():
            edits[(s, i)] = {**edits.get((s, i), {}), **fix}
            notes.add(f"expected state {s}: rubric item {k} wins over the gold ({', '.join(sorted(fix))} as the rubric says)")
        for s, i, g in ties:
            if item.direct is None:
                item.refs.setdefault(s, []).append(ref_of(g))
            key = f"{table_of(g)}:{gold_id(g)}"
            aspects.setdefault((s, i), set()).update(_aspects(spec, g))
            governed_keys.setdefault(s, set()).add(key)
            if _about_place(spec):
                place_items[(s, i)] = place_items.get((s, i), 0) + 1
        items.append(item)

    compiled = {it.index for it in items}
    out: list[GoldState] = []
    for s, state in enumerate(states):
        pool: list[Gold] = [*state.orders, *state.visits]
        silent = _silent_aspects(nl, compiled, state, s, world, governed_keys.get(s, set()), place_items)
        for i, extra in silent.items():
            aspects.setdefault((s, i), set()).update(extra)
        for i, g in enumerate(pool):
            upd = dict(edits.get((s, i), {}))
            asp = sorted(aspects.get((s, i), set()) | set(g.rubric))
            if asp != sorted(g.rubric):
                upd["rubric"] = asp
                notes.add(f"expected state {s}, {table_of(g)[:-1]} {gold_id(g)}: the rubric decides {', '.join(asp)} "
                          "(the gold's are not compared)")
            if upd:
                pool[i] = g.model_copy(update=upd)
        n = len(state.orders)
        out.append(GoldState(orders=pool[:n], visits=pool[n:]))  # type: ignore[arg-type]
    for item in items:
        whom = _whom(item.refs) if item.refs else (f"{item.direct['table'][:-1]} {item.direct['id']}" if item.direct
                                                    else "the episode's tool calls")
        notes.add(f"{item.name}: rubric item {item.index} is checked by code: {describe_spec(item.spec)}, for {whom}")
    return out, items


def _by_subject(text: str, s: int, cands: list[Gold],
                subjects: list[tuple[list[str], dict[int, tuple[str, str]]]]) -> list[Gold]:
    """The record of state ``s`` an item names by a subject a time item named and was tied by
    ("The dinner order needs to include a note ..." beside "The estimated delivery time for the
    dinner order should be around 19:30", tied to the dinner order by its time): every subject the
    item mentions must name that one record, which must be one of ``cands``."""
    recs = {by[s] for words, by in subjects if s in by and mentions(text, words)}
    if len(recs) != 1:
        return []
    table, rid = next(iter(recs))
    return [g for g in cands if table_of(g) == table and gold_id(g) == rid][:1]


def _with_named_records(states: list[GoldState], specs: dict[int, Any], world: Any, notes: _Notes) -> list[GoldState]:
    """The states with the pre-existing records an item names by id and asks to change ("cancel
    order X", "add the note ... to order X") added where a state does not mention them: the gold
    is silent there, so the rubric decides (as a gold record it would be: the change, by id)."""
    out = list(states)
    for k, spec in specs.items():
        rid = _direct_id(spec) if spec_target(spec) == "direct" else ""
        table = _record_table(world, rid) if rid else ""
        if not table:
            continue
        before = world.table(table).require(rid)
        if spec_holds(spec, record_facts(world, table, before), place_info(world, getattr(before, "store_id", "")
                                                                                  or getattr(before, "shop_id", ""))):
            continue  # already as the item asks
        status = next((p.status for p in spec_parts(spec) if isinstance(p, StatusSpec)), None)
        note = next((p.text for p in spec_parts(spec) if isinstance(p, NoteSpec)), None)
        for s, state in enumerate(out):
            if _find(state, rid) is not None:
                continue
            if table == "orders":
                gold: Gold = GoldOrder(kind="existing", order_id=rid, order_type=before.order_type,
                                       store_id=before.store_id,
                                       status={"cancelled": "cancelled", "paid": "paid"}.get(status or "", before.status),
                                       note=note)
                out[s] = state.model_copy(update={"orders": [*state.orders, gold]})
            elif status is not None:
                gold = GoldVisit(kind="existing", table=table, record_id=rid, shop_id=before.shop_id,  # type: ignore[arg-type]
                                 status=status)
                out[s] = state.model_copy(update={"visits": [*state.visits, gold]})
            else:
                continue
            notes.add(f"expected state {s} does not mention {table[:-1]} {rid}, which rubric item {k} asks to change; "
                      "the rubric decides: it is expected changed")
    return out


def _silent_aspects(nl: list[str], compiled: set[int], state: GoldState, s: int, world: Any, governed: set[str],
                    place_items: dict[tuple[int, int], int]) -> dict[int, set[str]]:
    """Per gold position, what the rubric is silent about for a new record a compiled item governs."""
    pool: list[Gold] = [*state.orders, *state.visits]
    records = list(pool)
    open_texts = [t for k, t in enumerate(nl) if t and k not in compiled]
    # which records each uncompiled item may be about: those it names, else all of them
    about: list[set[str]] = []
    for t in open_texts:
        tied = resolve(t, records, world)
        about.append({f"{table_of(g)}:{gold_id(g)}" for g in (tied or records)})
    pays = any(_PAYMENT.search(t.casefold()) for t in nl if t)
    out: dict[int, set[str]] = {}
    for i, g in enumerate(pool):
        key = f"{table_of(g)}:{gold_id(g)}"
        if key not in governed or g.kind not in ("new", "replaced"):
            continue
        if isinstance(g, GoldOrder) and g.order_type not in ("delivery", "instore"):
            continue
        extra: set[str] = set()
        if not pays:
            extra.add("payment")
        mine = [t for t, keys in zip(open_texts, about) if key in keys]
        if isinstance(g, GoldOrder) and not any(_QUANTITY.search(t.casefold()) for t in mine):
            extra.add("quantity")
        if not mine and place_items.get((s, i)):
            extra.add("store" if isinstance(g, GoldOrder) else "place")
        out[i] = extra
    return out


def process_calls(items: list[NLItem], world: Any, tools: Any) -> list[str]:
    """Golden look-ups for the process items: one executable call per item (the first of its
    tools that can be called with plain arguments)."""
    out: list[str] = []
    for item in items:
        for p in spec_parts(item.spec):
            if isinstance(p, ProcessSpec):
                call = _lookup(p, world, tools)
                if call is not None and call not in out:
                    out.append(call)
    return out


def _lookup(p: ProcessSpec, world: Any, tools: Any) -> str | None:
    uid = getattr(world, "user_id", "")
    places = [*(world.table("stores") if "stores" in world.tables else []),
              *(world.table("shops") if "shops" in world.tables else [])]
    name = (getattr(places[0], "name", None) or getattr(places[0], "shop_name", "")) if places else "store"
    loc = places[0].location if places else None
    weather = list(world.table("weather")) if "weather" in world.tables else []
    options: list[tuple[str, dict[str, Any]]] = [
        ("get_user_historical_behaviors", {}),
        ("get_user_all_orders", {}),
        ("get_instore_orders", {"user_id": uid}),
        ("search_delivery_orders", {"user_id": uid}),
        ("get_date_holiday_info", {"date": world.clock.now.strftime("%Y-%m-%d")}),
        ("instore_shop_search_recommend", {"keywords": [name]}),
        ("delivery_store_search_recommend", {"keywords": [name]}),
        ("instore_product_search_recommend", {"keywords": [name]}),
        ("delivery_product_search_recommend", {"keywords": [name]}),
    ]
    if weather:
        options.append(("weather", {"address": weather[0].city, "date_start": weather[0].datetime[:10],
                                    "date_end": weather[0].datetime[:10]}))
    if loc is not None:
        options += [("longitude_latitude_to_distance", {"longitude1": loc.longitude, "latitude1": loc.latitude,
                                                        "longitude2": loc.longitude, "latitude2": loc.latitude}),
                    ("get_nearby", {"longitude": loc.longitude, "latitude": loc.latitude, "range": 1000})]
    for tool, args in options:
        if tool in p.tools and tool in tools:
            return json.dumps({"name": tool, "arguments": args}, ensure_ascii=False)
    return None
