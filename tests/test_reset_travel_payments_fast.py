"""A reset to a new generated Travel or Payments task (issue 29) makes only what the episode reads
first: counted, not timed; and what it makes later is what the eager build makes.

* Travel: the catalogues' dated products (most rows of a task) are lazy tables (``core.LazyRows``):
  a reset makes no product entity; the first read of a table makes it once for the initial world
  and every episode copy of it; the tables then equal the eager build's, row for row.
* Payments: a table holding the task's own rows is merged with the shared background (hundreds of
  rows) on its first read, the documents too, and the background search index is built on the
  first search: a reset merges nothing and builds no index.
* Writes never leak: an episode's changes stay in its copy (copy-on-write), never in the initial
  world, another task's world or the shared background; a copy, a pickle or a deep copy of a world
  whose lazy tables are not made yet is equal to it.
* The travel generator indexes its products per place when first looked up (``SlotIndex``) and
  draws through ``TaskRandom``: both give exactly what the eager index and ``random.Random`` give.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
import servicegym.world_state.payments as payments_world
import servicegym.world_state.vouched as vouched
from servicegym.envs.environments.travel import PRODUCT_TABLES, build_lazy_travel_world
from servicegym.envs.tasks.generators import travel as travel_gen
from servicegym.envs.tasks.generators.common import TaskRandom
from servicegym.envs.tasks.generators.payments import generate_payments_task
from servicegym.world_state.core import LazyRows, Table
from servicegym.world_state.life.spec import build_life_world
from servicegym.world_state.payments import PAYMENTS_SCHEMA, build_payments_world
from servicegym.world_state.payments.knowledge import (
    background_documents,
    policy_document,
    policy_document_row,
    procedure_documents,
)
from servicegym.world_state.payments.platform import platform_records
from servicegym.world_state.payments.records import background_records
from servicegym.world_state.payments.world import CURRENCIES, KB_VARIANTS, REGIONS, TIERS
from servicegym.world_state.travel import TravelWorld

TRAVEL, PAYMENTS = "servicegym/Travel-v0", "servicegym/Payments-v0"


def _count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """Counts the calls of ``owner.name`` (the first argument of each is kept)."""
    calls: list[Any] = []
    original = getattr(owner, name)

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(a[0] if a else None)
        return original(*a, **k)

    monkeypatch.setattr(owner, name, counting)
    return calls


def _made(world: Any, name: str) -> bool:
    return world.tables[name].lazy is None


def _rows_as(a: Any, b: Any) -> None:
    """Two tables' rows: the same keys in the same order, entities equal field for field and type for type."""
    assert list(a.rows) == list(b.rows)
    for x, y in zip(a.rows.values(), b.rows.values()):
        assert type(x) is type(y) and x == y
        assert [(k, type(v), v) for k, v in x.__dict__.items()] == [(k, type(v), v) for k, v in y.__dict__.items()]
        assert x.__pydantic_fields_set__ == y.__pydantic_fields_set__


# ----- Travel ----------------------------------------------------------------------------------


def test_a_travel_reset_makes_no_product_and_the_first_read_makes_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count(monkeypatch, vouched, "vouched_rows")
    env = gym.make(TRAVEL)
    for seed in range(71_000, 71_004):  # fresh seeds: each reset generates a task and builds its world
        env.reset(seed=seed)
    u = env.unwrapped
    assert not [m for m in made if m.__name__ in ("HotelRoom", "FlightSeat", "TrainSeat", "AttractionTicket")]
    assert all(not _made(u.world, name) for name in PRODUCT_TABLES if u.task.world.get(name))
    n = len(u.world.table("hotel_rooms"))  # the first read makes the table, for the initial world too
    assert n == len(u.task.world["hotel_rooms"]) and _made(u.world, "hotel_rooms")
    assert [m.__name__ for m in made] == ["HotelRoom"]
    assert u._initial.table("hotel_rooms").rows is u.world.table("hotel_rooms").rows
    env.reset(seed=1, options={"task": u.task})  # the next episode of the task reads the made rows
    assert len(u.world.table("hotel_rooms")) == n and [m.__name__ for m in made] == ["HotelRoom"]


