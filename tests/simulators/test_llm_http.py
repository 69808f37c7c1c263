"""The LLM client's lean HTTP/1.1 transport (``simulators/llm_http.py``) and the loopback server's
request reader: replies framed every way HTTP/1.1 allows, read within the size limit; keep-alive
connections reused, and dropped when the server closed them; a cancelled call never leaves its
late reply for the next one; a proxy or a redirect takes the openai client's own HTTP stack."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading

import pytest

from servicegym.simulators.llm import ENV_BASE_URL, ENV_CACHE_DIR, ENV_MODEL, LLMClient, LLMError, aclose_clients
from servicegym.simulators.llm_http import (
    BadResponse,
    Redirect,
    ResponseParser,
    direct_ok,
    request_head,
)
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply

HI = [{"role": "user", "content": "hi"}]
OK_BODY = json.dumps(text_reply("fine")).encode()


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for var in (ENV_BASE_URL, ENV_MODEL, ENV_CACHE_DIR, "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
                "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-http")


def parse(data: bytes, limit: int = 1 << 20, step: int | None = None, eof: bool = False) -> ResponseParser:
    """Feed ``data`` whole or ``step`` bytes at a time; the parser must say it is done."""
    p = ResponseParser(limit)
    pieces = [data] if step is None else [data[i:i + step] for i in range(0, len(data), step)]
    done = False
    for piece in pieces:
        assert not done, "more bytes after the reply was complete"
        done = p.feed(piece)
    if eof:
        done = p.eof()
    assert done
    return p


# ----- the reply parser --------------------------------------------------------------------------
@pytest.mark.parametrize("step", [None, 1, 7])
def test_content_length_reply_in_any_pieces(step):
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(OK_BODY), OK_BODY)
    p = parse(raw, step=step)
    reply = p.reply()
    assert reply.status == 200 and reply.body == OK_BODY and p.keep_alive
    assert reply.headers["content-type"] == "application/json"


def test_chunked_reply_with_extensions_and_trailers_and_an_interim_reply():
    body = OK_BODY
    raw = (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"%x;ext=1\r\n%s\r\n" % (10, body[:10]) + b"%x\r\n%s\r\n" % (len(body) - 10, body[10:])
           + b"0\r\nX-Trailer: yes\r\n\r\n")
    for step in (None, 3):
        p = parse(raw, step=step)
        assert p.reply().body == body and p.reply().status == 200 and p.keep_alive


def test_a_reply_without_length_is_read_to_the_close_and_not_reused():
    p = parse(b"HTTP/1.0 200 OK\r\n\r\n" + OK_BODY, eof=True)
    assert p.reply().body == OK_BODY and not p.keep_alive
    p = parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
    assert not p.keep_alive


def test_gzip_bodies_are_decoded_within_the_limit():
    packed = gzip.compress(OK_BODY)
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(packed), packed)
    assert parse(raw).reply().body == OK_BODY
    bomb = gzip.compress(b" " * 10_000)
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(bomb), bomb)
    with pytest.raises(BadResponse, match="byte limit"):
        parse(raw, limit=1000).reply()
    raw = b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}"
    with pytest.raises(BadResponse, match="Content-Encoding"):
        parse(raw).reply()


@pytest.mark.parametrize("raw, match", [
    (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x reply"),
    (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP/1.x reply"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 12, 13\r\n\r\n", "not a length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", "byte limit"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n", "byte limit"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX", "CRLF"),
])
def test_what_is_not_a_reply_is_a_bad_response(raw, match):
    with pytest.raises(BadResponse, match=match):
        ResponseParser(1000).feed(raw)


def test_a_head_without_end_is_bounded():
    p = ResponseParser(1000)
    with pytest.raises(BadResponse, match="head is over"):
        for _ in range(100):
            p.feed(b"X-Filler: " + b"a" * 1000 + b"\r\n")


def test_a_close_mid_reply_is_a_reset_and_a_redirect_is_said():
    p = ResponseParser(1000)
    p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}")
    with pytest.raises(ConnectionResetError, match="mid-reply"):
        p.eof()
    with pytest.raises(ConnectionResetError, match="without a reply"):
        ResponseParser(1000).eof()
    p = parse(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://x/v1/chat/completions\r\nContent-Length: 0\r\n\r\n")
    with pytest.raises(Redirect):
        p.reply()


# ----- the request ------------------------------------------------------------------------------
def test_request_head_and_which_endpoints_go_direct(monkeypatch):
    host, port, tls, head = request_head("https://api.example.com:8443/v1?x=1", "/chat/completions",
                                         {"Authorization": "Bearer k", "Content-Length": "9"})
    assert (host, port, tls) == ("api.example.com", 8443, True)
    text = head.decode()
    assert text.startswith("POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: api.example.com:8443\r\n")
    assert "Authorization: Bearer k" in text and "Content-Length: 9" not in text and text.endswith("Content-Length: ")
    assert direct_ok("http://127.0.0.1:8000/v1", {"Authorization": "Bearer k"})
    assert not direct_ok("http://127.0.0.1:8000/v1", {"Authorization": "Bearer k\r\nX-Injected: 1"})
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert not direct_ok("http://10.1.2.3:8000/v1", {})
    monkeypatch.setenv("NO_PROXY", "10.1.2.3")
    assert direct_ok("http://10.1.2.3:8000/v1", {})


def test_the_request_goes_out_with_the_openai_clients_headers_and_body():
    with LoopbackServer() as server:
        client = LLMClient(server.config(timeout_s=5))
        client.chat(HI)
        asyncio.run(_achat(client, HI))
        sync, async_ = server.request_headers
        assert sync["user-agent"].startswith("OpenAI/Python") and async_["user-agent"].startswith("AsyncOpenAI/Python")
        assert {k: v for k, v in sync.items() if k not in ("user-agent", "x-stainless-async")} == \
            {k: v for k, v in async_.items() if k not in ("user-agent", "x-stainless-async")}
        assert sync["authorization"] == "Bearer sk-test-http" and sync["content-type"] == "application/json"
        assert sync["accept-encoding"] == "identity" and sync["connection"] == "keep-alive"
        assert server.requests[0] == server.requests[1] == {"model": server.model, "messages": HI, "temperature": 0.0}


async def _achat(client: LLMClient, messages, **kw):
    try:
        return await client.achat(messages, **kw)
    finally:
        await aclose_clients()


# ----- connections ------------------------------------------------------------------------------
def test_keep_alive_connections_are_reused_sync_and_async():
    with LoopbackServer(latency_s=0.01) as server:
        client = LLMClient(server.config(timeout_s=5))
        for _ in range(20):
            assert client.chat(HI).content == "OK"
        assert client._endpoint.direct.opened == 1

        async def main():
            try:
                for _ in range(3):  # three waves of 16 calls at once: 16 connections, reused
                    results = await asyncio.gather(*(client.achat(HI) for _ in range(16)))
                    assert [r.content for r in results] == ["OK"] * 16
                return client._async_client().direct.opened
            finally:
                await aclose_clients()

        assert asyncio.run(main()) == 16
        assert server.completions == 20 + 48 and server.max_in_flight >= 16


def test_a_connection_the_server_closed_while_idle_is_replaced():
    first = LoopbackServer(script=["one", "two"]).start()
    port = int(first.base_url.rsplit(":", 1)[1].split("/")[0])
    client = LLMClient(first.config(timeout_s=5))

    async def call():
        return (await client.achat(HI)).content

    async def main():
        try:
            assert await call() == "two"
            first.close()  # the server ends every connection, the idle pooled one too
            await asyncio.sleep(0.1)
            with LoopbackServer(script=["again"], port=port) as second:
                assert await call() == "again"
                return second.completions
        finally:
            await aclose_clients()

    assert client.chat(HI).content == "one"
    assert asyncio.run(main()) == 1
    with LoopbackServer(script=["sync again"], port=port):
        assert client.chat(HI).content == "sync again"  # the sync pool's idle connection was stale too
    assert client._endpoint.direct.opened == 2


def test_a_cancelled_call_never_leaves_its_reply_for_the_next():
    with LoopbackServer(script=[Fault.slow(0.3, then="late"), "next"]) as server:
        client = LLMClient(server.config(timeout_s=5))

        async def main():
            try:
                task = asyncio.ensure_future(client.achat(HI))
                await asyncio.sleep(0.1)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                await asyncio.sleep(0.4)  # the late reply would have come by now
                return (await client.achat(HI)).content
            finally:
                await aclose_clients()

        assert asyncio.run(main()) == "next"


def test_a_proxy_from_the_environment_takes_the_full_http_stack(monkeypatch):
    with LoopbackServer() as server:
        url = server.base_url
    with LoopbackServer() as proxy:
        proxy_url = proxy.base_url.rsplit("/v1", 1)[0]
    monkeypatch.setenv("HTTP_PROXY", proxy_url)  # nothing listens there now
    client = LLMClient({"base_url": url.replace("127.0.0.1", "localhost"), "model": "m", "timeout_s": 2,
                        "max_retries": 0})
    assert client._endpoint.direct is None
    with pytest.raises(LLMError) as info:
        client.chat(HI)
    assert info.value.kind == "connection"


class _Redirector:
    """A server that answers every POST with a 307 to ``target`` (and closes the connection)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                self.hits += 1
                conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + self.target.encode()
                             + b"/chat/completions\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def test_a_redirect_is_followed_on_the_full_http_stack():
    with LoopbackServer(script=["sync", "async"]) as server:
        redirector = _Redirector(server.base_url)
        try:
            base = f"http://127.0.0.1:{redirector.port}/v1"
            client = LLMClient({"base_url": base, "model": server.model, "timeout_s": 5, "max_retries": 0})
            assert client.chat(HI).content == "sync"
            assert client._endpoint.direct is None  # this endpoint goes through the full stack from now on
            assert asyncio.run(_achat(client, HI)).content == "async"
            # the first call met the 307 on the lean transport and again on the full stack; after it, only there
            assert redirector.hits == 3 and server.completions == 2
        finally:
            redirector.sock.close()


