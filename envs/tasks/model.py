"""The task model: ``Task`` (one episode's specification), ``TaskFileError``, the report of a
task file's load (``LoadedTasks``: the tasks, plus each ``SkippedTask`` with its reason, each also
warned as a ``TaskSkippedWarning``), and writing the project's own task-file format
(``{"format": "servicegym-tasks", "version": 1, "tasks": [...]}``)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_serializer

from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.scripted_user import UserScript
from servicegym.world_state.text import scrub_decoded

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
    # a generated task's golden route, made on first read (``defer_golden``): a reset needs none
    _golden_route: Any = PrivateAttr(default=None)
    # the generator's word that ``world`` is as it built it (``vouch_world``); no copy carries it
    _vouch: Any = PrivateAttr(default=None)
    # a generated world whose tables are made on first read (``defer_world``): (head, makers)
    _world_parts: Any = PrivateAttr(default=None)

    @model_serializer(mode="wrap")
    def _without_empty_nl_rubric(self, handler: Any) -> Any:
        # tasks without a natural-language rubric (all generated ones) serialise as before
        self._golden_now()
        data = handler(self)
        if isinstance(data, dict) and not data.get("nl_rubric"):
            data.pop("nl_rubric", None)
        return data

    @classmethod
    def generated(
        cls, task_id: str, domain: str, difficulty: int, reasoning_points: int, world: dict[str, Any],
        user: UserScript, rubric: list[RubricItem], golden_actions: list[str], violations: dict[str, list[str]],
    ) -> Task:
        """``Task(task_id=..., domain=..., source="generated", language="en", difficulty=...,
        reasoning_points=..., world=..., user=..., rubric=..., golden_actions=..., violations=...)``
        for a generator's own values, made without validating them again when each is visibly of
        its field's type (else validated, as ever): the same fields in the same order (``world``,
        ``violations`` and the lists taken as shallow copies, as validation takes them), the same
        fields set and private attributes (tests/test_reset_lazy_life.py holds it to ``Task(...)``)."""
        if (
            type(task_id) is str and type(domain) is str and type(difficulty) is int
            and type(reasoning_points) is int and type(world) is dict and type(user) is UserScript
            and all(type(i) is RubricItem for i in rubric) and type(golden_actions) is list
            and all(type(a) is str for a in golden_actions) and type(violations) is dict
            and all(type(k) is str and type(v) is list and all(type(a) is str for a in v) for k, v in violations.items())
        ):
            task = object.__new__(cls)
            fields = {
                "task_id": task_id, "domain": domain, "source": "generated", "language": "en", "difficulty": difficulty,
                "reasoning_points": reasoning_points, "world": dict(world), "user": user, "rubric": list(rubric),
                "nl_rubric": [], "golden_actions": list(golden_actions),
                "violations": {k: list(v) for k, v in violations.items()}, "notes": [],
            }
            object.__setattr__(task, "__dict__", fields)
            object.__setattr__(task, "__pydantic_fields_set__", set(_GENERATED_FIELDS_SET))
            object.__setattr__(task, "__pydantic_extra__", None)
            object.__setattr__(task, "__pydantic_private__", {"_built": None, "_golden_route": None, "_vouch": None,
                                                             "_world_parts": None})
            return task
        return cls(
            task_id=task_id, domain=domain, source="generated", language="en", difficulty=difficulty,
            reasoning_points=reasoning_points, world=world, user=user, rubric=rubric, golden_actions=golden_actions,
            violations=violations,
        )

    def defer_golden(self, make: Callable[[], list[str]]) -> Task:
        """Makes ``golden_actions`` the list ``make()`` returns, computed on first read (or on any
        dump, comparison, copy or pickle of the task) instead of now: a generator's golden route is
        a pure function of what it drew, and a reset to a new task never reads it. Returns self."""
        self.__dict__["golden_actions"] = _PENDING
        self.__pydantic_fields_set__.add("golden_actions")  # given, as a route passed at construction is
        self._golden_route = make
        return self

    def defer_world(self, makers: dict[str, Callable[[], Any]]) -> Task:
        """Makes each table ``name`` of ``makers`` (a key of ``world``, whose value ``makers[name]``
        reads) the list ``makers[name]()`` returns, made on the first read of ``world`` (or on any
        dump, comparison, copy or pickle of the task) instead of now: a generator's rows as a pure
        function of what it drew, that a reset never needs whole (``world_parts`` gives the env
        the rest, and the makers for the tables it makes on their first read). A maker may give
        any value, not only rows, and may make what several keys hold at once (the first of them
        to run finishes the work, the others return their part of it): the makers run once each,
        in the order of ``world``'s keys, and the world keeps that order. Returns self."""
        fields = self.__dict__
        head = fields["world"]
        self.__pydantic_private__["_world_parts"] = (head, dict(makers))
        fields["world"] = _PENDING_WORLD
        vouch = self.__pydantic_private__.get("_vouch")
        if vouch is not None and vouch.world is head:
            vouch.world = _PENDING_WORLD
        return self

    def world_parts(self) -> tuple[dict[str, Any], dict[str, Callable[[], Any]]]:
        """``(world, makers)`` without making a deferred table (``defer_world``): ``world`` whose
        keys ``makers`` names hold what their makers read (not rows), and ``name -> maker`` of each
        such table; ``(world, {})`` once the world is made or when nothing is deferred."""
        world = self.__dict__["world"]
        if world is _PENDING_WORLD:
            return self.__pydantic_private__["_world_parts"]
        return world, {}

    def _world_now(self) -> None:
        """Make a deferred world now (a no-op once made or when nothing is deferred)."""
        fields = self.__dict__
        if fields.get("world") is _PENDING_WORLD:
            private = self.__pydantic_private__
            head, makers = private["_world_parts"]
            made = {k: (makers[k]() if k in makers else v) for k, v in head.items()}
            fields["world"] = made
            private["_world_parts"] = None
            vouch = private.get("_vouch")
            if vouch is not None and vouch.world is _PENDING_WORLD:
                vouch.world = made

    def vouch_world(self) -> Task:
        """The generator's word that ``world`` holds exactly the rows it built (every field of each
        row present, in the entity's field order, of the entity's type): the env then builds the
        world's plain tables without validating them again (``vouched_world``). A deep copy or a
        pickle of the task, or a copy with another ``world``, is not vouched for. Returns self."""
        self._vouch = _Vouch(self.__dict__["world"])  # (a deferred world stays deferred)
        return self

    @property
    def vouched_world(self) -> bool:
        """Whether ``world`` is the one its generator vouched for (``vouch_world``); a task whose
        world is edited in place after that must be deep-copied first (the copy is validated)."""
        vouch = self.__pydantic_private__.get("_vouch") if self.__pydantic_private__ else None
        return vouch is not None and vouch.world is self.__dict__["world"]

    def _golden_now(self) -> None:
        """Make a deferred golden route and a deferred world now (a no-op once made or when none
        is deferred): every whole-task read calls it."""
        self._world_now()
        fields = self.__dict__
        if fields.get("golden_actions") is _PENDING:
            make = self.__pydantic_private__["_golden_route"]
            fields["golden_actions"] = list(make())
            self.__pydantic_private__["_golden_route"] = None

    # every whole-task read of the fields makes a deferred route first
    def __eq__(self, other: object) -> bool:
        self._golden_now()
        if isinstance(other, Task):
            other._golden_now()
        return super().__eq__(other)

    def __copy__(self) -> Task:
        self._golden_now()
        return super().__copy__()

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Task:
        self._golden_now()
        return super().__deepcopy__(memo)

    def __getstate__(self) -> dict[Any, Any]:
        self._golden_now()
        return super().__getstate__()

    def __iter__(self) -> Any:
        self._golden_now()
        return super().__iter__()

    def __repr_args__(self) -> Any:
        self._golden_now()
        return super().__repr_args__()

    def cached_world(self, build: Callable[[Task], Any]) -> Any:
        """The initial world, built once per task object (worlds are copied per episode)."""
        if self._built is None:
            self._built = build(self)
        return self._built


