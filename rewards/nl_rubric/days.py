"""Days a product can be used or a place is open: "the go-kart product should be available on weekends", "the
flower shop should be open on Saturdays", "the order should be usable on June 10, 2024 (Dragon Boat Festival)",
"the restaurant order must be valid for use on July 20, 2025 (Sunday)", "套餐应周末可用", "应在节假日可以使用".

The grammar (``_days_item``)
    a predicate "be available / usable / valid (for use) / open / bookable on <days>" (Chinese "<days>可用 / 可以使用 /
    营业", "可在<days>使用", "适用于<days>"), where <days> is weekends, weekdays, holidays, a day of the week, or a date
    (its day of the week from the calendar; a festival or holiday named in brackets after it makes it a holiday).
    Days joined with "and" are all of them ("Saturdays and Sundays"); with "or", and a negated demand, the judge's.

How it is checked (``DaysSpec``, ``days_holds``): the catalogue states the days a thing cannot be used by an
exclusion ("Not Available on Weekends", "Closed on Saturdays", "周末不可用") or by a restriction to the other days
("Weekday Only", "Weekday Limited", "Weekday Special", "仅限工作日", "工作日专享"); every ordered line's product
(``scope="product"``), or the place (``"place"``), must state none of them. A thing that states no restriction
can be used any day: the conversation gives the agent nothing else to go by. Read only where some product (some
place, for a place's days) of the task speaks of those days at all; otherwise the check would tell nothing apart,
and the item is the judge's.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from typing import Literal

from .clauses import _head_class
from .text import _is_zh, _Unclear
from .time_tokens import _tokens
from .world import ItemContext, PlaceInfo, RecordFacts, _found, _place_fields, _Spec


class DaysSpec(_Spec):
    """The days a product must be usable on (``scope="product"``: every ordered line's name and tags) or a
    place open on (``"place"``: its name, tags and category): none of them states an exclusion of ``days``
    ("weekend", "weekday", "holiday", "monday" ... "sunday") or a restriction to the other days."""

    kind: Literal["days"] = "days"
    scope: Literal["product", "place"] = "product"
    days: list[str]


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

# the words each class of day is said with (English words are matched by stem: "weekends" is "weekend")
_TERMS_EN = {"weekend": ("weekend",), "weekday": ("weekday", "monday to friday"), "holiday": ("holiday", "public holiday",
                                                                                            "festival"),
             **{d: (d,) for d in _WEEKDAYS}}
_TERMS_ZH = {"weekend": ("周末", "双休日"), "weekday": ("工作日", "平日", "周一至周五"),
             "holiday": ("节假日", "法定节假日", "节日", "假日"),
             **{d: (f"周{c}", f"星期{c}", f"礼拜{c}") for c, i in _ZH_WEEKDAY.items() for d in [_WEEKDAYS[i]]}}

_EN_PRED = re.compile(r"^(?:be |remain |still be )?(?:(?:available|usable|valid|redeemable|bookable|open|opened|operating)"
                      r"(?: for (?:use|booking|redemption))?|(?:be )?used|able to be used)"
                      r" (?:on|during|for|at) (?:the )?(?P<d>.+?)\.?$")
_ZH_DAYS = r"([^，,。；;]{2,16}?)"
_ZH_PRED = re.compile(rf"^(?:(?:应|要|需|需要|必须)?(?:在|于)?{_ZH_DAYS}(?:也|均|都)?(?:可以|可|能|能够|支持)?(?:使用|用|营业|开放|核销|消费)"
                      rf"|(?:可以|可|能|能够|支持)(?:在|于)?{_ZH_DAYS}(?:使用|用|营业|开放|核销|消费)"
                      rf"|(?:适用于|可用于){_ZH_DAYS})的?$")
# a date with its remark in brackets ("June 10, 2024 (Dragon Boat Festival)", "2024年6月10日（周一）")
_REMARK = re.compile(r"^(?P<d>[^()（）]+?)\s*(?:[（(](?P<x>[^()（）]*)[)）])?$")
_HOLIDAY_WORDS = re.compile(r"festival|holiday|new year|national day|labou?r day|节|假")


class _Either(_Unclear):
    """Days said as alternatives: days all the same, but which of them the item leaves open."""


def _date_of(d: str) -> tuple[_dt.date, str] | None:
    """The date ``d`` is, by the time reader's date grammar (``time_tokens._tokens``), with the remark in brackets
    after it; None when ``d`` is no whole date with its year."""
    m = _REMARK.match(d)
    if m is None:
        return None
    head = m.group("d").strip()
    toks = _tokens(head)
    if len(toks) != 1 or toks[0].kind != "date" or (toks[0].start, toks[0].end) != (0, len(head)):
        return None
    y, month, day = toks[0].value
    try:
        return (_dt.date(y, month, day), m.group("x") or "") if y else None
    except ValueError:
        raise _Unclear from None


def _day_classes(d: str, zh: bool) -> set[str]:
    """The classes of day that ``d`` says: {"weekend", "saturday"} for Saturdays and for a date that is one."""
    d = d.strip(" .。")
    date = _date_of(d)
    if date is None:
        parts = [x.strip() for x in re.split(r",?\s+(?:and|or)\s+|,\s*|和|及|、|或", d) if x.strip()]
        if len(parts) > 1:  # "Saturdays and Sundays", "weekdays and weekends": every one of them
            days = {k for x in parts for k in _day_classes(x, zh)}
            if re.search(r"\bor\b|或", d):
                raise _Either  # "weekdays or weekends": either, which the item leaves open
            return days
    if date is not None:
        day, remark = date
        weekday = day.weekday()
        out = {_WEEKDAYS[weekday], "weekend" if weekday >= 5 else "weekday"}
        if _HOLIDAY_WORDS.search(remark):
            out.add("holiday")
        return out
    terms = _TERMS_ZH if zh else _TERMS_EN
    found = [k for k, words in terms.items() if any(
        (w == d) if zh else re.fullmatch(rf"(?:(?:public|statutory) )?{w}s?", d) for w in words)]
    if len(found) != 1:
        raise _Unclear
    k = found[0]
    if k in _WEEKDAYS:
        return {k, "weekend" if _WEEKDAYS.index(k) >= 5 else "weekday"}
    return {k}


@lru_cache(maxsize=64)
def _excluding(days: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for every phrase, in either language, by which a product or place says it cannot be used on
    ``days`` (matched against its casefolded fields; an English word in its plural too)."""
    phrases = _exclusions(set(days), False) + _exclusions(set(days), True)
    alts = [re.escape(x) if _is_zh(x) else r"\b" + r"\s+".join(re.escape(w) + "s?" for w in x.split()) + r"\b"
            for x in phrases]
    return re.compile("|".join(sorted(alts, key=len, reverse=True)))


def days_holds(spec: DaysSpec, record: RecordFacts, place: PlaceInfo | None) -> bool:
    rx = _excluding(tuple(sorted(spec.days)))
    if spec.scope == "place":
        return place is not None and not any(rx.search(f.casefold()) for f in _place_fields(place))
    return bool(record.lines) and not any(rx.search(f.casefold()) for x in record.lines for f in (x.name, *x.tags))


def describe_days(spec: DaysSpec) -> str:
    what = "the place" if spec.scope == "place" else "every product"
    return f"{what} states no exclusion of {' / '.join(sorted(spec.days))} (nor a restriction to other days)"


def _exclusions(days: set[str], zh: bool) -> list[str]:
    """The phrases by which a product or place says it cannot be used on ``days``."""
    terms = _TERMS_ZH if zh else _TERMS_EN
    # a restriction to weekdays (weekends) excludes a demanded day it does not cover: a Saturday, a weekend (a
    # Monday, the weekdays); a holiday may count as a weekend or not, so a restriction that only a holiday's
    # reading would decide is not read (a holiday on a Monday and "Weekday Only" / "Weekend Only")
    covers = {"weekday": {"weekday", *_WEEKDAYS[:5]}, "weekend": {"weekend", *_WEEKDAYS[5:]}}
    other = {r for r, covered in covers.items() if any(d not in covered for d in days - {"holiday"})
             and not ("holiday" in days and (r == "weekend" or "weekday" in days))}
    out: list[str] = []
    for k in sorted(days):
        for t in terms[k]:
            if zh:
                out += [f"{t}{x}" for x in ("不可用", "不可使用", "不能使用", "不适用", "不通用", "不营业", "休息", "闭店",
                                            "除外", "不可预约")] + [f"不含{t}"]
            else:
                out += [f"not available on {t}", f"unavailable on {t}", f"not valid on {t}", f"not usable on {t}",
                        f"closed on {t}", f"not open on {t}", f"{t} not available", f"{t} unavailable", f"{t} excluded",
                        f"excluding {t}", f"except {t}", f"{t} closed"]
    for k in sorted(other):
        for t in terms[k]:
            if zh:
                out += [f"仅{t}", f"仅限{t}", f"只限{t}", f"限{t}", f"{t}专享", f"{t}限定", f"{t}特惠", f"{t}特价"]
            else:
                out += [f"{t} only", f"only on {t}", f"{t} limited", f"limited to {t}", f"{t} exclusive", f"{t} special",
                        f"only available on {t}", f"available on {t} only"]
    return list(dict.fromkeys(out))


def _days_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> DaysSpec | None:
    zh = _is_zh(subject + pred)
    m = (_ZH_PRED if zh else _EN_PRED).match(pred.strip())
    if m is None:
        return None
    d = next(g for g in m.groups() if g)
    try:
        days = _day_classes(d, zh)
    except _Either:
        raise _Unclear from None  # "weekdays or weekends": the judge's, not another reader's
    except _Unclear:
        return None  # not days ("available on the menu", "open at 10:00"): another reader's
    if neg:
        raise _Unclear  # "should not be available on weekends"
    opening = re.search(r"\b(?:open|opened|operating)\b|营业|开放", pred) is not None
    scope = "place" if _head_class(subject) == "place" or opening else "product"
    terms = _TERMS_ZH if zh else _TERMS_EN
    spoken = [t for k in set(terms) for t in terms[k]]
    if not any(_found(t, ctx, scope) for t in spoken):
        raise _Unclear  # nothing in the catalogue speaks of days: the check would tell nothing apart
    return DaysSpec(scope=scope, days=sorted(days))
