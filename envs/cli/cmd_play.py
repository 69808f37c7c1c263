"""``servicegym play``: be the agent of one episode in a terminal, one action per line from stdin
(``PLAY_HELP``: the action forms and the /commands)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from servicegym.envs.cli.common import CliError, _env_kwargs, _make_env, _one_line

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
