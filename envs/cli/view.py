"""``servicegym view``: one self-contained HTML page over a rollouts file, to look at episodes.

    servicegym view --in runs/eval                 # writes runs/eval/view.html
    servicegym view --in runs/r.jsonl --serve      # writes runs/r.view.html and serves it on 127.0.0.1
    servicegym view runs/a runs/b --out ab.html    # several runs on one page (default: ./compare.view.html)

Several runs (``load_runs``) make one page: their records one after the other, each index row
naming its run; each run labelled as ``servicegym report`` labels it (``compare.label_runs`` over
its ``run.json``) with its headline numbers (episodes, successes, errors, an errored episode a
failure: ``report.counted``) in the ``sg-meta`` block's ``runs``.

The page needs no network: its CSS and JavaScript are inline (``view_page``) and the records are
embedded as JSON in ``<script type="application/json">`` blocks, which the page's script reads;
record text is only ever put into the page through ``textContent``, never parsed as HTML. The
blocks: ``sg-meta`` (source, skipped lines, notes), ``sg-index`` (one short row per episode, for
the list and its filters), ``sg-tools`` (each distinct tool list once, records refer to it by
position) and the records, in ``sg-records`` blocks of up to 1000 (or 8 MB): JSON arrays written
one record a line, so the page parses only the record of the episode it opens. ``</`` in any
string is written ``<\\/`` (and ``<!--`` as ``\\u003c!--``), so a transcript cannot end the script
element. The list is virtualised: only the rows in view exist in the DOM.

A line of the file that is not an episode record (not JSON, not an object, no ``task_id``) is
skipped, named on stderr and in the page; a file none of whose lines is a record is a
``ViewError`` (the CLI's one-line error, exit status 2). Tool lists stored once in the sidecar
(``--tools-once``) are read from it; a missing sidecar or list is a note, not an error.
"""

from __future__ import annotations

import html
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servicegym.envs.cli import compare
from servicegym.envs.cli.report import ReportError, counted
from servicegym.envs.running.episodes import TOOLS_REF
from servicegym.envs.running.rollouts import tools_path

__all__ = ["ViewError", "LoadedRun", "resolve_input", "load_run", "load_runs", "default_out", "build_page", "write_page",
           "serve"]

ROLLOUTS_NAME = compare.ROLLOUTS_NAME
VIEW_NAME = "view.html"
MULTI_VIEW_NAME = "compare.view.html"  # several runs, no --out: in the current directory
MAX_REASON = 200
CHUNK_RECORDS = 1000  # records per <script> block of the page ...
CHUNK_CHARS = 8_000_000  # ... or fewer, to keep each block's text well within a browser's string limit


class ViewError(ValueError):
    """Input that cannot make a page (missing, not a rollouts file); the message is one line."""


@dataclass
class LoadedRun:
    """The episode records of a rollouts file, with the lines skipped and why."""

    path: Path
    records: list[dict[str, Any]]
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)
    notes: list[str] = field(default_factory=list)
    source: str = ""  # as given on the command line
    meta: dict[str, Any] = field(default_factory=dict)  # run.json beside an evaluate run's rollouts.jsonl
    label: str = ""  # as ``servicegym report`` labels the run (``load_runs``)


def resolve_input(inp: str | Path) -> Path:
    """The rollouts file of a RUN (or ``--in``): the file itself, or ``rollouts.jsonl`` in a
    directory (``compare.resolve_run``, its error a ``ViewError``)."""
    try:
        return compare.resolve_run(inp)
    except ReportError as err:
        raise ViewError(str(err)) from None


