"""The rollouts file of ``servicegym.envs.running.rollouts.collect``: where it lives (``tools_path``:
the sidecar holding each distinct tool list once, ``inline_tools=False``), whole-file rewrites
through a temporary file that never outlives a failed write (``RolloutWriteError``), and reading
(``read_records``): a last line cut short by a kill is dropped, and repaired away on request, while
a bad line elsewhere raises; records that refer to the sidecar get their tool lists back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from servicegym.envs.running.episodes import TOOLS_REF

__all__ = ["RolloutWriteError", "read_records", "tools_path"]


def _out_path(out: str | os.PathLike[str]) -> Path:
    path = Path(out)
    if path.is_dir() or (not path.exists() and path.suffix == ""):
        return path / "rollouts.jsonl"
    return path


def tools_path(out: str | os.PathLike[str]) -> Path:
    """The sidecar of a rollouts file that holds its tool lists (``inline_tools=False``):
    ``rollouts.jsonl`` -> ``rollouts.tools.jsonl``."""
    path = _out_path(out)
    return path.with_name(path.stem + ".tools.jsonl")


class RolloutWriteError(OSError):
    """Writing a rollouts file failed (a full disk, a file-size limit); the message says what the
    file holds and how to go on."""


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` through a temporary file that never outlives a failed write."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise RolloutWriteError(err.errno, f"cannot rewrite {path}: {err.strerror or err}; it is unchanged") from None


def _read_jsonl(path: Path, repair: bool, drop: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """The records of a JSONL file; ``drop(record)`` True leaves a record out (and, with ``repair``,
    out of the file)."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    parts = raw.split(b"\n")
    last = max((n for n, p in enumerate(parts) if p.strip()), default=-1)
    records, good = [], []
    for n, line in enumerate(parts):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if n == last:
                break  # cut short by a kill: dropped
            raise ValueError(f"{path}: line {n + 1} is not a JSON record (not something a kill leaves behind)") from None
        if drop is not None and drop(record):
            continue
        records.append(record)
        good.append(line)
    clean = b"".join(line + b"\n" for line in good)
    if repair and clean != raw:
        _write_atomic(path, clean)
    return records


def read_records(path: str | os.PathLike[str], repair: bool = False, resolve_tools: bool = True) -> list[dict[str, Any]]:
    """The records of a rollouts file. A last line cut short by a kill (no newline, not JSON) is
    dropped; with ``repair=True`` the file is rewritten without it. A bad line elsewhere raises
    ``ValueError`` (that is not what a kill leaves). Records written with ``inline_tools=False``
    get their tool lists back from the sidecar (``resolve_tools=False`` keeps ``{"$ref": ...}``)."""
    path = Path(path)
    records = _read_jsonl(path, repair)
    refs = [r for r in records if isinstance(r.get("tools"), dict) and TOOLS_REF in r["tools"]]
    if resolve_tools and refs:
        side = tools_path(path)
        lists = {t["digest"]: t["tools"] for t in _read_jsonl(side, repair=False)}
        for r in refs:
            digest = r["tools"][TOOLS_REF]
            if digest not in lists:
                raise ValueError(f"{path}: task {r.get('task_id')!r} refers to tool list {digest}, which {side} "
                                 f"does not hold (keep the .tools.jsonl file beside its rollouts)")
            r["tools"] = lists[digest]
    return records
