"""Which gold record a natural-language rubric item is about: one resolution for every kind.

A compiled item (``rewards/nl_rubric/``) says what must hold; the loader must still tie it to
the gold records of each expected state it constrains ("The delivery time for the rice noodle
order ...", "The nail salon should be within 1 km of ...", "The number of people for the
massage shop reservation ..."). ``resolve`` does it, the same way for every kind:

1. the candidates are the gold records of the item's target (``candidates``): new or replaced
   delivery orders for a delivery time or address; any new or replaced order (and a pre-existing
   one whose note the gold changes) for what an order holds; new, replaced or re-timed bookings and
   reservations for a visit time (or re-counted ones for a party size); orders and visits together
   for the place they are at; every record for a status;
2. one candidate: it;
3. else the candidate whose products, store or shop (names, tags, category) the item's words
   name most distinctly (a word shared by k candidates weighs 1/k), or whose kind of dish or place
   it names ("the drink order", "the restaurant order", "the bathhouse"); for an item about a
   place, a tie between records at one place is that place;
4. else the item's own test (``agrees``: a time window accepting the gold time, a compiled item
   holding of the gold record), asked only when it can answer for every candidate: among the
   records its words name equally, the only one it accepts (or, for a kind other than time, all of
   them when it accepts each); else the only candidate it accepts; for a place, several that share
   one place; for a kind other than time, all of them when it accepts every one, and, for what
   holds of a whole order (its delivery address) when its words name none, every one it accepts
   (those meant are among them; each is then held to what its gold already holds);
5. else nothing: the item is not tied in that state.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from rapidfuzz import fuzz

from servicegym.rewards.nl_rubric import normalise
from servicegym.rewards.nl_rubric.world import TRAVEL_TABLES
from servicegym.rewards.vitabench import TRAVEL_ORDER_TYPES, GoldOrder, GoldState, GoldVisit
from servicegym.world_state.core import haversine_m, parse_time
from servicegym.world_state.delivery import delivery_minutes
from servicegym.world_state.instore import product_key

# an English word of a product/store name counts as named by the item at this fuzzy similarity
# to one of the item's words ("noodles" / "noodle")
WORD_SIMILARITY = 85.0
_STOP = frozenset({
    "the", "and", "with", "for", "order", "orders", "set", "meal", "combo", "store", "shop", "branch", "flavor",
    "style", "new", "from", "should", "time", "delivery", "estimated", "expected", "around", "before", "after",
    "between", "portion", "cup", "large", "small", "medium", "regular", "special", "classic", "signature", "hot",
    # when a meal is eaten and for whom say nothing of which order it is ("dinner" is a tag of many stores)
    "breakfast", "lunch", "dinner", "supper", "brunch", "family", "personal", "user", "food", "dish", "dishes",
    "main", "staple", "people", "person", "restaurant", "cuisine",
    # what an item says of a record, not what names it ("the moxibustion package price": "price" is no "rice",
    # "package" no "Signature Package")
    "package", "packages", "price", "prices", "cost", "costs", "total", "amount", "quantity", "item", "items",
    "product", "products", "yuan", "价格", "总价", "价钱", "数量", "商品", "产品",
    "订单", "外卖", "套餐", "早餐", "午餐", "晚餐", "晚饭", "午饭", "早饭", "夜宵", "用户", "家人", "个人", "餐厅",
})
# kinds of dish an item may name instead of the dish ("the drink order", "饮品订单"): the item's
# cue words, and words of a product or store name that put it in the kind
_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "drink": (
        ("drink", "drinks", "beverage", "beverages", "饮品", "饮料", "茶饮", "喝"),
        ("tea", "coffee", "latte", "americano", "cappuccino", "mocha", "juice", "milk", "soda", "boba", "lemonade",
         "smoothie", "drink", "beverage", "cola", "beer", "water", "茶", "咖啡", "拿铁", "汁", "饮", "奶", "可乐", "酒"),
    ),
    "dessert": (
        ("dessert", "desserts", "sweets", "甜品", "甜点"),
        ("cake", "pudding", "mochi", "tart", "dessert", "mousse", "tiramisu", "macaron", "ice cream", "糕", "布丁",
         "甜", "冰淇淋", "慕斯"),
    ),
    # kinds of place an in-store item names its record by ("the restaurant order", "the bathhouse", "美容院"):
    # the categories of a local-services platform, with the words of a shop's name, tags or category in each
    "restaurant": (
        ("restaurant", "restaurants", "eatery", "diner", "bistro", "餐厅", "饭店", "餐馆", "酒楼"),
        ("restaurant", "cuisine", "bistro", "dine-in", "eatery", "canteen", "hot pot", "hotpot", "bbq", "buffet",
         "arrival for meal", "arrival at restaurant", "meal service", "food arrival", "餐厅", "饭店", "餐馆", "酒楼", "菜",
         "火锅", "烧烤", "自助", "到店用餐"),
    ),
    "bath": (
        ("bathhouse", "bathhouses", "bath", "baths", "sauna", "洗浴", "浴场", "澡堂", "汗蒸"),
        ("bath", "bathing", "bathhouse", "sauna", "hot spring", "洗浴", "浴", "汗蒸", "温泉"),
    ),
    "beauty": (
        ("salon", "beauty", "aesthetics", "美容", "美容院", "美甲", "美发"),
        ("beauty", "salon", "aesthetics", "facial", "skincare", "skin care", "nail", "manicure", "hair", "makeup",
         "美容", "美甲", "美发", "护肤", "医美"),
    ),
    "fitness": (
        ("gym", "gyms", "fitness", "健身房", "健身"),
        ("gym", "fitness", "workout", "training studio", "健身"),
    ),
    "cinema": (
        ("cinema", "theater", "theatre", "movie", "movies", "影院", "电影院", "电影"),
        ("cinema", "movie", "film", "theater", "theatre", "影院", "电影", "影城"),
    ),
    "bar": (
        ("bar", "bars", "pub", "酒吧", "清吧"),
        ("bar", "pub", "cocktail", "cocktails", "brewery", "酒吧", "清吧", "鸡尾酒"),
    ),
    "karaoke": (
        ("ktv", "karaoke", "唱歌"),
        ("ktv", "karaoke", "唱歌"),
    ),
    "school": (
        ("institution", "school", "academy", "training", "course", "courses", "class", "classes", "lesson", "lessons",
         "培训", "课程", "学校", "机构"),
        ("course", "class", "lesson", "training", "academy", "school", "institute", "tutoring", "培训", "课", "学校", "教育"),
    ),
}
_EN_WORD = re.compile(r"[a-z][a-z']{2,30}")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")

Gold = GoldOrder | GoldVisit
Agrees = Callable[[Gold], "bool | None"]


def table_of(g: Gold) -> str:
    return "orders" if isinstance(g, GoldOrder) else g.table


def gold_id(g: Gold) -> str:
    return g.order_id if isinstance(g, GoldOrder) else g.record_id


def place_of(g: Gold) -> str:
    return g.store_id if isinstance(g, GoldOrder) else g.shop_id


def ref_of(g: Gold) -> dict[str, Any]:
    """What a rubric item's ``refs`` record of a gold record (``governed_records`` reads it back)."""
    if isinstance(g, GoldOrder):
        return {"table": "orders", "id": g.order_id, "order_type": g.order_type, "place": g.store_id,
                "product_ids": [x.product_id for x in g.lines]}
    return {"table": g.table, "id": g.record_id, "place": g.shop_id}


