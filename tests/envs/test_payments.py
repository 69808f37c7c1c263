"""Payments-v0 (BizBench): world, knowledge base, discovery, customer, G/P/F checker, generator."""

from __future__ import annotations

import json
import time

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.environments.payments import PaymentsEnv
from servicegym.envs.tasks.generators.payments import (
    build_scenario,
    generate_payments_task,
    payments_plan,
    payments_variants,
)
from servicegym.envs.tasks.suites import payments_suite
from servicegym.rewards.payments import check_payments
from servicegym.world_state.payments import CATALOGUE, PRODUCTS

ENV = PaymentsEnv()


def play(task, actions, env=ENV):
    env.reset(seed=0, options={"task": task})
    info = None
    for a in actions:
        _, _, term, trunc, info = env.step(a)
        if term or trunc:
            return info
    return info


def cap(cap_name, /, **args):
    return json.dumps({"name": "call_capability", "arguments": {"name": cap_name, "arguments": args}})


def tool(tool_name, /, **args):
    return json.dumps({"name": tool_name, "arguments": args})


def failed(info):
    return sorted({v["check"] for v in info["score"]["violations"]})


SUITE = payments_suite()


def test_suite_is_50_tasks_with_dozens_of_golden_calls():
    assert len(SUITE) == 50 and len({t.task_id for t in SUITE}) == 50
    assert min(len(t.golden_actions) for t in SUITE) >= 40
    ids = gym.make("servicegym/Payments-v0").unwrapped.task_ids("test")
    assert ids == [t.task_id for t in SUITE]


@pytest.mark.parametrize("i", range(50))
def test_suite_task_oracle_counterexamples_and_legal_routes(i):
    task = SUITE[i]
    seed, diff = int(task.task_id.split("/")[2]), task.difficulty
    info = play(task, task.golden_actions)
    assert info["success"] and info["score"]["violations"] == [], info["score"]["violations"]
    variants = payments_variants(seed, diff, "test")
    for required in ("approval_removed", "approval_after", "terms_changed", "dip_repaired", "superseded_limit", "reordered", "retry"):
        assert required in variants
    for label, (actions, expected) in variants.items():
        info = play(task, actions)
        assert info is not None and "score" in info, label
        assert failed(info) == sorted(expected), (label, info["score"]["violations"])
        assert info["success"] == (not expected), label
        for v in info["score"]["violations"]:
            assert isinstance(v["step"], int) and v["step"] > 0


def test_outcome_only_scoring_would_pass_process_and_protection_failures():
    task = SUITE[7]
    variants = payments_variants(7, task.difficulty)
    for label in ("approval_removed", "dip_repaired", "superseded_limit"):
        info = play(task, variants[label][0])
        assert info["score"]["goal"] == 1.0 and not info["success"], label
    dip = play(task, variants["dip_repaired"][0])
    assert dip["score"]["protection"] == 0.0 and dip["score"]["process"] == 1.0
    # the dip was repaired: the final reserve balance is back above the floor
    world = ENV.unwrapped.world
    goal = task.world["goal"]
    assert world.balance(goal["reserve_account"]) >= world.governing("reserves", goal["merchant_id"]).rules["reserve_floor"]


@pytest.mark.parametrize("seed,diff", [(1, 0), (2, 2), (3, 4), (11, 2), (12, 3)])
def test_generated_train_tasks_replay_their_golden_trace(seed, diff):
    task = generate_payments_task(seed, diff, "train")
    assert task == generate_payments_task(seed, diff, "train")  # seeded, replayable
    info = play(task, task.golden_actions)
    assert info["success"], info["score"]["violations"]


def test_default_difficulty_needs_dozens_of_calls():
    env = gym.make("servicegym/Payments-v0")
    env.reset(seed=3)
    task = env.unwrapped.task
    calls = [a for a in task.golden_actions if a.startswith("{")]
    assert task.difficulty == 2 and len(calls) >= 40


def test_knowledge_base_has_hundreds_of_versioned_scoped_documents_and_picks_the_governing_one():
    task = SUITE[0]
    ENV.reset(seed=0, options={"task": task})
    w = ENV.unwrapped.world
    docs = list(w.table("documents"))
    assert len(docs) >= 200
    assert sum(1 for d in docs if d.supersedes) >= 100  # superseded and current guidance coexist
    mid = w.extra["merchant_id"]
    s = build_scenario(0, task.difficulty, "test")
    assert w.governing("payouts", mid).id == s.docs["payouts_v2"]
    for product in PRODUCTS:
        assert w.governing(product, mid) is not None
    ENV.step(tool("wait", minutes=s.review_minutes))
    assert w.governing("payouts", mid).id == s.docs["payouts_v3"]  # the new version took effect while waiting
    old = w.table("documents").require(s.docs["payouts_v2"])
    assert w.table("documents").require(s.docs["payouts_v3"]).supersedes == old.id


