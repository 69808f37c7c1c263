"""``get_holiday_date`` and ``get_date_holiday_info``: statutory holidays (the ``holidays`` package),
lunar festivals (``lunardate``) and observances, named in English or Chinese."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lunardate import LunarDate

from servicegym.world_state.core import History
from servicegym.world_state.life.tools import (
    FESTIVAL_BY_KEY,
    FESTIVALS,
    _name_key,
    china_holidays,
    find_festival,
)
from servicegym.world_state.tools import ToolError

LANGUAGES = {"en": "en_US", "zh": "zh_CN"}


def in_language(world, language: str):
    w = world.copy()
    w.extra["language"] = language
    return w


def call(toolkit, world, name, **arguments):
    return toolkit.call(world, History(), name, arguments)


# (English name, Chinese name, year, the day)
GROUND_TRUTH = [
    ("Qixi Festival", "七夕节", 2024, "2024-08-10"),
    ("Qixi Festival", "七夕节", 2025, "2025-08-29"),
    ("Double Ninth Festival", "重阳节", 2024, "2024-10-11"),
    ("Double Ninth Festival", "重阳节", 2025, "2025-10-29"),
    ("Mid-Autumn Festival", "中秋节", 2024, "2024-09-17"),
    ("Mid-Autumn Festival", "中秋节", 2025, "2025-10-06"),
    ("Mother's Day", "母亲节", 2024, "2024-05-12"),
    ("Mother's Day", "母亲节", 2025, "2025-05-11"),
]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("name_language", ["en", "zh"])
@pytest.mark.parametrize(("en_name", "zh_name", "year", "day"), GROUND_TRUTH)
def test_festival_dates_in_english_and_chinese(toolkit, world, language, name_language, en_name, zh_name, year, day):
    name = en_name if name_language == "en" else zh_name
    r = call(toolkit, in_language(world, language), "get_holiday_date", year=str(year), holiday_name=name)
    assert r.ok, r.content
    assert json.loads(r.content) == [day]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize(("en_name", "zh_name", "year", "day"), GROUND_TRUTH)
def test_date_info_names_the_festival_in_the_worlds_language(toolkit, world, language, en_name, zh_name, year, day):
    r = call(toolkit, in_language(world, language), "get_date_holiday_info", date=day)
    assert r.ok, r.content
    expected = zh_name if language == "zh" else en_name
    assert expected in r.content
    if en_name != "Mid-Autumn Festival":  # the only statutory day off among them
        assert ("非法定节假日" if language == "zh" else "not a public holiday") in r.content


def test_date_info_keeps_statutory_names_and_plain_days(toolkit, world):
    en, zh = world, in_language(world, "zh")

    def info(w, day):
        r = call(toolkit, w, "get_date_holiday_info", date=day)
        assert r.ok, r.content
        return json.loads(r.content)

    assert info(en, "2025-05-31") == "Dragon Boat Festival"
    assert info(zh, "2025-05-31") == "端午节"
    assert info(en, "2025-06-02") == "Dragon Boat Festival (observed)"
    assert info(en, "2020-10-01") == "Mid-Autumn Festival; National Day"
    assert info(en, "2025-07-01") == "2025-07-01 is not a holiday"
    assert info(zh, "2025-07-01") == "2025-07-01 不是节假日"
    # Chinese New Year's Eve is a statutory day off from 2025 on, a festival only before
    assert info(en, "2025-01-28") == "Chinese New Year's Eve"
    assert info(en, "2024-02-09") == "Chinese New Year's Eve (not a public holiday)"
    assert info(zh, "2024-02-09") == "除夕（非法定节假日）"


@pytest.mark.parametrize(
    ("name", "year", "days"),
    [
        ("Dragon Boat Festival", 2025, ["2025-05-31"]),  # the statutory day, as before (not the observed one)
        ("National Day", 2025, ["2025-10-01", "2025-10-02", "2025-10-03"]),
        ("Spring Festival", 2025, ["2025-01-29", "2025-01-30", "2025-01-31"]),
        ("除夕", 2024, ["2024-02-09"]),
        ("New Year's Eve (Chinese)", 2025, ["2025-01-28"]),
        ("Lantern Festival", 2025, ["2025-02-12"]),
        ("中元节", 2025, ["2025-09-06"]),
        ("腊八节", 2025, ["2025-01-07"]),
        ("Laba", 2022, ["2022-01-10", "2022-12-30"]),  # the 12th lunar month comes twice in 2022
        ("小年", 2025, ["2025-01-22"]),
        ("Father's Day", 2025, ["2025-06-15"]),
        ("Valentine's Day", 2025, ["2025-02-14"]),
        ("Chinese Valentine's Day", 2025, ["2025-08-29"]),
        ("Qingming", 1990, ["1990-04-05"]),  # before it became a day off (2008)
        ("Dragon Boat", 1990, ["1990-05-28"]),
        ("Children's Day", 2025, ["2025-06-01"]),
        ("教师节", 2025, ["2025-09-10"]),
        ("圣诞节", 2025, ["2025-12-25"]),
    ],
)
def test_more_festivals(toolkit, world, name, year, days):
    r = call(toolkit, world, "get_holiday_date", year=str(year), holiday_name=name)
    assert r.ok, r.content
    assert json.loads(r.content) == days


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("七夕节", "qixi"),
        ("Quixi", "qixi"),
        ("Qixi Festival (Chinese Valentine's Day)", "qixi"),
        ("the Mid Autum Festival 2025", "mid_autumn"),
        ("中秋佳节", "mid_autumn"),
        ("国庆假期", "national"),
        ("Labour Day holiday", "labour"),
        ("Double Ninth Festival (Chongyang)", "double_ninth"),
        ("New Year's Eve (除夕)", "new_years_eve_chinese"),
        ("Mothers' day", "mother"),
        ("Valentine", "valentine"),
        ("情人节", "valentine"),
        ("七夕情人节", "qixi"),
    ],
)
def test_variants_and_misspellings(name, key):
    assert find_festival(name, "en_US").key == key


def test_every_alias_names_its_own_festival():
    owner: dict[str, str] = {}
    for f in FESTIVALS:
        for alias in (f.en, f.zh, *f.aliases):
            assert owner.setdefault(_name_key(alias), f.key) == f.key, f"{alias!r} names two festivals"
            for language in LANGUAGES.values():
                assert find_festival(alias, language).key == f.key, alias
    assert len(FESTIVAL_BY_KEY) == len(FESTIVALS)


@pytest.mark.parametrize("name", ["New Year's Eve", "新年"])
def test_an_ambiguous_name_asks_which(toolkit, world, name):
    r = call(toolkit, world, "get_holiday_date", year="2025", holiday_name=name)
    assert r.outcome == "rejected" and "may mean" in r.content


def test_statutory_dates_agree_with_the_lunar_calendar():
    """The holidays package's lunar holidays start on the day lunardate computes."""
    for year in range(2008, 2100):
        for key, (month, day) in {"spring_festival": (1, 1), "dragon_boat": (5, 5), "mid_autumn": (8, 15)}.items():
            assert FESTIVAL_BY_KEY[key].dates(year)[0] == LunarDate(year, month, day).to_solar_date(), (key, year)
        assert FESTIVAL_BY_KEY["new_years_eve_chinese"].dates(year) == [
            LunarDate(year, 1, 1).to_solar_date() - timedelta(days=1)]


