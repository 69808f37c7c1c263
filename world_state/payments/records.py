"""The payment-operations records beyond the core ledger: disputes (chargebacks) and their
evidence, fees and fee schedules, settlement batches and their lines, reconciliation breaks,
account statements, KYC/KYB verifications, bank-account changes, limits, payout schedules,
risk reviews, webhooks and notifications sent to the merchant.

Every collection is queryable (``query_records``) and gets the catalogue's generated reads; the
writes over them are in ``operations.py``. Worlds share a *background* of these records (other
merchants' activity, built once per knowledge-base variant, rows immutable and shared between
worlds copy-on-write), so a world holds thousands of records at the cost of a few dict copies.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Literal

from servicegym.world_state.core import TIME_FORMAT, Entity
from servicegym.world_state.payments.entities import Account, BankAccount, LedgerEntry, Merchant, Payment

DISPUTE_REASONS = ("fraudulent", "product_not_received", "duplicate", "not_as_described", "credit_not_processed")
NETWORKS = ("visa", "mastercard", "amex")
FEE_KINDS = ("processing", "chargeback", "payout", "fx", "monthly")
EVIDENCE_TYPES = ("delivery_proof", "invoice", "customer_communication")


class Dispute(Entity):
    """A cardholder's chargeback: the amount left the merchant's operating account when it was
    opened; contested with evidence before ``respond_by``, the network decides it later (won: the
    amount comes back); accepted or expired, it stays lost."""

    id: str
    merchant_id: str
    payment_id: str
    amount: float
    currency: str
    reason_code: str
    network: str
    status: Literal["needs_response", "evidence_submitted", "accepted", "won", "lost", "expired"] = "needs_response"
    opened_at: str
    respond_by: str
    evidence: tuple[str, ...] = ()
    required_evidence: str = ""
    decided_at: str = ""


class Fee(Entity):
    """A fee charged to the merchant's operating account; a waiver credits it back."""

    id: str
    merchant_id: str
    kind: str
    amount: float
    currency: str
    ref: str = ""
    status: Literal["charged", "waived"] = "charged"
    created_at: str


class FeeSchedule(Entity):
    """Reference rates: a percentage and a fixed part per (region, tier, fee kind)."""

    id: str
    region: str
    tier: str
    kind: str
    pct: float
    fixed: float
    currency: str


class Settlement(Entity):
    """A card settlement batch paid into one account: ``net = gross - fees``; reconciled once its
    lines add up (or every break is written off or resolved)."""

    id: str
    merchant_id: str
    account_id: str
    batch_date: str
    gross: float
    fees: float
    net: float
    status: Literal["pending", "paid", "reconciled"] = "paid"


class SettlementLine(Entity):
    id: str
    settlement_id: str
    payment_id: str
    amount: float
    fee: float


class ReconciliationBreak(Entity):
    """A difference between what a settlement's lines say and what arrived; one within the
    governing tolerance is written off, a larger one investigated and then resolved."""

    id: str
    settlement_id: str
    merchant_id: str
    expected: float
    actual: float
    difference: float
    status: Literal["open", "written_off", "investigating", "resolved"] = "open"
    note: str = ""


class Statement(Entity):
    id: str
    account_id: str
    merchant_id: str
    period: str
    opening: float
    closing: float
    entries: int
    status: Literal["draft", "issued"] = "draft"
    issued_at: str = ""


class Verification(Entity):
    """A KYC/KYB review: the documents the governing verification policy requires are attached,
    then it is submitted and decided later on the clock."""

    id: str
    merchant_id: str
    kind: Literal["kyc", "kyb"]
    status: Literal["pending_documents", "submitted", "approved", "rejected"] = "pending_documents"
    required: tuple[str, ...] = ()
    attachments: tuple[str, ...] = ()
    submitted_at: str = ""
    decides_at: str = ""


class AccountChange(Entity):
    """A change of the bank account payouts go to; effective only after the cooling period."""

    id: str
    merchant_id: str
    kind: Literal["bank_account_change"] = "bank_account_change"
    bank_account_id: str
    upload_id: str = ""
    status: Literal["requested", "effective", "cancelled"] = "requested"
    requested_at: str
    effective_at: str


class Limit(Entity):
    id: str
    merchant_id: str
    kind: str
    amount: float
    currency: str


class PayoutSchedule(Entity):
    id: str
    merchant_id: str
    cadence: Literal["daily", "weekly", "monthly", "manual"]
    day: int = 0
    status: Literal["active", "paused"] = "active"


