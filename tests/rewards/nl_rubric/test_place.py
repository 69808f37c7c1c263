"""Place items (``rewards/nl_rubric/place.py``): stores by name or chain, ratings, distances;
place names that hold the words of other kinds."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import CTX, HOME_ADDR, HOME_ORDER, K, compile_in, compiles_to, left_to_the_judge

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # stores: a name the world knows, a chain by the start of its names, negated
    ("base", "The order should be placed at Noodle House", "store", lambda s: s.place_ids == ["S1"] and not s.negated),
    ("base", "The merchant for the new order should still be NOODLE HOUSE", "store", lambda s: s.place_ids == ["S1"]),
    ("base", "Drink orders cannot select Mixue Ice Cream stores", "store", lambda s: s.place_ids == ["S3", "S4"] and s.negated),
    ("base", "饮品订单不能选择蜜雪冰城商家", "store", lambda s: s.place_ids == ["S5"] and s.negated),
    ("base", "面条订单应选择老王面馆作为商家", "store", lambda s: s.place_ids == ["S6"]),
    # ratings
    ("base", "The restaurant rating should be 4.5 or above", "rating", lambda s: (s.op, s.value) == (">=", 4.5)),
    ("base", "The merchant must have a rating higher than 4.0", "rating", lambda s: (s.op, s.value) == (">", 4.0)),
    ("base", "The shop's rating should not be lower than 4.2 stars", "rating", lambda s: (s.op, s.value) == (">=", 4.2)),
    ("base", "商家评分应在4.1分及以上", "rating", lambda s: (s.op, s.value) == (">=", 4.1)),
    ("base", "下单的店铺评分应高于4.0分", "rating", lambda s: (s.op, s.value) == (">", 4.0)),
    # distances to a place the task knows
    ("base", f"The restaurant should be within 1km (inclusive) of {HOME_ADDR}", "distance", lambda s: (s.max_m, s.inclusive, s.longitude) == (1000.0, True, 121.58)),
    ("base", "The distance from the tea shop to Noodle House should be within 800 meters (exclusive)", "distance", lambda s: (s.max_m, s.inclusive, s.longitude) == (800.0, False, 121.585)),
    # a place's name that holds "note" or "star" is a name, not a note or a rating
    ("more", "The lounge to book should be Green Note Lounge", "store", lambda s: s.place_ids == ["L1"]),
    ("more", "The chosen ice rink should be Polar Star Ice Rink", "store", lambda s: s.place_ids == ["L2"]),
    # a rating stated as one number is that rating
    ("more", "The hotpot restaurant should have a rating of 4.3", "rating", lambda s: (s.op, s.value) == ("==", 4.3)),
    ("more", "烤肉店的评分应为4.4分", "rating", lambda s: (s.op, s.value) == ("==", 4.4)),
    # a brand: the stores whose names start with it
    ("zh", "奶茶订单应选择青禾茶铺品牌的商家", "store", lambda s: s.place_ids == ["Z2", "Z3"]),
    # a store named before "的商品", alone or with the product wanted there
    ("zh", "甜品订单应选择云朵甜品屋的商品", "store", lambda s: s.place_ids == ["Z4"]),
    # a rating said with "要在", a store said as where the order "comes from", or by its name and "店"
    ("zh", "拌面订单的商家评分要在4.5及以上", "rating", lambda s: (s.op, s.value) == (">=", 4.5)),
    ("zh", "甜品订单应当来自于云朵甜品屋", "store", lambda s: s.place_ids == ["Z4"]),
    ("zh", "午饭订单的商家应为山海小馆店", "store", lambda s: s.place_ids == ["Z1"]),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_place_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The restaurant should be within 3km of the user's home"),  # a place the task does not locate
    ("base", "商家评分应该很高"),
    ("base", "The rating should be 7 or above"),  # not a rating
    ("more", "The hotpot restaurant should be a top-rated merchant"),  # a judgement, no number, no tag
]


@pytest.mark.parametrize(("world", "text", "attribute"), [
    ("base", "The restaurant should be the closest one to Noodle House", "distance"),
    ("more", "The hotpot restaurant should be top-rated", "rating"),
])
def test_superlatives_are_read_against_the_gold(world: str, text: str, attribute: str) -> None:
    """A superlative over the places is ``best.py``'s: at least as good as the gold (its bound)."""
    spec = compile_in(world, text)
    assert spec is not None and spec.kind == "best" and (spec.attribute, spec.bound) == (attribute, None)


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_place_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_store_checks() -> None:
    holds = nl_rubric.spec_holds
    assert holds(K("The order should be placed at Noodle House"), HOME_ORDER, CTX.place("S1"))
    assert not holds(K("Drink orders cannot select Mixue Ice Cream stores"), HOME_ORDER, CTX.place("S4"))


