"""The LLM client's own HTTP/1.1 transport: one chat-completions POST as cheap as it can be.

``LLMClient`` builds its requests from the official ``openai`` client (its base URL, auth and
default headers) and, for a plain ``http://`` or ``https://`` endpoint reached without a proxy,
sends them here rather than through httpx (and, for asyncio, httpx over aiohttp): at 64 episodes
in flight the generic stacks spent about a millisecond of CPU per call in request and response
objects, header models and per-call tasks, more than the rest of an RL step. Here a request is the
endpoint's head, built once, plus ``Content-Length`` and the body, written in one go on a pooled
keep-alive connection; the reply is framed by a small parser (``Content-Length``, chunked, or
read to the close; gzip/deflate decoded) that never holds more than ``limit`` bytes of body.

- ``AsyncPool``: the connections of one endpoint on one event loop, as many as calls in flight
  (at most ``max_idle`` kept idle); each call waits on one future with one timer, re-armed only
  when a read timeout passes, instead of a task per ``wait_for``.
- ``SyncPool``: the same for blocking calls, the thread backend's (thread-safe; a connection the
  server closed while idle is dropped before reuse; a forked child starts with none). A plain
  socket is non-blocking and waits on its own ``poll``: one system call per wait, send and read,
  where timeout mode takes two each and ``settimeout`` one more, every one of them a moment the
  GIL may pass to another of 64 rollout threads.
- Deadlines: each read waits at most ``timeout_s`` and never past ``deadline`` (``time.monotonic``):
  ``DeadlineExpired`` at the deadline, ``TimeoutError`` for a read timeout, ``ConnectionResetError``
  for a connection reset or closed mid-reply, ``BadResponse`` for a reply that is not HTTP/1.x or
  is over ``limit`` bytes, ``Redirect`` for a 3xx with a ``Location`` (the caller sends that one on
  the full stack, which follows it).
- ``direct_ok(url)``: whether a base URL may use this transport (no proxy applies to it; headers
  that go out as they are).
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["AsyncPool", "BadResponse", "DeadlineExpired", "Redirect", "Reply", "ResponseParser", "SyncPool",
           "direct_ok", "request_head"]

MAX_HEAD_BYTES = 64 * 1024  # status line and headers; a longer head is not a chat endpoint's
_MAX_LINE = 4096  # a chunk-size or trailer line
_READ = 65536


class BadResponse(ValueError):
    """A reply that is not HTTP/1.x as this transport reads it, or over the size limit."""


class DeadlineExpired(Exception):
    """The call's deadline passed while this attempt was waiting."""


class Redirect(Exception):
    """A 3xx with a ``Location``: the full HTTP stack follows redirects, this transport does not."""


class Reply:
    """A finished reply: ``status``, ``headers`` (names lower-cased, repeats joined by ", "), ``body``."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


def direct_ok(base_url: str, headers: Mapping[str, str]) -> bool:
    """Whether calls to ``base_url`` may use this transport: no proxy from the environment applies
    (``HTTP(S)_PROXY`` / ``NO_PROXY``, as httpx reads them) and every header is one line of latin-1."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if (proxies.get(parts.scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(parts.hostname):
        return False
    for k, v in headers.items():
        text = f"{k}{v}"
        if any(c in text for c in "\r\n\0") or not text.isprintable():
            return False
        try:
            text.encode("latin-1")
        except UnicodeEncodeError:
            return False
    return True


def request_head(base_url: str, path: str, headers: Mapping[str, str]) -> tuple[str, int, bool, bytes]:
    """``(host, port, tls, head)``: the head of a POST to ``base_url`` + ``path`` up to ``Content-Length: ``."""
    parts = urlsplit(base_url)
    tls = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if tls else 80)
    target = (parts.path.rstrip("/") + path) or "/"
    if parts.query:
        target += "?" + parts.query
    authority = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        authority += f":{parts.port}"
    lines = [f"POST {target} HTTP/1.1", f"Host: {authority}"]
    skip = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in skip]
    lines += ["Accept-Encoding: identity", "Connection: keep-alive", "Content-Length: "]
    return host, port, tls, "\r\n".join(lines).encode("latin-1")


