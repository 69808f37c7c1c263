"""The eight tools every VitaBench life-service agent sees, and the relevance ranking and
geocoding they rely on.

Geocoding reads only the task's own address table (VitaBench's public code kept a process-wide
registry that leaked addresses across tasks and grew without bound).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

import holidays
import numpy as np
from lunardate import LunarDate
from rapidfuzz import fuzz, process, utils

from servicegym.world_state.core import DATE_FORMAT, History, haversine_m
from servicegym.world_state.life.entities import LifeWorld, Location
from servicegym.world_state.tools import (
    Precondition,
    RawJson,
    ToolError,
    dumps,
    field_in,
    field_problem,
    no_record,
    tool,
)

SEARCH_THRESHOLD = 60.0
GEOCODE_THRESHOLD = 85.0


class SearchIndex:
    """Search texts of a catalogue, normalised once (lower case, no punctuation)."""

    __slots__ = ("ids", "texts")

    def __init__(self, docs: dict[str, str]) -> None:
        self.ids = list(docs)
        self.texts = [utils.default_process(t) for t in docs.values()]


def rank(
    keywords: list[str], docs: dict[str, str] | SearchIndex, top_k: int, threshold: float = SEARCH_THRESHOLD
) -> list[tuple[str, float]]:
    """Ids of ``docs`` ranked by fuzzy relevance to ``keywords`` (mean of the per-keyword best
    partial match, rounded to 0.01), keeping those at or above ``threshold``; ties keep catalogue
    order."""
    index = docs if isinstance(docs, SearchIndex) else SearchIndex(docs)
    if not index.ids or not keywords:
        return []
    queries = [utils.default_process(k) for k in keywords]
    # with one keyword the threshold can prune each comparison early; a mean cannot be pruned so
    cutoff = threshold if len(queries) == 1 else 0
    matrix = process.cdist(queries, index.texts, scorer=fuzz.partial_ratio, score_cutoff=cutoff)
    scores = np.round(matrix.mean(axis=0), 2)
    out: list[tuple[str, float]] = []
    for i in np.argsort(-scores, kind="stable"):
        s = float(scores[i])
        if s < threshold or len(out) == top_k:
            break
        out.append((index.ids[i], s))
    return out


def search_index(world: LifeWorld, table: str, text: Callable[[Any], str], name: str | None = None) -> SearchIndex:
    """The search index of ``table``, built once per task and shared by its episodes (build it in
    the world's ``prepare``; searches only read it). ``name`` keeps a second index of the same
    table apart (VitaBench's search texts)."""
    key = f"_index_{name or table}"
    index = world.extra.get(key)
    if index is None:
        index = SearchIndex({row.key: text(row) for row in world.tables[table]})
        world.extra[key] = index
    return index


# ----- VitaBench parity -------------------------------------------------------------------------
# A world built from a VitaBench task file carries the release whose tool behaviour it follows
# (world spec key ``vitabench_release``); a generated task's world carries none and keeps
# servicegym's own rules. README ("VitaBench files") lists the differences.
RELEASE_KEY = "vitabench_release"  # its values: ``life.spec.RELEASES``
# VitaBench's search tools return every catalogue entry ranked, cut at a fixed top_k:
SEARCH_CAPS = {
    "2025-11": {"delivery": 100, "instore": 1000, "ota": 100},
    "2026": {"delivery": 50, "instore": 50, "ota": 50},
}
DEFAULT_TOP_K = 10  # a generated task's search results when the agent names no top_k
MAX_TOP_K = 50  # the largest top_k of a generated task's search
VITABENCH_GEOCODE_SCORE = 30  # VitaBench's address lookup: best partial match at least this...
VITABENCH_GEOCODE_RATIO = 20  # ...and a plain similarity of at least this


def vitabench_release(world: LifeWorld) -> str | None:
    """The VitaBench release (``"2025-11"`` or ``"2026"``) whose tool behaviour ``world`` follows,
    or None for a generated task's world (servicegym's own rules)."""
    return world.extra.get(RELEASE_KEY)


def search_cap(world: LifeWorld, domain: str) -> int:
    """The most results one search of ``domain`` (delivery, instore, ota) returns: VitaBench's cap
    of the world's release, or ``MAX_TOP_K`` in a generated task."""
    release = vitabench_release(world)
    return MAX_TOP_K if release is None else SEARCH_CAPS[release][domain]


def top_k_problem(world: LifeWorld, domain: str, top_k: int | None) -> str | None:
    """Why ``top_k`` is out of range for a search of ``domain`` in ``world``, or None."""
    cap = search_cap(world, domain)
    if top_k is not None and not 1 <= top_k <= cap:
        return f"top_k must be between 1 and {cap}"
    return None


def rank_all(query: str, index: SearchIndex, limit: int) -> list[tuple[str, float]]:
    """VitaBench's ranking (``rerank`` of its utils, thefuzz ``process.extract`` with no limit):
    every document, by the partial match of the whole ``query`` (lower case, no punctuation)
    against its text, best first, ties in catalogue order, no threshold; the first ``limit``.
    Scores are rounded to 0.01. Unlike VitaBench, documents with the same text keep their own ids
    (its reverse lookup gave every one of them the last one's)."""
    if not index.ids or limit < 1:
        return []
    q = utils.default_process(query)
    if not q:  # thefuzz scores an empty query 0 against everything: catalogue order
        return [(i, 0.0) for i in index.ids[:limit]]
    scores = process.cdist([q], index.texts, scorer=fuzz.partial_ratio, dtype=np.float64)[0]
    order = np.argsort(-scores, kind="stable")[:limit]
    return [(index.ids[i], round(float(scores[i]), 2)) for i in order]


def search_hits(
    world: LifeWorld,
    domain: str,
    keywords: list[str],
    top_k: int | None,
    index: Callable[[], SearchIndex],
    vitabench_index: Callable[[], SearchIndex],
) -> list[tuple[str, float]]:
    """(id, relevance) of one keyword search. A generated task: ``rank`` (per-keyword matches
    averaged, threshold 60, ``top_k`` or 10 results). A VitaBench task: ``rank_all`` of the
    keywords joined without a separator, as VitaBench does, over VitaBench's search texts,
    ``top_k`` or the release's cap results."""
    release = vitabench_release(world)
    if release is None:
        return rank(keywords, index(), DEFAULT_TOP_K if top_k is None else top_k)
    cap = SEARCH_CAPS[release][domain]
    return rank_all("".join(keywords), vitabench_index(), cap if top_k is None else min(top_k, cap))


def unless_vitabench(pre: Precondition, note: str = "not checked in VitaBench tasks") -> Precondition:
    """``pre``, except in a VitaBench task's world, where VitaBench does not check it."""

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        return None if vitabench_release(world) else pre.check(world, history, args)

    return Precondition(f"{pre.text} ({note})", check, pre.after)


def status_rule(
    table: str, arg: str, what: str, allowed: Iterable[str], vitabench_refused: Iterable[str] = ("cancelled",)
) -> Precondition:
    """The record's status is one of ``allowed``; in a VitaBench task's world, as in VitaBench,
    it is only not one of ``vitabench_refused``."""
    ours = field_in(table, arg, what, allowed)
    allowed_t, refused = tuple(allowed), tuple(vitabench_refused)

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        row = world.tables[table].rows.get(args.get(arg))
        if row is None:
            return no_record(what, args.get(arg))
        return status_problem(world, row, what, allowed_t, refused)

    return Precondition(f"{ours.text} (in VitaBench tasks: any but {', '.join(refused)})", check, ours.after)


def status_problem(
    world: LifeWorld, row: Any, what: str, allowed: tuple[str, ...], vitabench_refused: tuple[str, ...] = ("cancelled",)
) -> str | None:
    """Why ``row`` (a ``what``) fails ``status_rule(..., allowed, vitabench_refused)``, or None: for
    a rule that has looked the row up already."""
    if vitabench_release(world) is None:
        return field_problem(row, what, allowed)
    if row.status in vitabench_refused:
        return f"{what} {row.key} is already {row.status}"
    return None


def order_check(
    kind_problem: Callable[[Any], str | None], prior: Precondition | None, allowed: tuple[str, ...], vitabench_any: bool
) -> Any:
    """A life domain's order write rules ``[order exists, kind_problem, prior, status]`` in one
    function (``tool(check=...)``): the order looked up once. ``kind_problem(order)`` says why the
    order is not this domain's (delivery, in-store); ``status`` is ``status_rule(..., allowed)``
    when ``vitabench_any`` (any status but cancelled in a VitaBench task), else ``field_in(...,
    allowed)``; no ``prior`` when None."""
    prior_check = prior.check if prior is not None else None

    def check(world: LifeWorld, history: History, args: dict[str, Any]) -> str | None:
        oid = args.get("order_id")
        order = world.tables["orders"].rows.get(oid)
        if order is None:
            return no_record("order", oid)
        problem = kind_problem(order) or (prior_check(world, history, args) if prior_check is not None else None)
        if problem:
            return problem
        return status_problem(world, order, "order", allowed) if vitabench_any else field_problem(order, "order", allowed)

    return check


def _vitabench_geocode(world: LifeWorld, address: str) -> Location | None:
    """VitaBench's address lookup: the address with the best partial match (catalogue order on
    ties), if that match rounds to at least 30 and the plain similarity of the two texts as typed
    rounds to at least 20."""
    table = world.tables["locations"]
    best = process.extractOne(address, list(table.rows), scorer=fuzz.partial_ratio, processor=utils.default_process)
    if best is None or int(round(best[1])) < VITABENCH_GEOCODE_SCORE:
        return None
    if int(round(fuzz.ratio(address, best[0]))) < VITABENCH_GEOCODE_RATIO:
        return None
    return table.rows[best[0]]


def geocode(world: LifeWorld, address: str) -> Location:
    """The task's address ``address`` names: the same text, or else the one closest in wording
    (a generated task: token-set similarity of at least 85; a VitaBench task: VitaBench's lookup,
    which also takes a part of an address); ToolError when none is close."""
    table = world.tables["locations"]
    address = address.strip()
    if not address:
        raise ToolError("address is empty")
    hit = table.get(address)
    if hit is not None:
        return hit
    if vitabench_release(world):
        hit = _vitabench_geocode(world, address)
        if hit is None:
            raise ToolError(
                f"no coordinates known for address {address!r}; use an address from the user's profile, "
                "order history or the conversation"
            )
        return hit
    best = process.extractOne(
        address, list(table.rows), scorer=fuzz.token_set_ratio, processor=utils.default_process
    )
    if best is None or best[1] < GEOCODE_THRESHOLD:
        raise ToolError(
            f"no coordinates known for address {address!r}; use an address from the user's profile, "
            "order history or the conversation"
        )
    return table.rows[best[0]]


def _check_date(text: str, what: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT)
    except ValueError:
        raise ToolError(f"{what} must be a date in the form YYYY-MM-DD, got {text!r}") from None


@lru_cache(maxsize=64)
def china_holidays(year: int, language: str) -> dict[Any, str]:
    return dict(holidays.China(years=year, language=language))


def _holiday_language(world: LifeWorld) -> str:
    return "zh_CN" if world.extra.get("language") == "zh" else "en_US"


# ----- holidays, festivals and observances -----------------------------------------------------
# Statutory days off come from the ``holidays`` package; lunar festivals from ``lunardate``;
# solar terms from the ``holidays`` package's Chinese calendar; observances by their rule.
FESTIVAL_YEARS = (1950, 2099)  # holidays.China starts in 1950; lunardate ends with lunar 2099


def _lunar(month: int, day: int) -> Callable[[int], list[date]]:
    def dates(year: int) -> list[date]:
        # a festival of the 12th lunar month may fall in January of the next year (or not at all)
        found = (LunarDate(y, month, day).to_solar_date() for y in (year - 1, year))
        return [d for d in found if d.year == year]

    return dates


def _chinese_new_years_eve(year: int) -> list[date]:
    return [LunarDate(year, 1, 1).to_solar_date() - timedelta(days=1)]


def _solar_term(term: str) -> Callable[[int], list[date]]:
    def dates(year: int) -> list[date]:
        from holidays.calendars.chinese import _ChineseLunisolar

        return [getattr(_ChineseLunisolar(), f"{term}_date")(year)[0]]

    return dates


def _fixed(month: int, day: int) -> Callable[[int], list[date]]:
    return lambda year: [date(year, month, day)]


def _nth_weekday(month: int, weekday: int, n: int) -> Callable[[int], list[date]]:
    def dates(year: int) -> list[date]:
        first = date(year, month, 1)
        return [first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))]

    return dates


