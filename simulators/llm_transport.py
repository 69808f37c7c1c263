"""How ``LLMClient`` (``simulators/llm.py``) sends a request, and what failed when it could not.

- ``_Endpoint``: the chat-completions request an ``openai.OpenAI`` / ``AsyncOpenAI`` sends, built
  once per endpoint, sent on the lean transport of ``simulators/llm_http.py`` (no proxy applies)
  or on the openai client's own HTTP client; a bad status as the openai client's error;
- what failed, from the exception chain: ``_transport_errors`` (what a failed connection, read or
  write raises), ``_transport_failure`` (its kind: ``reset``, ``connection``, ``malformed``,
  ``timeout``);
- the sync transport: every socket wait cut to ``_DEADLINE``, the deadline of the call in
  progress (``_clamp``, ``_deadline_backend``, ``_sync_http_client``), on openai's HTTP library
  (``_http_libraries``), with one TLS context a process (``_tls_context``);
- the request body's JSON (``_body_json``): the tool schemas serialised once (``_tools_json``) and,
  in a ``Transcript``, each message serialised once (``_dumps``, ``_json_default``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno
import functools
import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from servicegym.simulators.llm_http import AsyncPool, SyncPool, direct_ok, request_head
from servicegym.simulators.llm_replies import loads_json


@functools.cache
def _has_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


class _Endpoint:
    """An ``openai.OpenAI`` / ``AsyncOpenAI`` and the chat-completions request it sends, built
    once: the URL and the headers (the client's own ``default_headers`` and ``auth_headers``), so a
    call makes only the request object with its body, sent on ``http``, the HTTP client the openai
    client was given (its connection pool), or as the same head and body bytes on ``direct``, the
    lean transport's pool (``llm_http``), when no proxy applies and the endpoint never redirected.
    A status of 400 or more is the openai client's ``APIStatusError`` (its subclass by status, as
    its own ``post`` raises)."""

    def __init__(self, openai: Any, httpx2: Any, client: Any, http: Any, asynchronous: bool = False,
                 direct: bool = True) -> None:
        self.openai = client
        self.http = http
        self._errors = openai
        self._httpx = httpx2
        base = str(client.base_url).rstrip("/")
        self._url = httpx2.URL(base + "/chat/completions")
        headers = {k: v for k, v in {**client.default_headers, **client.auth_headers}.items() if isinstance(v, str)}
        self._headers = httpx2.Headers(headers)
        self._timeouts: dict[float, dict[str, float]] = {}
        # the lean transport (``llm_http``) for a direct endpoint: the same request (URL, headers,
        # body) as one write on a pooled keep-alive connection; None: through ``http`` (a proxy applies)
        self.direct: AsyncPool | SyncPool | None = None
        self.head = b""
        self.closed = False  # by ``aclose_clients``: the loop's next call builds a new endpoint
        if direct and direct_ok(base, headers):
            host, port, tls, self.head = request_head(base, "/chat/completions", headers)
            self.direct = (AsyncPool if asynchronous else SyncPool)(host, port, _tls_context(httpx2) if tls else None)

    def close_direct(self) -> None:
        if self.direct is not None:
            self.direct.close()

    def direct_status_error(self, reply: Any) -> Exception:
        """``status_error`` of a reply the lean transport read (an httpx response made for the error)."""
        response = self._httpx.Response(reply.status, headers=reply.headers, content=reply.body,
                                        request=self._httpx.Request("POST", self._url))
        return self.status_error(response, reply.body)

    def request(self, payload: bytes, timeout_s: float) -> Any:
        timeout = self._timeouts.get(timeout_s)
        if timeout is None:
            timeout = self._httpx.Timeout(timeout_s).as_dict()
            if len(self._timeouts) < 64:  # the configured timeout, reused; a deadline's remainder is new
                self._timeouts[timeout_s] = timeout
        return self._httpx.Request("POST", self._url, headers=self._headers, content=payload,
                                   extensions={"timeout": timeout})

    def status_error(self, response: Any, raw: bytes) -> Exception:
        try:
            body: Any = loads_json(raw) if raw else None
        except (ValueError, UnicodeDecodeError):  # not JSON, or nested too deep to read safely
            body = raw[:2000].decode("utf-8", "replace")
        o, status = self._errors, response.status_code
        cls = {400: o.BadRequestError, 401: o.AuthenticationError, 403: o.PermissionDeniedError, 404: o.NotFoundError,
               409: o.ConflictError, 422: o.UnprocessableEntityError, 429: o.RateLimitError}.get(status)
        cls = cls or (o.InternalServerError if status >= 500 else o.APIStatusError)
        data = body.get("error", body) if isinstance(body, dict) else body
        return cls(f"Error code: {status} - {str(body)[:500]}", response=response, body=data)


def _json_default(value: Any) -> Any:
    """What JSON has no form for, as the openai client would send it (pydantic models, datetimes)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True, by_alias=True)
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# ----- what failed, from the exception chain ---------------------------------------------------
_RESET_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})
_RESET_NAMES = frozenset({"ServerDisconnectedError", "ClientPayloadError"})
_REFUSED_NAMES = frozenset({"ConnectError", "ClientConnectorError"})
_TIMEOUT_NAMES = frozenset({"TimeoutException", "APITimeoutError", "ServerTimeoutError"})
_CLOSED = re.compile(r"disconnect|closed|incomplete|reset", re.I)


