"""Place facts a catalogue states in a place's tags: how long it has been in business, what a visit
costs a person on average, the ages it serves, and how many people it holds.

The kind
    An item about a place's age ("should have been in business for 3 years or more", "a 10+ year
    established restaurant", "经营10年以上的老店") or its spending per head ("the BBQ restaurant's
    average cost per person should be 150 yuan or less", "人均消费不超过150元"), where the task's
    catalogue states that fact in tags of its places. A place says its age by "In business for N
    years", "N-year-old established shop", "Established for N years", "Opened in 2019" (years to
    the task's now), "N年老店", "开业N年", "成立于2015年"; its spending by "Average N Yuan Per
    Person", "人均N元". A place with no such tag fails the check (nothing shows it holds).

The grammar
    Years: the subject names a place (its head noun: restaurant, shop, ...), the predicate a number
    of years with a bound: "(have been) in business / open / established / operating for (at least /
    more than / over) N years (or more)", "be a N+ year established X", "be an established X with
    over N years of history", "have (more than) N years of history"; Chinese "经营/开业/成立 N年以上",
    "N年以上(的)老店", "超过N年". "more than / over / 超过" is strict; "at least / N+ / or more /
    以上 / 及以上" is inclusive. A negation, an exact number, or "experience" (which may be a staff's)
    is the judge's.
    Spending: the subject (or the predicate) says "average (cost / consumption / spending) per person"
    or "人均", the subject names a place and no goods (a package's price per head is no place fact),
    and the predicate is a price bound as the price reader reads it.

    Ages: "(be) suitable for a 5-year-old (child)", "适合5岁儿童": the place's "A-B Years Old" holds N.
    Capacity: the subject a place (no goods: a set's size is the serving reader's), "accommodate / hold
    / seat (at least) N people", "容纳N人": the place's "Maximum Capacity M People" is at least N.

Examples
    "The healing shop should have been in business for 3 years or more"     years >= 3
    "The restaurant ordered should be a 10+ year established restaurant"    years >= 10
    "The BBQ restaurant's average cost per person should be 150 yuan or less"   average per person <= 150
    "餐厅人均消费应不超过150元"                                                 average per person <= 150
"""

from __future__ import annotations

import re
from typing import Any, Literal

from .clauses import _head_class
from .price import _price_of  # the price reader's bounds ("150 yuan or less", "不超过150元")
from .text import _compare, _is_zh, _num, _Unclear
from .world import ItemContext, PlaceInfo, _Spec


class PlaceFactSpec(_Spec):
    """A fact the place's tags state compares with ``value`` (``op``): ``years`` in business (to
    ``year``, the task's year, where a tag gives the year it opened), ``avg_price``, the average
    spending per person in yuan, ``capacity``, the most people it holds, or ``age``: the ages it
    serves ("3-12 Years Old"), which must hold ``value`` (``op="in"``)."""

    kind: Literal["place_fact"] = "place_fact"
    fact: Literal["years", "avg_price", "age", "capacity"]
    op: Literal[">=", ">", "<=", "<", "in"]  # "in": ``value`` lies in the range the tags state (an age)
    value: float
    year: int = 0


# ----- what a place's tags state --------------------------------------------------------------------
_YEARS_TAG = (
    re.compile(r"^(?:in business|established|operating|open(?:ed)?|running) (?:for )?(?:over |more than )?(\d+(?:\.\d+)?)\+? years?$"),
    re.compile(r"^(\d+(?:\.\d+)?)\+?[- ]years?[- ]old(?: established)?(?: shop| store| restaurant| brand| business)?$"),
    re.compile(r"^(\d+(?:\.\d+)?)\+?[- ]years? (?:established|old)(?: shop| store| restaurant| brand| business)?$"),
    re.compile(r"^(?:经营|开业|成立|营业)(\d+(?:\.\d+)?)(?:余)?年(?:以上)?(?:老店)?$"),
    re.compile(r"^(\d+(?:\.\d+)?)(?:余)?年(?:以上)?老(?:店|字号|品牌)$"),
)
_OPENED_TAG = re.compile(r"^(?:opened|established|founded|since) (?:in )?((?:19|20)\d\d)$|^(?:成立于|开业于|创立于|始于)((?:19|20)\d\d)年?$")
_AVG_TAG = re.compile(r"^(?:average|avg\.?) (?:¥|￥)?(\d+(?:\.\d+)?) ?(?:yuan|rmb|cny)? ?(?:per person|per capita|/person)$"
                      r"|^人均(?:消费)?[¥￥]?(\d+(?:\.\d+)?)(?:元)?$")


