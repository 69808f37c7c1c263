"""Address items: where a delivery order is delivered.

The kind
    An item that names the delivery address. It is read whole, before the item is split into
    clauses (``compile._compile_item``), since an address holds commas and full stops.

The grammar
    English: "... address ... <modal> (be) (set to) X": the first "address", then the first modal
    after it ("should / must / needs to / has to / is / will be / shall"); X is the address, with a
    purpose cut off ("..., so that ..."). Chinese: "...(送达/配送/收货)地址(应/必须/需要)(为/是/填写为)X".
    The address of a store ("the store's address", "商家地址") is no delivery address. X must look
    like an address (a digit, or a word such as road, building, 路, 号, 小区) and name one place: "in
    ... / near ... / within ... / one of ... / X or Y / 或" leave the item to the judge. "The user's home
    address", "the user's work address", "用户的家庭住址 / 工作地址", "用户公司" (the label alone,
    ``_landmark``) is the address the task's profile states for it (``ItemContext.landmarks``; none there:
    the judge's). An entry of the book, spelled
    out as it stands there, is an address whatever its words: "Jinzheng Haiyue International"; "the home address at X", "their
    workplace at X", "X家庭住址 / X工作地点" are X (the label names which address, X spells it). X is
    the address book's entry when it is that entry's text (remarks in brackets aside), or its
    comma-separated parts in another order. The same address said by the delivery: "X should be
    delivered / sent to <address>", "X应送到 / 配送至<address>" (the same checks on the address).

Examples
    "The delivery address should be Room 1203, Harbour View Tower, 18 Seaside Road, Dalian"
    "The shipping address for the flower order must be No. 7 Lakeside Lane, Suzhou"
    "奶茶订单的配送地址应为大连市中山区海景路18号海景大厦12层"
    "收货地址应该填写为苏州市湖畔路7号"

The spec: ``AddressSpec`` (the address text, and its coordinates when the task's address book has
the address). How it is checked (``address_holds``): the record's address is the same text (case,
blanks and punctuation aside), or, with remarks in brackets dropped, one that holds the wanted
address whole when that is at least ``ADDRESS_MIN_CHARS`` letters long (``address_within``); or the
record's point lies within ``ADDRESS_TOLERANCE_M`` (100 m) of the address's coordinates (the
gold-order matching uses the same number).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from .clauses import _PURPOSE_ZH
from .text import _is_zh, _Unclear
from .world import ItemContext, RecordFacts, _Spec

ADDRESS_TOLERANCE_M = 100.0


class AddressSpec(_Spec):
    """The delivery address is ``address`` (normalised text), or within ``ADDRESS_TOLERANCE_M``
    of its coordinates when the task's address book knows it."""

    kind: Literal["address"] = "address"
    address: str
    longitude: float | None = None
    latitude: float | None = None


def norm_address(text: str) -> str:
    """An address with case, blanks and punctuation dropped."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text or "").casefold() if ch.isalnum())


_PARENS = re.compile(r"\([^()]*\)|（[^（）]*）|【[^【】]*】")
ADDRESS_MIN_CHARS = 16


def address_within(wanted: str, address: str) -> bool:
    """Whether ``address`` is the ``wanted`` one: the same text (case, blanks and punctuation
    aside), or, with remarks in brackets dropped ("(340m from Exit 5)"), the same or a more precise
    one that holds it whole ("Student Dormitory, <wanted>"), when the wanted text is at least
    ``ADDRESS_MIN_CHARS`` letters long (a city name alone holds no address)."""
    if not wanted or not address:
        return False
    if norm_address(address) == norm_address(wanted):
        return True
    w, a = norm_address(_PARENS.sub(" ", wanted)), norm_address(_PARENS.sub(" ", address))
    return bool(w) and (w == a or len(w) >= ADDRESS_MIN_CHARS and w in a)


def _haversine(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    from math import asin, cos, radians, sin, sqrt

    p1, p2 = radians(lat1), radians(lat2)
    a = sin((p2 - p1) / 2) ** 2 + cos(p1) * cos(p2) * sin(radians(lon2 - lon1) / 2) ** 2
    return 2 * 6_371_000.0 * asin(sqrt(a))


def address_holds(spec: AddressSpec, record: RecordFacts) -> bool:
    """The record's address is the wanted one, or its point lies within ``ADDRESS_TOLERANCE_M`` of it."""
    if not record.address and record.longitude is None:
        return False
    if address_within(spec.address, record.address):
        return True
    return (spec.longitude is not None and spec.latitude is not None and record.longitude is not None
            and record.latitude is not None
            and _haversine(spec.longitude, spec.latitude, record.longitude, record.latitude) <= ADDRESS_TOLERANCE_M)


