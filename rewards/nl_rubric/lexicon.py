"""Concepts: the classes of food a rubric names ("offal", "高嘌呤", "dairy", "non-spicy") that a
product's text only spells out ("Pork Intestine Noodles", "毛肚", "Fresh Milk Tea", "不辣").

The lexicon (``CONCEPTS``; Chinese and English, one entry per concept, never per task)
    Each concept has the words a rubric names it by (``names``: "内脏", "offal", "organ meat") and
    the terms a product's name, tags or chosen options spell it with (``terms``: "大肠", "猪肝",
    "tripe", "liver"), and compounds that hold a term without meaning it (``not_terms``: "咖啡因"
    holds "咖啡" but is no coffee, "牛油果" holds "牛" but is no beef). Concepts: offal, seafood,
    shrimp, high purine (offal, seafood, broths, beer), high cholesterol (offal, roe, crab fat),
    dairy, caffeine, coffee, fried, meat, fatty meat, alcohol, strong-smelling fermented food,
    spicy, high sugar, greasy, green onion, cilantro, vegetables, noodles ("面条类主食", "noodle-type staple"),
    crispy ("酥脆类型").
    Absence values (``ABSENCE``) name a concept's absence as a positive value: "non-spicy / 不辣 /
    not spicy" (no spice), "caffeine-free / low caffeine / 无咖啡因 / 低咖啡因" (no caffeine),
    "sugar-free / less sugar / 无糖 / 少糖" (no high sugar), "light / 清淡 / non-greasy" (not greasy),
    "素食 / vegetarian / meat-free" (no meat).
    "不加香菜 / 免香菜 / no cilantro" (no cilantro), "不要葱 / 去葱 / without onions" (no green onion): a
    garnish left out, which a line says by a chosen option ("免香菜") or in its name or tags.
    Option synonyms (``OPTION_SYNONYMS``): a value whose option another word also says ("hot" is
    also "warm": a warm drink is a hot one, not an iced one).

The grammar (``concept_value``; the predicate's value after its verb, examples cut off first)
    the value is split at "or / and / 或 / 和 / 、 / ,", each piece stripped of class words
    ("...类 / 食材 / 成分 / 配菜 / 调料 / 商品", "... ingredients / items / side dishes / foods /
    products / types / flavor"), and each piece must name a concept (or, for an absence, an
    absence value); a piece that is only a class word ("或调料", "or seasonings") after a concept
    is dropped. Examples the item gives ("such as A, B, etc.", "如A、B等") become phrases of the
    check too (``example_phrases``). Anything else is None: the literal reading, or the judge.

How a concept is found in a text (``mentions``): a term is a phrase of the text (``text.phrase_in``:
Chinese substrings not after 不 / 无 / 去 / 少, English word stems not after "no / non- / -free /
less / low") once the concept's ``not_terms`` are blanked out of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .text import _is_zh, phrase_in


@dataclass(frozen=True)
class Concept:
    names: tuple[str, ...]
    terms: tuple[str, ...]
    not_terms: tuple[str, ...] = ()


def _w(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split("|") if x.strip())


_OFFAL_ZH = "内脏|下水|大肠|肥肠|小肠|猪肠|肠头|猪肝|鸡肝|鸭肝|鹅肝|牛肝|肝尖|腰花|猪腰|腰子|毛肚|牛肚|千层肚|猪肚|百叶|黄喉|鸭血|猪血|血旺|毛血旺|肺片|猪肺|鸭肠|鹅肠|鸡胗|鸭胗|牛杂|羊杂|猪杂|卤煮|鸡心|猪心|牛舌|猪舌|鸭舌|脑花"
_OFFAL_EN = ("offal|organ meat|organ|intestine|intestines|chitterlings|liver|foie gras|kidney|tripe|giblet|gizzard|"
             "blood tofu|duck blood|pig blood|lung|brain|tongue|maw|beef omasum|pork stomach|offal soup")
_SEAFOOD_ZH = "海鲜|虾|蟹|贝|蚝|蛤|蛏|螺|鱿鱼|墨鱼|章鱼|海参|鲍鱼|海胆|三文鱼|金枪鱼|鳗鱼|带鱼|沙丁鱼|凤尾鱼|鱼子|鱼籽"
_SEAFOOD_EN = ("seafood|shrimp|prawn|lobster|crayfish|crab|shellfish|clam|oyster|scallop|mussel|squid|cuttlefish|octopus|"
               "sea cucumber|abalone|sea urchin|salmon|tuna|eel|sardine|anchovy|roe")
_BROTH_ZH = "海鲜汤|浓汤|老火汤|高汤|骨汤|肉汤|火锅汤底"
_BROTH_EN = "seafood soup|broth|bone soup|meat soup|stock"

CONCEPTS: dict[str, Concept] = {
    "offal": Concept(_w("内脏|动物内脏|下水|offal|organ meat|organ|innards|giblets"), _w(_OFFAL_ZH + "|" + _OFFAL_EN),
                     _w("护肝|养肝|清肝|肝火|organic")),
    "seafood": Concept(_w("海鲜|海产|水产|seafood|shellfish"), _w(_SEAFOOD_ZH + "|" + _SEAFOOD_EN), _w("虾片味")),
    "shrimp": Concept(_w("虾|虾类|shrimp|prawn|shrimps|prawns"), _w("虾|shrimp|prawn|lobster|crayfish")),
    "high purine": Concept(_w("高嘌呤|嘌呤高|high purine|high-purine|purine"),
                           _w(_OFFAL_ZH + "|" + _OFFAL_EN + "|" + _SEAFOOD_ZH + "|" + _SEAFOOD_EN + "|" + _BROTH_ZH + "|"
                              + _BROTH_EN + "|啤酒|beer"), _w("护肝|养肝|清肝|肝火|organic")),
    "high cholesterol": Concept(_w("高胆固醇|胆固醇高|high cholesterol|high-cholesterol"),
                                _w(_OFFAL_ZH + "|" + _OFFAL_EN + "|蟹黄|蟹膏|鱼子|鱼籽|蛋黄|roe|crab roe|egg yolk"),
                                _w("护肝|养肝|清肝|肝火|organic")),
    "dairy": Concept(_w("奶制品|乳制品|奶类|乳类|奶|牛奶|dairy|dairy product|milk product"),
                     _w("奶|乳|芝士|奶酪|起司|黄油|奶油|酸奶|milk|dairy|cheese|butter|cream|yogurt|yoghurt|latte|"
                        "whey|custard"),
                     _w("无奶|不加奶|椰奶|椰乳|豆奶|豆乳|燕麦奶|杏仁奶|植物奶|豆腐乳|腐乳|乳鸽|乳猪|乳山|奶白菜|奶油生菜|"
                        "coconut milk|soy milk|oat milk|almond milk|plant milk|non-dairy|dairy-free|ice cream cone|"
                        "cream of")),
    "caffeine": Concept(_w("咖啡因|caffeine|caffeinated"),
                        _w("含咖啡因|咖啡|拿铁|美式|浓缩|卡布奇诺|摩卡|玛奇朵|馥芮白|澳白|奶茶|红茶|绿茶|乌龙|抹茶|普洱|"
                           "铁观音|能量饮料|contains caffeine|with caffeine|coffee|latte|americano|espresso|cappuccino|"
                           "mocha|macchiato|flat white|milk tea|black tea|green tea|oolong|matcha|pu'er|tieguanyin|"
                           "energy drink"),
                        _w("咖啡因|无咖啡因|低咖啡因|decaf|caffeine-free|low caffeine")),
    "coffee": Concept(_w("咖啡|coffee"), _w("咖啡|拿铁|美式|浓缩|卡布奇诺|摩卡|玛奇朵|馥芮白|澳白|coffee|latte|americano|"
                                          "espresso|cappuccino|mocha|macchiato|flat white"), _w("咖啡因|caffeine")),
    "fried": Concept(_w("油炸|炸制|炸物|油炸食品|fried|deep-fried|deep fried|fried food"),
                     _w("油炸|炸鸡|炸串|炸物|炸排|炸猪排|炸鸡排|炸薯|薯条|酥炸|干炸|软炸|炸虾|炸丸|炸带鱼|天妇罗|鸡米花|"
                        "fried|deep-fried|fries|tempura|nugget|popcorn chicken"),
                     _w("炸酱|stir-fried|stir fried|pan-fried|pan fried|fried rice|fried noodle|fried egg")),
    "meat": Concept(_w("肉|肉类|荤|荤菜|荤食|meat|meats|animal protein|动物蛋白"),
                    _w("肉|牛腩|牛排|肥牛|排骨|火腿|培根|香肠|红肠|腊肠|烤肠|鸡腿|鸡翅|鸡排|鸡块|鸡胸|鸡柳|烤鸭|鸭腿|猪蹄|猪脚|"
                       "蹄花|肉松|鸡|鸭|鹅|牛|羊|猪|" + _OFFAL_ZH + "|meat|beef|pork|chicken|duck|goose|lamb|mutton|"
                       "ham|bacon|sausage|steak|brisket|rib|ribs|wing|drumstick|trotter|veal|turkey|" + _OFFAL_EN),
                    _w("果肉|椰肉|肉桂|肉松面包|牛油果|牛奶|牛乳|蜗牛|鸡蛋|鸭蛋|鹅蛋|鸡精|鸡尾酒|鸭梨|猪油|牛油|素肉|素鸡|"
                       "素鸭|蟹肉棒|蟹肉|虾肉|贝肉|鱼肉|egg|coconut meat|vegetarian|plant-based|meatless|veggie")),
    "fatty meat": Concept(_w("肥肉|肥|fat|fatty meat|fatty"), _w("肥肉|五花|肥瘦|五花肉|肥肠|fatty|fat|pork belly"),
                          _w("肥牛|减肥|低脂|脱脂|low-fat|low fat|fat-free|fat-cutting|油切")),
    "alcohol": Concept(_w("酒|酒精|酒类|含酒精|alcohol|alcoholic|liquor"),
                       _w("酒|啤酒|白酒|红酒|黄酒|米酒|酒酿|醪糟|鸡尾酒|alcohol|beer|wine|liquor|cocktail|rum|whisky|"
                          "whiskey|vodka|sake|soju|baijiu"),
                       _w("无酒精|不含酒精|酒店|酒楼|酒家|alcohol-free|non-alcoholic|wine vinegar|酒店")),
    "strong smell": Concept(_w("强烈气味|气味强烈|重口味气味|臭味|发酵类|发酵|strong odor|strong odors|strong smell|"
                               "strong smells|strong-smelling|pungent|fermented"),
                            _w("臭豆腐|螺蛳粉|臭鳜鱼|臭干|毛豆腐|榴莲|腐乳|纳豆|鲱鱼罐头|stinky tofu|river snail|"
                               "luosifen|durian|natto|fermented tofu|surstromming")),
    "spicy": Concept(_w("辣|辛辣|辣味|刺激性|spicy|hot and spicy|spiciness|chili|pungent spice"),
                     _w("辣|微辣|微微辣|中辣|特辣|爆辣|重辣|麻辣|香辣|小辣|辣椒|剁椒|红油|spicy|chili|chilli|"
                        "hot pepper|mala|red oil|pepper sauce"),
                     _w("甜辣|sweet chili")),
    "high sugar": Concept(_w("高糖|糖分高|多糖|high sugar|high-sugar|sugary|high sugar content"),
                          _w("全糖|正常糖|标准糖|常规糖|多糖|十分糖|十分甜|七分糖|七分甜|五分糖|五分甜|含糖|高糖|high sugar|sugary|full sugar|regular sugar|standard sugar|"
                             "normal sugar|extra sugar|contains sugar|full sweet")),
    "greasy": Concept(_w("油腻|重油|高油|greasy|oily|heavy oil"),
                      _w("油腻|重油|肥肠|五花|红油|greasy|oily|pork belly|red oil|deep-fried|fried"),
                      _w("不油腻|少油|低油|清淡|stir-fried|stir fried|non-greasy|less oil|low oil|oil-free")),
    "green onion": Concept(_w("葱|葱类|葱花|scallion|scallions|green onion|green onions|spring onion|onion|onions"),
                           _w("葱|葱花|香葱|小葱|大葱|洋葱|scallion|green onion|spring onion|onion|chive|leek"),
                           _w("葱油饼")),
    "cilantro": Concept(_w("香菜|芫荽|cilantro|coriander"), _w("香菜|芫荽|cilantro|coriander")),
    # a drink or a snack a set comes with ("should include drinks": "2 Thai Milk Teas", "Colas Complimentary")
    "drink": Concept(_w("饮品|饮料|喝的|drink|drinks|beverage|beverages|soft drink|soft drinks"),
                     _w("饮品|饮料|奶茶|果茶|果汁|可乐|雪碧|汽水|苏打水|矿泉水|椰子水|柠檬水|豆浆|酸梅汤|咖啡|拿铁|茶饮|"
                        "啤酒|红酒|鸡尾酒|drink|beverage|milk tea|fruit tea|juice|cola|coke|sprite|soda|lemonade|"
                        "coconut water|mineral water|soy milk|smoothie|coffee|latte|iced tea|herbal tea|tea|beer|wine|"
                        "cocktail|mojito"),
                     _w("茶叶蛋|茶餐厅|茶楼|奶茶店|tea egg|tea house|teahouse|tea restaurant|tea room|tea-smoked|"
                        "wine sauce|wine vinegar|beer-braised|beer braised|drinking")),
    "snack": Concept(_w("小吃|零食|小食|点心|茶点|snack|snacks|nibbles"),
                     _w("小吃|零食|小食|点心|茶点|爆米花|薯片|坚果|瓜子|果盘|snack|popcorn|chips|crisps|nuts|fruit platter|"
                        "dim sum|pastry|pastries|cookie|biscuit|cracker|pretzel|fries"),
                     _w("snack street|小吃街")),
    "vegetable": Concept(_w("蔬菜|青菜|时蔬|素菜|vegetable|vegetables|veggie|veggies|greens"),
                         _w("蔬菜|时蔬|青菜|素菜|生菜|白菜|菠菜|西兰花|油麦菜|豆芽|黄瓜|番茄|西红柿|胡萝卜|土豆|茄子|青椒|"
                            "包菜|卷心菜|苦瓜|羽衣甘蓝|芹菜|蘑菇|菌|vegetable|veggie|greens|lettuce|cabbage|spinach|"
                            "broccoli|cucumber|tomato|carrot|potato|eggplant|mushroom|kale|celery|bitter melon"),
                         _w("菜品|菜单|招牌菜|特色菜|下饭菜|素菜包")),
    # a staple said by its kind ("面条类主食", "noodle-type staple food"), and a texture ("酥脆类型", "crispy")
    "noodles": Concept(_w("面条|面食|粉面|noodle|noodles"),
                       _w("面|米线|米粉|河粉|粉丝|粉条|凉皮|noodle|ramen|udon|soba|pasta|spaghetti|vermicelli|lo mein|"
                          "chow mein|rice noodle"),
                       _w("面包|面膜|面粉|面筋|面饼|面点|面包糠|见面|面馆|面对|面积|表面|bread|noodle house|noodle shop")),
    "crispy": Concept(_w("酥脆|香脆|脆|酥|crispy|crunchy|crisp"),
                      _w("酥脆|香脆|脆皮|脆|酥|crispy|crunchy|crisp"),
                      _w("酥油|酥软|脆骨|crisp apple")),
}

# an absence said as a positive value: the concept absent, and the words that name that absence
ABSENCE: dict[str, tuple[str, ...]] = {
    "spicy": _w("不辣|免辣|无辣|不要辣|不加辣|去辣|原味不辣|non-spicy|not spicy|no spice|no spicy|non spicy|mild non-spicy"),
    "caffeine": _w("无咖啡因|低咖啡因|不含咖啡因|零咖啡因|caffeine-free|caffeine free|low caffeine|decaf|decaffeinated|"
                   "no caffeine|non-caffeinated|without caffeine"),
    "high sugar": _w("无糖|少糖|低糖|微糖|三分糖|不另外加糖|不额外加糖|不加糖|零糖|sugar-free|sugar free|less sugar|"
                     "low sugar|no sugar|no added sugar|light sugar|reduced sugar|without sugar"),
    "greasy": _w("清淡|不油腻|少油|低油|light|non-greasy|not greasy|less oil|low oil|light flavor|lightly flavored"),
    "meat": _w("素食|纯素|全素|素|vegetarian|vegan|meatless|meat-free|meat free|plant-based|plant based"),
    "cilantro": _w("不加香菜|不要香菜|免香菜|去香菜|无香菜|不放香菜|no cilantro|without cilantro|cilantro-free|cilantro free|"
                   "no coriander|without coriander|hold the cilantro"),
    "dairy": _w("无奶|不含奶|不加奶|不含乳制品|不含奶制品|dairy-free|dairy free|non-dairy|no milk|without milk|milk-free|"
                "lactose-free|no dairy|without dairy"),
    "green onion": _w("不加葱|不要葱|免葱|去葱|无葱|不放葱|不加葱花|不要葱花|免葱花|去葱花|不加香葱|no onion|no onions|"
                      "without onion|without onions|no green onion|no green onions|no scallion|no scallions|"
                      "no spring onion|no spring onions|without scallions|without green onions|onion-free"),
}

# absence words too vague to be the option that says an absence ("Light Ice" is no light dish)
VAGUE_ABSENCE = frozenset({"light"})

# the absences a product's silence shows: a dish that names no spice is not spicy, a drink that names no
# caffeine (nor coffee or tea) has none; a cake that names no sugar level may be sweet, a dish may be greasy
SILENT_ABSENCE = frozenset({"spicy", "caffeine"})

# a value whose option another word also says: a warm drink is a hot one
OPTION_SYNONYMS: dict[str, tuple[str, ...]] = {"hot": ("warm",), "hot drink": ("warm",)}

_CLASS_ZH = re.compile(r"(?:的)?(?:类|类型|食材|成分|配菜|配料|调料|调味料|小吃|食品|食物|商品|产品|菜品|饮品|口味|味道|特征|属性|"
                       r"选项|部位|元素|东西|等|馅|馅料|主食)$")
_CLASS_EN = re.compile(r"\s+(?:ingredients?|items?|side dishes|side dish|dishes|dish|foods?|products?|types?|garnish(?:es)?|"
                       r"seasonings?|toppings?|snacks?|elements?|flavou?rs?|options?|attributes?|cuts?|parts?|content|staple foods?|"
                       r"staples?)$")
_CLASS_ONLY = re.compile(r"^(?:调料|调味料|配料|配菜|食材|成分|seasonings?|condiments?|ingredients?|garnish(?:es)?|"
                         r"side dishes|toppings?)$")
_SPLIT = re.compile(r"\s*(?:\bor\b|\band\b|,|，|、|或者|或是|或|和|以及|及|/)\s*")


def _key(x: str) -> str:
    return re.sub(r"\s+", " ", x.strip(" '\"“”‘’()（）.,，。").casefold().replace("-", " "))


def _bare(piece: str, zh: bool) -> str:
    x = _key(piece)
    x = re.sub(r"^(?:含有|含|包含|带有|具有|有|any |the |a |an |other |foods? (?:with|containing) |items? (?:with|containing) |"
               r"products? (?:with|containing) |containing |with |are |be )", "", x)
    for _ in range(3):
        y = (_CLASS_ZH if zh else _CLASS_EN).sub("", x).strip()
        if y == x or not y:
            break
        x = y
    return x


def _lookup(piece: str, table: dict[str, tuple[str, ...]]) -> str | None:
    k = _key(piece)
    keys = {k, re.sub(r"s$", "", k)}  # "organ meats": "organ meat"
    return next((name for name, words in table.items() if any(_key(w) in keys for w in words)), None)


def concept_value(value: str, absence: bool = False) -> list[str] | None:
    """The concepts a value names ("油炸配菜或高嘌呤食材": fried, high purine), or, with ``absence``,
    the concepts whose absence it names ("低咖啡因或无咖啡因": caffeine); None when a piece names
    none (or, with ``absence``, when the pieces name the absence of different concepts)."""
    zh = _is_zh(value)
    pieces = [p for p in _SPLIT.split(value.strip()) if p and p.strip()]
    if not pieces or len(pieces) > 5:
        return None
    found: list[str] = []
    for k, piece in enumerate(pieces):
        bare = _bare(piece, zh)
        if _CLASS_ONLY.match(_key(piece)) and k:
            continue  # "葱类配菜或调料": the class word names no other thing
        names = {n: c.names for n, c in CONCEPTS.items()} if not absence else ABSENCE
        hit = _lookup(bare, names) or _lookup(piece, names)
        if hit is None and zh:  # "辛辣油腻": two names said without a conjunction, each of them
            two = next(((a, b) for i in range(2, len(bare) - 1) for a, b in [(_lookup(bare[:i], names),
                                                                                 _lookup(bare[i:], names))] if a and b), None)
            if two is not None:
                found += two
                continue
        if hit is None:
            return None
        found.append(hit)
    found = list(dict.fromkeys(found))
    if not found or (absence and len(found) != 1):
        return None
    return found


def example_phrases(examples: str) -> list[str]:
    """The examples an item gives ("such as pork intestine, pig liver, etc.", "如大肠、猪肝等"), as
    phrases: each of two characters or more, generic tails and "etc." dropped."""
    t = re.sub(r"^[,，\s(（]*(?:such as|like|e\.g\.|for example|for instance|especially|including|如|例如|比如|诸如|像是|像)\s*",
               "", examples.strip())
    t = re.sub(r"(?:,?\s*etc\.?|等等?(?:[^，,。]{0,6})?|and (?:the )?(?:like|so on)|and others?)\s*[)）]?\s*$", "", t).strip(" )）.")
    zh = _is_zh(t)
    out = []
    for p in _SPLIT.split(t):
        p = _key(p)
        p = re.sub(r"^(?:other |some )", "", p)
        p = re.sub(r"\s+(?:and )?other\s+.*$", "", p)
        p = _bare(p, zh)
        if len(p) >= 2 and not _CLASS_ONLY.match(p):
            out.append(p)
    return out


def mentions(concepts: list[str], text: str) -> bool:
    """Whether one of the concepts' terms is a phrase of ``text`` (its ``not_terms`` blanked out)."""
    return any(_mentions_one(name, text) for name in concepts)


@lru_cache(maxsize=1 << 15)
def _mentions_one(name: str, text: str) -> bool:
    """``mentions`` of one concept (a catalogue's names and tags recur: each pair is read once)."""
    c = CONCEPTS.get(name)
    if c is None:
        return False
    t = text.casefold()
    for nt in sorted(c.not_terms, key=len, reverse=True):
        t = t.replace(nt.casefold(), " | ")
    return any(phrase_in(term, part) for part in t.split("|") if part.strip() for term in c.terms)