class Festival(NamedTuple):
    key: str
    en: str
    zh: str
    rule: Callable[[int], list[date]]
    aliases: tuple[str, ...]
    statutory: str = ""  # the holidays package's English name of its statutory days off

    def name(self, language: str) -> str:
        return self.zh if language == "zh_CN" else self.en

    def dates(self, year: int) -> list[date]:
        if self.statutory:
            official = sorted(
                d for d, n in china_holidays(year, "en_US").items() if self.statutory in n.split("; ")
            )
            if official:
                return official
        return self.rule(year)


FESTIVALS = (
    Festival("new_year", "New Year's Day", "元旦", _fixed(1, 1),
             ("New Year's Day", "元旦", "元旦节", "公历新年", "阳历新年"), "New Year's Day"),
    Festival("new_years_eve_chinese", "Chinese New Year's Eve", "除夕", _chinese_new_years_eve,
             ("Chinese New Year's Eve", "Lunar New Year's Eve", "New Year's Eve (Chinese)", "Spring Festival Eve",
              "Chuxi", "除夕", "除夕夜", "大年三十", "年三十", "农历除夕", "大年夜"), "Chinese New Year's Eve"),
    Festival("spring_festival", "Spring Festival (Chinese New Year)", "春节", _lunar(1, 1),
             ("Spring Festival", "Chinese New Year", "Lunar New Year", "Chinese New Year (Spring Festival)",
              "Chunjie", "春节", "农历新年", "过年"), "Chinese New Year (Spring Festival)"),
    Festival("lantern", "Lantern Festival", "元宵节", _lunar(1, 15),
             ("Lantern Festival", "Yuanxiao", "Yuanxiao Festival", "Shangyuan Festival", "元宵", "元宵节", "上元节",
              "正月十五")),
    Festival("dragon_head", "Dragon Head-Raising Day", "龙抬头", _lunar(2, 2),
             ("Dragon Head-Raising Day", "Dragon Head Raising Festival", "Longtaitou", "龙抬头", "二月二", "春龙节")),
    Festival("qingming", "Tomb-Sweeping Day (Qingming)", "清明节", _solar_term("qingming"),
             ("Qingming", "Qingming Festival", "Tomb-Sweeping Day", "Tomb-Sweeping Festival", "Ching Ming Festival",
              "清明", "清明节"), "Tomb-Sweeping Day"),
    Festival("labour", "Labour Day", "劳动节", _fixed(5, 1),
             ("Labour Day", "Labor Day", "May Day", "International Workers' Day", "劳动节", "五一", "五一劳动节",
              "国际劳动节"), "Labor Day"),
    Festival("dragon_boat", "Dragon Boat Festival", "端午节", _lunar(5, 5),
             ("Dragon Boat", "Dragon Boat Festival", "Duanwu", "Duanwu Festival", "Tuen Ng Festival", "端午",
              "端午节", "端阳节"), "Dragon Boat Festival"),
    Festival("qixi", "Qixi Festival (Chinese Valentine's Day)", "七夕节", _lunar(7, 7),
             ("Qixi", "Qixi Festival", "Chinese Valentine's Day", "Double Seventh Festival", "Qiqiao Festival",
              "七夕", "七夕节", "七夕情人节", "中国情人节", "乞巧节")),
    Festival("ghost", "Ghost Festival (Zhongyuan)", "中元节", _lunar(7, 15),
             ("Ghost Festival", "Hungry Ghost Festival", "Zhongyuan Festival", "中元", "中元节", "鬼节", "盂兰盆节")),
    Festival("mid_autumn", "Mid-Autumn Festival", "中秋节", _lunar(8, 15),
             ("Mid-Autumn", "Mid-Autumn Festival", "Moon Festival", "Mooncake Festival", "Zhongqiu", "中秋",
              "中秋节", "八月十五"), "Mid-Autumn Festival"),
    Festival("national", "National Day", "国庆节", _fixed(10, 1),
             ("National Day", "China National Day", "国庆", "国庆节", "十一"), "National Day"),
    Festival("double_ninth", "Double Ninth Festival (Chongyang)", "重阳节", _lunar(9, 9),
             ("Double Ninth", "Double Ninth Festival", "Chongyang", "Chongyang Festival", "Chung Yeung Festival",
              "重阳", "重阳节", "重九节", "老人节", "敬老节")),
    Festival("winter_solstice", "Winter Solstice (Dongzhi)", "冬至", _solar_term("winter_solstice"),
             ("Winter Solstice", "Dongzhi", "Dongzhi Festival", "冬至", "冬至节")),
    Festival("laba", "Laba Festival", "腊八节", _lunar(12, 8), ("Laba", "Laba Festival", "腊八", "腊八节")),
    Festival("little_new_year", "Little New Year (Xiaonian)", "小年", _lunar(12, 23),
             ("Little New Year", "Xiaonian", "Kitchen God Festival", "小年", "祭灶节")),
    Festival("valentine", "Valentine's Day", "情人节", _fixed(2, 14),
             ("Valentine's Day", "St. Valentine's Day", "Saint Valentine's Day", "情人节", "西方情人节")),
    Festival("women", "International Women's Day", "妇女节", _fixed(3, 8),
             ("Women's Day", "International Women's Day", "妇女节", "三八妇女节", "三八节", "国际妇女节", "女神节")),
    Festival("arbor", "Arbor Day", "植树节", _fixed(3, 12), ("Arbor Day", "Tree Planting Day", "植树节")),
    Festival("youth", "Youth Day", "青年节", _fixed(5, 4), ("Youth Day", "May Fourth Youth Day", "青年节", "五四青年节")),
    Festival("mother", "Mother's Day", "母亲节", _nth_weekday(5, 6, 2), ("Mother's Day", "Mothers Day", "母亲节")),
    Festival("children", "Children's Day", "儿童节", _fixed(6, 1),
             ("Children's Day", "International Children's Day", "儿童节", "六一", "六一儿童节", "国际儿童节")),
    Festival("father", "Father's Day", "父亲节", _nth_weekday(6, 6, 3), ("Father's Day", "Fathers Day", "父亲节")),
    Festival("army", "Army Day", "建军节", _fixed(8, 1), ("Army Day", "PLA Day", "建军节", "八一建军节")),
    Festival("teachers", "Teachers' Day", "教师节", _fixed(9, 10), ("Teachers' Day", "Teacher's Day", "教师节")),
    Festival("halloween", "Halloween", "万圣夜", _fixed(10, 31), ("Halloween", "万圣夜", "万圣节前夜")),
    Festival("singles", "Singles' Day (Double Eleven)", "双十一", _fixed(11, 11),
             ("Singles' Day", "Double Eleven", "Double 11", "双十一", "双11", "光棍节")),
    Festival("thanksgiving", "Thanksgiving", "感恩节", _nth_weekday(11, 3, 4),
             ("Thanksgiving", "Thanksgiving Day", "感恩节")),
    Festival("christmas_eve", "Christmas Eve", "平安夜", _fixed(12, 24), ("Christmas Eve", "平安夜")),
    Festival("christmas", "Christmas", "圣诞节", _fixed(12, 25), ("Christmas", "Christmas Day", "Xmas", "圣诞", "圣诞节")),
    Festival("new_years_eve", "New Year's Eve (December 31)", "跨年夜", _fixed(12, 31),
             ("New Year's Eve (December 31)", "Gregorian New Year's Eve", "跨年夜", "跨年")),
)
FESTIVAL_BY_KEY = {f.key: f for f in FESTIVALS}
# names that mean different days to different people: the tool asks which
AMBIGUOUS_NAMES = {
    "New Year's Eve": ("new_years_eve_chinese", "new_years_eve"),
    "New Year": ("new_year", "spring_festival"),
    "新年": ("new_year", "spring_festival"),
}
_NAME_SUFFIXES = ("goldenweek", "黄金周", "holidays", "holiday", "假期", "festival", "day", "节日", "佳节", "节")


