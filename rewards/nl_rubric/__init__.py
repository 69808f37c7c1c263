"""Natural-language rubric items compiled to code checks, one module per item kind.

VitaBench's ground truth is a task's natural-language rubric ("The pizza should be delivered around
19:00", "The bakery's rating should be 4.6 or above", "奶茶应选择少冰"). The single entry
``compile_item(text, context)`` reads one such item, English or Chinese, and returns a typed spec
of one kind (``ItemSpec``), or an ``AllOf`` of several ("query the history ..., so the order should
be from X"), or None when the item is none of the kinds or cannot be read unambiguously: None means
"not checkable by this compiler" (the LLM judge's), never "false". ``context`` is the task's
``ItemContext`` (its now, its stores, shops and products, its address book, the domain's tool
names, and specs compiled elsewhere). ``spec_holds`` checks a compiled item against one record
(``RecordFacts``); ``rewards/vitabench.py`` registers the checks, ``envs/tasks/vitabench/`` ties
items to the gold records.

Where each kind lives (its spec model, its grammar and its check, together)
    time.py      ``TimeWindow``: when a delivery arrives or a visit takes place ("around 18:00",
                 "明天下午3点前", "within an hour", "as soon as possible"); the time tolerances;
                 its tokens (clocks, dates, periods, durations, bound words) in ``time_tokens.py``
    address.py   ``AddressSpec``: the delivery address
    place.py     ``StoreSpec``, ``RatingSpec``, ``DistanceSpec``: which store or shop (by name, or a
                 chain by its brand), its rating, its distance from a place the task knows
    product.py   the grammar of a feature item: what an ordered product is or has (name, tags, options
                 such as spiciness, temperature, cup size; serving sizes), and, by the same grammar,
                 what a place offers (its tags: "offers dine-in"); its parts, each a module:
      feature.py     ``FeatureSpec``, the kind's model, and how it holds of lines or a place
      values.py      how a value is cleaned and found in the catalogue (``_resolve_phrase``, "A and B")
      concept.py     classes of food ("no offal", "non-spicy", "米饭等主食"; the lexicon's concepts)
      lines.py       one product and what that line has ("一个手抓饼，不加蛋，甜面酱口味")
      place_kind.py  a place by what it sells or its kind ("offers a swimming class", "a Fujian restaurant")
      only.py        exclusive sets ("only X", "nothing other than X", "只包含X")
    duration.py  ``DurationSpec``, ``HoursSpec``: how long an ordered product lasts (its name or
                 tags: "60 minutes", "Unlimited Time"), how late a place stays open (its tags)
    facts.py     ``PlaceFactSpec``: what a place's tags state of it: years in business ("In business
                 for 8 years", "Opened in 2019"), spending per head ("Average 130 Yuan Per Person"),
                 the ages it serves ("3-12 Years Old"), its capacity ("Maximum Capacity 16 People")
    days.py      ``DaysSpec``: the days a product can be used or a place is open ("available on weekends",
                 "usable on June 10, 2024 (Dragon Boat Festival)", "周末可用"): no exclusion of them stated
    best.py      ``BestSpec``: a superlative ("the closest", "top-rated", "the cheapest", "the
                 best-selling", "the longest"): at least as good as the gold record, whose value
                 the loader fills in (``bound``)
    quantity.py  ``CountSpec``: a party size, how many items an order holds, or how many people
                 it serves at least ("enough for two people": a set for two, or two single sets)
    joint.py     ``JointSpec``: several orders at once, read over every order the episode made
                 ("X and Y from the same store"; "the total cost of the A and B orders")
    price.py     ``PriceSpec``: an order's total, or the unit price of what it holds (budgets)
    note.py      ``NoteSpec``: what the order's note says (coverage, contradictions)
    status.py    ``StatusSpec``: a record cancelled, or paid
    process.py   ``ProcessSpec``: a look-up the episode's history must hold (query the history,
                 the weather, a holiday, a distance, the catalogue)
    trip.py      ``TripSpec``: a travel order's dates (travel date, check-in, check-out, nights), a
                 flight's or train's departure or arrival clock, a hotel's stars; per-night prices
                 and a travel place's tag by its kind noun ("a direct flight"), read before times
The shared modules
    text.py      normalisation, CJK detection, number words, word stems, phrase matching (``phrase_in``)
    clauses.py   sentence shapes: clauses, conclusions ("so", "所以"), conditions, modals and
                 negation, purpose and example cuts, the head noun of a subject
    lexicon.py   classes of food a rubric names and a product's text spells ("offal": 大肠, tripe;
                 "non-spicy": 不辣), for ``product``
    spelling.py  how the catalogue spells a value, for ``product``: the gold's spelling first, the part
                 of an English value a gold product spells, a Chinese value the gold spells with
                 characters between its own ("白切鸡" / "白切清远鸡"); never stricter than the item
    serving.py   serving sizes as the catalogue spells them ("a set meal for two", "单人套餐"), for
                 ``product``
    voice.py     a demand said otherwise, rewritten to the modal form every kind reads, tried only
                 when the text as written does not read: by what the agent does ("the agent orders
                 X from Y", "助手在X下单了Y"), as a plain statement or a spoken command ("the order
                 costs no more than 80 yuan", "Get X from Y", "No ice for the tea", "得是"), a
                 checklist line ("Dinner order store: X", "商家：X") or a yes-no question ("Was X
                 selected for Y?", "是否在X下单？"); a negated one stays negated
    world.py     what the reader knows of the task (``ItemContext``, ``PlaceInfo``, ``ProductInfo``,
                 ``item_context``) and what a check reads of a record (``RecordFacts``,
                 ``LineFacts``); catalogue look-ups; ``_Spec``, the base of the specs
    spec.py      the union of the kinds (``ItemSpec``, ``AllOf``, ``SPEC_KINDS``), ``parse_spec``
                 (a spec from JSON), ``spec_parts``, ``spec_target``, ``describe_spec``, ``spec_holds``
    compile.py   ``compile_item``: premise and conclusion, pieces, subject / modal / predicate, the
                 kind by the first reader that fits; ``compiled_count``, ``nl_coverage``
    topic.py     ``item_topic`` / ``spec_topic``: the kind an item is about, for coverage audits

Imports run one way: text <- clauses <- time, world <- the kind modules <- spec <- compile, topic (text <- voice <- compile);
no module imports this package's ``__init__``.

The policy numbers (each defined in its kind's module, which explains it)
    ``AROUND_TOLERANCE_MIN`` 15, ``EXACT_TOLERANCE_MIN`` 5, ``ASAP_SLACK_MIN`` 10,
    ``TARGET_MARGIN_MIN`` 10, ``UNDATED_GRACE_MIN`` 60, ``PAST_DATE_DAYS`` 30          (time.py)
    ``ADDRESS_TOLERANCE_M`` 100, ``ADDRESS_MIN_CHARS`` 16                               (address.py)
    ``RATING_MAX`` 5                                                                    (place.py)
    ``PRICE_AROUND_RATIO`` 0.10                                                         (price.py)
    ``NOTE_COVERAGE`` 0.6                                                               (note.py)
    ``MAX_ITEM_CHARS`` 4000: a longer text is no single item (text.py; ``time`` and ``compile``
    read it from there: patch it in those modules, not here)
"""

