"""Natural-language rubric items compiled to code checks.

VitaBench's ground truth is a task's natural-language rubric ("The delivery time for the rice noodle
order should be around 2025-06-21 12:00:00", "The restaurant rating should be 4.5 or above"). The
single entry ``compile_item(text, context)`` reads one such item, English or Chinese, and returns a
typed spec of one of several kinds (``ItemSpec``): a ``TimeWindow`` (read first, by
``compile_time_item``), an ``AddressSpec``, ``ProcessSpec``, ``StoreSpec``, ``FeatureSpec``,
``RatingSpec``, ``DistanceSpec``, ``CountSpec``, ``PriceSpec``, ``NoteSpec``, ``StatusSpec``, or an
``AllOf`` of several ("query the history ..., so the order should be from X"). It returns None when
the item is none of them or cannot be read unambiguously: None means "not checkable by this
compiler" (the LLM judge's), never "false". ``context`` is the task's ``ItemContext``: its now
(VitaBench's static ``time``, against which "today", "tomorrow", "within an hour" and times without
a date are read), its stores, shops and products (a value an item names must be found there), its
address book and the domain's tool names. ``spec_holds`` checks a compiled item against one record
(``RecordFacts``); ``rewards/vitabench.py`` registers the checks, ``envs/tasks/vitabench/`` ties
items to the gold records.

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
                              now, else tomorrow's ("before 10:00" said at 20:25 is tomorrow morning).
    ``PAST_DATE_DAYS``        a month and day without a year are this year's, or next year's when that
                              would lie more than 30 days before now.
    ``ADDRESS_TOLERANCE_M``   an address item accepts the same text (case, blanks and punctuation aside),
                              or a point within 100 m of the address's coordinates when the task's
                              address book holds it (the gold-order matching uses the same number).
    ``PRICE_AROUND_RATIO``    "around / about / 左右 X yuan": within 10 % of X either way (a 50-yuan
                              item accepts 45 to 55); "within / not exceed / 以内 / 不超过 X": <= X;
                              "less than / under / 低于 X": < X, unless the item says "(inclusive)" /
                              "(including X)"; "more than / over / 高于": >, "at least / or more / 以上 /
                              不低于": >=; "between A and B / A-B": A <= x <= B; "be X yuan": exactly X.
                              "Total" and an order's price read the order's total; a product's, set's
                              or package's price reads every ordered line's unit price.
    ``RATING_MAX``            a rating item's number must be a rating (0 to 5); "4.5 or above / 及以上 /
                              以上": >=, "above / higher than / 高于": >.
    ``NOTE_COVERAGE``         a note item holds when at least 60 % of its content words (English word
                              stems, Chinese character pairs) are in the order's note and the note
                              contradicts none of it (another spice level; "extra X" where "no X" is
                              asked, or the reverse).
    distances                 "within N km / m (inclusive) of P": the place within N metres of P,
                              inclusive unless "(exclusive)"; P must be an address-book entry or a
                              store's or shop's address or name (its name and address pieces agree).
    counts                    party sizes and quantities compare exactly ("at least" aside).

How an item is read (every step a bounded pattern or a single pass, so the whole parse is linear in
the length of the text, and it never raises)
    1. normalise: NFKC (full-width digits and punctuation), casefold, one blank between words, "a.m."
       as "am"; weekday names are dropped (the date decides).
    2. conclusion: when the item reasons to a conclusion ("..., so the sauna reservation time should be
       18:00", "therefore", "所以", "因此"), only the text after the last such marker counts.
    3. clauses: split at sentence ends and at commas not followed by a digit ("June 21, 2025" stays
       whole); a clause opened by "which / i.e. / namely / 即" continues the previous one; each clause
       is cut at its first purpose marker ("to ensure", "so that", "because", "确保", "以便", "避免"),
       so "before 18:00, ensuring she eats before 6:30 pm" bounds 18:00 only.
    4. subject: only clauses that name the time bounded count: the delivery time ("delivery time",
       "delivered", "送达", "配送时间"), a visit's time ("reservation / appointment / booking time",
       "the reservation must be for ...", "booked around ...", "预约时间", "到店"), or an arrival ("arrive", "到达": the loader decides whether that is a
       delivery or a visit). An item without a subject clause, or naming both a delivery and a
       visit, is not a time item ("opening time before 2019", "usage time 4 hours" are not).
    5. tokens: dates (2025-06-21, 2025年6月21日, 6月21日, June 21(, 2025), 21 June), relative days
       (today, tomorrow, tonight, 今天, 明天, 今晚, 后天), day periods (上午, 下午, 中午, 晚上, in the
       evening), clock times (18:00, 6 pm, 6:30 p.m., 12 noon, 18点, 六点半, 7点一刻), durations
       (an hour, 30 minutes, 半小时, 30分钟), qualifiers, range connectors (and, to, -, 至, 到) and
       "as soon as possible". A date and a clock time side by side ("18:00 on 2025-06-03",
       "2025年9月13日12点", "2025-03-19上午11:00") are one point in time.
    6. constraints: a point with its adjacent qualifier ("before 18:00", "12:00左右", "早于 ..."; none
       means exact), or a range "A and/to/-/至 B" (its own qualifier "between", "之间", "时间段内",
       even "around", only confirms it). A clock without a date takes its range partner's date, else
       the item's only date, else today/tomorrow as above; several different dates with an undated
       clock are ambiguous. With no point in time: "within <duration>", else "as soon as possible";
       a lone date ("on June 21") bounds that whole day.
    7. one window: equal constraints merge; a range and an "around"/exact point inside it give the
       range ("19:30左右【即19:15到19:45区间内】"); "after A" with "before B" give [A, B]; anything
       else (two different times, "之间" with a single time, a range read two ways) is ambiguous.

The other kinds (``compile_item``; every step a bounded pattern or one pass, so the parse stays
linear in the text, up to the look-ups in the task's catalogue)
    1. an item that is a time window is one (above); an address item ("the delivery address should
       be X", "配送地址应为X") is read whole, since addresses hold commas;
    2. premise and conclusion: the text after the last "so / therefore / ; / 所以 / 因此" is the
       requirement; every clause before it is reasoning (skipped: "the result is X", "the weather is
       sunny"), a process demand ("need to / should / must query, check, search, look up ...",
       "需要查询..."), which becomes a ``ProcessSpec`` with the tools that do that look-up (history ->
       the user-history and order tools, weather -> ``weather``, a holiday -> the holiday tools, a
       distance -> the distance tools, a store or product -> the search and info tools; any of them
       counts), or a condition or a second requirement, which makes the item unclear;
    3. the requirement splits at its modal ("should / must / needs to / cannot / is", "应 / 必须 /
       需要 / 不能"; a plain "includes / contains" stays in the predicate) into the subject (which
       record: ``about``, for the loader) and the predicate; "when choosing X, select Y" is a demand
       about X;
       a negative modal, "not", "avoid", "不", "避免" negate it; a place's name the text holds
       ("Blue Note ...", "... Star ...") is no word of a kind (a note, a rating); purpose clauses ("to ensure ...",
       "确保...") and examples ("such as ...", "如...") are cut, an example naming a store or a "X等Y"
       ("the kind Y, e.g. X") makes the item unclear; several records at once ("same", "each",
       "all orders", "per person") too;
    4. the kind, by the first reading that fits: a rating (a number compared with the place's score),
       a distance, a party size ("number of people", a reservation "for N people"), a quantity
       ("quantity / total number of items ... N", "包含N份"), a price (a number of yuan), a store
       (the predicate names a store or shop of the world: exactly, or a chain by the start of its
       names), a note ("a note requesting X", "备注X"), a status ("cancel ... order with id X", "...
       status should be cancelled"), else a feature: the value ("mild or non-spicy", "Dine-in
       available", "微辣") must be found in the catalogue of the subject's scope (a place's name,
       tags or category; a product's name, tags or options; an option only when the item speaks of
       temperature, sweetness, size...), each alternative of "or", and "A and B" read the one way
       that finds both; "X, not Y" adds Y negated. Generic words around a value are dropped
       ("selected as / with", "drinks with", "... drink temperature attribute", "...的饮品"). A serving
       size ("a five-person meal", "a set meal for two", "not two individual sets", "双人套餐",
       "两人份") is the value's own words when the catalogue has them, else "N person" (for one also
       "single portion", "individual"; for two also "couple"; "N人", "双人", "单人"), those found.
       A value found nowhere leaves the item unclear.
    5. Chinese shapes: a store named before a generic tail ("X品牌的商家", "X的商品", "X店": the
       places whose names start with X), or before a product ("X的Y商品", "在X购买Y": the store and
       Y); a place described by what it offers ("提供/支持 X 服务的商家", "X标签": X among its tags);
       what a product has ("带有X的商品", "X相关商品", "A和B两种商品"; "含有" negated stays unread,
       it may name a class); "热饮 / 冰饮" a temperature (one character, "热", is enough for an
       option); a cup size among alternatives that no product offers is dropped ("小杯或中杯" where
       nothing comes small); "..., 数量为N份" adds a count of that product. Judgement words
       ("新鲜", "销量", "正宗", "最...", "性价比") leave the item to the judge even where a tag shares them.

Phrases (``phrase_in``): English words compare as stems (numbers as digits, "X-free" as "no X") and
every word of the phrase must be in the field (one name, tag or option), with no "no / non- / less
/ low" right before a matched word that the phrase lacks ("spicy" is not "Non-spicy"); Chinese
phrases are substrings not right after 不 / 无 / 去 / 少 / 微 / 半 ("辣" is not "不辣", "冰" not "去冰").
A product feature holds when an ordered line has it (name, tags or chosen options), and every line
whose product offers it as an option has chosen it; a negated one when no line has it; a note that
contradicts a feature ("extra spicy" where "mild" is asked) fails it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_serializer

from servicegym.world_state.core import TIME_FORMAT

AROUND_TOLERANCE_MIN = 15.0
EXACT_TOLERANCE_MIN = 5.0
BOUND_TOLERANCE_MIN = 0.0
ASAP_SLACK_MIN = 10.0
TARGET_MARGIN_MIN = 10.0
UNDATED_GRACE_MIN = 60.0
PAST_DATE_DAYS = 30
# longer texts are not single rubric items; the cap keeps even the linear scan cheap
MAX_ITEM_CHARS = 4000

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


# ----- normalisation and clauses ------------------------------------------------------------
_WEEKDAY = re.compile(
    r"\b(?:(?:next|this|coming|last) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"(?:s)?(?: afternoon| morning| evening)?,? ?"
    r"|(?:下|这|本|上)?(?:个)?(?:星期|周|礼拜)[一二三四五六日天]"
)
_AMPM_DOTS = re.compile(r"\b([ap])\.m\.?")
_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|consequently|so the|so this|so it|so we|so you)\b|所以|因此|因而|故而"
)
_CLAUSE_SPLIT = re.compile(r"[;!?。；！？\n]|\.(?= [a-z\u4e00-\u9fff])|,(?! ?\d)")
_CONTINUATION = ("which ", "i.e.", "ie ", "that is", "namely", "即", "也就是")
_PURPOSE = (
    " to ensure", " ensuring", " ensure that", " so that", " so as to", " in order to", " in order that",
    " because", " since ", " to avoid", " avoiding", " to make sure", " making sure", " to allow", " allowing",
    " for use ", " for the purpose", " otherwise",
    "确保", "以便", "以免", "避免", "保证", "为了", "因为", "由于", "这样", "方便", "好让",
)
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
    r"|\b(?:book|booked|scheduled) (?:for|at|on|around|about)\b(?! (?:the )?deliver)"
    r"|预约时间|预订时间|预定时间|到店时间|订座时间|就餐时间|预约日期|预订日期|预约的时间|预订的时间|到店"
    r"|(?:预约|预订|预定|订座)(?:在|于)"
)
_SUBJ_ARRIVAL = re.compile(r"\barriv(?:e|es|ed|ing|al)\b|到达|抵达")


def normalise(text: str) -> str:
    """NFKC, casefold, one blank between words, "a.m." as "am", weekday names dropped."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = " ".join(t.split())
    t = _AMPM_DOTS.sub(r"\1m", t)
    return " ".join(_WEEKDAY.sub(" ", t).split())


def _clauses(text: str) -> list[str]:
    """The clauses that can carry the item's time (steps 2 and 3 of the module docstring)."""
    ends = [m.end() for m in _CONCLUSION.finditer(text)]
    if ends:
        text = text[ends[-1]:]
    groups: list[list[str]] = []  # joined once at the end: repeated concatenation would be quadratic
    for raw in _CLAUSE_SPLIT.split(text):
        part = raw.strip()
        if not part:
            continue
        if groups and part.startswith(_CONTINUATION):
            groups[-1].append(part)
        else:
            groups.append([part])
    cut = []
    for part in (" ".join(g) for g in groups):
        padded = f" {part}"
        end = len(padded)
        for marker in _PURPOSE:
            k = padded.find(marker)
            if k != -1 and k < end:
                end = k
        cut.append(padded[:end].strip())
    return [c for c in cut if c]


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


# ----- tokens -------------------------------------------------------------------------------
_MONTH_NAMES = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
    "jun": 6, "jul": 7, "aug": 8, "sept": 9, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}
_MONTH = "(?:" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + ")"
_ZH_NUM = "零一二两三四五六七八九十"
_RELDAYS = {
    "the day after tomorrow": (2, None), "day after tomorrow": (2, None), "tomorrow": (1, None), "today": (0, None),
    "tonight": (0, "pm"), "this evening": (0, "pm"), "this afternoon": (0, "pm"), "this morning": (0, "am"),
    "后天": (2, None), "明天": (1, None), "明日": (1, None), "今天": (0, None), "今日": (0, None), "当天": (0, None),
    "当日": (0, None), "今晚": (0, "pm"), "明晚": (1, "pm"), "今早": (0, "am"), "明早": (1, "am"),
}
_PERIODS = {
    "上午": "am", "早上": "am", "早晨": "am", "凌晨": "am", "清晨": "am", "中午": "noon", "下午": "pm", "傍晚": "pm",
    "晚上": "pm", "夜里": "pm", "夜间": "pm", "晚间": "pm", "in the morning": "am", "in the afternoon": "pm",
    "in the evening": "pm", "at night": "pm",
}
# qualifier text -> (class, where it may stand: "pre" before the time, "post" after it)
_QUALS: dict[str, tuple[str, str]] = {
    "no later than": ("before", "pre"), "not later than": ("before", "pre"), "on or before": ("before", "pre"),
    "prior to": ("before", "pre"), "earlier than": ("before", "pre"), "before": ("before", "pre"),
    "by": ("before", "pre"), "at the latest": ("before", "post"), "or earlier": ("before", "post"),
    "no earlier than": ("after", "pre"), "not earlier than": ("after", "pre"), "on or after": ("after", "pre"),
    "later than": ("after", "pre"), "after": ("after", "pre"), "or later": ("after", "post"),
    "at the earliest": ("after", "post"),
    "around": ("around", "pre"), "about": ("around", "pre"), "approximately": ("around", "pre"),
    "approx": ("around", "pre"), "roughly": ("around", "pre"), "close to": ("around", "pre"),
    "circa": ("around", "pre"), "or so": ("around", "post"),
    "between": ("range", "pre"), "from": ("range", "pre"), "within the time range of": ("range", "pre"),
    "within the range of": ("range", "pre"), "in the range of": ("range", "pre"),
    "within": ("within", "pre"), "in less than": ("within", "pre"), "less than": ("within", "pre"),
    "no more than": ("within", "pre"), "in under": ("within", "pre"), "不超过": ("within", "pre"),
    "until": ("until", "pre"), "till": ("until", "pre"), "up to": ("until", "pre"),
    "不晚于": ("before", "pre"), "不迟于": ("before", "pre"), "早于": ("before", "pre"), "最晚": ("before", "both"),
    "最迟": ("before", "both"), "及以前": ("before", "post"), "或以前": ("before", "post"), "及之前": ("before", "post"),
    "或之前": ("before", "post"), "之前": ("before", "post"), "以前": ("before", "post"), "前": ("before", "post"),
    "为止": ("before", "post"),
    "不早于": ("after", "pre"), "晚于": ("after", "pre"), "最早": ("after", "both"), "及以后": ("after", "post"),
    "或以后": ("after", "post"), "及之后": ("after", "post"), "或之后": ("after", "post"), "之后": ("after", "post"),
    "以后": ("after", "post"), "后": ("after", "post"),
    "大约": ("around", "pre"), "大概": ("around", "pre"), "约": ("around", "pre"), "差不多": ("around", "pre"),
    "左右": ("around", "post"), "前后": ("around", "post"),
    "之间": ("range", "post"), "时间段内": ("range", "post"), "时段内": ("range", "post"),
    "时间范围内": ("range", "post"), "范围内": ("range", "post"), "区间内": ("range", "post"),
    "期间": ("range", "post"), "以内": ("within", "post"), "之内": ("within", "post"), "内": ("within", "post"),
}
_CONNS = ("and", "to", "through", "-", "–", "—", "~", "至", "到")
# a qualifier said negatively ("should not be later than", "不能晚于") means the opposite bound
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever)(?: be)? $|(?:不|不能|不要|不得|不可|不应|不会|别|勿|没有)$")
_FLIP = {"before": "after", "after": "before"}
_ASAP = ("as soon as possible", "asap", "immediately", "right away", "right now", "straight away", "at once",
         "尽快", "立即", "立刻", "马上", "尽早", "越快越好", "第一时间")
