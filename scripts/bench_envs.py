"""Benchmark of every registered env against the fixed primitive and, beside it, the same call done bare.

The headline table divides by the fixed primitive (``benchlib.primitive_us``: ``../shared/tools/
primitive.py`` verbatim, measured in this run): the read step (goal <= 3x), the pay / modify /
cancel steps (goal <= 5x), a search step and a reset to a new generated task. The peer table
below it compares each step with a bare implementation of the same call (``benchlib.primitive_of``:
what VitaBench's and tau2's bare tool methods do), which shows what the env adds to the tool's own
work. For each env, from its frozen test suite, every figure through the public API (``gym.make``):

* read step: a lookup read of the golden route (a store's, hotel's or flight's details, a
  document, a file) repeated in a played episode, over the primitive of the same call on the same
  state (goal <= 3x);
* pay / modify / cancel (and another write where an env has none of those): the step at its place
  in a golden route, over the primitive of the same call on a copy of the same state (goal <= 5x),
  measured two ways and printed side by side:

  - steady-state (the columns the goal is marked against): measured the way a read is. The env is
    brought to the write's place once, the write done once there (discarded: it meets cold caches
    and pays the copy-on-write copy of the table it changes, once per episode), then the world is
    put back to the state the write found (``WorldState``: the rows, stamps, id counters, clock and
    ``extra`` it changed, outside the timer) and the write repeated, about a hundred times per
    place, paired in turn with its primitive on a copy of that state, put back the same way. Each
    repeat must give the first write's observation and leave the world as it did, else the write is
    reported as not timable steady-state instead of timed. The goal is marked here because a read's
    is: the two kinds of step are then measured alike (a step in a long RL run is warm), and the
    ratio is the env's steady cost, not the first touch of a table or a cache miss;
  - cold ('... cold'): the write timed once right after its route was replayed to it, as the first
    write of its table in the episode (the copy-on-write copy, cold caches), median over routes
    replayed; this is what a write costs the first time in an episode, shown beside it;
* document and capability search (Payments): the step over the env's read primitive (goal <= 10x:
  the knowledge base and catalogue are indexed once, not rescanned per call);
* reset untouched (right after another reset) and reset after a golden episode played to its end,
  each over the read primitive, and their ratio with every cache warm. A played episode evicts the
  reset's code and data from the core's caches (1 MiB of L2 here), so its control is an untouched
  env of the same id reset right after this one played the same episode: played over that is what
  a reset pays for the episode itself (goal <= 1.2x). Resets are unseeded, as gymnasium recommends
  (seed once, then reset without a seed); the notes give seeded resets too, whose numpy reseeding
  (gymnasium's ``Env.reset``) costs about a third of a reset;
* a reset after the golden episode over an untouched one, per earlier action of the episode (goal <=
  1.5 us), and a reset to a new generated task: the median over fresh seeds of ``reset(seed=s)``
  on an env of its own, each a task generated and its world built, after ten resets to other new
  tasks (a process's first resets pay its one-time costs; ``Bench.reset_new``) (goal <= 1 ms);
* step 1 after an (unseeded) reset (the golden route's first read) over the same call later in the
  episode after another call, and over the same call as a later step of another env right after
  this one's reset (the caches step 1 meets; goal: like any other step, <= 1.2x).

Each env is measured in a process of its own, forked from the bench's (which has imported the package
and built no env): a training process holds one env id, and an env measured after the others in one
process paid for their objects in the garbage collections its own steps trigger (about 1.5 us a write
step on this machine); ``--same-process`` measures them one after another in one process, as before.
Each ratio comes from samples taken in turn with what it is compared to (medians), so load on a
shared machine moves both sides alike. A second table gives user-message steps, scoring, new
generated tasks and memory. Episodes (and Workspace sessions) that end are reset, so every env
runs to the end. Asserts nothing.

    python scripts/bench_envs.py            # about half a minute
    python scripts/bench_envs.py --quick    # about ten seconds
    python scripts/bench_envs.py --same-process   # every env in one process
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gymnasium as gym  # noqa: E402
from benchlib import (  # noqa: E402
    PRIMITIVE_NOTE,
    fmt_time,
    median,
    memory_per_env,
    paired,
    primitive_of,
    primitive_us,
    print_table,
    time_once,
    timed,
)

import servicegym  # noqa: E402

BIG = 10**9
# the lookup read of each env's golden routes, in order of preference
READS = ("get_delivery_store_info", "get_ota_hotel_info", "get_ota_flight_info", "read_document", "read_file",
         "get_user_historical_behaviors")
WRITES = ("pay", "modify", "cancel", "write")
GOALS = {"read": 3.0, "write": 5.0, "search": 10.0, "reset": 1.2, "step1": 1.2}
NEW_TASK_RESET_GOAL = 1e-3  # seconds: a reset to a new generated task
PER_ACTION_GOAL = 1.5e-6  # seconds a reset after an episode may cost per earlier action, over an untouched one
MESSAGE = "Could you tell me a bit more about what you need?"
# an agent's reply of the length LLM agents write (about 1,500 characters), asking nothing
LONG_MESSAGE = " ".join([
    "I looked through the options near the address on your account.",
    "The first place serves set lunches with rice, two vegetables and a soup, and usually delivers in about",
    "thirty minutes; the second one specialises in noodles and dumplings and is a little slower at this hour.",
    "Both prices already include packaging, and the delivery fee depends on the distance from the kitchen.",
] * 4)


def call_name(action: str) -> str | None:
    """``name`` of a single-call action (``call_capability:<capability>`` for payments), else None."""
    try:
        obj = json.loads(action)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or "name" not in obj:
        return None
    if obj["name"] == "call_capability":
        return f"call_capability:{obj['arguments'].get('name')}"
    return obj["name"]


def label_of(name: str, kind: str) -> str | None:
    if name == "call_capability:payouts.create" or name.startswith("pay_"):
        return "pay"
    if kind == "write" and "modify" in name:
        return "modify"
    if kind == "write" and "cancel" in name:
        return "cancel"
    if name in ("search_documents", "search_capabilities"):
        return name
    if name == "call_capability:refunds.create" or (kind == "write" and not name.startswith(("create_", "call_capability"))):
        return "write"
    return None


def find_calls(env: gym.Env, n_tasks: int = 100) -> dict[str, tuple[str, int, str]]:
    """label -> (task id, index in its golden route, action), first occurrence in the test suite."""
    u = env.unwrapped
    found: dict[str, tuple[str, int, str]] = {}
    reads: dict[str, tuple[str, int, str]] = {}
    for tid in u.task_ids("test")[:n_tasks]:
        for i, action in enumerate(u.source.get(tid).golden_actions):
            name = call_name(action)
            if name is None:
                continue
            spec = u.toolkit.resolve(name.split(":")[0])
            if spec is None:
                continue
            if name in READS:
                reads.setdefault(name, (tid, i, action))
            label = label_of(name, spec.kind)
            if label is not None:
                found.setdefault(label, (tid, i, action))
    for name in READS:
        if name in reads:
            found["read"] = reads[name]
            break
    if "search_capabilities" in u.toolkit and "search_capabilities" not in found:  # no golden route searches them
        tid, i, _ = found["read"]
        found["search_capabilities"] = (tid, i, json.dumps({"name": "search_capabilities",
                                                            "arguments": {"query": "payout create"}}))
    return found


class Bench:
    def __init__(self, env_id: str, quick: bool) -> None:
        self.env_id = env_id
        self.env = gym.make(env_id, max_steps=BIG, max_errors=BIG)
        self.u = self.env.unwrapped
        self.quick = quick
        self.calls = find_calls(self.env)
        self._twin: gym.Env | None = None

    def goto(self, tid: str, index: int) -> None:
        """Reset to ``tid`` and replay its golden route's first ``index`` actions."""
        self.env.reset(seed=0, options={"task_id": tid})
        for a in self.u.task.golden_actions[:index]:
            self.step(a)

    def step(self, action: str) -> tuple:
        out = self.env.step(action)
        return out

    def ended(self, out: tuple) -> bool:
        return bool(out[2] or out[3] or "session_end" in out[4])

    # ----- measurements ------------------------------------------------------------------------
    def read(self, reps: int, per_episode: int = 100) -> tuple[float, float, str]:
        tid, i, action = self.calls["read"]
        steps, prims = [], []
        while len(steps) < reps:
            self.goto(tid, i)
            out = self.step(action)  # the first time; the rest is the steady read
            assert not out[4]["tool_errors"], out[0][:300]
            prim = primitive_of(self.env, action)
            prim()
            n = min(per_episode, reps - len(steps))
            p, s = paired(prim, lambda: self.step(action), n, samples=True)
            steps += s
            prims += p
        return median(steps), median(prims), call_name(action)

    def write(self, label: str, reps: int) -> tuple[float, float, str] | None:
        """The write cold: the step at its place in the golden route, replayed to it before each
        sample, and timed once there (with its primitive on a copy of the same state, in turn)."""
        if label not in self.calls:
            return None
        tid, i, action = self.calls[label]
        steps, prims = [], []
        for r in range(reps):
            self.goto(tid, i)
            prim = primitive_of(self.env, action, copy_world=True)
            if r % 2:
                prims.append(time_once(prim))
                t0, out = _timed_step(self.env, action)
            else:
                t0, out = _timed_step(self.env, action)
                prims.append(time_once(prim))
            assert not out[4]["tool_errors"], out[0][:300]
            steps.append(t0)
        return median(steps), median(prims), call_name(action)

    def write_steady(self, label: str, reps: int, per_episode: int = 100) -> tuple[float, float, str] | str | None:
        """The write steady-state, as ``read`` measures a read: the env brought to the write's place
        once per ``per_episode`` samples, the write done once (the cold one, discarded), then repeated
        with every cache warm, the world put back to the state the write found before each sample
        (``WorldState``, outside the timer), paired in turn with its primitive on a copy of that
        state (put back the same way). Each repeat must give the first one's observation and leave
        the world as the first one did, but for its call id and the step number a record keeps
        (Payments' payouts and refunds: the same work, a later step); a write that cannot (one whose
        rules read the history, say) is reported instead of timed: the reason, as a string."""
        if label not in self.calls:
            return None
        tid, i, action = self.calls[label]
        steps, prims = [], []
        while len(steps) < reps:
            self.goto(tid, i)
            world = self.u.world
            before = WorldState(world)
            prim = primitive_of(self.env, action, copy_world=True)
            prim_world = prim.world
            prim_before = WorldState(prim_world)
            first = self.step(action)  # the cold write, discarded (``write`` times it)
            if first[4]["tool_errors"]:
                return f"refused at its place: {first[0][:200]}"
            after = _state_text(world)
            expected = _without_varying(first[0])
            before.keep_changed()
            before.restore()
            if world.state_dict() != before.state:
                return "the world cannot be put back to the state the write found"
            prim()
            prim_before.keep_changed()
            prim_before.restore()
            checks: list[str] = []

            def step(checks: list[str] = checks) -> None:
                checks.append(self.step(action)[0])

            def setup(a: WorldState = before, b: WorldState = prim_before) -> None:
                a.restore()
                b.restore()

            n = min(per_episode, reps - len(steps))
            p, s = paired(prim, step, n, setup=setup, samples=True)
            if any(_without_varying(c) != expected for c in checks):
                bad = next(c for c in checks if _without_varying(c) != expected)
                return f"a repeat differs from the first write: {bad[:200]}"
            if _state_text(world) != after:
                return "a repeat left the world otherwise than the first write"
            steps += s
            prims += p
        return median(steps), median(prims), call_name(action)

    def search(self, label: str, reps: int, read_prim: float) -> tuple[float, str] | None:
        if label not in self.calls:
            return None
        tid, i, action = self.calls[label]
        self.goto(tid, i)
        self.step(action)
        samples = timed(lambda: self.step(action), reps)
        return median(samples) / read_prim, call_name(action)

    def twin(self) -> gym.Env:
        """A second env of the same id: it stays untouched while this one plays, so its reset meets
        the caches an episode left behind without having played one (the control of ``resets`` and
        ``step1``)."""
        if self._twin is None:
            self._twin = gym.make(self.env_id, max_steps=BIG, max_errors=BIG)
        return self._twin

    def resets(self, reps: int, seed: int | None = None) -> tuple[float, float, float, float]:
        """Reset right after a reset (untouched, every cache warm), after a golden episode played
        to its end (played), the twin's untouched reset right after this env played the same
        episode (untouched, the caches the episode left: what played costs beyond it is the
        episode's own), and played again while the bench holds the episode's records (so the reset
        frees none of them: what is left of the difference is not freeing). Unseeded by default,
        as gymnasium recommends (seed once, then reset without one); ``seed``: every reset reseeds."""
        tid, _, _ = self.calls["read"]
        opts = {"task_id": tid}
        twin = self.twin()
        untouched, played, cold, held = [], [], [], []
        self.env.reset(seed=0, options=opts)
        twin.reset(seed=0, options=opts)
        for _ in range(reps):
            self.env.reset(seed=seed, options=opts)
            untouched.append(time_once(lambda: self.env.reset(seed=seed, options=opts)))
            self._play()
            played.append(time_once(lambda: self.env.reset(seed=seed, options=opts)))
            twin.reset(seed=seed, options=opts)
            self._play()
            cold.append(time_once(lambda: twin.reset(seed=seed, options=opts)))
            self.env.reset(seed=seed, options=opts)
            self._play()
            records = dict(vars(self.u))  # the world, history, log, transcript, user, ...
            held.append(time_once(lambda: self.env.reset(seed=seed, options=opts)))
            del records
        return median(untouched), median(played), median(cold), median(held)

    def _play(self) -> None:
        for a in self.u.task.golden_actions:
            out = self.step(a)
        assert out[2] or out[3], "the golden route did not end the episode"

    def step1(self, reps: int, steady: int = 3) -> tuple[float, float, float, float, str]:
        """The first golden read as step 1 of an episode; the same call repeated at once (steps
        2..1+steady: as warm as a step gets); the same call again after another call (the env's
        read: a step in the middle of an episode, where the step before did something else); and
        the same call as step 2 of the twin right after this env's reset (a later step meeting the
        caches a reset leaves, as step 1 does: what step 1 costs beyond it is its own)."""
        tid, _, other = self.calls["read"]
        # the route's first read (a first write also pays the copy-on-write copy of its table)
        first = next(a for a in self.u.source.get(tid).golden_actions
                     if (n := call_name(a)) and (spec := self.u.toolkit.resolve(n)) is not None and spec.kind == "read")
        ones, repeated, later, after_reset = [], [], [], []
        opts = {"task_id": tid}
        twin = self.twin()
        self.env.reset(seed=0, options=opts)
        twin.reset(seed=0, options=opts)
        for _ in range(reps):
            self.env.reset(options=opts)  # unseeded, as resets() (a seeded one adds numpy's reseeding before step 1)
            t, out = _timed_step(self.env, first)
            assert not out[4]["tool_errors"], out[0][:300]
            ones.append(t)
            repeated.append(median(timed(lambda: self.step(first), steady)))
            self.step(other)
            later.append(_timed_step(self.env, first)[0])
            twin.reset(options=opts)
            twin.step(other)
            self.env.reset(options=opts)
            t, out = _timed_step(twin, first)
            assert "<tool_error" not in out[0], out[0][:300]
            after_reset.append(t)
        return median(ones), median(repeated), median(later), median(after_reset), call_name(first)

    def message(self, reps: int, text: str = MESSAGE) -> float:
        tid, _, _ = self.calls["read"]
        samples: list[float] = []
        self.env.reset(seed=0, options={"task_id": tid})
        while len(samples) < reps:
            t, out = _timed_step(self.env, text)
            samples.append(t)
            if self.ended(out):
                self.env.reset(seed=0, options={"task_id": tid})  # a new episode (Workspace: from session 1)
        return median(samples)

    def scoring(self, reps: int) -> float:
        tid, _, _ = self.calls["read"]
        self.env.reset(seed=0, options={"task_id": tid})
        golden = self.u.task.golden_actions
        if "Workspace" in self.env_id:  # a session's closing: score() closes the current session
            golden = golden[: next(i for i, a in enumerate(golden) if call_name(a)) + 1]
        else:
            golden = golden[:-1]
        for a in golden:
            self.step(a)
        view = self.u.episode_view()
        task = self.u.task
        return median(timed(lambda: self.u.score(task, view), reps))

    def reset_new(self, reps: int, warmup: int = 10) -> float:
        """Median of ``reset(seed=s)`` over ``reps`` fresh seeds on an env of its own, after
        ``warmup`` resets to other new tasks (seeds outside the timed range): a process's first
        resets of an env pay once what no later task pays again (Workspace: a first reset of
        about 150 ms, its modules and each persona's tools and argument checks made, then about
        a reset per persona a little slower), which in a run of thousands of episodes is not a
        new task's cost."""
        env = gym.make(self.env_id)
        for s in range(40_000, 40_000 + warmup):
            env.reset(seed=s)
        return median([time_once(lambda s=s: env.reset(seed=s)) for s in range(50_000, 50_000 + reps)])


