"""LLM users (life services and the payments customer) played through the loopback server.

The loopback handlers stand in for a user model: they read the prompt the env sent (system prompt
and conversation) and answer as a user would, so the tests check what reaches the model, what the
env does with the replies, and what happens when the endpoint fails.
"""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.simulators.llm import LLMClient
from servicegym.simulators.llm_user import LLMPaymentsCustomer, LLMUser, user_system_prompt
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply
from servicegym.simulators.scripted_user import STOP, HiddenFact, IntentChange, UserScript
from tests.conftest import GOLDEN_ACTIONS, make_delivery_task, make_env

SECRET = "sk-test-user-secret-0987654321"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)


def quick(server: LoopbackServer, **kw) -> dict:
    return server.config(timeout_s=0.3, max_retries=1, backoff_base_s=0.01, **kw)


def delivery_user(body: dict) -> dict:
    """A user model stand-in: answers from the facts in its system prompt, confirms, stops when done."""
    system = body["messages"][0]["content"]
    agent = body["messages"][-1]["content"].lower()
    facts = dict(re.findall(r"^- \(([^)]*)\) (.*)$", system, re.M))
    parts = []
    if "how many" in agent and "party size" in facts:
        parts.append(facts["party size"])
    if "shall i" in agent:
        parts.append("Yes, please go ahead.")
    if "placed and paid" in agent:
        parts.append(f"Great, thank you! {STOP}")
    return text_reply(" ".join(parts) or "I have told you what I need.")


# ----- life-service user ----------------------------------------------------------------------
def test_llm_user_plays_a_delivery_episode():
    with LoopbackServer(delivery_user) as server:
        env = make_env(user="llm", llm=quick(server))
        obs, info = env.reset(seed=0)
        assert obs == make_delivery_task().user.opening and server.requests == []  # the opening costs no call
        for action in GOLDEN_ACTIONS:
            obs, reward, terminated, truncated, info = env.step(action)
        assert terminated and not truncated and reward == 1.0
        assert info["termination_reason"] == "user_stop" and "<user>Great, thank you!" in obs
        assert info["llm_usage"]["user"]["calls"] == 2 == len(server.requests)
        assert info["llm_usage"]["user"]["prompt_tokens"] > 0
        first = server.requests[0]["messages"]
        # the model speaks as the user: its opening is "assistant", the agent's message is "user"
        assert [m["role"] for m in first] == ["system", "assistant", "user"]
        assert first[2]["content"] == GOLDEN_ACTIONS[1]
        assert "It's for two people." in first[0]["content"] and STOP in first[0]["content"]
        users = [m["content"] for m in env.messages if m["role"] == "user"]
        assert users[-1].startswith("Great, thank you!")
        assert SECRET not in json.dumps(env.messages) + json.dumps([list(e) for e in env.history], default=str)


def test_user_prompt_holds_the_script_and_nothing_of_the_solution():
    task = make_delivery_task()
    script = UserScript(
        language="zh", style="terse", persona={"name": "Wang", "city": "Kunming"}, opening="我想点外卖。",
        facts=[HiddenFact(topic="budget", keywords=[], answer="预算50元以内。")],
        intent_change=IntentChange(trigger="first_confirmation", message="我改主意了，要三份。"),
        points=["送到公司。", "不要香菜。"],
    )
    prompt = user_system_prompt(script)
    for piece in ("Wang", "Kunming", "我想点外卖。", "预算50元以内。", "我改主意了，要三份。", "1. 送到公司。", "2. 不要香菜。",
                  "Simplified Chinese", "terse", "never invent", STOP):
        assert piece in prompt
    golden = user_system_prompt(task.user)
    assert "P001" not in golden and "S001" not in golden and "Sunny Noodle House" not in golden


def test_user_model_failure_ends_the_episode_truncated_and_recorded():
    with LoopbackServer(lambda body: Fault.slow(5)) as server:
        env = make_env(user="llm", llm=quick(server))
        env.reset(seed=0)
        obs, reward, terminated, truncated, info = env.step("How many people is it for?")
        assert truncated and not terminated and reward == 0.0
        assert info["termination_reason"] == "user_error" and info["success"] is False
        assert "could not reply" in obs and "timeout" in obs
        event = env.history.entries[-1]
        assert (event.kind, event.name) == ("event", "user_error")
        assert event.arguments["attempts"] == 2 and event.arguments["kind"] == "timeout"
        assert len(server.requests) == 2
        with pytest.raises(RuntimeError):
            env.step("hello?")  # the episode is over, as after any truncation
        # the next episode starts cleanly on a working endpoint
        server.handler = delivery_user
        env.reset(seed=1)
        assert env.step("How many people?")[0] == "<user>It's for two people.</user>"


def test_empty_user_reply_is_a_user_error():
    with LoopbackServer(lambda body: text_reply("  ")) as server:
        env = make_env(user="llm", llm=quick(server))
        env.reset(seed=0)
        _, _, _, truncated, info = env.step("Hello")
        assert truncated and info["termination_reason"] == "user_error"
        assert env.history.entries[-1].arguments["kind"] == "empty"


