"""How order lines compare to the gold's in VitaBench scoring: attributes, notes and lines.

An attribute string compares part by part (``attribute_parts``): equal after normalising (``norm_text``
and a few plain synonyms), fuzzy-equal with the same numbers and negation/degree markers, or resolving
to the same catalogue option (``resolve_option``); ``attributes_match`` pairs the parts up one to one.
A note compares by fuzzy similarity (``note_matches``). ``lines_match`` compares a delivery or
in-store order's lines (products, quantities, attributes), ``travel_lines_match`` a travel order's
(date, room/ticket/seat type, quantity). The rules are in "How a gold order is matched" and "Travel
orders" of the docstring of ``rewards/vitabench.py``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from rapidfuzz import fuzz, utils

from servicegym.rewards.vitabench_gold import GoldLine
from servicegym.world_state.life.entities import OrderLine

NOTE_SIMILARITY = 60.0
ATTR_SIMILARITY = 80.0
# a free-text attribute resolves to a catalogue option when it is this close to it and clearly
# closer to it than to any other option
ATTR_RESOLVE_MIN = 70.0
ATTR_RESOLVE_MARGIN = 10.0

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
