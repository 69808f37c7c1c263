"""The payments knowledge base at BizBench's scale: about a thousand documents per world from a
shared background, superseded near-duplicates and scope traps, and BM25 search over it."""

from __future__ import annotations

import difflib
import json

import pytest

from servicegym.envs.environments.payments import PaymentsEnv
from servicegym.envs.tasks.generators.payments import build_scenario, generate_payments_task
from servicegym.envs.tasks.suites import payments_suite
from servicegym.world_state.payments import build_payments_world
from servicegym.world_state.payments.knowledge import (
    KB_PRODUCTS,
    KB_VARIANTS,
    NEW_PRODUCTS,
    DocumentIndex,
    background_index,
    document_search,
    kb_near_duplicates,
    kb_traps,
    knowledge_base,
    product_title,
)
from servicegym.world_state.payments.world import PRODUCTS, governing_document

SUITE = payments_suite()[:20]
AT = "2026-06-01 09:00:00"  # inside every task's time span


@pytest.fixture(scope="module")
def worlds():
    return [build_payments_world(t.world) for t in SUITE]


def _scopes(docs):
    out = {}
    for d in docs:
        out.setdefault((d.product, d.region, d.tier, d.currency), []).append(d)
    return out


def _governing(lines, scope, at=AT):
    return governing_document(lines.get(scope, ()), *scope, at)


def test_every_world_holds_at_least_780_documents_of_hundreds_of_thousands_of_tokens(worlds):
    sizes = [len(w.table("documents").rows) for w in worlds]
    assert sum(sizes) / len(sizes) >= 780 and min(sizes) >= 780
    generated = [len(build_payments_world(generate_payments_task(s, s % 5, "train", violations=False).world).table("documents").rows)
                 for s in range(10)]
    assert sum(generated) / len(generated) >= 780
    chars = sum(len(d.title) + len(d.body) for d in worlds[0].table("documents"))
    assert chars >= 1_000_000  # about a quarter of a million tokens and more


def test_the_merchant_scope_keeps_its_pinned_lineages_and_gets_the_new_products_from_the_background(worlds):
    for task, w in zip(SUITE[:5], worlds[:5]):
        seed = int(task.task_id.split("/")[2])
        s = build_scenario(seed, task.difficulty, "test")
        mid = w.extra["merchant_id"]
        pinned = {d["id"] for d in task.world["tables"]["documents"]}
        assert w.governing("payouts", mid).id == s.docs["payouts_v2"]
        assert w.governing("refunds", mid).id == s.docs["refunds"]
        for product in PRODUCTS:  # the pinned products' lineages are the task's alone
            m = w.table("merchants").require(mid)
            lineage = [d for d in w.table("documents") if (d.product, d.region, d.tier, d.currency) == (product, m.region, m.tier, m.currency)]
            assert lineage and all(d.id in pinned for d in lineage)
        for product in NEW_PRODUCTS:  # a product the task's workflows use is pinned too; the rest come from the background
            doc = w.governing(product, mid)
            assert doc is not None and doc.rules
            assert doc.id == s.docs[product] if product in s.docs else doc.id.startswith("KB-")