class RiskReview(Entity):
    id: str
    merchant_id: str
    score: int
    level: Literal["low", "medium", "high"]
    reason: str
    created_at: str


class Webhook(Entity):
    id: str
    merchant_id: str
    url: str
    topics: str
    status: Literal["enabled", "disabled"] = "enabled"


class Notification(Entity):
    id: str
    merchant_id: str
    subject: str
    body: str
    time: str
    step: int = 0


OPERATIONS_SCHEMA: dict[str, type[Entity]] = {
    "disputes": Dispute,
    "fees": Fee,
    "fee_schedules": FeeSchedule,
    "settlements": Settlement,
    "settlement_lines": SettlementLine,
    "reconciliation_breaks": ReconciliationBreak,
    "statements": Statement,
    "verifications": Verification,
    "account_changes": AccountChange,
    "limits": Limit,
    "payout_schedules": PayoutSchedule,
    "risk_reviews": RiskReview,
    "webhooks": Webhook,
    "notifications": Notification,
}


# ----- the shared background: other merchants' activity -------------------------------------------

BACKGROUND_MERCHANTS = 40
BACKGROUND_EPOCH = datetime(2025, 11, 1)
_SHOPS = ("Cedar", "Beacon", "Orchid", "Granite", "Willow", "Saffron", "Harbor", "Quill", "Maple", "Indigo")
_KINDS = ("Cafe", "Books", "Cycles", "Studio", "Goods", "Market", "Labs", "Supply")


def _t(dt: datetime) -> str:
    return dt.strftime(TIME_FORMAT)


