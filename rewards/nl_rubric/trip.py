"""Trip items: the dates, clock times, nights, stars and per-night price of a travel order (VitaBench
OTA: hotels, attractions, flights, trains with dated products).

The kind
    ``TripSpec``: a travel order's date (an attraction visit's or a flight's or train's travel
    date: every line's date), a hotel stay's check-in (its first night) or check-out (the day after
    its last night), its number of nights, a flight's or train's departure or arrival clock, a
    hotel's star class. ``order_type`` is the kind of travel order the item names ("hotel",
    "attraction", "flight", "train"): the record's place must be of that kind.

The grammar (``_trip_item``, read on the whole item before the time windows, and only when the
task's world has travel places and the item names a kind of travel order: "hotel / 酒店 / 入住",
"flight / 航班 / 机票", "train / 火车 / 高铁 / 列车", "attraction / ticket / 景点 / 门票")
    dates: YYYY-MM-DD (or YYYY/MM/DD, YYYY年M月D日), "M月D日", "May 1(st)" (the year: the task's now's,
    or the next one when that day is over a month past); a date after "check-in / check in / 入住" is
    the check-in, after "check-out / check out / 离店 / 退房" the check-out (in Chinese also a date just
    before "入住" or "离店 / 退房": "5月1日入住"); any other date of a
    flight, train or attraction order is its travel date (a hotel's bare date is left to the judge).
    clocks: HH:MM, "N点(半)", "N(:MM) am/pm"; "depart / leave / take off / departure (time) ... after /
    later than / no earlier than / from / before / earlier than / no later than / by / between A and
    B HH:MM", "arrive / arrival / land / reach (in X) before ... HH:MM"; "在HH:MM(之)?后起飞 / 出发 / 发车",
    "HH:MM(之)?前到达 / 抵达", "起飞 / 出发 / 到达时间 (不早于 / 不晚于 / 晚于 / 早于 / 在) HH:MM (之后 / 之前)".
    Bounds are inclusive; an arrival earlier than the departure is the next day, so it fails "before".
    stars: "N-star (hotel) (or above / or higher / and above / or below)", "at least N stars",
    "N星级(酒店)(及以上 / 以上 / 及以下)", "星级不低于N星" (N in digits or number words).
    nights: "(stay / book) (for) N nights", "入住N晚 / 住N晚 / N个晚上".
    per-night price: "(the hotel) price / rate / cost per night (should) not exceed / be at most / be no
    more than / be under / be below / be within N (yuan)", "每晚(价格 / 房价)不超过 / 不高于 / 低于 / 在N元以内":
    a ``price.PriceSpec`` of each line's unit price (a hotel line is one night).
    a place's tag by its kind noun: "choose / select / book / take a X flight / train / hotel", "选择X航班 /
    火车 / 酒店", "the flight should be X", "航班应为X": X must be a tag of a place of that kind, and a
    place of that kind must lack it (else no check could fail): a ``feature.FeatureSpec`` of the place.
    Every part of the item must be read: what is left once the dates, clocks, kind words and fillers
    ("the", "should", "and", "date", "的", "应", ...) and the places' cities are taken out must be
    nothing, else the item is the other readers' (or the judge's). A negation is left to the judge.

Examples
    "The hotel order's check-in date should be 2025-05-01 and check-out 2025-05-03";
    "酒店入住日期应为2025-05-01，离店日期为2025-05-03"; "The flight should depart after 08:00 and arrive
    before 12:00"; "航班应在08:00之后起飞，12:00之前到达"; "The train should depart on 2025-05-03";
    "景点门票日期应为2025-05-02"; "酒店应为四星级及以上"; "The hotel stay should be 2 nights";
    "酒店每晚价格不超过800元"; "应选择直飞航班"

How ``TripSpec`` is checked (``trip_holds``, against the record and its place)
    date: every line's date is the value; check_in: the first night's date; check_out: the last
    night's date plus one day; nights: the number of distinct nights; depart / arrive: the place's
    clock (minutes after midnight; an arrival before the departure plus a day) compares with the
    value; stars: the place's star class compares with the value. A record without lines, or a
    place not of ``order_type``, fails.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Literal

from .feature import FeatureSpec
from .price import PriceSpec
from .text import _compare, _is_zh, _Unclear, _zh_number, phrase_in
from .world import ItemContext, PlaceInfo, RecordFacts, _Spec

TRAVEL_KINDS = ("hotel", "attraction", "flight", "train")


class TripSpec(_Spec):
    """A travel order's date, check-in, check-out, nights, departure or arrival clock, or its
    hotel's stars (see the module docstring)."""

    kind: Literal["trip"] = "trip"
    what: Literal["date", "check_in", "check_out", "nights", "depart", "arrive", "stars"]
    op: Literal["==", ">=", "<=", ">", "<"] = "=="
    value: str  # YYYY-MM-DD, HH:MM, or an integer
    order_type: Literal["hotel", "attraction", "flight", "train", ""] = ""


