"""``compile_item``: one natural-language rubric item, English or Chinese, as a typed spec.

It returns the spec of one kind, an ``AllOf`` of several, or None when the item is none of the
kinds or cannot be read unambiguously: None means "not checkable by this compiler" (the LLM
judge's), never "false". It never raises, and every step is a bounded pattern or one pass, so the
parse stays linear in the text, up to the look-ups in the task's catalogue.

How an item is read
    0. a spec compiled elsewhere for exactly this text (``ItemContext.compiled``, a sidecar file)
       is returned as it is, time windows included; otherwise the text is read:
    1. in a task with travel places, a trip item (``trip``: a travel order's dates, departure or
       arrival clock, nights, stars, per-night price, a place's tag by its kind noun) is one; else
       a time window (``time.compile_time_item``) is one; an address item ("the delivery address
       should be X", "配送地址应为X") is read whole (``address``), since addresses hold commas;
    2. premise and conclusion (``clauses._THEN``): the text after the last "so / therefore / ; /
       所以 / 因此" is the requirement; every clause before it is reasoning (skipped: "the result is
       X", "it will rain tomorrow"), a process demand ("need to query ...", "需要查询...": a
       ``ProcessSpec``, ``process``), a requirement of its own (checked too where it reads alone and
       one record answers it with the conclusion; a money requirement, "spending should not exceed
       1.5 times the usual range", is what a money conclusion's bound is computed from and needs one),
       or a condition or a requirement that does not read, which leaves the item
       to the judge, unless the premise reports what a look-up found (``_RESOLVED``: "the result is
       yes", "after checking, there are ...", "查询结果为..."): then a condition or a preference before
       the conclusion ("check if there is X; if yes, reserve", "should prioritize X; if none, Y") is
       settled by it and skipped; the requirement itself may be a status (``status``) or a process demand;
    3. the requirement (``_requirement``): "when choosing X, select Y" is a demand about X; a note
       (``note``) or an address is read on the whole clause; else it splits at its modal into the
       subject (which record: ``about``, for the loader) and the predicate
       (``clauses._split_modal``); two predicates of that subject ("come with X and be not spicy", "必须不辣，
       并且不加葱", "既不能是X也不能是Y") are two requirements, each read so; an exclusive set ("nothing other than X", "只包含X":
       ``only._only_item``) is read first; a condition, or several records at once ("same", "each",
       "all orders", "per person", "分别", "人均"; not "a total of 2 items, both from <store>"), leaves it
       to the judge;
    4. a place said with where it lies as what is booked or ordered ("reserve a Halal restaurant within 1 km
       of X", "应在距离公司1公里以内的商家下单": ``_place_within``) is the place within that distance, and of
       the kind the words before its noun say; else
       the kind, by the first reader that fits: a superlative ("the closest", "the cheapest":
       ``best``), a rating, a distance (``place``), a product's
       length or a place's closing time (``duration``; "X can be used for 5 hours", with no modal, is
       read on the whole clause), a party size, a
       quantity (``quantity``), a price (``price``), a store (``place``), else a feature
       (``product``); a reader that recognises its kind but cannot read the item raises ``_Unclear``
       (the judge's);
    5. the parts, each once: one part is the spec; several are an ``AllOf`` when they are about one
       kind of record (``spec.spec_target``), else the judge's. An item of requirements joined by
       semicolons ("Must query the history; the store must be X") is all of them when every piece
       compiles and none is a time.

``compiled_count`` and ``nl_coverage`` count what a task's rubric checks by code.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .address import _address_item
from .best import _best_item
from .clauses import (
    _IF,
    _PLACE_HEADS,
    _PLACE_THAT,
    _PLAIN_PLACE,
    _THEN,
    _ZH_MODAL,
    _cut_purpose,
    _drop_reason,
    _has_modal,
    _split_modal,
    passive_choice,
)
from .days import _days_item
from .duration import _duration_item, _hours_item, _usable_item
from .facts import _place_fact_item
from .feature import FeatureSpec
from .joint import JointSpec, _joint_item
from .note import _note_item
from .only import _only_item
from .place import _distance_item, _rating_item, _store_item
from .place_kind import _place_kind_item
from .price import _AND_TOTAL, PriceSpec, _price_item
from .process import _process_demand
from .product import _feature_item
from .quantity import _count_item, _people_item
from .spec import AllOf, parse_spec, spec_parts, spec_target
from .status import _status_item
from .text import MAX_ITEM_CHARS, _is_zh, _knorm, _Unclear
from .time import TimeWindow, compile_time_item
from .trip import _trip_item
from .values import BOOK_AT_EN
from .voice import agent_voice, is_question
from .world import ItemContext, _found, _places_named, _Spec


def compiled_count(rubric: Any) -> int:
    """How many natural-language items a task's rubric checks by code: the distinct ``nl_index``
    of its ``nl_<kind>`` items (every kind counts)."""
    return len({(item.params or {}).get("nl_index") for item in rubric
                if item.kind.startswith("nl_") and "nl_index" in (item.params or {})})


def nl_coverage(n_compiled: int, n_items: int) -> float:
    """The share of natural-language rubric items checked by code (1.0 when there are none)."""
    return n_compiled / n_items if n_items else 1.0


def compile_item(text: str, context: ItemContext | datetime) -> Any | None:
    """One natural-language rubric item as a typed spec (``ItemSpec``: a ``TimeWindow``, an
    ``AddressSpec``, ..., or an ``AllOf`` of several), or None when it is none of the kinds, or
    not unambiguous (a value it names is not in the task's world, a part of it is left over, it
    is conditional): None means "for the judge", never "false". ``context`` is the task's
    ``ItemContext`` (a bare datetime: now, with no world: only time and world-free kinds compile);
    a spec its ``compiled`` holds for this text is returned first, as it is.

    Never raises; linear in ``len(text)`` up to the catalogue look-ups."""
    ctx = context if isinstance(context, ItemContext) else ItemContext(now=context)
    if isinstance(text, str) and text in ctx.compiled:
        return ctx.compiled[text]
    memo: dict[str, Any] = ctx.__dict__.setdefault("_memo", {})
    if isinstance(text, str) and text in memo:
        return memo[text]
    try:
        spec = _compile_item(text, ctx)
        if spec is None:
            spec = _compile_pieces(text, ctx)
        if spec is None:
            spec = _compile_after_fact(text, ctx)
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


# a fact stated before the requirement, with no "so" between them ("The weather on 2025-11-07 will be overcast,
# Body Shaping class should be ordered"): a clause with a verb of being and no modal, condition or lead-in
_FACT_FIRST = re.compile(r"^(?!(?:when|while|for|as for|regarding|upon|if|unless|since|because|as|given|after|before|once|"
                         r"in case|whether)\b)(?P<fact>[^,;]{6,}?\b(?:will be|is|are|was|were|has|have|had)\b[^,;]*),\s*"
                         r"(?P<rest>[^,;]+)$")


def _compile_after_fact(text: str, ctx: ItemContext) -> Any | None:
    """The requirement after a stated fact (``_FACT_FIRST``), when the fact holds no modal or condition and
    the requirement compiles alone; None otherwise."""
    if not isinstance(text, str) or len(text) > MAX_ITEM_CHARS:
        return None
    m = _FACT_FIRST.match(_knorm(text))
    if m is None or _has_modal(m.group("fact")) or _IF.search(m.group("fact")) or not _has_modal(m.group("rest")):
        return None
    spec = _compile_item(m.group("rest"), ctx)
    return None if isinstance(spec, TimeWindow) else spec


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
    t = _knorm(text)
    try:
        trip = _trip_item(t, ctx)  # a travel order's dates and clocks, before the time windows read them
    except _Unclear:
        return None
    if trip is not None:
        return _joined(trip if isinstance(trip, list) else [trip])
    window = compile_time_item(text, ctx.now)
    if window is not None:
        # "X should be from Y and arrive before 13:00": a time window checks the time only, so an item that also asks
        # for something else is the judge's (the window alone would pass what the rest forbids)
        return None if _beside_time(t, ctx) or _CANCEL_TOO.search(t) else window
    try:
        address = _address_item(t, "", ctx)  # an address holds commas and dots: it is read whole
        if address is not None:
            return address
        t = _REPORT_THEN.sub(r", as \g<r>; ", t)  # "..., and as there is one available, X should be Y": a report, then
        cuts = [m for m in _THEN.finditer(t) if m.end() < len(t)]
        try:
            return _reasoned(t, cuts[-1] if cuts else None, ctx)
        except _Unclear:
            # "The result is yes, therefore X should be Y. The distance from X to Z should be ...": where the last
            # cut is a sentence of the conclusion, the conclusion starts at the first cut after the reported result
            res = _RESOLVED.search(t)
            after = [m for m in cuts[:-1] if res is not None and m.start() >= res.end()]
            if not after:
                raise
            return _reasoned(t, after[0], ctx)
    except _Unclear:
        return None


def _reasoned(t: str, cut: Any, ctx: ItemContext) -> Any | None:
    """The parts of an item that reasons to its requirement, cut at ``cut`` (a ``_THEN`` match, or None: no
    reasoning): the look-ups its premise demands, and the conclusion's requirement(s). Raises ``_Unclear``."""
    premise, conclusion = (t[:cut.start()], t[cut.end():]) if cut is not None else ("", t)
    parts: list[Any] = []
    derived = False  # a money requirement of the premise the conclusion's bound is computed from
    premise_money: list[Any] = []  # those of them that read alone
    clauses = [x.strip(" .") for x in re.split(r"[,，;；。]|\.\s", premise) if x.strip(" .")]
    resolved = any(_RESOLVED.search(x) for x in clauses)
    for clause in clauses:
        if _RESOLVED.search(clause) and not _has_modal(clause):
            continue  # the reported result: reasoning
        demand = _process_demand(clause, ctx) if resolved else None
        if demand is not None:
            parts.append(demand)
            continue
        if resolved and (_IF.search(clause) or re.search(r"\bif\b|如果|若", clause) or _PREFER.search(clause)
                         or _LOOKUP.search(clause)):
            continue  # a condition, a preference, or the look-up itself, which the reported result settles
        if _IF.search(clause):
            raise _Unclear  # a condition the item leaves to the reader
        demand = _process_demand(clause, ctx)
        if demand is not None:
            parts.append(demand)
        elif _has_modal(clause):
            # a requirement of its own in the reasoning ("the total of both should be within 300 yuan. ...
            # Therefore the package should be at most 128 yuan"): checked too where it reads alone; a money
            # requirement ("spending should not exceed 1.5 times the usual range") is what the conclusion's
            # bound is computed from, which then must be a money bound, and is checked beside it only where one
            # record answers both; any other requirement that does not read is the judge's
            read = _premise_requirement(clause, ctx)
            if _MONEY_WORDS.search(clause):
                derived = True
                premise_money += read
            elif read:
                parts += read
            else:
                raise _Unclear
    if is_question(conclusion):  # "was the order cancelled?": the demand it checks, or the judge's
        return _joined(parts + _said_otherwise(conclusion, ctx))
    try:
        status = _status_item(conclusion, ctx)
    except _Unclear:  # "the agent cancelled the X order": the demand said by what the agent does, or the judge's
        return _joined(parts + _said_otherwise(conclusion, ctx))
    demand = _process_demand(conclusion, ctx) if status is None else None
    if status is not None:
        parts.append(status)
    elif demand is not None:
        if re.search(r"\b(?:and|then)\b (?:select|choose|order|book|reserve|make|place)|并|然后", conclusion):
            raise _Unclear
        parts.append(demand)
    else:
        parts += _conclusion(conclusion, ctx)
    if derived and not any(isinstance(x, (PriceSpec, JointSpec)) for x in parts):
        raise _Unclear
    if premise_money and parts:  # checked beside the conclusion where one record answers both
        joined = _joined(parts + premise_money)
        if joined is not None:
            return joined
    return _joined(parts) if parts else None


