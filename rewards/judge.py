"""The sliding-window rubric judge (VitaBench's evaluator), with an LLM or any other judge function.

VitaBench scores a trajectory against natural-language rubric items by cutting it into windows
of ``window`` messages, consecutive windows overlapping by ``overlap`` messages, and asking a
judge one window at a time with the items' current states. This module owns that loop once:

Windows (``window_bounds``)
    Over ``n`` messages (the conversation without the system prompt), with
    ``step = window - overlap``:

    - ``n == 0``: no window (nothing to judge; every item stays unmet);
    - ``n <= window``: one window ``[0, n)``;
    - otherwise windows ``[i*step, min(i*step + window, n))`` for ``i = 0, 1, ...`` up to and
      including the first whose end reaches ``n``; that is ``ceil((n - window) / step) + 1``
      windows, each ``window`` long except perhaps the last, each starting ``overlap`` messages
      before the previous one ends.

    These are VitaBench's defaults (10 and 2) and its arithmetic; ``window < 1`` or
    ``overlap`` outside ``[0, window)`` is a ``ValueError`` (VitaBench loops forever on
    ``overlap >= window``).

The state vector
    One boolean per item, all ``False`` at the start. Per window the judge gives every item a
    verdict: ``"met"`` (this window shows it satisfied; the item turns true),
    ``"overturned"`` (it was met, and in this window the agent undid it: an order cancelled, a
    promise contradicted; the item turns false) or ``"unchanged"`` (nothing here changes it).
    An item the judge leaves out, or gives any other value, is unchanged and the problem is
    logged; so an item met once stays met unless the judge explicitly reports it overturned.

The result (``JudgeResult``)
    ``success``: every item true at the end (all or nothing, and at least one item, as
    VitaBench; also ``False`` when the judge failed mid-way), ``fraction``: the share of items
    true, ``states`` per item, and ``windows``: one log entry per window (bounds, verdicts,
    reasons, problems, calls). ``components()`` flattens it into ``info["score"]`` keys:
    ``judge_success``, ``judge_fraction``, ``judge_items``, ``judge_windows``,
    ``judge_calls`` and ``judge/<item key>``.

Judge functions
    ``judge_fn(window_messages, items, state) -> verdicts``: ``window_messages`` is a
    ``WindowMessages`` (a list of OpenAI-format messages that also carries ``start``, ``index``,
    ``total`` and a ``context`` dict); ``items`` the ``JudgeItem``s; ``state`` the current
    ``{key: bool}``. It returns a mapping ``key -> verdict`` (a string, or a dict with
    ``"verdict"`` and ``"reason"``), or a ``WindowVerdicts``. Tests use scripted functions;
    ``LLMJudgeFn(client)`` asks a chat model with the project's own prompt and a JSON reply
    (schema below), retrying once with a correction when the reply is malformed and then
    treating every item as unchanged with the problem logged. ``LLMError`` (the endpoint is
    unusable) stops the judgement: the result records ``error`` and is not a success.

The JSON reply ``LLMJudgeFn`` asks for::

    {"items": [{"id": "<item key>", "verdict": "met" | "overturned" | "unchanged",
                "reason": "<one sentence>"}, ...]}

Items of a task (``judge_items``)
    A VitaBench task's ``nl_rubric`` strings (``rubric_0``, ``rubric_1``, ... in the file's
    order), else the task's code rubric items of weight > 0, keyed by name and worded by their
    description. For the latter the code checks of the same items are known, and
    ``judge_episode`` reports the judge's agreement with them (``judge_agreement`` and Cohen's
    kappa, ``judge_kappa``).

One item at a time (``judge_each``, ``per_item=True``)
    The env's own LLM judge (``judge="llm"``) asks about a natural-language task's unread items one
    by one: each alone, in the window of ``window`` consecutive messages that shares the most of
    its terms (``relevant_window``; ties: the latest), with the answer ``met`` or not. The judge
    never sees the other items, nor the rest of the conversation. A ``SlidingWindowJudge`` built
    without ``per_item`` (the default) keeps VitaBench's sliding windows for every item at once.

Code-checked items (``split_items``)
    A natural-language item the loader compiled into a code check (a rubric item with its
    ``nl_index``: ``nl_time_<k>``, ``nl_address_<k>``, ...) keeps its code verdict: only the
    others go to the judge. The episode succeeds when the judge finds every item it was given met
    and every code-checked item holds; ``judge/rubric_<k>`` is the judge's verdict or the code's,
    ``judge_fraction`` the share of all the task's items met, ``judge_items`` their number,
    ``judge_llm_items`` and ``judge_code_items`` how many went to each. A task whose items are all
    code-checked asks the judge nothing. Items about the end state as a whole stay with the code
    under the env's ``scoring``: the episode also needs no unrequested write, and under
    ``scoring="strict"`` the gold end state; ``success_rubric`` and ``success_strict`` give both
    modes' verdicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from servicegym.rewards.metrics import cohen_kappa
from servicegym.rewards.rubric import SCORING_MODES, counts_in

Verdict = Literal["met", "overturned", "unchanged"]
VERDICTS: tuple[str, ...] = ("met", "overturned", "unchanged")
DEFAULT_WINDOW = 10
DEFAULT_OVERLAP = 2


# ----- windows --------------------------------------------------------------------------------
def window_bounds(n: int, window: int = DEFAULT_WINDOW, overlap: int = DEFAULT_OVERLAP) -> list[tuple[int, int]]:
    """Half-open ``(start, end)`` message ranges of the windows over ``n`` messages (module docstring)."""
    if window < 1:
        raise ValueError(f"window must be at least 1 message, got {window}")
    if not 0 <= overlap < window:
        raise ValueError(f"overlap must be in [0, window={window}), got {overlap}")
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    if n == 0:
        return []
    if n <= window:
        return [(0, n)]
    step = window - overlap
    out = []
    start = 0
    while True:
        end = min(start + window, n)
        out.append((start, end))
        if start + window >= n:
            return out
        start += step


class WindowMessages(list):
    """One window's messages (a plain list), plus where it lies in the conversation."""

    def __init__(self, messages: Sequence[dict[str, Any]], start: int = 0, index: int = 0, total: int = 1,
                 context: Mapping[str, Any] | None = None) -> None:
        super().__init__(messages)
        self.start = start  # index of the first message in the judged conversation
        self.index = index  # 0-based window number
        self.total = total  # number of windows
        self.context = dict(context or {})


