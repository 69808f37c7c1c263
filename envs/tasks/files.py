"""Reading task files: the project's own format or a VitaBench task file, told apart by content.

Loading validates everything up front, so a malformed file fails at ``make`` with a message
naming the file, the task and the field. Files are parsed once per process.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from servicegym.envs.tasks.model import TASK_FILE_FORMAT, Task, TaskFileError, field_path, read_json


def is_vitabench(data: Any) -> bool:
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and "evaluation_criteria" in data[0]
        and "user_scenario" in data[0]
    )


def load_task_file(path: str | os.PathLike[str], domain: str) -> list[Task]:
    """Read a project task file or a VitaBench task file for ``domain``.

    Files are parsed once per process (keyed by path, size and modification time), so many envs
    over one file share its tasks and their built worlds instead of each holding a copy.
    """
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        raise TaskFileError(f"{path}: no such task file") from None
    return list(_load_cached(str(path.resolve()), st.st_size, st.st_mtime_ns, domain))


@lru_cache(maxsize=32)
def _load_cached(path_text: str, size: int, mtime_ns: int, domain: str) -> tuple[Task, ...]:
    return tuple(_load_uncached(Path(path_text), domain))


def _load_uncached(path: Path, domain: str) -> list[Task]:
    data = read_json(path)
    if is_vitabench(data):
        from servicegym.envs.tasks.vitabench import convert_vitabench_file

        return convert_vitabench_file(data, path, domain)
    if not isinstance(data, dict) or data.get("format") != TASK_FILE_FORMAT or not isinstance(data.get("tasks"), list):
        raise TaskFileError(
            f"{path}: neither a VitaBench task list nor a servicegym task file "
            f'({{"format": "{TASK_FILE_FORMAT}", "version": 1, "tasks": [...]}})'
        )
    tasks = []
    for i, raw in enumerate(data["tasks"]):
        tid = raw.get("task_id", f"#{i}") if isinstance(raw, dict) else f"#{i}"
        try:
            task = Task.model_validate(raw)
        except ValidationError as err:
            raise TaskFileError(f"{path}: task {tid} (index {i}): {field_path(err)}") from None
        if task.domain != domain:
            raise TaskFileError(f"{path}: task {tid} (index {i}): field domain: is {task.domain!r}, expected {domain!r}")
        tasks.append(task)
    return tasks