def candidates(state: GoldState, target: str) -> list[Gold]:
    """The gold records of ``state`` an item of ``target`` (``spec_target``) may be about."""
    made = ("new", "replaced")
    deliveries: list[Gold] = [g for g in state.orders if g.order_type == "delivery" and g.kind in made]
    orders: list[Gold] = [g for g in state.orders if (g.kind in made or (g.kind == "existing" and g.note is not None))
                          and (g.order_type not in TRAVEL_ORDER_TYPES or g.lines)]
    visits: list[Gold] = [g for g in state.visits if g.kind in made or g.time is not None]
    if target == "delivery":
        return deliveries
    if target == "visit":
        return visits
    if target == "party":  # a party size: visits made, or whose gold changes the party
        return [g for g in state.visits if g.kind in made or g.customer_count is not None]
    if target == "arrival":
        return deliveries or visits
    if target == "order":
        return orders
    if target == "place":
        return [g for g in orders if g.kind in made] + [g for g in visits if g.kind in made]
    if target == "record":
        return [*state.orders, *state.visits]
    return []


def names(g: Gold, world: Any) -> list[str]:
    """What an item may call the gold record by: its products, store or shop, their tags."""
    out: list[str] = []
    tables = world.tables
    if isinstance(g, GoldOrder):
        products = world.table("products") if "products" in tables else None
        shop_products = world.table("shop_products") if "shop_products" in tables else None
        before = world.table("orders").get(g.order_id) if g.kind == "existing" and not g.lines else None
        if before is not None:  # a pre-existing order the gold keeps: its own lines name it
            out += [x for line in before.products for x in (line.name, *line.tags)]
        for line in g.lines:
            p = products.get(line.product_id) if products is not None else None
            if p is None and shop_products is not None:
                p = shop_products.get(product_key(g.store_id, line.product_id))
            if p is not None:
                out += [p.name, *p.tags]
        store = world.table("stores").get(g.store_id) if "stores" in tables else None
        if store is not None:
            out += [store.name, *store.tags]
        shop = world.table("shops").get(g.store_id) if "shops" in tables and store is None else None
        if shop is not None:
            out += [shop.shop_name, shop.category, *shop.tags]
        if g.order_type in TRAVEL_ORDER_TYPES:
            out += _travel_names(g, world)
    else:
        shop = world.table("shops").get(g.shop_id) if "shops" in tables else None
        if shop is not None:
            out += [shop.shop_name, shop.category, *shop.tags]
    return [normalise(x) for x in out if x]


