"""Hardening (issue 30): every failed Workspace write leaves the workspace byte-identical.

For every write tool of every persona (``servicegym/Workspace-v0``), a corpus of bad arguments
(missing, wrong types, unknown ids and paths, oversized values, unknown keys; each also beside the
real paths and ids of the seeded world, so refusals deep inside a tool are reached too) goes through
``env.step``: the step never raises, and when the call fails the sha256 of the world's whole state
(``state_dict``: every table, the id counters, the clock, the public extras) is what it was before.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import gymnasium as gym
import pytest

import servicegym  # noqa: F401  registers the ids
from servicegym.world_state.tools import MAX_ARGUMENT_CHARS
from servicegym.world_state.workspace import MAX_FILE_CHARS

WORKSPACE = "servicegym/Workspace-v0"
PERSONAS = ["analyst", "legal", "marketer", "pharmacist", "researcher"]
UNKNOWN = "zz_no_such_id_404"


def world_hash(world: Any) -> str:
    return hashlib.sha256(json.dumps(world.state_dict(), sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _placeholder(schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind is None and "anyOf" in schema:
        kind = next((s.get("type") for s in schema["anyOf"] if s.get("type") not in (None, "null")), "string")
    return {"string": UNKNOWN, "integer": 1, "number": 1.0, "boolean": False, "array": [], "object": {}}.get(kind, UNKNOWN)


def _wrong_types(schema: dict[str, Any]) -> list[Any]:
    kind = schema.get("type")
    if kind == "string":
        return [12345, ["x"], None, {"a": 1}]
    if kind in ("integer", "number"):
        return ["abc", [1], None, 1e308]
    if kind == "boolean":
        return ["maybe", 2]
    if kind == "array":
        return ["x", 5, [{"x": [1, 2]}], [None, "x"]]
    if kind == "object":
        return ["x", [1], 5]
    return [12345, ["x"], {"a": 1}]


def _real_values(world: Any) -> dict[str, list[Any]]:
    """Values of the seeded world a bad call may pair with: one path per file type, real ids."""
    files = [f.path for f in world.table("files").rows.values()]
    by_type: dict[str, str] = {}
    for p in files:
        by_type.setdefault(p.rsplit(".", 1)[-1], p)
    ids: list[str] = []
    for table in world.tables.values():
        ids.extend(list(table.rows)[:1])
    return {"path": list(by_type.values()), "ids": ids}


def bad_calls(spec: Any, world: Any) -> list[dict[str, Any]]:
    schema = spec.args_model.model_json_schema()
    props: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", []))
    base = {k: _placeholder(props[k]) for k in required}
    real = _real_values(world)
    calls: list[dict[str, Any]] = [{}, dict(base), {**base, "zz_unknown_key": 1}, {"zz_unknown_key": 1}]
    for key, prop in props.items():
        for value in _wrong_types(prop):
            calls.append({**base, key: value})
        calls.append({**base, key: "x" * (MAX_ARGUMENT_CHARS + 1)})  # over the argument limit
        if prop.get("type") == "string":
            calls.append({**base, key: "y" * (MAX_FILE_CHARS + 1)})  # under it, over a file's size
            calls.append({**base, key: ""})
            calls.append({**base, key: "../../etc/passwd"})
            # a real path or id beside bad other arguments
            for value in [*real["path"], *real["ids"]]:
                call = {**base, key: value}
                calls.append(call)
                for other, oprop in props.items():
                    if other != key:
                        calls.append({**call, other: _wrong_types(oprop)[0]})
        if prop.get("type") == "array":
            calls.append({**base, key: [{"zz": UNKNOWN}] * 3})
            calls.append({**base, key: [[UNKNOWN] * 3] * 3})
            calls.append({**base, key: [UNKNOWN] * 5000})
        if prop.get("type") in ("integer", "number"):
            calls.extend([{**base, key: -1}, {**base, key: 10**12}, {**base, key: 0}])
    return calls


@pytest.mark.parametrize("persona", PERSONAS)
def test_every_failed_write_leaves_the_workspace_byte_identical(persona):
    env = gym.make(WORKSPACE)
    u = env.unwrapped
    task_id = next(t for t in u.task_ids() if t.startswith(f"workspace-{persona}/"))
    env.reset(seed=0, options={"task_id": task_id})
    writes = [s for s in u.toolkit.specs.values() if s.kind == "write"]
    assert writes, persona
    failed = 0
    # the world's hash after a failed call (checked equal to the one before it) is the next call's
    # "before": nothing runs between two steps, so it is not recomputed (hashing is most of the cost)
    known: str | None = None
    for spec in writes:
        for arguments in bad_calls(spec, u.world):
            action = json.dumps({"name": spec.name, "arguments": arguments})
            before = known if known is not None else world_hash(u.world)
            known = None
            obs, _r, term, trunc, info = env.step(action)  # never raises
            if obs.lstrip().startswith("<tool_error"):
                failed += 1
                after = world_hash(u.world)
                assert after == before, (spec.name, str(arguments)[:300], obs[:300])
                known = after
            if term or trunc:
                env.reset(seed=0, options={"task_id": task_id})
                known = None
    assert failed > 50 * len(writes) // 10, failed  # the corpus mostly fails, as meant
