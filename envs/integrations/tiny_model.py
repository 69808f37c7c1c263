"""A tiny randomly initialised chat model for running the TRL path on a CPU, offline.

``write_tiny_model(dir)`` (CLI: ``servicegym tiny-model DIR``) writes, with ``save_pretrained``, a
Qwen2 causal LM of a few hundred thousand parameters and its tokenizer, built here from configs
and the envs' own text; nothing is downloaded. ``GRPOTrainer(model=str(dir), ...)`` and
``AutoModelForCausalLM`` / ``AutoTokenizer.from_pretrained(dir)`` load it like any hub model. It
learns nothing useful: it is for checking that a training script, a callback or a config runs
(the README's TRL snippet, ``scripts/train_trl.py --model DIR``, the tests), not for training.

- The tokenizer: a ``Qwen2Tokenizer`` (what ``AutoTokenizer`` loads for a Qwen2 checkpoint), its
  byte-level BPE trained through Qwen2's own pre-tokenizer on the golden conversations of the first
  ``tasks`` rows of each split of every env (``trl_rows``), rendered by the chat template with the
  TRL environment's tools (system prompt, tool schemas as transformers renders them, opening, tool
  calls, tool results and the user's replies), so those words are one token each: a Delivery
  prompt with its tools is about 3,300 tokens (Qwen2's pre-tokenizer splits words and punctuation
  runs apart; most of it is the tool schemas), without them about 200.
- The chat template: Qwen2.5's, exactly as TRL ships it (``trl.chat_template_utils.
  qwen2_5_chat_template``), so TRL recognises it (``add_response_schema``) and parses tool calls
  from ``<tool_call>`` blocks; ``<|im_end|>`` ends a turn (the EOS token), ``<|endoftext|>`` pads.
- The model: ``Qwen2ForCausalLM`` with tied embeddings, initialised from ``seed``.

Deterministic: the same arguments write the same files. Needs the ``trl`` extra
(``pip install -e '.[trl]'``: torch, transformers, tokenizers, trl); without it ``ImportError``
says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ADDED_TOKENS", "INSTALL_HINT", "SPECIAL_TOKENS", "corpus", "tiny_model", "tiny_tokenizer", "write_tiny_model"]

INSTALL_HINT = "pip install -e '.[trl]'"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# the tags Qwen2.5's template writes around tools, tool calls and tool results: single tokens, as in Qwen's vocabulary
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]
SPLITS = ("train", "dev", "test")


def _require() -> None:
    """ImportError naming the missing package and the extra that installs it."""
    import importlib.util

    for name in ("torch", "transformers", "tokenizers", "trl"):
        if importlib.util.find_spec(name) is None:
            raise ImportError(f"{name} is not installed; the tiny model needs the trl extra: {INSTALL_HINT}")


def golden_conversation(env: Any, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's prompt followed by its task's golden route as TRL would see it: each golden action
    an assistant turn of tool calls (a message to the user as a ``respond`` call), each call run on
    ``env`` (a ``TRLEnvironment``) and answered by a ``tool`` message with its result."""
    from servicegym.envs.environments.base import USER_TOOL
    from servicegym.envs.environments.parsing import parse_action
    from servicegym.envs.integrations.trl import trl_tools

    env.reset(**row)
    tools = trl_tools(env)
    messages = list(row["prompt"])
    for action in getattr(env._env.unwrapped.task, "golden_actions", None) or []:
        parsed = parse_action(action)
        calls = [(c.name, c.arguments) for c in parsed.tool_calls] or [(USER_TOOL, {"message": parsed.message})]
        messages.append({"role": "assistant", "content": parsed.message if parsed.tool_calls else "",
                         "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]})
        for name, arguments in calls:
            result = tools[name](**arguments) if name in tools else f"Error: no tool {name}"
            messages.append({"role": "tool", "name": name, "content": result})
    return messages


def corpus(env_ids: Sequence[str] | None = None, tasks: int = 2, splits: Sequence[str] = SPLITS) -> list[str]:
    """The tokenizer's training text: for every env (default: all of ``servicegym.ENV_IDS``) and
    split, the golden conversations of the first ``tasks`` rows of ``trl_rows`` rendered by Qwen2.5's
    chat template with the env's TRL tools (what the trainer's prompts and completions look like)."""
    _require()
    from transformers.utils import get_json_schema
    from transformers.utils.chat_template_utils import render_jinja_template
    from trl.chat_template_utils import qwen2_5_chat_template

    import servicegym
    from servicegym.envs.integrations.trl import environment_factory, trl_rows, trl_tools

    texts = []
    for env_id in sorted(servicegym.ENV_IDS) if env_ids is None else env_ids:
        for split in splits:
            env = environment_factory(env_id, split=split)()
            try:
                schemas = [get_json_schema(f) for f in trl_tools(env).values()]
                for row in trl_rows(env_id, split, tasks):
                    rendered = render_jinja_template([golden_conversation(env, row)], tools=schemas,
                                                     chat_template=qwen2_5_chat_template)
                    texts.append(rendered[0][0] if isinstance(rendered, tuple) else rendered)
            finally:
                env._env.close()
    return texts


def tiny_tokenizer(env_ids: Sequence[str] | None = None, *, tasks: int = 2, vocab_size: int = 8000) -> Any:
    """A ``Qwen2Tokenizer`` whose byte-level BPE (at most ``vocab_size`` tokens) is trained here on
    ``corpus(env_ids, tasks)`` through Qwen2's own pipeline (NFC, Qwen's pre-tokenizer regex), so the
    tokenizer ``AutoTokenizer`` loads for a Qwen2 checkpoint (it rebuilds that pipeline from the vocabulary
    and merges) is the one built here. Qwen2.5's chat template as TRL ships it, EOS ``<|im_end|>``,
    padding ``<|endoftext|>``, and the template's tags (``<tool_call>``...) as added tokens."""
    _require()
    import json

    from tokenizers import AddedToken, Tokenizer, pre_tokenizers, trainers
    from transformers.models.qwen2.tokenization_qwen2 import Qwen2Tokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    cut = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS + ADDED_TOKENS))
    pieces = [part for text in corpus(env_ids, tasks) for part in cut.split(text) if part]
    # Qwen2Tokenizer's own normalizer, pre-tokenizer and decoder around an empty BPE, trained on the corpus
    pipeline = Qwen2Tokenizer(vocab={SPECIAL_TOKENS[0]: 0}, merges=[]).backend_tokenizer
    bpe = Tokenizer.from_str(pipeline.to_str())
    bpe.train_from_iterator(pieces, trainer=trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model = json.loads(bpe.to_str())["model"]
    tok = Qwen2Tokenizer(vocab=model["vocab"], merges=[tuple(m) for m in model["merges"]], eos_token="<|im_end|>",
                         pad_token="<|endoftext|>", chat_template=qwen2_5_chat_template, model_max_length=32768)
    # the template's markers are whole tokens, as in Qwen's vocabulary: <|im_start|> special (a special token
    # attribute covers <|im_end|> and <|endoftext|> only), the tool tags plain added tokens
    tok.add_tokens([AddedToken(t, special=True) for t in SPECIAL_TOKENS], special_tokens=True)
    tok.add_tokens(ADDED_TOKENS)
    return tok


def tiny_model(tokenizer: Any, *, hidden_size: int = 32, layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised ``Qwen2ForCausalLM`` for ``tokenizer`` (its vocabulary, EOS and pad
    ids): ``hidden_size`` wide, ``layers`` deep, two heads sharing one key/value head, tied
    embeddings; the weights drawn from ``seed`` (the global torch RNG is left as it was)."""
    _require()
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
                         max_position_embeddings=32768, tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    return model


def write_tiny_model(out_dir: str | Path, *, env_ids: Sequence[str] | None = None, tasks: int = 2,
                     vocab_size: int = 8000, hidden_size: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """Write ``tiny_tokenizer(env_ids, tasks=, vocab_size=)`` and ``tiny_model(...)`` to ``out_dir``
    with ``save_pretrained`` (about 1 MB; a directory ``from_pretrained`` and ``GRPOTrainer(model=...)``
    load) and return its path. Nothing is downloaded; the same arguments write the same files."""
    tok = tiny_tokenizer(env_ids, tasks=tasks, vocab_size=vocab_size)
    model = tiny_model(tok, hidden_size=hidden_size, layers=layers, seed=seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Writing model shards" bar for a 1 MB file
    try:
        tok.save_pretrained(out)
        model.save_pretrained(out)
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    return out
