"""Product items (features): what an ordered product is or has, which option it comes with, what
size it serves; and, by the same grammar, what a place offers. This module holds the grammar of one
feature item (``_feature_item``); its parts are modules of their own: the model and its checks
(``feature.py``), finding a value in the catalogue (``values.py``), classes of food (``concept.py``), one
product with what its line has (``lines.py``), a place by what it sells or its kind (``place_kind.py``),
and exclusive sets (``only.py``).

The kind
    An item whose predicate names a value that the task's catalogue holds: a product ("Beef Noodles",
    "葱油拌面"), a word of a product's name or tags ("vegetarian", "caffeine-free", "招牌"), an option
    a product offers ("mild", "less ice", "hot", "微辣", "少冰", "大杯"), a serving size ("a set meal
    for two", "双人套餐"), or a place's tag or category ("dine-in available", "可堂食"). It is the
    last kind tried (``compile._requirement``), and a value found nowhere leaves the item to the judge.

The grammar (on the predicate after the modal, ``clauses._split_modal``)
    1. a verb of choosing, being or having opens the value: "(be) (selected / chosen / served /
       ordered) (as / with / in)", "select / choose / pick / order / buy / include / contain / have /
       offer / support / come with / be made of", "选择 / 是 / 为 / 包含 / 含有 / 带有 / 提供 / 支持 /
       具有 / 使用"; purposes and examples are cut ("such as ...", "如..."; an example naming a store,
       or "X等Y", leaves it to the judge).
    2. generic words around the value are dropped ("a product with", "drinks with", "... flavour /
       option / temperature / toppings", "...口味 / 规格 / 的饮品 / 相关商品"), as variants tried in
       turn; an ingredient left out is also tried in the other words menus use ("不加酱汁": "不需要酱汁",
       "免酱汁", "去酱汁").
    3. the value's scope: the subject's head noun (``clauses._head_class``: a place or a product),
       or an option when the item speaks of one ("temperature / sweetness / size / spiciness", "温度
       / 甜度 / 规格 / 辣度"; "flavour / options / choices / 口味 / 热饮" tries options first); each alternative of "or /
       或" must be found in that scope's catalogue (one scope only; of its readings, one the gold's
       products spell first: ``ItemContext.evidence``, ``spelling._first_found``), a cup size none offers aside
       ("小杯或中杯" where nothing comes small); "A and B" ("A, B, and C") is read the one way that finds every part;
       "X, not Y / rather than Y / 不能选择Y" adds Y negated; a negative modal negates the value.
    4. serving sizes (``serving._serving``): "a five-person meal", "a set meal for two", "a couple's set",
       "two individual sets", "双人套餐", "两人份": the value's own words when the catalogue has them,
       else "N person" (for one also "single portion", "individual"; for two also "couple"; "N人",
       "双人", "单人"), those found.
    5. Chinese shapes: a store named before the product ("<store>的X商品", "在<store>购买X": a
       ``StoreSpec`` and the product); a place described by what it offers ("提供/支持X服务的商家",
       "X标签"); what a product has ("带有X的商品", "X相关商品", "A和B两种商品"; "含有" negated stays
       unread, it may name a class); "热饮 / 冰饮" a temperature (one character, "热", is enough for
       an option); "..., 数量为N份" adds a ``CountSpec`` of that product. Judgement words ("新鲜",
       "销量", "正宗", "最...", "性价比") leave the item to the judge even where a tag shares them.
       One product, then what that line has ("包含一个给女儿的X，不加Y，Z口味", "在<store>下单X，选择Z";
       ``_zh_line_with_options``): one line is X, has each Z (an option of X, or the one option of X
       that shares nearly all of Z's characters) and lacks each Y that X's catalogue shows as a variant
       ("X加蛋"); class words around a value ("...成分 / 食材 / 配菜 / 馅", "X这种...", "X作为...") are
       dropped; "同时包含A和B" is one order that has both.
    6. a place by its kind or what it offers (``_place_kind_item``, tried before the features): "be
       (from / for) a <words> restaurant / shop / center ...", "provide / have <words> (service /
       facility / label)", "select restaurants that support <words>": the words (with the place noun,
       else without it) found in a place's name, tags or category; a judgement word ("well-known",
       "high-end", "chain", "listed") leaves it to the judge; "rather than a ..." is dropped.
    7. English in-store shapes: a plain "is / are" opens the value ("the ordered item is X"); "X
       should be chosen" takes the subject as the value ("X should be avoided": negated); "include (both) A and B" and "<serving size>
       with / that includes A and B" are each part where each is found (never stricter than the
       whole: a name holding both has each); "access to X", "X service / activity / ingredients", "X
       as a main ingredient", "the version without X", "X (gloss)" are X; a unit word the catalogue
       does not use is dropped last ("aerial yoga program" -> "aerial yoga", while something other
       than a count or size is left); "for one", "for 2-3 people", "a 2-3 person meal" are serving
       sizes; "the <place> should offer / provide X" where X is no place's tag but products have it
       is the places whose catalogue has X (a ``StoreSpec``; none when every place's does).
       "cannot contain both A and B" and superlatives ("the longest ...") stay the judge's.
    8. classes of food (``_concept_feature``, tried before the literal value; ``lexicon``): a value
       naming concepts ("不含油炸配菜或高嘌呤食材（如内脏、海鲜汤等）", "items containing organ meats
       should be avoided", "drinks without dairy products", "should contain meat") is a
       ``FeatureSpec`` with ``concepts`` (and the item's examples as phrases): negated, no line
       spells a term; else one line does (an option the catalogue offers keeps the literal reading).
       A value naming an absence ("不辣口味", "low caffeine or caffeine-free", "less sugar") has
       ``absent``: a line offering the value chose it; else it has the value, or (spice, caffeine:
       ``lexicon.SILENT_ABSENCE``) spells no term; for sugar or grease the line must say the
       absence ("Low sugar"). A line whose product offers the absence in other words (an option
       "免香菜" for "不加香菜的口味偏好", "No Sugar" for "less sugar") must have chosen one of them; where
       a line does, the other lines need only not show the concept. No product of the task spelling
       the concept (or its absence): unread (the check would hold whatever is ordered). An option
       "hot" is also "warm" (``lexicon.OPTION_SYNONYMS``).
    9. sizes, levels and what only frames a value: "a large portion size" / "大份量规格" is the size
       word ("large", "大份") as an option where one offers it, else a word of the product's name
       ("Large ... Rice", "...大份"); "three parts sugar / sweet" is "30% sugar / sweet" (as menus
       spell 三分糖); "the preference for X", "X的口味偏好", "a sweetness attribute of X", "X health
       benefits / effects", "X的养生功效", "X filling" are X; a place's "physical location with X" /
       "有实体店X" is X, and "可堂食" is also "堂食" (a tag "堂食店").
    10. exclusive sets (``_only_item``, tried before "other than / except / 除了" leave an item to the
       judge): "should not include any products / anything other than X", "should only include X",
       "include only X", "不应当有除了X外的其他商品", "只包含X": every line has one of X's phrases
       (``every``; X's parts joined by "and / or / 、 / 和" each a product the catalogue sells); a count
       ("only one set meal"), a store, or a value the catalogue does not sell is not this shape.
    11. English one product and what its line has (``_en_line_with_options``, the twin of the
       Chinese shape in 5): "include a X (for <whom>), without Y, with Z flavor": one line is X, has Z
       (an option of X, chosen where offered) and lacks Y (which X's catalogue spells: "X with Egg").
    12. words around a value: "X flavored Y" is "X Y" ("lemon flavored chicken feet"); "X as a staple
       food / side dish / main course" is X; a spice level said in full where a product's spice scale
       spells it bare ("mild spicy" -> "Mild" on "Non-spicy / Mild / Medium / Extra Spicy":
       ``_spice_options``); "the product brand (of X) / 商品品牌" is a word of the product's name
       (``clauses._PRODUCT_BRAND``), unless no product spells it and a chain's name does (a store).

Examples
    "The ramen should be mild or non-spicy"                   product: "mild" / "non-spicy"
    "The temperature of the cocoa should be hot"              option only: "hot"
    "The salad order must not contain peanuts"                product, negated (when peanuts are on the menu)
    "The dinner should be a set meal for four, not four single sets"   the value's own words
                                                              (or "4 person"), and "1 person" negated
    "The dessert shop should offer takeaway packaging"        place tag
    "The braised rice should specify a large portion size"    product: "large" (a word of its name)
    "The lemon tea should have a sweetness attribute of three parts sugar"   option: "30% sugar"
    "拿铁订单应选择少冰的饮品"                                   option: "少冰"
    "凉面订单应选择不要香菜的口味偏好"                             absence of cilantro ("免香菜" chosen)
    "火锅订单的商品应为双人套餐"                                 serving: "双人"
    "The pot stickers order should not include any products other than pot stickers"
                                                              every line: "pot stickers"
    "应在晴天茶饮（南门店）购买茉莉奶绿"                           store + product
    "午餐订单的商家需要支持可堂食服务"                             place tag: "可堂食"

The spec: ``FeatureSpec`` (scope ``product`` or ``place``, the phrases, negated, ``option_only``);
with a store or a count, several parts (``AllOf``, joined by ``compile``). How it is checked
(``product_feature_holds``): an ordered line has a phrase in its name, tags or chosen options, and
every line whose product offers the phrase as an option has chosen it (``option_only``: only chosen
options count; ``also`` / ``lacks``: one line has the phrase, each of ``also`` and none of ``lacks``); a note that contradicts the phrase ("extra spicy" where "mild" is asked,
``note.contradicts``) fails it; negated: no line has it. ``place_feature_holds``: the place's name,
tags or category has a phrase (negated: none does). Phrases match as ``text.phrase_in`` says.
"""

