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

import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gridlib import run_grid  # noqa: E402

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
    return run_grid(argv, env_id=ENV_ID, description=__doc__.splitlines()[0], out_default="runs/bizbench", units="tasks",
                    conditions=CONDITIONS, policies=POLICIES, stats=lambda records, tasks: cell_stats(records),
                    line=lambda s: f"strict {s['strict']:.3f}  G {s['G']:.3f}  P {s['P']:.3f}  F {s['F']:.3f}", table=table)


if __name__ == "__main__":
    raise SystemExit(main())
