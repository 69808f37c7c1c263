"""The verl agent loop (``servicegym.envs.integrations.verl``) on verl's own classes, CPU only and
without weights: a byte-level BPE tokenizer trained here on a few sentences, with a Qwen/hermes
chat template written here, and a stand-in for verl's server manager that answers each turn with
the token ids of the task's next golden action rendered by that template.

Skipped without verl (``pip install 'servicegym[verl]'``)."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("verl", reason="the verl adapter needs verl: pip install 'servicegym[verl]'")

import hydra  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopWorker,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.utils.tokenizer.tokenizer import normalize_token_ids  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from servicegym.envs.environments.parsing import parse_action  # noqa: E402
from servicegym.envs.integrations.dataset import write_rows  # noqa: E402
from servicegym.envs.integrations.verl import (  # noqa: E402
    AGENT_NAME,
    REWARD_EXTRA_KEYS,
    ServiceGymAgentLoop,
    parser_tools,
    verl_rows,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl" / "servicegym_agent_loop.yaml"
LOGPROB = -0.5

# Qwen2.5's chat template, cut down: tools in the system turn, assistant tool calls as hermes
# <tool_call> blocks, consecutive tool results in one user turn as <tool_response> blocks
TEMPLATE = (
    "{%- if tools %}"
    "{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}"
    "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}"
    "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
    "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\"name\": <function-name>, \"arguments\": <args-json-object>}"
    "\\n</tool_call><|im_end|>\\n' }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if (message.role == 'user') or (message.role == 'system' and not loop.first)"
    " or (message.role == 'assistant' and not message.tool_calls) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{{- '<|im_start|>' + message.role }}"
    "{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "{{- '\\n<tool_call>\\n{\"name\": \"' }}{{- tool_call.name }}{{- '\", \"arguments\": ' }}"
    "{%- if tool_call.arguments is string %}{{- tool_call.arguments }}{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}"
    "{{- '}\\n</tool_call>' }}"
    "{%- endfor %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message.role == 'tool' %}"
    "{%- if loop.index0 == 0 or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}"
    "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}"
    "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
CORPUS = [
    '{"name": "get_user_historical_behaviors", "arguments": {}}',
    "Happy to help. Any preference about the store's rating or service?",
    '{"type": "function", "function": {"name": "delivery_product_search_recommend", "description": "Search '
    'products", "parameters": {"type": "object", "properties": {"keywords": {"type": "array"}}}}}',
    "The user wants food delivered to the office at noon; the order is paid.",
    '<tool_response>\n{"store_id": "S641785", "price": 12.5, "status": "unpaid"}\n</tool_response>',
]


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def build_tokenizer():
    """A byte-level BPE (any text round-trips) with Qwen's special tokens and the template above
    (also used by scripts/bench_adapters.py)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    schemas = [json.dumps(t) for t in gym.make("servicegym/Delivery-v0").unwrapped.tool_schemas()]
    tok.train_from_iterator(CORPUS * 4 + schemas, trainer)
    tok.add_tokens(["<tool_call>", "</tool_call>"])  # added, not special: they survive decoding
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=["<|im_start|>"], clean_up_tokenization_spaces=False)
    fast.chat_template = TEMPLATE
    return fast


def config(response_length: int = 1 << 20, prompt_length: int = 1 << 16, **multi_turn):
    return OmegaConf.create({
        "actor_rollout_ref": {"rollout": {
            "prompt_length": prompt_length, "response_length": response_length, "full_determinism": False,
            "multi_turn": {"format": "hermes", "max_assistant_turns": None, **multi_turn},
        }},
        "data": {"apply_chat_template_kwargs": {}, "mm_processor_kwargs": {}},
    })


def loop_kwargs(tokenizer, server, cfg):
    """What verl's AgentLoopWorker._run_agent_loop hands an agent loop (hf_model_type qwen2:
    verl's Qwen builder, which restores the newline after a generated <|im_end|>)."""
    return dict(trainer_config=DictConfigWrap(config=cfg), server_manager=server, tokenizer=tokenizer,
                processor=None, hf_model_type="qwen2", dataset_cls=RLHFDataset,
                data_config=DictConfigWrap(cfg.data), tools=ToolListWrap([]))


class RecordingLoop(ServiceGymAgentLoop):
    """The loop, keeping each run's env (by task and seed) for the test to read."""

    envs: dict = {}

    def make_env(self, row):
        env = super().make_env(row)
        RecordingLoop.envs[(str(row["task_id"]), int(row["seed"]))] = env
        return env


def render(tokenizer, messages, tools=None, add_generation_prompt=False) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                         add_generation_prompt=add_generation_prompt)


