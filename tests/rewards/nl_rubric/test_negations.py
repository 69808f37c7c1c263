"""Negated demands must never be read as the demand itself. Each phrasing here was read inverted (or
too strictly) before: a check that passes exactly the violations is worse than no check."""

from __future__ import annotations

from datetime import datetime

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

T = datetime(2025, 7, 11, 15, 0)


@pytest.mark.parametrize("text, earliest, latest", [
    ("The milk tea should not arrive later than 2025-07-11 15:00:00", None, T),
    ("The milk tea must not arrive before 2025-07-11 15:00:00", T, None),
    ("The milk tea should not be delivered after 2025-07-11 15:00:00", None, T),
    ("The milk tea must not be delivered earlier than 2025-07-11 15:00:00", T, None),
    ("The milk tea should arrive no later than 2025-07-11 15:00:00", None, T),
    ("奶茶不应在2025-07-11 15:00:00之后送达", None, T),
    ("奶茶不能在2025-07-11 15:00:00之前送达", T, None),
    ("奶茶的送达时间不得迟于2025-07-11 15:00:00", None, T),
    ("奶茶送达时间不应该晚于2025-07-11 15:00:00", None, T),
    ("奶茶的送达时间不应晚于2025-07-11 15:00:00", None, T),
])
def test_a_negated_time_bound_is_the_other_bound(text: str, earliest: datetime | None, latest: datetime | None) -> None:
    win = nl_rubric.compile_time_item(text, NOW)
    assert win is not None, text
    assert (win.earliest if earliest else None, win.latest if latest else None) == (earliest, latest), text
    assert (win.earliest is None or earliest is not None) and (win.latest is None or latest is not None), text


TEA = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Tea Bar", ("Milk Tea",), "Drinks", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Gardenia Milk Tea", (), (), 16.0),
              nl_rubric.ProductInfo("P2", "S1", "Jasmine Milk Tea", (), (), 15.0),
              nl_rubric.ProductInfo("Z1", "S1", "栀子奶茶", (), (), 16.0),
              nl_rubric.ProductInfo("Z2", "S1", "茉莉奶茶", (), (), 15.0)),
)


@pytest.mark.parametrize("text, bad, good", [
    ("Neither milk tea should be Gardenia flavored", "Gardenia Milk Tea", "Jasmine Milk Tea"),
    ("None of the milk teas should be Gardenia flavored", "Gardenia Milk Tea", "Jasmine Milk Tea"),
    ("No product in the milk tea order should be Gardenia flavored", "Gardenia Milk Tea", "Jasmine Milk Tea"),
    ("The milk tea order should be free of Gardenia flavors", "Gardenia Milk Tea", "Jasmine Milk Tea"),
    ("The milk tea must be without Gardenia flavor", "Gardenia Milk Tea", "Jasmine Milk Tea"),
    ("奶茶订单中没有商品应为栀子口味", "栀子奶茶", "茉莉奶茶"),
    ("奶茶订单不允许选择栀子口味", "栀子奶茶", "茉莉奶茶"),
    ("奶茶订单应排除栀子口味", "栀子奶茶", "茉莉奶茶"),
    ("奶茶订单中不得出现栀子口味", "栀子奶茶", "茉莉奶茶"),
])
def test_a_negated_product_demand_excludes_it(text: str, bad: str, good: str) -> None:
    spec = nl_rubric.compile_item(text, TEA)
    assert spec is not None, text
    by_name = {p.name: p.product_id for p in TEA.products}

    def passes(name: str) -> bool:
        facts = nl_rubric.RecordFacts("orders", "o", "S1", lines=(nl_rubric.LineFacts(by_name[name], name, (), "", 1, 15.0, ()),))
        return nl_rubric.spec_holds(spec, facts, TEA.place("S1"))

    assert not passes(bad), text
    assert passes(good), text


@pytest.mark.parametrize("text", [
    "奶茶订单的送达时间不应在2025-07-11 15:00:00左右",
    "奶茶订单的送达时间不应在2025-07-11 14:00:00至2025-07-11 15:00:00之间",
    "The milk tea must not be scheduled for around 3:00 PM on 2025-07-11",
    "The reservation time should not be 2025-07-11 15:00:00",
])
def test_a_negated_window_is_not_read_as_the_window(text: str) -> None:
    assert nl_rubric.compile_time_item(text, NOW) is None  # not a window: the judge's, never the window itself