# the fields ``Task.generated`` sets, as ``Task(...)`` with its keywords records them
_GENERATED_FIELDS_SET = frozenset((
    "task_id", "domain", "source", "language", "difficulty", "reasoning_points", "world", "user", "rubric",
    "golden_actions", "violations",
))


class _Vouch:
    """``Task.vouch_world``'s token: the world dict vouched for. A deep copy or a pickle of a task
    drops it (it becomes None), so only the task its generator made is built unvalidated."""

    __slots__ = ("world",)

    def __init__(self, world: dict[str, Any]) -> None:
        self.world = world

    def __deepcopy__(self, memo: Any) -> None:
        return None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(None), ())

    def __eq__(self, other: object) -> bool:
        # a vouch (or its absence) never makes two tasks unequal: pydantic compares private attributes
        return other is None or isinstance(other, _Vouch)

    __hash__ = None  # type: ignore[assignment]


class _Pending:
    """The value ``golden_actions`` holds in a task's fields until its deferred route is made;
    never seen outside ``Task`` (reading the field makes the route)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<golden route not made yet>"


_PENDING = _Pending()


class _GoldenActions:
    """``Task.golden_actions`` read through: the field's value, made first when deferred (a data
    descriptor, so it is consulted before the instance's fields; writes go to the field)."""

    def __get__(self, task: Task | None, owner: Any = None) -> Any:
        if task is None:
            return self
        value = task.__dict__["golden_actions"]
        if value is _PENDING:
            task._golden_now()
            value = task.__dict__["golden_actions"]
        return value

    def __set__(self, task: Task, value: Any) -> None:
        task.__dict__["golden_actions"] = value


