"""Payments (BizBench-style compliant payment operations): merchants, a ledger-derived balance
sheet, holds, payouts, refunds, receipts, review cases, approvals, scheduled events on a
simulated clock, a versioned and scoped knowledge base, and a catalogue of business
capabilities behind ten resident tools."""

from __future__ import annotations

from functools import cache, lru_cache, partial
from typing import Any

from pydantic import TypeAdapter, ValidationError

from servicegym.world_state.core import LazyRows, parse_time
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
    Document,
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
from servicegym.world_state.vouched import vouched_rows

__all__ = [
    "APPROVAL_TERMS", "CATALOGUE", "CURRENCIES", "DOC_TYPES", "PAYMENTS_SCHEMA", "PRODUCTS", "REGIONS", "RESIDENT_TOOLS",
    "TIERS", "Capability", "PaymentsWorld", "build_payments_world", "canonical_terms", "governing_document", "money",
    "policy_document", "prepare_backgrounds", "search_catalogue",
]


class PaymentsSpecError(ValueError):
    """A payments world spec that does not validate; the message names the field."""


def _under(own: dict[str, Any], rows: dict[str, Any]) -> dict[str, Any]:
    """``own`` followed by the rows of ``rows`` whose keys it lacks (own rows win, in their place):
    ``own.setdefault`` for each row, done by dict merges (C speed: the background is thousands of
    rows). ``rows`` itself when ``own`` is empty (the caller copies it before any change)."""
    if not own:
        return rows
    merged = {**own, **rows}  # own's keys first, then the new ones, in order
    merged.update(own)  # own's rows where both have the key (their places are own's already)
    return merged


_LAST_SEQ: dict[int, tuple[dict[str, Any], int]] = {}


def _last_seq(ledger: dict[str, Any]) -> int:
    """The highest ``seq`` of a background ledger (0 if empty), once per ledger dict (the
    backgrounds are built once per variant and never change)."""
    hit = _LAST_SEQ.get(id(ledger))
    if hit is None or hit[0] is not ledger:
        if len(_LAST_SEQ) >= 4 * KB_VARIANTS:  # backgrounds built anew (other arguments): start afresh
            _LAST_SEQ.clear()
        hit = _LAST_SEQ[id(ledger)] = (ledger, max((e.seq for e in ledger.values()), default=0))
    return hit[1]


def prepare_backgrounds() -> None:
    """Build the background records of every knowledge-base variant (other merchants' books and
    the platform's other objects, about a quarter of a second for all, once per process; the
    caches keep them) now: a world's build reads its variant's, and a reset meeting a variant for
    the first time would otherwise build it then (tens of milliseconds). ``PaymentsEnv`` calls it
    when made; a no-op once done."""
    for variant in range(KB_VARIANTS):
        background = background_records(variant, REGIONS, TIERS, CURRENCIES)
        platform_records(variant, tuple(background["merchants"]))
        _last_seq(background["ledger"])


@lru_cache(maxsize=KB_VARIANTS)
def _documents_base(variant: int) -> tuple[tuple[Document, ...], dict[str, Document], dict[tuple[str, ...], list[str]]] | None:
    """Per knowledge-base variant, built once: the procedures it was built with, every procedure
    and background document by id (procedures first, in order), and the ids of the background
    documents of each ``(product, region, tier, currency)``. None when ids repeat (then a pinned
    scope's removal is not a deletion by id, and ``_with_background_documents`` filters row by row)."""
    procedures = tuple(procedure_documents(""))
    background = background_documents(variant)
    base = {d.id: d for d in procedures}
    base.update((d.id, d) for d in background)
    if len(base) != len(procedures) + len(background):
        return None
    groups: dict[tuple[str, ...], list[str]] = {}
    for d in background:
        groups.setdefault((d.product, d.region, d.tier, d.currency), []).append(d.id)
    return procedures, base, groups


def _with_background_documents(own: dict[str, Document], now_text: str, kb_seed: int, now: Any) -> dict[str, Document]:
    """The task's documents, then the procedures, then the background knowledge base but for the
    ``(product, scope)`` pairs the task pins: what ``own.setdefault`` of each in turn gives."""
    pinned = {(d.product, d.region, d.tier, d.currency) for d in own.values()}
    procedures = procedure_documents(now_text)
    cached = _documents_base(kb_seed % KB_VARIANTS)
    if cached is None or len(cached[0]) != len(procedures) or any(a is not b for a, b in zip(cached[0], procedures)):
        docs = dict(own)
        for d in procedures + background_documents(kb_seed, pinned, now):
            docs.setdefault(d.id, d)
        return docs
    _, base, groups = cached
    docs = _under(own, base)
    if docs is base:
        return base  # nothing pinned; the caller copies it
    for scope in pinned:
        for doc_id in groups.get(scope, ()):
            if doc_id not in own:
                del docs[doc_id]
    return docs


