"""``servicegym check``: load a task file as an env would and report each task: loaded or
skipped and why, its repair notes, whether its golden route succeeds."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gymnasium as gym

from servicegym.envs.cli.common import CliError, _check_env, _env_of_domain, _one_line
from servicegym.envs.tasks.model import TaskFileError


def _skip_line(skip: dict[str, Any]) -> str:
    field = f"field {skip['field']}: " if skip["field"] else ""
    return f"{skip['task_id']}  skipped  (index {skip['index']}) {field}{skip['reason']}"


CHECK_SHOWN = 20  # check: problems listed without --verbose
CHECK_LINE_CHARS = 240  # ... each cut to this many characters


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cmd_check(args: argparse.Namespace) -> int:
    """Load a task file as an env would and report each task: loaded or skipped (with the field and
    reason), its repair notes, and whether its golden route succeeds when played through the env.
    By default one screen: the problems (skipped tasks, golden routes that fail; the first
    ``CHECK_SHOWN``) and the counts; ``--verbose`` lists every task with its notes.
    Exit 0 when the file loads (even with skipped tasks), 1 when no task of it loads."""
    import warnings

    from servicegym.envs.running.policies import OraclePolicy, run_episode
    from servicegym.envs.tasks.files import file_domain, load_task_file
    from servicegym.envs.tasks.model import TaskSkippedWarning

    path = Path(args.tasks)
    if not path.is_file():
        raise CliError(f"task file not found: {args.tasks}")
    if args.env is not None:
        _check_env(args.env)
        env_id = args.env
    else:
        try:
            domain = file_domain(path)
        except TaskFileError as err:
            print(f"servicegym check: {_one_line(err)}")
            print("summary: 0 loaded, 0 skipped (not a task file)")
            return 1
        env_id = _env_of_domain(domain) if domain else None
        if env_id is None:
            raise CliError(f"cannot tell the env of {path} (its tasks name domain {domain!r}); pass --env")
    print(f"servicegym check: {path} with {env_id}{' (strict)' if args.strict else ''}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TaskSkippedWarning)  # the report below lists them
        try:
            env = gym.make(env_id, tasks=str(path), strict_tasks=args.strict)
        except TaskFileError as err:
            for skip in err.skipped:
                print(_skip_line(skip))
            if not err.skipped:
                print(_one_line(err))
            print(f"summary: 0 loaded, {len(err.skipped)} skipped: no task of the file loads")
            return 1
        # each task's place in the file, to report in file order (the env made the same load: cached)
        file_tasks = load_task_file(path, env.unwrapped.domain, strict=args.strict)
        indexes = {t.task_id: i for t, i in zip(file_tasks, file_tasks.indexes)}
    u = env.unwrapped
    rows: list[tuple[int, bool, list[str]]] = []  # (place in the file, a problem, lines)
    replay_ok = noted = notes = 0
    for tid in u.task_ids():
        task = u.source.get(tid)
        ok = bool(task.golden_actions) and run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})["success"]
        replay_ok += ok
        noted += bool(task.notes)
        notes += len(task.notes)
        lines = [f"{tid}  loaded  golden route {'ok' if ok else 'FAILS'}"]
        lines += [f"    note: {n}" for n in task.notes]
        rows.append((indexes.get(tid, len(indexes)), not ok, lines))
    for skip in u.skipped_tasks:
        rows.append((skip["index"], True, [_skip_line(skip)]))
    rows.sort(key=lambda r: r[0])
    problems = [r for r in rows if r[1]]
    if args.verbose:
        for _, _, lines in rows:
            print("\n".join(lines))
    else:
        for _, _, lines in problems[:CHECK_SHOWN]:
            print(_clip(lines[0], CHECK_LINE_CHARS))
        if len(problems) > CHECK_SHOWN:
            print(f"... and {len(problems) - CHECK_SHOWN} more (--verbose lists every task)")
        if noted:
            print(f"{noted} task{'s' if noted != 1 else ''} loaded with {notes} repair note{'s' if notes != 1 else ''} "
                  "(--verbose shows them)")
    loaded, skipped = len(u.task_ids()), len(u.skipped_tasks)
    print(f"summary: {loaded} loaded, {skipped} skipped; golden route ok for {replay_ok} of {loaded}")
    env.close()
    return 0
