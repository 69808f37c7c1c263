"""Who does it: a demand said as what the agent does, or as a plain statement, read as the demand.

Rubric writers say a requirement three ways: with a modal on the record ("the dinner order should
include X", the form every kind's grammar reads), with the agent as the subject ("the agent should
order X from Y", "the assistant picks a crispy snack", "the agent ordered two snacks in total"), or
as a plain statement with no modal ("the lunch order costs no more than 80 yuan", "the latte is
ordered hot"). ``agent_voice`` turns the second and third into the first, as a list of candidate
rewrites, most literal first; the requirement reader tries them in order only when the text as
written did not read, so an item that reads as written never changes.

English:
- "[when ..., ] the agent / assistant / you [also] [MODAL] VERB OBJ [PREP REST]", the verb in any
  tense ("orders", "ordered", "chose"), negated by the modal or by "does not / did not / never":
  first the demand without its agent ("should order OBJ PREP REST": the command readers), then the
  value as the subject of a passive ("OBJ should be ordered PREP REST": ``passive_choice``), split at
  each "for / in / from / at" that is not inside a name the task's catalogue spells.
- "the agent sets the X of Y to Z": "the X of Y should be Z".
- "the agent goes to / visits Y": "Y should be selected".
- no modal at all: "X costs / costed ..." -> "X should cost ..."; "X is / was ordered ..." -> "X
  should be ordered ...".

Chinese:
- "助手/智能体/客服 [应] 为用户 VERB ...": the demand without the agent and its beneficiary.
- "已为用户下单X", "成功预订了X": a past report as the demand ("应下单X").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .clauses import _PLACE_THAT
from .text import _BASE_VERB, _is_zh

_AGENT_EN = r"(?:(?:the|an?|our) )?(?:ai |service |customer service |booking )?(?:agent|assistant|model|system|bot)|you|we"
_LEAD_EN = r"(?P<lead>(?:when|while|for|as for|regarding|upon|in|on|at|after|before)\s+[^,]{2,80},\s*)?"
_MODAL_EN = (r"(?P<neg>cannot|can't|can not|must not|mustn't|should not|shouldn't|may not|does not|do not|did not|don't|doesn't|"
             r"didn't|should never|must never|never)|(?P<pos>should|must|needs? to|has to|have to|will|would|can|successfully|"
             r"correctly|then|also|first)")
_AGENT_ACT = re.compile(rf"^{_LEAD_EN}(?:{_AGENT_EN})\s+(?:(?:{_MODAL_EN})\s+)*(?P<verb>[a-z]+)\b(?P<rest>.*)$")

# verb forms -> (base form, past participle)
_VERBS: dict[str, tuple[str, str]] = {}
for _forms, _base, _part in (
    (("order", "orders", "ordered"), "order", "ordered"),
    (("reorder", "reorders", "reordered", "re-order", "re-orders", "re-ordered"), "reorder", "ordered"),
    (("pick", "picks", "picked"), "pick", "picked"),
    (("choose", "chooses", "chose", "chosen"), "choose", "chosen"),
    (("select", "selects", "selected"), "select", "selected"),
    (("buy", "buys", "bought"), "buy", "bought"),
    (("purchase", "purchases", "purchased"), "purchase", "purchased"),
    (("book", "books", "booked"), "book", "booked"),
    (("reserve", "reserves", "reserved"), "reserve", "reserved"),
    (("add", "adds", "added"), "add", "added"),
    (("include", "includes", "included"), "include", "included"),
    (("get", "gets", "got", "gotten"), "get", "ordered"),
    (("place", "places", "placed"), "place", "placed"),
    (("avoid", "avoids", "avoided"), "avoid", "avoided"),
    (("cancel", "cancels", "cancelled", "canceled"), "cancel", "cancelled"),
    (("specify", "specifies", "specified"), "specify", "specified"),
    (("request", "requests", "requested"), "request", "requested"),
    (("use", "uses", "used"), "use", "used"),
    (("set", "sets"), "set", "set"),
    (("make", "makes", "made"), "make", "made"),
    (("go", "goes", "went"), "go", "gone"),
    (("visit", "visits", "visited"), "visit", "visited"),
):
    for _f in _forms:
        _VERBS[_f] = (_base, _part)

_SPLIT_PREPS = re.compile(r" (?:for|in|from|at|with) ")
_NUM_WORDS = r"\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve"
_PEOPLE_EN = r"(?:people|persons?|guests?|customers?|diners?|adults?|pax)"
_SET_TO = re.compile(r"^\s*(?P<what>(?:the )?\S.*?) (?:to|as) (?P<value>\S.*)$")
_GO_TO = re.compile(r"^\s*(?:to )?(?P<place>\S.*)$")

# no modal: a verb of what a record costs, or a passive of choosing, said as a fact
_EN_PLAIN_COST = re.compile(r"^(?P<s>\S.*?) (?P<v>costs|cost|costed|comes to|totals|adds up to) (?P<r>\S.*)$")
_EN_PLAIN_PASSIVE = re.compile(r"^(?P<s>\S.*?) (?:is|are|was|were|has been|have been|gets|get|got) (?P<neg>not )?"
                               r"(?P<p>ordered|chosen|selected|picked|bought|purchased|booked|reserved|included|added|"
                               r"avoided|excluded|placed|made|prepared|served|delivered|set)\b(?P<r>.*)$")

_EN_ALLOWED_IN = re.compile(r"^(?P<no>no |not any )?(?P<x>\S.*?) (?:is|are) (?P<neg>not )?(?:allowed|permitted|accepted|acceptable|"
                            r"tolerated) (?:in|on|for) (?P<y>(?:the |a |an |my |his |her |their |[a-z]+'s )\S.*)$")
_ONLY_ACCEPTED = re.compile(r"^only (?P<x>\S.*?) (?:is|are|will be) (?:acceptable|allowed|accepted|permitted|ok|okay) (?:for|in) "
                            r"(?P<y>(?:the |a |an |my |his |her |their |[a-z]+'s )\S.*)$")
_AGENT_ZH = re.compile(r"^(?P<lead>[^，,]{0,40}[，,])?(?:助手|智能体|客服|代理|模型|系统|agent)(?:已经|已|成功(?:地)?|则|也|会|再)*")
# a past report or plain statement: its first main verb (not one of a relative clause: "点的火锅") takes the modal
_ZH_DECLARED = re.compile(
    r"(?P<v>(?:重新)?(?:选择了|选了|点了|下单了|订购了|订了|预订了|预约了|购买了|买了|取消了|备注了|添加了)"
    r"|(?:选|点|下单|买|订)的是|(?<=[里中内])有|含有|带有|包括|包含|不含有|不含|没有任何|没有选择|没有选|没有|是(?!否))")
_ZH_AS_DEMAND = {"选择了": "应选择", "选了": "应选择", "点了": "应点", "下单了": "应下单", "订购了": "应订购", "订了": "应订购",
                 "预订了": "应预订", "预约了": "应预约", "购买了": "应购买", "买了": "应购买", "取消了": "应取消", "备注了": "应备注",
                 "添加了": "应添加", "有": "应含有", "含有": "应含有", "带有": "应带有", "包括": "应包括", "包含": "应包含",
                 "不含有": "不应含有", "不含": "不应含有", "没有任何": "不应含有", "没有选择": "不应选择", "没有选": "不应选择",
                 "没有": "不应含有", "是": "应为"}
# "一共点了3份": the total said with its verb
_ZH_TOTAL_VERB = re.compile(r"(?<=一共|总共)(?:点了|下单了|订了|买了|购买了|订购了)|(?<![一总])(?<=共)(?:点了|下单了|订了|买了)")


def agent_voice(c: str, protected: Callable[[str], list[tuple[int, int]]] | None = None) -> list[str]:
    """Candidate rewrites of a normalised clause ``c`` in the record's modal voice, most literal
    first; [] when it is not said by the agent or as a plain statement. ``protected(text)`` gives the
    spans of names the task's catalogue spells in ``text`` (a split inside one is skipped)."""
    if is_question(c):
        return _asked(c.rstrip("? "), protected)
    keyed = _keyed(c)
    if keyed is not None:
        return keyed
    if _is_zh(c):
        return _agent_voice_zh(c)
    m = _AGENT_ACT.match(c)
    if m is None:
        return _plain_en(c) or _modal_en(c) or _imperative_en(c, protected) or _fragment_en(c)
    form = m["verb"]
    if form not in _VERBS:
        return []
    base, part = _VERBS[form]
    lead, rest = m["lead"] or "", m["rest"].strip()
    neg = " not" if m["neg"] else ""
    if not rest:
        return []
    out: list[str] = []
    if base == "set":
        sm = _SET_TO.match(rest)
        return [f"{lead}{sm['what']} should{neg} be {sm['value']}"] if sm else []
    if base in ("go", "visit"):
        gm = _GO_TO.match(rest) if base == "go" else re.match(r"^(?P<place>\S.*)$", rest)
        if gm is None or (base == "go" and not rest.startswith("to ")):
            return []
        place = re.split(r",\s*", gm["place"], maxsplit=1)[0]
        return [f"{lead}should{neg} select {place}", f"{lead}{place} should{neg} be selected"]
    # a booking's passive first where a preposition splits off what is asked of it ("book X for 8 pm", "book X for
    # the nails"): said with no subject, a reader would take the whole rest for one value
    out.append(f"{lead}should{neg} {base} {rest}")
    spans = protected(rest) if protected is not None else []
    for sp in _SPLIT_PREPS.finditer(rest):
        if any(a < sp.start() + 1 < b for a, b in spans):
            continue  # inside a name ("Beef in Sour Soup")
        if re.match(rf"for (?:{_NUM_WORDS})\b", rest[sp.start() + 1:]) and \
                re.search(r"\b(?:package|set|menu|meal|combo|portion|platter|course|deal|bundle|serving)s?$", rest[:sp.start()]):
            continue  # "a package for two": a serving size, not whom it is for ("the restaurant for 8 people" splits)
        obj, tail = rest[:sp.start()].strip(), rest[sp.start():]
        if obj and not (base == "place" and not re.search(r"\border\b", obj)):
            passive = f"{lead}{obj} should{neg} be {part}{tail}"
            out.insert(len(out) - 1 if base in ("book", "reserve") else len(out), passive)
        break
    if base != "place":
        out.append(f"{lead}{rest} should{neg} be {part}")
    return out


