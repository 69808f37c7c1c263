"""A deterministic scripted user.

It opens with a (often vague) request, reveals a hidden fact only when the agent asks about its
topic (keyword synonyms in English and Chinese), confirms proposals, changes its mind once when
the script says so, conveys VitaBench instruction points one by one, and ends with
``###STOP###`` once the agent reports the job done and nothing is left to say. Phrasing varies
with the persona style and the seed; what is said never depends on the wall clock.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

STOP = "###STOP###"

CONFIRM_CUES = (
    "confirm", "shall i", "should i", "would you like", "do you want", "proceed", "go ahead",
    "is that ok", "is this ok", "okay?", "ok?", "sound good", "may i", "can i place", "want me to",
    "确认", "可以吗", "要不要", "是否", "好吗", "行吗", "需要我",
)
DONE_CUES = (
    "has been placed", "have placed", "placed your", "been paid", "is paid", "payment successful",
    "all set", "all done", "completed", "is done", "has been cancelled", "have cancelled",
    "has been updated", "have updated", "order is placed", "orders are placed",
    "已下单", "已支付", "支付成功", "已完成", "已取消", "已经为您", "已为您", "办好了", "搞定",
)

# an agent's greeting ("Hello! How can I help you today?"): a customer answers it with its request
GREETING_CUES = (
    "hello", "hi", "hey", "good morning", "good afternoon", "good evening", "welcome", "how can i help",
    "how may i help", "how can i assist", "how may i assist", "what can i do for you",
    "您好", "你好", "有什么可以帮", "有什么能帮", "请问有什么", "欢迎",
)
GREETING_MAX_CHARS = 160  # longer messages say more than hello

STYLES = ("polite", "terse", "impatient", "chatty")
_PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "yes_polite": ("Yes, please go ahead.", "That works for me, thank you. Please go ahead."),
        "yes_terse": ("Yes.", "OK, do it."),
        "yes_impatient": ("Yes, yes, just do it quickly.", "Fine, go ahead, I'm in a hurry."),
        "yes_chatty": ("Oh, that sounds lovely! Yes, please go ahead.", "Perfect, yes, let's do that!"),
        # nothing to add: said without claiming to have said anything (the user may not have)
        "idk_polite": ("I don't have anything more to add on that. Could you go ahead with what we have?",),
        "idk_terse": ("Nothing to add.",),
        "idk_impatient": ("That's all I can tell you. Please just handle it.",),
        "idk_chatty": ("Hmm, I don't have anything else to add there. Can you sort it out for me?",),
        "hello_polite": ("Hello!",), "hello_terse": ("Hi.",), "hello_impatient": ("Hi.",), "hello_chatty": ("Hi there!",),
        "stop_polite": ("Thank you very much, that's all.",),
        "stop_terse": ("Thanks.",),
        "stop_impatient": ("Finally. Thanks.",),
        "stop_chatty": ("Wonderful, thank you so much! That's all for today.",),
        "check": ("Also, before we finish:",),
    },
    "zh": {
        "yes_polite": ("好的，麻烦您帮我办理。",), "yes_terse": ("可以。",),
        "yes_impatient": ("行行行，快点弄吧。",), "yes_chatty": ("太好了，就这样办吧！",),
        "idk_polite": ("这方面我没有要补充的了，麻烦您按现有的信息处理一下。",), "idk_terse": ("没有要补充的。",),
        "idk_impatient": ("我能说的就这些，赶紧处理吧。",), "idk_chatty": ("嗯，这个我没什么要补充的啦，帮我搞定吧。",),
        "hello_polite": ("您好！",), "hello_terse": ("你好。",), "hello_impatient": ("你好。",), "hello_chatty": ("你好呀！",),
        "stop_polite": ("非常感谢，就这些了。",), "stop_terse": ("谢谢。",),
        "stop_impatient": ("终于好了，谢谢。",), "stop_chatty": ("太棒了，谢谢你！今天就这些啦。",),
        "check": ("另外，结束之前：",),
    },
}


class HiddenFact(BaseModel):
    """A fact the user holds back until the agent asks about its topic."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    topic: str
    keywords: list[str]
    answer: str


class IntentChange(BaseModel):
    """A change of mind, said instead of the first confirmation (or first done report)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    trigger: Literal["first_confirmation", "first_done"] = "first_confirmation"
    message: str


class UserScript(BaseModel):
    """What a scripted user knows and how it talks: language, style, persona, the opening message,
    the hidden facts it reveals when asked about their topic, an optional change of intent, and
    VitaBench's instruction points."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    language: Literal["en", "zh"] = "en"
    style: str = "polite"
    persona: dict[str, object] = {}
    opening: str
    facts: list[HiddenFact] = []
    intent_change: IntentChange | None = None
    # VitaBench instructions, conveyed one point per turn when the agent asks nothing specific
    points: list[str] = []


