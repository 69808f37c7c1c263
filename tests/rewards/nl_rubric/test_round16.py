"""Round 16 of the reader: English items said at more length (a leading purpose, "enough to feed N",
"meat-free", "X should be the main ingredient of Y", "chosen rather than", "a warm one"), with the
guards the build part's readings showed ("must serve Jiangsu cuisine" is no head count)."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Claypot House", ("Jiangsu and Zhejiang Cuisine",), "Food", 4.4),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Chicken Claypot Rice", (), (), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "Vegetable Soup Dumplings", (), (), 12.0),
              nl_rubric.ProductInfo("P3", "S1", "Pork Soup Dumplings", (), (), 14.0),
              nl_rubric.ProductInfo("P4", "S1", "Lemon Tea", (), ("Hot", "Warm", "Cold"), 10.0),
              nl_rubric.ProductInfo("P5", "S1", "Feast for 5 People", (), (), 298.0)),
)


def test_a_leading_purpose_and_the_main_ingredient_of_a_dish() -> None:
    spec = nl_rubric.compile_item("To meet the non-vegetarian requirement, chicken should be the main ingredient of the "
                                  "claypot dish", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and (spec.phrases, spec.concepts) in ((["chicken"], []), ([], ["chicken"])) and not spec.negated


def test_meat_free_excludes_meat() -> None:
    spec = nl_rubric.compile_item("The soup dumplings must be meat-free", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["meat"]


@pytest.mark.parametrize("text", ["The feast should be enough to feed five people", "The feast should serve 5 people"])
def test_enough_to_feed_n_people(text: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.op, spec.value) == ("servings", ">=", 5)


def test_what_a_place_serves_is_no_head_count() -> None:
    spec = nl_rubric.compile_item("The restaurant must serve Jiangsu and Zhejiang Cuisine", CTX)
    assert not isinstance(spec, nl_rubric.CountSpec)


def test_chosen_rather_than_and_a_warm_one() -> None:
    spec = nl_rubric.compile_item("Hot drinks must be chosen rather than cold ones", CTX)
    assert spec is not None and "hot" in nl_rubric.describe_spec(spec).casefold()
    spec = nl_rubric.compile_item("The beverage should be a warm one", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and "warm" in spec.phrases


def test_a_leading_considering_clause_an_inclusive_bound_after_a_comma_and_made_with() -> None:
    spec = nl_rubric.compile_item("Considering the user's budget, the restaurant order price should be within 60 yuan", CTX)
    assert isinstance(spec, nl_rubric.PriceSpec) and spec.high == 60
    spec = nl_rubric.compile_item("The claypot rice order should cost no more than 30 yuan, including 30 yuan", CTX)
    assert isinstance(spec, nl_rubric.PriceSpec) and spec.high == 30 and not spec.high_strict
    spec = nl_rubric.compile_item("The claypot rice should be made with chicken", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and (spec.phrases, spec.concepts) in ((["chicken"], []), ([], ["chicken"]))


def test_a_number_in_the_name_of_a_passive_value_is_no_count() -> None:
    """"The 2 Hour Pottery Class should be purchased for the party": the class, not 2 of something (the
    article is kept, so the number never leads the value); the value's words still tell which record the
    item is about."""
    classes = nl_rubric.ItemContext(now=NOW, places=CTX.places, products=CTX.products + (
        nl_rubric.ProductInfo("G1", "S1", "2 Hour Pottery Class", (), (), 200.0),
        nl_rubric.ProductInfo("G2", "S1", "1 Hour Pottery Class", (), (), 120.0)))
    for text in ("The 2 Hour Pottery Class should be purchased for the party", "The 2 Hour Pottery Class should be purchased"):
        spec = nl_rubric.compile_item(text, classes)
        assert isinstance(spec, nl_rubric.FeatureSpec), (text, spec)
        assert "pottery class" in spec.about, text
