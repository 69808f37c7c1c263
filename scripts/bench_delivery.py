"""Benchmark of the delivery env: what one ``step``, ``reset`` and score cost, and memory per env.

Every figure is measured through the public env API and printed as a ratio to the one primitive
(``scripts/benchlib.py``: a bare implementation of a call, json.loads + the tool's pydantic argument
validation + its pre-conditions + the tool function + the result's JSON): a step to the primitive
of the same call on the same state, measured in turn with it; other rows to the primitive of the
read (``get_delivery_store_info``). Ratios travel across machines. Prints a table; asserts nothing.

    python scripts/bench_delivery.py            # about a minute
    python scripts/bench_delivery.py --quick    # about ten seconds
    python scripts/bench_delivery.py --vitabench path/to/tasks_en.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402
from benchlib import PRIMITIVE_NOTE, memory_per_env, paired, primitive_of, time_once, timed  # noqa: E402

import servicegym  # noqa: E402, F401  registers the ids
from servicegym.envs.environments.parsing import parse_action  # noqa: E402
from servicegym.envs.tasks import Task  # noqa: E402

ENV_ID = "servicegym/Delivery-v0"
DEFAULT_VITABENCH = ROOT.parent / "shared" / "data" / "vitabench" / "delivery" / "tasks_en.json"
BIG = 10**9  # step and error limits out of the way while timing single steps


@dataclass
class Row:
    name: str
    samples: list[float]  # seconds
    target: str = ""
    ratio_target: float | None = None  # x primitive
    abs_target: float | None = None  # seconds
    note: str = ""
    unit: float | None = None  # the primitive this row is a ratio to (seconds); None: the read's

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p90(self) -> float:
        s = sorted(self.samples)
        return s[min(len(s) - 1, int(0.9 * len(s)))]


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    if s < 1:
        return f"{s * 1e3:8.2f} ms"
    return f"{s:8.2f} s "


# ----- tasks ----------------------------------------------------------------------------------
def generated_env(**kwargs: Any) -> gym.Env:
    return gym.make(ENV_ID, max_steps=BIG, max_errors=BIG, **kwargs)


def handmade_tasks() -> list[Task]:
    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import make_delivery_task  # the test suite's hand-written task

    return [make_delivery_task()]


def make_env(tasks: list[Task] | str | None) -> gym.Env:
    if tasks is None:
        return generated_env()
    return gym.make(ENV_ID, tasks=tasks, max_steps=BIG, max_errors=BIG)


def golden_calls(task: Task) -> dict[str, dict[str, Any]]:
    """The first call of each tool in the task's golden route, by tool name."""
    calls: dict[str, dict[str, Any]] = {}
    for action in task.golden_actions:
        for c in parse_action(action).tool_calls:
            if isinstance(c.arguments, dict):
                calls.setdefault(c.name, c.arguments)
    return calls


def call_text(name: str, arguments: dict[str, Any]) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"


def pick_task(env: gym.Env, seeds: range) -> str:
    """A task id whose golden route creates and pays an order (for the write measurement)."""
    for seed in seeds:
        env.reset(seed=seed)
        calls = golden_calls(env.unwrapped.task)
        if "create_delivery_order" in calls and "pay_delivery_order" in calls:
            return env.unwrapped.task.task_id
    raise SystemExit("no task with a create + pay golden route found")


# ----- measurements ---------------------------------------------------------------------------
def read_vs_primitive(env: gym.Env, task_id: str, action: str, reps: int, per_episode: int = 200) -> tuple[list[float], list[float]]:
    """``env.step(action)`` repeated in an episode, and the primitive of the same call on the same
    state, timed in turn (a fresh reset every ``per_episode`` steps)."""
    steps: list[float] = []
    prims: list[float] = []
    while len(steps) < reps:
        env.reset(seed=0, options={"task_id": task_id})
        env.step(action)  # warm the episode's caches once
        prim = primitive_of(env, action)
        prim()
        p, s = paired(prim, lambda: env.step(action), min(per_episode, reps - len(steps)), samples=True)
        steps += s
        prims += p
    return steps, prims


