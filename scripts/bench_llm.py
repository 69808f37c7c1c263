"""Benchmark of the LLM client layer: concurrent episodes against a slow endpoint.

``LLMAgentPolicy`` plays Delivery-v0 test-suite tasks against the project's loopback server,
which replays each task's golden actions as native tool calls after ``--latency`` seconds per
call (a stand-in for a model's response time). The same episodes are run one after another and
then ``--concurrency`` at a time in threads sharing one ``LLMClient``; the table gives wall
times, calls per second, the speed-up, and how close the concurrent run comes to the ideal
(every call's latency overlapped: calls / concurrency x latency). A last row times one call
with no latency (the client's own overhead: openai + HTTP on 127.0.0.1). Prints a table; asserts
nothing but that every episode succeeded.

    python scripts/bench_llm.py                       # 64 episodes, 64 threads, 50 ms a call
    python scripts/bench_llm.py --episodes 16 --concurrency 8 --latency 0.02
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import envs  # noqa: E402, F401  registers the ids
from envs.delivery import DeliveryEnv  # noqa: E402
from envs.llm_policy import LLMAgentPolicy  # noqa: E402
from envs.parsing import parse_action  # noqa: E402
from envs.policies import run_episode  # noqa: E402
from envs.suites import SUITES  # noqa: E402
from simulators.llm import LLMClient  # noqa: E402
from simulators.loopback import LoopbackServer, text_reply, tool_call_reply  # noqa: E402


def replay_handler(tasks):
    """Reply to a request with the next golden action of the task its conversation belongs to."""
    by_opening = {}
    for t in tasks:
        by_opening.setdefault(t.user.opening, t.golden_actions)

    def handler(body):
        msgs = body["messages"]
        golden = by_opening[msgs[1]["content"]]
        k = sum(m["role"] == "assistant" for m in msgs)
        action = golden[k] if k < len(golden) else "###STOP###"
        parsed = parse_action(action)
        if parsed.tool_calls:
            return tool_call_reply([(c.name, c.arguments) for c in parsed.tool_calls], content=parsed.message or None)
        return text_reply(parsed.message)

    return handler


def run(tasks, client, concurrency: int) -> tuple[float, list[dict]]:
    def one(task):
        env = DeliveryEnv(tasks=[task])
        return run_episode(env, LLMAgentPolicy(client=client), seed=0)

    t = time.perf_counter()
    if concurrency == 1:
        recs = [one(task) for task in tasks]
    else:
        with ThreadPoolExecutor(concurrency) as pool:
            recs = list(pool.map(one, tasks))
    return time.perf_counter() - t, recs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the server waits before each reply")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-loopback")
    suite = SUITES["delivery"]()
    # distinct openings, so the handler can tell the conversations apart
    seen, tasks = set(), []
    for t in suite:
        if t.user.opening not in seen:
            seen.add(t.user.opening)
            tasks.append(t)
    tasks = (tasks * (args.episodes // max(len(tasks), 1) + 1))[: args.episodes]
    rows = []
    with LoopbackServer(replay_handler(tasks), latency_s=args.latency) as server:
        client = LLMClient(server.config(timeout_s=30, max_retries=2))
        serial, recs = run(tasks, client, 1)
        calls = len(server.requests)
        assert all(r["success"] for r in recs), [r["task_id"] for r in recs if not r["success"]]
        conc, recs = run(tasks, client, args.concurrency)
        assert all(r["success"] for r in recs)
        ideal = calls / min(args.concurrency, len(tasks)) * args.latency
        rows.append(("serial", serial, calls / serial))
        rows.append((f"{args.concurrency} threads", conc, calls / conc))
        server.latency_s = 0.0
        server.handler = lambda body: text_reply("pong")
        n = 50
        t = time.perf_counter()
        for i in range(n):
            client.chat([{"role": "user", "content": f"ping {i}"}])
        overhead = (time.perf_counter() - t) / n
    print(f"Delivery-v0, {len(tasks)} episodes, {calls} LLM calls per run ({calls / len(tasks):.1f} per episode), "
          f"{args.latency * 1000:.0f} ms per call")
    print(f"{'run':<14}{'wall s':>10}{'calls/s':>10}")
    for name, wall, rate in rows:
        print(f"{name:<14}{wall:>10.2f}{rate:>10.1f}")
    vs_ideal = f"; concurrent wall / ideal ({ideal:.2f} s) = {conc / ideal:.2f}" if ideal > 0 else ""
    print(f"speed-up {serial / conc:.1f}x{vs_ideal}")
    print(f"client overhead per call at 0 ms latency: {overhead * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