# English words need word boundaries; Chinese words and symbols stand between any characters
_EN_WORDS = [w for w in (*_QUALS, *_CONNS, *_ASAP) if w.isascii() and w.replace(" ", "").isalpha()]
_ZH_WORDS = [w for w in (*_QUALS, *_CONNS, *_ASAP) if w not in _EN_WORDS]
_EN_WORD = "|".join(re.escape(w) for w in sorted(_EN_WORDS, key=len, reverse=True))
# "约" inside 预约/签约/节约 and "后" inside 然后/最后 are no qualifiers
_ZH_WORD = "|".join(
    (r"(?<![预签邀节赴])约" if w == "约" else r"(?<![然最之以])后" if w == "后" else re.escape(w))
    for w in sorted(_ZH_WORDS, key=len, reverse=True)
)
_EN_DUR_NUM = r"\d{1,3}(?:\.\d{1,2})?|an?|one|two|three|four|five|six|half an?|one and a half|an hour and a half"
_TOKEN = re.compile(
    r"(?P<durzh>(?:\d{1,3}|[一二两三四五六七八九十半]{1,3})(?:个)?(?:半)?(?:小时|钟头|分钟))"
    rf"|(?P<duren>\b(?:{_EN_DUR_NUM}) ?(?:hours?|hrs?|minutes?|mins?)\b)"
    r"|(?P<iso>(?<!\d)(?P<iy>\d{4})[-/.](?P<im>\d{1,2})[-/.](?P<id>\d{1,2})(?!\d))"
    r"|(?P<zhdate>(?:(?P<zy>\d{4})年)?(?<!\d)(?P<zm>\d{1,2})月(?P<zd>\d{1,2})[日号])"
    rf"|(?P<endate1>\b(?P<e1m>{_MONTH})\.? (?P<e1d>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,? (?P<e1y>\d{{4}})(?!\d))?)"
    rf"|(?P<endate2>(?<!\d)(?P<e2d>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<e2m>{_MONTH})\b\.?(?:,? (?P<e2y>\d{{4}})(?!\d))?)"
    r"|(?P<colon>(?<![\d:])(?P<ch>\d{1,2}):(?P<cm>\d{2})(?::(?P<cs>\d{2}))?(?!\d)(?: ?(?P<cap>[ap])m\b)?)"
    r"|(?P<ampm>(?<![\d:.])(?P<ah>\d{1,2}) ?(?P<aap>[ap])m\b)"
    # "6-7 pm", "between 6 and 7 pm": the bare first hour takes the second's am/pm
    r"|(?P<bare>(?<![\d:.])(?P<bh>\d{1,2})(?= ?(?:-|–|~|to|and) ?\d{1,2}(?::\d{2})? ?(?P<bap>[ap])m\b))"
    r"|(?P<oclock>(?<![\d:.])(?P<oh>\d{1,2}) ?o'?clock\b)"
    rf"|(?P<zhclock>(?<![\d.])(?P<zh>\d{{1,2}}|[{_ZH_NUM}]{{1,3}})[点點时]"
    rf"(?:(?P<zhalf>半)|(?P<zq1>一刻)|(?P<zq3>三刻)|(?P<zmin>\d{{1,2}})分?|(?P<zminzh>[{_ZH_NUM}]{{1,3}})分)?)"
    r"|(?P<noon>\bnoon\b|\bmidday\b|正午)|(?P<midnight>\bmidnight\b|午夜)"
    r"|(?P<relday>\bthe day after tomorrow\b|\bday after tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b"
    r"|\bthis evening\b|\bthis afternoon\b|\bthis morning\b|后天|明天|明日|今天|今日|当天|当日|今晚|明晚|今早|明早)"
    r"|(?P<period>上午|早上|早晨|凌晨|清晨|中午|下午|傍晚|晚上|夜里|夜间|晚间"
    r"|\bin the morning\b|\bin the afternoon\b|\bin the evening\b|\bat night\b)"
    rf"|(?P<en>\b(?:{_EN_WORD})\b)|(?P<zhw>{_ZH_WORD})"
)
_GLUE_POINT = frozenset({"on", "at", "of", "the", "in", "的", ",", "(", ")", "在", "于"})
_GLUE_QUAL = frozenset({"at", "on", "the", "在", "于", "是", "为", "of"})
_GLUE_RANGE = frozenset({"the", "on", "at", "("})
_GAP_WORD = re.compile(r"[a-z']{1,30}|\S")
_ZH_CLOCK_CONTEXT = "半分钟前后左之以到至-~点"


def _zh_number(text: str) -> int | None:
    """0..99 from digits or Chinese numerals (二十五, 十二, 两, 三十)."""
    if text.isdigit():
        return int(text)
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in digits) or (ones and ones not in digits) or len(text) > 3:
            return None
        return (digits[tens] if tens else 1) * 10 + (digits[ones] if ones else 0)
    if len(text) == 1 and text in digits:
        return digits[text]
    return None


@dataclass
class _Tok:
    kind: str  # date relday period clock dur qual conn asap
    start: int
    end: int
    value: Any = None


def _duration_minutes(text: str) -> float | None:
    t = text.replace(" ", "")
    if t.endswith(("小时", "钟头", "分钟")):
        unit = 1.0 if t.endswith("分钟") else 60.0
        num = t[:-2].replace("个", "")
        half = 0.0
        if num.endswith("半") and len(num) > 1:
            num, half = num[:-1], 0.5
        if num == "半":
            return 30.0 if unit == 60.0 else None
        n = _zh_number(num)
        return None if n is None else (n + half) * unit
    m = re.match(r"(.*?)(hours?|hrs?|minutes?|mins?)$", t)
    if m is None:
        return None
    num, unit_text = m.group(1), m.group(2)
    unit = 60.0 if unit_text.startswith("h") else 1.0
    words = {"a": 1.0, "an": 1.0, "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0,
             "halfa": 0.5, "halfan": 0.5, "oneandahalf": 1.5, "anhourandahalf": 1.5}
    if num in words:
        return words[num] * unit if num != "anhourandahalf" else 90.0
    try:
        return float(num) * unit
    except ValueError:
        return None


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    for m in _TOKEN.finditer(text):
        g = m.lastgroup
        s, e = m.start(), m.end()
        if g in ("durzh", "duren"):
            minutes = _duration_minutes(m.group(g))
            if minutes is not None:
                out.append(_Tok("dur", s, e, minutes))
        elif g == "iso":
            out.append(_Tok("date", s, e, (int(m["iy"]), int(m["im"]), int(m["id"]))))
        elif g == "zhdate":
            out.append(_Tok("date", s, e, (int(m["zy"]) if m["zy"] else None, int(m["zm"]), int(m["zd"]))))
        elif g == "endate1":
            out.append(_Tok("date", s, e, (int(m["e1y"]) if m["e1y"] else None, _MONTH_NAMES[m["e1m"]], int(m["e1d"]))))
        elif g == "endate2":
            out.append(_Tok("date", s, e, (int(m["e2y"]) if m["e2y"] else None, _MONTH_NAMES[m["e2m"]], int(m["e2d"]))))
        elif g == "colon":
            out.append(_Tok("clock", s, e, (int(m["ch"]), int(m["cm"]), int(m["cs"] or 0), m["cap"])))
        elif g == "ampm":
            out.append(_Tok("clock", s, e, (int(m["ah"]), 0, 0, m["aap"])))
        elif g == "bare":
            out.append(_Tok("clock", s, e, (int(m["bh"]), 0, 0, m["bap"])))
        elif g == "oclock":
            out.append(_Tok("clock", s, e, (int(m["oh"]), 0, 0, None)))
        elif g == "zhclock":
            hour = _zh_number(m["zh"])
            if m["zhalf"]:
                minute: int | None = 30
            elif m["zq1"]:
                minute = 15
            elif m["zq3"]:
                minute = 45
            elif m["zmin"]:
                minute = int(m["zmin"])
            elif m["zminzh"]:
                minute = _zh_number(m["zminzh"])
            else:
                minute = 0
            if hour is None or minute is None:
                continue
            if not m["zh"].isdigit() and e - s == len(m["zh"]) + 1:
                # "一点" is also "a little": a numeral hour alone needs a clock-like neighbour
                nxt = text[e:e + 1]
                prev_period = bool(out) and out[-1].kind in ("period", "relday") and out[-1].end == s
                if not prev_period and (not nxt or nxt not in _ZH_CLOCK_CONTEXT):
                    continue
            out.append(_Tok("clock", s, e, (hour, minute, 0, None)))
        elif g == "noon":
            out.append(_Tok("clock", s, e, (12, 0, 0, "w")))  # "w": said in words
        elif g == "midnight":
            out.append(_Tok("clock", s, e, (0, 0, 0, "w")))
        elif g == "relday":
            out.append(_Tok("relday", s, e, _RELDAYS[m.group(g)]))
        elif g == "period":
            out.append(_Tok("period", s, e, _PERIODS[m.group(g)]))
        else:
            word = m.group(g)
            if word in _ASAP:
                out.append(_Tok("asap", s, e, word))
            elif word in _QUALS:
                cls, where = _QUALS[word]
                if _NEGATED.search(text[max(0, s - 12):s]):
                    # "not be later than": the other bound; a negated "around"/"between" says nothing
                    cls = _FLIP.get(cls, "negated")
                out.append(_Tok("qual", s, e, (cls, where)))
            else:
                out.append(_Tok("conn", s, e, word))
    return out


def _glue(gap: str, words: frozenset[str]) -> bool:
    if len(gap) > 40:
        return False
    return all(w in words for w in _GAP_WORD.findall(gap))


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
    return cls if _glue(gap, _GLUE_QUAL) else None


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
    raise _Ambiguous


def _within(text: str, seq: list[_Tok | _Point]) -> float | None:
    """The minutes of a "within <duration>" / "<duration>内" in the clause, if any."""
    for i, t in enumerate(seq):
        if isinstance(t, _Tok) and t.kind == "dur":
            quals = {_qual_at(text, seq, i, "pre"), _qual_at(text, seq, i, "post")}
            if quals & {"within", "until", "before"}:
                return float(t.value)
    return None


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
    subject, clauses = subject_of(_clauses(normalise(text)))
    if subject is None:
        return None
    wins: list[tuple[str, datetime | None, datetime | None]] = []
    within: list[float] = []
    asap = False
    for clause in clauses:
        seq = _group(clause, _tokens(clause))
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
    return TimeWindow(subject=subject, relation=rel, earliest=lo, latest=hi,  # type: ignore[arg-type]
                      tolerance_min=TOLERANCE_MIN[rel])


def subject_text(text: str) -> str:
    """The normalised clauses of ``text`` that name the time bounded (what step 4 keeps): where an
    item says which order or visit it is about ("the sauna room appointment time")."""
    if not isinstance(text, str) or len(text) > MAX_ITEM_CHARS:
        return ""
    return " | ".join(subject_of(_clauses(normalise(text)))[1])


def compiled_count(rubric: Any) -> int:
    """How many natural-language items a task's rubric checks by code: the distinct ``nl_index``
    of its ``nl_<kind>`` items (every kind counts)."""
    return len({(item.params or {}).get("nl_index") for item in rubric
                if item.kind.startswith("nl_") and "nl_index" in (item.params or {})})


def nl_coverage(n_compiled: int, n_items: int) -> float:
    """The share of natural-language rubric items checked by code (1.0 when there are none)."""
    return n_compiled / n_items if n_items else 1.0


# ==================================================================================================
# Every kind: one compiler entry, ``compile_item(text, context)``
# ==================================================================================================
# the policy numbers of the kinds other than time (the module docstring explains each)
ADDRESS_TOLERANCE_M = 100.0
PRICE_AROUND_RATIO = 0.10
NOTE_COVERAGE = 0.6
RATING_MAX = 5.0


# ----- what the compiler reads of the task's world ---------------------------------------------
@dataclass(frozen=True)
class PlaceInfo:
    """A store (delivery) or shop (in-store) of the task, as an item may name or describe it."""

    place_id: str
    name: str
    tags: tuple[str, ...] = ()
    category: str = ""
    score: float = 0.0
    longitude: float | None = None
    latitude: float | None = None
    address: str = ""


@dataclass(frozen=True)
class ProductInfo:
    """A product of the task's catalogue: its seller, name, tags and the options it offers."""

    product_id: str
    place_id: str
    name: str
    tags: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    price: float = 0.0


@dataclass
class ItemContext:
    """What ``compile_item`` reads besides the text: the task's now, its places and products (a
    value an item names must be found there), its address book, the domain's tool names (for
    process items) and the ids of the records that exist before the episode."""

    now: datetime
    places: tuple[PlaceInfo, ...] = ()
    products: tuple[ProductInfo, ...] = ()
    addresses: tuple[tuple[str, float, float], ...] = ()
    tools: frozenset[str] = frozenset()
    record_ids: tuple[str, ...] = ()

    def place(self, place_id: str) -> PlaceInfo | None:
        index = self.__dict__.setdefault("_places", {p.place_id: p for p in self.places})
        return index.get(place_id)


def _options_of(row: Any) -> tuple[str, ...]:
    return tuple(str(a) for a in (getattr(row, "attributes", None) or []))


def item_context(world: Any, tools: Any = ()) -> ItemContext:
    """The ``ItemContext`` of a life-service world (delivery stores and products, in-store shops
    and their products, the address book); ``tools`` are the domain's tool names."""
    places: list[PlaceInfo] = []
    products: list[ProductInfo] = []
    tables = getattr(world, "tables", {})
    for table, name_field in (("stores", "name"), ("shops", "shop_name")):
        if table not in tables:
            continue
        for row in world.table(table):
            loc = getattr(row, "location", None)
            places.append(PlaceInfo(
                place_id=row.key, name=str(getattr(row, name_field, "") or ""), tags=tuple(getattr(row, "tags", ()) or ()),
                category=str(getattr(row, "category", "") or ""), score=float(getattr(row, "score", 0.0) or 0.0),
                longitude=getattr(loc, "longitude", None), latitude=getattr(loc, "latitude", None),
                address=str(getattr(loc, "address", "") or "")))
    for table in ("products", "shop_products"):
        if table not in tables:
            continue
        for row in world.table(table):
            seller = getattr(row, "seller", None) or getattr(row, "store_id", None) or getattr(row, "shop_id", "")
            products.append(ProductInfo(
                product_id=row.product_id, place_id=str(seller), name=str(row.name), tags=tuple(row.tags or ()),
                options=_options_of(row), price=float(row.price or 0.0)))
    addresses = tuple((loc.address, loc.longitude, loc.latitude) for loc in world.table("locations")) \
        if "locations" in tables else ()
    ids = tuple(k for t in ("orders", "books", "reservations") if t in tables for k in world.table(t).rows)
    return ItemContext(now=world.clock.now, places=tuple(places), products=tuple(products), addresses=addresses,
                       tools=frozenset(tools), record_ids=ids)


