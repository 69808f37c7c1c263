"""Train MaskablePPO (or PPO) on an easy delivery level through the SB3 adapter and print the
held-out success of the trained policy and of a random policy over the same menu.

    python scripts/train_sb3.py --timesteps 40000 --eval-tasks 100 --out runs/sb3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="servicegym/Delivery-v0")
    p.add_argument("--difficulty", type=int, default=0)
    p.add_argument("--timesteps", type=int, default=40_000)
    p.add_argument("--eval-tasks", type=int, default=100)
    p.add_argument("--algo", choices=["maskable_ppo", "ppo"], default="maskable_ppo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/sb3")
    a = p.parse_args(argv)
    try:
        from servicegym.envs.integrations.sb3 import train

        r = train(a.env, a.difficulty, a.timesteps, a.seed, a.out, a.algo, a.eval_tasks, progress=True)
    except (ImportError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{r['algo']} on {r['env_id']} difficulty {r['difficulty']}: {r['timesteps']} timesteps in {r['wall_s']} s")
    print(f"held-out success ({r['eval_tasks']} tasks): trained {r['success_trained']:.2f}, random {r['success_random']:.2f}")
    print(f"learning curve: {r['png']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