# ----- the loopback server's request reader -----------------------------------------------------
def _exchange(server: LoopbackServer, raw: bytes) -> bytes:
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(raw)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


def test_the_server_reads_chunked_bodies_and_answers_expect_continue():
    body = json.dumps({"model": "m", "messages": HI}).encode()
    with LoopbackServer(script=["chunked"]) as server:
        raw = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Expect: 100-continue\r\nConnection: close\r\n\r\n"
               + b"%x\r\n%s\r\n" % (5, body[:5]) + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) - 5, body[5:]))
        out = _exchange(server, raw)
    assert out.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert b"Connection: close" in out and json.loads(out.split(b"\r\n\r\n", 2)[2])["choices"][0]["message"][
        "content"] == "chunked"
    assert server.requests == [{"model": "m", "messages": HI}]


@pytest.mark.parametrize("raw, code", [
    (b"GARBAGE\r\n\r\n", b"400"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: x\r\n\r\n", b"400"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", b"413"),
    (b"POST /v1/chat/completions HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n", b"431"),
])
def test_the_server_answers_a_malformed_request_and_ends_the_connection(raw, code):
    with LoopbackServer() as server:
        out = _exchange(server, raw)
        assert out.startswith(b"HTTP/1.1 " + code) and b"Connection: close" in out
        assert server.completions == 0


