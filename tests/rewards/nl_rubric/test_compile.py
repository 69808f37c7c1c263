"""``compile_item`` (``rewards/nl_rubric/compile.py``) across the kinds: items left to the judge
whatever their kind, robustness (hypothesis: never raises, every spec survives JSON), linear time,
specs compiled elsewhere (``ItemContext.compiled``), and ``parse_spec`` for every kind."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime
from typing import Any

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import CTX, HOME_ADDR, HOME_ORDER, NOW, ZH_ADDR, K, left_to_the_judge, no_length_cap

LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "If it rains, the drink should be hot"),  # conditional
    ("base", "Users prioritize noodle shops; if none are available, they choose tea"),
    # a condition with no reported result stays the judge's
    ("base", "Check if there is a noodle shop within 1 km of 12 Noodle Street, Dalian. If yes, order there, so the order should be from Noodle House"),
    ("base", "如果有面馆，就在面馆下单，所以订单应来自Noodle House"),
    ("base", "The noodle order and the tea order should come from the same store"),
    ("base", "Dishes in the order other than the noodles should be mild"),
    ("base", ""),
    ("base", "   "),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_policy_numbers() -> None:
    assert (nl_rubric.PRICE_AROUND_RATIO, nl_rubric.ADDRESS_TOLERANCE_M, nl_rubric.NOTE_COVERAGE) == (0.10, 100.0, 0.6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_compile_item_never_raises(text: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    assert spec is None or spec.kind in nl_rubric.SPEC_KINDS


KIND_VOCAB = ["The", "the noodle order", "should", "must not", "be", "include", "a note requesting", "备注", "应", "不能",
              "Noodle House", "Mixue Ice Cream", "蜜雪冰城", "mild", "non-spicy", "微辣", "or", "and", "或", "和",
              "rating", "4.5", "or above", "评分", "及以上", "within", "1km", "(inclusive)", "of", HOME_ADDR, ZH_ADDR,
              "number of people", "人数", "2", "portions", "份", "total price", "around", "50 yuan", "元", "以内",
              "cancel", "取消", "M0000001O01", "status", "cancelled", "need to query", "history", "weather",
              "so", "therefore", "所以", ",", "，", ";", ".", "(", ")", "such as", "如", "等", "if", "如果",
              "delivery address", "配送地址", "为", "is", "not", "x", "🔥", "\n"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(KIND_VOCAB), max_size=40).map(" ".join))
def test_compile_item_never_raises_on_rubric_like_text(text: str) -> None:
    spec = nl_rubric.compile_item(text, CTX)
    if spec is not None:
        assert spec.kind in nl_rubric.SPEC_KINDS and nl_rubric.describe_spec(spec)
        assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec


def test_compile_item_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight times the text takes about eight times as long (a quadratic parse would take 64), for
    every kind's wording, with the world's look-ups in play."""
    no_length_cap(monkeypatch)
    units = ["The noodle order should include ", "a note requesting ", "mild or ", "Noodle House, ",
             "within 1km of ", "the delivery address ", "should be ", "备注", "应选择微辣或", "rating 4.5 or above ",
             "so the ", "need to query the history, ", "(", "cancel ", "50 yuan ", "a"]

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            ctx = nl_rubric.ItemContext(**{f: getattr(CTX, f) for f in ("now", "places", "products", "addresses",
                                                                             "tools", "record_ids")})
            t0 = time.perf_counter()
            nl_rubric.compile_item(text, ctx)  # a fresh context: nothing memoised
            best = min(best, time.perf_counter() - t0)
        return best

    for u in units:
        small = cost("The order " + u * (2000 // len(u)))
        large = cost("The order " + u * (16000 // len(u)))
        assert large < 25 * small + 0.02, (u, small, large)


# ----- specs compiled elsewhere (a sidecar file): ItemContext.compiled --------------------------------
def test_a_compiled_spec_comes_first() -> None:
    """``compile_item`` returns the spec ``compiled`` holds for exactly that text, before reading it."""
    text = "The noodles should be mild or non-spicy"
    assert K(text).phrases == ["mild", "non-spicy"]  # read from the words
    sidecar = nl_rubric.FeatureSpec(scope="product", phrases=["mild"], about="the noodles")
    ctx = replace(CTX, compiled={text: sidecar})
    assert nl_rubric.compile_item(text, ctx) is sidecar
    # other texts are read as before
    assert nl_rubric.compile_item("The restaurant rating should be 4.5 or above", ctx).kind == "rating"
    assert nl_rubric.compile_item("The restaurant should have a good environment", ctx) is None


def test_a_compiled_spec_may_be_a_time_window_an_all_of_or_none() -> None:
    window = nl_rubric.TimeWindow(subject="delivery", relation="before", latest=datetime(2025, 6, 21, 13, 0))
    both = nl_rubric.AllOf(parts=[nl_rubric.StoreSpec(place_ids=["S1"], name="Noodle House"),
                                  nl_rubric.RatingSpec(op=">=", value=4.5)])
    judged = "The delivery time should be around 12:30"  # the code would read it; the sidecar says: the judge's
    unread = "The noodle shop should feel cosy and serve noodles before one"  # the code reads nothing here
    ctx = replace(CTX, compiled={unread: window, "Noodle House, rated 4.5 or more": both, judged: None})
    assert nl_rubric.compile_item(unread, ctx) == window
    assert nl_rubric.compile_item("Noodle House, rated 4.5 or more", ctx) == both
    assert nl_rubric.compile_item(judged, ctx) is None
    assert K(unread) is None and K(judged) is not None  # without the sidecar, as before
    assert nl_rubric.spec_holds(both, HOME_ORDER, CTX.place("S1")) and not nl_rubric.spec_holds(both, HOME_ORDER, CTX.place("S2"))


def test_a_context_without_compiled_specs_is_as_before() -> None:
    assert CTX.compiled == {} and nl_rubric.ItemContext(now=NOW).compiled == {}


# ----- parse_spec: every kind from JSON, and bad data refused ----------------------------------------
EVERY_KIND: list[Any] = [
    nl_rubric.TimeWindow(subject="visit", relation="between", earliest=datetime(2025, 6, 21, 18, 0),
                         latest=datetime(2025, 6, 21, 19, 0)),
    nl_rubric.TimeWindow(subject="delivery", relation="asap", earliest=NOW, tolerance_min=10.0),
    nl_rubric.AddressSpec(address=HOME_ADDR, longitude=121.58, latitude=38.9),
    nl_rubric.AddressSpec(address=ZH_ADDR),
    nl_rubric.ProcessSpec(action="weather", tools=["weather"]),
    nl_rubric.StoreSpec(place_ids=["S3", "S4"], name="mixue ice cream", negated=True),
    nl_rubric.FeatureSpec(scope="product", phrases=["hot"], option_only=True),
    nl_rubric.FeatureSpec(scope="place", phrases=["pet-friendly"], negated=True),
    nl_rubric.RatingSpec(op=">=", value=4.5),
    nl_rubric.DistanceSpec(reference="home", longitude=121.58, latitude=38.9, max_m=1000.0, inclusive=False),
    nl_rubric.CountSpec(what="people", value=4),
    nl_rubric.CountSpec(what="items", op=">=", value=2, phrase="beef noodles"),
    nl_rubric.PriceSpec(scope="total", low=45.0, high=55.0),
    nl_rubric.PriceSpec(scope="unit", high=20.0, high_strict=True),
    nl_rubric.NoteSpec(text="no cilantro", record_id="M0000001O01"),
    nl_rubric.StatusSpec(status="cancelled", record_id="M0000001O01"),
    nl_rubric.DurationSpec(op=">=", minutes=90.0),
    nl_rubric.DurationSpec(unlimited=True),
    nl_rubric.HoursSpec(closes_at=1320.0),
    nl_rubric.HoursSpec(open_24h=True),
    nl_rubric.BestSpec(attribute="distance", most="min", reference="the user", longitude=121.58, latitude=38.9, bound=850.0),
    nl_rubric.BestSpec(attribute="sales", most="min", phrase="honey soup"),
    nl_rubric.TripSpec(what="check_out", value="2025-05-03", order_type="hotel"),
    nl_rubric.TripSpec(what="arrive", op="<=", value="12:00", order_type="flight"),
    nl_rubric.JointSpec(what="same_place", members=[["manicure set"], ["eyelash extension", "lash extension"]]),
    nl_rubric.JointSpec(what="total", members=[["bathhouse"], ["japanese restaurant"]], high=600.0),
    nl_rubric.PlaceFactSpec(fact="years", op=">=", value=3.0, year=2025),
    nl_rubric.PlaceFactSpec(fact="age", op="in", value=5.0),
    nl_rubric.DaysSpec(days=["weekend"]),
    nl_rubric.DaysSpec(scope="place", days=["saturday", "weekend"]),
    nl_rubric.AllOf(parts=[nl_rubric.ProcessSpec(action="user history", tools=["get_user_historical_behaviors"]),
                           nl_rubric.StoreSpec(place_ids=["S1"], name="noodle house")], about="the order"),
]


@pytest.mark.parametrize("spec", EVERY_KIND, ids=lambda s: s.kind)
def test_parse_spec_reads_every_kind(spec: Any) -> None:
    data = spec.model_dump(mode="json")
    assert nl_rubric.parse_spec(data) == spec
    assert {s.kind for s in EVERY_KIND} == set(nl_rubric.SPEC_KINDS)


@pytest.mark.parametrize("data", [
    {"kind": "colour", "value": "red"},  # no such kind
    {"kind": "rating", "op": ">=", "value": "high"},  # not a number
    {"kind": "rating", "op": "about", "value": 4.5},  # no such comparison
    {"kind": "price", "scope": "total", "low": 10, "currency": "yuan"},  # an extra field
    {"kind": "time_window", "subject": "lunch", "relation": "around"},  # no such subject
    {"kind": "time_window", "subject": "delivery", "relation": "before", "latest": "soon"},  # not a time
    {"kind": "all_of", "parts": [{"kind": "all_of", "parts": []}]},  # an AllOf holds no AllOf
    {"phrases": ["hot"]},  # no kind
    "rating >= 4.5",
    None,
])
def test_parse_spec_refuses_bad_data(data: Any) -> None:
    with pytest.raises(ValueError):  # pydantic.ValidationError is a ValueError
        nl_rubric.parse_spec(data)
    with pytest.raises(pydantic.ValidationError):
        nl_rubric.parse_spec(data)


# ----- a premise that reports what a look-up found settles its conditions ----------------------------
RESOLVED: list[tuple[str, Any]] = [
    ("Check if there is a noodle shop within 1 km of 12 Noodle Street, Dalian. If yes, order there. The result is yes, "
     "so the noodle shop ordered from is within 1 km of 12 Noodle Street, Dalian",
     lambda s: {p.kind for p in nl_rubric.spec_parts(s)} == {"process", "distance"}),
    ("The noodle order should prioritize dishes within 30 yuan; if none, dishes within 40 yuan; after checking, there are "
     "dishes within 30 yuan, so the price of the noodles should be at most 30 yuan",
     lambda s: (s.kind, s.scope, s.high) == ("price", "unit", 30.0)),
    ("优先选择30元以内的面条，如果没有则选择40元以内的，查询结果为有，所以下单的面条价格应不超过30元",
     lambda s: (s.kind, s.scope, s.high) == ("price", "unit", 30.0)),
]


@pytest.mark.parametrize(("text", "check"), RESOLVED)
def test_a_reported_result_settles_the_conditions(text: str, check: Any) -> None:
    spec = K(text)
    assert spec is not None and check(spec), (text, spec)


def test_a_reported_result_keeps_a_second_requirement_to_the_judge() -> None:
    # "the order must be paid" is no condition and no preference: a second requirement
    assert K("The order must be paid; the result is yes, so the price of the noodles should be at most 30 yuan") is None
