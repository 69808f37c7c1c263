"""VitaBench task files carry their release, and their worlds' tools follow it (see README,
"VitaBench files"): the release is told apart by the delivery products' quantities, searches
return every catalogue entry ranked, up to the release's cap. On the real files (skipped when
absent) every exact-name search finds its entry at the top, and the median number of results per
search is printed beside what servicegym's own rules give on the same worlds.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
from pathlib import Path

import pytest

from servicegym.envs.tasks import load_task_file
from servicegym.envs.tasks.vitabench import convert_vitabench_file
from servicegym.world_state.core import History
from servicegym.world_state.delivery import TOOLS as DELIVERY_TOOLS
from servicegym.world_state.delivery import build_delivery_world
from servicegym.world_state.instore import TOOLS as INSTORE_TOOLS
from servicegym.world_state.instore import build_instore_world
from servicegym.world_state.life.tools import SEARCH_CAPS
from servicegym.world_state.tools import Toolkit
from tests.envs.test_vitabench import mini_task


def _data_dir() -> Path:
    override = os.environ.get("SERVICEGYM_VITABENCH_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "vitabench"


DATA_DIR = _data_dir()


def _without_quantities(task: dict) -> dict:
    task = copy.deepcopy(task)
    for store in task["environment"]["stores"].values():
        for p in store["products"]:
            p.pop("quantity", None)
    return task


@pytest.mark.parametrize(("raw", "release"), [(mini_task(), "2026"), (_without_quantities(mini_task()), "2025-11")])
def test_release_is_told_apart_by_delivery_quantities(tmp_path: Path, raw: dict, release: str) -> None:
    task = convert_vitabench_file([raw], tmp_path / "tasks.json", "delivery")[0]
    assert task.world["vitabench_release"] == release
    world = build_delivery_world(task.world)
    assert world.extra["vitabench_release"] == release
    # every store of the task comes back from a search, the best match first
    r = Toolkit(DELIVERY_TOOLS).call(world, History(), "delivery_store_search_recommend", {"keywords": ["Tea Corner"]})
    stores = [s["store_id"] for s in json.loads(r.content)]
    assert stores[0] == "S2" and sorted(stores) == sorted(world.table("stores").rows)


# ----- the real files ---------------------------------------------------------------------------
REAL = [("delivery/tasks_en.json", "delivery"), ("delivery/tasks.json", "delivery"), ("instore/tasks_en.json", "instore")]
SEARCHES = {
    "delivery": (build_delivery_world, DELIVERY_TOOLS, [
        ("delivery_store_search_recommend", "stores", "name", lambda x: x["store_id"], lambda r: r.key),
        ("delivery_product_search_recommend", "products", "name", lambda x: x["product_id"], lambda r: r.key),
    ]),
    "instore": (build_instore_world, INSTORE_TOOLS, [
        ("instore_shop_search_recommend", "shops", "shop_name", lambda x: x["shop_id"], lambda r: r.key),
        ("instore_product_search_recommend", "shop_products", "name", lambda x: f"{x['shop_id']}/{x['product_id']}",
         lambda r: r.key),
    ]),
}


@pytest.mark.parametrize(("name", "domain"), REAL, ids=[n for n, _ in REAL])
def test_real_exact_name_searches(name: str, domain: str) -> None:
    path = DATA_DIR / name
    if not path.exists():
        pytest.skip(f"VitaBench data not found at {path}")
    build, tools, searches = SEARCHES[domain]
    kit = Toolkit(tools)
    counts: dict[str, tuple[list[int], list[int]]] = {tool: ([], []) for tool, *_ in searches}
    for task in load_task_file(path, domain):
        release = task.world["vitabench_release"]
        assert release == "2026"  # the files here are the 2026 release (products carry quantity 9999)
        worlds = (build({k: v for k, v in task.world.items() if k != "vitabench_release"}), build(task.world))
        for tool, table, field, hit_id, row_id in searches:
            rows = list(worlds[1].table(table))
            for row in rows:
                for k, world in enumerate(worlds):
                    r = kit.call(world, History(), tool, {"keywords": [getattr(row, field)]})
                    assert r.outcome == "executed", r.content
                    hits = json.loads(r.content)
                    counts[tool][k].append(len(hits))
                    if k == 1:
                        # VitaBench: every entry, up to the cap; the named one among the best matches
                        assert len(hits) == min(len(rows), SEARCH_CAPS[release][domain])
                        best = hits[0]["relevance"]
                        assert row_id(row) in [hit_id(h) for h in hits if h["relevance"] == best]
    for tool, (before, after) in counts.items():
        print(f"{name} {tool}: median results per exact-name search {statistics.median(before)} with "
              f"servicegym's rules, {statistics.median(after)} with VitaBench's ({len(after)} searches)")
