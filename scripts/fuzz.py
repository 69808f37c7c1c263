"""Fuzz an env with seeded garbage and near-misses; print exceptions, the slowest step and memory growth.

    python scripts/fuzz.py servicegym/Delivery-v0 100000
    python scripts/fuzz.py all 20000 --seed 3
    python scripts/fuzz.py all 1000000 --progress    # the nightly run: 1,000,000 actions per env

Actions mix well-formed calls with random arguments drawn from the tool schemas, calls with wrong
types, unknown tools and arguments, lone surrogates (raw and JSON-escaped), deep and broken JSON,
too many calls in one action, oversized actions and arguments, plain messages, empty actions and
``###STOP###``. Episodes reset on fresh generated tasks (a new seed each time), so per-task
caches are exercised too. Invariants checked on every step: ``step`` (and ``reset``) never
raises, the observation is a string within the observation space, and the transcript encodes as
UTF-8. Memory is the process's resident set (``/proc/self/statm``) after the first tenth of the
actions and at the end.

Per env it prints the actions run, episodes, the count of exceptions (the run exits 1 unless it
is 0; the first three tracebacks are printed), the slowest step (its duration, its kind and the
action itself, cut to ``--show`` characters), the mean step and the memory. Everything is drawn
from ``--seed``: a rerun replays the same actions (the durations differ).

Duration (one core, measured with other work on the machine; ``actions/s`` is printed per env):
Delivery and InStore run about 4,000 actions/s (1,000,000 in about 5 minutes), Workspace about
2,700 (6 minutes), CrossScenario about 1,100 and Travel about 900 (15-20 minutes); Payments about
65-170, as it resets on a freshly generated task every ~15 actions and each such reset takes about
90 ms (1,000,000 in about 2-4 hours). The nightly ``all 1000000`` therefore takes about 3-5 hours,
most of it Payments; run the envs as separate processes to use more cores. CI runs 250 actions
per env (``tests/test_hardening_fuzz.py``). ``--progress`` prints a line every tenth of each
env's run to stderr.
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


def fuzz(env_id: str, n: int, seed: int, show: int = 160, progress: bool = False) -> dict:
    """``n`` seeded actions on ``env_id``: the counts, the slowest step and the memory (see the
    module docstring). Every exception is counted; the first three are kept, with their action."""
    rng = random.Random(seed)
    env = gym.make(env_id, max_steps=40, max_errors=30)
    kinds = list(KINDS.elements())
    exceptions = 0
    first: list[str] = []
    worst = (0.0, "", "")  # seconds, kind, the action cut to ``show`` characters
    steps = resets = 0

    def failed(what: str, action: str) -> None:
        nonlocal exceptions
        exceptions += 1
        if len(first) < 3:
            first.append(f"{what} on {action[:show]!r}:\n{traceback.format_exc(limit=3)}")

    def reset() -> list[dict]:
        nonlocal resets
        while True:  # a fresh generated task; one that fails to reset is counted and the next tried
            resets += 1
            try:
                return env.reset(seed=seed * 1_000_003 + resets)[1]["tools"]
            except Exception:
                failed("reset", f"seed={seed * 1_000_003 + resets}")
                if resets > n + 100:
                    raise

    _, info = env.reset(seed=seed)
    tools = info["tools"]
    base_mem = None
    t_start = time.perf_counter()
    tenth = max(n // 10, 1)
    for i in range(n):
        if i == n // 10:
            base_mem = rss_mb()
        if progress and i and i % tenth == 0:
            print(f"  {env_id}: {i} actions, {exceptions} exceptions, {time.perf_counter() - t_start:.0f} s",
                  file=sys.stderr, flush=True)
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
            failed(kind, action)
            term = trunc = True
        steps += 1
        if dt > worst[0]:
            worst = (dt, kind, action[:show])
        if term or trunc:
            tools = reset()
    elapsed = time.perf_counter() - t_start
    env.close()
    end_mem = rss_mb()
    return {"env": env_id, "actions": steps, "episodes": resets, "exceptions": exceptions, "first": first,
            "worst_ms": worst[0] * 1000, "worst_kind": worst[1], "worst_action": worst[2],
            "us_per_step": elapsed / max(steps, 1) * 1e6, "actions_per_s": steps / elapsed if elapsed > 0 else 0.0,
            "elapsed_s": elapsed, "mem_start_mb": base_mem or end_mem, "mem_end_mb": end_mem}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help="an env id, or 'all'")
    parser.add_argument("n", type=int, help="actions per env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=160, help="characters of the slowest action to print")
    parser.add_argument("--progress", action="store_true", help="a line to stderr every tenth of each env's run")
    parser.add_argument("--json", default=None, help="also write each env's figures to this JSON file")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("n must be at least 1")
    ids = sorted(servicegym.ENV_IDS) if args.env == "all" else [args.env]
    unknown = [e for e in ids if e not in servicegym.ENV_IDS]
    if unknown:
        parser.error(f"unknown env {unknown[0]!r}; choose from {', '.join(sorted(servicegym.ENV_IDS))} or all")
    print(f"{'env':30} {'actions':>8} {'episodes':>8} {'exceptions':>10} {'actions/s':>9} {'mean':>9} "
          f"{'memory':>18}  slowest step")
    bad = 0
    results = []
    for env_id in ids:
        r = fuzz(env_id, args.n, args.seed, show=args.show, progress=args.progress)
        results.append(r)
        bad += r["exceptions"]
        print(f"{env_id:30} {r['actions']:>8} {r['episodes']:>8} {r['exceptions']:>10} {r['actions_per_s']:>9.0f} "
              f"{r['us_per_step']:>6.0f} us {r['mem_start_mb']:>7.1f} -> {r['mem_end_mb']:.1f} MB  "
              f"{r['worst_ms']:.1f} ms ({r['worst_kind']}): {r['worst_action']!r}", flush=True)
        for text in r["first"]:
            print(text)
    total = sum(r["actions"] for r in results)
    print(f"total: {total} actions, {bad} exceptions")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