from __future__ import annotations

import re
from typing import Any

from .clauses import _EXAMPLE_EN, _EXAMPLE_ZH, _FOR_WHOM_EN, _PARTICIPLES, _cut_purpose, _head_class
from .concept import _concept_feature
from .feature import FeatureSpec
from .lexicon import OPTION_SYNONYMS
from .lines import _en_line_with_options, _zh_line_with_options
from .place import _PLACE_SUFFIX, StoreSpec, _store_item
from .place_kind import _SELLS, _place_selling
from .quantity import CountSpec
from .serving import _SERVING_WITH, _serving
from .text import _PHRASE_STOP, _is_zh, _knorm, _num, _stem, _Unclear, phrase_in
from .values import (
    _AND,
    _AVOIDED_ALONE,
    _CHOSEN_ALONE,
    _COPULA_VALUE,
    _EN_AND_COUNT,
    _FEATURE_VERBS_EN,
    _FEATURE_VERBS_ZH,
    _OPTION_WORDS,
    _OR,
    _SECOND_EN,
    _SECOND_ZH,
    _SIZE_VALUE,
    _SOFT_OPTION_WORDS,
    _TRAIL_EN,
    _TRAIL_ZH,
    _ZH_AND_COUNT,
    _ZH_ATTR_OF,
    _ZH_BOTH,
    _ZH_HAVING,
    _ZH_JUDGEMENT,
    _ZH_NEG_START,
    _ZH_ONE_CHAR_OPTIONS,
    _ZH_REL_PLACE,
    _ZH_TRAILING_EXAMPLE,
    _clean_value,
    _grouping,
    _resolve_phrase,
    _variants,
    _zh_bought_at,
    _zh_of_the_kind,
    _zh_place_prefix,
)
from .world import (
    _GENERIC_GOODS,
    ItemContext,
    _found,
    _places_named,
)


