"""Round 12 of the reader: Chinese phrasings found by rewriting the build part's read items in other
natural words (a modal "需" / "要" before a verb, "共有N份" with no modal, "既有A又有B", a value said
with the kind of product, "X的品牌", a spice level tagged rather than offered, one-character
temperatures, "2到3人份的套餐")."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW


def line(pid: str, name: str, tags: tuple[str, ...] = (), chosen: str = "", offers: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, chosen, 1, 30.0, offers)


def holds(spec: object, ctx: nl_rubric.ItemContext, place: str, *lines: nl_rubric.LineFacts) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", place, lines=lines), ctx.place(place))


CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "小柴米餐厅", ("江西菜", "可堂食"), "美食", 4.6),
                     nl_rubric.PlaceInfo("S2", "三养专营店", ("韩国",), "美食", 4.5)),
    products=(nl_rubric.ProductInfo("P1", "S1", "辣椒炒肉", ("中辣",), (), 35.0),
              nl_rubric.ProductInfo("P2", "S1", "向塘烧土鸡", ("微辣",), (), 48.0),
              nl_rubric.ProductInfo("P3", "S1", "清蒸鲈鱼", ("不辣",), (), 58.0),
              nl_rubric.ProductInfo("P4", "S1", "干锅焖饭（酥肉+肥牛）", ("嚼劲",), (), 28.0),
              nl_rubric.ProductInfo("P5", "S1", "2-3人套餐", (), (), 128.0),
              nl_rubric.ProductInfo("P6", "S1", "馥芮白", (), ("热", "冰"), 32.0),
              nl_rubric.ProductInfo("P7", "S2", "韩国三养火鸡拌面", (), (), 12.0),
              nl_rubric.ProductInfo("P8", "S1", "无奶拿铁", (), (), 22.0)),
)


@pytest.mark.parametrize("text, want", [
    ("晚饭订单需包含辣椒炒肉", "辣椒炒肉"),          # 需 before a verb is the modal
    ("所选店铺要能够堂食", "堂食"),                   # 要 before 能够
    ("面包订单需在小柴米餐厅下单", None),              # 需 before 在: a store (checked below)
])
def test_a_bare_xu_or_yao_before_a_verb_is_the_modal(text: str, want: str | None) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert spec is not None
    if want is not None:
        assert want in nl_rubric.describe_spec(spec)
    # "无需" says the opposite: no requirement, never read as one
    assert nl_rubric.compile_item("晚饭订单无需包含辣椒炒肉", CTX) is None


def test_a_total_said_without_a_modal_or_with_gong() -> None:
    for text in ("下单商品共6份", "订单共有6份商品", "订单一共应有6个商品", "订单应共有6个商品", "订单共应有6杯"):
        spec = nl_rubric.compile_item(text, CTX)
        assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.value, spec.phrase) == ("items", 6, ""), text
    spec = nl_rubric.compile_item("小食订单一共应有2个商品，且均来自小柴米餐厅", CTX)
    assert isinstance(spec, nl_rubric.AllOf)
    kinds = {type(p).__name__ for p in spec.parts}
    assert kinds == {"CountSpec", "StoreSpec"}


def test_both_a_and_b() -> None:
    spec = nl_rubric.compile_item("干锅焖饭里必须既有酥肉又有肥牛", CTX)
    assert spec is not None
    assert holds(spec, CTX, "S1", line("P4", "干锅焖饭（酥肉+肥牛）"))
    assert not holds(spec, CTX, "S1", line("P1", "辣椒炒肉"))


def test_a_value_said_with_the_kind_the_subject_names() -> None:
    spec = nl_rubric.compile_item("焖饭订单应选择有嚼劲的焖饭", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["嚼劲"]
    spec = nl_rubric.compile_item("拿铁订单中的商品应为无奶拿铁", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["无奶拿铁"]  # spelled whole: kept whole


def test_the_brand_of_a_named_product_is_the_products() -> None:
    spec = nl_rubric.compile_item("火鸡拌面的品牌必须是韩国三养", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["韩国三养"]
    assert holds(spec, CTX, "S2", line("P7", "韩国三养火鸡拌面"))


def test_a_spice_level_the_products_are_tagged_with() -> None:
    spec = nl_rubric.compile_item("商品辣度应为微辣或中辣", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    assert holds(spec, CTX, "S1", line("P1", "辣椒炒肉", ("中辣",)))
    assert holds(spec, CTX, "S1", line("P2", "向塘烧土鸡", ("微辣",)))
    assert not holds(spec, CTX, "S1", line("P3", "清蒸鲈鱼", ("不辣",)))


def test_a_one_character_temperature_and_a_serving_range() -> None:
    spec = nl_rubric.compile_item("馥芮白咖啡的温度应为热", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.option_only and spec.phrases[0] == "热"
    assert holds(spec, CTX, "S1", line("P6", "馥芮白", (), "热", ("热", "冰")))
    assert not holds(spec, CTX, "S1", line("P6", "馥芮白", (), "冰", ("热", "冰")))
    for text in ("火锅订单应选择2-3人份的套餐", "火锅订单应选适合2到3人食用的套餐"):
        spec = nl_rubric.compile_item(text, CTX)
        assert isinstance(spec, nl_rubric.FeatureSpec) and "2-3人套餐" in spec.phrases, text


def test_not_containing_one_named_ingredient_or_a_filling() -> None:
    meat = nl_rubric.ItemContext(now=NOW, places=CTX.places, products=CTX.products + (
        nl_rubric.ProductInfo("B1", "S1", "鲜肉小笼包", (), (), 18.0), nl_rubric.ProductInfo("B2", "S1", "香葱花卷", (), (), 6.0)))
    spec = nl_rubric.compile_item("小笼包不能选择肉馅的", meat)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["meat"]
    spec = nl_rubric.compile_item("订单中的商品应不含葱", meat)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["green onion"]
    assert not holds(spec, meat, "S1", line("B2", "香葱花卷"))
