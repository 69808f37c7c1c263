"""Benchmark Workspace-v0: reset to session 1, reset to session k with golden history (first time,
when the history is replayed, and cached), their ratio (target <= 5x), step and session-end times,
each also as a ratio to the one primitive (``scripts/benchlib.py``): that of a ``read_file`` of the
golden route, measured in turn with the same read's step. Prints figures; asserts nothing.

    python scripts/bench_workspace.py [--quick] [--session 15] [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import PRIMITIVE_NOTE, paired, primitive_of  # noqa: E402

from servicegym.envs.environments.workspace import WorkspaceEnv  # noqa: E402
from servicegym.envs.tasks.suites import workspace_suite  # noqa: E402

TARGET_RATIO = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--session", type=int, default=15, help="session k to reset to (1-20, default 15)")
    parser.add_argument("--repeats", type=int, default=None, help="resets timed per task and mode (default 20, 5 with --quick)")
    parser.add_argument("--quick", action="store_true", help="two episodes, fewer repetitions (a few seconds)")
    args = parser.parse_args(argv)
    args.repeats = args.repeats if args.repeats is not None else (5 if args.quick else 20)
    if not 1 <= args.session <= 20:
        parser.error("--session must be between 1 and 20")
    if args.repeats < 1:
        parser.error("--repeats must be positive")
    tasks = workspace_suite()[: 2 if args.quick else None]
    env = WorkspaceEnv()
    first, cold, warm, steps, ends, episode = [], [], [], [], [], []
    read_s, read_p = [], []
    renv = WorkspaceEnv(max_steps=10**9, max_errors=10**9)  # no session limit on the repeated read
    for task in tasks:  # the golden route's first read_file, repeated on its state, against its primitive
        golden = list(task.golden_actions)
        k = next(i for i, a in enumerate(golden) if a.startswith("{") and json.loads(a).get("name") == "read_file")
        renv.reset(seed=0, options={"task": task})
        for a in golden[:k]:
            renv.step(a)
        renv.step(golden[k])
        p, s = paired(primitive_of(renv, golden[k]), lambda a=golden[k]: renv.step(a), 50 if args.quick else 300, samples=True)
        read_p += p
        read_s += s
    for task in tasks:
        env.reset(seed=0, options={"task": task})  # builds the task's initial world once
        for _ in range(args.repeats):
            t = time.perf_counter()
            env.reset(seed=0, options={"task": task})
            first.append(time.perf_counter() - t)
        t = time.perf_counter()
        env.reset(seed=0, options={"task": task, "session": args.session})
        cold.append(time.perf_counter() - t)
        for _ in range(args.repeats):
            t = time.perf_counter()
            env.reset(seed=0, options={"task": task, "session": args.session})
            warm.append(time.perf_counter() - t)
        env.reset(seed=0, options={"task": task})
        t0 = time.perf_counter()
        for a in task.golden_actions:
            t = time.perf_counter()
            _, _, term, trunc, info = env.step(a)
            dt = time.perf_counter() - t
            (ends if "session_end" in info else steps).append(dt)
        episode.append(time.perf_counter() - t0)
        assert info["success"], task.task_id
    ms = 1000.0
    med_first, med_warm = statistics.median(first), statistics.median(warm)
    ratio = med_warm / med_first
    prim = statistics.median(read_p)

    def x(v: float) -> str:
        return f"({v / prim:.1f}x prim)"
    print(f"Workspace-v0 over {len(tasks)} suite episodes (20 sessions each, {sum(len(t.golden_actions) for t in tasks)} golden actions)")
    print(f"  primitive of a read_file:            median {prim * ms:.4f} ms (the unit of 'x prim')")
    print(f"  step: the same read_file:            median {statistics.median(read_s) * ms:.4f} ms "
          f"({statistics.median(read_s) / prim:.2f}x prim; goal <= 3x)")
    print(f"  reset to session 1:                  median {med_first * ms:.3f} ms {x(med_first)}")
    print(f"  reset to session {args.session} (golden history, first): median {statistics.median(cold) * ms:.3f} ms "
          f"{x(statistics.median(cold))} (replays sessions 1-{args.session - 1})")
    print(f"  reset to session {args.session} (golden history, cached): median {med_warm * ms:.3f} ms {x(med_warm)}")
    print(f"  ratio cached session-{args.session} / session-1 reset: {ratio:.2f}x (target <= {TARGET_RATIO:g}x)")
    print(f"  step (golden, within a session):     median {statistics.median(steps) * ms:.3f} ms {x(statistics.median(steps))}, "
          f"max {max(steps) * ms:.3f} ms")
    print(f"  step ending a session (scoring + next opening): median {statistics.median(ends) * ms:.3f} ms "
          f"{x(statistics.median(ends))}")
    print(f"  whole golden episode:                median {statistics.median(episode) * ms:.1f} ms")
    print(f"\n{PRIMITIVE_NOTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