# the words an item calls a travel order by its kind ("the hotel", "航班", "火车票")
_TRAVEL_WORDS = {
    "hotel": ("hotel", "room", "stay", "check", "酒店", "宾馆", "住宿", "入住", "房型", "离店"),
    "attraction": ("attraction", "scenic", "sight", "景点", "景区", "门票"),
    "flight": ("flight", "airline", "plane", "航班", "机票", "飞机", "航空", "起飞"),
    "train": ("train", "railway", "火车", "高铁", "动车", "列车", "车次"),
}


def _travel_names(g: GoldOrder, world: Any) -> list[str]:
    """A travel order's names: its place's name and tags, its room, ticket or seat types, the words
    of its kind."""
    out: list[str] = [x.product_type or "" for x in g.lines]
    for table, kind, _owner, name_field, _products, _type in TRAVEL_TABLES:
        if kind == g.order_type and table in world.tables:
            row = world.table(table).get(g.store_id)
            if row is not None:
                out += [str(getattr(row, name_field, "") or ""), *(getattr(row, "tags", ()) or ())]
    return out + list(_TRAVEL_WORDS.get(g.order_type, ()))


def _units(name_list: list[str]) -> set[str]:
    """English content words and Chinese character pairs of the names."""
    units: set[str] = set()
    for n in name_list:
        units |= {w for w in _EN_WORD.findall(n) if w not in _STOP}
        for run in _CJK.findall(n):
            units |= {run[i:i + 2] for i in range(len(run) - 1)} - _STOP
    return units


def _kinds(name_list: list[str]) -> set[str]:
    """``kind:<k>`` units for the kinds of dish the names belong to."""
    words = {w for n in name_list for w in _EN_WORD.findall(n)}
    joined = " ".join(name_list)
    return {f"kind:{k}" for k, (_, members) in _KINDS.items()
            if any((m in words or " " in m and m in joined) if m.isascii() else m in joined for m in members)}


def _named(unit: str, head: str, head_words: list[str], all_words: list[str]) -> bool:
    if unit.startswith("kind:"):  # a kind's cue counts even where it is too common to name a record by itself
        cues = _KINDS[unit[5:]][0]
        return any(c in all_words if c.isascii() else c in head for c in cues)
    if unit.isascii():  # a near spelling ("teas", "noodle"), not another word one letter on ("rice" in "price")
        return any(w == unit or w[:1] == unit[:1] and fuzz.ratio(unit, w) >= WORD_SIMILARITY for w in head_words)
    return unit in head


