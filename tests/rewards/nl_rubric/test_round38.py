"""Round 38 of the reader, found by rewording read items of the build part: a count said of a product as its
subject ("包包菜炒馕要1份", "X一共要1份", "订单中X应为1份", "the X in the order should be 1 portion": that product's
count, not the order's), "共计 / 总计" with a count, dishes counted with "道" ("白切鸡、牛腩煲两道菜"), a place "labeled" with a
tag; and a negated demand met only by none of it ("without ice" is not "Less Ice", "不要辣" is not "微辣")."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

ZH_SHOP = nl_rubric.PlaceInfo("Z1", "新疆菜馆", ("新疆菜", "可堂食"), "新疆菜", 4.5)
NAAN = nl_rubric.ProductInfo("Z10", "Z1", "包包菜炒馕", (), (), 28.0)
CHICKEN = nl_rubric.ProductInfo("Z11", "Z1", "白切鸡", (), (), 38.0)
BRISKET = nl_rubric.ProductInfo("Z12", "Z1", "牛腩煲", (), (), 48.0)
ZH = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(NAAN, CHICKEN, BRISKET))

EN_SHOP = nl_rubric.PlaceInfo("S1", "Silk Road Kitchen", ("Xinjiang Cuisine", "Dine-in Restaurant"), "Xinjiang", 4.5)
EN_NAAN = nl_rubric.ProductInfo("S10", "S1", "Cabbage Fried Naan", (), (), 28.0)
EN_SKEWER = nl_rubric.ProductInfo("S11", "S1", "Lamb Skewer", (), (), 8.0)
EN = nl_rubric.ItemContext(now=NOW, places=(EN_SHOP,), products=(EN_NAAN, EN_SKEWER))


def _record(lines: list[tuple[nl_rubric.ProductInfo, int]], place: nl_rubric.PlaceInfo) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts(table="orders", record_id="O1", place_id=place.place_id, status="paid", lines=tuple(
        nl_rubric.LineFacts(p.product_id, p.name, p.tags, "", n, p.price, p.options) for p, n in lines))


def _reads_as(said: str, known: str, ctx: nl_rubric.ItemContext) -> None:
    """``said`` reads as ``known``, a wording the reader already reads."""
    want = nl_rubric.compile_item(known, ctx)
    assert want is not None, known
    got = nl_rubric.compile_item(said, ctx)
    assert got is not None and nl_rubric.describe_spec(got) == nl_rubric.describe_spec(want), (said, got, want)


@pytest.mark.parametrize("text, ctx, place, naan, other", [
    ("新疆菜订单里的包包菜炒馕要1份", ZH, ZH_SHOP, NAAN, CHICKEN),
    ("新疆菜订单中包包菜炒馕应为1份", ZH, ZH_SHOP, NAAN, CHICKEN),
    ("包包菜炒馕要1份", ZH, ZH_SHOP, NAAN, CHICKEN),
    ("包包菜炒馕一共要1份", ZH, ZH_SHOP, NAAN, CHICKEN),
    ("The Cabbage Fried Naan in the Xinjiang order should be 1 portion", EN, EN_SHOP, EN_NAAN, EN_SKEWER),
])
def test_a_count_of_a_product_subject_counts_that_product(text, ctx, place, naan, other) -> None:
    spec = nl_rubric.compile_item(text, ctx)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.value == 1 and spec.phrase, (text, spec)
    # one naan and three skewers: the naan is 1 portion, whatever else the order holds
    assert nl_rubric.spec_holds(spec, _record([(naan, 1), (other, 3)], place), place)
    assert not nl_rubric.spec_holds(spec, _record([(naan, 2)], place), place)


@pytest.mark.parametrize("text", ["新疆菜订单共有3件商品", "新疆菜订单共计3件商品", "新疆菜订单总计应有3件商品"])
def test_a_total_said_with_gong_ji_or_he_ji_counts_the_order(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.phrase) == (3, ""), (text, spec)


@pytest.mark.parametrize("text", ["订单中必须包含白切鸡、牛腩煲两道菜", "订单中应点白切鸡和牛腩煲这两道菜品"])
def test_dishes_counted_with_dao_are_each_demanded(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None, text
    assert nl_rubric.spec_holds(spec, _record([(CHICKEN, 1), (BRISKET, 1)], ZH_SHOP), ZH_SHOP)
    assert not nl_rubric.spec_holds(spec, _record([(CHICKEN, 1), (NAAN, 1)], ZH_SHOP), ZH_SHOP)


def test_a_place_labeled_with_a_tag() -> None:
    spec = nl_rubric.compile_item("The Xinjiang restaurant must be labeled Dine-in Restaurant", EN)
    assert spec is not None
    other = nl_rubric.PlaceInfo("S2", "Takeaway Corner", ("Xinjiang Cuisine",), "Xinjiang", 4.5)
    assert nl_rubric.spec_holds(spec, _record([(EN_NAAN, 1)], EN_SHOP), EN_SHOP)
    assert not nl_rubric.spec_holds(spec, _record([(EN_NAAN, 1)], other), other)


def test_a_single_portion_stays_a_serving_size() -> None:
    # "a single portion" is for one person (``serving.py``), not "a count of 1", which the new rule reads only in
    # figures or from two up
    spec = nl_rubric.compile_item("The Cabbage Fried Naan should be a single portion", EN)
    assert not isinstance(spec, nl_rubric.CountSpec), spec


HEAL = nl_rubric.PlaceInfo("H1", "Mindful Space Meditation Center", ("Healing",), "Healing", 4.5)
HEAL_NEW = nl_rubric.ProductInfo("H10", "H1", "Deep relaxation meditation course (new customer benefit price)", ("Healing",),
                                 (), 98.0)
HEAL_OLD = nl_rubric.ProductInfo("H11", "H1", "Deep relaxation meditation course", ("Healing",), (), 128.0)
POT = nl_rubric.ProductInfo("H20", "H1", "5-Person Hot Pot Set", (), (), 399.0)
POT_TWO = nl_rubric.ProductInfo("H21", "H1", "2-Person Hot Pot Set", (), (), 199.0)
HEAL_CTX = nl_rubric.ItemContext(now=NOW, places=(HEAL,), products=(HEAL_NEW, HEAL_OLD, POT, POT_TWO), evidence=(HEAL_NEW,))


@pytest.mark.parametrize("said, known", [
    # bought "at" a price: the price, not a place called "the new customer benefit price"
    ("The ordered item at the healing center should be purchased at the new customer benefit price",
     "The ordered item at the healing center should be at new customer benefit price"),
    ("The reservation at the restaurant should be for a party of two", "The reservation at the restaurant should be for 2 people"),
    ("The hot pot package must feed at least five people", "The hot pot package should serve at least 5 people"),
    ("The meditation course should be 90 minutes long", "The meditation course should be 90 minutes"),
])
def test_other_wordings_read_as_the_known_demand(said: str, known: str) -> None:
    _reads_as(said, known, HEAL_CTX)


CUP = nl_rubric.ProductInfo("Z30", "Z1", "红糖姜茶", (), ("中杯", "大杯"), 15.0)
SALAD = nl_rubric.ProductInfo("Z31", "Z1", "夫妻肺片", (), ("加香菜", "不加香菜"), 32.0)
CUP_CTX = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(CUP, SALAD))


@pytest.mark.parametrize("said, known", [
    ("姜茶只能选中杯，别选大杯", "姜茶应选中杯，不能选大杯"),  # "别" as the negative modal of a second demand
    ("夫妻肺片里别放香菜", "夫妻肺片里不要放香菜"),
])
def test_bie_is_a_negative_modal(said: str, known: str) -> None:
    _reads_as(said, known, CUP_CTX)


@pytest.mark.parametrize("said, known", [
    ("干锅焖饭要有酥肉跟肥牛", "干锅焖饭应包含酥肉和肥牛"),  # "跟" joins two things as "和" does
    ("椒麻鸡订单要配面条", "椒麻鸡订单应搭配面条"),  # "配" (not "配送") as "搭配"
    ("椒麻鸡订单要搭配面条类的主食", "椒麻鸡订单应搭配面条"),  # "主食" after a class says what kind of thing it is
])
def test_more_chinese_registers_read_as_the_known_demand(said: str, known: str) -> None:
    noodles = nl_rubric.ProductInfo("Z40", "Z1", "椒麻鸡拌面", (), (), 26.0)
    pot = nl_rubric.ProductInfo("Z41", "Z1", "干锅焖饭", (), ("酥肉", "肥牛", "鸡肉"), 30.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(noodles, pot))
    _reads_as(said, known, ctx)


def test_delivery_is_not_read_as_pei() -> None:
    noodles = nl_rubric.ProductInfo("Z40", "Z1", "椒麻鸡拌面", (), (), 26.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(noodles,))
    spec = nl_rubric.compile_item("椒麻鸡订单要配送到公司", ctx)
    assert spec is None or "product" not in nl_rubric.describe_spec(spec), spec


BUN_SHOP = nl_rubric.PlaceInfo("B1", "Mochi House", ("Bakery",), "Bakery", 4.6)
BUN = nl_rubric.ProductInfo("B10", "B1", "Pineapple Bun", (), ("With Butter", "Without Butter"), 9.0)
BIBIMBAP = nl_rubric.ProductInfo("B11", "B1", "Tuna Bibimbap", (), (), 28.0)
BUN_CTX = nl_rubric.ItemContext(now=NOW, places=(BUN_SHOP,), products=(BUN, BIBIMBAP))


@pytest.mark.parametrize("said, known", [
    # the thing added "to" a product is what it includes (before: the demand on the product, the butter dropped)
    ("Butter should not be added to the pineapple bun", "The pineapple bun should come without butter"),
    ("The bun should be re-ordered from Mochi House again", "The bun should be ordered from Mochi House"),
    ("The bibimbap should cost more than 25 yuan", "The price of the bibimbap should be more than 25 yuan"),
])
def test_english_wordings_read_as_the_known_demand(said: str, known: str) -> None:
    _reads_as(said, known, BUN_CTX)


def test_a_thing_added_to_a_product_is_what_it_includes() -> None:
    spec = nl_rubric.compile_item("Butter should be added to the pineapple bun", BUN_CTX)
    assert spec is not None and "butter" in nl_rubric.describe_spec(spec), spec


def test_nothing_in_the_record_is_a_negation() -> None:
    # "Nothing in X should contain Y" had been read as "X contains Y": the demand inverted
    cinema = nl_rubric.PlaceInfo("C1", "Star Cinema", ("Private cinema",), "Cinema", 4.6)
    tea = nl_rubric.ProductInfo("C10", "C1", "Movie Package with Milk Tea", ("Contains Caffeine",), (), 99.0)
    juice = nl_rubric.ProductInfo("C11", "C1", "Movie Package with Juice", ("Caffeine-free",), (), 99.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(cinema,), products=(tea, juice))
    spec = nl_rubric.compile_item("Nothing in the private cinema package should contain caffeine", ctx)
    assert spec is not None
    assert not nl_rubric.spec_holds(spec, _record([(tea, 1)], cinema), cinema)
    assert nl_rubric.spec_holds(spec, _record([(juice, 1)], cinema), cinema)


@pytest.mark.parametrize("text", ["The table tennis hall should be booked for one person only",
                                  "The table tennis hall reservation should be for 1 person only"])
def test_a_party_of_one_only(text: str) -> None:
    hall = nl_rubric.PlaceInfo("T1", "Ping Pong Hall", ("Table tennis",), "Sports", 4.6)
    spec = nl_rubric.compile_item(text, nl_rubric.ItemContext(now=NOW, places=(hall,), products=()))
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.value) == ("people", 1), spec


@pytest.mark.parametrize("said, known", [
    ("粽子别从巴比馒头买", "粽子不要从巴比馒头买"),  # "别从": had been read as buying there (the negation dropped)
    ("粽子别在巴比馒头下单", "粽子不能在巴比馒头下单"),
])
def test_bie_before_where_is_a_negation(said: str, known: str) -> None:
    baozi = nl_rubric.PlaceInfo("Z2", "巴比馒头", ("包子",), "早餐", 4.5)
    zongzi = nl_rubric.ProductInfo("Z20", "Z2", "鲜肉粽", (), (), 8.0)
    zongzi2 = nl_rubric.ProductInfo("Z21", "Z1", "蛋黄肉粽", (), (), 9.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP, baozi), products=(zongzi, zongzi2))
    _reads_as(said, known, ctx)
    spec = nl_rubric.compile_item(said, ctx)
    assert not nl_rubric.spec_holds(spec, _record([(zongzi, 1)], baozi), baozi)


SALAD = nl_rubric.ProductInfo("B12", "B1", "Chicken Salad", (), ("With Green Onion", "No Green Onion"), 30.0)
MIXUE = nl_rubric.PlaceInfo("M1", "Mixue Ice Cream", ("Drinks",), "Drinks", 4.2)
TEA_HOUSE = nl_rubric.PlaceInfo("M2", "Leaf Tea House", ("Drinks",), "Drinks", 4.6)
DRINKS = nl_rubric.ItemContext(now=NOW, places=(BUN_SHOP, MIXUE, TEA_HOUSE), products=(
    SALAD, nl_rubric.ProductInfo("M10", "M1", "Lemon Tea", (), (), 8.0),
    nl_rubric.ProductInfo("M20", "M2", "Jasmine Tea", (), (), 12.0)))


@pytest.mark.parametrize("said, known", [
    # the record a command is for, after "for": before, 'mixue ice cream for the' was the value (a vacuous exclusion)
    ("Do not choose Mixue Ice Cream for the drinks", "The drinks should not come from Mixue Ice Cream"),
    ("The salad must be free from green onion", "The salad must be free of green onion"),
])
def test_negated_wordings_read_as_the_known_demand(said: str, known: str) -> None:
    _reads_as(said, known, DRINKS)


@pytest.mark.parametrize("said", ["粽子勿从巴比馒头买", "粽子请勿在巴比馒头下单"])
def test_wu_is_a_negation(said: str) -> None:
    # "勿" had been dropped: the item read as ordering there
    baozi = nl_rubric.PlaceInfo("Z2", "巴比馒头", ("包子",), "早餐", 4.5)
    zongzi = nl_rubric.ProductInfo("Z20", "Z2", "鲜肉粽", (), (), 8.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP, baozi), products=(
        zongzi, nl_rubric.ProductInfo("Z21", "Z1", "蛋黄肉粽", (), (), 9.0)))
    spec = nl_rubric.compile_item(said, ctx)
    assert spec is not None and not nl_rubric.spec_holds(spec, _record([(zongzi, 1)], baozi), baozi), spec


@pytest.mark.parametrize("text, cancelled", [
    ("需取消订单T01", True), ("id为T01的订单需要被取消", True), ("id为T01的订单应被取消", True),
    ("id为T01的订单不应被取消", None), ("id为T01的订单别取消", None),
])
def test_a_chinese_cancellation_said_with_xu_or_bei(text: str, cancelled: bool | None) -> None:
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(NAAN,), record_ids=("T01",))
    spec = nl_rubric.compile_item(text, ctx)
    if cancelled is None:  # a negated cancellation is never read as the cancellation
        assert spec is None, spec
    else:
        assert isinstance(spec, nl_rubric.StatusSpec) and (spec.status, spec.record_id) == ("cancelled", "T01"), spec


@pytest.mark.parametrize("said", ["拉面订单需配送至幸福路3号天元大厦", "拉面订单需送到幸福路3号天元大厦"])
def test_an_address_said_with_xu(said: str) -> None:
    spec = nl_rubric.compile_item(said, ZH)
    assert isinstance(spec, nl_rubric.AddressSpec) and "天元大厦" in spec.address, spec


HALL = nl_rubric.PlaceInfo("P1", "Ping Pong Hall", ("Table tennis", "Established 12 years"), "Sports", 4.6,
                           longitude=112.55, latitude=37.80)
HALL_CTX = nl_rubric.ItemContext(now=NOW, places=(HALL,), products=(
    nl_rubric.ProductInfo("P10", "P1", "Table Tennis 2 Hours", ("2 hours",), (), 60.0),
    nl_rubric.ProductInfo("P11", "P1", "Table Tennis 1 Hour", ("1 hour",), (), 35.0)))


@pytest.mark.parametrize("said, known", [
    # how long the booking lasts (before: only the place, 'table tennis hall', was checked)
    ("The table tennis hall should be booked for two hours", "The table tennis package should last exactly 2 hours"),
    ("The table tennis booking should be for 2 hours", "The table tennis package should last exactly 2 hours"),
    ("The hall should have at least a 4.0 rating", "The hall's rating must be no lower than 4.0"),
    ("The hall should have a 4.5-star rating or above", "The hall's rating should be 4.5 or above"),
    ("The hall must have a history of over 10 years", "The hall should have been open for more than ten years"),
])
def test_in_store_wordings_read_as_the_known_demand(said: str, known: str) -> None:
    _reads_as(said, known, HALL_CTX)


@pytest.mark.parametrize("said, known", [
    ("水饺应满足不含韭菜", "水饺不应含有韭菜"),  # "满足" right after the modal is the demand, not a purpose
    ("饮品均需去冰", "饮品应选择去冰"),  # "需去冰": 去 as the verb of an option
])
def test_man_zu_and_qu_read_as_the_known_demand(said: str, known: str) -> None:
    dumpling = nl_rubric.ProductInfo("Z50", "Z1", "猪肉韭菜水饺", (), (), 20.0)
    dumpling2 = nl_rubric.ProductInfo("Z51", "Z1", "猪肉白菜水饺", (), (), 20.0)
    drink = nl_rubric.ProductInfo("Z52", "Z1", "柠檬茶饮品", (), ("正常冰", "少冰", "去冰"), 12.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(ZH_SHOP,), products=(dumpling, dumpling2, drink))
    _reads_as(said, known, ctx)


def test_ordered_without_is_none_of_it() -> None:
    # "should be ordered without ice" had become the phrase 'without ice', which the option "No Ice" does not spell
    _reads_as("The milk tea should be ordered without ice", "The milk tea should come without ice", ICE_CTX)


ICE_CTX = nl_rubric.ItemContext(now=NOW, places=(BUN_SHOP,), products=(
    nl_rubric.ProductInfo("I10", "B1", "Jasmine Milk Tea", (), ("Regular Ice", "Less Ice", "No Ice"), 15.0),))


def test_a_count_of_some_of_the_goods_is_not_the_orders_total() -> None:
    # "奶茶订单中不含奶的商品要有2杯" had been read as the order holding 2 items in all
    assert nl_rubric.compile_item("奶茶订单中不含奶的商品要有2杯", ZH) is None
    spec = nl_rubric.compile_item("奶茶订单的商品应共有12杯", ZH)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.phrase) == (12, ""), spec
    spec = nl_rubric.compile_item("包包菜炒馕的购买数量为1份", ZH)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.value == 1 and spec.phrase, spec


def test_two_of_the_goods_is_some_lines_not_every_line() -> None:
    # "Two of the milk teas should be dairy-free" had asked it of every tea (a legal order of 2 dairy-free and
    # 10 other teas failed); a class said by its absence ("dairy-free") now honours "some" too
    shop = nl_rubric.PlaceInfo("T1", "Tea Bar", ("Milk Tea",), "Drinks", 4.6)
    oat = nl_rubric.ProductInfo("T10", "T1", "Oat Milk Tea", ("Dairy-free",), (), 16.0)
    milk = nl_rubric.ProductInfo("T11", "T1", "Classic Milk Tea", ("Fresh Milk",), (), 15.0)
    ctx = nl_rubric.ItemContext(now=NOW, places=(shop,), products=(oat, milk))
    spec = nl_rubric.compile_item("Two of the milk teas should be dairy-free", ctx)
    assert spec is not None
    assert nl_rubric.spec_holds(spec, _record([(oat, 2), (milk, 10)], shop), shop)
    assert not nl_rubric.spec_holds(spec, _record([(milk, 12)], shop), shop)
    assert nl_rubric.compile_item("Two of the milk teas should not be dairy-free", ctx) is None


@pytest.mark.parametrize("text, tolerance", [
    ("The ramen should arrive around 12 noon on 2025-07-11", 15.0),  # "noon" had made it an exact time (±5 min)
    ("The ramen must be delivered within 30 minutes of 2025-07-11 12:00", 30.0),  # had been ±5 min
    ("The ramen must be delivered within an hour of 12:00 on 2025-07-11", 60.0),
    ("The ramen must be delivered within half an hour of 2025-07-11 12:00", 30.0),
])
def test_a_margin_around_noon_or_said_as_within_of(text: str, tolerance: float) -> None:
    from datetime import datetime

    win = nl_rubric.compile_time_item(text, NOW)
    assert win is not None and win.relation == "around" and win.tolerance_min == tolerance, (text, win)
    assert win.earliest == win.latest == datetime(2025, 7, 11, 12, 0)


def test_within_a_margin_of_two_times_is_not_read() -> None:
    assert nl_rubric.compile_time_item("The ramen must be delivered within 30 minutes of 12:00 or 13:00 on 2025-07-11",
                                       NOW) is None