# ----- items and verdicts ---------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeItem:
    """One rubric item as the judge sees it: a stable key and the criterion in words."""

    key: str
    text: str


@dataclass
class WindowVerdicts:
    """What a judge function says about one window."""

    verdicts: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    calls: int = 0
    # tokens and cache hits of the window's requests (LLM judges)
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class WindowLog:
    start: int
    end: int
    verdicts: dict[str, str]
    reasons: dict[str, str]
    changed: dict[str, bool]
    problems: list[str]
    calls: int
    usage: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "verdicts": self.verdicts, "reasons": self.reasons,
                "changed": self.changed, "problems": self.problems, "calls": self.calls, "usage": self.usage}


@dataclass
class JudgeResult:
    """The sliding-window judge's verdict on an episode: each item's final state, the log of every
    window it read, and the error that stopped it, if any (then ``success`` is False)."""

    items: list[JudgeItem]
    states: dict[str, bool]
    windows: list[WindowLog]
    error: str | None = None

    @property
    def fraction(self) -> float:
        return sum(self.states.values()) / len(self.states) if self.states else 0.0

    @property
    def success(self) -> bool:
        return bool(self.states) and all(self.states.values()) and self.error is None

    @property
    def calls(self) -> int:
        return sum(w.calls for w in self.windows)

    @property
    def usage(self) -> dict[str, int]:
        """Requests, cache hits and tokens of all windows (empty for judges that report none)."""
        out: dict[str, int] = {}
        for w in self.windows:
            for k, v in w.usage.items():
                out[k] = out.get(k, 0) + v
        return out

    @property
    def problems(self) -> list[str]:
        return [f"window {i}: {p}" for i, w in enumerate(self.windows) for p in w.problems]

    def components(self, prefix: str = "judge") -> dict[str, float]:
        out = {
            f"{prefix}_success": float(self.success),
            f"{prefix}_fraction": self.fraction,
            f"{prefix}_items": float(len(self.items)),
            f"{prefix}_windows": float(len(self.windows)),
            f"{prefix}_calls": float(self.calls),
        }
        out.update({f"{prefix}/{k}": float(v) for k, v in self.states.items()})
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "success": self.success, "fraction": self.fraction, "states": dict(self.states),
            "items": [{"key": i.key, "text": i.text} for i in self.items],
            "windows": [w.to_json() for w in self.windows], "error": self.error,
        }


