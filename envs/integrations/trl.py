"""TRL adapter: servicegym envs as ``GRPOTrainer(environment_factory=...)`` environments.

TRL (``trl>=1.16``, ``trl/trainer/grpo_trainer.py``) owns the rollout: it renders the dataset row's
``prompt`` with the tokenizer's chat template and the environment's tools, generates, parses tool
calls from the completion (``trl.chat_template_utils.parse_response``), runs them one at a time
on the rollout's own environment instance, appends the results as ``tool`` messages (masked out of
the loss) and generates again, until a completion has no tool call. There is no user turn, so the
simulated user is a tool here: every env is made with ``user_tool=True`` and the model talks to
the user through ``respond(message)``, whose result is the user's reply.

What TRL reads from an environment (``GRPOTrainer.__init__`` and
``_generate_and_score_completions``):

- the factory: a zero-argument callable; TRL builds one instance per concurrent rollout and
  reuses them across batches (``reset`` between rollouts), so an instance holds exactly one env;
- ``reset(**row)``: every column of the dataset row as a keyword argument; a returned string is
  appended to the last prompt message, ``None`` leaves the prompt as it is;
- ``get_reward()``: called once per finished rollout; a reward column named after the
  environment's class, with weight 1;
- every other public function of the class (``inspect.getmembers(type(env), inspect.isfunction)``)
  is a tool, described to the model by ``transformers.utils.get_json_schema``: type hints and a
  Google-style docstring.

This module builds, per env id, a class whose tool methods are generated from the env's OpenAI
schemas (a typed keyword-only signature, defaults for optional parameters, ``Args:`` from the
schema descriptions; what type hints cannot say, such as bounds, defaults or a nested object's
fields, is added to the parameter's description), so the model sees the env's own tools:

    from servicegym.envs.integrations.trl import environment_factory, score_reward_funcs, trl_dataset

    env_id = "servicegym/Delivery-v0"
    funcs = score_reward_funcs(env_id)               # score components, logged with weight 0
    config = GRPOConfig(..., reward_weights=[0.0] * len(funcs))
    trainer = GRPOTrainer(model=..., args=config, train_dataset=trl_dataset(env_id, "train", 512),
                          reward_funcs=funcs, environment_factory=environment_factory(env_id))

The reward (``get_reward``) is the episode's strict success, 1.0 or 0.0: a rollout that stops while
the conversation is still open is ended first (the agent sends ``###STOP###``) so the env scores
it. ``score_reward_funcs`` gives one reward function per ``env.unwrapped.score_keys`` component
that is a reward (``rubric_fraction``, ``goal``, ``proc``...; not the counts of ``count_keys``,
such as ``rubric_items``, which TRL would log as a reward), which read the rollout's environment
and, with weight 0, are logged (``rewards/<key>/mean``) without changing the advantage. Everything here pickles
(the factory, the reward functions), as TRL's async trainer needs; there the reward functions get
no environments and return ``None`` (ignored), since that trainer has no reward weights.

Model endpoints inside the episode (``user="llm"``, ``judge="llm"``; ``LLMConfig``'s retries and
``deadline_s`` bound each call) never raise out of a tool or ``get_reward``: a failed LLM user ends
the episode (the ``respond`` result says ``Error: the user simulator could not reply: ...`` and
``[The conversation has ended (user_error).]``), a failed judge scores it 0.0. A reward function
reads why from its environments: ``env.termination_reason`` and ``env.judge_error`` (properties,
so TRL does not take them for tools).
"""

from __future__ import annotations

import inspect
import json
import re
import threading
import warnings
from typing import Any, Literal, Union

import gymnasium as gym

from servicegym.envs.environments.base import STOP, USER_TOOL
from servicegym.envs.integrations.dataset import task_rows
from servicegym.envs.running.vector import resolve_env_id

ENDED = "The conversation has ended; nothing was run. Reply without a tool call to finish."
# the system prompt's last line tells the model to call tools with <tool_call> blocks and that any other
# reply reaches the user; under TRL the chat template shows the tools and a reply without a tool call
# ends the rollout, so trl_rows says that instead
TOOL_LINE = "Call a tool by replying with"
TRL_TOOL_LINE = (f"Use the tools provided. Talk to {{who}} only through the {USER_TOOL} tool: its result is "
                 f"{{who}}'s reply. Put {STOP} in a {USER_TOOL} message to end the conversation. A reply without a "
                 "tool call ends the episode.")
