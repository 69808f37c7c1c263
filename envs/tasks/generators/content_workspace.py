"""The project's own content for the persona workspaces (pi-Bench personas): who each persona is,
their colleagues, the records their data files hold, and how each persona names and formats
things. Everything here is written for servicegym; none of it comes from a third party.

Each persona has one kind of record (experiment runs, campaigns, contracts, prescriptions,
holdings) with a key, a label, a category and the numbers a session computes with:

- ``raw(rec)``: the number as a data file holds it (what a report shows by default);
- ``unit(rec)``: the number in the persona's house format (a hidden intent asks for it);
- ``metric(rec)``: what "best" and "sorted" mean;
- ``derived``: (column name, function) of the extra column a table session may ask for.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FIRST = ("Adaeze", "Tomas", "Lin", "Priya", "Mateo", "Ines", "Kofi", "Hana", "Soren", "Yusuf", "Elena", "Ravi",
         "Noor", "Jonas", "Amara", "Felix", "Mei", "Dario", "Leila", "Oskar")
LAST = ("Bello", "Reyes", "Wei", "Raman", "Costa", "Lund", "Mensah", "Sato", "Berg", "Demir", "Novak", "Iyer",
        "Haddad", "Keller", "Osei", "Brandt", "Zhou", "Moretti", "Farah", "Lindqvist")


@dataclass
class PersonaContent:
    key: str
    noun: str                        # "run", "campaign", ...
    columns: list[str]               # data file header: key, label, category, numbers...
    category_noun: str               # "dataset", "channel", ...
    categories: list[str]
    # a record's draws (per category, in the order the stream takes them: ``Draw``) and the row
    # they make, (key, category, drawn values) -> row; ``make_record`` puts the two together
    draws: dict[str, tuple[Draw, ...]]
    row: Callable[[str, str, list[Any]], dict[str, str]]
    # ``metric`` of the row ``row`` makes of a record's drawn values (category, values), without
    # making the row: a batch's draws are checked (distinct, not in order) before its rows are made
    value_metric: Callable[[str, list[Any]], float]
    key_prefix: str
    raw: Callable[[dict[str, str]], str]
    unit: Callable[[dict[str, str]], str]
    unit_words: str                  # how the owner describes the house format
    metric: Callable[[dict[str, str]], float]
    metric_words: str                # "highest accuracy", ...
    derived: tuple[str, Callable[[dict[str, str]], str], str]  # column, value, description
    batch_noun: str                  # "week", "month", ...
    data_dir: str
    report: dict[str, Any]           # weekly report: title, dir, section options
    side_report: dict[str, str]      # a second kind of report (plain layout)
    exclusion_reason: str
    roles: list[str]
    meeting: dict[str, Any]
    todo: dict[str, Any]
    note: dict[str, Any]
    json_doc: dict[str, str]
    project_labels: list[str]
    tag_options: list[list[str]]
    rooms: list[str]
    # who the persona is: read from the persona module's PROFILE (world_state.workspace), the one
    # place that the sessions' text and the seeded workspace records both take it from
    owner: str = field(init=False)
    owner_email: str = field(init=False)
    organization: str = field(init=False)
    domain: str = field(init=False)  # e-mail domain of the organization
    # a record's category (``rng.choice(categories)``), and with a ``key_prefix`` each category's
    # draws after the step of the record's key number (``KEY_STEP``), which the stream takes first
    category_draw: Draw = field(init=False)
    keyed_draws: dict[str, tuple[Draw, ...]] = field(init=False)

    def __post_init__(self) -> None:
        from servicegym.world_state.workspace import persona_profile

        profile = persona_profile(self.key)
        self.owner, self.owner_email = profile["owner"], profile["owner_email"]
        self.organization, self.domain = profile["organization"], profile["domain"]
        self.category_draw = pick(self.categories)
        self.keyed_draws = {c: (KEY_STEP, *d) for c, d in self.draws.items()} if self.key_prefix else {}
    extra: dict[str, Any] = field(default_factory=dict)

    def make_record(self, rng: random.Random, key: str, cat: str) -> dict[str, str]:
        """One record of category ``cat`` (its row, keyed ``key``), drawn from ``rng``."""
        return self.row(key, cat, draw_values(rng, self.draws[cat]))


# ----- a record's draws -------------------------------------------------------------------------
# One draw: ``(n, bits, pick)``. With ``n > 0`` an index below ``n`` (``bits`` = ``n.bit_length()``
# bits of ``getrandbits``, drawn again while not below ``n``: ``random.Random._randbelow``), giving
# ``pick[i]`` when ``pick`` is a tuple (``rng.choice(pick)``) or ``pick + i`` when it is an int
# (``rng.randrange(pick, pick + n)``, ``rng.randint(pick, pick + n - 1)``); with ``n == 0`` a float
# ``lo + width * rng.random()`` for ``pick = (lo, width)`` (``rng.uniform(lo, lo + width)``). The
# same values, from the same stream, as those calls: a generator draws a batch's records in one
# loop without a method call per value (``Episode.batch``).
Draw = tuple[int, int, Any]


def pick(seq: Any) -> Draw:
    """``rng.choice(seq)``'s draw."""
    seq = tuple(seq)
    return (len(seq), len(seq).bit_length(), seq)