JudgeFn = Callable[[WindowMessages, list[JudgeItem], dict[str, bool]], "Mapping[str, Any] | WindowVerdicts"]


def normalize_verdicts(raw: Any, keys: Sequence[str]) -> WindowVerdicts:
    """A judge function's output as ``WindowVerdicts``: every key gets a valid verdict
    (missing or invalid ones ``"unchanged"``, with a problem each); unknown keys are dropped."""
    if isinstance(raw, WindowVerdicts):
        out = WindowVerdicts(dict(raw.verdicts), dict(raw.reasons), list(raw.problems), raw.calls, dict(raw.usage))
    elif isinstance(raw, Mapping):
        out = WindowVerdicts()
        for k, v in raw.items():
            if isinstance(v, Mapping):
                out.verdicts[str(k)] = v.get("verdict")  # type: ignore[assignment]
                if v.get("reason"):
                    out.reasons[str(k)] = str(v["reason"])
            else:
                out.verdicts[str(k)] = v
    else:
        return WindowVerdicts({k: "unchanged" for k in keys}, {}, [f"judge returned {type(raw).__name__}, not a mapping"])
    known = set(keys)
    for k in sorted(set(out.verdicts) - known):
        out.problems.append(f"unknown item {k!r} ignored")
        del out.verdicts[k]
        out.reasons.pop(k, None)
    for k in keys:
        v = out.verdicts.get(k)
        if v not in VERDICTS:
            out.problems.append(f"item {k!r}: {'no verdict' if v is None else f'invalid verdict {v!r}'}, kept unchanged")
            out.verdicts[k] = "unchanged"
    return out


def apply_verdicts(state: Mapping[str, bool], verdicts: Mapping[str, str]) -> tuple[dict[str, bool], dict[str, bool]]:
    """The next state and the items whose value changed: ``met`` -> True, ``overturned`` ->
    False (a no-op on an unmet item), ``unchanged`` keeps it."""
    new = dict(state)
    for k, v in verdicts.items():
        if k not in new:
            continue
        if v == "met":
            new[k] = True
        elif v == "overturned":
            new[k] = False
    return new, {k: new[k] for k in new if new[k] != state[k]}


_STOP_WORDS = frozenset(
    "the and for with that this should must will are was were has have had not but from into than then them their "
    "there which when what who whom whose order orders user users agent item items also only each every any all "
    "its it's be been being can could would may might shall about after before over under more less most very".split())
_WORD_RE = re.compile(r"[a-z0-9]+(?:[.:][0-9]+)*|[\u3400-\u4dbf\u4e00-\u9fff]+")


def _terms(text: str) -> set[str]:
    """The words of ``text`` that can tell which messages are about it: English words of three
    letters or more that are not function words, numbers and times, Chinese character pairs."""
    out: set[str] = set()
    for w in _WORD_RE.findall(text.casefold()):
        if w[0] >= "\u3400":
            out.update(w[i:i + 2] for i in range(max(1, len(w) - 1)))
        elif (len(w) >= 3 or w[0].isdigit()) and w not in _STOP_WORDS:
            out.add(w)
    return out


