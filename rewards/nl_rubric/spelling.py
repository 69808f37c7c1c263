"""How the catalogue spells a value: the reading a gold product spells first (``_first_found``), the part of an
English value a gold product spells (``_gold_part``), a Chinese value the gold spells with characters between its
own (``_zh_gold_span``). Each reading is weaker than the item as said, never stricter; ``values._resolve_phrase``
asks them in that order."""

from __future__ import annotations

import re
from typing import Any

from .text import _PHRASE_STOP, _is_number, _is_zh, _stem, phrase_in
from .world import _GENERIC_GOODS, ItemContext, PlaceInfo, ProductInfo, _found, _place_fields, across

# what a product is sold as, or a word that says nothing of what it is: not a word that tells one product from another
_UNIT_WORDS = frozenset({"package", "set", "meal", "menu", "combo", "course", "class", "voucher", "ticket", "pass", "session",
                         "plan", "deal", "card", "service", "item", "product", "dish", "order", "portion", "serving", "option",
                         "type", "style", "kind", "version", "experience", "offer"})


# words that tell nothing apart alone ("available", "good"), and what a part may not leave out or hold
_VAGUE_WORDS = frozenset({"available", "good", "nice", "suitable", "cost", "quality", "new", "special", "basic", "premium",
                          "great", "best", "popular", "classic", "standard", "regular", "person", "people", "single",
                          "individual", "free", "provided", "included", "offered", "effective", "high", "low",
                          "environment", "atmosphere", "ambience", "place", "area", "space", "facility", "venue", "store",
                          "shop", "restaurant", "merchant", "professional", "complete", "full"})
_PART_BLOCKERS = re.compile(r"\b(?:be|is|are|purchase|buy|order|select|choose|no|not|non|without|less|low|lower|high|higher|"
                            r"more|extra|very|slightly|moderately|mild|mildly|medium|light|half|double|fewer|only|except|"
                            r"other|than|or|similar|same|like|previous|previously|visited|last)\b|-free\b|n't\b")


def _gold_places(ctx: ItemContext) -> list[PlaceInfo]:
    held = {p.place_id for p in ctx.evidence}
    return [pl for pl in ctx.places if pl.place_id in held]


def _place_has(phrase: str, place: PlaceInfo) -> bool:
    fields = _place_fields(place)
    return any(phrase_in(phrase, f) for f in fields) or across(phrase, fields)


def _gold_places_spell(tries: list[str], ctx: ItemContext) -> bool:
    return any(_place_has(v, pl) for v in tries for pl in _gold_places(ctx))


def _gold_part(value: str, ctx: ItemContext, scope: str = "product") -> str | None:
    """The part of an English product value a gold product spells, where the item describes the product in
    words of its own ("a French manicure package" for the gold's "French Constructed Nail Art Package":
    "french package"); None unless one gold product spells at least half of the value's content words (one
    long word at least), the part keeps the value's order, and some product of that place does not have
    it (a part every product there has would check nothing). The part is a subset of the value's words, so
    every product the whole value names has it too: the reading is weaker than the item, never stricter."""
    low = value.casefold()
    if _PART_BLOCKERS.search(low):
        return None  # a verb (the value is not one), or a word that negates or scales: kept exactly or not at all
    raw = [_stem(w) for w in re.findall(r"[a-z0-9]+", low)]
    words = [w for w in raw if w not in _PHRASE_STOP and w not in ("a", "an", "the")]
    content = [w for w in words if w not in _UNIT_WORDS and w not in _GENERIC_GOODS]
    if len(content) < 2 or len(words) > 8:
        return None
    numbers = {w for w in words if _is_number(w)}
    if re.search(r"\bplus\b|\balong with\b|\bas well as\b", low):
        return None  # "soup dumplings plus the porridge": two things listed, not one described in other words
    conjuncts = [[_stem(w) for w in re.findall(r"[a-z0-9]+", x)] for x in re.split(r"\band\b|&|\+", low)]
    found: dict[str, int] = {}
    records: list[Any] = list(ctx.evidence) if scope == "product" else _gold_places(ctx)
    for pr in records:
        fields = (pr.name, *pr.tags, *pr.options) if scope == "product" else _place_fields(pr)
        kept = [w for w in words if any(phrase_in(w, f) for f in fields)]
        kept_content = [w for w in kept if w in content]
        if not kept_content or 2 * len(kept_content) < len(content) or not numbers <= set(kept) \
                or not any(len(w) >= 4 and not _is_number(w) and w not in _VAGUE_WORDS for w in kept_content) \
                or any(not set(c) & set(kept_content) for c in conjuncts if set(c) & set(content)):
            continue
        if scope == "place":  # a place's part: two words at least, spelled by the gold's place, missing from another
            if len(kept_content) < 2:
                continue
            part = next((x for x in (" ".join(kept), " ".join(kept_content)) if _place_has(x, pr)), None)
            if part is None or all(_place_has(part, q) for q in ctx.places):
                continue
            found[part] = len(kept_content)
            continue
        part = " ".join(kept)
        if not _found(part, ctx, "product", products=(pr,)):
            part = " ".join(kept_content)
            if not _found(part, ctx, "product", products=(pr,)):
                continue
        there = [q for q in ctx.products if q.place_id == pr.place_id]
        if all(_found(part, ctx, "product", products=(q,)) for q in there):
            continue
        found[part] = len(kept_content)
    best = [p for p, n in found.items() if n == max(found.values(), default=0)]
    return best[0] if len(best) == 1 else None


