"""Round 14 of the reader: Chinese items said at more length (a reason about the person after a comma,
"这两种配菜" / "这一商品" after the value, a trailing "的", a copula after a spice or sweetness word,
"只能", "两到三人", a shop "能堂食的店", how many of each of several products with no total)."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "味千拉面", ("拉面", "可堂食"), "美食", 4.6),
                     nl_rubric.PlaceInfo("S2", "煎饼铺", ("早餐",), "美食", 4.2)),
    products=(nl_rubric.ProductInfo("P1", "S1", "招牌鸭脖", ("微辣",), (), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "干锅焖饭（酥肉+肥牛）", (), (), 30.0),
              nl_rubric.ProductInfo("P3", "S1", "馥芮白", (), ("热", "冰"), 32.0),
              nl_rubric.ProductInfo("P4", "S1", "火锅2-3人套餐", (), (), 128.0),
              nl_rubric.ProductInfo("P5", "S2", "手抓饼", (), (), 8.0),
              nl_rubric.ProductInfo("P6", "S2", "茶叶蛋", (), (), 2.0),
              nl_rubric.ProductInfo("P7", "S1", "小杯拿铁", (), ("小杯", "中杯", "大杯"), 20.0)),
)


@pytest.mark.parametrize("text, want", [
    ("儿童套餐需在味千拉面下单，孩子喜欢吃拉面", "味千拉面"),
    ("抄手订单的口味必须为微辣，用户喜欢吃辣", "微辣"),
    ("用户的干锅焖饭订单应包含酥肉以及肥牛这两种配菜", "肥牛"),
    ("加班小食订单中应包含招牌鸭脖这一商品", "招牌鸭脖"),
    ("馥芮白咖啡需选择热的，不能选冰的", "热"),
    ("戳子肉订单中的两个商品辣度均为微辣", "微辣"),
    ("饮品订单只能选择小杯或中杯", "中杯"),
    ("火锅订单应选择适合两到三人的套餐", "2-3人"),
    ("米线店铺应是能堂食的店", "堂食"),
])
def test_longer_chinese_items_are_read(text: str, want: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert spec is not None, text
    assert want in nl_rubric.describe_spec(spec), (text, nl_rubric.describe_spec(spec))


def test_how_many_of_each_of_several_products_with_no_total() -> None:
    spec = nl_rubric.compile_item("重新下单的早餐订单应包括2个手抓饼与1个茶叶蛋", CTX)
    assert isinstance(spec, nl_rubric.AllOf)
    counts = {(p.phrase, p.value) for p in spec.parts}
    assert counts == {("手抓饼", 2), ("茶叶蛋", 1)}
    # one product and one option: the product reader's, not a count of an option
    spec = nl_rubric.compile_item("饮品订单中应包含一杯去冰的饮品", nl_rubric.ItemContext(now=NOW, places=CTX.places, products=(
        nl_rubric.ProductInfo("D1", "S1", "柠檬茶", (), ("去冰", "少冰"), 12.0),)))
    assert isinstance(spec, nl_rubric.FeatureSpec)


def test_a_reason_clause_with_its_own_modal_is_kept() -> None:
    # "，孩子应该选择拉面" is a second demand, not a reason: the item is not cut short
    spec = nl_rubric.compile_item("儿童套餐需在味千拉面下单，孩子应该选择拉面", CTX)
    assert spec is None or "拉面" in nl_rubric.describe_spec(spec)
