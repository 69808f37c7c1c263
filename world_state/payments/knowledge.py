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

Layout: this module builds the background knowledge bases (``knowledge_base`` and what reads it,
``background_documents``, ``background_index``) and is the public module: it re-exports the rest
(``__all__``). ``knowledge_texts.py`` holds the texts and the documents made of them (rule
sentences, procedures, policy and guidance documents, ``random_rules``); ``knowledge_search.py``
holds the search (``TextIndex``, the BM25 tokenizer, ``BM25Index``, ``DocumentIndex``,
``document_search``). Neither imports this module.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from servicegym.world_state.payments.entities import CURRENCIES, REGIONS, TIERS, Document
from servicegym.world_state.payments.knowledge_search import (
    FIELDS,
    K1,
    B,
    BM25Index,
    DocumentIndex,
    TextIndex,
    document_search,
    document_summary,
    search_text,
    tokens,
)
from servicegym.world_state.payments.knowledge_texts import (
    EVIDENCE_DOC_TYPES,
    KB_PRODUCTS,
    NEW_PRODUCTS,
    PROCEDURES,
    PURPOSE,
    RATIONALE,
    REGION_NOTE,
    RULE_LABEL,
    RULE_TEXT,
    _fmt,
    guidance_body,
    guidance_document,
    policy_document,
    policy_document_row,
    procedure_documents,
    product_title,
    random_rules,
    rule_sentence,
    rule_value_text,
)

__all__ = [
    # knowledge_texts.py
    "NEW_PRODUCTS", "KB_PRODUCTS", "EVIDENCE_DOC_TYPES", "RULE_TEXT", "RULE_LABEL", "RATIONALE", "PURPOSE", "REGION_NOTE",
    "PROCEDURES", "product_title", "rule_value_text", "rule_sentence", "procedure_documents", "policy_document",
    "policy_document_row", "random_rules", "guidance_body", "guidance_document",
    # this module
    "KB_VARIANTS", "KB_EPOCH", "KB_FUTURE", "Trap", "KnowledgeBase", "knowledge_base", "kb_traps", "kb_near_duplicates",
    "background_documents", "background_index",
    # knowledge_search.py
    "search_text", "TextIndex", "K1", "B", "tokens", "document_summary", "FIELDS", "BM25Index", "DocumentIndex",
    "document_search",
]

# ----- the background knowledge bases ----------------------------------------------------------

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


def background_index(seed: int) -> BM25Index:
    """The search index of the background knowledge base ``seed`` picks (of ``KB_VARIANTS``),
    built once per process and shared by every world drawn from it."""
    return _background_index(seed % KB_VARIANTS)  # cached by variant, never by the raw seed


@lru_cache(maxsize=KB_VARIANTS)
def _background_index(variant: int) -> BM25Index:
    return BM25Index(_background(variant))

