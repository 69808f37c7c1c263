"""Calendar tools over the ``calendar`` table, plus the workspace clock.

Times are ``YYYY-MM-DD HH:MM:SS`` on the world clock; an event ends after it starts and is not
created or moved into the past. Overlaps are allowed (calendars allow them) but reported as
``conflicts``. Cancelling keeps the event with status ``cancelled``, so it still shows in the
record; cancelled events never block free slots.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.core import DATE_FORMAT, TIME_FORMAT, parse_date, parse_time
from servicegym.world_state.tools import ToolError, exists, time_not_past, tool
from servicegym.world_state.workspace.world import Event, WorkspaceWorld, check_email, new_id

EVENT_SOURCES = ("list_events", "create_event")
EVENT = exists("calendar", "event_id", "event", produced_by=EVENT_SOURCES)
MAX_RANGE_DAYS = 366


def _time(text: str, what: str) -> datetime:
    try:
        return parse_time(text)
    except (ValueError, TypeError):
        raise ToolError(f"{what} {text!r} must have the form YYYY-MM-DD HH:MM:SS") from None


def _date(text: str, what: str) -> datetime:
    try:
        return parse_date(text)
    except (ValueError, TypeError):
        raise ToolError(f"{what} {text!r} must have the form YYYY-MM-DD") from None


def _clock(text: str, what: str) -> timedelta:
    try:
        t = datetime.strptime(text.strip(), "%H:%M")
    except ValueError:
        raise ToolError(f"{what} {text!r} must have the form HH:MM") from None
    return timedelta(hours=t.hour, minutes=t.minute)


def _attendees(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        a = check_email(v, "attendee")
        if a.casefold() not in {x.casefold() for x in out}:
            out.append(a)
    return out


def _conflicts(world: WorkspaceWorld, start: str, end: str, skip: str = "") -> list[str]:
    return sorted(e.id for e in world.table("calendar")
                  if e.status == "confirmed" and e.id != skip and e.start < end and start < e.end)


def event_json(e: Event) -> dict[str, Any]:
    return e.model_dump(mode="json")


@tool("read")
def get_current_time(world: WorkspaceWorld) -> dict[str, Any]:
    """The workspace's current date and time, with the weekday."""
    now = world.clock.now
    return {"now": world.clock.text(), "date": now.strftime(DATE_FORMAT), "weekday": now.strftime("%A")}


@tool("read")
def list_events(world: WorkspaceWorld, start_date: str | None = None, end_date: str | None = None,
                include_cancelled: bool = False) -> dict[str, Any]:
    """List the calendar events that overlap a range of days, in start order.

    Args:
        start_date: first day, YYYY-MM-DD (default today)
        end_date: last day, inclusive, YYYY-MM-DD (default six days after start_date)
        include_cancelled: also list cancelled events
    """
    first = _date(start_date, "start_date") if start_date is not None else parse_date(world.clock.now.strftime(DATE_FORMAT))
    last = _date(end_date, "end_date") if end_date is not None else first + timedelta(days=6)
    if last < first:
        raise ToolError(f"end_date {last:%Y-%m-%d} is before start_date {first:%Y-%m-%d}")
    if (last - first).days > MAX_RANGE_DAYS:
        raise ToolError(f"a range holds at most {MAX_RANGE_DAYS} days")
    lo, hi = first.strftime(TIME_FORMAT), (last + timedelta(days=1)).strftime(TIME_FORMAT)
    rows = [e for e in world.table("calendar") if e.start < hi and lo < e.end or (e.start == e.end and lo <= e.start < hi)]
    rows = [e for e in rows if include_cancelled or e.status == "confirmed"]
    rows.sort(key=lambda e: (e.start, e.id))
    return {"start_date": first.strftime(DATE_FORMAT), "end_date": last.strftime(DATE_FORMAT), "total": len(rows),
            "events": [event_json(e) for e in rows]}


@tool("read", pre=[EVENT])
def get_event(world: WorkspaceWorld, event_id: str) -> dict[str, Any]:
    """One event in full.

    Args:
        event_id: the event id from list_events
    """
    return event_json(world.table("calendar").require(event_id))


Title = Annotated[str, Field(min_length=1, max_length=200)]
Text = Annotated[str, Field(max_length=5000)]


