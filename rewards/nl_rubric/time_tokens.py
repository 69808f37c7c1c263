"""The tokens of a time item (``time.py``): clock times ("18:30", "6 pm", "下午3点半"), dates ("March
16", "2025-06-21", "6月21日", "明天"), periods of the day, durations ("within an hour", "半小时内"), and
the words that bound them ("before", "around", "不晚于", "左右"), found left to right with their spans."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .text import _zh_number

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
    "不早于": ("after", "pre"), "晚于": ("after", "pre"), "迟于": ("after", "pre"), "最早": ("after", "both"), "及以后": ("after", "post"),
    "或以后": ("after", "post"), "及之后": ("after", "post"), "或之后": ("after", "post"), "之后": ("after", "post"),
    "以后": ("after", "post"), "后": ("after", "post"),
    "大约": ("around", "pre"), "大概": ("around", "pre"), "约": ("around", "pre"), "差不多": ("around", "pre"),
    "左右": ("around", "post"), "前后": ("around", "post"),
    "之间": ("range", "post"), "时间段内": ("range", "post"), "时段内": ("range", "post"),
    "时间范围内": ("range", "post"), "范围内": ("range", "post"), "区间内": ("range", "post"),
    "期间": ("range", "post"), "以内": ("within", "post"), "之内": ("within", "post"), "内": ("within", "post"),
}
# "不超过 14:00": before a time of day (not a duration), a cap
_CAP_WORDS = frozenset({"不超过", "no more than"})
_CONNS = ("and", "to", "through", "-", "–", "—", "~", "至", "到")
# a qualifier said negatively ("should not be later than", "不能晚于") means the opposite bound
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever)(?: [a-z]+){0,2} $|(?:不|不能|不要|不得|不可|不应|不应该|不应当|不可以|不会|别|勿|切勿|没有)$")
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
    # "around 7 in the evening", "before 8 at night": a bare hour its period says (the period token follows it),
    # after a word of time ("a table for 4 in the evening" is a party of four)
    r"|(?P<phour>(?:(?<=\bat )|(?<=\bby )|(?<=around )|(?<=\babout )|(?<=before )|(?<=after )|(?<=until )|(?<=\btill )"
    r"|(?<=\bfrom )|(?<=\bto )|(?<=\band )|(?<=than ))(?P<ph>\d{1,2})(?= (?:in the (?:morning|afternoon|evening)|at night)\b))"
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
# an event between a far bound word and its time: "(before) the meeting starts at (19:00)", "(19:00)的会议开始(之前)"
_FAR_QUALS = frozenset({"before", "after", "prior to", "之前", "以前", "前", "之后", "以后", "后"})
_FAR_GAP_EN = re.compile(r" (?:the |a |an |my |his |her |their |our |your |the user's )?(?:(?!(?:not|no|or|and|than|but|"
                         r"later|earlier|delivered|deliver|by|until|around|about)\b)[a-z'-]{2,20} ){1,4}(?:at|on) ")
_FAR_GAP_ZH = re.compile(r"的?[\u4e00-\u9fff]{0,6}(?:会议|聚会|派对|活动|演出|比赛|课程|航班|电影|开始|开场|结束|举行|出发|起飞|"
                         r"开席|到来|离开|下班|上班|放学|散场)")
_ZH_CLOCK_CONTEXT = "半分钟前后左之以到至-~点"


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
        elif g == "phour":
            out.append(_Tok("clock", s, e, (int(m["ph"]), 0, 0, None)))
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
                if _NEGATED.search(text[max(0, s - 24):s]):
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
