"""Property: a call that is not executed leaves the world exactly as it was, and every call is logged.

Sequences mix random tool names (unknown ones and aliases included), garbage arguments, and
well-formed calls built from the world's own ids, so that executed writes change the state the
later failed calls are checked against.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from servicegym.world_state.core import History
from servicegym.world_state.delivery import TOOLS
from servicegym.world_state.tools import Toolkit
from tests.conftest import HOME, NOW, UNPAID_ORDER, USER_ID, WORK

KIT = Toolkit(TOOLS, check_postconditions=True)
PARAM_NAMES = sorted({p for s in KIT.specs.values() for p in s.parameters["properties"]})
STORE_IDS = ["S001", "S002", "S003", "S004", "S999"]
PRODUCT_IDS = [f"P{i:03d}" for i in range(1, 13)] + ["P999"]
ORDER_IDS = [UNPAID_ORDER, "ORD-PAID-1", "T1D01", "T1D02", "T1D03", "nope"]
ADDRESSES = [HOME, WORK, "Kunming", "somewhere unknown", ""]
TIMES = [NOW, "2025-06-21 11:00:00", "2025-06-21 18:30:00", "2025-06-22 01:00:00", "2025-06-21 25:00:00", "soon"]

ids = st.sampled_from(STORE_IDS + PRODUCT_IDS + ORDER_IDS + ADDRESSES + TIMES + [USER_ID])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 100),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    ids,
)
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.dictionaries(st.text(max_size=4), scalars, max_size=2))
garbage_args = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.one_of(st.sampled_from(PARAM_NAMES), st.text(max_size=8)), values, max_size=6),
)
names = st.one_of(
    st.sampled_from(KIT.names + list(KIT.aliases) + ["no_such_tool", "", " pay_delivery_order"]),
    st.text(max_size=20),
    st.integers(),
    st.none(),
)


@st.composite
def well_formed(draw) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(["create", "order", "modify", "search", "read", "geo"]))
    if kind == "create":
        store = draw(st.sampled_from(STORE_IDS[:4]))
        own = [f"P{i:03d}" for i in range(1, 13) if (i - 1) // 3 == int(store[1:]) - 1]
        pids = draw(st.lists(st.sampled_from(own + ["P001"]), min_size=1, max_size=3))
        args = {
            "user_id": draw(st.sampled_from([USER_ID, USER_ID, "U2"])),
            "store_id": store,
            "product_ids": pids,
            "product_cnts": [draw(st.integers(0, 3)) for _ in pids],
            "address": draw(st.sampled_from(ADDRESSES)),
            "dispatch_time": draw(st.sampled_from(TIMES)),
        }
        if draw(st.booleans()):
            args["attributes"] = draw(st.lists(st.sampled_from(["", "mild", "extra spicy"]), max_size=len(pids)))
        if draw(st.booleans()):
            args["note"] = draw(st.text(max_size=10))
        return "create_delivery_order", args
    if kind == "order":
        name = draw(st.sampled_from(["pay_delivery_order", "cancel_delivery_order", "get_delivery_order_status",
                                     "get_delivery_order_detail"]))
        return name, {"order_id": draw(st.sampled_from(ORDER_IDS))}
    if kind == "modify":
        return "modify_delivery_order", {"order_id": draw(st.sampled_from(ORDER_IDS)), "note": draw(st.text(max_size=8))}
    if kind == "search":
        name = draw(st.sampled_from(["delivery_store_search_recommend", "delivery_product_search_recommand",
                                     "search_delivery_orders"]))
        if name == "search_delivery_orders":
            return name, {"user_id": USER_ID, "status": draw(st.sampled_from(["unpaid", "paid", "cancelled"]))}
        return name, {"keywords": draw(st.lists(st.text(max_size=8), max_size=3)), "top_k": draw(st.integers(-1, 60))}
    if kind == "read":
        if draw(st.booleans()):
            return "get_delivery_store_info", {"store_id": draw(st.sampled_from(STORE_IDS))}
        return "get_delivery_product_info", {"product_id": draw(st.sampled_from(PRODUCT_IDS))}
    name = draw(st.sampled_from(["address_to_longitude_latitude", "weather", "get_nearby",
                                 "longitude_latitude_to_distance", "get_holiday_date", "get_date_holiday_info"]))
    coord = st.floats(-200, 200, allow_nan=False)
    if name == "address_to_longitude_latitude":
        return name, {"address": draw(st.sampled_from(ADDRESSES))}
    if name == "weather":
        return name, {"address": "Kunming", "date_start": draw(st.sampled_from(["2025-06-21", "bad"])),
                      "date_end": "2025-06-22"}
    if name == "get_nearby":
        return name, {"longitude": draw(coord), "latitude": draw(coord), "range": draw(st.floats(0, 20000))}
    if name == "get_holiday_date":
        return name, {"year": draw(st.sampled_from(["2025", "1999", "twenty", "²", "9" * 5000, "10000"])),
                      "holiday_name": draw(st.sampled_from(["Spring Festival", "Dragon Boat", "x"]))}
    if name == "get_date_holiday_info":
        return name, {"date": draw(st.sampled_from(["2025-10-01", "2025-13-01", ""]))}
    return name, {k: draw(coord) for k in ("longitude1", "latitude1", "longitude2", "latitude2")}


calls = st.lists(st.one_of(st.tuples(names, garbage_args), well_formed(), well_formed()), min_size=1, max_size=25)


@given(sequence=calls)
def test_failed_calls_leave_the_world_unchanged(initial_world, sequence):
    world, history = initial_world.copy(), History()
    for i, (name, arguments) in enumerate(sequence):
        before = world.state_dict()
        result = KIT.call(world, history, name, arguments, step=i, call_id=f"c{i}")
        after = world.state_dict()
        assert result.outcome in ("executed", "rejected", "error")
        assert isinstance(result.content, str) and result.content
        if not result.ok:
            assert after == before, (name, arguments, result.content)
        spec = KIT.resolve(name) if isinstance(name, str) else None
        if spec is not None and spec.kind != "write":
            assert after == before, f"read tool {spec.name} changed the world"
        assert len(history) == i + 1
        entry = history.entries[-1]
        assert entry.kind == "tool_call" and entry.step == i and entry.call_id == f"c{i}"
        assert entry.outcome == result.outcome and entry.content == result.content
        assert entry.name == (spec.name if spec is not None else str(name))
        assert entry.arguments == (arguments if isinstance(arguments, dict) else {"_raw": arguments})


@given(sequence=st.lists(well_formed(), min_size=1, max_size=30))
def test_well_formed_calls_never_error(initial_world, sequence):
    """Calls with well-typed arguments are executed or refused with a reason, never crash a tool."""
    world, history = initial_world.copy(), History()
    for name, arguments in sequence:
        result = KIT.call(world, history, name, arguments)
        assert result.outcome != "error", (name, arguments, result.content)