# a yes-no question of a checklist: "did the agent order X?", "does the order include X?", "was X selected for Y?",
# "is the latte hot?", "X是否在Y下单？"
_ASK_AGENT = re.compile(rf"^(?:did|does|do|has|have) (?P<a>{_AGENT_EN}) (?P<r>\S.*)$")
_ASK_DO = re.compile(r"^(?:did|does|do) (?P<s>\S.*?) (?P<v>include|contain|have|avoid|come with|offer|use|cost|exceed) (?P<r>\S.*)$")
_ASK_BE = re.compile(r"^(?:is|are|was|were|has been|have been) (?P<r>\S.*)$")
_ASK_MARK = re.compile(r" (?=(?:selected|chosen|ordered|placed|picked|booked|reserved|cancell?ed|priced|made|delivered|included|"
                       r"added|from|at|for|within|under|over|above|below|between|around|before|after|located|rated|"
                       r"at least|at most|no more than|less than|more than)\b)")


def is_question(c: str) -> bool:
    """Whether a normalised item is a yes-no question ("is the latte hot?", "订单是否包含X？")."""
    return c.endswith("?") or re.match(r"^(?:did|does|do|is|are|was|were|has|have)\b(?! not\b)", c) is not None  # "do not buy": a command


def _asked(q: str, protected: Callable[[str], list[tuple[int, int]]] | None) -> list[str]:
    """A yes-no question as the demand it checks; [] when it is none of the shapes above."""
    if _is_zh(q):
        if "是否" not in q:
            return []
        direct = re.sub(r"(?<=选择|下单|购买|预订|预约|取消|备注|添加)了", "", q.replace("是否", "应", 1))
        plain = q.replace("是否为", "为", 1).replace("是否是", "是", 1).replace("是否", "", 1)
        return list(dict.fromkeys([direct, *_agent_voice_zh(plain)]))
    if re.search(r"\b(?:not|never)\b|n't\b", q):  # "does the order not include X?", "didn't the agent ...": the negated demand
        bare = re.sub(r"\s*\b(?:not|never)\b|n't\b", "", q)
        if bare == q or re.search(r"\b(?:not|never)\b|n't\b", bare):
            return []
        said = _asked(bare, protected)
        return [x.replace(" should ", " should not ", 1) if " should " in x else x.replace("should ", "should not ", 1)
                for x in said if "should " in x and "should not" not in x]
    m = _ASK_AGENT.match(q)
    if m is not None:
        return agent_voice(f"{m['a']} {m['r']}", protected)
    m = _ASK_DO.match(q)
    if m is not None:
        return [f"{m['s']} should {m['v']} {m['r']}"]
    m = _ASK_BE.match(q)
    if m is None:
        return []
    body = m["r"]
    mark = _ASK_MARK.search(body)
    if mark is not None and mark.start() > 0:
        return [f"{body[:mark.start()]} should be {body[mark.end():]}"]
    if " " not in body:
        return []
    head, last = body.rsplit(" ", 1)
    return [f"{head} should be {last}"]