def _name_key(text: str) -> str:
    """Case-folded letters and digits only, without a year ("2025", "2025年") or a leading "the"."""
    text = re.sub(r"(?<![0-9])(19|20)[0-9]{2}(?![0-9])年?", "", unicodedata.normalize("NFKC", text)).casefold()
    key = "".join(ch for ch in text if ch.isalnum())
    return key[3:] if key.startswith("the") and len(key) > 5 else key


def _stripped(key: str) -> list[str]:
    """The key without its trailing "festival", "day", "节", "holiday"... one after another."""
    out = []
    while True:
        suffix = next((s for s in _NAME_SUFFIXES if key.endswith(s) and len(key) - len(s) >= 2), None)
        if suffix is None:
            return out
        key = key[: -len(suffix)]
        out.append(key)


@lru_cache(maxsize=1)
def _name_index() -> tuple[dict[str, str], dict[str, set[str]], dict[str, tuple[str, ...]]]:
    """(exact alias -> festival, alias without its suffix -> festivals, ambiguous name -> festivals)."""
    exact: dict[str, str] = {}
    loose: dict[str, set[str]] = {}
    for f in FESTIVALS:
        for alias in (f.en, f.zh, *f.aliases):
            key = _name_key(alias)
            exact.setdefault(key, f.key)
            for short in _stripped(key):
                loose.setdefault(short, set()).add(f.key)
    ambiguous = {_name_key(n): keys for n, keys in AMBIGUOUS_NAMES.items()}
    return exact, loose, ambiguous


