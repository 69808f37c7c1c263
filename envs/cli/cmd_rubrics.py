"""``servicegym rubrics``: audit what became of a VitaBench task file's rubric items, or with
``--compile`` have a chat model write the unread ones as typed checks (a sidecar file)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from servicegym.envs.cli.common import CliError, _check_env, _env_of_domain, _make_env, _one_line, _positive
from servicegym.envs.tasks.model import TaskFileError


def cmd_rubrics(args: argparse.Namespace) -> int:
    """Audit what became of a task file's natural-language rubric items (each one's code check, or
    why it is unread; coverage per kind and per file), or with ``--compile`` have a chat model write
    the unread ones as typed checks, keep those the golden route passes and write the sidecar."""
    import warnings

    from servicegym.envs.tasks.model import TaskSkippedWarning, read_json
    from servicegym.envs.tasks.vitabench import audit as rubric_audit
    from servicegym.envs.tasks.vitabench.checks_file import RubricChecksWarning, default_checks_path, read_checks

    path = Path(args.tasks)
    if not path.is_file():
        raise CliError(f"task file not found: {args.tasks}")
    if args.rubric_checks is not None and not Path(args.rubric_checks).is_file():
        raise CliError(f"rubric checks file not found: {args.rubric_checks}")
    env_id = _env_for_file(path, args.env)
    ids = [t for group in args.task_id or [] for t in group.split(",") if t] or None
    if args.compile:
        return _rubrics_compile(args, path, env_id, ids)
    if args.max_items is not None or args.base_url or args.model:
        raise CliError("--base-url, --model and --max-items apply to --compile only")
    checks = Path(args.rubric_checks) if args.rubric_checks else default_checks_path(path)
    used = str(checks) if checks.is_file() else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", TaskSkippedWarning)  # the report lists them
        warnings.simplefilter("always", RubricChecksWarning)
        env = _make_env(env_id, tasks=str(path), **({"rubric_checks": used} if args.rubric_checks else {}))
    problems = [str(w.message) for w in caught if issubclass(w.category, RubricChecksWarning)]
    unknown = sorted(set(ids or ()) - set(env.unwrapped.task_ids()) - {s["task_id"] for s in env.unwrapped.skipped_tasks})
    if unknown:
        raise CliError(f"unknown task id(s) {', '.join(unknown)} in {path}")
    supplied = read_checks(used, read_json(path))[0] if used else {}
    report = rubric_audit.audit_env(env, str(path), env_id, ids, supplied, used, problems)
    env.close()
    if args.out:
        try:
            Path(args.out).write_text(rubric_audit.render_markdown(report) + "\n", encoding="utf-8")
        except OSError as err:
            raise CliError(f"cannot write {args.out}: {err.strerror or err}") from None
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        print(rubric_audit.render_text(report))
        if args.out:
            print(f"markdown written to {args.out}")
    return 0


def _env_for_file(path: Path, env: str | None) -> str:
    """``env`` checked, or the env of the task file's domain (a ``CliError`` when there is none)."""
    from servicegym.envs.tasks.files import file_domain

    if env is not None:
        _check_env(env)
        return env
    try:
        domain = file_domain(path)
    except TaskFileError as err:
        raise CliError(_one_line(err)) from None
    env_id = _env_of_domain(domain) if domain else None
    if env_id is None:
        raise CliError(f"cannot tell the env of {path} (its tasks name domain {domain!r}); pass --env")
    return env_id


def _writable_dir(folder: Path) -> bool:
    """A folder files may be written to: writable for this user and not marked read-only for all
    (no write bit: a data folder such as ``shared/data``, even for root)."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return False
    return folder.is_dir() and bool(mode & 0o222) and os.access(folder, os.W_OK)


def _rubrics_compile(args: argparse.Namespace, path: Path, env_id: str, ids: list[str] | None) -> int:
    from servicegym.envs.tasks.vitabench import llm_checks
    from servicegym.envs.tasks.vitabench.checks_file import default_checks_path
    from servicegym.simulators.llm import LLMConfig

    if args.rubric_checks is not None:
        raise CliError("--compile writes the checks to --out (they are merged with that file's); "
                       "--rubric-checks applies to the audit only")
    max_items = llm_checks.DEFAULT_MAX_ITEMS if args.max_items is None else args.max_items
    _positive("--max-items", max_items)
    out = Path(args.out) if args.out else default_checks_path(path)
    if not _writable_dir(out.parent):
        raise CliError(f"cannot write the rubric checks beside the task file ({out.parent} is not writable); "
                       "pass --out FILE" if not args.out else f"cannot write {out}: {out.parent} is not writable")
    try:
        cfg = LLMConfig.resolve({k: v for k, v in {
            "base_url": args.base_url, "model": args.model, "timeout_s": args.timeout, "deadline_s": 2 * args.timeout,
            "max_retries": args.max_retries, "max_tokens": llm_checks.MAX_REPLY_TOKENS,
            "max_response_bytes": llm_checks.MAX_RESPONSE_BYTES}.items() if v is not None})
    except ValueError as err:
        raise CliError(f"--compile: {_one_line(err)} (use --base-url/--model or SERVICEGYM_BASE_URL/SERVICEGYM_MODEL)") \
            from None

    def progress(item: Any) -> None:
        if not args.json:
            print(f"{item.task_id} [{item.index}] {item.status}", file=sys.stderr, flush=True)

    try:
        report = llm_checks.compile_checks(path, env_id, cfg, out, max_items, ids, args.response_format,
                                           progress=progress)
    except (TaskFileError, ValueError) as err:
        raise CliError(_one_line(err)) from None
    except OSError as err:
        raise CliError(f"cannot write {out}: {err.strerror or err}") from None
    print(json.dumps(report.to_json(), ensure_ascii=False, indent=1) if args.json else llm_checks.render_compile(report))
    return 0
