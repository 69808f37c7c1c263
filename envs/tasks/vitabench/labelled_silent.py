"""The rubric-silent deviations and the unrequested writes of the labelled check set
(``labelled.py``). ``mentions_time``, ``mentions_quantity``, ``mentions_option``, ``mentions_note``
and ``mentions_payment`` read whether any rubric item says anything near a detail; the
``silent_*`` builders change a detail the gold holds but no item mentions (label ``accept`` under
``scoring="rubric"``), and ``extra_order``, ``unrequested_cancel`` and ``extra_visit`` add a write
the user never asked for (label ``reject``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.vitabench.labelled_reading import (
    _ADDRESS,
    _CANCEL,
    _DATE_RES,
    _ORDER_REF,
    _TIME_H,
    _TIME_HM,
    _TIME_ZH,
    Reading,
    _address_value,
    _bracketless,
    _find_dates,
    _find_times,
    _words,
    named_anywhere,
    norm,
)
from servicegym.envs.tasks.vitabench.labelled_route import (
    _ATTR_SPLIT,
    CREATE_DELIVERY,
    CREATE_INSTORE,
    Step,
    TaskContext,
    Variant,
    _fmt,
    _parse_dt,
    _pay_of,
    _place_arg,
    _shares_content,
    _v,
)

SILENT_TIME_MIN = 45  # a silent time change lands at least this far from every gold time



# ----- rubric-silent deviations ---------------------------------------------------------------
# words that speak of a time or a date (with the dates and clock times ``_find_dates`` and
# ``_find_times`` read): any of them in any item and ``silent_time`` is not built
_TIME_WORDS = re.compile(
    r"\b(?:times?|timing|dates?|days?|today|tonight|tomorrow|yesterday|morning|noon|midday|afternoon|evening|"
    r"nights?|midnight|overnight|breakfast|brunch|lunch|dinner|supper|o'?clock|hours?|minutes?|mins?|asap|soon|"
    r"immediate\w*|now|quick\w*|fast\w*|early|earlier|earliest|late|later|latest|before|after|until|till|arriv\w*|"
    r"schedul\w*|wait\w*|punctual\w*|weekends?|weekdays?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|"
    r"saturdays?|sundays?|holidays?|festivals?|deadline|advance|prompt\w*|hurry|rush\w*|delay\w*|timely|"
    r"(?:a|p)\.?m\.?|during|while|meal ?times?|afterwards?|then|next|first|last|week|month|year)\b|"
    r"时|点|分钟|早|午|晚|夜|今天|明天|后天|当天|当日|日期|\d\s*[日号月年]|周|星期|节|尽快|马上|立即|立刻|及时|"
    r"准时|送达|到达|到店|之前|以前|之后|以后|前|后|截止|提前|等|期间|再|先"
)
# digits, number words, measures, prices and people: ``silent_quantity`` is not built
_QTY_WORDS = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|dozens?|single|double|triple|"
    r"twice|once|pairs?|couple|half|quantit\w*|numbers?|amounts?|counts?|counted|portions?|servings?|pieces?|pcs|"
    r"cups?|bowls?|box\w*|bottles?|packs?|packages?|sets?|only|total\w*|each|every\w*|per|all|both|several|"
    r"multiple|many|few|enough|whole|people|persons?|guests?|diners?|group|share|sharing|shared|family|"
    r"colleagues?|friends?|party|identical|same|different|prices?|priced|cost\w*|budget\w*|yuan|rmb|spend\w*|"
    r"expensive|cheap\w*|afford\w*|worth|more|less|extra|additional|another|again|also|too)\b|"
    r"[一二两三四五六七八九十百千万半双俩仨]|数量|份|个|杯|碗|盒|瓶|只|串|块|张|位|人|对|都|每|各|共|总|仅|单|整|"
    r"多|少|价|元|钱|预算|花费|便宜|贵|量|再|也|还"
)
# words about options, taste, temperature, size, ingredients or diet (besides the words of the
# product's own options): ``silent_option`` is not built
_OPTION_WORDS = re.compile(
    r"\b(?:options?|attributes?|specs?|specifications?|flavou?rs?|flavou?red|tastes?|tasting|temperatures?|sizes?|"
    r"cups?|bowls?|portions?|servings?|spic\w*|ice|iced|hot|warm|cold|chilled|sugar\w*|sweet\w*|sour|salt\w*|"
    r"topping\w*|sauces?|dressing\w*|soups?|broth|milk|dairy|cream\w*|eggs?|meat|vegetarian|vegan|caffeine\w*|"
    r"decaf\w*|ingredients?|contain\w*|large|medium|small|health\w*|oil\w*|fat\w*|calori\w*|diet\w*|allerg\w*)\b|"
    r"辣|麻|冰|热|温|凉|冷|糖|甜|酸|咸|淡|杯|碗|规格|口味|味|份|酱|汤|奶|蛋|肉|素|含|咖啡因|做法|口感|配料|小料|忌口|过敏|健康"
)
# notes, the merchant or rider, and what notes ask for: ``silent_note`` is not built
_NOTE_WORDS = re.compile(
    r"\b(?:notes?|noted|remarks?|comments?|memo|message\w*|instruct\w*|tell\w*|inform\w*|ask\w*|request\w*|"
    r"remind\w*|merchants?|riders?|couriers?|cutlery|utensils?|tableware|chopsticks|spoons?|forks?|napkins?|"
    r"gloves?|straws?|bags?|doors?|doorbell|knock\w*|ring|call\w*|phone\w*|front desk|reception|cilantro|"
    r"coriander|scallions?|onions?|garlic|allerg\w*|avoid\w*|without|no|not|dietary|restrict\w*|special)\b|"
    r"备注|留言|告知|告诉|提醒|要求|商家|骑手|餐具|筷子|勺|纸巾|手套|吸管|袋|门|前台|电话|香菜|葱|蒜|过敏|忌口|不|别|免|无"
)
# paying, buying, a status, a voucher's validity: ``silent_payment`` is not built; nor where an
# item not about a cancellation speaks of success or completion
_PAY_WORDS = re.compile(
    r"\b(?:pay\w*|paid|unpaid|purchas\w*|buy\w*|bought|checkout|check out|status\w*|settle\w*|charg\w*|fees?|"
    r"deposit\w*|transaction\w*|valid\w*|usable|redeem\w*)\b|支付|付|已付|未付|购买|买|状态|结算|费用|定金|押金|交易|"
    r"有效|可用|核销"
)
_DONE_WORDS = re.compile(r"\b(?:success\w*|complet\w*|finish\w*|done|place[sd]?|placing)\b|成功|完成|办妥")
PAY_TOOLS = ("pay_delivery_order", "pay_instore_order", "pay_instore_book")
ACTIVE = ("unpaid", "paid", "processed", "in-progress", "unconsumed")


def _without_address(item: str) -> str:
    """The item without the address it gives ("No. 75 ..." is no "no")."""
    if _ADDRESS.search(norm(item)):
        value = _address_value(item)
        if value:
            return item.replace(value, " ")
    return item


def mentions_time(items: Iterable[str]) -> bool:
    """Whether any item speaks of a time or a date (a date, a clock time, a word about time)."""
    return any(_TIME_WORDS.search(norm(t)) or _find_dates(t) or _find_times(t) for t in map(_without_address, items))


def _without_values(item: str) -> str:
    """The item without its address value and its dates and clock times (their digits are no
    quantities)."""
    text = _without_address(item)
    for _kind, rx in _DATE_RES:
        text = rx.sub(" ", text)
    for rx in (_TIME_HM, _TIME_H, _TIME_ZH):
        text = rx.sub(" ", text)
    return text


def mentions_quantity(items: Iterable[str]) -> bool:
    """Whether any item has a number, a measure, a price or a word about people (addresses,
    dates and clock times aside)."""
    return any(_QTY_WORDS.search(norm(_without_values(x))) for x in items)


def mentions_payment(items: Iterable[str]) -> bool:
    """Whether any item speaks of paying, buying or a status, or of success or completion outside
    a cancellation."""
    texts = [norm(_without_address(x)) for x in items]
    return any(_PAY_WORDS.search(t) or (_DONE_WORDS.search(t) and not _CANCEL.search(t)) for t in texts)


def mentions_note(items: Iterable[str], note: str = "") -> bool:
    """Whether any item speaks of notes, the merchant or rider, or what notes ask for, or shares a
    word with ``note``."""
    texts = [_without_address(x) for x in items]
    return any(_NOTE_WORDS.search(norm(t)) or (note and _shares_content(note, t)) for t in texts)


def _option_vocabulary(options: Iterable[str]) -> tuple[set[str], set[str]]:
    """The Latin words (two letters or more) and the Chinese character pairs of a product's options."""
    words: set[str] = set()
    pairs: set[str] = set()
    for o in options:
        words |= {w for w in _words(o) if len(w) >= 2}
        zh = re.sub(r"[^\u4e00-\u9fff]", "", norm(o))
        pairs |= {zh[i: i + 2] for i in range(len(zh) - 1)} | ({zh} if len(zh) == 1 else set())
    return words, pairs