_MONEY_WORDS = re.compile(r"\b(?:yuan|rmb|budget|spend(?:ing)?|expen(?:se|diture)s?|costs?|prices?|consumption)\b|"
                          r"元|预算|消费|花费|价格|费用")
_PREMISE_LEAD = re.compile(r"^(?:and|but|also|while|whereas|so|thus|hence)\s+|^(?:且|并且|而且|但是|但|同时|所以|因此)")


def _premise_requirement(clause: str, ctx: ItemContext) -> list[Any]:
    """A requirement stated in a reasoned item's premise, read alone ([] when it does not read)."""
    try:
        return _requirement_or_reasoned(_PREMISE_LEAD.sub("", clause), ctx)
    except _Unclear:
        return []


# where a conclusion joins a second requirement with its own subject and modal: "so a car wash shop should be
# ordered, and the car wash shop should be within 1000m of X", "，且商家应支持堂食"
_SECOND_REQUIREMENT_EN = re.compile(r",\s*(?:and\s+)?(?=(?:the|it|its|this|that|each|all)\b[^,]*?\b(?:should|must|needs? to|"
                                    r"has to)\b)|;\s*|\.\s+")
_SECOND_REQUIREMENT_ZH = re.compile(r"[；;]|[，,](?:且|并且|并|同时|而且)(?=[^，,；;]{0,12}?(?:应|必须|需要|需))")


