"""The builder of one persona episode (``Episode``): its data files, conventions and session order
(``begin``), each session in turn (``build_next``) from the session kinds (a report, a table, a
JSON document, a summary mail, a meeting, a to-do, a note, a record in the persona's own tables),
and the checks every built episode passes (``finish``: targeted questions, pi-Bench's shape, the
conventions drawn), with the facet combinations whose cues have passed (``_CUES_CHECKED``).
The session kinds' builders live in ``workspace_sessions`` (``SessionKinds``, ``Episode``'s base).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import task_rng
from servicegym.envs.tasks.generators.content_workspace import (
    GENERIC_QUESTIONS,
    PERSONA_CONTENT,
    PERSONA_ORDER,
    PersonaContent,
    draw_values,
    people,
)
from servicegym.envs.tasks.generators.workspace_data import (
    _RESERVED_KEYS,
    _TICKER_LETTERS,
    Batches,
    _start_of,
    next_workday,
    seed_persona_tables,
)
from servicegym.envs.tasks.generators.workspace_labels import check_structure
from servicegym.envs.tasks.generators.workspace_plans import (
    CUES,
    DOMAIN,
    SESSIONS,
    VERSION,
    Facet,
    Ops,
    Plan,
    csv_text,
    item,
)
from servicegym.envs.tasks.generators.workspace_sessions import SessionKinds
from servicegym.simulators.scripted_user import cue_pattern
from servicegym.simulators.workspace_user import questions_in
from servicegym.world_state.core import TIME_FORMAT


class Episode(SessionKinds):
    """Builds one persona's 20 sessions over one seeded world."""

    def __init__(self, persona: str, seed: int, difficulty: int, split: str) -> None:
        self.rng = task_rng(DOMAIN, f"{persona}/{split}", seed, difficulty, VERSION)
        self.p: PersonaContent = PERSONA_CONTENT[persona]
        self.persona = persona
        self.difficulty = difficulty
        self.seed, self.split = seed, split
        rng = self.rng
        self.start = _start_of(persona)
        self.people = people(rng, self.p)
        self.advisor = self.people[0]
        self.exclude_cat = self.p.extra.get("exclude") or rng.choice(self.p.categories)
        self._keys: set[str] = set()
        self.specs: list[dict[str, Any]] = []  # the sessions' specs, made once by ``build``
        self._key_n = 100 + 100 * PERSONA_ORDER.index(persona)
        self.batches = Batches(self.p)  # batch number -> its records, made on first read
        self.plans: list[Plan] = []
        self.meeting_days: dict[str, str] = {}  # meeting title -> its day
        self.mail_ids: list[str] = []  # the ids of the mails the golden route sends, in order
        # the persona's seeded records come from a stream of their own, seeded by this draw: they are
        # made on first use (``seeded``), the same records whenever that is
        self._seeded_seed = rng.randrange(2**31)
        self._seeded: dict[str, dict[str, Any]] | None = None
        # set by ``begin``: the sessions still to build (slot, facet keys, builder), in order, and
        # what the episode's sessions are known to be before they are built
        self._queue: list[tuple[tuple[str, int], list[str] | None, Callable[[list[str] | None], Plan]]] = []
        self._next = 0
        self._day = self.start
        self._members: dict[str, list[int]] = {}
        self.slots: list[tuple[str, int]] = []  # each session's (group or "", position in it or in the singles)
        self.precursors: list[list[int]] = []
        self.conv: dict[str, Any] | None = None  # the conventions the episode's checks hold (``workspace_skills``)
        self.facet_total = 0  # the hidden intents of all sessions

    @property
    def seeded(self) -> dict[str, dict[str, Any]]:
        """The persona's seeded records, table -> key -> entity (made on first use)."""
        made = self._seeded
        if made is None:
            made = self._seeded = seed_persona_tables(self.persona, random.Random(self._seeded_seed))
        return made


    # --- data -------------------------------------------------------------------------------
    def _key(self) -> str:
        if not self.p.key_prefix:
            # ``ticker(rng, self._keys | _RESERVED_KEYS)``'s draws, without the union made each time
            choice, keys = self.rng.choice, self._keys
            while True:
                key = choice(_TICKER_LETTERS) + choice(_TICKER_LETTERS) + choice(_TICKER_LETTERS)
                if key not in keys and key not in _RESERVED_KEYS:
                    keys.add(key)
                    return key
        self._key_n += self.rng.randint(1, 4)  # (``KEY_STEP``)
        return f"{self.p.key_prefix}{self._key_n}"

    def batch(self, n: int, need_excluded: bool = False) -> None:
        """Draw batch ``n`` of records (distinct metrics, not already in metric order), a data file.

        Only the draws are made here (each record's values, ``PersonaContent.draws``); the records
        and the file's text are made from them on first read (``batches``, ``data_files``)."""
        p, rng = self.p, self.rng
        draws, keyed, prefix, value_metric, excluded = p.draws, p.keyed_draws, p.key_prefix, p.value_metric, self.exclude_cat
        while True:
            size = rng.randint(5, 7)
            cats = draw_values(rng, (p.category_draw,) * size)  # ``rng.choice(p.categories)`` each
            if need_excluded:
                cats[rng.randrange(size)] = excluded
                others = [c for c in p.categories if c != excluded]
                while sum(c != excluded for c in cats) < 3:
                    cats[cats.index(excluded)] = rng.choice(others)
                    cats[rng.randrange(size)] = excluded
                if excluded not in cats:
                    cats[0] = excluded
            else:
                cats = [c if c != excluded else rng.choice(p.categories) for c in cats]
            saved = set(self._keys), self._key_n
            if prefix:  # each record's key (``_key``: its number's step drawn first) and values in one go
                drawn = []
                for c in cats:
                    values = draw_values(rng, keyed[c])
                    self._key_n += values[0]
                    drawn.append((f"{prefix}{self._key_n}", c, values[1:]))
            else:
                drawn = [(self._key(), c, draw_values(rng, draws[c])) for c in cats]
            metrics = [value_metric(c, v) for _key, c, v in drawn]
            # distinct metrics, and neither the records nor those kept by the exclusion already in
            # metric order (``sorted(rs, key=metric, reverse=True) != rs``: with distinct metrics, a
            # strictly falling run of metrics)
            if len(set(metrics)) == len(metrics):
                kept = [m for m, (_key, c, _v) in zip(metrics, drawn) if c != excluded]
                if all(len(ms) < 2 or not all(a > b for a, b in zip(ms, ms[1:])) for ms in (metrics, kept)):
                    break
            self._keys, self._key_n = saved
        self.batches.drawn[n] = drawn

    def data_files(self) -> list[dict[str, str]]:
        """The data files of the batches drawn, in order: ``{"path", "content"}`` (the CSV text)."""
        p = self.p
        return [{"path": self.data_path(n), "content": csv_text([p.columns] + [[r[c] for c in p.columns] for r in self.batches[n]])}
                for n in self.batches.drawn]

    def data_path(self, n: int) -> str:
        return f"{self.p.data_dir}/{self.p.batch_noun}_{n:02d}.csv"

    def key(self, r: dict[str, str]) -> str:
        return r[self.p.columns[0]]

    def label(self, r: dict[str, str]) -> str:
        return r[self.p.columns[1]]

    def cat(self, r: dict[str, str]) -> str:
        return r[self.p.columns[2]]

    def included(self, recs: list[dict[str, str]], exclude: bool) -> list[dict[str, str]]:
        return [r for r in recs if not (exclude and self.cat(r) == self.exclude_cat)]

    def best(self, recs: list[dict[str, str]]) -> dict[str, str]:
        return max(recs, key=self.p.metric)

    # --- facets shared by several kinds -------------------------------------------------------
    def exclude_facet(self, path: str, recs: list[dict[str, str]], carried: bool, earlier: str) -> Facet:
        p = self.p
        dropped = [self.key(r) for r in recs if self.cat(r) == self.exclude_cat]
        rule = f"leave out every {p.noun} of the {self.exclude_cat} {p.category_noun}: {p.exclusion_reason}"
        if carried:
            reveal = f"Same rule as before: {rule}."
            answer = f"Yes, as last time ({earlier}): {rule}."
        else:
            reveal = f"Please {rule}. That goes for every export from now on."
            answer = f"Yes: {rule}. Keep that rule for every export from now on."
        return Facet("exclude", item("exclude", "ws.file_lacks", f"no {self.exclude_cat} {p.noun}s in {path}", path=path, texts=dropped),
                     reveal, answer, CUES["exclude"], f"Should I exclude any {p.category_noun} from it?", carried,
                     [Ops.read(earlier)] if carried else [])

    def units_facet(self, path: str, recs: list[dict[str, str]]) -> Facet:
        p = self.p
        return Facet("units", item("units", "ws.file_contains", f"numbers in {path} in the house format", path=path,
                                   texts=[p.unit(r) for r in recs]),
                     f"Write the numbers in my usual format: {p.unit_words}.", f"Use {p.unit_words}.",
                     CUES["units"], "How should the numbers be formatted?")

    def best_facet(self, path: str, recs: list[dict[str, str]]) -> Facet:
        p = self.p
        b = self.key(self.best(recs))
        return Facet("best", item("best", "ws.file_contains", f"{path} names the best {p.noun}", path=path, texts=[f"Best: {b}"]),
                     f"End the list with a line 'Best: <id>' naming the {p.noun} with the {p.metric_words}.",
                     f"Yes, add a line 'Best: <id>' for the {p.noun} with the {p.metric_words}.",
                     CUES["best"], f"Should I highlight the best {p.noun}?")

    # --- the episode --------------------------------------------------------------------------
    @property
    def owner(self) -> str:
        return self.p.owner

    def build(self) -> None:
        """Every session, in order (``begin``, ``build_next`` until none is left, ``finish``)."""
        self.begin()
        while self.build_next() is not None:
            pass
        self.finish()

    def persona_facets(self) -> int:
        """How many hidden intents the persona-record session has (``persona_record``)."""
        return 1 if self.difficulty <= 0 else 2

    def begin(self) -> None:
        """The episode's data files, conventions and session order: everything the sessions draw
        before the first of them is built (``build_next`` builds them in order)."""
        rng, p = self.rng, self.p
        d = self.difficulty
        for n in (1, 2, 3):
            self.batch(n)
        for n in (4, 5, 6):
            self.batch(n, need_excluded=True)
        for n in (7, 8, 9):
            self.batch(n)
        sections = rng.choice(p.report["sections"])
        cc = rng.sample(self.people[1:], 2)
        meet_people = rng.sample(self.people[1:], 3)
        room = rng.choice(p.rooms)
        label = rng.choice(p.project_labels)
        tags = rng.choice(p.tag_options)
        titles_m = rng.sample(p.meeting["titles"], 3)
        titles_t = rng.sample(p.todo["titles"], 3)
        titles_n = rng.sample(p.note["titles"], 3)
        # what the checks of the sessions that set each convention hold (``workspace_skills.conventions``;
        # ``finish`` compares them with the built checks)
        self.conv = {"sections": list(sections), "exclude": self.exclude_cat, "cc": [c["email"] for c in cc],
                     "attendees": [a["email"] for a in meet_people[1:]], "room": room, "label": label, "tags": list(tags)}

        def trim(fs: list[str]) -> list[str]:
            return fs[:2] if d <= 0 else fs

        rep = lambda n: f"{p.report['dir']}/{p.report['stem']}_{p.batch_noun}_{n:02d}.md"  # noqa: E731
        tab = lambda n: f"tables/{p.noun}s_{p.batch_noun}_{n:02d}.csv"  # noqa: E731
        rtitle = lambda n: f"{p.report['title']}: {p.batch_noun} {n}"  # noqa: E731
        # (group, [(facet keys, builder of those facets)]) in each group's order; builders run once the
        # session date is known. A builder given keys makes one hidden intent per key.
        Make = Callable[[Any], Plan]
        groups: list[tuple[str, list[tuple[list[str] | None, Make]]]] = [
            ("format", [(trim(["sections", "best", "units"]), lambda fs: self.report(1, fs, set(), sections)),
                        (trim(["sections", "units"]), lambda fs: self.report(2, fs, {"sections"}, sections, rep(1))),
                        (trim(["sections", "best"]), lambda fs: self.report(3, fs, {"sections"}, sections, rep(2)))]),
            ("exclusion", [(trim(["exclude", "sort"]), lambda fs: self.table(4, fs, set())),
                           (trim(["exclude", "derived"]), lambda fs: self.table(5, fs, {"exclude"}, tab(4))),
                           (trim(["exclude", "units", "best"]),
                            lambda fs: self.report(6, fs, {"exclude"}, None, tab(5), side=True))]),
            ("recipients", [(trim(["cc", "attach"]), lambda fs: self.mail(rep(1), rtitle(1), self.batches[1], fs, set(), cc)),
                            (trim(["cc", "attach", "mention"]),
                             lambda fs: self.mail(rep(2), rtitle(2), self.batches[2], fs, {"cc"}, cc)),
                            (trim(["cc", "mention"]), lambda fs: self.mail(rep(3), rtitle(3), self.batches[3], fs, {"cc"}, cc))]),
            ("meetings", [(trim(["attendees", "location"]),
                           lambda fs: self.meeting(titles_m[0], self.meet_time(), meet_people[0], fs, set(), meet_people[1:], room, [])),
                          (trim(["attendees", "location", "duration"]),
                           lambda fs: self.meeting(titles_m[1], self.meet_time(), meet_people[0], fs, {"attendees", "location"},
                                                   meet_people[1:], room, [], since=self.meeting_days[titles_m[0]]))]),
            ("todo-label", [(trim(["prefix", "priority"]), lambda fs: self.todo(titles_t[0], fs, set(), label, self.due(), "")),
                            (trim(["prefix", "due"]), lambda fs: self.todo(titles_t[1], fs, {"prefix"}, label, self.due(), ""))]),
            ("note-tags", [(trim(["tags", "mention"]), lambda fs: self.note(titles_n[0], self.points(2), fs, set(), tags, self.point())),
                           (trim(["tags", "mention"]), lambda fs: self.note(titles_n[1], self.points(2), fs, {"tags"}, tags, self.point()))]),
        ]
        singles: list[tuple[list[str] | None, Make]] = [
            (trim(["duration", "agenda"]),
             lambda fs: self.meeting(titles_m[2], self.meet_time(), rng.choice(self.people), fs, set(), [], room, self.points(2))),
            (trim(["due", "notes", "priority"]), lambda fs: self.todo(titles_t[2], fs, set(), label, self.due(), self.data_path(7))),
            (trim(["schema", "count"]), lambda fs: self.json_doc(7, fs)),
            (None, lambda _fs: self.persona_record()),
            (trim(["sort", "derived"]), lambda fs: self.table(9, fs, set())),
        ]
        # order: a random interleaving that keeps each group's order and mails after their reports
        queues = {g: list(range(len(b))) for g, b in groups}
        done: dict[tuple[str, int], int] = {}
        order: list[tuple[str, int]] = []
        single_left = list(range(len(singles)))
        while len(order) < SESSIONS:
            heads = [(g, q[0]) for g, q in queues.items() if q and (g != "recipients" or ("format", q[0]) in done)]
            heads += [("", i) for i in single_left]
            g, i = heads[rng.randrange(len(heads))]
            order.append((g, i))
            done[(g, i)] = len(order)
            if g:
                queues[g].pop(0)
            else:
                single_left.remove(i)
        builders = dict(groups)
        self._queue = [((g, i), *(builders[g][i] if g else singles[i])) for g, i in order]
        self.slots = order
        members: dict[str, list[int]] = {}
        for idx, (g, _i) in enumerate(order, 1):
            self.precursors.append(list(members.get(g, [])) if g else [])
            if g:
                members.setdefault(g, []).append(idx)
        self.facet_total = sum(len(fs) if fs is not None else self.persona_facets() for _slot, fs, _make in self._queue)
        self._day = self.start

    def build_next(self) -> Plan | None:
        """The next session's plan (its spec appended to ``specs``), or None when all are built."""
        k = self._next
        if k >= len(self._queue):
            return None
        (g, _i), fs, make = self._queue[k]
        self._next = k + 1
        day = self._day
        self.day_dt = day
        self.day = day.strftime("%Y-%m-%d")
        plan = make(fs)
        idx = k + 1
        plan.index, plan.start = idx, day.strftime(TIME_FORMAT)
        if g:
            plan.group = g
            plan.precursors = list(self.precursors[k])
        self.plans.append(plan)
        self._day = next_workday(day)
        self.specs.append(plan.to_spec())
        return plan

    def release(self) -> None:
        """Drop the plans and the builders still queued: each closes over the episode, so without
        the cycle the episode (a thousand objects) goes at once when its task goes, not at the
        cyclic collector's next pass. No session can be built after."""
        self.plans.clear()
        self._queue = []

    def finish(self) -> None:
        """The checks every built episode passes: targeted questions, pi-Bench's shape, and the
        conventions and intent count known before the sessions were built."""
        self.check_cues()
        check_structure(self.specs)
        from servicegym.envs.tasks.generators.workspace_skills import conventions_of_checks

        if conventions_of_checks(self) != self.conv or sum(len(pl.facets) for pl in self.plans) != self.facet_total:
            raise AssertionError(f"{self.persona}: the conventions or intent count drawn differ from the sessions built")

    def meet_time(self) -> datetime:
        return next_workday(next_workday(self.day_dt)).replace(hour=self.rng.choice((10, 11, 14, 15)), minute=self.rng.choice((0, 30)))

    def due(self) -> str:
        return (self.day_dt + timedelta(days=self.rng.randint(3, 9))).strftime("%Y-%m-%d")

    _POINTS = ("check the numbers against last month", "ask for the raw export", "book time for the write-up",
               "compare with the baseline", "follow up on the open question from the last meeting", "share the draft early",
               "keep a log of every change", "double-check the dates")

    def points(self, k: int) -> list[str]:
        return [x[0].upper() + x[1:] + "." for x in self.rng.sample(self._POINTS, k)]

    def point(self) -> str:
        return self.rng.choice(("Remember to thank the reviewers.", "Flag anything unusual early.", "Keep it short."))

    def check_cues(self) -> None:
        """Every golden question is targeted at exactly its own intent; generic questions at none.
        The outcome depends only on each plan's (key, cues, question) of its facets, a few dozen
        combinations per persona: a combination that passed once is not checked again."""
        for plan in self.plans:
            sig = tuple((f.key, tuple(f.cues), f.question) for f in plan.facets)
            if sig in _CUES_CHECKED:
                continue
            pats = {f.key: cue_pattern(tuple(f.cues)) for f in plan.facets}
            for f in plan.facets:
                q = questions_in(f.question)
                hits = [k for k, pat in pats.items() if pat.search(q)]
                if hits != [f.key]:
                    raise AssertionError(f"session {plan.index}: question {f.question!r} hits {hits}")
            for g in GENERIC_QUESTIONS:
                if any(pat.search(questions_in(g)) for pat in pats.values()):
                    raise AssertionError(f"generic question {g!r} is targeted")
            if len(_CUES_CHECKED) < _MAX_CUES_CHECKED:
                _CUES_CHECKED.add(sig)


# the facet combinations ``Episode.check_cues`` has passed (bounded; a pure function of the combination)
_CUES_CHECKED: set[tuple[tuple[str, tuple[str, ...], str], ...]] = set()
_MAX_CUES_CHECKED = 4096