def test_llm_user_needs_an_endpoint_at_make_time():
    with pytest.raises(ValueError, match="SERVICEGYM_BASE_URL"):
        gym.make("servicegym/Delivery-v0", user="llm")
    with pytest.raises(ValueError, match="user="):
        gym.make("servicegym/Delivery-v0", user="robot")


def test_env_vars_select_the_endpoint(monkeypatch):
    with LoopbackServer(delivery_user) as server:
        monkeypatch.setenv("SERVICEGYM_BASE_URL", server.base_url)
        monkeypatch.setenv("SERVICEGYM_MODEL", server.model)
        env = make_env(user="llm", llm={"timeout_s": 1.0})
        env.reset(seed=0)
        assert env.step("How many people?")[0] == "<user>It's for two people.</user>"
        assert server.requests[0]["model"] == server.model


def test_llm_user_cache_replays_without_requests(tmp_path):
    with LoopbackServer(delivery_user) as server:
        for _ in range(2):
            env = make_env(user="llm", llm=quick(server, cache_dir=str(tmp_path)))
            env.reset(seed=0)
            for action in GOLDEN_ACTIONS:
                _, reward, *_, info = env.step(action)
            assert reward == 1.0
        assert len(server.requests) == 2  # the second episode came from the cache
        assert info["llm_usage"]["user"] == {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cache_hits": 2}


def test_llm_user_object_directly():
    with LoopbackServer(script=["Two of us.", f"Thanks. {STOP}"]) as server:
        user = LLMUser(make_delivery_task().user, LLMClient(quick(server)))
        assert user.reply("How many?") == "Two of us." and not user.done
        assert user.reply("Done!").endswith(STOP) and user.done
        assert [m["role"] for m in server.requests[1]["messages"]] == ["system", "assistant", "user", "assistant", "user"]


# ----- payments customer ----------------------------------------------------------------------
def _last_tool_name(messages: list[dict]) -> str:
    for m in reversed(messages):
        if m["role"] == "assistant" and m.get("tool_calls"):
            return m["tool_calls"][0]["function"]["name"]
    return ""


def payments_customer(body: dict) -> dict:
    """A customer model stand-in acting through the customer-side tools, one action a turn."""
    msgs = body["messages"]
    last = msgs[-1]
    if last["role"] == "tool":
        if _last_tool_name(msgs) == "list_pending_approvals":
            pending = json.loads(last["content"])
            if pending:
                return tool_call_reply([("decide_approval", {"approval_id": pending[0]["approval_id"], "grant": True})])
        return text_reply("Done.")
    text = last["content"].lower()
    system = msgs[0]["content"]
    if "approve" in text:
        return tool_call_reply([("list_pending_approvals", {})])
    if "upload" in text:
        docs = next(t for t in body["tools"] if t["function"]["name"] == "upload_document")
        doc = next(d for d in docs["function"]["parameters"]["properties"]["doc_type"]["enum"] if d.replace("_", " ") in text)
        return tool_call_reply([("upload_document", {"doc_type": doc})])
    if "confirm receipt" in text:
        rid = re.search(r"rc\d+", text).group(0).upper()
        return tool_call_reply([("confirm_receipt", {"receipt_id": rid})])
    if "bank account should receive" in text:
        return text_reply(re.search(r"\) (Please send the payout to bank account BA\d+\.)", system).group(1))
    return text_reply("Please take care of what I asked for.")


def test_llm_payments_customer_completes_the_golden_route():
    with LoopbackServer(payments_customer) as server:
        env = gym.make("servicegym/Payments-v0", difficulty=1, user="llm", llm=quick(server))
        env.reset(seed=3)
        assert isinstance(env.unwrapped._user, LLMPaymentsCustomer)
        for action in env.unwrapped.task.golden_actions:
            obs, reward, terminated, truncated, info = env.step(action)
        assert terminated and reward == 1.0, info["score"]
        events = [e for e in env.unwrapped.history if e.kind == "event" and e.role == "customer"]
        assert {e.name for e in events} >= {"approval_granted", "document_uploaded", "receipt_confirmed"}
        assert info["llm_usage"]["user"]["calls"] == len(server.requests) > 0
        # the customer model saw its own documents as the upload tool's choices, never the goal
        tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
        assert tools == {"list_pending_approvals", "list_open_receipts", "check_balances", "list_my_uploads", "list_my_requests",
                         "read_notifications", "decide_approval", "upload_document", "confirm_receipt", "wait"}
        assert "goal" not in server.requests[0]["messages"][0]["content"].lower()
        # the customer's own views: its accounts, uploads and requests, never another merchant's
        customer = env.unwrapped._user
        mid = customer.profile.merchant_id
        balances = json.loads(customer._read_tool("check_balances"))
        assert balances and {b["account_id"] for b in balances} == {a.id for a in env.unwrapped.world.table("accounts") if a.merchant_id == mid}
        assert all(b["available"] == round(b["balance"] - b["on_hold"], 2) for b in balances)
        uploads = json.loads(customer._read_tool("list_my_uploads"))
        assert len(uploads) == sum(1 for e in events if e.name == "document_uploaded")
        mine = json.loads(customer._read_tool("list_my_requests"))
        assert {c["status"] for c in mine["cases"]} == {"approved"} and mine["statements"][0]["status"] == "issued"
        assert len(mine["payouts"]) == len([p for p in env.unwrapped.world.table("payouts") if p.merchant_id == mid])
        before = env.unwrapped.world.state_dict()
        for name in ("check_balances", "list_my_uploads", "list_my_requests", "read_notifications"):
            result, wrote = customer._run_tool(name, "{}", False)
            assert wrote is None and json.loads(result) is not None
        assert env.unwrapped.world.state_dict() == before  # reads change nothing


def test_payments_customer_makes_at_most_one_write_per_turn():
    two_writes = tool_call_reply([("wait", {"minutes": 30}), ("upload_document", {"doc_type": "bank_statement"})])
    script = [two_writes, tool_call_reply([("wait", {"minutes": 5})]), "I waited and uploaded, as you asked.",
              Fault.malformed_tool_call("upload_document", '{"doc_type": '), tool_call_reply([("upload_document", {"doc_type": "passport"})]),
              "Sorry, I could not upload that."]
    with LoopbackServer(script=script) as server:
        env = gym.make("servicegym/Payments-v0", difficulty=1, user="llm", llm=quick(server))
        env.reset(seed=3)
        world = env.unwrapped.world
        start = world.clock.text()
        obs, *_ = env.step("Please wait 30 minutes, then upload your bank statement.")
        customer = env.unwrapped._user
        assert customer.writes_per_turn == [1]
        # the wait ran; the upload in the same reply and the second wait were refused, not executed
        assert len(world.table("uploads")) == 0 and world.clock.text() != start
        tool_msgs = [m["content"] for m in customer.messages if m["role"] == "tool"]
        assert tool_msgs[0].startswith("I waited 30 minutes") and tool_msgs[1].startswith("refused")
        assert tool_msgs[2].startswith("refused")
        assert obs.startswith("<user>I waited 30 minutes")  # the write's own report reaches the agent
        events = [e for e in env.unwrapped.history if e.kind == "event" and e.role == "customer"]
        assert [e.name for e in events] == ["customer_wait"]
        # malformed arguments and a document it does not hold: errors to the model, no write
        obs, _, terminated, truncated, _ = env.step("Please upload your passport.")
        assert not (terminated or truncated) and "could not upload" in obs
        assert customer.writes_per_turn == [1, 0] and len(world.table("uploads")) == 0
        tool_msgs = [m["content"] for m in customer.messages if m["role"] == "tool"]
        assert "not valid JSON" in tool_msgs[3] and "you hold only" in tool_msgs[4]


def test_payments_customer_failure_is_a_user_error():
    with LoopbackServer(lambda body: Fault.status(503)) as server:
        env = gym.make("servicegym/Payments-v0", difficulty=1, user="llm", llm=quick(server))
        env.reset(seed=3)
        obs, _, terminated, truncated, info = env.step("Please upload your bank statement.")
        assert truncated and info["termination_reason"] == "user_error" and "HTTP 503" in obs
        assert len(env.unwrapped.world.table("uploads")) == 0


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/InStore-v0", "servicegym/Travel-v0",
                                    "servicegym/CrossScenario-v0", "servicegym/Payments-v0"])
