"""Rubric-checks files: typed checks for a VitaBench file's rubric items, supplied from outside.

The code compiler (``rewards/nl_rubric``) leaves some natural-language rubric items unread;
``servicegym rubrics --compile`` (``llm_checks.py``) asks a chat model to write them as the same
typed specs, keeps those the task's golden route passes, and writes them here, beside the task
file as ``<stem>.rubric-checks.json`` unless told otherwise::

    {"format": "servicegym-rubric-checks", "version": 1, "source": "tasks_en.json", "model": "...",
     "checks": {"<task id>": {"<item text>": <spec json>, ...}, ...},
     "task_sha256": {"<task id>": "<sha256 of the task's canonical JSON>", ...}}

``load_task_file`` reads the file (an explicit path, else the default one when present) with
``read_checks`` and converts the tasks under ``using_checks``: the loader's ``ItemContext`` then
holds a task's specs (``ItemContext.compiled``, consulted first by ``compile_item``), so the items
become code checks deterministically, tied and verified like the compiler's own. Nothing of a
broken file stops a load: a file too large, not JSON or of another format, a task the task file
no longer has or whose content changed since (its sha256 differs: the checks are stale), an entry
that is no valid spec, each is one warning naming the file and the entry, and the entry is left
out.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from servicegym.envs.tasks.checks_path import CHECKS_SUFFIX, RubricChecksWarning, default_checks_path  # noqa: F401  re-exported
from servicegym.rewards.nl_rubric import parse_spec

CHECKS_FORMAT = "servicegym-rubric-checks"
CHECKS_VERSION = 1
MAX_CHECKS_BYTES = 16 * 2**20  # a larger file is ignored unread
MAX_SPEC_CHARS = 20_000  # one spec's JSON; a larger one is no rubric item's
MAX_TEXT_CHARS = 4_000  # an item text (the compiler's own cap)


def task_digest(raw: Any) -> str:
    """The sha256 of a raw task's canonical JSON (sorted keys): what a check was made against."""
    text = json.dumps(raw, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_checks(path: str | os.PathLike[str], raw_tasks: list[Any] | None = None
                ) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The valid checks of a rubric-checks file (task id -> item text -> spec) and one problem
    line per thing left out (the file's name and the entry in each). ``raw_tasks``: the task
    file's raw tasks, against whose ids and sha256s the entries are checked (None: not checked)."""
    path = Path(path)
    where = str(path)
    try:
        size = path.stat().st_size
    except OSError as err:
        return {}, [f"rubric checks {where}: cannot be read ({err.strerror or err}); loaded without it"]
    if size > MAX_CHECKS_BYTES:
        return {}, [f"rubric checks {where}: {size} bytes, over the {MAX_CHECKS_BYTES}-byte limit; loaded without it"]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        return {}, [f"rubric checks {where}: not a JSON file ({_short(err, 160)}); loaded without it"]
    if not isinstance(data, dict) or data.get("format") != CHECKS_FORMAT:
        return {}, [f'rubric checks {where}: not a rubric-checks file (expected "format": "{CHECKS_FORMAT}"); '
                    "loaded without it"]
    if data.get("version") != CHECKS_VERSION:
        return {}, [f"rubric checks {where}: version {data.get('version')!r} is not supported (expected "
                    f"{CHECKS_VERSION}); loaded without it"]
    checks = data.get("checks")
    if not isinstance(checks, dict):
        return {}, [f'rubric checks {where}: "checks" must be an object of task ids; loaded without it']
    digests = data.get("task_sha256") if isinstance(data.get("task_sha256"), dict) else {}
    current: dict[str, Any] | None = None
    if raw_tasks is not None:
        current = {str(t.get("id")): t for t in raw_tasks if isinstance(t, dict) and "id" in t}
    out: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for tid, entries in checks.items():
        if not isinstance(entries, dict):
            problems.append(f"rubric checks {where}: task {tid}: must be an object of item texts; left out")
            continue
        if current is not None:
            if tid not in current:
                problems.append(f"rubric checks {where}: task {tid} is not in the task file; its checks are left out")
                continue
            want = digests.get(tid)
            if want is not None and want != task_digest(current[tid]):
                problems.append(f"rubric checks {where}: task {tid} changed since its checks were made (sha256 "
                                "differs): its checks are stale and left out; run servicegym rubrics --compile again")
                continue
        for text, spec_json in entries.items():
            entry = f"rubric checks {where}: task {tid}, item {_short(text)!r}"
            if not text.strip() or len(text) > MAX_TEXT_CHARS:
                problems.append(f"{entry}: not a rubric item's text; left out")
                continue
            try:
                if len(json.dumps(spec_json)) > MAX_SPEC_CHARS:
                    raise ValueError(f"over {MAX_SPEC_CHARS} characters")
                spec = parse_spec(spec_json)
            except ValidationError as err:
                e = err.errors(include_url=False)[0]
                loc = ".".join(str(x) for x in e["loc"]) or "(root)"
                problems.append(f"{entry}: not a valid check ({loc}: {_short(e['msg'], 160)}); left out")
                continue
            except (TypeError, ValueError, RecursionError) as err:
                problems.append(f"{entry}: not a valid check ({_short(err, 160)}); left out")
                continue
            out.setdefault(str(tid), {})[text] = spec
    return out, problems


def write_checks(path: str | os.PathLike[str], source: str, model: str, checks: Mapping[str, Mapping[str, Any]],
                 digests: Mapping[str, str]) -> None:
    """Write a rubric-checks file whole (a temporary file renamed into place); specs as JSON."""
    path = Path(path)
    body = {
        "format": CHECKS_FORMAT,
        "version": CHECKS_VERSION,
        "source": source,
        "model": model,
        "checks": {tid: {text: (s.model_dump(mode="json") if hasattr(s, "model_dump") else s)
                         for text, s in items.items()} for tid, items in checks.items() if items},
        "task_sha256": {tid: digests[tid] for tid, items in checks.items() if items and tid in digests},
    }
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(body, f, ensure_ascii=False, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# the checks of the file being converted (task id -> item text -> spec), read by the loader's
# ``_vitabench_task`` when it builds a task's ``ItemContext``
_SUPPLIED: contextvars.ContextVar[Mapping[str, Mapping[str, Any]] | None] = contextvars.ContextVar("rubric_checks",
                                                                                                  default=None)


@contextlib.contextmanager
def using_checks(checks: Mapping[str, Mapping[str, Any]] | None) -> Iterator[None]:
    """Convert tasks with these supplied checks (task id -> item text -> spec)."""
    token = _SUPPLIED.set(checks or {})
    try:
        yield
    finally:
        _SUPPLIED.reset(token)


def supplied_checks(task_id: str) -> dict[str, Any]:
    """The supplied checks of one task being converted (item text -> spec; empty: none)."""
    return dict((_SUPPLIED.get() or {}).get(task_id) or {})
