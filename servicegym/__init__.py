"""servicegym: Gymnasium environments in which LLM agents serve simulated users with tools.

``import servicegym`` registers the ids (``servicegym/Delivery-v0``, ``InStore-v0``,
``Travel-v0``, ``CrossScenario-v0``, ``Payments-v0``, ``Workspace-v0``), so
``gymnasium.make("servicegym/Delivery-v0")`` works after it.

The packages, each owning one part of the architecture (data flows down this list):

- ``servicegym.envs``: the Gymnasium surface (env classes, task sources, running envs,
  integrations, the command line);
- ``servicegym.world_state``: the database and its deterministic transitions (tables, tools);
- ``servicegym.simulators``: simulated users (scripted or LLM) and the loopback model server;
- ``servicegym.rewards``: scoring (rubrics, G/P/F, PROC/COMP, the LLM judge), metrics and reward
  wrappers.

In the repository they are the top-level folders ``envs/``, ``world_state/``, ``simulators/``
and ``rewards/``; ``pyproject.toml`` ships them inside this package.
"""

from __future__ import annotations

import os

# A source checkout used without being installed (PYTHONPATH pointing at it, Ray's working_dir):
# the packages sit beside this folder instead of inside it. Installed (wheel or editable), they
# are found the usual way and this does nothing.
_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_here)
if not os.path.isdir(os.path.join(_here, "envs")) and os.path.isfile(os.path.join(_root, "envs", "__init__.py")):
    __path__.append(_root)  # noqa: F821  (the package's own search path)

from servicegym.envs import ENV_IDS, Task, TaskFileError, ToolUseEnv, load_task_file  # noqa: E402  registers the ids

__all__ = ["ENV_IDS", "Task", "TaskFileError", "ToolUseEnv", "load_task_file", "__version__"]

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("servicegym")
except PackageNotFoundError:  # a source checkout that is not installed
    __version__ = "0+unknown"
