"""The cheaper write step (issue 29) is the step it replaces: a one-call action runs on a path of
its own (``ToolUseEnv._call_step``, no step generator), and the rows a write makes on every call
(ledger entries, payouts, refunds, bookings, reservations, updated rows) are built without
pydantic's revalidation. Each is checked here against the general path or pydantic's own
construction: the same observations, rewards, infos, transcripts, history, world rows and
undo. No timings."""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.environments.parsing import parse_action, single_call
from servicegym.world_state.core import World, _copy_with
from servicegym.world_state.instore.entities import Booking, Reservation
from servicegym.world_state.payments.entities import LedgerEntry as PaymentsLedgerEntry
from servicegym.world_state.payments.entities import Payout, Refund
from servicegym.world_state.travel.entities import LedgerEntry as TravelLedgerEntry

ENV_IDS = ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
           "servicegym/CrossScenario-v0", "servicegym/Payments-v0"]


def _record(out) -> dict:
    obs, reward, terminated, truncated, info = out
    return {"obs": obs, "reward": reward, "terminated": terminated, "truncated": truncated,
            "info": json.dumps(info, sort_keys=True, default=str)}


def _episode(env_id: str, actions_of, use_astep: bool, **kwargs) -> tuple[list[dict], dict]:
    """Play ``actions_of(task)`` with ``step`` (the fast path takes its one-call actions) or with
    ``astep`` (always the general path); the steps' results and the episode's records."""
    env = gym.make(env_id, render_mode="ansi", **kwargs)
    u = env.unwrapped
    env.reset(seed=3, options={"task_id": u.task_ids("test")[0]})
    steps = []
    for action in actions_of(u.task):
        out = asyncio.run(u.astep(action)) if use_astep else env.step(action)
        steps.append(_record(out))
        if out[2] or out[3]:
            break
    records = {
        "messages": json.dumps(u.messages, sort_keys=True),
        "history": [tuple(e) for e in u.history.entries],
        "render": env.render(),
        "world": json.dumps(u.world.state_dict(), sort_keys=True, default=str),
        "counters": (u._steps, u._tool_errors, u._call_counter, u._agent_calls, sorted(u._call_ids)),
    }
    return steps, records


def _golden(task):
    return list(task.golden_actions)


def _with_failures(task):
    """The golden route with failing and odd one-call actions mixed in (each must leave the world
    as it was), and a repeat of every write (mostly refused the second time)."""
    out = []
    for a in task.golden_actions:
        out.append(a)
        call = single_call(a)
        if call is not None:
            _, name, args = call
            out.append(json.dumps({"name": name, "arguments": {**args, "unknown_argument": 1}}))
            out.append(json.dumps({"name": name, "arguments": {k: 12345 for k in args}}))
            out.append(a)  # again: a write now mostly refused (paid already, cancelled already, ...)
    out.insert(1, '{"name": "no_such_tool", "arguments": {}}')
    out.insert(2, '<tool_call>{"name": "no_such_tool", "arguments": {"x": "y"}}</tool_call>')
    return out


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("actions_of", [_golden, _with_failures])
def test_the_one_call_path_gives_what_the_general_path_gives(env_id, actions_of):
    fast = _episode(env_id, actions_of, use_astep=False)
    general = _episode(env_id, actions_of, use_astep=True)
    assert fast[0] == general[0]
    assert fast[1] == general[1]


@pytest.mark.parametrize("kwargs", [{"max_steps": 3}, {"max_errors": 2}])
def test_a_one_call_step_that_reaches_a_limit_ends_and_scores_as_before(kwargs):
    fast = _episode("servicegym/Delivery-v0", _with_failures, use_astep=False, **kwargs)
    general = _episode("servicegym/Delivery-v0", _with_failures, use_astep=True, **kwargs)
    assert fast == general
    assert fast[0][-1]["truncated"]


def test_the_call_cap_ends_a_one_call_step_as_before():
    fast = _episode("servicegym/Payments-v0", _golden, use_astep=False, call_cap=0.2)
    general = _episode("servicegym/Payments-v0", _golden, use_astep=True, call_cap=0.2)
    assert fast == general
    assert '"termination_reason": "call_cap"' in fast[0][-1]["info"]


def test_single_call_is_parse_action_for_the_actions_it_takes():
    takes = ['{"name": "get_x", "arguments": {"a": "b"}}', '<tool_call>{"name": "get_x", "arguments": {}}</tool_call>',
             '{"name": "get_x", "arguments": {"n": 1.5, "l": [1, "\u00e9", null]}}']
    for action in takes:
        text, name, args = single_call(action)
        parsed = parse_action(action)
        assert text == action and not parsed.errors and not parsed.message
        assert [(c.name, c.arguments, c.call_id) for c in parsed.tool_calls] == [(name, args, "")]
    declines = ['{"name": "get_x", "arguments": {"a": "\\ud83d"}}',  # a surrogate escape: scrubbed by the general path
                '{"name": "get_x", "arguments": {"a": "\\u00e9"}}',  # any JSON escape \u: the general path
                '{"name": "get_x", "arguments": {}} ', '{"name": " get_x", "arguments": {}}',
                '{"tool_calls": [{"id": "c1", "function": {"name": "get_x", "arguments": "{}"}}]}',
                '[{"name": "get_x", "arguments": {}}]', "hello", '{"name": "get_x", "arguments": "{}"}',
                "x" * ((1 << 20) + 1)]
    for action in declines:
        assert single_call(action) is None, action[:80]


def test_the_user_tool_is_left_to_the_general_path():
    env = gym.make("servicegym/Delivery-v0", user_tool=True)
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
    obs, *_ = env.step('{"name": "respond", "arguments": {"message": "What would you like?"}}')
    assert obs.startswith('<tool_result name="respond"') and u.history.messages("assistant")


