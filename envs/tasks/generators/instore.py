"""Seeded generator of in-store tasks.

A task is a small world (the user's home and office, shops of several categories with ratings,
tags, locations, opening hours, booking or reservation flags and menus with stock, the user's
past orders and, sometimes, bookings or reservations; weather), a scripted user (persona, a vague
opening request, hidden facts revealed only when asked), a composite goal, rubric items checked
by code, golden actions, and for every rubric item a trajectory that breaks only that item.

The goal is always: buy a package or voucher at one shop and book a seat there (restaurants,
hot pot, karaoke: ``instore_book``, with a fee or free) or reserve a service time there (spa,
fitness, hair salon, yoga: ``instore_reservation``), for a party at a time. Reasoning points are
the product and the visit time plus 1 + difficulty constraints drawn from: party size (sets the
package size or the number of vouchers), a weekday named instead of a date, shop rating, a shop
feature, distance from home or office, budget, a restriction (diet or health), a sold-out first
choice with a fallback, a look-alike shop that does not take bookings/reservations, and a
mistaken booking/reservation to cancel; optionally a change of intent (more people before
confirming, or a later time after the reservation is made, which needs a lookup and a
modification). ``difficulty`` d gives 3 + d points, so 5 at the default of 2 (VitaBench's in-store
tasks average 5.6).

Every constraint comes with a tempting wrong option in the world: a near-identical shop that is
rated lower, lacks the feature, is too far, does not take bookings/reservations or (from d = 3) is
closed at the wanted time; a dearer or non-compliant variant of the package; the sold-out first
choice. Generation is a pure function of (seed, difficulty, split): splits draw from disjoint
streams.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from servicegym.envs.tasks.generators.content_delivery import CITIES, STREETS
from servicegym.envs.tasks.generators.content_instore import (
    CATEGORIES,
    FEATURE_REASON,
    OPENINGS,
    RESTRICTIONS,
    Category,
    ProductType,
)
from servicegym.envs.tasks.model import Task
from servicegym.rewards.rubric import RubricItem
from servicegym.world_state.core import TIME_FORMAT

GENERATOR_VERSION = 1
CONSTRAINTS = (
    "party_size", "weekday", "rating", "feature", "distance", "budget", "diet", "stock", "reservable", "cancel_old",
)
SET_SIZES = (2, 4, 6)
HOURS = ("10:00", "22:00")
FILLER_HOURS = ("09:00", "23:00")
CLOSED_HOURS = ("07:00", "13:00")  # visits are between 14:00 and 21:00, so this shop is always shut
QUESTIONS = {
    "party_size": "How many people are going?",
    "visit_time": "When are you planning to go?",
    "budget": "What is your budget?",
    "diet": "Do you have any allergies, dietary or health restrictions?",
    "store_pref": "Any minimum rating for the shop?",
    "shop_feature": "Does the place need any particular facilities?",
    "distance": "How far from home or work may the place be?",
    "fallback": "If your first choice is sold out, what would you take instead?",
}
TOPIC_CUES = {
    "visit_time": ["when", "what time", "which day"],
    "shop_feature": ["facilit", "feature", "amenit"],
    "fallback": ["sold out", "instead"],
}
FLAG = {"book": "enable_book", "reservation": "enable_reservation"}
# the content's orderings, computed once per process (each draw picks from the same sequence as before)
_CITY_NAMES = sorted(CITIES)
_CATEGORY_NAMES = sorted(CATEGORIES)
_OTHER_CATEGORIES = {c: [k for k in _CATEGORY_NAMES if k != c] for c in CATEGORIES}
_SAME_KIND = {c: [k for k in _OTHER_CATEGORIES[c] if CATEGORIES[k].kind == CATEGORIES[c].kind] for c in CATEGORIES}
TABLE = {"book": "books", "reservation": "reservations"}


@dataclass(frozen=True)
class Route:
    """One way of carrying out the task: what is bought where, and the visit booked where and when."""

    order_shop: str
    product_id: str
    qty: int
    visit_shop: str
    time: str  # the time the booking/reservation is made for
    party: int
    final_time: str | None = None  # after a change of plan, the reservation is moved to this time
    pay: bool = True
    pay_book: bool = True
    duplicate_order: bool = False
    duplicate_visit: bool = False
    confirm: bool = True
    tell_total: bool = True
    cancel_old: bool = True
    cancel_kept: bool = False


class ShopWorld(PlaceWorld):
    """The in-store shops of one task's world and their products (see ``PlaceWorld``: the shops go
    into ``places_rows``). The in-store generator and the cross-scenario generator both build their
    shops with it."""

    def shop(self, category: str, coords: tuple[float, float], score: float, tags: list[str], *,
             stems: Sequence[str] | None = None, hours: tuple[str, str] = HOURS, fee: float = 0.0,
             flags: tuple[bool, bool] | None = None) -> dict[str, Any]:
        """A shop of ``category`` at ``coords``; ``flags`` (bookable, reservable) default to the
        category's kind, and only a bookable shop charges the booking ``fee``."""
        cat = CATEGORIES[category]
        book, reserve = flags if flags is not None else (cat.kind == "book", cat.kind == "reservation")
        shop = {
            "shop_id": self.ids.new("S", 6),
            "shop_name": self.name(stems or cat.stems),
            "score": round(score, 1),
            "location": {"address": self.address(), "longitude": coords[0], "latitude": coords[1]},
            "tags": list(tags),
            "category": category,
            "enable_book": book,
            "book_price": float(fee) if book else 0.0,
            "enable_reservation": reserve,
            "open_time": hours[0],
            "close_time": hours[1],
        }
        self.places_rows.append(shop)
        self.places[shop["shop_id"]] = shop
        return shop

    def product(self, shop: dict[str, Any], name: str, price: float, tags: list[str], stock: int) -> dict[str, Any]:
        p = {"product_id": self.ids.new("P", 6), "name": name, "shop_id": shop["shop_id"], "price": float(price),
             "tags": list(tags), "quantity": stock}
        self.products.append(p)
        self.items[p["product_id"]] = p
        return p

    def clone(self, src: dict[str, Any], coords: tuple[float, float], **changes: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """A near-identical shop (same menu and stock under new ids, another name) at ``coords``,
        but for ``changes`` (score, tags, hours, flags); returns it and old -> new product ids."""
        cat = CATEGORIES[src["category"]]
        stems = [s for s in cat.stems if not src["shop_name"].startswith(s)] or list(cat.stems)
        shop = self.shop(
            src["category"], coords, changes.pop("score", src["score"]), changes.pop("tags", list(src["tags"])),
            stems=stems, hours=changes.pop("hours", (src["open_time"], src["close_time"])),
            fee=src["book_price"], flags=changes.pop("flags", (src["enable_book"], src["enable_reservation"])),
        )
        mapping = {}
        for p in [p for p in self.products if p["shop_id"] == src["shop_id"]]:
            q = self.product(shop, p["name"], p["price"], p["tags"], p["quantity"])
            mapping[p["product_id"]] = q["product_id"]
        return shop, mapping


class _Builder:
    def __init__(self, seed: int, difficulty: int, split: str, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("instore", split, seed, difficulty, GENERATOR_VERSION)
        self.ids = IdPool(self.rng)
        self.names: set[str] = set()
        self.shops: list[dict[str, Any]] = []
        self.products: list[dict[str, Any]] = []
        self.world = ShopWorld(self.rng, self.ids, self.shops, self.products, self._name, self._shop_address)

    # ----- ids, places, shops and menus ---------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _address(self, district: str) -> str:
        return street_address(self.rng, district, self.city)

    def _name(self, stems: tuple[str, ...] | list[str]) -> str:
        """A shop name not used yet in this world (look-alikes must still be told apart by name)."""
        for _ in range(30):
            name = f"{self.rng.choice(stems)} ({self.rng.choice(self.districts)} Branch)"
            if name not in self.names:
                break
        else:
            name = f"{name[:-1]} {len(self.names)})"
        self.names.add(name)
        return name

    def _shop_address(self) -> str:
        return f"No. {self.rng.randint(1, 499)} {self.rng.choice(STREETS)} Street, {self.city}"

    def _shop(self, category: str, coords: tuple[float, float], score: float, tags: list[str], *,
              stems: list[str] | None = None, hours: tuple[str, str] = HOURS, fee: float = 0.0,
              flags: tuple[bool, bool] | None = None) -> dict[str, Any]:
        return self.world.shop(category, coords, score, tags, stems=stems, hours=hours, fee=fee, flags=flags)

    def _product(self, shop: dict[str, Any], name: str, price: float, tags: list[str], stock: int) -> dict[str, Any]:
        return self.world.product(shop, name, price, tags, stock)

    def _menu(self, shop: dict[str, Any], cat: Category, ptype: ProductType, sizes: tuple[int, ...], stock: int,
              markup: float = 0.0) -> dict[int, dict[str, Any]]:
        """One product type: a set per party size (booking categories) or one voucher (the rest)."""
        _, name, price, tags = ptype
        if cat.kind == "book":
            return {n: self._product(shop, f"{name} for {n}", (price + markup) * n, list(tags), stock) for n in sizes}
        return {1: self._product(shop, name, price + markup, list(tags), stock)}

    def _clone(self, src: dict[str, Any], coords: tuple[float, float], **changes: Any) -> tuple[dict[str, Any], dict[str, str]]:
        return self.world.clone(src, coords, **changes)

    def _near(self, lon: float, lat: float, lo: float, hi: float) -> tuple[float, float]:
        return at_distance(self.rng, lon, lat, self.rng.uniform(lo, hi))

    # ----- choosing the products ----------------------------------------------------------
    def _pick_products(self, cat: Category, diet: bool, stock: bool) -> tuple[ProductType, ProductType, ProductType | None, str | None]:
        """The wanted type, the wrong-dish type, the sold-out first choice, and the restriction tag:
        the restriction must spare the wanted type and leave enough other types to choose from."""
        rng = self.rng
        types = list(cat.products)
        rng.shuffle(types)
        need = 2 if stock else 1
        for target in types:
            others = [t for t in types if t is not target]
            forbidden = None
            if diet:
                options = [r for r in cat.restrictions if r not in target[3]
                           and sum(r not in t[3] for t in others) >= need]
                if not options:
                    continue
                forbidden = rng.choice(sorted(options))
            safe = [t for t in others if forbidden is None or forbidden not in t[3]]
            first = safe.pop(rng.randrange(len(safe))) if stock else None
            return target, rng.choice(safe), first, forbidden
        raise AssertionError(f"no product choice fits the constraints for {cat}")  # content guarantees one

    # ----- the task -----------------------------------------------------------------------
    def build(self) -> Task:
        rng = self.rng
        d = max(0, min(6, self.difficulty))
        points = 3 + d
        self.category = rng.choice(_CATEGORY_NAMES)
        cat = CATEGORIES[self.category]
        kind, table = cat.kind, TABLE[cat.kind]
        intent = None
        if d >= 2 and rng.random() < 0.35:
            intent = rng.choice(["party", "time"] if kind == "reservation" else ["party"])
        picks = rng.sample(CONSTRAINTS, points - 2 - int(intent is not None))
        if intent == "party" and "party_size" not in picks:
            picks[rng.randrange(len(picks))] = "party_size"
        c = set(picks)

        # -- the user and their places
        self.city = rng.choice(_CITY_NAMES)
        clon, clat, self.districts = CITIES[self.city]
        name, style, user_id = draw_user(rng)
        home_lon, home_lat = at_distance(rng, clon, clat, rng.uniform(500, 3000))
        work_lon, work_lat = at_distance(rng, home_lon, home_lat, rng.uniform(2500, 4000))
        home = {"address": self._address(rng.choice(self.districts)), "longitude": home_lon, "latitude": home_lat}
        work = {"address": self._address(rng.choice(self.districts)), "longitude": work_lon, "latitude": work_lat}
        anchor, anchor_name = (home, "home") if rng.random() < 0.6 else (work, "office")
        day = datetime(2025, 1, 1) + timedelta(days=rng.randrange(365))
        now = day.replace(hour=rng.randint(8, 12), minute=rng.randrange(0, 60, 5))
        task_key = f"G{self.seed % 10**6:06d}"

        # -- when, and for how many
        ahead = rng.randint(2, 6) if "weekday" in c else rng.randint(1, 6)
        slot = rng.randrange(14 * 60, 19 * 60 + 31, 30)
        visit = (day + timedelta(days=ahead)).replace(hour=slot // 60, minute=slot % 60)
        visit2 = visit + timedelta(minutes=90) if intent == "time" else None
        final_visit = visit2 or visit
        if kind == "book":
            party0 = rng.choice([2, 4]) if intent == "party" else rng.choice([4, 6]) if "party_size" in c else 2
            party = party0 + 2 if intent == "party" else party0
        else:
            party0 = rng.choice([2, 3]) if intent == "party" else rng.randint(2, 4) if "party_size" in c else 1
            party = party0 + 1 if intent == "party" else party0
        qty = 1 if kind == "book" else party
        size = party if kind == "book" else 1

        # -- the target shop and its menu
        target_type, dish_type, first_type, forbidden = self._pick_products(cat, "diet" in c, "stock" in c)
        max_m = float(rng.choice([1500, 2000, 3000, 5000])) if "distance" in c else None
        reach = (200.0, max_m - 300) if max_m else (300.0, 4000.0)
        min_score = rng.choice([4.5, 4.6, 4.7]) if "rating" in c else None
        score = rng.uniform(min_score, 5.0) if min_score else rng.uniform(4.0, 4.9)
        feature = rng.choice(cat.features) if "feature" in c else None
        tags = sorted(set(cat.tags[:2] + tuple(rng.sample([f for f in cat.features if f != feature], rng.randint(0, 2)))
                          + ((feature,) if feature else ())))
        fee = float(rng.choice([0, 0, 20, 30, 50])) if kind == "book" else 0.0
        target_shop = self._shop(self.category, self._near(anchor["longitude"], anchor["latitude"], *reach), score, tags, fee=fee)
        markup = float(rng.choice([0, 2, 4]))
        stock = rng.randint(2 * qty + 2, 40)
        sizes = SET_SIZES if kind == "book" else (1,)
        wanted = self._menu(target_shop, cat, target_type, sizes, stock, markup)
        target = wanted[size]
        price = target["price"]
        if first_type:  # the user's first choice, sold out in every size
            self._menu(target_shop, cat, first_type, sizes, 0, markup)
        dish_menu = self._menu(target_shop, cat, dish_type, sizes, rng.randint(2 * qty + 2, 40), markup)
        wrong = dish_menu[size]
        wrong["price"] = min(wrong["price"], price)  # cheaper or equal, so only the dish item can fail
        variants: dict[str, dict[str, Any]] = {}
        budget = None
        if "budget" in c:
            budget = float(math.ceil(price * qty * rng.uniform(1.1, 1.3)))
            dear = math.ceil(budget / qty) + rng.randint(6, 30)
            variants["budget"] = self._product(target_shop, f"Deluxe {target['name']}", dear, target["tags"], stock)
        if forbidden:
            variants["diet"] = self._product(target_shop, RESTRICTIONS[forbidden][2].format(target["name"]), price,
                                             sorted(set(target["tags"]) | {forbidden}), stock)

        # -- near-identical shops that break exactly one constraint, or refuse the visit
        def inside() -> tuple[float, float]:
            return self._near(anchor["longitude"], anchor["latitude"], *reach)

        flags_off = (False, target_shop["enable_reservation"]) if kind == "book" else (target_shop["enable_book"], False)
        clones: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        if min_score:
            clones["shop_rating"] = self._clone(target_shop, inside(), score=min_score - rng.choice([0.2, 0.3, 0.5]))
        if feature:
            clones["shop_feature"] = self._clone(target_shop, inside(), tags=[t for t in target_shop["tags"] if t != feature])
        if max_m:
            far = self._near(anchor["longitude"], anchor["latitude"], max_m + 600, max_m + 1500)
            clones["shop_distance"] = self._clone(target_shop, far)
        no_visits = self._clone(target_shop, inside(), flags=flags_off) if "reservable" in c else None
        if d >= 3:
            self._clone(target_shop, inside(), hours=CLOSED_HOURS)

        # -- other shops: the same kind of visit first (for the mistaken and kept records), then any
        same_kind, other = _SAME_KIND[self.category], _OTHER_CATEGORIES[self.category]
        fillers = []
        for i in range(3 + d):
            cz = same_kind[i] if i < 2 else rng.choice(other)
            czc = CATEGORIES[cz]
            s = self._shop(cz, self._near(anchor["longitude"], anchor["latitude"], 300, 5000), rng.uniform(3.8, 4.9),
                           sorted(czc.tags[:2]) + sorted(rng.sample(czc.features, rng.randint(0, 2))),
                           hours=FILLER_HOURS, fee=float(rng.choice([0, 20])))
            for pt in rng.sample(czc.products, 2):
                self._menu(s, czc, pt, (2, 4) if czc.kind == "book" else (1,), rng.randint(5, 40))
            fillers.append(s)

        # -- the user's records: a past order, and the booking/reservation made by mistake
        p0 = next(p for p in self.products if p["shop_id"] == fillers[-1]["shop_id"])
        t0 = (now - timedelta(days=rng.randint(3, 30))).strftime(TIME_FORMAT)
        orders = [{
            "order_id": f"{task_key}O01", "order_type": "instore", "user_id": user_id, "store_id": p0["shop_id"],
            "total_price": p0["price"], "create_time": t0, "update_time": t0, "status": "consumed",
            "products": [{"product_id": p0["product_id"], "name": p0["name"], "store_id": p0["shop_id"],
                          "store_name": fillers[-1]["shop_name"], "price": p0["price"], "quantity": 1, "tags": p0["tags"]}],
        }]
        records: list[dict[str, Any]] = []
        mistaken = kept = None
        if "cancel_old" in c:
            for seq, shop in ((1, fillers[0]), (2, fillers[1])):
                when = (now + timedelta(days=rng.randint(1, 5))).replace(hour=rng.choice([12, 18]), minute=0, second=0)
                rid = f"{task_key}Q{seq:02d}"
                common = {"shop_id": shop["shop_id"], "update_time": now.strftime(TIME_FORMAT), "customer_id": user_id,
                          "customer_count": 2}
                if kind == "book":
                    records.append({"book_id": rid, "book_time": when.strftime(TIME_FORMAT), "book_price": shop["book_price"],
                                    "status": "paid", **common})
                else:
                    records.append({"reservation_id": rid, "reservation_time": when.strftime(TIME_FORMAT),
                                    "status": "unconsumed", **common})
            mistaken, kept = records

        # -- hidden facts and what is said up front
        sheet = FactSheet(rng)
        fact = sheet.add
        people = "people" if party0 > 1 else "person"
        if "party_size" in c:
            fact("party_size", f"We'll be {party0} {people}.")
        when_text = f"this coming {visit:%A}" if "weekday" in c else f"on {visit:%B} {visit.day}"
        fact("visit_time", f"I'd like to go {when_text} at {visit:%H:%M}.", keywords=TOPIC_CUES["visit_time"])
        if budget is not None:
            fact("budget", f"I don't want to spend more than {budget:g} yuan on the {'package' if qty == 1 else 'vouchers'}.")
        if forbidden:
            fact("diet", RESTRICTIONS[forbidden][0], hide=True)
        if min_score:
            fact("store_pref", f"The place should be rated {min_score:g} or higher.")
        if feature:
            fact("shop_feature", FEATURE_REASON[feature], keywords=TOPIC_CUES["shop_feature"])
        if max_m:
            fact("distance", f"It should be within {max_m / 1000:g} km of my {anchor_name}.")
        if first_type:
            fact("fallback", f"If the {first_type[0]} is sold out, I'd take the {target_type[0]} instead.",
                 keywords=TOPIC_CUES["fallback"])
        facts, stated = sheet.hidden, sheet.stated

        item = (first_type or target_type)[0]
        opening = rng.choice(OPENINGS[kind][style]).format(item=item, category=self.category)
        if "party_size" not in c:
            opening += " It's for the two of us." if kind == "book" else " It's just for me."
        if mistaken:
            noun = "booking" if kind == "book" else "reservation"
            opening += (f" Also, I made a {noun} at {self._shop_by(mistaken['shop_id'])['shop_name']} by mistake, please "
                        f"cancel it, but keep the one at {self._shop_by(kept['shop_id'])['shop_name']}.")
        if stated:
            opening += " " + " ".join(stated)
        change_msg, trigger = None, "first_confirmation"
        if intent == "party":
            more = "two more friends are" if kind == "book" else "one more friend is"
            change_msg = f"Actually, {more} joining, so we'll be {party} people."
        elif intent == "time":
            change_msg, trigger = (f"Sorry, something came up. Could you move the reservation to {visit2:%H:%M} "
                                   "the same day?"), "first_done"
        user = user_script(rng, name, style, ("city", self.city), opening, facts, change_msg, trigger)

        # -- rubric
        instore = {"order_type": "instore"}
        same_product = [target] + list(variants.values())
        product_ids = [p["product_id"] for p in same_product]
        product_ids += [m[p["product_id"]] for _, m in clones.values() for p in same_product]
        if no_visits:
            product_ids += [no_visits[1][p["product_id"]] for p in same_product]
        noun = "booking" if kind == "book" else "reservation"
        items: list[RubricItem] = [
            RubricItem(name="product", kind="dish", description=f"the order is for {target['name']}",
                       params=instore | {"product_ids": product_ids}),
            RubricItem(name="order_count", kind="order_count", description="exactly one new order", params=instore | {"count": 1}),
            RubricItem(name="paid", kind="paid", description="the order is paid", params=instore),
            RubricItem(name="confirmed", kind="confirmed_before_order", description="the user confirmed before buying",
                       params={"tool": "create_instore_product_order"}),
            RubricItem(name="informed_total", kind="informed_total", description="the user was told the order's total",
                       params=instore),
            RubricItem(name="visit_count", kind="appointment_count", description=f"exactly one {noun}",
                       params={"table": table, "count": 1}),
            RubricItem(name="same_shop", kind="appointment_at_order_shop", description=f"the {noun} is at the shop of the order",
                       params={"table": table}),
            RubricItem(name="visit_time", kind="appointment_time", description=f"the {noun} is for {final_visit:%Y-%m-%d %H:%M}",
                       params={"table": table, "time": final_visit.strftime(TIME_FORMAT)}),
            RubricItem(name="party", kind="appointment_party", description=f"the {noun} is for {party}",
                       params={"table": table, "count": party}),
        ]
        if fee > 0:
            items.append(RubricItem(name="booking_paid", kind="appointment_paid", description="the booking fee is paid",
                                    params={"table": table}))
        if kind == "reservation" and "party_size" in c:
            items.append(RubricItem(name="quantity", kind="quantity", description=f"{qty} vouchers", params=instore | {"count": qty}))
        if budget is not None:
            items.append(RubricItem(name="budget", kind="budget", description=f"total at most {budget:g}",
                                    params=instore | {"max_total": budget}))
        if forbidden:
            items.append(RubricItem(name="diet", kind="diet", description=f"nothing tagged {forbidden}",
                                    params=instore | {"forbidden_tags": [forbidden]}))
        if min_score:
            items.append(RubricItem(name="shop_rating", kind="shop_rating", description=f"shop rated >= {min_score}",
                                    params=instore | {"min_score": min_score}))
        if feature:
            items.append(RubricItem(name="shop_feature", kind="shop_tag", description=f"shop has {feature}",
                                    params=instore | {"tag": feature}))
        if max_m:
            items.append(RubricItem(name="shop_distance", kind="shop_distance", description=f"shop within {max_m:g} m of the {anchor_name}",
                                    params=instore | {"max_m": max_m, "longitude": anchor["longitude"], "latitude": anchor["latitude"]}))
        if mistaken:
            key = "book_id" if kind == "book" else "reservation_id"
            items.append(RubricItem(name="cancel_mistaken", kind="record_status", description=f"the mistaken {noun} is cancelled",
                                    params={"table": table, "record_id": mistaken[key], "status": "cancelled"}))
            items.append(RubricItem(name="keep_other", kind="records_untouched", description=f"the other {noun} is kept",
                                    params={"table": table, "record_ids": [kept[key]]}))

        # -- golden route and the violations
        t_text = visit.strftime(TIME_FORMAT)
        sid = target_shop["shop_id"]
        golden = Route(sid, target["product_id"], qty, sid, t_text, party,
                       final_time=visit2.strftime(TIME_FORMAT) if visit2 else None)
        filler_visit = next(s for s in fillers if s[FLAG[kind]])
        # before a change of party the agent proposes the first party's package and count
        proposal = (wanted[party0 if kind == "book" else 1], party0 if kind == "reservation" else 1, party0)
        ctx = dict(user_id=user_id, task_key=task_key, facts=facts, kind=kind, mistaken=mistaken,
                   kept=kept, intent=intent, measure=anchor if max_m else None, search=target["name"], proposal=proposal)
        violations: dict[str, Route] = {}
        if self.with_violations:  # no draw from rng below: skipping them leaves the task as it is
            violations = {
                "product": replace(golden, product_id=wrong["product_id"]),
                "order_count": replace(golden, duplicate_order=True),
                "paid": replace(golden, pay=False),
                "confirmed": replace(golden, confirm=False, time=final_visit.strftime(TIME_FORMAT), final_time=None),
                "informed_total": replace(golden, tell_total=False),
                "visit_count": replace(golden, duplicate_visit=True),
                "visit_time": replace(golden, final_time=None) if visit2 else
                replace(golden, time=(visit + timedelta(days=1)).strftime(TIME_FORMAT)),
                "party": replace(golden, party=party0 if intent == "party" else party - 1 if party > 1 else party + 1),
            }
            if no_visits:
                violations["same_shop"] = replace(golden, order_shop=no_visits[0]["shop_id"],
                                                  product_id=no_visits[1][target["product_id"]])
            else:
                violations["same_shop"] = replace(golden, visit_shop=filler_visit["shop_id"])
            if fee > 0:
                violations["booking_paid"] = replace(golden, pay_book=False)
            if "quantity" in {i.name for i in items}:
                violations["quantity"] = replace(golden, qty=party0 if intent == "party" else qty - 1)
            if budget is not None:
                violations["budget"] = replace(golden, product_id=variants["budget"]["product_id"])
            if forbidden:
                violations["diet"] = replace(golden, product_id=variants["diet"]["product_id"])
            for key in ("shop_rating", "shop_feature", "shop_distance"):
                if key in clones:
                    st, mapping = clones[key]
                    violations[key] = replace(golden, order_shop=st["shop_id"], visit_shop=st["shop_id"],
                                              product_id=mapping[target["product_id"]])
            if mistaken:
                violations["cancel_mistaken"] = replace(golden, cancel_old=False)
                violations["keep_other"] = replace(golden, cancel_kept=True)

        world = {
            "time": now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, work],
            "weather": [{"id": f"W{i}", "city": self.city, "category": rng.choice(["sunny", "cloudy", "rainy"]),
                         "datetime": (day + timedelta(days=i)).strftime("%Y-%m-%d"),
                         "temperature": [rng.randint(5, 18), rng.randint(19, 33)], "humidity": rng.randint(30, 90)}
                        for i in range(7)],
            "orders": orders,
            "shops": self.shops,
            "shop_products": self.products,
            table: records,
            "user_profile": {"user id": user_id, "name": name, "home address": home["address"], "work address": work["address"]},
            "user_historical_behaviors": {
                "user id": user_id,
                "home address": home["address"],
                "work address": work["address"],
                "residence": self.city,
                "in-store habits": {"favourite categories": sorted({self.category, rng.choice(_CATEGORY_NAMES)}),
                                    "usual party size": 2 if kind == "book" else 1},
                "notes": [RESTRICTIONS[forbidden][1]] if forbidden else [],
            },
        }
        # the golden route, made on its first read (``Task.defer_golden``: it draws nothing from ``rng``)
        golden_actions = partial(self._actions, golden, ctx)
        trajectories = {k: self._actions(r, ctx) for k, r in violations.items()} if self.with_violations else {}
        return generated_task("instore", self.split, self.seed, self.difficulty, len(c) + 2 + int(intent is not None),
                              world, user, items, golden_actions, trajectories)

    def _shop_by(self, shop_id: str) -> dict[str, Any]:
        return self.world.places[shop_id]

    def _actions(self, r: Route, ctx: dict[str, Any]) -> list[str]:
        """The action strings that carry out route ``r`` with the scripted user."""
        uid, key, kind = ctx["user_id"], ctx["task_key"], ctx["kind"]
        out = [call("get_user_historical_behaviors")]
        hidden = {f.topic for f in ctx["facts"]}
        if hidden:
            out.append("Happy to help. " + " ".join(q for t, q in QUESTIONS.items() if t in hidden))
        out.append(call("instore_shop_search_recommend", keywords=[self.category]))
        out.append(call("instore_product_search_recommend", keywords=[ctx["search"]], top_k=20))
        if ctx["measure"] is not None:
            out.append(call("address_to_longitude_latitude", address=ctx["measure"]["address"]))
        if ctx["mistaken"] is not None:
            lookup, cancel, id_key = (("get_instore_books", "instore_cancel_book", "book_id") if kind == "book"
                                      else ("get_instore_reservations", "instore_cancel_reservation", "reservation_id"))
            out.append(call(lookup, user_id=uid))
            if r.cancel_old:
                out.append(call(cancel, **{id_key: ctx["mistaken"][id_key]}))
            if r.cancel_kept:
                out.append(call(cancel, **{id_key: ctx["kept"][id_key]}))
        product = self.world.items[r.product_id]
        shop = self._shop_by(r.order_shop)
        visit_shop = self._shop_by(r.visit_shop)
        when = datetime.strptime(r.time, TIME_FORMAT)
        verb = "book a table" if kind == "book" else "reserve"
        if r.confirm:
            offer, n, people = ctx["proposal"] if ctx["intent"] == "party" else (product, r.qty, r.party)
            out.append(f"I found {offer['name']} at {shop['shop_name']} for {offer['price']:g} yuan"
                       f"{' each' if n > 1 else ''}. Shall I buy {n} and {verb} for {people} on "
                       f"{when:%A} at {when:%H:%M}?")
            if ctx["intent"] == "party":
                out.append("Understood, I've updated that. Shall I go ahead now?")
        for i in range(2 if r.duplicate_order else 1):
            out.append(call("create_instore_product_order", user_id=uid, shop_id=r.order_shop,
                            product_id=r.product_id, quantity=r.qty))
            if r.pay:
                out.append(call("pay_instore_order", order_id=f"{key}I{i + 1:02d}"))
        visits = 2 if r.duplicate_visit else 1
        for i in range(visits):
            if kind == "book":
                out.append(call("instore_book", user_id=uid, shop_id=r.visit_shop, time=r.time, customer_count=r.party))
                if visit_shop["book_price"] > 0 and r.pay_book:
                    out.append(call("pay_instore_book", book_id=f"{key}B{i + 1:02d}"))
            else:
                out.append(call("instore_reservation", user_id=uid, shop_id=r.visit_shop, time=r.time, customer_count=r.party))
        booked = "your table is booked" if kind == "book" else "your reservation is made"
        done = (f"All set: the {'package is' if r.qty == 1 else 'vouchers are'} {'paid' if r.pay else 'ordered'} and {booked} "
                f"at {visit_shop['shop_name']} for {r.party} on {when:%A} at {when:%H:%M}.")
        if r.tell_total:
            done += f" It comes to {product['price'] * r.qty:g} yuan in total."
        if not r.confirm:
            # without a proposal a pending change of mind never comes up, so the agent ends the chat
            done += " ###STOP###"
        out.append(done)
        if ctx["intent"] == "time" and r.confirm:
            if r.final_time is not None:
                for i in range(visits):
                    rid = f"{key}R{i + 1:02d}"
                    out.append(call("search_instore_reservation", user_id=uid, reservation_id=rid))
                    out.append(call("instore_modify_reservation", reservation_id=rid, time=r.final_time))
            moved = datetime.strptime(r.final_time or r.time, TIME_FORMAT)
            out.append(f"Your reservation has been updated to {moved:%H:%M} on {moved:%A}.")
        return out


def generate_instore_task(seed: int, difficulty: int = 2, split: str = "train", violations: bool = True) -> Task:
    """The in-store task for (seed, difficulty, split); the same inputs always give the same task.
    ``violations=False`` skips the checker-validation trajectories (everything else is identical)."""
    check_split(split)
    return _Builder(int(seed), int(difficulty), split, violations).build()
