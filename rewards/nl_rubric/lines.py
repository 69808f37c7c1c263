"""One product, then what that line has: "包含一个手抓饼，不加蛋，甜面酱口味", "include a Jianbing for the
daughter, without egg, with sweet bean sauce flavor": a ``FeatureSpec`` with the product's phrase and,
on the same line, each option asked (``also``) and none of those refused (``lacks``)."""

from __future__ import annotations

import re
from typing import Any

from .clauses import _cut_purpose
from .feature import FeatureSpec
from .text import _stem, phrase_in
from .values import _FEATURE_VERBS_ZH, _ZH_JUDGEMENT, _zh_bought_at
from .world import (
    _GENERIC_GOODS,
    ItemContext,
)

# ----- Chinese: one product, then a list of what that line has ("包含一个手抓饼，不加蛋，甜面酱口味") ----------
_ZH_FOR_WHOM = re.compile(r"^(?:一|1)?(?:个|份|杯|碗|盒|款)?(?:给|为)[^，,的]{1,8}?(?:准备|点|买|下单)?的")
_ZH_LACK = re.compile(r"^(?:不加|不要|不含|不放|无|去)(?P<x>.{1,8})$")
_ZH_WITH = re.compile(r"^(?:选择|选|要|加|为|是)?(?P<x>.{2,12}?)(?:的)?(?:口味|味道|规格|选项|做法)?$")


def _zh_option_of(piece: str, prods: list[Any]) -> str | None:
    """The option of the named products a piece names: found in an option, or, where no option
    holds it, the one option (of those products) that has nearly all of its characters and agrees on
    a leading 不 / 无 / 少 ("不另外加糖" for "不额外加糖"); None when none or several fit."""
    options = {o for pr in prods for o in pr.options}
    if any(phrase_in(piece, o) for o in options):
        return piece
    chars = set(piece)
    neg = piece.startswith(("不", "无", "少", "去"))
    near = [o for o in options if len(chars & set(o)) >= 0.75 * len(chars) and o.startswith(("不", "无", "少", "去")) == neg]
    return near[0] if len(near) == 1 and len(piece) >= 3 else None


def _zh_line_with_options(pred: str, ctx: ItemContext) -> list[Any] | None:
    """"(应)包含一个给女儿的X，不加Y，Z口味" / "在<place>下单X，选择Z": one ordered line that is X, has each
    option named after it (chosen, where X offers it) and lacks each "不加Y" X's catalogue shows as a
    variant ("X加蛋"); the store too when one is named. None when the text is not one product and
    then such pieces, each found for that product."""
    pieces = [x.strip() for x in re.split(r"[，,]", _cut_purpose(pred)) if x.strip()]
    if len(pieces) < 2 or len(pieces) > 5:
        return None
    store, first = _zh_bought_at(pieces[0], False, ctx)
    m = _FEATURE_VERBS_ZH.match(first)
    if m is None or m.group("v") not in ("选择", "选", "包含", "含有", "有", "是", "为"):
        return None
    value = _ZH_FOR_WHOM.sub("", first[m.end():])
    value = re.sub(r"^(?:一|1)(?:个|份|杯|碗|盒|款)", "", value)
    value = re.sub(r"(?:的)?(?:商品|产品|菜品|饮品)$", "", value)
    prods = [pr for pr in ctx.products if len(value) >= 2 and phrase_in(value, pr.name)
             and (store is None or pr.place_id in store.place_ids)]
    if not prods or any(re.search(r"\d|数量|份数", x) or not (_ZH_LACK.match(x) or _ZH_WITH.match(x)) for x in pieces[1:]):
        return None
    also: list[str] = []
    lacks: list[str] = []
    for piece in pieces[1:]:
        lm = _ZH_LACK.match(piece)
        chosen = _zh_option_of(piece, prods) if lm else None
        if lm and chosen is None:
            tries = ([piece[1:]] if piece.startswith("不加") else []) + [lm.group("x")]  # "不加蛋": "加蛋", else "蛋"
            y = next((t for t in tries if any(phrase_in(t, f) for pr in prods for f in (pr.name, *pr.options))), None)
            if y is None:
                return None
            lacks.append(y)
            continue
        if chosen is None:
            wm = _ZH_WITH.match(piece)
            chosen = _zh_option_of(wm.group("x"), prods) if wm else None
        if chosen is None or _ZH_JUDGEMENT.search(piece):
            return None  # not an option of the product: the other readings', or the judge's
        also.append(chosen)
    line = FeatureSpec(scope="product", phrases=[value], also=also, lacks=lacks)
    return [store, line] if store is not None else [line]


# "include a Jianbing for the daughter, without egg, with sweet bean sauce flavor": one product, then what that line has
_EN_ONE_OF = re.compile(r"^(?:include|contain|have|select|choose|order|get|be)\s+(?:a|an|one|1)\s+(?P<x>.+?)"
                        r"(?:\s+for\s+(?:the|his|her|their|my|your|our|the user's|user's)\s+[a-z' -]{2,30})?$")
_EN_LACK = re.compile(r"^(?:and\s+)?(?:without|no|with no|not with|minus|hold the)\s+(?:any\s+)?(?P<x>[a-z][a-z' -]{1,30})$")
_EN_WITH = re.compile(r"^(?:and\s+)?(?:with\s+(?:the\s+|a\s+|an\s+)?|in\s+)?(?P<x>[a-z][a-z' -]{1,40}?)"
                      r"(?:\s+(?:flavou?r(?:ed)?|taste|option|version|style))?$")


def _en_line_with_options(pred: str, ctx: ItemContext) -> list[Any] | None:
    """"include a X (for <whom>), without Y, with Z flavor": one ordered line that is X (a product
    the catalogue sells), has each option Z named after it (an option of X: chosen, where X offers
    it) and lacks each Y (which X's catalogue spells: "Jianbing with Egg"); the English twin of
    ``_zh_line_with_options``. None when the text is not one product and then such pieces, each
    found for that product."""
    pieces = [x.strip() for x in re.split(r"\s*,\s*", _cut_purpose(pred).strip(" .")) if x.strip()]
    if len(pieces) < 2 or len(pieces) > 5:
        return None
    m = _EN_ONE_OF.match(pieces[0])
    if m is None:
        return None
    value = m.group("x").strip()
    prods = [pr for pr in ctx.products if len(value) >= 3 and phrase_in(value, pr.name)]
    if not prods or _stem(value.split()[-1]) in _GENERIC_GOODS:
        return None
    options = [o for pr in prods for o in pr.options]
    also: list[str] = []
    lacks: list[str] = []
    for piece in pieces[1:]:
        if re.search(r"\d|\b(?:quantity|portion|serving|or|such as|like|from|at)\b", piece):
            return None  # a count, alternatives, an example, a place: the other readings', or the judge's
        lm = _EN_LACK.match(piece)
        if lm:
            y = lm.group("x").strip()
            if not any(phrase_in(y, f) for pr in prods for f in (pr.name, *pr.options)):
                return None  # an absence X's catalogue does not show: nothing to tell apart
            lacks.append(y)
            continue
        wm = _EN_WITH.match(piece)
        z = wm.group("x").strip() if wm else ""
        if not z or not any(phrase_in(z, o) for o in options):
            return None  # not an option of the product
        also.append(z)
    return [FeatureSpec(scope="product", phrases=[value], also=also, lacks=lacks)]