@lru_cache(maxsize=8)
def background_records(variant: int, regions: tuple[str, ...], tiers: tuple[str, ...],
                       currencies: tuple[str, ...]) -> dict[str, dict[str, Entity]]:
    """Table -> rows of ``BACKGROUND_MERCHANTS`` other merchants (ids ``MB...``, ``ACB...`` and so
    on, never a task's), dated before ``BACKGROUND_EPOCH``, every event long past: their accounts,
    opening ledger entries, payments, disputes, fees, settlements and lines, breaks, statements,
    verifications, limits, schedules, risk reviews and webhooks, plus the fee schedules. Built once
    per variant; the rows are immutable and shared by every world of the variant."""
    rng = random.Random(f"payments-records/{variant}")
    out: dict[str, dict[str, Entity]] = {}

    def put(table: str, row: Entity) -> None:
        out.setdefault(table, {})[row.key] = row

    n = {"fs": 0}
    for region in regions:
        for tier in tiers:
            for kind in FEE_KINDS:
                n["fs"] += 1
                put("fee_schedules", FeeSchedule(id=f"FS{n['fs']:04d}", region=region, tier=tier, kind=kind,
                                                 pct=round(rng.uniform(0.5, 3.5), 2), fixed=round(rng.uniform(0, 0.5), 2),
                                                 currency=rng.choice(currencies)))
    seq = 0
    for i in range(1, BACKGROUND_MERCHANTS + 1):
        mid = f"MB{variant}{i:03d}"
        cur = rng.choice(currencies)
        put("merchants", Merchant(id=mid, name=f"{rng.choice(_SHOPS)} {rng.choice(_KINDS)}", region=rng.choice(regions),
                                  tier=rng.choice(tiers), currency=cur))
        ops, res = f"ACB{variant}{i:03d}0", f"ACB{variant}{i:03d}1"
        put("accounts", Account(id=ops, merchant_id=mid, kind="operating", currency=cur))
        put("accounts", Account(id=res, merchant_id=mid, kind="reserve", currency=cur))
        put("bank_accounts", BankAccount(id=f"BAB{variant}{i:03d}", merchant_id=mid, bank="Crescent Bank", last4=f"{rng.randrange(10000):04d}"))
        start = BACKGROUND_EPOCH - timedelta(days=rng.randint(60, 400))
        for acc, amount in ((ops, rng.randint(500, 20000)), (res, rng.randint(50, 2000))):
            seq += 1
            put("ledger", LedgerEntry(id=f"LEB{variant}{seq:05d}", seq=0, time=_t(start), step=0, account_id=acc,
                                      amount=float(amount), kind="opening", ref="opening"))
        pays = []
        for j in range(rng.randint(8, 20)):
            pid = f"PYB{variant}{i:03d}{j:02d}"
            pays.append(pid)
            put("payments", Payment(id=pid, merchant_id=mid, amount=float(rng.randrange(5, 400)),
                                    created_at=_t(start + timedelta(days=rng.randint(1, 55), minutes=rng.randint(0, 1439))),
                                    description=f"order {rng.randrange(1000, 9999)}"))
        for j in range(rng.randint(0, 3)):
            opened = start + timedelta(days=rng.randint(5, 50))
            status = rng.choice(("won", "lost", "accepted", "expired"))
            put("disputes", Dispute(id=f"DPB{variant}{i:03d}{j}", merchant_id=mid, payment_id=rng.choice(pays),
                                    amount=float(rng.randrange(5, 200)), currency=cur, reason_code=rng.choice(DISPUTE_REASONS),
                                    network=rng.choice(NETWORKS), status=status, opened_at=_t(opened),
                                    respond_by=_t(opened + timedelta(days=10)), required_evidence=rng.choice(EVIDENCE_TYPES),
                                    decided_at=_t(opened + timedelta(days=rng.randint(11, 30)))))
        for j in range(rng.randint(3, 10)):
            put("fees", Fee(id=f"FEB{variant}{i:03d}{j:02d}", merchant_id=mid, kind=rng.choice(FEE_KINDS),
                            amount=round(rng.uniform(0.3, 25), 2), currency=cur, status=rng.choice(("charged", "charged", "waived")),
                            created_at=_t(start + timedelta(days=rng.randint(1, 59)))))
        for j in range(rng.randint(2, 6)):
            sid = f"STB{variant}{i:03d}{j}"
            lines = rng.sample(pays, min(len(pays), rng.randint(2, 5)))
            gross = fees = 0.0
            for k, pid in enumerate(lines):
                amt = float(rng.randrange(5, 400))
                fee = round(amt * 0.02, 2)
                gross, fees = gross + amt, fees + fee
                put("settlement_lines", SettlementLine(id=f"SLB{variant}{i:03d}{j}{k}", settlement_id=sid, payment_id=pid,
                                                       amount=amt, fee=fee))
            put("settlements", Settlement(id=sid, merchant_id=mid, account_id=ops,
                                          batch_date=(start + timedelta(days=7 * (j + 1))).strftime("%Y-%m-%d"),
                                          gross=round(gross, 2), fees=round(fees, 2), net=round(gross - fees, 2),
                                          status=rng.choice(("paid", "reconciled", "reconciled"))))
            if rng.random() < 0.25:
                diff = round(rng.uniform(0.01, 30), 2)
                put("reconciliation_breaks", ReconciliationBreak(
                    id=f"RBB{variant}{i:03d}{j}", settlement_id=sid, merchant_id=mid, expected=round(gross - fees, 2),
                    actual=round(gross - fees - diff, 2), difference=diff, status=rng.choice(("written_off", "resolved"))))
        for j, period in enumerate(("2025-08", "2025-09", "2025-10")):
            opening = float(rng.randint(0, 20000))
            put("statements", Statement(id=f"SMB{variant}{i:03d}{j}", account_id=ops, merchant_id=mid, period=period,
                                        opening=opening, closing=float(rng.randint(0, 20000)), entries=rng.randint(5, 80),
                                        status="issued", issued_at=f"{period}-28 09:00:00"))
        put("verifications", Verification(id=f"VFB{variant}{i:03d}", merchant_id=mid, kind=rng.choice(("kyc", "kyb")),
                                          status=rng.choice(("approved", "approved", "rejected")),
                                          required=("proof_of_address",), submitted_at=_t(start)))
        put("limits", Limit(id=f"LMB{variant}{i:03d}", merchant_id=mid, kind="daily_payout",
                            amount=float(rng.choice((1000, 2500, 5000, 10000))), currency=cur))
        put("payout_schedules", PayoutSchedule(id=f"PSB{variant}{i:03d}", merchant_id=mid,
                                               cadence=rng.choice(("daily", "weekly", "monthly", "manual")), day=rng.randint(1, 28)))
        put("risk_reviews", RiskReview(id=f"RRB{variant}{i:03d}", merchant_id=mid, score=rng.randint(1, 99),
                                       level=rng.choice(("low", "low", "medium", "high")), reason="periodic review",
                                       created_at=_t(start + timedelta(days=30))))
        if rng.random() < 0.5:
            put("webhooks", Webhook(id=f"WHB{variant}{i:03d}", merchant_id=mid, url=f"https://hooks.example/{mid.lower()}",
                                    topics="payout.paid,dispute.created"))
    return out
