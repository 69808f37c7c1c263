"""The food-delivery environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from world_state.core import parse_time
from world_state.delivery import TOOLS, DeliveryWorld, Product, Store
from world_state.life import Location, Order, Weather

from .base import ToolUseEnv
from .tasks import GeneratedSource, Task, TaskSource

SUITE_PATH = Path(__file__).parent / "data" / "delivery_test.json.gz"
DEFAULT_DIFFICULTY = 2

_PROMPTS = {
    "en": (
        "You are a food-delivery assistant serving one user through the tools provided.\n"
        "Current time: {time}. The user's id: {user_id}.\n"
        "Find out what the user needs, asking about anything that matters and that you cannot "
        "find with the tools; check stores, products, distances and delivery times with the tools "
        "instead of guessing; ask the user to confirm before you create or pay for an order; "
        "report what you did when you are finished.\n"
        "Call a tool by replying with {form}; several such blocks may go in one reply. Any other "
        "reply is sent to the user. Reply ###STOP### only to end the conversation yourself."
    ),
    "zh": (
        "你是一名外卖助手，通过提供的工具为一位用户服务。\n"
        "当前时间：{time}。用户id：{user_id}。\n"
        "弄清用户的需求，工具查不到的重要信息要向用户询问；用工具核实商家、商品、距离和配送时间，不要猜测；"
        "创建或支付订单前请用户确认；完成后告诉用户你做了什么。\n"
        "调用工具时回复 {form}，一次回复中可以包含多个这样的块。其他回复都会发给用户。"
        "只有你要主动结束对话时才回复 ###STOP###。"
    ),
}


class WorldSpecError(ValueError):
    """A world spec that does not validate; the message names the field."""


def _rows(model, spec: dict[str, Any], section: str) -> list:
    rows = []
    items = spec.get(section, [])
    if not isinstance(items, list):
        raise WorldSpecError(f"field world.{section}: must be a list")
    for i, raw in enumerate(items):
        try:
            rows.append(model.model_validate(raw))
        except ValidationError as err:
            e = err.errors(include_url=False)[0]
            loc = ".".join(str(x) for x in e["loc"])
            raise WorldSpecError(f"field world.{section}.{i}{'.' + loc if loc else ''}: {e['msg']}") from None
    return rows


def build_delivery_world(spec: dict[str, Any]) -> DeliveryWorld:
    """Validate a task's world spec and build its initial ``DeliveryWorld``."""
    for key in ("time", "user_id"):
        if not isinstance(spec.get(key), str):
            raise WorldSpecError(f"field world.{key}: required string")
    try:
        now = parse_time(spec["time"])
    except ValueError:
        raise WorldSpecError(f"field world.time: {spec['time']!r} is not YYYY-MM-DD HH:MM:SS") from None
    stores = {s.store_id: s for s in _rows(Store, spec, "stores")}
    products = {p.product_id: p for p in _rows(Product, spec, "products")}
    orders = {o.order_id: o for o in _rows(Order, spec, "orders")}
    locations: dict[str, Location] = {}
    for loc in _rows(Location, spec, "locations"):
        locations.setdefault(loc.address, loc)
    # stores' and past orders' addresses are known to the map too (per task, never globally)
    for s in stores.values():
        locations.setdefault(s.location.address, s.location)
    for o in orders.values():
        if o.location is not None:
            locations.setdefault(o.location.address, o.location)
    weather = {w.id: w for w in _rows(Weather, spec, "weather")}
    extra = {
        "user_id": spec["user_id"],
        "task_key": spec.get("task_key", "T"),
        "language": spec.get("language", "en"),
        "user_profile": spec.get("user_profile", {}),
        "user_historical_behaviors": spec.get("user_historical_behaviors", {}),
    }
    world = DeliveryWorld(
        now,
        {"stores": stores, "products": products, "orders": orders, "locations": locations, "weather": weather},
        extra=extra,
    )
    world.products_of("")  # build the store -> products index once, shared by every episode copy
    return world