def test_a_negated_cancellation_or_note_is_not_read_as_the_demand() -> None:
    ctx = nl_rubric.ItemContext(now=NOW, places=TEA.places, products=TEA.products, record_ids=("T01",))
    assert nl_rubric.compile_item("成功取消用户id为T01的订单，订单状态不应变更为cancelled", ctx) is None
    assert nl_rubric.compile_item("奶茶订单不应当备注不要吸管", ctx) is None
    assert nl_rubric.compile_item("The milk tea order should not have a note saying no straw", ctx) is None
    # what a note says may itself negate: still read
    assert nl_rubric.compile_item("奶茶订单应当备注不要吸管", ctx) is not None


@pytest.mark.parametrize("text", ["The spa should not have a rating of 5.0", "The spa rating should not be 5.0"])
def test_a_negated_equality_is_not_read_as_the_equality(text: str) -> None:
    ctx = nl_rubric.ItemContext(now=NOW, places=(nl_rubric.PlaceInfo("S1", "Spa House", (), "Spa", 4.6),), products=())
    spec = nl_rubric.compile_item(text, ctx)
    assert not (isinstance(spec, nl_rubric.RatingSpec) and spec.op == "=="), text
    spec = nl_rubric.compile_item("The spa rating should not be below 4.5", ctx)
    assert isinstance(spec, nl_rubric.RatingSpec) and (spec.op, spec.value) == (">=", 4.5)


ICE = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Tea Bar", ("Milk Tea",), "Drinks", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Jasmine Milk Tea", (), ("Regular Ice", "Less Ice", "No Ice"), 15.0),
              nl_rubric.ProductInfo("Z1", "S1", "茉莉奶茶", (), ("正常冰", "少冰", "去冰"), 15.0)),
)


@pytest.mark.parametrize("text, product, chosen, ok", [
    ("The milk tea must not contain ice", "Jasmine Milk Tea", "Less Ice", False),
    ("The milk tea must not contain ice", "Jasmine Milk Tea", "Regular Ice", False),
    ("The milk tea must not contain ice", "Jasmine Milk Tea", "No Ice", True),
    ("奶茶不能加冰", "茉莉奶茶", "少冰", False),
    ("奶茶不能加冰", "茉莉奶茶", "正常冰", False),
    ("奶茶不能加冰", "茉莉奶茶", "去冰", True),
])
def test_a_little_of_what_a_negated_demand_excludes_is_not_none_of_it(text: str, product: str, chosen: str,
                                                                      ok: bool) -> None:
    spec = nl_rubric.compile_item(text, ICE)
    assert spec is not None, text
    pr = next(p for p in ICE.products if p.name == product)
    facts = nl_rubric.RecordFacts("orders", "o", "S1", lines=(
        nl_rubric.LineFacts(pr.product_id, pr.name, (), chosen, 1, 15.0, pr.options),))
    assert nl_rubric.spec_holds(spec, facts, ICE.place("S1")) is ok, (text, chosen, spec)


@pytest.mark.parametrize("phrase, field, found", [
    ("ice", "Less Ice", True), ("ice", "No Ice", False), ("冰", "少冰", True), ("冰", "去冰", False),
    ("辣", "微辣", True), ("辣", "不辣", False), ("sugar", "Low Sugar", True), ("sugar", "Sugar-free", False),
    ("糖", "半糖", True), ("糖", "无糖", False), ("ice", "Hot", False),
])
def test_a_lessened_phrase_is_there_in_some_amount(phrase: str, field: str, found: bool) -> None:
    from servicegym.rewards.nl_rubric.text import phrase_in, phrase_in_any_amount

    assert phrase_in_any_amount(phrase, field) is found
    if field in ("Less Ice", "少冰", "微辣", "Low Sugar", "半糖"):
        assert not phrase_in(phrase, field)  # what a positive demand reads stays as it was
