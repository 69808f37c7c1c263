"""Benchmark Workspace-v0: reset to session 1, reset to session k with golden history (first time,
when the history is replayed, and cached), their ratio (target <= 5x), step and session-end times.

    python scripts/bench_workspace.py [--session 15] [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from servicegym.envs.environments.workspace import WorkspaceEnv
from servicegym.envs.tasks.suites import workspace_suite

TARGET_RATIO = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--session", type=int, default=15, help="session k to reset to (1-20, default 15)")
    parser.add_argument("--repeats", type=int, default=20, help="resets timed per task and mode (default 20)")
    args = parser.parse_args(argv)
    if not 1 <= args.session <= 20:
        parser.error("--session must be between 1 and 20")
    if args.repeats < 1:
        parser.error("--repeats must be positive")
    tasks = workspace_suite()
    env = WorkspaceEnv()
    first, cold, warm, steps, ends, episode = [], [], [], [], [], []
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
    print(f"Workspace-v0 over {len(tasks)} suite episodes (20 sessions each, {sum(len(t.golden_actions) for t in tasks)} golden actions)")
    print(f"  reset to session 1:                  median {med_first * ms:.3f} ms")
    print(f"  reset to session {args.session} (golden history, first): median {statistics.median(cold) * ms:.3f} ms (replays sessions 1-{args.session - 1})")
    print(f"  reset to session {args.session} (golden history, cached): median {med_warm * ms:.3f} ms")
    print(f"  ratio cached session-{args.session} / session-1 reset: {ratio:.2f}x (target <= {TARGET_RATIO:g}x)")
    print(f"  step (golden, within a session):     median {statistics.median(steps) * ms:.3f} ms, max {max(steps) * ms:.3f} ms")
    print(f"  step ending a session (scoring + next opening): median {statistics.median(ends) * ms:.3f} ms")
    print(f"  whole golden episode:                median {statistics.median(episode) * ms:.1f} ms")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
