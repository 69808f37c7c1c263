"""One client layer for every LLM plug-in (user simulators, the judge, the agent policy).

``LLMConfig`` names an OpenAI-compatible chat-completions endpoint; ``LLMClient`` calls it with
the official ``openai`` package and adds what an RL loop needs around it:

- retries with exponential backoff and jitter (a seeded RNG) on 429, 5xx, timeouts and
  connection errors, honouring a small ``Retry-After``; no retry on other 4xx;
- a total deadline per call (``deadline_s``, default 120 s): connect, headers and body of every
  attempt, and the waits between them, end by then, so a server that trickles a byte at a time
  cannot hold a call past it (``timeout_s`` bounds each read, and is cut to what is left); an
  optional per-episode budget of model-call seconds (``episode_budget_s``, ``EpisodeBudget``)
  that the LLM users and the LLM agent policy spend, ending the episode with a clear reason;
- every reply read defensively (``parse_completion``): a body over ``max_response_bytes``, JSON
  nested deeper than ``MAX_JSON_DEPTH``, a 200 that is not a chat completion, is an ``LLMError``
  like a bad status (kind ``"malformed"``); usage counts that are not finite non-negative
  integers count as 0; lone surrogates in the content and tool calls become U+FFFD, so
  transcripts, records and cache files always encode;
- an ``LLMError`` that says which endpoint, which model and what failed, once retries run out
  (never the API key); its ``kind`` says how: ``status``, ``timeout``, ``deadline``, ``budget``,
  ``reset`` (the connection was reset or closed mid-reply), ``connection`` (no connection),
  ``malformed``, ``request`` (the request cannot be sent as JSON);
- token counts per call (``ChatResult.usage``) and running totals (``LLMClient.usage``);
- a content-addressed cache: the sha256 of the canonical JSON of the endpoint (``base_url``) and
  the request (model, messages, tools, temperature, seed, response format, ...) names a JSON file
  under ``cache_dir``; a hit returns the stored result with ``cached=True`` and makes no request,
  so re-scoring a saved transcript costs nothing; entries are written whole (a temporary file
  renamed into place, removed if the write fails; a failed write costs the cache entry, not the reply);
- ``await client.achat(...)``: the same call for asyncio, over ``openai.AsyncOpenAI`` (aiohttp
  transport when installed), one HTTP session per event loop, closed as the loop shuts down its
  async generators (``asyncio.run`` does, before it closes the loop) or sooner by ``aclose_clients()``;
- ``LLMClient.shared(config)``: the process's one client per config and key, so the policies,
  users and judges built per episode share one connection pool;
- the request is the openai client's (its base URL, auth and default headers, taken once per
  endpoint; the body serialised here, the tool schemas once) and, for an endpoint reached without a
  proxy, it goes out on the lean HTTP/1.1 transport of ``simulators/llm_http.py``: a pooled
  keep-alive connection per call in flight (sync: per thread), one write, the reply framed and read
  within ``max_response_bytes``, raw JSON parsed by ``parse_completion`` (no pydantic reply
  models, no task per ``wait_for``); at 64 episodes in flight it costs a fraction of the generic
  stacks' CPU per call. A proxy from the environment or a redirect takes the openai client's own
  HTTP stack (httpx; aiohttp for asyncio when installed), as every call did before.

The API key is read from the environment variable ``api_key_env`` (default ``OPENAI_API_KEY``)
when the client is built; it is never stored on the config, in cache keys or files, reprs,
transcripts or error messages. ``openai`` is imported only when a client is built, so importing
this module costs a scripted episode nothing.

```python
cfg = LLMConfig.resolve({"base_url": "http://localhost:8000/v1", "model": "qwen3-8b"})
client = LLMClient(cfg)
result = client.chat([{"role": "user", "content": "Hello"}])
result.content, result.tool_calls, result.usage, client.usage
```

Layout: this module holds ``LLMClient`` (with its asyncio endpoints per event loop, ``aclose_clients``)
and re-exports the public names of the sibling modules it is built on, which never import it:
``llm_config.py`` (``LLMConfig``, ``LLMError``, ``EpisodeBudget``, ``request_key``), ``llm_replies.py``
(reading replies defensively: ``ChatResult``, ``parse_completion``, ``loads_json``, ``add_usage``) and
``llm_transport.py`` (the request built once per endpoint, failures told from the exception chain, the
sync transport's deadline, the request body's JSON and ``Transcript``), all above ``llm_http.py``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import os
import random
import tempfile
import threading
import time
import warnings
import weakref
from pathlib import Path
from typing import Any

from servicegym.simulators.llm_config import (
    CACHE_VERSION,
    ENV_BASE_URL,
    ENV_CACHE_DIR,
    ENV_MODEL,
    EpisodeBudget,
    LLMConfig,
    LLMError,
    _budget_text,
    canonical_json,
    request_key,
)
from servicegym.simulators.llm_http import BadResponse, Redirect
from servicegym.simulators.llm_replies import (
    MAX_JSON_DEPTH,
    ChatResult,
    _Body,
    _error_text,
    _Expired,
    _Malformed,
    _message_result,
    _nesting_exceeds,
    _safe,
    add_usage,
    loads_json,
    parse_completion,
)
from servicegym.simulators.llm_transport import (
    _DEADLINE,
    Transcript,
    _body_json,
    _Endpoint,
    _has_aiohttp,
    _http_libraries,
    _json_default,
    _sync_http_client,
    _tls_context,
    _transport_errors,
    _transport_failure,
)

__all__ = ["ENV_BASE_URL", "ENV_MODEL", "ENV_CACHE_DIR", "MAX_JSON_DEPTH", "LLMConfig", "ChatResult", "LLMError",
           "LLMClient", "EpisodeBudget", "Transcript", "aclose_clients", "add_usage", "canonical_json", "loads_json",
           "parse_completion", "request_key"]

# sent when the key variable is unset: local servers (vLLM, llama.cpp, Ollama) accept any key
NO_KEY = "EMPTY"
_DEADLINE_SLACK_S = 0.05  # a timeout this close to the deadline is the deadline's


_RETRY_STATUS = frozenset({408, 409, 425, 429})


_SHARED: dict[tuple[int, str, str], LLMClient] = {}  # insertion order = least recently used first
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 32  # distinct configs kept; one used after that is rebuilt (its users keep theirs)


@atexit.register
def _close_shared() -> None:
    """Close the shared clients' pooled connections before the interpreter tears down (else their
    sockets may be collected first, each with a ResourceWarning)."""
    for client in list(_SHARED.values()):
        with contextlib.suppress(Exception):
            client._endpoint.close_direct()
            client._client.close()


class LLMClient:
    """Calls one endpoint; thread-safe (one client may serve many rollout threads).

    ``LLMClient.shared(config)`` returns the process's one client for that config (and key):
    building an ``openai.OpenAI`` costs ~45 ms (its TLS context) and a connection pool, so the
    policies, users and judges that ``collect`` builds per episode share one instead of paying
    that per episode and opening a fresh connection each time.
    """

    @classmethod
    def shared(cls, config: LLMConfig | dict[str, Any] | None = None) -> LLMClient:
        """The process-wide client for ``config`` (built on first use, rebuilt in a forked child;
        its ``usage`` counts every caller's requests)."""
        cfg = LLMConfig.resolve(config)
        key = os.environ.get(cfg.api_key_env) or NO_KEY
        ident = (os.getpid(), cfg.model_dump_json(), hashlib.sha256(key.encode("utf-8")).hexdigest())
        with _SHARED_LOCK:
            client = _SHARED.pop(ident, None)
            if client is None:
                client = cls(cfg)
                while len(_SHARED) >= _SHARED_MAX:  # e.g. a config per seed: keep the recent ones only
                    del _SHARED[next(iter(_SHARED))]
            _SHARED[ident] = client
            return client

    def __init__(self, config: LLMConfig | dict[str, Any] | None = None) -> None:
        self.config = LLMConfig.resolve(config)
        self._lock = threading.Lock()
        self._rng = random.Random(self.config.seed if self.config.seed is not None else 0)
        self.usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cache_hits": 0,
                                      "errors": 0}
        self._key = os.environ.get(self.config.api_key_env) or NO_KEY
        self._cache = Path(self.config.cache_dir) if self.config.cache_dir else None
        self.cache_errors = 0  # cache entries that could not be written (the replies were still used)
        import openai  # deferred, as its HTTP library: the scripted path never pays for them

        httpx2, httpcore2 = _http_libraries(openai)
        self._openai = openai
        self._httpx = httpx2
        self._transport_errors = _transport_errors(openai, httpx2)
        http = _sync_http_client(openai, httpx2, httpcore2, self.config.timeout_s)
        self._client = openai.OpenAI(base_url=self.config.base_url, api_key=self._key,
                                     timeout=self.config.timeout_s, max_retries=0, http_client=http)
        self._endpoint = _Endpoint(openai, httpx2, self._client, http, direct=self.config.http == "lean")
        self._redirected = False  # the endpoint redirected once: its calls go through the full HTTP stack
        # the endpoint of the last event loop an ``achat`` ran on (the loop held weakly)
        self._last_async: tuple[weakref.ref[asyncio.AbstractEventLoop], _Endpoint] | None = None
        self.sleep = time.sleep  # the backoff wait (tests record it instead)
        self.asleep = asyncio.sleep  # the same in ``achat``

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r})"

    # ----- helpers -----------------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        if self._key and self._key != NO_KEY and self._key in text:
            text = text.replace(self._key, "***")
        return text

    def _error(self, what: str, attempts: int, status: int | None = None, kind: str = "") -> LLMError:
        c = self.config
        what = _safe(what)  # an error body's text goes into transcripts too
        msg = self._redact(f"LLM endpoint {c.base_url} (model {c.model!r}) unusable: {what}"
                           + (f" after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts else ""))
        with self._lock:
            self.usage["errors"] += 1
        return LLMError(msg, base_url=c.base_url, model=c.model, attempts=attempts, status=status, kind=kind,
                        detail=self._redact(what))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        c = self.config
        if retry_after is not None and 0 <= retry_after <= c.retry_after_max_s:
            return retry_after
        with self._lock:
            jitter = 0.5 + 0.5 * self._rng.random()
        return min(c.backoff_max_s, c.backoff_base_s * (2 ** (attempt - 1))) * jitter

    @staticmethod
    def _retry_after(err: Any) -> float | None:
        headers = getattr(getattr(err, "response", None), "headers", None)
        if not headers:
            return None
        for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
            raw = headers.get(name)
            if raw is not None:
                try:
                    return float(raw) * scale
                except ValueError:
                    return None
        return None

    def _cache_path(self, key: str) -> Path | None:
        return None if self._cache is None else self._cache / key[:2] / f"{key}.json"

    def _cache_get(self, path: Path | None) -> ChatResult | None:
        if path is None or not path.is_file():
            return None
        try:
            text = path.read_text(encoding="utf-8")
            if _nesting_exceeds(text, MAX_JSON_DEPTH):
                return None
            data = json.loads(text)["result"]
            result = _message_result({"content": data.get("content"), "tool_calls": data.get("tool_calls")},
                                     data.get("finish_reason"), data.get("usage"))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # a damaged entry is a miss; the fresh result overwrites it
        result.cached = True
        return result

    def _cache_put(self, path: Path | None, key: str, result: ChatResult) -> None:
        """Write the entry whole or not at all: a temporary file in the same folder renamed into
        place, removed on any failure. A failed write (a full disk, a read-only ``cache_dir``) costs
        the entry only: the reply is still returned (``cache_errors`` counts them, one warning)."""
        if path is None:
            return
        payload = {"version": CACHE_VERSION, "key": key, "base_url": self.config.base_url, "model": self.config.model,
                   "result": result.to_json()}
        try:
            data = canonical_json(payload).encode("utf-8")  # before any file exists: nothing to clean up
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)  # atomic: concurrent writers of one key leave one whole file
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, ValueError) as err:
            with self._lock:
                self.cache_errors += 1
                first = self.cache_errors == 1
            if first:
                warnings.warn(f"LLM cache: cannot write {path} ({type(err).__name__}: {err}); replies are used "
                              "uncached", RuntimeWarning, stacklevel=3)

    # ----- the call ----------------------------------------------------------------------------
    def request_body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                     tool_choice: Any = None, response_format: dict[str, Any] | None = None,
                     **extra: Any) -> dict[str, Any]:
        """The request as sent (and hashed for the cache)."""
        c = self.config
        body: dict[str, Any] = {"model": c.model, "messages": messages, "temperature": c.temperature}
        if c.seed is not None:
            body["seed"] = c.seed
        if c.max_tokens is not None:
            body["max_tokens"] = c.max_tokens
        if tools:
            body["tools"] = tools
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if response_format is not None:
            body["response_format"] = response_format
        body.update(extra.pop("extra_body", None) or {})  # the openai client's spelling of "more fields"
        body.update(extra)
        return body

    def _begin(self, args: tuple, kwargs: dict[str, Any]) -> tuple[dict[str, Any], str, Path | None, ChatResult | None]:
        """The body, its cache key (endpoint and request) and path, and the cached result if there is one."""
        body = self.request_body(*args, **kwargs)
        key = request_key(body, self.config.base_url) if self._cache is not None else ""
        path = self._cache_path(key)
        hit = self._cache_get(path)
        if hit is not None:
            with self._lock:
                self.usage["cache_hits"] += 1
        return body, key, path, hit

    def _payload(self, body: dict[str, Any]) -> bytes:
        """The request body as JSON bytes (sent as they are): UTF-8, or with ASCII escapes when a
        message holds a lone surrogate (an agent's action may); ``LLMError`` (kind ``"request"``,
        no attempt made) when it cannot be JSON at all (NaN, an object JSON has no form for)."""
        try:
            text = _body_json(body)
            try:
                return text.encode("utf-8")
            except UnicodeEncodeError:
                return json.dumps(body, separators=(",", ":"), allow_nan=False, default=_json_default).encode("ascii")
        except (TypeError, ValueError, RecursionError) as err:
            raise self._error(f"the request cannot be sent as JSON ({type(err).__name__}: {err})", 0, None,
                              "request") from None

    def _window(self, start: float, budget: EpisodeBudget | None) -> tuple[float, float | None]:
        """(the call's deadline, the episode budget's seconds when the budget is what sets it);
        ``LLMError`` of kind ``"budget"`` when the budget is spent already."""
        left = self.config.deadline_s
        if budget is not None and budget.seconds is not None:
            if budget.left_s <= 0:
                raise self._error(_budget_text(budget.seconds), 0, None, "budget")
            if budget.left_s < left:
                return start + budget.left_s, budget.seconds
        return start + left, None

    def _failed(self, err: Exception, attempts: int, window: tuple[float, float | None]) -> float:
        """What a failed attempt means: the seconds to wait before the next one, or ``LLMError``
        raised when the failure is final (a 4xx other than 408/409/425/429, the deadline or the
        episode budget reached, retries spent, or no time left before the deadline for another)."""
        o = self._openai
        c = self.config
        deadline, budget_s = window
        retry_after = None
        status = None
        if isinstance(err, _Malformed):
            last, kind = f"unreadable response ({err})", "malformed"
        elif isinstance(err, o.APIStatusError):
            status, kind = err.status_code, "status"
            last = f"HTTP {err.status_code}: {_error_text(err)}"
            if err.status_code not in _RETRY_STATUS and err.status_code < 500:
                raise self._error(last, attempts, status, kind) from None
            retry_after = self._retry_after(err)
        elif isinstance(err, o.APIResponseValidationError):
            last, kind = f"unreadable response ({err.message})", "malformed"
        elif isinstance(err, (_Expired, *self._transport_errors)):
            kind, last = ("timeout", "") if isinstance(err, _Expired) else _transport_failure(err)
            if kind == "timeout":
                if isinstance(err, _Expired) or time.monotonic() >= deadline - _DEADLINE_SLACK_S:
                    # cut at the deadline (every wait was bounded by what was left of it): final
                    what = _budget_text(budget_s) if budget_s is not None else \
                        f"no complete reply within the {c.deadline_s:g} s deadline of the call"
                    raise self._error(what, attempts, None, "budget" if budget_s is not None else "deadline") from None
                last = f"no reply within the {c.timeout_s:g} s timeout"
        else:
            raise err  # not the endpoint's doing: a bug here, shown as it is
        if attempts > c.max_retries:
            raise self._error(last, attempts, status, kind) from None
        delay = self._delay(attempts, retry_after)
        if time.monotonic() + delay >= deadline:
            limit = f"the episode budget of {budget_s:g} s" if budget_s is not None else f"the {c.deadline_s:g} s deadline"
            raise self._error(f"{last} (no time for another attempt within {limit})", attempts, status, kind) from None
        return delay

    def _done(self, result: ChatResult, attempts: int, path: Path | None, key: str) -> ChatResult:
        result.attempts = attempts
        with self._lock:
            self.usage["calls"] += 1
            self.usage["prompt_tokens"] += result.usage["prompt_tokens"]
            self.usage["completion_tokens"] += result.usage["completion_tokens"]
        self._cache_put(path, key, result)
        return result

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             tool_choice: Any = None, response_format: dict[str, Any] | None = None, *,
             budget: EpisodeBudget | None = None, **extra: Any) -> ChatResult:
        """One chat completion; raises ``LLMError`` when the endpoint is unusable. It ends within
        ``deadline_s`` (and within what is left of ``budget``, whose seconds it spends); other
        keyword arguments are request fields."""
        start = time.monotonic()
        body, key, path, hit = self._begin((messages, tools, tool_choice, response_format), extra)
        if hit is not None:
            return hit
        try:
            window = self._window(start, budget)
            payload = self._payload(body)
            attempts = 0
            while True:
                attempts += 1
                try:
                    result = self._attempt(payload, window[0])
                except Exception as err:
                    self.sleep(self._failed(err, attempts, window))
                    continue
                return self._done(result, attempts, path, key)
        finally:
            if budget is not None:
                budget.charge(time.monotonic() - start)

    def _redirect(self, ep: Any) -> None:
        """A redirect on the lean transport: the full stack follows redirects, so this endpoint (and
        every endpoint this client makes from now on) goes that way."""
        ep.direct = None
        self._redirected = True

    @staticmethod
    def _direct_completion(ep: Any, reply: Any) -> Any:
        """A lean-transport reply as a completion, or the status error a bad status is."""
        if reply.status >= 400:
            raise ep.direct_status_error(reply)
        return parse_completion(reply.body)

    def _attempt(self, payload: bytes, deadline: float) -> ChatResult:
        """One POST: the openai client's request, built once (``_Endpoint``: its URL and headers),
        with this call's body as built, sent on the lean transport (``_Endpoint.direct``) or else on
        the client's own HTTP client, the reply read within the size limit, then parsed by
        ``parse_completion`` (the typed
        ``chat.completions.create`` would re-walk every message and build pydantic models of the
        reply, and the generic ``post`` rebuilds URL, headers and options: milliseconds a call that a
        rollout loop pays 64-fold). Every socket wait of the attempt is cut to the deadline
        (``_DEADLINE``, read by the transport)."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Expired()
        ep = self._endpoint
        if ep.direct is not None:
            try:
                reply = ep.direct.post(ep.head, payload, self.config.max_response_bytes, self.config.timeout_s, deadline)
            except BadResponse as err:
                raise _Malformed(str(err)) from None
            except Redirect:
                self._redirect(ep)
            else:
                return self._direct_completion(ep, reply)
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Expired()
        token = _DEADLINE.set(deadline)
        try:
            response = ep.http.send(ep.request(payload, min(self.config.timeout_s, left)), stream=True)
            try:
                body = _Body(response, self.config.max_response_bytes, deadline)
                for chunk in response.iter_bytes():
                    body.add(chunk)
            finally:
                response.close()
        finally:
            _DEADLINE.reset(token)
        if response.status_code >= 400:
            raise ep.status_error(response, body.data())
        return parse_completion(body.data())

    async def achat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                    tool_choice: Any = None, response_format: dict[str, Any] | None = None, *,
                    budget: EpisodeBudget | None = None, **extra: Any) -> ChatResult:
        """``chat`` for asyncio: the same request, retries, deadline, budget, cache, usage and
        errors, built from an ``openai.AsyncOpenAI`` of the running event loop and sent on its lean
        transport (``llm_http.AsyncPool``: a keep-alive connection per call in flight; through a
        proxy, on the openai client's HTTP client, aiohttp when it is installed). Many episodes of
        one event loop then wait on the endpoint together without a thread each."""
        start = time.monotonic()
        body, key, path, hit = self._begin((messages, tools, tool_choice, response_format), extra)
        if hit is not None:
            return hit
        try:
            window = self._window(start, budget)
            payload = self._payload(body)
            client = self._async_client()
            attempts = 0
            while True:
                attempts += 1
                try:
                    result = await self._aattempt(client, payload, window[0])
                except Exception as err:
                    await self.asleep(self._failed(err, attempts, window))
                    continue
                return self._done(result, attempts, path, key)
        finally:
            if budget is not None:
                budget.charge(time.monotonic() - start)

    async def _aattempt(self, client: _Endpoint, payload: bytes, deadline: float) -> ChatResult:
        """``_attempt`` for asyncio. On the lean transport one timer per attempt ends it at the
        deadline or a read timeout, wherever it waits; on the openai client's HTTP client the whole
        attempt runs under ``asyncio.wait_for`` of what is left of the deadline. The request is the
        endpoint's pre-built one with this call's body (``_Endpoint``)."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Expired()
        if client.direct is not None:  # the lean transport: one future and one timer, no task per attempt
            try:
                reply = await client.direct.post(client.head, payload, self.config.max_response_bytes,
                                                 self.config.timeout_s, deadline)
            except BadResponse as err:
                raise _Malformed(str(err)) from None
            except Redirect:
                self._redirect(client)
            else:
                return self._direct_completion(client, reply)
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Expired()

        async def post() -> bytes:
            response = await client.http.send(client.request(payload, min(self.config.timeout_s, left)), stream=True)
            try:
                body = _Body(response, self.config.max_response_bytes, deadline)
                async for chunk in response.aiter_bytes():
                    body.add(chunk)
            finally:
                await response.aclose()
            if response.status_code >= 400:
                raise client.status_error(response, body.data())
            return body.data()

        try:
            raw = await asyncio.wait_for(post(), left)
        except asyncio.TimeoutError:
            if time.monotonic() >= deadline - _DEADLINE_SLACK_S:
                raise _Expired() from None
            raise
        return parse_completion(raw)

    def _async_client(self) -> _Endpoint:
        """The endpoint of the running loop: its ``openai.AsyncOpenAI`` (an HTTP session belongs
        to one loop) and the request it sends, built once."""
        loop = asyncio.get_running_loop()
        last = self._last_async
        if last is not None and last[0]() is loop and not last[1].closed:
            return last[1]  # the common case: every call of a rollout run on one loop
        with _LOOP_LOCK:
            clients = _LOOP_CLIENTS.setdefault(loop, {})
            client = clients.get(self)
            if client is None:
                if loop not in _LOOP_CLOSERS:
                    _LOOP_CLOSERS[loop] = _close_at_loop_end(loop)
                o = self._openai
                # on aiohttp when it is installed (openai's advice for concurrency); one TLS context a process
                make_http = o.DefaultAioHttpClient if _has_aiohttp() and hasattr(o, "DefaultAioHttpClient") \
                    else o.DefaultAsyncHttpxClient
                http = make_http(timeout=self.config.timeout_s, verify=_tls_context(self._httpx))
                openai_client = o.AsyncOpenAI(base_url=self.config.base_url, api_key=self._key,
                                              timeout=self.config.timeout_s, max_retries=0, http_client=http)
                client = clients[self] = _Endpoint(o, self._httpx, openai_client, http, asynchronous=True,
                                                   direct=not self._redirected and self.config.http == "lean")
            self._last_async = (weakref.ref(loop), client)
            return client

    def check(self) -> list[str]:
        """The endpoint's model ids (``GET /models``, within ``deadline_s``); ``LLMError`` when
        unreachable or when the configured model is not among them."""
        token = _DEADLINE.set(time.monotonic() + self.config.deadline_s)
        try:
            ids = [m.id for m in self._client.models.list()]
        except self._openai.APIStatusError as err:
            raise self._error(f"GET /models: HTTP {err.status_code}: {_error_text(err)}", 1, err.status_code, "status") from None
        except self._openai.APIError as err:
            kind, what = _transport_failure(err)
            raise self._error(f"GET /models: {what}", 1, None, kind) from None
        finally:
            _DEADLINE.reset(token)
        if ids and self.config.model not in ids:
            raise self._error(f"model {self.config.model!r} is not served (available: {', '.join(ids[:10])})", 0,
                              None, "model")
        return ids


# the async client of each LLMClient on each event loop, closed together by ``aclose_clients``
_LOOP_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[LLMClient, Any]] = weakref.WeakKeyDictionary()
_LOOP_LOCK = threading.Lock()


