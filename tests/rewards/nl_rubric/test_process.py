"""Process items (``rewards/nl_rubric/process.py``): the look-ups the history must hold."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import K, compile_in, compiles_to

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # process: the tool that does the look-up
    ("base", "Need to query the user's historical behavior to find the noodle shop they like, the result is Noodle House, "
     "so the order should be from Noodle House", "all_of", lambda s: "get_user_historical_behaviors" in s.parts[0].tools and s.parts[1].place_ids == ["S1"]),
    ("base", "Must check the weather forecast for tomorrow", "process", lambda s: s.tools == ["weather"]),
    ("base", "需要查询用户的历史订单", "process", lambda s: "get_user_historical_behaviors" in s.tools),
    # the object of the query, not what it is for, names the tools; a semicolon joins two demands
    ("base", "Must query user behavior history to find previously visited noodle restaurants, with the result being Noodle "
     "House; the restaurant must be Noodle House", "all_of", lambda s: "get_user_historical_behaviors" in s.parts[0].tools
     and "delivery_store_search_recommend" not in s.parts[0].tools and s.parts[1].place_ids == ["S1"]),
    ("base", "Should check the date of Mother's Day; the order should be from Tea Corner", "all_of", lambda s: set(s.parts[0].tools) == {"get_holiday_date", "get_date_holiday_info"}),
    # a look-up of a service near an address (address commas inside); a passive demand; premise: conclusion
    ("base", "Should check whether there is a bike repair service within 800m of 12 Noodle Street, Dalian", "process",
     lambda s: "get_nearby" in s.tools and "delivery_store_search_recommend" in s.tools),
    ("base", "The user's order history must be checked first", "process", lambda s: "get_user_historical_behaviors" in s.tools),
    ("base", "The user's historical behaviour should be queried", "process", lambda s: s.tools == ["get_user_historical_behaviors"]),
    ("base", "需要查看用户的历史行为", "process", lambda s: s.tools == ["get_user_historical_behaviors"]),
    ("base", "Need to check the user's past orders: the usual shop is Tea Corner. Since it is open, the price of the "
     "Jasmine Tea should be at most 15 yuan", "all_of", lambda s: "get_user_all_orders" in s.parts[0].tools
     and "delivery_store_search_recommend" not in s.parts[0].tools and s.parts[1].high == 15.0),
]


def test_passive_demands_name_a_look_up() -> None:
    """"The order should be confirmed" asks for no look-up: it stays with the judge."""
    assert K("The order should be confirmed") is None


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_process_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


def test_process_checks() -> None:
    """Process items read the calls made."""
    holds = nl_rubric.spec_holds
    weather = K("Must check the weather forecast for tomorrow")
    assert holds(weather, None, None, frozenset({"weather"})) and not holds(weather, None, None, frozenset({"get_nearby"}))
    assert holds(weather, None, None)  # judged on a record alone: not asked
