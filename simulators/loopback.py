"""A chat-completions server on 127.0.0.1, for tests, benchmarks and offline development.

``LoopbackServer`` speaks enough of the OpenAI protocol for the official client: ``POST
/v1/chat/completions`` (text replies and tool calls, usage included; a ``"stream": true`` request
gets the reply as server-sent chunks) and ``GET /v1/models``.
Its replies come from a script (replies or faults consumed in order) and then a ``handler``
(``request body -> reply | Fault``); ``latency_s`` is added to every completion. Faults inject
what real endpoints do: a reply slower than the client's timeout, an HTTP error status with an
OpenAI-style error body (and ``Retry-After``), a tool call whose arguments are not JSON; and what a
broken or hostile one does: a body trickled a byte at a time (``Fault.trickle``, headers too if
asked; ``server.trickles`` records how far each got), a connection reset mid-reply
(``Fault.reset``), and HTTP 200 bodies that are valid JSON but poison a naive reader: usage counts
of ``1e999`` (``Fault.overflow_usage``), a message nested 100,000 deep (``Fault.deep_nesting``),
lone surrogates in the content or tool call (``Fault.surrogate``), or any body at all
(``Fault.raw``: bytes as they are, any other value as JSON).

```python
with LoopbackServer(script=[Fault.status(429, retry_after=0), "Hello!"]) as server:
    client = LLMClient({"base_url": server.base_url, "model": server.model})
    client.chat([{"role": "user", "content": "hi"}]).content   # "Hello!" after one retry
    server.requests                                           # the two request bodies received
```
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

__all__ = ["Fault", "LoopbackServer", "text_reply", "tool_call_reply", "count_tokens"]

DEFAULT_MODEL = "loopback-model"


def count_tokens(value: Any) -> int:
    """A deterministic stand-in for a tokenizer: whitespace-separated words of the JSON text."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text.split())


def _completion(message: dict[str, Any], finish_reason: str, model: str, prompt_tokens: int = 0) -> dict[str, Any]:
    completion = count_tokens(message.get("content") or "") + sum(
        count_tokens(c["function"]["arguments"]) + 1 for c in message.get("tool_calls") or [])
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                  "total_tokens": prompt_tokens + completion},
    }


