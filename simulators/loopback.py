"""A chat-completions server on 127.0.0.1, for tests, benchmarks and offline development.

``LoopbackServer`` speaks enough of the OpenAI protocol for the official client: ``POST
/v1/chat/completions`` (text replies and tool calls, usage included) and ``GET /v1/models``.
Its replies come from a script (replies or faults consumed in order) and then a ``handler``
(``request body -> reply | Fault``); ``latency_s`` is added to every completion. Faults inject
what real endpoints do: a reply slower than the client's timeout, an HTTP error status with an
OpenAI-style error body (and ``Retry-After``), a tool call whose arguments are not JSON.

```python
with LoopbackServer(script=[Fault.status(429, retry_after=0), "Hello!"]) as server:
    client = LLMClient({"base_url": server.base_url, "model": server.model})
    client.chat([{"role": "user", "content": "hi"}]).content   # "Hello!" after one retry
    server.requests                                           # the two request bodies received
```
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


Reply = dict[str, Any] | Fault | str


def _default_handler(body: dict[str, Any]) -> Reply:
    return text_reply("OK")


class LoopbackServer:
    """A threaded chat-completions server on 127.0.0.1 (an ephemeral port), as a context manager."""

    def __init__(self, handler: Callable[[dict[str, Any]], Reply] | None = None, script: Iterable[Reply] = (),
                 latency_s: float = 0.0, model: str = DEFAULT_MODEL, port: int = 0) -> None:
        self.handler = handler or _default_handler
        self.model = model
        self.latency_s = latency_s
        self.requests: list[dict[str, Any]] = []
        self._script = list(script)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----- lifecycle -----------------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode("utf-8")
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass  # the client gave up (a timeout fault): nothing to answer

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "servicegym"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
                    return
                code, payload, headers = server._answer(body)
                self._send(code, payload, headers)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a slow-fault thread must not hold up close()
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()  # wakes slow faults
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager or call start()")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

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
            self.requests.append(body)
            item = self._script.pop(0) if self._script else None
        if item is None:
            item = self.handler(body)
        if callable(item) and not isinstance(item, Fault):
            item = item(body)
        return item

    def _render(self, item: Reply, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        prompt = count_tokens(body.get("messages", []))
        if isinstance(item, str):
            item = text_reply(item)
        if isinstance(item, Fault):
            if item.kind == "slow":
                self._stop.wait(item.seconds)
                return self._render(item.then if item.then is not None else self.handler(body), body)
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
            raise ValueError(f"unknown fault {item.kind!r}")
        reply = json.loads(json.dumps(item))  # a copy: the handler's object is left alone
        usage = reply.setdefault("usage", {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
        if not usage.get("prompt_tokens"):
            usage["prompt_tokens"] = prompt
            usage["total_tokens"] = prompt + int(usage.get("completion_tokens") or 0)
        reply["model"] = self.model
        return 200, reply, {}

    def _answer(self, body: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if self.latency_s:
            self._stop.wait(self.latency_s)
        try:
            return self._render(self._next(body), body)
        except Exception as err:  # a broken handler is a 500, visible to the client, not a dead server
            return 500, {"error": {"message": f"loopback handler failed: {type(err).__name__}: {err}",
                                   "type": "server_error"}}, {}
