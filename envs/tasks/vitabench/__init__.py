"""VitaBench task files: schema validation, conversion to servicegym ``Task``s, golden routes.

This package owns the VitaBench task-file format (a JSON list of tasks with ``environment``,
``user_scenario``, ``instructions`` and ``evaluation_criteria``), in both public releases
(2025-11: products without ``quantity``; 2026: ``quantity: 9999``), Chinese or English. It

- validates every raw task with pydantic models of the VitaBench schema (unknown keys ignored,
  required fields typed); a malformed task raises ``TaskFileError`` naming the file, the task id
  and index, and the field path;
- converts it: the world spec for the domain's world builder, the scripted user, the rubric
  (``rewards/vitabench.py`` scores it by matching orders, no LLM), and a golden route that is
  replayed through the tools at load: it is built for the first expected state it reaches, and
  when it reaches none the reason goes into ``task.notes``;
- repairs the known quirks of the data: silently the harmless ones (``attribute`` for
  ``attributes``, list attributes, padded times and addresses, duplicate states), and with a
  line in ``task.notes`` each one that changes what is scored (nested order dicts inside
  ``products``, a store id its products contradict, lines naming a product missing from the
  catalogue, times no order can meet, dishes changed on an existing order).

One module per domain (``delivery``, ``instore``, ``ota``, ``cross``) on the shared steps of
``common``. ``DOMAINS`` maps a domain to its adapter: delivery (``_convert_delivery``) and in-store
(``_convert_instore``: shops with per-shop product rows, gold states mixing orders, bookings
and reservations; further repairs noted: an order of several products split into one order per
product, a booking listed as a reservation or the other way round when the shop takes only the
other, booking times in the past left unscored) and online travel (``_convert_ota``, files with
domain ``ota``: hotels, attractions, flights and trains with nested dated products become product
rows; orders match by content, see ``rewards/vitabench.py``; a flight or train date the gold
changes is reached with ``modify_*_order``; noted repairs: a product id reused across dates made
unique per date, gold lines without date or type completed from the catalogue) and cross-scenario
(``_convert_cross``, files with domain ``cross``, ``cross_domain``, ...: the union of the three
environments' tables and required records of any type, each part read by its own domain's
conversion, with the same repairs; ids made in the episode clear of every domain's prefix).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from servicegym.envs.tasks.model import Task, TaskFileError
from servicegym.envs.tasks.vitabench.common import (  # noqa: F401  re-exported
    VTask,
    _Context,
    detect_language,
    make_user,
    style_of,
)
from servicegym.envs.tasks.vitabench.cross import (
    CROSS_NAMES,
    VCrossTask,
    _convert_cross,
)
from servicegym.envs.tasks.vitabench.delivery import (
    _convert_delivery,
)
from servicegym.envs.tasks.vitabench.instore import (
    INSTORE_NAMES,
    VInstoreTask,
    _convert_instore,
)
from servicegym.envs.tasks.vitabench.ota import (
    OTA_NAMES,
    VOtaTask,
    _convert_ota,
)
from servicegym.world_state.cross import TOOLS as CROSS_TOOLS
from servicegym.world_state.delivery import TOOLS as DELIVERY_TOOLS
from servicegym.world_state.instore import TOOLS as INSTORE_TOOLS
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.travel import TOOLS as OTA_TOOLS


@dataclass(frozen=True)
class DomainAdapter:
    """How one VitaBench domain's tasks become servicegym tasks."""

    domain: str
    tools: list[Any]  # the domain agent's tool specs, to replay golden routes with
    convert: Callable[[VTask, _Context, Toolkit], Task]
    task_model: type[VTask] = VTask  # a domain whose gold states differ validates with its own
    names: tuple[str, ...] = ()  # other spellings of the domain in the files' ``domain`` field


DOMAINS: dict[str, DomainAdapter] = {
    "delivery": DomainAdapter("delivery", DELIVERY_TOOLS, _convert_delivery),
    "instore": DomainAdapter("instore", INSTORE_TOOLS, _convert_instore, VInstoreTask, INSTORE_NAMES),
    # the travel env's tasks; VitaBench names the domain "ota"
    "travel": DomainAdapter("travel", OTA_TOOLS, _convert_ota, VOtaTask, OTA_NAMES),
    # the cross-scenario env's tasks: any mix of the three domains' records in one task
    "cross": DomainAdapter("cross", CROSS_TOOLS, _convert_cross, VCrossTask, CROSS_NAMES),
}


def convert_vitabench_file(data: list, path: Path, domain: str) -> list[Task]:
    """Validate and convert the tasks of one VitaBench task file for the env of ``domain``."""
    adapter = DOMAINS.get(domain)
    if adapter is None:
        raise TaskFileError(
            f"{path}: VitaBench domain {domain!r} is not supported yet (supported: {', '.join(DOMAINS)})"
        )
    toolkit = Toolkit(adapter.tools)
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        tid = str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}"
        ctx = _Context(path, i, tid)
        if not isinstance(item, dict):
            raise ctx.error(f"a task must be a JSON object, got {type(item).__name__}")
        try:
            raw = adapter.task_model.model_validate(item)
        except ValidationError as err:
            raise ctx.validation(err) from None
        if raw.domain != domain and raw.domain.strip().casefold() not in adapter.names:
            raise ctx.error(f"field domain: is {raw.domain!r}, expected {domain!r}")
        if raw.id in seen:
            raise ctx.error(f"field id: duplicate of the task at index {seen[raw.id]}")
        seen[raw.id] = i
        tasks.append(adapter.convert(raw, ctx, toolkit))
    if not tasks:
        raise TaskFileError(f"{path}: the VitaBench file holds no tasks")
    return tasks
