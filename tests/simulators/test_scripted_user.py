"""The scripted user: deterministic, reveals facts only when asked, confirms, stops when done."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from simulators.scripted_user import STOP, HiddenFact, IntentChange, ScriptedUser, UserScript, split_points

SCRIPT = UserScript(
    opening="I want dumplings.",
    style="terse",
    facts=[HiddenFact(topic="budget", keywords=["money"], answer="At most 50 yuan."),
           HiddenFact(topic="address", keywords=[], answer="To my office, please.")],
)


def test_opening_and_facts_only_when_asked():
    user = ScriptedUser(SCRIPT, seed=1)
    assert user.opening() == "I want dumplings."
    assert "50 yuan" not in user.reply("Sure, let me look at the stores.")
    assert user.reply("What is your budget?") == "At most 50 yuan."
    assert user.reply("Which address should it go to?") == "To my office, please."
    assert "50 yuan" not in user.reply("What is your budget, again?"), "a fact is told once"


def test_confirmation_and_stop():
    user = ScriptedUser(SCRIPT, seed=1)
    assert user.reply("Shall I place the order?") in ("Yes.", "OK, do it.")
    final = user.reply("Your order has been placed and paid.")
    assert final.endswith(STOP) and user.done


def test_intent_change_replaces_first_confirmation():
    script = SCRIPT.model_copy(update={"intent_change": IntentChange(message="Actually, make it noodles.")})
    user = ScriptedUser(script, seed=0)
    assert user.reply("Shall I order the dumplings?") == "Actually, make it noodles."
    assert user.reply("Shall I order the noodles?") in ("Yes.", "OK, do it.")


def test_points_are_conveyed_one_by_one():
    script = UserScript(opening="Hi.", points=split_points("Order rice. Deliver to the office! No onions."))
    user = ScriptedUser(script)
    assert script.points == ["Order rice.", "Deliver to the office!", "No onions."]
    assert [user.reply("ok"), user.reply("ok"), user.reply("ok")] == script.points


@given(seed=st.integers(0, 2**31), messages=st.lists(st.text(max_size=40), max_size=8))
def test_replies_are_a_pure_function_of_seed_and_dialogue(seed, messages):
    a, b = ScriptedUser(SCRIPT, seed=seed), ScriptedUser(SCRIPT, seed=seed)
    assert [a.reply(m) for m in messages] == [b.reply(m) for m in messages]
