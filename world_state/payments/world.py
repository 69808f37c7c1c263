"""The payments world (BizBench-style compliant payment operations).

Merchants own accounts (``operating`` and ``reserve``) whose balances are *derived* from an
append-only ledger; holds reduce what is available; payouts, refunds, FX conversions (at the world's rates),
receipts, review cases, customer uploads and approvals are records. A simulated clock moves only through ``wait``;
scheduled events (settlements arriving, rule versions taking effect, review completions, case
deadlines) fire in clock order while it moves.

The knowledge base holds versioned, scoped documents: ``(product, region, tier, currency)``
with a ``version``, ``effective_from`` and ``supersedes``. The *governing* document for an
action is the highest version among those whose scope matches and whose ``effective_from`` is
not after the moment of the action; superseded and current guidance coexist in the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from servicegym.world_state.core import Entity, World, parse_time, unvalidated
from servicegym.world_state.payments.entities import (  # noqa: F401  (re-exported)
    CURRENCIES,
    DOC_TYPES,
    PRODUCTS,
    REGIONS,
    TIERS,
    Account,
    Application,
    Approval,
    BankAccount,
    Case,
    Document,
    Event,
    FxConversion,
    Hold,
    LedgerEntry,
    Merchant,
    Payment,
    Payout,
    Receipt,
    Refund,
    Upload,
    money,
)
from servicegym.world_state.payments.platform import PLATFORM_SCHEMA
from servicegym.world_state.payments.records import OPERATIONS_SCHEMA
from servicegym.world_state.tools import ToolError

PAYMENTS_SCHEMA: dict[str, type[Entity]] = {
    "merchants": Merchant,
    "accounts": Account,
    "bank_accounts": BankAccount,
    "ledger": LedgerEntry,
    "holds": Hold,
    "payments": Payment,
    "refunds": Refund,
    "payouts": Payout,
    "receipts": Receipt,
    "cases": Case,
    "uploads": Upload,
    "approvals": Approval,
    "applications": Application,
    "events": Event,
    "fx_conversions": FxConversion,
    "documents": Document,
    **OPERATIONS_SCHEMA,
    **PLATFORM_SCHEMA,
}

_LEDGER_FIELDS = tuple(LedgerEntry.model_fields)

# units of each currency per US dollar, unless a world spec gives its own ``fx_rates``
DEFAULT_FX_RATES = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79}

# the terms an approval binds to, per operation (everything but the idempotency key)
APPROVAL_TERMS: dict[str, tuple[str, ...]] = {
    "payouts.create": ("merchant_id", "account_id", "bank_account_id", "amount"),
    "refunds.create": ("payment_id", "amount"),
    "fees.waive": ("fee_id", "amount"),
}

# event kind -> handler(world, event) -> note, for the operations' scheduled events (operations.py
# registers them, so the world module does not import the capabilities)
OPERATION_EVENTS: dict[str, Callable[[Any, Any], str]] = {}


def canonical_terms(operation: str, args: dict[str, Any]) -> str:
    keys = APPROVAL_TERMS[operation]
    return json.dumps({k: (money(args[k]) if k == "amount" else args[k]) for k in keys}, sort_keys=True)


class PaymentsWorld(World):
    schema = PAYMENTS_SCHEMA

    # the builder (``build_payments_world``) hands over the task's own and merged row dicts and
    # passes the background's (thousands of rows, shared by every world of a knowledge-base
    # variant), which nothing changes in place: copying them cost a third of building a world
    shares_given_tables = True

    # ----- ledger ---------------------------------------------------------------------------
    def balance(self, account_id: str) -> float:
        return money(sum(e.amount for e in self.table("ledger") if e.account_id == account_id))

    def held(self, account_id: str) -> float:
        # the active holds' amounts in table order, summed as one list (no generator frame)
        return money(sum([h.amount for h in self.tables["holds"].rows.values()
                          if h.account_id == account_id and h.status == "active"]))

    def available(self, account_id: str) -> float:
        return money(self.balance(account_id) - self.held(account_id))

    def post(self, account_id: str, amount: float, kind: str, ref: str) -> LedgerEntry:
        """Append the ledger entry of ``amount`` (rounded to the cent) on ``account_id``."""
        extra = self.extra
        seq = int(extra.get("ledger_seq", 0)) + 1
        extra["ledger_seq"] = seq
        step = int(extra.get("_step", 0))
        amount = money(amount)
        if type(account_id) is str and type(kind) is str and type(ref) is str:
            # every value already has its field's type: the entry ``LedgerEntry(...)`` makes, unvalidated
            entry = unvalidated(LedgerEntry, {"id": f"LE{seq:05d}", "seq": seq, "time": self.clock.text(), "step": step,
                                              "account_id": account_id, "amount": amount, "kind": kind, "ref": ref},
                                set(_LEDGER_FIELDS))
        else:
            entry = LedgerEntry(id=f"LE{seq:05d}", seq=seq, time=self.clock.text(), step=step, account_id=account_id,
                                amount=amount, kind=kind, ref=ref)
        return self.tables["ledger"].insert(entry)

    def post_cents(self, account_id: str, amount: float, kind: str, ref: str) -> LedgerEntry:
        """``post`` of string ids and an amount already to the cent (a float ``money`` gave, or its
        negation): the same entry, without rounding the amount again or testing the ids' types."""
        extra = self.extra
        seq = int(extra.get("ledger_seq", 0)) + 1
        extra["ledger_seq"] = seq
        entry = unvalidated(LedgerEntry, {"id": f"LE{seq:05d}", "seq": seq, "time": self.clock.text(),
                                          "step": int(extra.get("_step", 0)), "account_id": account_id, "amount": amount,
                                          "kind": kind, "ref": ref}, set(_LEDGER_FIELDS))
        return self.tables["ledger"].insert(entry)

    def account_of(self, merchant_id: str, kind: str) -> Account:
        for a in self.table("accounts"):
            if a.merchant_id == merchant_id and a.kind == kind:
                return a
        raise ToolError(f"merchant {merchant_id!r} has no {kind} account")

    def owner(self, collection: str, key: Any) -> str | None:
        """The merchant a record belongs to (a merchant owns itself; a record without a
        ``merchant_id`` belongs to its account's merchant); None for no such record."""
        table = self.tables.get(collection)
        row = table.get(key) if table is not None and isinstance(key, str) else None
        if row is None:
            return None
        if collection == "merchants":
            return row.id
        mid = getattr(row, "merchant_id", None)
        if mid is None and isinstance(getattr(row, "account_id", None), str):
            acc = self.table("accounts").get(row.account_id)
            mid = acc.merchant_id if acc is not None else None
        return mid

    def fx_rate(self, from_currency: str, to_currency: str) -> float:
        rates = self.extra.get("fx_rates") or DEFAULT_FX_RATES
        if from_currency not in rates or to_currency not in rates:
            raise ToolError(f"no rate for {from_currency}->{to_currency}; currencies: {', '.join(sorted(rates))}")
        return round(rates[to_currency] / rates[from_currency], 6)

    # ----- knowledge base -------------------------------------------------------------------
    def governing(self, product: str, merchant_id: str, at: str | None = None) -> Document | None:
        m = self.table("merchants").get(merchant_id)
        if m is None:
            return None
        return governing_document(self.table("documents"), product, m.region, m.tier, m.currency, at or self.clock.text())

    # ----- clock ----------------------------------------------------------------------------
    def advance(self, minutes: float) -> list[dict[str, Any]]:
        """Move the clock ``minutes`` forward, firing due events in (time, id) order."""
        target = self.clock.now + timedelta(minutes=minutes)
        fired: list[dict[str, Any]] = []
        while True:
            due = [e for e in self.table("events") if e.status == "scheduled" and parse_time(e.time) <= target]
            if not due:
                break
            ev = min(due, key=lambda e: (e.time, e.id))
            self.clock.now = max(self.clock.now, parse_time(ev.time))
            fired.append({"time": ev.time, "event": ev.kind, "ref": ev.ref, "note": self._fire(ev)})
            self.table("events").update(ev.id, status="fired")
        self.clock.now = target
        return fired

    def _fire(self, ev: Event) -> str:
        if ev.kind == "settlement":
            self.post(ev.ref, ev.amount, "settlement", ev.id)
            return f"settlement of {ev.amount:.2f} credited to account {ev.ref}"
        if ev.kind == "rule_effective":
            return ev.note
        if ev.kind == "application_decision":
            return self._decide_application(ev.ref)
        if ev.kind in OPERATION_EVENTS:
            return OPERATION_EVENTS[ev.kind](self, ev)
        if ev.kind == "fx_rate":
            rates = dict(self.extra.get("fx_rates") or DEFAULT_FX_RATES)
            rates[ev.ref] = ev.amount
            self.extra["fx_rates"] = rates
            return f"the {ev.ref} rate is now {ev.amount:g} per USD; earlier quotes are stale"
        cases = self.table("cases")
        case = cases.get(ev.ref)
        if case is None:
            return "no such case"
        if ev.kind == "case_deadline":
            if case.status == "open":
                cases.update(case.id, status="expired")
                return f"case {case.id} expired: it was not submitted by its deadline {case.deadline}"
            return f"deadline of case {case.id} passed (case is {case.status})"
        # review_complete
        types = {self.table("uploads").require(u).doc_type for u in case.attachments}
        if case.required_document in types:
            cases.update(case.id, status="approved")
            return f"review of case {case.id} approved; hold {case.hold_id} may now be released"
        cases.update(case.id, status="rejected")
        return f"review of case {case.id} rejected: the required {case.required_document} was not attached"


    def _decide_application(self, app_id: str) -> str:
        apps = self.table("applications")
        app = apps.get(app_id)
        if app is None:
            return "no such application"
        types = {self.table("uploads").require(u).doc_type for u in app.attachments}
        if app.required_document and app.required_document not in types:
            apps.update(app.id, status="rejected")
            return f"application {app.id} rejected: the required {app.required_document} was not attached"
        apps.update(app.id, status="approved", granted_limit=app.requested_limit)
        return f"application {app.id} approved: the single-payout limit of merchant {app.merchant_id} is now {app.requested_limit:.2f}"

    def payout_limit(self, merchant_id: str, at: str | None = None) -> float | None:
        """The single-payout limit in force: the governing document's, raised by approved applications."""
        at = at or self.clock.text()
        doc = self.governing("payouts", merchant_id, at)
        limit = doc.rules.get("single_payout_limit") if doc else None
        for a in self.table("applications"):
            if a.merchant_id == merchant_id and a.status == "approved" and a.decides_at <= at:
                limit = a.granted_limit if limit is None else max(limit, a.granted_limit)
        return limit


def governing_document(docs: Any, product: str, region: str, tier: str, currency: str, at: str) -> Document | None:
    best = None
    for d in docs:
        if (d.product == product and d.region == region and d.tier == tier and d.currency == currency
                and d.effective_from <= at and (best is None or d.version > best.version)):
            best = d
    return best


# ----- knowledge base: generation and search live in knowledge.py (re-exported here) -------------
# (imported last: knowledge.py reads the entity classes and constants above)
from servicegym.world_state.payments.knowledge import (  # noqa: E402, F401
    KB_EPOCH,
    KB_PRODUCTS,
    KB_VARIANTS,
    PROCEDURES,
    RULE_TEXT,
    BM25Index,
    DocumentIndex,
    TextIndex,
    _background,
    background_documents,
    background_index,
    document_search,
    document_summary,
    policy_document,
    procedure_documents,
    random_rules,
    search_text,
)
