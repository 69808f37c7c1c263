"""The payments world's base records: the scope constants and the entity classes of merchants,
accounts, the ledger, holds, payments, refunds, payouts, receipts, cases, uploads, approvals,
applications, events, FX conversions and documents.

They live apart from ``world.py`` so that the knowledge base (``knowledge.py``) and the operations'
records (``records.py``) can build on them without importing the world (one-way imports).
"""

from __future__ import annotations

from typing import Any, Literal

from servicegym.world_state.core import Entity, round2

PRODUCTS = ("payouts", "refunds", "reserves", "reviews")
REGIONS = ("US", "EU", "UK", "APAC")
TIERS = ("standard", "plus", "enterprise")
CURRENCIES = ("USD", "EUR", "GBP")
DOC_TYPES = ("bank_statement", "proof_of_address", "incorporation_certificate", "tax_form")


money = round2  # ``round(float(x) + 0.0, 2)``: an amount to the cent (memoized, ``core.round2``)


class Merchant(Entity):
    id: str
    name: str
    region: str
    tier: str
    currency: str


class Account(Entity):
    id: str
    merchant_id: str
    kind: Literal["operating", "reserve"]
    currency: str


class BankAccount(Entity):
    id: str
    merchant_id: str
    bank: str
    last4: str
    currency: str = ""  # when set, only an account in this currency may pay out to it


class LedgerEntry(Entity):
    """One signed movement on one account; entries are only ever appended."""

    id: str
    seq: int
    time: str
    step: int
    account_id: str
    amount: float
    kind: str
    ref: str


class Hold(Entity):
    id: str
    account_id: str
    amount: float
    reason: str
    case_id: str = ""
    status: Literal["active", "released"] = "active"


class Payment(Entity):
    """A customer's card payment to the merchant (what a refund refers to)."""

    id: str
    merchant_id: str
    amount: float
    created_at: str
    description: str


class Refund(Entity):
    id: str
    payment_id: str
    amount: float
    idempotency_key: str
    time: str
    step: int


class Payout(Entity):
    id: str
    merchant_id: str
    account_id: str
    bank_account_id: str
    amount: float
    idempotency_key: str
    time: str
    step: int


class Receipt(Entity):
    id: str
    payout_id: str
    amount: float
    confirmed: bool = False


class Case(Entity):
    """A compliance review: documents attached, submitted by ``deadline``, decided by an event."""

    id: str
    merchant_id: str
    hold_id: str
    deadline: str
    status: Literal["open", "submitted", "approved", "rejected", "expired"] = "open"
    attachments: tuple[str, ...] = ()
    required_document: str = ""
    submitted_at: str = ""


class Upload(Entity):
    """A document the customer uploaded (the customer side's write)."""

    id: str
    merchant_id: str
    doc_type: str
    time: str


class Application(Entity):
    """A merchant's application (a payout-limit increase) with its documents; an institutional
    review decides it at ``decides_at`` (a scheduled event); an approved one raises the limit."""

    id: str
    merchant_id: str
    kind: Literal["payout_limit_increase"]
    requested_limit: float
    attachments: tuple[str, ...] = ()
    required_document: str = ""
    status: Literal["submitted", "approved", "rejected"] = "submitted"
    submitted_at: str = ""
    decides_at: str = ""
    granted_limit: float = 0.0


class Approval(Entity):
    """A request for the customer's approval of exact terms; only ``granted`` authorises."""

    id: str
    operation: str
    terms: str
    status: Literal["requested", "granted", "denied"] = "requested"
    approver: str = ""
    requested_step: int = 0
    decided_step: int = -1


class Event(Entity):
    id: str
    time: str
    kind: Literal["settlement", "rule_effective", "review_complete", "case_deadline", "application_decision", "fx_rate",
                  "dispute_deadline", "dispute_decision", "verification_decision", "bank_change_effective"]
    ref: str
    amount: float = 0.0
    note: str = ""
    status: Literal["scheduled", "fired"] = "scheduled"


class FxConversion(Entity):
    id: str
    merchant_id: str
    from_account_id: str
    to_account_id: str
    amount: float
    rate: float
    converted: float
    idempotency_key: str
    time: str
    step: int


class Document(Entity):
    id: str
    title: str
    product: str
    region: str
    tier: str
    currency: str
    version: int
    effective_from: str
    supersedes: str = ""
    rules: dict[str, Any] = {}
    body: str
