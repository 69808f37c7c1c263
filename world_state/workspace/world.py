"""The persona workspace (pi-Bench): one persistent world per persona episode.

Common tables (every persona): a virtual file system (``files``, keyed by a normalized relative
path), mail (``mail``: inbox, drafts and sent items in one table, told apart by ``folder``),
``calendar`` events, ``notes``, ``contacts`` and ``todos``. Each persona module in
``world_state.workspace.personas`` adds its own tables (papers, campaigns, contracts,
prescriptions, statements...) to the schema; a world holds all of them, a persona's own filled.

Paths are confined to the workspace: ``normalize_path`` rejects absolute paths, ``..``, empty
segments, backslashes and control characters with a ``ToolError`` (so an agent's bad path is an
error observation and nothing outside the workspace is ever named). Nothing here touches the real
file system.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from servicegym.world_state.core import Entity, World
from servicegym.world_state.tools import ToolError
from servicegym.world_state.workspace.structured import check_content

MAX_FILE_CHARS = 200_000        # one file's content
MAX_WORKSPACE_CHARS = 4_000_000  # all files together
MAX_PATH_CHARS = 200
FILE_TYPES = {".txt": "text", ".md": "markdown", ".csv": "csv", ".json": "json"}

_BAD_PATH_CHARS = re.compile(r"[\x00-\x1f\x7f\\:*?\"<>|]")


_NORMALIZED: dict[tuple[str, bool], str] = {}  # valid paths seen -> canonical form (a pure function; bounded)
_MAX_NORMALIZED = 4096


def normalize_path(path: str, *, directory: bool = False) -> str:
    """The canonical form of a workspace path (``a/b/c.md``), or ToolError saying what is wrong.

    ``directory=True`` accepts the root (``""``, ``"."`` or ``"/"`` alone) and paths without an
    extension; files must end in one of ``FILE_TYPES``. Valid paths are remembered (most steps
    name a path already seen: the pre-condition and the tool both normalize it).
    """
    if type(path) is str:
        hit = _NORMALIZED.get((path, directory))
        if hit is not None:
            return hit
        p = _normalize(path, directory)
        if len(_NORMALIZED) < _MAX_NORMALIZED:
            _NORMALIZED[(path, directory)] = p
        return p
    return _normalize(path, directory)


def _normalize(path: str, directory: bool) -> str:
    if not isinstance(path, str):
        raise ToolError("path must be a string")
    p = path.strip()
    if directory and p in ("", ".", "/", "./"):
        return ""
    if not p:
        raise ToolError("path is empty")
    if len(p) > MAX_PATH_CHARS:
        raise ToolError(f"path is longer than {MAX_PATH_CHARS} characters")
    if p.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", p):
        raise ToolError(f"path {path!r} is absolute; use a path relative to the workspace root, e.g. 'reports/summary.md'")
    if _BAD_PATH_CHARS.search(p):
        raise ToolError(f"path {path!r} contains a character that is not allowed (control characters, \\ : * ? \" < > |)")
    if p.startswith("./"):
        p = p[2:]
    p = p.rstrip("/") if directory else p
    parts = p.split("/")
    if any(s == ".." for s in parts):
        raise ToolError(f"path {path!r} leaves the workspace ('..' is not allowed)")
    if any(s in ("", ".") for s in parts):
        raise ToolError(f"path {path!r} has an empty or '.' segment")
    if not directory:
        ext = file_extension(p)
        if ext not in FILE_TYPES:
            raise ToolError(f"file {path!r} must end in one of {', '.join(FILE_TYPES)}")
    return p


def file_extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind("."):].lower() if "." in name else ""


class File(Entity):
    key_field: ClassVar[str] = "path"
    path: str
    content: str
    created: str   # world clock time
    modified: str


class Mail(Entity):
    id: str
    folder: Literal["inbox", "drafts", "sent"]
    sender: str
    to: list[str]
    cc: list[str] = []
    subject: str
    body: str
    time: str
    read: bool = False
    attachments: list[str] = []  # workspace paths (copied content is not kept; the path is the reference)
    in_reply_to: str = ""
    labels: list[str] = []


class Event(Entity):
    id: str
    title: str
    start: str  # YYYY-MM-DD HH:MM:SS
    end: str
    location: str = ""
    attendees: list[str] = []
    description: str = ""
    status: Literal["confirmed", "cancelled"] = "confirmed"


class Note(Entity):
    id: str
    title: str
    body: str
    tags: list[str] = []
    created: str
    modified: str


class Contact(Entity):
    id: str
    name: str
    email: str
    role: str = ""
    organization: str = ""
    phone: str = ""
    groups: list[str] = []


class Todo(Entity):
    id: str
    title: str
    due: str = ""  # YYYY-MM-DD or empty
    priority: Literal["low", "normal", "high"] = "normal"
    status: Literal["open", "done"] = "open"
    notes: str = ""


COMMON_SCHEMA: dict[str, type[Entity]] = {
    "files": File,
    "mail": Mail,
    "calendar": Event,
    "notes": Note,
    "contacts": Contact,
    "todos": Todo,
}


class WorkspaceWorld(World):
    """A persona's workspace. ``extra``: ``persona`` (key in ``PERSONAS``), ``owner`` (name),
    ``owner_email``, ``session`` (index of the current session, set by the env)."""

    schema: ClassVar[dict[str, type[Entity]]] = {}  # common + persona tables, installed by the package __init__

    def workspace_chars(self) -> int:
        return sum(len(f.content) for f in self.table("files"))

    @property
    def persona(self) -> str:
        return self.extra.get("persona", "")


def get_file(world: WorkspaceWorld, path: str) -> File:
    """The file at ``path`` (normalized), or ToolError naming the path."""
    p = normalize_path(path)
    f = world.table("files").get(p)
    if f is None:
        raise ToolError(f"no file {p!r} in the workspace; list files with list_files")
    return f


def put_file(world: WorkspaceWorld, path: str, content: str, *, overwrite: bool = True) -> File:
    """Create or replace a file: the one write path of the file system (common and persona
    tools alike). Enforces the per-file and whole-workspace size limits, keeps files and
    directories apart (a file cannot sit where a directory is, nor below another file), refuses
    malformed ``.csv``/``.json`` content (``structured.check_content``); stamps the clock."""
    p = normalize_path(path)
    if not isinstance(content, str):
        raise ToolError("content must be a string")
    if len(content) > MAX_FILE_CHARS:
        raise ToolError(f"content is {len(content)} characters; a file holds at most {MAX_FILE_CHARS}")
    files = world.table("files")
    old = files.get(p)
    if old is not None and not overwrite:
        raise ToolError(f"file {p!r} already exists; pass overwrite=true to replace it")
    parts = p.split("/")
    for i in range(1, len(parts)):
        parent = "/".join(parts[:i])
        if parent in files:
            raise ToolError(f"{parent!r} is a file, so {p!r} cannot be created below it")
    if old is None and any(f.path.startswith(p + "/") for f in files):
        raise ToolError(f"{p!r} is a directory; choose a file name inside it, e.g. '{p}/notes.md'")
    check_content(p, content)
    total = world.workspace_chars() - (len(old.content) if old else 0) + len(content)
    if total > MAX_WORKSPACE_CHARS:
        raise ToolError(f"the workspace would hold {total} characters; the limit is {MAX_WORKSPACE_CHARS}")
    now = world.clock.text()
    return files.put(File(path=p, content=content, created=old.created if old else now, modified=now))


def new_id(world: World, table: str, prefix: str, width: int = 3) -> str:
    """The next seeded counter id of ``prefix`` that no row of ``table`` holds yet (seeded rows
    may use the same scheme; the counter skips past them, deterministically)."""
    rows = world.table(table)
    while True:
        key = world.ids.next(prefix, width)
        if key not in rows:
            return key


_EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")


def check_email(address: str, what: str = "address") -> str:
    """``address`` stripped, or ToolError when it is not a plain ``name@domain.tld`` address."""
    a = address.strip() if isinstance(address, str) else ""
    if len(a) > 254 or not _EMAIL.match(a):
        raise ToolError(f"{what} {address!r} is not an e-mail address like 'name@example.org'")
    return a


def rows_of(world: WorkspaceWorld, table: str) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in world.table(table)]