def _resolve_exact(key: str) -> str | tuple[str, ...] | None:
    """A festival's key, the keys of an ambiguous name, or None."""
    exact, loose, ambiguous = _name_index()
    for k in (key, *_stripped(key)):
        if k in exact:
            return exact[k]
        if k in ambiguous:
            return ambiguous[k]
        if len(loose.get(k, ())) == 1:
            return next(iter(loose[k]))
    return None


def find_festival(name: str, language: str) -> Festival:
    """The festival a name means: an alias first, then the parts of "A (B)" or "A / B", then a close spelling."""
    exact, loose, _ = _name_index()
    found = _resolve_exact(_name_key(name))
    if found is None:
        parts = [_name_key(p) for p in re.split(r"[()（）/／]", name)]
        hits = {_resolve_exact(p) for p in parts if p} - {None}
        named = {h for h in hits if isinstance(h, str)}
        if len(named) == 1 and all(isinstance(h, str) or named <= set(h) for h in hits):
            found = named.pop()  # "New Year's Eve (除夕)": the part that names one festival picks it
        elif not named and len(hits) == 1:
            found = hits.pop()
    if found is None:
        key = _name_key(name)
        spelled = {**{k: v for k, (v, *more) in loose.items() if not more}, **exact}
        scored = process.extract(key, list(spelled), scorer=fuzz.ratio, limit=None, score_cutoff=85) if key else []
        best = max((s for _, s, _ in scored), default=None)
        keys = tuple(sorted({spelled[a] for a, s, _ in scored if s == best}))
        found = keys[0] if len(keys) == 1 else keys or None
    if isinstance(found, str):
        return FESTIVAL_BY_KEY[found]
    if found:
        options = " / ".join(FESTIVAL_BY_KEY[k].name(language) for k in found)
        raise ToolError(f"{name!r} may mean {options}; ask again with one of these names")
    known = ", ".join(f.name(language) for f in FESTIVALS)
    raise ToolError(f"no holiday named {name!r}; known: {known}")


