"""The payments knowledge base's texts and the documents made of them: the knowledge base's
products, the rule sentences and their labels, rationales, purposes and regional notes, the
procedures (``procedure_documents``), the tasks' short policy documents (``policy_document``,
``policy_document_row``), the background's long guidance documents (``guidance_document``) and
the rule values a policy draws (``random_rules``).

Public through ``knowledge.py``, which builds the background knowledge bases from these; nothing
here imports it.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from servicegym.world_state.payments.entities import DOC_TYPES, PRODUCTS, Document

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