def _feature_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> list[Any] | None:
    """The parts a feature item asks for: the feature, and a store or a count said with it; a
    second predicate of the same subject ("..., and should have X", "...，且不含X") is read too. An
    exclusion (a negated predicate) the catalogue cannot tell is left out, the demand kept."""
    if not (ctx.places or ctx.products):
        return None
    zh = _is_zh(subject + pred)
    if re.search(r"以外|之外|除了|除(?=[\u4e00-\u9fff])|\b(?:other than|except|besides|apart from)\b", pred):
        raise _Unclear  # "不应选择蒜蓉以外的口味": everything but X (an exclusive set is read before; else the judge's)
    if zh and not neg:  # "包含一个手抓饼，不加蛋，甜面酱口味": one product, then what that line has
        line = _zh_line_with_options(pred, ctx)
        if line is not None:
            return line
    if not zh and not neg:  # "include a Jianbing for the daughter, without egg, with sweet bean sauce flavor"
        line = _en_line_with_options(pred, ctx)
        if line is not None:
            return line
    sm = (_SECOND_ZH if zh else _SECOND_EN).search(pred)
    if sm is not None and sm.groupdict().get("rest2") and (neg or re.match(r"(?:avoid|exclude|not|never)\b", pred)):
        sm = None  # "avoid ice and choose hot": a negation's reach is unclear past "and"; read as before
    if sm is None:
        return _one_feature(subject, neg, pred, ctx)
    rest = (sm.group("rest") or sm.groupdict().get("rest2") or "").strip(" ,，")
    if zh:
        nm = _ZH_NEG_START.match(rest)
        neg2, rest = (True, rest[nm.end():]) if nm else (False, rest)
        if nm and not _FEATURE_VERBS_ZH.match(rest):
            rest = "选择" + rest  # "避免油炸类": not "选择油炸类"
    else:
        neg2 = sm.groupdict().get("neg") is not None
        for word in ("not ", "never "):
            if rest.startswith(word):
                neg2, rest = True, rest[len(word):]
        for word in ("avoid ", "avoiding "):
            if rest.startswith(word):
                neg2, rest = not neg2, "select " + rest[len(word):]
        if rest.startswith("with "):  # "..., with the 'no milk' attribute": what it has
            rest = "have " + rest[5:]
    if neg2 and _OTHERS.match(rest):  # "点牛肉鸡蛋口味，不要其他口味": only restates that X is the one
        return _one_feature(subject, neg, pred[:sm.start()], ctx)
    parts: list[Any] = []
    for n, text in ((neg, pred[:sm.start()]), (neg2, rest)):
        try:
            parts += _one_feature(subject, n, text, ctx) or []
        except _Unclear:
            if not n:
                raise  # a demand not read: the item is the judge's
    if not parts:
        raise _Unclear
    return parts


