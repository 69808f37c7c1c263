"""The payments knowledge base: rule texts, procedures, policy documents, the shared background
knowledge bases (built once per ``KB_VARIANTS`` variant, immutable, shared by every world) and
``search_documents``' BM25 index.

A background knowledge base holds, for every scope ``(region, tier, currency)`` and every product
of ``KB_PRODUCTS``, a lineage of 1-4 versions in which each version changes exactly one rule of
the one before (a superseded near-duplicate: the same text but one number or one document type),
sometimes a last version dated after every task (the highest version, not yet in force), and
"*" regional guidance notes that quote superseded figures for every tier and currency of a region.
Each lineage's current version names its neighbouring scopes (another tier, another region), so
a keyword match for one scope ranks documents of another; only reading scope, version and
effective date picks the governing document (``kb_traps``, ``kb_near_duplicates`` list them).

Search ranks by Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5)), title
tokens counted twice, the statistics of the background knowledge base) over tokens: lower-cased
runs of letters and digits, a plural ``s``/``ies`` stripped. Ties are broken by id.
"""

from __future__ import annotations

import random
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import repeat
from math import log
from operator import is_
from typing import Any

import numpy as np

from servicegym.world_state.core import LazyRows, World
from servicegym.world_state.payments.entities import CURRENCIES, DOC_TYPES, PRODUCTS, REGIONS, TIERS, Document
from servicegym.world_state.tools import RawJson, dumps, json_array

# ----- knowledge-base generation ---------------------------------------------------------------

NEW_PRODUCTS = ("disputes", "fees", "settlements", "verifications", "fx", "account_changes", "limits")
KB_PRODUCTS = tuple(dict.fromkeys(PRODUCTS + NEW_PRODUCTS))
EVIDENCE_DOC_TYPES = ("delivery_proof", "invoice", "customer_communication")

RULE_TEXT = {
    "single_payout_limit": "A single payout may not exceed {v:.2f} {cur}; larger amounts must be split into several payouts, each approved separately.",
    "refund_window_days": "Refunds are allowed only for payments made within the last {v} days; older payments must not be refunded.",
    "approval_threshold": "A refund above {v:.2f} {cur} requires the merchant's approval of its exact terms before it is executed.",
    "reserve_floor": "The reserve account balance must stay at or above {v:.2f} {cur} after every ledger movement.",
    "required_document": "A review case must carry an uploaded {v} before it is submitted.",
    "review_minutes": "Reviews complete {v} minutes after submission.",
    "limit_increase_document": "An application for a payout-limit increase (`applications.submit`) must carry an uploaded {v}; without it the application is rejected.",
    "limit_increase_minutes": "Limit-increase applications are decided {v} minutes after submission; an approved increase applies only from the decision on.",
    "dispute_response_days": "A dispute must be answered within {v} days of being opened; a dispute not answered by then is lost.",
    "dispute_evidence_document": "A contested dispute must carry an uploaded {v} as evidence before its evidence is submitted.",
    "dispute_auto_accept_below": "A dispute for less than {v:.2f} {cur} is accepted rather than contested.",
    "fee_waiver_limit": "A fee waiver above {v:.2f} {cur} requires the merchant's approval of its exact terms before it is applied.",
    "fee_refund_days": "A fee may be waived or refunded only within {v} days of being charged.",
    "reconciliation_tolerance": "A reconciliation break at or below {v:.2f} {cur} is written off; a break above it must be investigated.",
    "settlement_delay_days": "Card settlements are paid {v} days after capture.",
    "kyb_required_documents": "A business (KYB) verification must carry an uploaded {v} before it is submitted.",
    "verification_review_minutes": "Verifications are decided {v} minutes after submission.",
    "fx_quote_validity_minutes": "An FX quote is valid for {v} minutes; a conversion after that must be quoted again.",
    "fx_markup_pct": "Currency conversions carry a markup of {v:.2f}% over the reference rate.",
    "bank_change_cooling_minutes": "Payouts to a newly changed bank account are blocked for {v} minutes after the change.",
    "bank_change_document": "A bank-account change must carry an uploaded {v}; without it the change is refused.",
    "daily_payout_limit": "The payouts of one calendar day may not exceed {v:.2f} {cur} in total.",
}

RULE_LABEL = {
    "single_payout_limit": "single-payout limit", "refund_window_days": "refund window (days)",
    "approval_threshold": "refund approval threshold", "reserve_floor": "reserve floor",
    "required_document": "document required for a review", "review_minutes": "review time (minutes)",
    "limit_increase_document": "document required for a limit increase", "limit_increase_minutes": "limit-increase decision time (minutes)",
    "dispute_response_days": "dispute response window (days)", "dispute_evidence_document": "required dispute evidence",
    "dispute_auto_accept_below": "automatic acceptance amount", "fee_waiver_limit": "fee waiver approval limit",
    "fee_refund_days": "fee refund window (days)", "reconciliation_tolerance": "reconciliation tolerance",
    "settlement_delay_days": "settlement delay (days)", "kyb_required_documents": "KYB documents",
    "verification_review_minutes": "verification decision time (minutes)", "fx_quote_validity_minutes": "FX quote validity (minutes)",
    "fx_markup_pct": "FX markup (%)", "bank_change_cooling_minutes": "bank-change cooling period (minutes)",
    "bank_change_document": "document required for a bank change", "daily_payout_limit": "daily payout limit",
}