def _message_text(msg: Mapping[str, Any]) -> str:
    content = msg.get("content") or ""
    parts = [content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)]
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        parts.append(f"{fn.get('name', '')} {fn.get('arguments', '')}")
    return " ".join(parts)


def relevant_window(messages: Sequence[Mapping[str, Any]], text: str, window: int = DEFAULT_WINDOW) -> tuple[int, int]:
    """The half-open range of at most ``window`` consecutive messages most about ``text``: the
    range whose messages share the most of its terms (``_terms``: content words, numbers and
    times, Chinese character pairs), counted per message; among equal ranges the latest, since the
    end of a conversation shows what stands. ``(0, 0)`` for no messages."""
    n = len(messages)
    if n == 0:
        return (0, 0)
    if window < 1:
        raise ValueError(f"window must be at least 1 message, got {window}")
    want = _terms(text)
    hits = [len(want & _terms(_message_text(m))) for m in messages]
    size = min(window, n)
    best, best_start, run = -1, 0, sum(hits[:size])
    for start in range(0, n - size + 1):
        if start:
            run += hits[start + size - 1] - hits[start - 1]
        if run >= best:
            best, best_start = run, start
    return (best_start, best_start + size)


class SlidingWindowJudge:
    """Judges a conversation window by window with ``judge_fn`` (see the module docstring), or
    each item alone in its most relevant window (``per_item``, see ``judge_each``)."""

    def __init__(self, judge_fn: JudgeFn, window: int = DEFAULT_WINDOW, overlap: int = DEFAULT_OVERLAP,
                 per_item: bool = False) -> None:
        window_bounds(0, window, overlap)  # validate now
        self.judge_fn = judge_fn
        self.window = window
        self.overlap = overlap
        self.per_item = per_item

    def judge_each(self, messages: Sequence[dict[str, Any]], items: Sequence[JudgeItem],
                   context: Mapping[str, Any] | None = None) -> JudgeResult:
        """Judge every item alone, in the window of ``self.window`` messages most about it
        (``relevant_window``): one request per item, whose answer is ``met`` or not. The hybrid
        scoring of natural-language tasks uses it for the items code cannot read, so the judge
        sees neither the other items nor the rest of the conversation."""
        from servicegym.simulators.llm import LLMError

        items = list(items)
        keys = [i.key for i in items]
        if len(set(keys)) != len(keys):
            raise ValueError("rubric item keys must be unique")
        convo = [m for m in messages if m.get("role") != "system"]
        state = {k: False for k in keys}
        logs: list[WindowLog] = []
        if not items:
            return JudgeResult(items, state, logs, error="no rubric items to judge")
        for item in items:
            a, b = relevant_window(convo, item.text, self.window)
            win = WindowMessages(convo[a:b], start=a, index=0, total=1, context=context)
            try:
                raw = self.judge_fn(win, [item], {item.key: False})
            except LLMError as err:
                logs.append(WindowLog(a, b, {item.key: "unchanged"}, {}, {}, [f"judge unavailable: {err}"], 1))
                return JudgeResult(items, state, logs, f"item {item.key} (messages {a}-{b}): {err}")
            got = normalize_verdicts(raw, [item.key])
            state[item.key] = got.verdicts[item.key] == "met"
            changed = {item.key: True} if state[item.key] else {}
            logs.append(WindowLog(a, b, got.verdicts, got.reasons, changed, got.problems, got.calls or 1, got.usage))
        return JudgeResult(items, state, logs)

    def judge(self, messages: Sequence[dict[str, Any]], items: Sequence[JudgeItem],
              context: Mapping[str, Any] | None = None) -> JudgeResult:
        """Judge ``messages`` (OpenAI format; system messages are left out) against ``items``."""
        from servicegym.simulators.llm import LLMError

        items = list(items)
        keys = [i.key for i in items]
        if len(set(keys)) != len(keys):
            raise ValueError("rubric item keys must be unique")
        convo = [m for m in messages if m.get("role") != "system"]
        bounds = window_bounds(len(convo), self.window, self.overlap)
        state = {k: False for k in keys}
        logs: list[WindowLog] = []
        error = None
        if not items:
            return JudgeResult(items, state, logs, error="no rubric items to judge")
        for idx, (a, b) in enumerate(bounds):
            win = WindowMessages(convo[a:b], start=a, index=idx, total=len(bounds), context=context)
            try:
                raw = self.judge_fn(win, items, dict(state))
            except LLMError as err:
                error = f"window {idx} ({a}-{b}): {err}"
                logs.append(WindowLog(a, b, {k: "unchanged" for k in keys}, {}, {}, [f"judge unavailable: {err}"], 1))
                break
            got = normalize_verdicts(raw, keys)
            state, changed = apply_verdicts(state, got.verdicts)
            logs.append(WindowLog(a, b, got.verdicts, got.reasons, changed, got.problems, got.calls or 1, got.usage))
        return JudgeResult(items, state, logs, error)


