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
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import errno
import functools
import hashlib
import json
import math
import os
import random
import re
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from servicegym.simulators.llm_http import (
    AsyncPool,
    BadResponse,
    DeadlineExpired,
    Redirect,
    SyncPool,
    direct_ok,
    request_head,
)
from servicegym.world_state.text import scrub

__all__ = ["ENV_BASE_URL", "ENV_MODEL", "ENV_CACHE_DIR", "MAX_JSON_DEPTH", "LLMConfig", "ChatResult", "LLMError",
           "LLMClient", "EpisodeBudget", "Transcript", "aclose_clients", "add_usage", "canonical_json", "loads_json",
           "parse_completion", "request_key"]

ENV_BASE_URL = "SERVICEGYM_BASE_URL"
ENV_MODEL = "SERVICEGYM_MODEL"
ENV_CACHE_DIR = "SERVICEGYM_CACHE_DIR"
# sent when the key variable is unset: local servers (vLLM, llama.cpp, Ollama) accept any key
NO_KEY = "EMPTY"
CACHE_VERSION = 2  # 2: the key holds the endpoint too
# a reply nested deeper is malformed: a chat completion nests about 8 deep, and Python's json recurses
MAX_JSON_DEPTH = 64
_MAX_COUNT = 2**53  # a token count above this is not one
_DEADLINE_SLACK_S = 0.05  # a timeout this close to the deadline is the deadline's