RATIONALE = {
    "single_payout_limit": "The limit caps the loss from a single compromised credential or a mistyped amount.",
    "refund_window_days": "Beyond the window the card network no longer guarantees that a refund reaches the cardholder.",
    "approval_threshold": "Large refunds are a common route for friendly fraud, so the merchant confirms the exact amount.",
    "reserve_floor": "The reserve covers chargebacks and negative balances; a dip, even a brief one, breaches the scheme's rules.",
    "required_document": "Reviewers must verify the merchant's identity and standing before a hold is lifted.",
    "review_minutes": "Reviews are queued; agents should wait for the decision rather than poll for it.",
    "limit_increase_document": "A higher limit widens the exposure, so the underwriting team needs evidence first.",
    "limit_increase_minutes": "Underwriting decides applications in batches; an increase never applies retroactively.",
    "dispute_response_days": "The card networks close their response window on a fixed day; a late answer is ignored.",
    "dispute_evidence_document": "Networks decide on evidence alone, and this is the document that wins most of these disputes.",
    "dispute_auto_accept_below": "Contesting a small dispute costs more in fees and staff time than the amount at risk.",
    "fee_waiver_limit": "Waivers are revenue given back; above the limit the merchant signs off on the exact terms.",
    "fee_refund_days": "Fees older than the window have been reported in a closed statement period.",
    "reconciliation_tolerance": "Tiny breaks come from rounding between networks and are cheaper to write off than to chase.",
    "settlement_delay_days": "The delay lets the acquirer net out early chargebacks before funds are released.",
    "kyb_required_documents": "Regulators require proof of the business's existence, control and address before it is onboarded.",
    "verification_review_minutes": "Compliance analysts review submissions in order; decisions arrive on the clock.",
    "fx_quote_validity_minutes": "Rates move during the day, so a stale quote would convert at a price the merchant never saw.",
    "fx_markup_pct": "The markup covers hedging costs and is disclosed to the merchant in every quote.",
    "bank_change_cooling_minutes": "Account takeovers usually change the bank account and pay out at once; the cooling period stops that.",
    "bank_change_document": "The document proves that the merchant owns the new bank account.",
    "daily_payout_limit": "The daily limit bounds what leaves the platform in one day even when each payout is within its own limit.",
}

PURPOSE = {
    "payouts": "This policy sets how funds leave a merchant's operating account for its own bank accounts.",
    "refunds": "This policy sets which customer payments may be refunded, and when the merchant must approve a refund.",
    "reserves": "This policy sets the minimum balance of the merchant's reserve account, which secures chargebacks.",
    "reviews": "This policy sets what a compliance review case needs before it is submitted and how long the review takes.",
    "disputes": "This policy sets how chargebacks (disputes) raised by cardholders are answered, contested or accepted.",
    "fees": "This policy sets when fees charged to a merchant may be waived or refunded, and who must approve it.",
    "settlements": "This policy sets when card settlements are paid and how breaks found in reconciliation are handled.",
    "verifications": "This policy sets the documents a know-your-business (KYB) verification needs and how long it takes.",
    "fx": "This policy sets how currency conversions between a merchant's accounts are quoted and priced.",
    "account_changes": "This policy sets how a merchant changes the bank account its payouts go to.",
    "limits": "This policy sets the total a merchant may pay out in one calendar day.",
}

REGION_NOTE = {
    "US": "In the US, Regulation E and the card networks' operating rules apply; keep records for five years.",
    "EU": "In the EU, PSD2 strong customer authentication applies to merchant-initiated changes; keep records for five years.",
    "UK": "In the UK, the FCA's payment services rules apply; complaints must be answered within fifteen business days.",
    "APAC": "In APAC, local regulators' reporting thresholds vary by market; escalate any cross-border question to regional compliance.",
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
    ("Dispute handling", "disputes",
     "Read the governing disputes policy for the response window, the evidence it requires and the amount below which a dispute is "
     "accepted. Accept small disputes with `disputes.accept`; for the others ask the merchant to upload the required evidence, attach "
     "it with `disputes.attach_evidence` and contest with `disputes.submit_evidence` before the response deadline."),
    ("Fee waivers", "fees",
     "Read the governing fees policy. A fee may be waived only within its refund window; a waiver above the waiver limit needs an "
     "approval of its exact terms (`approvals.request`, operation `fees.waive`, terms fee_id, amount) before `fees.waive`."),
    ("Settlement reconciliation", "settlements",
     "Check a settlement with `settlements.check`; record each difference with `reconciliation.open_break`. A break at or below the "
     "governing reconciliation tolerance is written off (`reconciliation.write_off`); above it, `reconciliation.investigate` and "
     "`reconciliation.resolve`. Reconcile the settlement with `settlements.reconcile` once every break is settled."),
    ("Business verification (KYB)", "verifications",
     "The governing verifications policy lists the documents a KYB verification needs (`verifications.requirements`). Ask the merchant "
     "to upload each, attach them with `verifications.attach_document`, submit with `verifications.submit` and wait for the decision."),
    ("Currency conversion", "fx",
     "Quote with `fx.quote` at the moment of conversion: a quote is valid only for the governing quote validity. Have the converted "
     "amount approved before paying it out; `fx.convert` converts at the current rate."),
    ("Bank-account changes", "account_changes",
     "A change of payout bank account (`account_changes.request_bank_change`) needs the document the governing account-changes policy "
     "requires; payouts to the new account are blocked for the cooling period. A change may be cancelled while it cools."),
    ("Daily payout limit", "limits",
     "Besides the single-payout limit, the payouts of one calendar day may not exceed the governing daily payout limit; check it with "
     "`limits.in_force` before paying out, and schedule the rest for the next day."),
]

