"""Price items: what an order costs in all, or what each product in it costs.

The kind
    An item with an amount of money ("50 yuan", "¥50", "50元") that bounds the order's total or the
    unit price of what is ordered.

The grammar
    The item must name an amount and speak of a price ("price / cost / priced / spend / amount /
    budget", "价格 / 费用 / 金额 / 花费 / 元", or "exceed / within / under / below / around / between"
    in the predicate). Which price: the total when the subject or the predicate says so ("total",
    "总价 / 合计 / 一共 / 订单金额"), a unit price when the subject names goods ("items / set meals /
    drinks / tickets", "商品 / 套餐 / 饮品"), the total for an order ("the order", "订单"), a unit price
    for "the price of X" or a product subject; else the item is left to the judge, and so is a sum
    over several orders ("all orders", "A plus B", "所有", "和"), and so is a share per head ("per person",
    "average", "人均", "每人"); an "and" inside a product's or a place's name ("Garlic and Vermicelli Shrimp")
    joins nothing. Sums said before the priced order ("with a budget of 500 yuan, having
    spent 198 yuan on X, the dinner order price ..."): every comma piece before the last names an
    amount, so the last piece ("the ..." with no "and / plus") is the subject, and what it is about. A budget ("a budget of 150 yuan", "预算150元") caps the total; the price of
    what was ordered, by any noun ("下单的蛋糕价格", "the ordered cake's price") or a catalogue product,
    is a unit price, and so is "单价 / unit price". A Chinese amount needs no modal ("整单不超过200元":
    ``clauses._ZH_AMOUNT``). The predicate is one comparison:
        around     "around / about / approximately X (yuan) (or so)", "(约)X元左右 / 上下"
        range      "(between / from) A - / to / and B yuan", "A到B元之间"
        <=         "not exceed / no more than / at most / within / up to X", "X yuan or less",
                   "X元以内 / 以下", "不超过 / 最多 X元"
        <          "under / below / less than / cheaper than X", "低于 / 少于 X元"
        >=         "at least / no less than X", "X yuan or more", "X元以上", "不低于 / 至少 X元"
        >          "more than / over / above / exceed X", "高于 / 超过 X元"
        ==         "X yuan", "(为)X元"
    A negation flips a bound ("should not exceed X": <= X is the same as not > X; "not under X":
    >= X); a negated "around", range or exact amount is left to the judge. "(inclusive)",
    "(including X)", "(含)" make a strict bound inclusive.

Examples
    "The total price of the lunch order should be around 80 yuan"       total in [72, 88]
    "The price of the latte should not exceed 30 yuan (inclusive)"      unit <= 30
    "The set meal should cost less than 100 yuan"                       unit < 100
    "早餐订单的总价应控制在40元以内"                                        total <= 40
    "下单的蛋糕商品价格应在150到200元之间"                                  unit in [150, 200]

The spec: ``PriceSpec`` (scope, low, high, whether each bound is strict). How it is checked
(``price_holds``): ``total``: the record's total (else the sum of its lines' price times quantity)
lies in the bounds; ``unit``: every line's unit price does; a record without lines fails. The
policy: ``PRICE_AROUND_RATIO`` (10 %): "around 50 yuan" accepts 45 to 55.
"""

from __future__ import annotations

import re
from typing import Literal

import cn2an

from .clauses import _cut_purpose, _head_class
from .text import _OP_FLIP, _is_zh, _knorm, _Unclear
from .world import ItemContext, RecordFacts, _found, _Spec

PRICE_AROUND_RATIO = 0.10


class PriceSpec(_Spec):
    """The order's total (``scope="total"``) or every line's unit price (``"unit"``) lies in the
    bounds (None: open; ``*_strict``: the bound itself is excluded)."""

    kind: Literal["price"] = "price"
    scope: Literal["total", "unit"]
    low: float | None = None
    high: float | None = None
    low_strict: bool = False
    high_strict: bool = False


def _price_ok(spec: PriceSpec, x: float) -> bool:
    if spec.low is not None and not (x > spec.low + 1e-9 if spec.low_strict else x >= spec.low - 1e-9):
        return False
    return spec.high is None or (x < spec.high - 1e-9 if spec.high_strict else x <= spec.high + 1e-9)


