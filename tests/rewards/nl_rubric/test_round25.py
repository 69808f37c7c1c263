"""Round 25 of the reader: plain, spoken demands. English commands with no modal ("Get X from Y", "Don't order the
drinks from Y", "Keep the dinner under 30 yuan", "Put 'less sauce' in the note for the X order"), fragments ("No ice for
the fruit tea", "Half sugar for the milk tea"), "the salad needs X in it", "X has to be the main thing in Y"; Chinese
spoken modals ("得是", "都得有", "评分得高于4.0", "一共要2个", "来10个") and "要X的" before a reason. Two things listed
with "plus" are never read as one of them."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.test_round22 import EN, ZH, _said
from tests.rewards.nl_rubric.worlds import NOW


@pytest.mark.parametrize("spoken, modal", [
    ("Get Jasmine Milk Tea from Green Tea House", "The agent should order Jasmine Milk Tea from Green Tea House"),
    ("Don't order the drinks from Noodle Bar", "The drinks should not be ordered from Noodle Bar"),
    ("No seafood for the noodle order", "The noodle order should contain no seafood"),
    ("Hot for the oolong tea", "The oolong tea should be hot"),
    ("The noodle order needs Seafood Noodles in it", "The noodle order should include Seafood Noodles"),
    ("Keep the tea order under 40 yuan", "The tea order should cost under 40 yuan"),
])
def test_spoken_english_reads_as_the_modal_demand(spoken: str, modal: str) -> None:
    want = _said(modal, EN)
    assert want is not None, modal
    assert _said(spoken, EN) == want, (spoken, _said(spoken, EN), want)


def test_a_note_put_in_the_order_and_the_main_thing_of_a_dish() -> None:
    spec = nl_rubric.compile_item("Put 'extra vinegar' in the note for the noodle order", EN)
    assert isinstance(spec, nl_rubric.NoteSpec) and spec.text == "extra vinegar"
    # the value is the subject: "beef" is what the noodles must hold, not "noodles"
    said = _said("Beef has to be the main thing in the noodle dish", EN) or ""
    assert "beef" in said and "noodle" not in said.replace("beef", ""), said


def test_two_things_listed_with_plus_are_both_asked_for() -> None:
    said = _said("The lunch is Seafood Noodles plus the Oolong Tea", EN)
    assert said is None or ("seafood noodles" in said and "oolong tea" in said), said


@pytest.mark.parametrize("spoken, modal", [
    ("柠檬茶得是热的", "柠檬茶应为热的"),
    ("柠檬茶得选热的", "柠檬茶应选热的"),
    ("奶茶店评分得高于4.0分", "奶茶店评分应高于4.0分"),
    ("水饺一共要2个", "水饺一共2个"),
    ("柠檬茶要热的，女儿喜欢", "柠檬茶要热的"),
])
def test_spoken_chinese_reads_as_the_modal_demand(spoken: str, modal: str) -> None:
    want = _said(modal, ZH)
    assert want is not None, modal
    assert _said(spoken, ZH) == want, (spoken, _said(spoken, ZH), want)


def test_de_that_is_no_modal_is_left_alone() -> None:
    # "获得" / "值得": no demand is made of them
    from servicegym.rewards.nl_rubric.text import _knorm
    assert "应" not in _knorm("获得是否满意")
    assert "应" not in _knorm("值得有")


IS = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Tea Garden House", ("Tea house",), "Leisure", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Oolong package for two", ("Package for two",), (), 128.0),
              nl_rubric.ProductInfo("P2", "S1", "Single tasting package", (), (), 58.0)),
)


@pytest.mark.parametrize("spoken, modal", [
    ("Table for 6 at the tea house", "The tea house reservation should be for 6 people"),
    ("Book the tea house for 4", "The tea house should be reserved for 4 people"),
    ("Just 1 person for the tea house", "The tea house reservation should be for 1 person"),
    ("The agent reserves the tea house for 3 people", "The tea house reservation should be for 3 people"),
    ("Go with Tea Garden House", "The agent should select Tea Garden House"),
])
def test_spoken_visits_read_as_the_party_and_the_place(spoken: str, modal: str) -> None:
    want = _said(modal, IS)
    assert want is not None, modal
    assert _said(spoken, IS) == want, (spoken, _said(spoken, IS), want)


def test_a_package_for_two_is_a_serving_size_not_a_party() -> None:
    said = _said("Get a package for two at the tea house", IS) or ""
    assert "party size" not in said and ("for 2" in said or "for two" in said), said
