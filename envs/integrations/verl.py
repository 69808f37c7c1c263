"""verl adapter: an agent loop that plays one servicegym episode per trajectory, token in, token out.

verl (https://github.com/volcengine/verl) runs rollouts as *agent loops*: coroutines, one per
dataset row, that talk to its inference servers in token ids and return an ``AgentLoopOutput``
(prompt ids, response ids, a response mask, log-probs, a reward). verl dropped its
user-simulator interface, so a simulated user needs an agent loop of its own; this is it.
Written against verl 0.9.1, read in its code: ``verl/experimental/agent_loop/agent_loop.py``
(``AgentLoopBase``, ``AgentLoopOutput``, ``register``, ``AgentLoopWorker._run_agent_loop`` /
``_postprocess``), ``tool_agent_loop.py`` (the pattern followed here), ``tool_parser.py``
(``ToolParser``) and ``verl/utils/tokenizer/continuous_token*.py`` (the incremental tokenizer).

``ServiceGymAgentLoop``, registered as ``"servicegym"``, for one row (``env_id``, ``task_id``,
``seed``; ``servicegym dataset`` or ``verl_rows`` write them):

1. makes its own env (``gym.make(env_id, **env_kwargs)``; nothing is shared between the
   coroutines of a worker) and resets it to the row's task and seed;
2. renders the env's system prompt and opening with the tokenizer's chat template, tools from
   the env (``env.unwrapped.tool_schemas()``), as verl's own loops do (its Continuous Token
   builder, ``AgentLoopBase.ct_build_initial_tokens``);
3. generates through ``self.server_manager.generate(request_id=..., prompt_ids=...,
   sampling_params=...)``, ``max_tokens`` capped at what is left of ``response_length``;
4. reads tool calls from the completion with verl's tool parser
   (``actor_rollout_ref.rollout.multi_turn.format``, ``hermes``: ``<tool_call>`` blocks, by
   default) and steps the env (``await env.unwrapped.astep(action)``) with them as an OpenAI
   assistant message; a completion without calls goes to the user as a message (one holding the
   parser's start tag that the parser could not read goes to the env as raw text, so its parser
   says what was wrong);
5. appends what the step added (``env.unwrapped.turn_messages()``: tool results, the user's
   reply, error turns) as the token delta of those messages under the chat template
   (``ct_merge_context_msg``): earlier tokens never change, so the trajectory is exactly the
   tokens the model saw and produced;
6. stops when the episode ends, the response budget (``rollout.response_length``) is spent, or
   ``multi_turn.max_assistant_turns`` (or ``max_turns`` of the loop's config) is reached.

Output: ``response_mask`` is 1 exactly on the generated tokens (log-probs, when the server gives
them, there too; 0.0 elsewhere) and 0 on the env's tokens (and on the few boundary tokens a
model-family builder inserts, e.g. Qwen's newline after ``<|im_end|>``); ``reward_score`` is
the episode's strict success (``info["success"]``: 1.0 or 0.0; 0.0 for an episode the budget
cut short), so verl puts it on the last response token (``rm_scores``) and computes no reward of
its own; ``num_turns`` counts the prompt, each generation and each env turn. ``extra_fields``:
``reward_extra_info`` (the same keys for every env, logged by verl: ``success``, ``env_steps``,
``tool_errors``, ``length_cut``, ``env_truncated``), ``servicegym_score`` (the env's
``info["score"]``: every component, e.g. ``rubric_fraction``, ``goal``/``process``/``protection``,
``proc``/``comp``; zeros of ``score_keys`` when the episode did not finish),
``turn_scores`` (each step's env reward; Workspace pays each session there), ``tool_rewards``
(empty), ``termination_reason`` (the env's, ``user_error`` when an LLM user's endpoint failed, or
``response_length`` / ``max_turns`` / ``empty_env_turn`` when the loop stopped first) and
``judge_error`` (``""`` unless the LLM judge of ``judge="llm"`` could not score the episode, which
then pays 0.0). A model endpoint inside the episode (``user="llm"``, ``judge="llm"``) never raises
out of ``run``: each call is bounded by its ``LLMConfig`` (retries, ``deadline_s``).

A Workspace episode is 20 sessions; a new session restarts the env's chat, and here its system
message and opening are appended to the same trajectory (the whole episode is one trajectory).

Registration: ``@register("servicegym")`` fills verl's registry in the process that imports this
module; verl's agent-loop workers are Ray actors, so point
``actor_rollout_ref.rollout.agent.agent_loop_config_path`` at a YAML list naming the class
(``examples/verl/servicegym_agent_loop.yaml``) and pick the loop per row (``agent_name``
column) or for all rows (``actor_rollout_ref.rollout.agent.default_agent_loop=servicegym``).

    python -m servicegym.envs.integrations.verl --env servicegym/Delivery-v0 --split train --n 2000 --out train.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from typing import Any
from uuid import uuid4

import gymnasium as gym

from servicegym.envs.integrations.dataset import task_rows, write_rows
from servicegym.envs.tasks.sources import SPLITS

try:
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
    from verl.experimental.agent_loop.tool_parser import ToolParser
    from verl.tools.schemas import OpenAIFunctionToolSchema
    from verl.utils.rollout_trace import rollout_trace_op
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(f"servicegym's verl adapter needs verl: pip install 'servicegym[verl]' ({err})") from err

logger = logging.getLogger(__name__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))

AGENT_NAME = "servicegym"
# the keys of extra_fields["reward_extra_info"]: the same for every env, because verl collates a
# batch's reward_extra_info by the first row's keys
REWARD_EXTRA_KEYS = ("success", "env_steps", "tool_errors", "length_cut", "env_truncated")


def _scalar(value: Any) -> Any:
    """A dataset value as a plain Python object (verl hands rows over as numpy items)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value


