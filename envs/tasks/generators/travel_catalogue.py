"""The travel world's catalogue (``TravelCatalogue``): the flights, trains and hotels of one task,
drawn from its ``rng`` and ``ids``, with their dated seat and room products. The products are drawn
as a ``ProductBlock`` per place into a ``DrawnTable`` (rows made when the world is read) and indexed
per place on first lookup (``SlotIndex``); the catalogue's hot loops draw their ids and stock with
``getrandbits`` directly (``_new_id`` is ``IdPool.new`` so inlined). The travel generator and the
cross-scenario generator both build their travel world with it; ``TripPlaces``, a base of the
travel generator's ``_Builder``, draws that task's places on it (hotels in the destination city,
attractions with their tickets).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import Any

from servicegym.envs.tasks.generators.common import IdPool, at_distance, hhmm
from servicegym.envs.tasks.generators.content_travel import (
    AIRLINES,
    CITIES,
    FLIGHT_TAGS,
    HOTEL_STEMS,
    NIGHTLY_BASE,
    STREETS,
    TRAIN_PREFIXES,
    TRAIN_TAGS,
    WEEKDAYS,
)
from servicegym.envs.tasks.generators.travel_shared import _weekday

# the draws of the catalogue's hot loops, inlined: ``random.Random.randrange(n)`` is
# ``_randbelow(n)``: ``getrandbits(n.bit_length())`` until below ``n`` (CPython 3.10-3.13), so
# these give the very values, from the very stream, that ``randrange``/``randint`` and
# ``IdPool.new`` give (the pinned digests in tests/test_generator_speed_travel.py hold them to it)
_ID_BOUND = {d: (10**d, (10**d).bit_length()) for d in (6, 7)}
_ID7, _ID7_BITS = _ID_BOUND[7]  # the catalogue loops' product ids (7 digits), their draw inlined


def _new_id(ids: IdPool, prefix: str, digits: int) -> str:
    """``ids.new(prefix, digits)``: the same id from the same draws, without ``randrange``'s checks."""
    n, k = _ID_BOUND[digits]
    getbits = ids.rng.getrandbits
    r = getbits(k)
    while r >= n:
        r = getbits(k)
    value = prefix + str(r).zfill(digits)  # f"{prefix}{r:0{digits}d}", at half the cost
    if value in ids.used:  # a repeat (about once in 10**5 tasks): draw on as IdPool does
        return ids.new(prefix, digits)
    ids.used.add(value)
    return value


class ProductBlock:
    """The dated products one catalogue call drew for one place (``TravelCatalogue.hotel`` or
    ``service`` with a ``SlotIndex``): the draws only (each product's id number and, unless the
    stock is one number, its quantity), its rows made when read (``rows``). ``prices`` is the
    call's ``prices[date][type]`` (as the catalogue read it: no generator changes a price table
    after a place is drawn from it), walked in the order the products were drawn."""

    __slots__ = ("prefix", "owner_field", "owner", "type_field", "prices", "numbers", "quantities", "stock")

    def __init__(self, prefix: str, owner_field: str, owner: str, type_field: str, prices: dict[str, dict[str, float]],
                 numbers: list[int], quantities: list[int] | None, stock: int | None) -> None:
        self.prefix, self.owner_field, self.owner, self.type_field = prefix, owner_field, owner, type_field
        self.prices, self.numbers, self.quantities, self.stock = prices, numbers, quantities, stock

    def rows(self) -> list[dict[str, Any]]:
        """The product rows, as the catalogue's eager loop writes them (fields in the entity's order)."""
        prefix, owner_field, owner, type_field = self.prefix, self.owner_field, self.owner, self.type_field
        numbers, quantities, qty = self.numbers, self.quantities, self.stock
        out: list[dict[str, Any]] = []
        append = out.append
        i = 0
        for day, by_type in self.prices.items():
            for kind, price in by_type.items():
                if quantities is not None:
                    qty = quantities[i]
                append({"product_id": prefix + str(numbers[i]).zfill(7), owner_field: owner, type_field: kind,
                        "date": day, "price": float(price), "quantity": qty})
                i += 1
        return out

    def slots(self) -> Iterator[tuple[tuple[str, str, str], tuple[str, float]]]:
        """``((owner, type, date), (product id, price))`` of each product, in order."""
        prefix, owner, numbers = self.prefix, self.owner, self.numbers
        i = 0
        for day, by_type in self.prices.items():
            for kind, price in by_type.items():
                yield (owner, kind, day), (prefix + str(numbers[i]).zfill(7), float(price))
                i += 1


