"""Seeded generator of cross-scenario tasks: one trip that the travel, in-store and delivery tools
must get right together (VitaBench's headline setting).

The user lives in one city and travels to another for an event at a venue: a flight or train that
arrives on a date (maybe a public holiday the user names, resolved with ``get_holiday_date``),
a hotel near the venue from that day, and, in the same conversation, an evening out at a shop near
the hotel (buy the package, book the table or reserve the service) at a time the journey leaves
room for, and a late-night delivery to the hotel on the first night. The legs are tied by
consistency items checked by code (``rewards/life_service.py``): check-in on the arrival day, the
visit at the user's time on the arrival day and at least the transfer margin after landing, the
shop within reach of the hotel, the delivery to the hotel's address on its check-in night. So one
wrong early choice (the wrong date, a cheaper flight that lands too late, a hotel too far from the
venue) breaks the later legs too.

Every constraint has a decoy in the world: a cheaper service landing too late for the evening, one
leaving too early, a dearer one over the budget, a cheaper seat class; a hotel identical to the
right one but too far from the venue, rated lower or lacking the amenity; a shop of the same
chain near the venue but far from the hotel, one rated lower, a dearer package, another shop by the
hotel; a food store of the same menu far from the hotel, dishes that break the diet, and the user's
usual late-night store back home, where the order history is.
Each rubric item has a trajectory that breaks only it (``task.violations``); so the legs can be
broken one at a time, the consistency items relate legs to each other rather than to fixed dates.

Legs and points: a task has the travel leg and one or both of the others. Reasoning points are the
constraint items of the rubric plus one for a change of intent (the evening visit moved an hour
later after everything is booked): the base items (travel 4, in-store 4, delivery 3) and options.
``difficulty`` d gives exactly 8 + d points, so 11 at the default 3, near VitaBench's cross-scenario
mean of 10.3; from 11 points most tasks have all three legs.

Generation is a pure function of (seed, difficulty, split); splits draw from disjoint streams. It is
kept lean (small catalogues, trajectories assembled from memoised segments) because a reset of the
env generates a task.

The generator's parts live in sibling modules: ``cross_features`` (the legs, the options and the
reasoning points they give, the choice of them, and the tools, keywords and evening content the
builder draws from), ``cross_places`` (ids, names and addresses not used yet, the trip's dates, and
the flights, trains, hotels, shops and food stores the builder draws), ``cross_route`` (a route, its
prices and its action strings) and ``cross_builder`` (the task builder). This module is the entry
point, ``generate_cross_task``, and re-exports the names the env, the task suites and the tests
import from it.
"""

from __future__ import annotations

from servicegym.envs.tasks.generators.common import check_split, first_attempt
from servicegym.envs.tasks.generators.cross_builder import GENERATOR_VERSION, _Builder
from servicegym.envs.tasks.generators.cross_features import MAX_DIFFICULTY, reasoning_points_for
from servicegym.envs.tasks.generators.cross_route import QUESTIONS
from servicegym.envs.tasks.model import Task

DEFAULT_DIFFICULTY = 3
MAX_ATTEMPTS = 20

__all__ = [
    "DEFAULT_DIFFICULTY",
    "GENERATOR_VERSION",
    "MAX_ATTEMPTS",
    "MAX_DIFFICULTY",
    "QUESTIONS",
    "_Builder",
    "generate_cross_task",
    "reasoning_points_for",
]


def generate_cross_task(
    seed: int, difficulty: int = DEFAULT_DIFFICULTY, split: str = "train", violations: bool = True
) -> Task:
    """The cross-scenario task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` leaves out the checker-validation trajectories (an env needs none), and
    nothing else changes."""
    check_split(split)
    return first_attempt(
        lambda attempt: _Builder(int(seed), int(difficulty), split, attempt, violations).build(),
        MAX_ATTEMPTS,
        f"cross-scenario task for seed {seed}, difficulty {difficulty}",
    ).vouch_world()  # its rows are as the entities hold them: the env builds its catalogues unvalidated
