"""Rollout throughput: the collector per env for the oracle and random policies, vector-env
scaling with workers, and LLM-latency-bound collection against a loopback chat-completions
server that adds 50 ms to every call (64 episodes at once, on the thread and the async backend,
versus one at a time). Two stand-in models: ``questions`` asks the user three questions and
stops (4 calls an episode); ``golden`` replays each task's golden route as native tool calls
(the env runs every tool, and every episode succeeds).

    python scripts/bench_rollouts.py [--quick] [--only-llm] [--latency 0.05] [--episodes 64]
    python scripts/bench_rollouts.py --scaling [--quick] [--scaling-episodes 600] [--ray-actors 1,2,4]

``--scaling``: Delivery oracle episodes per second in process, on 1, 2 and as many process workers
as the machine has cores, and on 1, 2 and 4 Ray actors (on 127.0.0.1), each set of workers started
once and reused (their start time printed apart); the per-core ratio to in-process and, for each
row, the bottleneck its measures point to (the cores, the writer, the dispatch or the episodes).

Prints figures from one run; compare ratios, not absolute numbers, across machines. The collector's
time per step is also given as a ratio to the one primitive (``scripts/benchlib.py``: its reference,
a bare ``get_delivery_store_info`` call).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import PRIMITIVE_NOTE, primitive_us, print_table, reference_primitive  # noqa: E402

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
    with LoopbackServer(handler=handler, latency_s=latency_s, record=False) as server:
        conn.send(server.base_url)
        while conn.recv() is not None:  # any message but None asks: requests so far, the server's CPU seconds
            conn.send((server.completions, time.process_time()))


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


def _cpu_run(out: Path, workload: str, llm: dict, ids: list[str], conc: int, backend: str, name: str, conn):
    """``_run_llm`` with its CPU seconds: (summary, calls, this process's CPU, the server's CPU)."""
    conn.send("count")
    calls0, server0 = conn.recv()
    cpu0 = time.process_time()
    s = _run_llm(out, workload, llm, ids, conc, backend, name)
    cpu = time.process_time() - cpu0
    conn.send("count")
    calls1, server1 = conn.recv()
    return s, calls1 - calls0, cpu, server1 - server0


def _replay_client(llm: dict, records: Path) -> tuple[float, int]:
    """The LLM client alone: every request of a run's episodes (each conversation up to each of its
    assistant turns, with its tools) sent again through ``LLMClient.achat``, all episodes at once on
    one event loop, no env; returns (this process's CPU seconds, calls)."""
    import asyncio

    from servicegym.simulators.llm import LLMClient, aclose_clients

    schemas: dict[str, list] = {}  # one list per distinct tool set, as an env hands every episode the same
    convs = []
    for line in open(records, encoding="utf-8"):
        rec = json.loads(line)
        tools = schemas.setdefault(json.dumps(rec["tools"]), rec["tools"]) or None
        msgs = rec["messages"]
        convs.append([(msgs[:i], tools) for i, m in enumerate(msgs) if m["role"] == "assistant"])
    client = LLMClient.shared(llm)

    async def episode(requests: list) -> None:
        for messages, tools in requests:
            await client.achat(messages, tools=tools)

    async def main() -> None:
        try:
            await asyncio.gather(*(episode(c) for c in convs))
        finally:
            await aclose_clients()

    cpu0 = time.process_time()
    asyncio.run(main())
    return time.process_time() - cpu0, sum(len(c) for c in convs)


def bench_llm(out: Path, episodes: int, latency_s: float, repeats: int, workloads: list[str]) -> None:
    """Serial versus 64-concurrent collection of the ``"llm"`` policy against a loopback server in
    its own process (as a real endpoint would be), which waits ``latency_s`` before every reply."""
    print(f"LLM-latency-bound collection: {DELIVERY}, {episodes} episodes, {latency_s * 1000:.0f} ms per call, "
          f"server in its own process; concurrent runs: median of {repeats}, thread and async interleaved")
    print("  CPU ms per call: the collector process (thread, async: the envs included), the LLM client alone "
          "(the async run's requests replayed, all at once, no env), the loopback server (async runs)")
    print(f"  {'workload':<10}{'calls/ep':>9}{'serial s':>10}{'thread s':>10}{'async s':>10}"
          f"{'ideal s':>9}{'thread x':>10}{'async x':>9}   {'CPU ms/call: thread':>19}{'async':>7}{'client':>8}"
          f"{'server':>8}")
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
            s, n, _, _ = _cpu_run(out, workload, llm, ids, 1, "thread", "serial", here)
            serial, calls = s.elapsed_s, n / len(ids)
            runs: dict[str, list] = {"thread": [], "async": []}
            for r in range(repeats):  # interleaved, so a change in the machine's load falls on both
                for b in runs:
                    runs[b].append(_cpu_run(out, workload, llm, ids, len(ids), b, f"{b}{r}", here))
            conc = {b: statistics.median(x[0].elapsed_s for x in v) for b, v in runs.items()}
            cpu = {b: sum(x[2] for x in v) / sum(x[1] for x in v) * 1e3 for b, v in runs.items()}
            server = sum(x[3] for x in runs["async"]) / sum(x[1] for x in runs["async"]) * 1e3
            client_s, client_calls = _replay_client(llm, out / f"{workload}-async0.jsonl")
            ideal = calls * latency_s
            print(f"  {workload:<10}{calls:>9.1f}{serial:>10.2f}{conc['thread']:>10.3f}{conc['async']:>10.3f}"
                  f"{ideal:>9.2f}{serial / conc['thread']:>9.1f}x{serial / conc['async']:>8.1f}x"
                  f"   {cpu['thread']:>19.2f}{cpu['async']:>7.2f}{client_s / client_calls * 1e3:>8.2f}{server:>8.2f}")
        finally:
            here.send(None)
            proc.join(10)
    print("  (ideal: every call's latency overlapped, calls/ep x latency; target >= 40x for 64 concurrent episodes, "
          "and at most 0.4 ms of client CPU per call)")


# ----- scaling: in-process, process workers, Ray actors (issue 29) ------------------------------

class _Runner:
    """One configuration of the scaling table: where the episodes run, and its reusable workers."""

    def __init__(self, label: str, n: int, workers=None, start_s: float = 0.0, pids: list[int] | None = None) -> None:
        self.label, self.n, self.workers, self.start_s = label, n, workers, start_s
        self.pids = pids or []
        self.samples: list[dict] = []

    def sample(self, out: Path, limit: int, trials: int, seed: int) -> None:
        path = out / f"scaling-{self.label.replace(' ', '_')}.jsonl"
        batches = getattr(self.workers, "batches_sent", 0)
        cpu0, wcpu0 = _cpu_s(), _pids_cpu_s(self.pids)
        s = collect(DELIVERY, "oracle", out=path, limit=limit, trials=trials, seed=seed, workers=self.workers,
                    progress=False, resume=False)
        parent_cpu, wcpu1 = _cpu_s() - cpu0, _pids_cpu_s(self.pids)
        busy = sum(json.loads(line)["elapsed_s"] for line in open(path, encoding="utf-8"))
        if s.success_rate < 1.0:
            raise SystemExit(f"scaling {self.label}: oracle success {s.success_rate:.2f}")
        self.samples.append({"rate": s.episodes_per_s, "wall": s.elapsed_s, "episodes": s.collected,
                             "busy": busy / (s.elapsed_s * self.n), "parent": parent_cpu / s.elapsed_s,
                             "on_core": (parent_cpu if not self.pids else wcpu1 - wcpu0) / (s.elapsed_s * self.n),
                             "batches": getattr(self.workers, "batches_sent", 0) - batches})

    def median(self, key: str) -> float:
        return statistics.median(x[key] for x in self.samples)


def _cpu_s() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _pids_cpu_s(pids: list[int]) -> float:
    """CPU seconds the processes ``pids`` have used (Linux ``/proc``; 0 elsewhere)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _bottleneck(r: _Runner, cores: int, load: float) -> str:
    """The measured limit of one configuration: the cores, the writer, the dispatch or the episodes."""
    busy, parent, on_core = r.median("busy"), r.median("parent"), r.median("on_core")
    if r.workers is None:
        return (f"one core: the episodes ({busy:.0%} of the time: env + policy) and the writer's record encoding "
                f"and writes ({1 - busy:.0%}) in one thread, on a core {on_core:.0%} of the time")
    if on_core < busy - 0.15 or r.n + parent > cores:
        return (f"cores: workers on a core {on_core:.0%} of the time (in episodes {busy:.0%}); {r.n} workers + the "
                f"writer ({parent:.0%} of a core) share {cores} cores with other work (load {load:.1f})")
    if parent > 0.8:
        return f"the writer: the collector's one thread is busy {parent:.0%} of the time"
    if busy < 0.75:
        return f"dispatch: workers run episodes {busy:.0%} of the time, the rest waits on batches and results"
    return (f"the episodes: workers run env + policy {busy:.0%} of the time (the rest: record encoding, "
            f"result transfer)")


def bench_scaling(out: Path, episodes: int, repeats: int, ray_actors: tuple[int, ...]) -> None:
    """Oracle episodes of Delivery-v0 in process, on 1, 2 and (the machine's core count) process
    workers and on 1, 2, 4 Ray actors: each set of workers started once (its start time printed
    apart), then ``repeats`` collections of ``episodes`` episodes per configuration, interleaved
    (one sample of each in turn, so load changes hit every configuration alike); medians."""
    from servicegym.envs.running.rollouts import ProcessWorkers

    cores = os.cpu_count() or 1
    load = os.getloadavg()[0]
    prim = primitive_us()
    limit, trials = min(episodes, 1000), -(-episodes // 1000)
    print(f"scaling: {DELIVERY} oracle, {limit * trials} episodes a sample, median of {repeats} interleaved samples; "
          f"{cores} cores, load {load:.2f} at the start; primitive {prim:.2f} us (scripts/benchlib.py primitive_us)")
    runners = [_Runner("in-process", 1)]
    sizes = sorted({1, 2, cores})
    try:
        for n in sizes:
            w = ProcessWorkers(DELIVERY, "oracle", n)
            t = time.perf_counter()
            pids = w.start()
            runners.append(_Runner(f"process x{n}", n, w, time.perf_counter() - t, pids))
        ray_note = ""
        try:
            import ray
        except ImportError:
            ray, ray_note = None, "Ray not installed (pip install 'servicegym[ray]'): its rows are left out"
        if ray is not None and ray_actors:
            from servicegym.envs.running.ray_backend import RayWorkers

            t = time.perf_counter()
            ray.init(_node_ip_address="127.0.0.1", num_cpus=sum(ray_actors), include_dashboard=False,
                     logging_level="ERROR")  # local mode off: actors are processes
            ray_note = f"Ray started on 127.0.0.1 in {time.perf_counter() - t:.1f} s (not in any row)"
            for n in ray_actors:
                w = RayWorkers(DELIVERY, "oracle", n)
                t = time.perf_counter()
                pids = w.start()
                runners.append(_Runner(f"ray x{n}", n, w, time.perf_counter() - t, pids))
        for r in runners:  # warm-up: imports, first resets, the batch sizes' first measure
            r.sample(out, min(limit, 40), 1, seed=99)
            r.samples.clear()
        for k in range(repeats):
            for r in runners:
                r.sample(out, limit, trials, seed=k)
        base = runners[0].median("rate")
        rows = []
        for r in runners:
            rate = r.median("rate")
            per_core = rate / r.n / base
            batch = r.median("episodes") / r.median("batches") if r.workers is not None else 1.0
            rows.append([r.label, f"{rate:.0f}", f"{per_core:.2f}", f"{rate / base:.2f}",
                         f"{1e6 / rate * r.n / prim:.0f}", f"{batch:.1f}", f"{r.median('busy'):.0%}",
                         f"{r.median('on_core'):.0%}", f"{r.median('parent'):.0%}",
                         f"{r.start_s:.2f}" if r.workers is not None else "-",
                         _bottleneck(r, cores, load)])
        print_table(["where", "ep/s", "per core", "x in-proc", "core-us/ep x prim", "ep/batch", "busy", "on core", "writer",
                     "start s", "bottleneck"], rows)
        print(f"  per core: (ep/s / workers) / in-process ep/s (goal for one process worker: >= {1 / 1.5:.2f}, i.e. "
              f"within 1.5x); busy: share of the workers' wall time in episodes; on core: their CPU time / wall "
              f"time; writer: the collector process's CPU share; start: workers started and warm, once, not in ep/s; load {os.getloadavg()[0]:.2f} at the end")
        if ray_note:
            print(f"  {ray_note}")
    finally:
        for r in runners:
            if r.workers is not None:
                r.workers.close()
        if "ray" in sys.modules and sys.modules["ray"].is_initialized():
            sys.modules["ray"].shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer episodes and steps; only the questions workload")
    ap.add_argument("--only-llm", action="store_true", help="only the LLM-latency section")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the loopback model waits per call")
    ap.add_argument("--episodes", type=int, default=64, help="concurrent episodes of the LLM section")
    ap.add_argument("--repeats", type=int, default=3, help="concurrent runs per backend (the median is printed)")
    ap.add_argument("--scaling", action="store_true", help="only the scaling section: in process, process workers, "
                    "Ray actors")
    ap.add_argument("--scaling-episodes", type=int, default=600, help="episodes per scaling sample")
    ap.add_argument("--ray-actors", default="1,2,4", help="Ray actor counts of the scaling section ('' for none)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        if args.scaling:
            actors = tuple(int(n) for n in args.ray_actors.split(",") if n.strip())
            bench_scaling(out, 200 if args.quick else args.scaling_episodes, args.repeats, actors)
            return 0
        if not args.only_llm:
            bench_policies(out, 10 if args.quick else 50)
            bench_vector(50 if args.quick else 300)
        workloads = ["questions"] if args.quick else ["questions", "golden"]
        bench_llm(out, args.episodes, args.latency, args.repeats, workloads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
