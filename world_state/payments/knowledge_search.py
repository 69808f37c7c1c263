"""Search over the payments knowledge base: ``TextIndex`` (keyword counts over a fixed
sequence of items) and ``search_documents``' BM25: the tokenizer, ``BM25Index`` (one per
background knowledge base, immutable and shared), ``DocumentIndex`` (one per documents table,
built on its first search) and ``document_search``.

Search ranks by Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5)), title
tokens counted twice, the statistics of the background knowledge base) over tokens: lower-cased
runs of letters and digits, a plural ``s``/``ies`` stripped. Ties are broken by id.

Public through ``knowledge.py``, which also holds each background knowledge base's own index
(``background_index``); nothing here imports it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import repeat
from math import log
from operator import is_
from typing import Any

import numpy as np

from servicegym.world_state.core import LazyRows, World
from servicegym.world_state.payments.entities import Document
from servicegym.world_state.tools import RawJson, dumps, json_array

# ----- search: keyword counts ------------------------------------------------------------------

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
