"""Benchmark of scoring a finished VitaBench-file episode, per task, in both scoring modes.

For every task of each VitaBench task file (``../shared/data/vitabench`` by default) the golden
route is played through the env, then the env's scoring of the final state (``env.score``: every
rubric item, both modes' verdicts, the unrequested writes) is timed ``--reps`` times; the table
gives the median and worst per-task medians, how many tasks take over 1 ms, and the ratio to the
fixed primitive (``benchlib.primitive_us``, copied verbatim from ``shared/tools/primitive.py``) and to
a read step through ``env.step`` measured in the same run (the first read call of the task's
golden route), and to a peer measured on the same final state: the end-state check of tau2-bench
and VitaBench's public code, which dumps the final database, JSON-encodes it and hashes it to
compare with the gold's (``end_state_hash``; the replay of the gold actions it also needs is not
counted, so the peer is favoured). Goal (issue 24): at most 1 ms median and
5 ms worst per task. Prints; asserts nothing.

    python scripts/bench_scoring.py                 # a few minutes
    python scripts/bench_scoring.py --quick         # 10 tasks a file
    python scripts/bench_scoring.py --data DIR --reps 20
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
from benchlib import primitive_us  # noqa: E402  the fixed primitive (../shared/tools/primitive.py, verbatim)
from fidelity_report import default_data_dir, task_files  # noqa: E402  the same files, found the same way

import servicegym  # noqa: E402,F401  registers the ids
from servicegym.rewards.scoring_modes import item_report  # noqa: E402


# ----- the benchmark ------------------------------------------------------------------------------
def end_state_hash(world) -> str:
    """The peer: tau2-bench's / VitaBench's end-state check of one side (dump, encode, hash)."""
    return hashlib.sha256(json.dumps(world.state_dict(), sort_keys=True, default=str).encode()).hexdigest()


def _score_episode(u, task) -> None:
    """What the env does at an episode's end: the rubric in both modes, then the item report."""
    view = u.episode_view()
    _success, score = u.score(task, view)
    item_report(task, score, view, False, u.scoring)


def _is_read(u, action: str) -> bool:
    try:
        call = json.loads(action)
        return u.toolkit.resolve(call["name"]).kind == "read"
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def median_of(fn, reps: int) -> float:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def bench_file(path: Path, env_id: str, reps: int, limit: int | None) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = gym.make(env_id, tasks=str(path))
    u = env.unwrapped
    per_task: list[float] = []
    hashes: list[float] = []
    reads: list[float] = []
    for tid in list(u.task_ids())[:limit]:
        env.reset(seed=0, options={"task_id": tid})
        task = u.task
        read = next((a for a in task.golden_actions if _is_read(u, a)), None)
        if read is not None:
            # a read step through env.step, timed on a copy of the episode's start (the first call of
            # the golden route that only reads)
            for _ in range(3):
                env.reset(seed=0, options={"task_id": tid})
                t = time.perf_counter()
                env.step(read)
                reads.append(time.perf_counter() - t)
            env.reset(seed=0, options={"task_id": tid})
        for action in task.golden_actions:
            _obs, _r, term, trunc, _info = env.step(action)
            if term or trunc:
                break
        per_task.append(median_of(lambda task=task: _score_episode(u, task), reps))
        hashes.append(median_of(lambda: end_state_hash(u.world), reps))
    env.close()
    return {"tasks": per_task, "hash": statistics.median(hashes),
            "read": statistics.median(reads) if reads else float("nan")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--reps", type=int, default=9, help="timed scorings per task (the median is kept)")
    ap.add_argument("--quick", action="store_true", help="the first 10 tasks of each file")
    ap.add_argument("--limit", type=int, default=None, help="the first N tasks of each file")
    args = ap.parse_args(argv)
    if args.reps < 1 or (args.limit is not None and args.limit < 1):
        print("--reps and --limit must be at least 1", file=sys.stderr)
        return 2
    if not args.data.is_dir():
        print(f"no VitaBench data at {args.data} (pass --data)", file=sys.stderr)
        return 2
    files = task_files(args.data)
    if not files:
        print(f"no VitaBench task files under {args.data}", file=sys.stderr)
        return 2
    prim = primitive_us() * 1e-6
    print(f"primitive (shared/tools/primitive.py): {prim * 1e6:.2f} us")
    head = ["file", "tasks", "median score", "worst", "> 1 ms", "median / primitive", "median / read step",
            "median / end-state hash", "read step / primitive"]
    rows = []
    for path, env_id in files:
        r = bench_file(path, env_id, args.reps, args.limit or (10 if args.quick else None))
        ts = r["tasks"]
        med, worst = statistics.median(ts), max(ts)
        rows.append([str(path.relative_to(args.data)), str(len(ts)), f"{med * 1e3:.3f} ms", f"{worst * 1e3:.3f} ms",
                     str(sum(t > 1e-3 for t in ts)), f"{med / prim:.0f}x", f"{med / r['read']:.1f}x",
                     f"{med / r['hash']:.2f}x", f"{r['read'] / prim:.1f}x"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print("goal: median <= 1 ms and worst <= 5 ms per task")
    return 0


if __name__ == "__main__":
    sys.exit(main())
