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

Where the code lives
    ``vitabench_gold.py``   the gold records (``GoldState``, ``GoldOrder``, ``GoldLine``, ``GoldVisit``,
                            ``RUBRIC_ASPECTS``, ``TRAVEL_ORDER_TYPES``) and their cached parsing from
                            a rubric item's parameters (``parse_states``, ``parsed``)
    ``vitabench_lines.py``  attributes, notes and lines against the gold's (``attributes_match``,
                            ``note_matches``, ``lines_match``, ``travel_lines_match``, ``norm_text``)
    ``vitabench_match.py``  one order, one booking or reservation, one expected state, and the best
                            one (``content_mismatch``, ``visit_mismatch``, ``evaluate_state``,
                            ``best_state``; ``status_class``, ``TIME_TOLERANCE_MIN``)
    ``vitabench_facts.py``  the final records as the compiled natural-language items read them
                            (``record_facts``, ``place_info``, ``catalogue_product``)
    this module             the registered checks (``required_orders``, ``no_unrequested_orders``,
                            ``untouched_orders``, ``nl_time_window``, and ``nl_item`` for
                            ``NL_ITEM_KINDS``) and which final records a natural-language item is
                            about (``governed_records``, ``record_time``); it re-exports the other
                            modules' public names (``__all__``)
    Imports run one way: gold <- lines <- match <- this module, facts <- match; none of them
    imports this module. A "module docstring" in their docstrings is this one; patch a name in the
    module that defines it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from servicegym.rewards.nl_rubric import (
    ADDRESS_TOLERANCE_M,
    SPEC_KINDS,
    JointSpec,
    TimeWindow,
    joint_holds,
    parse_spec,
    spec_holds,
    spec_parts,
)
from servicegym.rewards.rubric import EpisodeView, check
from servicegym.rewards.vitabench_facts import (
    catalogue_product,
    episode_orders,
    executed_tools,
    place_info,
    record_facts,
)
from servicegym.rewards.vitabench_gold import (
    RUBRIC_ASPECTS,
    TRAVEL_ORDER_TYPES,
    GoldLine,
    GoldOrder,
    GoldState,
    GoldVisit,
    parse_states,
    parsed,
)
from servicegym.rewards.vitabench_lines import (
    ATTR_RESOLVE_MARGIN,
    ATTR_RESOLVE_MIN,
    ATTR_SIMILARITY,
    NOTE_SIMILARITY,
    attribute_parts,
    attributes_match,
    lines_match,
    norm_text,
    note_matches,
    resolve_option,
    travel_lines_match,
)
from servicegym.rewards.vitabench_match import (
    TIME_TOLERANCE_MIN,
    VISIT_TABLES,
    StateResult,
    StatusClass,
    address_matches,
    best_assignment,
    best_assignment_pairs,
    best_state,
    content_mismatch,
    evaluate_state,
    status_class,
    status_matches,
    times_match,
    visit_mismatch,
    visit_status_class,
    visit_time,
)
from servicegym.world_state.core import parse_time

__all__ = [
    "ADDRESS_TOLERANCE_M", "ATTR_RESOLVE_MARGIN", "ATTR_RESOLVE_MIN", "ATTR_SIMILARITY", "NL_ITEM_KINDS",
    "NOTE_SIMILARITY", "RUBRIC_ASPECTS", "TIME_TOLERANCE_MIN", "TRAVEL_ORDER_TYPES", "VISIT_TABLES",
    "GoldLine", "GoldOrder", "GoldState", "GoldVisit", "StateResult", "StatusClass",
    "address_matches", "attribute_parts", "attributes_match", "best_assignment", "best_assignment_pairs",
    "best_state", "catalogue_product", "content_mismatch", "episode_orders", "evaluate_state",
    "executed_tools", "governed_records", "lines_match", "nl_item", "nl_time_window", "no_unrequested_orders",
    "norm_text", "note_matches", "parse_states", "parsed", "place_info", "record_facts", "record_time",
    "required_orders", "resolve_option", "status_class", "status_matches", "times_match", "travel_lines_match",
    "untouched_orders", "visit_mismatch", "visit_status_class", "visit_time",
]


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
