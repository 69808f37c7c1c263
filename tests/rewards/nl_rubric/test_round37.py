"""Round 37 of the reader, found by rewording read items of the build part: two demands on one subject ("should
come with sweet bean sauce and be not spicy", "必须不辣，并且不加葱", "既不能是冰饮也不能是大杯"), an option whose
name starts with "not" ("Not Spicy"), "neither X nor Y", an option's value said first ("hot should be the
temperature of the flat white"), a taste said as a state ("应不辣"), "不加X" the catalogue does not offer as such,
verbs of setting an option ("需调整为三分糖", "勾选"), and a negation that only restates the demand ("不要其他口味",
"not any other spice level"), a party size said by whom the booking holds ("should seat 2 guests"), and "located at
most N km away from X", a bound before the modal ("评分至少要4.5分"), "不能是其他店" after a store, a chain said with
an article ("from the / a Baxi store") or first ("Baxi should be the brand of X"), "a remark for X", and what is
offered said with "as well" or "at no charge", and "at least one / no / each" of the goods."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

SHOP = nl_rubric.PlaceInfo("S1", "Street Snacks", ("Snacks",), "Snacks", 4.5)
JIANBING = nl_rubric.ProductInfo("J1", "S1", "Jianbing", (), ("Sweet Bean Sauce", "Ketchup", "Mild Spicy", "Extra Spicy",
                                                              "Not Spicy"), 12.0)
WHITE = nl_rubric.ProductInfo("W1", "S1", "Flat White", (), ("Hot", "Iced"), 28.0)
JUICE = nl_rubric.ProductInfo("U1", "S1", "Orange Juice", (), ("Room Temperature", "Warm", "Chilled"), 18.0)
EN = nl_rubric.ItemContext(now=NOW, places=(SHOP,), products=(JIANBING, WHITE, JUICE))

ZH_SHOP = nl_rubric.PlaceInfo("Z1", "小吃铺", ("小吃",), "小吃", 4.5)
CAKE = nl_rubric.ProductInfo("Z10", "Z1", "手抓饼", (), ("甜面酱", "番茄酱"), 10.0)
CAKE_EGG = nl_rubric.ProductInfo("Z11", "Z1", "手抓饼加蛋", (), ("甜面酱", "番茄酱"), 12.0)
SOUP = nl_rubric.ProductInfo("Z20", "Z1", "鸡汤饭", (), ("加葱", "不加葱"), 20.0)
SPICY_SOUP = nl_rubric.ProductInfo("Z21", "Z1", "香辣鸡汤饭", ("香辣",), ("加葱", "不加葱"), 22.0)
LONGAN = nl_rubric.ProductInfo("Z30", "Z1", "龙眼冰", (), ("三分糖", "五分糖", "全糖"), 15.0)
TEA = nl_rubric.ProductInfo("Z40", "Z1", "红糖珍珠奶茶", (), ("热", "冰", "中杯", "大杯"), 15.0)
ZH = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(CAKE, CAKE_EGG, SOUP, SPICY_SOUP, LONGAN, TEA))


def _holds(spec: object, product: nl_rubric.ProductInfo, chosen: str, place: nl_rubric.PlaceInfo) -> bool:
    line = nl_rubric.LineFacts(product.product_id, product.name, product.tags, chosen, 1, product.price,
                               product.options)
    record = nl_rubric.RecordFacts(table="orders", record_id="O1", place_id=place.place_id, status="paid", lines=(line,))
    return nl_rubric.spec_holds(spec, record, place)


@pytest.mark.parametrize("text", [
    "The Jianbing should come with sweet bean sauce and be not spicy",
    "The Jianbing sauce must be Sweet Bean Sauce, and the spice level must be Not Spicy",
])
def test_two_demands_on_one_subject_are_both_checked(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None and len(nl_rubric.spec_parts(spec)) == 2, (text, spec)
    assert _holds(spec, JIANBING, "Sweet Bean Sauce, Not Spicy", SHOP)
    assert not _holds(spec, JIANBING, "Sweet Bean Sauce, Extra Spicy", SHOP)
    assert not _holds(spec, JIANBING, "Ketchup, Not Spicy", SHOP)


def test_a_purpose_after_and_is_no_second_demand() -> None:
    spec = nl_rubric.compile_item("The Jianbing should be Not Spicy and be suitable for a child's lunch", EN)
    assert spec is not None and spec.kind == "feature", spec


@pytest.mark.parametrize("text", [
    "The Jianbing's spice level should be Not Spicy",
    "The Jianbing must have the Not Spicy option selected",
    "The Jianbing should be Not Spicy, not any other spice level",
    "The Jianbing should be Not Spicy and not other levels",
])
def test_an_option_named_not_spicy(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None and [p.kind for p in nl_rubric.spec_parts(spec)] == ["feature"], (text, spec)
    assert _holds(spec, JIANBING, "Not Spicy", SHOP) and not _holds(spec, JIANBING, "Mild Spicy", SHOP)


def test_neither_nor_and_at_all() -> None:
    spec = nl_rubric.compile_item("The juice must be neither chilled nor warm", EN)
    assert spec is not None
    assert _holds(spec, JUICE, "Room Temperature", SHOP)
    assert not _holds(spec, JUICE, "Chilled", SHOP) and not _holds(spec, JUICE, "Warm", SHOP)
    spec = nl_rubric.compile_item("The flat white should not be iced at all", EN)
    assert spec is not None and _holds(spec, WHITE, "Hot", SHOP) and not _holds(spec, WHITE, "Iced", SHOP)


def test_the_value_said_first_is_the_options_value() -> None:
    spec = nl_rubric.compile_item("Hot should be the temperature of the flat white", EN)
    assert spec is not None
    assert _holds(spec, WHITE, "Hot", SHOP) and not _holds(spec, WHITE, "Iced", SHOP)


@pytest.mark.parametrize("text", ["鸡汤饭必须不辣，并且不加葱", "鸡汤饭既要不辣也要不加葱"])
def test_two_chinese_demands_on_one_subject(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None and len(nl_rubric.spec_parts(spec)) == 2, (text, spec)
    assert _holds(spec, SOUP, "不加葱", ZH_SHOP)
    assert not _holds(spec, SOUP, "加葱", ZH_SHOP)
    assert not _holds(spec, SPICY_SOUP, "不加葱", ZH_SHOP)


def test_a_chinese_negation_reaches_both_demands() -> None:
    spec = nl_rubric.compile_item("奶茶既不能是冰饮也不能是大杯", ZH)
    assert spec is not None and len(nl_rubric.spec_parts(spec)) == 2, spec
    assert _holds(spec, TEA, "热, 中杯", ZH_SHOP)
    assert not _holds(spec, TEA, "冰, 中杯", ZH_SHOP) and not _holds(spec, TEA, "热, 大杯", ZH_SHOP)


def test_no_egg_the_menu_does_not_offer_as_an_option() -> None:
    spec = nl_rubric.compile_item("女儿的手抓饼需选甜面酱口味，同时不加蛋", ZH)
    assert spec is not None
    assert _holds(spec, CAKE, "甜面酱", ZH_SHOP)
    assert not _holds(spec, CAKE_EGG, "甜面酱", ZH_SHOP) and not _holds(spec, CAKE, "番茄酱", ZH_SHOP)


@pytest.mark.parametrize("text", ["龙眼冰糖度需调整为三分糖", "龙眼冰的甜度选项应当勾选三分糖", "龙眼冰的糖度需设置为三分糖"])
def test_verbs_of_setting_an_option(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None, text
    assert _holds(spec, LONGAN, "三分糖", ZH_SHOP) and not _holds(spec, LONGAN, "全糖", ZH_SHOP)


def test_a_negation_of_the_others_only_restates_the_demand() -> None:
    spec = nl_rubric.compile_item("龙眼冰应选三分糖，不要其他甜度", ZH)
    assert spec is not None and [p.kind for p in nl_rubric.spec_parts(spec)] == ["feature"], spec
    assert not spec.negated and _holds(spec, LONGAN, "三分糖", ZH_SHOP)


@pytest.mark.parametrize("text", [
    "The restaurant booking must accommodate 2 diners",
    "The restaurant reservation should seat 2 guests",
    "The reservation at the restaurant should include 2 guests",
])
def test_a_party_size_said_by_whom_the_booking_holds(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None and spec.kind == "count" and spec.what == "people", (text, spec)
    for n, ok in ((2, True), (3, False)):
        visit = nl_rubric.RecordFacts(table="reservations", record_id="R1", place_id="S1", status="paid", customer_count=n)
        assert nl_rubric.spec_holds(spec, visit, SHOP) is ok
    # a count of goods is no party: "include 2 items" stays the quantity reader's
    spec = nl_rubric.compile_item("The restaurant reservation should include 2 Flat White", EN)
    assert spec is None or getattr(spec, "what", "") != "people"


def test_located_at_most_a_distance_away() -> None:
    here = nl_rubric.PlaceInfo("S1", "Street Snacks", ("Snacks",), "Snacks", 4.5, longitude=121.50, latitude=31.20)
    ctx = nl_rubric.ItemContext(now=NOW, places=(here,), products=EN.products,
                                addresses=(("88 Harbour Road, Pudong", 121.51, 31.20),))  # ~950 m east
    spec = nl_rubric.compile_item("The snack shop should be located at most 1 km away from 88 Harbour Road, Pudong", ctx)
    assert spec is not None and spec.kind == "distance" and spec.max_m == 1000.0, spec


@pytest.mark.parametrize("text", ["小吃铺的评分至少要4.5分", "小吃铺评分需达到4.5分"])
def test_a_bound_before_the_modal_stays_a_bound(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None and spec.kind == "rating" and spec.op == ">=" and spec.value == 4.5, (text, spec)


def test_at_least_a_count_is_not_exactly_that_count() -> None:
    # "至少要买10个" was read as exactly 10 ("至少" left in the subject); no count reads "at least"
    spec = nl_rubric.compile_item("龙眼冰至少要买10杯", ZH)
    assert spec is None or not any(p.kind == "count" for p in nl_rubric.spec_parts(spec)), spec


@pytest.mark.parametrize("text", ["订单的店铺应为小吃铺，不能是其他店", "The order should be from Street Snacks rather than any other shop"])
def test_not_the_others_after_a_store_restates_it(text: str) -> None:
    ctx = ZH if "店" in text else EN
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None and spec.kind == "store", (text, spec)


BAKERY = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("B1", "Baxi (Wanda)", ("Cakes",), "Bakery", 4.6),
            nl_rubric.PlaceInfo("B2", "Baxi (Station)", ("Cakes",), "Bakery", 4.4),
            nl_rubric.PlaceInfo("C1", "Cake Corner", ("Cakes",), "Bakery", 4.8)),
    products=(nl_rubric.ProductInfo("K1", "B1", "Birthday Cake", (), (), 128.0),
              nl_rubric.ProductInfo("K2", "C1", "Birthday Cake", (), (), 98.0)),
)


@pytest.mark.parametrize("text", [
    "The birthday cake should be bought from the Baxi store",  # was the cake alone: the store dropped
    "The birthday cake should be bought from a Baxi store",
    "The birthday cake should be bought from Baxi stores",
    "Baxi should be the brand of the birthday cake merchant",  # was "the place matches 'birthday cake'"
])
def test_a_chain_said_with_an_article_or_first(text: str) -> None:
    spec = nl_rubric.compile_item(text, BAKERY)
    assert spec is not None and spec.kind == "store" and set(spec.place_ids) == {"B1", "B2"}, (text, spec)


@pytest.mark.parametrize("text", ["The bakery must have a rating not below 4.5", "The bakery's rating should reach 4.5"])
def test_more_ways_to_say_at_least_a_rating(text: str) -> None:
    spec = nl_rubric.compile_item(text, BAKERY)
    assert spec is not None and spec.kind == "rating" and spec.op == ">=" and spec.value == 4.5, (text, spec)


def test_a_remark_for_something_carries_the_thing() -> None:
    spec = nl_rubric.compile_item("A remark for an extra set of cutlery should be added to the cake order", BAKERY)
    assert spec is not None and spec.kind == "note" and spec.text == "an extra set of cutlery", spec


@pytest.mark.parametrize("text", [
    "The manicure set needs to offer nail removal at no charge",
    "The manicure set must include nail removal as well",
    "Nail removal should be used for the manicure set",
])
def test_what_is_offered_without_its_price_or_also(text: str) -> None:
    salon = nl_rubric.PlaceInfo("N1", "Glow Nails", ("Nail Salon",), "Beauty", 4.7)
    plain = nl_rubric.ProductInfo("M1", "N1", "Gel Manicure Set", ("Gel",), (), 98.0)
    full = nl_rubric.ProductInfo("M2", "N1", "Manicure Set with Nail Removal", ("Nail Removal",), (), 128.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(salon,), products=(plain, full))
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None and spec.kind == "feature", (text, spec)
    assert _holds(spec, full, "", salon) and not _holds(spec, plain, "", salon)


def test_a_tag_or_a_pairing_said_without_the_usual_verb() -> None:
    shop = nl_rubric.PlaceInfo("F1", "家常菜馆", ("中餐",), "中餐", 4.5)
    sour = nl_rubric.ProductInfo("F10", "F1", "酸汤肥牛套餐", ("开胃",), (), 38.0)
    plain = nl_rubric.ProductInfo("F11", "F1", "红烧肉套餐", ("下饭",), (), 36.0)
    greens = nl_rubric.ProductInfo("F12", "F1", "酱骨饭配时蔬", ("蔬菜",), (), 30.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(shop,), products=(sour, plain, greens))
    spec = nl_rubric.compile_item("晚餐套餐要开胃", ctx)  # a tag of the catalogue, no verb
    assert spec is not None and _holds(spec, sour, "", shop) and not _holds(spec, plain, "", shop)
    spec = nl_rubric.compile_item("酱骨饭套餐需搭配蔬菜", ctx)
    assert spec is not None and _holds(spec, greens, "", shop) and not _holds(spec, plain, "", shop)


@pytest.mark.parametrize("text", ["Orange Juice should not appear in the snack order", "龙眼冰不应出现在饮品订单中"])
def test_what_must_not_appear_in_an_order(text: str) -> None:
    ctx = EN if "Juice" in text else ZH
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None and spec.kind == "feature" and spec.negated, (text, spec)


def _order_of(*lines: tuple[nl_rubric.ProductInfo, str]) -> nl_rubric.RecordFacts:
    facts = tuple(nl_rubric.LineFacts(p.product_id, p.name, p.tags, chosen, 1, p.price, p.options) for p, chosen in lines)
    return nl_rubric.RecordFacts(table="orders", record_id="O1", place_id="S1", status="paid", lines=facts)


@pytest.mark.parametrize("text", ["At least one juice should be room temperature", "One of the juices should be room temperature"])
def test_at_least_one_of_the_goods_is_one_line(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None and spec.kind == "feature" and spec.some, (text, spec)
    assert nl_rubric.spec_holds(spec, _order_of((JUICE, "Room Temperature"), (JUICE, "Chilled")), SHOP)
    assert not nl_rubric.spec_holds(spec, _order_of((JUICE, "Warm"), (JUICE, "Chilled")), SHOP)


def test_no_goods_of_a_kind_may_have_it() -> None:
    # "no X ... should contain Y" was read as "X should contain Y" (the "no" dropped)
    spec = nl_rubric.compile_item("No juice in the order should be chilled", EN)
    assert spec is not None and spec.kind == "feature" and spec.negated, spec
    assert nl_rubric.spec_holds(spec, _order_of((JUICE, "Warm")), SHOP)
    assert not nl_rubric.spec_holds(spec, _order_of((JUICE, "Warm"), (JUICE, "Chilled")), SHOP)
    # an option whose name starts with "No" is that option, chosen
    ice = nl_rubric.ProductInfo("T1", "S1", "Pearl Tea", (), ("No Ice", "Less Ice", "Standard Ice"), 15.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(SHOP,), products=(ice,))
    spec = nl_rubric.compile_item("No Ice should be selected for the pearl tea", ctx)
    assert spec is not None and not spec.negated and spec.phrases == ["no ice"], spec


def test_each_of_the_goods_is_every_one() -> None:
    spec = nl_rubric.compile_item("Each flat white should be hot", EN)
    assert spec is not None and spec.kind == "feature" and not spec.some, spec
    assert not nl_rubric.spec_holds(spec, _order_of((WHITE, "Hot"), (WHITE, "Iced")), SHOP)


def test_chinese_one_of_and_each_of_the_goods() -> None:
    spec = nl_rubric.compile_item("至少有一杯奶茶应为中杯", ZH)
    assert spec is not None and spec.kind == "feature" and spec.some, spec
    assert nl_rubric.spec_holds(spec, _order_of((TEA, "中杯"), (TEA, "大杯")), ZH_SHOP)
    spec = nl_rubric.compile_item("每杯奶茶都应是热饮", ZH)
    assert spec is not None and spec.kind == "feature" and not spec.some, spec
    assert not nl_rubric.spec_holds(spec, _order_of((TEA, "热"), (TEA, "冰")), ZH_SHOP)
