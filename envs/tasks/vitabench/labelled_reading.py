"""The labelled check set's own reading of rubric text (``labelled.py`` builds and runs the variants).

Regular expressions and keyword lists, English and Chinese, that find in a rubric item what a
targeted variant needs: time bounds (``parse_time_bound``: before / after / around / between, with
dates), delivery addresses, requested notes and their contradictions, required queries, and
conservative mentions of names and options (``positive_mention``: not negated, not an example or a
preference, not in a cancellation). Like ``labelled.py`` it never imports the scorer's reader
(``rewards/nl_rubric/``): the labels are an independent reading.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

Label = Literal["accept", "reject"]


# ----- text helpers --------------------------------------------------------------------------
def norm(text: str) -> str:
    """NFKC (full-width brackets become ASCII), case-folded, blanks collapsed."""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def _is_zh(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", norm(text).replace("-", " ")))


def _bracketless(name: str) -> str:
    return norm(re.sub(r"[\(（\[【][^\)）\]】]*[\)）\]】]", " ", name))


_CLAUSE_SEP = re.compile(r"[,;，；。!?！？]|\s-\s|\bbut\b|\bwhile\b|\bwhereas\b|但|而是")
_NEG = re.compile(
    r"\b(?:not|no|never|avoid\w*|cannot|can't|won't|without|except|instead of|rather than|other than|"
    r"exclud\w*|nor|neither)\b|n't|不|避免|避开|别|勿|非|禁止|排除|除了|除"
)
_EXAMPLE = re.compile(
    r"\b(?:such as|like|e\.g|for example|for instance|similar|etc|or other|or similar|and so on)\b|"
    r"例如|比如|诸如|如|等|之类|类似|这种|这类|一类"
)
# an item naming a place as a reference point ("within 1km of the café (Meow Café, ...)")
_REFERENCE = re.compile(r"\b(?:within|near|nearby|distance|away from|close to|km|kilometers?|meters?|metres?)\b|距离|附近|以内|公里|米以")
# a mention asks for the thing only in the predicate: after a modal or selection verb, or before a
# passive one ("..., Bajibaji (Longzihu Branch) should be selected")
_PREDICATE_BEFORE = re.compile(
    r"\b(?:should|must|need|needs|has to|have to|is|are|be|select\w*|choos\w*|chose|include\w*|order from|"
    r"purchase\w*|buy|book\w*|reserv\w*)\b|应|须|需|要|选|包含|为|是|在|购买|预订|预约"
)
_PREDICATE_AFTER = re.compile(r"^\s*(?:should|must|needs? to|has to) be (?:selected|chosen|ordered|used|purchased|booked|reserved)\b")
_SOFT = re.compile(r"\b(?:prefer\w*|priorit\w*|ideally|if possible|recommend\w*)\b|优先|尽量|最好|推荐|首选|如果|若")
_CANCEL = re.compile(r"\b(?:cancel\w*|refund\w*)\b|取消|退款|退订")
_ORDER_REF = re.compile(r"\b(?:order[_ ]?id|order number|order with id|booking id|reservation id)\b|订单编号|订单号|id为|\b\d{6,}[a-z]\d{2,}\b", re.I)
_CUT = re.compile(
    r",?\s*(?:ensuring|to ensure|so that|so as to|in order to|in line with|in accordance with|"
    r"for use|to avoid|to satisfy|to meet|meeting|because|since|as the user|as they)\b|"
    r"[，,]\s*(?:确保|以便|这样|保证|避免|满足|符合|因为|由于|方便|但)|【|\(i\.e|（即"
)


def cut_rationale(item: str) -> str:
    """The item without its rationale tail (", ensuring ...", "，确保...", "【即...】")."""
    m = _CUT.search(item)
    return item[: m.start()] if m else item


def _clause_around(text: str, start: int, end: int) -> tuple[str, str]:
    """(the part of the clause before the span, the whole clause) around text[start:end]."""
    left = 0
    for m in _CLAUSE_SEP.finditer(text, 0, start):
        left = m.end()
    right = len(text)
    m = _CLAUSE_SEP.search(text, end)
    if m:
        right = m.start()
    return text[left:start], text[left:right]


def _phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where ``phrase`` occurs in the normalised ``text`` (words whole for Latin text)."""
    t, p = norm(text).replace("-", " "), norm(phrase).replace("-", " ")
    if not p:
        return []
    if _is_zh(p):
        return [(m.start(), m.end()) for m in re.finditer(re.escape(p), t)]
    return [(m.start(), m.end()) for m in re.finditer(r"(?<![a-z0-9])" + re.escape(p) + r"(?![a-z0-9])", t)]