def default_out(path: Path) -> Path:
    """``DIR/view.html`` beside ``DIR/rollouts.jsonl``; ``DIR/NAME.view.html`` beside another file."""
    return path.with_name(VIEW_NAME if path.name == ROLLOUTS_NAME else f"{path.stem}.{VIEW_NAME}")


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """A record, or None and why the line is not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 text (byte {err.start})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"not JSON ({err.msg}, column {err.colno})"
    except RecursionError:
        return None, "JSON nested too deeply"
    if not isinstance(value, dict):
        return None, f"not an episode record (a JSON {type(value).__name__}, not an object)"
    if "task_id" not in value:
        return None, "not an episode record (no task_id)"
    return value, ""


def _lines(path: Path) -> Iterable[tuple[int, bytes]]:
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                yield n, line.rstrip(b"\r\n")


def load_run(path: str | Path) -> LoadedRun:
    """Read a rollouts file, skipping (and listing) lines that are not episode records."""
    path = Path(path)
    records: list[dict[str, Any]] = []
    skipped: list[tuple[int, str]] = []
    try:
        for n, line in _lines(path):
            rec, why = _parse_line(line)
            if rec is None:
                skipped.append((n, why))
            else:
                records.append(rec)
    except OSError as err:
        raise ViewError(f"cannot read {path}: {_short(err.strerror or err)}") from None
    if not records:
        if not skipped:
            raise ViewError(f"{path} holds no episodes (the file is empty)")
        n, why = skipped[0]
        more = f" ({len(skipped) - 1} more lines are not records either)" if len(skipped) > 1 else ""
        raise ViewError(f"{path} is not a rollouts file: line {n} is {why}{more}")
    run = LoadedRun(path, records, skipped)
    _resolve_tools(run)
    return run


def load_runs(inputs: list[str | Path]) -> list[LoadedRun]:
    """Several RUNs (rollouts files or evaluate directories), each with its ``run.json`` and the
    label ``servicegym report`` gives it (``compare.label_runs``: run.json's model or policy, else
    the records' policy and the file's name; a label two runs share gets their directory, then a
    number). An unreadable ``run.json`` is a note: the run is labelled as a bare file."""
    runs = []
    for inp in inputs:
        path = resolve_input(inp)
        run = load_run(path)
        run.source = str(inp)
        try:
            run.meta = compare.read_run_meta(path)
        except ReportError as err:
            run.notes.append(f"{_short(err)}: not used")
        runs.append(run)
    labelled = compare.label_runs([compare.Run(source=r.source, path=r.path, meta=r.meta, records=r.records,
                                               summaries=[]) for r in runs])
    for run, lab in zip(runs, labelled):
        run.label = lab.label
    return runs


def headline(records: list[dict[str, Any]]) -> dict[str, int]:
    """A run's headline numbers as the report counts them (``report.counted``: an errored episode
    is a failure): episodes, tasks, successes, errors."""
    scored = counted(records)
    return {"episodes": len(scored), "tasks": len({str(r.get("task_id")) for r in scored}),
            "successes": sum(1 for r in scored if bool(r.get("success"))),
            "errors": sum(1 for r in records if r.get("error"))}


def _resolve_tools(run: LoadedRun) -> None:
    """Put back tool lists stored once in the sidecar; what cannot be found becomes a note."""
    refs = [r for r in run.records if isinstance(r.get("tools"), dict) and TOOLS_REF in r["tools"]]
    if not refs:
        return
    side = tools_path(run.path)
    lists: dict[str, Any] = {}
    if side.is_file():
        bad = 0
        for _, line in _lines(side):
            try:
                entry = json.loads(line)
                lists[entry["digest"]] = entry["tools"]
            except (ValueError, TypeError, KeyError):
                bad += 1
        if bad:
            run.notes.append(f"{bad} unreadable line(s) in the tool lists file {side.name}")
    else:
        run.notes.append(f"the tool lists of {len(refs)} episode(s) are in {side.name}, which is not beside the "
                         f"rollouts file: their tools are not shown")
        lists = {}
    missing = 0
    for r in refs:
        found = lists.get(str(r["tools"].get(TOOLS_REF)))
        if found is None and side.is_file():
            missing += 1
        r["tools"] = found
    if missing:
        run.notes.append(f"{missing} episode(s) refer to tool lists that {side.name} does not hold")


# ----- the page ------------------------------------------------------------------------------
def _json_block(value: Any) -> str:
    """JSON text safe inside a ``<script>`` element (no ``</``, no ``<!--``)."""
    return _script_safe(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


def _script_safe(text: str) -> str:
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _headline(score: Any) -> str:
    """A few characters summing up an episode's score for the list (G/P/F, PROC/COMP or rubric)."""
    if not isinstance(score, dict) or not score:
        return ""
    if all(k in score for k in ("goal", "process", "protection")):
        return " ".join(f"{k}{int(_num(score[n]) or 0)}" for k, n in (("G", "goal"), ("P", "process"), ("F", "protection")))
    if "proc" in score or "comp" in score:
        parts = []
        for label, key in (("PROC", "proc"), ("COMP", "comp")):
            v = _num(score.get(key))
            if v is not None:
                parts.append(f"{label} {v:.2f}")
        return " ".join(parts)
    items = [_num(v) for k, v in score.items() if isinstance(k, str) and k.startswith("rubric/")]
    items = [v for v in items if v is not None]
    if items:
        return f"{sum(1 for v in items if v >= 1)}/{len(items)} rubric"
    v = _num(score.get("rubric_fraction"))
    return f"rubric {v:.2f}" if v is not None else ""


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def build_page(runs: LoadedRun | list[LoadedRun], title: str | None = None) -> str:
    """The HTML page of a loaded run, or of several (``load_runs``: labelled) on one page (a str;
    write it as UTF-8)."""
    from servicegym.envs.cli import view_page

    runs = [runs] if isinstance(runs, LoadedRun) else list(runs)
    multi = len(runs) > 1
    tool_ids: dict[str, int] = {}
    tool_lists: list[Any] = []
    index: list[list[Any]] = []
    lines: list[str] = []
    run_rows: list[dict[str, Any]] = []
    for k, run in enumerate(runs):
        meta = run.meta or {}
        run_rows.append({
            "label": run.label or run.path.name, "source": run.source or str(run.path), "path": str(run.path),
            "first": len(index), "model": _text(meta.get("model")), "policy": _text(meta.get("policy")),
            "scoring": _text(meta.get("scoring")), "split": _text(meta.get("split")),
            "env_ids": sorted({_text(r.get("env_id")) for r in run.records if r.get("env_id")}),
            **headline(run.records),
        })
        for rec in run.records:
            tools = rec.get("tools")
            slot = None
            if isinstance(tools, list):
                key = json.dumps(tools, ensure_ascii=False, separators=(",", ":"), default=str)
                slot = tool_ids.get(key)
                if slot is None:
                    slot = tool_ids[key] = len(tool_lists)
                    tool_lists.append(tools)
            body = {k2: v for k2, v in rec.items() if k2 != "tools"}
            body["tools"] = slot
            lines.append(_json_block(body))
            success = rec.get("success")
            ret = _num(rec.get("return"))
            steps = _num(rec.get("steps"))
            errors = _num(rec.get("tool_errors"))
            index.append([
                _text(rec.get("env_id")),
                _text(rec.get("domain")),
                _text(rec.get("task_id")),
                rec.get("trial") if isinstance(rec.get("trial"), int) else None,
                _text(rec.get("policy")),
                success if isinstance(success, bool) else None,
                _text(rec.get("termination_reason")),
                ret,
                int(steps) if steps is not None else None,
                int(errors) if errors is not None else None,
                bool(rec.get("error")),
                _headline(rec.get("score")),
                k,
            ])
    try:
        from importlib.metadata import version

        pkg = version("servicegym")
    except Exception:  # a source checkout without metadata
        pkg = "unknown"
    if multi:
        default_title = f"servicegym view: {len(runs)} runs ({', '.join(r['label'] for r in run_rows)})"
        skipped = [[n, why, k] for k, run in enumerate(runs) for n, why in run.skipped]
        notes = [f"{run_rows[k]['label']}: {note}" for k, run in enumerate(runs) for note in run.notes]
    else:
        default_title = f"servicegym view: {runs[0].path.name}"
        skipped = [[n, why] for n, why in runs[0].skipped]
        notes = list(runs[0].notes)
    meta = {
        "title": title or default_title,
        "heading": title or "",
        "source": ", ".join(str(run.path) for run in runs),
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "servicegym_version": pkg,
        "episodes": len(index),
        "skipped": skipped,
        "notes": notes,
        "runs": run_rows,
    }
    chunks, first, size = [], 0, 0
    for n, line in enumerate(lines):
        size += len(line)
        if n + 1 - first >= CHUNK_RECORDS or size >= CHUNK_CHARS or n + 1 == len(lines):
            body = "[\n" + ",\n".join(lines[first:n + 1]) + "\n]"
            chunks.append(f'<script type="application/json" class="sg-records" data-first="{first}">{body}</script>')
            first, size = n + 1, 0
    return view_page.render(
        title=html.escape(meta["title"]),
        meta=_json_block(meta),
        index=_json_block(index),
        tools=_json_block(tool_lists),
        records="\n".join(chunks),
    )