PLACE_TRIP = ("depart", "arrive", "stars")


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")[:2]
    return int(h) * 60 + int(m)


def trip_holds(spec: TripSpec, record: RecordFacts, place: PlaceInfo | None) -> bool:
    if spec.order_type and (place is None or place.kind != spec.order_type):
        return False
    if spec.what in PLACE_TRIP:
        if place is None:
            return False
        if spec.what == "stars":
            return bool(place.stars) and _compare(place.stars, spec.op, float(spec.value))
        if not place.departs or not place.arrives:
            return False
        dep, arr = _minutes(place.departs), _minutes(place.arrives)
        t = dep if spec.what == "depart" else arr + (24 * 60 if arr < dep else 0)
        return _compare(t, spec.op, _minutes(spec.value))
    dates = sorted({x.date for x in record.lines})
    if not dates or "" in dates:
        return False
    if spec.what == "date":
        return dates == [spec.value]
    if spec.what == "nights":
        return _compare(len(dates), spec.op, float(spec.value))
    if spec.what == "check_in":
        return dates[0] == spec.value
    out = (datetime.strptime(dates[-1], "%Y-%m-%d") + timedelta(days=1)).strftime("%Y-%m-%d")
    return out == spec.value


def describe_trip(spec: TripSpec) -> str:
    what = {"date": "travel date", "check_in": "check-in date", "check_out": "check-out date", "nights": "nights",
            "depart": "departure clock", "arrive": "arrival clock", "stars": "hotel stars"}[spec.what]
    return f"the {spec.order_type or 'travel'} order's {what} {spec.op} {spec.value}"


# ----- the grammar ----------------------------------------------------------------------------------
_KIND_WORDS: dict[str, str] = {
    "hotel": r"\bhotels?\b|\bcheck[- ]?(?:in|out)\b|\brooms?\b|酒店|宾馆|入住|离店|退房|房型",
    "flight": r"\bflights?\b|\bairlines?\b|\bplane\b|航班|机票|飞机|起飞",
    "train": r"\btrains?\b|\brailway\b|火车|高铁|动车|列车|车次",
    "attraction": r"\battractions?\b|\bscenic\b|景点|景区|门票",
}
_EN_MONTHS = {m: i + 1 for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                               "september", "october", "november", "december"))}
_DATE = re.compile(r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*[日号]?"
                   r"|(?<!\d)(?P<zm>\d{1,2})月(?P<zd>\d{1,2})[日号]"
                   r"|\b(?P<em>" + "|".join(_EN_MONTHS) + r")\s+(?P<ed>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(?P<ey>\d{4}))?")
_CLOCK = r"(?:(?P<h>\d{1,2}):(?P<mi>\d{2})|(?P<ah>\d{1,2})(?::(?P<am>\d{2}))?\s*(?P<ap>am|pm)\b|(?P<zh>\d{1,2})点(?P<half>半)?)"
_EN_AFTER = r"after|later than|no earlier than|not earlier than|at or after|from|at the earliest"
_EN_BEFORE = r"before|earlier than|no later than|not later than|by|at the latest"
_EN_DEP = r"depart(?:s|ing|ure)?|leav(?:e|es|ing)|take[s]? off|takeoff|departure time"
_EN_ARR = r"arriv(?:e|es|ing|al)|lands?|landing|reach(?:es)?|arrival time"
_EN_CLOCK = re.compile(rf"(?P<verb>{_EN_DEP}|{_EN_ARR})(?:\s+time)?(?:\s+(?:in|at|into)\s+[a-z]+)?"
                       rf"(?:\s+(?:should be|must be|is|be))?\s+(?:(?P<rel>{_EN_AFTER}|{_EN_BEFORE})\s+{_CLOCK}"
                       rf"|between\s+(?P<lo>\d{{1,2}}:\d{{2}})\s+and\s+(?P<hi>\d{{1,2}}:\d{{2}}))")
