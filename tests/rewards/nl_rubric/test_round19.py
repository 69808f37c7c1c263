"""Round 19 of the reader: Chinese demands said with 要求 / 确保 / 保证 ("温度要求为热饮", "要求不含韭菜",
"需确保在X下单", "应保证杯型为小杯"); a purpose ("，确保有筷子") and a noun ("用户的要求") are not demands."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "味千拉面", ("拉面", "可堂食"), "美食", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "韭菜水饺", (), (), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "三鲜水饺", (), (), 20.0),
              nl_rubric.ProductInfo("P3", "S1", "柠檬茶", (), ("热", "冰"), 12.0),
              nl_rubric.ProductInfo("P4", "S1", "奶茶", (), ("小杯", "中杯", "大杯"), 15.0)),
)


@pytest.mark.parametrize("text, want, negated", [
    ("饮品订单商品温度要求为热饮", "热", False),
    ("水饺订单的商品要求不含韭菜", "韭菜", True),
    ("生理期饮品订单应保证杯型为中杯", "中杯", False),
    ("水饺订单中务必确保包含三鲜水饺", "三鲜水饺", False),
])
def test_required_and_ensured_demands(text: str, want: str, negated: bool) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec), text
    assert spec.negated == negated and want in nl_rubric.describe_spec(spec), (text, nl_rubric.describe_spec(spec))


def test_ensure_in_a_store_and_what_is_no_demand() -> None:
    spec = nl_rubric.compile_item("儿童套餐订单需确保在味千拉面下单", CTX)
    assert isinstance(spec, nl_rubric.StoreSpec) and spec.place_ids == ["S1"]
    # a purpose after a comma stays a purpose: the note carries the request, not the reason
    spec = nl_rubric.compile_item("订单需要备注多要一份餐具，确保有多一双筷子可用", CTX)
    assert spec is not None and "筷子" not in nl_rubric.describe_spec(spec)


EN = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Noodle Bar", ("Noodles",), "Food", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Seafood Noodles", ("Seafood",), (), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "Beef Noodles", ("Beef",), (), 26.0),
              nl_rubric.ProductInfo("P3", "S1", "Salad", (), ("No sauce", "With sauce"), 18.0)),
)


@pytest.mark.parametrize("text, negated", [
    ("Make sure the lunch noodles contain no seafood", True),
    ("The agent must ensure the noodle order contains no seafood", True),
    ("It is required that the noodle order includes Beef Noodles", False),
    ("Ensure that the noodle order includes Beef Noodles", False),
    ("Make sure no seafood dishes are ordered for the friend", True),
])
def test_english_ensure_and_required_that(text: str, negated: bool) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated == negated, text


def test_no_x_that_the_catalogue_spells_is_a_value() -> None:
    spec = nl_rubric.compile_item("Make sure the salad has no sauce", EN)
    assert isinstance(spec, nl_rubric.FeatureSpec) and not spec.negated and spec.phrases == ["no sauce"]
    spec = nl_rubric.compile_item("Ensure the noodle order is not from Noodle Bar", EN)
    assert isinstance(spec, nl_rubric.StoreSpec) and spec.negated


@pytest.mark.parametrize("text, want", [
    ("所点干锅焖饭须同时含三鲜水饺与韭菜水饺", "韭菜水饺"),  # 同时含: both, not several records
    ("茶歇须选购味千拉面品牌", "味千拉面"),
    ("米线商家须可堂食", "堂食"),
])
def test_formal_chinese_with_xu_and_xuangou(text: str, want: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert spec is not None and want in nl_rubric.describe_spec(spec), text
