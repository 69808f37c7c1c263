"""The common workspace tools every persona gets, without the skill tools (files, CSV/JSON/
Markdown, mail, calendar, notes, contacts, to-dos, the overview): the tools a skill's script may
call. A module of its own so that ``skills.py`` reads them without importing the package, which
imports ``skills.py``."""

from __future__ import annotations

from servicegym.world_state.workspace.agenda import CALENDAR_TOOLS
from servicegym.world_state.workspace.contacts import CONTACT_TOOLS
from servicegym.world_state.workspace.csvfiles import CSV_TOOLS
from servicegym.world_state.workspace.files import FILE_TOOLS
from servicegym.world_state.workspace.jsonfiles import JSON_TOOLS
from servicegym.world_state.workspace.mail import MAIL_TOOLS
from servicegym.world_state.workspace.notes import NOTE_TOOLS
from servicegym.world_state.workspace.overview import OVERVIEW_TOOLS
from servicegym.world_state.workspace.todos import TODO_TOOLS

BASE_TOOLS = [*FILE_TOOLS, *CSV_TOOLS, *JSON_TOOLS, *MAIL_TOOLS, *CALENDAR_TOOLS, *NOTE_TOOLS, *CONTACT_TOOLS, *TODO_TOOLS,
              *OVERVIEW_TOOLS]

__all__ = ["BASE_TOOLS"]