def writes_vs_primitive(env: gym.Env, task_id: str, actions: list[str], reps: int) -> tuple[list[list[float]], list[list[float]]]:
    """Each of ``actions`` as the opening steps of fresh episodes, and the primitive of each on a
    copy of the state its step sees, timed in turn."""
    steps: list[list[float]] = [[] for _ in actions]
    prims: list[list[float]] = [[] for _ in actions]
    for r in range(reps):
        env.reset(seed=0, options={"task_id": task_id})
        for i, a in enumerate(actions):
            prim = primitive_of(env, a, copy_world=True)
            if r % 2:
                prims[i].append(time_once(prim))
            t = time.perf_counter()
            _, _, _, _, info = env.step(a)
            steps[i].append(time.perf_counter() - t)
            if not r % 2:
                prims[i].append(time_once(prim))
            if info["tool_errors"]:
                raise SystemExit(f"benchmark action failed: {a[:120]}")
    return steps, prims


def step_samples(env: gym.Env, task_id: str, action: str, reps: int, per_episode: int = 200) -> list[float]:
    """Time ``env.step(action)`` repeatedly, on a fresh reset every ``per_episode`` steps."""
    out: list[float] = []
    while len(out) < reps:
        env.reset(seed=0, options={"task_id": task_id})
        env.step(action)  # warm the episode's caches once
        for _ in range(min(per_episode, reps - len(out))):
            t = time.perf_counter()
            env.step(action)
            out.append(time.perf_counter() - t)
    return out


def first_step_samples(env: gym.Env, task_id: str, actions: list[str], reps: int) -> list[list[float]]:
    """Time each of ``actions`` as the opening steps of fresh episodes."""
    out: list[list[float]] = [[] for _ in actions]
    for _ in range(reps):
        env.reset(seed=0, options={"task_id": task_id})
        for i, a in enumerate(actions):
            t = time.perf_counter()
            _, _, terminated, truncated, info = env.step(a)
            out[i].append(time.perf_counter() - t)
            if info["tool_errors"]:
                raise SystemExit(f"benchmark action failed: {a[:120]}")
    return out


def reset_samples(env: gym.Env, options_list: list[dict[str, Any] | None], seeds: list[int | None]) -> list[float]:
    out = []
    for opts, seed in zip(options_list, seeds):
        t = time.perf_counter()
        env.reset(seed=seed, options=opts)
        out.append(time.perf_counter() - t)
    return out


