"""``servicegym loopback-model``: a stand-in chat model on 127.0.0.1 that replays the golden
route of each known task (a GPU-free check of ``evaluate --policy llm``)."""

from __future__ import annotations

import argparse
import time

from servicegym.envs.cli.common import CliError, _env_kwargs, _make_env, _one_line


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