# Topic synonyms shared by every script, so a task only names the topic.
TOPIC_KEYWORDS: dict[str, tuple[str, ...]] = {
    "party_size": ("how many", "people", "persons", "portions", "servings", "party", "quantity", "几个人", "几位", "几份", "人数", "份数"),
    "budget": ("budget", "price range", "spend", "how much", "cost", "afford", "预算", "价位", "多少钱", "花费"),
    "deadline": ("when", "what time", "by what time", "deadline", "arrive", "delivery time", "什么时候", "几点", "时间", "送达"),
    "address": ("address", "where", "deliver to", "location", "which place", "地址", "送到哪", "哪里", "位置"),
    "diet": ("allerg", "dietary", "diet", "restriction", "avoid", "can't eat", "cannot eat", "food preference", "忌口", "过敏", "饮食", "不吃", "禁忌"),
    "attribute": ("spic", "spec", "option", "flavour", "flavor", "size", "sugar", "ice", "口味", "辣", "规格", "甜度"),
    "store_pref": ("rating", "rated", "review", "prefer", "which store", "restaurant", "评分", "店铺", "商家", "偏好"),
    "distance": ("how far", "distance", "nearby", "close to", "within", "距离", "附近", "多远"),
    "note": ("note", "special request", "remark", "instruction", "备注", "特殊要求"),
}


class CueMatch(NamedTuple):
    """Where a cue was found: the cue (as matched, case-folded) and its start in the text."""

    cue: str
    start: int


class CuePattern:
    """Finds any of a list of cues in lower-cased text, as ``cue_pattern`` describes.

    Each cue is looked up with ``str.find`` (C speed; no regular expression): an alternation of a
    few dozen cues, each behind a look-behind, gives ``re`` no prefix to skip by, so it tried every
    cue at every character, about 0.3 us a character, and the simulated user runs several such
    matchers on every agent message. ``search`` returns the first cue (in the cues' order) that
    occurs at a word start (and end, for phrases), or None. ``pattern`` is the equivalent regular
    expression (the reference the tests compare with), built only when asked for."""

    __slots__ = ("_cues",)

    def __init__(self, cues: tuple[str, ...] | list[str]) -> None:
        parsed: list[tuple[str, bool, bool]] = []
        for cue in cues:
            c = cue.casefold()
            if not c:
                continue
            if not c.isascii():
                parsed.append((c, False, False))
            else:
                parsed.append((c, True, " " in c.strip() or not c[-1].isalpha()))
        self._cues = tuple(parsed)

    @property
    def pattern(self) -> re.Pattern[str]:
        parts = [re.escape(c) if not start_word else rf"(?<![a-z]){re.escape(c)}" + ("(?![a-z])" if end_word else "")
                 for c, start_word, end_word in self._cues]
        return re.compile("|".join(parts)) if parts else re.compile(r"(?!x)x")

    def search(self, text: str) -> CueMatch | None:
        for cue, start_word, end_word in self._cues:
            i = text.find(cue)
            if not start_word:
                if i >= 0:
                    return CueMatch(cue, i)
                continue
            n = len(cue)
            while i >= 0:
                if not (i and "a" <= text[i - 1] <= "z"):
                    j = i + n
                    if not (end_word and j < len(text) and "a" <= text[j] <= "z"):
                        return CueMatch(cue, i)
                i = text.find(cue, i + 1)
        return None


def cue_pattern(cues: tuple[str, ...] | list[str]) -> CuePattern:
    """A matcher for lower-cased text: Latin cues start at a word boundary (single words may be
    prefixes, e.g. "allerg"; phrases must end at one, so "should i" misses "should it");
    Chinese cues match anywhere. (A word boundary here: no ``a``-``z`` letter next to the cue.)"""
    return CuePattern(cues)


CONFIRM_RE = cue_pattern(CONFIRM_CUES)
DONE_RE = cue_pattern(DONE_CUES)
GREETING_RE = cue_pattern(GREETING_CUES)


@lru_cache(maxsize=1024)
def _cached_pattern(cues: tuple[str, ...]) -> CuePattern:
    return cue_pattern(cues)


def _has_any(text: str, cues: tuple[str, ...]) -> bool:
    return _cached_pattern(cues).search(text) is not None


def asks_confirmation(text: str) -> bool:
    """Whether an agent message (any case) asks the user to confirm something."""
    return CONFIRM_RE.search(text.casefold()) is not None


