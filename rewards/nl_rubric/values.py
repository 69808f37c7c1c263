"""How a value a feature item names is cleaned of generic words and found in the task's catalogue:
the verbs that open a value, the generic heads and tails around it ("a product with", "... flavour",
"...口味"), its variants (an ingredient left out said as menus say it), ``_resolve_phrase`` (the scope:
a product, an option, or a place; each alternative of "or" found there), and ``_grouping`` (the one way
to read "A and B and C" as things each found). Used by every reader of product items (``product.py``,
``lines.py``, ``concept.py``, ``place_kind.py``, ``only.py``)."""

from __future__ import annotations

import re

from .clauses import ZH_DONT
from .note import spice_levels
from .place import StoreSpec
from .quantity import _COUNT_UNITS
from .spelling import _first_found, _gold_part, _gold_places_spell, _zh_gold_span
from .text import _NUM_RE, _NUMBER_WORDS, _stem, _Unclear, _zh_number
from .world import (
    _GENERIC_GOODS,
    _UNIT_TAIL_EN,
    ItemContext,
    _content_left,
    _found,
    _places_named,
)

# ----- the grammar ----------------------------------------------------------------------------------
# a visit or an order said by where it is made ("make a reservation at X", "book at X", "place an order at X"): the
# place is the value here, and names the record in ``compile._BOOK_AT``
BOOK_AT_EN = (r"(?:make (?:a |an )?(?:reservation|booking|appointment)|book(?: a table| a room| a session)?|"
              r"place (?:a |an )?(?:new )?order) (?:at|with) ")
_FEATURE_VERBS_EN = re.compile(
    r"^(?:still |only |also |definitely |preferably |specifically |all )*(?P<v>be (?:equipped with|suitable for)|"
    r"be (?:located|situated) (?=(?:in|within|inside|near|at) )|"
    r"be (?:set|made|prepared|cooked|done|adjusted|changed) (?:to |at |as |with |in )(?:the |a |an )?|"
    r"have (?:its|their|the) (?:[a-z]+ ){1,2}(?:set|adjusted|changed) (?:to|at|as) |come in (?:the |a |an )?|comes in (?:the |a |an )?|"
    r"be (?:selected|chosen|set|specified|served|ordered) (?:as |with |in )?|(?:select|choose|specify|have) the |specify |"
    r"be (?:labell?ed|tagged|marked) (?:as |with )?(?:the |a |an )?|"
    r"be made (?:of|with|from) |be made (?=[a-z])|"
    r"be (?:a |an |the )?|be for |select |choose |pick |opt for |order |buy |purchase |use |include |includes |"
    r"contain |contains |have |has |provide |offer |support |feature |serve |come with |allow |specialize in |accepts? |come |comes |"
    r"be made (?:of|with) |be in |be of |place (?:a |an )?(?:new )?order (?:for |of )|reorder |re-order |"
    rf"{BOOK_AT_EN})")
_FEATURE_VERBS_ZH = re.compile(r"^(?:仍然|依然|仍|继续|还是|也|都|均|同时|要)?(?P<v>调整为|设置为|设为|改为|改成|勾选|搭配|选择|选为|选定为|选|是|为|包含|包括|含有|含|带有|有|提供|支持|具有|具备|配有|"
                               r"配备|配(?![送置])|附带|附有|属于|使用|用|加|放|做成|能够|可以|出现|点|买|购买|订购|(?:可|能)(?=堂食|外带|外卖|自取|打包|预约|预订|停车|刷卡|配送))")
_GENERIC_TAIL_EN = re.compile(r"\s+(?:flavou?r(?:ed)?|taste|style|type|version|option|specification|variety|kind|items?|"
                              r"products?|dish(?:es)?|properties|property|attribute|choice|drink|beverage|food|temperature|"
                              r"sweetness|size|service|activity|activitie|ingredient|filling|stuffing|topping|(?:health )?benefit|(?:health )?effect|"
                              r"preference|(?:time )?slot|(?:price )?characteristic|(?:price )?feature|trait|one)s?(?: selected| chosen)?$")
