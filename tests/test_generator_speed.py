"""What the reset-cost work on the Delivery, InStore and Payments generators (issue 29) must keep.

A reset to a new generated task generates the task and builds its world; both were made cheaper
(tables of the content computed once per process, golden routes encoded by one JSON encoder, the
checker-validation routes skipped when not asked for, Payments' background tables and knowledge
base merged by dict operations over tables built once per knowledge-base variant). None of that
may change a task or a world: the digests below were computed with the code from before the change,
so the frozen suites and every recorded seed keep their tasks. Timing is left to
``scripts/bench_envs.py``; nothing here is timed.
"""

from __future__ import annotations

import hashlib
import json

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.tasks.generators.delivery import generate_delivery_task
from servicegym.envs.tasks.generators.instore import generate_instore_task
from servicegym.envs.tasks.generators.payments import generate_payments_task
from servicegym.world_state.payments import (
    KB_VARIANTS,
    _with_background_documents,
    background_documents,
    build_payments_world,
    procedure_documents,
)
from servicegym.world_state.payments.world import Document

GENERATORS = {"delivery": generate_delivery_task, "instore": generate_instore_task, "payments": generate_payments_task}
ENV_IDS = {"delivery": "servicegym/Delivery-v0", "instore": "servicegym/InStore-v0", "payments": "servicegym/Payments-v0"}

# (domain, seed, difficulty, split) -> (digest of the task, digest of the task generated with
# violations=False), each the first 16 hex digits of sha256(task.model_dump_json())
TASK_DIGESTS = {
    ("delivery", 0, 0, "train"): ("14411b966113954f", "96b1e112000c13f6"),
    ("delivery", 1, 2, "train"): ("fe63c1755465b140", "22a2d2ed695e8b8b"),
    ("delivery", 7, 4, "dev"): ("b0deeb0e158dde55", "e1ff8d1c4bd6b5b1"),
    ("delivery", 123, 6, "test"): ("11c9834df60f9b0e", "ec940abea0f3e5ed"),
    ("delivery", 99_999, 3, "train"): ("307dbf573c5d8553", "caed7e859d270d7c"),
    ("delivery", 5, 1, "test"): ("619c06681bf2a308", "550c97f6ad55a08d"),
    ("instore", 0, 0, "train"): ("230710ee76d24788", "f917928623267e20"),
    ("instore", 1, 2, "train"): ("2efb23b24fe8432b", "d0ba8fc69f8c3eb1"),
    ("instore", 7, 4, "dev"): ("d77f29a7e317792a", "c1ea56ef87aa38f0"),
    ("instore", 123, 6, "test"): ("6cb1675101994efe", "3cacd856a3935f16"),
    ("instore", 99_999, 3, "train"): ("6737b82b7716d949", "676fb6f9b1fa792e"),
    ("instore", 5, 1, "test"): ("966cdb2759e32c38", "0b7641c20379814e"),
    ("payments", 0, 0, "train"): ("1078a18a5c3e36de", "bb37b61e0cb3f220"),
    ("payments", 1, 2, "train"): ("a1641eb40a4ba704", "de7522b01c2c4209"),
    ("payments", 7, 4, "dev"): ("cf68c840cfecdc1f", "136783f1b0f5e17a"),
    ("payments", 123, 6, "test"): ("0bf846fff1ab0bbf", "32bf82276ed5aa57"),
    ("payments", 99_999, 3, "train"): ("0337fce864b5555a", "0c632521b6496ca7"),
    ("payments", 5, 1, "test"): ("c1fd49e504d229f4", "00f843dbffaebf95"),
}

# (domain, seed, difficulty, split) -> digest of the env's initial world for the task (generated
# with violations=False), the first 16 hex digits of sha256 of its ``state_dict()`` as JSON in
# table and row order (Payments': its own records, then the background, in the order tools list them)
WORLD_DIGESTS = {
    ("delivery", 0, 0, "train"): "69d1c416938e40e0",
    ("delivery", 1, 2, "train"): "6d50cd57cdb1cd7f",
    ("delivery", 7, 4, "dev"): "a55dd349d895adf2",
    ("delivery", 123, 6, "test"): "a35ba11949e6d209",
    ("instore", 0, 0, "train"): "e60a795ed823f5cc",
    ("instore", 1, 2, "train"): "dc3afcd564688f18",
    ("instore", 7, 4, "dev"): "f1d38be626f7e38b",
    ("instore", 123, 6, "test"): "3c3e5fecebce82c8",
    ("payments", 0, 0, "train"): "858b90f7d2e3721c",
    ("payments", 1, 2, "train"): "dfb097ccd89d09d1",
    ("payments", 7, 4, "dev"): "88da2c9980dc655c",
    ("payments", 123, 6, "test"): "52d5e9cb2be80f6a",
}


