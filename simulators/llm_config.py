"""What a call to a chat-completions endpoint is made with and bounded by (for ``simulators/llm.py``).

``LLMConfig`` (the endpoint, the model and the call's limits, filled in from ``SERVICEGYM_BASE_URL``,
``SERVICEGYM_MODEL`` and ``SERVICEGYM_CACHE_DIR``; it never holds a secret), ``LLMError`` (what a call
that gets no usable reply raises), ``EpisodeBudget`` (the seconds of model calls one episode may
spend, and ``_budget_text``, what a spent one says) and the cache key of a request
(``canonical_json``, ``request_key``, ``CACHE_VERSION``). Import the public names from
``servicegym.simulators.llm``, which re-exports them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_BASE_URL = "SERVICEGYM_BASE_URL"
ENV_MODEL = "SERVICEGYM_MODEL"
ENV_CACHE_DIR = "SERVICEGYM_CACHE_DIR"
CACHE_VERSION = 2  # 2: the key holds the endpoint too


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


def _budget_text(seconds: float) -> str:
    return f"the episode's budget of {seconds:g} s for model calls is spent (episode_budget_s)"
