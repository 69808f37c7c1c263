"""The kind an item is about, from its words (``item_topic``) or from its compiled spec (``spec_topic``).

For coverage audits: how many items of each kind there are, and how many of them compile. The
vocabulary (``TOPICS``): time, date, address, store, product, option, quantity, price, rating,
distance, status, note, process, other.

``item_topic`` reads the words only, whether or not the item compiles, English or Chinese:
    1. the requirement: when the item reasons to a conclusion ("..., so the order should be from
       X", "所以..."), the text after the last cut is read first (then after the one before, up to
       three, then the whole item), and the first reading that fits is the topic;
    2. a demand to look something up ("need to query ...", "需要查询...") is ``process``;
    3. the requirement splits at its modal (``clauses._split_modal``); a subject that names a note
       or an address decides ("the note should say ...", "配送地址应为..."); else the predicate is
       read first, then the subject (where its head noun tells a store from a product: "the dishes
       at the restaurant" are dishes), then the whole clause, each by the first of these that fits:
       status (cancel, refund, paid, 取消, 状态, 支付), note (note, remark, 备注), address (address, 地址),
       rating (rating, score, stars, 评分), time (a clock time, a duration, "as soon as possible",
       "time", "时间"), a destination (address: "delivered to", "送到"), distance (distance, N km /
       m, nearby, 距离, N公里), price (N yuan, ¥N, price, cost, budget, 价格, N元), a serving size
       (product: "a set meal for two", "双人套餐"), quantity (number of, quantity, N people /
       portions / cups, 人数, 数量, N份), store (store, shop, restaurant, brand, "from / at / with
       <name>", 商家, 店, 品牌), option (temperature, sweetness, size, spicy, ice, hot, 温度, 辣, 冰, 杯, 口味),
       product (order, item, dish, drink, set, 商品, 套餐, 饮品, or a verb of choosing or having:
       select, include, 选择, 包含), date (a date or "tomorrow" without a clock, "date", "日期");
    4. a clause that names a delivery's or a visit's time (``time.subject_of``) is ``time``; else
       ``other``.

Examples
    "The picnic basket must be delivered by 11:30 tomorrow"     time
    "The concert booking should be on July 12"                  date
    "The hotel's rating must be at least 4.2"                   rating
    "The latte should be iced with less sugar"                  option
    "Must look up the user's past orders"                       process
    "晚餐订单的总价应在200元以内"                                  price
    "包厢预订人数应为10人"                                        quantity
    "订单需要备注不要辣"                                           note

``spec_topic`` maps a compiled spec to the same words: ``TimeWindow`` -> time (date when it bounds
whole days), ``AddressSpec`` -> address, ``StoreSpec`` -> store, ``FeatureSpec`` -> option when only
options count, product for a product, store for a place's feature, ``RatingSpec`` -> rating,
``DistanceSpec`` -> distance, ``CountSpec`` -> quantity, ``PriceSpec`` -> price, ``NoteSpec`` ->
note, ``StatusSpec`` -> status, ``ProcessSpec`` -> process, ``DurationSpec`` and ``HoursSpec`` -> time,
``AllOf`` -> its first part's topic.
"""

from __future__ import annotations

import re
from datetime import time as clock
from typing import Any

from .address import AddressSpec
from .best import BestSpec
from .clauses import _THEN, _clauses, _head_class, _split_modal
from .days import DaysSpec
from .duration import DurationSpec, HoursSpec
from .facts import PlaceFactSpec
from .feature import FeatureSpec
from .joint import JointSpec
from .note import NoteSpec
from .place import DistanceSpec, RatingSpec, StoreSpec
from .price import PriceSpec
from .process import _PROC_EN, _PROC_ZH, ProcessSpec
from .quantity import CountSpec
from .spec import AllOf
from .status import StatusSpec
from .text import MAX_ITEM_CHARS, _knorm, _Unclear, normalise
from .time import TimeWindow, _tokens, subject_of
from .trip import TripSpec

TOPICS: tuple[str, ...] = ("time", "date", "address", "store", "product", "option", "quantity", "price", "rating",
                           "distance", "status", "note", "process", "other")