_FINISH_LIMIT = 200  # ###STOP### messages to end an episode (a Workspace episode ends one session per STOP)

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}
_BLOCK = re.compile(
    r'<(?P<tag>tool_result|tool_error|user|error)(?: name="[^"]*" call_id="[^"]*")?>(?P<body>.*?)</(?P=tag)>'
    r"(?P<rest>(?:\n<(?:tool_result|tool_error|user|error|session)\b.*)?)\Z",
    re.DOTALL,
)


# ----- JSON schema -> Python signature and docstring -----------------------------------------

def _hint(schema: Any) -> Any:
    """The type hint ``transformers.utils.get_json_schema`` turns back into ``schema`` (as near as
    type hints go: enums, scalar types, arrays with their items, maps with their value type)."""
    if not isinstance(schema, dict) or not schema:
        return Any
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(type(v) in (str, int, float, bool, type(None)) for v in enum):
        return Literal[tuple(enum)]
    alts = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alts, list) and alts:
        return _union([_hint(s) for s in alts])
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        return _union([_hint({**schema, "type": k}) for k in kind])
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array":
        return list[_hint(schema.get("items"))]  # list[Any], not list: older transformers map a bare list to "object"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return dict[str, _hint(extra)] if isinstance(extra, dict) and extra else dict
    return Any


def _union(hints: list[Any]) -> Any:
    unique = list(dict.fromkeys(hints))
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007  (a runtime union of hints)


_HINTED = {"type", "enum", "items", "additionalProperties", "description"}  # what _hint and the docstring carry
_NOTED = {"default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
          "minItems", "maxItems", "minProperties", "maxProperties"}  # said in the parameter's description


def hinted(schema: Any, top: bool = True) -> bool:
    """Whether the type hint (and, at the top, the description's notes) say all of ``schema``; else the
    description adds the JSON schema (an object's fields, alternatives, bounds of array items)."""
    if not isinstance(schema, dict):
        return False
    if set(schema) - _HINTED - (_NOTED if top else set()):
        return False
    extra = schema.get("additionalProperties")
    return (("items" not in schema or hinted(schema["items"], False))
            and (extra is None or extra is True or (isinstance(extra, dict) and hinted(extra, False))))


