"""Time items: when an order is delivered, or when a visit (booking, reservation) takes place.

The kind
    An item that bounds a delivery's or a visit's time: "around", "before", "after", "between",
    "within an hour", "as soon as possible", or a bare time ("should be 18:00"). It is read first,
    before every other kind (``compile_item``), by ``compile_time_item(text, now)``; ``now`` is the
    task's static time, against which "today", "tomorrow", "within an hour" and times without a date
    are read.

The grammar (every step a bounded pattern or a single pass, so the parse is linear in the text,
and it never raises)
    1. normalise (``text.normalise``); weekday names are dropped.
    2. conclusion and clauses (``clauses._clauses``): the text after the last "therefore / so the /
       所以 / 因此", split into clauses, each cut at its first purpose marker.
    3. subject: only clauses that name the time bounded count: a delivery ("delivery time",
       "delivered", "送达", "配送时间"), a visit ("reservation / appointment time", "the booking
       must be for ...", "booked around ...", "the appointment must be no later than ...", "预约时间",
       "到店", "预约最晚..."), or an arrival ("arrive", "到达": the loader decides which). A clause without a subject right after one continues it ("deliver
       tomorrow, at 6 pm"). An item with no subject clause, or naming both a delivery and a visit, is
       no time item ("the tour lasts 3 hours", "opened before 2010").
    4. tokens: dates (2025-07-04, 2025年7月4日, 7月4日, July 4(, 2025), 4 July), relative days (today,
       tomorrow, tonight, 今天, 明天, 今晚, 后天), day periods (上午, 下午, 晚上, in the evening), clock
       times (19:00, 7 pm, 7:15 p.m., noon, 19点, 七点半, 8点一刻), durations (an hour, 45 minutes,
       半小时, 40分钟), qualifiers, range connectors (and, to, -, 至, 到) and "as soon as possible". A
       date and a clock side by side ("19:00 on 2025-07-04", "2025年7月4日19点", "明天上午10:00")
       are one point in time.
    5. constraints: a point with the qualifier next to it ("before 19:00", "19:00左右", "不晚于...",
       "不超过14:00"; none means exact), or "before / after" far from it across an event ("before the
       meeting starts at 19:00", "在19:00的会议开始之前"; "by" never: "by the rider at 7" is exact), or
       a range "A and/to/-/至 B" (its own "between", "之间", "时间段内", even "around", only confirm it). A clock without a date takes its range partner's date, else the
       item's only date, else today's or tomorrow's (see ``UNDATED_GRACE_MIN``); several dates with an
       undated clock are ambiguous. Without a point in time: "within <duration>", else "as soon as
       possible"; a lone date ("on July 4") bounds that whole day.
    6. one window: equal constraints merge; a range and an "around"/exact point inside it give the
       range ("20:00左右，即19:45到20:15之间"); "after A" with "before B" give [A, B]; a point with a cap
       ("around 12:00, not later than 14:00", "12点左右，最晚不超过2点": a bare hour after a time past noon is
       in the afternoon) gives [T - tolerance, cap], with a floor [floor, T + tolerance]; anything else
       (two different times, "之间" with one time, "not around noon") is ambiguous: None.

Examples (now = 2025-07-04 10:00)
    "The lunch should be delivered around 12:30"         around [12:30 ± 15 min]
    "The spa appointment time must be no later than 4 pm tomorrow"   visit before 2025-07-05 16:00
    "Deliver the pizza between 6 and 7 pm"               between 18:00 and 19:00
    "The parcel should arrive within 45 minutes"         arrival within [10:00, 10:45]
    "水果订单应在明天下午3点到5点之间送达"                  between 2025-07-05 15:00 and 17:00
    "餐厅预约时间应为今晚7点半"                              visit exact 19:30 (± 5 min)
    "药品订单应尽快送达"                                     as soon as possible

The spec: ``TimeWindow`` (subject, relation, earliest, latest, tolerance). How it is checked: the
record's time t (a delivery's arrival, a visit's time) must lie in the window widened by the
tolerance (``TimeWindow.accepts``); ``rewards/vitabench.py`` ties the window to the records.

The tolerance policy (the one place these numbers live)
    ``AROUND_TOLERANCE_MIN``  "around / about / approximately / 左右 / 大约 T": |t - T| <= 15 min.
    ``EXACT_TOLERANCE_MIN``   "should be T" with no qualifier: |t - T| <= 5 min (an 8-minute miss fails).
    bounds                    "before / no later than / by / 之前 / 以前 / 不晚于 T": t <= T; "after /
                              之后 / 以后 T": t >= T; "between A and B / A到B之间 / A-B": A <= t <= B;
                              "within an hour / 一小时内": now <= t <= now + 1 h; all inclusive, no slack.
    ``ASAP_SLACK_MIN``        "as soon as possible / 尽快 / 立即": at most 10 min after the earliest
                              possible arrival (now + the order's own delivery duration).
    ``TARGET_MARGIN_MIN``     how far inside a one-sided bound a golden route aims ("before T": T - 10 min).
    ``UNDATED_GRACE_MIN``     a clock time without any date is today's when it is at most 60 min before
                              now, else tomorrow's ("before 9:00" said at 21:00 is tomorrow morning).
    ``PAST_DATE_DAYS``        a month and day without a year are this year's, or next year's when that
                              would lie more than 30 days before now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_serializer

from servicegym.world_state.core import TIME_FORMAT

from .clauses import _clauses
from .text import MAX_ITEM_CHARS, normalise
from .time_tokens import (
    _CAP_WORDS,
    _FAR_GAP_EN,
    _FAR_GAP_ZH,
    _FAR_QUALS,
    _GLUE_POINT,
    _GLUE_QUAL,
    _GLUE_RANGE,
    _NEGATED,
    _glue,
    _Tok,
    _tokens,
)

AROUND_TOLERANCE_MIN = 15.0
EXACT_TOLERANCE_MIN = 5.0
BOUND_TOLERANCE_MIN = 0.0
ASAP_SLACK_MIN = 10.0
TARGET_MARGIN_MIN = 10.0
UNDATED_GRACE_MIN = 60.0
PAST_DATE_DAYS = 30

Relation = Literal["around", "exact", "before", "after", "between", "within", "asap"]
Subject = Literal["delivery", "visit", "arrival"]

TOLERANCE_MIN: dict[str, float] = {
    "around": AROUND_TOLERANCE_MIN,
    "exact": EXACT_TOLERANCE_MIN,
    "before": BOUND_TOLERANCE_MIN,
    "after": BOUND_TOLERANCE_MIN,
    "between": BOUND_TOLERANCE_MIN,
    "within": BOUND_TOLERANCE_MIN,
    "asap": ASAP_SLACK_MIN,
}


class TimeWindow(BaseModel):
    """A compiled time item: ``subject``'s time t must lie in [earliest - tol, latest + tol].

    ``earliest``/``latest`` are the nominal bounds (None: open on that side; for "around"/"exact"
    both are T). For ``asap`` the upper bound is the earliest possible arrival plus the tolerance,
    which only the checked record knows (see ``bounds``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["time_window"] = "time_window"
    subject: Subject
    relation: Relation
    earliest: datetime | None = None
    latest: datetime | None = None
    tolerance_min: float = 0.0
    # set when the loader widened a window no order could meet (the reason, for the reader)
    repaired: str = ""

    @field_serializer("earliest", "latest")
    def _plain_time(self, value: datetime | None) -> str | None:
        return None if value is None else value.strftime(TIME_FORMAT)

    def bounds(self, earliest_arrival: datetime | None = None) -> tuple[datetime | None, datetime | None]:
        """The accepted interval, tolerance included (None: open)."""
        tol = timedelta(minutes=self.tolerance_min)
        if self.relation == "asap":
            base = earliest_arrival or self.earliest
            return None, (base + tol if base is not None else None)
        lo = self.earliest - tol if self.earliest is not None else None
        hi = self.latest + tol if self.latest is not None else None
        return lo, hi

    def accepts(self, t: datetime, earliest_arrival: datetime | None = None) -> bool:
        lo, hi = self.bounds(earliest_arrival)
        return (lo is None or t >= lo) and (hi is None or t <= hi)

    def target(self, earliest_arrival: datetime) -> datetime:
        """The time a golden route aims at: T for around/exact, the middle of a range, the bound
        minus ``TARGET_MARGIN_MIN`` for "before", plus it for "after", the earliest arrival for
        "as soon as possible" and "within"; never before ``earliest_arrival``."""
        margin = timedelta(minutes=TARGET_MARGIN_MIN)
        aim: datetime | None
        if self.relation in ("around", "exact"):
            aim = self.latest
        elif self.relation == "between" and self.earliest is not None and self.latest is not None:
            aim = self.earliest + (self.latest - self.earliest) / 2
        elif self.relation == "before" and self.latest is not None:
            aim = self.latest - margin
        elif self.relation == "after" and self.earliest is not None:
            aim = self.earliest + margin
        else:  # asap, within
            aim = earliest_arrival
        aim = aim or earliest_arrival
        return max(aim, earliest_arrival).replace(microsecond=0)

    def describe(self) -> str:
        """The window in words, for task notes and reports."""
        f = "%Y-%m-%d %H:%M"
        tol = f" (±{self.tolerance_min:g} min)" if self.tolerance_min and self.relation != "asap" else ""
        e = self.earliest.strftime(f) if self.earliest else "?"
        la = self.latest.strftime(f) if self.latest else "?"
        point = la if e == la else f"{e} to {la}"  # a repaired window runs up to the earliest arrival
        what = {
            "around": f"around {point}{tol}",
            "exact": f"at {point}{tol}",
            "before": f"no later than {la}",
            "after": f"no earlier than {e}",
            "between": f"between {e} and {la}",
            "within": f"between {e} and {la}",
            "asap": f"as soon as possible (at most {self.tolerance_min:g} min after the earliest arrival)",
        }[self.relation]
        return f"{self.subject} time {what}" + (" (widened: no order could arrive sooner)" if self.repaired else "")

# ----- subjects ------------------------------------------------------------------------------------
_SUBJ_DELIVERY = re.compile(
    r"\bdeliver(?:y|ies)? (?:time|date|window|slot)s?\b|\btime of (?:the )?deliver(?:y|ies)\b|\bdelivered\b"
    r"|\bdeliver(?:s|ing)?\b|\bdelivery\b(?! (?:address|fee|service|range|distance|radius|cost|charge|platform|staff"
    r"|rider|driver|area|zone|method|note|location|person|man|men|app)s?\b)"
    r"|送达|送到|配送时间|配送的时间|送餐时间|派送时间|外卖时间"
)
_SUBJ_VISIT = re.compile(
    r"\b(?:reservation|appointment|booking|visit|visiting|dining|check-in) (?:time|date)s?\b"
    r"|\btime (?:of|for|in) (?:the |a |an |your |this )?(?:[a-z'-]{1,20} ){0,4}(?:reservation|appointment|booking|visit)\b"
    r"|\b(?:reservations?|appointments?|bookings?|visits?)\b[a-z' -]{0,30}?\b(?:scheduled|booked|made|set|arranged|placed)"
    r" (?:for|at|on)\b"
    r"|\b(?:make|makes|making|book|books|booking|reserve|reserves|reserving|schedule|schedules|scheduling) "
    r"(?:a |an |the )?(?:[a-z'-]{1,20} ){0,3}(?:reservation|appointment|booking|table|visit|seat)s?\b"
    r"|\b(?:reservations?|appointments?|bookings?)\b (?:should|must|needs? to|has to|will) be (?:made )?(?:for|at|on)\b"
    r"|\b(?:book|booked|reserve|reserved|scheduled) (?:for|at|on|around|about)\b(?! (?:the )?deliver)(?! \d+ (?:people|persons?|guests|adults|diners)\b)"
    # "the spa appointment must be no later than 4 pm": the visit itself bounded
    r"|\b(?:reservations?|appointments?|bookings?|visits?)\b (?:should|must|needs? to|has to|is to|will|shall) "
    r"(?:not )?(?:be|take place|start|begin)\b"
    r"|(?:预约|预订|预定|订座)(?:应该|应当|应|必须|需要|需|要)?(?=最晚|最迟|最早|不晚于|不早于|不迟于|早于|晚于)"
    r"|预约时间|预订时间|预定时间|到店时间|订座时间|就餐时间|预约日期|预订日期|预约的时间|预订的时间|到店"
    r"|(?:预约|预订|预定|订座)(?:在|于)"
)
_SUBJ_ARRIVAL = re.compile(r"\barriv(?:e|es|ed|ing|al)\b|到达|抵达")


def subject_of(clauses: list[str]) -> tuple[Subject | None, list[str]]:
    """The time the clauses bound, and the clauses that name it."""
    kinds: set[str] = set()
    groups: list[list[str]] = []
    joined = False  # whether the previous clause was kept (a clause without a subject continues it)
    for c in clauses:
        here = {k for k, rx in (("delivery", _SUBJ_DELIVERY), ("visit", _SUBJ_VISIT), ("arrival", _SUBJ_ARRIVAL))
                if rx.search(c)}
        if here:
            kinds |= here
            groups.append([c])
            joined = True
        elif joined:
            groups[-1].append(c)  # "deliver tomorrow, at 6 pm"
    keep = [", ".join(g) for g in groups]
    main = kinds - {"arrival"}
    if len(main) > 1:
        return None, []
    if main:
        return main.pop(), keep  # type: ignore[return-value]
    return ("arrival", keep) if kinds else (None, [])


# ----- points, constraints, windows ---------------------------------------------------------
@dataclass
class _Point:
    start: int
    end: int
    date: tuple[int | None, int, int] | None = None
    relday: int | None = None
    period: str | None = None
    clock: tuple[int, int, int, str | None] | None = None
    toks: list[_Tok] = field(default_factory=list)

    @property
    def bare_word(self) -> bool:
        """A lone "noon"/"midnight": a time, or an adjective ("the noon mango sticky rice order")."""
        return (self.clock is not None and self.date is None and self.relday is None
                and all(t.value[3] == "w" for t in self.toks if t.kind == "clock"))


class _Ambiguous(Exception):
    pass


def _group(text: str, toks: list[_Tok]) -> list[_Tok | _Point]:
    """Adjacent date / relative day / period / clock tokens joined into points in time."""
    seq: list[_Tok | _Point] = []
    cur: _Point | None = None
    for t in toks:
        if t.kind not in ("date", "relday", "period", "clock"):
            cur = None
            seq.append(t)
            continue
        slot = {"date": "date", "relday": "date", "period": "period", "clock": "clock"}[t.kind]
        taken = {"date": cur.date is not None or cur.relday is not None, "period": cur.period is not None,
                 "clock": cur.clock is not None}[slot] if cur is not None else True
        if cur is None or taken or not _glue(text[cur.end:t.start], _GLUE_POINT):
            cur = _Point(t.start, t.end)
            seq.append(cur)
        cur.end = t.end
        cur.toks.append(t)
        if t.kind == "date":
            cur.date = t.value
        elif t.kind == "relday":
            cur.relday, per = t.value
            cur.period = cur.period or per
        elif t.kind == "period":
            cur.period = t.value
        else:
            cur.clock = t.value
    return seq


def _qual_at(text: str, seq: list[_Tok | _Point], i: int, side: str) -> str | None:
    """The class of the qualifier right before (``side="pre"``) or after the item at ``i``."""
    j = i - 1 if side == "pre" else i + 1
    if not 0 <= j < len(seq):
        return None
    q = seq[j]
    if not isinstance(q, _Tok) or q.kind != "qual":
        return None
    cls, where = q.value
    if where not in (side, "both"):
        return None
    gap = text[q.end:seq[i].start] if side == "pre" else text[seq[i].end:q.start]
    if _glue(gap, _GLUE_QUAL):
        return cls
    # "before the meeting starts at 19:00", "在19:00的会议开始之前": the bound word far from its time,
    # an event between them (only "before / after" and their Chinese forms: "by the rider at 7" is no bound)
    word = text[q.start:q.end]
    if cls in ("before", "after") and word in _FAR_QUALS and (_FAR_GAP_EN if side == "pre" else _FAR_GAP_ZH).fullmatch(gap):
        return cls
    return None


def _offset_by(text: str, seq: list[_Tok | _Point], j: int, q: int) -> bool:
    """Whether a duration at ``j`` stands right beside the qualifier at ``q``."""
    if not 0 <= j < len(seq):
        return False
    d = seq[j]
    if not isinstance(d, _Tok) or d.kind != "dur":
        return False
    gap = text[d.end:seq[q].start] if j < q else text[seq[q].end:d.start]
    return _glue(gap, _GLUE_QUAL)


@dataclass
class _Constraint:
    rel: str  # before after around exact range day
    a: _Point
    b: _Point | None = None


def _constraints(text: str, seq: list[_Tok | _Point]) -> list[_Constraint]:
    out: list[_Constraint] = []
    i = 0
    while i < len(seq):
        x = seq[i]
        if not isinstance(x, _Point) or (x.clock is None and x.date is None and x.relday is None):
            i += 1
            continue
        if (
            i + 2 < len(seq)
            and isinstance(seq[i + 1], _Tok)
            and (seq[i + 1].kind == "conn" or (seq[i + 1].kind == "qual" and seq[i + 1].value[0] == "until"))
            and isinstance(seq[i + 2], _Point)
            and _glue(text[x.end:seq[i + 1].start], _GLUE_RANGE)
            and _glue(text[seq[i + 1].end:seq[i + 2].start], _GLUE_RANGE)
            and (x.clock is None) == (seq[i + 2].clock is None)  # type: ignore[union-attr]
        ):
            pre, post = _qual_at(text, seq, i, "pre"), _qual_at(text, seq, i + 2, "post")
            if pre not in (None, "range", "around", "within") or post not in (None, "range", "around", "within"):
                raise _Ambiguous
            out.append(_Constraint("range", x, seq[i + 2]))  # type: ignore[arg-type]
            i += 3
            continue
        pre, post = _qual_at(text, seq, i, "pre"), _qual_at(text, seq, i, "post")
        if (pre is not None and _offset_by(text, seq, i - 2, i - 1)) or (post is not None and _offset_by(text, seq, i + 2, i + 1)):
            raise _Ambiguous  # "30 minutes before 18:00" is 17:30, no bound
        quals = {q for q in (pre, post) if q is not None}
        quals = {"before" if q == "until" else q for q in quals}
        if pre == "within" and x.clock is not None and text[seq[i - 1].start:seq[i - 1].end] in _CAP_WORDS:
            quals = (quals - {"within"}) | {"before"}  # "最晚不超过2点", "不超过14:00": a cap on a time of day
        if post == "within" and pre is None and x.clock is not None and x.date is not None \
                and text[seq[i + 1].start:seq[i + 1].end] in ("以内", "之内"):
            quals = (quals - {"within"}) | {"before"}  # "应在2025-10-18 12:43以内": by a dated time of day
        if len(quals) > 1 or quals & {"range", "within", "negated"}:
            raise _Ambiguous  # "之间" with one time, "within 12:00", "before ... 之后", "not around"
        rel = quals.pop() if quals else "exact"
        out.append(_Constraint(rel if x.clock is not None else f"day-{rel}", x))
        i += 1
    if any(c.a.clock is not None and not c.a.bare_word for c in out):
        # beside a time in digits, an unqualified "noon" is a word of the order's name
        out = [c for c in out if not (c.rel == "exact" and c.a.bare_word)]
    return out


def _year_for(month: int, day: int, now: datetime) -> int:
    """The year of a date given without one: the task's year, or the next when that lies more than
    ``PAST_DATE_DAYS`` before now (a delivery or a visit is not booked for last winter)."""
    try:
        d = date(now.year, month, day)
    except ValueError:
        raise _Ambiguous from None
    return now.year + 1 if (now.date() - d).days > PAST_DATE_DAYS else now.year


def _day_of(p: _Point, now: datetime) -> date | None:
    if p.date is not None:
        y, m, d = p.date
        try:
            return date(y if y is not None else _year_for(m, d, now), m, d)
        except ValueError:
            raise _Ambiguous from None
    if p.relday is not None:
        return now.date() + timedelta(days=p.relday)
    return None


def _clock_of(p: _Point) -> tuple[time, int]:
    """The time of day of a point with a clock, and a day offset (24:00 and 晚上12点 are the next day)."""
    assert p.clock is not None
    h, m, s, ampm = p.clock
    ampm = None if ampm == "w" else ampm
    if ampm == "p" and h < 12:
        h += 12
    elif ampm == "a" and h == 12:
        h = 0
    elif ampm is None and p.period in ("pm",) and h < 12:
        h += 12
    elif ampm is None and p.period == "pm" and h == 12:
        h = 24
    elif ampm is None and p.period == "noon" and 1 <= h <= 4:
        h += 12
    if h == 24 and m == 0 and s == 0:
        return time(0, 0, 0), 1
    if not (0 <= h <= 23 and 0 <= m <= 59 and 0 <= s <= 59) or (ampm and p.clock[0] > 12):
        raise _Ambiguous
    return time(h, m, s), 0


def _bare_hour(p: _Point) -> bool:
    """A clock of 1 to 11 o'clock said without am / pm or a part of the day ("2点", "2:00")."""
    return p.clock is not None and p.clock[3] is None and p.period is None and 1 <= p.clock[0] <= 11


def _resolve(p: _Point, now: datetime, day: date | None) -> datetime:
    clock, extra = _clock_of(p)
    if day is None:
        t = datetime.combine(now.date(), clock) + timedelta(days=extra)
        if t < now - timedelta(minutes=UNDATED_GRACE_MIN):
            t += timedelta(days=1)
        return t
    return datetime.combine(day, clock) + timedelta(days=extra)


def _windows(cons: list[_Constraint], now: datetime) -> list[tuple[str, datetime | None, datetime | None]]:
    days = set()
    for c in cons:
        for p in (c.a, c.b):
            if p is not None:
                d = _day_of(p, now)
                if d is not None:
                    days.add(d)
    only_day = next(iter(days)) if len(days) == 1 else None
    clocks = any(c.a.clock is not None for c in cons)

    def day_for(p: _Point, partner: _Point | None = None) -> date | None:
        d = _day_of(p, now)
        if d is None and partner is not None:
            d = _day_of(partner, now)
        if d is None and days:
            if only_day is None:
                raise _Ambiguous  # an undated time among several dates
            d = only_day
        return d

    # the hours past noon of the item's points (at most 12 values): a bare cap after one is in the afternoon
    noon_on = {h for c in cons if c.rel in ("around", "exact", "after") and c.a.clock is not None
               for h in (_clock_of(c.a)[0].hour,) if h >= 12}
    out: list[tuple[str, datetime | None, datetime | None]] = []
    for c in cons:
        if c.rel.startswith("day-"):
            if clocks:
                continue  # a date given beside a dated time is context ("Mother's Day (2025-05-11)")
            d = _day_of(c.a, now)
            if d is None or c.rel not in ("day-exact", "day-around") or c.a.period is not None:
                # "before June 21": is the 21st included? "tonight": from when?
                raise _Ambiguous
            start = datetime.combine(d, time(0, 0, 0))
            out.append(("between", start, start + timedelta(days=1, seconds=-1)))
            continue
        if c.rel == "range":
            assert c.b is not None
            if c.a.clock is None:  # a range of days
                da, db = _day_of(c.a, now), _day_of(c.b, now)
                if da is None or db is None:
                    raise _Ambiguous
                out.append(("between", datetime.combine(da, time(0, 0, 0)),
                            datetime.combine(db, time(23, 59, 59))))
                continue
            if c.b.period is None and c.a.period is not None:
                c.b.period = c.a.period  # "下午3点到5点": both in the afternoon
            a = _resolve(c.a, now, day_for(c.a, c.b))
            b_day = day_for(c.b, c.a)
            b = _resolve(c.b, now, b_day)
            if b < a and _day_of(c.b, now) is None and b + timedelta(days=1) - a <= timedelta(hours=12):
                b += timedelta(days=1)  # "23:00-01:00" crosses midnight
            if b < a:
                raise _Ambiguous
            out.append(("between", a, b))
            continue
        if c.rel == "before" and _bare_hour(c.a) and any(c.a.clock[0] < h < c.a.clock[0] + 12 for h in noon_on):  # type: ignore[index]
            c.a.period = "pm"  # "12点左右，最晚不超过2点": the cap after a time past noon is in the afternoon
        t = _resolve(c.a, now, day_for(c.a))
        if c.rel in ("around", "exact"):
            out.append((c.rel, t, t))
        elif c.rel == "before":
            out.append(("before", None, t))
        else:
            out.append(("after", t, None))
    return out


def _merge(wins: list[tuple[str, datetime | None, datetime | None]]) -> tuple[str, datetime | None, datetime | None]:
    uniq = list(dict.fromkeys(wins))  # in order, each once (a set lookup: linear in the constraints)
    if len(uniq) == 1:
        return uniq[0]
    ranges = [w for w in uniq if w[0] == "between"]
    points = [w for w in uniq if w[0] in ("around", "exact")]
    if len(ranges) == 1 and len(points) + 1 == len(uniq):
        _, lo, hi = ranges[0]
        if all(lo <= p[1] <= hi for p in points):  # type: ignore[operator]
            return ranges[0]
    if points and len(points) == len(uniq) and len({p[1] for p in points}) == 1:
        return ("around" if any(p[0] == "around" for p in points) else "exact", points[0][1], points[0][2])
    befores = [w for w in uniq if w[0] == "before"]
    afters = [w for w in uniq if w[0] == "after"]
    if len(befores) == 1 and len(afters) == 1 and len(uniq) == 2 and afters[0][1] <= befores[0][2]:  # type: ignore[operator]
        return ("between", afters[0][1], befores[0][2])
    if len(points) == 1 and len(uniq) == 2 and len(befores) + len(afters) == 1:
        # "around 12:00, not later than 14:00": from the point's earliest accepted time up to the bound
        # (or from the bound up to its latest): only what one of the two rules out is rejected
        rel, t, _ = points[0]
        tol = timedelta(minutes=TOLERANCE_MIN[rel])
        if befores and t <= befores[0][2]:  # type: ignore[operator]
            return ("between", t - tol, max(befores[0][2], t))  # type: ignore[type-var,operator]
        if afters and afters[0][1] <= t:  # type: ignore[operator]
            return ("between", afters[0][1], t + tol)
    raise _Ambiguous


def _within(text: str, seq: list[_Tok | _Point]) -> float | None:
    """The minutes of a "within <duration>" / "<duration>内" in the clause, if any."""
    for i, t in enumerate(seq):
        if isinstance(t, _Tok) and t.kind == "dur":
            quals = {_qual_at(text, seq, i, "pre"), _qual_at(text, seq, i, "post")}
            if quals & {"within", "until", "before"}:
                return float(t.value)
    return None


# "不应在T之后送达" / "不能在T之前": a negated modal before a time its qualifier follows is the other bound
_ZH_NOT_AFTER = re.compile(r"(?:不应该|不应当|不应|不能|不得|不可以|不可|不要|切勿|禁止)(?P<at>在|于)(?P<t>[^，,。；;]{1,40}?)"
                           r"(?P<q>之后|以后|之前|以前)")


def _not_after(m: re.Match[str]) -> str:
    return f"应{m['at']}{m['t']}{'之前' if m['q'] in ('之后', '以后') else '之后'}"


# a negated modal or verb; one a bound word follows closely ("should not be later than", "不能晚于") is that
# bound's (``_NEGATED``), any other negates the whole window, which a window cannot say
_CLAUSE_NEG = re.compile(r"\b(?:not|never|cannot|can't|shouldn't|mustn't|won't)\b|不应该|不应当|不应|不能|不得|不可以|不可|不要|"
                         r"切勿|禁止|严禁|不允许|不宜")


def _negation_left(clause: str, toks: list[_Tok]) -> bool:
    """Whether a negation in ``clause`` is not one a bound word's flip used (the same test as ``_tokens``)."""
    used: list[tuple[int, int]] = []
    for t in toks:
        if t.kind == "qual":
            used.append((t.start, t.end))  # "not later than", "不晚于": a bound word of its own
            lo = max(0, t.start - 24)
            m = _NEGATED.search(clause[lo:t.start])
            if m is not None:
                used.append((lo + m.start(), lo + m.end()))
    # a negation after the last time said ("before 20:00, but not too early") qualifies no window this reads
    last = max((t.start for t in toks if t.kind in ("date", "clock", "relday", "dur")), default=-1)
    return any(m.start() < last and not any(a <= m.start() < b for a, b in used) for m in _CLAUSE_NEG.finditer(clause))


def compile_time_item(text: str, now: datetime) -> TimeWindow | None:
    """The time window a rubric item states, or None (not a time item, or not unambiguous).

    Never raises; linear in ``len(text)`` (see the module docstring for the reading rules)."""
    try:
        return _compile(text, now)
    except (_Ambiguous, ValueError, OverflowError, TypeError, KeyError, IndexError, AssertionError):
        return None


def _compile(text: str, now: datetime) -> TimeWindow | None:
    if not isinstance(text, str) or len(text) > MAX_ITEM_CHARS:
        return None
    norm = _NOON_12.sub("12:00", normalise(text))  # "around 12 noon": 12:00 (the "noon" is no second time)
    either = _WITHIN_OF.search(norm)  # "within 30 minutes of 12:00": 12:00 with 30 minutes either side
    if either is not None:
        norm = norm[:either.start()] + "around " + norm[either.end():]
    subject, clauses = subject_of(_clauses(_ZH_NOT_AFTER.sub(_not_after, norm)))
    if subject is None:
        return None
    wins: list[tuple[str, datetime | None, datetime | None]] = []
    within: list[float] = []
    asap = False
    for clause in clauses:
        toks = _tokens(clause)
        if _negation_left(clause, toks):
            return None  # "不应在12:00左右送达", "should not be around 12:00": not a window this reads
        seq = _group(clause, toks)
        cons = _constraints(clause, seq)
        if cons:
            wins += _windows(cons, now)
            continue
        minutes = _within(clause, seq)
        if minutes is not None:
            within.append(minutes)
        asap = asap or any(isinstance(t, _Tok) and t.kind == "asap" for t in seq)
    if wins:
        rel, lo, hi = _merge(wins)
    elif within:
        if len(set(within)) > 1:
            return None
        rel, lo, hi = "within", now, now + timedelta(minutes=within[0])
    elif asap:
        rel, lo, hi = "asap", now, None
    else:
        return None
    if lo is not None and hi is not None and hi < lo:
        return None
    tolerance = TOLERANCE_MIN[rel]
    if either is not None:  # one time, with the item's own margin either side of it
        if rel != "around" or lo != hi:
            return None
        n, hours = either.group("n"), either.group("u").startswith("h")
        if n.startswith("half"):
            tolerance = 30.0 if hours else 0.5
        else:
            tolerance = (1.0 if n in ("a", "an") else float(n)) * (60.0 if hours else 1.0)
    return TimeWindow(subject=subject, relation=rel, earliest=lo, latest=hi,  # type: ignore[arg-type]
                      tolerance_min=tolerance)


# "12 noon", "12 midday": 12:00
_NOON_12 = re.compile(r"\b12\s*(?:noon|midday)\b")
# "within 30 minutes of / either side of 12:00": a margin around one time
_WITHIN_OF = re.compile(r"\bwithin (?:about )?(?P<n>\d{1,3}|an?|half an?) (?P<u>minutes?|mins?|hours?|hrs?) "
                        r"(?:of|either side of|around|before or after) ")


def subject_text(text: str) -> str:
    """The normalised clauses of ``text`` that name the time bounded (what step 3 keeps): where an
    item says which order or visit it is about ("the sauna room appointment time")."""
    if not isinstance(text, str) or len(text) > MAX_ITEM_CHARS:
        return ""
    return " | ".join(subject_of(_clauses(normalise(text)))[1])