def place_years(place: PlaceInfo, year: int) -> float | None:
    """How many years the place's tags say it has been in business (the largest said), or None."""
    found: list[float] = []
    for tag in place.tags:
        t = tag.strip().casefold()
        for rx in _YEARS_TAG:
            m = rx.match(t)
            if m:
                found.append(float(m.group(1)))
        m = _OPENED_TAG.match(t)
        if m and year:
            found.append(float(year - int(m.group(1) or m.group(2))))
    return max(found) if found else None


def _tag_number(place: PlaceInfo, rx: re.Pattern[str]) -> float | None:
    """The number the first of the place's tags that ``rx`` matches states, or None."""
    for tag in place.tags:
        m = rx.match(tag.strip().casefold())
        if m:
            return float(next(g for g in m.groups() if g))
    return None


def place_avg_price(place: PlaceInfo) -> float | None:
    """The average spending per person the place's tags state, or None."""
    return _tag_number(place, _AVG_TAG)


_AGES_TAG = re.compile(r"^(?:ages? |for ages )?(\d{1,2})\s*(?:-|–|~|to)\s*(\d{1,2})\s*(?:years? old|years|yrs?)$|^(?:适合)?(\d{1,2})\s*(?:-|–|~|至|到)"
                       r"\s*(\d{1,2})岁(?:儿童|孩子|小孩)?$")
_CAPACITY_TAG = re.compile(r"^(?:maximum |max\.? )?capacity (?:of )?(\d{1,4}) (?:people|persons|guests)$|^(?:最多)?(?:可)?容纳(\d{1,4})人$")


def place_ages(place: PlaceInfo) -> tuple[float, float] | None:
    """The ages the place's tags say it serves ("3-12 Years Old", "3-12岁"), or None."""
    for tag in place.tags:
        m = _AGES_TAG.match(tag.strip().casefold())
        if m:
            lo, hi = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return float(lo), float(hi)
    return None


def place_capacity(place: PlaceInfo) -> float | None:
    """The most people the place's tags say it holds ("Maximum Capacity 16 People"), or None."""
    return _tag_number(place, _CAPACITY_TAG)


def _fact_of(place: PlaceInfo, fact: str, year: int) -> Any:
    if fact == "years":
        return place_years(place, year)
    if fact == "avg_price":
        return place_avg_price(place)
    if fact == "age":
        return place_ages(place)
    return place_capacity(place)


def place_fact_holds(spec: PlaceFactSpec, place: PlaceInfo) -> bool:
    x = _fact_of(place, spec.fact, spec.year)
    if x is None:
        return False
    if spec.op == "in":
        return x[0] <= spec.value <= x[1]
    return _compare(x, spec.op, spec.value)


def describe_place_fact(spec: PlaceFactSpec) -> str:
    if spec.fact == "age":
        return f"the ages the place serves include {spec.value:g}"
    what = {"years": "years in business", "avg_price": "average spending per person (yuan)",
            "capacity": "capacity (people)"}[spec.fact]
    return f"the place's {what} {spec.op} {spec.value:g}"


def _stated(ctx: ItemContext, fact: str) -> bool:
    """Whether some place of the task states the fact in its tags (else an item about it is the judge's)."""
    year = ctx.now.year
    return any(_fact_of(p, fact, year) is not None for p in ctx.places)


