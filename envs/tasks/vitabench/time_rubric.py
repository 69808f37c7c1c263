"""The natural-language time items of a VitaBench task, checked by code.

VitaBench's rubric states delivery and visit times in words ("The delivery time for the rice noodle
order should be around 2025-06-21 12:00:00"), while the gold orders often carry no time, or one
the rubric contradicts. Here the rubric decides time:

1. every item of ``Task.nl_rubric`` is compiled by ``rewards/nl_rubric/`` against the task's now;
   an item that is no time item, or is ambiguous, stays with the LLM judge;
2. in each expected state the item is tied to the gold records it bounds (``rubric_refs.resolve``,
   shared by every kind of item): the one candidate (new delivery orders for a delivery time; new,
   replaced or re-timed bookings and reservations for a visit time; either for an arrival), else
   the candidate whose products, store or shop the item names most distinctly (or whose kind of
   dish: "the drink order"), else, when every candidate has a gold time, the only one whose gold
   time the window accepts; else the same read over the item together with the rubric's other
   items about the same subject ("the dinner order" in "The dinner order should select Xiao
   Chuniang" names the store the time item does not); else, once every other item is tied, the
   only candidate not tied to an item whose window admits no common time with this one (the coffee
   order "before 12:00" leaves the other order to "around 15:00"), or, when the time items name
   as many distinct subjects as there are candidates ("the user's meal", "the colleague's meal"
   for two orders), to an item about another subject; an item another tied time item of the same
   subject accepts a common time with is tied to that item's record;
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
from datetime import datetime
from typing import Any, Protocol

from servicegym.envs.tasks.vitabench.rubric_refs import (
    Gold,
    candidates,
    earliest,
    gold_id,
    gold_time,
    ref_of,
    resolve,
    table_of,
)
from servicegym.rewards.nl_rubric import ItemContext, TimeWindow, compile_item, normalise, subject_text
from servicegym.rewards.rubric import RubricItem
from servicegym.rewards.vitabench import GoldOrder, GoldState, GoldVisit
from servicegym.world_state.core import TIME_FORMAT

_DIGIT = re.compile(r"\d")


class _Notes(Protocol):
    def add(self, text: str) -> None: ...


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


def _head(text: str) -> str:
    """The words of a time item that may name its record: those before the time ("the ... for
    the X order")."""
    norm = subject_text(text) or normalise(text)
    m = _DIGIT.search(norm)
    return norm[:m.start()] if m else norm


def _resolve(text: str, window: TimeWindow, cands: list[Gold], world: Any, whole: bool = False) -> Gold | None:
    """The record a time item bounds (``rubric_refs.resolve``; its own test: the only candidate
    whose gold time the window accepts, when every candidate has one); ``whole``: ``text`` is the
    naming text already."""

    def agrees(g: Gold) -> bool | None:
        t = gold_time(g, world)
        return None if t is None else window.accepts(t, earliest(g, world))

    tied = resolve(text if whole else _head(text), cands, world, agrees)
    return tied[0] if len(tied) == 1 else None


# where a time item says what it times: "the delivery time for X should", "X delivery time
# should", "X should be delivered", "X的预计送达时间", "X应在...送达"
_SUBJECT_RES = (
    re.compile(r"\btime (?:for|of) (?P<s>.+?) (?:should|must|needs?|has to|is|are|to be|will)\b"),
    re.compile(r"^(?P<s>.+?) (?:estimated |expected |scheduled )?(?:delivery|arrival) time\b"),
    re.compile(r"^(?P<s>.+?) (?:should|must|needs? to|has to|is to|are to) (?:be )?(?:delivered|arriv\w*|reach\w*)\b"),
    re.compile(r"^(?P<s>.+?)的?(?:预计|预期|期望)?(?:送达|配送|到达|送餐|交付)时间"),
    re.compile(r"^(?P<s>.+?)(?:应该|应当|应|需要|须|要)(?:在|于)"),
)
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{3,}")
_SUBJECT_DROP = frozenset({"the", "a", "an", "this", "that"})
_GENERIC = frozenset({"order", "orders", "delivery", "meal", "food", "takeout", "订单", "外卖", "餐"})
_WORDS = re.compile(r"[a-z0-9]+(?:'s)?|[\u3400-\u4dbf\u4e00-\u9fff]+")


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "'s")) else word


