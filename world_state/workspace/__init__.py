"""Persona workspaces (pi-Bench): files, mail, calendar, notes, contacts, to-dos, plus each
persona's own records and tools."""

from __future__ import annotations

from servicegym.world_state.workspace.base_tools import BASE_TOOLS  # noqa: E402
from servicegym.world_state.workspace.personas import PERSONA_SCHEMA, PERSONAS, persona_profile, persona_tools  # noqa: E402
from servicegym.world_state.workspace.skills import SKILL_TOOLS  # noqa: E402
from servicegym.world_state.workspace.world import (
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
    get_file,
    normalize_path,
    put_file,
)

_clash = set(COMMON_SCHEMA) & set(PERSONA_SCHEMA)
if _clash:
    raise RuntimeError(f"persona tables clash with common tables: {sorted(_clash)}")
# the world's schema: the common tables and every persona's (the personas import the world, so
# the world cannot import them; the package that holds both joins them)
WorkspaceWorld.schema = {**COMMON_SCHEMA, **PERSONA_SCHEMA}

# the common tools every persona gets (files, CSV/JSON/Markdown, mail, calendar, notes, contacts, to-dos,
# and the skills staged in the workspace: list_skills, read_skill, run_skill)
COMMON_TOOLS = [*BASE_TOOLS, *SKILL_TOOLS]

__all__ = [
    "COMMON_SCHEMA", "COMMON_TOOLS", "FILE_TYPES", "MAX_FILE_CHARS", "MAX_WORKSPACE_CHARS", "PERSONAS", "Contact", "Event", "File",
    "Mail", "Note", "Todo", "WorkspaceWorld", "get_file", "normalize_path", "put_file", "persona_profile", "persona_tools",
]
