"""BizBench's experiments on Payments-v0 as one grid: conditions x policies, one table.

Conditions (env options of ``servicegym/Payments-v0``): ``uncapped`` (the default env), ``cap1.2``
and ``cap2`` (``call_cap``: the episode ends when the agent's tool calls reach 1.2x / 2x the golden
trace's), ``full`` (``disclosure="full"``: the merchant states every private fact in its opening)
and ``gold`` (``gold_documents=True``: the governing documents come with the first observation).
Policies: ``oracle`` (the golden actions), ``random`` (well-formed random calls) and ``loopback``
(the LLM agent policy against ``simulators/loopback.LoopbackServer`` replaying the golden routes:
the whole LLM path with no model).

Every cell is one ``collect`` run on the test suite (or its first ``--limit`` tasks), written to
``OUT/<condition>/<policy>/rollouts.jsonl`` with a ``run.json`` beside it, so ``servicegym report``
reads any cell and compares several (their labels carry the env options):

    python scripts/bizbench_grid.py --limit 10 --out runs/bizbench
    servicegym report runs/bizbench/uncapped/oracle runs/bizbench/cap1.2/oracle --out runs/bizbench/cmp

The table: per cell, episodes, strict success (G and P and F), the means of G, P and F, and G minus
strict (how far outcome-only scoring overestimates), then how episodes ended.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.cli.compare import run_metadata, write_run_meta
from servicegym.envs.running.llm_policy import golden_replay_handler
from servicegym.envs.running.rollouts import collect, read_records
from servicegym.simulators.loopback import LoopbackServer

ENV_ID = "servicegym/Payments-v0"
CONDITIONS: dict[str, dict[str, Any]] = {
    "uncapped": {},
    "cap1.2": {"call_cap": 1.2},
    "cap2": {"call_cap": 2.0},
    "full": {"disclosure": "full"},
    "gold": {"gold_documents": True},
}
POLICIES = ("oracle", "random", "loopback")


def cell_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Strict success and the means of G, P, F over a cell's episodes (an errored one scores 0)."""
    n = len(records)

    def mean(key: str) -> float:
        return sum(float((r.get("score") or {}).get(key, 0.0)) for r in records if not r.get("error")) / n if n else 0.0

    strict = sum(bool(r.get("success")) and not r.get("error") for r in records) / n if n else 0.0
    ends = Counter(str(r.get("termination_reason") or "error") for r in records)
    return {"episodes": n, "strict": strict, "G": mean("goal"), "P": mean("process"), "F": mean("protection"),
            "ends": dict(sorted(ends.items()))}


def table(rows: list[tuple[str, str, dict[str, Any]]]) -> str:
    head = "| policy | condition | episodes | strict | G | P | F | G - strict | ended |"
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for policy, cond, s in rows:
        ends = ", ".join(f"{k} {v}" for k, v in s["ends"].items())
        lines.append(f"| {policy} | {cond} | {s['episodes']} | {s['strict']:.3f} | {s['G']:.3f} | {s['P']:.3f} | "
                     f"{s['F']:.3f} | {s['G'] - s['strict']:+.3f} | {ends} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs/bizbench", help="output directory (one subdirectory per cell)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N test tasks (0: all 50)")
    ap.add_argument("--trials", type=int, default=1, help="trials per task")
    ap.add_argument("--seed", type=int, default=0, help="base seed")
    ap.add_argument("--conditions", default=",".join(CONDITIONS), help=f"comma-separated, of {', '.join(CONDITIONS)}")
    ap.add_argument("--policies", default=",".join(POLICIES), help=f"comma-separated, of {', '.join(POLICIES)}")
    ap.add_argument("--concurrency", type=int, default=4, help="loopback episodes in flight at once")
    a = ap.parse_args(argv)
    conds = [c for c in a.conditions.split(",") if c]
    pols = [p for p in a.policies.split(",") if p]
    bad = [c for c in conds if c not in CONDITIONS] + [p for p in pols if p not in POLICIES]
    if bad or a.limit < 0 or a.trials < 1 or a.concurrency < 1:
        ap.error(f"unknown condition or policy {', '.join(bad)}" if bad else "--limit >= 0, --trials and --concurrency >= 1")
    probe = gym.make(ENV_ID, split="test").unwrapped
    ids = probe.task_ids("test")
    ids = ids[: a.limit] if a.limit else ids
    tasks = [probe.source.get(t) for t in ids]
    out = Path(a.out)
    rows: list[tuple[str, str, dict[str, Any]]] = []
    t0 = time.perf_counter()
    server = LoopbackServer(handler=golden_replay_handler(tasks, strict=False, known=f"{len(tasks)} Payments test tasks"),
                            record=False) if "loopback" in pols else None
    try:
        if server is not None:
            server.start()
        for policy in pols:
            for cond in conds:
                opts = CONDITIONS[cond]
                cell = out / cond / policy
                if policy == "loopback":
                    llm = {"base_url": server.base_url, "model": server.model}
                    kw: dict[str, Any] = {"policy": "llm", "policy_name": "loopback", "policy_kwargs": {"llm": llm},
                                          "concurrency": a.concurrency}
                else:
                    llm = None
                    kw = {"policy": policy}
                collect(ENV_ID, out=cell / "rollouts.jsonl", task_ids=ids, split="test", trials=a.trials, seed=a.seed,
                        env_kwargs=opts or None, resume=False, progress=False, **kw)
                write_run_meta(cell, run_metadata(env_id=ENV_ID, policy=kw.get("policy_name", policy), trials=a.trials,
                                                  seed=a.seed, split="test", tasks=len(ids), limit=a.limit,
                                                  env_options=opts))
                stats = cell_stats(list(read_records(cell / "rollouts.jsonl")))
                rows.append((policy, cond, stats))
                print(f"{policy:8s} {cond:8s} strict {stats['strict']:.3f}  G {stats['G']:.3f}  P {stats['P']:.3f}  "
                      f"F {stats['F']:.3f}", file=sys.stderr)
    finally:
        if server is not None:
            server.close()
    text = table(rows)
    print(f"{ENV_ID}, {len(ids)} test tasks x {a.trials} trial(s), seed {a.seed} ({time.perf_counter() - t0:.1f} s)\n")
    print(text)
    (out / "grid.md").write_text(text + "\n", encoding="utf-8")
    (out / "grid.json").write_text(json.dumps([{"policy": p, "condition": c, **s} for p, c, s in rows], indent=1) + "\n",
                                   encoding="utf-8")
    print(f"\nwrote {out / 'grid.md'}, {out / 'grid.json'} and one rollouts.jsonl + run.json per cell under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