# "KEY: VALUE", "KEY - sub-key: VALUE", "KEY：VALUE": a checklist line, the key naming the record and what of it
_KEYED = re.compile(r"^(?P<k>[^:;,，；]{2,80}?)\s*:\s*(?P<v>\S.*)$")
_KEY_DASH = re.compile(r"\s+[-–—]\s+")
_EN_VALUE_VERB = re.compile(r"^(?:includes?|contains?|has|have|made with|comes? with|offers?|provides?|only|all|both|each|"
                            r"within|under|over|above|below|at least|at most|no more than|no less than|not|never|from|"
                            r"between|around|before|after)\b")
_ZH_VALUE_VERB = re.compile(r"^(?:含有|含|包含|包括|同时|共|一共|总共|均|都|只有|只|仅|不|无|没有|来自|选择|选|要|需|在|距离)")
_MODAL_WORDS = re.compile(r"\b(?:should|must|needs? to|has to|have to|shall|cannot|can't)\b|应|必须|需要|不能|不得")


def _keyed(c: str) -> list[str] | None:
    """A checklist line said as the demand: "the dinner order store: X" -> "the dinner order store should be X";
    "lunch noodles: no seafood" -> "should be no seafood", then "should contain no seafood"; a value that starts with a
    verb or a bound keeps it ("includes vegetables", "within 60 yuan"). None when the text is no such line."""
    m = _KEYED.match(c)
    if m is None or _MODAL_WORDS.search(m["k"]):
        return None
    if re.search(r"\d$", m["k"]) or re.search(r"\b(?:ids?|number|no|code|phone|tel|telephone)$|编号|单号|电话|id$", m["k"]):
        return []  # "12:00", "order id: 123" stay as they are; a count after a key is a value ("总数：2份")
    key, value = _KEY_DASH.sub(" ", m["k"]).strip(), m["v"].strip(" .。")
    if _is_zh(c):
        verb = _ZH_VALUE_VERB.match(value) is not None
        value = re.sub(r"^含(?!有)", "含有", value)
        return [f"{key}应{value}", f"{key}应为{value}"] if verb else [f"{key}应为{value}", f"{key}应包含{value}"]
    if re.match(r"^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten) (?:people|persons?|guests?|customers?|diners?|adults?|"
                r"pax)$", value):
        return [f"{key} should be for {value}"]  # "reservation: 1 customer": the party
    if _EN_VALUE_VERB.match(value):
        first = value.split(" ", 1)[0]
        if first in ("within", "under", "over", "above", "below", "at", "no", "between", "around", "before", "after", "from"):
            return [f"{key} should be {value}"]
        if first in ("only", "all", "both", "each", "not", "never"):
            return [f"{key} should {'be ' if first in ('only', 'all', 'both', 'each') else ''}{value}"]
        return [f"{key} should {_base_form(first)}{value[len(first):]}"]  # "includes X": "should include X"
    out = [f"{key} should be {value}"]
    if value.startswith("no "):
        out.append(f"{key} should contain {value}")
    else:
        out.append(f"{key} should include {value}")
    return out