def between(a: int, b: int) -> Draw:
    """``rng.randint(a, b)``'s draw (``rng.randrange(a, b + 1)``'s)."""
    n = b - a + 1
    return (n, n.bit_length(), a)


def uniform(a: float, b: float) -> Draw:
    """``rng.uniform(a, b)``'s draw."""
    return (0, 0, (a, b - a))


KEY_STEP = between(1, 4)  # a prefixed record key's number: the last one's plus 1-4


def draw_values(rng: random.Random, draws: tuple[Draw, ...]) -> list[Any]:
    """The values of ``draws``, in order, from ``rng`` (see ``Draw``)."""
    getbits, rand = rng.getrandbits, rng.random
    out: list[Any] = []
    for n, k, p in draws:
        if n:
            r = getbits(k)
            while r >= n:
                r = getbits(k)
            out.append(p[r] if type(p) is tuple else p + r)
        else:
            out.append(p[0] + p[1] * rand())
    return out


def _f(x: float, nd: int) -> str:
    return f"{x:.{nd}f}"


# ----- researcher ------------------------------------------------------------------------------
_RUN = (uniform(0.61, 0.95),  # accuracy
        pick(("tiny-mixer", "wide-conv", "deep-gru", "sparse-attn", "residual-mlp", "graph-lite", "dual-encoder")),
        uniform(0.15, 1.4))  # loss


def _run(key: str, cat: str, v: list[Any]) -> dict[str, str]:
    return {"run_id": key, "model": v[1], "dataset": cat, "accuracy": _f(v[0], 4), "loss": _f(v[2], 3)}


RESEARCHER = PersonaContent(
    key="researcher", noun="run", columns=["run_id", "model", "dataset", "accuracy", "loss"],
    category_noun="dataset", categories=["coral", "delta", "tundra", "mesa", "fjord"],
    draws=dict.fromkeys(["coral", "delta", "tundra", "mesa", "fjord"], _RUN), row=_run,
    value_metric=lambda _c, v: float(_f(v[0], 4)), key_prefix="R-",
    raw=lambda r: r["accuracy"], unit=lambda r: f"{float(r['accuracy']) * 100:.1f}%",
    unit_words="accuracy as a percentage with one decimal (e.g. 87.3%)", metric=lambda r: float(r["accuracy"]),
    metric_words="highest accuracy",
    derived=("error_rate", lambda r: _f(1 - float(r["accuracy"]), 4), "error rate (1 - accuracy, four decimals)"),
    batch_noun="week", data_dir="experiments",
    report={"title": "Experiment summary", "dir": "reports", "stem": "summary",
            "sections": [["Summary", "Results", "Issues", "Next steps"], ["Highlights", "Results", "Open questions"],
                         ["Overview of the week", "Results", "Risks", "Plan"]]},
    side_report={"title": "Model comparison", "dir": "notes", "stem": "comparison"},
    exclusion_reason="its labels are being re-annotated, so its numbers are not trustworthy yet",
    roles=["advisor", "postdoc", "PhD student", "lab manager", "collaborator", "research engineer"],
    meeting={"titles": ["Lab sync", "Thesis check-in", "Reading group", "Results review"]},
    todo={"titles": ["Re-run the ablation with a new seed", "Clean the evaluation scripts", "Draft the related-work section",
                     "Check the data loader for leakage", "Archive the old checkpoints"]},
    note={"titles": ["Ideas for the next experiments", "Reviewer feedback to address", "Questions for the advisor"]},
    json_doc={"dir": "results", "stem": "top_runs", "what": "top runs"},
    project_labels=["Thesis", "GrantY3", "Benchmark"], tag_options=[["experiments", "ideas"], ["thesis", "todo"], ["review"]],
    rooms=["Room 3.14", "Seminar room B", "Lab 2 meeting corner"],
)