def test_an_http_10_request_gets_its_reply_and_the_close():
    body = json.dumps({"model": "m", "messages": HI}).encode()
    with LoopbackServer(record=False) as server:
        out = _exchange(server, b"POST /v1/chat/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        assert out.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in out
        assert server.completions == 1 and server.requests == [] and server.request_headers == []


def test_the_server_leaves_a_handlers_reply_as_it_was():
    """A handler may hand out one reply object again and again (the golden replay does): the server
    fills in its usage and model on a copy."""
    reply = text_reply("same", model="handler-model")
    before = json.loads(json.dumps(reply))
    with LoopbackServer(handler=lambda body: reply) as server:
        client = LLMClient(server.config(timeout_s=5))
        first, second = client.chat(HI), client.chat(HI + [{"role": "user", "content": "more words here"}])
    assert first.content == second.content == "same"
    assert 0 < first.usage["prompt_tokens"] < second.usage["prompt_tokens"]
    assert reply == before


def test_http_openai_sends_every_call_through_the_openai_clients_stack():
    """``LLMConfig(http="openai")``: no lean transport, sync or async; the replies are the same."""
    with LoopbackServer() as server:
        lean = LLMClient({"base_url": server.base_url, "model": "m", "max_retries": 0})
        full = LLMClient({"base_url": server.base_url, "model": "m", "max_retries": 0, "http": "openai"})
        assert lean._endpoint.direct is not None and full._endpoint.direct is None
        assert full.chat(HI) == lean.chat(HI)

        async def both():
            try:
                return await full.achat(HI), full._last_async[1].direct
            finally:
                await aclose_clients()

        reply, direct = asyncio.run(both())
        assert direct is None and reply == lean.chat(HI)
    with pytest.raises(ValueError):
        LLMClient({"base_url": "http://127.0.0.1:9/v1", "model": "m", "http": "h2"})
