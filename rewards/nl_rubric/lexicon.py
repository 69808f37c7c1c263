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
    staple food ("米饭等主食"), desserts, soups, pork, beef, chicken, lamb, fish, mushrooms, tofu, chocolate, nuts,
    eggs, fruit, tea, steamed, grilled, sweet and sour ("糖醋鲤鱼"), soft ("绵软口感"), crispy ("酥脆类型").
    Absence values (``ABSENCE``) name a concept's absence as a positive value: "non-spicy / 不辣 /
    not spicy" (no spice), "caffeine-free / low caffeine / 无咖啡因 / 低咖啡因" (no caffeine),
    "sugar-free / less sugar / 无糖 / 少糖" (no high sugar), "light / 清淡 / non-greasy" (not greasy),
    "素食 / vegetarian / meat-free" (no meat), "清真 / halal" (no pork), "不加蛋 / no egg", "nut-free / 无花生",
    "低脂 / low-fat" (no fatty meat), "无酒精 / non-alcoholic".
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
    "staple": Concept(_w("主食|staple|staple food|staples|carbs|carbohydrates"),
                      _w("米饭|白饭|饭|炒饭|拌饭|盖饭|面|米线|米粉|河粉|粉丝|粉条|饼|馒头|包子|花卷|饺子|馄饨|抄手|粥|窝窝头|"
                         "面包|rice|noodle|bun|bread|dumpling|wonton|porridge|congee|pancake|pasta|spaghetti|ramen|udon|"
                         "vermicelli|steamed bun|toast|bagel|tortilla|wrap"),
                      _w("饭店|饭馆|面膜|面粉|面筋|饭后|奶粉|藕粉|淀粉|花粉|粉色|粉红|月饼|饼干|rice wine|rice vinegar|"
                         "rice cake|bread crumbs|breadcrumbs|bun cha")),
    "dessert": Concept(_w("甜品|甜点|甜食|糕点|dessert|desserts|sweets|pastry|pastries|sweet treats"),
                       _w("甜品|甜点|蛋糕|布丁|双皮奶|姜撞奶|西米露|杨枝甘露|糖水|冰淇淋|冰激凌|雪糕|慕斯|提拉米苏|蛋挞|泡芙|"
                          "麻薯|麻糍|大福|芋圆|仙草|龟苓膏|绿豆沙|红豆沙|烧仙草|糕|酥|dessert|cake|pudding|mousse|tiramisu|"
                          "ice cream|gelato|tart|puff|mochi|sago|macaron|brownie|cookie|waffle|crepe|cheesecake|sundae"),
                       _w("蛋糕店|甜品店|dessert shop|cake shop|fish cake|rice cake|crab cake|pancake|酥肉|酥炸|鱼糕|年糕")),
    "soup": Concept(_w("汤|汤品|汤类|汤水|羹|soup|soups|broth"),
                    _w("汤|羹|煲汤|炖汤|soup|broth|bisque|chowder|consommé"),
                    _w("汤圆|汤包|灌汤|汤面|汤粉|汤底|汤汁|soup dumpling|soup dumplings|soup base|tangyuan")),
    "pork": Concept(_w("猪肉|猪|猪肉类|pork"),
                    _w("猪肉|猪|五花|排骨|猪蹄|猪脚|蹄花|火腿|培根|叉烧|腊肉|腊肠|红烧肉|东坡肉|回锅肉|锅包肉|狮子头|肉松|"
                       "pork|bacon|ham|char siu|spare rib|spareribs|pork belly|sausage|pulled pork"),
                    _w("素火腿|猪油|鸭|鸡|牛|veggie ham|vegetarian ham|plant-based")),
    "beef": Concept(_w("牛肉|牛肉类|beef"),
                    _w("牛肉|牛腩|牛排|肥牛|牛杂|牛筋|牛丸|牛腱|牛舌|牛百叶|牛肚|牛尾|牛骨|beef|steak|brisket|oxtail|sirloin|"
                       "ribeye|wagyu"),
                    _w("牛奶|牛油果|蜗牛|牛乳|牛蛙|avocado")),
    "nuts": Concept(_w("坚果|坚果类|花生|nuts|nut|tree nuts|peanut|peanuts"),
                    _w("坚果|花生|核桃|杏仁|腰果|榛子|开心果|碧根果|夏威夷果|松子|peanut|walnut|almond|cashew|hazelnut|"
                       "pistachio|pecan|macadamia|pine nut|nuts|nut"),
                    _w("杏仁豆腐|almond milk|杏仁奶|coconut|doughnut|donut|nutrition|nutritious|nutmeg")),
    "egg": Concept(_w("蛋|鸡蛋|蛋类|egg|eggs"),
                   _w("鸡蛋|鸭蛋|鹌鹑蛋|蛋黄|蛋白|荷包蛋|煎蛋|炒蛋|蒸蛋|蛋花|加蛋|卤蛋|茶叶蛋|皮蛋|咸蛋|蛋包|蛋饼|蛋炒饭|egg|eggs|"
                      "omelet|omelette|yolk"),
                   _w("蛋糕|蛋挞|蛋白质|eggplant|egg tart|蛋卷")),
    "fruit": Concept(_w("水果|果|水果类|fruit|fruits"),
                     _w("水果|鲜果|果切|果盘|果汁|橙|苹果|芒果|草莓|葡萄|西瓜|哈密瓜|柠檬|荔枝|菠萝|凤梨|香蕉|蓝莓|桃|梨|猕猴桃|"
                        "百香果|火龙果|牛油果|榴莲|樱桃|车厘子|柚|椰|杨梅|fruit|mango|orange|apple|strawberry|grape|"
                        "watermelon|melon|lemon|lychee|pineapple|banana|blueberry|peach|pear|kiwi|passion fruit|"
                        "dragon fruit|avocado|durian|cherry|grapefruit|pomelo|coconut"),
                     _w("坚果|腰果|开心果|白果|夏威夷果|碧根果|果冻|核桃|橙色|桃胶|椰蓉")),
    "tea": Concept(_w("茶|茶饮|茶类|茶饮品|tea|teas|tea drink|tea drinks"),
                   _w("茶|奶茶|果茶|红茶|绿茶|乌龙|抹茶|普洱|铁观音|茉莉|tea|matcha|oolong|pu'er|jasmine"),
                   _w("茶叶蛋|茶餐厅|茶楼|茶点|奶茶店|tea egg|tea house|teahouse|tea restaurant|tea-smoked|无茶底|no tea base")),
    "steamed": Concept(_w("蒸|清蒸|蒸制|蒸菜|steamed|steaming"), _w("蒸|清蒸|steamed|steam"), _w("蒸汽|steam room")),
    "grilled": Concept(_w("烧烤|烤|炭烤|烤制|grilled|barbecue|barbecued|bbq|roast|roasted"),
                       _w("烤|烧烤|炭烤|串|grilled|bbq|barbecue|roast|roasted|skewer|skewers|kebab"),
                       _w("烤箱|串串香|串联|oven")),
    "chicken": Concept(_w("鸡肉|鸡|鸡肉类|chicken|poultry"),
                       _w("鸡肉|鸡腿|鸡翅|鸡排|鸡块|鸡胸|鸡柳|鸡丁|鸡丝|鸡爪|凤爪|鸡米花|白切鸡|口水鸡|宫保鸡|辣子鸡|椒麻鸡|鸡汤|"
                          "chicken|wing|wings|drumstick|nugget|nuggets|popcorn chicken"),
                       _w("鸡蛋|鸡精|鸡尾酒|田鸡|素鸡|鸡头米|鸡枞|chicken egg|eggs")),
    "lamb": Concept(_w("羊肉|羊|羊肉类|lamb|mutton"),
                    _w("羊肉|羊排|羊腿|羊蝎子|羊杂|羊汤|羊肉串|手抓羊|涮羊|lamb|mutton"), _w("羊栖菜|羊奶|羊角|goat milk")),
    "fish": Concept(_w("鱼|鱼肉|鱼类|fish"),
                    _w("鱼|鱼片|鱼块|鱼排|鱼头|鱼丸|三文鱼|鲈鱼|鲫鱼|草鱼|鳕鱼|鲤鱼|黑鱼|乌鱼|鳜鱼|鲶鱼|fish|salmon|cod|bass|"
                       "tilapia|carp|trout|tuna|mackerel|catfish"),
                    _w("鱿鱼|墨鱼|章鱼|鲍鱼|鱼香|鳄鱼|鱼腥草|鱼豆腐|鱼子酱|squid|cuttlefish|octopus|abalone|shellfish|"
                       "fish sauce|fish-flavored|fish flavored|fish-fragrant")),
    "mushroom": Concept(_w("菌菇|菌类|蘑菇|菇类|mushroom|mushrooms|fungi|fungus"),
                        _w("菇|菌|蘑|木耳|银耳|松茸|松露|mushroom|shiitake|enoki|truffle|morel|porcini|fungus|wood ear"),
                        _w("菌落|细菌|益生菌|乳酸菌|probiotic|probiotics")),
    "tofu": Concept(_w("豆腐|豆制品|tofu|bean curd|soy products"),
                    _w("豆腐|豆干|腐竹|豆皮|千张|油豆腐|豆花|tofu|bean curd|yuba|tofu skin"), _w("杏仁豆腐|almond tofu")),
    "chocolate": Concept(_w("巧克力|可可|chocolate|cocoa"), _w("巧克力|可可|生巧|chocolate|cocoa|mocha|摩卡")),
    "sweet and sour": Concept(_w("酸甜|糖醋|酸甜口味|酸甜口感|sweet and sour|sweet-and-sour|sweet & sour"),
                              _w("酸甜|糖醋|咕噜|锅包肉|荔枝肉|sweet and sour|sweet-and-sour|sweet & sour|sweet and sour sauce")),
    "soft": Concept(_w("软糯|绵软|松软|软嫩|软|糯|soft|tender|soft and tender|fluffy"),
                    _w("软糯|绵软|松软|软嫩|软|糯|绵|嫩|soft|tender|fluffy|mochi|麻薯|糍粑"),
                    _w("软饮|软件|软装|soft drink|soft drinks|soft-serve|软冰淇淋")),
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
    "fatty meat": _w("低脂|脱脂|少脂|low-fat|low fat|fat-free|fat free|lean"),
    "alcohol": _w("无酒精|不含酒精|零酒精|non-alcoholic|alcohol-free|alcohol free|no alcohol|without alcohol|zero alcohol"),
    "pork": _w("清真|halal|不含猪肉|无猪肉|no pork|pork-free|pork free"),
    "egg": _w("不加蛋|不要蛋|无蛋|免蛋|去蛋|no egg|no eggs|egg-free|egg free|without egg|without eggs"),
    "nuts": _w("无坚果|不含坚果|无花生|不含花生|不加花生|nut-free|nut free|peanut-free|peanut free|no nuts|no peanuts|"
               "without nuts|without peanuts"),
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