_TITLES = {"fx": "FX", "account_changes": "Account changes", "kyb": "KYB"}


def product_title(product: str) -> str:
    return _TITLES.get(product, product.capitalize())


def rule_value_text(v: Any) -> Any:
    """A rule value as its sentence quotes it (a list of documents as "a, b and c")."""
    if isinstance(v, (list, tuple)):
        v = [str(x) for x in v]
        return v[0] if len(v) == 1 else ", ".join(v[:-1]) + " and " + v[-1]
    return v


def rule_sentence(key: str, v: Any, cur: str) -> str:
    return RULE_TEXT[key].format(v=rule_value_text(v), cur=cur)


def procedure_documents(now: str) -> list[Document]:
    return list(_procedures())


@lru_cache(maxsize=1)
def _procedures() -> tuple[Document, ...]:
    return tuple(Document(id=f"KB-P{i:02d}", title=title, product=product, region="*", tier="*", currency="*",
                          version=1, effective_from="2020-01-01 00:00:00", body=body)
                 for i, (title, product, body) in enumerate(PROCEDURES, 1))


def _policy_text(product: str, region: str, tier: str, currency: str, version: int, effective_from: str,
                 supersedes: str, rules: dict[str, Any]) -> tuple[str, str]:
    """A policy document's title and body: its scope, dates and rule sentences."""
    lines = [rule_sentence(k, v, currency) for k, v in rules.items()]
    title = f"{product_title(product)} policy for {tier} merchants in {region} ({currency}), version {version}"
    head = f"Scope: product {product}, region {region}, tier {tier}, currency {currency}. Effective from {effective_from}."
    if supersedes:
        head += f" Supersedes {supersedes}."
    return title, head + " " + " ".join(lines)


def policy_document(doc_id: str, product: str, region: str, tier: str, currency: str, version: int,
                    effective_from: str, supersedes: str, rules: dict[str, Any]) -> Document:
    """A short policy document (the tasks' pinned ones): its scope, dates and rule sentences."""
    title, body = _policy_text(product, region, tier, currency, version, effective_from, supersedes, rules)
    return Document(id=doc_id, title=title, product=product, region=region, tier=tier, currency=currency, version=version,
                    effective_from=effective_from, supersedes=supersedes, rules=dict(rules), body=body)


def policy_document_row(doc_id: str, product: str, region: str, tier: str, currency: str, version: int,
                        effective_from: str, supersedes: str, rules: dict[str, Any]) -> dict[str, Any]:
    """``policy_document(...).model_dump(mode="json")`` for a generator's own arguments (strings,
    an int version, rules of numbers, strings and lists of strings), made without the model: the
    row a task pins, every field in ``Document``'s order (tests/test_reset_travel_payments_fast.py
    holds it to the model's dump)."""
    title, body = _policy_text(product, region, tier, currency, version, effective_from, supersedes, rules)
    return {"id": doc_id, "title": title, "product": product, "region": region, "tier": tier, "currency": currency,
            "version": version, "effective_from": effective_from, "supersedes": supersedes,
            "rules": {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in rules.items()}, "body": body}


def random_rules(rng: random.Random, product: str) -> dict[str, Any]:
    if product == "payouts":
        return {"single_payout_limit": float(rng.choice(range(100, 1001, 50)))}
    if product == "refunds":
        return {"refund_window_days": rng.choice((14, 30, 45, 60, 90)), "approval_threshold": float(rng.choice((25, 40, 50, 75, 100)))}
    if product == "reserves":
        return {"reserve_floor": float(rng.choice((10, 15, 20, 25, 30, 40)))}
    if product == "reviews":
        return {"required_document": rng.choice(DOC_TYPES), "review_minutes": rng.choice((5, 10, 15))}
    if product == "disputes":
        return {"dispute_response_days": rng.randint(5, 20), "dispute_evidence_document": rng.choice(DOC_TYPES + EVIDENCE_DOC_TYPES),
                "dispute_auto_accept_below": float(rng.choice((10, 15, 20, 25, 30, 50)))}
    if product == "fees":
        return {"fee_waiver_limit": float(rng.choice((20, 25, 50, 75, 100))), "fee_refund_days": rng.choice((30, 45, 60, 90))}
    if product == "settlements":
        return {"reconciliation_tolerance": rng.choice((0.01, 0.05, 0.10, 0.25, 0.50, 1.00, 2.00, 5.00)),
                "settlement_delay_days": rng.choice((1, 2, 3, 5, 7))}
    if product == "verifications":
        return {"kyb_required_documents": rng.sample(DOC_TYPES, rng.randint(1, 3)), "verification_review_minutes": rng.choice((10, 15, 20, 30))}
    if product == "fx":
        return {"fx_quote_validity_minutes": rng.choice((5, 10, 15, 30)), "fx_markup_pct": rng.choice((0.5, 0.75, 1.0, 1.5, 2.0))}
    if product == "account_changes":
        return {"bank_change_cooling_minutes": rng.choice((30, 60, 120, 240, 1440)), "bank_change_document": rng.choice(DOC_TYPES)}
    if product == "limits":
        return {"daily_payout_limit": float(rng.choice(range(1000, 10001, 500)))}
    raise ValueError(f"unknown product {product!r}")


