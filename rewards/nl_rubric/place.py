"""Place items: which store or shop an order or a visit is with, its rating, and where it lies.

The kind
    Three kinds about the place of a record (a delivery store, an in-store shop): the place itself
    (``StoreSpec``: by name, or a chain by the start of its names, or not that place), its rating
    (``RatingSpec``) and its distance from a place the task knows (``DistanceSpec``). What a place
    offers (its tags or category: "should offer dine-in", "提供堂食服务的商家") is read by the same
    grammar as a product's features, in ``product.py`` (``FeatureSpec`` with ``scope="place"``).

The grammar (each reads the predicate after the modal, ``clauses._split_modal``)
    store: "(still / only) (be ordered / placed / booked / select / choose / come) (from / at / with)
    (the) X (as the merchant)", "(是 / 为 / 来自 / 选择 / 在 / 从) X (作为商家) (下单 / 购买)": X must name a
    place of the world, exactly (case, blanks and punctuation aside), or, with a generic tail dropped
    ("X stores", "X品牌的商家", "X的商品", "X店"), the start of the names of a chain; a negative modal
    ("cannot select X", "应避开X") negates it. A description around the name is dropped when exactly one
    reading names a place: "'X' that the user visited", "X from the user's history", "the user's usual X
    should be selected", "用户常去的X", "X，该店铺为..."; "..., but from other vendors" restates a negation.
    rating: the subject or predicate speaks of a rating ("rating", "rated", "score", "stars", "评分",
    "星级"; words of a place's name do not count: "Star Light Bar"), and the predicate is one
    comparison with one number: "4.5 or above / at least 4.5 / higher than 4 / 4.3 (stars)",
    "4.5分及以上 / 不低于4.5 / 高于4分 / 为4.3分"; "(inclusive)" makes a strict bound inclusive; a
    negation flips it ("should not be lower than 4": >= 4); a number above ``RATING_MAX`` is no rating.
    distance: "(be located) within (M-)N km / m (inclusive / exclusive) (radius / distance) of P", "no
    more than N m from P", "the distance between A and P should be within N km", "距离P(的距离)在N公里
    以内", "在P附近N米内", "A距离 / 与 P (的距离) 应在N公里以内 / 应不超过N公里" (P in the subject): P is the
    user's home or workplace where it says so ("home", "the user's company", "用户家", "公司": the
    profile's "home address" / "work address", ``ItemContext.landmarks``), or must be an address-book
    entry or a place's address or name (its name and
    address pieces agree, within ``ADDRESS_TOLERANCE_M``; an address-book entry whose room, unit and
    building lead its compound's address locates the compound; where none matches so, an entry's
    name before its address, or the entry with its city and district said first); "closest / nearest / 最近" is a
    superlative over all places, left to the judge.

Examples
    store     "The coffee order should be placed at Harbour Beans"; "Drinks must not come from Sunny
              Tea stores"; "咖啡订单应选择港湾咖啡作为商家"; "奶茶订单应选择晴天茶饮品牌的商家"
    rating    "The bakery should have a rating of 4.6 or above"; "The salon's rating must be higher
              than 4.0"; "烘焙店的评分应在4.6分及以上"; "理发店评分不能低于4分"
    distance  "The gym should be within 2 km (inclusive) of 18 Seaside Road, Dalian";
              "健身房应在距离港湾咖啡2公里以内"; "The restaurant should be within 500m of home";
              "冷面店距离公司应在1公里以内"

The specs and how they are checked against the record's place (``PlaceInfo``)
    ``StoreSpec``     the place's id is one of ``place_ids`` (``negated``: is none of them).
    ``RatingSpec``    the place's score compares with the value (``op``).
    ``DistanceSpec``  the haversine distance from the place's point to the reference is at most
                      ``max_m`` metres (inclusive unless "(exclusive)") and at least ``min_m`` ("within
                      4-5 km"); a place without a point fails.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from .address import ADDRESS_TOLERANCE_M, _haversine, _landmark, norm_address
from .clauses import _PRODUCT_BRAND, _cut_purpose
from .text import _OP_FLIP, _compare, _is_zh, _Unclear
from .world import ItemContext, PlaceInfo, _found, _names_out, _places_named, _Spec

RATING_MAX = 5.0


class StoreSpec(_Spec):
    """The record's store or shop is (``negated``: is not) one of ``place_ids`` (named ``name``)."""

    kind: Literal["store"] = "store"
    place_ids: list[str]
    name: str
    negated: bool = False


