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
    # a product the catalogue sells and how many of it
    ("base", "The noodle order should include Beef Noodles, quantity 2", "count", lambda s: (s.value, s.phrase) == (2, "beef noodles")),
    ("base", "The noodle order should include Veggie Noodles with a quantity of 1 bowl", "count", lambda s: (s.value, s.phrase) == (1, "veggie noodles")),
    ("more", "The bar order must include 3 Ginger Colas", "count", lambda s: (s.value, s.phrase) == (3, "ginger colas")),
    ("base", "The order should contain two cups of Jasmine Tea", "count", lambda s: (s.value, s.phrase) == (2, "jasmine tea")),
    ("zh", "订单应包含2份葱油拌面", "count", lambda s: (s.value, s.phrase) == (2, "葱油拌面")),
    # the goods of the order named by their place, or by an order of a product
    ("more", "The quantity of hotpot restaurant products ordered should be 1", "count", lambda s: (s.value, s.phrase) == (1, "")),
    ("base", "The quantity of the Beef Noodles order should be 2 portions", "count", lambda s: (s.value, s.phrase) == (2, "beef noodles")),
    # N identical items: one line (one product, one choice) holds them all
    ("base", "The noodle order should include 2 identical Beef Noodles", "count",
     lambda s: (s.value, s.phrase, s.same) == (2, "beef noodles", True)),
    ("base", "The tea order should include 3 servings of the same tea item", "count", lambda s: (s.value, s.same) == (3, True)),
    ("base", "The dessert order should include 2 identical pudding items", "count",  # a class the catalogue does not spell
     lambda s: (s.value, s.phrase, s.same) == (2, "", True)),
    ("zh", "面条订单中应包含2份相同的葱油拌面", "count", lambda s: (s.value, s.phrase, s.same) == (2, "葱油拌面", True)),
    ("zh", "甜品订单应包含3个相同的甜品商品", "count", lambda s: (s.value, s.phrase, s.same) == (3, "", True)),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_quantity_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The number of people for the reservation should be several"),
    ("base", "The tea order should include two different teas"),  # several products at once
    ("base", "The noodle order should include 2 bowls of each noodle"),
    ("base", "The noodle order should not include 2 identical Beef Noodles"),  # a negated count
    ("base", "The two orders should be from the same store"),  # several records, no count
    ("base", "The order should include 2 identical Spicy Beef Soup Noodle Bowls"),  # a product the catalogue lacks
    ("zh", "两个订单应来自相同的商家"),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_quantity_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_identical_items_are_one_line() -> None:
    spec = K("The noodle order should include 2 identical Beef Noodles")
    beef = nl_rubric.LineFacts("P1", "Beef Noodles", ("Hot", "Beef"), "Mild", 2, 28.0)
    spicy = nl_rubric.LineFacts("P1", "Beef Noodles", ("Hot", "Beef"), "Extra Spicy", 1, 28.0)
    mild = nl_rubric.LineFacts("P1", "Beef Noodles", ("Hot", "Beef"), "Mild", 1, 28.0)
    order = nl_rubric.RecordFacts(table="orders", record_id="O", place_id="S1", lines=(beef,))
    assert nl_rubric.spec_holds(spec, order, CTX.place("S1"))
    split = nl_rubric.RecordFacts(table="orders", record_id="O", place_id="S1", lines=(mild, spicy))
    assert not nl_rubric.spec_holds(spec, split, CTX.place("S1"))  # two, but not identical
    assert "one line" in nl_rubric.describe_spec(spec)


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


def test_a_total_with_its_breakdown_or_its_store() -> None:
    """"总数应为3份，包含2份A和1份B": the total and each product's count (they must add up);
    "..., 都来自<store>" / "..., all from <store>": the total and the store."""
    parts = nl_rubric.spec_parts(compile_in("zh", "午饭订单的商品总数应为3份，包含2份葱油拌面和1份三鲜馄饨双拼"))
    assert [(p.value, p.phrase) for p in parts] == [(3, ""), (2, "葱油拌面"), (1, "三鲜馄饨双拼")]
    left_to_the_judge("zh", "午饭订单的商品总数应为4份，包含2份葱油拌面和1份三鲜馄饨双拼")
    parts = nl_rubric.spec_parts(compile_in("zh", "午饭订单的商品总数应为2份，都来自山海小馆（河西店）"))
    assert [p.kind for p in parts] == ["count", "store"] and parts[0].value == 2 and parts[1].place_ids == ["Z1"]
    parts = nl_rubric.spec_parts(K("The lunch order should have a total of 3 items, all from Noodle House"))
    assert [p.kind for p in parts] == ["count", "store"] and parts[0].value == 3 and parts[1].place_ids == ["S1"]