# ----- the record a check reads -------------------------------------------------------------------
@dataclass(frozen=True)
class LineFacts:
    product_id: str
    name: str = ""
    tags: tuple[str, ...] = ()
    attributes: str = ""
    quantity: int = 1
    price: float = 0.0
    options: tuple[str, ...] = ()  # the options the product offers


@dataclass(frozen=True)
class RecordFacts:
    """One order, booking or reservation as the checks read it (a final record, or a gold one)."""

    table: str
    record_id: str
    place_id: str
    status: str = ""
    lines: tuple[LineFacts, ...] = ()
    note: str = ""
    address: str = ""
    longitude: float | None = None
    latitude: float | None = None
    total: float | None = None
    customer_count: int | None = None


# ----- the compiled kinds ------------------------------------------------------------------------
class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    # the words of the item that say which order, booking or place it is about (for the loader)
    about: str = ""


class AddressSpec(_Spec):
    """The delivery address is ``address`` (normalised text), or within ``ADDRESS_TOLERANCE_M``
    of its coordinates when the task's address book knows it."""

    kind: Literal["address"] = "address"
    address: str
    longitude: float | None = None
    latitude: float | None = None


class ProcessSpec(_Spec):
    """The history holds an executed call of one of ``tools`` (what the item asks to look up)."""

    kind: Literal["process"] = "process"
    action: str
    tools: list[str]


class StoreSpec(_Spec):
    """The record's store or shop is (``negated``: is not) one of ``place_ids`` (named ``name``)."""

    kind: Literal["store"] = "store"
    place_ids: list[str]
    name: str
    negated: bool = False


class FeatureSpec(_Spec):
    """A store feature (``scope="place"``: the place's name, tags or category) or a product one
    (``"product"``: an ordered line's name, tags or chosen options) matches one of ``phrases``;
    ``negated``: none does. A product option the line's product offers must be the one chosen;
    ``option_only``: the item speaks of an option (temperature, sweetness, size...), so only the
    chosen options count, not names or tags."""

    kind: Literal["feature"] = "feature"
    scope: Literal["place", "product"]
    phrases: list[str]
    negated: bool = False
    option_only: bool = False


class RatingSpec(_Spec):
    kind: Literal["rating"] = "rating"
    op: Literal[">=", ">", "<=", "<", "=="]
    value: float


class DistanceSpec(_Spec):
    """The place lies within ``max_m`` metres of ``reference`` (inclusive unless ``inclusive`` is False)."""

    kind: Literal["distance"] = "distance"
    reference: str
    longitude: float
    latitude: float
    max_m: float
    inclusive: bool = True


class CountSpec(_Spec):
    """``people``: a booking's or reservation's party size; ``items``: the quantities of the order's
    lines (those matching ``phrase`` when given) add up to ``value`` (``op``)."""

    kind: Literal["count"] = "count"
    what: Literal["people", "items"]
    op: Literal["==", ">=", "<="] = "=="
    value: int
    phrase: str = ""


class PriceSpec(_Spec):
    """The order's total (``scope="total"``) or every line's unit price (``"unit"``) lies in the
    bounds (None: open; ``*_strict``: the bound itself is excluded)."""

    kind: Literal["price"] = "price"
    scope: Literal["total", "unit"]
    low: float | None = None
    high: float | None = None
    low_strict: bool = False
    high_strict: bool = False


class NoteSpec(_Spec):
    """The order's note carries ``text`` (most of its words) and contradicts none of it."""

    kind: Literal["note"] = "note"
    text: str
    record_id: str = ""


class StatusSpec(_Spec):
    """The record (``record_id`` when the item names it) is cancelled, or paid."""

    kind: Literal["status"] = "status"
    status: Literal["cancelled", "paid"]
    record_id: str = ""


Part = Annotated[
    TimeWindow | AddressSpec | ProcessSpec | StoreSpec | FeatureSpec | RatingSpec | DistanceSpec | CountSpec
    | PriceSpec | NoteSpec | StatusSpec,
    Field(discriminator="kind"),
]


class AllOf(_Spec):
    """Every part holds: an item that asks for several things ("query the history, so the order
    should be from X"; "hot, not iced")."""

    kind: Literal["all_of"] = "all_of"
    parts: list[Part]


ItemSpec = Annotated[Part | AllOf, Field(discriminator="kind")]
SPEC_KINDS: tuple[str, ...] = ("time_window", "address", "process", "store", "feature", "rating", "distance", "count",
                               "price", "note", "status", "all_of")
_SPEC_ADAPTER: TypeAdapter[Any] = TypeAdapter(ItemSpec)


def parse_spec(data: Any) -> Any:
    """A compiled item from its JSON form (``model_dump(mode="json")``)."""
    return _SPEC_ADAPTER.validate_python(data)


def spec_parts(spec: Any) -> list[Any]:
    return list(spec.parts) if isinstance(spec, AllOf) else [spec]


def spec_target(spec: Any) -> str | None:
    """Which gold records an item is about: ``delivery`` orders, any ``order``, a ``visit``
    (booking or reservation), the ``place`` of an order or visit, any ``record`` (status items),
    ``none`` (process items), or ``arrival`` (time items: a delivery or a visit)."""
    targets = set()
    for p in spec_parts(spec):
        if isinstance(p, TimeWindow):
            targets.add(p.subject)
        elif isinstance(p, AddressSpec):
            targets.add("delivery")
        elif isinstance(p, ProcessSpec):
            continue
        elif isinstance(p, (StoreSpec, RatingSpec, DistanceSpec)) or (isinstance(p, FeatureSpec) and p.scope == "place"):
            targets.add("place")
        elif isinstance(p, CountSpec) and p.what == "people":
            targets.add("visit")
        elif isinstance(p, StatusSpec):
            targets.add("direct" if p.record_id else "record")
        elif isinstance(p, NoteSpec) and p.record_id:
            targets.add("direct")
        else:
            targets.add("order")
    if not targets:
        return "none"
    if len(targets) == 1:
        return targets.pop()
    if targets == {"place", "order"}:
        return "order"
    if targets == {"place", "visit"}:
        return "visit"
    if targets == {"place", "delivery"} or targets == {"order", "delivery"} or targets == {"place", "order", "delivery"}:
        return "delivery"
    return None


def describe_spec(spec: Any) -> str:
    """The compiled item in words, for task notes."""
    if isinstance(spec, AllOf):
        return " and ".join(describe_spec(p) for p in spec.parts)
    if isinstance(spec, TimeWindow):
        return spec.describe()
    no = "not " if getattr(spec, "negated", False) else ""
    if isinstance(spec, AddressSpec):
        near = f" (or within {ADDRESS_TOLERANCE_M:g} m of it)" if spec.longitude is not None else ""
        return f"delivery address {spec.address!r}{near}"
    if isinstance(spec, ProcessSpec):
        return f"a call of {' / '.join(spec.tools)} ({spec.action})"
    if isinstance(spec, StoreSpec):
        return f"the place is {no}{spec.name!r} ({', '.join(spec.place_ids)})"
    if isinstance(spec, FeatureSpec):
        return f"the {spec.scope} {'has none of' if spec.negated else 'matches'} {' / '.join(map(repr, spec.phrases))}"
    if isinstance(spec, RatingSpec):
        return f"the place's rating {spec.op} {spec.value:g}"
    if isinstance(spec, DistanceSpec):
        return f"the place within {spec.max_m:g} m of {spec.reference!r}" + ("" if spec.inclusive else " (exclusive)")
    if isinstance(spec, CountSpec):
        what = "party size" if spec.what == "people" else f"quantity{' of ' + repr(spec.phrase) if spec.phrase else ''}"
        return f"{what} {spec.op} {spec.value}"
    if isinstance(spec, PriceSpec):
        lo = "" if spec.low is None else f"{'>' if spec.low_strict else '>='} {spec.low:g}"
        hi = "" if spec.high is None else f"{'<' if spec.high_strict else '<='} {spec.high:g}"
        return f"{'total' if spec.scope == 'total' else 'unit'} price {' and '.join(x for x in (lo, hi) if x)} yuan"
    if isinstance(spec, NoteSpec):
        return f"the note carries {spec.text!r}" + (f" (order {spec.record_id})" if spec.record_id else "")
    if isinstance(spec, StatusSpec):
        return f"status {spec.status}" + (f" (record {spec.record_id})" if spec.record_id else "")
    return str(spec)


# ----- phrases: how a value an item names is found in a name, tag or option ------------------------
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff]+")
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "single": "1", "twelve": "12", "twenty": "20"}
# words that negate or scale what follows them: a phrase and a field must agree on them
_MARKER_WORDS = {"no": "neg", "not": "neg", "non": "neg", "without": "neg", "none": "neg", "fewer": "less"}
# a field word right after one of these is negated or lessened ("Non-spicy", "Less ice", "Low sugar")
_BLOCKING = frozenset({"neg", "less", "low", "light", "slightly", "reduced", "half"})
_PHRASE_STOP = frozenset({"a", "an", "the", "of", "with", "for", "in", "on", "to", "that", "is", "are", "be", "which",
                          "its", "their", "and", "&", "s"})
# a field word right after one of these is negated or scaled down ("不辣", "少冰", "半糖")
_ZH_MARKER_BEFORE = ("不要", "不加", "不含", "没有", "不", "无", "免", "去", "少", "微", "半", "没")