@lru_cache(maxsize=256)
def festival_dates(year: int) -> tuple[tuple[Festival, tuple[date, ...]], ...]:
    """Every known festival with its dates in a year (a statutory one: its statutory days off)."""
    if not FESTIVAL_YEARS[0] <= year <= FESTIVAL_YEARS[1]:
        return ()
    return tuple((f, tuple(f.dates(year))) for f in FESTIVALS)


@tool(kind="generic")
def longitude_latitude_to_distance(
    world: LifeWorld, longitude1: float, latitude1: float, longitude2: float, latitude2: float
) -> float:
    """Great-circle distance in metres between two points, rounded to the metre.

    Args:
        longitude1: Longitude of the first point.
        latitude1: Latitude of the first point.
        longitude2: Longitude of the second point.
        latitude2: Latitude of the second point.
    """
    return round(haversine_m(longitude1, latitude1, longitude2, latitude2), 0)


@tool(kind="generic")
def weather(world: LifeWorld, address: str, date_start: str, date_end: str) -> list[dict[str, Any]]:
    """Weather forecast for the city of an address over a date range (inclusive).

    Args:
        address: An address or a city name.
        date_start: First date, YYYY-MM-DD.
        date_end: Last date, YYYY-MM-DD.
    """
    start, end = _check_date(date_start, "date_start"), _check_date(date_end, "date_end")
    rows = list(world.tables["weather"])
    cities = sorted({w.city for w in rows})
    if not cities:
        raise ToolError("no weather information is available")
    best = process.extractOne(address, cities, scorer=fuzz.partial_ratio, processor=utils.default_process)
    if best is None or best[1] < 50:
        raise ToolError(f"no weather information for {address!r}; known cities: {', '.join(cities)}")
    hits = [
        w for w in rows if w.city == best[0] and start <= datetime.strptime(w.datetime, DATE_FORMAT) <= end
    ]
    hits.sort(key=lambda w: w.datetime)
    return [w.model_dump(mode="json", exclude={"id"}) for w in hits]


