"""Shared text handling: normalisation, CJK detection, number words, word stems and phrase matching.

Every kind module reads an item through these helpers; none of them knows a kind.

Normalisation
    ``normalise`` (the time reader's, also the loader's): NFKC (full-width digits and punctuation),
    casefold, one blank between words, "a.m." as "am"; weekday names are dropped (the date decides:
    "Sunday 6 pm (2025-06-22)" reads as "6 pm (2025-06-22)"). ``_knorm`` (every other kind's): NFKC,
    casefold, curly quotes as straight ones, one blank between words, a final full stop dropped.
    ``_is_zh``: a text is read as Chinese when at least 30 % as many CJK characters as Latin letters
    stand in it ("牛肉面 should be mild" is English, "订单备注no cilantro" Chinese).

Numbers
    Digits, English number words ("two", "a single") and Chinese numerals up to 99 ("两", "十二",
    "二十五") are one number (``_num``, ``_zh_number``); a word that is none raises ``_Unclear``.
    ``_compare`` compares with a 1e-9 slack; ``_OP_FLIP`` is the comparison a negation gives
    ("should not be lower than 4" is ">= 4").

Phrases (``phrase_in``: how a value an item names is found in one name, tag or option)
    English words compare as stems (numbers as digits, "X-free" as "no X"; "noodles" is "noodle")
    and every word of the phrase must be in the field, with no "no / non- / less / low" right before
    a matched word that the phrase lacks: "spicy" is not in "Non-spicy", "fried egg" is in "Add Fried
    Egg". Word order and inflection do not matter ("separated" is "separate"); "include(d) / including / contain(s) / comes" are
    dropped like articles ("includes firing" is in "Firing included"); "complimentary" is "free",
    "additional" is "extra" ("no extra sugar" is in "No Additional Sugar"),
    "menu" is "meal"; a duration is in minutes ("1.5h", "90 minutes"); a number stays with its
    neighbours ("2 hour" is not in "2 people, 3 hours"; "for two" is "for two" or "two-person", not
    "for two adults"; both ends of a range count: "3 person" is in "2-3 people").
    Chinese phrases are substrings not right after 不 / 无 / 去 / 少 / 微 / 半: "辣" is in "特辣"
    but not in "不辣", "冰" not in "去冰", "不加葱" is in "不加葱".

``_Unclear`` is how every reader says "not unambiguous": ``compile_item`` turns it into None (the
item stays with the judge).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# longer texts are not single rubric items; the cap keeps even the linear scan cheap
MAX_ITEM_CHARS = 4000


class _Unclear(Exception):
    """The item cannot be compiled unambiguously: it stays with the judge."""


# ----- normalisation -------------------------------------------------------------------------------
_WEEKDAY = re.compile(
    r"\b(?:(?:next|this|coming|last) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"(?:s)?(?: afternoon| morning| evening)?,? ?"
    r"|(?:下|这|本|上)?(?:个)?(?:星期|周|礼拜)[一二三四五六日天]"
)
_AMPM_DOTS = re.compile(r"\b([ap])\.m\.?")


def normalise(text: str) -> str:
    """NFKC, casefold, one blank between words, "a.m." as "am", weekday names dropped."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = " ".join(t.split())
    t = _AMPM_DOTS.sub(r"\1m", t)
    return " ".join(_WEEKDAY.sub(" ", t).split())


def _knorm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold().replace("’", "'").replace("‘", "'")
    t = _EN_MUST.sub(lambda m: "must" if m.group("m") else "should", t)  # "ought to", "is required to": one modal each
    t = _EN_ENSURE.sub(_ensured, t)  # "make sure the noodles contain no seafood": "the noodles should contain ..."
    t = _EN_NECESSARY.sub("", t)  # "it is necessary to order X from Y": the command
    if _CJK_RE.search(t):
        t = _ZH_SELECT.sub("选择", t)  # "挑选" / "选取" / "选用": one verb for the grammar
        t = _ZH_ENSURE_THAT.sub(r"\g<x>应", t)  # "应保证杯型为小杯": "杯型应为小杯"
        t = _ZH_ENSURE.sub("应", t)  # "需确保在X下单", "务必确保包含X": the demand itself
        t = _ZH_REQUIRED.sub("应", t)  # "温度要求为热饮", "要求不含X": "要求" as the modal
        t = _ZH_MUST.sub("应", t)  # "务必" / "一定要" / "理应" / "需为": one modal for the grammar
    return " ".join(t.split()).strip(" .。")


