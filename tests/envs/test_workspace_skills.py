"""Workspace skills (issue 28 part 1): the staged skill folders, the sandboxed script interpreter,
all-or-nothing runs, stale skills, the skill-use components and the oracle that uses skills."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401
from servicegym.envs.tasks.generators.content_workspace import PERSONA_CONTENT, PERSONA_ORDER
from servicegym.envs.tasks.generators.workspace import Episode, generate_workspace_task
from servicegym.envs.tasks.generators.workspace_skills import context
from servicegym.world_state.tools import ToolError
from servicegym.world_state.workspace import skills as sk
from servicegym.world_state.workspace.skill_library import ARITHMETIC, COVERS, SKILL_NAMES, skill_count

ENV_ID = "servicegym/Workspace-v0"
SEEDS = range(10)  # two generated episodes per persona


def world_hash(world: Any) -> str:
    return hashlib.sha256(json.dumps(world.state_dict(), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def call(tool: str, /, **arguments: Any) -> str:
    return json.dumps({"name": tool, "arguments": arguments}, ensure_ascii=False)


@pytest.fixture(scope="module")
def env():
    return gym.make(ENV_ID)


@pytest.fixture(scope="module")
def tasks():
    return {seed: generate_workspace_task(seed) for seed in SEEDS}


def play(env, task, actions, options=None):
    """Feed ``actions``; returns (session_end infos, final info, observations)."""
    obs, _ = env.reset(seed=0, options={"task": task, **(options or {})})
    ends, seen = [], [obs]
    for a in actions:
        obs, _, term, trunc, info = env.step(a)
        seen.append(obs)
        if "session_end" in info:
            ends.append(info["session_end"])
        if term or trunc:
            return ends, info, seen
    raise AssertionError("the episode did not end")


def at_session(env, task, k):
    """The env reset to session ``k`` of ``task`` (the workspace a golden run of 1..k-1 leaves)."""
    env.reset(seed=0, options={"task": task, "session": k})
    return env.unwrapped


def step_call(env, tool, /, **arguments):
    obs, *_ = env.step(call(tool, **arguments))
    return obs


def result_of(obs: str) -> dict[str, Any]:
    assert "<tool_result" in obs, obs[:800]
    body = obs.split(">", 1)[1].rsplit("</tool_result>", 1)[0]
    return json.loads(body)


# ----- the library ------------------------------------------------------------------------------
def test_twenty_two_skills_four_or_five_per_persona_each_staged_with_doc_and_scripts(env, tasks):
    counts = skill_count()
    assert sum(counts.values()) >= 21 and all(4 <= c <= 5 for c in counts.values()) and set(counts) == set(PERSONA_ORDER)
    for seed in range(5):
        task = tasks[seed]
        u = at_session(env, task, 1)
        listed = result_of(step_call(env, "list_skills"))
        names = sorted(SKILL_NAMES[task.world["persona"]].values())
        assert [s["name"] for s in listed["skills"]] == names and listed["count"] == len(names)
        for s in listed["skills"]:
            assert "run.json" in s["scripts"] and s["description"]
            doc = result_of(step_call(env, "read_skill", name=s["name"]))
            for heading in ("## When to use", "## Inputs", "## Outputs", "## Conventions it applies"):
                assert heading in doc["doc"]
            assert "run.json" in doc["scripts"]
        assert u.world.table("files").get(f"skills/{names[0]}/SKILL.md") is not None


@pytest.mark.parametrize("persona", PERSONA_ORDER)
def test_script_arithmetic_matches_the_personas_definitions_on_every_record(persona, tasks):
    """The metric, house number format and derived column written in the script language give
    exactly what the generator's Python definitions give, on every record of two episodes."""
    p = PERSONA_CONTENT[persona]
    a = ARITHMETIC[persona]
    n = 0
    for seed in SEEDS:
        task = tasks[seed]
        if task.world["persona"] != persona:
            continue
        for f in task.world["tables"]["files"]:
            if not f["path"].startswith(p.data_dir + "/"):
                continue
            lines = f["content"].strip().split("\n")
            head = lines[0].split(",")
            for line in lines[1:]:
                r = dict(zip(head, line.split(",")))
                assert sk.evaluate(a["metric"], r) == pytest.approx(p.metric(r), rel=1e-12)
                unit = a["unit"]
                got = (unit["template"].format(**r) if "template" in unit
                       else sk.format_number(sk.evaluate(unit["expr"], r), unit["format"]))
                assert got == p.unit(r)
                assert sk.format_number(sk.evaluate(a["derived"]["expr"], r), a["derived"]["format"]) == p.derived[1](r)
                n += 1
    assert n > 50