# ----- the grammar ----------------------------------------------------------------------------------
_ADDRESS_WORD = re.compile(r"\baddress(?:es)?\b")
_ADDRESS_MODAL = re.compile(r"\s+(?:should|must|needs to|has to|is|will be|shall)\s+(?:be\s+)?(?:set to\s+|to\s+)?")
_ADDRESS_ZH = re.compile(r"^(?P<s>.*?(?:送达|配送|收货|送餐|外卖)?地址)(?:应该|应当|应|必须|需要|须)?(?:为|是|填写为|设置为|填为)(?P<x>.+)$")
_ADDRESSY = re.compile(r"\d|road|street|avenue|lane|district|building|floor|room|unit|park|garden|community|complex|"
                       r"plaza|mansion|tower|city|province|estate|residen|路|街|号|区|市|楼|室|栋|幢|院|小区|大厦|广场|园")


# an address said with its label ("the home address at X", "their workplace at X", "X家庭住址", "X工作地点"):
# the label names which of the user's addresses it is, X spells it out
_LABELLED_EN = re.compile(r"^(?:the |their |his |her |my |our |your |the user's )(?:own )?(?:home|work|office|company|"
                          r"school|workplace|work place|residential|residence|dormitory)(?: address)?\s+(?:at|of|:)\s+(?=\S)")
_LABELLED_ZH = re.compile(r"(?<=[\u4e00-\u9fff\d])(?:的)?(?:家庭住址|家庭地址|家庭住所|工作地点|工作地址|公司地址|单位地址|学校地址)$")


_HOME_EN = re.compile(r"(?:the )?(?:user'?s? |my |his |her |their |your )?(?:home|house|residence|home address)")
_WORK_EN = re.compile(r"(?:the )?(?:user'?s? |my |his |her |their |your )?(?:company|office|workplace|work|work address|"
                      r"workplace address|office address)")
_HOME_ZH = re.compile(r"(?:用户|我|他|她)?(?:的)?(?:家|家里|住处|住所|家庭住址|家庭地址|住址)")
_WORK_ZH = re.compile(r"(?:用户|我|他|她)?(?:的)?(?:公司|公司地址|单位|单位地址|工作地点|工作地址|办公室|办公地点)")


def _landmark(ref: str) -> str:
    """"home" or "work" where a reference place is the user's own one said by what it is ("home", "the
    company", "用户家"), else ""."""
    r = ref.strip(" .。,，").casefold()
    if (_HOME_ZH if _is_zh(r) else _HOME_EN).fullmatch(r):
        return "home"
    if (_WORK_ZH if _is_zh(r) else _WORK_EN).fullmatch(r):
        return "work"
    return ""


def _address_parts(text: str) -> frozenset[str]:
    """An address's comma-separated parts (remarks in brackets dropped, each normalised): the same
    parts in another order are the same address ("No. 398 X Road, Y Zone, Z District" and
    "No. 398 X Road, Z District, Y Zone")."""
    return frozenset(p for p in (norm_address(x) for x in re.split(r"[,，]", _PARENS.sub(" ", text))) if p)


