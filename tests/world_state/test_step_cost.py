"""The step's cheap paths keep the behaviour they replace: one undo journal per world (a
transaction's cost does not grow with the number of tables), table stamps and the text cache
built on them (a cached read always shows the current state, in every episode), and the
parsed-argument fast path (oversized arguments are still refused)."""

from __future__ import annotations

import json
import pickle
from typing import Any

import gymnasium as gym

import servicegym  # noqa: F401  registers the ids
from servicegym.world_state.core import History
from servicegym.world_state.delivery import TOOLS, build_delivery_world
from servicegym.world_state.tools import MAX_ARGUMENT_CHARS, Toolkit, tool
from tests.conftest import OPEN_STORE, VEG_SOUP, make_delivery_spec


def _call(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def _result(obs: str) -> dict:
    assert obs.startswith("<tool_result"), obs[:300]
    return json.loads(obs[obs.index(">") + 1 : obs.rindex("</tool_result>")])


def test_a_transaction_journals_every_table_of_its_world_and_no_other():
    world = build_delivery_world(make_delivery_spec())
    copy = world.copy()
    txn = copy.begin()
    journals = {id(t.journal) for t in copy.tables.values()}
    assert len(journals) == 1 and copy.table("orders").journal is txn.journal
    assert all(t.journal is None for t in world.tables.values()), "the original is not in the copy's transaction"
    copy.table("products").update(VEG_SOUP, price=99.0)
    assert [key for _, key, _ in txn.journal] == [VEG_SOUP]
    copy.rollback(txn)
    assert copy.table("products").require(VEG_SOUP).price == world.table("products").require(VEG_SOUP).price
    assert all(t.journal is None for t in copy.tables.values())


def test_stamps_name_a_tables_content():
    world = build_delivery_world(make_delivery_spec())
    copy = world.copy()
    products = world.table("products")
    assert copy.table("products").stamp == products.stamp, "a shared copy has the same rows"
    copy.table("products").update(VEG_SOUP, price=99.0)
    assert copy.table("products").stamp != products.stamp
    before = copy.table("orders").stamp
    txn = copy.begin()
    copy.table("orders").delete(next(iter(copy.table("orders").rows)))
    copy.rollback(txn)
    assert copy.table("orders").stamp != before, "a rollback takes a new stamp"
    # stamps are unique within a process only: an unpickled world takes new ones and an empty cache
    copy.cached_text("k", ("products",), lambda: "text")
    loaded = pickle.loads(pickle.dumps(copy))
    assert loaded._texts == {} and loaded.table("products").stamp != copy.table("products").stamp
    assert {id(t._log) for t in loaded.tables.values()} == {id(loaded._journal)}
    assert loaded.table("products").require(VEG_SOUP).price == 99.0


def test_cached_text_is_rebuilt_when_a_table_changes():
    world = build_delivery_world(make_delivery_spec())
    builds = []

    def build() -> str:
        builds.append(1)
        return str(world.table("products").require(VEG_SOUP).price)

    assert world.cached_text("p", ("products", "stores"), build) == world.cached_text("p", ("products", "stores"), build)
    assert len(builds) == 1
    world.table("products").update(VEG_SOUP, price=42.0)
    assert world.cached_text("p", ("products", "stores"), build) == "42.0" and len(builds) == 2


def test_a_cached_store_read_shows_each_episodes_own_state():
    env = gym.make("servicegym/Delivery-v0", max_steps=100)
    u = env.unwrapped
    tid = u.task_ids("test")[0]
    env.reset(seed=0, options={"task_id": tid})
    store = next(iter(u.world.table("stores").rows))
    product = u.world.products_of(store)[0]
    read = _call("get_delivery_store_info", store_id=store)

    def quantity(obs: str) -> object:
        return next(p["quantity"] for p in _result(obs)["products"] if p["product_id"] == product.product_id)

    first = env.step(read)[0]
    assert _result(env.step(read)[0]) == _result(first)
    u.world.table("products").update(product.product_id, quantity=7)  # what a write does, through the table
    assert quantity(env.step(read)[0]) == 7
    env.reset(seed=0, options={"task_id": tid})
    assert env.step(read)[0] == first, "the next episode starts from the task's own state"


def test_a_cached_file_read_shows_a_write():
    env = gym.make("servicegym/Workspace-v0", max_steps=100)
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
    path = next(p for p in u.world.table("files").rows if p.endswith(".md"))
    read = _call("read_file", path=path)
    old = _result(env.step(read)[0])["content"]
    obs = env.step(_call("write_file", path=path, content="# replaced\n", overwrite=True))[0]
    assert obs.startswith("<tool_result"), obs[:300]
    assert _result(env.step(read)[0])["content"] == "# replaced" != old
    # a failed write (a pre-condition or the tool refuses) leaves the file and its read as they were
    env.step(_call("write_file", path=path, content="x", overwrite=False))
    assert _result(env.step(read)[0])["content"] == "# replaced"


def test_historical_behaviors_follow_the_worlds_value():
    kit = Toolkit(TOOLS)
    world = build_delivery_world(make_delivery_spec())
    first = kit.call(world, History(), "get_user_historical_behaviors", {})
    world.extra["user_historical_behaviors"] = {"likes": ["soup"]}
    second = kit.call(world, History(), "get_user_historical_behaviors", {})
    assert first.ok and second.ok and json.loads(second.content) == {"likes": ["soup"]}


def test_plain_arguments_over_the_size_limit_are_still_refused():
    kit = Toolkit(TOOLS)
    world = build_delivery_world(make_delivery_spec())
    before = world.state_dict()
    r = kit.call(world, History(), "get_delivery_store_info", {"store_id": "S" * (MAX_ARGUMENT_CHARS + 1)})
    assert r.outcome == "rejected" and "over" in r.content and "characters" in r.content
    assert kit.call(world, History(), "get_delivery_store_info", {"store_id": OPEN_STORE}).ok
    assert world.state_dict() == before


def test_rows_encode_as_their_pydantic_dump_in_every_env():
    # tool results encode rows from their field dict when it is plain JSON: the same text as the dump
    from pydantic import BaseModel

    from servicegym.world_state.tools import dumps

    for env_id in sorted(servicegym.ENV_IDS):
        env = gym.make(env_id, max_steps=10**6, max_errors=10**6)
        u = env.unwrapped
        env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
        for action in u.task.golden_actions:  # the writes of a golden route: rows made by tools
            if any(env.step(action)[2:4]):
                break
        for table in u.world.tables.values():
            for row in list(table)[:50]:
                pydantic_dump = BaseModel.model_dump(row, mode="json")  # pydantic's own serializer
                assert json.dumps(row.model_dump(mode="json")) == json.dumps(pydantic_dump), (env_id, table.name)
                assert dumps(row) == json.dumps(pydantic_dump, ensure_ascii=False), (env_id, table.name)
                view = row.model_dump(mode="json")
                for value in view.values():
                    if isinstance(value, list):
                        value.append("changed")  # a dump is the caller's: changing it leaves the row as it was
                assert BaseModel.model_dump(row, mode="json") == pydantic_dump


def test_object_arguments_are_taken_as_parsed_but_copied_and_bounded():
    @tool("write")
    def stash(world, data: dict[str, Any], note: str = "") -> dict[str, Any]:
        """Keep data.

        Args:
            data: anything
            note: a note
        """
        data["seen"] = True  # a tool changing its argument must not change the logged call
        return {"keys": sorted(data)}

    kit = Toolkit([stash])
    assert kit.specs["stash"].plan is not None
    world = build_delivery_world(make_delivery_spec())
    history = History()
    given = {"data": {"a": [1, 2]}}
    r = kit.call(world, history, "stash", given)
    assert r.ok and json.loads(r.content) == {"keys": ["a", "seen"]}
    assert given == {"data": {"a": [1, 2]}} and history.entries[-1].arguments == {"data": {"a": [1, 2]}}
    big = kit.call(world, history, "stash", {"data": {"a": "x" * (MAX_ARGUMENT_CHARS + 1)}})
    assert big.outcome == "rejected" and "over" in big.content
    assert kit.call(world, history, "stash", {"data": {1: "a"}}).outcome == "rejected", "pydantic decides non-string keys"
    assert kit.call(world, history, "stash", {"data": {}, "other": 1}).outcome == "rejected"