# ----- every skill does its persona's work -------------------------------------------------------
def _fresh_sessions(tasks):
    """(task, session spec) for the first session each up-to-date skill does, over the seeds."""
    seen: dict[str, tuple[Any, dict[str, Any]]] = {}
    for task in tasks.values():
        for s in task.world["sessions"]:
            sk_ = s.get("skill")
            if sk_ and not sk_["stale"] and sk_["name"] not in seen:
                seen[sk_["name"]] = (task, s)
    return seen


def test_every_skill_run_by_the_golden_route_completes_its_session(env, tasks):
    """Each skill (up to date in some episode) is run on its persona's workspace by the session's
    golden route: the session succeeds with COMP 1, every intent the skill covers is Completed
    without a question, and the session reports the skill used."""
    more = {seed: generate_workspace_task(seed) for seed in range(10, 25)}
    seen = _fresh_sessions({**tasks, **more})
    assert set(seen) == {n for names in SKILL_NAMES.values() for n in names.values()}
    for name, (task, s) in seen.items():
        assert any(name in a and '"run_skill"' in a for a in s["golden"])
        ends, info, _ = play(env, task, s["golden"], options={"session": s["index"]})
        end = ends[-1]
        assert end["success"] and end["comp"] == 1.0, (name, end)
        covered = [i for i in s["intents"] if i["key"] in COVERS[s["skill"]["kind"]]]
        assert covered and all(end["intents"][i["id"]] == "completed" for i in covered), (name, end["intents"])
        assert info["score"][f"s{s['index']:02d}/skill_used"] == 1.0
        assert info["score"]["skill_use"] == 1.0 and info["score"]["skills_applicable"] == 1.0


def test_report_skill_writes_the_house_format(env, tasks):
    task = tasks[0]
    s = next(s for s in task.world["sessions"] if s.get("skill", {}).get("kind") == "report" and not s["skill"]["stale"])
    u = at_session(env, task, s["index"])
    out = result_of(step_call(env, "run_skill", name=s["skill"]["name"], args=s["skill"]["args"]))["result"]
    p = PERSONA_CONTENT[task.world["persona"]]
    text = u.world.table("files").get(out["path"]).content
    headings = [line[3:] for line in text.split("\n") if line.startswith("## ")]
    want = next(i for ss in task.world["sessions"] for i in ss["checklist"] if i["name"] == "sections")["params"]["headings"]
    assert headings == want == out["sections"]
    batch = s["skill"]["args"]["batch"]
    data = u.world.table("files").get(f"{p.data_dir}/{p.batch_noun}_{batch:02d}.csv").content.strip().split("\n")
    rows = [dict(zip(data[0].split(","), line.split(","))) for line in data[1:]]
    best = max(rows, key=p.metric)
    assert f"Best: {best[p.columns[0]]}" in text and out["best"] == best[p.columns[0]] and out["records"] == len(rows)
    for r in rows:
        assert f"- {r[p.columns[0]]} ({r[p.columns[1]]}, {r[p.columns[2]]}): {p.unit(r)}" in text


def test_dry_run_reports_the_calls_and_changes_nothing(env, tasks):
    task = tasks[0]
    s = next(s for s in task.world["sessions"] if s.get("skill", {}).get("kind") == "report")
    u = at_session(env, task, s["index"])
    before = world_hash(u.world)
    out = result_of(step_call(env, "run_skill", name=s["skill"]["name"], args=s["skill"]["args"], dry_run=True))
    assert out["dry_run"] and [c["tool"] for c in out["calls"]] == ["read_csv", "write_file"]
    assert world_hash(u.world) == before


# ----- bad input: clear errors, nothing changed --------------------------------------------------
BAD_RUNS = [
    ({"name": "no-such-skill", "args": {"batch": 1}}, "no skill 'no-such-skill'"),
    ({"name": "Bad Name!", "args": {}}, "not valid"),
    ({"name": "{report}", "args": {}}, "input 'batch' is required"),
    ({"name": "{report}", "args": {"batch": "one"}}, "must be a whole number"),
    ({"name": "{report}", "args": {"batch": 1.5}}, "must be a whole number"),
    ({"name": "{report}", "args": {"batch": 0}}, "between 1 and 99"),
    ({"name": "{report}", "args": {"batch": 1, "extra": True}}, "unknown input(s) 'extra'"),
    ({"name": "{report}", "args": {"batch": 42}}, "stopped at step 2 (call read_csv)"),
    ({"name": "{report}", "args": {"batch": 1}, "script": "../x.json"}, "not a script file name"),
    ({"name": "{report}", "args": {"batch": 1}, "script": "other.json"}, "has no script 'other.json'"),
    ({"name": "{mail}", "args": {"batch": 9}}, "file_info refused"),
]


