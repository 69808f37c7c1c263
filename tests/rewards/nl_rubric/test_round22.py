"""Round 22 of the reader: a demand said by what the agent does ("the agent orders X from Y", "the assistant
picked a hot drink", "助手在X下单了Y") or as a plain statement ("the order costs no more than 80 yuan", "奶茶是栀子花味的")
reads as the same demand said with a modal (``rewards/nl_rubric/voice.py``); said negated ("the agent does not
order X", "没有选X", "助手没有备注X") it never reads as the positive. Also: notes added in the passive or to a named
order ("add the note 'X' to the Y order"), a total price "in total"."""

from __future__ import annotations

import pytest

from servicegym.rewards import nl_rubric
from servicegym.rewards.nl_rubric.voice import agent_voice
from tests.rewards.nl_rubric.worlds import NOW

EN = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "Noodle Bar", ("Noodles",), "Food", 4.6),
            nl_rubric.PlaceInfo("S2", "Green Tea House", ("Tea",), "Drinks", 4.2)),
    products=(nl_rubric.ProductInfo("P1", "S1", "Seafood Noodles", ("Seafood",), (), 28.0),
              nl_rubric.ProductInfo("P2", "S1", "Beef in Sour Soup", ("Beef",), (), 26.0),
              nl_rubric.ProductInfo("P3", "S2", "Jasmine Milk Tea", (), ("Hot", "Iced"), 18.0),
              nl_rubric.ProductInfo("P4", "S2", "Oolong Tea", (), ("Hot", "Iced"), 16.0)),
)
ZH = nl_rubric.ItemContext(
    now=NOW,
    places=(nl_rubric.PlaceInfo("S1", "味千拉面", ("拉面",), "美食", 4.6),
            nl_rubric.PlaceInfo("S2", "茶百道", ("奶茶",), "饮品", 4.4)),
    products=(nl_rubric.ProductInfo("P1", "S1", "韭菜水饺", (), (), 18.0),
              nl_rubric.ProductInfo("P2", "S1", "三鲜水饺", (), (), 20.0),
              nl_rubric.ProductInfo("P3", "S2", "栀子花奶茶", (), ("热", "冰"), 12.0),
              nl_rubric.ProductInfo("P4", "S2", "柠檬茶", (), ("热", "冰"), 15.0)),
)


def _said(text: str, ctx: nl_rubric.ItemContext) -> str | None:
    spec = nl_rubric.compile_item(text, ctx)
    return None if spec is None else nl_rubric.describe_spec(spec)


@pytest.mark.parametrize("agent, modal", [
    ("The assistant ordered dinner from Noodle Bar", "Dinner should be ordered from Noodle Bar"),
    ("For the afternoon drink, the agent chose Jasmine Milk Tea", "For the afternoon drink, Jasmine Milk Tea should be chosen"),
    ("The agent picks the hot option for the oolong tea", "The hot option should be picked for the oolong tea"),
    ("The agent orders 2 items in total for the drinks", "2 items in total should be ordered for the drinks"),
    ("The tea order costs no more than 40 yuan in total", "The tea order should cost no more than 40 yuan"),
    ("The oolong tea is ordered hot", "The oolong tea should be hot"),
])
def test_agent_voice_and_plain_statements_read_as_the_modal_demand(agent: str, modal: str) -> None:
    want = _said(modal, EN)
    assert want is not None, modal
    assert _said(agent, EN) == want, (agent, _said(agent, EN), want)


def test_the_agent_ordering_a_product_from_a_place_asks_for_both() -> None:
    said = _said("The agent orders Jasmine Milk Tea from Green Tea House", EN) or ""
    assert "the place is 'green tea house'" in said and "jasmine milk tea" in said, said


@pytest.mark.parametrize("text", [
    "The agent does not order Jasmine Milk Tea from Green Tea House",
    "The agent did not pick the hot option for the oolong tea",
    "The assistant never orders from Noodle Bar",
])
def test_agent_voice_negated_is_never_the_positive(text: str) -> None:
    positive = text.replace("does not order", "orders").replace("did not pick", "picked").replace("never orders", "orders")
    assert _said(positive, EN) is not None, positive
    assert _said(text, EN) != _said(positive, EN), text


