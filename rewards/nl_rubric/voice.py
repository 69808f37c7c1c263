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

from .text import _is_zh

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
_SET_TO = re.compile(r"^\s*(?P<what>(?:the )?\S.*?) (?:to|as) (?P<value>\S.*)$")
_GO_TO = re.compile(r"^\s*(?:to )?(?P<place>\S.*)$")

# no modal: a verb of what a record costs, or a passive of choosing, said as a fact
_EN_PLAIN_COST = re.compile(r"^(?P<s>\S.*?) (?P<v>costs|cost|costed|comes to|totals|adds up to) (?P<r>\S.*)$")
_EN_PLAIN_PASSIVE = re.compile(r"^(?P<s>\S.*?) (?:is|are|was|were|has been|have been|gets|get|got) (?P<neg>not )?"
                               r"(?P<p>ordered|chosen|selected|picked|bought|purchased|booked|reserved|included|added|"
                               r"avoided|excluded|placed|made|prepared|served|delivered|set)\b(?P<r>.*)$")

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
    if _is_zh(c):
        return _agent_voice_zh(c)
    m = _AGENT_ACT.match(c)
    if m is None:
        return _plain_en(c)
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
    out.append(f"{lead}should{neg} {base} {rest}")
    spans = protected(rest) if protected is not None else []
    for sp in _SPLIT_PREPS.finditer(rest):
        if any(a < sp.start() + 1 < b for a, b in spans):
            continue  # inside a name ("Beef in Sour Soup")
        obj, tail = rest[:sp.start()].strip(), rest[sp.start():]
        if obj and not (base == "place" and not re.search(r"\border\b", obj)):
            out.append(f"{lead}{obj} should{neg} be {part}{tail}")
        break
    if base != "place":
        out.append(f"{lead}{rest} should{neg} be {part}")
    return out


def _plain_en(c: str) -> list[str]:
    if re.search(r"\b(?:should|must|need|needs|has to|have to|shall|cannot|can't)\b", c):
        return []
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
    return clause, clause


_ZH_MODAL_ANY = re.compile(r"应|必须|需要|需|务必|不能|不得|不要|只能")
