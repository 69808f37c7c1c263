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


def line(pid: str, name: str, tags: tuple[str, ...] = (), attributes: str = "",
         options: tuple[str, ...] = ()) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, attributes, 1, 30.0, options)


def order(*lines: nl_rubric.LineFacts) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts("orders", "o", "N1", lines=lines)


NOODLES = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("N1", "Crab Noodle House", ("Noodles",), "", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "N1", "Crab Roe Mixed Noodles", ("Non-spicy",), (), 38.0),
              nl_rubric.ProductInfo("P2", "N1", "Crab Roe Noodles (Mildly Spicy)", (), (), 36.0),
              nl_rubric.ProductInfo("P3", "N1", "Crab Roe Noodles (Very Spicy)", (), (), 36.0),
              nl_rubric.ProductInfo("P4", "N1", "Deluxe Beef and Crispy Pork Rice", ("Braised Rice",), (), 42.0),
              nl_rubric.ProductInfo("P5", "N1", "Crispy Pork Rice", ("Braised Rice",), (), 32.0),
              nl_rubric.ProductInfo("P6", "N1", "牛肉沙拉", (), ("蜂蜜芥末酱", "不需要酱汁"), 40.0)),
)


def test_options_in_english_are_the_products_to_choose_from() -> None:
    spec = nl_rubric.compile_item("When choosing crab roe noodles, choose mildly spicy or non-spicy options", NOODLES)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["mildly spicy", "non-spicy"]
    holds = lambda ln: nl_rubric.spec_holds(spec, order(ln), NOODLES.place("N1"))  # noqa: E731
    assert holds(line("P1", "Crab Roe Mixed Noodles", ("Non-spicy",)))
    assert not holds(line("P3", "Crab Roe Noodles (Very Spicy)"))


def test_toppings_are_what_the_product_has() -> None:
    for text in ("The lunch braised rice must include both crispy pork and beef as toppings",
                 "The lunch braised rice must include both crispy pork and beef toppings"):
        spec = nl_rubric.compile_item(text, NOODLES)
        holds = lambda ln, spec=spec: nl_rubric.spec_holds(spec, order(ln), NOODLES.place("N1"))  # noqa: E731
        assert holds(line("P4", "Deluxe Beef and Crispy Pork Rice")), text
        assert not holds(line("P5", "Crispy Pork Rice")), text


def test_an_ingredient_left_out_in_the_menus_words() -> None:
    spec = nl_rubric.compile_item("沙拉订单应选择不加酱汁的商品属性", NOODLES)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["不需要酱汁"]
    holds = lambda ln: nl_rubric.spec_holds(spec, order(ln), NOODLES.place("N1"))  # noqa: E731
    sauces = ("蜂蜜芥末酱", "不需要酱汁")
    assert holds(line("P6", "牛肉沙拉", (), "不需要酱汁", sauces))
    assert not holds(line("P6", "牛肉沙拉", (), "蜂蜜芥末酱", sauces))


COFFEE = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("K1", "Bean Corner", ("Coffee",), "", 4.6),),
    products=(nl_rubric.ProductInfo("F1", "K1", "Golden Roast Flat White", (), ("Hot", "Iced"), 28.0),
              nl_rubric.ProductInfo("F2", "K1", "Dark Roast Flat White (Rich)", (), (), 30.0),
              nl_rubric.ProductInfo("F3", "K1", "金烘澳白", (), (), 28.0),
              nl_rubric.ProductInfo("F4", "K1", "深烘澳白（醇厚）", (), (), 30.0),
              nl_rubric.ProductInfo("C1", "K1", "White Cut Qingyuan Chicken (Half)", (), (), 58.0),
              nl_rubric.ProductInfo("C2", "K1", "Radish and Beef Brisket Stew", (), (), 48.0),
              nl_rubric.ProductInfo("C3", "K1", "Boat Congee", (), (), 18.0)),
)


def _holds(spec: object, *lines: nl_rubric.LineFacts) -> bool:
    return nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", "K1", lines=lines), COFFEE.place("K1"))