def test_a_split_never_cuts_a_catalogue_name() -> None:
    # "Beef in Sour Soup": the "in" is the name's, not where the value goes
    rewrites = agent_voice("the agent orders beef in sour soup for lunch",
                           lambda t: [(t.find("beef in sour soup"), t.find("beef in sour soup") + 17)])
    assert "beef in sour soup should be ordered for lunch" in rewrites
    assert not any(r.startswith("beef should be ordered in") for r in rewrites)


def test_what_is_no_action_of_the_agent_is_left_as_it_is() -> None:
    assert agent_voice("the user is allergic to peanuts") == []
    assert agent_voice("the agent should order the noodles") != []  # handled: the modal without its agent
    assert agent_voice("since the shop is closed, the agent should choose another") == []


@pytest.mark.parametrize("text, modal", [
    ("助手在茶百道下单了柠檬茶", "应在茶百道下单柠檬茶"),
    ("智能体点的奶茶是栀子花味的", "点的奶茶应为栀子花味的"),
    ("助手为用户点的午餐包括三鲜水饺", "为用户点的午餐应包括三鲜水饺"),
    ("柠檬茶选了热的", "柠檬茶应选择热的"),
    ("水饺订单里一共点了2份", "水饺订单里一共2份"),
])
def test_chinese_reports_read_as_the_modal_demand(text: str, modal: str) -> None:
    want = _said(modal, ZH)
    assert want is not None, modal
    assert _said(text, ZH) == want, (text, _said(text, ZH), want)


@pytest.mark.parametrize("text, positive", [
    ("柠檬茶没有选冰", "柠檬茶选冰"),
    ("水饺订单不选韭菜水饺", "水饺订单选韭菜水饺"),
    ("助手没有在水饺订单里备注多放醋", "助手在水饺订单里备注了多放醋"),
])
def test_chinese_negated_choice_and_note_are_never_the_positive(text: str, positive: str) -> None:
    assert _said(positive, ZH) is not None, positive
    assert _said(text, ZH) != _said(positive, ZH), text


@pytest.mark.parametrize("text", [
    'The agent adds the note "no disposable tableware" to the noodle order',
    "A note saying no disposable tableware should be added to the noodle order",
    'Add the note "no disposable tableware" to the noodle order',
])
def test_a_note_added_to_an_order_carries_what_it_says(text: str) -> None:
    spec = nl_rubric.compile_item(text, EN)
    assert isinstance(spec, nl_rubric.NoteSpec), text
    assert spec.text == "no disposable tableware" and "noodle order" in spec.about, (text, spec)


def test_the_note_reader_never_takes_the_verb_for_the_note() -> None:
    spec = nl_rubric.compile_item('The note "extra vinegar" should be added to the noodle order', EN)
    assert isinstance(spec, nl_rubric.NoteSpec) and spec.text == "extra vinegar"


@pytest.mark.parametrize("line, modal", [
    ("Tea order store: Green Tea House", "The tea order store should be Green Tea House"),
    ("Oolong tea: hot", "The oolong tea should be hot"),
    ("Noodle order - note: extra vinegar", "The noodle order note should be extra vinegar"),
    ("Noodle order: no seafood", "The noodle order should contain no seafood"),
    ("Tea order total item count: 2", "The total item count of the tea order should be 2"),
    ("Tea order includes Oolong Tea", "The tea order should include Oolong Tea"),
])
def test_checklist_lines_read_as_the_modal_demand(line: str, modal: str) -> None:
    want = _said(modal, EN)
    assert want is not None, modal
    assert _said(line, EN) == want, (line, _said(line, EN), want)


@pytest.mark.parametrize("line, modal", [
    ("奶茶订单商家：茶百道", "奶茶订单商家应为茶百道"),
    ("水饺订单：含三鲜水饺", "水饺订单应含有三鲜水饺"),
    ("柠檬茶：热饮", "柠檬茶应为热饮"),
    ("饮品订单商品总数：2份", "饮品订单商品总数应为2份"),
])
def test_chinese_checklist_lines_read_as_the_modal_demand(line: str, modal: str) -> None:
    want = _said(modal, ZH)
    assert want is not None, modal
    assert _said(line, ZH) == want, (line, _said(line, ZH), want)