_N = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)"
_WORDS: dict[str, re.Pattern[str]] = {
    "status": re.compile(r"\bcancel(?:l?ed|l?ing|lation)?\b|\brefund(?:ed|s)?\b|\bstatus\b|\b(?:un)?paid\b"
                         r"|取消|退款|状态|支付|付款"),
    "note": re.compile(r"\bnotes?\b|\bremarks?\b|备注|留言"),
    "address": re.compile(r"\baddress(?:es)?\b|地址|住址|收货地"),
    # where an order goes, without the word "address" (read after times: "delivered to X by 18:00" is a time)
    "destination": re.compile(r"\b(?:delivered|deliver|sent|shipped) to\b|送到|送至|配送到"),
    "rating": re.compile(r"\bratings?\b|\brated\b|\bscores?\b|\bstars?\b|评分|评级|星级|分数|得分"),
    "distance": re.compile(r"\bdistance\b|\d\s*(?:km|kilomet(?:er|re)s?|m|met(?:er|re)s?)\b|\bnearby\b|\bnearest\b"
                           r"|\bclosest\b|距离|附近|\d\s*(?:公里|千米|米)"),
    "price": re.compile(r"\d\s*(?:yuan|rmb|cny|元|块)|[¥￥]\s*\d|\b(?:prices?|priced|costs?|budget|spend(?:ing)?|"
                        r"expensive|cheap(?:er|est)?)\b|价格|价钱|费用|预算|总价|金额|花费|售价"),
    "time": re.compile(r"\b(?:times?|timing|slot|o'clock|punctual|asap)\b|时间|时段|准时|几点"),
    "date": re.compile(r"\b(?:date|dates)\b|日期|哪天"),
    "serving": re.compile(rf"\b(?:{_N}|single|individual)[- ]person\b|\b{_N}-people\b|\b(?:set meals?|meals?|sets?|"
                          rf"packages?|combos?|menus?|platters?) for {_N}\b|\bcouple'?s? (?:set|meal|package|combo)"
                          r"|双人|单人|[\d一二两三四五六七八九十]人(?:份|餐|套餐)"),
    "quantity": re.compile(rf"\b(?:number of|quantity|quantities|how many|party size|headcount|item count)\b"
                           rf"|\b(?:for|of) {_N} (?:people|persons|guests|diners|adults)\b"
                           r"|\d+\s*(?:portions?|cups?|bowls?|pieces?|servings?|bottles?|boxes)\b"
                           r"|人数|数量|份数|件数|杯数|几位|[\d一二两三四五六七八九十]+\s*(?:份|杯|碗|件|瓶|位)"
                           r"|\d+\s*人(?!份|餐|套)"),
    "store": re.compile(r"\b(?:stores?|shops?|restaurants?|merchants?|vendors?|brands?|outlets?|branch(?:es)?|chains?|"
                        r"venues?)\b|^(?:be )?(?:ordered |placed |purchased |bought |booked |reserved |made )?(?:from|at(?! least| most)|with) "
                        r"|商家|店铺|门店|商户|餐厅|餐馆|饭店|店家|品牌|来自|店"),
    "option": re.compile(r"\b(?:temperature|sweetness|sugar|ice|iced|hot|warm|cold|spic(?:y|iness|e)|mild|sizes?|cups?|"
                         r"large|medium|small|flavou?rs?|tastes?|options?|specifications?|toppings?)\b"
                         r"|温度|甜度|辣|冰|热饮|温热|常温|糖|规格|口味|杯|选项|属性|加料"),
    "product": re.compile(r"\b(?:orders?|items?|products?|dish(?:es)?|meals?|sets?|packages?|drinks?|beverages?|food|"
                          r"coffee|tea|cakes?|noodles?|rice|soup|desserts?|snacks?|tickets?|vouchers?|courses?|"
                          r"class(?:es)?|menus?|combos?|select|choose|pick|include|includes|contain|contains|buy|"
                          r"purchase)\b|商品|菜品|套餐|饮品|产品|订单|菜|咖啡|蛋糕|门票|课程|选择|包含|含有|购买"),
}
# the order in which a piece of text is read: the first topic that fits
_ORDER = ("status", "note", "address", "rating", "time", "destination", "distance", "price", "serving", "quantity",
          "store", "option", "product", "date")
