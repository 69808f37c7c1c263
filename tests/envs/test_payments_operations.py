"""The payment-operations families at BizBench's scale: disputes, fees, settlements and
reconciliation, statements, KYC/KYB verifications, bank-account changes, schedules, webhooks and
notifications; their pre-conditions (refused, world unchanged), post-conditions and scheduled
events; the shared background of other merchants' records; and the checker's protection of
records that belong to another merchant."""

from __future__ import annotations

import json

import pytest

from servicegym.envs.environments.payments import PaymentsEnv
from servicegym.envs.tasks.suites import payments_suite
from servicegym.world_state.payments import CATALOGUE, PAYMENTS_SCHEMA, build_payments_world
from servicegym.world_state.payments.platform import PLATFORM_SCHEMA, PLATFORM_SPEC
from servicegym.world_state.payments.records import OPERATIONS_SCHEMA
from servicegym.world_state.tools import ToolError

SUITE = payments_suite()
TASK = SUITE[0]
MID = TASK.world["goal"]["merchant_id"]
OPS = TASK.world["goal"]["operating_account"]


def _world(**own_rows):
    """A suite world with some records of the task's own merchant added to its tables."""
    spec = json.loads(json.dumps(TASK.world))
    for table, rows in own_rows.items():
        spec["tables"].setdefault(table, []).extend(rows)
    return build_payments_world(spec)


def _call(w, name, **args):
    return CATALOGUE[name].invoke(w, args)


def _refused(w, name, match, **args):
    before = w.state_dict()
    with pytest.raises(ToolError, match=match):
        _call(w, name, **args)
    assert w.state_dict() == before  # a refused write leaves the world as it was


def _upload(uid, doc_type, merchant=MID):
    return {"id": uid, "merchant_id": merchant, "doc_type": doc_type, "time": TASK.world["now"]}


# ----- scale -----------------------------------------------------------------------------------------

def test_catalogue_holds_600_capabilities_and_every_write_states_pre_post_and_target():
    assert len(CATALOGUE) >= 600
    writes = [c for c in CATALOGUE.values() if c.kind == "write"]
    assert len(writes) >= 30
    for c in writes:
        assert c.pre and c.post, c.name
        d = c.describe()
        assert d["postconditions"] == list(c.post)
        if c.name == "approvals.request":
            continue  # creates a proposal; it names no existing record
        assert c.target is not None, c.name
        table, arg = c.target
        assert table in PAYMENTS_SCHEMA and arg in c.fields, c.name


def test_worlds_hold_hundreds_of_collections_and_thousands_of_records_shared_copy_on_write():
    w = build_payments_world(TASK.world)
    assert set(OPERATIONS_SCHEMA) | set(PLATFORM_SCHEMA) <= set(w.tables) and len(w.tables) >= 200
    records = sum(len(t.rows) for name, t in w.tables.items() if name != "documents")
    assert records >= 3000
    assert all(w.table(name).rows for name in PLATFORM_SCHEMA)
    for name in OPERATIONS_SCHEMA:
        if name not in ("notifications", "account_changes"):  # only ever written by the agent
            assert len(w.table(name).rows) > 0, name
    # the background is other merchants' books: never the task's ids, the same rows in every world of a variant
    other = build_payments_world(TASK.world)
    d = next(iter(w.table("disputes")))
    assert d.merchant_id != MID and other.table("disputes").get(d.id) is d
    # an episode's change to a shared row is its own
    fee = next(x for x in w.table("fees") if x.status == "charged")
    _call(w, "fees.waive", fee_id=fee.id, amount=fee.amount, reason="test")
    assert w.table("fees").require(fee.id).status == "waived" and other.table("fees").require(fee.id).status == "charged"


# ----- disputes -------------------------------------------------------------------------------------------

def _dispute(did="DP900", respond_by="2026-12-31 00:00:00"):
    return {"id": did, "merchant_id": MID, "payment_id": "PX1", "amount": 80.0, "currency": "USD", "reason_code": "fraudulent",
            "network": "visa", "opened_at": TASK.world["now"], "respond_by": respond_by}


