"""The generator framework every domain's task generator uses.

- ``task_rng``: one seeded stream per (domain, split, seed, difficulty, generator version), so
  splits never share tasks and a task never depends on another;
- geometry for placing things at a distance (``offset``, ``at_distance``);
- ``FactSheet``: what the user states up front and what it holds back as hidden facts;
- ``IdPool``: seeded ids unique within a task;
- ``call``: a golden tool call as an action string;
- ``hhmm``, ``fmt_amount``, ``article``: how times, amounts and nouns are written in every domain's text;
- ``user_script``: the scripted user (persona, opening, hidden facts, change of intent) every domain builds;
- ``Rubric``: a task's rubric items, added one call each;
- ``generated_task``: a generated task with its id, source and language filled in;
- ``Retry`` and ``first_attempt``: a generator's seeded attempts, the first that draws a usable task;
- ``verify_task``: replays a task's golden actions (must succeed) and each violation trajectory
  (must fail on exactly its own rubric item), the check every generated task passes in tests.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from servicegym.envs.tasks.model import Task
from servicegym.rewards.rubric import RubricItem
from servicegym.simulators.scripted_user import HiddenFact, IntentChange, UserScript
from servicegym.world_state.core import unvalidated
from servicegym.world_state.tools import dumps

T = TypeVar("T")


class TaskRandom(random.Random):
    """``random.Random`` whose ``randrange``, ``randint``, ``choice`` and ``sample`` (of a short list
    or tuple) take the draws theirs take, in one step: for int arguments,
    ``random.Random._randbelow_with_getrandbits`` (``getrandbits`` of ``n.bit_length()`` bits until
    below ``n``, CPython 3.10-3.13) inlined, so every value, and the stream after it, is the very
    one the base class gives (a generator draws a few hundred a task; the pinned digests of
    generated tasks and tests/test_reset_travel_payments_fast.py hold them to it). Anything else
    (another type, an empty range, a negative step, a long population) goes to the base class,
    errors included."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        if stop is None:
            if type(start) is int and start > 0:
                getbits, k = self.getrandbits, start.bit_length()
                r = getbits(k)
                while r >= start:
                    r = getbits(k)
                return r
        elif type(start) is int and type(stop) is int and type(step) is int and step > 0 and stop > start:
            n = (stop - start + step - 1) // step  # the width in steps (``randrange``'s ``n``)
            getbits, k = self.getrandbits, n.bit_length()
            r = getbits(k)
            while r >= n:
                r = getbits(k)
            return start + step * r
        return super().randrange(start, stop, step)

    def randint(self, a: int, b: int) -> int:
        if type(a) is int and type(b) is int and b >= a:
            n = b - a + 1
            getbits, k = self.getrandbits, n.bit_length()
            r = getbits(k)
            while r >= n:
                r = getbits(k)
            return a + r
        return super().randint(a, b)

    def sample(self, population: Sequence[T], k: int, *, counts: Any = None) -> list[T]:  # type: ignore[override]
        n = len(population) if type(population) in (list, tuple) else -1
        if counts is None and type(k) is int and 0 <= k <= n <= 21:
            # ``random.Random.sample``'s path for a population no longer than its small-set size
            # (21, whatever ``k``): partial Fisher-Yates over a copy, ``_randbelow(n - i)`` inlined
            getbits, pool, result = self.getrandbits, list(population), [None] * k
            for i in range(k):
                m = n - i
                b = m.bit_length()
                j = getbits(b)
                while j >= m:
                    j = getbits(b)
                result[i] = pool[j]
                pool[j] = pool[m - 1]
            return result  # type: ignore[return-value]
        return super().sample(population, k, counts=counts)

    def choice(self, seq: Sequence[T]) -> T:  # type: ignore[override]
        n = len(seq)
        if n:
            getbits, k = self.getrandbits, n.bit_length()
            r = getbits(k)
            while r >= n:
                r = getbits(k)
            return seq[r]
        return super().choice(seq)