_OBJECT_BEFORE = frozenset(
    "to for with at about from of by on than reminded remind reminds tell told give gave help helps "
    "ask asks asked let lets make makes call calls suit suits bring brings send sends show shows".split()
)
_FIXED = (
    (r"\byou are\b", "I am"), (r"\byou were\b", "I was"), (r"\byou're\b", "I'm"), (r"\byou've\b", "I've"),
    (r"\byou'll\b", "I'll"), (r"\byou'd\b", "I'd"), (r"\byourself\b", "myself"), (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
)


def to_first_person(text: str, language: str = "en") -> str:
    """Rewrite instructions addressed to the user ("You want ...") as the user's own words."""
    if language == "zh":
        return text.replace("您", "我").replace("你", "我")

    def keep_case(src: str, dst: str) -> str:
        return dst[0].upper() + dst[1:] if src[0].isupper() else dst

    for pattern, repl in _FIXED:
        text = re.sub(pattern, lambda m, r=repl: keep_case(m.group(0), r), text, flags=re.I)

    def you(m: re.Match[str]) -> str:
        before = re.findall(r"[A-Za-z']+", text[: m.start()])
        word = "me" if before and before[-1].casefold() in _OBJECT_BEFORE else "I"
        return word if word == "I" else keep_case(m.group(0), word)

    return re.sub(r"\byou\b", you, text, flags=re.I)


def _content_tokens(text: str) -> set[str]:
    """Latin words of 4+ letters and Chinese character pairs, for matching a question to a point."""
    tokens = set(re.findall(r"[a-z]{4,}", text.casefold()))
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        tokens.update(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def split_points(instructions: str) -> list[str]:
    """Split free-text instructions into sentences, the points a VitaBench user conveys one by one."""
    parts = re.split(r"(?<=[.!?。！？；;])\s*", instructions.strip())
    return [p.strip() for p in parts if p.strip()]


class ScriptedUser:
    """Plays one ``UserScript``; ``reply`` is a pure function of the script, seed and dialogue so far."""

    def __init__(self, script: UserScript, seed: int = 0) -> None:
        self.script = script
        self.rng = random.Random(seed)
        self.lang = script.language
        self.style = script.style if script.style in STYLES else "polite"
        self.revealed: set[str] = set()
        self.points_left = list(script.points)
        self.change_pending = script.intent_change is not None
        self.done = False

    def _say(self, key: str) -> str:
        options = _PHRASES[self.lang].get(f"{key}_{self.style}") or _PHRASES[self.lang][key]
        return options[self.rng.randrange(len(options))]

    def opening(self) -> str:
        return self.script.opening

    def _asked_facts(self, text: str) -> list[str]:
        answers = []
        for fact in self.script.facts:
            if fact.topic in self.revealed:
                continue
            cues = tuple(k.casefold() for k in fact.keywords) + TOPIC_KEYWORDS.get(fact.topic, ())
            if _has_any(text, cues):
                self.revealed.add(fact.topic)
                answers.append(fact.answer)
        return answers

    def _points_asked(self, text: str) -> list[str]:
        """Instruction points that share content words with the agent's question."""
        words = _content_tokens(text)
        hits = []
        for p in self.points_left:
            shared = words & _content_tokens(p)
            if len(shared) >= 2 and (len(shared) >= 3 or any(t.isascii() for t in shared)):
                hits.append(p)
        for p in hits:
            self.points_left.remove(p)
        return hits

    def reply(self, agent_message: str) -> str:
        """The user's answer to one agent message."""
        text = agent_message.casefold()
        answers = self._asked_facts(text) + self._points_asked(text)
        asks_confirmation = CONFIRM_RE.search(text) is not None
        reports_done = DONE_RE.search(text) is not None and not asks_confirmation

        if self.change_pending and (
            (asks_confirmation and self.script.intent_change.trigger == "first_confirmation")
            or (reports_done and self.script.intent_change.trigger == "first_done")
        ):
            self.change_pending = False
            return " ".join(answers + [self.script.intent_change.message])
        if reports_done and not answers:
            if self.points_left:
                rest = " ".join(self.points_left)
                self.points_left = []
                return f"{self._say('check')} {rest}"
            if not self.change_pending:
                self.done = True
                return f"{self._say('stop')} {STOP}"
        if asks_confirmation:
            return " ".join(answers + [self._say("yes")])
        if answers:
            return " ".join(answers)
        if len(text) <= GREETING_MAX_CHARS and GREETING_RE.search(text) is not None:
            return f"{self._say('hello')} {self.script.opening}"  # a greeting gets the request, as a customer says it
        if self.points_left:
            return self.points_left.pop(0)
        return self._say("idk")