def _stem(word: str) -> str:
    word = _NUMBER_WORDS.get(word, word)
    if word in ("people", "persons"):
        return "person"
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[-4:-2] in ("ch", "sh") or len(word) > 3 and word.endswith("xes"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@lru_cache(maxsize=1 << 16)
def _en_tokens(text: str) -> tuple[str, ...]:
    """Lower-case word stems; "X-free" reads "no X", marker words as their class."""
    t = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    t = re.sub(r"([a-z]+)-free\b", r"no \1", t)
    out = []
    for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", t):
        w = _stem(w)
        out.append(_MARKER_WORDS.get(w, w))
    return tuple(out)


def _norm_zh(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


def phrase_in(phrase: str, field_text: str) -> bool:
    """Whether ``phrase`` is found in ``field_text`` (one name, tag or option part).

    English: every word of the phrase (stems, numbers as digits, articles dropped) is a word of the
    field, and no negating or lessening word ("no", "non-", "-free", "less", "low") stands right
    before a matched word unless the phrase has it too ("spicy" is not in "Non-spicy"; "fried egg"
    is in "Add fried egg"). Chinese: the phrase is a substring of the field not right after such a
    marker ("辣" is not in "不辣", "冰" not in "去冰")."""
    if not phrase or not field_text:
        return False
    if _CJK_RE.search(phrase):
        p, f = _norm_zh(phrase), _norm_zh(field_text)
        start = f.find(p)
        while start != -1:
            before = f[:start]
            if p.startswith(_ZH_MARKER_BEFORE) or not before.endswith(_ZH_MARKER_BEFORE):
                return True
            start = f.find(p, start + 1)
        return False
    want = [w for w in _en_tokens(phrase) if w not in _PHRASE_STOP]
    have = _en_tokens(field_text)
    if not want or not set(want) <= set(have):
        return False
    # "extra"/"add" before a word keeps it ("Add fried egg" has fried egg); "no"/"less" do not
    wanted = set(want)
    for i, w in enumerate(have):
        if w in wanted and w not in _BLOCKING and i and have[i - 1] in _BLOCKING and have[i - 1] not in wanted:
            return False
    return True


_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_ATTR_PARTS = re.compile(r"[,，;；、/|+]")


def _attr_parts(text: str) -> list[str]:
    return [p.strip() for p in _ATTR_PARTS.split(text or "") if p.strip()]


def _line_fields(line: LineFacts) -> list[str]:
    return [line.name, *line.tags, *_attr_parts(line.attributes)]


def _place_fields(place: PlaceInfo) -> list[str]:
    return [place.name, *place.tags, place.category]


def _line_has(line: LineFacts, phrases: list[str]) -> bool:
    return any(phrase_in(p, f) for p in phrases for f in _line_fields(line))


def _chose(line: LineFacts, phrases: list[str]) -> bool:
    return any(phrase_in(p, a) for p in phrases for a in _attr_parts(line.attributes))


def _offers(line: LineFacts, phrases: list[str]) -> bool:
    """Whether the line's product offers an option the phrases name (then it must be chosen)."""
    return any(phrase_in(p, o) for p in phrases for o in line.options)


# ----- the checks -----------------------------------------------------------------------------------
def norm_address(text: str) -> str:
    """An address with case, blanks and punctuation dropped."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text or "").casefold() if ch.isalnum())


_PARENS = re.compile(r"\([^()]*\)|（[^（）]*）|【[^【】]*】")
ADDRESS_MIN_CHARS = 16


def address_within(wanted: str, address: str) -> bool:
    """Whether ``address`` is the ``wanted`` one: the same text (case, blanks and punctuation
    aside), or, with remarks in brackets dropped ("(340m from Exit 5)"), the same or a more precise
    one that holds it whole ("Student Dormitory, <wanted>"), when the wanted text is at least
    ``ADDRESS_MIN_CHARS`` letters long (a city name alone holds no address)."""
    if not wanted or not address:
        return False
    if norm_address(address) == norm_address(wanted):
        return True
    w, a = norm_address(_PARENS.sub(" ", wanted)), norm_address(_PARENS.sub(" ", address))
    return bool(w) and (w == a or len(w) >= ADDRESS_MIN_CHARS and w in a)


def _haversine(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    from math import asin, cos, radians, sin, sqrt

    p1, p2 = radians(lat1), radians(lat2)
    a = sin((p2 - p1) / 2) ** 2 + cos(p1) * cos(p2) * sin(radians(lon2 - lon1) / 2) ** 2
    return 2 * 6_371_000.0 * asin(sqrt(a))


_SPICE_LEVELS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (3, ("extra spicy", "very spicy", "super spicy", "extremely spicy", "double spicy", "more spicy", "特辣", "重辣", "多辣",
         "加辣", "变态辣", "爆辣", "超辣")),
    (2, ("medium spicy", "moderately spicy", "中辣")),
    (1, ("mild", "mildly spicy", "slightly spicy", "little spicy", "less spicy", "微辣", "少辣", "小辣")),
    (0, ("non-spicy", "non spicy", "not spicy", "no spice", "no chili", "no chilli", "without chili", "不辣", "免辣",
         "不要辣", "不加辣", "不放辣")),
)


def spice_levels(text: str) -> set[int]:
    """The spice levels a text asks for (0 none, 1 mild, 2 medium, 3 extra); longest wording first."""
    t = " ".join(unicodedata.normalize("NFKC", text or "").casefold().replace("-", " - ").split()).replace(" - ", "-")
    found: set[int] = set()
    for level, words in _SPICE_LEVELS:
        for w in words:
            if w in t:
                found.add(level)
                t = t.replace(w, " ")
    return found


# Note polarity: each content word of a clause takes the sign of the marker before it: -2 "no",
# -1 "less", +1 "extra"/"with", 0 none. A negation carries over an "extra" right after it ("do not
# provide an extra set", "不要多要") and ends at the clause's end.
_EN_MARKERS = (
    (-2, r"no|not|non|without|never|don't|dont|do not|doesn't|skip|avoid|hold the|none|free of|remove|omit"),
    (-1, r"less|fewer|little|light|lightly|low|reduced|half|slightly"),
    (1, r"extra|more|additional|add|added|double|plenty of|lots of|with|include|includes|including"),
)
_ZH_MARKERS = (
    (-2, r"不要|不用|不需要|无需|不加|不放|不含|别放|别加|去掉|去除|没有|(?<![送拿过回上下进出])去|不|免|无|别|没"),
    (-1, r"少放|少加|少|微|半|淡"),
    (1, r"多放|多加|多要|加量|双份|多|加|有"),
)
_MARKER_RE = re.compile(
    "|".join(rf"(?P<en{i}>\b(?:{alt})\b)" for i, (_s, alt) in enumerate(_EN_MARKERS))
    + "|" + "|".join(f"(?P<zh{i}>{alt})" for i, (_s, alt) in enumerate(_ZH_MARKERS))
    + r"|(?P<cut>[,.;!?，。；！？、\n]|\b(?:and|but|also|then)\b|并且|而且|但是|但|另外|然后|并|和)"
    # a place or a part of the order after the negated thing is not negated ("no sugar in the coffee")
    + r"|(?P<scope>\b(?:in|into|inside|on|for|to|at|from)\b)"
    + r"|(?P<word>[a-z0-9]+(?:'[a-z]+)?)|(?P<zh>[\u4e00-\u9fff])")
_SIGN_OF = {f"en{i}": s for i, (s, _a) in enumerate(_EN_MARKERS)} | {f"zh{i}": s for i, (s, _a) in enumerate(_ZH_MARKERS)}
# words that neither carry content nor end a negation's reach ("do not *provide an* extra ...")
_NOTE_FILLER = frozenset({"a", "an", "the", "any", "some", "please", "provide", "put", "give", "want", "need", "it",
                          "them", "me", "us", "too", "much", "so", "to", "be", "is", "are", "on", "of", "for", "in",
                          "at", "kindly", "thank", "thanks", "you", "i", "we", "should", "must", "request",
                          "requesting", "note", "order", "one", "set"})


def _signed_units(text: str) -> dict[str, set[int]]:
    """Each content unit of a note (English stem; Chinese character pair) -> the signs it is said with."""
    t = unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'")
    t = re.sub(r"([a-z]+)-free\b", r"no \1", t).replace("-", " ")
    out: dict[str, set[int]] = {}
    sign, neg_open, run = 0, False, ""  # neg_open: a negation with no content word after it yet

    def flush() -> None:
        for u in [run[i:i + 2] for i in range(len(run) - 1)] or ([run] if run else []):
            out.setdefault(u, set()).add(sign)

    for m in _MARKER_RE.finditer(t):
        kind = m.lastgroup or ""
        if kind == "zh":  # Chinese characters gather into a run; its character pairs are the units
            run += m.group()
            neg_open = False
            continue
        flush()
        run = ""
        if kind in ("cut", "scope"):
            sign, neg_open = 0, False
        elif kind in _SIGN_OF:
            s = _SIGN_OF[kind]
            if s == -2:
                sign, neg_open = -2, True
            elif not (neg_open and sign == -2):
                sign = s
        elif m.group() not in _NOTE_FILLER:
            out.setdefault(_stem(m.group()), set()).add(sign)
            neg_open = False
    flush()
    return out


def contradicts(wanted: str, said: str, plain: bool = True) -> bool:
    """Whether ``said`` (an order note) contradicts ``wanted``: another spice level; "extra X" or
    "with X" where "no X" or "less X" is wanted (and the reverse); or, with ``plain``, "no X" /
    "less X" where X is simply asked for ("please do not cut it in half" against "cut it in half":
    a note item; a product feature the note merely mentions is no request of the note's)."""
    a, b = spice_levels(wanted), spice_levels(said)
    if a and b and not a & b:
        return True
    sa, sb = _signed_units(wanted), _signed_units(said)
    for unit, want in sa.items():
        for w in want:
            for s in sb.get(unit, ()):
                if w < 0 < s or (w > 0 or w == 0 and plain) and s < 0:
                    return True
    return False


def _content_units(text: str) -> list[str]:
    t = unicodedata.normalize("NFKC", text or "").casefold()
    units = [_stem(w) for w in re.findall(r"[a-z]{3,}", t) if w not in _NOTE_STOP]
    for run in re.findall(r"[\u4e00-\u9fff]+", t):
        units += [run[i:i + 2] for i in range(len(run) - 1)] or [run]
    return units


_NOTE_STOP = frozenset({"the", "and", "please", "request", "requesting", "requests", "with", "for", "that", "this",
                        "order", "note", "user", "users", "should", "must", "merchant", "store", "provide", "some"})


def note_carries(wanted: str, note: str) -> bool:
    """Whether the note says what the item asks: at least ``NOTE_COVERAGE`` of the item's content
    words (English stems; Chinese character pairs) are in it, and it contradicts none of it."""
    if not note or not note.strip():
        return False
    units = _content_units(wanted)
    if not units:
        return False
    have = set(_content_units(note))
    covered = sum(u in have for u in units) / len(units)
    return covered >= NOTE_COVERAGE and not contradicts(wanted, note)


def _compare(x: float, op: str, v: float) -> bool:
    return {">=": x >= v - 1e-9, ">": x > v + 1e-9, "<=": x <= v + 1e-9, "<": x < v - 1e-9,
            "==": abs(x - v) <= 1e-9}[op]


def _price_ok(spec: PriceSpec, x: float) -> bool:
    if spec.low is not None and not (x > spec.low + 1e-9 if spec.low_strict else x >= spec.low - 1e-9):
        return False
    return spec.high is None or (x < spec.high - 1e-9 if spec.high_strict else x <= spec.high + 1e-9)


def spec_holds(spec: Any, record: RecordFacts | None, place: PlaceInfo | None,
               calls: frozenset[str] | None = None) -> bool:
    """Whether a compiled item (not a time window: its check needs the clock) holds of one record
    (``place``: its store or shop; ``calls``: the names of the tools executed in the episode, None
    when only the record is judged: process parts then hold)."""
    if isinstance(spec, AllOf):
        return all(spec_holds(p, record, place, calls) for p in spec.parts if not isinstance(p, TimeWindow))
    if isinstance(spec, ProcessSpec):
        return calls is None or bool(calls & set(spec.tools))
    if record is None:
        return False
    if isinstance(spec, AddressSpec):
        if not record.address and record.longitude is None:
            return False
        if address_within(spec.address, record.address):
            return True
        return (spec.longitude is not None and spec.latitude is not None and record.longitude is not None
                and record.latitude is not None
                and _haversine(spec.longitude, spec.latitude, record.longitude, record.latitude) <= ADDRESS_TOLERANCE_M)
    if isinstance(spec, StatusSpec):
        cls = "cancelled" if record.status == "cancelled" else "unpaid" if record.status == "unpaid" else "paid"
        return cls == spec.status
    if isinstance(spec, NoteSpec):
        return note_carries(spec.text, record.note)
    if isinstance(spec, CountSpec):
        if spec.what == "people":
            return record.customer_count is not None and _compare(record.customer_count, spec.op, spec.value)
        lines = [x for x in record.lines if not spec.phrase or _line_has(x, [spec.phrase])]
        return bool(lines) and _compare(sum(x.quantity for x in lines), spec.op, spec.value)
    if isinstance(spec, PriceSpec):
        if spec.scope == "total":
            total = record.total if record.total is not None else sum(x.price * x.quantity for x in record.lines)
            return bool(record.lines) and _price_ok(spec, total)
        return bool(record.lines) and all(_price_ok(spec, x.price) for x in record.lines)
    if isinstance(spec, FeatureSpec) and spec.scope == "product":
        lines = list(record.lines)
        has = _chose if spec.option_only else _line_has
        if spec.negated:
            return bool(lines) and not any(has(x, spec.phrases) for x in lines)
        if record.note and any(contradicts(p, record.note, plain=False) for p in spec.phrases):
            return False  # a note saying "extra spicy" where the item asks for mild
        bound = [x for x in lines if _offers(x, spec.phrases)]
        if bound:  # an option the product offers: every such line must have chosen it
            return all(_chose(x, spec.phrases) for x in bound)
        return not spec.option_only and any(_line_has(x, spec.phrases) for x in lines)
    if place is None:
        return False
    if isinstance(spec, StoreSpec):
        return (place.place_id in spec.place_ids) != spec.negated
    if isinstance(spec, FeatureSpec):
        found = any(phrase_in(p, f) for p in spec.phrases for f in _place_fields(place))
        return found != spec.negated
    if isinstance(spec, RatingSpec):
        return _compare(place.score, spec.op, spec.value)
    if isinstance(spec, DistanceSpec):
        if place.longitude is None or place.latitude is None:
            return False
        d = _haversine(place.longitude, place.latitude, spec.longitude, spec.latitude)
        return d <= spec.max_m + 1e-6 if spec.inclusive else d < spec.max_m
    return False


# ----- reading an item ------------------------------------------------------------------------------
class _Unclear(Exception):
    """The item cannot be compiled unambiguously: it stays with the judge."""


def _knorm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold().replace("’", "'").replace("‘", "'")
    return " ".join(t.split()).strip(" .。")


def _is_zh(text: str) -> bool:
    cjk = len(_CJK_RE.findall(text))
    return cjk > 0 and cjk >= 0.3 * len(re.findall(r"[a-z]", text))


_NUM_RE = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|a single|single|[一二两三四五六七八九十]{1,3})"


def _num(text: str) -> float:
    t = text.strip().removeprefix("a ").strip()
    if t in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[t])
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        return float(t)
    n = _zh_number(t)
    if n is None:
        raise _Unclear
    return float(n)


# the conclusion of an item that reasons ("..., the result is X, so the order should be from X")
_THEN = re.compile(
    r"(?:[,;.]\s*|\s)(?:and\s+)?(?:therefore|thus|hence|consequently|accordingly|so(?! that| as| far| much| many))\b[,\s]*"
    r"|[;；。]\s*|(?<=[a-z0-9)])\.\s+(?=[a-z])|，?(?:所以|因此|因而|故而|从而)")
_IF = re.compile(r"^(?:if|unless|otherwise|else|in case|whether)\b|^(?:如果|若|假如|否则|要是)|\bif (?:not|none|no|yes|so)\b")
_EN_MODAL = re.compile(
    r"\b(?:(?P<neg>cannot|can't|can not|must not|mustn't|should not|shouldn't|shall not|may not|need not|does not need to|"
    r"do not need to|does not|do not|don't|doesn't|should never|must never|(?:is|are) not allowed to)"
    r"|(?P<pos>should|must|needs? to|has to|have to|(?:is|are) required to|ought to|shall|needs?(?= (?:a|an|the)\b)))\b")
# "预约人数为3人": a plain "为/是" after the noun of what is stated
_ZH_COPULA = re.compile(r"(?<=人数|评分|价格|总价|数量|总数|商家|店铺|餐厅|订单|状态|套餐|商品|时间|地址)(?P<pos>为|是)(?P<neg>(?!))?")
# a plain statement: "is / are", or a verb of what a record holds, kept in the predicate ("includes X")
_EN_COPULA = re.compile(r"\b(?P<neg>is not|are not|isn't|aren't|will not be|won't be)\b|\b(?P<pos>is|are|will be|"
                        r"(?=(?:includes?|contains?) ))")
_ZH_MODAL = re.compile(
    r"(?P<neg>不能|不应该|不应当|不应|不得|不可以|不可|不要|禁止|切勿|不宜)"
    r"|(?P<pos>应该|应当|(?<![供相适反响对答效])应|必须|需要|务必|须|(?<![主只需重想不])要(?=在|为|是)|需(?=为|是))")
_PROC_EN = re.compile(
    r"^(?:(?:the )?agent |you |we |first,? |also )?(?:(?:should|must|needs? to|has to|have to|is required to|"
    r"it is necessary to)\s+)?(?:first\s+)?(?:query|check|search(?: for)?|look up|look for|verify|confirm|find out|"
    r"inquire|investigate|consult|review|examine)\b(?!\s+(?:shows?|showed|results?|reveals?|indicates?|finds?|found)\b)"
    r"(?P<obj>.*)$")
_PROC_ZH = re.compile(r"^(?:需要|应该|应当|应|必须|需|要|请)?(?:先)?(?:查询|查看|搜索|检查|确认|核实|了解|查找|检索|查一下|查)(?P<obj>.*)$")
_HISTORY_TOOLS = ("get_user_historical_behaviors", "get_user_all_orders", "search_delivery_orders",
                  "get_delivery_order_detail", "get_instore_orders", "get_instore_books", "get_instore_reservations",
                  "search_instore_book", "search_instore_reservation")
_CATALOGUE_TOOLS = ("delivery_store_search_recommend", "delivery_product_search_recommend", "get_delivery_store_info",
                    "get_delivery_product_info", "instore_shop_search_recommend", "instore_product_search_recommend",
                    "get_nearby")
# what a process item asks to look up -> the tools that do it (several: any of them)
_ACTIONS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("user history", re.compile(r"histor|behavio|previous|last time|usual|habit|frequent|often|used to|"
                                r"历史|以往|之前|上次|常去|习惯|偏好|消费记录"), _HISTORY_TOOLS),
    ("orders", re.compile(r"\borders?\b|订单"), _HISTORY_TOOLS),
    ("weather", re.compile(r"weather|temperature|\brain|sunny|forecast|天气|气温|温度|下雨"), ("weather",)),
    ("holiday", re.compile(r"holiday|festival|mother's day|father's day|valentine|children's day|women's day|qixi|"
                           r"节日|节假日|假期|[\u4e00-\u9fff]节\b"), ("get_holiday_date", "get_date_holiday_info")),
    ("distance", re.compile(r"distance|within \d|\d\s*(?:km|m|kilomet|met)|nearby|nearest|closest|距离|附近|最近|公里|千米"),
     ("longitude_latitude_to_distance", "get_nearby", "address_to_longitude_latitude", "delivery_distance_to_time")),
    ("catalogue", re.compile(r"store|shop|restaurant|merchant|package|set|menu|product|item|offer|availab|stock|price|"
                             r"expensive|cheap|venue|salon|studio|club|cent(?:er|re)|\bbar\b|hall|cinema|gym|course|class|"
                             r"商家|店|餐厅|套餐|商品|菜品|价格|有没有|是否有"), _CATALOGUE_TOOLS),
)


# where the object of a query ends and its purpose or expected result begins ("user behavior
# history | to find previously visited restaurants, with the result being X")
_PROC_PURPOSE = re.compile(r"\s+(?:to (?:find|see|identify|determine|learn|get|confirm|know|decide|choose|select|pick|"
                           r"locate|obtain|check)|in order to|so (?:that|as)|with the result|,)|[，,]|以便|以确定|以找到|"
                           r"来确定|来找到|从而|结果")


def _process(obj: str, ctx: ItemContext) -> ProcessSpec:
    core = _PROC_PURPOSE.split(obj, maxsplit=1)[0]
    actions = [(name, tools) for name, rx, tools in _ACTIONS if rx.search(core)]
    if not actions:  # the object alone names nothing: what the query is for may
        actions = [(name, tools) for name, rx, tools in _ACTIONS if rx.search(obj)]
    if not actions:
        raise _Unclear
    tools = sorted({t for _, ts in actions for t in ts if not ctx.tools or t in ctx.tools})
    if not tools:
        raise _Unclear
    return ProcessSpec(action=", ".join(dict.fromkeys(n for n, _ in actions)), tools=tools)


def _process_demand(clause: str, ctx: ItemContext) -> ProcessSpec | None:
    m = _PROC_EN.match(clause) or _PROC_ZH.match(clause)
    return _process(clause, ctx) if m else None


def _has_modal(clause: str) -> bool:
    return bool(_EN_MODAL.search(clause) or _ZH_MODAL.search(clause))


def compile_item(text: str, context: ItemContext | datetime) -> Any | None:
    """One natural-language rubric item as a typed spec (``ItemSpec``: a ``TimeWindow``, an
    ``AddressSpec``, ..., or an ``AllOf`` of several), or None when it is none of the kinds, or
    not unambiguous (a value it names is not in the task's world, a part of it is left over, it
    is conditional): None means "for the judge", never "false". ``context`` is the task's
    ``ItemContext`` (a bare datetime: now, with no world: only time and world-free kinds compile).

    Never raises; linear in ``len(text)`` up to the catalogue look-ups."""
    ctx = context if isinstance(context, ItemContext) else ItemContext(now=context)
    memo: dict[str, Any] = ctx.__dict__.setdefault("_compiled", {})
    if isinstance(text, str) and text in memo:
        return memo[text]
    try:
        spec = _compile_item(text, ctx)
        if spec is None:
            spec = _compile_pieces(text, ctx)
    except Exception:  # noqa: BLE001  an item that does not parse is the judge's, whatever went wrong
        spec = None
    if isinstance(text, str):
        memo[text] = spec
    return spec


