"""What the reader knows of a task's world, and what a check reads of a record.

``ItemContext`` is what ``compile_item`` reads besides the text: the task's now, its places (delivery
stores, in-store shops) and products (a value an item names must be found there), its address book,
the domain's tool names (for process items), the ids of the records that exist before the episode,
``compiled``: checks compiled elsewhere (a sidecar file), item text -> spec, which
``compile_item`` returns before reading the text; and ``evidence``: the products of the task's gold
records, of which a value's readings the catalogue holds the one they spell is preferred. ``item_context(world, tools)`` builds it from a
life-service world.

``RecordFacts`` (with its ``LineFacts``) is one order, booking or reservation as the checks read it
(``spec.spec_holds``): a final record, or a gold one.

The look-ups every kind shares: ``_places_named`` (the places a name names: exactly, or, for a
chain, by the start of their names), ``_found`` (whether a phrase is in the catalogue: a product's
name, tags or options, or a place's name, tags or category), ``_names_out`` (an item's text with the
places' names blanked out: "Blue Note Bar" speaks of no note), and the fields of an ordered line
(``_line_has``: its name, tags or chosen options have a phrase; ``_offers``: its product offers it as
an option; ``_chose``: it was chosen); and what a product is sold as, after what it is
(``_UNIT_TAIL_EN``: "... package / set meal / combo / usage voucher"; ``_content_left``: whether words
that say what it is remain once that is dropped), which ``product`` and ``quantity`` share.

``_Spec`` is the base of every compiled kind but the time window: a frozen model whose ``about``
holds the words that say which order, booking or place the item is about (for the loader).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from .text import _NUMBER_WORDS, _PHRASE_STOP, _is_zh, _knorm, phrase_in, phrase_in_any_amount


# ----- what the compiler reads of the task's world ---------------------------------------------
@dataclass(frozen=True)
class PlaceInfo:
    """A store (delivery) or shop (in-store) of the task, as an item may name or describe it."""

    place_id: str
    name: str
    tags: tuple[str, ...] = ()
    category: str = ""
    score: float = 0.0
    longitude: float | None = None
    latitude: float | None = None
    address: str = ""
    # travel places: the kind ("hotel", "attraction", "flight", "train"), a hotel's stars, a flight's
    # or train's departure and arrival clock ("HH:MM") and cities
    kind: str = ""
    stars: int = 0
    departs: str = ""
    arrives: str = ""
    cities: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class ProductInfo:
    """A product of the task's catalogue: its seller, name, tags and the options it offers."""

    product_id: str
    place_id: str
    name: str
    tags: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    price: float = 0.0


@dataclass
class ItemContext:
    """What ``compile_item`` reads besides the text: the task's now, its places and products (a
    value an item names must be found there), its address book, the domain's tool names (for
    process items), the ids of the records that exist before the episode, and ``compiled``: specs
    compiled elsewhere (item text -> a spec of ``spec.ItemSpec``, validated with ``parse_spec``;
    None leaves the item to the judge), which ``compile_item`` returns before reading the text."""

    now: datetime
    places: tuple[PlaceInfo, ...] = ()
    products: tuple[ProductInfo, ...] = ()
    addresses: tuple[tuple[str, float, float], ...] = ()
    tools: frozenset[str] = frozenset()
    record_ids: tuple[str, ...] = ()
    compiled: Mapping[str, Any] = field(default_factory=dict)
    # the products the task's gold records hold (the loader's evidence of what an item refers to): of
    # a value's readings found in the catalogue, one these spell is preferred ("car wash voucher"
    # where the gold holds "Car Wash (5 seats)": "car wash")
    evidence: tuple[ProductInfo, ...] = ()
    # the user's own places by what the profile calls them: ("home", address), ("work", address)
    landmarks: tuple[tuple[str, str], ...] = ()


    def place(self, place_id: str) -> PlaceInfo | None:
        index = self.__dict__.setdefault("_places", {p.place_id: p for p in self.places})
        return index.get(place_id)


def _options_of(row: Any) -> tuple[str, ...]:
    return tuple(str(a) for a in (getattr(row, "attributes", None) or []))


