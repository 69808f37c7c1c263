"""The JSON encoding of tool results (``world_state.tools`` re-exports every name here): ``dumps``
gives ``json.dumps(to_jsonable(value), ensure_ascii=False)``, the C encoder walking plain
containers itself and calling back only for entities (``_entity_json``: a row's own fields when
they are plain JSON); ``RawJson`` is text that already is a result's JSON, which
``json_object_with`` and ``json_array`` build from cached row JSON. ``Toolkit.call`` inlines
``dumps`` for its common results, with ``_ENCODER``, ``_encode_chunks`` and ``_join`` from here."""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from servicegym.world_state.core import Entity


def to_jsonable(value: Any) -> Any:
    if isinstance(value, Entity):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def _entity_json(value: Any) -> Any:
    if isinstance(value, Entity):
        # the row's own fields when they are plain JSON (the encoder only reads them), else its dump
        fields = value.json_fields()
        return fields if fields is not None else value.model_dump(mode="json")
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_entity_json)
# the C encoder ``_ENCODER.encode`` makes on every call, made once: no circular-reference markers (a
# tool result is a tree, built fresh or from immutable rows), the same separators, float text and
# entity callback, so the same text without the Python frames of ``encode``/``iterencode``
_encode_chunks = (c_make_encoder(None, _entity_json, encode_basestring, None, ": ", ", ", False, False, True)
                  if c_make_encoder is not None else None)
_join = "".join


class RawJson(str):
    """Text that already is the JSON of a tool result (built from cached row JSON); ``dumps``
    returns it as it is."""


def dumps(value: Any) -> str:
    """``json.dumps(to_jsonable(value), ensure_ascii=False)``, letting the C encoder walk plain
    containers itself: it calls back only for entities, instead of a Python pass over every value."""
    t = type(value)
    if t is RawJson:
        return value
    if t is str or _encode_chunks is None:
        return _ENCODER.encode(value)
    return _join(_encode_chunks(value, 0))


def json_object_with(obj_json: str, **fields: Any) -> RawJson:
    """The JSON object ``obj_json`` with ``fields`` appended, as ``dumps`` of the merged dict would
    print it (the same separators), without decoding and re-encoding the object."""
    extra = ", ".join(f"{_ENCODER.encode(k)}: {dumps(v)}" for k, v in fields.items())
    if obj_json == "{}":
        return RawJson("{" + extra + "}")
    return RawJson(f"{obj_json[:-1]}, {extra}}}" if extra else obj_json)


def json_array(items: list[str]) -> RawJson:
    return RawJson("[" + ", ".join(items) + "]")
