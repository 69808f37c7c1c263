"""Rollout throughput: the collector per env for the oracle and random policies, vector-env
scaling with workers, and LLM-latency-bound collection against a loopback chat-completions
server that adds 50 ms to every call (64 episodes at once, on the thread and the async backend,
versus one at a time). Two stand-in models: ``questions`` asks the user three questions and
stops (4 calls an episode); ``golden`` replays each task's golden route as native tool calls
(the env runs every tool, and every episode succeeds).

    python scripts/bench_rollouts.py [--quick] [--only-llm] [--latency 0.05] [--episodes 64]

Prints figures from one run; compare ratios, not absolute numbers, across machines. The collector's
time per step is also given as a ratio to the one primitive (``scripts/benchlib.py``: its reference,
a bare ``get_delivery_store_info`` call).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import PRIMITIVE_NOTE, reference_primitive  # noqa: E402

import servicegym  # noqa: E402  registers the ids
from servicegym.envs.running.llm_policy import golden_replay_handler, replayable_tasks
from servicegym.envs.running.rollouts import collect
from servicegym.envs.running.vector import make_vec
from servicegym.simulators.loopback import LoopbackServer, text_reply

QUESTIONS = ("Could you tell me more about what you need?", "Is there anything you would like me to avoid?",
             "Which option do you prefer?")
DELIVERY = "servicegym/Delivery-v0"


def questions_handler(body: dict) -> dict:
    """A stand-in model: three questions to the user, then it ends the conversation (four calls)."""
    turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    return text_reply(QUESTIONS[turns] if turns < len(QUESTIONS) else "Thank you, goodbye. ###STOP###")


def distinct_tasks(n: int) -> list:
    """The first ``n`` Delivery test-suite tasks whose openings differ (the replay model tells the
    conversations apart by their opening)."""
    try:
        return replayable_tasks(gym.make(DELIVERY), n)
    except ValueError as err:
        raise SystemExit(f"--episodes {n}: {err}") from None


def _serve(latency_s: float, workload: str, episodes: int, conn) -> None:
    handler = questions_handler if workload == "questions" else golden_replay_handler(distinct_tasks(episodes))
    with LoopbackServer(handler=handler, latency_s=latency_s) as server:
        conn.send(server.base_url)
        while conn.recv() is not None:  # any message but None asks how many requests came in
            conn.send(len(server.requests))


def bench_policies(out: Path, limit: int) -> None:
    prim = reference_primitive()
    print(f"collector, concurrency 1, thread backend (episodes/s, steps/s, wall time per step x the primitive, "
          f"{prim * 1e6:.1f} us; {PRIMITIVE_NOTE})")
    for env_id in servicegym.ENV_IDS:
        for policy in ("oracle", "random"):
            path = out / f"{env_id.split('/')[-1]}-{policy}.jsonl"
            s = collect(env_id, policy, out=path, limit=limit, progress=False, resume=False)
            recs = [json.loads(line) for line in open(path)]
            steps = sum(r["steps"] for r in recs)
            per_step = s.elapsed_s / max(steps, 1)
            print(f"  {env_id:28s} {policy:6s} {s.episodes_per_s:8.1f} ep/s {steps / s.elapsed_s:9.0f} steps/s "
                  f"{per_step / prim:6.1f}x prim  success {s.success_rate:.2f}")


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


def _run_llm(out: Path, workload: str, llm: dict, ids: list[str], conc: int, backend: str, name: str):
    s = collect(DELIVERY, "llm", out=out / f"{workload}-{name}.jsonl", task_ids=ids, concurrency=conc,
                backend=backend, policy_kwargs={"llm": llm}, progress=False, resume=False)
    if s.errors or (workload == "golden" and s.success_rate < 1.0):
        raise SystemExit(f"{workload}: {s.errors} errors, success {s.success_rate:.2f} at concurrency {conc} ({backend})")
    return s


def bench_llm(out: Path, episodes: int, latency_s: float, repeats: int, workloads: list[str]) -> None:
    """Serial versus 64-concurrent collection of the ``"llm"`` policy against a loopback server in
    its own process (as a real endpoint would be), which waits ``latency_s`` before every reply."""
    print(f"LLM-latency-bound collection: {DELIVERY}, {episodes} episodes, {latency_s * 1000:.0f} ms per call, "
          f"server in its own process; concurrent runs: median of {repeats}")
    print(f"  {'workload':<10}{'calls/ep':>9}{'serial s':>10}{'thread s':>10}{'async s':>10}"
          f"{'ideal s':>9}{'thread x':>10}{'async x':>9}")
    ctx = multiprocessing.get_context("spawn")
    for workload in workloads:
        here, there = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(latency_s, workload, episodes, there), daemon=True)
        proc.start()
        try:
            base_url = here.recv()
            llm = {"base_url": base_url, "model": "loopback-model", "timeout_s": 30, "max_retries": 0}
            ids = [t.task_id for t in distinct_tasks(episodes)]

            for backend in ("thread", "async"):  # warm-up: imports, the shared client, first connections
                _run_llm(out, workload, llm, ids[:2], 2, backend, "warm")
            here.send("count")
            before = here.recv()
            serial = _run_llm(out, workload, llm, ids, 1, "thread", "serial").elapsed_s
            here.send("count")
            calls = (here.recv() - before) / len(ids)
            conc = {b: statistics.median(_run_llm(out, workload, llm, ids, len(ids), b, f"{b}{r}").elapsed_s
                                         for r in range(repeats)) for b in ("thread", "async")}
            ideal = calls * latency_s
            print(f"  {workload:<10}{calls:>9.1f}{serial:>10.2f}{conc['thread']:>10.3f}{conc['async']:>10.3f}"
                  f"{ideal:>9.2f}{serial / conc['thread']:>9.1f}x{serial / conc['async']:>8.1f}x")
        finally:
            here.send(None)
            proc.join(10)
    print("  (ideal: every call's latency overlapped, calls/ep x latency; target >= 30x for 64 concurrent episodes)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer episodes and steps; only the questions workload")
    ap.add_argument("--only-llm", action="store_true", help="only the LLM-latency section")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the loopback model waits per call")
    ap.add_argument("--episodes", type=int, default=64, help="concurrent episodes of the LLM section")
    ap.add_argument("--repeats", type=int, default=3, help="concurrent runs per backend (the median is printed)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        if not args.only_llm:
            bench_policies(out, 10 if args.quick else 50)
            bench_vector(50 if args.quick else 300)
        workloads = ["questions"] if args.quick else ["questions", "golden"]
        bench_llm(out, args.episodes, args.latency, args.repeats, workloads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
