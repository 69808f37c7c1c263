"""The travel task builder (``_Builder``) and the task's features: it picks the features for the
difficulty (``reasoning_points_for``), draws the trip, its decoys and the rest of the world (its
places from its base ``TripPlaces``, on a ``TravelCatalogue``), the facts the user states or holds
back, the rubric, the golden route and the violation routes (``Route``; their prices and action
strings come from its base ``RouteActions``). ``travel.generate_travel_task`` runs it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import (
    FactSheet,
    IdPool,
    Retry,
    Rubric,
    article,
    at_distance,
    draw_user,
    fmt_amount,
    generated_task,
    hhmm,
    task_rng,
    user_script,
)
from servicegym.envs.tasks.generators.content_travel import (
    ATTRACTIONS,
    BUILDINGS,
    CITIES,
    EVENTS,
    FLIGHT_CLASSES,
    MODE_FARE,
    MODE_WISH,
    OPENINGS,
    ROOM_REASONS,
    ROOM_TYPES,
    TICKET_REASONS,
    TICKET_TYPES,
    TRAIN_CLASSES,
    WEEKDAYS,
)
from servicegym.envs.tasks.generators.travel_catalogue import (
    PRODUCT_TABLES,
    DrawnTable,
    SlotIndex,
    TravelCatalogue,
    TripPlaces,
)
from servicegym.envs.tasks.generators.travel_route import Route, RouteActions
from servicegym.envs.tasks.generators.travel_shared import (
    ATTRACTION_KINDS,
    CITY_NAMES,
    HOTEL_TAG_NAMES,
    TICKET_REASON_TYPES,
    TravelItems,
    _day,
    _spoken_day,
    city_pairs,
    draw_hotel,
    holiday_options,
    journey,
    process_violations,
    state_hotel_wishes,
    state_ticket_wishes,
    state_travel_date,
    ticket_budget,
    weather,
)
from servicegym.envs.tasks.model import Task
from servicegym.world_state.core import TIME_FORMAT

GENERATOR_VERSION = 1
MAX_DIFFICULTY = 6
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
CREATE_TOOLS = ["create_flight_order", "create_train_order", "create_hotel_order", "create_attraction_order"]
CHANGE_TOOLS = [
    "modify_flight_order",
    "modify_train_order",
    "cancel_flight_order",
    "cancel_train_order",
    "cancel_hotel_order",
    "cancel_attraction_order",
]
STANDARD_ROOM = ROOM_TYPES[0][0]
STANDARD_TICKET = TICKET_TYPES[0][0]

KEYWORDS = {
    "travel_date": ["which day", "what day", "travel date", "date of travel", "travelling", "traveling"],
    "departure": ["earliest", "leave", "depart"],
    "seat": ["seat", "class", "cabin"],
    "ticket_budget": ["budget", "fare", "ticket price"],
    "stay": ["how long", "night", "check out", "check-out", "checkout"],
    "hotel_rating": ["rating", "rated", "stars", "score"],
    "hotel_tag": ["amenit", "facilit", "must have", "hotel need", "requirement"],
    "room_type": ["room type", "kind of room", "which room", "bed"],
    "hotel_price": ["per night", "nightly", "room rate", "hotel cost", "hotel price", "a night"],
    "visit_date": ["visit", "which day"],
    "ticket_type": ["ticket type", "kind of ticket", "admission", "which ticket"],
}


def reasoning_points_for(difficulty: int) -> int:
    return 4 + 2 * max(0, min(MAX_DIFFICULTY, difficulty))


def _cost(feature: str, chosen: set[str]) -> int:
    if feature == "travellers":
        return 1 + int("attraction" in chosen)  # the ticket count too
    if feature == "attraction":
        return 2 + int("travellers" in chosen)  # which attraction, which day (and how many tickets)
    if feature == "cancel_old":
        return 2  # cancel one booking, keep the other
    return 1


class _Builder(TripPlaces, RouteActions):
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
        rng = self.rng
        d = max(0, min(MAX_DIFFICULTY, self.difficulty))
        c = self._choose_features()
        self.used_stems: set[str] = set()

        # -- who, from where to where, how
        self.mode = mode = rng.choice(["flight", "train"])
        self.classes = FLIGHT_CLASSES if mode == "flight" else TRAIN_CLASSES
        other_mode = "train" if mode == "flight" else "flight"
        city_a, city_b, km = rng.choice(city_pairs(mode))
        self.city_b = city_b
        dur, base_fare = journey(mode, km)

        name, style, user_id = draw_user(rng)
        task_key = f"G{self.seed % 10**6:06d}"
        home_lon, home_lat = at_distance(rng, CITIES[city_a][0], CITIES[city_a][1], rng.uniform(1500, 7000))
        home = {
            "address": f"{rng.choice(BUILDINGS)}, {self._street_address(city_a)}",
            "longitude": home_lon,
            "latitude": home_lat,
        }

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
        self.cat.service(mode, city_b, city_a, rng.randrange(7 * 60, 18 * 60, 5), dur, self._fares(base_fare, seat_dates))

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

        # -- facts: stated up front or held back
        sheet = FactSheet(rng)
        fact = sheet.add
        state_travel_date(fact, holiday, arrive, KEYWORDS["travel_date"])
        if "travellers" in c:
            fact("party_size", f"There will be {qty} of us travelling, so we need {qty} of everything except the room.")
        if by is not None:
            fact("deadline", f"I need to arrive by {hhmm(by)}.")
        state_ticket_wishes(fact, KEYWORDS, mode, after, seat_type if "seat_class" in c else None, budget)
        if d >= 2 and rng.random() < 0.5:
            fact("stay", f"I'll check out on {WEEKDAYS[check_out.weekday()]}.", KEYWORDS["stay"])
        else:
            fact("stay", f"I'll stay {n0} night{'s' if n0 > 1 else ''}.", KEYWORDS["stay"])
        if max_m is not None:
            fact("distance", f"The hotel should be within {fmt_amount(max_m)} metres of the venue.")
        state_hotel_wishes(fact, KEYWORDS, min_score, tag)
        if "room_type" in c:
            fact("room_type", ROOM_REASONS[room_type], KEYWORDS["room_type"])
        if max_price is not None:
            fact(
                "hotel_price",
                f"The hotel shouldn't cost more than {fmt_amount(max_price)} yuan a night.",
                KEYWORDS["hotel_price"],
            )
        if visit is not None:
            fact(
                "visit_date",
                f"I'd like to visit the {kind} on {_spoken_day(datetime.fromisoformat(visit))}.",
                KEYWORDS["visit_date"],
            )
        if "ticket_type" in c:
            fact("ticket_type", TICKET_REASONS[ticket_type], KEYWORDS["ticket_type"])
        facts, stated = sheet.hidden, sheet.stated

        opening = rng.choice(OPENINGS[style]).format(city=city_b, event=event)
        opening += f" {MODE_WISH[mode]} The {event_noun} is at the {venue['address']}."
        if kind is not None:
            opening += f" While I'm there I'd also like to visit {article(kind)} {kind}."
        if mistaken is not None:
            opening += (
                f" And I booked a {old_kind} to {self.old['c2']} by mistake, please cancel it, but keep my "
                f"{old_kind} to {self.old['c3']}."
            )
        if stated:
            opening += " " + " ".join(stated)
        change_msg = None
        if intent:
            change_msg = (
                f"Oh, one more thing, my plans changed: could you move my {mode} to one day later, and push the "
                "hotel check-in back by a day as well? I'll keep the same check-out day."
            )
        user = user_script(rng, name, style, ("home city", city_a), opening, facts, change_msg, "first_done")

        # -- rubric
        items = Rubric()
        item = items.add

        trip_items = TravelItems(items, mode)
        trip_items.outbound(city_a, city_b, final_arrival)
        item("check_in", "check_in_date", f"hotel check-in on {final_arrival}", date=final_arrival)
        item("nights", "nights", f"{final_nights} night(s) at the hotel", count=final_nights)
        if by is not None:
            item("arrive_by", "arrive_by", f"arrives by {hhmm(by)}", order_type=mode, by=hhmm(by))
        trip_items.depart_after(after)
        trip_items.seat_class(seat_type if "seat_class" in c else None)
        trip_items.ticket_budget(budget)
        trip_items.travellers(qty if "travellers" in c else None)
        if max_m is not None:
            trip_items.hotel_distance(max_m, v_lon, v_lat)
        trip_items.hotel_wishes(min_score, tag)
        if "room_type" in c:
            item("room_type", "product_type", f"room type {room_type}", order_type="hotel", value=room_type)
        if max_price is not None:
            item(
                "hotel_price",
                "unit_price",
                f"at most {fmt_amount(max_price)} a night",
                order_type="hotel",
                max_price=max_price,
            )
        if attraction is not None:
            item("attraction", "attraction_visit", f"tickets for a {kind}", attraction_ids=attraction_ids)
            item("ticket_date", "travel_date", f"tickets for {visit}", order_type="attraction", date=visit)
            if "ticket_type" in c:
                item(
                    "ticket_type", "product_type", f"{ticket_type} tickets", order_type="attraction", value=ticket_type
                )
            if "travellers" in c:
                item("ticket_quantity", "quantity", f"{qty} tickets", order_type="attraction", count=qty)
        if mistaken is not None:
            item(
                "cancel_mistaken",
                "order_status",
                "the mistaken booking is cancelled",
                order_id=mistaken["order_id"],
                status="cancelled",
            )
            item("keep_other_order", "untouched", "the other booking is kept", order_ids=[kept["order_id"]])
        content_items = len(items)
        item("transport_count", "order_count", f"exactly one {mode} order", order_type=mode, count=1)
        item("hotel_count", "order_count", "exactly one hotel order", order_type="hotel", count=1)
        if attraction is not None:
            item("ticket_count", "order_count", "exactly one ticket order", order_type="attraction", count=1)
        item("transport_paid", "paid", f"the {mode} order is paid", order_type=mode)
        item("hotel_paid", "paid", "the hotel order is paid", order_type="hotel")
        if attraction is not None:
            item("ticket_paid", "paid", "the ticket order is paid", order_type="attraction")
        item(
            "confirmed", "confirmed_before_booking", "the user confirmed before anything was booked", tools=CREATE_TOOLS
        )
        types_booked = [mode, "hotel"] + (["attraction"] if attraction is not None else [])
        item("informed_totals", "informed_totals", "the user was told each booking's total", order_types=types_booked)
        if intent or mistaken is not None:
            item(
                "informed_changes",
                "informed_changes",
                "the user was told every price difference and refund",
                tools=CHANGE_TOOLS,
            )
        points = content_items + int(intent)
        if points != reasoning_points_for(d):
            raise Retry(f"{points} reasoning points, expected {reasoning_points_for(d)}")

        # -- golden route and violations
        def shift(day: str, k: int) -> str:
            return _day(datetime.fromisoformat(day) + timedelta(days=k))

        golden = Route(
            transport_id=target[f"{mode}_id"],
            seat_type=seat_type,
            date0=D,
            qty=qty,
            move_to=D1 if intent else None,
            hotel_id=hotel["hotel_id"],
            room_type=room_type,
            stay0=(D, C),
            stay1=(D1, C) if intent else None,
            attraction_id=attraction["attraction_id"] if attraction else None,
            ticket_type=ticket_type,
            visit_date=visit or "",
            ticket_qty=qty,
        )
        def violation_routes() -> dict[str, Route]:
            """One route per rubric item that breaks only that item (made only when asked for)."""
            v: dict[str, Route] = {
                "outbound": replace(golden, move_to=None) if intent else replace(golden, date0=shift(D, 1)),
                "check_in": replace(golden, stay1=(shift(D1, 1), shift(C, 1)))
                if intent
                else replace(golden, stay0=(shift(D, 1), shift(C, 1))),
                **process_violations(golden),
            }
            if intent:
                v["nights"] = replace(golden, stay1=(D1, shift(C, -1) if final_nights >= 2 else shift(C, 1)))
            else:
                v["nights"] = replace(golden, stay0=(D, shift(C, -1) if n0 >= 2 else shift(C, 1)))
            for key in ("arrive_by", "depart_after", "ticket_budget"):
                if key in decoys:
                    v[key] = replace(golden, transport_id=decoys[key][f"{mode}_id"])
            if "seat_class" in c:
                v["seat_class"] = replace(golden, seat_type=cheap_class)
            if "travellers" in c:
                v["travellers"] = replace(golden, qty=qty - 1)
            for key, h in clones.items():
                v[key] = replace(golden, hotel_id=h["hotel_id"])
            if "room_type" in c:
                v["room_type"] = replace(golden, room_type=STANDARD_ROOM)
            if attraction is not None:
                v["attraction"] = replace(golden, attraction_id=other_attraction["attraction_id"])
                v["ticket_date"] = replace(golden, visit_date=shift(visit, 1))
                v["ticket_count"] = replace(golden, extra=frozenset({"attraction"}))
                v["ticket_paid"] = replace(golden, pay_tickets=False)
                if "ticket_type" in c:
                    v["ticket_type"] = replace(golden, ticket_type=STANDARD_TICKET)
                if "travellers" in c:
                    v["ticket_quantity"] = replace(golden, ticket_qty=qty - 1)
            if mistaken is not None:
                v["cancel_mistaken"] = replace(golden, cancel_old=False)
                v["keep_other_order"] = replace(golden, cancel_kept=True)
            if "informed_changes" in {i.name for i in items}:
                v["informed_changes"] = replace(golden, tell_changes=False)
            missing = {i.name for i in items} - set(v)
            if missing:
                raise RuntimeError(f"rubric items without a violation trajectory: {sorted(missing)}")
            return v

        self.ctx = dict(
            user_id=user_id,
            task_key=task_key,
            facts=facts,
            holiday=holiday,
            city_a=city_a,
            city_b=city_b,
            venue=venue,
            max_m=max_m,
            tag=tag,
            intent=intent,
            mistaken=mistaken,
            kept=kept,
            old_kind=old_kind,
            kind=kind,
        )
        violations = {k: self._actions(r) for k, r in violation_routes().items()} if self.with_violations else {}
        self._check_amounts(golden)

        world = {
            "time": now.strftime(TIME_FORMAT),
            "user_id": user_id,
            "task_key": task_key,
            "language": "en",
            "locations": [home, venue],
            "weather": weather(rng, city_b, [_day(arrive + timedelta(days=i - 1)) for i in range(n0 + 2)]),
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
        task = generated_task(
            "travel", self.split, self.seed, self.difficulty, points,
            world, user, items, lambda: self._actions(golden), violations
        )
        # the dated products (most rows of a task) are drawn, their rows made on the world's first read
        return task.defer_world({name: world[name].rows for name in PRODUCT_TABLES})