_DELIVERED_TO_EN = re.compile(r"^(?P<s>.+?)\s+(?:should|must|needs to|has to|is to|will|shall)\s+be\s+(?:delivered|sent|"
                              r"shipped)\s+(?:directly\s+)?to\s+(?P<x>.+)$|^(?:please\s+)?(?:deliver|send|ship)\s+(?P<s2>.+?)\s+"
                              r"(?:directly\s+)?to\s+(?P<x2>.+)$")
_DELIVERED_TO_ZH = re.compile(r"^(?P<s>.+?)(?:应该|应当|应|必须|务必|需要|须|需|要)(?:被)?(?:送到|送至|送往|配送到|配送至)(?P<x>.+)$")


def _address_en(c: str) -> tuple[str, str] | None:
    """(subject, address) of "... address ... should be X" (read in one pass: the first "address",
    then the first modal after it)."""
    a = _ADDRESS_WORD.search(c)
    if a is None:
        return None
    m = _ADDRESS_MODAL.search(c, a.end())
    return None if m is None else (c[:m.start()], c[m.end():])


def _address_item(c: str, about: str, ctx: ItemContext) -> AddressSpec | None:
    if "地址" in c:
        zm = _ADDRESS_ZH.match(c)
        found = None if zm is None else (zm.group("s"), zm.group("x"))
    else:
        found = _address_en(c)
    if found is None:  # "the order should be delivered to X", "订单应送到X": the address, said by the delivery
        dm = _DELIVERED_TO_ZH.match(c) if _is_zh(c) else _DELIVERED_TO_EN.match(c)
        # "deliver the X order to Y": the command says it as "the X order should be delivered to Y" does
        found = None if dm is None else (dm.group("s") or dm.groupdict().get("s2") or "",
                                         dm.group("x") or dm.groupdict().get("x2") or "")
    if found is None:
        return None
    subject, x = found[0], found[1].strip(" .。，,")
    if re.search(r"\b(?:store|shop|restaurant|merchant)(?:'s)? address|address of the (?:store|shop|restaurant|merchant)|"
                 r"商家地址|店铺地址|门店地址", subject):
        return None
    x = _PURPOSE_ZH.sub("", x) if _is_zh(x) else re.sub(
        r",?\s+(?:to ensure|ensuring|so that|because|since|as the|for the user|which is).*$", "", x)
    x = x.strip(" .。，,")
    label = _landmark(x)
    if label:  # "the user's home address", "用户的工作地址": the profile's address of that label
        said = [a for k, a in ctx.landmarks if k == label]
        if len(said) != 1:
            raise _Unclear
        x = said[0]
    x = _LABELLED_EN.sub("", x) if not _is_zh(x) else _LABELLED_ZH.sub("", x)  # "the home address at X", "X家庭住址": X
    booked = next(((a, lon, lat) for a, lon, lat in ctx.addresses if norm_address(a) == norm_address(x)), None)
    if booked is not None and len(norm_address(x)) >= 4:  # an entry of the book is an address, whatever its words
        return AddressSpec(address=booked[0], longitude=booked[1], latitude=booked[2], about=f"{about} {subject}".strip())
    if (not x or x.startswith(("in ", "near ", "within ", "at ", "close ", "inside ", "located ", "not ", "the same",
                               "one of", "either"))
            or re.search(r"\bor\b|或者|或", x) or not _ADDRESSY.search(x)):
        raise _Unclear
    key, bare, parts = norm_address(x), norm_address(_PARENS.sub(" ", x)), _address_parts(x)
    for addr, lon, lat in ctx.addresses:
        if norm_address(addr) in (key, bare) or norm_address(_PARENS.sub(" ", addr)) == bare \
                or len(parts) > 1 and _address_parts(addr) == parts:
            return AddressSpec(address=addr, longitude=lon, latitude=lat, about=f"{about} {subject}".strip())
    if re.match(r"(?:the|their|his|her|my|our|your|user's)\b", x) or re.search(r"\baddress\b|住址|地址|所在地", x):
        raise _Unclear  # "the home address at ...": which one, the book does not say
    return AddressSpec(address=x, about=f"{about} {subject}".strip())
