"""Note tools over the ``notes`` table: short titled texts with tags, ids from the counter ``N``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.tools import ToolError, exists, tool
from servicegym.world_state.workspace.world import Note, WorkspaceWorld, new_id

NOTE_SOURCES = ("list_notes", "search_notes", "create_note")
NOTE = exists("notes", "note_id", "note", produced_by=NOTE_SOURCES)
Title = Annotated[str, Field(min_length=1, max_length=200)]
Body = Annotated[str, Field(max_length=50_000)]
Tag = Annotated[str, Field(min_length=1, max_length=40)]


def _tags(values: list[str] | None) -> list[str]:
    return list(dict.fromkeys(t.strip().casefold() for t in values or [] if t.strip()))


def _brief(n: Note) -> dict[str, Any]:
    return {"id": n.id, "title": n.title, "tags": n.tags, "modified": n.modified, "size": len(n.body)}


def _by_recency(rows: list[Note]) -> list[Note]:
    return sorted(rows, key=lambda n: (n.modified, n.id), reverse=True)


@tool("write")
def create_note(world: WorkspaceWorld, title: Title, body: Body, tags: list[Tag] | None = None) -> dict[str, Any]:
    """Create a note.

    Args:
        title: the note's title
        body: its text
        tags: tags for finding it later, e.g. ["meeting", "q3"]
    """
    now = world.clock.text()
    n = Note(id=new_id(world, "notes", "N"), title=title.strip(), body=body, tags=_tags(tags), created=now, modified=now)
    return world.table("notes").insert(n).model_dump(mode="json")


@tool("read")
def list_notes(world: WorkspaceWorld, tag: str | None = None, limit: Annotated[int, Field(ge=1, le=200)] = 50) -> dict[str, Any]:
    """List notes, most recently changed first (without bodies).

    Args:
        tag: only notes with this tag
        limit: most notes returned (1-200)
    """
    want = tag.strip().casefold() if tag else None
    rows = [n for n in world.table("notes") if want is None or want in n.tags]
    return {"total": len(rows), "notes": [_brief(n) for n in _by_recency(rows)[:limit]]}


@tool("read")
def search_notes(world: WorkspaceWorld, query: Annotated[str, Field(min_length=1, max_length=200)],
                 limit: Annotated[int, Field(ge=1, le=200)] = 20) -> dict[str, Any]:
    """Find notes whose title, body or tags hold every word of the query (case-insensitive).

    Args:
        query: words to look for
        limit: most notes returned (1-200)
    """
    words = query.casefold().split()
    if not words:
        raise ToolError("query has no words")
    hits = [n for n in world.table("notes")
            if all(w in f"{n.title}\n{n.body}\n{' '.join(n.tags)}".casefold() for w in words)]
    return {"query": query, "total": len(hits), "notes": [_brief(n) for n in _by_recency(hits)[:limit]]}


@tool("read", pre=[NOTE])
def read_note(world: WorkspaceWorld, note_id: str) -> dict[str, Any]:
    """Read one note in full.

    Args:
        note_id: the note id
    """
    return world.table("notes").require(note_id).model_dump(mode="json")


@tool("write", pre=[NOTE])
def update_note(world: WorkspaceWorld, note_id: str, title: Title | None = None, body: Body | None = None,
                tags: list[Tag] | None = None) -> dict[str, Any]:
    """Change the given fields of a note (tags replace the old ones).

    Args:
        note_id: the note id
        title: new title
        body: new text (replaces the old text; append_to_note adds instead)
        tags: new tag list
    """
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title.strip()
    if body is not None:
        changes["body"] = body
    if tags is not None:
        changes["tags"] = _tags(tags)
    if not changes:
        raise ToolError("nothing to change; give title, body or tags")
    return world.table("notes").update(note_id, modified=world.clock.text(), **changes).model_dump(mode="json")


@tool("write", pre=[NOTE])
def append_to_note(world: WorkspaceWorld, note_id: str, text: Annotated[str, Field(min_length=1, max_length=50_000)]) -> dict[str, Any]:
    """Add text at the end of a note, on a new line.

    Args:
        note_id: the note id
        text: the text to add
    """
    n = world.table("notes").require(note_id)
    body = n.body + ("\n" if n.body and not n.body.endswith("\n") else "") + text
    if len(body) > 50_000:
        raise ToolError("a note holds at most 50000 characters; save long text as a file with write_file")
    return world.table("notes").update(n.id, body=body, modified=world.clock.text()).model_dump(mode="json")


@tool("write", pre=[NOTE])
def delete_note(world: WorkspaceWorld, note_id: str) -> dict[str, Any]:
    """Delete a note.

    Args:
        note_id: the note id
    """
    world.table("notes").delete(note_id)
    return {"deleted": note_id}


NOTE_TOOLS = [create_note, list_notes, search_notes, read_note, update_note, append_to_note, delete_note]