# a command with no modal: "get X from Y", "don't order the drinks from Y", "keep the dinner under 30 yuan",
# "put 'less sauce' in the note for the X order"
_IMPERATIVE_EN = re.compile(r"^(?:please )?(?P<neg>don't |do not |never )?(?P<verb>[a-z-]+)\b(?P<rest>.*)$")
_KEEP = re.compile(r"^keep (?P<s>\S.*?) (?P<b>under|below|within|at most|no more than|less than|at or under) (?P<n>\S.*)$")
_PUT_NOTE = re.compile(r"^(?:put|write|leave) (?P<x>\S.*?) (?:in|on|into) the (?:order )?note (?:for|of|on|to) (?P<s>\S.*)$")
# a fragment with no verb: "no ice for the fruit tea", "half sugar for the X milk tea", "small portions for the dinner set"
_FRAGMENT_EN = re.compile(r"^(?P<neg>no |not |nothing |zero )?(?P<v>\S.*?) (?:for|in|on) (?P<t>(?:the |a |an |my |his |her |their |"
                          r"[a-z]+'s )\S.*)$")
_ANY_VERB_EN = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|should|must|can|could|will|would|need|needs|"
                          r"get|gets|make|makes|ordered|choose|chose|pick|picked|select|selected|include|includes|"
                          r"contain|contains|keep|put)\b")


