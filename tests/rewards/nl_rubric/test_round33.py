"""Round 33 of the reader: two more classes of food, a taste and a texture. "应为酸甜口味，如糖醋鲤鱼等" (sweet and sour,
with its example) and "应具有绵软口感" / "a soft and tender texture" (soft; "口感 / texture" are class words) were the
judge's. A soft drink is no soft food. Distances said as "less than 5 km away from P" (the bound excluded) and
"located 5 km or less from P" were the judge's too, and so was an option glossed in brackets ("去冰（不加冰）"; another
option or another thing in the brackets stays the judge's)."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "鲤鱼坊", (), "美食", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "糖醋鲤鱼", (), (), 68.0),
              nl_rubric.ProductInfo("P2", "S1", "清蒸鲤鱼", (), (), 58.0),
              nl_rubric.ProductInfo("P3", "S1", "软糯芋泥糕", (), (), 18.0),
              nl_rubric.ProductInfo("P4", "S1", "香脆芋头条", (), (), 16.0)),
)
EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Taro House", (), "Dessert", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Soft Taro Cake", (), (), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "Crunchy Taro Chips", (), (), 12.0),
              nl_rubric.ProductInfo("P3", "S1", "Soft Drink", (), (), 6.0)),
)


def _holds(ctx: nl_rubric.ItemContext, spec: object, pid: str) -> bool:
    name = next(p.name for p in ctx.products if p.product_id == pid)
    return nl_rubric.spec_holds(spec, order([nl_rubric.LineFacts(pid, name, (), "", 1, 10.0, ())]), ctx.places[0])


def test_sweet_and_sour_with_its_example() -> None:
    spec = nl_rubric.compile_item("为摄影师选择的鲤鱼商品应为酸甜口味，如糖醋鲤鱼等酸甜口感的做法", ZH)
    assert spec is not None
    assert _holds(ZH, spec, "P1") and not _holds(ZH, spec, "P2")


@pytest.mark.parametrize("ctx, text, soft, hard", [
    (ZH, "芋泥点心订单中的商品应具有绵软口感特征", "P3", "P4"),
    (EN, "The items in the taro dessert order should have a soft and tender texture", "P1", "P2"),
])
def test_a_soft_texture(ctx: nl_rubric.ItemContext, text: str, soft: str, hard: str) -> None:
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None, text
    assert _holds(ctx, spec, soft) and not _holds(ctx, spec, hard)


def test_a_soft_drink_is_no_soft_food() -> None:
    spec = nl_rubric.compile_item("The items in the taro dessert order should have a soft and tender texture", EN)
    assert not _holds(EN, spec, "P3")


REF = "Gold Medal Archery Club, 3rd Floor, Building B, Yuefeng Plaza, 89 Culture Road, Jinshui District, Zhengzhou"
CLUB = nl_rubric.PlaceInfo("C1", "Gold Medal Archery Club", (), "Sports", 4.7, longitude=113.6800, latitude=34.7800,
                           address=REF)
NEAR = nl_rubric.PlaceInfo("R1", "Near Noodles", (), "Food", 4.5, longitude=113.6800, latitude=34.7900)  # ~1.1 km
FAR = nl_rubric.PlaceInfo("R2", "Far Noodles", (), "Food", 4.5, longitude=113.6800, latitude=34.8400)  # ~6.7 km
TOWN = nl_rubric.ItemContext(now=NOW, places=(CLUB, NEAR, FAR),
                             products=(nl_rubric.ProductInfo("P1", "R1", "Beef Noodles", (), (), 28.0),))


@pytest.mark.parametrize("text, inclusive", [
    (f"The ordered restaurant should be less than 5 km away from {REF}", False),
    (f"The ordered restaurant should be located 5 km or less from {REF}", True),
])
def test_a_distance_said_as_less_than_or_or_less(text: str, inclusive: bool) -> None:
    spec = nl_rubric.compile_item(text, TOWN)
    assert isinstance(spec, nl_rubric.DistanceSpec) and spec.max_m == 5000 and spec.inclusive is inclusive, spec
    assert nl_rubric.spec_holds(spec, order([]), NEAR) and not nl_rubric.spec_holds(spec, order([]), FAR)


TEA = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "鲜果时光", (), "饮品", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "好大一桶水果茶", (), ("正常冰", "少冰", "去冰"), 18.0),),
)


@pytest.mark.parametrize("text, read", [
    ("水果茶应选去冰（不加冰）", True),  # the option said again in brackets: the option
    ("水果茶应选少冰（正常冰）", False),  # another option in brackets: two demands, the judge's
    ("水果茶应选去冰（大桶）", False),  # something else in brackets: a second demand, the judge's
])
def test_a_gloss_after_an_option(text: str, read: bool) -> None:
    spec = nl_rubric.compile_item(text, TEA)
    assert (spec is not None) is read, (text, spec)
    if read:
        line = nl_rubric.LineFacts("P1", "好大一桶水果茶", (), "去冰", 1, 18.0, TEA.products[0].options)
        other = nl_rubric.LineFacts("P1", "好大一桶水果茶", (), "少冰", 1, 18.0, TEA.products[0].options)
        assert nl_rubric.spec_holds(spec, order([line]), TEA.places[0])
        assert not nl_rubric.spec_holds(spec, order([other]), TEA.places[0])