def _conclusion(c: str, ctx: ItemContext) -> list[Any]:
    """The requirement a reasoned item concludes with; where it is two, each with its own subject and modal,
    both (each must read)."""
    try:
        return _requirement_or_reasoned(c, ctx)
    except _Unclear:
        pieces = [x.strip(" ,，") for x in (_SECOND_REQUIREMENT_ZH if _is_zh(c) else _SECOND_REQUIREMENT_EN).split(c)
                  if x.strip(" ,，.")]
        if len(pieces) < 2 or not all(_has_modal(x) for x in pieces):
            raise
        return [p for x in pieces for p in _requirement_or_reasoned(x, ctx)]


# a premise that reports what a look-up found ("the result is yes", "after checking, there are ...", "查询结果为有"):
# the conditions and preferences before it ("if yes, reserve", "should prioritize X; if none, Y") are settled by it
_RESOLVED = re.compile(r"\b(?:the (?:query |search |check )?results? (?:is|are|was|were|shows?|exists?)|(?:after|upon) (?:checking|"
                       r"inquiry|querying|searching|the query|the search|the check)|(?:as|since) (?:there (?:are|is) "
                       r"(?:results?|one|some)|results? exists?)|results? (?:exist|found)|it (?:is|was) found|(?:which|it|and it) (?:is|was) "
                       r"(?:available|in stock|on (?:the )?(?:menu|sale))|(?:which|it) exists)\b"
                       r"|查询结果|搜索结果|经查询|经查|查询后|结果(?:为|是)")
# a look-up's result said as the reason of what follows, with no "so": the requirement after it is the conclusion
_REPORT_THEN = re.compile(r",?\s*(?:and\s+)?(?:as|since)\s+(?P<r>there (?:is|are) (?:one|some|results?|such \w+)(?: available)?|"
                          r"(?:it|one) is available)\s*,\s*")
