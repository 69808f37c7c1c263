"""Persona workspaces (pi-Bench): files, mail, calendar, notes, contacts, to-dos, plus each
persona's own records and tools."""

from __future__ import annotations

from .world import (
    COMMON_SCHEMA,
    FILE_TYPES,
    MAX_FILE_CHARS,
    MAX_WORKSPACE_CHARS,
    Contact,
    Event,
    File,
    Mail,
    Note,
    Todo,
    WorkspaceWorld,
    _install_schema,
    get_file,
    normalize_path,
    put_file,
)

_install_schema()

from .agenda import CALENDAR_TOOLS  # noqa: E402
from .contacts import CONTACT_TOOLS  # noqa: E402
from .csvfiles import CSV_TOOLS  # noqa: E402
from .files import FILE_TOOLS  # noqa: E402
from .jsonfiles import JSON_TOOLS  # noqa: E402
from .mail import MAIL_TOOLS  # noqa: E402
from .notes import NOTE_TOOLS  # noqa: E402
from .overview import OVERVIEW_TOOLS  # noqa: E402
from .personas import PERSONAS, persona_profile, persona_tools  # noqa: E402
from .todos import TODO_TOOLS  # noqa: E402

# the common tools every persona gets (files, CSV/JSON/Markdown, mail, calendar, notes, contacts, to-dos)
COMMON_TOOLS = [*FILE_TOOLS, *CSV_TOOLS, *JSON_TOOLS, *MAIL_TOOLS, *CALENDAR_TOOLS, *NOTE_TOOLS, *CONTACT_TOOLS,
                *TODO_TOOLS, *OVERVIEW_TOOLS]

__all__ = [
    "COMMON_SCHEMA", "COMMON_TOOLS", "FILE_TYPES", "MAX_FILE_CHARS", "MAX_WORKSPACE_CHARS", "PERSONAS", "Contact", "Event", "File",
    "Mail", "Note", "Todo", "WorkspaceWorld", "get_file", "normalize_path", "put_file", "persona_profile", "persona_tools",
]