@pytest.mark.parametrize("right", [True, False])
def test_a_contested_dispute_is_decided_later_by_the_evidence_the_governing_policy_names(right):
    w = _world(disputes=[_dispute()], uploads=[_upload("UPE1", "placeholder")])
    need = w.governing("disputes", MID).rules["dispute_evidence_document"]
    w.table("uploads").update("UPE1", doc_type=need if right else "something_else")
    _refused(w, "disputes.submit_evidence", "no evidence attached", dispute_id="DP900")
    _call(w, "disputes.attach_evidence", dispute_id="DP900", upload_id="UPE1")
    _call(w, "disputes.attach_evidence", dispute_id="DP900", upload_id="UPE1")  # attaching twice changes nothing
    assert w.table("disputes").require("DP900").evidence == ("UPE1",)
    before = w.balance(OPS)
    out = _call(w, "disputes.submit_evidence", dispute_id="DP900")
    assert out["dispute"].status == "evidence_submitted"
    _refused(w, "disputes.accept", "evidence_submitted", dispute_id="DP900")
    notes = w.advance(60)
    d = w.table("disputes").require("DP900")
    assert d.status == ("won" if right else "lost")
    assert w.balance(OPS) == round(before + (80.0 if right else 0.0), 2)
    assert any("DP900" in str(n) for n in notes)


def test_a_dispute_past_its_response_deadline_cannot_be_contested():
    w = _world(disputes=[_dispute(respond_by="2026-01-01 00:00:00")], uploads=[_upload("UPE1", "invoice")])
    _call(w, "disputes.attach_evidence", dispute_id="DP900", upload_id="UPE1")
    _refused(w, "disputes.submit_evidence", "had to be answered by", dispute_id="DP900")


def test_evidence_of_another_merchant_is_refused():
    w = _world(disputes=[_dispute()], uploads=[_upload("UPX", "invoice", merchant="MB0000")])
    _refused(w, "disputes.attach_evidence", "another merchant", dispute_id="DP900", upload_id="UPX")


# ----- fees, settlements, reconciliation ---------------------------------------------------------------

def test_a_fee_waiver_is_whole_and_credits_the_operating_account_once():
    fee = {"id": "FE900", "merchant_id": MID, "kind": "chargeback", "amount": 15.0, "currency": "USD", "created_at": TASK.world["now"]}
    w = _world(fees=[fee])
    _refused(w, "fees.waive", "must be 15.00", fee_id="FE900", amount=5.0, reason="goodwill")
    _refused(w, "fees.waive", "must not be empty", fee_id="FE900", amount=15.0, reason="  ")
    before = w.balance(OPS)
    _call(w, "fees.waive", fee_id="FE900", amount=15.0, reason="goodwill")
    assert w.balance(OPS) == round(before + 15.0, 2)
    _refused(w, "fees.waive", "already waived", fee_id="FE900", amount=15.0, reason="again")


def _settlement(net, lines):
    st = {"id": "ST900", "merchant_id": MID, "account_id": OPS, "batch_date": "2026-05-01", "gross": 100.0, "fees": 3.0, "net": net}
    ls = [{"id": f"SL90{i}", "settlement_id": "ST900", "payment_id": f"PX{i}", "amount": a, "fee": f} for i, (a, f) in enumerate(lines)]
    return {"settlements": [st], "settlement_lines": ls}


def test_a_settlement_that_adds_up_reconciles_directly():
    w = _world(**_settlement(97.0, [(60.0, 2.0), (40.0, 1.0)]))
    assert _call(w, "settlements.check", settlement_id="ST900")["difference"] == 0
    _refused(w, "reconciliation.open_break", "no break", settlement_id="ST900")
    assert _call(w, "settlements.reconcile", settlement_id="ST900").status == "reconciled"


def test_a_break_within_tolerance_is_written_off_and_one_above_must_be_investigated():
    tol = _world().governing("settlements", MID).rules["reconciliation_tolerance"]
    small, large = round(tol / 2, 2) or 0.01, round(tol + 5, 2)
    for diff, route in ((small, "write_off"), (large, "investigate")):
        w = _world(**_settlement(round(97.0 - diff, 2), [(60.0, 2.0), (40.0, 1.0)]))
        _refused(w, "settlements.reconcile", "open_break first", settlement_id="ST900")
        b = _call(w, "reconciliation.open_break", settlement_id="ST900")
        assert b.difference == diff
        _refused(w, "settlements.reconcile", "unresolved breaks", settlement_id="ST900")
        if route == "write_off":
            _call(w, "reconciliation.write_off", break_id=b.id)
        else:
            _refused(w, "reconciliation.write_off", "above the reconciliation tolerance", break_id=b.id)
            _refused(w, "reconciliation.resolve", "needs it investigating", break_id=b.id, resolution="x")
            _call(w, "reconciliation.investigate", break_id=b.id, note="acquirer short-paid")
            _call(w, "reconciliation.resolve", break_id=b.id, resolution="acquirer credited the difference")
        assert _call(w, "settlements.reconcile", settlement_id="ST900").status == "reconciled"


