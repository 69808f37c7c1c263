"""The natural-language time items of a VitaBench task, checked by code.

VitaBench's rubric states delivery and visit times in words ("The delivery time for the rice noodle
order should be around 2025-06-21 12:00:00"), while the gold orders often carry no time, or one
the rubric contradicts. Here the rubric decides time:

1. every item of ``Task.nl_rubric`` is compiled by ``rewards/nl_rubric.py`` against the task's now;
   an item that is no time item, or is ambiguous, stays with the LLM judge;
2. in each expected state the item is tied to the gold records it bounds (``_resolve``): the one
   candidate (new delivery orders for a delivery time; new, replaced or re-timed bookings and
   reservations for a visit time; either for an arrival), else the candidate whose products,
   store or shop the item names most distinctly (or whose kind of dish: "the drink order"), else,
   when every candidate has a gold time, the only one whose gold time the window accepts;
   an item tied to nothing in every state is noted and left to the judge;
3. a window no order could meet (it ends before the earliest possible arrival of the order placed
   now) is widened to that arrival, as the loader does for gold times, and noted; a visit window
   wholly before now is left to the judge;
4. the tied gold records stop comparing times (orders ``time_rule="rubric"``, visits
   ``check_time=False``) and carry the golden route's aim instead: the window's target (T for
   around and exact, the middle of a range, the bound minus a margin for "before", plus it for
   "after", the earliest arrival for "as soon as possible"), one that every window of the record
   accepts;
5. each compiled item becomes the rubric item ``nl_time_<k>`` (``k``: its index in
   ``Task.nl_rubric``; kind ``nl_time_window``, checked in ``rewards/vitabench.py``), and the task
   notes say which items are checked by code and how.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from rapidfuzz import fuzz

from servicegym.rewards.nl_rubric import TimeWindow, compile_time_item, normalise, subject_text
from servicegym.rewards.rubric import RubricItem
from servicegym.rewards.vitabench import GoldOrder, GoldState, GoldVisit
from servicegym.world_state.core import TIME_FORMAT, haversine_m, parse_time
from servicegym.world_state.delivery import delivery_minutes

# an English word of a product/store name counts as named by the item at this fuzzy similarity
# to one of the item's words ("noodles" / "noodle")
WORD_SIMILARITY = 85.0
_STOP = frozenset({
    "the", "and", "with", "for", "order", "orders", "set", "meal", "combo", "store", "shop", "branch", "flavor",
    "style", "new", "from", "should", "time", "delivery", "estimated", "expected", "around", "before", "after",
    "between", "portion", "cup", "large", "small", "medium", "regular", "special", "classic", "signature", "hot",
    # when a meal is eaten and for whom say nothing of which order it is ("dinner" is a tag of many stores)
    "breakfast", "lunch", "dinner", "supper", "brunch", "family", "personal", "user", "food", "dish", "dishes",
    "main", "staple", "people", "person", "restaurant", "cuisine",
    "订单", "外卖", "套餐", "早餐", "午餐", "晚餐", "晚饭", "午饭", "早饭", "夜宵", "用户", "家人", "个人", "餐厅",
})
# kinds of dish an item may name instead of the dish ("the drink order", "饮品订单"): the item's
# cue words, and words of a product or store name that put it in the kind
_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "drink": (
        ("drink", "drinks", "beverage", "beverages", "饮品", "饮料", "茶饮", "喝"),
        ("tea", "coffee", "latte", "americano", "cappuccino", "mocha", "juice", "milk", "soda", "boba", "lemonade",
         "smoothie", "drink", "beverage", "cola", "beer", "water", "茶", "咖啡", "拿铁", "汁", "饮", "奶", "可乐", "酒"),
    ),
    "dessert": (
        ("dessert", "desserts", "sweets", "甜品", "甜点"),
        ("cake", "pudding", "mochi", "tart", "dessert", "mousse", "tiramisu", "macaron", "ice cream", "糕", "布丁",
         "甜", "冰淇淋", "慕斯"),
    ),
}
_EN_WORD = re.compile(r"[a-z][a-z']{2,30}")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
_DIGIT = re.compile(r"\d")


class _Notes(Protocol):
    def add(self, text: str) -> None: ...


Gold = GoldOrder | GoldVisit


@dataclass
class TimeItem:
    """One compiled natural-language time item and the gold records it bounds, per state."""

    index: int
    text: str
    window: TimeWindow
    refs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"nl_time_{self.index}"

    def rubric_item(self, params: dict[str, Any]) -> RubricItem:
        """The rubric item: ``params`` are the order-matching items' (states, initial order ids)."""
        return RubricItem(
            name=self.name, kind="nl_time_window", description=self.text,
            params={**params, "nl_index": self.index, "window": self.window.model_dump(mode="json"),
                    "refs": {str(k): v for k, v in sorted(self.refs.items())}},
        )


