"""The labelled check set (``envs/tasks/vitabench/labelled.py``) and the fidelity report.

Labels come from the rubric text alone: hand-written English and Chinese items show which kinds of
variants each yields and with which label; on the real VitaBench files (``$SERVICEGYM_VITABENCH_DIR``
or ``shared/data/vitabench`` beside the repository root; skipped when absent) the code scorer must
agree with the labels, and ``scripts/fidelity_report.py`` must print its table.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from servicegym.envs.tasks.vitabench import labelled
from servicegym.envs.tasks.vitabench.labelled import (
    SILENT_KINDS,
    WRITE_KINDS,
    Place,
    Product,
    Record,
    TaskContext,
    agreement,
    build_variants,
    by_kind,
    check_file,
    contradicting_note,
    parse_time_bound,
    query_target,
    rubric_kinds,
)

ROOT = Path(__file__).resolve().parents[2]


def _data_dir() -> Path:
    override = os.environ.get("SERVICEGYM_VITABENCH_DIR")
    return Path(override) if override else ROOT / ".." / "shared" / "data" / "vitabench"


DATA_DIR = _data_dir()
FILES = {
    "delivery-en": ("delivery/tasks_en.json", "servicegym/Delivery-v0"),
    "delivery-zh": ("delivery/tasks.json", "servicegym/Delivery-v0"),
    "instore-en": ("instore/tasks_en.json", "servicegym/InStore-v0"),
}
# kinds of violation the scorer is known to miss, with why, per scoring; their figures are printed,
# not asserted. Under scoring="rubric" the gold no longer catches a wrong option or product that
# an item names but the code does not check (the items go to the judge): e.g. "must select hot
# drinks, not cold drinks", "应选择无奶属性的咖啡", "should include a Jianbing for the daughter".
KNOWN_MISSES = {
    "rubric": {
        "wrong_option": "option items (temperature, size, milk) not checked by code under rubric scoring",
        "wrong_product": "product items the code does not check under rubric scoring",
    },
    "strict": {},
}


def dt(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M")


# ----- the reading of the rubric text -----------------------------------------------------------
@pytest.mark.parametrize(
    ("item", "relation", "start", "end"),
    [
        ("The delivery time for the rice noodle order should be around 2025-06-21 12:00:00 to ensure "
         "completion of the meal before the afternoon break", "around", "2025-06-21 12:00", None),
        ("The order delivery time should be before 18:00 on 2025-06-03, ensuring that the daughter can "
         "finish her meal before 6:30 pm", "before", "2025-06-03 18:00", None),
        ("The estimated delivery time should be around 12:00 PM on 2025-08-16", "around", "2025-08-16 12:00", None),
        ("The estimated delivery time should be before 2:00 PM on September 26, 2025", "before", "2025-09-26 14:00", None),
        ("The delivery time should be between 11:30 and 12:30 on 2025-11-07", "between", "2025-11-07 11:30",
         "2025-11-07 12:30"),
        ("The delivery time should be between 2025-03-05 19:00:00 and 2025-03-05 20:00:00", "between",
         "2025-03-05 19:00", "2025-03-05 20:00"),
        ("The estimated delivery time for the beef light meal order should be after 11:00 on October 24, 2025",
         "after", "2025-10-24 11:00", None),
        ("The estimated delivery time for the coffee order before the audition should be before 2025-10-30 12:00:00",
         "before", "2025-10-30 12:00", None),
        ("The estimated delivery time for the afternoon order after the audition should be around 2025-10-30 15:00:00",
         "around", "2025-10-30 15:00", None),
        ("Dance course reservation time must be Saturday at 4 PM (February 27, 2024, 16:00)", "exact",
         "2024-02-27 16:00", None),
        ("米线订单的送达时间应在2025-06-21 12:00:00左右，确保午休前用餐完毕", "around", "2025-06-21 12:00", None),
        ("奶茶订单预期送达时间应为2025年9月13日12点前", "before", "2025-09-13 12:00", None),
        ("儿童饮品订单的送达时间应早于2025-06-01 00:00:00", "before", "2025-06-01 00:00", None),
        ("新订虾仁小馄饨订单的预计送达时间应在2025-03-19上午11:00之前", "before", "2025-03-19 11:00", None),
        ("白雪冰订单的预计送达时间应在2025年03月16日的11:00:00后", "after", "2025-03-16 11:00", None),
        ("为北京来的朋友订餐的预计送达时间应在2025年09月20日11:30-12:00时间段内", "between", "2025-09-20 11:30",
         "2025-09-20 12:00"),
        ("早餐汤包订单的预期送达时间应在2025年9月21日7点左右", "around", "2025-09-21 07:00", None),
        ("为满足母子晚餐需求的订单预计送达时间应在2025-09-26 19:30:00左右【即送达时间在2025-09-26 19:15:00到"
         "2025-09-26 19:45:00区间内】", "around", "2025-09-26 19:30", None),
    ],
)
def test_time_bounds_in_english_and_chinese(item: str, relation: str, start: str, end: str | None) -> None:
    tb = parse_time_bound(0, item)
    assert tb is not None, item
    assert (tb.relation, tb.start, tb.end) == (relation, dt(start), dt(end or start))


@pytest.mark.parametrize(
    "item",
    [
        "The BBQ restaurant ordered must be an established restaurant, with an opening time before 2019",
        "The price of the ordered items should be between 180-300 yuan (inclusive)",
        "The BBQ restaurant ordered must be open until 3:00 AM (including 3:00 AM)",
        "The ticket ordered for the children's playground should allow entry at 19:00",  # no date
        "水果茶订单的预计送达时间应在2024-09-14 18:00:00之间",  # "between" one time: no sure reading
    ],
)
def test_items_without_a_sure_time_bound(item: str) -> None:
    assert parse_time_bound(0, item) is None


EN_ITEMS = [
    "The delivery address for the noodle order should be Huchi Garden, No. 75 Huchi Road, Gusu District, Suzhou",
    "The delivery time for the noodle order should be around 2025-06-21 12:00:00",
    "The noodle order should include a note requesting no cilantro",
    "Need to query the user's historical behavior to find the previously visited noodle shop",
]
ZH_ITEMS = [
    "米线订单的配送地址应为江苏省苏州市姑苏区虎池路75号虎池苑",
    "米线订单的送达时间应在2025年6月21日12点前",
    "米线订单需要备注不要香菜",
    "需要查询用户历史行为，找到常去的米线店",
]


def test_kinds_and_labels_from_english_text() -> None:
    assert rubric_kinds(EN_ITEMS) == {
        "around_shift": "accept",
        "late_delivery": "reject",
        "wrong_address": "reject",
        "contradicting_note": "reject",
        "missing_query": "reject",
        "extra_reads": "accept",
        "reorder": "accept",
    }


def test_kinds_and_labels_from_chinese_text() -> None:
    # "之前" is a bound with no legal "around" shift
    assert rubric_kinds(ZH_ITEMS) == {
        "late_delivery": "reject",
        "wrong_address": "reject",
        "contradicting_note": "reject",
        "missing_query": "reject",
        "extra_reads": "accept",
        "reorder": "accept",
    }


def test_what_the_text_does_not_justify() -> None:
    # an "after" bound: 3 hours later is no violation, and no "around" to shift within
    assert "late_delivery" not in rubric_kinds(["The delivery time should be after 2025-09-18 20:00:00"])
    assert "around_shift" not in rubric_kinds(["夜宵订单的配送时间应安排在2025-06-01 00:00:00后"])
    # an item forbidding queries: no extra reads, no reordering
    kinds = rubric_kinds(["The agent should not query the user's order history"])
    assert "extra_reads" not in kinds and "reorder" not in kinds
    # checking a shop's menu is no one tool's job
    assert query_target("Need to check if La Vita offers a Qixi Festival Set Menu, the result is yes") is None
    assert query_target("Should check if there is a three-person package in the flower shop where the order was placed") is None
    assert query_target("Should check whether the maximum temperature on July 4, 2024 exceeds 30 degrees") == "weather"
    assert query_target("Need to check historical orders to find previously visited dessert shops") == "orders"


def test_other_product_only_where_the_rubric_says_nothing_of_products() -> None:
    silent_en = ["The delivery address should be Huchi Garden, No. 75 Huchi Road, Suzhou",
                 "The estimated delivery time should be around 2025-06-21 12:00:00"]
    silent_zh = ["配送地址应为江苏省苏州市姑苏区虎池路75号虎池苑", "订单的送达时间应在2025-06-21 12:00:00左右"]
    assert rubric_kinds(silent_en)["other_product"] == "accept"
    assert rubric_kinds(silent_zh)["other_product"] == "accept"
    # naming the dish in the subject is enough to say something about the product
    assert "other_product" not in rubric_kinds(
        ["The delivery address for the breakfast soup dumpling order should be Yintai Garden, Suzhou"])
    assert "other_product" not in rubric_kinds(["米线订单的配送地址应为江苏省苏州市姑苏区虎池路75号虎池苑"])


@pytest.mark.parametrize(
    ("requested", "contradiction"),
    [
        ("no cilantro and no fish mint herb", "Extra cilantro and extra fish mint herb"),
        ("one soup without pearls", "One soup with pearls"),
        ("disposable gloves", "Please do not provide disposable gloves"),
        ("Please place it at the front desk", "Please do not place it at the front desk"),
        ("Extra spicy", "Less spicy"),
        ("不要一次性餐具", "请务必加一次性餐具"),
        ("多辣谢谢", "少辣谢谢"),
        ("多要一份餐具", "请不要多要一份餐具"),
    ],
)
def test_contradicting_notes(requested: str, contradiction: str) -> None:
    assert contradicting_note(requested) == contradiction


def test_labelling_is_independent_of_the_scorer() -> None:
    # the labeller's modules (``labelled.py`` and its parts ``labelled_*.py``) never import the scorer
    files = sorted(Path(labelled.__file__).parent.glob("labelled*.py"))
    assert len(files) >= 5, files
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any("rewards" in m or "nl_rubric" in m for m in imported), (path.name, imported)


# ----- variants of a hand-written task -----------------------------------------------------------
HOME = "Huchi Garden, No. 75 Huchi Road, Gusu District, Suzhou"
FAR = "Suzhou Industrial Park, 88 Xinghu Street, Suzhou"


def _call(name: str, **args) -> str:
    return json.dumps({"name": name, "arguments": args}, ensure_ascii=False)


def _context(items: list[str], *, zh: bool = False, golden_extra: list[str] | None = None) -> TaskContext:
    mild, extra = ("微辣", "特辣") if zh else ("Mild Spicy", "Extra Spicy")
    names = (["老王米线（虎池店）", "小李面馆"] if zh else ["Lao Wang Rice Noodles (Huchi Branch)", "Xiao Li Noodle House"])
    dishes = (["牛肉米线", "鸡汤米线", "炸酱面"] if zh else ["Beef Rice Noodles", "Chicken Soup Rice Noodles", "Zhajiang Noodles"])
    create = _call("create_delivery_order", user_id="U1", store_id="S1", product_ids=["P1"], product_cnts=[1],
                   address=HOME, dispatch_time="2025-06-21 11:30:00", attributes=[mild],
                   note="不要香菜" if zh else "No cilantro")
    golden = [*(golden_extra or []), create, _call("pay_delivery_order", order_id="T1D01"), "Done. ###STOP###"]
    return TaskContext(
        task_id="T1",
        nl_rubric=items,
        golden=golden,
        now=dt("2025-06-21 11:00"),
        user_id="U1",
        places={"S1": Place(names[0], ["P1", "P2"]), "S2": Place(names[1], ["P3"])},
        products={"P1": Product(dishes[0], "S1", [mild, extra]), "P2": Product(dishes[1], "S1"),
                  "P3": Product(dishes[2], "S2")},
        locations={HOME: (120.558, 31.340), FAR: (120.700, 31.320)},
        delivery_times={len(golden_extra or []): (dt("2025-06-21 11:30"), dt("2025-06-21 11:58"))},
        read_tools={"get_user_historical_behaviors": {}, "get_delivery_store_info": {"required": ["store_id"]}},
        write_tools=frozenset({"create_delivery_order", "pay_delivery_order"}),
        depends={"create_delivery_order": frozenset(), "pay_delivery_order": frozenset({"create_delivery_order"})},
    )


def _calls(actions: list[str]) -> list[dict]:
    out = []
    for a in actions:
        try:
            out.append(json.loads(a))
        except json.JSONDecodeError:
            pass
    return out


def _create(actions: list[str]) -> dict:
    return next(c["arguments"] for c in _calls(actions) if c["name"] == "create_delivery_order")


EN_TASK = [
    f"The delivery address for the noodle order should be {HOME}",
    "The delivery time for the noodle order should be around 2025-06-21 12:00:00",
    "The noodle order should select Lao Wang Rice Noodles (Huchi Branch) as the merchant",
    "The noodle order cannot select Xiao Li Noodle House",
    "The noodle order should include Beef Rice Noodles",
    "The noodles should select mild spicy flavor",
    "The noodle order should include a note requesting no cilantro",
]
ZH_TASK = [
    f"米线订单的配送地址应为{HOME}",
    "米线订单的送达时间应在2025-06-21 12:00:00左右",
    "米线订单应选择老王米线（虎池店）作为商家",
    "米线订单不能选择小李面馆",
    "米线订单应包含牛肉米线",
    "米线应选择微辣口味",
    "米线订单需要备注不要香菜",
]


@pytest.mark.parametrize(("items", "zh"), [(EN_TASK, False), (ZH_TASK, True)], ids=["en", "zh"])
def test_variants_of_a_hand_written_task(items: list[str], zh: bool) -> None:
    ctx = _context(items, zh=zh)
    variants = {v.kind: v for v in build_variants(ctx, max_per_task=None)}
    labels = {k: v.label for k, v in variants.items()}
    assert labels == {
        "around_shift": "accept",
        "contradicting_note": "reject",
        "wrong_option": "reject",
        "wrong_product": "reject",
        "wrong_store": "reject",
        "late_delivery": "reject",
        "extra_reads": "accept",
        "wrong_address": "reject",
    }
    # each label names the item that justifies it
    assert variants["around_shift"].item_index == 1 and variants["late_delivery"].item_index == 1
    assert variants["wrong_address"].item_index == 0
    assert variants["wrong_store"].item_index == 2
    assert variants["wrong_product"].item_index == 4
    assert variants["wrong_option"].item_index == 5
    assert variants["contradicting_note"].item_index == 6
    # around T: the delivery lands 4 minutes off 12:00 (dispatch moved by the same amount)
    assert _create(variants["around_shift"].actions)["dispatch_time"] == "2025-06-21 11:36:00"
    # 3 hours after the bound
    assert _create(variants["late_delivery"].actions)["dispatch_time"] == "2025-06-21 14:32:00"
    assert _create(variants["wrong_address"].actions)["address"] == FAR
    assert _create(variants["wrong_store"].actions)["store_id"] == "S2"  # the forbidden store is not "named"
    assert _create(variants["wrong_product"].actions)["product_ids"] == ["P2"]
    assert _create(variants["wrong_option"].actions)["attributes"] == ["特辣" if zh else "Extra Spicy"]
    assert _create(variants["contradicting_note"].actions)["note"] == ("请务必加香菜" if zh else "Extra cilantro")
    inserted = [c["name"] for c in _calls(variants["extra_reads"].actions)]
    assert inserted.count("get_user_historical_behaviors") == 1 and "get_delivery_store_info" in inserted


def test_examples_and_preferences_name_nothing() -> None:
    items = ["The noodle order should include sour items such as Beef Rice Noodles",
             "The noodle order should preferably be from Lao Wang Rice Noodles (Huchi Branch)",
             "The delivery address for Beef Rice Noodles should be " + HOME]
    kinds = {v.kind for v in build_variants(_context(items), max_per_task=None)}
    assert not kinds & {"wrong_product", "wrong_store", "other_product"}


def test_a_required_query_is_dropped_and_never_moved() -> None:
    read = _call("get_user_historical_behaviors")
    items = ["Need to query the user's historical behavior to find the previously visited noodle shop"]
    variants = {v.kind: v for v in build_variants(_context(items, golden_extra=[read]), max_per_task=None)}
    assert variants["missing_query"].label == "reject" and variants["missing_query"].item_index == 0
    assert read not in variants["missing_query"].actions
    assert "reorder" not in variants  # the only read is the required one
    # without the item the read is independent: moved after the last call
    variants = {v.kind: v for v in build_variants(_context(["Anything"], golden_extra=[read]), max_per_task=None)}
    assert variants["reorder"].label == "accept"
    assert [c["name"] for c in _calls(variants["reorder"].actions)][-1] == "get_user_historical_behaviors"


def test_a_silent_rubric_accepts_another_product() -> None:
    items = [f"The delivery address should be {HOME}", "The estimated delivery time should be around 2025-06-21 12:00:00"]
    variants = {v.kind: v for v in build_variants(_context(items), max_per_task=None)}
    assert variants["other_product"].label == "accept"
    assert _create(variants["other_product"].actions)["product_ids"] == ["P2"]


def test_at_most_max_per_task_variants() -> None:
    assert len(build_variants(_context(EN_TASK), max_per_task=3)) == 3


# ----- rubric-silent deviations and unrequested writes -------------------------------------------
GOLD_ORDER = {"kind": "new", "order_id": "G1", "order_type": "delivery", "store_id": "S1", "status": "paid",
              "note": "No cilantro", "dispatch_time": "2025-06-21 11:30:00", "delivery_time": "2025-06-21 11:58:00",
              "lines": [{"product_id": "P1", "quantity": 1, "attributes": "Mild Spicy"}]}
SILENT_EN = [f"The delivery address should be {HOME}"]
SILENT_ZH = [f"配送地址应为{HOME}"]


def _gold_context(items: list[str], *, zh: bool = False, **gold) -> TaskContext:
    """The hand-written task with its expected state (``gold`` overrides fields of the gold order),
    a pre-existing delivered order O9 at store S2, and the ids the next records get."""
    ctx = _context(items, zh=zh)
    order = dict(GOLD_ORDER, **gold)
    if zh and "attributes" not in gold:
        order["lines"] = [dict(order["lines"][0], attributes="微辣")]
        order["note"] = gold.get("note", "不要香菜")
    ctx.expected = [{"orders": [order], "visits": []}]
    ctx.initial = [Record("orders", "O9", "S2", "delivered", "U1", [ctx.places["S2"].name, ctx.products["P3"].name])]
    ctx.next_ids = {"orders": "T1D02"}
    ctx.write_tools = ctx.write_tools | {"cancel_delivery_order"}
    return ctx


def _kinds(ctx: TaskContext) -> dict[str, labelled.Variant]:
    return {v.kind: v for v in build_variants(ctx, max_per_task=None)}


def _pay_calls(actions: list[str]) -> list[dict]:
    return [c for c in _calls(actions) if c["name"].startswith("pay_")]


@pytest.mark.parametrize(("items", "zh"), [(SILENT_EN, False), (SILENT_ZH, True)], ids=["en", "zh"])
def test_silent_deviations_where_the_rubric_is_silent(items: list[str], zh: bool) -> None:
    ctx = _gold_context(items, zh=zh)
    ctx.now = dt("2025-06-21 10:00")
    variants = _kinds(ctx)
    assert {k for k in variants if k in SILENT_KINDS} == set(SILENT_KINDS)
    assert all(variants[k].label == "accept" and labelled.LABELS[k] == "accept" for k in SILENT_KINDS)
    gold = ctx.expected[0]["orders"][0]
    # each differs from the gold in its one detail, and only there
    moved = _create(variants["silent_time"].actions)
    assert moved["dispatch_time"] == "2025-06-21 10:00:00"  # "now"
    assert abs((dt(moved["dispatch_time"][:16]) - dt(gold["dispatch_time"][:16])).total_seconds()) > 45 * 60
    assert {k: v for k, v in moved.items() if k != "dispatch_time"} == {
        k: v for k, v in _create(ctx.golden).items() if k != "dispatch_time"}
    assert _create(variants["silent_quantity"].actions)["product_cnts"] == [2]
    assert _create(variants["silent_option"].actions)["attributes"] == ["特辣" if zh else "Extra Spicy"]
    assert _create(variants["silent_note"].actions)["note"] == ""
    assert _pay_calls(variants["silent_payment"].actions) == [] and _pay_calls(ctx.golden)
    for k in SILENT_KINDS:
        assert variants[k].actions != ctx.golden and not variants[k].item


@pytest.mark.parametrize(
    ("item", "suppressed"),
    [
        ("The noodles should arrive before lunch", "silent_time"),
        ("The delivery time should be around 2025-06-21 12:00:00", "silent_time"),
        ("米线订单的送达时间应在2025年6月21日12点前", "silent_time"),
        ("米线要在午饭前送到", "silent_time"),
        ("The order should include two bowls of noodles", "silent_quantity"),
        ("米线订单应包含两碗米线", "silent_quantity"),
        ("The noodles should be mild", "silent_option"),
        ("The noodles should not be too spicy", "silent_option"),
        ("米线要微辣", "silent_option"),
        ("The order should remind the merchant to leave out cilantro", "silent_note"),
        ("米线订单需要备注", "silent_note"),
        ("The order should be paid", "silent_payment"),
        ("米线订单应完成支付", "silent_payment"),
        ("The noodle order should be successfully placed", "silent_payment"),
    ],
)
def test_an_item_about_the_detail_suppresses_its_silent_kind(item: str, suppressed: str) -> None:
    zh = labelled._is_zh(item)
    variants = _kinds(_gold_context([(SILENT_ZH if zh else SILENT_EN)[0], item], zh=zh))
    assert suppressed not in variants
    # the item says nothing of the other details, which still yield their kinds
    others = {"silent_time", "silent_payment"} - {suppressed}
    if suppressed != "silent_time" and "time" not in item and "午" not in item:
        assert others <= set(variants), (item, sorted(variants))


@pytest.mark.parametrize(
    ("gold", "absent"),
    [
        ({"dispatch_time": None, "delivery_time": None}, "silent_time"),  # the gold holds no time
        ({"dispatch_time": "2025-06-21 11:05:00", "delivery_time": "2025-06-21 11:33:00"}, None),
        ({"lines": [{"product_id": "P1", "quantity": 2, "attributes": "Mild Spicy"}]}, "silent_quantity"),
        ({"lines": [{"product_id": "P1", "quantity": 1, "attributes": ""}]}, "silent_option"),  # any option
        ({"note": None}, "silent_note"),
        ({"status": "unpaid"}, "silent_payment"),
        ({"store_id": "S2"}, "silent_note"),  # no gold order the call may be matched to
    ],
)
def test_no_silent_deviation_where_it_would_not_differ_from_the_gold(gold: dict, absent: str | None) -> None:
    variants = _kinds(_gold_context(SILENT_EN, **gold))
    if absent is None:  # "now" (11:00) is within 45 minutes of the gold: the next candidate is taken
        assert _create(variants["silent_time"].actions)["dispatch_time"] == "2025-06-21 13:00:00"
    else:
        assert absent not in variants


def test_silent_deviations_need_the_expected_states() -> None:
    assert not set(_kinds(_context(SILENT_EN))) & set(SILENT_KINDS + WRITE_KINDS)


def test_unrequested_writes() -> None:
    ctx = _gold_context(SILENT_EN)
    variants = _kinds(ctx)
    assert all(variants[k].label == "reject" for k in ("extra_order", "unrequested_cancel"))
    # one more order, of a product no expected state holds, paid as the golden route pays
    calls = _calls(variants["extra_order"].actions)
    creates = [c["arguments"] for c in calls if c["name"] == "create_delivery_order"]
    assert len(creates) == 2 and creates[1]["product_ids"] == ["P2"] and creates[1]["store_id"] == "S1"
    assert [c["arguments"]["order_id"] for c in _pay_calls(variants["extra_order"].actions)] == ["T1D01", "T1D02"]
    # the pre-existing order no expected state holds: looked up, then cancelled
    tail = [c["name"] for c in _calls(variants["unrequested_cancel"].actions)][-2:]
    assert tail == ["get_delivery_order_detail", "cancel_delivery_order"]
    assert variants["unrequested_cancel"].actions[-1] == ctx.golden[-1]  # the closing message stays last


@pytest.mark.parametrize(
    "item",
    [
        "The order should not come from Xiao Li Noodle House",  # names the record's store
        "Cancel the previous noodle order",  # a cancellation that names no id
        "The order O9 should stay as it is",
    ],
)
def test_no_unrequested_cancel_of_a_record_the_rubric_names(item: str) -> None:
    assert "unrequested_cancel" not in _kinds(_gold_context([SILENT_EN[0], item]))


def test_no_unrequested_cancel_of_a_record_an_expected_state_holds() -> None:
    ctx = _gold_context(SILENT_EN)
    ctx.expected[0]["orders"].append({"kind": "existing", "order_id": "O9", "store_id": "S2", "status": "delivered"})
    assert "unrequested_cancel" not in _kinds(ctx)


def _instore_context(items: list[str], visits_in_gold: int = 1) -> TaskContext:
    golden = [_call("create_instore_product_order", user_id="U1", shop_id="H1", product_id="Q1", quantity=1),
              _call("pay_instore_order", order_id="T1I01"),
              _call("instore_book", user_id="U1", shop_id="H1", time="2025-06-21 18:00:00", customer_count=2),
              _call("pay_instore_book", book_id="T1B01"), "Done. ###STOP###"]
    visit = {"kind": "new", "table": "books", "record_id": "GB", "shop_id": "H1", "status": "paid",
             "time": "2025-06-21 18:00:00", "customer_count": 2}
    return TaskContext(
        task_id="T2", nl_rubric=items, golden=golden, now=dt("2025-06-21 11:00"), user_id="U1",
        places={"H1": Place("Hot Pot House", ["Q1", "Q2"])},
        products={"Q1": Product("Set for Two", "H1"), "Q2": Product("Voucher 100", "H1")},
        expected=[{"orders": [{"kind": "new", "order_id": "GI", "order_type": "instore", "store_id": "H1",
                               "status": "paid", "lines": [{"product_id": "Q1", "quantity": 1}]}],
                   "visits": [visit] * visits_in_gold}],
        next_ids={"orders": "T1I02", "books": "T1B02", "reservations": "T1R01"},
        write_tools=frozenset({"create_instore_product_order", "pay_instore_order", "instore_book", "pay_instore_book"}),
    )


def test_in_store_variants() -> None:
    variants = _kinds(_instore_context(["The order should come from Hot Pot House"]))
    assert {"extra_order", "extra_visit", "silent_time", "silent_quantity", "silent_payment"} <= set(variants)
    books = [c for c in _calls(variants["extra_visit"].actions) if c["name"] == "instore_book"]
    assert len(books) == 2 and books[0] == books[1]
    assert [c["arguments"]["book_id"] for c in _pay_calls(variants["extra_visit"].actions)
            if c["name"] == "pay_instore_book"] == ["T1B01", "T1B02"]
    orders = [c["arguments"] for c in _calls(variants["extra_order"].actions) if c["name"] == "create_instore_product_order"]
    assert orders[-1]["product_id"] == "Q2"
    visit = next(c["arguments"] for c in _calls(variants["silent_time"].actions) if c["name"] == "instore_book")
    assert visit["time"] == "2025-06-21 11:00:00"
    # an expected state holding two bookings: a second one may be asked for
    assert "extra_visit" not in _kinds(_instore_context(["Anything"], visits_in_gold=2))


def test_groups_are_sampled_apart() -> None:
    ctx = _gold_context(SILENT_EN)
    for cap in (1, 2):
        variants = build_variants(ctx, max_per_task=cap)
        for group in ("targeted", "silent", "write"):
            assert sum(labelled.group_of(v.kind) == group for v in variants) == min(
                cap, sum(labelled.group_of(v.kind) == group for v in build_variants(ctx, max_per_task=None)))
    # the targeted kinds a task yields do not depend on the new groups
    assert [v.kind for v in build_variants(ctx) if labelled.group_of(v.kind) == "targeted"] == \
        [v.kind for v in build_variants(ctx, kinds=labelled.PRIORITY[:len(labelled.TARGETED_KINDS)])]


# ----- the scorer against the labels on the real files -------------------------------------------
@pytest.fixture(scope="module")
def file_results() -> dict:
    cache: dict = {}

    def get(key: str, scoring: str = "rubric"):
        rel, env_id = FILES[key]
        path = DATA_DIR / rel
        if not path.exists():
            pytest.skip(f"VitaBench data not found at {path} (set SERVICEGYM_VITABENCH_DIR to the vitabench data dir)")
        if (key, scoring) not in cache:
            cache[key, scoring] = check_file(str(path), env_id, seed=0, max_per_task=6, scoring=scoring)
        return cache[key, scoring]

    return get


def _print_figures(key: str, fr) -> list:
    outs = [o for t in fr.tasks for o in t.outcomes]
    ag = agreement(outs)
    print(f"\n{key} ({fr.scoring}): {len(fr.tasks)} tasks, oracle {sum(t.oracle for t in fr.tasks)}, {len(outs)} variants; "
          f"legal accepted {ag['accept'][0]}/{ag['accept'][1]}, violations rejected {ag['reject'][0]}/{ag['reject'][1]}, "
          f"rubric-silent accepted {ag['silent'][0]}/{ag['silent'][1]}")
    for kind, (a, n) in by_kind(outs).items():
        print(f"  {kind:20s} {a}/{n}")
    for o in outs:
        if not o.agrees:
            v = o.variant
            print(f"  DISAGREE {v.task_id} {v.kind} ({v.label}): scorer success={o.success} failed={o.failed}; "
                  f"{v.detail}; item {v.item_index}: {v.item}")
    return outs


def _rate(outs, label: str, skip: tuple[str, ...] = ()) -> tuple[int, int]:
    """Agreement on one label, the rubric-silent deviations (scope: rubric scoring) and the
    ``skip`` kinds apart."""
    chosen = [o for o in outs if o.variant.label == label and o.variant.kind not in SILENT_KINDS + skip and o.feasible]
    return sum(o.agrees for o in chosen), len(chosen)


SCORED = [(key, scoring) for key in FILES for scoring in ("rubric", "strict")]


@pytest.mark.parametrize(("key", "scoring"), SCORED)
def test_scorer_agrees_with_the_labelled_set(file_results, key: str, scoring: str) -> None:
    fr = file_results(key, scoring)
    outs = _print_figures(key, fr)
    assert sum(t.oracle for t in fr.tasks) >= 0.95 * len(fr.tasks)
    assert len(outs) >= len(fr.tasks)  # the check set is not trivially small
    assert all(o.variant.item for o in outs
               if o.variant.kind not in ("reorder", "extra_reads", "other_product", *SILENT_KINDS, *WRITE_KINDS))
    assert all(o.feasible for o in outs)
    a, n = _rate(outs, "accept")
    assert n and a >= 0.95 * n, f"legal variants accepted: {a}/{n}"
    a, n = _rate(outs, "reject", tuple(KNOWN_MISSES[scoring]))
    assert n and a >= 0.95 * n, f"violations rejected: {a}/{n}"
    if scoring == "rubric":
        a, n = agreement(outs)["silent"]
        assert a >= 0.95 * n, f"rubric-silent deviations accepted: {a}/{n}"


@pytest.mark.parametrize(("key", "scoring"), SCORED)
def test_scorer_rejects_every_kind_of_violation(file_results, key: str, scoring: str) -> None:
    outs = [o for t in file_results(key, scoring).tasks for o in t.outcomes]
    for kind, (a, n) in by_kind(o for o in outs if o.variant.label == "reject").items():
        if kind in KNOWN_MISSES[scoring]:
            # a known gap of the reader: it may miss a few (two, or a quarter of many), never more
            print(f"{key} ({scoring}) {kind}: {a}/{n} rejected (known: {KNOWN_MISSES[scoring][kind]})")
            assert n - a <= max(2, n // 4), f"{kind}: {a}/{n} rejected (a known gap, but wider than before)"
            continue
        assert a >= 0.95 * n, f"{kind}: {a}/{n} rejected"
    # an unrequested write fails the task under both scorings
    writes = [o for o in outs if o.variant.kind in WRITE_KINDS]
    assert writes and not any(o.success for o in writes)


# ----- the report --------------------------------------------------------------------------------
def test_fidelity_report_prints_the_table(tmp_path: Path) -> None:
    if not (DATA_DIR / FILES["delivery-en"][0]).exists():
        pytest.skip(f"VitaBench data not found at {DATA_DIR} (set SERVICEGYM_VITABENCH_DIR)")
    out = tmp_path / "fidelity.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fidelity_report.py"), "--data", str(DATA_DIR), "--out", str(out),
         "--max-tasks", "3", "--max-per-task", "3"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    header = ("| file | release | tasks | skipped | oracle | NL rubric checked by code | legal accepted | "
              "violations rejected | rubric-silent deviations accepted |")
    assert header in proc.stdout
    assert re.search(r"\| `delivery/tasks_en\.json` \| [\w-]+ \| 3 \|", proc.stdout)
    assert out.read_text(encoding="utf-8") == proc.stdout


def test_fidelity_report_under_strict_scoring(tmp_path: Path) -> None:
    if not (DATA_DIR / FILES["delivery-en"][0]).exists():
        pytest.skip(f"VitaBench data not found at {DATA_DIR} (set SERVICEGYM_VITABENCH_DIR)")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fidelity_report.py"), "--data", str(DATA_DIR), "--max-tasks", "2",
         "--max-per-task", "2", "--part", "build", "--scoring", "strict"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Scoring: `strict`" in proc.stdout
    # the rubric-silent column is no figure under strict scoring
    assert re.search(r"\| `delivery/tasks_en\.json` \| [^\n]* \| - \|\n", proc.stdout)


def test_fidelity_report_keeps_held_items_unread() -> None:
    """The held part is measured, not read: its report gives figures and counts, no item's text."""
    if not (DATA_DIR / FILES["delivery-en"][0]).exists():
        pytest.skip(f"VitaBench data not found at {DATA_DIR} (set SERVICEGYM_VITABENCH_DIR)")
    args = [sys.executable, str(ROOT / "scripts" / "fidelity_report.py"), "--data", str(DATA_DIR), "--max-tasks", "12",
            "--max-per-task", "2", "--part", "held"]
    blind = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert blind.returncode == 0, blind.stderr
    assert "## Disagreements" in blind.stdout and "| `delivery/tasks_en.json` |" in blind.stdout
    assert not re.search(r"^- `", blind.stdout, re.M), blind.stdout  # no item line of any section
    shown = subprocess.run(args + ["--show-held"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    withheld = blind.stdout.count("item texts withheld")
    assert withheld == 0 or re.search(r"^- `", shown.stdout, re.M)


def test_fidelity_report_without_data(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fidelity_report.py"), "--data", str(tmp_path / "none")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 2 and "no VitaBench data" in proc.stderr


@pytest.mark.parametrize("key", ["delivery-en", "instore-en"])
def test_new_kinds_end_to_end(key: str) -> None:
    """A few build-part tasks through the env under both scorings: the new variants run without
    tool errors, unrequested writes fail under both, rubric-silent deviations pass under rubric."""
    rel, env_id = FILES[key]
    path = DATA_DIR / rel
    if not path.exists():
        pytest.skip(f"VitaBench data not found at {path} (set SERVICEGYM_VITABENCH_DIR to the vitabench data dir)")
    env, applied = labelled.make_env(env_id, str(path), "strict")
    env.close()
    if not applied:
        pytest.skip(f"{env_id} takes no scoring argument yet")
    for scoring in ("rubric", "strict"):
        fr = check_file(str(path), env_id, max_per_task=6, max_tasks=4, part="build", scoring=scoring)
        assert fr.scoring_applied
        outs = [o for t in fr.tasks for o in t.outcomes if o.variant.kind in SILENT_KINDS + WRITE_KINDS]
        assert all(o.feasible and o.tool_errors == 0 for o in outs)
        writes = [o for o in outs if o.variant.kind in WRITE_KINDS]
        assert writes and not any(o.success for o in writes), [o.variant.detail for o in writes if o.success]
        silent = [o for o in outs if o.variant.kind in SILENT_KINDS]
        assert silent
        if scoring == "rubric":
            assert all(o.success for o in silent), [(o.variant.task_id, o.variant.detail, o.failed) for o in silent]


def test_time_items_the_golden_route_misses() -> None:
    from servicegym.envs.tasks.vitabench.labelled import golden_time_misses

    items = ["The delivery time should be around 2025-06-21 15:00:00",  # golden: 11:58
             "The delivery time should be before 2025-06-21 11:10:00",  # no order could arrive before 11:28
             "The delivery time should be around 2025-06-21 12:00:00"]  # met
    misses = {m.bound.index: m for m in golden_time_misses(_context(items))}
    assert set(misses) == {0, 1}
    assert misses[0].golden == [dt("2025-06-21 11:58")] and misses[0].earliest is None
    assert misses[1].earliest == dt("2025-06-21 11:28")
