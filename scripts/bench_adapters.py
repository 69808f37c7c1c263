"""Adapter overhead: a turn through each LLM-trainer adapter as a ratio to a bare ``env.step``, and
episodes per second through each adapter with stand-in generation (the task's golden actions).

    python scripts/bench_adapters.py [--quick] [--env servicegym/Delivery-v0] [--tasks 20]

Adapters: TRL (``environment_factory`` instances, tool methods called as TRL calls them), SkyRL
(``BaseTextEnv.step`` with the action text), verl (``ServiceGymAgentLoop.run`` token in, token
out, with a tokenizer trained in the tests and a stand-in server manager that answers with the
golden actions' token ids), and the gateway ``rollout`` function (the loopback chat-completions
server replaying golden routes, no added latency: the figure is the client's and the HTTP cost).
An adapter whose library is not installed is reported as such. Figures are medians of repeats.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import servicegym  # noqa: E402, F401  registers the ids
from servicegym.envs.environments.base import USER_TOOL  # noqa: E402
from servicegym.envs.environments.parsing import parse_action  # noqa: E402
from servicegym.envs.integrations.dataset import task_rows  # noqa: E402


def bare(env_id: str, rows: list[dict]) -> tuple[float, int, float]:
    """(seconds in env.step, turns, seconds for whole episodes) over the rows' golden routes."""
    env = gym.make(env_id)
    step_s, turns, t0 = 0.0, 0, time.perf_counter()
    for row in rows:
        env.reset(seed=row["seed"], options={"task_id": row["task_id"]})
        for action in env.unwrapped.task.golden_actions:
            t = time.perf_counter()
            *_, term, trunc, _ = env.step(action)
            step_s += time.perf_counter() - t
            turns += 1
            if term or trunc:
                break
    return step_s, turns, time.perf_counter() - t0


def trl(env_id: str, rows: list[dict]) -> tuple[float, int, float]:
    from servicegym.envs.integrations.trl import environment_factory

    factory = environment_factory(env_id)
    step_s, turns, t0 = 0.0, 0, time.perf_counter()
    rewards = []
    for row in rows:
        inst = factory()
        inst.reset(**row)
        for action in inst._env.unwrapped.task.golden_actions:
            parsed = parse_action(action)
            calls = [(c.name, c.arguments) for c in parsed.tool_calls] or [(USER_TOOL, {"message": parsed.message})]
            t = time.perf_counter()
            for name, args in calls:  # TRL calls tool(**arguments), one call at a time
                getattr(inst, name)(**args)
            step_s += time.perf_counter() - t
            turns += 1
        rewards.append(inst.get_reward())
    assert all(r == 1.0 for r in rewards), rewards
    return step_s, turns, time.perf_counter() - t0


def skyrl(env_id: str, rows: list[dict]) -> tuple[float, int, float]:
    import skyrl_gym

    from servicegym.envs.integrations.skyrl import skyrl_id

    step_s, turns, t0 = 0.0, 0, time.perf_counter()
    for row in rows:
        env = skyrl_gym.make(skyrl_id(env_id), env_config={}, extras={"task_id": row["task_id"], "seed": row["seed"]})
        env.init(row["prompt"])
        reward = 0.0
        for action in env.env.unwrapped.task.golden_actions:
            t = time.perf_counter()
            out = env.step(action)
            step_s += time.perf_counter() - t
            turns += 1
            reward = out["reward"]
            if out["done"]:
                break
        assert reward == 1.0
    return step_s, turns, time.perf_counter() - t0


def verl(env_id: str, rows: list[dict], concurrency: int) -> tuple[float, int, float]:
    from tests.envs import test_verl as tv

    tok = tv.build_tokenizer()
    vrows = [{"env_id": env_id, "task_id": r["task_id"], "seed": r["seed"], "raw_prompt": [], "agent_name": tv.AGENT_NAME}
             for r in rows]
    server = tv.ScriptedServer(tv.scripts_for(tok, vrows))

    async def main():
        loop = tv.ServiceGymAgentLoop(**tv.loop_kwargs(tok, server, tv.config()))  # binds the running loop
        sem = asyncio.Semaphore(concurrency)

        async def one(row):
            async with sem:
                return await loop.run(tv.sampling(), **row)

        return await asyncio.gather(*(one(r) for r in vrows))

    t0 = time.perf_counter()
    outs = asyncio.run(main())
    elapsed = time.perf_counter() - t0
    assert all(o.reward_score == 1.0 for o in outs)
    return elapsed, sum(o.num_turns for o in outs), elapsed