_BOUNDS = (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"))
_SIZES = (("minLength", "at least {} characters"), ("maxLength", "at most {} characters"),
          ("minItems", "at least {} items"), ("maxItems", "at most {} items"),
          ("minProperties", "at least {} entries"), ("maxProperties", "at most {} entries"))


def _param_text(schema: dict[str, Any]) -> str:
    """A parameter's description for the docstring: the schema's, then what type hints lose."""
    text = " ".join(str(schema.get("description") or "").split())
    notes = []
    if "default" in schema:
        notes.append(f"default {json.dumps(schema['default'], ensure_ascii=False)}")
    notes += [f"{op} {schema[key]}" for key, op in _BOUNDS if key in schema]
    notes += [form.format(schema[key]) for key, form in _SIZES if key in schema]
    if not hinted(schema):
        inner = {k: v for k, v in schema.items() if k not in ("description", "default")}
        notes.append(f"JSON schema: {json.dumps(inner, ensure_ascii=False, separators=(',', ':'))}")
    if notes:
        text = f"{text} ({'; '.join(notes)})" if text else "; ".join(notes)
    return _safe_doc(text)


def _safe_doc(text: str) -> str:
    # transformers' docstring parser cuts a description at "Args:", "Returns:" or "Raises:" anywhere
    return re.sub(r"\b(Args|Returns|Raises):", r"\1 :", text)


def tool_signature(schema: dict[str, Any]) -> tuple[inspect.Signature, dict[str, Any], str]:
    """``(signature, annotations, docstring)`` of the method for one OpenAI function schema: ``self``
    then a keyword-only parameter per property (in the schema's order; a default for the optional
    ones, the schema's own when it has one), and a Google-style docstring."""
    fn = schema.get("function", schema)
    params = fn.get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    required = set(params.get("required") or [])
    sig = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    lines = []
    for name, prop in props.items():
        prop = prop if isinstance(prop, dict) else {}
        hint = _hint(prop)
        default = inspect.Parameter.empty if name in required else prop.get("default")
        sig.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
        annotations[name] = hint
        lines.append(f"    {name}: {_param_text(prop)}")
    doc = _safe_doc(str(fn.get("description") or fn["name"]).strip())
    if lines:
        doc += "\n\nArgs:\n" + "\n".join(lines)
    return inspect.Signature(sig), annotations, doc


def _tool_method(name: str, schema: dict[str, Any], class_name: str) -> Any:
    def tool(self: TRLEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    signature, annotations, doc = tool_signature(schema)
    tool.__name__ = name
    tool.__qualname__ = f"{class_name}.{name}"
    tool.__doc__ = doc
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = annotations
    return tool


# ----- the environment ------------------------------------------------------------------------

class TRLEnvironment:
    """One servicegym env behind TRL's environment interface (``reset``, ``get_reward``, one method
    per tool). Subclasses per env id are built by ``environment_class``; instances never share an env."""

    _env_id: str = ""
    _env_kwargs: dict[str, Any] = {}
    _tool_names: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._env = gym.make(self._env_id, **{**self._env_kwargs, "user_tool": True})
        self._started = False
        self._done = True
        self._success = False
        self._score: dict[str, Any] = {}
        self._reason = ""
        self._judge_error = ""
        self._warned = False

    def reset(self, **row: Any) -> str | None:
        """Reset to the row's task (``task_id``) and ``seed`` (rows of ``trl_rows`` / ``task_rows``).
        Returns ``None`` when the row's prompt already ends with the env's opening (TRL then generates
        from the row's prompt as it is); for a row without a prompt (TRL's placeholder when training
        without a dataset) the system prompt (``trl_prompt``) and opening, which TRL appends to the
        empty user message."""
        env_id = row.get("env_id")
        if env_id and resolve_env_id(str(env_id)) != self._env_id:
            raise ValueError(f"row of {env_id!r} given to the environment of {self._env_id!r}")
        task_id, seed = row.get("task_id"), row.get("seed")
        options = {"task_id": str(task_id)} if task_id else None
        opening, info = self._env.reset(seed=None if seed is None else int(seed), options=options)
        self._started, self._done, self._success, self._score, self._reason = True, False, False, {}, ""
        self._judge_error = ""
        last = _last_user_text(row.get("prompt"))
        if not last.strip():
            return f"{trl_prompt(info['system_prompt'])}\n\n{opening}"
        if opening.strip() not in last and not self._warned:
            self._warned = True
            warnings.warn(f"{self._env_id}: the row's prompt does not end with the opening of task {task_id!r} "
                          "(rows made with other env arguments?); the model does not see what the user said",
                          stacklevel=2)
        return None

    # properties, not tools: TRL exposes only the class's functions (``inspect.isfunction``)
    @property
    def termination_reason(self) -> str:
        """Why the episode ended: the env's ``info["termination_reason"]`` (``agent_stop``,
        ``user_stop``, ``max_steps``, ``max_errors``, ``user_error`` when the LLM user's endpoint
        failed...); ``""`` while it is open. ``get_reward`` ends an open episode first."""
        return self._reason

    @property
    def judge_error(self) -> str:
        """What failed when the LLM judge (``judge="llm"``) could not score the episode (its
        endpoint timed out, refused, answered 429/500 after retries...): the env's
        ``info["judge_error"]``; such an episode is not a success. ``""`` when it did not fail."""
        return self._judge_error

    def get_reward(self) -> float:
        """The episode's strict success (1.0 or 0.0); an open episode is ended first, as if the agent
        had sent ###STOP###, so the env scores it."""
        self._finish()
        return 1.0 if self._success else 0.0

    # private: TRL exposes every public function as a tool
    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._done:
            return ENDED
        action = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, default=str)
        obs, _, terminated, truncated, info = self._env.step(action)
        text = result_text(obs)
        if terminated or truncated:
            self._end(info)
            text = f"{text}\n[The conversation has ended ({self._reason}).]"
        return text

    def _end(self, info: dict[str, Any]) -> None:
        self._done = True
        self._success = bool(info.get("success"))
        self._score = dict(info.get("score") or {})
        self._reason = str(info.get("termination_reason") or "ended")
        self._judge_error = str(info.get("judge_error") or "")

    def _finish(self) -> None:
        """End an open episode (the agent says ###STOP###; a Workspace episode needs one per session)."""
        if not self._started or self._done:
            return
        for _ in range(_FINISH_LIMIT):
            *_, terminated, truncated, info = self._env.step(STOP)
            if (terminated or truncated) and "score" in info:
                self._end(info)
                return
        raise RuntimeError(f"{self._env_id}: the episode did not end after {_FINISH_LIMIT} {STOP} messages")

    def _component(self, key: str) -> float | None:
        if not self._started:
            return None
        self._finish()
        value = self._score.get(key)
        return float(value) if isinstance(value, (bool, int, float)) else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._env_id} {'done' if self._done else 'open'}>"


