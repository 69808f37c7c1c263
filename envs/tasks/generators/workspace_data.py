"""An episode's data drawn before and around its sessions (``workspace_episode.Episode`` holds
it): the letters and reserved words of drawn record keys, the batches of records (``Batches``,
each batch's rows made on its first read from the values drawn for it), the start of a persona's
episodes, the next workday, and the persona's seeded records (``seed_persona_tables``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.content_workspace import PersonaContent
from servicegym.envs.tasks.generators.workspace_plans import START
from servicegym.world_state.core import TIME_FORMAT

_RESERVED_KEYS = frozenset(("EUR", "CSV", "USD", "NDA", "MSA", "SOW", "UTM", "CEO", "JSON"))  # never a ticker
_TICKER_LETTERS = "ABCDEFGHJKLMNPQRSTVWXZ"  # ``content_workspace.ticker``'s


class Batches(Mapping[int, list[dict[str, str]]]):
    """An episode's batches of records, batch number -> its records (rows), each batch's made on
    its first read from the values drawn for it (``drawn``: number -> ``[(key, category,
    values)]``, filled by ``Episode.batch``): a reset to a new task draws the nine batches (the
    stream goes on after them) but makes only the rows its first session reads."""

    __slots__ = ("_p", "drawn", "_made")

    def __init__(self, p: PersonaContent) -> None:
        self._p = p
        self.drawn: dict[int, list[tuple[str, str, list[Any]]]] = {}
        self._made: dict[int, list[dict[str, str]]] = {}

    def __getitem__(self, n: int) -> list[dict[str, str]]:
        rows = self._made.get(n)
        if rows is None:
            row = self._p.row
            rows = self._made[n] = [row(key, cat, values) for key, cat, values in self.drawn[n]]
        return rows

    def __iter__(self) -> Iterator[int]:
        return iter(self.drawn)

    def __len__(self) -> int:
        return len(self.drawn)


_STARTS: dict[str, datetime] = {}  # persona -> its episodes' start (``_start_of``)


def _start_of(persona: str) -> datetime:
    """The start of a persona's episodes: its profile's ``start``, else ``START`` (parsed once per
    persona; datetimes are immutable)."""
    hit = _STARTS.get(persona)
    if hit is None:
        try:
            from servicegym.world_state.workspace import persona_profile

            start = persona_profile(persona).get("start")
        except (ImportError, KeyError):
            start = None
        hit = _STARTS[persona] = datetime.strptime(start if isinstance(start, str) and start else START, TIME_FORMAT)
    return hit


def next_workday(day: datetime) -> datetime:
    day += timedelta(days=1)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


def seed_persona_tables(persona: str, rng: random.Random) -> dict[str, dict[str, Any]]:
    """The persona's seeded records, table -> key -> entity, made without validating the persona
    module's own rows again (``personas.seeded_persona_tables``; the same draws and entities as
    ``build_persona_tables``)."""
    from servicegym.world_state.workspace.personas import seeded_persona_tables

    return seeded_persona_tables(persona, rng)[1]
