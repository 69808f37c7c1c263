"""The task model: ``Task`` (one episode's specification), ``TaskFileError``, and writing the
project's own task-file format (``{"format": "servicegym-tasks", "version": 1, "tasks": [...]}``)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_serializer

from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.scripted_user import UserScript

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


def read_json(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such task file") from None
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as err:
        raise TaskFileError(f"{path}: not a JSON task file ({err})") from None


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