# ----- the reply --------------------------------------------------------------------------------
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILER, _TO_CLOSE, _DONE = range(7)


class ResponseParser:
    """Reads one reply fed in pieces: ``feed(data)`` is True once it is complete (what came after
    it is ``extra``); ``eof()`` says the peer closed (True when that ends a reply read to the
    close, else ``ConnectionResetError``). Over ``limit`` bytes of body is ``BadResponse``."""

    __slots__ = ("limit", "state", "buf", "status", "headers", "parts", "size", "need", "keep_alive", "started")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.state = _HEAD
        self.buf = b""
        self.status = 0
        self.headers: dict[str, str] = {}
        self.parts: list[bytes] = []
        self.size = 0
        self.need = 0
        self.keep_alive = False
        self.started = False  # any byte of the reply came

    def _too_large(self) -> BadResponse:
        return BadResponse(f"the body is over the {self.limit} byte limit (max_response_bytes)")

    def _add(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise self._too_large()
        self.parts.append(data)

    def feed(self, data: bytes) -> bool:
        self.started = True
        buf = self.buf + data if self.buf else data
        self.buf = b""
        while True:
            state = self.state
            if state == _LENGTH:
                if len(buf) < self.need:
                    self._add(buf)
                    self.need -= len(buf)
                    return False
                self._add(buf[:self.need])
                self.buf = buf[self.need:]
                self.state = _DONE
                return True
            if state == _HEAD:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(buf) > MAX_HEAD_BYTES:
                        raise BadResponse(f"the reply's head is over {MAX_HEAD_BYTES} bytes")
                    self.buf = buf
                    return False
                head, buf = buf[:end], buf[end + 4:]
                if self._head(head):
                    return True
                continue
            if state == _TO_CLOSE:
                if buf:
                    self._add(buf)
                return False
            if state == _CHUNK_SIZE or state == _TRAILER:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > _MAX_LINE:
                        raise BadResponse("a chunk-size line of the reply is too long")
                    self.buf = buf
                    return False
                line, buf = buf[:end], buf[end + 2:]
                if state == _TRAILER:
                    if not line:
                        self.buf, self.state = buf, _DONE
                        return True
                    continue
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise BadResponse("a chunk-size line of the reply is not hexadecimal") from None
                if size < 0 or self.size + size > self.limit:
                    raise self._too_large()
                self.state, self.need = (_TRAILER, 0) if size == 0 else (_CHUNK_DATA, size)
                continue
            if state == _CHUNK_DATA:
                if len(buf) < self.need + 2:
                    self.buf = buf
                    return False
                if buf[self.need:self.need + 2] != b"\r\n":
                    raise BadResponse("a chunk of the reply does not end with CRLF")
                self._add(buf[:self.need])
                buf = buf[self.need + 2:]
                self.state = _CHUNK_SIZE
                continue
            self.buf = buf  # _DONE: anything more is not this reply's
            return True

    def _head(self, head: bytes) -> bool:
        """Read a status line and headers; True when the reply has no body (done already)."""
        lines = head.split(b"\r\n")
        status_line = lines[0].split(None, 2)
        if len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1.") or not status_line[1].isdigit() \
                or len(status_line[1]) != 3:
            raise BadResponse(f"not an HTTP/1.x reply: {bytes(lines[0][:80])!r}")
        status = int(status_line[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip():
                raise BadResponse(f"a malformed header line in the reply: {bytes(line[:80])!r}")
            key = name.decode("latin-1").lower()
            text = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if 100 <= status < 200:  # an interim reply (100 Continue, 103 Early Hints): the real one follows
            return False
        self.status, self.headers = status, headers
        connection = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        self.keep_alive = status_line[0] == b"HTTP/1.1" and "close" not in connection
        coding = headers.get("transfer-encoding")
        if coding is not None:
            if coding.rsplit(",", 1)[-1].strip().lower() == "chunked":
                self.state = _CHUNK_SIZE
            else:
                self.state, self.keep_alive = _TO_CLOSE, False
            return False
        length = headers.get("content-length")
        if length is not None:
            values = {v.strip() for v in length.split(",")}
            if len(values) != 1 or not next(iter(values)).isdigit():
                raise BadResponse(f"the reply's Content-Length is not a length: {length[:40]!r}")
            self.need = int(values.pop())
            if self.need > self.limit:
                raise BadResponse(f"the body is {self.need} bytes, over the {self.limit} byte limit (max_response_bytes)")
            self.state = _LENGTH if self.need else _DONE
            return not self.need
        if status in (204, 304):
            self.state = _DONE
            return True
        self.state, self.keep_alive = _TO_CLOSE, False
        return False

    def eof(self) -> bool:
        if self.state == _TO_CLOSE:
            self.state = _DONE
            return True
        if self.state == _DONE:
            return True
        raise ConnectionResetError("the server closed the connection mid-reply" if self.started
                                   else "the server closed the connection without a reply")

    def reply(self) -> Reply:
        body = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
        coding = self.headers.get("content-encoding", "").strip().lower()
        if coding and coding != "identity":
            body = self._decoded(body, coding)
        if 300 <= self.status < 400 and self.headers.get("location"):
            raise Redirect(self.headers["location"])
        return Reply(self.status, self.headers, body)

    def _decoded(self, body: bytes, coding: str) -> bytes:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise BadResponse(f"the reply's Content-Encoding {coding[:40]!r} is not one this client reads")
        for wbits in ((47,) if coding != "deflate" else (15, -15)):  # 47: gzip or zlib header
            d = zlib.decompressobj(wbits)
            try:
                out = d.decompress(body, self.limit + 1)
            except zlib.error:
                continue
            if len(out) > self.limit or d.unconsumed_tail:
                raise self._too_large()
            return out
        raise BadResponse(f"the reply's {coding} body cannot be decoded")


# ----- asyncio ----------------------------------------------------------------------------------
class _AsyncConnection(asyncio.Protocol):
    """One keep-alive connection; one call at a time waits on ``waiter``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: Any = None
        self.parser: ResponseParser | None = None
        self.waiter: asyncio.Future[Reply] | None = None
        self.closed = False
        self.last = 0.0  # when the last bytes of the reply came (loop time)
        self.timeout = 0.0
        self.deadline = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None or self.waiter is None or self.waiter.done():
            self.abort()  # bytes nobody asked for: the connection is not fit to reuse
            return
        self.last = self.loop.time()
        try:
            if not parser.feed(data):
                return
            reply = parser.reply()
            if parser.buf or not parser.keep_alive:
                self.abort()
        except Exception as err:
            self._fail(err)
            return
        self.waiter.set_result(reply)

    def eof_received(self) -> bool:
        self.closed = True
        parser = self.parser
        if parser is not None and self.waiter is not None and not self.waiter.done():
            try:
                parser.eof()
                self.waiter.set_result(parser.reply())
            except Exception as err:
                self._fail(err)
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            err = ConnectionResetError(f"the connection was closed mid-reply ({exc})" if exc is not None else
                                       "the server closed the connection mid-reply")
            if exc is not None:
                err.__cause__ = exc
            self.waiter.set_exception(err)

    def _fail(self, err: BaseException) -> None:
        self.abort()
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(err)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _on_timer(self) -> None:
        self.timer = None
        if self.waiter is None or self.waiter.done():
            return
        now = self.loop.time()
        if now >= self.deadline:
            self._fail(DeadlineExpired())
        elif now - self.last >= self.timeout:
            self._fail(TimeoutError(f"no bytes of the reply within the {self.timeout:g} s read timeout"))
        else:  # bytes came since: wait again from the last ones
            self.timer = self.loop.call_at(min(self.deadline, self.last + self.timeout), self._on_timer)

    async def send(self, data: bytes, limit: int, timeout_s: float, deadline: float) -> Reply:
        loop = self.loop
        self.parser = ResponseParser(limit)
        self.waiter = waiter = loop.create_future()
        self.last = now = loop.time()
        self.timeout, self.deadline = timeout_s, deadline
        self.timer = loop.call_at(min(deadline, now + timeout_s), self._on_timer)
        try:
            self.transport.write(data)
            return await waiter
        finally:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if not waiter.done():  # cancelled while waiting: the reply would land on the next call
                self.abort()
                waiter.cancel()
            self.parser = self.waiter = None


class AsyncPool:
    """The keep-alive connections to one endpoint on one event loop (see the module docstring)."""

    def __init__(self, host: str, port: int, ssl_context: Any = None, max_idle: int = 256) -> None:
        self.host, self.port, self.ssl = host, port, ssl_context
        self.max_idle = max_idle
        self._idle: list[_AsyncConnection] = []
        self.opened = 0  # connections made in all (a test of keep-alive reads it)
        self.is_closed = False

    async def _connect(self, timeout_s: float, deadline: float) -> _AsyncConnection:
        loop = asyncio.get_running_loop()
        conn = _AsyncConnection(loop)
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExpired()
        make = loop.create_connection(lambda: conn, self.host, self.port, ssl=self.ssl,
                                      server_hostname=self.host if self.ssl is not None else None)
        try:
            await asyncio.wait_for(make, min(timeout_s, left))
        except asyncio.TimeoutError:
            if time.monotonic() >= deadline:
                raise DeadlineExpired() from None
            raise TimeoutError(f"no connection within the {timeout_s:g} s timeout") from None
        self.opened += 1
        return conn

    async def post(self, head: bytes, payload: bytes, limit: int, timeout_s: float, deadline: float) -> Reply:
        """One request (``head`` from ``request_head``, the body ``payload``) and its reply."""
        if self.is_closed:
            raise ConnectionResetError("the client's connections were closed")
        idle = self._idle
        conn = None
        while idle:
            conn = idle.pop()
            if not conn.closed:
                break
            conn = None
        if conn is None:
            conn = await self._connect(timeout_s, deadline)
        data = b"".join((head, str(len(payload)).encode(), b"\r\n\r\n", payload))
        loop = conn.loop  # the deadline is time.monotonic()'s; a loop may keep another clock
        reply = await conn.send(data, limit, timeout_s, loop.time() + (deadline - time.monotonic()))
        if not conn.closed:
            if len(idle) < self.max_idle and not self.is_closed:
                idle.append(conn)
            else:
                conn.transport.close()
        return reply

    def close(self) -> None:
        self.is_closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.closed = True
            if conn.transport is not None:
                conn.transport.close()


# ----- blocking sockets -------------------------------------------------------------------------
class _SyncConnection:
    """One keep-alive connection for blocking calls. A plain TCP socket is non-blocking and waited
    on with its own ``poll``, so a call makes one system call per wait, send and read (each lets
    the GIL go, and with many rollout threads each release may hand it to another thread: a
    socket in timeout mode polls before every send and read, and ``settimeout`` is one more); a
    TLS socket (``SSLSocket`` handles its own wants), or any where ``select.poll`` is missing,
    stays in timeout mode, its timeout set only when it changes."""

    __slots__ = ("sock", "poller", "timeout")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.timeout: float | None = None  # the timeout last set on a socket in timeout mode
        self.poller: Any = None  # a plain socket's poll object, registered for reading
        if not isinstance(sock, ssl.SSLSocket) and hasattr(select, "poll"):  # no poll on Windows: timeout mode
            sock.setblocking(False)
            self.poller = select.poll()
            self.poller.register(sock, select.POLLIN)

    def stale(self) -> bool:
        """Readable while idle: the server closed it (or sent what nobody asked for)."""
        try:
            if self.poller is not None:
                return bool(self.poller.poll(0))
            return bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def settimeout(self, timeout_s: float) -> None:
        if timeout_s != self.timeout:
            self.sock.settimeout(timeout_s)
            self.timeout = timeout_s

    def wait(self, writing: bool, timeout_s: float, deadline: float) -> None:
        """Until a plain socket can be read (or written), at most ``timeout_s`` and never past the
        deadline: ``DeadlineExpired`` or ``TimeoutError`` when it cannot."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExpired()
        wait = min(timeout_s, left)
        if writing:
            ready = bool(select.select([], [self.sock], [], wait)[1])
        else:
            ready = bool(self.poller.poll(max(1, math.ceil(wait * 1000))))
        if not ready:
            if time.monotonic() >= deadline:
                raise DeadlineExpired()
            raise TimeoutError(f"no bytes of the reply within the {timeout_s:g} s read timeout" if not writing
                               else f"the request could not be sent within the {timeout_s:g} s timeout")


class SyncPool:
    """The keep-alive connections to one endpoint for blocking calls (thread-safe)."""

    def __init__(self, host: str, port: int, ssl_context: Any = None, max_idle: int = 256) -> None:
        self.host, self.port, self.ssl = host, port, ssl_context
        self.max_idle = max_idle
        self._idle: list[_SyncConnection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self.opened = 0

    def _take(self) -> _SyncConnection | None:
        while True:
            with self._lock:
                if self._pid != os.getpid():  # a forked child: the parent's sockets are not its to use
                    self._idle, self._pid = [], os.getpid()
                if not self._idle:
                    return None
                conn = self._idle.pop()
            if not conn.stale():  # checked outside the lock: the other threads take and give meanwhile
                return conn
            conn.close()

    def _give(self, conn: _SyncConnection) -> None:
        with self._lock:
            if len(self._idle) < self.max_idle and self._pid == os.getpid():
                self._idle.append(conn)
                return
        conn.close()

    def _connect(self, timeout_s: float, deadline: float) -> _SyncConnection:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExpired()
        try:
            sock = socket.create_connection((self.host, self.port), timeout=min(timeout_s, left))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.ssl is not None:
                sock.settimeout(max(1e-3, min(timeout_s, deadline - time.monotonic())))
                sock = self.ssl.wrap_socket(sock, server_hostname=self.host)
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise DeadlineExpired() from None
            raise TimeoutError(f"no connection within the {timeout_s:g} s timeout") from None
        with self._lock:
            self.opened += 1
        return _SyncConnection(sock)

    def post(self, head: bytes, payload: bytes, limit: int, timeout_s: float, deadline: float) -> Reply:
        conn = self._take() or self._connect(timeout_s, deadline)
        data = b"".join((head, str(len(payload)).encode(), b"\r\n\r\n", payload))
        ok = False
        try:
            if conn.poller is not None:
                reply, ok = self._exchange(conn, data, limit, timeout_s, deadline)
            else:
                reply, ok = self._exchange_timeout(conn, data, limit, timeout_s, deadline)
            return reply
        finally:
            if ok:
                self._give(conn)
            else:
                conn.close()

    @staticmethod
    def _exchange(conn: _SyncConnection, data: bytes, limit: int, timeout_s: float,
                  deadline: float) -> tuple[Reply, bool]:
        """One request and its reply on a plain (non-blocking) socket: ``(reply, reusable)``."""
        sock = conn.sock
        if deadline - time.monotonic() <= 0:
            raise DeadlineExpired()
        view = memoryview(data)
        while True:  # one send takes the whole request unless the socket's buffer is full
            try:
                sent = sock.send(view)
            except BlockingIOError:
                sent = 0
            if sent == len(view):
                break
            view = view[sent:]
            conn.wait(True, timeout_s, deadline)
        parser = ResponseParser(limit)
        while True:
            conn.wait(False, timeout_s, deadline)
            try:
                chunk = sock.recv(_READ)
            except BlockingIOError:  # woken with nothing to read after all
                continue
            if not chunk:
                parser.eof()
                return parser.reply(), False  # read to the close: not reusable
            if parser.feed(chunk):
                return parser.reply(), parser.keep_alive and not parser.buf

    @staticmethod
    def _exchange_timeout(conn: _SyncConnection, data: bytes, limit: int, timeout_s: float,
                          deadline: float) -> tuple[Reply, bool]:
        """``_exchange`` on a socket in timeout mode (TLS)."""
        sock = conn.sock
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExpired()
        conn.settimeout(min(timeout_s, left))
        sock.sendall(data)
        parser = ResponseParser(limit)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExpired()
            conn.settimeout(min(timeout_s, left))
            try:
                chunk = sock.recv(_READ)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise DeadlineExpired() from None
                raise TimeoutError(f"no bytes of the reply within the {timeout_s:g} s read timeout") from None
            if not chunk:
                parser.eof()
                return parser.reply(), False  # read to the close: not reusable
            if parser.feed(chunk):
                return parser.reply(), parser.keep_alive and not parser.buf

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __del__(self) -> None:  # a client dropped without close(): its sockets go with it, quietly
        for conn in getattr(self, "_idle", ()):
            conn.close()
