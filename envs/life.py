"""What the life-service environments (delivery, in-store, travel, cross-scenario) share: the
world builder for their task specs, the system prompt, and the env base class.

A world spec is a dict with ``time``, ``user_id``, ``task_key``, ``language``, ``user_profile``,
``user_historical_behaviors`` and one list of rows per table of the domain's world class (table
name = key, e.g. ``stores``, ``products``, ``orders``, ``locations``, ``weather``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from world_state.core import parse_time
from world_state.life import LifeWorld

from .base import ToolUseEnv
from .tasks import GeneratedSource, Task, TaskSource

DATA_DIR = Path(__file__).parent / "data"
SCALAR_KEYS = ("time", "user_id", "task_key", "language", "user_profile", "user_historical_behaviors")

PROMPT = {
    "en": (
        "You are {role}, serving one user through the tools provided.\n"
        "Current time: {time}. The user's id: {user_id}.\n"
        "Find out what the user needs, asking about anything that matters and that you cannot "
        "find with the tools; check {checks} with the tools instead of guessing; ask the user to "
        "confirm before you create or pay for anything; report what you did when you are finished.\n"
        "Call a tool by replying with {form}; several such blocks may go in one reply. Any other "
        "reply is sent to the user. Reply ###STOP### only to end the conversation yourself."
    ),
    "zh": (
        "你是{role}，通过提供的工具为一位用户服务。\n"
        "当前时间：{time}。用户id：{user_id}。\n"
        "弄清用户的需求，工具查不到的重要信息要向用户询问；用工具核实{checks}，不要猜测；"
        "创建或支付任何订单前请用户确认；完成后告诉用户你做了什么。\n"
        "调用工具时回复 {form}，一次回复中可以包含多个这样的块。其他回复都会发给用户。"
        "只有你要主动结束对话时才回复 ###STOP###。"
    ),
}


class WorldSpecError(ValueError):
    """A world spec that does not validate; the message names the field."""


def _rows(model: Any, spec: dict[str, Any], section: str) -> list[Any]:
    items = spec.get(section, [])
    if not isinstance(items, list):
        raise WorldSpecError(f"field world.{section}: must be a list")
    rows = []
    for i, raw in enumerate(items):
        try:
            rows.append(model.model_validate(raw))
        except ValidationError as err:
            e = err.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in e["loc"])
            raise WorldSpecError(f"field world.{section}.{i}{'.' + loc if loc else ''}: {e['msg']}") from None
    return rows


def build_life_world(world_cls: type[LifeWorld], spec: dict[str, Any]) -> LifeWorld:
    """Validate a world spec and build the initial world of ``world_cls``.

    The address book holds the spec's ``locations`` and every place's and past order's address,
    for this task only (VitaBench's public code kept one process-wide registry).
    """
    for key in ("time", "user_id"):
        if not isinstance(spec.get(key), str):
            raise WorldSpecError(f"field world.{key}: required string")
    try:
        now = parse_time(spec["time"])
    except ValueError:
        raise WorldSpecError(f"field world.time: {spec['time']!r} is not YYYY-MM-DD HH:MM:SS") from None
    unknown = set(spec) - set(SCALAR_KEYS) - set(world_cls.schema)
    if unknown:
        raise WorldSpecError(f"field world.{sorted(unknown)[0]}: not a table of {world_cls.__name__}")
    tables: dict[str, dict[str, Any]] = {}
    for name, model in world_cls.schema.items():
        rows: dict[str, Any] = {}
        for r in _rows(model, spec, name):
            rows.setdefault(r.key, r)  # the first of duplicate keys wins
        tables[name] = rows
    extra = {
        "user_id": spec["user_id"],
        "task_key": spec.get("task_key", "T"),
        "language": spec.get("language", "en"),
        "user_profile": spec.get("user_profile", {}),
        "user_historical_behaviors": spec.get("user_historical_behaviors", {}),
    }
    world = world_cls(now, tables, extra=extra)
    book = world.table("locations")
    for name in (*world_cls.place_tables, "orders"):
        for row in world.table(name):
            for loc in world.locations_of(row):
                if loc.address not in book:
                    book.put(loc)
    world.prepare()
    return world


class LifeServiceEnv(ToolUseEnv):
    """Base of the life-service envs: a domain sets its world class, tools, prompt words and tasks."""

    world_cls: ClassVar[type[LifeWorld]] = LifeWorld
    role: ClassVar[dict[str, str]] = {}
    checks: ClassVar[dict[str, str]] = {}
    suite_file: ClassVar[str] = ""
    default_difficulty: ClassVar[int] = 2
    generator: ClassVar[Callable[[int, int, str], Task] | None] = None

    def default_source(self, difficulty: int | None) -> TaskSource:
        gen = type(self).generator
        if gen is None:
            raise ValueError(f"{type(self).__name__} has no task generator; pass tasks=PATH")
        return GeneratedSource(
            self.domain,
            gen,
            DATA_DIR / self.suite_file if self.suite_file else None,
            self.default_difficulty if difficulty is None else int(difficulty),
        )

    def build_world(self, task: Task) -> LifeWorld:
        return build_life_world(self.world_cls, task.world)

    def system_prompt(self, task: Task, world: LifeWorld) -> str:
        lang = task.language
        return PROMPT[lang].format(
            role=self.role[lang], checks=self.checks[lang], time=world.clock.text(), user_id=world.user_id, form=self.tool_call_form
        )

