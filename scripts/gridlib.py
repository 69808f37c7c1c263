"""One grid of experiments (conditions x policies) over an env's test suite, shared by
``scripts/bizbench_grid.py`` and ``scripts/workspace_ablation.py``: the command line, one
``collect`` run per cell written to ``OUT/<condition>/<policy>/`` (``rollouts.jsonl`` and
``run.json``, which ``servicegym report`` reads), the loopback model replaying the golden routes
as the ``loopback`` policy, and the table (``grid.md``, ``grid.json``)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.cli.compare import run_metadata, write_run_meta
from servicegym.envs.running.llm_policy import golden_replay_handler
from servicegym.envs.running.rollouts import collect, read_records
from servicegym.simulators.loopback import LoopbackServer

Row = tuple[str, str, dict[str, Any]]


def run_grid(argv: list[str] | None, *, env_id: str, description: str, out_default: str, units: str,
             conditions: dict[str, dict[str, Any]], policies: tuple[str, ...],
             stats: Callable[[list[dict[str, Any]], list[Any]], dict[str, Any]],
             line: Callable[[dict[str, Any]], str], table: Callable[[list[Row]], str],
             policy_kwargs: Callable[[str], dict[str, Any]] = lambda policy: {"policy": policy}) -> int:
    """Parse ``argv``, run every (policy, condition) cell on the test suite, print and write the
    table. ``stats(records, tasks)`` summarises a cell, ``line(stats)`` is its progress line,
    ``policy_kwargs(policy)`` the ``collect`` arguments of a policy other than ``loopback``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=out_default, help="output directory (one subdirectory per cell)")
    ap.add_argument("--limit", type=int, default=0, help=f"only the first N test {units} (0: all)")
    ap.add_argument("--trials", type=int, default=1, help="trials per task")
    ap.add_argument("--seed", type=int, default=0, help="base seed")
    ap.add_argument("--conditions", default=",".join(conditions), help=f"comma-separated, of {', '.join(conditions)}")
    ap.add_argument("--policies", default=",".join(policies), help=f"comma-separated, of {', '.join(policies)}")
    ap.add_argument("--concurrency", type=int, default=4, help="loopback episodes in flight at once")
    a = ap.parse_args(argv)
    conds = [c for c in a.conditions.split(",") if c]
    pols = [p for p in a.policies.split(",") if p]
    bad = [c for c in conds if c not in conditions] + [p for p in pols if p not in policies]
    if bad or not conds or not pols or a.limit < 0 or a.trials < 1 or a.concurrency < 1:
        ap.error(f"unknown condition or policy {', '.join(bad)}" if bad else
                 "give a condition and a policy; --limit >= 0, --trials and --concurrency >= 1")
    probe = gym.make(env_id, split="test").unwrapped
    ids = probe.task_ids("test")
    ids = ids[: a.limit] if a.limit else ids
    tasks = [probe.source.get(t) for t in ids]
    out = Path(a.out)
    rows: list[Row] = []
    t0 = time.perf_counter()
    server = LoopbackServer(handler=golden_replay_handler(tasks, strict=False, known=f"{len(tasks)} test {units}"),
                            record=False) if "loopback" in pols else None
    try:
        if server is not None:
            server.start()
        for policy in pols:
            for cond in conds:
                opts = conditions[cond]
                cell = out / cond / policy
                if policy == "loopback":
                    llm = {"base_url": server.base_url, "model": server.model}
                    kw: dict[str, Any] = {"policy": "llm", "policy_name": "loopback", "policy_kwargs": {"llm": llm},
                                          "concurrency": a.concurrency}
                else:
                    kw = policy_kwargs(policy)
                collect(env_id, out=cell / "rollouts.jsonl", task_ids=ids, split="test", trials=a.trials, seed=a.seed,
                        env_kwargs=opts or None, resume=False, progress=False, **kw)
                write_run_meta(cell, run_metadata(env_id=env_id, policy=kw.get("policy_name", policy), trials=a.trials,
                                                  seed=a.seed, split="test", tasks=len(ids), limit=a.limit,
                                                  env_options=opts))
                s = stats(list(read_records(cell / "rollouts.jsonl")), tasks)
                rows.append((policy, cond, s))
                print(f"{policy:8s} {cond:18s} {line(s)}", file=sys.stderr)
    finally:
        if server is not None:
            server.close()
    text = table(rows)
    print(f"{env_id}, {len(ids)} test {units} x {a.trials} trial(s), seed {a.seed} ({time.perf_counter() - t0:.1f} s)\n")
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid.md").write_text(text + "\n", encoding="utf-8")
    (out / "grid.json").write_text(json.dumps([{"policy": p, "condition": c, **s} for p, c, s in rows], indent=1) + "\n",
                                   encoding="utf-8")
    print(f"\nwrote {out / 'grid.md'}, {out / 'grid.json'} and one rollouts.jsonl + run.json per cell under {out}")
    return 0
