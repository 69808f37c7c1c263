"""An LLM agent policy: any OpenAI-compatible endpoint plays the agent side of an env.

``LLMAgentPolicy`` follows the policy protocol of ``servicegym.envs.running.policies`` (``reset(env, obs, info)``,
then ``act(obs) -> action string``), and adds ``await aact(obs)``, the same decision through
``LLMClient.achat``, which the rollout collector's ``"async"`` backend awaits so that many episodes
wait on the endpoint in one thread. It keeps its own OpenAI conversation: the system prompt from
``info["system_prompt"]``, the opening request, then each completion and what the env answered.

- Native tool calling (the default): ``info["tools"]`` go to the endpoint as ``tools``; a reply
  with ``tool_calls`` becomes the action ``{"role": "assistant", "content": ..., "tool_calls":
  [...]}`` (JSON), which the env's parser reads; the ``<tool_result>``/``<tool_error>`` blocks of
  the next observation come back as ``tool`` messages matched by ``call_id``, anything else as a
  ``user`` message. Arguments are passed through exactly as the model wrote them: malformed JSON
  reaches the env, which answers with an error observation the model can recover from.
- Text fallback: with ``native_tools=False`` (or ``LLMConfig.native_tools=False``), or when the
  endpoint rejects ``tools`` (HTTP 400 that mentions tools), the schemas are described in the
  system prompt and the completion text is the action, parsed by the env (``<tool_call>``
  blocks). The switch happens once and is kept for the rest of the policy's life
  (``policy.native`` says which path is in use).
- Context limit: with ``max_prompt_tokens=N`` the oldest whole turns (an assistant message with
  the tool results and user reply that answer it) are left out of the next request until it fits
  N tokens, estimated with the endpoint's own prompt-token count per character of the previous
  request; the system prompt, the opening request and the latest turn always stay, so long
  episodes (payments, 20-session workspaces) keep running on a small context. The env's
  transcript is unaffected; ``policy.dropped_messages`` counts what was left out.
- Endpoint failures: after the client's retries ``act`` (or ``aact``) raises ``LLMError`` (the conversation is
  left as it was). The env is not stepped, so nothing false enters its transcript; the caller
  records the episode as failed by the endpoint: ``run_episode`` returns it with ``error`` set and
  ``termination_reason="policy_error"``. Each call ends within the config's ``deadline_s``, and
  whatever the reply holds comes back as a result or as ``LLMError``, never another error.
- Time budget: with ``episode_budget_s=N`` (or ``LLMConfig.episode_budget_s``) the policy's model
  calls may take N seconds in all per episode (``policy.budget``, reset by ``reset``); the call
  that would go past it is cut at the limit, and from then on ``act`` raises ``LLMError`` of kind
  ``"budget"``, which ends the episode as above with the reason in ``error``.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from servicegym.simulators.llm import (
    ChatResult,
    EpisodeBudget,
    LLMClient,
    LLMConfig,
    LLMError,
    Transcript,
    add_usage,
    loads_json,
)

__all__ = ["LLMAgentPolicy", "TEXT_TOOLS_PROMPT", "golden_replay_handler", "observation_messages", "replayable_tasks"]

TEXT_TOOLS_PROMPT = (
    "\n\nThe tools, as OpenAI function schemas (call them with the form above, one <tool_call> block per call):\n{tools}"
)
_RESULT = re.compile(r'<(tool_result|tool_error) name="([^"]*)" call_id="([^"]*)">(.*?)</\1>', re.S)


def observation_messages(obs: str, call_ids: list[str]) -> list[dict[str, Any]]:
    """An env observation as OpenAI messages answering the tool calls ``call_ids``: one ``tool``
    message per call (in call order; a call the env did not answer gets a note), then the rest of
    the observation (the user's reply, events, errors) as one ``user`` message."""
    results: dict[str, str] = {}
    for m in _RESULT.finditer(obs):
        kind, cid, body = m.group(1), html.unescape(m.group(3)), m.group(4)
        results.setdefault(cid, f"ERROR: {body}" if kind == "tool_error" else body)
    rest = _RESULT.sub("", obs).strip()
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": cid, "content": results.get(cid, "no result: the call was not run (see the next message)")}
        for cid in call_ids
    ]
    if rest or not call_ids:
        out.append({"role": "user", "content": rest})
    return out


def _tools_unsupported(err: LLMError) -> bool:
    return err.status in (400, 404, 422) and "tool" in err.detail.casefold()


