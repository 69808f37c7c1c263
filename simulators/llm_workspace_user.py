"""The workspace user's two-stage hidden-intent protocol with the decisions made by an LLM.

``LLMWorkspaceUser`` plays a ``SessionScript`` like ``WorkspaceUser`` (same states, same
priority Completed > Inferred > Provided, same scripted words, so no fact is invented), but for
each agent message one model call decides, as JSON:

- ``completed``: the pending intents the agent's work or reply already satisfies (stage 1). The
  model is shown each intent, the agent's message and the code's workspace check for the intent
  as evidence;
- ``asked``: the intents the message asks a targeted question about (stage 2).

The reply is validated (a JSON object with two lists of known intent ids); a malformed reply, or
one naming unknown intents, falls back to the code decision for that message (``fallbacks``
counts them, ``decisions`` keeps one record per message: source ``llm`` or ``code``). An
unusable endpoint raises ``LLMError`` like every LLM user (the env ends the episode as a
``user_error``), and so does a spent ``episode_budget_s``: the user keeps an ``EpisodeBudget``
(``budget``), its own unless one is passed in; the workspace env builds a user per session, so
passing one budget to the users of all sessions is what makes it the episode's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from servicegym.simulators.llm import EpisodeBudget, LLMClient, loads_json
from servicegym.simulators.llm_user import _LLMRole
from servicegym.simulators.workspace_user import PENDING, SessionScript, WorkspaceUser

__all__ = ["LLMWorkspaceUser", "decision_messages", "parse_decision"]

DECISION_PROMPT = """\
You judge one turn of a conversation between a user and an AI assistant that works in the user's \
workspace (files, mail, calendar). The user has hidden intents: things they want but have not said. \
For the assistant's latest message decide, for each intent listed:
- completed: the assistant has already satisfied the intent, by its work in the workspace or in this message. \
The workspace check, computed from the workspace itself, is strong evidence; use the message for intents it \
leaves open.
- asked: the message asks the user a specific question about this intent (a question that would lead the \
user to state it). Generic questions such as "anything else?" ask about no intent.
Answer with a JSON object only: {"completed": [intent ids], "asked": [intent ids]}."""


def decision_messages(script: SessionScript, states: dict[str, str], checks: dict[str, bool],
                      agent_message: str) -> list[dict[str, Any]]:
    intents = [{"id": i.id, "the user wants": i.reveal, "state": states[i.id],
                "workspace check": "satisfied" if checks.get(i.id) else "not satisfied"}
               for i in script.intents]
    user = (f"The user's request: {script.opening}\n\nIntents:\n{json.dumps(intents, ensure_ascii=False, indent=1)}\n\n"
            f"The assistant's latest message:\n{agent_message}")
    return [{"role": "system", "content": DECISION_PROMPT}, {"role": "user", "content": user}]


def parse_decision(text: str | None, known: set[str]) -> tuple[set[str], set[str]] | None:
    """``(completed, asked)`` from the model's JSON, or None when it is not a valid decision."""
    if not text:
        return None
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        obj = loads_json(text)  # ValueError for bad JSON and for JSON nested too deep
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    out = []
    for key in ("completed", "asked"):
        ids = obj.get(key, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or not set(ids) <= known:
            return None
        out.append(set(ids))
    return out[0], out[1]


class LLMWorkspaceUser(WorkspaceUser, _LLMRole):
    """``WorkspaceUser`` whose stage decisions come from an LLM (code decision as the fallback)."""

    def __init__(self, script: SessionScript, satisfied: Callable[[str], bool], client: LLMClient, seed: int = 0,
                 budget: EpisodeBudget | None = None) -> None:
        WorkspaceUser.__init__(self, script, satisfied, seed=seed)
        _LLMRole.__init__(self, client, seed, budget)
        self._code_satisfied = satisfied
        self._known = {i.id for i in script.intents}
        self._asked: list[str] | None = None
        self.fallbacks = 0
        self.decisions: list[dict[str, Any]] = []

    def asked_about(self, message: str) -> list[str]:
        if self._asked is not None:
            return list(self._asked)
        return WorkspaceUser.asked_about(self, message)

    def reply(self, agent_message: str) -> str:
        pending = self.pending()
        checks = {iid: bool(self._code_satisfied(iid)) for iid in pending}
        result = self._chat(decision_messages(self.script, self.states, checks, agent_message),
                            response_format={"type": "json_object"})
        decided = parse_decision(result.content, self._known)
        if decided is None:
            self.fallbacks += 1
            completed = {iid for iid, ok in checks.items() if ok}
            asked = WorkspaceUser.asked_about(self, agent_message)
            source = "code"
        else:
            completed, asked_set = decided
            asked = [i.id for i in self.script.intents if i.id in asked_set]
            source = "llm"
        self.decisions.append({"source": source, "completed": sorted(completed & set(pending)), "asked": asked})
        self.satisfied = lambda iid: iid in completed and self.states.get(iid) == PENDING
        self._asked = asked
        try:
            return WorkspaceUser.reply(self, agent_message)
        finally:
            self.satisfied = self._code_satisfied
            self._asked = None
