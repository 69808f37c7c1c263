"""What the life-service environments (delivery, in-store, travel, cross-scenario) share: the
system prompt and the env base class. Their worlds are built from a task's world spec by
``servicegym.world_state.life.spec.build_life_world``."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from servicegym.envs.environments.base import ToolUseEnv
from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.sources import GeneratedSource, TaskSource
from servicegym.envs.tasks.suites import SUITE_DIR
from servicegym.world_state.life import LifeWorld
from servicegym.world_state.life.spec import build_lazy_life_world, build_life_world

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


class LifeServiceEnv(ToolUseEnv):
    """Base of the life-service envs: a domain sets its world class, tools, prompt words and tasks."""

    world_cls: ClassVar[type[LifeWorld]] = LifeWorld
    score_keys = ("rubric_fraction", "rubric_items")
    count_keys = ("rubric_items",)
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
            SUITE_DIR / self.suite_file if self.suite_file else None,
            self.default_difficulty if difficulty is None else int(difficulty),
        )

    # a world its generator vouched for is built with every table made on first read
    # (``build_lazy_life_world``): for world classes whose ``prepare`` reads no table at once
    lazy_world: ClassVar[bool] = False

    def build_world(self, task: Task) -> LifeWorld:
        # a generated task's catalogues are built as its generator made them (``Task.vouch_world``), unvalidated
        if self.lazy_world and task.vouched_world:
            world, later = task.world_parts()  # the generator's deferred tables stay unmade
            return build_lazy_life_world(self.world_cls, world, later)
        return build_life_world(self.world_cls, task.world, vouched=task.vouched_world)

    def system_prompt(self, task: Task, world: LifeWorld) -> str:
        lang = task.language
        return PROMPT[lang].format(
            role=self.role[lang], checks=self.checks[lang], time=world.clock.text(), user_id=world.user_id, form=self.tool_call_form
        )