# ----- marketer --------------------------------------------------------------------------------
_CAMPAIGN = (between(800, 8999), pick((0, 0.5, 0.25)),  # spend: whole dollars, then the cents
             between(12, 399),  # conversions
             pick(("Spring launch", "Loyalty push", "Back to work", "Weekend flash", "City pop-up", "Referral drive",
                   "Holiday teaser")))


def _campaign(key: str, cat: str, v: list[Any]) -> dict[str, str]:
    return {"campaign_id": key, "name": v[3], "channel": cat, "spend": _f(v[0] + v[1], 2), "conversions": str(v[2])}


MARKETER = PersonaContent(
    key="marketer", noun="campaign", columns=["campaign_id", "name", "channel", "spend", "conversions"],
    category_noun="channel", categories=["email", "search", "social", "video", "affiliate"],
    draws=dict.fromkeys(["email", "search", "social", "video", "affiliate"], _CAMPAIGN), row=_campaign,
    # (the spend, whole dollars plus 0, 0.25 or 0.5, is a float its two-decimal text reads back as)
    value_metric=lambda _c, v: v[2] / (v[0] + v[1]),
    key_prefix="C-", raw=lambda r: r["spend"], unit=lambda r: f"${float(r['spend']):,.2f}",
    unit_words="spend in dollars with a thousands separator (e.g. $1,234.50)",
    metric=lambda r: int(r["conversions"]) / float(r["spend"]), metric_words="most conversions per dollar",
    derived=("cost_per_conversion", lambda r: _f(float(r["spend"]) / int(r["conversions"]), 2),
             "cost per conversion (spend / conversions, two decimals)"),
    batch_noun="month", data_dir="campaigns",
    report={"title": "Campaign performance brief", "dir": "briefs", "stem": "performance",
            "sections": [["Headline", "Channel results", "Learnings", "Next actions"], ["Summary", "Numbers", "Recommendations"],
                         ["Key takeaways", "Results by campaign", "Budget notes"]]},
    side_report={"title": "Channel spend review", "dir": "reviews", "stem": "spend_review"},
    exclusion_reason="the partner team reports those separately",
    roles=["head of marketing", "designer", "copywriter", "data analyst", "agency lead", "sales lead"],
    meeting={"titles": ["Campaign stand-up", "Creative review", "Budget check-in", "Launch readiness"]},
    todo={"titles": ["Refresh the ad creatives", "Update the UTM naming sheet", "Brief the agency on the autumn push",
                     "Audit the email unsubscribe flow", "Collect testimonials for the landing page"]},
    note={"titles": ["Campaign ideas backlog", "Notes from the agency call", "Audience insights"]},
    json_doc={"dir": "exports", "stem": "top_campaigns", "what": "top campaigns"},
    project_labels=["Q3 Launch", "Brand", "Growth"], tag_options=[["campaigns", "ideas"], ["agency"], ["insights", "audience"]],
    rooms=["Studio room", "Room Harbour", "Call link in the invite"],
)


# ----- legal intern ----------------------------------------------------------------------------
# an NDA has no value (nothing drawn for it); the others a value in thousands first
_CONTRACT = (between(1, 12),  # renewal month
             pick(("Halvorsen Freight", "Quill & Ivy Ltd", "Marrow Systems", "Eastgate Properties", "Lumina Data",
                   "Orchid Foods", "Tallis Engineering")),
             between(1, 28))  # renewal day
_CONTRACT_VALUED = (between(6, 239), *_CONTRACT)


def _contract(key: str, cat: str, v: list[Any]) -> dict[str, str]:
    value = 0 if cat == "NDA" else v[0] * 1000
    month, party, day = v[-3:]
    return {"contract_id": key, "counterparty": party, "type": cat, "value": str(value), "renewal": f"2027-{month:02d}-{day:02d}"}


