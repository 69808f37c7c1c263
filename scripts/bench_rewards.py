"""Benchmark of the reward layer: what potential-based shaping adds to a step, and how many
judge calls the sliding-window LLM judge makes per episode.

Shaping: oracle and random episodes are played twice with the same seeds and actions, once on
the bare env and once under ``PotentialShapingReward`` (default potential: rubric progress, one
code scoring of the current state per step); the table gives the mean step time of each and the
ratio. Judge calls: the number of windows (= requests when every reply is well-formed) over the
conversations of the same episodes, with VitaBench's defaults (10 messages, overlap 2). Step
times are also given as ratios to the one primitive (``scripts/benchlib.py``: its reference, a bare
``get_delivery_store_info`` call). Prints a table; asserts nothing.

    python scripts/bench_rewards.py              # about half a minute
    python scripts/bench_rewards.py --quick
    python scripts/bench_rewards.py --vitabench path/to/tasks_en.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
from benchlib import PRIMITIVE_NOTE, reference_primitive  # noqa: E402

import servicegym  # noqa: E402, F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy  # noqa: E402
from servicegym.rewards.judge import window_bounds  # noqa: E402
from servicegym.rewards.wrappers import PotentialShapingReward  # noqa: E402

DEFAULT_VITABENCH = ROOT.parent / "shared" / "data" / "vitabench" / "delivery" / "tasks_en.json"
ENV_IDS = ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
           "servicegym/CrossScenario-v0", "servicegym/Payments-v0"]


def record(env_id: str, kwargs: dict, policy_name: str, seeds: list[int], options_for) -> list[tuple[int, dict, list[str]]]:
    """(seed, reset options, actions) of each episode, to replay identically."""
    env = gym.make(env_id, **kwargs)
    out = []
    for seed in seeds:
        opts = options_for(env, seed)
        obs, info = env.reset(seed=seed, options=opts)
        policy = OraclePolicy() if policy_name == "oracle" else RandomPolicy(seed=seed)
        policy.reset(env, obs, info)
        actions = []
        while True:
            a = policy.act(obs)
            actions.append(a)
            obs, _, term, trunc, _ = env.step(a)
            if term or trunc:
                break
        out.append((seed, opts, actions, len(env.unwrapped.messages) - 1))
    return out


def time_steps(env, episodes) -> float:
    """Mean seconds per step over the episodes (resets excluded)."""
    total, steps = 0.0, 0
    for seed, opts, actions, _ in episodes:
        env.reset(seed=seed, options=opts)
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        total += time.perf_counter() - t0
        steps += len(actions)
    return total / max(steps, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--vitabench", default=str(DEFAULT_VITABENCH), help="a VitaBench delivery task file")
    args = ap.parse_args()
    n = 4 if args.quick else 12
    reps = 1 if args.quick else 3
    cases = [(env_id, {}, lambda env, seed: None) for env_id in ENV_IDS]
    vita = Path(args.vitabench)
    if vita.is_file():
        def vita_options(env, seed):
            ids = env.unwrapped.task_ids()
            return {"task_id": ids[seed % len(ids)]}

        cases.append(("servicegym/Delivery-v0", {"tasks": str(vita)}, vita_options))
    prim = reference_primitive()
    print(f"primitive (reference: a bare get_delivery_store_info) {prim * 1e6:.1f} us; {PRIMITIVE_NOTE}\n")
    print(f"{'env':38s} {'policy':7s} {'steps':>6s} {'step us':>9s} {'x prim':>7s} {'shaped us':>10s} {'x prim':>7s} "
          f"{'ratio':>6s} {'msgs':>6s} {'windows':>8s}")
    for env_id, kwargs, options_for in cases:
        label = env_id.split("/")[1] + (" (VitaBench file)" if kwargs else "")
        for policy in ("oracle", "random"):
            eps = record(env_id, kwargs, policy, list(range(n)), options_for)
            bare = gym.make(env_id, **kwargs)
            shaped = PotentialShapingReward(gym.make(env_id, **kwargs), gamma=0.99)
            t_bare = min(time_steps(bare, eps) for _ in range(reps))
            t_shaped = min(time_steps(shaped, eps) for _ in range(reps))
            steps = statistics.mean(len(a) for _, _, a, _ in eps)
            msgs = statistics.mean(m for *_, m in eps)
            windows = statistics.mean(len(window_bounds(m)) for *_, m in eps)
            print(f"{label:38s} {policy:7s} {steps:6.1f} {t_bare * 1e6:9.1f} {t_bare / prim:7.1f} {t_shaped * 1e6:10.1f} "
                  f"{t_shaped / prim:7.1f} {t_shaped / t_bare:6.2f} {msgs:6.1f} {windows:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
