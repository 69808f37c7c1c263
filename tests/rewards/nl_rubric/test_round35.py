"""Round 35 of the reader: a visit or an order said by where it is made ("a pet store should be booked", "should
make a reservation at the pet store", "should place an order at the car wash"), and a reasoned item whose
conclusion is two requirements ("the result is yes, so a car wash shop should be ordered, and the car wash shop
should be within 1000m of X"; "... therefore should place an order at X. The distance from X to Y should be within
1000m"): the look-up the premise demands and both requirements, where before the item was the judge's."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

OFFICE = "3/F, Tower B, High-Tech Plaza, 22 Keyuan Road, Nanshan District, Shenzhen (Mindful Space)"
TOOLS = frozenset({"instore_shop_search_recommend", "instore_product_search_recommend", "get_nearby",
                   "longitude_latitude_to_distance", "address_to_longitude_latitude"})
MINDFUL = nl_rubric.PlaceInfo("M1", "Mindful Space", ("Meditation",), "Wellness", 4.8, longitude=113.9500, latitude=22.5400,
                              address=OFFICE)
NEAR_WASH = nl_rubric.PlaceInfo("W1", "Sparkle Auto", ("Auto Care",), "Car Wash", 4.6, longitude=113.9500,
                                latitude=22.5450)  # ~0.56 km
FAR_WASH = nl_rubric.PlaceInfo("W2", "Shine Auto", ("Auto Care",), "Car Wash", 4.7, longitude=113.9500,
                               latitude=22.5600)  # ~2.2 km
PETS = nl_rubric.PlaceInfo("P1", "Happy Paws", ("Pet Store", "Pet Grooming"), "Pet Services", 4.5, longitude=113.9510,
                           latitude=22.5410)
CAFE = nl_rubric.PlaceInfo("C1", "Bean There", ("Coffee",), "Cafe", 4.4, longitude=113.9520, latitude=22.5420)
TOWN = nl_rubric.ItemContext(
    now=NOW, places=(MINDFUL, NEAR_WASH, FAR_WASH, PETS, CAFE), tools=TOOLS,
    products=(nl_rubric.ProductInfo("X1", "W1", "Full Car Wash (1.5 hours)", ("Interior and Exterior",), (), 98.0),
              nl_rubric.ProductInfo("X2", "W2", "Full Car Wash (1.5 hours)", ("Interior and Exterior",), (), 88.0),
              nl_rubric.ProductInfo("X3", "P1", "Cat Grooming", ("Grooming",), (), 128.0),
              nl_rubric.ProductInfo("X4", "C1", "Latte", ("Coffee",), (), 28.0)),
)
# the gold's products, as the loader gives them: "car wash", which the places' category says too, is the product's
TOWN = nl_rubric.ItemContext(now=NOW, places=TOWN.places, products=TOWN.products, tools=TOOLS, evidence=TOWN.products[:1])
LOOKUP = frozenset({"instore_shop_search_recommend"})


def _holds(spec: object, place: nl_rubric.PlaceInfo, calls: frozenset[str] | None = LOOKUP) -> bool:
    product = next(p for p in TOWN.products if p.place_id == place.place_id)
    line = nl_rubric.LineFacts(product.product_id, product.name, product.tags, "", 1, product.price, ())
    return nl_rubric.spec_holds(spec, order([line]), place, calls)


@pytest.mark.parametrize("text", [
    "A pet store should be booked",
    "A pet store should be reserved",
    "Should make a reservation at the pet store",
    "The agent should place an order at the pet store",
])
def test_a_visit_said_by_where_it_is_made(text: str) -> None:
    spec = nl_rubric.compile_item(text, TOWN)
    assert spec is not None, text
    assert _holds(spec, PETS) and not _holds(spec, CAFE)


@pytest.mark.parametrize("text", [
    f"Should check if there is a car wash shop within 1000m (inclusive) of {OFFICE}. The result is yes, so a car wash "
    f"shop should be ordered, and the car wash shop should be within 1000m (inclusive) of {OFFICE}",
    f"Should check whether there is a car wash service within 1000m (inclusive) of {OFFICE}. The result is yes, "
    f"therefore should place an order at the car wash service. The distance from the car wash service to {OFFICE} "
    f"should be within 1000m (inclusive)",
])
def test_a_conclusion_of_two_requirements(text: str) -> None:
    spec = nl_rubric.compile_item(text, TOWN)
    assert spec is not None, text
    kinds = {p.kind for p in nl_rubric.spec_parts(spec)}
    assert kinds == {"process", "feature", "distance"}, spec
    assert _holds(spec, NEAR_WASH)
    assert not _holds(spec, FAR_WASH)  # too far
    assert not _holds(spec, PETS)  # no car wash
    assert not _holds(spec, NEAR_WASH, frozenset())  # nothing looked up


def test_a_second_requirement_in_the_reasoning_is_checked_too() -> None:
    # the requirement before the report is no look-up: the item asks two things, one of them in its reasoning;
    # both are checked (round 36; it was the judge's)
    text = (f"The car wash should be Sparkle Auto, and the result is yes, so the car wash shop should be within "
            f"1000m (inclusive) of {OFFICE}")
    spec = nl_rubric.compile_item(text, TOWN)
    assert spec is not None and sorted(p.kind for p in nl_rubric.spec_parts(spec)) == ["distance", "store"], spec
    # one the reader cannot read alone keeps the item the judge's
    text = (f"The car wash should feel welcoming, and the result is yes, so the car wash shop should be within "
            f"1000m (inclusive) of {OFFICE}")
    assert nl_rubric.compile_item(text, TOWN) is None


HOTPOT = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("H1", "Chao Niu Chaoshan Beef Hot Pot", ("fresh ingredients",), "Hot Pot", 4.6),
            nl_rubric.PlaceInfo("H2", "Fresh Beef Spicy Hot Pot", ("spicy beef hot pot",), "Hot Pot", 4.6),
            nl_rubric.PlaceInfo("M1", "Mixue Ice Cream (Wanda)", ("Ice cream",), "Drinks", 4.5),
            nl_rubric.PlaceInfo("M2", "Mixue Ice Cream (Station)", ("Ice cream",), "Drinks", 4.4)),
    products=(nl_rubric.ProductInfo("X1", "H1", "Beef Platter", ("Freshly sliced",), (), 98.0),
              nl_rubric.ProductInfo("X2", "M1", "Lemon Tea", (), (), 6.0)),
)


def test_a_plain_word_is_no_chain_a_brand_is() -> None:
    # "fresh" starts one place's name, but other places use it as a plain word: no store named "fresh" is meant
    spec = nl_rubric.compile_item("The ingredients provided by the Chaoshan beef hot pot restaurant should be fresh",
                                  HOTPOT)
    assert not any(p.kind == "store" for p in nl_rubric.spec_parts(spec)) if spec is not None else True
    # a brand's branches are still the chain it names
    spec = nl_rubric.compile_item("The drink order should be from Mixue", HOTPOT)
    assert spec is not None and spec.kind == "store" and set(spec.place_ids) == {"M1", "M2"}, spec


TEA = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("G1", "Guming", ("Tea",), "Drinks", 4.6),),
    products=(nl_rubric.ProductInfo("J1", "G1", "Yunling Jasmine", ("Floral Fragrance",),
                                    ("70% Sweet (Recommended)", "30% Sweet", "100% Sweet"), 14.0),),
)


@pytest.mark.parametrize("chosen, ok", [("30% Sweet", True), ("Three Parts Sweet", True), ("70% Sweet (Recommended)", False)])
def test_a_sugar_level_in_tenths_as_the_menu_or_the_record_spells_it(chosen: str, ok: bool) -> None:
    # the menu spells 三分糖 "30% Sweet"; a translated record may keep "Three Parts Sweet": the same choice
    spec = nl_rubric.compile_item("The sweetness level of the ordered product should be selected as 'three parts sweet'",
                                  TEA)
    assert spec is not None
    pr = TEA.products[0]
    line = nl_rubric.LineFacts(pr.product_id, pr.name, pr.tags, chosen, 1, pr.price, pr.options)
    assert nl_rubric.spec_holds(spec, order([line]), TEA.places[0]) is ok


SWEETS = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("D1", "Taro House", (), "Dessert", 4.6),),
    products=(nl_rubric.ProductInfo("T1", "D1", "Taro Snow Souffle", ("Soft", "Two pieces"), (), 9.0),
              nl_rubric.ProductInfo("T2", "D1", "Taro Egg Tart", ("Flaky",), (), 6.0),
              nl_rubric.ProductInfo("T3", "D1", "芋泥雪贝一盒三个", (), (), 12.0)),
)


def _sweets(*lines: tuple[str, int]) -> nl_rubric.RecordFacts:
    out = []
    for pid, qty in lines:
        pr = next(p for p in SWEETS.products if p.product_id == pid)
        out.append(nl_rubric.LineFacts(pid, pr.name, pr.tags, "", qty, pr.price, ()))
    return order(out)


@pytest.mark.parametrize("text", ["The total quantity of items in the taro dessert order should be 20 pieces",
                                  "芋泥点心订单的商品总数量应为20块"])
def test_a_count_in_pieces(text: str) -> None:
    spec = nl_rubric.compile_item(text, SWEETS)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.what == "pieces", spec
    place = SWEETS.places[0]
    assert nl_rubric.spec_holds(spec, _sweets(("T1", 10)), place)  # ten units of two pieces
    assert nl_rubric.spec_holds(spec, _sweets(("T2", 20)), place)  # twenty tarts: a unit is a piece
    assert nl_rubric.spec_holds(spec, _sweets(("T1", 7), ("T2", 6)), place)  # 14 + 6
    assert not nl_rubric.spec_holds(spec, _sweets(("T1", 20)), place)  # forty pieces in twenty units
    assert not nl_rubric.spec_holds(spec, _sweets(("T3", 5)), place)  # fifteen pieces in five boxes


@pytest.mark.parametrize("text", ["The total quantity of items in the taro dessert order should be 20 servings",
                                  "芋泥点心订单的商品总数量应为20个"])  # 个 counts anything: the goods, as before
def test_units_are_no_pieces(text: str) -> None:
    spec = nl_rubric.compile_item(text, SWEETS)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.what == "items", spec


RICE = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("R1", "老鸡汤饭店", (), "快餐", 4.5),),
    products=(nl_rubric.ProductInfo("C1", "R1", "鸡汤饭", (), ("加葱花", "不加葱花"), 22.0),
              nl_rubric.ProductInfo("C2", "R1", "葱油拌面", (), (), 16.0),
              nl_rubric.ProductInfo("C3", "R1", "软糯芋泥糕", (), (), 12.0),
              nl_rubric.ProductInfo("C4", "R1", "香脆芋头条", (), (), 10.0)),
)


def _rice(pid: str, chosen: str = "") -> nl_rubric.RecordFacts:
    pr = next(p for p in RICE.products if p.product_id == pid)
    return order([nl_rubric.LineFacts(pid, pr.name, pr.tags, chosen, 1, pr.price, pr.options)])


@pytest.mark.parametrize("text", ["鸡汤饭不要放葱花", "鸡汤饭应去掉葱花", "鸡汤饭需要去掉葱花"])
def test_a_garnish_put_in_or_taken_out(text: str) -> None:
    spec = nl_rubric.compile_item(text, RICE)
    assert spec is not None, text
    place = RICE.places[0]
    assert nl_rubric.spec_holds(spec, _rice("C1", "不加葱花"), place)
    assert not nl_rubric.spec_holds(spec, _rice("C1", "加葱花"), place)
    assert not nl_rubric.spec_holds(spec, _rice("C2"), place)  # 葱油: green onion in the name


def test_a_class_said_as_a_de_phrase() -> None:
    spec = nl_rubric.compile_item("芋泥点心要软糯的", RICE)
    assert spec is not None
    assert nl_rubric.spec_holds(spec, _rice("C3"), RICE.places[0]) and not nl_rubric.spec_holds(spec, _rice("C4"), RICE.places[0])


PLAZA = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("K1", "Korean Charcoal BBQ", ("Korean BBQ", "Self-service"), "Meal", 4.7),
            nl_rubric.PlaceInfo("N1", "Fingertip Art Nail Salon", ("Manicure",), "Nail salon", 4.6)),
    products=(nl_rubric.ProductInfo("B1", "K1", "All-You-Can-Eat BBQ for One", (), (), 172.0),
              nl_rubric.ProductInfo("M1", "N1", "Half-tips Nail Package", (), (), 128.0)),
)


def test_a_joint_total_names_a_place_by_its_kind() -> None:
    # "the Korean self-service BBQ restaurant": the place's fields spell the kind without the noun
    spec = nl_rubric.compile_item("The total cost of the nail salon and Korean self-service BBQ restaurant orders should "
                                  "be within 300 yuan", PLAZA)
    assert isinstance(spec, nl_rubric.JointSpec) and spec.what == "total" and spec.high == 300, spec
    assert len(spec.members) == 2
    bbq, nails = PLAZA.places

    def rec(rid: str, pid: str, place: nl_rubric.PlaceInfo, price: float) -> tuple[nl_rubric.RecordFacts, nl_rubric.PlaceInfo]:
        line = nl_rubric.LineFacts(pid, "", (), "", 1, price, ())
        return nl_rubric.RecordFacts(table="orders", record_id=rid, place_id=place.place_id, status="paid",
                                     lines=(line,), total=price), place

    assert nl_rubric.joint_holds(spec, [rec("O1", "B1", bbq, 172.0), rec("O2", "M1", nails, 128.0)])
    assert not nl_rubric.joint_holds(spec, [rec("O1", "B1", bbq, 172.0), rec("O2", "M1", nails, 168.0)])
    assert not nl_rubric.joint_holds(spec, [rec("O2", "M1", nails, 128.0)])  # no BBQ order


def test_a_closing_time_on_a_24_hour_clock() -> None:
    late = nl_rubric.PlaceInfo("L1", "Night Nails", ("Open until 11 PM",), "Nail salon", 4.5)
    early = nl_rubric.PlaceInfo("E1", "Day Nails", ("Open until 9 PM",), "Nail salon", 4.5)
    ctx = nl_rubric.ItemContext(now=NOW, places=(late, early), products=())
    spec = nl_rubric.compile_item("The nail salon must stay open until at least 22:00", ctx)
    assert isinstance(spec, nl_rubric.HoursSpec) and spec.closes_at == 22 * 60, spec
    assert nl_rubric.spec_holds(spec, order([]), late) and not nl_rubric.spec_holds(spec, order([]), early)


def test_a_set_for_a_single_diner() -> None:
    spec = nl_rubric.compile_item("The BBQ package should be for a single diner", PLAZA)
    assert spec is not None
    bbq = PLAZA.products[0]  # "All-You-Can-Eat BBQ for One"
    line = nl_rubric.LineFacts(bbq.product_id, bbq.name, bbq.tags, "", 1, bbq.price, ())
    assert nl_rubric.spec_holds(spec, order([line]), PLAZA.places[0])


@pytest.mark.parametrize("text, clock", [
    ("Deliver the chicken soup rice around 7 in the evening on September 30, 2024", "2024-09-30 19:00"),
    ("The chicken soup rice should arrive before 8 at night on September 30, 2024", "2024-09-30 20:00"),
    ("The chicken soup rice should arrive by 9 in the morning on September 30, 2024", "2024-09-30 09:00"),
])
def test_a_bare_hour_with_its_period(text: str, clock: str) -> None:
    # before, the hour was not read and the date alone made a whole-day window: the time was dropped
    spec = nl_rubric.compile_item(text, NOW)
    assert isinstance(spec, nl_rubric.TimeWindow), spec
    described = nl_rubric.describe_spec(spec)
    assert clock in described and "00:00" not in described, described


def test_come_is_a_verb_not_part_of_the_value() -> None:
    spec = nl_rubric.compile_item("The spicy chicken has to come extra spicy", CHICKEN_EN)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["extra spicy"], spec


CHICKEN_EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Spicy House", (), "Sichuan", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Spicy Chicken", (), ("Mild Spicy", "Extra Spicy"), 38.0),),
)


def test_a_number_before_a_period_is_an_hour_only_after_a_word_of_time() -> None:
    spec = nl_rubric.compile_item("Book a table for 4 in the evening on September 30, 2024", NOW)
    assert spec is None or "16:00" not in nl_rubric.describe_spec(spec), spec  # a party of four, not 4 PM
