"""Which gold record a rubric item is about (``rubric_refs.resolve``): the item's words first, then
its own test, never a record neither of them picks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servicegym.envs.tasks.vitabench.rubric_refs import name_scores, resolve
from servicegym.rewards.vitabench import GoldLine, GoldOrder


@dataclass
class _Row:
    name: str
    tags: tuple[str, ...] = ()


@dataclass
class _Table:
    rows: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.rows.get(key)


class _World:
    """The two tables ``names`` reads: stores and products."""

    def __init__(self, stores: dict[str, _Row], products: dict[str, _Row]) -> None:
        self.tables = {"stores": _Table(stores), "products": _Table(products)}

    def table(self, name: str) -> _Table:
        return self.tables[name]


def _order(oid: str, store: str, product: str) -> GoldOrder:
    return GoldOrder(kind="new", order_id=oid, store_id=store, status="paid",
                     lines=[GoldLine(product_id=product, quantity=1)])


WORLD = _World(
    stores={"S1": _Row("Flower Corner", ("Flower shop", "Bouquets")),
            "S2": _Row("Noodle House", ("Noodles",)), "S3": _Row("Noodle Bar", ("Noodles", "Late night")),
            "S4": _Row("Seoul Bistro", ("Korean cuisine", "BBQ"))},
    products={"P1": _Row("Rose bouquet"), "P2": _Row("Beef noodles"), "P3": _Row("Chicken noodles"),
              "P4": _Row("Romantic BBQ package for two")},
)
A, B, C = _order("T1", "S1", "P1"), _order("T2", "S2", "P2"), _order("T3", "S3", "P3")


def _agrees(ok: set[str]):
    return lambda g: g.order_id in ok


def test_the_items_test_picks_among_the_records_its_words_name_equally() -> None:
    # "the noodle order" names T2 and T3 alike; its test accepts T1 and T2: T2 is meant, not T1
    assert resolve("the noodle order", [A, B, C], WORLD, _agrees({"T1", "T2"}), all_agree=True) == [B]
    # both named records accepted: both are tied (each held to what its gold holds)
    assert resolve("the noodle order", [A, B, C], WORLD, _agrees({"T2", "T3"}), all_agree=True) == [B, C]


def test_an_item_naming_no_record_is_tied_to_those_it_accepts_only_for_a_whole_record_aspect() -> None:
    # "the family dinner" names no record; its test (a delivery address) accepts two of three
    agrees = _agrees({"T2", "T3"})
    assert resolve("the family dinner", [A, B, C], WORLD, agrees, all_agree=True, unnamed_subset=True) == [B, C]
    # a product feature is not tied that way: the records it is about are not told
    assert resolve("the family dinner", [A, B, C], WORLD, agrees, all_agree=True) == []


def test_an_item_names_its_record_by_the_kind_of_place() -> None:
    d = _order("T4", "S4", "P4")
    scores = name_scores("products ordered at the restaurant", [A, d], WORLD)
    assert scores[1] > scores[0] == 0
    assert resolve("products ordered at the restaurant", [A, d], WORLD) == [d]
    # a kind every candidate shares tells none of them
    assert resolve("the restaurant order", [B, C], WORLD) == []


def test_what_an_item_says_of_a_record_does_not_name_it() -> None:
    # "the moxibustion package price": "price" is no "rice" (a near-spelling), "package" no "Signature Package"
    world = _World(
        stores={"S1": _Row("Kang Ning TCM Center", ("Health preservation",)), "S2": _Row("Thai Enjoy", ("Thai cuisine",))},
        products={"P1": _Row("Uterus Warming Moxibustion Treatment", ("Moxibustion Therapy",)),
                  "P2": _Row("Classic Set (Tom Yum Soup + Mango Sticky Rice)", ("Signature Package",))},
    )
    moxa, thai = _order("T1", "S1", "P1"), _order("T3", "S2", "P2")
    for head in ("the moxibustion package price", "The moxibustion order package price must be at most 150 yuan"):
        scores = name_scores(head, [moxa, thai], world)
        assert scores[0] > scores[1] == 0, (head, scores)
        assert resolve(head, [moxa, thai], world) == [moxa]


def test_a_near_spelling_names_a_record_another_word_does_not() -> None:
    world = _World(
        stores={"S1": _Row("Silk Hair Studio", ("Hair Removal",)), "S2": _Row("Golden Wok", ("Cantonese",)),
                "S3": _Row("Leaf House", ("Tea",))},
        products={"P1": _Row("Laser Hair Removal"), "P2": _Row("Family Banquet"), "P3": _Row("Jasmine Tea")},
    )
    hair, wok, tea = _order("T1", "S1", "P1"), _order("T2", "S2", "P2"), _order("T3", "S3", "P3")
    # "chair" is "hair" one letter on, not a spelling of it
    assert name_scores("the restaurant with a high chair", [hair, wok], world) == [0.0, 0.0]
    # a plural is a spelling of its word
    assert resolve("the teas order", [wok, tea], world) == [tea]


def _timed(k: int, text: str, refs: dict[int, list[str]]) -> Any:
    from datetime import datetime

    from servicegym.envs.tasks.vitabench.time_rubric import TimeItem
    from servicegym.rewards.nl_rubric import TimeWindow, compile_item

    window = compile_item(text, datetime(2025, 9, 26, 10, 0))
    assert isinstance(window, TimeWindow), text
    return TimeItem(k, text, window, {s: [{"table": "orders", "id": rid} for rid in ids] for s, ids in refs.items()})


def test_an_item_naming_only_a_subject_is_tied_where_a_time_item_of_that_subject_was() -> None:
    from servicegym.envs.tasks.vitabench.nl_items import _by_subject
    from servicegym.envs.tasks.vitabench.time_rubric import subjects_tied

    timed = [_timed(1, "The estimated delivery time for the dinner order should be around 2025-09-26 19:30:00", {0: ["T2"]}),
             _timed(2, "The delivery time for the breakfast order should be before 2025-09-27 09:00:00", {0: ["T3"]}),
             _timed(3, "晚餐订单应在2025年9月26日19:30左右送达", {0: ["T2"]})]
    subjects = subjects_tied(timed)
    # the item's words name no store or product; the time item of its subject tells which order it is
    assert _by_subject("The dinner order needs to include a note requesting two sets of tableware", 0, [A, B, C],
                       subjects) == [B]
    assert _by_subject("晚餐订单需要备注要两份一次性餐具", 0, [A, B, C], subjects) == [B]
    assert _by_subject("The breakfast order must not include coffee", 0, [A, B, C], subjects) == [C]
    # no subject, two subjects naming different orders, a state the time item is not tied in, a record
    # that is not a candidate of the item: nothing
    assert _by_subject("The order needs a note", 0, [A, B, C], subjects) == []
    assert _by_subject("The dinner order and the breakfast order need a note", 0, [A, B, C], subjects) == []
    assert _by_subject("The dinner order needs a note", 1, [A, B, C], subjects) == []
    assert _by_subject("The dinner order needs a note", 0, [A, C], subjects) == []


def test_a_subject_whose_time_items_were_tied_to_different_records_names_none() -> None:
    from servicegym.envs.tasks.vitabench.time_rubric import subjects_tied

    timed = [_timed(1, "The delivery time for the dinner order should be around 2025-09-26 19:30:00", {0: ["T2"], 1: ["T2"]}),
             _timed(2, "The delivery time for the dinner order should be before 2025-09-26 20:00:00", {0: ["T3"], 1: ["T2"]})]
    [(words, by)] = subjects_tied(timed)
    assert words == ["dinner", "order"]
    assert by == {1: ("orders", "T2")}
