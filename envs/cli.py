"""The ``servicegym`` command line: list environments and evaluate a policy on a suite."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym

from rewards.metrics import summarize

from . import ENV_IDS
from .policies import POLICIES, make_policy, run_episode
from .tasks import TaskFileError


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _make_env(env_id: str, tasks: str | None, split: str) -> gym.Env:
    if env_id not in ENV_IDS:
        raise CliError(f"unknown env {env_id!r}; known: {', '.join(ENV_IDS)}")
    kwargs: dict[str, Any] = {"split": split}
    if tasks:
        if not Path(tasks).is_file():
            raise CliError(f"task file not found: {tasks}")
        kwargs["tasks"] = tasks
    try:
        return gym.make(env_id, **kwargs)
    except TaskFileError as err:
        raise CliError(str(err)) from None


def cmd_list(args: argparse.Namespace) -> int:
    for env_id in ENV_IDS:
        env = gym.make(env_id)
        print(f"{env_id:32s} tools={len(env.unwrapped.toolkit):3d} test_suite={len(env.unwrapped.task_ids('test'))}")
        env.close()
    return 0


def _report(env_id: str, policy: str, metrics: dict[str, float], components: dict[str, float], reasons: dict[str, int], n: int) -> str:
    lines = [f"# servicegym evaluation: {env_id}, policy {policy}", "", f"{n} episodes.", "", "| metric | value |", "|---|---|"]
    lines += [f"| {k} | {int(v)} |" if k in ("tasks", "trials") else f"| {k} | {v:.4f} |" for k, v in metrics.items()]
    lines += ["", "## Score components (mean over the episodes that have them)", "", "| component | mean |", "|---|---|"]
    lines += [f"| {k} | {v:.4f} |" for k, v in sorted(components.items())]
    lines += ["", "## How episodes ended", "", "| reason | episodes |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in sorted(reasons.items())]
    return "\n".join(lines) + "\n"


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.trials < 1:
        raise CliError("--trials must be at least 1")
    if args.policy not in POLICIES:
        raise CliError(f"unknown policy {args.policy!r}; choose from {', '.join(POLICIES)}")
    env = _make_env(args.env, args.tasks, args.split)
    ids = env.unwrapped.task_ids(args.split)
    if args.limit:
        ids = ids[: args.limit]
    if not ids:
        raise CliError(f"no tasks in split {args.split!r}")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CliError(f"cannot create output directory {out}: {err}") from None
    results: dict[str, list[bool]] = defaultdict(list)
    comp_sum: dict[str, float] = defaultdict(float)
    comp_n: dict[str, int] = defaultdict(int)
    reasons: dict[str, int] = defaultdict(int)
    t0 = time.perf_counter()
    n = 0
    with open(out / "rollouts.jsonl", "w", encoding="utf-8") as f:
        for trial in range(args.trials):
            policy = make_policy(args.policy, seed=args.seed + trial)
            for i, task_id in enumerate(ids):
                rec = run_episode(env, policy, seed=args.seed + trial * 100_003 + i, options={"task_id": task_id})
                rec["trial"] = trial
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                results[task_id].append(rec["success"])
                for k, v in rec["score"].items():
                    if isinstance(v, bool) or not isinstance(v, (int, float)):
                        continue  # e.g. the payments checker's list of violations
                    comp_sum[k] += v
                    comp_n[k] += 1
                reasons[rec["termination_reason"]] += 1
                n += 1
    elapsed = time.perf_counter() - t0
    metrics = summarize(results)
    components = {k: v / comp_n[k] for k, v in comp_sum.items()}
    (out / "report.md").write_text(_report(args.env, args.policy, metrics, components, dict(reasons), n), encoding="utf-8")
    source = f"file={args.tasks}" if args.tasks else f"split={args.split}"
    print(f"{args.env} policy={args.policy} {source} tasks={len(ids)} trials={args.trials} episodes={n} ({elapsed:.2f} s)")
    for k, v in metrics.items():
        print(f"  {k:10s} {v:.4f}" if k not in ("tasks", "trials") else f"  {k:10s} {int(v)}")
    print(f"wrote {out / 'rollouts.jsonl'} and {out / 'report.md'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="servicegym", description="servicegym: tool-use environments for LLM agents")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list environments").set_defaults(fn=cmd_list)
    e = sub.add_parser("evaluate", help="evaluate a policy and write rollouts.jsonl and report.md")
    e.add_argument("--env", default="servicegym/Delivery-v0")
    e.add_argument("--policy", default="oracle", help=f"one of {', '.join(POLICIES)}")
    e.add_argument("--trials", type=int, default=1, help="trials per task (k of pass@k, pass^k)")
    e.add_argument("--split", default="test", choices=["train", "test"])
    e.add_argument("--tasks", default=None, help="a task file (project format or VitaBench)")
    e.add_argument("--limit", type=int, default=0, help="evaluate only the first N tasks")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--out", default="runs/eval")
    e.set_defaults(fn=cmd_evaluate)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except CliError as err:
        print(f"servicegym: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
