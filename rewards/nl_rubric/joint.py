"""Items about several orders at once: two goods from one place, a total over several orders.

The kind
    ``same_place``: goods the item names ("the manicure set and the eyelash extension set") are
    ordered from one place, whichever orders hold them; ``total``: what the orders at the places the
    item names ("bathhouse, Japanese restaurant and billiards orders") cost together lies in a bound.
    Both read every order the episode made (not cancelled), not one gold record: the item names the
    orders by their content, and an agent may split or merge them.

The grammar
    same place: the subject lists two or more goods joined by "and" ("both X and Y (in the ... order)"),
    the predicate says one place ("(should) be / come (ordered / purchased) from the same store /
    vendor / merchant / <noun>", "(应)来自同一家店 / 商家"); each good must be one the catalogue sells
    (``values._resolve_phrase``), and where "and" also sits inside a good's name ("facial spot
    removal and anti-wrinkle package and facial lifting and firming package") only a split whose
    every part the catalogue sells reads (one such split, or the judge's).
    total: the subject is "the total cost / price / spending / expenditure (of / for / at) (both)
    <places or orders>", listed with commas, "and", "plus"; each piece, without "order(s)" and its
    unit ("package order"), must name places of the task (a category, a name, a tag: "bathhouse",
    "Japanese restaurant", "training institution"); the predicate is one price comparison
    (``price._price_of``: "not exceed 600 yuan", "within 300 yuan (inclusive)"). Anything said after
    the bound ("..., with the BBQ item priced at 172 yuan") leaves the item to the judge.

Examples
    "The manicure set and eyelash extension set should come from the same nail salon"
    "Both the salad combo and the fried chicken combo need to be ordered from the same store"
    "The total cost of bathhouse, Japanese restaurant, and billiards orders should not exceed 600 yuan"
    "The total price of training institution course orders should be within 200 yuan (including 200 yuan)"

The spec: ``JointSpec`` (what, members: each member's alternative phrases, and for ``total`` the
bounds of ``PriceSpec``). How it is checked (``joint_holds``, over the episode's new active orders):
``same_place``: every member has a line in some order, and one place sells a line of each;
``total``: every member has an order, and the orders of all members (each once) add up to a total
within the bounds.
"""

from __future__ import annotations

import re
from typing import Literal

from .price import PriceSpec, _price_of, _price_ok
from .text import _is_zh, _Unclear
from .values import _resolve_phrase
from .world import ItemContext, PlaceInfo, RecordFacts, _found, _line_has, _place_fields, _Spec, fields_have


class JointSpec(_Spec):
    """Several orders at once: ``same_place`` (goods of each member sold by one place) or ``total``
    (the orders at the members' places cost, together, within ``low``..``high``)."""

    kind: Literal["joint"] = "joint"
    what: Literal["same_place", "total"]
    members: list[list[str]]
    low: float | None = None
    high: float | None = None
    low_strict: bool = False
    high_strict: bool = False


def _place_has(place: PlaceInfo | None, phrases: list[str]) -> bool:
    return place is not None and fields_have(_place_fields(place), phrases)


def joint_holds(spec: JointSpec, records: list[tuple[RecordFacts, PlaceInfo | None]]) -> bool:
    """Whether the episode's orders (each with its place) meet the item."""
    if not spec.members:
        return False
    if spec.what == "same_place":
        sets = [{r.place_id for r, _p in records for x in r.lines if _line_has(x, m)} for m in spec.members]
        return all(sets) and bool(set.intersection(*sets))
    chosen: dict[str, RecordFacts] = {}
    for m in spec.members:
        hit = [r for r, p in records if r.lines and _place_has(p, m)]
        if not hit:
            return False
        chosen.update((r.record_id, r) for r in hit)
    total = sum(r.total if r.total is not None else sum(x.price * x.quantity for x in r.lines) for r in chosen.values())
    bound = PriceSpec(scope="total", low=spec.low, high=spec.high, low_strict=spec.low_strict, high_strict=spec.high_strict)
    return _price_ok(bound, total)


def describe_joint(spec: JointSpec) -> str:
    names = " / ".join(" or ".join(map(repr, m)) for m in spec.members)
    if spec.what == "same_place":
        return f"one place sells each of {names}"
    lo = "" if spec.low is None else f"{'>' if spec.low_strict else '>='} {spec.low:g}"
    hi = "" if spec.high is None else f"{'<' if spec.high_strict else '<='} {spec.high:g}"
    return f"the orders at {names} total {' and '.join(x for x in (lo, hi) if x)} yuan"


# ----- the grammar ----------------------------------------------------------------------------------
_SAME_EN = re.compile(r"^(?:all |both )?(?:be |come |all be |both be )?(?:ordered |purchased |bought |booked |placed )?"
                      r"(?:from|at|in) (?:the )?same (?P<head>[a-z][a-z' -]{1,40})$")
