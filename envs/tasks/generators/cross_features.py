"""The cross-scenario task's features: the legs, the base rubric items of each and the options
with the leg each needs, the reasoning points a difficulty gives (``reasoning_points_for``) and
what an option costs in them; ``TaskFeatures``, a base of the cross-scenario generator's
``_Builder``, picks the legs and the options of a task. Also what the builder draws the rest from:
the days seats are sold on, the tools that book and that cancel (for the process items), the
keywords that tell which hidden topic the agent asks about, and the evening categories, the product
types of one that suit an evening and the hotel notes, in the order the draws pick from them.
"""

from __future__ import annotations

import random
from functools import cache

from servicegym.envs.tasks.generators.common import Retry
from servicegym.envs.tasks.generators.content_cross import DAYTIME_WORDS, EVENING_VISITS, HOTEL_NOTES
from servicegym.envs.tasks.generators.content_instore import CATEGORIES, ProductType

MAX_DIFFICULTY = 6
LEGS = ("travel", "instore", "delivery")
BASE_ITEMS: dict[str, tuple[str, ...]] = {
    "travel": ("outbound", "check_in", "nights", "hotel_distance"),
    "instore": ("product", "visit_time", "shop_near_hotel", "after_arrival"),
    "delivery": ("dish", "delivery_to_hotel", "delivery_time"),
}
# option -> the leg it needs
OPTIONS: dict[str, str] = {
    "seat_class": "travel",
    "travellers": "travel",
    "depart_after": "travel",
    "ticket_budget": "travel",
    "hotel_rating": "travel",
    "hotel_tag": "travel",
    "cancel_old": "travel",
    "shop_rating": "instore",
    "instore_budget": "instore",
    "intent": "instore",
    "store_distance": "delivery",
    "diet": "delivery",
    "delivery_note": "delivery",
}
SEAT_DATES = (0, 1)  # seats are sold on the arrival day and the next (the whole trip a day late)
CREATE_TOOLS = [
    "create_flight_order",
    "create_train_order",
    "create_hotel_order",
    "create_instore_product_order",
    "instore_book",
    "instore_reservation",
    "create_delivery_order",
]
CHANGE_TOOLS = ["cancel_hotel_order", "cancel_flight_order", "cancel_train_order"]
KEYWORDS = {
    "travel_date": ["which day", "what day", "travel date", "arrive on"],
    "departure": ["earliest", "leave", "depart"],
    "seat": ["seat", "class", "cabin"],
    "ticket_budget": ["budget", "fare", "ticket price"],
    "stay": ["how long", "night", "check out", "check-out", "checkout"],
    "distance": ["venue"],
    "hotel_rating": ["hotel rating", "rated", "stars"],
    "hotel_tag": ["amenit", "facilit", "hotel need"],
    "visit_time": ["evening booking", "transfer"],
    "shop_distance": ["how close", "close to the hotel"],
    "shop_rating": ["minimum rating", "place have"],
    "instore_budget": ["package cost", "how much"],
    "delivery_time": ["delivered", "food be"],
    "store_distance": ["food store"],
    "delivery_note": ["note", "rider"],
}


def reasoning_points_for(difficulty: int) -> int:
    return 8 + max(0, min(MAX_DIFFICULTY, difficulty))


def _cost(option: str, legs: set[str]) -> int:
    if option == "travellers":  # seats, and the party of the visit and the portions of the delivery
        return 1 + int("instore" in legs) + int("delivery" in legs)
    if option == "cancel_old":
        return 2  # cancel one booking, keep the other
    return 1


EVENING_CATEGORIES = tuple(sorted(EVENING_VISITS))  # sorted once per process, as the draws pick
HOTEL_NOTE_KEYS = tuple(sorted(HOTEL_NOTES))


@cache
def _evening_types(category: str) -> tuple[ProductType, ...]:
    """The product types of an in-store category that suit an evening (once per process)."""
    return tuple(t for t in CATEGORIES[category].products if not any(w in t[0] for w in DAYTIME_WORDS))


class TaskFeatures:
    """The choice of a task's legs and options, for ``_Builder`` (which sets up what it reads: the
    task's ``rng`` and the difficulty)."""

    rng: random.Random
    difficulty: int

    def _choose(self) -> tuple[set[str], set[str]]:
        """The legs and the options, adding up to exactly ``reasoning_points_for(difficulty)``."""
        rng = self.rng
        points = reasoning_points_for(self.difficulty)
        if points >= sum(len(v) for v in BASE_ITEMS.values()) and rng.random() < 0.75:
            legs = set(LEGS)
        else:
            legs = {"travel", rng.choice(["instore", "delivery"])}
        need = points - sum(len(BASE_ITEMS[leg]) for leg in legs)
        order = rng.sample(
            sorted(o for o, leg in OPTIONS.items() if leg in legs), k=sum(OPTIONS[o] in legs for o in OPTIONS)
        )
        chosen: set[str] = set()
        total = 0
        for o in order:
            c = _cost(o, legs)
            if total + c <= need:
                chosen.add(o)
                total += c
        if total != need:
            raise Retry("no option set of the right size")
        return legs, chosen