def _fmt(key: str, v: Any, cur: str) -> str:
    v = rule_value_text(v)
    if isinstance(v, float):
        return f"{v:.2f}%" if key == "fx_markup_pct" else f"{v:.2f} {cur}"
    return str(v)


def _example(key: str, v: Any, cur: str) -> str:
    """A worked example of one rule (numbers derived from its value)."""
    if key in ("single_payout_limit", "daily_payout_limit"):
        return f"For example, {v * 1.5:.2f} {cur} is paid as two payouts of {v * 0.75:.2f} {cur}, each approved on its own terms."
    if key in ("approval_threshold", "fee_waiver_limit"):
        return f"For example, {v + 5:.2f} {cur} needs an approval of exactly that amount; {max(v - 5, 1):.2f} {cur} does not."
    if key == "reserve_floor":
        return f"For example, with {v + 12:.2f} {cur} in reserve a refund of {15:.2f} {cur} must wait for the next settlement."
    if key == "dispute_auto_accept_below":
        return f"For example, a dispute of {max(v - 3, 1):.2f} {cur} is accepted; one of {v + 10:.2f} {cur} is contested with evidence."
    if key == "reconciliation_tolerance":
        return f"For example, a break of {v:.2f} {cur} is written off; a break of {v + 0.01:.2f} {cur} is investigated."
    if key.endswith("_days"):
        return f"For example, on day {v} the rule still applies; on day {v + 1} it no longer does."
    if key.endswith("_minutes"):
        return f"For example, an action at 10:00 is settled by the rule at {10 + (v // 60):02d}:{v % 60:02d} at the earliest."
    if key == "fx_markup_pct":
        return f"For example, 1000.00 converted at a reference rate of 0.9200 is quoted at {0.92 * (1 - v / 100):.4f}."
    return f"For example, a submission without the {rule_value_text(v)} is returned to the merchant and has to be made again."


def guidance_body(product: str, region: str, tier: str, cur: str, effective_from: str, supersedes: str,
                  rules: dict[str, Any], change: tuple[str, Any, Any] | None, related: list[tuple[str, str]]) -> str:
    head = f"Scope: product {product}, region {region}, tier {tier}, currency {cur}. Effective from {effective_from}."
    if supersedes:
        head += f" Supersedes {supersedes}."
    parts = [head, "Purpose. " + PURPOSE[product],
             "Rules. " + " ".join(rule_sentence(k, v, cur) for k, v in rules.items()),
             "Rationale. " + " ".join(RATIONALE[k] for k in rules),
             "Examples. " + " ".join(_example(k, v, cur) for k, v in rules.items())]
    if change is not None:
        key, old, new = change
        parts.append(f"Changes. This version replaces {supersedes}: the {RULE_LABEL[key]} changes from {_fmt(key, old, cur)} to "
                     f"{_fmt(key, new, cur)}; every other term is unchanged. Actions taken before {effective_from} "
                     "followed the earlier version.")
    parts.append(f"Scope notes. This document governs {tier} merchants in {region} whose accounts settle in {cur}, and no one else. "
                 + REGION_NOTE[region])
    for other_tier, other_region in related:
        parts.append(f"Related scopes. {product_title(product)} for {other_tier} merchants in {other_region} ({cur}) follow their "
                     f"own {product} policy with different figures; do not apply this document to {other_tier} merchants in "
                     f"{other_region}.")
    parts.append("Exceptions. No agent may grant an exception to these rules; escalate to the compliance desk instead. "
                 "Records. Note the document id and version relied on in the case record of every action it governs.")
    return " ".join(parts)


def guidance_document(doc_id: str, product: str, region: str, tier: str, cur: str, version: int, effective_from: str,
                      supersedes: str, rules: dict[str, Any], change: tuple[str, Any, Any] | None = None,
                      related: list[tuple[str, str]] | None = None) -> Document:
    """A background policy document: ``policy_document``'s scope and rules, written out as payment-ops
    guidance (purpose, rules, rationale, examples, what changed, scope notes, exceptions)."""
    title = f"{product_title(product)} policy for {tier} merchants in {region} ({cur}), version {version}"
    body = guidance_body(product, region, tier, cur, effective_from, supersedes, rules, change, related or [])
    return Document(id=doc_id, title=title, product=product, region=region, tier=tier, currency=cur, version=version,
                    effective_from=effective_from, supersedes=supersedes, rules=dict(rules), body=body)


KB_VARIANTS = 8
KB_EPOCH = datetime(2025, 12, 1)
KB_FUTURE = datetime(2027, 6, 1)  # after every task: a version dated here never governs


@dataclass(frozen=True)
class Trap:
    """A document a keyword match for ``scope`` (product, region, tier, currency) ranks high but
    that does not govern it: ``kind`` "regional_note" ("*" scope), "neighbour" (another tier or
    region) or "not_in_force" (the lineage's highest version, effective after every task)."""

    doc_id: str
    kind: str
    scope: tuple[str, str, str, str]


@dataclass(frozen=True)
class KnowledgeBase:
    docs: tuple[Document, ...]
    traps: tuple[Trap, ...]
    near_duplicates: tuple[tuple[str, str, str], ...]  # (superseded id, successor id, the one rule key that differs)


