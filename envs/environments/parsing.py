"""Action parsing: the raw assistant completion becomes tool calls or a message to the user.

Accepted forms (see DESIGN.md):
- JSON ``{"name": ..., "arguments": {...}}`` or a list of them;
- an OpenAI assistant message: JSON with ``tool_calls`` (arguments an object or a JSON string,
  even a doubly encoded one) and optional ``content``;
- ``<tool_call>{...}</tool_call>`` blocks, several allowed, inside any surrounding prose;
- a fenced ```json block holding a call, inside prose;
- anything else is a message to the user.

Parsing never raises: a call it cannot read becomes an ``errors`` entry that says what was wrong
and shows the accepted form.

Limits, checked before any parsing work (the contract's action limits): an action holds at most
``MAX_ACTION_CHARS`` characters (the action space's ``max_length``) and at most
``MAX_TOOL_CALLS`` tool calls; an action over a limit runs nothing and gets one short error. Text
is made safe here, once: lone UTF-16 surrogates in the action, or decoded from JSON escapes such
as ``"\\ud83d"``, become U+FFFD (``world_state.text.scrub``), so transcripts and records always
encode.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from orjson import JSONDecodeError as _OrjsonError
from orjson import loads as _orjson_loads

from servicegym.world_state.text import has_surrogate_escape, scrub, scrub_json, wide_number

TOOL_CALL_FORM = '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARG": "VALUE"}}</tool_call>'
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S)
_OBJECT_START = re.compile(r'\{\s*"')
# embedded-call scanning gives up after this many undecodable candidates: each failed attempt costs
# O(len(text)), and a degenerate completion ("{"a":{"a":...") must not cost seconds
MAX_FAILED_DECODES = 64
# lists and ``tool_calls`` wrappers nest at most this deep; deeper JSON is refused, not recursed into
MAX_NESTING = 4
MAX_ACTION_CHARS = 1 << 20  # one action (= the action space's max_length)
MAX_TOOL_CALLS = 32  # tool calls in one action


class ToolCall(NamedTuple):
    """One parsed call (immutable; a named tuple: every tool step makes one)."""

    name: str
    arguments: Any
    call_id: str = ""


_new_tuple = tuple.__new__


@dataclass(slots=True, init=False)
class ParsedAction:
    tool_calls: list[ToolCall]
    message: str
    errors: list[str]

    def __init__(self, tool_calls: list[ToolCall] | None = None, message: str = "", errors: list[str] | None = None) -> None:
        self.tool_calls = [] if tool_calls is None else tool_calls
        self.message = message
        self.errors = [] if errors is None else errors

    @property
    def is_message(self) -> bool:
        return not self.tool_calls and not self.errors


def _decode_arguments(raw: Any) -> Any:
    # models sometimes encode the arguments object once too often
    for _ in range(3):
        if not isinstance(raw, str):
            break
        text = raw.strip()
        if text == "":
            return {}
        try:
            raw = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return raw
    return {} if raw is None else raw


def _as_call(obj: Any) -> ToolCall | str:
    """A ToolCall from one call object, or an error message."""
    if not isinstance(obj, dict):
        return f"a tool call must be a JSON object, got {type(obj).__name__}"
    call_id = obj.get("id") if isinstance(obj.get("id"), str) else ""
    fn = obj.get("function") if isinstance(obj.get("function"), dict) else obj
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        return 'a tool call needs a string "name"'
    if "arguments" in fn:
        args = fn["arguments"]
    elif "parameters" in fn:
        args = fn["parameters"]
    else:
        args = {}
    return ToolCall(name.strip(), _decode_arguments(args), call_id)


def _looks_like_call(obj: Any, depth: int = 0) -> bool:
    if depth > MAX_NESTING:
        return False
    if isinstance(obj, dict):
        if "tool_calls" in obj:
            return True
        fn = obj.get("function") if isinstance(obj.get("function"), dict) else obj
        return isinstance(fn.get("name"), str) and ("arguments" in fn or "parameters" in fn)
    return isinstance(obj, list) and bool(obj) and all(_looks_like_call(o, depth + 1) for o in obj)


def _calls_from_json(obj: Any, out: ParsedAction, depth: int = 0) -> None:
    if depth > MAX_NESTING:
        out.errors.append(f"tool calls are nested too deeply. Use the form {TOOL_CALL_FORM}")
        return
    if isinstance(obj, list):
        for item in obj:
            _calls_from_json(item, out, depth + 1)
        return
    if isinstance(obj, dict) and "tool_calls" in obj:
        content = obj.get("content")
        if isinstance(content, str) and content.strip():
            out.message = (out.message + "\n" + content).strip()
        calls = obj.get("tool_calls") or []
        if not isinstance(calls, list):
            out.errors.append('"tool_calls" must be a list of calls')
            return
        for item in calls:
            _calls_from_json(item, out, depth + 1)
        return
    call = _as_call(obj)
    if isinstance(call, str):
        out.errors.append(call)
    else:
        out.tool_calls.append(call)


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return False, None


_scan_once = json.JSONDecoder().scan_once  # json.loads' own scanner, without its two regex passes
def _fast_pair(action: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of the common cases, one ``{"name": str, "arguments": {...}}``
    object, bare or alone in a ``<tool_call>`` block (the form the system prompts teach), without
    the general path (which gives the same result, and takes whatever this declines, e.g. blanks
    after the object); None otherwise."""
    if action.startswith("<tool_call>") and action.endswith("</tool_call>") and action.count("<tool_call>") == 1:
        action = action[11:-12].strip()
    if not action.startswith('{"name"'):
        return None
    obj = None
    if action[-1] == "}":
        # orjson reads the same JSON as json (about 3x faster), but for what it refuses (NaN,
        # Infinity, 1E400, a lone surrogate escape) and integers beyond 64 bits: both then go to
        # json's scanner below, so the result is json's in every case
        try:
            obj = _orjson_loads(action)
        except _OrjsonError:
            obj = None
        else:
            args = obj.get("arguments") if type(obj) is dict else None
            if type(args) is dict and args and wide_number(args):
                obj = None
    if obj is None:
        try:
            obj, end = _scan_once(action, 0)
        except (StopIteration, json.JSONDecodeError, RecursionError, ValueError):
            return None
        if end != len(action):
            return None
    if type(obj) is not dict or len(obj) != 2:
        return None
    name, args = obj.get("name"), obj.get("arguments")
    # a name with no blanks around it and not empty (then not blank either)
    if type(name) is not str or type(args) is not dict or not name or name != name.strip():
        return None
    return name, args


