"""The workspace user's two stages on hand-built sessions: Completed > Inferred > Provided, one
reveal a turn, answers only to targeted questions, ``###STOP###`` once every intent is final."""

from __future__ import annotations

from servicegym.simulators.scripted_user import STOP
from servicegym.simulators.workspace_user import (
    COMPLETED,
    INFERRED,
    PENDING,
    PROVIDED,
    IntentScript,
    SessionScript,
    WorkspaceUser,
    questions_in,
)

SCRIPT = SessionScript(index=1, opening="Please write the weekly report.", intents=[
    IntentScript(id="fmt", reveal="Use the sections A, B.", answer="Sections A and B.", cues=["section", "format"]),
    IntentScript(id="cc", reveal="Copy in Lin.", answer="Copy Lin.", cues=["cc"]),
    IntentScript(id="sort", reveal="Sort by accuracy.", answer="By accuracy, best first.", cues=["sort"]),
])


def make(done: set[str], seed: int = 0) -> WorkspaceUser:
    return WorkspaceUser(SCRIPT, lambda iid: iid in done, seed=seed)


def test_satisfied_intent_is_completed_even_when_asked_about():
    done = {"fmt"}
    u = make(done)
    reply = u.reply("Which sections should it have?")
    assert u.states["fmt"] == COMPLETED
    # the question was about a completed intent only: no answer counts, so the user reveals one
    assert u.states["cc"] == PROVIDED and "Copy in Lin." in reply


def test_targeted_question_infers_and_answers_without_revealing():
    u = make(set())
    reply = u.reply("Before I start: who should I cc? And should I sort the rows?")
    assert u.states == {"fmt": PENDING, "cc": INFERRED, "sort": INFERRED}
    assert "Copy Lin." in reply and "By accuracy, best first." in reply
    assert "Use the sections" not in reply and STOP not in reply


def test_generic_questions_reveal_one_intent_per_turn_in_order_then_stop():
    u = make(set())
    order = []
    for _ in range(3):
        reply = u.reply("Anything else you need?")
        assert STOP not in reply
        order.append([k for k, v in u.states.items() if v == PROVIDED])
    assert order == [["fmt"], ["fmt", "cc"], ["fmt", "cc", "sort"]]
    assert STOP in u.reply("Anything else you need?")
    assert u.done


def test_cue_outside_a_question_is_not_a_targeted_question():
    u = make(set())
    u.reply("I will sort the rows and cc everyone.")
    assert u.states["sort"] == PENDING and u.states["cc"] == PENDING
    assert u.states["fmt"] == PROVIDED


def test_work_done_before_the_report_counts_as_completed_and_ends_the_session():
    done: set[str] = set()
    u = make(done)
    u.reply("Who should I cc?")            # cc inferred
    done.update({"fmt", "sort"})           # the agent then does the work
    reply = u.reply("Done: the report is saved.")
    assert u.states == {"fmt": COMPLETED, "cc": INFERRED, "sort": COMPLETED}
    assert STOP in reply


def test_answer_to_the_last_pending_intent_does_not_end_the_session_yet():
    u = make({"fmt", "cc"})
    reply = u.reply("Should I sort the rows?")
    assert u.states["sort"] == INFERRED and STOP not in reply   # the agent still has to act on the answer
    assert STOP in u.reply("Done.")


def test_phrasing_is_a_function_of_the_seed():
    replies = lambda seed: [make(set(), seed).reply("Anything else you need?") for _ in range(2)]  # noqa: E731
    assert replies(3) == replies(3)
    assert len({r for s in range(12) for r in replies(s)}) > 1


def test_questions_in_keeps_only_question_sentences():
    assert questions_in("I sorted it. Should I cc Lin? Thanks.") == " should i cc lin?"
