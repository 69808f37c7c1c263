"""Duration items: how long an ordered product lasts, and how late a place stays open.

The kinds
    ``DurationSpec``: the service time of what an order holds ("the massage should be 60 minutes or
    more", "must include at least 2 hours of swimming time", "应不少于90分钟", "unlimited time");
    ``HoursSpec``: a place's closing time ("the closing time should be at or after 10 PM", "should
    be open until at least 11 PM", "a 24-hour venue", "营业时间应至少到晚上11点"). Both are read only
    where the catalogue says it: a product's name or tags ("60 minutes", "2-Hour Time Limit",
    "(90 minutes)", "Unlimited Time", "2小时"), a place's tags ("Open until 10 PM", "Open Until
    Midnight", "Open 24 Hours", "Business Hours: 09:00-21:00", "营业至22:00").

The grammar (each reads the subject and the predicate around the modal)
    duration: the item names a length of time ("N hours / minutes / hrs / mins", "an hour", "half
    an hour", "N小时 / N分钟") and speaks of a length: a duration noun in the subject or the
    predicate ("duration", "service / usage / experience / ... time", "时长", "服务时间"), or the
    predicate has the length "of" or "for" something ("2 hours of swimming time", "a 2-hour
    experience"), or the verb offers it ("provide / include / support / offer / cover / allow /
    guarantee / last", "提供 / 包含 / 支持"). The comparison: "at least / no less than / a minimum of
    N", "N or more / or longer", "N以上 / 不少于N" (>=); "more than / over / longer than N" (>); "at
    most / no more than / up to / within N", "N or less", "N以内 / 不超过N" (<=); "less than / under /
    shorter than N" (<); else "==", but the verbs that offer a length ("provide 2 hours") ask for at
    least it. A negation flips the comparison (an exact length negated is left to the judge).
    "(be / have / be for / offer) unlimited (dining / play) time", "no time limit", "不限时" asks
    for an unlimited product. A delivery or arrival ("delivered within 30 minutes"), a walk or a
    drive ("10 minutes' walk") is no product's duration, and a place said to offer a length ("the
    club should offer a 3-hour lesson") is the product reader's (which places sell it). "X can be used for N hours" and "X lasts
    N hours" need no modal (``_usable_item``).
    closing time: the subject names a place or its hours ("closing time", "business hours",
    "opening hours", "营业时间", "关门时间") and the predicate says how late: "(be) (at or after / no
    earlier than / not earlier than / after / later than) 10 PM (or later)", "(be) (open) until (at
    least) 11 PM (or later)", "close (no earlier than / at or after) 10 pm", "(be) open 24 hours",
    "(be) a 24-hour (operation) venue", "至少到晚上11点 / 营业到22点以后 / 不早于22:00 / 24小时营业".
    A clock before 6 AM is after midnight ("open until 2 AM" closes later than 10 PM).

Examples
    "The service time for the massage order should be 40 minutes or more"    >= 40 min
    "The KTV package must support at least 4 hours of singing time"           >= 240 min
    "The ordered yoga class should have a duration of 1.5 hours"              == 90 min
    "The buffet package should have unlimited dining time"                    unlimited
    "按摩套餐的服务时长应不少于60分钟"                                           >= 60 min
    "The nail salon's closing time should be at or after 10 PM"              closes >= 22:00
    "The bar should be open until at least 2 AM"                             closes >= 26:00
    "美甲店的营业时间应至少到晚上11点"                                            closes >= 23:00

The specs and how they are checked
    ``DurationSpec``  every line of the record has one length (its name and tags agree; an
                      unlimited one is longer than any) that compares with ``minutes`` (``op``), or,
                      with ``unlimited``, is unlimited; a line whose length the catalogue does not
                      tell, or tells twice differently, fails, and so does a record without lines.
    ``HoursSpec``     the place's tags tell one closing time (minutes after the day's midnight; open
                      24 hours: later than any) at or after ``closes_at`` (``open_24h``: open 24
                      hours); a place whose tags do not tell fails.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from .clauses import _head_class
from .text import _OP_FLIP, EN_LENGTH_NUM, _compare, _is_zh, _num, _Unclear
from .world import ItemContext, PlaceInfo, RecordFacts, _Spec


class DurationSpec(_Spec):
    """Every line of the record lasts ``minutes`` (``op``), or, with ``unlimited``, has no time limit."""

    kind: Literal["duration"] = "duration"
    op: Literal[">=", ">", "<=", "<", "=="] = ">="
    minutes: float = 0.0
    unlimited: bool = False


class HoursSpec(_Spec):
    """The place closes at or after ``closes_at`` (minutes after midnight; past 24:00 for the small
    hours), or, with ``open_24h``, is open around the clock."""

    kind: Literal["hours"] = "hours"
    closes_at: float = 0.0
    open_24h: bool = False


# ----- what the catalogue says ---------------------------------------------------------------------
_LEN = re.compile(r"(?<![\d.:])(\d+(?:\.\d+)?)\s*-?\s*(hours?|hrs?|h|minutes?|mins?|个小时|小时|分钟)(?![a-z])", re.I)
_UNLIMITED = re.compile(r"\bunlimited (?:time|duration|play ?time|dining time)\b|\bno time limit\b|\btime unlimited\b|"
                        r"\bwithout (?:a )?time limit\b|不限时|无限时|不限时长", re.I)


def line_minutes(name: str, tags: tuple[str, ...]) -> float | None:
    """How long a product lasts, from its name and tags: minutes, ``math.inf`` when unlimited, None
    when they do not tell or disagree."""
    found: set[float] = set()
    unlimited = False
    for text in (name, *tags):
        for n, unit in _LEN.findall(text):
            found.add(round(float(n) * (1.0 if unit.lower().startswith(("m", "分")) else 60.0), 6))
        unlimited = unlimited or bool(_UNLIMITED.search(text))
    if unlimited:
        return math.inf if not found else None
    return found.pop() if len(found) == 1 else None


def duration_holds(spec: DurationSpec, record: RecordFacts) -> bool:
    if not record.lines:
        return False
    for line in record.lines:
        x = line_minutes(line.name, line.tags)
        if x is None:
            return False
        if spec.unlimited:
            if x != math.inf:
                return False
        elif x == math.inf:
            if spec.op not in (">=", ">"):
                return False
        elif not _compare(x, spec.op, spec.minutes):
            return False
    return True


_EN_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)"
_ZH_CLOCK = r"(凌晨|早上|上午|中午|下午|傍晚|晚上|夜里|深夜)?(\d{1,2})(?:[:：](\d{2})|点(半|\d{1,2}分?)?)"
_AROUND_CLOCK = re.compile(r"\bopen 24 hours\b|\b24[- ]?hours?(?: operation| open| service| business)?\b|\b24/7\b|"
                           r"\bopen around the clock\b|24小时营业|全天营业|24小时", re.I)


def _day_minutes(h: int, m: int) -> float:
    """Minutes after the opening day's midnight: a time before 6 AM is after the next midnight."""
    if not (0 <= h <= 24 and 0 <= m < 60):
        raise _Unclear
    x = h * 60 + m
    return x + 24 * 60 if x < 6 * 60 else x


