"""What the subcommands of ``servicegym`` share: ``CliError`` (a user error: one line, exit
status 2), the checks of env ids, task files and numbers, the env each command makes, and the
running of ``rollout``/``evaluate`` (``_collect``: options checked, then
``servicegym.envs.running.rollouts.collect``; its summary line and failure count) and the report
``evaluate`` and ``report`` both write (``_report``)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.running.rollouts import BACKENDS, CollectFailed, RolloutWriteError, collect, failed, read_records
from servicegym.envs.tasks.model import TaskFileError


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


# ----- shared checks ---------------------------------------------------------------------------
def _check_env(env_id: str) -> None:
    if env_id not in ENV_IDS:
        raise CliError(f"unknown env {env_id!r}; known: {', '.join(ENV_IDS)}")


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    tasks = getattr(args, "tasks", None)
    if tasks:
        if not Path(tasks).is_file():
            raise CliError(f"task file not found: {tasks}")
        kwargs["tasks"] = tasks
    scoring = getattr(args, "scoring", None)
    if scoring is not None:
        kwargs["scoring"] = scoring
    # BizBench's experiments, Payments-v0 only: --call-cap, --disclosure, --gold-documents
    experiment = {k: v for k, v in (("call_cap", getattr(args, "call_cap", None)), ("disclosure", getattr(args, "disclosure", None)),
                                    ("gold_documents", getattr(args, "gold_documents", False) or None)) if v is not None}
    if experiment:
        if getattr(args, "env", "") != "servicegym/Payments-v0":
            flags = ", ".join("--" + k.replace("_", "-") for k in experiment)
            raise CliError(f"{flags} apply to --env servicegym/Payments-v0 only")
        if "call_cap" in experiment and not 0 < experiment["call_cap"] < float("inf"):
            raise CliError(f"--call-cap must be a positive multiple of the golden trace's tool calls, got {experiment['call_cap']:g}")
        kwargs.update(experiment)
    return kwargs


def _make_env(env_id: str, split: str = "test", **kwargs: Any) -> gym.Env:
    _check_env(env_id)
    try:
        return gym.make(env_id, split=split, **kwargs)
    except TaskFileError as err:
        raise CliError(_one_line(err)) from None


def _positive(name: str, value: int, minimum: int = 1) -> None:
    if value < minimum:
        raise CliError(f"{name} must be at least {minimum}, got {value}")


def _policies() -> list[str]:
    from servicegym.envs.running.policies import POLICIES

    names = list(POLICIES)
    if "llm" not in names:
        names.append("llm")
    return names


def _llm_config(args: argparse.Namespace) -> dict[str, Any]:
    """The ``llm=`` dict of ``--policy llm``: flags first, then SERVICEGYM_BASE_URL / SERVICEGYM_MODEL."""
    from servicegym.simulators.llm import LLMConfig

    given = {"base_url": args.base_url, "model": args.model}
    try:
        cfg = LLMConfig.resolve({k: v for k, v in given.items() if v})
    except ValueError as err:
        raise CliError(f"--policy llm: {_one_line(err)} (use --base-url/--model or SERVICEGYM_BASE_URL/SERVICEGYM_MODEL)") from None
    return cfg.model_dump(exclude_defaults=True) | {"base_url": cfg.base_url, "model": cfg.model}


def _policy_spec(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The policy name and the keyword arguments ``make_policy`` gets (the endpoint for ``llm``)."""
    if args.policy not in _policies():
        raise CliError(f"unknown policy {args.policy!r}; choose from {', '.join(_policies())}")
    max_prompt = getattr(args, "max_prompt_tokens", None)
    if args.policy == "llm":
        kwargs: dict[str, Any] = {"llm": _llm_config(args)}
        if max_prompt is not None:
            _positive("--max-prompt-tokens", max_prompt)
            kwargs["max_prompt_tokens"] = max_prompt
        return "llm", kwargs
    if max_prompt is not None:
        raise CliError("--max-prompt-tokens applies to --policy llm only")
    return args.policy, {}


def _task_ids(args: argparse.Namespace) -> list[str] | None:
    if not getattr(args, "task_ids", None):
        return None
    ids = [t for t in args.task_ids.split(",") if t]
    if not ids:
        raise CliError("--task-ids is empty")
    return ids


def _check_task_ids(env_id: str, split: str, env_kwargs: dict[str, Any], ids: list[str] | None, limit: int) -> list[str]:
    """The task ids a run covers; an error naming the first unknown id."""
    env = _make_env(env_id, split, **env_kwargs)
    try:
        known = env.unwrapped.task_ids(split)
        if ids is None:
            chosen = known[:limit] if limit else known
        else:
            src = env.unwrapped.source
            for t in ids:
                try:
                    src.get(t)
                except (KeyError, ValueError) as err:
                    raise CliError(f"unknown task id {t!r} for {env_id}: {_one_line(err.args[0] if err.args else err)}") from None
            chosen = ids[:limit] if limit else ids
    finally:
        env.close()
    if not chosen:
        raise CliError(f"no tasks in split {split!r} of {env_id}")
    return chosen


