"""The work an LLM rollout does per model call, counted (never timed; issue 29): a conversation's
messages are serialised once each (``Transcript``), with request bytes identical to a plain list's;
a blocking call on a plain keep-alive connection sets no socket timeout; the thread backend starts
every thread with its env before any episode; the async backend closes its sessions after a run."""

from __future__ import annotations

import asyncio
import json
import pickle
import socket
import threading

import pytest

import servicegym  # noqa: F401
import servicegym.simulators.llm as llm_mod
import servicegym.simulators.llm_transport as llm_transport
from servicegym.envs.running import episodes
from servicegym.envs.running.llm_policy import LLMAgentPolicy
from servicegym.envs.running.rollouts import collect
from servicegym.simulators.llm import ENV_BASE_URL, ENV_CACHE_DIR, ENV_MODEL, LLMClient, Transcript, aclose_clients
from servicegym.simulators.loopback import LoopbackServer, text_reply, tool_call_reply

DELIVERY = "servicegym/Delivery-v0"
TOOLS = [{"type": "function", "function": {"name": f"tool_{i}", "description": "d" * 40,
                                           "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}
         for i in range(3)]


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for var in (ENV_BASE_URL, ENV_MODEL, ENV_CACHE_DIR, "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
                "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-overhead")


def conversation():
    return [{"role": "system", "content": "You serve \u00e9 users"}, {"role": "user", "content": "hi \"there\"\n"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "tool_1", "arguments": '{"x": "\u4e2d"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ERROR: no such \\ thing"},
            {"role": "user", "content": "bad \ud800 surrogate"}]


@pytest.mark.parametrize("kwargs", [
    {}, {"tools": TOOLS}, {"tools": TOOLS, "tool_choice": "auto", "top_p": 0.5},
    {"tools": [], "response_format": {"type": "json_object"}}, {"extra_body": {"1": 2, "z": [1.5, None]}},
])
@pytest.mark.parametrize("config", [{}, {"seed": 7, "max_tokens": 99}])
@pytest.mark.parametrize("cut", [2, 4, 5])
def test_a_transcript_sends_the_same_bytes_as_a_plain_list(kwargs, config, cut):
    client = LLMClient({"base_url": "http://127.0.0.1:9/v1", "model": "m", **config})
    plain = conversation()[:cut]
    body = client.request_body(plain, **kwargs)
    expected = client._payload(body)
    transcript = Transcript(plain)
    for _ in range(2):  # the second request reuses every message's JSON
        assert client._payload(client.request_body(transcript, **kwargs)) == expected
    assert json.loads(expected)["messages"] == json.loads(expected.decode("utf-8", "surrogatepass"))["messages"]


def test_a_transcript_serialises_each_message_once_as_the_conversation_grows():
    seen: list[str] = []

    def dumps(value):
        seen.append(value["role"])
        return json.dumps(value)

    t = Transcript()
    for m in conversation():
        t.append(m)
        assert json.loads(t.encoded(dumps)) == json.loads(json.dumps(list(t)))
    assert seen == [m["role"] for m in conversation()]  # one serialisation per message, never again
    del t[2:4]  # a context limit leaves turns out: the rest still reuse their JSON
    assert json.loads(t.encoded(dumps)) == [m for i, m in enumerate(conversation()) if i not in (2, 3)]
    assert len(seen) == 5
    copy = pickle.loads(pickle.dumps(t))
    assert isinstance(copy, Transcript) and copy == t and list(t) == list(copy)


def test_the_llm_policy_serialises_each_message_once_per_episode(monkeypatch):
    calls: list[int] = []
    real = llm_transport._dumps  # the request body's JSON is made in llm_transport (``_body_json``)

    def counting(value):
        if isinstance(value, dict) and "role" in value:
            calls.append(id(value))
        return real(value)

    monkeypatch.setattr(llm_transport, "_dumps", counting)
    replies = [tool_call_reply([("tool_1", {"x": str(i)})]) for i in range(4)] + [text_reply("done")]
    with LoopbackServer(script=replies) as server:
        client = LLMClient(server.config(timeout_s=5))
        policy = LLMAgentPolicy(client=client)
        policy.reset(None, "opening", {"tools": TOOLS, "system_prompt": "sys"})
        obs = "opening"
        for i in range(5):
            policy.act(obs)
            obs = f'<tool_result name="tool_1" call_id="call_lb_1">result {i}</tool_result>'
    assert isinstance(policy.messages, Transcript)
    assert len(server.requests) == 5 and len(policy.messages) == 11
    assert len(calls) == 10 and len(set(calls)) == 10  # every message sent serialised once, in 5 requests


def test_a_blocking_call_on_a_plain_connection_sets_no_timeout_per_request(monkeypatch):
    set_timeouts: list[float | None] = []
    real = socket.socket.settimeout

    def counting(self, value):
        set_timeouts.append(value)
        return real(self, value)

    with LoopbackServer(handler=lambda body: text_reply("ok")) as server:
        client = LLMClient(server.config(timeout_s=5))
        assert client.chat([{"role": "user", "content": "warm"}]).content == "ok"
        monkeypatch.setattr(socket.socket, "settimeout", counting)
        for i in range(5):
            assert client.chat([{"role": "user", "content": f"hi {i}"}]).content == "ok"
    assert set_timeouts == []  # the connection waits with its own poll: one system call per wait, send, read
    assert client._endpoint.direct.opened == 1


def test_the_thread_backend_starts_every_thread_with_its_env_before_any_episode(tmp_path, monkeypatch):
    events: list[tuple[str, int]] = []
    lock = threading.Lock()
    built = episodes.EpisodeWorker.__init__

    def init(self, *args, **kwargs):
        built(self, *args, **kwargs)
        with lock:
            events.append(("worker", threading.get_ident()))

    class Recording:
        def reset(self, env, obs, info):
            with lock:
                events.append(("episode", threading.get_ident()))

        def act(self, obs):
            return "###STOP###"

    monkeypatch.setattr(episodes.EpisodeWorker, "__init__", init)
    s = collect(DELIVERY, Recording, out=tmp_path, split="test", limit=12, concurrency=6, backend="thread",
                progress=False)
    assert s.collected == 12
    kinds = [k for k, _ in events]
    assert kinds == ["worker"] * 6 + ["episode"] * 12  # six threads and envs made before the first episode
    assert len({t for k, t in events if k == "worker"}) == 6
    assert {t for k, t in events if k == "episode"} <= {t for k, t in events if k == "worker"}


def test_a_worker_that_cannot_be_built_fails_the_thread_run_without_hanging(tmp_path, monkeypatch):
    built = episodes.EpisodeWorker.__init__
    count = iter(range(100))

    def init(self, *args, **kwargs):
        if next(count) == 2:
            raise RuntimeError("no env for this thread")
        built(self, *args, **kwargs)

    monkeypatch.setattr(episodes.EpisodeWorker, "__init__", init)
    with pytest.raises(RuntimeError, match="no env for this thread"):
        collect(DELIVERY, "oracle", out=tmp_path, split="test", limit=8, concurrency=4, backend="thread",
                progress=False)


def test_the_async_backend_closes_its_clients_after_a_run(tmp_path):
    with LoopbackServer(handler=lambda body: text_reply("Thank you. ###STOP###")) as server:
        s = collect(DELIVERY, "llm", out=tmp_path, split="test", limit=4, concurrency=4, backend="async",
                    policy_kwargs={"llm": server.config(timeout_s=5)}, progress=False)
        assert s.collected == 4 and s.errors == 0
    assert not llm_mod._LOOP_CLIENTS  # the run's loop and its HTTP sessions are gone
    asyncio.run(aclose_clients())  # nothing left to close: a no-op


def test_a_socket_in_timeout_mode_sets_its_timeout_only_when_it_changes(monkeypatch):
    """The path of TLS sockets (and of systems without ``select.poll``), forced on a plain one."""
    from servicegym.simulators import llm_http

    monkeypatch.delattr(llm_http.select, "poll")
    set_timeouts: list[float | None] = []
    real = socket.socket.settimeout

    def counting(self, value):
        set_timeouts.append(value)
        return real(self, value)

    with LoopbackServer(handler=lambda body: text_reply("ok")) as server:
        client = LLMClient(server.config(timeout_s=5))
        monkeypatch.setattr(socket.socket, "settimeout", counting)
        for i in range(4):
            assert client.chat([{"role": "user", "content": f"hi {i}"}]).content == "ok"
    assert client._endpoint.direct.opened == 1
    # create_connection's own, then the call's timeout once: not twice per request
    assert set_timeouts == [5, 5]