class RatingSpec(_Spec):
    """The place's rating compares with ``value`` (``op``)."""

    kind: Literal["rating"] = "rating"
    op: Literal[">=", ">", "<=", "<", "=="]
    value: float


class DistanceSpec(_Spec):
    """The place lies within ``max_m`` metres of ``reference`` (inclusive unless ``inclusive`` is False)."""

    kind: Literal["distance"] = "distance"
    reference: str
    longitude: float
    latitude: float
    max_m: float
    inclusive: bool = True
    min_m: float = 0.0  # "within 4-5 km of P": and at least this far


def store_holds(spec: StoreSpec, place: PlaceInfo) -> bool:
    return (place.place_id in spec.place_ids) != spec.negated


def rating_holds(spec: RatingSpec, place: PlaceInfo) -> bool:
    return _compare(place.score, spec.op, spec.value)


def distance_holds(spec: DistanceSpec, place: PlaceInfo) -> bool:
    if place.longitude is None or place.latitude is None:
        return False
    d = _haversine(place.longitude, place.latitude, spec.longitude, spec.latitude)
    if d < spec.min_m - 1e-6:
        return False
    return d <= spec.max_m + 1e-6 if spec.inclusive else d < spec.max_m


# ----- stores ---------------------------------------------------------------------------------------
_STORE_VERBS = ("be ordered ", "be re-ordered ", "be reordered ", "be placed ", "be purchased ", "be bought ", "be booked ", "be reserved ", "be made ",
                "be selected ", "be chosen ", "be with ", "be for ", "come from ", "placed ", "ordered ", "purchased ",
                "bought ", "booked ", "reserved ", "belongs ", "belong ", "select ", "choose ", "pick ", "order ",
                "use ", "come ", "be ")
_STORE_VERBS_EN = re.compile(
    r"^(?:still |only |also |definitely )*(?:" + "|".join(_STORE_VERBS) + r")?"
    r"(?:from |at |with |to |in |for |the merchant |the store |the shop )?"
    r"(?:the |an? (?=\S+ (?:store|shop|branch|outlet|restaurant|location)$))?(?P<x>.+?)(?: as (?:the )?(?:merchant|store|shop|"
    r"restaurant|vendor))?$")  # ("from a Baxi store": one of the chain's)
_STORE_VERBS_ZH = re.compile(
    r"^(?:仍|仍然|还|也)?(?:是|为|来自于|来自|选择|选|在|从|去|到)?(?P<x>.+?)(?:作为(?:下单)?(?:的)?(?:商家|店铺|门店|餐厅))?"
    r"(?:下单|购买|订购|点餐)?$")
_PLACE_SUFFIX = re.compile(r"\s*(?:\b(?:stores?|shops?|restaurants?|merchants?|outlets?|branch(?:es)?|brand)\b|商家|店铺|门店|"
                           r"的店|品牌)$")


_ZH_STORE_TAIL = re.compile(r"^(?P<x>.{2,}?)(?:品牌|连锁店|连锁|旗下)?(?:的)?(?:商家|店铺|门店|餐厅|餐馆|店家|商户|商品|产品|菜品|店)?$")


# "avoid X and select another coffee shop", "不能来自X，应选择其他提供粽子的商家": the rest only restates the exclusion
_ANOTHER_EN = re.compile(r",?\s+(?:and |but )?(?:instead )?(?:(?:select|choose|pick|go with|use|order from|find) |(?:be )?from )"
                         r"(?:another|other|a different|an alternative|any other)\b.*$")
