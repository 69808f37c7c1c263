"""``servicegym report``: the report of one saved run, or the comparison of several
(``servicegym.envs.cli.compare``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from servicegym.envs.cli.common import CliError, _one_line, _report


def cmd_report(args: argparse.Namespace) -> int:
    """One RUN (a rollouts file or an evaluate directory; ``--in`` names one too): its report.
    Several: their comparison (``servicegym.envs.cli.compare``), compare.md/.csv/.json/.png."""
    from servicegym.envs.cli import compare
    from servicegym.envs.cli.report import ReportError, load_rollouts

    runs = ([args.inp] if args.inp else []) + list(args.runs)
    if not runs:
        raise CliError("report needs a RUN: a rollouts file or an evaluate directory (or --in FILE)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out must be a directory, {out} is a file")
    try:
        if len(runs) > 1:
            cmp = compare.compare(compare.load_runs(runs), allow_mismatch=args.allow_mismatch)
            title = args.title or "servicegym comparison"
            written = compare.write_compare(cmp, out, title)
            compare.print_compare(cmp, title=title, width=200 if args.wide else None)
            print(f"wrote {', '.join(map(str, written))}")
            return 0
        records = load_rollouts(compare.resolve_run(runs[0]))
        out.mkdir(parents=True, exist_ok=True)
        _report(records, out, args.title or f"servicegym report: {Path(runs[0]).name}", args.wide)
    except ReportError as err:
        raise CliError(_one_line(err)) from None
    except OSError as err:
        raise CliError(f"cannot write {out}: {_one_line(err.strerror or err)}") from None
    return 0