_ZH_AFTER = r"之后|以后|后"
_ZH_BEFORE = r"之前|以前|前"
_ZH_VERB = r"起飞|出发|发车|到达|抵达"
_ZH_CLOCK = re.compile(rf"(?:在|于)?(?:(?:早上|上午|中午|下午|晚上)\s*)?{_CLOCK}\s*(?P<rel>{_ZH_AFTER}|{_ZH_BEFORE})(?P<verb>{_ZH_VERB})"
                       rf"|(?P<verb2>{_ZH_VERB})时间(?:应)?(?:为|在|是)?(?P<rel2>不早于|不晚于|晚于|早于)?{_CLOCK.replace('?P<', '?P<b')}"
                       rf"(?P<rel3>{_ZH_AFTER}|{_ZH_BEFORE})?")
_STARS = re.compile(r"(?:at least\s+)?(?P<n>\d|one|two|three|four|five|[一二三四五])[- ]?(?:stars?|星级?)(?:\s*hotel|酒店)?"
                    r"(?:\s*(?P<rel>or above|or higher|and above|or more|or below|or lower|及以上|以上|及以下|以下))?"
                    r"|(?:星级)(?:应)?(?P<zrel>不低于|不高于|至少)(?P<zn>[一二三四五\d])星(?:级)?")
_NIGHTS = re.compile(r"(?:(?:stay|book|booked|reserve)\w*\s+(?:for\s+)?)?(?P<n>\d+|one|two|three|four|five|six|seven)\s+nights?\b"
                     r"|(?:入住|住)?(?P<zn>\d+|[一二两三四五六七])(?:个)?(?:晚上|晚|夜)")
_PER_NIGHT = re.compile(r"(?:price|rate|cost|room rate|room price)s?\s+per\s+night|per[- ]night\s+(?:price|rate|cost)|每晚(?:的)?(?:价格|房价|费用)?"
                        r"|(?:价格|房价)每晚")
_PRICE_CAP = re.compile(r"(?:not exceed|not be more than|not be higher than|be at most|be no more than|be under|be below|"
                        r"be less than|be within|不超过|不高于|不得超过|不能超过|低于|少于|在)\s*(?P<n>\d+(?:\.\d+)?)\s*(?:yuan|rmb|元)?(?:以内|以下|之内)?")
_FILLER = frozenset({"the", "a", "an", "order", "orders", "should", "must", "be", "is", "are", "need", "needs", "to", "and",
                     "date", "dates", "on", "for", "of", "in", "at", "its", "it", "time", "booking", "reservation",
                     "stay", "ticket", "tickets", "trip", "journey", "travel", "schedule", "scheduled", "book", "booked",
                     "selected", "chosen", "s", "also", "departure", "departs", "depart", "with", "both", "set",
                     "hotel", "hotels", "flight", "flights", "train", "trains", "attraction", "attractions", "room",
                     "check", "out", "scenic", "spot", "area", "visit", "return", "outbound", "inbound"})
_ZH_FILLER = re.compile(r"应该|应当|应|需要|需|必须|要|为|是|的|日期|时间|订单|和|且|并且|并|在|也|都|酒店|宾馆|入住|离店|退房|"
                        r"航班|机票|火车票|火车|高铁|动车|列车|车次|景点|景区|门票|票|出发|乘坐|预订|预定|选择|当天|当日|返程|去程|"
                        r"本次|这次|该")


def _year_for(m: int, d: int, now: datetime) -> int:
    y = now.year
    try:
        if datetime(y, m, d) < now - timedelta(days=30):
            y += 1
    except ValueError:
        raise _Unclear from None
    return y


def _date_of(m: re.Match[str], now: datetime) -> str:
    if m.group("y"):
        y, mo, d = int(m.group("y")), int(m.group("m")), int(m.group("d"))
    elif m.group("zm"):
        mo, d = int(m.group("zm")), int(m.group("zd"))
        y = _year_for(mo, d, now)
    else:
        mo, d = _EN_MONTHS[m.group("em")], int(m.group("ed"))
        y = int(m.group("ey")) if m.group("ey") else _year_for(mo, d, now)
    try:
        return datetime(y, mo, d).strftime("%Y-%m-%d")
    except ValueError:
        raise _Unclear from None


