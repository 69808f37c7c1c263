"""Round 26 of the reader: a Chinese value said as what a dish has, then the kind of dish ("红汤汤面", "麻辣口味的
米线"), reads as what it has where the catalogue spells that and not the whole; a flavour or option the item
excludes that nothing in the task's world spells ("不能是金汤口味", "must not be gold soup flavor") is checked as said
(no product may spell it), while an excluded degree or judgement ("too salty", "太油腻") stays the judge's."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "老街面馆", ("面馆",), "美食", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "如意素面", (), ("红汤", "白汤"), 22.0),
              nl_rubric.ProductInfo("P2", "S1", "牛肉面", ("招牌",), ("红汤", "白汤"), 30.0),
              nl_rubric.ProductInfo("P3", "S1", "好大一桶水果茶", (), (), 18.0)),
)
EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Old Street Noodles", ("Noodles",), "Food", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Vegetable Noodles", (), ("Clear Broth", "Red Broth"), 22.0),
              nl_rubric.ProductInfo("P2", "S1", "Beef Noodles", (), ("Clear Broth", "Red Broth"), 30.0)),
)


def _line(name: str, option: str) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts("P1", name, (), option, 1, 22.0, ("红汤", "白汤", "Clear Broth", "Red Broth"))


def _holds(spec: object, name: str, option: str) -> bool:
    return nl_rubric.spec_holds(spec, order([_line(name, option)]), ZH.place("S1"))


def _said(text: str, ctx: nl_rubric.ItemContext) -> str | None:
    spec = nl_rubric.compile_item(text, ctx)
    return None if spec is None else nl_rubric.describe_spec(spec)


def test_what_a_dish_has_before_its_kind_is_read_where_the_whole_is_not_spelled() -> None:
    spec = nl_rubric.compile_item("晚餐订单应选择红汤汤面类商品", ZH)
    assert spec is not None and "'红汤'" in nl_rubric.describe_spec(spec)
    assert _holds(spec, "如意素面", "红汤") and not _holds(spec, "如意素面", "白汤")


def test_a_value_the_catalogue_spells_whole_keeps_its_kind_word() -> None:
    # "好大一桶水果茶" is a product's name: its "果茶" is no kind word to cut off
    assert _said("水果茶订单应选择好大一桶水果茶类商品", ZH) == nl_rubric.describe_spec(
        nl_rubric.compile_item("水果茶订单应选择好大一桶水果茶", ZH))
    assert "好大一桶水果茶" in (_said("水果茶订单应选择好大一桶水果茶类商品", ZH) or "")


@pytest.mark.parametrize("text, ctx, phrase", [
    ("下单的面条必须不是金汤口味，因为用户已经吃腻了", ZH, "金汤"),
    ("下单的面条不能选择番茄口味", ZH, "番茄"),
    ("The noodle product must not be gold soup flavor, as the user is tired of it", EN, "gold soup"),
])
def test_an_excluded_flavour_nothing_spells_is_checked_as_said(text: str, ctx: nl_rubric.ItemContext, phrase: str) -> None:
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None, text
    assert f"none of '{phrase}'" in nl_rubric.describe_spec(spec)
    assert _holds(spec, "牛肉面", "红汤")
    bad = f"{phrase}牛肉面" if ctx is ZH else f"{phrase.title()} Beef Noodles"
    assert not _holds(spec, bad, "红汤")  # a product that does spell it fails


@pytest.mark.parametrize("text, ctx", [
    ("下单的面条不能是太咸的口味", ZH),
    ("The noodles must not be too salty flavor", EN),
    ("The noodles must not be gold soup or silver soup flavor", EN),  # two values: which one the menu spells is unknown
])
def test_an_excluded_degree_or_an_unspelled_list_stays_the_judges(text: str, ctx: nl_rubric.ItemContext) -> None:
    assert nl_rubric.compile_item(text, ctx) is None, _said(text, ctx)


def test_an_excluded_flavour_the_catalogue_spells_still_reads_as_before() -> None:
    spec = nl_rubric.compile_item("下单的面条不能选择白汤口味", ZH)
    assert spec is not None and not _holds(spec, "牛肉面", "白汤") and _holds(spec, "牛肉面", "红汤")
