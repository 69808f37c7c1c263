"""The NeMo-Gym adapter (envs/integrations/nemo_gym.py) on its servicegym side, which needs no
nemo_gym: one env per session, every tool of every env routed to env.step (astep on the server's
path) with the observation's text returned, verify paying 1.0 after the golden route and 0.0 after a
broken one (with every score component), NeMo-Gym dataset rows for a split, and the preflight
sentence of ``serve`` (exit 2, one line) where nemo-gym cannot run. Where nemo-gym is installed
(Python 3.12+), the resources server itself plays a golden route over HTTP (FastAPI's TestClient)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import gymnasium as gym
import pytest

import servicegym
import servicegym.envs.integrations.nemo_gym as ng
from servicegym.envs.environments.base import STOP, USER_TOOL
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.integrations.dataset import task_rows
from servicegym.envs.integrations.preflight import nemo_gym_problem
from servicegym.envs.integrations.trl import ENDED, TRL_TOOL_LINE, result_text

ENV_IDS = sorted(servicegym.ENV_IDS)
DELIVERY = "servicegym/Delivery-v0"


def golden_calls(env_id: str, row: dict) -> list[list[tuple[str, dict]]]:
    """The row's golden route as NeMo-Gym's agent sends it: each turn's tool calls, a message to the
    user as a ``respond`` call."""
    env = gym.make(env_id, user_tool=True)
    env.reset(seed=row["seed"], options={"task_id": row["task_id"]})
    turns = []
    for action in env.unwrapped.task.golden_actions:
        parsed = parse_action(action)
        calls = [(c.name, c.arguments) for c in parsed.tool_calls]
        turns.append(calls or [(USER_TOOL, {"message": parsed.message})])
    env.close()
    return turns


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    return {env_id: ng.nemo_gym_rows(env_id, "test", 1)[0] for env_id in ENV_IDS}


# ----- sessions ---------------------------------------------------------------------------------

def test_sessions_are_separate(rows):
    row = rows[DELIVERY]
    reg = ng.SessionRegistry(DELIVERY)
    a = reg.seed("a", row)
    b = reg.seed("b", row)
    assert a == b == {"env_id": DELIVERY, "task_id": row["task_id"], "seed": row["seed"], "domain": row["domain"]}
    sa, sb = reg.get("a"), reg.get("b")
    assert sa is not sb and sa.env is not sb.env and sa.env.unwrapped is not sb.env.unwrapped
    before = list(sb.env.unwrapped.messages)
    (name, args), *_ = golden_calls(DELIVERY, row)[0]
    reg.call("a", name, args)
    assert (sa.steps, sb.steps) == (1, 0) and sb.env.unwrapped.messages == before
    assert len(sa.env.unwrapped.messages) > len(before)
    # a session seeded again starts over with a new env; the old one is closed
    old = sa.env
    reg.seed("a", row)
    assert reg.get("a").env is not old and reg.get("a").steps == 0 and len(reg) == 2
    # verify scores one session and forgets it; the other is untouched
    assert reg.verify("a")["reward"] == 0.0 and "a" not in reg and "b" in reg
    assert reg.verify("a") == ng.NO_SESSION and reg.call("a", name, args) == ng.NOT_SEEDED
    reg.close()
    assert len(reg) == 0


def test_least_recently_used_session_goes_over_max_sessions(rows):
    reg = ng.SessionRegistry(DELIVERY, max_sessions=2)
    for sid in ("a", "b"):
        reg.seed(sid, rows[DELIVERY])
    reg.call("a", "get_user_historical_behaviors", {})  # a is now the most recent
    reg.seed("c", rows[DELIVERY])
    assert list(reg.sessions) == ["a", "c"]
    with pytest.raises(ValueError, match="max_sessions"):
        ng.SessionRegistry(DELIVERY, max_sessions=0)


def test_row_picks_env_task_and_seed(rows):
    reg = ng.SessionRegistry(DELIVERY)  # the default env; the row names its own
    travel = rows["servicegym/Travel-v0"]
    assert reg.seed("t", travel)["env_id"] == "servicegym/Travel-v0"
    nested = {"responses_create_params": travel["responses_create_params"],
              "verifier_metadata": {"env_id": travel["env_id"], "task_id": travel["task_id"], "seed": travel["seed"]}}
    assert reg.seed("n", nested) == reg.seed("t", travel)
    with pytest.raises(ValueError, match="seed"):
        reg.seed("x", {**travel, "seed": -1})
    assert "x" not in reg  # a failed seed leaves no session
    with pytest.raises(KeyError):
        reg.seed("y", {**travel, "task_id": "travel/test/no-such-task"})
    assert "y" not in reg


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_tool_routes_to_env_step_and_returns_the_observation(env_id, rows):
    reg = ng.SessionRegistry(env_id)
    reg.seed("s", rows[env_id])
    session = reg.get("s")
    names = [s["function"]["name"] for s in session.env.unwrapped.tool_schemas()]
    assert USER_TOOL in names and [t["name"] for t in rows[env_id]["responses_create_params"]["tools"]] == names
    for name in names:
        if session.done:
            reg.seed("s", rows[env_id])
            session = reg.get("s")
        seen = []
        step = session.env.step

        def spy(action, step=step, seen=seen):
            result = step(action)
            seen.append((action, result[0]))
            return result

        session.env.step = spy
        text = reg.call("s", name, {})
        session.env.step = step
        assert len(seen) == 1, name
        action, obs = seen[0]
        assert json.loads(action) == {"name": name, "arguments": {}}
        assert text.startswith(result_text(obs)) and text, (name, obs)
    # the server's path: acall awaits the env's astep with the same action
    awaited = []
    astep = session.env.unwrapped.astep

    async def aspy(action):
        result = await astep(action)
        awaited.append((action, result[0]))
        return result

    if session.done:
        reg.seed("s", rows[env_id])
        session = reg.get("s")
    session.env.unwrapped.astep = aspy
    text = asyncio.run(reg.acall("s", names[0], {}))
    assert json.loads(awaited[0][0]) == {"name": names[0], "arguments": {}} and text.startswith(result_text(awaited[0][1]))
    reg.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_verify_pays_one_after_the_golden_route_and_zero_after_a_broken_one(env_id, rows):
    row = rows[env_id]
    turns = golden_calls(env_id, row)
    reg = ng.SessionRegistry(env_id)
    for label, route, want in (("golden", turns, 1.0), ("broken", turns[:2], 0.0)):
        reg.seed(label, row)
        texts = [reg.call(label, name, args) for calls in route for name, args in calls]
        assert all(isinstance(t, str) and t for t in texts)
        session = reg.get(label)
        if want == 1.0:  # the golden route ends the conversation itself
            assert session.done and texts[-1].endswith(f"[The conversation has ended ({session.reason}).]")
            assert reg.call(label, USER_TOOL, {"message": "hello"}) == ENDED
        else:
            assert not session.done
        result = reg.verify(label)  # an open episode is ended with ###STOP### first
        u = gym.make(env_id).unwrapped
        assert result["reward"] == want and result["success"] is (want == 1.0), (label, result)
        assert result["termination_reason"] in ("user_stop", "agent_stop")
        assert set(u.score_keys) <= set(result["score"]) and result["steps"] == len(texts)
        for key in u.score_keys:  # reward components at the top level (NeMo-Gym averages them), counts not
            assert (key in result) is (key not in u.count_keys)
            if key in result:
                assert isinstance(result[key], float) and result[key] == float(result["score"][key])
        json.dumps(result)
        assert label not in reg


def test_the_async_path_scores_the_golden_route(rows):
    row = rows[DELIVERY]
    reg = ng.SessionRegistry(DELIVERY)

    async def play(route):
        await reg.aseed("s", row)
        for calls in route:
            for name, args in calls:
                await reg.acall("s", name, args)
        return await reg.averify("s")

    turns = golden_calls(DELIVERY, row)
    assert asyncio.run(play(turns))["reward"] == 1.0
    result = asyncio.run(play(turns[:1]))
    assert result["reward"] == 0.0 and result["termination_reason"] == "agent_stop"


def test_finish_ends_a_workspace_episode_of_many_sessions(rows):
    reg = ng.SessionRegistry("servicegym/Workspace-v0")
    reg.seed("w", rows["servicegym/Workspace-v0"])
    result = reg.verify("w")  # 20 sessions, each ended by one STOP
    assert result["reward"] == 0.0 and result["score"]["sessions"] == 20 and "sessions" not in result
    assert STOP == "###STOP###"


# ----- rows ---------------------------------------------------------------------------------------

def test_rows_for_a_split_are_nemo_gyms_jsonl_format():
    base = task_rows(DELIVERY, "test", 3, 0, {"user_tool": True})
    out = ng.nemo_gym_rows(DELIVERY, "test", 3)
    assert [r["task_id"] for r in out] == [r["task_id"] for r in base]
    for row, src in zip(out, base):
        assert set(row) == set(ng.ROW_FIELDS)
        assert set(row["responses_create_params"]) == {"input", "tools"}  # NeMo-Gym forbids other keys there
        system, user = row["responses_create_params"]["input"]
        assert system["role"] == "system" and user == {"role": "user", "content": src["prompt"][-1]["content"]}
        assert system["content"].endswith(TRL_TOOL_LINE.format(who="the user")) and "<tool_call>" not in system["content"]
        assert row["agent_ref"] == {"type": "responses_api_agents", "name": ng.DEFAULT_AGENT}
        assert (row["env_id"], row["seed"], row["split"], row["domain"]) == (DELIVERY, src["seed"], "test", src["domain"])
        assert row["responses_create_params"]["tools"] == ng.responses_tools(json.loads(src["tools"]))
    assert "agent_ref" not in ng.nemo_gym_rows(DELIVERY, "test", 1, agent_name=None)[0]


def test_responses_tools_are_flat_function_tools():
    schemas = gym.make(DELIVERY, user_tool=True).unwrapped.tool_schemas()
    tools = ng.responses_tools(schemas)
    assert len(tools) == len(schemas)
    for tool, schema in zip(tools, schemas):
        fn = schema["function"]
        assert tool == {"type": "function", "name": fn["name"], "description": fn.get("description") or "",
                        "parameters": fn["parameters"], "strict": False}


def test_rows_command_writes_jsonl(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert ng.main(["rows", "--env", "servicegym/Payments-v0", "--split", "test", "--n", "2", "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines == ng.nemo_gym_rows("servicegym/Payments-v0", "test", 2)
    assert "2 rows (servicegym/Payments-v0)" in capsys.readouterr().out
    assert ng.main(["rows", "--env", DELIVERY, "--split", "test", "--n", "1", "--agent", "", "--out", str(out)]) == 0
    assert "agent_ref" not in json.loads(out.read_text(encoding="utf-8"))
    with pytest.raises(SystemExit) as exc:
        ng.main(["rows", "--env", DELIVERY, "--split", "train", "--out", str(out)])  # train needs --n
    assert exc.value.code == 2


# ----- the NeMo-Gym side ----------------------------------------------------------------------------

@pytest.mark.skipif(nemo_gym_problem() is None, reason="nemo-gym can run here; the preflight has nothing to say")
def test_serve_says_what_to_install_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "servicegym.envs.integrations.nemo_gym", "serve"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "Python 3.12" in lines[0] and "pip install 'nemo-gym>=0.4'" in lines[0]
    assert lines[0].startswith("servicegym: ") and lines[0] == f"servicegym: {nemo_gym_problem()}"
    with pytest.raises(ImportError, match="Python 3.12"):
        _ = ng.ServiceGymResourcesServer
    with pytest.raises(AttributeError):
        _ = ng.NoSuchName


def test_resources_server_plays_a_golden_route_over_http(rows):
    """NeMo-Gym's own classes (nemo-gym installed, Python 3.12+): the simple agent's calls, in order,
    against the app, with the session cookie."""
    if nemo_gym_problem() is not None:
        pytest.skip("needs nemo-gym on Python 3.12+ (pip install 'nemo-gym>=0.4')")
    from unittest.mock import MagicMock

    from fastapi.testclient import TestClient
    from nemo_gym.base_resources_server import SimpleResourcesServer
    from nemo_gym.server_utils import ServerClient

    row = rows[DELIVERY]
    config = ng.ServiceGymResourcesServerConfig(host="127.0.0.1", port=0, entrypoint="", name="servicegym")
    server = ng.ServiceGymResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
    assert isinstance(server, SimpleResourcesServer)
    client = TestClient(server.setup_webserver())  # keeps the session cookie, as the agent does
    r = client.post("/seed_session", json=row)
    assert r.status_code == 200 and r.json()["task_id"] == row["task_id"]
    for calls in golden_calls(DELIVERY, row):
        for name, args in calls:
            r = client.post(f"/{name}", json=args)
            assert r.status_code == 200 and r.text
    response = {"id": "r", "created_at": 0, "model": "m", "object": "response", "parallel_tool_calls": True,
                "tool_choice": "auto", "tools": [], "output": [
                    {"type": "message", "role": "assistant", "id": "m", "status": "completed",
                     "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]}
    r = client.post("/verify", json={**row, "response": response})
    assert r.status_code == 200, r.text
    assert r.json()["reward"] == 1.0 and r.json()["rubric_fraction"] == 1.0 and len(server.registry) == 0


def test_the_example_server_directory_matches_the_adapter():
    """examples/nemo_gym: the rows are what nemo_gym_rows writes today, the agent instance is the
    rows' agent_ref, and the server's config keys are the adapter's."""
    from pathlib import Path

    yaml = pytest.importorskip("yaml", reason="reading the example config needs PyYAML")
    root = Path(__file__).resolve().parents[2] / "examples" / "nemo_gym" / "resources_servers" / "servicegym"
    lines = [json.loads(x) for x in (root / "data" / "example.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == ng.nemo_gym_rows(DELIVERY, "test", 1) + ng.nemo_gym_rows("servicegym/Payments-v0", "test", 1)
    config = yaml.safe_load((root / "configs" / "servicegym.yaml").read_text(encoding="utf-8"))
    server = config["servicegym_resources_server"]["resources_servers"]["servicegym"]
    assert server["entrypoint"] == "app.py" and (root / "app.py").exists() and server["env_id"] in ENV_IDS
    assert {"env_id", "env_kwargs", "max_sessions"} <= set(server)
    agent = config[ng.DEFAULT_AGENT]["responses_api_agents"]["simple_agent"]
    assert agent["resources_server"]["name"] == "servicegym_resources_server"
    assert agent["datasets"][0]["jsonl_fpath"] == "resources_servers/servicegym/data/example.jsonl"
    assert "${SERVICEGYM_SRC}" in (root / "requirements.txt").read_text(encoding="utf-8")
