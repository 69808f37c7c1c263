"""Price items (``rewards/nl_rubric/price.py``): an order's total or a unit price; "around" is
within 10 %."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import CTX, HOME_ORDER, K, compile_in, compiles_to, left_to_the_judge

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # prices: the order's total or a product's price; "around" is within 10%
    ("base", "Total price of the noodle order should be around 50 yuan", "price", lambda s: (s.scope, s.low, s.high) == ("total", 45.0, 55.0)),
    ("base", "The price of the noodles should not exceed 30 yuan (inclusive)", "price", lambda s: (s.scope, s.high, s.high_strict) == ("unit", 30.0, False)),
    ("base", "The tea should cost less than 20 yuan", "price", lambda s: (s.high, s.high_strict) == (20.0, True)),
    ("base", "The noodle order price should be between 100-150 yuan (inclusive)", "price", lambda s: (s.scope, s.low, s.high) == ("total", 100.0, 150.0)),
    ("base", "面条订单的总价格应控制在80元以内", "price", lambda s: (s.scope, s.high) == ("total", 80.0)),
    ("base", "下单的商品价格应高于25元", "price", lambda s: (s.scope, s.low, s.low_strict) == ("unit", 25.0, True)),
    ("base", "面条订单的总价应在50元左右", "price", lambda s: (s.low, s.high) == (45.0, 55.0)),
    # budgets and whole-order limits are caps on the total, with or without a modal
    ("base", "The noodle order's budget is 120 yuan", "price", lambda s: (s.scope, s.low, s.high) == ("total", None, 120.0)),
    ("base", "The lunch order should stay within a budget of 90 yuan", "price", lambda s: (s.scope, s.high) == ("total", 90.0)),
    ("base", "The whole order should not exceed 60 yuan (60 yuan inclusive)", "price", lambda s: (s.scope, s.high, s.high_strict) == ("total", 60.0, False)),
    ("base", "整单不超过150元", "price", lambda s: (s.scope, s.high, s.high_strict) == ("total", 150.0, False)),
    ("base", "面条订单预算为100元", "price", lambda s: (s.scope, s.low, s.high) == ("total", None, 100.0)),
    # a unit price: what was ordered, named by any noun, or a unit price said so
    ("base", "下单的牛肉面价格应在20到35元之间", "price", lambda s: (s.scope, s.low, s.high) == ("unit", 20.0, 35.0)),
    ("base", "所点的面条价格在20到35元之间", "price", lambda s: (s.scope, s.low, s.high) == ("unit", 20.0, 35.0)),
    ("base", "The ordered soup's price should be between 10 and 20 yuan", "price", lambda s: (s.scope, s.low, s.high) == ("unit", 10.0, 20.0)),
    ("base", "The Jasmine Tea price should be under 15 yuan", "price", lambda s: (s.scope, s.high, s.high_strict) == ("unit", 15.0, True)),
    ("base", "商品单价不低于10元", "price", lambda s: (s.scope, s.low) == ("unit", 10.0)),
    # a reason before the requirement, in the same sentence
    ("base", "Since the user usually spends about 30 yuan, the price of the noodles should be at most 35 yuan", "price", lambda s: (s.scope, s.high) == ("unit", 35.0)),
    ("base", "由于用户平时消费约30元，下单的商品价格应不超过35元", "price", lambda s: (s.scope, s.high) == ("unit", 35.0)),
    # a reason with a modal of its own: the requirement after its comma
    ("base", "Since the two friends don't want to spend more than 40 yuan each, the noodle order should cost at most 80 yuan", "price", lambda s: (s.scope, s.high) == ("total", 80.0)),
    ("base", "因为两人都不想各自花超过40元，面条订单的总价应不超过80元", "price", lambda s: (s.scope, s.high) == ("total", 80.0)),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_price_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The total cost of all orders cannot exceed 200 yuan"),  # a sum over orders
    ("base", "The price per person should be 50 yuan"),
    ("base", "人均不超过80元"),  # per head: neither the total nor a unit price
    ("base", "The average spend per guest must not exceed 90 yuan"),
    ("base", "下单的店铺价格应在20到35元之间"),  # the price of a place
    ("base", "The total price of the lunch and dinner orders should be within 90 yuan"),  # two orders
    ("base", "Since the friends don't want to spend more than 40 yuan each, each noodle order should cost at most 80 yuan"),
]


def test_an_and_inside_a_product_name_is_no_sum() -> None:
    ctx = replace(CTX, products=(*CTX.products, nl_rubric.ProductInfo("P9", "S1", "Tomato and Egg Noodles", (), (), 26.0)))
    spec = nl_rubric.compile_item("The total price of the Tomato and Egg Noodles order should be within 40 yuan", ctx)
    assert spec is not None and (spec.kind, spec.scope, spec.high) == ("price", "total", 40.0)
    assert nl_rubric.compile_item("The total price of the Tomato and Beef Noodles order should be within 40 yuan", ctx) is None


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_price_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_price_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    assert holds(K("Total price of the noodle order should be around 70 yuan"), HOME_ORDER, place)  # 68 within 10 %
    assert not holds(K("Total price of the noodle order should be around 50 yuan"), HOME_ORDER, place)
    assert not holds(K("The price of the noodles should not exceed 20 yuan (inclusive)"), HOME_ORDER, place)  # 28 > 20


def test_price_policy() -> None:
    assert nl_rubric.PRICE_AROUND_RATIO == 0.10


def test_sums_said_before_the_priced_order() -> None:
    """"With a budget of 200 yuan, having spent 80 yuan ..., the noodle order price ...": the sums
    lead to the bound; the last piece is what the item is about. A list of orders stays unread."""
    spec = K("With a budget of 200 yuan, having spent 80 yuan on drinks, the noodle order price should not exceed 120 yuan")
    assert spec is not None and (spec.scope, spec.high, spec.about) == ("total", 120.0, "the noodle order price")
    left_to_the_judge("base", "With a budget of 200 yuan, the tea and the noodle orders should cost at most 120 yuan")
