"""Fuzz an env with seeded garbage and near-misses; print exceptions, worst step latency and memory growth.

    python scripts/fuzz.py servicegym/Delivery-v0 100000
    python scripts/fuzz.py all 20000 --seed 3

Actions mix well-formed calls with random arguments drawn from the tool schemas, calls with wrong
types, unknown tools and arguments, lone surrogates (raw and JSON-escaped), deep and broken JSON,
too many calls in one action, oversized actions and arguments, plain messages, empty actions and
``###STOP###``. Episodes reset on fresh generated tasks (a new seed each time), so per-task
caches are exercised too. Invariants checked on every step: ``step`` never raises, the
observation is a string within the observation space, and the transcript encodes as UTF-8.
Memory is the process's resident set (``/proc/self/statm``) after the first tenth of the actions
and at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import gymnasium as gym  # noqa: E402

import servicegym  # noqa: E402
from servicegym.envs.environments.parsing import MAX_ACTION_CHARS, MAX_TOOL_CALLS  # noqa: E402

JUNK = ["", " ", "null", "{", "}", "[]", "{}", "<tool_call>", "</tool_call>", "```json", "\ud83d", "\\ud83d", "😀",
        "外卖", "0", "-1", "1e999", "NaN", "true", "'; DROP TABLE", "../../etc/passwd", "/abs/path", "a\\b", "\x00",
        "###STOP###", '"name"', "tool_calls"]


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: peak RSS instead
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def value_for(schema: dict, rng: random.Random, depth: int = 0):
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if "enum" in schema and rng.random() < 0.7:
        return rng.choice(schema["enum"])
    if rng.random() < 0.1 or depth > 3:
        return rng.choice([None, rng.choice(JUNK), rng.randint(-10**6, 10**6), [], {}])
    if kind == "string":
        return rng.choice(JUNK + ["2025-06-21 12:00:00", "S001", "P001", "T1D01", "report.md", "data/x.csv",
                                  "".join(rng.choice("abc 的😀\ud800") for _ in range(rng.randint(0, 30)))])
    if kind == "integer":
        return rng.choice([0, 1, 2, -1, 10**9, rng.randint(-100, 100)])
    if kind == "number":
        return rng.choice([0.0, 1.5, -3.0, 1e300, rng.random() * 100])
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [value_for(schema.get("items", {}), rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: value_for(v, rng, depth + 1) for k, v in props.items() if rng.random() < 0.8}
    return rng.choice(JUNK)


def random_call(tools: list[dict], rng: random.Random) -> dict:
    fn = rng.choice(tools)["function"]
    params = fn.get("parameters", {})
    args = {k: value_for(v, rng) for k, v in params.get("properties", {}).items() if rng.random() < 0.85}
    if rng.random() < 0.1:
        args[rng.choice(JUNK) or "x"] = rng.choice(JUNK)
    name = fn["name"] if rng.random() > 0.05 else rng.choice([fn["name"] + "_x", "", "eval", rng.choice(JUNK)])
    return {"name": name, "arguments": args}


def action_for(kind: str, tools: list[dict], rng: random.Random) -> str:
    if kind == "call":
        return json.dumps(random_call(tools, rng), ensure_ascii=rng.random() < 0.5)
    if kind == "tagged":
        calls = [random_call(tools, rng) for _ in range(rng.randint(1, 3))]
        return "Let me check. " + "".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls)
    if kind == "openai":
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                 for i, c in enumerate(random_call(tools, rng) for _ in range(rng.randint(0, 3)))]
        return json.dumps({"role": "assistant", "content": rng.choice(["", None, "ok"]), "tool_calls": calls})
    if kind == "surrogate":
        return rng.choice(['{"name": "x", "arguments": {"note": "\\ud83d"}}', "hi \ud800 there", "\udfff" * 10,
                           json.dumps(random_call(tools, rng))[:-2] + '"\\udc00"}'])
    if kind == "deep":
        n = rng.choice([50, 1000, 100_000])
        return "[" * n + "]" * rng.choice([0, n])
    if kind == "broken":
        text = json.dumps(random_call(tools, rng))
        cut = rng.randint(0, len(text))
        return text[:cut] + rng.choice(JUNK) + text[cut:]
    if kind == "many":
        return json.dumps([random_call(tools, rng) for _ in range(rng.choice([MAX_TOOL_CALLS + 1, 200]))])
    if kind == "huge":
        return rng.choice(["x", "我", '{"name": "'])* (MAX_ACTION_CHARS // rng.choice([1, 2]) + 10)
    if kind == "message":
        return rng.choice(["How many people is this for?", "Which address should I use?", "Done, your order is placed.",
                           "Shall I go ahead and pay?", "What format do you want for the report?",
                           "".join(rng.choice(JUNK) for _ in range(rng.randint(1, 12))), "###STOP###"])
    return rng.choice(JUNK)


KINDS = Counter({"call": 40, "tagged": 10, "openai": 8, "surrogate": 6, "deep": 3, "broken": 10, "many": 1, "huge": 1,
                 "message": 18, "junk": 3})


def fuzz(env_id: str, n: int, seed: int) -> dict:
    rng = random.Random(seed)
    env = gym.make(env_id, max_steps=40, max_errors=30)
    kinds = list(KINDS.elements())
    exceptions: list[str] = []
    worst = (0.0, "")
    steps = resets = 0
    obs, info = env.reset(seed=seed)
    tools = info["tools"]
    base_mem = None
    t_start = time.perf_counter()
    for i in range(n):
        if i == n // 10:
            base_mem = rss_mb()
        kind = rng.choice(kinds)
        action = action_for(kind, tools, rng)
        t0 = time.perf_counter()
        try:
            obs, _, term, trunc, info = env.step(action)
            dt = time.perf_counter() - t0
            if not (isinstance(obs, str) and env.observation_space.contains(obs)):
                raise AssertionError(f"observation outside the space ({type(obs).__name__}, {len(obs)} chars)")
            if i % 97 == 0:
                json.dumps(env.unwrapped.messages, ensure_ascii=False).encode("utf-8")
        except Exception:
            dt = time.perf_counter() - t0
            exceptions.append(f"{kind}: {traceback.format_exc(limit=3)}")
            term = True
        steps += 1
        if dt > worst[0]:
            worst = (dt, kind)
        if term or trunc:
            resets += 1
            obs, info = env.reset(seed=seed * 1_000_003 + resets)  # a fresh generated task
            tools = info["tools"]
    elapsed = time.perf_counter() - t_start
    env.close()
    end_mem = rss_mb()
    return {"env": env_id, "actions": steps, "episodes": resets, "exceptions": len(exceptions), "first": exceptions[:3],
            "worst_ms": worst[0] * 1000, "worst_kind": worst[1], "us_per_step": elapsed / max(steps, 1) * 1e6,
            "mem_start_mb": base_mem or end_mem, "mem_end_mb": end_mem}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help="an env id, or 'all'")
    parser.add_argument("n", type=int, help="actions per env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("n must be at least 1")
    ids = sorted(servicegym.ENV_IDS) if args.env == "all" else [args.env]
    unknown = [e for e in ids if e not in servicegym.ENV_IDS]
    if unknown:
        parser.error(f"unknown env {unknown[0]!r}; choose from {', '.join(sorted(servicegym.ENV_IDS))} or all")
    print(f"{'env':30} {'actions':>8} {'episodes':>8} {'exceptions':>10} {'worst step':>12} {'mean':>9} {'memory':>18}")
    bad = 0
    for env_id in ids:
        r = fuzz(env_id, args.n, args.seed)
        bad += r["exceptions"]
        print(f"{env_id:30} {r['actions']:>8} {r['episodes']:>8} {r['exceptions']:>10} "
              f"{r['worst_ms']:>8.1f} ms ({r['worst_kind']}) {r['us_per_step']:>6.0f} us "
              f"{r['mem_start_mb']:>7.1f} -> {r['mem_end_mb']:.1f} MB", flush=True)
        for text in r["first"]:
            print(text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
