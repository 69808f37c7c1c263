"""Load on the OpenEnv server (``servicegym serve``) over loopback: many concurrent WebSocket
sessions, each playing ``--episodes`` oracle episodes one after another (the task's golden route
as raw completions), against ``--servers`` server processes behind the client's round-robin pool.

Figures: steps per second over all sessions; the median and 99th-percentile step latency (a
round trip: send the action, get the observation), absolute and as a ratio to the median
in-process ``env.step`` of the same episodes, unloaded (one session) and under the full load;
the servers' memory per open session (resident set after every session has reset, less before);
and that nothing is lost (every episode completes with reward 1.0). The client (one asyncio
process) and the servers share the machine's cores.

    python scripts/bench_server.py [--env ID] [--sessions 256] [--episodes 4] [--servers 1] [--json OUT]
    python scripts/bench_server.py --quick     # 16 sessions, the server in a thread: about 10 s

Prints figures from one run; compare ratios, not absolute numbers, across machines.

Idle sessions (``--idle N``): one server process, ``N`` WebSocket sessions opened against it on
127.0.0.1 and left silent; prints the server's memory per idle session (its resident set with
every session open, less before, divided by ``N``; the issue's bound is 32 KiB), then, with
``--idle-timeout S``, waits for the server to close them all as idle and counts the close codes
and reasons the clients got. ``--idle-reset`` sends each session a reset first (each then holds an
env: the memory of a session between two episodes).

    python scripts/bench_server.py --idle 5000                       # about 30 s
    python scripts/bench_server.py --idle 5000 --idle-timeout 20     # and all closed as idle
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_kib(pid: int) -> int:
    """Resident set of a process (Linux /proc), KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def in_process_steps(env_id: str, jobs: list[tuple[str, int]], routes: dict[str, list[str]]) -> list[float]:
    """Seconds of each ``env.step`` of the jobs' oracle episodes, in this process (user tool on,
    as on the server)."""
    import gymnasium as gym

    env = gym.make(env_id, user_tool=True)
    times = []
    for task_id, seed in jobs:
        env.reset(seed=seed, options={"task_id": task_id})
        for action in routes[task_id]:
            t0 = time.perf_counter()
            *_, term, trunc, _ = env.step(action)
            times.append(time.perf_counter() - t0)
            if term or trunc:
                break
    return times


def start_servers(env_id: str, n: int, max_sessions: int, extra: list[str] | None = None
                  ) -> list[tuple[subprocess.Popen, str]]:
    procs = [subprocess.Popen([sys.executable, "-m", "servicegym.envs.cli.main", "serve", "--env", env_id, "--port", "0",
                               "--max-sessions", str(max_sessions), *(extra or [])], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, cwd=ROOT) for _ in range(n)]
    out = []
    for proc in procs:
        line = proc.stdout.readline()
        if " on http://" not in line:
            raise SystemExit(f"a server did not start: {line}{proc.stdout.read() if proc.poll() is not None else ''}")
        out.append((proc, line.split(" on ")[1].split(" ")[0]))
    return out


def stop_servers(servers: list[tuple[subprocess.Popen, str]]) -> list[int]:
    for proc, _ in servers:
        proc.send_signal(signal.SIGTERM)
    codes = []
    for proc, _ in servers:
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        codes.append(proc.returncode)
    return codes


