"""The stochastic side of an episode: simulated users (scripted, or LLM-played through ``llm``,
``llm_user`` and ``llm_workspace_user``), the loopback chat-completions server, and events."""

from servicegym.simulators.llm import ChatResult, LLMClient, LLMConfig, LLMError
from servicegym.simulators.scripted_user import (
           STOP,
           HiddenFact,
           IntentChange,
           ScriptedUser,
           UserScript,
           split_points,
           to_first_person,
)

__all__ = ["STOP", "HiddenFact", "IntentChange", "ScriptedUser", "UserScript", "split_points", "to_first_person",
           "ChatResult", "LLMClient", "LLMConfig", "LLMError"]
