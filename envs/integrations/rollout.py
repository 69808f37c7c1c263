"""One episode over any OpenAI-compatible endpoint, for gateway-style trainers (ART, AReaL, rLLM,
OpenRLHF's agent mode): the trainer serves the policy behind a chat-completions URL, records the
token ids of every completion there (keyed on the completion ``id``), and asks the environment
side for a reward. ``rollout`` is that environment side:

    result = await rollout("servicegym/Delivery-v0", row, base_url=URL, model=MODEL)
    result.reward, result.completion_ids, result.messages

The conversation is append-only: each request is exactly the previous request's messages, the
model's assistant message as the endpoint returned it, and what the env answered (its
``turn_messages()``: tool results by ``tool_call_id``, the user's reply, error turns). Nothing sent
before is re-rendered, re-encoded or dropped, so the token ids a gateway recorded for earlier
turns stay the prefix of every later request, and a conversation tree built by prefix matching
(AReaL) is a chain. Two cases keep the protocol valid without touching what the model wrote:

- a tool call whose id the env had to replace (missing or reused by the model) is answered with
  the model's own id, so every ``tool`` message answers a call of the assistant message before it,
  and a native call the env could not read (no name) gets a ``tool`` message saying it was not run;
- calls the env read out of the text of a reply without native ``tool_calls`` (an endpoint
  without a tool parser) are answered by one ``user`` message holding the observation (tagged
  ``<tool_result>`` blocks), as the text path of ``LLMAgentPolicy`` does.

A Workspace step that ends a session restarts the chat (its turn messages begin with the next
session's system message): ``rollout`` then starts a new conversation, and
``result.conversations`` holds one list per chat (append-only within each); every other env has
one.

Endpoint failures do not raise: after ``LLMClient``'s retries the rollout ends with
``termination_reason="policy_error"`` and ``error`` (the ``LLMError`` as JSON), reward 0. The
client is ``LLMClient`` (``achat``: deadline, retries with backoff, defensive parsing); the
completion ``id`` of each call comes from ``ChatResult.id``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

import servicegym.envs.environments.registration  # noqa: F401  (the ids)
from servicegym.envs.running.vector import resolve_env_id
from servicegym.simulators.llm import EpisodeBudget, LLMClient, LLMConfig, LLMError, add_usage

__all__ = ["RolloutResult", "rollout", "API_KEY_ENV_PREFIX"]

API_KEY_ENV_PREFIX = "SERVICEGYM_ROLLOUT_KEY_"
"""``rollout(api_key=...)`` puts the key in the environment variable ``API_KEY_ENV_PREFIX + <its
sha256, 16 hex digits>`` and names that variable in the client's config (``LLMClient`` reads keys
only from environment variables): per-session keys (AReaL's proxy) never overwrite each other."""


@dataclass
class RolloutResult:
    """One episode played by a model behind an OpenAI-compatible endpoint.

    ``reward`` is the env's strict success (1.0 or 0.0; Workspace: every session succeeded), 0.0
    when the episode did not finish; ``rewards`` the env's reward of every step (Workspace pays each
    session's success at its end); ``score`` is ``info["score"]`` of the last step (every
    component: rubric items, ``goal``/``process``/``protection``, ``proc``/``comp``...), ``{}``
    when the episode did not finish. ``completion_ids`` holds the ``id`` of every chat completion,
    in call order (one per step; ``""`` where the endpoint sent none). ``usage`` sums ``calls``,
    ``cache_hits``, ``prompt_tokens`` and ``completion_tokens``. ``termination_reason`` is the
    env's (``agent_stop``, ``user_stop``, ``max_steps``, ``max_errors``, ``user_error``) or
    ``"policy_error"`` (the endpoint failed; ``error`` says how)."""

    env_id: str
    task_id: str
    seed: int | None
    conversations: list[list[dict[str, Any]]]
    tools: list[dict[str, Any]]
    reward: float
    success: bool
    score: dict[str, Any]
    info: dict[str, Any]
    rewards: list[float]
    completion_ids: list[str]
    finish_reasons: list[str | None]
    usage: dict[str, int]
    steps: int
    termination_reason: str
    error: dict[str, Any] | None = None
    domain: str = ""
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message of the episode in order: the one conversation of a single-chat env (the
        last request's messages plus the last reply and what the env answered), the Workspace
        sessions' conversations one after another."""
        if len(self.conversations) == 1:
            return self.conversations[0]
        return [m for conv in self.conversations for m in conv]

    def to_json(self) -> dict[str, Any]:
        """The result as a JSON-able dict (``messages`` included)."""
        out = asdict(self)
        out["messages"] = self.messages
        return out


def _key_env(api_key: str) -> str:
    name = API_KEY_ENV_PREFIX + hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:16].upper()
    if os.environ.get(name) != api_key:
        os.environ[name] = api_key
    return name


def _client(client: LLMClient | None, base_url: str | None, model: str | None, api_key: str | None,
            llm: dict[str, Any] | None) -> LLMClient:
    if client is not None:
        if base_url is not None or model is not None or api_key is not None or llm:
            raise ValueError("pass either client= or base_url/model/api_key/llm, not both")
        return client
    config = dict(llm or {})
    if base_url is not None:
        config["base_url"] = base_url
    if model is not None:
        config["model"] = model
    if api_key is not None:
        config["api_key_env"] = _key_env(api_key)
    return LLMClient.shared(LLMConfig.resolve(config))


def _task_and_seed(env_id: str | None, row_or_task_id: Any, seed: int | None) -> tuple[str, str, int | None]:
    """(env id, task id, seed) from a dataset row (``task_rows``: ``env_id``, ``task_id``,
    ``seed``) or a task id; an explicit ``seed`` wins over the row's."""
    if isinstance(row_or_task_id, dict):
        row = row_or_task_id
        if "task_id" not in row:
            raise ValueError("a row needs a 'task_id' (see servicegym.envs.integrations.dataset.task_rows)")
        task_id = str(row["task_id"])
        row_env = row.get("env_id")
        if env_id is None:
            env_id = row_env
        elif row_env is not None and resolve_env_id(str(row_env)) != resolve_env_id(env_id):
            raise ValueError(f"the row is of {row_env!r}, not {env_id!r}")
        if seed is None and row.get("seed") is not None:
            seed = int(row["seed"])
    else:
        task_id = str(row_or_task_id)
    if env_id is None:
        raise ValueError("env_id is needed (the row names none)")
    return resolve_env_id(str(env_id)), task_id, None if seed is None else int(seed)


UNANSWERED = "no result: the call was not run (see the next message)"


def _answer(assistant: dict[str, Any], env_assistant: dict[str, Any] | None,
            turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the env answered to the model's native tool calls, as messages that follow
    ``assistant``: ``turn`` with every ``tool_call_id`` the env gave a call (where it replaced the
    model's id) put back to the model's id for that call, matched by position; a call the env
    did not answer (it could not read it: no name, ...) gets a ``tool`` message saying so, before
    the rest of the turn (the env's error), as ``LLMAgentPolicy`` does."""
    model_ids = [c.get("id") for c in assistant.get("tool_calls") or []]
    env_ids = [c.get("id") for c in (env_assistant or {}).get("tool_calls") or []]
    mapping = {e: m for e, m in zip(env_ids, model_ids) if e != m and m}
    tools, rest = [], []
    for m in turn:
        if m.get("role") == "tool":
            tools.append({**m, "tool_call_id": mapping.get(m["tool_call_id"], m["tool_call_id"])})
        else:
            rest.append(dict(m))
    answered = {m["tool_call_id"] for m in tools}
    notes = [{"role": "tool", "tool_call_id": cid, "content": UNANSWERED} for cid in model_ids if cid not in answered]
    return [*tools, *notes, *rest]


async def rollout(
    env_id: str | None,
    row_or_task_id: dict[str, Any] | str,
    seed: int | None = None,
    *,
    client: LLMClient | None = None,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    llm: dict[str, Any] | None = None,
    env: gym.Env | None = None,
    env_kwargs: dict[str, Any] | None = None,
    tool_choice: Any = None,
    episode_budget_s: float | None = None,
    **chat_extra: Any,
) -> RolloutResult:
    """Play one episode of ``env_id`` with the model behind an OpenAI-compatible endpoint.

    ``row_or_task_id``: a row of ``servicegym.envs.integrations.dataset.task_rows`` (its
    ``task_id`` and ``seed``; ``env_id`` may then be ``None``) or a task id. The endpoint: an
    ``LLMClient`` (``client=``), or ``base_url`` and ``model`` (else ``SERVICEGYM_BASE_URL`` /
    ``SERVICEGYM_MODEL``), ``api_key`` (else ``$OPENAI_API_KEY``; local servers take any) and more
    ``LLMConfig`` fields in ``llm`` (``temperature``: 0.0 unless given, ``max_tokens``,
    ``deadline_s``, ``max_retries``...). Other keyword arguments are request fields
    (``logprobs=True``, ``extra_body={...}``). ``env`` reuses an env instance (left open);
    otherwise ``gym.make(env_id, **env_kwargs)`` is made and closed (``env_kwargs={"max_steps":
    N}`` caps the turns). ``episode_budget_s`` caps the seconds of model calls of the episode.

    Every request carries the env's tools (native tool calling); the reply's assistant message is
    appended as returned and stepped (``astep``), then the step's ``turn_messages()``. See the
    module docstring for the append-only guarantee. Never raises for an endpoint failure."""
    env_id, task_id, seed = _task_and_seed(env_id, row_or_task_id, seed)
    llm_client = _client(client, base_url, model, api_key, llm)
    own_env = env is None
    if env is None:
        env = gym.make(env_id, **(env_kwargs or {}))
    u = env.unwrapped
    budget = EpisodeBudget(episode_budget_s)
    usage = {"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0}
    completion_ids: list[str] = []
    finish_reasons: list[str | None] = []
    rewards: list[float] = []
    info: dict[str, Any] = {}
    reason, error, done, steps = "", None, False, 0
    try:
        _, reset_info = await u.areset(seed=seed, options={"task_id": task_id})
        tools = list(reset_info.get("tools") or u.tool_schemas())
        conversation = [dict(m) for m in u.messages]  # system prompt, the user's opening
        conversations = [conversation]
        while not done:
            try:
                result = await llm_client.achat(conversation, tools=tools, tool_choice=tool_choice, budget=budget,
                                                **chat_extra)
            except LLMError as err:
                reason, error = "policy_error", err.to_json()
                break
            add_usage(usage, result)
            completion_ids.append(result.id)
            finish_reasons.append(result.finish_reason)
            assistant = result.message()
            action = json.dumps(assistant, ensure_ascii=False) if result.tool_calls else (result.content or "")
            obs, reward, terminated, truncated, info = await u.astep(action)
            steps += 1
            rewards.append(float(reward))
            done = bool(terminated or truncated)
            conversation.append(assistant)
            turn = u.turn_messages()
            if turn and turn[0].get("role") == "system":  # a Workspace session ended: the chat restarts
                conversation = [dict(m) for m in turn]
                conversations.append(conversation)
                continue
            env_messages = u.messages
            env_assistant = env_messages[-len(turn) - 1] if len(env_messages) > len(turn) else None
            if not result.tool_calls and any(m.get("role") == "tool" for m in turn):
                # calls read out of the reply's text: no call of this assistant message to answer
                conversation.append({"role": "user", "content": obs})
            else:
                conversation.extend(_answer(assistant, env_assistant, turn))
        if done:
            reason = str(info.get("termination_reason", ""))
    finally:
        if own_env:
            env.close()
    success = bool(info.get("success", False)) if done else False
    return RolloutResult(
        env_id=env_id, task_id=task_id, seed=seed, conversations=conversations, tools=tools,
        reward=float(success), success=success, score=dict(info.get("score", {})) if done else {}, info=info,
        rewards=rewards, completion_ids=completion_ids, finish_reasons=finish_reasons, usage=usage, steps=steps,
        termination_reason=reason, error=error, domain=str(reset_info.get("domain", "")),
        model=llm_client.config.model,
    )
