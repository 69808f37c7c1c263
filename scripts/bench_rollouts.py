"""Rollout throughput: the collector per env for the oracle and random policies, vector-env
scaling with workers, and LLM-latency-bound collection against a loopback chat-completions
server that adds 50 ms to every call (concurrency 64 versus one episode at a time).

    python scripts/bench_rollouts.py [--quick]

Prints figures from one run; compare ratios, not absolute numbers, across machines.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import envs
from envs.rollouts import collect
from envs.vector import make_vec
from simulators.loopback import LoopbackServer, text_reply

QUESTIONS = ("Could you tell me more about what you need?", "Is there anything you would like me to avoid?",
             "Which option do you prefer?")


def agent_handler(body: dict) -> dict:
    """A stand-in model: three questions to the user, then it ends the conversation (four calls)."""
    turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    return text_reply(QUESTIONS[turns] if turns < len(QUESTIONS) else "Thank you, goodbye. ###STOP###")


def _serve(latency_s: float, port_q, stop_ev) -> None:
    with LoopbackServer(handler=agent_handler, latency_s=latency_s) as server:
        port_q.put(server.base_url)
        stop_ev.wait()


def bench_policies(out: Path, limit: int) -> None:
    print("collector, concurrency 1, thread backend (episodes/s, steps/s)")
    for env_id in envs.ENV_IDS:
        for policy in ("oracle", "random"):
            path = out / f"{env_id.split('/')[-1]}-{policy}.jsonl"
            s = collect(env_id, policy, out=path, limit=limit, progress=False, resume=False)
            recs = [json.loads(line) for line in open(path)]
            steps = sum(r["steps"] for r in recs)
            print(f"  {env_id:28s} {policy:6s} {s.episodes_per_s:8.1f} ep/s {steps / s.elapsed_s:9.0f} steps/s  success {s.success_rate:.2f}")


def bench_vector(steps: int) -> None:
    print("vector envs, Delivery-v0, user messages (steps/s over all sub-envs)")
    base = None
    for mode in ("sync", "async", "thread"):
        for n in (1, 2, 4):
            venv = make_vec("servicegym/Delivery-v0", n, mode=mode)
            venv.reset(seed=0)
            acts = tuple("Could you tell me more?" for _ in range(n))
            t = time.perf_counter()
            for _ in range(steps):
                venv.step(acts)
            rate = steps * n / (time.perf_counter() - t)
            venv.close()
            base = base or rate
            print(f"  {mode:6s} x{n}: {rate:9.0f} steps/s ({rate / base:.2f}x sync x1)")


def bench_llm(out: Path, episodes: int, latency_s: float) -> None:
    ctx = multiprocessing.get_context("spawn")
    port_q, stop_ev = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(latency_s, port_q, stop_ev), daemon=True)
    proc.start()  # the server runs in its own process, as a real endpoint would
    try:
        base_url = port_q.get(timeout=60)
        llm = {"base_url": base_url, "model": "loopback-model", "timeout_s": 30}
        task_ids = gym.make("servicegym/Delivery-v0").unwrapped.task_ids("test")[:episodes]
        rates = {}
        for conc in (1, episodes):
            s = collect("servicegym/Delivery-v0", "llm", out=out / f"llm-{conc}.jsonl", task_ids=task_ids,
                        concurrency=conc, policy_kwargs={"llm": llm}, progress=False, resume=False)
            rates[conc] = s
            print(f"  concurrency {conc:3d}: {s.elapsed_s:7.2f} s for {s.episodes} episodes ({s.episodes_per_s:.1f} ep/s, errors {s.errors})")
        print(f"  speed-up {rates[1].elapsed_s / rates[episodes].elapsed_s:.1f}x (target >= 30x)")
    finally:
        stop_ev.set()
        proc.join(5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer episodes and steps")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        bench_policies(out, 10 if args.quick else 50)
        bench_vector(50 if args.quick else 300)
        print(f"LLM-latency-bound collection: Delivery-v0, 64 episodes, 4 calls each, {50} ms per call")
        bench_llm(out, 64, 0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())
