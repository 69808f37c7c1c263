"""``servicegym train``: a stable-baselines3 agent on a discrete-action adapter (the ``rl``
extra; ``RL_HINT`` says how to install it)."""

from __future__ import annotations

import argparse

from servicegym.envs.cli.common import CliError, _check_env, _one_line, _positive

RL_HINT = "pip install torch==2.13.0 (a CPU build) and then pip install 'servicegym[rl]'"


def cmd_train(args: argparse.Namespace) -> int:
    _check_env(args.env)
    _positive("--timesteps", args.timesteps)
    _positive("--difficulty", args.difficulty, 0)
    _positive("--eval-tasks", args.eval_tasks)
    _positive("--n-envs", args.n_envs)
    from servicegym.envs.integrations import sb3

    try:
        sb3._require_sb3()
    except ImportError as err:
        missing = _one_line(err).split(":")[0].removeprefix("train() needs ").strip()
        raise CliError(f"train needs the rl extra ({missing} not installed): {RL_HINT}") from None
    try:
        result = sb3.train(env_id=args.env, difficulty=args.difficulty, total_timesteps=args.timesteps,
                           seed=args.seed, out_dir=args.out, algo=args.algo, eval_tasks=args.eval_tasks,
                           n_envs=args.n_envs, progress=not args.quiet)
    except (ValueError, TypeError) as err:  # e.g. an env the adapter does not cover
        raise CliError(_one_line(err)) from None
    for k, v in (result or {}).items():
        if isinstance(v, (str, int, float, bool)) or v is None:
            print(f"  {k}: {v}")
    return 0
