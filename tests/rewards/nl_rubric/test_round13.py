"""Round 13 of the reader: English phrasings found by rewriting the build part's read items in other
natural words: the value as the subject of a passive ("X should be selected for the Y", "X must be
included in / must not be in the Y"), "none of" / "no item" negating the demand, "there should be N
items", "as well as", ", with the 'X' attribute", "reserved for N people", "booked as the X shop",
"dairy-free"."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW


def line(pid: str, name: str, tags: tuple[str, ...] = (), chosen: str = "", offers: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, chosen, 1, 30.0, offers)


def holds(spec: object, ctx: nl_rubric.ItemContext, place: str, *lines: nl_rubric.LineFacts) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", place, lines=lines), ctx.place(place))


CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("S1", "Snack Corner", ("Snacks", "Free Parking"), "Food", 4.4),
                     nl_rubric.PlaceInfo("S2", "Northeastern BBQ", ("BBQ",), "Restaurant", 4.6),
                     nl_rubric.PlaceInfo("S3", "Clay Studio", ("Pottery",), "Workshop", 4.7)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Boneless Chicken Feet", ("Lemon",), (), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "Spicy Chicken Feet", ("Spicy",), (), 26.0),
              nl_rubric.ProductInfo("P3", "S1", "Gardenia Milk Tea", (), ("Hot", "Cold"), 16.0),
              nl_rubric.ProductInfo("P4", "S1", "Jasmine Milk Tea", (), ("Hot", "Cold"), 15.0),
              nl_rubric.ProductInfo("P5", "S1", "Americano", (), ("No Milk", "Single Milk"), 18.0),
              nl_rubric.ProductInfo("P6", "S1", "Rice", (), (), 2.0),
              nl_rubric.ProductInfo("P7", "S3", "Pottery Class for Two", (), (), 198.0)),
)


@pytest.mark.parametrize("text", [
    "Boneless chicken feet should be selected for the night snack",
    "Boneless Chicken Feet must be included in the snack order",
    "Boneless Chicken Feet must all be in the snack order",
])
def test_the_value_as_the_subject_of_a_passive_of_choosing(text: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and not spec.negated, text
    assert holds(spec, CTX, "S1", line("P1", "Boneless Chicken Feet", ("Lemon",)))
    assert not holds(spec, CTX, "S1", line("P2", "Spicy Chicken Feet", ("Spicy",)))


def test_a_passive_of_avoiding_negates_and_a_pronoun_or_an_order_stays_the_subject() -> None:
    spec = nl_rubric.compile_item("Spicy chicken feet should be avoided in the night snack", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated
    # "the order should be placed / selected for ...": the order is no value
    spec = nl_rubric.compile_item("The snack order should be selected for the night", CTX)
    assert not (isinstance(spec, nl_rubric.FeatureSpec) and "snack order" in spec.phrases)


def test_none_of_or_no_item_negates_the_demand() -> None:
    for text in ("None of the milk teas should be Gardenia flavored", "No product in the milk tea order should be Gardenia flavored"):
        spec = nl_rubric.compile_item(text, CTX)
        assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated, text
        assert not holds(spec, CTX, "S1", line("P3", "Gardenia Milk Tea"))
        assert holds(spec, CTX, "S1", line("P4", "Jasmine Milk Tea"))
    # "No Ice should be selected" names a value, not a negation
    ice = nl_rubric.ItemContext(now=NOW, places=CTX.places, products=(
        nl_rubric.ProductInfo("D1", "S1", "Lemon Tea", (), ("No Ice", "Less Ice"), 12.0),))
    spec = nl_rubric.compile_item("No Ice should be selected for the beverage", ice)
    assert isinstance(spec, nl_rubric.FeatureSpec) and not spec.negated and spec.phrases == ["no ice"]


def test_counts_said_with_there_or_as_a_passive() -> None:
    for text in ("There should be 2 products in the snack order", "A total of 2 items should be ordered for the team",
                 "The snack order should contain 2 items in total"):
        spec = nl_rubric.compile_item(text, CTX)
        assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.value) == ("items", 2), text


def test_as_well_as_and_a_trailing_with() -> None:
    spec = nl_rubric.compile_item("The dinner order must contain Boneless Chicken Feet as well as Rice", CTX)
    assert isinstance(spec, nl_rubric.AllOf) and len(spec.parts) == 2
    spec = nl_rubric.compile_item("The coffee should be dairy-free, with the 'no milk' attribute", CTX)
    assert isinstance(spec, nl_rubric.AllOf)
    assert all("'" not in phrase for part in spec.parts for phrase in part.phrases)  # no stray quote
    assert holds(spec, CTX, "S1", line("P5", "Americano", (), "No Milk", ("No Milk", "Single Milk")))
    assert not holds(spec, CTX, "S1", line("P5", "Americano", (), "Single Milk", ("No Milk", "Single Milk")))


def test_a_place_booked_for_n_people_or_booked_as_the_kind_of_place() -> None:
    spec = nl_rubric.compile_item("The workshop should be reserved for 2 people", CTX)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.value) == ("people", 2)
    spec = nl_rubric.compile_item("Northeastern BBQ should be booked as the BBQ restaurant", CTX)
    assert isinstance(spec, nl_rubric.StoreSpec) and spec.place_ids == ["S2"]


def test_booked_available_at_and_ordered_from_a_described_place() -> None:
    studio = nl_rubric.compile_item("Clay Studio should be reserved", CTX)
    assert isinstance(studio, nl_rubric.StoreSpec) and studio.place_ids == ["S3"]
    spec = nl_rubric.compile_item("A Pottery Class for Two should be ordered from the workshop", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["pottery class for two"]
    spec = nl_rubric.compile_item("Free parking must be available at the snack bar", CTX)
    assert spec is not None and "free parking" in nl_rubric.describe_spec(spec).casefold()


def test_how_a_value_comes_is_not_a_passive_of_choosing() -> None:
    # "in a gift box", "in meal set form", "selected with hot": how it comes, never "the Y includes X"
    for text in ("The ordered Boneless Chicken Feet should be in a gift box", "The ordered items must be in meal set form"):
        spec = nl_rubric.compile_item(text, CTX)
        assert spec is None or "boneless chicken feet" not in nl_rubric.describe_spec(spec).casefold(), text
    spec = nl_rubric.compile_item("The Gardenia Milk Tea ordered from Snack Corner should be selected with the Hot option", CTX)
    assert spec is not None and "hot" in nl_rubric.describe_spec(spec).casefold()


def test_a_negation_after_the_time_does_not_unread_the_window() -> None:
    win = nl_rubric.compile_time_item("The order should be delivered before 8:00 PM on May 27, 2025, but not too early", NOW)
    assert win is not None and win.latest is not None and win.earliest is None
