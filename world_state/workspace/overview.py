"""The workspace at a glance: owner, persona, session and what each common table holds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from servicegym.world_state.core import TIME_FORMAT
from servicegym.world_state.tools import tool
from servicegym.world_state.workspace.world import WorkspaceWorld


@tool("read")
def workspace_summary(world: WorkspaceWorld) -> dict[str, Any]:
    """Who owns the workspace and what it holds: files by top-level directory, unread mail,
    drafts, events of the coming week, open and overdue to-dos, notes and contacts."""
    now = world.clock.now
    week = (now + timedelta(days=7)).strftime(TIME_FORMAT)
    today = now.strftime("%Y-%m-%d")
    dirs: dict[str, int] = {}
    for f in world.table("files"):
        top = f.path.split("/", 1)[0] if "/" in f.path else ""
        dirs[top] = dirs.get(top, 0) + 1
    mail = world.table("mail")
    todos = [t for t in world.table("todos") if t.status == "open"]
    return {
        "owner": world.extra.get("owner", ""),
        "owner_email": world.extra.get("owner_email", ""),
        "persona": world.persona,
        "session": world.extra.get("session"),
        "now": world.clock.text(),
        "files": len(world.table("files")),
        "directories": [{"directory": d, "files": n} for d, n in sorted(dirs.items())],
        "unread_mail": sum(1 for m in mail if m.folder == "inbox" and not m.read),
        "drafts": sum(1 for m in mail if m.folder == "drafts"),
        "upcoming_events": sum(1 for e in world.table("calendar")
                               if e.status == "confirmed" and world.clock.text() <= e.start < week),
        "open_todos": len(todos),
        "overdue_todos": sum(1 for t in todos if t.due and t.due < today),
        "notes": len(world.table("notes")),
        "contacts": len(world.table("contacts")),
    }


OVERVIEW_TOOLS = [workspace_summary]
