"""``servicegym loopback-model``: a stand-in chat model on 127.0.0.1 that an LLM evaluation runs
against with no GPU and no network; it replays known tasks' golden routes and answers anything
else with a text reply that says so (never an HTTP error)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import openai
import pytest

from servicegym.envs.cli.main import main
from servicegym.envs.running.llm_policy import UNKNOWN_TASK_REPLY, golden_replay_handler


@pytest.fixture
def served():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # SIGINT back to its default in the child: a parent run as a background job ignores it, the child would inherit
    # that, and the Ctrl-C the test sends would never reach the server
    proc = subprocess.Popen([sys.executable, "-m", "servicegym.envs.cli.main", "loopback-model", "--port", "0",
                             "--split", "test"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        m = re.search(r"at (http://127\.0\.0\.1:\d+/v1) replaying 100 tasks of servicegym/Delivery-v0 split test", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield proc, m.group(1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_evaluate_with_the_llm_policy_against_it_succeeds_on_every_task(served, tmp_path, capsys):
    proc, base_url = served
    out = tmp_path / "eval"
    code = main(["evaluate", "--policy", "llm", "--base-url", base_url, "--model", "loopback-model",
                 "--limit", "6", "--concurrency", "3", "--quiet", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    records = [json.loads(x) for x in (out / "rollouts.jsonl").read_text().splitlines()]
    assert len(records) == 6 and all(r["success"] and not r.get("error") for r in records)
    assert "policy=llm split=test tasks=6" in printed
    # a conversation it does not know: a 200 with a text reply that says so and ends the episode
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=10)
    reply = client.chat.completions.create(model="loopback-model",
                                           messages=[{"role": "user", "content": "hello, who are you?"}])
    text = reply.choices[0].message.content
    assert "do not know this conversation's task" in text and "100 tasks of servicegym/Delivery-v0" in text
    assert text.endswith("###STOP###") and not reply.choices[0].message.tool_calls
    # Ctrl-C stops it cleanly
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 0
    assert "stopped" in proc.stdout.read()


def test_the_handler_drops_tasks_it_cannot_tell_apart_instead_of_guessing():
    class T:
        def __init__(self, tid, opening, golden):
            self.task_id, self.golden_actions = tid, golden
            self.user = type("U", (), {"opening": opening})()

    tasks = [T("a", "same", ["x"]), T("b", "same", ["y"]), T("c", "other", ['<tool_call>{"name": "f", "arguments": {}}</tool_call>'])]
    with pytest.raises(ValueError, match="same message"):
        golden_replay_handler(tasks)
    handler = golden_replay_handler(tasks, strict=False, known="3 test tasks")
    assert handler({"messages": [{"role": "user", "content": "same"}]})["choices"][0]["message"]["content"] == \
        UNKNOWN_TASK_REPLY.format(known="3 test tasks")
    for body in ({}, {"messages": "nope"}, {"messages": [{"role": "system", "content": "s"}]}):
        assert "do not know" in handler(body)["choices"][0]["message"]["content"]
    call = handler({"messages": [{"role": "user", "content": "other"}]})["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "f"


def test_a_port_in_use_or_out_of_range_is_a_one_line_error(capsys):
    import socket

    assert main(["loopback-model", "--port", "70000"]) == 2
    assert "--port must be 0-65535" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        started = time.perf_counter()
        assert main(["loopback-model", "--port", str(port)]) == 2
        assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err
        assert time.perf_counter() - started < 30


def test_serve_does_not_default_to_the_model_endpoint_port():
    from servicegym.envs.cli.main import SERVE_PORT, build_parser

    parser = build_parser()
    model_port = parser.parse_args(["loopback-model"]).port
    serve_port = parser.parse_args(["serve", "--env", "servicegym/Delivery-v0"]).port
    assert model_port == 8000 and serve_port == SERVE_PORT != 8000
    server = pytest.importorskip("servicegym.envs.integrations.openenv.server", reason="needs servicegym[server]")
    assert server.DEFAULT_PORT == SERVE_PORT