@pytest.mark.parametrize("seed", range(0, 60, 7))
def test_the_lazy_travel_world_is_the_eager_world(seed: int) -> None:
    task = travel_gen.generate_travel_task(seed, seed % 7, "train", violations=False)
    eager = build_life_world(TravelWorld, task.world, vouched=True)
    lazy = build_lazy_travel_world(task)
    assert list(lazy.tables) == list(eager.tables)
    assert any(not _made(lazy, name) for name in PRODUCT_TABLES)
    pickled = pickle.loads(pickle.dumps(lazy.copy()))  # a pickle of a copy makes its rows, equal
    deep = copy.deepcopy(lazy)
    for name in eager.tables:
        _rows_as(lazy.table(name), eager.table(name))
        _rows_as(pickled.table(name), eager.table(name))
        _rows_as(deep.table(name), eager.table(name))
    assert lazy.state_dict() == eager.state_dict() == pickled.state_dict()


def test_a_travel_episode_s_writes_stay_in_its_copy() -> None:
    env = gym.make(TRAVEL)
    env.reset(seed=3)
    u = env.unwrapped
    task = u.task
    eager = build_life_world(TravelWorld, task.world, vouched=True).state_dict()
    other = travel_gen.generate_travel_task(99, 3, "train", violations=False)
    other_world = build_lazy_travel_world(other)
    for action in task.golden_actions:  # books (takes stock), pays, cancels
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert info["success"]
    assert u.world.state_dict() != eager  # the episode changed its world...
    assert u._initial.state_dict() == eager  # ...never the initial one
    assert other_world.state_dict() == build_life_world(TravelWorld, other.world, vouched=True).state_dict()
    env.reset(seed=3, options={"task": task})
    assert u.world.state_dict() == eager


def test_a_lazy_table_behaves_as_a_made_one() -> None:
    task = travel_gen.generate_travel_task(5, 3, "train", violations=False)
    world = build_lazy_travel_world(task)
    eager = build_life_world(TravelWorld, task.world, vouched=True)
    first = next(iter(eager.table("flight_seats")))
    # a copy made before the first read: each reads the same rows, a write copies them first
    ep = world.copy()
    assert not _made(ep, "flight_seats") and not _made(world, "flight_seats")
    txn = ep.begin()
    ep.table("flight_seats").update(first.key, quantity=0)
    assert ep.table("flight_seats").rows is not world.table("flight_seats").rows
    ep.rollback(txn)  # a failed call leaves the world as it was
    _rows_as(ep.table("flight_seats"), eager.table("flight_seats"))
    ep.table("flight_seats").update(first.key, quantity=0)
    assert ep.table("flight_seats").require(first.key).quantity == 0
    assert world.table("flight_seats").require(first.key).quantity == first.quantity
    # a snapshot restored over a lazy table
    other = world.copy()
    snap = other.snapshot()
    other.table("hotel_rooms").delete(next(iter(other.table("hotel_rooms").rows)))
    other.restore(snap)
    _rows_as(other.table("hotel_rooms"), eager.table("hotel_rooms"))
    assert type(world.table("hotel_rooms")) is not Table  # this world has not read it yet
    _rows_as(world.table("hotel_rooms"), eager.table("hotel_rooms"))  # the rows made once, untouched
    assert type(world.table("hotel_rooms")) is Table  # read: a plain table again


def test_lazy_rows_are_made_once() -> None:
    calls: list[int] = []

    def build() -> dict[str, Any]:
        calls.append(1)
        return {}

    rows = LazyRows(build)
    assert rows.make() is rows.make() and calls == [1]


def test_the_slot_index_is_the_eager_index() -> None:
    for seed in range(12):
        b = travel_gen._Builder(seed, seed % 7, "train", 0, with_violations=False)
        try:
            b.build()
        except travel_gen.Retry:
            continue
        for table, place, kind in (("hotel_rooms", "hotel_id", "room_type"), ("flight_seats", "flight_id", "seat_type"),
                                   ("train_seats", "train_id", "seat_type")):
            eager = {(r[place], r[kind], r["date"]): (r["product_id"], r["price"]) for r in b.tables[table]}
            for key, want in eager.items():
                assert b.slot[key] == want
        with pytest.raises(KeyError):
            b.slot[("nowhere", "Economy", "2025-01-01")]


