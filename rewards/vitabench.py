"""Deterministic scoring of VitaBench tasks: matching the final orders to ``expected_states``.

VitaBench ships, for every task, a list of alternative acceptable end states
(``evaluation_criteria.expected_states``), each a list of ``required_orders``; its public code
never compares them and asks an LLM judge instead. This module owns the code comparison. The
loader (``envs/tasks/vitabench/``) normalises each expected state into a ``GoldState`` and puts the
list into the parameters of three rubric items; each item looks for the *best* expected state
(the same one for all three, chosen deterministically), so strict success means "some expected
state is fully matched":

- ``required_orders``: every gold order of the state is matched (below);
- ``no_unrequested_orders``: every order created in the episode that is not cancelled is matched
  to a gold order of that state (no extra orders);
- ``untouched_orders``: every pre-existing order the state does not mention keeps its initial
  status and note.

How a gold order is matched
    *existing* (its id is a pre-existing order, same store and same lines): by id; the status
    must be equivalent, and the note similar when the gold note differs from the initial note.
    *replaced* (its id is a pre-existing order but the gold changes its store, dishes or
    attributes, which no tool can do): the pre-existing order must be cancelled and a new order
    must match the gold content, as for *new*.
    *new*: by content, never by id, through an injective assignment of gold orders to the
    orders created in the episode (exhaustive backtracking, so duplicate gold orders need
    duplicate orders). A created order matches a gold order when
      - the store is the same;
      - the lines are the same multiset of (product_id, quantity, attributes): per product the
        quantities add up, and when the gold names attributes the lines pair up one to one with
        equal quantities and matching attributes. Attributes compare part by part ("Less ice,
        30% sugar" has two parts): equal after normalising case, blanks and a few plain
        synonyms ("normal" = "regular"), or fuzzy-equal (``token_set_ratio >= ATTR_SIMILARITY``)
        with the same numbers and the same negation/degree words ("no"/"without", "less",
        "extra"/"additional", "half", "unX"), or resolving to the same catalogue option, since
        the English gold often words an option differently from the catalogue. An empty gold
        attribute accepts any choice;
      - the status is equivalent;
      - the address is the gold address (case and blanks ignored) or within
        ``ADDRESS_TOLERANCE_M`` metres of the gold coordinates;
      - ``dispatch_time`` within ``TIME_TOLERANCE_MIN`` minutes of the gold one when the gold gives
        one, ``delivery_time`` likewise; not at all when a natural-language time item of the task
        governs the order (``time_rule="rubric"``: the rubric's window decides, in its own item,
        see "Natural-language time items" below). The loader moves a target that lies in the past, or
        before the earliest possible arrival, to the earliest feasible time; and since the agent
        sets only ``dispatch_time`` (delivery = dispatch + round(25 + metres x 0.00651) minutes),
        when the gold's two times disagree with that model by more than half the tolerance,
        either one matching suffices;
      - the note is similar (``token_set_ratio >= NOTE_SIMILARITY``) when the gold note is not
        empty;
      - except what a natural-language item of the task decides instead (``GoldOrder.rubric``,
        see "Natural-language items").

Bookings and reservations (in-store)
    In-store gold states also list seat bookings (``book_id``, ``book_time``) and service
    reservations (``reservation_id``, ``reservation_time``), normalised into ``GoldVisit``s and
    matched alongside the orders, by the same rules: a pre-existing one by id (status class, and
    time and party size where the gold changes them); a new one by content through an injective
    assignment to the bookings (or reservations) made in the episode: same shop, equivalent
    status, time within ``TIME_TOLERANCE_MIN`` minutes (unless the loader found the gold time
    infeasible), same party size. Unmatched active ones made in the episode count as unrequested;
    unmentioned pre-existing ones must keep their status, time and party size.

Travel orders (OTA)
    Hotel, attraction, flight and train orders match by content too: same order type and place
    (hotel, attraction, flight, train), equivalent status, and lines that pair up one to one with
    the same date (night, visit or departure day), the same room/ticket/seat type (case and blanks
    ignored) and the same quantity; a gold line without a date or type is matched by product id.
    A pre-existing flight or train order whose gold keeps its place and seat class but changes its
    date is matched by id *and* content (``modify_*_order`` moves it); any other changed content
    of a pre-existing travel order is scored as cancel and re-order. A pre-existing order counts
    as untouched only if its lines are unchanged too.

Natural-language time items
    VitaBench's rubric bounds delivery and visit times in words ("around 12:00", "before 18:00")
    where the gold order often carries no time or another one. ``rewards/nl_rubric/`` compiles
    such an item to a ``TimeWindow``; the loader resolves which gold records it bounds in each
    expected state (``refs``) and marks them: a gold order gets ``time_rule="rubric"`` (its
    ``delivery_time`` is then the golden route's aim, not compared), a gold visit gets
    ``check_time=False``. The item's own check (``nl_time_window``) takes the expected state the
    final world matches best, the record matched to each referenced gold record (else the one
    created in the episode at the same store with the most of its products, else the only active
    one created), and accepts when every such record's delivery (or booking/reservation) time lies
    in the window; no record, no pass.

Natural-language items
    Every other kind ``rewards/nl_rubric/`` compiles (addresses, process items, stores and their
    features, ratings, distances, party sizes and quantities, prices, notes, statuses) is a rubric
    item ``nl_<kind>_<k>`` checked by ``nl_item``: a process item holds when the history has an
    executed call of one of its tools; any other reads the records it is about as the time items do
    (or the record it names by id, ``direct``) and holds when each exists and meets the spec
    (``spec_holds``; the place's name, tags, category, score and location, the lines' names, tags
    and chosen options, the note, the address, the total, the party size, the status). Where such
    an item governs a gold record, the loader hands it the matching comparison
    (``GoldOrder.rubric`` / ``GoldVisit.rubric``, ``RUBRIC_ASPECTS``): ``address``, ``note`` and
    ``quantity`` (products compare without their quantities) for orders, ``count`` (the party size)
    for visits; and what the rubric is silent about for a new record it governs: ``payment`` (unpaid
    and paid are one class; cancelled stays apart), ``quantity``, ``store`` (another store and its
    products; for visits ``place``). The gold's own value of each stays as the golden route's aim.
    Extra active records still count as unrequested and unmentioned pre-existing ones must stay
    untouched. Among assignments that match equally well, the one whose records meet the most of
    the compiled items of their gold records wins (``nl_specs`` / ``nl_refs`` in the parameters).

Beyond the gold
    The check both scoring modes count beyond the rubric's text (``no_unrequested_writes``) and the
    per-item report of a finished episode are in ``rewards/scoring_modes.py``; the three items above
    are registered ``strict_only`` (they decide success under ``scoring="strict"`` only).

Status equivalence
    The tools can only produce ``unpaid``, ``paid`` and ``cancelled``, while gold states record
    later life-cycle stages. So statuses compare by class: ``unpaid`` alone; ``cancelled`` alone;
    everything else (``paid``, ``processed``, ``in-progress``, ``delivered``, and in-store
    ``unconsumed``/``consumed``) is one "paid" class. For a pre-existing order a gold status
    equal to its initial status therefore means "unchanged". Bookings compare the same way; a
    reservation carries no payment (the tools make it ``unconsumed``), so for reservations every
    status but ``cancelled`` is one "active" class.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_serializer
from rapidfuzz import fuzz, utils

from servicegym.rewards.nl_rubric import (
    ADDRESS_TOLERANCE_M,
    SPEC_KINDS,
    JointSpec,
    LineFacts,
    PlaceInfo,
    RecordFacts,
    TimeWindow,
    joint_holds,
    parse_spec,
    spec_holds,
    spec_parts,
)
from servicegym.rewards.nl_rubric.world import TRAVEL_TABLES, travel_place
from servicegym.rewards.rubric import EpisodeView, check
from servicegym.world_state.core import World, haversine_m, parse_time
from servicegym.world_state.life.entities import Order, OrderLine

TIME_TOLERANCE_MIN = 10.0
NOTE_SIMILARITY = 60.0
ATTR_SIMILARITY = 80.0
# a free-text attribute resolves to a catalogue option when it is this close to it and clearly
# closer to it than to any other option
ATTR_RESOLVE_MIN = 70.0
ATTR_RESOLVE_MARGIN = 10.0

StatusClass = Literal["unpaid", "paid", "cancelled"]
TRAVEL_ORDER_TYPES = ("hotel", "attraction", "flight", "train")
_ATTR_SPLIT = re.compile(r"[,，;；、/|+]")
_NUMBERS = re.compile(r"\d+|[一二两三四五六七八九十百半全]")
# words that negate or scale an option, by meaning ("no"/"without", "extra"/"additional"):
# fuzzy matching never equates attributes whose marker classes differ ("with"/"without onion")
_MARKER_CLASSES: tuple[tuple[str, frozenset[str], str], ...] = (
    ("neg", frozenset({"no", "not", "non", "without", "none", "free"}), "不无免去"),
    ("less", frozenset({"less", "light", "little", "low", "reduced"}), "少微低"),
    ("more", frozenset({"extra", "more", "double", "additional", "added", "add"}), "多加双"),
    ("half", frozenset({"half"}), "半"),
)
# plain-wording synonyms of translated option names ("Regular Spicy" is the catalogue's "Normal Spicy")
_SYNONYMS = {"normal": "regular", "standard": "regular", "original": "regular", "usual": "regular"}


def status_class(status: str) -> StatusClass:
    """The equivalence class of an order status (see the module docstring)."""
    if status == "unpaid":
        return "unpaid"
    if status == "cancelled":
        return "cancelled"
    return "paid"


class GoldLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    product_id: str
    quantity: int
    attributes: str = ""
    # travel lines: the night/visit/departure date and the room, ticket or seat type (None: the
    # gold does not say, the product id decides)
    date: str | None = None
    product_type: str | None = None

    @model_serializer(mode="wrap")
    def _without_unset_travel_fields(self, handler: Any) -> Any:
        # other domains' lines serialise as before
        data = handler(self)
        for key in ("date", "product_type"):
            if isinstance(data, dict) and data.get(key) is None:
                data.pop(key, None)
        return data


class GoldOrder(BaseModel):
    """One normalised required order of an expected state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["new", "existing", "replaced"]
    order_id: str
    order_type: str = "delivery"
    store_id: str
    status: str
    # None: no requirement (gold note empty for new orders, unchanged for existing ones)
    note: str | None = None
    address: str | None = None
    longitude: float | None = None
    latitude: float | None = None
    dispatch_time: str | None = None
    delivery_time: str | None = None
    # which of the two times must match: both, either one, only the one given, or none; "rubric":
    # none here, a natural-language time item of the task checks the delivery time (``delivery_time``
    # is then the golden route's aim)
    time_rule: Literal["none", "dispatch", "delivery", "both", "either", "rubric"] = "none"
    lines: list[GoldLine] = []
    # what the task's natural-language rubric decides instead of the gold (see "Natural-language
    # items"): a subset of RUBRIC_ASPECTS; the gold's own value is then only the golden route's aim
    rubric: list[str] = []

    @model_serializer(mode="wrap")
    def _without_empty_rubric(self, handler: Any) -> Any:
        return _drop_empty_rubric(handler(self))


