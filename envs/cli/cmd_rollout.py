"""``servicegym rollout``: collect episodes of a policy into a JSONL file (resumable), through
``common._collect``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from servicegym.envs.cli.common import CliError, _collect, _failures, _source, _summary_line


def cmd_rollout(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise CliError(f"--out must be a file (FILE.jsonl), {out} is a directory")
    if out.suffix == "":
        raise CliError(f"--out must name a file such as {out}.jsonl")
    t0 = time.perf_counter()
    summary, ids, policy = _collect(args, out, resume=not args.no_resume)
    print(f"{args.env} policy={policy} {_source(args)} tasks={len(ids)} trials={args.trials} {_summary_line(summary)} "
          f"({time.perf_counter() - t0:.2f} s) -> {out}")
    return _failures(summary)