# a demand in a register the readers do not take, said with a modal: its usual wording
_MODAL_WORD = r"(?:should|must|has to|have to|needs? to|can|may|is to|are to)"
_NOT_USED_FOR = re.compile(rf"^(?P<y>\S.*?) {_MODAL_WORD} not be used (?:for|to (?:buy|order|get)) (?P<x>\S.*)$")
_FROM_PLACE = re.compile(rf"^(?P<x>\S.*?) {_MODAL_WORD} (?:come from|be (?:ordered|bought|purchased) (?:from|at)) (?P<p>\S.*)$")
_AT_LEAST_ONE = re.compile(rf"^at least one (?:of (?:the )?)?(?P<x>[a-z][a-z' -]*?) (?P<m>{_MODAL_WORD}) (?P<r>(?:be|have|include|contain) \S.*)$")
_NOTHING_IN = re.compile(rf"^nothing (?P<x>\S.*?) {_MODAL_WORD} (?:be )?(?:in|included in|part of) (?P<y>(?:the |a |an |my |his |her |"
                         r"their |[a-z]+'s )\S.*)$")


def _modal_en(c: str) -> list[str]:
    m = _NOT_USED_FOR.match(c)
    if m is not None:  # "Y should not be used for the X order": the X order not from Y
        return [f"{m['x']} must not come from {m['y']}", f"{m['x']} must not be ordered from {m['y']}"]
    m = _FROM_PLACE.match(c)
    pm = _PLACE_THAT.match(m["p"]) if m is not None else None
    if pm is not None:  # "X has to come from a merchant with dine-in": X's merchant offers it (clauses._PLACE_THAT)
        return [f"{m['x']} merchant should offer {pm['f'] or pm['g']}"]
    m = _AT_LEAST_ONE.match(c)
    if m is not None:  # "at least one juice must be at room temperature": one of them is
        return [f"one of the {m['x']} {m['m']} {m['r']}"]
    m = _NOTHING_IN.match(c)
    if m is not None:  # "nothing spicy should be in the lunch": the lunch holds nothing spicy
        return [f"{m['y']} should not contain {m['x']}", f"{m['y']} should not include {m['x']}"]
    return []


