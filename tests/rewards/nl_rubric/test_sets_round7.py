"""Round-7 shapes: the set of products an order holds (``rewards/nl_rubric/product.py``,
``quantity.py``, ``compile.py``, ``text.py``). An exclusive set ("should not include any products
other than X", "只包含X"): every line is one of X; different products ("three different dishes",
"三个不同的菜品"): at least N product ids; a count with its list ("include two items: A and B",
"3 items in total, including 2 A and 1 B"): the total and each listed product; a total "both from
<store>"; a product sold as a combo or package counted by what it is ("the quantity of the fried
chicken combo"); "additional" read as "extra". Each rule is checked on a right order and a wrong
one. A small world of my own, not VitaBench's."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, TOOLS

W = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("P1", "Feishu Pot Stickers", (), "", 4.5),
        nl_rubric.PlaceInfo("P2", "Lao Jie Breakfast", (), "", 4.4),
        nl_rubric.PlaceInfo("P3", "锅贴大王（东门店）", (), "", 4.3),
        nl_rubric.PlaceInfo("P4", "Shuxia Desserts (Yufeng Branch)", (), "", 4.6),
        nl_rubric.PlaceInfo("P5", "Crispy Corner", (), "", 4.1),
    ),
    products=(
        nl_rubric.ProductInfo("A1", "P1", "Pork Pot Stickers", (), (), 16.0),
        nl_rubric.ProductInfo("A2", "P1", "Leek Pot Stickers", (), (), 15.0),
        nl_rubric.ProductInfo("A3", "P1", "Millet Porridge", (), (), 6.0),
        nl_rubric.ProductInfo("B1", "P2", "Jianbing with Egg", (), ("Tomato Sauce", "Sweet Bean Sauce"), 9.0),
        nl_rubric.ProductInfo("B2", "P2", "Jianbing Deluxe", (), (), 12.0),
        nl_rubric.ProductInfo("B3", "P2", "Tea Egg", (), (), 2.0),
        nl_rubric.ProductInfo("B4", "P2", "Soup Dumplings", (), (), 14.0),
        nl_rubric.ProductInfo("C1", "P3", "鲜肉锅贴", (), (), 16.0),
        nl_rubric.ProductInfo("C2", "P3", "小米粥", (), (), 5.0),
        nl_rubric.ProductInfo("C3", "P3", "手抓饼", (), (), 8.0),
        nl_rubric.ProductInfo("C4", "P3", "茶叶蛋", (), (), 2.0),
        nl_rubric.ProductInfo("D1", "P4", "Mango Pomelo Sago", (), ("No Additional Sugar (Recommended)", "Standard Sweetness"), 18.0),
        nl_rubric.ProductInfo("E1", "P5", "Secret Recipe Fried Chicken Single Meal", (), (), 30.0),
        nl_rubric.ProductInfo("E2", "P5", "Classic Caesar Salad Combo", (), (), 28.0),
    ),
    tools=TOOLS,
)


def C(text: str) -> Any:
    return nl_rubric.compile_item(text, W)


def line(pid: str, name: str, qty: int = 1, chosen: str = "", options: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, (), chosen, qty, 0.0, options)


def holds(spec: Any, *lines: nl_rubric.LineFacts, place: str = "P1") -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", place, lines=lines), W.place(place))


# ----- exclusive sets --------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "The pot stickers order should not include any products other than pot stickers",
    "The pot stickers order must not contain anything besides pot stickers",
    "The pot stickers order should only include pot stickers",
    "The pot stickers order should include only pot stickers",
])
def test_only_x_en(text: str) -> None:
    spec = C(text)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.every and spec.phrases == ["pot stickers"], text
    assert holds(spec, line("A1", "Pork Pot Stickers"), line("A2", "Leek Pot Stickers", 2))
    assert not holds(spec, line("A1", "Pork Pot Stickers"), line("A3", "Millet Porridge"))  # one other product fails
    assert not holds(spec)  # an empty order holds no pot stickers


@pytest.mark.parametrize("text", ["锅贴订单中不应当有除了锅贴外的其他商品", "锅贴订单中不能包含除锅贴以外的其他商品", "锅贴订单应只包含锅贴"])
def test_only_x_zh(text: str) -> None:
    spec = C(text)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.every and spec.phrases == ["锅贴"], text
    assert holds(spec, line("C1", "鲜肉锅贴", 2), place="P3")
    assert not holds(spec, line("C1", "鲜肉锅贴"), line("C2", "小米粥"), place="P3")


def test_only_x_with_alternatives_and_what_is_no_exclusive_set() -> None:
    spec = C("The breakfast order should only include pot stickers and millet porridge")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.every
    assert holds(spec, line("A1", "Pork Pot Stickers"), line("A3", "Millet Porridge"))
    assert not holds(spec, line("A1", "Pork Pot Stickers"), line("B3", "Tea Egg"))
    # a positive "other than" asks for something else, not for an exclusive set; a count or a store is not one
    assert C("The order should include products other than pot stickers") is None
    only_one = C("The pot stickers order should include only one pot stickers item")
    assert not (isinstance(only_one, nl_rubric.FeatureSpec) and only_one.every)
    # a value the catalogue does not sell stays the judge's
    assert C("The order should not include any products other than dim sum") is None


# ----- different products ----------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["The order for the friend needs to include three different dishes",
                                  "为朋友的订单中需要包含三个不同的菜品", "订单中应包含三样不同的商品"])
def test_distinct_count(text: str) -> None:
    spec = C(text)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.distinct and spec.value == 3 and spec.op == ">=", text
    three = (line("B1", "Jianbing with Egg"), line("B3", "Tea Egg"), line("B4", "Soup Dumplings"))
    assert holds(spec, *three, place="P2")
    assert not holds(spec, line("B1", "Jianbing with Egg", 2), line("B3", "Tea Egg"), place="P2")  # 3 items, 2 products
    assert not holds(spec, line("B4", "Soup Dumplings", 3), place="P2")


def test_distinct_count_exact_and_unread_shapes() -> None:
    spec = C("The order should include exactly two different dishes")
    assert isinstance(spec, nl_rubric.CountSpec) and spec.distinct and spec.op == "=="
    assert holds(spec, line("B1", "Jianbing with Egg"), line("B3", "Tea Egg", 4), place="P2")
    assert not holds(spec, line("B1", "Jianbing with Egg"), line("B3", "Tea Egg"), line("B4", "Soup Dumplings"), place="P2")
    # a counting rule of its own, a class the catalogue does not spell, a negation: the judge's
    assert C("The group meal order should include five different dishes, with the set's dishes counted separately") is None
    assert C("粤菜团餐订单中应包含五样不同的菜品，套餐内的不同菜品分开计算") is None
    assert C("The order must include two different single-person meals") is None
    assert C("The order should not include two different dishes") is None


# ----- a count and its list ----------------------------------------------------------------------------
def test_count_with_its_list_en() -> None:
    spec = C("The breakfast order should include two items: soup dumplings and tea egg")
    assert isinstance(spec, nl_rubric.AllOf)
    right = (line("B4", "Soup Dumplings"), line("B3", "Tea Egg"))
    assert holds(spec, *right, place="P2")
    assert not holds(spec, line("B4", "Soup Dumplings", 2), place="P2")  # two items, but no tea egg
    assert not holds(spec, *right, line("B1", "Jianbing with Egg"), place="P2")  # three items
    spec = C("The reordered breakfast should contain 3 items in total, including 2 Jianbings and 1 tea egg")
    assert isinstance(spec, nl_rubric.AllOf)
    assert holds(spec, line("B1", "Jianbing with Egg"), line("B2", "Jianbing Deluxe"), line("B3", "Tea Egg"), place="P2")
    assert not holds(spec, line("B1", "Jianbing with Egg"), line("B3", "Tea Egg", 2), place="P2")


def test_count_with_its_list_zh_and_what_does_not_add_up() -> None:
    spec = C("早餐订单应包含两样商品：手抓饼和茶叶蛋")
    assert isinstance(spec, nl_rubric.AllOf)
    assert holds(spec, line("C3", "手抓饼"), line("C4", "茶叶蛋"), place="P3")
    assert not holds(spec, line("C3", "手抓饼"), line("C2", "小米粥"), place="P3")
    # counts that do not add up, or a list longer than the total, are no one reading
    assert C("The breakfast should contain 3 items in total, including 1 Jianbing and 1 tea egg") is None
    assert C("The breakfast order should include two items: soup dumplings, tea egg and millet porridge") is None
    assert C("The breakfast order should include two items: soup dumplings and dim sum") is None


# ----- a total both from a store; a product counted by what it is; "additional" is "extra" ---------------
def test_total_both_from_a_store() -> None:
    spec = C("The snack order should have a total of 2 items, both from Lao Jie Breakfast")
    assert isinstance(spec, nl_rubric.AllOf)
    two = (line("B3", "Tea Egg"), line("B4", "Soup Dumplings"))
    assert holds(spec, *two, place="P2")
    assert not holds(spec, *two, place="P1")
    assert not holds(spec, line("B3", "Tea Egg"), place="P2")
    assert C("The snack order should have a total of 2 items, both from the same store") is None


def test_quantity_of_a_product_named_with_its_unit() -> None:
    spec = C("The quantity of the fried chicken combo in the restaurant order should be 1")
    assert isinstance(spec, nl_rubric.CountSpec) and spec.phrase == "fried chicken"
    meal = line("E1", "Secret Recipe Fried Chicken Single Meal")
    assert holds(spec, meal, line("E2", "Classic Caesar Salad Combo"), place="P5")
    assert not holds(spec, line("E1", "Secret Recipe Fried Chicken Single Meal", 2), place="P5")
    # the unit is dropped only where words that say what the product is remain
    assert C("The quantity of the single combo in the restaurant order should be 1") is None


def test_additional_is_extra() -> None:
    assert nl_rubric.phrase_in("no extra sugar", "No Additional Sugar (Recommended)")
    assert not nl_rubric.phrase_in("extra sugar", "No Additional Sugar (Recommended)")
    spec = C("Place a new order for Mango Pomelo Sago at Shuxia Desserts (Yufeng Branch), select no extra sugar")
    assert spec is not None
    offers = ("No Additional Sugar (Recommended)", "Standard Sweetness")
    assert holds(spec, line("D1", "Mango Pomelo Sago", 1, "No Additional Sugar (Recommended)", offers), place="P4")
    assert not holds(spec, line("D1", "Mango Pomelo Sago", 1, "Standard Sweetness", offers), place="P4")


# ----- one product and what its line has (English); spice levels said by the scale's bare word ------------
WL = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("Q1", "Gold Crepe Stand", (), "", 4.5), nl_rubric.PlaceInfo("Q2", "Chuozi Kitchen", (), "", 4.4),
            nl_rubric.PlaceInfo("Q3", "Lexing Sports Center", ("Badminton Court",), "", 4.6)),
    products=(
        nl_rubric.ProductInfo("J1", "Q1", "Jianbing with Egg", (), ("Ketchup", "Sweet Bean Sauce"), 9.0),
        nl_rubric.ProductInfo("J2", "Q1", "Jianbing (Chinese Crepe)", (), ("Sweet Bean Sauce", "Ketchup"), 7.0),
        nl_rubric.ProductInfo("K1", "Q2", "Chuozi Plum Meat", (), ("Non-spicy", "Mild", "Medium", "Extra Spicy"), 30.0),
        nl_rubric.ProductInfo("K2", "Q2", "Medium Rice Bowl", (), ("Small", "Medium", "Large"), 12.0),
        nl_rubric.ProductInfo("V1", "Q3", "Badminton Court (2-6 PM)", ("4 Hours",), (), 60.0),
        nl_rubric.ProductInfo("V2", "Q3", "Table Tennis Table (2 Hours)", (), (), 30.0),
    ),
    tools=TOOLS,
)


def L(text: str) -> Any:
    return nl_rubric.compile_item(text, WL)


def wl_holds(spec: Any, *lines: nl_rubric.LineFacts, place: str) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", place, lines=lines), WL.place(place))


def test_one_product_and_what_its_line_has_en() -> None:
    spec = L("The reordered items should include a Jianbing for the daughter, without egg, with sweet bean sauce flavor")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["jianbing"]
    assert spec.also == ["sweet bean sauce"] and spec.lacks == ["egg"]
    offers = ("Sweet Bean Sauce", "Ketchup")
    plain = line("J2", "Jianbing (Chinese Crepe)", 1, "Sweet Bean Sauce", offers)
    assert wl_holds(spec, plain, place="Q1")
    assert wl_holds(spec, line("J1", "Jianbing with Egg", 1, "Ketchup", offers), plain, place="Q1")  # one line is enough
    assert not wl_holds(spec, line("J1", "Jianbing with Egg", 1, "Sweet Bean Sauce", offers), place="Q1")  # has egg
    assert not wl_holds(spec, line("J2", "Jianbing (Chinese Crepe)", 1, "Ketchup", offers), place="Q1")  # wrong sauce
    # a piece that is no option of that product, or a count, is not this shape
    spec = L("The order should include a Jianbing for the daughter, with mango flavor")
    assert not (isinstance(spec, nl_rubric.FeatureSpec) and spec.also)
    spec = L("The order should include a Jianbing for the daughter, quantity 2")
    assert not (isinstance(spec, nl_rubric.FeatureSpec) and spec.also)


def test_a_spice_level_said_by_the_scales_bare_word() -> None:
    spec = L("All products in the Chuozi order should be mild spicy")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["Mild"]
    scale = ("Non-spicy", "Mild", "Medium", "Extra Spicy")
    assert wl_holds(spec, line("K1", "Chuozi Plum Meat", 1, "Mild", scale), place="Q2")
    assert not wl_holds(spec, line("K1", "Chuozi Plum Meat", 1, "Extra Spicy", scale), place="Q2")
    spec = L("The Chuozi order should be medium spicy")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["Medium"]  # not the rice bowl's size "Medium"
    assert wl_holds(spec, line("K1", "Chuozi Plum Meat", 1, "Medium", scale), place="Q2")
    assert not wl_holds(spec, line("K1", "Chuozi Plum Meat", 1, "Mild", scale), place="Q2")
    # a level said with more words than a level is not this rule's
    from servicegym.rewards.nl_rubric.values import _spice_options
    assert _spice_options("mild spicy sauce", WL) == [] and _spice_options("spicy", WL) == []


def test_a_usage_voucher_is_the_thing_it_is_for() -> None:
    spec = L("The sports venue order should be for badminton court usage vouchers")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["badminton court"]
    assert wl_holds(spec, line("V1", "Badminton Court (2-6 PM)"), place="Q3")
    assert not wl_holds(spec, line("V2", "Table Tennis Table (2 Hours)"), place="Q3")


# ----- an address said with its label ------------------------------------------------------------------
WA = nl_rubric.ItemContext(
    now=NOW,
    addresses=(("No. 398 Feicui Road, Shushan District, Hefei (430 meters from Exit 4), Economic Development Zone", 117.2077, 31.7787),
               ("Baowen Garden, Changhuai Street, Yaohai District, Hefei", 117.3098, 31.8856),
               ("安徽省合肥市瑶海区长淮街道宝文花园", 117.3098, 31.8856)),
    tools=TOOLS,
)


@pytest.mark.parametrize("text, book", [
    ("The daughter's lunch order delivery address should be the home address at Baowen Garden, Changhuai Street, "
     "Yaohai District, Hefei", 1),
    ("The user's own lunch order delivery address should be their workplace at No. 398 Feicui Road, Economic Development "
     "Zone, Shushan District, Hefei", 0),  # the book's parts in another order
    ("The user's lunch order delivery address should be the work address at No. 398 Feicui Road, Shushan District, Hefei, "
     "Economic Development Zone", 0),  # the book's text, its remark in brackets aside
    ("女儿的午餐订单配送地址应为安徽省合肥市瑶海区长淮街道宝文花园家庭住址", 2),
])
def test_an_address_said_with_its_label(text: str, book: int) -> None:
    spec = nl_rubric.compile_item(text, WA)
    assert isinstance(spec, nl_rubric.AddressSpec), text
    addr, lon, lat = WA.addresses[book]
    assert spec.address == addr and spec.longitude == lon
    right = nl_rubric.RecordFacts("orders", "o1", "S1", address=addr, longitude=lon, latitude=lat)
    wrong = nl_rubric.RecordFacts("orders", "o1", "S1", address="Room 5, Lvdu New Village, Luyang District, Hefei",
                                  longitude=117.2873, latitude=31.8957)
    assert nl_rubric.spec_holds(spec, right, None) and not nl_rubric.spec_holds(spec, wrong, None)


def test_a_label_alone_is_still_the_judges() -> None:
    assert nl_rubric.compile_item("The lunch order delivery address should be the user's home address", WA) is None


@pytest.mark.parametrize("text, book", [
    ("The spicy chicken order should be delivered to Baowen Garden, Changhuai Street, Yaohai District, Hefei", 1),
    ("女儿的午餐订单应送到安徽省合肥市瑶海区长淮街道宝文花园", 2),
])
def test_an_address_said_by_the_delivery(text: str, book: int) -> None:
    spec = nl_rubric.compile_item(text, WA)
    assert isinstance(spec, nl_rubric.AddressSpec) and spec.address == WA.addresses[book][0], text
    addr, lon, lat = WA.addresses[book]
    assert nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "S1", address=addr, longitude=lon, latitude=lat), None)
    assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "S1", address="12 Noodle Street, Dalian",
                                                                 longitude=121.585, latitude=38.902), None)
    # a time is no address, nor a place that is none ("to the user's home")
    assert not isinstance(nl_rubric.compile_item("The order should be delivered to the user's home", WA), nl_rubric.AddressSpec)


def test_an_entry_of_the_address_book_is_an_address_whatever_its_words() -> None:
    book = nl_rubric.ItemContext(now=NOW, addresses=(("Jinzheng Haiyue International", 114.47, 38.03), ("金正海悦国际", 114.47, 38.03)),
                                 tools=TOOLS)
    en = nl_rubric.compile_item("The delivery address for the Sichuan order should be Jinzheng Haiyue International", book)
    zh = nl_rubric.compile_item("川菜外卖订单的配送地址应为金正海悦国际", book)
    for spec in (en, zh):
        assert isinstance(spec, nl_rubric.AddressSpec) and spec.longitude == 114.47
        assert nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", "S", address="x", longitude=114.47, latitude=38.03), None)
        assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", "S", address="y", longitude=114.6, latitude=38.2), None)
    # the same words not in the book look like no address: the judge's
    assert nl_rubric.compile_item("The delivery address should be Jinzheng Haiyue International", WA) is None


# ----- words around a value: "X flavored Y", "X as a staple food", ", aligning with ...", "separated", "café" ----
WF = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("F1", "Night Snack Bar", (), "", 4.5), nl_rubric.PlaceInfo("F2", "Meow Café", ("Pet-Friendly",), "", 4.4),
            nl_rubric.PlaceInfo("F3", "Fish Noodle House", (), "", 4.3)),
    products=(
        nl_rubric.ProductInfo("N1", "F1", "Lemon Boneless Chicken Feet", (), (), 28.0),
        nl_rubric.ProductInfo("N2", "F1", "Boneless Sichuan Pepper Chicken Feet", (), (), 28.0),
        nl_rubric.ProductInfo("N3", "F1", "Beef Noodles", ("Beef",), (), 20.0),
        nl_rubric.ProductInfo("N4", "F1", "Fried Rice", (), (), 15.0),
        nl_rubric.ProductInfo("N5", "F2", "Latte", ("Pet-Friendly Seating",), (), 25.0),
        nl_rubric.ProductInfo("N6", "F3", "Golden Soup Fish Noodles", (), ("Separated soup and noodles", "Unseparated soup and noodles"), 26.0),
    ),
    tools=TOOLS,
)


def wf_holds(spec: Any, *lines: nl_rubric.LineFacts, place: str = "F1") -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", place, lines=lines), WF.place(place))


def test_words_around_a_value() -> None:
    spec = nl_rubric.compile_item("When selecting night snack products, lemon flavored chicken feet should be chosen", WF)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    assert wf_holds(spec, line("N1", "Lemon Boneless Chicken Feet"))
    assert not wf_holds(spec, line("N2", "Boneless Sichuan Pepper Chicken Feet"))
    spec = nl_rubric.compile_item("The spicy chicken order should include noodles as a staple food", WF)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["noodles"]
    assert wf_holds(spec, line("N3", "Beef Noodles")) and not wf_holds(spec, line("N4", "Fried Rice"))
    spec = nl_rubric.compile_item("The daughter's lunch order should include beef ingredients, aligning with her dietary preferences", WF)
    assert isinstance(spec, nl_rubric.FeatureSpec) and (spec.phrases, spec.concepts) in ((["beef"], []), ([], ["beef"]))
    assert wf_holds(spec, line("N3", "Beef Noodles")) and not wf_holds(spec, line("N4", "Fried Rice"))


def test_separate_is_separated_and_a_cafe_is_a_place() -> None:
    assert nl_rubric.phrase_in("soup and noodles separate", "Separated soup and noodles")
    assert not nl_rubric.phrase_in("soup and noodles separate", "Unseparated soup and noodles")
    spec = nl_rubric.compile_item("The fish noodles product should be selected with 'soup and noodles separate'", WF)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    offers = ("Separated soup and noodles", "Unseparated soup and noodles")
    assert wf_holds(spec, line("N6", "Golden Soup Fish Noodles", 1, "Separated soup and noodles", offers), place="F3")
    assert not wf_holds(spec, line("N6", "Golden Soup Fish Noodles", 1, "Unseparated soup and noodles", offers), place="F3")
    # "the café" is a place (the accent aside): its tags, not a product's
    spec = nl_rubric.compile_item("The café must be pet-friendly", WF)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.scope == "place"
    assert nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "F2"), WF.place("F2"))
    assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "F1"), WF.place("F1"))


def test_a_product_brand_is_spelled_in_the_products_name() -> None:
    brand = nl_rubric.ItemContext(
        now=NOW,
        places=(nl_rubric.PlaceInfo("B1", "Korean Samyang Store", (), "", 4.5), nl_rubric.PlaceInfo("B2", "Noodle Corner", (), "", 4.2),
                nl_rubric.PlaceInfo("B3", "韩国三养专卖", (), "", 4.5)),
        products=(nl_rubric.ProductInfo("R1", "B2", "Korean Samyang Spicy Chicken Noodles", (), (), 12.0),
                  nl_rubric.ProductInfo("R2", "B2", "Spicy Chicken Noodles", (), (), 10.0),
                  nl_rubric.ProductInfo("R3", "B2", "韩国三养火鸡拌面", (), (), 12.0),
                  nl_rubric.ProductInfo("R4", "B2", "火鸡拌面", (), (), 10.0)),
        tools=TOOLS)
    for text, right, wrong in (
            ("The product brand of the Spicy Chicken Noodles order should be Korean Samyang",
             ("R1", "Korean Samyang Spicy Chicken Noodles"), ("R2", "Spicy Chicken Noodles")),
            ("火鸡拌面订单中下单的商品品牌应为韩国三养", ("R3", "韩国三养火鸡拌面"), ("R4", "火鸡拌面"))):
        spec = nl_rubric.compile_item(text, brand)
        assert isinstance(spec, nl_rubric.FeatureSpec) and spec.scope == "product", text
        record = lambda pid, name: nl_rubric.RecordFacts("orders", "o", "B2", lines=(line(pid, name),))  # noqa: E731
        assert nl_rubric.spec_holds(spec, record(*right), brand.place("B2"))
        assert not nl_rubric.spec_holds(spec, record(*wrong), brand.place("B2"))
    # a brand no product spells but a chain's name: the store, as before
    chain = nl_rubric.compile_item("When ordering milk tea, the product brand should be Noodle Corner", brand)
    assert isinstance(chain, nl_rubric.StoreSpec) and chain.place_ids == ["B2"]


def test_a_set_that_serves_n_people() -> None:
    serves = nl_rubric.ItemContext(
        now=NOW, places=(nl_rubric.PlaceInfo("T1", "Thai House", (), "", 4.5),),
        products=(nl_rubric.ProductInfo("S1", "T1", "Classic Set for Two", (), (), 200.0),
                  nl_rubric.ProductInfo("S2", "T1", "Family Set for Four", (), (), 380.0)),
        tools=TOOLS)
    spec = nl_rubric.compile_item("The Thai package should be one that serves two people", serves)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    rec = lambda pid, name: nl_rubric.RecordFacts("orders", "o", "T1", lines=(line(pid, name),))  # noqa: E731
    assert nl_rubric.spec_holds(spec, rec("S1", "Classic Set for Two"), serves.place("T1"))
    assert not nl_rubric.spec_holds(spec, rec("S2", "Family Set for Four"), serves.place("T1"))
    # "enough for two" is a lower bound on the people served (round 8): a set for four is enough
    enough = nl_rubric.compile_item("The Thai package should be enough for two people", serves)
    assert isinstance(enough, nl_rubric.CountSpec) and (enough.what, enough.op, enough.value) == ("servings", ">=", 2)
    assert nl_rubric.spec_holds(enough, rec("S2", "Family Set for Four"), serves.place("T1"))