_CLASS_ZH = re.compile(r"(?:的)?(?:类|类型|食材|成分|配菜|配料|调料|调味料|食品|食物|商品|产品|菜品|饮品|饮料|口味|味道|特征|属性|"
                       r"选项|部位|元素|东西|等|馅|馅料|主食|口感)$")
_CLASS_EN = re.compile(r"\s+(?:ingredients?|items?|side dishes|side dish|dishes|dish|foods?|products?|types?|garnish(?:es)?|"
                       r"seasonings?|toppings?|elements?|flavou?rs?|options?|attributes?|cuts?|parts?|content|staple foods?|drinks?|beverages?|"
                       r"textures?|"
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
    t = re.sub(r"(?:,?\s*etc\.?|等等?(?:[^，,。]{0,12})?|and (?:the )?(?:like|so on)|and others?)\s*[)）]?\s*$", "", t).strip(" )）.")
    zh = _is_zh(t)
    out = []
    for p in _SPLIT.split(t):
        p = _key(p)
        p = re.sub(r"^(?:other |some )", "", p)
        p = re.sub(r"\s+(?:and )?other\s+.*$", "", p)
        p = _bare(p, zh)
        p = re.sub(r"(?<=\S)(?:\s+snacks?|小吃)$", "", p)  # "fermented snacks": what makes them one, as a class word
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