def test_every_domain_takes_an_llm_user(env_id):
    with LoopbackServer(script=["Could you check the options first?", f"All good, thanks. {STOP}"]) as server:
        env = gym.make(env_id, user="llm", llm=quick(server))
        obs, info = env.reset(seed=5)
        assert obs == env.unwrapped.task.user.opening
        obs, _, terminated, _, info = env.step("Hello, what exactly do you need?")
        assert obs == "<user>Could you check the options first?</user>" and not terminated
        system = server.requests[0]["messages"][0]["content"]
        assert env.unwrapped.task.user.opening in system and STOP in system
        obs, reward, terminated, truncated, info = env.step("Everything is done.")
        assert terminated and info["termination_reason"] == "user_stop" and info["llm_usage"]["user"]["calls"] == 2
        # the same task with the scripted user gives the same opening and world
        scripted = gym.make(env_id)
        assert scripted.reset(seed=5)[0] == env.unwrapped.task.user.opening


def test_the_episode_seed_goes_with_the_user_requests():
    with LoopbackServer(delivery_user) as server:
        env = make_env(user="llm", llm=quick(server))
        seeds = []
        for s in (1, 1, 2):
            env.reset(seed=s)
            env.step("How many people?")
            seeds.append(server.requests[-1]["seed"])
        assert seeds[0] == seeds[1] != seeds[2]
        fixed = make_env(user="llm", llm=quick(server, seed=42))
        fixed.reset(seed=1)
        fixed.step("How many people?")
        assert server.requests[-1]["seed"] == 42