_ANOTHER_ZH = re.compile(r"[，,]?(?:而是|应|应该|并)?(?:选择|换|换成|改选)(?:其他|其它|另一|另一家|别的|另外).*$")
# "a merchant from the X brand", "a store of X": the place named after a generic head
_MERCHANT_OF = re.compile(r"^(?:an? |the )?(?:merchant|store|shop|restaurant|outlet|branch|vendor)(?:e?s)? (?:from|of|under|belonging to) "
                          r"(?:the )?")
# "X should be selected as the merchant": the subject names the place
_AS_MERCHANT = re.compile(r"^(?:be )?(?:(?:selected|chosen|used|booked|reserved|the one selected) as (?:the |an? )?|the )"
                          r"(?:[a-z'-]+ ){0,3}(?:merchant|store|shop|restaurant|vendor|venue|cent(?:er|re)|studio|salon|club|"
                          r"gym|hall|workshop|bar|caf[eé]|spa|parlou?r|institution|school|academy)s?\b")


def _store_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> StoreSpec | None:
    if not ctx.places:
        return None
    if _PRODUCT_BRAND.search(subject) and _found(re.sub(r"^(?:be |is |为|是)", "", _cut_purpose(pred).strip(" '\"“”")), ctx, "product"):
        return None  # "the product brand should be X" where products' names spell X: the product's, not a store's
    p = _cut_purpose(pred).strip(" '\"“”")
    zh = _is_zh(subject + p)
    if not zh and _AS_MERCHANT.match(pred):
        ids = _places_named(subject, ctx, chain=False) or _places_named(subject, ctx, chain=True)
        return StoreSpec(place_ids=sorted(ids), name=subject, negated=neg) if ids else None
    if not zh and re.match(r"^(?:be |should be )?(?:selected|chosen)$", p):  # "the user's usual X (branch) should be selected"
        bare = _named_with_description(subject, zh, ctx) if not _places_named(subject, ctx, chain=False) else subject
        ids = _places_named(bare, ctx, chain=False) if bare else []
        return StoreSpec(place_ids=sorted(ids), name=bare, negated=neg) if ids else None
    if neg:
        p = (_ANOTHER_ZH if zh else _ANOTHER_EN).sub("", p).strip(" ,，")
    m = (_STORE_VERBS_ZH if zh else _STORE_VERBS_EN).match(p)
    if m is None:
        return None
    x = m.group("x").strip(" '\"“”")
    x = x if zh else _MERCHANT_OF.sub("", x)
    ids = _places_named(x, ctx, chain=False)
    if not ids:  # a description around the name: "X that the user visited before", "用户常去的X", "X，该店铺为..."
        bare = _named_with_description(x, zh, ctx)
        ids, x = (_places_named(bare, ctx, chain=False), bare) if bare else (ids, x)
    if not ids:
        stripped = _PLACE_SUFFIX.sub("", x).strip()
        ids = _places_named(stripped, ctx, chain=True)
        x = stripped if ids else x
    if not ids and zh:  # "X品牌的商家", "X的商品": the place named before a generic tail
        tail = _ZH_STORE_TAIL.match(x)
        if tail:
            ids = _places_named(tail.group("x"), ctx, chain=True)
            x = tail.group("x") if ids else x
    if not ids and zh and re.match(r"^(?:在|从|去|到)", p):  # "在X点", "去X买": a verb of ordering after the place
        verb = _ZH_ORDERED_AT.match(x)
        if verb:
            ids = _places_named(verb.group("x"), ctx, chain=False) or _places_named(verb.group("x"), ctx, chain=True)
            x = verb.group("x") if ids else x
    if not ids:
        return None
    return StoreSpec(place_ids=sorted(ids), name=x, negated=neg)


# after "在 / 从 X", the verb of ordering there ("在X点", "从X买", "在X点单"); only after a place preposition, where a name
# ending in the same character ("甜点") is still tried whole first
_ZH_ORDERED_AT = re.compile(r"^(?P<x>.{2,}?)(?:点单|点菜|订餐|消费|预订|预约|点|买|订)$")


