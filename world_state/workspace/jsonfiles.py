"""JSON tools: read a ``.json`` file, get, set or delete one value by its location, and validate a
file against a small schema subset (``type``, ``required``, ``properties``, ``items``, ``enum``).

A location is a JSON pointer (``/items/0/name``) or a dotted path (``items.0.name``); ``""`` is the
whole document. Writes re-render the file as two-space indented JSON.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.tools import ToolError, tool
from servicegym.world_state.workspace.files import file_exists
from servicegym.world_state.workspace.structured import parse_json, render_json
from servicegym.world_state.workspace.world import WorkspaceWorld, file_extension, get_file, put_file

JSON_SOURCES = ("list_files", "search_files", "write_file")
SCHEMA_KEYS = {"type", "required", "properties", "items", "enum", "description", "title"}
JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")


def _json(world: WorkspaceWorld, path: str) -> tuple[Any, Any]:
    f = get_file(world, path)
    if file_extension(f.path) != ".json":
        raise ToolError(f"{f.path} is not a JSON file; use read_file, or read_csv for .csv")
    return f, parse_json(f.content, f.path)


def parse_location(location: str) -> list[str]:
    """The keys of a JSON pointer (RFC 6901 escapes ``~0`` ``~1``) or a dotted path."""
    loc = location.strip()
    if not loc:
        return []
    if loc.startswith("/"):
        return [p.replace("~1", "/").replace("~0", "~") for p in loc[1:].split("/")]
    parts = loc.split(".")
    if any(not p for p in parts):
        raise ToolError(f"location {location!r} has an empty part; use e.g. 'items.0.name' or '/items/0/name'")
    return parts


def _index(node: list, key: str, where: str, allow_end: bool = False) -> int:
    if key == "-" and allow_end:
        return len(node)
    if not key.isdigit():
        raise ToolError(f"{where} is a list; use an index 0-{len(node) - 1}, not {key!r}")
    i = int(key)
    if i > len(node) or (i == len(node) and not allow_end):
        raise ToolError(f"index {i} is past the end of the list at {where} ({len(node)} items)")
    return i


def _shown(keys: list[str]) -> str:
    return "/" + "/".join(keys) if keys else "(the root)"


def _walk(doc: Any, keys: list[str]) -> Any:
    node = doc
    for k, key in enumerate(keys):
        where = _shown(keys[:k])
        if isinstance(node, dict):
            if key not in node:
                shown = ", ".join(repr(x) for x in list(node)[:20]) or "none"
                raise ToolError(f"no key {key!r} at {where}; keys there: {shown}")
            node = node[key]
        elif isinstance(node, list):
            node = node[_index(node, key, where)]
        else:
            raise ToolError(f"{where} holds a {_type_of(node)}, which has no {key!r}")
    return node


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


@tool("read", pre=[file_exists(after=JSON_SOURCES)])
def read_json(world: WorkspaceWorld, path: str) -> dict[str, Any]:
    """Read and parse a JSON file.

    Args:
        path: a .json file
    """
    f, doc = _json(world, path)
    return {"path": f.path, "data": doc}


@tool("read", pre=[file_exists(after=JSON_SOURCES)])
def json_get(world: WorkspaceWorld, path: str, location: str) -> dict[str, Any]:
    """Get one value from a JSON file by its location.

    Args:
        path: a .json file
        location: a JSON pointer like "/items/0/name" or a dotted path like "items.0.name"; "" is the whole document
    """
    f, doc = _json(world, path)
    keys = parse_location(location)
    value = _walk(doc, keys)
    return {"path": f.path, "location": _shown(keys), "type": _type_of(value), "value": value}


@tool("write", pre=[file_exists(after=JSON_SOURCES)])
def json_set(world: WorkspaceWorld, path: str, location: Annotated[str, Field(min_length=1)], value: Any,
             create_missing: bool = True) -> dict[str, Any]:
    """Set one value in a JSON file (the file is rewritten with two-space indentation). A list
    index equal to the length, or "-", appends.

    Args:
        path: a .json file
        location: where to set, e.g. "/summary/total" or "summary.total"
        value: the new value (any JSON)
        create_missing: create missing object keys on the way (lists are never padded)
    """
    f, doc = _json(world, path)
    keys = parse_location(location)
    if not keys:
        raise ToolError("location names the whole document; give a key, or replace the file with write_file")
    node = doc
    for k, key in enumerate(keys[:-1]):
        where = _shown(keys[:k])
        if isinstance(node, dict):
            if key not in node:
                if not create_missing:
                    raise ToolError(f"no key {key!r} at {where}; pass create_missing=true to create it")
                node[key] = {}
            node = node[key]
        elif isinstance(node, list):
            node = node[_index(node, key, where)]
        else:
            raise ToolError(f"{where} holds a {_type_of(node)}, which has no {key!r}")
    last, where = keys[-1], _shown(keys[:-1])
    if isinstance(node, dict):
        old = node.get(last)
        node[last] = value
    elif isinstance(node, list):
        i = _index(node, last, where, allow_end=True)
        old = node[i] if i < len(node) else None
        if i == len(node):
            node.append(value)
        else:
            node[i] = value
    else:
        raise ToolError(f"{where} holds a {_type_of(node)}, which has no {last!r}")
    put_file(world, f.path, render_json(doc))
    return {"path": f.path, "location": _shown(keys), "old_value": old, "value": value}


@tool("write", pre=[file_exists(after=JSON_SOURCES)])
def json_delete(world: WorkspaceWorld, path: str, location: Annotated[str, Field(min_length=1)]) -> dict[str, Any]:
    """Remove one key or list item from a JSON file.

    Args:
        path: a .json file
        location: what to remove, e.g. "/draft" or "items.2"
    """
    f, doc = _json(world, path)
    keys = parse_location(location)
    if not keys:
        raise ToolError("location names the whole document; delete the file with delete_file")
    parent = _walk(doc, keys[:-1])
    last, where = keys[-1], _shown(keys[:-1])
    if isinstance(parent, dict):
        if last not in parent:
            raise ToolError(f"no key {last!r} at {where}")
        removed = parent.pop(last)
    elif isinstance(parent, list):
        removed = parent.pop(_index(parent, last, where))
    else:
        raise ToolError(f"{where} holds a {_type_of(parent)}, which has no {last!r}")
    put_file(world, f.path, render_json(doc))
    return {"path": f.path, "location": _shown(keys), "removed": removed}


def check_schema(schema: Any, where: str = "schema") -> None:
    """Refuse a schema that uses anything beyond the supported subset (rather than ignore it)."""
    if not isinstance(schema, dict):
        raise ToolError(f"{where} must be an object")
    unknown = sorted(set(schema) - SCHEMA_KEYS)
    if unknown:
        raise ToolError(f"{where} uses {unknown[0]!r}; supported keywords: {', '.join(sorted(SCHEMA_KEYS))}")
    t = schema.get("type")
    types = t if isinstance(t, list) else [t] if t is not None else []
    if any(x not in JSON_TYPES for x in types):
        raise ToolError(f"{where}.type must be one of {', '.join(JSON_TYPES)} (or a list of them)")
    req = schema.get("required", [])
    if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
        raise ToolError(f"{where}.required must be a list of key names")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise ToolError(f"{where}.properties must be an object")
    for k, sub in props.items():
        check_schema(sub, f"{where}.properties.{k}")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ToolError(f"{where}.enum must be a list")


def schema_errors(value: Any, schema: dict[str, Any], at: str = "", out: list[str] | None = None) -> list[str]:
    """Every way ``value`` breaks ``schema`` (a checked subset schema), as ``"at /x: ..."`` lines."""
    out = [] if out is None else out
    where = at or "/"
    t = schema.get("type")
    if t is not None:
        allowed = t if isinstance(t, list) else [t]
        actual = _type_of(value)
        ok = actual in allowed or (actual == "integer" and "number" in allowed)
        if not ok:
            out.append(f"at {where}: expected {' or '.join(allowed)}, found {actual}")
            return out
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"at {where}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for k in schema.get("required", []):
            if k not in value:
                out.append(f"at {where}: missing required key {k!r}")
        for k, sub in schema.get("properties", {}).items():
            if k in value:
                schema_errors(value[k], sub, f"{at}/{k}", out)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            schema_errors(item, schema["items"], f"{at}/{i}", out)
    return out


@tool("read", pre=[file_exists(after=JSON_SOURCES)])
def validate_json(world: WorkspaceWorld, path: str, json_schema: dict[str, Any] | None = None,
                  schema_file: str | None = None) -> dict[str, Any]:
    """Check a JSON file against a schema (given inline or as another .json file) using the
    keywords type, required, properties, items and enum; report every violation.

    Args:
        path: the .json file to check
        json_schema: the schema, e.g. {"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}}
        schema_file: a .json file holding the schema (instead of json_schema)
    """
    if (json_schema is None) == (schema_file is None):
        raise ToolError("give exactly one of json_schema and schema_file")
    f, doc = _json(world, path)
    schema = json_schema
    if schema_file is not None:
        _, schema = _json(world, schema_file)
    try:
        check_schema(schema)
        errors = schema_errors(doc, schema)
    except RecursionError:
        raise ToolError("the schema or the document is nested too deeply to check") from None
    return {"path": f.path, "valid": not errors, "errors": errors[:50], "error_count": len(errors)}


JSON_TOOLS = [read_json, json_get, json_set, json_delete, validate_json]