# ----- the reader -------------------------------------------------------------------------------------
_N = r"(?P<n>\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|[一二两三四五六七八九十]{1,3})"
_MORE_EN = r"(?P<more>more than|over|above|longer than)"
_LEAST_EN = r"(?P<least>at least|no less than|not less than|a minimum of|minimum)"
_YEARS_EN = (
    # "have been in business for (at least / more than) 3 years (or more)"
    re.compile(rf"^(?:have |has )?(?:been )?(?:in business|open|opened|established|operating|running|around)\s+(?:for\s+)?"
               rf"(?:{_MORE_EN}\s+|{_LEAST_EN}\s+)?{_N}(?P<plus>\+)?\s+years?(?P<ormore>\s+or (?:more|longer|above))?$"),
    # "be a 10+ year established restaurant", "be a 10-year-old established shop"
    re.compile(rf"^(?:be )?(?:an? )?(?:{_MORE_EN}\s+|{_LEAST_EN}\s+)?{_N}(?P<plus>\+)?[- ]years?(?:[- ]old)?\s+"
               r"(?:established|old|time-honou?red)\b.*$"),
    # "be an established restaurant with over ten years of history", "have more than 5 years of history"
    re.compile(rf"^(?:be )?(?:an? )?(?:(?:established|old|time-honou?red)\s+\S+(?:\s+\S+)?\s+with\s+|have\s+|has\s+)"
               rf"(?:{_MORE_EN}\s+|{_LEAST_EN}\s+)?{_N}(?P<plus>\+)?\s+years?(?P<ormore>\s+or more)?\s+(?:of\s+)?(?:history|operation|"
               r"business)$"),
    # "have a history of over 10 years", "have a track record of at least 5 years"
    re.compile(rf"^(?:have |has )(?:an? )?(?:history|track record|heritage) of\s+(?:{_MORE_EN}\s+|{_LEAST_EN}\s+)?{_N}"
               rf"(?P<plus>\+)?\s+years?(?P<ormore>\s+or more)?$"),
)
_YEARS_ZH = re.compile(rf"^(?:为|是)?(?:一家)?(?:经营|开业|成立|营业|开店)?(?:时间)?(?:已)?(?:(?P<more>超过|多于|大于)|(?P<least>至少|不少于|不低于))?"
                       rf"{_N}年(?:(?P<ormore>以上|及以上|或以上)|(?P<plus>\+))?(?:的)?(?:老店|老字号|历史)?(?:的)?(?:商家|店铺|餐厅|门店)?$")
_AVG_WORDS = re.compile(r"\b(?:average|per person|per capita|per head)\b|人均")
_GOODS = re.compile(r"\b(?:package|set|meal|menu|combo|voucher|ticket|course|class|item|product|dish|order|booking|reservation)s?\b"
                    r"|套餐|商品|菜品|产品|订单|门票|券")


def _place_fact_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> PlaceFactSpec | None:
    """The place-fact item (see the module docstring); None when the item is none."""
    if not ctx.places:
        return None
    text = f"{subject} {pred}"
    zh = _is_zh(text)
    p = pred.strip(" .。")
    if re.search(r"\byears?\b|年", p) and not re.search(r"\bexperience\b|经验", text):
        spec = _years(subject, neg, p, zh, ctx)
        if spec is not None:
            return spec
    if _AVG_WORDS.search(text) and re.search(r"\d\s*(?:yuan|rmb|cny|元|块)|[¥￥]\s*\d", p):
        return _avg_price(subject, neg, p, zh, ctx)
    m = _AGE_EN.match(p) if not zh else _AGE_ZH.match(p)
    if m is not None and _stated(ctx, "age"):  # "suitable for a 5-year-old child": the ages the place serves
        if neg:
            raise _Unclear
        return PlaceFactSpec(fact="age", op="in", value=_num(m.group("n") or m.groupdict().get("n2")))
    m = _CAPACITY_EN.match(p) if not zh else _CAPACITY_ZH.match(p)
    if m is not None and _head_class(subject) == "place" and not _GOODS.search(subject) and _stated(ctx, "capacity"):
        if neg:
            raise _Unclear  # "should hold 10 people": the place's own size (a set's is the serving reader's)
        return PlaceFactSpec(fact="capacity", op=">=", value=_num(m.group("n")))
    return None


