"""The scripted user: deterministic, reveals facts only when asked, confirms, stops when done."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from servicegym.simulators.scripted_user import (
    CONFIRM_CUES,
    DONE_CUES,
    STOP,
    TOPIC_KEYWORDS,
    HiddenFact,
    IntentChange,
    ScriptedUser,
    UserScript,
    asks_confirmation,
    cue_pattern,
    split_points,
    to_first_person,
)

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


def test_questions_are_matched_to_instruction_points_in_english_and_chinese():
    en = ScriptedUser(UserScript(opening="Hi.", points=["I need it delivered before the meeting at noon.", "No onions."]))
    assert en.reply("When is your meeting, and must it be delivered before?") == "I need it delivered before the meeting at noon."
    zh = ScriptedUser(UserScript(language="zh", opening="你好。", points=["我下午三点开会，需要在会前送达。", "不要香菜。"]))
    assert zh.reply("请问您几点开会？需要会前送达吗？") == "我下午三点开会，需要在会前送达。"


def test_confirmation_cues_respect_word_boundaries():
    user = ScriptedUser(SCRIPT, seed=0)
    assert user.reply("Which address should it go to?") == "To my office, please.", "'should it' is no 'should i'"


# the cue matcher against its reference regular expression: cues of every kind (words that may be
# prefixes, phrases, ones ending in punctuation, Chinese), in texts built from their own pieces
_CUES = list(CONFIRM_CUES + DONE_CUES + TOPIC_KEYWORDS["budget"] + ("allerg", "ok?", "a b"))
_PIECES = [*_CUES, *(c[:2] for c in _CUES), *(c[1:] for c in _CUES), " ", "  ", "?", ".", "x", "s", "z", "A", "é",
           "1", "\n", "确", "吗"]


@given(st.lists(st.sampled_from(_CUES), min_size=0, max_size=6),
       st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_cue_matching_agrees_with_its_regular_expression(cues, text):
    pat = cue_pattern(tuple(cues))
    found = pat.search(text)
    assert (found is not None) == (pat.pattern.search(text) is not None)
    if found is not None:
        assert text[found.start:].startswith(found.cue)


def test_cue_matching_agrees_at_every_edge():
    """Every cue kind with every kind of neighbour on either side, at the start, in the middle and
    at the end of the text, alone and after a near miss of itself."""
    edges = ["", "a", "z", "m", "A", "Z", "é", "1", " ", "?", "确"]
    for cue in ("confirm", "should i", "ok?", "allerg", "确认", "a b"):
        pat = cue_pattern((cue, "never here"))
        for left in edges:
            for right in edges:
                for text in (left + cue + right, "q" + left + cue + right + "q", "x" + cue + " " + left + cue + right):
                    assert (pat.search(text) is not None) == (pat.pattern.search(text) is not None), (cue, text)


def test_cue_matching_is_linear_and_exact_at_the_edges():
    pat = cue_pattern(("should i", "allerg", "ok?", "确认"))
    assert pat.search("should i") and pat.search("x, should i?") and not pat.search("should it")
    assert not pat.search("xshould i") and pat.search("allergies") and not pat.search("nonallergic")
    assert pat.search("is that ok?") and not pat.search("book?x") and pat.search("请确认")
    assert pat.search("Should I") is None, "callers fold case first"
    # a long message with near misses everywhere: found at the end, and none is a miss
    text = "xshould iz nonallergic book?s " * 30_000
    assert pat.search(text) is None and pat.search(text + "should i") is not None
    assert asks_confirmation("Shall I go ahead?") and not asks_confirmation("Here are three stores. " * 5_000)


@pytest.mark.parametrize(
    "text, language, expected",
    [
        ("You want two bowls, and your child reminded you to ask for cutlery.", "en",
         "I want two bowls, and my child reminded me to ask for cutlery."),
        ("You're tired, so you are ordering for yourself.", "en", "I'm tired, so I am ordering for myself."),
        ("你想点一份面，您不吃香菜。", "zh", "我想点一份面，我不吃香菜。"),
    ],
)
def test_vitabench_instructions_become_the_users_own_words(text, language, expected):
    assert to_first_person(text, language) == expected


def test_every_hidden_fact_of_the_generated_suites_can_be_asked_for():
    """A hidden fact is told only when asked: each one a generator hides must have cues, or no agent
    could ever learn it (the delivery order note had none)."""
    import gymnasium as gym

    import servicegym  # noqa: F401
    from servicegym.simulators.scripted_user import TOPIC_KEYWORDS

    for env_id in ("servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
                   "servicegym/CrossScenario-v0"):
        env = gym.make(env_id).unwrapped
        for tid in env.task_ids("test"):
            for fact in env.source.get(tid).user.facts:
                assert fact.keywords or fact.topic in TOPIC_KEYWORDS, f"{tid}: hidden {fact.topic!r} has no cue"


def test_the_note_question_reveals_the_order_note():
    from servicegym.envs.tasks.generators.delivery import QUESTIONS

    script = UserScript(opening="Noodles, please.", facts=[
        HiddenFact(topic="note", keywords=[], answer="Please add extra napkins."),
        HiddenFact(topic="budget", keywords=[], answer="At most 40 yuan.")])
    user = ScriptedUser(script, seed=0)
    assert user.reply(QUESTIONS["note"]) == "Please add extra napkins."
    assert user.reply("Any 备注 for the store?") != "Please add extra napkins.", "a fact is told once"


def test_the_user_never_claims_to_have_said_what_it_did_not_and_answers_a_greeting_with_its_request():
    from servicegym.simulators.scripted_user import _PHRASES, STYLES, ScriptedUser, UserScript

    for lang in ("en", "zh"):
        for style in STYLES:
            said = " ".join(_PHRASES[lang][f"idk_{style}"])
            assert not any(claim in said.casefold() for claim in ("already told", "told you", "i said", "说过", "告诉您了", "都说了"))
    script = UserScript(opening="I need lunch delivered to my office.", style="impatient")
    user = ScriptedUser(script, seed=1)
    reply = user.reply("Hello! How can I help you today?")
    assert reply.endswith("I need lunch delivered to my office.") and "told" not in reply
    zh = ScriptedUser(UserScript(language="zh", opening="帮我点一份午饭。"), seed=1)
    assert zh.reply("您好，请问有什么可以帮您？").endswith("帮我点一份午饭。")
    # a long message that merely opens with "Hi" is not a greeting
    long = "Hi, " + "I looked at several restaurants near you and compared their menus and delivery times. " * 3
    assert not ScriptedUser(script, seed=1).reply(long).endswith("my office.")
