"""One client layer for every LLM plug-in (user simulators, the judge, the agent policy).

``LLMConfig`` names an OpenAI-compatible chat-completions endpoint; ``LLMClient`` calls it with
the official ``openai`` package and adds what an RL loop needs around it:

- retries with exponential backoff and jitter (a seeded RNG) on 429, 5xx, timeouts and
  connection errors, honouring a small ``Retry-After``; no retry on other 4xx;
- an ``LLMError`` that says which endpoint, which model and what failed, once retries run out
  (never the API key);
- token counts per call (``ChatResult.usage``) and running totals (``LLMClient.usage``);
- a content-addressed cache: the sha256 of the canonical JSON of the request (model, messages,
  tools, temperature, seed, response format, ...) names a JSON file under ``cache_dir``; a hit
  returns the stored result with ``cached=True`` and makes no request, so re-scoring a saved
  transcript costs nothing;
- ``await client.achat(...)``: the same call for asyncio, over ``openai.AsyncOpenAI`` (aiohttp
  transport when installed), one HTTP session per event loop, closed by ``aclose_clients()``;
- ``LLMClient.shared(config)``: the process's one client per config and key, so the policies,
  users and judges built per episode share one connection pool.

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
import functools
import hashlib
import json
import os
import random
import tempfile
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ENV_BASE_URL", "ENV_MODEL", "ENV_CACHE_DIR", "LLMConfig", "ChatResult", "LLMError", "LLMClient",
           "aclose_clients", "add_usage", "canonical_json", "request_key"]

ENV_BASE_URL = "SERVICEGYM_BASE_URL"
ENV_MODEL = "SERVICEGYM_MODEL"
ENV_CACHE_DIR = "SERVICEGYM_CACHE_DIR"
# sent when the key variable is unset: local servers (vLLM, llama.cpp, Ollama) accept any key
NO_KEY = "EMPTY"
CACHE_VERSION = 1


class LLMConfig(BaseModel):
    """Where and how to call a chat-completions endpoint (no secret is ever held here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0)
    backoff_base_s: float = Field(0.5, ge=0)
    backoff_max_s: float = Field(20.0, ge=0)
    # a Retry-After up to this many seconds is honoured; a longer one falls back to the backoff
    retry_after_max_s: float = Field(30.0, ge=0)
    cache_dir: str | None = None
    # False: the endpoint has no native tool calling; the agent policy uses the text action path
    native_tools: bool = True

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


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def request_key(request: dict[str, Any]) -> str:
    """The cache key of a request body: sha256 of its canonical JSON (it never holds the key)."""
    return hashlib.sha256(canonical_json({"v": CACHE_VERSION, **request}).encode("utf-8")).hexdigest()


_RETRY_STATUS = frozenset({408, 409, 425, 429})