# ----- the LLM judge ----------------------------------------------------------------------------
SYSTEM_PROMPT = """\
You grade a conversation between a service assistant (the agent) and a customer (the user) \
against a checklist of criteria. The conversation is shown to you in overlapping windows of \
consecutive messages, one window at a time; tool calls made by the agent and the tool results \
are part of it. For every criterion you are given whether it already counts as met from the \
earlier windows.

For every criterion decide, from what happens in THIS window:
- "met": the window shows the criterion satisfied (the agent did what it asks, and a tool \
result or the agent's final answer confirms it);
- "overturned": the criterion was met before, and in this window the agent undid it \
(cancelled or changed the order, booking or answer that satisfied it);
- "unchanged": nothing in this window changes whether it is met (use this when in doubt).

Judge only from the messages shown; the agent's claims count only when the tool results back \
them. Reply with one JSON object and nothing else:
{"items": [{"id": "<criterion id>", "verdict": "met" | "overturned" | "unchanged", \
"reason": "<one short sentence>"}]}
with exactly one entry for every criterion id."""

CORRECTION = ("Your reply could not be used: {problem}. Reply again with only the JSON object "
              '{{"items": [{{"id": ..., "verdict": "met" | "overturned" | "unchanged", "reason": ...}}]}} '
              "with one entry for each of these ids: {ids}.")

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _clip(text: str, limit: int) -> str:
    if limit and len(text) > limit:
        return text[:limit] + f" ...[{len(text) - limit} more characters]"
    return text


def format_message(msg: Mapping[str, Any], number: int, limit: int = 4000) -> str:
    """One message as a numbered line: ``[7] assistant: ... -> tool_name({...})``."""
    role = msg.get("role", "?")
    content = msg.get("content") or ""
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    parts = [content] if content else []
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        parts.append(f"calls {fn.get('name', '?')}({fn.get('arguments', '')}) [id {call.get('id', '')}]")
    if role == "tool":
        role = f"tool result [id {msg.get('tool_call_id', '')}]"
    return f"[{number}] {role}: {_clip(' | '.join(parts), limit)}"