def test_rating_checks() -> None:
    holds = nl_rubric.spec_holds
    assert holds(K("The restaurant rating should be 4.5 or above"), HOME_ORDER, CTX.place("S1"))
    assert not holds(K("The restaurant rating should be 4.5 or above"), HOME_ORDER, CTX.place("S2"))


def test_distance_checks() -> None:
    holds = nl_rubric.spec_holds
    place = CTX.place("S1")
    assert holds(K(f"The restaurant should be within 1km (inclusive) of {HOME_ADDR}"), HOME_ORDER, place)  # ~490 m
    assert not holds(K(f"The restaurant should be within 400m of {HOME_ADDR}"), HOME_ORDER, place)


@pytest.mark.parametrize(("world", "text", "ids", "negated"), [
    # a description around the name: a relative clause, a possessive lead, a sentence after a comma
    ("base", "The order should not be from the 'Tea Corner' that the user visited last week", ["S2"], True),
    ("base", "The noodle order cannot be Tea Corner from the user's order history", ["S2"], True),
    ("base", "The user's favourite Noodle House should be selected", ["S1"], False),
    ("base", "面条订单应选择用户常去的老王面馆", ["S6"], False),
    ("base", "面条订单的商家必须为老王面馆，该店铺为用户之前下过单的面馆", ["S6"], False),
    # "避开X，选择其他...": not X (the name's own "不" or "蜜" kept)
    ("base", "饮品订单应避开蜜雪冰城（万达店），选择其他奶茶店", ["S5"], True),
    # "but from other vendors ...": only restates the exclusion
    ("base", "The drinks should not be from Tea Corner, but from other shops selling tea", ["S2"], True),
])
def test_a_store_named_with_a_description(world: str, text: str, ids: list[str], negated: bool) -> None:
    compiles_to(compile_in(world, text), text, "store", lambda s: s.place_ids == ids and s.negated == negated)


def test_a_store_after_a_lead_that_is_no_description() -> None:
    left_to_the_judge("base", "The noodles should be from the nearest Noodle House")
    left_to_the_judge("base", "The noodles should be mild, such as Mild from Noodle House")


def test_a_distance_range_and_a_compound_without_its_room() -> None:
    """"within 300-800 m of <compound>": at least the low end too; the address book's entry with a
    room before the compound's address locates it."""
    text = "The restaurant should be within 300-800 m of Jianlong Garden, Shahekou District, Dalian"
    spec = K(text)
    compiles_to(spec, text, "distance", lambda s: (s.min_m, s.max_m, s.longitude) == (300.0, 800.0, 121.58))
    assert nl_rubric.spec_holds(spec, HOME_ORDER, CTX.place("S1"))  # about 480 m
    assert not nl_rubric.spec_holds(spec, HOME_ORDER, CTX.place("S3"))  # about 3 km
    assert not nl_rubric.spec_holds(spec.model_copy(update={"min_m": 600.0}), HOME_ORDER, CTX.place("S1"))
    left_to_the_judge("base", "The restaurant should be within 5-2 km of Jianlong Garden, Shahekou District, Dalian")