_GENERIC_TAIL_ZH = re.compile(r"(?:的)?(?:口味|味道|风味|规格|选项|属性|类型|类|款|商品|产品|菜品|的|种类|温度|甜度|辣度|饮品|饮料|"
                              r"食品|版本|形式|服务|标签|相关|[两二三四五六]种|成分|食材|配料|配菜|做法|制作方式|方式|元素|"
                              r"这?[两二三四五六]样|这?[两二三四五六七八九]道(?:菜品|菜肴|菜)?|的菜肴|的菜|主食|馅|馅料|特征|特点|品牌|(?:养生|保健|健康|食疗)?功效|(?:养生|保健)?作用|偏好|口味偏好)$")
_GENERIC_HEAD_EN = re.compile(r"^(?:products?|items?|dish(?:es)?|options?|drinks?|beverages?|food|packages?|set meals?|"
                              r"set menus?|sets?|combos?|services?|meals?) (?:(?:that|which) (?:are|is|have|has|contain|"
                              r"contains|include|includes|offers?|provides?|features?|comes? with) |with (?:an? |the )?|"
                              r"containing |including |featuring |of )")
_AND = re.compile(r"\s+and\s+|\s+as well as\s+|\s+along with\s+|\s+plus\s+(?=(?:the|a|an|one|two|\d)\b)|、|和|以及|及|与|跟(?!.*一样)")
_OR = re.compile(r"\s+or\s+|或者|或是|或")


def _clean_value(x: str, zh: bool, heads: str) -> str:
    x = x.strip(" '\"“”,，.。")
    x = re.sub(r"^\[([^\[\]]{1,40})\]$", r"\1", x)  # "[Extra Spicy]": the value in brackets, as in quotes
    x = re.sub(r"^(?:for |of |with )?(?:a |an |the |any |one (?!(?:person|people)\b)|a single )?(?:'|\")?", "", x).strip(" '\"“”")
    if x.count("'") == 1:  # "the 'no milk' attribute": the closing quote of one the article hid
        x = re.sub(r"(?<=[a-z0-9])'(?=\s|$)", "", x).strip()
    if zh:
        x = re.sub(r"^(?:的)", "", x)
        x = re.sub(r"^[【「『]([^【】「」『』]{1,20})[】」』]$", r"\1", x)  # "【去冰】": the value in brackets, as in quotes
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
    x = re.sub(r"(?<=\S)\s+(?:at all|whatsoever|as well|too|also)$", "", x)  # "should not be spicy at all": spicy
    x = re.sub(r"(?<=\S)\s+(?:at no (?:extra )?charge|for free|free of charge|at no extra cost)$", "", x)  # what, not its price
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
            said = alt.strip().casefold()
            if not zh and hit != said and _PARTS_EN.match(said):
                chosen.append(said)  # "three parts sweet" is "30% Sweet" as the menu spells it, and as a record may
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
                        rf"(?=选择|避免|不要|不得|不能|不可|不应|{ZH_DONT}))"
                        r"(?P<rest>.+)$")
_ZH_NEG_START = re.compile(rf"^(?:不能|不应该|不应|不得|不可以|不可|不要|避免|{ZH_DONT})")
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
_CHOSEN_ALONE = re.compile(r"^(?:also )?be (?:chosen|selected|ordered|picked|purchased|booked|reserved)$")
_AVOIDED_ALONE = re.compile(r"^be (?:avoided|excluded)$")
_ZH_BOTH = re.compile(r"^既(?:有|含有|包含|含)(?P<a>[^，,又]{1,20})又(?:有|含有|包含|含)?(?P<b>[^，,]{1,20})$")
_ZH_TRAILING_EXAMPLE = re.compile(r"[，,]\s*(?:如|比如|例如|譬如)[^，,。]{1,40}?等?[。.]?$")



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
    if any(not x.strip() for x in pieces) or len(pieces) < 2 or len(pieces) > 6:
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
        if "," in "".join(seps) and ok[-1] == pieces:
            # "candlelight, champagne, appetizer, main course and dessert": where several groupings are found
            # but so is each piece alone, a list said with commas is its pieces (each checked, weakest of all)
            return pieces
        raise _Unclear
    return best[0]


_AND_LIST_EN = re.compile(r"(,\s*(?:and\s+)?|\s+and\s+)")