def score_samples(env: gym.Env, task_id: str, reps: int) -> tuple[list[float], list[float]]:
    """Scoring alone (the rubric over the final state), and the whole final step that triggers it."""
    u = env.unwrapped
    env.reset(seed=0, options={"task_id": task_id})
    for a in u.task.golden_actions[:-1]:
        env.step(a)
    view = u.episode_view()
    scoring = timed(lambda: u.score(u.task, view), reps)
    final = []
    for _ in range(max(1, reps // 10)):
        env.reset(seed=0, options={"task_id": task_id})
        for a in u.task.golden_actions[:-1]:
            env.step(a)
        t = time.perf_counter()
        env.step("###STOP###")
        final.append(time.perf_counter() - t)
    return scoring, final


def long_run(env: gym.Env, episodes: int, store_action: str | None) -> tuple[float, float]:
    """Mean episode time of the first and last quarter over ``episodes`` short episodes."""
    times = []
    for seed in range(episodes):
        t = time.perf_counter()
        env.reset(seed=seed)
        action = store_action or call_text(
            "get_delivery_store_info", {"store_id": next(iter(env.unwrapped.world.table("stores").rows))}
        )
        env.step(action)
        env.step("How many people is this for?")
        env.step("###STOP###")
        times.append(time.perf_counter() - t)
    q = max(1, episodes // 4)
    return statistics.mean(times[:q]), statistics.mean(times[-q:])


# ----- report ---------------------------------------------------------------------------------
def print_table(rows: list[Row], prim: float, extra: list[tuple[str, str, str, str]]) -> None:
    w = max(len(r.name) for r in rows + [Row(e[0], [0.0]) for e in extra]) + 2
    head = f"{'measurement':<{w}} {'median':>11} {'p90':>11} {'x prim':>8}  {'target':<16} {'':<5} note"
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = r.median / (r.unit or prim)
        status = ""
        if r.ratio_target is not None:
            status = "ok" if ratio <= r.ratio_target else "OVER"
        elif r.abs_target is not None:
            status = "ok" if r.median <= r.abs_target else "OVER"
        print(f"{r.name:<{w}} {fmt_time(r.median):>11} {fmt_time(r.p90):>11} {ratio:8.1f}  {r.target:<16} {status:<5} "
              f"{r.note}")
    for name, value, target, note in extra:
        status = note if note in ("ok", "OVER") else ""
        note = "" if status else note
        print(f"{name:<{w}} {value:>11} {'':>11} {'':>8}  {target:<16} {status:<5} {note}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (about ten seconds)")
    ap.add_argument("--vitabench", type=Path, default=None, help=f"VitaBench delivery task file (default {DEFAULT_VITABENCH})")
    ap.add_argument("--handmade", action="store_true", help="use the test suite's hand-written task, not generated ones")
    args = ap.parse_args(argv)
    q = args.quick
    reps = 300 if q else 3000
    started = time.perf_counter()

    try:
        if args.handmade:
            raise ImportError
        from servicegym.envs.tasks.generators.delivery import generate_delivery_task  # noqa: F401

        tasks: list[Task] | None = None
        source = "generated tasks"
    except ImportError:
        tasks = handmade_tasks()
        source = "the hand-written test task"
    env = make_env(tasks)
    task_id = tasks[0].task_id if tasks else pick_task(env, range(100))
    env.reset(seed=0, options={"task_id": task_id})
    task = env.unwrapped.task
    calls = golden_calls(task)
    world = env.unwrapped.world
    store_id = calls.get("create_delivery_order", {}).get("store_id") or next(iter(world.table("stores").rows))
    product = next(iter(world.table("products")))
    print(f"servicegym delivery benchmark on {source} (task {task_id}); "
          f"{'quick' if q else 'full'} run, python {sys.version.split()[0]}\n")

    read = call_text("get_delivery_store_info", {"store_id": store_id})
    read_s, read_p = read_vs_primitive(env, task_id, read, reps)
    prim = statistics.median(read_p)
    rows: list[Row] = [Row("primitive of the read (get_delivery_store_info)", read_p,
                           note="the unit of 'x prim' unless a row says otherwise")]
    rows.append(Row("step: read tool (get_delivery_store_info)", read_s, "<= 3x prim", ratio_target=3))
    write = [call_text("create_delivery_order", calls["create_delivery_order"]),
             call_text("pay_delivery_order", calls["pay_delivery_order"])]
    (create_s, pay_s), (create_p, pay_p) = writes_vs_primitive(env, task_id, write, reps // 3)
    rows.append(Row("step: write tool (create_delivery_order)", create_s, "<= 5x its prim", ratio_target=5,
                    note=f"fresh reset each; x its own primitive ({fmt_time(statistics.median(create_p)).strip()})",
                    unit=statistics.median(create_p)))
    rows.append(Row("step: write tool (pay_delivery_order)", pay_s, "<= 5x its prim", ratio_target=5,
                    note=f"x its own primitive ({fmt_time(statistics.median(pay_p)).strip()})", unit=statistics.median(pay_p)))
    search = call_text("delivery_product_search_recommend", {"keywords": [product.name]})
    rows.append(Row("step: search (delivery_product_search_recommend)", step_samples(env, task_id, search, reps),
                    "<= 15x prim", ratio_target=15, note=f"{len(world.table('products'))} products"))
    (first_search,) = first_step_samples(env, task_id, [search], reps // 3)
    rows.append(Row("step: search, first in the episode", first_search, "<= 15x prim", ratio_target=15,
                    note="the first call of a fresh episode"))
    rows.append(Row("step: message to the scripted user", step_samples(env, task_id, "What is your budget?", reps,
                                                                         per_episode=50), ""))

    # resets
    n_resets = 200 if q else 1500
    if tasks is None:
        gen_env = generated_env()
        rows.append(Row("reset: new generated task (generate + build)",
                        reset_samples(gen_env, [None] * n_resets, list(range(10_000, 10_000 + n_resets))),
                        "median <= 2 ms", abs_target=2e-3))
    rows.append(Row("reset: same task again (cached world)",
                    reset_samples(env, [{"task_id": task_id}] * n_resets, [None] * n_resets),
                    "median <= 2 ms", abs_target=2e-3))
    vita_path = args.vitabench or DEFAULT_VITABENCH
    vita_env = None
    if vita_path.exists():
        t = time.perf_counter()
        vita_env = gym.make(ENV_ID, tasks=str(vita_path), max_steps=BIG, max_errors=BIG)
        load = time.perf_counter() - t
        ids = vita_env.unwrapped.task_ids()
        order = [{"task_id": ids[i % len(ids)]} for i in range(n_resets)]
        rows.append(Row(f"reset: VitaBench task ({len(ids)} tasks cycled)", reset_samples(vita_env, order,
                                                                                           [None] * n_resets),
                        "median <= 2 ms", abs_target=2e-3, note=f"file loaded in {load:.2f} s"))
    else:
        print(f"(no VitaBench file at {vita_path}; VitaBench rows skipped)\n")

    # scoring
    scoring, final = score_samples(env, task_id, reps // 3)
    rows.append(Row(f"score: rubric at episode end ({len(task.rubric)} items)", scoring, "<= 1 ms", abs_target=1e-3))
    rows.append(Row("step: final step (###STOP###, scored)", final, ""))
    if vita_env is not None:
        vu = vita_env.unwrapped
        vt = next((i for i in vu.task_ids() if vu.source.get(i).golden_actions), None)
        if vt is not None:
            s, _ = score_samples(vita_env, vt, reps // 3)
            rows.append(Row("score: VitaBench order matching", s, "<= 1 ms", abs_target=1e-3, note=f"task {vt}"))

    # memory
    n_env = 20 if q else 100
    extra: list[tuple[str, str, str, str]] = []
    mem_fn = (lambda i: generated_env()) if tasks is None else (lambda i: make_env(tasks))
    per_env = memory_per_env(n_env, mem_fn)
    extra.append((f"memory per env (make + 1 reset, N={n_env})", f"{per_env / 2**20:8.3f} MB", "<= 2 MB",
                  "ok" if per_env <= 2 * 2**20 else "OVER"))
    if tasks is None:
        full = memory_per_env(max(5, n_env // 5), mem_fn, resets=40)
        extra.append(("memory per env (after 40 resets: task cache full)", f"{full / 2**20:8.3f} MB", "<= 2 MB",
                      "ok" if full <= 2 * 2**20 else "OVER"))
    if vita_env is not None:
        vmem = memory_per_env(n_env, lambda i: gym.make(ENV_ID, tasks=str(vita_path)))
        extra.append((f"memory per env (VitaBench file, N={n_env})", f"{vmem / 2**20:8.3f} MB", "<= 2 MB",
                      "ok" if vmem <= 2 * 2**20 else "OVER"))

    # flatness over many episodes on one instance
    episodes = 400 if q else 2000
    first, last = long_run(make_env(tasks), episodes, read if tasks is not None else None)
    extra.append((f"episode time, last/first quarter ({episodes} eps)", f"{last / first:8.2f} x",
                  "flat (~1x)", f"{fmt_time(first).strip()} -> {fmt_time(last).strip()}"))

    print_table(rows, prim, extra)
    print(f"\n'x prim' = median / the median of the read's primitive ({fmt_time(prim).strip()}), or of the row's own "
          f"call where it says so; {PRIMITIVE_NOTE}; total run {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