# a look-up demanded ("the shop should be checked for X", "查询是否有X"): the reported result says what it found
_LOOKUP = re.compile(r"\b(?:be )?(?:check(?:ed)?|search(?:ed)?|quer(?:y|ied)|look(?:ed)? up|inquire[d]?|verif(?:y|ied))\b|查询|查看|搜索|确认")
_PREFER = re.compile(r"\b(?:prioriti[sz]e|priority|preferabl[ey]|prefer(?:red|ably)?|first choice)\b|优先")


def _requirement_or_reasoned(c: str, ctx: ItemContext) -> list[Any]:
    """The requirement; else, when a reason stands before it ("since there is no X, the price should
    be ..."), the requirement without the reason."""
    if is_question(c):  # "was X selected for Y?": the demand it checks, or the judge's; never the question's copula
        return _said_otherwise(c, ctx)
    try:
        return _requirement(c, ctx)
    except _Unclear:
        try:
            return _said_otherwise(c, ctx)  # "the agent orders X for Y", "the order costs Z", "store: X": the demand
        except _Unclear:
            pass
        bare = _drop_reason(c)
        if bare == c:
            # a reason with a modal of its own ("since they don't want to spend more than 80 each, the
            # item should cost at most 160"): the requirement is the clause after the reason's comma
            m = _LEAD_REASON.match(c)
            if m is None or not _has_modal(c[m.end():]):
                raise
            bare = c[m.end():]
        return _requirement(bare, ctx)


# where a time item may join a second demand: "..., and the tea should have X", "... from Y and arrive before T",
# "，且应选择X", "并选择X"
_AND_DEMAND_EN = re.compile(r"\s*;\s*|,\s*(?:and\s+)?(?=(?:the|it|its|this|that|each|all)\b[^,]*?\b(?:should|must|needs? to|has to)\b)|"
                            r"\s+and\s+(?=(?:should|must|needs? to|has to|be|come|comes|include|includes|contain|contains|"
                            r"select|choose|have|has|use|offer|order|avoid|arrive|arrives|reach|get delivered|be delivered|"
                            r"delivered)\b)")
_AND_DEMAND_ZH = re.compile(r"[；;]|[，,](?:且|并且|并|同时|而且|还)?|(?<=[\u4e00-\u9fff])(?:且|并且|并)(?=应|必须|需|要|选择|包含|含有|具有)")
_DEMAND_START_EN = re.compile(r"^(?:should|must|needs? to|has to|be|come|comes|include|includes|contain|contains|select|choose|"
                              r"have|has|use|offer|order|avoid)\b")
_DEMAND_START_ZH = re.compile(r"^(?:应|必须|需|要|选择|包含|含有|具有|使用|来自|避免)")


def _beside_time(t: str, ctx: ItemContext) -> bool:
    """Whether an item asks for something beside its time (a purpose, a reason, a relative clause or another time is
    no demand): a clause with a modal of its own, or a verb of choosing or holding joined to the time's clause."""
    zh = _is_zh(t)
    pieces = [x.strip(" ,，") for x in (_AND_DEMAND_ZH if zh else _AND_DEMAND_EN).split(t) if x and x.strip(" ,，")]
    if len(pieces) < 2:
        return False
    for piece in pieces:
        if compile_time_item(piece, ctx.now) is not None or _TIME_WORDS.search(piece):
            continue
        bare = _cut_purpose(piece)
        if _IF.search(bare) or re.search(r"\b(?:if|otherwise|unless|else)\b|如果|否则|若|要是", bare) or _LOOKUP.search(bare) \
                or _RESOLVED.search(bare):
            continue  # a condition, a look-up or what it found: the reasoning the time reader settles, as for any item
        if bare and (_has_modal(bare) or (_DEMAND_START_ZH if zh else _DEMAND_START_EN).match(bare)):
            return True
    return False


_TIME_WORDS = re.compile(r"\b(?:deliver(?:ed|y)?|arriv(?:e|al|es|ed)|estimated|expected|scheduled|time|o'clock|am|pm|noon|"
                         r"morning|evening|afternoon|tonight)\b|送达|到达|配送|送到|时间|点前|点后|之前|之后|左右")


def _said_otherwise(c: str, ctx: ItemContext) -> list[Any]:
    """The first of ``agent_voice``'s rewrites of ``c`` that reads, as a status or a requirement."""
    for alt in agent_voice(c, _catalogue_spans(ctx)):
        window = compile_time_item(alt, ctx.now)  # "book X for 8 pm on March 16": a time, read as the time items are
        if window is not None:
            if _beside_time(alt, ctx):
                raise _Unclear
            return [window]
        try:
            status = _status_item(alt, ctx)
            return [status] if status is not None else _requirement(alt, ctx)
        except _Unclear:
            continue
    raise _Unclear


def _catalogue_spans(ctx: ItemContext) -> Callable[[str], list[tuple[int, int]]]:
    """Where the task's catalogue names that hold a preposition ("Beef in Sour Soup") stand in a text."""
    memo: dict[str, Any] = ctx.__dict__.setdefault("_memo", {})
    names = memo.get("\0prep_names")
    if names is None:
        names = memo["\0prep_names"] = sorted({n for n in (unicodedata.normalize("NFKC", x.name).casefold()
                                                           for x in (*ctx.products, *ctx.places))
                                                if re.search(r" (?:for|in|from|at|with) ", n)})

    def spans(text: str) -> list[tuple[int, int]]:
        return [(i, i + len(n)) for n in names for i in [text.find(n)] if i >= 0]
    return spans