@pytest.mark.parametrize("seed", range(5))
def test_bad_runs_are_clear_tool_errors_and_leave_the_workspace_byte_identical(env, tasks, seed):
    task = tasks[seed]
    names = SKILL_NAMES[task.world["persona"]]
    u = at_session(env, task, 1)
    before = world_hash(u.world)
    for args, message in BAD_RUNS:
        args = {**args, "name": args["name"].format(**names)}
        obs = step_call(env, "run_skill", **args)
        assert "<tool_error" in obs and message in obs, (args, obs[:500])
        assert world_hash(u.world) == before, args


def _stage(u, name: str, script: dict[str, Any]) -> None:
    """A skill folder written into the world directly (as an agent could with write_file)."""
    from servicegym.world_state.workspace import put_file

    put_file(u.world, f"skills/{name}/SKILL.md", f"---\nname: {name}\ndescription: test\n---\n# {name}\n")
    put_file(u.world, f"skills/{name}/run.json", json.dumps(script))


def test_a_run_failing_after_writes_is_rolled_back(env, tasks):
    u = at_session(env, tasks[1], 1)
    _stage(u, "half-done", {"params": {}, "steps": [
        {"op": "call", "tool": "write_file", "args": {"path": "out/a.md", "content": "x"}},
        {"op": "call", "tool": "add_todo", "args": {"title": "t"}},
        {"op": "call", "tool": "send_mail", "args": {"to": ["a@b.org"], "subject": "s", "body": "b"}},
        {"op": "call", "tool": "create_event", "args": {"title": "past", "start": "2001-01-01 10:00:00", "end": "2001-01-01 11:00:00"}},
    ]})
    before = world_hash(u.world)
    obs = step_call(env, "run_skill", name="half-done")
    assert "stopped at step 4 (call create_event)" in obs and world_hash(u.world) == before
    # called directly, outside any toolkit transaction, it keeps its own
    with pytest.raises(ToolError, match="step 4"):
        sk.run_skill.fn(u.world, name="half-done")
    assert world_hash(u.world) == before
    assert u.world.table("files").get("out/a.md") is None


# ----- the interpreter's bounds and safety -------------------------------------------------------
def _run_script(u, script: dict[str, Any], args: dict[str, Any] | None = None) -> str:
    _stage(u, "probe", script)
    return step_call(u, "run_skill", name="probe", args=args or {})


BIG = "x" * 30_000
NESTED: list[Any] = []
for _ in range(40):
    NESTED = [NESTED]


