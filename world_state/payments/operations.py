"""The capability families over the operations records (``records.py``): disputes and chargeback
evidence, fee waivers and estimates, settlement reconciliation and breaks, statements, KYC/KYB
verifications, bank-account changes with their cooling period, payout schedules, webhooks,
notifications and the limits in force.

Each write states its pre-conditions (refused with ``ToolError``, the world rolled back) and its
post-conditions (what it changes), and names its ``target``: the collection and argument of the
record it writes, which the checker reads to tell a write on the task's records from one on a
protected object. Scheduled outcomes (a dispute's decision, a verification's, a bank change taking
effect, a dispute's response deadline) are events that fire in clock order through ``wait``.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from servicegym.world_state.core import TIME_FORMAT
from servicegym.world_state.payments.capabilities import REQ, Capability, _add, _books, _missing, _rows_view, _step
from servicegym.world_state.payments.records import FEE_KINDS, AccountChange, Notification, Statement
from servicegym.world_state.payments.world import OPERATION_EVENTS, Event, PaymentsWorld, money
from servicegym.world_state.tools import ToolError

DISPUTE_DECISION_MINUTES = 20
MAX_TEXT = 2000


def _later(w: PaymentsWorld, minutes: float) -> str:
    return (w.clock.now + timedelta(minutes=minutes)).strftime(TIME_FORMAT)


def _rule(w: PaymentsWorld, product: str, merchant_id: str, key: str, default: Any) -> Any:
    doc = w.governing(product, merchant_id)
    return doc.rules.get(key, default) if doc is not None else default


def _schedule(w: PaymentsWorld, prefix: str, when: str, kind: str, ref: str) -> None:
    w.tables["events"].insert(Event(id=w.ids.next(prefix), time=when, kind=kind, ref=ref))


def _upload_of(w: PaymentsWorld, upload_id: str, merchant_id: str) -> Any:
    up = w.tables["uploads"].get(upload_id) or _missing("uploads", upload_id)
    if up.merchant_id != merchant_id:
        raise ToolError(f"upload {upload_id} belongs to another merchant")
    return up


def _text(value: str, name: str) -> str:
    value = value.strip()
    if not value:
        raise ToolError(f"{name} must not be empty")
    if len(value) > MAX_TEXT:
        raise ToolError(f"{name} is longer than {MAX_TEXT} characters")
    return value


def _cap(name: str, kind: str, summary: str, fields: dict[str, tuple[Any, Any]], fn: Any, pre: tuple[str, ...] = (),
         post: tuple[str, ...] = (), target: tuple[str, str] | None = None) -> None:
    _add(Capability(name, kind, summary, fields, fn, pre, post, target))  # type: ignore[arg-type]


# ----- disputes (chargebacks) -------------------------------------------------------------------

def _dispute(w: PaymentsWorld, dispute_id: str, status: str = "needs_response") -> Any:
    d = w.tables["disputes"].get(dispute_id) or _missing("disputes", dispute_id)
    if d.status != status:
        raise ToolError(f"dispute {dispute_id} is {d.status}; this needs it {status}")
    return d


def _attach(w: PaymentsWorld, table: str, row: Any, field: str, upload_id: str) -> Any:
    """Add the merchant's upload to ``row``'s tuple ``field`` (attaching it twice changes nothing)."""
    _upload_of(w, upload_id, row.merchant_id)
    if upload_id in getattr(row, field):
        return row
    return w.tables[table].update(row.id, **{field: (*getattr(row, field), upload_id)})


def _disputes_attach(w: PaymentsWorld, dispute_id: str, upload_id: str) -> Any:
    return _attach(w, "disputes", _dispute(w, dispute_id), "evidence", upload_id)


def _disputes_submit(w: PaymentsWorld, dispute_id: str) -> dict[str, Any]:
    d = _dispute(w, dispute_id)
    if w.clock.text() > d.respond_by:
        raise ToolError(f"dispute {dispute_id} had to be answered by {d.respond_by}")
    if not d.evidence:
        raise ToolError(f"dispute {dispute_id} has no evidence attached")
    required = _rule(w, "disputes", d.merchant_id, "dispute_evidence_document", d.required_evidence)
    d = w.tables["disputes"].update(d.id, status="evidence_submitted", required_evidence=required or d.required_evidence)
    when = _later(w, DISPUTE_DECISION_MINUTES)
    _schedule(w, "EVD", when, "dispute_decision", d.id)
    return {"dispute": d, "decision_at": when}


def _disputes_accept(w: PaymentsWorld, dispute_id: str) -> Any:
    d = _dispute(w, dispute_id)
    return w.tables["disputes"].update(d.id, status="accepted", decided_at=w.clock.text())


def _fire_dispute_decision(w: PaymentsWorld, ev: Event) -> str:
    d = w.tables["disputes"].get(ev.ref)
    if d is None or d.status != "evidence_submitted":
        return f"dispute {ev.ref}: nothing to decide"
    types = {w.tables["uploads"].require(u).doc_type for u in d.evidence}
    if d.required_evidence and d.required_evidence not in types:
        w.tables["disputes"].update(d.id, status="lost", decided_at=ev.time)
        return f"dispute {d.id} lost: the network needed a {d.required_evidence}"
    w.tables["disputes"].update(d.id, status="won", decided_at=ev.time)
    ops = w.account_of(d.merchant_id, "operating")
    w.post(ops.id, d.amount, "dispute_reversal", d.id)
    return f"dispute {d.id} won: {d.amount:.2f} credited back to account {ops.id}"


def _fire_dispute_deadline(w: PaymentsWorld, ev: Event) -> str:
    d = w.tables["disputes"].get(ev.ref)
    if d is None or d.status != "needs_response":
        return f"response deadline of dispute {ev.ref} passed"
    w.tables["disputes"].update(d.id, status="expired", decided_at=ev.time)
    return f"dispute {d.id} expired: it was not answered by {d.respond_by}; the {d.amount:.2f} stays with the cardholder"


OPERATION_EVENTS["dispute_decision"] = _fire_dispute_decision
OPERATION_EVENTS["dispute_deadline"] = _fire_dispute_deadline

_cap("disputes.attach_evidence", "write", "Attach an uploaded document to a dispute as evidence.",
     {"dispute_id": (str, REQ), "upload_id": (str, REQ)}, _disputes_attach,
     ("the dispute needs a response", "the upload is the merchant's"),
     ("the upload is in the dispute's evidence (attaching it twice changes nothing)",), ("disputes", "dispute_id"))
_cap("disputes.submit_evidence", "write", "Contest a dispute with its attached evidence; the card network decides it later.",
     {"dispute_id": (str, REQ)}, _disputes_submit,
     ("the dispute needs a response", "it is not past respond_by", "at least one document is attached"),
     ("the dispute is evidence_submitted", "the governing disputes policy's evidence document is the one the network needs",
      "a dispute_decision event is scheduled: won (the amount credited back to the operating account) if that document is attached, else lost"),
     ("disputes", "dispute_id"))
_cap("disputes.accept", "write", "Accept a dispute: the cardholder keeps the amount.",
     {"dispute_id": (str, REQ)}, _disputes_accept, ("the dispute needs a response",),
     ("the dispute is accepted; the amount stays lost",), ("disputes", "dispute_id"))


def _disputes_exposure(w: PaymentsWorld, merchant_id: str) -> dict[str, Any]:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    rows = [d for d in w.tables["disputes"] if d.merchant_id == merchant_id]
    open_ = [d for d in rows if d.status in ("needs_response", "evidence_submitted")]
    return {"merchant_id": merchant_id, "open": len(open_), "amount_at_risk": money(sum(d.amount for d in open_)),
            "by_status": {s: sum(1 for d in rows if d.status == s) for s in sorted({d.status for d in rows})},
            "next_respond_by": min((d.respond_by for d in rows if d.status == "needs_response"), default=None)}


_cap("disputes.exposure", "read", "A merchant's open disputes: how many, the amount at risk, the next response deadline.",
     {"merchant_id": (str, REQ)}, _disputes_exposure)


# ----- fees --------------------------------------------------------------------------------------

def _fees_waive(w: PaymentsWorld, fee_id: str, amount: float, reason: str) -> dict[str, Any]:
    fee = w.tables["fees"].get(fee_id) or _missing("fees", fee_id)
    if fee.status != "charged":
        raise ToolError(f"fee {fee_id} is already {fee.status}")
    if money(amount) != fee.amount:
        raise ToolError(f"a waiver covers the whole fee: amount must be {fee.amount:.2f}")
    reason = _text(reason, "reason")
    fee = w.tables["fees"].update(fee.id, status="waived")
    ops = w.account_of(fee.merchant_id, "operating")
    w.post(ops.id, fee.amount, "fee_waiver", fee.id)
    limit = _rule(w, "fees", fee.merchant_id, "fee_waiver_limit", None)
    return {"fee": fee, "credited_to": ops.id, "reason": reason,
            "approval_needed_above": limit}


_cap("fees.waive", "write", "Waive a charged fee: its amount is credited back to the merchant's operating account.",
     {"fee_id": (str, REQ), "amount": (float, REQ), "reason": (str, REQ)}, _fees_waive,
     ("the fee is charged (not already waived)", "amount equals the fee's amount",
      "above the governing fees policy's fee_waiver_limit the merchant's approval of the exact terms (fee_id, amount) comes first"),
     ("the fee is waived", "a fee_waiver ledger entry credits the amount to the operating account"), ("fees", "fee_id"))


def _fees_estimate(w: PaymentsWorld, merchant_id: str, kind: str, amount: float) -> dict[str, Any]:
    m = w.tables["merchants"].get(merchant_id) or _missing("merchants", merchant_id)
    if kind not in FEE_KINDS:
        raise ToolError(f"kind must be one of {', '.join(FEE_KINDS)}")
    sched = next((s for s in w.tables["fee_schedules"] if s.region == m.region and s.tier == m.tier and s.kind == kind), None)
    if sched is None:
        raise ToolError(f"no fee schedule for {kind} fees of {m.tier} merchants in {m.region}")
    return {"schedule": sched.id, "pct": sched.pct, "fixed": sched.fixed, "fee": money(money(amount) * sched.pct / 100 + sched.fixed)}


_cap("fees.estimate", "read", "Estimate a fee from the fee schedule of the merchant's region and tier.",
     {"merchant_id": (str, REQ), "kind": (str, REQ), "amount": (float, REQ)}, _fees_estimate)


# ----- settlements and reconciliation -------------------------------------------------------------

def _settlement_check(w: PaymentsWorld, settlement_id: str) -> dict[str, Any]:
    st = w.tables["settlements"].get(settlement_id) or _missing("settlements", settlement_id)
    lines = [ln for ln in w.tables["settlement_lines"] if ln.settlement_id == st.id]
    expected = money(sum(ln.amount - ln.fee for ln in lines))
    breaks = [b for b in w.tables["reconciliation_breaks"] if b.settlement_id == st.id]
    return {"settlement_id": st.id, "status": st.status, "net": st.net, "lines": len(lines), "expected_net": expected,
            "difference": money(expected - st.net), "breaks": _rows_view(breaks)}


_cap("settlements.check", "read", "Compare a settlement's lines with its net amount; lists its reconciliation breaks.",
     {"settlement_id": (str, REQ)}, _settlement_check)


def _settlements_reconcile(w: PaymentsWorld, settlement_id: str) -> Any:
    st = w.tables["settlements"].get(settlement_id) or _missing("settlements", settlement_id)
    if st.status != "paid":
        raise ToolError(f"settlement {settlement_id} is {st.status}; only a paid settlement can be reconciled")
    check = _settlement_check(w, settlement_id)
    pending = [b["id"] for b in check["breaks"] if b["status"] in ("open", "investigating")]
    if pending:
        raise ToolError(f"settlement {settlement_id} has unresolved breaks: {', '.join(pending)}")
    if check["difference"] and not check["breaks"]:
        raise ToolError(f"settlement {settlement_id}'s lines add up to {check['expected_net']:.2f}, not {st.net:.2f}; "
                        "record the break with reconciliation.open_break first")
    return w.tables["settlements"].update(st.id, status="reconciled")


_cap("settlements.reconcile", "write", "Mark a paid settlement reconciled once its lines add up or every break is settled.",
     {"settlement_id": (str, REQ)}, _settlements_reconcile,
     ("the settlement is paid", "no break on it is open or investigating", "a difference between lines and net has a break recorded"),
     ("the settlement is reconciled",), ("settlements", "settlement_id"))


def _break(w: PaymentsWorld, break_id: str, status: str) -> Any:
    b = w.tables["reconciliation_breaks"].get(break_id) or _missing("reconciliation_breaks", break_id)
    if b.status != status:
        raise ToolError(f"break {break_id} is {b.status}; this needs it {status}")
    return b


def _breaks_open(w: PaymentsWorld, settlement_id: str) -> Any:
    check = _settlement_check(w, settlement_id)
    if not check["difference"]:
        raise ToolError(f"settlement {settlement_id}'s lines add up to its net; there is no break")
    if any(b["status"] in ("open", "investigating") for b in check["breaks"]):
        raise ToolError(f"settlement {settlement_id} already has an unresolved break")
    st = w.tables["settlements"].require(settlement_id)
    diff = money(check["expected_net"] - st.net)
    return w.tables["reconciliation_breaks"].insert(type(w).schema["reconciliation_breaks"](
        id=w.ids.next("RB"), settlement_id=st.id, merchant_id=st.merchant_id, expected=check["expected_net"], actual=st.net,
        difference=diff))


def _breaks_write_off(w: PaymentsWorld, break_id: str) -> Any:
    b = _break(w, break_id, "open")
    tolerance = _rule(w, "settlements", b.merchant_id, "reconciliation_tolerance", 0.0)
    if abs(b.difference) > tolerance:
        raise ToolError(f"break {break_id} of {b.difference:.2f} is above the reconciliation tolerance {tolerance:.2f}; investigate it")
    return w.tables["reconciliation_breaks"].update(b.id, status="written_off", note=f"written off at {w.clock.text()}")


def _breaks_investigate(w: PaymentsWorld, break_id: str, note: str) -> Any:
    b = _break(w, break_id, "open")
    return w.tables["reconciliation_breaks"].update(b.id, status="investigating", note=_text(note, "note"))


def _breaks_resolve(w: PaymentsWorld, break_id: str, resolution: str) -> Any:
    b = _break(w, break_id, "investigating")
    return w.tables["reconciliation_breaks"].update(b.id, status="resolved", note=f"{b.note}; resolved: {_text(resolution, 'resolution')}")


_cap("reconciliation.open_break", "write", "Record the difference between a settlement's lines and its net as a break.",
     {"settlement_id": (str, REQ)}, _breaks_open, ("the lines and the net differ", "no unresolved break exists on the settlement"),
     ("an open break records expected, actual and difference",), ("settlements", "settlement_id"))
_cap("reconciliation.write_off", "write", "Write off an open break within the governing reconciliation tolerance.",
     {"break_id": (str, REQ)}, _breaks_write_off,
     ("the break is open", "its difference is at most the governing settlements policy's reconciliation_tolerance"),
     ("the break is written_off",), ("reconciliation_breaks", "break_id"))
_cap("reconciliation.investigate", "write", "Start investigating an open break (required above the tolerance).",
     {"break_id": (str, REQ), "note": (str, REQ)}, _breaks_investigate, ("the break is open",),
     ("the break is investigating, with the note",), ("reconciliation_breaks", "break_id"))
_cap("reconciliation.resolve", "write", "Close an investigated break with its resolution.",
     {"break_id": (str, REQ), "resolution": (str, REQ)}, _breaks_resolve, ("the break is investigating",),
     ("the break is resolved, with the resolution",), ("reconciliation_breaks", "break_id"))


# ----- statements ----------------------------------------------------------------------------------

PERIOD_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def _period_bounds(period: str) -> tuple[str, str]:
    if not PERIOD_RE.match(period):
        raise ToolError("period must be YYYY-MM")
    year, month = int(period[:4]), int(period[5:])
    nxt = f"{year + (month == 12):04d}-{month % 12 + 1:02d}"
    return f"{period}-01 00:00:00", f"{nxt}-01 00:00:00"


def _statement_figures(w: PaymentsWorld, account_id: str, period: str) -> dict[str, Any]:
    acc = w.tables["accounts"].get(account_id) or _missing("accounts", account_id)
    start, end = _period_bounds(period)
    if end > w.clock.text():
        raise ToolError(f"period {period} has not ended yet")
    opening = closing = 0.0
    entries = 0
    for e in w.tables["ledger"]:
        if e.account_id != acc.id or e.time >= end:
            continue
        closing += e.amount
        if e.time < start:
            opening += e.amount
        else:
            entries += 1
    return {"account_id": acc.id, "merchant_id": acc.merchant_id, "period": period, "opening": money(opening),
            "closing": money(closing), "entries": entries}


def _statements_generate(w: PaymentsWorld, account_id: str, period: str) -> Any:
    fig = _statement_figures(w, account_id, period)
    for s in w.tables["statements"]:
        if s.account_id == account_id and s.period == period:
            if s.status == "issued":
                raise ToolError(f"statement {s.id} for {period} is already issued")
            return w.tables["statements"].update(s.id, opening=fig["opening"], closing=fig["closing"], entries=fig["entries"])
    return w.tables["statements"].insert(Statement(id=w.ids.next("SM"), **fig))


def _statements_issue(w: PaymentsWorld, statement_id: str) -> Any:
    s = w.tables["statements"].get(statement_id) or _missing("statements", statement_id)
    if s.status != "draft":
        raise ToolError(f"statement {statement_id} is already issued")
    return w.tables["statements"].update(s.id, status="issued", issued_at=w.clock.text())


_cap("statements.preview", "read", "Opening and closing balance and entry count of an account for a past month (YYYY-MM).",
     {"account_id": (str, REQ), "period": (str, REQ)}, _statement_figures)
_cap("statements.generate", "write", "Generate (or refresh) the draft statement of an account for a past month.",
     {"account_id": (str, REQ), "period": (str, REQ)}, _statements_generate,
     ("the account exists", "period is YYYY-MM and has ended", "no issued statement exists for it"),
     ("a draft statement holds the period's opening, closing and entry count from the ledger",), ("accounts", "account_id"))
_cap("statements.issue", "write", "Issue a draft statement to the merchant.", {"statement_id": (str, REQ)}, _statements_issue,
     ("the statement is a draft",), ("the statement is issued",), ("statements", "statement_id"))


# ----- verifications (KYC/KYB) ------------------------------------------------------------------------

def _verification(w: PaymentsWorld, verification_id: str) -> Any:
    v = w.tables["verifications"].get(verification_id) or _missing("verifications", verification_id)
    if v.status != "pending_documents":
        raise ToolError(f"verification {verification_id} is {v.status}; documents can be added only while pending_documents")
    return v


def _verifications_attach(w: PaymentsWorld, verification_id: str, upload_id: str) -> Any:
    return _attach(w, "verifications", _verification(w, verification_id), "attachments", upload_id)


def _verification_required(w: PaymentsWorld, merchant_id: str, kind: str) -> tuple[str, ...]:
    if kind == "kyb":
        need = _rule(w, "verifications", merchant_id, "kyb_required_documents", ["incorporation_certificate"])
        return tuple(need) if isinstance(need, (list, tuple)) else (str(need),)
    return ("proof_of_address",)


def _verifications_submit(w: PaymentsWorld, verification_id: str) -> dict[str, Any]:
    v = _verification(w, verification_id)
    if not v.attachments:
        raise ToolError(f"verification {verification_id} has no attached document")
    minutes = int(_rule(w, "verifications", v.merchant_id, "verification_review_minutes", 15))
    when = _later(w, minutes)
    v = w.tables["verifications"].update(v.id, status="submitted", required=_verification_required(w, v.merchant_id, v.kind),
                                        submitted_at=w.clock.text(), decides_at=when)
    _schedule(w, "EVV", when, "verification_decision", v.id)
    return {"verification": v, "decides_at": when}


def _fire_verification(w: PaymentsWorld, ev: Event) -> str:
    v = w.tables["verifications"].get(ev.ref)
    if v is None or v.status != "submitted":
        return f"verification {ev.ref}: nothing to decide"
    types = {w.tables["uploads"].require(u).doc_type for u in v.attachments}
    missing = [d for d in v.required if d not in types]
    w.tables["verifications"].update(v.id, status="rejected" if missing else "approved")
    if missing:
        return f"verification {v.id} rejected: missing {', '.join(missing)}"
    return f"verification {v.id} approved"


OPERATION_EVENTS["verification_decision"] = _fire_verification


def _verifications_requirements(w: PaymentsWorld, merchant_id: str, kind: str) -> dict[str, Any]:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    if kind not in ("kyc", "kyb"):
        raise ToolError("kind must be kyc or kyb")
    doc = w.governing("verifications", merchant_id)
    return {"merchant_id": merchant_id, "kind": kind, "required_documents": list(_verification_required(w, merchant_id, kind)),
            "governing_document": doc.id if doc else None}


_cap("verifications.requirements", "read", "The documents a KYC or KYB verification of the merchant needs (governing policy).",
     {"merchant_id": (str, REQ), "kind": (str, REQ)}, _verifications_requirements)
_cap("verifications.attach_document", "write", "Attach a customer upload to a pending verification.",
     {"verification_id": (str, REQ), "upload_id": (str, REQ)}, _verifications_attach,
     ("the verification is pending_documents", "the upload is the merchant's"),
     ("the upload is attached (attaching it twice changes nothing)",), ("verifications", "verification_id"))
_cap("verifications.submit", "write", "Submit a verification with its documents; it is decided later on the clock.",
     {"verification_id": (str, REQ)}, _verifications_submit,
     ("the verification is pending_documents", "at least one document is attached"),
     ("the verification is submitted with the governing required documents",
      "a verification_decision event is scheduled after the governing review minutes: approved if every required document is attached"),
     ("verifications", "verification_id"))


# ----- bank-account changes --------------------------------------------------------------------------

def _bank_change(w: PaymentsWorld, merchant_id: str, bank_account_id: str, upload_id: str) -> dict[str, Any]:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    bank = w.tables["bank_accounts"].get(bank_account_id)
    if bank is None or bank.merchant_id != merchant_id:
        raise ToolError(f"{bank_account_id!r} is not a bank account of merchant {merchant_id!r}")
    up = _upload_of(w, upload_id, merchant_id)
    need = _rule(w, "account_changes", merchant_id, "bank_change_document", "bank_statement")
    if up.doc_type != need:
        raise ToolError(f"a bank-account change needs an uploaded {need}; upload {upload_id} is a {up.doc_type}")
    for c in w.tables["account_changes"]:
        if c.merchant_id == merchant_id and c.status == "requested":
            raise ToolError(f"change {c.id} of merchant {merchant_id} is still in its cooling period")
    minutes = float(_rule(w, "account_changes", merchant_id, "bank_change_cooling_minutes", 60))
    when = _later(w, minutes)
    change = w.tables["account_changes"].insert(AccountChange(
        id=w.ids.next("CH"), merchant_id=merchant_id, bank_account_id=bank_account_id, upload_id=upload_id,
        requested_at=w.clock.text(), effective_at=when))
    _schedule(w, "EVC", when, "bank_change_effective", change.id)
    return {"change": change, "effective_at": when, "note": "payouts to this bank account are refused until then"}


def _bank_change_cancel(w: PaymentsWorld, change_id: str) -> Any:
    c = w.tables["account_changes"].get(change_id) or _missing("account_changes", change_id)
    if c.status != "requested":
        raise ToolError(f"change {change_id} is {c.status}; only a requested change can be cancelled")
    return w.tables["account_changes"].update(c.id, status="cancelled")


def _fire_bank_change(w: PaymentsWorld, ev: Event) -> str:
    c = w.tables["account_changes"].get(ev.ref)
    if c is None or c.status != "requested":
        return f"change {ev.ref}: nothing to do"
    w.tables["account_changes"].update(c.id, status="effective")
    return f"change {c.id} is effective: bank account {c.bank_account_id} takes payouts"


OPERATION_EVENTS["bank_change_effective"] = _fire_bank_change


_cap("account_changes.request_bank_change", "write",
     "Make a bank account the merchant's payout destination; effective after the governing cooling period.",
     {"merchant_id": (str, REQ), "bank_account_id": (str, REQ), "upload_id": (str, REQ)}, _bank_change,
     ("the bank account is the merchant's", "the upload is the governing account-changes policy's bank_change_document",
      "no other change of the merchant is cooling"),
     ("a requested change; a bank_change_effective event after bank_change_cooling_minutes",
      "payouts to the bank account are refused until the change is effective"), ("merchants", "merchant_id"))
_cap("account_changes.cancel", "write", "Cancel a bank-account change still in its cooling period.",
     {"change_id": (str, REQ)}, _bank_change_cancel, ("the change is requested",), ("the change is cancelled",),
     ("account_changes", "change_id"))


# ----- payout schedules, webhooks, notifications, limits ----------------------------------------------

def _schedule_row(w: PaymentsWorld, schedule_id: str) -> Any:
    return w.tables["payout_schedules"].get(schedule_id) or _missing("payout_schedules", schedule_id)


def _schedules_update(w: PaymentsWorld, schedule_id: str, cadence: str, day: int) -> Any:
    s = _schedule_row(w, schedule_id)
    if cadence not in ("daily", "weekly", "monthly", "manual"):
        raise ToolError("cadence must be daily, weekly, monthly or manual")
    if cadence == "weekly" and not 1 <= day <= 7:
        raise ToolError("a weekly schedule's day is 1 (Monday) to 7")
    if cadence == "monthly" and not 1 <= day <= 28:
        raise ToolError("a monthly schedule's day is 1 to 28")
    return w.tables["payout_schedules"].update(s.id, cadence=cadence, day=day if cadence in ("weekly", "monthly") else 0)


def _schedules_set(status: str) -> Any:
    def fn(w: PaymentsWorld, schedule_id: str) -> Any:
        s = _schedule_row(w, schedule_id)
        if s.status == status:
            raise ToolError(f"schedule {schedule_id} is already {status}")
        return w.tables["payout_schedules"].update(s.id, status=status)
    return fn


_cap("payout_schedules.update", "write", "Change when automatic payouts run (cadence and day).",
     {"schedule_id": (str, REQ), "cadence": (str, REQ), "day": (int, 0)}, _schedules_update,
     ("cadence is daily, weekly, monthly or manual", "weekly: day 1-7; monthly: day 1-28"),
     ("the schedule has the new cadence and day",), ("payout_schedules", "schedule_id"))
_cap("payout_schedules.pause", "write", "Pause automatic payouts.", {"schedule_id": (str, REQ)}, _schedules_set("paused"),
     ("the schedule is active",), ("the schedule is paused",), ("payout_schedules", "schedule_id"))
_cap("payout_schedules.resume", "write", "Resume automatic payouts.", {"schedule_id": (str, REQ)}, _schedules_set("active"),
     ("the schedule is paused",), ("the schedule is active",), ("payout_schedules", "schedule_id"))


def _webhooks_set(status: str) -> Any:
    def fn(w: PaymentsWorld, webhook_id: str) -> Any:
        h = w.tables["webhooks"].get(webhook_id) or _missing("webhooks", webhook_id)
        if h.status == status:
            raise ToolError(f"webhook {webhook_id} is already {status}")
        return w.tables["webhooks"].update(h.id, status=status)
    return fn


_cap("webhooks.disable", "write", "Stop sending events to a webhook endpoint.", {"webhook_id": (str, REQ)}, _webhooks_set("disabled"),
     ("the webhook is enabled",), ("the webhook is disabled",), ("webhooks", "webhook_id"))
_cap("webhooks.enable", "write", "Resume sending events to a webhook endpoint.", {"webhook_id": (str, REQ)}, _webhooks_set("enabled"),
     ("the webhook is disabled",), ("the webhook is enabled",), ("webhooks", "webhook_id"))


def _notify(w: PaymentsWorld, merchant_id: str, subject: str, body: str) -> Any:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    subject, body = _text(subject, "subject"), _text(body, "body")
    return w.tables["notifications"].insert(Notification(id=w.ids.next("NT"), merchant_id=merchant_id, subject=subject,
                                                        body=body, time=w.clock.text(), step=_step(w)))


_cap("notifications.send", "write", "Send the merchant a written notice (kept on record).",
     {"merchant_id": (str, REQ), "subject": (str, REQ), "body": (str, REQ)}, _notify,
     ("the merchant exists", "subject and body are non-empty, at most 2000 characters"),
     ("a notification is on record",), ("merchants", "merchant_id"))


def _limits_in_force(w: PaymentsWorld, merchant_id: str) -> dict[str, Any]:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    day = w.clock.text()[:10]
    paid_today = money(sum(p.amount for p in w.tables["payouts"] if p.merchant_id == merchant_id and p.time[:10] == day))
    daily = next((lm.amount for lm in w.tables["limits"] if lm.merchant_id == merchant_id and lm.kind == "daily_payout"), None)
    if daily is None:
        daily = _rule(w, "limits", merchant_id, "daily_payout_limit", None)
    return {"merchant_id": merchant_id, "single_payout_limit": w.payout_limit(merchant_id), "daily_payout_limit": daily,
            "paid_out_today": paid_today}


_cap("limits.in_force", "read", "The single-payout and daily payout limits in force for a merchant, and what was paid out today.",
     {"merchant_id": (str, REQ)}, _limits_in_force)


def _events_upcoming(w: PaymentsWorld, hours: float) -> list[dict[str, Any]]:
    end = (w.clock.now + timedelta(hours=max(0.0, min(hours, 24 * 30)))).strftime(TIME_FORMAT)
    rows = sorted((e for e in w.tables["events"] if e.status == "scheduled" and e.time <= end), key=lambda e: (e.time, e.id))
    return _rows_view(rows)


_cap("events.upcoming", "read", "Scheduled events due within the next `hours` (at most 30 days), in firing order.",
     {"hours": (float, 24.0)}, _events_upcoming)


# ----- derived reads across the books -------------------------------------------------------------------

def _merchant(w: PaymentsWorld, merchant_id: str) -> Any:
    return w.tables["merchants"].get(merchant_id) or _missing("merchants", merchant_id)


def _merchants_profile(w: PaymentsWorld, merchant_id: str) -> dict[str, Any]:
    m = _merchant(w, merchant_id)
    return {"merchant": m, "accounts": _rows_view([a for a in w.tables["accounts"] if a.merchant_id == m.id]),
            "bank_accounts": _rows_view([b for b in w.tables["bank_accounts"] if b.merchant_id == m.id])}


def _reserve_position(w: PaymentsWorld, merchant_id: str) -> dict[str, Any]:
    m = _merchant(w, merchant_id)
    acc = w.account_of(m.id, "reserve")
    floor = _rule(w, "reserves", m.id, "reserve_floor", None)
    bal, _, available = _books(w, acc.id)
    return {"account_id": acc.id, "balance": bal, "available": available, "floor": floor,
            "headroom": None if floor is None else money(bal - floor)}


def _fx_rates(w: PaymentsWorld) -> dict[str, Any]:
    from servicegym.world_state.payments.world import DEFAULT_FX_RATES

    return {"per_usd": dict(sorted((w.extra.get("fx_rates") or DEFAULT_FX_RATES).items())), "at": w.clock.text()}


def _ledger_between(w: PaymentsWorld, account_id: str, start: str, end: str) -> list[dict[str, Any]]:
    if w.tables["accounts"].get(account_id) is None:
        _missing("accounts", account_id)
    if end < start:
        raise ToolError("end must not be before start")
    return _rows_view([e for e in w.tables["ledger"] if e.account_id == account_id and start <= e.time <= end])


def _payouts_summary(w: PaymentsWorld, merchant_id: str, day: str) -> dict[str, Any]:
    _merchant(w, merchant_id)
    rows = [p for p in w.tables["payouts"] if p.merchant_id == merchant_id and p.time[:10] == day]
    return {"merchant_id": merchant_id, "day": day, "payouts": len(rows), "total": money(sum(p.amount for p in rows)),
            "to_bank_accounts": sorted({p.bank_account_id for p in rows})}


def _fees_summary(w: PaymentsWorld, merchant_id: str) -> dict[str, Any]:
    _merchant(w, merchant_id)
    out: dict[str, dict[str, float]] = {}
    for f in w.tables["fees"]:
        if f.merchant_id == merchant_id:
            row = out.setdefault(f.kind, {"charged": 0.0, "waived": 0.0})
            row[f.status] = money(row[f.status] + f.amount)
    return {"merchant_id": merchant_id, "by_kind": out}


def _risk_latest(w: PaymentsWorld, merchant_id: str) -> Any:
    _merchant(w, merchant_id)
    rows = [r for r in w.tables["risk_reviews"] if r.merchant_id == merchant_id]
    return max(rows, key=lambda r: (r.created_at, r.id)) if rows else None


def _webhooks_create(w: PaymentsWorld, merchant_id: str, url: str, topics: list[str]) -> Any:
    _merchant(w, merchant_id)
    if not re.match(r"^https://[A-Za-z0-9.-]+(/[^\s]*)?$", url) or len(url) > 300:
        raise ToolError("url must be an https URL of at most 300 characters")
    if not topics or any(not re.match(r"^[a-z_]+\.[a-z_]+$", t) for t in topics):
        raise ToolError("topics must be a non-empty list like ['payout.paid', 'dispute.created']")
    return w.tables["webhooks"].insert(type(w).schema["webhooks"](id=w.ids.next("WH"), merchant_id=merchant_id, url=url,
                                                                 topics=",".join(dict.fromkeys(topics))))


_cap("merchants.profile", "read", "A merchant with its accounts and bank accounts.", {"merchant_id": (str, REQ)}, _merchants_profile)
_cap("accounts.reserve_position", "read", "A merchant's reserve balance against the governing reserve floor (headroom).",
     {"merchant_id": (str, REQ)}, _reserve_position)
_cap("fx.rates", "read", "The current FX rates (units per US dollar).", {}, _fx_rates)
_cap("ledger.between", "read", "An account's ledger entries between two times (inclusive, YYYY-MM-DD HH:MM:SS).",
     {"account_id": (str, REQ), "start": (str, REQ), "end": (str, REQ)}, _ledger_between)
_cap("payouts.summary", "read", "A merchant's payouts on one day (YYYY-MM-DD): count, total, destinations.",
     {"merchant_id": (str, REQ), "day": (str, REQ)}, _payouts_summary)
_cap("fees.summary", "read", "A merchant's fees charged and waived, per kind.", {"merchant_id": (str, REQ)}, _fees_summary)
_cap("risk_reviews.latest", "read", "A merchant's latest risk review (null when none).", {"merchant_id": (str, REQ)}, _risk_latest)
_cap("webhooks.create", "write", "Register a webhook endpoint for event topics.",
     {"merchant_id": (str, REQ), "url": (str, REQ), "topics": (list[str], REQ)}, _webhooks_create,
     ("the merchant exists", "url is https", "topics look like payout.paid"), ("an enabled webhook is on record",),
     ("merchants", "merchant_id"))


def _holds_active(w: PaymentsWorld, merchant_id: str) -> list[dict[str, Any]]:
    _merchant(w, merchant_id)
    accounts = {a.id for a in w.tables["accounts"] if a.merchant_id == merchant_id}
    return _rows_view([h for h in w.tables["holds"] if h.account_id in accounts and h.status == "active"])


def _settlements_unreconciled(w: PaymentsWorld, merchant_id: str) -> list[dict[str, Any]]:
    _merchant(w, merchant_id)
    return [_settlement_check(w, s.id) for s in w.tables["settlements"] if s.merchant_id == merchant_id and s.status == "paid"]


_cap("holds.active_for_merchant", "read", "The active holds on any of a merchant's accounts.", {"merchant_id": (str, REQ)}, _holds_active)
_cap("settlements.unreconciled", "read", "A merchant's paid settlements not yet reconciled, each checked against its lines.",
     {"merchant_id": (str, REQ)}, _settlements_unreconciled)