# what a negation after a demand excludes when it only restates the demand: "其他口味", "any other flavor"
_OTHERS = re.compile(r"^(?:选择|选|是|为|有|含|点)?(?:其他|其它|别的|另外的)|^(?:select |choose |be |have |pick )?(?:any |the )?other\b")


# the values a vague demand stands for, said after it in brackets: "moderately spicy (Mild spicy or Medium spicy)",
# "辣度适中（微辣或中辣程度）"
_PAREN_ALTS = re.compile(r"[（(](?P<x>[^（）()]{2,40}?(?:或|\bor\b)[^（）()]{1,40}?)(?:程度|口味|\s+levels?)?[）)]\s*[。.]?$")


def _a_whole_tag(value: str, ctx: ItemContext) -> bool:
    """Whether some product's tag is ``value`` itself, or one of its alternatives ("辣度应为微辣或中辣" where
    products are tagged "微辣" and none offers a spice option: the tag is the level)."""
    alts = {a.strip(" '\"").casefold() for a in _OR.split(value) if a.strip()}
    return any(t.casefold() in alts for pr in ctx.products for t in pr.tags)


def _one_feature(subject: str, neg: bool, pred: str, ctx: ItemContext) -> list[Any] | None:
    """``_one_feature_as_said``; where that cannot read the demand, the alternatives it stands for when
    brackets at its end spell them (``_PAREN_ALTS``), or the demand without a gloss in brackets after an
    option ("去冰（不加冰）", "less ice (a little ice)"): only where the value before them is an option of the
    catalogue and the brackets name none (an option there, "少冰（大杯）", is a second demand: the judge's)."""
    try:
        return _one_feature_as_said(subject, neg, pred, ctx)
    except _Unclear:
        m = _PAREN_ALTS.search(pred)
        if m is None or neg:
            gm = _GLOSS.search(pred)
            if gm is None or not _glossed_option(pred[:gm.start()], gm.group("g"), ctx):
                raise
            return _one_feature_as_said(subject, neg, pred[:gm.start()], ctx)
    return _one_feature_as_said(subject, neg, ("为" if _is_zh(subject + pred) else "be ") + m.group("x"), ctx)


# a gloss in brackets at the end of a demand: "去冰（不加冰）", "less ice (a little ice)"
_GLOSS = re.compile(r"\s*[（(](?P<g>[^（）()]{1,20})[）)]\s*[。.]?$")


def _glossed_option(before: str, gloss: str, ctx: ItemContext) -> bool:
    """Whether ``before`` ends with an option of the catalogue and ``gloss`` says it again: it shares a character
    or a word with it and names no option (nor a product)."""
    options = {o.casefold() for pr in ctx.products for o in pr.options}
    tail = before.strip().casefold()
    value = max((o for o in options if len(o) >= 2 and tail.endswith(o)), key=len, default=None)
    if value is None:
        return False
    g = gloss.strip().casefold()
    # a gloss says the value again in other words: it shares a character (Chinese) or a word with it
    shared = set(value) & set(g) - set(" ") if _is_zh(value + g) else set(value.split()) & set(g.split())
    return bool(shared) and not any(phrase_in(g, o) or phrase_in(o, g) for o in options) and not _found(g, ctx, "product")