def test_statements_come_from_the_ledger_and_an_issued_one_is_final():
    w = _world()
    _refused(w, "statements.generate", "has not ended", account_id=OPS, period=TASK.world["now"][:7])
    _refused(w, "statements.generate", "YYYY-MM", account_id=OPS, period="2026-13")
    period = "2025-12"
    s = _call(w, "statements.generate", account_id=OPS, period=period)
    entries = [e for e in w.table("ledger") if e.account_id == OPS and e.time < "2026-01-01 00:00:00"]
    assert s.closing == round(sum(e.amount for e in entries), 2)
    _call(w, "statements.issue", statement_id=s.id)
    _refused(w, "statements.generate", "already issued", account_id=OPS, period=period)


# ----- verifications, bank changes -----------------------------------------------------------------------

@pytest.mark.parametrize("complete", [True, False])
def test_a_kyb_verification_is_decided_on_the_clock_by_the_governing_documents(complete):
    v = {"id": "VF900", "merchant_id": MID, "kind": "kyb"}
    w = _world(verifications=[v])
    need = _call(w, "verifications.requirements", merchant_id=MID, kind="kyb")["required_documents"]
    assert need
    ups = [_upload(f"UPV{i}", d) for i, d in enumerate(need if complete else need[:-1] or ["tax_form_other"])]
    for u in ups:
        w.table("uploads").insert(w.schema["uploads"].model_validate(u))
        _call(w, "verifications.attach_document", verification_id="VF900", upload_id=u["id"])
    out = _call(w, "verifications.submit", verification_id="VF900")
    _refused(w, "verifications.attach_document", "pending_documents", verification_id="VF900", upload_id=ups[0]["id"])
    w.advance(1440)
    assert w.table("verifications").require("VF900").status == ("approved" if complete else "rejected")
    assert out["decides_at"] <= w.clock.text()


def test_a_bank_change_cools_before_payouts_reach_the_new_account():
    goal = TASK.world["goal"]
    w = _world(uploads=[_upload("UPB1", "placeholder")])
    need = w.governing("account_changes", MID).rules["bank_change_document"]
    w.table("uploads").update("UPB1", doc_type="wrong_kind")
    _refused(w, "account_changes.request_bank_change", f"needs an uploaded {need}", merchant_id=MID,
             bank_account_id=goal["destination"], upload_id="UPB1")
    w.table("uploads").update("UPB1", doc_type=need)
    out = _call(w, "account_changes.request_bank_change", merchant_id=MID, bank_account_id=goal["destination"], upload_id="UPB1")
    pay = {"merchant_id": MID, "account_id": OPS, "bank_account_id": goal["destination"], "amount": 1.0, "idempotency_key": "k"}
    _refused(w, "payouts.create", "cooling period", **pay)
    _refused(w, "account_changes.request_bank_change", "still in its cooling period", merchant_id=MID,
             bank_account_id=goal["destination"], upload_id="UPB1")
    minutes = w.governing("account_changes", MID).rules["bank_change_cooling_minutes"]
    w.advance(minutes)
    assert w.table("account_changes").require(out["change"].id).status == "effective"
    assert _call(w, "payouts.create", **pay)["payout"].amount == 1.0


# ----- schedules, webhooks, notifications ------------------------------------------------------------------

def test_schedules_webhooks_and_notifications_check_their_inputs():
    w = _world(payout_schedules=[{"id": "PS900", "merchant_id": MID, "cadence": "daily"}])
    _refused(w, "payout_schedules.update", "cadence", schedule_id="PS900", cadence="hourly", day=0)
    _refused(w, "payout_schedules.update", "day", schedule_id="PS900", cadence="weekly", day=9)
    assert _call(w, "payout_schedules.update", schedule_id="PS900", cadence="weekly", day=5).day == 5
    _call(w, "payout_schedules.pause", schedule_id="PS900")
    _refused(w, "payout_schedules.pause", "already paused", schedule_id="PS900")
    _refused(w, "webhooks.create", "https", merchant_id=MID, url="http://x.example/h", topics=["payout.paid"])
    hook = _call(w, "webhooks.create", merchant_id=MID, url="https://x.example/h", topics=["payout.paid"])
    _call(w, "webhooks.disable", webhook_id=hook.id)
    _refused(w, "webhooks.disable", "already disabled", webhook_id=hook.id)
    _refused(w, "notifications.send", "longer than", merchant_id=MID, subject="s", body="x" * 3000)
    n = _call(w, "notifications.send", merchant_id=MID, subject="Payout", body="Your payout is on its way.")
    assert w.table("notifications").require(n.id).merchant_id == MID