class WorldState:
    """What a write may change in a world, taken once outside the timer and put back before each
    steady-state sample: every table's rows (their order too), stamp and start (``Table.base``),
    the id counters, the clock and ``extra``. Rows are immutable, so the saved dicts hold the very
    row objects; a table put back keeps its own row dict (a write's first change of a shared table
    copies it once: the later samples find it owned, as any later write of an episode does) and
    gets its stamp back, so text cached for those rows stays valid, as it is for the same content.
    Lazy tables are made first (a steady state has read them)."""

    def __init__(self, world) -> None:
        self.world = world
        self.tables = []
        for t in world.tables.values():
            rows = t.rows  # makes a lazy table
            self.tables.append((t, dict(rows), list(rows), t.stamp, t.base))
        self.counts = dict(world.ids.counts)
        self.now = world.clock.now
        self.extra = dict(world.extra)
        self.state = world.state_dict()

    def keep_changed(self) -> None:
        """Put back only the tables changed since this state was taken (by the first write: a
        repeat that changes another is caught by the caller's check of the world it leaves), so
        that putting back touches no more of the world than the write did."""
        self.tables = [entry for entry in self.tables if entry[0].stamp != entry[3]]

    def restore(self) -> None:
        w = self.world
        for t, rows, keys, stamp, base in self.tables:
            if t.stamp != stamp:
                cur = t.rows
                if len(cur) == len(rows) and list(cur) == keys:
                    for k, v in rows.items():
                        if cur[k] is not v:
                            cur[k] = v
                else:
                    cur.clear()
                    cur.update(rows)
                t.stamp, t.base = stamp, base
        if w.ids.counts != self.counts:
            w.ids.counts = dict(self.counts)
        if w.clock.now != self.now:
            w.clock.now = self.now
        if w.extra != self.extra:
            w.extra = dict(self.extra)