def write_page(page: str, out: Path) -> int:
    """Write the page as UTF-8 (a lone surrogate in a record becomes U+FFFD); returns its bytes."""
    data = page.encode("utf-8", "replace")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return len(data)


def report_skipped(run: LoadedRun, stream: Any = None, limit: int = 5) -> None:
    """One stderr line per skipped line (the first ``limit``, then a count) and per note."""
    stream = stream or sys.stderr
    for n, why in run.skipped[:limit]:
        print(f"servicegym view: skipped line {n} of {run.path}: {why}", file=stream)
    if len(run.skipped) > limit:
        print(f"servicegym view: skipped {len(run.skipped) - limit} more lines of {run.path} (listed in the page)",
              file=stream)
    for note in run.notes:
        print(f"servicegym view: {note}", file=stream)


def serve(data: bytes, port: int, host: str = "127.0.0.1", ready: Any = None) -> None:
    """Serve the page at ``http://HOST:PORT/`` until interrupted (the standard library's http.server).
    ``ready(url)`` is called once the socket listens (port 0: a free port is chosen)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def _head(self) -> bool:
            if self.path.split("?", 1)[0].split("#", 1)[0] not in ("/", "/view.html", "/index.html"):
                self.send_error(404, "only / is served")
                return False
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            return True

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self._head():
                self.wfile.write(data)

        def do_HEAD(self) -> None:  # noqa: N802
            self._head()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    url = f"http://{host}:{server.server_address[1]}/"
    try:
        if ready is not None:
            ready(url)
        server.serve_forever()
    finally:
        server.server_close()