def _last_user_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
        content = prompt[-1].get("content")
        if isinstance(content, list):  # content blocks
            return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return str(content or "")
    return ""


def result_text(obs: str) -> str:
    """The text of the call's block (a tool error says so), with what followed it (a new session,
    a notice) kept as tagged text."""
    m = _BLOCK.match(obs)
    if m is None:
        return obs
    body = m.group("body")
    if m.group("tag") in ("tool_error", "error"):
        body = f"Error: {body}"
    rest = m.group("rest").strip()
    return f"{body}\n{rest}" if rest else body


_CLASSES: dict[str, type[TRLEnvironment]] = {}
_LOCK = threading.Lock()


def _kwargs_key(env_id: str, env_kwargs: dict[str, Any]) -> str:
    return json.dumps([env_id, env_kwargs], sort_keys=True, default=repr)


def environment_class(env_id: str, **env_kwargs: Any) -> type[TRLEnvironment]:
    """The ``TRLEnvironment`` subclass of ``env_id`` (made with ``env_kwargs`` and ``user_tool=True``):
    one method per tool of the env, built once per process and cached. The class is named after the
    env (``Delivery_v0``): TRL logs ``get_reward`` as ``rewards/<class name>/mean``."""
    env_id = resolve_env_id(env_id)
    env_kwargs = {k: v for k, v in env_kwargs.items() if k != "user_tool"}
    key = _kwargs_key(env_id, env_kwargs)
    with _LOCK:
        cls = _CLASSES.get(key)
        if cls is not None:
            return cls
        probe = gym.make(env_id, **{**env_kwargs, "user_tool": True})
        try:
            schemas = probe.unwrapped.tool_schemas()
        finally:
            probe.close()
        class_name = re.sub(r"\W", "_", env_id.split("/")[-1])
        namespace: dict[str, Any] = {"_env_id": env_id, "_env_kwargs": dict(env_kwargs), "__module__": __name__,
                                     "__qualname__": class_name,
                                     "__doc__": f"{env_id} for TRL's environment_factory (see servicegym.envs.integrations.trl)."}
        names = []
        for schema in schemas:
            name = schema["function"]["name"]
            if name in ("reset", "get_reward") or name.startswith("_") or not name.isidentifier() or name in namespace:
                raise ValueError(f"{env_id}: tool {name!r} cannot be a method of the TRL environment")
            namespace[name] = _tool_method(name, schema, class_name)
            names.append(name)
        namespace["_tool_names"] = tuple(names)
        cls = type(class_name, (TRLEnvironment,), namespace)
        _CLASSES[key] = cls
        return cls


class EnvironmentFactory:
    """A picklable zero-argument factory (TRL's ``environment_factory``): each call makes a new
    ``environment_class(env_id, **env_kwargs)`` instance with its own env."""

    def __init__(self, env_id: str, **env_kwargs: Any) -> None:
        self.env_id = resolve_env_id(env_id)
        self.env_kwargs = {k: v for k, v in env_kwargs.items() if k != "user_tool"}

    @property
    def environment_class(self) -> type[TRLEnvironment]:
        return environment_class(self.env_id, **self.env_kwargs)

    def __call__(self) -> TRLEnvironment:
        return self.environment_class()

    def __repr__(self) -> str:
        return f"EnvironmentFactory({self.env_id!r}, **{self.env_kwargs!r})"