def task_rng(domain: str, split: str, seed: int, difficulty: int, version: int, attempt: int = 0) -> random.Random:
    """The task's stream; a generator's retry ``attempt`` (after a ``Retry``) draws from a stream of its own."""
    key = split if attempt == 0 else f"{split}#{attempt}"
    # str seeds hash deterministically (random.seed version 2), across runs and platforms
    return TaskRandom(f"servicegym/{domain}/{key}/{seed}/{difficulty}/v{version}")


def draw_user(rng: random.Random) -> tuple[str, str, str]:
    """The user's first name, speaking style (a key of ``PERSONALITIES``) and user id."""
    from servicegym.envs.tasks.generators.content_delivery import FIRST_NAMES, PERSONALITIES

    return rng.choice(FIRST_NAMES), rng.choice(sorted(PERSONALITIES)), f"U{rng.randrange(10**6):06d}"


_POW10 = tuple(10**d for d in range(16))


class IdPool:
    """Random ids unique within one task (``S048213``): drawn from the task's stream, so seeded."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        # prefix -> the numbers of the ids of that prefix drawn as numbers (a catalogue's product
        # ids, their text made later: ``travel.ProductBlock``); a prefix is drawn one way only
        self.drawn: dict[str, set[int]] = {}

    def new(self, prefix: str, digits: int) -> str:
        bound = _POW10[digits] if digits < len(_POW10) else 10**digits
        randrange, used = self.rng.randrange, self.used
        while True:
            # f"{prefix}{n:0{digits}d}" (n is never negative), without the nested format spec
            value = prefix + str(randrange(bound)).zfill(digits)
            if value not in used:
                used.add(value)
                return value


def street_address(rng: random.Random, district: str, city: str) -> str:
    """A made-up street address in ``district`` of ``city`` (the map every domain's content shares)."""
    from servicegym.envs.tasks.generators.content_delivery import BUILDINGS, STREETS

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
    # ``dumps`` gives ``json.dumps(..., ensure_ascii=False)``'s text with one encoder for every call
    return dumps({"name": name, "arguments": arguments})


def hhmm(minutes: int) -> str:
    """Minutes after midnight as ``HH:MM``."""
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def fmt_amount(x: float) -> str:
    """An amount as the user says it: no decimals when whole, else two."""
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


def article(noun: str) -> str:
    return "an" if noun[0].lower() in "aeiou" else "a"


def user_script(
    rng: random.Random,
    name: str,
    style: str,
    place: tuple[str, str],
    opening: str,
    facts: list[HiddenFact],
    change_msg: str | None = None,
    trigger: Literal["first_confirmation", "first_done"] = "first_confirmation",
) -> UserScript:
    """The scripted user of a task: a persona (``name``, an occupation drawn from ``rng``, the
    personality of ``style`` and ``place``, e.g. ``("home city", "Beijing")``), the opening, the
    hidden ``facts`` and, with ``change_msg``, a change of intent said at ``trigger``."""
    from servicegym.envs.tasks.generators.content_delivery import OCCUPATIONS, PERSONALITIES

    persona = {"name": name, "occupation": rng.choice(OCCUPATIONS), "personality": PERSONALITIES[style], place[0]: place[1]}
    change = IntentChange(trigger=trigger, message=change_msg) if change_msg else None
    if type(style) is str and type(opening) is str and all(type(f) is HiddenFact for f in facts):
        # what ``UserScript(...)`` makes of these keywords, without validating again what this module wrote
        return unvalidated(UserScript, {"language": "en", "style": style, "persona": persona, "opening": opening,
                                        "facts": list(facts), "intent_change": change, "points": []},
                           set(_SCRIPT_FIELDS_SET))
    return UserScript(language="en", style=style, persona=persona, opening=opening, facts=facts, intent_change=change)


_SCRIPT_FIELDS_SET = frozenset(("language", "style", "persona", "opening", "facts", "intent_change"))
_FACT_FIELDS_SET = frozenset(("topic", "keywords", "answer"))


class PlaceWorld:
    """What a domain's world builder of places with products holds: the task's ``rng`` and
    ``ids``, the rows it appends to (``places_rows`` for the places, ``products``), the functions
    that name a place from stems and write its street address, and, when given, the id indexes
    ``places`` and ``items`` it fills (a generator that looks rows up by id passes its own)."""

    def __init__(
        self,
        rng: random.Random,
        ids: IdPool,
        places_rows: list[dict[str, Any]],
        products: list[dict[str, Any]],
        name: Callable[[Sequence[str]], str],
        address: Callable[[], str],
        places: dict[str, dict[str, Any]] | None = None,
        items: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.rng, self.ids, self.places_rows, self.products = rng, ids, places_rows, products
        self.name, self.address = name, address
        self.places = {} if places is None else places
        self.items = {} if items is None else items


_RUBRIC_FIELDS_SET = frozenset(("name", "kind", "description", "params"))


def _rubric_item(name: str, kind: str, description: str, params: dict[str, Any]) -> RubricItem:
    """``RubricItem(name=name, kind=kind, description=description, params=params)`` without
    validating again what the generator itself wrote (three strings and a fresh keyword dict):
    the same fields, the same fields set (a reset to a new task makes a dozen or two of these)."""
    return unvalidated(RubricItem, {"name": name, "kind": kind, "description": description, "params": params,
                                    "weight": 1.0}, set(_RUBRIC_FIELDS_SET))


class Rubric(list[RubricItem]):
    """A task's rubric items in order; ``add`` appends one (``params`` as keywords)."""

    def add(self, name: str, kind: str, description: str, **params: Any) -> None:
        self.append(_rubric_item(name, kind, description, params))


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
            words = list(keywords or [])
            if type(topic) is str and type(answer) is str and all(type(w) is str for w in words):
                # ``HiddenFact(topic=..., keywords=..., answer=...)`` without validating again
                self.hidden.append(unvalidated(HiddenFact, {"topic": topic, "keywords": words, "answer": answer},
                                               set(_FACT_FIELDS_SET)))
            else:
                self.hidden.append(HiddenFact(topic=topic, keywords=words, answer=answer))
        else:
            self.stated.append(answer)

    def topics(self) -> list[str]:
        return [f.topic for f in self.hidden]

    def questions(self, wording: dict[str, str]) -> str:
        """One agent message asking about every hidden topic, in ``wording``'s order."""
        hidden = set(self.topics())
        return " ".join(q for t, q in wording.items() if t in hidden)


def generated_task(
    domain: str,
    split: str,
    seed: int,
    difficulty: int,
    reasoning_points: int,
    world: dict[str, Any],
    user: UserScript,
    rubric: list[RubricItem],
    golden_actions: list[str] | Callable[[], list[str]],
    violations: dict[str, list[str]],
) -> Task:
    """A generated English task, its id ``domain/split/seed/d<difficulty>``. ``golden_actions``
    may be a function that makes the route: it is then made on first read (``Task.defer_golden``;
    it must draw nothing from the task's stream)."""
    task = Task.generated(
        f"{domain}/{split}/{seed}/d{difficulty}", domain, difficulty, reasoning_points, world, user, rubric,
        [] if callable(golden_actions) else golden_actions, violations,
    )
    return task.defer_golden(golden_actions) if callable(golden_actions) else task


class Retry(Exception):
    """This attempt drew an unusable combination (e.g. two amounts the rubric would confuse)."""



def first_attempt(build: Callable[[int], T], attempts: int, what: str) -> T:
    """``build(attempt)`` for attempt 0, 1, ... until one does not raise ``Retry``; each attempt
    draws from its own stream, so the result is still a pure function of the task's inputs."""
    for attempt in range(attempts):
        try:
            return build(attempt)
        except Retry:
            continue
    raise RuntimeError(f"no {what} after {attempts} attempts")


def check_split(split: str) -> None:
    if split not in ("train", "dev", "test"):
        raise ValueError(f"split must be train, dev or test, got {split!r}")


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