# a value with a second demand in brackets: a size or a level of a scale menus choose from ("Extra Spicy (large)")
_BRACKET_DEMAND = re.compile(r"^(?P<x>.{3,}?)\s*\((?P<g>[^()]{0,30}\b(?:small|medium|large|regular|big|extra|half|double|"
                             r"portions?|sizes?|cups?|bowls?|spicy|mild|hot|warm|iced?|cold|sugar|sweet|less|more)\b"
                             r"[^()]{0,30})\)$")
# what a menu adds to an option's name in brackets: "无糖（推荐）", "加葱花（默认）", "Regular (recommended)"
_OPTION_NOTE = re.compile(r"\s*[（(](?:推荐|默认|招牌|热销|必选|recommended|default|popular)[）)]", re.IGNORECASE)


def _one_feature_as_said(subject: str, neg: bool, pred: str, ctx: ItemContext) -> list[Any] | None:
    zh = _is_zh(subject + pred)
    p = _cut_purpose(pred)
    p = (_TRAIL_ZH if zh else _TRAIL_EN).sub("", p)
    if zh:  # "既有酥肉又有肥牛": both
        p = _ZH_BOTH.sub(r"包含\g<a>和\g<b>", p)
    else:  # "contain no X": not containing X (where nothing is called "no X")
        nm = re.match(r"^(?P<v>contain|include|have) no (?P<x>\S.*)$", p)
        if nm and not _found("no " + nm.group("x"), ctx, "product"):
            neg, p = not neg, f"{nm.group('v')} {nm.group('x')}"
        # "be free of X", "be without X", "be meat-free" (where nothing is called so): not having X
        fm = re.match(r"^(?:be|come|comes|arrive|be served|be made|be ordered|be prepared|be cooked|be done|be selected|be chosen) "
                      r"(?:free of|free from|without) (?P<x>\S.*)$", p) or \
            re.match(r"^be (?P<x>[a-z][a-z ]{1,30}?)-free$", p)
        if fm and not (p.endswith("-free") and _found(p[3:], ctx, "product")):
            neg, p = not neg, "have " + fm.group("x")
    alone = _CHOSEN_ALONE.match(p) or _AVOIDED_ALONE.match(p) if not zh else None
    if alone and subject and not re.search(r"\b(?:it|they|this|that|these|those|one)$", subject):
        # "(when selecting X,) boneless chicken feet should be chosen": the subject is the value; "dark roast
        # types such as X should be avoided": the subject, not chosen
        p, subject, neg = "select " + subject, "", neg != (alone.re is _AVOIDED_ALONE)
    if zh:  # "不含X" / "不加X" that the catalogue does not hold as such: not "含X"
        nm = re.match(r"^(?:不含有|不包含|不含|没有|不带|去掉|去除|拿掉|不放|不加)(?=.)", p)
        if nm and not _found(p, ctx, "product"):
            neg, p = not neg, "含有" + p[nm.end():]
    if zh and re.fullmatch(r"不(?:辣|甜|油腻|腻|咸|酸|麻|冰|凉)", p):
        p = "为" + p  # "鸡汤饭应不辣": a taste said as a state, as "应为不辣"
    concept = _concept_feature(subject, neg, p, zh, ctx)
    if concept is not None:  # "不应含有内脏类食材（如大肠、猪肝等）", "should be non-spicy"
        return [concept]
    if zh:  # "避免深烘类型，如深烘澳白等": an example after the value only shows what the value covers
        p = _ZH_TRAILING_EXAMPLE.sub("", p)
    if zh and re.search(r"等", p):
        raise _Unclear  # "米饭等主食": the kind is what is asked, the dish only an example
    example = (_EXAMPLE_ZH if zh else _EXAMPLE_EN).search(p)
    if example:
        if re.search(r"\b(?:from|at)\b|来自|店", p[example.start():]):
            raise _Unclear
        p = p[:example.start()]
    p = p.strip(" ,，")
    count_n: int | None = None
    at_store: StoreSpec | None = None
    if zh:
        cm = _ZH_AND_COUNT.search(p)  # "包含X商品，数量为2份": the product, and how many of it
        if cm:
            count_n, p = int(_num(cm.group(1))), p[:cm.start()]
        at_store, p = _zh_bought_at(p, neg, ctx)  # "在<place>购买X"
    elif not neg:
        cm = _EN_AND_COUNT.search(p)
        if cm:
            count_n, p = int(_num(cm.group(1))), p[:cm.start()]
    m = (_FEATURE_VERBS_ZH if zh else _FEATURE_VERBS_EN).match(p)
    if m is None and zh and re.fullmatch(r"[^，,。]{1,16}的", p):
        p = "为" + p  # "不要韭菜馅的", "要小份的": a 的-phrase is what is (not) wanted
        m = _FEATURE_VERBS_ZH.match(p)
        concept = _concept_feature(subject, neg, p[:-1], zh, ctx)
        if concept is not None:  # "要软糯的": a class ("软糯"), said as a 的-phrase
            return [concept]
    if m is None and zh and len(p) <= 8 and any(_knorm(p) in (_knorm(o), _knorm(_OPTION_NOTE.sub("", o)))
                                                for pr in ctx.products for o in pr.options):
        # "果汁必须去冰", "鸡汤饭应不加葱花", "美式需要无糖" (the option "无糖（推荐）"): the value is a catalogue option,
        # said with no verb
        p = "选择" + p
        m = _FEATURE_VERBS_ZH.match(p)
    if m is None and zh and len(p) <= 6 and any(_knorm(p) == _knorm(t) for pr in ctx.products for t in pr.tags):
        p = "具有" + p  # "晚餐套餐要开胃": a tag of the catalogue, said with no verb
        m = _FEATURE_VERBS_ZH.match(p)
    if m is None and not zh and _COPULA_VALUE.match(p):
        p = "be " + p  # "the ordered item is durian pizza": the copula was the modal, the value follows it
        m = _FEATURE_VERBS_EN.match(p)
    if m is None:
        raise _Unclear
    value = p[m.end():]
    # "include one X item", "包含一杯X的商品": some line has X, not every line
    some = not neg and re.match(r"^(?:include|includes|contain|contains|have|has|包含|含有|有)", m.group("v")) is not None \
        and re.match(r"^(?:one|a single|1) \S+ |^(?:一|1)(?:杯|份|个|款|种|件|盒|碗).", value) is not None
    head_class = _head_class(subject)
    words = re.findall(r"[a-z]+", re.split(r"\b(?:at|from|in|for|of|to|with|by|on)\b", subject, maxsplit=1)[0])
    head = next((w for w in reversed(words) if w not in _PARTICIPLES), "")
    # "X, not Y" / "X rather than Y" / "X，不能选择Y": the second half is a negated part
    extra_neg = ""
    rm = re.search(r"(?<=\S),?\s*(?:\bnot\b|\brather than\b|\binstead of\b)\s+(?:be |a |an |the )?(.+)$", value) if not zh else \
        re.search(r"[，,]?(?:不能|不应|不要|不可|而不是|而非|不是)(?:选择|是|为)?(.+)$", value)
    if rm and value[:rm.start()].strip(" ,"):  # (a value that starts with it, "Not Spicy", is the option's name)
        value, extra_neg = re.sub(r"\s+(?:and|but)$", "", value[:rm.start()]), rm.group(1)
        if value.count("(") > value.count(")") and extra_neg.endswith(")"):  # "Extra Spicy (not Medium Spicy)"
            value, extra_neg = re.sub(r"\s*\($", "", value), extra_neg[:-1]
        if _OTHERS.match(extra_neg):
            extra_neg = ""  # "X，不要其他口味", "X, not other flavors": only restates that X is the one
    if neg and re.match(r"^both ", value):
        raise _Unclear  # "cannot contain both A and B": not the two together, which one line need not show
    value = _clean_value(value, zh, head)
    if not zh:  # "provide high chairs for infants": what is provided, not who it is for (weaker, never stricter)
        value = _FOR_WHOM_EN.sub("", value)
    if zh and _ZH_JUDGEMENT.search(value):
        raise _Unclear  # "新鲜", "销量最好", "正宗": a judgement, even where a tag shares the words
    store_part: StoreSpec | None = None
    if zh:  # "提供堂食服务的商家": a place that offers the value; "X的商品" from a named place: the store
        rel = _ZH_REL_PLACE.match(value)
        if rel:
            value, head_class = rel.group("x"), "place"
        else:
            store_part, value = _zh_place_prefix(value, neg, ctx)
            if not neg:  # "带有麻酱口味的商品": the value is what the product has
                value = _ZH_HAVING.sub(r"\g<x>", value)
            if not _found(value, ctx, "product"):  # "无奶属性的咖啡": the value of the attribute
                value = _ZH_ATTR_OF.sub(r"\g<x>", value)
            value = _zh_of_the_kind(value, subject, ctx)
        if at_store is not None:
            if store_part is not None or head_class == "place":
                raise _Unclear
            store_part, head_class = at_store, "product"
        if store_part is not None and len(value) >= 2 and value in store_part.name:
            try:
                _resolve_phrase(value, zh, "product", head, ctx)
            except _Unclear:
                return [store_part]  # "在徐姐水煮油炸购买水煮油炸": what the store is named for, which it sells
    if not value and store_part is None:
        raise _Unclear
    # a product bought from a named place: "purchase X from Y"
    fm = re.match(r"^(?P<what>.+?) (?:from|at) (?:the |a |an |one of the )?(?P<where>.+)$", value) if not zh else None
    parts: list[Any] = [store_part] if store_part is not None else []
    if store_part is not None and not value:
        return [store_part]  # "X的商品": the store is all it asks
    named = bool(fm) and bool(_places_named(fm.group("where"), ctx, chain=True)
                              or _places_named(_PLACE_SUFFIX.sub("", fm.group("where")), ctx, chain=True))
    if fm and not named and _PLACE_SUFFIX.search(fm.group("where")):
        raise _Unclear  # "the cake bought from the X store" where no X is known: never the cake alone
    if fm and named:
        store = _store_item(subject, False, "from " + fm.group("where"), ctx)
        if store is None or neg:
            raise _Unclear
        parts.append(store)
        value = _clean_value(fm.group("what"), zh, head)
        if _stem(value.split()[-1]) in _GENERIC_GOODS and len(value.split()) <= 2:
            return [store]  # "select products from X": the store is all it asks
        named = {_stem(w) for w in re.findall(r"[a-z]+", store.name)}
        if {_stem(w) for w in re.findall(r"[a-z]+", value)} - _PHRASE_STOP - {"food", "dish", "item", "product"} <= named:
            try:
                _resolve_phrase(value, zh, head_class, head, ctx)
            except _Unclear:
                return [store]  # "boiled and deep-fried food from Sister Xu's Boiled and Deep-fried": what it sells
    if not zh and not neg and not parts and not extra_neg and head_class == "place" and _SELLS.match(m.group("v")):
        selling = _place_selling(value, head, ctx)  # "the table tennis hall should offer a 2-hour trial class"
        if selling is not None:
            return [selling]
    option = bool(_OPTION_WORDS.search(f"{subject} {pred}"))
    soft = bool(_SOFT_OPTION_WORDS.search(f"{subject} {pred}"))

    def feature(text: str, negated: bool) -> FeatureSpec:
        serving = _serving(text, zh, ctx) if head_class != "place" else None
        if serving is not None:  # "a set meal for two": a product for that many people
            return FeatureSpec(scope="product", phrases=serving, negated=negated)
        try:
            one_char = zh and text in _ZH_ONE_CHAR_OPTIONS  # "选择热的": a temperature, an option where one is offered
            scope, alts = _resolve_phrase(text, zh, "option" if option or soft or one_char else head_class, head, ctx,
                                          partial=not negated)
        except _Unclear:
            if option and not _SIZE_VALUE.match(text) and not _a_whole_tag(text, ctx):
                raise  # "a large portion size" where no option offers it: a word of the product's name
            scope, alts = _resolve_phrase(text, zh, head_class, head, ctx, partial=not negated)
        one = some and not negated and scope != "place"
        if scope != "place" and not negated:  # "hot" is also "warm" (``lexicon.OPTION_SYNONYMS``): not an iced drink
            alts = list(dict.fromkeys(alts + [w for a in alts for w in OPTION_SYNONYMS.get(a, ()) if _found(w, ctx, "option")]))
        if scope == "option":
            return FeatureSpec(scope="product", phrases=alts, negated=negated, option_only=True, some=one)
        return FeatureSpec(scope=scope, phrases=alts, negated=negated, some=one)  # type: ignore[arg-type]

    def excluded(text: str) -> FeatureSpec:
        """A negated value: its alternatives the catalogue holds ("not large or extra-large cups"
        where nothing comes extra-large: not large); none found: ``_Unclear``."""
        try:
            return feature(text, True)
        except _Unclear:
            unsold = _unsold_flavour(text, zh, head, (option or soft) and not extra_neg, ctx)
            if unsold is not None:
                return unsold
            alts = [a for a in _OR.split(text) if a.strip()]
            if len(alts) < 2:
                raise
        found: list[FeatureSpec] = []
        for alt in alts:
            try:
                found.append(feature(_clean_value(alt, zh, head), True))
            except _Unclear:
                continue
        if not found or len({(x.scope, x.option_only) for x in found}) != 1:
            raise _Unclear
        return found[0].model_copy(update={"phrases": [q for x in found for q in x.phrases]})

    split: list[FeatureSpec] = []
    if not zh and not neg and " and " in value and re.match(r"^(?:include|contain|have|has|come with)", m.group("v")):
        try:  # "include A and B": each of them, also where one name holds both (a weaker reading, never a stricter one)
            split = [feature(_clean_value(piece, zh, head), False)
                     for piece in _grouping(value, zh, head, ctx, option, head_class)]
        except _Unclear:
            split = []
    wm = _SERVING_WITH.match(value) if not zh and not neg and not split and head_class != "place" else None
    if wm and _serving(wm.group("s"), zh, ctx) is not None:  # "a single-person meal with X": the size, and X
        rest = _clean_value(wm.group("v"), zh, head)
        try:  # "with A and B": each of them where each is found (as for "include A and B"), else the whole
            what = [feature(_clean_value(x, zh, head), False) for x in _grouping(rest, zh, head, ctx, option, head_class)]
        except _Unclear:
            what = [feature(rest, False)]
        split = [feature(wm.group("s"), False), *what]
    bm = _BRACKET_DEMAND.match(value) if not zh and not neg and not split else None
    if bm and not _found(value, ctx, "product"):
        try:  # "Extra Spicy (large)": the value and the size or level its brackets ask for, where both are found
            split = [feature(_clean_value(bm.group("x"), zh, head), False),
                     feature(_clean_value(bm.group("g"), zh, head), False)]
        except _Unclear:
            split = []  # a gloss ("you mian (oat noodles)"): the value before it (``values._variants``)
    try:
        if split:
            parts += split
        else:
            parts.append(excluded(value) if neg else feature(value, neg))
    except _Unclear:
        if neg:
            raise  # "not X and Y": not both, or neither?
        parts += [feature(_clean_value(piece, zh, head), False) for piece in _grouping(value, zh, head, ctx, option,
                                                                                        head_class)]
    if extra_neg:
        if neg:
            raise _Unclear
        try:
            parts.append(excluded(_clean_value(extra_neg, zh, head)))
        except _Unclear:
            pass  # "hot, not cold" where nothing is called cold: the demand says it all
    if count_n is not None:
        goods = [x for x in parts if isinstance(x, FeatureSpec)]
        if len(goods) != 1 or goods[0].scope != "product" or goods[0].negated or goods[0].option_only \
                or len(goods[0].phrases) != 1 or count_n < 1:
            raise _Unclear
        parts.append(CountSpec(what="items", value=count_n, phrase=goods[0].phrases[0]))
    return parts  # several: compile joins them (AllOf)


