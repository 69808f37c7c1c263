"""The persona workspace user (pi-Bench): a scripted user with hidden intents, two stages a reply.

A session's user opens with a request that is natural but leaves things unsaid: the hidden
intents. For each agent message (deterministic; phrasing seeded):

1. every intent still pending that the agent's work or reply already satisfies (a predicate over
   the workspace and the session's messages, decided by code and passed in as ``satisfied``) is
   **Completed**;
2. then the user answers: if the message asks a targeted question about pending intents (a
   sentence ending in ``?`` that contains one of an intent's cue phrases), each such intent is
   **Inferred** and answered (a question about an intent already final counts for nothing); else, while intents are pending, the user reveals the next one
   (**Provided**); once every intent has a final state, the user ends the session with
   ``###STOP###``.

Priority is Completed > Inferred > Provided: an intent satisfied before it is asked about counts
as Completed, and one asked about is never revealed unprompted. Generic questions ("Anything else
you need?") name no intent's cue, so they only ever get a reveal.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from servicegym.simulators.scripted_user import STOP, cue_pattern

COMPLETED, INFERRED, PROVIDED, PENDING = "completed", "inferred", "provided", "pending"
FINAL = (COMPLETED, INFERRED, PROVIDED)


class IntentScript(BaseModel):
    """One hidden intent: what the user says when it reveals or is asked about it, and the cue
    phrases that make a question about it targeted."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    reveal: str   # said unprompted (Provided)
    answer: str   # said when asked a targeted question (Inferred)
    cues: list[str]


class SessionScript(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    index: int
    opening: str
    intents: list[IntentScript]
    style: str = "polite"


_PHRASES: dict[str, dict[str, tuple[str, ...]]] = {
    "reveal": {
        "polite": ("One more thing, please: ", "Also, if you don't mind: ", "I should have mentioned: "),
        "terse": ("Also: ", "And: "),
        "busy": ("Quickly, one more thing: ", "Oh, and: "),
    },
    "answer": {
        "polite": ("Good question. ", "Thanks for asking. ", ""),
        "terse": ("", ""),
        "busy": ("Right. ", ""),
    },
    "stop": {
        "polite": ("That covers everything for now, thank you.", "Perfect, that's all I needed. Thanks!"),
        "terse": ("Good. That's all.", "Done, thanks."),
        "busy": ("Great, that's it for today.", "Fine, all set."),
    },
}
STYLES = ("polite", "terse", "busy")
_DELIMITER = re.compile(r"([.!?\n])")


def questions_in(text: str) -> str:
    """The question sentences of a message (each up to its ``?``), lower-cased and joined.

    Linear in the message: the text is split once at sentence ends (a scan for ``[^.!?]*\\?``
    from every position would be quadratic on a long run without one)."""
    parts = _DELIMITER.split(text.casefold())
    return " ".join(parts[i] + "?" for i in range(0, len(parts) - 1, 2) if parts[i + 1] == "?")


class WorkspaceUser:
    """Plays one session's script. ``satisfied(intent_id)`` says whether the workspace and the
    session's messages (the current one included) already meet an intent."""

    def __init__(self, script: SessionScript, satisfied: Callable[[str], bool], seed: int = 0) -> None:
        self.script = script
        self.satisfied = satisfied
        self.rng = random.Random(seed)
        self.style = script.style if script.style in STYLES else "polite"
        self.states: dict[str, str] = {i.id: PENDING for i in script.intents}
        self._cues = {i.id: cue_pattern(tuple(i.cues)) for i in script.intents}
        self.done = False

    def _say(self, key: str) -> str:
        options = _PHRASES[key][self.style]
        return options[self.rng.randrange(len(options))]

    def opening(self) -> str:
        return self.script.opening

    def pending(self) -> list[str]:
        return [i for i, s in self.states.items() if s == PENDING]

    def asked_about(self, message: str) -> list[str]:
        """Intent ids (any state) a targeted question of ``message`` names."""
        q = questions_in(message)
        if not q:
            return []
        return [i.id for i in self.script.intents if self._cues[i.id].search(q)]

    def reply(self, agent_message: str) -> str:
        # stage 1: what the agent already did
        for iid in self.pending():
            if self.satisfied(iid):
                self.states[iid] = COMPLETED
        # stage 2: answer targeted questions, else reveal one pending intent, else end
        asked = [i for i in self.asked_about(agent_message) if self.states[i] == PENDING]
        if asked:
            parts = []
            for intent in self.script.intents:
                if intent.id in asked:
                    self.states[intent.id] = INFERRED
                    parts.append(self._say("answer") + intent.answer)
            return " ".join(parts)
        pending = self.pending()
        if pending:
            intent = next(i for i in self.script.intents if i.id == pending[0])
            self.states[intent.id] = PROVIDED
            return self._say("reveal") + intent.reveal
        self.done = True
        return f"{self._say('stop')} {STOP}"