class DeliveryEnv(ToolUseEnv):
    """
    ## Description
    Food delivery after VitaBench: an agent serves one simulated user who wants food delivered,
    using the 20 tools of a VitaBench delivery agent (8 shared + 12 delivery, VitaBench's names
    and arguments; the older ``*_search_recommand`` spelling is accepted). Each task has its own
    small database: stores with ratings, tags, locations and opening hours; products with
    prices, tags, attributes and stock; the user's addresses, past orders and habits; weather;
    a static "now". Tasks come from a seeded generator (train split, on demand), a frozen test
    suite of 100 generated tasks, or a task file (project format or a VitaBench delivery file,
    Chinese or English).

    ## Action Space
    ``UnicodeText``: the raw assistant completion. A JSON call ``{"name": ..., "arguments": {...}}``
    or a list of them, an OpenAI assistant message with ``tool_calls``, or ``<tool_call>{...}</tool_call>``
    blocks (several allowed, prose around them kept as the assistant's content) call tools;
    anything else is a message to the user. ``###STOP###`` in a message ends the episode.

    ## Observation Space
    ``UnicodeText``: everything new since the last action, each block tagged with its source:
    ``<tool_result name=.. call_id=..>JSON</tool_result>``, ``<tool_error ..>why, and the right
    usage</tool_error>``, ``<user>reply</user>``, ``<error>unreadable action</error>``.
    The first observation is the user's opening request.

    ## Starting State
    The task's initial database and the scripted user's opening message. ``reset(seed=...)``
    seeds task sampling and the user's phrasing.

    ## Reward
    0 on every step; on the final step 1 if every rubric item holds (strict, all or nothing),
    else 0. Generated tasks' rubric items are code predicates over the final orders (store,
    dish, quantity, distance, deadline, budget, diet, rating, store tag, address, attribute,
    note, payment, order count, cancellations, untouched orders). VitaBench tasks are scored by
    matching ``required_orders`` by content (see README for the status equivalence).

    ## Episode End
    Terminated when the user says ``###STOP###`` (its goal reported done) or the agent does.
    Truncated after ``max_steps`` actions or ``max_errors`` failed calls/unreadable actions.

    ## Information
    ``reset``: ``task_id``, ``domain``, ``system_prompt``, ``tools`` (OpenAI function schemas).
    Every step: ``step``, ``tool_errors``. Final step: ``termination_reason``
    (``user_stop``, ``agent_stop``, ``max_steps``, ``max_errors``), ``success`` and ``score``
    (``rubric_fraction``, ``rubric_items`` and ``rubric/<item>`` per item).

    ## Arguments
    ```python
    import gymnasium as gym, envs
    env = gym.make("servicegym/Delivery-v0")                          # generated train tasks
    env = gym.make("servicegym/Delivery-v0", split="test")            # the frozen 100-task suite
    env = gym.make("servicegym/Delivery-v0", tasks="tasks_en.json")   # a VitaBench file
    ```
    ``tasks`` (path or list of ``Task``), ``split`` (``train``/``test``), ``difficulty`` (0-6,
    default 2: 2 + difficulty constraints per task), ``user`` (``scripted``), ``judge``
    (``code``), ``max_steps`` (50, VitaBench's limit), ``max_errors`` (10), ``render_mode``
    (``ansi``), ``check_postconditions`` (verify every write tool's post-conditions).

    ## References
    VitaBench (arXiv 2509.26490), tau2-bench.

    ## Version History
    * v0: initial release (generator v1, frozen suite of 100 tasks).
    """

    domain = "delivery"
    tool_specs = TOOLS

    def default_source(self, difficulty: int | None) -> TaskSource:
        from .generators.delivery import generate_delivery_task

        return GeneratedSource(
            "delivery",
            generate_delivery_task,
            SUITE_PATH,
            DEFAULT_DIFFICULTY if difficulty is None else int(difficulty),
        )

    def build_world(self, task: Task) -> DeliveryWorld:
        return build_delivery_world(task.world)

    def system_prompt(self, task: Task, world: DeliveryWorld) -> str:
        return _PROMPTS[task.language].format(time=world.clock.text(), user_id=world.user_id, form=self.tool_call_form)