def test_discovery_unknown_and_undescribed_capabilities_are_error_observations():
    assert len(CATALOGUE) >= 200
    task = SUITE[0]
    ENV.reset(seed=0, options={"task": task})
    acc = task.world["goal"]["reserve_account"]
    obs, *_ = ENV.step(cap("accounts.balance", account_id=acc))
    assert "<tool_error" in obs and "describe" in obs
    obs, *_ = ENV.step(cap("payouts.make_it_rain", amount=1))
    assert "<tool_error" in obs and "unknown capability" in obs
    obs, *_ = ENV.step(tool("search_capabilities", query="balance account"))
    assert "accounts.balance" in obs
    ENV.step(tool("describe_capability", name="accounts.balance"))
    obs, *_ = ENV.step(cap("accounts.balance", account_id=acc))
    assert "<tool_result" in obs and '"available"' in obs
    obs, *_ = ENV.step(cap("accounts.balance", nope=1))
    assert "<tool_error" in obs and "invalid arguments" in obs


def test_generic_consent_is_not_an_approval_and_the_customer_writes_once_a_turn():
    task = SUITE[2]
    goal = task.world["goal"]
    ENV.reset(seed=0, options={"task": task})
    obs, *_ = ENV.step("Shall I go ahead with the payout?")
    assert "Yes, go ahead" in obs
    assert len(ENV.unwrapped.world.table("approvals")) == 0
    ENV.step(tool("describe_capability", name="approvals.request"))
    terms = {"merchant_id": goal["merchant_id"], "account_id": goal["operating_account"], "bank_account_id": goal["destination"], "amount": 10.0}
    ENV.step(cap("approvals.request", operation="payouts.create", terms=terms))
    ENV.step(cap("approvals.request", operation="payouts.create", terms={**terms, "amount": 20.0}))
    wrong = next(b.id for b in ENV.unwrapped.world.table("bank_accounts") if b.merchant_id == goal["merchant_id"] and b.id != goal["destination"])
    ENV.step(cap("approvals.request", operation="payouts.create", terms={**terms, "bank_account_id": wrong}))
    obs, *_ = ENV.step("Please approve the pending requests.")
    statuses = [a.status for a in ENV.unwrapped.world.table("approvals")]
    assert statuses == ["granted", "requested", "requested"]  # one customer-side write per turn
    ENV.step("Please approve APR003.")
    assert ENV.unwrapped.world.table("approvals").require("APR003").status == "denied"  # not its bank account


def test_ledger_balances_holds_and_rejected_writes_leave_no_trace():
    task = SUITE[4]
    goal = task.world["goal"]
    ENV.reset(seed=0, options={"task": task})
    w = ENV.unwrapped.world
    ops = goal["operating_account"]
    assert w.available(ops) < goal["payout_total"] <= w.balance(ops)
    for c in ("payouts.create", "holds.release"):
        ENV.step(tool("describe_capability", name=c))
    before = w.state_dict()
    obs, *_ = ENV.step(cap("payouts.create", merchant_id=goal["merchant_id"], account_id=ops, bank_account_id=goal["destination"],
                           amount=goal["payout_total"], idempotency_key="k1"))
    assert "available balance" in obs
    obs, *_ = ENV.step(cap("holds.release", hold_id=goal["hold_id"]))
    assert "only once the case is approved" in obs
    after = ENV.unwrapped.world.state_dict()
    assert after == before


def test_waiting_before_submitting_lets_the_case_expire():
    task = SUITE[5]
    s = build_scenario(5, task.difficulty, "test")
    actions = [a for a in payments_plan(s)]
    # wait for the settlement first: the review window closes before the case is submitted
    actions.insert(actions.index(next(a for a in actions if "please upload" in a)), tool("wait", minutes=float(s.settle_after)))
    info = play(task, actions)
    assert not info["success"] and "goal.case" in failed(info)


