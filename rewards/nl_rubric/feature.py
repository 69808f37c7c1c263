"""The feature kind's model and checks: ``FeatureSpec`` (what an ordered product is or has, which
option it comes with; or what a place offers) and how it holds of a record's lines or a place. The
grammar that reads feature items is ``product.py``; how a value is found in the catalogue, ``values.py``."""

from __future__ import annotations

from typing import Any, Literal

from .lexicon import ABSENCE, SILENT_ABSENCE, VAGUE_ABSENCE, mentions
from .note import contradicts
from .world import (
    PlaceInfo,
    RecordFacts,
    _chose,
    _chose_any,
    _line_fields,
    _line_has,
    _line_has_any,
    _offers,
    _place_fields,
    _Spec,
    fields_have,
)


class FeatureSpec(_Spec):
    """A store feature (``scope="place"``: the place's name, tags or category) or a product one
    (``"product"``: an ordered line's name, tags or chosen options) matches one of ``phrases``;
    ``negated``: none does. A product option the line's product offers must be the one chosen;
    ``option_only``: the item speaks of an option (temperature, sweetness, size...), so only the
    chosen options count, not names or tags."""

    kind: Literal["feature"] = "feature"
    scope: Literal["place", "product"]
    phrases: list[str]
    negated: bool = False
    option_only: bool = False
    some: bool = False  # "include one room-temperature item": one line is enough, not every line
    # one line has the phrase and, on that same line, each of ``also`` (chosen where its product offers it,
    # else in its name or tags) and none of ``lacks`` ("一个手抓饼，不加蛋，甜面酱口味")
    also: list[str] = []
    lacks: list[str] = []
    # a class of food (``lexicon.CONCEPTS``: "offal", "dairy"): a line has the feature where it has a phrase (the
    # item's examples) or a term of a concept; ``absent``: a value naming a concept's absence ("non-spicy"): a line
    # that does not offer the phrase as an option has it, or shows none of the concept's terms
    concepts: list[str] = []
    absent: list[str] = []
    # "should not include any products other than X", "只包含X": every line has a phrase (an exclusive set)
    every: bool = False


def product_feature_holds(spec: FeatureSpec, record: RecordFacts) -> bool:
    """A product feature (``scope="product"``) of the record's ordered lines."""
    lines = list(record.lines)
    if spec.every:  # an exclusive set: the order holds something, and nothing that is not one of the phrases
        return bool(lines) and all(_line_has(x, spec.phrases) for x in lines)
    if spec.concepts:
        hit = [_line_has(x, spec.phrases) or _mentions_line(spec.concepts, x) for x in lines]
        return bool(lines) and (not any(hit) if spec.negated else any(hit))
    if spec.absent and not spec.negated:
        if record.note and any(contradicts(p, record.note, plain=False) for p in spec.phrases):
            return False
        said = [w for c in spec.absent for w in ABSENCE.get(c, ())]  # "Low sugar" in a name or tag says it too
        # a line whose product offers the absence under other words ("免香菜" for "不加香菜") must have chosen it;
        # where one does, the order says the absence there, and the other lines need only not show the concept
        opted = [w for w in said if w not in VAGUE_ABSENCE]
        silent = all(c in SILENT_ABSENCE for c in spec.absent) or any(_offers(x, opted) for x in lines)
        each = any if spec.some else all  # "two of the teas should be dairy-free": some line, not every line
        return bool(lines) and each(_chose(x, spec.phrases) if _offers(x, spec.phrases) else
                                   _chose(x, opted) if _offers(x, opted) else
                                   _line_has(x, spec.phrases) or _line_has(x, said) and not _mentions_line(spec.absent, x)
                                   or silent and not _mentions_line(spec.absent, x) for x in lines)
    if spec.also or spec.lacks:
        return any(_line_has(x, spec.phrases) and not any(_line_has(x, [b]) for b in spec.lacks)
                   and all(_chose(x, [a]) if _offers(x, [a]) else _line_has(x, [a]) for a in spec.also) for x in lines)
    if spec.negated:  # none of it, in any amount: "without ice" is not met by "Less Ice"
        has_any = _chose_any if spec.option_only else _line_has_any
        return bool(lines) and not any(has_any(x, spec.phrases) for x in lines)
    if record.note and any(contradicts(p, record.note, plain=False) for p in spec.phrases):
        return False  # a note saying "extra spicy" where the item asks for mild
    bound = [x for x in lines if _offers(x, spec.phrases)]
    if spec.some:  # one line has it: chosen where offered, else in its name or tags
        return any(_chose(x, spec.phrases) if x in bound else not spec.option_only and _line_has(x, spec.phrases)
                   for x in lines)
    if bound:  # an option the product offers: every such line must have chosen it
        return all(_chose(x, spec.phrases) for x in bound)
    return not spec.option_only and any(_line_has(x, spec.phrases) for x in lines)


def _mentions_line(concepts: list[str], line: Any) -> bool:
    """Whether an ordered line's name, tags or chosen options spell one of the concepts."""
    return mentions(concepts, " | ".join(_line_fields(line)))


def place_feature_holds(spec: FeatureSpec, place: PlaceInfo) -> bool:
    """A place feature (``scope="place"``): the place's name, tags or category."""
    found = fields_have(_place_fields(place), spec.phrases)
    return found != spec.negated