def price_holds(spec: PriceSpec, record: RecordFacts) -> bool:
    if spec.scope == "total":
        total = record.total if record.total is not None else sum(x.price * x.quantity for x in record.lines)
        return bool(record.lines) and _price_ok(spec, total)
    return bool(record.lines) and all(_price_ok(spec, x.price) for x in record.lines)


# ----- the grammar ----------------------------------------------------------------------------------
_Y = r"(?:\s*(?:yuan|rmb|cny|元|块))"
_P = r"[¥￥]?\s*(\d+(?:\.\d+)?)"
_PINC = (r"(?:\s*[(（](?:inclusive|including[^)）]*|inclusive of[^)）]*|included|含[^)）]*|包含[^)）]*|"
         r"[¥￥]?\d+(?:\.\d+)?\s*(?:yuan|元)?\s*(?:inclusive|included|含|包含在内))[)）])?")
_PRICE_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("around", re.compile(rf"^(?:around|about|approximately|roughly|close to|circa|approx\.?)\s*{_P}{_Y}?(?: or so)?$")),
    ("around", re.compile(rf"^{_P}{_Y}\s*(?:or so|around|approximately|roughly)$")),
    ("range", re.compile(rf"^(?:between|from|in the range of|within the range of|within|in)?\s*{_P}{_Y}?\s*(?:-|–|~|to|and)\s*"
                         rf"{_P}{_Y}{_PINC}$")),
    ("<=", re.compile(rf"^(?:not exceed|no more than|not more than|at most|within|up to|less than or equal to|no pricier than|"
                      rf"not pricier than|no more expensive than|not more expensive than|no higher than|not higher than|"
                      rf"(?:a )?maximum of|not be more than|not over|not be over|capped at|kept within|kept under|limited to)"
                      rf"\s*{_P}{_Y}?{_PINC}$")),
    ("<=", re.compile(rf"^{_P}{_Y}\s*(?:or less|or below|or under|and below|at most|max(?:imum)?|or lower|or cheaper){_PINC}$")),
    ("<", re.compile(rf"^(?:under|below|less than|lower than|cheaper than|less expensive than)\s*{_P}{_Y}?(?P<inc>{_PINC})$")),
    (">=", re.compile(rf"^(?:at least|no less than|not less than|(?:a )?minimum of|no lower than)\s*{_P}{_Y}?{_PINC}$")),
    (">=", re.compile(rf"^{_P}{_Y}\s*(?:or more|or above|and above|or higher|at least){_PINC}$")),
    (">", re.compile(rf"^(?:more than|over|above|higher than|greater than|exceed|exceeding|exceeds|beyond|pricier than|"
                     rf"more expensive than)\s*{_P}{_Y}?(?P<inc>{_PINC})$")),
    ("==", re.compile(rf"^{_P}{_Y}$")),
)
_PRICE_ZH: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("around", re.compile(rf"^(?:在|为)?(?:约|大约|大概)?{_P}{_Y}?(?:左右|上下)$|^(?:约|大约|大概){_P}{_Y}$")),
    ("range", re.compile(rf"^(?:在|为)?{_P}{_Y}?(?:-|–|~|到|至){_P}{_Y}(?:之间|以内|范围内)?{_PINC}$")),
    ("<=", re.compile(rf"^(?:控制)?(?:在|为)?{_P}{_Y}(?:的)?(?:预算)?(?:及)?(?:以内|之内|以下|内){_PINC}$|^(?:不超过|不高于|最多|至多|不大于|小于等于|"
                      rf"控制在){_P}{_Y}(?:以内|之内)?{_PINC}$|^以{_P}{_Y}为(?:上限|最高限额|最高额度)$")),
    ("<", re.compile(rf"^(?:低于|少于|小于|便宜于){_P}{_Y}$")),
    (">=", re.compile(rf"^(?:在|为)?{_P}{_Y}(?:及)?以上$|^(?:不低于|不少于|至少|最少|大于等于){_P}{_Y}$")),
    (">", re.compile(rf"^(?:高于|大于|超过|超出|多于){_P}{_Y}(?:的预算)?$")),
    ("==", re.compile(rf"^(?:为|是)?{_P}{_Y}$")),
)
_UNIT_WORDS = re.compile(r"\b(?:items?|products?|sets?|set meals?|set menus?|packages?|meals?|dish(?:es)?|vouchers?|combos?|"
                         r"menus?|drinks?|beverages?|cakes?|tickets?|courses?|class(?:es)?|lessons?)\b|商品|套餐|菜品|产品|单品|饮品")
