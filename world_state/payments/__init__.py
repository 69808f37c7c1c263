"""Payments (BizBench-style compliant payment operations): merchants, a ledger-derived balance
sheet, holds, payouts, refunds, receipts, review cases, approvals, scheduled events on a
simulated clock, a versioned and scoped knowledge base, and a catalogue of business
capabilities behind ten resident tools."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from servicegym.world_state.core import parse_time
from servicegym.world_state.payments import operations as _operations  # noqa: F401  registers the families' capabilities
from servicegym.world_state.payments.capabilities import CATALOGUE, Capability, search_catalogue
from servicegym.world_state.payments.platform import platform_records
from servicegym.world_state.payments.records import background_records
from servicegym.world_state.payments.tools import RESIDENT_TOOLS
from servicegym.world_state.payments.world import (
    APPROVAL_TERMS,
    CURRENCIES,
    DEFAULT_FX_RATES,
    DOC_TYPES,
    KB_VARIANTS,
    PAYMENTS_SCHEMA,
    PRODUCTS,
    REGIONS,
    TIERS,
    DocumentIndex,
    PaymentsWorld,
    background_documents,
    background_index,
    canonical_terms,
    governing_document,
    money,
    policy_document,
    procedure_documents,
)

__all__ = [
    "APPROVAL_TERMS", "CATALOGUE", "CURRENCIES", "DOC_TYPES", "PAYMENTS_SCHEMA", "PRODUCTS", "REGIONS", "RESIDENT_TOOLS",
    "TIERS", "Capability", "PaymentsWorld", "build_payments_world", "canonical_terms", "governing_document", "money",
    "policy_document", "search_catalogue",
]


class PaymentsSpecError(ValueError):
    """A payments world spec that does not validate; the message names the field."""


def build_payments_world(spec: dict[str, Any]) -> PaymentsWorld:
    """Build the initial world from a task's spec: ``now``, ``kb_seed``, ``merchant_id``,
    ``tables`` (table -> list of rows, the task's own records and pinned documents) and
    ``counters``. Background policy lineages for every other scope come from ``kb_seed``."""
    try:
        now = parse_time(spec["now"])
    except (KeyError, TypeError, ValueError):
        raise PaymentsSpecError("field world.now: required, YYYY-MM-DD HH:MM:SS") from None
    tables: dict[str, dict[str, Any]] = {name: {} for name in PAYMENTS_SCHEMA}
    raw_tables = spec.get("tables", {})
    if not isinstance(raw_tables, dict):
        raise PaymentsSpecError("field world.tables: must be an object")
    for name, rows in raw_tables.items():
        model = PAYMENTS_SCHEMA.get(name)
        if model is None or not isinstance(rows, list):
            raise PaymentsSpecError(f"field world.tables.{name}: not a list of a payments table")
        for i, raw in enumerate(rows):
            try:
                row = model.model_validate(raw)
            except ValidationError as err:
                e = err.errors(include_url=False)[0]
                raise PaymentsSpecError(f"field world.tables.{name}.{i}.{'.'.join(map(str, e['loc']))}: {e['msg']}") from None
            tables[name][row.key] = row
    m = tables["merchants"].get(spec.get("merchant_id", ""))
    if m is None:
        raise PaymentsSpecError("field world.merchant_id: must name a merchant of world.tables.merchants")
    # other merchants' books and the platform's other objects (thousands of shared, immutable rows; ids
    # never a task's), after the task's own
    variant = int(spec.get("kb_seed", 0)) % KB_VARIANTS
    background = background_records(variant, REGIONS, TIERS, CURRENCIES)
    platform = platform_records(variant, tuple(background["merchants"]))
    for name, rows in [*background.items(), *platform.items()]:
        own = tables[name]
        if own:
            for key, row in rows.items():
                own.setdefault(key, row)
        else:
            tables[name] = rows  # the world copies the dict; the rows are shared
    docs = tables["documents"]
    # the background keeps every (product, scope) the task does not pin: the merchant's own scope
    # gets its governing documents for the products the task leaves unpinned
    pinned = {(d.product, d.region, d.tier, d.currency) for d in docs.values()}
    for d in procedure_documents(spec["now"]) + background_documents(int(spec.get("kb_seed", 0)), pinned, now):
        docs.setdefault(d.id, d)
    rates = spec.get("fx_rates", DEFAULT_FX_RATES)
    if not isinstance(rates, dict) or not all(isinstance(v, (int, float)) and v > 0 for v in rates.values()):
        raise PaymentsSpecError("field world.fx_rates: must map currency codes to positive numbers")
    extra = {"merchant_id": m.id, "fx_rates": dict(rates), "ledger_seq": max((e.seq for e in tables["ledger"].values()), default=0)}
    world = PaymentsWorld(now, tables, counters=dict(spec.get("counters", {})), extra=extra)
    # search_documents' index, built once per world: its episode copies share the documents table
    # (copy-on-write) and so the index; the background knowledge base's part is shared by every world
    # drawn from it
    world.extra["_doc_index"] = DocumentIndex(world.table("documents").rows, background_index(int(spec.get("kb_seed", 0))))
    return world
