"""Text from outside made safe once, at the edge: agent actions, model replies, task files.

Python strings may hold lone UTF-16 surrogates (``"\\ud83d"``: valid JSON in ASCII, common in
garbled model output), which no UTF-8 writer accepts; one such character would make a transcript,
a rollout record or a cache entry fail to encode. ``scrub`` replaces each lone surrogate with
U+FFFD (a well-formed surrogate pair becomes the character it encodes); everything else is kept.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
# a JSON escape of a UTF-16 surrogate: decoding it may leave a lone surrogate in a string
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD; the same object when it has none
    (an ASCII or UTF-8-encodable string costs one pass in C)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def scrub_json(value: Any, depth: int = 0, max_depth: int = 64) -> Any:
    """``scrub`` applied to every string (keys too) of a decoded JSON value; values nested deeper
    than ``max_depth`` are replaced by ``None`` (JSON from outside is bounded, never recursed into
    without limit)."""
    if isinstance(value, str):
        return scrub(value)
    if depth >= max_depth:
        return None
    if isinstance(value, dict):
        return {scrub(k) if isinstance(k, str) else k: scrub_json(v, depth + 1, max_depth) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_json(v, depth + 1, max_depth) for v in value]
    return value


def scrub_decoded(raw: str, value: Any) -> Any:
    """``value``, decoded from the JSON text ``raw``, with its strings scrubbed when ``raw`` holds a
    surrogate escape (``"\\ud83d"``); untouched otherwise (one fast scan of ``raw``)."""
    return scrub_json(value) if has_surrogate_escape(raw) else value


def has_surrogate_escape(raw: str) -> bool:
    """Whether JSON text ``raw`` holds a surrogate escape such as ``"\\ud83d"``."""
    return "\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None


# orjson reads an integer beyond 64 bits as a float (json: the exact int); a float this wide may be one
_WIDE = float(1 << 63)


def wide_number(value: dict[str, Any] | list[Any]) -> bool:
    """Whether ``value`` (orjson's reading of some JSON) holds a float of magnitude 2**63 or more (or
    a NaN), which may be an integer json reads exactly: that JSON is then read by json instead (the
    step parser, the OpenEnv protocol)."""
    for v in value.values() if type(value) is dict else value:
        t = type(v)
        if t is float:
            if not -_WIDE < v < _WIDE:
                return True
        elif (t is dict or t is list) and wide_number(v):
            return True
    return False