_TOTAL_WORDS = re.compile(r"\btotal\b|\b(?:whole|entire) order\b|整单|全单|总价|总金额|总计|合计|总共|一共|总费用|总额|订单金额|订单价格|订单总")
_PRICE_WORDS = re.compile(r"\b(?:prices?|costs?|priced|spend(?:ing)?|amount|expenses?|budget)\b|价格|价钱|费用|金额|花费|售价|元")


# "最多花 / 至多消费 / 至少花": a bound on what is spent, said before the amount
_ZH_AT_MOST_SPEND = re.compile(r"(?P<b>最多|至多|最高|至少|最少)(?:花|花费|消费|支付|付|用)(?:掉)?$")
# "每份X的价格": the price of each piece, a unit price
_ZH_EACH_PRICE = re.compile(r"^每(?:份|个|件|杯|盒|张|套|位)(?P<x>[^，,]{1,30}?)(?:的)?(?:价格|售价|价钱)$")
# a Chinese numeral before 元 / 块 ("一百五十元")
_ZH_NUMERAL_AMOUNT = re.compile(r"[零一二两三四五六七八九十百千万]+(?=\s*(?:元|块))")


def _zh_amounts(text: str) -> str:
    """Chinese numerals of amounts in Arabic ("不超过一百五十元": "不超过150元"; cn2an, ``smart`` mode)."""
    def arabic(m: re.Match[str]) -> str:
        try:
            return str(int(cn2an.cn2an(m.group(0), "smart")))
        except (ValueError, TypeError, KeyError, IndexError):
            return m.group(0)
    return _ZH_NUMERAL_AMOUNT.sub(arabic, text)


# a price said without its currency right after a verb of pricing ("be priced under 200", "cost at most 150")
_BARE_PRICED = re.compile(r"^(?:be )?(?:priced|cost|costs|costing)\s+(?:under|below|at most|no more than|not more than|less than|"
                          r"over|above|more than|at least|no less than|around|about|at)?\s*[¥￥]?\d+(?:\.\d+)?$")
_PER_HEAD = re.compile(r"\b(?:per (?:person|head|capita|guest)|each|apiece|average|on average)\b|人均|每人|每位|平均")
_BUDGET = re.compile(r"\bbudget\b|预算")
_BUDGET_LEAD = re.compile(r"^(?:(?:be |have |has |is |set |kept |stay |remain )*(?:within |under |inside )?(?:a |an |the |its |their )?"
                          r"(?:total |overall |maximum )?budget (?:of |is |at )?|(?:的)?(?:总)?预算(?:为|是|在)?)")
_PRICE_TAIL = re.compile(r"(?:'s)?\s*(?:price|cost)$|的?(?:价格|价钱|售价)$")


def _products_out(text: str, ctx: ItemContext) -> str:
    """The text with the names of the catalogue's products and places blanked out: the "and" of
    "Garlic and Vermicelli Shrimp" joins no two orders."""
    for name in sorted({_knorm(x.name) for x in (*ctx.products, *ctx.places)}, key=len, reverse=True):
        if len(name) >= 4 and name in text:
            text = text.replace(name, " ")
    return text


def _goods_priced(subject: str, ctx: ItemContext) -> bool:
    """"下单的蛋糕价格", "the cake's price": the price of goods the catalogue sells (or a product head)."""
    m = _PRICE_TAIL.search(subject)
    if m is None:
        return False
    rest = subject[:m.start()].strip()
    bought = re.match(r"^(?:the )?(?:ordered|purchased|bought) |^(?:下单|订购|购买|所点)的", rest) is not None
    rest = re.sub(r"^(?:the |a |an )?(?:ordered |purchased |bought |selected |chosen )?|^(?:下单|订购|购买|选择|所选|所点)的?", "",
                  rest)
    rest = re.sub(r"\s+(?:ordered|purchased|bought|selected|chosen)$", "", rest).strip()
    if not rest or re.search(r"订单|\border\b", rest) or _head_class(rest) == "place":
        return False
    # "下单的蛋糕": what was ordered is goods, whatever the noun
    return bought or _head_class(rest) == "product" or _found(rest, ctx, "product")


