"""The workspace user's two-stage decisions made by an LLM (loopback), with the code fallback."""

from __future__ import annotations

import json

import pytest

from servicegym.simulators.llm import LLMClient, LLMError
from servicegym.simulators.llm_workspace_user import LLMWorkspaceUser, parse_decision
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply
from servicegym.simulators.scripted_user import STOP
from servicegym.simulators.workspace_user import COMPLETED, INFERRED, PENDING, PROVIDED, IntentScript, SessionScript

SCRIPT = SessionScript(index=0, opening="Please draft the quarterly summary.", style="terse", intents=[
    IntentScript(id="tone", reveal="Keep it formal.", answer="Formal, please.", cues=["tone", "formal"]),
    IntentScript(id="cc", reveal="Copy my manager.", answer="Yes, cc my manager.", cues=["cc", "copy"]),
])


def decide(completed=(), asked=()) -> dict:
    return text_reply(json.dumps({"completed": list(completed), "asked": list(asked)}))


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


def user(server, done=frozenset()) -> LLMWorkspaceUser:
    client = LLMClient(server.config(timeout_s=0.3, max_retries=1, backoff_base_s=0.01))
    return LLMWorkspaceUser(SCRIPT, lambda iid: iid in done, client, seed=0)


def test_llm_decisions_drive_the_two_stages(server):
    server.push(decide(asked=["cc"]), decide(completed=["tone"]))
    u = user(server)
    # no cue word at all: only the model can tell this is a question about the cc intent
    assert "cc my manager" in u.reply("Should anyone else receive it?")
    assert u.states == {"tone": PENDING, "cc": INFERRED}
    assert u.reply("I used a formal register throughout.").endswith(STOP)
    assert u.states["tone"] == COMPLETED and u.done
    assert [d["source"] for d in u.decisions] == ["llm", "llm"]
    req = server.requests[0]
    assert req["response_format"] == {"type": "json_object"}
    assert "Copy my manager." in req["messages"][1]["content"] and "workspace check" in req["messages"][1]["content"]


def test_malformed_or_unknown_decisions_fall_back_to_code(server):
    server.push(text_reply("I think the user wants a formal tone"), decide(asked=["budget"]))
    u = user(server, done=frozenset({"cc"}))
    reply = u.reply("What tone would you like?")  # code: the cue "tone" in a question
    assert "Formal, please." in reply and u.states == {"tone": INFERRED, "cc": COMPLETED}
    assert u.fallbacks == 1 and u.decisions[0]["source"] == "code"
    u2 = user(server)
    assert u2.reply("Here is the draft.").endswith("Keep it formal.")  # code: reveal the next
    assert u2.states["tone"] == PROVIDED and u2.fallbacks == 1


def test_a_failing_endpoint_raises_llm_error(server):
    server.handler = lambda body: Fault.status(500)
    with pytest.raises(LLMError):
        user(server).reply("Hello")


def test_parse_decision():
    known = {"a", "b"}
    assert parse_decision('{"completed": ["a"], "asked": []}', known) == ({"a"}, set())
    assert parse_decision('```json\n{"asked": ["b"]}\n```', known) == (set(), {"b"})
    for bad in (None, "", "[]", '{"completed": "a"}', '{"asked": ["c"]}', '{"asked": [1]}', "{"):
        assert parse_decision(bad, known) is None


def _checked(body: dict) -> dict:
    """A decision model stand-in: completed = the intents the workspace check reports satisfied."""
    text = body["messages"][1]["content"]
    intents = json.loads(text[text.index("Intents:\n") + 9: text.index("\n\nThe assistant's latest message")])
    done = [i["id"] for i in intents if i["state"] == "pending" and i["workspace check"] == "satisfied"]
    return decide(completed=done)


@pytest.mark.parametrize("mode", ["malformed", "llm"])
def test_workspace_env_with_the_llm_user(mode):
    import gymnasium as gym

    import servicegym  # noqa: F401

    handler = (lambda body: text_reply("not json")) if mode == "malformed" else _checked
    with LoopbackServer(handler) as server:
        env = gym.make("servicegym/Workspace-v0", user="llm",
                       llm=server.config(timeout_s=1.0, max_retries=1, backoff_base_s=0.01))
        env.reset(seed=0)
        for action in env.unwrapped.task.golden_actions:
            obs, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        user = env.unwrapped._wsuser
        assert isinstance(user, LLMWorkspaceUser) and server.requests
        assert {d["source"] for d in user.decisions} == ({"code"} if mode == "malformed" else {"llm"})
        assert "llm_usage" in info
        if mode == "malformed":  # every decision fell back to code: the golden route succeeds as scripted
            assert terminated and info["success"] and user.fallbacks == len(user.decisions)
