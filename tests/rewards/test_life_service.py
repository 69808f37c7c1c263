"""Rubric checks over the final world: the golden end state passes, each deviation fails its items."""

from __future__ import annotations

import pytest

from servicegym.rewards.rubric import CHECKS, RubricItem, evaluate, score_rubric
from tests.conftest import (
    BEEF_SOUP,
    FAR_STORE,
    FIRST_NEW_ORDER,
    GOLDEN_ACTIONS,
    PORK_DUMPLINGS,
    UNPAID_ORDER,
    VEG_SOUP,
    WORK,
    call,
    create_args,
    make_delivery_task,
    make_env,
)

SEARCH, ASK, CREATE, PAY, DONE = GOLDEN_ACTIONS


def final_view(actions: list[str]):
    env = make_env()
    env.reset(seed=0)
    for a in actions:
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            break
    return env.episode_view()


def failing(actions: list[str]) -> set[str]:
    results = evaluate(make_delivery_task().rubric, final_view(actions))
    return {name for name, ok in results.items() if not ok}


def create(**overrides) -> str:
    return call("create_delivery_order", **create_args(**overrides))


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        pytest.param(GOLDEN_ACTIONS, set(), id="golden"),
        pytest.param([SEARCH, ASK, CREATE, DONE], {"paid"}, id="unpaid"),
        pytest.param([ASK, create(product_cnts=[3]), PAY], {"two_portions", "budget"}, id="three-portions"),
        pytest.param([ASK, create(address=WORK), PAY], {"home"}, id="to-work"),
        pytest.param([ASK, create(product_ids=[BEEF_SOUP, VEG_SOUP], product_cnts=[2, 1], attributes=None), PAY],
                     {"budget"}, id="extra-dish-over-budget"),
        pytest.param([ASK, create(store_id=FAR_STORE, product_ids=[PORK_DUMPLINGS], attributes=None),
                      call("pay_delivery_order", order_id=FIRST_NEW_ORDER)],
                     {"dish", "two_portions", "nearby", "by_noon", "logged"}, id="far-store-wrong-dish"),
        pytest.param([ASK, CREATE, PAY, create(product_cnts=[1])], {"one_order", "paid", "two_portions"},
                     id="second-unpaid-single-portion-order"),
        pytest.param([ASK, CREATE, PAY, call("get_delivery_order_detail", order_id=UNPAID_ORDER),
                      call("modify_delivery_order", order_id=UNPAID_ORDER, note="ring")],
                     {"others_untouched"}, id="touched-other-order"),
        pytest.param([ASK, CREATE, call("get_delivery_order_status", order_id=FIRST_NEW_ORDER),
                      call("cancel_delivery_order", order_id=FIRST_NEW_ORDER)],
                     {"one_order", "dish", "two_portions", "home", "nearby", "by_noon", "budget", "paid", "logged"},
                     id="cancelled-counts-as-no-order"),
        pytest.param([], {"one_order", "dish", "two_portions", "home", "nearby", "by_noon", "budget", "paid", "logged"},
                     id="nothing-done"),
    ],
)
def test_rubric_items_fail_exactly_where_expected(actions, expected):
    assert failing(actions) == expected


def test_weight_zero_items_are_logged_not_required():
    view = final_view(GOLDEN_ACTIONS)
    items = make_delivery_task().rubric + [RubricItem(name="rated_5", kind="store_rating", params={"min_score": 5},
                                                      weight=0)]
    success, score = score_rubric(items, view)
    assert success and score["rubric/rated_5"] == 0.0 and score["rubric_fraction"] == 1.0
    assert score["rubric_items"] == 9.0
    strict = [RubricItem(name="rated_5", kind="store_rating", params={"min_score": 5})]
    success, score = score_rubric(make_delivery_task().rubric + strict, view)
    assert not success and score["rubric_fraction"] == pytest.approx(9 / 10)


def test_more_checks_on_the_golden_state():
    view = final_view(GOLDEN_ACTIONS)
    items = [
        RubricItem(name="attr", kind="attribute", params={"product_ids": [BEEF_SOUP], "value": " Mild "}),
        RubricItem(name="attr_bad", kind="attribute", params={"product_ids": [BEEF_SOUP], "value": "extra spicy"}),
        RubricItem(name="diet", kind="diet", params={"forbidden_tags": ["Seafood"]}),
        RubricItem(name="diet_bad", kind="diet", params={"forbidden_tags": ["BEEF"]}),
        RubricItem(name="tag", kind="store_tag", params={"tag": "noodles"}),
        RubricItem(name="tag_bad", kind="store_tag", params={"tag": "salad"}),
        RubricItem(name="status", kind="order_status", params={"order_id": FIRST_NEW_ORDER, "status": "paid"}),
        RubricItem(name="status_bad", kind="order_status", params={"order_id": UNPAID_ORDER, "status": "paid"}),
        RubricItem(name="note_bad", kind="note_mentions", params={"keywords": ["napkins"]}),
        RubricItem(name="late_window", kind="deadline", params={"by": "2025-06-21 13:00:00",
                                                                "after": "2025-06-21 12:30:00"}),
        RubricItem(name="confirmed", kind="confirmed_before_order", params={}),
        RubricItem(name="total_said", kind="informed_total", params={}),
    ]
    results = evaluate(items, view)
    assert {n for n, ok in results.items() if ok} == {"attr", "diet", "tag", "status", "confirmed"}


def test_confirmation_and_total_reporting_checks():
    items = [RubricItem(name="confirmed", kind="confirmed_before_order", params={}),
             RubricItem(name="total_said", kind="informed_total", params={})]
    no_confirmation = evaluate(items, final_view([SEARCH, CREATE, PAY, "Done: your order costs 56.0 in total."]))
    assert no_confirmation == {"confirmed": False, "total_said": True}


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(KeyError, match="no check registered for rubric kind 'telepathy'"):
        evaluate([RubricItem(name="x", kind="telepathy")], final_view([]))


def test_checks_never_mutate_the_world():
    view = final_view(GOLDEN_ACTIONS)
    before, initial = view.world.state_dict(), view.initial.state_dict()
    evaluate(make_delivery_task().rubric, view)
    assert view.world.state_dict() == before and view.initial.state_dict() == initial
    assert {"order_count", "paid", "dish", "quantity", "untouched"} <= set(CHECKS)