@tool(kind="generic")
def address_to_longitude_latitude(world: LifeWorld, address: str) -> list[float]:
    """Coordinates [longitude, latitude] of an address known to this task. An address that is not exactly one of the task's is matched to the closest in wording: in tasks from VitaBench files, as VitaBench does, the one that contains it best (so part of an address, e.g. a building or a road, is enough when it is close to a known one); otherwise only a near-complete address matches.

    Args:
        address: The full address text.
    """
    loc = geocode(world, address)
    return [loc.longitude, loc.latitude]


@tool(kind="generic")
def get_date_holiday_info(world: LifeWorld, date: str) -> str:
    """Whether a date is a public holiday in China (a statutory day off, or a day off moved by the
    official schedule), and which traditional festivals (Qixi, Double Ninth, Laba...) or observances
    (Mother's Day, Valentine's Day, Christmas...) fall on it.

    Args:
        date: The date, YYYY-MM-DD.
    """
    day = _check_date(date, "date").date()
    language = _holiday_language(world)
    official = china_holidays(day.year, language).get(day)
    english = china_holidays(day.year, "en_US").get(day)
    covered = set(english.split("; ")) if english else set()  # statutory festivals the official name gives
    others = [f.name(language) for f, days in festival_dates(day.year) if day in days and f.statutory not in covered]
    if official:
        return "; ".join([official, *others])
    if others:
        return "; ".join(others) + ("（非法定节假日）" if language == "zh_CN" else " (not a public holiday)")
    return f"{date} 不是节假日" if language == "zh_CN" else f"{date} is not a holiday"