@pytest.mark.parametrize("script, message", [
    ({"params": {}, "steps": [{"op": "let", "value": 1, "as": f"v{i}"} for i in range(sk.MAX_STEPS + 1)]}, "the limit is 60"),
    ({"params": {}, "steps": [{"op": "call", "tool": "list_files"}] * (sk.MAX_CALLS + 1)}, "more than 16 tool calls"),
    ({"params": {}, "steps": [{"op": "let", "value": list(range(1500)), "as": "xs"}]
      + [{"op": "map", "from": "$xs", "template": "{item}", "as": f"m{i}"} for i in range(40)]}, "units of work"),
    ({"params": {}, "steps": [{"op": "call", "tool": "run_skill", "args": {"name": "probe"}}]}, "not a workspace tool this skill may call"),
    ({"params": {}, "steps": [{"op": "call", "tool": "list_skills"}]}, "not a workspace tool this skill may call"),
    ({"params": {}, "steps": [{"op": "compute", "from": [{"a": 1}], "field": "x", "expr": "__import__('os')", "as": "y"}]}, "is not allowed"),
    ({"params": {}, "steps": [{"op": "compute", "from": [{"a": 1}], "field": "x", "expr": "a.__class__", "as": "y"}]}, "is not allowed"),
    ({"params": {}, "steps": [{"op": "compute", "from": [{"a": 1, "b": 0}], "field": "x", "expr": "a / b", "as": "y"}]}, "divides by zero"),
    ({"params": {}, "steps": [{"op": "let", "value": {"$fmt": "{args.__class__}"}, "as": "y"}]}, "does not exist"),
    ({"params": {}, "steps": [{"op": "let", "value": {"$fmt": "x" * (sk.MAX_TEMPLATE_CHARS + 1)}, "as": "y"}]}, "at most 8000 characters"),
    ({"params": {}, "steps": [{"op": "exec", "code": "print(1)"}]}, "unknown step op 'exec'"),
    ({"params": {}, "steps": [{"op": "call", "tool": "read_file", "args": {"path": "/etc/passwd"}}]}, "is absolute"),
    ({"params": {}, "steps": [{"op": "call", "tool": "read_file", "args": {"path": "../x.md"}}]}, "leaves the workspace"),
    ({"params": {}, "steps": "not a list"}, "must be an object with 'params'"),
    ({"params": {}, "steps": [{"op": "let", "value": BIG, "as": "a"},
                              {"op": "let", "value": {"$fmt": "{a}" * 8}, "as": "b"}]}, "template produced more than 200000"),
    ({"params": {}, "steps": [{"op": "let", "value": BIG, "as": "a"}, {"op": "join", "from": ["$a"] * 7, "sep": "", "as": "b"}]},
     "would be over 200000"),
    ({"params": {}, "steps": [{"op": "let", "value": BIG, "as": "a"}, {"op": "to_json", "value": ["$a"] * 4, "as": "b"}]},
     "to_json: the value is over"),
    ({"params": {}, "steps": [{"op": "let", "value": NESTED, "as": "a"}]}, "nested more than 32 levels"),
])
def test_interpreter_bounds_and_refusals(env, tasks, script, message):
    u = at_session(env, tasks[2], 1)
    _run_script(u, script)  # stage once so the hash below includes the skill files
    before = world_hash(u.world)
    obs = step_call(u, "run_skill", name="probe")
    assert "<tool_error" in obs and message in obs, obs[:600]
    assert world_hash(u.world) == before


def test_transforms_compute_what_they_say(env, tasks):
    u = at_session(env, tasks[3], 1)
    rows = [{"k": "a", "price": "12", "cost": "10", "q": "2"}, {"k": "b", "price": "9", "cost": "10", "q": "1.25"},
            {"k": "c", "price": "30", "cost": "20", "q": "0.1"}]
    obs = _run_script(u, {"params": {"n": {"type": "integer", "min": 1, "max": 3}}, "steps": [
        {"op": "compute", "from": rows, "field": "ret", "expr": "(price - cost) / cost", "as": "r"},
        {"op": "compute", "from": "$r", "field": "pct", "expr": "(price - cost) / cost",
         "format": {"scale": 100, "decimals": 2, "sign": True, "suffix": "%"}, "as": "r"},
        {"op": "sort", "from": "$r", "by": "ret", "descending": True, "as": "s"},
        {"op": "slice", "from": "$s", "start": 0, "stop": "$args.n", "as": "top"},
        {"op": "filter", "from": "$r", "where": [{"field": "k", "op": "ne", "value": "b"}], "as": "kept"},
        {"op": "sum", "from": "$r", "field": "q", "as": "total"},
        {"op": "map", "from": "$top", "template": "{k}={pct}", "as": "lines"},
        {"op": "join", "from": "$lines", "sep": ", ", "prefix": "[", "suffix": "]", "as": "text"},
        {"op": "table", "from": "$kept", "columns": ["k", "pct"], "as": "cells"},
    ], "result": {"text": "$text", "total": "$total", "cells": "$cells", "lit": "$$args", "t": {"$fmt": "{{n}}={args.n|pad3}"}}},
        {"n": 2})
    out = result_of(obs)["result"]
    assert out == {"text": "[c=+50.00%, a=+20.00%]", "total": 3.35, "cells": [["a", "+20.00%"], ["c", "+50.00%"]],
                   "lit": "$args", "t": "{n}=002"}


# ----- stale skills ------------------------------------------------------------------------------
def test_generated_episodes_hold_stale_skills_that_carry_an_older_convention(tasks):
    """Two skills of every episode are stale: their conventions.json (and scripts) hold a convention
    other than the one the episode's checks hold; the up-to-date ones hold the current one."""
    for seed, task in tasks.items():
        ep = Episode(task.world["persona"], seed, 1, "train")
        ep.build()
        c = context(ep, f"{task.world['persona']}/train/{seed}/d1")
        files = {f["path"]: f["content"] for f in task.world["tables"]["files"]}
        stale = [s["kind"] for s in task.world["skills"] if s["stale"]]
        assert len(stale) == 2 and sorted(stale) == c["stale"]
        for s in task.world["skills"]:
            if s["kind"] == "json":
                continue
            conv = json.loads(files[f"skills/{s['name']}/conventions.json"])["result"]
            for key, value in conv.items():
                assert value == (c["old"] if s["stale"] else c["conventions"])[key]
                if s["stale"]:
                    assert value != c["conventions"][key]


