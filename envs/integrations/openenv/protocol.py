"""The wire side of the OpenEnv server (``servicegym.envs.integrations.openenv.server``), in one
place: the JSON codec every message goes through, the checks a message passes before anything
parses it (size, nesting depth, a JSON object), the error frames and the idle close reason.

The codec is orjson (a core dependency: about 5x faster than the standard library on the
protocol's messages), the standard library for what orjson refuses to write, with the same
results: non-finite floats as ``null``, anything else that JSON has no form for as its ``str``,
non-string keys as strings; and json reads what orjson would read otherwise (an integer beyond
64 bits, which orjson reads as a float: ``loads``).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

import orjson as _orjson

from servicegym.world_state.text import wide_number

__all__ = ["MAX_JSON_DEPTH", "dumps", "error_frame", "idle_close_reason", "jsonable", "loads", "nests_deeper",
           "screen", "too_deep_text"]

# a message or body nesting arrays and objects deeper is refused unread: Python's json (and what
# reads its result) recurses per level, and a 100,000-deep message would end a session with a
# RecursionError; the protocol's messages nest about 10 deep, tool arguments a few more
MAX_JSON_DEPTH = 128



def _std_default(value: Any) -> Any:
    return str(value)


def _finite(value: Any) -> Any:
    """``value`` with its non-finite floats as None (what JSON encoders in the wild read)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else json.dumps(k) if isinstance(k, (bool, type(None))) else str(k)):
                _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _std_dumps(obj: Any) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, default=_std_default)
    except ValueError:  # a non-finite float
        return json.dumps(_finite(obj), ensure_ascii=False, default=_std_default)


_OPTS = _orjson.OPT_NON_STR_KEYS


def dumps(obj: Any) -> str:
    """``obj`` as JSON text (see the module docstring)."""
    try:
        return _orjson.dumps(obj, default=_std_default, option=_OPTS).decode()
    except (TypeError, _orjson.JSONEncodeError):  # an int over 64 bits, a nesting orjson refuses
        return _std_dumps(obj)


def loads(text: str | bytes) -> Any:
    """The value of JSON ``text``; ``ValueError`` when it is not JSON. An integer beyond 64 bits
    (an id or amount in a tool call's arguments) is read exactly, as the step parser reads the same
    call sent as text: orjson would read it as a float, so such text is read by json instead."""
    value = _orjson.loads(text)
    return json.loads(text) if wide_number([value]) else value


def jsonable(value: Any) -> Any:
    """``value`` as its JSON round trip: plain dicts, lists, strings, numbers (see ``dumps``)."""
    return loads(dumps(value))


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nests_deeper(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON ``text`` nests arrays and objects deeper than ``limit`` (brackets inside
    strings do not count); linear, in C but for one pass over the brackets, and nothing at all
    when there are too few brackets to get there. Malformed text is not judged here."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0) > limit


def too_deep_text() -> str:
    return f"the message nests arrays and objects deeper than {MAX_JSON_DEPTH} levels; nothing was run"


def idle_close_reason(idle_timeout_s: float) -> str:
    """The reason of the close frame an idle WebSocket session gets (at most 123 bytes)."""
    return f"idle timeout: no message for {idle_timeout_s:g} s"


def error_frame(message: str, code: str, **extra: Any) -> str:
    """An error reply as openenv's ``WSErrorResponse`` encodes: ``{"type": "error", "data":
    {"message", "code", ...}}``."""
    return dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


def screen(message: dict[str, Any], max_bytes: int) -> str | None:
    """The error frame for a WebSocket frame (an ASGI ``websocket.receive``) that is not run: a
    binary frame, one over ``max_bytes``, one nesting deeper than ``MAX_JSON_DEPTH``, one that is
    not a JSON object; None for a frame to run."""
    text = message.get("text")
    if text is None:
        return error_frame("binary frames are not read: send each message as a JSON text frame", "INVALID_JSON")
    if len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        size = len(text.encode("utf-8", "surrogatepass"))
        return error_frame(f"message of {size} bytes is over the server's limit of {max_bytes} bytes; nothing was run",
                           "PAYLOAD_TOO_LARGE")
    if nests_deeper(text):
        return error_frame(too_deep_text(), "INVALID_JSON")
    if not text.lstrip().startswith("{"):
        return error_frame('a message is a JSON object: {"type": "reset" | "step" | "state" | "close" | "mcp", '
                           '"data": ...}', "INVALID_JSON")
    return None