def _goods_named(subject: str, ctx: ItemContext) -> bool:
    """"The bibimbap", "the ordered bibimbap": a subject that is itself goods the catalogue sells (not
    an order, a place or a sum), whose price is a unit price."""
    rest = re.sub(r"^(?:the |a |an )?(?:ordered |purchased |bought |selected |chosen )?|^(?:下单|订购|购买|选择|所选|所点)的?", "",
                  subject.strip())
    if not rest or re.search(r"订单|\border\b|\bprice\b|\bcost\b|价", rest) or _head_class(rest) == "place":
        return False
    return _found(rest, ctx, "product")


# after a price per person, the total it comes to: "..., with a total price between 200 and 300 yuan", "meaning a total of"
_AND_TOTAL = re.compile(r",\s*(?:with|meaning|i\.e\.,?|that is,?|which means|so)\s+(?:a |the )?total(?: price| cost| amount)?\s+"
                        r"(?:of\s+|is\s+|should be\s+|must be\s+)?(?P<v>[^,;]*\d[^,;]*)$")


def _price_item(subject: str, neg: bool, pred: str, ctx: ItemContext) -> PriceSpec | None:
    """The price item; a subject after sums said before it ("with a budget of 500 yuan, having spent
    198 yuan, the dinner order price ...") is the last piece, which says what the item is ``about``."""
    pieces = [x.strip() for x in subject.split(",")] if not _is_zh(subject + pred) else []
    if len(pieces) > 1 and re.match(r"^the ", pieces[-1]) and not re.search(r"\b(?:and|plus|or)\b", pieces[-1]) \
            and all(re.search(r"\d\s*(?:yuan|rmb|cny)\b", x) for x in pieces[:-1]):
        spec = _price_of(pieces[-1], neg, pred, ctx)
        return spec.model_copy(update={"about": pieces[-1]}) if spec is not None else None
    return _price_of(subject, neg, pred, ctx)