_LEAD_REASON = re.compile(r"^(?:since|because|given(?: that)?|considering(?: that)?|based on|according to|due to|as|with|"
                          r"to (?:meet|satisfy|suit|accommodate|ensure)|in order to)\b"
                          r"[^,，;；]*[,，]\s*|^(?:由于|因为|鉴于|既然|为了|考虑到)[^,，;；]*[,，]")


# ----- the requirement: subject, modal, predicate -------------------------------------------------
_IMPERATIVE = re.compile(r"^(?:select|choose|pick|opt for) ")
# a time item that also asks for a cancellation ("cancelled and rebooked at 13:00"): two records, the judge's
_CANCEL_TOO = re.compile(r"\b(?:be )?cancel(?:l?ed)? and (?:then )?(?:re-?)?(?:book|order|reserv|schedul|place|made|ma[dk]e)|"
                         r"取消(?:后|并|再|然后)(?:重新)?(?:预订|预约|下单|订)")
# a preference said as such: no demand the record must meet
_SOFT = re.compile(r"\b(?:ideally|preferably|optionally|if possible|where possible|when possible|if available|"
                   r"perhaps|maybe)\b|尽可能|如有可能|如果可能")
# bought "at" a price, a discount or a deal, not at a place
_BOUGHT_AT_PRICE = re.compile(r"\bbe (?:purchased|bought|ordered|booked|reserved|paid for|sold|offered) "
                              r"(?=at (?:the |an? )?(?:[a-z'-]+ ){0,4}(?:price|discount|rate|deal|offer|promotion)s?\b)")
# a command's place described, not named ("choose the course at the healing shop"): which record, as "for" says
_COMMAND_AT = re.compile(r"^(?P<v>select|choose|pick|opt for|order|buy|purchase) (?P<x>\S.*?) (?:at|from) "
                         r"(?P<p>(?:the|a|an|any) \S.*|(?:restaurants|stores|shops|merchants|vendors|places)\b.*)$")
# a command's value and the record it is for ("choose X for the drinks", "order X for my daughter")
_COMMAND_FOR = re.compile(r"^(?P<v>select|choose|pick|opt for|order|buy|purchase) (?P<x>\S.*?) for "
                          r"(?P<r>(?:the|my|his|her|their|our|your) \S.*)$")
# a visit or an order said by where it is made ("make a reservation at the pet store", "book at X", "place an order at X")
_BOOK_AT = re.compile(rf"^{BOOK_AT_EN}(?P<p>\S.*)$")
# a demand said as a command, with no modal: "Place a new order for X at Y", "Avoid X", "重新在X下单Y", "避免Y"
_COMMAND = re.compile(r"^(?:please )?(?:(?P<avoid>avoid) |(?:select|choose|pick|opt for|order|buy|purchase|reorder|re-order|"
                      r"place (?:a |an )?(?:new )?order) )|^(?:请)?(?:(?P<zavoid>避免|避开)|选择|(?:重新)?(?:在|从).{2,}?(?:下单|购买|订购))")


