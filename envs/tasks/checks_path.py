"""Where a task file's rubric-checks file lies, and the warning for one left out: what
``load_task_file`` needs of rubric-checks files for every task file it reads, kept apart from
their reader (``vitabench/checks_file.py``), which imports the rubric reader: a project's own task
file (a generated env's frozen suite) loads without it."""

from __future__ import annotations

import os
from pathlib import Path

CHECKS_SUFFIX = ".rubric-checks.json"


class RubricChecksWarning(UserWarning):
    """A rubric-checks file, or one entry of it, that the loader leaves out (the reason says why)."""


def default_checks_path(task_path: str | os.PathLike[str]) -> Path:
    """``<stem>.rubric-checks.json`` beside the task file (``tasks_en.json`` ->
    ``tasks_en.rubric-checks.json``; a ``.json.gz`` file loses both suffixes)."""
    p = Path(task_path)
    name = p.name
    for suffix in (".gz", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return p.with_name(name + CHECKS_SUFFIX)
