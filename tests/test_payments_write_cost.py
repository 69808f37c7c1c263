"""The Payments writes' cost paths (issue 29): what ``payouts.create``, ``refunds.create`` and
``fx.convert`` read to decide, and that the shortcuts give what the plain definitions give.

* the available balance of an account is the indexed ledger prefix plus the entries posted since,
  read from the end of the ledger: the prefix is not walked again on each write, and the figure
  is ``PaymentsWorld.available``'s (the same amounts, summed in the same order);
* a repeated idempotency key returns the first record when its terms match and is refused with the
  same message otherwise;
* the amount left to refund is what ``payments.refundable`` reports.

No timings: counts of rows read and equality with the plain definitions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from servicegym.envs.tasks.suites import payments_suite
from servicegym.world_state.payments import CATALOGUE, build_payments_world
from servicegym.world_state.payments.capabilities import _available
from servicegym.world_state.tools import ToolError

SUITE = payments_suite()
TASK = SUITE[0]
MID = TASK.world["goal"]["merchant_id"]
OPS = TASK.world["goal"]["operating_account"]
DEST = TASK.world["goal"]["destination"]


def _world() -> Any:
    return build_payments_world(json.loads(json.dumps(TASK.world)))


def _call(w: Any, name: str, **args: Any) -> Any:
    return CATALOGUE[name].invoke(w, args)


def _refused(w: Any, name: str, match: str, **args: Any) -> str:
    before = w.state_dict()
    with pytest.raises(ToolError, match=match) as err:
        _call(w, name, **args)
    assert w.state_dict() == before  # a refused write leaves the world as it was
    return str(err.value)


def _reserve(w: Any) -> str:
    return w.account_of(MID, "reserve").id


def _payment(w: Any) -> Any:
    return next(p for p in w.table("payments") if p.merchant_id == MID)


# ----- available balance ----------------------------------------------------------------------------


class _CountingValues:
    """A dict's values view that counts the rows iterated, forwards and from the end."""

    def __init__(self, values: Any, counts: dict[str, int]) -> None:
        self._values, self._counts = values, counts

    def __iter__(self) -> Any:
        for v in self._values:
            self._counts["forward"] += 1
            yield v

    def __reversed__(self) -> Any:
        for v in reversed(self._values):
            self._counts["backward"] += 1
            yield v

    def __len__(self) -> int:
        return len(self._values)


class _CountingRows(dict):
    def __init__(self, rows: dict[str, Any]) -> None:
        super().__init__(rows)
        self.counts = {"forward": 0, "backward": 0}

    def values(self) -> Any:  # type: ignore[override]
        return _CountingValues(super().values(), self.counts)


def test_available_equals_the_worlds_definition_after_posts_on_several_accounts():
    w = _world().copy()
    ops, res = OPS, _reserve(w)
    assert _available(w, ops) == w.available(ops)
    for i, (acc, amount) in enumerate([(ops, -12.34), (res, 5.5), (ops, 0.1), (ops, 0.2), (res, -0.3), (ops, 1e-2)]):
        w.post(acc, amount, "test", f"T{i}")
        for a in (ops, res):
            assert _available(w, a) == w.available(a), (i, a)


def test_available_reads_only_the_entries_posted_since_the_indexed_prefix():
    w = _world().copy()
    _available(w, OPS)  # the prefix index of this lineage
    for i in range(3):
        w.post(OPS, -1.0, "test", f"T{i}")
    ledger = w.tables["ledger"]
    prefix = len(ledger.rows) - 3
    assert prefix > 50  # the background ledger and the task's own entries
    counting = ledger.rows = _CountingRows(ledger.rows)
    got = _available(w, OPS)
    assert counting.counts == {"forward": 0, "backward": 3}
    ledger.rows = dict(counting)
    assert got == w.available(OPS)