def mentions_option(items: Iterable[str], options: Iterable[str]) -> bool:
    """Whether any item speaks of options, taste, temperature, size or ingredients, or uses a word
    of one of ``options`` (the product's whole option list: its attribute families)."""
    words, pairs = _option_vocabulary(options)
    for x in items:
        t = norm(_without_address(x))
        if _OPTION_WORDS.search(t) or _words(t) & words or any(p in t for p in pairs):
            return True
    return False


def _gold_records(ctx: TaskContext, table: str, place: str | None) -> list[list[dict[str, Any]]] | None:
    """Per expected state, the gold records (new or replaced ones) a golden create/visit call at
    ``place`` may be matched to: ``table`` ``"orders"``, ``"books"`` or ``"reservations"``. None
    when there are no states or one has no such record (no sure grounding)."""
    if not ctx.expected or not place:
        return None
    out = []
    for st in ctx.expected:
        if table == "orders":
            recs = [o for o in st.get("orders") or [] if o.get("store_id") == place and o.get("kind") in ("new", "replaced")]
        else:
            recs = [v for v in st.get("visits") or []
                    if v.get("table") == table and v.get("shop_id") == place and v.get("kind") in ("new", "replaced")]
        if not recs:
            return None
        out.append(recs)
    return out


def _all_differ(golds: list[list[dict[str, Any]]] | None, differs: Any) -> bool:
    return golds is not None and all(differs(g) for recs in golds for g in recs)


