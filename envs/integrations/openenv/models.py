"""The actions, observations and state of the OpenEnv server's protocol (see ``server``'s docstring
for the messages that carry them): ``ServiceGymAction`` (one agent turn: ``text``, ``call_tool``,
``call_tools`` or ``list_tools``; ``action_text`` is the string the env steps on),
``ServiceGymObservation`` (and ``ServiceGymToolObservation``, a ``call_tool`` step's) and
``ServiceGymState``, on openenv's own ``Action``, ``Observation`` and ``State``."""

from __future__ import annotations

import json
from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

__all__ = ["ServiceGymAction", "ServiceGymObservation", "ServiceGymState", "ServiceGymToolObservation", "ToolCallSpec",
           "action_text"]


# ----- actions, observations, state ------------------------------------------------------------
class ToolCallSpec(BaseModel):
    """One call of a ``call_tools`` action: ``{"name", "arguments", "id"?}``, or an OpenAI
    ``tool_calls`` entry ``{"id", "type": "function", "function": {"name", "arguments"}}``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _openai_form(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            fn = data["function"]
            return {"name": fn.get("name"), "arguments": fn.get("arguments", {}), "id": data.get("id")}
        return data


class ServiceGymAction(Action):
    """One agent turn (see the module docstring): ``text``, ``call_tool``, ``call_tools`` or
    ``list_tools``. ``action_text(action)`` is the string the env steps on."""

    type: Literal["text", "call_tool", "call_tools", "list_tools"] = "text"
    text: str | None = Field(default=None, description="type text: the raw assistant completion")
    tool_name: str | None = Field(default=None, description="type call_tool: the tool (MCP)")
    arguments: dict[str, Any] | str = Field(default_factory=dict, description="type call_tool: its arguments")
    calls: list[ToolCallSpec] | None = Field(default=None, description="type call_tools: the calls, in order")
    content: str | None = Field(default=None, description="type call_tools: the assistant's text beside the calls")

    @model_validator(mode="after")
    def _complete(self) -> ServiceGymAction:
        # PydanticCustomError, not ValueError: the error reply carries ``errors()``, which must encode
        if self.type == "text" and self.text is None:
            raise PydanticCustomError("action", 'a "text" action needs "text": the raw assistant completion')
        if self.type == "call_tool" and not self.tool_name:
            raise PydanticCustomError("action", 'a "call_tool" action needs "tool_name" (and "arguments")')
        if self.type == "call_tools" and not self.calls:
            raise PydanticCustomError("action", 'a "call_tools" action needs "calls": [{"name": ..., "arguments": {...}}, ...]')
        return self


def action_text(action: ServiceGymAction) -> str:
    """The action string the env steps on for ``action``: what the same turn is in-process
    (``env.step(action_text(a))`` gives the transcript the server's step gives)."""
    if action.type == "text":
        return action.text or ""
    if action.type == "call_tool":
        return json.dumps({"name": action.tool_name, "arguments": action.arguments}, ensure_ascii=False)
    calls = action.calls or []
    if action.content is None and all(c.id is None for c in calls):
        return json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls], ensure_ascii=False)
    return json.dumps({
        "role": "assistant",
        "content": action.content,
        "tool_calls": [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str)
                          else json.dumps(c.arguments, ensure_ascii=False)}}
            for c in calls
        ],
    }, ensure_ascii=False)


class ServiceGymObservation(Observation):
    """What reset and each step return (``reward`` and ``done`` always set)."""

    text: str = Field(default="", description="the env's observation: the opening, or all that is new since the action")
    messages: list[dict[str, Any]] = Field(default_factory=list,
                                           description="OpenAI-format messages the step added after the assistant's own")
    tool_results: list[dict[str, Any]] = Field(
        default_factory=list, description="per call, in order: tool_call_id, name, is_error (the content is in messages)")
    info: dict[str, Any] = Field(default_factory=dict, description="the env's info (on the last step: score, success)")


class ServiceGymToolObservation(ServiceGymObservation):
    """A ``call_tool`` step: also ``tool_name`` and MCP's ``result`` (``CallToolObservation``'s fields)."""

    tool_name: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class ServiceGymState(State):
    """The session's episode (``state``), with its transcript in OpenAI format."""

    env_id: str = ""
    task_id: str | None = None
    domain: str = ""
    done: bool = True
    reward: float = 0.0
    total_reward: float = 0.0
    tool_errors: int = 0
    messages: list[dict[str, Any]] = Field(default_factory=list)
