"""Product items (features): what an ordered product is or has, which option it comes with, what
size it serves; and, by the same grammar, what a place offers.

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
from typing import Any, Literal

from .clauses import _EXAMPLE_EN, _EXAMPLE_ZH, _PARTICIPLES, _cut_purpose, _head_class
from .lexicon import ABSENCE, OPTION_SYNONYMS, SILENT_ABSENCE, VAGUE_ABSENCE, concept_value, example_phrases, mentions
from .note import contradicts, spice_levels
from .place import _PLACE_SUFFIX, StoreSpec, _store_item
from .quantity import _COUNT_UNITS, CountSpec
from .serving import _SERVING_WITH, _serving
from .spelling import _first_found, _gold_part, _gold_places_spell, _zh_gold_span
from .text import _NUM_RE, _NUMBER_WORDS, _PHRASE_STOP, _is_zh, _knorm, _num, _stem, _Unclear, _zh_number, phrase_in
from .world import (
    _GENERIC_GOODS,
    _UNIT_TAIL_EN,
    ItemContext,
    PlaceInfo,
    RecordFacts,
    _chose,
    _content_left,
    _found,
    _line_fields,
    _line_has,
    _offers,
    _place_fields,
    _places_named,
    _Spec,
    fields_have,
)


class FeatureSpec(_Spec):
    """A store feature (``scope="place"``: the place's name, tags or category) or a product one
    (``"product"``: an ordered line's name, tags or chosen options) matches one of ``phrases``;
    ``negated``: none does. A product option the line's product offers must be the one chosen;
    ``option_only``: the item speaks of an option (temperature, sweetness, size...), so only the
    chosen options count, not names or tags."""

    kind: Literal["feature"] = "feature"
    scope: Literal["place", "product"]
    phrases: list[str]
    negated: bool = False
    option_only: bool = False
    some: bool = False  # "include one room-temperature item": one line is enough, not every line
    # one line has the phrase and, on that same line, each of ``also`` (chosen where its product offers it,
    # else in its name or tags) and none of ``lacks`` ("一个手抓饼，不加蛋，甜面酱口味")
    also: list[str] = []
    lacks: list[str] = []
    # a class of food (``lexicon.CONCEPTS``: "offal", "dairy"): a line has the feature where it has a phrase (the
    # item's examples) or a term of a concept; ``absent``: a value naming a concept's absence ("non-spicy"): a line
    # that does not offer the phrase as an option has it, or shows none of the concept's terms
    concepts: list[str] = []
    absent: list[str] = []
    # "should not include any products other than X", "只包含X": every line has a phrase (an exclusive set)
    every: bool = False


def product_feature_holds(spec: FeatureSpec, record: RecordFacts) -> bool:
    """A product feature (``scope="product"``) of the record's ordered lines."""
    lines = list(record.lines)
    if spec.every:  # an exclusive set: the order holds something, and nothing that is not one of the phrases
        return bool(lines) and all(_line_has(x, spec.phrases) for x in lines)
    if spec.concepts:
        hit = [_line_has(x, spec.phrases) or _mentions_line(spec.concepts, x) for x in lines]
        return bool(lines) and (not any(hit) if spec.negated else any(hit))
    if spec.absent and not spec.negated:
        if record.note and any(contradicts(p, record.note, plain=False) for p in spec.phrases):
            return False
        said = [w for c in spec.absent for w in ABSENCE.get(c, ())]  # "Low sugar" in a name or tag says it too
        # a line whose product offers the absence under other words ("免香菜" for "不加香菜") must have chosen it;
        # where one does, the order says the absence there, and the other lines need only not show the concept
        opted = [w for w in said if w not in VAGUE_ABSENCE]
        silent = all(c in SILENT_ABSENCE for c in spec.absent) or any(_offers(x, opted) for x in lines)
        return bool(lines) and all(_chose(x, spec.phrases) if _offers(x, spec.phrases) else
                                   _chose(x, opted) if _offers(x, opted) else
                                   _line_has(x, spec.phrases) or _line_has(x, said) and not _mentions_line(spec.absent, x)
                                   or silent and not _mentions_line(spec.absent, x) for x in lines)
    if spec.also or spec.lacks:
        return any(_line_has(x, spec.phrases) and not any(_line_has(x, [b]) for b in spec.lacks)
                   and all(_chose(x, [a]) if _offers(x, [a]) else _line_has(x, [a]) for a in spec.also) for x in lines)
    has = _chose if spec.option_only else _line_has
    if spec.negated:
        return bool(lines) and not any(has(x, spec.phrases) for x in lines)
    if record.note and any(contradicts(p, record.note, plain=False) for p in spec.phrases):
        return False  # a note saying "extra spicy" where the item asks for mild
    bound = [x for x in lines if _offers(x, spec.phrases)]
    if spec.some:  # one line has it: chosen where offered, else in its name or tags
        return any(_chose(x, spec.phrases) if x in bound else not spec.option_only and _line_has(x, spec.phrases)
                   for x in lines)
    if bound:  # an option the product offers: every such line must have chosen it
        return all(_chose(x, spec.phrases) for x in bound)
    return not spec.option_only and any(_line_has(x, spec.phrases) for x in lines)


def _mentions_line(concepts: list[str], line: Any) -> bool:
    """Whether an ordered line's name, tags or chosen options spell one of the concepts."""
    return mentions(concepts, " | ".join(_line_fields(line)))


def place_feature_holds(spec: FeatureSpec, place: PlaceInfo) -> bool:
    """A place feature (``scope="place"``): the place's name, tags or category."""
    found = fields_have(_place_fields(place), spec.phrases)
    return found != spec.negated


# ----- the grammar ----------------------------------------------------------------------------------
_FEATURE_VERBS_EN = re.compile(
    r"^(?:still |only |also |definitely |preferably |specifically |all )*(?P<v>be (?:equipped with|suitable for)|"
    r"be (?:located|situated) (?=(?:in|within|inside|near|at) )|"
    r"be (?:selected|chosen|set|specified|served|ordered) (?:as |with |in )?|(?:select|choose|specify|have) the |specify |"
    r"be made (?:of|with|from) |"
    r"be (?:a |an |the )?|be for |select |choose |pick |opt for |order |buy |purchase |use |include |includes |"
    r"contain |contains |have |has |provide |offer |support |feature |serve |come with |allow |specialize in |"
    r"be made (?:of|with) |be in |be of |place (?:a |an )?(?:new )?order (?:for |of )|reorder |re-order )")
_FEATURE_VERBS_ZH = re.compile(r"^(?:仍然|依然|仍|继续|还是|也|都|均|同时|要)?(?P<v>选择|选|是|为|包含|包括|含有|含|带有|有|提供|支持|具有|具备|配有|"
                               r"配备|附带|附有|属于|使用|用|加|放|做成|能够|可以|出现|点|买|购买|订购|(?:可|能)(?=堂食|外带|外卖|自取|打包|预约|预订|停车|刷卡|配送))")
_GENERIC_TAIL_EN = re.compile(r"\s+(?:flavou?r(?:ed)?|taste|style|type|version|option|specification|variety|kind|items?|"
                              r"products?|dish(?:es)?|properties|property|attribute|choice|drink|beverage|food|temperature|"
                              r"sweetness|size|service|activity|activitie|ingredient|filling|stuffing|topping|(?:health )?benefit|(?:health )?effect|"
                              r"preference|(?:time )?slot|(?:price )?characteristic|(?:price )?feature|trait|one)s?(?: selected| chosen)?$")
_GENERIC_TAIL_ZH = re.compile(r"(?:的)?(?:口味|味道|风味|规格|选项|属性|类型|类|款|商品|产品|菜品|的|种类|温度|甜度|辣度|饮品|饮料|"
                              r"食品|版本|形式|服务|标签|相关|[两二三四五六]种|成分|食材|配料|配菜|做法|制作方式|方式|元素|"
                              r"这?[两二三四五六]样|馅|馅料|特征|特点|品牌|(?:养生|保健|健康|食疗)?功效|(?:养生|保健)?作用|偏好|口味偏好)$")
_GENERIC_HEAD_EN = re.compile(r"^(?:products?|items?|dish(?:es)?|options?|drinks?|beverages?|food|packages?|set meals?|"
                              r"set menus?|sets?|combos?|services?|meals?) (?:(?:that|which) (?:are|is|have|has|contain|"
                              r"contains|include|includes|offers?|provides?|features?|comes? with) |with (?:an? |the )?|"
                              r"containing |including |featuring |of )")
_AND = re.compile(r"\s+and\s+|\s+as well as\s+|\s+along with\s+|\s+plus\s+(?=(?:the|a|an|one|two|\d)\b)|、|和|以及|及|与")
_OR = re.compile(r"\s+or\s+|或者|或是|或")


def _clean_value(x: str, zh: bool, heads: str) -> str:
    x = x.strip(" '\"“”,，.。")
    x = re.sub(r"^(?:for |of |with )?(?:a |an |the |any |one (?!(?:person|people)\b)|a single )?(?:'|\")?", "", x).strip(" '\"“”")
    if x.count("'") == 1:  # "the 'no milk' attribute": the closing quote of one the article hid
        x = re.sub(r"(?<=[a-z0-9])'(?=\s|$)", "", x).strip()
    if zh:
        x = re.sub(r"^(?:的)", "", x)
        x = re.sub(r"^(?:一|1)(?:杯|份|个|款|种|件|盒|碗)(?=..)", "", x)  # "一杯常温的饮品": one of them is enough
        x = re.sub(r"^(?:任何|任意)", "", x)
        # "适合2-3人分量的套餐": the people it serves ("2-3人套餐")
        x = re.sub(r"^适合(?=[\d一二两三四五六七八九十])", "", x)
        x = re.sub(r"(?<![\d一二两三四五六七八九十])([一二两三四五六七八九十])(?=\s*(?:到|至|~|～|-)\s*[一二两三四五六七八九十]人)",
                   lambda m: str(_zh_number(m.group(1))), x)  # "两到三人": "2到三人"
        x = re.sub(r"(?<=\d)(\s*(?:到|至|~|～|-)\s*)([一二两三四五六七八九十])(?=人)", lambda m: "-" + str(_zh_number(m.group(2))), x)
        x = re.sub(r"(?<=\d)\s*(?:到|至|~|～)\s*(?=\d+人)", "-", x)  # "2到3人": "2-3人"
        x = re.sub(r"(?<=人)(?:分量|份量|食用|用餐)?的?(?=套餐|餐|份)", "", x)
        x = re.sub(r"(?<=\d人)份的?(?=套餐|餐)", "", x)  # "2-3人份的套餐": "2-3人套餐"
        x = re.sub(r"(?<=\d-\d人)份$", "", x)  # "2-3人份": "2-3人"
        x = re.sub(r"^(?:有)?实体(?:店|门店|店面)(?:且|并且|并|、)?(?=..)", "", x)  # "有实体店可堂食的": 可堂食
        x = re.sub(r"(?<=..)(?:这[一两二三四五六些]?(?:种|类|款|样|个|道|商品|产品|菜品|饮品)?(?=.)|这样的|作为).*$", "", x)  # "X这种清爽甜点", "X这两种配菜": X
        x = re.sub(r"(?<=.)的$", "", x)  # "不加葱的", "热的": the value
        x = re.sub(r"^(?:(?:与|和|跟)(?P<x>.{2,}?)相关)(?:的)?(?P<t>.*)$", r"\g<x>\g<t>", x)
        return x
    x = re.sub(r"^(?:anything|something|any|all) (?=[a-z][a-z-]*(?: or [a-z][a-z-]*)?$)", "", x)  # "anything spicy or greasy"
    x = _GENERIC_HEAD_EN.sub("", x)
    x = re.sub(r"^at (?=room temperature\b)", "", x)  # "be at room temperature"
    x = _SUITS_PEOPLE.sub("for ", x)  # "a set meal suitable for 2-3 people": the people it serves
    x = re.sub(r"^(?:sweetness|sugar|spic(?:e|iness)|temperature|size|ice)(?: level| attribute| option)? (?:of|as) "
               r"(?:an? |the )?(?=\S)", "", x)  # "a sweetness attribute of three parts sugar"
    x = re.sub(r"^(?:the |a |an )?preferences? (?:for|of) (?:an? |the )?(?=\S)", "", x)  # "the preference for no cilantro"
    x = re.sub(r"^(?:a |an )?(?:physical |brick-and-mortar )(?:locations?|stores?|shops?|storefronts?|premises) "
               r"(?:with|that (?:has|offers|provides)) (?=\S)", "", x)  # "a physical location with Dine-in Available"
    x = re.sub(r"^(?:(?:free |unlimited )?access to|(?:the )?use of) (?:a |an |the )?(?=\S)", "", x)  # "access to a private room"
    x = re.sub(r"^both (?=\S.* and \S)", "", x)  # "both A and B": each of them
    x = re.sub(r"^(?:version|variant|one|kind|type|option)s? (?:with (?:an? |the )?(?=\S)|(?=without ))", "", x)  # "the version without butter"
    x = re.sub(r" as (?:a |the )?(?:main |key |primary )?(?:(?:side )?ingredients?|staple(?: foods?)?|side dish(?:es)?|"
               r"main (?:course|dish)(?:es)?|toppings?|fillings?|add-ons?)$", "", x)  # "X as a main ingredient", "A and B as toppings"
    x = re.sub(r"(?<=[a-z])[- ]flavou?red (?=[a-z])", " ", x)  # "lemon flavored chicken feet": lemon chicken feet
    x = re.sub(r"^(?:items?|products?|anything|something) (?:related to|relating to) ", "", x)
    x = re.sub(r"^related to ", "", x)
    x = re.sub(r"(?<=[a-z0-9])[- ]related(?= |$)", "", x)  # "gardenia-related flavors": gardenia
    return x


_SUITS_PEOPLE = re.compile(r"\b(?:suitable|ideal|good|enough|right) for (?=(?:\d+(?:\s*-\s*\d+)?|one|two|three|four|five|six|"
                           r"seven|eight|nine|ten)\s+(?:people|persons|diners|guests)\b)")


def _variants(x: str, zh: bool, subject_head: str) -> list[str]:
    """The value, then with generic words stripped ("gold soup flavor" -> "gold soup")."""
    out = [x]
    if zh:
        y = x
        for _ in range(3):
            y2 = _GENERIC_TAIL_ZH.sub("", y)
            if y2 == y or not y2:
                break
            y = y2
            out.append(y)
        if len(out[-1]) > 1 and out[-1].endswith(("味", "饮")):  # "桃子味" -> "桃子", "热饮" -> "热"
            out.append(out[-1][:-1])
        size = _SIZE_ZH.match(out[-1])  # "大份量" -> "大份"
        if size:
            out.append(size.group("s") + "份")
        service = _SERVICE_ZH.match(out[-1])  # "可堂食" -> "堂食" ("堂食店")
        if service:
            out.append(service.group("x"))
        without = _WITHOUT_ZH.match(out[-1])  # "不加酱汁" is what a menu may spell "不需要酱汁" / "免酱汁" / "去酱汁"
        if without:
            out += [w + without.group("x") for w in _WITHOUT_WORDS_ZH if w != without.group("w")]
    else:
        y = x
        for _ in range(3):  # "hot drink temperature" -> "hot drink" -> "hot"
            y2 = _GENERIC_TAIL_EN.sub("", y)
            if y2 == y or not y2 or re.search(r"\b(?:and|or|with|of|no|not|without)$", y2):
                break  # "cake and beverage" is two things, "no sauce option" keeps its "no"
            y = y2
            out.append(y)
        if subject_head and y.endswith(" " + subject_head):
            out.append(y[: -len(subject_head) - 1])
        gloss = re.match(r"^(?P<x>.{3,}?)\s*\([^()]{2,}\)$", y)  # "you mian (oat noodles)": the name before its gloss
        if gloss:
            out.append(gloss.group("x"))
        parts = _PARTS_EN.match(out[-1])  # "three parts sugar" (三分糖) -> "30% sugar"
        if parts:
            n = int(_NUMBER_WORDS.get(parts.group("n"), parts.group("n")))
            if 0 < n < 10:
                out.append(f"{10 * n}% {parts.group('w')}")
        size = _SIZE_EN.match(out[-1])  # "large portion" -> "large" ("Large Pork Knuckle Rice")
        if size:
            out.append(size.group("s"))
        unit = _UNIT_TAIL_EN.search(out[-1])  # tried last: "aerial yoga program" -> "aerial yoga"
        if unit and _content_left(out[-1][:unit.start()]):
            out.append(out[-1][:unit.start()])
    return [v for v in dict.fromkeys(v.strip(" '\"“”‘’") for v in out) if v]


# a size said with its unit: the size word alone is what a name or option spells ("Large ...", "...大份")
_SIZE_EN = re.compile(r"^(?P<s>small|medium|large|extra[- ]large|big|half|full|double)[- ](?:portion|size|serving|bowl|"
                      r"cup|portion size|serving size)s?$")
_SIZE_ZH = re.compile(r"^(?P<s>大|中|小|半|超大|特大)(?:份量|分量|份的量)$")
# an ingredient left out, in the words menus use for it
_WITHOUT_WORDS_ZH = ("不加", "不要", "不需要", "不放", "免", "去", "无")
# the words that open a value ("无" only ends the list: "无糖" names a kind of product, not a choice left out)
_WITHOUT_ZH = re.compile(rf"^(?P<w>{'|'.join(w for w in _WITHOUT_WORDS_ZH if w != '无')})(?P<x>[\u4e00-\u9fff]{{1,6}})$")
# a sugar level in tenths ("three parts sugar", "3 parts sweet": 三分糖), as a menu spells it ("30% Sugar")
_PARTS_EN = re.compile(r"^(?P<n>[1-9]|one|two|three|four|five|six|seven|eight|nine)[- ]parts? (?P<w>sugar|sweet)(?:ness)?$")
# a service said with "can" ("可堂食"): the service itself, as a tag may spell it ("堂食店")
_SERVICE_ZH = re.compile(r"^(?:可以|可|能够|能)(?P<x>堂食|外带|外卖|自取|打包|预约|预订|停车|刷卡|配送)$")
# a value that is a size ("large portion size", "大份量规格"): an option where one offers it, else a word of the name
_SIZE_VALUE = re.compile(r"^(?:small|medium|large|extra[- ]large|big|half|full|double)[- ](?:portion|size|serving|bowl|cup)"
                         r"|^(?:大|中|小|半|超大|特大)(?:份|分量|杯|碗|号)")


_ZH_ONE_CHAR_OPTIONS = frozenset({"热", "冰", "温"})
_CUP_SIZE = re.compile(r"^(?:小|中|大|超大|特大|标准)(?:杯|份|碗|号)$|^(?:small|medium|large|extra[- ]large|regular|standard) "
                       r"(?:cup|size|portion|bowl|serving)s?$|^(?:small|medium|large|extra[- ]large)$")


def _resolve_phrase(x: str, zh: bool, scope: str | None, head: str, ctx: ItemContext,
                    partial: bool = False) -> tuple[str, list[str]]:
    """(scope, alternatives) of a value: each alternative ("mild or non-spicy") found in the
    catalogue of one scope (the subject's, else the only one where all are found). ``partial`` (a
    value asked for, not excluded): a product value the gold's products do not spell may be read as
    the part of it they do (``_gold_part``)."""
    x = x.strip(" '\"“”‘’")
    alts = [a.strip(" '\"“”‘’") for a in _OR.split(x) if a.strip(" '\"“”‘’")]
    if any((len(a) < 2 and not (zh and scope == "option" and a in _ZH_ONE_CHAR_OPTIONS)) or a in _GENERIC_GOODS
           or _stem(a) in _GENERIC_GOODS for a in alts):
        raise _Unclear
    if zh and any(len(v) < 2 and not (scope == "option" and v in _ZH_ONE_CHAR_OPTIONS)
                  for a in alts for v in _variants(a, zh, head)[-1:]):
        raise _Unclear  # one character ("肉") says too little, but for an option a temperature ("热") does
    if not alts:
        raise _Unclear
    scopes = [scope] if scope else ["product", "place"]
    found_in: list[tuple[str, list[str]]] = []
    noun = alts[-1].split()[-1] if not zh and len(alts) > 1 and len(alts[-1].split()) > 1 else ""
    for sc in scopes:
        chosen = []
        for alt in alts:
            # "large or extra-large cups": "large cups" before "large"
            tries = ([f"{alt} {noun}"] if noun and " " not in alt else []) + _variants(alt, zh, head)
            if sc != "place" and not zh:
                tries += _spice_options(alt, ctx)  # "mild spicy" where a spice scale spells it "Mild"
            # a variant one field spells first, then one a product's fields spell together ("cocktail
            # set": a set tagged "Cocktail"), and only then the value without its unit ("cocktail")
            unitless = {t[:u.start()] for t in tries for u in [_UNIT_TAIL_EN.search(t)] if u}
            whole = [v for v in tries if v not in unitless]
            # first among what the gold's products spell, where the loader gave them (see ``_first_found``)
            hit = (_first_found(tries, whole, ctx, sc, ctx.evidence) if ctx.evidence and sc != "place" else None) \
                or (_gold_part(alt, ctx, sc) if partial and sc in ("product", "place") and not zh and ctx.evidence
                    and not (sc == "place" and _gold_places_spell(tries, ctx)) else None)
            if hit is None and partial and zh and sc == "product" and ctx.evidence:
                spelled = _zh_gold_span(tries, ctx)
                if spelled is not None:  # the value as said, or as the gold spells it: never stricter than the item
                    chosen += spelled
                    continue
            hit = hit or _first_found(tries, whole, ctx, sc, None)
            if hit is None:
                if len(alts) > 1 and (_CUP_SIZE.match(alt) or not any(
                        _found(v, ctx, s) for v in tries for s in ("product", "place"))):
                    # "小杯或中杯" where no drink comes small, "low caffeine or caffeine-free" where nothing is
                    # called caffeine-free: an alternative nothing in the catalogue spells cannot be ordered
                    continue
                break
            chosen.append(hit)
        else:
            if chosen:
                found_in.append((sc, chosen))
    if len(found_in) == 2 and ctx.evidence:
        # a value both a product and a place spell ("the booking should be for a trial class"): what the gold's
        # products spell is what the item refers to
        held = [(sc, alts) for sc, alts in found_in if sc != "place" and all(
            _found(a, ctx, sc, products=ctx.evidence) for a in alts)]
        found_in = held or found_in
    if len(found_in) != 1:
        raise _Unclear
    return found_in[0]




# a spice level said by its bare level word on a product's spice scale ("Non-spicy / Mild / Medium / Extra Spicy")
_BARE_SPICE = {"mild": 1, "medium": 2, "hot": 3}
_SPICE_WORDS = re.compile(r"\b(?:extra|very|super|extremely|double|more|medium|moderately|mild|mildly|slightly|little|less|"
                          r"non|not|no|spicy|spice|spiciness|chili|chilli|without|level|flavou?rs?|options?|tastes?|-)\b|-")


def _spice_options(alt: str, ctx: ItemContext) -> list[str]:
    """The catalogue options that say the one spice level ``alt`` names ("mild spicy", "mildly
    spicy" -> "Mild"), on a product whose options are a spice scale (two or more options that name a
    level, one of them in full: "Non-spicy", "Extra Spicy"); [] when ``alt`` says more than a level."""
    levels = spice_levels(alt)
    if len(levels) != 1 or _SPICE_WORDS.sub(" ", alt).strip():
        return []
    out: list[str] = []
    for pr in ctx.products:
        said = {o: spice_levels(o) or ({_BARE_SPICE[o.strip().casefold()]} if o.strip().casefold() in _BARE_SPICE else set())
                for o in pr.options}
        scale = [o for o, lv in said.items() if len(lv) == 1]
        if len(scale) >= 2 and any(spice_levels(o) for o in scale):
            out += [o for o in scale if said[o] == levels and o not in out]
    return out


_ZH_JUDGEMENT = re.compile(r"新鲜|销量|必吃|正宗|最(?:好|高|低|近|远|多|少|受欢迎)|性价比|口碑")
_ZH_AND_COUNT = re.compile(rf"[,，](?:且|并且)?(?:(?:数量|份数|件数|杯数)(?:应该|应当|应|需要|要)?(?:为|是)|共|一共|总共)?{_NUM_RE}"
                           rf"{_COUNT_UNITS}$")
# "include X, quantity 1", "be X with a quantity of 2": the product, and how many of it
_EN_AND_COUNT = re.compile(rf",?\s+(?:with |and )?(?:an? |the )?(?:quantity|number)(?: of| is| should be|:)?\s*{_NUM_RE}"
                           rf"(?:\s*{_COUNT_UNITS})?$")
_ZH_ATTR_OF = re.compile(r"^(?P<x>.{2,}?)(?:的)?(?:属性|口味|规格|温度|甜度|辣度|类型|风味|选项)的[^的]{1,6}$")
_ZH_HAVING = re.compile(r"^(?:带有|含有|具有)(?P<x>[^的]{2,})的(?:商品|产品|菜品|饮品)$")
# "有嚼劲的面包", "无奶的咖啡": X, of the kind the subject names
_ZH_HAVING_KIND = re.compile(r"^(?:带有|含有|具有|有)?(?P<x>[^的]{2,})的(?P<k>[\u4e00-\u9fff]{1,4})$")
_ZH_BOUGHT = re.compile(r"购买|下单|订购|选购|点")


def _zh_bought_at(p: str, neg: bool, ctx: ItemContext) -> tuple[StoreSpec | None, str]:
    """"在<place>购买X" / "从<place>订购X": the store, and "选择X" (the product, read as a feature);
    (None, p) when the text names no place before such a verb."""
    start = re.match(r"^(?:重新)?(?:在|从|到)", p)
    if start is None:
        return None, p
    for k, vm in enumerate(_ZH_BOUGHT.finditer(p, start.end())):
        if k >= 4:
            break
        ids = _places_named(p[start.end():vm.start()], ctx, chain=False)
        if not ids or vm.end() >= len(p):
            continue
        if neg:
            raise _Unclear  # "not X at Y": not that store, or not that product?
        return StoreSpec(place_ids=sorted(ids), name=p[start.end():vm.start()]), "选择" + p[vm.end():]
    return None, p


_ZH_REL_PLACE = re.compile(r"^(?:提供|支持|具有|具备|有|带有)?(?:能够|能|可以)?(?P<x>[^的]{2,}?)(?:服务)?的(?:商家|店铺|门店|餐厅|餐馆|"
                           r"店家|商户|店)$")


def _zh_of_the_kind(value: str, subject: str, ctx: ItemContext) -> str:
    """A value said with the kind of product the subject names, which the catalogue does not spell with
    it: "有嚼劲的面包" / "无奶咖啡" for a bread / coffee order: "嚼劲" / "无奶" (``value`` otherwise)."""
    if _found(value, ctx, "product"):
        return value
    hm = re.match(r"^(?:含有|含|带有|带)(?P<x>..+)$", value)
    if hm is not None and _found(hm.group("x"), ctx, "product"):
        return hm.group("x")  # "选含龙眼的": 龙眼
    m = _ZH_HAVING_KIND.match(value)
    if m is not None and m.group("k") in subject:
        return m.group("x")
    for k in range(min(4, len(value) - 2), 0, -1):  # "无奶咖啡": a tail the subject names
        if value[-k:] in subject and _found(value[:-k], ctx, "product"):
            return value[:-k]
    tries = _variants(value, True, "")
    if any(_found(v, ctx, "product") for v in tries):
        return value
    bare = tries[-1]  # "红汤汤面类商品": "红汤汤面", a kind of dish after what it has
    kind = _ZH_KIND_TAIL.search(bare)
    if kind is not None and kind.start() >= 2 and _found(bare[:kind.start()], ctx, "product"):
        return bare[:kind.start()]  # "红汤", an option
    return value


# a kind of dish or drink said after what it has ("红汤汤面", "椒麻口味的鸡", "芋泥点心"): the head noun, which a
# catalogue spells in a product's name in words of its own ("牛肉面", "面条"), so the value is what comes before it
_ZH_KIND_TAIL = re.compile(r"(?:的)?(?:汤面|拌面|面条|面食|面|米线|米粉|粉丝|粉|汤粉|盖饭|炒饭|米饭|饭|粥|汤|饮品|饮料|奶茶|果茶|茶饮|茶|"
                           r"咖啡|果汁|蛋糕|面包|甜品|甜点|点心|糕点|小吃|饼|卷|沙拉|寿司|披萨|汉堡|火锅|套餐|菜品|菜|主食)$")


def _zh_place_prefix(value: str, neg: bool, ctx: ItemContext) -> tuple[StoreSpec | None, str]:
    """"<place>的<what>" ("某店的双拼沙拉商品"): the store the place's name names, and the rest
    ("" when the rest is only a generic word); (None, value) when no "的" follows a place's name."""
    for k, m in enumerate(re.finditer("的", value)):
        if k >= 4:
            break
        ids = _places_named(value[:m.start()], ctx, chain=False)
        if not ids:
            continue
        if neg:
            raise _Unclear  # "not X's Y": not that store, or not that product?
        what = value[m.end():]
        rest = _GENERIC_TAIL_ZH.sub("", what) if what else ""
        return StoreSpec(place_ids=sorted(ids), name=value[:m.start()]), ("" if not rest else what)
    return None, value


# a second predicate of the same subject: "..., and should have X", "...，且不含X", "...，应选择X"
_SECOND_EN = re.compile(r",\s*(?:and |but )?(?:(?:(?P<neg>should not|must not|cannot|should never|must never)|should|must|"
                        r"needs? to|has to)\s+|(?=(?:select|choose|avoid|avoiding|with) ))(?P<rest>.+)$"
                        # "contain chicken and come with dipping sauce": a second verb of the same subject
                        r"|\s+and\s+(?=(?:come with|comes with|include|includes|contain|contains|have|has|select|"
                        r"choose|avoid|offer|provide)\b)(?P<rest2>.+)$")
_SECOND_ZH = re.compile(r"[，,](?:(?:且|并且|并|同时|但)(?:应该|应当|应|必须|需要|要)?|应该|应当|应|必须|需要|须|需(?=选|包含|含|点|买|加|有|为)|"
                        r"要(?=选|包含|含|点|买|加|有|为)|"
                        r"(?=选择|避免|不要|不得|不能|不可|不应))"
                        r"(?P<rest>.+)$")
_ZH_NEG_START = re.compile(r"^(?:不能|不应该|不应|不得|不可以|不可|不要|避免)")
# after the value, what only describes or explains it: "..., suitable for hand-warming", "，一般体现在标签中"
_TRAIL_EN = re.compile(r"(?<=\S)\s+and (?:also )?be (?:suitable|ideal|good|appropriate) for\b.*$|"
                       r"(?<=\S)\s+in (?:it|them|there)$|"  # "have any vegetables in it": what the subject holds
                       r",\s*(?:and )?(?:avoid|avoiding) (?:any |all )?others?\b.*$|,\s*(?:suitable for|as (?:indicated|shown|stated|noted)|usually|typically|generally|which|"
                       r"indicated|reflected)\b.*$|,\s*(?:but |and |while )?(?:any )?others?\b.*\b(?:can|may|are allowed|"
                       r"is allowed|are fine|is fine|are ok|is ok)\b.*$|,\s*(?:but |and |while )?(?:it |they )?(?:can|may) "
                       r"(?:also )?(?:include|contain|have|choose|select|order|be)\b.*\bothers?\b.*$")
_TRAIL_ZH = re.compile(r"[，,](?:适合|适用于|一般|通常|体现在|可以|可|避免(?:选择)?其他|不要(?:选择)?其他).*$")
# after a plain "is / are" (the split's modal): a value, not another verb ("is durian pizza", "is a set for two")
_COPULA_VALUE = re.compile(r"^(?!(?:not|no|never|being|been|to|done|made|placed|required|needed)\b)[a-z0-9'\"]")
# a predicate that only says the subject is picked: "X should be chosen"
_CHOSEN_ALONE = re.compile(r"^(?:also )?be (?:chosen|selected|ordered|picked|purchased)$")
_AVOIDED_ALONE = re.compile(r"^be (?:avoided|excluded)$")
_ZH_BOTH = re.compile(r"^既(?:有|含有|包含|含)(?P<a>[^，,又]{1,20})又(?:有|含有|包含|含)?(?P<b>[^，,]{1,20})$")
_ZH_TRAILING_EXAMPLE = re.compile(r"[，,]\s*(?:如|比如|例如|譬如)[^，,。]{1,40}?等?[。.]?$")


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
    brackets at its end spell them (``_PAREN_ALTS``)."""
    try:
        return _one_feature_as_said(subject, neg, pred, ctx)
    except _Unclear:
        m = _PAREN_ALTS.search(pred)
        if m is None or neg:
            raise
    return _one_feature_as_said(subject, neg, ("为" if _is_zh(subject + pred) else "be ") + m.group("x"), ctx)


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
        fm = re.match(r"^(?:be|come|comes|arrive|be served|be made) (?:free of|without) (?P<x>\S.*)$", p) or \
            re.match(r"^be (?P<x>[a-z][a-z ]{1,30}?)-free$", p)
        if fm and not (p.endswith("-free") and _found(p[3:], ctx, "product")):
            neg, p = not neg, "have " + fm.group("x")
    alone = _CHOSEN_ALONE.match(p) or _AVOIDED_ALONE.match(p) if not zh else None
    if alone and subject and not re.search(r"\b(?:it|they|this|that|these|those|one)$", subject):
        # "(when selecting X,) boneless chicken feet should be chosen": the subject is the value; "dark roast
        # types such as X should be avoided": the subject, not chosen
        p, subject, neg = "select " + subject, "", neg != (alone.re is _AVOIDED_ALONE)
    if zh:  # "不含X" / "不加X" that the catalogue does not hold as such: not "含X"
        nm = re.match(r"^(?:不含有|不包含|不含|没有|不带)(?=.)", p)
        if nm and not _found(p, ctx, "product"):
            neg, p = not neg, "含有" + p[nm.end():]
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
    if m is None and zh and len(p) <= 8 and any(_knorm(o) == _knorm(p) for pr in ctx.products for o in pr.options):
        p = "选择" + p  # "果汁必须去冰", "鸡汤饭应不加葱花": the value is a catalogue option, said with no verb
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
    rm = re.search(r",?\s*(?:\bnot\b|\brather than\b|\binstead of\b)\s+(?:be |a |an |the )?(.+)$", value) if not zh else \
        re.search(r"[，,]?(?:不能|不应|不要|不可|而不是|而非|不是)(?:选择|是|为)?(.+)$", value)
    if rm:
        value, extra_neg = value[:rm.start()], rm.group(1)
    if neg and re.match(r"^both ", value):
        raise _Unclear  # "cannot contain both A and B": not the two together, which one line need not show
    value = _clean_value(value, zh, head)
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
    fm = re.match(r"^(?P<what>.+?) (?:from|at) (?P<where>.+)$", value) if not zh else None
    parts: list[Any] = [store_part] if store_part is not None else []
    if store_part is not None and not value:
        return [store_part]  # "X的商品": the store is all it asks
    if fm and (_places_named(fm.group("where"), ctx, chain=True)
               or _places_named(_PLACE_SUFFIX.sub("", fm.group("where")), ctx, chain=True)):
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


# ----- classes of food: "must not contain offal (such as ...)", "should be non-spicy" (``lexicon``) ----------
_AVOIDED_EN = re.compile(r"^be (?:avoided|excluded)$")
_WITHOUT = re.compile(r"^(?:\S+ ){0,2}?(?:without|free of|that (?:do not|does not|don't|doesn't) (?:contain|include|have)) (?P<x>.+)$"
                      r"|^(?:不含|不含有|没有|不带)(?P<z>.+?)(?:的(?:商品|产品|饮品|菜品|食品))?$")


def _concept_feature(subject: str, neg: bool, p: str, zh: bool, ctx: ItemContext) -> FeatureSpec | None:
    """A value that names a class of food (``lexicon.concept_value``: "内脏类食材", "dairy ingredients",
    "fried side dishes or high-purine ingredients"), with the examples the item gives; or, not negated,
    the absence of one ("不辣口味", "low caffeine or caffeine-free"). None when the value is neither."""
    if not zh and _AVOIDED_EN.match(p) and subject:  # "items containing organ meats should be avoided"
        neg, p = not neg, "select " + subject
    m = (_FEATURE_VERBS_ZH if zh else _FEATURE_VERBS_EN).match(p)
    if m is None and not zh and _COPULA_VALUE.match(p):
        m = _FEATURE_VERBS_EN.match("be " + p)
        p = "be " + p
    if m is None:
        return None
    value = p[m.end():].strip(" ,，")
    examples = ""
    if zh:
        em = re.match(r"^(?P<v>.+?)[，,]?[(（]?(?:如|例如|比如|诸如)(?P<e>.+?)[)）]?$", value) or \
            re.match(r"^(?P<e>[^，,]{2,}?)(?:等|这些|这类)(?P<v>[^，,]{2,})$", value)
        if em:
            value, examples = em.group("v"), em.group("e")
    else:
        em = _EXAMPLE_EN.search(value)
        if em:
            value, examples = value[:em.start()], value[em.start():]
    value = value.strip(" ,，(（")
    if not zh:  # "cannot include anything spicy or greasy": the class named
        value = re.sub(r"^(?:anything|something|any) (?=[a-z])", "", value)
    value = re.sub(r"^(?:the |a |an )?preferences? (?:for|of) ", "", value) if not zh else \
        re.sub(r"(?:的)?(?:口味)?偏好$", "", value)  # "the preference for no cilantro", "不加香菜的口味偏好"
    wm = _WITHOUT.match(value)
    if wm and not neg:  # "select drinks without dairy products", "选择不含奶制品的饮品"
        neg, value = True, wm.group("x") or wm.group("z")
    value = re.sub(r"(?<=.)的$", "", value)
    if not value or len(value) > 60:
        return None
    if not neg and not _found_any(concept_value(value) or concept_value(value, absence=True) or [], ctx):
        return None  # asked for, and no product of the task spells the concept: the literal reading, or the judge's
    # an exclusion ("should not contain offal") no product of the task spells holds whatever is ordered from
    # it: read all the same (the class is named, and an agent cannot break it), not left to the judge
    names = concept_value(value)
    if names is not None:
        phrases = [x for x in example_phrases(examples) if len(x) >= 2] if examples else []
        if not neg and not phrases and not _found_any(names, ctx):
            return None  # "should contain X" where nothing in the catalogue is X: the judge's
        if not neg and _found(value, ctx, "option"):
            return None  # "should be spicy" where products offer "spicy": the option must be chosen (the literal reading)
        if not neg and len(names) > 1 and not re.search(r"\bor\b|或|/", value):
            return None  # "beef and egg flavour", "牛肉鸡蛋口味": both in one line, not either (the literal reading)
        return FeatureSpec(scope="product", phrases=phrases, negated=neg, concepts=names)
    absent = concept_value(value, absence=True) if not neg and not examples else None
    if absent is None or _OPTION_WORDS.search(f"{subject} {p}") and _found(value, ctx, "option"):
        return None  # "规格需为不辣" where the products offer "不辣": the option must be chosen (the literal reading)
    alts = [a.strip(" '\"") for a in re.split(r"\s+or\s+|\s*,\s*|或者|或|、|，|/", value) if a.strip()]
    alts = [_bare_absence(a, zh) for a in alts]
    return FeatureSpec(scope="product", phrases=[a for a in alts if a], absent=absent)


def _bare_absence(a: str, zh: bool) -> str:
    for _ in range(2):
        a = re.sub(r"(?:的)?(?:口味|属性|选项|规格|类型|商品|饮品|产品)$", "", a) if zh else \
            re.sub(r"\s+(?:flavou?rs?|options?|attributes?|types?|products?|items?|drinks?|versions?)$", "", a)
    return re.sub(r"^(?:(?:products?|items?|drinks?|beverages?) (?:that are|with) |a |an |the )", "", a).strip(" '\"“”")


def _found_any(names: list[str], ctx: ItemContext) -> bool:
    """Whether a product of the task spells one of the concepts, or offers or names its absence ("免香菜")."""
    said = [w for n in names for w in ABSENCE.get(n, ())]
    return any(mentions(names, " | ".join((pr.name, *pr.tags, *pr.options)))
               or any(phrase_in(w, f) for w in said for f in (pr.name, *pr.tags, *pr.options)) for pr in ctx.products)


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




# "口味" / "flavor": an option if the catalogue has it as one, else a word of the product's name or tags
# "options" / "choices" in English are as often the products to choose from ("choose non-spicy options"): soft
_SOFT_OPTION_WORDS = re.compile(r"\b(?:flavou?rs?|tastes?|options?|choices?)\b|口味|味道|热饮|冰饮")
_OPTION_WORDS = re.compile(r"\b(?:temperature|sweetness|sugar level|spiciness|spice level|spicy level|size|cup size|"
                           r"specifications?|attributes?|ice level)\b|温度|甜度|辣度|规格|属性|选项|冰度|糖度")


def _grouping(value: str, zh: bool, head: str, ctx: ItemContext, option: bool, head_class: str | None) -> list[str]:
    """The one way to read "A and B and C" as several things each found in the catalogue
    ("Mint Mochi and Blueberry and Mulberry Mochi": two products, not three)."""
    # an English list says "A, B, and C" / "A, B and C": its commas cut too (a cut not made keeps its words)
    if not zh and "," in value and re.search(r"\band\b", value):
        tokens = _AND_LIST_EN.split(value)  # the pieces and, between them, the separators as said
    else:
        joiner = "和" if zh else " and "
        tokens = [x for t in _AND.split(value) for x in (t, joiner)][:-1]
    pieces, seps = tokens[0::2], tokens[1::2]
    if any(not x.strip() for x in pieces) or len(pieces) < 2 or len(pieces) > 4:
        raise _Unclear
    scope = "option" if option else head_class
    ok: list[list[str]] = []
    for mask in range(1 << (len(pieces) - 1)):  # bit i: a cut after piece i
        groups: list[str] = [pieces[0]]
        for i, piece in enumerate(pieces[1:]):
            if mask >> i & 1:
                groups.append(piece)
            else:
                groups[-1] += seps[i] + piece
        if len(groups) < 2:
            continue
        texts = groups
        try:
            for t in texts:
                _resolve_phrase(_clean_value(t, zh, head), zh, scope, head, ctx)
        except _Unclear:
            continue
        ok.append(texts)
    if not ok:
        raise _Unclear
    fewest = min(len(g) for g in ok)
    best = [g for g in ok if len(g) == fewest]
    if len(best) != 1:
        raise _Unclear
    return best[0]


_AND_LIST_EN = re.compile(r"(,\s*(?:and\s+)?|\s+and\s+)")


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
