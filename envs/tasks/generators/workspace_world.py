"""The workspace of a generated episode's task: its tables at the episode's start (``initial_tables``:
the files, contacts, mails, to-dos and the persona's seeded records; ``file_rows``,
``persona_table_rows``, ``persona_table_names``), and the persona's seeded records the generator
hands to the env once per task it made (``seeded_tables``).
"""

from __future__ import annotations

import weakref
from datetime import timedelta
from typing import Any

from servicegym.envs.tasks.generators.workspace_episode import Episode
from servicegym.envs.tasks.generators.workspace_plans import SEEDED_MAIL_IDS
from servicegym.envs.tasks.model import Task
from servicegym.world_state.core import TIME_FORMAT


def initial_tables(ep: Episode, persona_rows: bool = True, files: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The workspace at the episode's start: data files, a README, contacts, a few mails, events and
    to-dos of the persona's own, and the persona's seeded records (without ``persona_rows``, each
    persona table an empty list, in its place, for ``persona_table_rows`` to fill; without
    ``files``, the files table an empty list, for ``file_rows`` to fill)."""
    p = ep.p
    tables: dict[str, list[dict[str, Any]]] = {"files": file_rows(ep) if files else []}
    contacts = [{"id": f"CT{i:03d}", "name": c["name"], "email": c["email"], "role": c["role"], "organization": p.organization}
                for i, c in enumerate(ep.people, 1)]
    adv = ep.advisor
    mail = [{"id": SEEDED_MAIL_IDS[0], "folder": "inbox", "sender": adv["email"], "to": [p.owner_email],
             "subject": f"{p.report['title']}s", "body": f"Hi,\n\nplease keep sending me the {p.report['title'].lower()}s as they are ready.\n\n{adv['first']}",
             "time": (ep.start - timedelta(days=3)).strftime(TIME_FORMAT)},
            {"id": SEEDED_MAIL_IDS[1], "folder": "inbox", "sender": ep.people[3]["email"], "to": [p.owner_email],
             "subject": "Data files", "body": f"The {p.batch_noun} files are all in {p.data_dir}/ now.\n\n{ep.people[3]['first']}",
             "time": (ep.start - timedelta(days=1)).strftime(TIME_FORMAT)}]
    todos = [{"id": "T001", "title": "Tidy the shared folder", "priority": "low"}]
    tables.update(contacts=contacts, mail=mail, todos=todos)
    if persona_rows:
        tables.update(persona_table_rows(ep))
    else:
        for name in persona_table_names(ep):
            tables[name] = []
    return tables


def file_rows(ep: Episode) -> list[dict[str, Any]]:
    """The files at the episode's start (before its skills): the README, then the data files."""
    p = ep.p
    now = ep.start.strftime(TIME_FORMAT)
    readme = (f"# {p.organization} workspace of {p.owner}\n\nData files ({p.noun}s by {p.batch_noun}) are in {p.data_dir}/.\n"
              f"Finished documents go next to them in their own folders.\n")
    files = [{"path": "README.md", "content": readme, "created": now, "modified": now}]
    files += [{**f, "created": now, "modified": now} for f in ep.data_files()]
    return files


def persona_table_rows(ep: Episode) -> dict[str, list[dict[str, Any]]]:
    """The persona's seeded records as the world's rows (their JSON dumps), table by table."""
    return {name: [r.model_dump(mode="json") for r in rows.values()] for name, rows in ep.seeded.items()}


_PERSONA_TABLES: dict[str, tuple[str, ...]] = {}  # persona -> the tables its seeded records fill, in order


def persona_table_names(ep: Episode) -> tuple[str, ...]:
    """The tables the persona's seeded records fill, in their order (the same for every seed of a
    persona: each module's ``seed_tables`` returns one dict literal; learnt from the first episode
    of the persona made here, and checked by every episode that makes its records)."""
    names = _PERSONA_TABLES.get(ep.persona)
    if names is None:
        names = _PERSONA_TABLES[ep.persona] = tuple(ep.seeded)
    return names


# the generator's episode of each generated task (for its persona's seeded records, made once),
# until the env builds the task's world: keyed by the task's id, with a weak reference that drops
# the entry when the task goes
_SEEDED: dict[int, tuple[weakref.ref[Task], Episode]] = {}


def _remember_seeded(task: Task, ep: Episode) -> None:
    key = id(task)
    _SEEDED[key] = (weakref.ref(task, lambda _ref, key=key: _SEEDED.pop(key, None)), ep)


def seeded_tables(task: Task) -> dict[str, dict[str, Any]] | None:
    """The persona tables (name -> key -> entity) the generator built for ``task``'s world, once:
    the first call for a task this module generated and vouched for hands them over (entities are
    immutable: a world that shares them replaces a row it writes in its own table), any other call
    returns None (build the tables from the task's rows)."""
    entry = _SEEDED.pop(id(task), None)
    if entry is None or entry[0]() is not task or not task.vouched_world:
        return None
    return entry[1].seeded
