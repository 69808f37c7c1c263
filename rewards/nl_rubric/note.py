"""Note items: what the order's note (its remark to the store) must say.

The kind
    An item that asks for a note on an order ("a note requesting ...", "备注...") and says what it
    holds. It is read before the item's kind is chosen (``compile._requirement``), once the names of
    the task's places are blanked out ("Green Note Café" speaks of no note).

The grammar
    English, one of: "... should (also) (include / add / carry / specify) a (special / order) note
    (requesting / asking for / saying / that says / with / :) X"; "the note should (say / state /
    read / include / request / be) X"; "(please) add a note to / for <order> (: / requesting) X";
    "<order> should note X" (the word as a verb); "(should) add the note X to <order>", "a note saying X should be added
    to <order>". Chinese: "<order>(应/需要/要)(添加/写上/注明)(订单)
    备注(中/里)(应)(为/写明/要求/内容为)(：)X", X with a leading 要求/说明 and a trailing 的要求/备注
    dropped. In both, the part after a colon is X ("a note for the rice order: no onions"), a
    purpose is cut, and X must be one request: "or", "if", "或者", "如果" leave it to the judge, and so
    do two record ids named at once.

Examples
    "The dumpling order should include a note asking for extra vinegar"
    "Add a note to the soup order: please pack the broth separately"
    "The cake order's note should say 'Happy birthday, Mia'"
    "饺子订单需要备注多放醋"
    "为蛋糕订单添加备注：蜡烛要数字6"

The spec: ``NoteSpec`` (the text wanted; the record id when the item names one). How it is checked
(``note_holds`` -> ``note_carries``): at least ``NOTE_COVERAGE`` (60 %) of the item's content words
(English word stems, Chinese character pairs) are in the order's note, and the note contradicts
none of it (``contradicts``): another spice level ("mild" against "extra spicy"), or a word said
with the opposite sign: each content word takes the sign of the marker before it (-2 "no / not /
without / 不 / 不要 / 去", -1 "less / light / 少 / 微", +1 "extra / more / with / 多 / 加"; a negation
carries over an "extra" right after it, "do not add extra rice" / "不要多放", and ends at the
clause's end or at a preposition: "no sugar in the coffee" does not negate the coffee).
``contradicts`` also serves the product check (a note saying "extra spicy" fails a "mild" dish).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from .clauses import _cut_purpose
from .text import _is_zh, _stem, _Unclear
from .world import ItemContext, RecordFacts, _names_out, _Spec

NOTE_COVERAGE = 0.6


class NoteSpec(_Spec):
    """The order's note carries ``text`` (most of its words) and contradicts none of it."""

    kind: Literal["note"] = "note"
    text: str
    record_id: str = ""


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


def note_holds(spec: NoteSpec, record: RecordFacts) -> bool:
    return note_carries(spec.text, record.note)


# ----- the grammar ----------------------------------------------------------------------------------
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
_NOTE_SAYS = re.compile(r"\s+(?:should|must)\s+(?:say|state|read|include|contain|mention|request|ask for|"
                        r"be(?! (?:added|included|written|left|put|attached|placed|made|given)\b))\s*:?\s*")
# what the note says, then the order it goes on: "(should) add the note 'X' to the Y order", "a note saying X should be
# added to the Y order"
_NOTE_ON = re.compile(r"^(?:(?:should|must|needs? to|has to)\s+(?:also\s+)?)?(?:add|include|leave|write|put|attach)\s+"
                      r"(?:an?\s+|the\s+)?(?:(?:special|order)\s+)?(?:notes?|remarks?)\s+(?:(?:saying|that says|requesting|"
                      r"asking for|stating|reading|of)\s+|:\s*)?(?P<x>\S.*?)\s+(?:to|on|in|for)\s+(?P<s>\S.*?\border\b.*)$"
                      r"|^(?:an?\s+|the\s+)?(?:(?:special|order)\s+)?(?:notes?|remarks?)\s+(?:(?:saying|that says|requesting|asking for|"
                      r"stating|reading|of)\s+|:\s*)?(?P<x2>\S.*?)\s+(?:should|must|needs? to)\s+(?:also\s+)?be\s+(?:added|"
                      r"included|written|left|put|attached|placed)\s+(?:to|on|in|for)\s+(?P<s2>\S.*?\border\b.*)$")
_NOTE_ZH = re.compile(r"^(?P<s>.*?)(?:应该|应当|应|必须|需要|须|要)?(?:添加|加上|写上|注明|填写|增加|在)?(?:订单)?备注(?:中|里|上)?"
                      r"(?:应|应该|需要)?(?:修改为|改为|更新为|变更为|写明|注明|说明|写|为|是|内容为|要求|请求|提出)?[：:]?"
                      r"(?P<x>.+)$")


_NOTE_NEG = re.compile(r"\b(?:not|never|no|cannot|shouldn't|mustn't)\b|不应|不能|不得|不可|不要|切勿|禁止|无需|不需要|不必|没有|没|未")


def _note_item(c: str, about: str, ctx: ItemContext) -> NoteSpec | None:
    if not re.search(r"\bnotes?\b|\bremarks?\b|备注", _names_out(c, ctx)):
        return None
    zh = _is_zh(c)
    word = re.search(r"\bnotes?\b|\bremarks?\b|备注", c)
    if word is not None and _NOTE_NEG.search(c[:word.start()]):
        raise _Unclear  # "不应备注X", "should not add a note": not this demand (what a note says may negate)
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
        on = _NOTE_ON.match(c) if add is None else None
        # "X should note 'Y'": the word is the verb, what follows is what the note says
        verb = (w is not None and before is not None and after is None and says is None
                and re.search(r"\b(?:should|must|needs? to|has to)\s+$", c[:w.start()]) is not None
                and c[w.start():w.end()] == "note")
        if add is not None:
            subject, x = add.group("s"), add.group("x")
        elif on is not None:
            subject, x = on.group("s") or on.group("s2"), on.group("x") or on.group("x2")
        elif verb and w is not None and before is not None:
            subject, x = c[:before.start()], c[w.end():]
        elif after is not None and before is not None:
            subject, x = c[:before.start()], after.group("x")
        elif says is not None:
            subject, x = c[:says.start()], c[says.end():]
        else:
            raise _Unclear
    if zh:
        x = re.sub(r"^了?(?:要求|请求|说明|写明|注明)?", "", x)  # "备注了X": X
        x = re.sub(r"(?:的)?(?:特殊)?(?:要求|需求|请求|备注)$", "", x)
    if ":" in x:
        x = x.split(":", 1)[1]  # "a note for the order X: no cilantro"
    if not zh:  # "a remark for an extra set of cutlery", "a note requesting X": what it asks for
        x = re.sub(r"^\s*(?:for|requesting|asking for|saying|stating|that says|specifying)\s+", "", x)
    x = _cut_purpose(x).strip(" '\"“”‘’。.，,")
    if len(x) < 2 or re.search(r"\b(?:or|if)\b|或者|如果", x):
        raise _Unclear
    ids = [i for i in ctx.record_ids if i and i.casefold() in c]
    if len(ids) > 1:
        raise _Unclear
    return NoteSpec(text=x, record_id=ids[0] if ids else "", about=f"{about} {subject}".strip())
