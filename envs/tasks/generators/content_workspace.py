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
    make_record: Callable[[random.Random, str, str], dict[str, str]]  # (rng, key, category) -> row
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

    def __post_init__(self) -> None:
        from servicegym.world_state.workspace import persona_profile

        profile = persona_profile(self.key)
        self.owner, self.owner_email = profile["owner"], profile["owner_email"]
        self.organization, self.domain = profile["organization"], profile["domain"]
    extra: dict[str, Any] = field(default_factory=dict)


def _f(x: float, nd: int) -> str:
    return f"{x:.{nd}f}"


# ----- researcher ------------------------------------------------------------------------------
def _run(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    models = ("tiny-mixer", "wide-conv", "deep-gru", "sparse-attn", "residual-mlp", "graph-lite", "dual-encoder")
    acc = rng.uniform(0.61, 0.95)
    return {"run_id": key, "model": rng.choice(models), "dataset": cat, "accuracy": _f(acc, 4),
            "loss": _f(rng.uniform(0.15, 1.4), 3)}


RESEARCHER = PersonaContent(
    key="researcher", noun="run", columns=["run_id", "model", "dataset", "accuracy", "loss"],
    category_noun="dataset", categories=["coral", "delta", "tundra", "mesa", "fjord"], make_record=_run, key_prefix="R-",
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
def _campaign(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    names = ("Spring launch", "Loyalty push", "Back to work", "Weekend flash", "City pop-up", "Referral drive", "Holiday teaser")
    spend = rng.randrange(800, 9000) + rng.choice((0, 0.5, 0.25))
    conv = rng.randrange(12, 400)
    return {"campaign_id": key, "name": rng.choice(names), "channel": cat, "spend": _f(spend, 2), "conversions": str(conv)}


MARKETER = PersonaContent(
    key="marketer", noun="campaign", columns=["campaign_id", "name", "channel", "spend", "conversions"],
    category_noun="channel", categories=["email", "search", "social", "video", "affiliate"], make_record=_campaign,
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
def _contract(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    parties = ("Halvorsen Freight", "Quill & Ivy Ltd", "Marrow Systems", "Eastgate Properties", "Lumina Data", "Orchid Foods",
               "Tallis Engineering")
    value = 0 if cat == "NDA" else rng.randrange(6, 240) * 1000
    month = rng.randint(1, 12)
    return {"contract_id": key, "counterparty": rng.choice(parties), "type": cat, "value": str(value),
            "renewal": f"2027-{month:02d}-{rng.randint(1, 28):02d}"}


LEGAL = PersonaContent(
    key="legal", noun="contract", columns=["contract_id", "counterparty", "type", "value", "renewal"],
    category_noun="contract type", categories=["NDA", "MSA", "lease", "licence", "SOW"], make_record=_contract,
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


def _prescription(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    dose = rng.choice((2.5, 5, 10, 20, 40, 250, 500))
    return {"rx_id": key, "patient": f"{rng.choice('ABCDEFGHJKLMNPRST')}.{rng.choice('ABCDEFGHJKLMNPRST')}.",
            "drug": rng.choice(_DRUGS[cat]), "drug_class": cat, "dose_mg": f"{dose:g}", "doses_per_day": str(rng.choice((1, 2, 3)))}


PHARMACIST = PersonaContent(
    key="pharmacist", noun="prescription",
    columns=["rx_id", "patient", "drug_class", "drug", "dose_mg", "doses_per_day"], category_noun="drug class",
    categories=["anticoagulant", "NSAID", "statin", "antibiotic", "beta blocker"], make_record=_prescription, key_prefix="P-",
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
def _holding(rng: random.Random, key: str, cat: str) -> dict[str, str]:
    names = ("Corvid Energy", "Pellucid Power", "Marlow Software", "Quanta Health", "Brisk Retail", "Ostra Utilities",
             "Helix Robotics", "Cedar Grocers")
    cost = rng.uniform(12, 180)
    price = cost * rng.uniform(0.78, 1.35)
    return {"ticker": key, "company": rng.choice(names), "sector": cat, "price": _f(price, 2), "cost": _f(cost, 2)}


def _ret(r: dict[str, str]) -> float:
    return (float(r["price"]) - float(r["cost"])) / float(r["cost"])


ANALYST = PersonaContent(
    key="analyst", noun="holding", columns=["ticker", "company", "sector", "price", "cost"],
    category_noun="sector", categories=["energy", "utilities", "tech", "healthcare", "retail"], make_record=_holding,
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
