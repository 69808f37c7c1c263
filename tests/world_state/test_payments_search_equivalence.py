"""``search_documents``' fast index (knowledge.DocumentIndex) against a straightforward BM25 kept
here: for golden-route, random and odd queries over several worlds (their own documents, the
superseded and future-dated versions, a documents table changed during an episode), the result
text is exactly the reference's: the same documents, scores ranked the same way, ties in id
order, the same fields."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from math import log

import pytest

from servicegym.envs.tasks.generators.payments import generate_payments_task
from servicegym.envs.tasks.suites import payments_suite
from servicegym.world_state.payments import build_payments_world
from servicegym.world_state.payments.knowledge import (
    KB_VARIANTS,
    DocumentIndex,
    background_index,
    document_search,
    knowledge_base,
)
from servicegym.world_state.tools import dumps

# ----- the reference: BM25 written out, one document at a time ----------------------------------------

K1, B = 1.2, 0.75
RUN = re.compile(r"[a-z0-9]+")
FIELDS = ("product", "region", "tier", "currency")


def ref_tokens(text: str) -> list[str]:
    out = []
    for t in RUN.findall(text.casefold()):
        if len(t) > 4 and t.endswith("ies"):
            t = t[:-3] + "y"
        elif len(t) > 3 and t.endswith("s") and not t.endswith(("ss", "us", "is")):
            t = t[:-1]
        out.append(t)
    return out


def ref_counts(d) -> Counter:
    c = Counter(ref_tokens(d.body))
    for t in ref_tokens(d.title):
        c[t] += 2
    return c


class RefBM25:
    """Okapi BM25 with the statistics of one background knowledge base (every world's documents,
    its own ones included, are weighted with them)."""

    def __init__(self, background) -> None:
        counts = [ref_counts(d) for d in background]
        self.n = len(counts)
        self.avgdl = sum(sum(c.values()) for c in counts) / max(1, self.n)
        df = Counter(t for c in counts for t in c)
        self.idf = {t: log(1 + (self.n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.top = log(1 + (self.n + 0.5) / 0.5)
        self._weights: dict[int, tuple[object, dict[str, float]]] = {}

    def weights(self, d) -> dict[str, float]:
        hit = self._weights.get(id(d))
        if hit is None or hit[0] is not d:
            c = ref_counts(d)
            norm = K1 * (1 - B + B * sum(c.values()) / self.avgdl)
            hit = self._weights[id(d)] = (d, {t: self.idf.get(t, self.top) * tf * (K1 + 1) / (tf + norm) for t, tf in c.items()})
        return hit[1]

    def ranked(self, docs, words: list[str]) -> list[tuple[float, object]]:
        terms = [t for w in words for t in ref_tokens(w)]
        out = []
        for d in docs:
            w = self.weights(d)
            score = 0.0
            for t in terms:
                if t in w:
                    score += w[t]
            if score > 0:
                out.append((score, d))
        out.sort(key=lambda x: (-x[0], x[1].id))
        return out


def summary(d) -> dict:
    return {"id": d.id, "title": d.title, "product": d.product, "region": d.region, "tier": d.tier, "currency": d.currency,
            "version": d.version, "effective_from": d.effective_from, "supersedes": d.supersedes}


def ref_search(ref: RefBM25, rows: dict, words: list[str], filters: list[tuple[str, str]], limit: int) -> tuple[str, list[float]]:
    """The result text ``search_documents`` must give, and the scores of its documents."""
    docs = [d for d in rows.values() if all(getattr(d, k) in (v, "*") for k, v in filters)]
    if not words:  # a listing: by id
        picked = [(0.0, d) for d in sorted(docs, key=lambda d: d.id)[:limit]]
    else:
        picked = ref.ranked(docs, words)[:limit]
    return dumps([summary(d) for _, d in picked]), [s for s, _ in picked]


_REFS: dict[int, RefBM25] = {}


def ref_for(seed: int) -> RefBM25:
    v = seed % KB_VARIANTS
    if v not in _REFS:
        _REFS[v] = RefBM25(knowledge_base(v).docs)
    return _REFS[v]


# ----- the worlds and queries --------------------------------------------------------------------------

SUITE = payments_suite()
ODD = [[], [""], ["!!!"], ["--"], ["ünïcode", "ÆØÅ"], ["policy"] * 5, ["POLICIES", "Payouts"], ["fx-quote", "validity:"],
       ["x" * 300], ["2026"], ["v1", "v2"], ["the", "a", "of"], ["policy", "zzzunknownzzz"], ["zzzunknownzzz"],
       ["kyb", "kyb", "documents"], ["refund's", "(window)"], ["ies", "ss", "us", "is", "bus", "analysis"]]


def golden_queries(task) -> list[tuple[list[str], list[tuple[str, str]], int]]:
    out = []
    for a in task.golden_actions:
        try:
            obj = json.loads(a)
        except (json.JSONDecodeError, TypeError):
            continue
        if isinstance(obj, dict) and obj.get("name") == "search_documents":
            args = obj["arguments"]
            words = [t for t in args["query"].casefold().split() if t]
            filters = [(k, args[k]) for k in FIELDS if args.get(k) is not None]
            out.append((words, filters, max(1, min(int(args.get("limit", 10)), 50))))
    return out


def random_queries(rng: random.Random, rows: dict, merchant, k: int) -> list[tuple[list[str], list[tuple[str, str]], int]]:
    docs = list(rows.values())
    values = {"product": sorted({d.product for d in docs}) + ["*", "nope"], "region": ["US", "EU", "UK", "APAC", "*", "xx"],
              "tier": ["standard", "plus", "enterprise", "*"], "currency": ["USD", "EUR", "GBP", "*", "JPY"]}
    scope = {"region": merchant.region, "tier": merchant.tier, "currency": merchant.currency}
    out = []
    for i in range(k):
        words = []
        for _ in range(rng.choice((1, 1, 2, 2, 3, 3, 4, 5, 6, 8))):
            d = rng.choice(docs)
            pool = re.findall(r"\S+", d.title + " " + d.body)
            w = rng.choice(pool) if rng.random() < 0.85 else rng.choice(("zzz", "Policy", "UK", "usd", "plus", "v9", "s", "ies"))
            words.append(w.casefold() if rng.random() < 0.7 else w.upper())
        r = rng.random()
        if r < 0.3:
            filters = []
        elif r < 0.6:  # the merchant's scope, as an agent narrows it
            fields = rng.sample(("region", "tier", "currency"), rng.randint(1, 3))
            filters = [(f, scope[f]) for f in FIELDS if f in fields]
            if rng.random() < 0.5:
                filters.insert(0, ("product", rng.choice(values["product"][:-2])))
        else:
            filters = [(f, rng.choice(values[f])) for f in FIELDS if rng.random() < 0.4]
        limit = rng.choice((1, 2, 3, 5, 10, 10, 10, 20, 50))
        out.append(([w for w in " ".join(words).casefold().split() if w] if i % 2 else words, filters, limit))
    return out


@pytest.fixture(scope="module")
def cases():
    """(world, kb seed, queries) for suite and generated tasks over several background variants."""
    picked, seen = [], set()
    for t in SUITE:
        v = int(t.world["kb_seed"]) % KB_VARIANTS
        if v not in seen or len(picked) < 3:
            seen.add(v)
            picked.append(t)
        if len(picked) >= 6:
            break
    picked += [generate_payments_task(s, s % 5, "train", violations=False) for s in (3, 11)]
    rng = random.Random(27)
    out = []
    for t in picked:
        w = build_payments_world(t.world)
        m = w.table("merchants").require(w.extra["merchant_id"])
        queries = golden_queries(t) + [(q, f, lim) for q in ODD for f, lim in (([], 10), ([("region", m.region)], 3))]
        queries += random_queries(rng, w.table("documents").rows, m, 80)
        out.append((w, int(t.world.get("kb_seed", 0)), queries))
    return out


def test_search_equals_the_reference_bm25_on_golden_random_and_odd_queries(cases):
    ties = own_hits = superseded_hits = future_hits = listed = 0
    for w, seed, queries in cases:
        rows = w.table("documents").rows
        ref = ref_for(seed)
        shared = background_index(seed)
        own = {d.id for d in rows.values() if (i := shared.pos.get(d.id)) is None or shared.items[i] is not d}
        assert own  # the task's pinned documents and the procedures are the world's own
        superseded = {d.supersedes for d in rows.values() if d.supersedes}
        now = w.clock.text()
        for words, filters, limit in queries:
            want, scores = ref_search(ref, rows, words, filters, limit)
            got = document_search(w, words, filters, limit)
            assert got == want, (words, filters, limit)
            assert document_search(w, words, filters, limit) == want  # again, from the result cache
            ids = [r["id"] for r in json.loads(got)]
            ties += bool(words) and any(a == b for a, b in zip(scores, scores[1:]))  # ranked documents tied
            own_hits += bool(own & set(ids))
            superseded_hits += bool(superseded & set(ids))
            future_hits += any(r["effective_from"] > now for r in json.loads(got))
            listed += not words and bool(ids)
    # the queries reach what the ranking must get right
    assert ties >= 200 and own_hits >= 150 and superseded_hits >= 200 and future_hits >= 50 and listed >= 10


def test_a_fresh_index_and_a_changed_documents_table_search_like_the_reference(cases):
    w, seed, queries = cases[0]
    ref = ref_for(seed)
    rows = w.table("documents").rows
    fresh = DocumentIndex(rows, background_index(seed))
    for words, filters, limit in queries[:80]:
        assert fresh.search(words, filters, limit) == ref_search(ref, rows, words, filters, limit)[0]
    # an episode changes the documents: one of the background's rewritten (a word of its own),
    # one removed, one added with the same text as another (a tie), one of the world's own rewritten
    w = w.copy()
    docs = w.table("documents")
    shared = background_index(seed)
    background = [d for d in docs if d.id in shared.pos and shared.items[shared.pos[d.id]] is d]
    own = [d for d in docs if d.id not in shared.pos or shared.items[shared.pos[d.id]] is not d]
    a, b, c = background[5], background[40], background[77]
    docs.update(a.id, body=a.body + " Zebracorn reconciliation.")
    docs.delete(b.id)
    docs.put(c.model_copy(update={"id": c.id + "-copy"}))
    docs.update(own[0].id, title="Zebracorn " + own[0].title)
    rows = docs.rows
    changed = [(["zebracorn"], [], 10), (["zebracorn", "reconciliation"], [], 5), (c.title.casefold().split(), [], 50),
               (c.title.casefold().split(), [("product", c.product)], 3), ([], [("product", b.product)], 50)]
    for words, filters, limit in changed + queries[:40]:
        want = ref_search(ref, rows, words, filters, limit)[0]
        assert document_search(w, words, filters, limit) == want, (words, filters, limit)
    hits = [r["id"] for r in json.loads(document_search(w, ["zebracorn"], [], 10))]
    assert sorted(hits) == sorted([a.id, own[0].id])
    assert b.id not in [r["id"] for r in json.loads(document_search(w, [], [("product", b.product)], 50))]
    pair = [r["id"] for r in json.loads(document_search(w, c.title.casefold().split(), [], 50))]
    assert c.id in pair and c.id + "-copy" in pair and pair.index(c.id + "-copy") == pair.index(c.id) + 1


def test_a_world_without_a_background_index_still_searches_its_own_documents():
    """(a world built elsewhere: the table is searched with no background statistics)"""
    w = build_payments_world(SUITE[0].world)
    del w.extra["_doc_index"]
    hits = json.loads(document_search(w, ["kyb", "zzz"], [], 5))
    rows = w.table("documents").rows
    assert len(hits) == 5 and all("kyb" in ref_counts(rows[r["id"]]) for r in hits)
    assert json.loads(document_search(w, ["zzz"], [], 5)) == []
    assert json.loads(document_search(w, [], [], 3)) == [summary(d) for d in sorted(rows.values(), key=lambda d: d.id)[:3]]