def positive_mention(item: str, phrase: str, *, single_zh_ok: bool = False,
                     shadows: Iterable[str] = ()) -> bool:
    """Whether ``item`` asks for ``phrase``: it occurs in the predicate of a clause (after a modal
    or selection verb) with no negation before it and no example or preference words, in an item
    that is not about cancelling an existing order nor uses the name as a reference point.
    ``shadows``: longer names containing ``phrase``; a mention inside one of them does not count."""
    if _CANCEL.search(norm(item)) or _ORDER_REF.search(item) or _REFERENCE.search(norm(item)):
        return False
    longer = [span for other in shadows for span in _phrase_spans(item, other)]
    text = norm(item).replace("-", " ")
    p = norm(phrase).replace("-", " ")
    for start, end in _phrase_spans(item, phrase):
        if _is_zh(p) and len(p) == 1 and not single_zh_ok:
            continue
        if _is_zh(p) and len(p) == 1:
            # a one-character option ("热", "冰") counts only as "选(择)热" / "热饮" / "热的" / "为热"
            before, after = text[max(0, start - 2): start], text[end: end + 1]
            if not (before.endswith(("选", "选择", "为", "是")) or after in ("饮", "的", "食")):
                continue
        if any(a <= start and end <= b and (a, b) != (start, end) for a, b in longer):
            continue
        before, clause = _clause_around(text, start, end)
        if _NEG.search(before) or _EXAMPLE.search(clause) or _SOFT.search(clause):
            continue
        after = text[end: end + 60]
        if not (_PREDICATE_BEFORE.search(before) or _PREDICATE_AFTER.search(after)):
            continue
        return True
    return False


def named_anywhere(items: Iterable[str], phrase: str) -> bool:
    return any(_phrase_spans(x, phrase) for x in items)


# option classes: words that set a degree or a temperature; two options of different classes
# never mean the same thing ("mild spicy" / "extra spicy"), two of the same class may
_OPTION_CLASSES: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    ("room", frozenset({"room"}), ("常温",)),
    ("none", frozenset({"no", "non", "not", "without", "free", "zero", "none"}), ("不", "无", "免", "去", "零")),
    ("mild", frozenset({"mild", "slight", "slightly", "little", "light", "less", "low", "micro", "half"}),
     ("微", "少", "低", "轻", "半")),
    ("normal", frozenset({"normal", "regular", "standard", "original", "medium", "usual", "moderate", "default"}),
     ("正常", "标准", "常规", "原味", "中")),
    ("extra", frozenset({"extra", "very", "heavy", "super", "double", "more", "strong"}), ("特", "多", "加", "重", "超", "爆")),
    ("hot", frozenset({"hot", "warm", "heated"}), ("热", "温", "暖")),
    ("cold", frozenset({"iced", "ice", "cold", "chilled", "cool", "frozen"}), ("冰", "冷", "凉", "冻")),
)


def option_classes(text: str) -> set[str]:
    t = norm(text)
    words = _words(t)
    out: set[str] = set()
    for name, ws, chars in _OPTION_CLASSES:
        hit_chars = [c for c in chars if c in t]
        if words & ws or hit_chars:
            out.add(name)
        for c in chars:
            if len(c) > 1:
                t = t.replace(c, " ")  # "常温" is room temperature, not "温"
    return out


def _new_tokens(replacement: str, named: str) -> set[str]:
    """What ``replacement`` says that ``named`` does not: words, or characters for Chinese."""
    if _is_zh(replacement):
        return set(norm(replacement)) - set(norm(named)) - {" "}
    return _words(replacement) - _words(named)


