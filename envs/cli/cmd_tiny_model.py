"""``servicegym tiny-model``: a random tiny Qwen2 chat model and its tokenizer, for running the
TRL path on a CPU (the ``trl`` extra)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from servicegym.envs.cli.common import CliError, _check_env, _one_line, _positive


def cmd_tiny_model(args: argparse.Namespace) -> int:
    """A random tiny Qwen2 chat model and its tokenizer in DIR (``servicegym.envs.integrations.
    tiny_model.write_tiny_model``): offline, deterministic for ``--seed``, for running the TRL path on
    a CPU. Without the ``trl`` extra: one line naming it, exit 2."""
    from servicegym.envs.integrations.tiny_model import INSTALL_HINT, write_tiny_model

    for env_id in args.env or []:
        _check_env(env_id)
    _positive("--tasks", args.tasks)
    _positive("--vocab-size", args.vocab_size, 300)
    _positive("--hidden-size", args.hidden_size, 2)
    _positive("--layers", args.layers)
    if args.hidden_size % 2:
        raise CliError(f"--hidden-size must be even (two attention heads), got {args.hidden_size}")
    out = Path(args.dir)
    if out.exists() and not out.is_dir():
        raise CliError(f"{out} is a file; tiny-model writes a directory")
    t0 = time.perf_counter()
    try:
        path = write_tiny_model(out, env_ids=args.env, tasks=args.tasks, vocab_size=args.vocab_size,
                                hidden_size=args.hidden_size, layers=args.layers, seed=args.seed)
    except ImportError as err:
        raise CliError(f"tiny-model needs the trl extra ({_one_line(err).split(';')[0]}): {INSTALL_HINT}") from None
    except OSError as err:
        raise CliError(f"cannot write {out}: {_one_line(err.strerror or err)}") from None
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    print(f"wrote a random tiny Qwen2 chat model ({size / 1e6:.1f} MB; it learns nothing) to {path} "
          f"({time.perf_counter() - t0:.1f} s); GRPOTrainer(model={str(path)!r}) or "
          f"python scripts/train_trl.py --model {path}")
    return 0