async def aclose_clients() -> None:
    """Close the HTTP sessions that ``LLMClient.achat`` opened on the running loop. A loop run by
    ``asyncio.run`` (or ended with ``loop.shutdown_asyncgens()``) closes them itself as it ends;
    call this to close them earlier, or before ending a loop some other way."""
    with _LOOP_LOCK:
        clients = _LOOP_CLIENTS.pop(asyncio.get_running_loop(), {})
    for owner, client in clients.items():
        client.closed = True
        if owner._last_async is not None and owner._last_async[1] is client:
            owner._last_async = None  # its HTTP session holds the loop: nothing keeps it past here
        client.close_direct()
        await client.openai.close()


# per loop, an async generator suspended at its ``yield``: the loop's own shutdown of its async
# generators (``asyncio.run`` does it before closing) finalizes it, which closes that loop's sessions
_LOOP_CLOSERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


def _close_at_loop_end(loop: asyncio.AbstractEventLoop) -> Any:
    """Start (in ``loop``, running) and return the generator that closes the loop's sessions when
    the loop shuts down its async generators; the caller keeps it (the loop holds it weakly)."""

    async def closer():
        try:
            yield
        finally:
            with _LOOP_LOCK:  # nothing keeps the loop alive after it ends
                _LOOP_CLOSERS.pop(loop, None)
            await aclose_clients()

    gen = closer()
    with contextlib.suppress(StopIteration):  # its first step reaches the ``yield`` at once
        gen.asend(None).send(None)  # the loop's first-iteration hook now knows it
    return gen