def _requirement(c: str, ctx: ItemContext) -> list[Any]:
    """The parts of one requirement, each with the words of what it is ``about``."""
    about = ""
    m = re.match(r"^(?:when|while|for|as for|regarding|upon)\s+(.+?),\s*(.+)$", c) or \
        re.match(r"^(?:为|给|在)?(.+?时)(?![长间段刻])[，,]?(.+)$", c)
    if m and not _is_zh(c) or m and _ZH_MODAL.search(m.group(2)) and not _ZH_MODAL.search(m.group(1)):
        about, c = m.group(1), m.group(2)
    if _is_zh(c) and _BOTH_ZH.search(c) and "也" in c:  # "既要X也要Y", "既不能X也不能Y": two demands, each with its modal
        c = re.sub(r"既(?:要|需要|需|应该|应当|应|必须)", "应", c)
        c = re.sub(r"既(?=不能|不要|不可|不应)", "", c)
        c = re.sub(r"[，,]?也(?:要|需要|需|应该|应当|应|必须)", "，也应", c)
        c = re.sub(r"[，,]?也(?=不能|不要|不可|不应)", "，也", c)
    if not _is_zh(c):  # "should be purchased at the new customer price": the price it is bought at, not a place
        c = _BOUGHT_AT_PRICE.sub("be ", c)
        c = re.sub(r"\s+(?:again|once again|once more)(?=[.;]?$)", "", c)  # "re-ordered from X again": from X
    inverted = _VALUE_FIRST.match(c) if not _is_zh(c) else None
    if inverted is not None:  # "hot should be the temperature of the flat white": the flat white's temperature is hot
        c = f"the {inverted['a']} of {inverted['x']} {inverted['m']} be {inverted['v']}"
    for parser in (_address_item, _note_item, _usable_item):
        spec = parser(c, about, ctx)
        if spec is not None:
            return [spec]
    command = _COMMAND.match(c) if (about and _COMMAND.match(c)) or not _has_modal(c) else None
    if about and _IMPERATIVE.match(c):  # "when choosing the latte, select a hot one": the clause is the demand
        subject, neg, pred = "", False, c
    elif command is not None:  # "avoid X and select another shop": the command is the demand
        avoid = command.group("avoid") or command.group("zavoid")
        subject, neg, pred = "", bool(avoid), (("选择" if command.group("zavoid") else "select ") + c[command.end():]
                                              if avoid else c)
        wm = _COMMAND_AT.match(pred)
        if wm is not None and not (_places_named(wm["p"], ctx, chain=False) or _places_named(wm["p"], ctx, chain=True)):
            pm = _PLACE_THAT.match(wm["p"])
            if pm is not None:  # "select X from a merchant that offers dine-in": what X's merchant offers
                subject, pred = f"{wm['x']} merchant", "offer " + (pm.group("f") or pm.group("g"))
            elif _PLAIN_PLACE.match(wm["p"]):
                about, pred = f"{about} {wm['p']}".strip(), f"{wm['v']} {wm['x']}"  # "choose X at the healing shop": where
            else:
                raise _Unclear  # "order X from a merchant rated 4.5 or above": a demand on the place, the judge's
    else:
        said = _split_modal(c)
        subject, neg, pred = passive_choice(*said, named=lambda t: bool(
            _places_named(t, ctx, chain=False) or _places_named(t, ctx, chain=True)), spelled=lambda t: _found(t, ctx, "product"))
        if subject != said[0]:  # the value said as the subject still tells which record the item is about
            about = f"{about} {said[0]}".strip()
        qm = _NONE_OF.match(subject) if not _is_zh(subject) else None
        if qm is not None and not (_found(subject, ctx, "option") or _found(subject, ctx, "product")):
            neg, subject = not neg, qm.group("x")  # "no milk tea in the order should contain X": none should
        if not re.search(r"\b(?:orders?|bookings?|reservations?|visits?|appointments?)\b|订单|预约|预订", subject):
            subject = re.sub(r"^each (?=[a-z])", "every ", subject)  # "each drink should be hot": every drink (not per order)
            if not re.search(r"价|钱|费|数|量|总", subject):  # ("每份X的价格": a unit price, the price reader's)
                subject = re.sub(r"^每(?:一)?(?:杯|份|个|款|件|碗|盒|种)(?=.)", "所有", subject)  # "每杯饮品都应是热饮": 所有饮品
    about = f"{about} {subject}".strip()
    fm = _COMMAND_FOR.match(pred) if not subject else None
    if fm is not None:  # "(do not) choose X for the drinks": X, for the record the drinks name
        about, pred = f"{about} {fm['r']}".strip(), f"{fm['v']} {fm['x']}"
    at = _BOOK_AT.match(pred) if not about else None
    if at is not None:  # "(should) make a reservation at the pet store": the place names the record it is about
        about = at.group("p")
    if _IF.search(subject) or re.search(r"\b(?:if|unless|otherwise)\b|如果|否则|若", pred):
        raise _Unclear
    if _SOFT.search(f"{subject} {pred}"):
        raise _Unclear  # "ideally X should be ordered", "尽可能选X": a preference, no demand (the judge's)
    if not neg:  # "应为X，不能是其他店", "X rather than any other venue": only restates X (after a negation it would not)
        pred = _NOT_OTHERS.sub("", pred) or pred
    nm = _NEITHER.match(pred) if not neg and not _is_zh(pred) else None
    if nm is not None:  # "should be neither chilled nor warm": should not be chilled or warm
        neg, pred = True, f"{nm['v'] or ''}{nm['x']} or {nm['y']}"
    texts = _two_demands(subject, neg, pred)
    if texts:  # "X should come with sweet bean sauce and be not spicy", "鸡汤饭必须不辣，并且不加葱": each on its own
        return [p for x in texts for p in _requirement(x, ctx)]
    only = _only_item(subject, neg, pred, ctx)  # "nothing other than X", "只包含X": an exclusive set, one record
    if only is not None:
        return [_with_about(only, about)]
    joint = _joint_item(subject, neg, pred, ctx)  # "X and Y from the same store", "the total cost of A and B orders"
    if joint is not None:
        return [_with_about(joint, about)]
    fact = _place_fact_item(subject, neg, pred, ctx)  # "in business for 3 years or more", "average cost per person"
    if fact is not None:
        return [_with_about(fact, about)]
    pred = _ONE_EACH.sub("", pred)  # "a total of 2 portions, one each for the wife and daughter": who they are for
    several = _SAME_ITEMS.sub(" ", f"{subject} {pred}")  # "2 servings of the same drink": one product, counted
    several = _PRICE_PER_UNIT.sub("unit price", several)  # "the price per package": a unit price, not a share
    if _AND_TOTAL.search(pred):  # "100-150 yuan per person, with a total price between 200 and 300 yuan": the total
        several = re.sub(r"\b(?:average|per person|per head)\b", " ", several)
    if re.search(r"\b(?:same|together|combined|respectively|each|per person|per|apiece|average|"
                 r"(?<!include )(?<!includes )(?<!contain )(?<!contains )(?<!have )(?<!has )both(?! (?:of them )?(?:from|at) )|other than|except|"
                 r"besides|apart from|excluding)\b|相同|同样|同一|同时(?!包含|包括|含有|具有|有|含|点|选|要)|各|分别|每|人均|平均|除了|除",
                 several):
        raise _Unclear  # about several records at once, or per head
    near = _place_within(subject, pred, ctx)  # "should reserve a (Halal) restaurant within 1 km of X"
    if near is not None:
        return [_with_about(p, about) for p in near]
    for parser in (_best_item, _rating_item, _distance_item, _duration_item, _days_item, _hours_item, _people_item, _count_item, _price_item, _store_item, _place_kind_item,
                   _feature_item):
        spec = parser(subject, neg, pred, ctx)
        if spec is not None:
            parts = spec if isinstance(spec, list) else [spec]
            if _COUNT_OF.match(subject):  # "two of the milk teas should be dairy-free": some lines, not every line
                if neg or not all(isinstance(p, FeatureSpec) and p.scope == "product" for p in parts):
                    raise _Unclear  # ("two of the teas should not be X": some are not, which no spec says)
                parts = [p.model_copy(update={"some": True}) for p in parts]  # (weaker: one such line)
            elif not neg and (_SOME_OF.match(subject) or _SOME_OF_ZH.search(subject)):  # "at least one juice ...": one line
                parts = [p.model_copy(update={"some": True}) if isinstance(p, FeatureSpec) and p.scope == "product"
                         else p for p in parts]
            return [_with_about(p, about) for p in parts]
    raise _Unclear


