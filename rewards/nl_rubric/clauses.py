"""Sentence shapes every kind shares: clauses, conclusions, conditions, modals, purposes, heads.

The time reader (``time.py``)
    ``_clauses`` keeps only the text after the last conclusion marker ("therefore", "so the",
    "所以", "因此"), splits it at sentence ends and at commas not followed by a digit ("June 21,
    2025" stays whole), joins a clause opened by "which / i.e. / namely / 即" to the one before, and
    cuts each clause at its first purpose marker ("to ensure", "so that", "because", "确保",
    "以便", "避免"): "before 18:00, ensuring she eats by 6:30 pm" bounds 18:00 only.

The requirement reader (``compile.py`` and the kind modules)
    premise and conclusion: ``_THEN`` marks where the requirement starts ("..., so the order should
    be from X", "; ", "所以", "因此"); ``_IF`` a condition the item leaves to the reader ("if it
    rains ...", "如果...", "否则..."). ``_split_modal`` splits a requirement at its modal into the
    subject (which record), a negation and the predicate: "should / must / needs to / cannot /
    is", "应 / 必须 / 需要 / 不能", or a plain copula after a noun of what is stated ("预约人数为3人");
    "not", "never", "avoid", "不", "避免" at the predicate's start negate it, "includes / contains"
    stays in the predicate. ``_cut_purpose`` drops a purpose clause ("to ensure ...", "since ...",
    "以便...", "为了..."); ``_EXAMPLE_EN`` / ``_EXAMPLE_ZH`` find examples ("such as ...", "如...",
    "X等"). ``_head_class`` says whether a subject's head noun is a place ("the restaurant ordered
    from", "...的商家", "the café", accents aside) or a product ("the ordered item at the massage
    shop", "...的饮品", "the product brand of X", "商品品牌").
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from .text import EN_LENGTH_NUM, _is_zh, _Unclear

# ----- the time reader's clauses ---------------------------------------------------------------
_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|consequently|so the|so this|so it|so we|so you)\b|所以|因此|因而|故而"
)
_CLAUSE_SPLIT = re.compile(r"[;!?。；！？\n]|\.(?= [a-z\u4e00-\u9fff])|,(?! ?\d)")
_CONTINUATION = ("which ", "i.e.", "ie ", "that is", "namely", "即", "也就是")
_PURPOSE = (
    " to ensure", " ensuring", " ensure that", " so that", " so as to", " in order to", " in order that",
    " because", " since ", " to avoid", " avoiding", " to make sure", " making sure", " to allow", " allowing",
    " for use ", " for the purpose", " otherwise",
    "确保", "以便", "以免", "避免", "保证", "为了", "因为", "由于", "这样", "方便", "好让",
)


def _clauses(text: str) -> list[str]:
    """The clauses that can carry the item's time (step 2 of ``time.py``'s docstring)."""
    ends = [m.end() for m in _CONCLUSION.finditer(text)]
    if ends:
        text = text[ends[-1]:]
    groups: list[list[str]] = []  # joined once at the end: repeated concatenation would be quadratic
    for raw in _CLAUSE_SPLIT.split(text):
        part = raw.strip()
        if not part:
            continue
        if groups and part.startswith(_CONTINUATION):
            groups[-1].append(part)
        else:
            groups.append([part])
    cut = []
    for part in (" ".join(g) for g in groups):
        padded = f" {part}"
        end = len(padded)
        for marker in _PURPOSE:
            k = padded.find(marker)
            if k != -1 and k < end:
                end = k
        cut.append(padded[:end].strip())
    return [c for c in cut if c]


# ----- the requirement: premise, conclusion, modal, predicate -----------------------------------
# the conclusion of an item that reasons ("..., the result is X, so the order should be from X")
_THEN = re.compile(
    r"(?:[,;.]\s*|\s)(?:and\s+)?(?:therefore|thus|hence|consequently|accordingly|so(?! that| as| far| much| many))\b[,\s]*"
    r"|[;；。]\s*|(?<=[a-z0-9)%])(?<!\betc)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)\.\s+(?=[a-z])|，?(?:所以|因此|因而|故而|从而)")
_IF = re.compile(r"^(?:if|unless|otherwise|else|in case|whether)\b|^(?:如果|若|假如|否则|要是)|\bif (?:not|none|no|yes|so)\b")
_EN_MODAL = re.compile(
    r"\b(?:(?P<neg>cannot|can't|can not|must not|mustn't|should not|shouldn't|shall not|may not|need not|does not need to|"
    r"do not need to|does not|do not|don't|doesn't|should never|must never|(?:is|are) not allowed to)"
    r"|(?P<pos>should|must|needs? to|has to|have to|(?:is|are) required to|ought to|shall|needs?(?= (?:a|an|the)\b)|"
    r"(?:is|are) to(?= be\b)))\b")
# "预约人数为3人": a plain "为/是" after the noun of what is stated
_ZH_COPULA = re.compile(r"(?<=人数|评分|价格|总价|数量|总数|商家|店铺|餐厅|订单|状态|套餐|商品|时间|地址|辣度|甜度|温度|口味|规格)(?:均|都)?"
                        r"(?P<pos>为|是)(?P<neg>(?!))?")
# "整单不超过200元", "预算150元": with no modal, a comparison of an amount of money starts the predicate
_ZH_AMOUNT = re.compile(r"(?P<pos>(?P<neg>(?!))?)(?<=[\u4e00-\u9fff])(?=(?:不超过|不高于|不低于|不少于|低于|高于|少于|超过|控制在|"
                        r"最多|至多|至少|在|为|是|以)?[¥￥]?\d+(?:\.\d+)?\s*(?:元|块|(?:到|至|-|~)\s*\d+(?:\.\d+)?\s*(?:元|块)))")
# "火锅套餐要2-3人份的", "咖啡要无奶的": a plain "要" before what is wanted, said as a 的-phrase
_ZH_WANT = re.compile(r"(?<![主只需重想不还必])要(?P<pos>)(?P<neg>(?!))?(?=[^，,。；;]{1,12}的(?:$|[，,]))")
# "饮品选热的", "甜度都选三分甜", "商家选X": with no modal, a choice said as a plain statement
# (not after "可以 / 能 / 最好 / 尽量 / 优先 / 或": a permission or a preference, no demand: "可以选择X", "最好选择X")
_ZH_CHOOSE = re.compile(r"(?<=[\u4e00-\u9fff])(?<!可以)(?<!可)(?<!能)(?<!能够)(?<!最好)(?<!尽量)(?<!优先)(?<!或)(?<!也)"
                        r"(?:都|均)?(?P<pos>)(?P<neg>不|没有|没|未|别)?(?=选择|选(?![项购]))")  # "没有选X": not X
# "下单商品共6份", "订单共有2份商品": with no modal, a total starts the predicate
_ZH_TOTAL = re.compile(r"(?P<pos>(?P<neg>(?!))?)(?<=[\u4e00-\u9fff])(?=(?:一共|总共|共)(?:有|计)?(?:\d+|[一二两三四五六七八九十]{1,3})"
                       r"(?:份|个|件|杯|碗|盒|串|只|瓶|袋))")
# a plain statement: "is / are", or a verb of what a record holds, kept in the predicate ("includes X")
_EN_COPULA = re.compile(r"\b(?P<neg>is not|are not|isn't|aren't|will not be|won't be)\b|\b(?P<pos>is|are|will be|"
                        r"(?=(?:includes?|contains?) ))")
# what may follow a bare "需" / "要" as a modal ("需包含", "要选择"): a verb of choosing, holding or buying
_ZH_MODAL_VERBS = (r"(?:包含|包括|提供|支持|选择|选用|选|含有|含|有|来自|从|购买|买|点|下单|订购|预订|预约|加|避免|使用|具有|具备|配有|同时|"
                   r"可以|可|能够|调整为|设置为|设为|改为|改成|勾选|做成|做|达到|搭配|配(?![送置])|配送|送到|送至|送达|取消|去(?![往到店那哪这吃玩]))")
# "别" / "勿" as a negative modal: before a verb of choosing, holding, buying or where ("别选", "勿从X买")
_DONT_VERBS = "点|选|买|要|含|有|加|放|用|做|从|在|去|到|订|下单"
ZH_DONT = rf"(?<!切)勿(?={_DONT_VERBS})|(?<![特区识鉴级类])别(?={_DONT_VERBS})"
_ZH_MODAL = re.compile(
    rf"(?P<neg>不能|不应该|不应当|不应|不得|不可以|不可|不要|禁止|切勿|不宜|不允许|不准|严禁|{ZH_DONT})"
    r"|(?P<pos>应该|应当|(?<![供相适反响对答效])应|必须|只能|需要|务必|须|(?<![主只需重想不])要(?=在|为|是|能)|"
    r"(?<![主只需重想不])要求(?=[^，,。；;]{1,12}$)|(?<![主只需重想不])要(?![求的])(?=[^，,。；;的]{1,6}$)|"
    rf"(?<![主只需重想不])要(?={_ZH_MODAL_VERBS})|(?<![无不毋只必])需(?=为|是|能|在|{_ZH_MODAL_VERBS}))")


# a reason said before the requirement in the same sentence ("since there is no X, the price should be ...",
# "由于没有X，价格应..."): the text up to it is reasoning
_REASON_LEAD = re.compile(
    r"(?:^|[,，]\s*)(?:and\s+)?(?:since|because|given that|considering that|as (?:the|she|he|they|it|this|there|his|her|"
    r"their|users?)\b)[^,，;；]*[,，]\s*|(?:^|[,，])(?:由于|因为|鉴于|既然)[^,，;；]*[,，]")


def _drop_reason(c: str) -> str:
    """The requirement without a reason said before it in the same sentence: the text after the last
    "since / because / 由于 ..." clause that ends before the first modal (``c`` when there is none)."""
    m = _EN_MODAL.search(c) or _ZH_MODAL.search(c)
    if m is None:
        return c
    cut = 0
    for r in _REASON_LEAD.finditer(c, 0, m.start()):
        cut = r.end()
    return c[cut:] if cut and not _has_modal(c[:cut]) else c


def _has_modal(clause: str) -> bool:
    return bool(_EN_MODAL.search(clause) or _ZH_MODAL.search(clause))


_PURPOSE_EN = re.compile(
    r",?\s+(?:to ensure|ensuring|ensure that|so that|so as to|in order to|because|since|as (?:the|she|he|they|it|this|"
    r"his|her|their|users?|children|kids)|due to|to avoid|avoiding|to prevent|preventing|to make sure|making sure|"
    r"to allow|allowing|to meet|meeting|to satisfy|satisfying|to suit|suiting|to accommodate|accommodating|"
    r"in line with|in accordance with|according to|aligning with|aligned with|consistent with|in keeping with|considering|given that|which (?:is|are|suits|meets|matches)|"
    r"to cater|catering)\b.*$")
_PURPOSE_ZH = re.compile(r"[，,]?(?:以便|以免|以确保|以符合|确保|避免|保证|为了|因为|由于|这样|方便|好让|满足|符合|适合(?![\d一二两三四五六七八九十]+(?:\s*[-~至到]\s*[\d一二两三四五六七八九十]+)?(?:个)?人)|照顾|以照顾|以满足|迎合|以迎合|体现在).*$")
_EXAMPLE_EN = re.compile(r",?\s*\(?\b(?:such as|like|e\.g\.|for example|for instance|especially)\b.*$")
_EXAMPLE_ZH = re.compile(r"[，,]?\s*[(（]?(?:如|例如|比如|诸如|像是|像)[^，,。]*$|等[^，,。]{0,6}$")
_PARTICIPLES = frozenset({"ordered", "reserved", "booked", "selected", "chosen", "purchased", "bought", "placed",
                          "recommended", "appointed", "new", "re-ordered", "reordered", "replacement", "the", "a", "an",
                          "user's", "users'", "all", "both", "each"})
_PLACE_HEADS = re.compile(
    r"^(?:restaurants?|stores?|shops?|merchants?|vendors?|venues?|salons?|studios?|clubs?|cent(?:er|re)s?|halls?|bars?|"
    r"caf[eé]s?|ktvs?|livehouses?|gyms?|workshops?|establishments?|institutions?|bakery|bakeries|tea ?houses?|teahouses?|"
    r"parks?|pools?|cinemas?|base|track|spas?|parlou?rs?|brands?|eatery|outlets?|branch|business|facility|facilities|"
    r"academy|school|arena|court|market|eateries|places?|businesses)$")
_PRODUCT_HEADS = re.compile(
    r"^(?:orders?|items?|products?|packages?|sets?|meals?|dish(?:es)?|drinks?|beverages?|combos?|tickets?|vouchers?|"
    r"courses?|class(?:es)?|lessons?|menus?|food|snacks?|desserts?|cakes?|coffee|tea|noodles?|rice|soup|portions?|"
    r"services?|treatments?|sessions?|pass(?:es)?|cards?|bouquets?|flavou?rs?|specifications?|options?|sizes?|"
    r"temperature|sweetness|spiciness|choices?|selections?)$")
_ZH_PLACE_TAIL = ("商家", "店铺", "门店", "商户", "餐厅", "餐馆", "饭店", "店家", "品牌", "店")
_ZH_PRODUCT_TAIL = ("商品", "菜品", "套餐", "订单", "饮品", "产品", "口味", "规格", "属性", "温度", "甜度", "辣度", "单品",
                    "食品", "饮料", "菜")


def _split_modal(c: str) -> tuple[str, bool, str]:
    """(subject, negated, predicate) of a requirement; ``_Unclear`` without a modal."""
    if _is_zh(c):
        m = _ZH_MODAL.search(c) or _ZH_COPULA.search(c) or _ZH_AMOUNT.search(c) or _ZH_TOTAL.search(c) or _ZH_WANT.search(c) \
            or _ZH_CHOOSE.search(c)
        if m is None:
            raise _Unclear
        # a copula keeps its verb ("辣度均为微辣": "为微辣"), which the readers take as they take "应为"
        subject, neg, pred = c[:m.start()], m.group("neg") is not None, c[m.start("pos") if m.re is _ZH_COPULA else m.end():]
        if pred.startswith(("不", "避免", "避开", "排除")) and not pred.startswith(("不辣", "不加", "不含", "不要")):
            word = next(w for w in ("避免", "避开", "排除", "不") if pred.startswith(w))
            neg, pred = not neg, pred[len(word):]
            if word != "不" and not re.match(r"(?:选择|选|购买|点|下单|预订|预约|使用|包含|含有|是|为|在|去)", pred):
                pred = "选择" + pred  # "应避免深烘类型": not choosing it
        if m.re is _ZH_MODAL and m.group("neg") in ("不要", "别") and _ZH_BARE_THING.fullmatch(pred.strip(" ，,")):
            pred = "含有" + pred  # "饮品订单里不要咖啡": "不要" is itself the verb (not wanting a thing)
        nm = _ZH_NONE.search(subject)
        if nm:  # "没有商品应为X": not X
            neg, subject = not neg, subject[:nm.start()]
        bm = re.search(r"(?:至少|最少|至多|最多)$", subject)
        if bm and not neg:  # "评分至少要4.5分": the bound belongs to the predicate ("至少4.5分")
            subject, pred = subject[:bm.start()], bm.group() + pred.lstrip(" ，,")
        return subject.strip(" ，,"), neg, pred.strip(" ，,")
    m = _EN_MODAL.search(c) or _EN_COPULA.search(c)
    if m is None:
        raise _Unclear
    subject, neg, pred = c[:m.start()], m.group("neg") is not None, c[m.end():].strip()
    if m.re is _EN_COPULA and re.match(r"^(?:not )?(?:allowed|permitted|accepted|acceptable|tolerated)\b", pred):
        raise _Unclear  # "no X are allowed in Y": what Y may hold, said of X (the agent-voice rewrite reads it)
    for word in ("not ", "never "):
        if pred.startswith(word):
            neg, pred = True, pred[len(word):]
    if pred.startswith(("avoid ", "exclude ")):
        neg, pred = not neg, pred.split(" ", 1)[1]
    nm = _NONE_OF.match(subject)
    if nm:  # "none of the milk teas should be X", "no item in the order should be X": not X
        neg, subject = not neg, subject[nm.end():]
    return subject.strip(" ,"), neg, pred.strip(" ,")


# a thing named with no verb before it ("咖啡", "香菜和葱"): what "不要" does not want
_ZH_BARE_THING = re.compile(r"(?!(?:太|过|超|高|低|少|多|在|为|是|选|点|买|加|放|含|有|用|去|让|被|把|给|跟|和|与|从|到))"
                            r"[\u4e00-\u9fff、和]{1,8}")
_ZH_NONE = re.compile(r"(?:没有|无)(?:任何|一个|一款|一件|一份|一样)?(?:商品|菜品|产品|饮品|东西|单品)$")
# a subject that negates the demand ("No Ice should be selected" names a value: only a generic noun after "no")
_NONE_OF = re.compile(r"^(?:none|neither) of (?:the )?|^neither (?=\S)|^nothing (?:in|of|from|inside|within|on) (?:the )?|^no (?=(?:products?|items?|dish(?:es)?|drinks?|beverages?|food|orders?|one|"
                      r"lines?|goods|snacks?|desserts?)\b)")


# the value as the subject of a passive of choosing: "boneless chicken feet should be selected for the night snack",
# "Hand-held Treasure must be included in the order", "seafood should be avoided in the lunch noodles"
_PASSIVE_CHOICE = re.compile(r"^(?:also |both )?be (?P<v>chosen|selected|ordered|re-?ordered|picked|purchased|bought|included|"
                             r"added|avoided|excluded|booked|reserved|appointed|used)"
                             r"(?: (?P<prep>for|in|within|into|to|onto|from|at) (?P<rest>.+))?$")
# a place described by what it offers ("a merchant that supports dine-in", "restaurants with parking"): a demand on it
_PLACE_THAT = re.compile(r"^(?:a |an |the |any )?(?:restaurants?|stores?|shops?|merchants?|vendors?|places?|outlets?) "
                         r"(?:(?:that|which) (?:supports?|offers?|provides?|has|have|allows?) (?P<f>\S.*)|"
                         r"(?:with|offering|providing|supporting) (?P<g>\S.*))$")
# a place said as where, by its kind alone ("the rock climbing gym", "her favourite bakery"): no demand on it
_PLAIN_PLACE = re.compile(r"^(?:the|this|that|his|her|their|my|our|your|[a-z]+'s) (?![^,;]*\b(?:rated|rating|ratings|within|near|"
                          r"nearest|closest|cheapest|best|highest|lowest|whose|that|which|who|with|without|offering|providing|"
                          r"supporting|km|kilometers?|kilometres?|meters?|metres?|stars?|than|not|under|over|above|below|"
                          r"same|different|other|another|as|one|ones|previous|last|usual|before|and|or)\b)"
                          r"[^,;]{1,80}$")
_PASSIVE_RATHER = re.compile(r"^be (?:chosen|selected|ordered|picked) ,?(?P<alt>(?:rather than|instead of) \S.*)$")
_INGREDIENT_OF = re.compile(r"^be (?:the |a |an )?(?:(?:main |key |primary |principal )?(?:ingredient|component|topping|filling|"
                            r"side dish|staple)s?|(?:main|key|primary|principal|star) (?:thing|part|element|item|feature)s?) "
                            r"(?:of|in|for) (?P<rest>(?:the |[a-z]+'s? )\S.*)$")
_AVAILABLE_AT = re.compile(r"^be (?:available|offered|provided) (?:at|in|by) (?P<rest>(?:the |an? )?\S.*)$")
# "in the Y" (a record or dish the item names), not "in a gift box" / "in meal set form" (how the value comes)
_BE_IN = re.compile(r"^(?:all |both )?(?:be (?:all |both )?(?:in|part of|among)|appear in|show up in|be found in) "
                    r"(?P<rest>(?:the |[a-z]+'s? |my |their |his |her )\S.*)$")
# a count said as the subject ("12 cups", "a total of 2 items"); a bare "one" is an article ("one X should be ordered": X)
_THE_ITEM = re.compile(r"^be the (?P<n>item|product|dish|package|service|drink|beverage|one) (?P<v>ordered|chosen|selected|bought|"
                       r"purchased|booked|reserved)(?P<rest>(?: (?:at|from|in|for) \S.*)?)$")
_A_NUMBER = re.compile(r"^(?:(?:a total of |in total |only |exactly )(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)|"
                       r"\d+|two|three|four|five|six|seven|eight|nine|ten|twelve) ")
_THERE_BE = re.compile(r"^be (?P<x>.+?) (?:in|within|for) (?P<rest>(?:the |an? )?\S.*\border)$")
_NOT_A_VALUE = re.compile(r"(?:^|\s)(?:it|they|this|that|these|those|one|ones|order|orders|booking|bookings|reservation|"
                          r"reservations|merchant|store|restaurant|shop)$")


def passive_choice(subject: str, neg: bool, pred: str, named: Any = None, spelled: Any = None) -> tuple[str, bool, str]:
    """English: (subject, negated, predicate) with a value said as the subject of a passive of choosing
    put after an active verb ("X should be selected for the Y" -> the Y, "select X"; "X should be avoided in Y" -> the Y, not "select X"; "there
    should be N items in the Y order" -> the Y order, "include N items"). "from / at" a place ``named``
    (a test of a text: a place of the task is called that) stays the store reader's; from a place
    described ("at the rock climbing gym") it says where, like "for". The input otherwise."""
    if _is_zh(subject + pred) and subject:
        zm = re.fullmatch(r"(?:出现在|在|包含在|放在)(?P<rest>[^，,。]{1,30}?订单)(?:中|里|内)?", pred.strip())
        if zm is not None:  # "X不应出现在Y订单中": the Y order holds (no) X
            return zm.group("rest"), neg, "含有" + subject
    if _is_zh(subject + pred) or not subject:
        return subject, neg, pred
    if subject.casefold() == "there":
        m = _THERE_BE.match(pred)
        return (m.group("rest"), neg, "include " + m.group("x")) if m else (subject, neg, pred)
    pred = re.sub(r"^(?:required|needed) (?=for |in )", "be included ", pred)  # "X is required for the snack"
    m = _PASSIVE_CHOICE.match(pred)
    if _NOT_A_VALUE.search(subject.casefold()):
        return subject, neg, pred
    tm = _THE_ITEM.match(pred)
    if tm is not None:  # "hair removal must be the item ordered at X": the item ordered at X is hair removal
        return f"the {tm.group('n')} {tm.group('v')}{tm.group('rest')}", neg, "be " + subject
    im = _INGREDIENT_OF.match(pred)
    if im is not None:  # "chicken should be the main ingredient of the claypot dish": the dish contains it
        return im.group("rest"), neg, "contain " + subject
    am = _AVAILABLE_AT.match(pred)
    if am is not None:  # "free parking must be available at the restaurant": the restaurant offers it
        return am.group("rest"), neg, "offer " + subject
    if m is not None and m.group("v") in ("booked", "reserved", "appointed") and m.group("prep") == "for" and \
            re.fullmatch(r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve) (?:people|persons?|guests|adults|diners)",
                         subject.casefold()):
        return m.group("rest"), neg, f"be reserved for {subject}"  # "two people should be booked for the escape room": a party
    if m is not None and m.group("v") in ("booked", "reserved", "appointed") and m.group("prep") is None:
        if named is not None and named(subject):
            return subject, neg, "be selected"  # "Starlight Studio should be reserved": the place chosen
        return subject, neg, pred  # "the X package should be booked": the readers of a booking's product, as before
    if m is None:
        rm = _PASSIVE_RATHER.match(pred)  # "hot drinks must be chosen rather than cold ones": the value, not the other
        if rm is not None:
            return "", neg, f"select {subject} {rm.group('alt')}"
        bm = _BE_IN.match(pred)  # "X must (all) be in the Y order": the Y order includes X
        if bm is None:
            return subject, neg, pred
        return bm.group("rest"), neg, "include " + re.sub(r"^both ", "", subject)
    if m.group("prep") == "for" and (_A_NUMBER.match(m.group("rest") + " ") or m.group("rest").startswith("one ")) and \
            re.search(r"\b(?:people|persons?|guests|adults|diners|pax)\b", m.group("rest")):
        return subject, neg, pred  # "reserved for 2 people": a party size, the people reader's
    if m.group("prep") == "for" and re.fullmatch(rf"(?:about |around |at least |at most )?(?:{EN_LENGTH_NUM})[\s-]*"
                                                 r"(?:hours?|hrs?|minutes?|mins?)", m.group("rest")):
        return subject, neg, pred  # "booked for two hours": how long, the duration reader's
    pm = _PLACE_THAT.match(m.group("rest")) if m.group("prep") in ("from", "at") else None
    if pm is not None:  # "X should be ordered from a merchant that supports dine-in": what X's merchant offers
        return f"{subject} merchant", neg, "offer " + (pm.group("f") or pm.group("g"))
    where = m.group("rest") or ""
    bare = re.sub(r"^(?:the|a|an|one of the)\s+", "", where)
    bare_kind = re.sub(r"\s+(?:stores?|shops?|branch(?:es)?|outlets?|restaurants?|merchants?|locations?)$", "", bare)
    if m.group("prep") in ("from", "at") and (named is None or any(named(x) for x in dict.fromkeys((where, bare, bare_kind)))):
        return subject, neg, pred  # "X should be ordered from <place>" ("from a Baxi store"): the store reader's
    value = re.sub(r"^both ", "", subject)
    if value.startswith("no ") and spelled is not None and not spelled(value):
        neg, value = not neg, value[3:]  # "no eggplant dishes should be ordered" (where nothing is called so): not them
    verb = "include " if m.group("v") in ("included", "added") else "use " if m.group("v") == "used" else "select "
    if m.group("v") in ("avoided", "excluded"):
        neg = not neg
    if m.group("prep") in ("from", "at"):  # "from the restaurant": where, which names no kind of value
        if not _PLAIN_PLACE.match(m.group("rest")):
            raise _Unclear  # "from a merchant rated 4.5 or above": a demand on the place, not where (the judge's)
        return "", neg, verb + value
    rest = m.group("rest") or ""
    if _A_NUMBER.match(value):  # "a total of 12 cups should be ordered (for the team)": what the order includes
        return (rest if re.search(r"\borders?$", rest) else "the order"), neg, "include " + value
    return rest, neg, verb + re.sub(r"^(?:a single|single|one) (?=\S)", "", value)  # "a single X": the X, not a count


_PRODUCT_BRAND = re.compile(r"\b(?:product|item|goods)(?:'s)? brand$|\bproduct(?:'s)? brand (?:of|for|in)\b|"
                            r"\bbrand of the (?:ordered )?(?:product|item)s?\b|(?:商品|产品|菜品|单品)的?品牌$|"
                            r"(?<=[\u4e00-\u9fff])(?<!商家|店铺|门店|餐厅|餐馆|商户|店家|饭店)(?<!店)的品牌$")  # "火鸡拌面的品牌"


def _head_class(subject: str) -> str | None:
    """"place", "product" or None: what the subject's head noun is ("the ordered item at the
    massage shop": item; "the restaurant ordered from": restaurant)."""
    if _PRODUCT_BRAND.search(subject):
        return "product"  # "the product brand of the noodles", "商品品牌": a brand a product's name spells
    if _is_zh(subject):
        s = re.sub(r"(?:的|中|里|内|中的)$", "", subject)
        if s.endswith(_ZH_PRODUCT_TAIL):
            return "product"
        if s.endswith(_ZH_PLACE_TAIL):
            return "place"
        return None
    chunk = re.split(r"\b(?:at|from|in|for|of|to|with|by|on|that|which|who)\b", subject, maxsplit=1)[0]
    chunk = "".join(ch for ch in unicodedata.normalize("NFKD", chunk) if not unicodedata.combining(ch))  # "café": cafe
    words = [w for w in re.findall(r"[a-z][a-z'-]*", chunk) if w not in _PARTICIPLES]
    if not words:
        return None
    head = words[-1]
    if _PRODUCT_HEADS.match(head):
        return "product"
    if _PLACE_HEADS.match(head):
        return "place"
    return None


def _cut_purpose(pred: str) -> str:
    if _is_zh(pred):  # "应满足不含韭菜", "需符合：少油": the demand itself, not a purpose ("满足...需求")
        pred = re.sub(r"^(?:满足|符合)[：:]?(?=..)", "", pred.strip())
    pred = _ZH_WHO_REASON.sub("", _PURPOSE_ZH.sub("", pred)) if _is_zh(pred) else _PURPOSE_EN.sub("", pred)
    return pred.strip(" ,，")


# a trailing clause about a person, with no modal: the reason of the demand ("，用户喜欢吃辣", "，孩子喜欢吃拉面")
_ZH_WHO_REASON = re.compile(r"[，,](?:用户|孩子|女儿|儿子|老婆|老公|妻子|丈夫|朋友|同事|客户|家人|老人|父母|他们|她们|他|她)"
                            r"(?![^，,]*(?:应|必须|需要|不能|不得|不可|不要))[^，,]*$")


# who a thing is for, said after it: "high chairs for infants", "a cake for my daughter", "the soup order prepared for
# the family" (what it is, not who it is for: weaker, never stricter)
_WHO_EN = (r"(?:the |my |your |his |her |their |our |a |an )?(?:user'?s? )?(?:infants?|bab(?:y|ies)|toddlers?|kids?|"
           r"child(?:ren)?|elderly|seniors?|parents?|guests?|customers?|clients?|wife|husband|daughters?|sons?|"
           r"girlfriend|boyfriend|partner|friends?|colleagues?|roommates?|family|user|him|her|them)")
_FOR_WHOM_EN = re.compile(rf"(?<=[a-z])\s+(?:(?:prepared|ordered|chosen|selected|bought|purchased|made|intended)\s+)?"
                          rf"for {_WHO_EN}(?: and {_WHO_EN})?$")
