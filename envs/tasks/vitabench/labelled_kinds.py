"""The targeted variants of the labelled check set (``labelled.py``), one builder per kind: the
legal alternatives (``reorder``, ``extra_reads``, ``around_shift``, ``other_product``; label
``accept``) and the targeted violations (``late_delivery``, ``wrong_address``, ``wrong_store``,
``wrong_product``, ``wrong_option``, ``contradicting_note``, ``missing_query``; label ``reject``).
Each builder takes the task's context, its golden steps and the rubric's reading and returns the
variants the text justifies.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_reading import (
    QUERY_TARGETS,
    ItemRef,
    Reading,
    _bracketless,
    _clause_around,
    _is_zh,
    _new_tokens,
    _phrase_spans,
    _words,
    contradicting_note,
    named_anywhere,
    norm,
    option_classes,
    positive_mention,
)
from servicegym.envs.tasks.vitabench.labelled_route import (
    _ATTR_SPLIT,
    CREATE_DELIVERY,
    CREATE_INSTORE,
    NOTE_CALLS,
    PLACE_CALLS,
    Step,
    TaskContext,
    Variant,
    _bound_records,
    _fmt,
    _haversine_m,
    _line_products,
    _move,
    _pay_of,
    _place_arg,
    _records,
    _shares_content,
    _v,
)

AROUND_SHIFT_MIN = 5  # a legal "around T" variant lands at most this many minutes off T
LATE_BY_MIN = 180  # a late variant lands this long after the bound
FAR_ADDRESS_M = 1000.0  # a wrong address is at least this far from the right one


# ----- one builder per kind -------------------------------------------------------------------
def _late_delivery(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for tb in r.times:
        if tb.relation == "after":
            continue
        recs = _bound_records(ctx, steps, tb)
        if not recs:
            continue
        target = tb.end + timedelta(minutes=LATE_BY_MIN)
        new = list(steps)
        for rec in recs:
            new[rec.step] = _move(steps[rec.step], rec, target)
        out.append(_v(ctx, "late_delivery", "reject", new, tb,
                      f"{len(recs)} record(s) moved to {_fmt(target)}, {LATE_BY_MIN} min after the {tb.relation} bound"))
    return out


def _around_shift(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for tb in r.times:
        if tb.relation != "around":
            continue
        recs = [rec for rec in _records(ctx, steps, tb.visits) if tb.holds(rec.time, 15.0)]
        if not recs:
            continue
        others = [o for o in r.times if not o.same(tb)]
        for off in (4, -4, 3, -3, 2, -2):
            new_t = tb.start + timedelta(minutes=off)
            ok = True
            for rec in recs:
                if rec.dispatch is not None and rec.dispatch + (new_t - rec.time) < ctx.now:
                    ok = False
                for o in others:
                    if not o.holds(rec.time, 15.0):
                        continue  # the golden record is not under that bound
                    if o.relation == "exact" or (o.relation == "around" and not o.holds(new_t, AROUND_SHIFT_MIN)):
                        ok = False
                    elif o.relation != "around" and not o.holds(new_t):
                        ok = False
            if not ok:
                continue
            new = list(steps)
            for rec in recs:
                new[rec.step] = _move(steps[rec.step], rec, new_t)
            out.append(_v(ctx, "around_shift", "accept", new, tb, f"{len(recs)} record(s) moved to {_fmt(new_t)} ({off:+d} min)"))
            break
    return out


def _wrong_address(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    for ref in r.addresses:
        want = norm(ref.value)
        hits = []
        for i, s in enumerate(steps):
            if s.name != CREATE_DELIVERY:
                continue
            got = norm(s.args.get("address", ""))
            if got and (got == want or got in want or (len(want) >= 12 and want in got)):
                hits.append(i)
        if not hits:
            continue
        golden_addr = steps[hits[0]].args["address"]
        here = ctx.locations.get(golden_addr)
        if here is None:
            continue
        alt = next(
            (a for a, pos in sorted(ctx.locations.items())
             if norm(a) not in want and want not in norm(a) and _haversine_m(here, pos) >= FAR_ADDRESS_M),
            None,
        )
        if alt is None:
            continue
        new = list(steps)
        for i in hits:
            new[i] = steps[i].with_args(address=alt)
        out.append(_v(ctx, "wrong_address", "reject", new, ref, f"address -> {alt!r}"))
    return out


def _named_places(ctx: TaskContext) -> dict[str, ItemRef]:
    """Places an item asks for by name (full name, or the name without its bracketed branch when
    that is unique and long enough)."""
    return _named(ctx, {k: p.name for k, p in ctx.places.items()})


def _named_products(ctx: TaskContext) -> dict[str, ItemRef]:
    return _named(ctx, {k: p.name for k, p in ctx.products.items()})


def _named(ctx: TaskContext, names: dict[str, str]) -> dict[str, ItemRef]:
    out: dict[str, ItemRef] = {}
    for key, name in names.items():
        others = [n for k, n in names.items() if k != key and norm(n) != norm(name)]
        shadows = [n for n in others if norm(name) in norm(n)]
        for phrase in _name_forms(name, others):
            for i, item in enumerate(ctx.nl_rubric):
                if key not in out and positive_mention(item, phrase, shadows=shadows):
                    out[key] = ItemRef(i, item, phrase)
    return out


def _name_forms(name: str, others: list[str]) -> list[str]:
    """The full name, and the bracket-less name when it is long and no other name contains it."""
    forms = [name]
    base = _bracketless(name)
    long_enough = len(base) >= 4 if _is_zh(base) else len(base.split()) >= 2 and len(base) >= 8
    if base and base != norm(name) and long_enough and not any(base in norm(o) for o in others):
        forms.append(base)
    return forms


def _wrong_store(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    named = _named_places(ctx)
    out = []
    for pid, ref in named.items():
        hits = [i for i, s in enumerate(steps) if s.name in PLACE_CALLS and _place_arg(s) == pid]
        if not hits:
            continue
        kinds_needed = {s.name for s in (steps[i] for i in hits)}
        alt = None
        for qid, q in sorted(ctx.places.items()):
            if qid == pid or qid in named or norm(q.name) == norm(ctx.places[pid].name):
                continue
            if {CREATE_DELIVERY, CREATE_INSTORE} & kinds_needed and not q.products:
                continue
            if "instore_book" in kinds_needed and "book" not in q.takes:
                continue
            if "instore_reservation" in kinds_needed and "reservation" not in q.takes:
                continue
            alt = qid
            break
        if alt is None:
            continue
        q = ctx.places[alt]
        new = list(steps)
        for i in hits:
            s = steps[i]
            if s.name == CREATE_DELIVERY:
                new[i] = s.with_args(store_id=alt, product_ids=[q.products[0]], product_cnts=[1], attributes=[""])
            elif s.name == CREATE_INSTORE:
                new[i] = s.with_args(shop_id=alt, product_id=q.products[0])
            else:
                new[i] = s.with_args(shop_id=alt)
        out.append(_v(ctx, "wrong_store", "reject", new, ref, f"{ctx.places[pid].name!r} -> {q.name!r}"))
    return out


def _wrong_product(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    named = _named_products(ctx)
    out = []
    for prod_id, ref in named.items():
        hits = [i for i, s in enumerate(steps) if prod_id in _line_products(s)]
        if not hits:
            continue
        s0 = steps[hits[0]]
        place = _place_arg(s0)
        own = norm(ctx.products[prod_id].name)
        in_call = set(_line_products(s0))
        alt = next(
            (q for q in (ctx.places[place].products if place in ctx.places else [])
             if q not in in_call and q not in named and q in ctx.products
             and own not in norm(ctx.products[q].name) and norm(ctx.products[q].name) not in own),
            None,
        )
        if alt is None:
            continue
        new = list(steps)
        for i in hits:
            s = steps[i]
            if s.name == CREATE_DELIVERY:
                ids = list(s.args["product_ids"])
                attrs = list(s.args.get("attributes") or [""] * len(ids))
                attrs += [""] * (len(ids) - len(attrs))
                k = ids.index(prod_id)
                ids[k], attrs[k] = alt, ""
                new[i] = s.with_args(product_ids=ids, attributes=attrs)
            else:
                new[i] = s.with_args(product_id=alt)
        out.append(_v(ctx, "wrong_product", "reject", new, ref,
                      f"{ctx.products[prod_id].name!r} -> {ctx.products[alt].name!r}"))
    return out


def _wrong_option(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    done: set[str] = set()
    for s in steps:
        if s.name != CREATE_DELIVERY:
            continue
        ids = list(s.args.get("product_ids") or [])
        attrs = list(s.args.get("attributes") or [])
        for k, pid in enumerate(ids):
            prod = ctx.products.get(pid)
            if prod is None or k >= len(attrs) or not attrs[k]:
                continue
            opts = {norm(o): o for o in prod.options}
            for part in (p.strip() for p in _ATTR_SPLIT.split(attrs[k])):
                if norm(part) not in opts or norm(part) in done:
                    continue  # an option the catalogue words differently: no sure reading
                ref = next((ItemRef(j, x, part) for j, x in enumerate(ctx.nl_rubric)
                            if positive_mention(x, part, single_zh_ok=True)), None)
                if ref is None:
                    continue
                spans = _phrase_spans(ref.item, part)
                text = norm(ref.item).replace("-", " ")
                _, clause = _clause_around(text, *spans[0])
                taken = option_classes(part) | option_classes(clause)
                clause_tokens = set(clause) if _is_zh(clause) else _words(clause)
                alt = next(
                    (o for o in prod.options
                     if norm(o) != norm(part) and not named_anywhere(ctx.nl_rubric, o)
                     and not (option_classes(o) & taken) and not (_new_tokens(o, part) & clause_tokens)),
                    None,
                )
                if alt is None:
                    continue
                new = list(steps)
                changed = 0
                for j, t in enumerate(steps):
                    if t.name != CREATE_DELIVERY:
                        continue
                    t_attrs = list(t.args.get("attributes") or [])
                    hit = False
                    for m, a in enumerate(t_attrs):
                        parts = [p.strip() for p in _ATTR_SPLIT.split(a or "")]
                        if any(norm(p) == norm(part) for p in parts):
                            t_attrs[m] = ", ".join(alt if norm(p) == norm(part) else p for p in parts)
                            hit = True
                    if hit:
                        new[j] = t.with_args(attributes=t_attrs)
                        changed += 1
                done.add(norm(part))
                out.append(_v(ctx, "wrong_option", "reject", new, ref, f"option {part!r} -> {alt!r} in {changed} order(s)"))
    return out


def _contradicting_note(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    seen: set[str] = set()
    for ref in r.notes:
        hits = [i for i, s in enumerate(steps)
                if s.name in NOTE_CALLS and s.args.get("note") and _shares_content(ref.value, s.args["note"])]
        if not hits:
            continue
        bad = contradicting_note(ref.value)
        key = norm(bad)
        if key in seen:
            continue
        seen.add(key)
        new = list(steps)
        for i in hits:
            new[i] = steps[i].with_args(note=bad)
        out.append(_v(ctx, "contradicting_note", "reject", new, ref, f"note -> {bad!r}"))
    return out


def _missing_query(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    out = []
    seen: set[str] = set()
    for ref in r.queries:
        tools = next(t for name, _rx, t in QUERY_TARGETS if name == ref.value)
        drop = [i for i, s in enumerate(steps) if s.name in tools and s.name not in ctx.write_tools]
        if not drop or ref.value in seen:
            continue
        seen.add(ref.value)
        new = [s for i, s in enumerate(steps) if i not in drop]
        out.append(_v(ctx, "missing_query", "reject", new, ref,
                      f"dropped {', '.join(steps[i].name or '' for i in drop)}"))
    return out


def _query_tools(r: Reading) -> set[str]:
    out: set[str] = set()
    for ref in r.queries:
        out |= set(next(t for name, _rx, t in QUERY_TARGETS if name == ref.value))
    return out


def _reorder(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if r.forbids_queries:
        return []
    required = _query_tools(r)
    calls = [i for i, s in enumerate(steps) if s.is_call]

    def independent(i: int) -> bool:
        name = steps[i].name
        return name not in ctx.write_tools and name not in required and not any(
            name in ctx.depends.get(steps[j].name or "", ()) for j in calls if j > i
        )

    reads = [i for i in calls if independent(i)]
    if reads and len(calls) > len(reads):
        # the independent reads moved after the last call (nothing later needs them)
        rest = [s for i, s in enumerate(steps) if i not in reads]
        moved = [steps[i] for i in reads]
        k = max(j for j, s in enumerate(rest) if s.is_call) + 1
        new = rest[:k] + moved + rest[k:]
        if [s.raw for s in new] != [s.raw for s in steps]:
            return [_v(ctx, "reorder", "accept", new, None, f"{len(moved)} read call(s) moved to the end")]
    # two adjacent order blocks (create [+ pay]) from different places swapped
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE):
            continue
        pay_a = _pay_of(steps, i)
        j = i + (2 if pay_a else 1)
        if j >= len(steps) or steps[j].name != s.name or _place_arg(steps[j]) == _place_arg(s):
            continue
        pay_b = _pay_of(steps, j)
        if bool(pay_a) != bool(pay_b):
            continue
        end = j + (2 if pay_b else 1)
        block_a, block_b = steps[i:j], steps[j:end]
        if pay_a and pay_b:
            ids = {pay_a[1], pay_b[1]}
            later = " ".join(t.raw for t in steps[end:] + steps[:i])
            if any(x in later for x in ids):
                continue  # another call refers to one of the two orders
            block_b = [block_b[0], block_b[1].with_args(**{pay_b[0]: pay_a[1]})]
            block_a = [block_a[0], block_a[1].with_args(**{pay_a[0]: pay_b[1]})]
        new = steps[:i] + block_b + block_a + steps[end:]
        return [_v(ctx, "reorder", "accept", new, None, "two independent order blocks swapped")]
    return []


def _fill_args(ctx: TaskContext, name: str, schema: dict[str, Any], steps: list[Step]) -> dict[str, Any] | None:
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    place = next((_place_arg(s) for s in steps if _place_arg(s)), None)
    product = next((p for s in steps for p in _line_products(s)), None)
    address = next((s.args.get("address") for s in steps if s.args.get("address")), None)
    values: dict[str, Any] = {"user_id": ctx.user_id or next((s.args["user_id"] for s in steps if "user_id" in s.args), None)}
    if place:
        values["store_id"] = values["shop_id"] = place
        values["keywords"] = [ctx.places[place].name.split()[0] if place in ctx.places and ctx.places[place].name.split() else place]
    if product:
        values["product_id"] = product
    if address and address in ctx.locations:
        values["longitude"], values["latitude"] = ctx.locations[address]
        values["range"] = 1000
    args: dict[str, Any] = {}
    for key in required:
        if values.get(key) is None:
            return None
        args[key] = values[key]
    if "user_id" in props and "user_id" not in args and values.get("user_id"):
        args["user_id"] = values["user_id"]
    return args


def _extra_reads(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if r.forbids_queries or not ctx.read_tools:
        return []
    prefer = ("get_user_historical_behaviors", "get_user_all_orders", "get_delivery_store_info", "get_delivery_product_info",
              "get_instore_orders", "instore_shop_search_recommend", "delivery_store_search_recommend")
    names = sorted(ctx.read_tools, key=lambda n: (prefer.index(n) if n in prefer else len(prefer), n))
    chosen: list[Step] = []
    for n in names:
        args = _fill_args(ctx, n, ctx.read_tools[n], steps)
        if args is None:
            continue
        chosen.append(Step(json.dumps({"name": n, "arguments": args}, ensure_ascii=False), n, args))
        if len(chosen) == 3:
            break
    if not chosen:
        return []
    first_write = next((i for i, s in enumerate(steps) if s.name in ctx.write_tools), 0)
    last = max((i for i, s in enumerate(steps) if s.is_call), default=0)
    new = list(steps)
    # from the back, so earlier positions stay valid: before the end, after the first write, at the start
    for pos, st in sorted(zip((0, first_write + 1, last + 1), chosen), key=lambda x: -x[0]):
        new.insert(pos, st)
    return [_v(ctx, "extra_reads", "accept", new, None, "inserted " + ", ".join(s.name or "" for s in chosen))]


def _other_product(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not r.silent_on_products:
        return []
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE):
            continue
        place = _place_arg(s)
        have = set(_line_products(s))
        alt = next((q for q in (ctx.places[place].products if place in ctx.places else []) if q not in have), None)
        if alt is None:
            continue
        new = list(steps)
        if s.name == CREATE_DELIVERY:
            new[i] = s.with_args(product_ids=[alt], product_cnts=[1], attributes=[""])
        else:
            new[i] = s.with_args(product_id=alt, quantity=1)
        return [_v(ctx, "other_product", "accept", new, None,
                   f"products -> {ctx.products[alt].name if alt in ctx.products else alt!r} (the rubric names none)")]
    return []
