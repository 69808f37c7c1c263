"""The execution history of an episode, part of the world's core (``world_state.core``
re-exports every name here): ``HistoryEntry``, one tool call, message or event of the single
ordered log, and ``History``, the append-only log with the indexes a tool's pre-conditions ask
at every step (``called``: was a tool executed earlier, on a value; ``results_of``: the result
texts of some tools' executed calls)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

Outcome = Literal["executed", "rejected", "error"]


class HistoryEntry(NamedTuple):
    """One item of the episode's single ordered log (a named tuple: immutable, cheap to make).

    ``kind`` is ``tool_call`` (with ``name``, ``arguments``, ``outcome`` and the result text in
    ``content``), ``message`` (``role`` is ``user`` or ``assistant``, text in ``content``) or
    ``event``.
    """

    index: int
    step: int
    time: str
    kind: Literal["tool_call", "message", "event"]
    role: str = ""
    name: str = ""
    arguments: dict[str, Any] = {}  # noqa: RUF012  never mutated; every tool call passes its own
    outcome: Outcome | Literal[""] = ""
    content: str = ""
    call_id: str = ""


_new_tuple = tuple.__new__


class History:
    """Append-only log of every tool call, message and event, in the order they happened."""

    __slots__ = ("entries", "_calls", "_known", "_noted", "_results")

    def __init__(self) -> None:
        self.entries: list[HistoryEntry] = []
        # tool name -> the arguments of its executed calls, in order (entries[:_noted] are in it), for
        # "called earlier" checks: ``add_call`` and ``append`` note a call as they log it (one list
        # append: the work of a step that nothing asks about), ``called`` catches up on whatever
        # was logged otherwise and reads the calls of the tool it is asked about
        self._calls: dict[str, list[dict[str, Any]]] = {}
        # (tool name, value) pairs ``called`` has answered True: still true for every later question
        # (the log only grows), so a write's pre-condition asked at every step is a set look-up
        self._known: set[tuple[str, str]] = set()
        self._noted = 0
        # tools -> [entries scanned, result texts of their executed calls in order] (``results_of``)
        self._results: dict[tuple[str, ...], list[Any]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[HistoryEntry]:
        return iter(self.entries)

    def append(self, **fields: Any) -> HistoryEntry:
        entries = self.entries
        n = len(entries)
        entry = HistoryEntry(n, **fields)
        entries.append(entry)
        if self._noted == n and entry[3] != "tool_call":
            self._noted = n + 1  # a message or event adds nothing to the index: it stays up to date
        return entry

    def add_call(
        self, step: int, time: str, name: str, arguments: dict[str, Any], outcome: Outcome, content: str, call_id: str
    ) -> HistoryEntry:
        """``append`` for a tool call, without keyword packing (it runs on every tool step)."""
        entries = self.entries
        n = len(entries)
        entry = _new_tuple(HistoryEntry, (n, step, time, "tool_call", "assistant", name, arguments, outcome,
                                          content, call_id))
        entries.append(entry)
        if self._noted == n:
            # the index is up to date: note this call now (a write's pre-condition then reads the
            # calls of one tool, instead of the first question of an episode scanning every call)
            self._noted = n + 1
            if outcome == "executed":
                calls = self._calls.get(name)
                if calls is None:
                    calls = self._calls[name] = []
                calls.append(arguments)  # (the same calls for a tool's first call as for any later one)
        return entry

    def called(self, tool: str, value: str = "") -> bool:
        """Whether ``tool`` was executed earlier, with ``value`` among its string arguments (any
        call of it when ``value`` is empty)."""
        key = (tool, value)  # (a value that cannot be hashed raises TypeError here, as a set look-up would)
        if key in self._known:
            return True
        entries = self.entries
        if self._noted < len(entries):
            # the calls since the index was last brought up to date (logged by ``append``): one
            # pass, by tuple position (kind 3, name 5, arguments 6, outcome 7)
            by_tool = self._calls
            for i in range(self._noted, len(entries)):
                e = entries[i]
                if e[7] == "executed" and e[3] == "tool_call":
                    calls = by_tool.get(e[5])
                    if calls is None:
                        calls = by_tool[e[5]] = []
                    calls.append(e[6])
            self._noted = len(entries)
        calls = self._calls.get(tool)
        if not calls:
            return False
        if value != "" and not (
            isinstance(value, str)  # only string arguments are values: nothing else equals one
            and any(v == value and type(v) is str for args in calls for v in args.values())
        ):
            return False
        self._known.add(key)
        return True

    def results_of(self, tools: tuple[str, ...]) -> list[str]:
        """The result texts of the executed calls of ``tools``, oldest first (read only): kept per
        ``tools`` and brought up to date with the entries logged since the last question, so a
        pre-condition that looks for an id in earlier results reads those results alone instead of
        scanning the whole history at every call."""
        entries = self.entries
        hit = self._results.get(tools)
        if hit is None:
            hit = self._results[tools] = [0, []]
        n = len(entries)
        if hit[0] < n:
            add = hit[1].append
            # by tuple position (``HistoryEntry``: kind 3, name 5, outcome 7, content 8)
            for i in range(hit[0], n):
                e = entries[i]
                if e[5] in tools and e[3] == "tool_call" and e[7] == "executed":
                    add(e[8])
            hit[0] = n
        return hit[1]

    def tool_calls(self, outcome: str | None = None) -> list[HistoryEntry]:
        return [
            e for e in self.entries if e.kind == "tool_call" and (outcome is None or e.outcome == outcome)
        ]

    def messages(self, role: str | None = None) -> list[HistoryEntry]:
        return [e for e in self.entries if e.kind == "message" and (role is None or e.role == role)]
