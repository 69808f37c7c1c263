"""Unread rubric items written as typed checks by a chat model, kept only when the gold bears them out.

``servicegym rubrics --compile`` (``compile_checks``): for each rubric item of a VitaBench file
that the loader does not check by code (``audit.py``), in file order and at most ``max_items``:

1. ask an OpenAI-compatible chat model (``simulators/llm.py``'s ``LLMClient``: its retries,
   timeouts, deadline and reply-size limit; the API key only from ``OPENAI_API_KEY``) to write the
   item as one of the compiler's typed specs: the request holds the item, the task's other items,
   its context trimmed to ``MAX_CONTEXT_CHARS`` (now, address book, the stores/shops and products
   whose words the item shares first, the ids of existing records, the tool names) and the JSON
   schema of the allowed specs, and asks for a JSON object (``response_format``);
2. read the reply defensively: at most ``MAX_REPLY_CHARS``, JSON nested at most ``MAX_JSON_DEPTH``,
   validated with pydantic (``parse_spec``), every id and tool it names found in the task; a reply
   that fails is answered once with the error, a second failure gives the item up (reported);
   ``{"spec": null}`` is the model saying the item is not checkable; a time window takes the
   project's tolerance for its relation (``TOLERANCE_MIN``), whatever the model wrote;
3. keep the spec only if the task's golden route passes it: the task is converted again with the
   spec supplied (``checks_file.using_checks``) and the item must become a rubric item, no item
   checked before may be lost, and the golden route played through the env must succeed;
4. write the kept checks, with those of the rubric-checks file the load used, to the sidecar.

Nothing the endpoint does stops the run: an ``LLMError`` (after the client's retries) gives the
item up; ``MAX_CONSECUTIVE_ERRORS`` in a row end the run early (the endpoint is down), reported.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import gymnasium as gym
from pydantic import TypeAdapter, ValidationError

from servicegym.envs.tasks.model import TaskFileError, TaskSkippedWarning, read_json
from servicegym.envs.tasks.vitabench.audit import FileAudit, audit_env, item_topic
from servicegym.envs.tasks.vitabench.checks_file import (
    RubricChecksWarning,
    default_checks_path,
    read_checks,
    task_digest,
    using_checks,
    write_checks,
)
from servicegym.rewards.nl_rubric import (
    TOLERANCE_MIN,
    AllOf,
    ItemContext,
    ItemSpec,
    ProcessSpec,
    StoreSpec,
    TimeWindow,
    describe_spec,
    item_context,
    parse_spec,
    spec_parts,
)
from servicegym.simulators.llm import MAX_JSON_DEPTH, LLMClient, LLMConfig, LLMError, loads_json

MAX_CONTEXT_CHARS = 12_000  # the task context sent with one item
MAX_REPLY_CHARS = 16_000  # a longer reply is no spec
MAX_RESPONSE_BYTES = 256 * 1024  # the client's cap on a reply body
MAX_REPLY_TOKENS = 1_024
MAX_OTHER_ITEMS = 20
MAX_CONSECUTIVE_ERRORS = 3
DEFAULT_MAX_ITEMS = 200
RESPONSE_FORMATS = ("json_schema", "json_object", "none")

SYSTEM_PROMPT = """\
You turn one natural-language rubric item of a customer-service task into a typed check that code \
evaluates on the final database (orders, bookings, reservations) and the history of tool calls.
Reply with one JSON object and nothing else: {"spec": CHECK, "reason": "one short sentence"}, where \
CHECK follows the JSON schema below, or {"spec": null, "reason": "..."} when no check of these \
kinds says what the item asks.
Rules: use only the ids, names, addresses and tool names listed in the task context; times are \
"YYYY-MM-DD HH:MM:SS", relative dates ("today", "tomorrow") are read against the context's "now"; \
set "about" to the item's words that say which order, booking or place it is about; use "all_of" \
only when the item asks several things of one record. Never invent a store, product or record.
JSON schema of CHECK:
"""


@dataclass
class ItemOutcome:
    """What became of one unread item: ``kept`` (in the sidecar), ``dropped`` (the model's check
    fails the gold, or the model found it not checkable) or ``failed`` (no valid reply)."""

    task_id: str
    index: int
    text: str
    topic: str
    status: str
    check: str = ""  # the rubric item it became (kept)
    spec: dict[str, Any] | None = None
    described: str = ""
    reason: str = ""
    calls: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CompileReport:
    path: str
    env_id: str
    model: str
    sidecar: str
    items: list[ItemOutcome] = field(default_factory=list)
    unread: int = 0  # unread items of the audited tasks
    written: bool = False
    stopped: str = ""  # why the run ended early ("" when it did not)
    checks_problems: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {"unread": self.unread, "asked": len(self.items), "kept": 0, "dropped": 0, "failed": 0,
               "calls": sum(i.calls for i in self.items)}
        for i in self.items:
            out[i.status] = out.get(i.status, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        return {"file": self.path, "env": self.env_id, "model": self.model, "sidecar": self.sidecar,
                "written": self.written, "stopped": self.stopped, "counts": self.counts(),
                "items": [i.to_json() for i in self.items], "rubric_checks_problems": list(self.checks_problems)}


# ----- the request ---------------------------------------------------------------------------------
_WORDS = re.compile(r"[a-z0-9]{3,}|[\u3400-\u4dbf\u4e00-\u9fff]+")


def _units(text: str) -> set[str]:
    """Lower-case words of three or more characters and Chinese character pairs."""
    out: set[str] = set()
    for w in _WORDS.findall(text.casefold()):
        if w.isascii():
            out.add(w)
        else:
            out.update(w[i:i + 2] for i in range(max(1, len(w) - 1)))
    return out


def task_context(context: ItemContext, text: str, limit: int = MAX_CONTEXT_CHARS) -> dict[str, Any]:
    """What the model may name for one item: the task's now, address book, tools, existing record
    ids, and its places and products, those sharing the most words with the item first, cut to
    ``limit`` characters of JSON."""
    want = _units(text)

    def score(*fields: Any) -> int:
        return len(want & _units(" ".join(str(f) for f in fields)))

    places = sorted(context.places, key=lambda p: -score(p.name, p.category, *p.tags))
    products = sorted(context.products, key=lambda p: -score(p.name, *p.tags, *p.options))
    out: dict[str, Any] = {
        "now": context.now.strftime("%Y-%m-%d %H:%M:%S"),
        "addresses": [{"address": a, "longitude": lon, "latitude": lat} for a, lon, lat in context.addresses[:20]],
        "tools": sorted(context.tools),
        "existing_record_ids": list(context.record_ids[:50]),
        "places": [{"id": p.place_id, "name": p.name, "tags": list(p.tags[:10]), "category": p.category,
                    "rating": p.score, "address": p.address} for p in places[:40]],
        "products": [{"id": p.product_id, "place_id": p.place_id, "name": p.name, "tags": list(p.tags[:10]),
                      "options": list(p.options[:12]), "price": p.price} for p in products[:120]],
    }
    # cut the least related entries until it fits (a product first, then a place)
    while len(json.dumps(out, ensure_ascii=False)) > limit:
        for key in ("products", "places", "existing_record_ids", "addresses"):
            if out[key]:
                out[key].pop()
                break
        else:
            break
    return out


@lru_cache(maxsize=1)
def _schema_text() -> str:
    return json.dumps(TypeAdapter(ItemSpec).json_schema(), ensure_ascii=False, separators=(",", ":"))


def spec_schema() -> dict[str, Any]:
    """The JSON schema of the allowed specs (``ItemSpec``: every compiled kind and ``all_of``)."""
    return json.loads(_schema_text())


def reply_schema() -> dict[str, Any]:
    """The JSON schema of a reply: ``{"spec": <spec or null>, "reason": str}``."""
    schema = spec_schema()
    defs = schema.pop("$defs", {})
    return {"type": "object", "additionalProperties": False, "required": ["spec", "reason"], "$defs": defs,
            "properties": {"spec": {"anyOf": [schema, {"type": "null"}]}, "reason": {"type": "string"}}}


def messages_for(text: str, others: list[str], context: dict[str, Any]) -> list[dict[str, str]]:
    """The request of one item (system: the rules and the schema; user: the item and its task)."""
    system = SYSTEM_PROMPT + _schema_text()
    user = json.dumps({"item": text, "other_items_of_the_task": [o[:400] for o in others[:MAX_OTHER_ITEMS]],
                       "task_context": context}, ensure_ascii=False)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _response_format(kind: str) -> dict[str, Any] | None:
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "rubric_check", "schema": reply_schema(), "strict": False}}
    if kind == "json_object":
        return {"type": "json_object"}
    return None


# ----- the reply -----------------------------------------------------------------------------------
class _Invalid(ValueError):
    """A reply that is no valid check (the message goes back to the model once)."""


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def _normalised(spec: Any) -> Any:
    """A time window with the project's tolerance for its relation, never the model's own."""
    if isinstance(spec, TimeWindow):
        return spec.model_copy(update={"tolerance_min": TOLERANCE_MIN[spec.relation], "repaired": ""})
    if isinstance(spec, AllOf):
        return spec.model_copy(update={"parts": [_normalised(p) for p in spec.parts]})
    return spec


def read_reply(content: str | None, context: ItemContext) -> tuple[Any | None, str]:
    """The spec of a reply (None with the model's reason when it says the item is not checkable);
    ``_Invalid`` naming what is wrong otherwise."""
    text = (content or "").strip()
    if not text:
        raise _Invalid("the reply is empty")
    if len(text) > MAX_REPLY_CHARS:
        raise _Invalid(f"the reply is {len(text)} characters, over the {MAX_REPLY_CHARS}-character limit")
    m = _FENCE.match(text)
    if m:
        text = m.group(1)
    try:
        data = loads_json(text, MAX_JSON_DEPTH)
    except ValueError as err:
        raise _Invalid(f"the reply is not JSON ({str(err)[:200]})") from None
    if not isinstance(data, dict):
        raise _Invalid("the reply must be a JSON object {\"spec\": ..., \"reason\": ...}")
    if "spec" not in data and "kind" in data:
        data = {"spec": data}  # a bare check
    if "spec" not in data:
        raise _Invalid("the reply has no \"spec\" field")
    if data["spec"] is None:
        return None, str(data.get("reason") or "")[:300]
    try:
        spec = parse_spec(data["spec"])
    except ValidationError as err:
        errs = err.errors(include_url=False)[:3]
        raise _Invalid("the spec does not validate: " + "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errs)) from None
    known_places = {p.place_id for p in context.places}
    for p in spec_parts(spec):
        if isinstance(p, StoreSpec) and not set(p.place_ids) <= known_places:
            raise _Invalid(f"place ids {sorted(set(p.place_ids) - known_places)} are not in the task context")
        if isinstance(p, ProcessSpec) and not set(p.tools) & set(context.tools):
            raise _Invalid(f"none of the tools {p.tools} is a tool of the task")
        rid = getattr(p, "record_id", "")
        if rid and rid not in context.record_ids:
            raise _Invalid(f"record {rid!r} is not an existing record of the task")
    return _normalised(spec), ""


class EndpointFailed(Exception):
    """The client gave up on a call (``LLMError`` after its retries), with the calls made so far."""

    def __init__(self, error: LLMError, calls: int) -> None:
        super().__init__(str(error))
        self.calls = calls


def ask(client: LLMClient, messages: list[dict[str, str]], context: ItemContext,
        response_format: dict[str, Any] | None) -> tuple[Any | None, str, int]:
    """(spec, why not, calls made): one call, and once more with the error when the reply is
    invalid; ``EndpointFailed`` when the client gives a call up."""
    calls = 0
    convo = list(messages)
    for attempt in range(2):
        calls += 1
        try:
            result = client.chat(convo, response_format=response_format)
        except LLMError as err:
            raise EndpointFailed(err, calls) from None
        try:
            spec, why = read_reply(result.content, context)
        except _Invalid as err:
            if attempt == 1:
                return None, f"invalid reply after a retry: {err}", calls
            convo += [{"role": "assistant", "content": (result.content or "")[:2000]},
                      {"role": "user", "content": f"That reply is not a valid check: {err}. Reply again with only "
                                                  'the JSON object {"spec": ..., "reason": ...}.'}]
            continue
        if spec is None:
            return None, f"the model finds it not checkable ({why})" if why else "the model finds it not checkable", calls
        return spec, "", calls
    return None, "no valid reply", calls  # not reached


# ----- the gold check ----------------------------------------------------------------------------
def _checked(task: Any) -> dict[int, str]:
    return {r.params["nl_index"]: r.name for r in task.rubric
            if r.kind.startswith("nl_") and isinstance(r.params.get("nl_index"), int)}


def verify(raw: dict[str, Any], path: Path, domain: str, env_id: str, supplied: dict[str, Any], k: int,
           before: set[int]) -> tuple[bool, str]:
    """Whether the task converted with ``supplied`` checks item ``k`` by code, keeps every item
    of ``before`` checked, and its golden route still succeeds in the env: (ok, the rubric item
    name or why not)."""
    from servicegym.envs.running.policies import OraclePolicy, run_episode
    from servicegym.envs.tasks.vitabench import convert_vitabench_file

    tid = str(raw.get("id"))
    with using_checks({tid: supplied}):
        try:
            (task,) = convert_vitabench_file([raw], path, domain)
        except TaskFileError as err:
            why = err.skipped[0]["reason"] if getattr(err, "skipped", None) else str(err)
            return False, f"with it the task no longer loads ({why})"
    checked = _checked(task)
    if k not in checked:
        notes = [n for n in task.notes if re.match(rf"rubric item {k}\b", n) and "judge" in n]
        return False, notes[0] if notes else "the loader does not check it"
    lost = sorted(before - set(checked))
    if lost:
        return False, f"with it rubric items {lost} are no longer checked by code"
    env = gym.make(env_id, tasks=[task])
    try:
        record = run_episode(env, OraclePolicy(), seed=0, options={"task_id": tid})
    finally:
        env.close()
    if not record["success"]:
        failing = sorted(key for key, v in record["score"].items() if key.startswith("rubric/") and not v)
        return False, f"the golden route fails with it ({', '.join(failing) or 'not a success'})"
    return True, checked[k]


# ----- the run -----------------------------------------------------------------------------------
def compile_checks(path: str | Path, env_id: str, config: LLMConfig | dict[str, Any], out: str | Path | None = None,
                   max_items: int = DEFAULT_MAX_ITEMS, task_ids: Iterable[str] | None = None,
                   response_format: str = "json_schema", client: LLMClient | None = None,
                   progress: Callable[[ItemOutcome], None] | None = None) -> CompileReport:
    """Ask the model for the unread items of a task file, keep the checks the gold bears out and
    write them, with those of the rubric-checks file in use, to ``out`` (default: beside the file).
    ``TaskFileError`` when the task file does not load, ``ValueError`` for a task id it does not
    have; endpoint failures are reported per item."""
    path = Path(path)
    out = Path(out) if out is not None else default_checks_path(path)
    cfg = LLMConfig.resolve(config)
    client = client or LLMClient(cfg)
    fmt = _response_format(response_format)
    # the checks in use: the output file's when it exists (they are kept), else the loader's default
    used = out if out.is_file() else (default_checks_path(path) if default_checks_path(path).is_file() else None)
    problems: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RubricChecksWarning)
        warnings.simplefilter("ignore", TaskSkippedWarning)
        env = gym.make(env_id, tasks=str(path), **({"rubric_checks": str(used)} if used else {}))
    problems += [str(w.message) for w in caught if issubclass(w.category, RubricChecksWarning)]
    raw_tasks = read_json(path)
    base: dict[str, dict[str, Any]] = read_checks(used, raw_tasks)[0] if used else {}
    wanted = set(task_ids) if task_ids is not None else None
    unknown = sorted((wanted or set()) - set(env.unwrapped.task_ids()) - {s["task_id"] for s in env.unwrapped.skipped_tasks})
    if unknown:
        env.close()
        raise ValueError(f"unknown task id(s) {', '.join(unknown)} in {path}")
    audit: FileAudit = audit_env(env, str(path), env_id, sorted(wanted) if wanted else None, base)
    u = env.unwrapped
    raws = {}
    for raw in raw_tasks:
        if isinstance(raw, dict) and str(raw.get("id")) not in raws:
            raws[str(raw.get("id"))] = raw
    report = CompileReport(str(path), env_id, cfg.model, str(out), checks_problems=problems)
    report.unread = sum(not i.checked for t in audit.tasks for i in t.items)
    kept: dict[str, dict[str, Any]] = {}
    errors_in_a_row = 0
    for t in audit.tasks:
        task = u.source.get(t.task_id)
        before = {i.index for i in t.items if i.checked}
        context: ItemContext | None = None
        for item in (i for i in t.items if not i.checked):
            if len(report.items) >= max_items:
                report.stopped = f"--max-items {max_items} reached"
                break
            if context is None:
                context = item_context(task.cached_world(u.build_world), u.toolkit.names)
            outcome = ItemOutcome(t.task_id, item.index, item.text, item_topic(item.text), "failed")
            msgs = messages_for(item.text, [x for x in task.nl_rubric if x != item.text], task_context(context, item.text))
            try:
                spec, why, outcome.calls = ask(client, msgs, context, fmt)
                errors_in_a_row = 0
            except EndpointFailed as err:
                spec, why = None, f"endpoint error: {err}"
                outcome.calls = err.calls
                errors_in_a_row += 1
            if spec is None:
                outcome.status = "dropped" if why.startswith("the model finds") else "failed"
                outcome.reason = why
            else:
                outcome.spec = spec.model_dump(mode="json")
                outcome.described = describe_spec(spec)
                supplied = {**base.get(t.task_id, {}), **kept.get(t.task_id, {}), item.text: spec}
                ok, said = verify(raws[t.task_id], path, u.domain, env_id, supplied, item.index, before)
                if ok:
                    outcome.status, outcome.check = "kept", said
                    kept.setdefault(t.task_id, {})[item.text] = spec
                    before.add(item.index)
                else:
                    outcome.status, outcome.reason = "dropped", said
            report.items.append(outcome)
            if progress is not None:
                progress(outcome)
            if errors_in_a_row >= MAX_CONSECUTIVE_ERRORS:
                report.stopped = f"{MAX_CONSECUTIVE_ERRORS} endpoint errors in a row"
                break
        if report.stopped:
            break
    env.close()
    if kept:
        merged = {tid: dict(v) for tid, v in base.items()}
        for tid, v in kept.items():
            merged.setdefault(tid, {}).update(v)
        model = cfg.model
        if used is not None and used.resolve() == out.resolve():
            try:
                old = json.loads(out.read_text(encoding="utf-8")).get("model")
            except (OSError, ValueError, AttributeError):
                old = None
            if isinstance(old, str) and old and old != model:
                model = f"{old}, {model}"
        write_checks(out, path.name, model, merged, {tid: task_digest(raws[tid]) for tid in merged if tid in raws})
        report.written = True
    return report


def render_compile(report: CompileReport) -> str:
    lines = [f"servicegym rubrics --compile: {report.path} with {report.env_id}, model {report.model!r}"]
    lines += [f"warning: {p}" for p in report.checks_problems]
    for i in report.items:
        what = f"{i.check}: {i.described}" if i.status == "kept" else i.reason
        lines.append(f"{i.task_id} [{i.index}] {i.topic:<8} {i.status:<7} {what}")
        lines.append(f"    {' '.join(i.text.split())}")
    c = report.counts()
    if report.stopped:
        lines.append(f"stopped early: {report.stopped}")
    where = f"written to {report.sidecar}" if report.written else "nothing written"
    lines.append(f"summary: {c['asked']} of {c['unread']} unread items asked ({c['calls']} calls): {c['kept']} kept, "
                 f"{c['dropped']} dropped, {c['failed']} failed; {where}")
    return "\n".join(lines)