def test_a_value_to_avoid_said_in_the_passive_or_without_a_verb() -> None:
    for text in ("When selecting flat white coffee, dark roast types such as Dark Roast Flat White should be avoided",
                 "选择馥芮白咖啡时应避免深烘类型，如深烘澳白等"):
        spec = nl_rubric.compile_item(text, COFFEE)
        assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated, text
        dark = line("F2", "Dark Roast Flat White (Rich)") if text.isascii() else line("F4", "深烘澳白（醇厚）")
        golden = line("F1", "Golden Roast Flat White") if text.isascii() else line("F3", "金烘澳白")
        assert _holds(spec, golden) and not _holds(spec, dark), text


def test_an_english_list_with_commas_is_each_of_its_parts() -> None:
    for text in ("The group meal order must include White Cut Chicken, Beef Brisket Stew, and congee",
                 "The group meal order must include White Cut Chicken, Beef Brisket Stew and congee"):
        spec = nl_rubric.compile_item(text, COFFEE)
        chicken, stew, congee = (line("C1", "White Cut Qingyuan Chicken (Half)"),
                                 line("C2", "Radish and Beef Brisket Stew"), line("C3", "Boat Congee"))
        assert _holds(spec, chicken, stew, congee), text
        assert not _holds(spec, chicken, stew), text


DRINKS = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("D1", "Tea Time", ("Drinks",), "", 4.6),),
    products=(nl_rubric.ProductInfo("L1", "D1", "Iced Latte", ("Coffee",), (), 22.0),
              nl_rubric.ProductInfo("L2", "D1", "Jasmine Milk Tea", ("Tea",), (), 16.0)),
)


def test_what_may_also_be_chosen_and_an_etc_end_nothing() -> None:
    for text in ("Beverage orders should not include coffee, other beverages like tea, juice, etc. can be selected",
                 "The beverage order should not include coffee, but can include other beverages such as tea, juice, etc."):
        spec = nl_rubric.compile_item(text, DRINKS)
        assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["coffee"], text
        place = DRINKS.place("D1")
        assert nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", "D1", lines=(line("L2", "Jasmine Milk Tea", ("Tea",)),)), place)
        assert not nl_rubric.spec_holds(spec, nl_rubric.RecordFacts("orders", "o", "D1", lines=(line("L1", "Iced Latte", ("Coffee",)),)), place)


HOTPOT = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("H1", "Red Pot", ("Hot pot",), "", 4.6),),
    products=(nl_rubric.ProductInfo("M1", "H1", "Beef Tripe Set Meal for 2-3 People", (), (), 168.0),
              nl_rubric.ProductInfo("M2", "H1", "Single Person Beef Set", (), (), 58.0),
              nl_rubric.ProductInfo("M3", "H1", "毛肚6荤6素2-3人套餐", (), (), 168.0),
              nl_rubric.ProductInfo("M4", "H1", "单人肥牛套餐", (), (), 58.0)),
)


def test_a_set_suitable_for_n_people_is_a_serving_size() -> None:
    for text, big, small in (
            ("The hot pot order should select a set meal suitable for 2-3 people",
             ("M1", "Beef Tripe Set Meal for 2-3 People"), ("M2", "Single Person Beef Set")),
            ("火锅订单应选择适合2-3人分量的套餐商品", ("M3", "毛肚6荤6素2-3人套餐"), ("M4", "单人肥牛套餐"))):
        spec = nl_rubric.compile_item(text, HOTPOT)
        assert isinstance(spec, nl_rubric.FeatureSpec), text
        holds = lambda ln, spec=spec: nl_rubric.spec_holds(  # noqa: E731
            spec, nl_rubric.RecordFacts("orders", "o", "H1", lines=(ln,)), HOTPOT.place("H1"))
        assert holds(line(*big)) and not holds(line(*small)), text


def test_a_reference_place_said_by_its_name_or_with_its_city_first() -> None:
    ctx = replace(HOTPOT, addresses=(("Mixc Shopping Center, 136 Minzu Avenue, Qingxiu District, Nanning", 108.36, 22.81),
                                     ("South Railway Station", 104.07, 30.61)))
    for text, lon in (("The restaurant must be located within 3km of Mixc Shopping Center", 108.36),
                      ("The hot pot restaurant should be within 2km (inclusive) of Chengdu Wuhou District South "
                       "Railway Station", 104.07)):
        spec = nl_rubric.compile_item(text, ctx)
        assert isinstance(spec, nl_rubric.DistanceSpec) and spec.longitude == lon, text
    # a reference no entry is: the judge's
    assert nl_rubric.compile_item("The restaurant must be located within 3km of Grand Plaza Tower", ctx) is None