# travel places: (table, kind, key field, name field, product table, the product's type field)
TRAVEL_TABLES: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("hotels", "hotel", "hotel_id", "hotel_name", "hotel_rooms", "room_type"),
    ("attractions", "attraction", "attraction_id", "attraction_name", "attraction_tickets", "ticket_type"),
    ("flights", "flight", "flight_id", "flight_number", "flight_seats", "seat_type"),
    ("trains", "train", "train_id", "train_number", "train_seats", "seat_type"),
)


def travel_place(kind: str, name_field: str, row: Any) -> PlaceInfo:
    """A hotel, attraction, flight or train row as the reader knows it (a flight or train has no
    one point: its airports or stations are two)."""
    loc = getattr(row, "location", None)
    return PlaceInfo(
        place_id=row.key, name=str(getattr(row, name_field, "") or ""), tags=tuple(getattr(row, "tags", ()) or ()),
        category=str(getattr(row, "description", "") or ""), score=float(getattr(row, "score", 0.0) or 0.0),
        longitude=getattr(loc, "longitude", None), latitude=getattr(loc, "latitude", None),
        address=str(getattr(loc, "address", "") or ""), kind=kind, stars=int(getattr(row, "star_rating", 0) or 0),
        departs=str(getattr(row, "departure_time", "") or ""), arrives=str(getattr(row, "arrival_time", "") or ""),
        cities=(str(getattr(row, "departure_city", "") or ""), str(getattr(row, "arrival_city", "") or "")))


def item_context(world: Any, tools: Any = ()) -> ItemContext:
    """The ``ItemContext`` of a life-service world (delivery stores and products, in-store shops
    and their products, hotels, attractions, flights and trains and their dated products, the
    address book); ``tools`` are the domain's tool names. A travel product is known by its room,
    ticket or seat type (one ``ProductInfo`` per type and place, whatever its dates)."""
    places: list[PlaceInfo] = []
    products: list[ProductInfo] = []
    tables = getattr(world, "tables", {})
    for table, name_field in (("stores", "name"), ("shops", "shop_name")):
        if table not in tables:
            continue
        for row in world.table(table):
            loc = getattr(row, "location", None)
            places.append(PlaceInfo(
                place_id=row.key, name=str(getattr(row, name_field, "") or ""), tags=tuple(getattr(row, "tags", ()) or ()),
                category=str(getattr(row, "category", "") or ""), score=float(getattr(row, "score", 0.0) or 0.0),
                longitude=getattr(loc, "longitude", None), latitude=getattr(loc, "latitude", None),
                address=str(getattr(loc, "address", "") or "")))
    for table in ("products", "shop_products"):
        if table not in tables:
            continue
        for row in world.table(table):
            seller = getattr(row, "seller", None) or getattr(row, "store_id", None) or getattr(row, "shop_id", "")
            products.append(ProductInfo(
                product_id=row.product_id, place_id=str(seller), name=str(row.name), tags=tuple(row.tags or ()),
                options=_options_of(row), price=float(row.price or 0.0)))
    for table, kind, owner, name_field, product_table, type_field in TRAVEL_TABLES:
        if table not in tables:
            continue
        places += [travel_place(kind, name_field, row) for row in world.table(table)]
        seen: set[tuple[str, str]] = set()
        for row in world.table(product_table) if product_table in tables else ():
            key = (str(getattr(row, owner)), str(getattr(row, type_field)))
            if key not in seen:
                seen.add(key)
                products.append(ProductInfo(product_id=row.product_id, place_id=key[0], name=key[1],
                                            price=float(row.price or 0.0)))
    addresses = tuple((loc.address, loc.longitude, loc.latitude) for loc in world.table("locations")) \
        if "locations" in tables else ()
    ids = tuple(k for t in ("orders", "books", "reservations") if t in tables for k in world.table(t).rows)
    return ItemContext(now=world.clock.now, places=tuple(places), products=tuple(products), addresses=addresses,
                       tools=frozenset(tools), record_ids=ids, landmarks=_landmarks(getattr(world, "extra", None)))