class LLMAgentPolicy:
    """Plays an env with an LLM; see the module docstring."""

    name = "llm"

    def __init__(self, config: LLMConfig | dict[str, Any] | None = None, client: LLMClient | None = None,
                 native_tools: bool | None = None, tool_choice: Any = None, max_prompt_tokens: int | None = None,
                 episode_budget_s: float | None = None, **chat_extra: Any) -> None:
        if max_prompt_tokens is not None and (isinstance(max_prompt_tokens, bool) or int(max_prompt_tokens) < 1):
            raise ValueError(f"max_prompt_tokens must be a positive number of tokens, got {max_prompt_tokens!r}")
        self.client = client if client is not None else LLMClient.shared(config)
        # seconds of model calls per episode (None: the config's episode_budget_s, itself None: no limit)
        self.budget = EpisodeBudget(self.client.config.episode_budget_s if episode_budget_s is None else episode_budget_s)
        self.max_prompt_tokens = None if max_prompt_tokens is None else int(max_prompt_tokens)
        self.dropped_messages = 0  # how many old messages the context limit has left out this episode
        self.native = self.client.config.native_tools if native_tools is None else bool(native_tools)
        self.tool_choice = tool_choice
        self.chat_extra = chat_extra
        # the conversation: a Transcript (its messages never edited once in it), so each message is
        # serialised once for the requests, not once per call
        self.messages: list[dict[str, Any]] = Transcript()
        self.tools: list[dict[str, Any]] = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cache_hits": 0}
        self.last_error: LLMError | None = None
        self._system = ""
        self._pending: list[str] = []  # ids of the tool calls of the last action (native path)
        self._started = False
        self._acted = False
        self._tokens_per_char = 0.0  # the endpoint's prompt tokens per character of the last request
        self._tools_chars = 0  # the tool schemas' JSON size (sent with every native request)

    # ----- protocol ----------------------------------------------------------------------------
    def reset(self, env: Any, obs: str, info: dict[str, Any]) -> None:
        self.tools = list(info.get("tools") or [])
        self._tools_chars = len(json.dumps(self.tools, ensure_ascii=False)) if self.max_prompt_tokens and self.tools else 0
        self._system = str(info.get("system_prompt") or "")
        self.messages = Transcript([{"role": "system", "content": self._system_prompt()}, {"role": "user", "content": obs}])
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cache_hits": 0}
        self.last_error = None
        self.budget.reset()
        self._pending = []
        self._started = True
        self._acted = False
        self.dropped_messages = 0

    def act(self, obs: str) -> str:
        turn = self._begin(obs)
        try:
            result = self._complete()
        except LLMError as err:
            self._undo(turn, err)
            raise
        return self._action(result)

    async def aact(self, obs: str) -> str:
        """``act`` for asyncio (``LLMClient.achat``): the rollout collector's async backend awaits
        this, so many episodes wait on the endpoint in one thread."""
        turn = self._begin(obs)
        try:
            result = await self._acomplete()
        except LLMError as err:
            self._undo(turn, err)
            raise
        return self._action(result)

    # ----- internals ---------------------------------------------------------------------------
    def _system_prompt(self) -> str:
        if self.native or not self.tools:
            return self._system
        return self._system + TEXT_TOOLS_PROMPT.format(tools=json.dumps(self.tools, ensure_ascii=False))

    def _observation(self, obs: str) -> list[dict[str, Any]]:
        if self.native:
            msgs = observation_messages(obs, self._pending)
        else:
            msgs = [{"role": "user", "content": obs}]
        self._pending = []
        return msgs

    def _begin(self, obs: str) -> tuple[list[dict[str, Any]], list[str], int]:
        if not self._started:
            raise RuntimeError("LLMAgentPolicy.act() before reset()")
        turn = list(self.messages), list(self._pending), self.dropped_messages
        if self._acted:
            # the observation answers the previous action (the first one, the opening, came with reset)
            self.messages.extend(self._observation(obs))
        self._fit()
        return turn

    def _undo(self, turn: tuple[list[dict[str, Any]], list[str], int], err: LLMError) -> None:
        """Leave the conversation as it was before the failed turn: ``act(obs)`` may be called again."""
        messages, self._pending, self.dropped_messages = turn
        self.messages = Transcript(messages)
        self.last_error = err

    def _request_chars(self) -> int:
        return (self._tools_chars if self.native else 0) + sum(_chars(m) for m in self.messages)

    def _fit(self) -> None:
        """With ``max_prompt_tokens``: leave out the oldest whole turns (an assistant message with
        the tool results and user reply that answer it) until the next prompt fits, estimated at
        the endpoint's own count of tokens per character in the last request. The system prompt,
        the opening request and the latest turn always stay, and no tool result loses its call."""
        if self.max_prompt_tokens is None or not self._tokens_per_char:
            return
        starts = [i for i, m in enumerate(self.messages) if i >= 2 and m["role"] == "assistant"]
        if len(starts) < 2:
            return
        excess = self._request_chars() * self._tokens_per_char - self.max_prompt_tokens
        if excess <= 0:
            return
        cut, freed = 2, 0
        for nxt in starts[1:]:  # drop [2, nxt): whole turns, oldest first, never the latest one
            freed += sum(_chars(m) for m in self.messages[cut:nxt])
            cut = nxt
            if freed * self._tokens_per_char >= excess:
                break
        self.dropped_messages += cut - 2
        del self.messages[2:cut]

    def _measured(self, result: ChatResult) -> ChatResult:
        """Learn the endpoint's tokens per character from a fresh reply (for ``_fit``)."""
        if self.max_prompt_tokens is not None and result.usage.get("prompt_tokens") and not result.cached:
            self._tokens_per_char = result.usage["prompt_tokens"] / max(self._request_chars(), 1)
        add_usage(self.usage, result)
        return result

    def _complete(self) -> ChatResult:
        if self.native and self.tools:
            try:
                result = self.client.chat(self.messages, tools=self.tools, tool_choice=self.tool_choice,
                                          budget=self.budget, **self.chat_extra)
            except LLMError as err:
                if not _tools_unsupported(err):
                    raise
                self._to_text_path()
                result = self.client.chat(self.messages, budget=self.budget, **self.chat_extra)
        else:
            result = self.client.chat(self.messages, budget=self.budget, **self.chat_extra)
        return self._measured(result)

    async def _acomplete(self) -> ChatResult:
        if self.native and self.tools:
            try:
                result = await self.client.achat(self.messages, tools=self.tools, tool_choice=self.tool_choice,
                                                 budget=self.budget, **self.chat_extra)
            except LLMError as err:
                if not _tools_unsupported(err):
                    raise
                self._to_text_path()
                result = await self.client.achat(self.messages, budget=self.budget, **self.chat_extra)
        else:
            result = await self.client.achat(self.messages, budget=self.budget, **self.chat_extra)
        return self._measured(result)

    def _to_text_path(self) -> None:
        """Switch to the text action path, rewriting the conversation so far in its terms."""
        self.native = False
        msgs: list[dict[str, Any]] = [{"role": "system", "content": self._system_prompt()}]
        for m in self.messages[1:]:
            if m["role"] == "assistant" and m.get("tool_calls"):
                msgs.append({"role": "assistant", "content": _text_action(m)})
            elif m["role"] == "tool":
                block = f'<tool_result call_id="{m["tool_call_id"]}">{m["content"]}</tool_result>'
                if msgs[-1]["role"] == "user":
                    msgs[-1] = {"role": "user", "content": msgs[-1]["content"] + "\n" + block}
                else:
                    msgs.append({"role": "user", "content": block})
            else:
                msgs.append(dict(m))
        self.messages = Transcript(msgs)

    def _action(self, result: ChatResult) -> str:
        self._acted = True
        if self.native and result.tool_calls:
            msg = result.message()
            self.messages.append(msg)
            self._pending = [c["id"] for c in result.tool_calls]
            return json.dumps(msg, ensure_ascii=False)
        text = result.content or ""
        self.messages.append({"role": "assistant", "content": text})
        return text


