"""The LLM client layer against the project's loopback chat-completions server (real ``openai``
client, real HTTP on 127.0.0.1, injected faults; never a live endpoint)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from servicegym.simulators.llm import (
    ENV_BASE_URL,
    ENV_CACHE_DIR,
    ENV_MODEL,
    LLMClient,
    LLMConfig,
    LLMError,
    aclose_clients,
    request_key,
)
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply

SECRET = "sk-test-DO-NOT-LEAK-1234567890"
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for var in (ENV_BASE_URL, ENV_MODEL, ENV_CACHE_DIR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


def fast(server: LoopbackServer, **kw) -> LLMClient:
    """A client with tiny backoff, its waits recorded instead of slept. Its timeout (5 s) is one no
    loopback reply reaches even on a loaded machine (a full garbage collection of a big test
    process can stall a first request for a few hundred ms); the timeout tests set their own."""
    cfg = server.config(timeout_s=kw.pop("timeout_s", 5.0), max_retries=kw.pop("max_retries", 2),
                        backoff_base_s=kw.pop("backoff_base_s", 0.01), **kw)
    client = LLMClient(cfg)
    client.waits = []
    client.sleep = client.waits.append

    async def asleep(seconds: float) -> None:
        client.waits.append(seconds)

    client.asleep = asleep
    return client


def _achat(client: LLMClient, *args, **kwargs):
    """``client.achat`` on a fresh event loop, its HTTP sessions closed before the loop ends."""
    async def main():
        try:
            return await client.achat(*args, **kwargs)
        finally:
            await aclose_clients()

    return asyncio.run(main())


@pytest.fixture(params=["chat", "achat"])
def chat(request):
    """Both ways to call the endpoint: every fault test runs on ``chat`` and on ``achat``."""
    if request.param == "chat":
        return lambda client, *args, **kwargs: client.chat(*args, **kwargs)
    return _achat


# ----- configuration -------------------------------------------------------------------------------
def test_resolve_names_what_is_missing():
    with pytest.raises(ValueError, match=r"base_url.*SERVICEGYM_BASE_URL.*model.*SERVICEGYM_MODEL"):
        LLMConfig.resolve(None)
    with pytest.raises(ValueError, match="missing model"):
        LLMConfig.resolve({"base_url": "http://localhost:1/v1"})


def test_resolve_merges_env_vars_and_dict(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_BASE_URL, "http://env-host:8000/v1/")
    monkeypatch.setenv(ENV_MODEL, "env-model")
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path))
    cfg = LLMConfig.resolve(None)
    assert (cfg.base_url, cfg.model, cfg.cache_dir) == ("http://env-host:8000/v1", "env-model", str(tmp_path))
    cfg = LLMConfig.resolve({"model": "dict-model", "temperature": 0.7, "seed": 3})
    assert (cfg.base_url, cfg.model, cfg.temperature, cfg.seed) == ("http://env-host:8000/v1", "dict-model", 0.7, 3)
    assert LLMConfig.resolve(cfg) is cfg


def test_resolve_rejects_bad_fields_and_keys_in_the_dict():
    with pytest.raises(ValueError, match="environment variable"):
        LLMConfig.resolve({"base_url": "http://h/v1", "model": "m", "api_key": SECRET})
    with pytest.raises(ValueError, match="timeout"):
        LLMConfig.resolve({"base_url": "http://h/v1", "model": "m", "timeout": 3})
    with pytest.raises(ValueError, match="base_url"):
        LLMConfig.resolve({"base_url": "localhost:8000", "model": "m"})


# ----- retries and faults ---------------------------------------------------------------------
def test_429_then_success_retries_once(server, chat):
    server.push(Fault.status(429), "hello")
    client = fast(server)
    result = chat(client, HI)
    assert result.content == "hello" and result.attempts == 2 and not result.cached
    assert len(server.requests) == 2 and len(client.waits) == 1
    assert result.usage["prompt_tokens"] > 0 and result.usage["completion_tokens"] == 1
    assert client.usage["calls"] == 1 and client.usage["errors"] == 0


def test_retry_after_is_honoured_when_small(server, chat):
    server.push(Fault.status(429, retry_after=0.25), Fault.status(503, retry_after=999), "ok")
    client = fast(server, backoff_base_s=7.0, backoff_max_s=7.0, retry_after_max_s=30)
    assert chat(client, HI).content == "ok"
    assert client.waits[0] == 0.25  # the server's hint
    assert 3.5 <= client.waits[1] <= 7.0  # too long a hint: the capped, jittered backoff instead


def test_500s_until_retries_run_out_raise_llm_error(server, chat):
    server.handler = lambda body: Fault.status(500)
    client = fast(server, max_retries=3)
    with pytest.raises(LLMError) as info:
        chat(client, HI)
    err = info.value
    assert err.attempts == 4 and err.status == 500 and err.kind == "status"
    assert len(server.requests) == 4
    assert server.base_url in str(err) and server.model in str(err) and "HTTP 500" in str(err)
    assert client.usage["errors"] == 1 and client.usage["calls"] == 0


def test_backoff_grows_and_is_deterministic_per_seed(server, chat):
    waits = []
    for _ in range(2):
        server.handler = lambda body: Fault.status(503)
        client = fast(server, max_retries=4, backoff_base_s=1.0, backoff_max_s=5.0, seed=11)
        with pytest.raises(LLMError):
            chat(client, HI)
        waits.append(client.waits)
    assert waits[0] == waits[1] and len(waits[0]) == 4
    caps = [1.0, 2.0, 4.0, 5.0]
    assert all(cap / 2 <= w <= cap for w, cap in zip(waits[0], caps))


def test_slow_reply_past_the_timeout_is_retried_then_fails(server, chat):
    server.push(Fault.slow(5), "late but fine")
    client = fast(server, max_retries=1, timeout_s=0.3)
    result = chat(client, HI)  # the first attempt times out, the retry gets the next reply
    assert result.content == "late but fine" and result.attempts == 2
    server.handler = lambda body: Fault.slow(5)
    with pytest.raises(LLMError) as info:
        chat(client, [{"role": "user", "content": "again"}])
    assert info.value.kind == "timeout" and info.value.attempts == 2
    assert "timeout" in str(info.value)


def test_client_errors_are_not_retried(server, chat):
    server.push(Fault.status(400, message="unknown parameter"), Fault.status(404))
    client = fast(server, max_retries=5)
    for _ in range(2):
        with pytest.raises(LLMError) as info:
            chat(client, HI)
        assert info.value.attempts == 1
    assert info.value.status == 404
    assert len(server.requests) == 2


def test_unreadable_response_and_refused_connection(chat):
    with LoopbackServer(handler=lambda body: Fault.garbage()) as s:
        client = fast(s, max_retries=1)
        with pytest.raises(LLMError) as info:
            chat(client, HI)
        assert info.value.kind == "malformed" and len(s.requests) == 2
        url = s.base_url
    dead = LLMClient({"base_url": url, "model": "m", "timeout_s": 0.3, "max_retries": 1, "backoff_base_s": 0.0})
    with pytest.raises(LLMError) as info:
        chat(dead, HI)
    assert info.value.kind == "connection" and info.value.attempts == 2 and url in str(info.value)


def test_tool_calls_come_back_raw_even_when_malformed(server, chat):
    server.push(tool_call_reply([("get_weather", {"city": "Kunming"})], content="checking"),
                Fault.malformed_tool_call("get_weather", '{"city": '))
    client = fast(server)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]
    ok = chat(client, HI, tools=tools, tool_choice="auto")
    assert ok.content == "checking" and ok.finish_reason == "tool_calls"
    assert ok.tool_calls == [{"id": "call_lb_1", "type": "function",
                              "function": {"name": "get_weather", "arguments": '{"city": "Kunming"}'}}]
    assert server.requests[0]["tools"] == tools and server.requests[0]["tool_choice"] == "auto"
    bad = chat(client, [{"role": "user", "content": "again"}], tools=tools)
    assert bad.tool_calls[0]["function"]["arguments"] == '{"city": '
    assert ok.message()["tool_calls"] == ok.tool_calls


def test_request_carries_model_temperature_seed_and_extras(server, chat):
    client = fast(server, temperature=0.2, seed=5, max_tokens=64)
    chat(client, HI, response_format={"type": "json_object"}, top_p=0.9, repetition_penalty=1.1)
    body = server.requests[0]
    assert body["model"] == server.model and body["temperature"] == 0.2 and body["seed"] == 5
    assert body["max_tokens"] == 64 and body["top_p"] == 0.9 and body["response_format"] == {"type": "json_object"}
    assert body["repetition_penalty"] == 1.1  # not an openai parameter: sent in the body as it is


def test_models_endpoint_check(server):
    client = fast(server)
    assert client.check() == [server.model]
    other = LLMClient(server.config(model="not-served"))
    with pytest.raises(LLMError, match="not-served"):
        other.check()


def test_concurrent_calls_share_one_client(server):
    server.handler = lambda body: text_reply(body["messages"][0]["content"].upper())
    client = fast(server)
    out: dict[int, str] = {}

    def work(i: int) -> None:
        for j in range(5):
            out[i * 10 + j] = client.chat([{"role": "user", "content": f"m{i}-{j}"}]).content

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 40 and all(v == f"M{k // 10}-{k % 10}" for k, v in out.items())
    assert client.usage["calls"] == 40 and len(server.requests) == 40


def test_concurrent_achat_on_one_loop_share_one_client(server):
    """64 coroutines on one event loop wait on the endpoint together (the async rollout backend
    depends on this): with a reply taking 1 s, all 64 requests are in the server at once."""
    server.handler = lambda body: text_reply(body["messages"][0]["content"].upper())
    server.latency_s = 1.0
    client = fast(server, timeout_s=30)

    async def main():
        try:
            return await asyncio.gather(*(client.achat([{"role": "user", "content": f"m{i}"}]) for i in range(64)))
        finally:
            await aclose_clients()

    results = asyncio.run(main())
    assert [r.content for r in results] == [f"M{i}" for i in range(64)]
    assert client.usage["calls"] == 64 and len(server.requests) == 64
    assert server.max_in_flight == 64


# ----- cache ---------------------------------------------------------------------------------
def test_a_loop_ended_by_asyncio_run_closes_its_sessions(server):
    """``achat`` without ``aclose_clients``: as ``asyncio.run`` ends the loop it closes the loop's
    HTTP session (no "Unclosed client session" warning at exit), and nothing keeps the loop alive
    after it."""
    import gc
    import warnings
    import weakref

    gc.collect()  # what earlier tests on this worker left for the collector warns now, not inside the check below
    client = fast(server)
    seen = []

    async def main():
        await client.achat(HI)
        seen.append((client._async_client(), weakref.ref(asyncio.get_running_loop())))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            asyncio.run(main())
        assert all(endpoint.http.is_closed for endpoint, _ in seen)
        loops = [loop for _, loop in seen]
        seen.clear()
        gc.collect()
    assert [loop() for loop in loops] == [None, None, None]
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]


def test_cache_hit_makes_no_request_and_returns_the_same(server, tmp_path, chat):
    server.push(tool_call_reply([("lookup", {"q": "x"})], content="one"), "two")
    client = fast(server, cache_dir=str(tmp_path))
    first = chat(client, HI, tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}])
    again = chat(fast(server, cache_dir=str(tmp_path)), HI, tools=[{"type": "function", "function": {"name": "lookup", "parameters": {}}}])
    assert len(server.requests) == 1
    assert again.cached and again.attempts == 0 and not first.cached
    assert (again.content, again.tool_calls, again.usage, again.finish_reason) == (
        first.content, first.tool_calls, first.usage, first.finish_reason)
    # anything in the request that changes the answer is part of the key
    assert chat(client, HI).content == "two" and len(server.requests) == 2
    assert client.usage["cache_hits"] == 0
    c3 = fast(server, cache_dir=str(tmp_path))
    chat(c3, HI)
    assert c3.usage["cache_hits"] == 1 and len(server.requests) == 2


def test_cache_key_is_content_addressed():
    a = {"model": "m", "messages": HI, "temperature": 0.0}
    b = {"temperature": 0.0, "messages": [{"content": "hi", "role": "user"}], "model": "m"}
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key({**a, "seed": 1}) != request_key({**a, "model": "n"})
    assert request_key(a, "http://one/v1") != request_key(a, "http://two/v1")  # the endpoint too


def test_damaged_cache_entry_is_a_miss(server, tmp_path):
    client = fast(server, cache_dir=str(tmp_path))
    client.chat(HI)
    (entry,) = list(tmp_path.rglob("*.json"))
    entry.write_text("{not json", encoding="utf-8")
    assert not fast(server, cache_dir=str(tmp_path)).chat(HI).cached
    assert json.loads(entry.read_text(encoding="utf-8"))["result"]["content"] == "OK"


def test_the_key_never_leaks(server, tmp_path, monkeypatch, chat):
    server.push("fine", Fault.status(401, message=f"Incorrect API key provided: {SECRET}."))
    client = fast(server, cache_dir=str(tmp_path))
    chat(client, HI)
    with pytest.raises(LLMError) as info:
        chat(client, [{"role": "user", "content": "second"}])
    assert info.value.attempts == 1  # 401 is not retried
    texts = [str(info.value), json.dumps(info.value.to_json()), repr(client), repr(client.config),
             str(client.config.model_dump()), json.dumps(server.requests)]
    texts += [p.read_text(encoding="utf-8") for p in tmp_path.rglob("*") if p.is_file()]
    assert all(SECRET not in t for t in texts)
    assert "***" in str(info.value)


def test_shared_clients_one_per_config_and_key(monkeypatch):
    from servicegym.simulators import llm as llm_mod

    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}
    a = LLMClient.shared(cfg)
    assert LLMClient.shared(dict(cfg)) is a and LLMClient.shared(LLMConfig.resolve(cfg)) is a
    assert LLMClient.shared({**cfg, "temperature": 0.5}) is not a
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-key")
    assert LLMClient.shared(cfg) is not a  # another key: another client, never a shared secret
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert LLMClient.shared(cfg) is a
    for seed in range(llm_mod._SHARED_MAX + 5):  # a config per seed does not pile up clients
        LLMClient.shared({**cfg, "seed": seed})
    assert len(llm_mod._SHARED) <= llm_mod._SHARED_MAX
    assert LLMClient.shared({**cfg, "seed": llm_mod._SHARED_MAX + 4}) is LLMClient.shared({**cfg, "seed": llm_mod._SHARED_MAX + 4})
