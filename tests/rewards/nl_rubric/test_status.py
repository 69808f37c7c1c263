"""Status items (``rewards/nl_rubric/status.py``): cancelled or paid records."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import HOME_ORDER, K, compile_in, compiles_to, left_to_the_judge

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # status
    ("base", "Successfully cancel the tea order with id M0000001O01, the order status should be changed to cancelled", "status", lambda s: (s.status, s.record_id) == ("cancelled", "M0000001O01")),
    ("base", "Cancel the order with order ID M0000001O01", "status", lambda s: s.record_id == "M0000001O01"),
    ("base", "The tea order status should be cancelled", "status", lambda s: s.record_id == "" and "tea" in s.about),
    ("base", "成功取消用户的奶茶订单，订单状态应变更为已取消", "status", lambda s: s.status == "cancelled"),
    ("base", "需要将order_id为M0000001O01的订单取消", "status", lambda s: s.record_id == "M0000001O01"),
    ("base", "The noodle order should be paid", "status", lambda s: s.status == "paid"),
    # a lead word before the cancelling, with no status phrase after it
    ("base", "Successfully canceled the user's tea order from Tea Corner, order number M0000001O01", "status", lambda s: (s.status, s.record_id) == ("cancelled", "M0000001O01")),
    ("base", "Need to cancel the order with order_id M0000001O02", "status", lambda s: s.record_id == "M0000001O02"),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_status_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "Cancel the noodle order and re-order two bowls"),  # more than a status
    ("base", "Successfully ordered noodles after the user canceled the tea"),  # cancelling is not what is asked
    ("base", "Need to not cancel the order M0000001O01"),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_status_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_status_checks() -> None:
    holds = nl_rubric.spec_holds
    cancelled = nl_rubric.RecordFacts(table="orders", record_id="M0000001O01", place_id="S2", status="cancelled")
    assert holds(K("Cancel the order with order ID M0000001O01"), cancelled, None)
    assert not holds(K("Cancel the order with order ID M0000001O01"), HOME_ORDER, None)
