"""The sliding-window rubric judge: window arithmetic, the state vector, the LLM judge function
through the real ``openai`` client against the loopback server, the env's ``judge="llm"``
wiring, and a VitaBench run recorded to a cache and replayed with no server."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st

import servicegym  # noqa: F401  registers the ids
from servicegym.envs.running.policies import OraclePolicy, RandomPolicy, run_episode
from servicegym.rewards.judge import (
    JudgeItem,
    LLMJudgeFn,
    SlidingWindowJudge,
    WindowVerdicts,
    apply_verdicts,
    judge_items,
    make_llm_judge,
    normalize_verdicts,
    parse_reply,
    relevant_window,
    window_bounds,
)
from servicegym.rewards.metrics import cohen_kappa
from servicegym.simulators.llm import LLMClient
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "vitabench"
VITA_DELIVERY = DATA / "delivery" / "tasks_en.json"


def _vitabench_windows(n: int, w: int, overlap: int) -> list[tuple[int, int]]:
    """VitaBench's own loop (``_create_sliding_windows``), over indices, as the reference."""
    if n <= w:
        return [(0, n)]
    out, i, step = [], 0, w - overlap
    while i < n:
        out.append((i, min(i + w, n)))
        if i + w >= n:
            break
        i += step
    return out


def msgs(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


# ----- window arithmetic ---------------------------------------------------------------------
def test_window_bounds_by_hand():
    assert window_bounds(0) == []
    assert window_bounds(1) == [(0, 1)]
    assert window_bounds(10) == [(0, 10)]
    assert window_bounds(11) == [(0, 10), (8, 11)]
    assert window_bounds(18) == [(0, 10), (8, 18)]
    assert window_bounds(19) == [(0, 10), (8, 18), (16, 19)]
    assert window_bounds(26) == [(0, 10), (8, 18), (16, 26)]
    assert window_bounds(7, window=3, overlap=1) == [(0, 3), (2, 5), (4, 7)]
    assert window_bounds(5, window=2, overlap=0) == [(0, 2), (2, 4), (4, 5)]
    assert window_bounds(4, window=1, overlap=0) == [(0, 1), (1, 2), (2, 3), (3, 4)]


@pytest.mark.parametrize("window,overlap", [(0, 0), (-1, 0), (2, 2), (3, 5), (4, -1)])
def test_window_bounds_rejects_bad_parameters(window, overlap):
    with pytest.raises(ValueError, match="window|overlap"):
        window_bounds(20, window, overlap)
    with pytest.raises(ValueError):
        SlidingWindowJudge(lambda *a: {}, window=window, overlap=overlap)


@given(n=st.integers(1, 200), w=st.integers(1, 15), data=st.data())
def test_window_bounds_properties(n, w, data):
    overlap = data.draw(st.integers(0, w - 1))
    got = window_bounds(n, w, overlap)
    assert got == _vitabench_windows(n, w, overlap)
    step = w - overlap
    assert len(got) == (1 if n <= w else math.ceil((n - w) / step) + 1)
    assert got[0][0] == 0 and got[-1][1] == n
    covered = set()
    for a, b in got:
        assert 0 < b - a <= w
        covered.update(range(a, b))
    assert covered == set(range(n))
    for (a1, b1), (a2, _) in zip(got, got[1:]):
        assert b1 - a1 == w and a2 - a1 == step and b1 - a2 == overlap


# ----- the state vector with a scripted judge ---------------------------------------------------
ITEMS = [JudgeItem("a", "ordered noodles"), JudgeItem("b", "paid"), JudgeItem("c", "told the total")]


class Scripted:
    """Replies window by window from a list, recording what it was shown."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen = []

    def __call__(self, window, items, state):
        self.seen.append((window.start, window.index, window.total, [m["content"] for m in window], dict(state)))
        return self.replies.pop(0)


def test_scripted_judge_sees_each_window_and_the_state_before_it():
    fn = Scripted([{"a": "met"}, {"b": "met", "a": "unchanged"}, {"c": "met"}])
    convo = [{"role": "system", "content": "sys"}] + msgs(19)
    res = SlidingWindowJudge(fn).judge(convo, ITEMS)
    # the system prompt is left out: 19 messages -> windows [0,10) [8,18) [16,19)
    assert [(s, i, t) for s, i, t, _, _ in fn.seen] == [(0, 0, 3), (8, 1, 3), (16, 2, 3)]
    assert fn.seen[1][3] == [f"m{i}" for i in range(8, 18)]
    assert fn.seen[0][4] == {"a": False, "b": False, "c": False}
    assert fn.seen[1][4] == {"a": True, "b": False, "c": False}
    assert fn.seen[2][4] == {"a": True, "b": True, "c": False}
    assert res.states == {"a": True, "b": True, "c": True}
    assert res.success and res.fraction == 1.0 and res.error is None
    assert [(w.start, w.end) for w in res.windows] == [(0, 10), (8, 18), (16, 19)]
    assert [w.changed for w in res.windows] == [{"a": True}, {"b": True}, {"c": True}]
    comp = res.components()
    assert comp["judge_success"] == 1.0 and comp["judge_windows"] == 3.0 and comp["judge/b"] == 1.0


def test_met_items_stay_met_until_overturned():
    fn = Scripted([
        {"a": "met", "b": "met", "c": "unchanged"},
        {"a": "unchanged", "b": "overturned", "c": "overturned"},  # c was never met: a no-op
        {},  # says nothing: everything unchanged
        {"a": "unchanged", "b": "unchanged", "c": "unchanged"},
    ])
    res = SlidingWindowJudge(fn, window=4, overlap=1).judge(msgs(12), ITEMS)  # windows 0-4 3-7 6-10 9-12
    assert len(res.windows) == 4
    assert res.states == {"a": True, "b": False, "c": False}
    assert res.windows[1].changed == {"b": False}
    assert not res.success and res.fraction == pytest.approx(1 / 3)
    assert "no verdict" in " ".join(res.windows[2].problems)


def test_apply_verdicts_transitions():
    for before in (False, True):
        assert apply_verdicts({"x": before}, {"x": "met"})[0] == {"x": True}
        assert apply_verdicts({"x": before}, {"x": "overturned"})[0] == {"x": False}
        assert apply_verdicts({"x": before}, {"x": "unchanged"})[0] == {"x": before}


def test_bad_verdicts_are_unchanged_and_logged():
    got = normalize_verdicts({"a": "yes", "b": {"verdict": "met", "reason": "paid"}, "zz": "met"}, ["a", "b", "c"])
    assert got.verdicts == {"a": "unchanged", "b": "met", "c": "unchanged"}
    assert got.reasons == {"b": "paid"}
    text = " ".join(got.problems)
    assert "invalid verdict 'yes'" in text and "unknown item 'zz'" in text and "'c': no verdict" in text
    assert normalize_verdicts(["met"], ["a"]).verdicts == {"a": "unchanged"}


def test_no_items_or_no_messages():
    res = SlidingWindowJudge(Scripted([])).judge(msgs(5), [])
    assert not res.success and res.error == "no rubric items to judge"
    fn = Scripted([])
    res = SlidingWindowJudge(fn).judge([], ITEMS)
    assert res.windows == [] and fn.seen == [] and res.states == {"a": False, "b": False, "c": False}
    with pytest.raises(ValueError, match="unique"):
        SlidingWindowJudge(fn).judge(msgs(2), [JudgeItem("a", "x"), JudgeItem("a", "y")])


def test_parse_reply_validation():
    ok = parse_reply('```json\n{"items": [{"id": "a", "verdict": "met", "reason": "r"}, {"id": "b", "verdict": "unchanged"}]}\n```',
                     ["a", "b"])
    assert ok.verdicts == {"a": "met", "b": "unchanged"} and ok.reasons == {"a": "r"}
    for bad, why in [("", "empty"), ("nope", "not JSON"), ('{"x": 1}', "items"),
                     ('{"items": [{"id": "a", "verdict": "maybe"}]}', "maybe"),
                     ('{"items": [{"id": "q", "verdict": "met"}]}', "unknown"),
                     ('{"items": [{"id": "a", "verdict": "met"}]}', "no verdict for b"),
                     ('{"items": [{"id": "a", "verdict": "met"}, {"id": "a", "verdict": "met"}, {"id": "b", "verdict": "met"}]}',
                      "twice")]:
        with pytest.raises(ValueError, match=why):
            parse_reply(bad, ["a", "b"])


# ----- the LLM judge through the openai client against the loopback server -----------------------
def _criteria(body: dict) -> list[dict]:
    user = body["messages"][1]["content"]
    return json.loads(re.search(r"<criteria>\n(.*)\n</criteria>", user, re.DOTALL).group(1))


def _window_text(body: dict) -> str:
    return re.search(r"<window>\n(.*)\n</window>", body["messages"][1]["content"], re.DOTALL).group(1)


def pay_judge(body: dict) -> dict:
    """A deterministic stand-in model: every criterion is met in a window with a payment call."""
    met = "calls pay_" in _window_text(body)
    items = [{"id": c["id"], "verdict": "met" if met else "unchanged", "reason": "payment seen" if met else "-"}
             for c in _criteria(body)]
    return text_reply(json.dumps({"items": items}))


def all_met(body: dict) -> dict:
    return text_reply(json.dumps({"items": [{"id": c["id"], "verdict": "met"} for c in _criteria(body)]}))


def _client(server, tmp_path=None, **kw) -> LLMClient:
    cfg = server.config(max_retries=0, backoff_base_s=0.0, **kw)
    if tmp_path is not None:
        cfg["cache_dir"] = str(tmp_path)
    return LLMClient(cfg)


def test_llm_judge_fn_prompt_and_reply():
    with LoopbackServer(handler=pay_judge) as server:
        judge = SlidingWindowJudge(LLMJudgeFn(_client(server)), window=3, overlap=1)
        convo = msgs(4) + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "pay_delivery_order", "arguments": '{"order_id": "X"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "paid"}'}]
        res = judge.judge(convo, ITEMS, {"current_time": "2025-06-21 11:20:00"})
        assert [(w.start, w.end) for w in res.windows] == [(0, 3), (2, 5), (4, 6)]
        assert len(server.requests) == 3 and res.calls == 3
        body = server.requests[2]
        assert body["response_format"] == {"type": "json_object"}
        assert body["messages"][0]["role"] == "system"
        user = body["messages"][1]["content"]
        assert "Window 3 of 3, messages 5 to 6." in user and "2025-06-21 11:20:00" in user
        assert '[5] assistant: calls pay_delivery_order({"order_id": "X"}) [id c1]' in user
        assert '[6] tool result [id c1]: {"status": "paid"}' in user
        # window 2 (messages 3-5) already holds the payment call
        assert [c["met_so_far"] for c in _criteria(server.requests[1])] == [False, False, False]
        assert [c["met_so_far"] for c in _criteria(body)] == [True, True, True]
        assert res.success and res.windows[1].reasons["a"] == "payment seen"


def test_llm_judge_retries_a_malformed_reply_once():
    good = json.dumps({"items": [{"id": i.key, "verdict": "met"} for i in ITEMS]})
    with LoopbackServer(script=["this is not json", good]) as server:
        res = SlidingWindowJudge(LLMJudgeFn(_client(server))).judge(msgs(3), ITEMS)
        assert res.success and res.calls == 2 and res.usage["requests"] == 2
        assert "not JSON" in res.windows[0].problems[0]
        retry = server.requests[1]["messages"]
        assert retry[2] == {"role": "assistant", "content": "this is not json"}
        assert "could not be used" in retry[3]["content"] and "a, b, c" in retry[3]["content"]


def test_llm_judge_twice_malformed_keeps_items_unchanged():
    with LoopbackServer(script=['{"items": []}', '{"items": [{"id": "a", "verdict": "sure"}]}']) as server:
        res = SlidingWindowJudge(LLMJudgeFn(_client(server))).judge(msgs(3), ITEMS)
        assert res.states == {"a": False, "b": False, "c": False} and res.error is None
        assert res.calls == 2 and len(res.windows[0].problems) == 3
        assert "items kept unchanged" in res.windows[0].problems[-1]


def test_llm_judge_without_json_mode_falls_back_to_plain_text():
    good = json.dumps({"items": [{"id": i.key, "verdict": "met"} for i in ITEMS]})
    with LoopbackServer(script=[Fault.status(400, message="response_format is not supported"), good, good]) as server:
        fn = LLMJudgeFn(_client(server))
        res = SlidingWindowJudge(fn, window=2, overlap=0).judge(msgs(4), ITEMS)
        assert res.success and res.error is None and not fn.json_mode
        assert "response_format" in server.requests[0]
        assert "response_format" not in server.requests[1] and "response_format" not in server.requests[2]


def test_llm_error_stops_the_judgement_without_raising():
    with LoopbackServer(script=[all_met(_fake_body()), Fault.status(500)]) as server:
        res = SlidingWindowJudge(LLMJudgeFn(_client(server)), window=2, overlap=0).judge(msgs(6), ITEMS)
    assert res.states == {"a": True, "b": True, "c": True}
    assert not res.success and "HTTP 500" in res.error and len(res.windows) == 2  # the third never asked


def _fake_body() -> dict:
    crit = json.dumps([{"id": i.key} for i in ITEMS])
    return {"messages": [{}, {"content": f"<criteria>\n{crit}\n</criteria>"}]}


# ----- judge="llm" in the env ------------------------------------------------------------------
def play(env, policy, seed):
    """One episode; the final step's reward and info."""
    obs, info = env.reset(seed=seed)
    policy.reset(env, obs, info)
    while True:
        obs, reward, term, trunc, info = env.step(policy.act(obs))
        if term or trunc:
            return reward, info


def test_env_judge_llm_follows_the_judge():
    with LoopbackServer(handler=pay_judge) as server:
        env = gym.make("servicegym/Delivery-v0", judge="llm", llm=server.config(max_retries=0))
        reward, info = play(env, OraclePolicy(), seed=3)
        score = info["score"]
        items = judge_items(env.unwrapped.task)
        n_msgs = len(env.unwrapped.messages) - 1
        assert score["judge_windows"] == len(window_bounds(n_msgs)) == len(server.requests)
        assert info["success"] == (score["judge_fraction"] == 1.0) == bool(reward)
        assert score["code_success"] == 1.0 and score["rubric_fraction"] == 1.0  # the code components stay
        assert {f"judge/{i.key}" for i in items} <= set(score)
        code = [bool(score[f"rubric/{i.key}"]) for i in items]
        judged = [bool(score[f"judge/{i.key}"]) for i in items]
        assert score["judge_agreement"] == pytest.approx(sum(a == b for a, b in zip(code, judged)) / len(items))
        assert score["judge_kappa"] == pytest.approx(cohen_kappa(code, judged))
        assert info["judge"]["windows"][0]["start"] == 0 and "judge_error" not in info
        assert env.unwrapped.llm_judge.judge_fn.client is env.unwrapped.llm_client()  # one client per env
        usage = info["judge_usage"]
        assert usage["requests"] == len(server.requests) and usage["cache_hits"] == 0 and usage["prompt_tokens"] > 0

        # a judge that calls everything met makes a random episode a success the code rejects
        env2 = gym.make("servicegym/Delivery-v0", judge="llm", llm=server.config(max_retries=0), max_steps=6)
        server.handler = all_met
        rec = run_episode(env2, RandomPolicy(seed=1), seed=5)
        assert rec["success"] is True and rec["reward"] == 1.0 and rec["score"]["code_success"] == 0.0


def test_env_judge_llm_endpoint_failure_does_not_raise():
    with LoopbackServer() as server:
        llm = server.config(max_retries=0, timeout_s=2)
    # the server is gone: every request fails to connect
    env = gym.make("servicegym/Delivery-v0", judge="llm", llm=llm)
    reward, info = play(env, OraclePolicy(), seed=3)
    assert info["success"] is False and reward == 0.0
    assert info["score"]["code_success"] == 1.0 and info["score"]["judge_success"] == 0.0
    assert "connection" in info["judge_error"].lower()


def test_env_judge_llm_needs_an_endpoint(monkeypatch):
    monkeypatch.delenv("SERVICEGYM_BASE_URL", raising=False)
    monkeypatch.delenv("SERVICEGYM_MODEL", raising=False)
    with pytest.raises(ValueError, match="not configured"):
        gym.make("servicegym/Delivery-v0", judge="llm")


def test_env_accepts_a_scripted_judge_in_place_of_the_llm():
    with LoopbackServer() as server:
        env = gym.make("servicegym/Delivery-v0", judge="llm", llm=server.config())
    env.unwrapped.llm_judge = SlidingWindowJudge(lambda w, items, s: WindowVerdicts({i.key: "met" for i in items}))
    rec = run_episode(env, OraclePolicy(), seed=3)
    assert rec["success"] and rec["score"]["judge_fraction"] == 1.0 and rec["score"]["judge_kappa"] == 1.0


# ----- a VitaBench run with the LLM judge, recorded then replayed from the cache ----------------------
@pytest.mark.skipif(not VITA_DELIVERY.is_file(), reason=f"VitaBench delivery data not found at {VITA_DELIVERY}")
def test_vitabench_llm_judge_replays_from_cache_without_a_server(tmp_path):
    cache = tmp_path / "cache"
    kw = {"tasks": str(VITA_DELIVERY)}
    runs = [(OraclePolicy, 0, 0), (RandomPolicy, 1, 1)]

    def play(llm):
        env = gym.make("servicegym/Delivery-v0", judge="llm", llm=llm, **kw)
        ids = env.unwrapped.task_ids()
        out = []
        for cls, task_index, seed in runs:
            policy = cls(seed=seed) if cls is RandomPolicy else cls()
            out.append(run_episode(env, policy, seed=seed, options={"task_id": ids[task_index]}))
        return env, out

    with LoopbackServer(handler=pay_judge) as server:
        llm = server.config(cache_dir=str(cache), max_retries=0, timeout_s=5)
        env, first = play(llm)
        sent = len(server.requests)
    task = env.unwrapped.source.get(env.unwrapped.task_ids()[0])
    assert task.nl_rubric and judge_items(task)[0].key == "rubric_0"
    assert sent == sum(r["score"]["judge_calls"] for r in first) and sent >= 2
    assert first[1]["score"]["judge_windows"] > 1  # the random episode is long
    assert first[0]["score"]["judge_items"] == len(task.nl_rubric)

    # replay: the server is stopped; every request must come from the cache
    client = env.unwrapped.llm_judge.judge_fn.client
    before = dict(client.usage)
    env2, again = play(llm)
    assert env2.unwrapped.llm_judge.judge_fn.client is client  # one shared client per endpoint and process
    assert client.usage["calls"] == before["calls"]
    assert client.usage["cache_hits"] - before["cache_hits"] == sent
    for a, b in zip(first, again):
        assert a["score"] == b["score"] and a["success"] == b["success"] and a["reward"] == b["reward"]
    assert first[0]["score"]["judge_success"] == 1.0  # the golden route pays
    assert "judge_agreement" not in first[0]["score"]  # natural-language items have no code twin


def test_make_llm_judge_reads_the_config():
    with LoopbackServer() as server:
        judge = make_llm_judge(server.config(), window=6, overlap=3)
        assert (judge.window, judge.overlap) == (6, 3)
        assert judge.judge_fn.client.config.base_url == server.base_url


@pytest.mark.skipif(not VITA_DELIVERY.is_file(), reason=f"VitaBench delivery data not found at {VITA_DELIVERY}")
def test_vitabench_tasks_keep_their_natural_language_rubric(tmp_path):
    from servicegym.envs.tasks import load_task_file, save_task_file

    raw = {t["id"]: t for t in json.loads(VITA_DELIVERY.read_text(encoding="utf-8"))}
    tasks = load_task_file(VITA_DELIVERY, "delivery")
    for task in tasks:
        crit = raw[task.task_id]["evaluation_criteria"]
        texts = [r for s in crit["expected_states"] for r in s.get("state_rubrics") or []] + crit["overall_rubrics"]
        assert task.nl_rubric == list(dict.fromkeys(texts))  # each string once, in the file's order
        assert [i.text for i in judge_items(task)] == task.nl_rubric
    save_task_file(tasks[:2], tmp_path / "t.json")
    assert [t.nl_rubric for t in load_task_file(tmp_path / "t.json", "delivery")] == [t.nl_rubric for t in tasks[:2]]


def test_partial_credit_on_the_judge_fraction():
    from servicegym.rewards.wrappers import PartialCreditReward

    def first_half(window, items, state):
        return {i.key: "met" for i in items[: len(items) // 2]}

    with LoopbackServer() as server:
        env = PartialCreditReward(gym.make("servicegym/Delivery-v0", judge="llm", llm=server.config()),
                                  component="judge_fraction")
    env.unwrapped.llm_judge = SlidingWindowJudge(first_half)
    rec = run_episode(env, OraclePolicy(), seed=3)
    n = rec["score"]["judge_items"]
    assert rec["reward"] == pytest.approx((n // 2) / n) and rec["success"] is False
    assert rec["score"]["code_success"] == 1.0 and 0.0 <= rec["score"]["judge_agreement"] < 1.0


def test_code_checked_items_keep_their_code_verdict(tmp_path):
    """A VitaBench task's compiled items (here "tea order cancelled", a status, and an address)
    are not sent to the judge; their code verdict stands, whatever the judge would say."""
    from servicegym.rewards.judge import split_items
    from tests.envs.test_vitabench import HOME, _write, mini_task

    raw = mini_task("M0000001")
    raw["evaluation_criteria"]["overall_rubrics"].append(f"The delivery address should be {HOME}")
    path = _write(tmp_path, [raw])
    seen: list[list[str]] = []

    def says_all_met(window, items, state):
        seen.append([i.key for i in items])
        return {i.key: "met" for i in items}

    with LoopbackServer() as server:
        env = gym.make("servicegym/Delivery-v0", tasks=str(path), judge="llm", llm=server.config())
    env.unwrapped.llm_judge = SlidingWindowJudge(says_all_met)
    task = env.unwrapped.source.get("M0000001")
    judged, coded = split_items(task)
    assert coded == {"rubric_2": "nl_status_2", "rubric_3": "nl_address_3"}
    assert [i.key for i in judged] == ["rubric_0", "rubric_1"] and len(judge_items(task)) == 4

    ok = run_episode(env, OraclePolicy(), seed=0, options={"task_id": "M0000001"})
    assert seen and all(keys == ["rubric_0", "rubric_1"] for keys in seen)  # only the uncheckable items
    assert ok["success"] and ok["score"]["judge_llm_items"] == 2.0 and ok["score"]["judge_code_items"] == 2.0
    assert ok["score"]["judge_items"] == 4.0 and ok["score"]["judge_fraction"] == 1.0

    # the tea kept: the judge calls everything it sees met, the code verdict of the status item fails
    kept = [a for a in task.golden_actions if '"cancel_delivery_order"' not in a]

    class Plays:
        def __init__(self, actions):
            self.actions = actions

        def reset(self, env, obs, info):
            self.i = 0

        def act(self, obs):
            self.i += 1
            return self.actions[self.i - 1] if self.i <= len(self.actions) else "###STOP###"

    bad = run_episode(env, Plays(kept), seed=0, options={"task_id": "M0000001"})
    assert bad["success"] is False and bad["reward"] == 0.0
    assert bad["score"]["judge/rubric_2"] == 0.0 and bad["score"]["judge/rubric_0"] == 1.0
    assert bad["score"]["judge_fraction"] == pytest.approx(3 / 4)


def test_a_task_with_every_item_code_checked_asks_no_judge(tmp_path):
    from tests.envs.test_vitabench import HOME, _write, mini_task

    raw = mini_task("M0000001")
    raw["evaluation_criteria"]["overall_rubrics"] = [f"The delivery address should be {HOME}"]
    for state in raw["evaluation_criteria"]["expected_states"]:
        state["state_rubrics"] = []
    path = _write(tmp_path, [raw])

    def never(window, items, state):
        raise AssertionError("the judge was asked")

    with LoopbackServer() as server:
        env = gym.make("servicegym/Delivery-v0", tasks=str(path), judge="llm", llm=server.config())
    env.unwrapped.llm_judge = SlidingWindowJudge(never)
    rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": "M0000001"})
    assert rec["success"] and rec["score"]["judge_llm_items"] == 0.0 and rec["score"]["judge_windows"] == 0.0


# ----- one item at a time (the hybrid scoring's judge) ----------------------------------------------
def test_relevant_window_finds_the_messages_about_an_item():
    convo = [{"role": "user", "content": f"small talk {i}"} for i in range(12)]
    convo[3] = {"role": "user", "content": "Please add a note: no coriander, extra chilli"}
    convo[4] = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "create_delivery_order",
                                                      "arguments": '{"note": "no coriander"}'}}]}
    assert relevant_window(convo, "The order note should say no coriander", window=3) in ((2, 5), (3, 6), (4, 7))
    start, end = relevant_window(convo, "The order note should say no coriander", window=3)
    assert start <= 3 and end >= 5, "both messages about the note are in the window"
    # Chinese: character pairs
    convo[9] = {"role": "user", "content": "备注写上不要香菜"}
    assert relevant_window(convo, "订单备注应为不要香菜", window=2) in ((8, 10), (9, 11))
    # nothing shared: the latest window; short conversations are one window
    assert relevant_window(convo, "zzz qqq", window=4) == (8, 12)
    assert relevant_window(convo[:2], "anything", window=10) == (0, 2) and relevant_window([], "x") == (0, 0)
    with pytest.raises(ValueError):
        relevant_window(convo, "x", window=0)


def test_judge_each_asks_about_one_item_in_its_window():
    seen = []

    def fn(window, items, state):
        seen.append((window.start, len(window), [i.key for i in items], dict(state)))
        return {items[0].key: "met" if items[0].key != "c" else "unchanged"}

    convo = [{"role": "user", "content": f"message {i}"} for i in range(30)]
    convo[25] = {"role": "user", "content": "the payment went through"}
    res = SlidingWindowJudge(fn, per_item=True).judge_each(convo, [JudgeItem("a", "payment made"), JudgeItem("c", "x")])
    assert [s[2] for s in seen] == [["a"], ["c"]] and all(s[1] == 10 for s in seen)
    assert 16 <= seen[0][0] <= 25 and seen[0][3] == {"a": False}
    assert res.states == {"a": True, "c": False} and not res.success and res.calls == 2
    assert [(w.start, w.end) for w in res.windows] == [(seen[0][0], seen[0][0] + 10), (20, 30)]


def test_judge_each_stops_at_an_unusable_endpoint():
    with LoopbackServer(script=[Fault.status(500)] * 5) as server:
        res = SlidingWindowJudge(LLMJudgeFn(_client(server)), per_item=True).judge_each(msgs(3), ITEMS)
    assert res.error and not res.success and len(res.windows) == 1


def test_the_env_judge_asks_each_unread_item_alone(tmp_path):
    """judge="llm" without a judge set: the env builds the per-item judge over its endpoint; every
    request carries one criterion, the code-checked ones are never sent."""
    from tests.envs.test_vitabench import HOME, _write, mini_task

    raw = mini_task("M0000001")
    raw["evaluation_criteria"]["overall_rubrics"] = [f"The delivery address should be {HOME}", "tea order cancelled",
                                                     "The agent must tell the user the total price",
                                                     "The agent must be polite"]
    path = _write(tmp_path, [raw])
    with LoopbackServer(handler=all_met) as server:
        env = gym.make("servicegym/Delivery-v0", tasks=str(path), judge="llm", llm=server.config(max_retries=0))
        rec = run_episode(env, OraclePolicy(), seed=0, options={"task_id": "M0000001"})
        asked = [[c["criterion"] for c in _criteria(body)] for body in server.requests]
    assert rec["success"] and rec["score"]["rubric_items_judge"] == 3.0  # the state rubric "..." and the two above
    assert sorted(a[0] for a in asked) == sorted(["...", "The agent must tell the user the total price",
                                                  "The agent must be polite"])
    assert all(len(a) == 1 for a in asked)
