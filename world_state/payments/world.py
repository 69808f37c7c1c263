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
import random
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import repeat
from typing import Any, Literal

from servicegym.world_state.core import Entity, World, parse_time
from servicegym.world_state.tools import RawJson, ToolError, dumps, json_array

PRODUCTS = ("payouts", "refunds", "reserves", "reviews")
REGIONS = ("US", "EU", "UK", "APAC")
TIERS = ("standard", "plus", "enterprise")
CURRENCIES = ("USD", "EUR", "GBP")
DOC_TYPES = ("bank_statement", "proof_of_address", "incorporation_certificate", "tax_form")


def money(x: float) -> float:
    return round(float(x) + 0.0, 2)


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
    kind: Literal["settlement", "rule_effective", "review_complete", "case_deadline", "application_decision", "fx_rate"]
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
}

# units of each currency per US dollar, unless a world spec gives its own ``fx_rates``
DEFAULT_FX_RATES = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79}

# the terms an approval binds to, per operation (everything but the idempotency key)
APPROVAL_TERMS: dict[str, tuple[str, ...]] = {
    "payouts.create": ("merchant_id", "account_id", "bank_account_id", "amount"),
    "refunds.create": ("payment_id", "amount"),
}


def canonical_terms(operation: str, args: dict[str, Any]) -> str:
    keys = APPROVAL_TERMS[operation]
    return json.dumps({k: (money(args[k]) if k == "amount" else args[k]) for k in keys}, sort_keys=True)


class PaymentsWorld(World):
    schema = PAYMENTS_SCHEMA

    # ----- ledger ---------------------------------------------------------------------------
    def balance(self, account_id: str) -> float:
        return money(sum(e.amount for e in self.table("ledger") if e.account_id == account_id))

    def held(self, account_id: str) -> float:
        return money(sum(h.amount for h in self.table("holds") if h.account_id == account_id and h.status == "active"))

    def available(self, account_id: str) -> float:
        return money(self.balance(account_id) - self.held(account_id))

    def post(self, account_id: str, amount: float, kind: str, ref: str) -> LedgerEntry:
        seq = int(self.extra.get("ledger_seq", 0)) + 1
        self.extra["ledger_seq"] = seq
        entry = LedgerEntry(
            id=f"LE{seq:05d}", seq=seq, time=self.clock.text(), step=int(self.extra.get("_step", 0)),
            account_id=account_id, amount=money(amount), kind=kind, ref=ref,
        )
        return self.table("ledger").insert(entry)

    def account_of(self, merchant_id: str, kind: str) -> Account:
        for a in self.table("accounts"):
            if a.merchant_id == merchant_id and a.kind == kind:
                return a
        raise ToolError(f"merchant {merchant_id!r} has no {kind} account")

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


# ----- knowledge-base generation ---------------------------------------------------------------

RULE_TEXT = {
    "single_payout_limit": "A single payout may not exceed {v:.2f} {cur}; larger amounts must be split into several payouts, each approved separately.",
    "refund_window_days": "Refunds are allowed only for payments made within the last {v} days; older payments must not be refunded.",
    "approval_threshold": "A refund above {v:.2f} {cur} requires the merchant's approval of its exact terms before it is executed.",
    "reserve_floor": "The reserve account balance must stay at or above {v:.2f} {cur} after every ledger movement.",
    "required_document": "A review case must carry an uploaded {v} before it is submitted.",
    "review_minutes": "Reviews complete {v} minutes after submission.",
    "limit_increase_document": "An application for a payout-limit increase (`applications.submit`) must carry an uploaded {v}; without it the application is rejected.",
    "limit_increase_minutes": "Limit-increase applications are decided {v} minutes after submission; an approved increase applies only from the decision on.",
}

PROCEDURES = [
    ("Payout procedure", "payouts",
     "To pay out funds: read the governing payout policy for the merchant's scope; check the available balance with "
     "`accounts.balance`; for each payout request an approval of its exact terms with `approvals.request` (operation "
     "`payouts.create`, terms merchant_id, account_id, bank_account_id, amount) and have the merchant approve it; then execute "
     "`payouts.create` with an idempotency_key; issue a receipt with `receipts.issue` and ask the merchant to confirm it."),
    ("Refund procedure", "refunds",
     "Refunds are paid from the merchant's reserve account. Read the governing refund policy (window and approval threshold) "
     "and the governing reserve policy; list payments with `payments.find_by_merchant_id`; when an approval is required use "
     "`approvals.request` (operation `refunds.create`, terms payment_id, amount); execute `refunds.create` with an idempotency_key."),
    ("Reserve monitoring", "reserves",
     "The reserve floor applies at every state change, not only at the end of the day. Use `accounts.balance` on the reserve "
     "account; expected settlements are listed in `events.find_by_kind`. Wait for a settlement rather than dipping below the floor."),
    ("Review cases and holds", "reviews",
     "A hold tied to a review case is released with `holds.release` only after the case is approved. Ask the merchant to upload "
     "the document the governing review policy requires, attach it with `cases.attach_document`, submit with `cases.submit` "
     "before the case deadline, then wait for the review to complete."),
    ("Limit-increase applications", "payouts",
     "A payout above the single-payout limit in force needs an approved application for a higher limit. Read the governing payout "
     "policy for the document it requires, ask the merchant to upload it, then `applications.submit` (merchant_id, kind "
     "`payout_limit_increase`, requested_limit, upload_ids). The application is decided later on the clock; check it with "
     "`applications.get` and pay out only once it is approved."),
    ("Approvals", "payouts",
     "Generic consent in conversation is not an approval. Create a request with `approvals.request`; the merchant grants or "
     "denies that request; changed terms need a new request. Check requests with `approvals.get`."),
]


