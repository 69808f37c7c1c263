"""Learning curves while training with TRL: the policy being trained, evaluated every N steps on a
fixed sample of the frozen suite (``dev`` by default, or ``test``), logged and kept as rollouts.

    from servicegym.envs.integrations.trl_curve import LearningCurveCallback

    trainer = GRPOTrainer(...)                                   # as in servicegym.envs.integrations.trl
    LearningCurveCallback("servicegym/Delivery-v0", every=50, tasks=16).attach(trainer)
    trainer.train()                                               # then: servicegym report runs/trl/curve

At the start of training (``at_start``) and after every ``every``-th optimizer step the callback
plays ``tasks`` episodes (a sample of the split's ids fixed by ``seed``; one trial each, the
episode seeds of ``collect``) with ``ChatModelPolicy``: the trainer's model and processing class,
greedy, prompted and parsed as TRL's GRPO tool loop does it (the system prompt of ``trl_rows``, the
TRL environment's tools, tool calls parsed by TRL's ``parse_response``, the simulated user as the
``respond`` tool, a reply without a tool call ends the episode, the same token and tool-call
limits as the trainer's ``max_completion_length`` and ``max_tool_calling_iterations``). So the
curve measures the policy TRL trains, on tasks it does not train on.

What it writes, under ``out`` (default ``<output_dir>/curve``):

- ``rollouts.jsonl``: one record per episode in the format ``collect`` writes (tool lists once, in
  ``rollouts.tools.jsonl``), with ``step`` (the optimizer step) and ``policy`` ``<name>@step-<N>``,
  so ``servicegym report OUT/curve`` shows one row per evaluated step and ``servicegym view`` shows
  the episodes;
- ``curve.json``: ``{"env_id", "split", "task_ids", "seed", "steps": {"<N>": metrics}}``, the
  metrics being ``success_rate``, the mean of each reward score component (``rubric_fraction``,
  ``goal``...), ``episodes``, ``errors``, ``mean_steps`` and ``elapsed_s``;
- to the trainer's log (``Trainer.log``: the console, ``log_history``, ``report_to`` loggers):
  ``eval/success_rate`` and ``eval/<component>`` (``eval/rubric_fraction``...).

A resumed run (``trainer.train(resume_from_checkpoint=...)``) keeps the points (and episodes) up to
its checkpoint's step and redoes later ones; a fresh run into the same directory starts the curve
afresh. Evaluation runs in the
trainer's process between steps, with the training model's own ``generate`` (also when the
trainer generates with vLLM), on the main process only: meant for single-process runs.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servicegym.envs.environments.base import STOP
from servicegym.envs.running.episodes import EpisodeWorker, Job, PolicyMaker, episode_seed
from servicegym.envs.running.rollouts import tools_path
from servicegym.envs.running.vector import resolve_env_id

__all__ = ["ChatModelPolicy", "LearningCurveCallback", "curve_task_ids", "tool_messages"]

_BLOCK = re.compile(r'<(tool_result|tool_error) name="([^"]*)" call_id="[^"]*">(.*?)</\1>', re.S)


def tool_messages(obs: str, names: Sequence[str]) -> list[dict[str, Any]]:
    """The observation of an action of tool calls as the ``tool`` messages TRL appends after them
    (``{"role": "tool", "name", "content"}``, one per result block, a tool error as ``Error: ...``),
    what follows the blocks (a new session, a notice) added to the last one. An observation without
    result blocks becomes one message named after the first call."""
    import html

    out = []
    for m in _BLOCK.finditer(obs):
        body = m.group(3)
        out.append({"role": "tool", "name": html.unescape(m.group(2)),
                    "content": f"Error: {body}" if m.group(1) == "tool_error" else body})
    rest = _BLOCK.sub("", obs).strip()
    if not out:
        return [{"role": "tool", "name": names[0] if names else "tool", "content": rest}]
    if rest:
        out[-1]["content"] = f"{out[-1]['content']}\n{rest}"
    return out


class ChatModelPolicy:
    """A transformers causal LM and its tokenizer playing an env made with ``user_tool=True`` the
    way TRL's GRPO tool loop plays it, greedily: the prompt is ``trl_prompt(system prompt)`` and the
    opening, rendered with the TRL environment's tools (``trl_tools``, as ``apply_chat_template``
    renders them); a completion is parsed by TRL's ``parse_response`` (the tokenizer needs a
    response schema: ``trl.chat_template_utils.add_response_schema``, which ``GRPOTrainer`` sets);
    its tool calls are the action, and the results come back as ``tool`` messages whose tokens are
    appended as TRL appends them; a completion without a tool call ends the episode (its text and
    ###STOP### go to the user). The episode also ends when the completion (model and tool tokens)
    reaches ``max_completion_length`` tokens or after ``max_tool_calls`` rounds of tool calls, as
    in TRL. ``max_new_tokens`` bounds one completion (default: what is left of the budget).

    A policy object for ``collect`` / ``run_episode`` (``reset(env, obs, info)``, ``act(obs)``);
    one episode at a time."""

    name = "chat-model"

    def __init__(self, model: Any, tokenizer: Any, env_id: str, *, env_kwargs: dict[str, Any] | None = None,
                 max_completion_length: int = 4096, max_tool_calls: int | None = None,
                 max_new_tokens: int | None = None, chat_template_kwargs: dict[str, Any] | None = None) -> None:
        from transformers.utils import get_json_schema

        from servicegym.envs.integrations.trl import environment_class, trl_tools

        self.model = model
        self.tokenizer = tokenizer
        self.env_id = resolve_env_id(env_id)
        self.max_completion_length = int(max_completion_length)
        self.max_tool_calls = max_tool_calls
        self.max_new_tokens = max_new_tokens
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        kwargs = {k: v for k, v in (env_kwargs or {}).items() if k != "user_tool"}
        probe = environment_class(self.env_id, **kwargs)()
        try:
            self.tools = [get_json_schema(f) for f in trl_tools(probe).values()]
        finally:
            probe._env.close()
        eos = [tokenizer.eos_token_id]
        extra = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos += extra if isinstance(extra, list) else [extra] if extra is not None else []
        self.eos_token_ids = sorted({int(e) for e in eos if e is not None})
        self.prompt_ids: list[int] = []
        self.ids: list[int] = []
        self.completions = 0  # generations this episode
        self._calls: list[str] = []  # names of the calls of the last action
        self._ended = False

    # ----- policy protocol ---------------------------------------------------------------------
    def reset(self, env: Any, obs: str, info: dict[str, Any]) -> None:
        """Start an episode: the prompt of ``trl_rows`` (system prompt rewritten by ``trl_prompt``,
        then the opening), tokenized with the tools."""
        from servicegym.envs.integrations.trl import trl_prompt

        messages = [{"role": "system", "content": trl_prompt(str(info.get("system_prompt") or ""))},
                    {"role": "user", "content": obs}]
        self.prompt_ids = list(self._render(messages, add_generation_prompt=True))
        self.ids = list(self.prompt_ids)
        self.completions = 0
        self._calls = []
        self._ended = False

    def act(self, obs: str) -> str:
        """The next action: the tool calls of the model's next completion as an OpenAI assistant
        message (JSON), or, once the model replies without a tool call (or a limit is reached),
        its text with ###STOP###, then ###STOP### alone (a Workspace episode ends one session per STOP)."""
        if self._ended:
            return STOP
        if self._calls:
            self.ids += self._tool_suffix(tool_messages(obs, self._calls))
            self._calls = []
        budget = self.max_completion_length - (len(self.ids) - len(self.prompt_ids))
        limit = getattr(getattr(self.model, "config", None), "max_position_embeddings", None)
        if budget <= 0 or (limit and len(self.ids) >= limit):
            return self._end("")
        new = self._generate(min(budget, self.max_new_tokens or budget))
        prefix, self.ids = self.ids, self.ids + new
        self.completions += 1
        from trl.chat_template_utils import parse_response

        msg = parse_response(self.tokenizer, new, prefix=prefix, tools=self.tools)
        content = str(msg.get("content") or "")
        calls = [c["function"] for c in msg.get("tool_calls") or [] if isinstance(c.get("function"), dict)]
        # TRL runs the calls of the first completion and of at most max_tool_calls - 1 more
        if not calls or (self.max_tool_calls is not None and self.completions > self.max_tool_calls):
            return self._end(content)
        self._calls = [str(c.get("name")) for c in calls]
        tool_calls = [{"id": f"call_{k}", "type": "function",
                       "function": {"name": str(c.get("name")),
                                    "arguments": json.dumps(c.get("arguments") or {}, ensure_ascii=False, default=str)}}
                      for k, c in enumerate(calls, 1)]
        return json.dumps({"role": "assistant", "content": content, "tool_calls": tool_calls}, ensure_ascii=False)

    # ----- internals ---------------------------------------------------------------------------
    def _end(self, content: str) -> str:
        self._ended = True
        return json.dumps({"role": "assistant", "content": f"{content.strip()}\n\n{STOP}".strip()}, ensure_ascii=False)

    def _render(self, messages: list[dict[str, Any]], add_generation_prompt: bool, tools: bool = True) -> list[int]:
        out = self.tokenizer.apply_chat_template(messages, tools=self.tools if tools else None,
                                                 add_generation_prompt=add_generation_prompt, tokenize=True,
                                                 return_dict=False, **self.chat_template_kwargs)
        return list(out["input_ids"] if isinstance(out, dict) else out)

    def _tool_suffix(self, messages: list[dict[str, Any]]) -> list[int]:
        """The tokens of tool results and the next generation prompt, as TRL's ``_get_tool_suffix_ids``
        computes them: rendered after a dummy tool call, everything past its end-of-turn."""
        dummy = [{"role": "user", "content": "dummy"},
                 {"role": "assistant", "content": "",
                  "tool_calls": [{"type": "function", "function": {"name": messages[0]["name"], "arguments": {}}}]}]
        prefix = self._render(dummy, add_generation_prompt=False, tools=False)
        full = self._render(dummy + messages, add_generation_prompt=True, tools=False)
        ends = [i for i, t in enumerate(prefix) if t == self.tokenizer.eos_token_id]
        if ends:
            prefix = prefix[: ends[-1] + 1]
        if full[: len(prefix)] != prefix:
            raise ValueError("the chat template does not render tool results after a tool call as a suffix")
        return full[len(prefix):]

    def _generate(self, max_new_tokens: int) -> list[int]:
        import torch
        from transformers import GenerationConfig

        device = next(self.model.parameters()).device
        ids = torch.tensor([self.ids], dtype=torch.long, device=device)
        config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, use_cache=True,
                                  eos_token_id=self.eos_token_ids, pad_token_id=self.tokenizer.pad_token_id)
        with torch.no_grad():
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
        new = out[0, ids.shape[1]:].tolist()
        for k, t in enumerate(new):
            if t in self.eos_token_ids:
                return new[: k + 1]
        return new