@tool("write", pre=[time_not_past("start")])
def create_event(world: WorkspaceWorld, title: Title, start: str, end: str, location: Text = "",
                 attendees: list[str] | None = None, description: Text = "") -> dict[str, Any]:
    """Add an event to the calendar; events it overlaps are reported in conflicts.

    Args:
        title: what the event is
        start: start time, YYYY-MM-DD HH:MM:SS, not in the past
        end: end time, after start
        location: where
        attendees: e-mail addresses of the people invited
        description: details
    """
    s, e = _time(start, "start"), _time(end, "end")
    if e <= s:
        raise ToolError(f"end {end} must be after start {start}")
    ev = Event(id=new_id(world, "calendar", "EV"), title=title.strip(), start=s.strftime(TIME_FORMAT),
               end=e.strftime(TIME_FORMAT), location=location.strip(), attendees=_attendees(attendees),
               description=description)
    conflicts = _conflicts(world, ev.start, ev.end)
    world.table("calendar").insert(ev)
    return {**event_json(ev), "conflicts": conflicts}


@tool("write", pre=[EVENT])
def update_event(world: WorkspaceWorld, event_id: str, title: Title | None = None, start: str | None = None,
                 end: str | None = None, location: Text | None = None, attendees: list[str] | None = None,
                 description: Text | None = None) -> dict[str, Any]:
    """Change the given fields of an event (a new start must not be in the past).

    Args:
        event_id: the event id
        title: new title
        start: new start, YYYY-MM-DD HH:MM:SS
        end: new end, after the start
        location: new location
        attendees: new attendee list (replaces the old one)
        description: new details
    """
    ev = world.table("calendar").require(event_id)
    if ev.status == "cancelled":
        raise ToolError(f"event {ev.id} is cancelled; create a new event instead")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title.strip()
    if start is not None:
        s = _time(start, "start")
        if s < world.clock.now and s.strftime(TIME_FORMAT) != ev.start:
            raise ToolError(f"start {start} is before the current time {world.clock.text()}")
        changes["start"] = s.strftime(TIME_FORMAT)
    if end is not None:
        changes["end"] = _time(end, "end").strftime(TIME_FORMAT)
    if location is not None:
        changes["location"] = location.strip()
    if attendees is not None:
        changes["attendees"] = _attendees(attendees)
    if description is not None:
        changes["description"] = description
    if not changes:
        raise ToolError("nothing to change; give at least one field")
    new_start, new_end = changes.get("start", ev.start), changes.get("end", ev.end)
    if new_end <= new_start:
        raise ToolError(f"the event would end ({new_end}) before it starts ({new_start})")
    ev = world.table("calendar").update(ev.id, **changes)
    return {**event_json(ev), "conflicts": _conflicts(world, ev.start, ev.end, skip=ev.id)}


@tool("write", pre=[EVENT])
def cancel_event(world: WorkspaceWorld, event_id: str) -> dict[str, Any]:
    """Cancel an event (it stays in the calendar with status cancelled).

    Args:
        event_id: the event id
    """
    ev = world.table("calendar").require(event_id)
    if ev.status == "cancelled":
        raise ToolError(f"event {ev.id} is already cancelled")
    return event_json(world.table("calendar").update(ev.id, status="cancelled"))


@tool("read")
def find_free_slots(world: WorkspaceWorld, date: str, duration_minutes: Annotated[int, Field(ge=5, le=720)],
                    day_start: str = "09:00", day_end: str = "17:00") -> dict[str, Any]:
    """Free stretches of one day, at least duration_minutes long, between day_start and day_end
    (never before now), around the confirmed events.

    Args:
        date: the day, YYYY-MM-DD
        duration_minutes: the least length of a slot (5-720)
        day_start: earliest time, HH:MM
        day_end: latest time, HH:MM
    """
    d = _date(date, "date")
    lo, hi = d + _clock(day_start, "day_start"), d + _clock(day_end, "day_end")
    if hi <= lo:
        raise ToolError(f"day_end {day_end} must be after day_start {day_start}")
    lo = max(lo, world.clock.now)
    busy = sorted((parse_time(e.start), parse_time(e.end)) for e in world.table("calendar")
                  if e.status == "confirmed" and parse_time(e.start) < hi and lo < parse_time(e.end))
    need = timedelta(minutes=duration_minutes)
    slots, cursor = [], lo
    for s, e in [*busy, (hi, hi)]:
        if s - cursor >= need:
            slots.append({"start": cursor.strftime(TIME_FORMAT), "end": s.strftime(TIME_FORMAT),
                          "minutes": int((s - cursor).total_seconds() // 60)})
        cursor = max(cursor, e)
    return {"date": d.strftime(DATE_FORMAT), "duration_minutes": duration_minutes, "slots": slots}


CALENDAR_TOOLS = [get_current_time, list_events, get_event, create_event, update_event, cancel_event, find_free_slots]
