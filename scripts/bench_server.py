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

Against openenv's own echo env (``--compare``): our server (one process) and openenv's echo env
(the env ``openenv init`` generates from openenv's template, served by openenv's ``create_app``
under uvicorn, one process) started side by side and driven by one raw WebSocket client (one
connection per session, JSON text frames, replies parsed whole) with the same load: at each level
of ``--levels`` (default 16, 64, 256 concurrent sessions) every session plays oracle episodes (a
reset, then the golden route's steps; the echo env gets the same resets and, as its ``message``,
the same action texts). Runs alternate between the two servers, ``--rounds`` of each per level;
prints per level both servers' steps per second (median over rounds), their ratio (the median of
the rounds' ratios, each of two runs back to back; the issue's bound: at least 0.9), the p99 and
median step latency, and each server's CPU time per step (and the client's: the same client reads
our larger replies).

The ratio compares the two servers on the machine's cores, but the cores may be shared with other
work (a test run on a development machine takes a whole core now and then). So during each run the
bench measures what other processes take (the machine's busy CPU time from ``/proc/stat`` less its
own processes', in cores); before each pair it waits (``--quiet-wait`` seconds in all, default 120)
until they take under ``--quiet-below`` cores (default 0.25); and it reports the ratio, the steps
per second, latencies and CPU over the quiet pairs (other processes under ``--quiet-below`` during
both runs), the all-pairs ratio and the others' median share beside them. A pair with a core taken
measures client and server sharing the other core: steps per second are then 1 / (server + client
CPU per step), a different comparison (pinning the bench to one core with ``taskset -c 1`` shows it).

    python scripts/bench_server.py --compare [--levels 16,64,256] [--rounds 5] [--steps 3000]   # about 1 min
    python scripts/bench_server.py --compare --client aiohttp   # the same load from aiohttp's C frame reader
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


def cpu_s(pid: int) -> float:
    """CPU time (user and system) a process has used so far (Linux /proc), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU seconds the machine's cores have spent busy so far, all of them together (Linux
    ``/proc/stat``: user, nice, system, irq, softirq and steal; not idle or iowait)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


class OtherWork:
    """How much of the machine other processes use: ``mark()``, then ``cores()`` is the CPU the
    machine spent since the mark, less this process's and the ``pids``' (the bench's servers),
    per second of wall time: 1.0 is a whole core taken by someone else."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.mark()

    def _ours(self) -> float:
        return time.process_time() + sum(cpu_s(p) for p in self.pids)

    def mark(self) -> None:
        self.t, self.busy, self.own = time.perf_counter(), machine_busy_s(), self._ours()

    def cores(self) -> float:
        wall = time.perf_counter() - self.t
        return max(0.0, (machine_busy_s() - self.busy) - (self._ours() - self.own)) / max(wall, 1e-9)


def wait_quiet(other: OtherWork, threshold: float, budget_s: float, window_s: float = 0.5) -> tuple[float, float]:
    """Wait (at most ``budget_s``) until other processes use less than ``threshold`` cores over a
    ``window_s`` window; returns (their last measured use in cores, seconds waited)."""
    t0 = time.perf_counter()
    while True:
        other.mark()
        time.sleep(window_s)
        used = other.cores()
        waited = time.perf_counter() - t0
        if used < threshold or waited + window_s > budget_s:
            return used, waited


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


# ----- --compare: our server against openenv's echo env, one client ---------------------------------
ECHO_NAMES = {"__ENV_CLASS_NAME__": "Echo", "__ENV_TITLE_NAME__": "Echo Env", "__ENV_NAME__": "echo_env"}


def render_echo_env(into: Path) -> Path:
    """openenv's echo env as ``openenv init echo_env`` writes it (the template's models and
    environment, placeholders replaced as its init replaces them) in package ``echo_env`` under
    ``into``; returns ``into``."""
    import openenv

    template = Path(openenv.__file__).parent / "cli" / "templates" / "openenv_env"
    pkg = into / "echo_env"
    (pkg / "server").mkdir(parents=True, exist_ok=True)

    def render(src: Path, dst: Path) -> None:
        text = src.read_text()
        for old, new in sorted(ECHO_NAMES.items(), key=lambda kv: -len(kv[0])):
            text = text.replace(old, new)
        dst.write_text(text)

    render(template / "models.py", pkg / "models.py")
    render(template / "server" / "__ENV_NAME___environment.py", pkg / "server" / "echo_env_environment.py")
    (pkg / "__init__.py").write_text("")
    (pkg / "server" / "__init__.py").write_text("")
    return into


def serve_echo(max_sessions: int) -> int:
    """Serve openenv's echo env on 127.0.0.1 (any free port) with openenv's ``create_app`` and
    uvicorn's defaults (access log off, as ours), ``max_sessions`` concurrent sessions; prints the
    URL as ``servicegym serve`` does, then serves until SIGTERM."""
    import tempfile

    import uvicorn
    from openenv.core.env_server.http_server import create_app

    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, str(render_echo_env(Path(tmp))))
        from echo_env.models import EchoAction, EchoObservation  # type: ignore[import-not-found]
        from echo_env.server.echo_env_environment import EchoEnvironment  # type: ignore[import-not-found]

        app = create_app(EchoEnvironment, EchoAction, EchoObservation, env_name="echo_env",
                         max_concurrent_envs=max_sessions)
        from servicegym.envs.integrations.openenv.server import bind_socket

        sock = bind_socket("127.0.0.1", 0)
        host, port = sock.getsockname()[:2]
        print(f"openenv echo env on http://{host}:{port} (ws /ws)", flush=True)
        uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        for sig in (signal.SIGINT, signal.SIGTERM):  # uvicorn raises the stopping signal again: a stop is a normal end
            signal.signal(sig, lambda *_: None)
        uv.run(sockets=[sock])
    return 0


def start_echo(max_sessions: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve-echo", "--max-sessions",
                             str(max_sessions)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if " on http://" not in line:
        raise SystemExit(f"the echo server did not start: {line}{proc.stdout.read() if proc.poll() is not None else ''}")
    return proc, line.split(" on ")[1].split(" ")[0]


def _json_codec() -> tuple:
    try:
        import orjson

        return orjson.dumps, orjson.loads
    except ImportError:  # the same client for both servers either way (json.loads reads UTF-8 bytes too)
        return (lambda obj: json.dumps(obj).encode()), json.loads


class _AiohttpSocket:
    """An aiohttp client WebSocket with the two calls ``drive`` makes of a ``websockets`` one."""

    def __init__(self, ws) -> None:
        self.ws = ws

    async def send(self, text: str) -> None:
        await self.ws.send_str(text)

    async def recv(self, decode: bool = False) -> str:
        msg = await self.ws.receive()
        if not isinstance(msg.data, str):
            raise RuntimeError(f"the connection ended: {msg.type} {msg.data} {msg.extra}")
        return msg.data

    async def close(self) -> None:
        await self.ws.close()


async def drive(url: str, plan: list[list[tuple[dict, list[dict]]]], client: str = "websockets") -> dict:
    """The raw client of ``--compare``: one WebSocket per session of ``plan`` (per session, its
    episodes: a reset message and the step messages), all at once; every reply parsed. ``client``:
    the WebSocket library, ``websockets`` (the project's) or ``aiohttp`` (whose frame reader is
    in C: less of the shared cores goes to the client). Returns the step latencies, the wall time
    of the steps (connects and first resets outside it), the episodes that ended done with reward
    1.0, the errors and the length of every reply (the first resets' too)."""
    dumps, loads = _json_codec()
    ws_url = url.replace("http", "ws", 1) + "/ws"
    http = None
    if client == "aiohttp":
        import aiohttp

        http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, connect=120),
                                     connector=aiohttp.TCPConnector(limit=0))  # no cap on open connections
        conns = [_AiohttpSocket(ws) for ws in await asyncio.gather(*(
            http.ws_connect(ws_url, compress=0, max_msg_size=0, autoping=True, heartbeat=None) for _ in plan))]
    else:
        from websockets.asyncio.client import connect

        conns = await asyncio.gather(*(connect(ws_url, proxy=None, max_size=None, ping_interval=None,
                                               compression=None, open_timeout=120) for _ in plan))
    latencies: list[float] = []
    completed = 0
    errors: list[str] = []
    size = 0

    async def call(ws, message: dict) -> dict:
        nonlocal size
        await ws.send(dumps(message).decode())
        data = await ws.recv(decode=False)  # websockets: the frame's UTF-8 as it came (orjson parses bytes)
        size += len(data)
        reply = loads(data)
        if reply.get("type") == "error":
            raise RuntimeError(str(reply.get("data"))[:200])
        return reply

    await asyncio.gather(*(call(ws, eps[0][0]) for ws, eps in zip(conns, plan)))

    async def play(ws, episodes) -> None:
        nonlocal completed
        for k, (reset, steps) in enumerate(episodes):
            if k:
                await call(ws, reset)
            for message in steps:
                t0 = time.perf_counter()
                data = (await call(ws, message))["data"]
                latencies.append(time.perf_counter() - t0)
                if data.get("done"):
                    completed += data.get("reward") == 1.0
                    break

    t0 = time.perf_counter()
    results = await asyncio.gather(*(play(ws, eps) for ws, eps in zip(conns, plan)), return_exceptions=True)
    wall = time.perf_counter() - t0
    await asyncio.gather(*(ws.close() for ws in conns), return_exceptions=True)
    if http is not None:
        await http.close()
    errors = [repr(r)[:200] for r in results if isinstance(r, BaseException)]
    return {"latencies": latencies, "wall_s": wall, "completed": completed, "errors": errors[:3], "reply_bytes": size}