_EN_MUST = re.compile(r"\b(?:(?P<m>(?:is|are) required to|(?:is|are) obliged to)|ought to|shall|(?:is|are) supposed to|"
                      r"(?:is|are) expected to(?= be\b))(?!\w)")
# "(please) make sure / ensure (that) X <verb> ...", "the agent must ensure that ...", "it is required that ...": X should <verb>
_EN_ENSURE = re.compile(r"^(?:please )?(?:(?:the )?(?:agent|assistant|user) (?:must|should|needs to) )?(?:make sure|ensure|it is (?:required|"
                        r"necessary|essential|important) that)(?: that)? (?P<s>.+?) (?P<v>contains|contain|includes|include|is|are|has|"
                        r"have|comes|come|gets|get)\b(?P<r>.*)$")
_BASE_VERB = {"contains": "contain", "includes": "include", "is": "be", "are": "be", "has": "have", "comes": "come", "gets": "get"}
_EN_NECESSARY = re.compile(r"^(?:it is|it's) (?:necessary|required|essential|important) to (?=\w)")


def _ensured(m: re.Match[str]) -> str:
    rest, neg = m["r"], ""
    if rest.startswith(" not "):  # "ensure X is not from Y": X should not be from Y
        rest, neg = rest[4:], " not"
    return f"{m['s']} should{neg} {_BASE_VERB.get(m['v'], m['v'])}{rest}"


_ZH_SELECT = re.compile(r"挑选|选取|选用|选定|选购")
# "应保证 / 需确保 X 为 Y": X should be Y; "需确保 / 务必确保" before a verb: the modal (a bare "，确保..." is a purpose)
_ZH_ENSURE_THAT = re.compile(r"(?:需要|需|应该|应|要|务必|必须)(?:确保|保证)(?P<x>[^，,。；;为是]{1,8}?)(?=为|是)")
_ZH_ENSURE = re.compile(r"(?:需要|需|应该|应|要|务必|必须)(?:确保|保证)(?=在|从|包含|包括|含|有|选择|使用|支持|同时|不|为|是)")
# "要求" right before what is required ("要求为热饮", "要求不含韭菜"), not a noun ("用户的要求", "要求是")
_ZH_REQUIRED = re.compile(r"(?<![的之])要求(?=为|不|包含|包括|含|支持|避免|在|选择|有|具有)")
_ZH_MUST = re.compile(r"务必|一定要|理应|理当|必需(?=[为是])|(?<![必只])需(?=[为是])"
                      # a spoken "得" (must) before what is demanded ("得是韩国三养的", "都得有", "评分得高于4.0"), not "获得 / 值得"
                      r"|(?<=[\u4e00-\u9fff])(?<![获取记懂值觉使免晓显变觉舍])得(?=是|能|有|选|为|在|高于|低于|不|包含|含|用)"
                      # "一共要2个": the total; "玉米饼来10个": the count ordered
                      r"|(?<=一共|总共)要(?:点|买|订|下单|购买)?(?=\d|[一二两三四五六七八九十])|(?<=[\u4e00-\u9fff])来(?=\d+(?:个|份|杯|件|碗|盒|串|只|瓶))")


def _is_zh(text: str) -> bool:
    cjk = len(_CJK_RE.findall(text))
    return cjk > 0 and cjk >= 0.3 * len(re.findall(r"[a-z]", text))


_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


# ----- numbers -------------------------------------------------------------------------------------
_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
                 "eight": "8", "nine": "9", "ten": "10", "single": "1", "twelve": "12", "twenty": "20"}
# how many hours or minutes, in English ("2", "1.5", "two", "an", "half an"): a length's number
EN_LENGTH_NUM = r"\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|an?|half an?"
_NUM_RE = r"(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|a single|single|[一二两三四五六七八九十]{1,3})"
# a negated equality ("should not be 5.0") is no bound any spec holds: absent, so a reader leaves the item unread
_OP_FLIP = {">=": "<", ">": "<=", "<=": ">", "<": ">="}


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