def _compile_pieces(text: str, ctx: ItemContext) -> Any | None:
    """An item of requirements joined by semicolons ("Must query the history ...; the restaurant
    must be X"), when every piece compiles and no piece is a time: all of them."""
    if not isinstance(text, str) or len(text) > MAX_ITEM_CHARS:
        return None
    pieces = [x for x in re.split(r"\s*[;；]\s*", text) if x.strip(" .。")]
    if len(pieces) < 2:
        return None
    parts: list[Any] = []
    for piece in pieces:
        spec = _compile_item(piece, ctx)
        if spec is None or isinstance(spec, TimeWindow):
            return None
        parts += spec_parts(spec)
    return _joined(parts)


def _joined(parts: list[Any]) -> Any | None:
    """The compiled parts of one item, each once: the part, or their ``AllOf`` when they are about
    one kind of record (None when they are about several, which no record answers alone)."""
    unique = [parse_spec(json.loads(x)) for x in dict.fromkeys(x.model_dump_json() for x in parts)]
    if len(unique) == 1:
        return unique[0]
    about = next((x.about for x in unique if getattr(x, "about", "")), "")
    spec = AllOf(parts=unique, about=about)
    return spec if spec_target(spec) is not None else None


def _compile_item(text: str, ctx: ItemContext) -> Any | None:
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_ITEM_CHARS:
        return None
    window = compile_time_item(text, ctx.now)
    if window is not None:
        return window
    t = _knorm(text)
    try:
        address = _address_item(t, "", ctx)  # an address holds commas and dots: it is read whole
        if address is not None:
            return address
        cuts = [m for m in _THEN.finditer(t) if m.end() < len(t)]
        premise, conclusion = (t[:cuts[-1].start()], t[cuts[-1].end():]) if cuts else ("", t)
        parts: list[Any] = []
        for clause in re.split(r"[,，;；。]|\.\s", premise):
            clause = clause.strip(" .")
            if not clause:
                continue
            if _IF.search(clause):
                raise _Unclear  # a condition the item leaves to the reader
            demand = _process_demand(clause, ctx)
            if demand is not None:
                parts.append(demand)
            elif _has_modal(clause):
                raise _Unclear  # a second requirement in the reasoning
        status = _status_item(conclusion, ctx)
        demand = _process_demand(conclusion, ctx) if status is None else None
        if status is not None:
            parts.append(status)
        elif demand is not None:
            if re.search(r"\b(?:and|then)\b (?:select|choose|order|book|reserve|make|place)|并|然后", conclusion):
                raise _Unclear
            parts.append(demand)
        else:
            parts += spec_parts(_requirement(conclusion, ctx))
    except _Unclear:
        return None
    return _joined(parts) if parts else None


# ----- the requirement: subject, modal, predicate -------------------------------------------------
_PURPOSE_EN = re.compile(
    r",?\s+(?:to ensure|ensuring|ensure that|so that|so as to|in order to|because|since|as (?:the|she|he|they|it|this|"
    r"his|her|their|users?|children|kids)|due to|to avoid|avoiding|to prevent|preventing|to make sure|making sure|"
    r"to allow|allowing|to meet|meeting|to satisfy|satisfying|to suit|suiting|to accommodate|accommodating|"
    r"in line with|in accordance with|according to|considering|given that|which (?:is|are|suits|meets|matches)|"
    r"to cater|catering)\b.*$")
_PURPOSE_ZH = re.compile(r"[，,]?(?:以便|以免|以确保|以符合|确保|避免|保证|为了|因为|由于|这样|方便|好让|满足|符合|适合|照顾|以照顾|以满足|迎合|以迎合|体现在).*$")
_EXAMPLE_EN = re.compile(r",?\s*\(?\b(?:such as|like|e\.g\.|for example|for instance|especially)\b.*$")
_EXAMPLE_ZH = re.compile(r"[，,]?\s*[(（]?(?:如|例如|比如|诸如|像是|像)[^，,。]*$|等[^，,。]{0,6}$")
_PARTICIPLES = frozenset({"ordered", "reserved", "booked", "selected", "chosen", "purchased", "bought", "placed",
                          "recommended", "appointed", "new", "re-ordered", "reordered", "replacement", "the", "a", "an",
                          "user's", "users'", "all", "both", "each"})
_PLACE_HEADS = re.compile(
    r"^(?:restaurants?|stores?|shops?|merchants?|vendors?|venues?|salons?|studios?|clubs?|cent(?:er|re)s?|halls?|bars?|"
    r"caf[eé]s?|ktvs?|livehouses?|gyms?|workshops?|establishments?|institutions?|bakery|bakeries|tea ?houses?|teahouses?|"
    r"parks?|pools?|cinemas?|base|track|spas?|parlou?rs?|brands?|eatery|outlets?|branch|business|facility|facilities|"
    r"academy|school|arena|court|market|eateries|places?|businesses)$")
_PRODUCT_HEADS = re.compile(
    r"^(?:orders?|items?|products?|packages?|sets?|meals?|dish(?:es)?|drinks?|beverages?|combos?|tickets?|vouchers?|"
    r"courses?|class(?:es)?|lessons?|menus?|food|snacks?|desserts?|cakes?|coffee|tea|noodles?|rice|soup|portions?|"
    r"services?|treatments?|sessions?|pass(?:es)?|cards?|bouquets?|flavou?rs?|specifications?|options?|sizes?|"
    r"temperature|sweetness|spiciness|choices?|selections?)$")
_ZH_PLACE_TAIL = ("商家", "店铺", "门店", "商户", "餐厅", "餐馆", "饭店", "店家", "品牌", "店")
_ZH_PRODUCT_TAIL = ("商品", "菜品", "套餐", "订单", "饮品", "产品", "口味", "规格", "属性", "温度", "甜度", "辣度", "单品",
                    "食品", "饮料", "菜")


def _split_modal(c: str) -> tuple[str, bool, str]:
    """(subject, negated, predicate) of a requirement; ``_Unclear`` without a modal."""
    if _is_zh(c):
        m = _ZH_MODAL.search(c) or _ZH_COPULA.search(c)
        if m is None:
            raise _Unclear
        subject, neg, pred = c[:m.start()], m.group("neg") is not None, c[m.end():]
        if pred.startswith(("不", "避免")) and not pred.startswith(("不辣", "不加", "不含", "不要")):
            neg, pred = not neg, pred.removeprefix("避免").removeprefix("不")
        return subject.strip(" ，,"), neg, pred.strip(" ，,")
    m = _EN_MODAL.search(c) or _EN_COPULA.search(c)
    if m is None:
        raise _Unclear
    subject, neg, pred = c[:m.start()], m.group("neg") is not None, c[m.end():].strip()
    for word in ("not ", "never "):
        if pred.startswith(word):
            neg, pred = True, pred[len(word):]
    if pred.startswith(("avoid ", "exclude ")):
        neg, pred = not neg, pred.split(" ", 1)[1]
    return subject.strip(" ,"), neg, pred.strip(" ,")


def _head_class(subject: str) -> str | None:
    """"place", "product" or None: what the subject's head noun is ("the ordered item at the
    massage shop": item; "the restaurant ordered from": restaurant)."""
    if _is_zh(subject):
        s = re.sub(r"(?:的|中|里|内|中的)$", "", subject)
        if s.endswith(_ZH_PRODUCT_TAIL):
            return "product"
        if s.endswith(_ZH_PLACE_TAIL):
            return "place"
        return None
    chunk = re.split(r"\b(?:at|from|in|for|of|to|with|by|on|that|which|who)\b", subject, maxsplit=1)[0]
    words = [w for w in re.findall(r"[a-z][a-z'-]*", chunk) if w not in _PARTICIPLES]
    if not words:
        return None
    head = words[-1]
    if _PRODUCT_HEADS.match(head):
        return "product"
    if _PLACE_HEADS.match(head):
        return "place"
    return None


def _cut_purpose(pred: str) -> str:
    pred = _PURPOSE_ZH.sub("", pred) if _is_zh(pred) else _PURPOSE_EN.sub("", pred)
    return pred.strip(" ,，")


_IMPERATIVE = re.compile(r"^(?:select|choose|pick|opt for) ")


def _requirement(c: str, ctx: ItemContext) -> Any:
    about = ""
    m = re.match(r"^(?:when|while|for|as for|regarding|upon)\s+(.+?),\s*(.+)$", c) or \
        re.match(r"^(?:为|给|在)?(.+?时)[，,]?(.+)$", c)
    if m and not _is_zh(c) or m and _ZH_MODAL.search(m.group(2)) and not _ZH_MODAL.search(m.group(1)):
        about, c = m.group(1), m.group(2)
    for parser in (_address_item, _note_item):
        spec = parser(c, about, ctx)
        if spec is not None:
            return spec
    if about and _IMPERATIVE.match(c):  # "when choosing the latte, select a hot one": the clause is the demand
        subject, neg, pred = "", False, c
    else:
        subject, neg, pred = _split_modal(c)
    about = f"{about} {subject}".strip()
    if _IF.search(subject) or re.search(r"\b(?:if|unless|otherwise)\b|如果|否则|若", pred):
        raise _Unclear
    if re.search(r"\b(?:same|together|combined|respectively|each|per person|per|apiece|average|both|other than|except|"
                 r"besides|apart from|excluding)\b|相同|同一|同时|各|分别|每|人均|平均|除了|除", f"{subject} {pred}"):
        raise _Unclear  # about several records at once, or per head
    for parser in (_rating_item, _distance_item, _people_item, _count_item, _price_item, _store_item, _feature_item):
        spec = parser(subject, neg, pred, ctx)
        if spec is not None:
            return _with_about(spec, about)
    raise _Unclear


def _with_about(spec: Any, about: str) -> Any:
    if isinstance(spec, AllOf):
        return spec.model_copy(update={"about": about, "parts": [_with_about(p, about) for p in spec.parts]})
    return spec.model_copy(update={"about": about}) if isinstance(spec, _Spec) else spec


# ----- status: cancellation and payment -------------------------------------------------------------
_CANCEL = re.compile(r"\bcancel(?:l?ed|l?ing|lation)?\b|取消")
_STATUS_TAIL = re.compile(
    r"(?:the )?(?:order |reservation |booking |appointment )?(?:status )?(?:(?:should|must) (?:be )?|is |has been |was )?"
    r"(?:changed |updated |modified |set )?(?:to )?(?:be )?(?:cancell?ed|'cancell?ed')(?: status| state)?$"
    r"|订单(?:的)?(?:最新)?状态(?:应|应该)?(?:变更|更新|修改|改|设置)?(?:为|成)?(?:cancelled|已取消|取消)$"
    r"|状态(?:应|应该)?(?:变更|更新|修改|改)?(?:为|成)?(?:cancelled|已取消)$")
_MORE_WORK = re.compile(r"\b(?:and|then|also)\b (?:re-?order|place|book|reserve|make|create|order|buy|purchase|select|"
                        r"choose|pay)|重新|再下|并(?:且)?(?:重新|下单|预约|预订|支付)|然后|之后再")


def _status_item(t: str, ctx: ItemContext) -> StatusSpec | None:
    """"Successfully cancel the ... order with id X, the status should be cancelled", "取消...订单":
    the record (by its id when the item gives one) is cancelled; "... should be paid": paid. An
    item that speaks of cancelling in any other way is ``_Unclear``."""
    if _MORE_WORK.search(t):
        if _CANCEL.search(t):
            raise _Unclear
        return None
    ids = [i for i in ctx.record_ids if i and i.casefold() in t]
    ids = [i for i in ids if not any(i != j and i.casefold() in j.casefold() for j in ids)]
    cancel = _CANCEL.search(t)
    if cancel is None:
        m = re.match(r"^(?P<s>.+?) (?:status )?(?:should|must) be (?:paid|completed and paid)$|^(?P<z>.+?)(?:应|应该|必须)"
                     r"(?:完成)?(?:支付|付款)$", t)
        if m is None:
            return None
        return StatusSpec(status="paid", about=m.group("s") or m.group("z") or "")
    if len(ids) > 1:
        raise _Unclear
    head = t[:cancel.start()]
    starts = re.fullmatch(r"(?:successfully |please |need to |needs to |should |must |the agent should |agent should )?"
                          r"|(?:成功|需要|应|应该|请|已)?", head.strip()) is not None
    zh_to = re.search(r"需要将|应将|将", head) and re.search(r"取消$", t)
    tail = _STATUS_TAIL.search(t)
    if not (starts or zh_to or tail):
        raise _Unclear
    if re.search(r"\b(?:not|don't|never)\b|不要取消|不能取消|不应取消|无需取消", t):
        raise _Unclear
    if re.search(r"\b(?:if|unless)\b|如果|若", t):
        raise _Unclear
    about = re.sub(r"\b(?:successfully|cancel(?:l?ed)?|the status.*$|order status.*$)\b|成功|取消|订单状态.*$", " ", t)
    return StatusSpec(status="cancelled", record_id=ids[0] if ids else "", about=" ".join(about.split()))


# ----- addresses ------------------------------------------------------------------------------------
_ADDRESS_WORD = re.compile(r"\baddress(?:es)?\b")
_ADDRESS_MODAL = re.compile(r"\s+(?:should|must|needs to|has to|is|will be|shall)\s+(?:be\s+)?(?:set to\s+|to\s+)?")
_ADDRESS_ZH = re.compile(r"^(?P<s>.*?(?:送达|配送|收货|送餐|外卖)?地址)(?:应该|应当|应|必须|需要|须)?(?:为|是|填写为|设置为|填为)(?P<x>.+)$")
_ADDRESSY = re.compile(r"\d|road|street|avenue|lane|district|building|floor|room|unit|park|garden|community|complex|"
                       r"plaza|mansion|tower|city|province|estate|residen|路|街|号|区|市|楼|室|栋|幢|院|小区|大厦|广场|园")


def _address_en(c: str) -> tuple[str, str] | None:
    """(subject, address) of "... address ... should be X" (read in one pass: the first "address",
    then the first modal after it)."""
    a = _ADDRESS_WORD.search(c)
    if a is None:
        return None
    m = _ADDRESS_MODAL.search(c, a.end())
    return None if m is None else (c[:m.start()], c[m.end():])


def _address_item(c: str, about: str, ctx: ItemContext) -> AddressSpec | None:
    if "地址" in c:
        zm = _ADDRESS_ZH.match(c)
        found = None if zm is None else (zm.group("s"), zm.group("x"))
    else:
        found = _address_en(c)
    if found is None:
        return None
    subject, x = found[0], found[1].strip(" .。，,")
    if re.search(r"\b(?:store|shop|restaurant|merchant)(?:'s)? address|address of the (?:store|shop|restaurant|merchant)|"
                 r"商家地址|店铺地址|门店地址", subject):
        return None
    x = _PURPOSE_ZH.sub("", x) if _is_zh(x) else re.sub(
        r",?\s+(?:to ensure|ensuring|so that|because|since|as the|for the user|which is).*$", "", x)
    x = x.strip(" .。，,")
    if (not x or x.startswith(("in ", "near ", "within ", "at ", "close ", "inside ", "located ", "not ", "the same",
                               "one of", "either"))
            or re.search(r"\bor\b|或者|或", x) or not _ADDRESSY.search(x)):
        raise _Unclear
    key = norm_address(x)
    for addr, lon, lat in ctx.addresses:
        if norm_address(addr) == key:
            return AddressSpec(address=addr, longitude=lon, latitude=lat, about=f"{about} {subject}".strip())
    if re.match(r"(?:the|their|his|her|my|our|your|user's)\b", x) or re.search(r"\baddress\b|住址|地址|所在地", x):
        raise _Unclear  # "the home address at ...": which one, the book does not say
    return AddressSpec(address=x, about=f"{about} {subject}".strip())