_SHARED: dict[tuple[int, str, str], LLMClient] = {}  # insertion order = least recently used first
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 32  # distinct configs kept; one used after that is rebuilt (its users keep theirs)


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
        import openai  # deferred: the scripted path never pays for it

        self._openai = openai
        self._client = openai.OpenAI(base_url=self.config.base_url, api_key=self._key,
                                     timeout=self.config.timeout_s, max_retries=0)
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
            data = json.loads(path.read_text(encoding="utf-8"))["result"]
            return ChatResult(content=data.get("content"), tool_calls=list(data.get("tool_calls") or []),
                              finish_reason=data.get("finish_reason"), usage=dict(data.get("usage") or {}),
                              cached=True, attempts=0)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged entry is a miss; the fresh result overwrites it

    def _cache_put(self, path: Path | None, key: str, result: ChatResult) -> None:
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"version": CACHE_VERSION, "key": key, "model": self.config.model, "result": result.to_json()}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(canonical_json(payload))
        os.replace(tmp, path)  # atomic: concurrent writers of one key leave one whole file

    @staticmethod
    def _result(raw: bytes) -> ChatResult:
        """A ``ChatResult`` from the response body (the JSON of a chat.completion)."""
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("the response is not a JSON object")
        choices = data.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise ValueError("the response has no choices")
        choice = choices[0]
        msg = choice.get("message")
        if not isinstance(msg, dict):
            raise ValueError("the first choice has no message")
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict):
                continue
            args = fn.get("arguments")
            calls.append({"id": tc.get("id") or f"call_{i}", "type": "function",
                          "function": {"name": fn.get("name") or "",
                                       "arguments": args if isinstance(args, str) else json.dumps(args)}})
        u = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        pt = int(u.get("prompt_tokens") or 0)
        ct = int(u.get("completion_tokens") or 0)
        usage = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": int(u.get("total_tokens") or pt + ct)}
        content = msg.get("content")
        return ChatResult(content=content if isinstance(content, str) or content is None else str(content),
                          tool_calls=calls, finish_reason=choice.get("finish_reason"), usage=usage)

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
        """The body, its cache key and path, and the cached result if there is one."""
        body = self.request_body(*args, **kwargs)
        key = request_key(body) if self._cache is not None else ""
        path = self._cache_path(key)
        hit = self._cache_get(path)
        if hit is not None:
            with self._lock:
                self.usage["cache_hits"] += 1
        return body, key, path, hit

    def _failed(self, err: Exception, attempts: int) -> float:
        """What a failed attempt means: the seconds to wait before the next one, or ``LLMError``
        raised when the failure is final (a 4xx other than 408/409/425/429, or retries spent)."""
        o = self._openai
        c = self.config
        retry_after = None
        if isinstance(err, o.APITimeoutError):  # a subclass of APIConnectionError: first
            last, status, kind = f"no reply within the {c.timeout_s:g} s timeout", None, "timeout"
        elif isinstance(err, o.APIConnectionError):
            last, status, kind = f"connection failed ({err.message})", None, "connection"
        elif isinstance(err, o.APIStatusError):
            status, kind = err.status_code, "status"
            last = f"HTTP {err.status_code}: {_error_text(err)}"
            if err.status_code not in _RETRY_STATUS and err.status_code < 500:
                raise self._error(last, attempts, status, kind) from None
            retry_after = self._retry_after(err)
        elif isinstance(err, o.APIResponseValidationError):
            last, status, kind = f"unreadable response ({err.message})", None, "malformed"
        elif isinstance(err, (ValueError, TypeError, AttributeError)):
            last, status, kind = f"unreadable response ({err})", None, "malformed"
        else:
            raise err
        if attempts > c.max_retries:
            raise self._error(last, attempts, status, kind) from None
        return self._delay(attempts, retry_after)

    def _done(self, result: ChatResult, attempts: int, path: Path | None, key: str) -> ChatResult:
        result.attempts = attempts
        with self._lock:
            self.usage["calls"] += 1
            self.usage["prompt_tokens"] += result.usage["prompt_tokens"]
            self.usage["completion_tokens"] += result.usage["completion_tokens"]
        self._cache_put(path, key, result)
        return result

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             tool_choice: Any = None, response_format: dict[str, Any] | None = None, **extra: Any) -> ChatResult:
        """One chat completion; raises ``LLMError`` when the endpoint is unusable."""
        body, key, path, hit = self._begin((messages, tools, tool_choice, response_format), extra)
        if hit is not None:
            return hit
        attempts = 0
        while True:
            attempts += 1
            try:
                # the client's documented generic POST, the body sent as built and the reply read as
                # bytes: the typed ``chat.completions.create`` re-walks every message and schema and
                # builds pydantic models of the reply, several ms a call that a rollout loop pays 64-fold
                result = self._result(self._client.post("/chat/completions", body=body, cast_to=bytes))
            except Exception as err:
                self.sleep(self._failed(err, attempts))
                continue
            return self._done(result, attempts, path, key)

    async def achat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                    tool_choice: Any = None, response_format: dict[str, Any] | None = None,
                    **extra: Any) -> ChatResult:
        """``chat`` for asyncio: the same request, retries, cache, usage and errors, over an
        ``openai.AsyncOpenAI`` of the running event loop (on aiohttp when it is installed, which
        the openai client recommends for concurrency). Many episodes of one event loop then wait
        on the endpoint together without a thread each."""
        body, key, path, hit = self._begin((messages, tools, tool_choice, response_format), extra)
        if hit is not None:
            return hit
        client = self._async_client()
        attempts = 0
        while True:
            attempts += 1
            try:
                result = self._result(await client.post("/chat/completions", body=body, cast_to=bytes))
            except Exception as err:
                await self.asleep(self._failed(err, attempts))
                continue
            return self._done(result, attempts, path, key)

    def _async_client(self) -> Any:
        """The ``AsyncOpenAI`` of the running loop (an HTTP session belongs to one loop)."""
        loop = asyncio.get_running_loop()
        with _LOOP_LOCK:
            clients = _LOOP_CLIENTS.setdefault(loop, {})
            client = clients.get(self)
            if client is None:
                kwargs: dict[str, Any] = {}
                if _has_aiohttp() and hasattr(self._openai, "DefaultAioHttpClient"):
                    kwargs["http_client"] = self._openai.DefaultAioHttpClient(timeout=self.config.timeout_s)
                client = self._openai.AsyncOpenAI(base_url=self.config.base_url, api_key=self._key,
                                                  timeout=self.config.timeout_s, max_retries=0, **kwargs)
                clients[self] = client
            return client

    def check(self) -> list[str]:
        """The endpoint's model ids (``GET /models``); ``LLMError`` when unreachable or when the
        configured model is not among them."""
        try:
            ids = [m.id for m in self._client.models.list()]
        except self._openai.APIStatusError as err:
            raise self._error(f"GET /models: HTTP {err.status_code}: {_error_text(err)}", 1, err.status_code, "status") from None
        except self._openai.APIError as err:
            raise self._error(f"GET /models: {err.message}", 1, None, "connection") from None
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
    """Close the HTTP sessions that ``LLMClient.achat`` opened on the running loop (call it before
    the loop ends, as ``servicegym.envs.running.rollouts`` does; otherwise aiohttp warns of unclosed sessions)."""
    with _LOOP_LOCK:
        clients = _LOOP_CLIENTS.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.close()


def _error_text(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(getattr(err, "message", err))[:300]


def add_usage(totals: dict[str, int], result: ChatResult) -> None:
    """Add one reply to running totals ``{"calls", "cache_hits", "prompt_tokens", "completion_tokens"}``
    (a cache hit counts as a hit, not a call, and adds no tokens)."""
    if result.cached:
        totals["cache_hits"] += 1
    else:
        totals["calls"] += 1
        totals["prompt_tokens"] += result.usage.get("prompt_tokens", 0)
        totals["completion_tokens"] += result.usage.get("completion_tokens", 0)