_DESCRIBED_EN = re.compile(r"^(?P<x>.+?)['\"”]?\s+(?:that|which|who|where|the user|they|he|she|(?:from|in) (?:the user's|their|his|"
                           r"her|the (?:order )?history))\b.*$")
_DESCRIBED_ZH = re.compile(r"^(?P<x>.+?)[，,](?:该|这|此|即|也就是|是)[^，,]*$")


def _named_with_description(x: str, zh: bool, ctx: ItemContext) -> str:
    """The place's name in a value that also describes it ("'North Bath' that the user visited
    before", "用户常去的某店", "某店，该店铺为用户之前下过单的店"): the name when exactly one
    reading names a place, else ""."""
    tries = []
    m = (_DESCRIBED_ZH if zh else _DESCRIBED_EN).match(x)
    if m:
        tries.append(m.group("x"))
    if not zh:  # "the user's frequently visited X": the words before the name describe it (not "the nearest X")
        words = x.split()
        tries += [" ".join(words[k:]) for k in range(1, min(len(words), 6))
                  if re.fullmatch(r"[a-z' -]+", " ".join(words[:k]))
                  and not re.search(r"\b(?:\w+est|best|other|another|different|new|not|no|except|than|near|nearby|similar|"
                                    r"like|such|as|from|at|in|of|for|with|to|by|or|and|but|e\.g)\b", " ".join(words[:k]))]
    if zh:
        tries += [x[k.end():] for k in re.finditer("的", x)][:4]
        tries += [t[k.end():] for t in tries[:1] for k in re.finditer("的", t)][:4]
    found = [t.strip(" '\"“”‘’") for t in tries if _places_named(t.strip(" '\"“”‘’"), ctx, chain=False)]
    return found[0] if len(set(found)) == 1 else ""


# ----- ratings --------------------------------------------------------------------------------------
_R = r"(\d(?:\.\d+)?)"
_RATING_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    (">=", re.compile(rf"^(?:greater than or equal to|equal to or (?:greater|higher) than|at least|no (?:lower|less) than|"
                      rf"not (?:be )?(?:lower|less) than|not (?:be )?below|not under|a minimum of|minimum(?: of)?|reach|"
                      rf"reaches|>=|≥)\s*{_R}(?: stars?| points?)?$")),
    (">=", re.compile(rf"^{_R}\s*(?:stars?|points?)?\s*(?:or|and) (?:above|higher|more|greater|better|up)$")),
    (">=", re.compile(rf"^{_R}\+$")),
    (">", re.compile(rf"^(?:above|higher than|greater than|more than|over|exceeding|exceed|better than)\s*{_R}(?: stars?| points?)?$")),
    ("<=", re.compile(rf"^(?:at most|no (?:higher|more) than|not (?:be )?(?:higher|more) than|<=|≤)\s*{_R}(?: stars?| points?)?$")),
    ("<=", re.compile(rf"^{_R}\s*(?:stars?|points?)?\s*(?:or|and) (?:below|lower|less|under)$")),
    ("<", re.compile(rf"^(?:below|lower than|less than|under)\s*{_R}(?: stars?| points?)?$")),
    ("==", re.compile(rf"^(?:exactly )?{_R}(?: stars?| points?)?$")),
)
_RATING_ZH: tuple[tuple[str, re.Pattern[str]], ...] = (
    (">=", re.compile(rf"^(?:在|为|是|达到)?{_R}(?:分|星)?(?:及|或)?以上$")),
    (">=", re.compile(rf"^(?:不低于|不少于|至少|大于等于|不小于|达到|≥|>=)(?:为)?{_R}(?:分|星)?(?:及以上)?$")),
    (">", re.compile(rf"^(?:高于|大于|超过){_R}(?:分|星)?$")),
    ("<=", re.compile(rf"^(?:不高于|不超过|至多|小于等于|≤|<=){_R}(?:分|星)?$|^(?:在|为)?{_R}(?:分|星)?(?:及|或)以下$")),
    ("<", re.compile(rf"^(?:低于|小于){_R}(?:分|星)?$")),
    ("==", re.compile(rf"^(?:为|是)?{_R}(?:分|星)$")),
)


