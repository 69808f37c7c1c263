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


def test_a_second_requirement_in_the_reasoning_stays_the_judges() -> None:
    # the requirement before the report is no look-up: the item asks two things, one of them in its reasoning
    text = (f"The car wash should be Sparkle Auto, and the result is yes, so the car wash shop should be within "
            f"1000m (inclusive) of {OFFICE}")
    assert nl_rubric.compile_item(text, TOWN) is None
