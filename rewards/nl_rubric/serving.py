"""Serving sizes: the phrases that name a product for the number of people a value speaks of ("a five-person
meal", "a set meal for two", "单人套餐", "suitable for at least 5 people"), as the catalogue spells them.
Examples in both languages are in tests/rewards/nl_rubric (test_sets_*, test_round10)."""

from __future__ import annotations

import re

from .text import _NUMBER_WORDS, _num, _zh_number, phrase_in
from .world import ItemContext, _found

_SERVE_UNITS = (r"(?:set meals?|set menus?|meal packages?|meal sets?|sets?|meals?|packages?|menus?|combos?|vouchers?|"
                r"portions?|servings?|options?|products?|items?|platters?|courses?|class(?:es)?)")
_SERVE_NUM = r"(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|single)"
_SERVE_EN = (
    re.compile(rf"^(?:a |an |one |the )?{_SERVE_NUM}[- ](?:person|people|persons)(?: {_SERVE_UNITS})+$"),
    re.compile(rf"^(?:a |an |one |the )?{_SERVE_UNITS}(?: {_SERVE_UNITS})* for {_SERVE_NUM}(?: (?:people|persons?))?$"),
    re.compile(rf"^(?:for |suitable for |(?:that )?(?:serves?|feeds?) |serving |feeding )?{_SERVE_NUM} (?:people|persons?|diners?|guests?|adults?)$"),
    re.compile(r"^(?:for )?(?:a )?(?P<one>single|one) (?:diner|guest|adult)$"),  # "for a single diner", "for one guest"
    re.compile(rf"^(?:a |an |one )?(?P<one>single|individual) {_SERVE_UNITS}$"),
    re.compile(rf"^(?:a |an |one )?(?P<two>couple's|couples?) {_SERVE_UNITS}$"),
    # "two individual set meals", "multiple single-person packages": a negated part says which size is not wanted
    re.compile(rf"^(?:two|three|four|five|six|several|multiple|separate|\d) (?P<one>individual|single|single[- ]person|"
               rf"one[- ]person|separate) {_SERVE_UNITS}(?: {_SERVE_UNITS})*$"),
)
_SERVE_RANGE_EN = (
    re.compile(rf"^(?:a |an |one |the )?(?P<lo>\d{{1,2}})-(?P<hi>\d{{1,2}})[- ](?:person|people|persons)(?: {_SERVE_UNITS})+$"),
    re.compile(rf"^(?:a |an |one |the )?{_SERVE_UNITS}(?: {_SERVE_UNITS})* for (?P<lo>\d{{1,2}})-(?P<hi>\d{{1,2}}) "
               r"(?:people|persons?)$"),
)
# a serving size, then what the product holds: "a single-person meal with X", "a set for 2-3 people that includes X"
_SERVING_WITH = re.compile(r"^(?P<s>.+?) (?:with|containing|including|that (?:includes?|contains?|has|comes? with)|"
                           r"which (?:includes?|contains?|has)) (?P<v>.+)$")
_SERVE_AT_LEAST_EN = re.compile(rf"^(?:suitable for |for |serving |feeding |(?:that )?(?:serves?|feeds?) |to (?:serve|feed) )?(?:at least|no (?:fewer|less) than|a minimum "
                                rf"of) {_SERVE_NUM} (?:people|persons?|diners|guests)$|^(?:suitable for |for )?(?P<n2>\d{{1,2}}) or more "
                                rf"(?:people|persons?|diners|guests)$")
_SERVE_AT_LEAST_ZH = re.compile(r"^(?:适合|可供|满足)?(?:至少|最少|不少于)(?P<n>\d{1,2}|[一二两三四五六七八九十])(?:人|位)(?:及以上|以上)?(?:食用|用餐)?"
                                r"(?:的)?(?:套餐|分量|份量)?$|^(?:适合)?(?P<n2>\d{1,2})(?:人|位)及以上(?:的)?(?:套餐|分量|份量)?$")
_SERVE_ZH = re.compile(r"^(?:一个|一份)?(?P<n>[单双一二两三四五六七八九十]|\d{1,2})人(?:份|餐|套餐|份套餐|餐套餐|分量)?(?:的)?"
                       r"(?:套餐|商品|产品|规格)?$")


def _serving(text: str, zh: bool, ctx: ItemContext) -> list[str] | None:
    """The phrases that name a product for the number of people a value speaks of ("five-person
    meal", "set meal for two", "单人套餐": "5 person"; for one also "single portion", "individual";
    for two also "couple"), those the catalogue has (the value's own words, when it has them); None when the value is no serving size or the
    catalogue names none of its phrases."""
    t = text.strip()
    least = (_SERVE_AT_LEAST_ZH if zh else _SERVE_AT_LEAST_EN).match(t)
    if least is not None:  # "suitable for at least 5 people", "至少5人": a product for that many or more
        n = int(_num(least.group("n") or least.group("n2")))
        sizes = [f"{k}人" if zh else f"{k} person" for k in range(n, n + 30)]
        return [w for w in sizes if _found(w, ctx, "product")] or None
    if zh:
        m = _SERVE_ZH.match(t)
        if m is None:
            return None
        n = {"单": 1, "双": 2}.get(m.group("n")) or _zh_number(m.group("n"))
        if not n:
            return None
        words = {1: ["单人", "一人", "1人"], 2: ["双人", "两人", "二人", "2人"]}.get(n, [f"{n}人", f"{'零一二三四五六七八九十'[n]}人" if n <= 10 else f"{n}人"])
    else:
        r = next((x for x in (rx.match(t) for rx in _SERVE_RANGE_EN) if x), None)
        if r is not None:  # "a 2-3 person meal", "a set meal for 2-3 people": that range, as the catalogue says it
            span = [w for w in (t, f"{r['lo']}-{r['hi']} person") if _found(w, ctx, "product")]
            return list(dict.fromkeys(span)) or None
        m = next((x for x in (rx.match(t) for rx in _SERVE_EN) if x), None)
        if m is None:
            return None
        g = m.groupdict()
        n = 1 if g.get("one") else 2 if g.get("two") else int(_NUMBER_WORDS.get(g["n"] or "", g["n"] or "0"))
        words = {1: ["1 person", "single portion", "single serving", "single meal", "single set", "single package", "individual"],
                 2: ["2 person", "couple"]}.get(n, [f"{n} person"])
    found = [w for w in words if _found(w, ctx, "product")]  # any product for that many: "Two People"
    if not zh:  # "Set for One" ("for N" is also "N-person": added only where it names more)
        fields = [f for pr in ctx.products for f in (pr.name, *pr.tags)]
        if any(phrase_in(f"for {n}", f) and not any(phrase_in(w, f) for w in found) for f in fields):
            found.append(f"for {n}")
    if _found(t, ctx, "product"):
        return list(dict.fromkeys([t, *found]))
    return found or None
