"""Endpoint faults must neither escape nor hang: the client against a hostile loopback server.

Each reproducer of the hardening issue, on ``chat`` and on ``achat``: a body that trickles (the
call is cut at its deadline, long before the server is done), HTTP 200 bodies that poison a naive
reader (usage of ``1e999``, a message nested 100,000 deep, lone surrogates, a body over the size
limit), a connection reset mid-reply (reported as a reset, not a timeout), the cache (keyed by
endpoint, never an orphan temporary file) and the per-episode budget of model-call seconds. A
Hypothesis property closes it: any JSON body served with status 200 gives a ``ChatResult`` or an
``LLMError``, nothing else. Never a live endpoint.
"""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicegym.simulators import llm as llm_mod
from servicegym.simulators.llm import (
    ENV_BASE_URL,
    ENV_CACHE_DIR,
    ENV_MODEL,
    MAX_JSON_DEPTH,
    ChatResult,
    EpisodeBudget,
    LLMClient,
    LLMConfig,
    LLMError,
    aclose_clients,
    loads_json,
    parse_completion,
    request_key,
)
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for var in (ENV_BASE_URL, ENV_MODEL, ENV_CACHE_DIR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


def client_for(server: LoopbackServer, **kw) -> LLMClient:
    """Small timeouts and backoff; the backoff waits are real unless ``record=True``."""
    record = kw.pop("record", False)
    cfg = server.config(timeout_s=kw.pop("timeout_s", 1.0), max_retries=kw.pop("max_retries", 0),
                        backoff_base_s=kw.pop("backoff_base_s", 0.01), **kw)
    client = LLMClient(cfg)
    if record:
        client.waits = []
        client.sleep = client.waits.append

        async def asleep(seconds: float) -> None:
            client.waits.append(seconds)

        client.asleep = asleep
    return client


def _achat(client: LLMClient, *args, **kwargs):
    async def main():
        try:
            return await client.achat(*args, **kwargs)
        finally:
            await aclose_clients()

    return asyncio.run(main())


@pytest.fixture(params=["chat", "achat"])
def chat(request):
    if request.param == "chat":
        return lambda client, *args, **kwargs: client.chat(*args, **kwargs)
    return _achat


def encodes(value) -> bool:
    """What a transcript, a record or a cache file does with a value: JSON, then UTF-8."""
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return True


def no_temp_files(folder) -> bool:
    return not [p for p in folder.rglob("*") if p.name.startswith(".tmp-")]


# ----- a total deadline per call -----------------------------------------------------------------
@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers-and-body"])
def test_a_trickling_endpoint_is_cut_at_the_deadline(server, chat, headers):
    """One byte every 50 ms: each read returns well within the 1 s per-read timeout, so only the
    total deadline can end the call; it ends there, before the server has sent half its bytes."""
    interval = 0.05
    server.handler = lambda body: Fault.trickle(interval, headers=headers)
    client = client_for(server, timeout_s=1.0, deadline_s=1.0, max_retries=3)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    took = time.monotonic() - start
    (trickle,) = server.trickles
    assert info.value.kind == "deadline" and info.value.attempts == 1  # no retry past the deadline
    assert "deadline" in str(info.value) and "timeout" not in info.value.detail
    assert trickle["sent"] < trickle["total"] / 2  # the server was far from done
    assert took < trickle["total"] * interval / 2  # the whole trickle would take 2x longer at least


def test_retries_stop_at_the_deadline(server, chat):
    """A reply slower than the per-read timeout: attempts at 0, 0.3 and 0.6 s, the third cut at
    the 0.8 s deadline, not at the slow reply's 5 s nor after max_retries=10 attempts."""
    server.handler = lambda body: Fault.slow(5)
    client = client_for(server, timeout_s=0.3, deadline_s=0.8, max_retries=10)
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    assert info.value.kind == "deadline" and 2 <= info.value.attempts <= 4
    assert time.monotonic() - start < 5 / 2


def test_no_backoff_wait_runs_past_the_deadline(server, chat):
    server.handler = lambda body: Fault.status(503)
    client = client_for(server, deadline_s=2.0, max_retries=5, backoff_base_s=30.0, backoff_max_s=30.0, record=True)
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    err = info.value
    assert err.kind == "status" and err.status == 503 and err.attempts == 1 and client.waits == []
    assert "no time for another attempt within the 2 s deadline" in str(err)


def test_deadline_is_configured_and_checked():
    cfg = LLMConfig.resolve({"base_url": "http://h/v1", "model": "m"})
    assert cfg.deadline_s == 120.0 and cfg.episode_budget_s is None and cfg.max_response_bytes > 0
    for bad in ({"deadline_s": 0}, {"deadline_s": math.inf}, {"timeout_s": math.nan}, {"episode_budget_s": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            LLMConfig.resolve({"base_url": "http://h/v1", "model": "m", **bad})


# ----- malformed 200 replies -----------------------------------------------------------------
def test_deeply_nested_reply_is_an_llm_error(server, chat):
    server.push(Fault.deep_nesting(100_000), Fault.deep_nesting(MAX_JSON_DEPTH + 1), Fault.deep_nesting(50))
    client = client_for(server)
    for _ in range(2):
        with pytest.raises(LLMError) as info:
            chat(client, HI)
        assert info.value.kind == "malformed" and "nests deeper" in str(info.value)
    # shallower than the limit: a reply (its odd content as text)
    assert chat(client, HI).content == "[" * 50 + "]" * 50


def test_overflowing_usage_counts_are_ignored(server, chat):
    server.push(Fault.overflow_usage("fine"))
    client = client_for(server)
    result = chat(client, HI)
    assert result.content == "fine"
    assert result.usage == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert client.usage["prompt_tokens"] == 0 and client.usage["calls"] == 1


def test_lone_surrogates_are_replaced_at_the_edge(server, chat, tmp_path):
    server.push(Fault.surrogate("bad \ud800 text", tool_call=True))
    client = client_for(server, cache_dir=str(tmp_path))
    result = chat(client, HI)
    assert result.content == "bad \ufffd text"
    (call,) = result.tool_calls
    assert call["id"] == "call_\ufffd" and call["function"]["name"] == "get_\ufffdweather"
    assert call["function"]["arguments"] == '{"city": "Kun\ufffdming"}'
    assert encodes(result.to_json()) and encodes(result.message())
    # the cache entry was written whole, with no temporary file left, and replays the same
    assert no_temp_files(tmp_path) and len(list(tmp_path.rglob("*.json"))) == 1
    again = chat(client_for(server, cache_dir=str(tmp_path)), HI)
    assert again.cached and again.content == result.content and again.tool_calls == result.tool_calls


def test_a_body_over_the_size_limit_is_an_llm_error(server, chat):
    server.push(text_reply("x" * 5000))
    client = client_for(server, max_response_bytes=1000)
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    assert info.value.kind == "malformed" and "byte limit" in str(info.value)


def test_the_size_limit_holds_without_content_length():
    """A chunked body (no length said up front) is cut while it is read."""

    class Response:
        headers: dict = {}

    body = llm_mod._Body(Response(), 10, time.monotonic() + 60)
    body.add(b"12345")
    with pytest.raises(ValueError, match="byte limit"):
        body.add(b"123456")


def test_parse_completion_and_loads_json_raise_value_errors_only():
    assert parse_completion(json.dumps(text_reply("hi")).encode()).content == "hi"
    deep = "[" * 100_000 + "]" * 100_000
    for bad in (b"\xff\xfe\x00", b"[1]", deep, b'{"choices": [{"message": {"tool_calls": 3}}]}', "1" * 5000):
        with pytest.raises(ValueError):
            parse_completion(bad)
    with pytest.raises(ValueError, match="nests deeper"):
        loads_json(deep)
    # brackets inside strings are text, not nesting
    assert loads_json(json.dumps({"a": "[" * 500})) == {"a": "[" * 500}


def test_error_bodies_that_trickle_or_nest_deep_end_within_the_deadline(server, chat):
    deep = '{"error": {"message": ' + "[" * 50_000 + "]" * 50_000 + "}}"
    server.push(Fault.trickle(0.05, then=Fault.status(500)), Fault.raw(deep, code=400),
                Fault.raw(b'{"error": {"message": "no \\ud800 such model"}}', code=404))
    client = client_for(server, deadline_s=1.0, max_retries=2)
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    assert info.value.kind == "deadline" and server.trickles[0]["sent"] < server.trickles[0]["total"] / 2
    for status, text in ((400, "HTTP 400"), (404, "no \ufffd such model")):
        with pytest.raises(LLMError) as info:
            chat(client, HI)
        assert info.value.status == status and text in str(info.value) and encodes(info.value.to_json())


# ----- resets, refusals ------------------------------------------------------------------------
@pytest.mark.parametrize("after", [8, None], ids=["mid-body", "before-reply"])
def test_a_reset_connection_is_reported_as_a_reset(server, chat, after):
    server.handler = lambda body: Fault.reset(after)
    client = client_for(server, max_retries=1)
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    err = info.value
    assert err.kind == "reset" and err.attempts == 2 and len(server.requests) == 2
    assert "reset or closed" in str(err) and "timeout" not in str(err)
    server.handler = lambda body: text_reply("back")
    server.push(Fault.reset(after))
    assert chat(client, HI).content == "back"  # a reset is retried like any dropped connection


def test_a_refused_connection_is_a_connection_error(chat):
    with LoopbackServer() as s:
        url = s.base_url
    client = LLMClient({"base_url": url, "model": "m", "timeout_s": 1.0, "max_retries": 0})
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    assert info.value.kind == "connection" and "timeout" not in str(info.value)


# ----- requests that cannot go out as they are -------------------------------------------------------
def test_a_lone_surrogate_in_the_request_is_sent_escaped(server, chat, tmp_path):
    client = client_for(server, cache_dir=str(tmp_path))
    assert chat(client, [{"role": "user", "content": "a\udc80b"}]).content == "OK"
    assert server.requests[0]["messages"][0]["content"] == "a\udc80b"
    assert no_temp_files(tmp_path)


def test_a_request_json_cannot_hold_is_a_clear_error(server, chat):
    client = client_for(server)
    with pytest.raises(LLMError) as info:
        chat(client, HI, top_p=float("nan"))
    assert info.value.kind == "request" and info.value.attempts == 0 and server.requests == []


# ----- the cache ---------------------------------------------------------------------------
def test_cache_keys_differ_per_endpoint(tmp_path, chat):
    body = {"model": "m", "messages": HI, "temperature": 0.0}
    assert request_key(body, "http://a/v1") != request_key(body, "http://b/v1")
    with LoopbackServer(lambda b: text_reply("from A")) as a, LoopbackServer(lambda b: text_reply("from B")) as b:
        ca, cb = client_for(a, cache_dir=str(tmp_path)), client_for(b, cache_dir=str(tmp_path))
        assert chat(ca, HI).content == "from A"
        assert chat(cb, HI).content == "from B"  # not A's cached reply
        assert chat(ca, HI).cached and chat(cb, HI).content == "from B"
        assert (len(a.requests), len(b.requests)) == (1, 1)
        urls = sorted([a.base_url, b.base_url])
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in tmp_path.rglob("*.json")]
    assert sorted(e["base_url"] for e in stored) == urls


def test_a_failed_cache_write_leaves_no_temporary_file(server, tmp_path, monkeypatch, chat):
    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(llm_mod.os, "replace", full_disk)
    client = client_for(server, cache_dir=str(tmp_path))
    with pytest.warns(RuntimeWarning, match="No space left"):
        assert chat(client, HI).content == "OK"  # the reply stands; only its entry is lost
    assert chat(client, [{"role": "user", "content": "again"}]).content == "OK"  # one warning only
    assert client.cache_errors == 2 and not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_cache_dir_that_is_a_file_costs_the_entry_not_the_reply(server, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder", encoding="utf-8")
    client = client_for(server, cache_dir=str(blocker))
    with pytest.warns(RuntimeWarning):
        assert client.chat(HI).content == "OK"
    assert client.cache_errors == 1


# ----- the per-episode budget ------------------------------------------------------------------
def test_episode_budget_cuts_the_call_that_would_pass_it(server, chat):
    """Replies take 0.5 s and the budget is 0.8 s: the first call is whole, the second is cut at
    the budget (not its 30 s deadline), the third is refused before any request."""
    server.latency_s = 0.5
    client = client_for(server, timeout_s=5.0, deadline_s=30.0, max_retries=3)
    budget = EpisodeBudget(0.8)
    assert chat(client, HI, budget=budget).content == "OK"
    assert 0.5 <= budget.spent_s < 0.8
    with pytest.raises(LLMError) as info:
        chat(client, [{"role": "user", "content": "two"}], budget=budget)
    assert info.value.kind == "budget" and "budget of 0.8 s" in str(info.value)
    assert budget.spent_s < 0.8 + 0.5  # cut near the limit, not after the reply came
    with pytest.raises(LLMError) as info:  # refused up front: no attempt at all
        chat(client, [{"role": "user", "content": "three"}], budget=budget)
    assert info.value.kind == "budget" and info.value.attempts == 0
    budget.reset()
    assert chat(client, HI, budget=budget).content == "OK"


def test_episode_budget_is_checked():
    assert EpisodeBudget(None).left_s == math.inf
    for bad in (0, -1, math.inf, math.nan, True, "10"):
        with pytest.raises(ValueError, match="budget"):
            EpisodeBudget(bad)


def test_a_cache_hit_costs_no_budget(server, tmp_path):
    client = client_for(server, cache_dir=str(tmp_path))
    client.chat(HI)
    budget = EpisodeBudget(1.0)
    budget.charge(5.0)  # spent
    assert client.chat(HI, budget=budget).cached


# ----- any 200 body: a result or an LLMError ----------------------------------------------------
CHARS = st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010, exclude_categories=()) | st.characters()
TEXT = st.text(alphabet=CHARS, max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(TEXT, kids, max_size=4),
    max_leaves=20,
)
NUMBERS = st.integers(min_value=-(2**70), max_value=2**70) | st.floats() | st.none() | TEXT
COMPLETIONS = st.builds(
    lambda content, calls, finish, usage: {"object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content, "tool_calls": calls}, "finish_reason": finish}],
        "usage": usage},
    content=st.none() | TEXT | JSON_VALUES,
    calls=st.none() | JSON_VALUES | st.lists(st.fixed_dictionaries({
        "id": st.none() | TEXT | st.integers(), "type": st.just("function"),
        "function": st.fixed_dictionaries({"name": st.none() | TEXT | JSON_VALUES, "arguments": TEXT | JSON_VALUES}),
    }), max_size=3),
    finish=st.none() | TEXT | JSON_VALUES,
    usage=st.dictionaries(st.sampled_from(["prompt_tokens", "completion_tokens", "total_tokens"]), NUMBERS) | JSON_VALUES,
)
# nesting around the limit and far past it, as raw JSON text
NESTED = st.integers(min_value=MAX_JSON_DEPTH - 2, max_value=3000).map(lambda d: ("[" * d + "]" * d).encode())
BODIES = JSON_VALUES | COMPLETIONS | NESTED


def as_bytes(body) -> bytes:
    """A body as served: raw bytes as they are, any other value as its JSON (ASCII escapes)."""
    return body if isinstance(body, bytes) else json.dumps(body).encode("ascii")


def _check_outcome(outcome) -> None:
    if isinstance(outcome, LLMError):
        assert outcome.kind == "malformed"
        assert encodes(outcome.to_json())
        return
    assert isinstance(outcome, ChatResult)
    assert outcome.content is None or isinstance(outcome.content, str)
    assert all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v for v in outcome.usage.values())
    assert all(isinstance(c["function"]["arguments"], str) and isinstance(c["function"]["name"], str)
               for c in outcome.tool_calls)
    assert encodes(outcome.to_json()) and encodes(outcome.message())


@pytest.fixture(scope="module")
def shared_server():
    with LoopbackServer() as s:
        yield s


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES)
def test_any_json_body_with_status_200_gives_a_result_or_an_llm_error(shared_server, body):
    shared_server.push(Fault.raw(as_bytes(body)))
    client = LLMClient(shared_server.config(timeout_s=5.0, max_retries=0))
    try:
        outcome = client.chat(HI)
    except LLMError as err:
        outcome = err
    _check_outcome(outcome)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES)
