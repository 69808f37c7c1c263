"""Reading an endpoint's replies defensively (for ``simulators/llm.py``).

``ChatResult`` (one completion), ``parse_completion`` (a chat.completion body as a ``ChatResult``,
or a ``ValueError`` (``_Malformed``) saying what is wrong: JSON nested deeper than
``MAX_JSON_DEPTH``, no choice or message, fields of the wrong type; usage counts that are not
finite non-negative integers count as 0, lone surrogates become U+FFFD), ``loads_json`` (JSON a
model wrote, read within the same depth), ``_Body`` (a reply body gathered within
``max_response_bytes`` and the call's deadline), ``_error_text`` (an error reply's message,
bounded) and ``add_usage`` (a reply added to running totals). Import the public names from
``servicegym.simulators.llm``, which re-exports them.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from servicegym.simulators.llm_http import DeadlineExpired
from servicegym.world_state.text import scrub

# a reply nested deeper is malformed: a chat completion nests about 8 deep, and Python's json recurses
MAX_JSON_DEPTH = 64
_MAX_COUNT = 2**53  # a token count above this is not one


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


def add_usage(totals: dict[str, int], result: ChatResult) -> None:
    """Add one reply to running totals ``{"calls", "cache_hits", "prompt_tokens", "completion_tokens"}``
    (a cache hit counts as a hit, not a call, and adds no tokens)."""
    if result.cached:
        totals["cache_hits"] += 1
    else:
        totals["calls"] += 1
        totals["prompt_tokens"] += result.usage.get("prompt_tokens", 0)
        totals["completion_tokens"] += result.usage.get("completion_tokens", 0)
