"""The generator framework every domain's task generator uses.

- ``task_rng``: one seeded stream per (domain, split, seed, difficulty, generator version), so
  splits never share tasks and a task never depends on another;
- geometry for placing things at a distance (``offset``, ``at_distance``);
- ``FactSheet``: what the user states up front and what it holds back as hidden facts;
- ``IdPool``: seeded ids unique within a task;
- ``call``: a golden tool call as an action string;
- ``verify_task``: replays a task's golden actions (must succeed) and each violation trajectory
  (must fail on exactly its own rubric item), the check every generated task passes in tests.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

from simulators.scripted_user import HiddenFact


def task_rng(domain: str, split: str, seed: int, difficulty: int, version: int) -> random.Random:
    # str seeds hash deterministically (random.seed version 2), across runs and platforms
    return random.Random(f"servicegym/{domain}/{split}/{seed}/{difficulty}/v{version}")


class IdPool:
    """Random ids unique within one task (``S048213``): drawn from the task's stream, so seeded."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def new(self, prefix: str, digits: int) -> str:
        while True:
            value = f"{prefix}{self.rng.randrange(10**digits):0{digits}d}"
            if value not in self.used:
                self.used.add(value)
                return value


def street_address(rng: random.Random, district: str, city: str) -> str:
    """A made-up street address in ``district`` of ``city`` (the map every domain's content shares)."""
    from .content_delivery import BUILDINGS, STREETS

    return f"{rng.choice(BUILDINGS)}, No. {rng.randint(1, 399)} {rng.choice(STREETS)} Road, {district} District, {city}"


def offset(lon: float, lat: float, east_m: float, north_m: float) -> tuple[float, float]:
    """The point ``east_m`` east and ``north_m`` north of (lon, lat), to 6 decimals (~0.1 m)."""
    dlat = north_m / 111_320.0
    dlon = east_m / (111_320.0 * math.cos(math.radians(lat)))
    return round(lon + dlon, 6), round(lat + dlat, 6)


def at_distance(rng: random.Random, lon: float, lat: float, dist_m: float) -> tuple[float, float]:
    """A point ``dist_m`` metres from (lon, lat) in a random direction."""
    bearing = rng.uniform(0, 2 * math.pi)
    return offset(lon, lat, dist_m * math.cos(bearing), dist_m * math.sin(bearing))


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


class FactSheet:
    """Facts of a task's goal: each is stated in the opening with probability ``p_stated``,
    else held back and revealed only when the agent asks about its topic."""

    def __init__(self, rng: random.Random, p_stated: float = 0.3) -> None:
        self.rng = rng
        self.p_stated = p_stated
        self.stated: list[str] = []
        self.hidden: list[HiddenFact] = []

    def add(self, topic: str, answer: str, keywords: list[str] | None = None, hide: bool | None = None) -> None:
        hidden = (self.rng.random() >= self.p_stated) if hide is None else hide
        if hidden:
            self.hidden.append(HiddenFact(topic=topic, keywords=list(keywords or []), answer=answer))
        else:
            self.stated.append(answer)

    def topics(self) -> list[str]:
        return [f.topic for f in self.hidden]

    def questions(self, wording: dict[str, str]) -> str:
        """One agent message asking about every hidden topic, in ``wording``'s order."""
        hidden = set(self.topics())
        return " ".join(q for t, q in wording.items() if t in hidden)


def verify_task(env: Any, task: Any) -> list[str]:
    """Problems with a task: its golden actions must succeed, and each violation trajectory
    must end the episode failing exactly its own rubric item. Empty when all is well."""
    problems: list[str] = []

    def play(actions: list[str]) -> dict[str, Any] | None:
        env.reset(seed=0, options={"task": task})
        for a in actions:
            _, _, terminated, truncated, info = env.step(a)
            if terminated or truncated:
                return info
        return None

    info = play(task.golden_actions)
    if info is None or not info.get("success"):
        failed = [] if info is None else [k for k, v in info["score"].items() if k.startswith("rubric/") and v == 0]
        problems.append(f"golden actions do not succeed (failed: {failed or 'episode did not end'})")
    for name, actions in task.violations.items():
        info = play(actions)
        if info is None:
            problems.append(f"violation {name}: episode did not end")
            continue
        failed = [k[len("rubric/"):] for k, v in info["score"].items() if k.startswith("rubric/") and v == 0]
        if info.get("success") or failed != [name]:
            problems.append(f"violation {name}: failed items {failed}, expected exactly [{name!r}]")
    return problems