_AS = {"serving": "product", "destination": "address"}


def _words_topic(text: str) -> str:
    if not text.strip():
        return "other"
    kinds = {t.kind for t in _tokens(normalise(text))}
    for topic in _ORDER:
        if topic == "time" and kinds & {"clock", "dur", "asap"}:
            return "time"
        if topic == "date" and kinds & {"date", "relday"}:
            return "date"
        if _WORDS[topic].search(text):
            return _AS.get(topic, topic)
    return "other"


def _segment_topic(seg: str) -> str:
    if _PROC_EN.match(seg) or _PROC_ZH.match(seg):
        return "process"
    try:
        subject, _neg, pred = _split_modal(seg)
    except _Unclear:
        subject, pred = "", seg
    for topic in ("note", "address"):
        if _WORDS[topic].search(subject):
            return topic
    for part in (pred, subject, seg):
        topic = _words_topic(part)
        if part is subject and topic in ("store", "option", "product"):
            # the subject's head noun decides: "the dishes at the restaurant" are dishes
            topic = {"place": "store", "product": "product"}.get(_head_class(subject) or "", topic)
        if topic != "other":
            return topic
    return "time" if subject_of(_clauses(normalise(seg)))[0] is not None else "other"


def item_topic(text: str) -> str:
    """The kind an item is about (one of ``TOPICS``), from its words; "other" when none fits.
    Never raises."""
    if not isinstance(text, str) or not text.strip():
        return "other"
    try:
        t = _knorm(text[:MAX_ITEM_CHARS])
        # the conclusion first: after the last cut, else after the one before ("... so it should be Mr. Lee")
        cuts = [m.end() for m in _THEN.finditer(t) if m.end() < len(t)]
        for seg in dict.fromkeys([*(t[k:] for k in reversed(cuts)), t]):
            topic = _segment_topic(seg)
            if topic != "other":
                return topic
    except Exception:  # noqa: BLE001  an audit counts the item as "other" rather than fail
        return "other"
    return "other"


_SPEC_TOPICS: tuple[tuple[type, str], ...] = (
    (AddressSpec, "address"), (StoreSpec, "store"), (RatingSpec, "rating"), (DistanceSpec, "distance"),
    (CountSpec, "quantity"), (PriceSpec, "price"), (NoteSpec, "note"), (StatusSpec, "status"), (ProcessSpec, "process"),
    (DurationSpec, "time"), (HoursSpec, "time"),
)
_TRIP_TOPICS = {"date": "date", "check_in": "date", "check_out": "date", "nights": "quantity", "depart": "time",
                "arrive": "time", "stars": "rating"}
_BEST_TOPICS = {"rating": "rating", "distance": "distance", "price": "price", "sales": "product", "duration": "time"}


def spec_topic(spec: Any) -> str:
    """The topic (one of ``TOPICS``) of a compiled spec; "other" for anything else."""
    if isinstance(spec, AllOf):
        return spec_topic(spec.parts[0]) if spec.parts else "other"
    if isinstance(spec, TimeWindow):
        whole_days = (spec.relation == "between" and spec.earliest is not None and spec.latest is not None
                      and spec.earliest.time() == clock(0, 0) and spec.latest.time() == clock(23, 59, 59))
        return "date" if whole_days else "time"
    if isinstance(spec, BestSpec):
        return _BEST_TOPICS[spec.attribute]
    if isinstance(spec, TripSpec):
        return _TRIP_TOPICS[spec.what]
    if isinstance(spec, JointSpec):
        return "store" if spec.what == "same_place" else "price"
    if isinstance(spec, PlaceFactSpec):
        return "price" if spec.fact == "avg_price" else "store"
    if isinstance(spec, DaysSpec):
        return "date" if spec.scope == "product" else "store"
    if isinstance(spec, FeatureSpec):
        return "option" if spec.option_only else "product" if spec.scope == "product" else "store"
    return next((topic for cls, topic in _SPEC_TOPICS if isinstance(spec, cls)), "other")
