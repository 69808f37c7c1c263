"""``servicegym bench``: run one of the benchmark scripts (``scripts/bench_<name>.py``, one per
name in ``BENCHES``) of the source checkout, passing the other options on."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from servicegym.envs.cli.common import CliError

# every benchmark script (scripts/bench_<name>.py); each takes --quick
BENCHES = ("envs", "delivery", "payments", "workspace", "rewards", "rollouts", "server", "scoring")


def scripts_dir() -> Path:
    """``scripts/`` of the source checkout this package runs from (envs/cli/ -> the repository)."""
    return Path(__file__).resolve().parents[2] / "scripts"


def cmd_bench(args: argparse.Namespace, extra: list[str]) -> int:
    # the name comes first (servicegym bench NAME [--quick] [script options]); the rest, in order,
    # goes to the script
    positional = extra.pop(0) if extra and not extra[0].startswith("-") else None
    name = positional or args.which
    if positional and args.which and positional != args.which:
        raise CliError(f"two benchmarks named ({positional!r} and --which {args.which!r}); name one")
    if not name:
        raise CliError(f"name a benchmark: servicegym bench NAME [--quick] (one of {', '.join(BENCHES)})")
    if name not in BENCHES:
        raise CliError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHES)}")
    script = scripts_dir() / f"bench_{name}.py"
    if not script.is_file():
        raise CliError(f"benchmark script not found: {script} (the benchmarks run from a source checkout)")
    cmd = [sys.executable, str(script), *(["--quick"] if args.quick else []), *extra]
    sys.stdout.flush()
    proc = subprocess.run(cmd, stdout=sys.stdout if _has_fileno(sys.stdout) else subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=os.environ.copy())
    if proc.stdout:  # captured (e.g. under pytest's capsys): pass it on
        print(proc.stdout, end="")
    if proc.returncode == 2:
        raise CliError(f"bench_{name}.py rejected its options: {' '.join(cmd[2:]) or '(none)'}")
    return proc.returncode


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, OSError, ValueError):
        return False
