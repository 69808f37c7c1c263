"""Round 32 of the reader: options said in other registers. "应选为热饮" ("选为": select as), a value in brackets
("【去冰】", "[Extra Spicy]"), and English verbs that set an option ("be set to X", "be made X", "have its spice level
set to X", "come in the X option", "be prepared at the X level") were the judge's, or read with the verb's words in the
phrase ("to extra spicy"); each is now the option's check, and "be made of X" still reads what it is made of."""

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