# ----- notes ----------------------------------------------------------------------------------------
_NOTE_WORD = re.compile(r"\b(?:notes?|remarks?|comments?)\b")
_NOTE_BEFORE = re.compile(r"\b(?:should|must|needs? to|has to|have to|needs?)\s+(?:also\s+)?(?:include|contain|have|add|carry|"
                          r"come with|be placed with|specify|state|mention)?\s*(?:an? |the )?"
                          r"(?:(?:special|clear|short|brief|additional|separate|order|delivery|merchant) )*$")
_NOTE_AFTER = re.compile(r"^(?:\s+(?:field|section))?\s*(?:requesting|asking(?: for)?|saying|that says|stating|that states|"
                         r"specifying|mentioning|indicating|reading|of|to request|to ask for|with|for|about|that|:)\s*(?P<x>.+)$")
# "Add a note to the X order: Y" / "Add note for X requesting Y"
_NOTE_ADD = re.compile(r"^(?:please\s+)?(?:add|include|leave|write|put)\s+(?:an?\s+|the\s+)?(?:(?:special|order)\s+)?"
                       r"(?:notes?|remarks?)\s+(?:to|for|on|in)\s+(?P<s>.+?)(?:\s*:\s*|\s+(?:requesting|asking for|saying|"
                       r"stating|that says|specifying)\s+)(?P<x>.+)$")
_NOTE_SAYS = re.compile(r"\s+(?:should|must)\s+(?:say|state|read|include|contain|mention|request|ask for|be)\s*:?\s*")
_NOTE_ZH = re.compile(r"^(?P<s>.*?)(?:应该|应当|应|必须|需要|须|要)?(?:添加|加上|写上|注明|填写|增加|在)?(?:订单)?备注(?:中|里|上)?"
                      r"(?:应|应该|需要)?(?:修改为|改为|更新为|变更为|写明|注明|说明|写|为|是|内容为|要求|请求|提出)?[：:]?"
                      r"(?P<x>.+)$")


def _note_item(c: str, about: str, ctx: ItemContext) -> NoteSpec | None:
    if not re.search(r"\bnotes?\b|\bremarks?\b|备注", _names_out(c, ctx)):
        return None
    zh = _is_zh(c)
    if zh:
        m = _NOTE_ZH.match(c)
        if m is None:
            raise _Unclear
        subject, x = m.group("s") or "", m.group("x") or ""
    else:  # "... should include a note requesting X" or "the note should say X", in one pass each
        w = _NOTE_WORD.search(c)
        before = _NOTE_BEFORE.search(c[:w.start()]) if w else None
        after = _NOTE_AFTER.match(c[w.end():]) if w and before else None
        says = _NOTE_SAYS.search(c, w.end()) if w and after is None else None
        add = _NOTE_ADD.match(c)
        # "X should note 'Y'": the word is the verb, what follows is what the note says
        verb = (w is not None and before is not None and after is None and says is None
                and re.search(r"\b(?:should|must|needs? to|has to)\s+$", c[:w.start()]) is not None
                and c[w.start():w.end()] == "note")
        if add is not None:
            subject, x = add.group("s"), add.group("x")
        elif verb and w is not None and before is not None:
            subject, x = c[:before.start()], c[w.end():]
        elif after is not None and before is not None:
            subject, x = c[:before.start()], after.group("x")
        elif says is not None:
            subject, x = c[:says.start()], c[says.end():]
        else:
            raise _Unclear
    if zh:
        x = re.sub(r"^(?:要求|请求|说明|写明|注明)", "", x)
        x = re.sub(r"(?:的)?(?:特殊)?(?:要求|需求|请求|备注)$", "", x)
    if ":" in x:
        x = x.split(":", 1)[1]  # "a note for the order X: no cilantro"
    x = _cut_purpose(x).strip(" '\"“”‘’。.，,")
    if len(x) < 2 or re.search(r"\b(?:or|if)\b|或者|如果", x):
        raise _Unclear
    ids = [i for i in ctx.record_ids if i and i.casefold() in c]
    if len(ids) > 1:
        raise _Unclear
    return NoteSpec(text=x, record_id=ids[0] if ids else "", about=f"{about} {subject}".strip())


# ----- ratings --------------------------------------------------------------------------------------
_R = r"(\d(?:\.\d+)?)"
_RATING_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    (">=", re.compile(rf"^(?:greater than or equal to|equal to or (?:greater|higher) than|at least|no (?:lower|less) than|"
                      rf"not (?:be )?(?:lower|less) than|a minimum of|minimum(?: of)?|>=|≥)\s*{_R}(?: stars?| points?)?$")),
    (">=", re.compile(rf"^{_R}\s*(?:stars?|points?)?\s*(?:or|and) (?:above|higher|more|greater|better|up)$")),
    (">=", re.compile(rf"^{_R}\+$")),
    (">", re.compile(rf"^(?:above|higher than|greater than|more than|over|exceeding|exceed|better than)\s*{_R}(?: stars?| points?)?$")),
    ("<=", re.compile(rf"^(?:at most|no (?:higher|more) than|not (?:be )?(?:higher|more) than|<=|≤)\s*{_R}(?: stars?| points?)?$")),
    ("<=", re.compile(rf"^{_R}\s*(?:stars?|points?)?\s*(?:or|and) (?:below|lower|less|under)$")),
    ("<", re.compile(rf"^(?:below|lower than|less than|under)\s*{_R}(?: stars?| points?)?$")),
    ("==", re.compile(rf"^(?:exactly )?{_R}(?: stars?| points?)?$")),
)
_RATING_ZH: tuple[tuple[str, re.Pattern[str]], ...] = (
    (">=", re.compile(rf"^(?:在|为|是|达到)?{_R}(?:分|星)?(?:及|或)?以上$")),
    (">=", re.compile(rf"^(?:不低于|不少于|至少|大于等于|不小于|≥|>=)(?:为)?{_R}(?:分|星)?(?:及以上)?$")),
    (">", re.compile(rf"^(?:高于|大于|超过){_R}(?:分|星)?$")),
    ("<=", re.compile(rf"^(?:不高于|不超过|至多|小于等于|≤|<=){_R}(?:分|星)?$|^(?:在|为)?{_R}(?:分|星)?(?:及|或)以下$")),
    ("<", re.compile(rf"^(?:低于|小于){_R}(?:分|星)?$")),
    ("==", re.compile(rf"^(?:为|是)?{_R}(?:分|星)$")),
)
_OP_FLIP = {">=": "<", ">": "<=", "<=": ">", "<": ">=", "==": "=="}


def _rating_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> RatingSpec | None:
    zh = _is_zh(subject + pred)
    said = _names_out(f"{subject} {pred}", ctx)  # "Star Power Table Tennis Hall" speaks of no rating
    if not (re.search(r"\b(?:ratings?|rated|scores?|stars?)\b", said) or re.search(r"评分|评级|星级|分数|得分", said)):
        return None
    p = _cut_purpose(pred)
    if zh:
        p = re.sub(r"^(?:商家|店铺)?(?:的)?(?:评分|评级|星级|分数|得分)(?:应)?", "", p)
    else:
        p = re.sub(r"^(?:be |have |has |with |a |an |the |merchant |store |shop |overall |user |customer |rating |score |"
                   r"of |rated )+", "", p)
    inclusive = bool(re.search(r"[(（](?:inclusive|including|含)", p))
    p = re.sub(r"\s*[(（](?:inclusive|including|含)[^)）]*[)）]$", "", p)
    for op, rx in (_RATING_ZH if zh else _RATING_EN):
        m = rx.match(p.strip())
        if m:
            value = float(next(g for g in m.groups() if g is not None))
            if not 0.0 <= value <= RATING_MAX:
                raise _Unclear
            op = _OP_FLIP[op] if neg else op
            if inclusive and op in (">", "<"):
                op += "="
            return RatingSpec(op=op, value=value)  # type: ignore[arg-type]
    raise _Unclear


# ----- distances ------------------------------------------------------------------------------------
_UNIT = r"(?P<unit>km|kilometers?|kilometres?|m|meters?|metres?|公里|千米|米)"
_INC = r"(?:\s*[(（](?P<inc>inclusive|including[^)）]*|included|exclusive|not including[^)）]*|含[^)）]*|包含[^)）]*|不含[^)）]*)[)）])?"
_DIST_EN = (
    re.compile(rf"^(?:be )?(?:located )?(?:within|in)\s+(?:a\s+)?(?:radius of\s+)?(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}"
               rf"(?:\s+(?:range|radius|walking distance|distance))?{_INC.replace('inc>', 'inc2>')}\s+(?:of|from|to|away from|"
               rf"around)\s+(?P<ref>.+)$"),
    re.compile(rf"^(?:be )?(?:no more than|not more than|at most|less than or equal to|up to|no farther than|no further than)"
               rf"\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}\s+(?:away )?(?:from|of|to)\s+(?P<ref>.+)$"),
)
_DIST_EN_NEG = re.compile(rf"^(?:be )?(?:more than|farther than|further than|over|beyond|exceed)\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}"
                          rf"\s+(?:away )?(?:from|of|to)\s+(?P<ref>.+)$")
_DIST_SUBJ = re.compile(r"^(?:the )?distance (?:between|from) (?P<a>.+?) (?:and|to) (?P<ref>.+)$|^(?P<a2>.+?)'s distance (?:from|to) "
                        r"(?P<ref2>.+)$")
_DIST_PRED = re.compile(rf"^(?:be )?(?:within|no more than|not more than|at most|less than or equal to|up to|under)\s+"
                        rf"(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}$")
_DIST_PRED_NEG = re.compile(rf"^(?:be )?(?:exceed|more than|over)\s+(?P<n>\d+(?:\.\d+)?)\s*{_UNIT}{_INC}$")
_DIST_ZH = (
    re.compile(rf"^(?:在)?(?:距离?|离)(?P<ref>.+?)(?:的距离)?(?:在|不超过|不大于|小于等于)?(?P<n>\d+(?:\.\d+)?){_UNIT}"
               rf"(?:以内|之内|内|范围内|以下){_INC}$"),
    re.compile(rf"^(?:在|位于)(?P<ref>.+?)(?:的)?(?:周边|附近|周围)?(?P<n>\d+(?:\.\d+)?){_UNIT}(?:以内|之内|内|范围内){_INC}$"),
)


def _metres(n: str, unit: str) -> float:
    return float(n) * (1000.0 if unit.startswith(("k", "公", "千")) else 1.0)


def _ref_pieces(ref: str) -> list[str]:
    """A reference place as the pieces that may name it: the whole, and the name and the address
    of "Name, address" / "Name (address)" / "address (Name)" / "Name at address"."""
    ref = ref.strip(" .。")
    pieces = [ref]
    m = re.match(r"^(.+?)\s*[(（](.+)[)）]$", ref)
    if m:
        pieces += [m.group(1), m.group(2)]
    for sep in (",", "，", " at ", " on "):
        if sep in ref:
            head, rest = ref.split(sep, 1)
            pieces += [head, rest]
    return [re.sub(r"^the ", "", p.strip(" ,，.")) for p in pieces if p.strip(" ,，.")]