def _fmt(t: datetime) -> str:
    return t.strftime(TIME_FORMAT)


def _table(g: Gold) -> str:
    return "orders" if isinstance(g, GoldOrder) else g.table


def _gid(g: Gold) -> str:
    return g.order_id if isinstance(g, GoldOrder) else g.record_id


def _ref(g: Gold) -> dict[str, Any]:
    if isinstance(g, GoldOrder):
        return {"table": "orders", "id": g.order_id, "order_type": g.order_type, "place": g.store_id,
                "product_ids": [x.product_id for x in g.lines]}
    return {"table": g.table, "id": g.record_id, "place": g.shop_id}


def _candidates(state: GoldState, subject: str) -> list[Gold]:
    orders: list[Gold] = [g for g in state.orders if g.order_type == "delivery" and g.kind in ("new", "replaced")]
    visits: list[Gold] = [g for g in state.visits if g.kind in ("new", "replaced") or g.time is not None]
    if subject == "delivery":
        return orders
    if subject == "visit":
        return visits
    return orders or visits


def _names(g: Gold, world: Any) -> list[str]:
    """What an item may call the gold record by: its products, store or shop, their tags."""
    out: list[str] = []
    if isinstance(g, GoldOrder):
        products = world.table("products") if "products" in world.tables else None
        for line in g.lines:
            p = products.get(line.product_id) if products is not None else None
            if p is not None:
                out += [p.name, *p.tags]
        store = world.table("stores").get(g.store_id) if "stores" in world.tables else None
        if store is not None:
            out += [store.name, *store.tags]
    else:
        shop = world.table("shops").get(g.shop_id) if "shops" in world.tables else None
        if shop is not None:
            out += [shop.shop_name, shop.category, *shop.tags]
    return [normalise(x) for x in out if x]


def _units(names: list[str]) -> set[str]:
    """English content words and Chinese character pairs of the names."""
    units: set[str] = set()
    for n in names:
        units |= {w for w in _EN_WORD.findall(n) if w not in _STOP}
        for run in _CJK.findall(n):
            units |= {run[i:i + 2] for i in range(len(run) - 1)} - _STOP
    return units


def _kinds(names: list[str]) -> set[str]:
    """``kind:<k>`` units for the kinds of dish the names belong to."""
    words = {w for n in names for w in _EN_WORD.findall(n)}
    joined = " ".join(names)
    return {f"kind:{k}" for k, (_, members) in _KINDS.items()
            if any((m in words or " " in m and m in joined) if m.isascii() else m in joined for m in members)}


def _named(unit: str, head: str, head_words: list[str]) -> bool:
    if unit.startswith("kind:"):
        cues = _KINDS[unit[5:]][0]
        return any(c in head_words if c.isascii() else c in head for c in cues)
    if unit.isascii():
        return any(fuzz.ratio(unit, w) >= WORD_SIMILARITY for w in head_words)
    return unit in head


def _by_name(text: str, cands: list[Gold], world: Any) -> Gold | None:
    """The candidate whose names the item mentions most distinctly (a unit shared by k candidates
    weighs 1/k); None on a tie or when the item names none."""
    norm = subject_text(text) or normalise(text)
    m = _DIGIT.search(norm)
    head = norm[:m.start()] if m else norm  # the words before the time: "the ... for the X order"
    head_words = [w for w in _EN_WORD.findall(head) if w not in _STOP]
    units = [_units(names) | _kinds(names) for names in (_names(g, world) for g in cands)]
    share: dict[str, int] = {}
    for us in units:
        for u in us:
            share[u] = share.get(u, 0) + 1
    scores = [sum(1.0 / share[u] for u in us if _named(u, head, head_words)) for us in units]
    best = max(scores, default=0.0)
    if best <= 0 or scores.count(best) > 1:
        return None
    return cands[scores.index(best)]


def _earliest(g: Gold, world: Any) -> datetime:
    """The earliest time the record can happen: the arrival of an order placed now; now for a visit."""
    now = world.clock.now
    if not isinstance(g, GoldOrder) or g.longitude is None or g.latitude is None:
        return now
    store = world.table("stores").get(g.store_id) if "stores" in world.tables else None
    if store is None:
        return now
    to = store.location
    return now + timedelta(minutes=delivery_minutes(haversine_m(g.longitude, g.latitude, to.longitude, to.latitude)))


def _gold_time(g: Gold, world: Any) -> datetime | None:
    """The gold record's own time (an order's delivery, else dispatch plus the trip), if any."""
    try:
        if isinstance(g, GoldVisit):
            return parse_time(g.time) if g.time else None
        if g.delivery_time:
            return parse_time(g.delivery_time)
        if g.dispatch_time:
            return parse_time(g.dispatch_time) + (_earliest(g, world) - world.clock.now)
    except ValueError:
        return None
    return None