def test_a_time_or_an_id_after_a_colon_is_no_checklist_line() -> None:
    assert agent_voice("the delivery should arrive by 12:30") == [] or all("12:30" in x for x in agent_voice(
        "the delivery should arrive by 12:30"))
    assert agent_voice("order id: 12345") == []


@pytest.mark.parametrize("question, modal", [
    ("Is the oolong tea hot?", "The oolong tea should be hot"),
    ("Was Jasmine Milk Tea ordered from Green Tea House?", "Jasmine Milk Tea should be ordered from Green Tea House"),
    ("Does the noodle order include Seafood Noodles?", "The noodle order should include Seafood Noodles"),
    ("Did the agent pick the hot option for the oolong tea?", "The hot option should be picked for the oolong tea"),
    ("Is the oolong tea not hot?", "The oolong tea should not be hot"),
    ("Doesn't the noodle order include Seafood Noodles?", "The noodle order should not include Seafood Noodles"),
])
def test_yes_no_questions_read_as_the_demand_they_check(question: str, modal: str) -> None:
    want = _said(modal, EN)
    assert want is not None, modal
    assert _said(question, EN) == want, (question, _said(question, EN), want)


@pytest.mark.parametrize("question, modal", [
    ("奶茶订单是否在茶百道下单？", "奶茶订单应在茶百道下单"),
    ("柠檬茶是否为热饮？", "柠檬茶应为热饮"),
    ("水饺订单是否包含三鲜水饺？", "水饺订单应包含三鲜水饺"),
])
def test_chinese_questions_read_as_the_demand_they_check(question: str, modal: str) -> None:
    want = _said(modal, ZH)
    assert want is not None, modal
    assert _said(question, ZH) == want, (question, _said(question, ZH), want)


def test_a_question_is_never_read_by_its_copula() -> None:
    # "is ..." opens a question: with no shape that reads it, the item is the judge's, not a value after "is"
    assert _said("Is it fine?", EN) is None
    assert _said("Was the order cancelled?", EN) != _said("Was the order not cancelled?", EN) or \
        _said("Was the order not cancelled?", EN) is None


def test_a_time_item_that_asks_for_more_is_left_to_the_judge() -> None:
    # a window checks the time only: read alone it would pass an order from any store
    assert isinstance(nl_rubric.compile_item("The noodle order should arrive before 2025-06-14 12:30", EN), nl_rubric.TimeWindow)
    assert isinstance(nl_rubric.compile_item(
        "The noodle order should arrive before 2025-06-14 12:30 so that lunch starts on time", EN), nl_rubric.TimeWindow)
    assert nl_rubric.compile_item("The noodle order should be from Noodle Bar and arrive before 2025-06-14 12:30", EN) is None
    assert nl_rubric.compile_item(
        "The noodle order should arrive before 2025-06-14 12:30, and the order should include Seafood Noodles", EN) is None
    assert isinstance(nl_rubric.compile_item("水饺订单应在2025-06-14 12:30前送达，以便午休前吃完", ZH), nl_rubric.TimeWindow)
    assert nl_rubric.compile_item("水饺订单应在2025-06-14 12:30前送达，且应包含三鲜水饺", ZH) is None
    assert nl_rubric.compile_item("水饺订单的商家必须为味千拉面，且应在2025-06-14 12:30前送达", ZH) is None


def test_a_second_verb_of_the_same_subject_is_read_too() -> None:
    said = _said("The noodle order must contain seafood and include Beef in Sour Soup", EN) or ""
    assert "seafood" in said and "beef in sour soup" in said, said
    # a negation's reach past "and" is unclear: not split
    assert "select" not in (_said("The noodle order should avoid seafood and include Beef in Sour Soup", EN) or "")


def test_a_look_up_or_a_condition_beside_a_time_is_reasoning_not_a_second_demand() -> None:
    # "X needs to be checked. If ..., the time should be A; otherwise B. Upon checking, ..., so the time is B": the time
    text = ("The distance to the tea house needs to be checked. If it is more than 2km, the reservation should be at "
            "18:00:00 on 2025-06-14; otherwise, it should be at 17:30:00 on 2025-06-14. Upon checking, it is 900 meters, so "
            "the reservation time is 17:30:00 on 2025-06-14")
    assert isinstance(nl_rubric.compile_item(text, EN), nl_rubric.TimeWindow)