LEGAL = PersonaContent(
    key="legal", noun="contract", columns=["contract_id", "counterparty", "type", "value", "renewal"],
    category_noun="contract type", categories=["NDA", "MSA", "lease", "licence", "SOW"],
    draws={"NDA": _CONTRACT, **dict.fromkeys(["MSA", "lease", "licence", "SOW"], _CONTRACT_VALUED)}, row=_contract,
    value_metric=lambda c, v: 0.0 if c == "NDA" else float(v[0] * 1000),
    key_prefix="K-", raw=lambda r: r["value"], unit=lambda r: f"EUR {int(r['value']):,}",
    unit_words="values as EUR with a thousands separator (e.g. EUR 120,000)", metric=lambda r: float(r["value"]),
    metric_words="highest contract value",
    derived=("monthly_value", lambda r: _f(int(r["value"]) / 12, 2), "monthly value (value / 12, two decimals)"),
    batch_noun="batch", data_dir="contracts",
    report={"title": "Contract review memo", "dir": "memos", "stem": "review",
            "sections": [["Summary", "Contracts reviewed", "Issues found", "Recommended next steps"],
                         ["Background", "Contracts reviewed", "Risks"], ["Executive summary", "Contracts reviewed", "Open points"]]},
    side_report={"title": "Renewal exposure note", "dir": "notes", "stem": "renewals"},
    exclusion_reason="NDAs carry no contract value and are tracked in the NDA register",
    roles=["supervising partner", "associate", "paralegal", "client contact", "compliance officer", "trainee"],
    meeting={"titles": ["Case conference", "Supervision meeting", "Client call prep", "Contract review session"]},
    todo={"titles": ["Check the indemnity cap wording", "Pull the signed originals", "Update the clause library",
                     "Prepare the disclosure bundle", "Confirm the governing-law clauses"]},
    note={"titles": ["Research notes on limitation periods", "Points for the partner", "Clause drafting reminders"]},
    json_doc={"dir": "registers", "stem": "largest_contracts", "what": "largest contracts"},
    project_labels=["Halvorsen matter", "Due diligence", "Renewals"], tag_options=[["research", "clauses"], ["partner"], ["matter", "todo"]],
    rooms=["Conference room 2", "Library room", "Partner's office"],
)
# NDAs are the excluded category: they must not be the only kind the exclusion applies to by chance
LEGAL.extra["exclude"] = "NDA"


# ----- pharmacist ------------------------------------------------------------------------------
_DRUGS = {"anticoagulant": ("warfenol", "apixarin"), "NSAID": ("ibuprane", "naproxil"), "statin": ("atorvex", "simvolan"),
          "antibiotic": ("amoxitab", "doxicure"), "beta blocker": ("metoprex", "bisolan")}


_INITIAL = pick("ABCDEFGHJKLMNPRST")
# dose, the patient's initials, the drug of the class, doses a day
_PRESCRIPTION = {cat: (pick((2.5, 5, 10, 20, 40, 250, 500)), _INITIAL, _INITIAL, pick(drugs), pick((1, 2, 3)))
                 for cat, drugs in _DRUGS.items()}


def _prescription(key: str, cat: str, v: list[Any]) -> dict[str, str]:
    return {"rx_id": key, "patient": f"{v[1]}.{v[2]}.", "drug": v[3], "drug_class": cat, "dose_mg": f"{v[0]:g}",
            "doses_per_day": str(v[4])}


PHARMACIST = PersonaContent(
    key="pharmacist", noun="prescription",
    columns=["rx_id", "patient", "drug_class", "drug", "dose_mg", "doses_per_day"], category_noun="drug class",
    categories=["anticoagulant", "NSAID", "statin", "antibiotic", "beta blocker"], draws=_PRESCRIPTION, row=_prescription,
    value_metric=lambda _c, v: float(v[0]) * v[4], key_prefix="P-",
    raw=lambda r: r["dose_mg"], unit=lambda r: f"{r['dose_mg']} mg x{r['doses_per_day']}",
    unit_words="doses written as '<dose> mg x<times per day>' (e.g. 5 mg x2)",
    metric=lambda r: float(r["dose_mg"]) * int(r["doses_per_day"]), metric_words="highest total daily dose",
    derived=("daily_mg", lambda r: f"{float(r['dose_mg']) * int(r['doses_per_day']):g}", "total daily dose in mg"),
    batch_noun="day", data_dir="dispensing",
    report={"title": "Dispensing check log", "dir": "logs", "stem": "check",
            "sections": [["Summary", "Prescriptions checked", "Interventions", "Follow-up"],
                         ["Checked", "Queries to prescribers", "Notes"], ["Overview", "Prescriptions checked", "Counselling points"]]},
    side_report={"title": "Dose review", "dir": "reviews", "stem": "dose_review"},
    exclusion_reason="anticoagulant prescriptions go through the clinic's own review",
    roles=["lead pharmacist", "pharmacy technician", "GP liaison", "clinic nurse", "dispensary assistant", "locum pharmacist"],
    meeting={"titles": ["Dispensary huddle", "Medication review clinic", "Stock planning", "Prescriber liaison call"]},
    todo={"titles": ["Reorder the statin stock", "Call the surgery about a dose query", "Update the fridge temperature log",
                     "Prepare the controlled-drug audit", "Review the repeat-prescription queue"]},
    note={"titles": ["Counselling reminders", "Interaction watch list", "Questions for the GP liaison"]},
    json_doc={"dir": "exports", "stem": "high_dose", "what": "highest-dose prescriptions"},
    project_labels=["Audit", "Clinic", "Stock"], tag_options=[["counselling"], ["interactions", "safety"], ["liaison", "gp"]],
    rooms=["Consultation room", "Back office", "Clinic room 1"],
)
PHARMACIST.extra["exclude"] = "anticoagulant"


