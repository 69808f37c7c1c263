"""The compiled kinds together: the spec union, its JSON form, and ``spec_holds``.

Every kind module defines its own spec model, grammar and check; this module joins them:
``ItemSpec`` (a ``Part`` of one kind, or an ``AllOf`` of several), ``SPEC_KINDS`` (the ``kind`` tags),
``parse_spec`` (a spec from its JSON form, ``model_dump(mode="json")``: every kind, ``TimeWindow``
and ``AllOf`` included), ``spec_parts``, ``spec_target`` (which gold records an item is about, for
the loader), ``describe_spec`` (a spec in words), and ``spec_holds`` (a spec against one record:
each kind's own check, in the order below).

    kind          model          module      checked against
    time_window   TimeWindow     time        the clock (not here: ``TimeWindow.accepts``)
    address       AddressSpec    address     the record's address or point
    process       ProcessSpec    process     the episode's calls
    store         StoreSpec      place       the record's place
    feature       FeatureSpec    product     the record's lines (scope product), or its place
    rating        RatingSpec     place       the record's place
    distance      DistanceSpec   place       the record's place
    count         CountSpec      quantity    the record's customer count, or its lines
    price         PriceSpec      price       the record's total, or its lines
    note          NoteSpec       note        the record's note
    status        StatusSpec     status      the record's status
    duration      DurationSpec   duration    the record's lines (their length)
    hours         HoursSpec      duration    the record's place (its closing time)
    place_fact    PlaceFactSpec  facts       the record's place (years in business, spending per head, from its tags)
    days          DaysSpec       days        the record's lines (the days their products can be used), or its place
    joint         JointSpec      joint       the episode's new orders together (one place sells each named
                                             good; the orders at the named places cost, in all, within a bound)
    best          BestSpec       best        the record's place (rating, distance) or its lines (price,
                                             sales rank, length), against the gold's value (``bound``)
    trip          TripSpec       trip        a travel record's line dates (date, check-in/out, nights) or
                                             its place (departure/arrival clock, hotel stars)
    all_of        AllOf          spec        every part
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .address import ADDRESS_TOLERANCE_M, AddressSpec, address_holds
from .best import PLACE_ATTRIBUTES, BestSpec, best_holds, describe_best
from .days import DaysSpec, days_holds, describe_days
from .duration import DurationSpec, HoursSpec, _describe, duration_holds, hours_holds
from .facts import PlaceFactSpec, describe_place_fact, place_fact_holds
from .feature import FeatureSpec, place_feature_holds, product_feature_holds
from .joint import JointSpec, describe_joint
from .note import NoteSpec, note_holds
from .place import DistanceSpec, RatingSpec, StoreSpec, distance_holds, rating_holds, store_holds
from .price import PriceSpec, price_holds
from .process import ProcessSpec, process_holds
from .quantity import CountSpec, count_holds
from .status import StatusSpec, status_holds
from .time import TimeWindow
from .trip import PLACE_TRIP, TripSpec, describe_trip, trip_holds
from .world import PlaceInfo, RecordFacts, _Spec

Part = Annotated[
    TimeWindow | AddressSpec | ProcessSpec | StoreSpec | FeatureSpec | RatingSpec | DistanceSpec | CountSpec
    | PriceSpec | NoteSpec | StatusSpec | DurationSpec | HoursSpec | BestSpec | TripSpec | JointSpec | PlaceFactSpec
    | DaysSpec,
    Field(discriminator="kind"),
]


class AllOf(_Spec):
    """Every part holds: an item that asks for several things ("query the history, so the order
    should be from X"; "hot, not iced")."""

    kind: Literal["all_of"] = "all_of"
    parts: list[Part]


ItemSpec = Annotated[Part | AllOf, Field(discriminator="kind")]
SPEC_KINDS: tuple[str, ...] = ("time_window", "address", "process", "store", "feature", "rating", "distance", "count",
                               "price", "note", "status", "duration", "hours", "best", "trip", "joint", "place_fact", "days",
                               "all_of")
_SPEC_ADAPTER: TypeAdapter[Any] = TypeAdapter(ItemSpec)


def parse_spec(data: Any) -> Any:
    """A compiled item from its JSON form (``model_dump(mode="json")``): any kind, ``TimeWindow``
    and ``AllOf`` included. Raises ``pydantic.ValidationError`` (a ``ValueError``) on data that is
    no spec: an unknown ``kind``, a missing or extra field, a value of the wrong type."""
    return _SPEC_ADAPTER.validate_python(data)


def spec_parts(spec: Any) -> list[Any]:
    return list(spec.parts) if isinstance(spec, AllOf) else [spec]


def spec_target(spec: Any) -> str | None:
    """Which gold records an item is about: ``delivery`` orders, any ``order``, a ``visit``
    (booking or reservation), the ``place`` of an order or visit, any ``record`` (status items),
    ``none`` (process items), ``episode`` (every order the episode made: ``JointSpec``), or
    ``arrival`` (time items: a delivery or a visit)."""
    targets = set()
    for p in spec_parts(spec):
        if isinstance(p, TimeWindow):
            targets.add(p.subject)
        elif isinstance(p, AddressSpec):
            targets.add("delivery")
        elif isinstance(p, ProcessSpec):
            continue
        elif isinstance(p, JointSpec):
            targets.add("episode")
        elif isinstance(p, (StoreSpec, RatingSpec, DistanceSpec, HoursSpec, PlaceFactSpec)) \
                or (isinstance(p, (FeatureSpec, DaysSpec)) and p.scope == "place") \
                or (isinstance(p, BestSpec) and p.attribute in PLACE_ATTRIBUTES) \
                or (isinstance(p, TripSpec) and p.what in PLACE_TRIP):
            targets.add("place")
        elif isinstance(p, CountSpec) and p.what == "people":
            targets.add("visit")
        elif isinstance(p, StatusSpec):
            targets.add("direct" if p.record_id else "record")
        elif isinstance(p, NoteSpec) and p.record_id:
            targets.add("direct")
        else:
            targets.add("order")
    if not targets:
        return "none"
    if len(targets) == 1:
        return targets.pop()
    if targets == {"place", "order"}:
        return "order"
    if targets == {"place", "visit"}:
        return "visit"
    if targets == {"place", "delivery"} or targets == {"order", "delivery"} or targets == {"place", "order", "delivery"}:
        return "delivery"
    return None


def describe_spec(spec: Any) -> str:
    """The compiled item in words, for task notes."""
    if isinstance(spec, AllOf):
        return " and ".join(describe_spec(p) for p in spec.parts)
    if isinstance(spec, TimeWindow):
        return spec.describe()
    no = "not " if getattr(spec, "negated", False) else ""
    if isinstance(spec, AddressSpec):
        near = f" (or within {ADDRESS_TOLERANCE_M:g} m of it)" if spec.longitude is not None else ""
        return f"delivery address {spec.address!r}{near}"
    if isinstance(spec, ProcessSpec):
        return f"a call of {' / '.join(spec.tools)} ({spec.action})"
    if isinstance(spec, StoreSpec):
        return f"the place is {no}{spec.name!r} ({', '.join(spec.place_ids)})"
    if isinstance(spec, FeatureSpec):
        said = [*map(repr, spec.phrases), *(f"<{c}>" for c in spec.concepts),
                *(f"<no {c}>" for c in spec.absent)]  # a class of food (``lexicon``) in angle brackets
        text = f"the {spec.scope} {'has none of' if spec.negated else 'matches'} {' / '.join(said)}"
        if spec.some:
            text = f"some line of {text.removeprefix('the ')}"
        if spec.every:
            text = f"every line of {text.removeprefix('the ')} (and no other)"
        if spec.also:
            text += f", on the same line with {' and '.join(map(repr, spec.also))}"
        if spec.lacks:
            text += f"{' and' if spec.also else ', on the same line'} without {' or '.join(map(repr, spec.lacks))}"
        return text
    if isinstance(spec, RatingSpec):
        return f"the place's rating {spec.op} {spec.value:g}"
    if isinstance(spec, DistanceSpec):
        near = f"{spec.min_m:g}-{spec.max_m:g} m" if spec.min_m else f"{spec.max_m:g} m"
        return f"the place within {near} of {spec.reference!r}" + ("" if spec.inclusive else " (exclusive)")
    if isinstance(spec, CountSpec):
        what = "party size" if spec.what == "people" else "people served" if spec.what == "servings" else \
            f"{'pieces' if spec.what == 'pieces' else 'quantity'}{' of ' + repr(spec.phrase) if spec.phrase else ''}"
        if spec.distinct:
            what = f"different products{' of ' + repr(spec.phrase) if spec.phrase else ''}"
        return f"{what} {spec.op} {spec.value}" + (", all of one product (one line)" if spec.same else "")
    if isinstance(spec, PriceSpec):
        lo = "" if spec.low is None else f"{'>' if spec.low_strict else '>='} {spec.low:g}"
        hi = "" if spec.high is None else f"{'<' if spec.high_strict else '<='} {spec.high:g}"
        return f"{'total' if spec.scope == 'total' else 'unit'} price {' and '.join(x for x in (lo, hi) if x)} yuan"
    if isinstance(spec, NoteSpec):
        return f"the note carries {spec.text!r}" + (f" (order {spec.record_id})" if spec.record_id else "")
    if isinstance(spec, (DurationSpec, HoursSpec)):
        return _describe(spec)
    if isinstance(spec, BestSpec):
        return describe_best(spec)
    if isinstance(spec, JointSpec):
        return describe_joint(spec)
    if isinstance(spec, TripSpec):
        return describe_trip(spec)
    if isinstance(spec, PlaceFactSpec):
        return describe_place_fact(spec)
    if isinstance(spec, DaysSpec):
        return describe_days(spec)
    if isinstance(spec, StatusSpec):
        return f"status {spec.status}" + (f" (record {spec.record_id})" if spec.record_id else "")
    return str(spec)


def spec_holds(spec: Any, record: RecordFacts | None, place: PlaceInfo | None,
               calls: frozenset[str] | None = None) -> bool:
    """Whether a compiled item (not a time window: its check needs the clock) holds of one record
    (``place``: its store or shop; ``calls``: the names of the tools executed in the episode, None
    when only the record is judged: process parts then hold)."""
    if isinstance(spec, AllOf):
        return all(spec_holds(p, record, place, calls) for p in spec.parts if not isinstance(p, TimeWindow))
    if isinstance(spec, ProcessSpec):
        return process_holds(spec, calls)
    if record is None:
        return False
    if isinstance(spec, AddressSpec):
        return address_holds(spec, record)
    if isinstance(spec, StatusSpec):
        return status_holds(spec, record)
    if isinstance(spec, NoteSpec):
        return note_holds(spec, record)
    if isinstance(spec, CountSpec):
        return count_holds(spec, record)
    if isinstance(spec, PriceSpec):
        return price_holds(spec, record)
    if isinstance(spec, DurationSpec):
        return duration_holds(spec, record)
    if isinstance(spec, FeatureSpec) and spec.scope == "product":
        return product_feature_holds(spec, record)
    if isinstance(spec, BestSpec):
        return best_holds(spec, record, place)
    if isinstance(spec, TripSpec):
        return trip_holds(spec, record, place)
    if isinstance(spec, DaysSpec):
        return days_holds(spec, record, place)
    if place is None:
        return False
    if isinstance(spec, StoreSpec):
        return store_holds(spec, place)
    if isinstance(spec, FeatureSpec):
        return place_feature_holds(spec, place)
    if isinstance(spec, RatingSpec):
        return rating_holds(spec, place)
    if isinstance(spec, DistanceSpec):
        return distance_holds(spec, place)
    if isinstance(spec, HoursSpec):
        return hours_holds(spec, place)
    if isinstance(spec, PlaceFactSpec):
        return place_fact_holds(spec, place)
    return False