def _subject_words(text: str) -> list[str]:
    """The words of a time item that name its record ("user's personal meal", "试镜结束后的下午外卖订单"),
    English words singular; empty when they are only generic ("the order")."""
    head = _head(text)
    m = next((m for rx in _SUBJECT_RES if (m := rx.search(head)) is not None), None)
    if m is None:
        return []
    subject = m.group("s")
    if _CJK_RUN.fullmatch(subject):  # "为满足母子晚餐需求的订单": its other items may drop "的订单"
        subject = re.sub(r"(?:的)?(?:外卖)?(?:订单|外卖)$", "", subject)
    words = [_singular(w) for w in _WORDS.findall(subject) if w not in _SUBJECT_DROP]
    return words if set(words) - _GENERIC else []


def mentions(text: str, words: list[str]) -> bool:
    """Whether ``text`` names the subject ``words`` (``_subject_words`` of another item)."""
    t = normalise(text)
    if all(not w.isascii() for w in words):
        return "".join(words) in t.replace("的", "") or "".join(words) in t
    have = [_singular(w) for w in _WORDS.findall(t) if w not in _SUBJECT_DROP]
    n = len(words)
    return any(have[i:i + n] == words for i in range(len(have) - n + 1))


def _co_text(k: int, nl: list[str], ctx: ItemContext) -> str:
    """The rubric's other items about item ``k``'s subject (no time or address items: their words
    name no record), joined."""
    words = _subject_words(nl[k])
    if not words:
        return ""
    out = []
    for j, other in enumerate(nl):
        if j == k or not isinstance(other, str) or not mentions(other, words):
            continue
        spec = compile_item(other, ctx)
        if isinstance(spec, TimeWindow) or getattr(spec, "kind", "") == "address" or _ADDRESS_WORD.search(other):
            continue
        out.append(normalise(other))
    return " ".join(out)


def subjects_tied(items: list[TimeItem]) -> list[tuple[list[str], dict[int, tuple[str, str]]]]:
    """The subjects the time items name ("the dinner order", "colleague's meal": ``_subject_words``)
    with the one record each item was tied to, per state: what names a record across the rubric's
    items. A subject whose items were tied to different records in a state names none there."""
    out: dict[tuple[str, ...], dict[int, set[tuple[str, str]]]] = {}
    for item in items:
        words = tuple(_subject_words(item.text))
        if not words:
            continue
        per = out.setdefault(words, {})
        for s, refs in item.refs.items():
            per.setdefault(s, set()).update((r["table"], r["id"]) for r in refs)
    return [(list(words), {s: next(iter(recs)) for s, recs in per.items() if len(recs) == 1})
            for words, per in out.items()]


_ADDRESS_WORD = re.compile(r"\baddress\b|地址|送到|送至|配送到")


def _position(state: GoldState, g: Gold) -> int:
    """Where ``g`` stands among the state's orders, then visits."""
    return next(i for i, x in enumerate([*state.orders, *state.visits]) if x is g)


def _disjoint(a: TimeWindow, b: TimeWindow, first: datetime) -> bool:
    """Whether no time is accepted by both windows."""
    (lo1, hi1), (lo2, hi2) = a.bounds(first), b.bounds(first)
    lo = max([x for x in (lo1, lo2) if x is not None], default=None)
    hi = min([x for x in (hi1, hi2) if x is not None], default=None)
    return lo is not None and hi is not None and lo > hi


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


