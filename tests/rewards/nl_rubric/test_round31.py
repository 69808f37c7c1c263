"""Round 31 of the reader: a Chinese option said with no verb of choosing. "果汁必须去冰", "鸡汤饭应不加葱花" (the
value is one of the catalogue's options, said bare after the modal), "果汁要少冰" (a plain "要" before a short value),
"甜度要求半糖" ("要求" as the modal), "不能放葱花" and "应做成热饮" ("放" and "做成" as verbs of what a dish has) were
the judge's; each is now the option's check. A bare value the catalogue does not offer as an option stays the
judge's, and so does a long clause after "要". Two classes join the concept lexicon: a staple said by its kind
("应包含面条类主食", "noodle-type staple food": some line is noodles, bread is not) and a texture ("酥脆类型", "crispy");
"素食 / vegetarian" names the absence of meat."""

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
