"""world_state.tools: schema derivation, the Toolkit's call protocol, the dependency graph."""

from __future__ import annotations

import json
from typing import Literal, Optional

import pytest

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.delivery import DELIVERY_TOOLS, TOOLS
from servicegym.world_state.life import SHARED_TOOLS
from servicegym.world_state.tools import (
    Postcondition,
    ToolError,
    Toolkit,
    dependency_graph,
    exists,
    field_in,
    requires_prior_call,
    rule,
    tool,
)
from tests.conftest import OPEN_STORE


class Box(Entity):
    id: str
    colour: str = "red"
    count: int = 0


class BoxWorld(World):
    schema = {"boxes": Box}


def _box_world() -> BoxWorld:
    from datetime import datetime

    return BoxWorld(datetime(2025, 1, 1), {"boxes": {"b1": Box(id="b1"), "b2": Box(id="b2", colour="blue")}})


@tool(kind="read")
def list_boxes(world: BoxWorld) -> list:
    """All boxes."""
    return list(world.table("boxes"))


@tool(
    kind="write",
    pre=[
        exists("boxes", "box_id", "box", produced_by=["list_boxes"]),
        requires_prior_call("inspect_box", "box_id"),
        field_in("boxes", "box_id", "box", ["red", "green"], attr="colour"),
        rule("count must be positive", lambda w, h, a: None if a["count"] > 0 else "count must be positive"),
    ],
    post=[
        Postcondition("the colour is the new colour",
                      lambda w, a, r, b: None if w.table("boxes").require(a["box_id"]).colour == a["colour"] else "no")
    ],
    aliases=["paint_box_old"],
)
def paint_box(
    world: BoxWorld,
    box_id: str,
    colour: Literal["red", "green", "blue"],
    count: int,
    note: Optional[str] = None,
    tags: list[str] | None = None,
    ratio: float = 0.5,
) -> Box:
    """Paint a box in a new colour.

    Args:
        box_id: Which box.
        colour: The new colour,
            one of three.
        count: Number of coats.
        note: Free text.
        tags: Labels.
        ratio: Mixing ratio.
    """
    if note == "boom":
        raise RuntimeError("paint exploded")
    if note == "refuse":
        world.table("boxes").update(box_id, count=99)  # changed before refusing: must be undone
        raise ToolError("the painter refuses")
    world.table("boxes").update(box_id, count=count)
    if note == "lie":
        return world.table("boxes").require(box_id)  # skips the colour change: post-condition fails
    return world.table("boxes").update(box_id, colour=colour)


@tool(kind="read", pre=[exists("boxes", "box_id", "box", produced_by=["list_boxes"])])
def inspect_box(world: BoxWorld, box_id: str) -> Box:
    """One box.

    Args:
        box_id: Which box.
    """
    return world.table("boxes").require(box_id)


BOX_TOOLS = [list_boxes, paint_box, inspect_box]


def test_schema_is_derived_from_signature_and_docstring():
    params = paint_box.parameters
    assert paint_box.schema["type"] == "function"
    assert paint_box.schema["function"]["name"] == "paint_box"
    assert paint_box.schema["function"]["parameters"] is params
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert sorted(params["required"]) == ["box_id", "colour", "count"]
    props = params["properties"]
    assert list(props) == ["box_id", "colour", "count", "note", "tags", "ratio"]
    assert props["colour"]["enum"] == ["red", "green", "blue"]
    assert props["colour"]["description"] == "The new colour, one of three."
    assert props["count"]["type"] == "integer"
    assert props["note"]["type"] == "string", "Optional[str] is flattened to its non-null type"
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "Labels."}
    assert props["ratio"]["default"] == 0.5 and props["ratio"]["type"] == "number"
    assert all("title" not in p for p in props.values()) and "title" not in params
    json.dumps(paint_box.schema)


def test_description_carries_pre_and_post_conditions():
    desc = paint_box.schema["function"]["description"]
    assert desc.startswith("Paint a box in a new colour.")
    assert "Pre-conditions: the box must exist; `inspect_box` must have been called earlier" in desc
    assert "count must be positive" in desc
    assert "Post-conditions: the colour is the new colour." in desc
    assert "Pre-conditions" not in list_boxes.schema["function"]["description"]
    assert paint_box.usage == (
        'paint_box(box_id: string, colour: "red"|"green"|"blue", count: integer, note?: string, '
        "tags?: list[string], ratio?: number)"
    )


