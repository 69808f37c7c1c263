"""``servicegym serve``: an OpenEnv server of one env (the ``server`` extra) until Ctrl-C or
SIGTERM; ``SERVE_PORT`` is its default port."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

from servicegym.envs.cli.common import CliError, _check_env, _env_kwargs, _one_line, _positive
from servicegym.envs.tasks.model import TaskFileError

SERVER_HINT = "pip install 'servicegym[server]' (openenv)"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
SERVE_PORT = 8100  # serve's default; 8000 is where model endpoints (vLLM, loopback-model) usually listen


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
