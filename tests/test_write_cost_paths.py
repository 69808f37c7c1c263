"""The cheaper paths of write steps (issue 29) keep the behaviour they replace: the history's
"called earlier" index is kept up to date as calls are logged (a write's pre-condition asks a set
and scans nothing), the cached time and date texts are strftime's, a payments capability's
reserve-account lookup answers as the world's scan, and table inserts and updates journal and
refuse as before. No timings: counts and equalities only."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Annotated, Optional

import gymnasium as gym
import pytest
from pydantic import ConfigDict, Field, ValidationError, create_model

import servicegym  # noqa: F401  registers the ids
from servicegym.world_state.core import TIME_FORMAT, History, date_text, parse_date, parse_time, time_hhmm, time_text
from servicegym.world_state.instore.tools import looked_up
from servicegym.world_state.payments.capabilities import _account_of
from servicegym.world_state.payments.entities import Account
from servicegym.world_state.tools import ToolError, _fast_args, _plan


def test_the_called_index_is_kept_by_add_call_and_append():
    h = History()
    h.append(step=0, time="t", kind="message", role="user", content="hi")
    h.add_call(1, "t", "get_order_detail", {"order_id": "O1", "n": 3}, "executed", "{}", "call_1")
    h.add_call(1, "t", "get_order_detail", {"order_id": "O2"}, "rejected", "no", "call_2")
    h.append(step=1, time="t", kind="event", role="env", name="note", content="")
    assert h._noted == len(h.entries), "every entry is already in the index: nothing is left to scan"
    assert h.called("get_order_detail", "O1") and h.called("get_order_detail")
    assert not h.called("get_order_detail", "O2"), "a rejected call does not count"
    assert not h.called("get_order_status", "O1")
    # a tool call logged through ``append`` (not ``add_call``) is noted by ``called``'s catch-up
    # pass, and so is a call ``add_call`` logged while the index lagged behind it
    h.append(step=2, time="t", kind="tool_call", name="get_x", arguments={"id": "A"}, outcome="executed")
    h.add_call(2, "t", "get_y", {"id": "B"}, "executed", "{}", "call_3")
    assert h._noted < len(h.entries)
    assert h.called("get_x", "A") and h.called("get_y", "B") and not h.called("get_y", "A")
    assert h._noted == len(h.entries)
    h.add_call(3, "t", "get_z", {"id": "C"}, "executed", "{}", "call_4")
    assert h._noted == len(h.entries) and h.called("get_z", "C")


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
                                    "servicegym/CrossScenario-v0", "servicegym/Payments-v0"])
def test_a_golden_episode_never_leaves_history_for_a_pre_condition_to_scan(env_id):
    env = gym.make(env_id)
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
    assert u.history._noted == len(u.history.entries)
    out = None
    for action in u.task.golden_actions:
        out = env.step(action)
        assert u.history._noted == len(u.history.entries), action[:200]
    assert out is not None and out[4]["success"], "the golden route still succeeds"


def test_cached_time_and_date_texts_are_strftimes():
    start = datetime(2025, 1, 1, 0, 0, 0)
    for k in range(0, 60 * 24 * 3, 37):
        t = start + timedelta(minutes=k, seconds=k % 60)
        text = t.strftime(TIME_FORMAT)
        for shown in (text, f"  {text} "):
            assert time_text(shown) == parse_time(shown).strftime(TIME_FORMAT) == text
            assert time_hhmm(shown) == parse_time(shown).strftime("%H:%M")
        day = t.strftime("%Y-%m-%d")
        assert date_text(f" {day}") == parse_date(day).strftime("%Y-%m-%d") == day
    for bad in ("2025-13-01 10:00:00", "10:00", "", "2025-01-01"):
        with pytest.raises(ValueError):
            time_text(bad)
        with pytest.raises(ValueError):
            time_hhmm(bad)
    with pytest.raises(ValueError):
        date_text("2025-02-30")


def test_looked_up_finds_the_quoted_id_only():
    rule = looked_up(("instore_reservation_detail",), "reservation_id", "reservation")
    h = History()
    for rid in ('R1"x', "R10", "é\\ü"):
        h.add_call(1, "t", "instore_reservation_detail", {"reservation_id": rid}, "executed",
                   json.dumps({"reservation_id": rid}, ensure_ascii=False), "c")
    assert rule.check(None, h, {"reservation_id": "R10"}) is None
    assert rule.check(None, h, {"reservation_id": 'R1"x'}) is None
    assert rule.check(None, h, {"reservation_id": "é\\ü"}) is None
    assert rule.check(None, h, {"reservation_id": "R1"}) is not None, '"R1" is not found in "R10"'


def _payments_world():
    env = gym.make("servicegym/Payments-v0")
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
    return u.world


def test_the_reserve_account_lookup_answers_as_the_worlds_scan():
    world = _payments_world()
    merchants = sorted({a.merchant_id for a in world.table("accounts")}) + ["M-none"]
    copy = world.copy()
    for w in (world, copy):
        for m in merchants:
            for kind in ("operating", "reserve"):
                try:
                    want = w.account_of(m, kind)
                except ToolError as err:
                    with pytest.raises(ToolError, match=str(err)):
                        _account_of(w, m, kind)
                else:
                    assert _account_of(w, m, kind) is want
    # an episode that changes the accounts table is answered from the table it has now
    m = merchants[0]
    first = copy.account_of(m, "reserve") if any(a.merchant_id == m and a.kind == "reserve" for a in copy.table("accounts")) else None
    txn = copy.begin()
    copy.table("accounts").insert(Account(id="AC-new", merchant_id="M-none", kind="reserve", currency="USD"))
    assert _account_of(copy, "M-none", "reserve").id == "AC-new"
    if first is not None:
        assert _account_of(copy, m, "reserve") is first, "the first account in table order, as the scan"
    copy.rollback(txn)
    with pytest.raises(ToolError):
        _account_of(copy, "M-none", "reserve")
    with pytest.raises(ToolError):
        _account_of(world, "M-none", "reserve")  # the original never saw the insert


def test_insert_and_update_journal_and_refuse_as_before():
    world = _payments_world().copy()
    accounts = world.table("accounts")
    some = next(iter(accounts))
    txn = world.begin()
    with pytest.raises(KeyError, match="already exists"):
        accounts.insert(some)
    with pytest.raises(KeyError, match="no record with id 'nope'"):
        accounts.update("nope", currency="EUR")
    stamp = accounts.stamp
    accounts.insert(Account(id="AC-x", merchant_id=some.merchant_id, kind="reserve", currency="USD"))
    accounts.update(some.id, currency="XXX")
    assert accounts.stamp != stamp and accounts.require(some.id).currency == "XXX" and "AC-x" in accounts
    assert [key for _, key, _ in txn.journal] == ["AC-x", some.id]
    world.rollback(txn)
    assert "AC-x" not in accounts and accounts.require(some.id) is some


@pytest.mark.parametrize("ann, values", [
    (Annotated[str, Field(min_length=1, max_length=5)], ["", "a", "abcde", "abcdef"]),
    (Annotated[str, Field(max_length=3)], ["", "abc", "abcd"]),
    (Annotated[str, Field(min_length=2)], ["", "a", "ab"]),
    (Annotated[float, Field(gt=0, le=1440)], [-1.0, 0.0, 0.5, 1440.0, 1440.5]),
    (Annotated[int, Field(ge=1, lt=10)], [0, 1, 9, 10]),
    (Annotated[int, Field(ge=0)], [-1, 0, 3]),
    (Annotated[float, Field(lt=2.5)], [2.4, 2.5]),
    (Annotated[int, Field(gt=1), Field(ge=3)], [1, 2, 3, 4]),
    (Optional[Annotated[int, Field(ge=1, le=3)]], [None, 0, 1, 3, 4]),
])
def test_the_parsed_argument_checks_accept_what_pydantic_accepts(ann, values):
    model = create_model("m", __config__=ConfigDict(extra="forbid", allow_inf_nan=False), x=(ann, ...))
    plan = _plan(model)
    assert plan is not None
    for v in values:
        try:
            model.model_validate({"x": v})
            ok = True
        except ValidationError:
            ok = False
        assert (_fast_args(plan, {"x": v}) is not None) == ok, (ann, v)


def test_a_tables_base_names_its_copied_prefix_until_a_row_is_replaced():
    world = _payments_world()
    n0 = len(world.tables["ledger"].rows)
    copy = world.copy()
    ledger = copy.tables["ledger"]

    def prefix(w):
        got = w.prefix_cached("rows", "ledger", list)
        return None if got is None else got[1]

    assert ledger.base is None and prefix(copy) == n0, "a copy starts with all the rows"
    first = next(iter(ledger))
    txn = copy.begin()
    copy.post(first.account_id, 5.0, "test", "ref")
    assert ledger.base == (world.tables["ledger"].stamp, n0), "an insertion keeps the rows before it as the prefix"
    assert prefix(copy) == n0 and prefix(copy.copy()) == n0, "and so does a copy of the copy"
    copy.rollback(txn)
    assert prefix(copy) == n0 and len(ledger.rows) == n0
    built = []

    def counting(rows):
        built.append(1)
        return list(rows)

    for w in (copy, world.copy(), copy.copy()):
        assert w.prefix_cached("counted", "ledger", counting)[1] == n0
    assert len(built) == 1, "the prefix index is built once for the whole lineage"
    for change in (lambda t: t.update(first.id, amount=1.0), lambda t: t.put(first), lambda t: t.delete(first.id)):
        other = world.copy()
        change(other.tables["ledger"])
        assert other.tables["ledger"].base is False and prefix(other) is None
        assert prefix(other.copy()) is None
    restored = world.copy()
    restored.tables["ledger"].update(first.id, amount=1.0)
    restored.restore(restored.snapshot())
    assert prefix(restored) == n0


def test_available_balances_answer_as_the_worlds_scan():
    from servicegym.world_state.payments.capabilities import _available

    world = _payments_world()
    copy = world.copy()
    accounts = [a.id for a in copy.tables["accounts"]] + ["AC-none"]

    def same(w):
        for a in accounts:
            assert _available(w, a) == w.available(a), a

    same(world)  # the built world was never copied: the scan
    same(copy)
    txn = copy.begin()
    for k, a in enumerate(accounts[:6]):
        copy.post(a, -(k + 0.1), "test", f"r{k}")
    same(copy)
    same(copy.copy())
    copy.rollback(txn)
    same(copy)
    copy.tables["ledger"].update(next(iter(copy.tables["ledger"])).id, amount=12345.0)
    same(copy)  # a replaced row: the scan
