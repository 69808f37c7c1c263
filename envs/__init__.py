"""servicegym's Gymnasium surface, in five parts that stand in layers (each imports only those
above it in this list, never the other way):

- ``tasks``: where tasks come from: the task model, task files (the project's format and the
  VitaBench loader), task sources, the seeded generators with their content, the frozen suites;
- ``environments``: the Gymnasium env classes, their shared base ``ToolUseEnv``, action parsing,
  the text space, and the registration of the ids;
- ``running``: running envs: reference and LLM policies, the episode worker, the rollout collector
  and its backends (threads, processes, asyncio, Ray), vector-env helpers;
- ``integrations``: adapters to other libraries (stable-baselines3);
- ``cli``: the ``servicegym`` command line and its reports.

Importing it registers the ids (``import servicegym`` does).
"""

from servicegym.envs.environments.base import ToolUseEnv
from servicegym.envs.environments.registration import ENV_IDS
from servicegym.envs.tasks import Task, TaskFileError, load_task_file

__all__ = ["ENV_IDS", "ToolUseEnv", "Task", "TaskFileError", "load_task_file"]
