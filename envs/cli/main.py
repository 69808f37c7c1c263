"""The ``servicegym`` command line.

Verbs: ``list`` (envs, or ``--suites``), ``play`` (be the agent in a terminal), ``rollout``
(collect episodes to JSONL), ``evaluate`` (collect, then a report), ``report`` (a report from saved
rollouts; of several runs, their comparison through ``servicegym.envs.cli.compare``), ``check`` (load a task file: each task loaded or skipped and why, exit 1 when none
loads), ``rubrics`` (audit a VitaBench file's rubric: each item's code check or why it is unread,
coverage per kind; ``--compile``: a chat model writes the unread ones as typed checks into a
sidecar file the loader picks up), ``view`` (one self-contained HTML page to look at the episodes of a rollouts file, written
or served on 127.0.0.1), ``train`` (stable-baselines3, the ``rl`` extra), ``serve`` (an OpenEnv server of
one env, the ``server`` extra) and ``bench`` (the benchmark scripts).
``rollout`` and ``evaluate`` both run ``servicegym.envs.running.rollouts.collect``; ``evaluate`` and ``report`` both
write through ``servicegym.envs.cli.report``.

A user error (an unknown env id, policy or task id, a missing file, a bad option value, an
endpoint that is not configured) prints one line ``servicegym: error: ...`` on stderr and exits
with status 2; argparse's own errors exit 2 as well.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.running.rollouts import BACKENDS, CollectFailed, RolloutWriteError, collect, failed, read_records
from servicegym.envs.tasks.model import TaskFileError
from servicegym.envs.tasks.sources import SPLITS

# every benchmark script (scripts/bench_<name>.py); each takes --quick
BENCHES = ("envs", "delivery", "payments", "workspace", "rewards", "rollouts", "server", "scoring")


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


def _env_options(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The experiment options of ``env_kwargs`` that differ from their defaults (for run.json)."""
    out = {k: env_kwargs[k] for k in ("call_cap", "disclosure", "gold_documents") if k in env_kwargs}
    if out.get("disclosure") == "minimal":
        del out["disclosure"]
    return out


SCORING_HELP = ("how a VitaBench task file is scored: rubric (default: what the rubric states, plus no write the user "
                "never asked for) or strict (also the gold end state); generated tasks score alike in both")


def _scoring_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scoring", default=None, choices=["rubric", "strict"], help=SCORING_HELP)


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


# ----- list ------------------------------------------------------------------------------------
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


# ----- play ------------------------------------------------------------------------------------
PLAY_HELP = """\
Type one agent action per line:
  a tool call as JSON     {"name": "get_user_all_orders", "arguments": {}}
  or as a block           <tool_call>{"name": ..., "arguments": {...}}</tool_call>
  anything else           a message to the user; ###STOP### in a message ends the conversation
  end a line with \\       to continue the action on the next line (the newline is kept)
Commands: /tools (names), /tools NAME (its schema), /system (the system prompt), /help, /quit"""


def _line_editing() -> bool:
    """Turn on line editing and history for ``input()`` (arrow keys, Ctrl-R), where the platform
    has ``readline``; the session's actions are the history."""
    try:
        import readline  # noqa: F401  (importing it is what enables editing in input())
    except ImportError:
        return False
    return True


def _read_action(stream: Any, prompt: bool) -> str | None:
    """One action from ``stream``: lines ending in a backslash continue; None at end of input.
    At a terminal the line is read with ``input()``, so readline's editing and history apply."""
    parts: list[str] = []
    while True:
        if prompt and stream is sys.stdin:
            try:
                line = input("agent> " if not parts else "  ...> ") + "\n"
            except EOFError:
                line = ""
        else:
            if prompt:
                print("agent> " if not parts else "  ...> ", end="", flush=True)
            line = stream.readline()
        if not line:
            return "\n".join(parts) if parts else None
        line = line.rstrip("\r\n")
        if line.endswith("\\") and not line.endswith("\\\\"):
            parts.append(line[:-1])
            continue
        parts.append(line)
        return "\n".join(parts)


def _summarize_prompt(text: str, lines: int = 4, width: int = 160) -> str:
    body = [ln.strip() for ln in text.splitlines() if ln.strip()]
    out = [ln if len(ln) <= width else ln[: width - 3] + "..." for ln in body[:lines]]
    more = len(body) - len(out)
    return "\n".join("  " + ln for ln in out) + (f"\n  ... ({more} more lines; /system shows all)" if more > 0 else "")