def _en_clock(h: str, m: str | None, half: str) -> float:
    hour = int(h) % 12 + (12 if half.lower().startswith("p") else 0)
    if int(h) > 12:
        raise _Unclear
    return _day_minutes(hour, int(m or 0))


def place_closing(tags: tuple[str, ...]) -> float | None:
    """When a place closes, from its tags (see the module docstring); None when they do not tell
    or tell twice differently."""
    found: set[float] = set()
    for tag in tags:
        t = tag.strip().lower()
        if _AROUND_CLOCK.search(t):
            found.add(math.inf)
            continue
        try:
            m = re.search(rf"\b(?:open|opens?) (?:until|till|to) {_EN_CLOCK}", t)
            if m:
                found.add(_en_clock(m.group(1), m.group(2), m.group(3)))
                continue
            if re.search(r"\bopen (?:until|till) midnight\b", t):
                found.add(24 * 60.0)
                continue
            m = re.search(r"(?:business|opening) hours?:?\s*(\d{1,2}):(\d{2})\s*[-–~to]+\s*(\d{1,2}):(\d{2})|营业时间[:：]?\s*"
                          r"(\d{1,2}):(\d{2})\s*[-–~至到]\s*(\d{1,2}):(\d{2})", t)
            if m:
                g = [x for x in m.groups() if x is not None]
                start, end = int(g[0]) * 60 + int(g[1]), int(g[2]) * 60 + int(g[3])
                found.add(end + 24 * 60 if end <= start else end)
                continue
            m = re.search(r"营业(?:至|到)(\d{1,2})[:：](\d{2})", t)
            if m:
                found.add(_day_minutes(int(m.group(1)), int(m.group(2))))
        except _Unclear:
            return None
    return found.pop() if len(found) == 1 else None


def hours_holds(spec: HoursSpec, place: PlaceInfo) -> bool:
    x = place_closing(place.tags)
    if x is None:
        return False
    if spec.open_24h:
        return x == math.inf
    return x >= spec.closes_at - 1e-9