def _rating_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> RatingSpec | None:
    zh = _is_zh(subject + pred)
    said = _names_out(f"{subject} {pred}", ctx)  # "Star Power Table Tennis Hall" speaks of no rating
    if not (re.search(r"\b(?:ratings?|rated|scores?|stars?)\b", said) or re.search(r"评分|评级|星级|分数|得分", said)):
        return None
    p = _cut_purpose(pred)
    if zh:
        p = re.sub(r"^(?:商家|店铺)?(?:的)?(?:评分|评级|星级|分数|得分)(?:应)?", "", p)
    else:
        p = re.sub(r"^(?:be |have |has |with |a |an |the |merchant |store |shop |overall |user |customer |rating |score |"
                   r"of |rated )+", "", p)
        # "at least a 4.0 rating", "a 4.5-star rating or higher": the bound, then the value with its noun
        p = re.sub(r"^((?:at least|no less than|not less than|above|over|at most|no more than|below|under|more than|"
                   r"less than|higher than|lower than) )(?:a |an )", r"\1", p)
        p = re.sub(r"(?<=\d)(?:[- ]stars?)? (?:rating|score)(?=$| or | and |\s*[(（])", "", p)
    inclusive = bool(re.search(r"[(（](?:inclusive|including|含)", p))
    p = re.sub(r"\s*[(（](?:inclusive|including|含)[^)）]*[)）]$", "", p)
    for op, rx in (_RATING_ZH if zh else _RATING_EN):
        m = rx.match(p.strip())
        if m:
            value = float(next(g for g in m.groups() if g is not None))
            if not 0.0 <= value <= RATING_MAX:
                raise _Unclear
            if neg and op not in _OP_FLIP:
                raise _Unclear  # "should not be 5.0": not this rating, which no rating bound says
            op = _OP_FLIP[op] if neg else op
            if inclusive and op in (">", "<"):
                op += "="
            return RatingSpec(op=op, value=value)  # type: ignore[arg-type]
    raise _Unclear


# ----- distances ------------------------------------------------------------------------------------
_UNIT = r"(?P<unit>km|kilometers?|kilometres?|m|meters?|metres?|公里|千米|米)"
_INC = r"(?:\s*[(（](?P<inc>inclusive|including[^)）]*|included|exclusive|not including[^)）]*|含[^)）]*|包含[^)）]*|不含[^)）]*)[)）])?"
_DIST_EN = (
    re.compile(rf"^(?:be )?(?:located |situated |lie |lies )?(?:within|in)\s+(?:a\s+)?(?:radius of\s+)?(?:(?P<lo>\d+(?:\.\d+)?)\s*(?:-|–|to)\s*)?(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}"
               rf"(?:\s+(?:range|radius|walking distance|distance))?{_INC.replace('inc>', 'inc2>')}\s+(?:of|from|to|away from|"
               rf"around)\s+(?P<ref>.+)$"),
    re.compile(rf"^(?:be )?(?:located |situated )?(?:no more than|not more than|at most|less than or equal to|up to|no farther than|no further than)"
               rf"\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}\s+(?:away )?(?:from|of|to)\s+(?P<ref>.+)$"),
)
_DIST_EN = (*_DIST_EN,
            # "less than 5 km away from P" (the bound itself excluded), "located 5 km or less from P"
            re.compile(rf"^(?:be )?(?:located |situated )?(?P<strict>less than|under|below|fewer than)\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}"
                       rf"{_INC}\s+(?:away )?(?:from|of|to)\s+(?P<ref>.+)$"),
            re.compile(rf"^(?:be )?(?:located |situated )?(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}\s+or (?:less|closer|nearer)\s+"
                       rf"(?:away )?(?:from|of|to)\s+(?P<ref>.+)$"))
_DIST_EN_NEG = re.compile(rf"^(?:be )?(?:more than|farther than|further than|over|beyond|exceed)\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}"
                          rf"\s+(?:away )?(?:from|of|to)\s+(?P<ref>.+)$")