def text_reply(content: str, model: str = DEFAULT_MODEL, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat.completion whose message is ``content``."""
    return _completion({"role": "assistant", "content": content}, finish_reason, model)


def tool_call_reply(calls: Iterable[tuple[str, Any] | dict[str, Any]], content: str | None = None,
                    model: str = DEFAULT_MODEL) -> dict[str, Any]:
    """A chat.completion with tool calls: each ``(name, arguments)`` (a dict, or a string sent as
    it is, valid JSON or not) or a ready ``{"name", "arguments"}`` dict."""
    out = []
    for i, call in enumerate(calls):
        name, args = (call["name"], call.get("arguments", {})) if isinstance(call, dict) else call
        out.append({"id": f"call_lb_{i + 1}", "type": "function",
                    "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}})
    return _completion({"role": "assistant", "content": content, "tool_calls": out}, "tool_calls", model)


@dataclass(frozen=True)
class Fault:
    """A misbehaviour to inject instead of (or before) a reply."""

    kind: str
    seconds: float = 0.0
    code: int = 0
    retry_after: float | None = None
    message: str = ""
    then: Any = None
    count: int = 0
    flag: bool = False

    @staticmethod
    def slow(seconds: float, then: Any = None) -> Fault:
        """Wait ``seconds`` (past the client's timeout), then send ``then`` (default: the handler's reply)."""
        return Fault("slow", seconds=seconds, then=then)

    @staticmethod
    def status(code: int, retry_after: float | None = None, message: str = "") -> Fault:
        """Answer with HTTP ``code`` and an OpenAI-style error body (``Retry-After`` if given)."""
        return Fault("status", code=code, retry_after=retry_after, message=message)

    @staticmethod
    def malformed_tool_call(name: str = "get_weather", arguments: str = '{"city": "Kunming", ') -> Fault:
        """A tool call whose ``arguments`` string is not valid JSON."""
        return Fault("malformed", message=name, then=arguments)

    @staticmethod
    def garbage() -> Fault:
        """HTTP 200 whose body is not a chat completion."""
        return Fault("garbage")

    @staticmethod
    def raw(body: Any, code: int = 200) -> Fault:
        """HTTP ``code`` with exactly this body: ``bytes`` (or ``str``, sent as UTF-8) as it is, any
        other value as JSON (ASCII escapes, so lone surrogates and ``Infinity`` go out as written)."""
        return Fault("raw", code=code, then=body)

    @staticmethod
    def trickle(interval_s: float = 0.5, then: Any = None, chunk: int = 1, headers: bool = False) -> Fault:
        """Send the reply ``then`` (default: the handler's) ``chunk`` bytes every ``interval_s``
        seconds: the body only (the headers at once), or, with ``headers=True``, the status line
        and headers too. Each read then returns within a client's per-read timeout, so only a total
        deadline ends the call; ``server.trickles`` shows how many bytes each trickle got out."""
        return Fault("trickle", seconds=interval_s, then=then, count=max(1, int(chunk)), flag=headers)

    @staticmethod
    def reset(body_bytes: int | None = 8, then: Any = None) -> Fault:
        """Reset the connection (TCP RST) mid-reply: after the headers and the first ``body_bytes``
        bytes of the reply ``then`` (default: the handler's), or, with ``None``, before any reply."""
        return Fault("reset", then=then, count=-1 if body_bytes is None else max(0, int(body_bytes)))

    @staticmethod
    def overflow_usage(content: str = "OK") -> Fault:
        """HTTP 200 with a good message whose usage says ``"prompt_tokens": 1e999`` (infinity once
        parsed: ``int()`` of it raises ``OverflowError``)."""
        reply = text_reply(content)
        reply["usage"] = {"prompt_tokens": "@1e999@", "completion_tokens": -3, "total_tokens": "@1e999@"}
        return Fault("raw", code=200, then=json.dumps(reply).replace('"@1e999@"', "1e999"))

    @staticmethod
    def deep_nesting(depth: int = 100_000) -> Fault:
        """HTTP 200 whose message content is an array nested ``depth`` deep (valid JSON; Python's
        ``json`` raises ``RecursionError`` on it)."""
        reply = text_reply("@nested@")
        return Fault("raw", code=200, then=json.dumps(reply).replace('"@nested@"', "[" * depth + "]" * depth))

    @staticmethod
    def surrogate(content: str = "bad \ud800 text", tool_call: bool = False) -> Fault:
        """HTTP 200 whose content (and, with ``tool_call``, a tool call's name, id and arguments)
        holds a lone surrogate: valid JSON with ASCII escapes (``"\\ud800"``), but a string that
        cannot be encoded as UTF-8 once parsed."""
        reply = text_reply(content)
        if tool_call:
            reply = tool_call_reply([{"name": "get_\udc00weather", "arguments": '{"city": "Kun\ud83dming"}'}],
                                    content=content)
            reply["choices"][0]["message"]["tool_calls"][0]["id"] = "call_\udfff"
        return Fault.raw(reply)


Reply = dict[str, Any] | Fault | str


_BACKLOG = 1024  # 64+ rollout workers connect at once; the default backlog drops connections
_NOT_FOUND = {"type": "invalid_request_error"}


@dataclass
class _Wire:
    """A reply sent in an unusual way: trickled (``interval_s`` between ``chunk``-byte writes) or
    cut by a reset after ``reset_after`` body bytes (-1: before the status line)."""

    data: bytes
    interval_s: float = 0.0
    chunk: int = 1
    headers_too: bool = False
    reset_after: int | None = None


def _json_bytes(payload: Any) -> bytes:
    """A reply as UTF-8 JSON; one holding lone surrogates goes out with ASCII escapes instead."""
    try:
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload).encode("ascii")


def _sse_bytes(completion: dict[str, Any], body: dict[str, Any]) -> bytes:
    """A chat.completion as the server-sent events of a streamed one (``"stream": true``): one
    ``chat.completion.chunk`` per choice carrying its whole message as the delta (tool calls with
    their ``index``), a usage chunk when ``stream_options.include_usage``, then ``[DONE]``."""
    base = {k: completion.get(k) for k in ("id", "created", "model")}
    events = []
    for choice in completion["choices"]:
        delta = dict(choice.get("message") or {})
        if delta.get("tool_calls"):
            delta["tool_calls"] = [{**c, "index": i} for i, c in enumerate(delta["tool_calls"])]
        events.append({**base, "object": "chat.completion.chunk", "choices": [
            {"index": choice.get("index", 0), "delta": delta, "finish_reason": choice.get("finish_reason"),
             "logprobs": None}]})
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": completion.get("usage")})
    return b"".join(b"data: " + _json_bytes(e) + b"\n\n" for e in events) + b"data: [DONE]\n\n"


MAX_REQUEST_BYTES = 64 * 2**20  # a request body larger than this gets 413


def _reason(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return ""


def _error_bytes(code: int, message: str) -> bytes:
    """A whole error reply that ends the connection (the request could not be read)."""
    body = _json_bytes({"error": {"message": message, "type": "invalid_request_error"}})
    return (f"HTTP/1.1 {code} {_reason(code)}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n").encode("latin-1") + body


_FRAMING = frozenset({"content-length", "transfer-encoding", "connection", "expect"})


def _parse_head(head: bytes, every: bool = True) -> tuple[bytes, str, bool, dict[str, str]] | None:
    """``(method, target, keep_alive, headers)`` of a request head (names lower-cased, repeats
    joined by ", "; with ``every=False`` only those that frame the request), or None when it is not
    HTTP/1.x."""
    lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[2].startswith("HTTP/1.") or not parts[1]:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        if not every and line[:1] not in "cCtTeE":  # not one that frames the request
            if ":" not in line:
                return None
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            return None
        key = name.lower()
        if not every and key not in _FRAMING:
            continue
        text = value.strip()
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    connection = {t.strip().lower() for t in headers.get("connection", "").split(",")}
    keep = parts[2] == "HTTP/1.1" and "close" not in connection
    return parts[0].encode("latin-1"), parts[1], keep, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes | int:
    """The request body (``Content-Length`` or chunked), or the error status to answer with."""
    try:
        if "transfer-encoding" in headers:
            if headers["transfer-encoding"].rsplit(",", 1)[-1].strip().lower() != "chunked":
                return 400
            parts, size = [], 0
            while True:
                line = await reader.readuntil(b"\r\n")
                n = int(line.split(b";", 1)[0].strip(), 16)
                if n < 0 or size + n > MAX_REQUEST_BYTES:
                    return 413
                if n == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    return b"".join(parts)
                parts.append(await reader.readexactly(n))
                size += n
                if await reader.readexactly(2) != b"\r\n":
                    return 400
        length = headers.get("content-length", "0").strip()
        if not length.isdigit():
            return 400
        n = int(length)
        if n > MAX_REQUEST_BYTES:
            return 413
        return await reader.readexactly(n) if n else b""
    except (ValueError, asyncio.LimitOverrunError):
        return 400
    except asyncio.IncompleteReadError:
        raise ConnectionResetError("the client went away mid-request") from None


def _default_handler(body: dict[str, Any]) -> Reply:
    return text_reply("OK")


class LoopbackServer:
    """A chat-completions server on 127.0.0.1 (an ephemeral port), as a context manager.

    One asyncio event loop on a daemon thread serves every connection (HTTP/1.1 keep-alive, read by
    ``_parse_head`` / ``_read_body``: ``Content-Length`` or chunked bodies, ``Expect: 100-continue``;
    a malformed request gets 400 and the connection ends); latency and slow faults are ``asyncio.sleep`` waits that ``close()`` cancels."""

    def __init__(self, handler: Callable[[dict[str, Any]], Reply] | None = None, script: Iterable[Reply] = (),
                 latency_s: float = 0.0, model: str = DEFAULT_MODEL, port: int = 0, record: bool = True) -> None:
        self.handler = handler or _default_handler
        # record=False: keep no request bodies or headers (a long-running server, e.g. ``servicegym
        # loopback-model``, would otherwise hold every conversation it was sent)
        self.record = record
        self.model = model
        self.latency_s = latency_s
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []  # every request's, in arrival order
        self.in_flight = 0  # completions being answered now (all run on the server's one event loop)
        # one {"sent": bytes written so far, "total": bytes of the whole reply} per trickle fault
        self.trickles: list[dict[str, int]] = []
        self.max_in_flight = 0  # the most at once: how concurrent the clients really were
        self.completions = 0  # chat-completion requests answered or being answered (counted with record=False too)
        self._script = list(script)
        self._lock = threading.Lock()
        self._port = port
        self._address: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread: threading.Thread | None = None

    # ----- lifecycle -----------------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        loop = asyncio.new_event_loop()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                self._server = loop.run_until_complete(asyncio.start_server(
                    self._serve, "127.0.0.1", self._port, backlog=_BACKLOG))
            except BaseException as err:  # e.g. the port is taken: raised from start()
                ready.set_exception(err)
                loop.close()
                return
            self._address = self._server.sockets[0].getsockname()[:2]
            ready.set_result(None)
            try:
                loop.run_forever()
            finally:
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="loopback-llm", daemon=True)
        self._thread.start()
        try:
            ready.result()
        except BaseException:
            self._thread.join()
            self._loop = self._thread = None
            raise
        return self

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        self._loop = self._thread = None
        if loop is not None and thread is not None and thread.is_alive():
            async def stop() -> None:
                if self._server is not None:
                    self._server.close()
                for task in list(self._tasks):  # parked in a latency or slow-fault wait: cancelled now
                    task.cancel()
                await asyncio.gather(*self._tasks, return_exceptions=True)
                loop.stop()

            loop.call_soon_threadsafe(lambda: loop.create_task(stop()))
            thread.join(timeout=5)
        self._server = None
        self._address = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        if self._address is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        host, port = self._address
        return f"http://{host}:{port}/v1"

    # ----- HTTP --------------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    return  # the client went away (between requests, or mid-head)
                except asyncio.LimitOverrunError:
                    writer.write(_error_bytes(431, "the request head is too large"))
                    await writer.drain()
                    return
                request = _parse_head(head, self.record)
                if request is None:
                    writer.write(_error_bytes(400, "not an HTTP/1.1 request"))
                    await writer.drain()
                    return
                method, target, keep, headers = request
                if headers.get("expect", "").lower() == "100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await _read_body(reader, headers)
                if isinstance(body, int):  # a body that cannot be read: answered, and the connection ends
                    writer.write(_error_bytes(body, "the request body is malformed or too large"))
                    await writer.drain()
                    return
                if self.record:
                    with self._lock:  # each request's headers, names lower-cased (an API key is the caller's)
                        self.request_headers.append(headers)
                code, payload, extra = await self._route(method, target, body)
                wire = payload if isinstance(payload, _Wire) else None
                if wire is not None:
                    payload = wire.data
                data = payload if isinstance(payload, bytes) else _json_bytes(payload)
                kind = extra.pop("Content-Type", "application/json")
                lines = [f"HTTP/1.1 {code} {_reason(code)}", f"Content-Type: {kind}", f"Content-Length: {len(data)}"]
                lines += [f"{k}: {v}" for k, v in extra.items()]
                if not keep:
                    lines.append("Connection: close")
                start = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
                if wire is not None:
                    if not await self._send_unusual(writer, wire, start, data):
                        return  # reset: the connection is gone
                else:
                    writer.write(start + data)
                await writer.drain()
                if not keep:
                    return
        except (ConnectionError, OSError):
            pass  # a client that gave up (a timeout fault): nothing to answer
        except asyncio.CancelledError:
            pass  # close()
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _send_unusual(self, writer: asyncio.StreamWriter, wire: _Wire, start: bytes, rest: bytes) -> bool:
        """Write a trickled reply (True once all of it is out) or reset mid-reply (False)."""
        if wire.reset_after is not None:
            if wire.reset_after >= 0:
                writer.write(start + rest[:wire.reset_after])
                await writer.drain()
                await asyncio.sleep(0.05)  # the client reads what came before the reset
            sock = writer.get_extra_info("socket")
            if sock is not None:  # SO_LINGER 0: closing sends RST, not FIN
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if not wire.headers_too:
            writer.write(start)
            await writer.drain()
            start = b""
        out = start + rest
        progress = {"sent": 0, "total": len(out)}
        self.trickles.append(progress)
        for i in range(0, len(out), wire.chunk):
            await asyncio.sleep(wire.interval_s)  # cancelled by close()
            if writer.is_closing():
                raise ConnectionResetError("the client went away")
            writer.write(out[i:i + wire.chunk])
            await writer.drain()  # raises once the client has closed the connection
            progress["sent"] = min(i + wire.chunk, len(out))
        return True

    async def _route(self, method: bytes, path: str, raw: bytes) -> tuple[int, Any, dict[str, str]]:
        route = path.split("?", 1)[0].rstrip("/")
        if method == b"GET" and route.endswith("/models"):
            return 200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 0, "owned_by": "servicegym"}]}, {}
        if method != b"POST" or not route.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}", **_NOT_FOUND}}, {}
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return 400, {"error": {"message": "request body is not JSON", **_NOT_FOUND}}, {}
        return await self._answer(body)

    def config(self, **overrides: Any) -> dict[str, Any]:
        """An ``llm=`` dict pointing at this server."""
        return {"base_url": self.base_url, "model": self.model, **overrides}

    # ----- scripting ---------------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        """Queue replies or faults, consumed in order before the handler is asked."""
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.completions += 1
            if self.record:
                self.requests.append(body)
            item = self._script.pop(0) if self._script else None
        if item is None:
            item = self.handler(body)
        if callable(item) and not isinstance(item, Fault):
            item = item(body)
        return item

    async def _render(self, item: Reply, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        prompt = count_tokens(body.get("messages", []))
        if isinstance(item, str):
            item = text_reply(item)
        if isinstance(item, Fault):
            if item.kind == "slow":
                await asyncio.sleep(item.seconds)  # cancelled by close()
                return await self._render(item.then if item.then is not None else self.handler(body), body)
            if item.kind == "status":
                kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error",
                        404: "not_found_error"}.get(item.code, "server_error")
                headers = {} if item.retry_after is None else {"Retry-After": f"{item.retry_after:g}"}
                msg = item.message or {429: "Rate limit reached; slow down.", 500: "The server had an error.",
                                       503: "The engine is overloaded."}.get(item.code, f"error {item.code}")
                return item.code, {"error": {"message": msg, "type": kind, "param": None, "code": None}}, headers
            if item.kind == "malformed":
                reply = tool_call_reply([(item.message, item.then)], model=self.model)
                reply["usage"]["prompt_tokens"] = prompt
                reply["usage"]["total_tokens"] += prompt
                return 200, reply, {}
            if item.kind == "garbage":
                return 200, b"<html>not json</html>", {}
            if item.kind == "raw":
                raw = item.then
                if isinstance(raw, str):
                    raw = raw.encode("utf-8", "surrogatepass")
                elif not isinstance(raw, bytes):
                    raw = json.dumps(raw).encode("ascii")
                return item.code, raw, {}
            if item.kind in ("trickle", "reset"):
                then = item.then if item.then is not None else self.handler(body)
                if isinstance(then, Fault) and then.kind in ("trickle", "reset"):
                    then = text_reply("OK")  # a handler that answers every request with this fault
                code, payload, headers = await self._render(then, body)
                if isinstance(payload, _Wire):  # a fault inside a fault: its body, sent this way
                    payload = payload.data
                data = payload if isinstance(payload, bytes) else _json_bytes(payload)
                if item.kind == "trickle":
                    return code, _Wire(data, interval_s=item.seconds, chunk=item.count, headers_too=item.flag), headers
                return code, _Wire(data, reset_after=item.count), headers
            raise ValueError(f"unknown fault {item.kind!r}")
        # the handler's object is left alone: its top level and usage are copied, the only parts changed;
        # the reply goes out as JSON bytes made here, so one JSON cannot hold is the handler's 500
        reply = dict(item)
        usage = reply["usage"] = dict(reply.get("usage") or {"prompt_tokens": 0, "completion_tokens": 0,
                                                              "total_tokens": 0})
        if not usage.get("prompt_tokens"):
            usage["prompt_tokens"] = prompt
            usage["total_tokens"] = prompt + int(usage.get("completion_tokens") or 0)
        reply["model"] = self.model
        return 200, _json_bytes(reply) if body.get("stream") is not True else reply, {}

    async def _answer(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)  # cancelled by close()
            code, payload, headers = await self._render(self._next(body), body)
            if body.get("stream") is True and code == 200 and isinstance(payload, dict) and payload.get("choices"):
                return code, _sse_bytes(payload, body), {**headers, "Content-Type": "text/event-stream"}
            return code, payload, headers
        except Exception as err:  # a broken handler is a 500, visible to the client, not a dead server
            return 500, {"error": {"message": f"loopback handler failed: {type(err).__name__}: {err}",
                                   "type": "server_error"}}, {}
        finally:
            self.in_flight -= 1
