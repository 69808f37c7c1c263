"""To-do tools over the ``todos`` table; ids from the counter ``T``; due dates ``YYYY-MM-DD``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from servicegym.world_state.core import date_text, unvalidated
from servicegym.world_state.tools import ToolError, exists, field_in, tool
from servicegym.world_state.workspace.world import Todo, WorkspaceWorld, new_id

TODO_SOURCES = ("list_todos", "add_todo")
TODO = exists("todos", "todo_id", "to-do", produced_by=TODO_SOURCES)
Priority = Literal["low", "normal", "high"]
Title = Annotated[str, Field(min_length=1, max_length=200)]
Notes = Annotated[str, Field(max_length=5000)]
_RANK = {"high": 0, "normal": 1, "low": 2}


_DUES: dict[str, str] = {}  # a valid date's text -> its canonical form (a pure function; bounded)
_MAX_DUES = 4096


def _due(text: str, what: str = "due") -> str:
    hit = _DUES.get(text)
    if hit is not None:
        return hit
    t = text.strip()
    if not t:
        return ""
    try:
        out = date_text(t)
    except ValueError:
        raise ToolError(f"{what} {text!r} must have the form YYYY-MM-DD (or be empty for no date)") from None
    if len(_DUES) < _MAX_DUES and type(text) is str:
        _DUES[text] = out
    return out


_TODO_SET = frozenset(("id", "title", "due", "priority", "notes"))  # the fields ``add_todo`` gives


@tool("write")
def add_todo(world: WorkspaceWorld, title: Title, due: str = "", priority: Priority = "normal",
             notes: Notes = "") -> Todo:
    """Add an open to-do.

    Args:
        title: what to do
        due: due date YYYY-MM-DD ("" for none)
        priority: low, normal or high
        notes: details
    """
    fields = {"id": new_id(world, "todos", "T"), "title": title.strip(), "due": _due(due), "priority": priority,
              "status": "open", "notes": notes}
    if type(fields["title"]) is str and type(notes) is str and priority in _RANK:
        # the arguments are validated (``Title``, ``Priority``, ``Notes``) and ``_due`` gives a date's text:
        # the row ``Todo(...)`` makes, without validating them again
        t = unvalidated(Todo, fields, set(_TODO_SET))
    else:
        t = Todo(**{k: v for k, v in fields.items() if k != "status"})
    return world.tables["todos"].insert(t)  # shown as its JSON, as every row


@tool("read")
def list_todos(world: WorkspaceWorld, status: Literal["open", "done", "all"] = "open", due_before: str | None = None,
               priority: Priority | None = None) -> dict[str, Any]:
    """List to-dos by due date (undated last), then priority; overdue ones are flagged.

    Args:
        status: open, done or all
        due_before: only to-dos due before this day, YYYY-MM-DD
        priority: only this priority
    """
    limit = _due(due_before, "due_before") if due_before is not None else ""
    if due_before is not None and not limit:
        raise ToolError("due_before must be a date YYYY-MM-DD")
    today = world.clock.now.strftime("%Y-%m-%d")
    rows = [t for t in world.tables["todos"] if (status == "all" or t.status == status)
            and (not limit or (t.due and t.due < limit)) and (priority is None or t.priority == priority)]
    rows.sort(key=lambda t: (not t.due, t.due, _RANK[t.priority], t.id))
    return {"status": status, "total": len(rows), "today": today,
            "todos": [{**t.model_dump(mode="json"), "overdue": t.status == "open" and bool(t.due) and t.due < today}
                      for t in rows]}


@tool("write", pre=[TODO, field_in("todos", "todo_id", "to-do", ["open"])])
def complete_todo(world: WorkspaceWorld, todo_id: str) -> dict[str, Any]:
    """Mark an open to-do done.

    Args:
        todo_id: the to-do id
    """
    return world.tables["todos"].update(todo_id, status="done").model_dump(mode="json")


@tool("write", pre=[TODO])
def update_todo(world: WorkspaceWorld, todo_id: str, title: Title | None = None, due: str | None = None,
                priority: Priority | None = None, notes: Notes | None = None,
                status: Literal["open", "done"] | None = None) -> dict[str, Any]:
    """Change the given fields of a to-do (status "open" reopens a done one).

    Args:
        todo_id: the to-do id
        title: new title
        due: new due date YYYY-MM-DD ("" removes it)
        priority: low, normal or high
        notes: new details
        status: open or done
    """
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title.strip()
    if due is not None:
        changes["due"] = _due(due)
    for key, value in (("priority", priority), ("notes", notes), ("status", status)):
        if value is not None:
            changes[key] = value
    if not changes:
        raise ToolError("nothing to change; give at least one field")
    return world.tables["todos"].update(todo_id, **changes).model_dump(mode="json")


@tool("write", pre=[TODO])
def delete_todo(world: WorkspaceWorld, todo_id: str) -> dict[str, Any]:
    """Delete a to-do.

    Args:
        todo_id: the to-do id
    """
    world.tables["todos"].delete(todo_id)
    return {"deleted": todo_id}


TODO_TOOLS = [add_todo, list_todos, complete_todo, update_todo, delete_todo]
