"""``servicegym evaluate``: collect episodes (``common._collect``), then write run.json,
rollouts.jsonl, report.md and pass_k.png into ``--out``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from servicegym.envs.cli.common import (
    CliError,
    _collect,
    _env_kwargs,
    _failures,
    _one_line,
    _policy_spec,
    _report,
    _source,
    _summary_line,
    _task_ids,
)


def _env_options(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The experiment options of ``env_kwargs`` that differ from their defaults (for run.json)."""
    out = {k: env_kwargs[k] for k in ("call_cap", "disclosure", "gold_documents") if k in env_kwargs}
    if out.get("disclosure") == "minimal":
        del out["disclosure"]
    return out


def _selected(records: list[dict[str, Any]], env_id: str, policy: str, ids: list[str], trials: int) -> list[dict[str, Any]]:
    """The records of this evaluation (a resumed file may hold others: more trials, other tasks)."""
    wanted = set(ids)
    return [r for r in records
            if r.get("env_id", env_id) == env_id and r.get("policy", policy) == policy
            and r.get("task_id") in wanted and int(r.get("trial", 0)) < trials]


def cmd_evaluate(args: argparse.Namespace) -> int:
    from servicegym.envs.cli.report import ReportError, load_rollouts

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out must be a directory, {out} is a file")
    t0 = time.perf_counter()
    summary, ids, policy = _collect(args, out / "rollouts.jsonl", resume=not args.no_resume)
    from servicegym.envs.cli.compare import run_metadata, write_run_meta  # run.json: what `report A B` labels it by

    write_run_meta(out, run_metadata(env_id=args.env, policy=policy, trials=args.trials, seed=args.seed, split=args.split,
                                     scoring=args.scoring, tasks_file=args.tasks, task_ids=_task_ids(args), tasks=len(ids),
                                     limit=args.limit, llm=_policy_spec(args)[1].get("llm"),
                                     env_options=_env_options(_env_kwargs(args))))
    print(f"{args.env} policy={policy} {_source(args)} tasks={len(ids)} trials={args.trials} {_summary_line(summary)} "
          f"({time.perf_counter() - t0:.2f} s)")
    try:
        records = _selected(load_rollouts(out / "rollouts.jsonl"), args.env, policy, ids, args.trials)
    except ReportError as err:
        raise CliError(_one_line(err)) from None
    _report(records, out, f"servicegym evaluation: {args.env}, policy {policy}", args.wide)
    print(f"rollouts in {out / 'rollouts.jsonl'}")
    return _failures(summary)