def compare_main(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import servicegym  # noqa: F401  registers the ids

    levels = [int(x) for x in args.levels.split(",")]
    local = gym.make(args.env, user_tool=True).unwrapped
    suite = local.task_ids("test")
    routes = {t: list(local.source.get(t).golden_actions) for t in suite}
    mean_route = statistics.mean(len(r) for r in routes.values())

    def plan(sessions: int, peer: bool) -> tuple[list, int]:
        per = max(1, round(args.steps / (sessions * mean_route)))
        out = []
        for i in range(sessions):
            eps = []
            for k in range(per):
                task_id = suite[(i + k * sessions) % len(suite)]
                reset = {"type": "reset", "data": {"seed": i + k * sessions, "task_id": task_id}}
                steps = [{"type": "step", "data": {"message": a} if peer else {"type": "text", "text": a}}
                         for a in routes[task_id]]
                eps.append((reset, steps))
            out.append(eps)
        return out, per

    top = max(levels)
    ours = start_servers(args.env, 1, top)[0]
    echo = start_echo(top)
    names = {"servicegym": ours, "echo": echo}
    runs: dict[tuple[str, int], list[dict]] = {(n, lv): [] for n in names for lv in levels}
    load_before = os.getloadavg()
    episodes: dict[int, int] = {}
    other = OtherWork([ours[0].pid, echo[0].pid])
    wait_left = args.quiet_wait
    try:
        for name, (_, url) in names.items():  # warm both: the first reset loads the suite
            asyncio.run(drive(url, plan(4, name == "echo")[0], args.client))
        for r in range(args.rounds):
            for i, level in enumerate(levels):
                # a pair (both servers, back to back) starts when other processes leave the cores
                # to the bench, or once this run's waiting budget is spent
                before, waited = wait_quiet(other, args.quiet_below, wait_left) if wait_left > 0 else (None, 0.0)
                wait_left -= waited
                order = list(names) if (r + i) % 2 == 0 else list(names)[::-1]
                for name in order:
                    p, episodes[level] = plan(level, name == "echo")
                    cpu0, own0 = cpu_s(names[name][0].pid), time.process_time()
                    other.mark()
                    run = asyncio.run(drive(names[name][1], p, args.client))
                    run["other_cores"] = other.cores()
                    run["server_cpu_s"] = cpu_s(names[name][0].pid) - cpu0
                    run["client_cpu_s"] = time.process_time() - own0
                    run["other_cores_before"] = before
                    runs[name, level].append(run)
    finally:
        codes = stop_servers([ours, echo])
    load_after = os.getloadavg()
    print(f"bench_server --compare: {args.env} on servicegym serve vs openenv's echo env ({OPENENV_LABEL()}), one "
          f"process each, one client process ({args.client}); {os.cpu_count()} cores shared by the three; {args.rounds} rounds "
          f"per level, alternating; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
          f"{args.quiet_wait - wait_left:.0f} s of {args.quiet_wait:g} s spent waiting for other processes to leave the cores")
    print(f"{'sessions':>8}  {'servicegym steps/s':>18}  {'echo steps/s':>12}  {'ratio':>5}  {'quiet pairs':>11}  "
          f"{'ratio, all pairs':>16}  {'others cores':>12}  "
          f"{'p99 ms (ours)':>13}  {'p99 ms (echo)':>13}  {'median ms (ours/echo)':>21}  "
          f"{'server CPU us/step (ours/echo)':>30}  {'client CPU us/step':>18}")
    figures: dict = {"env_id": args.env, "rounds": args.rounds, "cores": os.cpu_count(),
                     "load_average": [load_before[0], load_after[0]], "quiet_below_cores": args.quiet_below,
                     "waited_s": args.quiet_wait - wait_left, "levels": {}}
    ok = all(c == 0 for c in codes)

    def rate(run: dict) -> float:
        return len(run["latencies"]) / run["wall_s"]

    for level in levels:
        # each round's two runs back to back: the median of their ratios (load changes hit both
        # alike); a pair is quiet when other processes used under --quiet-below cores during both
        # runs: the bench then had the machine's cores, which is what the ratio is meant to compare
        pairs = list(zip(runs["servicegym", level], runs["echo", level]))
        quiet = [(a, b) for a, b in pairs if max(a["other_cores"], b["other_cores"]) < args.quiet_below]
        used = quiet or pairs
        row: dict = {}
        for k, name in enumerate(names):
            rs = [pair[k] for pair in used]
            lat = [x for run in rs for x in run["latencies"]]
            row[name] = {"steps_per_s": statistics.median(rate(run) for run in rs),
                         "p99_ms": pct(lat, 0.99) * 1e3, "median_ms": statistics.median(lat) * 1e3,
                         "steps": len(lat), "errors": [e for run in runs[name, level] for e in run["errors"]][:3],
                         "server_cpu_us_per_step": 1e6 * sum(run["server_cpu_s"] for run in rs) / max(1, len(lat)),
                         "client_cpu_us_per_step": 1e6 * sum(run["client_cpu_s"] for run in rs) / max(1, len(lat)),
                         "reply_bytes_per_step": sum(run["reply_bytes"] for run in rs) / max(1, len(lat))}
            ok = ok and not row[name]["errors"]
        want = level * episodes[level] * args.rounds
        row["servicegym"]["completed"] = got = sum(run["completed"] for run in runs["servicegym", level])
        ok = ok and got == want
        row["ratio"] = statistics.median(rate(a) / rate(b) for a, b in used)
        row["quiet_pairs"] = len(quiet)
        row["ratio_all_pairs"] = statistics.median(rate(a) / rate(b) for a, b in pairs)
        row["ratios"] = [rate(a) / rate(b) for a, b in pairs]
        row["other_cores"] = [[a["other_cores"], b["other_cores"]] for a, b in pairs]
        figures["levels"][level] = row
        s, e = row["servicegym"], row["echo"]
        others = statistics.median(max(a["other_cores"], b["other_cores"]) for a, b in pairs)
        print(f"{level:>8}  {s['steps_per_s']:>18.0f}  {e['steps_per_s']:>12.0f}  {row['ratio']:>5.2f}  "
              f"{len(quiet):>6} of {len(pairs):<2}  {row['ratio_all_pairs']:>16.2f}  {others:>12.2f}  "
              f"{s['p99_ms']:>13.2f}  {e['p99_ms']:>13.2f}  {s['median_ms']:>10.2f}/{e['median_ms']:<10.2f}  "
              f"{s['server_cpu_us_per_step']:>19.0f}/{e['server_cpu_us_per_step']:<10.0f}  "
              f"{s['client_cpu_us_per_step']:>11.0f}/{e['client_cpu_us_per_step']:.0f}"
              + (f"  completed {got} of {want}" if got != want else "")
              + (f"  errors {s['errors'] or e['errors']}" if s["errors"] or e["errors"] else ""))
    print(f"  ratio, steps/s, latency and CPU: over the quiet pairs (other processes under {args.quiet_below:g} cores "
          "during both runs; over all pairs where none was); others cores: the median over pairs of what other "
          "processes used during a pair's busier run, in cores")
    print(f"servers stopped with exit codes {codes}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0 if ok else 1


def OPENENV_LABEL() -> str:
    from servicegym.envs.integrations.openenv.compat import OPENENV_DISTRIBUTION, OPENENV_VERSION

    return f"{OPENENV_DISTRIBUTION} {OPENENV_VERSION}"


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
    ap.add_argument("--compare", action="store_true",
                    help="instead: our server against openenv's echo env, the same client and load (see above)")
    ap.add_argument("--levels", default="16,64,256", help="with --compare: concurrent sessions, comma-separated")
    ap.add_argument("--rounds", type=int, default=5, help="with --compare: runs of each server per level")
    ap.add_argument("--steps", type=int, default=3000, help="with --compare: about this many steps per run")
    ap.add_argument("--quiet-below", type=float, default=0.25, metavar="CORES",
                    help="with --compare: a pair of runs counts as quiet when other processes used under this many "
                         "cores during both")
    ap.add_argument("--quiet-wait", type=float, default=120.0, metavar="S",
                    help="with --compare: seconds in all the bench may wait, before pairs, for other processes to "
                         "leave the cores (0: never wait)")
    ap.add_argument("--client", choices=("websockets", "aiohttp"), default="websockets",
                    help="with --compare: the client's WebSocket library (the same for both servers)")
    ap.add_argument("--serve-echo", action="store_true", help=argparse.SUPPRESS)  # --compare's echo server
    ap.add_argument("--max-sessions", type=int, default=256, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve_echo:
        return serve_echo(args.max_sessions)
    if args.compare:
        try:
            levels = [int(x) for x in args.levels.split(",")]
        except ValueError:
            levels = []
        if not levels or min(levels) < 1 or args.rounds < 1 or args.steps < 1:
            ap.error("--levels takes positive integers (16,64,256); --rounds and --steps must be at least 1")
        if not args.quiet_below > 0 or args.quiet_wait < 0:
            ap.error("--quiet-below must be positive and --quiet-wait at least 0")
        try:
            import openenv.core.env_server.http_server  # noqa: F401
        except ImportError:
            print("bench_server: skipped: openenv is not installed (pip install 'servicegym[server]')")
            return 0
        return compare_main(args)
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
