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
  transcript costs nothing.

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

import hashlib
import json
import os
import random
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ENV_BASE_URL", "ENV_MODEL", "ENV_CACHE_DIR", "LLMConfig", "ChatResult", "LLMError", "LLMClient",
           "canonical_json", "request_key"]

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


class LLMClient:
    """Calls one endpoint; thread-safe (one client may serve many rollout threads)."""

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
        from openai.types.chat import ChatCompletion

        self._completion_type = ChatCompletion
        self.sleep = time.sleep  # the backoff wait (tests record it instead)

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
    def _result(resp: Any) -> ChatResult:
        choices = getattr(resp, "choices", None)
        if not choices:
            raise ValueError("the response has no choices")
        choice = choices[0]
        msg = choice.message
        calls = []
        for i, tc in enumerate(getattr(msg, "tool_calls", None) or []):
            fn = getattr(tc, "function", None)
            if fn is None:
                continue
            args = fn.arguments
            calls.append({"id": tc.id or f"call_{i}", "type": "function",
                          "function": {"name": fn.name or "", "arguments": args if isinstance(args, str) else json.dumps(args)}})
        u = getattr(resp, "usage", None)
        pt = int(getattr(u, "prompt_tokens", 0) or 0)
        ct = int(getattr(u, "completion_tokens", 0) or 0)
        usage = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": int(getattr(u, "total_tokens", 0) or pt + ct)}
        return ChatResult(content=msg.content, tool_calls=calls, finish_reason=choice.finish_reason, usage=usage)

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

    def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
             tool_choice: Any = None, response_format: dict[str, Any] | None = None, **extra: Any) -> ChatResult:
        """One chat completion; raises ``LLMError`` when the endpoint is unusable."""
        body = self.request_body(messages, tools, tool_choice, response_format, **extra)
        key = request_key(body) if self._cache is not None else ""
        path = self._cache_path(key)
        hit = self._cache_get(path)
        if hit is not None:
            with self._lock:
                self.usage["cache_hits"] += 1
            return hit
        o = self._openai
        c = self.config
        attempts = 0
        last = ""
        status: int | None = None
        kind = ""
        while True:
            attempts += 1
            retry_after = None
            try:
                # the client's documented generic POST: the body goes out as built (the typed
                # ``chat.completions.create`` re-walks every message and schema, ~8 ms a call)
                resp = self._client.post("/chat/completions", body=body, cast_to=self._completion_type)
                result = self._result(resp)
            except o.APITimeoutError:
                last, status, kind = f"no reply within the {c.timeout_s:g} s timeout", None, "timeout"
            except o.APIConnectionError as err:
                last, status, kind = f"connection failed ({err.message})", None, "connection"
            except o.APIStatusError as err:
                status, kind = err.status_code, "status"
                last = f"HTTP {err.status_code}: {_error_text(err)}"
                if err.status_code not in _RETRY_STATUS and err.status_code < 500:
                    raise self._error(last, attempts, status, kind) from None
                retry_after = self._retry_after(err)
            except o.APIResponseValidationError as err:
                last, status, kind = f"unreadable response ({err.message})", None, "malformed"
            except (ValueError, TypeError, AttributeError) as err:
                last, status, kind = f"unreadable response ({err})", None, "malformed"
            else:
                result.attempts = attempts
                with self._lock:
                    self.usage["calls"] += 1
                    self.usage["prompt_tokens"] += result.usage["prompt_tokens"]
                    self.usage["completion_tokens"] += result.usage["completion_tokens"]
                self._cache_put(path, key, result)
                return result
            if attempts > c.max_retries:
                raise self._error(last, attempts, status, kind)
            self.sleep(self._delay(attempts, retry_after))

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