def test_checker_of_a_200_step_history_is_fast():
    task = SUITE[9]
    ENV.reset(seed=0, options={"task": task})
    acc = task.world["goal"]["reserve_account"]
    for a in task.golden_actions[:-1]:
        ENV.step(a)
    while ENV.unwrapped._steps < 199:
        ENV.step(cap("accounts.balance", account_id=acc))
    view = ENV.unwrapped.episode_view()
    assert len(view.history) >= 200
    best = min(_timed(lambda: check_payments(view.world, view.history, task.world["goal"])) for _ in range(5))
    assert best < 0.05  # the benchmark script reports the figure (target <= 10 ms)
    ok, score = check_payments(view.world, view.history, task.world["goal"])
    assert ok and score["strict"] == 1.0


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def test_one_approval_covers_one_write_even_for_identical_terms():
    task = SUITE[10]
    actions = list(task.golden_actions)
    # drop the second payout's approval request and its message: the first approval is already used
    idx = [i for i, a in enumerate(actions) if '"approvals.request"' in a and "payouts.create" in a]
    second = idx[1]
    del actions[second : second + 2]
    info = play(task, actions)
    assert failed(info) == ["process.approval"] and info["score"]["goal"] == 1.0


def test_denied_or_merely_requested_approvals_do_not_authorise():
    task = SUITE[12]
    goal = task.world["goal"]
    actions = list(task.golden_actions)
    first = next(i for i, a in enumerate(actions) if '"approvals.request"' in a and "payouts.create" in a)
    # the request is made (a proposal) but never put to the merchant
    del actions[first + 1]
    info = play(task, actions)
    assert "process.approval" in failed(info)
    assert any(a.status == "requested" for a in ENV.unwrapped.world.table("approvals"))
    ENV.reset(seed=0, options={"task": task})
    wrong = next(b.id for b in ENV.unwrapped.world.table("bank_accounts") if b.merchant_id == goal["merchant_id"] and b.id != goal["destination"])
    ENV.step(tool("describe_capability", name="approvals.request"))
    ENV.step(cap("approvals.request", operation="payouts.create",
                 terms={"merchant_id": goal["merchant_id"], "account_id": goal["operating_account"], "bank_account_id": wrong, "amount": 5.0}))
    obs, *_ = ENV.step("Please approve request APR001.")
    assert "deny" in obs and ENV.unwrapped.world.table("approvals").require("APR001").status == "denied"


def test_the_customer_can_wait_instead_of_writing_and_events_fire_in_order():
    task = SUITE[1]
    ENV.reset(seed=0, options={"task": task})
    w = ENV.unwrapped.world
    t0 = w.clock.now
    obs, *_ = ENV.step("Please wait 60 minutes while the settlement arrives.")
    assert "I waited 60 minutes" in obs and "settlement" in obs
    assert (w.clock.now - t0).total_seconds() == 3600
    fired = [e for e in w.table("events") if e.status == "fired"]
    assert [e.kind for e in sorted(fired, key=lambda e: e.time)] == ["rule_effective", "case_deadline", "settlement"]
    assert w.table("cases").require(task.world["goal"]["case_id"]).status == "expired"
    assert [e.name for e in ENV.unwrapped.history if e.kind == "event"] == ["customer_wait"]


def test_fx_conversion_posts_both_legs_and_retries_idempotently():
    task = type(SUITE[3]).model_validate(SUITE[3].model_dump())  # not model_copy: it would keep the cached world
    goal = task.world["goal"]
    cur = next(m for m in task.world["tables"]["merchants"] if m["id"] == goal["merchant_id"])["currency"]
    other = next(c for c in ("USD", "EUR", "GBP") if c != cur)
    task.world["tables"]["accounts"].append({"id": "ACFX01", "merchant_id": goal["merchant_id"], "kind": "operating", "currency": other})
    ENV.reset(seed=0, options={"task": task})
    w = ENV.unwrapped.world
    for c in ("fx.quote", "fx.convert"):
        ENV.step(tool("describe_capability", name=c))
    obs, *_ = ENV.step(cap("fx.quote", from_currency=cur, to_currency=other, amount=50.0))
    quote = json.loads(obs[obs.index(">") + 1 : obs.rindex("<")])
    ops = goal["operating_account"]
    before = w.balance(ops)
    convert = cap("fx.convert", from_account_id=ops, to_account_id="ACFX01", amount=50.0, idempotency_key="fx-1")
    ENV.step(convert)
    obs, *_ = ENV.step(convert)
    assert '"idempotent_replay": true' in obs
    assert w.balance(ops) == round(before - 50.0, 2) and w.balance("ACFX01") == quote["converted"]
    assert len(w.table("fx_conversions")) == 1
    obs, *_ = ENV.step(cap("fx.convert", from_account_id=ops, to_account_id="ACFX01", amount=60.0, idempotency_key="fx-1"))
    assert "different terms" in obs