# the tables of the dated products a catalogue draws as ``ProductBlock``s when its slot is a ``SlotIndex``
PRODUCT_TABLES = ("hotel_rooms", "flight_seats", "train_seats")


class DrawnTable:
    """A product table a catalogue draws as ``ProductBlock``s (``append``): its rows, in the order
    drawn, are ``rows()`` (a fresh list of fresh dicts each call), or iterated."""

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: list[ProductBlock] = []

    def append(self, block: ProductBlock) -> None:
        self.blocks.append(block)

    def rows(self) -> list[dict[str, Any]]:
        return [row for block in self.blocks for row in block.rows()]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows())


class SlotIndex(dict[tuple[str, str, str], tuple[str, float]]):
    """``slot[(place id, type, date)] = (product id, price)`` of a catalogue's products, made per
    place on its first lookup: a catalogue notes each place's products (``note``, a
    ``ProductBlock``) instead of indexing each of its two hundred rows as it draws them, and a task
    looks up the products of a few places only (its golden route's, its past orders'). The golden
    route's are looked up while the task is generated (its amounts are checked), so a route made
    later reads what was indexed then."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict[str, ProductBlock] = {}

    def note(self, place: str, block: ProductBlock) -> None:
        """The products of ``place`` are ``block``'s."""
        self.spans[place] = block

    def __missing__(self, key: tuple[str, str, str]) -> tuple[str, float]:
        block = self.spans.pop(key[0], None)
        if block is None:
            raise KeyError(key)
        self.update(block.slots())
        return self[key]