def test_task_random_draws_what_random_draws() -> None:
    rng = random.Random(7)
    for n in range(300):
        seed = f"s/{n}"
        a, b = random.Random(seed), TaskRandom(seed)
        for _ in range(20):
            lo = rng.randrange(-50, 50)
            width = rng.randrange(1, 3000)
            step = rng.randrange(1, 40)
            seq = list(range(rng.randrange(1, 30)))
            assert a.randint(lo, lo + width) == b.randint(lo, lo + width)
            assert a.randrange(lo, lo + width, step) == b.randrange(lo, lo + width, step)
            assert a.randrange(lo, lo + width) == b.randrange(lo, lo + width)
            assert a.randrange(width) == b.randrange(width)
            assert a.choice(seq) == b.choice(seq) and a.choice("abc") == b.choice("abc")
        assert a.getstate() == b.getstate()
    for n in range(300):
        seed = f"sample/{n}"
        a, b = random.Random(seed), TaskRandom(seed)
        for size in range(0, 26):
            for kind in (list, tuple, str):
                population = kind("abcdefghijklmnopqrstuvwxyz"[:size]) if kind is str else kind(range(size))
                k = rng.randrange(0, size + 1)
                assert a.sample(population, k) == b.sample(population, k)
        assert a.sample(range(30), 5) == b.sample(range(30), 5)
        assert a.getstate() == b.getstate()
    with pytest.raises(ValueError):
        TaskRandom(1).sample([1, 2], 3)
    rng2 = TaskRandom(1)
    for bad in (lambda: rng2.randint(3, 2), lambda: rng2.randrange(0), lambda: rng2.randrange(5, 5),
                lambda: rng2.randrange(0, 10, 0)):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(IndexError):
        rng2.choice([])
    assert TaskRandom(3).randrange(10, 0, -2) == random.Random(3).randrange(10, 0, -2)


# ----- Payments --------------------------------------------------------------------------------


def test_a_payments_reset_merges_nothing_and_builds_no_search_index(monkeypatch: pytest.MonkeyPatch) -> None:
    merged = _count(monkeypatch, payments_world, "_under")
    documents = _count(monkeypatch, payments_world, "_with_background_documents")
    indexes = _count(monkeypatch, payments_world, "background_index")
    env = gym.make(PAYMENTS)
    u = env.unwrapped
    for seed in range(72_000, 72_004):
        env.reset(seed=seed)
        # only the merchants (the system prompt names the task's merchant: a few dozen rows)
        assert [u.world.table("merchants").rows[k] for k in merged.pop()] and merged == []
        assert u.world.tables["payments"].lazy is not None and u.world.tables["ledger"].lazy is not None
    assert documents == [] and indexes == []
    assert u.step(json.dumps({"name": "read_document", "arguments": {"doc_id": "KB-P01"}}))[0]
    assert len(documents) == 1 and indexes == []  # a read by id makes the table, no index
    u.step(json.dumps({"name": "search_documents", "arguments": {"query": "refund window"}}))
    assert len(indexes) == 1
    env.reset(seed=0, options={"task": u.task})  # the next episode shares the made table and index
    u.step(json.dumps({"name": "search_documents", "arguments": {"query": "refund window"}}))
    assert len(documents) == 1 and len(indexes) == 1


