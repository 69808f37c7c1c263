"""``search_documents``' index is built on the first search, not at reset: a reset to a new
generated task builds none, the first search builds it once for every episode of the task (the
world's copies share it), and what it finds is what the plain BM25 reference finds, whichever way
the index found the table's own documents."""

from __future__ import annotations

import json

import gymnasium as gym

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.tasks.generators.payments import generate_payments_task
from servicegym.world_state.payments import build_payments_world
from servicegym.world_state.payments.knowledge import DocumentIndex, background_index
from tests.world_state.test_payments_search_equivalence import ref_for, ref_search

ENV = "servicegym/Payments-v0"
QUERIES = [(["refund", "window"], [], 10), (["payout", "limit"], [("region", "EU")], 5),
           (["kyb", "documents"], [("tier", "plus"), ("currency", "GBP")], 8), (["policy"], [], 50),
           (["zebracorn"], [], 5), ([], [("product", "fees")], 20), (["zzzunknownzzz"], [], 5)]
READ = json.dumps({"name": "read_document", "arguments": {"doc_id": "KB-P01"}})


def search(query: str, **filters: str) -> str:
    return json.dumps({"name": "search_documents", "arguments": {"query": query, **filters}})


def test_a_reset_to_a_new_task_builds_no_index_and_the_first_search_builds_it_once_for_every_episode():
    env = gym.make(ENV)
    tid = env.unwrapped.source.make_id("train", 912_345)
    env.reset(seed=0, options={"task_id": tid})
    index = env.unwrapped.world.extra["_doc_index"]
    assert isinstance(index, DocumentIndex) and not index.built
    env.step(READ)
    assert not index.built  # reading a document by id needs no index
    first = env.step(search("payout policy limit"))[0]
    assert index.built and '"id":' in first and "<tool_error" not in first
    # the next episode of the task shares the built index (no second build) and finds the same
    env.reset(seed=0, options={"task_id": tid})
    assert env.unwrapped.world.extra["_doc_index"] is index
    numbering = index._json
    env.step(READ)
    assert env.step(search("payout policy limit"))[0] == first
    assert index._json is numbering
    # another env reaching the task by id afresh (same seed, same actions) sees the same transcript
    other = gym.make(ENV)
    other.reset(seed=0, options={"task_id": tid})
    other.step(READ)
    assert other.step(search("payout policy limit"))[0] == first


def test_the_lazily_built_index_finds_what_the_reference_finds():
    task = generate_payments_task(4242, 2, "train", violations=False)
    seed = int(task.world["kb_seed"])
    world = build_payments_world(task.world)
    rows = world.table("documents").rows
    ref = ref_for(seed)
    index = world.extra["_doc_index"]
    assert not index.built
    for words, filters, limit in QUERIES:
        assert index.search(words, filters, limit) == ref_search(ref, rows, words, filters, limit)[0], (words, filters)
    assert index.built


def test_own_documents_found_by_key_or_by_a_scan_rank_like_the_reference():
    task = generate_payments_task(777, 1, "train", violations=False)
    seed = int(task.world["kb_seed"])
    shared = background_index(seed)
    rows = dict(build_payments_world(task.world).table("documents").rows)
    bg = [d for d in rows.values() if d.id in shared.pos and shared.items[shared.pos[d.id]] is d]
    # a background document rewritten under its own id, and a new one: found from the keys
    a, c = bg[3], bg[60]
    rows[a.id] = a.model_copy(update={"body": a.body + " Zebracorn payout."})
    rows[c.id + "-new"] = c.model_copy(update={"id": c.id + "-new", "title": "Zebracorn " + c.title})
    ref = ref_for(seed)
    by_key = DocumentIndex(rows, shared)
    for words, filters, limit in QUERIES:
        assert by_key.search(words, filters, limit) == ref_search(ref, rows, words, filters, limit)[0], (words, filters)
    hits = [r["id"] for r in json.loads(by_key.search(["zebracorn"], [], 5))]
    assert sorted(hits) == sorted([a.id, c.id + "-new"])
    # a row kept under a key that is not its id (no table makes one): the index scans the rows
    odd = dict(rows)
    d = bg[120]
    odd["elsewhere"] = d.model_copy(update={"id": d.id + "-moved", "body": d.body + " Zebracorn."})
    scanned = DocumentIndex(odd, shared)
    for words, filters, limit in QUERIES:
        assert scanned.search(words, filters, limit) == ref_search(ref, odd, words, filters, limit)[0], (words, filters)
    assert d.id + "-moved" in [r["id"] for r in json.loads(scanned.search(["zebracorn"], [], 5))]