def _landmarks(extra: Any) -> tuple[tuple[str, str], ...]:
    """The user's home and work addresses as the task's profile states them ("home address", "家庭住址",
    "work_address", "工作地址")."""
    profile = extra.get("user_profile") if isinstance(extra, Mapping) else None
    out: list[tuple[str, str]] = []
    for key, value in (profile.items() if isinstance(profile, Mapping) else ()):
        k = str(key).casefold()
        label = "home" if "home" in k or "家庭住址" in k else "work" if "work" in k or "工作地址" in k else ""
        if label and isinstance(value, str) and value.strip():
            out.append((label, value.strip()[:300]))
    return tuple(out)


# ----- the record a check reads -------------------------------------------------------------------
@dataclass(frozen=True)
class LineFacts:
    product_id: str
    name: str = ""
    tags: tuple[str, ...] = ()
    attributes: str = ""
    quantity: int = 1
    price: float = 0.0
    options: tuple[str, ...] = ()  # the options the product offers
    date: str = ""  # a travel line's night, visit or departure date (YYYY-MM-DD)


@dataclass(frozen=True)
class RecordFacts:
    """One order, booking or reservation as the checks read it (a final record, or a gold one)."""

    table: str
    record_id: str
    place_id: str
    status: str = ""
    lines: tuple[LineFacts, ...] = ()
    note: str = ""
    address: str = ""
    longitude: float | None = None
    latitude: float | None = None
    total: float | None = None
    customer_count: int | None = None


# ----- the base of the compiled kinds ------------------------------------------------------------
class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    # the words of the item that say which order, booking or place it is about (for the loader)
    about: str = ""


# ----- values found in the world: places, products, ordered lines --------------------------------
_GENERIC_GOODS = frozenset({"item", "product", "dish", "good", "food", "thing", "portion", "serving", "order", "meal",
                            "商品", "菜品", "产品", "东西", "食物", "餐品", "订单"})
_ATTR_PARTS = re.compile(r"[,，;；、/|+]")


def _attr_parts(text: str) -> list[str]:
    return [p.strip() for p in _ATTR_PARTS.split(text or "") if p.strip()]


def _line_fields(line: LineFacts) -> list[str]:
    return [line.name, *line.tags, *_attr_parts(line.attributes)]


def _place_fields(place: PlaceInfo) -> list[str]:
    return [place.name, *place.tags, place.category]


def _line_has(line: LineFacts, phrases: list[str]) -> bool:
    return fields_have(_line_fields(line), phrases)


def fields_have(fields: list[str], phrases: list[str]) -> bool:
    """Whether one of the phrases is in one of a record's fields, or spelled by them together (``across``)."""
    return any(phrase_in(p, f) for p in phrases for f in fields) or any(across(p, fields) for p in phrases)


def across(phrase: str, fields: list[str] | tuple[str, ...]) -> bool:
    """Whether an English phrase of two or three words is spelled by a record's fields together, its words
    split between the name and the tags ("cocktail set": "Specialty Set for Three" tagged "Specialty
    Cocktail"); each field keeps its own neighbours (a number binds in its field only, "no" blocks
    the word after it in its field only)."""
    if len(fields) < 2 or not 2 <= len(phrase.split()) <= 3 or _is_zh(phrase):
        return False  # a longer phrase is a name, which one field spells
    return phrase_in(phrase, _SEP.join(f for f in fields if f))


_SEP = " zzsep "  # a word no field holds: no word is next to another field's


def _chose(line: LineFacts, phrases: list[str]) -> bool:
    return any(phrase_in(p, a) for p in phrases for a in _attr_parts(line.attributes))


def _line_has_any(line: LineFacts, phrases: list[str]) -> bool:
    """``_line_has`` where a lessened phrase counts ("Less Ice" has ice): for a negated demand."""
    return any(phrase_in_any_amount(p, f) for p in phrases for f in _line_fields(line)) or any(
        across(p, _line_fields(line)) for p in phrases)


