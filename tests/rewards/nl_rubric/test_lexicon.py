"""Classes of food (``rewards/nl_rubric/lexicon.py``): "must not contain offal (such as ...)", "should
contain meat", "should be non-spicy / 不辣 / 低糖"; the concept terms a product's text spells, in
Chinese and English. A small world of my own, not VitaBench's."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric.lexicon import concept_value, example_phrases, mentions
from tests.rewards.nl_rubric.worlds import NOW, TOOLS

W = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("F1", "川味小厨", (), "", 4.4), nl_rubric.PlaceInfo("F2", "Harbour Noodles", (), "", 4.2)),
    products=(
        nl_rubric.ProductInfo("A1", "F1", "肥肠粉", (), ("微辣", "不辣", "特辣"), 18.0),
        nl_rubric.ProductInfo("A2", "F1", "清汤素面", ("清淡",), (), 12.0),
        nl_rubric.ProductInfo("A3", "F1", "鲜奶拿铁", ("含咖啡因",), ("标准糖", "少糖"), 20.0),
        nl_rubric.ProductInfo("A4", "F1", "柠檬茶", ("低咖啡因",), ("热", "少冰"), 10.0),
        nl_rubric.ProductInfo("B1", "F2", "Pork Intestine Noodles", (), ("Mild Spicy", "Not spicy"), 22.0),
        nl_rubric.ProductInfo("B2", "F2", "Tomato Egg Noodles", ("Light",), (), 16.0),
        nl_rubric.ProductInfo("B3", "F2", "Beef Noodle Soup", ("Beef",), (), 26.0),
        nl_rubric.ProductInfo("B4", "F2", "Oat Milk Latte", ("Contains caffeine",), ("Warm", "Iced"), 19.0),
        nl_rubric.ProductInfo("B5", "F2", "Black Coffee", (), ("Hot", "Iced"), 12.0),
        nl_rubric.ProductInfo("B6", "F2", "Shrimp Fried Rice", (), (), 24.0),
    ),
    tools=TOOLS,
)


def C(text: str) -> Any:
    return nl_rubric.compile_item(text, W)


def line(name: str, chosen: str = "", options: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts("x", name, tags, chosen, 1, 0.0, options)


def holds(spec: Any, *lines: nl_rubric.LineFacts) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts(table="orders", record_id="o", place_id="F1", lines=lines), None)


def test_the_lexicon_reads_values_and_examples() -> None:
    assert concept_value("油炸配菜或高嘌呤食材") == ["fried", "high purine"]
    assert concept_value("organ meats") == ["offal"] and concept_value("dairy ingredients") == ["dairy"]
    assert concept_value("葱类配菜或调料") == ["green onion"]  # the class word names nothing else
    assert concept_value("低咖啡因或无咖啡因", absence=True) == ["caffeine"]
    assert concept_value("non-spicy flavor", absence=True) == ["spicy"]
    assert concept_value("牛肉面") is None and concept_value("offal or soup dumplings") is None
    assert example_phrases("such as pork intestine, pig liver, etc.") == ["pork intestine", "pig liver"]
    assert example_phrases("如大肠、猪肝等") == ["大肠", "猪肝"]
    # terms as a product spells them; compounds that only hold a term are not it
    assert mentions(["offal"], "肥肠粉") and mentions(["offal"], "Pork Intestine Noodles")
    assert not mentions(["coffee"], "低咖啡因") and mentions(["coffee"], "鲜奶拿铁")
    assert not mentions(["meat"], "牛油果沙拉") and mentions(["meat"], "红肠冷面")
    assert not mentions(["dairy"], "Oat milk") and mentions(["dairy"], "Fresh milk tea")
    assert not mentions(["spicy"], "不辣") and mentions(["spicy"], "微辣")


@pytest.mark.parametrize(("text", "concepts", "bad", "good"), [
    ("面条订单的商品不能含有内脏类食材，如大肠、猪肝等", ["offal"], "肥肠粉", "清汤素面"),
    ("下单的面条必须不含油炸配菜或高嘌呤食材（如内脏、海鲜汤等）", ["fried", "high purine"], "炸鸡面", "清汤素面"),
    ("饮品订单应选择不含奶制品的饮品", ["dairy"], "鲜奶拿铁", "柠檬茶"),
    ("The noodle order should not contain offal ingredients such as pork intestine, pig liver, etc.", ["offal"],
     "Pork Intestine Noodles", "Tomato Egg Noodles"),
    ("When selecting noodle products, items containing organ meats should be avoided", ["offal"],
     "Pork Liver Noodles", "Tomato Egg Noodles"),
    ("The drink order should select drinks without dairy products", ["dairy"], "Fresh Milk Tea", "Lemon Tea"),
    ("The noodle order should not contain meat", ["meat"], "Beef Noodle Soup", "Tomato Egg Noodles"),
])
def test_must_not_contain_a_class_of_food(text: str, concepts: list[str], bad: str, good: str) -> None:
    spec = C(text)
    assert spec is not None and spec.kind == "feature" and spec.negated and spec.concepts == concepts, (text, spec)
    assert holds(spec, line(good)) and not holds(spec, line(bad)) and not holds(spec, line(good), line(bad))
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec and nl_rubric.describe_spec(spec)


@pytest.mark.parametrize(("text", "good", "bad"), [
    ("个人午餐的冷面商品应含有肉类，满足荤食需求", "冷面+红肠", "清汤素面"),
    ("The cold noodles should contain meat to meet non-vegetarian requirements", "Cold Noodles + Ham", "Tomato Egg Noodles"),
])
def test_should_contain_a_class_of_food(text: str, good: str, bad: str) -> None:
    spec = C(text)
    assert spec is not None and spec.concepts == ["meat"] and not spec.negated, (text, spec)
    assert holds(spec, line(good)) and not holds(spec, line(bad))


@pytest.mark.parametrize(("text", "chosen", "options", "other"), [
    ("给孩子点的面条应为不辣口味", "不辣", ("微辣", "不辣", "特辣"), "微辣"),
    ("The noodles for the child should be non-spicy flavor", "Not spicy", ("Mild Spicy", "Not spicy"), "Mild Spicy"),
])
def test_an_absence_said_as_a_value(text: str, chosen: str, options: tuple[str, ...], other: str) -> None:
    """"不辣": where the product offers it, it is chosen; a product that offers no spice level and names
    no spice is not spicy; one that names spice is."""
    spec = C(text)
    assert spec is not None and spec.absent == ["spicy"] and not spec.negated, (text, spec)
    assert holds(spec, line("面", chosen, options)) and not holds(spec, line("面", other, options))
    assert holds(spec, line("Chicken Soup Rice")) and holds(spec, line("鸡汤饭"))
    assert not holds(spec, line("Spicy Chicken")) and not holds(spec, line("麻辣香锅"))


def test_a_sugar_absence_needs_the_product_to_say_it() -> None:
    """A drink that names no sugar level may be sweet: "低糖或无糖" holds where the line says low sugar."""
    spec = C("饮品订单的甜度应为低糖或无糖")
    assert spec is not None and spec.absent == ["high sugar"], spec
    assert holds(spec, line("柠檬茶", "少糖", (), ("低糖",))) and not holds(spec, line("柠檬茶"))
    assert not holds(spec, line("拿铁", "标准糖", ("标准糖", "少糖")))


def test_hot_is_also_warm() -> None:
    spec = C("The temperature of the latte should be hot")
    assert spec is not None and spec.phrases == ["hot", "warm"] and spec.option_only
    assert holds(spec, line("Oat Milk Latte", "Warm", ("Warm", "Iced")))
    assert not holds(spec, line("Oat Milk Latte", "Iced", ("Warm", "Iced")))


def test_the_caffeine_free_or_decaf_tea() -> None:
    """Each alternative names the absence of caffeine: a line that says none, or spells no caffeine."""
    spec = C("The tea should be caffeine-free or decaf")
    assert spec is not None and spec.absent == ["caffeine"] and spec.phrases == ["caffeine-free", "decaf"]
    assert holds(spec, line("Lemon Tea", tags=("Caffeine-free",))) and holds(spec, line("Lemonade"))
    assert not holds(spec, line("Oat Milk Latte", tags=("Contains caffeine",))) and not holds(spec, line("Black Coffee"))


@pytest.mark.parametrize("text", [
    "下单的砂锅商品必须包含滋补类食材",  # a nourishing food: no concept of the lexicon (staple food is one since round 31)
    "The noodles should have a nourishing effect",  # an effect the catalogue cannot tell
    "The noodle order must not contain offal or soup dumplings",  # a piece that is no concept
])
def test_left_unread(text: str) -> None:
    spec = C(text)
    assert spec is None or not any(getattr(p, "concepts", None) or getattr(p, "absent", None)
                                   for p in nl_rubric.spec_parts(spec)), (text, spec)
