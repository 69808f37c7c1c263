"""Round 31 of the reader: a Chinese option said with no verb of choosing. "果汁必须去冰", "鸡汤饭应不加葱花" (the
value is one of the catalogue's options, said bare after the modal), "果汁要少冰" (a plain "要" before a short value),
"甜度要求半糖" ("要求" as the modal), "不能放葱花" and "应做成热饮" ("放" and "做成" as verbs of what a dish has) were
the judge's; each is now the option's check. A bare value the catalogue does not offer as an option stays the
judge's, and so does a long clause after "要". Two classes join the concept lexicon: a staple said by its kind
("应包含面条类主食", "noodle-type staple food": some line is noodles, bread is not) and a texture ("酥脆类型", "crispy");
"素食 / vegetarian" names the absence of meat. More classes (staple food, desserts, soups, pork, beef, nuts, eggs,
fruit, tea, steamed, grilled) and "drinks / beverages / 饮料" as class words ("alcoholic drinks": alcohol); two classes
joined by "and" in one flavour stay the literal reading (both on one line, not either), and "snacks" is no longer
a class word to drop ("Tea Snacks" are no tea)."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "鲜果时光（人民路店）", (), "饮品", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "鲜榨橙汁", (), ("正常冰", "少冰", "去冰"), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "鸡汤饭", (), ("加葱花", "不加葱花"), 22.0),
              nl_rubric.ProductInfo("P3", "S1", "杨枝甘露", (), ("全糖", "半糖", "冰饮", "热饮"), 20.0)),
)


def _line(pid: str, name: str, attributes: str) -> nl_rubric.LineFacts:
    offered = next(p.options for p in ZH.products if p.product_id == pid)
    return nl_rubric.LineFacts(pid, name, (), attributes, 1, 18.0, offered)


@pytest.mark.parametrize("text, pid, name, good, bad", [
    ("鲜榨橙汁必须去冰", "P1", "鲜榨橙汁", "去冰", "正常冰"),
    ("鲜榨橙汁要少冰", "P1", "鲜榨橙汁", "少冰", "正常冰"),
    ("鸡汤饭应不加葱花", "P2", "鸡汤饭", "不加葱花", "加葱花"),
    ("鸡汤饭不能放葱花", "P2", "鸡汤饭", "不加葱花", "加葱花"),
    ("杨枝甘露的甜度要求半糖", "P3", "杨枝甘露", "半糖", "全糖"),
    ("杨枝甘露应做成热饮", "P3", "杨枝甘露", "热饮", "冰饮"),
])
def test_an_option_said_without_a_verb_of_choosing_is_checked(text: str, pid: str, name: str, good: str,
                                                             bad: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is not None, text
    assert nl_rubric.spec_holds(spec, order([_line(pid, name, good)]), ZH.places[0]), text
    assert not nl_rubric.spec_holds(spec, order([_line(pid, name, bad)]), ZH.places[0]), text


@pytest.mark.parametrize("text", [
    "鲜榨橙汁必须冰镇",  # no option says so: what "冰镇" covers is the judge's
    "鲜榨橙汁要按照用户说的口味和冰度来做",  # a long clause after a plain "要"
    "鲜榨橙汁可以去冰",  # a permission
])
def test_what_the_catalogue_does_not_offer_or_a_long_clause_stays_the_judges(text: str) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert spec is None, (text, nl_rubric.describe_spec(spec))


FOOD = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "椒麻鸡小馆", (), "美食", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "椒麻鸡", (), (), 38.0),
              nl_rubric.ProductInfo("P2", "S1", "手工拌面", (), (), 12.0),
              nl_rubric.ProductInfo("P3", "S1", "白米饭", (), (), 3.0),
              nl_rubric.ProductInfo("P4", "S1", "香酥鸡块", (), (), 18.0),
              nl_rubric.ProductInfo("P5", "S1", "奶香面包", (), (), 9.0),
              nl_rubric.ProductInfo("P6", "S1", "Crispy Chicken Bites", (), (), 18.0)),
)


def _lines(*pids: str) -> list[nl_rubric.LineFacts]:
    names = {p.product_id: p.name for p in FOOD.products}
    return [nl_rubric.LineFacts(p, names[p], (), "", 1, 10.0, ()) for p in pids]


@pytest.mark.parametrize("text", ["椒麻鸡订单中应包含面条类主食商品", "The order should include noodle-type staple food items"])
def test_a_staple_said_by_its_kind_is_the_concept(text: str) -> None:
    """"面条类主食": some line is noodles (拌面), not rice, and bread (面包) is no noodle."""
    spec = nl_rubric.compile_item(text, FOOD)
    assert spec is not None, text
    assert nl_rubric.spec_holds(spec, order(_lines("P1", "P2")), FOOD.places[0])
    assert not nl_rubric.spec_holds(spec, order(_lines("P1", "P3")), FOOD.places[0])
    assert not nl_rubric.spec_holds(spec, order(_lines("P1", "P5")), FOOD.places[0])


@pytest.mark.parametrize("text", ["选择的小吃应为酥脆类型", "The selected snack should be crispy type"])
def test_a_texture_is_the_concept(text: str) -> None:
    spec = nl_rubric.compile_item(text, FOOD)
    assert spec is not None, text
    assert nl_rubric.spec_holds(spec, order(_lines("P4")), FOOD.places[0])
    assert nl_rubric.spec_holds(spec, order(_lines("P6")), FOOD.places[0])
    assert not nl_rubric.spec_holds(spec, order(_lines("P3")), FOOD.places[0])


MORE = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Old Town Hot Pot", (), "Food", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Hot Pot Set for Four (with 4 Beers)", (), (), 388.0),
              nl_rubric.ProductInfo("P2", "S1", "Hot Pot Set for Four (with Soy Milk)", (), (), 358.0),
              nl_rubric.ProductInfo("P3", "S1", "Sirloin Steak Set", (), (), 128.0),
              nl_rubric.ProductInfo("P4", "S1", "Tomato Noodles", (), (), 28.0),
              nl_rubric.ProductInfo("P5", "S1", "Beef and Egg Rice Noodle Roll", (), (), 18.0),
              nl_rubric.ProductInfo("P6", "S1", "Egg Rice Noodle Roll", (), (), 12.0),
              nl_rubric.ProductInfo("P7", "S1", "Tea Snack Platter", ("Tea Snacks",), (), 58.0),
              nl_rubric.ProductInfo("P8", "S1", "Jasmine Tea", (), (), 18.0)),
)


def _more(*pids: str) -> nl_rubric.RecordFacts:
    names = {p.product_id: p.name for p in MORE.products}
    return order([nl_rubric.LineFacts(p, names[p], (), "", 1, 10.0, ()) for p in pids])


def test_a_drink_class_word_leaves_the_concept() -> None:
    """"alcoholic drinks" names alcohol (the class word "drinks" dropped): a set with beers fails."""
    spec = nl_rubric.compile_item("The hot pot package must not include alcoholic drinks", MORE)
    assert spec is not None
    assert nl_rubric.spec_holds(spec, _more("P2"), MORE.places[0])
    assert not nl_rubric.spec_holds(spec, _more("P1"), MORE.places[0])


def test_beef_is_a_class_that_a_steak_belongs_to() -> None:
    spec = nl_rubric.compile_item("The order should include beef", MORE)
    assert spec is not None
    assert nl_rubric.spec_holds(spec, _more("P3"), MORE.places[0])
    assert not nl_rubric.spec_holds(spec, _more("P4"), MORE.places[0])


def test_two_classes_joined_by_and_in_one_flavour_stay_literal() -> None:
    """"Beef and Egg flavor" is one line with both, not a line with either: the egg roll alone fails."""
    spec = nl_rubric.compile_item("The rice noodle roll should be Beef and Egg flavor", MORE)
    assert spec is not None
    assert nl_rubric.spec_holds(spec, _more("P5"), MORE.places[0])
    assert not nl_rubric.spec_holds(spec, _more("P6"), MORE.places[0])


def test_tea_snacks_are_not_tea() -> None:
    """"Tea Snacks" names snacks served with tea: a cup of tea is not them."""
    spec = nl_rubric.compile_item("The tea house order should include Tea Snacks", MORE)
    assert spec is None or not nl_rubric.spec_holds(spec, _more("P8"), MORE.places[0])


def test_a_staple_given_by_an_example_is_the_class() -> None:
    """"包含米饭等主食" (a staple such as rice): rice or noodles pass, a drink alone does not (the judge's before)."""
    ctx = nl_rubric.ItemContext(now=NOW, places=FOOD.places, products=(
        *FOOD.products, nl_rubric.ProductInfo("P7", "S1", "冰镇酸梅汤", (), (), 6.0)))
    spec = nl_rubric.compile_item("下单的砂锅商品必须包含米饭等主食", ctx)
    assert spec is not None
    names = {p.product_id: p.name for p in ctx.products}

    def has(*pids: str) -> bool:
        return nl_rubric.spec_holds(spec, order([nl_rubric.LineFacts(p, names[p], (), "", 1, 5.0, ()) for p in pids]),
                                    ctx.places[0])
    assert has("P1", "P3") and has("P1", "P2") and not has("P1", "P7")
