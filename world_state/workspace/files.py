"""File tools over the workspace's virtual file system (the ``files`` table) and its Markdown.

Directories are implicit: a directory exists while some file path lies below it, ``write_file``
creates the directories of its path, and deleting a directory's last file removes it. There is
no ``make_directory``: an empty directory would hold nothing a later tool could use. Every path
goes through ``normalize_path`` (no ``..``, no absolute paths, no backslashes) and every write
through ``put_file`` (size limits, CSV/JSON validity); no tool touches the real file system.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import Precondition, RawJson, ToolError, dumps, rule, tool
from servicegym.world_state.workspace.structured import markdown_headings, markdown_section
from servicegym.world_state.workspace.world import (
    FILE_TYPES,
    MAX_FILE_CHARS,
    WorkspaceWorld,
    file_extension,
    get_file,
    normalize_path,
    put_file,
)

READ_CHARS = 20_000  # most characters one read_file returns; the rest is read by line range
FILE_SOURCES = ("list_files", "search_files", "write_file")


def file_exists(arg: str = "path", after: tuple[str, ...] = FILE_SOURCES) -> Precondition:
    """``args[arg]`` is a valid workspace path naming an existing file."""

    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        try:
            p = normalize_path(args.get(arg))
        except ToolError as err:
            return str(err)
        if p in world.table("files"):
            return None
        return f"no file {p!r} in the workspace; find paths with list_files or search_files"

    return rule(f"{arg} names an existing workspace file", check, after)


def split_lines(content: str) -> list[str]:
    """The lines of a text; a final newline does not start another line."""
    if not content:
        return []
    lines = content.split("\n")
    return lines[:-1] if content.endswith("\n") else lines


def file_summary(f: Any) -> dict[str, Any]:
    return {"path": f.path, "type": FILE_TYPES[file_extension(f.path)], "size": len(f.content),
            "modified": f.modified}


def _directory(world: WorkspaceWorld, directory: str) -> str:
    d = normalize_path(directory, directory=True)
    if d and d in world.table("files"):
        raise ToolError(f"{d!r} is a file, not a directory; read it with read_file")
    return d


@tool("read")
def list_files(world: WorkspaceWorld, directory: str = "", recursive: bool = True,
               pattern: Annotated[str, Field(max_length=100)] | None = None,
               limit: Annotated[int, Field(ge=1, le=1000)] = 200) -> dict[str, Any]:
    """List the workspace files in a directory, sorted by path (directories are implicit in paths).

    Args:
        directory: a directory relative to the workspace root; "" is the root
        recursive: include files in sub-directories (otherwise list them under "directories")
        pattern: a glob on the file name, e.g. "*.csv" (on the whole path when it contains "/")
        limit: most files returned (1-1000)
    """
    d = _directory(world, directory)
    prefix = d + "/" if d else ""
    pat = pattern.casefold() if pattern else None
    files, subdirs = [], set()
    for f in world.table("files"):
        if not f.path.startswith(prefix):
            continue
        rest = f.path[len(prefix):]
        if not recursive and "/" in rest:
            subdirs.add(prefix + rest.split("/", 1)[0])
            continue
        if pat is not None:
            target = f.path if "/" in pat else rest.rsplit("/", 1)[-1]
            if not fnmatchcase(target.casefold(), pat):
                continue
        files.append(f)
    if d and not files and not subdirs and not any(f.path.startswith(prefix) for f in world.table("files")):
        raise ToolError(f"no directory {d!r} in the workspace; list_files with directory \"\" shows every file")
    files.sort(key=lambda f: f.path)
    out: dict[str, Any] = {"directory": d, "total": len(files), "files": [file_summary(f) for f in files[:limit]]}
    if not recursive:
        out["directories"] = sorted(subdirs)
    if len(files) > limit:
        out["note"] = f"showing {limit} of {len(files)} files; narrow with directory or pattern"
    return out


@tool("read", pre=[file_exists()])
def read_file(world: WorkspaceWorld, path: str, start_line: Annotated[int, Field(ge=1)] | None = None,
              end_line: Annotated[int, Field(ge=1)] | None = None) -> dict[str, Any]:
    """Read a text file, whole or a range of lines; long results are cut at a line with a note.

    Args:
        path: the file, e.g. "reports/summary.md"
        start_line: first line to return (1-based, default 1)
        end_line: last line to return (inclusive, default the end)
    """
    # a file is read again and again: the result's text is kept while the files table is unchanged
    return world.cached_text(("read_file", path, start_line, end_line), ("files",),
                             lambda: RawJson(dumps(_read_file(world, path, start_line, end_line))))


def _read_file(world: WorkspaceWorld, path: str, start_line: int | None, end_line: int | None) -> dict[str, Any]:
    f = get_file(world, path)
    lines = split_lines(f.content)
    start = start_line or 1
    end = min(end_line or len(lines), len(lines))
    if lines and start > len(lines):
        raise ToolError(f"start_line {start} is past the end: {f.path} has {len(lines)} lines")
    if end_line is not None and end_line < start:
        raise ToolError(f"end_line {end_line} is before start_line {start}")
    picked, size = [], 0
    for line in lines[start - 1:end]:
        if picked and size + len(line) + 1 > READ_CHARS:
            break
        picked.append(line)
        size += len(line) + 1
    last = start + len(picked) - 1
    out: dict[str, Any] = {"path": f.path, "total_lines": len(lines), "start_line": start if lines else 0,
                           "end_line": last if lines else 0, "content": "\n".join(picked)}
    if last < end:
        out["truncated"] = True
        out["note"] = f"cut at line {last} of {len(lines)}; read on with start_line={last + 1}"
    return out


@tool("read", pre=[file_exists()])
def file_info(world: WorkspaceWorld, path: str) -> dict[str, Any]:
    """Size, line count, type and times of one file.

    Args:
        path: the file
    """
    f = get_file(world, path)
    return {**file_summary(f), "lines": len(split_lines(f.content)), "created": f.created,
            "directory": f.path.rsplit("/", 1)[0] if "/" in f.path else ""}


def _written(f: Any, created: bool) -> dict[str, Any]:
    return {"path": f.path, "size": len(f.content), "lines": len(split_lines(f.content)), "created": created,
            "modified": f.modified}


@tool("write")
def write_file(world: WorkspaceWorld, path: str, content: str, overwrite: bool = False) -> dict[str, Any]:
    """Create a file (its directories come with it), or replace one when overwrite is true.
    .csv content must be well-formed CSV with a header, .json content valid JSON.

    Args:
        path: relative path ending in .txt, .md, .csv or .json
        content: the whole text of the file
        overwrite: replace the file if it exists (default false: refuse)
    """
    created = normalize_path(path) not in world.table("files")
    return _written(put_file(world, path, content, overwrite=overwrite), created)


@tool("write", pre=[file_exists()])
def append_file(world: WorkspaceWorld, path: str, content: str) -> dict[str, Any]:
    """Add text at the end of an existing file; a line break is put first if the file lacks one.

    Args:
        path: the file
        content: the text to add
    """
    f = get_file(world, path)
    sep = "\n" if f.content and not f.content.endswith("\n") else ""
    return _written(put_file(world, f.path, f.content + sep + content), False)


@tool("write", pre=[file_exists()])
def edit_file(world: WorkspaceWorld, path: str, old_text: Annotated[str, Field(min_length=1)], new_text: str,
              replace_all: bool = False) -> dict[str, Any]:
    """Replace an exact piece of text in a file (it must occur once, unless replace_all is true).

    Args:
        path: the file
        old_text: the exact text to replace, including enough context to be unique
        new_text: the replacement
        replace_all: replace every occurrence
    """
    f = get_file(world, path)
    n = f.content.count(old_text)
    if n == 0:
        raise ToolError(f"old_text does not occur in {f.path}; read_file shows its exact text")
    if n > 1 and not replace_all:
        raise ToolError(f"old_text occurs {n} times in {f.path}; include more context, or pass replace_all=true")
    size = len(f.content) + n * (len(new_text) - len(old_text))
    if size > MAX_FILE_CHARS:  # checked before building the new content, which could be huge
        raise ToolError(f"the edit would make {f.path} {size} characters; a file holds at most {MAX_FILE_CHARS}")
    g = put_file(world, f.path, f.content.replace(old_text, new_text))
    return {**_written(g, False), "replacements": n}


def _destination(world: WorkspaceWorld, source: str, destination: str) -> tuple[Any, str]:
    f = get_file(world, source)
    dest = normalize_path(destination)
    if dest == f.path:
        raise ToolError("source and destination are the same file")
    return f, dest


@tool("write", pre=[file_exists("source")])
def copy_file(world: WorkspaceWorld, source: str, destination: str, overwrite: bool = False) -> dict[str, Any]:
    """Copy a file to a new path.

    Args:
        source: the file to copy
        destination: the new path
        overwrite: replace the destination if it exists
    """
    f, dest = _destination(world, source, destination)
    created = dest not in world.table("files")
    return {"source": f.path, **_written(put_file(world, dest, f.content, overwrite=overwrite), created)}


@tool("write", pre=[file_exists("source")])
def move_file(world: WorkspaceWorld, source: str, destination: str, overwrite: bool = False) -> dict[str, Any]:
    """Move or rename a file (its creation time is kept).

    Args:
        source: the file to move
        destination: the new path
        overwrite: replace the destination if it exists
    """
    f, dest = _destination(world, source, destination)
    files = world.table("files")
    created = dest not in files
    files.delete(f.path)
    g = put_file(world, dest, f.content, overwrite=overwrite)
    g = files.put(g.model_copy(update={"created": f.created}))
    return {"source": f.path, **_written(g, created)}


@tool("write", pre=[file_exists()])
def delete_file(world: WorkspaceWorld, path: str) -> dict[str, Any]:
    """Delete a file (a directory left empty disappears with it).

    Args:
        path: the file
    """
    f = get_file(world, path)
    world.table("files").delete(f.path)
    return {"deleted": f.path}


@tool("read")
def search_files(world: WorkspaceWorld, query: Annotated[str, Field(min_length=1, max_length=200)],
                 directory: str = "", limit: Annotated[int, Field(ge=1, le=100)] = 20) -> dict[str, Any]:
    """Find files whose path or content holds every word of the query (case-insensitive), with
    the best matching lines.

    Args:
        query: words to look for, e.g. "budget 2026"
        directory: search only below this directory ("" = everywhere)
        limit: most files returned (1-100)
    """
    words = query.casefold().split()
    if not words:
        raise ToolError("query has no words")
    d = _directory(world, directory)
    prefix = d + "/" if d else ""
    hits = []
    for f in world.table("files"):
        if not f.path.startswith(prefix):
            continue
        name, text = f.path.casefold(), f.content.casefold()
        if not all(w in name or w in text for w in words):
            continue
        scored = []
        if any(w in text for w in words):
            for i, line in enumerate(split_lines(f.content)):
                low = line.casefold()
                k = sum(w in low for w in words)
                if k:
                    scored.append((-k, i, line))
            scored.sort()
        lines = [{"line": i + 1, "text": line[:200]} for _, i, line in sorted(scored[:3], key=lambda t: t[1])]
        hits.append({"path": f.path, "in_name": all(w in name for w in words), "matching_lines": len(scored),
                     "lines": lines})
    hits.sort(key=lambda h: h["path"])
    out: dict[str, Any] = {"query": query, "total": len(hits), "files": hits[:limit]}
    if len(hits) > limit:
        out["note"] = f"showing {limit} of {len(hits)} files; add words or a directory to narrow"
    return out


# --- Markdown ---------------------------------------------------------------------------------


def _markdown(world: WorkspaceWorld, path: str) -> Any:
    f = get_file(world, path)
    if file_extension(f.path) != ".md":
        raise ToolError(f"{f.path} is not a Markdown (.md) file; use read_file")
    return f


@tool("read", pre=[file_exists()])
def markdown_outline(world: WorkspaceWorld, path: str) -> dict[str, Any]:
    """The headings of a Markdown file with their levels and line numbers.

    Args:
        path: a .md file
    """
    f = _markdown(world, path)
    heads = markdown_headings(f.content)
    return {"path": f.path, "headings": [{"level": lv, "title": t, "line": i + 1} for lv, t, i in heads]}


@tool("read", pre=[file_exists()])
def read_markdown_section(world: WorkspaceWorld, path: str, heading: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
    """Read one section of a Markdown file: its heading's text down to the next heading of the
    same or a higher level.

    Args:
        path: a .md file
        heading: the heading's title as markdown_outline shows it (case-insensitive)
    """
    f = _markdown(world, path)
    head, body, end = markdown_section(f.content, heading, f.path)
    lines = f.content.split("\n")
    level = len(lines[head]) - len(lines[head].lstrip("#"))
    return {"path": f.path, "heading": lines[head].lstrip("#").strip(), "level": level, "line": head + 1,
            "content": "\n".join(lines[body:end]).strip("\n")}


@tool("write", pre=[file_exists()])
def update_markdown_section(world: WorkspaceWorld, path: str, heading: Annotated[str, Field(min_length=1)],
                            content: str, add_if_missing: bool = False) -> dict[str, Any]:
    """Replace the body of one Markdown section (the heading stays), or add the section at the
    end when it is missing and add_if_missing is true.

    Args:
        path: a .md file
        heading: the section's heading title; with add_if_missing, leading "#" marks set the new level (default "##")
        content: the new body text of the section
        add_if_missing: append "## heading" with this body when the file has no such heading
    """
    f = _markdown(world, path)
    body = content.strip("\n")
    try:
        head, start, end = markdown_section(f.content, heading, f.path)
    except ToolError:
        if not add_if_missing or heading.strip().lstrip("#").strip().casefold() in {
            t.casefold() for _, t, _ in markdown_headings(f.content)
        }:
            raise
        marks = heading.strip()[: len(heading.strip()) - len(heading.strip().lstrip("#"))] or "##"
        if len(marks) > 6:
            raise ToolError("a Markdown heading has at most 6 '#' marks") from None
        title = heading.strip().lstrip("#").strip()
        base = f.content.rstrip("\n")
        text = (base + "\n\n" if base else "") + f"{marks} {title}\n\n" + (body + "\n" if body else "")
        g = put_file(world, f.path, text)
        return {**_written(g, False), "added": True}
    lines = f.content.split("\n")
    parts = [*lines[:start], ""] + ([body, ""] if body else [])
    text = "\n".join(parts + lines[end:])
    g = put_file(world, f.path, text)
    return {**_written(g, False), "added": False, "line": head + 1}


FILE_TOOLS = [list_files, read_file, file_info, write_file, append_file, edit_file, copy_file, move_file,
              delete_file, search_files, markdown_outline, read_markdown_section, update_markdown_section]