def _word_set(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", unicodedata.normalize("NFKC", text).casefold())) - {"the", "at", "of"}


def _locate(ref: str, ctx: ItemContext) -> tuple[float, float]:
    """The coordinates of a reference place: an address-book entry or a place's address or name
    that the reference (or its name or address piece) spells, all within ``ADDRESS_TOLERANCE_M``."""
    known: list[tuple[str, float, float]] = list(ctx.addresses)
    known += [(p.address, p.longitude, p.latitude) for p in ctx.places if p.longitude is not None and p.address]
    names = [(p.name, p.longitude, p.latitude) for p in ctx.places if p.longitude is not None]
    hits: list[tuple[float, float]] = []
    for piece in _ref_pieces(ref):
        key, words = norm_address(piece), _word_set(piece)
        if len(key) < 4:
            continue
        for addr, lon, lat in known:
            other = _word_set(addr)
            if norm_address(addr) == key or (words and len(words & other) >= 0.85 * max(len(words), len(other))
                                             and {w for w in words if w.isdigit()} == {w for w in other if w.isdigit()}):
                hits.append((lon, lat))  # type: ignore[arg-type]
        for name, lon, lat in names:
            if norm_address(name) == key:
                hits.append((lon, lat))  # type: ignore[arg-type]
    if not hits:
        raise _Unclear
    lon0, lat0 = hits[0]
    if any(_haversine(lon0, lat0, lon, lat) > ADDRESS_TOLERANCE_M for lon, lat in hits):
        raise _Unclear  # the reference names places far apart
    return lon0, lat0


def _inclusive(m: re.Match[str]) -> bool:
    inc = (m.groupdict().get("inc") or m.groupdict().get("inc2") or "")
    return not inc.startswith(("exclusive", "not including", "不含"))


def _distance_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> DistanceSpec | None:
    text = f"{subject} {pred}"
    if not re.search(r"\d\s*(?:km|kilometers?|kilometres?|m|meters?|metres?|公里|千米|米)(?![a-z])|distance|距离", text):
        return None
    if re.search(r"\b(?:closest|nearest|farthest)\b|最近|最远", text):
        raise _Unclear
    p = pred.strip()
    m = None
    if _is_zh(text):
        for rx in _DIST_ZH:
            m = rx.match(p)
            if m:
                break
        if m is None or neg:
            raise _Unclear
        ref, inclusive = m.group("ref"), _inclusive(m)
    else:
        sm = _DIST_SUBJ.match(subject)
        if sm:
            m = (_DIST_PRED_NEG if neg else _DIST_PRED).match(p)
            ref = sm.group("ref") or sm.group("ref2")
        else:
            m = _DIST_EN_NEG.match(p) if neg else next((x for x in (rx.match(p) for rx in _DIST_EN) if x), None)
            ref = m.group("ref") if m else ""
        if m is None:
            raise _Unclear
        inclusive = _inclusive(m)
    lon, lat = _locate(ref, ctx)
    return DistanceSpec(reference=ref.strip(" .。"), longitude=lon, latitude=lat,
                        max_m=_metres(m.group("n"), m.group("unit")),
                        inclusive=inclusive)


# ----- counts: party sizes and quantities -----------------------------------------------------------
_PEOPLE_WORDS = r"(?:people|persons?|guests|diners|adults|participants|customers|pax)"
_VISIT_WORDS = re.compile(r"\b(?:reservations?|bookings?|appointments?|reserved|booked|appointed|visit)\b|预约|预订|预定|订座|订位")


def _people_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> CountSpec | None:
    p = re.sub(r"\s*[(（][^)）\d]*[)）]$", "", _cut_purpose(pred)).strip()
    zh = _is_zh(subject + p)
    if zh:
        if re.search(r"人数|几位|几人", subject):
            m = re.fullmatch(rf"(?:为|是|应为)?{_NUM_RE}(?:人|位|名|个人)?", p)
        elif _VISIT_WORDS.search(subject):
            m = re.fullmatch(rf"(?:为|是)?{_NUM_RE}(?:人|位|名|个人)", p)
            if m is None:
                return None  # "预约的按摩店应为X": not a party size
        else:
            return None
    elif re.search(rf"\bnumber of {_PEOPLE_WORDS}|\bparty size\b|\bheadcount\b|\bgroup size\b|\bnumber of (?:diners|guests)\b",
                   subject):
        m = re.fullmatch(rf"(?:be )?(?:for )?{_NUM_RE}(?: {_PEOPLE_WORDS})?", p)
    elif _VISIT_WORDS.search(subject) and _head_class(subject) != "product":
        m = re.fullmatch(rf"(?:be )?(?:made )?for {_NUM_RE} {_PEOPLE_WORDS}", p)
        if m is None:
            return None  # "the reserved restaurant should be X": not a party size
    else:
        return None
    if m is None:
        raise _Unclear
    if neg:
        raise _Unclear
    return CountSpec(what="people", value=int(_num(m.group(1))))


_GENERIC_GOODS = frozenset({"item", "product", "dish", "good", "food", "thing", "portion", "serving", "order", "meal",
                            "商品", "菜品", "产品", "东西", "食物", "餐品", "订单"})
_COUNT_UNITS = (r"(?:portions?|items?|servings?|cups?|pieces?|sets?|packages?|bowls?|boxes?|units?|copies|orders?|bottles?|"
                r"杯|份|个|件|碗|盒|串|只|斤|瓶|袋)")


def _product_phrase(x: str, ctx: ItemContext) -> str:
    """A product phrase as the catalogue knows it ("" for the order's goods in general)."""
    x = re.sub(r"^(?:the |a |an |all )+", "", x.strip(" ,，的"))
    x = re.sub(r"\s+(?:ordered|purchased|bought|selected|chosen)$", "", x)
    if not x or _stem(x.split()[-1]) in _GENERIC_GOODS and len(x.split()) == 1 or x in _GENERIC_GOODS:
        return ""
    for cand in (x, re.sub(r"\s+(?:items?|products?|dishes|goods)$", "", x)):
        if _found(cand, ctx, "product"):
            return cand
    raise _Unclear


def _count_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> CountSpec | None:
    p = _cut_purpose(pred).strip()
    units = _COUNT_UNITS
    if _is_zh(subject + p):
        m = re.search(r"^(?P<x>.*?)(?:的)?(?:商品|订购|下单)?(?:总数量|总数|数量|份数|件数|杯数|个数|总量)$", subject)
        if m is None:
            return None
        v = re.fullmatch(rf"(?:为|是|应为)?{_NUM_RE}{units}?", p)
        if v is None or neg:
            raise _Unclear
        x = re.sub(r"(?:中的|中|里的|的)?(?:商品|菜品|产品)?$", "", m.group("x"))
        x = re.sub(r"^(?:下单|订购|选择)(?:的)?", "", x.strip(" ,，"))
        phrase = "" if not x or x.endswith("订单") else _product_phrase(re.sub(r"类$", "", x), ctx)
        return CountSpec(what="items", value=int(_num(v.group(1))), phrase=phrase)
    sm = re.search(r"\b(?:quantity|number|count|amount) of (?:the )?|\b(?:total )?(?:quantity|item count)\b", subject)
    if sm and re.search(r"\b(?:quantity|number of|count of|amount of|item count)\b", subject):
        if re.search(rf"\bnumber of {_PEOPLE_WORDS}", subject):
            return None
        v = re.fullmatch(rf"(?:be )?(?:exactly )?{_NUM_RE}(?: {units})?(?: in total| total)?", p)
        if v is None or neg:
            raise _Unclear
        rest = subject[sm.end():] if sm.group().endswith(("of ", "the ")) else ""
        x = re.split(r" (?:in|from|at|of|for) ", rest, maxsplit=1)[0]
        return CountSpec(what="items", value=int(_num(v.group(1))), phrase=_product_phrase(x, ctx) if x else "")
    v = re.fullmatch(rf"(?:include|contain|have|consist of|comprise)\s+(?:a total of |in total |only |exactly )?{_NUM_RE}\s+"
                     rf"{units}(?: in total| total)?", p)
    if v is not None and _head_class(subject) == "product":
        if neg:
            raise _Unclear
        return CountSpec(what="items", value=int(_num(v.group(1))))
    return None


# ----- prices ---------------------------------------------------------------------------------------
_Y = r"(?:\s*(?:yuan|rmb|cny|元|块))"
_P = r"[¥￥]?\s*(\d+(?:\.\d+)?)"
_PINC = r"(?:\s*[(（](?:inclusive|including[^)）]*|inclusive of[^)）]*|included|含[^)）]*|包含[^)）]*)[)）])?"
_PRICE_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("around", re.compile(rf"^(?:around|about|approximately|roughly|close to|circa|approx\.?)\s*{_P}{_Y}?(?: or so)?$")),
    ("around", re.compile(rf"^{_P}{_Y}\s*(?:or so|around|approximately|roughly)$")),
    ("range", re.compile(rf"^(?:between|from|in the range of|within the range of|within|in)?\s*{_P}{_Y}?\s*(?:-|–|~|to|and)\s*"
                         rf"{_P}{_Y}{_PINC}$")),
    ("<=", re.compile(rf"^(?:not exceed|no more than|not more than|at most|within|up to|less than or equal to|"
                      rf"(?:a )?maximum of|not be more than|not over|not be over|capped at|kept within|kept under|limited to)"
                      rf"\s*{_P}{_Y}?{_PINC}$")),
    ("<=", re.compile(rf"^{_P}{_Y}\s*(?:or less|or below|or under|and below|at most|max(?:imum)?|or lower|or cheaper){_PINC}$")),
    ("<", re.compile(rf"^(?:under|below|less than|lower than|cheaper than)\s*{_P}{_Y}?(?P<inc>{_PINC})$")),
    (">=", re.compile(rf"^(?:at least|no less than|not less than|(?:a )?minimum of|no lower than)\s*{_P}{_Y}?{_PINC}$")),
    (">=", re.compile(rf"^{_P}{_Y}\s*(?:or more|or above|and above|or higher|at least){_PINC}$")),
    (">", re.compile(rf"^(?:more than|over|above|higher than|greater than|exceed|exceeding|exceeds)\s*{_P}{_Y}?(?P<inc>{_PINC})$")),
    ("==", re.compile(rf"^{_P}{_Y}$")),
)
_PRICE_ZH: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("around", re.compile(rf"^(?:在|为)?(?:约|大约|大概)?{_P}{_Y}?(?:左右|上下)$|^(?:约|大约|大概){_P}{_Y}$")),
    ("range", re.compile(rf"^(?:在|为)?{_P}{_Y}?(?:-|–|~|到|至){_P}{_Y}(?:之间|以内|范围内)?{_PINC}$")),
    ("<=", re.compile(rf"^(?:控制)?(?:在|为)?{_P}{_Y}(?:及)?(?:以内|之内|以下|内){_PINC}$|^(?:不超过|不高于|最多|至多|不大于|小于等于|"
                      rf"控制在){_P}{_Y}(?:以内|之内)?{_PINC}$")),
    ("<", re.compile(rf"^(?:低于|少于|小于|便宜于){_P}{_Y}$")),
    (">=", re.compile(rf"^(?:在|为)?{_P}{_Y}(?:及)?以上$|^(?:不低于|不少于|至少|最少|大于等于){_P}{_Y}$")),
    (">", re.compile(rf"^(?:高于|大于|超过|多于){_P}{_Y}$")),
    ("==", re.compile(rf"^(?:为|是)?{_P}{_Y}$")),
)
_UNIT_WORDS = re.compile(r"\b(?:items?|products?|sets?|set meals?|set menus?|packages?|meals?|dish(?:es)?|vouchers?|combos?|"
                         r"menus?|drinks?|beverages?|cakes?|tickets?|courses?|class(?:es)?|lessons?)\b|商品|套餐|菜品|产品|单品|饮品")
_TOTAL_WORDS = re.compile(r"\btotal\b|总价|总金额|总计|合计|总共|一共|总费用|总额|订单金额|订单价格|订单总")
_PRICE_WORDS = re.compile(r"\b(?:prices?|costs?|priced|spend(?:ing)?|amount|expenses?|budget)\b|价格|价钱|费用|金额|花费|售价|元")


def _price_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> PriceSpec | None:
    text = f"{subject} {pred}"
    if not re.search(r"\d\s*(?:yuan|rmb|cny|元|块)|[¥￥]\s*\d", text):
        return None
    if not (_PRICE_WORDS.search(text) or re.search(r"\b(?:exceed|within|under|below|around|between)\b", pred)):
        raise _Unclear
    zh = _is_zh(text)
    p = _cut_purpose(pred).strip()
    if zh:
        p = re.sub(r"^(?:的)?(?:价格|总价格|总价|价钱|金额|费用|售价)(?:应)?", "", p)
    else:
        p = re.sub(r"^(?:be |have |has |a |an |the |total |price |cost |costs |priced |of |at |kept |controlled |set |"
                   r"amount to |come to |sum to )+", "", p)
    if re.search(r"\ball\b|\borders\b|\bplus\b|,|\band\b|所有|全部|加上|和|及", subject):
        raise _Unclear  # a sum over several orders
    scope: str
    if _TOTAL_WORDS.search(subject) or _TOTAL_WORDS.search(pred):
        scope = "total"
    elif _UNIT_WORDS.search(subject):
        scope = "unit"
    elif re.search(r"\borders?\b|订单", subject):
        scope = "total"
    elif re.search(r"\b(?:price|cost) of\b", subject) or _head_class(subject) == "product":
        scope = "unit"  # "the price of the noodles", "the tea should cost ..."
    else:
        raise _Unclear
    for rel, rx in (_PRICE_ZH if zh else _PRICE_EN):
        m = rx.match(p)
        if not m:
            continue
        nums = [float(g) for g in m.groups() if g is not None and re.fullmatch(r"\d+(?:\.\d+)?", g)]
        inclusive = bool(re.search(r"[(（](?:inclusive|including|included|含|包含)", p))
        if rel == "around":
            if neg:
                raise _Unclear
            v = nums[0]
            return PriceSpec(scope=scope, low=round(v * (1 - PRICE_AROUND_RATIO), 2),  # type: ignore[arg-type]
                             high=round(v * (1 + PRICE_AROUND_RATIO), 2))
        if rel == "range":
            if neg or nums[0] > nums[1]:
                raise _Unclear
            return PriceSpec(scope=scope, low=nums[0], high=nums[1])  # type: ignore[arg-type]
        if rel == "==":
            if neg:
                raise _Unclear
            return PriceSpec(scope=scope, low=nums[0], high=nums[0])  # type: ignore[arg-type]
        if neg:
            rel = _OP_FLIP[rel]
        if rel in ("<", ">") and inclusive:
            rel += "="  # "should not exceed X (including X)": X itself is allowed
        v = nums[0]
        if rel in ("<=", "<"):
            return PriceSpec(scope=scope, high=v, high_strict=rel == "<")  # type: ignore[arg-type]
        return PriceSpec(scope=scope, low=v, low_strict=rel == ">")  # type: ignore[arg-type]
    raise _Unclear


# ----- values found in the world: places and products --------------------------------------------
def _names_out(text: str, ctx: ItemContext) -> str:
    """The text with the names of the task's places blanked out: a word of a name ("Blue Note Bar",
    "Star Power ...") says nothing of what kind of item the text is."""
    for p in ctx.places:
        name = _knorm(p.name)
        if len(name) >= 4 and name in text:
            text = text.replace(name, " ")
    return text


def _name_key(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"^the ", "", t.strip())
    return "".join(ch for ch in t if ch.isalnum())


def _places_named(x: str, ctx: ItemContext, chain: bool) -> list[str]:
    """The places whose name is ``x`` (case, blanks, punctuation aside); with ``chain``, also those
    whose name starts with it (the branches of "Mixue Ice Cream")."""
    key = _name_key(x)
    if len(key) < 2:
        return []
    exact = [p.place_id for p in ctx.places if _name_key(p.name) == key]
    if exact or not chain or len(key) < 4:
        return exact
    return [p.place_id for p in ctx.places if _name_key(p.name).startswith(key)]


def _found(phrase: str, ctx: ItemContext, scope: str) -> bool:
    """Whether a phrase is found in the catalogue: a product's name, tags or options
    (``scope="product"``; ``"option"``: its options only), or a place's name, tags or category
    (``"place"``)."""
    if not phrase.strip():
        return False
    if scope == "option":
        return any(phrase_in(phrase, o) for pr in ctx.products for o in pr.options)
    if scope == "product":
        return any(phrase_in(phrase, f) for pr in ctx.products for f in (pr.name, *pr.tags, *pr.options))
    return any(phrase_in(phrase, f) for pl in ctx.places for f in _place_fields(pl))


_STORE_VERBS = ("be ordered ", "be placed ", "be purchased ", "be bought ", "be booked ", "be reserved ", "be made ",
                "be selected ", "be chosen ", "be with ", "be for ", "come from ", "placed ", "ordered ", "purchased ",
                "bought ", "booked ", "reserved ", "belongs ", "belong ", "select ", "choose ", "pick ", "order ",
                "use ", "come ", "be ")
_STORE_VERBS_EN = re.compile(
    r"^(?:still |only |also |definitely )*(?:" + "|".join(_STORE_VERBS) + r")?"
    r"(?:from |at |with |to |in |for |the merchant |the store |the shop )?"
    r"(?:the )?(?P<x>.+?)(?: as (?:the )?(?:merchant|store|shop|restaurant|vendor))?$")
_STORE_VERBS_ZH = re.compile(
    r"^(?:仍|仍然|还|也)?(?:是|为|来自于|来自|选择|选|在|从|去|到)?(?P<x>.+?)(?:作为(?:下单)?(?:的)?(?:商家|店铺|门店|餐厅))?"
    r"(?:下单|购买|订购|点餐)?$")
_PLACE_SUFFIX = re.compile(r"\s*(?:\b(?:stores?|shops?|restaurants?|merchants?|outlets?|branch(?:es)?|brand)\b|商家|店铺|门店|"
                           r"的店|品牌)$")


_ZH_STORE_TAIL = re.compile(r"^(?P<x>.{2,}?)(?:品牌|连锁店|连锁|旗下)?(?:的)?(?:商家|店铺|门店|餐厅|餐馆|店家|商户|商品|产品|菜品|店)?$")


def _store_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> StoreSpec | None:
    if not ctx.places:
        return None
    p = _cut_purpose(pred).strip(" '\"“”")
    zh = _is_zh(subject + p)
    m = (_STORE_VERBS_ZH if zh else _STORE_VERBS_EN).match(p)
    if m is None:
        return None
    x = m.group("x").strip(" '\"“”")
    ids = _places_named(x, ctx, chain=False)
    if not ids:
        stripped = _PLACE_SUFFIX.sub("", x).strip()
        ids = _places_named(stripped, ctx, chain=True)
        x = stripped if ids else x
    if not ids and zh:  # "X品牌的商家", "X的商品": the place named before a generic tail
        tail = _ZH_STORE_TAIL.match(x)
        if tail:
            ids = _places_named(tail.group("x"), ctx, chain=True)
            x = tail.group("x") if ids else x
    if not ids:
        return None
    return StoreSpec(place_ids=sorted(ids), name=x, negated=neg)


# ----- features: what a place or a product is, has or offers --------------------------------------
_FEATURE_VERBS_EN = re.compile(
    r"^(?:still |only |also |definitely |preferably |specifically |all )*(?P<v>be (?:equipped with|suitable for)|"
    r"be (?:selected|chosen|set|specified|served|ordered) (?:as |with |in )?|(?:select|choose|specify|have) the |"
    r"be (?:a |an |the )?|be for |select |choose |pick |opt for |order |buy |purchase |use |include |includes |"
    r"contain |contains |have |has |provide |offer |support |feature |serve |come with |allow |specialize in |"
    r"be made (?:of|with) |be in |be of )")
_FEATURE_VERBS_ZH = re.compile(r"^(?:仍|也|都|均)?(?P<v>选择|选|是|为|包含|含有|含|带有|有|提供|支持|具有|具备|配有|属于|使用|用|加)")
_GENERIC_TAIL_EN = re.compile(r"\s+(?:flavou?r(?:ed)?|taste|style|type|version|option|specification|variety|kind|items?|"
                              r"products?|dish(?:es)?|properties|property|attribute|choice|drink|beverage|food|temperature|"
                              r"sweetness|size)s?(?: selected| chosen)?$")
_GENERIC_TAIL_ZH = re.compile(r"(?:的)?(?:口味|味道|风味|规格|选项|属性|类型|类|款|商品|产品|菜品|的|种类|温度|甜度|辣度|饮品|饮料|"
                              r"食品|版本|形式|服务|标签|相关|[两二三四五六]种)$")
_GENERIC_HEAD_EN = re.compile(r"^(?:products?|items?|dish(?:es)?|options?|drinks?|beverages?|food) (?:that (?:are|is|have|has|"
                              r"contain|contains|include) |with (?:an? |the )?|of )")
_AND = re.compile(r"\s+and\s+|、|和|以及|及")
_OR = re.compile(r"\s+or\s+|或者|或是|或")