def test_delivery_tool_schemas():
    kit = Toolkit(TOOLS)
    assert len(SHARED_TOOLS) == 8 and len(DELIVERY_TOOLS) == 12 and len(kit) == 20
    for schema in kit.schemas():
        fn = schema["function"]
        assert fn["parameters"]["additionalProperties"] is False, fn["name"]
        assert fn["description"], fn["name"]
        for name, prop in fn["parameters"]["properties"].items():
            assert prop.get("description"), f"{fn['name']}.{name} has no description"
        json.dumps(schema)
    create = kit.resolve("create_delivery_order")
    assert create.kind == "write"
    assert sorted(create.parameters["required"]) == sorted(
        ["user_id", "store_id", "product_ids", "product_cnts", "address", "dispatch_time"]
    )
    assert create.parameters["properties"]["product_cnts"]["items"] == {"type": "integer"}
    desc = create.description
    assert "Pre-conditions:" in desc and "the store must be open at dispatch_time" in desc
    assert "Post-conditions: a new unpaid order is stored" in desc
    modify = kit.resolve("modify_delivery_order").description
    assert "`get_delivery_order_detail` must have been called earlier for the same order" in modify
    status_enum = kit.resolve("search_delivery_orders").parameters["properties"]["status"]["enum"]
    assert "unpaid" in status_enum and "cancelled" in status_enum
    kinds = {s.name: s.kind for s in kit.specs.values()}
    assert {n for n, k in kinds.items() if k == "write"} == {
        "create_delivery_order", "pay_delivery_order", "cancel_delivery_order", "modify_delivery_order"
    }


def test_aliases_resolve(world):
    kit = Toolkit(TOOLS)
    assert "delivery_store_search_recommand" in kit
    assert kit.resolve("delivery_store_search_recommand") is kit.resolve("delivery_store_search_recommend")
    assert kit.resolve("delivery_product_search_recommand").name == "delivery_product_search_recommend"
    assert "delivery_store_search_recommand" not in kit.names, "aliases are not offered as tools"
    h = History()
    r = kit.call(world, h, "delivery_store_search_recommand", {"keywords": ["noodles"]})
    assert r.ok and r.name == "delivery_store_search_recommend"
    assert OPEN_STORE in r.content
    assert h.entries[-1].name == "delivery_store_search_recommend"


def test_duplicate_tool_names_refused():
    with pytest.raises(ValueError, match="duplicate"):
        Toolkit([list_boxes, list_boxes])


@pytest.fixture
def box_kit() -> Toolkit:
    return Toolkit(BOX_TOOLS, check_postconditions=True)


def test_call_protocol_outcomes(box_kit):
    w, h = _box_world(), History()
    r = box_kit.call(w, h, "paint_box", {"box_id": "b1", "colour": "green", "count": 2})
    assert r.outcome == "rejected" and "call `inspect_box` for box_id 'b1' first" in r.content
    assert box_kit.call(w, h, "inspect_box", {"box_id": "b1"}).ok
    r = box_kit.call(w, h, "paint_box", {"box_id": "b1", "colour": "green", "count": 2})
    assert r.ok and json.loads(r.content) == {"id": "b1", "colour": "green", "count": 2}
    r = box_kit.call(w, h, "paint_box_old", {"box_id": "b1", "colour": "red", "count": 1})
    assert r.ok and r.name == "paint_box"
    assert [e.outcome for e in h] == ["rejected", "executed", "executed", "executed"]


