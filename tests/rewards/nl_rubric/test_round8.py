"""Round 8 of the reader (general kinds, built on the build part only): a lower bound on the people
an order serves, a short phrase spelled by a product's name and tags together, drinks and snacks as
classes a set's contents spell, and a taught unit said as a course, a lesson or a session."""

from __future__ import annotations

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric.quantity import line_serves
from tests.rewards.nl_rubric.worlds import NOW, TOOLS


def line(pid: str, name: str, tags: tuple[str, ...] = (), qty: int = 1) -> nl_rubric.LineFacts:
    return nl_rubric.LineFacts(pid, name, tags, "", qty, 100.0, ())


def order(*lines: nl_rubric.LineFacts) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts("orders", "o", "T1", lines=lines)


CTX = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("T1", "Blue Note Bar", ("Live Music",), "Bar", 4.5),
                     nl_rubric.PlaceInfo("T2", "Lotus Studio", ("Calligraphy",), "Training", 4.6)),
    products=(nl_rubric.ProductInfo("S1", "T1", "Specialty Set for Three", ("Specialty Cocktail", "Snack Set"), (), 300.0),
              nl_rubric.ProductInfo("S2", "T1", "Special Mojito", ("Classic Cocktail", "Single Person"), (), 68.0),
              nl_rubric.ProductInfo("S3", "T1", "Romantic Movie Package", ("Sugar-free popcorn", "Coconut water"), (), 199.0),
              nl_rubric.ProductInfo("S4", "T1", "Quiet Room Package", ("Private room", "3-hour duration"), (), 150.0),
              nl_rubric.ProductInfo("S5", "T2", "Calligraphy Starter Package", ("Experience Class", "One-on-One"), (), 99.0),
              nl_rubric.ProductInfo("S6", "T2", "Calligraphy Ten-Week Package", ("Regular Class",), (), 899.0),
              nl_rubric.ProductInfo("S7", "T1", "Classic Set for Two", (), (), 200.0),
              nl_rubric.ProductInfo("S8", "T1", "Single Person Set", (), (), 110.0)),
    tools=TOOLS)


def test_line_serves_reads_names_and_tags() -> None:
    assert line_serves(line("a", "Thai Classic Set for Two (2 Milk Teas)")) == 2
    assert line_serves(line("a", "Premium Package (Suitable for 5-6 People)")) == 6  # a range: its upper end
    assert line_serves(line("a", "Zongzi Family Package (2 adults 1 child)")) == 3
    assert line_serves(line("a", "Single Set", ("Three-Person Portion",))) == 3
    assert line_serves(line("a", "双人套餐")) == 2 and line_serves(line("a", "4人餐")) == 4
    # durations and counts of other things are no servings; silence is one person
    assert line_serves(line("a", "Aerial yoga trial course (120 minutes)", ("for 2 hours",))) == 1


def test_enough_for_n_people_is_a_lower_bound_that_counts_quantities() -> None:
    spec = nl_rubric.compile_item("The bar order should be enough for two people", CTX)
    assert isinstance(spec, nl_rubric.CountSpec) and (spec.what, spec.op, spec.value) == ("servings", ">=", 2)
    holds = lambda *ls: nl_rubric.spec_holds(spec, order(*ls), CTX.place("T1"))  # noqa: E731
    assert holds(line("S7", "Classic Set for Two"))
    assert holds(line("S1", "Specialty Set for Three", ("Specialty Cocktail",)))  # more is enough
    assert holds(line("S8", "Single Person Set", qty=2))  # two single sets serve two
    assert not holds(line("S8", "Single Person Set"))
    assert not nl_rubric.spec_holds(spec, order(), CTX.place("T1"))  # nothing ordered serves nobody
    six = nl_rubric.compile_item("The portion of the bar order should be suitable for 4 adults and 2 children", CTX)
    assert isinstance(six, nl_rubric.CountSpec) and six.value == 6
    zh = nl_rubric.compile_item("下单的小吃分量应该够两个人吃", CTX)
    assert isinstance(zh, nl_rubric.CountSpec) and (zh.what, zh.value) == ("servings", 2)
    # who is no number of people: not this kind (a feature the catalogue may hold, or the judge's)
    child = nl_rubric.compile_item("The ticket should be suitable for a 5-year-old child", CTX)
    assert not (isinstance(child, nl_rubric.CountSpec) and child.what == "servings")
    # negated: not one reading
    assert not isinstance(nl_rubric.compile_item("The bar order should not be enough for two people", CTX),
                          nl_rubric.CountSpec)


