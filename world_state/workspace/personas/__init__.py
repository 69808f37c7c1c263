"""Persona modules: each adds its own tables, tools and seeded data to the workspace.

A persona module defines:
- ``SCHEMA``: table name -> Entity model (names prefixed by the persona, e.g. ``rx_prescriptions``);
- ``TOOLS``: its ``@tool`` specs (typed, schema-derived, like every other tool);
- ``PROFILE``: ``{"key", "title", "owner", "owner_email", "organization"}`` defaults;
- ``seed_tables(rng: random.Random) -> dict[str, list[dict]]``: the persona's own records, varied
  by the seed (the project's own content; no third-party text).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from world_state.core import Entity
from world_state.tools import ToolSpec

from . import analyst, legal, marketer, pharmacist, researcher

PERSONAS: dict[str, ModuleType] = {
    "researcher": researcher,
    "marketer": marketer,
    "legal": legal,
    "pharmacist": pharmacist,
    "analyst": analyst,
}

PERSONA_SCHEMA: dict[str, type[Entity]] = {}
for _m in PERSONAS.values():
    for _name, _model in _m.SCHEMA.items():
        if _name in PERSONA_SCHEMA:
            raise RuntimeError(f"table {_name} declared by two personas")
        PERSONA_SCHEMA[_name] = _model


def persona_tools(persona: str) -> list[ToolSpec]:
    return list(PERSONAS[persona].TOOLS)


def persona_profile(persona: str) -> dict[str, Any]:
    return dict(PERSONAS[persona].PROFILE)