def gateway(env_id: str, rows: list[dict], concurrency: int) -> tuple[float, int, float]:
    from servicegym.envs.integrations.rollout import rollout
    from servicegym.envs.running.llm_policy import golden_replay_handler
    from servicegym.simulators.llm import aclose_clients
    from servicegym.simulators.loopback import LoopbackServer

    env = gym.make(env_id)
    tasks = [env.unwrapped.source.get(r["task_id"]) for r in rows]
    with LoopbackServer(handler=golden_replay_handler(tasks)) as server:
        async def main():
            sem = asyncio.Semaphore(concurrency)

            async def one(row):
                async with sem:
                    return await rollout(env_id, row, base_url=server.base_url, model=server.model, api_key="sk-bench")

            try:
                return await asyncio.gather(*(one(r) for r in rows))
            finally:
                await aclose_clients()

        t0 = time.perf_counter()
        results = asyncio.run(main())
        elapsed = time.perf_counter() - t0
    assert all(r.reward == 1.0 for r in results), [r.termination_reason for r in results]
    return elapsed, sum(r.steps for r in results), elapsed


def median_of(fn, repeats: int):
    runs = [fn() for _ in range(repeats)]
    return tuple(statistics.median(x) for x in zip(*runs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 tasks, one repeat")
    ap.add_argument("--env", default="servicegym/Delivery-v0")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    n, repeats = (5, 1) if args.quick else (args.tasks, args.repeats)
    rows = task_rows(args.env, "test", n)
    trl_rows = task_rows(args.env, "test", n, env_kwargs={"user_tool": True})
    bare(args.env, rows)  # warm: the tasks' worlds are built once per process
    base_s, base_turns, base_ep = median_of(lambda: bare(args.env, rows), repeats)
    per_turn = base_s / base_turns
    print(f"adapter overhead on {args.env}: {n} golden episodes, {int(base_turns)} turns, median of {repeats}")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchlib import PRIMITIVE_NOTE, reference_primitive

    prim = reference_primitive()
    print(f"bare env.step: {per_turn * 1e6:.1f} us a turn = {per_turn / prim:.1f}x the primitive "
          f"({prim * 1e6:.1f} us, a bare get_delivery_store_info; {PRIMITIVE_NOTE}); {n / base_ep:.0f} episodes/s\n")
    print(f"{'adapter':34} {'us a turn':>10} {'x env.step':>11} {'episodes/s':>11}")
    cases = [
        ("TRL environment_factory", lambda: trl(args.env, trl_rows), "trl"),
        ("SkyRL BaseTextEnv", lambda: skyrl(args.env, rows), "skyrl_gym"),
        ("verl AgentLoop (1 at a time)", lambda: verl(args.env, rows, 1), "verl"),
        ("verl AgentLoop (32 at once)", lambda: verl(args.env, rows, 32), "verl"),
        ("gateway rollout (1 at a time)", lambda: gateway(args.env, rows, 1), None),
        ("gateway rollout (32 at once)", lambda: gateway(args.env, rows, 32), None),
    ]
    import importlib.util

    for name, fn, module in cases:
        if module and importlib.util.find_spec(module) is None:
            print(f"{name:34} {'not installed (pip install servicegym[' + module.split('_')[0] + '])':>34}")
            continue
        s, turns, ep = median_of(fn, repeats)
        print(f"{name:34} {s / turns * 1e6:>10.1f} {s / turns / per_turn:>10.2f}x {n / ep:>11.1f}", flush=True)
    print("\n(verl and gateway: the whole episode's wall time per turn, generation stand-in included; "
          "the others: the adapter's own calls per turn)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