def _chars(message: dict[str, Any]) -> int:
    """A message's size in characters as sent (its content and tool calls)."""
    n = len(message.get("content") or "")
    for c in message.get("tool_calls") or ():
        n += len(c["function"]["name"]) + len(c["function"].get("arguments") or "")
    return n


def _text_action(msg: dict[str, Any]) -> str:
    blocks = []
    for c in msg.get("tool_calls") or []:
        fn = c["function"]
        args = fn.get("arguments")
        try:
            args = loads_json(args) if isinstance(args, str) else args
        except ValueError:  # not JSON (or nested too deep): kept as the string the model wrote
            pass
        blocks.append("<tool_call>" + json.dumps({"name": fn["name"], "arguments": args}, ensure_ascii=False) + "</tool_call>")
    return "\n".join(([msg["content"]] if msg.get("content") else []) + blocks)


def replayable_tasks(env: Any, n: int, split: str = "test") -> list[Any]:
    """The first ``n`` tasks of ``env``'s ``split`` whose opening messages differ (what
    ``golden_replay_handler`` can tell apart); ``ValueError`` when there are fewer."""
    base = getattr(env, "unwrapped", env)
    tasks, seen = [], set()
    for tid in base.task_ids(split):
        task = base.source.get(tid)
        if task.user.opening not in seen:
            seen.add(task.user.opening)
            tasks.append(task)
            if len(tasks) == n:
                return tasks
    raise ValueError(f"{split!r} has {len(tasks)} tasks with distinct openings, fewer than {n}")


