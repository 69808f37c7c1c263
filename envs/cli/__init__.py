"""The ``servicegym`` command line (``main``: the parser and dispatch; ``cmd_<verb>``: each
subcommand's handler, e.g. ``cmd_play``, ``cmd_evaluate``; ``common``: what they share) and its
reports (``report``: Avg@k, Pass@k, Pass^k with confidence intervals, markdown, the Pass^k plot)."""
