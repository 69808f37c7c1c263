"""A place said by what it sells or by its kind: "the gym should offer a swimming class voucher" (the
places whose catalogue has it: a ``StoreSpec``), "should be a Fujian cuisine restaurant", "must provide
Free Parking service" (the place's tags or category: a place ``FeatureSpec``)."""

from __future__ import annotations

import re

from .clauses import _cut_purpose, _head_class
from .feature import FeatureSpec
from .place import StoreSpec
from .text import _is_zh, _Unclear, phrase_in
from .values import _clean_value, _grouping, _resolve_phrase
from .world import (
    ItemContext,
    _found,
)

# ----- a place said to sell a product: "the gym should offer a swimming class voucher" -------------------
_SELLS = re.compile(r"^(?:provide|offer|have|has|sell|serve|feature)s? ")


def _place_selling(value: str, head: str, ctx: ItemContext) -> StoreSpec | None:
    """"The hall should offer a 2-hour trial class", "the gym should provide A and B": where the value
    is no place's tag or name but products of the catalogue have it, the places whose catalogue has
    it (each of "A and B"; a ``StoreSpec``). None when the value is a place's feature, no place's
    products have it, or every place's do (the item then tells no place apart)."""
    try:
        _resolve_phrase(value, False, "place", head, ctx)
        return None  # "should provide a swimming pool": the place's own tag
    except _Unclear:
        pass
    try:
        groups = [_resolve_phrase(value, False, "product", head, ctx)[1]]
    except _Unclear:
        try:
            groups = [_resolve_phrase(_clean_value(x, False, head), False, "product", head, ctx)[1]
                      for x in _grouping(value, False, head, ctx, False, "product")]
        except _Unclear:
            return None
    ids: set[str] | None = None
    for alts in groups:
        sellers = {pr.place_id for pr in ctx.products if any(phrase_in(a, f) for a in alts for f in (pr.name, *pr.tags))}
        ids = sellers if ids is None else ids & sellers
    if not ids or ids >= {pl.place_id for pl in ctx.places}:
        return None
    return StoreSpec(place_ids=sorted(ids), name=f"offering {value}")





# ----- a place described by its kind: "should be a Fujian cuisine restaurant", "must provide Free Parking service" -------
_KIND_OF_PLACE = re.compile(r"^(?:be |is |are )?(?:for |from |at |with |booked at |placed at |ordered from )?(?:a |an )"
                            r"(?P<x>[a-z][a-z' -]{1,40}?) (?P<head>restaurants?|shops?|stores?|salons?|cent(?:er|re)s?|venues?|"
                            r"clubs?|studios?|bars?|halls?|merchants?|eatery|parlou?rs?|spas?|gyms?)$")
_PLACE_OFFERS = re.compile(r"^(?:(?:select|choose|pick|be) (?:a |an |the )?(?:restaurants?|stores?|shops?|merchants?|vendors?|"
                           r"venues?) (?:that|which) )?(?:provides?|offers?|have|has|supports?|features?) (?:the |a |an )?"
                           r"(?P<x>[a-z][a-z' -]{1,40}?)(?: (?:services?|facilit(?:y|ies)|amenit(?:y|ies)|labels?|tags?))?$")
_RATHER_THAN = re.compile(r",?\s+(?:rather than|instead of|and not|not)\s+(?:a |an |the )?[a-z][a-z' -]{1,40}$")


def _place_kind_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> FeatureSpec | None:
    """A place said by its kind ("the order should be from a TCM health center", "the merchant
    should be a Fujian cuisine restaurant") or by what the place offers ("the restaurant must provide
    Free Parking service"): the words with the place noun (or without it, or without "available"),
    found in the places' names, tags or categories (a ``FeatureSpec`` of ``scope="place"``). None
    when the predicate is neither shape or nothing in the catalogue has the words."""
    if not ctx.places or _is_zh(subject + pred):
        return None
    p = _RATHER_THAN.sub("", _cut_purpose(pred).strip(" ."))  # "a dine-in restaurant rather than a delivery-only one"
    m = _KIND_OF_PLACE.match(p)
    offers = None if m else _PLACE_OFFERS.match(p)
    if offers is not None and _head_class(subject) != "place" and not re.match(r"^(?:select|choose|pick|be) ", p):
        return None
    m = m or offers
    if m is None:
        return None
    x = m.group("x").strip()
    if re.search(r"\b(?:well-known|famous|popular|best|top|good|nice|high-end|luxury|large|big|small|new|established|"
                 r"celebrity|listed|michelin|chain|romantic|quiet)\b", x):
        return None  # a judgement, or a fact the catalogue does not hold as a word
    tries = [f"{x} {m.group('head')}", x] if offers is None else [x, re.sub(r" available$", "", x)]
    hit = next((t for t in dict.fromkeys(tries) if len(t) > 2 and _found(t, ctx, "place")), None)
    if hit is None:
        return None
    return FeatureSpec(scope="place", phrases=[hit], negated=neg)
