"""Persona legal: its records and rules (the tools that use them are in ``legal``).

- the entity rows and ``SCHEMA``: contracts made of typed clauses (each with its text and key terms),
  the firm's standard clause positions, matters, case notes, deadlines and redlines, with the clause
  types, jurisdictions and contract statuses (and their transitions);
- the clause text: the firm's wording of each clause type and the terms each type has;
- dates: public holidays and business days of a jurisdiction, adding months, and a contract's key
  dates (current term end, non-renewal notice deadline);
- comparisons and risk: a clause's terms against the standard position, and the risk flags;
- the seeded data (``seed_tables``).

``legal``'s docstring states the rules; it re-exports ``SCHEMA``, ``seed_tables`` and the names
other code reads from here.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal

import holidays
from pydantic import BaseModel, ConfigDict

from servicegym.world_state.core import Entity
from servicegym.world_state.tools import ToolError
from servicegym.world_state.workspace.personas.formats import SEED_START, day, parse_day, person_names
from servicegym.world_state.workspace.world import WorkspaceWorld

TermValue = bool | int | float | str
ClauseType = Literal["limitation_of_liability", "term_and_renewal", "governing_law", "confidentiality", "payment",
                     "termination", "indemnity", "data_protection"]
CLAUSE_TYPES = ("limitation_of_liability", "term_and_renewal", "governing_law", "confidentiality", "payment",
                "termination", "indemnity", "data_protection")
Jurisdiction = Literal["England and Wales", "New York", "California", "Germany"]
JURISDICTIONS = {"England and Wales": ("GB", "ENG"), "New York": ("US", "NY"), "California": ("US", "CA"),
                 "Germany": ("DE", None)}
ContractStatus = Literal["draft", "under_review", "negotiation", "signed", "terminated", "expired"]
TRANSITIONS = {"draft": ("under_review",), "under_review": ("negotiation", "signed", "draft"),
               "negotiation": ("under_review", "signed"), "signed": ("terminated", "expired"),
               "terminated": (), "expired": ()}
EDITABLE = ("draft", "under_review", "negotiation")
SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


class Clause(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str  # C1, C2, ... within the contract
    type: str
    heading: str
    text: str
    terms: dict[str, TermValue] = {}


class Contract(Entity):
    id: str
    title: str
    type: Literal["msa", "nda", "saas", "supply", "consulting", "lease"]
    client: str  # the party the firm acts for
    counterparty: str
    matter_id: str
    effective: str  # YYYY-MM-DD
    status: ContractStatus = "draft"
    annual_value: float = 0.0
    currency: str = "GBP"
    clauses: list[Clause] = []


class StandardClause(Entity):
    id: str  # the clause type
    heading: str
    text: str
    terms: dict[str, TermValue]
    rules: dict[str, Literal["eq", "min", "max"]]
    guidance: str = ""


class Matter(Entity):
    id: str
    name: str
    client: str
    client_jurisdiction: str
    practice_area: str
    responsible: str
    status: Literal["open", "closed"] = "open"
    opened: str = ""


class CaseNote(Entity):
    id: str
    matter_id: str
    contract_id: str = ""
    text: str
    author: str
    tags: list[str] = []
    time: str


class Deadline(Entity):
    id: str
    matter_id: str
    contract_id: str = ""
    title: str
    due: str  # YYYY-MM-DD
    kind: Literal["notice", "filing", "review", "signing", "other"] = "other"
    status: Literal["open", "done"] = "open"
    created: str = ""


class Redline(Entity):
    id: str
    contract_id: str
    clause_id: str
    original_text: str
    proposed_text: str
    proposed_terms: dict[str, TermValue] = {}
    rationale: str
    status: Literal["proposed", "accepted", "withdrawn"] = "proposed"
    time: str


SCHEMA: dict[str, type[Entity]] = {
    "legal_contracts": Contract,
    "legal_standard_clauses": StandardClause,
    "legal_matters": Matter,
    "legal_case_notes": CaseNote,
    "legal_deadlines": Deadline,
    "legal_redlines": Redline,
}


# ---- clause text ----------------------------------------------------------------------------

HEADINGS = {"limitation_of_liability": "Limitation of Liability", "term_and_renewal": "Term and Renewal",
            "governing_law": "Governing Law and Jurisdiction", "confidentiality": "Confidentiality",
            "payment": "Payment", "termination": "Termination", "indemnity": "Indemnity",
            "data_protection": "Data Protection"}
TERM_KEYS = {
    "limitation_of_liability": ("capped", "cap_months_fees"),
    "term_and_renewal": ("initial_term_months", "auto_renew", "renewal_term_months", "non_renewal_notice_days"),
    "governing_law": ("law",),
    "confidentiality": ("survival_years",),
    "payment": ("payment_days", "late_interest_pct"),
    "termination": ("for_convenience", "convenience_notice_days"),
    "indemnity": ("mutual",),
    "data_protection": ("breach_notice_hours",),
}


def clause_text(ctype: str, t: dict[str, TermValue]) -> str:
    """The firm's wording of a clause with the given terms (the project's own drafting)."""
    if ctype == "limitation_of_liability":
        if not t.get("capped", True):
            return "Neither party limits or excludes its liability under this Agreement."
        return (f"Each party's total liability arising out of or in connection with this Agreement shall not exceed the "
                f"fees paid or payable in the {t['cap_months_fees']} months before the event giving rise to the claim.")
    if ctype == "term_and_renewal":
        s = f"This Agreement starts on the Effective Date and continues for {t['initial_term_months']} months."
        if t.get("auto_renew"):
            s += (f" It then renews automatically for successive periods of {t['renewal_term_months']} months unless either "
                  f"party gives at least {t['non_renewal_notice_days']} days' written notice of non-renewal before the end "
                  f"of the current term.")
        else:
            s += " It then expires unless the parties agree a renewal in writing."
        return s
    if ctype == "governing_law":
        return f"This Agreement is governed by the laws of {t['law']}, and the courts of {t['law']} have exclusive jurisdiction."
    if ctype == "confidentiality":
        return (f"Each party keeps the other's Confidential Information secret and uses it only for this Agreement; this "
                f"obligation survives for {t['survival_years']} years after termination.")
    if ctype == "payment":
        return (f"The Customer pays each undisputed invoice within {t['payment_days']} days of receipt. Late amounts bear "
                f"interest at {t['late_interest_pct']:g}% a year.")
    if ctype == "termination":
        first = (f"Either party may terminate this Agreement for convenience on {t['convenience_notice_days']} days' "
                 f"written notice." if t.get("for_convenience") else "Neither party may terminate this Agreement for convenience.")
        return first + " Either party may terminate for a material breach not remedied within 30 days of notice."
    if ctype == "indemnity":
        who = "Each party indemnifies the other" if t.get("mutual") else "The Customer indemnifies the Supplier"
        return f"{who} against third-party claims arising from its breach of this Agreement."
    if ctype == "data_protection":
        return (f"The Supplier notifies the Customer of a personal data breach without undue delay and in any event within "
                f"{t['breach_notice_hours']} hours of becoming aware of it.")
    raise ToolError(f"unknown clause type {ctype!r}; types: {', '.join(CLAUSE_TYPES)}")


def _check_terms(ctype: str, terms: dict[str, Any]) -> dict[str, TermValue]:
    keys = TERM_KEYS.get(ctype)
    if keys is None:
        raise ToolError(f"unknown clause type {ctype!r}; types: {', '.join(CLAUSE_TYPES)}")
    bad = [k for k in terms if k not in keys]
    if bad:
        raise ToolError(f"{ctype} has no term {bad[0]!r}; its terms: {', '.join(keys)}")
    return dict(terms)


# ---- dates ----------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _holiday_calendar(jurisdiction: str, year: int) -> dict[date, str]:
    country, subdiv = JURISDICTIONS[jurisdiction]
    return dict(holidays.country_holidays(country, subdiv=subdiv, years=year).items())


def holiday_name(d: date, jurisdiction: str) -> str | None:
    return _holiday_calendar(jurisdiction, d.year).get(d)


def is_business_day(d: date, jurisdiction: str) -> bool:
    return d.weekday() < 5 and holiday_name(d, jurisdiction) is None


def roll(d: date, jurisdiction: str, direction: int) -> date:
    while not is_business_day(d, jurisdiction):
        d += timedelta(days=direction)
    return d


def add_business_days(d: date, n: int, jurisdiction: str) -> date:
    step = 1 if n >= 0 else -1
    left = abs(n)
    while left:
        d += timedelta(days=step)
        if is_business_day(d, jurisdiction):
            left -= 1
    return d


def add_months(d: date, months: int) -> date:
    y, m = divmod(d.month - 1 + months, 12)
    y, m = d.year + y, m + 1
    last = (date(y + m // 12, m % 12 + 1, 1) - timedelta(days=1)).day
    return date(y, m, min(d.day, last))


def _jurisdiction(name: str) -> str:
    if name not in JURISDICTIONS:
        raise ToolError(f"unknown jurisdiction {name!r}; use one of {', '.join(JURISDICTIONS)}")
    return name


def _clause_of(c: Contract, ctype: str) -> Clause | None:
    return next((x for x in c.clauses if x.type == ctype), None)


def key_dates(world: WorkspaceWorld, c: Contract) -> dict[str, Any]:
    term = _clause_of(c, "term_and_renewal")
    law = _clause_of(c, "governing_law")
    juris = law.terms.get("law") if law and law.terms.get("law") in JURISDICTIONS else "England and Wales"
    eff = parse_day(c.effective)
    out: dict[str, Any] = {"contract_id": c.id, "effective": eff.isoformat(), "jurisdiction": juris}
    if term is None:
        return out | {"expiry": None, "auto_renew": False, "notice_deadline": None}
    end = add_months(eff, int(term.terms["initial_term_months"])) - timedelta(days=1)
    today = world.clock.now.date()
    renews = bool(term.terms.get("auto_renew"))
    while renews and end < today:  # the current term of an auto-renewing contract
        end = add_months(end + timedelta(days=1), int(term.terms["renewal_term_months"])) - timedelta(days=1)
    out |= {"current_term_end": end.isoformat(), "auto_renew": renews, "days_to_term_end": (end - today).days}
    if renews:
        n = int(term.terms["non_renewal_notice_days"])
        raw = end - timedelta(days=n)
        last = roll(raw, juris, -1)
        out |= {"non_renewal_notice_days": n, "notice_deadline": last.isoformat(),
                "notice_deadline_moved_from": raw.isoformat() if last != raw else None,
                "days_to_notice_deadline": (last - today).days}
    else:
        out["notice_deadline"] = None
    return out


# ---- comparisons and risk -------------------------------------------------------------------

def compare_terms(clause: Clause, std: StandardClause) -> dict[str, Any]:
    rows = []
    for k, rule_kind in std.rules.items():
        have, want = clause.terms.get(k), std.terms.get(k)
        if have is None:
            status = "missing"
        elif have == want:
            status = "matches"
        elif rule_kind == "min" and isinstance(have, (int, float)) and have >= want:
            status = "acceptable"
        elif rule_kind == "max" and isinstance(have, (int, float)) and have <= want:
            status = "acceptable"
        else:
            status = "deviates"
        rows.append({"term": k, "contract": have, "standard": want, "rule": rule_kind, "status": status})
    if clause.type == "limitation_of_liability" and clause.terms.get("capped") is False:
        for r in rows:  # no cap: the cap size is moot but still far from the standard
            if r["term"] == "cap_months_fees":
                r["status"] = "deviates"
    worst = "deviates" if any(r["status"] in ("deviates", "missing") for r in rows) else "conforms"
    return {"clause_id": clause.id, "type": clause.type, "terms": rows, "overall": worst}


def risk_flags(world: WorkspaceWorld, c: Contract) -> list[dict[str, Any]]:
    flags = []

    def flag(rule_name: str, severity: str, clause: Clause | None, detail: str) -> None:
        flags.append({"rule": rule_name, "severity": severity, "clause_id": clause.id if clause else None, "detail": detail})

    lol = _clause_of(c, "limitation_of_liability")
    if lol is None:
        flag("missing_liability_cap", "high", None, "no limitation of liability clause")
    elif lol.terms.get("capped") is False:
        flag("uncapped_liability", "high", lol, "liability is not capped")
    term = _clause_of(c, "term_and_renewal")
    if term is not None and term.terms.get("auto_renew"):
        if int(term.terms.get("renewal_term_months", 0)) > 12:
            flag("long_auto_renewal", "medium", term, f"renews automatically for {term.terms['renewal_term_months']} months")
        if int(term.terms.get("non_renewal_notice_days", 0)) > 90:
            flag("long_notice_period", "medium", term, f"non-renewal needs {term.terms['non_renewal_notice_days']} days' notice")
        kd = key_dates(world, c)
        if kd.get("days_to_notice_deadline") is not None and 0 <= kd["days_to_notice_deadline"] <= 30 and c.status == "signed":
            flag("notice_deadline_soon", "high", term, f"non-renewal notice due by {kd['notice_deadline']}")
    matter = world.table("legal_matters").get(c.matter_id)
    law = _clause_of(c, "governing_law")
    if law is not None and matter is not None and law.terms.get("law") != matter.client_jurisdiction:
        flag("governing_law_mismatch", "medium", law,
             f"governed by {law.terms.get('law')}, the client is in {matter.client_jurisdiction}")
    ind = _clause_of(c, "indemnity")
    if ind is not None and not ind.terms.get("mutual"):
        flag("one_sided_indemnity", "medium", ind, "only the client gives an indemnity")
    dp = _clause_of(c, "data_protection")
    if dp is not None and int(dp.terms.get("breach_notice_hours", 0)) > 72:
        flag("slow_breach_notice", "medium", dp, f"breach notice within {dp.terms['breach_notice_hours']} hours")
    ter = _clause_of(c, "termination")
    if ter is not None and not ter.terms.get("for_convenience"):
        flag("no_termination_for_convenience", "low", ter, "no right to terminate for convenience")
    conf = _clause_of(c, "confidentiality")
    if conf is not None and int(conf.terms.get("survival_years", 0)) < 2:
        flag("short_confidentiality", "low", conf, f"confidentiality survives {conf.terms['survival_years']} year(s)")
    pay = _clause_of(c, "payment")
    if pay is not None and float(pay.terms.get("late_interest_pct", 0)) > 8:
        flag("high_late_interest", "low", pay, f"late interest {pay.terms['late_interest_pct']}% a year")
    flags.sort(key=lambda f: (SEVERITY_ORDER[f["severity"]], f["clause_id"] or "", f["rule"]))
    return flags


# ---- seeded data ----------------------------------------------------------------------------

STANDARD_TERMS: dict[str, tuple[dict[str, TermValue], dict[str, str], str]] = {
    "limitation_of_liability": ({"capped": True, "cap_months_fees": 12}, {"capped": "eq", "cap_months_fees": "min"},
                                "insist on a cap; at least 12 months' fees"),
    "term_and_renewal": ({"initial_term_months": 24, "auto_renew": False, "renewal_term_months": 12,
                          "non_renewal_notice_days": 60},
                         {"initial_term_months": "max", "auto_renew": "eq", "renewal_term_months": "max",
                          "non_renewal_notice_days": "max"}, "prefer no auto-renewal; if any, 12 months at most"),
    "governing_law": ({"law": "England and Wales"}, {"law": "eq"}, "the client's home law"),
    "confidentiality": ({"survival_years": 3}, {"survival_years": "min"}, "at least three years after termination"),
    "payment": ({"payment_days": 30, "late_interest_pct": 4.0}, {"payment_days": "min", "late_interest_pct": "max"},
                "30 days or more to pay; late interest 4% at most"),
    "termination": ({"for_convenience": True, "convenience_notice_days": 30},
                    {"for_convenience": "eq", "convenience_notice_days": "max"}, "keep a convenience exit on 30 days"),
    "indemnity": ({"mutual": True}, {"mutual": "eq"}, "indemnities must be mutual"),
    "data_protection": ({"breach_notice_hours": 48}, {"breach_notice_hours": "max"}, "breach notice within 48 hours"),
}

_COUNTERPARTIES = ("Halvorsen Data Ltd", "Quarry Lane Logistics", "Brightwater Analytics", "Orion Facilities plc",
                   "Kettering Cloud Services", "Maple & Finch Consulting", "Northstar Components GmbH", "Redfern Office Spaces")
_CLIENTS = (("Ellison Retail Group", "England and Wales", "commercial contracts"),
            ("Bluefin Health Inc.", "New York", "technology transactions"),
            ("Tamsin Foods Ltd", "England and Wales", "supply chain"))
_TYPES = ("msa", "saas", "supply", "consulting", "nda", "lease")


def _random_terms(rng: random.Random, ctype: str, home: str) -> dict[str, TermValue]:
    if ctype == "limitation_of_liability":
        return {"capped": rng.random() > 0.25, "cap_months_fees": rng.choice([6, 12, 12, 24])}
    if ctype == "term_and_renewal":
        return {"initial_term_months": rng.choice([12, 24, 36]), "auto_renew": rng.random() < 0.6,
                "renewal_term_months": rng.choice([12, 12, 24, 36]), "non_renewal_notice_days": rng.choice([30, 60, 90, 120])}
    if ctype == "governing_law":
        return {"law": home if rng.random() < 0.6 else rng.choice(sorted(JURISDICTIONS))}
    if ctype == "confidentiality":
        return {"survival_years": rng.choice([1, 2, 3, 5])}
    if ctype == "payment":
        return {"payment_days": rng.choice([14, 30, 45, 60]), "late_interest_pct": rng.choice([2.0, 4.0, 8.0, 10.0])}
    if ctype == "termination":
        return {"for_convenience": rng.random() < 0.6, "convenience_notice_days": rng.choice([30, 60, 90])}
    if ctype == "indemnity":
        return {"mutual": rng.random() < 0.6}
    return {"breach_notice_hours": rng.choice([24, 48, 72, 96])}


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    standards = [{"id": t, "heading": HEADINGS[t], "text": clause_text(t, terms), "terms": terms, "rules": rules, "guidance": g}
                 for t, (terms, rules, g) in STANDARD_TERMS.items()]
    staff = person_names(rng, 3)
    matters = [{"id": f"M{i + 1:03d}", "name": f"{client} - {area}", "client": client, "client_jurisdiction": juris,
                "practice_area": area, "responsible": staff[i], "status": "open", "opened": day(-rng.randint(60, 200))}
               for i, (client, juris, area) in enumerate(_CLIENTS)]
    counterparties = rng.sample(_COUNTERPARTIES, 6)
    statuses = ["signed", "signed", "signed", "under_review", "negotiation", "draft"]
    rng.shuffle(statuses)
    contracts = []
    for i, (cp, status) in enumerate(zip(counterparties, statuses)):
        m = matters[i % 3]
        ctype = rng.choice(_TYPES)
        kinds = ["limitation_of_liability", "term_and_renewal", "governing_law", "confidentiality"]
        kinds += rng.sample(["payment", "termination", "indemnity", "data_protection"], rng.randint(2, 4))
        clauses = []
        for j, k in enumerate(kinds):
            terms = _random_terms(rng, k, m["client_jurisdiction"])
            clauses.append({"id": f"C{j + 1}", "type": k, "heading": HEADINGS[k], "text": clause_text(k, terms), "terms": terms})
        term = clauses[1]["terms"]
        if status == "signed" and not any(c["status"] == "signed" for c in contracts):
            # the first signed contract renews itself unless notice is given within the next few weeks
            term.update(auto_renew=True)
            clauses[1]["text"] = clause_text("term_and_renewal", term)
            end = SEED_START + timedelta(days=int(term["non_renewal_notice_days"]) + rng.randint(10, 25))
            eff = add_months(end + timedelta(days=1), -int(term["initial_term_months"]))
        elif status == "signed":
            # signed 1-3 terms ago, so renewals and notice deadlines fall around now
            months = int(term["initial_term_months"]) - rng.randint(1, 4)
            eff = add_months(SEED_START, -months) + timedelta(days=rng.randint(0, 27))
        else:
            eff = SEED_START + timedelta(days=rng.randint(14, 60))
        contracts.append({"id": f"K{i + 1:03d}", "title": f"{ctype.upper()} with {cp}", "type": ctype, "client": m["client"],
                          "counterparty": cp, "matter_id": m["id"], "effective": eff.isoformat(), "status": status,
                          "annual_value": float(rng.randint(2, 90) * 5000),
                          "currency": "USD" if m["client_jurisdiction"] == "New York" else "GBP", "clauses": clauses})
    notes = [{"id": f"N{k + 1:03d}", "matter_id": c["matter_id"], "contract_id": c["id"],
              "text": f"Client asked for a review of the {c['title']} before the next renewal.", "author": staff[k % 3],
              "tags": ["review"], "time": f"{day(-rng.randint(2, 20))} 15:00:00"} for k, c in enumerate(contracts[:3])]
    deadlines = [{"id": f"D{k + 1:03d}", "matter_id": c["matter_id"], "contract_id": c["id"],
                  "title": f"Send comments on {c['title']}", "due": day(rng.randint(-2, 12)), "kind": "review",
                  "status": "open", "created": f"{day(-14)} 09:00:00"}
                 for k, c in enumerate(x for x in contracts if x["status"] in EDITABLE)]
    # one redline already proposed on the first contract still open for changes: its liability clause
    target = next(c for c in contracts if c["status"] in EDITABLE)
    lol = target["clauses"][0]
    terms = dict(STANDARD_TERMS["limitation_of_liability"][0])
    if lol["terms"] == terms:
        terms["cap_months_fees"] = 18
    redlines = [{"id": "RL001", "contract_id": target["id"], "clause_id": lol["id"], "original_text": lol["text"],
                 "proposed_text": clause_text("limitation_of_liability", terms), "proposed_terms": terms,
                 "rationale": "align the liability cap with the firm's standard position", "status": "proposed",
                 "time": f"{day(-3)} 16:00:00"}]
    return {"legal_contracts": contracts, "legal_standard_clauses": standards, "legal_matters": matters,
            "legal_case_notes": notes, "legal_deadlines": deadlines, "legal_redlines": redlines}