def assistant_message(action: str) -> dict:
    """How the env records ``action`` (OpenAI format)."""
    parsed = parse_action(action)
    if not parsed.tool_calls:
        return {"role": "assistant", "content": parsed.message}
    return {"role": "assistant", "content": parsed.message or None, "tool_calls": [
        {"type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
        for c in parsed.tool_calls]}


def completion_ids(tokenizer, action: str) -> list[int]:
    """The tokens a model following the template generates for ``action``: the assistant turn
    after the generation prompt, up to and including <|im_end|>."""
    base = [{"role": "user", "content": "x"}]
    head = render(tokenizer, base, add_generation_prompt=True)
    full = render(tokenizer, [*base, assistant_message(action)])
    assert full.startswith(head) and full.endswith("<|im_end|>\n")
    return tokenizer.encode(full[len(head):-1], add_special_tokens=False)


def prompt_of(tokenizer, env_id: str, task_id: str, seed: int) -> tuple[tuple[int, ...], object]:
    env = gym.make(env_id)
    env.reset(seed=seed, options={"task_id": task_id})
    u = env.unwrapped
    ids = normalize_token_ids(tokenizer.apply_chat_template(u.messages[:2], tools=u.tool_schemas(),
                                                            add_generation_prompt=True, tokenize=True))
    return tuple(ids), u.task


class ScriptedServer:
    """A stand-in for verl's server manager (``generate(request_id=, prompt_ids=, sampling_params=)``
    -> ``TokenOutput``): a conversation's first prompt picks its script, then each call returns the
    script's next completion (cut at ``max_tokens``), with log-prob ``LOGPROB`` per token."""

    def __init__(self, scripts: dict[tuple[int, ...], list[list[int]]], jitter: bool = False):
        self.scripts = scripts
        self.jitter = jitter
        self.turns: dict[str, list] = {}
        self.sent: dict[str, list[list[int]]] = {}
        self.max_tokens: list[int] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        if request_id not in self.turns:
            assert tuple(prompt_ids) in self.scripts, "the first prompt is not the chat template's rendering of the env's"
            self.turns[request_id] = list(self.scripts[tuple(prompt_ids)])
            self.sent[request_id] = []
        if self.jitter:  # interleave the coroutines differently from run to run
            for _ in range(random.randint(0, 3)):
                await asyncio.sleep(0)
        script = self.turns[request_id]
        ids = script.pop(0) if script else [2]  # past the script: an empty turn (<|im_end|>)
        ids = ids[: sampling_params["max_tokens"]]
        self.max_tokens.append(sampling_params["max_tokens"])
        self.sent[request_id].append(ids)
        return TokenOutput(token_ids=ids, log_probs=[LOGPROB] * len(ids), num_preempted=0)


def rows_for(env_id: str, n: int, seeds=(0,)) -> list[dict]:
    ids = gym.make(env_id).unwrapped.task_ids("test")[:n]
    return [{"env_id": env_id, "task_id": t, "seed": s, "raw_prompt": [], "agent_name": AGENT_NAME}
            for t in ids for s in seeds]


def scripts_for(tokenizer, rows, route=lambda task: task.golden_actions) -> dict:
    out = {}
    for row in rows:
        key, task = prompt_of(tokenizer, row["env_id"], row["task_id"], row["seed"])
        out[key] = [completion_ids(tokenizer, a) for a in route(task)]
    return out


def sampling():
    return {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}


def mask_runs(mask: list[int]) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, m in enumerate([*mask, 0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    return runs


@pytest.mark.parametrize("env_id", ["servicegym/Delivery-v0", "servicegym/Payments-v0"])
def test_golden_route_reaches_one_with_exact_masks_and_the_envs_conversation(tokenizer, env_id):
    rows = rows_for(env_id, 1, seeds=(7,))
    server = ScriptedServer(scripts_for(tokenizer, rows))

    async def main():
        loop = RecordingLoop(**loop_kwargs(tokenizer, server, config()))
        return await loop.run(sampling(), **rows[0])

    out = asyncio.run(main())
    env = RecordingLoop.envs[(rows[0]["task_id"], 7)]
    u = env.unwrapped
    assert out.reward_score == 1.0
    assert out.extra_fields["reward_extra_info"]["success"] == 1.0
    assert set(out.extra_fields["reward_extra_info"]) == set(REWARD_EXTRA_KEYS)
    assert set(u.score_keys) <= set(out.extra_fields["servicegym_score"])
    assert out.extra_fields["termination_reason"] in ("user_stop", "agent_stop")
    (sent,) = server.sent.values()
    assert len(sent) == len(u.task.golden_actions)
    assert out.num_turns == 2 * len(sent)  # the prompt, each completion, each env turn but the last

    # response_mask: 1 exactly on the generated tokens, turn by turn; log-probs there only
    runs = mask_runs(out.response_mask)
    assert [out.response_ids[a:b] for a, b in runs] == sent
    assert len(out.response_mask) == len(out.response_ids) == len(out.response_logprobs)
    assert all((lp == LOGPROB) == bool(m) for m, lp in zip(out.response_mask, out.response_logprobs))

    # the tokens are the env's own conversation under the chat template, rendered all at once
    tools = u.tool_schemas()
    messages = u.messages
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    prompt_text = render(tokenizer, messages[:2], tools, add_generation_prompt=True)
    full_text = render(tokenizer, messages[: last + 1], tools)
    assert tokenizer.decode(out.prompt_ids) == prompt_text
    assert tokenizer.decode(out.response_ids) == full_text[len(prompt_text):].removesuffix("\n")
    assert out.prompt_ids + out.response_ids == tokenizer.encode(full_text.removesuffix("\n"), add_special_tokens=False)


def test_a_broken_route_scores_zero(tokenizer):
    rows = rows_for("servicegym/Delivery-v0", 1)
    server = ScriptedServer(scripts_for(tokenizer, rows, route=lambda task: next(iter(task.violations.values()))))

    async def main():
        return await ServiceGymAgentLoop(**loop_kwargs(tokenizer, server, config())).run(sampling(), **rows[0])

    out = asyncio.run(main())
    assert out.reward_score == 0.0
    assert out.extra_fields["reward_extra_info"]["success"] == 0.0
    assert out.extra_fields["servicegym_score"]["rubric_fraction"] < 1.0
    assert sum(out.response_mask) == sum(len(ids) for ids in next(iter(server.sent.values())))


def test_the_response_budget_ends_the_episode(tokenizer):
    rows = rows_for("servicegym/Delivery-v0", 1)
    server = ScriptedServer(scripts_for(tokenizer, rows))
    budget = 300

    async def main():
        return await ServiceGymAgentLoop(**loop_kwargs(tokenizer, server, config(response_length=budget))).run(
            sampling(), **rows[0])

    out = asyncio.run(main())
    assert out.reward_score == 0.0
    assert out.extra_fields["termination_reason"] == "response_length"
    assert out.extra_fields["reward_extra_info"]["length_cut"] == 1.0
    assert len(out.response_ids) == len(out.response_mask) <= budget
    # each turn asks for at most what is left of the budget
    assert server.max_tokens[0] == budget and all(m <= budget for m in server.max_tokens)


def test_32_concurrent_runs_give_the_per_seed_outputs_of_sequential_runs(tokenizer):
    rows = rows_for("servicegym/Delivery-v0", 14, seeds=(0, 1)) + rows_for("servicegym/InStore-v0", 2, seeds=(0, 1))
    assert len(rows) == 32
    scripts = scripts_for(tokenizer, rows)

    def summary(out):
        extra = {k: v for k, v in out.extra_fields.items()}
        return (out.prompt_ids, out.response_ids, out.response_mask, out.response_logprobs, out.reward_score,
                out.num_turns, json.dumps(extra, sort_keys=True))

    async def sequential():
        outs = []
        for row in rows:  # one loop instance per run, as verl's worker makes them
            loop = ServiceGymAgentLoop(**loop_kwargs(tokenizer, ScriptedServer(scripts), config()))
            outs.append(await loop.run(sampling(), **row))
        return outs

    async def concurrent():  # one instance for all 32: no episode state lives on the loop
        loop = ServiceGymAgentLoop(**loop_kwargs(tokenizer, ScriptedServer(scripts, jitter=True), config()))
        return await asyncio.gather(*(loop.run(sampling(), **row) for row in rows))

    random.seed(0)
    one_by_one = [summary(o) for o in asyncio.run(sequential())]
    together = [summary(o) for o in asyncio.run(concurrent())]
    assert together == one_by_one
    assert all(s[4] == 1.0 for s in together)


def test_actions_use_verls_parser(tokenizer):
    async def main():
        loop = ServiceGymAgentLoop(**loop_kwargs(tokenizer, None, config()))
        enc = lambda text: tokenizer.encode(text + "<|im_end|>", add_special_tokens=False)  # noqa: E731
        call = await loop._action(enc('Checking.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'), [])
        message = await loop._action(enc("Which address?"), [])
        broken = await loop._action(enc('<tool_call>\n{"name": "f", "arguments": \n</tool_call>'), [])
        return call, message, broken

    call, message, broken = asyncio.run(main())
    assert json.loads(call) == {"role": "assistant", "content": "Checking.",
                                "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]}
    assert json.loads(message) == {"role": "assistant", "content": "Which address?"}
    assert parse_action(message).message == "Which address?" and not parse_action(message).tool_calls
    assert broken.startswith("<tool_call>") and parse_action(broken).errors  # the env says what is wrong


def test_parser_tools_models_every_env_tool():
    for env_id in ("servicegym/CrossScenario-v0", "servicegym/Payments-v0", "servicegym/Workspace-v0"):
        schemas = gym.make(env_id, user_tool=True).unwrapped.tool_schemas()
        assert [t.function.name for t in parser_tools(schemas)] == [s["function"]["name"] for s in schemas]


def test_registered_and_the_example_config_instantiates_it(tokenizer):
    assert _agent_loop_registry[AGENT_NAME] == {"_target_": "servicegym.envs.integrations.verl.ServiceGymAgentLoop"}
    entries = OmegaConf.load(EXAMPLE)
    (entry,) = [e for e in entries if e.name == AGENT_NAME]

    async def main():  # as AgentLoopWorker._run_agent_loop does with a registry entry from agent_loop_config_path
        return hydra.utils.instantiate(config=entry, **loop_kwargs(tokenizer, None, config()))

    loop = asyncio.run(main())
    assert isinstance(loop, ServiceGymAgentLoop)
    assert isinstance(loop.env_kwargs, dict) and loop.env_kwargs == OmegaConf.to_container(entry.get("env_kwargs", {}))


def test_verls_worker_postprocess_collates_the_outputs(tokenizer):
    """Outputs of two envs (different score keys) through AgentLoopWorker's own padding and batching."""
    rows = rows_for("servicegym/Delivery-v0", 1) + rows_for("servicegym/Payments-v0", 1)
    server = ScriptedServer(scripts_for(tokenizer, rows))
    cfg = config(response_length=1 << 16)
    rollout = cfg.actor_rollout_ref.rollout
    worker = AgentLoopWorker.__new__(AgentLoopWorker)  # the methods used, without Ray, servers or weights
    worker.__dict__.update(rollout_config=rollout, tokenizer=tokenizer, processor=None, reward_loop_worker_handles=None,
                           distillation_enabled=False, mm_processor_kwargs={}, config=cfg)

    async def main():
        loop = ServiceGymAgentLoop(**loop_kwargs(tokenizer, server, cfg))
        outs = [await loop.run(sampling(), **row) for row in rows]
        return outs, [await worker._agent_loop_postprocess(o, False, raw_prompt=[]) for o in outs]

    outs, padded = asyncio.run(main())
    batch = worker._postprocess(padded, input_non_tensor_batch=None)
    assert batch.meta_info["reward_extra_keys"] == list(REWARD_EXTRA_KEYS)
    assert batch.batch["rm_scores"].sum(dim=1).tolist() == [o.reward_score for o in outs] == [1.0, 1.0]
    for i, o in enumerate(outs):
        n = len(o.response_ids)
        assert batch.batch["response_mask"][i, :n].tolist() == o.response_mask
        assert batch.batch["rm_scores"][i, n - 1] == o.reward_score
    assert list(batch.non_tensor_batch["success"]) == [1.0, 1.0]
    scores = batch.non_tensor_batch["servicegym_score"]
    assert "rubric_fraction" in scores[0] and "goal" in scores[1]


def test_verl_rows_read_by_verls_dataset(tokenizer, tmp_path):
    rows = verl_rows("servicegym/Delivery-v0", "test", n=2, env_kwargs={"user_tool": True})
    path = write_rows(rows, tmp_path / "rows.jsonl")
    ds = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer,
                     config=OmegaConf.create({"filter_overlong_prompts": False, "cache_dir": str(tmp_path / "cache")}))
    item = ds[1]
    assert item["raw_prompt"] == rows[1]["prompt"]
    assert (item["agent_name"], item["env_id"], item["task_id"], item["seed"]) == (
        AGENT_NAME, "servicegym/Delivery-v0", rows[1]["task_id"], rows[1]["seed"])
    assert item["data_source"] == "servicegym/Delivery-v0" and item["index"] == 1
    assert json.loads(item["env_kwargs"]) == {"user_tool": True}
    # the loop makes the env the rows were written for (with the respond tool)
    loop = SimpleNamespace(env_kwargs={})
    env = ServiceGymAgentLoop.make_env(loop, item)
    assert env.unwrapped.user_tool


def test_the_trainer_example_says_in_one_sentence_what_this_machine_lacks():
    import os
    import subprocess
    import sys
    from pathlib import Path

    from servicegym.envs.integrations.preflight import verl_trainer_problem

    problem = verl_trainer_problem()
    if problem is None:
        pytest.skip("verl's trainer can run here: nothing to refuse")
    root = Path(__file__).resolve().parents[2]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # the script's `python`: ours
    proc = subprocess.run(["bash", str(root / "examples/verl/run_grpo_delivery.sh")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PATH": path, "DATA": str(root / "nonexistent-data")})
    assert proc.returncode == 2 and proc.stderr.strip() == f"servicegym: {problem}" and "Traceback" not in proc.stderr
    assert not (root / "nonexistent-data").exists()  # it stopped before writing anything