async def load(urls: list[str], sessions: list[list[tuple[str, int]]], routes: dict[str, list[str]],
               pids: list[int]) -> dict:
    """Every session at once: all reset to their first episode, then (memory read) each plays its
    episodes' routes one after another (a reset between them)."""
    from servicegym.envs.integrations.openenv.client import SessionPool

    pool = SessionPool(urls, message_timeout_s=600.0)
    clients = [pool.client() for _ in sessions]
    before = sum(rss_kib(p) for p in pids)
    await asyncio.gather(*(c.connect() for c in clients))
    await asyncio.gather(*(c.reset(seed=eps[0][1], task_id=eps[0][0]) for c, eps in zip(clients, sessions)))
    after = sum(rss_kib(p) for p in pids)
    latencies: list[float] = []
    finished: list[float] = []

    async def play(client, episodes: list[tuple[str, int]]) -> None:
        for k, (task_id, seed) in enumerate(episodes):
            if k:
                await client.reset(seed=seed, task_id=task_id)
            result = None
            for action in routes[task_id]:
                t0 = time.perf_counter()
                result = await client.act(action)
                latencies.append(time.perf_counter() - t0)
                if result.done:
                    break
            if result is not None and result.done:
                finished.append(float(result.reward or 0.0))

    t0 = time.perf_counter()
    results = await asyncio.gather(*(play(c, eps) for c, eps in zip(clients, sessions)), return_exceptions=True)
    wall = time.perf_counter() - t0
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    return {"latencies": latencies, "wall_s": wall, "rss_before_kib": before, "rss_after_kib": after,
            "completed": sum(r == 1.0 for r in finished), "errors": [repr(e)[:200] for e in errors[:3]],
            "opened": dict(pool.opened)}


async def open_idle(url: str, n: int, reset: bool, batch: int = 250) -> list:
    """``n`` WebSocket sessions on ``url``, opened ``batch`` at a time (each sent a reset when
    ``reset``); returns the open connections."""
    from websockets.asyncio.client import connect

    ws_url = url.replace("http", "ws", 1) + "/ws"

    async def one():
        ws = await connect(ws_url, proxy=None, max_size=None, ping_interval=None, open_timeout=120)
        if reset:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            reply = json.loads(await ws.recv())
            if reply.get("type") == "error":
                raise RuntimeError(f"reset refused: {reply['data']}")
        return ws

    conns: list = []
    for start in range(0, n, batch):
        conns.extend(await asyncio.gather(*(one() for _ in range(min(batch, n - start)))))
    return conns


def sessions_of(url: str) -> dict:
    import urllib.request

    with urllib.request.urlopen(url + "/sessions", timeout=30) as reply:
        return json.loads(reply.read())


async def idle_load(url: str, pid: int, n: int, reset: bool, timeout_s: float | None) -> dict:
    """Memory of ``n`` idle sessions on the server ``pid``; with ``timeout_s`` (the server's idle
    limit), also how the server closed them."""
    from collections import Counter

    conns = await open_idle(url, 1, True)  # warm: the first session loads the suite
    await conns[0].close()
    for _ in range(100):  # the warm session's close has been handled
        if sessions_of(url)["active"] == 0:
            break
        await asyncio.sleep(0.05)
    before = rss_kib(pid)
    t0 = time.perf_counter()
    conns = await open_idle(url, n, reset)
    opened_s = time.perf_counter() - t0
    await asyncio.sleep(1.0)  # let the server settle (the last handshakes' buffers)
    after = rss_kib(pid)
    active = sessions_of(url)["active"]
    out = {"sessions": n, "reset": reset, "active": active, "rss_before_kib": before, "rss_after_kib": after,
           "kib_per_session": (after - before) / n, "open_s": opened_s}
    if timeout_s is not None:
        t0 = time.perf_counter()
        await asyncio.gather(*(ws.wait_closed() for ws in conns))
        out["closed_after_s"] = time.perf_counter() - t0
        out["close_codes"] = dict(Counter(f"{ws.close_code} {ws.close_reason}" for ws in conns))
        await asyncio.sleep(0.5)
        out["active_after_close"] = sessions_of(url)["active"]
    else:
        await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    return out