@tool(kind="generic")
def get_holiday_date(world: LifeWorld, year: str, holiday_name: str) -> list[str]:
    """Dates, in a given year, of a Chinese public holiday, traditional festival or observance.

    A public holiday (New Year's Day, Spring Festival, Tomb-Sweeping Day, Labour Day, Dragon Boat
    Festival, Mid-Autumn Festival, National Day) gives its statutory days off in China; a lunar
    festival (Chinese New Year's Eve, Lantern Festival, Qixi, Ghost Festival, Double Ninth, Laba, Little
    New Year), a solar term (Winter Solstice) or an observance (Valentine's Day, Women's Day, Mother's
    Day, Children's Day, Father's Day, Teachers' Day, Christmas...) gives its day in that year.

    Args:
        year: The year, e.g. 2025.
        holiday_name: The holiday's name in English or Chinese, e.g. Dragon Boat Festival, 七夕节, Mother's Day.
    """
    # ASCII digits only: str.isdigit() also admits "²", which int() refuses
    if not re.fullmatch(r"[0-9]{1,4}", year.strip()):
        raise ToolError(f"year must be a number such as 2025, got {year!r}")
    number, (first, last) = int(year), FESTIVAL_YEARS
    if not first <= number <= last:
        raise ToolError(f"year must be between {first} and {last}, got {year!r}")
    language = _holiday_language(world)
    festival = find_festival(holiday_name, language)
    days = festival.dates(number)
    if not days:  # the 8th day of the 12th lunar month skips some years (2023) and comes twice in others
        before, after = festival.rule(number - 1)[-1], festival.rule(number + 1)[0]
        name = festival.name(language)
        if language == "zh_CN":
            raise ToolError(f"{number}年没有{name}：前后最近的是 {before} 和 {after}")
        raise ToolError(f"no {name} falls in {number}; the nearest are {before} and {after}")
    return [d.isoformat() for d in days]