def _transport_errors(openai: Any, httpx2: Any) -> tuple[type[BaseException], ...]:
    """What a failed connection, read or write raises: the openai client's errors around its
    send, and the HTTP library's (httpx2, aiohttp) while the body is read here."""
    errors: list[type[BaseException]] = [openai.APIConnectionError, httpx2.RequestError, OSError, asyncio.TimeoutError]
    if _has_aiohttp():
        import aiohttp

        errors.append(aiohttp.ClientError)
    return tuple(errors)


def _chain(err: BaseException | None) -> list[BaseException]:
    out: list[BaseException] = []
    while err is not None and all(e is not err for e in out):
        out.append(err)
        err = err.__cause__ if err.__cause__ is not None else err.__context__
    return out


def _describe(err: BaseException) -> str:
    text = str(err).strip()
    return f"{type(err).__name__}: {text}"[:200] if text else type(err).__name__


def _transport_failure(err: BaseException) -> tuple[str, str]:
    """``(kind, what)`` of a transport failure, from its whole exception chain (the openai client
    and its aiohttp transport report a reset connection as a timeout): ``reset`` (reset or closed
    mid-reply), ``connection`` (no connection), ``malformed`` (a body that cannot be decoded),
    ``timeout``."""
    chain = _chain(err)
    names = [{t.__name__ for t in type(e).__mro__} for e in chain]
    for e, n in zip(chain, names):
        if (isinstance(e, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError))
                or (isinstance(e, OSError) and not isinstance(e, ConnectionRefusedError) and e.errno in _RESET_ERRNOS)
                or n & _RESET_NAMES or ("RemoteProtocolError" in n and _CLOSED.search(str(e)))):
            return "reset", f"the connection was reset or closed mid-reply ({_describe(e)})"
    for e, n in zip(chain, names):
        if isinstance(e, ConnectionRefusedError) or n & _REFUSED_NAMES:
            return "connection", f"connection failed ({_describe(e)})"
    for e, n in zip(chain, names):
        if "DecodingError" in n:
            return "malformed", f"unreadable response ({_describe(e)})"
    for e, n in zip(chain, names):
        if isinstance(e, (TimeoutError, asyncio.TimeoutError)) or n & _TIMEOUT_NAMES:
            return "timeout", "no reply within the timeout"
    return "connection", f"connection failed ({_describe(chain[-1])})"


# ----- the sync transport: every socket wait cut to the deadline of the call in progress --------
# set by ``LLMClient._attempt`` around one attempt (each thread, each task has its own)
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("servicegym_llm_deadline", default=None)