class LLMConfig(BaseModel):
    """Where and how to call a chat-completions endpoint (no secret is ever held here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    # per read (connect, each read of the headers and body), cut to what is left of deadline_s
    timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    # the most one call may take in all: every attempt (connect, headers, body) and the waits between
    deadline_s: float = Field(120.0, gt=0, allow_inf_nan=False)
    # seconds of model calls one episode may spend (each LLM user, the LLM agent policy); None: no limit
    episode_budget_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    # a reply body larger than this is malformed (checked while it is read)
    max_response_bytes: int = Field(16 * 2**20, gt=0)
    max_retries: int = Field(4, ge=0)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(20.0, ge=0)
    # a Retry-After up to this many seconds is honoured; a longer one falls back to the backoff
    retry_after_max_s: float = Field(30.0, ge=0)
    cache_dir: str | None = None
    # False: the endpoint has no native tool calling; the agent policy uses the text action path
    native_tools: bool = True
    # "lean": requests the openai client builds go out on the pooled keep-alive transport of
    # ``simulators/llm_http.py`` (a proxy or a redirect still takes the openai client's stack);
    # "openai": every call through the openai client's own HTTP stack (httpx, or aiohttp when installed)
    http: Literal["lean", "openai"] = "lean"

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        v = v.strip().rstrip("/")
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {v!r}")
        return v

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("model must not be empty")
        return v.strip()

    @classmethod
    def resolve(cls, llm: dict[str, Any] | LLMConfig | None = None) -> LLMConfig:
        """The config from an ``llm=`` dict, filled in from ``SERVICEGYM_BASE_URL``,
        ``SERVICEGYM_MODEL`` and ``SERVICEGYM_CACHE_DIR``; a clear ``ValueError`` when the
        endpoint or model is missing or a field is wrong."""
        if isinstance(llm, LLMConfig):
            return llm
        if llm is not None and not isinstance(llm, dict):
            raise ValueError(f"llm must be a dict such as {{'base_url': ..., 'model': ...}}, got {type(llm).__name__}")
        given = dict(llm or {})
        for secret in ("api_key", "key", "openai_api_key"):
            if secret in given:
                raise ValueError(f"llm[{secret!r}]: the API key is read only from an environment variable "
                                 "(OPENAI_API_KEY, or the variable named by llm['api_key_env'])")
        merged: dict[str, Any] = {}
        for name, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("cache_dir", ENV_CACHE_DIR)):
            if os.environ.get(var):
                merged[name] = os.environ[var]
        merged.update({k: v for k, v in given.items() if v is not None})
        missing = [f"{name} (llm={{'{name}': ...}} or {var})" for name, var in
                   (("base_url", ENV_BASE_URL), ("model", ENV_MODEL)) if not merged.get(name)]
        if missing:
            raise ValueError("LLM endpoint not configured: missing " + " and ".join(missing))
        try:
            return cls(**merged)
        except Exception as err:  # pydantic's ValidationError, made one readable line
            errors = getattr(err, "errors", None)
            if callable(errors):
                e = errors(include_url=False)[0]
                raise ValueError(f"llm[{'.'.join(map(str, e['loc'])) or '?'}]: {e['msg']}") from None
            raise ValueError(f"bad llm config: {err}") from None


@dataclass
class ChatResult:
    """One completion: text, tool calls (OpenAI format, arguments as the raw string), usage."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0})
    cached: bool = False
    attempts: int = 0
    # the chat completion's ``id`` as the endpoint sent it ("" when it sent none, and on a cache hit,
    # which no endpoint served): gateways that record token ids key them on it
    id: str = ""

    def message(self) -> dict[str, Any]:
        """The assistant message in OpenAI chat format (for appending to a conversation)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [dict(c) for c in self.tool_calls]
        return msg

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("cached")
        d.pop("attempts")
        d.pop("id")
        return d


class LLMError(RuntimeError):
    """The endpoint could not give a usable reply (after retries where retrying makes sense)."""

    def __init__(self, message: str, *, base_url: str = "", model: str = "", attempts: int = 0,
                 status: int | None = None, kind: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.base_url, self.model, self.attempts, self.status, self.kind = base_url, model, attempts, status, kind
        self.detail = detail or message  # what failed, without the endpoint around it

    def to_json(self) -> dict[str, Any]:
        return {"error": str(self), "kind": self.kind, "status": self.status, "attempts": self.attempts,
                "base_url": self.base_url, "model": self.model}


class EpisodeBudget:
    """Seconds of model calls one episode may spend (``LLMConfig.episode_budget_s``; None: no limit).

    Pass the same one to every ``chat``/``achat`` of an episode (``budget=``): each call's deadline
    is bounded by what is left, its wall time (retries and waits included) is charged, and once the
    budget is spent a call raises ``LLMError`` of kind ``"budget"`` (a cache hit is still free).
    The LLM users and ``LLMAgentPolicy`` keep one each per episode."""

    def __init__(self, seconds: float | None = None) -> None:
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not math.isfinite(seconds) or seconds <= 0):
            raise ValueError(f"an episode budget is a positive number of seconds or None, got {seconds!r}")
        self.seconds = None if seconds is None else float(seconds)
        self.spent_s = 0.0
        self._lock = threading.Lock()

    @property
    def left_s(self) -> float:
        return math.inf if self.seconds is None else max(0.0, self.seconds - self.spent_s)

    def charge(self, seconds: float) -> None:
        with self._lock:
            self.spent_s += max(0.0, seconds)

    def reset(self) -> None:
        with self._lock:
            self.spent_s = 0.0

    def __repr__(self) -> str:
        return f"EpisodeBudget(seconds={self.seconds!r}, spent_s={self.spent_s:.3f})"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def request_key(request: dict[str, Any], endpoint: str = "") -> str:
    """The cache key of a request body sent to ``endpoint`` (the ``base_url``): sha256 of their
    canonical JSON (it never holds the API key). One endpoint's reply never answers another's."""
    text = canonical_json({"v": CACHE_VERSION, "endpoint": endpoint, "request": request})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


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


@functools.cache
def _has_aiohttp() -> bool:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


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


def _error_text(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            msg = inner["message"]  # any JSON: its str() of a deeply nested value would recurse
            return msg[:300] if isinstance(msg, str) else f"(an error message that is a {type(msg).__name__})"
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(err, "message", err))[:300]


# ----- reading replies defensively --------------------------------------------------------------
class _Malformed(ValueError):
    """A reply that is not a usable chat completion (the text says why)."""


_Expired = DeadlineExpired  # the call's deadline (or the episode's budget) passed during an attempt


# a JSON string (an unterminated one runs to the end: the pattern never fails, so it never backtracks),
# an opening bracket (group 1) or a closing one (group 2)
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)|([\[{])|([\]}])', re.S)


_safe = scrub  # lone surrogates to U+FFFD: the one mechanism of world_state/text.py


def _nesting_exceeds(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests arrays and objects deeper than ``limit``: one linear pass over its
    strings and brackets (brackets inside strings do not count), skipped when there are too few
    brackets to get there. Python's ``json`` recurses per level; this is checked first."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        if m.group(1):
            depth += 1
            if depth > limit:
                return True
        elif m.group(2):
            depth -= 1
    return False


def loads_json(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` for text a model wrote (tool-call arguments, a JSON answer): ``ValueError``
    for anything that is not JSON nested at most ``max_depth`` deep, never ``RecursionError``
    (which ``json`` raises on deep nesting, and ``str()`` of a deep value would raise later)."""
    try:
        if isinstance(text, (bytes, bytearray)):
            text = text.decode(json.detect_encoding(text))
        if _nesting_exceeds(text, max_depth):
            raise ValueError(f"the JSON nests deeper than {max_depth} levels")
        return json.loads(text)
    except RecursionError:
        raise ValueError("the JSON nests too deep to read") from None