@tool(kind="read")
def get_user_historical_behaviors(world: LifeWorld) -> dict[str, Any]:
    """The user's profile and historical consumption habits (preferences, recent orders, searches)."""
    value = world.extra.get("user_historical_behaviors", {})
    # set once from the task and never changed in place: its JSON is kept for the object, for every
    # episode of the task (most routes start with this read)
    return world.cached_text("user_historical_behaviors", (), lambda: RawJson(dumps(value)), source=value)


@tool(kind="read")
def get_user_all_orders(world: LifeWorld) -> list[Any]:
    """All of the user's orders, of every type and status."""
    return list(world.tables["orders"])


@tool(kind="read")
def get_nearby(world: LifeWorld, longitude: float, latitude: float, range: float) -> list[dict[str, Any]]:
    """Places (stores, shops, hotels, ...) within a radius of a point, nearest first.

    Args:
        longitude: Longitude of the centre.
        latitude: Latitude of the centre.
        range: Radius in metres.
    """
    found = []
    for name in world.place_tables:
        for row in world.tables[name]:
            loc = world.place_location(row)
            if loc is None:
                continue
            d = round(haversine_m(longitude, latitude, loc.longitude, loc.latitude), 0)
            if d <= range:
                found.append((d, world.place_summary(name, row) | {"distance_m": d}))
    found.sort(key=lambda x: x[0])
    return [f for _, f in found]


SHARED_TOOLS = [
    longitude_latitude_to_distance,
    weather,
    address_to_longitude_latitude,
    get_date_holiday_info,
    get_holiday_date,
    get_user_historical_behaviors,
    get_user_all_orders,
    get_nearby,
]