def test_stale_skill_output_fails_the_session_unless_checked(env, tasks):
    """Running an out-of-date skill as if it were current fails the session's checks (its
    convention is not the one in force), in every session of every episode whose skill is stale;
    the session reports the stale skill used."""
    n = 0
    for task in tasks.values():
        for s in task.world["sessions"]:
            skill = s.get("skill")
            if not skill or not skill["stale"]:
                continue
            route = [call("run_skill", name=skill["name"], args=skill["args"]), "Done, all set."] + ["Done."] * 4
            ends, info, _ = play(env, task, route, options={"session": s["index"]})
            end = ends[-1]
            assert not end["success"] and end["comp"] < 1.0, (task.task_id, s["index"], end)
            assert info["score"][f"s{s['index']:02d}/stale_skill_used"] == 1.0 and info["score"]["stale_skill_use"] == 1.0
            n += 1
    assert n >= 10


def test_stale_skill_checked_and_corrected_succeeds(env, tasks):
    """The agent that runs a stale report skill, notices the old sections and fixes them with the
    current ones (what the user says when asked) passes: checking a skill's output is the way."""
    for task in tasks.values():
        s = next((s for s in task.world["sessions"] if s.get("skill", {}).get("kind") == "report" and s["skill"]["stale"]), None)
        if s is not None:
            break
    assert s is not None
    asks = [a for a in s["manual"] if not a.startswith("{")][:-1]
    writes = [a for a in s["manual"] if a.startswith('{"name": "write_file"')]
    route = [*asks, call("run_skill", name=s["skill"]["name"], args=s["skill"]["args"]), *writes, s["manual"][-1]]
    ends, info, _ = play(env, task, route, options={"session": s["index"]})
    assert ends[-1]["success"], ends[-1]
    assert info["score"][f"s{s['index']:02d}/stale_skill_used"] == 1.0


# ----- the oracle and the route that ignores skills ---------------------------------------------
def _calls(actions: list[str]) -> int:
    return sum(a.startswith("{") for a in actions)


@pytest.mark.parametrize("seed", range(5))
def test_oracle_with_skills_scores_100_and_the_by_hand_route_succeeds_with_more_calls(env, tasks, seed):
    task = tasks[seed]
    assert any('"run_skill"' in a for a in task.golden_actions)
    _, info, _ = play(env, task, task.golden_actions)
    sc = info["score"]
    assert info["success"] and sc["proc"] == 1.0 and sc["comp"] == 1.0 and sc["sessions_passed"] == 1.0
    assert set(env.unwrapped.score_keys) <= set(sc) and all(isinstance(sc[k], float) for k in env.unwrapped.score_keys)
    assert sc["skill_use"] == 1.0 and sc["skills_applicable"] >= 4 and sc["stale_skill_use"] == 0.0 and sc["stale_skills"] >= 2
    manual = task.world["manual_actions"]
    _, info2, _ = play(env, task, manual)
    sc2 = info2["score"]
    assert info2["success"] and sc2["proc"] == 1.0 and sc2["comp"] == 1.0
    assert sc2["skill_use"] == 0.0 and sc2["skills_applicable"] == sc["skills_applicable"]  # reported, success unchanged
    assert len(manual) > len(task.golden_actions) and _calls(manual) > _calls(task.golden_actions)


def test_same_seed_same_transcript_and_same_episode(env, tasks):
    again = generate_workspace_task(4)
    assert again.world == tasks[4].world and again.golden_actions == tasks[4].golden_actions
    _, info1, obs1 = play(env, tasks[4], tasks[4].golden_actions)
    _, info2, obs2 = play(env, again, again.golden_actions)
    assert obs1 == obs2 and info1["score"] == info2["score"]
    # the stale skills are drawn from their own seed: a different seed may draw others
    assert len({tuple(s["name"] for s in generate_workspace_task(seed).world["skills"] if s["stale"]) for seed in (0, 5, 10, 15)}) > 1
