"""The one benchmark primitive every ``scripts/bench_*.py`` prints its ratios to, and the timing
helpers they share.

The primitive
-------------
The *primitive* of a tool call is what a bare implementation of that one call must do, and
nothing more (``bare_call``):

1. ``json.loads`` of the call text ``{"name": ..., "arguments": {...}}``;
2. the tool looked up by name, and its own pydantic validation of the arguments
   (``spec.args_model``, the model the tool's signature defines);
3. the tool's pre-conditions (its business rules: the order exists, its status allows the
   change, ...), which a bare method checks inside itself;
4. the tool function on the world;
5. the result encoded as the JSON text the agent reads (``world_state.tools.dumps``).

That is the work VitaBench's and tau2's bare tool methods do (their rules live inside the method),
so "x prim" reads "times the cost of a bare implementation of the same call". What the env adds
around it is what the ratio measures: action parsing beyond ``json.loads`` (tags, the other
accepted forms, the action limits, scrubbing), call ids, the history entry, the conversation log,
the observation's markup, the undo journal of a write, the step and error limits and the info
dict. A write's primitive runs on a copy of the world in the very state the env's step sees (the
copy is made outside the timer), so pay, modify and cancel are compared with bare pay, modify and
cancel.

Scripts without a call of their own to compare (rewards, rollouts) use ``reference_primitive``:
the primitive of ``get_delivery_store_info`` (a store and its menu) on a fixed generated
delivery task.

Timing: on a machine shared with other work, absolute times move by tens of percent between
runs. ``paired`` therefore interleaves the two things it compares (one sample of each in turn)
and reports medians, so load changes hit both sides alike; ratios are the portable figures.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import Toolkit, dumps


# ----- the fixed primitive: ../shared/tools/primitive.py, verbatim --------------------------------
# The yardstick every benchmark's headline ratios divide by (parse a ~100-byte JSON call, validate
# three typed arguments with pydantic, update one record in a dict), measured in the same run.
class _Args(BaseModel):
    order_id: str
    quantity: int
    note: str = ""


_CALL = '{"name": "modify_order", "arguments": {"order_id": "o17", "quantity": 3, "note": "less spicy"}}'


def primitive_us(n: int = 20_000, repeats: int = 5) -> float:
    """Median over ``repeats`` batches of the per-call cost, in microseconds."""
    db = {f"o{i}": {"q": 0} for i in range(1000)}
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n // repeats):
            call = json.loads(_CALL)
            args = _Args.model_validate(call["arguments"])
            db[args.order_id]["q"] = args.quantity
        samples.append((time.perf_counter() - t) / (n // repeats) * 1e6)
    return statistics.median(samples)


# ----- the primitive of one call (a peer: the same call done bare) --------------------------------


def call_json(action: str) -> str:
    """The JSON of a single call action (``<tool_call>`` tags taken off)."""
    action = action.strip()
    if action.startswith("<tool_call>") and action.endswith("</tool_call>"):
        action = action[len("<tool_call>") : -len("</tool_call>")].strip()
    return action


def bare_call(toolkit: Toolkit, world: World, history: History, text: str) -> str:
    """THE primitive: a bare implementation of the call ``text`` (see the module docstring).
    Raises when the call would be refused (a benchmark call must be one that runs)."""
    obj = json.loads(text)
    spec = toolkit.resolve(obj["name"])
    args = spec.args_model.model_validate(obj["arguments"]).__dict__
    for p in spec.pre:
        problem = p.check(world, history, args)
        if problem:
            raise RuntimeError(f"benchmark call refused: {spec.name}: {problem}")
    return dumps(spec.fn(world, **args))


def primitive_of(env: Any, action: str, copy_world: bool = False) -> Callable[[], Any]:
    """A zero-argument function that runs the primitive of ``action`` on ``env``'s current state
    (on a copy of its world, made before the timer starts, when ``copy_world``: for writes). The
    world it runs on is its ``world`` attribute (a steady-state write puts it back between calls)."""
    u = getattr(env, "unwrapped", env)
    text = call_json(action)
    toolkit, history = u.toolkit, u.history
    if copy_world:
        world = u.world.copy()
    else:
        world = u.world

    def primitive() -> str:
        return bare_call(toolkit, world, history, text)

    primitive.world = world  # type: ignore[attr-defined]
    return primitive


_REFERENCE: float | None = None


def reference_primitive(reps: int = 3000) -> float:
    """Median seconds of the primitive of ``get_delivery_store_info`` on a fixed generated delivery
    task (for scripts with no call of their own to compare); measured once per process."""
    global _REFERENCE
    if _REFERENCE is None:
        import gymnasium as gym

        import servicegym  # noqa: F401  registers the ids

        env = gym.make("servicegym/Delivery-v0")
        u = env.unwrapped
        env.reset(seed=0, options={"task_id": u.task_ids("test")[0]})
        store = next(iter(u.world.table("stores").rows))
        action = json.dumps({"name": "get_delivery_store_info", "arguments": {"store_id": store}})
        fn = primitive_of(env, action)
        fn()
        _REFERENCE = median(timed(fn, reps))
    return _REFERENCE


# ----- timing ----------------------------------------------------------------------------------


def timed(fn: Callable[[], Any], reps: int) -> list[float]:
    """Seconds of each of ``reps`` calls of ``fn``."""
    out = []
    clock = time.perf_counter
    for _ in range(reps):
        t = clock()
        fn()
        out.append(clock() - t)
    return out


def time_once(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def paired(a: Callable[[], Any], b: Callable[[], Any], reps: int,
           setup: Callable[[], tuple[Callable[[], Any], Callable[[], Any]] | None] | None = None,
           samples: bool = False) -> tuple[Any, Any]:
    """Medians (seconds) of ``a`` and ``b`` timed in turn, ``reps`` samples each (the sample lists
    when ``samples``). ``setup`` (untimed, before each pair) may return a fresh ``(a, b)`` for that
    pair."""
    sa, sb = [], []
    for i in range(reps):
        if setup is not None:
            fresh = setup()
            if fresh is not None:
                a, b = fresh
        if i % 2:
            sb.append(time_once(b))
            sa.append(time_once(a))
        else:
            sa.append(time_once(a))
            sb.append(time_once(b))
    return (sa, sb) if samples else (median(sa), median(sb))


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def memory_per_env(n: int, make: Callable[[int], Any], resets: int = 1) -> float:
    """Bytes per env (tracemalloc) of ``n`` envs made by ``make(i)`` and reset ``resets`` times each."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = []
    for i in range(n):
        env = make(i)
        for r in range(resets):
            env.reset(seed=i * 1000 + r)
        kept.append(env)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del kept
    return used / n


# ----- printing --------------------------------------------------------------------------------


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def ratio(x: float | None, unit: float | None) -> str:
    return "-" if x is None or not unit else f"{x / unit:.1f}x"


def verdict(value: float | None, goal: float) -> str:
    if value is None:
        return ""
    return "ok" if value <= goal else "OVER"


def print_table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> None:
    """A plain-text table; the first ``left`` columns are left-aligned, the rest right-aligned."""
    cols = list(zip(*([list(head)] + [list(map(str, r)) for r in rows])))
    widths = [max(len(c) for c in col) for col in cols]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(list(map(str, r))))


PRIMITIVE_NOTE = ("primitive = a bare implementation of the same call: json.loads + the tool's pydantic argument "
                  "validation + its pre-conditions + the tool function on the world + the result's JSON "
                  "(scripts/benchlib.py)")