def _neighbour(seq: tuple[str, ...], x: str) -> str:
    i = seq.index(x)
    return seq[i + 1] if i + 1 < len(seq) else seq[i - 1]


def knowledge_base(variant: int) -> KnowledgeBase:
    """The background knowledge base of ``variant`` (taken modulo ``KB_VARIANTS``), built once per
    process: documents, traps and near-duplicate pairs."""
    return _knowledge_base(variant % KB_VARIANTS)  # cached by variant, never by the raw number


@lru_cache(maxsize=KB_VARIANTS)
def _knowledge_base(variant: int) -> KnowledgeBase:
    rng = random.Random(f"payments-kb/{variant}")
    docs: list[Document] = []
    traps: list[Trap] = []
    dups: list[tuple[str, str, str]] = []
    first: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    n = 0
    for product in KB_PRODUCTS:
        for region in REGIONS:
            for tier in TIERS:
                for cur in CURRENCIES:
                    versions = rng.choice((1, 2, 2, 3, 3, 4))
                    future = versions > 1 and rng.random() < 0.15
                    ages = sorted(rng.sample(range(1, 700), versions), reverse=True)
                    rules = random_rules(rng, product)
                    first[(product, region, tier, cur)] = rules
                    prev, change = "", None
                    related = [(_neighbour(TIERS, tier), region), (tier, _neighbour(REGIONS, region))]
                    for v in range(1, versions + 1):
                        n += 1
                        last = v == versions
                        when = KB_FUTURE + timedelta(days=ages[v - 1]) if future and last else KB_EPOCH - timedelta(days=ages[v - 1])
                        doc_id = f"KB-{n:04d}"
                        if v > 1:
                            key = rng.choice(sorted(rules))
                            old = rules[key]
                            new = old
                            for _ in range(20):
                                new = random_rules(rng, product)[key]
                                if new != old:
                                    break
                            rules = {**rules, key: new}
                            change = (key, old, new)
                            dups.append((prev, doc_id, key))
                        rel = related  # every version names its neighbouring scopes
                        docs.append(guidance_document(doc_id, product, region, tier, cur, v, when.strftime("%Y-%m-%d 00:00:00"),
                                                      prev, rules, change, rel))
                        if rel:
                            for t2, r2 in rel:
                                traps.append(Trap(doc_id, "neighbour", (product, r2, t2, cur)))
                        if future and last:
                            traps.append(Trap(doc_id, "not_in_force", (product, region, tier, cur)))
                        prev = doc_id
    # "*" regional guidance notes: every tier and currency of a region, quoting first-version figures
    for product in KB_PRODUCTS:
        for region in REGIONS:
            n += 1
            doc_id = f"KB-{n:04d}"
            lines = []
            for tier in TIERS:
                for cur in CURRENCIES:
                    figures = "; ".join(f"{RULE_LABEL[k]} {_fmt(k, v, cur)}" for k, v in first[(product, region, tier, cur)].items())
                    lines.append(f"{product_title(product)} policy for {tier} merchants in {region} ({cur}): {figures}.")
            body = (f"Scope: product {product}, region {region}, tier *, currency *. Effective from {KB_EPOCH - timedelta(days=720):%Y-%m-%d} 00:00:00. "
                    f"Regional guidance note: a summary of the first {product} policies published for standard, plus and enterprise "
                    f"merchants in {region}, in USD, EUR and GBP. It does not govern any merchant: the figures below are historical "
                    f"and most have been superseded; always read the governing {product} policy for the merchant's exact tier and "
                    f"currency. " + " ".join(lines) + " " + REGION_NOTE[region])
            title = f"{product_title(product)} policy summary for {region}: standard, plus and enterprise merchants (USD, EUR, GBP)"
            docs.append(Document(id=doc_id, title=title, product=product, region=region, tier="*", currency="*", version=1,
                                 effective_from=f"{KB_EPOCH - timedelta(days=720):%Y-%m-%d} 00:00:00", body=body))
            for tier in TIERS:
                for cur in CURRENCIES:
                    traps.append(Trap(doc_id, "regional_note", (product, region, tier, cur)))
    return KnowledgeBase(tuple(docs), tuple(traps), tuple(dups))


def _background(variant: int) -> tuple[Document, ...]:
    return knowledge_base(variant % KB_VARIANTS).docs


def kb_traps(variant: int) -> tuple[Trap, ...]:
    return knowledge_base(variant % KB_VARIANTS).traps


def kb_near_duplicates(variant: int) -> tuple[tuple[str, str, str], ...]:
    return knowledge_base(variant % KB_VARIANTS).near_duplicates


def background_documents(seed: int, skip: Collection[tuple[str, ...]] | tuple[str, str, str] = (),
                         now: datetime | None = None) -> list[Document]:
    """The background knowledge base ``seed`` picks (of ``KB_VARIANTS``, each built once per
    process and shared: documents are immutable) less the documents of the ``(product, region,
    tier, currency)`` pairs in ``skip`` (those the task pins); a bare ``(region, tier, currency)``
    scope drops that whole scope."""
    docs = _background(seed % KB_VARIANTS)
    if not skip:
        return list(docs)
    if len(skip) == 3 and all(isinstance(x, str) for x in skip):
        scope = tuple(skip)
        return [d for d in docs if (d.region, d.tier, d.currency) != scope]
    pairs = set(skip)
    return [d for d in docs if (d.product, d.region, d.tier, d.currency) not in pairs]


