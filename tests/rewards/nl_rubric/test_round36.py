"""Round 36 of the reader: a reasoned item whose premise states a requirement of its own (checked too where it
reads alone; a money requirement the conclusion's bound is computed from), the user's home and workplace as
reference places ("within 500m of home", "距离公司3公里以内"), a distance whose reference sits in a Chinese
subject ("X距离Y应在1公里以内"), who a counted order is for ("the soup order prepared for the family"), and the
store a superlative item names before its superlative ("必须是X，是离公司最近的X分店"), and an option said with
no verb as the menu writes it with a note ("需要无糖" for "无糖（推荐）"), and a place said with where it lies as
what is booked ("should reserve a Halal restaurant within 1 km of X", "应在距离公司1公里以内的商家下单")."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

HOME = "Zone A, No.9 Zongnan Road, Yulin Street, Wuhou District, Chengdu"
WORK = "Room 523, Global Center, No.1700 North Section of Tianfu Avenue, Chengdu"
NEAR = nl_rubric.PlaceInfo("N1", "Korean Cold Noodle House", ("Cold Noodles",), "Korean", 4.5,
                           longitude=104.0670, latitude=30.6410)  # ~90 m from home
FAR = nl_rubric.PlaceInfo("F1", "Pyongyang Cold Noodles", ("Cold Noodles",), "Korean", 4.6,
                          longitude=104.0645, latitude=30.5690)  # ~8 km from home, ~140 m from work
NAILS = nl_rubric.PlaceInfo("S1", "Glow Nail Bar", ("Nail Salon",), "Beauty", 4.7, longitude=104.0660, latitude=30.6420)
BBQ = nl_rubric.PlaceInfo("B1", "Seoul Charcoal BBQ", ("Korean self-service BBQ",), "Korean BBQ", 4.4,
                          longitude=104.0665, latitude=30.6415)
CITY = nl_rubric.ItemContext(
    now=NOW, places=(NEAR, FAR, NAILS, BBQ),
    products=(nl_rubric.ProductInfo("P1", "N1", "Cold Noodles", (), (), 38.0),
              nl_rubric.ProductInfo("P2", "F1", "Cold Noodles", (), (), 42.0),
              nl_rubric.ProductInfo("P3", "S1", "Gradient Manicure Package", (), (), 118.0),
              nl_rubric.ProductInfo("P4", "B1", "BBQ Set for Two", (), (), 172.0)),
    addresses=((HOME, 104.0667, 30.6418), (WORK, 104.0652, 30.5702)),
    landmarks=(("home", HOME), ("work", WORK)),
)


def _at(spec: object, place: nl_rubric.PlaceInfo, price: float = 50.0, quantity: int = 1) -> bool:
    line = nl_rubric.LineFacts("X", "Cold Noodles", (), "", quantity, price, ())
    record = nl_rubric.RecordFacts(table="orders", record_id="O1", place_id=place.place_id, status="paid",
                                   lines=(line,), total=price * quantity)
    return nl_rubric.spec_holds(spec, record, place)


@pytest.mark.parametrize("text", [
    "The ordered cold noodle restaurant should be within 500m of home",
    "The ordered cold noodle restaurant is within 500m of the user's home",
    "冷面店距离用户家应在500米以内",
    "冷面店应在家500米范围内",
])
def test_home_is_the_profiles_home_address(text: str) -> None:
    spec = nl_rubric.compile_item(text, CITY)
    assert spec is not None and spec.kind == "distance", text
    assert _at(spec, NEAR) and not _at(spec, FAR)


@pytest.mark.parametrize("text", [
    "The cold noodle restaurant should be within 1 km of the company",
    "冷面店距离公司应在1公里以内",
    "冷面店与公司的距离应不超过1公里",
])
def test_the_company_is_the_profiles_work_address(text: str) -> None:
    spec = nl_rubric.compile_item(text, CITY)
    assert spec is not None and spec.kind == "distance", text
    assert _at(spec, FAR) and not _at(spec, NEAR)


def test_home_without_a_profile_or_its_point_is_the_judges() -> None:
    no_profile = nl_rubric.ItemContext(now=NOW, places=CITY.places, products=CITY.products, addresses=CITY.addresses)
    assert nl_rubric.compile_item("The restaurant should be within 500m of home", no_profile) is None
    # the profile's home address is not among the places the world can locate: no point to measure from
    unlocated = nl_rubric.ItemContext(now=NOW, places=CITY.places, products=CITY.products, addresses=CITY.addresses[1:],
                                      landmarks=CITY.landmarks)
    assert nl_rubric.compile_item("The restaurant should be within 500m of home", unlocated) is None


def test_the_landmarks_come_from_the_worlds_profile() -> None:
    world = SimpleNamespace(tables={}, clock=SimpleNamespace(now=NOW),
                            extra={"user_profile": {"home address": HOME, "work_address": WORK, "occupation": "Chef"}})
    assert nl_rubric.item_context(world).landmarks == (("home", HOME), ("work", WORK))
    world.extra = {"user_profile": {"家庭住址": "丰宁路28号", "工作地址": "新民巷160米", "职业": "医生"}}
    assert nl_rubric.item_context(world).landmarks == (("home", "丰宁路28号"), ("work", "新民巷160米"))


@pytest.mark.parametrize("text", [
    # the premise's money requirement does not read alone: what the conclusion's bound is computed from
    "User's usual spending range is found to be between 90 and 160 yuan, and restaurant spending should not exceed "
    "1.5 times the user's daily spending range, so the restaurant order price should be less than or equal to 240 yuan",
    "The user's total budget is 1600 yuan, but at least 100 yuan must remain, and lunch takes 40% of the budget. Since "
    "(1600-100)*40%=600, the price of the restaurant order cannot exceed 240 yuan (inclusive)",
    # it reads, about other orders too: the conclusion is checked
    "The total expenditure for both the nail salon and Korean Self-service BBQ restaurant should be within 300 yuan. "
    "The price of the BBQ order is 172 yuan. Therefore, the restaurant order price should be at most 240 yuan",
])
def test_a_money_requirement_in_the_reasoning_bounds_through_its_conclusion(text: str) -> None:
    spec = nl_rubric.compile_item(text, CITY)
    assert spec is not None and spec.kind == "price", (text, spec)
    assert _at(spec, NEAR, price=240.0) and not _at(spec, NEAR, price=241.0)


def test_a_money_premise_needs_a_money_conclusion() -> None:
    text = ("Restaurant spending should not exceed 1.5 times the user's daily spending range, so the restaurant should "
            "be within 500m of home")
    assert nl_rubric.compile_item(text, CITY) is None


def test_who_a_counted_order_is_for_is_not_what_it_counts() -> None:
    for text in ("The cold noodle order prepared for family should have a total of 2 portions",
                 "The cold noodles ordered for the wife and daughter should have a total of 2 portions"):
        spec = nl_rubric.compile_item(text, CITY)
        assert spec is not None and spec.kind == "count", text
        assert _at(spec, NEAR, quantity=2) and not _at(spec, NEAR, quantity=3)


def test_a_superlatives_item_keeps_the_store_it_names_first() -> None:
    text = "下单店铺必须是平壤冷面，该店位于天府大道北段1700号，是离用户公司最近的冷面店"
    ctx = nl_rubric.ItemContext(now=NOW, places=(NEAR, nl_rubric.PlaceInfo(
        "F1", "平壤冷面", ("冷面",), "韩餐", 4.6, longitude=104.0645, latitude=30.5690)), products=CITY.products,
        addresses=CITY.addresses, landmarks=CITY.landmarks)
    spec = nl_rubric.compile_item(text, ctx)
    assert spec is not None
    kinds = sorted(p.kind for p in nl_rubric.spec_parts(spec))
    assert kinds == ["best", "store"], spec
    store = next(p for p in nl_rubric.spec_parts(spec) if p.kind == "store")
    assert store.place_ids == ["F1"]
    # a clause before the superlative that names nothing the reader knows leaves the item to the judge
    assert nl_rubric.compile_item("下单店铺必须环境优雅，是离用户公司最近的冷面店", ctx) is None


def test_an_option_said_without_a_verb_matches_its_menu_note() -> None:
    # the menu writes "无糖（推荐）": "需要无糖" is that option, said with no verb
    ctx = nl_rubric.ItemContext(now=NOW, places=(NEAR,), products=(
        nl_rubric.ProductInfo("C1", "N1", "山茶花美式", (), ("无糖（推荐）", "正常糖", "半糖"), 18.0),))
    spec = nl_rubric.compile_item("山茶花美式需要无糖", ctx)
    assert spec is not None and spec.kind == "feature" and "无糖" in spec.phrases, spec
    sugar_free = nl_rubric.LineFacts("C1", "山茶花美式", (), "无糖（推荐）", 1, 18.0, ())
    sweet = nl_rubric.LineFacts("C1", "山茶花美式", (), "正常糖", 1, 18.0, ())
    for line, ok in ((sugar_free, True), (sweet, False)):
        record = nl_rubric.RecordFacts(table="orders", record_id="O1", place_id="N1", status="paid", lines=(line,))
        assert nl_rubric.spec_holds(spec, record, NEAR) is ok


@pytest.mark.parametrize("text", [
    "Should reserve a restaurant within 500m of home",
    "The reservation should be made at a restaurant within 500m (inclusive) of home",
    "A restaurant within 500m of home should be reserved",
    "The query result is positive, so the reservation is made for a restaurant within 500m of home",
    "应在距离用户家500米以内的商家下单",
    "冷面订单应选择距离用户家500米以内的商家",
])
def test_a_place_said_with_where_it_lies_is_booked_there(text: str) -> None:
    spec = nl_rubric.compile_item(text, CITY)
    assert spec is not None and "distance" in [p.kind for p in nl_rubric.spec_parts(spec)], (text, spec)
    assert _at(spec, NEAR) and not _at(spec, FAR)


def test_a_place_within_keeps_its_kind_or_leaves_the_item() -> None:
    spec = nl_rubric.compile_item("Should reserve a Korean self-service BBQ restaurant within 500m of home", CITY)
    assert spec is not None and sorted(p.kind for p in nl_rubric.spec_parts(spec)) == ["distance", "feature"], spec
    assert _at(spec, BBQ) and not _at(spec, NEAR)
    # a kind the reader cannot check, or a reference it cannot locate: the judge's
    assert nl_rubric.compile_item("Should reserve a cozy restaurant within 500m of home", CITY) is None
    assert nl_rubric.compile_item("Should reserve a restaurant within 500m of the old harbour", CITY) is None


@pytest.mark.parametrize("text, address", [
    ("The delivery address should be the user's home address", HOME),
    ("The noodles should be delivered to the user's work address", WORK),
    ("冷面订单应送往用户的工作地址", WORK),
    ("冷面订单的配送地址应为用户的家庭住址", HOME),
    ("冷面要送到用户公司", WORK),
])
def test_a_delivery_address_said_by_its_label(text: str, address: str) -> None:
    spec = nl_rubric.compile_item(text, CITY)
    assert spec is not None and spec.kind == "address" and spec.address == address, (text, spec)
    no_profile = nl_rubric.ItemContext(now=NOW, places=CITY.places, products=CITY.products, addresses=CITY.addresses)
    assert nl_rubric.compile_item(text, no_profile) is None
