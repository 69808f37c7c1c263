"""Travel (VitaBench OTA) rubric items, English and Chinese: the reader compiles them against an OTA
task's world (``travel_tasks.py``), the loader ties them to the gold travel orders, the golden route
passes every check and a violating order fails the item it breaks; the grammar of ``trip.py`` on
its own, with negatives; a task without travel places is read as before."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, run_episode
from servicegym.rewards.nl_rubric import (
    ItemContext,
    LineFacts,
    PlaceInfo,
    RecordFacts,
    TripSpec,
    compile_item,
    parse_spec,
    spec_holds,
    spec_parts,
)
from tests.envs.test_vitabench import Scripted
from tests.rewards.nl_rubric.travel_tasks import OTA_ITEMS, ota_items_task, write_tasks

# the items each language's task must check by code (index in OTA_ITEMS -> rubric item kind)
READ = {
    "en": {0: "feature", 1: "store", 2: "feature", 3: "feature", 4: "all_of", 5: "trip", 6: "store", 7: "all_of",
           8: "trip", 9: "rating", 10: "distance", 12: "price", 13: "trip", 15: "trip", 16: "store", 17: "feature",
           18: "trip", 19: "trip", 20: "status", 21: "process"},
    "zh": {0: "feature", 1: "store", 2: "feature", 3: "feature", 4: "all_of", 5: "trip", 6: "store", 7: "all_of",
           8: "trip", 9: "rating", 10: "distance", 12: "price", 13: "trip", 15: "trip", 16: "store", 18: "trip",
           19: "trip", 21: "process"},
}


def _env(tmp_path: Path, lang: str) -> gym.Env:
    path = write_tasks(tmp_path / f"ota_{lang}.json", [ota_items_task(lang)])
    return gym.make("servicegym/Travel-v0", tasks=str(path), scoring="strict")


def _nl(task: Any) -> dict[int, str]:
    # the task's rubric items: the overall rubric has the expected states' "..." first (index 0)
    return {i.params["nl_index"] - 1: i.kind.removeprefix("nl_") for i in task.rubric if "nl_index" in i.params}


def _score(env: gym.Env, actions: list[str], tid: str) -> dict[str, Any]:
    rec = run_episode(env, Scripted(actions), seed=0, options={"task_id": tid})
    return {k.split("/", 1)[1]: v for k, v in rec["score"].items() if k.startswith("rubric/")} | {"success": rec["success"]}


def _with(actions: list[str], tool: str, **changes: Any) -> list[str]:
    out = list(actions)
    i = next(i for i, a in enumerate(out) if a.startswith("{") and json.loads(a)["name"] == tool)
    call = json.loads(out[i])
    call["arguments"].update(changes)
    out[i] = json.dumps(call)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_travel_items_compile_and_the_golden_route_passes(tmp_path: Path, lang: str) -> None:
    env = _env(tmp_path, lang)
    tid = f"OTA-{lang.upper()}"
    task = env.unwrapped.source.get(tid)
    read = _nl(task)
    assert {k: v for k, v in read.items() if k in READ[lang]} == READ[lang], read
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})
    assert rec["success"], rec["score"]
    assert all(v == 1.0 for k, v in rec["score"].items() if k.startswith("rubric/nl_"))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("tool", "changes", "failed"),
    [
        ("create_flight_order", {"seat_id": "F1B01"}, {3}),  # business class
        ("create_flight_order", {"flight_id": "F2", "seat_id": "F2E01"}, {0, 1, 2, 4}),  # Air China, a stop, 07:00-12:30
        ("create_flight_order", {"seat_id": "F1E02", "date": "2025-05-02"}, {5}),  # the wrong day
        ("create_hotel_order", {"check_out_date": "2025-05-02"}, {7, 13}),  # one night
        ("create_hotel_order", {"room_id": "H1T01"}, {11}),  # a twin room without breakfast
        ("create_hotel_order", {"hotel_id": "H2", "room_id": "H2K01"}, {6, 8, 9, 10}),  # 3 stars, 3.9, far
        ("create_attraction_order", {"ticket_id": "A1A03", "date": "2025-05-03"}, {15}),
        ("create_train_order", {"seat_id": "T1F03"}, {17}),  # first class
        ("create_train_order", {"seat_id": "T1S04", "date": "2025-05-04"}, {18}),
        ("create_train_order", {"train_id": "T2", "seat_id": "T2S03"}, {16, 19}),  # D456 arrives 19:40
    ],
)
def test_a_violating_order_fails_its_items(tmp_path: Path, lang: str, tool: str, changes: dict[str, Any],
                                           failed: set[int]) -> None:
    env = _env(tmp_path, lang)
    tid = f"OTA-{lang.upper()}"
    task = env.unwrapped.source.get(tid)
    names = {i.params["nl_index"] - 1: i.name for i in task.rubric if "nl_index" in i.params}
    score = _score(env, _with(task.golden_actions, tool, **changes), tid)
    assert not score["success"]
    broken = {k for k, name in names.items() if score[name] == 0.0}
    assert broken == failed & set(names), (broken, failed)


# ----- the grammar alone ------------------------------------------------------------------------
NOW = datetime(2025, 4, 25, 10, 0)
HOTEL = PlaceInfo("H1", "West Lake Grand Hotel", tags=("Free breakfast",), score=4.7, kind="hotel", stars=5)
INN = PlaceInfo("H2", "Budget Inn", score=3.9, kind="hotel", stars=3)
FLIGHT = PlaceInfo("F1", "MU5101", tags=("Direct",), kind="flight", departs="09:00", arrives="11:10")
RED_EYE = PlaceInfo("F2", "CA1702", tags=("1 Stop",), kind="flight", departs="23:00", arrives="01:10")
CTX = ItemContext(now=NOW, places=(HOTEL, INN, FLIGHT, RED_EYE))


def _stay(*dates: str) -> RecordFacts:
    return RecordFacts(table="orders", record_id="O", place_id="H1",
                       lines=tuple(LineFacts(product_id=f"P{d}", name="King Room", date=d, price=700) for d in dates))


def _holds(text: str, record: RecordFacts, place: PlaceInfo) -> bool:
    spec = compile_item(text, CTX)
    assert spec is not None, text
    assert parse_spec(spec.model_dump(mode="json")) == spec
    return spec_holds(spec, record, place)


@pytest.mark.parametrize("text", [
    "The hotel order's check-in date should be 2025-05-01 and check-out 2025-05-03",
    "酒店入住日期应为2025-05-01，离店日期为2025-05-03",
    "The hotel should check in on May 1 and check out on May 3",
    "酒店应5月1日入住，5月3日退房",
])
def test_hotel_dates(text: str) -> None:
    assert _holds(text, _stay("2025-05-01", "2025-05-02"), HOTEL)
    assert not _holds(text, _stay("2025-05-01"), HOTEL)
    assert not _holds(text, _stay("2025-05-02", "2025-05-03"), HOTEL)


@pytest.mark.parametrize("text", ["The hotel stay should be 2 nights", "酒店需要入住两晚"])
def test_hotel_nights(text: str) -> None:
    assert _holds(text, _stay("2025-05-01", "2025-05-02"), HOTEL)
    assert not _holds(text, _stay("2025-05-01"), HOTEL)
    assert not _holds(text, _stay("2025-05-01", "2025-05-02", "2025-05-03"), HOTEL)


@pytest.mark.parametrize("text", [
    "The flight should depart after 08:00 and arrive before 12:00",
    "航班应在08:00之后起飞，12:00之前到达",
    "The flight should arrive before 12:00",
    "航班到达时间不晚于12:00",
    "The flight's departure time should be between 08:00 and 10:00",
])
def test_flight_clocks(text: str) -> None:
    rec = RecordFacts(table="orders", record_id="O", place_id="F1", lines=(LineFacts("S", "Economy", date="2025-05-01"),))
    assert _holds(text, rec, FLIGHT)
    assert not _holds(text, rec, RED_EYE), "leaves at 23:00, lands the next day"


@pytest.mark.parametrize(("text", "ok", "bad"), [
    ("The hotel should be four-star or above", HOTEL, INN),
    ("酒店应为四星级及以上", HOTEL, INN),
    ("The hotel should be a 5-star hotel", HOTEL, INN),
])
def test_hotel_stars(text: str, ok: PlaceInfo, bad: PlaceInfo) -> None:
    rec = _stay("2025-05-01")
    assert _holds(text, rec, ok) and not _holds(text, rec, bad)
    assert all(isinstance(p, TripSpec) and p.what == "stars" for p in spec_parts(compile_item(text, CTX)))


@pytest.mark.parametrize("text", ["The hotel price per night should not exceed 800 yuan", "酒店每晚价格不超过800元"])
def test_per_night_price(text: str) -> None:
    assert _holds(text, _stay("2025-05-01"), HOTEL)
    dear = RecordFacts(table="orders", record_id="O", place_id="H1",
                       lines=(LineFacts("P", "King Room", date="2025-05-01", price=900),))
    assert not _holds(text, dear, HOTEL)


@pytest.mark.parametrize("text", ["Should choose a direct flight", "应选择直飞航班"])
def test_a_place_tag_by_its_kind_noun(text: str) -> None:
    zh = PlaceInfo("F1", "MU5101", tags=("直飞",), kind="flight")
    ctx = ItemContext(now=NOW, places=(FLIGHT, RED_EYE, zh, PlaceInfo("F3", "CA9", tags=("经停",), kind="flight")))
    spec = compile_item(text, ctx)
    assert spec is not None and spec.kind == "feature" and spec.scope == "place"
    assert spec_holds(spec, _stay(), zh if "航班" in text else FLIGHT) and not spec_holds(spec, _stay(), RED_EYE)


@pytest.mark.parametrize("text", [
    "The hotel should not check in on 2025-05-01",  # a negation: the judge's
    "If the flight is full, the train should depart after 08:00",  # a condition
    "The hotel should be booked for 2025-05-01",  # a hotel's bare date: check-in? every night?
    "The flight should depart after 08:00 and have a window seat",  # a part left over
    "The flight should depart after 08:00 and the train should arrive before 12:00",  # two kinds
])
def test_unclear_trip_items_are_not_trip_checks(text: str) -> None:
    spec = compile_item(text, CTX)
    assert spec is None or not any(isinstance(p, TripSpec) for p in spec_parts(spec))


def test_without_travel_places_times_read_as_before() -> None:
    ctx = ItemContext(now=NOW, places=(PlaceInfo("S1", "Noodle House"),))
    spec = compile_item("The flight should arrive before 12:00", ctx)
    assert spec is None or spec.kind == "time_window"
    assert compile_item("The order should arrive before 12:00", ctx).kind == "time_window"


def test_items_are_all_listed() -> None:
    assert len(OTA_ITEMS["en"]) == len(OTA_ITEMS["zh"]) == 22