def _compare(x: float, op: str, v: float) -> bool:
    return {">=": x >= v - 1e-9, ">": x > v + 1e-9, "<=": x <= v + 1e-9, "<": x < v - 1e-9,
            "==": abs(x - v) <= 1e-9}[op]


# ----- phrases: how a value an item names is found in a name, tag or option ------------------------
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
    if len(word) > 5 and word.endswith(("ated", "ized", "ised")):
        return word[:-1]  # "separated" is "separate", "customized" "customize"
    return word


# words that say only that a thing comes with another ("Firing included", "includes firing"): dropped like
# articles; a few general synonyms read as one word; a unit right after a number as its full word
_INCLUDE_WORDS = frozenset({"include", "included", "including", "contain", "contained", "containing", "comes", "come"})
_SYNONYMS = {"complimentary": "free", "menu": "meal", "additional": "extra",
             # a taught unit: "experience course" is an "Experience Class", "single session" a "Single class"
             "course": "class", "lesson": "class", "session": "class",
             # who is taught, and how: "teaching package" is an "instruction package", "introductory" "beginner"
             "teaching": "instruction", "tutoring": "instruction", "introductory": "beginner"}
_UNITS_AFTER_NUMBER = {"h": "hour", "hr": "hour", "min": "minute"}


@lru_cache(maxsize=1 << 16)
def _en_tokens(text: str) -> tuple[str, ...]:
    """Lower-case word stems; "X-free" reads "no X", marker words as their class; "2h" reads "2 hour"."""
    t = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    t = re.sub(r"([a-z]+)-free\b", r"no \1", t)
    t = re.sub(r"(?<=\d)(?=(?:h|hrs?|mins?)\b)", " ", t)
    out: list[str] = []
    for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", t):
        w = _stem(w)
        if out and out[-1].replace(".", "", 1).isdigit():
            w = _UNITS_AFTER_NUMBER.get(w, w)
            if w == "hour":  # "1.5 hours" is "90 minutes" (and "2-3 hours" "120-180 minutes")
                k = len(out)
                while k and _is_number(out[k - 1]):
                    k -= 1
                    out[k] = f"{float(out[k]) * 60:g}"
                w = "minute"
        w = _SYNONYMS.get(w, w)
        out.append(_MARKER_WORDS.get(w, w))
    return tuple(out)


def _is_number(w: str) -> bool:
    return w.replace(".", "", 1).isdigit()


# what else a number may count in a field ("for 1 adult and 1 child", "for 4 hours"): not a serving "for 1"
_PEOPLE_KINDS = frozenset({"adult", "child", "kid", "children", "senior", "elder", "student", "infant", "baby", "toddler",
                           "teen", "teenager", "guest", "minute", "day", "week", "month", "year", "night", "time",
                           "session", "visit", "use", "entry", "lesson", "class"})


def _numbers_bound(phrase: tuple[str, ...], field: tuple[str, ...]) -> bool:
    """A number of the phrase stays with its neighbours: "for 2" is "for 2" (not "for 2 adults") or
    "2 person" in the field, "2 hour" is "2 hour" (not "2 people, 3 hours"); both ends of a range
    count ("5 person" is in "5-6 People", "for 6" in "for 5-6")."""
    pairs = set(zip(field, field[1:]))
    for a, b, c in zip(field, field[1:], field[2:]):
        if _is_number(b) and _is_number(c):
            pairs.add((a, c))  # "for 5-6": "for 6"
        if _is_number(a) and _is_number(b):
            pairs.add((a, c))  # "5-6 people": "5 people"
    for i, w in enumerate(phrase):
        if not _is_number(w):
            continue
        nxt = phrase[i + 1] if i + 1 < len(phrase) else None
        if i and phrase[i - 1] == "for" and (nxt is None or nxt in _PHRASE_STOP or nxt == "person"):
            if ("for", w) not in pairs and (w, "person") not in pairs:
                return False  # "for two (people)" is "for two" or "two-person" in the field
            if any(a == "for" and b == w and c in _PEOPLE_KINDS for a, b, c in zip(field, field[1:], field[2:])):
                return False  # "for 1" is not "for 1 adult and 1 child"
        elif nxt is not None and nxt not in _PHRASE_STOP and not _is_number(nxt) and (w, nxt) not in pairs:
            return False
    return True


