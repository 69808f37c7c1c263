"""Persona: analyst (tables, tools and seeded data). Filled in by the persona-tools work."""

from __future__ import annotations

import random
from typing import Any

from world_state.core import Entity
from world_state.tools import ToolSpec

SCHEMA: dict[str, type[Entity]] = {}
TOOLS: list[ToolSpec] = []
PROFILE: dict[str, Any] = {"key": "analyst", "title": "analyst", "owner": "", "owner_email": "", "organization": ""}


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    return {}