def name_scores(head: str, cands: list[Gold], world: Any) -> list[float]:
    """How distinctly ``head`` (the item's words naming its record) names each candidate."""
    head = re.sub(r"'s\b", "", normalise(head))
    all_words = _EN_WORD.findall(head)
    head_words = [w for w in all_words if w not in _STOP]
    units = [_units(n) | _kinds(n) for n in (names(g, world) for g in cands)]
    share: dict[str, int] = {}
    for us in units:
        for u in us:
            share[u] = share.get(u, 0) + 1
    # fsum: a sum over a set whose order follows the string hash seed must not depend on it (ties decide records)
    return [math.fsum(1.0 / share[u] for u in us if _named(u, head, head_words, all_words)) for us in units]


def by_name(head: str, cands: list[Gold], world: Any) -> Gold | None:
    """The candidate whose names ``head`` mentions most distinctly; None on a tie or when it names none."""
    scores = name_scores(head, cands, world)
    best = max(scores, default=0.0)
    if best <= 0 or scores.count(best) > 1:
        return None
    return cands[scores.index(best)]


def resolve(head: str, cands: list[Gold], world: Any, agrees: Agrees | None = None, one_place: bool = False,
            all_agree: bool = False, unnamed_subset: bool = False) -> list[Gold]:
    """The gold records of ``cands`` an item is about (see the module docstring); ``one_place``:
    the item is about a place, so records at one place may be tied together; ``all_agree``: when
    the item's own test accepts every candidate (two orders to the one address the item names),
    it is tied to all of them, which asks of each what the gold already asks; ``unnamed_subset``:
    with ``all_agree``, an item whose words name no candidate is tied to every candidate it accepts
    (for what holds of a whole order, as its address: the ones meant are among them)."""
    if len(cands) == 1:
        return list(cands)
    if not cands:
        return []
    scores = name_scores(head, cands, world)
    best = max(scores, default=0.0)
    top = [g for g, s in zip(cands, scores) if s == best]
    if best > 0 and (len(top) == 1 or one_place and len({place_of(g) for g in top}) == 1):
        return top
    if agrees is not None:
        verdicts = [agrees(g) for g in cands]
        if all(v is not None for v in verdicts):
            ok = [g for g, v in zip(cands, verdicts) if v]
            if best > 0:  # the records the item's words name equally: its test picks among them
                named = [g for g in ok if g in top]
                if len(named) == 1 or named and (all_agree and len(named) == len(top)
                                                 or one_place and len({place_of(g) for g in named}) == 1):
                    return named
            if len(ok) == 1 or ok and one_place and len({place_of(g) for g in ok}) == 1:
                return ok
            if all_agree and ok and (len(ok) == len(cands) or best == 0 and unnamed_subset):
                # every record it accepts, when its words name none and it speaks of the whole record
                # (a delivery address): the records it is about are among those the gold makes meet
                # it, and each is held to what its gold already holds
                return ok
    if one_place and len({place_of(g) for g in cands}) == 1:
        return list(cands)
    return []


def earliest(g: Gold, world: Any) -> datetime:
    """The earliest time the record can happen: the arrival of an order placed now; now for a visit."""
    now = world.clock.now
    if not isinstance(g, GoldOrder) or g.longitude is None or g.latitude is None:
        return now
    store = world.table("stores").get(g.store_id) if "stores" in world.tables else None
    if store is None:
        return now
    to = store.location
    return now + timedelta(minutes=delivery_minutes(haversine_m(g.longitude, g.latitude, to.longitude, to.latitude)))


def gold_time(g: Gold, world: Any) -> datetime | None:
    """The gold record's own time (an order's delivery, else dispatch plus the trip), if any."""
    try:
        if isinstance(g, GoldVisit):
            return parse_time(g.time) if g.time else None
        if g.delivery_time:
            return parse_time(g.delivery_time)
        if g.dispatch_time:
            return parse_time(g.dispatch_time) + (earliest(g, world) - world.clock.now)
    except ValueError:
        return None
    return None
