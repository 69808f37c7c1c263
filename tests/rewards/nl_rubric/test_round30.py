"""Round 30 of the reader: a Chinese permission or preference is no demand, and "everything but X" is no literal.
"可以选择X" (may choose X), "最好选择X" (preferably X), "尽量选X", "X可以从Y下单" read as demands before, so an order with another
flavour failed; "不应选择X以外的口味" read as "has none of 'X以外'", which no product spells, so every order passed.
Both are now the judge's; the plain demands read as before."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import NOW

ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "老街面馆（人民路店）", ("可堂食",), "美食", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "蒜蓉炒青菜", (), (), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "清炒时蔬", (), (), 16.0)),
)


def _said(text: str) -> str | None:
    spec = nl_rubric.compile_item(text, ZH)
    return None if spec is None else nl_rubric.describe_spec(spec)


@pytest.mark.parametrize("text", [
    "青菜可以选择蒜蓉口味",
    "青菜最好选择蒜蓉口味",
    "青菜尽量选择蒜蓉口味",
    "青菜不应选择蒜蓉以外的口味",
    "青菜不能选蒜蓉之外的口味",
    "青菜可以从老街面馆（人民路店）下单",
    "青菜可以包含蒜蓉",
])
def test_a_permission_a_preference_or_everything_but_x_is_not_read_as_a_demand(text: str) -> None:
    assert _said(text) is None, (text, _said(text))


@pytest.mark.parametrize("text, word", [("青菜应选择蒜蓉口味", "蒜蓉"), ("青菜选择蒜蓉口味", "蒜蓉"), ("青菜不应选择蒜蓉口味", "蒜蓉"),
                                        ("青菜从老街面馆（人民路店）下单", "老街面馆"), ("青菜包含蒜蓉", "蒜蓉")])
def test_the_plain_demand_still_reads(text: str, word: str) -> None:
    said = _said(text)
    assert said is not None and word in said, (text, said)


EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Harbor Noodle House", (), "Food", 4.5),),
    products=(nl_rubric.ProductInfo("P1", "S1", "Beef Noodles", (), (), 28.0),),
)


@pytest.mark.parametrize("text", [
    "Ideally the beef noodles should be ordered",
    "The beef noodles should be ordered if possible",
    "The user might want the beef noodles",
    "The user prefers the beef noodles",
])
def test_an_english_preference_or_guess_is_not_a_demand(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert spec is None, (text, nl_rubric.describe_spec(spec))


def test_the_english_demand_itself_still_reads() -> None:
    assert nl_rubric.compile_item("The beef noodles should be ordered", EN) is not None


def test_a_time_joined_to_a_cancellation_is_not_read_as_the_time_alone() -> None:
    """"cancelled and rebooked at 13:00" asks for two records; its time alone passed an agent that never cancelled."""
    assert nl_rubric.compile_item("The noodle house reservation should be cancelled and rebooked at 13:00", EN) is None
    assert nl_rubric.compile_item("The new noodle house reservation should be at 13:00", EN) is not None
