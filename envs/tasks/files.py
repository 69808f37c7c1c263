"""Reading task files: the project's own format or a VitaBench task file, told apart by content.

Loading validates everything up front. A task that cannot be used faithfully (a malformed field,
an id used twice, for VitaBench a gold end state no golden route reaches) is skipped: one
``TaskSkippedWarning`` per task names the file, the task id and index, the field and the reason,
and the returned ``LoadedTasks`` lists it in ``skipped``. A file none of whose tasks loads is a
``TaskFileError`` listing every reason; ``strict=True`` raises on the first bad task instead.
Files are parsed once per process.

A VitaBench file's rubric items the code compiler does not read may come with typed checks from a
rubric-checks file (``servicegym rubrics --compile``; ``vitabench/checks_file.py``): an explicit
``rubric_checks`` path, else ``<stem>.rubric-checks.json`` beside the task file when present. A
broken one, or a bad entry of it, is a ``RubricChecksWarning`` naming the file and the entry; the
tasks load without what was left out.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from servicegym.envs.tasks.checks_path import RubricChecksWarning, default_checks_path
from servicegym.envs.tasks.model import (
    TASK_FILE_FORMAT,
    LoadedTasks,
    SkippedTask,
    Task,
    TaskFileError,
    TaskSkippedWarning,
    nothing_loaded,
    oversized_int_field,
    read_json,
    skip_text,
)


def is_vitabench(data: Any) -> bool:
    """Whether decoded JSON is a VitaBench task file: a list of which some task is a VitaBench task
    (``evaluation_criteria`` and ``user_scenario``). Not the first task alone: a bad first task is
    skipped with its reason like any other, not the whole file refused."""
    return isinstance(data, list) and any(
        isinstance(t, dict) and "evaluation_criteria" in t and "user_scenario" in t for t in data
    )


def _unreadable(raw: Any, tid: str, index: int) -> SkippedTask | None:
    """A task the JSON reader could only partly read (an integer literal too long to convert),
    as its ``SkippedTask``; None for any other task (validated as usual)."""
    found = oversized_int_field(raw)
    if found is None:
        return None
    field, big = found
    limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
    return SkippedTask(task_id=tid, index=index, field=field or "(root)",
                       reason=f"an integer of {big.digits} digits, over the {limit}-digit limit of integers read")


def _vitabench_id(item: Any, i: int) -> str:
    return str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}"


def file_domain(path: str | os.PathLike[str]) -> str | None:
    """The domain of a task file's tasks (an env's ``domain``: ``delivery``, ``instore``, ``travel``,
    ``cross``, ...), the one most of its tasks name; None when it names none."""
    data = read_json(Path(path))
    if is_vitabench(data):
        from servicegym.envs.tasks.vitabench import vitabench_domain

        names = [vitabench_domain(str(t.get("domain", ""))) for t in data if isinstance(t, dict)]
    elif isinstance(data, dict) and isinstance(data.get("tasks"), list):
        names = [t.get("domain") for t in data["tasks"] if isinstance(t, dict)]
    else:
        return None
    counts = Counter(n for n in names if isinstance(n, str) and n)
    return counts.most_common(1)[0][0] if counts else None


def load_task_file(path: str | os.PathLike[str], domain: str, strict: bool = False,
                   rubric_checks: str | os.PathLike[str] | None = None) -> LoadedTasks:
    """Read a project task file or a VitaBench task file for ``domain``.

    Returns the tasks that load (a list) with ``skipped``: each task left out, as a
    ``SkippedTask`` (``task_id``, ``index``, ``field``, ``reason``), each also warned once as a
    ``TaskSkippedWarning``. A file of which no task loads raises ``TaskFileError`` listing the
    reasons; ``strict=True`` raises ``TaskFileError`` on the first bad task instead (and keeps a
    VitaBench task whose golden route reaches no expected state, with the reason in its notes).

    ``rubric_checks``: a rubric-checks file for a VitaBench file's rubric items (see the module
    docstring; a path that does not exist is a ``TaskFileError``); None: the one beside the file,
    if any.

    Files are parsed once per process (keyed by path, size and modification time, and the
    rubric-checks file's), so many envs over one file share its tasks and their built worlds
    instead of each holding a copy.
    """
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        raise TaskFileError(f"{path}: no such task file") from None
    checks = Path(rubric_checks) if rubric_checks is not None else default_checks_path(path)
    try:
        cst = checks.stat()
        checks_key: tuple[str, int, int] | None = (str(checks.resolve()), cst.st_size, cst.st_mtime_ns)
    except OSError:
        if rubric_checks is not None:
            raise TaskFileError(f"{checks}: no such rubric checks file") from None
        checks_key = None
    tasks, skipped, indexes, problems = _load_cached(str(path.resolve()), st.st_size, st.st_mtime_ns, domain, strict,
                                                     checks_key)
    for problem in problems:
        warnings.warn(problem, RubricChecksWarning, stacklevel=2)
    for skip in skipped:
        warnings.warn(f"skipped {skip_text(path, skip)}", TaskSkippedWarning, stacklevel=2)
    return LoadedTasks(tasks, [SkippedTask(**s) for s in skipped], list(indexes))


@lru_cache(maxsize=32)
def _load_cached(path_text: str, size: int, mtime_ns: int, domain: str, strict: bool,
                 checks_key: tuple[str, int, int] | None = None
                 ) -> tuple[tuple[Task, ...], tuple[SkippedTask, ...], tuple[int, ...], tuple[str, ...]]:
    problems: list[str] = []
    loaded = _load_uncached(Path(path_text), domain, strict, Path(checks_key[0]) if checks_key else None, problems)
    return tuple(loaded), tuple(loaded.skipped), tuple(loaded.indexes), tuple(problems)


def _load_uncached(path: Path, domain: str, strict: bool, checks: Path | None = None,
                   problems: list[str] | None = None) -> LoadedTasks:
    data = read_json(path)
    if is_vitabench(data):
        from servicegym.envs.tasks.vitabench.checks_file import read_checks, using_checks

        supplied: dict[str, dict[str, Any]] = {}
        if checks is not None:
            supplied, found = read_checks(checks, data)
            if problems is not None:
                problems.extend(found)
        with using_checks(supplied):
            return _convert_vitabench(data, path, domain, strict)
    if checks is not None and problems is not None:
        problems.append(f"rubric checks {checks}: rubric checks apply to VitaBench task files only; ignored")
    if not isinstance(data, dict) or data.get("format") != TASK_FILE_FORMAT or not isinstance(data.get("tasks"), list):
        raise TaskFileError(
            f"{path}: neither a VitaBench task list nor a servicegym task file "
            f'({{"format": "{TASK_FILE_FORMAT}", "version": 1, "tasks": [...]}})'
        )
    loaded = LoadedTasks()
    seen: dict[str, int] = {}
    for i, raw in enumerate(data["tasks"]):
        tid = str(raw.get("task_id", f"#{i}")) if isinstance(raw, dict) else f"#{i}"
        skip = _unreadable(raw, tid, i)
        if skip is None:
            try:
                task = Task.model_validate(raw)
            except ValidationError as err:
                e = err.errors(include_url=False)[0]
                skip = SkippedTask(task_id=tid, index=i, field=".".join(str(x) for x in e["loc"]) or "(root)",
                                   reason=e["msg"])
            else:
                if task.domain != domain:
                    skip = SkippedTask(task_id=tid, index=i, field="domain",
                                       reason=f"is {task.domain!r}, expected {domain!r}")
                elif task.task_id in seen:
                    skip = SkippedTask(task_id=tid, index=i, field="task_id",
                                       reason=f"duplicate of the task at index {seen[tid]}")
                else:
                    seen[task.task_id] = i
                    loaded.add(task, i)
                    continue
        if strict:
            raise TaskFileError(skip_text(path, skip), skip)
        loaded.skipped.append(skip)
    if not loaded and loaded.skipped:
        raise nothing_loaded(path, loaded.skipped)
    return loaded


def _convert_vitabench(data: list, path: Path, domain: str, strict: bool) -> LoadedTasks:
    """``convert_vitabench_file``, with each task the reader could only partly read (``_unreadable``)
    skipped with its own reason at its own index, as the converter skips any other bad task."""
    from servicegym.envs.tasks.vitabench import convert_vitabench_file

    bad: dict[int, SkippedTask] = {}
    for i, item in enumerate(data):
        skip = _unreadable(item, _vitabench_id(item, i), i)
        if skip is not None:
            bad[i] = skip
    if not bad:
        return convert_vitabench_file(data, path, domain, strict=strict)
    # in its place, a stand-in that fails validation (so indexes and ids stay those of the file);
    # its reason is then replaced by the real one
    stand_ins = [{"id": bad[i]["task_id"]} if i in bad else item for i, item in enumerate(data)]

    def real(skip: SkippedTask) -> SkippedTask:
        return bad.get(skip["index"], skip)

    try:
        loaded = convert_vitabench_file(stand_ins, path, domain, strict=strict)
    except TaskFileError as err:
        if err.task is not None and err.task["index"] in bad:
            skip = bad[err.task["index"]]
            raise TaskFileError(skip_text(path, skip), skip) from None
        if err.skipped:
            raise nothing_loaded(path, [real(s) for s in err.skipped]) from None
        raise
    loaded.skipped = [real(s) for s in loaded.skipped]
    return loaded