def test_any_json_body_with_status_200_gives_a_result_or_an_llm_error_async(shared_server, body):
    shared_server.push(Fault.raw(as_bytes(body)))
    client = LLMClient(shared_server.config(timeout_s=5.0, max_retries=0))
    try:
        outcome = _achat(client, HI)
    except LLMError as err:
        outcome = err
    _check_outcome(outcome)


@settings(max_examples=400, deadline=None)
@given(raw=st.binary(max_size=200) | BODIES.map(as_bytes))
def test_parse_completion_gives_a_result_or_a_value_error(raw):
    try:
        result = parse_completion(raw)
    except ValueError as err:
        assert encodes(str(err))
    else:
        _check_outcome(result)


# ----- the request itself ----------------------------------------------------------------------
TOOL_A = {"type": "function", "function": {"name": "get_store", "description": "A store's details.",
                                           "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}}
TOOL_B = {"type": "function", "function": {"name": "pay", "description": "Pay an order (支付).",
                                           "parameters": {"type": "object", "properties": {}}}}


def test_both_paths_send_the_same_request_with_the_key_and_the_tools(server, chat, monkeypatch):
    """``chat`` goes through the openai client's own ``post``; ``achat`` sends a request built once
    per loop (URL, headers) with each call's body: the endpoint sees the same request either way,
    the API key from the environment in its Authorization header, and the tools each call passes
    (their JSON is kept per schema object, so other objects are serialised afresh)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    client = client_for(server)
    chat(client, HI, tools=[TOOL_A, TOOL_B], temperature=0)
    chat(client, HI, tools=[TOOL_A, TOOL_B], temperature=0)
    changed = json.loads(json.dumps(TOOL_B))
    changed["function"]["description"] = "Pay an unpaid order."
    chat(client, HI, tools=[TOOL_A, changed], temperature=0)
    first, second, third = server.requests
    assert first == second and first["messages"] == HI and first["tools"] == [TOOL_A, TOOL_B]
    assert first["temperature"] == 0 and first["model"] == server.model
    assert third["tools"] == [TOOL_A, changed]
    for headers in server.request_headers:
        assert headers["authorization"] == "Bearer sk-loopback-test"
        assert headers["content-type"] == "application/json" and "openai" in headers["user-agent"].lower()
