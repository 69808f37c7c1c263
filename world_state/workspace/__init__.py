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

from .personas import PERSONAS, persona_profile, persona_tools  # noqa: E402

__all__ = [
    "COMMON_SCHEMA", "FILE_TYPES", "MAX_FILE_CHARS", "MAX_WORKSPACE_CHARS", "PERSONAS", "Contact", "Event", "File",
    "Mail", "Note", "Todo", "WorkspaceWorld", "get_file", "normalize_path", "put_file", "persona_profile", "persona_tools",
]