def _clock_of(m: re.Match[str], p: str = "") -> str:
    g = m.groupdict()
    if g.get(p + "h"):
        h, mi = int(g[p + "h"]), int(g[p + "mi"])
    elif g.get(p + "ah"):
        h, mi = int(g[p + "ah"]) % 12 + (12 if g[p + "ap"] == "pm" else 0), int(g.get(p + "am") or 0)
    else:
        h, mi = int(g[p + "zh"]), 30 if g.get(p + "half") else 0
        before = m.string[max(0, m.start() - 4):m.start() + 4]
        if re.search(r"下午|晚上", before) and h < 12:
            h += 12
    if h > 24 or mi > 59:
        raise _Unclear
    return f"{h % 24:02d}:{mi:02d}"


def _int(word: str) -> int:
    n = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}.get(word)
    if n is None:
        n = int(word) if word.isdigit() else _zh_number(word)
    if n is None:
        raise _Unclear
    return n


def _kind_of(t: str) -> str:
    """The one kind of travel order the item names ("" when none, or several)."""
    kinds = [k for k, rx in _KIND_WORDS.items() if re.search(rx, t)]
    if "flight" in kinds and "train" in kinds:
        return ""
    if len(kinds) > 1 and "hotel" in kinds:  # "rooms" of a hotel, "tickets" of a flight
        kinds = [k for k in kinds if k != "hotel"] if not re.search(r"hotel|酒店|宾馆|入住|离店|退房", t) else ["hotel"]
    if len(kinds) > 1 and "attraction" in kinds and not re.search(r"attraction|scenic|景点|景区", t):
        kinds.remove("attraction")
    return kinds[0] if len(kinds) == 1 else ""


def _leftover(t: str, spans: list[tuple[int, int]], ctx: ItemContext) -> bool:
    """Whether anything but fillers and the places' cities is left once the read spans are out."""
    chars = list(t)
    for a, b in spans:
        chars[a:b] = [" "] * (b - a)
    rest = "".join(chars)
    for p in ctx.places:
        for city in p.cities:
            if city:
                rest = rest.replace(city.casefold(), " ")
    rest = _ZH_FILLER.sub(" ", rest)
    words = re.findall(r"[a-z0-9]+|[\u3400-\u9fff]+", rest.replace("'s", " "))
    return any(w not in _FILLER for w in words)


def _trip_item(t: str, ctx: ItemContext) -> Any | None:
    """A trip item read on the whole (normalised) text: a ``TripSpec``, a list of them, a per-night
    ``PriceSpec`` or a place ``FeatureSpec``; None when the item is not one (see the grammar)."""
    if not any(p.kind for p in ctx.places):
        return None
    kind = _kind_of(t)
    if not kind or re.search(r"\b(?:not|no|never|cannot|avoid)\b|不应|不能|不要|避免|不可|别", re.sub(
            r"no (?:earlier|later|more) than|not (?:earlier|later) than|not exceed|not be (?:more|higher) than|"
            r"不超过|不高于|不得超过|不能超过|不早于|不晚于|不低于", " ", t)):
        return None
    if re.search(r"\b(?:if|unless|otherwise|so|therefore|because|since)\b|如果|否则|所以|因此|因为|若", t):
        return None
    now = ctx.now
    spans: list[tuple[int, int]] = []
    parts: list[Any] = []
    price = _per_night(t, kind)
    if price is not None:
        return price
    for m in (_ZH_CLOCK if _is_zh(t) else _EN_CLOCK).finditer(t):
        spans.append(m.span())
        if _is_zh(t):
            verb = m.group("verb") or m.group("verb2")
            rel = m.group("rel") or m.group("rel2") or m.group("rel3")
            if rel is None:
                raise _Unclear
            clock = _clock_of(m) if m.group("verb") else _clock_of(m, "b")
            op = ">=" if re.fullmatch(rf"{_ZH_AFTER}|不早于|晚于", rel) else "<="
            what = "depart" if verb in ("起飞", "出发", "发车") else "arrive"
            parts.append(TripSpec(what=what, op=op, value=clock, order_type=kind))
            continue
        what = "depart" if re.match(_EN_DEP, m.group("verb")) else "arrive"
        if m.group("lo"):
            lo, hi = m.group("lo"), m.group("hi")
            parts += [TripSpec(what=what, op=">=", value=f"{int(lo[:-3]):02d}:{lo[-2:]}", order_type=kind),
                      TripSpec(what=what, op="<=", value=f"{int(hi[:-3]):02d}:{hi[-2:]}", order_type=kind)]
            continue
        op = ">=" if re.fullmatch(_EN_AFTER, m.group("rel")) else "<="
        parts.append(TripSpec(what=what, op=op, value=_clock_of(m), order_type=kind))
    for m in _DATE.finditer(t):
        if any(a <= m.start() < b for a, b in spans):
            continue
        spans.append(m.span())
        before = t[:m.start()]
        roles = [(x.end(), "check_in") for x in re.finditer(r"check[- ]?in|入住", before)] + \
                [(x.end(), "check_out") for x in re.finditer(r"check[- ]?out|离店|退房", before)]
        after = re.match(r"\s*(?:(?P<i>入住)|(?P<o>离店|退房))", t[m.end():])  # "5月1日入住，5月3日退房"
        if after:
            roles.append((len(t), "check_in" if after.group("i") else "check_out"))
        role = max(roles)[1] if roles else ("date" if kind != "hotel" else "")
        if not role:
            raise _Unclear
        parts.append(TripSpec(what=role, value=_date_of(m, now), order_type=kind))  # type: ignore[arg-type]
    if kind == "hotel":
        for m in _STARS.finditer(t):
            spans.append(m.span())
            n = _int(m.group("n") or m.group("zn"))
            rel = m.group("rel") or m.group("zrel") or ("at least" if t[m.start():].startswith("at least") else "")
            op = ">=" if re.search(r"above|higher|more|以上|不低于|至少|at least", rel) else "<=" if rel else "=="
            if not 1 <= n <= 5:
                raise _Unclear
            parts.append(TripSpec(what="stars", op=op, value=str(n), order_type=kind))
        for m in _NIGHTS.finditer(t):
            if any(a <= m.start() < b for a, b in spans):
                continue
            spans.append(m.span())
            parts.append(TripSpec(what="nights", value=str(_int(m.group("n") or m.group("zn"))), order_type=kind))
    if not parts:
        return _kind_tag(t, kind, ctx)
    if _leftover(t, spans, ctx):
        return None
    return parts


