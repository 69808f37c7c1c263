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

import copy
import re
import types
import typing
from typing import Any, ClassVar, Literal

from servicegym.world_state.core import Entity, World, unvalidated
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


# ----- rows a generator vouches for, made without validation ------------------------------------
# how a field's value becomes the entity's (what validation makes of a value of the field's type)
_AS_IS, _FLOAT, _LIST, _FLOAT_LIST, _DICT, _FLOAT_DICT = range(6)
_SCALARS = (str, int, bool)


def _scalar_kind(annotation: Any) -> int | None:
    """``_AS_IS`` for str, int, bool, a ``Literal`` of them or a union of such with float (a value of
    the union's exact type is kept), ``_FLOAT`` for float or ``float | None`` (an int becomes a
    float), None for anything else."""
    if annotation in _SCALARS:
        return _AS_IS
    if annotation is float:
        return _FLOAT
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return _AS_IS if all(type(a) in _SCALARS for a in args) else None
    if origin in (typing.Union, types.UnionType):
        if set(args) == {float, type(None)}:
            return _FLOAT
        # smart-mode unions keep a value whose type is one of the members as it is
        return _AS_IS if float in args and all(a in (*_SCALARS, float) for a in args) else None
    return None


def _field_kind(annotation: Any) -> int | None:
    kind = _scalar_kind(annotation)
    if kind is not None:
        return kind
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and len(args) == 1:
        inner = _scalar_kind(args[0])
        return None if inner is None else (_FLOAT_LIST if inner == _FLOAT else _LIST)
    if origin is dict and len(args) == 2 and args[0] is str:
        inner = _scalar_kind(args[1])
        return None if inner is None else (_FLOAT_DICT if inner == _FLOAT else _DICT)
    return None


_ROW_PLANS: dict[type, tuple[tuple[str, ...], tuple[int, ...]] | None] = {}


def _row_plan(model: type[Entity]) -> tuple[tuple[str, ...], tuple[int, ...]] | None:
    """The field names of ``model`` in order and how each value is taken (``_field_kind``), or
    None when rows of ``model`` must be validated (a nested model, a validator, an alias...)."""
    if model in _ROW_PLANS:
        return _ROW_PLANS[model]
    plan: tuple[tuple[str, ...], tuple[int, ...]] | None = None
    deco = model.__pydantic_decorators__
    if not (deco.field_validators or deco.model_validators or deco.validators or deco.root_validators
            or model.__private_attributes__ or model.model_config.get("extra") != "forbid"
            or getattr(model, "__pydantic_post_init__", None) is not None):
        kinds = []
        for f in model.model_fields.values():
            kind = None if (f.alias is not None or f.validation_alias is not None or f.metadata) else _field_kind(f.annotation)
            if kind is None:
                break
            kinds.append(kind)
        else:
            plan = (tuple(model.model_fields), tuple(kinds))
    _ROW_PLANS[model] = plan
    return plan


def _floats(value: Any) -> Any:
    return float(value) if type(value) is int else value


def vouched_entities(model: type[Entity], rows: list[dict[str, Any]]) -> list[Entity]:
    """The entities of ``rows``, rows a generator built itself (every field of ``model``, in
    order, each value of its field's type: ``tests/test_workspace_reset_fast.py`` holds the
    workspace generator and the persona modules to it), made without validation: what
    ``model.model_validate(row)`` makes of each (the same values, an int in a float field a
    float, lists and dicts copied, every field set). A model whose rows need validation (nested
    models, validators) and a row with other keys than the model's fields are validated."""
    plan = _row_plan(model)
    if plan is None:
        return [model.model_validate(r) for r in rows]
    names, kinds = plan
    # the fields validation changes (a float field's int, a list or dict it copies): the rest stay as they are
    special = [(name, kind) for name, kind in zip(names, kinds) if kind != _AS_IS]
    fields_set = set(names)  # one per call, as ``core.vouched_rows``: pydantic copies it before any change
    partial: dict[tuple[str, ...], tuple[dict[str, Any], set[str]] | None] = {}  # rows that leave out defaults
    out: list[Entity] = []
    for row in rows:
        if type(row) is not dict:
            out.append(model.model_validate(row))
            continue
        keys = tuple(row)
        if keys == names:
            fields, row_set = row.copy(), fields_set
        else:
            if keys not in partial:
                partial[keys] = _defaults(model, names, keys)
            hit = partial[keys]
            if hit is None:  # another field, a field out of order or a required one left out
                out.append(model.model_validate(row))
                continue
            defaults, row_set = hit
            fields = {name: row[name] if name in row else _fresh_default(defaults[name]) for name in names}
        for name, kind in special:
            value = fields[name]
            if kind == _FLOAT:
                if type(value) is int:
                    fields[name] = float(value)
            elif kind == _LIST:
                fields[name] = list(value)
            elif kind == _FLOAT_LIST:
                fields[name] = [_floats(v) for v in value]
            elif kind == _DICT:
                fields[name] = dict(value)
            else:
                fields[name] = {k: _floats(v) for k, v in value.items()}
        out.append(unvalidated(model, fields, row_set))
    return out


def _defaults(model: type[Entity], names: tuple[str, ...], keys: tuple[str, ...]) -> tuple[dict[str, Any], set[str]] | None:
    """For a row with ``keys``: the defaults of the fields it leaves out and its fields set, when its
    keys are fields in the model's order and every field left out has a plain default; else None."""
    pos = [names.index(k) if k in names else -1 for k in keys]
    if -1 in pos or pos != sorted(pos):
        return None
    defaults: dict[str, Any] = {}
    for name in names:
        if name in keys:
            continue
        f = model.model_fields[name]
        if f.is_required() or f.default_factory is not None or type(f.default) not in (*_SCALARS, float, type(None), list, dict):
            return None
        defaults[name] = f.default
    return defaults, set(keys)


def _fresh_default(value: Any) -> Any:
    """A field's default as validation gives it (a list or dict default copied)."""
    return copy.deepcopy(value) if type(value) in (list, dict) else value