# ----- the grammar: durations ----------------------------------------------------------------------
_DUR_NOUN = re.compile(r"\b(?:duration|length|time limit|(?:service|usage|use|experience|play|playing|dining|swimming|teaching|"
                       r"class|course|lesson|session|entertainment|massage|treatment|singing|activity|usage|practice|"
                       r"training|companionship|rental|stay|venue|room) (?:time|duration|length|hours))\b|时长|服务时间|"
                       r"使用时间|体验时间|游玩时间|用餐时间|课程时间")
_NOT_PRODUCT = re.compile(r"\b(?:deliver(?:y|ed)?|arriv(?:e|al|es|ing)|walk(?:ing)?|drive|driving|ride|commute|wait(?:ing)?|"
                          r"before|after|ago|advance|earlier|later|in time|open|close|closing|opening)\b|送达|配送|步行|"
                          r"车程|之前|以前|之后|提前|营业")
_OFFER_VERBS = r"(?:provide|provides|include|includes|support|supports|offer|offers|cover|covers|allow|allows|guarantee|last|lasts|" \
               r"give|gives|be used for|be usable for|can be used for|be valid for|run for|runs for)"
_EN_NUM = rf"({EN_LENGTH_NUM})"
_EN_CMP = {"at least": ">=", "no less than": ">=", "not less than": ">=", "a minimum of": ">=", "minimum of": ">=",
           "more than": ">", "over": ">", "longer than": ">", "exceed": ">", "exceeding": ">",
           "at most": "<=", "no more than": "<=", "not more than": "<=", "up to": "<=", "a maximum of": "<=",
           "within": "<=", "less than": "<", "shorter than": "<", "under": "<", "exactly": "=="}
_EN_TAIL = {"or more": ">=", "or longer": ">=", "or above": ">=", "or over": ">=", "and above": ">=", "at least": ">=",
            "or less": "<=", "or shorter": "<=", "or below": "<=", "or under": "<=", "at most": "<="}
_EN_DUR = re.compile(
    rf"^(?P<verb>{_OFFER_VERBS} )?(?:a |an |the |total |of |for )*(?:(?:duration|length|service time|time) of )?"
    rf"(?P<cmp>{'|'.join(sorted(_EN_CMP, key=len, reverse=True))})?\s*(?:a |an )?(?P<n>{_EN_NUM[1:-1]})[\s-]*"
    rf"(?P<u>hours?|hrs?|h|minutes?|mins?)(?: long)?(?P<tail> {'| '.join(_EN_TAIL)})?"
    rf"(?P<rest>(?:'s)?(?: (?:of|for) [a-z' -]{{1,40}}| [a-z -]{{0,30}}\b(?:experience|session|time|duration|service|play|"
    rf"use|usage|class|course|lesson|package|treatment))?)$")
_EN_UNLIMITED = re.compile(r"^(?:be |have |has |offer |provide |include |be for |come with )?(?:an? |the )?(?:for )?"
                           r"(?:unlimited(?: [a-z]+)? time|no time limit|unlimited duration|(?:not|no) time[- ]limited|"
                           r"no time restrictions?)$")
_ZH_CMP = {"至少": ">=", "不少于": ">=", "不低于": ">=", "不短于": ">=", "最少": ">=", "超过": ">", "多于": ">", "长于": ">",
           "不超过": "<=", "最多": "<=", "至多": "<=", "不多于": "<=", "不长于": "<=", "少于": "<", "短于": "<", "低于": "<"}
_ZH_TAIL = {"以上": ">=", "及以上": ">=", "或以上": ">=", "或更长": ">=", "以内": "<=", "之内": "<=", "以下": "<=", "及以下": "<="}
_ZH_DUR = re.compile(
    rf"^(?:为|是|在|有)?(?P<verb>提供|包含|支持|可使用|能使用|可用|涵盖)?(?:的)?(?P<cmp>{'|'.join(_ZH_CMP)})?(?:为)?"
    rf"(?P<n>\d+(?:\.\d+)?|[一二两三四五六七八九十]{{1,3}}|半)(?:个)?(?P<u>小时|分钟)(?P<half>半)?"
    rf"(?P<tail>{'|'.join(sorted(_ZH_TAIL, key=len, reverse=True))})?(?:的[\u4e00-\u9fff]{{0,8}}(?:时间|时长|体验|服务))?$")


def _dur_minutes(n: str, unit: str, half: str = "") -> float:
    v = 0.5 if n in ("half a", "half an", "半") else 1.0 if n in ("a", "an") else _num(n)
    v += 0.5 if half else 0.0
    return v * (1.0 if unit.startswith(("m", "分")) else 60.0)


