"""The write-step paths of issue 29's step bound keep the behaviour they replace: ``History.results_of``
is the result texts a scan of the history finds (kept up to date incrementally, so the in-store
"looked up earlier" pre-condition reads the lookups' results alone), and ``round2``, the one money helper
the domains share, is ``round(float(x) + 0.0, 2)`` for every input. No timings: counts and equalities only."""

from __future__ import annotations

import math
import random

import pytest

from servicegym.world_state.core import History, round2
from servicegym.world_state.instore.tools import looked_up
from servicegym.world_state.payments.entities import money


def _scan(h: History, tools: tuple[str, ...]) -> list[str]:
    return [e.content for e in h.entries if e.kind == "tool_call" and e.name in tools and e.outcome == "executed"]


def test_results_of_is_the_scan_of_the_history_kept_up_to_date():
    h = History()
    tools = ("get_a", "get_b")
    assert h.results_of(tools) == []
    h.append(step=0, time="t", kind="message", role="user", content='"X1"')
    h.add_call(1, "t", "get_a", {"id": "X1"}, "executed", '{"id": "X1"}', "call_1")
    h.add_call(1, "t", "get_a", {"id": "X2"}, "rejected", '"X2"', "call_2")
    h.add_call(1, "t", "get_c", {"id": "X3"}, "executed", '{"id": "X3"}', "call_3")
    assert h.results_of(tools) == _scan(h, tools) == ['{"id": "X1"}']
    h.append(step=2, time="t", kind="tool_call", name="get_b", arguments={"id": "X4"}, outcome="executed",
             content='{"id": "X4"}')
    h.add_call(3, "t", "get_b", {"id": "X5"}, "executed", '{"id": "X5"}', "call_4")
    assert h.results_of(tools) == _scan(h, tools) == ['{"id": "X1"}', '{"id": "X4"}', '{"id": "X5"}']
    assert h._results[tools][0] == len(h.entries), "every entry is scanned once, then only the new ones"
    assert h.results_of(("get_c",)) == ['{"id": "X3"}'], "each set of tools has its own list"


def test_looked_up_answers_as_the_scan_did_and_reads_only_its_tools_results():
    rule = looked_up(("get_r",), "reservation_id", "reservation")
    h = History()
    for i in range(50):  # many other calls: they are not read again at every check
        h.add_call(i, "t", "modify_r", {"reservation_id": "R1"}, "executed", '{"reservation_id": "R1"}', f"c{i}")
    assert rule.check(None, h, {"reservation_id": "R1"}) is not None
    h.add_call(60, "t", "get_r", {}, "executed", '[{"reservation_id": "R10"}]', "c60")
    assert rule.check(None, h, {"reservation_id": "R1"}) is not None, '"R1" is not "R10"'
    assert rule.check(None, h, {"reservation_id": "R10"}) is None
    assert h.results_of(("get_r",)) == ['[{"reservation_id": "R10"}]']
    h.add_call(61, "t", "get_r", {}, "rejected", '"R1"', "c61")
    assert rule.check(None, h, {"reservation_id": "R1"}) is not None, "a rejected call's text does not count"
    h.add_call(62, "t", "get_r", {}, "executed", '[{"reservation_id": "R1"}]', "c62")
    assert rule.check(None, h, {"reservation_id": "R1"}) is None


def _reference(x):
    return round(float(x) + 0.0, 2)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b) and type(a) is type(b))


@pytest.mark.parametrize("x", [0.0, -0.0, 1.005, 2.675, -2.675, 0.1 + 0.2, 90.0, 1e16, -1e-9, 0.125, 0.375,
                               math.inf, -math.inf, math.nan, 0, -3, 7, True, False, 10**20])
def test_round2_is_round_to_the_cent(x):
    assert _same(round2(x), _reference(x)), x
    assert _same(money(x), _reference(x)), x


def test_round2_agrees_on_random_floats():
    rng = random.Random(29)
    values = [rng.uniform(-1e4, 1e4) for _ in range(500)] + [rng.randint(-10**6, 10**6) / 100 for _ in range(500)]
    for x in values:
        assert _same(round2(x), _reference(x)), x
    with pytest.raises((TypeError, ValueError)):
        round2("not a number")
