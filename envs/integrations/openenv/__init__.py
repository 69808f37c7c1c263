"""servicegym envs over OpenEnv (``openenv`` 0.10, the ``server`` extra: ``pip install 'servicegym[server]'``;
or ``openenv-core`` 0.3, ``server-legacy``: ``compat`` holds what differs).

- ``server``: ``servicegym serve --env ID``: an OpenEnv server (openenv's own app and WebSocket
  session protocol), one env per session, the env's tools listed and called MCP-style, the
  simulated user reachable as the tool ``respond``; token, size and idle limits.
- ``client``: ``ServiceGymClient`` (openenv's ``EnvClient`` with the token), ``SessionPool``
  (sessions spread over several servers), ``RemoteEnv`` (a Gymnasium env on a server session),
  ``remote_rollouts`` (the rollout collector's records from servers) and
  ``ServiceGymSessionFactory`` (openenv's harness sessions, as TRL's async GRPO takes them).

Both import ``openenv`` (heavy: it brings FastAPI, FastMCP and Gradio), so import them as needed.
"""