def _price_of(subject: str, neg: bool, pred: str, ctx: ItemContext) -> PriceSpec | None:
    if _BARE_PRICED.match(pred.strip()):  # "be priced under 200": a price said without its currency
        pred = pred.strip() + " yuan"
    if _is_zh(subject + pred):
        subject, pred = _zh_amounts(subject), _zh_amounts(pred)
        m = _ZH_AT_MOST_SPEND.search(subject)
        if m is not None and not pred.startswith(("不", "少", "低", "高", "超", "在", "以")):
            # "订单最多花100元": the bound said before the amount, in the subject
            subject, pred = subject[:m.start()], ("不超过" if m.group("b") in ("最多", "至多", "最高") else "至少") + pred
        pm = _ZH_EACH_PRICE.match(subject)
        if pm is not None:  # "每份芋泥点心的价格": the unit price
            subject = pm.group("x") + "的单价"
    text = f"{subject} {pred}"
    if not re.search(r"\d\s*(?:yuan|rmb|cny|元|块)|[¥￥]\s*\d", text):
        return None
    if not (_PRICE_WORDS.search(text) or re.search(r"\b(?:exceed|within|under|below|around|between|over|above|beyond|cheaper|"
                                                   r"pricier|expensive)\b", pred) or re.search(r"\btotal\b", subject)
            or re.search(r"\d\s*(?:yuan|rmb|cny) or (?:less|lower|cheaper|more|higher)$", pred)):  # "be 400 yuan or less"
        raise _Unclear
    if _PER_HEAD.search(text):
        total = _AND_TOTAL.search(pred)
        if total is None:
            raise _Unclear  # per person: the share of each, not the total nor a unit price
        # "... per person, with a total price between 200 and 300 yuan": the total the item also states
        return _price_of(re.sub(r"\b(?:average )?(?:cost|price|consumption|spending) per (?:person|head)\b", "", subject)
                         + " total price", neg, "be " + total.group("v"), ctx)
    zh = _is_zh(text)
    p = _cut_purpose(pred).strip()
    # "no more than 400 yuan, including 400 yuan": the bound itself allowed, as "(inclusive)"
    p = re.sub(r",\s*(?:including|inclusive of|included)\s*(?:the )?(?:[¥￥]\s*)?\d+(?:\.\d+)?\s*(?:yuan|rmb|cny)?$|,\s*inclusive$",
               " (inclusive)", p)
    budget = bool(_BUDGET.search(subject) or _BUDGET.search(p))
    if budget:  # "a budget of 150 yuan", "预算150元": a cap on what is spent
        p = _BUDGET_LEAD.sub("", p).strip()
        # "within the 200 yuan budget", "not exceed a budget of 200 yuan": the budget's amount
        p = re.sub(r"^(?:be |stay |remain )?(?:within|under|inside) (?:the |a |an |its |their )?([¥￥]?\s*\d+(?:\.\d+)?)\s*"
                   r"(?:yuan|rmb|cny)? budget$", r"within \1 yuan", p)
        p = re.sub(r"^(exceed|go over|be over|be more than) (?:a |the |its |their )?budget of ", r"\1 ", p)
    if zh:
        p = re.sub(r"^(?:的)?(?:价格|总价格|总价|价钱|金额|费用|售价)(?:应)?", "", p)
    else:
        p = re.sub(r"^(?:be |have |has |a |an |the |total |price |cost |costs |priced |of |at (?!most|least)|kept |controlled |set |"
                   r"amount to |come to |sum to |stay |remain |fall |go (?=over|beyond|above|under|below))+", "", p)
        p = re.sub(r"(?<=\d)(\s*(?:yuan|rmb|cny))?\s+(?:in total|altogether|overall|combined)$", r"\1", p)  # the scope said above
    if re.search(r"\ball\b|\borders\b|\bplus\b|,|\band\b|所有|全部|加上|和|及", _products_out(subject, ctx)):
        raise _Unclear  # a sum over several orders
    scope: str
    if _TOTAL_WORDS.search(subject) or _TOTAL_WORDS.search(pred) or budget:
        scope = "total"
    elif re.search(r"单价|\bunit price\b", subject):
        scope = "unit"
    elif _UNIT_WORDS.search(subject):
        scope = "unit"
    elif re.search(r"\borders?\b|订单", subject):
        scope = "total"
    elif re.search(r"\b(?:price|cost) of\b", subject) or _head_class(subject) == "product" or _goods_priced(subject, ctx) \
            or _goods_named(subject, ctx):
        scope = "unit"  # "the price of the noodles", "the tea should cost ...", "下单的蛋糕价格", "the bibimbap should cost"
    else:
        raise _Unclear
    for rel, rx in (_PRICE_ZH if zh else _PRICE_EN):
        m = rx.match(p)
        if not m:
            continue
        nums = [float(g) for g in m.groups() if g is not None and re.fullmatch(r"\d+(?:\.\d+)?", g)]
        inclusive = bool(re.search(r"[(（](?:inclusive|including|included|含|包含)", p))
        if rel == "around":
            if neg:
                raise _Unclear
            v = nums[0]
            return PriceSpec(scope=scope, low=round(v * (1 - PRICE_AROUND_RATIO), 2),  # type: ignore[arg-type]
                             high=round(v * (1 + PRICE_AROUND_RATIO), 2))
        if rel == "range":
            if neg or nums[0] > nums[1]:
                raise _Unclear
            return PriceSpec(scope=scope, low=nums[0], high=nums[1])  # type: ignore[arg-type]
        if rel == "==" and budget and not neg:
            return PriceSpec(scope=scope, high=nums[0])  # type: ignore[arg-type]
        if rel == "==":
            if neg:
                raise _Unclear
            return PriceSpec(scope=scope, low=nums[0], high=nums[0])  # type: ignore[arg-type]
        if neg:
            rel = _OP_FLIP[rel]
        if rel in ("<", ">") and inclusive:
            rel += "="  # "should not exceed X (including X)": X itself is allowed
        v = nums[0]
        if rel in ("<=", "<"):
            return PriceSpec(scope=scope, high=v, high_strict=rel == "<")  # type: ignore[arg-type]
        return PriceSpec(scope=scope, low=v, low_strict=rel == ">")  # type: ignore[arg-type]
    raise _Unclear
