"""The TRL adapter (envs/integrations/trl.py): tool methods whose schemas (as transformers extracts
them) are the env's, one env per instance, pickling, reset/get_reward, golden and broken routes
driven the way TRL drives them (tool calls parsed from Qwen-format text by TRL's parser), and
GRPOTrainer on CPU with the tiny random Qwen2 model of envs/integrations/tiny_model.py (written here,
no network, no weights): one run as is, one with scripted completions (golden and broken) through the
real tool loop. Then the tiny model itself (deterministic, loads as a Qwen2 checkpoint, the CLI and
its missing-extra error), the learning-curve policy (envs/integrations/trl_curve.py) playing a
golden route through the episode machinery, and scripts/train_trl.py with --eval-every and
--resume-from-checkpoint leaving a curve that `servicegym report` reads."""

from __future__ import annotations

import inspect
import json
import os
import pickle

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here downloads; set before transformers reads it
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import gymnasium as gym  # noqa: E402
import pytest  # noqa: E402

trl = pytest.importorskip("trl", minversion="1.16", reason="the TRL adapter tests need trl>=1.16: pip install -e '.[trl]'")
transformers = pytest.importorskip("transformers", reason="the TRL adapter tests need transformers: pip install -e '.[trl]'")
pytest.importorskip("datasets", reason="the TRL adapter tests need datasets: pip install -e '.[trl]'")
from packaging.version import Version  # noqa: E402

if Version(transformers.__version__) < Version("5.2"):
    pytest.skip("TRL's environment_factory needs transformers>=5.2", allow_module_level=True)

from datasets import Dataset  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import add_response_schema, parse_response, qwen2_5_chat_template  # noqa: E402

import servicegym  # noqa: E402
from servicegym.envs.environments.base import USER_TOOL  # noqa: E402
from servicegym.envs.environments.parsing import parse_action  # noqa: E402
from servicegym.envs.integrations.tiny_model import tiny_model, write_tiny_model  # noqa: E402
from servicegym.envs.integrations.trl import (  # noqa: E402
    ENDED,
    EnvironmentFactory,
    ScoreComponent,
    TRLEnvironment,
    environment_class,
    environment_factory,
    hinted,
    score_reward_funcs,
    trl_prompt,
    trl_rows,
    trl_tools,
)

ENV_IDS = sorted(servicegym.ENV_IDS)
DELIVERY = "servicegym/Delivery-v0"


def route(actions: list[str]) -> list[str]:
    """Golden actions as assistant turns in Qwen's format: tool calls as <tool_call> blocks, a
    message to the user as a ``respond`` call (there is no user turn under TRL)."""
    turns = []
    for action in actions:
        parsed = parse_action(action)
        calls = [{"name": c.name, "arguments": c.arguments} for c in parsed.tool_calls]
        if not calls:
            calls = [{"name": USER_TOOL, "arguments": {"message": parsed.message}}]
        turns.append("\n".join(f"<tool_call>\n{json.dumps(c, ensure_ascii=False)}\n</tool_call>" for c in calls)
                      + "<|im_end|>")
    return turns


def golden_actions(env_id: str) -> tuple[dict, list[str]]:
    row = trl_rows(env_id, "test", 1)[0]
    env = gym.make(env_id, split="test", user_tool=True)
    env.reset(seed=row["seed"], options={"task_id": row["task_id"]})
    return row, list(env.unwrapped.task.golden_actions)


def without_final_write(actions: list[str]) -> list[str]:
    """The golden route without its last write call (Delivery: the payment)."""
    for k in range(len(actions) - 1, -1, -1):
        if any(c.name.startswith(("pay_", "create_")) for c in parse_action(actions[k]).tool_calls):
            return actions[:k] + actions[k + 1:]
    raise AssertionError("no write in the golden route")


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """The tiny model as ``servicegym tiny-model DIR`` writes it (every env's text, the defaults)."""
    return write_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def tokenizer(tiny_dir):
    """The tiny model's tokenizer as GRPOTrainer loads it (AutoTokenizer: a Qwen2Tokenizer), with
    Qwen2.5's chat template as TRL ships it (TRL recognises it and sets the tool-call parser:
    add_response_schema)."""
    return AutoTokenizer.from_pretrained(tiny_dir)


def grpo_config(tmp_path, n_funcs: int, **kw) -> GRPOConfig:
    base = dict(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=2, num_generations=2,
                max_completion_length=8, learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none",
                use_cpu=True, bf16=False, reward_weights=[0.0] * n_funcs, seed=0, dataloader_num_workers=0)
    return GRPOConfig(**{**base, **kw})