def _per_night(t: str, kind: str) -> Any | None:
    if kind != "hotel" or not _PER_NIGHT.search(t):
        return None
    cap = _PRICE_CAP.search(t[_PER_NIGHT.search(t).end():])  # type: ignore[union-attr]
    if cap is None:
        raise _Unclear
    strict = bool(re.match(r"be under|be below|be less than|低于|少于", cap.group(0)))
    return PriceSpec(scope="unit", high=float(cap.group("n")), high_strict=strict)


_KIND_NOUN = {"flight": r"flight|航班|机票", "train": r"train|火车|高铁|列车|车次", "hotel": r"hotel|酒店|宾馆"}


def _kind_tag(t: str, kind: str, ctx: ItemContext) -> Any | None:
    """"choose a direct flight", "应选择直飞航班", "the flight should be direct", "航班应为直飞": a tag of
    the places of that kind, which some place of that kind lacks."""
    noun = _KIND_NOUN.get(kind)
    if noun is None:
        return None
    m = re.fullmatch(rf"(?:the user )?(?:should|must|need to|needs to)?\s*(?:choose|select|book|take|pick)\s+(?:an?|the)\s+"
                     rf"(?P<x>[a-z][a-z -]{{1,40}}?)\s+(?:{noun})\.?"
                     rf"|(?:应该?|需要|必须)?(?:选择|预订|乘坐)(?P<zx>[\u3400-\u9fff\w]{{1,10}}?)(?:的)?(?:{noun})"
                     rf"|(?:the )?(?:{noun})\s+(?:should|must)\s+be\s+(?:an?\s+)?(?P<ex>[a-z][a-z -]{{1,40}}?)(?:\s+(?:{noun}))?\.?"
                     rf"|(?:{noun})(?:应该?|必须)(?:为|是)(?P<zy>[\u3400-\u9fff\w]{{1,10}}?)(?:的)?(?:{noun})?", t.strip(" .。"))
    if m is None:
        return None
    x = (m.group("x") or m.group("zx") or m.group("ex") or m.group("zy") or "").strip()
    same = [p for p in ctx.places if p.kind == kind]
    has = [p for p in same if any(phrase_in(x, tag) or phrase_in(tag, x) for tag in p.tags)]
    if not x or not has or len(has) == len(same):
        return None
    tags = sorted({tag for p in has for tag in p.tags if phrase_in(x, tag) or phrase_in(tag, x)})
    if len(tags) != 1:
        return None
    return FeatureSpec(scope="place", phrases=[tags[0]])
