"""Tasks and where they come from: the project's task model, task files, and task sources.

A task file is either the project's own format (``{"format": "servicegym-tasks", ...}``) or a
VitaBench task file (a JSON list of tasks with ``user_scenario`` and ``evaluation_criteria``);
the two are told apart by content. Loading validates everything up front, so a malformed file
fails at ``make`` with a message naming the file, the task and the field.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_serializer

from rewards.rubric import RubricItem
from simulators.scripted_user import UserScript

TASK_FILE_FORMAT = "servicegym-tasks"


class Task(BaseModel):
    """One episode's specification: initial world, user, rubric and a verified golden route."""

    model_config = ConfigDict(extra="forbid")
    task_id: str
    domain: str
    source: Literal["generated", "vitabench", "file"] = "generated"
    language: Literal["en", "zh"] = "en"
    difficulty: int = 0
    reasoning_points: int = 0
    world: dict[str, Any]
    user: UserScript
    rubric: list[RubricItem]
    # natural-language rubric items (VitaBench ``state_rubrics`` then ``overall_rubrics``, without
    # repeats) for the LLM judge (``rewards/judge.py``); code scoring never reads them
    nl_rubric: list[str] = []
    golden_actions: list[str] = []
    # rubric kind -> an action list that breaks only that item (checker validation, not for agents)
    violations: dict[str, list[str]] = {}
    notes: list[str] = []

    _built: Any = PrivateAttr(default=None)

    @model_serializer(mode="wrap")
    def _without_empty_nl_rubric(self, handler: Any) -> Any:
        # tasks without a natural-language rubric (all generated ones) serialise as before
        data = handler(self)
        if isinstance(data, dict) and not data.get("nl_rubric"):
            data.pop("nl_rubric", None)
        return data

    def cached_world(self, build: Callable[[Task], Any]) -> Any:
        """The initial world, built once per task object (worlds are copied per episode)."""
        if self._built is None:
            self._built = build(self)
        return self._built


class TaskFileError(ValueError):
    """A task file that cannot be used; the message names the file, the task and the field."""


def field_path(err: ValidationError) -> str:
    e = err.errors(include_url=False)[0]
    loc = ".".join(str(x) for x in e["loc"]) or "(root)"
    return f"field {loc}: {e['msg']}"


def _read_json(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such task file") from None
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as err:
        raise TaskFileError(f"{path}: not a JSON task file ({err})") from None


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
    data = _read_json(path)
    if is_vitabench(data):
        from .vitabench import convert_vitabench_file

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


def save_task_file(tasks: list[Task], path: str | os.PathLike[str]) -> None:
    path = Path(path)
    payload = {"format": TASK_FILE_FORMAT, "version": 1, "tasks": [t.model_dump(mode="json") for t in tasks]}
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if path.suffix == ".gz":
        # mtime=0 keeps the file byte-identical across regenerations
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")


class TaskSource:
    """Where an env's tasks come from: ``ids(split)``, ``get(task_id)`` and ``sample(rng, split)``."""

    def ids(self, split: str | None = None) -> list[str]:
        raise NotImplementedError

    def get(self, task_id: str) -> Task:
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, split: str | None = None) -> Task:
        ids = self.ids(split)
        return self.get(ids[int(rng.integers(len(ids)))])


class ListSource(TaskSource):
    """A fixed list of tasks, e.g. from a task file; every task belongs to every split."""

    def __init__(self, tasks: list[Task]) -> None:
        if not tasks:
            raise TaskFileError("the task source holds no tasks")
        self.tasks = {t.task_id: t for t in tasks}
        if len(self.tasks) != len(tasks):
            raise TaskFileError("task ids must be unique within a task file")

    def ids(self, split: str | None = None) -> list[str]:
        return list(self.tasks)

    def get(self, task_id: str) -> Task:
        try:
            return self.tasks[task_id]
        except KeyError:
            raise KeyError(f"unknown task_id {task_id!r}; this source has {len(self.tasks)} tasks") from None


# Generated tasks (with their built worlds) shared by every env of the process, most recent last:
# generation is a pure function of the id, so envs and vector sub-envs can share them, and a
# repeated task_id (k trials of one task) skips generation. Ids carry their domain prefix.
GENERATED_CACHE_SIZE = 64
_GENERATED: OrderedDict[str, Task] = OrderedDict()


class GeneratedSource(TaskSource):
    """Seeded generated tasks plus a frozen test suite.

    ``train`` ids are ``<prefix>/train/<seed>/d<difficulty>`` for seeds in ``train_seeds``; any id of
    that shape (also ``test``/``dev`` seeds) can be generated on demand. ``test`` is the frozen suite.
    """

    def __init__(
        self,
        prefix: str,
        generate: Callable[..., Task],  # (seed, difficulty, split, violations=bool) -> Task
        suite_path: Path | None,
        difficulty: int,
        train_seeds: range = range(0, 1_000_000),
        listed_train: int = 1000,
    ) -> None:
        self.prefix = prefix
        self.generate = generate
        self.suite_path = suite_path
        self.difficulty = difficulty
        self.train_seeds = train_seeds
        self.listed_train = listed_train
        self._suite: dict[str, Task] | None = None

    def suite(self) -> dict[str, Task]:
        if self._suite is None:
            if self.suite_path is None or not self.suite_path.exists():
                self._suite = {}
            else:
                self._suite = {t.task_id: t for t in load_task_file(self.suite_path, self.generate_domain())}
        return self._suite

    def generate_domain(self) -> str:
        return self.prefix

    def make_id(self, split: str, seed: int, difficulty: int | None = None) -> str:
        return f"{self.prefix}/{split}/{seed}/d{self.difficulty if difficulty is None else difficulty}"

    def ids(self, split: str | None = None) -> list[str]:
        split = split or "train"
        if split == "test":
            return list(self.suite())
        if split == "train":
            seeds = self.train_seeds[: self.listed_train]
            return [self.make_id("train", s) for s in seeds]
        raise ValueError(f"unknown split {split!r}; use 'train' or 'test'")

    def parse_id(self, task_id: str) -> tuple[int, int, str, dict[str, Any]]:
        """``(seed, difficulty, split, extra generator kwargs)`` of a generated id, or KeyError."""
        parts = task_id.split("/")
        if len(parts) != 4 or parts[0] != self.prefix or not parts[2].isdigit() or not parts[3][1:].isdigit():
            raise KeyError(
                f"unknown task_id {task_id!r}; generated ids look like {self.make_id('train', 7)}"
            )
        split, seed, diff = parts[1], int(parts[2]), int(parts[3][1:])
        if split not in ("train", "test", "dev"):
            raise KeyError(f"unknown split {split!r} in task_id {task_id!r}")
        return seed, diff, split, {}

    def get(self, task_id: str) -> Task:
        suite = self.suite()
        if task_id in suite:
            return suite[task_id]
        hit = _GENERATED.get(task_id)
        if hit is not None:
            _GENERATED.move_to_end(task_id)
            return hit
        seed, diff, split, extra = self.parse_id(task_id)
        # an env needs no checker-validation trajectories; skipping them halves generation time
        task = self.generate(seed, diff, split, violations=False, **extra)
        _GENERATED[task_id] = task
        if len(_GENERATED) > GENERATED_CACHE_SIZE:
            _GENERATED.popitem(last=False)
        return task

    def sample(self, rng: np.random.Generator, split: str | None = None) -> Task:
        split = split or "train"
        if split == "train":
            seed = int(rng.integers(self.train_seeds.start, self.train_seeds.stop))
            return self.get(self.make_id("train", seed))
        return super().sample(rng, split)