def test_near_duplicates_differ_in_one_rule_and_the_successor_governs():
    for variant in range(KB_VARIANTS):
        kb = knowledge_base(variant)
        by_id = {d.id: d for d in kb.docs}
        lines = _scopes(kb.docs)
        dups = kb_near_duplicates(variant)
        assert len(dups) >= 300
        for old_id, new_id, key in dups:
            old, new = by_id[old_id], by_id[new_id]
            assert new.supersedes == old_id and new.version == old.version + 1
            assert (old.product, old.region, old.tier, old.currency) == (new.product, new.region, new.tier, new.currency)
            assert [k for k in old.rules if old.rules[k] != new.rules[k]] == [key]
        # near-identical text: a sample is enough (difflib is slow)
        for old_id, new_id, _ in dups[:: max(1, len(dups) // 25)]:
            assert difflib.SequenceMatcher(None, by_id[old_id].body, by_id[new_id].body).quick_ratio() > 0.8
        # the governing document of a lineage is its highest version in force, never a superseded one
        superseded = {o for o, _, _ in dups}
        for scope, docs in lines.items():
            if scope[2] == "*":
                continue
            gov = _governing(lines, scope)
            assert gov is not None
            in_force = [d for d in docs if d.effective_from <= AT]
            assert gov.version == max(d.version for d in in_force)
            assert gov.id not in superseded or any(d.supersedes == gov.id and d.effective_from > AT for d in docs)


def test_every_scope_trap_exists_and_never_governs_its_target():
    for variant in range(KB_VARIANTS):
        kb = knowledge_base(variant)
        by_id = {d.id: d for d in kb.docs}
        lines = _scopes(kb.docs)
        traps = kb_traps(variant)
        kinds = {t.kind for t in traps}
        assert kinds == {"regional_note", "neighbour", "not_in_force"}
        for t in traps:
            doc = by_id[t.doc_id]
            gov = _governing(lines, t.scope)
            assert gov is not None and gov.id != t.doc_id, t
            product, region, tier, cur = t.scope
            assert doc.product == product
            if t.kind == "regional_note":
                assert (doc.region, doc.tier, doc.currency) == (region, "*", "*") and not doc.rules
                assert tier in doc.title and cur in doc.title  # a keyword match for the scope finds it
            elif t.kind == "neighbour":
                assert (doc.region, doc.tier, doc.currency) != (region, tier, cur)
                assert doc.region == region or doc.tier == tier
                assert f"{tier} merchants in {region}" in doc.body
            else:  # the lineage's highest version, dated after every task: its predecessor governs
                assert (doc.region, doc.tier, doc.currency) == (region, tier, cur) and doc.effective_from > "2027"
                assert gov.id == doc.supersedes


def test_a_keyword_pick_falls_into_the_traps_while_scope_filters_find_the_governing_document(worlds):
    wrong = total = 0
    for w in worlds[:6]:
        mid = w.extra["merchant_id"]
        m = w.table("merchants").require(mid)
        for product in KB_PRODUCTS:
            gov = w.governing(product, mid)
            words = f"{product_title(product)} policy {m.tier} {m.region} {m.currency}".casefold().split()
            top = json.loads(document_search(w, words, [], 10))[0]
            total += 1
            wrong += top["id"] != gov.id
            scoped = json.loads(document_search(w, ["policy"], [("product", product), ("region", m.region), ("tier", m.tier),
                                                                ("currency", m.currency)], 10))
            assert gov.id in [r["id"] for r in scoped]
            assert all(r["region"] in (m.region, "*") and r["tier"] in (m.tier, "*") for r in scoped)
            # only scope and version pick right: the governing one is the highest version in force of the exact scope
            exact = [r for r in scoped if (r["product"], r["region"], r["tier"], r["currency"]) == (product, m.region, m.tier, m.currency)
                     and r["effective_from"] <= w.clock.text()]
            assert max(exact, key=lambda r: r["version"])["id"] == gov.id
    assert wrong >= total // 2


def test_search_is_deterministic_and_ranked_by_bm25_then_id(worlds):
    w = worlds[0]
    queries = [(["payout", "policy"], []), (["dispute", "evidence", "invoice"], [("region", "EU")]), (["policy"], []),
               (["reconciliation", "tolerance"], [("tier", "plus")]), ([], [("product", "fx"), ("region", "US")])]
    first = [document_search(w, q, f, 20) for q, f in queries]
    again = [document_search(w, q, f, 20) for q, f in queries]
    rows = w.table("documents").rows
    fresh = DocumentIndex(rows, background_index(int(SUITE[0].world["kb_seed"])))
    assert first == again == [fresh.search(q, f, 20) for q, f in queries]
    other = build_payments_world(SUITE[0].world)  # another world from the same task
    assert first == [document_search(other, q, f, 20) for q, f in queries]
    # a listing without words is by id; filters keep the exact scope or "*"
    ids = [r["id"] for r in json.loads(first[4])]
    assert ids == sorted(ids) and all(r["product"] == "fx" and r["region"] in ("US", "*") for r in json.loads(first[4]))
    # a rare word puts the documents holding it first
    hits = json.loads(document_search(w, ["kyb"], [], 50))
    assert hits and all(r["product"] == "verifications" or "KB-P" in r["id"] for r in hits)


def test_plural_and_case_insensitive_words_match():
    w = build_payments_world(SUITE[1].world)
    a = json.loads(document_search(w, ["payouts", "policies"], [("product", "payouts")], 10))
    b = json.loads(document_search(w, ["Payout", "POLICY"], [("product", "payouts")], 10))
    assert a == b and a


def test_the_oracle_still_succeeds_on_suite_tasks():
    env = PaymentsEnv()
    for task in SUITE[:3]:
        env.reset(seed=0, options={"task": task})
        info = {}
        for a in task.golden_actions:
            _, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        assert info["success"], info["score"]["violations"]