def time_items(nl: list[str], states: list[GoldState], world: Any, notes: _Notes,
               context: ItemContext | None = None) -> tuple[list[GoldState], list[TimeItem]]:
    """The states with the gold records the compiled items bound re-timed, and the items (those
    ``compile_item`` reads as time windows)."""
    ctx = context or ItemContext(now=world.clock.now)
    items: list[TimeItem] = []
    tied: dict[tuple[int, int], list[TimeItem]] = {}  # (state, gold position) -> items bounding it
    pending: list[tuple[TimeItem, list[tuple[int, int, Gold]]]] = []
    # item index -> (item, its ties so far, the states it is not yet tied in)
    open_: dict[int, tuple[TimeItem, list[tuple[int, int, Gold]], list[int]]] = {}
    for k, text in enumerate(nl):
        window = compile_item(text, ctx)
        if not isinstance(window, TimeWindow):
            continue
        item = TimeItem(k, text, window)
        golds: list[tuple[int, int, Gold]] = []
        co: str | None = None  # the item's words with its subject's other items, read once
        for s, state in enumerate(states):
            cands = candidates(state, window.subject)
            g = _resolve(text, window, cands, world)
            if g is None:
                co = _co_text(k, nl, ctx) if co is None else co
                g = _resolve(f"{_head(text)} {co}", window, cands, world, whole=True) if co else None
            if g is None:
                open_.setdefault(k, (item, golds, []))[2].append(s)
                continue
            golds.append((s, _position(state, g), g))
        pending.append((item, golds))
    # an item still open in a state: the one candidate not tied to another item it cannot share a
    # record with: one whose window admits no common time, or, when the time items name as many
    # distinct subjects as there are candidates, one about another subject
    subjects = {it.index: tuple(_subject_words(it.text)) for it, _ in pending}
    for item, golds, open_states in open_.values():
        mine = subjects[item.index]
        named = {subjects[it.index] for it, _ in pending if it.window.subject == item.window.subject}
        for s in open_states:
            state = states[s]
            cands = candidates(state, item.window.subject)
            distinct = bool(mine) and all(named) and len(named) == len(cands)
            # another time item about the same subject ("Breakfast orders should be delivered
            # before 10:00" beside "the breakfast order"), tied to one record: that record
            same = {id(g): g for it, gs in pending if it is not item and mine and mentions(it.text, list(mine))
                    for s2, _i, g in gs if s2 == s and not _disjoint(it.window, item.window, earliest(g, world))}
            if len(same) == 1:
                g = next(iter(same.values()))
                golds.append((s, _position(state, g), g))
                continue
            taken = {id(g) for it, gs in pending if it is not item for s2, _i, g in gs if s2 == s
                     and (_disjoint(it.window, item.window, earliest(g, world))
                          or distinct and subjects[it.index] != mine)}
            free = [g for g in cands if id(g) not in taken]
            if len(free) == 1 and len(cands) > 1:
                golds.append((s, _position(state, free[0]), free[0]))
    for item, golds in pending:
        k, text, window = item.index, item.text, item.window
        if not golds:
            notes.add(f"rubric item {k} states a time ({window.describe()}) but no expected state tells which "
                      "order or visit it bounds; it is left to the LLM judge")
            continue
        # the earliest times of the records the window closes before (an "asap" window never does)
        late = [e for _, _, g in golds if (hi := window.bounds(e := earliest(g, world))[1]) is not None and hi < e]
        if late:
            if any(isinstance(g, GoldVisit) for _, _, g in golds):
                notes.add(f"rubric item {k} ({window.describe()}) lies before the task's now, when nothing can be "
                          "booked; it is left to the LLM judge")
                continue
            item.window = window = _widened(window, max(late))
            notes.add(f"rubric item {k} ({item.text!r}): the window {window.repaired}")
        for s, i, g in golds:
            item.refs.setdefault(s, []).append(ref_of(g))
            tied.setdefault((s, i), []).append(item)
        items.append(item)
    out: list[GoldState] = []
    for s, state in enumerate(states):
        pool: list[Gold] = [*state.orders, *state.visits]
        for i, g in enumerate(pool):
            its = tied.get((s, i))
            if not its:
                continue
            first = earliest(g, world)
            aim = _aim([t.window for t in its], first)
            if aim is None:
                aim = its[0].window.target(first)
                notes.add(f"expected state {s}, {table_of(g)[:-1]} {gold_id(g)}: the rubric's time items "
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
    return out, items
