"""Round 28 of the reader: English registers a second annotator uses for demands the reader already knew. "X is to
be bought from Y" is the modal; "choose the hot version of X", "do not buy X from Y", "order enough X to feed five
people", "leave out the cilantro in X" are commands; "only X are acceptable for Y", "no X are allowed in Y", "nothing
spicy should be in Y", "Y should not be used for the X order", "X has to come from a merchant with dine-in", "at least
one juice must be at room temperature", "cannot include anything spicy", "must have two of the same drink" and "must
come without sauce" say demands the reader reads in other words. Also: which gold record an item is about no longer
depends on the string hash seed (a float sum over a set)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW, order

EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Harbor Noodle House", ("Dine-in",), "Food", 4.5),
            nl_rubric.PlaceInfo("S2", "Sunny Juice Bar", (), "Drinks", 4.3)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Beef Noodles", ("Spicy",), ("Mild", "Extra Spicy"), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "Garden Salad", (), ("With Sauce", "No Sauce"), 18.0),
              nl_rubric.ProductInfo("P3", "S2", "Orange Juice", (), ("Iced", "Room Temperature"), 15.0),
              nl_rubric.ProductInfo("P4", "S2", "Lemon Tea", (), ("Hot", "Iced"), 12.0),
              nl_rubric.ProductInfo("P5", "S1", "Sesame Bread", (), (), 6.0)),
)


def _said(text: str) -> str | None:
    spec = nl_rubric.compile_item(text, EN)
    return None if spec is None else nl_rubric.describe_spec(spec)


@pytest.mark.parametrize("said, modal", [
    ("The lunch is to be bought from Harbor Noodle House", "The lunch must be ordered from Harbor Noodle House"),
    ("Choose the hot version of the Lemon Tea", "The Lemon Tea should be hot"),
    ("Do not buy the noodles from Harbor Noodle House", "The noodles must not come from Harbor Noodle House"),
    ("Harbor Noodle House should not be used for the noodle order", "The noodle order must not come from Harbor Noodle House"),
    ("The lunch has to come from a merchant with dine-in", "The lunch merchant must offer dine-in"),
    ("At least one juice must be at room temperature", "One of the juices should be room temperature"),
    ("Only Lemon Tea is acceptable for the drink order", "Lemon Tea should be selected for the drink order"),
    ("Nothing spicy should be in the lunch order", "The lunch order must not contain spicy"),
    ("The lunch cannot include anything spicy", "The lunch cannot include spicy"),
    ("The bread order must consist of 3 of the same bread", "The bread order must include 3 identical bread items"),
    ("The drink order must have two of the same drink", "The drink order must include 2 of the same drink"),
])
def test_a_second_annotators_register_reads_as_the_known_demand(said: str, modal: str) -> None:
    want = _said(modal)
    assert want is not None, modal
    assert _said(said) == want, (said, _said(said), want)


@pytest.mark.parametrize("said, modal", [
    ("Book Harbor Noodle House for one person", "The Harbor Noodle House reservation should be for 1 person"),
    ("Two people should be booked for the noodle house", "The noodle house reservation should be for 2 people"),
    ("The noodle house booking has to be for two", "The noodle house reservation should be for 2 people"),
    ("The noodle house booking is for just 1 person", "The noodle house reservation should be for 1 person"),
    ("Reserve the noodle house for 8 PM on June 28, 2025", "The reservation time for the noodle house should be 8 PM on June 28, 2025"),
    ("The noodle house should be reserved for 8 PM on June 28, 2025",
     "The reservation time for the noodle house should be 8 PM on June 28, 2025"),
    ("Choose the Beef Noodles at the noodle shop", "The Beef Noodles should be chosen at the noodle shop"),
    ("Go with Beef Noodles at Harbor Noodle House", "The item ordered at Harbor Noodle House should be Beef Noodles"),
    ("Beef Noodles must be the item ordered at Harbor Noodle House", "The item ordered at Harbor Noodle House should be Beef Noodles"),
    ("Do not spend more than 40 yuan on the Beef Noodles", "The Beef Noodles should cost no more than 40 yuan"),
    ("The Beef Noodles have to be 40 yuan or less", "The Beef Noodles should cost no more than 40 yuan"),
    ("Pick a noodle house with a rating of at least 4.5", "The noodle house rating should be at least 4.5"),
    ("Reserve at Harbor Noodle House", "The reservation should be at Harbor Noodle House"),
])
def test_a_visit_said_as_a_command_reads_whole_not_as_a_product(said: str, modal: str) -> None:
    """What a command or an inverted sentence says of a visit (the party, the time, where) is read as the plain
    sentence reads it: before round 28 "book X for one person" was the product "X", the time of "book X for 8 PM" was
    dropped, and "choose X at the healing shop" merged the shop's words into the product's."""
    want = _said(modal)
    assert want is not None, modal
    assert _said(said) == want, (said, _said(said), want)


def test_no_x_allowed_in_y_is_what_y_holds_not_a_place() -> None:
    spec = nl_rubric.compile_item("No spicy dishes are allowed in the lunch", EN)
    assert spec is not None
    said = nl_rubric.describe_spec(spec)
    assert "none of" in said and "place" not in said, said
    spicy = order([nl_rubric.LineFacts("P1", "Beef Noodles", ("Spicy",), "Extra Spicy", 1, 28.0, ("Mild", "Extra Spicy"))])
    plain = order([nl_rubric.LineFacts("P5", "Sesame Bread", (), "", 1, 6.0, ())])
    assert not nl_rubric.spec_holds(spec, spicy, EN.places[0])
    assert nl_rubric.spec_holds(spec, plain, EN.places[0])


def test_leave_out_and_without_read_as_an_absence_and_are_checked() -> None:
    for text in ("Leave out the sauce in the Garden Salad", "The salad must come without sauce"):
        spec = nl_rubric.compile_item(text, EN)
        assert spec is not None, text
        with_sauce = order([nl_rubric.LineFacts("P2", "Garden Salad", (), "With Sauce", 1, 18.0, ("With Sauce", "No Sauce"))])
        assert not nl_rubric.spec_holds(spec, with_sauce, EN.places[0]), text


@pytest.mark.parametrize("text", [
    "Do you know whether the noodles are spicy",  # a question the agent asks, no demand
    "At least one of them should feel happy",  # no record named
])
def test_what_these_registers_do_not_cover_stays_the_judges(text: str) -> None:
    assert _said(text) is None, (text, _said(text))


def test_which_record_an_item_names_does_not_depend_on_the_hash_seed() -> None:
    """Scores summed over a set of words in the set's order (which follows PYTHONHASHSEED) differed in the last bit
    and so broke ties differently from one run to the next: the same task read one way or the other."""
    code = ("from types import SimpleNamespace as N\n"
            "import servicegym.envs.tasks.vitabench.rubric_refs as r\n"
            "r.names = lambda g, w: g.names\n"
            "w = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike'.split()\n"
            "c = [N(names=[' '.join(x)]) for x in (w, w[:9], w[::2], w[1::3], w[3:], w[5:] + ['zulu'])]\n"
            "print([x.hex() for x in r.name_scores(' '.join(w), c, None)])\n")
    outs = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout)
    assert len(outs) == 1, outs