UNKNOWN_TASK_REPLY = ("[loopback-model] I do not know this conversation's task: I replay the golden route of {known}, "
                      "and this conversation opens with none of their opening messages. Start me with the env, split "
                      "or task file you evaluate (servicegym loopback-model --help). ###STOP###")


def golden_replay_handler(tasks: Any, strict: bool = True, known: str = "") -> Any:
    """A ``LoopbackServer`` handler that plays a stand-in model: each conversation (known by its
    opening user message) gets its task's next golden action, tool calls as native ``tool_calls``,
    then ``###STOP###``. ``LLMAgentPolicy`` against it succeeds on every task with a golden route:
    an end-to-end check of an LLM pipeline, and the benchmark's model, with no model at all.

    ``strict=True`` raises ``ValueError`` on two tasks that open alike (the replay cannot tell them
    apart). ``strict=False`` (``servicegym loopback-model``) drops those, and answers a
    conversation it cannot place (an unknown or ambiguous opening, a request without a user
    message) with a text reply that says so and ends the episode (``UNKNOWN_TASK_REPLY``, naming
    ``known``: what it replays), never with an HTTP error. An opening that extends a task's (what
    Payments' ``disclosure="full"`` and ``gold_documents=True`` make of it) is that task's.

    Each step's reply is built once and handed out again: ``LoopbackServer`` copies what it changes
    of a reply; another caller that edits one must copy it first."""
    from servicegym.envs.environments.parsing import parse_action
    from servicegym.simulators.loopback import text_reply, tool_call_reply

    by_opening: dict[str, list[str]] = {}
    ambiguous: set[str] = set()
    for task in tasks:
        if by_opening.setdefault(task.user.opening, task.golden_actions) is not task.golden_actions:
            if strict:
                raise ValueError(f"two tasks open with the same message ({task.task_id}): the replay cannot tell them apart")
            ambiguous.add(task.user.opening)
    for opening in ambiguous:
        del by_opening[opening]
    unknown = UNKNOWN_TASK_REPLY.format(known=known or f"{len(by_opening)} tasks")
    # the reply to each (golden route, step): at most one per golden action and task, all held by by_opening
    replies: dict[tuple[int, int], dict[str, Any]] = {}

    def handler(body: dict[str, Any]) -> Any:
        msgs = body.get("messages") if isinstance(body, dict) else None
        opening = next((m.get("content") for m in msgs or () if isinstance(m, dict) and m.get("role") == "user"), None)
        golden = by_opening.get(opening) if isinstance(opening, str) else None
        if golden is None and isinstance(opening, str):
            # an env option that adds to the opening (Payments' disclosure="full", gold_documents=True): the
            # task whose opening this one extends (the longest such; an ambiguous one is no match)
            hits = [o for o in (*by_opening, *ambiguous) if o and opening.startswith(o)]
            golden = by_opening.get(max(hits, key=len)) if hits else None
        if golden is None:
            if strict:
                raise KeyError("no task opens with this conversation's first user message")
            return text_reply(unknown)
        k = min(sum(isinstance(m, dict) and m.get("role") == "assistant" for m in msgs), len(golden))
        key = (id(golden), k)
        reply = replies.get(key)
        if reply is None:  # each golden step parsed once (the server copies what it changes of a reply)
            parsed = parse_action(golden[k] if k < len(golden) else "###STOP###")
            if parsed.tool_calls:
                reply = tool_call_reply([(c.name, c.arguments) for c in parsed.tool_calls],
                                        content=parsed.message or None)
            else:
                reply = text_reply(parsed.message)
            replies[key] = reply
        return reply

    return handler
