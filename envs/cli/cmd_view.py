"""``servicegym view``: one self-contained HTML page over the episodes of one or several runs
(built by ``servicegym.envs.cli.view``), written, and with ``--serve`` served on 127.0.0.1."""

from __future__ import annotations

import argparse
from pathlib import Path

from servicegym.envs.cli.common import CliError, _one_line


def cmd_view(args: argparse.Namespace) -> int:
    """One self-contained HTML page over a rollouts file, or over several RUNs (``--in`` names one
    too, first), each labelled as ``report`` labels it (``servicegym.envs.cli.view``); ``--serve``
    serves it on 127.0.0.1 until Ctrl-C."""
    from servicegym.envs.cli import view

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535, got {args.port}")
    inputs = ([args.inp] if args.inp else []) + list(args.runs)
    if not inputs:
        raise CliError("view needs a RUN: a rollouts file or an evaluate directory (or --in FILE)")
    try:
        if len(inputs) == 1:
            path = view.resolve_input(inputs[0])
            runs = [view.load_run(path)]
        else:
            runs = view.load_runs(inputs)
    except view.ViewError as err:
        raise CliError(_one_line(err)) from None
    for run in runs:
        view.report_skipped(run)
    out = Path(args.out) if args.out else (view.default_out(path) if len(runs) == 1 else Path(view.MULTI_VIEW_NAME))
    if out.is_dir():
        raise CliError(f"--out must be a file (FILE.html), {out} is a directory")
    page = view.build_page(runs, title=args.title)
    try:
        size = view.write_page(page, out)
    except OSError as err:
        raise CliError(f"cannot write {out}: {_one_line(err.strerror or err)}") from None
    nskip = sum(len(run.skipped) for run in runs)
    skipped = f", {nskip} line{'s' if nskip > 1 else ''} skipped" if nskip else ""
    of_runs = f" of {len(runs)} runs: {', '.join(run.label for run in runs)}" if len(runs) > 1 else ""
    print(f"wrote {out} ({sum(len(run.records) for run in runs)} episodes{of_runs}{skipped}, {size / 1e6:.2f} MB)",
          flush=True)
    if args.serve:
        try:
            view.serve(out.read_bytes(), args.port,
                       ready=lambda url: print(f"serving {url} (Ctrl-C to stop)", flush=True))
        except OSError as err:
            raise CliError(f"cannot serve on 127.0.0.1:{args.port}: {_one_line(err.strerror or err)}") from None
        except KeyboardInterrupt:
            print("stopped", flush=True)
    return 0