# ----- times ----------------------------------------------------------------------------------
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], 1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MON_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE_RES = (
    ("iso", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("zh", re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("mdy", re.compile(_MON_RE + r"\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", re.I)),
    ("dmy", re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+" + _MON_RE + r"\.?,?\s+(\d{4})", re.I)),
)
_TIME_HM = re.compile(
    r"(上午|下午|晚上|中午|早上|傍晚|凌晨|夜里)?\s*(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])\s*"
    r"(a\.?m\.?|p\.?m\.?)?(?![a-z])",
    re.I,
)
_TIME_H = re.compile(r"(?<![\d:.])(\d{1,2})\s*(a\.?m\.?|p\.?m\.?)(?![a-z])", re.I)
_TIME_ZH = re.compile(r"(上午|下午|晚上|中午|早上|傍晚|凌晨|夜里)?(\d{1,2})\s*[点點](半|(\d{1,2})分?)?")
_PM_ZH = ("下午", "晚上", "傍晚", "夜里")

Relation = Literal["around", "before", "after", "between", "exact"]
_EN_REL = re.compile(
    r"\b(on or before|no later than|not later than|earlier than|prior to|before|on or after|no earlier than|"
    r"not earlier than|later than|after|around|about|approximately|approx|roughly|between|within|from|by)\b"
)
_EN_REL_MAP = {
    "on or before": "before", "no later than": "before", "not later than": "before", "earlier than": "before",
    "prior to": "before", "before": "before", "on or after": "after", "no earlier than": "after",
    "not earlier than": "after", "later than": "after", "after": "after", "around": "around", "about": "around",
    "approximately": "around", "approx": "around", "roughly": "around", "between": "between",
    "within": "between", "from": "between", "by": "before",
}
_ZH_SUFFIX = re.compile(r"^\s*的?\s*(左右|前后|及以前|或之前|或以前|之前|以前|以内|之内|前|之后|以后|或之后|后|之间|时间段内|时间范围内|范围内|区间内|内)")
_ZH_SUFFIX_MAP = {
    "左右": "around", "前后": "around", "及以前": "before", "或之前": "before", "或以前": "before", "之前": "before",
    "以前": "before", "前": "before", "之后": "after", "以后": "after", "或之后": "after", "后": "after",
    "之间": "between", "时间段内": "between", "时间范围内": "between", "范围内": "between", "区间内": "between",
    "内": "between", "以内": "between", "之内": "between",
}
_ZH_PREFIX = re.compile(r"(不得晚于|不能晚于|不应晚于|不迟于|不晚于|早于|不得早于|不能早于|不应早于|不早于|晚于|迟于)\s*$")
_ZH_PREFIX_MAP = {"不得晚于": "before", "不能晚于": "before", "不应晚于": "before", "不迟于": "before", "不晚于": "before",
                  "早于": "before", "不得早于": "after", "不能早于": "after", "不应早于": "after", "不早于": "after",
                  "晚于": "after", "迟于": "after"}
_MODAL_EN = re.compile(r"\b(?:should|must|need|needs|has to|have to|will|is|are|was|be)\b")
_MODAL_ZH = re.compile(r"应该|应当|应|须|需要|需|要|将|为|在")
_TIME_SUBJECT = re.compile(
    r"\b(?:deliver\w*|arriv\w*|time|reservation|reserve|appointment|booking|booked|book|scheduled|dispatch\w*)\b|"
    r"送达|配送|时间|预约|预订|到店|到达|订座"
)
_VISIT_SUBJECT = re.compile(r"\b(?:reservation|reserve|appointment|booking|booked|book)\b|预约|预订|到店|订座")
_OPENING = re.compile(r"\b(?:open\w*|clos\w*|business hours)\b|营业|开业|开门|关门")


@dataclass(frozen=True)
class TimeBound:
    """A time an item sets for a delivery or a visit, as this module reads it."""

    index: int
    item: str
    relation: Relation
    start: datetime
    end: datetime
    visits: bool  # the item names a reservation/booking/appointment, not a delivery

    def holds(self, t: datetime, slack_min: float = 0.0) -> bool:
        """Whether ``t`` meets the bound (around/exact: within ``slack_min`` of it)."""
        s = timedelta(minutes=slack_min)
        if self.relation == "before":
            return t <= self.end
        if self.relation == "after":
            return t >= self.start
        if self.relation == "between":
            return self.start <= t <= self.end
        return abs(t - self.start) <= s

    def same(self, other: TimeBound) -> bool:
        return (self.relation, self.start, self.end) == (other.relation, other.start, other.end)


def _month(word: str) -> int:
    w = word.lower().rstrip(".")
    return _MONTHS.get(w) or _MONTHS[w[:3]]


def _find_dates(text: str) -> list[tuple[int, datetime]]:
    out: list[tuple[int, datetime]] = []
    taken: list[tuple[int, int]] = []
    for kind, rx in _DATE_RES:
        for m in rx.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            g = m.groups()
            try:
                if kind in ("iso", "zh"):
                    d = datetime(int(g[0]), int(g[1]), int(g[2]))
                elif kind == "mdy":
                    d = datetime(int(g[2]), _month(g[0]), int(g[1]))
                else:
                    d = datetime(int(g[2]), _month(g[1]), int(g[0]))
            except (ValueError, KeyError):
                continue
            taken.append((m.start(), m.end()))
            out.append((m.start(), d))
    return sorted(out, key=lambda x: x[0])


def _find_times(text: str) -> list[tuple[int, int, int, int]]:
    """(start, end, hour, minute) of every clock time in ``text``."""
    out: list[tuple[int, int, int, int]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, h: int, mi: int) -> None:
        if 0 <= h <= 24 and 0 <= mi < 60 and not any(a < end and start < b for a, b in taken):
            taken.append((start, end))
            out.append((start, end, h % 24, mi))

    for m in _TIME_HM.finditer(text):
        pre, h, mi, _, ampm = m.groups()
        h, mi = int(h), int(mi)
        if ampm:
            pm = ampm.lower().startswith("p")
            h = (h % 12) + (12 if pm else 0)
        elif pre in _PM_ZH and h < 12 or pre == "中午" and h < 6:
            h += 12
        add(m.start(2), m.end(), h, mi)
    for m in _TIME_H.finditer(text):
        h = int(m.group(1))
        pm = m.group(2).lower().startswith("p")
        add(m.start(), m.end(), (h % 12) + (12 if pm else 0), 0)
    for m in _TIME_ZH.finditer(text):
        pre, h, half, mins = m.groups()
        h = int(h)
        mi = 30 if half == "半" else int(mins) if mins else 0
        if pre in _PM_ZH and h < 12 or pre == "中午" and h < 6:
            h += 12
        add(m.start(2), m.end(), h, mi)
    return sorted(out)


def parse_time_bound(index: int, item: str) -> TimeBound | None:
    """The time bound an item sets ("around 12:00 on 2025-06-21", "2025年9月13日12点前",
    "between 11:30 and 12:30 on ...", a reservation "should be 2024-10-12 09:00"), or None
    when the item sets none this reading is sure of."""
    text = cut_rationale(item)
    if not _TIME_SUBJECT.search(norm(text)) or _OPENING.search(norm(text)):
        return None
    dates = _find_dates(text)
    times = _find_times(text)
    if not dates or not times:
        return None
    instants: list[datetime] = []
    for start, _end, h, mi in times:
        pos, day = min(dates, key=lambda d: abs(d[0] - start))
        t = day + timedelta(hours=h, minutes=mi)
        if t not in instants:
            instants.append(t)
    first = min(times[0][0], dates[0][0])
    last_end = max(times[-1][1], max(p for p, _ in dates))
    rels: set[str] = set()
    low = text.lower()
    modal_end = 0
    for m in _MODAL_EN.finditer(low, 0, first):
        modal_end = m.end()
    if re.search(r"\bnot\b(?! later| earlier)|\bnever\b", low[modal_end:first]):
        return None  # "not before 18:00": no sure reading
    for m in _EN_REL.finditer(low, modal_end, first):
        rels.add(_EN_REL_MAP[m.group(1)])
    if _is_zh(text):
        zh_modal = 0
        for m in _MODAL_ZH.finditer(text, 0, first):
            zh_modal = m.end()
        m = _ZH_PREFIX.search(text[zh_modal:first])
        if m:
            rels.add(_ZH_PREFIX_MAP[m.group(1)])
        m = _ZH_SUFFIX.search(text[last_end:])
        if m:
            rels.add(_ZH_SUFFIX_MAP[m.group(1)])
        if re.search(r"\d\s*[-~～至到]\s*\d", text[first:last_end]) and len(instants) == 2:
            rels.add("between")
    visits = bool(_VISIT_SUBJECT.search(norm(text)))
    if len(instants) == 1:
        if len(rels) > 1 or "between" in rels:
            return None
        rel = next(iter(rels), "exact")
        return TimeBound(index, item, rel, instants[0], instants[0], visits)  # type: ignore[arg-type]
    if len(instants) == 2:
        if rels - {"between", "around"}:
            return None
        a, b = sorted(instants)
        return TimeBound(index, item, "between", a, b, visits)
    return None


# ----- other readings of the items ------------------------------------------------------------
_ADDRESS = re.compile(r"\baddress\b|地址")
_ADDRESS_VALUE_EN = re.compile(r"\baddress\b.*?\b(?:should be|must be|is|be|to)\b\s*:?\s*(.+)$", re.I)
_ADDRESS_VALUE_ZH = re.compile(r"地址.*?(?:应为|应是|应该是|应该为|应当为|必须为|为|是)\s*[:：]?\s*(.+)$")
_NOTE = re.compile(r"\b(?:note|remark|comment)s?\b|备注")
_NOTE_VALUE_EN = re.compile(
    r"\b(?:note|remark|comment)s?\b\s*(?:requesting|asking(?: for)?|saying|that says|stating|which says|"
    r"specifying|indicating|mentioning|telling|that|of|with|for|to|reading|:)?\s*(?:the merchant to |the merchant for |from the merchant )?[:\"'“]?\s*(.+)$",
    re.I,
)
_NOTE_VALUE_ZH = re.compile(r"备注\s*(?:修改为|改为|应为|为|写|说明|要求)?\s*[:：]?\s*(?:要求)?\s*(.+)$")
_NOTE_TAIL = re.compile(
    r"\s*(?:,|，|;|；|。|\bto ensure\b|\bensuring\b|\bin line with\b|\bin accordance with\b|\bso that\b|"
    r"\bfrom the merchant\b|\bbecause\b|\bas the\b)"
)
_QUERY_EN = re.compile(
    r"\b(?:must|need to|needs to|should|has to|have to|required to)\s+(?:first\s+)?(?:query|check|verify|look up|inquire|confirm)\b|"
    r"\b(?:should|must|needs? to) be (?:queried|checked|verified|looked up)\b"
)
_QUERY_ZH = re.compile(r"(?:需要|必须|应当|应该|应|需)(?:先)?(?:查询|查看|确认|核实|核查|检查)")
_NO_QUERY = re.compile(
    r"\b(?:should not|must not|shouldn't|mustn't|do not|don't|no need to|need not)\s+(?:query|check|search|look up)\b|"
    r"不要查询|无需查询|不需要查询|不必查询|不应查询"
)
# what a "must query X" item asks to look at, and the tools that do
QUERY_TARGETS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("behaviors", re.compile(r"histor\w* behavio\w*|behavio\w* histor\w*|user'?s? histor\w*|usual|habit|frequent|"
                             r"previously visited|历史行为|行为记录|常去|习惯|消费水平|消费区间"),
     ("get_user_historical_behaviors",)),
    ("orders", re.compile(r"\borders?\b|\bbookings?\b|\breservations?\b|订单|预订记录|预约记录"),
     ("get_user_all_orders", "get_delivery_order_status", "get_delivery_order_detail", "search_delivery_orders",
      "get_instore_orders", "get_instore_books", "get_instore_reservations", "search_instore_book",
      "search_instore_reservation")),
    ("weather", re.compile(r"weather|temperature|天气|气温"), ("weather",)),
    ("distance", re.compile(r"distance|距离"), ("longitude_latitude_to_distance", "get_nearby", "delivery_distance_to_time")),
    ("holiday", re.compile(r"holiday|festival|节日|节假日"), ("get_holiday_date", "get_date_holiday_info")),
)
_SILENT_PREFIX_EN = frozenset(
    "the a an delivery order orders new estimated expected for of time address all".split()
)
_SILENT_PREFIX_ZH = re.compile(r"^(?:订单|的|配送|送达|预计|预期|新|用户|重新下单|下单|所有|地址|时间)*$")


@dataclass(frozen=True)
class ItemRef:
    index: int
    item: str
    value: str = ""  # the address, note text or query target the item names


@dataclass
class Reading:
    """What the rubric text says, by kind of requirement (no catalogue needed)."""

    times: list[TimeBound] = field(default_factory=list)
    addresses: list[ItemRef] = field(default_factory=list)
    notes: list[ItemRef] = field(default_factory=list)
    queries: list[ItemRef] = field(default_factory=list)
    forbids_queries: bool = False
    # items that are only about addresses, times, notes or cancellations
    silent_on_products: bool = False


def _address_value(item: str) -> str | None:
    text = cut_rationale(item)
    m = (_ADDRESS_VALUE_ZH if _is_zh(text) else _ADDRESS_VALUE_EN).search(text)
    if not m:
        return None
    value = m.group(1).strip().rstrip(".。;；")
    return value if len(norm(value)) >= 8 else None


def _note_value(item: str) -> str | None:
    note = _NOTE.search(item.casefold())
    colon = re.search(r"[:：]", item[note.end():]) if note else None
    if colon and note:
        value = item[note.end() + colon.end():]  # "... the note: Please place it at the front desk"
    else:
        m = (_NOTE_VALUE_ZH if _is_zh(item) else _NOTE_VALUE_EN).search(item)
        if not m:
            return None
        value = m.group(1)
    tail = _NOTE_TAIL.search(value)
    if tail and tail.start() > 0:
        value = value[: tail.start()]
    quoted = re.search(r"['\"“‘「『]([^'\"”’」』]{2,})['\"”’」』]", value)
    if quoted:
        value = quoted.group(1)
    value = value.strip().strip("\"'“”‘’:：").strip()
    if _is_zh(value):
        value = re.sub(r"^(?:要求|请|让)?(?:商家|店家|骑手)?(?:提供|给|准备)?", "", value) or value
    return value or None


_QUERY_OBJECT_END = re.compile(
    r"\b(?:to find|to see|to confirm|to determine|to know|and the|which|where|who|that (?:was|were|is|are)|the result|"
    r"results?)\b|[,;:，；：。]|结果|发现|得知|找到"
)


_CATALOGUE_CHECK = re.compile(r"\b(?:has|have|had|offers?|includes?|available|provides?|sells?)\b|有没有|是否有|有无|提供")


def query_target(item: str) -> str | None:
    """What an item says must be queried ("Need to query the user's historical behavior ...",
    "需要查询用户历史行为"): a ``QUERY_TARGETS`` name, read from the object of the verb only."""
    low = norm(item)
    m = _QUERY_EN.search(low)
    if m:
        if re.search(r"\bbe (?:queried|checked|verified|looked up)\b", m.group(0)):
            obj = _clause_around(low, m.start(), m.end())[0]  # passive: the subject is the object
        else:
            rest = low[m.end():]
            end = _QUERY_OBJECT_END.search(rest)
            obj = rest[: end.start()] if end else rest
    else:
        m = _QUERY_ZH.search(item)
        if not m:
            return None
        rest = item[m.end():]
        end = _QUERY_OBJECT_END.search(rest)
        obj = rest[: end.start()] if end else rest
    if _CATALOGUE_CHECK.search(obj):
        return None  # "check if the shop has / offers ...": the catalogue, no one tool
    for name, rx, _tools in QUERY_TARGETS:
        if rx.search(obj):
            return name
    return None


def _is_silent_item(item: str, reading_kinds: set[str]) -> bool:
    """An item that says nothing about which store or product: only an address or a time, every
    word outside the value generic ("The delivery address should be ...", "订单的送达时间应在...")."""
    if not reading_kinds - {"note"}:
        return False
    text = norm(cut_rationale(item))
    m = re.search(r"\b(?:should|must|is)\b|应|须|为", text)
    if not m:
        return False
    subject = text[: m.start()]
    if _is_zh(subject):
        return bool(_SILENT_PREFIX_ZH.match(subject.replace(" ", "")))
    return set(re.findall(r"[a-z']+", subject)) <= _SILENT_PREFIX_EN


def read_rubric(items: list[str]) -> Reading:
    """Read the natural-language rubric items (English or Chinese)."""
    r = Reading()
    silent = bool(items)
    for i, item in enumerate(items):
        kinds: set[str] = set()
        tb = parse_time_bound(i, item)
        if tb is not None:
            r.times.append(tb)
            kinds.add("time")
        if _ADDRESS.search(norm(item)):
            value = _address_value(item)
            if value:
                r.addresses.append(ItemRef(i, item, value))
                kinds.add("address")
        if _NOTE.search(norm(item)):
            value = _note_value(item)
            if value:
                r.notes.append(ItemRef(i, item, value))
                kinds.add("note")
        low = norm(item)
        target = query_target(item)
        if target is not None:
            r.queries.append(ItemRef(i, item, target))
        if _NO_QUERY.search(low):
            r.forbids_queries = True
        silent = silent and _is_silent_item(item, kinds)
    r.silent_on_products = silent
    return r


def rubric_kinds(items: list[str]) -> dict[str, Label]:
    """The kinds of variants the text alone can justify, with their label (the catalogue-based
    kinds ``wrong_store``, ``wrong_product`` and ``wrong_option`` need a task: ``build_variants``)."""
    r = read_rubric(items)
    out: dict[str, Label] = {}
    if any(t.relation == "around" for t in r.times):
        out["around_shift"] = "accept"
    if any(t.relation in ("before", "around", "between", "exact") for t in r.times):
        out["late_delivery"] = "reject"
    if r.addresses:
        out["wrong_address"] = "reject"
    if r.notes:
        out["contradicting_note"] = "reject"
    if r.queries:
        out["missing_query"] = "reject"
    if not r.forbids_queries:
        out["extra_reads"] = "accept"
        out["reorder"] = "accept"
    if r.silent_on_products:
        out["other_product"] = "accept"
    return out


def contradicting_note(requested: str) -> str:
    """A note saying the opposite of ``requested`` ("no cilantro" -> "Please add cilantro")."""
    text = requested.strip()
    swap = {"extra": "Less", "more": "Less", "less": "Extra", "多": "少", "少": "多"}
    first = text.split()[0].lower() if text.split() else ""
    if _is_zh(text) and text[:1] in swap and len(text) <= 4:
        return swap[text[:1]] + text[1:]  # "多辣" -> "少辣"
    if not _is_zh(text) and first in swap:
        return swap[first] + text[len(first):]  # "Extra spicy" -> "Less spicy"
    if _is_zh(text):
        if re.search(r"不|无|免|别|没|去掉", text):
            rest = re.sub(r"不要|不用|不需要|无需|不加|不放|去掉|别放|别加|免|不|无|别|没有|没", "", text).strip()
            return "请务必加" + rest if rest else "请照常"
        return "请不要" + text
    low = text.lower()
    if re.search(r"\b(?:no|not|without|never)\b|n't|\bdo not\b", low):
        # the negations flipped: "no cilantro" -> "Extra cilantro", "without pearls" -> "with pearls"
        flipped = re.sub(r"\bwithout\b", "with", text, flags=re.I)
        flipped = re.sub(r"\bno\b", "extra", flipped, flags=re.I)
        flipped = re.sub(r"\b(?:do not|don't|not|never)\s*", "", flipped, flags=re.I).strip()
        return flipped[:1].upper() + flipped[1:] if flipped else "Anything is fine"
    if low.startswith("please "):
        return "Please do not " + text[7:]
    if low.startswith("to "):
        return "Please do not " + text[3:]
    return f"Please do not provide {text}"
