"""Round 11 of the reader (built on the build part only, from items one language read and the other
did not): a Chinese value the gold spells with characters between its own, two class names said
without a conjunction, "配备" / "特征", "能满足N人食用", an order named by what it holds, "ordered
items", a trailing "and be suitable for ...", "price characteristics"."""

from __future__ import annotations

from dataclasses import replace

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW


def line(pid: str, name: str, tags: tuple[str, ...] = (), quantity: int = 1) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, "", quantity, 30.0, ())


def holds(spec: object, ctx: nl_rubric.ItemContext, place: str, *lines: nl_rubric.LineFacts) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", place, lines=lines), ctx.place(place))


CANTON = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("C1", "君思粤小厨", ("粤菜",), "美食", 4.6),
                     nl_rubric.PlaceInfo("C2", "鹅馆记", ("烧鹅",), "美食", 4.4)),
    products=(nl_rubric.ProductInfo("A1", "C1", "白切清远鸡（半只）", ("低盐", "少油"), (), 89.0),
              nl_rubric.ProductInfo("A2", "C1", "萝卜牛腩煲", (), (), 55.0),
              nl_rubric.ProductInfo("A3", "C1", "豉汁蒸排骨", ("辣",), (), 48.0),
              nl_rubric.ProductInfo("A4", "C1", "蒜蓉炒菜心", (), (), 22.0),
              nl_rubric.ProductInfo("B1", "C2", "白切鸡150g", (), (), 16.8),
              nl_rubric.ProductInfo("B2", "C2", "不加糖白切香鸡", (), (), 18.0)),
)
GOLD = replace(CANTON, evidence=(CANTON.products[0],))


def test_a_chinese_value_the_gold_spells_with_more_characters_is_read_as_either() -> None:
    text = "粤菜团餐订单中必须包含白切鸡"
    spec = nl_rubric.compile_item(text, GOLD)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["白切鸡", "白切清远鸡"]
    assert holds(spec, GOLD, "C1", line("A1", "白切清远鸡（半只）"))
    assert holds(spec, GOLD, "C2", line("B1", "白切鸡150g"))  # the value as said passes too: never stricter
    assert not holds(spec, GOLD, "C1", line("A2", "萝卜牛腩煲"))
    # without the gold, the catalogue's literal spelling is all there is
    assert nl_rubric.compile_item(text, CANTON).phrases == ["白切鸡"]  # type: ignore[union-attr]


def test_a_run_that_negates_or_crosses_a_bracket_is_not_the_value() -> None:
    from servicegym.rewards.nl_rubric.spelling import _zh_in_order
    assert _zh_in_order("白切鸡", "白切清远鸡（半只）") == "白切清远鸡"
    assert _zh_in_order("加糖", "不加糖奶茶") == "加糖"
    assert _zh_in_order("糖奶茶", "糖不加奶茶") is None  # what the run adds negates
    assert _zh_in_order("白切鸡", "白切（清远）鸡") is None  # crosses a bracket
    assert _zh_in_order("白切鸡", "白切清远走地散养鸡") is None  # too far apart to be one name


def test_two_class_names_said_together_are_each_excluded() -> None:
    spec = nl_rubric.compile_item("午餐订单中不应包含辛辣油腻的商品", CANTON)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["spicy", "greasy"]
    assert not holds(spec, CANTON, "C1", line("A3", "豉汁蒸排骨", ("辣",)))
    assert holds(spec, CANTON, "C1", line("A4", "蒜蓉炒菜心"))


TEA = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("T1", "古茗（软三店）", ("奶茶",), "饮品", 4.7),),
    products=(nl_rubric.ProductInfo("J1", "T1", "云岭茉莉", ("花香",), ("三分甜", "七分甜"), 15.0),
              nl_rubric.ProductInfo("J2", "T1", "杨枝甘露", ("果香",), (), 18.0),
              nl_rubric.ProductInfo("J3", "T1", "鸡肉砂锅,1份带米饭加蘸水", ("有蘸水",), (), 18.0),
              nl_rubric.ProductInfo("J4", "T1", "牛肉砂锅", (), (), 20.0)),
)


def test_a_chinese_feature_said_with_its_kind_word_or_a_verb_of_coming_with() -> None:
    spec = nl_rubric.compile_item("下单商品应带有花香味特征，如茉莉花香等", TEA)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["花香"]
    assert holds(spec, TEA, "T1", line("J1", "云岭茉莉", ("花香",)))
    assert not holds(spec, TEA, "T1", line("J2", "杨枝甘露", ("果香",)))
    spec = nl_rubric.compile_item("下单的砂锅商品必须配备蘸水", TEA)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    assert holds(spec, TEA, "T1", line("J3", "鸡肉砂锅,1份带米饭加蘸水", ("有蘸水",)))
    assert not holds(spec, TEA, "T1", line("J4", "牛肉砂锅"))


def test_a_portion_that_can_feed_n_people_is_a_bound_on_servings() -> None:
    spec = nl_rubric.compile_item("选择柠檬鸡爪宵夜商品时分量应能满足五个人食用需求", TEA)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.op, spec.value) == ("servings", ">=", 5)


SWEET = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Honeymoon Dessert", ("Dessert",), "Food", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Freshly Ground Sesame Paste", ("Smooth",), ("Hot", "Cold"), 20.0),
              nl_rubric.ProductInfo("P2", "S1", "Black Sesame Glutinous Rice Balls", (), (), 16.0),
              nl_rubric.ProductInfo("P3", "S1", "Mango Pomelo Sago", ("Economical/Affordable",), (), 18.0),
              nl_rubric.ProductInfo("P4", "S1", "Durian Pancake", ("Feeling of Fullness",), (), 28.0)),
)


def test_an_order_named_by_what_it_holds_counts_its_items_unless_the_gold_spells_the_name() -> None:
    text = "The quantity of Black Sesame order should be 3 portions"
    gold_paste = replace(SWEET, evidence=(SWEET.products[0],))
    spec = nl_rubric.compile_item(text, gold_paste)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.phrase) == (3, "")
    gold_balls = replace(SWEET, evidence=(SWEET.products[1],))
    spec = nl_rubric.compile_item(text, gold_balls)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.phrase) == (3, "black sesame")
    spec = nl_rubric.compile_item("The quantity of ordered items should be 6 servings to meet the needs of a 6-person "
                                  "sharing meeting", SWEET)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.value, spec.phrase) == (6, "")


def test_trailing_descriptions_and_kind_words_of_an_english_feature() -> None:
    spec = nl_rubric.compile_item("The ordered products must have Economical/Affordable price characteristics", SWEET)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["economical/affordable"]
    assert holds(spec, SWEET, "S1", line("P3", "Mango Pomelo Sago", ("Economical/Affordable",)))
    assert not holds(spec, SWEET, "S1", line("P4", "Durian Pancake", ("Feeling of Fullness",)))
    spec = nl_rubric.compile_item("The ordered light dinner item should provide a Feeling of Fullness and be suitable for "
                                  "consumption before exercise", SWEET)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["feeling of fullness"]
    assert holds(spec, SWEET, "S1", line("P4", "Durian Pancake", ("Feeling of Fullness",)))
