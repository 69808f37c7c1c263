"""Payments-v0's BizBench experiments as env options: ``call_cap``, ``disclosure="full"`` and
``gold_documents=True`` (validation, behaviour, the oracle under each, determinism, records,
report labels, the CLI flags and the grid script)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.cli.main import main
from servicegym.envs.cli.report import policy_label, summarize_records
from servicegym.envs.environments.payments import (
    GOLD_DOCUMENTS_MAX_CHARS,
    disclosed_opening,
    gold_document_ids,
    golden_calls,
)
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy
from servicegym.envs.running.rollouts import collect, read_records
from servicegym.envs.tasks.suites import payments_suite

ENV_ID = "servicegym/Payments-v0"
SUITE = payments_suite()
# one task of each difficulty (d3 converts currency, d4 files a limit-increase application)
SAMPLE = [next(t for t in SUITE if t.difficulty == d) for d in sorted({t.difficulty for t in SUITE})]


def make(**kw):
    return gym.make(ENV_ID, split="test", **kw)


def play(env, task, actions, seed=0):
    obs, info = env.reset(seed=seed, options={"task": task})
    out = info
    for a in actions:
        obs, _, term, trunc, out = env.step(a)
        if term or trunc:
            return out, term, trunc
    return out, False, False


def run_policy(env, task_id, policy, seed=0):
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    policy.reset(env, obs, info)
    while True:
        obs, _, term, trunc, info = env.step(policy.act(obs))
        if term or trunc:
            return info, env.unwrapped.messages


# ----- validation at make() -------------------------------------------------------------------
@pytest.mark.parametrize("kw,word", [
    ({"call_cap": 0}, "call_cap"), ({"call_cap": -1.2}, "call_cap"), ({"call_cap": True}, "call_cap"),
    ({"call_cap": "1.2"}, "call_cap"), ({"call_cap": math.nan}, "call_cap"), ({"call_cap": math.inf}, "call_cap"),
    ({"disclosure": "partial"}, "disclosure"), ({"disclosure": None}, "disclosure"),
    ({"gold_documents": "yes"}, "gold_documents"), ({"gold_documents": 1}, "gold_documents"),
])
def test_bad_option_values_fail_at_make_with_one_line(kw, word):
    with pytest.raises(ValueError) as err:
        make(**kw)
    assert word in str(err.value) and "\n" not in str(err.value)


def test_defaults_are_unchanged_and_carry_no_options():
    env = make()
    task = SUITE[0]
    obs, info = env.reset(seed=0, options={"task": task})
    assert obs == task.user.opening and "env_options" not in info and "call_limit" not in info
    assert env.unwrapped.env_options == {}
    _, _, _, _, info = env.step(task.golden_actions[0])
    assert "tool_calls" not in info and "call_limit" not in info


def test_options_are_recorded_in_info():
    env = make(call_cap=1.2, disclosure="full", gold_documents=True)
    assert env.unwrapped.env_options == {"call_cap": 1.2, "disclosure": "full", "gold_documents": True}
    _, info = env.reset(seed=0, options={"task": SUITE[0]})
    assert info["env_options"] == {"call_cap": 1.2, "disclosure": "full", "gold_documents": True}
    assert info["golden_calls"] == golden_calls(SUITE[0]) and info["call_limit"] == math.ceil(1.2 * info["golden_calls"])


# ----- call_cap ---------------------------------------------------------------------------------
@pytest.mark.parametrize("task", SAMPLE, ids=lambda t: t.task_id)
def test_oracle_fits_a_cap_of_exactly_its_calls_and_fails_below(task):
    g = golden_calls(task)
    info, term, trunc = play(make(call_cap=1.0), task, task.golden_actions)
    # the oracle needs every call: its last one reaches the cap, which ends the episode, scored as any other
    assert trunc and not term and info["termination_reason"] == "call_cap" and info["success"], info["score"]["violations"]
    assert info["tool_calls"] == info["call_limit"] == g
    info, term, trunc = play(make(call_cap=(g - 1) / g), task, task.golden_actions)
    assert trunc and info["termination_reason"] == "call_cap" and not info["success"]
    assert info["tool_calls"] == info["call_limit"] == g - 1
    info, term, trunc = play(make(call_cap=1.2), task, task.golden_actions)
    assert term and info["termination_reason"] == "agent_stop" and info["success"]
    assert info["tool_calls"] == g and info["call_limit"] == math.ceil(1.2 * g)


def test_a_capped_episode_ends_with_its_reason_and_a_score():
    task = SUITE[0]
    env = make(call_cap=0.1)
    limit = math.ceil(0.1 * golden_calls(task))
    env.reset(seed=0, options={"task": task})
    clock = json.dumps({"name": "read_clock", "arguments": {}})
    for k in range(1, limit + 1):
        obs, reward, term, trunc, info = env.step(clock)
        assert info["tool_calls"] == k
        if k < limit:
            assert not (term or trunc)
    assert trunc and not term and info["termination_reason"] == "call_cap" and reward == 0.0
    assert not info["success"] and set(info["score"]) >= {"goal", "process", "protection", "strict"}


def test_calls_of_one_action_beyond_the_cap_are_not_run():
    task = SUITE[0]
    env = make(call_cap=0.05)
    limit = math.ceil(0.05 * golden_calls(task))
    env.reset(seed=0, options={"task": task})
    action = "\n".join(f"<tool_call>{json.dumps({'name': 'read_clock', 'arguments': {}})}</tool_call>" for _ in range(limit + 2))
    obs, _, _, trunc, info = env.step(action)
    assert trunc and info["termination_reason"] == "call_cap" and info["tool_calls"] == limit
    assert obs.count("<tool_result") == limit and obs.count("not run: the call cap") == 2
    assert len([e for e in env.unwrapped.history.entries if e.kind == "tool_call"]) == limit


# ----- disclosure="full" --------------------------------------------------------------------------
@pytest.mark.parametrize("task", SAMPLE, ids=lambda t: t.task_id)
def test_full_disclosure_states_every_fact_and_the_oracle_still_succeeds(task):
    env = make(disclosure="full")
    obs, _ = env.reset(seed=0, options={"task": task})
    assert obs == disclosed_opening(task) and obs.startswith(task.user.opening)
    for fact in task.user.facts:
        assert fact.answer in obs
    for doc in task.world["customer"]["documents"]:
        assert doc.replace("_", " ") in obs
    assert env.unwrapped.history.entries[0].content == obs  # the merchant said it
    info, term, _ = play(env, task, task.golden_actions)
    assert term and info["success"], info["score"]["violations"]


def test_full_disclosure_reaches_the_llm_users_persona_prompt():
    task = SUITE[0]
    llm = {"base_url": "http://127.0.0.1:9/v1", "model": "unused"}  # the opening calls no model
    user = make(user="llm", llm=llm, disclosure="full").unwrapped
    user.reset(seed=0, options={"task": task})
    system = user._user.system
    assert task.user.facts[0].answer in system.split("You opened the conversation with:")[1].split("\n")[0]
    assert "have not said yet" not in system
    minimal = make(user="llm", llm=llm).unwrapped
    minimal.reset(seed=0, options={"task": task})
    assert "have not said yet" in minimal._user.system


# ----- gold_documents=True ------------------------------------------------------------------------
@pytest.mark.parametrize("task", SAMPLE, ids=lambda t: t.task_id)
def test_gold_documents_come_first_and_the_oracle_still_succeeds(task):
    env = make(gold_documents=True)
    obs, _ = env.reset(seed=0, options={"task": task})
    ids = gold_document_ids(task)
    assert ids and all(f'"id": "{d}"' in obs for d in ids)
    assert obs.startswith(task.user.opening) and len(obs) - len(task.user.opening) <= GOLD_DOCUMENTS_MAX_CHARS + 200
    assert env.unwrapped.messages[1] == {"role": "user", "content": obs}
    assert env.unwrapped.history.entries[0].content == task.user.opening  # the merchant said only its request
    info, term, _ = play(env, task, task.golden_actions)
    assert term and info["success"], info["score"]["violations"]


def test_gold_documents_skip_discovery():
    """A route with no search or read at all fails the governing-document check by default and
    passes with the documents given up front."""
    task = SAMPLE[-1]
    route = [a for a in task.golden_actions
             if not any(f'"name": "{n}"' in a for n in ("search_documents", "read_document"))]
    assert len(route) < len(task.golden_actions)
    info, _, _ = play(make(), task, route)
    assert not info["success"] and {v["check"] for v in info["score"]["violations"]} == {"process.governing_document"}
    info, _, _ = play(make(gold_documents=True), task, route)
    assert info["success"], info["score"]["violations"]


# ----- determinism, records, labels -----------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"call_cap": 1.2}, {"disclosure": "full"}, {"gold_documents": True},
                                {"call_cap": 2.0, "disclosure": "full", "gold_documents": True}])
def test_same_seed_and_options_same_transcript(kw):
    tid = SUITE[3].task_id
    a = run_policy(make(**kw), tid, RandomPolicy(seed=5), seed=11)
    b = run_policy(make(**kw), tid, RandomPolicy(seed=5), seed=11)
    assert a == b
    o1, o2 = (run_policy(make(**kw), tid, OraclePolicy(), seed=3) for _ in range(2))
    assert o1 == o2 and o1[0]["success"]


def test_records_carry_the_options_and_reports_keep_runs_apart(tmp_path):
    ids = [SUITE[0].task_id, SUITE[1].task_id]
    plain = collect(ENV_ID, "oracle", out=tmp_path / "plain.jsonl", task_ids=ids, progress=False)
    capped = collect(ENV_ID, "oracle", out=tmp_path / "capped.jsonl", task_ids=ids, progress=False,
                     env_kwargs={"call_cap": 1.0, "gold_documents": True})
    assert plain.successes == capped.successes == 2
    recs = read_records(tmp_path / "plain.jsonl") + read_records(tmp_path / "capped.jsonl")
    assert "env_options" not in recs[0]
    assert recs[2]["env_options"] == {"call_cap": 1.0, "gold_documents": True}
    assert recs[2]["termination_reason"] == "call_cap" and recs[0]["config"] != recs[2]["config"]
    assert policy_label(recs[2]) == "oracle [call_cap=1, gold_documents]" and policy_label(recs[0]) == "oracle"
    summaries = summarize_records(recs, bootstrap=0)
    assert [s.policies for s in summaries] == [["oracle"], ["oracle [call_cap=1, gold_documents]"]]
    # one file never mixes options: resuming with others is refused
    with pytest.raises(ValueError, match="other settings"):
        collect(ENV_ID, "oracle", out=tmp_path / "capped.jsonl", task_ids=ids, progress=False, env_kwargs={"call_cap": 2.0})


def test_cli_flags_reach_the_env_and_run_json(tmp_path, capsys):
    out = tmp_path / "ev"
    assert main(["evaluate", "--env", ENV_ID, "--policy", "oracle", "--limit", "1", "--call-cap", "1.2",
                 "--disclosure", "full", "--gold-documents", "--out", str(out), "--quiet"]) == 0
    meta = json.loads((out / "run.json").read_text())
    assert meta["env_options"] == {"call_cap": 1.2, "disclosure": "full", "gold_documents": True}
    rec = read_records(out / "rollouts.jsonl")[0]
    assert rec["env_options"] == meta["env_options"] and rec["success"]
    capsys.readouterr()
    assert main(["evaluate", "--env", "servicegym/Delivery-v0", "--call-cap", "1.2", "--out", str(tmp_path / "d")]) == 2
    assert "Payments-v0 only" in capsys.readouterr().err
    assert main(["evaluate", "--env", ENV_ID, "--call-cap", "0", "--out", str(tmp_path / "z")]) == 2


def test_grid_script_writes_cells_report_reads(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    try:
        import bizbench_grid
    finally:
        sys.path.pop(0)
    assert bizbench_grid.main(["--limit", "1", "--out", str(tmp_path), "--conditions", "uncapped,cap1.2,full,gold",
                               "--policies", "oracle,loopback"]) == 0
    text = capsys.readouterr().out
    assert "| policy | condition | episodes | strict | G | P | F | G - strict |" in text
    assert text.count("| 1 | 1.000 | 1.000 | 1.000 | 1.000 | +0.000 |") == 8  # both policies succeed in every cell
    rec = read_records(tmp_path / "gold" / "loopback" / "rollouts.jsonl")[0]
    assert rec["policy"] == "loopback" and rec["env_options"] == {"gold_documents": True} and rec["success"]
    assert main(["report", str(tmp_path / "uncapped" / "oracle"), str(tmp_path / "cap1.2" / "oracle"),
                 "--out", str(tmp_path / "cmp")]) == 0
    assert "oracle [call_cap=1.2]" in (tmp_path / "cmp" / "compare.md").read_text()
