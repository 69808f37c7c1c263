"""Round-6 product shapes (``rewards/nl_rubric/product.py``, ``lexicon.py``): a garnish left out said
as a preference ("no cilantro", "不加香菜的口味偏好") and checked against the option that says it in
other words ("免香菜"); a size said with its unit ("a large portion size", "大份量规格"); a sugar
level in tenths ("three parts sugar" -> "30% Sugar"); effects and fillings around a value; a place's
service said with "a physical location" or "可". A small world of my own, not VitaBench's."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, TOOLS

W = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("P1", "老街凉菜（东门店）", ("堂食店",), "", 4.5),
        nl_rubric.PlaceInfo("P2", "Harbor Dumpling House", ("Dine-in Available",), "", 4.6),
        nl_rubric.PlaceInfo("P3", "Corner Rice Bowls", (), "", 4.2),
        nl_rubric.PlaceInfo("P4", "Sunny Tea Bar", (), "", 4.4),
    ),
    products=(
        nl_rubric.ProductInfo("A1", "P1", "红油拌鸡+米饭", ("鸡肉",), ("免香菜", "无忌口", "免蒜"), 22.0),
        nl_rubric.ProductInfo("A2", "P1", "卤牛肉饭大份", (), (), 26.0),
        nl_rubric.ProductInfo("A3", "P1", "卤牛肉饭", (), (), 20.0),
        nl_rubric.ProductInfo("A4", "P1", "菊花茶", ("清热解毒",), ("三分糖", "全糖"), 9.0),
        nl_rubric.ProductInfo("B1", "P2", "Leek and Pork Dumplings", (), (), 18.0),
        nl_rubric.ProductInfo("B2", "P2", "Cabbage and Pork Dumplings", (), (), 18.0),
        nl_rubric.ProductInfo("B3", "P3", "Spicy Chicken with Rice", ("Chicken",), ("No cilantro", "No restrictions"), 24.0),
        nl_rubric.ProductInfo("B4", "P3", "Large Braised Beef Rice", (), (), 30.0),
        nl_rubric.ProductInfo("B5", "P3", "Braised Beef Rice", (), (), 24.0),
        nl_rubric.ProductInfo("B6", "P4", "Honey Pear Tea", ("Throat Soothing",), ("100% Sugar", "50% Sugar", "30% Sugar"), 15.0),
    ),
    tools=TOOLS,
)


def C(text: str) -> Any:
    return nl_rubric.compile_item(text, W)


def line(pid: str, name: str, chosen: str = "", options: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, chosen, 1, 0.0, options)


def holds(spec: Any, *lines: nl_rubric.LineFacts, place: str = "P1") -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o1", place, lines=lines), W.place(place))


def test_a_left_out_garnish_as_a_preference_zh() -> None:
    spec = C("妈妈的红油拌鸡订单应选择不要香菜的口味偏好")
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.absent == ["cilantro"]
    offers = ("免香菜", "无忌口", "免蒜")
    assert holds(spec, line("A1", "红油拌鸡+米饭", "免香菜", offers))  # the option that says it in other words
    assert not holds(spec, line("A1", "红油拌鸡+米饭", "无忌口", offers))
    assert not holds(spec, line("A1", "红油拌鸡+米饭", "", offers))
    # where one line says it, a line that offers no such option need only not show the garnish
    assert holds(spec, line("A1", "红油拌鸡+米饭", "免香菜", offers), line("A3", "卤牛肉饭"))
    assert not holds(spec, line("A1", "红油拌鸡+米饭", "免香菜", offers), line("X", "香菜拌牛肉"))


def test_a_left_out_garnish_as_a_preference_en() -> None:
    for text in ("The chicken rice order should specify a preference for no cilantro",
                 "The chicken rice order should specify the preference for no cilantro"):
        spec = C(text)
        assert isinstance(spec, nl_rubric.FeatureSpec) and not spec.negated, text
        offers = ("No cilantro", "No restrictions")
        assert holds(spec, line("B3", "Spicy Chicken with Rice", "No cilantro", offers), place="P3")
        assert not holds(spec, line("B3", "Spicy Chicken with Rice", "No restrictions", offers), place="P3")


def test_a_size_said_with_its_unit() -> None:
    zh = C("哥哥的卤牛肉饭订单应选择大份量规格")
    assert isinstance(zh, nl_rubric.FeatureSpec) and zh.phrases == ["大份"]
    assert holds(zh, line("A2", "卤牛肉饭大份")) and not holds(zh, line("A3", "卤牛肉饭"))
    for text in ("The braised beef rice order should specify a large portion size",
                 "The braised beef rice should be a large portion"):
        en = C(text)
        assert isinstance(en, nl_rubric.FeatureSpec) and en.phrases == ["large"], text
        assert holds(en, line("B4", "Large Braised Beef Rice"), place="P3")
        assert not holds(en, line("B5", "Braised Beef Rice"), place="P3")


def test_a_sugar_level_in_tenths() -> None:
    spec = C("The pear tea should have a sweetness attribute of three parts sugar")
    # the menu's spelling, and the value as said, which a translated record may keep (round 35)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["30% sugar", "three parts sugar"]
    offers = ("100% Sugar", "50% Sugar", "30% Sugar")
    assert holds(spec, line("B6", "Honey Pear Tea", "30% Sugar", offers), place="P4")
    assert not holds(spec, line("B6", "Honey Pear Tea", "50% Sugar", offers), place="P4")
    assert C("The sweetness of the pear tea should be selected as 'three parts sweet'") is None  # no "30% sweet" here


def test_effects_and_fillings_around_a_value() -> None:
    en = C("The tea in the order should have Throat Soothing health benefits")
    assert isinstance(en, nl_rubric.FeatureSpec) and en.phrases == ["throat soothing"]
    zh = C("订单中的菊花茶应具有清热解毒的养生功效")
    assert isinstance(zh, nl_rubric.FeatureSpec) and zh.phrases == ["清热解毒"]
    neg = C("The dumpling order must not contain leek filling")
    assert isinstance(neg, nl_rubric.FeatureSpec) and neg.negated and neg.phrases == ["leek"]
    assert holds(neg, line("B2", "Cabbage and Pork Dumplings"), place="P2")
    assert not holds(neg, line("B1", "Leek and Pork Dumplings"), place="P2")


def test_a_place_service_with_a_physical_location() -> None:
    en = C("When ordering dumplings, the store should have a physical location with Dine-in Available")
    assert isinstance(en, nl_rubric.FeatureSpec) and (en.scope, en.phrases) == ("place", ["dine-in available"])
    zh = C("点凉菜时，下单的店铺应是有实体店可堂食的")
    assert isinstance(zh, nl_rubric.FeatureSpec) and zh.scope == "place" and zh.phrases == ["堂食"]  # "堂食店"
    assert nl_rubric.spec_holds(zh, nl_rubric.RecordFacts("orders", "o1", "P1"), W.place("P1"))


@pytest.mark.parametrize("text", [
    "The chicken rice order should specify a preference for no truffle",   # not in the catalogue
    "The braised beef rice should be a medium portion",                    # no product is medium
    "The pear tea should have a sweetness attribute of twelve parts sugar",  # no such level
])
def test_left_to_the_judge(text: str) -> None:
    assert C(text) is None
