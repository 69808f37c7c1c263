"""Duration items (``rewards/nl_rubric/duration.py``): how long an ordered product lasts, how late a
place stays open; both read from the catalogue's names and tags."""

from __future__ import annotations

import math
from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric.duration import line_minutes, place_closing
from tests.rewards.nl_rubric.worlds import NOW, TOOLS, compiles_to

# a world of my own: a spa, a karaoke bar and a buffet with lengths in their names and tags
CTX_TIME = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("H1", "Willow Spa", ("Massage", "Open until 11 PM"), "", 4.6),
        nl_rubric.PlaceInfo("H2", "Echo KTV", ("Karaoke", "Open 24 Hours"), "", 4.3),
        nl_rubric.PlaceInfo("H3", "Harbour Grill Buffet", ("Buffet", "Business Hours: 10:00-21:30"), "", 4.4),
        nl_rubric.PlaceInfo("H4", "云间足道", ("足疗", "营业至02:00"), "", 4.5),
    ),
    products=(
        nl_rubric.ProductInfo("T1", "H1", "Hot Stone Massage (90 minutes)", ("Relaxing",), (), 198.0),
        nl_rubric.ProductInfo("T2", "H1", "Quick Shoulder Massage", ("30 minutes",), (), 68.0),
        nl_rubric.ProductInfo("T3", "H2", "Singing Room Package", ("3-Hour Unlimited Play",), (), 128.0),
        nl_rubric.ProductInfo("T4", "H3", "Seafood Buffet for One", ("Unlimited Time",), (), 158.0),
        nl_rubric.ProductInfo("T5", "H4", "经典足疗套餐", ("60分钟",), (), 98.0),
    ),
    tools=TOOLS,
)


def C(text: str) -> Any:
    return nl_rubric.compile_item(text, CTX_TIME)


COMPILES: list[tuple[str, str, Any]] = [
    ("The service time of the massage order should be 60 minutes or more", "duration", lambda s: (s.op, s.minutes) == (">=", 60.0)),
    ("The karaoke package must include at least 3 hours of singing time", "duration", lambda s: (s.op, s.minutes) == (">=", 180.0)),
    ("The spa order should provide a 2-hour experience", "duration", lambda s: (s.op, s.minutes) == (">=", 120.0)),
    ("The massage package should have a duration of 1.5 hours", "duration", lambda s: (s.op, s.minutes) == ("==", 90.0)),
    ("The session length should not exceed 45 minutes", "duration", lambda s: (s.op, s.minutes) == ("<=", 45.0)),
    ("The ordered karaoke package can be used for 3 hours", "duration", lambda s: (s.op, s.minutes) == (">=", 180.0)),
    ("The buffet package should have unlimited dining time", "duration", lambda s: s.unlimited),
    ("足疗套餐的服务时长应不少于60分钟", "duration", lambda s: (s.op, s.minutes) == (">=", 60.0)),
    ("选择按摩店时，套餐时长应为90分钟", "duration", lambda s: (s.op, s.minutes) == ("==", 90.0)),
    ("自助餐套餐应不限时", "duration", lambda s: s.unlimited),
    ("The spa's closing time should be at or after 10 PM", "hours", lambda s: s.closes_at == 22 * 60),
    ("The spa should be open until at least 11 PM", "hours", lambda s: s.closes_at == 23 * 60),
    ("The spa's business hours should be at least until 11 PM", "hours", lambda s: s.closes_at == 23 * 60),
    ("The karaoke reservation should be for a 24h operation venue", "hours", lambda s: s.open_24h),
    ("足疗店的营业时间应至少到晚上11点", "hours", lambda s: s.closes_at == 23 * 60),
    ("足疗店应营业到22点以后", "hours", lambda s: s.closes_at == 22 * 60),
]


@pytest.mark.parametrize(("text", "kind", "check"), COMPILES)
def test_duration_items_compile(text: str, kind: str, check: Any) -> None:
    compiles_to(C(text), text, kind, check)


@pytest.mark.parametrize("text", [
    "The food should be delivered within 30 minutes of ordering",  # a delivery time, not a product's length
    "The spa should be within a 10 minutes walk of home",           # a walk
    "The massage should not be 60 minutes",                         # an exact length negated
    "The spa's closing time should be 10 PM",                       # exactly then: the tags seldom tell
    "The spa's opening hours should be 10 AM",                      # when it opens
    "The spa should not be open until 11 PM",
    "营业时间应为晚上10点",                                          # opening or closing?
])
def test_duration_items_left_to_the_judge(text: str) -> None:
    spec = C(text)
    assert spec is None or spec.kind == "time_window", (text, spec)


