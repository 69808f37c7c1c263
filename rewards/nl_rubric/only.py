"""Exclusive sets: "should only include X", "should not include any products other than X", "只包含X",
"除X之外不应有其他商品": every line of the record is one of the named products (``FeatureSpec.every``)."""

from __future__ import annotations

import re

from .clauses import _cut_purpose, _head_class
from .feature import FeatureSpec
from .text import _NUM_RE, _is_zh, _Unclear
from .values import _GENERIC_TAIL_EN, _GENERIC_TAIL_ZH, _clean_value, _resolve_phrase
from .world import (
    ItemContext,
)

# ----- exclusive sets: "only X", "nothing other than X" ----------------------------------------------
# the goods of an order in general ("any products", "anything", "其他商品")
_ANY_GOODS_EN = r"(?:any |no )?(?:other )?(?:products?|items?|dish(?:es)?|goods|food|foods|drinks?|beverages?|things?|anything|nothing)"
_OTHER_THAN_EN = re.compile(rf"^(?P<v>include|includes|contain|contains|have|has|be|order|select|choose)\s+{_ANY_GOODS_EN}\s+"
                            r"(?:other than|besides|apart from|except(?: for)?|beyond)\s+(?P<x>.+)$")
_ONLY_EN = re.compile(r"^(?:only (?:include|contain|have|consist of|be made up of|order|select|choose)|(?:include|contain|have|"
                      r"order|select|choose) only|consist (?:only of|of only))\s+(?P<x>.+)$")
_OTHER_THAN_ZH = re.compile(r"^(?:有|包含|含有|包括|出现|点|购买|选择)?除(?:了)?(?P<x>.{2,}?)(?:之外|以外|外)(?:的)?(?:任何|任意)?(?:其他|其它|别的)"
                            r"(?:的)?(?:商品|菜品|产品|东西|饮品|食物|餐品)?$")
_ONLY_ZH = re.compile(r"^(?:只|仅|只能|仅能)(?:包含|含有|包括|有|点|购买|选择|选|下单)(?P<x>.{2,})$")


def _only_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> FeatureSpec | None:
    """An exclusive set of products: "should not include any products other than X", "should only
    include X", "不应当有除了X外的其他商品", "只包含X": every line of the order has one of X's
    phrases (X's parts joined by "and / or / 、 / 和" are each a product the catalogue sells; a line
    that is none of them fails). A count ("only one set meal"), a place, or a value the catalogue
    does not hold is None (the other readers', whose "other than" leaves it to the judge), as is a
    predicate of no such shape."""
    zh = _is_zh(subject + pred)
    p = _cut_purpose(pred)
    if zh:
        m = _OTHER_THAN_ZH.match(p) if neg else _ONLY_ZH.match(p)
    else:
        m = _OTHER_THAN_EN.match(p)
        if m is not None and neg == bool(re.match(r"^\S+\s+(?:no|nothing)\b", p[m.start("v"):])):
            return None  # "should include products other than X": no exclusive set (the other readers' or the judge's)
        m = m or (None if neg else _ONLY_EN.match(p))
    if m is None:
        return None
    if neg and not zh and _ONLY_EN.match(p):
        return None  # "should not only include X": more, not less
    x = m.group("x").strip(" ,，。.'\"“”")
    x = (_GENERIC_TAIL_ZH if zh else _GENERIC_TAIL_EN).sub("", x) or x
    if not x or re.match(rf"^(?:{_NUM_RE[1:-1]})\b|^(?:a|an|one|single)\b|^[一二两三四五六七八九十\d]", x) \
            or _head_class(x) == "place" or re.search(r"\b(?:from|at)\b|店", x):
        return None  # "only one set meal" (a count), "only from X" (a store): not a set of products
    phrases: list[str] = []
    for piece in re.split(r"\s*,\s*(?:and |or )?|\s+and\s+|\s+or\s+|、|和|或者|或|以及|及", x):
        piece = _clean_value(piece, zh, "")
        if not piece:
            continue
        try:
            _scope, alts = _resolve_phrase(piece, zh, "product", "", ctx)
        except _Unclear:
            return None  # a value the catalogue does not sell: the other readers', or the judge's
        phrases += alts
    if not phrases:
        return None
    return FeatureSpec(scope="product", phrases=list(dict.fromkeys(phrases)), every=True)
