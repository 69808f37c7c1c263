"""Classes of food in a feature item: "must not contain offal (such as ...)", "should be non-spicy",
"应包含米饭等主食" (the concepts of ``lexicon.py``, with the item's examples), read into a ``FeatureSpec``
whose ``concepts`` or ``absent`` hold them; only where some product of the task spells the class."""

from __future__ import annotations

import re

from .clauses import _EXAMPLE_EN
from .feature import FeatureSpec
from .lexicon import ABSENCE, concept_value, example_phrases, mentions
from .text import phrase_in
from .values import _COPULA_VALUE, _FEATURE_VERBS_EN, _FEATURE_VERBS_ZH, _OPTION_WORDS
from .world import (
    ItemContext,
    _found,
)

# ----- classes of food: "must not contain offal (such as ...)", "should be non-spicy" (``lexicon``) ----------
_AVOIDED_EN = re.compile(r"^be (?:avoided|excluded)$")
_WITHOUT = re.compile(r"^(?:\S+ ){0,2}?(?:without|free of|free from|that (?:do not|does not|don't|doesn't) (?:contain|include|have)) (?P<x>.+)$"
                      r"|^(?:不含|不含有|没有|不带)(?P<z>.+?)(?:的(?:商品|产品|饮品|菜品|食品))?$")


def _concept_feature(subject: str, neg: bool, p: str, zh: bool, ctx: ItemContext) -> FeatureSpec | None:
    """A value that names a class of food (``lexicon.concept_value``: "内脏类食材", "dairy ingredients",
    "fried side dishes or high-purine ingredients"), with the examples the item gives; or, not negated,
    the absence of one ("不辣口味", "low caffeine or caffeine-free"). None when the value is neither."""
    if not zh and _AVOIDED_EN.match(p) and subject:  # "items containing organ meats should be avoided"
        neg, p = not neg, "select " + subject
    m = (_FEATURE_VERBS_ZH if zh else _FEATURE_VERBS_EN).match(p)
    if m is None and not zh and _COPULA_VALUE.match(p):
        m = _FEATURE_VERBS_EN.match("be " + p)
        p = "be " + p
    if m is None:
        return None
    value = p[m.end():].strip(" ,，")
    examples = ""
    if zh:
        em = re.match(r"^(?P<v>.+?)[，,]?[(（]?(?:如|例如|比如|诸如)(?P<e>.+?)[)）]?$", value) or \
            re.match(r"^(?P<e>[^，,]{2,}?)(?:等|这些|这类)(?P<v>[^，,]{2,})$", value)
        if em:
            value, examples = em.group("v"), em.group("e")
    else:
        em = _EXAMPLE_EN.search(value)
        if em:
            value, examples = value[:em.start()], value[em.start():]
    value = value.strip(" ,，(（")
    if not zh:  # "cannot include anything spicy or greasy": the class named
        value = re.sub(r"^(?:anything|something|any) (?=[a-z])", "", value)
    value = re.sub(r"^(?:the |a |an )?preferences? (?:for|of) ", "", value) if not zh else \
        re.sub(r"(?:的)?(?:口味)?偏好$", "", value)  # "the preference for no cilantro", "不加香菜的口味偏好"
    wm = _WITHOUT.match(value)
    if wm and not neg:  # "select drinks without dairy products", "选择不含奶制品的饮品"
        neg, value = True, wm.group("x") or wm.group("z")
    value = re.sub(r"(?<=.)的$", "", value)
    if not value or len(value) > 60:
        return None
    if not neg and not _found_any(concept_value(value) or concept_value(value, absence=True) or [], ctx):
        return None  # asked for, and no product of the task spells the concept: the literal reading, or the judge's
    # an exclusion ("should not contain offal") no product of the task spells holds whatever is ordered from
    # it: read all the same (the class is named, and an agent cannot break it), not left to the judge
    names = concept_value(value)
    if names is not None:
        phrases = [x for x in example_phrases(examples) if len(x) >= 2] if examples else []
        if not neg and not phrases and not _found_any(names, ctx):
            return None  # "should contain X" where nothing in the catalogue is X: the judge's
        if not neg and _found(value, ctx, "option"):
            return None  # "should be spicy" where products offer "spicy": the option must be chosen (the literal reading)
        if not neg and len(names) > 1 and not re.search(r"\bor\b|或|/", value):
            return None  # "beef and egg flavour", "牛肉鸡蛋口味": both in one line, not either (the literal reading)
        return FeatureSpec(scope="product", phrases=phrases, negated=neg, concepts=names)
    absent = concept_value(value, absence=True) if not neg and not examples else None
    if absent is None or _OPTION_WORDS.search(f"{subject} {p}") and _found(value, ctx, "option"):
        return None  # "规格需为不辣" where the products offer "不辣": the option must be chosen (the literal reading)
    alts = [a.strip(" '\"") for a in re.split(r"\s+or\s+|\s*,\s*|或者|或|、|，|/", value) if a.strip()]
    alts = [_bare_absence(a, zh) for a in alts]
    return FeatureSpec(scope="product", phrases=[a for a in alts if a], absent=absent)


def _bare_absence(a: str, zh: bool) -> str:
    for _ in range(2):
        a = re.sub(r"(?:的)?(?:口味|属性|选项|规格|类型|商品|饮品|产品)$", "", a) if zh else \
            re.sub(r"\s+(?:flavou?rs?|options?|attributes?|types?|products?|items?|drinks?|versions?)$", "", a)
    return re.sub(r"^(?:(?:products?|items?|drinks?|beverages?) (?:that are|with) |a |an |the )", "", a).strip(" '\"“”")


def _found_any(names: list[str], ctx: ItemContext) -> bool:
    """Whether a product of the task spells one of the concepts, or offers or names its absence ("免香菜")."""
    said = [w for n in names for w in ABSENCE.get(n, ())]
    return any(mentions(names, " | ".join((pr.name, *pr.tags, *pr.options)))
               or any(phrase_in(w, f) for w in said for f in (pr.name, *pr.tags, *pr.options)) for pr in ctx.products)
