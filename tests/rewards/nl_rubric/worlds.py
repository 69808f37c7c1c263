"""The worlds the rubric-item tests compile against, and the helpers every kind's tests share.

Three small worlds of my own (not VitaBench's): ``CTX`` (noodles and tea in Dalian, an address
book, a chain with two branches), ``CTX_MORE`` (set meals for a number of people, drinks with
options, places whose names hold the words of other kinds: "Note", "Star") and ``CTX_ZH`` (Chinese
places and products: options, cup sizes, a chain). ``K`` / ``M`` / ``Z`` compile an item against
each; a case names its world by key (``WORLDS``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric import compile as nl_compile
from servicegym.rewards.nl_rubric import time as nl_time

NOW = datetime(2025, 6, 21, 11, 20, 0)  # a Saturday


def T(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M")


HOME_ADDR = "Room 802, Building 1, Jianlong Garden, Shahekou District, Dalian"
ZH_ADDR = "辽宁省大连市沙河口区大连软件园3号楼5层"
TOOLS = frozenset({"get_user_historical_behaviors", "get_user_all_orders", "search_delivery_orders", "weather",
                   "get_holiday_date", "get_date_holiday_info", "longitude_latitude_to_distance", "get_nearby",
                   "address_to_longitude_latitude", "delivery_store_search_recommend",
                   "delivery_product_search_recommend", "get_delivery_store_info", "get_delivery_product_info",
                   "create_delivery_order", "pay_delivery_order"})
CTX = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("S1", "Noodle House", ("Noodles", "Dine-in available", "Free parking"), "", 4.7,
                            121.5850, 38.9020, "12 Noodle Street, Dalian"),
        nl_rubric.PlaceInfo("S2", "Tea Corner", ("Tea", "Pet-friendly"), "", 4.2, 121.5750, 38.8990, "3 Tea Lane, Dalian"),
        nl_rubric.PlaceInfo("S3", "Mixue Ice Cream (Xinghai Branch)", ("Ice cream",), "", 3.9, 121.60, 38.88,
                            "9 Xinghai Road, Dalian"),
        nl_rubric.PlaceInfo("S4", "Mixue Ice Cream (Wanda Branch)", ("Ice cream",), "", 4.0, 121.61, 38.87,
                            "Wanda Plaza, Dalian"),
        nl_rubric.PlaceInfo("S5", "蜜雪冰城（万达店）", ("冰淇淋",), "", 4.1, 121.62, 38.86, "大连市万达广场"),
        nl_rubric.PlaceInfo("S6", "老王面馆", ("面食", "可堂食"), "", 4.6, 121.58, 38.90, "大连市沙河口区面馆街1号"),
    ),
    products=(
        nl_rubric.ProductInfo("P1", "S1", "Beef Noodles", ("Hot", "Beef"), ("Mild", "Extra Spicy", "Non-spicy"), 28.0),
        nl_rubric.ProductInfo("P2", "S1", "Veggie Noodles", ("Vegetarian",), (), 22.0),
        nl_rubric.ProductInfo("P3", "S2", "Jasmine Tea", ("Caffeine-free",), ("Less Ice", "No Ice", "Hot"), 12.0),
        nl_rubric.ProductInfo("P4", "S2", "Oolong Tea", ("Contains caffeine",), (), 15.0),
        nl_rubric.ProductInfo("P5", "S6", "牛肉面", ("招牌",), ("微辣", "不辣", "特辣", "不加葱花"), 30.0),
        nl_rubric.ProductInfo("P6", "S6", "酸辣粉", ("酸辣",), (), 18.0),
    ),
    addresses=((HOME_ADDR, 121.5800, 38.9000), (ZH_ADDR, 121.5200, 38.8600)),
    tools=TOOLS,
    record_ids=("M0000001O01", "M0000001O02"),
)


def K(text: str) -> Any:
    return nl_rubric.compile_item(text, CTX)


CTX_MORE = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("L1", "Green Note Lounge", ("Live music",), "", 4.5, 121.59, 38.91, "8 Harbour Road, Dalian"),
        nl_rubric.PlaceInfo("L2", "Polar Star Ice Rink", ("Skating",), "", 4.1, 121.57, 38.92, "2 Frost Street, Dalian"),
        nl_rubric.PlaceInfo("L3", "Copper Pot Hotpot", ("Hotpot",), "", 4.3, 121.56, 38.93, "5 Ember Lane, Dalian"),
        nl_rubric.PlaceInfo("L4", "小林烤肉", ("烤肉",), "", 4.4, 121.55, 38.94, "大连市中山区炭火路3号"),
    ),
    products=(
        nl_rubric.ProductInfo("Q1", "L3", "Spicy Broth Four-person Set", ("Beef Tripe",), (), 388.0),
        nl_rubric.ProductInfo("Q2", "L3", "Clear Broth Single-person Set", (), (), 98.0),
        nl_rubric.ProductInfo("Q3", "L3", "Sweetheart Couple Set", (), (), 218.0),
        nl_rubric.ProductInfo("Q4", "L1", "Ginger Cola", (), ("Hot", "Less Ice", "No Ice"), 18.0),
        nl_rubric.ProductInfo("Q5", "L4", "精选双人烤肉套餐", (), (), 199.0),
        nl_rubric.ProductInfo("Q6", "L4", "柚子气泡水", (), ("少冰", "去冰", "常温"), 16.0),
    ),
    tools=TOOLS,
)


def M(text: str) -> Any:
    return nl_rubric.compile_item(text, CTX_MORE)


CTX_ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(
        nl_rubric.PlaceInfo("Z1", "山海小馆（河西店）", ("可堂食", "出餐快"), "", 4.5),
        nl_rubric.PlaceInfo("Z2", "青禾茶铺（东门店）", ("食材新鲜",), "", 4.2),
        nl_rubric.PlaceInfo("Z3", "青禾茶铺（南湖店）", (), "", 4.0),
        nl_rubric.PlaceInfo("Z4", "云朵甜品屋", (), "", 4.1),
    ),
    products=(
        nl_rubric.ProductInfo("R1", "Z1", "葱油拌面", ("招牌",), (), 16.0),
        nl_rubric.ProductInfo("R2", "Z1", "三鲜馄饨双拼", (), ("微辣", "不辣"), 22.0),
        nl_rubric.ProductInfo("R3", "Z2", "桂花乌龙", ("中杯",), ("热", "少冰", "去冰"), 14.0),
        nl_rubric.ProductInfo("R4", "Z3", "芝士葡萄", (), ("大杯", "超大杯"), 19.0),
        nl_rubric.ProductInfo("R5", "Z4", "红豆双皮奶", (), ("温热", "常温"), 15.0),
    ),
    tools=TOOLS,
)


def Z(text: str) -> Any:
    return nl_rubric.compile_item(text, CTX_ZH)


WORLDS = {"base": CTX, "more": CTX_MORE, "zh": CTX_ZH}


def compile_in(world: str, text: str) -> Any:
    return nl_rubric.compile_item(text, WORLDS[world])


def parts_of(spec: Any) -> list[tuple[list[str], bool]]:
    """(phrases, negated) of each part of a feature item."""
    return [(p.phrases, p.negated) for p in nl_rubric.spec_parts(spec)]


def compiles_to(spec: Any, text: str, kind: str, check: Any) -> None:
    """``spec`` (``text`` compiled) is of ``kind``, passes ``check``, survives JSON and reads in words."""
    assert spec is not None, text
    assert spec.kind == kind, (text, spec)
    assert check(spec), (text, spec)
    assert nl_rubric.parse_spec(spec.model_dump(mode="json")) == spec
    assert nl_rubric.describe_spec(spec)


def left_to_the_judge(world: str, text: str) -> None:
    """``text`` compiles to nothing (in the base world a time window may still be read: the other
    kinds are what is left to the judge)."""
    spec = compile_in(world, text)
    assert spec is None or (world == "base" and spec.kind == "time_window"), (text, spec)


def order(lines: list[nl_rubric.LineFacts], **kw: Any) -> nl_rubric.RecordFacts:
    return nl_rubric.RecordFacts(table="orders", record_id="D01", place_id="S1", status="paid", lines=tuple(lines), **kw)


BEEF = nl_rubric.LineFacts("P1", "Beef Noodles", ("Hot", "Beef"), "Mild", 2, 28.0, ("Mild", "Extra Spicy", "Non-spicy"))
TEA = nl_rubric.LineFacts("P3", "Jasmine Tea", ("Caffeine-free",), "Hot", 1, 12.0, ("Less Ice", "No Ice", "Hot"))
# the base world's noodle order, delivered home: two mild beef noodles and a hot tea, 68 yuan, a note
HOME_ORDER = order([BEEF, TEA], address=HOME_ADDR.lower(), longitude=121.5801, latitude=38.9001, total=68.0,
                   note="no cilantro")


def no_length_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the readers see a whole long text (``MAX_ITEM_CHARS`` is read in ``time`` and ``compile``)."""
    for module in (nl_time, nl_compile):
        monkeypatch.setattr(module, "MAX_ITEM_CHARS", 10**9)
