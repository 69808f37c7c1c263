"""Complexity of each environment next to VitaBench's published figures, and Workspace-v0's
episode structure and session labels next to pi-Bench's.

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


# pi-Bench: 100 tasks, five persona episodes of 20 sessions, per episode six strongly dependent groups
# of 2-3 sessions and five largely independent ones, 18 action and reasoning types (per-type counts
# not in the notes we hold)
PIBENCH = {"episodes": 5, "tasks": 100, "sessions": 20, "groups": 6, "group_sizes": "2-3", "independent": 5, "types": 18}


def workspace_section(n: int) -> list[str]:
    """Workspace-v0's episode structure and session labels (the frozen suite and ``n`` generated
    episodes) beside pi-Bench's counts."""
    from collections import Counter

    from servicegym.envs.tasks.generators.workspace import LABEL_TYPES, episode_labels, episode_structure

    env = gym.make("servicegym/Workspace-v0", split="test").unwrapped
    suite = [env.source.get(t) for t in env.task_ids("test")]
    generated = [env.source.get(env.source.make_id("train", seed)) for seed in range(n)]
    out = [f"\nWorkspace-v0 episodes (ours / pi-Bench): frozen suite, and {n} generated episodes"]
    for name, tasks in (("suite", suite), ("generated", generated)):
        shapes = [episode_structure(t.world["sessions"]) for t in tasks]
        sizes = Counter(len(g) for s in shapes for g in s["groups"].values())
        per = Counter(x for t in tasks for lab in episode_labels(t.world["sessions"]) for v in lab.values() for x in v)
        sessions = sorted({len(t.world["sessions"]) for t in tasks})
        out.append(f"  {name}: episodes {len(tasks)} / {PIBENCH['episodes']}, sessions "
                   f"{sum(len(t.world['sessions']) for t in tasks)} / {PIBENCH['tasks']}, sessions per episode "
                   f"{'/'.join(map(str, sessions))} / {PIBENCH['sessions']}, groups per episode "
                   f"{statistics.mean(len(s['groups']) for s in shapes):g} / {PIBENCH['groups']}, group sizes "
                   f"{', '.join(f'{k}: {v}' for k, v in sorted(sizes.items()))} / {PIBENCH['group_sizes']}, independent "
                   f"per episode {statistics.mean(len(s['independent']) for s in shapes):g} / {PIBENCH['independent']}, "
                   f"label types used {sum(1 for x in LABEL_TYPES if per[x])} of {len(LABEL_TYPES)} / {PIBENCH['types']}")
        out.append("    sessions per label, per episode (pi-Bench's per-type counts are not in our notes): " + ", ".join(f"{x} {per[x] / len(tasks):g}" for x in LABEL_TYPES))
    return out


PIBENCH_SKILLS = 21  # pi-Bench's skills over its five personas
PIBENCH_TOOLS = 187


def workspace_skills_section(n: int) -> list[str]:
    """Workspace-v0's skills (issue 28) beside pi-Bench's 21: skills per persona, tools, and over
    ``n`` generated episodes the stale skills, the sessions a skill does, and the golden route's
    actions and calls with skills against the by-hand route's."""
    from servicegym.world_state.workspace.skill_library import SKILL_NAMES, skill_count

    env = gym.make("servicegym/Workspace-v0").unwrapped
    counts = skill_count()
    out = [f"\nWorkspace-v0 skills (ours / pi-Bench): {sum(counts.values())} / {PIBENCH_SKILLS}; tools "
           f"{len(env.tool_specs)} / {PIBENCH_TOOLS}"]
    out += [f"  {p:11s} {c} skills: {', '.join(SKILL_NAMES[p].values())}" for p, c in counts.items()]
    tasks = [env.source.get(env.source.make_id("train", seed)) for seed in range(n)]
    tasks = [t for t in tasks if "manual_actions" in t.world]
    if tasks:
        skilled = [[s for s in t.world["sessions"] if "skill" in s] for t in tasks]
        golden_calls = [sum(_is_call(a) for a in t.golden_actions) for t in tasks]
        manual_calls = [sum(_is_call(a) for a in t.world["manual_actions"]) for t in tasks]
        out.append(f"  {len(tasks)} generated episodes: stale skills per episode "
                   f"{statistics.mean(sum(s['stale'] for s in t.world['skills']) for t in tasks):g}; sessions a skill does "
                   f"{statistics.mean(sum(not s['skill']['stale'] for s in k) for k in skilled):.1f} (up to date), "
                   f"{statistics.mean(sum(s['skill']['stale'] for s in k) for k in skilled):.1f} (stale) of 20; golden actions with "
                   f"skills {statistics.mean(len(t.golden_actions) for t in tasks):.1f} ({statistics.mean(golden_calls):.1f} calls), "
                   f"by hand {statistics.mean(len(t.world['manual_actions']) for t in tasks):.1f} ({statistics.mean(manual_calls):.1f} calls)")
    return out


