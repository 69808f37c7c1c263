"""Price items (``rewards/nl_rubric/price.py``): an order's total or a unit price; "around" is
within 10 %."""

from __future__ import annotations

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
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_price_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The total cost of all orders cannot exceed 200 yuan"),  # a sum over orders
    ("base", "The price per person should be 50 yuan"),
]


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