from .address import ADDRESS_MIN_CHARS, ADDRESS_TOLERANCE_M, AddressSpec, address_within, norm_address
from .best import BestSpec, best_can_fail, best_value
from .compile import compile_item, compiled_count, nl_coverage
from .days import DaysSpec
from .duration import DurationSpec, HoursSpec
from .facts import PlaceFactSpec
from .feature import FeatureSpec
from .joint import JointSpec, joint_holds
from .note import NOTE_COVERAGE, NoteSpec, contradicts, note_carries, spice_levels
from .place import RATING_MAX, DistanceSpec, RatingSpec, StoreSpec
from .price import PRICE_AROUND_RATIO, PriceSpec
from .process import ProcessSpec
from .quantity import CountSpec
from .spec import SPEC_KINDS, AllOf, ItemSpec, Part, describe_spec, parse_spec, spec_holds, spec_parts, spec_target
from .status import StatusSpec
from .text import MAX_ITEM_CHARS, normalise, phrase_in
from .time import (
    AROUND_TOLERANCE_MIN,
    ASAP_SLACK_MIN,
    BOUND_TOLERANCE_MIN,
    EXACT_TOLERANCE_MIN,
    PAST_DATE_DAYS,
    TARGET_MARGIN_MIN,
    TOLERANCE_MIN,
    UNDATED_GRACE_MIN,
    Relation,
    Subject,
    TimeWindow,
    compile_time_item,
    subject_of,
    subject_text,
)
from .topic import TOPICS, item_topic, spec_topic
from .trip import TripSpec
from .world import ItemContext, LineFacts, PlaceInfo, ProductInfo, RecordFacts, item_context

__all__ = [
    "ADDRESS_MIN_CHARS", "ADDRESS_TOLERANCE_M", "AROUND_TOLERANCE_MIN", "ASAP_SLACK_MIN", "BOUND_TOLERANCE_MIN",
    "EXACT_TOLERANCE_MIN", "MAX_ITEM_CHARS", "NOTE_COVERAGE", "PAST_DATE_DAYS", "PRICE_AROUND_RATIO", "RATING_MAX",
    "SPEC_KINDS", "TARGET_MARGIN_MIN", "TOLERANCE_MIN", "TOPICS", "UNDATED_GRACE_MIN",
    "AddressSpec", "AllOf", "BestSpec", "CountSpec", "DaysSpec", "DistanceSpec", "DurationSpec", "HoursSpec", "FeatureSpec", "ItemContext", "ItemSpec", "JointSpec", "LineFacts", "PlaceFactSpec",
    "NoteSpec", "Part", "PlaceInfo", "PriceSpec", "ProcessSpec", "ProductInfo", "RatingSpec", "RecordFacts",
    "Relation", "StatusSpec", "StoreSpec", "Subject", "TimeWindow", "TripSpec",
    "address_within", "best_can_fail", "best_value", "compile_item", "compile_time_item", "compiled_count", "contradicts", "describe_spec",
    "item_context", "item_topic", "joint_holds", "nl_coverage", "norm_address", "normalise", "note_carries", "parse_spec",
    "phrase_in", "spec_holds", "spec_parts", "spec_target", "spec_topic", "spice_levels", "subject_of",
    "subject_text",
]
