"""Address items (``rewards/nl_rubric/address.py``): the delivery address, read whole; the
book's coordinates; an address that holds the wanted one; the 100 m tolerance."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import (
    BEEF,
    CTX,
    HOME_ADDR,
    HOME_ORDER,
    ZH_ADDR,
    K,
    compile_in,
    compiles_to,
    left_to_the_judge,
    order,
)

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # addresses: the book's entry and coordinates when it knows the address
    ("base", f"The delivery address should be {HOME_ADDR}", "address", lambda s: s.longitude == 121.58),
    ("base", f"the delivery address for the noodle order must be {HOME_ADDR.upper()}, so that the user gets it at home", "address", lambda s: s.address == HOME_ADDR),
    ("base", f"面条订单的配送地址应为{ZH_ADDR}", "address", lambda s: s.latitude == 38.86),
    ("base", "Shipping address should be No. 5 Unknown Road, Ganjingzi District, Dalian", "address", lambda s: s.longitude is None and s.address.startswith("no. 5 unknown road")),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_address_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The delivery address should be the user's home address"),  # which one?
    ("base", "The delivery address should be near the office"),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_address_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_address_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    assert holds(K(f"The delivery address should be {HOME_ADDR}"), HOME_ORDER, place)
    near = order([BEEF], address="somewhere else", longitude=121.5805, latitude=38.9003)  # 50 m away
    far = order([BEEF], address="somewhere else", longitude=121.60, latitude=38.90)
    assert holds(K(f"The delivery address should be {HOME_ADDR}"), near, place)
    assert not holds(K(f"The delivery address should be {HOME_ADDR}"), far, place)


def test_address_within_a_more_precise_one() -> None:
    within = nl_rubric.address_within
    base = "Harbour View Tower, 18 Seaside Road, Zhongshan District, Dalian"
    assert within(base, base.upper())
    assert within(base, "Room 1203, " + base)  # a room of the wanted building
    assert within("Harbour View Tower, 18 Seaside Road (200m from Exit B), Dalian",
                  "Harbour View Tower, 18 Seaside Road, Dalian")  # a remark in brackets aside
    assert within("大连市中山区海景路18号海景大厦", "大连市中山区海景路18号海景大厦（地铁B口200米）12层")
    assert not within("Dalian", "Harbour View Tower, 18 Seaside Road, Dalian")  # a city is no address
    assert not within(base, "Harbour View Tower, 28 Seaside Road, Zhongshan District, Dalian")
    assert not within(base, "")
