"""Benchmark of every registered env: reset, a tool step, a user message and scoring, and memory.

Each figure is a median through the public API, printed next to the same primitive as
``bench_delivery.py`` (json.loads of a call + pydantic validation + a dict update) and, for
resets, as a ratio to the delivery env's reset measured in the same run. Asserts nothing.

    python scripts/bench_envs.py           # about half a minute
    python scripts/bench_envs.py --quick
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gymnasium as gym  # noqa: E402
from bench_delivery import fmt_time, memory_per_env, primitive, timed  # noqa: E402

import servicegym  # noqa: E402

BIG = 10**9


def first_call(actions: list[str]) -> str | None:
    for a in actions:
        try:
            obj = json.loads(a)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "name" in obj:
            return a
    return None


def measure(env_id: str, reps: int, n_resets: int) -> dict[str, float]:
    env = gym.make(env_id, max_steps=BIG, max_errors=BIG)
    u = env.unwrapped
    out: dict[str, float] = {}
    seeds = range(50_000, 50_000 + n_resets)
    out["reset_new"] = statistics.median(timed_each(lambda s: env.reset(seed=s), seeds))
    tid = u.task_ids("test")[0]
    env.reset(seed=0, options={"task_id": tid})
    out["reset_same"] = statistics.median(timed(lambda: env.reset(seed=0, options={"task_id": tid}), n_resets))
    golden = list(u.task.golden_actions)
    call = first_call(golden)
    env.reset(seed=0, options={"task_id": tid})
    env.step(call)
    out["step_call"] = statistics.median(timed(lambda: env.step(call), reps))
    env.reset(seed=0, options={"task_id": tid})
    out["step_message"] = statistics.median(timed(lambda: env.step("Could you tell me a bit more?"), max(50, reps // 10)))
    env.reset(seed=0, options={"task_id": tid})
    for a in golden[:-1]:
        env.step(a)
    view = u.episode_view()
    out["score"] = statistics.median(timed(lambda: u.score(u.task, view), max(50, reps // 3)))
    out["items"] = float(len(u.task.rubric))
    out["memory"] = memory_per_env(10, lambda i: gym.make(env_id))
    out["call_name"] = json.loads(call)["name"]  # type: ignore[assignment]
    return out


def timed_each(fn, args) -> list[float]:
    out = []
    for a in args:
        t = time.perf_counter()
        fn(a)
        out.append(time.perf_counter() - t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    reps, n_resets = (300, 60) if args.quick else (2000, 300)
    prim = statistics.median(primitive(reps * 10))
    rows = {env_id: measure(env_id, reps, n_resets) for env_id in sorted(servicegym.ENV_IDS)}
    base = rows.get("servicegym/Delivery-v0", next(iter(rows.values())))["reset_new"]
    print(f"servicegym env benchmark; primitive {fmt_time(prim).strip()}; python {sys.version.split()[0]}\n")
    head = (f"{'env':28s} {'reset new':>10s} {'x deliv':>8s} {'reset same':>11s} {'tool step':>10s} {'x prim':>7s} "
            f"{'message':>9s} {'score':>9s} {'items':>5s} {'MB/env':>7s}  first golden call")
    print(head)
    print("-" * len(head))
    for env_id, m in rows.items():
        print(f"{env_id:28s} {fmt_time(m['reset_new']):>10s} {m['reset_new'] / base:8.2f} {fmt_time(m['reset_same']):>11s} "
              f"{fmt_time(m['step_call']):>10s} {m['step_call'] / prim:7.1f} {fmt_time(m['step_message']):>9s} "
              f"{fmt_time(m['score']):>9s} {int(m['items']):5d} {m['memory'] / 2**20:7.3f}  {m['call_name']}")
    print("\nreset new = generate a task and build its world; targets: reset <= 2 ms, cross-scenario reset <= 3x delivery's")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
