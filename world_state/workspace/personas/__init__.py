"""Persona modules: each adds its own tables, tools and seeded data to the workspace.

A persona module defines:
- ``SCHEMA``: table name -> Entity model (names prefixed by the persona, e.g. ``rx_prescriptions``);
- ``TOOLS``: its ``@tool`` specs (typed, schema-derived, like every other tool);
- ``PROFILE``: ``{"key", "title", "owner", "owner_email", "organization", "domain", "start"}``: who
  the persona is, the one source for the generated sessions' text and the seeded records;
- ``seed_tables(rng: random.Random) -> dict[str, list[dict]]``: the persona's own records, varied
  by the seed (the project's own content; no third-party text).
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

from servicegym.world_state.core import Entity
from servicegym.world_state.tools import ToolSpec
from servicegym.world_state.vouched import vouched_entities
from servicegym.world_state.workspace.personas import analyst, legal, marketer, pharmacist, researcher

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


def build_persona_tables(persona: str, rng: random.Random) -> dict[str, dict[str, Entity]]:
    """The persona's seeded records, validated by its ``SCHEMA`` models, keyed by table then row key
    (``WorkspaceWorld(now, tables=...)``'s input). Raises ValueError on a bad row (a defect)."""
    module = PERSONAS[persona]
    out: dict[str, dict[str, Entity]] = {}
    for name, rows in module.seed_tables(rng).items():
        model = module.SCHEMA[name]
        table: dict[str, Entity] = {}
        for raw in rows:
            row = model.model_validate(raw)
            if row.key in table:
                raise ValueError(f"{persona}: duplicate key {row.key!r} in {name}")
            table[row.key] = row
        out[name] = table
    return out


def seeded_persona_tables(persona: str, rng: random.Random) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Entity]]]:
    """``(rows, tables)``: the persona's seeded records as ``seed_tables`` writes them and the same
    records as ``build_persona_tables`` gives them, made without validation (``vouched_entities``:
    the persona modules write every field, in order, of its type, an int where a float is due
    being all validation changes; ``tests/test_workspace_reset_fast.py`` holds them to it). The
    same draws as ``build_persona_tables``; ValueError on a duplicate key."""
    module = PERSONAS[persona]
    raw = module.seed_tables(rng)
    out: dict[str, dict[str, Entity]] = {}
    for name, rows in raw.items():
        table: dict[str, Entity] = {}
        for row in vouched_entities(module.SCHEMA[name], rows):
            if row.key in table:
                raise ValueError(f"{persona}: duplicate key {row.key!r} in {name}")
            table[row.key] = row
        out[name] = table
    return raw, out
