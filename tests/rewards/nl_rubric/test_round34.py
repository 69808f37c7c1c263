"""Round 34 of the reader: a list said with commas of five or six things a package includes ("candlelight,
champagne, appetizer, main course and dessert": each of them); a place that "accepts" what its tags offer; what a
place provides "for infants" (who it is for is not what is provided); an English option with a second demand in
brackets ("Extra Spicy (large)": the option and the size, where the catalogue offers both; "(not Medium Spicy)": an
exclusion), where before the brackets were dropped whatever they held."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

DINNER = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Rose Bistro", ("Reservation Service", "High Chair"), "Western", 4.6),
            nl_rubric.PlaceInfo("S2", "Quick Grill", ("Takeaway",), "Western", 4.2)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Romantic Dinner for Two",
                                    ("Candlelight Dinner", "Champagne", "Appetizer, Main Course and Dessert"), (), 520.0),
              nl_rubric.ProductInfo("P2", "S1", "Candlelight Pasta Set", ("Candlelight", "Pasta", "Dessert"), (), 260.0),
              nl_rubric.ProductInfo("P3", "S2", "Grill Platter", ("Main Course",), (), 180.0)),
)


def _holds(ctx: nl_rubric.ItemContext, spec: object, pid: str, chosen: tuple[str, ...] = ()) -> bool:
    pr = next(p for p in ctx.products if p.product_id == pid)
    place = next(p for p in ctx.places if p.place_id == pr.place_id)
    line = nl_rubric.LineFacts(pid, pr.name, pr.tags, ", ".join(chosen), 1, pr.price, pr.options)
    return nl_rubric.spec_holds(spec, order([line]), place)


def test_a_long_comma_list_is_each_of_its_pieces() -> None:
    spec = nl_rubric.compile_item("The restaurant set meal should include candlelight, champagne, appetizer, main course "
                                  "and dessert", DINNER)
    assert spec is not None
    assert _holds(DINNER, spec, "P1")
    assert not _holds(DINNER, spec, "P2")  # no champagne, no appetizer
    assert not _holds(DINNER, spec, "P3")


@pytest.mark.parametrize("text", ["The restaurant should accept reservations",
                                  "The restaurant must provide high chairs for infants"])
def test_what_a_place_offers(text: str) -> None:
    spec = nl_rubric.compile_item(text, DINNER)
    assert spec is not None, text
    assert _holds(DINNER, spec, "P1") and not _holds(DINNER, spec, "P3")


CHICKEN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Spicy House", (), "Sichuan", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Spicy Chicken", (),
                                    ("Mild Spicy", "Medium Spicy", "Extra Spicy", "Regular", "Large"), 38.0),),
)


def test_a_second_demand_in_brackets_is_checked() -> None:
    spec = nl_rubric.compile_item("The spicy chicken should be Extra Spicy (large)", CHICKEN)
    assert spec is not None
    assert _holds(CHICKEN, spec, "P1", ("Extra Spicy", "Large"))
    assert not _holds(CHICKEN, spec, "P1", ("Extra Spicy", "Regular"))  # the size was dropped before
    assert not _holds(CHICKEN, spec, "P1", ("Medium Spicy", "Large"))


def test_an_exclusion_in_brackets() -> None:
    spec = nl_rubric.compile_item("The spicy chicken should be Extra Spicy (not Medium Spicy)", CHICKEN)
    assert spec is not None
    assert "medium spicy)" not in nl_rubric.describe_spec(spec)  # the bracket no longer in a phrase
    assert _holds(CHICKEN, spec, "P1", ("Extra Spicy",))
    assert not _holds(CHICKEN, spec, "P1", ("Medium Spicy",))


KARTS = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Speed Karting", (), "Sports", 4.6),
            nl_rubric.PlaceInfo("S2", "Blue Rose Flowers", ("Flower shop", "Reservation service"), "Shop", 4.5),
            nl_rubric.PlaceInfo("S3", "Flower Field", ("Flower shop", "Closed on Saturdays"), "Shop", 4.6)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Two-Person Kart Package", ("Safety Equipment",), (), 268.0),
              nl_rubric.ProductInfo("P2", "S1", "Kart Package (Weekday Limited)", ("Two-Person",), (), 198.0),
              nl_rubric.ProductInfo("P3", "S1", "Team Kart Race", ("Not Available on Weekends",), (), 498.0),
              nl_rubric.ProductInfo("P4", "S1", "Holiday Kart Party", ("Weekend Only",), (), 598.0),
              nl_rubric.ProductInfo("P5", "S1", "Night Kart", ("Not Available on Holidays",), (), 158.0),
              nl_rubric.ProductInfo("P6", "S2", "Blue Rose Bouquet", (), (), 199.0),
              nl_rubric.ProductInfo("P7", "S3", "Rose Bouquet", (), (), 189.0)),
)


@pytest.mark.parametrize("text, usable, unusable", [
    ("The go-kart product ordered should be available on weekends", ["P1", "P4"], ["P2", "P3"]),
    ("The go-kart order should be usable on weekdays", ["P1", "P2", "P3"], ["P4"]),
    # 2024-06-10 was a Monday, and the Dragon Boat Festival: a holiday on a weekday
    ("The kart order should be usable on June 10, 2024 (Dragon Boat Festival)", ["P1", "P2", "P4"], ["P5"]),
    ("The kart order must be valid for use on July 20, 2025 (Sunday)", ["P1", "P5"], ["P2", "P3"]),
])
def test_the_days_a_product_can_be_used(text: str, usable: list[str], unusable: list[str]) -> None:
    spec = nl_rubric.compile_item(text, KARTS)
    assert isinstance(spec, nl_rubric.DaysSpec), (text, spec)
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec  # the sidecar form round-trips
    for pid in usable:
        assert _holds(KARTS, spec, pid), (text, pid)
    for pid in unusable:
        assert not _holds(KARTS, spec, pid), (text, pid)


def test_days_joined_by_and_are_all_of_them() -> None:
    spec = nl_rubric.compile_item("The go-kart product should be available on weekdays and weekends", KARTS)
    assert isinstance(spec, nl_rubric.DaysSpec), spec
    assert _holds(KARTS, spec, "P1") and _holds(KARTS, spec, "P5")
    for pid in ("P2", "P3", "P4"):  # weekdays only, not at weekends, weekends only
        assert not _holds(KARTS, spec, pid), pid
    both = nl_rubric.compile_item("The go-kart product should be available on Saturdays and Sundays", KARTS)
    assert isinstance(both, nl_rubric.DaysSpec) and set(both.days) == {"saturday", "sunday", "weekend"}, both


def test_the_days_a_place_is_open() -> None:
    spec = nl_rubric.compile_item("The flower shop should be open on Saturdays", KARTS)
    assert isinstance(spec, nl_rubric.DaysSpec) and spec.scope == "place"
    assert _holds(KARTS, spec, "P6") and not _holds(KARTS, spec, "P7")


ZH_KARTS = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "极速卡丁车", (), "运动", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "双人卡丁车体验", (), (), 268.0),
              nl_rubric.ProductInfo("P2", "S1", "卡丁车畅玩（仅限工作日）", (), (), 198.0),
              nl_rubric.ProductInfo("P3", "S1", "团队赛", ("周末不可用",), (), 498.0)),
)


def test_the_days_said_in_chinese() -> None:
    spec = nl_rubric.compile_item("卡丁车套餐应周末可用", ZH_KARTS)
    assert isinstance(spec, nl_rubric.DaysSpec), spec
    assert _holds(ZH_KARTS, spec, "P1") and not _holds(ZH_KARTS, spec, "P2") and not _holds(ZH_KARTS, spec, "P3")


@pytest.mark.parametrize("text", [
    "The go-kart product should not be available on weekends",  # a negated demand
    "The go-kart product should be available on weekdays or weekends",  # either, left open
])
def test_days_left_to_the_judge(text: str) -> None:
    assert nl_rubric.compile_item(text, KARTS) is None


def test_days_nobody_speaks_of_are_the_judges() -> None:
    assert nl_rubric.compile_item("The ordered item should be available on weekends", DINNER) is None


BAR = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Blue Note Bar", (), "Bar", 4.6),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Mojito", ("Classic Cocktail",), (), 58.0),
              nl_rubric.ProductInfo("P2", "S1", "Tequila Sunrise", ("Cocktail",), (), 62.0),
              nl_rubric.ProductInfo("P3", "S1", "Craft Beer", ("Beer",), (), 38.0)),
)


def test_different_products_of_a_kind() -> None:
    spec = nl_rubric.compile_item("The bar order should include two different cocktails", BAR)
    assert isinstance(spec, nl_rubric.CountSpec) and spec.distinct and spec.value == 2, spec

    def holds(*pids: str) -> bool:
        lines = [nl_rubric.LineFacts(p.product_id, p.name, p.tags, "", 1, p.price, ())
                 for p in BAR.products if p.product_id in pids]
        return nl_rubric.spec_holds(spec, order(lines), BAR.places[0])

    assert holds("P1", "P2") and holds("P1", "P2", "P3")
    assert not holds("P1", "P3")  # a beer is no cocktail


@pytest.mark.parametrize("text", [
    "The restaurant order must include two different single-person meals",  # servings, not a kind
    "The milk tea order needs to include two different flavors of products, with 5 cups of each",
])
def test_different_products_left_to_the_judge(text: str) -> None:
    assert nl_rubric.compile_item(text, BAR) is None
