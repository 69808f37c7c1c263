"""Superlative items (``rewards/nl_rubric/best.py``): the closest, top-rated, cheapest, best-selling,
longest choice, checked against the gold record's value (``bound``, the loader's)."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric.best import USER, best_can_fail, best_holds, best_value, sales_rank
from tests.rewards.nl_rubric.worlds import NOW, TOOLS

HOME = "Room 6, Building 2, Maple Court, Ganjingzi District, Dalian"
# a world of my own: three spas (their scores, points, lengths and best sellers), a chain of two, a Chinese soup shop
CTX_BEST = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("B1", "Willow Spa", ("Massage",), "", 4.8, 121.500, 38.900, "1 Willow Road, Dalian"),
        nl_rubric.PlaceInfo("B2", "Pebble Spa", ("Massage",), "", 4.3, 121.520, 38.910, "7 Pebble Road, Dalian"),
        nl_rubric.PlaceInfo("B3", "Lotus Spa (North Branch)", ("Massage",), "", 4.6, 121.540, 38.920, "3 North Road, Dalian"),
        nl_rubric.PlaceInfo("B4", "Lotus Spa (South Branch)", ("Massage",), "", 4.1, 121.560, 38.880, "9 South Road, Dalian"),
        nl_rubric.PlaceInfo("B5", "甜汤小铺", ("糖水",), "", 4.5, 121.510, 38.905, "大连市甘井子区甜汤路1号"),
    ),
    products=(
        nl_rubric.ProductInfo("W1", "B1", "Hot Stone Massage (90 minutes)", ("No.1 Store Bestseller",), (), 198.0),
        nl_rubric.ProductInfo("W2", "B1", "Shoulder Massage Package", ("45 minutes", "No.2 Store Bestseller"), (), 88.0),
        nl_rubric.ProductInfo("W3", "B1", "Deep Tissue Massage Package", ("120 minutes",), (), 258.0),
        nl_rubric.ProductInfo("W4", "B2", "Honey Soup", ("Best-Selling",), (), 15.0),
        nl_rubric.ProductInfo("W5", "B2", "Honey Soup (Small)", (), (), 12.0),
        nl_rubric.ProductInfo("W6", "B5", "蜂蜜四果汤（大份）", ("门店销量第1名",), (), 15.0),
        nl_rubric.ProductInfo("W7", "B5", "蜂蜜四果汤（小份）", (), (), 12.0),
        nl_rubric.ProductInfo("W8", "B5", "经典糖水课程（2小时）", (), (), 99.0),
        nl_rubric.ProductInfo("W9", "B5", "糖水体验课程（1小时）", (), (), 59.0),
    ),
    addresses=((HOME, 121.505, 38.902),),
    tools=TOOLS,
)
# the same, with places tagged "Top-rated"
CTX_TAGGED = nl_rubric.ItemContext(now=NOW, places=(
    nl_rubric.PlaceInfo("B1", "Willow Spa", ("Massage", "Top-rated"), "", 4.8),
    nl_rubric.PlaceInfo("B2", "Pebble Spa", ("Massage",), "", 4.3),
), tools=TOOLS)


def C(text: str, ctx: nl_rubric.ItemContext = CTX_BEST) -> Any:
    return nl_rubric.compile_item(text, ctx)


def bests(spec: Any) -> list[Any]:
    return [p for p in nl_rubric.spec_parts(spec) if isinstance(p, nl_rubric.BestSpec)]


COMPILES: list[tuple[str, str, str, Any]] = [
    ("The spa should be the closest one to Room 6, Building 2, Maple Court, Ganjingzi District, Dalian", "distance", "min",
     lambda s: s.longitude == 121.505 and s.latitude == 38.902),
    ("The massage order should be from the spa closest to the user", "distance", "min",
     lambda s: s.reference == USER and s.longitude is None),
    ("The massage order should be from the highest-rated spa", "rating", "max", lambda s: True),
    ("The spa order should be for the cheapest package", "price", "min", lambda s: s.phrase == ""),
    ("The ordered item at the spa should have the longest service time", "duration", "max", lambda s: s.phrase == ""),
    ("The soup order should select the best-selling Honey Soup from the store", "sales", "min", lambda s: s.phrase == "honey soup"),
    ("When choosing a package, the best-selling package in the store should be selected", "sales", "min", lambda s: s.phrase == ""),
    ("下单的商家应为距离用户最近的一家", "distance", "min", lambda s: s.reference == USER),
    ("按摩订单应选择评分最高的商家", "rating", "max", lambda s: True),
    ("四果汤订单选择的商品应为店内销量最好的蜂蜜四果汤", "sales", "min", lambda s: s.phrase == "蜂蜜四果汤"),
    ("糖水订单的商品应为价格最便宜的商品", "price", "min", lambda s: s.phrase == ""),
    ("课程订单应选择时长最长的课程", "duration", "max", lambda s: s.phrase == "课程"),  # the lines that are courses
]


@pytest.mark.parametrize(("text", "attribute", "most", "check"), COMPILES, ids=[c[0][:50] for c in COMPILES])
def test_superlatives_compile(text: str, attribute: str, most: str, check: Any) -> None:
    spec = C(text)
    assert spec is not None, text
    (best,) = bests(spec)
    assert (best.attribute, best.most, best.bound) == (attribute, most, None)
    assert check(best), best
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec
    assert "the gold's" in nl_rubric.describe_spec(spec)
    assert nl_rubric.spec_target(spec) == ("place" if attribute in ("rating", "distance") else "order")


def test_a_named_place_joins_the_superlative() -> None:
    """"the highest-rated Lotus Spa branch": that chain too; ", which is X" / "，即X": that place too."""
    spec = C("The massage order should be from the highest-rated Lotus Spa branch")
    assert [p.kind for p in nl_rubric.spec_parts(spec)] == ["best", "store"]
    assert sorted(nl_rubric.spec_parts(spec)[1].place_ids) == ["B3", "B4"]
    spec = C("The massage order should choose the spa closest to the user's location, which is Willow Spa")
    assert [p.kind for p in nl_rubric.spec_parts(spec)] == ["best", "store"]
    spec = C("糖水订单应选择距离用户位置最近的商家，即甜汤小铺")
    assert [p.kind for p in nl_rubric.spec_parts(spec)] == ["best", "store"]


def test_a_top_rated_tag_is_a_place_feature() -> None:
    spec = C("The spa should be top-rated", CTX_TAGGED)
    assert spec.kind == "feature" and spec.scope == "place" and spec.phrases == ["top rated"]
    assert C("The spa should be a top-rated merchant", CTX_TAGGED).kind == "feature"
    # without the tag, "top-rated" is the best rating; "a top-rated merchant" says no more than "highly rated"
    assert bests(C("The spa should be top-rated"))[0].attribute == "rating"
    assert C("The spa should be a top-rated merchant") is None


@pytest.mark.parametrize("text", [
    "The spa should not be the closest one to Room 6, Building 2, Maple Court, Ganjingzi District, Dalian",  # negated
    "The spa should be one of the top-selling stores",                      # a list, and of places
    "The spa should be the second closest to Room 6, Building 2, Maple Court, Ganjingzi District, Dalian",
    "The nearest one should be selected",                                  # nearest to what?
    "The closest spa should offer hot stone massage",                      # the superlative only says which record
    "The massage order should be from the cheapest store",                 # a place's price
    "糖水订单应选择价格最便宜的商家",                                              # a place's price
    "The spa should be the closest to 99 Unknown Avenue, Shenyang",         # a reference the world does not locate
    "The spa should be the cheapest and the closest to the user",           # two attributes
    "The commercial area where the spa is located should be the closest one to Room 6, Building 2, Maple Court, "
    "Ganjingzi District, Dalian",                                          # an area around the place, not the place
    "spa所在的商圈应为距离用户最近的商圈",
    "用户最近一次下单的商家应为评分4.5分以上的商家",                               # "最近" is "recently" here
    "商家不应是距离用户最近的一家",                                               # negated
    "应选择评分第二高的商家",                                                    # an ordinal
])
def test_left_to_the_judge(text: str) -> None:
    spec = C(text)
    assert spec is None or not bests(spec), (text, spec)


def test_an_attribute_the_world_does_not_tell_is_the_judges() -> None:
    bare = nl_rubric.ItemContext(now=NOW, places=CTX_BEST.places, products=(
        nl_rubric.ProductInfo("X1", "B1", "Plain Massage", (), (), 50.0),), tools=TOOLS)
    assert C("The ordered item should have the longest service time", bare) is None   # no length told
    assert C("The soup order should select the best-selling soup", bare) is None       # no sales rank told


def test_sales_rank() -> None:
    assert sales_rank(("No.1 Store Bestseller, No.2 Repurchase Item",)) == 1
    assert sales_rank(("No.2 Store Bestseller, No.1 Repurchase Item",)) == 2
    assert sales_rank(("门店销量第1名",)) == 1
    assert sales_rank(("门店销量第一名、店内复购第二名",)) == 1
    assert sales_rank(("Best-Selling",)) == 1
    assert sales_rank(("Hot-selling", "Popular")) is None
    assert sales_rank(("No.1 Store Bestseller", "No.3 Store Bestseller")) is None  # told twice differently


def _line(pid: str, name: str, tags: tuple[str, ...], price: float) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, "", 1, price)


def _order(place: str, *lines: nl_rubric.LineFacts) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts(table="orders", record_id="O1", place_id=place, lines=lines)


PLACES = {p.place_id: p for p in CTX_BEST.places}
STONE = _line("W1", "Hot Stone Massage (90 minutes)", ("No.1 Store Bestseller",), 198.0)
SHOULDER = _line("W2", "Shoulder Massage Package", ("45 minutes", "No.2 Store Bestseller"), 88.0)
DEEP = _line("W3", "Deep Tissue Massage Package", ("120 minutes",), 258.0)


def test_the_check_compares_with_the_gold() -> None:
    rating = bests(C("The massage order should be from the highest-rated spa"))[0]
    assert not best_holds(rating, _order("B3"), PLACES["B3"])  # no bound yet: holds of nothing
    gold = best_value(rating, _order("B3"), PLACES["B3"])
    assert gold == 4.6
    rating = rating.model_copy(update={"bound": gold})
    assert best_holds(rating, _order("B3"), PLACES["B3"]) and best_holds(rating, _order("B1"), PLACES["B1"])
    assert not best_holds(rating, _order("B4"), PLACES["B4"])
    assert best_can_fail(rating, CTX_BEST, "B3")
    top = rating.model_copy(update={"bound": 4.1})  # the lowest-rated place is the gold: nothing is worse
    assert not best_can_fail(top, CTX_BEST, "B4")

    near = bests(C("The spa should be the closest one to Room 6, Building 2, Maple Court, Ganjingzi District, Dalian"))[0]
    near = near.model_copy(update={"bound": best_value(near, _order("B1"), PLACES["B1"])})
    assert best_holds(near, _order("B1"), PLACES["B1"]) and not best_holds(near, _order("B2"), PLACES["B2"])

    cheap = bests(C("The spa order should be for the cheapest package"))[0]
    assert best_value(cheap, _order("B1", SHOULDER, STONE), PLACES["B1"]) is None  # two prices: which is the item?
    cheap = cheap.model_copy(update={"bound": best_value(cheap, _order("B1", SHOULDER), PLACES["B1"])})
    assert best_holds(cheap, _order("B1", SHOULDER), PLACES["B1"])
    assert not best_holds(cheap, _order("B1", STONE), PLACES["B1"]) and not best_holds(cheap, _order("B1"), PLACES["B1"])
    assert best_can_fail(cheap, CTX_BEST, "B1")

    long = bests(C("The ordered item at the spa should have the longest service time"))[0]
    long = long.model_copy(update={"bound": best_value(long, _order("B1", DEEP), PLACES["B1"])})
    assert long.bound == 120
    assert best_holds(long, _order("B1", DEEP), PLACES["B1"]) and not best_holds(long, _order("B1", STONE), PLACES["B1"])
    assert not best_holds(long, _order("B1", _line("X", "Plain Massage", (), 50.0)), PLACES["B1"])  # length not told

    sells = bests(C("The soup order should select the best-selling Honey Soup from the store"))[0]
    sells = sells.model_copy(update={"bound": best_value(sells, _order("B2", _line("W4", "Honey Soup", ("Best-Selling",), 15.0)),
                                                         PLACES["B2"])})
    assert sells.bound == 1
    assert not best_holds(sells, _order("B2", _line("W5", "Honey Soup (Small)", (), 12.0)), PLACES["B2"])
    assert best_can_fail(sells, CTX_BEST, "B2")  # the small soup is no best seller
    assert nl_rubric.spec_topic(sells) == "product" and nl_rubric.spec_topic(long) == "time"