def _norm_zh(text: str) -> str:
    return _norm_zh_cached(text) if len(text) <= _CACHED_CHARS else _norm_zh_once(text)


def _norm_zh_once(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


_norm_zh_cached = lru_cache(maxsize=1 << 16)(_norm_zh_once)
# a catalogue's names, tags and options are short and recur across records and episodes: their checks
# are remembered; a longer text (an item being read) is not, so a read stays linear in its length
_CACHED_CHARS = 256


def phrase_in(phrase: str, field_text: str) -> bool:
    """Whether ``phrase`` is found in ``field_text`` (``_phrase_in``; short texts remembered)."""
    if len(field_text) <= _CACHED_CHARS and len(phrase) <= _CACHED_CHARS:
        return _phrase_in_cached(phrase, field_text)
    return _phrase_in(phrase, field_text)


# words that lessen what follows them without negating it ("Less Ice", "Low Sugar", "Mildly Spicy", "少冰",
# "微辣", "半糖"): the field still has what they lessen
_LESSENING_EN = re.compile(r"\b(?:less|low|lower|light|lightly|slightly|reduced|half|little|fewer|mild|mildly)\b[\s-]*",
                           re.IGNORECASE)
_LESSENING_ZH = re.compile(r"[少微半](?=[\u3400-\u4dbf\u4e00-\u9fff])")


def phrase_in_any_amount(phrase: str, field_text: str) -> bool:
    """Whether ``field_text`` has ``phrase`` in any amount: as ``phrase_in``, but a lessening word
    before it does not hide it ("Less Ice" has ice, "微辣" is spicy, "Low Sugar" has sugar), while a
    negating one still does ("No Ice", "去冰", "Non-spicy" have none). What a negated demand
    ("without ice", "不要辣") must find absent: a little of it is not none of it."""
    if phrase_in(phrase, field_text):
        return True
    stripped = _LESSENING_ZH.sub("", _LESSENING_EN.sub("", field_text))
    return stripped != field_text and bool(stripped.strip()) and phrase_in(phrase, stripped)


@lru_cache(maxsize=1 << 17)
def _phrase_in_cached(phrase: str, field_text: str) -> bool:
    return _phrase_in(phrase, field_text)


def _phrase_in(phrase: str, field_text: str) -> bool:
    """Whether ``phrase`` is found in ``field_text`` (one name, tag or option part).

    English: every word of the phrase (stems, numbers as digits, articles dropped) is a word of the
    field, and no negating or lessening word ("no", "non-", "-free", "less", "low") stands right
    before a matched word unless the phrase has it too ("spicy" is not in "Non-spicy"; "fried egg"
    is in "Add fried egg"). Chinese: the phrase is a substring of the field not right after such a
    marker ("辣" is not in "不辣", "冰" not in "去冰")."""
    if not phrase or not field_text:
        return False
    if _CJK_RE.search(phrase):
        if not _CJK_RE.search(field_text):
            return False  # Chinese words are in no English field
        p, f = _norm_zh(phrase), _norm_zh(field_text)
        start = f.find(p)
        while start != -1:
            before = f[:start]
            if p.startswith(_ZH_MARKER_BEFORE) or not before.endswith(_ZH_MARKER_BEFORE):
                return True
            start = f.find(p, start + 1)
        return False
    full = tuple(w for w in _en_tokens(phrase) if w not in ("a", "an", "the") and w not in _INCLUDE_WORDS)
    want = [w for w in full if w not in _PHRASE_STOP]
    have = tuple(w for w in _en_tokens(field_text) if w not in _INCLUDE_WORDS)
    if not want or not set(want) <= set(have) or not _numbers_bound(full, have):
        return False
    # "extra"/"add" before a word keeps it ("Add fried egg" has fried egg); "no"/"less" do not
    wanted = set(want)
    for i, w in enumerate(have):
        if w in wanted and w not in _BLOCKING and i and have[i - 1] in _BLOCKING and have[i - 1] not in wanted:
            return False
    return True