@cache
def _table_adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(list[model])


def _own_rows(name: str, model: Any, rows: list[Any], vouched: bool) -> list[Any]:
    """The entities of a table of the task's own rows: made without validation when the spec is
    vouched for and the model is plain (``vouched.vouched_rows``), else validated in one call
    (a bad row is then found row by row, to name it)."""
    made = vouched_rows(model, rows) if vouched else None
    if made is not None:
        return made
    try:
        return _table_adapter(model).validate_python(rows)
    except ValidationError:
        pass
    for i, raw in enumerate(rows):
        try:
            model.model_validate(raw)
        except ValidationError as err:
            e = err.errors(include_url=False)[0]
            raise PaymentsSpecError(f"field world.tables.{name}.{i}.{'.'.join(map(str, e['loc']))}: {e['msg']}") from None
    raise AssertionError("unreachable: the table failed as a whole but no row fails")  # pragma: no cover


def build_payments_world(spec: dict[str, Any], *, vouched: bool = False) -> PaymentsWorld:
    """Build the initial world from a task's spec: ``now``, ``kb_seed``, ``merchant_id``,
    ``tables`` (table -> list of rows, the task's own records and pinned documents) and
    ``counters``. Background policy lineages for every other scope come from ``kb_seed``.
    ``vouched``: the spec is its generator's own (``Task.vouched_world``): its plain tables are
    built without validating them again, and the tables that merge the task's rows with the
    background (and the documents) are merged on their first read (a generated task is mostly
    played once: its reset pays for no table its episode does not read)."""
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
        own = tables[name]
        for row in _own_rows(name, model, rows, vouched):
            own[row.key] = row
    m = tables["merchants"].get(spec.get("merchant_id", ""))
    if m is None:
        raise PaymentsSpecError("field world.merchant_id: must name a merchant of world.tables.merchants")
    # other merchants' books and the platform's other objects (thousands of shared, immutable rows; ids
    # never a task's), after the task's own
    variant = int(spec.get("kb_seed", 0)) % KB_VARIANTS
    background = background_records(variant, REGIONS, TIERS, CURRENCIES)
    platform = platform_records(variant, tuple(background["merchants"]))
    ledger_seq = max((e.seq for e in tables["ledger"].values()), default=0)
    for name, rows in [*background.items(), *platform.items()]:
        own = tables[name]  # the world copies the dict; the rows are shared
        if name == "ledger":  # the merged ledger's last seq, without merging it (own rows win a shared key)
            last = _last_seq(rows) if own.keys().isdisjoint(rows) else max(
                (e.seq for k, e in rows.items() if k not in own), default=0)
            ledger_seq = max(ledger_seq, last)
        # a table with rows of the task's own: merged with the background (hundreds of rows); for a
        # generated task (vouched), on its first read, once for the world and its copies
        # (``LazyRows``): a reset to a new task merges none its episode does not read
        if own:
            tables[name] = LazyRows(partial(_under, own, rows)) if vouched else _under(own, rows)
        else:
            tables[name] = rows
    # the background keeps every (product, scope) the task does not pin: the merchant's own scope
    # gets its governing documents for the products the task leaves unpinned (merged on first read)
    merge = partial(_with_background_documents, tables["documents"], spec["now"], int(spec.get("kb_seed", 0)), now)
    documents = LazyRows(merge) if vouched else merge()
    tables["documents"] = documents
    rates = spec.get("fx_rates", DEFAULT_FX_RATES)
    if not isinstance(rates, dict) or not all(isinstance(v, (int, float)) and v > 0 for v in rates.values()):
        raise PaymentsSpecError("field world.fx_rates: must map currency codes to positive numbers")
    extra = {"merchant_id": m.id, "fx_rates": dict(rates), "ledger_seq": ledger_seq}
    world = PaymentsWorld(now, tables, counters=dict(spec.get("counters", {})), extra=extra)
    # search_documents' index, built once per world: its episode copies share the documents table
    # (copy-on-write) and so the index; the background knowledge base's part is shared by every world
    # drawn from it. It holds the documents' ``LazyRows`` and the background index's maker until its
    # first search
    world.extra["_doc_index"] = DocumentIndex(documents, partial(background_index, int(spec.get("kb_seed", 0))))
    return world