# a command in other words: "choose the hot version of X", "do not buy X from Y", "order enough X to feed five
# people", "leave out the cilantro in X"
_VERSION_OF = re.compile(r"^(?:choose|pick|select|get|order|go for|opt for) (?:the |a |an )(?P<v>\S.*?) (?:version|option|variant) "
                         r"of (?P<x>\S.*)$")
_DONT_BUY_FROM = re.compile(r"^(?:don't|do not|never) (?:buy|order|get|purchase|select|choose) (?P<x>\S.*?) (?:from|at) (?P<y>\S.*)$")
_ENOUGH_FOR = re.compile(rf"^(?:order|get|buy|book) enough (?P<x>\S.*?) (?:to feed|to serve|for) (?P<n>{_NUM_WORDS})(?: {_PEOPLE_EN})?$")
_SPEND_ON = re.compile(r"^(?:don't|do not|never) spend (?:more than|over|above) (?P<n>\S.*?) on (?P<x>\S.*)$")
_RATED = re.compile(r"^(?:pick|choose|select|book|find|reserve) (?:a |an |the )(?P<x>\S.*?) (?:with a rating of|rated) "
                    r"(?P<r>(?:at least |over |above |no less than )?\d(?:\.\d)?(?: stars?)?(?: or (?:higher|above|more))?)$")
_AT_PLACE = re.compile(r"^(?:book|reserve|order|buy) (?:at|from|with) (?P<y>\S.*)$")
_LEAVE_OUT = re.compile(r"^(?:leave out|hold|skip|omit|remove) (?:the |any )?(?P<z>\S.*?) (?:in|on|from|for) (?P<x>\S.*)$")


def _imperative_en(c: str, protected: Callable[[str], list[tuple[int, int]]] | None) -> list[str]:
    m = _VERSION_OF.match(c)
    if m is not None:
        x = m["x"] if m["x"].startswith(("the ", "a ", "an ")) else f"the {m['x']}"
        return [f"{x} should be {m['v']}"]
    m = _DONT_BUY_FROM.match(c)
    if m is not None:
        return [f"{m['x']} must not be ordered from {m['y']}", f"{m['x']} must not come from {m['y']}"]
    m = _ENOUGH_FOR.match(c)
    if m is not None:
        return [f"the {m['x']} must be enough for {m['n']} people"]
    m = _LEAVE_OUT.match(c)
    if m is not None:
        return [f"{m['x']} must have no {m['z']}"]
    m = _SPEND_ON.match(c)
    if m is not None:
        return [f"{m['x']} should cost no more than {m['n']}"]
    m = _RATED.match(c)
    if m is not None:
        return [f"the {m['x']} rating should be {m['r']}"]
    m = _AT_PLACE.match(c)
    if m is not None:
        return [f"the reservation should be at {m['y']}", f"the order should be from {m['y']}"]
    m = _KEEP.match(c)
    if m is not None:
        return [f"{m['s']} should cost {m['b']} {m['n']}"]
    m = _PUT_NOTE.match(c)
    if m is not None:
        return [f"add the note {m['x']} to {m['s']}"]
    m = re.match(rf"^(?:book|reserve) (?P<t>\S.*?) for (?P<n>{_NUM_WORDS})(?: {_PEOPLE_EN})?$", c)
    if m is not None:  # "book the restaurant for 8": the party
        return [f"{m['t']} should be reserved for {m['n']} {'person' if m['n'] in ('1', 'one') else 'people'}"]
    m = re.match(r"^(?:go with|go for|settle on|stick with) (?P<x>\S.*)$", c)
    if m is not None:
        wm = re.match(r"^(?P<x>\S.*?) (?P<p>at|from|for) (?P<y>\S.*)$", m["x"])
        split = [f"the item ordered {wm['p']} {wm['y']} should be {wm['x']}"] if wm else []  # "go with X at Y": X, where
        return [*split, f"should select {m['x']}", f"{m['x']} should be selected"]
    m = _IMPERATIVE_EN.match(c)
    if m is None:
        return []
    verb = {"get": "order", "grab": "order", "find": "choose"}.get(m["verb"], m["verb"])
    if verb not in _VERBS or _VERBS[verb][0] != verb:
        return []  # a base form only: "orders X" is no command
    neg = "does not " if m["neg"] else ""
    return agent_voice(f"the agent {neg}{verb}{m['rest']}", protected)


