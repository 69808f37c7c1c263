"""The travel task builder (``_Builder``) and the task's features: it picks the features for the
difficulty (``reasoning_points_for``), draws the trip section by section (the sections' classes are
in ``travel_parts``), its decoys and the rest of the world (its places from its base ``TripPlaces``,
on a ``TravelCatalogue``), the facts the user states or holds back and the rubric (from its base
``TripText``), the golden route and the violation routes (``Route``; their prices and action
strings come from its base ``RouteActions``). ``travel.generate_travel_task`` runs it.
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
    task_rng,
)
from servicegym.envs.tasks.generators.content_travel import (
    ATTRACTIONS,
    BUILDINGS,
    CITIES,
    EVENTS,
    FLIGHT_CLASSES,
    MODE_FARE,
    ROOM_REASONS,
    ROOM_TYPES,
    TICKET_TYPES,
    TRAIN_CLASSES,
)
from servicegym.envs.tasks.generators.travel_catalogue import (
    PRODUCT_TABLES,
    DrawnTable,
    SlotIndex,
    TravelCatalogue,
    TripPlaces,
)
from servicegym.envs.tasks.generators.travel_parts import (
    MAX_DIFFICULTY,
    TripText,
    _PastOrders,
    _Plan,
    _Sights,
    _Stay,
    _Transport,
    reasoning_points_for,
)
from servicegym.envs.tasks.generators.travel_route import Route, RouteActions
from servicegym.envs.tasks.generators.travel_shared import (
    ATTRACTION_KINDS,
    CITY_NAMES,
    HOTEL_TAG_NAMES,
    TICKET_REASON_TYPES,
    _day,
    city_pairs,
    draw_hotel,
    holiday_options,
    journey,
    process_violations,
    ticket_budget,
    weather,
)
from servicegym.envs.tasks.model import Task
from servicegym.simulators.scripted_user import HiddenFact
from servicegym.world_state.core import TIME_FORMAT

GENERATOR_VERSION = 1
BASE_ITEMS = ("outbound", "check_in", "nights")
FEATURES = (
    "arrive_by",
    "depart_after",
    "seat_class",
    "ticket_budget",
    "travellers",
    "hotel_distance",
    "hotel_rating",
    "hotel_tag",
    "room_type",
    "hotel_price",
    "attraction",
    "ticket_type",
    "cancel_old",
    "intent",
)
STANDARD_ROOM = ROOM_TYPES[0][0]
STANDARD_TICKET = TICKET_TYPES[0][0]


def _cost(feature: str, chosen: set[str]) -> int:
    if feature == "travellers":
        return 1 + int("attraction" in chosen)  # the ticket count too
    if feature == "attraction":
        return 2 + int("travellers" in chosen)  # which attraction, which day (and how many tickets)
    if feature == "cancel_old":
        return 2  # cancel one booking, keep the other
    return 1


class _Builder(TripPlaces, RouteActions, TripText):
    def __init__(self, seed: int, difficulty: int, split: str, attempt: int, with_violations: bool = True) -> None:
        self.seed, self.difficulty, self.split = seed, difficulty, split
        self.with_violations = with_violations
        self.rng = task_rng("travel", split, seed, difficulty, GENERATOR_VERSION, attempt)
        self.ids = IdPool(self.rng)
        # the dated products' tables are drawn (``DrawnTable``): their rows are made when the world is read
        self.tables: dict[str, Any] = {
            t: DrawnTable() if t in PRODUCT_TABLES else []
            for t in (
                "hotels",
                "hotel_rooms",
                "attractions",
                "attraction_tickets",
                "flights",
                "flight_seats",
                "trains",
                "train_seats",
            )
        }
        # (place id, type, date) -> (product id, price), indexed per place when first looked up
        self.slot: dict[tuple[str, str, str], tuple[str, float]] = SlotIndex()
        self.places: dict[str, dict[str, Any]] = {}
        self.cat = TravelCatalogue(self.rng, self.ids, self.tables, self.places, self.slot)

    # ----- the task ---------------------------------------------------------------------------
    def _choose_features(self) -> set[str]:
        need = reasoning_points_for(self.difficulty) - len(BASE_ITEMS)
        order = self.rng.sample(FEATURES, len(FEATURES))
        chosen: set[str] = set()
        total = 0
        progress = True
        while total < need and progress:
            progress = False
            for f in order:
                if f in chosen or (f == "ticket_type" and "attraction" not in chosen):
                    continue
                c = _cost(f, chosen)
                if total + c <= need:
                    chosen.add(f)
                    total += c
                    progress = True
                    if total == need:
                        break
        if total != need:
            raise Retry("no feature set of the right size")
        return chosen

    def build(self) -> Task:
        """The task: the trip, its world and the user section by section, then the rubric and the routes."""
        self.level = max(0, min(MAX_DIFFICULTY, self.difficulty))  # the difficulty, clamped
        self.features = self._choose_features()
        self.used_stems: set[str] = set()
        km, dur, base_fare = self._draw_route()
        name, style, user_id, task_key, home = self._draw_user()
        plan = self._draw_plan()
        transport = self._draw_transport(plan, km, dur, base_fare)
        stay = self._draw_stay(plan)
        sights = self._draw_sights(plan, stay)
        past = self._draw_past_orders(plan, user_id, task_key, dur, base_fare)
        facts, user = self._facts_and_user(plan, name, style, transport, stay, sights, past)
        items, points = self._build_rubric(plan, transport, stay, sights, past)

        # -- golden route and violations
        golden = self._golden_route(plan, transport, stay, sights)
        self.ctx = self._route_context(plan, user_id, task_key, facts, stay, sights, past)
        violations: dict[str, list[str]] = {}
        if self.with_violations:
            routes = self._violation_routes(plan, golden, items, transport, stay, sights, past)
            violations = {k: self._actions(r) for k, r in routes.items()}
        self._check_amounts(golden)

        world = self._world(plan, name, user_id, task_key, home, stay.venue, past.orders)
        task = generated_task(
            "travel", self.split, self.seed, self.difficulty, points,
            world, user, items, lambda: self._actions(golden), violations
        )
        # the dated products (most rows of a task) are drawn, their rows made on the world's first read
        return task.defer_world({name: world[name].rows for name in PRODUCT_TABLES})

    def _draw_route(self) -> tuple[float, int, float]:
        """The means of travel (and its seat classes), the two cities; returns the distance, the journey's
        duration and its base fare."""
        rng = self.rng
        # -- who, from where to where, how
        self.mode = mode = rng.choice(["flight", "train"])
        self.classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        city_a, city_b, km = rng.choice(city_pairs(mode))
        self.city_a, self.city_b = city_a, city_b
        dur, base_fare = journey(mode, km)
        return km, dur, base_fare

    def _draw_user(self) -> tuple[str, str, str, str, dict[str, Any]]:
        """The user (name, style, id), the task's key and the user's home in the city of departure."""
        rng, city_a = self.rng, self.city_a
        name, style, user_id = draw_user(rng)
        task_key = f"G{self.seed % 10**6:06d}"
        home_lon, home_lat = at_distance(rng, CITIES[city_a][0], CITIES[city_a][1], rng.uniform(1500, 7000))
        home = {
            "address": f"{rng.choice(BUILDINGS)}, {self._street_address(city_a)}",
            "longitude": home_lon,
            "latitude": home_lat,
        }
        return name, style, user_id, task_key, home

    def _draw_plan(self) -> _Plan:
        """When: the task's now, the arrival day (maybe a holiday), the stay, the travellers and the
        change of plan."""
        rng, c, d = self.rng, self.features, self.level
        # -- when: the arrival day (maybe a holiday), the stay, the change of plan
        holiday = None
        if d >= 2 and rng.random() < 0.4:
            hname, year, first, multi = rng.choice(holiday_options())
            arrive = datetime(first.year, first.month, first.day)
            now = arrive - timedelta(days=rng.randint(6, 25))
            holiday = (hname, year, multi)
        else:
            now = datetime(2025, 1, 6) + timedelta(days=rng.randrange(560))
            arrive = now + timedelta(days=rng.randint(4, 30))
            arrive = arrive.replace(hour=0, minute=0)
        now = now.replace(hour=rng.randint(8, 20), minute=rng.randrange(0, 60, 5), second=0)
        intent = "intent" in c
        n0 = rng.randint(2, 4) if intent else rng.choice([1, 2, 2, 3, 3, 4])
        check_out = arrive + timedelta(days=n0)
        D, C = _day(arrive), _day(check_out)
        D1 = _day(arrive + timedelta(days=1))
        final_arrival, final_nights = (D1, n0 - 1) if intent else (D, n0)
        qty = rng.randint(2, 4) if "travellers" in c else 1
        return _Plan(
            now=now,
            arrive=arrive,
            check_out=check_out,
            n0=n0,
            qty=qty,
            intent=intent,
            holiday=holiday,
            D=D,
            C=C,
            D1=D1,
            final_arrival=final_arrival,
            final_nights=final_nights,
        )

    def _draw_transport(self, plan: _Plan, km: float, dur: int, base_fare: float) -> _Transport:
        """The service to book and its decoys (one per wish it must meet), the other departures of the
        route, the other means of travel and the way back."""
        rng, c, mode = self.rng, self.features, self.mode
        city_a, city_b = self.city_a, self.city_b
        arrive, D, D1, qty, intent = plan.arrive, plan.D, plan.D1, plan.qty, plan.intent
        other_mode = "train" if mode == "flight" else "flight"

        # -- the target service and its decoys
        seat_dates = [_day(arrive + timedelta(days=k)) for k in range(-1, 3)]
        t0 = rng.randrange(8 * 60, 14 * 60 + 1, 5)
        by = after = None
        if "arrive_by" in c:
            by = int(math.ceil((t0 + dur + rng.choice([20, 30, 45, 60])) / 15) * 15)
        if "depart_after" in c:
            after = int(math.floor((t0 - rng.choice([15, 30, 45, 60])) / 15) * 15)
        seat_type = rng.choice([x for x, _ in self.classes[1:]]) if "seat_class" in c else self.classes[0][0]
        cheap_class = self.classes[0][0]
        fares = self._fares(base_fare, seat_dates)
        diff_per_seat = 0.0
        if intent:
            diff_per_seat = float(rng.randrange(30, 260, 10) * (1 if rng.random() < 0.7 else -1))
            if fares[D][seat_type] + diff_per_seat < 50:
                diff_per_seat = abs(diff_per_seat)
            fares[D1] = {**fares[D1], seat_type: fares[D][seat_type] + diff_per_seat}
        budget = None
        if "ticket_budget" in c:
            budget = ticket_budget(rng, fares, seat_type, qty)
        target = self.cat.service(mode, city_a, city_b, t0, dur, fares, stock=20)
        decoys: dict[str, dict[str, Any]] = {}

        def scaled(src: dict[str, dict[str, float]], lo: float, hi: float) -> dict[str, dict[str, float]]:
            f = rng.uniform(lo, hi)
            return {dt: {k: float(round(v * f)) for k, v in row.items()} for dt, row in src.items()}

        if by is not None:
            decoys["arrive_by"] = self.cat.service(
                mode, city_a, city_b, by - dur + rng.choice([20, 40, 60]), dur, scaled(fares, 0.75, 0.9), stock=20
            )
        if after is not None:
            decoys["depart_after"] = self.cat.service(
                mode, city_a, city_b, after - rng.choice([30, 45, 60, 90]), dur, scaled(fares, 0.75, 0.9), stock=20
            )
        if budget is not None:
            decoys["ticket_budget"] = self.cat.over_budget(
                mode, city_a, city_b, t0 + 10, dur, self.classes, seat_dates, budget, qty, seat_type
            )
        for _ in range(rng.randint(1, 2)):  # other departures of the same route
            self.cat.service(
                mode, city_a, city_b, rng.randrange(6 * 60, 20 * 60, 5), dur, self._fares(base_fare, seat_dates)
            )
        # the other means of travel, and the way back: both wrong for this trip
        self.classes, saved = (TRAIN_CLASSES if mode == "flight" else FLIGHT_CLASSES), self.classes
        o_dur, o_fare = journey(other_mode, km)
        for _ in range(rng.randint(1, 2)):
            self.cat.service(
                other_mode, city_a, city_b, rng.randrange(7 * 60, 14 * 60, 5), o_dur, self._fares(o_fare, seat_dates)
            )
        self.classes = saved
        self.cat.service(
            mode, city_b, city_a, rng.randrange(7 * 60, 18 * 60, 5), dur, self._fares(base_fare, seat_dates)
        )
        return _Transport(
            target=target,
            decoys=decoys,
            seat_type=seat_type,
            cheap_class=cheap_class,
            by=by,
            after=after,
            budget=budget,
        )

    def _draw_stay(self, plan: _Plan) -> _Stay:
        """The event's venue, the hotel to book with the wishes it meets, its clones that each break one
        wish, a sold-out one and a few other hotels."""
        rng, c, d, city_b = self.rng, self.features, self.level, self.city_b
        arrive, n0 = plan.arrive, plan.n0

        # -- the venue and the hotels
        event, event_noun, venue_stem = rng.choice(EVENTS)
        clon, clat = CITIES[city_b][0], CITIES[city_b][1]
        v_lon, v_lat = at_distance(rng, clon, clat, rng.uniform(1000, 5000))
        venue = {
            "address": f"{city_b} {venue_stem}, {self._street_address(city_b)}",
            "longitude": v_lon,
            "latitude": v_lat,
        }
        max_m = float(rng.choice([800, 1000, 1500, 2000])) if "hotel_distance" in c else None
        near = (200.0, (max_m or 2600.0) - 250.0)
        star, min_score, score, tag, tags = draw_hotel(rng, "hotel_rating" in c, "hotel_tag" in c)
        room_dates = [_day(arrive + timedelta(days=k)) for k in range(-1, n0 + 2)]
        extra_types = rng.sample(ROOM_TYPES[1:], 2)
        room_type = rng.choice([t for t, _ in extra_types if t in ROOM_REASONS]) if "room_type" in c else STANDARD_ROOM
        types = [ROOM_TYPES[0], *extra_types]
        if room_type not in dict(types):
            types.append(next(x for x in ROOM_TYPES if x[0] == room_type))
        prices = self._room_prices(star, types, room_dates)
        max_price = None
        if "hotel_price" in c:
            top = max(p[room_type] for p in prices.values())
            max_price = float(math.ceil(top * rng.uniform(1.03, 1.15) / 10) * 10)
        full_stock = {(t, dt): 10 for t, _ in types for dt in room_dates}

        def near_venue() -> tuple[float, float]:
            return at_distance(rng, v_lon, v_lat, rng.uniform(*near))

        hotel = self._hotel(self._hotel_name(), *near_venue(), star, score, tags, prices, full_stock)
        clones: dict[str, dict[str, Any]] = {}
        if max_m is not None:
            far = at_distance(rng, v_lon, v_lat, max_m + rng.uniform(400, 1200))
            clones["hotel_distance"] = self._hotel(self._hotel_name(), *far, star, score, tags, prices, full_stock)
        if min_score is not None:
            low = round(min_score - rng.choice([0.2, 0.3, 0.5]), 1)
            clones["hotel_rating"] = self._hotel(self._hotel_name(), *near_venue(), star, low, tags, prices, full_stock)
        if tag is not None:
            clones["hotel_tag"] = self._hotel(
                self._hotel_name(), *near_venue(), star, score, [t for t in tags if t != tag], prices, full_stock
            )
        if max_price is not None:
            dear = {
                dt: {t: float(max_price + rng.randrange(30, 160, 10) + (p - row[room_type])) for t, p in row.items()}
                for dt, row in prices.items()
            }
            clones["hotel_price"] = self._hotel(self._hotel_name(), *near_venue(), star, score, tags, dear, full_stock)
        if d >= 2:  # an otherwise perfect hotel whose room is sold out on one night of the stay
            night = _day(arrive + timedelta(days=1 if n0 >= 2 else 0))
            sold = {**full_stock, (room_type, night): 0}
            self._hotel(
                self._hotel_name(),
                *at_distance(rng, v_lon, v_lat, rng.uniform(150, near[0] + 100)),
                star,
                min(5.0, round(score + 0.1, 1)),
                tags,
                prices,
                sold,
            )
        for _ in range(rng.randint(2, 3)):
            s2 = rng.choice([3, 4, 5])
            t2 = [ROOM_TYPES[0], *rng.sample(ROOM_TYPES[1:], rng.randint(1, 2))]
            self._hotel(
                self._hotel_name(),
                *at_distance(rng, v_lon, v_lat, rng.uniform(500, 6000)),
                s2,
                rng.uniform(3.8, 4.8),
                sorted(rng.sample(HOTEL_TAG_NAMES, rng.randint(0, 2))),
                self._room_prices(s2, t2, room_dates),
            )
        return _Stay(
            event=event,
            event_noun=event_noun,
            venue=venue,
            v_lon=v_lon,
            v_lat=v_lat,
            hotel=hotel,
            clones=clones,
            max_m=max_m,
            min_score=min_score,
            tag=tag,
            room_type=room_type,
            max_price=max_price,
        )

    def _draw_sights(self, plan: _Plan, stay: _Stay) -> _Sights:
        """The attraction to visit (with the feature): it, one closed on the visit day and one of another
        kind."""
        rng, c = self.rng, self.features
        arrive, check_out, v_lon, v_lat = plan.arrive, plan.check_out, stay.v_lon, stay.v_lat

        # -- the attraction
        attraction = closed_decoy = other_attraction = None
        kind = visit = None
        ticket_type = STANDARD_TICKET
        attraction_ids: list[str] = []
        if "attraction" in c:
            kind = rng.choice(ATTRACTION_KINDS)
            keyword, stems = ATTRACTIONS[kind]
            first_visit = arrive + timedelta(days=1)
            last_visit = max(first_visit, check_out - timedelta(days=1))
            visit_day = first_visit + timedelta(days=rng.randint(0, (last_visit - first_visit).days))
            visit = _day(visit_day)
            tdates = [_day(visit_day + timedelta(days=k)) for k in range(-1, 3)]
            ticket_type = rng.choice(TICKET_REASON_TYPES) if "ticket_type" in c else STANDARD_TICKET
            ttypes = [TICKET_TYPES[0], *[x for x in TICKET_TYPES[1:] if x[0] == ticket_type]]
            ttypes += rng.sample([x for x in TICKET_TYPES[1:] if x not in ttypes], 1)
            s_main, s_closed = rng.sample(stems, 2)
            attraction = self._attraction(
                s_main[0],
                s_main[1],
                *at_distance(rng, v_lon, v_lat, rng.uniform(1500, 8000)),
                rng.uniform(4.3, 4.8),
                ttypes,
                tdates,
                None,
            )
            closed_decoy = self._attraction(
                s_closed[0],
                s_closed[1],
                *at_distance(rng, v_lon, v_lat, rng.uniform(1500, 8000)),
                rng.uniform(4.8, 5.0),
                ttypes,
                tdates,
                visit_day.weekday(),
            )
            o_kind = rng.choice([k for k in ATTRACTION_KINDS if k != kind])
            o_name, o_desc = rng.choice(ATTRACTIONS[o_kind][1])
            other_attraction = self._attraction(
                o_name,
                o_desc,
                *at_distance(rng, v_lon, v_lat, rng.uniform(1000, 6000)),
                rng.uniform(4.5, 4.9),
                ttypes,
                tdates,
                None,
            )
            attraction_ids = [attraction["attraction_id"], closed_decoy["attraction_id"]]
            self.keyword = keyword
        return _Sights(
            attraction=attraction,
            other_attraction=other_attraction,
            kind=kind,
            visit=visit,
            ticket_type=ticket_type,
            attraction_ids=attraction_ids,
        )

    def _draw_past_orders(
        self, plan: _Plan, user_id: str, task_key: str, dur: int, base_fare: float
    ) -> _PastOrders:
        """The user's past orders: a finished trip and, with the feature, the mistaken booking to cancel
        next to one to keep."""
        rng, c, mode = self.rng, self.features, self.mode
        city_a, city_b = self.city_a, self.city_b
        now, check_out = plan.now, plan.check_out

        # -- past orders: a finished trip, and the mistaken booking to cancel next to one to keep
        orders: list[dict[str, Any]] = []

        def past_order(seq: int, svc: dict[str, Any], date: str, status: str, with_product: bool) -> dict[str, Any]:
            k = "flight" if "flight_id" in svc else "train"
            sid = svc["flight_id" if k == "flight" else "train_id"]
            cls = (FLIGHT_CLASSES if k == "flight" else TRAIN_CLASSES)[0][0]
            pid, price = self.slot[(sid, cls, date)] if with_product else (f"X{sid}{seq}", float(round(base_fare)))
            t = (now - timedelta(days=rng.randint(3, 40))).strftime(TIME_FORMAT)
            o = {
                "order_id": f"{task_key}O{seq:02d}",
                "order_type": k,
                "user_id": user_id,
                "store_id": sid,
                "total_price": price,
                "create_time": t,
                "update_time": t,
                "status": status,
                "products": [
                    {
                        "product_id": pid,
                        "name": cls,
                        "store_id": sid,
                        "store_name": svc["flight_number" if k == "flight" else "train_number"],
                        "price": price,
                        "quantity": 1,
                        "date": date,
                    }
                ],
            }
            orders.append(o)
            return o

        past_day = _day(now - timedelta(days=rng.randint(20, 90)))
        past_order(
            1,
            self.cat.service(
                mode,
                city_a,
                rng.choice([x for x in CITY_NAMES if x not in (city_a, city_b)]),
                rng.randrange(7 * 60, 18 * 60, 5),
                dur,
                {},
            ),
            past_day,
            "paid",
            False,
        )
        mistaken = kept = None
        old_kind = None
        if "cancel_old" in c:
            old_kind = rng.choice(["flight", "train"])
            self.classes, saved = (FLIGHT_CLASSES if old_kind == "flight" else TRAIN_CLASSES), self.classes
            elsewhere = [x for x in CITY_NAMES if x not in (city_a, city_b)]
            c2, c3 = rng.sample(elsewhere, 2)
            d2 = _day(check_out + timedelta(days=rng.randint(3, 9)))
            d3 = _day(check_out + timedelta(days=rng.randint(10, 20)))
            fare = MODE_FARE[old_kind]
            s2 = self.cat.service(
                old_kind,
                city_a,
                c2,
                rng.randrange(7 * 60, 18 * 60, 5),
                150,
                self._fares(max(fare[1], 600 * fare[0]), [d2]),
            )
            s3 = self.cat.service(
                old_kind,
                city_a,
                c3,
                rng.randrange(7 * 60, 18 * 60, 5),
                150,
                self._fares(max(fare[1], 600 * fare[0]), [d3]),
            )
            self.classes = saved
            mistaken = past_order(2, s2, d2, "paid", True)
            kept = past_order(3, s3, d3, "paid", True)
            self.old = {"c2": c2, "c3": c3, "kind": old_kind}
        return _PastOrders(orders=orders, mistaken=mistaken, kept=kept, old_kind=old_kind)


    def _golden_route(self, plan: _Plan, transport: _Transport, stay: _Stay, sights: _Sights) -> Route:
        """The golden route: the target service, the hotel and the attraction, moved a day later on a
        change of plan."""
        D, C, D1, intent = plan.D, plan.C, plan.D1, plan.intent
        attraction = sights.attraction
        return Route(
            transport_id=transport.target[f"{self.mode}_id"],
            seat_type=transport.seat_type,
            date0=D,
            qty=plan.qty,
            move_to=D1 if intent else None,
            hotel_id=stay.hotel["hotel_id"],
            room_type=stay.room_type,
            stay0=(D, C),
            stay1=(D1, C) if intent else None,
            attraction_id=attraction["attraction_id"] if attraction else None,
            ticket_type=sights.ticket_type,
            visit_date=sights.visit or "",
            ticket_qty=plan.qty,
        )

    def _route_context(
        self,
        plan: _Plan,
        user_id: str,
        task_key: str,
        facts: list[HiddenFact],
        stay: _Stay,
        sights: _Sights,
        past: _PastOrders,
    ) -> dict[str, Any]:
        """What the routes' actions read (``ctx``, for ``RouteActions``)."""
        return dict(
            user_id=user_id,
            task_key=task_key,
            facts=facts,
            holiday=plan.holiday,
            city_a=self.city_a,
            city_b=self.city_b,
            venue=stay.venue,
            max_m=stay.max_m,
            tag=stay.tag,
            intent=plan.intent,
            mistaken=past.mistaken,
            kept=past.kept,
            old_kind=past.old_kind,
            kind=sights.kind,
        )

    def _violation_routes(
        self,
        plan: _Plan,
        golden: Route,
        items: Rubric,
        transport: _Transport,
        stay: _Stay,
        sights: _Sights,
        past: _PastOrders,
    ) -> dict[str, Route]:
        """One route per rubric item that breaks only that item (made only when asked for)."""
        c, mode = self.features, self.mode
        D, C, D1, n0, qty, intent = plan.D, plan.C, plan.D1, plan.n0, plan.qty, plan.intent
        decoys, attraction, visit = transport.decoys, sights.attraction, sights.visit

        def shift(day: str, k: int) -> str:
            return _day(datetime.fromisoformat(day) + timedelta(days=k))

        v: dict[str, Route] = {
            "outbound": replace(golden, move_to=None) if intent else replace(golden, date0=shift(D, 1)),
            "check_in": replace(golden, stay1=(shift(D1, 1), shift(C, 1)))
            if intent
            else replace(golden, stay0=(shift(D, 1), shift(C, 1))),
            **process_violations(golden),
        }
        if intent:
            v["nights"] = replace(golden, stay1=(D1, shift(C, -1) if plan.final_nights >= 2 else shift(C, 1)))
        else:
            v["nights"] = replace(golden, stay0=(D, shift(C, -1) if n0 >= 2 else shift(C, 1)))
        for key in ("arrive_by", "depart_after", "ticket_budget"):
            if key in decoys:
                v[key] = replace(golden, transport_id=decoys[key][f"{mode}_id"])
        if "seat_class" in c:
            v["seat_class"] = replace(golden, seat_type=transport.cheap_class)
        if "travellers" in c:
            v["travellers"] = replace(golden, qty=qty - 1)
        for key, h in stay.clones.items():
            v[key] = replace(golden, hotel_id=h["hotel_id"])
        if "room_type" in c:
            v["room_type"] = replace(golden, room_type=STANDARD_ROOM)
        if attraction is not None:
            v["attraction"] = replace(golden, attraction_id=sights.other_attraction["attraction_id"])
            v["ticket_date"] = replace(golden, visit_date=shift(visit, 1))
            v["ticket_count"] = replace(golden, extra=frozenset({"attraction"}))
            v["ticket_paid"] = replace(golden, pay_tickets=False)
            if "ticket_type" in c:
                v["ticket_type"] = replace(golden, ticket_type=STANDARD_TICKET)
            if "travellers" in c:
                v["ticket_quantity"] = replace(golden, ticket_qty=qty - 1)
        if past.mistaken is not None:
            v["cancel_mistaken"] = replace(golden, cancel_old=False)
            v["keep_other_order"] = replace(golden, cancel_kept=True)
        if "informed_changes" in {i.name for i in items}:
            v["informed_changes"] = replace(golden, tell_changes=False)
        missing = {i.name for i in items} - set(v)
        if missing:
            raise RuntimeError(f"rubric items without a violation trajectory: {sorted(missing)}")
        return v

    def _world(
        self,
        plan: _Plan,
        name: str,
        user_id: str,
        task_key: str,
        home: dict[str, Any],
        venue: dict[str, Any],
        orders: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """The task's world: its time, places, weather, orders and tables, the user's profile and habits."""
        rng, city_a, mode = self.rng, self.city_a, self.mode
        arrive, n0 = plan.arrive, plan.n0
        return {
            "time": plan.now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, venue],
            "weather": weather(rng, self.city_b, [_day(arrive + timedelta(days=i - 1)) for i in range(n0 + 2)]),
            "orders": orders,
            **self.tables,
            "user_profile": {"user id": user_id, "name": name, "home city": city_a, "home address": home["address"]},
            "user_historical_behaviors": {
                "user id": user_id,
                "residence": city_a,
                "home address": home["address"],
                "travel habits": [
                    f"usually travels by {mode}",
                    rng.choice(["books hotels near the venue", "prefers quiet rooms", "travels light"]),
                ],
            },
        }
