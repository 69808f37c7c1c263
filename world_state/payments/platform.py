"""The payment platform's other objects: the rest of what a merchant's account holds on a real
payments platform (billing, card networks, treasury, compliance, risk, reporting, developer
settings, team access, connected accounts, terminals, issuing, support, tax, capital) and the
platform's reference data (countries, currencies, merchant category codes, holidays...).

BizBench's worlds hold 398 queryable collections and 2,994 records, most of which no task needs:
finding the few that matter among them is part of the difficulty. These collections play that
part here. Each has a typed schema (``PLATFORM_SPEC``: a compact field list, made into frozen
pydantic entities once at import) and a few rows per collection, generated once per
knowledge-base variant for the background merchants and shared copy-on-write by every world of
the variant. They are queryable through ``query_records`` like every other collection; the
capability catalogue has no operations on them (no task writes them), so a write on them does not
exist and reading them is only ever a detour.

Field types: ``s`` text, ``i`` integer, ``f`` money, ``b`` flag, ``t`` time, ``d`` date,
``e:a|b`` one of the listed values, ``r:coll`` the id of a row of ``coll`` (a collection listed
earlier), ``m`` the owning merchant (a background merchant's id).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

from pydantic import create_model

from servicegym.world_state.core import TIME_FORMAT, Entity

# collection -> "field:type ..." (``id`` is implicit); grouped by area, referenced collections first
PLATFORM_SPEC: dict[str, str] = {
    # reference data
    "countries": "code:s name:s region:e:US|EU|UK|APAC currency:s",
    "currencies": "code:s name:s minor_units:i",
    "mcc_codes": "code:s description:s risk_level:e:low|medium|high",
    "bank_holidays": "region:e:US|EU|UK|APAC date:d name:s",
    "timezones": "name:s utc_offset_minutes:i",
    "languages": "code:s name:s",
    "card_networks": "name:e:visa|mastercard|amex|discover|jcb|unionpay domestic_only:b",
    "card_brands": "name:s network:r:card_networks",
    "bin_ranges": "prefix:s network:r:card_networks country:r:countries funding:e:credit|debit|prepaid",
    "interchange_rates": "network:r:card_networks region:e:US|EU|UK|APAC pct:f fixed:f",
    "scheme_fees": "network:r:card_networks region:e:US|EU|UK|APAC pct:f",
    "dispute_reason_codes": "network:r:card_networks code:s description:s",
    "document_types": "code:s description:s",
    "tax_jurisdictions": "country:r:countries name:s",
    "tax_rates": "jurisdiction:r:tax_jurisdictions pct:f kind:e:vat|gst|sales_tax",
    "settlement_calendars": "region:e:US|EU|UK|APAC weekday:i cutoff_hour:i",
    "cutoff_times": "rail:e:ach|sepa|fps|wire|rtp region:e:US|EU|UK|APAC hour:i",
    "exchange_rate_history": "currency:s rate:f date:d",
    "report_types": "code:s description:s",
    "permissions": "code:s description:s",
    "roles": "name:s description:s",
    "role_permissions": "role:r:roles permission:r:permissions",
    "payout_methods": "code:e:standard|instant|wire description:s fee:f",
    "evidence_types": "code:s description:s",
    "risk_rules": "name:s action:e:allow|review|block priority:i enabled:b",
    "velocity_limits": "name:s window_minutes:i max_count:i",
    "sla_policies": "name:s response_hours:i",
    "card_designs": "name:s color:s",
    "terminal_configurations": "name:s tipping:b offline_mode:b",
    "rate_limit_policies": "name:s requests_per_second:i",
    "fee_kinds": "code:s description:s",
    # customers and billing
    "customers": "merchant_id:m name:s email:s country:r:countries created_at:t",
    "customer_addresses": "customer:r:customers line1:s city:s postal_code:s",
    "payment_methods": "customer:r:customers brand:r:card_brands last4:s exp_year:i",
    "setup_intents": "merchant_id:m customer:r:customers status:e:succeeded|requires_action|canceled",
    "mandates": "merchant_id:m payment_method:r:payment_methods status:e:active|inactive",
    "payment_intents": "merchant_id:m customer:r:customers amount:f status:e:succeeded|requires_payment_method|canceled created_at:t",
    "charges": "payment_intent:r:payment_intents amount:f captured:b outcome:e:authorized|declined|blocked",
    "balance_transactions": "merchant_id:m amount:f kind:e:charge|refund|payout|adjustment|fee available_on:d",
    "products": "merchant_id:m name:s active:b",
    "prices": "product:r:products amount:f interval:e:one_time|month|year",
    "plans": "merchant_id:m name:s amount:f interval:e:month|year",
    "coupons": "merchant_id:m name:s percent_off:i valid:b",
    "promotion_codes": "coupon:r:coupons code:s active:b",
    "subscriptions": "merchant_id:m customer:r:customers plan:r:plans status:e:active|past_due|canceled|trialing",
    "subscription_items": "subscription:r:subscriptions price:r:prices quantity:i",
    "subscription_schedules": "subscription:r:subscriptions phases:i status:e:active|completed|released",
    "invoices": "merchant_id:m customer:r:customers amount_due:f status:e:draft|open|paid|void|uncollectible due_date:d",
    "invoice_items": "invoice:r:invoices description:s amount:f",
    "credit_notes": "invoice:r:invoices amount:f reason:e:duplicate|fraudulent|order_change|product_unsatisfactory",
    "quotes": "merchant_id:m customer:r:customers amount:f status:e:draft|open|accepted|canceled",
    "checkout_sessions": "merchant_id:m amount:f status:e:open|complete|expired",
    "payment_links": "merchant_id:m price:r:prices active:b",
    "usage_records": "subscription_item:r:subscription_items quantity:i time:t",
    "customer_tax_ids": "customer:r:customers kind:e:eu_vat|gb_vat|us_ein|au_abn value:s",
    "customer_balance_transactions": "customer:r:customers amount:f kind:e:adjustment|applied_to_invoice|credit_note",
    "dunning_attempts": "invoice:r:invoices attempt:i result:e:failed|succeeded time:t",
    "retry_schedules": "merchant_id:m name:s attempts:i days_between:i",
    # card processing
    "authorizations": "charge:r:charges network:r:card_networks approved:b response_code:s",
    "captures": "charge:r:charges amount:f time:t",
    "reversals": "charge:r:charges amount:f reason:s",
    "three_ds_sessions": "charge:r:charges result:e:authenticated|attempted|failed|not_supported",
    "network_tokens": "payment_method:r:payment_methods network:r:card_networks status:e:active|suspended|deleted",
    "card_updates": "payment_method:r:payment_methods kind:e:new_expiry|new_number|closed time:t",
    "network_fees": "merchant_id:m network:r:card_networks amount:f period:s",
    "early_fraud_warnings": "charge:r:charges fraud_type:e:card_never_received|fraudulent_card_application|made_with_stolen_card actionable:b",
    # payouts and treasury
    "payout_batches": "merchant_id:m method:r:payout_methods total:f status:e:paid|in_transit|failed",
    "payout_failures": "batch:r:payout_batches code:e:account_closed|insufficient_funds|invalid_account_number note:s",
    "bank_transfers": "merchant_id:m rail:e:ach|sepa|fps|wire amount:f status:e:pending|posted|returned",
    "ach_returns": "transfer:r:bank_transfers code:s reason:s",
    "sepa_mandates": "merchant_id:m reference:s status:e:active|revoked",
    "wire_instructions": "merchant_id:m bank_name:s swift:s",
    "financial_accounts": "merchant_id:m currency:s status:e:open|closed",
    "cash_balances": "financial_account:r:financial_accounts amount:f",
    "inbound_transfers": "financial_account:r:financial_accounts amount:f status:e:processing|succeeded|failed",
    "outbound_payments": "financial_account:r:financial_accounts amount:f status:e:processing|posted|returned|canceled",
    "outbound_transfers": "financial_account:r:financial_accounts amount:f status:e:processing|posted|returned",
    "received_credits": "financial_account:r:financial_accounts amount:f network:e:ach|us_domestic_wire",
    "received_debits": "financial_account:r:financial_accounts amount:f network:e:ach",
    "top_ups": "merchant_id:m amount:f status:e:pending|succeeded|failed",
    "transfer_reversals": "merchant_id:m amount:f reason:s",
    "rolling_reserves": "merchant_id:m pct:i days:i",
    "reserve_releases": "merchant_id:m amount:f release_on:d",
    "negative_balance_recoveries": "merchant_id:m amount:f status:e:open|recovered|written_off",
    "settlement_batches": "merchant_id:m network:r:card_networks gross:f status:e:settled|pending",
    # compliance and risk
    "kyc_checks": "merchant_id:m subject:s result:e:clear|consider|fail time:t",
    "sanctions_screenings": "merchant_id:m list_name:e:ofac|eu|uk_hmt|un result:e:clear|potential_match",
    "pep_checks": "merchant_id:m subject:s result:e:clear|match",
    "adverse_media_checks": "merchant_id:m subject:s result:e:clear|review",
    "beneficial_owners": "merchant_id:m name:s ownership_pct:i verified:b",
    "directors": "merchant_id:m name:s verified:b",
    "business_documents": "merchant_id:m kind:r:document_types status:e:accepted|rejected|expired",
    "licenses": "merchant_id:m kind:s expires_on:d",
    "vat_registrations": "merchant_id:m country:r:countries number:s",
    "tax_forms": "merchant_id:m form:e:1099_k|1099_misc|w_9|w_8ben year:i status:e:filed|pending",
    "compliance_alerts": "merchant_id:m kind:e:velocity|sanctions|chargeback_ratio|kyc_expiry status:e:open|closed",
    "suspicious_activity_reports": "merchant_id:m filed:b time:t",
    "watchlists": "merchant_id:m name:s",
    "watchlist_entries": "watchlist:r:watchlists value:s kind:e:email|ip|card_fingerprint",
    "risk_rule_hits": "merchant_id:m rule:r:risk_rules charge:r:charges action:e:allow|review|block",
    "fraud_signals": "merchant_id:m charge:r:charges score:i",
    "blocked_cards": "merchant_id:m fingerprint:s reason:s",
    "blocked_emails": "merchant_id:m email:s reason:s",
    "device_fingerprints": "merchant_id:m fingerprint:s seen_count:i",
    "ip_reputations": "ip:s score:i",
    "radar_reviews": "merchant_id:m charge:r:charges reason:e:rule|manual|elevated_risk open:b",
    "chargeback_ratios": "merchant_id:m network:r:card_networks ratio_pct:f period:s",
    "monitoring_programs": "merchant_id:m network:r:card_networks program:s status:e:none|early_warning|standard|excessive",
    # reporting
    "report_runs": "merchant_id:m report_type:r:report_types status:e:pending|succeeded|failed time:t",
    "balance_reports": "merchant_id:m period:s opening:f closing:f",
    "payout_reconciliations": "merchant_id:m batch:r:payout_batches matched:b",
    "revenue_recognition_entries": "merchant_id:m amount:f period:s",
    "journal_exports": "merchant_id:m period:s format:e:csv|xlsx|qbo",
    "audit_logs": "merchant_id:m actor:s action:s time:t",
    "data_exports": "merchant_id:m kind:s status:e:ready|expired",
    "scheduled_queries": "merchant_id:m name:s cadence:e:daily|weekly|monthly",
    # developer settings
    "api_keys": "merchant_id:m kind:e:publishable|secret|restricted live:b created_at:t",
    "webhook_deliveries": "merchant_id:m topic:s status_code:i time:t",
    "webhook_attempts": "delivery:r:webhook_deliveries attempt:i succeeded:b",
    "event_log": "merchant_id:m kind:s time:t",
    "idempotency_records": "merchant_id:m idempotency_key:s endpoint:s time:t",
    "api_request_logs": "merchant_id:m method:e:GET|POST|DELETE path:s status_code:i",
    "oauth_apps": "merchant_id:m name:s",
    "oauth_grants": "app:r:oauth_apps scope:e:read_only|read_write revoked:b",
    "ip_allowlists": "merchant_id:m cidr:s",
    "sandbox_accounts": "merchant_id:m name:s",
    "test_clocks": "sandbox:r:sandbox_accounts frozen_time:t",
    # team and access
    "team_members": "merchant_id:m name:s email:s",
    "role_assignments": "member:r:team_members role:r:roles",
    "invitations": "merchant_id:m email:s role:r:roles status:e:pending|accepted|expired",
    "sso_configs": "merchant_id:m provider:e:okta|azure_ad|google enforced:b",
    "login_sessions": "member:r:team_members ip:s time:t",
    "mfa_devices": "member:r:team_members kind:e:totp|sms|security_key",
    "access_reviews": "merchant_id:m period:s completed:b",
    # connected accounts (marketplaces)
    "connected_accounts": "merchant_id:m name:s country:r:countries charges_enabled:b",
    "connected_account_requirements": "account:r:connected_accounts field:s due_by:d",
    "application_fees": "account:r:connected_accounts amount:f refunded:b",
    "application_fee_refunds": "fee:r:application_fees amount:f",
    "transfers": "account:r:connected_accounts amount:f reversed:b",
    "transfer_groups": "merchant_id:m name:s",
    "account_links": "account:r:connected_accounts kind:e:account_onboarding|account_update expires_at:t",
    "platform_controls": "merchant_id:m losses_paid_by:e:platform|account fees_paid_by:e:platform|account",
    # in-person payments
    "terminal_locations": "merchant_id:m name:s city:s",
    "terminal_readers": "location:r:terminal_locations model:e:wisepos_e|m2|s700 status:e:online|offline",
    "terminal_connections": "reader:r:terminal_readers time:t",
    "in_person_payments": "reader:r:terminal_readers amount:f entry_mode:e:contactless|chip|swipe",
    # issuing
    "issuing_cardholders": "merchant_id:m name:s status:e:active|inactive|blocked",
    "issuing_cards": "cardholder:r:issuing_cardholders design:r:card_designs status:e:active|inactive|canceled",
    "issuing_authorizations": "card:r:issuing_cards amount:f approved:b",
    "issuing_transactions": "card:r:issuing_cards amount:f kind:e:capture|refund",
    "issuing_disputes": "transaction:r:issuing_transactions status:e:unsubmitted|submitted|won|lost",
    "spending_controls": "card:r:issuing_cards interval:e:per_authorization|daily|monthly amount:f",
    "card_shipments": "card:r:issuing_cards carrier:e:dhl|fedex|usps|royal_mail status:e:pending|shipped|delivered",
    # support
    "support_tickets": "merchant_id:m subject:s status:e:open|pending|solved priority:e:low|normal|high|urgent",
    "ticket_messages": "ticket:r:support_tickets author:e:merchant|agent body:s",
    "escalations": "ticket:r:support_tickets level:i",
    "merchant_notes": "merchant_id:m author:s body:s",
    "satisfaction_surveys": "ticket:r:support_tickets score:i",
    # tax
    "tax_settings": "merchant_id:m default_behavior:e:inclusive|exclusive",
    "tax_registrations": "merchant_id:m country:r:countries active:b",
    "tax_calculations": "merchant_id:m amount:f tax:f",
    "tax_transactions": "calculation:r:tax_calculations reference:s",
    "tax_reports": "merchant_id:m period:s status:e:draft|filed",
    # capital
    "capital_offers": "merchant_id:m amount:f fee:f status:e:offered|accepted|expired",
    "capital_financings": "offer:r:capital_offers paid_down:f status:e:active|paid|delinquent",
    "repayment_schedules": "financing:r:capital_financings withhold_pct:i",
    "repayments": "financing:r:capital_financings amount:f time:t",
    # account history
    "merchant_status_history": "merchant_id:m status:e:active|restricted|under_review|closed time:t",
    "tier_changes": "merchant_id:m from_tier:e:standard|plus|enterprise to_tier:e:standard|plus|enterprise time:t",
    "pricing_overrides": "merchant_id:m fee_kind:r:fee_kinds pct:f",
    "statement_descriptors": "merchant_id:m descriptor:s",
    "branding_settings": "merchant_id:m color:s logo:b",
    "email_settings": "merchant_id:m receipts:b payout_notices:b",
    "business_profiles": "merchant_id:m url:s support_email:s mcc:r:mcc_codes",
    "contract_terms": "merchant_id:m term_months:i auto_renew:b",
    "volume_commitments": "merchant_id:m monthly_volume:f",
    "collections_cases": "merchant_id:m amount:f status:e:open|paid|written_off",
    "climate_orders": "merchant_id:m amount:f status:e:open|confirmed|delivered",
}

ROWS_PER_COLLECTION = (6, 10)
_WORDS = ("alpha", "cedar", "harbor", "quill", "maple", "indigo", "saffron", "granite", "willow", "orchid", "beacon", "juniper")
_EPOCH = datetime(2025, 10, 1)


def _field_type(kind: str) -> Any:
    if kind in ("s", "t", "d", "m") or kind.startswith("r:"):
        return str
    if kind == "i":
        return int
    if kind == "f":
        return float
    if kind == "b":
        return bool
    if kind.startswith("e:"):
        return Literal[tuple(kind[2:].split("|"))]  # type: ignore[misc]
    raise ValueError(f"unknown field type {kind!r}")


def _parse(spec: str) -> list[tuple[str, str]]:
    out = []
    for item in spec.split():
        name, _, kind = item.partition(":")
        out.append((name, kind))
    return out


def _model(coll: str, spec: str) -> type[Entity]:
    name = "".join(p.title() for p in coll.split("_")) + "Record"
    fields: dict[str, Any] = {"id": (str, ...)}
    for fname, kind in _parse(spec):
        fields[fname] = (_field_type(kind), ...)
    return create_model(name, __base__=Entity, __doc__=f"A {coll.replace('_', ' ')} record of the payment platform.", **fields)


PLATFORM_SCHEMA: dict[str, type[Entity]] = {coll: _model(coll, spec) for coll, spec in PLATFORM_SPEC.items()}


def _prefixes() -> dict[str, str]:
    """A distinct id prefix per collection: its initials and X ("PMX"), numbered on a clash ("PMX2")."""
    out: dict[str, str] = {}
    for coll in PLATFORM_SPEC:
        base = "".join(p[0] for p in coll.split("_")).upper() + "X"
        prefix, n = base, 1
        while prefix in out.values():
            n += 1
            prefix = f"{base}{n}"
        out[coll] = prefix
    return out


PREFIXES = _prefixes()


def _value(rng: random.Random, coll: str, fname: str, kind: str, k: int, merchants: list[str],
           ids: dict[str, list[str]]) -> Any:
    if kind == "m":
        return rng.choice(merchants)
    if kind.startswith("r:"):
        return rng.choice(ids[kind[2:]])
    if kind.startswith("e:"):
        return rng.choice(kind[2:].split("|"))
    if kind == "i":
        return rng.randint(1, 100)
    if kind == "f":
        return round(rng.uniform(1, 500), 2)
    if kind == "b":
        return rng.random() < 0.6
    if kind == "t":
        return (_EPOCH + timedelta(days=rng.randint(0, 60), minutes=rng.randint(0, 1439))).strftime(TIME_FORMAT)
    if kind == "d":
        return (_EPOCH + timedelta(days=rng.randint(0, 120))).strftime("%Y-%m-%d")
    word = rng.choice(_WORDS)
    if "email" in fname:
        return f"{word}{k}@example.com"
    if fname in ("url",):
        return f"https://{word}{k}.example"
    if fname in ("code", "prefix", "last4", "number", "swift", "reference", "idempotency_key", "fingerprint"):
        return f"{word[:3].upper()}{rng.randrange(10**4):04d}"
    if fname in ("ip", "cidr"):
        return f"203.0.113.{rng.randrange(256)}" + ("/32" if fname == "cidr" else "")
    return f"{word} {fname.replace('_', ' ')} {k}"


@lru_cache(maxsize=16)  # one per knowledge-base variant (8) with room to spare
def platform_records(variant: int, merchants: tuple[str, ...]) -> dict[str, dict[str, Entity]]:
    """Table -> rows of every platform collection for one knowledge-base variant: a few rows
    each, owned by the background ``merchants`` (never a task's), immutable and shared."""
    rng = random.Random(f"payments-platform/{variant}")
    ids: dict[str, list[str]] = {}
    out: dict[str, dict[str, Entity]] = {}
    owners = list(merchants)
    for coll, spec in PLATFORM_SPEC.items():
        model = PLATFORM_SCHEMA[coll]
        fields = _parse(spec)
        rows: dict[str, Entity] = {}
        for k in range(rng.randint(*ROWS_PER_COLLECTION)):
            rid = f"{PREFIXES[coll]}-{variant}{k:03d}"
            values = {fname: _value(rng, coll, fname, kind, k, owners, ids) for fname, kind in fields}
            rows[rid] = model.model_validate({"id": rid, **values})
        ids[coll] = list(rows)
        out[coll] = rows
    return out
