"""Task sources: where an env's tasks come from (a fixed list, or seeded generators plus a frozen
suite), with ``ids(split)``, ``get(task_id)`` and ``sample(rng, split)``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from servicegym.envs.tasks.files import load_task_file
from servicegym.envs.tasks.model import SkippedTask, Task, TaskFileError

# the splits of a generated source: ``train`` (unlimited seeds), ``dev`` (the suite's shape, generated
# on demand from ``dev`` seeds), ``test`` (the frozen suite); a task file's tasks belong to all three
SPLITS: tuple[str, ...] = ("train", "dev", "test")


class TaskSource:
    """Where an env's tasks come from: ``ids(split)``, ``get(task_id)`` and ``sample(rng, split)``;
    ``skipped`` lists the tasks of its file that were left out, each with its reason."""

    skipped: list[SkippedTask] | tuple[()] = ()  # none, but for a source read from a file

    def ids(self, split: str | None = None) -> list[str]:
        raise NotImplementedError

    def get(self, task_id: str) -> Task:
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, split: str | None = None) -> Task:
        ids = self.ids(split)
        return self.get(ids[int(rng.integers(len(ids)))])


class ListSource(TaskSource):
    """A fixed list of tasks, e.g. from a task file; every task belongs to every split.
    ``skipped`` defaults to the list's own (a ``LoadedTasks`` from ``load_task_file``)."""

    def __init__(self, tasks: list[Task], skipped: list[SkippedTask] | None = None) -> None:
        if not tasks:
            raise TaskFileError("the task source holds no tasks")
        self.tasks = {t.task_id: t for t in tasks}
        if len(self.tasks) != len(tasks):
            raise TaskFileError("task ids must be unique within a task file")
        self.skipped: list[SkippedTask] = list(getattr(tasks, "skipped", ()) if skipped is None else skipped)

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
    ``dev`` mirrors it: the suite's seeds and difficulties under the split name ``dev`` (same size and
    difficulty mix), generated on demand; a task's stream is keyed by its split, so no ``dev`` task is
    a ``train`` or ``test`` task.
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
                self._suite = {t.task_id: t for t in load_task_file(self.suite_path, self.generate_domain(), strict=True)}
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
        if split == "dev":
            out = []
            for task_id in self.suite():
                seed, diff, _, _ = self.parse_id(task_id)
                out.append(self.make_id("dev", seed, diff))
            return out
        raise ValueError(f"unknown split {split!r}; use 'train', 'dev' or 'test'")

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