def _plain(value: Any) -> Any:
    """An OmegaConf container (a loop option from verl's YAML) as plain dicts and lists."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - omegaconf comes with verl
        return value
    if isinstance(value, (DictConfig, ListConfig)):
        return OmegaConf.to_container(value, resolve=True)
    return value


def _row_env_kwargs(value: Any) -> dict[str, Any]:
    value = _plain(_scalar(value))
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"a row's env_kwargs must be an object (or its JSON), got {type(value).__name__}")
    return value


def parser_tools(schemas: list[dict[str, Any]]) -> list[Any]:
    """The env's OpenAI function schemas as verl's ``OpenAIFunctionToolSchema`` (what its tool
    parsers take; some use the parameter types). verl's model is stricter than JSON Schema (every
    property needs a ``type``), so a property without one takes its ``anyOf`` types, else string."""
    out = []
    for schema in schemas:
        fn = schema.get("function", schema)
        params = fn.get("parameters") or {}
        props = {}
        for key, prop in (params.get("properties") or {}).items():
            prop = prop if isinstance(prop, dict) else {}
            kind = prop.get("type") or [o["type"] for o in prop.get("anyOf", []) if isinstance(o, dict) and "type" in o]
            if isinstance(kind, list) and len(kind) == 1:
                kind = kind[0]
            entry: dict[str, Any] = {"type": kind or "string", "description": prop.get("description")}
            if isinstance(prop.get("enum"), list):
                entry["enum"] = prop["enum"]
            props[key] = entry
        try:
            out.append(OpenAIFunctionToolSchema.model_validate({
                "type": "function",
                "function": {"name": fn["name"], "description": fn.get("description") or "",
                             "parameters": {"type": "object", "properties": props, "required": params.get("required") or []}},
            }))
        except Exception as err:  # a schema verl cannot model: the parsers that need types fall back to strings
            logger.warning("tool %r left out of the parser's schemas: %s", fn.get("name"), err)
    return out


@register(AGENT_NAME)
class ServiceGymAgentLoop(AgentLoopBase):
    """One servicegym episode per ``run``, token in, token out (see the module docstring).

    Options (keys of this loop's entry in ``agent_loop_config_path``, besides ``name`` and
    ``_target_``): ``env_kwargs`` (passed to ``gym.make``, e.g. ``{user_tool: true}`` or
    ``{tasks: /path/tasks.json}``; a row's own ``env_kwargs`` column, an object or its JSON,
    overrides them) and ``max_turns`` (assistant turns; default
    ``multi_turn.max_assistant_turns``, unlimited when null: the env's step limit ends the episode).
    """

    def __init__(self, *args: Any, tools: Any = None, env_kwargs: dict[str, Any] | None = None,
                 max_turns: int | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        del tools  # verl's configured tool list: servicegym's tools come from the env
        multi_turn = self.rollout_config.multi_turn
        self.tool_parser = ToolParser.get_tool_parser(multi_turn.get("format") or "hermes", self.tokenizer)
        self.prompt_length = int(self.rollout_config.prompt_length)
        self.response_length = int(self.rollout_config.response_length)
        self.max_turns = max_turns if max_turns is not None else multi_turn.get("max_assistant_turns")
        self.env_kwargs = dict(_plain(env_kwargs) or {})
        # a completion ends at one of these (the chat template's end-of-turn token is special)
        self._end_ids = set(self.tokenizer.all_special_ids) | set(self.tool_parser.stop_token_ids)

    # ----- overridable -------------------------------------------------------------------------
    def make_env(self, row: dict[str, Any]) -> gym.Env:
        """The env of one run: ``gym.make(row["env_id"], **env_kwargs)``, a new one per call."""
        env_id = _scalar(row.get("env_id"))
        if not env_id:
            raise ValueError("the row has no env_id; rows from `servicegym dataset` or verl_rows() carry it")
        return gym.make(str(env_id), **{**self.env_kwargs, **_row_env_kwargs(row.get("env_kwargs"))})

    # ----- the loop ----------------------------------------------------------------------------
    @rollout_trace_op
    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        env = self.make_env(kwargs)
        try:
            return await self._episode(env, kwargs, sampling_params)
        finally:
            env.close()

    def _sampling_params(self, base: dict[str, Any], remaining: int) -> dict[str, Any]:
        params = dict(base)
        limit = params.pop("max_new_tokens", None) or params.get("max_tokens")
        params["max_tokens"] = min(int(limit), remaining) if limit else remaining
        stop = self.tool_parser.stop_token_ids
        if stop:
            params["stop_token_ids"] = sorted(set(params.get("stop_token_ids") or []) | set(stop))
        return params

    async def _action(self, generated: list[int], tools: list[Any]) -> str:
        """The env's action for one completion: its calls as read by verl's tool parser, as an
        OpenAI assistant message; without calls, the text as a message to the user."""
        ids = list(generated)
        while ids and ids[-1] in self._end_ids:
            ids.pop()
        content, calls = await self.tool_parser.extract_tool_calls(ids, tools)
        content = content or ""
        if calls:
            tool_calls = []
            for call in calls:
                entry: dict[str, Any] = {"type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                if call.tool_call_id:
                    entry["id"] = call.tool_call_id
                tool_calls.append(entry)
            return json.dumps({"role": "assistant", "content": content.strip(), "tool_calls": tool_calls},
                              ensure_ascii=False)
        start = getattr(self.tool_parser, "tool_call_start_token", None)
        if start:
            text = await self.loop.run_in_executor(None, self.tokenizer.decode, ids)
            if start in text:
                return text  # a call the parser could not read: the env's parser says what is wrong
        return json.dumps({"role": "assistant", "content": content}, ensure_ascii=False)

    async def _episode(self, env: gym.Env, row: dict[str, Any], sampling_params: dict[str, Any]) -> AgentLoopOutput:
        u = env.unwrapped
        task_id = _scalar(row.get("task_id"))
        seed = _scalar(row.get("seed"))
        options = {"task_id": str(task_id)} if task_id is not None else None
        await u.areset(seed=None if seed is None else int(seed), options=options)
        tools = u.tool_schemas()
        schemas = parser_tools(tools)
        messages = [dict(m) for m in u.messages]  # system prompt, opening
        stream = await self.ct_build_initial_tokens(messages, tools=tools)
        mask: list[int] = []
        logprobs: list[float] | None = None
        priority = int(_scalar(row.get("priority", 0)) or 0)
        full_det = bool(self.rollout_config.get("full_determinism", False))
        request_id = f"det-{priority}" if full_det else uuid4().hex
        metrics: dict[str, Any] = {"generate_sequences": 0.0, "tool_calls": 0.0}
        server_extra: dict[str, Any] = {}
        turn_scores: list[float] = []
        assistant_turns = env_turns = 0
        info: dict[str, Any] = {}
        done = truncated = False
        reason = ""

        while True:
            remaining = self.response_length - len(mask)
            if remaining <= 0:
                reason = "response_length"
                break
            if self.max_turns and assistant_turns >= self.max_turns:
                reason = "max_turns"
                break
            t0 = time.perf_counter()
            out = await self.server_manager.generate(
                request_id=request_id,
                prompt_ids=stream,
                sampling_params=self._sampling_params(sampling_params, remaining),
                priority=priority,
            )
            metrics["generate_sequences"] += time.perf_counter() - t0
            if out.num_preempted is not None:
                metrics["num_preempted"] = metrics.get("num_preempted", 0) + out.num_preempted
            extra = dict(out.extra_fields or {})
            if not server_extra:
                server_extra = extra
            elif extra.get("max_global_steps") is not None:
                server_extra["max_global_steps"] = extra["max_global_steps"]
            generated = list(out.token_ids)
            out_logprobs = list(out.log_probs) if out.log_probs else None
            if out_logprobs is not None and logprobs is None:
                logprobs = [0.0] * len(mask)
            if logprobs is not None and out_logprobs is None:
                out_logprobs = [0.0] * len(generated)
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                stream, generated, mask, logprobs, assistant_logprobs=out_logprobs)
            stream = merged.token_ids
            assistant_turns += 1
            closed = bool(generated) and generated[-1] in self._end_ids
            if not closed and len(mask) >= self.response_length:
                reason = "response_length"  # cut mid-completion: the action is incomplete, the env is not stepped
                break

            action = await self._action(generated, schemas)
            t0 = time.perf_counter()
            _, reward, terminated, truncated, info = await u.astep(action)
            metrics["tool_calls"] += time.perf_counter() - t0
            turn_scores.append(float(reward))
            if terminated or truncated:
                done = True
                reason = str(info.get("termination_reason", ""))
                break
            turn = [dict(m) for m in u.turn_messages()]
            if not turn:  # nothing to answer the model with: the conversation cannot go on
                reason = "empty_env_turn"
                break
            if not closed and self.tokenizer.eos_token_id is not None:
                # a completion cut by a per-turn max_tokens: close the turn (a template token, mask 0)
                stream = [*stream, self.tokenizer.eos_token_id]
                mask = [*mask, 0]
                if logprobs is not None:
                    logprobs = [*logprobs, 0.0]
            previous = [*messages, self._assistant_record(u, turn)]
            updated = previous + turn
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(
                previous, updated, stream, mask, logprobs, tools=tools)
            if len(new_mask) >= self.response_length:
                reason = "response_length"  # the env's turn does not fit: left out, as verl's ToolAgentLoop does
                break
            stream, mask = merged.token_ids, new_mask
            if logprobs is not None:
                logprobs = new_logprobs
            messages = updated
            env_turns += 1

        success = bool(info.get("success", False)) if done else False
        score = dict(info.get("score") or {}) if done else {k: 0.0 for k in getattr(u, "score_keys", ())}
        n = len(mask)
        prompt_ids = stream[: len(stream) - n]
        response_ids = stream[len(stream) - n:]
        cut = self.response_length
        extra_fields = {
            **server_extra,
            "turn_scores": turn_scores,
            "tool_rewards": [],
            "reward_extra_info": {
                "success": float(success),
                "env_steps": float(len(turn_scores)),
                "tool_errors": float(info.get("tool_errors", 0)),
                "length_cut": float(reason == "response_length"),
                "env_truncated": float(bool(truncated)),
            },
            "servicegym_score": score,
            "termination_reason": reason,
            "judge_error": str(info.get("judge_error") or "") if done else "",
        }
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[:cut],
            response_mask=mask[:cut],
            response_logprobs=logprobs[:cut] if logprobs is not None else None,
            reward_score=float(success),
            num_turns=assistant_turns + env_turns + 1,
            metrics=metrics,
            extra_fields=extra_fields,
        )

    @staticmethod
    def _assistant_record(u: Any, turn: list[dict[str, Any]]) -> dict[str, Any]:
        """The env's record of the assistant message the turn answers (the chat history the
        incremental tokenizer appends to; its tokens are the model's own, never re-rendered)."""
        msgs = u.messages
        k = len(msgs) - len(turn) - 1
        if turn[0].get("role") != "system" and k >= 0 and msgs[k].get("role") == "assistant":
            return dict(msgs[k])
        return {"role": "assistant", "content": ""}  # a Workspace session ended: the env's chat restarted


# ----- dataset rows ----------------------------------------------------------------------------
def verl_rows(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
              env_kwargs: dict[str, Any] | None = None, agent_name: str = AGENT_NAME) -> list[dict[str, Any]]:
    """``task_rows`` (``servicegym.envs.integrations.dataset``) with the columns verl reads:
    ``agent_name`` (the loop of the row), ``data_source`` (the env id: verl groups validation
    metrics by it), ``extra_info`` (``index``, ``task_id``) and ``env_kwargs`` (JSON, the env
    arguments the rows were made with, which the loop uses too)."""
    rows = task_rows(env_id, split, n, seed, env_kwargs)
    for i, row in enumerate(rows):
        row["agent_name"] = agent_name
        row["data_source"] = row["env_id"]
        row["extra_info"] = {"index": i, "task_id": row["task_id"]}
        row["env_kwargs"] = json.dumps(env_kwargs or {}, ensure_ascii=False)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m servicegym.envs.integrations.verl",
                                     description="write verl dataset rows (JSON lines) for the servicegym agent loop")
    parser.add_argument("--env", default="servicegym/Delivery-v0")
    parser.add_argument("--split", default="train", choices=SPLITS)
    parser.add_argument("--n", type=int, default=None, help="rows (default: the split's listed tasks)")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the rows' episode seeds")
    parser.add_argument("--user-tool", action="store_true", help="envs made with user_tool=True (the respond tool)")
    parser.add_argument("--out", required=True, help="the JSONL file to write (verl's RLHFDataset reads .jsonl)")
    args = parser.parse_args(argv)
    rows = verl_rows(args.env, args.split, args.n, args.seed, {"user_tool": True} if args.user_tool else None)
    path = write_rows(rows, args.out)
    print(f"{len(rows)} rows of {rows[0]['env_id'] if rows else args.env} split={args.split} -> {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
