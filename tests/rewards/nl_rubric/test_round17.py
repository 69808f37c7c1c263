"""Round 17 of the reader: Chinese said plainly, as users write their own tasks ("要" before a 的-phrase,
"别点", "X选Y" with no modal, "要有", "A、B这些C", "买3个一样的", "这些商品都要来自")."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "潮粥茶餐厅", ("粤菜",), "美食", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "皮蛋瘦肉粥（小份）", (), (), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "猪杂粥", ("猪肝", "大肠"), (), 22.0),
              nl_rubric.ProductInfo("P3", "S1", "龙眼红枣茶", (), ("热", "冰"), 12.0),
              nl_rubric.ProductInfo("P4", "S1", "辣炒花甲", ("辣",), (), 38.0)),
)


@pytest.mark.parametrize("text, want, negated", [
    ("粥要小份的", "小份", False),
    ("饮品选热的", "热", False),
    ("饮品要选含龙眼的", "龙眼", False),
    ("粥里要有瘦肉", "瘦肉", False),
    ("午餐别点辣的", "spicy", True),
    ("粥里不能有大肠、猪肝这些内脏", "大肠", True),
])
def test_plain_chinese_demands(text: str, want: str, negated: bool) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec), text
    assert spec.negated == negated, text
    assert want in nl_rubric.describe_spec(spec), (text, nl_rubric.describe_spec(spec))


def test_plain_counts() -> None:
    spec = nl_rubric.compile_item("粥要买3个一样的", CTX)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.same) == (3, True)
    spec = nl_rubric.compile_item("订单里面一共需要2个商品，并且这些商品都要来自潮粥茶餐厅", CTX)
    assert isinstance(spec, nl_rubric.AllOf) and {type(p).__name__ for p in spec.parts} == {"CountSpec", "StoreSpec"}


def test_words_holding_the_characters_are_no_modal() -> None:
    # 特别 / 只要 / 主要 / 重要: no demand is read from them alone
    for text in ("这家店特别好吃", "只要是粥就行", "主要是想喝粥"):
        assert nl_rubric.compile_item(text, CTX) is None, text