def test_available_falls_back_to_a_scan_once_a_ledger_row_is_replaced():
    w = _world().copy()
    entry = w.post(OPS, -2.0, "test", "T0")
    w.table("ledger").update(entry.id, amount=-3.0)  # no longer a prefix and insertions
    assert _available(w, OPS) == w.available(OPS)


# ----- idempotency keys ------------------------------------------------------------------------------


def test_a_repeated_payout_key_returns_the_first_payout_or_is_refused_on_other_terms():
    w = _world()
    pay = {"merchant_id": MID, "account_id": OPS, "bank_account_id": DEST, "amount": 1.0, "idempotency_key": "k1"}
    first = _call(w, "payouts.create", **pay)
    assert first["idempotent_replay"] is False
    again = _call(w, "payouts.create", **{**pay, "amount": 1.0001})  # the same amount once rounded to cents
    assert again == {"payout": first["payout"], "idempotent_replay": True}
    for change in ({"amount": 2.0}, {"bank_account_id": "BA000"}, {"account_id": _reserve(w)}):
        msg = _refused(w, "payouts.create", "already used with different terms", **{**pay, **change})
        assert msg == "idempotency_key 'k1' was already used with different terms"


def test_a_repeated_refund_or_conversion_key_is_checked_on_its_own_terms():
    w = _world()
    p = _payment(w)
    rf = {"payment_id": p.id, "amount": 1.0, "idempotency_key": "r1"}
    first = _call(w, "refunds.create", **rf)
    assert _call(w, "refunds.create", **rf) == {"refund": first["refund"], "idempotent_replay": True}
    _refused(w, "refunds.create", "already used with different terms", **{**rf, "amount": 2.0})
    other = next(a for a in w.table("accounts") if a.merchant_id != MID)
    _refused(w, "fx.convert", "both accounts must belong to the same merchant", from_account_id=OPS,
             to_account_id=other.id, amount=1.0, idempotency_key="f1")


# ----- refunds --------------------------------------------------------------------------------------


def test_refund_limit_is_what_payments_refundable_reports():
    w = _world()
    p = _payment(w)
    _call(w, "refunds.create", payment_id=p.id, amount=round(p.amount / 3, 2), idempotency_key="a")
    left = _call(w, "payments.refundable", payment_id=p.id)["refundable"]
    msg = _refused(w, "refunds.create", "left to refund", payment_id=p.id, amount=round(left + 0.01, 2), idempotency_key="b")
    assert msg == f"payment {p.id} has only {left:.2f} left to refund"
    _refused(w, "refunds.create", "no record with id", payment_id="PY000", amount=1.0, idempotency_key="c")
    _refused(w, "refunds.create", "amount must be positive", payment_id=p.id, amount=0.0, idempotency_key="d")


def test_refund_beyond_the_reserve_is_refused_with_the_reserves_available_figure():
    w = _world()
    p = _payment(w)
    res = _reserve(w)
    w.post(res, -w.available(res), "test", "drain")  # nothing left in the reserve
    msg = _refused(w, "refunds.create", "holds only", payment_id=p.id, amount=0.01, idempotency_key="e")
    assert msg == f"reserve account {res} holds only {w.available(res):.2f}"


def test_payout_refusals_keep_their_messages():
    w = _world()
    pay = {"merchant_id": MID, "account_id": OPS, "bank_account_id": DEST, "amount": 1.0, "idempotency_key": "p"}
    assert _refused(w, "payouts.create", "operating account", **{**pay, "account_id": _reserve(w)}) == (
        f"{_reserve(w)!r} is not an operating account of merchant {MID!r}")
    assert _refused(w, "payouts.create", "bank account", **{**pay, "bank_account_id": "BA000"}) == (
        f"'BA000' is not a bank account of merchant {MID!r}")
    assert _refused(w, "payouts.create", "positive", **{**pay, "amount": -1.0}) == "amount must be positive"
    big = w.available(OPS) + 1
    assert _refused(w, "payouts.create", "available balance", **{**pay, "amount": big}) == (
        f"available balance of {OPS} is {w.available(OPS):.2f}, below {big:.2f}")
