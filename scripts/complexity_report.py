"""Complexity of each environment next to VitaBench's published figures.

Per env: tool count, dependency edges |E| and density |E|/(|V|(|V|-1)) of the tool graph derived
from the pre-conditions, the median number of reasoning points of generated tasks at the default
difficulty, and the median golden-trace length (actions, and tool calls among them).

    python scripts/complexity_report.py            # 200 generated tasks per env
    python scripts/complexity_report.py --tasks 50
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import servicegym  # noqa: E402  registers the ids
from servicegym.world_state.tools import dependency_graph  # noqa: E402

# VitaBench (arXiv 2509.26490): tools per domain agent, graph edges and density where reported,
# and the mean number of reasoning points per task
VITABENCH = {
    "delivery": {"tools": 20, "edges": None, "density": None, "points": None},
    "instore": {"tools": 24, "edges": None, "density": None, "points": 5.6},
    "travel": {"tools": 38, "edges": None, "density": 0.220, "points": 9.7},
    "cross": {"tools": 66, "edges": 512, "density": None, "points": 10.3},
}


def _is_call(action: str) -> bool:
    try:
        return isinstance(json.loads(action), dict)
    except json.JSONDecodeError:
        return False


def measure(env_id: str, n: int) -> dict[str, object]:
    env = gym.make(env_id)
    u = env.unwrapped
    graph = dependency_graph(u.toolkit).summary()
    points, lengths, calls = [], [], []
    for seed in range(n):
        env.reset(seed=seed)
        task = u.task
        points.append(task.reasoning_points)
        lengths.append(len(task.golden_actions))
        calls.append(sum(_is_call(a) for a in task.golden_actions))
    return {
        "domain": u.domain,
        "tools": len(u.toolkit),
        "edges": int(graph["E"]),
        "density": graph["density"],
        "points": statistics.median(points),
        "golden": statistics.median(lengths),
        "golden_calls": statistics.median(calls),
        "difficulty": getattr(u.source, "difficulty", None),
    }


def _cell(ours: object, theirs: object, fmt: str) -> str:
    left = format(ours, fmt) if ours is not None else "-"
    right = format(theirs, fmt) if theirs is not None else "-"
    return f"{left:>7} / {right:<7}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=200, help="generated tasks per env (default 200)")
    args = parser.parse_args(argv)
    if args.tasks < 1:
        parser.error("--tasks must be at least 1")
    print(f"servicegym complexity (ours / VitaBench); {args.tasks} generated tasks per env at the default difficulty\n")
    head = f"{'env':28s} {'tools':>17s} {'edges':>17s} {'density':>17s} {'reasoning pts':>17s} {'golden actions (calls)':>24s}"
    print(head)
    print("-" * len(head))
    for env_id in sorted(servicegym.ENV_IDS):
        m = measure(env_id, args.tasks)
        ref = VITABENCH.get(m["domain"], {})
        print(
            f"{env_id:28s} {_cell(m['tools'], ref.get('tools'), 'd'):>17s} {_cell(m['edges'], ref.get('edges'), 'd'):>17s} "
            f"{_cell(m['density'], ref.get('density'), '.3f'):>17s} {_cell(m['points'], ref.get('points'), '.1f'):>17s} "
            f"{m['golden']:>14.1f} ({m['golden_calls']:.1f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
