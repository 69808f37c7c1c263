"""Benchmark Payments-v0 against the one primitive (``scripts/benchlib.py``): reset, golden-route
steps, document and capability search, and the G/P/F check of a 200-step history (target <= 10 ms).

Ratios: a read to the primitive of the same read (``read_document``) on the same state, measured in
turn with it; a payout to the primitive of the same ``call_capability`` on a copy of the state it
sees; every other row to the read's primitive. Prints figures; asserts nothing.

    python scripts/bench_payments.py            # about half a minute
    python scripts/bench_payments.py --quick    # a few seconds
    python scripts/bench_payments.py --tasks 20
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import PRIMITIVE_NOTE, fmt_time, median, paired, primitive_of, print_table, time_once, timed  # noqa: E402

from servicegym.envs.environments.payments import PaymentsEnv  # noqa: E402
from servicegym.envs.tasks.suites import payments_suite  # noqa: E402
from servicegym.rewards.payments import check_payments  # noqa: E402

BIG = 10**9
CHECK_TARGET = 0.010


def call_name(action: str) -> str:
    try:
        obj = json.loads(action)
    except json.JSONDecodeError:
        return ""
    if not isinstance(obj, dict):
        return ""
    if obj.get("name") == "call_capability":
        return f"call_capability:{obj['arguments'].get('name')}"
    return str(obj.get("name", ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tasks and repetitions (a few seconds)")
    parser.add_argument("--tasks", type=int, default=None, help="suite tasks to time (default 10, 3 with --quick)")
    args = parser.parse_args(argv)
    n_tasks = args.tasks or (3 if args.quick else 10)
    reps = 100 if args.quick else 500
    tasks = payments_suite()[:n_tasks]
    env = PaymentsEnv(max_steps=BIG, max_errors=BIG)
    read_s, read_p, resets, steps, pay_s, pay_p, docs, caps, checks, lengths = ([] for _ in range(10))
    for task in tasks:
        golden = list(task.golden_actions)
        for _ in range(3):
            resets.append(time_once(lambda task=task: env.reset(seed=0, options={"task": task})))
        # the read, repeated at its first place in the golden route, against its primitive
        k = next(i for i, a in enumerate(golden) if call_name(a) == "read_document")
        for a in golden[:k]:
            env.step(a)
        read = golden[k]
        env.step(read)
        prim = primitive_of(env, read)
        p, s = paired(prim, lambda read=read: env.step(read), reps, samples=True)
        read_p += p
        read_s += s
        # searches, repeated on the same state (the index is the world's, built once)
        doc = next(a for a in golden if call_name(a) == "search_documents")
        cap = json.dumps({"name": "search_capabilities", "arguments": {"query": "payout create"}})
        env.step(doc)
        docs += timed(lambda doc=doc: env.step(doc), reps // 2)
        env.step(cap)
        caps += timed(lambda cap=cap: env.step(cap), reps // 2)
        # the golden route step by step, and its payout against the payout's primitive
        env.reset(seed=0, options={"task": task})
        t = time.perf_counter()
        for a in golden[:-1]:
            if call_name(a) == "call_capability:payouts.create" and not pay_s:
                bare = primitive_of(env, a, copy_world=True)
                pay_p.append(time_once(bare))
                pay_s.append(time_once(lambda a=a: env.step(a)))
            else:
                env.step(a)
        steps.append((time.perf_counter() - t) / (len(golden) - 1))
        acc = task.world["goal"]["reserve_account"]
        filler = json.dumps({"name": "call_capability", "arguments": {"name": "accounts.balance", "arguments": {"account_id": acc}}})
        while env._steps < 200:
            env.step(filler)
        view = env.episode_view()
        lengths.append(len(view.history))
        checks.append(min(timed(lambda view=view, task=task: check_payments(view.world, view.history, task.world["goal"]), 5)))
    # a payout on each task's state before it, against its primitive, for more samples
    for task in tasks:
        golden = list(task.golden_actions)
        k = next((i for i, a in enumerate(golden) if call_name(a) == "call_capability:payouts.create"), None)
        if k is None:
            continue
        for r in range(max(3, reps // 50)):
            env.reset(seed=0, options={"task": task})
            for a in golden[:k]:
                env.step(a)
            bare = primitive_of(env, golden[k], copy_world=True)
            if r % 2:
                pay_p.append(time_once(bare))
                pay_s.append(time_once(lambda a=golden[k]: env.step(a)))
            else:
                pay_s.append(time_once(lambda a=golden[k]: env.step(a)))
                pay_p.append(time_once(bare))
    prim = median(read_p)

    def row(name: str, value: float, unit: float, goal: str, ok: bool | None = None, note: str = "") -> list[str]:
        mark = "" if ok is None else ("ok" if ok else "OVER")
        return [name, fmt_time(value), f"{value / unit:.1f}x", goal, mark, note]

    rows = [
        row("primitive of the read (read_document)", prim, prim, "", None, "the unit of 'x prim' unless a row says otherwise"),
        row("step: read_document", median(read_s), prim, "<= 3x", median(read_s) / prim <= 3),
        row("step: call_capability payouts.create", median(pay_s), median(pay_p), "<= 5x its prim",
            median(pay_s) / median(pay_p) <= 5, f"x its own primitive ({fmt_time(median(pay_p))})"),
        row("step: search_documents", median(docs), prim, "<= 10x", median(docs) / prim <= 10, "indexed once per world"),
        row("step: search_capabilities", median(caps), prim, "<= 10x", median(caps) / prim <= 10, "indexed once per process"),
        row("step: golden route (mean per step)", median(steps), prim, ""),
        row("reset (task cached)", median(resets), prim, ""),
        row("G/P/F check, 200-step history", median(checks), prim, f"<= {CHECK_TARGET * 1000:g} ms (max)",
            max(checks) <= CHECK_TARGET, f"max {fmt_time(max(checks))}; history {min(lengths)}-{max(lengths)} entries"),
    ]
    print(f"Payments-v0 over {len(tasks)} suite tasks ({'quick' if args.quick else 'full'} run)\n")
    print_table(["measurement", "median", "x prim", "goal", "", "note"], rows)
    print(f"\n{PRIMITIVE_NOTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