_AGE_EN = re.compile(r"^(?:be )?(?:suitable|appropriate|fit|designed|meant|good) for (?:an? |my |the user's )?(?:(?P<n>\d{1,2})[- ]years?"
                     r"[- ]old(?: (?:child|kid|boy|girl|son|daughter|children|kids))?|(?:a )?(?:child|children|kids?) (?:aged|of age) "
                     r"(?P<n2>\d{1,2}))$")
_AGE_ZH = re.compile(r"^(?:为|是)?(?:适合|适用于|适宜)(?P<n>\d{1,2})岁(?:的)?(?:儿童|孩子|小孩|宝宝|男孩|女孩)?(?:游玩|使用|参加|参与)?$")
_CAPACITY_EN = re.compile(r"^(?:be able to )?(?:accommodate|hold|fit|seat|host)s? (?:at least |up to )?(?P<n>\d{1,4}) "
                          r"(?:people|persons|guests)$")
_CAPACITY_ZH = re.compile(r"^(?:能|可以|可)?(?:容纳|坐下|坐得下)(?:至少)?(?P<n>\d{1,4})人(?:以上)?$")


def _years(subject: str, neg: bool, p: str, zh: bool, ctx: ItemContext) -> PlaceFactSpec | None:
    if _head_class(subject) != "place" and not (zh and re.search(r"老店|老字号|商家|店铺|餐厅|门店", p)):
        return None
    m = _YEARS_ZH.match(p) if zh else next((x for x in (rx.match(p) for rx in _YEARS_EN) if x), None)
    if m is None:
        return None
    g = m.groupdict()
    if not (g.get("more") or g.get("least") or g.get("plus") or g.get("ormore")):
        return None  # "in business for 3 years": exactly, or at least? the judge's
    if neg or not _stated(ctx, "years"):
        raise _Unclear
    return PlaceFactSpec(fact="years", op=">" if g.get("more") else ">=", value=_num(m.group("n")), year=ctx.now.year)


def _avg_price(subject: str, neg: bool, p: str, zh: bool, ctx: ItemContext) -> PlaceFactSpec | None:
    bare = re.sub(r"(?:'s)?\s*(?:average\s+)?(?:cost|consumption|spending|price|spend)?\s*(?:per (?:person|capita|head))?$", "",
                  subject).strip() if not zh else re.sub(r"(?:的)?人均(?:消费|花费|价格)?$", "", subject)
    bare = re.sub(r"^(?:the )?(?:average )?(?:cost|consumption|spending|price)(?: per (?:person|capita|head))? (?:at|of|in) ", "",
                  bare).strip()
    if not bare or _GOODS.search(bare) or (_head_class(bare) != "place" and not (zh and bare.endswith(("餐厅", "店", "商家", "馆")))):
        return None  # "the ordered package's average per person": a price per head of goods, no place fact
    if not _stated(ctx, "avg_price"):
        raise _Unclear
    bound = _price_of("the total price", neg, p, ctx) if not zh else _price_of("总价", neg, p, ctx)
    if bound is None:
        raise _Unclear
    if bound.low is not None and bound.high is not None:
        raise _Unclear  # a range or "around": two facts, no single bound
    if bound.high is not None:
        return PlaceFactSpec(fact="avg_price", op="<" if bound.high_strict else "<=", value=bound.high)
    if bound.low is not None:
        return PlaceFactSpec(fact="avg_price", op=">" if bound.low_strict else ">=", value=bound.low)
    raise _Unclear
