"""``python -m servicegym``: the command line (same as the ``servicegym`` command)."""

from servicegym.envs.cli.main import main

raise SystemExit(main())
