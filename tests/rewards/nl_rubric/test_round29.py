"""Round 29 of the reader: a place described by a demand of its own ("from a merchant rated 4.5 or above", "from
a merchant that supports dine-in", "from a highly rated merchant", "at the nearest merchant") is no longer taken
for where the record was made and dropped. What it offers is read as the place's feature ("X should be ordered
from a merchant that supports dine-in" is "X's merchant offers dine-in"); any other description is the judge's.
Before, each of these read as the product alone, so an order from any merchant passed."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Harbor Noodle House", ("Dine-in Available",), "Food", 4.5),
            nl_rubric.PlaceInfo("S2", "Quick Noodle Stall", (), "Food", 3.9)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Beef Noodles", (), (), 28.0),
              nl_rubric.ProductInfo("P2", "S2", "Beef Noodles", (), (), 22.0)),
)


def _said(text: str) -> str | None:
    spec = nl_rubric.compile_item(text, EN)
    return None if spec is None else nl_rubric.describe_spec(spec)


@pytest.mark.parametrize("text", [
    "The beef noodles should be ordered from a merchant that supports dine-in",
    "The beef noodles should be ordered from a merchant with dine-in",
    "The beef noodles should be ordered from restaurants offering dine-in",
    "Select the beef noodles from a merchant that offers dine-in",
])
def test_a_merchant_described_by_what_it_offers_is_checked(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is not None, text
    line = nl_rubric.LineFacts("P1", "Beef Noodles", (), "", 1, 28.0, ())
    assert nl_rubric.spec_holds(spec, order([line]), EN.places[0]), text
    assert not nl_rubric.spec_holds(spec, order([line]), EN.places[1]), text  # the stall offers no dine-in


@pytest.mark.parametrize("text", [
    "The beef noodles should be ordered from a merchant rated 4.5 or above",
    "The beef noodles should be ordered from a merchant within 3 km",
    "The beef noodles should be ordered from a highly rated merchant",
    "The beef noodles should be bought at a merchant whose rating is above 4.5",
    "The beef noodles should be ordered at the nearest merchant",
    "Order the beef noodles from a merchant rated 4.5 or above",
    "Order the beef noodles from merchants within 3 km",
])
def test_a_merchant_described_otherwise_is_not_dropped(text: str) -> None:
    said = _said(text)
    assert said is None or "place" in said or "rating" in said or "within" in said, (text, said)


def test_a_place_said_only_as_where_still_grounds_the_product() -> None:
    plain = _said("The beef noodles should be ordered")
    assert plain is not None and _said("The beef noodles should be ordered from the noodle shop") == plain
    assert _said("Choose the beef noodles at the noodle shop") is not None