def test_the_longest_is_a_superlative_not_a_length() -> None:
    """"the one with the longest duration" names no length: ``best.py`` reads it against the gold's."""
    spec = C("The massage package should be the one with the longest duration")
    assert spec is not None and spec.kind == "best" and (spec.attribute, spec.bound) == ("duration", None)


def _order(*products: tuple[str, str, tuple[str, ...]]) -> nl_rubric.RecordFacts:
    lines = tuple(nl_rubric.LineFacts(pid, name, tags) for pid, name, tags in products)
    return nl_rubric.RecordFacts(table="orders", record_id="O1", place_id="H1", status="paid", lines=lines)


STONE = ("T1", "Hot Stone Massage (90 minutes)", ("Relaxing",))
SHOULDER = ("T2", "Quick Shoulder Massage", ("30 minutes",))
BUFFET = ("T4", "Seafood Buffet for One", ("Unlimited Time",))
UNTOLD = ("T9", "Mystery Package", ("Relaxing",))


def test_line_lengths_from_the_catalogue() -> None:
    assert line_minutes(*STONE[1:]) == 90.0
    assert line_minutes("Singing Room Package", ("3-Hour Unlimited Play",)) == 180.0
    assert line_minutes(*BUFFET[1:]) == math.inf
    assert line_minutes("Tea Set (2 hours)", ("90 minutes",)) is None  # the name and a tag disagree
    assert line_minutes("足疗套餐", ("60分钟",)) == 60.0
    assert line_minutes(*UNTOLD[1:]) is None


def test_duration_checks() -> None:
    holds = nl_rubric.spec_holds
    at_least_hour = C("The service time of the massage order should be 60 minutes or more")
    assert holds(at_least_hour, _order(STONE), None)
    assert not holds(at_least_hour, _order(SHOULDER), None)
    assert not holds(at_least_hour, _order(STONE, SHOULDER), None)  # every line
    assert not holds(at_least_hour, _order(UNTOLD), None)           # the catalogue does not tell
    assert holds(at_least_hour, _order(BUFFET), None)               # unlimited is longer than any
    unlimited = C("The buffet package should have unlimited dining time")
    assert holds(unlimited, _order(BUFFET), None)
    assert not holds(unlimited, _order(STONE), None)
    at_most = C("The session length should not exceed 45 minutes")
    assert holds(at_most, _order(SHOULDER), None) and not holds(at_most, _order(BUFFET), None)


def test_closing_times_from_the_tags() -> None:
    assert place_closing(("Open until 10 PM",)) == 22 * 60
    assert place_closing(("open until 2 AM",)) == 26 * 60  # after midnight
    assert place_closing(("Open Until Midnight",)) == 24 * 60
    assert place_closing(("Open 24 Hours",)) == math.inf
    assert place_closing(("Business Hours: 09:00-21:00",)) == 21 * 60
    assert place_closing(("营业至02:00",)) == 26 * 60
    assert place_closing(("Nail Art",)) is None


def test_hours_checks() -> None:
    holds = nl_rubric.spec_holds
    record = nl_rubric.RecordFacts(table="reservations", record_id="R1", place_id="H1", status="paid")
    late = C("The spa's closing time should be at or after 10 PM")
    assert holds(late, record, CTX_TIME.place("H1"))       # until 11 PM
    assert not holds(late, record, CTX_TIME.place("H3"))   # until 21:30
    assert holds(late, record, CTX_TIME.place("H2"))       # around the clock
    assert holds(late, record, CTX_TIME.place("H4"))       # until 2 AM
    assert not holds(late, record, nl_rubric.PlaceInfo("X", "Plain Spa", ("Massage",)))  # the tags do not tell
    always = C("The karaoke reservation should be for a 24h operation venue")
    assert holds(always, record, CTX_TIME.place("H2")) and not holds(always, record, CTX_TIME.place("H1"))
    assert nl_rubric.spec_target(always) == "place" and nl_rubric.spec_target(late) == "place"
    assert nl_rubric.spec_target(C("The buffet package should have unlimited dining time")) == "order"
    assert nl_rubric.spec_topic(always) == "time"