def _clean_value(x: str, zh: bool, heads: str) -> str:
    x = x.strip(" '\"“”,，.。")
    x = re.sub(r"^(?:for |of |with )?(?:a |an |the )?(?:'|\")?", "", x).strip(" '\"“”")
    if zh:
        x = re.sub(r"^(?:的)", "", x)
        return x
    x = _GENERIC_HEAD_EN.sub("", x)
    return x


def _variants(x: str, zh: bool, subject_head: str) -> list[str]:
    """The value, then with generic words stripped ("gold soup flavor" -> "gold soup")."""
    out = [x]
    if zh:
        y = x
        for _ in range(3):
            y2 = _GENERIC_TAIL_ZH.sub("", y)
            if y2 == y or not y2:
                break
            y = y2
            out.append(y)
        if len(out[-1]) > 1 and out[-1].endswith(("味", "饮")):  # "桃子味" -> "桃子", "热饮" -> "热"
            out.append(out[-1][:-1])
    else:
        y = x
        for _ in range(3):  # "hot drink temperature" -> "hot drink" -> "hot"
            y2 = _GENERIC_TAIL_EN.sub("", y)
            if y2 == y or not y2 or re.search(r"\b(?:and|or|with|of|no|not|without)$", y2):
                break  # "cake and beverage" is two things, "no sauce option" keeps its "no"
            y = y2
            out.append(y)
        if subject_head and y.endswith(" " + subject_head):
            out.append(y[: -len(subject_head) - 1])
    return [v for v in dict.fromkeys(v.strip(" '\"“”‘’") for v in out) if v]


_ZH_ONE_CHAR_OPTIONS = frozenset({"热", "冰", "温"})
_CUP_SIZE = re.compile(r"^(?:小|中|大|超大|特大|标准)杯$|^(?:small|medium|large|extra large|regular) (?:cup|size)$")


def _resolve_phrase(x: str, zh: bool, scope: str | None, head: str, ctx: ItemContext) -> tuple[str, list[str]]:
    """(scope, alternatives) of a value: each alternative ("mild or non-spicy") found in the
    catalogue of one scope (the subject's, else the only one where all are found)."""
    x = x.strip(" '\"“”‘’")
    alts = [a.strip(" '\"“”‘’") for a in _OR.split(x) if a.strip(" '\"“”‘’")]
    if any(len(a) < 2 or a in _GENERIC_GOODS or _stem(a) in _GENERIC_GOODS for a in alts):
        raise _Unclear
    if zh and any(len(v) < 2 and not (scope == "option" and v in _ZH_ONE_CHAR_OPTIONS)
                  for a in alts for v in _variants(a, zh, head)[-1:]):
        raise _Unclear  # one character ("肉") says too little, but for an option a temperature ("热") does
    if not alts:
        raise _Unclear
    scopes = [scope] if scope else ["product", "place"]
    found_in: list[tuple[str, list[str]]] = []
    for sc in scopes:
        chosen = []
        for alt in alts:
            hit = next((v for v in _variants(alt, zh, head) if _found(v, ctx, sc)), None)
            if hit is None:
                if len(alts) > 1 and _CUP_SIZE.match(alt):
                    continue  # "小杯或中杯" where no drink comes small: the size none offers cannot be ordered
                break
            chosen.append(hit)
        else:
            if chosen:
                found_in.append((sc, chosen))
    if len(found_in) != 1:
        raise _Unclear
    return found_in[0]


_ZH_JUDGEMENT = re.compile(r"新鲜|销量|必吃|正宗|最(?:好|高|低|近|远|多|少|受欢迎)|性价比|口碑")
_ZH_AND_COUNT = re.compile(rf"[,，](?:且|并且)?(?:数量|份数|件数|杯数)(?:应该|应当|应|需要|要)?(?:为|是){_NUM_RE}{_COUNT_UNITS}$")
_ZH_HAVING = re.compile(r"^(?:带有|含有|具有)(?P<x>[^的]{2,})的(?:商品|产品|菜品|饮品)$")
_ZH_BOUGHT = re.compile(r"购买|下单|订购|选购|点")


def _zh_bought_at(p: str, neg: bool, ctx: ItemContext) -> tuple[StoreSpec | None, str]:
    """"在<place>购买X" / "从<place>订购X": the store, and "选择X" (the product, read as a feature);
    (None, p) when the text names no place before such a verb."""
    start = re.match(r"^(?:在|从|到)", p)
    if start is None:
        return None, p
    for k, vm in enumerate(_ZH_BOUGHT.finditer(p, start.end())):
        if k >= 4:
            break
        ids = _places_named(p[start.end():vm.start()], ctx, chain=False)
        if not ids or vm.end() >= len(p):
            continue
        if neg:
            raise _Unclear  # "not X at Y": not that store, or not that product?
        return StoreSpec(place_ids=sorted(ids), name=p[start.end():vm.start()]), "选择" + p[vm.end():]
    return None, p


_ZH_REL_PLACE = re.compile(r"^(?:提供|支持|具有|具备|有|带有)?(?P<x>[^的]{2,}?)(?:服务)?的(?:商家|店铺|门店|餐厅|餐馆|店家|商户)$")


def _zh_place_prefix(value: str, neg: bool, ctx: ItemContext) -> tuple[StoreSpec | None, str]:
    """"<place>的<what>" ("某店的双拼沙拉商品"): the store the place's name names, and the rest
    ("" when the rest is only a generic word); (None, value) when no "的" follows a place's name."""
    for k, m in enumerate(re.finditer("的", value)):
        if k >= 4:
            break
        ids = _places_named(value[:m.start()], ctx, chain=False)
        if not ids:
            continue
        if neg:
            raise _Unclear  # "not X's Y": not that store, or not that product?
        what = value[m.end():]
        rest = _GENERIC_TAIL_ZH.sub("", what) if what else ""
        return StoreSpec(place_ids=sorted(ids), name=value[:m.start()]), ("" if not rest else what)
    return None, value


def _feature_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> Any | None:
    if not (ctx.places or ctx.products):
        return None
    zh = _is_zh(subject + pred)
    p = _cut_purpose(pred)
    if zh and re.search(r"等", p):
        raise _Unclear  # "米饭等主食": the kind is what is asked, the dish only an example
    example = (_EXAMPLE_ZH if zh else _EXAMPLE_EN).search(p)
    if example:
        if re.search(r"\b(?:from|at)\b|来自|店", p[example.start():]):
            raise _Unclear
        p = p[:example.start()]
    p = p.strip(" ,，")
    count_n: int | None = None
    at_store: StoreSpec | None = None
    if zh:
        cm = _ZH_AND_COUNT.search(p)  # "包含X商品，数量为2份": the product, and how many of it
        if cm:
            count_n, p = int(_num(cm.group(1))), p[:cm.start()]
        at_store, p = _zh_bought_at(p, neg, ctx)  # "在<place>购买X"
    m = (_FEATURE_VERBS_ZH if zh else _FEATURE_VERBS_EN).match(p)
    if m is None:
        raise _Unclear
    value = p[m.end():]
    head_class = _head_class(subject)
    words = re.findall(r"[a-z]+", re.split(r"\b(?:at|from|in|for|of|to|with|by|on)\b", subject, maxsplit=1)[0])
    head = next((w for w in reversed(words) if w not in _PARTICIPLES), "")
    # "X, not Y" / "X rather than Y" / "X，不能选择Y": the second half is a negated part
    extra_neg = ""
    rm = re.search(r",?\s*(?:\bnot\b|\brather than\b|\binstead of\b)\s+(?:be |a |an |the )?(.+)$", value) if not zh else \
        re.search(r"[，,]?(?:不能|不应|不要|不可|而不是|而非|不是)(?:选择|是|为)?(.+)$", value)
    if rm:
        value, extra_neg = value[:rm.start()], rm.group(1)
    value = _clean_value(value, zh, head)
    if zh and _ZH_JUDGEMENT.search(value):
        raise _Unclear  # "新鲜", "销量最好", "正宗": a judgement, even where a tag shares the words
    store_part: StoreSpec | None = None
    if zh:  # "提供堂食服务的商家": a place that offers the value; "X的商品" from a named place: the store
        rel = _ZH_REL_PLACE.match(value)
        if rel:
            value, head_class = rel.group("x"), "place"
        else:
            store_part, value = _zh_place_prefix(value, neg, ctx)
            if not neg:  # "带有麻酱口味的商品": the value is what the product has
                value = _ZH_HAVING.sub(r"\g<x>", value)
        if at_store is not None:
            if store_part is not None or head_class == "place":
                raise _Unclear
            store_part, head_class = at_store, "product"
    if not value and store_part is None:
        raise _Unclear
    # a product bought from a named place: "purchase X from Y"
    fm = re.match(r"^(?P<what>.+?) (?:from|at) (?P<where>.+)$", value) if not zh else None
    parts: list[Any] = [store_part] if store_part is not None else []
    if store_part is not None and not value:
        return store_part  # "X的商品": the store is all it asks
    if fm and _places_named(fm.group("where"), ctx, chain=True):
        store = _store_item(subject, False, "from " + fm.group("where"), ctx)
        if store is None or neg:
            raise _Unclear
        parts.append(store)
        value = _clean_value(fm.group("what"), zh, head)
        if _stem(value.split()[-1]) in _GENERIC_GOODS and len(value.split()) <= 2:
            return store  # "select products from X": the store is all it asks
    option = bool(_OPTION_WORDS.search(f"{subject} {pred}"))
    soft = bool(_SOFT_OPTION_WORDS.search(f"{subject} {pred}"))

    def feature(text: str, negated: bool) -> FeatureSpec:
        serving = _serving(text, zh, ctx) if head_class != "place" else None
        if serving is not None:  # "a set meal for two": a product for that many people
            return FeatureSpec(scope="product", phrases=serving, negated=negated)
        try:
            scope, alts = _resolve_phrase(text, zh, "option" if option or soft else head_class, head, ctx)
        except _Unclear:
            if option:
                raise
            scope, alts = _resolve_phrase(text, zh, head_class, head, ctx)
        if scope == "option":
            return FeatureSpec(scope="product", phrases=alts, negated=negated, option_only=True)
        return FeatureSpec(scope=scope, phrases=alts, negated=negated)  # type: ignore[arg-type]

    try:
        parts.append(feature(value, neg))
    except _Unclear:
        if neg:
            raise  # "not X and Y": not both, or neither?
        parts += [feature(_clean_value(piece, zh, head), False) for piece in _grouping(value, zh, head, ctx, option,
                                                                                        head_class)]
    if extra_neg:
        if neg:
            raise _Unclear
        parts.append(feature(_clean_value(extra_neg, zh, head), True))
    if count_n is not None:
        goods = [x for x in parts if isinstance(x, FeatureSpec)]
        if len(goods) != 1 or goods[0].scope != "product" or goods[0].negated or goods[0].option_only \
                or len(goods[0].phrases) != 1 or count_n < 1:
            raise _Unclear
        parts.append(CountSpec(what="items", value=count_n, phrase=goods[0].phrases[0]))
    return parts[0] if len(parts) == 1 else AllOf(parts=parts)


# ----- serving sizes: "a five-person meal", "a set meal for two", "单人套餐" ---------------------------
_SERVE_UNITS = (r"(?:set meals?|set menus?|meal packages?|meal sets?|sets?|meals?|packages?|menus?|combos?|vouchers?|"
                r"portions?|servings?|options?|products?|items?|platters?|courses?|class(?:es)?)")
_SERVE_NUM = r"(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|single)"
_SERVE_EN = (
    re.compile(rf"^(?:a |an |one |the )?{_SERVE_NUM}[- ](?:person|people|persons)(?: {_SERVE_UNITS})+$"),
    re.compile(rf"^(?:a |an |one |the )?{_SERVE_UNITS}(?: {_SERVE_UNITS})* for {_SERVE_NUM}(?: (?:people|persons?))?$"),
    re.compile(rf"^(?:for |suitable for )?{_SERVE_NUM} (?:people|persons?)$"),
    re.compile(rf"^(?:a |an |one )?(?P<one>single|individual) {_SERVE_UNITS}$"),
    re.compile(rf"^(?:a |an |one )?(?P<two>couple's|couples?) {_SERVE_UNITS}$"),
    # "two individual set meals", "multiple single-person packages": a negated part says which size is not wanted
    re.compile(rf"^(?:two|three|four|five|six|several|multiple|separate|\d) (?P<one>individual|single|single[- ]person|"
               rf"one[- ]person|separate) {_SERVE_UNITS}(?: {_SERVE_UNITS})*$"),
)
_SERVE_ZH = re.compile(r"^(?:一个|一份)?(?P<n>[单双一二两三四五六七八九十]|\d{1,2})人(?:份|餐|套餐|份套餐|餐套餐|分量)?(?:的)?"
                       r"(?:套餐|商品|产品|规格)?$")


def _serving(text: str, zh: bool, ctx: ItemContext) -> list[str] | None:
    """The phrases that name a product for the number of people a value speaks of ("five-person
    meal", "set meal for two", "单人套餐": "5 person"; for one also "single portion", "individual";
    for two also "couple"), those the catalogue has (the value's own words, when it has them); None when the value is no serving size or the
    catalogue names none of its phrases."""
    t = text.strip()
    if zh:
        m = _SERVE_ZH.match(t)
        if m is None:
            return None
        n = {"单": 1, "双": 2}.get(m.group("n")) or _zh_number(m.group("n"))
        if not n:
            return None
        words = {1: ["单人", "一人", "1人"], 2: ["双人", "两人", "二人", "2人"]}.get(n, [f"{n}人", f"{'零一二三四五六七八九十'[n]}人" if n <= 10 else f"{n}人"])
    else:
        m = next((x for x in (rx.match(t) for rx in _SERVE_EN) if x), None)
        if m is None:
            return None
        g = m.groupdict()
        n = 1 if g.get("one") else 2 if g.get("two") else int(_NUMBER_WORDS.get(g["n"] or "", g["n"] or "0"))
        words = {1: ["1 person", "single portion", "single serving", "individual"], 2: ["2 person", "couple"]}.get(n, [f"{n} person"])
    if _found(t, ctx, "product"):
        return [t]
    found = [w for w in words if _found(w, ctx, "product")]
    return found or None


# "口味" / "flavor": an option if the catalogue has it as one, else a word of the product's name or tags
_SOFT_OPTION_WORDS = re.compile(r"\b(?:flavou?rs?|tastes?)\b|口味|味道|热饮|冰饮")
_OPTION_WORDS = re.compile(r"\b(?:temperature|sweetness|sugar level|spiciness|spice level|spicy level|size|cup size|"
                           r"specifications?|options?|attributes?|ice level)\b|温度|甜度|辣度|规格|属性|选项|冰度|糖度")


def _grouping(value: str, zh: bool, head: str, ctx: ItemContext, option: bool, head_class: str | None) -> list[str]:
    """The one way to read "A and B and C" as several things each found in the catalogue
    ("Mint Mochi and Blueberry and Mulberry Mochi": two products, not three)."""
    pieces = [x for x in _AND.split(value) if x.strip()]
    if len(pieces) < 2 or len(pieces) > 4:
        raise _Unclear
    joiner = "和" if zh else " and "
    scope = "option" if option else head_class
    ok: list[list[str]] = []
    for mask in range(1 << (len(pieces) - 1)):  # bit i: a cut after piece i
        groups: list[list[str]] = [[pieces[0]]]
        for i, piece in enumerate(pieces[1:]):
            if mask >> i & 1:
                groups.append([piece])
            else:
                groups[-1].append(piece)
        if len(groups) < 2:
            continue
        texts = [joiner.join(g) for g in groups]
        try:
            for t in texts:
                _resolve_phrase(_clean_value(t, zh, head), zh, scope, head, ctx)
        except _Unclear:
            continue
        ok.append(texts)
    if not ok:
        raise _Unclear
    fewest = min(len(g) for g in ok)
    best = [g for g in ok if len(g) == fewest]
    if len(best) != 1:
        raise _Unclear
    return best[0]
