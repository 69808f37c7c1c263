"""Quantity items: a party size, or how many items an order holds.

The kind
    ``people``: how many a booking or reservation is for; ``items``: how many items an order holds,
    in all or of one product. Both compare exactly (``op`` "=="), but for "at least" readings
    (different products, a listed product without its count: ">=").

The grammar (each reads the subject and the predicate around the modal)
    party size: the subject names the count ("the number of people / guests / diners", "party size",
    "headcount", "人数", "几位") and the predicate is a number ("(be) (for) 4 (people)", "(为)3(人/位)");
    or the subject is a booking / reservation / appointment (not a product of one) and the predicate
    says whom it is for ("(be made) for 6 people", "(为)6人").
    items: the subject names a quantity ("the quantity / number / count of <product>", "the total
    quantity / item count", "...(商品)(总)数量 / 份数 / 件数 / 杯数") and the predicate is a number with
    an optional unit ("(be) (exactly) 3 (portions / cups / bowls) (in total)", "(为)3份"); or a
    product subject "includes / contains / has N <unit>". A product named in the subject must be
    in the catalogue (``_product_phrase``; the order's goods in general name none). A negated count,
    or a count that is no number ("several"), leaves the item to the judge. A product and its count
    said together in Chinese ("应包含X，数量为2份") are read with the product (``product.py``); in English
    ("include X, quantity (of) 2", "include X with a quantity of 2 cups") and as a count before the
    product ("include 2 X", "包含2份X") here (``_named_count``): X must be a product the catalogue sells
    (not only an option: "一杯去冰的饮品" is the product reader's), one product ("two different X", "各",
    "each" leave it to the judge; "a single person package" is a serving size). "The quantity of <place>
    products" counts the order's goods. A total said with more: "(总数应为)3件，包含2个A和1个B" (each
    product's count too; they must add up), "...2个，都来自<store>", "a total of 2 items, all from
    <store>" (the store too: ``place._store_item``). "N identical X / N servings of the same X / N个相同的X"
    (``same``) asks that one line holds all N (one product, one choice); X may be a class the catalogue
    does not spell ("3 identical bread items": one word, then every line of the order counts).
    Different products (``_distinct_count``): "include three different dishes", "包含三个不同的菜品": at
    least N product ids (``distinct``; "exactly / only" makes it N); the goods must be the order's in
    general (a class, "two different teas", or anything more leaves it to the judge). A count with its
    list (``_listed_count``): "include two items: A and B", "contain 3 items in total, including 2 A
    and 1 B", "包含两样商品：A和B": the total, and each listed product (its count, or at least one);
    the counts must add up, a list of bare names must be as long as the total. A product named with
    its unit ("the fried chicken combo") is also found without it ("fried chicken"), where words that
    say what it is remain (``world._UNIT_TAIL_EN``).

Examples
    "The number of guests for the dinner reservation should be 6"
    "The karaoke booking should be for five people"
    "The quantity of Mango Pudding in the order must be 2"
    "The juice order should include 4 cups"
    "包间预订人数应为8人"
    "早餐订单中的商品数量应为3份"
    "The order for the friend needs to include three different dishes"      (distinct, >= 3)
    "The breakfast order should include two items: soup dumplings and tea egg"

The spec: ``CountSpec`` (what, op, value; the product ``phrase`` for items). How it is checked
(``count_holds``): ``people``: the record's customer count; ``items``: the sum of the quantities of
the record's lines (those that have the phrase in their name, tags or chosen options, when given;
no such line fails; with ``same``, exactly one such line; with ``distinct``, the number of their
product ids).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from .clauses import _FOR_WHOM_EN, _cut_purpose, _head_class
from .lexicon import concept_value
from .place import _store_item
from .text import _NUM_RE, _compare, _is_zh, _num, _stem, _Unclear
from .world import _GENERIC_GOODS, _UNIT_TAIL_EN, ItemContext, RecordFacts, _content_left, _found, _line_has, _Spec


class CountSpec(_Spec):
    """``people``: a booking's or reservation's party size; ``items``: the quantities of the order's
    lines (those matching ``phrase`` when given) add up to ``value`` (``op``); ``pieces``: so do their
    pieces, each unit counting the pieces its name or tags state ("Two pieces", "(7 pieces)", "3个装"),
    else one."""

    kind: Literal["count"] = "count"
    what: Literal["people", "items", "servings", "pieces"]
    op: Literal["==", ">=", "<="] = "=="
    value: int
    phrase: str = ""
    same: bool = False  # "3 identical bread items": one line (one product, one choice) holds them all
    distinct: bool = False  # "three different dishes": the count is of different products, not of items


def count_holds(spec: CountSpec, record: RecordFacts) -> bool:
    if spec.what == "people":
        return record.customer_count is not None and _compare(record.customer_count, spec.op, spec.value)
    if spec.what == "servings":  # "enough for two people": a set for two, or two single meals
        return bool(record.lines) and _compare(sum(line_serves(x) * x.quantity for x in record.lines), spec.op, spec.value)
    lines = [x for x in record.lines if not spec.phrase or _line_has(x, [spec.phrase])]
    if spec.same and len(lines) != 1:
        return False
    if spec.distinct:  # different products: their ids, whatever each line's quantity
        return bool(lines) and _compare(len({x.product_id for x in lines}), spec.op, spec.value)
    if spec.what == "pieces":
        return bool(lines) and _compare(sum(x.quantity * line_pieces(x) for x in lines), spec.op, spec.value)
    return bool(lines) and _compare(sum(x.quantity for x in lines), spec.op, spec.value)


# how many pieces one unit of a product holds, as its name or tags state ("Two pieces", "(7 pieces)", "3 pcs",
# "box of three", "3个装", "（6只）", a tag "两个", "一盒三个")
_PIECES_EN = re.compile(rf"\b(?P<n>{_NUM_RE[1:-1]})[- ](?:pieces?|pcs?)\b|\b(?:box|pack|set|plate) of (?P<m>{_NUM_RE[1:-1]})\b")
_ZH_PIECE = r"(?:个|只|块|片|颗|粒|枚)"
_ZH_N = r"\d+|[一二两三四五六七八九十]{1,2}"
_PIECES_ZH = re.compile(rf"(?P<n>{_ZH_N}){_ZH_PIECE}装|[（(](?P<m>{_ZH_N}){_ZH_PIECE}[)）]|^(?P<k>{_ZH_N}){_ZH_PIECE}$"
                        rf"|(?:一|每)(?:盒|份|袋|包|碟|盘)(?P<j>{_ZH_N}){_ZH_PIECE}")


def line_pieces(line: Any) -> int:
    """The pieces one unit of an ordered line holds, as its name or tags state; 1 when they state none or
    disagree."""
    said: set[int] = set()
    for field in (getattr(line, "name", ""), *getattr(line, "tags", ())):
        t = field.casefold()
        for m in (_PIECES_ZH if _is_zh(t) else _PIECES_EN).finditer(t):
            try:
                said.add(int(_num(next(g for g in m.groups() if g))))
            except _Unclear:
                continue
    return said.pop() if len(said) == 1 and 0 < next(iter(said)) <= 100 else 1


# ----- how many people an ordered line serves -------------------------------------------------------
_SERVES_EN = re.compile(rf"\bfor (?P<n>{_NUM_RE[1:-1]})(?:\s*(?:-|to|~)\s*(?P<hi>\d+|[a-z]+))?\b(?!\s*(?:hours?|h|minutes?|mins?|days?|"
                        rf"nights?|years?|months?|weeks?|times?|sessions?|classes|lessons?|visits?|uses?)\b)"
                        rf"|\b(?P<n2>{_NUM_RE[1:-1]})(?:\s*(?:-|to|~)\s*(?P<hi2>\d+|[a-z]+))?[- ](?:person|people|persons|pax)\b")
_PEOPLE_PARTS_EN = re.compile(rf"\b({_NUM_RE[1:-1]})\s+(?:adults?|children|child|kids?|seniors?)\b")
_SERVES_ZH = re.compile(r"(?P<n>\d+|[一二两三四五六七八九十]{1,2})(?:\s*[-~至到]\s*(?P<hi>\d+|[一二两三四五六七八九十]{1,2}))?人(?!民)")
_PAIR_WORDS = re.compile(r"\b(?:double|couples?|two-person|twin)\b|双人|情侣")


def line_serves(line: Any) -> int:
    """How many people one unit of an ordered line serves, as its name and tags say ("Set for Two",
    "3-Person Meal", "Suitable for 5-6 People": 6, "2 adults 1 child": 3, "双人套餐", "4人餐"); 1 when
    they say none. The most any of its fields says counts (a range counts its upper end)."""
    best = 0
    for field in (getattr(line, "name", ""), *getattr(line, "tags", ())):
        t = field.casefold()
        if _is_zh(t):
            for m in _SERVES_ZH.finditer(t):
                best = max(best, int(_num(m.group("hi") or m.group("n"))))
            if _PAIR_WORDS.search(t):
                best = max(best, 2)
            continue
        parts = _PEOPLE_PARTS_EN.findall(t)
        if parts:
            best = max(best, sum(int(_num(x)) for x in parts))
        for m in _SERVES_EN.finditer(t):
            hi = m.group("hi") or m.group("hi2")
            n = m.group("n") or m.group("n2")
            try:
                best = max(best, int(_num(hi if hi else n)))
            except _Unclear:
                continue
        if _PAIR_WORDS.search(t):
            best = max(best, 2)
    return max(best, 1)


# "should be enough for two people", "the portion should be suitable for 4 adults and 2 children", "份量应够3人食用"
_ENOUGH_EN = re.compile(r"^(?:be )?(?:(?:large |big )?enough|sufficient|adequate)(?: in (?:portion|quantity|size))? "
                        r"(?:for|to (?:feed|serve)) (?P<who>.+?)(?: to (?:share|eat))?$|^(?:feed|serve) (?P<who2>.+)$")
_SUITED_EN = re.compile(r"^(?:be )?(?:suitable|appropriate|sized|portioned) for (?P<who>.+)$")
_PORTION_SUBJECT = re.compile(r"\b(?:portions?|servings?|quantity|amount|size|portion size)\b|份量|分量|量")
_WHO_EN = re.compile(rf"^(?:a total of |the )?(?:{_NUM_RE[1:-1]}) (?:people|persons?|adults?|diners|guests|pax)"
                     rf"(?: and (?:{_NUM_RE[1:-1]}) (?:children|child|kids?))?$")
_ENOUGH_ZH = re.compile(r"^(?:应|要|需要|需)?(?:能够|能|可以|可)?(?:足够|够|满足|适合)(?P<n>\d+|[一二两三四五六七八九十]{1,2})(?:个)?人"
                        r"(?:食用|吃|用餐|享用|分享)?(?:的)?(?:需求|需要)?$")


def _servings_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> CountSpec | None:
    """A lower bound on the people an order serves (``what="servings"``, ``>=``): the lines' servings
    (``line_serves``) times their quantities add up to at least the number said; None when the item
    says no such bound."""
    p = _cut_purpose(pred).strip(" ,，.")
    if _is_zh(subject + p):
        m = _ENOUGH_ZH.match(pred.strip(" ,，.。")) or _ENOUGH_ZH.match(p)  # "能满足5人食用": not a purpose
        if m is None or not (_PORTION_SUBJECT.search(subject) or p.lstrip("应要需").startswith(("足够", "够"))):
            return None
        n = int(_num(m.group("n")))
    else:
        m = _ENOUGH_EN.match(p)
        if m is None:
            m = _SUITED_EN.match(p) if _PORTION_SUBJECT.search(subject) else None
        if m is None:
            return None
        who = _WHO_EN.match((m.group("who") or m.groupdict().get("who2") or "").strip())
        if who is None and m.groupdict().get("who2"):
            return None  # "must serve Jiangsu cuisine": what a place serves, not how many
        if who is None:
            raise _Unclear  # "suitable for a 5-year-old child", "enough for everyone": not a number of people
        n = sum(int(_num(x)) for x in re.findall(_NUM_RE, who.group(0)))
    if neg or not 1 <= n <= 50:
        raise _Unclear
    return CountSpec(what="servings", op=">=", value=n)


# ----- party sizes ----------------------------------------------------------------------------------
_PEOPLE_WORDS = r"(?:people|persons?|guests?|diners?|adults?|participants?|customers?|pax)"  # "1 customer", "2 guests"
_VISIT_WORDS = re.compile(r"\b(?:reservations?|bookings?|appointments?|reserved|booked|appointed|visit)\b|预约|预订|预定|订座|订位")


_BOOKED_FOR = re.compile(rf"(?:be )?(?:reserved|booked|appointed)(?: for)? (?:just |only )?{_NUM_RE} {_PEOPLE_WORDS}(?: only| alone)?")


def _people_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> CountSpec | None:
    p = re.sub(r"\s*[(（][^)）\d]*[)）]$", "", _cut_purpose(pred)).strip()
    zh = _is_zh(subject + p)
    if zh:
        if re.search(r"人数|几位|几人", subject):
            m = re.fullmatch(rf"(?:为|是|应为)?{_NUM_RE}(?:人|位|名|个人)?", p)
        elif _VISIT_WORDS.search(subject):
            m = re.fullmatch(rf"(?:为|是)?{_NUM_RE}(?:人|位|名|个人)", p)
            if m is None:
                return None  # "预约的按摩店应为X": not a party size
        else:
            return None
    elif re.search(rf"\bnumber of {_PEOPLE_WORDS}|\bparty size\b|\bheadcount\b|\bgroup size\b|\bnumber of (?:diners|guests)\b",
                   subject):
        m = re.fullmatch(rf"(?:be )?(?:for )?{_NUM_RE}(?: {_PEOPLE_WORDS})?", p)
    elif _VISIT_WORDS.search(subject) and _head_class(subject) != "product":
        m = re.fullmatch(rf"(?:be )?(?:made )?for (?:just |only )?(?:a (?:party|group|table) of )?{_NUM_RE}(?: {_PEOPLE_WORDS})?"
                         r"(?: only| alone)?", p) or \
            re.fullmatch(rf"(?:include|includes|cover|covers|accommodate|accommodates|seat|seats|hold|holds|have|has)"
                         rf" (?:just |only |exactly )?{_NUM_RE} {_PEOPLE_WORDS}", p)  # "has to be for two", "seat 2 guests"
        if m is None:
            return None  # "the reserved restaurant should be X": not a party size
    elif (booked := _BOOKED_FOR.fullmatch(p)) is not None:
        m = booked  # "the workshop should be reserved for 2 people": a party, whatever the subject's words name
    else:
        return None
    if m is None:
        raise _Unclear
    if neg:
        raise _Unclear
    return CountSpec(what="people", value=int(_num(m.group(1))))


# ----- quantities of items --------------------------------------------------------------------------
_COUNT_UNITS = (r"(?:portions?|items?|products?|servings?|cups?|pieces?|sets?|packages?|bowls?|boxes?|units?|copies|orders?|bottles?|"
                r"杯|份|个|件|碗|盒|串|只|斤|瓶|袋|块|片|颗|粒|枚)")


def _product_phrase(x: str, ctx: ItemContext) -> str:
    """A product phrase as the catalogue knows it ("" for the order's goods in general)."""
    x = _FOR_WHOM_EN.sub("", re.sub(r"^(?:the |a |an |all )+", "", x.strip(" ,，的")))
    x = re.sub(r"\s+(?:ordered|purchased|bought|selected|chosen)$|^(?:ordered|purchased|bought|selected|chosen)\s+", "", x)
    if not x or _stem(x.split()[-1]) in _GENERIC_GOODS and len(x.split()) == 1 or x in _GENERIC_GOODS:
        return ""
    if _stem(x.split()[-1]) in _GENERIC_GOODS and _head_class(" ".join(x.split()[:-1])) == "place":
        return ""  # "the sports venue products": the goods of the order, named by their place
    bare = re.sub(r"\s+(?:items?|products?|dishes|goods|orders?)$", "", x)
    unit = _UNIT_TAIL_EN.search(bare)  # tried last: "the fried chicken combo" -> "fried chicken" (as product.py reads it)
    for cand in (x, bare, bare[:unit.start()] if unit and _content_left(bare[:unit.start()]) else ""):
        if cand and _found(cand, ctx, "product"):
            return cand
    raise _Unclear


def _order_phrase(x: str, ctx: ItemContext) -> str:
    """What a count of "the quantity of the X order" counts: the X products where the gold's products spell
    X ("the Beef Noodles order"), else the order named by what it holds, all its items ("the Black Sesame
    order" for the gold's "Freshly Ground Sesame Paste"; as "X订单的数量" reads)."""
    x = _FOR_WHOM_EN.sub("", x)
    if not re.search(r"\borders?$", x):
        return _product_phrase(x, ctx)
    try:
        phrase = _product_phrase(x, ctx)
    except _Unclear:
        return ""
    return phrase if not phrase or not ctx.evidence or _found(phrase, ctx, "product", products=ctx.evidence) else ""


_EN_FROM_PLACE = re.compile(r",\s*(?:all |both |each )?(?:of them )?(?:from|at)\s+(?P<x>.{3,})$")


def _count_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> CountSpec | list[Any] | None:
    serves = _servings_item(subject, neg, pred, ctx)
    if serves is not None:
        return serves
    p = _cut_purpose(pred).strip()
    subject = _FOR_WHOM_EN.sub("", subject)  # "the soup order prepared for the family": the soup order
    units = _COUNT_UNITS
    fm = None if _is_zh(subject + p) else _EN_FROM_PLACE.search(p)
    if fm:  # "a total of 2 items, all from <place>": the count, and the store
        store = _store_item(subject, False, "from " + fm.group("x"), ctx)
        if store is not None:
            spec = _count_item(subject, neg, p[:fm.start()], ctx)
            if spec is None:
                raise _Unclear
            return [*(spec if isinstance(spec, list) else [spec]), store]
    if _is_zh(subject + p):
        m = re.search(r"^(?P<x>.*?)(?:的)?(?:商品|订购|下单|购买|点单)?(?:总数量|总数|数量|份数|件数|杯数|个数|总量)$", subject)
        om = re.fullmatch(rf"(?:订购|购买|买|点|选择|下单)(?:了)?{_NUM_RE}{units}", p) if m is None and not neg else None
        if om is not None and subject:  # "黑芝麻糊须订购3份": how many of the subject's product
            try:
                phrase = _product_phrase(re.sub(r"^(?:所点|所购|所选|下单)的?|(?:一共|总共|共计|合计|总计|共)$", "", subject), ctx)
            except _Unclear:
                phrase = ""
            if phrase:
                return CountSpec(what="items", value=int(_num(om.group(1))), phrase=phrase)
        bare = re.fullmatch(rf"(?:为|是|共计|总计|共|一共|总共|合计)?(?:有)?{_NUM_RE}{units}", p) if m is None and not neg else None
        if bare is not None:  # "包包菜炒馕要1份", "订单中包包菜炒馕应为1份": how many of the subject's product
            phrase = _zh_subject_product(subject, ctx)
            if phrase:
                return CountSpec(what="items", value=int(_num(bare.group(1))), phrase=phrase)
        tm = _ZH_TOTAL_OF.match(p) if m is None and not neg and _head_class(subject) != "place" else None
        if tm is not None and re.search(r"^[^的]+的(?:商品|菜品|产品|饮品)$", re.sub(r"^.{1,20}?订单(?:中|里)?的?", "", subject)):
            raise _Unclear  # "奶茶订单中不含奶的商品要有2杯": a count of some of the goods, not of the order's
        if tm is not None:  # "一共应有2个商品，且均来自<place>", "应共有2个商品", "共应有12杯": the order's goods, counted
            _, more = _zh_count_rest(subject, p, ctx)
            total = CountSpec(what="items", value=int(_num(tm.group(1))))
            if any(isinstance(x, CountSpec) for x in more) and \
                    sum(x.value for x in more if isinstance(x, CountSpec)) != total.value:
                raise _Unclear  # the parts do not add up to the total: not one reading
            return [total, *more] if more else total
        if m is None and not neg and _ZH_BREAKDOWN.match(p) and re.search(rf"{_NUM_RE}{_COUNT_UNITS}", p):
            try:  # "应包括2个手抓饼和1个茶叶蛋": how many of each of several products, with no total said
                each = _zh_count_rest(subject, "，" + p, ctx)[1]
                if len(each) >= 2:
                    return each
            except _Unclear:
                pass
        if m is None:
            return _listed_count(subject, neg, p, ctx) or _distinct_count(subject, neg, p, ctx) or \
                _named_count(subject, neg, p, ctx)  # "包含两样商品：A和B", "包含三个不同的菜品", "应包含2份X"
        p, more = _zh_count_rest(subject, p, ctx)  # "..., 都来自<place>", "..., 包含2个A和1个B"
        v = re.fullmatch(rf"(?:为|是|应为)?{_NUM_RE}{units}?", p)
        if v is None or neg:
            raise _Unclear
        if more and any(isinstance(x, CountSpec) for x in more) and \
                sum(x.value for x in more if isinstance(x, CountSpec)) != int(_num(v.group(1))):
            raise _Unclear  # the parts do not add up to the total: not one reading
        x = re.sub(r"(?:中的|中|里的|的)?(?:商品|菜品|产品)?$", "", m.group("x"))
        x = re.sub(r"^.{1,20}?订单(?:中|里)的?(?=..)", "", x)  # "新疆菜订单中包包菜炒馕的数量": the product
        x = re.sub(r"^(?:下单|订购|选择)(?:的)?", "", x.strip(" ,，"))
        meal = _ZH_MEAL.search(x) is not None and not _found(x, ctx, "product")  # "母子晚餐的商品总数": the order's
        phrase = "" if not x or x.endswith("订单") or meal else _product_phrase(re.sub(r"类$", "", x), ctx)
        # "总数量应为20块 / 片 / 颗": pieces, where a product states how many a unit holds ("个", the counter of
        # anything, may count the goods or their pieces: the items, as before)
        what = "pieces" if re.search(r"(?:块|片|颗|粒|枚)$", p) and not more else "items"
        total = CountSpec(what=what, value=int(_num(v.group(1))), phrase=phrase)
        if more and phrase:
            raise _Unclear
        return [total, *more] if more else total
    sm = re.search(r"\b(?:quantity|number|count|amount) of (?:the )?|\b(?:total )?(?:quantity|item count)\b", subject)
    if sm and re.search(r"\b(?:quantity|number of|count of|amount of|item count)\b", subject):
        if re.search(rf"\bnumber of {_PEOPLE_WORDS}", subject):
            return None
        v = re.fullmatch(rf"(?:be )?(?:exactly )?{_NUM_RE}(?: {units})?(?: in total| total)?", p)
        if v is None or neg:
            raise _Unclear
        rest = subject[sm.end():] if sm.group().endswith(("of ", "the ")) else ""
        x = re.split(r" (?:in|from|at|of|for) ", rest, maxsplit=1)[0]
        what = "pieces" if re.search(r"\b(?:pieces?|pcs?)$", p) else "items"  # "should be 20 pieces": pieces of goods
        return CountSpec(what=what, value=int(_num(v.group(1))), phrase=_order_phrase(x, ctx) if x else "")
    listed = _listed_count(subject, neg, p, ctx)  # "include two items: A and B", "3 items in total, including 2 A and 1 B"
    if listed is not None:
        return listed
    different = _distinct_count(subject, neg, p, ctx)  # "include three different dishes"
    if different is not None:
        return different
    v = re.fullmatch(rf"(?:include|contain|have|consist of|comprise)\s+(?:a total of |in total |only |exactly )?{_NUM_RE}\s+"
                     rf"{units}(?: in total| total)?", p)
    if v is not None and _head_class(subject) == "product":
        if neg:
            raise _Unclear
        return CountSpec(what="items", value=int(_num(v.group(1))))
    # a count in figures or from two up: "a single portion" / "one set" is a serving size (``serving.py``)
    v = re.fullmatch(r"(?:be|total|come to|amount to|add up to)\s+(?:a total of |in total |only |exactly )?"
                     rf"(\d+|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\s+{units}(?: in total| total)?", p)
    if v is not None and not neg:  # "the X in the Y order should be 1 portion", "the Y order should total 2 cups"
        x = re.split(r" (?:in|from|at|of|for) ", subject, maxsplit=1)[0]
        if re.search(r"\borders?$", x) or _head_class(subject) == "place":
            phrase = _order_phrase(x, ctx)
        else:
            phrase = _product_phrase(x, ctx)  # a product the catalogue must sell, else unread
        return CountSpec(what="items", value=int(_num(v.group(1))), phrase=phrase)
    return _named_count(subject, neg, p, ctx)


def _zh_subject_product(subject: str, ctx: ItemContext) -> str:
    """The catalogue product a Chinese count's subject names ("新疆菜订单中包包菜炒馕": 包包菜炒馕), or ""
    where the subject is the order, a meal or the goods in general ("新疆菜订单", "母子晚餐的商品")."""
    x = re.sub(r"^.{1,20}?订单(?:中|里)的?(?=..)", "", subject.strip(" ,，"))
    x = re.sub(r"^(?:所点|所购|所选|下单|订购|选择)的?|(?:一共|总共|共计|合计|总计|共)$", "", x)
    if not x or x.endswith(("订单", "商品", "菜品", "产品", "饮品")) or _ZH_MEAL.search(x) is not None:
        return ""
    try:
        return _product_phrase(x, ctx)
    except _Unclear:
        return ""


_ZH_FROM_PLACE = re.compile(r"^(?:且|并且|并)?(?:这些商品|这些|它们)?(?:都|均|全部|全都)?(?:应|要|需要|必须)?(?:来源于|来自于|来自|出自|购自)"
                            r"(?P<x>.{2,})$")
# a total with no product named: "共有2个商品", "有12杯", "包含2个商品，且均来自<place>"
_ZH_TOTAL_OF = re.compile(rf"^(?:共计|总计|共|一共|总共|合计)?(?:有|包含|包括|含有)?{_NUM_RE}{_COUNT_UNITS}(?:的)?(?:商品|菜品|产品|饮品)?"
                          r"(?:[，,].*)?$")
_ZH_BREAKDOWN = re.compile(r"^(?:其中|即)?(?:包含|包括|含)(?P<x>.+)$")


def _zh_count_rest(subject: str, p: str, ctx: ItemContext) -> tuple[str, list[Any]]:
    """A total said with more after a comma: "为2个，都来自<place>" (the store too), "为3件，包含2个A
    和1个B" (how many of each product); (the total's text, the further parts)."""
    cut = re.search(r"[，,]", p)
    if cut is None:
        return p, []
    head, rest = p[:cut.start()], p[cut.end():].strip(" ，,")
    fm = _ZH_FROM_PLACE.match(rest)
    if fm:
        store = _store_item(subject, False, "来自" + fm.group("x"), ctx)
        if store is None:
            raise _Unclear
        return head, [store]
    bm = _ZH_BREAKDOWN.match(rest)
    if bm is None:
        raise _Unclear
    parts: list[Any] = []
    for piece in re.split(r"和|、|以及|及|与", bm.group("x")):
        m = re.fullmatch(rf"{_NUM_RE}{_COUNT_UNITS}(?P<x>.{{2,}})", piece.strip())
        if m is None:
            raise _Unclear
        phrase = _product_phrase(re.sub(r"(?:的)?(?:商品|菜品|产品|饮品)$", "", m.group("x")), ctx)
        if not phrase:
            raise _Unclear
        parts.append(CountSpec(what="items", value=int(_num(m.group(1))), phrase=phrase))
    if len({x.phrase for x in parts}) != len(parts):
        raise _Unclear
    return head, parts


# "include Stir-fried Cabbage, quantity of 1", "include X with a quantity of 2 cups": a product and how many of it
_EN_THEN_COUNT = re.compile(rf"^(?:include|contain|have|order|select|choose|purchase|buy)\s+(?P<x>.+?)(?:,\s*|\s+with\s+|\s+in\s+)"
                            rf"(?:and\s+)?(?:a\s+|the\s+)?(?:quantity|count|number)(?:\s+of|\s+being|:)?\s+(?P<n>{_NUM_RE[1:-1]})"
                            rf"(?:\s+{_COUNT_UNITS})?$")
# "include 2 standard amusement vouchers", "包含2杯拿铁": how many of a product the catalogue sells
_EN_COUNT_OF = re.compile(rf"^(?:include|contain|have|consist of|comprise|order|select|choose|purchase|buy)\s+(?:exactly |only )?(?P<n>{_NUM_RE[1:-1]})\s+"
                          rf"(?:{_COUNT_UNITS}\s+of\s+)?(?P<x>.+)$")
_ZH_COUNT_OF = re.compile(rf"^(?:包含|含有|包括|点|订购|购买|买|选择|下单)(?P<n>{_NUM_RE[1:-1]}){_COUNT_UNITS}(?P<x>.+)$")
# an order named by the meal it is ("母子晚餐", "部门茶歇", "加班小食"): its goods, not a product's
_ZH_MEAL = re.compile(r"(?:早餐|午餐|晚餐|早饭|午饭|晚饭|夜宵|宵夜|下午茶|茶歇|外卖|聚餐|小食|加餐|正餐|便当)$")
_SAME = re.compile(r"^(?:of )?(?:the same|identical|(?:相同|一样|同样)的?|同一种|同一款|同款)\s*|^of one\s+")
_CLASS_WORD = re.compile(r"(?:the )?[a-z]+(?: (?:items?|products?|goods|dish(?:es)?))?|[\u4e00-\u9fff]{1,3}")
_SEVERAL = re.compile(r"\b(?:different|various|distinct|kinds?|types?|each|respectively|both|at least|at most)\b|不同|各|每|分别|种")


def _named_count(subject: str, neg: bool, p: str, ctx: ItemContext) -> CountSpec | None:
    zh = _is_zh(subject + p)
    then = None if zh else _EN_THEN_COUNT.match(p)
    m = _ZH_COUNT_OF.match(p) if zh else then or _EN_COUNT_OF.match(p)
    if m is None:
        return None
    x, n = m.group("x").strip(" ,，"), m.group("n")
    same = _SAME.match(x)
    if same:  # "3 identical bread items", "2 servings of the same beverage item", "3个相同的面包商品"
        x = x[same.end():]
        if zh and x and not _found(re.sub(r"(?:的)?(?:商品|菜品|产品)$", "", x), ctx, "product"):
            x = re.sub(r"(?:的)?(?:商品|菜品|产品)$", "", x)
    if zh:
        x = re.sub(r"(?:的)?(?:商品|菜品|产品|饮品)$", "", x) if not same else re.sub(r"(?:的)?(?:商品|菜品|产品)$", "", x)
    elif then is None:
        x = re.sub(r"\s+(?:for|to|from|at|in)\s+.+$", "", x)  # "2 lattes for the team"
    if n in ("single", "a single") or re.match(r"(?:person|people|persons|pax|serving|portion|size|adult|child)", x) \
            or re.search(r"\b(?:not|rather than|instead of)\b|[(（]|不是|而非", x):
        return None  # "a single person experience package": a serving size, the product reader's
    if zh and not x and not same and not neg and re.fullmatch(r"(?:的)?(?:商品|菜品|产品|饮品)", m.group("x").strip(" ,，")):
        return CountSpec(what="items", value=int(_num(n)))  # "应包含2份商品": the order's goods, counted
    if not x and same and not neg:
        return CountSpec(what="items", value=int(_num(n)), same=True)  # "买3个一样的": N of one product
    if not x or _SEVERAL.search(x):
        raise _Unclear  # "two different cocktails", "5 cups of each": several products at once
    try:
        phrase = _product_phrase(x, ctx)
    except _Unclear:  # not a product the catalogue sells ("one set meal and one drink"): another reader's
        if not (same and _CLASS_WORD.fullmatch(x.strip())):
            return None
        phrase = ""  # "3 identical bread items": a class of the order's goods, which the catalogue does not spell
    if same and not phrase and not neg:
        return CountSpec(what="items", value=int(_num(n)), same=True)  # "2 identical items": the order's goods
    if not phrase or _found(phrase, ctx, "option"):
        # "include 2 items": the order's goods in general (read above, or the judge's); "一杯去冰的饮品": an
        # option, the product reader's
        return None
    if neg:
        raise _Unclear
    return CountSpec(what="items", value=int(_num(n)), phrase=phrase, same=bool(same))


# ----- distinct products: "three different dishes", "三个不同的菜品" -----------------------------------------
_EN_DISTINCT = re.compile(rf"^(?:include|contain|have|consist of|comprise|order|select|choose|purchase|buy)\s+"
                          rf"(?P<q>at least |exactly |only )?(?P<n>{_NUM_RE[1:-1]})\s+(?:different|distinct)\s+(?P<x>.+)$")
_ZH_DISTINCT = re.compile(rf"^(?:包含|含有|包括|有|点|选择|选|购买|订购|下单)(?P<q>至少|恰好|只)?(?P<n>{_NUM_RE[1:-1]})"
                          rf"(?:个|样|种|款|道|份|杯|件)?不同(?:的)?(?P<x>.+)$")


def _distinct_count(subject: str, neg: bool, p: str, ctx: ItemContext) -> CountSpec | None:
    """How many different products an order holds: "include three different dishes", "包含三个不同的
    菜品": at least N different products (``distinct``: product ids, whatever each line's quantity;
    "exactly / only / 恰好 / 只" makes it exactly N). The goods are the order's in general ("dishes",
    "items", "菜品"), or, in English, a kind the catalogue spells ("two different cocktails": products whose
    name or tags say "cocktail", ``phrase``; not a class of food, "two different teas", which a name may
    spell in passing: "Tea Egg"); anything more ("with the set's dishes counted apart",
    "different flavours, 5 cups of each", "two different single-person meals") leaves the item to the
    judge. None when the predicate is no such shape."""
    zh = _is_zh(subject + p)
    m = (_ZH_DISTINCT if zh else _EN_DISTINCT).match(p)
    if m is None:
        return None
    if neg:
        raise _Unclear  # "should not include two different X": not two, or not different?
    x = m.group("x").strip(" .。")
    words = x.split()
    if zh:
        x = re.sub(r"^(?:的)", "", x)
        generic = x in _GENERIC_GOODS or x in ("菜", "餐", "美食", "食物", "东西")
    else:
        generic = len(words) == 1 and (_stem(words[0]) in _GENERIC_GOODS or _stem(words[0]) in ("good", "meal", "snack"))
    phrase = ""
    if not generic:
        # "two different cocktails": different products the catalogue calls so (a word of the name or a tag); a
        # longer phrase ("different flavours, 5 cups of each"), or one nothing spells, stays the judge's
        if zh or len(words) > 3 or re.search(r"[,;:]|\b(?:of|with|each|and|or)\b", x) or concept_value(x) is not None:
            raise _Unclear  # a class of food ("two different teas"), which a name spells in passing ("Tea Egg")
        phrase = _product_phrase(x, ctx)
        if not phrase or _serves_people(phrase):
            raise _Unclear  # "two different single-person meals": servings, not products of a kind
    exact = m.group("q") is not None and m.group("q").strip() in ("exactly", "only", "恰好", "只")
    return CountSpec(what="items", op="==" if exact else ">=", value=int(_num(m.group("n"))), distinct=True,
                     phrase=phrase)


def _serves_people(phrase: str) -> bool:
    return bool(_SERVES_EN.search(phrase)) or bool(re.search(r"\b(?:single|one|individual)[- ](?:person|people)\b", phrase))


# ----- a count and its list: "include two items: A and B", "3 items in total, including 2 A and 1 B" --------
_EN_LISTED = re.compile(rf"^(?:include|contain|have|consist of|comprise)\s+(?:a total of |exactly )?(?P<n>{_NUM_RE[1:-1]})\s+"
                        rf"{_COUNT_UNITS}(?: in total| total)?\s*(?::|,\s*(?:including|namely|i\.e\.|which are)|"
                        rf"\s(?:including|namely))\s*(?P<x>.+)$")
_ZH_LISTED = re.compile(rf"^(?:包含|含有|包括|有|点|共|共有|总共)(?P<n>{_NUM_RE[1:-1]})(?:样|个|种|份|件|杯|道|款)"
                        rf"(?:商品|菜品|产品|东西|菜|餐品)?(?:[:：]|[，,](?:包括|包含|分别是|即|为))(?P<x>.+)$")
_EN_COUNTED = re.compile(rf"^(?P<n>{_NUM_RE[1:-1]})\s+(?:{_COUNT_UNITS}\s+of\s+)?(?P<x>.+)$")
_ZH_COUNTED = re.compile(rf"^(?P<n>{_NUM_RE[1:-1]}){_COUNT_UNITS}(?P<x>.{{2,}})$")


def _listed_count(subject: str, neg: bool, p: str, ctx: ItemContext) -> list[Any] | None:
    """A count of items with the list of what they are: "include two items: A and B", "contain 3
    items in total, including 2 A and 1 B", "包含两样商品：A和B": the total (``CountSpec``), and each
    listed product the catalogue sells, with its own count where the list gives one ("2 A") or at
    least one; the counts given must add up to the total, and a list of bare names must name as many
    products as the total. Anything else in the list (a class, "such as", a place) leaves the item to
    the judge. None when the predicate is no such shape."""
    zh = _is_zh(subject + p)
    m = (_ZH_LISTED if zh else _EN_LISTED).match(p)
    if m is None:
        return None
    if neg or _head_class(subject) == "place":
        raise _Unclear
    total = int(_num(m.group("n")))
    pieces = [x.strip(" .。'\"") for x in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+(?![^\[\]]*\])|和|、|以及|及", m.group("x"))]
    pieces = [x for x in pieces if x]
    if len(pieces) < 2 or any(re.search(r"\b(?:such as|like|etc|or)\b|等|或|如", x) for x in pieces):
        raise _Unclear
    parts: list[CountSpec] = []
    for piece in pieces:
        c = (_ZH_COUNTED if zh else _EN_COUNTED).match(piece)
        name = c.group("x") if c else piece
        name = re.sub(r"(?:的)?(?:商品|菜品|产品)$", "", name) if zh else name
        phrase = _product_phrase(name, ctx)  # raises _Unclear for what the catalogue does not sell
        if not phrase:
            raise _Unclear
        parts.append(CountSpec(what="items", value=int(_num(c.group("n"))) if c else 1, op="==" if c else ">=",
                               phrase=phrase))
    counted = [x for x in parts if x.op == "=="]
    if counted and (len(counted) != len(parts) or sum(x.value for x in counted) != total):
        raise _Unclear  # the counts do not add up to the total: not one reading
    if not counted and len(parts) != total:
        raise _Unclear  # "two items: A, B and C": not one reading
    if len({x.phrase for x in parts}) != len(parts):
        raise _Unclear
    return [CountSpec(what="items", value=total), *parts]