def procedure_documents(now: str) -> list[Document]:
    out = []
    for i, (title, product, body) in enumerate(PROCEDURES, 1):
        out.append(Document(id=f"KB-P{i:02d}", title=title, product=product, region="*", tier="*", currency="*",
                            version=1, effective_from="2020-01-01 00:00:00", body=body))
    return out


def policy_document(doc_id: str, product: str, region: str, tier: str, currency: str, version: int,
                    effective_from: str, supersedes: str, rules: dict[str, Any]) -> Document:
    lines = [RULE_TEXT[k].format(v=v, cur=currency) for k, v in rules.items()]
    title = f"{product.capitalize()} policy for {tier} merchants in {region} ({currency}), version {version}"
    head = f"Scope: product {product}, region {region}, tier {tier}, currency {currency}. Effective from {effective_from}."
    if supersedes:
        head += f" Supersedes {supersedes}."
    return Document(id=doc_id, title=title, product=product, region=region, tier=tier, currency=currency, version=version,
                    effective_from=effective_from, supersedes=supersedes, rules=dict(rules), body=head + " " + " ".join(lines))


def random_rules(rng: random.Random, product: str) -> dict[str, Any]:
    if product == "payouts":
        return {"single_payout_limit": float(rng.choice(range(100, 1001, 50)))}
    if product == "refunds":
        return {"refund_window_days": rng.choice((14, 30, 45, 60, 90)), "approval_threshold": float(rng.choice((25, 40, 50, 75, 100)))}
    if product == "reserves":
        return {"reserve_floor": float(rng.choice((10, 15, 20, 25, 30, 40)))}
    return {"required_document": rng.choice(DOC_TYPES), "review_minutes": rng.choice((5, 10, 15))}


KB_VARIANTS = 8
KB_EPOCH = datetime(2025, 12, 1)


def background_documents(seed: int, skip: tuple[str, str, str], now: datetime | None = None) -> list[Document]:
    """Policy lineages (1-3 versions) for every scope but the task merchant's own ``skip`` scope.

    There are ``KB_VARIANTS`` background knowledge bases (``seed`` picks one), dated before
    ``KB_EPOCH`` so they are in force in every task; each is built once per process and shared
    (documents are immutable)."""
    return [d for d in _background(seed % KB_VARIANTS) if (d.region, d.tier, d.currency) != skip]


@lru_cache(maxsize=KB_VARIANTS)
def _background(variant: int) -> tuple[Document, ...]:
    rng = random.Random(f"payments-kb/{variant}")
    docs: list[Document] = []
    n = 0
    for product in PRODUCTS:
        for region in REGIONS:
            for tier in TIERS:
                for cur in CURRENCIES:
                    prev = ""
                    versions = rng.randint(1, 3)
                    ages = sorted(rng.sample(range(1, 400), versions), reverse=True)
                    for v in range(1, versions + 1):
                        n += 1
                        eff = (KB_EPOCH - timedelta(days=ages[v - 1])).strftime("%Y-%m-%d 00:00:00")
                        doc_id = f"KB-{n:04d}"
                        docs.append(policy_document(doc_id, product, region, tier, cur, v, eff, prev, random_rules(rng, product)))
                        prev = doc_id
    return tuple(docs)


@lru_cache(maxsize=8192)
def search_text(title: str, body: str) -> str:
    """A document's searchable text, lower-cased once (the strings cache their own hashes)."""
    return f"{title} {body}".casefold()


# ----- search indexes ----------------------------------------------------------------------------


