"""The session kinds of a workspace episode (``SessionKinds``, a base of
``workspace_episode.Episode``): a markdown report, a CSV table, a JSON document, a summary mail, a
meeting, a to-do, a note, and a record in the persona's own tables, each built as one ``Plan`` with
its checks, its hidden intents (``Facet``) and the golden route's actions.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from servicegym.envs.tasks.generators.common import call
from servicegym.envs.tasks.generators.content_workspace import PersonaContent
from servicegym.envs.tasks.generators.workspace_data import Batches
from servicegym.envs.tasks.generators.workspace_plans import (
    CUES,
    SEEDED_MAIL_IDS,
    Facet,
    Ops,
    Plan,
    csv_text,
    item,
)
from servicegym.world_state.core import TIME_FORMAT


class SessionKinds:
    """The session builders of ``Episode``, which sets up what they read: the episode's ``rng``,
    persona and its content (``p``), the batches of records and the seeded records, the advisor,
    the current day, the meetings' days and the sent mails' ids, and its data and facet helpers."""

    rng: random.Random
    p: PersonaContent
    persona: str
    batches: Batches
    advisor: dict[str, str]
    day: str
    day_dt: datetime
    meeting_days: dict[str, str]
    mail_ids: list[str]

    if TYPE_CHECKING:  # ``Episode``'s properties (read-only there)
        @property
        def seeded(self) -> dict[str, dict[str, Any]]: ...

        @property
        def owner(self) -> str: ...

    included: Callable[[list[dict[str, str]], bool], list[dict[str, str]]]
    key: Callable[[dict[str, str]], str]
    label: Callable[[dict[str, str]], str]
    cat: Callable[[dict[str, str]], str]
    best: Callable[[list[dict[str, str]]], dict[str, str]]
    data_path: Callable[[int], str]
    exclude_facet: Callable[[str, list[dict[str, str]], bool, str], Facet]
    units_facet: Callable[[str, list[dict[str, str]]], Facet]
    best_facet: Callable[[str, list[dict[str, str]]], Facet]
    persona_facets: Callable[[], int]

    # --- session kinds ----------------------------------------------------------------------
    def report(self, n: int, facets: list[str], carried: set[str], sections: list[str] | None, earlier: str = "",
               side: bool = False) -> Plan:
        """A markdown write-up of batch ``n`` (the weekly report, or with ``side`` the plain note)."""
        p = self.p
        spec = p.side_report if side else p.report
        path = f"{spec['dir']}/{spec['stem']}_{p.batch_noun}_{n:02d}.md"
        title = f"{spec['title']}: {p.batch_noun} {n}"
        recs = self.batches[n]
        exclude = "exclude" in facets
        inc = self.included(recs, exclude)
        fs: list[Facet] = []
        for key in facets:
            if key == "sections":
                assert sections is not None
                shown = ", ".join(sections)
                if "sections" in carried:
                    fs.append(Facet("sections", item("sections", "ws.md_headings", f"{path} has the agreed sections", path=path, headings=sections),
                                    f"Use the same sections as the last one: {shown}.", f"The same as last time: {shown}.",
                                    CUES["sections"], "Which sections should the report have?", True, [Ops.read(earlier)]))
                else:
                    fs.append(Facet("sections", item("sections", "ws.md_headings", f"{path} has the agreed sections", path=path, headings=sections),
                                    f"Please give it exactly these sections, in order: {shown}. I want every {spec['title'].lower()} in that format.",
                                    f"Use these sections, in this order: {shown}. Keep that format for every {spec['title'].lower()}.",
                                    CUES["sections"], "Which sections should the report have?"))
            elif key == "exclude":
                fs.append(self.exclude_facet(path, recs, "exclude" in carried, earlier))
            elif key == "units":
                fs.append(self.units_facet(path, inc))
            elif key == "best":
                fs.append(self.best_facet(path, inc))
        base = [item("file", "ws.file_exists", f"{path} exists", path=path),
                item("records", "ws.file_contains", f"{path} lists every {p.noun} of {p.batch_noun} {n}", path=path,
                     texts=[self.key(r) for r in inc])]

        def render(active: frozenset[str]) -> list[str]:
            rs = self.included(recs, "exclude" in active)
            val = p.unit if "units" in active else p.raw
            lines = [f"- {self.key(r)} ({self.label(r)}, {self.cat(r)}): {val(r)}" for r in rs]
            if "best" in active:
                lines.append(f"\nBest: {self.key(self.best(rs))}")
            summary = f"{len(rs)} {p.noun}s from {self.data_path(n)}."
            if "sections" in active and sections:
                parts = [f"# {title}", "", f"## {sections[0]}", summary, "", f"## {sections[1]}", *lines]
                for s in sections[2:]:
                    parts += ["", f"## {s}", "- To discuss at the next check-in."]
            else:
                parts = [f"# {title}", "", "## Overview", summary, "", *lines]
            return [Ops.write(path, "\n".join(parts) + "\n")]

        data = self.data_path(n)
        if side:
            opening = self.rng.choice((
                f"Could you put together a short {spec['title'].lower()} for {p.batch_noun} {n} ({data})? Save it as {path}.",
                f"I need a {spec['title'].lower()} on {p.batch_noun} {n}; the data is in {data}. Please write it to {path}.",
            ))
        elif carried:
            opening = self.rng.choice((
                f"Time for the {p.batch_noun} {n} {spec['title'].lower()}: the {p.noun}s are in {data}. Please write it to {path}.",
                f"Please do the {spec['title'].lower()} for {p.batch_noun} {n} ({data}) and save it as {path}.",
            ))
        else:
            opening = self.rng.choice((
                f"Could you write up the {p.batch_noun} {n} {p.noun}s ({data}) as a {spec['title'].lower()}? Save it as {path}.",
                f"Please summarise the {p.noun}s in {data} as a {spec['title'].lower()} in {path}.",
            ))
        return Plan(0, "", "report", title, opening, base, fs, render, f"Done: the {spec['title'].lower()} is saved as {path}.")

    def table(self, n: int, facets: list[str], carried: set[str], earlier: str = "") -> Plan:
        p = self.p
        path = f"tables/{p.noun}s_{p.batch_noun}_{n:02d}.csv"
        recs = self.batches[n]
        exclude = "exclude" in facets
        inc = self.included(recs, exclude)
        keycol, labcol = p.columns[0], p.columns[1]
        dcol, dfn, dwords = p.derived
        fs: list[Facet] = []
        for key in facets:
            if key == "exclude":
                fs.append(self.exclude_facet(path, recs, "exclude" in carried, earlier))
            elif key == "sort":
                order = [self.key(r) for r in sorted(inc, key=p.metric, reverse=True)]
                fs.append(Facet("sort", item("sort", "ws.csv_keys", f"rows of {path} sorted by {p.metric_words}", path=path,
                                             column=keycol, values=order, ordered=True),
                                f"Sort the rows so the {p.noun} with the {p.metric_words} comes first.",
                                f"Yes, sort them by {p.metric_words}, best first.", CUES["sort"], "Should I sort the rows in some way?"))
            elif key == "derived":
                fs.append(Facet("derived", item("derived", "ws.csv_cells", f"{path} has the {dcol} column", path=path, key=keycol,
                                                cells={self.key(r): {dcol: dfn(r)} for r in inc}),
                                f"Add a column {dcol} with the {dwords}.", f"Yes: a column {dcol} with the {dwords}.",
                                CUES["derived"], "Do you want an extra column with a derived value?"))
        base = [item("rows", "ws.csv_cells", f"{path} has a row for every {p.noun}", path=path, key=keycol,
                     cells={self.key(r): {labcol: self.label(r)} for r in inc})]

        def render(active: frozenset[str]) -> list[str]:
            rs = self.included(recs, "exclude" in active)
            if "sort" in active:
                rs = sorted(rs, key=p.metric, reverse=True)
            head = list(p.columns) + ([dcol] if "derived" in active else [])
            rows = [head] + [[r[c] for c in p.columns] + ([dfn(r)] if "derived" in active else []) for r in rs]
            return [Ops.write(path, csv_text(rows))]

        data = self.data_path(n)
        opening = self.rng.choice((
            f"Please export the {p.noun}s of {p.batch_noun} {n} ({data}) as a CSV table to {path}.",
            f"I need the {p.batch_noun} {n} {p.noun}s from {data} as a clean CSV in {path}, please.",
        ))
        return Plan(0, "", "table", f"{p.noun} table {p.batch_noun} {n}", opening, base, fs, render, f"Done: the table is in {path}.")

    def json_doc(self, n: int, facets: list[str]) -> Plan:
        p = self.p
        spec = p.json_doc
        path = f"{spec['dir']}/{spec['stem']}_{p.batch_noun}_{n:02d}.json"
        recs = self.batches[n]
        top = sorted(recs, key=p.metric, reverse=True)[:3]
        as_of = self.day
        fs: list[Facet] = []
        for key in facets:
            if key == "schema":
                schema = {"type": "object", "required": ["as_of", "items"],
                          "properties": {"as_of": {"type": "string", "const": as_of},
                                         "items": {"type": "array", "minItems": 3, "maxItems": 3,
                                                   "items": {"type": "object", "required": ["id", "value"],
                                                             "properties": {"id": {"type": "string"}, "value": {"type": "number"}}}}}}
                fs.append(Facet("schema", item("schema", "ws.json_schema", f"{path} follows the agreed schema", path=path, schema=schema),
                                f"The JSON needs two keys: 'as_of' with today's date ({as_of}) and 'items', a list of objects with 'id' and 'value' (the number).",
                                f"Use keys 'as_of' (today, {as_of}) and 'items': a list of objects with 'id' and 'value'.",
                                CUES["schema"], "Which fields should the JSON have?"))
            elif key == "count":
                fs.append(Facet("count", item("count", "ws.json_values", f"{path} has a count", path=path, values={"count": 3}),
                                "Add a 'count' key with the number of items.", "Yes, a 'count' key with the number of items.",
                                CUES["count"], "Should it include a count?"))
        base = [item("top", "ws.file_contains", f"{path} names the {spec['what']}", path=path, texts=[self.key(r) for r in top])]
        metric_value = {self.key(r): round(p.metric(r), 4) for r in top}

        def render(active: frozenset[str]) -> list[str]:
            if "schema" in active:
                data: dict[str, Any] = {"as_of": as_of, "items": [{"id": self.key(r), "value": metric_value[self.key(r)]} for r in top]}
            else:
                data = {"items": [self.key(r) for r in top]}
            if "count" in active:
                data["count"] = len(top)
            return [Ops.write(path, json.dumps(data, indent=2) + "\n")]

        opening = (f"Could you save the three {spec['what']} of {p.batch_noun} {n} (by {p.metric_words}, data in "
                   f"{self.data_path(n)}) as JSON in {path}?")
        return Plan(0, "", "json", f"{spec['what']} {p.batch_noun} {n}", opening, base, fs, render, f"Done: saved {path}.")

    def mail(self, report_path: str, title: str, recs: list[dict[str, str]], facets: list[str], carried: set[str], cc: list[dict[str, str]]) -> Plan:
        p = self.p
        adv = self.advisor
        subject = title
        cc_emails = [c["email"] for c in cc]
        cc_words = " and ".join(f"{c['name']} ({c['email']})" for c in cc)
        best = self.key(self.best(recs))
        mention = f"The best {p.noun} was {best}."
        where = {"folder": "sent", "~subject": subject}
        fs: list[Facet] = []
        for key in facets:
            if key == "cc":
                chk = item("cc", "ws.record", f"the mail copies {cc_words}", table="mail", where=where, expect_set={"cc": cc_emails})
                if "cc" in carried:
                    fs.append(Facet("cc", chk, f"Copy the same people as on the last summary mail: {cc_words}.",
                                    f"The same as last time: {cc_words}.", CUES["cc"], "Who should I cc on it?", True,
                                    # a listing shows no cc: the golden route opens the last summary mail
                                    [Ops.sent_mail(), Ops.open_mail(self.mail_ids[-1])]))
                else:
                    fs.append(Facet("cc", chk, f"Please copy in {cc_words}; they should be on every summary mail I send {adv['first']}.",
                                    f"Copy in {cc_words}, on every summary mail from now on.", CUES["cc"], "Who should I cc on it?"))
            elif key == "attach":
                fs.append(Facet("attach", item("attach", "ws.record", f"the mail attaches {report_path}", table="mail", where=where,
                                               expect_set={"attachments": [report_path]}),
                                f"Attach the file {report_path} itself rather than pasting it.", f"Yes, attach {report_path}.",
                                CUES["attach"], "Should I attach the report file?"))
            elif key == "mention":
                fs.append(Facet("mention", item("mention", "ws.record", f"the mail names the best {p.noun}", table="mail", where=where,
                                                expect_contains={"body": [mention]}),
                                f"In the body, say which {p.noun} was best, in the words 'The best {p.noun} was <id>.'",
                                f"Yes: write 'The best {p.noun} was <id>.' with the {p.noun} of the {p.metric_words}.",
                                CUES["mention"], "Is there a point you want me to mention in the body?"))
        base = [item("sent", "ws.record", f"a mail '{subject}' sent to {adv['name']}", table="mail", where=where,
                     expect_set={"to": [adv["email"]]})]

        def render(active: frozenset[str]) -> list[str]:
            body = f"Hi {adv['first']},\n\nhere is the {title.lower()} ({report_path})."
            if "mention" in active:
                body += f" {mention}"
            body += f"\n\nBest,\n{self.owner.split()[-1] if self.owner.startswith('Dr.') else self.owner.split()[0]}"
            return [Ops.send([adv["email"]], subject, body, cc_emails if "cc" in active else [],
                             [report_path] if "attach" in active else [])]

        # the id this session's mail gets (seeded counters; only these sessions send mail)
        self.mail_ids.append(f"M{len(SEEDED_MAIL_IDS) + len(self.mail_ids) + 1:03d}")
        opening = self.rng.choice((
            f"Please mail the {title.lower()} ({report_path}) to {adv['name']} ({adv['email']}), subject '{subject}'.",
            f"Could you send {adv['name']} ({adv['email']}) the {title.lower()} from {report_path}? Use the subject '{subject}'.",
        ))
        return Plan(0, "", "mail", f"mail: {subject}", opening, base, fs, render, f"Done: the mail '{subject}' is sent.")

    def meeting(self, title: str, when: datetime, person: dict[str, str], facets: list[str], carried: set[str],
                attendees: list[dict[str, str]], room: str, agenda: list[str], since: str = "") -> Plan:
        """A calendar event; ``since``: the day of the earlier meeting whose conventions it carries
        (the golden route's calendar read starts there, or it could miss it)."""
        self.meeting_days[title] = when.strftime("%Y-%m-%d")
        start = when.strftime(TIME_FORMAT)
        where = {"~title": title}
        others = [a["email"] for a in attendees]
        names = " and ".join(f"{a['name']} ({a['email']})" for a in attendees)
        fs: list[Facet] = []
        for key in facets:
            if key == "attendees":
                chk = item("attendees", "ws.record", f"{title} invites {names}", table="calendar", where=where,
                           expect_set={"attendees": [person["email"]] + others})
                if "attendees" in carried:
                    fs.append(Facet("attendees", chk, f"Invite the same people as to the last one: {names}.",
                                    f"The same people as last time: {names}.", CUES["attendees"], "Who else should I invite?", True,
                                    [Ops.events(since)]))
                else:
                    fs.append(Facet("attendees", chk, f"Invite {names} as well; they join every {title.lower()}.",
                                    f"Invite {names} too; they join every one of these.", CUES["attendees"], "Who else should I invite?"))
            elif key == "location":
                chk = item("location", "ws.record", f"{title} is in {room}", table="calendar", where=where, expect={"location": room})
                if "location" in carried:
                    fs.append(Facet("location", chk, f"Same place as last time: {room}.", f"{room}, as usual.", CUES["location"],
                                    "Which room should I book?", True, [] if "attendees" in carried else [Ops.events(since)]))
                else:
                    fs.append(Facet("location", chk, f"Put {room} as the location; we always meet there.", f"{room}; we always meet there.",
                                    CUES["location"], "Which room should I book?"))
            elif key == "duration":
                end = (when + timedelta(minutes=30)).strftime(TIME_FORMAT)
                fs.append(Facet("duration", item("duration", "ws.record", f"{title} lasts 30 minutes", table="calendar", where=where,
                                                 expect={"end": end}),
                                "Keep it to 30 minutes.", "30 minutes.", CUES["duration"], "How long should it be?"))
            elif key == "agenda":
                fs.append(Facet("agenda", item("agenda", "ws.record", f"{title} carries the agenda", table="calendar", where=where,
                                               expect_contains={"description": agenda}),
                                f"Put the agenda in the description: {'; '.join(agenda)}.", f"The agenda: {'; '.join(agenda)}.",
                                CUES["agenda"], "Is there an agenda to add?"))
        base = [item("event", "ws.record", f"{title} at {start}", table="calendar", where=where, expect={"start": start})]

        def render(active: frozenset[str]) -> list[str]:
            minutes = 30 if "duration" in active else 60
            end = (when + timedelta(minutes=minutes)).strftime(TIME_FORMAT)
            att = [person["email"]] + (others if "attendees" in active else [])
            desc = "Agenda: " + "; ".join(agenda) if "agenda" in active else ""
            return [Ops.event(title, start, end, att, room if "location" in active else "", desc)]

        day = when.strftime("%A %d %B")
        opening = self.rng.choice((
            f"Please put a '{title}' with {person['name']} ({person['email']}) in my calendar on {day} at {when:%H:%M}.",
            f"Can you schedule '{title}' with {person['name']} ({person['email']}) for {day}, {when:%H:%M}?",
        ))
        return Plan(0, "", "meeting", title, opening, base, fs, render, f"Done: '{title}' is in the calendar for {start}.")

    def todo(self, title: str, facets: list[str], carried: set[str], label: str, due: str, ref: str) -> Plan:
        where = {"~title": title}
        fs: list[Facet] = []
        for key in facets:
            if key == "prefix":
                chk = item("prefix", "ws.record", f"the to-do carries the label [{label}]", table="todos", where=where,
                           expect_contains={"title": [f"[{label}]"]})
                if "prefix" in carried:
                    fs.append(Facet("prefix", chk, f"Label it [{label}] at the start of the title, like the other ones.",
                                    f"Yes, [{label}] at the start, as usual.", CUES["prefix"], "Should the title carry a project label?",
                                    True, [Ops.todos()]))
                else:
                    fs.append(Facet("prefix", chk, f"Start the title with [{label}]; all my {label} to-dos are labelled that way.",
                                    f"Yes: start the title with [{label}]; I label all {label} to-dos like that.", CUES["prefix"],
                                    "Should the title carry a project label?"))
            elif key == "priority":
                fs.append(Facet("priority", item("priority", "ws.record", "the to-do has high priority", table="todos", where=where,
                                                 expect={"priority": "high"}),
                                "Make it high priority.", "High.", CUES["priority"], "What priority should it have?"))
            elif key == "due":
                fs.append(Facet("due", item("due", "ws.record", f"the to-do is due {due}", table="todos", where=where, expect={"due": due}),
                                f"It needs to be done by {due}.", f"It's due {due}.", CUES["due"], "When is it due?"))
            elif key == "notes":
                fs.append(Facet("notes", item("notes", "ws.record", f"the to-do's notes point to {ref}", table="todos", where=where,
                                              expect_contains={"notes": [ref]}),
                                f"Put a pointer to {ref} in its notes.", f"Yes, reference {ref} in the notes field.", CUES["notes"],
                                "Should I add a reference in the notes field?"))
        base = [item("todo", "ws.record", f"a to-do '{title}'", table="todos", where=where)]

        def render(active: frozenset[str]) -> list[str]:
            t = f"[{label}] {title}" if "prefix" in active else title
            return [Ops.todo(t, due if "due" in active else "", "high" if "priority" in active else "normal",
                             f"See {ref}." if "notes" in active else "")]

        opening = self.rng.choice((f"Add a to-do: {title.lower()}.", f"Please put '{title}' on my to-do list."))
        return Plan(0, "", "todo", title, opening, base, fs, render, f"Done: '{title}' is on your to-do list.")

    def note(self, title: str, points: list[str], facets: list[str], carried: set[str], tags: list[str], extra: str) -> Plan:
        where = {"~title": title}
        fs: list[Facet] = []
        shown = ", ".join(tags)
        for key in facets:
            if key == "tags":
                chk = item("tags", "ws.record", f"the note is tagged {shown}", table="notes", where=where, expect_set={"tags": tags})
                if "tags" in carried:
                    fs.append(Facet("tags", chk, f"Tag it like my other notes of this kind: {shown}.", f"The same tags as before: {shown}.",
                                    CUES["tags"], "Which tags should the note get?", True, [Ops.notes()]))
                else:
                    fs.append(Facet("tags", chk, f"Tag it {shown}; I tag every note of this kind like that.",
                                    f"Tag it {shown}; every note of this kind gets those tags.", CUES["tags"], "Which tags should the note get?"))
            elif key == "mention":
                fs.append(Facet("mention", item("mention", "ws.record", "the note has the extra point", table="notes", where=where,
                                                expect_contains={"body": [extra]}),
                                f"Also add this point: {extra}", f"Yes, add: {extra}", CUES["mention"], "Is there another point to add?"))
        base = [item("note", "ws.record", f"a note '{title}' with the points", table="notes", where=where, expect_contains={"body": points})]

        def render(active: frozenset[str]) -> list[str]:
            body = "\n".join(f"- {x}" for x in points + ([extra] if "mention" in active else []))
            return [Ops.note(title, body, tags if "tags" in active else [])]

        opening = f"Please make a note titled '{title}' with these points: " + " ".join(points)
        return Plan(0, "", "note", title, opening, base, fs, render, f"Done: the note '{title}' is saved.")

    def persona_record(self) -> Plan:
        """A decision or record in the persona's own tables, through the persona's own tools (the
        seeded records decide which one; its checks read the persona table)."""
        rng, t = self.rng, self.seeded
        fs: list[Facet] = []
        if self.persona == "researcher":
            listed = set(t.get("res_reading_list", {}))
            paper = rng.choice([pp for pp in t["res_papers"].values() if pp.id not in listed and "to-cite" not in pp.tags])
            table, where = "res_reading_list", {"paper_id": paper.id}
            opening = f"Please put the paper '{paper.title}' ({paper.id}) on my reading list."
            base = [item("listed", "ws.record", f"{paper.id} is on the reading list", table=table, where=where, expect={"status": "to_read"})]
            fs.append(Facet("priority", item("priority", "ws.record", f"{paper.id} has high priority", table=table, where=where,
                                             expect={"priority": "high"}),
                            "Give it high priority; I need it for the chapter I'm writing.", "High priority.", CUES["priority"],
                            "What priority should it have?"))
            fs.append(Facet("tags", item("tags", "ws.record", f"{paper.id} is tagged to-cite", table="res_papers", where={"id": paper.id},
                                         expect_includes={"tags": ["to-cite"]}),
                            "Also tag the paper to-cite.", "Yes, tag it to-cite.", CUES["tags"], "Should I tag the paper?"))

            def render(active: frozenset[str]) -> list[str]:
                out = [call("add_to_reading_list", paper_id=paper.id, priority="high" if "priority" in active else "normal")]
                if "tags" in active:
                    out.append(call("tag_paper", paper_id=paper.id, tags=["to-cite"]))
                return out
            title = f"reading list: {paper.id}"
        elif self.persona == "pharmacist":
            noted = {n.prescription_id for n in t.get("rx_counseling_notes", {}).values()}
            rx = rng.choice([r for r in t["rx_prescriptions"].values() if r.status == "pending" and r.id not in noted])
            table, where = "rx_prescriptions", {"id": rx.id}
            why = "prescriber to confirm the dose"
            opening = f"Prescription {rx.id} ({rx.drug}) can't go out yet; please put it on hold."
            base = [item("held", "ws.record", f"{rx.id} is on hold", table=table, where=where, expect={"status": "on_hold"})]
            fs.append(Facet("reason", item("reason", "ws.record", f"the hold of {rx.id} gives the reason", table=table, where=where,
                                           expect_contains={"decision_reason": [why]}),
                            f"The reason to record: {why}.", f"The reason: {why}.", ["reason", "why"], "What reason should I record?"))
            fs.append(Facet("counsel", item("counsel", "ws.record", f"a counselling note on {rx.id}", table="rx_counseling_notes",
                                            where={"prescription_id": rx.id}, expect_set={"topics": ["dose query"]}),
                            "Add a counselling note to it with the topic 'dose query' saying the patient was told about the delay.",
                            "Yes: a counselling note with the topic 'dose query', saying the patient was told about the delay.",
                            ["counsel"], "Should I add a counselling note?"))

            def render(active: frozenset[str]) -> list[str]:
                out = [call("hold_prescription", prescription_id=rx.id, reason=f"On hold: {why}." if "reason" in active else "On hold.")]
                if "counsel" in active:
                    out.append(call("add_counseling_note", prescription_id=rx.id, text="Patient told about the delay while the dose is confirmed.",
                                    topics=["dose query"]))
                return out
            title = f"hold {rx.id}"
        elif self.persona == "legal":
            contract = rng.choice(list(t["legal_contracts"].values()))
            matter = t["legal_matters"][contract.matter_id]
            due = (self.day_dt + timedelta(days=rng.randint(10, 20))).strftime("%Y-%m-%d")
            dtitle = rng.choice(("Serve the renewal notice", "Send the termination notice", "File the consent form"))
            table, where = "legal_deadlines", {"~title": dtitle}
            opening = f"Please add a deadline to matter {matter.id} ({matter.name}): '{dtitle}', due {due}."
            base = [item("deadline", "ws.record", f"deadline '{dtitle}' due {due}", table=table, where=where, expect={"due": due})]
            fs.append(Facet("kind", item("kind", "ws.record", "the deadline is a notice", table=table, where=where, expect={"kind": "notice"}),
                            "Mark it as a notice deadline.", "It's a notice deadline.", ["kind of deadline", "type of deadline"],
                            "What kind of deadline is it?"))
            fs.append(Facet("contract", item("contract", "ws.record", f"the deadline concerns {contract.id}", table=table, where=where,
                                             expect={"contract_id": contract.id}),
                            f"Link it to contract {contract.id} ({contract.title}).", f"Contract {contract.id}.", ["contract"],
                            "Which contract does it concern?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"matter_id": matter.id, "title": dtitle, "due": due}
                if "kind" in active:
                    args["kind"] = "notice"
                if "contract" in active:
                    args["contract_id"] = contract.id
                return [call("add_deadline", **args)]
            title = dtitle
        elif self.persona == "marketer":
            parent = rng.choice([a for a in t["mkt_audiences"].values() if len(a.regions) >= 2 and len(a.interests) >= 2])
            name = f"{parent.name} core {rng.randint(2, 9)}"
            lo = parent.age_min + rng.randint(0, 4)
            hi = lo + rng.randint(8, 12)
            regs = sorted(rng.sample(parent.regions, len(parent.regions) - 1))
            ints = sorted(rng.sample(parent.interests, 1))
            table, where = "mkt_audiences", {"name": name}
            opening = f"Please create a segment '{name}' of audience {parent.id} ({parent.name}) for ages {lo} to {hi}."
            base = [item("segment", "ws.record", f"segment '{name}' for ages {lo}-{hi}", table=table, where=where,
                         expect={"parent_id": parent.id, "age_min": max(lo, parent.age_min), "age_max": min(hi, parent.age_max)})]
            fs.append(Facet("regions", item("regions", "ws.record", "the segment keeps the agreed regions", table=table, where=where,
                                            expect_set={"regions": regs}),
                            f"Only the regions {', '.join(regs)}.", f"Keep only {', '.join(regs)}.", ["region"], "Which regions should it cover?"))
            fs.append(Facet("interests", item("interests", "ws.record", "the segment keeps the agreed interest", table=table, where=where,
                                              expect_set={"interests": ints}),
                            f"Narrow it to people interested in {ints[0]}.", f"Only {ints[0]}.", ["interest"],
                            "Which interests should it keep?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"parent_id": parent.id, "name": name, "age_min": lo, "age_max": hi}
                if "regions" in active:
                    args["regions"] = regs
                if "interests" in active:
                    args["interests"] = ints
                return [json.dumps({"name": "create_segment", "arguments": args}, ensure_ascii=False)]  # its own "name" argument
            title = name
        else:
            watched = set(t.get("fin_watchlist", {}))
            company = rng.choice([c for c in t["fin_companies"].values() if c.ticker not in watched])
            target = float(rng.randrange(20, 200))
            why = "waiting for a better entry after earnings"
            table, where = "fin_watchlist", {"ticker": company.ticker}
            opening = f"Please add {company.name} ({company.ticker}) to my watchlist."
            base = [item("watched", "ws.record", f"{company.ticker} is on the watchlist", table=table, where=where)]
            fs.append(Facet("target", item("target", "ws.record", f"target price {target:g}", table=table, where=where,
                                           expect={"target_price": target}),
                            f"Set a target price of {target:g}.", f"{target:g}.", ["target"], "Should I set a target price?"))
            fs.append(Facet("note", item("note", "ws.record", "the watchlist note says why", table=table, where=where,
                                         expect_contains={"note": [why]}),
                            f"Note why: {why}.", f"Because I'm {why}.", ["note", "why"], "Should I add a note on why it is watched?"))

            def render(active: frozenset[str]) -> list[str]:
                args: dict[str, Any] = {"ticker": company.ticker}
                if "target" in active:
                    args["target_price"] = target
                if "note" in active:
                    args["note"] = f"Watching: {why}."
                return [call("add_to_watchlist", **args)]
            title = f"watch {company.ticker}"
        keys = [f.key for f in fs][: self.persona_facets()]
        return Plan(0, "", "persona", title, opening, base, [f for f in fs if f.key in keys], render,
                    f"Done: {title}.")