def _reference_tables(task: Any) -> dict[str, dict[str, Any]]:
    """The world's tables as the straightforward merge makes them: the task's own rows, then each
    background row whose key they lack (``setdefault`` row by row), the documents likewise."""
    spec = task.world
    eager = build_payments_world(spec, vouched=True)  # its own rows, made (merged below by hand)
    own = {name: {r.key: r for r in eager.table(name) if r.key in {row.get("id") for row in rows}}
           for name, rows in spec["tables"].items()}
    variant = int(spec["kb_seed"]) % KB_VARIANTS
    background = background_records(variant, REGIONS, TIERS, CURRENCIES)
    platform = platform_records(variant, tuple(background["merchants"]))
    out = {name: dict(own.get(name, {})) for name in PAYMENTS_SCHEMA}
    for name, rows in [*background.items(), *platform.items()]:
        for k, r in rows.items():
            out[name].setdefault(k, r)
    docs = out["documents"]
    pinned = {(d.product, d.region, d.tier, d.currency) for d in docs.values()}
    for d in procedure_documents(spec["now"]) + background_documents(int(spec["kb_seed"]), pinned, eager.clock.now):
        docs.setdefault(d.id, d)
    return out


@pytest.mark.parametrize("seed", [1, 8, 23, 40])
def test_the_lazy_payments_world_is_the_merged_world(seed: int) -> None:
    task = generate_payments_task(seed, seed % 5, "train", violations=False)
    world = build_payments_world(task.world, vouched=True)
    lazy = [name for name, t in world.tables.items() if t.lazy is not None]
    assert "documents" in lazy and "payments" in lazy
    copied = copy.deepcopy(world.copy())  # (a payments world holds classes made at run time: no pickle)
    want = _reference_tables(task)
    for name, rows in want.items():
        assert list(world.table(name).rows) == list(rows), name
        assert all(a is b or a == b for a, b in zip(world.table(name).rows.values(), rows.values())), name
        assert list(copied.table(name).rows) == list(rows), name
    assert world.extra["ledger_seq"] == max((e.seq for e in world.table("ledger")), default=0)


def test_a_payments_episode_s_writes_never_reach_the_background() -> None:
    env = gym.make(PAYMENTS)
    env.reset(seed=11)
    u = env.unwrapped
    task = u.task
    variant = int(task.world["kb_seed"]) % KB_VARIANTS
    background = background_records(variant, REGIONS, TIERS, CURRENCIES)
    before = {name: dict(rows) for name, rows in background.items()}
    initial = u._initial.state_dict()
    for action in task.golden_actions:  # refunds, payouts, ledger entries, approvals
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    assert info["success"]
    assert u.world.state_dict()["tables"]["ledger"] != initial["tables"]["ledger"]
    assert u._initial.state_dict() == initial
    assert {name: dict(rows) for name, rows in background.items()} == before
    assert all(before[name] == rows for name, rows in background_records(variant, REGIONS, TIERS, CURRENCIES).items())
    fresh = build_payments_world(task.world, vouched=True)  # another world of the task: untouched
    assert fresh.state_dict() == initial
    env.reset(seed=11, options={"task": task})
    assert u.world.state_dict() == initial


@pytest.mark.parametrize("rules", [
    {"single_payout_limit": 300.0},
    {"refund_window_days": 30, "approval_threshold": 40.0},
    {"required_document": "bank_statement", "review_minutes": 10},
    {"kyb_required_documents": ["bank_statement", "id_document"], "reserve_floor": 20.0},
    {"kyb_required_documents": ("invoice",)},
])
def test_a_pinned_policy_row_is_the_document_s_dump(rules: dict[str, Any]) -> None:
    for sup in ("", "DOC-00001"):
        args = ("DOC-12345", "payouts", "EU", "plus", "EUR", 2, "2025-03-01 10:00:00", sup, rules)
        row, dump = policy_document_row(*args), policy_document(*args).model_dump(mode="json")
        assert list(row) == list(dump) and row == dump
        assert [type(v) for v in row.values()] == [type(v) for v in dump.values()]
        assert json.dumps(row) == json.dumps(dump)


def test_a_made_payments_env_builds_no_background_at_reset() -> None:
    env = gym.make(PAYMENTS)  # builds every variant's background records, once per process
    built = background_records.cache_info().misses, platform_records.cache_info().misses
    seen = set()
    for seed in range(73_000, 73_012):  # fresh tasks, of several knowledge-base variants
        env.reset(seed=seed)
        seen.add(int(env.unwrapped.task.world["kb_seed"]) % KB_VARIANTS)
    assert (background_records.cache_info().misses, platform_records.cache_info().misses) == built
    assert len(seen) > 1