def curve_task_ids(env_id: str, split: str = "dev", n: int = 8, seed: int = 0,
                   env_kwargs: dict[str, Any] | None = None) -> list[str]:
    """``n`` task ids of ``split`` (all of them when it has no more), a sample fixed by ``seed``,
    in the split's order."""
    import gymnasium as gym

    env = gym.make(resolve_env_id(env_id), **(env_kwargs or {}))
    try:
        ids = list(env.unwrapped.task_ids(split))
    finally:
        env.close()
    if not ids:
        raise ValueError(f"{env_id} has no {split!r} tasks")
    if n >= len(ids):
        return ids
    keep = set(random.Random(seed).sample(range(len(ids)), n))
    return [t for k, t in enumerate(ids) if k in keep]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _trainer_callback_base() -> type:
    try:
        from transformers import TrainerCallback
    except ImportError:  # documented: the callback needs the trl extra; the module still imports
        return object
    return TrainerCallback


class LearningCurveCallback(_trainer_callback_base()):  # type: ignore[misc]
    """A ``transformers.TrainerCallback`` that evaluates the model being trained on a fixed sample of
    ``tasks`` tasks of ``split`` at the start (``at_start``) and every ``every`` optimizer steps;
    see the module docstring for what it plays, logs and writes. ``attach(trainer)`` adds it to
    the trainer and lets it log through ``trainer.log`` (to ``report_to``); added some other way it
    still writes its files and appends its metrics to ``state.log_history``.

    ``out``: the curve's directory (default ``<args.output_dir>/curve``); ``name``: the policy name
    in the records (``<name>@step-<N>``; default the model's ``name_or_path`` basename);
    ``env_kwargs``: ``gym.make`` arguments (``user_tool=True`` is added); ``max_completion_length``
    / ``max_tool_calls``: default the trainer's ``max_completion_length`` /
    ``max_tool_calling_iterations``; ``max_new_tokens``: one completion's limit (default the budget
    left)."""

    def __init__(self, env_id: str, *, every: int = 50, tasks: int = 8, split: str = "dev", seed: int = 0,
                 out: str | os.PathLike[str] | None = None, at_start: bool = True, name: str | None = None,
                 env_kwargs: dict[str, Any] | None = None, max_completion_length: int | None = None,
                 max_tool_calls: int | None = None, max_new_tokens: int | None = None) -> None:
        if every < 1 or tasks < 1:
            raise ValueError(f"every and tasks must be at least 1, got every={every}, tasks={tasks}")
        if split not in ("dev", "test", "train"):
            raise ValueError(f"split must be dev or test (or train), got {split!r}")
        self.env_id = resolve_env_id(env_id)
        self.every, self.tasks, self.split, self.seed = int(every), int(tasks), split, int(seed)
        self.out = None if out is None else Path(out)
        self.at_start = at_start
        self.name = name
        self.env_kwargs = {**(env_kwargs or {}), "user_tool": True}
        self.max_completion_length = max_completion_length
        self.max_tool_calls = max_tool_calls
        self.max_new_tokens = max_new_tokens
        self.trainer: Any = None
        self.task_ids = curve_task_ids(self.env_id, split, self.tasks, self.seed, env_kwargs)
        self.points: dict[int, dict[str, Any]] = {}
        self._worker: EpisodeWorker | None = None
        self._policy: ChatModelPolicy | None = None
        self._stored_tools: set[str] = set()
        self._keys: tuple[str, ...] = ()

    def attach(self, trainer: Any) -> LearningCurveCallback:
        """Add the callback to ``trainer`` and log through its ``log``; returns the callback."""
        self.trainer = trainer
        trainer.add_callback(self)
        return self

    @property
    def rollouts_path(self) -> Path:
        """``<out>/rollouts.jsonl``: the episodes (``servicegym report`` / ``view`` read it)."""
        if self.out is None:
            raise RuntimeError("the curve's directory is set at the start of training (or pass out=)")
        return self.out / "rollouts.jsonl"

    # ----- TrainerCallback -----------------------------------------------------------------------
    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, processing_class: Any = None,
                       **kwargs: Any) -> None:
        if self.out is None:
            self.out = Path(args.output_dir) / "curve"
        if self.max_completion_length is None:
            self.max_completion_length = int(getattr(args, "max_completion_length", None) or 4096)
        if self.max_tool_calls is None:
            self.max_tool_calls = getattr(args, "max_tool_calling_iterations", None)
        self.out.mkdir(parents=True, exist_ok=True)
        self._load(state.global_step)
        if self.at_start and state.global_step not in self.points:
            self._evaluate(args, state, model, processing_class)

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, processing_class: Any = None,
                    **kwargs: Any) -> None:
        if state.global_step % self.every == 0:
            self._evaluate(args, state, model, processing_class)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    # ----- evaluation ------------------------------------------------------------------------------
    def evaluate(self, model: Any, tokenizer: Any, step: int) -> dict[str, Any]:
        """Play the sample with ``model`` and ``tokenizer`` now, as at step ``step``: append the
        episodes to ``rollouts.jsonl`` (replacing any of that step), record the point in
        ``curve.json`` and return its metrics."""
        if self.out is None:
            raise RuntimeError("pass out= to evaluate outside training")
        self.out.mkdir(parents=True, exist_ok=True)
        if not self.points and not self._stored_tools:
            self._load()
        policy = self._policy
        if policy is None or policy.model is not model or policy.tokenizer is not tokenizer:
            policy = self._policy = ChatModelPolicy(
                model, tokenizer, self.env_id, env_kwargs=self.env_kwargs,
                max_completion_length=self.max_completion_length or 4096, max_tool_calls=self.max_tool_calls,
                max_new_tokens=self.max_new_tokens)
        name = self.name or Path(str(getattr(model, "name_or_path", "") or "model").rstrip("/")).name or "model"
        maker = PolicyMaker.from_policy(policy, f"{name}@step-{step}")
        if self._worker is None:
            self._worker = EpisodeWorker(self.env_id, self.env_kwargs, maker, inline_tools=False)
            self._keys = _reward_keys(self._worker.env)
        self._worker.maker = maker
        t0 = time.perf_counter()
        training = bool(getattr(model, "training", False))
        model.eval()
        records = []
        try:
            for tid in self.task_ids:
                result = self._worker.run(Job(tid, 0, episode_seed(self.seed, tid, 0)))
                if result.tools is not None and result.tools[0] not in self._stored_tools:
                    with open(tools_path(self.rollouts_path), "a", encoding="utf-8") as f:
                        f.write(f'{{"digest": "{result.tools[0]}", "tools": {result.tools[1]}}}\n')
                    self._stored_tools.add(result.tools[0])
                records.append({**json.loads(result.line), "step": step})
        finally:
            if training:
                model.train()
        self._append(records, step)
        metrics = self._metrics(records, time.perf_counter() - t0)
        self.points[step] = metrics
        self._save()
        return metrics

    def _evaluate(self, args: Any, state: Any, model: Any, tokenizer: Any) -> None:
        if not state.is_world_process_zero or model is None or tokenizer is None:
            return
        metrics = self.evaluate(model, tokenizer, state.global_step)
        logs = {f"eval/{k}": v for k, v in metrics.items() if k not in ("episodes", "errors", "elapsed_s")}
        if self.trainer is not None:
            from transformers import Trainer

            # Trainer.log, not a subclass's: GRPOTrainer.log would fold its pending training metrics in
            Trainer.log(self.trainer, logs)
        else:
            state.log_history.append({**logs, "step": state.global_step})

    def _metrics(self, records: list[dict[str, Any]], elapsed: float) -> dict[str, Any]:
        n = len(records)
        out: dict[str, Any] = {"success_rate": sum(bool(r.get("success")) for r in records) / n if n else 0.0}
        for key in self._keys:
            values = [float(r["score"][key]) for r in records
                      if isinstance((r.get("score") or {}).get(key), (int, float)) and not isinstance(r["score"][key], bool)]
            if values:
                out[key] = sum(values) / len(values)
        out["mean_steps"] = sum(int(r.get("steps", 0)) for r in records) / n if n else 0.0
        out.update(episodes=n, errors=sum(r.get("error") is not None for r in records), elapsed_s=round(elapsed, 3))
        return out

    # ----- files ----------------------------------------------------------------------------------
    def _load(self, step: int | None = None) -> None:
        """What an earlier run left in ``out``: the stored tool lists, and the points of curve.json
        (of the same env and tasks) up to ``step``, the step training starts from: a resumed run keeps
        the points up to its checkpoint and redoes the later ones, a fresh run (step 0) starts the
        curve afresh. ``rollouts.jsonl`` keeps the records of the points kept, no others."""
        assert self.out is not None
        side = tools_path(self.out / "rollouts.jsonl")
        if side.is_file():
            for line in side.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    self._stored_tools.add(json.loads(line).get("digest"))
        curve = self.out / "curve.json"
        points: dict[int, dict[str, Any]] = {}
        if curve.is_file():
            data = json.loads(curve.read_text(encoding="utf-8"))
            if data.get("env_id") == self.env_id and data.get("task_ids") == self.task_ids:
                points = {int(k): v for k, v in (data.get("steps") or {}).items()}
        if step is not None:
            points = {k: v for k, v in points.items() if 0 < step and k <= step}
            path = self.out / "rollouts.jsonl"
            if path.is_file():
                lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
                kept = [line + "\n" for line in lines if json.loads(line).get("step") in points]
                if len(kept) != len(lines):
                    _write_atomic(path, "".join(kept))
        self.points = points
        if curve.is_file() or points:
            self._save()

    def _append(self, records: list[dict[str, Any]], step: int) -> None:
        path = self.rollouts_path
        lines = [json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records]
        if step in self.points and path.is_file():  # evaluated again (a resumed run): replace that step's episodes
            kept = [line + "\n" for line in path.read_text(encoding="utf-8").splitlines()
                    if line.strip() and json.loads(line).get("step") != step]
            _write_atomic(path, "".join(kept + lines))
            return
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(lines))

    def _save(self) -> None:
        assert self.out is not None
        data = {"env_id": self.env_id, "split": self.split, "task_ids": self.task_ids, "seed": self.seed,
                "every": self.every, "rollouts": "rollouts.jsonl",
                "steps": {str(k): self.points[k] for k in sorted(self.points)}}
        _write_atomic(self.out / "curve.json", json.dumps(data, indent=1) + "\n")


def _reward_keys(env: Any) -> tuple[str, ...]:
    base = env.unwrapped
    counts = set(getattr(base, "count_keys", ()))
    return tuple(k for k in getattr(base, "score_keys", ()) if k not in counts)