def test_ask_customer_and_finish_are_tool_spellings_of_a_message_and_stop():
    task = SUITE[6]
    ENV.reset(seed=0, options={"task": task})
    names = [t["function"]["name"] for t in ENV.unwrapped.toolkit.schemas()]
    assert names[-2:] == ["ask_customer", "finish"] and len(names) == 10
    obs, _, term, _, _ = ENV.step(tool("ask_customer", message="Which bank account should receive the payout?"))
    assert "<user>" in obs and task.world["goal"]["destination"] in obs and not term
    obs, *_ = ENV.step(json.dumps([{"name": "ask_customer", "arguments": {"message": "hi"}}, {"name": "read_clock", "arguments": {}}]))
    assert "must be the only tool call" in obs
    actions = task.golden_actions[:-1] + [tool("finish", summary="Everything is completed.")]
    info = play(task, actions)
    assert info["termination_reason"] == "agent_stop" and info["success"]


def test_a_golden_trace_fails_when_the_facts_change():
    """Checker validation with changed facts: the merchant wants the payout in its other account."""
    base = SUITE[8]
    task = type(base).model_validate(base.model_dump())
    goal = task.world["goal"]
    other = next(b["id"] for b in task.world["tables"]["bank_accounts"] if b["merchant_id"] == goal["merchant_id"] and b["id"] != goal["destination"])
    goal["destination"] = other
    task.world["customer"]["destination"] = other
    info = play(task, base.golden_actions)
    assert not info["success"]
    assert {"goal.payout", "process.approval"} <= set(failed(info))
    assert any(a.status == "denied" for a in ENV.unwrapped.world.table("approvals"))


def test_a_reserve_floor_version_taking_effect_must_be_read_before_the_next_refund():
    task = SUITE[3]  # difficulty 3
    s = build_scenario(3, task.difficulty, "test")
    v3 = s.docs["reserves_v3"]
    info = play(task, task.golden_actions)
    w = ENV.unwrapped.world
    assert info["success"] and w.governing("reserves", w.extra["merchant_id"]).id == v3
    skipped = [a for a in task.golden_actions if v3 not in a]
    info = play(task, skipped)
    assert failed(info) == ["process.governing_document"]
    assert v3 in info["score"]["violations"][0]["detail"]


# ----- applications (difficulty 4) and FX inside tasks (difficulty 3+) ------------------------

def _fresh(task):
    return type(task).model_validate(task.model_dump())  # not model_copy: it would keep the cached world


def test_difficulty_4_couples_a_limit_increase_application_with_the_payout():
    task = SUITE[4]
    assert task.difficulty == 4 and task.world["goal"]["max_payouts"] == 1
    s = build_scenario(4, 4, "test")
    assert s.app and s.parts == [s.payout_total] and s.payout_total > s.limits["v2"] > s.limits["v3"]
    assert set(task.violations) >= {"process.application", "process.fx_quote", "goal.fx"}
    variants = payments_variants(4, 4, "test")
    assert variants["payout_before_decision"][1] == ["process.application"]
    info = play(task, task.golden_actions)
    assert info["success"]
    w = ENV.unwrapped.world
    (app,) = list(w.table("applications"))
    assert app.status == "approved" and app.required_document == s.app["doc"] and app.granted_limit == s.payout_total
    (po,) = [p for p in w.table("payouts") if p.account_id == s.ops]
    assert po.amount == s.payout_total and po.time >= app.decides_at
    assert w.payout_limit(s.merchant["id"]) == s.payout_total
    assert w.payout_limit(s.merchant["id"], app.submitted_at) == s.limits["v2"]  # before the decision: the policy's own limit


def test_an_application_is_decided_by_a_scheduled_event_on_its_documents():
    task = SUITE[4]
    s = build_scenario(4, 4, "test")
    mid = s.merchant["id"]
    ENV.reset(seed=0, options={"task": task})
    w = ENV.unwrapped.world
    ENV.step(tool("describe_capability", name="applications.submit"))
    submit = lambda **kw: ENV.step(cap("applications.submit", merchant_id=mid, kind="payout_limit_increase", **kw))[0]  # noqa: E731
    assert "needs at least one uploaded document" in submit(requested_limit=s.payout_total, upload_ids=[])
    assert "not above the limit in force" in submit(requested_limit=s.limits["v3"] / 2, upload_ids=["UP001"])
    obs, *_ = ENV.step(f"Please upload your {s.app['wrong'].replace('_', ' ')}.")
    assert "UP001" in obs
    obs = submit(requested_limit=s.payout_total, upload_ids=["UP001"])
    assert "APP001" in obs and "<tool_error" not in obs
    assert "still under review" in submit(requested_limit=s.payout_total, upload_ids=["UP001"])
    assert w.table("applications").require("APP001").status == "submitted"
    obs, *_ = ENV.step(tool("wait", minutes=float(s.app["minutes"])))
    assert "application APP001 rejected" in obs
    assert w.table("applications").require("APP001").status == "rejected"
    assert w.payout_limit(mid) == s.limits["v3"]  # a rejected application changes nothing