def _two_demands(subject: str, neg: bool, pred: str) -> list[str]:
    """The requirements of one subject with two predicates ("come with X and be not spicy", "必须不辣，并且不加葱",
    "既不能是X也不能是Y"), each as a requirement of its own (the second keeps its modal, or takes the first's); a
    purpose after "and" ("and be suitable for X") is dropped; [] when the predicate is one."""
    who = subject.strip()
    if not who:
        return []
    if _is_zh(pred):
        zs = _ZH_SECOND.search(pred)
        if zs is None or zs.start() == 0:
            return []
        first, rest = pred[:zs.start()], pred[zs.end():]
        modal = "不应" if neg else "应"
        return [f"{who}{modal}{first}", f"{who}{rest}" if _ZH_MODAL.match(rest) else f"{who}{modal}{rest}"]
    cut = _cut_purpose(pred)
    second = _SECOND_PREDICATE.search(cut)
    if second is None:
        return []
    first, rest = cut[:second.start()], cut[second.end():]
    modal = "should not" if neg else "should"
    if _SUITED_FOR.match(rest) and not neg:
        return [f"{subject} {modal} {first}"]
    return [f"{subject} {modal} {x}" for x in (first, rest)]


# a subject that says one of the goods ("at least one juice", "one of the noodle items"): one line is enough
_SOME_OF = re.compile(r"^(?:at least one|one of (?:the|its|their|these)|any one of (?:the|its)|one) (?=[a-z])")
# a subject that says some of the goods by their number ("two of the milk teas", "at least 3 of the dishes")
_COUNT_OF = re.compile(r"^(?:at least |only |exactly )?(?:two|three|four|five|six|seven|eight|nine|ten|\d+) of "
                       r"(?:the|its|their|these|those) (?=[a-z])")
_SOME_OF_ZH = re.compile(r"(?:至少有?|其中(?:有)?)(?:一|1)(?:杯|份|个|款|件|种|碗|盒)")
# a subject that says none of the goods ("no milk tea in the order", "none of the drinks"): not "No Ice", an option
_NONE_OF = re.compile(r"^(?:no\s+|none of\s+(?:the |its |their |these )?)(?P<x>[a-z].*)$")
_NOT_OTHERS = re.compile(r"[，,](?:且|并且)?(?:不能|不要|不可|不应|不得|而不是|而非)(?:是|选|选择|为|去|在)?(?:其他|其它|别的|另外的)"
                         r"[^，,。；;]{0,8}$|,?\s+(?:and )?(?:not|rather than|instead of) (?:any |the )?other [a-z' -]{1,30}$")
_BOTH_ZH = re.compile(r"既(?=要|需|应|必须|不能|不要|不可|不应)")
_ZH_SECOND = re.compile(r"[，,]?(?:也|并且|而且|同时|且|并)(?=不能|不要|不可|不应|不得|应|需|要|必须|选|是|为|不加|不放|加|去|少)")
_NEITHER = re.compile(r"^(?P<v>(?:be|contain|include|have|use|come with) )?neither (?P<x>[^,;]+?) nor (?P<y>[^,;]+)$")
# an option's value said first: "hot should be the temperature of the flat white", "no ice must be the ice level for X"
_VALUE_FIRST = re.compile(r"^(?P<v>[^,;]{1,40}?) (?P<m>should|must|needs? to|has to) be the (?P<a>temperature|sweetness(?: level)?|"
                          r"sugar level|ice level|spice level|spiciness|(?:cup )?size|flavou?r|option|specification|"
                          r"portion(?: size)?|brand|merchant|store|shop|vendor|restaurant) (?:of|for) (?P<x>.+)$")