def _far(text: Any, t: datetime) -> bool:
    g = _parse_dt(text) if text else None
    return g is not None and abs((g - t).total_seconds()) > SILENT_TIME_MIN * 60


def _time_candidates(ctx: TaskContext, t: datetime) -> list[datetime]:
    now = ctx.now.replace(microsecond=0)
    cands = [now] + [t + timedelta(minutes=m) for m in (90, -90, 150, -150, 240, -240)]
    return [c for c in cands if c >= now]


def _last_call(steps: list[Step]) -> int:
    return max((i for i, s in enumerate(steps) if s.is_call), default=-1) + 1


def _visit_table(step: Step) -> str:
    return "books" if step.name == "instore_book" else "reservations"


def _silent_time(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_time(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        place = _place_arg(s)
        if s.name == CREATE_DELIVERY and i in ctx.delivery_times:
            golds = _gold_records(ctx, "orders", place)
            d, t = ctx.delivery_times[i]
            for new_d in _time_candidates(ctx, d):
                new_t = new_d + (t - d)
                if place in ctx.places and not ctx.places[place].open_at(new_d):
                    continue

                def differs(g: dict[str, Any], new_d: datetime = new_d, new_t: datetime = new_t) -> bool:
                    given = [(k, v) for k, v in (("dispatch", g.get("dispatch_time")), ("delivery", g.get("delivery_time"))) if v]
                    return bool(given) and all(_far(v, new_d if k == "dispatch" else new_t) for k, v in given)

                if _all_differ(golds, differs):
                    new = list(steps)
                    new[i] = s.with_args(dispatch_time=_fmt(new_d))
                    what = "now" if new_d == ctx.now.replace(microsecond=0) else f"{(new_d - d).total_seconds() / 60:+.0f} min"
                    return [_v(ctx, "silent_time", "accept", new, None,
                               f"dispatch {_fmt(d)} -> {_fmt(new_d)} ({what}); no item speaks of time")]
        elif s.name in ("instore_book", "instore_reservation"):
            t0 = _parse_dt(s.args.get("time", ""))
            if t0 is None:
                continue
            golds = _gold_records(ctx, _visit_table(s), place)
            for new_t in _time_candidates(ctx, t0):
                if place in ctx.places and not ctx.places[place].open_at(new_t):
                    continue
                if _all_differ(golds, lambda g, new_t=new_t: _far(g.get("time"), new_t)):
                    new = list(steps)
                    new[i] = s.with_args(time=_fmt(new_t))
                    return [_v(ctx, "silent_time", "accept", new, None,
                               f"{s.name} time {_fmt(t0)} -> {_fmt(new_t)}; no item speaks of time")]
    return []


def _merged(lines: Iterable[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for pid, n in lines:
        out[pid] = out.get(pid, 0) + int(n)
    return out


def _gold_counts(g: dict[str, Any]) -> dict[str, int]:
    return _merged((ln.get("product_id", ""), ln.get("quantity", 0)) for ln in g.get("lines") or [])


def _silent_quantity(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_quantity(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        if s.name == CREATE_DELIVERY:
            ids, cnts = list(s.args.get("product_ids") or []), list(s.args.get("product_cnts") or [])
            if not ids or len(ids) != len(cnts):
                continue
            for k, pid in enumerate(ids):
                new_cnts = list(cnts)
                new_cnts[k] = int(cnts[k]) + 1
                ours = _merged(zip(ids, new_cnts))
                stock = ctx.products[pid].stock if pid in ctx.products else None
                if stock is not None and stock < ours[pid]:
                    continue
                if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g, ours=ours: _gold_counts(g) != ours):
                    new = list(steps)
                    new[i] = s.with_args(product_cnts=new_cnts)
                    return [_v(ctx, "silent_quantity", "accept", new, None,
                               f"quantity of {pid} {cnts[k]} -> {new_cnts[k]}; no item speaks of numbers")]
        elif s.name == CREATE_INSTORE and s.args.get("product_id"):
            pid, q = s.args["product_id"], int(s.args.get("quantity", 1) or 1)
            stock = ctx.products[pid].stock if pid in ctx.products else None
            if stock is not None and stock < q + 1:
                continue
            if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g, pid=pid, q=q: _gold_counts(g) != {pid: q + 1}):
                new = list(steps)
                new[i] = s.with_args(quantity=q + 1)
                return [_v(ctx, "silent_quantity", "accept", new, None,
                           f"quantity of {pid} {q} -> {q + 1}; no item speaks of numbers")]
    for i, s in enumerate(steps):
        if s.name in ("instore_book", "instore_reservation"):
            c = int(s.args.get("customer_count", 1) or 1)
            golds = _gold_records(ctx, _visit_table(s), _place_arg(s))
            if _all_differ(golds, lambda g, c=c: g.get("customer_count") is not None and g["customer_count"] != c + 1):
                new = list(steps)
                new[i] = s.with_args(customer_count=c + 1)
                return [_v(ctx, "silent_quantity", "accept", new, None,
                           f"{s.name} party size {c} -> {c + 1}; no item speaks of numbers")]
    return []


def _same_option(a: str, b: str) -> bool:
    x, y = norm(a), norm(b)
    return bool(x) and bool(y) and (x == y or x in y or y in x)


def _silent_option(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    for i, s in enumerate(steps):
        if s.name != CREATE_DELIVERY:
            continue
        ids = list(s.args.get("product_ids") or [])
        attrs = list(s.args.get("attributes") or [])
        for k, pid in enumerate(ids):
            prod = ctx.products.get(pid)
            if prod is None or len(prod.options) < 2 or k >= len(attrs) or not attrs[k]:
                continue
            if sum(1 for x in ids if x == pid) > 1 or mentions_option(ctx.nl_rubric, prod.options):
                continue
            parts = [p.strip() for p in _ATTR_SPLIT.split(attrs[k]) if p.strip()]
            opts = {norm(o): o for o in prod.options}
            for m, part in enumerate(parts):
                if norm(part) not in opts:
                    continue  # an option the catalogue words differently: no sure reading
                others = [o for o in prod.options if not _same_option(o, part) and not any(_same_option(o, p) for p in parts)]
                # prefer an option of the same family (sharing a word or a character pair)
                w, pr = _option_vocabulary([part])
                others.sort(key=lambda o: not (_option_vocabulary([o])[0] & w or _option_vocabulary([o])[1] & pr))
                for alt in others:
                    new_attr = ", ".join(alt if j == m else p for j, p in enumerate(parts))

                    def differs(g: dict[str, Any], pid: str = pid, alt: str = alt) -> bool:
                        gl = [ln for ln in g.get("lines") or [] if ln.get("product_id") == pid]
                        if not gl:
                            return True  # the gold record holds other products: the lines differ anyway
                        return all(ln.get("attributes") and not any(_same_option(alt, p) for p in _ATTR_SPLIT.split(ln["attributes"]))
                                   for ln in gl)

                    if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), differs):
                        new_attrs = list(attrs)
                        new_attrs[k] = new_attr
                        new = list(steps)
                        new[i] = s.with_args(attributes=new_attrs)
                        return [_v(ctx, "silent_option", "accept", new, None,
                                   f"option {part!r} -> {alt!r} of {prod.name!r}; no item speaks of its options")]
    return []


def _silent_note(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    for i, s in enumerate(steps):
        note = str(s.args.get("note") or "")
        if s.name != CREATE_DELIVERY or not note.strip() or mentions_note(ctx.nl_rubric, note):
            continue
        if _all_differ(_gold_records(ctx, "orders", _place_arg(s)), lambda g: bool((g.get("note") or "").strip())):
            new = list(steps)
            new[i] = s.with_args(note="")
            return [_v(ctx, "silent_note", "accept", new, None, f"note {note!r} left empty; no item speaks of notes")]
    return []


def _silent_payment(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if mentions_payment(ctx.nl_rubric):
        return []
    for i, s in enumerate(steps):
        if s.name not in (CREATE_DELIVERY, CREATE_INSTORE, "instore_book"):
            continue
        pay = _pay_of(steps, i)
        if pay is None:
            continue
        later = " ".join(t.raw for t in steps[i + 2:])
        if json.dumps(pay[1], ensure_ascii=False) in later:
            continue  # a later call uses the paid record
        table = "books" if s.name == "instore_book" else "orders"
        golds = _gold_records(ctx, table, _place_arg(s))
        if _all_differ(golds, lambda g: str(g.get("status", "")) not in ("unpaid", "cancelled", "")):
            new = steps[: i + 1] + steps[i + 2:]
            return [_v(ctx, "silent_payment", "accept", new, None,
                       f"{steps[i + 1].name} of {pay[1]} dropped (left unpaid); no item speaks of paying")]
    return []


# ----- unrequested writes ---------------------------------------------------------------------
def _call_step(name: str, **args: Any) -> Step:
    return Step(json.dumps({"name": name, "arguments": args}, ensure_ascii=False), name, args)


def _insert_at_end(steps: list[Step], extra: list[Step]) -> list[Step]:
    k = _last_call(steps)
    return steps[:k] + extra + steps[k:]


def _named_in_items(items: list[str], name: str) -> bool:
    forms = [name] + ([_bracketless(name)] if _bracketless(name) and _bracketless(name) != norm(name) else [])
    return any(named_anywhere(items, f) for f in forms if len(norm(f)) >= 2)


def _extra_order(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not ctx.expected:
        return []
    template = next((s for s in steps if s.name in (CREATE_DELIVERY, CREATE_INSTORE)), None)
    if template is None:
        return []
    gold_products = {ln.get("product_id") for st in ctx.expected for o in st.get("orders") or [] for ln in o.get("lines") or []}
    golden_places = [p for p in dict.fromkeys(_place_arg(s) for s in steps if s.name == template.name) if p]
    pays = any(t.name in ("pay_delivery_order", "pay_instore_order") for t in steps)
    if pays and "orders" not in ctx.next_ids:
        return []
    dispatch = _parse_dt(template.args.get("dispatch_time", "")) if template.name == CREATE_DELIVERY else None
    for place in golden_places + sorted(p for p in ctx.places if p not in golden_places):
        if place not in ctx.places or (dispatch is not None and not ctx.places[place].open_at(dispatch)):
            continue
        for pid in ctx.places[place].products:
            prod = ctx.products.get(pid)
            if pid in gold_products or prod is None or (prod.stock is not None and prod.stock < 1):
                continue
            if _named_in_items(ctx.nl_rubric, prod.name):
                continue
            if template.name == CREATE_DELIVERY:
                extra = [template.with_args(store_id=place, product_ids=[pid], product_cnts=[1], attributes=[""], note="")]
                pay_name = "pay_delivery_order"
            else:
                extra = [template.with_args(shop_id=place, product_id=pid, quantity=1)]
                pay_name = "pay_instore_order"
            if pays:
                extra.append(_call_step(pay_name, order_id=ctx.next_ids["orders"]))
            return [_v(ctx, "extra_order", "reject", _insert_at_end(steps, extra), None,
                       f"one more order of {prod.name!r} at {ctx.places[place].name!r}{' (paid)' if pays else ''}")]
    return []


def _unrequested_cancel(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    items = ctx.nl_rubric
    if any(_CANCEL.search(norm(x)) and not _ORDER_REF.search(x) for x in items):
        return []  # a cancellation item that names no id: which record it means is not sure
    held = {str(o.get("order_id")) for st in ctx.expected for o in st.get("orders") or []}
    held |= {str(v.get("record_id")) for st in ctx.expected for v in st.get("visits") or []}
    golden_text = " ".join(s.raw for s in steps)
    recs = sorted(ctx.initial, key=lambda x: x.status not in ACTIVE)
    for rec in recs:
        if rec.record_id in held or rec.status == "cancelled" or (rec.user_id and ctx.user_id and rec.user_id != ctx.user_id):
            continue
        if json.dumps(rec.record_id, ensure_ascii=False) in golden_text or any(rec.record_id in x for x in items):
            continue
        if any(_named_in_items(items, n) for n in rec.names):
            continue
        user = ctx.user_id or rec.user_id
        if rec.table == "orders" and "cancel_delivery_order" in ctx.write_tools:
            extra = [_call_step("get_delivery_order_detail", order_id=rec.record_id),
                     _call_step("cancel_delivery_order", order_id=rec.record_id)]
        elif rec.table == "orders" and "instore_cancel_order" in ctx.write_tools:
            extra = [_call_step("get_instore_orders", user_id=user), _call_step("instore_cancel_order", order_id=rec.record_id)]
        elif rec.table == "books" and "instore_cancel_book" in ctx.write_tools:
            extra = [_call_step("get_instore_books", user_id=user), _call_step("instore_cancel_book", book_id=rec.record_id)]
        elif rec.table == "reservations" and "instore_cancel_reservation" in ctx.write_tools:
            extra = [_call_step("get_instore_reservations", user_id=user),
                     _call_step("instore_cancel_reservation", reservation_id=rec.record_id)]
        else:
            continue
        return [_v(ctx, "unrequested_cancel", "reject", _insert_at_end(steps, extra), None,
                   f"pre-existing {rec.table[:-1]} {rec.record_id} ({rec.status}) cancelled; no expected state or item holds it")]
    return []


def _extra_visit(ctx: TaskContext, steps: list[Step], r: Reading) -> list[Variant]:
    if not ctx.expected:
        return []
    for i, s in enumerate(steps):
        if s.name not in ("instore_book", "instore_reservation"):
            continue
        table, place = _visit_table(s), _place_arg(s)
        made = sum(1 for t in steps if t.name == s.name and _place_arg(t) == place)
        if any(sum(1 for v in st.get("visits") or [] if v.get("table") == table and v.get("shop_id") == place
                   and v.get("kind") in ("new", "replaced")) > made for st in ctx.expected):
            continue  # an expected state holds more of them: a second one may be asked for
        extra = [Step(s.raw, s.name, dict(s.args))]
        pay = _pay_of(steps, i)
        if pay is not None:
            if table not in ctx.next_ids:
                continue
            extra.append(_call_step(steps[i + 1].name or "pay_instore_book", **{pay[0]: ctx.next_ids[table]}))
        return [_v(ctx, "extra_visit", "reject", _insert_at_end(steps, extra), None,
                   f"{s.name} at {ctx.places[place].name if place in ctx.places else place!r} made twice")]
    return []