def _duration_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> DurationSpec | None:
    text = f"{subject} {pred}"
    zh = _is_zh(text)
    if not (_LEN.search(text) or re.search(rf"\b(?:{EN_LENGTH_NUM})[ -](?:hour|minute)s?\b|半小时|unlimited|time limit|限时",
                                           text)):
        return None
    if _NOT_PRODUCT.search(text):
        return None  # a delivery, a walk, a time of day: not how long a product lasts
    p = pred.strip(" .")
    # "the hall should be booked for two hours", "the table tennis booking should be for 2 hours": how long
    # the booked product lasts
    booked = None if zh else re.fullmatch(r"be (?:booked |reserved |made )?for (?P<r>(?:about |around )?\S+[\s-]*"
                                          r"(?:hours?|hrs?|h|minutes?|mins?))", p)
    if booked is not None and not (p.startswith(("be booked", "be reserved", "be made"))
                                   or re.search(r"\b(?:booking|reservation|appointment|session)s?$", subject)):
        booked = None
    if booked is not None:
        p = booked.group("r")
    elif _head_class(subject) == "place" and not _DUR_NOUN.search(subject):
        return None  # "the club should offer a 3-hour lesson": which place sells it (``product``)
    if zh:
        p = re.sub(r"^(?:的)?(?:服务|使用|体验|游玩)?(?:时长|时间)(?:应)?", "", p)
        if neg and re.fullmatch(r"限时(?:长)?", p):
            return DurationSpec(unlimited=True)  # "应不限时"
        if re.fullmatch(r"(?:为|是|应为)?(?:不限时|不限时长|无限时)", p):
            return None if neg else DurationSpec(unlimited=True)
        m = _ZH_DUR.match(p)
        if m is None:
            return None
        if not (_DUR_NOUN.search(text) or m.group("verb")):
            return None
        op = _ZH_CMP.get(m.group("cmp") or "") or _ZH_TAIL.get(m.group("tail") or "") or (">=" if m.group("verb") else "==")
        if m.group("cmp") and m.group("tail") and _ZH_TAIL[m.group("tail")][0] != op[0]:
            raise _Unclear
        minutes = _dur_minutes(m.group("n"), m.group("u"), m.group("half") or "")
    else:
        p = re.sub(r"^(?:be |have |has |with )+(?!for |used |usable |valid )", "", p)
        if _EN_UNLIMITED.match(p):
            if neg:
                raise _Unclear
            return DurationSpec(unlimited=True)
        m = _EN_DUR.match(p)
        if m is None:
            if _DUR_NOUN.search(text) and _LEN.search(p):
                raise _Unclear  # a length said some other way
            return None
        rest = m.group("rest") or ""
        if not (_DUR_NOUN.search(text) or m.group("verb") or rest.strip() or booked is not None
                or _head_class(subject) == "product"):
            return None
        cmp, tail = m.group("cmp"), (m.group("tail") or "").strip()
        op = _EN_CMP.get(cmp or "") or _EN_TAIL.get(tail) or (">=" if m.group("verb") else "==")
        if cmp and tail and _EN_TAIL[tail][0] != op[0]:
            raise _Unclear
        minutes = _dur_minutes(m.group("n"), m.group("u"))
    if neg:
        if op == "==":
            raise _Unclear
        op = _OP_FLIP[op]
    return DurationSpec(op=op, minutes=minutes)  # type: ignore[arg-type]


_USABLE = re.compile(r"^(?P<s>.+?) (?P<neg>cannot|can not|can't)?(?:can )?(?P<v>be used for|be usable for|last|lasts|"
                     r"provides?|includes?|offers?|supports?) (?P<p>.+)$")


def _usable_item(c: str, about: str, ctx: ItemContext) -> DurationSpec | None:
    """"The package can be used for 5 hours", "the class lasts 90 minutes": a length with no modal."""
    if _is_zh(c) or not re.search(r"\bcan (?:be used|be usable|last|provide|include|offer|support)\b|\blasts? \d", c):
        return None
    m = _USABLE.match(c)
    if m is None or re.search(r"\b(?:should|must|need|needs)\b", m.group("s")):
        return None
    verb = "be used for" if m.group("v").startswith("be ") else m.group("v")
    verb = {"lasts": "last", "provides": "provide", "includes": "include", "offers": "offer", "supports": "support"}.get(verb,
                                                                                                                     verb)
    spec = _duration_item(m.group("s"), False, f"{verb} {m.group('p')}", ctx)
    return spec.model_copy(update={"about": about or m.group("s")}) if spec is not None else None