class GoldVisit(BaseModel):
    """One normalised seat booking (``table="books"``) or service reservation of an expected state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["new", "existing", "replaced"]
    table: Literal["books", "reservations"]
    record_id: str
    shop_id: str
    status: str
    # None: not scored (an existing record's value the gold leaves unchanged)
    time: str | None = None
    customer_count: int | None = None
    # False when the gold time lies in the past, or when a natural-language time item of the task
    # checks the time: ``time`` is then only the golden route's choice
    check_time: bool = True
    # as ``GoldOrder.rubric`` ("count": the party size, "payment", "place": the shop)
    rubric: list[str] = []

    @model_serializer(mode="wrap")
    def _without_empty_rubric(self, handler: Any) -> Any:
        return _drop_empty_rubric(handler(self))


# the gold comparisons a compiled natural-language item may take over (``GoldOrder.rubric``)
RUBRIC_ASPECTS = ("address", "note", "quantity", "payment", "store", "count", "place")


def _drop_empty_rubric(data: Any) -> Any:
    # a record the rubric leaves to the gold serialises as before
    if isinstance(data, dict) and not data.get("rubric"):
        data.pop("rubric", None)
    return data


class GoldState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    orders: list[GoldOrder]
    visits: list[GoldVisit] = []


# ----- text normalisation -----------------------------------------------------------------
def norm_text(text: str) -> str:
    return " ".join(str(text).casefold().split())


def _markers(text: str) -> frozenset[str]:
    words = set(utils.default_process(text).split())
    return frozenset(name for name, ws, chars in _MARKER_CLASSES if words & ws or any(c in chars for c in text))


def _negated_word(a: str, b: str) -> bool:
    """Whether one side says "unX" where the other says "X" ("unseparated" / "separated")."""
    wa, wb = set(utils.default_process(a).split()), set(utils.default_process(b).split())
    return any(w[:2] == "un" and w[2:] in wb for w in wa) or any(w[:2] == "un" and w[2:] in wa for w in wb)


def _same_markers(a: str, b: str) -> bool:
    """Same numbers and same marker classes: "30% sugar" is not "50% sugar", "no ice" not "ice"."""
    return (
        Counter(_NUMBERS.findall(a)) == Counter(_NUMBERS.findall(b))
        and _markers(a) == _markers(b)
        and not _negated_word(a, b)
    )


def _similarity(a: str, b: str) -> float:
    return fuzz.token_set_ratio(a, b, processor=utils.default_process)


def _fuzzy_same(a: str, b: str) -> bool:
    return _same_markers(a, b) and _similarity(a, b) >= ATTR_SIMILARITY


def _norm_part(text: str) -> str:
    return " ".join(_SYNONYMS.get(w, w) for w in norm_text(text).split())


def attribute_parts(text: str) -> list[str]:
    """An attribute string as its normalised parts ("Less ice, 30% sugar" -> two parts)."""
    return [p for p in (_norm_part(x) for x in _ATTR_SPLIT.split(text or "")) if p]


def resolve_option(part: str, options: Iterable[str]) -> str | None:
    """The catalogue option a normalised attribute part clearly names, or None.

    Only options with the same numbers and marker classes compete; the best must be close
    (``ATTR_RESOLVE_MIN``) and clearly ahead of the next (``ATTR_RESOLVE_MARGIN``).
    """
    normed = [_norm_part(o) for o in options]
    if part in normed:
        return part
    scored = sorted(((_similarity(part, o), o) for o in normed if _same_markers(part, o)), reverse=True)
    if not scored:
        return None
    best_score, best = scored[0]
    second = scored[1][0] if len(scored) > 1 else 0.0
    if best_score >= ATTR_RESOLVE_MIN and best_score - second >= ATTR_RESOLVE_MARGIN:
        return best
    return None


def _part_matches(gold: str, ours: str, options: list[str]) -> bool:
    if gold == ours or _fuzzy_same(gold, ours):
        return True
    if not options:
        return False
    g = resolve_option(gold, options)
    return g is not None and g == resolve_option(ours, options)


def attributes_match(gold: str, ours: str, options: list[str] | None = None) -> bool:
    """Whether the attribute string ``ours`` satisfies the gold one (empty gold: anything)."""
    gp, op = attribute_parts(gold), attribute_parts(ours)
    if not gp:
        return True
    if len(gp) != len(op):
        return False
    opts = list(options or [])
    return _bijection(gp, op, lambda g, o: _part_matches(g, o, opts))


def _bijection(left: list[Any], right: list[Any], ok) -> bool:
    """Whether ``left`` and ``right`` pair up one to one with ``ok(l, r)`` for every pair."""
    if len(left) != len(right):
        return False
    compat = [[j for j, r in enumerate(right) if ok(lv, r)] for lv in left]
    used: set[int] = set()

    def rec(i: int) -> bool:
        if i == len(left):
            return True
        for j in compat[i]:
            if j not in used:
                used.add(j)
                if rec(i + 1):
                    return True
                used.discard(j)
        return False

    return rec(0)


def note_matches(gold: str, ours: str) -> bool:
    return fuzz.token_set_ratio(gold, ours, processor=utils.default_process) >= NOTE_SIMILARITY


# ----- lines --------------------------------------------------------------------------------
def _merged(lines: Iterable[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
    """Lines with the same product and the same (normalised) attributes, added up."""
    out: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
    for pid, qty, attrs in lines:
        key = (pid, tuple(sorted(attribute_parts(attrs))))
        if key in out:
            out[key][1] += qty
        else:
            out[key] = [pid, qty, attrs]
    return [(p, q, a) for p, q, a in out.values()]


def lines_match(gold: list[GoldLine], ours: list[OrderLine], options_of: dict[str, list[str]] | None = None,
                quantities: bool = True) -> bool:
    """Same products in the same quantities, and the gold's attributes where it names any
    (``quantities=False``: the same products, in any quantities)."""
    options_of = options_of or {}
    g_tot: Counter[str] = Counter()
    o_tot: Counter[str] = Counter()
    for line in gold:
        g_tot[line.product_id] += line.quantity
    for oline in ours:
        o_tot[oline.product_id] += oline.quantity
    if (g_tot != o_tot) if quantities else (set(g_tot) != set(o_tot)):
        return False
    for pid in g_tot:
        g = _merged((x.product_id, x.quantity, x.attributes) for x in gold if x.product_id == pid)
        if all(not attribute_parts(a) for _, _, a in g):
            continue
        o = _merged((x.product_id, x.quantity, x.attributes) for x in ours if x.product_id == pid)
        opts = options_of.get(pid, [])

        def same(a: tuple[str, int, str], b: tuple[str, int, str], opts: list[str] = opts) -> bool:
            return (a[1] == b[1] or not quantities) and attributes_match(a[2], b[2], opts)

        if not _bijection(g, o, same):
            return False
    return True


def travel_lines_match(gold: list[GoldLine], ours: list[OrderLine]) -> bool:
    """Travel lines pair up one to one: same quantity, date and type (or product id where the gold
    gives neither date nor type)."""

    def same(g: GoldLine, o: OrderLine) -> bool:
        if g.quantity != o.quantity:
            return False
        if g.date is None and g.product_type is None:
            return g.product_id == o.product_id
        return (g.date is None or g.date == o.date) and (
            g.product_type is None or norm_text(g.product_type) == norm_text(o.name)
        )

    return _bijection(list(gold), list(ours), same)


# ----- one order ----------------------------------------------------------------------------
def _minutes_apart(a: str, b: str) -> float | None:
    try:
        return abs((parse_time(a) - parse_time(b)).total_seconds()) / 60.0
    except ValueError:
        return None


def _time_ok(ours: str, target: str | None) -> bool:
    if target is None:
        return True
    gap = _minutes_apart(ours, target)
    return gap is not None and gap <= TIME_TOLERANCE_MIN


def times_match(gold: GoldOrder, order: Order) -> bool:
    d_ok = _time_ok(order.dispatch_time, gold.dispatch_time)
    v_ok = _time_ok(order.delivery_time, gold.delivery_time)
    if gold.time_rule == "either":
        return d_ok or v_ok
    if gold.time_rule in ("none", "rubric"):
        return True
    return d_ok and v_ok


def address_matches(gold: GoldOrder, order: Order) -> bool:
    if gold.address is None and gold.longitude is None:
        return True
    loc = order.location
    if loc is None:
        return False
    if gold.address is not None and norm_text(gold.address) == norm_text(loc.address):
        return True
    if gold.longitude is None or gold.latitude is None:
        return False
    return haversine_m(gold.longitude, gold.latitude, loc.longitude, loc.latitude) <= ADDRESS_TOLERANCE_M


def status_matches(gold_status: str, status: str, rubric: list[str]) -> bool:
    """Equivalent statuses; with the "payment" aspect (the rubric is silent about payment) only
    cancelled or not counts."""
    if "payment" in rubric:
        return (status == "cancelled") == (status_class(gold_status) == "cancelled")
    return status_class(status) == status_class(gold_status)


def content_mismatch(gold: GoldOrder, order: Order, options_of: dict[str, list[str]]) -> str | None:
    """Why ``order`` does not match the gold content, or None when it does (a comparison the
    gold's ``rubric`` aspects hand to the natural-language items is skipped)."""
    rubric = gold.rubric
    if order.order_type != gold.order_type:
        return f"order type {order.order_type} is not {gold.order_type}"
    if order.store_id != gold.store_id and "store" not in rubric:
        return f"store {order.store_id} is not {gold.store_id}"
    if not status_matches(gold.status, order.status, rubric):
        return f"status {order.status} is not equivalent to {gold.status}"
    if "store" in rubric:
        pass  # another store's products: the rubric's items about them decide
    elif gold.order_type in TRAVEL_ORDER_TYPES:
        if not travel_lines_match(gold.lines, order.products):
            return "dates, room/ticket/seat types or quantities differ"
    elif not lines_match(gold.lines, order.products, options_of, quantities="quantity" not in rubric):
        return "products, quantities or attributes differ"
    if "address" not in rubric and not address_matches(gold, order):
        return "delivery address differs"
    if not times_match(gold, order):
        return "dispatch or delivery time is off"
    if "note" not in rubric and gold.note is not None and not note_matches(gold.note, order.note):
        return f"note {order.note!r} is not like {gold.note!r}"
    return None


def _options_of(world: World) -> dict[str, list[str]]:
    if "products" not in world.tables:
        return {}
    return {p.product_id: list(getattr(p, "attributes", []) or []) for p in world.table("products")}


# ----- one state ----------------------------------------------------------------------------
@dataclass
class StateResult:
    """How well the final world matches one expected state."""

    index: int
    required: bool
    no_extras: bool
    untouched: bool
    matched: int
    problems: list[str] = field(default_factory=list)
    # "<table>:<gold id>" -> the key of the final record matched to that gold record
    assigned: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return (int(self.required) + int(self.no_extras) + int(self.untouched), self.matched)


def best_assignment(cands: list[list[int]], active: set[int]) -> tuple[int, frozenset[int]]:
    """An injective assignment of golds to candidates (``cands[k]``: the created records gold k
    may take): as many golds matched as possible, then as many ``active`` records covered.
    Returns the number matched and the records taken (exhaustive backtracking, pruned)."""
    n, pairs = best_assignment_pairs(cands, active)
    return n, frozenset(pairs.values())


def best_assignment_pairs(cands: list[list[int]], active: set[int],
                          prefer: dict[tuple[int, int], int] | None = None) -> tuple[int, dict[int, int]]:
    """``best_assignment`` with the assignment itself: gold index -> record index. Among equally
    good assignments, the one with the most ``prefer[(gold, record)]`` (the compiled rubric items
    of the gold that the record meets) wins."""
    best: list[Any] = [-1, -1, {}, -1]
    used: set[int] = set()
    pairs: dict[int, int] = {}
    prefer = prefer or {}

    def rec(k: int, count: int) -> None:
        if count + (len(cands) - k) < best[0]:
            return  # cannot beat the best assignment found so far
        if k == len(cands):
            cov = len(active & used)
            pref = sum(prefer.get(kv, 0) for kv in pairs.items())
            if (count, cov, pref) > (best[0], best[1], best[3]):
                best[0], best[1], best[2], best[3] = count, cov, dict(pairs), pref
            return
        for i in cands[k]:
            if i not in used:
                used.add(i)
                pairs[k] = i
                rec(k + 1, count + 1)
                del pairs[k]
                used.discard(i)
        rec(k + 1, count)

    rec(0, 0)
    return best[0], best[2]


# ----- bookings and reservations ------------------------------------------------------------
VISIT_TABLES = ("books", "reservations")


def visit_status_class(table: str, status: str) -> str:
    """The equivalence class of a booking's or reservation's status (see the module docstring)."""
    if table == "reservations":
        return "cancelled" if status == "cancelled" else "active"
    return status_class(status)


def visit_time(row: Any) -> str:
    return row.book_time if hasattr(row, "book_time") else row.reservation_time


def visit_mismatch(gold: GoldVisit, row: Any) -> str | None:
    """Why the booking/reservation ``row`` does not match the gold one, or None when it does."""
    if row.shop_id != gold.shop_id and "place" not in gold.rubric:
        return f"shop {row.shop_id} is not {gold.shop_id}"
    if "payment" in gold.rubric:
        if (row.status == "cancelled") != (visit_status_class(gold.table, gold.status) == "cancelled"):
            return f"status {row.status} is not equivalent to {gold.status}"
    elif visit_status_class(gold.table, row.status) != visit_status_class(gold.table, gold.status):
        return f"status {row.status} is not equivalent to {gold.status}"
    if gold.check_time and not _time_ok(visit_time(row), gold.time):
        return f"time {visit_time(row)} is not within {TIME_TOLERANCE_MIN:g} min of {gold.time}"
    if "count" not in gold.rubric and gold.customer_count is not None and row.customer_count != gold.customer_count:
        return f"party of {row.customer_count}, not {gold.customer_count}"
    return None


@dataclass
class _VisitResult:
    required: bool = True
    matched: int = 0
    extras: list[str] = field(default_factory=list)
    untouched: bool = True
    problems: list[str] = field(default_factory=list)
    assigned: dict[str, str] = field(default_factory=dict)


def _evaluate_visits(view: EpisodeView, state: GoldState, nl: dict[str, list[Any]] | None = None) -> _VisitResult:
    """The bookings and reservations part of ``evaluate_state`` (worlds without them: all true)."""
    res = _VisitResult()
    for table in VISIT_TABLES:
        if table not in view.world.tables:
            continue
        now, then = view.world.table(table), view.initial.table(table)
        golds = [g for g in state.visits if g.table == table]
        mentioned: set[str] = set()
        for g in golds:
            if g.kind == "new":
                continue
            mentioned.add(g.record_id)
            final = now.get(g.record_id)
            if final is not None and g.kind == "existing":
                res.assigned[f"{table}:{g.record_id}"] = g.record_id
            if final is None:
                why = "missing"
            elif g.kind == "replaced":
                why = None if final.status == "cancelled" else f"must be cancelled and made anew, is {final.status}"
            else:
                why = visit_mismatch(g, final)
            if why is not None:
                res.required = False
                res.problems.append(f"{g.record_id}: {why}")
            res.matched += int(why is None)
        new = [g for g in golds if g.kind in ("new", "replaced")]
        created = [r for r in now if r.key not in then.rows]
        active = {i for i, r in enumerate(created) if r.status != "cancelled"}
        cands = [[i for i, r in enumerate(created) if visit_mismatch(g, r) is None] for g in new]
        prefer = _preferences(view, table, [f"{table}:{g.record_id}" for g in new], created, cands, nl)
        n_new, pairs = best_assignment_pairs(cands, active, prefer)
        image = frozenset(pairs.values())
        res.assigned.update({f"{table}:{new[k].record_id}": created[i].key for k, i in pairs.items()})
        res.matched += n_new
        if n_new < len(new):
            res.required = False
            for g, row in zip(new, cands):
                if not row:
                    why = [visit_mismatch(g, r) for r in created if r.shop_id == g.shop_id]
                    res.problems.append(f"{g.record_id} ({g.kind}): no matching {table[:-1]}: "
                                        f"{why[0] if why else 'none at that shop'}")
        extras = [created[i].key for i in sorted(active - image)]
        if extras:
            res.extras += extras
            res.problems.append(f"unrequested {table}: {', '.join(extras)}")
        for key, before in then.rows.items():
            after = now.get(key)
            if key in mentioned:
                continue
            if after is None or (after.status, visit_time(after), after.customer_count) != (
                before.status, visit_time(before), before.customer_count
            ):
                res.untouched = False
                res.problems.append(f"{key}: pre-existing {table[:-1]} changed although no expected state asks for it")
    return res


def evaluate_state(view: EpisodeView, state: GoldState, index: int, initial_ids: set[str],
                   nl: dict[str, list[Any]] | None = None) -> StateResult:
    """How the final world matches one expected state; ``nl`` ("<table>:<gold id>" -> the compiled
    natural-language items about that gold record) breaks ties between equally good assignments."""
    now_orders = view.world.table("orders")
    then_orders = view.initial.table("orders")
    options_of = _options_of(view.initial)
    problems: list[str] = []
    matched = 0
    required = True
    mentioned: set[str] = set()

    assigned: dict[str, str] = {}
    for g in state.orders:
        if g.kind == "new":
            continue
        mentioned.add(g.order_id)
        final = now_orders.get(g.order_id)
        if final is not None and g.kind == "existing":
            assigned[f"orders:{g.order_id}"] = g.order_id
        if final is None:
            required = False
            problems.append(f"{g.order_id}: missing")
            continue
        if g.kind == "replaced":
            ok = final.status == "cancelled"
            if not ok:
                problems.append(f"{g.order_id}: must be cancelled and re-ordered, is {final.status}")
        else:
            ok = status_matches(g.status, final.status, g.rubric)
            if not ok:
                problems.append(f"{g.order_id}: status {final.status} is not equivalent to {g.status}")
            elif g.note is not None and "note" not in g.rubric and not note_matches(g.note, final.note):
                ok = False
                problems.append(f"{g.order_id}: note {final.note!r} is not like {g.note!r}")
            elif g.lines and g.order_type in TRAVEL_ORDER_TYPES and not travel_lines_match(g.lines, final.products):
                ok = False
                problems.append(f"{g.order_id}: dates, types or quantities differ from the gold's")
        required &= ok
        matched += int(ok)

    golds = [g for g in state.orders if g.kind in ("new", "replaced")]
    created = [o for o in now_orders if o.order_id not in initial_ids]
    active = {i for i, o in enumerate(created) if o.status != "cancelled"}
    cands: list[list[int]] = []
    for g in golds:
        row = []
        for i, o in enumerate(created):
            if content_mismatch(g, o, options_of) is None:
                row.append(i)
        cands.append(row)

    prefer = _preferences(view, "orders", [f"orders:{g.order_id}" for g in golds], created, cands, nl)
    n_new, pairs = best_assignment_pairs(cands, active, prefer)
    image = frozenset(pairs.values())
    assigned.update({f"orders:{golds[k].order_id}": created[i].order_id for k, i in pairs.items()})
    matched += n_new
    if n_new < len(golds):
        required = False
        for g, row in zip(golds, cands):
            if not row:
                # the closest created order's reason, for the report
                why = [content_mismatch(g, o, options_of) for o in created if o.store_id == g.store_id]
                reason = why[0] if why else "no order from that store"
                problems.append(f"{g.order_id} ({g.kind}): no matching order: {reason}")
    extras = [created[i].order_id for i in sorted(active - image)]
    if extras:
        problems.append(f"unrequested orders: {', '.join(extras)}")

    untouched = True
    for oid, before in then_orders.rows.items():
        if oid in mentioned:
            continue
        after = now_orders.get(oid)
        if after is None or after.status != before.status or after.note != before.note or after.products != before.products:
            untouched = False
            problems.append(f"{oid}: pre-existing order changed although no expected state asks for it")
    visits = _evaluate_visits(view, state, nl)
    return StateResult(index, required and visits.required, not extras and not visits.extras,
                       untouched and visits.untouched, matched + visits.matched, problems + visits.problems,
                       assigned | visits.assigned)


# parsed forms of a task's rubric parameters, keyed by the identity of the JSON object they were
# parsed from (the entry holds the object, so its id cannot be reused while cached): a task's
# items share their parameters' objects, so each is validated once per process, not per scoring
_PARSED: dict[tuple[str, int], tuple[Any, Any]] = {}
_PARSED_MAX = 4096


def parsed(kind: str, obj: Any, parse: Any) -> Any:
    """``parse(obj)``, once per (``kind``, object) while the object lives in the cache."""
    key = (kind, id(obj))
    hit = _PARSED.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    value = parse(obj)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = (obj, value)
    return value


def parse_states(params: dict[str, Any]) -> list[GoldState]:
    return parsed("states", params["states"], lambda raw: [GoldState.model_validate(s) for s in raw])


def _nl_of_state(params: dict[str, Any], index: int) -> dict[str, list[Any]]:
    """"<table>:<gold id>" -> the compiled natural-language items tied to it in expected state ``index``."""
    specs = params.get("nl_specs") or {}
    refs = (params.get("nl_refs") or {}).get(str(index)) or {}
    if not refs:
        return {}
    by_index = parsed("nl_specs", specs, lambda raw: {k: parse_spec(v) for k, v in raw.items()})
    return {key: [by_index[str(k)] for k in ks if str(k) in by_index] for key, ks in refs.items()}


def _preferences(view: EpisodeView, table: str, keys: list[str], created: list[Any], cands: list[list[int]],
                 nl: dict[str, list[Any]] | None) -> dict[tuple[int, int], int]:
    """(gold, record) -> how many of the gold's compiled items the record meets, for the candidates."""
    if not nl:
        return {}
    out: dict[tuple[int, int], int] = {}
    for k, (key, row) in enumerate(zip(keys, cands)):
        specs = nl.get(key)
        if not specs or len(row) < 2:
            continue
        for i in row:
            facts = record_facts(view.world, table, created[i])
            place = place_info(view.world, facts.place_id)
            out[(k, i)] = sum(spec_holds(sp, facts, place) for sp in specs if not isinstance(sp, TimeWindow))
    return out


def best_state(view: EpisodeView, params: dict[str, Any]) -> StateResult:
    """The expected state the final world matches best (ties: the first); computed once per view
    for the items that share the task's states (``EpisodeView.memo``)."""
    key = ("best_state", id(params["states"]), id(params.get("nl_specs")), id(params.get("nl_refs")))
    hit = view.memo.get(key)
    if hit is not None and hit[0] is params["states"]:
        return hit[1]
    best = _best_state(view, params)
    view.memo[key] = (params["states"], best)
    return best


def _best_state(view: EpisodeView, params: dict[str, Any]) -> StateResult:
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    best: StateResult | None = None
    for i, state in enumerate(parse_states(params)):
        res = evaluate_state(view, state, i, initial_ids, _nl_of_state(params, i))
        if best is None or res.key > best.key:
            best = res
        if res.key[0] == 3:
            break
    if best is None:
        raise ValueError("a VitaBench rubric item needs at least one expected state")
    return best


@check("required_orders", strict_only=True)
def required_orders(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every required order of the best-matching expected state is matched."""
    return best_state(view, params).required


@check("no_unrequested_orders", strict_only=True)
def no_unrequested_orders(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Every order created in the episode and not cancelled is matched to a required order."""
    return best_state(view, params).no_extras


@check("untouched_orders", strict_only=True)
def untouched_orders(view: EpisodeView, params: dict[str, Any]) -> bool:
    """Pre-existing orders the expected state does not mention keep their status and note."""
    return best_state(view, params).untouched


# ----- natural-language time items ----------------------------------------------------------
def _created_like(view: EpisodeView, ref: dict[str, Any], initial_ids: set[str]) -> Any:
    """The active record created in the episode that best stands in for the gold record ``ref``
    when none was matched to it: same table and store/shop, then the most of its products."""
    table = ref["table"]
    rows = view.world.table(table)
    before = view.initial.table(table).rows if table != "orders" else initial_ids
    made = [r for r in rows if r.key not in before and r.status != "cancelled"]
    if table == "orders":
        made = [o for o in made if o.order_type == ref.get("order_type", "delivery")]
        same = [o for o in made if o.store_id == ref.get("place")]
        want = set(ref.get("product_ids") or [])
        return max(same, key=lambda o: len(want & {x.product_id for x in o.products}), default=None)
    return next((r for r in made if r.shop_id == ref.get("place")), None)


def _only_created(view: EpisodeView, ref: dict[str, Any], initial_ids: set[str]) -> Any:
    """The one active record of ``ref``'s kind created in the episode, if there is exactly one."""
    table = ref["table"]
    before = view.initial.table(table).rows if table != "orders" else initial_ids
    made = [r for r in view.world.table(table) if r.key not in before and r.status != "cancelled"]
    if table == "orders":
        made = [o for o in made if o.order_type == ref.get("order_type", "delivery")]
    return made[0] if len(made) == 1 else None


def governed_records(view: EpisodeView, params: dict[str, Any]) -> list[tuple[str, Any]]:
    """The final records a natural-language time item bounds, as (table, record); empty when one
    of them does not exist (see "Natural-language time items" in the module docstring)."""
    direct = params.get("direct")
    if direct:  # an item that names its record by id ("cancel order X")
        row = view.world.table(direct["table"]).get(direct["id"]) if direct["table"] in view.world.tables else None
        return [] if row is None else [(direct["table"], row)]
    res = best_state(view, params)
    refs = (params.get("refs") or {}).get(str(res.index)) or []
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    out: list[tuple[str, Any]] = []
    for ref in refs:
        table = ref["table"]
        if table not in view.world.tables:
            return []
        key = res.assigned.get(f"{table}:{ref['id']}")
        row = view.world.table(table).get(key) if key is not None else None
        if row is None:
            row = _created_like(view, ref, initial_ids)
        if row is None and len(refs) == 1:
            row = _only_created(view, ref, initial_ids)
        if row is None:
            return []
        out.append((table, row))
    return out


def record_time(table: str, row: Any) -> datetime | None:
    """The time a time item bounds: an order's delivery time, a booking's or reservation's time."""
    try:
        return parse_time(row.delivery_time if table == "orders" else visit_time(row))
    except (ValueError, AttributeError):
        return None


@check("nl_time_window")
def nl_time_window(view: EpisodeView, params: dict[str, Any]) -> bool:
    """A natural-language time item (``rewards/nl_rubric/``): every record it bounds exists and
    its time lies in the item's window."""
    window = parsed("window", params["window"], TimeWindow.model_validate)
    records = governed_records(view, params)
    if not records:
        return False
    now = view.initial.clock.now
    for table, row in records:
        t = record_time(table, row)
        if t is None:
            return False
        earliest = now + timedelta(minutes=float(getattr(row, "shipping_time", None) or 0.0))
        if not window.accepts(t, earliest):
            return False
    return True


# ----- the other natural-language items ----------------------------------------------------
def place_info(world: World, place_id: str) -> PlaceInfo | None:
    """A store or shop of ``world`` as the compiled items read it."""
    for table, name_field in (("stores", "name"), ("shops", "shop_name")):
        if table in world.tables:
            row = world.table(table).get(place_id)
            if row is not None:
                loc = getattr(row, "location", None)
                return PlaceInfo(place_id=place_id, name=str(getattr(row, name_field, "") or ""),
                                 tags=tuple(row.tags or ()), category=str(getattr(row, "category", "") or ""),
                                 score=float(row.score or 0.0), longitude=getattr(loc, "longitude", None),
                                 latitude=getattr(loc, "latitude", None), address=str(getattr(loc, "address", "") or ""))
    for table, kind, _owner, name_field, _products, _type in TRAVEL_TABLES:
        if table in world.tables:
            row = world.table(table).get(place_id)
            if row is not None:
                return travel_place(kind, name_field, row)
    return None


def catalogue_product(world: World, place_id: str, product_id: str) -> Any:
    """The catalogue row of a product sold at a place (delivery ``products``, in-store
    ``shop_products``, a travel place's dated rooms, tickets or seats)."""
    if "products" in world.tables:
        row = world.table("products").get(product_id)
        if row is not None:
            return row
    if "shop_products" in world.tables:
        row = world.table("shop_products").get(f"{place_id}/{product_id}")
        if row is not None:
            return row
    for _table, _kind, owner, _name, products, _type in TRAVEL_TABLES:
        if products in world.tables:
            row = world.table(products).get(product_id)
            if row is not None and getattr(row, owner) == place_id:
                return row
    return None


def record_facts(world: World, table: str, row: Any) -> RecordFacts:
    """A final order, booking or reservation as the compiled items read it."""
    if table != "orders":
        return RecordFacts(table=table, record_id=row.key, place_id=row.shop_id, status=row.status,
                           customer_count=row.customer_count)
    lines = []
    for x in row.products:
        cat = catalogue_product(world, row.store_id, x.product_id)
        lines.append(LineFacts(product_id=x.product_id, name=x.name or getattr(cat, "name", ""),
                               tags=tuple(x.tags or getattr(cat, "tags", ()) or ()), attributes=x.attributes or "",
                               quantity=x.quantity, price=float(x.price),
                               options=tuple(getattr(cat, "attributes", ()) or ()), date=str(getattr(x, "date", "") or "")))
    loc = row.location
    return RecordFacts(table="orders", record_id=row.order_id, place_id=row.store_id, status=row.status,
                       lines=tuple(lines), note=row.note or "", address=loc.address if loc else "",
                       longitude=loc.longitude if loc else None, latitude=loc.latitude if loc else None,
                       total=float(row.total_price))


def episode_orders(view: EpisodeView, params: dict[str, Any]) -> list[tuple[RecordFacts, PlaceInfo | None]]:
    """The orders the episode made and did not cancel, each with its place (``JointSpec`` items)."""
    initial_ids = set(params.get("initial_order_ids") or view.initial.table("orders").rows)
    out = []
    for row in view.world.table("orders"):
        if row.key in initial_ids or row.status == "cancelled":
            continue
        facts = record_facts(view.world, "orders", row)
        out.append((facts, place_info(view.world, facts.place_id)))
    return out


def executed_tools(view: EpisodeView) -> frozenset[str]:
    """The names of the tools executed in the episode."""
    return frozenset(e.name for e in view.history.tool_calls("executed"))


def nl_item(view: EpisodeView, params: dict[str, Any]) -> bool:
    """A compiled natural-language item other than a time window (``rewards/nl_rubric/``): a
    process item holds when the history has an executed call of one of its tools; any other holds
    when every record it is about exists and meets it (see "Natural-language items")."""
    spec = parsed("spec", params["spec"], parse_spec)
    calls = executed_tools(view)
    if all(p.kind == "process" for p in spec_parts(spec)):
        return spec_holds(spec, None, None, calls)
    if isinstance(spec, JointSpec):  # several orders at once: every order the episode made, not cancelled
        return joint_holds(spec, episode_orders(view, params))
    records = governed_records(view, params)
    if not records:
        return False
    for table, row in records:
        facts = record_facts(view.world, table, row)
        if not spec_holds(spec, facts, place_info(view.world, facts.place_id), calls):
            return False
    return True


NL_ITEM_KINDS: tuple[str, ...] = tuple(f"nl_{k}" for k in SPEC_KINDS if k != "time_window")
for _kind in NL_ITEM_KINDS:
    check(_kind)(nl_item)
