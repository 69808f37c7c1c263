"""Superlative items: the place or product chosen is the best of its kind on one attribute.

The kind
    ``BestSpec``: "the restaurant should be the closest to X", "the top-rated / highest-rated
    merchant", "the cheapest package", "the best-selling Four Fruits Soup", "the longest teaching
    time", "评分最高", "距离用户最近", "最便宜", "销量最好", "时长最长". The catalogue tells each
    attribute: a place's rating (its score) and its distance from a reference place (its point), a
    product's unit price, its length (``duration.line_minutes``: its name or tags) and its rank among
    the store's sellers (its tags: "No.1 Store Bestseller", "门店销量第1名", "Best-Selling" is rank 1).

How it is read soundly without knowing the candidates
    The item compares the record with the other candidates of its kind, which the rubric does not
    list; the gold record is one best choice. So the spec keeps the attribute and which end is best
    (``most``), and ``bound`` is the gold record's own value, filled by the loader (``envs/tasks/
    vitabench/nl_items.py``) from the gold records the item is tied to (they must agree on it): the
    chosen record must be at least as extreme (rating >= the gold's, distance <= the gold's, price
    <= the gold's, rank <= the gold's, length >= the gold's). Any choice that is also a best one
    passes, and one worse than the gold fails. The loader keeps the item only where some candidate
    of the world fails the bound (``best_can_fail``: another place, or another product of the gold's
    place that the item's phrase names), so the check is never trivially true. A spec whose bound is
    not filled holds of nothing.

The grammar (the subject and the predicate around the modal, the places' names blanked out)
    rating: "top-rated / highest-rated / best-rated / highest rating / highest score / 评分最高 /
    最高评分" (where the places' tags spell "top-rated", the item asks for that tag: a place feature;
    "a top-rated merchant" or "one of the top-rated" is a list, not a superlative: read only as the
    tag). distance: "closest / nearest (one / store / ...) to P", "the restaurant closest to the
    user", "(距离 / 离) P 最近": P must be located (``place._locate``), or be the user ("the user('s
    location)", "用户(位置)"): where the gold order is delivered, which the loader fills in with the
    bound (a visit, which has no delivery point, leaves it to the judge). price: "cheapest / lowest-priced / least expensive /
    最便宜 / 价格最低". sales: "best-selling / best seller / top-selling / 销量最好 / 销量最高 / 最畅销"
    (of a product: "the best-selling stores" are no product's). duration: "the longest (teaching /
    service / ...) time / duration", "时长最长 / 时间最长".
    The words after the superlative say what it ranks: a place's name ("the highest-rated No. 71
    Bean Soup Rice store": that chain too, ``place._store_item``), ", which is X" / "，即X" (that
    place too), a place noun ("restaurant", "one", "商家") or, for a product's attribute, a product
    the catalogue names ("the best-selling Four Fruits Soup": the lines that have it) or a product
    noun ("package", "set meal", "商品": every line). Anything else, a negation, an ordinal ("second
    closest"), a subject that is an area around the place ("the commercial area where X is"), two attributes at once, or an attribute the world does not tell is the judge's.

Examples
    "The park should be closest to 12 Noodle Street, Dalian"          distance <= gold's
    "The restaurant should be the highest-rated Noodle House"           rating >= gold's, and Noodle House
    "The photography studio order should be for the cheapest package"  unit price <= gold's
    "The ordered item should have the longest teaching time"           length >= gold's
    "下单的寿司订单的商家应为距离用户最近的一家"                              distance from the user <= gold's
    "四果汤订单选择的商品应为店内销量最好的四果汤"                            sales rank <= gold's

The check (``best_holds``): the place's value (rating, distance), or the value of every line the
phrase names (every line without one; none fails), is known and at least as extreme as ``bound``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from .address import _haversine
from .clauses import _head_class
from .duration import line_minutes
from .feature import FeatureSpec
from .place import _locate, _store_item
from .text import _is_zh, _Unclear, phrase_in
from .world import ItemContext, LineFacts, PlaceInfo, ProductInfo, RecordFacts, _found, _line_has, _names_out, _Spec

PLACE_ATTRIBUTES = ("rating", "distance")
USER = "the user"  # a distance from the user: from the gold order's delivery point, which the loader fills in
_MOST = {"rating": "max", "distance": "min", "price": "min", "sales": "min", "duration": "max"}


class BestSpec(_Spec):
    """The record's place (rating, distance from the reference) or its lines (price, sales rank,
    length; those that have ``phrase`` when given) are at least as extreme as ``bound`` (the gold
    record's value, filled by the loader; ``most``: which end is best)."""

    kind: Literal["best"] = "best"
    attribute: Literal["rating", "distance", "price", "sales", "duration"]
    most: Literal["max", "min"]
    reference: str = ""
    longitude: float | None = None
    latitude: float | None = None
    phrase: str = ""
    bound: float | None = None


# ----- what the catalogue says ---------------------------------------------------------------------
_RANK_WORDS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_SALES_RANK = re.compile(r"\bno\.?\s*(\d+)\s+(?:store\s+|in\s+store\s+)?best[- ]?sell(?:er|ing)\b|门店销量第(\d+|[一二三四五])名?|"
                         r"店内销量第(\d+|[一二三四五])名?", re.I)
_SALES_TOP = re.compile(r"^(?:the\s+|store'?s?\s+)*best[- ]?sell(?:er|ing)(?:\s+item)?(?:\s+in\s+store)?$|^门店销量第一$", re.I)


def sales_rank(tags: tuple[str, ...]) -> float | None:
    """A product's rank among its store's sellers, from its tags (1: the best seller); None when
    they do not tell, or tell twice differently."""
    found: set[int] = set()
    for tag in tags:
        for part in re.split(r"[,，、;；]", tag):
            part = part.strip()
            m = _SALES_RANK.search(part)
            if m:
                g = next(x for x in m.groups() if x)
                found.add(_RANK_WORDS.get(g) or int(g))
            elif _SALES_TOP.match(part):
                found.add(1)
    return float(found.pop()) if len(found) == 1 else None


def place_value(spec: BestSpec, place: PlaceInfo) -> float | None:
    if spec.attribute == "rating":
        return place.score if place.score > 0 else None
    if place.longitude is None or place.latitude is None or spec.longitude is None or spec.latitude is None:
        return None
    return _haversine(place.longitude, place.latitude, spec.longitude, spec.latitude)


def _product_value(spec: BestSpec, name: str, tags: tuple[str, ...], price: float) -> float | None:
    if spec.attribute == "price":
        return price if price > 0 else None
    if spec.attribute == "sales":
        return sales_rank(tags)
    return line_minutes(name, tags)


def line_value(spec: BestSpec, line: LineFacts) -> float | None:
    return _product_value(spec, line.name, line.tags, line.price)


def _at_least(spec: BestSpec, value: float | None, bound: float) -> bool:
    if value is None:
        return False
    return value >= bound - 1e-6 if spec.most == "max" else value <= bound + 1e-6


def _lines(spec: BestSpec, record: RecordFacts) -> list[LineFacts]:
    return [x for x in record.lines if not spec.phrase or _line_has(x, [spec.phrase])]


def best_value(spec: BestSpec, record: RecordFacts | None, place: PlaceInfo | None) -> float | None:
    """The record's own value of the attribute (the gold's, for ``bound``): its place's, or the one
    value its lines share; None when the record does not tell it."""
    if spec.attribute in PLACE_ATTRIBUTES:
        return place_value(spec, place) if place is not None else None
    if record is None:
        return None
    values = {line_value(spec, x) for x in _lines(spec, record)}
    return values.pop() if len(values) == 1 else None


def best_holds(spec: BestSpec, record: RecordFacts | None, place: PlaceInfo | None) -> bool:
    if spec.bound is None:
        return False
    if spec.attribute in PLACE_ATTRIBUTES:
        return place is not None and _at_least(spec, place_value(spec, place), spec.bound)
    lines = _lines(spec, record) if record is not None else []
    return bool(lines) and all(_at_least(spec, line_value(spec, x), spec.bound) for x in lines)


def best_can_fail(spec: BestSpec, ctx: ItemContext, place_id: str) -> bool:
    """Whether some candidate of the world fails the filled bound: another place, or a product of
    ``place_id`` that the item's phrase names (a product whose sales rank is not told is not the
    best seller)."""
    if spec.bound is None:
        return False
    if spec.attribute in PLACE_ATTRIBUTES:
        return any(not _at_least(spec, v, spec.bound) for p in ctx.places if (v := place_value(spec, p)) is not None)
    for pr in ctx.products:
        if pr.place_id != place_id or spec.phrase and not _named(spec.phrase, pr):
            continue
        v = _product_value(spec, pr.name, pr.tags, pr.price)
        if (v is not None or spec.attribute == "sales") and not _at_least(spec, v, spec.bound):
            return True
    return False


def _named(phrase: str, pr: ProductInfo) -> bool:
    return any(phrase_in(phrase, f) for f in (pr.name, *pr.tags))


def _told(attribute: str, ctx: ItemContext) -> bool:
    """Whether the world tells the attribute at all."""
    if attribute == "rating":
        return len({p.score for p in ctx.places if p.score > 0}) > 1
    if attribute == "distance":
        return sum(p.longitude is not None for p in ctx.places) > 1
    if attribute == "price":
        return any(pr.price > 0 for pr in ctx.products)
    if attribute == "sales":
        return any(sales_rank(pr.tags) is not None for pr in ctx.products)
    return any(line_minutes(pr.name, pr.tags) is not None for pr in ctx.products)


# ----- the grammar ----------------------------------------------------------------------------------
_MARKS_EN: dict[str, str] = {
    "rating": r"\b(?:top|highest|best)[- ]rated\b|\b(?:the )?highest (?:rating|score|reviews?)\b|\bhighest[- ]scor(?:ed|ing)\b|"
              r"\bbest (?:rating|reviews)\b",
    "distance": r"\b(?:closest|nearest)\b",
    "price": r"\bcheapest\b|\blowest[- ]priced\b|\blowest (?:price|cost)\b|\bleast expensive\b",
    "sales": r"\b(?:best|top)[- ]?sell(?:ing|ers?)\b|\bhighest sales\b|\bmost sold\b",
    "duration": r"\blongest (?:[a-z]+ )?(?:time|duration|session|class|course|lesson)\b",
}
_MARKS_ZH: dict[str, str] = {
    "rating": r"评分最高|最高评分|评分最好|评分第一|评价最高|星级最高",
    "distance": r"(?:距离?|离)(?P<ref>[^，,。；;]{1,80}?)(?:的距离)?最近",
    "price": r"最便宜|价格最低|最低价|价格最便宜|最实惠",
    "sales": r"销量最(?:好|高|多)|销量第一|最畅销",
    "duration": r"(?:时长|时间)最长|最长(?:的)?(?:时长|时间)",
}
_PLACE_NOUN_EN = r"(?:one|store|shop|restaurant|merchant|vendor|branch|location|place|outlet|venue|studio|salon|center|centre|hall)"
_PRODUCT_NOUN_EN = re.compile(r"(?:^|\s)(?:packages?|sets?|set meals?|meals?|items?|products?|dish(?:es)?|options?|ones?|"
                              r"vouchers?|combos?|courses?|menus?|drinks?|beverages?)$")
_IN_STORE_EN = re.compile(r"\s+(?:(?:in|from|at|of) (?:the |this |that )?(?:store|shop|restaurant|merchant|menu)|"
                          r"available|on (?:the )?menu)$")
_IN_STORE_ZH = re.compile(r"^(?:店内|店铺内|店里|门店|该店|本店)(?:的)?")
_USER_EN = re.compile(r"^(?:the )?(?:user|customer|you|me)(?:'s)?(?: (?:current )?(?:location|position|address|place))?$")
_USER_ZH = re.compile(r"^(?:用户|顾客|我|您)(?:的)?(?:当前)?(?:位置|地址|所在地|所在位置)?$")
_AREA = re.compile(r"^(?:the )?(?:[a-z]+ )?(?:area|district|zone|neighbou?rhood|region|block)\b|商圈|商业区|区域|街区|片区")
_SELECTED = re.compile(r"^(?:be )?(?:selected|chosen|ordered|picked|purchased|booked|reserved)$")


_TAG_VALUE_EN = re.compile(r"^(?:be |is |are )?(?:one of the |a |an |the )?(?P<x>.+?)(?: list)?$")


def _a_place_tag(pred: str, ctx: ItemContext) -> bool:
    """Whether the predicate's value is a place's tag as said ("Top-selling Merchant", "Top Seller")."""
    m = _TAG_VALUE_EN.match(pred.strip())
    if m is None:
        return False
    value = m.group("x")
    tries = [value, re.sub(r"\s+(?:stores?|shops?|merchants?|restaurants?|places?|vendors?)$", "", value)]
    return any(phrase_in(v, tag) for v in tries if len(v.split()) >= 2 for pl in ctx.places for tag in pl.tags)


def _best_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> Any | None:
    text = _names_out(f"{subject} {pred}", ctx)
    zh = _is_zh(text)
    marks = _MARKS_ZH if zh else _MARKS_EN
    found = [(a, m) for a, rx in marks.items() if (m := re.search(rx, text))]
    if not found:
        return None
    if not zh and _a_place_tag(pred, ctx):
        return None  # "should be a top-selling merchant" where a place is tagged "Top-selling Merchant": a feature
    if len(found) > 1 or neg:
        raise _Unclear
    attribute, mark = found[0]
    if _AREA.search(subject):
        raise _Unclear  # "the commercial area where the restaurant is should be the closest": not the place itself
    if re.search(r"\b(?:second|third|fourth|2nd|3rd|4th)[- ](?:most |least )?(?:closest|nearest|cheapest|highest|best|top|longest|"
                 r"lowest)|\b(?:one of|among|list)\b|第[二三四](?:近|便宜|高|好|长)|之一|榜", text):
        raise _Unclear  # an ordinal, or a list: not the best one
    if attribute == "rating" and not zh:
        tagged = _tag_reading(mark.group(0), ctx)
        if tagged is not None:
            return tagged
        if re.search(r"\ban? (?:top|highest|best)[- ]rated\b", text):
            raise _Unclear  # "a top-rated merchant": highly rated, no tag says which
    if not _told(attribute, ctx):
        raise _Unclear
    # the words the superlative ranks: after the mark in the predicate, or in the subject ("the
    # best-selling X should be selected")
    where = pred if re.search(marks[attribute], _names_out(pred, ctx)) else subject
    if where is subject and not _SELECTED.match(pred.strip()):
        raise _Unclear  # "the closest store should offer dine-in": the superlative only says which record
    m = re.search(marks[attribute], where)
    if m is None:  # the mark was in a place's name
        raise _Unclear
    rest = where[m.end():].strip(" ,，的")
    spec = BestSpec(attribute=attribute, most=_MOST[attribute])  # type: ignore[arg-type]
    extra: list[Any] = []
    if attribute == "distance":
        ref, rest, named = _reference(where, m, zh)
        spec = spec.model_copy(update=dict(zip(("reference", "longitude", "latitude"), _where(ref, ctx))))
        if named:
            store = _store_item(subject, False, ("为" if zh else "be ") + named, ctx)
            if store is None:
                raise _Unclear
            extra.append(store)
    if attribute in PLACE_ATTRIBUTES:
        extra += _place_rest(subject, rest, zh, ctx)
        extra += _other_clauses(subject, pred, marks[attribute], zh, ctx)
    else:
        spec = spec.model_copy(update={"phrase": _product_rest(rest, zh, ctx)})
    return [spec, *extra] if extra else spec


# a clause that places the store ("该店位于X", "which is located at X"): what the place is, said again
_LOCATED = re.compile(r"^(?:该店|该商家|此店|其|它)?(?:位于|地址为|地址是|坐落于)|^(?:which|it) (?:is )?(?:located|situated) ")


def _other_clauses(subject: str, pred: str, mark: str, zh: bool, ctx: ItemContext) -> list[Any]:
    """What a place item says before its superlative, clause by clause ("必须是古茗（软三店），该店位于X，是离
    公司最近的古茗分店"): the place it names (``place._store_item``), or a clause placing it; anything else
    is the judge's."""
    out: list[Any] = []
    for clause in (c.strip() for c in re.split(r"[，,；;]", pred) if c.strip()):
        if re.search(mark, _names_out(clause, ctx)):
            break  # the superlative's own clause: what follows it is its reference or the place it names
        if _LOCATED.search(clause):
            continue
        store = _store_item(subject, False, clause if zh else re.sub(r"^(?!be )", "be ", clause), ctx)
        if store is None:
            raise _Unclear
        out.append(store)
    return out


def _tag_reading(word: str, ctx: ItemContext) -> Any | None:
    """"top-rated" where the places' tags spell it: the tag (a place feature)."""
    phrase = re.sub(r"[- ]", " ", word.casefold()).strip()
    if any(phrase_in(phrase, re.sub(r"[- ]", " ", t)) for p in ctx.places for t in p.tags):
        return FeatureSpec(scope="place", phrases=[phrase])
    return None


def _reference(where: str, m: re.Match[str], zh: bool) -> tuple[str, str, str]:
    """(the reference place, the words after it, the place ", which is X" names) of a distance."""
    if zh:
        ref = m.group("ref")
        rest = where[m.end():].strip(" 的")
        named = ""
        cut = re.search(r"[，,]\s*(?:即|也就是|就是|为)(?P<x>.+)$", rest)
        if cut:
            named, rest = cut.group("x").strip(" 。"), rest[:cut.start()]
        return ref, rest, named
    after = where[m.end():]
    r = re.match(rf"^(?:\s+{_PLACE_NOUN_EN})?\s+(?:to|from)\s+(?P<ref>.+)$", after)
    if r is None:
        raise _Unclear  # "the nearest one": nearest to what?
    ref, named = r.group("ref"), ""
    cut = re.search(r",?\s+(?:which is|i\.e\.,?|namely|that is)\s+(?P<x>.+)$", ref)
    if cut:
        named, ref = cut.group("x").strip(" ."), ref[:cut.start()]
    rest = where[:m.start()].strip()
    while True:  # "be from the restaurant": the words before the superlative, without the verbs
        shorter = re.sub(r"^(?:should |must |be |is |select |choose |pick |order |ordered |placed |from |at |with |the |a |an )",
                         "", rest + " ").strip()
        if shorter == rest:
            break
        rest = shorter
    return ref, rest, named


def _where(ref: str, ctx: ItemContext) -> tuple[str, float | None, float | None]:
    ref = ref.strip(" .。")
    if (_USER_ZH if _is_zh(ref) else _USER_EN).match(ref):
        return USER, None, None  # where the user is: the gold order's delivery point (the loader's)
    lon, lat = _locate(ref, ctx)
    return ref, lon, lat


def _place_rest(subject: str, rest: str, zh: bool, ctx: ItemContext) -> list[Any]:
    """What the superlative ranks, for a place: nothing more, a place noun, or a place's name (that
    place too)."""
    rest = re.sub(r"^(?:the |a |an )", "", rest.strip(" .。"))
    if not rest or zh and re.fullmatch(r"(?:一家|一个|那家)?(?:的)?(?:商家|店铺|门店|餐厅|店|一家|分店)?", rest):
        return []
    store = _store_item(subject, False, ("为" if zh else "be ") + rest, ctx)
    if store is not None:
        return [store]
    if not re.search(r"\d", rest) and (re.fullmatch(rf"(?:[a-z]+ ){{0,3}}{_PLACE_NOUN_EN}s?", rest)
                                      or _head_class(rest) == "place"):
        return []  # "the highest-rated Korean restaurant": what kind of place it ranks
    raise _Unclear


def _product_rest(rest: str, zh: bool, ctx: ItemContext) -> str:
    """What the superlative ranks, for a product: a product the catalogue names (the phrase), or a
    product noun (every line)."""
    if zh:
        x = _IN_STORE_ZH.sub("", rest.strip(" 。"))
        x = re.sub(r"(?:的)?(?:商品|菜品|产品)$", "", x)
        if not x:
            return ""
        if _head_class(x) == "place":
            raise _Unclear
        if _found(x, ctx, "product"):
            return x
        if _head_class(x + "商品") == "product":
            return ""
        raise _Unclear
    x = _IN_STORE_EN.sub("", re.sub(r"^(?:the |a |an )", "", rest.strip(" .")))
    x = _IN_STORE_EN.sub("", x)
    if not x or re.fullmatch(r"(?:[a-z]+ )?(?:time|duration|session|class|course|lesson)", x):
        return ""
    if re.fullmatch(rf"(?:[a-z]+ ){{0,3}}{_PLACE_NOUN_EN}s?", x) or _head_class(x) == "place":
        raise _Unclear  # "the cheapest store": a place's prices, which no record's lines tell
    if _found(x, ctx, "product") and not _PRODUCT_NOUN_EN.search(x):
        return x
    if _PRODUCT_NOUN_EN.search(x):
        return ""
    raise _Unclear


def describe_best(spec: BestSpec) -> str:
    what = {"rating": "the place's rating", "distance": f"the place's distance from {spec.reference!r}",
            "price": "the unit price", "sales": "the sales rank", "duration": "the length"}[spec.attribute]
    if spec.phrase:
        what += f" of {spec.phrase!r}"
    op = ">=" if spec.most == "max" else "<="
    bound = "the gold's" if spec.bound is None else f"the gold's ({spec.bound:g})"
    return f"{what} {op} {bound} (the best of its kind)"