def sha16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("key", sorted(TASK_DIGESTS), ids=lambda k: "-".join(map(str, k)))
def test_generated_task_is_the_one_generated_before(key: tuple) -> None:
    domain, seed, difficulty, split = key
    gen = GENERATORS[domain]
    full = gen(seed, difficulty, split)
    lean = gen(seed, difficulty, split, violations=False)
    assert (sha16(full.model_dump_json()), sha16(lean.model_dump_json())) == TASK_DIGESTS[key]


@pytest.mark.parametrize("domain", sorted(GENERATORS))
def test_skipping_violations_changes_nothing_else(domain: str) -> None:
    """``violations=False`` (what an env's reset asks for) gives the very task, less the
    checker-validation trajectories: the skipped work draws nothing from the task's stream."""
    gen = GENERATORS[domain]
    for seed in range(20):
        difficulty = seed % 7 if domain != "payments" else seed % 5
        full = gen(seed, difficulty, "train")
        lean = gen(seed, difficulty, "train", violations=False)
        assert full.violations and not lean.violations
        assert lean.model_dump() == {**full.model_dump(), "violations": {}}


@pytest.mark.parametrize("key", sorted(WORLD_DIGESTS), ids=lambda k: "-".join(map(str, k)))
def test_initial_world_is_the_one_built_before(key: tuple) -> None:
    domain, seed, difficulty, split = key
    env = gym.make(ENV_IDS[domain])
    world = env.unwrapped.build_world(GENERATORS[domain](seed, difficulty, split, violations=False))
    text = json.dumps(world.state_dict(), separators=(",", ":"))
    assert sha16(text) == WORLD_DIGESTS[key]
    env.close()


def _documents_by_setdefault(own: dict[str, Document], now_text: str, kb_seed: int) -> dict[str, Document]:
    """What the documents table was built as before: the task's own documents, then each procedure
    and each background document of a scope the task does not pin, first of an id kept."""
    docs = dict(own)
    pinned = {(d.product, d.region, d.tier, d.currency) for d in own.values()}
    for d in procedure_documents(now_text) + background_documents(kb_seed, pinned):
        docs.setdefault(d.id, d)
    return docs


def test_payments_documents_table_is_the_setdefault_merge() -> None:
    """The documents table merged from the per-variant base (dict merges, then the pinned scopes'
    background documents deleted) holds the same documents, the same objects, in the same order as
    adding them one by one; every knowledge-base variant is met."""
    variants = set()
    for seed in range(40):
        spec = generate_payments_task(seed, seed % 5, "train", violations=False).world
        world = build_payments_world(spec)
        own = {r["id"]: Document.model_validate(r) for r in spec["tables"]["documents"]}
        assert own, "every task pins the merchant's own policies"
        expected = _documents_by_setdefault(own, spec["now"], spec["kb_seed"])
        got = _with_background_documents(own, spec["now"], spec["kb_seed"], None)
        assert list(got) == list(expected)
        assert all(got[k] is expected[k] or (k in own and got[k] == expected[k]) for k in expected)
        assert list(world.table("documents").rows) == list(expected)
        # the pinned scopes keep only the task's own documents
        pinned = {(d.product, d.region, d.tier, d.currency) for d in own.values()}
        assert all(d.id in own for d in got.values() if (d.product, d.region, d.tier, d.currency) in pinned)
        variants.add(spec["kb_seed"] % KB_VARIANTS)
    assert len(variants) == KB_VARIANTS


def test_payments_world_of_a_spec_without_documents_holds_the_whole_knowledge_base() -> None:
    """Nothing pinned: the procedures and every background document, and the world's own copy
    (a change to one world's documents reaches no other world)."""
    spec = generate_payments_task(3, 2, "train", violations=False).world
    bare = {**spec, "tables": {k: v for k, v in spec["tables"].items() if k != "documents"}}
    a, b = build_payments_world(bare), build_payments_world(bare)
    expected = _documents_by_setdefault({}, spec["now"], spec["kb_seed"])
    assert list(a.table("documents").rows) == list(expected)
    doc = next(iter(a.table("documents")))
    a.table("documents").delete(doc.id)
    assert doc.id not in a.table("documents") and doc.id in b.table("documents")
    assert list(build_payments_world(bare).table("documents").rows) == list(expected)