def _collect(args: argparse.Namespace, out: Path, resume: bool) -> tuple[Any, list[str], str]:
    """Validate the options of ``rollout``/``evaluate`` and run ``servicegym.envs.running.rollouts.collect``."""
    _check_env(args.env)
    _positive("--trials", args.trials)
    _positive("--concurrency", args.concurrency)
    _positive("--limit", args.limit, 0)
    if args.backend not in BACKENDS:
        raise CliError(f"unknown backend {args.backend!r}; choose from {', '.join(BACKENDS)}")
    policy, policy_kwargs = _policy_spec(args)
    env_kwargs = _env_kwargs(args)
    ids = _check_task_ids(args.env, args.split, env_kwargs, _task_ids(args), args.limit)
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise CliError("--backend ray needs Ray: pip install 'servicegym[ray]' (or ray)")
    if args.backend != "ray" and (args.ray_address or args.ray_episodes_per_actor):
        raise CliError("--ray-address and --ray-episodes-per-actor go with --backend ray")
    if args.ray_episodes_per_actor is not None:
        _positive("--ray-episodes-per-actor", args.ray_episodes_per_actor)

    if not resume and out.is_file() and out.stat().st_size:
        n = sum(1 for line in out.read_bytes().splitlines() if line.strip())
        print(f"servicegym: --no-resume: removing the {n} episode{'s' if n != 1 else ''} already in {out}",
              file=sys.stderr)
    try:
        summary = collect(args.env, policy, out=out, task_ids=ids, split=args.split, trials=args.trials,
                          concurrency=args.concurrency, backend=args.backend, env_kwargs=env_kwargs or None,
                          seed=args.seed, resume=resume, progress=not args.quiet, policy_kwargs=policy_kwargs or None,
                          ray_address=args.ray_address, ray_episodes_per_actor=args.ray_episodes_per_actor,
                          inline_tools=not args.tools_once)
    except CollectFailed as err:  # every episode errored: the summary line and exit status 1 say so
        print(f"servicegym: {_one_line(err)}", file=sys.stderr)
        summary = err.summary
    except RolloutWriteError as err:  # e.g. the disk is full: the file keeps whole records
        raise CliError(_one_line(err.strerror or err)) from None
    except OSError as err:
        raise CliError(f"cannot write {out}: {_one_line(err.strerror or err)}") from None
    except ValueError as err:  # e.g. a resumed file made with another --seed
        raise CliError(_one_line(err)) from None
    return summary, ids, policy


def _source(args: argparse.Namespace) -> str:
    """Where a run's tasks came from, for its summary line: ``file=PATH``, ``split=custom`` (the
    ids of ``--task-ids``), or the split actually used."""
    if args.tasks:
        return f"file={args.tasks}"
    return "split=custom" if _task_ids(args) else f"split={args.split}"


def _summary_line(summary: Any) -> str:
    return (f"episodes={summary.episodes} (run now {summary.collected}, resumed {summary.skipped}) "
            f"successes={summary.successes} errors={summary.errors} failed={summary.failed} "
            f"episodes/s={summary.episodes_per_s:.1f}")


def _failures(summary: Any) -> int:
    """0, or 1 with a summary line on stderr when episodes failed for reasons other than the agent's
    behaviour (an endpoint down, a 401, a broken user model): their scores say nothing of the agent."""
    if not summary.failed:
        return 0
    reasons: dict[str, int] = {}
    first = ""
    for rec in read_records(summary.path, resolve_tools=False):
        if rec.get("env_id") == summary.env_id and rec.get("policy") == summary.policy and failed(rec):
            reason = rec.get("termination_reason") or "error"
            reasons[reason] = reasons.get(reason, 0) + 1
            first = first or _one_line(rec.get("error") or "")
    counts = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    print(f"servicegym: {summary.failed} of {summary.episodes} episodes failed ({counts})"
          f"{': ' + first[:300] if first else ''}; run the same command again to retry them", file=sys.stderr)
    return 1


def _report(records: list[dict[str, Any]], out: Path, title: str, wide: bool = False) -> None:
    from servicegym.envs.cli.report import print_table, write_report

    summaries, md, png = write_report(records, out, title=title)
    print_table(summaries, title=title, wide=wide)
    print(f"wrote {md} and {png}" if png else f"wrote {md} (no plot: every episode errored)")


def _env_of_domain(domain: str) -> str | None:
    """The registered env id whose env class serves ``domain``."""
    for env_id, entry in ENV_IDS.items():
        module, _, name = entry.partition(":")
        if getattr(getattr(importlib.import_module(module), name), "domain", None) == domain:
            return env_id
    return None