# what differs between repeats of one write by design: the call id, and the step number a record
# keeps (Payments: ``"step": 36`` in a payout, a refund, their ledger entries)
_VARYING = re.compile(r'call_id="[^"]*"|"(?:step|requested_step)": \d+')


def _without_varying(obs: str) -> str:
    return _VARYING.sub("", obs)


def _state_text(world) -> str:
    """The world's state as text, what varies between repeats of a write taken out."""
    return _without_varying(json.dumps(world.state_dict(), sort_keys=True, default=str))


def _timed_step(env: gym.Env, action: str) -> tuple[float, tuple]:
    import time

    t = time.perf_counter()
    out = env.step(action)
    return time.perf_counter() - t, out


def x(v: float | None, goal: float | None = None) -> str:
    if v is None:
        return "-"
    mark = "" if goal is None or v <= goal else " (over)"
    return f"{v:.1f}x{mark}" if v >= 10 else f"{v:.2f}x{mark}"


def measure(env_id: str, q: bool, reads: int, writes: int, resets: int, firsts: int) -> tuple[list[Any], ...]:
    """One env's rows and notes (the tables' rows, the notes, the fixed primitive taken before and after it)."""
    main_rows: list[Any] = []
    other_rows: list[Any] = []
    notes: list[str] = []
    fixed_rows: list[Any] = []
    fixed_samples = [primitive_us() * 1e-6]
    b = Bench(env_id, q)
    name = env_id.split("/")[1]
    step, prim, read_name = b.read(reads)
    w = {lab: b.write(lab, writes) for lab in WRITES}  # cold
    ws = {lab: b.write_steady(lab, reads // 3) for lab in WRITES}  # steady-state: the goal's
    s = {lab: b.search(lab, max(50, reads // 10), prim) for lab in ("search_documents", "search_capabilities")}
    n = resets if "Workspace" not in env_id else max(5, resets // 3)
    untouched, played, cold, held = b.resets(n)
    s_untouched, s_played, s_cold, _ = b.resets(n, seed=0)
    one, steady, later, after_reset, first_name = b.step1(firsts if "Workspace" not in env_id else firsts // 3)
    wcells, wcold = [], []
    for lab in WRITES:
        r, rs = w[lab], ws[lab]
        if isinstance(rs, str):
            notes.append(f"{name} {lab}: {r[2]} not timed steady-state: {rs}")
            rs = ws[lab] = None
        wcells.append("-" if rs is None else x(rs[0] / rs[1], GOALS["write"]))
        wcold.append("-" if r is None else x(r[0] / r[1]))
        if r is not None:
            notes.append(f"{name} {lab}: {r[2]} steady-state "
                         f"{'-' if rs is None else fmt_time(rs[0])} vs primitive {'-' if rs is None else fmt_time(rs[1])}; "
                         f"cold {fmt_time(r[0])} vs primitive {fmt_time(r[1])}")
    scells = ["-" if s[lab] is None else x(s[lab][0], GOALS["search"]) for lab in ("search_documents", "search_capabilities")]
    fixed_samples.append(primitive_us() * 1e-6)  # again beside the env: load moves it
    fixed = median(fixed_samples[-2:])
    fixed_rows.append([name, fmt_time(fixed), f"{fmt_time(step)} ({x(step / fixed, GOALS['read'])})",
                       *["-" if ws[lab] is None else f"{fmt_time(ws[lab][0])} ({x(ws[lab][0] / fixed, GOALS['write'])})"
                         for lab in WRITES],
                       *["-" if w[lab] is None else f"{fmt_time(w[lab][0])} ({x(w[lab][0] / fixed)})"
                         for lab in WRITES],
                       *["-" if s[lab] is None else f"{x(s[lab][0] * prim / fixed, GOALS['search'])}"
                         for lab in ("search_documents", "search_capabilities")]])
    main_rows.append([name, fmt_time(prim), x(step / prim, GOALS["read"]), *wcells, *wcold, *scells,
                      x(untouched / prim), x(played / prim), x(played / untouched), x(played / cold, GOALS["reset"]),
                      x(one / later), x(one / after_reset, GOALS["step1"])])
    notes.append(f"{name} read: {read_name} {fmt_time(step)} (the env's own work: {fmt_time(step - prim)}); step 1: "
                 f"{first_name} {fmt_time(one)}, repeated at once {fmt_time(steady)}, later {fmt_time(later)}, "
                 f"later after a reset {fmt_time(after_reset)}; resets {fmt_time(untouched)} untouched, "
                 f"{fmt_time(played)} after a golden episode of {len(b.u.task.golden_actions)} actions, "
                 f"{fmt_time(cold)} untouched after the same episode played by another env, {fmt_time(held)} after "
                 f"the episode with its records held by the bench ({held / cold:.2f}x); seeded every time: "
                 f"{fmt_time(s_untouched)}, {fmt_time(s_played)} and {fmt_time(s_cold)} "
                 f"({s_played / s_untouched:.2f}x, {s_played / s_cold:.2f}x)")
    n_actions = len(b.u.task.golden_actions)
    per_action, per_action_cold = (played - untouched) / n_actions, (played - cold) / n_actions
    notes.append(f"{name} reset after a golden episode, per earlier action ({n_actions} actions): "
                 f"{per_action * 1e6:+.2f} us over the untouched reset, {per_action_cold * 1e6:+.2f} us over the "
                 f"untouched one with the same caches (goal <= {PER_ACTION_GOAL * 1e6:g} us)")
    msg = b.message(max(50, reads // 10))
    long_msg = b.message(max(50, reads // 10), LONG_MESSAGE)
    score = b.scoring(max(30, reads // 30))
    new = b.reset_new(max(30, resets * 2))
    mem = memory_per_env(10, lambda i, e=env_id: gym.make(e))
    other_rows.append([name, f"{fmt_time(msg)} ({x(msg / prim)})", f"{fmt_time(long_msg)} ({x(long_msg / prim)})",
                       f"{fmt_time(score)} ({x(score / prim)})",
                       f"{fmt_time(new)} ({x(new / prim)}){' (over)' if new > NEW_TASK_RESET_GOAL else ''}",
                       f"{per_action * 1e6:.2f} us / {per_action_cold * 1e6:.2f} us"
                       f"{' (over)' if per_action_cold > PER_ACTION_GOAL else ''}",
                       f"{mem / 2**20:.3f}"])
    print(f"  {name} done", file=sys.stderr)
    return main_rows, other_rows, notes, fixed_rows, fixed_samples


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (about half a minute)")
    ap.add_argument("--env", action="append", help="only this env id (repeatable)")
    ap.add_argument("--same-process", action="store_true",
                    help="measure every env in this process, one after another (by default each env is measured in a "
                         "process of its own)")
    args = ap.parse_args(argv)
    q = args.quick
    reads, writes, resets, firsts = (600, 60, 15, 60) if q else (3000, 300, 60, 300)
    ids = args.env or sorted(servicegym.ENV_IDS)
    main_rows, other_rows, notes, fixed_rows = [], [], [], []
    fixed_samples: list[float] = []
    # each env in a process of its own (forked from this one, which has imported the package and built
    # nothing): a training process holds one env id, and an env measured after others in one process pays
    # for their objects in every garbage collection its steps trigger (about 1.5 us a write step here)
    ctx = multiprocessing.get_context("fork") if not args.same_process else None
    for env_id in ids:
        if ctx is None:
            out = measure(env_id, q, reads, writes, resets, firsts)
        else:
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
                out = pool.submit(measure, env_id, q, reads, writes, resets, firsts).result()
        for acc, part in zip((main_rows, other_rows, notes, fixed_rows, fixed_samples), out):
            acc.extend(part)

    print(f"servicegym env benchmark ({'quick' if q else 'full'} run, python {sys.version.split()[0]})")
    print(f"fixed primitive (../shared/tools/primitive.py, verbatim): {fmt_time(median(fixed_samples))} median of "
          f"{len(fixed_samples)} measurements in this run ({fmt_time(min(fixed_samples))}-{fmt_time(max(fixed_samples))});"
          " each env's row divides by the two taken beside it")
    print_table(["env", "fixed primitive", "read step", "pay", "modify", "cancel", "other write", "pay cold",
                 "modify cold", "cancel cold", "other write cold", "doc search", "cap search"], fixed_rows)
    print("goals (x the fixed primitive): read step <= 3x, pay/modify/cancel <= 5x (steady-state, measured as reads "
          "are; 'cold': the write timed once after its route replayed, shown beside it), search <= 10x\n")
    print("Peer: the same call done bare")
    print(PRIMITIVE_NOTE)
    print("ratios are to the primitive of the env's read call (the 'read prim' column), but for writes (to the primitive of "
          "the same write) and the last four columns (reset to reset, step to step).\n"
          "writes: steady-state (the goal's: the write repeated at its place, the world put back before each sample "
          "outside the timer, as reads are repeated) and cold (timed once after its route was replayed).\n"
          "'played / untouched': a reset after a golden episode over one right after a reset, every cache warm; "
          "'... same caches': over an untouched env's reset right after another env played the same episode (the "
          "caches an episode leaves, without its records): what a reset pays for the episode itself.\n"
          "'step 1 / later': the same call later in the episode, after another call; '... same caches': the same call "
          "as a later step right after another env's reset, the caches step 1 meets: what step 1 pays for being first\n")
    print_table(["env", "read prim", "read step", "pay", "modify", "cancel", "other write", "pay cold",
                 "modify cold", "cancel cold", "other write cold", "doc search",
                 "cap search", "reset untouched", "reset played", "played / untouched", "... same caches",
                 "step 1 / later", "... same caches"], main_rows)
    print("goals: " + ", ".join(f"{k} <= {v:g}x" for k, v in (("read step", 3), ("pay/modify/cancel", 5),
                                                                ("search (x read prim)", 10),
                                                                ("played/untouched, same caches", 1.2),
                                                                ("step 1 / a later step, same caches", 1.2))))
    print()
    for n in notes:
        print("  " + n)
    print()
    print_table(["env", "user message step", f"... of {len(LONG_MESSAGE):,} characters", "scoring a finished episode",
                 "reset, new generated task", "reset after an episode, per earlier action", "MB per env"],
                other_rows)
    print(f"goals: reset to a new generated task <= {NEW_TASK_RESET_GOAL * 1e3:g} ms (median of fresh seeds, each a task "
          f"generated and its world built); a reset after a golden episode <= {PER_ACTION_GOAL * 1e6:g} us per earlier "
          "action over an untouched one (shown: over the reset right after a reset / over the untouched env's reset "
          "with the caches the episode left, the control the goal is marked against, as for 'played / untouched')")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
