"""Round 9 of the reader (built on the build part only): the gold's products as evidence of which
reading of a value an item means."""

from __future__ import annotations

from dataclasses import replace

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

WASH = nl_rubric.ProductInfo("W1", "C1", "Car Wash (5 Seats)", ("Exterior", "Interior"), (), 39.0)
VOUCHER = nl_rubric.ProductInfo("W2", "C2", "Car Wash Voucher", ("Coupon",), (), 30.0)
WAX = nl_rubric.ProductInfo("W3", "C1", "Full Wax Polish", ("Polish",), (), 199.0)
CTX = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("C1", "Shine Auto Care", ("Car Wash",), "Car service", 4.5),
            nl_rubric.PlaceInfo("C2", "Quick Wash", ("Car Wash",), "Car service", 4.1)),
    products=(WASH, VOUCHER, WAX),
)
ITEM = "The ordered item from the car wash shop should be a car wash voucher"


def _phrases(ctx: nl_rubric.ItemContext) -> list[str]:
    spec = nl_rubric.compile_item(ITEM, ctx)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    return spec.phrases


def test_without_evidence_the_first_reading_the_catalogue_holds() -> None:
    assert _phrases(CTX) == ["car wash voucher"]


def test_the_reading_the_gold_spells_is_preferred() -> None:
    # the gold ordered the car wash itself: "voucher" is how the rubric calls what is sold, not another product
    assert _phrases(replace(CTX, evidence=(WASH,))) == ["car wash"]
    # the gold spelling the first reading keeps it
    assert _phrases(replace(CTX, evidence=(VOUCHER,))) == ["car wash voucher"]
    # a gold that spells no reading changes nothing (the item then contradicts it: the judge's)
    assert _phrases(replace(CTX, evidence=(WAX,))) == ["car wash voucher"]