def test_a_short_phrase_spelled_by_name_and_tags_together() -> None:
    spec = nl_rubric.compile_item("The bar set order should be a cocktail set", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.phrases == ["cocktail set"]
    holds = lambda *ls: nl_rubric.spec_holds(spec, order(*ls), CTX.place("T1"))  # noqa: E731
    assert holds(line("S1", "Specialty Set for Three", ("Specialty Cocktail", "Snack Set")))
    assert not holds(line("S2", "Special Mojito", ("Classic Cocktail", "Single Person")))  # a cocktail, no set
    # a long phrase is a name, which one field must spell: words scattered over the tags are not it
    assert not nl_rubric.phrase_in("specialty snack cocktail set for three", "Specialty Set for Three")


def test_drinks_and_snacks_are_classes_a_set_spells() -> None:
    for text, good, bad in (("The package ordered should include drinks", ("Coconut water",), ("Private room",)),
                            ("The package ordered should include snacks", ("Sugar-free popcorn",), ("Private room",))):
        spec = nl_rubric.compile_item(text, CTX)
        assert isinstance(spec, nl_rubric.FeatureSpec) and spec.concepts, text
        assert nl_rubric.spec_holds(spec, order(line("S3", "Romantic Movie Package", good)), None)
        assert not nl_rubric.spec_holds(spec, order(line("S4", "Quiet Room Package", bad)), None)
    # a tea house is no drink, "tea egg" no tea
    drink = nl_rubric.compile_item("The package ordered should include drinks", CTX)
    assert not nl_rubric.spec_holds(drink, order(line("x", "Tea Egg Set", ("Tea house special",))), None)


def test_a_course_a_lesson_and_a_session_are_a_class() -> None:
    assert nl_rubric.phrase_in("experience course", "Experience Class")
    assert nl_rubric.phrase_in("single session", "Single class")
    assert nl_rubric.phrase_in("private lessons", "Private Class")
    spec = nl_rubric.compile_item("The calligraphy package must be an experience course package", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec)
    assert nl_rubric.spec_holds(spec, order(line("S5", "Calligraphy Starter Package", ("Experience Class",))), None)
    assert not nl_rubric.spec_holds(spec, order(line("S6", "Calligraphy Ten-Week Package", ("Regular Class",))), None)


SALON = nl_rubric.ItemContext(
    now=NOW, places=(nl_rubric.PlaceInfo("N1", "Elegant Nails", ("Nail Art",), "Beauty", 4.6),
                     nl_rubric.PlaceInfo("N2", "Fingertip Studio", ("Nail Art", "Eyelash"), "Beauty", 4.4),
                     nl_rubric.PlaceInfo("B1", "Crown Bathhouse", ("Bathhouse", "Sauna"), "Leisure", 4.5),
                     nl_rubric.PlaceInfo("J1", "Sakura", ("Japanese Restaurant",), "Dining", 4.7)),
    products=(nl_rubric.ProductInfo("P1", "N1", "Classic Manicure Set", (), (), 99.0),
              nl_rubric.ProductInfo("P2", "N1", "Eyelash Extension Set", (), (), 129.0),
              nl_rubric.ProductInfo("P3", "N2", "Eyelash Extension Set", (), (), 119.0),
              nl_rubric.ProductInfo("P4", "B1", "Sauna Pass", (), (), 388.0),
              nl_rubric.ProductInfo("P5", "J1", "Sashimi Set for One", (), (), 138.0)),
    tools=TOOLS)


def rec(rid: str, place: str, *lines: nl_rubric.LineFacts) -> tuple[nl_rubric.RecordFacts, nl_rubric.PlaceInfo | None]:
    total = sum(x.price * x.quantity for x in lines)
    return nl_rubric.RecordFacts("orders", rid, place, lines=lines, total=total), SALON.place(place)


def test_goods_from_the_same_place_read_every_order_of_the_episode() -> None:
    spec = nl_rubric.compile_item("The manicure set and eyelash extension set should come from the same nail salon", SALON)
    assert isinstance(spec, nl_rubric.JointSpec) and spec.what == "same_place"
    assert spec.members == [["manicure set"], ["eyelash extension set"]]
    assert nl_rubric.spec_target(spec) == "episode"
    mani, lash1, lash2 = line("P1", "Classic Manicure Set"), line("P2", "Eyelash Extension Set"), line("P3", "Eyelash Extension Set")
    assert nl_rubric.joint_holds(spec, [rec("o1", "N1", mani, lash1)])  # one order
    assert nl_rubric.joint_holds(spec, [rec("o1", "N1", mani), rec("o2", "N1", lash1)])  # two orders, one salon
    assert not nl_rubric.joint_holds(spec, [rec("o1", "N1", mani), rec("o2", "N2", lash2)])  # two salons
    assert not nl_rubric.joint_holds(spec, [rec("o1", "N1", mani)])  # the lashes never ordered
    # round trip through the JSON form the task files keep
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec
    # a good the catalogue does not sell, or a negated demand: not read
    assert nl_rubric.compile_item("The manicure set and the hair dye should come from the same salon", SALON) is None
    assert nl_rubric.compile_item("The manicure set and eyelash extension set should not come from the same salon",
                                  SALON) is None


def test_a_total_over_the_orders_at_several_places() -> None:
    spec = nl_rubric.compile_item("The total cost of bathhouse and Japanese restaurant orders should not exceed 600 yuan",
                                  SALON)
    assert isinstance(spec, nl_rubric.JointSpec) and spec.what == "total" and spec.high == 600
    orders = [rec("o1", "B1", nl_rubric.LineFacts("P4", "Sauna Pass", (), "", 1, 388.0, ())),
              rec("o2", "J1", nl_rubric.LineFacts("P5", "Sashimi Set for One", (), "", 1, 138.0, ()))]
    assert nl_rubric.joint_holds(spec, orders)  # 526 yuan
    pricier = [orders[0], rec("o2", "J1", nl_rubric.LineFacts("P5", "Sashimi Set for One", (), "", 2, 138.0, ()))]
    assert not nl_rubric.joint_holds(spec, pricier)  # 664 yuan
    assert not nl_rubric.joint_holds(spec, orders[:1])  # no Japanese restaurant order at all
    # one order's total is the price reader's, not this kind
    one = nl_rubric.compile_item("The total cost of the bathhouse order should not exceed 600 yuan", SALON)
    assert not isinstance(one, nl_rubric.JointSpec)
    # a place the task does not have: the judge's
    assert nl_rubric.compile_item("The total cost of bathhouse and bowling orders should not exceed 600 yuan", SALON) is None


def test_an_exclusion_no_product_spells_is_read_all_the_same() -> None:
    """"Should not contain offal" where no product of the task is offal holds whatever is ordered from
    it: a check (it cannot fail on this catalogue), not an item for the judge; asked for ("should
    contain offal") it stays unread."""
    spec = nl_rubric.compile_item("The movie package should not contain offal", CTX)
    assert isinstance(spec, nl_rubric.FeatureSpec) and spec.negated and spec.concepts == ["offal"]
    assert "<offal>" in nl_rubric.describe_spec(spec)
    assert nl_rubric.spec_holds(spec, order(line("S3", "Romantic Movie Package", ("Coconut water",))), None)
    assert not nl_rubric.spec_holds(spec, order(line("x", "Pork Liver Noodles")), None)  # were one sold, it fails
    asked = nl_rubric.compile_item("The movie package should contain offal", CTX)
    assert not (isinstance(asked, nl_rubric.FeatureSpec) and asked.concepts)
