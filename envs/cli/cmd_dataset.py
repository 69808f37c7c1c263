"""``servicegym dataset``: task rows as JSON lines for a trainer's dataloader."""

from __future__ import annotations

import argparse

from servicegym.envs.cli.common import CliError, _check_env, _one_line, _positive


def cmd_dataset(args: argparse.Namespace) -> int:
    from servicegym.envs.integrations.dataset import task_rows, write_rows

    _check_env(args.env)
    if args.n is not None:
        _positive("--n", args.n)
    try:
        rows = task_rows(args.env, args.split, args.n, args.seed, {"user_tool": True} if args.user_tool else None)
        path = write_rows(rows, args.out)
    except ValueError as err:
        raise CliError(_one_line(err)) from None
    except OSError as err:
        raise CliError(f"cannot write {args.out}: {_one_line(err.strerror or err)}") from None
    print(f"{len(rows)} rows of {args.env} split={args.split} -> {path}")
    return 0