def _indent(text: str) -> str:
    return "\n".join("  " + ln for ln in text.splitlines()) if text else "  (nothing)"


def cmd_play(args: argparse.Namespace) -> int:
    env = _make_env(args.env, args.split, **_env_kwargs(args))
    options = {"task_id": args.task_id} if args.task_id else None
    try:
        obs, info = env.reset(seed=args.seed, options=options)
    except (KeyError, ValueError) as err:
        raise CliError(f"unknown task id {args.task_id!r} for {args.env}: {_one_line(err.args[0] if err.args else err)}") from None
    tools = {t["function"]["name"]: t["function"] for t in info["tools"]}
    interactive = sys.stdin.isatty()
    if interactive:
        _line_editing()
    print(f"servicegym play: {args.env} task {info['task_id']} (domain {info['domain']}, {len(tools)} tools, seed {args.seed})")
    print("system prompt:")
    print(_summarize_prompt(info["system_prompt"]))
    print("Type /help for the action forms and commands.\n")
    print("[user]")
    print(_indent(obs))
    total, steps = 0.0, 0
    while True:
        action = _read_action(sys.stdin, interactive)
        if action is None:
            print("input ended before the episode did (no score)")
            return 0
        cmd = action.strip()
        if not cmd:
            continue
        if cmd in ("/quit", "/exit"):
            print("quit before the episode ended (no score)")
            return 0
        if cmd == "/help":
            print(PLAY_HELP)
            continue
        if cmd == "/system":
            print(info["system_prompt"])
            continue
        if cmd == "/tools":
            for name, fn in tools.items():
                print(f"  {name}: {_one_line(fn.get('description', ''))[:110]}")
            continue
        if cmd.startswith("/tools "):
            name = cmd.split(None, 1)[1].strip()
            if name not in tools:
                print(f"  no tool {name!r}; /tools lists them")
            else:
                print(json.dumps(tools[name], indent=2, ensure_ascii=False))
            continue
        if cmd.startswith("/") and not cmd.startswith("//") and " " not in cmd:
            print(f"  unknown command {cmd!r}; /help lists them (start a message with // to send a leading slash)")
            continue
        if cmd.startswith("//"):
            action = action.replace("//", "/", 1)
        obs, reward, terminated, truncated, step_info = env.step(action)
        total += float(reward)
        steps += 1
        print(_indent(obs))
        if terminated or truncated:
            score = step_info.get("score", {})
            print(f"\nepisode {'terminated' if terminated else 'truncated'}: {step_info.get('termination_reason', '')}")
            print(f"reward={float(reward):g} return={total:g} success={bool(step_info.get('success'))} "
                  f"steps={steps} tool_errors={step_info.get('tool_errors', 0)}")
            shown = {k: v for k, v in score.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            top = {k: v for k, v in shown.items() if "/" not in k}
            failed = sorted(k.removeprefix("rubric/") for k, v in shown.items() if "/" in k and v < 1)
            print("score: " + " ".join(f"{k}={v:.3g}" for k, v in top.items()))
            if failed:
                print("failed checks: " + ", ".join(failed))
            return 0
        if reward:
            print(f"  reward={float(reward):g}")


# ----- rollout / evaluate / report -------------------------------------------------------------
def cmd_rollout(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise CliError(f"--out must be a file (FILE.jsonl), {out} is a directory")
    if out.suffix == "":
        raise CliError(f"--out must name a file such as {out}.jsonl")
    t0 = time.perf_counter()
    summary, ids, policy = _collect(args, out, resume=not args.no_resume)
    print(f"{args.env} policy={policy} {_source(args)} tasks={len(ids)} trials={args.trials} {_summary_line(summary)} "
          f"({time.perf_counter() - t0:.2f} s) -> {out}")
    return _failures(summary)


def _selected(records: list[dict[str, Any]], env_id: str, policy: str, ids: list[str], trials: int) -> list[dict[str, Any]]:
    """The records of this evaluation (a resumed file may hold others: more trials, other tasks)."""
    wanted = set(ids)
    return [r for r in records
            if r.get("env_id", env_id) == env_id and r.get("policy", policy) == policy
            and r.get("task_id") in wanted and int(r.get("trial", 0)) < trials]


def _report(records: list[dict[str, Any]], out: Path, title: str, wide: bool = False) -> None:
    from servicegym.envs.cli.report import print_table, write_report

    summaries, md, png = write_report(records, out, title=title)
    print_table(summaries, title=title, wide=wide)
    print(f"wrote {md} and {png}" if png else f"wrote {md} (no plot: every episode errored)")


def cmd_evaluate(args: argparse.Namespace) -> int:
    from servicegym.envs.cli.report import ReportError, load_rollouts

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CliError(f"--out must be a directory, {out} is a file")
    t0 = time.perf_counter()
    summary, ids, policy = _collect(args, out / "rollouts.jsonl", resume=not args.no_resume)
    from servicegym.envs.cli.compare import run_metadata, write_run_meta  # run.json: what `report A B` labels it by

    write_run_meta(out, run_metadata(env_id=args.env, policy=policy, trials=args.trials, seed=args.seed, split=args.split,
                                     scoring=args.scoring, tasks_file=args.tasks, task_ids=_task_ids(args), tasks=len(ids),
                                     limit=args.limit, llm=_policy_spec(args)[1].get("llm"),
                                     env_options=_env_options(_env_kwargs(args))))
    print(f"{args.env} policy={policy} {_source(args)} tasks={len(ids)} trials={args.trials} {_summary_line(summary)} "
          f"({time.perf_counter() - t0:.2f} s)")
    try:
        records = _selected(load_rollouts(out / "rollouts.jsonl"), args.env, policy, ids, args.trials)
    except ReportError as err:
        raise CliError(_one_line(err)) from None
    _report(records, out, f"servicegym evaluation: {args.env}, policy {policy}", args.wide)
    print(f"rollouts in {out / 'rollouts.jsonl'}")
    return _failures(summary)


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


# ----- view ------------------------------------------------------------------------------------
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


# ----- check -----------------------------------------------------------------------------------
def _env_of_domain(domain: str) -> str | None:
    """The registered env id whose env class serves ``domain``."""
    for env_id, entry in ENV_IDS.items():
        module, _, name = entry.partition(":")
        if getattr(getattr(importlib.import_module(module), name), "domain", None) == domain:
            return env_id
    return None


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


# ----- rubrics ---------------------------------------------------------------------------------
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


# ----- train -----------------------------------------------------------------------------------
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


# ----- dataset ---------------------------------------------------------------------------------
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


# ----- tiny-model ------------------------------------------------------------------------------
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


# ----- serve -----------------------------------------------------------------------------------
SERVER_HINT = "pip install 'servicegym[server]' (openenv)"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
SERVE_PORT = 8100  # serve's default; 8000 is where model endpoints (vLLM, loopback-model) usually listen


def cmd_loopback_model(args: argparse.Namespace) -> int:
    """A stand-in chat model on 127.0.0.1 until Ctrl-C: the golden route of every task of ``--env``'s
    ``--split`` (or ``--tasks`` file), replayed as native tool calls to whoever opens a conversation
    with that task's first message (``llm_policy.golden_replay_handler``); any other conversation gets
    a text reply saying it is unknown, which ends the episode. A GPU-free check of the LLM path:
    ``evaluate --policy llm --base-url http://127.0.0.1:PORT/v1 --model loopback-model`` succeeds."""
    from servicegym.envs.running.llm_policy import golden_replay_handler
    from servicegym.simulators.loopback import DEFAULT_MODEL, LoopbackServer

    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535, got {args.port}")
    envs = args.env or ["servicegym/Delivery-v0"]
    if args.tasks and len(envs) > 1:
        raise CliError("--tasks goes with one --env (the env of the file's domain)")
    tasks, known = [], []
    for env_id in envs:
        env = _make_env(env_id, args.split, **_env_kwargs(args))
        try:
            base = env.unwrapped
            ids = base.task_ids(args.split)
            tasks += [base.source.get(t) for t in ids]
        finally:
            env.close()
        known.append(f"{len(ids)} tasks of {env_id} " + (f"file {args.tasks}" if args.tasks else f"split {args.split}"))
    handler = golden_replay_handler(tasks, strict=False, known=", ".join(known))
    server = LoopbackServer(handler=handler, model=DEFAULT_MODEL, port=args.port, record=False)
    try:
        server.start()
    except OSError as err:
        raise CliError(f"cannot serve on 127.0.0.1:{args.port}: {_one_line(err.strerror or err)}") from None
    print(f"servicegym loopback-model: model {DEFAULT_MODEL!r} at {server.base_url} replaying {', '.join(known)}; "
          "Ctrl-C to stop", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("servicegym loopback-model: stopped", flush=True)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """An OpenEnv server of one env (``servicegym.envs.integrations.openenv.server``) until Ctrl-C
    or SIGTERM, which close the open sessions. The token, if any, is read from the environment
    variable ``--token-env`` names: never from the command line, never printed."""
    _check_env(args.env)
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535, got {args.port}")
    _positive("--max-sessions", args.max_sessions)
    if not args.idle_timeout > 0:
        raise CliError(f"--idle-timeout must be a positive number of seconds, got {args.idle_timeout:g}")
    _positive("--max-message-bytes", args.max_message_bytes, 1024)
    token = None
    if args.token_env is not None:
        if not (args.token_env.isascii() and args.token_env.isidentifier()):
            # not echoed: a token given here by mistake must not reach the terminal or a log
            raise CliError("--token-env takes the NAME of the environment variable that holds the token "
                           "(e.g. --token-env SERVICEGYM_SERVER_TOKEN), never the token itself")
        token = os.environ.get(args.token_env)
        if not token:
            raise CliError(f"--token-env {args.token_env}: that environment variable is not set or is empty")
    env_kwargs = _env_kwargs(args)
    if importlib.util.find_spec("openenv") is None:
        raise CliError(f"serve needs the server extra (openenv is not installed): {SERVER_HINT}")
    # openenv imports Gradio for its optional web UI (unused here; openenv skips it when Gradio is
    # missing): this process serves only, so it starts without it (about 40% of the start-up time)
    sys.modules.setdefault("gradio", None)  # type: ignore[arg-type]
    from servicegym.envs.integrations.openenv import server

    if args.host not in LOOPBACK_HOSTS and token is None:
        print(f"servicegym: warning: serving on {args.host} without a token: anyone who can reach it can open "
              "sessions (use --token-env VAR)", file=sys.stderr)

    def ready(url: str) -> None:
        auth = f"bearer token from ${args.token_env}" if token else "no token"
        print(f"servicegym serve: {args.env} on {url} (WebSocket sessions at {url.replace('http', 'ws', 1)}/ws), "
              f"at most {args.max_sessions} sessions, idle limit {args.idle_timeout:g} s, {auth}; Ctrl-C to stop",
              flush=True)

    try:
        srv = server.serve(args.env, host=args.host, port=args.port, max_sessions=args.max_sessions, token=token,
                           idle_timeout_s=args.idle_timeout, max_message_bytes=args.max_message_bytes,
                           env_kwargs=env_kwargs or None, ready=ready)
    except OSError as err:
        raise CliError(f"cannot serve on {args.host}:{args.port}: {_one_line(err.strerror or err)}") from None
    except (TaskFileError, ValueError) as err:
        raise CliError(_one_line(err)) from None
    print(f"servicegym serve: stopped; {srv.opened} session{'s' if srv.opened != 1 else ''} served, "
          f"{srv.open_at_shutdown} open at shutdown (closed, their envs released)", flush=True)
    return 0


# ----- bench -----------------------------------------------------------------------------------
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


# ----- parser ----------------------------------------------------------------------------------
def _collect_options(p: argparse.ArgumentParser, split: str) -> None:
    """The options ``rollout`` and ``evaluate`` share; ``split`` is the command's default split
    (``rollout`` collects from ``train``: trajectories for fine-tuning must not come from the frozen
    ``test`` suite unless asked for; ``evaluate`` scores on ``test``)."""
    _scoring_option(p)
    p.add_argument("--env", default="servicegym/Delivery-v0", help="env id (servicegym list)")
    p.add_argument("--policy", default="oracle", help="oracle, random or llm")
    p.add_argument("--trials", type=int, default=1, help="trials per task (the k of pass@k, pass^k)")
    p.add_argument("--split", default=split, choices=SPLITS,
                   help=f"task split (default {split}): train (generated, unlimited), dev (generated, the test "
                        "suite's shape, disjoint from both), test (the frozen suite)")
    p.add_argument("--tasks", default=None, help="a task file (project format or VitaBench) instead of the split")
    p.add_argument("--task-ids", default=None, help="comma-separated task ids (default: all of the split or file)")
    p.add_argument("--limit", type=int, default=0, help="only the first N tasks (0: all)")
    p.add_argument("--seed", type=int, default=0, help="base seed (episode seeds derive from it, task and trial)")
    p.add_argument("--concurrency", type=int, default=1, help="episodes in flight at once")
    p.add_argument("--backend", default="auto",
                   help="auto (async for --policy llm, else thread), thread, async, process or ray")
    p.add_argument("--ray-address", default=None,
                   help="--backend ray: a running cluster ('auto', or ray://HOST:10001); default: a local instance")
    p.add_argument("--ray-episodes-per-actor", type=int, default=None,
                   help="--backend ray: episodes each actor runs at once (default 32 for --policy llm, else 1)")
    p.add_argument("--tools-once", action="store_true",
                   help="store each distinct tool list once, in ROLLOUTS.tools.jsonl, and refer to it from the records")
    p.add_argument("--no-resume", action="store_true", help="start over instead of skipping episodes already in the file")
    p.add_argument("--base-url", default=None, help="--policy llm: the chat-completions endpoint (or SERVICEGYM_BASE_URL)")
    p.add_argument("--model", default=None, help="--policy llm: the model name (or SERVICEGYM_MODEL)")
    p.add_argument("--max-prompt-tokens", type=int, default=None,
                   help="--policy llm: leave the oldest turns out of a request that would exceed this many tokens")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--call-cap", type=float, default=None,
                   help="Payments-v0: end each episode when its tool calls reach this multiple of the golden trace's (e.g. 1.2)")
    p.add_argument("--disclosure", default=None, choices=["minimal", "full"],
                   help="Payments-v0: full = the merchant states every private fact in its opening (default minimal)")
    p.add_argument("--gold-documents", action="store_true",
                   help="Payments-v0: the documents that govern the task come with the first observation")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="servicegym", description="servicegym: tool-use environments for LLM agents")
    sub = p.add_subparsers(dest="command", required=True)

    li = sub.add_parser("list", help="list environments (or --suites)")
    li.add_argument("--suites", action="store_true", help="list the frozen test suites")
    li.set_defaults(fn=cmd_list)

    pl = sub.add_parser("play", help="play an env as the agent, one action per line from stdin",
                        description=PLAY_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("--env", default="servicegym/Delivery-v0")
    pl.add_argument("--task-id", default=None, help="a task id (default: one drawn from --split with --seed)")
    pl.add_argument("--split", default="test", choices=SPLITS)
    pl.add_argument("--tasks", default=None, help="a task file instead of the split")
    pl.add_argument("--seed", type=int, default=0)
    _scoring_option(pl)
    pl.set_defaults(fn=cmd_play)

    ro = sub.add_parser("rollout", help="collect episodes of a policy into a JSONL file (resumable)")
    _collect_options(ro, "train")
    ro.add_argument("--out", required=True, help="the JSONL file to write (one episode a line)")
    ro.set_defaults(fn=cmd_rollout)

    ev = sub.add_parser("evaluate", help="collect episodes, then write rollouts.jsonl, report.md and pass_k.png")
    _collect_options(ev, "test")
    ev.add_argument("--out", default="runs/eval", help="output directory")
    ev.add_argument("--wide", action="store_true", help="print every score component (default: the headline ones, "
                                                         "as wide as the terminal; report.md always has all)")
    ev.set_defaults(fn=cmd_evaluate)

    rp = sub.add_parser("report", help="rebuild report.md and pass_k.png from a rollouts file; with several RUNs, "
                                       "compare them (compare.md, .csv, .json, .png)")
    rp.add_argument("runs", nargs="*", metavar="RUN", help="a rollouts JSONL file or an evaluate directory")
    rp.add_argument("--in", dest="inp", default=None, help="one RUN (a rollouts file or evaluate directory), as before")
    rp.add_argument("--allow-mismatch", action="store_true",
                    help="compare runs of different task sets (over the tasks in common) or scoring modes")
    rp.add_argument("--out", required=True, help="output directory")
    rp.add_argument("--title", default=None)
    rp.add_argument("--wide", action="store_true", help="print every score component")
    rp.set_defaults(fn=cmd_report)

    vw = sub.add_parser("view", help="write one self-contained HTML page to look at the episodes of a rollouts file, "
                                     "or of several runs side by side (--serve: on 127.0.0.1)")
    vw.add_argument("runs", nargs="*", metavar="RUN", help="a rollouts JSONL file or an evaluate directory; several: "
                                                          "one page, filtered by run, linking each task across runs")
    vw.add_argument("--in", dest="inp", default=None, help="one RUN (a rollouts JSONL file, or the evaluate directory "
                                                          "holding rollouts.jsonl), as before; with RUNs, the first")
    vw.add_argument("--out", default=None, help="the HTML file (default: view.html beside rollouts.jsonl, NAME.view.html "
                                                "beside NAME.jsonl; several runs: compare.view.html here)")
    vw.add_argument("--title", default=None)
    vw.add_argument("--serve", action="store_true", help="also serve the page on http://127.0.0.1:PORT/ until Ctrl-C")
    vw.add_argument("--port", type=int, default=8765, help="--serve: the port (0: any free one)")
    vw.set_defaults(fn=cmd_view)

    ck = sub.add_parser("check", help="load a task file and report each task: loaded or skipped and why, "
                                      "repair notes, golden route ok")
    ck.add_argument("--tasks", required=True, help="a task file (project format or VitaBench)")
    ck.add_argument("--env", default=None, help="env id (default: the one of the file's domain)")
    ck.add_argument("--strict", action="store_true", help="load as strict_tasks=True: fail at the first bad task")
    ck.add_argument("--verbose", action="store_true",
                    help="list every task with its repair notes (default: the problems and the counts, one screen)")
    ck.set_defaults(fn=cmd_check)

    ru = sub.add_parser("rubrics", help="audit a task file's natural-language rubric items: the code check each became "
                                        "or why it is unread, coverage per kind; --compile: have a chat model write "
                                        "the unread ones as checks the golden route passes (a sidecar file)")
    ru.add_argument("--tasks", required=True, help="a VitaBench task file")
    ru.add_argument("--env", default=None, help="env id (default: the one of the file's domain)")
    ru.add_argument("--task-id", action="append", default=None, metavar="ID[,ID...]",
                    help="only these tasks (repeat or separate with commas)")
    ru.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ru.add_argument("--out", default=None, help="audit: also write the report as markdown to this file; --compile: "
                                                "the rubric-checks file to write (default: <stem>.rubric-checks.json "
                                                "beside the task file)")
    ru.add_argument("--rubric-checks", default=None, metavar="FILE",
                    help="audit with this rubric-checks file (default: the one beside the task file, if any)")
    ru.add_argument("--compile", action="store_true",
                    help="ask the chat model at --base-url for checks of the unread items (API key: OPENAI_API_KEY)")
    ru.add_argument("--base-url", default=None, help="--compile: the OpenAI-compatible endpoint (or SERVICEGYM_BASE_URL)")
    ru.add_argument("--model", default=None, help="--compile: the model name (or SERVICEGYM_MODEL)")
    ru.add_argument("--max-items", type=int, default=None,
                    help="--compile: ask about at most this many items (default 200; each costs at most 2 calls)")
    ru.add_argument("--timeout", type=float, default=60.0, help="--compile: seconds per read of a reply (a call: twice it)")
    ru.add_argument("--max-retries", type=int, default=2, help="--compile: the client's retries on 429, 5xx and timeouts")
    ru.add_argument("--response-format", default="json_schema", choices=["json_schema", "json_object", "none"],
                    help="--compile: the response_format asked for (json_schema: the checks' schema)")
    ru.set_defaults(fn=cmd_rubrics)

    ds = sub.add_parser("dataset", help="write task rows (task_id, seed, system prompt, opening, tools) as JSON lines "
                                        "for a trainer's dataloader (Hugging Face datasets reads them)")
    ds.add_argument("--env", default="servicegym/Delivery-v0")
    ds.add_argument("--split", default="train", choices=SPLITS)
    ds.add_argument("--n", type=int, default=None, help="rows (default: the split's listed tasks)")
    ds.add_argument("--seed", type=int, default=0, help="base seed of the rows' episode seeds")
    ds.add_argument("--user-tool", action="store_true", help="rows for envs made with user_tool=True (respond tool)")
    ds.add_argument("--out", required=True, help="the JSONL file to write")
    ds.set_defaults(fn=cmd_dataset)

    tm = sub.add_parser("tiny-model", help="write a random tiny Qwen2 chat model and its tokenizer (a few MB, offline) "
                                           "for running the TRL path on a CPU (servicegym[trl]); it learns nothing")
    tm.add_argument("dir", help="the directory to write (save_pretrained: config, weights, tokenizer, chat template)")
    tm.add_argument("--env", action="append", default=None,
                    help="env id whose text the tokenizer is trained on (repeatable; default every env)")
    tm.add_argument("--tasks", type=int, default=2, help="golden conversations per env and split in the tokenizer's text")
    tm.add_argument("--vocab-size", type=int, default=8000, help="at most this many BPE tokens")
    tm.add_argument("--hidden-size", type=int, default=32)
    tm.add_argument("--layers", type=int, default=2)
    tm.add_argument("--seed", type=int, default=0, help="the weights' seed (the same arguments write the same files)")
    tm.set_defaults(fn=cmd_tiny_model)

    tr = sub.add_parser("train", help="train a stable-baselines3 agent on a discrete-action adapter (servicegym[rl])")
    tr.add_argument("--env", default="servicegym/Delivery-v0")
    tr.add_argument("--difficulty", type=int, default=0)
    tr.add_argument("--timesteps", type=int, default=60_000, help="total environment steps")
    tr.add_argument("--algo", default="maskable_ppo", choices=["maskable_ppo", "ppo"])
    tr.add_argument("--eval-tasks", type=int, default=50, help="held-out tasks the trained and random policies are scored on")
    tr.add_argument("--n-envs", type=int, default=4, help="parallel training envs")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--out", default="runs/train", help="output directory (model, learning_curve.png, curve.json)")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(fn=cmd_train)

    sv = sub.add_parser("serve", help="serve one env over OpenEnv's WebSocket protocol (servicegym[server]): a session "
                                      "per connection, the tools listed and called MCP-style, the user as a tool")
    sv.add_argument("--env", required=True, help="env id (servicegym list)")
    sv.add_argument("--host", default="127.0.0.1",
                    help="the address to bind (default: loopback only; 0.0.0.0 opens it to the network: use a token)")
    sv.add_argument("--port", type=int, default=SERVE_PORT,
                    help=f"the port (default {SERVE_PORT}, not 8000: a model endpoint's usual port; 0: any free one, printed)")
    sv.add_argument("--max-sessions", type=int, default=64, help="sessions open at once; one more gets a 'server full' error")
    sv.add_argument("--token-env", default=None, metavar="VAR",
                    help="the environment variable holding the bearer token clients must send (never the token itself)")
    sv.add_argument("--idle-timeout", type=float, default=300.0, help="seconds a session may stay silent before it is closed")
    sv.add_argument("--max-message-bytes", type=int, default=8 * 1024 * 1024,
                    help="larger messages get an error reply and are not run")
    sv.add_argument("--tasks", default=None, help="a task file (project format or VitaBench) for the sessions' envs")
    _scoring_option(sv)
    sv.set_defaults(fn=cmd_serve)

    lm = sub.add_parser("loopback-model", help="serve a stand-in chat model on 127.0.0.1 that replays each known task's "
                                                "golden route (a GPU-free check of evaluate --policy llm)")
    lm.add_argument("--env", action="append", default=None,
                    help="env id whose tasks it knows (repeatable; default servicegym/Delivery-v0)")
    lm.add_argument("--split", default="test", choices=SPLITS, help="the split whose tasks it knows (default test)")
    lm.add_argument("--tasks", default=None, help="a task file instead of the split")
    lm.add_argument("--port", type=int, default=8000, help="the port on 127.0.0.1 (default 8000; 0: any free one, printed)")
    lm.set_defaults(fn=cmd_loopback_model)

    be = sub.add_parser("bench", usage="servicegym bench NAME [--quick] [script options]",
                        help=f"run a benchmark script ({', '.join(BENCHES)}); other options go to the script")
    be.add_argument("--which", default=None, help=f"the benchmark, also given as the first word: {', '.join(BENCHES)}")
    be.add_argument("--quick", action="store_true", help="fewer repetitions (every benchmark takes it)")
    be.set_defaults(fn=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.fn(args, extra) if args.command == "bench" else args.fn(args)
    except CliError as err:
        print(f"servicegym: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into e.g. `head`
        return 0
    except KeyboardInterrupt:
        print("servicegym: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