_PARTY_AT = re.compile(rf"^(?:just |only )?(?:(?:a |the )?(?:table|booking|reservation|seats?|spots?|room) )?for "
                       rf"(?P<n>{_NUM_WORDS})(?: {_PEOPLE_EN})? (?:at|in) (?P<t>(?:the |a |an )\S.*)$|"
                       rf"^(?:just |only )?(?P<t2>(?:the |a |an )?\S.*?) (?:table |booking |reservation )?for (?P<n2>{_NUM_WORDS}) {_PEOPLE_EN}$|"
                       rf"^(?:just |only )?(?P<n3>{_NUM_WORDS}) {_PEOPLE_EN} (?:for|at|in) (?P<t3>(?:the |a |an )\S.*)$")
_VALUE_AT = re.compile(r"^(?:just |only )?(?:a |an |the )?(?P<v>\S.*?) (?:at|from) (?P<t>(?:the |a |an )\S.*)$")


def _fragment_en(c: str) -> list[str]:
    m = _PARTY_AT.match(c)
    if m is not None:  # "table for 6 at the restaurant", "escape room for 2 people", "just 1 person for the flower shop"
        n, t = m["n"] or m["n2"] or m["n3"], m["t"] or m["t2"] or m["t3"]
        if not _ANY_VERB_EN.search(t):
            t = re.sub(r"^(?:the |a |an )", "", t)
            return [f"the {t} reservation should be for {n} people"]
    m = _VALUE_AT.match(c)
    if m is not None and not _ANY_VERB_EN.search(c):  # "a parent-child package at the workshop": what is ordered there
        t = re.sub(r"^(?:the |a |an )", "", m["t"])
        return [f"the product ordered at the {t} should be {m['v']}", f"the {t} order should include {m['v']}"]
    m = _FRAGMENT_EN.match(c)
    if m is None or _ANY_VERB_EN.search(m["v"]) or _ANY_VERB_EN.search(m["t"]):
        return []
    t, v = m["t"], m["v"]
    if m["neg"]:
        return [f"{t} should contain no {v}", f"{t} should not be {v}", f"{t} should be no {v}"]
    return [f"{t} should be {v}", f"{t} should include {v}"]


def _base_form(verb: str) -> str:
    """A present-tense verb's base form ("includes" -> "include", "has" -> "have")."""
    return _BASE_VERB.get(verb) or (verb[:-1] if verb.endswith("s") else verb)


def _plain_en(c: str) -> list[str]:
    if re.search(r"\b(?:should|must|has to|have to|shall|cannot|can't)\b|\bneeds? to\b", c):
        return []
    if re.search(r"\b(?:might|may|could|would|perhaps|maybe|likes?|prefers?|enjoys?)\b", c):
        return []  # "the user might want X", "the user prefers X": a guess or a taste, no demand
    m = re.match(r"^(?P<s>(?:the |a |an |my |his |her |their |[a-z]+'s )\S.*?) (?:needs|need|wants|want|requires|require) "
                 r"(?P<r>\S.*?)(?: in it| on it| with it| in them| on them)?$", c)
    if m is not None:  # "the salad needs cherry tomato in it": the salad includes it
        return [f"{m['s']} should include {m['r']}", f"{m['s']} should contain {m['r']}"]
    m = _ONLY_ACCEPTED.match(c)
    if m is not None:  # "only X are acceptable for Y": X chosen for Y
        return [f"should select {m['x']} for {m['y']}", f"{m['x']} should be selected for {m['y']}"]
    m = _EN_ALLOWED_IN.match(c)
    if m is not None:  # "no X are allowed in Y", "X is not permitted in Y": Y holds no X
        if bool(m["no"]) == bool(m["neg"]):
            return []  # "no X is not allowed": a double negation, the judge's
        return [f"{m['y']} should not contain {m['x']}", f"{m['y']} should not include {m['x']}"]
    m = _EN_PLAIN_COST.match(c)
    if m is not None:
        verb = {"costs": "cost", "costed": "cost", "comes to": "come to", "totals": "total", "adds up to": "add up to"}.get(m["v"], m["v"])
        return [f"{m['s']} should {verb} {m['r']}"]
    m = _EN_PLAIN_PASSIVE.match(c)
    if m is not None:
        neg = " not" if m["neg"] else ""
        return [f"{m['s']} should{neg} be {m['p']}{m['r']}"]
    return []