# ----- the adapter ----------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", ENV_IDS)
def test_tool_methods_give_the_envs_schemas(env_id):
    """transformers' own extraction (what TRL renders into the prompt) gives each tool's name,
    description, parameters, required set, types and enums; what type hints cannot carry (bounds,
    defaults, nested fields) is in the parameter's description."""
    env = environment_factory(env_id)()
    want = {s["function"]["name"]: s["function"] for s in env._env.unwrapped.tool_schemas()}
    tools = trl_tools(env)
    assert set(tools) == set(want) and USER_TOOL in tools
    for name, method in tools.items():
        got = get_json_schema(method)["function"]
        w = want[name]
        assert got["name"] == name and got["description"] == w["description"]
        gp, wp = got["parameters"], w["parameters"]
        assert list(gp["properties"]) == list(wp.get("properties", {}))
        assert set(gp.get("required", [])) == set(wp.get("required", []))
        for p, ws in wp.get("properties", {}).items():
            gs = gp["properties"][p]
            assert gs["description"].startswith(ws.get("description", ""))
            if hinted(ws):
                assert {k: gs[k] for k in ("type", "enum", "items") if k in gs} == \
                       {k: ws[k] for k in ("type", "enum", "items") if k in ws}, (name, p)
            else:
                assert "JSON schema: " in gs["description"]
            if "default" in ws:
                assert f"default {json.dumps(ws['default'], ensure_ascii=False)}" in gs["description"]
            if p not in wp.get("required", []):
                assert inspect.signature(method).parameters[p].default == ws.get("default")


def test_instances_own_their_env_and_everything_pickles():
    factory = environment_factory(DELIVERY, split="test")
    a, b = factory(), factory()
    assert type(a) is type(b) is environment_class(DELIVERY, split="test")  # TRL's get_reward matches by exact type
    assert type(a).__name__ == "Delivery_v0" and a._env is not b._env and a._env.unwrapped is not b._env.unwrapped
    funcs = score_reward_funcs(DELIVERY)
    assert [f.__name__ for f in funcs] == ["rubric_fraction"]  # rubric_items is a count, not a reward
    back = pickle.loads(pickle.dumps((factory, funcs)))
    assert isinstance(back[0], EnvironmentFactory) and back[0].env_id == DELIVERY
    assert back[0].env_kwargs == {"split": "test"} and type(back[0]()) is type(a)
    assert [f.key for f in back[1]] == [f.key for f in funcs]
    # TRL's async trainer pickles what it forwards to its rollout process, as here
    pickle.loads(pickle.dumps({"reward_funcs": funcs, "environment_factory": factory, "tools": []}))


def test_reset_rows_calls_after_the_end_and_reward_of_an_open_episode():
    row = trl_rows(DELIVERY, "test", 1)[0]
    assert "tools" not in row and USER_TOOL in row["prompt"][0]["content"]
    assert "Call a tool by replying with" not in row["system_prompt"] and row["prompt"][0]["content"] == row["system_prompt"]
    env = environment_factory(DELIVERY, split="test")()
    assert env.get_reward() == 0.0  # never reset (TRL's probe instance)
    assert env.reset(**row) is None  # the row's prompt already holds the opening
    u = env._env.unwrapped
    assert u.task.task_id == row["task_id"] and u.messages[1]["content"] == row["prompt"][1]["content"]
    tools = trl_tools(env)
    out = tools["get_user_all_orders"]()
    assert out.lstrip().startswith(("[", "{")) and "<tool_result" not in out  # the result's text, untagged
    assert tools["get_delivery_store_info"](store_id="S000000").startswith("Error: ")
    out = tools[USER_TOOL](message="How many people is this for?")
    assert out and "<user>" not in out and not env._done
    assert env.get_reward() == 0.0 and env._done and env._reason == "agent_stop"  # ended with ###STOP###, scored
    assert tools["get_user_all_orders"]() == ENDED
    steps = u._steps
    assert tools[USER_TOOL](message="hello") == ENDED and u._steps == steps  # nothing runs after the end
    assert [f(completions=[None], environments=[env]) for f in score_reward_funcs(DELIVERY)] == \
           [[env._score["rubric_fraction"]]]
    assert ScoreComponent("rubric_fraction")(completions=[1, 2]) == [None, None]  # async trainer: no environments
    # a row without a prompt (TRL's placeholder when training without a dataset): the opening is returned
    opening = env.reset(prompt=[{"role": "user", "content": ""}])
    assert opening == f"{trl_prompt(u.messages[0]['content'])}\n\n{u.messages[1]['content']}"
    with pytest.raises(ValueError, match="row of"):
        env.reset(**{**row, "env_id": "servicegym/Travel-v0"})
    assert trl_prompt("x\nCall a tool by replying with ... Any other reply is sent to Mira. The end.").endswith(
        "Talk to Mira only through the respond tool: its result is Mira's reply. Put ###STOP### in a respond "
        "message to end the conversation. A reply without a tool call ends the episode.")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_golden_route_reaches_reward_one_the_way_trl_drives_it(env_id, tokenizer):
    """Each golden turn rendered as Qwen tool-call text, tokenized, parsed by TRL's parse_response
    (the parser add_response_schema sets for this template), the calls run through the tool dict
    TRL builds; then get_reward(). The route without its final write scores 0."""
    tok = add_response_schema(tokenizer)
    row, actions = golden_actions(env_id)
    for acts, want in ((actions, 1.0), (without_final_write(actions) if env_id == DELIVERY else None, 0.0)):
        if acts is None:
            continue
        env = environment_factory(env_id, split="test")()
        assert env.reset(**row) is None
        tools = trl_tools(env)
        prefix = tok.apply_chat_template(row["prompt"], tools=list(tools.values()), add_generation_prompt=True,
                                         tokenize=True, return_dict=False)
        for turn in route(acts):
            ids = tok(turn, add_special_tokens=False)["input_ids"]
            msg = parse_response(tok, ids, prefix=prefix, tools=list(tools.values()))
            assert msg.get("tool_calls"), (turn, msg)
            for call in msg["tool_calls"]:
                result = tools[call["function"]["name"]](**call["function"]["arguments"])
                assert isinstance(result, str) and result != ENDED
        assert env.get_reward() == want, (env_id, env._reason, env._score)
        if want == 1.0:
            assert env._reason in ("user_stop", "agent_stop")  # ended by the conversation, not by get_reward


