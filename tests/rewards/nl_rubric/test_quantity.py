"""Quantity items (``rewards/nl_rubric/quantity.py``): party sizes and quantities of items."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import CTX, HOME_ORDER, K, compile_in, compiles_to, left_to_the_judge

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # counts: party sizes and quantities
    ("base", "The number of people for the restaurant reservation should be 4", "count", lambda s: (s.what, s.value) == ("people", 4)),
    ("base", "The booking should be for two people", "count", lambda s: (s.what, s.value) == ("people", 2)),
    ("base", "预约人数应为3人", "count", lambda s: (s.what, s.value) == ("people", 3)),
    ("base", "The total number of items in the noodle order should be 2 portions", "count", lambda s: (s.what, s.value, s.phrase) == ("items", 2, "")),
    ("base", "The quantity of Beef Noodles in the order must be 3", "count", lambda s: (s.value, s.phrase) == (3, "beef noodles")),
    ("base", "面条订单中的商品数量应为2份", "count", lambda s: (s.what, s.value) == ("items", 2)),
    ("base", "The drink order should include 3 cups", "count", lambda s: s.value == 3),
    # counts of the whole order, and of one product named with it
    ("zh", "夜宵订单的商品总数量应为3个", "count", lambda s: (s.value, s.phrase) == (3, "")),
    ("zh", "下单商品的数量应为4份", "count", lambda s: (s.value, s.phrase) == (4, "")),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_quantity_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The number of people for the reservation should be several"),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_quantity_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_item_count_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    assert holds(K("The total number of items in the noodle order should be 3 portions"), HOME_ORDER, place)
    assert not holds(K("The total number of items in the noodle order should be 2 portions"), HOME_ORDER, place)


def test_party_size_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    visit = nl_rubric.RecordFacts(table="reservations", record_id="R01", place_id="S1", status="unconsumed",
                                  customer_count=4)
    assert holds(K("The number of people for the restaurant reservation should be 4"), visit, place)
    assert not holds(K("The booking should be for two people"), visit, place)
