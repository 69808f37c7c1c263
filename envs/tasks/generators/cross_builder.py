"""The cross-scenario task builder (``_Builder``): it picks the legs and the options for the
difficulty (with its base ``TaskFeatures``), draws the trip, the evening visit and the
late-night delivery with their decoys and the rest of the world (its places from its base
``CrossPlaces``), the past orders, the facts the user states or holds back and the rubric (with its
base ``TaskText``, in ``cross_parts`` with the section records), the golden route and the violation
routes (``Route``; their prices and action strings come from its base ``RouteActions``).
``cross.generate_cross_task`` runs it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import (
    IdPool,
    Retry,
    Rubric,
    at_distance,
    draw_user,
    generated_task,
    offset,
    task_rng,
)
from servicegym.envs.tasks.generators.content_cross import SUPPER_CUISINES
from servicegym.envs.tasks.generators.content_delivery import CUISINES, DIETS
from servicegym.envs.tasks.generators.content_instore import CATEGORIES
from servicegym.envs.tasks.generators.content_travel import (
    CITIES,
    EVENTS,
    FLIGHT_CLASSES,
    ROOM_TYPES,
    TRAIN_CLASSES,
)
from servicegym.envs.tasks.generators.cross_features import (
    EVENING_CATEGORIES,
    HOTEL_NOTE_KEYS,
    MAX_DIFFICULTY,
    SEAT_DATES,
    TaskFeatures,
    _evening_types,
    reasoning_points_for,
)
from servicegym.envs.tasks.generators.cross_parts import (
    TaskText,
    _Evening,
    _Stay,
    _Supper,
    _Transport,
    _When,
    _Who,
)
from servicegym.envs.tasks.generators.cross_places import CrossPlaces
from servicegym.envs.tasks.generators.cross_route import Route, RouteActions
from servicegym.envs.tasks.generators.delivery import (
    _DIET_VARIANT as DIET_VARIANT,  # how a dish is named with what a diet forbids
)
from servicegym.envs.tasks.generators.delivery import StoreWorld
from servicegym.envs.tasks.generators.instore import ShopWorld
from servicegym.envs.tasks.generators.travel import (
    HOTEL_TAG_NAMES,
    PRODUCT_TABLES,
    DrawnTable,
    SlotIndex,
    TravelCatalogue,
    city_pairs,
    draw_hotel,
    holiday_options,
    journey,
    process_violations,
    ticket_budget,
    weather,
)
from servicegym.envs.tasks.model import Task
from servicegym.world_state.core import TIME_FORMAT

GENERATOR_VERSION = 1


class _Builder(TaskFeatures, CrossPlaces, RouteActions, TaskText):
    def __init__(self, seed: int, difficulty: int, split: str, attempt: int, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("cross", split, seed, difficulty, GENERATOR_VERSION, attempt)
        self.ids = IdPool(self.rng)
        self.addresses: set[str] = set()
        self.names: set[str] = set()
        # the dated products' tables are drawn (``DrawnTable``): their rows are made when the world is read
        self.tables: dict[str, Any] = {
            t: DrawnTable() if t in PRODUCT_TABLES else []
            for t in (
                "flights",
                "flight_seats",
                "trains",
                "train_seats",
                "hotels",
                "hotel_rooms",
                "shops",
                "shop_products",
                "stores",
                "products",
            )
        }
        self.places: dict[str, dict[str, Any]] = {}  # id -> row (services, hotels, shops, stores)
        self.items: dict[str, dict[str, Any]] = {}  # product id -> row (packages and dishes)
        # (place, type, date) -> (product id, price), indexed per place when first looked up
        self.slot: dict[tuple[str, str, str], tuple[str, float]] = SlotIndex()
        self.cat = TravelCatalogue(self.rng, self.ids, self.tables, self.places, self.slot)
        self.segments: dict[tuple[Any, ...], list[str]] = {}
        self.days: dict[int, str] = {}
        self.store_world = StoreWorld(
            self.rng,
            self.ids,
            self.tables["stores"],
            self.tables["products"],
            lambda stems: self._store_name(self.cuisine, self.city_b, stems),
            lambda: self._address(self.city_b),
            self.places,
            self.items,
        )
        self.shop_world = ShopWorld(
            self.rng,
            self.ids,
            self.tables["shops"],
            self.tables["shop_products"],
            self._name,
            lambda: self._address(self.city_b),
            self.places,
            self.items,
        )

    # ----- what to build ------------------------------------------------------------------------
    def build(self) -> Task:
        """The task, section by section. What many sections read is kept on the builder: the options
        (``opts``), the legs (``instore``, ``delivery``), ``intent``, ``mode``, ``city_b``, ``arrive``,
        ``n0`` and ``cuisine``; the rest passes from section to section as records."""
        d = max(0, min(MAX_DIFFICULTY, self.difficulty))
        legs, self.opts = self._choose()
        self.instore, self.delivery = "instore" in legs, "delivery" in legs
        self.intent = "intent" in self.opts

        # -- who, from where to where, how
        who = self._who()
        # -- when: the arrival day (maybe a holiday), the stay, the evening visit, the delivery
        when = self._when(d, who.dur)
        # -- the flight or train, and its decoys
        transport = self._transport(who, when)
        # -- the venue, and the hotels in a row: venue - hotel - (shop) - far hotel
        stay = self._venue_and_hotels()
        # -- the evening visit
        evening = self._evening_visit(when.qty, stay) if self.instore else _Evening()
        # -- the late-night delivery
        supper = self._late_delivery(stay) if self.delivery else _Supper()
        # the user's usual late-night store back home, where their order history is
        home_store, usual = self._home_store(who, supper)
        # -- past orders: the usual delivery back home; the hotel booked by mistake and the ticket home
        orders, mistaken, kept = self._past_orders(who, when.now, transport, stay, supper, home_store, usual)
        # -- what the user says up front and what it holds back
        facts, user = self._user(who, when, transport, stay, evening, supper, mistaken)

        # -- rubric: content items first (the reasoning points), then the process items
        items = Rubric()
        self._content_items(items, who, when, transport, stay, evening, supper, mistaken, kept)
        points = len(items) + int(self.intent)
        if points != reasoning_points_for(d):
            raise Retry(f"{points} reasoning points, expected {reasoning_points_for(d)}")
        self._process_items(items, when.qty, evening, mistaken)

        # -- the golden route and one violation per item
        golden = self._golden(when, transport, stay, evening, supper)
        self.ctx = dict(
            user_id=who.user_id,
            task_key=who.task_key,
            facts=facts,
            holiday=when.holiday,
            city_a=who.city_a,
            city_b=self.city_b,
            venue=stay.venue,
            max_m=stay.max_m,
            shop_m=stay.shop_m,
            tag=stay.tag,
            mistaken=mistaken,
            kept=kept,
            kind=evening.kind,
            instore=self.instore,
            delivery=self.delivery,
            intent=self.intent,
            fee=evening.fee,
            dish_type=supper.dish_type,
        )
        self._check_amounts(golden)
        violations: dict[str, list[str]] = {}
        if self.with_violations:
            routes = self._violation_routes(golden, items, when, transport, stay, evening, supper, mistaken)
            violations = {k: self._actions(r) for k, r in routes.items()}

        world = self._world(who, when.now, stay.venue, orders, supper.hint, home_store)
        task = generated_task(
            "cross", self.split, self.seed, self.difficulty, points,
            world, user, items, lambda: self._actions(golden), violations
        )
        # the dated products (most rows of a task) are drawn, their rows made on the world's first read
        return task.defer_world({name: world[name].rows for name in PRODUCT_TABLES})

    # ----- the trip -----------------------------------------------------------------------------
    def _who(self) -> _Who:
        """The user, their home and the journey's length; the means of travel (``mode``) and the
        destination (``city_b``) are kept on the builder."""
        rng = self.rng
        self.mode = mode = rng.choice(["flight", "train"])
        city_a, city_b, km = rng.choice(city_pairs(mode))
        self.city_b = city_b
        dur, base_fare = journey(mode, km)
        name, style, user_id = draw_user(rng)
        task_key = f"G{self.seed % 10**6:06d}"
        home_coords = at_distance(rng, CITIES[city_a][0], CITIES[city_a][1], rng.uniform(1500, 7000))
        home = {"address": self._address(city_a), "longitude": home_coords[0], "latitude": home_coords[1]}
        return _Who(
            name=name,
            style=style,
            user_id=user_id,
            task_key=task_key,
            city_a=city_a,
            home_coords=home_coords,
            home=home,
            km=km,
            dur=dur,
            base_fare=base_fare,
        )

    def _when(self, d: int, dur: int) -> _When:
        """The arrival day (maybe a holiday) and the nights, kept on the builder (``arrive``, ``n0``);
        the party, the times of the evening visit and of the journey, and the delivery window."""
        rng = self.rng
        holiday: tuple[str, int, bool] | None = None
        if d >= 2 and rng.random() < 0.4:
            hname, year, first, multi = rng.choice(holiday_options())
            self.arrive = datetime(first.year, first.month, first.day)
            now = self.arrive - timedelta(days=rng.randint(6, 25))
            holiday = (hname, year, multi)
        else:
            now = datetime(2025, 1, 6) + timedelta(days=rng.randrange(560))
            self.arrive = now.replace(hour=0, minute=0) + timedelta(days=rng.randint(4, 30))
        now = now.replace(hour=rng.randint(8, 20), minute=rng.randrange(0, 60, 5), second=0)
        self.n0 = rng.choice([1, 2, 2, 3])
        qty = rng.randint(2, 3) if "travellers" in self.opts else 1
        visit0 = rng.randrange(18 * 60, 19 * 60 + 31, 30)
        visit = visit0 + 60 if self.intent else visit0
        margin = rng.choice([45, 60, 90])
        t_arr = visit0 - margin - rng.randrange(15, 61, 5)
        t0 = t_arr - dur
        if t0 < 6 * 60 + 30:
            raise Retry("the journey is too long for the evening")
        window = rng.randrange(21 * 60, 21 * 60 + 46, 15)  # the delivery arrives within 30 minutes of this
        return _When(
            holiday=holiday, now=now, qty=qty, visit0=visit0, visit=visit, margin=margin, t0=t0, window=window
        )

    def _transport(self, who: _Who, when: _When) -> _Transport:
        """The flight or train there, the services that break one wish each, two more services (one of
        the other means of travel) and the way home."""
        rng, c, mode, n0 = self.rng, self.opts, self.mode, self.n0
        city_a, city_b, dur, base_fare = who.city_a, self.city_b, who.dur, who.base_fare
        t0, qty, visit, margin = when.t0, when.qty, when.visit, when.margin
        classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        other_mode = "train" if mode == "flight" else "flight"
        seat_type = rng.choice([x for x, _ in classes[1:]]) if "seat_class" in c else classes[0][0]
        cheap_class = classes[0][0]
        fares = self._fares(mode, base_fare, SEAT_DATES)
        target = self._service(mode, city_a, city_b, t0, dur, fares)
        decoys: dict[str, dict[str, Any]] = {}
        # cheaper, but lands too late to make the evening booking after the transfer
        late = rng.randrange(visit - margin + 15, visit + 21, 5)
        decoys["after_arrival"] = self._service(mode, city_a, city_b, late - dur, dur, self.cat.cheaper(fares))
        after = None
        if "depart_after" in c:
            after = int(math.floor((t0 - rng.choice([15, 30, 45])) / 15) * 15)
            decoys["depart_after"] = self._service(
                mode, city_a, city_b, after - rng.choice([30, 45, 60]), dur, self.cat.cheaper(fares)
            )
        budget = None
        if "ticket_budget" in c:
            budget = ticket_budget(rng, fares, seat_type, qty)
            decoys["ticket_budget"] = self.cat.over_budget(
                mode, city_a, city_b, t0 + 10, dur, classes, [self.day(k) for k in SEAT_DATES], budget, qty, seat_type
            )
        self._service(
            mode, city_a, city_b, rng.randrange(6 * 60, 12 * 60, 5), dur, self._fares(mode, base_fare, SEAT_DATES)
        )
        o_dur, o_fare = journey(other_mode, who.km)
        self._service(
            other_mode,
            city_a,
            city_b,
            rng.randrange(7 * 60, 13 * 60, 5),
            o_dur,
            self._fares(other_mode, o_fare, SEAT_DATES),
        )
        # the way home on the check-out day: the booking the user keeps when cancelling another
        back = self._service(
            mode, city_b, city_a, rng.randrange(13 * 60, 18 * 60, 5), dur, self._fares(mode, base_fare, (n0,))
        )
        return _Transport(
            seat_type=seat_type,
            cheap_class=cheap_class,
            target=target,
            decoys=decoys,
            after=after,
            budget=budget,
            back=back,
        )

    def _venue_and_hotels(self) -> _Stay:
        """The venue, the wanted hotel on a row from it, the hotels that break one wish each (the far
        one on the same row) and one more hotel farther off."""
        rng, c, city_b = self.rng, self.opts, self.city_b
        event, event_noun, venue_stem = rng.choice(EVENTS)
        v_lon, v_lat = at_distance(rng, CITIES[city_b][0], CITIES[city_b][1], rng.uniform(1000, 5000))
        venue = {"address": f"{city_b} {venue_stem}, {self._address(city_b)}", "longitude": v_lon, "latitude": v_lat}
        max_m = float(rng.choice([1000, 1500, 2000]))
        shop_m = float(rng.choice([800, 1000, 1200]))
        u, w = rng.uniform(150, 300), rng.uniform(300, 500)
        bearing = rng.uniform(0, 2 * math.pi)

        def along(dist: float, b: float = bearing) -> tuple[float, float]:
            return offset(v_lon, v_lat, dist * math.cos(b), dist * math.sin(b))

        h_pos, far_pos, mid = along(max_m - u), along(max_m + w), along((2 * max_m - u + w) / 2)
        star, min_score, score, tag, tags = draw_hotel(rng, "hotel_rating" in c, "hotel_tag" in c)
        types = [ROOM_TYPES[0], rng.choice(ROOM_TYPES[1:])]
        prices = self._room_prices(star, types)
        hotel = self._hotel(h_pos, star, score, tags, prices)
        hotels: dict[str, dict[str, Any]] = {"hotel_distance": self._hotel(far_pos, star, score, tags, prices)}

        def beside_hotel() -> tuple[float, float]:
            # close enough that the venue, the shop and the store stay in reach of the look-alike
            return at_distance(rng, *h_pos, rng.uniform(30, u - 30))

        if min_score is not None:
            hotels["hotel_rating"] = self._hotel(
                beside_hotel(), star, round(min_score - rng.choice([0.2, 0.3, 0.5]), 1), tags, prices
            )
        if tag is not None:
            hotels["hotel_tag"] = self._hotel(beside_hotel(), star, score, [t for t in tags if t != tag], prices)
        s2 = rng.choice([3, 4, 5])
        filler_hotel = self._hotel(
            at_distance(rng, v_lon, v_lat, rng.uniform(2500, 6000)),
            s2,
            rng.uniform(3.8, 4.8),
            sorted(rng.sample(HOTEL_TAG_NAMES, rng.randint(0, 2))),
            self._room_prices(s2, [ROOM_TYPES[0], rng.choice(ROOM_TYPES[1:])]),
        )
        return _Stay(
            event=event,
            event_noun=event_noun,
            venue=venue,
            v_lon=v_lon,
            v_lat=v_lat,
            max_m=max_m,
            shop_m=shop_m,
            u=u,
            bearing=bearing,
            along=along,
            h_pos=h_pos,
            mid=mid,
            min_score=min_score,
            tag=tag,
            prices=prices,
            hotel=hotel,
            hotels=hotels,
            filler_hotel=filler_hotel,
        )

    # ----- the evening visit and the late-night delivery ----------------------------------------
    def _evening_visit(self, qty: int, stay: _Stay) -> _Evening:
        """The evening shop between the hotels and its packages, the look-alike shops and package that
        break one wish each, and a shop of the same kind of visit selling something else."""
        rng, c = self.rng, self.opts
        shops: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        variants: dict[str, dict[str, Any]] = {}
        instore_budget = None
        category = rng.choice(EVENING_CATEGORIES)
        cat = CATEGORIES[category]
        kind = cat.kind
        t_type, o_type = rng.sample(_evening_types(category), 2)
        item_phrase = t_type[0]
        shop_min = rng.choice([4.5, 4.6, 4.7]) if "shop_rating" in c else None
        s_score = rng.uniform(shop_min, 5.0) if shop_min else rng.uniform(4.0, 4.9)
        fee = float(rng.choice([0, 20, 30])) if kind == "book" else 0.0
        shop = self._shop(
            category, at_distance(rng, *stay.mid, rng.uniform(0, 120)), s_score, sorted(cat.tags[:2]), fee
        )
        markup = float(rng.choice([0, 2, 4]))
        package = self._package(shop, f"{t_type[1]} for {qty}", (t_type[2] + markup) * qty, list(t_type[3]))
        self._package(shop, f"{t_type[1]} for {qty + 1}", (t_type[2] + markup) * (qty + 1), list(t_type[3]))
        other_package = self._package(
            shop, f"{o_type[1]} for {qty}", min((o_type[2] + markup) * qty, package["price"]), list(o_type[3])
        )
        if "instore_budget" in c:
            instore_budget = float(math.ceil(package["price"] * rng.uniform(1.1, 1.3)))
            variants["instore_budget"] = self._package(
                shop, f"Deluxe {package['name']}", math.ceil(instore_budget) + rng.randint(10, 40), package["tags"]
            )
        # the same chain by the venue, beyond it seen from the hotel: near the venue, far from the hotel
        a = stay.max_m - stay.u
        shops["shop_near_hotel"] = self._clone_shop(
            shop, stay.along(max(120.0, stay.shop_m + rng.uniform(250, 450) - a), stay.bearing + math.pi)
        )
        if shop_min is not None:
            s_lon, s_lat = shop["location"]["longitude"], shop["location"]["latitude"]
            shops["shop_rating"] = self._clone_shop(
                shop,
                at_distance(rng, s_lon, s_lat, rng.uniform(80, 200)),
                score=shop_min - rng.choice([0.2, 0.3, 0.5]),
            )
        # another shop of the same kind of visit by the hotel, selling something else
        others = [k for k in EVENING_CATEGORIES if k != category and CATEGORIES[k].kind == kind]
        sk = rng.choice(others)
        same_kind = self._shop(
            sk,
            at_distance(rng, shop["location"]["longitude"], shop["location"]["latitude"], rng.uniform(80, 200)),
            rng.uniform(3.9, 4.8),
            sorted(CATEGORIES[sk].tags[:2]),
            float(rng.choice([0, 20])),
        )
        st = rng.choice(_evening_types(sk))
        self._package(same_kind, f"{st[1]} for 2", st[2] * 2, list(st[3]))
        return _Evening(
            shop=shop,
            package=package,
            other_package=other_package,
            shops=shops,
            variants=variants,
            same_kind=same_kind,
            category=category,
            kind=kind,
            item_phrase=item_phrase,
            fee=fee,
            instore_budget=instore_budget,
            shop_min=shop_min,
        )

    def _late_delivery(self, stay: _Stay) -> _Supper:
        """The food store between the hotels (its cuisine kept on the builder), the dish and another, the
        diet, and the look-alikes that break one wish each."""
        rng, c, city_b = self.rng, self.opts, self.city_b
        stores: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        variants: dict[str, dict[str, Any]] = {}
        diet_key = forbidden = None
        store_max = None
        self.cuisine = rng.choice(SUPPER_CUISINES)
        dishes = CUISINES[self.cuisine][1]
        dish_type = rng.choice(sorted(dishes))
        base = rng.choice(dishes[dish_type])
        if "diet" in c:
            options = [k for k, v in sorted(DIETS.items()) if v[0] not in base[2]]
            if not options:
                raise Retry("no diet spares the dish")
            diet_key = rng.choice(options)
            forbidden = DIETS[diet_key][0]
        store = self._store(
            self.cuisine, city_b, at_distance(rng, *stay.mid, rng.uniform(100, 500)), rng.uniform(4.2, 4.9), []
        )
        dish = self._dish(store, base[0], base[1] + rng.choice([0, 2, 4]), list(base[2]))
        o_type = rng.choice([t for t in sorted(dishes) if t != dish_type] or [dish_type])
        o_name, o_price, o_tags = next(x for x in dishes[o_type] if x[0] != dish["name"])
        other_dish = self._dish(store, o_name, min(o_price, dish["price"]), [t for t in o_tags if t != forbidden])
        if forbidden:
            variants["diet"] = self._dish(
                store,
                DIET_VARIANT[forbidden].format(dish["name"]),
                dish["price"],
                sorted(set(dish["tags"]) | {forbidden}),
            )
        if "store_distance" in c:
            store_max = float(rng.choice([1500, 2000]))
            stores["store_distance"] = self._clone_store(
                store, city_b, at_distance(rng, *stay.h_pos, store_max + rng.uniform(600, 1200))
            )
        note_key = rng.choice(HOTEL_NOTE_KEYS) if "delivery_note" in c else None
        return _Supper(
            store=store,
            dish=dish,
            other_dish=other_dish,
            stores=stores,
            variants=variants,
            diet_key=diet_key,
            forbidden=forbidden,
            store_max=store_max,
            note_key=note_key,
            dish_type=dish_type,
        )

    # ----- the user's past ----------------------------------------------------------------------
    def _home_store(self, who: _Who, supper: _Supper) -> tuple[dict[str, Any], dict[str, Any]]:
        """The user's usual late-night store back home and their usual dish there."""
        rng, dish, forbidden = self.rng, supper.dish, supper.forbidden
        cz = self.cuisine if self.delivery else rng.choice(SUPPER_CUISINES)
        home_store = self._store(
            cz, who.city_a, at_distance(rng, *who.home_coords, rng.uniform(300, 1500)), rng.uniform(4.0, 4.8), []
        )
        u_name, u_price, u_tags = rng.choice(
            [x for v in CUISINES[cz][1].values() for x in v if not dish or x[0] != dish["name"]]
        )
        usual = self._dish(home_store, u_name, u_price, [t for t in u_tags if t != forbidden])
        return home_store, usual

    def _past_orders(
        self,
        who: _Who,
        now: datetime,
        transport: _Transport,
        stay: _Stay,
        supper: _Supper,
        home_store: dict[str, Any],
        usual: dict[str, Any],
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, Any] | None]:
        """The past orders, and (with ``cancel_old``) the hotel booked for the wrong week and the ticket
        home to keep."""
        rng, c, mode, n0 = self.rng, self.opts, self.mode, self.n0
        task_key, user_id, home = who.task_key, who.user_id, who.home
        prices, filler_hotel = stay.prices, stay.filler_hotel
        back, cheap_class = transport.back, transport.cheap_class
        orders: list[dict[str, Any]] = []

        def order(
            seq: int,
            kind_: str,
            place: dict[str, Any],
            status: str,
            lines: list[dict[str, Any]],
            when: datetime,
            **more: Any,
        ) -> dict[str, Any]:
            t = when.strftime(TIME_FORMAT)
            pid_field = {"delivery": "store_id", "hotel": "hotel_id", "flight": "flight_id", "train": "train_id"}[kind_]
            o = {
                "order_id": f"{task_key}O{seq:02d}",
                "order_type": kind_,
                "user_id": user_id,
                "store_id": place[pid_field],
                "total_price": float(round(sum(x["price"] * x["quantity"] for x in lines), 2)),
                "create_time": t,
                "update_time": t,
                "status": status,
                "products": lines,
                **more,
            }
            orders.append(o)
            return o

        hint = supper.hint
        past = now - timedelta(days=rng.randint(5, 40))
        order(
            1,
            "delivery",
            home_store,
            "delivered",
            [
                {
                    "product_id": usual["product_id"],
                    "name": usual["name"],
                    "store_id": home_store["store_id"],
                    "store_name": home_store["name"],
                    "price": usual["price"],
                    "quantity": 1,
                    "tags": usual["tags"],
                }
            ],
            past,
            note=hint,
            location=home,
            dispatch_time=past.strftime(TIME_FORMAT),
            delivery_time=past.strftime(TIME_FORMAT),
        )
        mistaken = kept = None
        if "cancel_old" in c:
            week = [self.day(7 + k) for k in range(n0)]
            price = prices[self.day(0)][ROOM_TYPES[0][0]]
            mistaken = order(
                2,
                "hotel",
                filler_hotel,
                "paid",
                [
                    {
                        "product_id": f"X{filler_hotel['hotel_id']}{k}",
                        "name": ROOM_TYPES[0][0],
                        "store_id": filler_hotel["hotel_id"],
                        "store_name": filler_hotel["hotel_name"],
                        "price": price,
                        "quantity": 1,
                        "date": day,
                    }
                    for k, day in enumerate(week)
                ],
                now - timedelta(days=rng.randint(1, 3)),
            )
            pid, p = self.slot[(back[f"{mode}_id"], cheap_class, self.day(n0))]
            number = back["flight_number" if mode == "flight" else "train_number"]
            kept = order(
                3,
                mode,
                back,
                "paid",
                [
                    {
                        "product_id": pid,
                        "name": cheap_class,
                        "store_id": back[f"{mode}_id"],
                        "store_name": number,
                        "price": p,
                        "quantity": 1,
                        "date": self.day(n0),
                    }
                ],
                now - timedelta(days=rng.randint(1, 3)),
            )
        return orders, mistaken, kept

    # ----- the golden route and the violations (what the user says, the rubric: ``TaskText``) ---
    def _golden(self, when: _When, transport: _Transport, stay: _Stay, evening: _Evening, supper: _Supper) -> Route:
        """The golden route: the wanted service, hotel, package, visit and dish."""
        shop, package, store, dish, qty = evening.shop, evening.package, supper.store, supper.dish, when.qty
        return Route(
            transport_id=transport.target[f"{self.mode}_id"],
            seat_type=transport.seat_type,
            qty=qty,
            hotel_id=stay.hotel["hotel_id"],
            stay=(0, self.n0),
            shop_id=shop["shop_id"] if shop else "",
            product_id=package["product_id"] if package else "",
            visit_shop=shop["shop_id"] if shop else "",
            visit_min=when.visit0,
            final_min=when.visit if self.intent else None,
            party=qty,
            store_id=store["store_id"] if store else "",
            dish_id=dish["product_id"] if dish else "",
            portions=qty,
            delivery_min=when.window + 10,
            note=supper.note_key or "",
        )

    def _violation_routes(
        self,
        golden: Route,
        items: Rubric,
        when: _When,
        transport: _Transport,
        stay: _Stay,
        evening: _Evening,
        supper: _Supper,
        mistaken: dict[str, Any] | None,
    ) -> dict[str, Route]:
        """One route per rubric item that breaks only that item (made only when asked for)."""
        c, mode, n0, instore, intent = self.opts, self.mode, self.n0, self.instore, self.intent
        qty, visit0, window = when.qty, when.visit0, when.window
        hotels, package, shops, variants = stay.hotels, evening.package, evening.shops, evening.variants
        v: dict[str, Route] = {
            "outbound": replace(golden, day=1, stay=(1, n0 + 1), visit_day=1, delivery_day=1),
            "check_in": replace(golden, stay=(-1, n0 - 1), delivery_day=-1),
            "nights": replace(golden, stay=(0, n0 - 1 if n0 >= 2 else n0 + 1)),
            **process_violations(golden),
        }
        for key, h in hotels.items():
            v[key] = replace(golden, hotel_id=h["hotel_id"])
        for key, svc in transport.decoys.items():
            if key != "after_arrival" or instore:  # without the visit, the late service is only one more option
                v[key] = replace(golden, transport_id=svc[f"{mode}_id"])
        if "seat_class" in c:
            v["seat_class"] = replace(golden, seat_type=transport.cheap_class)
        if "travellers" in c:
            v["travellers"] = replace(golden, qty=qty - 1)
        if instore:
            v["product"] = replace(golden, product_id=evening.other_package["product_id"])
            v["visit_time"] = replace(golden, final_min=None) if intent else replace(golden, visit_min=visit0 + 30)
            for key, (s, m) in shops.items():
                v[key] = replace(
                    golden, shop_id=s["shop_id"], visit_shop=s["shop_id"], product_id=m[package["product_id"]]
                )
            v["party"] = replace(golden, party=qty + 1)
            if evening.instore_budget is not None:
                v["instore_budget"] = replace(golden, product_id=variants["instore_budget"]["product_id"])
            v["instore_count"] = replace(golden, extra=frozenset({"instore"}))
            v["instore_paid"] = replace(golden, pay_instore=False)
            v["visit_count"] = replace(golden, extra=frozenset({"visit"}))
            v["same_shop"] = replace(golden, visit_shop=evening.same_kind["shop_id"])
            if evening.fee > 0:
                v["booking_paid"] = replace(golden, pay_book=False)
        if self.delivery:
            dish, forbidden = supper.dish, supper.forbidden
            v["dish"] = replace(golden, dish_id=supper.other_dish["product_id"])
            v["delivery_to_hotel"] = replace(golden, delivery_to=hotels["hotel_distance"]["hotel_id"])
            v["delivery_time"] = replace(golden, delivery_min=window + 60)
            if "travellers" in c:
                v["portions"] = replace(golden, portions=qty - 1)
            for key, (s, m) in supper.stores.items():
                v[key] = replace(golden, store_id=s["store_id"], dish_id=m[dish["product_id"]])
            if forbidden:
                v["diet"] = replace(golden, dish_id=supper.variants["diet"]["product_id"])
            if supper.note_key:
                v["delivery_note"] = replace(golden, note="")
            v["delivery_count"] = replace(golden, extra=frozenset({"delivery"}))
            v["delivery_paid"] = replace(golden, pay_delivery=False)
        if mistaken is not None:
            v["cancel_mistaken"] = replace(golden, cancel_old=False)
            v["keep_other_order"] = replace(golden, cancel_kept=True)
            v["informed_changes"] = replace(golden, tell_changes=False)
        missing = {i.name for i in items} ^ set(v)
        if missing:
            raise RuntimeError(f"rubric items and violation trajectories differ: {sorted(missing)}")
        return v

    # ----- the world ----------------------------------------------------------------------------
    def _world(
        self,
        who: _Who,
        now: datetime,
        venue: dict[str, Any],
        orders: list[dict[str, Any]],
        hint: str,
        home_store: dict[str, Any],
    ) -> dict[str, Any]:
        """The world the task starts in: the time, the user and their past, the weather, the past orders
        and the tables."""
        mode, city_a, user_id, home = self.mode, who.city_a, who.user_id, who.home
        return {
            "time": now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": who.task_key,
            "language": "en",
            "locations": [home, venue],
            "weather": weather(self.rng, self.city_b, [self.day(k) for k in range(2)], first_id=1),
            "orders": orders,
            **self.tables,
            "user_profile": {
                "user id": user_id,
                "name": who.name,
                "home city": city_a,
                "home address": home["address"],
            },
            "user_historical_behaviors": {
                "user id": user_id,
                "residence": city_a,
                "home address": home["address"],
                "travel habits": [f"usually travels by {mode}", "books hotels near the venue"],
                "dietary notes": [hint] if hint else [],
                "usual late-night store": home_store["name"],
            },
        }