# a degree or a judgement ("too sweet", "太油腻"): not a flavour a menu spells
_DEGREE = re.compile(r"\b(?:too|very|overly|excessively|extremely|so|quite|rather|more|less|most|least|fairly|slightly|"
                     r"high|low|heavy|light|strong|mild)\b|太|过于|过|很|非常|偏|较|比较|最|重|淡|浓")


def _unsold_flavour(text: str, zh: bool, head: str, flavour: bool, ctx: ItemContext) -> FeatureSpec | None:
    """A flavour or option the item excludes that nothing in the task's catalogue spells in any reading
    ("must not be gold soup flavor", "不是金汤口味" where no product, option, tag or place holds "gold soup" /
    "金汤"): no product may spell it, which is the demand as said (every product this world sells meets it,
    as every route the item allows does). Only for a value the item calls a flavour or option (``flavour``)
    that names a thing, not a degree or judgement ("too sweet", "太油腻"); None otherwise."""
    if not flavour or _OR.search(text) or _AND.search(text) or _DEGREE.search(text) or (zh and _ZH_JUDGEMENT.search(text)):
        return None
    tries = _variants(text, zh, head)
    bare = tries[-1]
    if (not 2 <= len(bare) <= 6 if zh else len(bare) < 3 or len(bare.split()) > 3) or bare in _GENERIC_GOODS \
            or _stem(bare) in _GENERIC_GOODS or (not zh and not re.fullmatch(r"[a-z][a-z' -]*", bare)):
        return None
    if any(_found(v, ctx, sc) for v in tries for sc in ("product", "place")):
        return None
    return FeatureSpec(scope="product", phrases=[bare], negated=True)
