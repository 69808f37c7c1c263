"""Seeded generator of food-delivery tasks.

A task is a small world (the user's home and office, stores of several cuisines with ratings,
tags, locations, opening hours and menus, past orders, weather), a scripted user (persona, a
vague opening request, hidden facts revealed only when asked), a composite goal of 2 to 8
reasoning points (dish, party size, address, delivery window, budget, diet, store rating, store
tag, distance, dish option, order note, cancelling a mistaken order; optionally a change of
intent mid-dialogue), rubric items checked by code, golden actions, and for every rubric item a
trajectory that breaks only that item.

Every constraint comes with a tempting wrong option in the world (a near-identical store that is
rated lower, lacks the tag or is too far; a dearer or non-compliant variant of the dish), so each
reasoning point must actually be reasoned about. ``difficulty`` d gives 2 + d points (at most 8).
Generation is a pure function of (seed, difficulty, split): splits draw from disjoint streams.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from servicegym.envs.tasks.generators.common import (
    FactSheet,
    IdPool,
    PlaceWorld,
    at_distance,
    call,
    check_split,
    draw_user,
    generated_task,
    street_address,
    task_rng,
    user_script,
)
from servicegym.envs.tasks.generators.content_delivery import (
    ATTRIBUTE_SETS,
    CITIES,
    CUISINES,
    DIETS,
    DISH_ATTRIBUTE,
    NOTES,
    OPENINGS,
    STORE_TAG_REASON,
    STORE_TAGS,
    STREETS,
)
from servicegym.envs.tasks.model import Task
from servicegym.rewards.rubric import RubricItem
from servicegym.world_state.core import TIME_FORMAT, haversine_m
from servicegym.world_state.delivery.tools import delivery_minutes

GENERATOR_VERSION = 1
CONSTRAINTS = (
    "quantity", "address", "deadline", "budget", "diet", "store_rating",
    "store_tag", "store_distance", "attribute", "note", "cancel_old",
)
QUESTIONS = {
    "party_size": "How many people is this for?",
    "address": "Which address should it go to?",
    "deadline": "By what time should it arrive?",
    "budget": "What is your budget?",
    "diet": "Do you have any dietary restrictions or allergies?",
    "store_pref": "Any preference about the store's rating or service?",
    "distance": "How far away may the store be?",
    "attribute": "Which option or flavor should it be?",
    "note": "Any note or special request for the restaurant?",
}
# the content's orderings, computed once per process (each draw picks from the same sequence as before)
_CITY_NAMES = sorted(CITIES)
_CUISINE_NAMES = sorted(CUISINES)
_MULTI_DISH_CUISINES = [k for k in _CUISINE_NAMES if len(CUISINES[k][1]) >= 2]
_OTHER_CUISINES = {c: [k for k in _CUISINE_NAMES if k != c] for c in CUISINES}
_DISH_TYPES = {c: sorted(CUISINES[c][1]) for c in CUISINES}
_OTHER_DISH_TYPES = {(c, t): [x for x in _DISH_TYPES[c] if x != t] for c in CUISINES for t in CUISINES[c][1]}
_MENUS = {c: [x for dt in _DISH_TYPES[c] for x in CUISINES[c][1][dt]] for c in CUISINES}
_DIET_ITEMS = sorted(DIETS.items())
_NOTE_KEYS = sorted(NOTES)
_DIET_VARIANT = {
    "Contains peanuts": "{} with Peanut Sauce",
    "Seafood": "{} with Shrimp",
    "Pork": "{} with Pork Floss",
    "Fried": "Crispy Fried {}",
    "Contains dairy": "{} with Cheese",
    "Spicy": "Fiery {}",
    "Beef": "{} with Beef",
}


@dataclass(frozen=True)
class Route:
    """One way of carrying out the task: what gets ordered where, when and how."""

    store_id: str
    product_id: str
    qty: int
    attribute: str
    address: str
    dispatch: str
    note: str
    pay: bool = True
    duplicate: bool = False
    cancel_old: bool = True
    cancel_kept: bool = False
    confirm: bool = True
    tell_total: bool = True


class StoreWorld(PlaceWorld):
    """The food stores of one task's world and their dishes (see ``PlaceWorld``: the stores go into
    ``places_rows``; a store's name and address may be given per store). The delivery generator and
    the cross-scenario generator both build their food stores with it."""

    def store(self, cuisine: str, coords: tuple[float, float], score: float, tags: list[str], *,
              name: str | None = None, hours: tuple[str, str] = ("09:00", "22:00"),
              address: Callable[[], str] | None = None) -> dict[str, Any]:
        """A store of ``cuisine`` at ``coords``, named ``name`` (None: drawn from the cuisine's stems
        once the id is drawn) at the street ``address()`` writes (None: the world's)."""
        sid = self.ids.new("S", 6)
        store = {
            "store_id": sid,
            "name": name or self.name(CUISINES[cuisine][0]),
            "score": round(score, 1),
            "location": {"address": (address or self.address)(), "longitude": coords[0], "latitude": coords[1]},
            "tags": list(tags),
            "open_time": hours[0],
            "close_time": hours[1],
        }
        self.places_rows.append(store)
        self.places[sid] = store
        return store

    def product(self, store: dict[str, Any], name: str, price: float, tags: list[str], attributes: list[str]) -> dict[str, Any]:
        p = {
            "product_id": self.ids.new("P", 6),
            "name": name,
            "store_id": store["store_id"],
            "store_name": store["name"],
            "price": float(price),
            "tags": list(tags),
            "attributes": list(attributes),
            "quantity": 9999,
        }
        self.products.append(p)
        self.items[p["product_id"]] = p
        return p

    def clone(self, src: dict[str, Any], cuisine: str, name: str, coords: tuple[float, float] | None = None, *,
              address: Callable[[], str] | None = None, **changes: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """A near-identical store named ``name`` (same menu under new ids) at ``coords`` (None: where
        ``src`` is), but for ``changes`` (score, tags, hours); returns it and old -> new product ids."""
        coords = coords or (src["location"]["longitude"], src["location"]["latitude"])
        store = self.store(cuisine, coords, changes.pop("score", src["score"]), changes.pop("tags", list(src["tags"])),
                           name=name, hours=changes.pop("hours", (src["open_time"], src["close_time"])), address=address)
        mapping = {}
        for p in [p for p in self.products if p["store_id"] == src["store_id"]]:
            q = self.product(store, p["name"], p["price"], p["tags"], p["attributes"])
            mapping[p["product_id"]] = q["product_id"]
        return store, mapping


class _Builder:
    def __init__(self, seed: int, difficulty: int, split: str, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("delivery", split, seed, difficulty, GENERATOR_VERSION)
        self.ids = IdPool(self.rng)
        self.stores: list[dict[str, Any]] = []
        self.products: list[dict[str, Any]] = []
        self.world = StoreWorld(self.rng, self.ids, self.stores, self.products, self._store_name, self._store_address)
        self.orders: list[dict[str, Any]] = []

    # ----- ids and places -----------------------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _address(self, district: str) -> str:
        return street_address(self.rng, district, self.city)

    def _store_address(self) -> str:
        return f"No. {self.rng.randint(1, 499)} {self.rng.choice(STREETS)} Street, {self.city}"

    def _store_name(self, stems: tuple[str, ...] | list[str]) -> str:
        return f"{self.rng.choice(stems)} ({self.rng.choice(self.districts)} Branch)"

    def _store(self, cuisine: str, lon: float, lat: float, score: float, tags: list[str], name: str | None = None,
               hours: tuple[str, str] = ("09:00", "22:00")) -> dict[str, Any]:
        return self.world.store(cuisine, (lon, lat), score, tags, name=name, hours=hours)

    def _product(self, store: dict[str, Any], name: str, price: float, tags: list[str], attributes: list[str]) -> dict[str, Any]:
        return self.world.product(store, name, price, tags, attributes)

    def _clone_store(self, src: dict[str, Any], **changes: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """A near-identical store (same menu under new ids); returns it and old -> new product ids."""
        coords = changes.pop("coords", None)
        stems = [s for s in CUISINES[self.cuisine][0] if not src["name"].startswith(s)] or list(CUISINES[self.cuisine][0])
        return self.world.clone(src, self.cuisine, self._store_name(stems), coords, **changes)

    # ----- the task -----------------------------------------------------------------------
    def build(self) -> Task:
        rng = self.rng
        d = max(0, min(6, self.difficulty))
        points = min(8, 2 + d)
        intent = d >= 2 and rng.random() < 0.35
        picks = rng.sample(CONSTRAINTS, points - 1 - int(intent))
        if intent and not ({"quantity", "address"} & set(picks)):
            picks[rng.randrange(len(picks))] = rng.choice(["quantity", "address"])
        self.chosen = set(picks)
        c = self.chosen

        # -- the user and their places
        self.city = rng.choice(_CITY_NAMES)
        clon, clat, self.districts = CITIES[self.city]
        name, style, user_id = draw_user(rng)
        home_lon, home_lat = at_distance(rng, clon, clat, rng.uniform(500, 3000))
        work_lon, work_lat = at_distance(rng, home_lon, home_lat, rng.uniform(1200, 2000))
        home = {"address": self._address(rng.choice(self.districts)), "longitude": home_lon, "latitude": home_lat}
        work = {"address": self._address(rng.choice(self.districts)), "longitude": work_lon, "latitude": work_lat}
        day = datetime(2025, 1, 1) + timedelta(days=rng.randrange(365))
        meal_start = rng.choice([(10, 30), (16, 30)])
        now = day.replace(hour=meal_start[0], minute=meal_start[1]) + timedelta(minutes=rng.randrange(0, 121, 1))
        now_text = now.strftime(TIME_FORMAT)

        # -- what they want
        self.cuisine = rng.choice(_MULTI_DISH_CUISINES)
        dishes = CUISINES[self.cuisine][1]
        dish_type = rng.choice(_DISH_TYPES[self.cuisine])
        options = dishes[dish_type]
        diet_key = None
        if "diet" in c:
            base = rng.choice(options)
            candidates = [k for k, v in _DIET_ITEMS if v[0] not in base[2]]
            diet_key = rng.choice(candidates)
        else:
            base = rng.choice(options)
        dish_name, base_price, dish_tags = base
        forbidden = DIETS[diet_key][0] if diet_key else None
        attr_family = DISH_ATTRIBUTE.get(dish_type, "spice")
        attr_options = ATTRIBUTE_SETS[attr_family]
        attr_value = rng.choice(attr_options) if "attribute" in c else ""

        qty0 = rng.randint(2, 4) if "quantity" in c else 1
        change = None
        if intent:
            change = rng.choice([k for k in ("quantity", "address") if k in c])
        qty = qty0 + 1 if change == "quantity" else qty0
        addr_first, addr_other = (work, home) if rng.random() < 0.6 else (home, work)
        address0 = addr_first
        address = addr_other if change == "address" else addr_first

        # -- the target store, between home and office
        mid_lon, mid_lat = (home_lon + work_lon) / 2, (home_lat + work_lat) / 2
        t_lon, t_lat = at_distance(rng, mid_lon, mid_lat, rng.uniform(0, 350))
        min_score = rng.choice([4.5, 4.6, 4.7]) if "store_rating" in c else None
        score = rng.uniform(min_score, 5.0) if min_score else rng.uniform(4.0, 4.9)
        tag = rng.choice(STORE_TAGS) if "store_tag" in c else None
        other_tags = [t for t in STORE_TAGS if t != tag]
        tags = sorted(set(rng.sample(other_tags, rng.randint(0, 2)) + ([tag] if tag else [])))
        target_store = self._store(self.cuisine, t_lon, t_lat, score, tags)
        price = float(base_price + rng.choice([0, 2, 4]))
        attrs = list(attr_options)
        target = self._product(target_store, dish_name, price, list(dish_tags), attrs)
        variants: dict[str, dict[str, Any]] = {}
        if forbidden:
            variants["diet"] = self._product(
                target_store, _DIET_VARIANT[forbidden].format(dish_name), price, sorted(set(dish_tags) | {forbidden}), attrs
            )
        budget = None
        if "budget" in c:
            budget = float(math.ceil(price * qty * rng.uniform(1.1, 1.3)))
            dear = math.ceil(budget / qty) + rng.randint(6, 15)
            variants["budget"] = self._product(target_store, f"Deluxe {dish_name}", float(dear), list(dish_tags), attrs)
        other_type = rng.choice(_OTHER_DISH_TYPES[self.cuisine, dish_type])
        o_name, o_price, o_tags = rng.choice(dishes[other_type])
        safe_tags = [t for t in o_tags if t != forbidden]
        variants["dish"] = self._product(target_store, o_name, float(min(o_price, price)), safe_tags, attrs)

        # -- near-identical stores that break exactly one store constraint
        clones: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        if min_score:
            clones["store_rating"] = self._clone_store(
                target_store, score=min_score - rng.choice([0.2, 0.3, 0.5]),
                coords=at_distance(rng, mid_lon, mid_lat, rng.uniform(0, 350)))
        if tag:
            clones["store_tag"] = self._clone_store(
                target_store, tags=[t for t in target_store["tags"] if t != tag],
                coords=at_distance(rng, mid_lon, mid_lat, rng.uniform(0, 350)))
        max_m = None
        if "store_distance" in c:
            max_m = float(rng.choice([1500, 2000, 2500, 3000]))
            far = at_distance(rng, address["longitude"], address["latitude"], max_m + rng.uniform(600, 1500))
            clones["store_distance"] = self._clone_store(target_store, coords=far)
        if d >= 3:  # a closed look-alike: ordering there is refused until the agent picks another store
            self._clone_store(target_store, hours=("21:30", "23:59"),
                              coords=at_distance(rng, mid_lon, mid_lat, rng.uniform(0, 350)))

        # -- unrelated stores
        for _ in range(3 + d):
            cz = rng.choice(_OTHER_CUISINES[self.cuisine])
            s = self._store(cz, *at_distance(rng, mid_lon, mid_lat, rng.uniform(300, 5000)), rng.uniform(3.8, 4.9),
                            sorted(rng.sample(STORE_TAGS, rng.randint(0, 2))))
            menu = _MENUS[cz]
            for n, pr, tg in rng.sample(menu, min(len(menu), rng.randint(2, 4))):
                self._product(s, n, float(pr), list(tg), list(ATTRIBUTE_SETS[DISH_ATTRIBUTE.get(n.lower(), "spice")]))
        fillers = [s for s in self.stores if s["store_id"] not in {target_store["store_id"]} | {v[0]["store_id"] for v in clones.values()}]
        fillers = [s for s in fillers if not s["name"].startswith(tuple(CUISINES[self.cuisine][0]))]

        # -- past orders: history, hints at the diet, and the mistaken order to cancel
        task_key = f"G{self.seed % 10**6:06d}"

        def past_order(seq: int, store: dict[str, Any], status: str, note: str, when: datetime) -> dict[str, Any]:
            p = next(x for x in self.products if x["store_id"] == store["store_id"])
            t = when.strftime(TIME_FORMAT)
            loc = rng.choice([home, work])
            o = {
                "order_id": f"{task_key}O{seq:02d}", "order_type": "delivery", "user_id": user_id,
                "store_id": store["store_id"], "note": note, "location": loc, "dispatch_time": t,
                "shipping_time": delivery_minutes(haversine_m(loc["longitude"], loc["latitude"], store["location"]["longitude"], store["location"]["latitude"])),
                "delivery_time": t, "total_price": p["price"], "create_time": t, "update_time": t, "status": status,
                "products": [{"product_id": p["product_id"], "name": p["name"], "store_id": store["store_id"],
                              "store_name": store["name"], "price": p["price"], "quantity": 1, "attributes": "", "tags": p["tags"]}],
            }
            self.orders.append(o)
            return o

        hint = DIETS[diet_key][2] if diet_key else ""
        past_order(1, rng.choice(fillers), "delivered", hint, now - timedelta(days=rng.randint(2, 20)))
        mistaken = kept = None
        if "cancel_old" in c:
            a, b = rng.sample(fillers, 2)
            mistaken = past_order(2, a, "unpaid", "", now - timedelta(minutes=rng.randint(5, 40)))
            kept = past_order(3, b, "paid", "", now - timedelta(minutes=rng.randint(5, 40)))

        # -- the delivery window
        after = by = None
        routes_m = [delivery_minutes(self._dist(target_store, a)) for a in (home, work)]
        for cl, _ in clones.values():
            routes_m += [delivery_minutes(self._dist(cl, a)) for a in (home, work)]
        if "deadline" in c:
            if rng.random() < 0.5:
                after = now + timedelta(minutes=rng.choice(range(60, 125, 5)))
                after = after.replace(minute=after.minute - after.minute % 5, second=0)
                by = after + timedelta(minutes=30)
            else:
                by = now + timedelta(minutes=max(routes_m) + rng.choice(range(10, 30, 5)))
                by = (by + timedelta(minutes=(5 - by.minute % 5) % 5)).replace(second=0)

        def dispatch_for(store: dict[str, Any], addr: dict[str, Any]) -> str:
            if after is None:
                return now_text
            m = delivery_minutes(self._dist(store, addr))
            return max(now, after - timedelta(minutes=m) + timedelta(minutes=5)).strftime(TIME_FORMAT)

        note_key = rng.choice(_NOTE_KEYS) if "note" in c else None
        note_text = note_key if note_key else ""
        if diet_key and not note_key:
            note_text = ""

        # -- hidden facts and what is said up front
        sheet = FactSheet(rng)
        fact = sheet.add

        if "quantity" in c:
            fact("party_size", f"It's for {qty0} people, one portion each.")
        if "address" in c:
            where = "office" if address0 is work else "home"
            fact("address", f"Please deliver it to my {where}: {address0['address']}.")
        if after is not None:
            fact("deadline", f"I'm busy until {after:%H:%M}, so it should arrive between {after:%H:%M} and {by:%H:%M}.")
        elif by is not None:
            fact("deadline", f"It has to arrive by {by:%H:%M}.")
        if budget is not None:
            fact("budget", f"I don't want to spend more than {budget:g} yuan in total.")
        if diet_key:
            fact("diet", DIETS[diet_key][1], hide=True)
        if min_score:
            fact("store_pref", f"I only order from stores rated {min_score:g} or higher.")
        if tag:
            # a second store preference shares the store_pref question's words
            fact("store_service", STORE_TAG_REASON[tag], keywords=["store", "service", "restaurant", "rating"]) if min_score \
                else fact("store_pref", STORE_TAG_REASON[tag])
        if max_m:
            fact("distance", f"The store should be within {max_m / 1000:g} km of the delivery address, so the food stays fresh.")
        if attr_value:
            fact("attribute", f"I'd like it {attr_value.lower()}.")
        if note_key:
            fact("note", NOTES[note_key][0])
        facts, stated = sheet.hidden, sheet.stated

        opening = rng.choice(OPENINGS[style]).format(dish=dish_type)
        if "address" not in c:
            opening += f" Send it to my {'office' if address0 is work else 'home'}."
        if mistaken:
            opening += (f" Also, I placed an order at {self._store_by(mistaken['store_id'])['name']} by mistake earlier, "
                        f"please cancel it, but keep my order from {self._store_by(kept['store_id'])['name']}.")
        if stated:
            opening += " " + " ".join(stated)
        change_msg = None
        if change == "quantity":
            change_msg = f"Actually, one more person is joining, so make it {qty} portions."
        elif change == "address":
            where = "office" if address is work else "home"
            change_msg = f"Actually, change of plan: please send it to my {where} instead: {address['address']}."

        user = user_script(rng, name, style, ("city", self.city), opening, facts, change_msg)

        # -- rubric
        items: list[RubricItem] = [
            RubricItem(name="dish", kind="dish", description=f"the order contains {dish_type}",
                       params={"product_ids": [target["product_id"]] + [m[target["product_id"]] for _, m in clones.values()]
                               + ([variants["diet"]["product_id"]] if "diet" in variants else [])
                               + ([variants["budget"]["product_id"]] if "budget" in variants else [])
                               + [m[v["product_id"]] for _, m in clones.values() for k, v in variants.items() if k != "dish"]}),
            RubricItem(name="order_count", kind="order_count", description="exactly one new order", params={"count": 1}),
            RubricItem(name="paid", kind="paid", description="the order is paid"),
            RubricItem(name="confirmed", kind="confirmed_before_order", description="the user confirmed before the order was created"),
            RubricItem(name="informed_total", kind="informed_total", description="the user was told the order's total"),
        ]
        if "quantity" in c:
            items.append(RubricItem(name="quantity", kind="quantity", description=f"{qty} portions", params={"count": qty}))
        if "address" in c:
            items.append(RubricItem(name="address", kind="address", description="delivered to the right address", params={"address": address["address"]}))
        if by is not None:
            params = {"by": by.strftime(TIME_FORMAT)}
            if after is not None:
                params["after"] = after.strftime(TIME_FORMAT)
            items.append(RubricItem(name="deadline", kind="deadline", description="arrives within the user's window", params=params))
        if budget is not None:
            items.append(RubricItem(name="budget", kind="budget", description=f"total at most {budget:g}", params={"max_total": budget}))
        if forbidden:
            items.append(RubricItem(name="diet", kind="diet", description=f"nothing tagged {forbidden}", params={"forbidden_tags": [forbidden]}))
        if min_score:
            items.append(RubricItem(name="store_rating", kind="store_rating", description=f"store rated >= {min_score}", params={"min_score": min_score}))
        if tag:
            items.append(RubricItem(name="store_tag", kind="store_tag", description=f"store is {tag}", params={"tag": tag}))
        if max_m:
            items.append(RubricItem(name="store_distance", kind="store_distance", description=f"store within {max_m:g} m", params={"max_m": max_m}))
        if attr_value:
            items.append(RubricItem(name="attribute", kind="attribute", description=f"option {attr_value}",
                                    params={"product_ids": items[0].params["product_ids"], "value": attr_value}))
        if note_key:
            items.append(RubricItem(name="note", kind="note_mentions", description=f"note: {note_key}", params={"keywords": list(NOTES[note_key][1])}))
        if mistaken:
            items.append(RubricItem(name="cancel_mistaken", kind="order_status", description="mistaken order cancelled",
                                    params={"order_id": mistaken["order_id"], "status": "cancelled"}))
            items.append(RubricItem(name="keep_other_order", kind="untouched", description="the other order is kept",
                                    params={"order_ids": [kept["order_id"]]}))

        # -- golden route and the violations
        golden = Route(target_store["store_id"], target["product_id"], qty, attr_value, address["address"],
                       dispatch_for(target_store, address), note_text)
        ctx = dict(user_id=user_id, task_key=task_key, facts=facts, mistaken=mistaken, kept=kept, change=change_msg,
                   target_store=target_store, target=target, measure=bool(max_m or by))
        # the golden route, made on its first read (``Task.defer_golden``: it draws nothing from ``rng``)
        golden_actions = partial(self._actions, golden, ctx)
        violations: dict[str, Route] = {}
        if self.with_violations:  # no draw from rng below: skipping them leaves the task as it is
            violations = {
                "dish": replace(golden, product_id=variants["dish"]["product_id"]),
                "order_count": replace(golden, duplicate=True),
                "paid": replace(golden, pay=False),
                "confirmed": replace(golden, confirm=False),
                "informed_total": replace(golden, tell_total=False),
            }
            if "quantity" in c:
                violations["quantity"] = replace(golden, qty=qty0 if change == "quantity" else qty - 1)
            if "address" in c:
                other = address0 if change == "address" else addr_other
                violations["address"] = replace(golden, address=other["address"], dispatch=dispatch_for(target_store, other))
            if by is not None:
                late = by - timedelta(minutes=delivery_minutes(self._dist(target_store, address))) + timedelta(minutes=15)
                violations["deadline"] = replace(golden, dispatch=late.strftime(TIME_FORMAT))
            if budget is not None:
                violations["budget"] = replace(golden, product_id=variants["budget"]["product_id"])
            if forbidden:
                violations["diet"] = replace(golden, product_id=variants["diet"]["product_id"])
            for key in ("store_rating", "store_tag", "store_distance"):
                if key in clones:
                    st, mapping = clones[key]
                    violations[key] = replace(golden, store_id=st["store_id"], product_id=mapping[target["product_id"]],
                                              dispatch=dispatch_for(st, address))
            if attr_value:
                violations["attribute"] = replace(golden, attribute=next(a for a in attr_options if a != attr_value))
            if note_key:
                violations["note"] = replace(golden, note="")
            if mistaken:
                violations["cancel_mistaken"] = replace(golden, cancel_old=False)
                violations["keep_other_order"] = replace(golden, cancel_kept=True)

        world = {
            "time": now_text,
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, work],
            "weather": [{"id": f"W{i}", "city": self.city, "category": rng.choice(["sunny", "cloudy", "rainy"]),
                         "datetime": (day + timedelta(days=i)).strftime("%Y-%m-%d"), "temperature": [rng.randint(5, 18), rng.randint(19, 33)],
                         "humidity": rng.randint(30, 90)} for i in range(3)],
            "orders": self.orders,
            "stores": self.stores,
            "products": self.products,
            "user_profile": {"user id": user_id, "name": name, "home address": home["address"], "work address": work["address"]},
            "user_historical_behaviors": {
                "user id": user_id,
                "home address": home["address"],
                "work address": work["address"],
                "residence": self.city,
                "dietary notes": [hint] if hint else [],
                "frequently purchased categories": sorted({self.cuisine, rng.choice(_CUISINE_NAMES)}),
            },
        }
        trajectories = {k: self._actions(r, ctx) for k, r in violations.items()} if self.with_violations else {}
        return generated_task("delivery", self.split, self.seed, self.difficulty, len(c) + 1 + int(intent),
                              world, user, items, golden_actions, trajectories)

    def _dist(self, store: dict[str, Any], addr: dict[str, Any]) -> float:
        loc = store["location"]
        return haversine_m(addr["longitude"], addr["latitude"], loc["longitude"], loc["latitude"])

    def _store_by(self, store_id: str) -> dict[str, Any]:
        return self.world.places[store_id]

    def _actions(self, r: Route, ctx: dict[str, Any]) -> list[str]:
        """The action strings that carry out route ``r`` with the scripted user."""
        out = [call("get_user_historical_behaviors")]
        hidden = [f.topic for f in ctx["facts"]]
        if hidden:
            asked = [QUESTIONS[t] for t in QUESTIONS if t in hidden]
            if "store_service" in hidden and "store_pref" not in hidden:
                asked.append(QUESTIONS["store_pref"])
            out.append("Happy to help. " + " ".join(asked))
        store = self._store_by(r.store_id)
        product = self.world.items[r.product_id]
        out.append(call("delivery_product_search_recommend", keywords=[product["name"]]))
        out.append(call("get_delivery_store_info", store_id=r.store_id))
        if ctx["measure"]:
            out.append(call("address_to_longitude_latitude", address=r.address))
        mistaken, kept = ctx["mistaken"], ctx["kept"]
        if mistaken is not None:
            out.append(call("search_delivery_orders", user_id=ctx["user_id"], status="unpaid"))
            if r.cancel_old:
                out.append(call("get_delivery_order_status", order_id=mistaken["order_id"]))
                out.append(call("cancel_delivery_order", order_id=mistaken["order_id"]))
            if r.cancel_kept:
                out.append(call("get_delivery_order_status", order_id=kept["order_id"]))
                out.append(call("cancel_delivery_order", order_id=kept["order_id"]))
        if r.confirm:
            out.append(f"I found {product['name']} at {store['name']} for {product['price']:g} yuan each. Shall I place the order?")
            if ctx["change"]:
                out.append("Understood, I've updated that. Shall I place the order now?")
        args = dict(user_id=ctx["user_id"], store_id=r.store_id, product_ids=[r.product_id], product_cnts=[r.qty],
                    address=r.address, dispatch_time=r.dispatch)
        if r.attribute:
            args["attributes"] = [r.attribute]
        if r.note:
            args["note"] = r.note
        copies = 2 if r.duplicate else 1
        for i in range(copies):
            out.append(call("create_delivery_order", **args))
            if r.pay:
                out.append(call("pay_delivery_order", order_id=f"{ctx['task_key']}D{i + 1:02d}"))
        done = "Your order has been placed and paid." if r.pay else "Your order has been placed."
        if r.tell_total:
            done += f" It comes to {product['price'] * r.qty:g} yuan in total."
        if not r.confirm:
            # without a proposal a pending change of mind never comes up, so the agent ends the chat
            done += " ###STOP###"
        out.append(done)
        return out


def generate_delivery_task(seed: int, difficulty: int = 2, split: str = "train", violations: bool = True) -> Task:
    """The delivery task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` skips the checker-validation trajectories (everything else is identical)."""
    check_split(split)
    return _Builder(int(seed), int(difficulty), split, violations).build()