# ----- GRPOTrainer on CPU ---------------------------------------------------------------------

def test_grpo_trainer_runs_with_the_environment_factory(tokenizer, tmp_path):
    rows = trl_rows(DELIVERY, "test", 1)  # the task the tokenizer was trained on: short prompts
    funcs = score_reward_funcs(DELIVERY)
    trainer = GRPOTrainer(model=tiny_model(tokenizer), processing_class=tokenizer, args=grpo_config(tmp_path, len(funcs)),
                          train_dataset=Dataset.from_list(rows), reward_funcs=funcs,
                          environment_factory=environment_factory(DELIVERY, split="test"))
    trainer.train()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logs) == 2 and trainer.state.global_step == 2
    for h in logs:
        assert h["rewards/Delivery_v0/mean"] == 0.0  # a random model does not succeed
        assert "rewards/rubric_fraction/mean" in h and not any("rubric_items" in k for k in h)  # a count is no reward
    assert all(isinstance(e, TRLEnvironment) and e._done for e in trainer.environments)  # every rollout was scored


def test_grpo_trainer_scores_scripted_golden_and_broken_rollouts(tokenizer, tmp_path):
    """The model's completions replaced by a golden and a broken route (one each in the group):
    TRL's tool loop parses the calls, runs them on each rollout's env, masks the results; the
    env's reward is 1 and 0, so the advantage and the loss are not zero."""
    row, actions = golden_actions(DELIVERY)
    scripts = [route(actions), route(without_final_write(actions))]
    funcs = score_reward_funcs(DELIVERY)
    trainer = GRPOTrainer(model=tiny_model(tokenizer), processing_class=tokenizer,
                          args=grpo_config(tmp_path, len(funcs), max_steps=1, max_completion_length=8192),
                          train_dataset=Dataset.from_list([row]), reward_funcs=funcs,
                          environment_factory=environment_factory(DELIVERY, split="test"))
    states: list[list[int]] = []  # per rollout: the ids so far (prompt, completion, tool results)
    turns: list[int] = []

    def generate(prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        out, taken = [], set()
        for ids in prompt_ids:
            ids = list(ids)
            i = next((k for k, s in enumerate(states) if k not in taken and ids[:len(s)] == s), None)
            if i is None:  # a new rollout: the next script
                i = len(states)
                states.append([])
                turns.append(0)
            taken.add(i)
            script = scripts[i % len(scripts)]
            text = script[turns[i]] if turns[i] < len(script) else "Done.<|im_end|>"
            turns[i] += 1
            completion = tokenizer(text, add_special_tokens=False)["input_ids"]
            states[i] = ids + completion
            out.append(completion)
        return out, None

    masks = []
    loop = trainer._tool_call_loop

    def tool_call_loop(*args, **kwargs):
        result = loop(*args, **kwargs)
        masks.extend(result[0])
        return result

    trainer._generate_single_turn = generate
    trainer._tool_call_loop = tool_call_loop
    trainer.train()
    (log,) = [h for h in trainer.state.log_history if "reward" in h]
    assert log["rewards/Delivery_v0/mean"] == 0.5 and log["reward"] == 0.5
    calls = sum(turn.count("<tool_call>") for script in scripts for turn in script)
    assert 0.0 < log["rewards/rubric_fraction/mean"] < 1.0 and log["tools/call_frequency"] == calls / 2
    assert sorted(e._success for e in trainer.environments) == [False, True]
    assert turns == [len(s) + 1 for s in scripts]  # every scripted turn ran, then a reply without a tool call
    assert len(masks) == 2 and all(0 in m and 1 in m for m in masks)  # tool results masked out of the loss
    assert log["loss"] != 0.0 or log["grad_norm"] != 0.0


# ----- the tiny model ---------------------------------------------------------------------------

def test_tiny_model_is_deterministic_and_loads_as_a_qwen2_chat_model(tiny_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    from servicegym.envs.cli.main import main

    names = {p.name for p in tiny_dir.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= names
    assert sum(p.stat().st_size for p in tiny_dir.iterdir()) < 5e6  # a few MB at most
    assert main(["tiny-model", str(tmp_path / "again")]) == 0  # the CLI, same defaults: the same bytes
    for p in tiny_dir.iterdir():
        assert (tmp_path / "again" / p.name).read_bytes() == p.read_bytes(), p.name
    other = write_tiny_model(tmp_path / "seed1", env_ids=[DELIVERY], tasks=1, seed=1)
    assert (other / "model.safetensors").read_bytes() != (tiny_dir / "model.safetensors").read_bytes()

    tok = AutoTokenizer.from_pretrained(tiny_dir)  # what GRPOTrainer(model=DIR) loads
    assert type(tok).__name__ == "Qwen2Tokenizer" and tok.chat_template == qwen2_5_chat_template
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    add_response_schema(tok)  # TRL recognises the template
    ids = tok('<tool_call>\n{"name": "respond", "arguments": {"message": "Hi"}}\n</tool_call><|im_end|>',
              add_special_tokens=False)["input_ids"]
    assert parse_response(tok, ids)["tool_calls"][0]["function"] == {"name": "respond", "arguments": {"message": "Hi"}}
    env = environment_factory(DELIVERY)()
    row = trl_rows(DELIVERY, "train", 8)[-1]  # a row beyond the ones the tokenizer saw
    prompt = tok.apply_chat_template(row["prompt"], tools=list(trl_tools(env).values()), add_generation_prompt=True,
                                     tokenize=True, return_dict=False)
    assert prompt[0] == tok.convert_tokens_to_ids("<|im_start|>") and len(prompt) < 4000  # Qwen2's pre-tokenizer
    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    assert type(model).__name__ == "Qwen2ForCausalLM" and model.config.vocab_size == len(tok)


def test_tiny_model_without_the_extra_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    import importlib.util

    from servicegym.envs.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tokenizers" else real(name, *a))
    assert main(["tiny-model", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[trl]'" in err and "tokenizers" in err and "Traceback" not in err
    assert not (tmp_path / "m").exists()


# ----- learning curves ----------------------------------------------------------------------------

def test_chat_model_policy_plays_a_golden_route_as_trl_does(tokenizer, tmp_path):
    """The policy's completions replaced by the golden route as Qwen tool-call text: parsed by TRL's
    parser, run through collect's episode machinery on a user_tool env, tool results appended as
    TRL appends them; the episode succeeds, and a reply without a tool call ends it."""
    from servicegym.envs.integrations.trl_curve import ChatModelPolicy, tool_messages
    from servicegym.envs.running.rollouts import collect, read_records

    tok = add_response_schema(tokenizer)
    row, actions = golden_actions(DELIVERY)
    for script, want in ((route(actions), True), (["I cannot help with that.<|im_end|>"], False)):
        policy = ChatModelPolicy(tiny_model(tok), tok, DELIVERY, env_kwargs={"split": "test"})
        policy._generate = lambda n, turns=iter(script): tok(next(turns), add_special_tokens=False)["input_ids"]
        out = tmp_path / f"{want}.jsonl"
        summary = collect(DELIVERY, policy, out=out, task_ids=[row["task_id"]], split="test",
                          env_kwargs={"split": "test", "user_tool": True}, progress=False)
        (rec,) = read_records(out)
        assert summary.successes == int(want) and rec["success"] is want and rec["error"] is None
        assert rec["termination_reason"] == ("user_stop" if want else "agent_stop")
        assert policy.ids[: len(policy.prompt_ids)] == policy.prompt_ids and policy.completions == len(script)
    assert "I cannot help with that." in rec["messages"][-1]["content"]  # the reply reached the transcript, then STOP
    assert tool_messages('<tool_result name="a" call_id="c1">x</tool_result>\n<tool_error name="b" call_id="c2">bad'
                         '</tool_error>\n<session>next</session>', ["a", "b"]) == [
        {"role": "tool", "name": "a", "content": "x"}, {"role": "tool", "name": "b", "content": "Error: bad\n<session>next</session>"}]


def _train_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "train_trl.py"
    spec = importlib.util.spec_from_file_location("train_trl", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_train_script_writes_a_learning_curve_and_resumes(tiny_dir, tmp_path, capsys):
    """scripts/train_trl.py on the tiny model: 2 GRPO steps with --eval-every 2 on 2 dev tasks,
    then resumed from its checkpoint to 4 steps: the curve has steps 0, 2 and 4, the episodes are
    rollout records with their step, eval/ metrics are in the trainer's log, and `servicegym
    report` reads the curve (one row per step)."""
    from servicegym.envs.cli.main import main as cli
    from servicegym.envs.running.rollouts import read_records

    train = _train_script().main
    out = tmp_path / "run"
    base = ["--model", str(tiny_dir), "--tasks", "4", "--batch-size", "2", "--num-generations", "2",
            "--max-completion-length", "32", "--eval-every", "2", "--eval-tasks", "2", "--save-steps", "2",
            "--out", str(out)]
    assert train([*base, "--max-steps", "2", "--resume-from-checkpoint"]) == 2  # nothing to resume from yet
    assert train([*base, "--max-steps", "2"]) == 0
    assert (out / "checkpoint-2").is_dir()
    assert train([*base, "--max-steps", "4", "--resume-from-checkpoint"]) == 0
    curve = json.loads((out / "curve" / "curve.json").read_text())
    assert curve["split"] == "dev" and len(curve["task_ids"]) == 2 and sorted(map(int, curve["steps"])) == [0, 2, 4]
    assert all(p["episodes"] == 2 and p["errors"] == 0 and "rubric_fraction" in p for p in curve["steps"].values())
    records = read_records(out / "curve" / "rollouts.jsonl")
    assert sorted(r["step"] for r in records) == [0, 0, 2, 2, 4, 4]
    assert {r["task_id"] for r in records} == set(curve["task_ids"]) and records[0]["policy"] == "model@step-0"
    assert isinstance(records[0]["tools"], list) and records[0]["tools"]  # from the sidecar rollouts.tools.jsonl
    state = json.loads((out / "checkpoint-4" / "trainer_state.json").read_text())
    logged = {h["step"] for h in state["log_history"] if "eval/success_rate" in h and "eval/rubric_fraction" in h}
    assert logged == {0, 2, 4}
    capsys.readouterr()
    assert cli(["report", str(out / "curve"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert all(f"model@step-{n}" in report for n in (0, 2, 4))


def test_a_resumed_curve_keeps_its_points_up_to_the_checkpoint_and_a_fresh_one_starts_afresh(tmp_path):
    from servicegym.envs.integrations.trl_curve import LearningCurveCallback

    cb = LearningCurveCallback(DELIVERY, every=2, tasks=2, out=tmp_path)
    assert len(cb.task_ids) == 2 and all("/dev/" in t for t in cb.task_ids)
    assert cb.task_ids == LearningCurveCallback(DELIVERY, tasks=2, out=tmp_path).task_ids  # a fixed sample
    records = "".join(json.dumps({"task_id": t, "success": False, "step": s}) + "\n" for s in (0, 2, 4) for t in cb.task_ids)
    curve = {"env_id": DELIVERY, "task_ids": cb.task_ids, "steps": {str(s): {"success_rate": 0.0} for s in (0, 2, 4)}}
    for step, kept in ((2, [0, 2]), (0, [])):
        (tmp_path / "rollouts.jsonl").write_text(records)
        (tmp_path / "curve.json").write_text(json.dumps(curve))
        cb._load(step)  # what on_train_begin does at the step training starts from
        assert sorted(cb.points) == kept
        assert sorted(json.loads(x)["step"] for x in (tmp_path / "rollouts.jsonl").read_text().splitlines()) == \
               sorted(kept * 2)
        assert sorted(map(int, json.loads((tmp_path / "curve.json").read_text())["steps"])) == kept