Task.golden_actions = _GoldenActions()  # type: ignore[assignment,misc]


class _World:
    """``Task.world`` read through: the field's value, made first when deferred (``defer_world``;
    a data descriptor, like ``_GoldenActions``; writes go to the field)."""

    def __get__(self, task: Task | None, owner: Any = None) -> Any:
        if task is None:
            return self
        value = task.__dict__["world"]
        if value is _PENDING_WORLD:
            task._world_now()
            value = task.__dict__["world"]
        return value

    def __set__(self, task: Task, value: Any) -> None:
        task.__dict__["world"] = value


_PENDING_WORLD = _Pending()
Task.world = _World()  # type: ignore[assignment,misc]


class SkippedTask(TypedDict):
    """A task of a file that was not loaded, and why (``field``: its path in the task, "" when the
    reason is no one field)."""

    task_id: str
    index: int
    field: str
    reason: str


class TaskFileError(ValueError):
    """A task file that cannot be used; the message names the file, the task and the field.

    An error about one task carries it as ``task`` (a ``SkippedTask``), so a load that is not
    strict can skip that task and report why instead of failing the file."""

    def __init__(self, message: str, task: SkippedTask | None = None) -> None:
        super().__init__(message)
        self.task = task
        self.skipped: list[SkippedTask] = []  # a file none of whose tasks loads: every task's reason


class TaskSkippedWarning(UserWarning):
    """A task of a task file was skipped; the message names the file, the task, the field and why."""


class LoadedTasks(list[Task]):
    """The tasks a file holds (a list), with ``skipped``: each task left out and why, and
    ``indexes``: each loaded task's index in the file."""

    def __init__(self, tasks: Any = (), skipped: list[SkippedTask] | None = None,
                 indexes: list[int] | None = None) -> None:
        super().__init__(tasks)
        self.skipped: list[SkippedTask] = list(skipped or [])
        self.indexes: list[int] = list(range(len(self)) if indexes is None else indexes)

    def add(self, task: Task, index: int) -> None:
        self.append(task)
        self.indexes.append(index)