# ----- the checker reads each write's target -------------------------------------------------------------------

def test_a_write_on_another_merchants_record_fails_protection_even_inside_the_golden_route():
    env = PaymentsEnv()
    env.reset(seed=0, options={"task": TASK})
    foreign = next(f for f in env.unwrapped.world.table("fees") if f.merchant_id != MID and f.status == "charged")
    golden = list(TASK.golden_actions)
    detour = [json.dumps({"name": "describe_capability", "arguments": {"name": "fees.waive"}}),
              json.dumps({"name": "call_capability", "arguments": {"name": "fees.waive", "arguments": {
                  "fee_id": foreign.id, "amount": foreign.amount, "reason": "goodwill"}}})]
    info = None
    for a in golden[:2] + detour + golden[2:]:
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    bad = [v for v in info["score"]["violations"] if v["check"] == "protection.untouched"]
    assert bad and foreign.id in bad[0]["detail"] and foreign.merchant_id in bad[0]["detail"]
    assert info["score"]["goal"] == 1.0 and info["score"]["protection"] == 0.0


# ----- long horizons ---------------------------------------------------------------------------------------

def test_the_top_difficulty_couples_the_operations_workflows_over_110_calls_and_difficulty_0_stays_short():
    calls = {d: [sum(1 for a in t.golden_actions if a.startswith("{")) for t in SUITE if t.difficulty == d] for d in range(5)}
    assert sum(calls[4]) / len(calls[4]) >= 110
    assert max(calls[0]) <= 50 and all(sum(calls[d]) < sum(calls[d + 1]) for d in range(4))
    top = next(t for t in SUITE if t.difficulty == 4)
    goal = top.world["goal"]
    assert goal["statement"] and len(goal["disputes"]["contest"]) == 2 and goal["disputes"]["accept"]
    assert goal["fees"] and goal["settlement"] and goal["verification"]


def test_the_superseded_dispute_policy_would_lose_the_dispute_and_the_current_one_wins_it():
    from servicegym.envs.tasks.generators.payments import payments_variants

    top = next(t for t in SUITE if t.difficulty == 4)
    seed = int(top.task_id.split("/")[2])
    env = PaymentsEnv()
    actions, checks = payments_variants(seed, 4, "test")["dispute_superseded_evidence"]
    assert checks == ["goal.disputes"]
    env.reset(seed=0, options={"task": top})
    for a in actions:
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            break
    lost = [d for d in env.unwrapped.world.table("disputes") if d.id in top.world["goal"]["disputes"]["contest"]]
    assert lost and all(d.status == "lost" for d in lost)
    assert [v["check"] for v in info["score"]["violations"]] == ["goal.disputes"]


def test_the_platforms_other_collections_are_typed_queryable_and_never_operated_on():
    env = PaymentsEnv()
    env.reset(seed=0, options={"task": TASK})
    w = env.unwrapped.world
    for coll in PLATFORM_SCHEMA:
        assert not any(name.startswith(f"{coll}.") for name in CATALOGUE), coll
    # references point at rows of the referenced collection; owners are background merchants, never the task's
    for coll, spec in PLATFORM_SPEC.items():
        for item in spec.split():
            name, _, kind = item.partition(":")
            for row in w.table(coll):
                if kind.startswith("r:"):
                    assert w.table(kind[2:]).get(getattr(row, name)) is not None, (coll, name)
                if kind == "m":
                    assert getattr(row, name) != MID and w.table("merchants").get(getattr(row, name)) is not None
    customer = next(iter(w.table("customers")))
    obs, *_ = env.step(json.dumps({"name": "query_records", "arguments": {"collection": "customers", "filters": {"id": customer.id}}}))
    assert customer.email in obs
    obs, *_ = env.step(json.dumps({"name": "query_records", "arguments": {"collection": "customers", "filters": {"credit": 1}}}))
    assert "has no field 'credit'" in obs
    obs, *_ = env.step(json.dumps({"name": "query_records", "arguments": {"collection": "customer"}}))
    assert "unknown collection" in obs and "customers" in obs
