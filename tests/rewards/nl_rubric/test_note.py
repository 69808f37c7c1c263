"""Note items (``rewards/nl_rubric/note.py``): what a note must say, coverage and contradictions."""

from __future__ import annotations

from typing import Any

import pytest

from servicegym.rewards import nl_rubric
from tests.rewards.nl_rubric.worlds import CTX, HOME_ORDER, K, compile_in, compiles_to, left_to_the_judge

# (world, item, kind, a check of the spec): my own phrasings in both languages, not VitaBench's
COMPILES: list[tuple[str, str, str, Any]] = [
    # notes
    ("base", "The noodle order should include a note requesting no cilantro, to suit the user's taste", "note", lambda s: s.text == "no cilantro"),
    ("base", "The order needs a note: please leave it at the front desk", "note", lambda s: s.text == "please leave it at the front desk"),
    ("base", "面条订单需要备注不要香菜，确保孩子能吃", "note", lambda s: s.text == "不要香菜"),
    ("base", "为order_id为M0000001O02的订单添加备注：多放辣", "note", lambda s: (s.text, s.record_id) == ("多放辣", "M0000001O02")),
]


@pytest.mark.parametrize(("world", "text", "kind", "check"), COMPILES)
def test_note_items_compile(world: str, text: str, kind: str, check: Any) -> None:
    compiles_to(compile_in(world, text), text, kind, check)


LEFT_TO_THE_JUDGE: list[tuple[str, str]] = [
    ("base", "The note should not mention the birthday"),
    ("base", "The order should include a note, or call the user"),
]


@pytest.mark.parametrize(("world", "text"), LEFT_TO_THE_JUDGE)
def test_note_items_left_to_the_judge(world: str, text: str) -> None:
    left_to_the_judge(world, text)


def test_notes_and_contradictions() -> None:
    assert nl_rubric.note_carries("no cilantro and no scallions", "No cilantro, no scallions please")
    assert nl_rubric.note_carries("不要香菜，要点蒜泥", "不要香菜 多放点蒜泥")
    assert not nl_rubric.note_carries("no cilantro", "extra cilantro please")  # contradicts
    assert not nl_rubric.note_carries("mild", "extra spicy")
    assert not nl_rubric.note_carries("disposable gloves", "")
    assert not nl_rubric.note_carries("two sets of cutlery", "please ring the bell")
    assert nl_rubric.contradicts("微辣", "多辣谢谢") and not nl_rubric.contradicts("微辣", "少放辣")

    # a note that negates, lessens or adds what the item asks, in either language
    for wanted, said in [("disposable gloves", "Please do not provide disposable gloves"),
                         ("an extra set of cutlery", "Please do not provide an extra set of cutlery"),
                         ("one soup without pearls", "One soup with pearls"),
                         ("Less sauce", "Extra sauce"), ("extra cilantro", "Less cilantro"),
                         ("Please leave it at the front desk", "Please do not leave it at the front desk"),
                         ("多要一份餐具", "请不要多要一份餐具"), ("有一份四果汤不加珍珠", "请务必加有一份四果汤珍珠"),
                         ("将煎饼切开成两半", "请不要将煎饼切开成两半"), ("少冰", "多冰")]:
        assert nl_rubric.contradicts(wanted, said), (wanted, said)
        assert not nl_rubric.note_carries(wanted, said)
    # saying the same thing, or more of something else, is no contradiction
    for wanted, said in [("no cilantro, extra chili", "extra chili and no cilantro please"),
                         ("disposable gloves", "extra disposable gloves please"),
                         ("不要香菜，多放辣", "多放辣，不要香菜"), ("Less ice", "less ice, no straw")]:
        assert not nl_rubric.contradicts(wanted, said), (wanted, said)
        assert nl_rubric.note_carries(wanted, said), (wanted, said)
    # a negation reaches what it negates, not the place it is in; a product feature the note only
    # mentions is not contradicted by its absence from a request (``plain=False``)
    assert not nl_rubric.contradicts("the coffee", "no sugar in the coffee")
    assert not nl_rubric.contradicts("coffee", "do not shake the coffee", plain=False)
    assert nl_rubric.contradicts("coffee", "do not shake the coffee")
    assert nl_rubric.contradicts("mild", "extra spicy", plain=False)
    # the note item's own wordings: an imperative, "note" as the verb, an adjective before "note"
    for text, x in [("Add note to the noodle order: Extra spicy, thanks", "extra spicy, thanks"),
                    ("The tea order should note 'Less ice'", "less ice"),
                    ("The noodle order should include a special note requesting extra cilantro", "extra cilantro")]:
        spec = K(text)
        assert spec is not None and spec.kind == "note" and spec.text == x, (text, spec)


def test_note_checks() -> None:
    place = CTX.place("S1")
    holds = nl_rubric.spec_holds
    assert holds(K("The noodle order should include a note requesting no cilantro"), HOME_ORDER, place)
    assert not holds(K("The noodle order should include a note requesting extra cilantro"), HOME_ORDER, place)


def test_note_policy() -> None:
    assert nl_rubric.NOTE_COVERAGE == 0.6