# ----- rows made without revalidation ---------------------------------------------------------
def _same_row(a, b) -> None:
    assert type(a) is type(b) and a == b
    assert list(a.__dict__.items()) == list(b.__dict__.items())
    assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__
    assert a.model_dump_json() == b.model_dump_json() and a.model_dump(mode="json") == b.model_dump(mode="json")


def _new_rows(before: World, after: World, table: str) -> list:
    return [r for k, r in after.tables[table].rows.items() if k not in before.tables[table].rows]


def _call_name(action: str) -> str | None:
    call = single_call(action)
    if call is None:
        return None
    _, name, args = call
    return f"{name}:{args.get('name')}" if name == "call_capability" else name


def _played_to(env_id: str, name: str):
    """An env of ``env_id`` played along a test task's golden route up to its first call of
    ``name`` (``call_capability:<capability>`` for a capability), and that call's action; None
    when no route of the first 40 test tasks calls it."""
    env = gym.make(env_id)
    u = env.unwrapped
    for tid in u.task_ids("test")[:40]:
        env.reset(seed=0, options={"task_id": tid})
        for a in u.task.golden_actions:
            if _call_name(a) == name:
                return env, a
            env.step(a)
    return None


@pytest.mark.parametrize("env_id, name, table, model", [
    ("servicegym/Payments-v0", "call_capability:payouts.create", "payouts", Payout),
    ("servicegym/Payments-v0", "call_capability:payouts.create", "ledger", PaymentsLedgerEntry),
    ("servicegym/Payments-v0", "call_capability:refunds.create", "refunds", Refund),
    ("servicegym/Payments-v0", "call_capability:refunds.create", "ledger", PaymentsLedgerEntry),
    ("servicegym/Travel-v0", "pay_flight_order", "travel_ledger", TravelLedgerEntry),
    ("servicegym/Travel-v0", "cancel_hotel_order", "travel_ledger", TravelLedgerEntry),
    ("servicegym/InStore-v0", "instore_book", "books", Booking),
    ("servicegym/CrossScenario-v0", "instore_reservation", "reservations", Reservation),
])
def test_rows_a_write_makes_are_the_rows_pydantic_makes(env_id, name, table, model):
    played = _played_to(env_id, name)
    assert played is not None, f"no golden route of {env_id} calls {name}"
    env, action = played
    u = env.unwrapped
    before = u.world.copy()
    out = env.step(action)
    assert out[4]["tool_errors"] == 0, out[0][:300]
    made = _new_rows(before, u.world, table)
    assert made, f"{name} made no {table} row"
    for row in made:
        _same_row(row, model(**row.__dict__))


def test_an_update_is_the_row_copy_with_makes_and_is_undone_by_rollback():
    env = gym.make("servicegym/Delivery-v0")
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
    world = u.world.copy()
    orders = world.tables["orders"]
    key, old = next(iter(orders.rows.items()))
    shared_rows = orders.rows
    txn = world.begin()
    new = orders.update(key, status="cancelled", update_time="2030-01-01 00:00:00")
    _same_row(new, _copy_with(old, {"status": "cancelled", "update_time": "2030-01-01 00:00:00"}))
    assert orders.rows is not shared_rows and shared_rows[key] is old, "a shared table copies its rows first"
    assert u.world.tables["orders"].rows[key] is old, "the world it was copied from is untouched"
    world.rollback(txn)
    assert orders.rows[key] is old
    assert world.state_dict() == u.world.state_dict()


@pytest.mark.parametrize("env_id, name, bad", [
    ("servicegym/Payments-v0", "call_capability:payouts.create", {"amount": 10.0**9}),
    ("servicegym/Payments-v0", "call_capability:refunds.create", {"amount": 10.0**9}),
])
def test_a_refused_capability_leaves_the_world_unchanged(env_id, name, bad):
    played = _played_to(env_id, name)
    assert played is not None
    env, action = played
    u = env.unwrapped
    call = json.loads(action)
    call["arguments"]["arguments"].update(bad)
    before = json.dumps(u.world.state_dict(), sort_keys=True, default=str)
    out = env.step(json.dumps(call))
    assert out[4]["tool_errors"] == 1 and "refused" in out[0]
    assert json.dumps(u.world.state_dict(), sort_keys=True, default=str) == before


_JSON_SCALARS = (st.none() | st.booleans() | st.text(max_size=8)
                 | st.integers(min_value=-(1 << 80), max_value=1 << 80) | st.floats(allow_nan=False, allow_infinity=False))
_JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


def _typed(value):
    """``value`` with every number's type kept apart (1 and 1.0 and True compare equal)."""
    if isinstance(value, dict):
        return [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, repr(value))


@settings(max_examples=300, deadline=None)
@given(args=st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=4),
       literal=st.sampled_from(["", "NaN", "-Infinity", "1E400", "18446744073709551616", "-9223372036854775809",
                                "9223372036854775807", "1e19", "12345678901234567890.5", "-0.0"]))
def test_the_one_call_parse_reads_numbers_and_nesting_as_json_does(args, literal):
    # orjson reads the common call; what it reads otherwise than json (integers beyond 64 bits, NaN,
    # 1E400) goes to json's scanner: the arguments are json's in every case, types and key order too
    action = json.dumps({"name": "get_x", "arguments": args}, ensure_ascii=True)
    if literal:
        action = action[:-2] + ("" if action.endswith("{}}") else ", ") + f'"z": {literal}}}}}'
    call = single_call(action)
    if "\\u" in action:
        assert call is None  # an escape: the general path, which scrubs
        return
    assert call is not None
    assert _typed(call[2]) == _typed(json.loads(action)["arguments"])