@given(
    year=st.integers(1950, 2090),
    festival=st.sampled_from(FESTIVALS),
    pick=st.integers(0, 100),
    language=st.sampled_from(sorted(LANGUAGES)),
)
def test_any_year_and_known_name_gives_days_of_that_year(toolkit, world, year, festival, pick, language):
    names = (festival.en, festival.zh, *festival.aliases)
    w = in_language(world, language)
    r = call(toolkit, w, "get_holiday_date", year=str(year), holiday_name=names[pick % len(names)])
    if festival.key == "laba" and r.outcome == "rejected":
        # some years (1966, 2023...) have no 8th day of the 12th lunar month: the tool says when it falls
        before, after = (LunarDate(y, 12, 8).to_solar_date() for y in (year - 1, year))
        assert before.year == year - 1 and after.year == year + 1
        assert before.isoformat() in r.content and after.isoformat() in r.content
        return
    assert r.ok, r.content
    days = [date.fromisoformat(d) for d in json.loads(r.content)]
    assert days and days == sorted(set(days)) and all(d.year == year for d in days)
    if festival.key == "new_years_eve_chinese":
        assert days[0].month in (1, 2)


@pytest.mark.parametrize(("language", "known"), [("en", "Qixi Festival"), ("zh", "七夕节")])
def test_unknown_name_is_refused_with_the_known_names(toolkit, world, language, known):
    w = in_language(world, language)
    before = w.state_dict()
    r = call(toolkit, w, "get_holiday_date", year="2025", holiday_name="Festival of Unknown Things")
    assert r.outcome == "rejected" and "known:" in r.content and known in r.content
    assert w.state_dict() == before
    with pytest.raises(ToolError):
        find_festival("x", LANGUAGES[language])


@pytest.mark.parametrize("year", ["1949", "2100", "0"])
def test_years_outside_the_calendars_are_refused(toolkit, world, year):
    r = call(toolkit, world, "get_holiday_date", year=year, holiday_name="Qixi")
    assert r.outcome == "rejected" and "between 1950 and 2099" in r.content


def test_china_holidays_still_serves_the_generators():
    table = china_holidays(2025, "en_US")
    assert sorted(d for d, n in table.items() if n == "Labor Day") == [date(2025, 5, 1), date(2025, 5, 2)]