def _resolve(text: str, window: TimeWindow, cands: list[Gold], world: Any) -> Gold | None:
    if len(cands) == 1:
        return cands[0]
    named = _by_name(text, cands, world)
    if named is not None:
        return named
    # the gold times tell only when every candidate has one
    times = [_gold_time(g, world) for g in cands]
    if any(t is None for t in times):
        return None
    agree = [g for g, t in zip(cands, times) if window.accepts(t, _earliest(g, world))]  # type: ignore[arg-type]
    return agree[0] if len(agree) == 1 else None


def _aim(windows: list[TimeWindow], earliest: datetime) -> datetime | None:
    """A time every window accepts: one of their targets, else the middle of their intersection."""
    tries = [w.target(earliest) for w in windows]
    bounds = [w.bounds(earliest) for w in windows]
    lows = [lo for lo, _ in bounds if lo is not None] + [earliest]
    highs = [hi for _, hi in bounds if hi is not None]
    lo = max(lows)
    if highs and min(highs) >= lo:
        tries.append(lo + (min(highs) - lo) / 2)
    for t in tries:
        t = max(t, earliest).replace(microsecond=0)
        if all(w.accepts(t, earliest) for w in windows):
            return t
    return None


def _widened(window: TimeWindow, earliest: datetime) -> TimeWindow:
    """``window`` stretched so that ``earliest`` (the first possible arrival) is accepted."""
    lo = window.earliest if window.earliest is None or window.earliest <= earliest else earliest
    why = f"ends before the earliest possible arrival {_fmt(earliest)}, which is accepted instead"
    return window.model_copy(update={"earliest": lo, "latest": earliest, "repaired": why})


def time_items(nl: list[str], states: list[GoldState], world: Any, notes: _Notes) -> tuple[list[GoldState], list[TimeItem]]:
    """The states with the gold records the compiled items bound re-timed, and the items."""
    now = world.clock.now
    items: list[TimeItem] = []
    tied: dict[tuple[int, int], list[TimeItem]] = {}  # (state, gold position) -> items bounding it
    for k, text in enumerate(nl):
        window = compile_time_item(text, now)
        if window is None:
            continue
        item = TimeItem(k, text, window)
        golds: list[tuple[int, int, Gold]] = []
        for s, state in enumerate(states):
            pool = [*state.orders, *state.visits]
            g = _resolve(text, window, _candidates(state, window.subject), world)
            if g is None:
                continue
            golds.append((s, next(i for i, x in enumerate(pool) if x is g), g))
        if not golds:
            notes.add(f"rubric item {k} states a time ({window.describe()}) but no expected state tells which "
                      "order or visit it bounds; it is left to the LLM judge")
            continue
        # the earliest times of the records the window closes before (an "asap" window never does)
        late = [e for _, _, g in golds if (hi := window.bounds(e := _earliest(g, world))[1]) is not None and hi < e]
        if late:
            if any(isinstance(g, GoldVisit) for _, _, g in golds):
                notes.add(f"rubric item {k} ({window.describe()}) lies before the task's now, when nothing can be "
                          "booked; it is left to the LLM judge")
                continue
            item.window = window = _widened(window, max(late))
            notes.add(f"rubric item {k} ({item.text!r}): the window {window.repaired}")
        for s, i, g in golds:
            item.refs.setdefault(s, []).append(_ref(g))
            tied.setdefault((s, i), []).append(item)
        items.append(item)
    out: list[GoldState] = []
    for s, state in enumerate(states):
        pool: list[Gold] = [*state.orders, *state.visits]
        for i, g in enumerate(pool):
            its = tied.get((s, i))
            if not its:
                continue
            earliest = _earliest(g, world)
            aim = _aim([t.window for t in its], earliest)
            if aim is None:
                aim = its[0].window.target(earliest)
                notes.add(f"expected state {s}, {_table(g)[:-1]} {_gid(g)}: the rubric's time items "
                          f"{', '.join(t.name for t in its)} admit no common time")
            if isinstance(g, GoldOrder):
                pool[i] = g.model_copy(update={"time_rule": "rubric", "delivery_time": _fmt(aim), "dispatch_time": None})
            else:
                pool[i] = g.model_copy(update={"check_time": False, "time": _fmt(aim)})
        n = len(state.orders)
        out.append(GoldState(orders=pool[:n], visits=pool[n:]))  # type: ignore[arg-type]
    for item in items:
        whom = sorted({f"{r['table'][:-1]} {r['id']}" for refs in item.refs.values() for r in refs})
        notes.add(f"{item.name}: rubric item {item.index} is checked by code: {item.window.describe()}, "
                  f"for {', '.join(whom)}")
    if items:
        notes.add(f"natural-language rubric: {len(items)} of {len(nl)} items checked by code "
                  f"({', '.join(t.name for t in items)})")
    return out, items
