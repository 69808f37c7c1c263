"""VitaBench task files: schema validation, conversion to servicegym ``Task``s, golden routes.

This package owns the VitaBench task-file format (a JSON list of tasks with ``environment``,
``user_scenario``, ``instructions`` and ``evaluation_criteria``), in both public releases
(2025-11: products without ``quantity``; 2026: ``quantity: 9999``), Chinese or English. It

- validates every raw task with pydantic models of the VitaBench schema (unknown keys ignored,
  required fields typed); a malformed task is skipped with a warning naming the file, the task id
  and index, and the field path, and is listed in the result's ``skipped`` (``strict=True``:
  ``TaskFileError`` instead); a file none of whose tasks converts is a ``TaskFileError``;
- converts it: the world spec for the domain's world builder, the scripted user, the rubric
  (``rewards/vitabench.py`` scores it by matching orders, no LLM), and a golden route that is
  replayed through the tools at load: it is built for the first expected state it reaches, and
  a task it solves for none is skipped with the reason (``strict=True``: kept, the reason in
  ``task.notes``);
- repairs the known quirks of the data: silently the harmless ones (``attribute`` for
  ``attributes``, list attributes, padded times and addresses, duplicate states), and with a
  line in ``task.notes`` each one that changes what is scored (nested order dicts inside
  ``products``, a gold order's store that sells none of its products, lines naming a product
  missing from the catalogue, times no order can meet, dishes changed on an existing order). No
  repair changes what the task asks: a product is sold by the store whose menu lists it, whatever
  ``store_id`` it names (as in VitaBench; noted), so a gold order keeps the store it names.

One module per domain (``delivery``, ``instore``, ``ota``, ``cross``) on the shared steps of
``common``. ``DOMAINS`` maps a domain to its adapter: delivery (``_convert_delivery``) and in-store
(``_convert_instore``: shops with per-shop product rows, gold states mixing orders, bookings
and reservations; further repairs noted: an order of several products split into one order per
product, a booking or reservation whose id field is the other kind's read by its time field, a
booking listed as a reservation or the other way round when the shop takes only the other,
booking times in the past left unscored) and online travel (``_convert_ota``, files with
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

from servicegym.envs.tasks.model import LoadedTasks, Task, TaskFileError, nothing_loaded
from servicegym.envs.tasks.vitabench.common import (  # noqa: F401  re-exported
    UnsolvableTask,
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


def vitabench_domain(name: str) -> str | None:
    """The env domain of a VitaBench ``domain`` field ("ota" -> ``travel``, "到店" -> ``instore``),
    or None for a domain the loader does not read."""
    for adapter in DOMAINS.values():
        if name == adapter.domain or name.strip().casefold() in adapter.names:
            return adapter.domain
    return None


def convert_vitabench_file(data: list, path: Path, domain: str, strict: bool = False) -> LoadedTasks:
    """Validate and convert the tasks of one VitaBench task file for the env of ``domain``.

    A task that cannot be converted faithfully (a field that does not validate, a wrong domain,
    an id used twice, a world that does not build, a gold end state no golden route reaches) is
    left out and listed in the result's ``skipped`` with its field and reason; a file none of
    whose tasks converts is a ``TaskFileError`` listing them. ``strict=True`` raises on the first
    bad task instead, and keeps a task no golden route solves (the reason in its notes).
    """
    adapter = DOMAINS.get(domain)
    if adapter is None:
        raise TaskFileError(
            f"{path}: VitaBench domain {domain!r} is not supported yet (supported: {', '.join(DOMAINS)})"
        )
    toolkit = Toolkit(adapter.tools)
    loaded = LoadedTasks()
    seen: dict[str, int] = {}
    for i, item in enumerate(data):
        tid = str(item.get("id", f"#{i}")) if isinstance(item, dict) else f"#{i}"
        ctx = _Context(path, i, tid)
        try:
            task = _convert_one(item, ctx, adapter, toolkit, domain, seen)
        except UnsolvableTask as err:
            if strict:
                task = err.task
            else:
                loaded.skipped.append(ctx.error(err.reason, err.field).task)  # type: ignore[arg-type]
                continue
        except TaskFileError as err:
            if strict or err.task is None:
                raise
            loaded.skipped.append(err.task)
            continue
        except Exception as err:  # a task the converter cannot handle must not lose the file
            bad = ctx.error(f"cannot be converted ({type(err).__name__}: {err})", "")
            if strict:
                raise bad from err
            loaded.skipped.append(bad.task)  # type: ignore[arg-type]
            continue
        seen[task.task_id] = i
        loaded.add(task, i)
    if not loaded:
        if loaded.skipped:
            raise nothing_loaded(path, loaded.skipped)
        raise TaskFileError(f"{path}: the VitaBench file holds no tasks")
    return loaded


def _convert_one(item: Any, ctx: _Context, adapter: DomainAdapter, toolkit: Toolkit, domain: str,
                 seen: dict[str, int]) -> Task:
    """One raw task, validated and converted (``TaskFileError`` naming its field otherwise)."""
    if not isinstance(item, dict):
        raise ctx.error(f"a task must be a JSON object, got {type(item).__name__}", "(root)")
    try:
        raw = adapter.task_model.model_validate(item)
    except ValidationError as err:
        raise ctx.validation(err) from None
    if raw.domain != domain and raw.domain.strip().casefold() not in adapter.names:
        raise ctx.error(f"field domain: is {raw.domain!r}, expected {domain!r}")
    if raw.id in seen:
        raise ctx.error(f"field id: duplicate of the task at index {seen[raw.id]}")
    return adapter.convert(raw, ctx, toolkit)
