"""Time items (``rewards/nl_rubric/time.py``): phrasings in English and Chinese, the tolerance
policy, items that must stay uncompiled, robustness (hypothesis: never raises), linear time, time
items read by ``compile_item`` in a world, and every item of the real VitaBench files when they are
present."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicegym.rewards.nl_rubric import (
    AROUND_TOLERANCE_MIN,
    ASAP_SLACK_MIN,
    EXACT_TOLERANCE_MIN,
    TARGET_MARGIN_MIN,
    TimeWindow,
    compile_time_item,
    nl_coverage,
)
from tests.rewards.nl_rubric.worlds import NOW, T, compile_in, compiles_to, no_length_cap

# (item, subject, relation, earliest, latest): my own phrasings, not VitaBench's
CASES: list[tuple[str, str, str, str | None, str | None]] = [
    # English
    ("The delivery time for the noodle order should be around 12:30 on 2025-06-21", "delivery", "around",
     "2025-06-21 12:30", "2025-06-21 12:30"),
    ("Please make sure the food is delivered at about 1 PM today", "delivery", "around",
     "2025-06-21 13:00", "2025-06-21 13:00"),
    ("The expected delivery time should be no later than 6:45 p.m. on June 21, 2025", "delivery", "before",
     None, "2025-06-21 18:45"),
    ("Delivery must happen by 7pm tomorrow", "delivery", "before", None, "2025-06-22 19:00"),
    # a visit said as making or scheduling it; the weekday beside the date is context
    ("The table reservation needs to be scheduled for Sunday at 6:00 PM (2025-06-22 18:00)", "visit", "exact",
     "2025-06-22 18:00", "2025-06-22 18:00"),
    ("Need to make a reservation at the noodle house for 8:00 PM (2025-06-21 20:00)", "visit", "exact",
     "2025-06-21 20:00", "2025-06-21 20:00"),
    ("按摩店预约在明天下午3点", "visit", "exact", "2025-06-22 15:00", "2025-06-22 15:00"),
    ("The order should be delivered after 2:30 PM", "delivery", "after", "2025-06-21 14:30", None),
    ("The estimated delivery time should be between 17:30 and 18:15 on 21 June 2025", "delivery", "between",
     "2025-06-21 17:30", "2025-06-21 18:15"),
    ("The delivery window should be from 12:00 to 13:00 tomorrow", "delivery", "between",
     "2025-06-22 12:00", "2025-06-22 13:00"),
    ("Deliver the cake between 6 and 7 pm", "delivery", "between", "2025-06-21 18:00", "2025-06-21 19:00"),
    ("The delivery time should be 18:00", "delivery", "exact", "2025-06-21 18:00", "2025-06-21 18:00"),
    ("The delivery time should not be later than 20:00, so that the kids can eat before bed at 21:00",
     "delivery", "before", None, "2025-06-21 20:00"),
    ("The soup should be delivered at 6:30 pm tonight", "delivery", "exact", "2025-06-21 18:30", "2025-06-21 18:30"),
    ("Breakfast orders should arrive before 8:00 tomorrow", "arrival", "before", None, "2025-06-22 08:00"),
    ("The order should be delivered after 18:00 but before 19:00", "delivery", "between",
     "2025-06-21 18:00", "2025-06-21 19:00"),
    # compound bounds: a point and a cap (or a floor) accept from the point's earliest up to the cap
    ("Lunch should be delivered around 12:15, and not later than 13:30", "delivery", "between",
     "2025-06-21 12:00", "2025-06-21 13:30"),
    ("午饭12点半左右送达，最晚不超过1点", "delivery", "between", "2025-06-21 12:15", "2025-06-21 13:00"),
    ("晚餐送达时间不超过19:30", "delivery", "before", None, "2025-06-21 19:30"),
    ("The snacks should arrive no earlier than 15:00, at about 15:30", "arrival", "between",
     "2025-06-21 15:00", "2025-06-21 15:45"),
    # the bound word far from its time, an event between them
    ("Deliver the salad before the yoga class starts at 18:30", "delivery", "before", None, "2025-06-21 18:30"),
    ("The cake should be delivered after the concert ends at 21:00", "delivery", "after", "2025-06-21 21:00", None),
    ("蛋糕应在20:00的聚会开始之前送达", "delivery", "before", None, "2025-06-21 20:00"),
    ("The order should be delivered by the courier at 18:00", "delivery", "exact",  # "by" far from it: no bound
     "2025-06-21 18:00", "2025-06-21 18:00"),
    # a visit bounded without "appointment time"
    ("The massage appointment must be no later than 5 pm tomorrow", "visit", "before", None, "2025-06-22 17:00"),
    ("理发预约最晚不超过明天上午11点", "visit", "before", None, "2025-06-22 11:00"),
    ("The booking time for the hot pot restaurant should be 2025-06-22 19:00", "visit", "exact",
     "2025-06-22 19:00", "2025-06-22 19:00"),
    ("The appointment date at the spa should be June 23, 2025 at 10:30 AM", "visit", "exact",
     "2025-06-23 10:30", "2025-06-23 10:30"),
    ("The reservation time should be tomorrow at noon", "visit", "exact", "2025-06-22 12:00", "2025-06-22 12:00"),
    ("The visit date for the museum should be 2025-06-25", "visit", "between", "2025-06-25 00:00", None),
    ("The yoga class appointment time must be Sunday at 9 AM (June 22, 2025, 09:00)", "visit", "exact",
     "2025-06-22 09:00", "2025-06-22 09:00"),
    ("The class ends at 17:00 and the break lasts 30 minutes, therefore the sauna reservation time should be "
     "June 21, 2025, 17:30", "visit", "exact", "2025-06-21 17:30", "2025-06-21 17:30"),
    ("The nail salon appointment time should be 2 hours after the massage, which should be 2025-06-22 16:00",
     "visit", "exact", "2025-06-22 16:00", "2025-06-22 16:00"),
    # Chinese
    ("午餐订单的送达时间应在12:30左右", "delivery", "around", "2025-06-21 12:30", "2025-06-21 12:30"),
    ("外卖需在今天下午1点前送达", "delivery", "before", None, "2025-06-21 13:00"),
    ("晚餐订单的预计送达时间应在2025年6月21日18:00到18:30之间", "delivery", "between",
     "2025-06-21 18:00", "2025-06-21 18:30"),
    ("配送时间应不晚于明天中午12点", "delivery", "before", None, "2025-06-22 12:00"),
    ("夜宵订单的送达时间应在晚上10点以后", "delivery", "after", "2025-06-21 22:00", None),
    ("送达时间应在今晚7点至8点之间", "delivery", "between", "2025-06-21 19:00", "2025-06-21 20:00"),
    ("送达时间大约在2025-06-21 12:00", "delivery", "around", "2025-06-21 12:00", "2025-06-21 12:00"),
    ("送达时间应为2025-06-21 18:00", "delivery", "exact", "2025-06-21 18:00", "2025-06-21 18:00"),
    ("汤包订单的送达时间应在6月22日早上7点半左右，确保上班前吃完", "delivery", "around",
     "2025-06-22 07:30", "2025-06-22 07:30"),
    ("送达时间不能晚于18:00", "delivery", "before", None, "2025-06-21 18:00"),
    ("预约时间为6月22日下午三点半", "visit", "exact", "2025-06-22 15:30", "2025-06-22 15:30"),
    ("到店时间应为明天晚上7点", "visit", "exact", "2025-06-22 19:00", "2025-06-22 19:00"),
    ("预订时间应在2025年06月22日18:00，以便和朋友聚餐", "visit", "exact", "2025-06-22 18:00", "2025-06-22 18:00"),
    ("订单送达时间应在2025-06-21 19:30左右【即送达时间在2025-06-21 19:15到2025-06-21 19:45区间内】", "delivery",
     "between", "2025-06-21 19:15", "2025-06-21 19:45"),
]


@pytest.mark.parametrize(("text", "subject", "relation", "earliest", "latest"), CASES)
def test_time_items_compile(text: str, subject: str, relation: str, earliest: str | None, latest: str | None) -> None:
    w = compile_time_item(text, NOW)
    assert w is not None, text
    assert (w.kind, w.subject, w.relation) == ("time_window", subject, relation), text
    assert w.earliest == (T(earliest) if earliest else None), text
    if relation == "between" and latest is None:  # a whole day
        assert w.latest == T(earliest) + timedelta(days=1, seconds=-1)  # type: ignore[arg-type, operator]
    else:
        assert w.latest == (T(latest) if latest else None), text


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("The food should arrive within an hour", 60), ("The drinks must be delivered within 30 minutes", 30),
     ("蛋糕订单应在一小时内送达", 60), ("订单应在30分钟内送到", 30), ("半小时内送达", 30),
     ("The order should be delivered in less than 1.5 hours", 90), ("送达时间不超过两小时", 120)],
)
def test_within_a_duration(text: str, minutes: int) -> None:
    w = compile_time_item(text, NOW)
    assert w is not None and w.relation == "within", text
    assert (w.earliest, w.latest) == (NOW, NOW + timedelta(minutes=minutes))


@pytest.mark.parametrize("text", ["The order should be delivered as soon as possible", "饮品订单应尽快送达",
                                  "Deliver the medicine immediately", "外卖请立即送到"])
def test_as_soon_as_possible(text: str) -> None:
    w = compile_time_item(text, NOW)
    assert w is not None and w.relation == "asap" and w.earliest == NOW and w.latest is None
    arrival = NOW + timedelta(minutes=31)  # the order's own trip
    assert w.accepts(arrival + timedelta(minutes=ASAP_SLACK_MIN), arrival)
    assert not w.accepts(arrival + timedelta(minutes=ASAP_SLACK_MIN + 1), arrival)


@pytest.mark.parametrize(
    "text",
    [
        "The delivery address should be No. 15 Dongzhai Road (180 meters from Exit 4)",
        "Total price of the order should be around 50 yuan",
        "The usage time for the sports venue order should be 4 hours",
        "The restaurant must have an opening time before 2019",
        "The service time for the massage must be 40 minutes or more",
        "Products ordered at the cinema should be for the 18:00-21:00 time slot",
        "水果茶订单的预计送达时间应在2024-09-14 18:00:00之间",  # "between" one time
        "The delivery time should be around 12:00 or 18:00",  # two different times
        "送达时间应在12点前，预约时间应在18点",  # a delivery and a visit
        "The order should be delivered 30 minutes before 18:00",  # 17:30, not a bound
        "The order should be delivered before 18:00 or after the meeting at 20:00",  # two bounds, no window
        "The delivery should not be around noon",
        "deliver on 2025-02-30 at 12:00",  # no such day
        "The delivery time should be 25:00",
        "早一点送达",  # "一点" is "a little", not one o'clock
        "The order should be delivered soon",
        "The user has booked to arrive at the store at 18:00 and stays until 20:00. Therefore the package "
        "should last 2 hours",  # the conclusion is about the package
        "Since the user arrives at 2:00 PM, the tea house package must support at least 4 hours",
        "The delivery time should be before June 21",  # is the 21st included?
        "",
    ],
)
def test_not_time_items_or_ambiguous(text: str) -> None:
    assert compile_time_item(text, NOW) is None


def test_dates_without_year_and_times_without_date() -> None:
    # a clock time already past today (beyond the grace) is tomorrow's
    w = compile_time_item("delivery before 10:00", NOW)
    assert w is not None and w.latest == T("2025-06-22 10:00")
    # within the grace it stays today's (an infeasible window the loader then repairs)
    w = compile_time_item("delivery before 11:00", NOW)
    assert w is not None and w.latest == T("2025-06-21 11:00")
    # a month and day long past this year are next year's
    w = compile_time_item("The reservation time should be January 3 at 19:00", NOW)
    assert w is not None and w.latest == T("2026-01-03 19:00")
    # "23:00-01:00" crosses midnight
    w = compile_time_item("送达时间应在23:00-01:00之间", NOW)
    assert w is not None and (w.earliest, w.latest) == (T("2025-06-21 23:00"), T("2025-06-22 01:00"))


def test_tolerance_policy() -> None:
    assert (AROUND_TOLERANCE_MIN, EXACT_TOLERANCE_MIN, TARGET_MARGIN_MIN) == (15.0, 5.0, 10.0)
    t = T("2025-06-21 18:00")
    around = compile_time_item("The delivery time should be around 18:00", NOW)
    exact = compile_time_item("The delivery time should be 18:00", NOW)
    before = compile_time_item("The delivery time should be before 18:00", NOW)
    after = compile_time_item("The delivery time should be after 18:00", NOW)
    assert around and exact and before and after
    m = timedelta(minutes=1)
    assert around.accepts(t + 5 * m) and around.accepts(t - 15 * m) and not around.accepts(t + 16 * m)
    assert exact.accepts(t + 5 * m) and exact.accepts(t - 5 * m)
    assert not exact.accepts(t + 8 * m) and not exact.accepts(t - 8 * m)  # an 8-minute miss fails
    assert before.accepts(t) and not before.accepts(t + timedelta(seconds=1)) and before.accepts(t - 600 * m)
    assert after.accepts(t) and not after.accepts(t - timedelta(seconds=1))
    assert around.tolerance_min == 15 and exact.tolerance_min == 5 and before.tolerance_min == 0


def test_golden_targets() -> None:
    early = T("2025-06-21 11:50")  # the earliest possible arrival
    cases = {
        "The delivery time should be around 12:30": T("2025-06-21 12:30"),
        "The delivery time should be between 12:00 and 13:00": T("2025-06-21 12:30"),
        "The delivery time should be before 13:00": T("2025-06-21 12:50"),
        "The delivery time should be after 13:00": T("2025-06-21 13:10"),
        "The order should be delivered as soon as possible": early,
        "The order should be delivered within an hour": early,
        "The delivery time should be around 11:30": early,  # never before the earliest arrival
    }
    for text, aim in cases.items():
        w = compile_time_item(text, NOW)
        assert w is not None and w.target(early) == aim, text


def test_spec_serialises_readably() -> None:
    w = compile_time_item("送达时间应在2025-06-21 12:00到13:00之间", NOW)
    assert w is not None
    data = w.model_dump(mode="json")
    assert data == {"kind": "time_window", "subject": "delivery", "relation": "between",
                    "earliest": "2025-06-21 12:00:00", "latest": "2025-06-21 13:00:00", "tolerance_min": 0.0,
                    "repaired": ""}
    assert TimeWindow.model_validate(data) == w
    assert w.describe() == "delivery time between 2025-06-21 12:00 and 2025-06-21 13:00"
    assert nl_coverage(3, 12) == 0.25 and nl_coverage(0, 0) == 1.0


# ----- robustness ---------------------------------------------------------------------------
VOCAB = ["12:00", "6 pm", "2025-06-21", "June 21", "6月21日", "18点", "半", "左右", "之前", "以后", "之间", "到", "至",
         "-", "and", "between", "before", "after", "around", "not", "不", "within", "an hour", "30分钟", "内",
         "delivery time", "送达时间", "reservation time", "预约时间", "arrive", "today", "tomorrow", "明天", "今晚",
         "下午", "noon", "as soon as possible", "尽快", ", ", "，", ". ", "so the ", "which ", "(", ")", "【", "】",
         " ", "a", "一点", "99:99", "2025-13-45", "24:00", "0:00", "ensuring", "确保", "\n", "\x00", "🔥"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_never_raises_on_any_text(text: str) -> None:
    w = compile_time_item(text, NOW)
    assert w is None or isinstance(w, TimeWindow)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(VOCAB), max_size=40).map(" ".join), st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31)))
def test_never_raises_on_time_like_text(text: str, now: datetime) -> None:
    w = compile_time_item(text, now)
    if w is not None:
        assert w.earliest is None or w.latest is None or w.earliest <= w.latest
        assert w.tolerance_min >= 0


def test_linear_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight times the text takes about eight times as long (a quadratic parse would take 64)."""
    no_length_cap(monkeypatch)  # let the parser see the whole text
    units = ["12:00-", "delivery time, ", "送达时间", "between 1", "not be later than ", ", which x", "((",
             "time of the a b c d e reservation ", "2025-06-21 12:00 左右 ", "3点到", "a"]

    def cost(text: str) -> float:
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            compile_time_item(text, NOW)
            best = min(best, time.perf_counter() - t0)
        return best

    for u in units:
        small = cost("delivery time " + u * (2000 // len(u)))
        large = cost("delivery time " + u * (16000 // len(u)))
        assert large < 25 * small + 0.02, (u, small, large)


# ----- the real VitaBench files ---------------------------------------------------------------
def _data_dir() -> Path:
    override = os.environ.get("SERVICEGYM_VITABENCH_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "vitabench"


REAL_FILES = ["delivery/tasks_en.json", "delivery/tasks.json", "instore/tasks_en.json"]
# an item that clearly bounds a delivery or visit time: a subject and a clock time in digits
_CLEAR = re.compile(r"(delivery time|delivered|appointment time|reservation time|booking time|送达时间|配送时间)"
                    r".{0,80}\d{1,2}(:\d\d|点)", re.I)


def _items(task: dict) -> list[str]:
    crit = task["evaluation_criteria"]
    out: list[str] = []
    for text in [r for s in crit["expected_states"] for r in s.get("state_rubrics") or []] + crit["overall_rubrics"]:
        if text not in out:
            out.append(text)
    return out


def test_real_files_time_items(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [_data_dir() / f for f in REAL_FILES if (_data_dir() / f).is_file()]
    if not paths:
        pytest.skip("VitaBench data not found (set SERVICEGYM_VITABENCH_DIR)")
    lines = []
    for path in paths:
        total = compiled = clear = clear_compiled = 0
        for task in json.loads(path.read_text(encoding="utf-8")):
            now = datetime.strptime(task["environment"]["time"].strip(), "%Y-%m-%d %H:%M:%S")
            for text in _items(task):
                total += 1
                w = compile_time_item(text, now)
                compiled += w is not None
                if _CLEAR.search(text) and not re.search(r"\baddress\b|地址|slot|usage|service time", text, re.I):
                    clear += 1
                    clear_compiled += w is not None
        lines.append(f"{path.parent.name}/{path.name}: {total} NL items, {compiled} compile to time windows; "
                     f"{clear_compiled}/{clear} of the clearly timed ones")
        assert clear_compiled >= 0.97 * clear, lines[-1]
    with capsys.disabled():
        print("\n" + "\n".join(lines))


# ----- time items read by compile_item, in a world --------------------------------------------
IN_A_WORLD: list[tuple[str, str, str, Any]] = [
    # the time kind stays the first one read
    ("base", "The delivery time for the noodle order should be around 12:30", "time_window", lambda s: s.relation == "around"),
    # a visit's time said as what the reservation "has to be for", or as booking it "around" a time
    ("more", "The karaoke reservation has to be for June 23, 2025 at 7:30 PM", "time_window", lambda s: (s.subject, s.relation, s.latest) == ("visit", "exact", T("2025-06-23 19:30"))),
    ("more", "The massage appointment should be booked around 15:00 on 2025-06-22", "time_window", lambda s: (s.subject, s.relation) == ("visit", "around")),
    ("more", "The lunch order should be scheduled for delivery around 12:40", "time_window", lambda s: s.subject == "delivery"),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), IN_A_WORLD)
def test_time_items_in_a_world(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)