def _chose_any(line: LineFacts, phrases: list[str]) -> bool:
    """``_chose`` where a lessened phrase counts ("Less Ice" has ice): for a negated demand."""
    return any(phrase_in_any_amount(p, a) for p in phrases for a in _attr_parts(line.attributes))


def _offers(line: LineFacts, phrases: list[str]) -> bool:
    """Whether the line's product offers an option the phrases name (then it must be chosen)."""
    return any(phrase_in(p, o) for p in phrases for o in line.options)


def _names_out(text: str, ctx: ItemContext) -> str:
    """The text with the names of the task's places blanked out: a word of a name ("Blue Note Bar",
    "Star Power ...") says nothing of what kind of item the text is."""
    for p in ctx.places:
        name = _knorm(p.name)
        if len(name) >= 4 and name in text:
            text = text.replace(name, " ")
    return text


def _name_key(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).casefold()
    t = re.sub(r"^the ", "", t.strip())
    return "".join(ch for ch in t if ch.isalnum())


def _places_named(x: str, ctx: ItemContext, chain: bool) -> list[str]:
    """The places whose name is ``x`` (case, blanks, punctuation aside); with ``chain``, also those
    whose name starts with it (the branches of "Mixue Ice Cream")."""
    key = _name_key(x)
    if len(key) < 2:
        return []
    exact = [p.place_id for p in ctx.places if _name_key(p.name) == key]
    if exact or not chain or len(key) < 4:
        return exact
    chained = [p.place_id for p in ctx.places if _name_key(p.name).startswith(key)]
    word = x.strip(" '\"").casefold()
    if chained and word.isascii() and " " not in word:
        # one word that other places and goods use as a plain word is no brand: "fresh" starts "Fresh Beef Hot
        # Pot", and other places are tagged "fresh ingredients" ("should be fresh" is no chain of that name)
        held = set(chained)
        if any(phrase_in(word, f) for p in ctx.places if p.place_id not in held for f in (p.name, *p.tags)) or \
                any(phrase_in(word, f) for pr in ctx.products if pr.place_id not in held for f in (pr.name, *pr.tags)):
            return []
    return chained


def _found(phrase: str, ctx: ItemContext, scope: str, split: bool = True,
           products: tuple[ProductInfo, ...] | None = None) -> bool:
    """Whether a phrase is found in the catalogue: a product's name, tags or options
    (``scope="product"``; ``"option"``: its options only), or a place's name, tags or category
    (``"place"``); with ``split``, also a short phrase whose words a product's name and tags (a
    place's fields) spell together (``across``). ``products``: these rather than the catalogue's."""
    if not phrase.strip():
        return False
    products = ctx.products if products is None else products
    if scope == "option":
        return any(phrase_in(phrase, o) for pr in products for o in pr.options)
    if scope == "product":
        return any(phrase_in(phrase, f) for pr in products for f in (pr.name, *pr.tags, *pr.options)) \
            or split and any(across(phrase, (pr.name, *pr.tags)) for pr in products)
    return any(phrase_in(phrase, f) for pl in ctx.places for f in _place_fields(pl)) \
        or split and any(across(phrase, _place_fields(pl)) for pl in ctx.places)


# what a product is sold as, after what it is: "... package / set meal / course / voucher"
# ("usage / use / entry / admission voucher": a voucher for using the thing named before it)
_UNIT_TAIL_EN = re.compile(r"\s+(?:(?:set )?(?:meal|menu)s?|packages?|sets?|combos?|courses?|programs?|programmes?|"
                           r"class(?:es)?|(?:(?:usage|use|entry|admission|access) )?(?:vouchers?|tickets?|passes)|sessions?|"
                           r"plans?|deals?|cards?)$")


def _content_left(x: str) -> bool:
    """Whether words that say what a product is remain ("aerial yoga"), not only a size or count
    ("single", "two-person", "basic")."""
    return any(len(w) >= 3 and w not in _NUMBER_WORDS and w not in _PHRASE_STOP and not re.fullmatch(
        r"person|people|double|basic|standard|regular|individual|single|couple|family|special|new|small|large|"
        r"medium|mini|full|half|whole|\d+\w*", w) for w in re.findall(r"[a-z0-9']+", x))