# a second predicate of the same subject: "come with X and be not spicy", "be hot and have no sugar"
_SUITED_FOR = re.compile(r"^be (?:suitable|appropriate|good|ideal|fit|great|perfect) for\b")
_SECOND_PREDICATE = re.compile(r",?\s+and\s+(?:also\s+)?(?=(?:be|not be|have|has|come|contain|include|use|offer)\s)")
# a place said with where it lies, as what is booked or ordered: "(should) reserve a Halal restaurant within 1 km of
# X", "the reservation should be made at a restaurant within 1 km (inclusive) of X", "a restaurant within 1 km of X
# should be reserved"
_PLACE_WITHIN = re.compile(r"\b(?:a|an|one)\s+(?P<x>(?:[a-z'-]+\s+){0,4}?(?P<n>[a-z'-]+))\s+(?P<r>(?:located\s+)?within\s+.+)$")
_BOOKED_BY = re.compile(r"^(?:(?:the\s+)?(?:reservation|booking|order|appointment|visit)\s+)?(?:be\s+)?(?:made\s+|placed\s+)?"
                        r"(?:at|for|with|from|in)?\s*$|^(?:reserve|book|order\s+(?:from|at)|choose|select|pick|visit|go\s+to|"
                        r"make\s+(?:a\s+)?(?:reservation|booking|appointment)\s+at|place\s+(?:an\s+)?order\s+(?:at|with))\s*$")
_PLACE_WITHIN_ZH = re.compile(r"^(?:选择|选|预订|预定|预约|去|在|到)(?P<r>(?:距离?|离)[^，,。]+?(?:以内|之内|内|范围内))的"
                              r"(?P<x>[^，,。的]{0,12}?)(?P<n>店|商家|餐厅|门店|店铺|餐馆|商户|饭店)(?:下单|预订|预定|预约|消费|购买)?$")
_BOOKED_PASSIVE = re.compile(r"^be\s+(?:reserved|booked|ordered(?:\s+from)?|chosen|selected|visited)$")


def _place_within(subject: str, pred: str, ctx: ItemContext) -> list[Any] | None:
    """A place said with where it lies, as what is booked or ordered (``_PLACE_WITHIN``): the place within that
    distance, and of that kind where words before its noun say one ("Halal"); None when the item is not one."""
    if _is_zh(subject + pred):
        zm = _PLACE_WITHIN_ZH.match(pred.strip())
        if zm is None:
            return None
        distance = _distance_item("商家", False, zm.group("r"), ctx)
        if distance is None:
            raise _Unclear
        return [*(_requirement(f"商家应为{zm.group('x')}{zm.group('n')}", ctx) if zm.group("x") else []), distance]
    m = _PLACE_WITHIN.search(f"{subject} {pred}".strip())
    if m is None or not _PLACE_HEADS.match(m.group("n")):
        return None
    rest = f"{subject} {pred}".strip()[:m.start()].strip()
    passive = m.start() == 0 and subject.strip() and _BOOKED_PASSIVE.match(pred.strip()) is not None
    if passive:  # "a restaurant within 1 km of X should be reserved": the place is the subject
        m = _PLACE_WITHIN.search(subject.strip())
        if m is None or m.start() != 0:
            return None
    elif not _BOOKED_BY.match(rest):
        return None
    noun = m.group("n")
    distance = _distance_item(f"the {noun}", False, "be " + m.group("r"), ctx)
    if distance is None:
        raise _Unclear
    kind = m.group("x")[:-len(noun)].strip()
    if not kind:
        return [distance]
    said = _requirement(f"the {noun} should be {'an' if kind[0] in 'aeiou' else 'a'} {m.group('x')}", ctx)
    return [*said, distance]


# a price per piece of goods ("the price per foot massage package"): the unit price
_PRICE_PER_UNIT = re.compile(r"\b(?:price|cost) per (?:[a-z-]+ ){0,4}?(?:package|item|set|unit|ticket|voucher|product|portion|"
                             r"serving|meal|dish|cup|bottle|piece|box|course|class|session)s?\b"
                             r"|每(?:份|个|件|杯|盒|张|套)(?=[^，,]{1,30}?(?:的)?(?:价格|售价|价钱))")
# after a count, whom each of it is for: an explanation ("..., one each for A and B", "，分别给A和B各一份")
_ONE_EACH = re.compile(r",\s*(?:with )?one (?:each|apiece) for\b[^,;]*$|[，,]\s*(?:分别)?(?:给|为)[^，,]{1,20}?各(?:一|1)(?:份|杯|个|碗|盒)$")
# a count of one product ("include 2 servings of the same beverage", "包含2份相同的饮品"): not several records
_AFTER_NUM = "(?:(?<=\\d )|" + "|".join(rf"(?<=\b{w} )" for w in ("two", "three", "four", "five", "six", "ten")) + ")"
_SAME_ITEMS = re.compile(rf"{_AFTER_NUM}(?:(?:[a-z]+ )?of )?the same\b|{_AFTER_NUM}[a-z]+ of one\b|(?<=\d)\s*(?:个|份|杯|件|碗|盒|瓶)(?:相同|同样|一样)")


def _with_about(spec: Any, about: str) -> Any:
    """The spec with the words of what it is about (those its reader chose, where it chose them)."""
    if not isinstance(spec, _Spec):
        return spec
    return spec.model_copy(update={"about": spec.about or about})
