"""Chinese product shapes (``rewards/nl_rubric/product.py``): one product then a list of what that
line has, descriptions and class words around a value, "同时包含A和B"; and places said by their kind
("should be a Hunan cuisine restaurant"). A small world of my own, not VitaBench's."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, TOOLS

W = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("B1", "早安饼铺（西门店）", ("早餐",), "", 4.4),
        nl_rubric.PlaceInfo("B2", "果语茶坊（北站店）", (), "", 4.3),
        nl_rubric.PlaceInfo("B3", "Xiang Hall Bistro", ("Hunan cuisine", "Free Parking"), "Meal service", 4.6),
        nl_rubric.PlaceInfo("B4", "Harbour Grill", ("Seafood",), "Meal service", 4.1),
    ),
    products=(
        nl_rubric.ProductInfo("G1", "B1", "煎饼果子", (), ("香辣酱", "甜辣酱"), 9.0),
        nl_rubric.ProductInfo("G2", "B1", "煎饼果子加肠", (), ("香辣酱", "甜辣酱"), 12.0),
        nl_rubric.ProductInfo("G3", "B1", "豆浆", (), ("热", "冰"), 4.0),
        nl_rubric.ProductInfo("G4", "B2", "西柚冰茶", ("含西柚果肉",), ("不额外加糖（推荐）", "标准糖"), 16.0),
        nl_rubric.ProductInfo("G5", "B2", "牛肉卷饼拼鸡排", (), (), 25.0),
        nl_rubric.ProductInfo("G6", "B2", "香菇菜包", (), (), 5.0),
    ),
    tools=TOOLS,
)


def C(text: str) -> Any:
    return nl_rubric.compile_item(text, W)


def line(pid: str, name: str, chosen: str = "", options: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, (), chosen, 1, 0.0, options)


def order(*lines: nl_rubric.LineFacts) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts(table="orders", record_id="o1", place_id="B1", lines=tuple(lines))


def features(spec: Any) -> list[Any]:
    return [p for p in nl_rubric.spec_parts(spec) if p.kind == "feature"]


def test_a_product_then_what_that_line_has() -> None:
    """"包含一个给儿子的煎饼果子，不加肠，甜辣酱口味": one line is that product, has that option chosen
    and is not the variant with the extra; another line (someone else's) may differ."""
    spec = C("早餐订单中应包含一个给儿子的煎饼果子，不加肠，甜辣酱口味")
    assert spec is not None and spec.kind == "feature"
    assert (spec.phrases, spec.also, spec.lacks) == (["煎饼果子"], ["甜辣酱"], ["加肠"])
    opts = ("香辣酱", "甜辣酱")
    mine = line("G1", "煎饼果子", "甜辣酱", opts)
    other = line("G2", "煎饼果子加肠", "香辣酱", opts)
    assert nl_rubric.spec_holds(spec, order(mine, other), None)
    assert not nl_rubric.spec_holds(spec, order(line("G2", "煎饼果子加肠", "甜辣酱", opts)), None)
    assert not nl_rubric.spec_holds(spec, order(line("G1", "煎饼果子", "香辣酱", opts)), None)
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec


def test_a_store_a_product_and_an_option_said_in_other_words() -> None:
    """"在<store>下单X，选择不另外加糖": the store, and the one option of X nearly all of whose
    characters the words share."""
    spec = C("重新在果语茶坊（北站店）下单西柚冰茶，选择不另外加糖")
    assert spec is not None and spec.kind == "all_of"
    store, feat = spec.parts
    assert store.place_ids == ["B2"] and feat.phrases == ["西柚冰茶"] and feat.also == ["不额外加糖（推荐）"]


@pytest.mark.parametrize(("text", "phrases", "negated"), [
    ("果茶订单应选择含有西柚成分的饮品", [["西柚"]], False),  # "成分": a class word around the value
    ("早餐订单必须同时包含牛肉和鸡排两种配菜", [["牛肉"], ["鸡排"]], False),  # "同时包含": one order, both
    ("包子订单中的商品不应含有香菇馅", [["香菇"]], True),
    ("早餐订单应包含煎饼果子这种方便携带的商品", [["煎饼果子"]], False),  # "这种...": a description
])
def test_class_words_and_descriptions_around_a_value(text: str, phrases: list[list[str]], negated: bool) -> None:
    spec = C(text)
    assert spec is not None, text
    assert [p.phrases for p in features(spec)] == phrases and all(p.negated == negated for p in features(spec))


@pytest.mark.parametrize("text", [
    "早餐订单中应包含一个煎饼果子，不加肠，番茄酱口味",  # an option the product does not offer
    "早餐订单中应包含一个煎饼果子，数量为2份，甜辣酱口味",  # a count among the pieces: not this shape
    "早餐订单中应包含一个煎饼果子，口感松软",  # a judgement the catalogue cannot tell
])
def test_a_product_then_pieces_not_all_found(text: str) -> None:
    spec = C(text)
    assert spec is None or not any(getattr(p, "also", None) for p in nl_rubric.spec_parts(spec)), (text, spec)


@pytest.mark.parametrize(("text", "phrase", "negated", "good", "bad"), [
    ("The dinner order should be from a Hunan cuisine restaurant", "hunan cuisine", False, "B3", "B4"),
    ("The merchant should be a Hunan Cuisine restaurant rather than a fast food one", "hunan cuisine", False, "B3", "B4"),
    ("The restaurant must provide Free Parking service", "free parking", False, "B3", "B4"),
    ("The restaurant should have a Free Parking label", "free parking", False, "B3", "B4"),
    ("The dinner order should not be from a seafood restaurant", "seafood", True, "B3", "B4"),
])
def test_a_place_by_its_kind(text: str, phrase: str, negated: bool, good: str, bad: str) -> None:
    spec = C(text)
    assert spec is not None and spec.kind == "feature" and spec.scope == "place", (text, spec)
    assert spec.phrases[0] in (phrase, f"{phrase} restaurant") and spec.negated == negated
    assert nl_rubric.spec_holds(spec, order(), W.place(good))
    assert not nl_rubric.spec_holds(spec, order(), W.place(bad))


@pytest.mark.parametrize("text", [
    "The restaurant should be a well-known seafood restaurant",  # a judgement on top of the kind
    "The restaurant should be a Cantonese cuisine restaurant",  # no place of that kind
    "The dinner order must provide Free Parking service",  # an order provides no service
])
def test_a_place_kind_left_to_the_judge(text: str) -> None:
    spec = C(text)
    assert spec is None or spec.kind != "feature" or spec.scope != "place", (text, spec)
