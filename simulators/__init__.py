"""The stochastic side of an episode: simulated users (scripted; LLM ones come later) and events."""

from .scripted_user import STOP, HiddenFact, IntentChange, ScriptedUser, UserScript, split_points, to_first_person

__all__ = ["STOP", "HiddenFact", "IntentChange", "ScriptedUser", "UserScript", "split_points", "to_first_person"]