def parse_reply(text: str | None, keys: Sequence[str]) -> WindowVerdicts:
    """Validate the model's JSON reply; raise ``ValueError`` naming what is wrong."""
    if not text or not text.strip():
        raise ValueError("the reply is empty")
    m = _FENCE.match(text)
    body = m.group(1) if m else text
    try:
        data = json.loads(body)
    except json.JSONDecodeError as err:
        raise ValueError(f"the reply is not JSON ({err.msg} at character {err.pos})") from None
    entries = data.get("items") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ValueError('the reply has no "items" list')
    out = WindowVerdicts()
    known = set(keys)
    for e in entries:
        if not isinstance(e, dict) or "id" not in e or "verdict" not in e:
            raise ValueError('every entry needs "id" and "verdict"')
        key, verdict = str(e["id"]), e["verdict"]
        if key not in known:
            raise ValueError(f"unknown criterion id {key!r}")
        if verdict not in VERDICTS:
            raise ValueError(f"verdict {verdict!r} for {key!r} is not met, overturned or unchanged")
        if key in out.verdicts:
            raise ValueError(f"criterion {key!r} appears twice")
        out.verdicts[key] = verdict
        if e.get("reason"):
            out.reasons[key] = str(e["reason"])
    missing = [k for k in keys if k not in out.verdicts]
    if missing:
        raise ValueError(f"no verdict for {', '.join(missing)}")
    return out


class LLMJudgeFn:
    """A judge function backed by a chat model (``simulators.llm.LLMClient``).

    One request per window (two when the first reply is malformed: the second carries the bad
    reply and a correction). The reply must be the JSON object of the module docstring; when
    the second is malformed too every item stays unchanged and the problem is logged. Requests
    ask for JSON mode (``response_format``); an endpoint that rejects it with HTTP 400 is asked
    again without it, and so from then on.
    ``LLMError`` propagates to ``SlidingWindowJudge``, which stops and records it.
    """

    def __init__(self, client: Any, max_message_chars: int = 4000, json_mode: bool = True) -> None:
        self.client = client
        self.max_message_chars = max_message_chars
        self.json_mode = json_mode

    def prompt(self, window: WindowMessages, items: Sequence[JudgeItem], state: Mapping[str, bool]) -> list[dict[str, Any]]:
        start = getattr(window, "start", 0)
        lines = [format_message(m, start + i + 1, self.max_message_chars) for i, m in enumerate(window)]
        criteria = [{"id": it.key, "criterion": it.text, "met_so_far": bool(state.get(it.key, False))} for it in items]
        ctx = getattr(window, "context", {}) or {}
        head = f"Window {getattr(window, 'index', 0) + 1} of {getattr(window, 'total', 1)}, " \
               f"messages {start + 1} to {start + len(window)}."
        if ctx:
            head += "\nContext: " + json.dumps(ctx, ensure_ascii=False, sort_keys=True)
        user = (f"{head}\n\n<criteria>\n{json.dumps(criteria, ensure_ascii=False, indent=1)}\n</criteria>\n\n"
                "<window>\n" + "\n".join(lines) + "\n</window>")
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

    def _chat(self, messages: list[dict[str, Any]], fmt: dict[str, Any] | None) -> Any:
        from servicegym.simulators.llm import LLMError

        try:
            return self.client.chat(messages, response_format=fmt)
        except LLMError as err:
            if fmt is None or err.status != 400:
                raise
            # an endpoint without JSON mode rejects response_format: ask in plain text from now on
            self.json_mode = False
            return self.client.chat(messages)

    def __call__(self, window: WindowMessages, items: list[JudgeItem], state: dict[str, bool]) -> WindowVerdicts:
        keys = [i.key for i in items]
        messages = self.prompt(window, items, state)
        fmt = {"type": "json_object"} if self.json_mode else None
        problems: list[str] = []
        usage = {"requests": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0}
        for attempt in (1, 2):
            result = self._chat(messages, fmt)
            fmt = {"type": "json_object"} if self.json_mode else None
            usage["requests"] += 1
            usage["cache_hits"] += int(bool(getattr(result, "cached", False)))
            for k in ("prompt_tokens", "completion_tokens"):
                usage[k] += int((getattr(result, "usage", None) or {}).get(k, 0))
            try:
                out = parse_reply(result.content, keys)
            except ValueError as err:
                problems.append(f"malformed judge reply (attempt {attempt}): {err}")
                messages = messages + [
                    {"role": "assistant", "content": result.content or ""},
                    {"role": "user", "content": CORRECTION.format(problem=err, ids=", ".join(keys))},
                ]
                continue
            out.problems = problems
            out.calls = attempt
            out.usage = usage
            return out
        return WindowVerdicts({k: "unchanged" for k in keys}, {}, problems + ["items kept unchanged"], calls=2, usage=usage)