def _agent_voice_zh(c: str) -> list[str]:
    m = _AGENT_ZH.match(c)
    t = (m["lead"] or "") + c[m.end():] if m is not None else c
    t = _ZH_TOTAL_VERB.sub("", t)
    agent = t != c
    if _ZH_PERMISSION.search(t):
        return []  # "X可以从Y下单", "最好点Y": a permission or a preference, no demand (the judge's)
    if _ZH_MODAL_ANY.search(t):
        return [t] if agent else []  # "助手应为用户下单X": the demand without its agent
    clauses = re.split(r"(?<=[，,；;])", t)
    out: list[str] = []
    for k in (0, 1):  # the modal before the place the verb is done at ("应在X下单Y"), then right before the verb
        said = "".join(_zh_declared(x, agent)[k] for x in clauses)
        if said != c and said not in out:
            out.append(said)
    return out


def _zh_declared(clause: str, agent: bool) -> tuple[str, str]:
    """One clause of a report or plain statement with the modal before its first main verb ("X选了Y": "X应选择Y"); when
    the clause starts with the place or person the verb is done at or for, first with the modal before them ("在X下单了Y":
    "应在X下单Y"), then before the verb ("在晚饭订单中点了Y": "在晚饭订单中应点Y")."""
    for dm in _ZH_DECLARED.finditer(clause):
        v = dm["v"]
        if dm.start() == 0 and not (agent or v.startswith(("没有", "不含"))):
            continue  # a verb with nothing before it is no statement about a record
        if v.endswith("的是"):
            said = f"{clause[:dm.start()]}{v[:-1]}应为{clause[dm.end():]}"  # "点的是X": "点的应为X"
            return said, said
        again = "重新" if v.startswith("重新") else ""
        demand = _ZH_AS_DEMAND[v.removeprefix("重新")]
        demand = demand[:1] + again + demand[1:] if demand.startswith("应") else demand[:2] + again + demand[2:]
        head, tail = clause[:dm.start()], clause[dm.end():]
        before_verb = f"{head}{demand}{tail}"
        if re.match(r"^(?:在|从|向|于)", head) and "的" not in head and demand.startswith("应"):
            return f"应{head}{demand[1:]}{tail}", before_verb
        return before_verb, before_verb
    at = _ZH_DONE_AT.search(clause)  # "小吃订单在X下单": where it is ordered, said plainly
    if at is not None:
        said = f"{clause[:at.start()]}应{clause[at.start():]}"
        return said, said
    return clause, clause


# a plain statement of where something is ordered, in the present ("X在Y下单", "X从Y购买"): the place preposition after
# what is ordered, and the verb of ordering closing the clause
_ZH_DONE_AT = re.compile(r"(?<=[\u4e00-\u9fff])(?<![应需要须得将])(?:在|从)(?=[^，,；;]{2,60}?(?:下单|购买|订购|点餐|点单|订餐|买|点)[，,；;。]?$)")


_ZH_PERMISSION = re.compile(r"可以|最好|尽量|不妨|也可|或可")
_ZH_MODAL_ANY = re.compile(r"应|必须|需要|需|务必|不能|不得|不要|只能")