def environment_factory(env_id: str, **env_kwargs: Any) -> EnvironmentFactory:
    """``GRPOTrainer(environment_factory=environment_factory("servicegym/Delivery-v0"))``: one env
    per rollout, made with ``env_kwargs`` (``split``, ``tasks``, ``max_steps``, ``user``...) and
    ``user_tool=True``. For several envs in one run pass TRL a dict ``{name: environment_factory(id)}``
    and give each row an ``environment`` column with its name."""
    return EnvironmentFactory(env_id, **env_kwargs)


def trl_tools(env: TRLEnvironment) -> dict[str, Any]:
    """The tool dict TRL builds for a rollout on ``env`` (``GRPOTrainer``: every public function of
    the class but ``reset`` and ``get_reward``, by name, in ``inspect.getmembers`` order), as bound
    methods: what ``apply_chat_template(tools=...)`` renders and the tool loop calls."""
    return {name: getattr(env, name) for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


# ----- reward components ----------------------------------------------------------------------

class ScoreComponent:
    """A TRL reward function returning one score component (``info["score"][key]``) of each
    rollout's finished episode: read from the ``environments`` TRL passes (``None`` for a rollout
    whose env lacks the key, or when TRL passes no environments, as its async trainer does). Give
    it weight 0 in ``GRPOConfig.reward_weights`` to log it without training on it. Picklable."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.__name__ = key  # TRL names the reward column after it

    def __call__(self, completions: list[Any] | None = None, environments: list[Any] | None = None,
                 **kwargs: Any) -> list[float | None]:
        if environments is None:
            return [None] * len(completions or [])
        return [e._component(self.key) if isinstance(e, TRLEnvironment) else None for e in environments]

    def __repr__(self) -> str:
        return f"ScoreComponent({self.key!r})"


def score_keys(env_id: str, **env_kwargs: Any) -> tuple[str, ...]:
    """The score components every finished episode of ``env_id`` reports that are rewards
    (``env.unwrapped.score_keys`` less its ``count_keys``)."""
    env = gym.make(resolve_env_id(env_id), **env_kwargs)
    try:
        counts = set(env.unwrapped.count_keys)
        return tuple(k for k in env.unwrapped.score_keys if k not in counts)
    finally:
        env.close()


def score_reward_funcs(env_id: str | list[str], **env_kwargs: Any) -> list[ScoreComponent]:
    """One ``ScoreComponent`` per reward component of the env (or envs, keys in first-seen order):
    its score keys less the counts (``count_keys``)."""
    ids = [env_id] if isinstance(env_id, str) else list(env_id)
    keys = dict.fromkeys(k for i in ids for k in score_keys(i, **env_kwargs))
    return [ScoreComponent(k) for k in keys]


# ----- dataset rows ---------------------------------------------------------------------------

def trl_prompt(system_prompt: str) -> str:
    """The system prompt with its tool-call line replaced by how tools and the user work under TRL."""
    lines = system_prompt.split("\n")
    line = next((x for x in reversed(lines) if x.startswith(TOOL_LINE)), None)
    who = "the user"
    if line is not None:
        m = re.search(r"Any other reply is sent to ([^.]+)\.", line)
        who = m.group(1) if m else who
        lines.remove(line)
    return "\n".join([*lines, TRL_TOOL_LINE.format(who=who)])


def trl_rows(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
             env_kwargs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """``task_rows`` for TRL: made with ``user_tool=True``, the system prompt's tool-call line
    replaced (``trl_prompt``), and without the ``tools`` column (TRL shows the environment's
    methods; the schemas in every row would only weigh on the dataset)."""
    rows = task_rows(env_id, split, n, seed, {**(env_kwargs or {}), "user_tool": True})
    out = []
    for row in rows:
        system = trl_prompt(row["system_prompt"])
        prompt = [{**m, "content": system} if m["role"] == "system" else m for m in row["prompt"]]
        out.append({**{k: v for k, v in row.items() if k != "tools"}, "system_prompt": system, "prompt": prompt})
    return out


def trl_dataset(env_id: str, split: str = "train", n: int | None = None, seed: int = 0,
                env_kwargs: dict[str, Any] | None = None) -> Any:
    """``trl_rows`` as a ``datasets.Dataset``."""
    from servicegym.envs.integrations.dataset import hf_dataset

    return hf_dataset(trl_rows(env_id, split, n, seed, env_kwargs))