@pytest.mark.parametrize(
    ("name", "arguments", "outcome", "expected"),
    [
        ("no_such_tool", {}, "rejected", "unknown tool 'no_such_tool'. Available tools: list_boxes, paint_box"),
        ("paint_box", "b1", "rejected", "arguments of paint_box must be a JSON object. Usage: paint_box("),
        ("paint_box", {"box_id": "b1"}, "rejected", "colour: Field required"),
        ("paint_box", {"box_id": "b1", "colour": "pink", "count": 1}, "rejected", "colour: Input should be 'red'"),
        ("paint_box", {"box_id": "b1", "colour": "red", "count": 1, "size": 3}, "rejected", "size: unknown argument"),
        ("paint_box", {"box_id": "b9", "colour": "red", "count": 1}, "rejected", "box 'b9' does not exist"),
        ("paint_box", {"box_id": "b2", "colour": "red", "count": 1}, "rejected", "box b2 has colour 'blue'"),
        ("paint_box", {"box_id": "b1", "colour": "red", "count": 0}, "rejected", "count must be positive"),
        ("paint_box", {"box_id": "b1", "colour": "red", "count": 1, "note": "refuse"}, "rejected", "painter refuses"),
        ("paint_box", {"box_id": "b1", "colour": "red", "count": 1, "note": "boom"}, "error",
         "paint_box failed: RuntimeError: paint exploded"),
        ("paint_box", {"box_id": "b1", "colour": "green", "count": 1, "note": "lie"}, "error",
         "failed its post-condition (the colour is the new colour)"),
    ],
)
def test_failed_calls_say_why_and_leave_world_unchanged(box_kit, name, arguments, outcome, expected):
    w, h = _box_world(), History()
    for box in ("b1", "b2"):
        assert box_kit.call(w, h, "inspect_box", {"box_id": box}).ok
    before = w.state_dict()
    r = box_kit.call(w, h, name, arguments)
    assert r.outcome == outcome
    assert expected in r.content
    assert w.state_dict() == before
    last = h.entries[-1]
    assert last.outcome == outcome and last.content == r.content
    if not isinstance(arguments, dict):
        assert last.arguments == {"_raw": arguments}
    if "invalid arguments" in r.content or "must be a JSON object" in r.content:
        assert "Usage: paint_box(box_id: string" in r.content


def test_postconditions_only_checked_when_asked():
    kit = Toolkit(BOX_TOOLS)  # check_postconditions=False
    w, h = _box_world(), History()
    kit.call(w, h, "inspect_box", {"box_id": "b1"})
    r = kit.call(w, h, "paint_box", {"box_id": "b1", "colour": "green", "count": 1, "note": "lie"})
    assert r.ok


def test_dependency_graph_of_toy_tools():
    g = dependency_graph(Toolkit(BOX_TOOLS))
    assert g.nodes == ("list_boxes", "paint_box", "inspect_box")
    assert set(g.edges) == {("list_boxes", "paint_box"), ("inspect_box", "paint_box"), ("list_boxes", "inspect_box")}
    assert g.density == pytest.approx(3 / 6)


def test_delivery_dependency_graph():
    g = dependency_graph(Toolkit(TOOLS))
    v, e = len(g.nodes), len(g.edges)
    assert v == 20
    # pinned: a change to the delivery pre-conditions' ``after`` tools must update this on purpose
    assert e == 31
    assert g.density == pytest.approx(e / (v * (v - 1)))
    assert g.summary() == {"V": 20, "E": 31, "density": pytest.approx(31 / 380)}
    kit = Toolkit(TOOLS)
    derived = {
        (kit.resolve(a).name, spec.name)
        for spec in kit.specs.values()
        for p in spec.pre
        for a in p.after
        if kit.resolve(a) is not None and kit.resolve(a).name != spec.name
    }
    assert set(g.edges) == derived and list(g.edges) == sorted(derived)
    assert len(set(g.edges)) == e and all(a != b for a, b in g.edges)
    assert all(a in g.nodes and b in g.nodes for a, b in g.edges)
    edges = set(g.edges)
    assert ("get_delivery_order_detail", "modify_delivery_order") in edges
    assert ("get_delivery_order_status", "modify_delivery_order") not in edges
    assert ("get_delivery_order_status", "cancel_delivery_order") in edges
    assert ("create_delivery_order", "pay_delivery_order") in edges
    assert ("delivery_store_search_recommend", "create_delivery_order") in edges
    # the shared generic tools have no pre-conditions: nothing must precede them
    for generic in ("weather", "longitude_latitude_to_distance", "address_to_longitude_latitude"):
        assert not any(b == generic for _, b in edges)
