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

This module builds the argument parser and dispatches (``main``: the ``servicegym`` entry point,
also ``python -m servicegym``). Each verb's handler is in its own module,
``servicegym.envs.cli.cmd_<verb>`` (``cmd_tiny_model`` for ``tiny-model``, ``cmd_loopback_model``
for ``loopback-model``), and what several of them share (``CliError``, the env and option checks,
the collecting behind ``rollout`` and ``evaluate``) in ``servicegym.envs.cli.common``; the handlers
and constants are re-exported here for code that imports them from this module.
"""

from __future__ import annotations

import argparse
import subprocess  # noqa: F401  (kept as an attribute of this module: tests patch cli.main.subprocess.run)
import sys

from servicegym.envs.cli.cmd_bench import BENCHES, cmd_bench, scripts_dir
from servicegym.envs.cli.cmd_check import CHECK_LINE_CHARS, CHECK_SHOWN, cmd_check
from servicegym.envs.cli.cmd_dataset import cmd_dataset
from servicegym.envs.cli.cmd_evaluate import cmd_evaluate
from servicegym.envs.cli.cmd_list import cmd_list
from servicegym.envs.cli.cmd_loopback_model import cmd_loopback_model
from servicegym.envs.cli.cmd_play import PLAY_HELP, cmd_play
from servicegym.envs.cli.cmd_report import cmd_report
from servicegym.envs.cli.cmd_rollout import cmd_rollout
from servicegym.envs.cli.cmd_rubrics import cmd_rubrics
from servicegym.envs.cli.cmd_serve import LOOPBACK_HOSTS, SERVE_PORT, SERVER_HINT, cmd_serve
from servicegym.envs.cli.cmd_tiny_model import cmd_tiny_model
from servicegym.envs.cli.cmd_train import RL_HINT, cmd_train
from servicegym.envs.cli.cmd_view import cmd_view
from servicegym.envs.cli.common import CliError
from servicegym.envs.tasks.sources import SPLITS

# what this module offers: the entry point and parser, and (re-exported) the handlers and constants
__all__ = [
    "BENCHES", "CHECK_LINE_CHARS", "CHECK_SHOWN", "LOOPBACK_HOSTS", "PLAY_HELP", "RL_HINT", "SCORING_HELP",
    "SERVER_HINT", "SERVE_PORT", "CliError", "build_parser", "cmd_bench", "cmd_check", "cmd_dataset", "cmd_evaluate",
    "cmd_list", "cmd_loopback_model", "cmd_play", "cmd_report", "cmd_rollout", "cmd_rubrics", "cmd_serve",
    "cmd_tiny_model", "cmd_train", "cmd_view", "main", "scripts_dir",
]


# ----- parser ----------------------------------------------------------------------------------
SCORING_HELP = ("how a VitaBench task file is scored: rubric (default: what the rubric states, plus no write the user "
                "never asked for) or strict (also the gold end state); generated tasks score alike in both")


def _scoring_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scoring", default=None, choices=["rubric", "strict"], help=SCORING_HELP)


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
