"""Where tasks come from: the task model (``model``), task files (``files``: the project's format
or a VitaBench file, told apart by content), task sources (``sources``: a fixed list, or seeded
generators plus a frozen suite), the generators and their content (``generators``), the
VitaBench loader (``vitabench``) and the frozen suites with their files (``suites``, ``data/``).

Tasks are data: nothing here imports an env class."""

from servicegym.envs.tasks.files import file_domain, is_vitabench, load_task_file
from servicegym.envs.tasks.model import (
    TASK_FILE_FORMAT,
    LoadedTasks,
    SkippedTask,
    Task,
    TaskFileError,
    TaskSkippedWarning,
    field_path,
    save_task_file,
)
from servicegym.envs.tasks.sources import GENERATED_CACHE_SIZE, GeneratedSource, ListSource, TaskSource

__all__ = [
    "GENERATED_CACHE_SIZE", "TASK_FILE_FORMAT", "GeneratedSource", "ListSource", "LoadedTasks", "SkippedTask", "Task",
    "TaskFileError", "TaskSkippedWarning", "TaskSource", "field_path", "file_domain", "is_vitabench", "load_task_file",
    "save_task_file",
]