def _fast_call(action: str) -> ParsedAction | None:
    """``_fast_pair`` as a parsed action (one call, no call id), or None."""
    pair = _fast_pair(action)
    return None if pair is None else ParsedAction([_new_tuple(ToolCall, (*pair, ""))])


def single_call(action: str) -> tuple[str, str, dict[str, Any]] | None:
    """``(text, name, arguments)`` when ``parse_action(action)`` (``action`` a string) is exactly
    one call without a call id, no message and no error, read by the fast path: ``text`` is the
    action as ``scrub`` leaves it (what the transcript keeps); None for every other action (the
    caller then parses it with ``parse_action``). A step's common case, without the parsed
    action's objects."""
    if len(action) > MAX_ACTION_CHARS:
        return None
    if not action.isascii():  # (``scrub`` returns an ASCII text as it is)
        action = scrub(action)
    pair = _fast_pair(action)
    if pair is None or "\\u" in action:
        return None
    return action, pair[0], pair[1]


def parse_action(action: Any) -> ParsedAction:
    """Split one assistant completion into tool calls, a message and parse errors."""
    if type(action) is str:
        if len(action) > MAX_ACTION_CHARS:
            return ParsedAction(errors=[f"the action is {len(action)} characters; the limit is {MAX_ACTION_CHARS}. "
                                        "Send shorter messages, or fewer or smaller tool calls"])
        action = scrub(action)
        fast = _fast_call(action)
        if fast is not None and "\\u" not in action:
            return fast  # one call: no limit or emptiness check applies
        out = fast if fast is not None else _parse(action)
        if has_surrogate_escape(action):
            out.tool_calls = [ToolCall(scrub(c.name), scrub_json(c.arguments), scrub(c.call_id)) for c in out.tool_calls]
            out.message = scrub(out.message)
    else:
        out = _parse(action)
    if len(out.tool_calls) > MAX_TOOL_CALLS:
        return ParsedAction(errors=[f"the action holds {len(out.tool_calls)} tool calls; at most {MAX_TOOL_CALLS} "
                                    "run in one action, so none was run. Send them over several actions"])
    if not out.tool_calls and not out.errors and not out.message.strip():
        # e.g. {"tool_calls": []} or <tool_call>[]</tool_call>: nothing to run and nothing to say
        out.errors.append(f"the action holds no tool call and no message. Call a tool as {TOOL_CALL_FORM}")
    return out


