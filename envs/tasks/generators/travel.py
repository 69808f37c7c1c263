"""Seeded generator of online-travel tasks.

A task is a trip: the user lives in one city and must get to another for an event at a venue
(by flight or by train, on a date that may be given as a public holiday), stay in a hotel there
for some nights, perhaps visit an attraction, perhaps cancel a booking made by mistake, and
perhaps change their mind after everything is booked (move the trip a day: the ticket's date is
changed and its price difference paid or refunded, the hotel cancelled and rebooked).

Every constraint comes with a tempting wrong option in the world: a cheaper flight that lands too
late or leaves too early, a dearer one over the budget, a cheaper seat class, a hotel identical to
the right one but too far from the venue, rated lower, lacking the amenity or dearer a night, a
cheaper room type, an attraction of the wanted kind closed on the visit day, another kind of
attraction, a cheaper ticket type; and from difficulty 2 a look-alike hotel whose room is sold out
on one night (booking it is refused). Each rubric item is a code predicate, and for each there is
a trajectory that breaks only that item (``task.violations``).

Reasoning points are the constraint items of the rubric plus one for a change of intent;
``difficulty`` d gives exactly 4 + 2d of them (10 at the default 3, near VitaBench's OTA mean of
9.7). Generation is a pure function of (seed, difficulty, split): splits draw from disjoint streams.

A reset of the env generates a task, so generation is kept lean without changing a byte of what it
draws: what depends on no seed (city pairs, the holiday calendar, sorted content) is computed once
per process, the catalogue's hot loops (about 200 priced products a task) draw their ids and stock
with ``getrandbits`` directly (the values ``randrange`` gives), and the violation routes are made
only when asked for, and the golden route on its first read (a reset reads none); the products
are indexed by (place, type, date) per place on first lookup (``SlotIndex``); their rows are made
from the draws when the task's world is first read (``ProductBlock``, ``Task.defer_world``: a reset
reads none); the env builds the catalogues it vouches for unvalidated (``Task.vouch_world``), each
table on its first read (``envs.environments.travel.build_lazy_travel_world``), the products' from
the draws directly; tests/test_generator_speed_travel.py pins digests of the output.

The generator's parts live in sibling modules: ``travel_shared`` (what it shares with the
cross-scenario generator: dates, city pairs and holidays, facts, journey items, drawing helpers),
``travel_catalogue`` (the catalogue of flights, trains and hotels, its drawn product tables, and
the builder's places), ``travel_route`` (a route's prices and action strings) and
``travel_builder`` (the task builder). This module is the entry point, ``generate_travel_task``,
and re-exports the names the cross-scenario generator, the env and the tests import from it.
"""

from __future__ import annotations

from servicegym.envs.tasks.generators.common import Retry, check_split, first_attempt
from servicegym.envs.tasks.generators.travel_builder import (
    GENERATOR_VERSION,
    MAX_DIFFICULTY,
    _Builder,
    reasoning_points_for,
)
from servicegym.envs.tasks.generators.travel_catalogue import (
    PRODUCT_TABLES,
    DrawnTable,
    ProductBlock,
    SlotIndex,
    TravelCatalogue,
    _new_id,
)
from servicegym.envs.tasks.generators.travel_shared import (
    HOTEL_TAG_NAMES,
    TravelItems,
    city_pairs,
    draw_hotel,
    holiday_options,
    hotel_booking,
    journey,
    process_violations,
    state_hotel_wishes,
    state_ticket_wishes,
    state_travel_date,
    ticket_budget,
    transport_booking,
    weather,
)
from servicegym.envs.tasks.model import Task

DEFAULT_DIFFICULTY = 3
MAX_ATTEMPTS = 20

__all__ = [
    "DEFAULT_DIFFICULTY",
    "GENERATOR_VERSION",
    "HOTEL_TAG_NAMES",
    "MAX_ATTEMPTS",
    "MAX_DIFFICULTY",
    "PRODUCT_TABLES",
    "DrawnTable",
    "ProductBlock",
    "Retry",
    "SlotIndex",
    "TravelCatalogue",
    "TravelItems",
    "_Builder",
    "_new_id",
    "city_pairs",
    "draw_hotel",
    "generate_travel_task",
    "holiday_options",
    "hotel_booking",
    "journey",
    "process_violations",
    "reasoning_points_for",
    "state_hotel_wishes",
    "state_ticket_wishes",
    "state_travel_date",
    "ticket_budget",
    "transport_booking",
    "weather",
]


def generate_travel_task(
    seed: int, difficulty: int = DEFAULT_DIFFICULTY, split: str = "train", violations: bool = True
) -> Task:
    """The travel task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` skips the checker-validation trajectories (everything else is identical)."""
    check_split(split)
    return first_attempt(
        lambda attempt: _Builder(int(seed), int(difficulty), split, attempt, violations).build(),
        MAX_ATTEMPTS,
        f"travel task for seed {seed}, difficulty {difficulty}",
    ).vouch_world()  # its rows are as the entities hold them: the env builds its catalogues unvalidated
