"""Product items (``rewards/nl_rubric/product.py``): features of products and places, options,
serving sizes, the Chinese shapes, phrase matching, and the checks of ordered lines."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import (
    BEEF,
    CTX,
    CTX_MORE,
    CTX_ZH,
    HOME_ORDER,
    K,
    M,
    Z,
    compile_in,
    compiles_to,
    left_to_the_judge,
    order,
    parts_of,
)

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # features of places and products, negations, alternatives, options
    ("base", "The noodle restaurant must support Dine-in available", "feature", lambda s: s.scope == "place" and s.phrases == ["dine-in available"]),
    ("base", "The noodles should be mild or non-spicy", "feature", lambda s: s.scope == "product" and s.phrases == ["mild", "non-spicy"] and not s.negated),
    ("base", "The noodle order must not be extra spicy", "feature", lambda s: s.negated and s.phrases == ["extra spicy"]),
    ("base", "The temperature of the tea should be hot", "feature", lambda s: s.option_only and s.phrases == ["hot"]),
    ("base", "The drink should be caffeine-free, not oolong tea", "all_of", lambda s: [(p.phrases, p.negated) for p in s.parts] == [(["caffeine-free"], False), (["oolong tea"], True)]),
    ("base", "牛肉面应选择微辣口味", "feature", lambda s: s.phrases == ["微辣"] and s.option_only),
    ("base", "给孩子点的面条不能是特辣的", "feature", lambda s: s.negated and s.phrases == ["特辣"]),
    ("base", "The tea shop should be pet-friendly", "feature", lambda s: s.scope == "place"),
    # options said as what is "selected as / with", with generic words around the value
    ("more", "The cola should be selected as less ice", "feature", lambda s: s.phrases == ["less ice"]),
    ("more", "The cola order should have the hot temperature attribute selected", "feature", lambda s: s.phrases == ["hot"]),
    ("more", "The drink order should select drinks with no ice", "feature", lambda s: s.phrases == ["no ice"]),
    ("more", "The cola should be served hot", "feature", lambda s: s.phrases == ["hot"]),
    ("more", "饮品订单应选择少冰的饮品", "feature", lambda s: s.phrases == ["少冰"]),
    # serving sizes: the product's name says how many it serves
    ("more", "The hotpot order should be a set meal for four people, not four individual set meals", "all_of", lambda s: parts_of(s) == [(["4 person"], False), (["1 person"], True)]),
    ("more", "The dinner should be a couple's meal", "feature", lambda s: "couple" in s.phrases),
    ("more", "The hotpot order should be a single-person meal", "feature", lambda s: s.phrases == ["1 person"]),
    ("more", "The hotpot order should be a single-person set", "feature", lambda s: s.phrases == ["single-person set", "1 person"]),
    ("more", "The ordered item should be a four-person meal package", "feature", lambda s: s.phrases == ["4 person"]),
    ("more", "烤肉订单中的商品应为双人套餐", "feature", lambda s: s.phrases == ["双人"]),
    ("more", "烤肉订单的商品应为两人份", "feature", lambda s: s.phrases == ["双人"]),
    # a demand said after "when choosing ...", and a plain statement of what an order holds
    ("more", "When choosing the cola, select less ice", "feature", lambda s: s.phrases == ["less ice"]),
    ("more", "The hotpot order includes beef tripe", "feature", lambda s: s.phrases == ["beef tripe"]),
    # a place's feature said as a service it supports or offers, or as a tag it has
    ("zh", "午饭的面馆订单的商家需要支持可堂食服务", "feature", lambda s: (s.scope, s.phrases) == ("place", ["可堂食"])),
    ("zh", "点拌面时应选择提供堂食服务的商家", "feature", lambda s: (s.scope, s.phrases) == ("place", ["堂食"])),
    ("zh", "馄饨订单的商家应有可堂食标签", "feature", lambda s: (s.scope, s.phrases) == ("place", ["可堂食"])),
    ("zh", "夜宵订单应选择山海小馆（河西店）的三鲜馄饨商品", "all_of", lambda s: s.parts[0].place_ids == ["Z1"] and s.parts[1].phrases == ["三鲜馄饨"]),
    # an option said "when choosing X", a temperature said as a hot drink
    ("zh", "挑选桂花乌龙时商品温度应为热饮", "feature", lambda s: (s.phrases, s.option_only) == (["热"], True)),
    ("zh", "双皮奶订单的商品应选择热饮属性", "feature", lambda s: s.phrases == ["热"]),
    ("zh", "给妈妈点的饮品应选择热饮", "feature", lambda s: s.phrases == ["热"]),
    # cup sizes with a negated part; a size no drink comes in is dropped from the alternatives
    ("zh", "奶茶订单应选择小杯或中杯，不能选择大杯或超大杯", "all_of", lambda s: parts_of(s) == [(["中杯"], False), (["大杯", "超大杯"], True)]),
    # "<product>相关商品": the product phrase
    ("zh", "晚饭订单应包含葱油拌面相关商品", "feature", lambda s: s.phrases == ["葱油拌面"]),
    ("zh", "奶茶订单中的商品不能包含芝士相关口味", "feature", lambda s: (s.phrases, s.negated) == (["芝士"], True)),
    ("zh", "午饭订单中应包含葱油拌面商品，数量为2份", "all_of", lambda s: s.parts[0].phrases == ["葱油拌面"] and (s.parts[1].value, s.parts[1].phrase) == (2, "葱油拌面")),
    # what a product has, and a product bought at a named place
    ("zh", "甜品订单中应包含带有红豆的商品", "feature", lambda s: s.phrases == ["红豆"]),
    ("zh", "应在山海小馆（河西店）购买葱油拌面", "all_of", lambda s: s.parts[0].place_ids == ["Z1"] and (s.parts[1].scope, s.parts[1].phrases) == ("product", ["葱油拌面"])),
    # "A和B两种商品": both; a modal said "需为"; a purpose said "以符合..."
    ("zh", "宵夜订单应包含葱油拌面和三鲜馄饨两种商品", "all_of", lambda s: parts_of(s) == [(["葱油拌面"], False), (["三鲜馄饨"], False)]),
    ("zh", "馄饨订单中的商品规格需为不辣", "feature", lambda s: (s.phrases, s.option_only) == (["不辣"], True)),
    ("zh", "奶茶订单应选择少冰的饮品以符合少喝冰饮的习惯", "feature", lambda s: s.phrases == ["少冰"]),
    # a second predicate of the same subject; an exclusion the catalogue cannot tell is left out, the demand kept
    ("base", "The tea order should not contain sugar syrup, and should have the 'hot' option", "feature",
     lambda s: (s.phrases, s.negated) == (["hot"], False)),
    ("zh", "奶茶订单应选择少冰的饮品，且不含去冰选项", "all_of", lambda s: parts_of(s) == [(["少冰"], False), (["去冰"], True)]),
    ("more", "The cola order must select hot drinks, not frozen drinks", "feature", lambda s: s.phrases == ["hot"]),
    ("base", "The tea should not come with less ice or extra pearls", "feature",
     lambda s: (s.phrases, s.negated) == (["less ice"], True)),
    # "X-related", "related to X", "X的<noun>" after an attribute word, descriptions after a comma
    ("base", "The noodle order should not include any beef-related items", "feature",
     lambda s: (s.phrases, s.negated) == (["beef"], True)),
    ("base", "The noodle order should include items related to beef", "feature", lambda s: s.phrases == ["beef"]),
    ("zh", "奶茶订单应选择去冰属性的乌龙", "feature", lambda s: s.phrases == ["去冰"]),
    ("more", "The cola should be served hot, suitable for a cold evening", "feature", lambda s: s.phrases == ["hot"]),
    # "include one X item": one line is enough
    ("zh", "饮品订单中应包含一杯去冰的饮品", "feature", lambda s: (s.phrases, s.some) == (["去冰"], True)),
    # commands with no modal: "avoid X", "select X"
    ("more", "When picking a drink, avoid less ice", "feature", lambda s: (s.phrases, s.negated) == (["less ice"], True)),
    ("base", "Avoid Noodle House and choose another noodle shop", "store", lambda s: (s.place_ids, s.negated) == (["S1"], True)),
    ("zh", "不能选择青禾茶铺（东门店），应选择其他茶饮店", "store", lambda s: (s.place_ids, s.negated) == (["Z2"], True)),
    # the place named after a generic head, or as the subject
    ("base", "The dessert order should choose a merchant from the Mixue Ice Cream brand", "store",
     lambda s: s.place_ids == ["S3", "S4"]),
    ("base", "Tea Corner should be selected as the merchant for the afternoon order", "store", lambda s: s.place_ids == ["S2"]),
    # a size none offers, beside one that is offered
    ("zh", "奶茶订单应选择小份或大杯", "feature", lambda s: s.phrases == ["大杯"]),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_product_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The restaurant should have a good environment"),  # not a tag or name in the world
    ("base", "The noodles should be mild, such as Mild from Noodle House"),  # an example naming a store
    ("base", "饮品订单中应包含米饭等滋补食材"),  # "等": the kind asked (no concept), the dish only an example
    ("base", "The order should include 2 Beef Noodles, one mild and one extra spicy"),
    ("base", "The noodles should not be mild and extra spicy"),  # not both, or neither?
    ("more", "The hotpot order should be a set meal for seven people"),  # the catalogue serves no seven
    ("more", "When choosing the cola, select one that feels refreshing"),
    ("more", "When choosing the cola, avoid ice and choose hot"),  # two demands
    ("more", "烤肉订单的商品应为七人份"),
    ("zh", "为了让老人吃得放心，应选择食材新鲜的商家"),  # a judgement, even though a tag has the words
    ("zh", "甜品订单应选择店内销量最好的双皮奶"),
    ("zh", "奶茶订单应选择小杯或特大杯"),  # no size offered at all
    ("zh", "夜宵订单应选择提供深夜配送服务的商家"),  # no place has that tag
    ("zh", "奶茶订单不能选择青禾茶铺（东门店）的桂花乌龙商品"),  # not that store, or not that drink?
    ("zh", "点拌面时应选择提供包厢的商家"),  # one word of the catalogue is not enough
    ("zh", "应在山海小馆（河西店）购买煎饺"),  # no such product
    ("zh", "不应在山海小馆（河西店）购买葱油拌面"),  # not that store, or not that dish?
    ("zh", "奶茶订单中应包含热饮商品，数量为2杯"),  # a count of an option is not a count of a product
    ("zh", "甜品订单中不应包含带有红豆的商品"),  # "含有 X" negated may name a class the words miss
    ("base", "The noodle order should not include seafood, and should include shrimp"),  # a demand not found
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_product_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_chinese_features_check_the_record() -> None:
    holds = nl_rubric.spec_holds
    tea = nl_rubric.LineFacts("R3", "桂花乌龙", ("中杯",), "热", 1, 14.0, ("热", "少冰", "去冰"))
    iced = replace(tea, attributes="少冰")
    grape = nl_rubric.LineFacts("R4", "芝士葡萄", (), "大杯", 1, 19.0, ("大杯", "超大杯"))
    hot = Z("挑选桂花乌龙时商品温度应为热饮")
    assert holds(hot, order([tea]), CTX_ZH.place("Z2"))
    assert not holds(hot, order([iced]), CTX_ZH.place("Z2"))
    size = Z("奶茶订单应选择小杯或中杯，不能选择大杯或超大杯")
    assert all(holds(p, order([tea]), CTX_ZH.place("Z2")) for p in size.parts)
    assert not all(holds(p, order([grape]), CTX_ZH.place("Z3")) for p in size.parts)
    dine_in = Z("午饭的面馆订单的商家需要支持可堂食服务")
    assert holds(dine_in, order([]), CTX_ZH.place("Z1")) and not holds(dine_in, order([]), CTX_ZH.place("Z4"))
    noodles = nl_rubric.LineFacts("R1", "葱油拌面", ("招牌",), "", 2, 16.0)
    two = Z("午饭订单中应包含葱油拌面商品，数量为2份")
    assert all(holds(p, order([noodles]), CTX_ZH.place("Z1")) for p in two.parts)
    assert not all(holds(p, order([replace(noodles, quantity=1)]), CTX_ZH.place("Z1")) for p in two.parts)
    there = Z("应在山海小馆（河西店）购买葱油拌面")
    assert all(holds(p, order([noodles]), CTX_ZH.place("Z1")) for p in there.parts)
    assert not all(holds(p, order([noodles]), CTX_ZH.place("Z4")) for p in there.parts)
    brand = Z("奶茶订单应选择青禾茶铺品牌的商家")
    assert holds(brand, order([grape]), CTX_ZH.place("Z3")) and not holds(brand, order([]), CTX_ZH.place("Z1"))


def test_serving_sizes_check_the_ordered_product() -> None:
    spec = M("The hotpot order should be a set meal for four people, not four individual set meals")
    four = nl_rubric.LineFacts("Q1", "Spicy Broth Four-person Set")
    single = nl_rubric.LineFacts("Q2", "Clear Broth Single-person Set", quantity=4)
    place = CTX_MORE.place("L3")
    assert nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "L3", lines=(four,)), place)
    assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "L3", lines=(single,)), place)
    assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", "L3", lines=(four, single)), place)


def test_phrases_respect_negation_and_scale() -> None:
    assert nl_rubric.phrase_in("spicy", "Extra Spicy") and not nl_rubric.phrase_in("spicy", "Non-spicy")
    assert nl_rubric.phrase_in("non-spicy", "Not spicy") and nl_rubric.phrase_in("caffeine-free", "No caffeine")
    assert nl_rubric.phrase_in("fried egg", "Add Fried Egg") and not nl_rubric.phrase_in("sugar", "Less sugar")
    assert nl_rubric.phrase_in("noodle", "Beef Noodles") and nl_rubric.phrase_in("set menu for two", "Two-person set menu")
    assert nl_rubric.phrase_in("辣", "特辣") and not nl_rubric.phrase_in("辣", "不辣") and not nl_rubric.phrase_in("冰", "去冰")
    assert nl_rubric.phrase_in("鸡爪", "无骨鸡爪") and nl_rubric.phrase_in("不加葱花", "不加葱花")


def test_product_feature_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    assert holds(K("The noodles should be mild or non-spicy"), HOME_ORDER, place)
    assert holds(K("The noodle order must not be extra spicy"), HOME_ORDER, place)
    assert not holds(K("The noodle order must not be extra spicy"), order([replace(BEEF, attributes="Extra Spicy")]), place)
    # a note saying "extra spicy" contradicts "mild"
    assert not holds(K("The noodles should be mild or non-spicy"), order([BEEF], note="extra spicy please"), place)
    assert holds(K("The temperature of the tea should be hot"), HOME_ORDER, place)
    assert not holds(K("The temperature of the tea should be hot"), order([
        nl_rubric.LineFacts("P3", "Jasmine Tea", (), "No Ice", 1, 12.0, ("Less Ice", "No Ice", "Hot"))]), place)


def test_place_feature_checks() -> None:
    assert nl_rubric.spec_holds(K("The noodle restaurant must support Dine-in available"), HOME_ORDER, CTX.place("S1"))


def test_one_line_is_enough_for_include_one() -> None:
    """"包含一杯去冰的饮品": one line with the option passes, though another line chose otherwise;
    no line with it fails."""
    spec = compile_in("zh", "饮品订单中应包含一杯去冰的饮品")
    opts = ("少冰", "去冰")
    one = nl_rubric.LineFacts("R3", "桂花乌龙", attributes="去冰", options=opts)
    other = nl_rubric.LineFacts("R3", "桂花乌龙", attributes="少冰", options=opts)
    assert nl_rubric.spec_holds(spec, order([one, other]), None)
    assert not nl_rubric.spec_holds(spec, order([other]), None)


# ----- in-store shapes (round 2): a world of shops and packages of my own -----------------------------
CTX_SHOPS = nl_rubric.ItemContext(
    now=CTX.now,
    places=(
        nl_rubric.PlaceInfo("H1", "Lotus Bath House", ("Sauna",), "", 4.6),
        nl_rubric.PlaceInfo("H2", "Maple Squash Club", ("Free Parking",), "", 4.2),
        nl_rubric.PlaceInfo("H3", "Harbour Grill", ("Western Cuisine",), "", 4.4),
    ),
    products=(
        nl_rubric.ProductInfo("B1", "H1", "Cedar Sauna Package (Foot Soak Included)", ("Foot Soak", "Back Scrub", "90 minutes"), (), 168.0),
        nl_rubric.ProductInfo("B2", "H1", "Herbal Steam Room Ticket", ("Steam Room",), (), 58.0),
        nl_rubric.ProductInfo("B3", "H2", "Squash 3-Hour Beginner Lesson", ("Racket Included", "Coach"), (), 120.0),
        nl_rubric.ProductInfo("B4", "H2", "Squash Court for 4 Hours", ("Court Rental",), (), 200.0),
        nl_rubric.ProductInfo("B5", "H3", "Ribeye Dinner Set for One", ("Steak", "Red Wine"), (), 188.0),
        nl_rubric.ProductInfo("B6", "H3", "Family Grill Platter for 2 Adults 1 Child", ("Family",), (), 388.0),
        nl_rubric.ProductInfo("B7", "H3", "Lobster Feast for Two", ("Seafood",), (), 588.0),
    ),
)


def S(text: str) -> Any:
    return nl_rubric.compile_item(text, CTX_SHOPS)


def line(pid: str) -> nl_rubric.LineFacts:
    pr = next(p for p in CTX_SHOPS.products if p.product_id == pid)
    return nl_rubric.LineFacts(pid, pr.name, pr.tags)


def test_phrases_bind_numbers_units_and_include_words() -> None:
    p = nl_rubric.phrase_in
    assert p("for one", "Ribeye Dinner Set for One") and not p("for one", "Platter for one adult and one child")
    assert p("for two", "Two-person hotpot") and not p("for 4", "Court for 4 Hours")
    assert p("3 person", "Banquet (2-3 People)") and not p("2 hours", "2 People, 3 Hours")
    assert p("1.5h", "Massage 90 minutes") and p("3-hour lesson", "Squash 3-Hour Beginner Lesson")
    assert p("includes foot soak", "Foot Soak Included") and p("free towel", "Complimentary Towel")
    assert p("set menu for two", "Set Meal for Two") and not p("spicy", "Non-spicy")


def test_in_store_package_items_compile_and_check() -> None:
    holds = nl_rubric.spec_holds
    # a copula with no modal: "is X"
    spec = S("The package bought at the bath house is a cedar sauna package")
    assert spec is not None and spec.phrases == ["cedar sauna package"]
    # "include A and B services": each of them, found across a line's fields
    spec = S("The bath house package must include foot soak and back scrub services")
    assert parts_of(spec) == [(["foot soak"], False), (["back scrub"], False)]
    assert holds(spec, order([line("B1")]), None) and not holds(spec, order([line("B2")]), None)
    # "both A and B" after an include verb is one record's demand; negated "both" stays the judge's
    assert parts_of(S("The grill order should include both steak and red wine")) == [(["steak"], False), (["red wine"], False)]
    assert S("The grill order cannot contain both steak and red wine") is None
    # "access to X", a generic "service" after the value, a gloss in brackets
    assert S("The bath house order must include access to a steam room").phrases == ["steam room"]
    assert S("The bath house order should include herbal steam (a hot herbal bath)").phrases == ["herbal steam"]
    # a unit word the catalogue does not use: the words before it
    assert S("The squash club order should be a beginner lesson voucher").phrases == ["beginner lesson"]
    assert S("The squash club order should be a basic voucher") is None  # nothing but a generic word left
    # serving sizes said "for one" and ranges; "for 2 adults 1 child" is no set for two
    spec = S("The grill order should be a meal for one person")
    assert holds(spec, order([line("B5")]), None) and not holds(spec, order([line("B6")]), None)
    spec = S("The grill order should be a set for two people")
    assert holds(spec, order([line("B7")]), None) and not holds(spec, order([line("B6")]), None)
    # durations in other units
    assert holds(S("The duration of the bath house package should be 1.5 hours"), order([line("B1")]), None)


def test_a_place_said_to_offer_a_product_is_the_shops_that_sell_it() -> None:
    spec = S("The squash club should offer a 3-Hour Beginner Lesson")
    assert spec.kind == "store" and spec.place_ids == ["H2"]
    assert S("The squash club should provide Free Parking").kind == "feature"  # the place's own tag
    assert S("The squash club should offer a yoga lesson") is None  # no shop sells it
    # what every shop's catalogue has tells no shop apart
    everywhere = replace(CTX_SHOPS, products=(*CTX_SHOPS.products, nl_rubric.ProductInfo("B8", "H2", "Steam Room Pass"),
                                              nl_rubric.ProductInfo("B9", "H3", "Steam Room Pass")))
    assert nl_rubric.compile_item("The squash club should offer a steam room", everywhere) is None


def test_values_said_around_the_product() -> None:
    # the subject is the value when the predicate only says it is picked
    assert S("When booking at the grill, the lobster feast should be chosen").phrases == ["lobster feast"]
    assert S("When booking at the grill, it should be chosen") is None
    # "X ingredients", "X as a main ingredient", "the version without X"
    assert S("The grill order should include steak ingredients").phrases == ["steak"]
    assert S("The grill order should include red wine as a main ingredient").phrases == ["red wine"]
    no_wine = replace(CTX_SHOPS, products=(*CTX_SHOPS.products, nl_rubric.ProductInfo("B8", "H3", "Ribeye Set", ("Wine-free",))))
    spec = nl_rubric.compile_item("The grill order should select the version without wine", no_wine)
    assert spec.phrases == ["without wine"]
    assert nl_rubric.spec_holds(spec, order([nl_rubric.LineFacts("B8", "Ribeye Set", ("Wine-free",))]), None)
    assert not nl_rubric.spec_holds(spec, order([line("B5")]), None)


def test_a_serving_size_with_what_it_holds_and_ranges() -> None:
    shops = replace(CTX_SHOPS, products=(*CTX_SHOPS.products,
                                         nl_rubric.ProductInfo("B8", "H3", "Harbour Sharing Platter (2-3 People)", ("Oysters", "Crab Legs")),
                                         nl_rubric.ProductInfo("B9", "H3", "Oyster Plate for 2 People, 3 Sauces", ("Oysters",))))
    spec = nl_rubric.compile_item("The grill order should be a set for 2-3 people that includes oysters and crab legs", shops)
    assert parts_of(spec) == [(["2-3 person"], False), (["oysters"], False), (["crab legs"], False)]
    holds = nl_rubric.spec_holds
    platter = nl_rubric.LineFacts("B8", "Harbour Sharing Platter (2-3 People)", ("Oysters", "Crab Legs"))
    plate = nl_rubric.LineFacts("B9", "Oyster Plate for 2 People, 3 Sauces", ("Oysters",))
    assert holds(spec, order([platter]), None) and not holds(spec, order([plate]), None)
    spec = S("The grill order should be a single-person meal with red wine")
    assert holds(spec, order([line("B5")]), None) and not holds(spec, order([line("B7")]), None)
