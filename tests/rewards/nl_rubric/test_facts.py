"""Place facts the catalogue states in tags (rewards/nl_rubric/facts.py): years in business ("In business for 8
years", "10-year-old established restaurant", "Opened in 2019", "20年老店") and spending per head ("Average 130 Yuan
Per Person", "人均130元"). Items about them were the judge's; where some place of the task states the fact they are
read, and a place that states none fails. A package's price per head, an exact or negated age, and "experience" stay
the judge's."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

OLD = nl_rubric.PlaceInfo("S1", "Charcoal Legend BBQ", ("BBQ", "In business for 12 years", "Average 130 Yuan Per Person"),
                          "Food", 4.6)
NEW = nl_rubric.PlaceInfo("S2", "Gold Medal BBQ", ("Korean BBQ", "Opened in 2023", "Average 160 Yuan Per Person"), "Food", 4.7)
BARE = nl_rubric.PlaceInfo("S3", "Old Beijing BBQ", ("Beijing Cuisine", "BBQ"), "Food", 4.4)
EN = nl_rubric.ItemContext(now=NOW, places=(OLD, NEW, BARE),
                           products=(nl_rubric.ProductInfo("P1", "S1", "BBQ Set for Two", (), (), 268.0),))
ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "炭火传奇烧烤", ("烧烤", "20年老店", "人均130元"), "美食", 4.6),
            nl_rubric.PlaceInfo("S2", "金牌烤肉", ("韩式烤肉", "开业3年", "人均160元"), "美食", 4.7)),
    products=(nl_rubric.ProductInfo("P1", "S1", "双人烧烤套餐", (), (), 268.0),),
)


def _holds(spec: object, place: nl_rubric.PlaceInfo) -> bool:
    return nl_rubric.spec_holds(spec, order([]), place)


@pytest.mark.parametrize("text, old, new", [
    ("The BBQ restaurant should have been in business for 3 years or more", True, False),  # 2023 to 2025: 2 years
    ("The restaurant should have been in business for at least 2 years", True, True),
    ("The ordered restaurant should be a 10+ year established restaurant", True, False),
    ("The restaurant ordered should be an established restaurant with over ten years of history", True, False),
    ("The BBQ restaurant's average cost per person should be 150 yuan or less", True, False),
    ("The average consumption at the BBQ restaurant should be less than or equal to 150 yuan", True, False),
    ("The restaurant's average spending per person should be at least 150 yuan", False, True),
])
def test_a_fact_the_tags_state_is_checked(text: str, old: bool, new: bool) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert isinstance(spec, nl_rubric.PlaceFactSpec), (text, spec)
    assert (_holds(spec, OLD), _holds(spec, NEW)) == (old, new), text
    assert not _holds(spec, BARE), text  # a place that states nothing: nothing shows it holds


@pytest.mark.parametrize("text, first, second", [
    ("餐厅应为经营10年以上的老店", True, False),
    ("餐厅应为10年以上老店", True, False),
    ("烧烤店人均消费应不超过150元", True, False),
])
def test_the_chinese_facts(text: str, first: bool, second: bool) -> None:
    spec = nl_rubric.compile_item(text, ZH)
    assert isinstance(spec, nl_rubric.PlaceFactSpec), (text, spec)
    assert (_holds(spec, ZH.places[0]), _holds(spec, ZH.places[1])) == (first, second), text


@pytest.mark.parametrize("text", [
    "The average consumption per person for the ordered package must not exceed 300 yuan",  # goods, per head
    "The restaurant should have been in business for 3 years",  # exactly 3, or at least?
    "The restaurant should not have been in business for more than 3 years",
    "The workshop should have more than 5 years of handicraft making experience",  # a staff's, perhaps
])
def test_what_is_no_stated_place_fact_stays_the_judges(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert not isinstance(spec, nl_rubric.PlaceFactSpec), (text, spec)


def test_a_fact_no_place_states_is_the_judges() -> None:
    ctx = nl_rubric.ItemContext(now=NOW, places=(BARE,), products=EN.products)
    assert nl_rubric.compile_item("The BBQ restaurant should have been in business for 3 years or more", ctx) is None
    assert nl_rubric.compile_item("The BBQ restaurant's average cost per person should be 150 yuan or less", ctx) is None


def test_the_spec_round_trips_through_json() -> None:
    spec = nl_rubric.compile_item("The BBQ restaurant should have been in business for 3 years or more", EN)
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec
    assert nl_rubric.spec_target(spec) == "place"
    assert "years in business >= 3" in nl_rubric.describe_spec(spec)


KIDS = nl_rubric.PlaceInfo("K1", "Wonder Park", ("Indoor Children's Playground", "3-12 Years Old"), "Entertainment", 4.6)
TEENS = nl_rubric.PlaceInfo("K2", "Children's Dreamland", ("Children's Playground", "6-12 Years Old"), "Entertainment", 4.5)
HALL = nl_rubric.PlaceInfo("H1", "YueJu Party House", ("Party", "Maximum Capacity 16 People"), "Entertainment", 4.4)
SMALL = nl_rubric.PlaceInfo("H2", "Mini Party Room", ("Party", "Maximum Capacity 8 People"), "Entertainment", 4.3)
PLAY = nl_rubric.ItemContext(now=NOW, places=(KIDS, TEENS, HALL, SMALL),
                             products=(nl_rubric.ProductInfo("P1", "K1", "Single Child Ticket", (), (), 68.0),))


def test_an_age_the_place_serves() -> None:
    """"suitable for a 5-year-old child": a playground for 3-12 year olds passes, one for 6-12 fails."""
    spec = nl_rubric.compile_item("The ticket ordered for the children's playground should be suitable for a 5-year-old child",
                                  PLAY)
    assert isinstance(spec, nl_rubric.PlaceFactSpec)
    assert _holds(spec, KIDS) and not _holds(spec, TEENS) and not _holds(spec, HALL)


def test_how_many_people_a_place_holds() -> None:
    spec = nl_rubric.compile_item("The party venue should accommodate 10 people", PLAY)
    assert isinstance(spec, nl_rubric.PlaceFactSpec)
    assert _holds(spec, HALL) and not _holds(spec, SMALL)
    # a set's size is the serving reader's, not the place's
    said = nl_rubric.compile_item("The party package should accommodate 10 people", PLAY)
    assert not isinstance(said, nl_rubric.PlaceFactSpec)
