"""Shared fixtures: a small hand-written delivery world and a task built on it.

The world has four stores (one with opening hours that exclude the task's "now", one with
limited stock, one far away), twelve products, two addresses of the user, one unpaid and one
paid pre-existing order. The task's golden route orders two beef noodle soups home and pays.
Env tests run on it without the task generator.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from servicegym.envs.tasks import Task
from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.scripted_user import HiddenFact, UserScript
from servicegym.world_state.core import haversine_m
from servicegym.world_state.delivery import DeliveryWorld, build_delivery_world, delivery_minutes
from servicegym.world_state.tools import Toolkit

# property tests take their example counts from a profile: HYPOTHESIS_PROFILE=deep for a long hunt
settings.register_profile(
    "servicegym", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.register_profile("deep", parent=settings.get_profile("servicegym"), max_examples=3000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "servicegym"))

NOW = "2025-06-21 11:20:00"
USER_ID = "U000001"
TASK_KEY = "T1"
HOME = "No. 28 Fengning Road, Wuhua District, Kunming"
WORK = "Yunnan University Affiliated Hospital, 157 Xichang Road, Kunming"
HOME_LOC = {"address": HOME, "longitude": 102.7100, "latitude": 25.0500}
WORK_LOC = {"address": WORK, "longitude": 102.7300, "latitude": 25.0400}

UNPAID_ORDER = "ORD-UNPAID-1"
PAID_ORDER = "ORD-PAID-1"
FIRST_NEW_ORDER = f"{TASK_KEY}D01"  # the id the first order created in an episode gets

OPEN_STORE = "S001"  # no opening hours: always open
NIGHT_STORE = "S002"  # open 17:00-02:00, closed at NOW
STOCK_STORE = "S003"  # limited stock
FAR_STORE = "S004"  # about 10 km from home
BEEF_SOUP = "P001"  # S001, mild/medium spicy/extra spicy
VEG_SOUP = "P002"  # S001
LAMB_SKEWERS = "P004"  # S002
QUINOA_SALAD = "P007"  # S003, 2 left
AVOCADO_TOAST = "P008"  # S003, sold out
PORK_DUMPLINGS = "P010"  # S004


def _store(store_id: str, name: str, score: float, lon: float, lat: float, tags: list[str], **hours: str) -> dict:
    return {
        "store_id": store_id,
        "name": name,
        "score": score,
        "location": {"address": f"{name}, {store_id} Street, Kunming", "longitude": lon, "latitude": lat},
        "tags": tags,
        **hours,
    }


STORES = [
    _store(OPEN_STORE, "Sunny Noodle House", 4.7, 102.7120, 25.0510, ["noodles", "Chinese", "soup"]),
    _store(NIGHT_STORE, "Night Owl Grill", 4.3, 102.7150, 25.0480, ["barbecue", "night snack"],
           open_time="17:00", close_time="02:00"),
    _store(STOCK_STORE, "Green Bowl Salads", 4.8, 102.7290, 25.0410, ["salad", "healthy", "vegetarian"]),
    _store(FAR_STORE, "Golden Dumpling Palace", 4.1, 102.8000, 25.1000, ["dumplings", "Chinese"]),
]
_STORE_NAMES = {s["store_id"]: s["name"] for s in STORES}


def _product(pid: str, store_id: str, name: str, price: float, tags: list[str], attributes=(), quantity=None) -> dict:
    row = {
        "product_id": pid,
        "name": name,
        "store_id": store_id,
        "store_name": _STORE_NAMES[store_id],
        "price": price,
        "tags": tags,
        "attributes": list(attributes),
    }
    if quantity is not None:
        row["quantity"] = quantity
    return row


PRODUCTS = [
    _product(BEEF_SOUP, OPEN_STORE, "Beef Noodle Soup", 28.0, ["beef", "noodles", "soup"],
             ["mild", "medium spicy", "extra spicy"]),
    _product(VEG_SOUP, OPEN_STORE, "Vegetable Noodle Soup", 22.0, ["vegetarian", "noodles", "soup"]),
    _product("P003", OPEN_STORE, "Fried Pork Dumplings", 18.0, ["fried", "pork"]),
    _product(LAMB_SKEWERS, NIGHT_STORE, "Lamb Skewers", 6.0, ["lamb", "barbecue"]),
    _product("P005", NIGHT_STORE, "Grilled Chicken Wings", 15.0, ["chicken", "barbecue"]),
    _product("P006", NIGHT_STORE, "Grilled Eggplant", 12.0, ["vegetarian", "barbecue"]),
    _product(QUINOA_SALAD, STOCK_STORE, "Quinoa Salad", 32.0, ["vegetarian", "salad"], quantity=2),
    _product(AVOCADO_TOAST, STOCK_STORE, "Avocado Toast", 26.0, ["vegetarian"], quantity=0),
    _product("P009", STOCK_STORE, "Fruit Cup", 15.0, ["fruit", "dessert"]),
    _product(PORK_DUMPLINGS, FAR_STORE, "Pork Dumplings", 24.0, ["pork", "dumplings"]),
    _product("P011", FAR_STORE, "Shrimp Dumplings", 30.0, ["seafood", "dumplings"]),
    _product("P012", FAR_STORE, "Hot and Sour Soup", 12.0, ["soup", "spicy"]),
]
_PRODUCTS = {p["product_id"]: p for p in PRODUCTS}


def _order(order_id: str, store_id: str, lines: list[tuple[str, int]], loc: dict, dispatch: str, status: str) -> dict:
    store = next(s for s in STORES if s["store_id"] == store_id)
    metres = haversine_m(loc["longitude"], loc["latitude"], store["location"]["longitude"], store["location"]["latitude"])
    minutes = delivery_minutes(metres)
    products = [
        {
            "product_id": pid,
            "name": _PRODUCTS[pid]["name"],
            "store_id": store_id,
            "store_name": store["name"],
            "price": _PRODUCTS[pid]["price"],
            "quantity": n,
            "tags": _PRODUCTS[pid]["tags"],
        }
        for pid, n in lines
    ]
    hh, mm = dispatch.split(" ")[1].split(":")[:2]
    total_min = int(hh) * 60 + int(mm) + int(minutes)
    delivery = f"{dispatch.split(' ')[0]} {total_min // 60:02d}:{total_min % 60:02d}:00"
    return {
        "order_id": order_id,
        "order_type": "delivery",
        "user_id": USER_ID,
        "store_id": store_id,
        "location": loc,
        "dispatch_time": dispatch,
        "shipping_time": minutes,
        "delivery_time": delivery,
        "total_price": round(sum(_PRODUCTS[p]["price"] * n for p, n in lines), 2),
        "create_time": "2025-06-21 10:05:00",
        "update_time": "2025-06-21 10:05:00",
        "status": status,
        "products": products,
    }


def make_delivery_spec() -> dict[str, Any]:
    """A fresh copy of the hand-written world spec (``build_delivery_world``'s input)."""
    spec = {
        "time": NOW,
        "user_id": USER_ID,
        "task_key": TASK_KEY,
        "language": "en",
        "locations": [HOME_LOC, WORK_LOC],
        "weather": [
            {"id": "W1", "city": "Kunming City", "category": "rainy", "datetime": "2025-06-21",
             "temperature": [18.0, 24.0], "humidity": 84.0},
            {"id": "W2", "city": "Kunming City", "category": "cloudy", "datetime": "2025-06-22",
             "temperature": [17.0, 25.0]},
        ],
        "orders": [
            _order(UNPAID_ORDER, FAR_STORE, [(PORK_DUMPLINGS, 1)], WORK_LOC, "2025-06-21 12:00:00", "unpaid"),
            _order(PAID_ORDER, OPEN_STORE, [(VEG_SOUP, 2)], HOME_LOC, "2025-06-21 10:10:00", "paid"),
        ],
        "stores": STORES,
        "products": PRODUCTS,
        "user_profile": {"user id": USER_ID, "home address": HOME, "work address": WORK,
                         "dietary restrictions": "no seafood"},
        "user_historical_behaviors": {"user id": USER_ID, "lunch": {"frequently purchased categories": ["noodles"]}},
    }
    return copy.deepcopy(spec)


def call(name: str, **arguments: Any) -> str:
    """A ``<tool_call>`` action string."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"


def create_args(**overrides: Any) -> dict[str, Any]:
    """Well-formed arguments of ``create_delivery_order`` (two beef soups home, now)."""
    args = {
        "user_id": USER_ID,
        "store_id": OPEN_STORE,
        "product_ids": [BEEF_SOUP],
        "product_cnts": [2],
        "address": HOME,
        "dispatch_time": NOW,
        "attributes": ["mild"],
    }
    args.update(overrides)
    return args


GOLDEN_ACTIONS = [
    call("delivery_product_search_recommend", keywords=["beef noodle soup"]),
    "I found Beef Noodle Soup at Sunny Noodle House (28.0 each, about 230 m from your home). "
    "Shall I order 2 portions, mild, delivered to your home now?",
    call("create_delivery_order", **create_args()),
    call("pay_delivery_order", order_id=FIRST_NEW_ORDER),
    f"Your order {FIRST_NEW_ORDER} has been placed and paid; it will arrive in about 27 minutes.",
]


def make_delivery_task(task_id: str = "handmade/beef-soup") -> Task:
    return Task(
        task_id=task_id,
        domain="delivery",
        source="file",
        language="en",
        difficulty=1,
        world=make_delivery_spec(),
        user=UserScript(
            language="en",
            style="polite",
            opening="Hi, I'd like some beef noodle soup delivered home for lunch, please.",
            facts=[HiddenFact(topic="party_size", keywords=["how many"], answer="It's for two people.")],
        ),
        rubric=[
            RubricItem(name="one_order", kind="order_count", params={"count": 1}),
            RubricItem(name="dish", kind="dish", params={"product_ids": [BEEF_SOUP]}),
            RubricItem(name="two_portions", kind="quantity", params={"product_ids": [BEEF_SOUP], "count": 2}),
            RubricItem(name="home", kind="address", params={"address": HOME}),
            RubricItem(name="nearby", kind="store_distance", params={"max_m": 3000}),
            RubricItem(name="by_noon", kind="deadline", params={"by": "2025-06-21 12:00:00"}),
            RubricItem(name="budget", kind="budget", params={"max_total": 60}),
            RubricItem(name="paid", kind="paid", params={}),
            RubricItem(name="others_untouched", kind="untouched", params={"order_ids": [UNPAID_ORDER, PAID_ORDER]}),
            RubricItem(name="logged", kind="store_rating", params={"min_score": 4.5}, weight=0.0),
        ],
        golden_actions=GOLDEN_ACTIONS,
    )


@pytest.fixture(scope="session")
def delivery_task() -> Task:
    """The shared handmade task (treat as read-only; its initial world is cached on it)."""
    return make_delivery_task()


@pytest.fixture(scope="session")
def initial_world() -> DeliveryWorld:
    """The initial world of the handmade spec (read-only: copy it before changing anything)."""
    return build_delivery_world(make_delivery_spec())


@pytest.fixture
def world(initial_world: DeliveryWorld) -> DeliveryWorld:
    return initial_world.copy()


@pytest.fixture(scope="session")
def toolkit() -> Toolkit:
    from servicegym.world_state.delivery import TOOLS

    return Toolkit(TOOLS, check_postconditions=True)


def make_env(task: Task | None = None, **kwargs: Any):
    """A ``DeliveryEnv`` over the handmade task (unwrapped, so no gym wrappers get in the way)."""
    from servicegym.envs.environments.delivery import DeliveryEnv

    return DeliveryEnv(tasks=[task or make_delivery_task()], **kwargs)


# ----- running in parallel (pytest-xdist: ``addopts`` in pyproject.toml runs ``-n 2 --dist loadgroup``) -----
# Scheduling groups, read from the node ids by the controller (with pytest 9.2, xdist 3.8's
# ``xdist_group`` markers no longer reach the scheduler: it renames ``item._nodeid``, which
# ``item.nodeid`` stopped reading). A group's tests run one after another on one worker.
# Tests that start a local Ray cluster: two ``ray.init`` clusters at once on a small machine
# contend for ports, /tmp/ray and cores.
_RAY_TESTS = (
    "tests/envs/test_ray_backend.py::",
    "tests/envs/test_rollout_workers.py::test_ray_",
    "tests/test_hardening_collect.py::",
    "tests/test_docs.py::test_tutorial_block_runs_as_written[ray-",
)
# Modules whose module-scoped fixtures take seconds to build (the bench's run, the docs site, a real
# VitaBench env, the tiny TRL model): kept on one worker and contiguous, so each is built once.
_COSTLY_MODULES = (
    "tests/test_bench_envs.py",
    "tests/test_docs.py",
    "tests/envs/test_instore.py",
    "tests/envs/test_vitabench.py",
    "tests/envs/test_trl.py",
)


def xdist_scope(nodeid: str) -> str:
    """The scheduling unit of a test: its group, or the test itself."""
    if "@" in nodeid:  # an ``xdist_group`` marker, where xdist's renaming works
        return nodeid.rpartition("@")[2]
    if nodeid.startswith(_RAY_TESTS):
        return "ray"
    path = nodeid.partition("::")[0]
    return path if path in _COSTLY_MODULES else nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class GroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return GroupScheduling(config, log)


@contextlib.contextmanager
def one_browser_install_at_a_time() -> Iterator[None]:
    """Held around the browser fixtures' ``apt-get install``: two xdist workers would otherwise run
    it at once, and the one that loses dpkg's lock would skip its browser tests."""
    import fcntl

    with open(os.path.join(tempfile.gettempdir(), "servicegym-browser-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