@lru_cache(maxsize=8192)
def search_text(title: str, body: str) -> str:
    """A document's searchable text, lower-cased once (the strings cache their own hashes)."""
    return f"{title} {body}".casefold()


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



# ----- search: BM25 ----------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+")
_STEMS: dict[str, str] = {}
K1, B = 1.2, 0.75


def _stem(t: str) -> str:
    s = _STEMS.get(t)
    if s is None:
        s = t
        if len(t) > 4 and t.endswith("ies"):
            s = t[:-3] + "y"
        elif len(t) > 3 and t.endswith("s") and not t.endswith(("ss", "us", "is")):
            s = t[:-1]
        if len(_STEMS) < 200_000:
            _STEMS[t] = s
    return s


def tokens(text: str) -> list[str]:
    return [_stem(t) for t in _TOKEN.findall(text.casefold())]


_WORDS: dict[str, list[str]] = {}


def _word_terms(word: str) -> list[str]:
    """``tokens`` of one query word, remembered (do not change the list)."""
    hit = _WORDS.get(word)
    if hit is None:
        # a plain ASCII word is one token (the common case): no pattern to run
        hit = [_stem(word.lower())] if word.isascii() and word.isalnum() else tokens(word)
        if len(_WORDS) >= 65_536:
            _WORDS.clear()
        _WORDS[word] = hit
    return hit


def _doc_terms(d: Document) -> Counter[str]:
    c = Counter(tokens(d.body))
    for t in tokens(d.title):
        c[t] += 2  # title tokens count twice
    return c


def document_summary(d: Document) -> dict[str, Any]:
    """How ``search_documents`` lists a document."""
    return {"id": d.id, "title": d.title, "product": d.product, "region": d.region, "tier": d.tier, "currency": d.currency,
            "version": d.version, "effective_from": d.effective_from, "supersedes": d.supersedes}


FIELDS = ("product", "region", "tier", "currency")