def _clamp(timeout: float | None, expired: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the current deadline (``expired`` raised when none is)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the deadline of the call has passed")
    return left if timeout is None else min(timeout, left)


def _http_libraries(openai: Any) -> tuple[Any, Any]:
    """openai's HTTP library and its transport core: ``httpx2`` / ``httpcore2`` from openai 3 on,
    ``httpx`` / ``httpcore`` before (openai 1.x and 2.x, which e.g. verifiers pins); the two keep
    one API, so the rest of this module takes them as arguments (named as the current ones)."""
    try:
        major = int(str(getattr(openai, "__version__", "3")).split(".")[0])
    except ValueError:
        major = 3
    if major >= 3:
        import httpcore2
        import httpx2
        return httpx2, httpcore2
    import httpcore
    import httpx
    return httpx, httpcore


@functools.cache
def _deadline_backend(httpcore2: Any) -> type:
    """An ``httpcore2.NetworkBackend`` wrapping another, whose streams cut every connect, read and
    write wait to the current ``_DEADLINE``: with per-read timeouts only, a server sending one byte
    per read timeout keeps a call alive without end (httpx has no total timeout). ``httpcore2``:
    the transport core openai's HTTP library runs on (``_http_libraries``)."""

    class DeadlineStream(httpcore2.NetworkStream):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _clamp(timeout, httpcore2.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _clamp(timeout, httpcore2.WriteTimeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
            return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                        _clamp(timeout, httpcore2.ConnectTimeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class DeadlineBackend(httpcore2.NetworkBackend):
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Any = None) -> Any:
            return DeadlineStream(self._inner.connect_tcp(host, port, _clamp(timeout, httpcore2.ConnectTimeout),
                                                          local_address, socket_options))

        def connect_unix_socket(self, path: str, timeout: float | None = None, socket_options: Any = None) -> Any:
            return DeadlineStream(self._inner.connect_unix_socket(path, _clamp(timeout, httpcore2.ConnectTimeout),
                                                                  socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return DeadlineBackend


def _dumps(value: Any) -> str:
    """A request's JSON (or a part of it): compact, UTF-8 text, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)


def _body_json(body: dict[str, Any]) -> str:
    """``_dumps(body)`` with the tool schemas moved last, byte for byte, made of parts kept from
    earlier calls: the tool schemas (``_tools_json``) and, when ``messages`` is a ``Transcript``,
    each message's JSON (a conversation's prefix is most of every request, and unchanged)."""
    tools = body.get("tools")
    split = isinstance(tools, list) and bool(tools) and len(body) > 1
    messages = body.get("messages")
    if isinstance(messages, Transcript) and all(type(k) is str for k in body):
        items = [f"{_dumps(k)}:{messages.encoded(_dumps) if k == 'messages' else _dumps(v)}"
                 for k, v in body.items() if not (split and k == "tools")]
        if split:
            items.append(f'"tools":{_tools_json(tools)}')
        return "{" + ",".join(items) + "}"
    if split:  # the tool schemas, the bulk of a request and the same every call, serialised once
        text = _dumps({k: v for k, v in body.items() if k != "tools"})
        return f'{text[:-1]},"tools":{_tools_json(tools)}}}'
    return _dumps(body)


class Transcript(list):
    """A conversation for ``LLMClient.chat`` / ``achat`` whose messages are never edited once in
    it (messages are appended, removed or the list rebuilt, never changed in place; a copy made
    by ``list()`` is a plain list): the client serialises each message once, for the first request
    that holds it, and later requests reuse its JSON (the request bytes are the same as for a plain
    list). ``LLMAgentPolicy`` keeps its conversation in one."""

    __slots__ = ("_parts",)

    def __init__(self, messages: Any = ()) -> None:
        super().__init__(messages)
        self._parts: dict[int, tuple[Any, str]] = {}  # id(message) -> (the message, held; its JSON)

    def encoded(self, dumps: Callable[[Any], str]) -> str:
        """The list as ``dumps`` writes it (``[m1,m2,...]``), each message's part made once."""
        parts = self._parts
        out = []
        for m in self:
            hit = parts.get(id(m))
            if hit is None:
                hit = parts[id(m)] = (m, dumps(m))
            out.append(hit[1])
        if len(parts) > 2 * len(self) + 8:  # messages left out (a context limit) or undone: forgotten
            keep = {id(m) for m in self}
            self._parts = {k: v for k, v in parts.items() if k in keep}
        return "[" + ",".join(out) + "]"

    def __reduce__(self) -> Any:  # pickled, copied: a plain list's contents, the parts made anew
        return (type(self), (list(self),))


_TOOLS_JSON: dict[tuple[int, ...], tuple[list[Any], str]] = {}
_TOOLS_JSON_MAX = 64
_TOOLS_LOCK = threading.Lock()


def _tools_json(tools: list[Any]) -> str:
    """``tools`` as compact JSON, kept for the same schema objects: an env hands every episode the
    same schema dicts (treated as immutable once sent), and they are ~10 KB of JSON a call. The
    entry holds the schemas, so their ids are not reused while it lives."""
    key = tuple(map(id, tools))
    hit = _TOOLS_JSON.get(key)
    if hit is not None:
        return hit[1]
    text = json.dumps(tools, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)
    with _TOOLS_LOCK:
        while len(_TOOLS_JSON) >= _TOOLS_JSON_MAX:
            del _TOOLS_JSON[next(iter(_TOOLS_JSON))]
        _TOOLS_JSON[key] = (list(tools), text)
    return text


def _sync_http_client(openai: Any, httpx2: Any, httpcore2: Any, timeout: float) -> Any:
    """The sync client's HTTP client: openai's defaults, on a transport whose sockets keep the
    deadline of the call in progress. Should a later httpx2 lay out its transport otherwise, the
    plain transport is used: each read then waits at most what was left when the attempt began,
    and the body is checked against the deadline chunk by chunk."""
    transport = httpx2.HTTPTransport(limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore2.NetworkBackend):
        pool._network_backend = _deadline_backend(httpcore2)(backend)
    return _closing_client(openai)(transport=transport, timeout=timeout)


@functools.cache
def _tls_context(httpx2: Any) -> Any:
    """The process's one TLS context for the async clients (httpx's defaults: its CA bundle, the
    ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` it reads): building one loads the CA bundle, tens of
    milliseconds, and every event loop gets a client of its own (a run of ``collect`` one)."""
    return httpx2.create_ssl_context()


@functools.cache
def _closing_client(openai: Any) -> type:
    class Client(openai.DefaultHttpxClient):  # closes its pool when collected, as openai's own does
        def __del__(self) -> None:
            with contextlib.suppress(Exception):
                self.close()

    return Client