def skip_text(path: Any, skip: SkippedTask) -> str:
    """One line for a skipped task: file, task id and index, field and reason."""
    where = f"field {skip['field']}: " if skip["field"] else ""
    return f"{path}: task {skip['task_id']} (index {skip['index']}): {where}{skip['reason']}"


def nothing_loaded(path: Any, skipped: list[SkippedTask]) -> TaskFileError:
    """The error of a file none of whose tasks loads, listing every task's reason."""
    reasons = "; ".join(skip_text(path, s).removeprefix(f"{path}: ") for s in skipped)
    err = TaskFileError(f"{path}: no task could be loaded ({len(skipped)} skipped: {reasons})")
    err.skipped = list(skipped)
    return err


def field_path(err: ValidationError) -> str:
    """The first error of a pydantic ``ValidationError`` as ``field <dotted.path>: <message>``."""
    e = err.errors(include_url=False)[0]
    loc = ".".join(str(x) for x in e["loc"]) or "(root)"
    return f"field {loc}: {e['msg']}"


MAX_TASK_FILE_CHARS = 256 * 2**20  # a task file is read whole; larger ones are refused unread


class OversizedInt:
    """An integer literal of a task file too long for Python to convert (over
    ``sys.get_int_max_str_digits()`` digits): ``read_json`` keeps it as this marker, and the loader
    skips the task holding it (``oversized_int_field``) instead of losing the file."""

    __slots__ = ("digits",)

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"<integer of {self.digits} digits>"


def _parse_int(text: str) -> int | OversizedInt:
    try:
        return int(text)
    except ValueError:
        return OversizedInt(text)


def oversized_int_field(value: Any) -> tuple[str, OversizedInt] | None:
    """The first ``OversizedInt`` of a decoded JSON value, with its dotted field path ("" for the
    value itself); None when it holds none. Iterative: any depth the decoder accepted is fine."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, OversizedInt):
            return where, item
        if isinstance(item, dict):
            children = [(v, f"{where}.{k}" if where else str(k)) for k, v in item.items()]
        elif isinstance(item, list):
            children = [(v, f"{where}.{i}" if where else str(i)) for i, v in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def read_json(path: Path) -> Any:
    """A task file's JSON, made safe at the edge: bounded in size, nesting too deep for the
    decoder a ``TaskFileError`` like any other malformed input, lone surrogates replaced, an
    integer literal too long to convert kept as an ``OversizedInt`` (its task is skipped)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read(MAX_TASK_FILE_CHARS + 1)
        if len(text) > MAX_TASK_FILE_CHARS:
            raise TaskFileError(f"{path}: over {MAX_TASK_FILE_CHARS} characters; split it into smaller task files")
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer literal over Python's int-string limit: read it as a marker
            data = json.loads(text, parse_int=_parse_int)
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such task file") from None
    except RecursionError:
        raise TaskFileError(f"{path}: not a JSON task file (nested too deeply to read)") from None
    except (json.JSONDecodeError, UnicodeDecodeError, OSError, EOFError) as err:
        raise TaskFileError(f"{path}: not a JSON task file ({err})") from None
    return scrub_decoded(text, data)


def save_task_file(tasks: list[Task], path: str | os.PathLike[str]) -> None:
    """Writes ``tasks`` as a task file of the project's format (gzipped for ``.gz``; byte-identical
    for the same tasks)."""
    path = Path(path)
    payload = {"format": TASK_FILE_FORMAT, "version": 1, "tasks": [t.model_dump(mode="json") for t in tasks]}
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if path.suffix == ".gz":
        # mtime=0 keeps the file byte-identical across regenerations
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(text.encode("utf-8"))
    else:
        path.write_text(text, encoding="utf-8")