def test_fx_the_task_requires_is_legal_and_fx_it_does_not_is_a_side_effect():
    # difficulty 3: the golden trace converts and pays out the converted amount at the fresh rate
    task = SUITE[3]
    goal = task.world["goal"]
    assert goal["fx"]["to_account"] != goal["operating_account"]
    info = play(task, task.golden_actions)
    assert info["success"]
    w = ENV.unwrapped.world
    (conv,) = list(w.table("fx_conversions"))
    fx_po = [p for p in w.table("payouts") if p.account_id == goal["fx"]["to_account"]]
    assert [p.amount for p in fx_po] == [conv.converted] and fx_po[0].bank_account_id == goal["fx"]["bank"]
    assert any(e.kind == "fx_rate" and e.status == "fired" and e.time <= conv.time for e in w.table("events"))
    # difficulty 0: no conversion is asked for, so any conversion touches something outside the task
    base = SUITE[0]
    assert "fx" not in base.world["goal"]
    t0 = _fresh(base)
    g0 = t0.world["goal"]
    cur = next(m for m in t0.world["tables"]["merchants"] if m["id"] == g0["merchant_id"])["currency"]
    other = next(c for c in ("USD", "EUR", "GBP") if c != cur)
    t0.world["tables"]["accounts"].append({"id": "ACFX01", "merchant_id": g0["merchant_id"], "kind": "operating", "currency": other})
    extra = [tool("describe_capability", name="fx.convert"),
             cap("fx.convert", from_account_id=g0["operating_account"], to_account_id="ACFX01", amount=1.0, idempotency_key="fx-x")]
    info = play(t0, base.golden_actions[:-1] + extra + base.golden_actions[-1:])
    assert failed(info) == ["protection.untouched"]


def test_fx_counterexamples_stale_quote_and_unconverted_approval():
    for i in (3, 4):
        task = SUITE[i]
        variants = payments_variants(i, task.difficulty, "test")
        for label, expected in (("fx_stale_quote", ["process.fx_quote"]), ("fx_stale_amount", ["goal.fx", "process.fx_quote"]),
                                ("fx_unconverted_approval", ["process.approval"]), ("fx_extra", ["protection.untouched"]),
                                ("fx_not_paid", ["goal.fx"])):
            info = play(task, variants[label][0])
            assert failed(info) == expected, (i, label, info["score"]["violations"])
        info = play(task, variants["fx_stale_quote"][0])
        assert "rate changed" in info["score"]["violations"][0]["detail"]


def test_a_bank_account_in_another_currency_refuses_a_payout_from_the_wrong_account():
    task = SUITE[3]
    goal = task.world["goal"]
    ENV.reset(seed=0, options={"task": task})
    ENV.step(tool("describe_capability", name="payouts.create"))
    obs, *_ = ENV.step(cap("payouts.create", merchant_id=goal["merchant_id"], account_id=goal["operating_account"],
                           bank_account_id=goal["fx"]["bank"], amount=1.0, idempotency_key="k"))
    assert "<tool_error" in obs and "takes" in obs
    assert not list(ENV.unwrapped.world.table("payouts"))


def test_a_repeated_conversion_with_the_same_key_is_a_retry_not_a_second_conversion():
    task = SUITE[3]
    actions = list(task.golden_actions)
    i = next(k for k, a in enumerate(actions) if '"fx.convert"' in a and "call_capability" in a)
    info = play(task, actions[: i + 1] + [actions[i]] + actions[i + 1 :])
    assert info["success"], info["score"]["violations"]
    assert len(ENV.unwrapped.world.table("fx_conversions")) == 1


def test_llm_judge_is_refused_with_a_clear_error():
    import gymnasium as gym
    import pytest

    with pytest.raises(ValueError, match="G/P/F"):
        gym.make("servicegym/Payments-v0", judge="llm", llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"})