def _count(value: Any) -> int:
    """A token count: a finite non-negative integer (an integral float too), anything else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value if 0 <= value <= _MAX_COUNT else 0
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 <= value <= _MAX_COUNT:
        return int(value)
    return 0


def _text(value: Any) -> str:
    """A string field of a reply as a safe ``str`` (None: empty; another JSON value: its JSON)."""
    if value is None:
        return ""
    return _safe(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _message_result(msg: dict[str, Any], finish_reason: Any, usage: Any) -> ChatResult:
    """A ``ChatResult`` from an assistant message, checked and made safe field by field."""
    raw_calls = msg.get("tool_calls")
    if raw_calls is None:
        raw_calls = []
    if not isinstance(raw_calls, list):
        raise _Malformed("tool_calls is not a list")
    calls = []
    for i, tc in enumerate(raw_calls):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict):
            continue
        args = fn.get("arguments")
        calls.append({"id": _text(tc.get("id")) or f"call_{i}", "type": "function",
                      "function": {"name": _text(fn.get("name")),
                                   "arguments": _safe(args) if isinstance(args, str) else _text(args) or "null"}})
    u = usage if isinstance(usage, dict) else {}
    pt, ct = _count(u.get("prompt_tokens")), _count(u.get("completion_tokens"))
    counts = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": _count(u.get("total_tokens")) or pt + ct}
    content = msg.get("content")
    return ChatResult(content=None if content is None else _safe(content if isinstance(content, str) else str(content)),
                      tool_calls=calls, finish_reason=None if finish_reason is None else _text(finish_reason),
                      usage=counts)


def parse_completion(raw: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> ChatResult:
    """A ``ChatResult`` from the body of a chat.completion, read defensively: JSON (UTF-8, or as
    ``json`` detects it) nested at most ``max_depth`` deep, an object with a first choice holding
    a message; tool calls without a function are skipped, non-string arguments given as their
    JSON; usage counts that are not finite non-negative integers count as 0; lone surrogates
    become U+FFFD. Anything else raises ``ValueError`` saying what is wrong (never another error)."""
    try:
        text = raw.decode(json.detect_encoding(raw)) if isinstance(raw, (bytes, bytearray)) else raw
        if _nesting_exceeds(text, max_depth):
            raise _Malformed(f"the JSON nests deeper than {max_depth} levels")
        data = json.loads(text)
        if not isinstance(data, dict):
            raise _Malformed("the response is not a JSON object")
        choices = data.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise _Malformed("the response has no choices")
        choice = choices[0]
        msg = choice.get("message")
        if not isinstance(msg, dict):
            raise _Malformed("the first choice has no message")
        result = _message_result(msg, choice.get("finish_reason"), data.get("usage"))
        result.id = _text(data.get("id"))
        return result
    except _Malformed:
        raise
    except RecursionError:
        raise _Malformed("the JSON nests too deep to read") from None
    except Exception as err:  # whatever the body held: a reply that cannot be read, said as such
        raise _Malformed(_safe(f"{type(err).__name__}: {err}")[:300]) from None


class _Body:
    """A reply body gathered chunk by chunk: over ``limit`` bytes (said by Content-Length or found
    while reading) it is malformed; past the deadline the attempt is over."""

    def __init__(self, response: Any, limit: int, deadline: float) -> None:
        self.limit, self.deadline = limit, deadline
        self.parts: list[bytes] = []
        self.size = 0
        try:
            declared = int(response.headers.get("content-length") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            raise _Malformed(f"the body is {declared} bytes, over the {limit} byte limit (max_response_bytes)")

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise _Malformed(f"the body is over the {self.limit} byte limit (max_response_bytes)")
        self.parts.append(chunk)
        if time.monotonic() >= self.deadline:
            raise _Expired()

    def data(self) -> bytes:
        return b"".join(self.parts)


def _json_default(value: Any) -> Any:
    """What JSON has no form for, as the openai client would send it (pydantic models, datetimes)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True, by_alias=True)
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return iso()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _budget_text(seconds: float) -> str:
    return f"the episode's budget of {seconds:g} s for model calls is spent (episode_budget_s)"


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


def add_usage(totals: dict[str, int], result: ChatResult) -> None:
    """Add one reply to running totals ``{"calls", "cache_hits", "prompt_tokens", "completion_tokens"}``
    (a cache hit counts as a hit, not a call, and adds no tokens)."""
    if result.cached:
        totals["cache_hits"] += 1
    else:
        totals["calls"] += 1
        totals["prompt_tokens"] += result.usage.get("prompt_tokens", 0)
        totals["completion_tokens"] += result.usage.get("completion_tokens", 0)