# ----- financial analyst -----------------------------------------------------------------------
_HOLDING = (uniform(12, 180),  # cost
            uniform(0.78, 1.35),  # price / cost
            pick(("Corvid Energy", "Pellucid Power", "Marlow Software", "Quanta Health", "Brisk Retail", "Ostra Utilities",
                  "Helix Robotics", "Cedar Grocers")))


def _holding(key: str, cat: str, v: list[Any]) -> dict[str, str]:
    cost = v[0]
    return {"ticker": key, "company": v[2], "sector": cat, "price": _f(cost * v[1], 2), "cost": _f(cost, 2)}


def _ret(r: dict[str, str]) -> float:
    return _ret_of(float(r["price"]), float(r["cost"]))


def _ret_of(price: float, cost: float) -> float:
    return (price - cost) / cost


ANALYST = PersonaContent(
    key="analyst", noun="holding", columns=["ticker", "company", "sector", "price", "cost"],
    category_noun="sector", categories=["energy", "utilities", "tech", "healthcare", "retail"],
    draws=dict.fromkeys(["energy", "utilities", "tech", "healthcare", "retail"], _HOLDING), row=_holding,
    value_metric=lambda _c, v: _ret_of(float(_f(v[0] * v[1], 2)), float(_f(v[0], 2))),
    key_prefix="", raw=lambda r: r["price"], unit=lambda r: f"{_ret(r) * 100:+.2f}%",
    unit_words="returns as signed percentages with two decimals (e.g. +7.34%)", metric=_ret, metric_words="best return",
    derived=("gain_per_share", lambda r: _f(float(r["price"]) - float(r["cost"]), 2), "gain per share (price - cost, two decimals)"),
    batch_noun="portfolio", data_dir="portfolios",
    report={"title": "Portfolio memo", "dir": "memos", "stem": "portfolio",
            "sections": [["Summary", "Positions", "Risks", "Actions"], ["Market context", "Positions", "Outlook"],
                         ["Key points", "Positions", "Watch list"]]},
    side_report={"title": "Return attribution note", "dir": "notes", "stem": "attribution"},
    exclusion_reason="energy names are on the restricted list for this client",
    roles=["portfolio manager", "risk officer", "client relationship lead", "junior analyst", "compliance officer", "trader"],
    meeting={"titles": ["Portfolio review", "Risk committee prep", "Client call prep", "Earnings debrief"]},
    todo={"titles": ["Reconcile the cash positions", "Update the sector weights sheet", "Check the dividend calendar",
                     "Review the stop-loss levels", "Refresh the benchmark data"]},
    note={"titles": ["Thesis notes", "Questions for management", "Risk flags"]},
    json_doc={"dir": "exports", "stem": "top_holdings", "what": "top holdings"},
    project_labels=["Client K", "Rebalance", "Research"], tag_options=[["thesis"], ["risk", "watch"], ["client", "followup"]],
    rooms=["Trading floor room A", "Meeting room Kestrel", "Video call"],
)
ANALYST.extra["exclude"] = "energy"
RESEARCHER.extra["exclude"] = None
MARKETER.extra["exclude"] = "affiliate"

PERSONA_CONTENT: dict[str, PersonaContent] = {p.key: p for p in (RESEARCHER, MARKETER, LEGAL, PHARMACIST, ANALYST)}
PERSONA_ORDER = ("researcher", "marketer", "legal", "pharmacist", "analyst")

GENERIC_QUESTIONS = ("Anything else you need?", "Is there anything else I should know?", "What else can I do for you?")


def ticker(rng: random.Random, used: set[str]) -> str:
    while True:
        t = "".join(rng.choice("ABCDEFGHJKLMNPQRSTVWXZ") for _ in range(3))
        if t not in used:
            used.add(t)
            return t


def people(rng: random.Random, p: PersonaContent, n: int = 6) -> list[dict[str, str]]:
    """The owner's colleagues: distinct names, e-mail addresses at the organization, roles."""
    firsts = rng.sample(FIRST, n)
    lasts = rng.sample(LAST, n)
    out = []
    for i, (f, last) in enumerate(zip(firsts, lasts)):
        out.append({"name": f"{f} {last}", "first": f, "email": f"{f.lower()}.{last.lower()}@{p.domain}", "role": p.roles[i % len(p.roles)]})
    return out