_ZH_SPAN_STOP = re.compile(r"[不无非免去少未没（）()【】\[\]·,，、+＋/|\s]")


def _zh_in_order(value: str, field: str, slack: int = 3) -> str | None:
    """The shortest run of ``field`` that holds the characters of ``value`` in order with at most ``slack``
    others between them ("白切鸡" in "白切清远鸡（半只）": "白切清远鸡"); None when there is none, when the
    run crosses a bracket or separator, or when what it adds negates or scales ("加糖" in "不加糖")."""
    best: str | None = None
    for start in (i for i, ch in enumerate(field) if ch == value[0]):
        j, k = start, 0
        while j < len(field) and k < len(value) and j - start < len(value) + slack:
            if field[j] == value[k]:
                k += 1
            j += 1
        if k < len(value):
            continue
        run = field[start:j]
        extra = "".join(ch for ch in run if ch not in value)
        if _ZH_SPAN_STOP.search(extra) or (best is not None and len(best) <= len(run)):
            continue
        best = run
    return best


def _zh_gold_span(tries: list[str], ctx: ItemContext) -> list[str] | None:
    """A Chinese product value a gold product spells with other characters between its own ("白切鸡" for
    the gold's "白切清远鸡", "杂粮窝头" for "杂粮窝窝头"): the value as said and the gold's run as
    alternatives, so every product the value names still passes (weaker than the item, never stricter).
    Only for a value of three characters or more, one run in the gold's products, and a run some product
    of that place lacks (else it would tell nothing apart); None otherwise."""
    for v in tries:
        if len(v) < 3 or not _is_zh(v) or _ZH_SPAN_STOP.search(v):
            continue
        runs = {(run, pr.place_id) for pr in ctx.evidence for run in [_zh_in_order(v, pr.name)] if run and run != v}
        if len({r for r, _ in runs}) != 1:
            continue
        run = next(iter(runs))[0]
        there = [q for q in ctx.products if q.place_id in {pl for _, pl in runs}]
        if all(_found(run, ctx, "product", products=(q,)) for q in there):
            continue
        return [v, run]
    return None


def _first_found(tries: list[str], whole: list[str], ctx: ItemContext, scope: str,
                 products: tuple[ProductInfo, ...] | None) -> str | None:
    """The reading of a value the products (None: the catalogue) hold: a whole reading one field
    spells, then one a product's fields spell together, then any reading one field spells.

    ``ItemContext.evidence`` (the gold records' products) is asked first: of a value's readings the
    catalogue holds, the one the gold spells is what the item refers to ("a car wash voucher" where
    the gold holds "Car Wash (5 seats)" and another shop sells "Car Wash Voucher"); a reading the
    gold does not spell would only contradict it, and the item would go to the judge."""
    return next((v for v in whole if _found(v, ctx, scope, split=False, products=products)), None) or \
        next((v for v in whole if _found(v, ctx, scope, products=products)), None) or \
        next((v for v in tries if _found(v, ctx, scope, split=False, products=products)), None)