def idle_main(args: argparse.Namespace) -> int:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.idle + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))  # the server inherits it
    extra = ["--idle-timeout", str(args.idle_timeout or 86400.0)]
    servers = start_servers(args.env, 1, args.idle + 16, extra)
    (proc, url), = servers
    try:
        r = asyncio.run(idle_load(url, proc.pid, args.idle, args.idle_reset, args.idle_timeout))
    finally:
        codes = stop_servers(servers)
    what = "reset once, then silent" if args.idle_reset else "opened, never sent anything"
    print(f"bench_server --idle: {args.env}, {r['sessions']} idle WebSocket sessions ({what}) on one server on "
          f"127.0.0.1, opened in {r['open_s']:.1f} s; the server counts {r['active']} open")
    print(f"memory: {r['kib_per_session']:.1f} KiB per idle session (server resident set {r['rss_before_kib'] / 1024:.0f} "
          f"-> {r['rss_after_kib'] / 1024:.0f} MiB)")
    if args.idle_timeout is not None:
        print(f"idle limit {args.idle_timeout:g} s: every session closed {r['closed_after_s']:.1f} s after the last "
              f"opened; close codes and reasons {r['close_codes']}; open afterwards {r['active_after_close']}")
    print(f"server stopped with exit code {codes[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps({**r, "env_id": args.env, "server_exit_code": codes[0]}, indent=2))
    ok = r["active"] == args.idle and codes[0] == 0
    if args.idle_timeout is not None:
        ok = ok and r["active_after_close"] == 0
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 16 sessions, one episode each, the servers in threads of this process")
    ap.add_argument("--env", default="servicegym/Delivery-v0")
    ap.add_argument("--sessions", type=int, default=256, help="concurrent sessions")
    ap.add_argument("--episodes", type=int, default=4, help="oracle episodes each session plays, one after another")
    ap.add_argument("--servers", type=int, default=1, help="server processes (the client spreads sessions in turn)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ap.add_argument("--idle", type=int, default=None, metavar="N",
                    help="instead: open N silent sessions and print the server's memory per idle session")
    ap.add_argument("--idle-reset", action="store_true", help="with --idle: reset each session once first")
    ap.add_argument("--idle-timeout", type=float, default=None, metavar="S",
                    help="with --idle: the server's idle limit; wait for it to close every session")
    args = ap.parse_args(argv)
    if args.idle is not None:
        if args.idle < 1:
            ap.error("--idle must be at least 1")
        if args.idle_timeout is not None and not args.idle_timeout > 0:
            ap.error("--idle-timeout must be positive")
        try:
            import openenv.core.env_server.http_server  # noqa: F401
        except ImportError:
            print("bench_server: skipped: openenv is not installed (pip install 'servicegym[server]')")
            return 0
        return idle_main(args)
    if args.sessions < 1 or args.servers < 1 or args.episodes < 1:
        ap.error("--sessions, --servers and --episodes must be at least 1")
    try:
        import openenv.core.env_server.http_server  # noqa: F401
    except ImportError:
        print("bench_server: skipped: openenv is not installed (pip install 'servicegym[server]')")
        return 0
    import gymnasium as gym

    import servicegym  # noqa: F401  registers the ids

    sessions, per = (16, 1) if args.quick else (args.sessions, args.episodes)
    local = gym.make(args.env, user_tool=True).unwrapped
    suite = local.task_ids("test")
    plan = [[(suite[(i + k * sessions) % len(suite)], i + k * sessions) for k in range(per)] for i in range(sessions)]
    jobs = [job for eps in plan for job in eps]
    # unloaded: one session at a time (also warms every server: a first reset loads the suite)
    warm = [[(suite[k % len(suite)], 10_000 + k)] for k in range(max(args.servers, 4))]
    routes = {t: list(local.source.get(t).golden_actions) for t, _ in [*jobs, *(e[0] for e in warm)]}

    local_steps = in_process_steps(args.env, jobs, routes)
    where = "threads of this process" if args.quick else "processes"
    print(f"bench_server: {args.env}, {sessions} sessions x {per} oracle episodes, {args.servers} server(s) in {where}, "
          f"{os.cpu_count()} cores (client and servers share them)")
    if args.quick:  # no other interpreter to start: the servers run in threads of this one
        from contextlib import ExitStack

        from servicegym.envs.integrations.openenv.server import serve_in_thread

        with ExitStack() as stack:
            running = [stack.enter_context(serve_in_thread(args.env, max_sessions=sessions)) for _ in range(args.servers)]
            urls, pids = [r.url for r in running], [os.getpid()]
            warm_runs = [asyncio.run(load(urls, [eps], routes, pids)) for eps in warm]
            full = asyncio.run(load(urls, plan, routes, pids))
        return report(args, sessions, jobs, local_steps, warm_runs, full, [0] * args.servers)
    servers = start_servers(args.env, args.servers, sessions)
    urls = [u for _, u in servers]
    pids = [p.pid for p, _ in servers]
    try:
        warm_runs = [asyncio.run(load(urls, [eps], routes, pids)) for eps in warm]
        full = asyncio.run(load(urls, plan, routes, pids))
    finally:
        codes = stop_servers(servers)
    return report(args, sessions, jobs, local_steps, warm_runs, full, codes)


def report(args: argparse.Namespace, sessions: int, jobs: list[tuple[str, int]], local_steps: list[float],
           warm_runs: list[dict], full: dict, codes: list[int]) -> int:
    local_med = statistics.median(local_steps)
    local_rate = len(local_steps) / sum(local_steps)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchlib import reference_primitive

    prim = reference_primitive()
    print(f"in-process env.step: median {local_med * 1e3:.3f} ms, p99 {pct(local_steps, 0.99) * 1e3:.3f} ms "
          f"over {len(local_steps)} steps ({local_rate:.0f} steps/s on one core, no client); "
          f"{local_med / prim:.1f}x the primitive ({prim * 1e6:.1f} us, a bare get_delivery_store_info: scripts/benchlib.py)")
    lat1 = [x for r in warm_runs for x in r["latencies"]]
    lat = full["latencies"]
    steps = len(lat)
    per_session_kib = (full["rss_after_kib"] - full["rss_before_kib"]) / sessions
    lost = len(jobs) - full["completed"]
    figures = {
        "env_id": args.env, "sessions": sessions, "episodes": len(jobs), "servers": args.servers,
        "in_threads": bool(args.quick), "cores": os.cpu_count(),
        "in_process_step_ms": {"median": local_med * 1e3, "p99": pct(local_steps, 0.99) * 1e3},
        "in_process_steps_per_s": local_rate,
        "one_session_step_ms": {"median": statistics.median(lat1) * 1e3, "p99": pct(lat1, 0.99) * 1e3},
        "loaded_step_ms": {"median": statistics.median(lat) * 1e3, "p99": pct(lat, 0.99) * 1e3},
        "steps": steps, "wall_s": full["wall_s"], "steps_per_s": steps / full["wall_s"],
        "episodes_per_s": full["completed"] / full["wall_s"],
        "memory_per_session_kib": per_session_kib, "server_rss_mib": full["rss_after_kib"] / 1024,
        "completed": full["completed"], "lost": lost, "errors": full["errors"], "sessions_per_server": full["opened"],
        "server_exit_codes": codes,
    }
    one, loaded = figures["one_session_step_ms"], figures["loaded_step_ms"]
    print(f"one session:  step latency median {one['median']:.2f} ms ({one['median'] / (local_med * 1e3):.1f}x "
          f"in-process), p99 {one['p99']:.2f} ms ({one['p99'] / (local_med * 1e3):.1f}x)")
    print(f"{sessions} sessions: {steps} steps in {full['wall_s']:.2f} s = {figures['steps_per_s']:.0f} steps/s "
          f"({figures['episodes_per_s']:.1f} episodes/s); step latency median {loaded['median']:.1f} ms "
          f"({loaded['median'] / (local_med * 1e3):.0f}x in-process), p99 {loaded['p99']:.1f} ms "
          f"({loaded['p99'] / (local_med * 1e3):.0f}x)")
    print(f"memory: {per_session_kib:.0f} KiB per open session (resident set {figures['server_rss_mib']:.0f} MiB "
          f"with {sessions} open{', the client included' if args.quick else ''}); sessions per server "
          f"{sorted(full['opened'].values())}")
    print(f"episodes completed with reward 1.0: {full['completed']} of {len(jobs)}; lost {lost}"
          + (f"; errors {full['errors']}" if full["errors"] else ""))
    if not args.quick:
        print(f"servers stopped with exit codes {codes}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if lost == 0 and all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
