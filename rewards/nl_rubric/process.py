"""Process items: a look-up the episode's history must hold.

The kind
    An item that demands the agent look something up ("need to query the user's history", "must
    check the weather"), alone or as the premise of a requirement ("query the history to find the
    usual bakery, so the order should be from Crumb & Co": a process part and a store part,
    ``compile._compile_item``).

The grammar
    A clause that starts with the demand: "(the agent / you / first / also) (should / must / needs
    to / has to / is required to / it is necessary to) (first) query / check / search (for) / look up
    / look for / verify / confirm / find out / inquire / consult / review / examine <object>", not
    followed by "shows / results / reveals / found" (a result, not a demand); "(需要 / 应 / 必须 /
    请)(先)查询 / 查看 / 搜索 / 检查 / 确认 / 核实 / 了解 / 查找 <object>". The object up to its
    purpose ("to find ...", "so that", "with the result", ",", "以便", "来确定", "结果") names what is
    looked up (else the whole clause may): the user's behaviour log ("historical behavior", "历史行为":
    ``get_user_historical_behaviors`` only), history or orders, the weather, a holiday, a
    distance, a store or product of the catalogue; each maps to the tools that do that look-up
    (those of the domain, ``ItemContext.tools``). Nothing named, or no tool of the domain, leaves the
    item to the judge. A passive demand ("the user's order history must be checked") names its object
    first, and counts only for a history, weather, date or distance ("the order should be confirmed" is no
    look-up). The object ends at ":" too ("check the history: the usual shop is X").

Examples
    "Need to query the user's order history"
    "Must check the weather forecast for the picnic day"
    "The agent should first look up the date of the Dragon Boat Festival"
    "需要查询用户的历史订单"
    "应先查看明天的天气"

The spec: ``ProcessSpec`` (what is looked up, ``action``, and the tools that do it). How it is
checked (``process_holds``): the episode executed a call of one of the tools (any counts); judged on
a record alone (no calls known), it holds.
"""

from __future__ import annotations

import re
from typing import Literal

from .text import _Unclear
from .world import ItemContext, _Spec


class ProcessSpec(_Spec):
    """The history holds an executed call of one of ``tools`` (what the item asks to look up)."""

    kind: Literal["process"] = "process"
    action: str
    tools: list[str]


def process_holds(spec: ProcessSpec, calls: frozenset[str] | None) -> bool:
    return calls is None or bool(calls & set(spec.tools))


# ----- the grammar ----------------------------------------------------------------------------------
_PROC_EN = re.compile(
    r"^(?:(?:the )?agent |you |we |first,? |also )?(?:(?:should|must|needs? to|has to|have to|is required to|"
    r"it is necessary to)\s+)?(?:first\s+)?(?:query|check|search(?: for)?|look up|look for|verify|confirm|find out|"
    r"inquire|investigate|consult|review|examine)\b(?!\s+(?:shows?|showed|results?|reveals?|indicates?|finds?|found)\b)"
    r"(?P<obj>.*)$")
# "the user's history needs to be checked", "用户的历史订单需要查询": the object before a passive demand
_PROC_PASSIVE_EN = re.compile(
    r"^(?P<obj>(?!.*\b(?:should|must|needs?|has|have|is|are)\b.*\b(?:should|must|needs?|has to|have to)\b).{1,120}?) "
    r"(?:should|must|needs? to|has to|have to|is required to|are required to) (?:first )?be (?:first )?"
    r"(?:checked|queried|looked up|verified|confirmed|searched|reviewed|consulted|examined)(?: first)?$")
_PROC_ZH = re.compile(r"^(?:需要|应该|应当|应|必须|需|要|请)?(?:先)?(?:查询|查看|搜索|检查|确认|核实|了解|查找|检索|查一下|查)(?P<obj>.*)$")
_HISTORY_TOOLS = ("get_user_historical_behaviors", "get_user_all_orders", "search_delivery_orders",
                  "get_delivery_order_detail", "get_instore_orders", "get_instore_books", "get_instore_reservations",
                  "search_instore_book", "search_instore_reservation")
_CATALOGUE_TOOLS = ("delivery_store_search_recommend", "delivery_product_search_recommend", "get_delivery_store_info",
                    "get_delivery_product_info", "instore_shop_search_recommend", "instore_product_search_recommend",
                    "get_nearby")
# what a process item asks to look up -> the tools that do it (several: any of them)
_ACTIONS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    # "the user's historical behavior(s)", "用户历史行为": the behaviour log itself, not any order list
    ("user behaviors", re.compile(r"behavio|行为"), ("get_user_historical_behaviors",)),
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
                             r"\bservices?\b|商家|店|餐厅|套餐|商品|菜品|价格|有没有|是否有|服务"), _CATALOGUE_TOOLS),
)


# where the object of a query ends and its purpose or expected result begins ("user behavior
# history | to find previously visited restaurants, with the result being X")
_PROC_PURPOSE = re.compile(r"\s+(?:to (?:find|see|identify|determine|learn|get|confirm|know|decide|choose|select|pick|"
                           r"locate|obtain|check)|in order to|so (?:that|as)|with the result|,)|[，,:：]|以便|以确定|以找到|"
                           r"来确定|来找到|从而|结果")


def _process(obj: str, ctx: ItemContext) -> ProcessSpec:
    core = _PROC_PURPOSE.split(obj, maxsplit=1)[0]
    actions = [(name, tools) for name, rx, tools in _ACTIONS if rx.search(core)]
    if not actions:  # the object alone names nothing: what the query is for may
        actions = [(name, tools) for name, rx, tools in _ACTIONS if rx.search(obj)]
    if not actions:
        raise _Unclear
    if any(name == "user behaviors" for name, _ in actions):
        actions = [(name, tools) for name, tools in actions if name != "user history"]
    tools = sorted({t for _, ts in actions for t in ts if not ctx.tools or t in ctx.tools})
    if not tools:
        raise _Unclear
    return ProcessSpec(action=", ".join(dict.fromkeys(n for n, _ in actions)), tools=tools)


def _process_demand(clause: str, ctx: ItemContext) -> ProcessSpec | None:
    m = _PROC_EN.match(clause) or _PROC_ZH.match(clause)
    if m is None:
        m = _PROC_PASSIVE_EN.match(clause)
        if m is None:
            return None
        spec = _process(m.group("obj"), ctx)
        # "the order should be confirmed" is no look-up: a passive demand names a history, weather, date or distance
        return spec if set(spec.action.split(", ")) - {"orders", "catalogue"} else None
    return _process(m.group("obj"), ctx)  # the object after the verb ("need to check X": not "to check X")
