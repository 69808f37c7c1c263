"""``servicegym list``: the registered envs, or with ``--suites`` the frozen test suites."""

from __future__ import annotations

import argparse

import gymnasium as gym

from servicegym.envs.environments.registration import ENV_IDS


def cmd_list(args: argparse.Namespace) -> int:
    if args.suites:
        from servicegym.envs.tasks.suites import SUITE_SIZE, SUITE_SIZES, SUITES

        print(f"{'suite':12s} {'env':32s} {'tasks':>5s}  file")
        for env_id in ENV_IDS:
            env = gym.make(env_id)
            u = env.unwrapped
            domain = u.domain
            path = getattr(u.source, "suite_path", None)
            size = len(u.task_ids("test"))
            if domain in SUITES:
                size = size or SUITE_SIZES.get(domain, SUITE_SIZE)
            print(f"{domain:12s} {env_id:32s} {size:5d}  {path.name if path else '-'}")
            env.close()
        return 0
    print(f"{'env':32s} {'domain':10s} {'tools':>5s} {'test suite':>10s}  train")
    for env_id in ENV_IDS:
        env = gym.make(env_id)
        u = env.unwrapped
        print(f"{env_id:32s} {u.domain:10s} {len(u.toolkit):5d} {len(u.task_ids('test')):10d}  generated (seeded, unlimited)")
        env.close()
    return 0