# ----- tasks and episodes -----------------------------------------------------------------------
def judge_items(task: Any) -> list[JudgeItem]:
    """The judge's items for a task: its natural-language rubric (VitaBench) if it has one,
    else its code rubric items of weight > 0 (key = name, text = description or name)."""
    nl = list(getattr(task, "nl_rubric", None) or [])
    if nl:
        return [JudgeItem(f"rubric_{i}", text) for i, text in enumerate(nl)]
    return [JudgeItem(r.name, r.description or r.name) for r in task.rubric if r.weight > 0]


def code_checked(task: Any) -> dict[str, str]:
    """``rubric_<k>`` -> the name of the rubric item that checks natural-language item k by code."""
    out: dict[str, str] = {}
    for item in getattr(task, "rubric", None) or []:
        k = (item.params or {}).get("nl_index") if item.kind.startswith("nl_") else None
        if isinstance(k, int) and item.weight > 0:
            out[f"rubric_{k}"] = item.name
    return out


def split_items(task: Any) -> tuple[list[JudgeItem], dict[str, str]]:
    """The items the judge is asked about, and the code-checked ones (key -> rubric item name):
    a natural-language item the loader compiled keeps its code verdict; a task without a
    natural-language rubric gives every item to the judge."""
    items = judge_items(task)
    if not getattr(task, "nl_rubric", None):
        return items, {}
    coded = code_checked(task)
    return [i for i in items if i.key not in coded], {i.key: coded[i.key] for i in items if i.key in coded}


def _state_items_hold(env: Any, code_score: dict[str, Any], scoring: str) -> bool:
    """The code items of a natural-language task that are not about one rubric item and count
    under ``scoring``: "no write the user never asked for" in both modes, and under
    ``scoring="strict"`` the gold end state too. The judge never decides them."""
    rubric = getattr(env.task, "rubric", None) or []
    return all(code_score.get(f"rubric/{i.name}", 0.0) for i in rubric
               if counts_in(i, scoring) and "nl_index" not in (i.params or {}))


def _with_modes(env: Any, items_ok: bool, code_score: dict[str, Any], score: dict[str, Any]) -> bool:
    """Both scoring modes' verdicts of a judged natural-language task into ``score``
    (``success_rubric``, ``success_strict``); returns the env's own mode's."""
    for mode in SCORING_MODES:
        score[f"success_{mode}"] = float(items_ok and _state_items_hold(env, code_score, mode))
    return bool(score[f"success_{getattr(env, 'scoring', 'strict')}"])