class BM25Index:
    """BM25 over a fixed set of documents (sorted by id, so position order is id order): per term,
    the positions holding it and their BM25 weights (numpy arrays); per filter value, a mask; each
    document's result JSON. Built once per knowledge base; immutable but for its caches (masks, and
    the weights of the documents outside it that worlds add)."""

    MAX_MASKS = 4096  # filter values remembered (the cache starts afresh when full)
    MAX_OTHERS = 512  # other documents' weights remembered (likewise)

    __slots__ = ("items", "keys", "pos", "n", "idf", "avgdl", "post", "json_array", "_cols", "_masks", "_others")

    def __init__(self, docs: Iterable[Document]) -> None:
        self.items = tuple(sorted(docs, key=lambda d: d.id))
        self.keys = [d.id for d in self.items]
        self.pos = {k: i for i, k in enumerate(self.keys)}
        self.n = len(self.items)
        terms = [_doc_terms(d) for d in self.items]
        lens = [sum(c.values()) for c in terms]
        self.avgdl = sum(lens) / max(1, self.n)
        df: Counter[str] = Counter()
        for c in terms:
            df.update(c.keys())
        self.idf = {t: log(1 + (self.n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        plists: dict[str, tuple[list[int], list[float]]] = {}
        for i, (c, dl) in enumerate(zip(terms, lens)):
            norm = K1 * (1 - B + B * dl / self.avgdl)
            for t, tf in c.items():
                p = plists.get(t)
                if p is None:
                    p = plists[t] = ([], [])
                p[0].append(i)
                p[1].append(self.idf[t] * tf * (K1 + 1) / (tf + norm))
        self.post = {t: (np.asarray(p, dtype=np.intp), np.asarray(w, dtype=np.float64)) for t, (p, w) in plists.items()}
        self.json_array = np.empty(self.n, dtype=object)  # each document's result JSON
        self.json_array[:] = [dumps(document_summary(d)) for d in self.items]
        self._cols = {f: np.array([getattr(d, f) for d in self.items], dtype=object) for f in FIELDS}
        self._masks: dict[tuple[str, str], np.ndarray] = {}
        self._others: dict[str, tuple[Document, dict[str, float], str]] = {}

    def weights(self, d: Document) -> dict[str, float]:
        """``d``'s term weights under this index's statistics (a task's own documents)."""
        c = _doc_terms(d)
        dl = sum(c.values())
        norm = K1 * (1 - B + B * dl / self.avgdl) if self.avgdl else K1  # no statistics: every length average
        top = log(1 + (self.n + 0.5) / 0.5)  # a term the knowledge base lacks
        return {t: self.idf.get(t, top) * tf * (K1 + 1) / (tf + norm) for t, tf in c.items()}

    def other(self, d: Document) -> tuple[dict[str, float], str]:
        """A document outside this index (a task's own): its weights and result JSON, remembered
        for that very document (documents are immutable; the procedures are in every world)."""
        hit = self._others.get(d.id)
        if hit is None or hit[0] is not d:
            if len(self._others) >= self.MAX_OTHERS:
                self._others.clear()
            hit = self._others[d.id] = (d, self.weights(d), dumps(document_summary(d)))
        return hit[1], hit[2]

    def mask(self, field: str, value: str) -> np.ndarray:
        m = self._masks.get((field, value))
        if m is None:
            col = self._cols[field]
            if len(self._masks) >= self.MAX_MASKS:
                self._masks.clear()
            m = self._masks[(field, value)] = (col == value) | (col == "*")
        return m


_NO_BACKGROUND = BM25Index(())  # a table indexed without a background knowledge base


def background_index(seed: int) -> BM25Index:
    """The search index of the background knowledge base ``seed`` picks (of ``KB_VARIANTS``),
    built once per process and shared by every world drawn from it."""
    return _background_index(seed % KB_VARIANTS)  # cached by variant, never by the raw seed


@lru_cache(maxsize=KB_VARIANTS)
def _background_index(variant: int) -> BM25Index:
    return BM25Index(_background(variant))


def _best(s: np.ndarray, limit: int) -> np.ndarray:
    """Ascending positions of ``s`` (scores, never negative) that hold its ``limit`` best positive
    scores and every score tied with the last of them, and perhaps a few lower positive ones."""
    m = len(s)
    at = None
    if m > 64:
        # the best lie at or above a score estimated from every 8th position (about the limit+16th
        # best): look there first, else at every hit
        sample = s[::8].copy()
        sample.sort()
        est = sample[max(0, len(sample) - limit // 8 - 2)]
        if est > 0:
            at = (s >= est).nonzero()[0]
            if len(at) < limit:
                at = None
    elif m > limit:
        kth = np.sort(s)[m - limit]  # exact
        if kth > 0:
            return (s >= kth).nonzero()[0]
    if at is None:
        at = (s > 0).nonzero()[0]
    if len(at) > 2 * limit + 16:  # many: cut at the limit-th best (every tie at the cut stays)
        vals = s[at]
        k = len(at) - limit
        at = at[vals >= np.partition(vals, k)[k]]
    return at


class DocumentIndex:
    """What ``search_documents`` reads for one documents table (``rows``, the dict itself: world
    copies share it until one changes its documents, so episodes share the index).

    The table's documents are numbered in id order: the background knowledge base's that the table
    holds (the shared ``BM25Index``) merged with the table's own (the task's pinned documents and
    the procedures, weighted with the background's statistics). A term's weights over those
    numbers are one vector, made from both postings on the term's first use and kept; a search adds
    the vectors of its known terms in query order (the sums a document-at-a-time BM25 makes, bit for
    bit), keeps the filter's numbers (kept per filter), takes the scores at or above a threshold
    sampled from every 8th one (the few best, every tie included) and sorts only those, stably,
    so ties stay in id order; each document's result JSON is rendered once per knowledge base.
    Results: BM25 score descending, then id; a result is kept per (words, filters, limit).

    Made at no cost: the numbering and the own documents' weights are built on the first search
    (``built``), so a reset to a new task (whose world gets a new index) pays nothing for a search
    its episode may never make, and the world's copies, which share this object, build it once."""

    MAX_CACHED = 1024  # results and filters remembered (each cache starts afresh when full)
    MAX_TERMS = 256  # term vectors remembered (8 bytes a document each: 2 MB at most)

    __slots__ = ("rows", "shared", "n", "_spot", "_json", "_own_at", "_own_cols", "_own_weights", "_vecs", "_filters", "_results")

    def __init__(self, rows: dict[str, Document] | LazyRows, shared: BM25Index | Callable[[], BM25Index] | None = None) -> None:
        # nothing is built here: a world is built at every reset to a new task, most episodes never
        # search, and the world's copies share this object, so the first search of any of them
        # builds it once (``_build``) for all. ``rows`` may be the documents table's ``LazyRows``
        # (its rows not made yet): ``table_rows`` makes them, the very dict the table reads; and
        # ``shared`` may be the function that gives the background's index (built once per
        # knowledge-base variant and process: a reset meeting a new variant does not build it)
        self.rows = rows
        self.shared = shared if shared is not None else _NO_BACKGROUND
        self.n = -1  # not built yet

    def table_rows(self) -> dict[str, Document]:
        """The rows indexed (made now when the index was given the table's ``LazyRows``)."""
        rows = self.rows
        if type(rows) is LazyRows:
            rows = self.rows = rows.make()
        return rows  # type: ignore[return-value]

    @property
    def built(self) -> bool:
        """Whether a search has built the index (it is built on the first search, not before)."""
        return self.n >= 0

    def _own_documents(self, same: np.ndarray, got: list[Document | None]) -> list[Document]:
        """The table's documents that are not the background's own (``same[i]``: whether
        ``got[i]``, the table's row under background item i's id, is that item): the rows under
        ids the background lacks and the other documents under its ids, found by set operations
        on the keys. A row whose key is not its id (no table makes one) falls back to a scan."""
        rows, shared = self.rows, self.shared
        keys = shared.keys
        pairs = [(k, rows[k]) for k in rows.keys() - shared.pos.keys()]
        pairs += [(keys[i], d) for i in np.flatnonzero(~same).tolist() if (d := got[i]) is not None]
        if all(d.id == k for k, d in pairs):
            return [d for _, d in pairs]
        items = shared.items
        return [d for d in rows.values() if (i := shared.pos.get(d.id)) is None or items[i] is not d]

    def _build(self) -> None:
        shared = self.shared
        if not isinstance(shared, BM25Index):
            shared = self.shared = shared()
        rows = self.table_rows()
        items = shared.items
        got = list(map(rows.get, shared.keys))  # C loops: the background is about a thousand documents
        same = np.fromiter(map(is_, got, items), dtype=bool, count=len(items))
        held = np.flatnonzero(same)
        own = sorted(self._own_documents(same, got), key=lambda d: d.id)
        # merged by id: the held background documents before each own one give every number
        before = np.searchsorted(held, np.array([bisect_left(shared.keys, d.id) for d in own], dtype=np.intp))
        own_at = before + np.arange(len(own), dtype=np.intp)
        held_at = np.arange(len(held), dtype=np.intp) + np.searchsorted(before, np.arange(len(held)), side="right")
        n = len(held) + len(own)
        self._spot = np.full(shared.n, n, dtype=np.intp)  # background position -> number (n, a spare slot: not held)
        self._spot[held] = held_at
        texts = np.empty(n, dtype=object)
        texts[held_at] = shared.json_array[held]
        others = [shared.other(d) for d in own]
        own_json = np.empty(len(own), dtype=object)
        own_json[:] = [j for _, j in others]
        texts[own_at] = own_json
        self._json: list[str] = texts.tolist()
        self._own_at = own_at
        self._own_cols = {f: np.array([getattr(d, f) for d in own], dtype=object) for f in FIELDS}
        # (number, term weights) of each own document: a term's entries are looked up when its vector
        # is made (a few documents), not posted for every term up front
        self._own_weights: list[tuple[int, dict[str, float]]] = [(at, w) for at, (w, _) in zip(own_at.tolist(), others)]
        self._vecs: dict[str, np.ndarray] = {}
        self._filters: dict[tuple[tuple[str, str], ...], np.ndarray] = {}
        self._results: dict[tuple[Any, ...], RawJson] = {}
        self.n = n  # last: a build interrupted before here is redone by the next search

    def _vector(self, t: str) -> np.ndarray | None:
        """The term's weight for every document (0 where it is absent), or None if none holds it."""
        v = self._vecs.get(t)
        if v is None:
            p = self.shared.post.get(t)
            o = [(at, x) for at, w in self._own_weights if (x := w.get(t)) is not None]  # a few documents
            if p is None and not o:
                return None
            full = np.zeros(self.n + 1)
            if p is not None:
                full[self._spot[p[0]]] = p[1]
            for at, x in o:
                full[at] = x
            v = full[: self.n]
            if len(self._vecs) >= self.MAX_TERMS:
                self._vecs.clear()
            self._vecs[t] = v
        return v

    def _filter(self, filters: tuple[tuple[str, str], ...]) -> np.ndarray:
        """The numbers of the documents the filters keep (ascending)."""
        hit = self._filters.get(filters)
        if hit is None:
            m = om = None
            for f, v in filters:
                fm = self.shared.mask(f, v)
                m = fm if m is None else m & fm
                col = self._own_cols[f]
                fm = (col == v) | (col == "*")
                om = fm if om is None else om & fm
            ok = np.zeros(self.n + 1, dtype=bool)
            ok[self._spot[m]] = True
            ok[self._own_at[om]] = True
            hit = ok[: self.n].nonzero()[0]
            if len(self._filters) >= self.MAX_CACHED:
                self._filters.clear()
            self._filters[filters] = hit
        return hit

    def search(self, words: list[str], filters: list[tuple[str, str]], limit: int) -> RawJson:
        if self.n < 0:
            self._build()
        fkey = tuple(filters)
        keep = self._filter(fkey) if fkey else None
        texts = self._json
        if not words:  # a listing, by id
            at = range(min(limit, self.n)) if keep is None else keep[:limit].tolist()
            return json_array([texts[i] for i in at])
        rkey = (tuple(words), fkey, limit)
        done = self._results.get(rkey)
        if done is not None:  # a repeated query: the table has not changed since (the index is its own)
            return done
        vecs = self._vecs
        known = _WORDS.get
        s = None
        owned = False  # whether ``s`` is this search's own array (else a cached vector)
        for w in words:
            for t in known(w) or _word_terms(w):
                v = vecs.get(t)
                if v is None:
                    v = self._vector(t)
                    if v is None:
                        continue
                if s is None:
                    s = v
                elif owned:
                    s += v
                else:
                    s = s + v
                    owned = True
        if s is None:
            out = json_array([])
        else:
            if keep is not None:
                s = s[keep]
            at = _best(s, limit)
            vals = s[at]
            at = (at if keep is None else keep[at]).tolist()
            if len(at) <= 64:  # best first; the sort is stable, so ties stay in number (id) order
                vl = vals.tolist()
                order = sorted(range(len(vl)), key=vl.__getitem__, reverse=True)[:limit]
            else:
                order = np.argsort(-vals, kind="stable")[:limit].tolist()
            out = json_array([texts[at[k]] for k in order])
        if len(self._results) >= self.MAX_CACHED:
            self._results.clear()
        self._results[rkey] = out
        return out


def document_search(world: World, words: list[str], filters: list[tuple[str, str]], limit: int) -> RawJson:
    """``search_documents`` over ``world``'s documents table, through its index (the one the world
    was built with, shared by its copies and built on their first search; a new one here when the
    table is not the one it indexes)."""
    rows = world.table("documents").rows
    index = world.extra.get("_doc_index")
    if index is None or index.table_rows() is not rows:
        index = DocumentIndex(rows, index.shared if index is not None else None)
        world.extra["_doc_index"] = index
    return index.search(words, filters, limit)