class TravelCatalogue:
    """The flights, trains and hotels of one task's world, drawn from the task's ``rng`` and ``ids``.

    Rows go into ``tables`` (``flights``, ``flight_seats``, ``trains``, ``train_seats``, ``hotels``,
    ``hotel_rooms``), every service and hotel into ``places`` by id, and every seat or room product
    into ``slot[(place id, seat or room type, date)] = (product id, price)`` (a ``SlotIndex``
    makes those entries when they are first looked up; its products are then drawn as a
    ``ProductBlock`` each place, into a ``DrawnTable``, their rows made when the world is read).
    The travel generator and the cross-scenario generator both build their travel world with it."""

    def __init__(
        self,
        rng: random.Random,
        ids: IdPool,
        tables: dict[str, Any],
        places: dict[str, dict[str, Any]],
        slot: dict[tuple[str, str, str], tuple[str, float]],
    ) -> None:
        self.rng, self.ids, self.tables, self.places, self.slot = rng, ids, tables, places, slot
        self.hubs: dict[tuple[str, str], dict[str, Any]] = {}

    def hub(self, city: str, mode: str) -> dict[str, Any]:
        """The city's airport or railway station (one per task and mode)."""
        if (city, mode) not in self.hubs:
            lon, lat, _, airport, station = CITIES[city]
            far = self.rng.uniform(18_000, 32_000) if mode == "flight" else self.rng.uniform(3_000, 9_000)
            x, y = at_distance(self.rng, lon, lat, far)
            name = airport if mode == "flight" else station
            self.hubs[(city, mode)] = {"address": f"{name}, {city}", "longitude": x, "latitude": y}
        return self.hubs[(city, mode)]

    def fares(self, classes: tuple[tuple[str, float], ...], base: float, dates: list[str]) -> dict[str, dict[str, float]]:
        """``fares[date][class]``: ``base`` times the class's multiplier, one level per service, jittered per date."""
        factor = self.rng.uniform(0.85, 1.25)
        out = {}
        for day in dates:
            f = factor * self.rng.uniform(0.92, 1.12)
            out[day] = {cls: float(round(base * m * f)) for cls, m in classes}
        return out

    def cheaper(self, fares: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        """The same fares 10-25% cheaper: a decoy must tempt."""
        f = self.rng.uniform(0.75, 0.9)
        return {day: {cls: float(round(p * f)) for cls, p in row.items()} for day, row in fares.items()}

    def service(
        self,
        mode: str,
        a: str,
        b: str,
        dep: int,
        dur: int,
        prices: dict[str, dict[str, float]],
        stock: int | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """A flight or train from ``a`` to ``b`` leaving at ``dep`` minutes; ``prices[date][class]``;
        ``stock`` seats per product (None: drawn)."""
        rng = self.rng
        if mode == "flight":
            sid = self.ids.new("F", 6)
            airline = rng.choice(AIRLINES)
            row = {
                "flight_id": sid,
                "flight_number": f"{airline[1]}{rng.randint(1000, 9899)}",
                "departure_city": a,
                "arrival_city": b,
                "departure_airport_location": self.hub(a, mode),
                "arrival_airport_location": self.hub(b, mode),
            }
            pool, seats, owner, pid_prefix = FLIGHT_TAGS, "flight_seats", "flight_id", "FS"
        else:
            sid = self.ids.new("T", 6)
            row = {
                "train_id": sid,
                "train_number": f"{rng.choice(TRAIN_PREFIXES)}{rng.randint(10, 2999)}",
                "departure_city": a,
                "arrival_city": b,
                "departure_station_location": self.hub(a, mode),
                "arrival_station_location": self.hub(b, mode),
            }
            pool, seats, owner, pid_prefix = TRAIN_TAGS, "train_seats", "train_id", "TS"
        row["departure_time"] = hhmm(dep)
        row["arrival_time"] = hhmm((dep + dur) % (24 * 60))
        row["tags"] = tags if tags is not None else sorted(rng.sample(pool, rng.randint(1, 2)))
        self.tables["flights" if mode == "flight" else "trains"].append(row)
        self.places[sid] = row
        ids, slot, append, getbits = self.ids, self.slot, self.tables[seats].append, rng.getrandbits
        if type(slot) is SlotIndex:  # the draws only: the rows are made when read (``ProductBlock``)
            numbers = self._numbers(pid_prefix, prices, 5 if stock is None else 0)
            block = ProductBlock(pid_prefix, owner, sid, "seat_type", prices, numbers[0], numbers[1], stock)
            append(block)
            slot.note(sid, block)
            return row
        used, use = ids.used, ids.used.add
        qty = stock
        for day, by_class in prices.items():
            for cls, price in by_class.items():
                r = getbits(_ID7_BITS)  # _new_id(ids, pid_prefix, 7), inlined
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                pid = pid_prefix + str(r).zfill(7)
                if pid in used:
                    pid = ids.new(pid_prefix, 7)
                else:
                    use(pid)
                price = float(price)
                if stock is None:  # rng.randint(9, 30)
                    qty = getbits(5)
                    while qty >= 22:
                        qty = getbits(5)
                    qty += 9
                append({"product_id": pid, owner: sid, "seat_type": cls, "date": day, "price": price, "quantity": qty})
                slot[(sid, cls, day)] = (pid, price)
        return row

    def _numbers(
        self, prefix: str, prices: dict[str, dict[str, float]], qty_bits: int,
        per_night: dict[tuple[str, str], int] | None = None,
    ) -> tuple[list[int], list[int] | None]:
        """The draws of the eager loops of ``service`` and ``hotel``, in their order, for a
        ``ProductBlock``: per product its id number (``IdPool.new(prefix, 7)``'s draw, a repeat of
        the task's ids of ``prefix`` drawn on as it does; ``IdPool.drawn`` keeps those ids as
        numbers) and, with ``qty_bits``, its quantity (5 bits: ``rng.randint(9, 30)``; 4 bits:
        ``rng.randint(3, 10)``, or ``per_night``'s number of the (type, date) where it names one)."""
        getbits = self.rng.getrandbits
        drawn = self.ids.drawn.setdefault(prefix, set())
        use = drawn.add
        numbers: list[int] = []
        quantities: list[int] | None = [] if qty_bits else None
        add, add_qty = numbers.append, (quantities.append if quantities is not None else None)
        night = per_night or {}
        for day, by_type in prices.items():
            for kind in by_type:
                r = getbits(_ID7_BITS)
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                while r in drawn:  # a repeat (about once in 10**5 tasks): draw on as IdPool.new does
                    r = getbits(_ID7_BITS)
                    while r >= _ID7:
                        r = getbits(_ID7_BITS)
                use(r)
                add(r)
                if qty_bits == 5:  # rng.randint(9, 30)
                    q = getbits(5)
                    while q >= 22:
                        q = getbits(5)
                    add_qty(q + 9)  # type: ignore[misc]
                elif qty_bits == 4:  # rng.randint(3, 10), drawn even where ``per_night`` names the number
                    q = getbits(4)
                    while q >= 8:
                        q = getbits(4)
                    add_qty(night.get((kind, day), q + 3))  # type: ignore[misc]
        return numbers, quantities

    def over_budget(
        self,
        mode: str,
        a: str,
        b: str,
        dep: int,
        dur: int,
        classes: tuple[tuple[str, float], ...],
        dates: list[str],
        budget: float,
        qty: int,
        seat_type: str,
    ) -> dict[str, Any]:
        """The budget decoy: a comfortable service whose ``qty`` seats of ``seat_type`` cost more than ``budget``."""
        dear = math.ceil(budget / qty) + self.rng.randint(4, 16) * 10
        mult = dict(classes)
        prices = {dt: {k: float(round(dear * mult[k] / mult[seat_type])) for k in mult} for dt in dates}
        tags = ["Direct", "Meal included"] if mode == "flight" else ["High-speed", "Dining car"]
        return self.service(mode, a, b, dep, dur, prices, stock=20, tags=tags)

    def room_prices(self, star: int, types: list[tuple[str, float]], dates: list[str]) -> dict[str, dict[str, float]]:
        """``prices[date][room type]`` of a hotel of ``star`` stars; Friday and Saturday nights dearer."""
        lo, hi = NIGHTLY_BASE[star]
        base = self.rng.uniform(lo, hi)
        out = {}
        for day in dates:
            weekend = _weekday(day) in (4, 5)  # Friday and Saturday nights
            f = base * (1.15 if weekend else 1.0) * self.rng.uniform(0.96, 1.04)
            out[day] = {t: float(round(f * m / 10) * 10) for t, m in types}
        return out

    def hotel_stem(self, used: set[str]) -> str:
        """A hotel name stem not in ``used`` (which it joins): look-alike hotels differ by name."""
        stem = self.rng.choice([s for s in HOTEL_STEMS if s not in used])
        used.add(stem)
        return stem

    def hotel(
        self,
        city: str,
        stem: str | Callable[[], str],
        coords: tuple[float, float],
        star: int,
        score: float,
        tags: list[str],
        prices: dict[str, dict[str, float]],
        address: Callable[[str, str], str],
        stock: int | dict[tuple[str, str], int] | None = None,
    ) -> dict[str, Any]:
        """A hotel in a random district of ``city`` named after ``stem`` (or what it returns, once
        the id is drawn), with rooms at ``prices[date][room type]``; ``address(city, district)``
        writes its street address; ``stock`` rooms per product: a number, a number per (room type,
        date) or None (drawn)."""
        hid = self.ids.new("H", 6)
        if callable(stem):
            stem = stem()
        district = self.rng.choice(CITIES[city][2])
        row = {
            "hotel_id": hid,
            "hotel_name": f"{stem} ({district})",
            "score": round(score, 1),
            "star_rating": star,
            "location": {"address": address(city, district), "longitude": coords[0], "latitude": coords[1]},
            "tags": list(tags),
        }
        self.tables["hotels"].append(row)
        self.places[hid] = row
        ids, slot, append, getbits = self.ids, self.slot, self.tables["hotel_rooms"].append, self.rng.getrandbits
        fixed = isinstance(stock, int)
        per_night = stock or {}
        if type(slot) is SlotIndex:  # the draws only: the rows are made when read (``ProductBlock``)
            numbers = self._numbers("HR", prices, 0 if fixed else 4, per_night)  # type: ignore[arg-type]
            block = ProductBlock("HR", "hotel_id", hid, "room_type", prices, numbers[0], numbers[1],
                                 stock if fixed else None)  # type: ignore[arg-type]
            append(block)
            slot.note(hid, block)
            return row
        used, use = ids.used, ids.used.add
        qty = stock
        for day, by_type in prices.items():
            for rtype, price in by_type.items():
                r = getbits(_ID7_BITS)  # _new_id(ids, "HR", 7), inlined
                while r >= _ID7:
                    r = getbits(_ID7_BITS)
                pid = "HR" + str(r).zfill(7)
                if pid in used:
                    pid = ids.new("HR", 7)
                else:
                    use(pid)
                if not fixed:
                    # rng.randint(3, 10), drawn even where ``stock`` names the number (as ever)
                    drawn = getbits(4)
                    while drawn >= 8:
                        drawn = getbits(4)
                    qty = per_night.get((rtype, day), drawn + 3)
                price = float(price)
                append({"product_id": pid, "hotel_id": hid, "room_type": rtype, "date": day, "price": price,
                        "quantity": qty})
                slot[(hid, rtype, day)] = (pid, price)
        return row


class TripPlaces:
    """The places of a travel task as its builder (``_Builder``, a subclass) draws them on its
    catalogue (``cat``): ids, street addresses, the fares of its means of travel (``classes``),
    hotels in the destination city (``city_b``) under names not used yet (``used_stems``), and
    attractions there with their dated tickets."""

    rng: random.Random
    ids: IdPool
    tables: dict[str, Any]
    slot: dict[tuple[str, str, str], tuple[str, float]]
    places: dict[str, dict[str, Any]]
    cat: TravelCatalogue
    classes: tuple[tuple[str, float], ...]
    city_b: str
    used_stems: set[str]

    # ----- ids and places ---------------------------------------------------------------------
    def _id(self, prefix: str, digits: int) -> str:
        return self.ids.new(prefix, digits)

    def _street_address(self, city: str, district: str | None = None) -> str:
        rng = self.rng
        district = district or rng.choice(CITIES[city][2])
        return f"No. {rng.randint(1, 499)} {rng.choice(STREETS)} Road, {district} District, {city}"

    def _fares(self, base: float, dates: list[str]) -> dict[str, dict[str, float]]:
        return self.cat.fares(self.classes, base, dates)

    # ----- hotels -----------------------------------------------------------------------------
    def _hotel(
        self,
        stem: str,
        lon: float,
        lat: float,
        star: int,
        score: float,
        tags: list[str],
        prices: dict[str, dict[str, float]],
        stock: dict[tuple[str, str], int] | None = None,
    ) -> dict[str, Any]:
        return self.cat.hotel(self.city_b, stem, (lon, lat), star, score, tags, prices, self._street_address, stock)

    def _room_prices(self, star: int, types: list[tuple[str, float]], dates: list[str]) -> dict[str, dict[str, float]]:
        return self.cat.room_prices(star, types, dates)

    def _hotel_name(self) -> str:
        return self.cat.hotel_stem(self.used_stems)

    # ----- attractions ------------------------------------------------------------------------
    def _attraction(
        self,
        name: str,
        description: str,
        lon: float,
        lat: float,
        score: float,
        types: list[tuple[str, float]],
        dates: list[str],
        closed: int | None,
    ) -> dict[str, Any]:
        aid = self._id("S", 6)
        hours = "09:00-17:30" if closed is None else f"09:00-17:00, closed on {WEEKDAYS[closed]}s"
        base = float(self.rng.randrange(40, 181, 5))
        row = {
            "attraction_id": aid,
            "attraction_name": f"{self.city_b} {name}",
            "location": {"address": self._street_address(self.city_b), "longitude": lon, "latitude": lat},
            "description": description,
            "score": round(score, 1),
            "opening_hours": hours,
            "ticket_price": base,
        }
        self.tables["attractions"].append(row)
        self.places[aid] = row
        for day in dates:
            if closed is not None and _weekday(day) == closed:
                continue  # no tickets on a closed day
            for ttype, m in types:
                pid = _new_id(self.ids, "K", 7)
                price = float(round(base * m))
                self.tables["attraction_tickets"].append(
                    {
                        "product_id": pid,
                        "attraction_id": aid,
                        "ticket_type": ttype,
                        "date": day,
                        "price": price,
                        "quantity": 60,
                    }
                )
                self.slot[(aid, ttype, day)] = (pid, price)
        return row