_DIST_SUBJ = re.compile(r"^(?:the )?distance (?:between|from) (?P<a>.+?) (?:and|to) (?P<ref>.+)$|^(?P<a2>.+?)'s distance (?:from|to) "
                        r"(?P<ref2>.+)$")
_DIST_PRED = re.compile(rf"^(?:be )?(?:within|no more than|not more than|at most|less than or equal to|up to|under)\s+"
                        rf"(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}$")
_DIST_PRED_NEG = re.compile(rf"^(?:be )?(?:exceed|more than|over)\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}$")
# (a reference never ends in a digit: "在500米以内" is no place "5" within "00" metres)
_DIST_ZH = (
    re.compile(rf"^(?:在)?(?:距离?|离)(?P<ref>.+?(?<![\d.]))(?:的距离)?(?:在|不超过|不大于|小于等于)?(?P<n>\d+(?:\.\d+)?){_UNIT}"
               rf"(?:以内|之内|内|范围内|以下){_INC}$"),
    re.compile(rf"^(?:在|位于)(?P<ref>.+?(?<![\d.]))(?:的)?(?:周边|附近|周围)?(?P<n>\d+(?:\.\d+)?){_UNIT}(?:以内|之内|内|范围内){_INC}$"),
)
# the reference in the subject: "米线店距离公司应在3公里以内", "X与Y的距离不超过1公里", "X到Y的距离应在500米内"
_DIST_SUBJ_ZH = re.compile(r"^(?P<a>.+?)(?:距离|离|与|和|到)(?P<ref>[^，,]+?)(?:之间)?(?:的)?(?:直线)?(?:距离)?$")
_DIST_OVER_ZH = re.compile(rf"^(?:超过|大于|多于)(?P<n>\d+(?:\.\d+)?){_UNIT}{_INC}$")  # after 不 (应不超过): within
_DIST_PRED_ZH = re.compile(rf"^(?:在|为|是)?(?:不超过|不大于|小于等于|不多于|最多)?(?P<n>\d+(?:\.\d+)?){_UNIT}"
                           rf"(?:以内|之内|内|范围内|以下)?{_INC}$")


def _metres(n: str, unit: str) -> float:
    return float(n) * (1000.0 if unit.startswith(("k", "公", "千")) else 1.0)


def _ref_pieces(ref: str) -> list[str]:
    """A reference place as the pieces that may name it: the whole, and the name and the address
    of "Name, address" / "Name (address)" / "address (Name)" / "Name at address"."""
    ref = ref.strip(" .。")
    pieces = [ref]
    m = re.match(r"^(.+?)\s*[(（](.+)[)）]$", ref)
    if m:
        pieces += [m.group(1), m.group(2)]
    for sep in (",", "，", " at ", " on "):
        if sep in ref:
            head, rest = ref.split(sep, 1)
            pieces += [head, rest]
    return [re.sub(r"^the ", "", p.strip(" ,，.")) for p in pieces if p.strip(" ,，.")]


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", unicodedata.normalize("NFKC", text).casefold())) - {"the", "at", "of"}


# "Room 501, Unit 2, Building 3, <compound>, <street>": the compound's address without the room in it
_UNIT_PREFIX = re.compile(r"^(?:(?:room|unit|building|block|tower|flat|apartment|suite|floor|\d+(?:st|nd|rd|th)? floor)"
                          r"\s*[\w-]*\s*,\s*)+", re.IGNORECASE)


