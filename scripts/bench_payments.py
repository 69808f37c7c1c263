"""Benchmark Payments-v0 against the fixed primitive (``benchlib.primitive_us``, ../shared/tools/
primitive.py verbatim, measured in this run, as ``scripts/bench_envs.py`` does): the knowledge base's
size (documents per world, characters, world size), document search (a repeated golden-route query
and fresh queries, goal <= 10x), reset (goal <= 5 ms), golden-route steps, capability search and the
G/P/F check of a 200-step history (goal <= 10 ms). A second table gives the read and the payout
against the primitive of the same call (``benchlib.primitive_of``). Prints figures; asserts nothing.

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
from benchlib import PRIMITIVE_NOTE, fmt_time, median, paired, primitive_of, primitive_us, print_table, time_once, timed  # noqa: E402

from servicegym.envs.environments.payments import PaymentsEnv  # noqa: E402
from servicegym.envs.tasks.suites import payments_suite  # noqa: E402
from servicegym.rewards.payments import check_payments  # noqa: E402
from servicegym.world_state.payments import CATALOGUE, RESIDENT_TOOLS  # noqa: E402
from servicegym.world_state.tools import dumps  # noqa: E402

BIG = 10**9
CHECK_TARGET = 0.010
RESET_TARGET = 0.005
WORLD_MB_TARGET = 5.0
FRESH_WORDS = ("dispute evidence", "fee waiver", "settlement tolerance", "kyb documents", "fx quote validity", "bank change cooling",
               "daily payout limit", "reserve floor", "refund window", "review document", "payout limit increase", "chargeback")


def fresh_queries(m: dict, k: int) -> list[str]:
    """``k`` distinct search_documents calls (words and filters vary), none repeated."""
    out = []
    scopes = [{}, {"region": m["region"]}, {"region": m["region"], "tier": m["tier"]},
              {"region": m["region"], "tier": m["tier"], "currency": m["currency"]}]
    i = 0
    while len(out) < k:
        w = FRESH_WORDS[i % len(FRESH_WORDS)]
        extra = ("", " policy", f" {m['tier']}", f" {m['region']} {m['currency']}")[(i // len(FRESH_WORDS)) % 4]
        out.append(json.dumps({"name": "search_documents", "arguments": {"query": w + extra + f" v{i}", **scopes[i % 4]}}))
        i += 1
    return out


def world_mb(world) -> float:
    return sum(len(dumps(list(t.rows.values()))) for t in world.tables.values()) / 1e6


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
    fresh, n_docs, kb_chars, sizes, records = [], [], [], [], []
    fixed = [primitive_us()]
    for task in tasks:
        golden = list(task.golden_actions)
        for _ in range(3):
            resets.append(time_once(lambda task=task: env.reset(seed=0, options={"task": task})))
        rows = env.world.table("documents").rows
        n_docs.append(len(rows))
        kb_chars.append(sum(len(d.title) + len(d.body) for d in rows.values()))
        sizes.append(world_mb(env.world))
        records.append(sum(len(t.rows) for name, t in env.world.tables.items() if name != "documents"))
        for q in fresh_queries(task.world["tables"]["merchants"][0], reps // 5):
            fresh.append(time_once(lambda q=q: env.step(q)))
        fixed.append(primitive_us())
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
    unit = median(fixed) * 1e-6

    def row(name: str, value: float, base: float, goal: str, ok: bool | None = None, note: str = "") -> list[str]:
        mark = "" if ok is None else ("ok" if ok else "OVER")
        return [name, fmt_time(value), f"{value / base:.1f}x", goal, mark, note]

    n_mean, chars, n_rows = sum(n_docs) / len(n_docs), sum(kb_chars) / len(kb_chars), sum(records) / len(records)
    print(f"Payments-v0 over {len(tasks)} suite tasks ({'quick' if args.quick else 'full'} run)\n")
    writes = sum(1 for c in CATALOGUE.values() if c.kind == "write")
    print(f"scale: {len(CATALOGUE)} capabilities ({writes} writes) behind {len(RESIDENT_TOOLS)} resident tools; "
          f"{len(env.world.tables)} collections, {n_rows:.0f} records per world besides the documents (min {min(records)})")
    print(f"knowledge base: {n_mean:.0f} documents per world (min {min(n_docs)}), {chars / 1e6:.2f} M characters "
          f"(~{chars / 4e3:.0f}k tokens); world {max(sizes):.2f} MB as JSON (goal <= {WORLD_MB_TARGET:g} MB: "
          f"{'ok' if max(sizes) <= WORLD_MB_TARGET else 'OVER'})\n")
    rows = [
        row("fixed primitive (../shared/tools/primitive.py)", unit, unit, "", None, "the unit of 'x prim'"),
        row("step: search_documents, repeated query", median(docs), unit, "<= 10x", median(docs) / unit <= 10, "golden-route query, same state"),
        row("step: search_documents, fresh queries", median(fresh), unit, "<= 10x", median(fresh) / unit <= 10,
            f"{len(fresh)} distinct queries; p90 {fmt_time(sorted(fresh)[len(fresh) * 9 // 10])}"),
        row("step: search_capabilities", median(caps), unit, "<= 10x", median(caps) / unit <= 10, "indexed once per process"),
        row("step: read_document", median(read_s), unit, "<= 3x", median(read_s) / unit <= 3),
        row("step: golden route (mean per step)", median(steps), unit, ""),
        row("reset (task cached)", median(resets), unit, f"<= {RESET_TARGET * 1000:g} ms", median(resets) <= RESET_TARGET),
        row("G/P/F check, 200-step history", median(checks), unit, f"<= {CHECK_TARGET * 1000:g} ms (max)",
            max(checks) <= CHECK_TARGET, f"max {fmt_time(max(checks))}; history {min(lengths)}-{max(lengths)} entries"),
    ]
    print_table(["measurement", "median", "x prim", "goal", "", "note"], rows)
    peers = [
        row("step: read_document", median(read_s), prim, "<= 3x its prim", median(read_s) / prim <= 3,
            f"x the primitive of the same read ({fmt_time(prim)})"),
        row("step: call_capability payouts.create", median(pay_s), median(pay_p), "<= 5x its prim",
            median(pay_s) / median(pay_p) <= 5, f"x its own primitive ({fmt_time(median(pay_p))})"),
    ]
    print()
    print_table(["against the same call done bare", "median", "x", "goal", "", "note"], peers)
    print(f"\n{PRIMITIVE_NOTE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
