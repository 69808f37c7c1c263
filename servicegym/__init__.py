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
import sys
from importlib.machinery import FileFinder
from typing import Any

# In the repository the subpackages sit beside this folder instead of inside it: a source checkout
# used without being installed (PYTHONPATH pointing at it, Ray's working_dir), and an editable
# install, whose finder maps the imports but leaves them out of ``__path__``. Then ``__path__``
# gets one more entry, which a path hook of ours reads as the repository root showing only those
# subpackages: not the root itself, where ``servicegym/`` (this package again: pkgutil.walk_packages
# would recurse into servicegym.servicegym... without end), ``tests/`` and the rest also sit.
# Installed as a wheel, the subpackages are inside this folder and this does nothing.
_SUBPACKAGES = ("envs", "rewards", "simulators", "world_state")
_MARK = "<servicegym subpackages>"
_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_here)


class _Subpackages:
    """The path-entry finder of ``<root>/<servicegym subpackages>``: the root's FileFinder, limited
    to ``_SUBPACKAGES`` (for imports and for ``pkgutil.iter_modules`` alike)."""

    def __init__(self, root: str) -> None:
        self.path = root
        self._finder = FileFinder.path_hook(*_loader_details())(root)

    def find_spec(self, fullname: str, target: Any = None) -> Any:
        if fullname.rpartition(".")[2] not in _SUBPACKAGES:
            return None
        return self._finder.find_spec(fullname, target)

    def invalidate_caches(self) -> None:
        self._finder.invalidate_caches()

    def iter_modules(self, prefix: str = "") -> Any:
        for name in _SUBPACKAGES:
            if os.path.isfile(os.path.join(self.path, name, "__init__.py")):
                yield prefix + name, True


def _loader_details() -> list[tuple[Any, list[str]]]:
    from importlib.machinery import (
        BYTECODE_SUFFIXES,
        EXTENSION_SUFFIXES,
        SOURCE_SUFFIXES,
        ExtensionFileLoader,
        SourceFileLoader,
        SourcelessFileLoader,
    )

    return [(ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceFileLoader, SOURCE_SUFFIXES),
            (SourcelessFileLoader, BYTECODE_SUFFIXES)]


def _subpackages_hook(entry: str) -> _Subpackages:
    if not isinstance(entry, str) or os.path.basename(entry) != _MARK:
        raise ImportError("not a servicegym subpackages entry")
    return _Subpackages(os.path.dirname(entry))


if not os.path.isdir(os.path.join(_here, "envs")) and os.path.isfile(os.path.join(_root, "envs", "__init__.py")):
    if _subpackages_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, _subpackages_hook)
    __path__.append(os.path.join(_root, _MARK))  # noqa: F821  (the package's own search path)

from servicegym.envs import ENV_IDS, Task, TaskFileError, ToolUseEnv, load_task_file  # noqa: E402  registers the ids

__all__ = ["ENV_IDS", "Task", "TaskFileError", "ToolUseEnv", "load_task_file", "__version__"]

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("servicegym")
except PackageNotFoundError:  # a source checkout that is not installed
    __version__ = "0+unknown"
