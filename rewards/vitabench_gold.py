"""The gold records of VitaBench scoring: what the loader makes of each expected state.

``GoldState`` is one expected state, normalised: its orders (``GoldOrder``, with their ``GoldLine``s)
and its seat bookings and service reservations (``GoldVisit``); ``RUBRIC_ASPECTS`` are the gold
comparisons a natural-language item may take over, ``TRAVEL_ORDER_TYPES`` the order types matched as
travel orders. A rubric item carries the states as JSON in its parameters; ``parse_states`` reads them
(``parsed``: once per parameters object, cached). What each field means and how the records are
matched is in the docstring of ``rewards/vitabench.py``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_serializer

TRAVEL_ORDER_TYPES = ("hotel", "attraction", "flight", "train")


class GoldLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    product_id: str
    quantity: int
    attributes: str = ""
    # travel lines: the night/visit/departure date and the room, ticket or seat type (None: the
    # gold does not say, the product id decides)
    date: str | None = None
    product_type: str | None = None

    @model_serializer(mode="wrap")
    def _without_unset_travel_fields(self, handler: Any) -> Any:
        # other domains' lines serialise as before
        data = handler(self)
        for key in ("date", "product_type"):
            if isinstance(data, dict) and data.get(key) is None:
                data.pop(key, None)
        return data


class GoldOrder(BaseModel):
    """One normalised required order of an expected state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["new", "existing", "replaced"]
    order_id: str
    order_type: str = "delivery"
    store_id: str
    status: str
    # None: no requirement (gold note empty for new orders, unchanged for existing ones)
    note: str | None = None
    address: str | None = None
    longitude: float | None = None
    latitude: float | None = None
    dispatch_time: str | None = None
    delivery_time: str | None = None
    # which of the two times must match: both, either one, only the one given, or none; "rubric":
    # none here, a natural-language time item of the task checks the delivery time (``delivery_time``
    # is then the golden route's aim)
    time_rule: Literal["none", "dispatch", "delivery", "both", "either", "rubric"] = "none"
    lines: list[GoldLine] = []
    # what the task's natural-language rubric decides instead of the gold (see "Natural-language
    # items"): a subset of RUBRIC_ASPECTS; the gold's own value is then only the golden route's aim
    rubric: list[str] = []

    @model_serializer(mode="wrap")
    def _without_empty_rubric(self, handler: Any) -> Any:
        return _drop_empty_rubric(handler(self))


class GoldVisit(BaseModel):
    """One normalised seat booking (``table="books"``) or service reservation of an expected state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["new", "existing", "replaced"]
    table: Literal["books", "reservations"]
    record_id: str
    shop_id: str
    status: str
    # None: not scored (an existing record's value the gold leaves unchanged)
    time: str | None = None
    customer_count: int | None = None
    # False when the gold time lies in the past, or when a natural-language time item of the task
    # checks the time: ``time`` is then only the golden route's choice
    check_time: bool = True
    # as ``GoldOrder.rubric`` ("count": the party size, "payment", "place": the shop)
    rubric: list[str] = []

    @model_serializer(mode="wrap")
    def _without_empty_rubric(self, handler: Any) -> Any:
        return _drop_empty_rubric(handler(self))


# the gold comparisons a compiled natural-language item may take over (``GoldOrder.rubric``)
RUBRIC_ASPECTS = ("address", "note", "quantity", "payment", "store", "count", "place")


def _drop_empty_rubric(data: Any) -> Any:
    # a record the rubric leaves to the gold serialises as before
    if isinstance(data, dict) and not data.get("rubric"):
        data.pop("rubric", None)
    return data


class GoldState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    orders: list[GoldOrder]
    visits: list[GoldVisit] = []


# parsed forms of a task's rubric parameters, keyed by the identity of the JSON object they were
# parsed from (the entry holds the object, so its id cannot be reused while cached): a task's
# items share their parameters' objects, so each is validated once per process, not per scoring
_PARSED: dict[tuple[str, int], tuple[Any, Any]] = {}
_PARSED_MAX = 4096


def parsed(kind: str, obj: Any, parse: Any) -> Any:
    """``parse(obj)``, once per (``kind``, object) while the object lives in the cache."""
    key = (kind, id(obj))
    hit = _PARSED.get(key)
    if hit is not None and hit[0] is obj:
        return hit[1]
    value = parse(obj)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = (obj, value)
    return value


def parse_states(params: dict[str, Any]) -> list[GoldState]:
    return parsed("states", params["states"], lambda raw: [GoldState.model_validate(s) for s in raw])