def _parse(action: Any) -> ParsedAction:
    out = ParsedAction()
    if not isinstance(action, str):
        out.errors.append(f"the action must be a string (the raw assistant completion), got {type(action).__name__}")
        return out
    text = action.strip()
    if not text:
        out.errors.append(f"empty action: reply to the user with text, or call a tool as {TOOL_CALL_FORM}")
        return out

    broken_json = False
    if text[0] in "{[":
        ok, obj = _loads(text)
        if ok:
            if isinstance(obj, dict) and obj.get("role") == "assistant" and "tool_calls" not in obj:
                content = obj.get("content")
                out.message = content if isinstance(content, str) else ""
                if not out.message.strip():
                    out.errors.append("assistant message has no content and no tool_calls")
                return out
            named = lambda o: isinstance(o, dict) and ("name" in o or "function" in o)  # noqa: E731
            if _looks_like_call(obj) or named(obj) or (isinstance(obj, list) and obj and all(map(named, obj))):
                _calls_from_json(obj, out)
                return out
        elif '"name"' in text or "tool_calls" in text:
            broken_json = True

    # single-character probes (memchr) first: a long plain-text message costs a few fast scans
    if "<" in text and "<tool_call>" in text:
        prose = _TAG.sub("", text).strip()
        for block in _TAG.findall(text):
            ok, obj = _loads(block.strip())
            if not ok:
                out.errors.append(f"the <tool_call> block is not valid JSON. Use the form {TOOL_CALL_FORM}")
                continue
            _calls_from_json(obj, out)
        out.message = prose
        return out

    blocks = _fenced_json(text) if "`" in text else []
    found = False
    for _, _, body in blocks:
        ok, obj = _loads(body)
        if ok and _looks_like_call(obj):
            _calls_from_json(obj, out)
            found = True
    if found:
        out.message = _cut(text, [(a, b) for a, b, _ in blocks]).strip()
        return out

    if '"' in text and '"name"' in text:
        # bare call objects embedded in prose, or several back to back
        spans = _embedded_calls(text, out)
        if spans:
            out.message = _cut(text, spans).strip()
            return out

    if broken_json:
        out.errors.append(f"the tool call is not valid JSON. Use the form {TOOL_CALL_FORM}")
        return out
    out.message = text
    return out


def _fenced_json(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, body)`` of each ``` fenced block whose body is a JSON object or list.

    Fences pair up in order, so the scan is linear (a lazy regex over unclosed fences is not).
    """
    marks = []
    i = text.find("```")
    while i >= 0:
        marks.append(i)
        i = text.find("```", i + 3)
    blocks = []
    for a, b in zip(marks[0::2], marks[1::2]):
        body = text[a + 3 : b]
        if body.startswith("json"):
            body = body[4:]
        body = body.strip()
        if body[:1] in ("{", "[") and body[-1:] in ("}", "]"):
            blocks.append((a, b + 3, body))
    return blocks


def _embedded_calls(text: str, out: ParsedAction) -> list[tuple[int, int]]:
    """Decode call objects found inside ``text`` into ``out``; return their spans."""
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    failures = 0
    m = _OBJECT_START.search(text)
    while m is not None and failures < MAX_FAILED_DECODES:
        pos = m.start()
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError, ValueError):
            failures += 1
            m = _OBJECT_START.search(text, pos + 1)
            continue
        if _looks_like_call(obj):
            _calls_from_json(obj, out)
            spans.append((pos, end))
            m = _OBJECT_START.search(text, end)
        else:
            m = _OBJECT_START.search(text, pos + 1)
    return spans


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    kept, last = [], 0
    for a, b in spans:
        kept.append(text[last:a])
        last = b
    kept.append(text[last:])
    return "".join(kept)