def judge_episode(judge: SlidingWindowJudge, env: Any, code_success: bool,
                  code_score: dict[str, Any]) -> tuple[bool, dict[str, Any], dict[str, Any]]:
    """Score a finished episode of ``env`` (a ``ToolUseEnv``) with ``judge``.

    Returns ``(success, score, extra_info)``: success is the judge's; ``score`` the code
    components plus ``code_success`` and the judge's components (and, when the items are the
    code rubric's, ``judge_agreement`` and ``judge_kappa``); ``extra_info`` has ``judge`` (the
    result as JSON), ``judge_usage`` (requests, cache hits, tokens) and ``judge_error`` when the
    judge failed. Never raises: any failure is
    recorded and the episode is not a success.
    """
    score = dict(code_score)
    score["code_success"] = float(code_success)
    items: list[JudgeItem] = []
    coded: dict[str, str] = {}
    try:
        items, coded = split_items(env.task)
        world = getattr(env, "world", None)
        context = {"current_time": world.clock.text()} if world is not None and hasattr(world, "clock") else {}
        if not items and coded:
            result = JudgeResult([], {}, [])
        elif coded or getattr(env.task, "nl_rubric", None):
            # a natural-language task's unread items: one by one where the judge says so
            ask = judge.judge_each if getattr(judge, "per_item", False) else judge.judge
            result = ask(env.messages, items, context)
        else:
            result = judge.judge(env.messages, items, context)
    except Exception as err:  # noqa: BLE001  the env never raises out of step
        msg = f"{type(err).__name__}: {err}"
        score.update({"judge_success": 0.0, "judge_fraction": 0.0, "judge_items": float(len(items) + len(coded))})
        return False, score, {"judge_error": msg}
    score.update(result.components())
    if coded:
        verdicts = {k: bool(code_score.get(f"rubric/{name}", 0.0)) for k, name in coded.items()}
        states = {**result.states, **verdicts}
        keys = sorted(states, key=lambda k: int(k.rsplit("_", 1)[1]))
        judged_ok = result.success if items else result.error is None
        success = _with_modes(env, judged_ok and all(verdicts.values()), code_score, score)
        score.update({f"judge/{k}": float(states[k]) for k in keys})
        score.update(judge_success=float(success), judge_fraction=sum(states.values()) / len(states),
                     judge_items=float(len(states)), judge_llm_items=float(len(items)),
                     judge_code_items=float(len(coded)))
        extra: dict[str, Any] = {"judge": {**result.to_json(), "code_items": {k: verdicts[k] for k in keys if k in verdicts},
                                           "success": success},
                                 "judge_usage": result.usage}
        if result.error:
            extra["judge_error"] = result.error
        return success, score, extra
    nl = bool(getattr(env.task, "nl_rubric", None))
    success = _with_modes(env, result.success, code_score, score) if nl else result.success
    if nl:
        score["judge_success"] = float(success)
    if not nl and result.states:
        code = [bool(code_score.get(f"rubric/{k}", 0.0)) for k in result.states]
        judged = list(result.states.values())
        score["judge_agreement"] = sum(a == b for a, b in zip(code, judged)) / len(code)
        score["judge_kappa"] = cohen_kappa(code, judged)
    extra: dict[str, Any] = {"judge": result.to_json(), "judge_usage": result.usage}
    if result.error:
        extra["judge_error"] = result.error
    return success, score, extra


def make_llm_judge(llm: Any = None, window: int = DEFAULT_WINDOW, overlap: int = DEFAULT_OVERLAP,
                   client: Any = None, per_item: bool = False) -> SlidingWindowJudge:
    """The sliding-window judge over ``client``, or the process's shared ``LLMClient`` for ``llm``
    (``per_item``: natural-language tasks' unread items judged one by one, ``judge_each``)."""
    if client is None:
        from servicegym.simulators.llm import LLMClient

        client = LLMClient.shared(llm)
    return SlidingWindowJudge(LLMJudgeFn(client), window, overlap, per_item=per_item)


def score_with_llm_judge(env: Any, code_success: bool, code_score: dict[str, Any]) -> tuple[bool, dict[str, Any], dict[str, Any]]:
    """The env's hook for ``judge="llm"``: ``judge_episode`` with ``env.llm_judge``, built on
    first use over the env's shared client (``env.llm_client()``, else one from ``env.llm``); a
    failure to build it is recorded, never raised."""
    if getattr(env, "llm_judge", None) is None:
        try:
            shared = getattr(env, "llm_client", None)
            env.llm_judge = make_llm_judge(env.llm, client=shared() if callable(shared) else None, per_item=True)
        except Exception as err:  # noqa: BLE001  e.g. the openai package missing
            score = dict(code_score, code_success=float(code_success), judge_success=0.0, judge_fraction=0.0)
            return False, score, {"judge_error": f"{type(err).__name__}: {err}"}
    return judge_episode(env.llm_judge, env, code_success, code_score)
