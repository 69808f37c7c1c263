"""pi-Bench's history ablation on Workspace-v0 as one grid: conditions x policies, one table.

Conditions (env options of ``servicegym/Workspace-v0``): ``history`` (the default: the workspace
persists, no summaries), ``history+summaries`` (``history_summaries=True``: each session after the
first starts with code-built summaries of the earlier ones), ``wipe`` (``wipe_workspace=True``:
every session starts on the persona's initial workspace) and ``wipe+summaries`` (both: what earlier
sessions carry is only in the summaries). Policies: ``oracle`` (``SessionOracle``: each session's
golden actions, then it ends the session itself if the user has not, so a session that fails
cannot push the replay out of step with the sessions), ``random``
(well-formed random calls), ``loopback`` (the LLM agent policy against
``simulators/loopback.LoopbackServer`` replaying the episode's golden actions in one list: the whole
LLM path with no model; after a session fails it can be out of step with the sessions)
and ``recall`` (``RecallPolicy``: a scripted assistant that applies an earlier session's convention
unasked only when what it sees in this session shows it, else has it told; the one policy here
whose behaviour depends on what history it is given).

Every cell is one ``collect`` run on the frozen test suite (five 20-session persona episodes, or the
first ``--limit``), written to ``OUT/<condition>/<policy>/rollouts.jsonl`` with a ``run.json``
beside it, so ``servicegym report`` reads any cell and compares several:

    python scripts/workspace_ablation.py --out runs/ws-ablation
    python scripts/workspace_ablation.py --limit 1 --policies oracle,random --conditions history,wipe

The table: per cell, episodes, the fraction of sessions passed (all; the later sessions of a
dependency group, which carry a convention over; the sessions that must reuse an earlier session's
artifact; the independent ones), the episodes' PROC and COMP, failed tool calls per episode, and the
characters of earlier-session summaries the agent was shown per session. ``oracle``, ``random`` and
``loopback`` do not read the summaries (their rows with and without them agree); ``recall`` does.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.tasks.generators.content_workspace import GENERIC_QUESTIONS
from servicegym.envs.tasks.generators.workspace import check_values, episode_labels

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gridlib import run_grid  # noqa: E402

ENV_ID = "servicegym/Workspace-v0"
CONDITIONS: dict[str, dict[str, Any]] = {
    "history": {},
    "history+summaries": {"history_summaries": True},
    "wipe": {"wipe_workspace": True},
    "wipe+summaries": {"wipe_workspace": True, "history_summaries": True},
}
POLICIES = ("oracle", "random", "loopback", "recall")
_HISTORY = re.compile(r"<history>.*?</history>", re.S)
_SESSION = re.compile(r'<session index="(\d+)"')


class SessionOracle:
    """Each session's golden route, then ``###STOP###`` (the agent ends the session) if the user
    has not ended it: the golden route per session, kept in step with the sessions when one fails."""

    name = "oracle"

    def reset(self, env: Any, obs: str, info: dict[str, Any]) -> None:
        self.sessions = env.unwrapped.task.world["sessions"]
        self.queue = list(self.sessions[int(info["session"]) - 1]["golden"])

    def act(self, obs: str) -> str:
        m = _SESSION.search(obs)
        if m:
            self.queue = list(self.sessions[int(m.group(1)) - 1]["golden"])
        return self.queue.pop(0) if self.queue else "###STOP###"


class RecallPolicy:
    """A scripted proactive assistant for the history ablation. It knows each session's by-hand
    golden route (like the oracle; it runs no skill) but applies a convention carried over from an earlier session unasked
    only when it can see it in this session: every value the convention's check requires
    (recipients, attendees, room, label, tags, headings; for an exclusion rule, the excluded
    category) appears in the session's first observation (with ``history_summaries``, the
    summaries) or in what the golden route's evidence reads return. Then it plays the golden
    route (the convention is Completed); else it asks one generic question per carried
    convention before it writes anything (the user reveals each: Provided), then writes. Intents
    the workspace cannot tell are asked about with the golden targeted question either way; the
    chat of earlier sessions is not remembered. An exclusion rule shows in the workspace only as
    records missing from an earlier export, which this policy does not infer: it needs the rule
    said (the summaries quote the user's words)."""

    name = "recall"
    ASK = GENERIC_QUESTIONS[1]

    def reset(self, env: Any, obs: str, info: dict[str, Any]) -> None:
        task = env.unwrapped.task
        self.sessions = task.world["sessions"]
        self.files = [f for f in task.world["tables"].get("files", []) if str(f.get("path", "")).endswith(".csv")]
        self.known: list[bool] = []  # per session started: whether its conventions were seen
        self._begin(int(info["session"]), obs)

    def _begin(self, k: int, obs: str) -> None:
        spec = self.sessions[k - 1]
        self.spec, self.seen = spec, [obs]
        self.carried = [i for i in spec["intents"] if i["carried"]]
        evidence = list(dict.fromkeys(a for i in self.carried for a in i.get("evidence", [])))
        self.queue = evidence
        self.decided = not self.carried
        if self.decided:
            self.queue = self._route()

    def _route(self) -> list[str]:
        """The session's by-hand golden route (a session a skill does keeps it as ``manual``)."""
        return list(self.spec.get("manual") or self.spec["golden"])

    def _values(self, intent: dict[str, Any]) -> list[str]:
        if intent["check"]["kind"] == "ws.file_lacks":  # the rule names the category the left-out records share
            keys = set((intent["check"].get("params") or {}).get("texts") or [])
            for f in self.files:
                for row in csv.reader(io.StringIO(f.get("content", ""))):
                    if len(row) > 2 and row[0] in keys:
                        return [row[2]]
            return []
        return check_values(intent["check"])

    def _decide(self) -> None:
        text = "\n".join(self.seen)
        values = [self._values(i) for i in self.carried]
        known = all(v and all(x in text or json.dumps(x)[1:-1] in text for x in v) for v in values)
        self.known.append(known)
        evidence = {a for i in self.carried for a in i.get("evidence", [])}
        rest = [a for a in self._route() if a not in evidence]
        if known:
            self.queue = rest
            return
        # the golden route opens with its targeted questions when the session has intents to ask about
        opens = 1 if any(not i["carried"] for i in self.spec["intents"]) and not parse_action(rest[0]).tool_calls else 0
        self.queue = rest[:opens] + [self.ASK] * len(self.carried) + rest[opens:]

    def act(self, obs: str) -> str:
        m = _SESSION.search(obs)
        if m:
            self._begin(int(m.group(1)), obs[m.start():])
        else:
            self.seen.append(obs)
        if not self.queue and not self.decided:
            self.decided = True
            self._decide()
        return self.queue.pop(0) if self.queue else "###STOP###"


def session_classes(task: Any) -> dict[int, set[str]]:
    """Per session index: ``carried`` (a later member of a dependency group), ``reuse`` (labelled
    ``reuse_artifact``), ``independent`` (in no group)."""
    sessions = task.world["sessions"]
    out: dict[int, set[str]] = {}
    for spec, labels in zip(sessions, episode_labels(sessions), strict=True):
        cls = {"independent"} if not spec["group"] else ({"carried"} if spec["precursors"] else set())
        if "reuse_artifact" in labels["reasoning"]:
            cls.add("reuse")
        out[spec["index"]] = cls
    return out


def _history_chars(messages: Any) -> int:
    return sum(len(m) for msg in messages or () if isinstance(msg, dict)
               for m in _HISTORY.findall(msg.get("content") or "" if isinstance(msg.get("content"), str) else ""))


def cell_stats(records: list[dict[str, Any]], classes: dict[str, dict[int, set[str]]]) -> dict[str, Any]:
    """Sessions passed (all and by class), mean PROC and COMP, failed calls per episode and summary
    characters per session over a cell's episodes (an errored episode's sessions count as failed)."""
    n = len(records)
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    proc = comp = errors = hist = 0.0
    sessions = 0
    for r in records:
        cls = classes.get(r.get("task_id"), {})
        ok = {s["index"]: bool(s["success"]) for s in ((r.get("details") or {}).get("sessions") or [])} if not r.get("error") else {}
        for k, names in cls.items():
            for name in ("all", *names):
                total[name] += 1
                passed[name] += ok.get(k, False)
        score = r.get("score") or {}
        if not r.get("error"):
            proc += float(score.get("proc", 0.0))
            comp += float(score.get("comp", 0.0))
        errors += float(r.get("tool_errors") or 0)
        hist += _history_chars(r.get("messages"))
        sessions += len(cls)
    rate = {name: (passed[name] / total[name] if total[name] else 0.0) for name in ("all", "carried", "reuse", "independent")}
    ends = Counter(str(r.get("termination_reason") or "error") for r in records)
    return {"episodes": n, "sessions": rate, "proc": proc / n if n else 0.0, "comp": comp / n if n else 0.0,
            "tool_errors": errors / n if n else 0.0, "history_chars": hist / sessions if sessions else 0.0,
            "ends": dict(sorted(ends.items()))}


def table(rows: list[tuple[str, str, dict[str, Any]]]) -> str:
    head = ("| policy | condition | episodes | sessions passed | carried-over | reuse artifact | independent | PROC | COMP "
            "| failed calls / ep | summary chars / session |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for policy, cond, s in rows:
        r = s["sessions"]
        lines.append(f"| {policy} | {cond} | {s['episodes']} | {r['all']:.3f} | {r['carried']:.3f} | {r['reuse']:.3f} | "
                     f"{r['independent']:.3f} | {s['proc']:.3f} | {s['comp']:.3f} | {s['tool_errors']:.1f} | "
                     f"{s['history_chars']:.0f} |")
    return "\n".join(lines)


def _policy_kwargs(policy: str) -> dict[str, Any]:
    if policy in ("oracle", "recall"):
        return {"policy": SessionOracle if policy == "oracle" else RecallPolicy, "policy_name": policy, "backend": "thread"}
    return {"policy": policy}


def main(argv: list[str] | None = None) -> int:
    return run_grid(argv, env_id=ENV_ID, description=__doc__.splitlines()[0], out_default="runs/ws-ablation",
                    units="episodes", conditions=CONDITIONS, policies=POLICIES,
                    stats=lambda records, tasks: cell_stats(records, {t.task_id: session_classes(t) for t in tasks}),
                    line=lambda s: f"sessions {s['sessions']['all']:.3f}  PROC {s['proc']:.3f}  COMP {s['comp']:.3f}",
                    table=table, policy_kwargs=_policy_kwargs)


if __name__ == "__main__":
    raise SystemExit(main())
