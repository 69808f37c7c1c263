"""Round 32 of the reader: options said in other registers. "应选为热饮" ("选为": select as), a value in brackets
("【去冰】", "[Extra Spicy]"), and English verbs that set an option ("be set to X", "be made X", "have its spice level
set to X", "come in the X option", "be prepared at the X level") were the judge's, or read with the verb's words in the
phrase ("to extra spicy"); each is now the option's check, and "be made of X" still reads what it is made of.
Prices likewise: "be priced under 200" (no currency), "stay within / fall between / go over", "no pricier than",
"cheaper than", "a budget of N", "the price per package" (a unit price); "最多花100元" (read as exactly 100 before),
"超出100元的预算", "在100元预算内", "以100元为上限", "每份X的价格" (a unit price), "一百五十元" (Chinese numerals, cn2an)."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

SPICE = ("Medium Spicy", "Extra Spicy", "Mild Spicy")
EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Xinjiang Kitchen", (), "Food", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Xinjiang Spicy Chicken", (), SPICE, 58.0),
              nl_rubric.ProductInfo("P2", "S1", "Hand-pulled Noodles", ("Made of Wheat",), (), 12.0)),
)
ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "鲜果时光", (), "饮品", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "金桔柠檬", (), ("少冰", "去冰", "标准冰", "常温", "热饮"), 16.0),),
)


def _holds(ctx: nl_rubric.ItemContext, spec: object, chosen: str) -> bool:
    pr = ctx.products[0]
    return nl_rubric.spec_holds(spec, order([nl_rubric.LineFacts(pr.product_id, pr.name, (), chosen, 1, pr.price, pr.options)]),
                                ctx.places[0])


@pytest.mark.parametrize("text", [
    "The spiciness of the spicy chicken should be set to Extra Spicy",
    "The spicy chicken should be made Extra Spicy",
    "The spicy chicken ordered should have its spice level set to 'Extra Spicy'",
    "The spicy chicken must come in the Extra Spicy option",
    "The spicy chicken should be prepared at the Extra Spicy level",
    "The spice level chosen for the spicy chicken should be [Extra Spicy]",
])
def test_an_english_option_set_by_another_verb(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None and nl_rubric.describe_spec(spec).casefold() == "the product matches 'extra spicy'", (text, spec)
    assert _holds(EN, spec, "Extra Spicy") and not _holds(EN, spec, "Medium Spicy")


@pytest.mark.parametrize("text, good, bad", [
    ("金桔柠檬订单中商品的温度规格应选为热饮", "热饮", "常温"),
    ("金桔柠檬的规格选择应当为【去冰】", "去冰", "少冰"),
])
def test_a_chinese_option_selected_as_or_in_brackets(text: str, good: str, bad: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None, text
    assert _holds(ZH, spec, good) and not _holds(ZH, spec, bad)


def test_made_of_still_reads_what_it_is_made_of() -> None:
    spec = nl_rubric.compile_item("The noodles should be made of wheat", EN)
    assert spec is not None and "wheat" in nl_rubric.describe_spec(spec) and "made" not in nl_rubric.describe_spec(spec)


SPA = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Soothing Foot Spa", (), "Massage", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Foot Massage Package", (), (), 168.0),),
)
SWEET = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "芋泥甜品店", (), "甜品", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "芋泥点心", (), (), 18.0),),
)


@pytest.mark.parametrize("text, want", [
    ("The foot massage package should be priced under 200", "unit price < 200 yuan"),
    ("The total for the foot massage order should stay within 200 yuan", "total price <= 200 yuan"),
    ("The foot massage order's total must not go over 200 yuan", "total price <= 200 yuan"),
    ("The price per foot massage package should be at most 200 yuan", "unit price <= 200 yuan"),
    ("The foot massage package's price should fall between 100 and 200 yuan", "unit price >= 100 and <= 200 yuan"),
    ("The foot massage order must not exceed a budget of 200 yuan", "total price <= 200 yuan"),
    ("The foot massage package should be no pricier than 200 yuan", "unit price <= 200 yuan"),
    ("The foot massage package should be cheaper than 200 yuan", "unit price < 200 yuan"),
])
def test_an_english_price_in_other_words(text: str, want: str) -> None:
    spec = nl_rubric.compile_item(text, SPA)
    assert spec is not None and nl_rubric.describe_spec(spec) == want, (text, spec)


@pytest.mark.parametrize("text, want", [
    ("芋泥点心订单最多花100元", "total price <= 100 yuan"),  # was read as exactly 100
    ("芋泥点心订单不能超出100元的预算", "total price <= 100 yuan"),
    ("芋泥点心订单应在100元预算内", "total price <= 100 yuan"),
    ("芋泥点心订单总价以100元为上限", "total price <= 100 yuan"),
    ("每份芋泥点心的价格应不超过20元", "unit price <= 20 yuan"),
    ("芋泥点心订单的消费金额不得超过一百五十元", "total price <= 150 yuan"),  # a Chinese numeral (cn2an)
])
def test_a_chinese_price_in_other_words(text: str, want: str) -> None:
    spec = nl_rubric.compile_item(text, SWEET)
    assert spec is not None and nl_rubric.describe_spec(spec) == want, (text, spec)