_SAME_ZH = re.compile(r"^(?:都|均|全部)?(?:应该|应当|应|需要|需|要|必须)?(?:来自|出自|在|从|购自|属于)(?:同一|同一个|同一家|同一间|同家)"
                      r"(?P<head>[\u4e00-\u9fff]{1,8})(?:购买|下单|订购)?$")
_IN_ORDER_EN = re.compile(r"\s+(?:in|of|from) (?:the |this |that )?[a-z0-9' -]{2,60}? orders?$")
_TOTAL_SUBJECT_EN = re.compile(r"^(?:the )?total (?:cost|price|spending|expenditure|amount|expense|consumption)s?"
                               r"(?: (?:of|for|at|on|across))? (?:both )?(?:the )?(?P<x>.+)$")
_ORDER_TAIL_EN = re.compile(r"(?:\s+(?:course|package|product|set|ticket|voucher|service|meal|booking|reservation))?"
                            r"\s+(?:orders?|bookings?|reservations?)$")
_LIST_SPLIT_EN = re.compile(r"\s*,\s*(?:and |plus )?|\s+and\s+|\s+plus\s+")


def _product_member(x: str, ctx: ItemContext) -> list[str]:
    x = re.sub(r"^(?:the |a |an |both )", "", x.strip(" ,'\""))
    if not x:
        raise _Unclear
    scope, alts = _resolve_phrase(x, _is_zh(x), "product", "", ctx)
    if scope != "product":
        raise _Unclear
    return alts


def _splits(subject: str) -> list[list[str]]:
    """Every way to cut ``subject`` at its "and"s / commas / "和"s into two parts or more."""
    zh = _is_zh(subject)
    seps = [m for m in re.finditer(r"和|与|以及|及|、" if zh else r",\s*(?:and\s+)?|\s+and\s+", subject)]
    out: list[list[str]] = []
    n = len(seps)
    if n == 0 or n > 6:
        return out
    for mask in range(1, 1 << n):
        parts, start = [], 0
        for i, m in enumerate(seps):
            if mask >> i & 1:
                parts.append(subject[start:m.start()])
                start = m.end()
        parts.append(subject[start:])
        out.append([p.strip() for p in parts])
    return out


def _same_place_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> JointSpec | None:
    zh = _is_zh(subject + pred)
    m = (_SAME_ZH if zh else _SAME_EN).match(pred.strip(" ,，.。"))
    if m is None:
        return None
    if neg:
        raise _Unclear
    s = subject.strip()
    if not zh:
        s = _IN_ORDER_EN.sub("", re.sub(r"^(?:both |the )+", "", s))
    readings: list[list[list[str]]] = []
    for parts in _splits(s):
        try:
            readings.append([_product_member(p, ctx) for p in parts])
        except _Unclear:
            continue
    if len(readings) != 1:
        raise _Unclear  # no split, or several, whose every part the catalogue sells
    return JointSpec(what="same_place", members=readings[0])


def _place_member(x: str, ctx: ItemContext) -> list[str]:
    x = re.sub(r"^(?:the |a |an |both )", "", x.strip(" ,'\""))
    x = _ORDER_TAIL_EN.sub("", x).strip()
    if len(x) >= 3 and not _found(x, ctx, "place"):
        # "the Korean self-service BBQ restaurant": the kind of place, which its fields spell without the noun
        bare = re.sub(r"\s+(?:restaurant|shop|store|merchant|place|venue)s?$", "", x)
        x = bare if bare != x and len(bare) >= 3 and _found(bare, ctx, "place") else x
    if len(x) < 3 or not _found(x, ctx, "place"):
        raise _Unclear
    return [x]


def _total_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> JointSpec | None:
    if _is_zh(subject + pred):
        return None
    m = _TOTAL_SUBJECT_EN.match(subject.strip())
    if m is None:
        return None
    body = m.group("x").strip()
    pieces = [p for p in _LIST_SPLIT_EN.split(body) if p.strip()]
    several = len(pieces) > 1 or re.search(r"\borders\b", body) is not None
    if not several:
        return None  # one order's total: the price reader's
    try:
        members = [_place_member(p, ctx) for p in pieces]
    except _Unclear:
        return None  # "the Tomato and Egg Noodles order": an "and" in a name, one order (the price reader's)
    bound = _price_of("the total price", neg, pred, ctx)
    if bound is None or bound.scope != "total":
        raise _Unclear
    return JointSpec(what="total", members=members, low=bound.low, high=bound.high, low_strict=bound.low_strict,
                     high_strict=bound.high_strict)


def _joint_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> JointSpec | None:
    """An item about several orders at once (see the module docstring); None when it is not one."""
    if not (ctx.places or ctx.products):
        return None
    return _same_place_item(subject, neg, pred, ctx) or _total_item(subject, neg, pred, ctx)