class TextIndex:
    """Keyword search over a fixed sequence of items, scored as ``sum(text.count(word) for word in
    words)`` (substrings, as the tools always counted them): the texts are prepared once and each
    word's counts, and each filter's item subset, cached, so a search costs in proportion to its
    hits rather than to the number of items. Immutable but for those caches; shared freely."""

    MAX_CACHED = 4096  # words (and filters) remembered; the cache starts afresh when full

    __slots__ = ("items", "keys", "texts", "pos", "_encode", "_json", "_words", "_subsets")

    def __init__(self, items: Iterable[Any], key: Callable[[Any], str], text: Callable[[Any], str],
                 encode: Callable[[Any], str]) -> None:
        self.items = tuple(items)
        self.keys = [key(x) for x in self.items]
        self.texts = [text(x) for x in self.items]
        self.pos = {k: i for i, k in enumerate(self.keys)}
        self._encode = encode
        self._json: list[str | None] = [None] * len(self.items)
        self._words: dict[str, dict[int, int]] = {}
        self._subsets: dict[Any, frozenset[int]] = {}

    def counts(self, word: str) -> dict[int, int]:
        """Position -> occurrences of ``word``, for the items that hold it (do not change it)."""
        hit = self._words.get(word)
        if hit is None:
            hit = {i: c for i, c in enumerate(map(str.count, self.texts, repeat(word))) if c}
            if len(self._words) >= self.MAX_CACHED:
                self._words.clear()
            self._words[word] = hit
        return hit

    def scores(self, words: list[str]) -> dict[int, int]:
        if len(words) == 1:
            return self.counts(words[0])
        out: dict[int, int] = {}
        get = out.get
        for w in words:
            for i, c in self.counts(w).items():
                out[i] = get(i, 0) + c
        return out

    def subset(self, key: Any, keep: Callable[[Any], bool]) -> frozenset[int]:
        """Positions of the items ``keep`` accepts, cached under ``key``."""
        hit = self._subsets.get(key)
        if hit is None:
            hit = frozenset(i for i, x in enumerate(self.items) if keep(x))
            if len(self._subsets) >= self.MAX_CACHED:
                self._subsets.clear()
            self._subsets[key] = hit
        return hit

    def json(self, i: int) -> str:
        """The item's result JSON (``dumps`` of its summary), encoded once."""
        text = self._json[i]
        if text is None:
            text = self._json[i] = self._encode(self.items[i])
        return text


def document_summary(d: Document) -> dict[str, Any]:
    """How ``search_documents`` lists a document."""
    return {"id": d.id, "title": d.title, "product": d.product, "region": d.region, "tier": d.tier, "currency": d.currency,
            "version": d.version, "effective_from": d.effective_from, "supersedes": d.supersedes}


def document_index(docs: Iterable[Document]) -> TextIndex:
    return TextIndex(docs, lambda d: d.id, lambda d: search_text(d.title, d.body), lambda d: dumps(document_summary(d)))


@lru_cache(maxsize=KB_VARIANTS)
def background_index(variant: int) -> TextIndex:
    """The search index of one background knowledge base, built once per process and shared by
    every world drawn from it."""
    return document_index(_background(variant % KB_VARIANTS))


class DocumentIndex:
    """What ``search_documents`` reads for one documents table (``rows``, the dict itself: world
    copies share it until one changes its documents, so episodes share the index): the background
    knowledge base's shared index less the documents this table does not hold, plus an index of
    the table's own documents (the task's pinned ones and the procedures). Results equal a scan of
    the table: sorted by (-score, id), ids being unique."""

    __slots__ = ("rows", "parts")

    def __init__(self, rows: dict[str, Document], shared: TextIndex | None = None) -> None:
        self.rows = rows
        parts: list[tuple[TextIndex, frozenset[int]]] = []
        own = list(rows.values())
        if shared is not None:
            skip = frozenset(i for i, d in enumerate(shared.items) if rows.get(d.id) is not d)
            if len(skip) < len(shared.items):
                parts.append((shared, skip))
                own = [d for d in own if (i := shared.pos.get(d.id)) is None or i in skip]
        parts.append((document_index(own), frozenset()))
        self.parts = parts

    def search(self, words: list[str], filters: list[tuple[str, str]], limit: int) -> RawJson:
        key = tuple(filters)
        hits: list[tuple[int, str, int, int]] = []
        for n, (index, skip) in enumerate(self.parts):
            allowed = index.subset(key, lambda d: all(getattr(d, k) in (v, "*") for k, v in filters)) if filters else None
            if words:
                keys = index.keys
                for i, s in index.scores(words).items():
                    if (allowed is None or i in allowed) and i not in skip:
                        hits.append((-s, keys[i], n, i))
            else:
                keys = index.keys
                for i in (range(len(keys)) if allowed is None else allowed):
                    if i not in skip:
                        hits.append((0, keys[i], n, i))
        hits.sort()  # (-score, id) is unique: the rest of the tuple never decides
        parts = self.parts
        return json_array([parts[n][0].json(i) for _, _, n, i in hits[:limit]])


def document_search(world: World, words: list[str], filters: list[tuple[str, str]], limit: int) -> RawJson:
    """``search_documents`` over ``world``'s documents table, through its index (built when the
    world is, or here when the table is not the one it indexes)."""
    rows = world.table("documents").rows
    index = world.extra.get("_doc_index")
    if index is None or index.rows is not rows:
        index = DocumentIndex(rows, index.parts[0][0] if index is not None and len(index.parts) > 1 else None)
        world.extra["_doc_index"] = index
    return index.search(words, filters, limit)