# BizBench (the payments paper): discoverable capabilities, resident tools, knowledge documents and
# their size, queryable collections and records of the initial database, user-simulator tools, and
# the mean assistant calls of a golden trace
BIZBENCH = {"capabilities": 601, "resident": 9, "documents": 789, "tokens_k": 600, "collections": 398, "records": 2994,
            "user_tools": 10, "golden_calls": 111.8}


def payments_section() -> list[str]:
    """Payments-v0's frozen suite beside BizBench: scale of a world, and per difficulty the golden
    trace's calls, the capabilities it calls, the documents it reads and the workflows it couples."""
    from servicegym.envs.tasks.suites import payments_suite
    from servicegym.simulators.llm_user import CUSTOMER_TOOLS, WRITE_TOOLS
    from servicegym.world_state.payments import CATALOGUE, RESIDENT_TOOLS, build_payments_world

    suite = payments_suite()
    worlds = [build_payments_world(t.world) for t in suite[:10]]
    docs = [len(w.table("documents").rows) for w in worlds]
    chars = statistics.mean(sum(len(d.title) + len(d.body) for d in w.table("documents")) for w in worlds)
    records = [sum(len(t.rows) for n, t in w.tables.items() if n != "documents") for w in worlds]
    b = BIZBENCH
    out = [f"\nPayments-v0 (ours / BizBench): {len(CATALOGUE)} / {b['capabilities']} capabilities behind {len(RESIDENT_TOOLS)} / "
           f"{b['resident']} resident tools; {statistics.mean(docs):.0f} / {b['documents']} documents per world "
           f"(~{chars / 4000:.0f}k / ~{b['tokens_k']}k tokens); {len(worlds[0].tables)} / {b['collections']} collections, "
           f"{statistics.mean(records):.0f} / {b['records']} records; {len(CUSTOMER_TOOLS)} / {b['user_tools']} customer-side "
           f"tools (the LLM merchant's: {len(CUSTOMER_TOOLS) - len(WRITE_TOOLS)} views, {len(WRITE_TOOLS)} actions)"]
    out.append(f"  {'difficulty':>10s} {'tasks':>6s} {'golden calls (mean)':>20s} {'capabilities called':>20s} {'documents read':>15s} "
               f"{'workflows':>10s}")
    for diff in sorted({t.difficulty for t in suite}):
        tasks = [t for t in suite if t.difficulty == diff]
        calls, caps, reads, flows = [], [], [], []
        for t in tasks:
            acts = [json.loads(a) for a in t.golden_actions if _is_call(a)]
            calls.append(len(acts))
            caps.append(len({a["arguments"]["name"] for a in acts if a["name"] == "call_capability"}))
            reads.append(len({a["arguments"]["doc_id"] for a in acts if a["name"] == "read_document"}))
            goal = t.world["goal"]
            flows.append(3 + sum(1 for k in ("fx", "max_payouts", "statement", "disputes", "fees", "settlement", "verification") if goal.get(k)))
        out.append(f"  {diff:>10d} {len(tasks):>6d} {statistics.mean(calls):>20.1f} {statistics.mean(caps):>20.1f} "
                   f"{statistics.mean(reads):>15.1f} {statistics.mean(flows):>10.1f}")
    out.append(f"  BizBench: golden traces average {b['golden_calls']} assistant calls")
    return out


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
    print("\n".join(payments_section()))
    print("\n".join(workspace_section(min(args.tasks, 50))))
    print("\n".join(workspace_skills_section(min(args.tasks, 50))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