# ----- the grammar: closing time -------------------------------------------------------------------
_HOURS_SUBJ = re.compile(r"\b(?:closing time|closing hours?|business hours|opening hours|operating hours)\b|营业时间|关门时间|"
                         r"打烊时间|闭店时间")
_EN_LATE = re.compile(
    rf"^(?:be )?(?:open |opened |close |closes |closing |operate |operating |run |running )?"
    rf"(?:(?:at least )?(?:until|till|to|through)|at or after|at|no earlier than|not earlier than|after|later than|"
    rf"(?:at )?(?:until|till) at least|at least (?:until|till|to)|until at least)?\s*"
    rf"(?:{_EN_CLOCK}|(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)|(?P<mid>midnight))(?P<tail> or later| or after| at the earliest)?$")
_EN_24 = re.compile(r"^(?:be |have |operate |run |offer )?(?:for )?(?:an? )?(?:open )?(?:24[- ]?h(?:ours?|rs?)?|24/7|around the clock)"
                    r"(?: (?:a day|operation|operating|service|business|open|opening))?(?: (?:venue|shop|store|place|hall|business))?$")
_ZH_LATE = re.compile(rf"^(?:为|是|应)?(?:营业)?(?:至少|最少|不早于)?(?:到|至|营业到|营业至|开到)?{_ZH_CLOCK}(?:或)?(?:以后|之后|或更晚|及以后)?$")


def _hours_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> HoursSpec | None:
    text = f"{subject} {pred}"
    zh = _is_zh(text)
    p = pred.strip(" .")
    if zh:
        if not _HOURS_SUBJ.search(subject) and not re.match(r"^营业(?:到|至)", p):
            if re.fullmatch(r"(?:为|是)?(?:24小时营业|全天营业)(?:的)?(?:商家|店铺|门店|场馆)?", p) and not neg:
                return HoursSpec(open_24h=True)
            return None
        if re.fullmatch(r"(?:为|是)?(?:24小时营业|全天营业|24小时)", p):
            return None if neg else HoursSpec(open_24h=True)
        m = _ZH_LATE.match(p)
        if m is None:
            raise _Unclear
        if neg or not re.search(r"至少|最少|不早于|以后|之后|或更晚|及以后|到|至", p):
            raise _Unclear  # "营业时间应为晚上10点": when it opens, or closes?
        period, h, mm, tail = m.group(1) or "", int(m.group(2)), m.group(3), m.group(4) or ""
        minute = int(mm) if mm else 30 if tail == "半" else int(re.sub(r"\D", "", tail) or 0)
        if period in ("下午", "傍晚", "晚上", "夜里", "深夜") and h < 12:
            h += 12
        return HoursSpec(closes_at=_day_minutes(h, minute))
    p = re.sub(r"^(?:be |have |has |stay |remain )+", "", p)
    subject_hours = bool(_HOURS_SUBJ.search(subject))
    if _EN_24.match(p) and re.search(r"\bopen|operat|business|around the clock|24/7|venue|shop|store|hall", p) \
            and _head_class(subject) != "product":
        if neg:
            raise _Unclear
        return HoursSpec(open_24h=True)
    if not subject_hours and not re.match(r"(?:open|opened|close|closes|closing|operate|operating|run|running) ", p):
        return None
    if subject_hours and re.search(r"\bopening hours?\b", subject) and not re.search(r"until|till|to|later|after", p):
        raise _Unclear
    m = _EN_LATE.match(p)
    if m is None:
        raise _Unclear
    if neg:
        raise _Unclear
    lead = p[:m.start(1) if m.group(1) else m.start("h24") if m.group("h24") else m.start("mid")]
    said_late = re.search(r"until|till|to |through|after|later|no earlier|not earlier", lead) or m.group("tail")
    if not said_late and not re.search(r"\bclos", text):
        raise _Unclear  # "the hours should be 10 PM": opening or closing?
    if not said_late:
        raise _Unclear  # "should close at 10 PM": exactly then, which the tags seldom tell
    closes = 24 * 60.0 if m.group("mid") else _day_minutes(int(m.group("h24")), int(m.group("m24"))) \
        if m.group("h24") else _en_clock(m.group(1), m.group(2), m.group(3))  # "until at least 22:00": a 24-hour clock
    return HoursSpec(closes_at=closes)


def _describe(spec: Any) -> str:
    if isinstance(spec, DurationSpec):
        return "every line lasts unlimited time" if spec.unlimited else f"every line lasts {spec.op} {spec.minutes:g} min"
    h = spec.closes_at
    return "the place is open 24 hours" if spec.open_24h else f"the place closes at or after {int(h // 60):02d}:{int(h % 60):02d}"