def _locate(ref: str, ctx: ItemContext) -> tuple[float, float]:
    """The coordinates of a reference place: an address-book entry or a place's address or name
    that the reference (or its name or address piece) spells, all within ``ADDRESS_TOLERANCE_M``."""
    label = _landmark(ref)
    if label:  # "within 500m of home", "距离公司1公里内": the profile's address
        said = [a for k, a in ctx.landmarks if k == label]
        if len(said) != 1:
            raise _Unclear
        ref = said[0]
    known: list[tuple[str, float, float]] = list(ctx.addresses)
    known += [(p.address, p.longitude, p.latitude) for p in ctx.places if p.longitude is not None and p.address]
    names = [(p.name, p.longitude, p.latitude) for p in ctx.places if p.longitude is not None]
    hits: list[tuple[float, float]] = []
    for piece in _ref_pieces(ref):
        key, words = norm_address(piece), _word_set(piece)
        if len(key) < 4:
            continue
        for addr, lon, lat in known:
            other = _word_set(addr)
            if norm_address(addr) == key or norm_address(_UNIT_PREFIX.sub("", addr)) == key or (words and len(words & other) >= 0.85 * max(len(words), len(other))
                                             and {w for w in words if w.isdigit()} == {w for w in other if w.isdigit()}):
                hits.append((lon, lat))  # type: ignore[arg-type]
        for name, lon, lat in names:
            if norm_address(name) == key:
                hits.append((lon, lat))  # type: ignore[arg-type]
    if not hits:  # else, said more loosely: an entry's name before its address ("Mixc Shopping Center, 136 Minzu
        # Avenue, ..."), or the entry with its city and district said first ("Chengdu Wuhou District South Railway Station")
        for piece in _ref_pieces(ref):
            key = norm_address(piece)
            hits += [(lon, lat) for addr, lon, lat in known  # type: ignore[misc]
                     if len(key) >= 8 and (norm_address(addr.split(",")[0]) == key
                                           or len(norm_address(addr)) >= 8 and key.endswith(norm_address(addr)))]
    if not hits:
        raise _Unclear
    lon0, lat0 = hits[0]
    if any(_haversine(lon0, lat0, lon, lat) > ADDRESS_TOLERANCE_M for lon, lat in hits):
        raise _Unclear  # the reference names places far apart
    return lon0, lat0


def _inclusive(m: re.Match[str]) -> bool:
    inc = (m.groupdict().get("inc") or m.groupdict().get("inc2") or "")
    return not inc.startswith(("exclusive", "not including", "不含"))


def _distance_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> DistanceSpec | None:
    text = f"{subject} {pred}"
    if not re.search(r"\d\s*(?:km|kilometers?|kilometres?|m|meters?|metres?|公里|千米|米)(?![a-z])|distance|距离", text):
        return None
    if re.search(r"\b(?:closest|nearest|farthest)\b|最近|最远", text):
        raise _Unclear
    p = pred.strip()
    m = None
    if _is_zh(text):
        for rx in _DIST_ZH:
            m = rx.match(p)
            if m:
                break
        sm = _DIST_SUBJ_ZH.match(subject) if m is None and re.search(r"距离|离", subject) else None
        if sm is not None:  # "X距离公司应在3公里以内", "X与Y的距离应不超过1公里": the reference in the subject
            m = _DIST_OVER_ZH.match(p) if neg else _DIST_PRED_ZH.match(p)
            neg = False
        if m is None or neg:
            raise _Unclear
        ref, inclusive = (sm.group("ref") if sm is not None else m.group("ref")), _inclusive(m)
    else:
        sm = _DIST_SUBJ.match(subject)
        if sm:
            m = (_DIST_PRED_NEG if neg else _DIST_PRED).match(p)
            ref = sm.group("ref") or sm.group("ref2")
        else:
            m = _DIST_EN_NEG.match(p) if neg else next((x for x in (rx.match(p) for rx in _DIST_EN) if x), None)
            ref = m.group("ref") if m else ""
        if m is None:
            raise _Unclear
        inclusive = _inclusive(m) and not m.groupdict().get("strict")
    lo = m.groupdict().get("lo")
    if lo and float(lo) >= float(m.group("n")):
        raise _Unclear
    lon, lat = _locate(ref, ctx)
    return DistanceSpec(reference=ref.strip(" .。"), longitude=lon, latitude=lat,
                        max_m=_metres(m.group("n"), m.group("unit")),
                        inclusive=inclusive, min_m=_metres(lo, m.group("unit")) if lo else 0.0)
