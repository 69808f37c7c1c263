"""Persona: legal (a legal intern's workspace). Contracts made of typed clauses (each with its text
and its key terms), the firm's standard clause positions, matters with case notes and deadlines,
and proposed redlines.

Deterministic rules:
- a clause's terms are compared with the standard position key by key: ``eq`` must equal the
  standard, ``min`` must be at least it, ``max`` at most it;
- risk flags (``flag_risk``): uncapped or missing liability cap (high); auto-renewal for more than
  12 months (medium); non-renewal notice above 90 days (medium); governing law other than the
  client's jurisdiction (medium); one-sided indemnity (medium); data-breach notice above 72 hours
  (medium); no termination for convenience (low); confidentiality surviving under 2 years (low);
  late interest above 8% (low); a non-renewal notice deadline within 30 days (high);
- dates: a term of N months ends the day before the same day N months later; the last day to give
  notice N days before a date is that date minus N days, moved back to the previous business day;
  other deadlines move forward to the next business day. Business days skip weekends and the
  public holidays of the jurisdiction (the ``holidays`` package: England and Wales, New York,
  California, Germany).
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal

import holidays
from pydantic import BaseModel, ConfigDict

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.tools import Query, ToolError, ToolSpec, exists, field_in, rule, tool
from servicegym.world_state.workspace.personas.formats import (
    SEED_START,
    SEED_START_TIME,
    day,
    last_call_index,
    new_id,
    parse_day,
    person_names,
    render_table,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

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

CONTRACT_SOURCES = ("search_contracts", "get_matter", "find_clauses_by_type")
MATTER_SOURCES = ("list_matters", "get_contract")
CLAUSE_LOOKUPS = ("get_clause", "compare_clause_to_standard")


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


# ---- helpers --------------------------------------------------------------------------------

def _contract(world: WorkspaceWorld, cid: str) -> Contract:
    c = world.table("legal_contracts").get(cid)
    if c is None:
        raise ToolError(f"no contract {cid!r}; find ids with search_contracts")
    return c


def _clause(c: Contract, clause_id: str) -> Clause:
    x = next((x for x in c.clauses if x.id == clause_id), None)
    if x is None:
        raise ToolError(f"contract {c.id} has no clause {clause_id!r}; its clauses: {', '.join(y.id for y in c.clauses)}")
    return x


def _standard(world: WorkspaceWorld, ctype: str) -> StandardClause:
    s = world.table("legal_standard_clauses").get(ctype)
    if s is None:
        raise ToolError(f"no standard position for {ctype!r}; see list_standard_clauses")
    return s


def _clause_looked_up(world: World, history: History, args: dict[str, Any]) -> str | None:
    if last_call_index(history, CLAUSE_LOOKUPS, contract_id=args.get("contract_id"), clause_id=args.get("clause_id")) >= 0:
        return None
    return f"read clause {args.get('clause_id')!r} of {args.get('contract_id')!r} with get_clause or compare_clause_to_standard first"


def _contract_exists():
    return exists("legal_contracts", "contract_id", "contract", CONTRACT_SOURCES)


def _matter_exists():
    return exists("legal_matters", "matter_id", "matter", MATTER_SOURCES)


def _card(c: Contract) -> dict[str, Any]:
    return {"id": c.id, "title": c.title, "type": c.type, "client": c.client, "counterparty": c.counterparty,
            "matter_id": c.matter_id, "effective": c.effective, "status": c.status}


# ---- contracts and clauses ------------------------------------------------------------------

@tool("read")
def search_contracts(world: WorkspaceWorld, query: Query = "", contract_type: str | None = None,
                     status: ContractStatus | None = None, matter_id: str | None = None) -> list[dict[str, Any]]:
    """Contracts whose title, parties or clause text contain every word of ``query`` (case-insensitive).

    Args:
        query: words to look for (empty: all)
        contract_type: msa, nda, saas, supply, consulting or lease
        status: draft, under_review, negotiation, signed, terminated or expired
        matter_id: only this matter's
    """
    words = query.lower().split()
    out = []
    for c in world.table("legal_contracts"):
        if (contract_type and c.type != contract_type) or (status and c.status != status) or (matter_id and c.matter_id != matter_id):
            continue
        text = " ".join([c.title, c.client, c.counterparty] + [x.text for x in c.clauses]).lower()
        if all(w in text for w in words):
            out.append(_card(c))
    return out


@tool("read", pre=[_contract_exists()])
def get_contract(world: WorkspaceWorld, contract_id: str) -> dict[str, Any]:
    """A contract with the list of its clauses (id, type, heading) and its annual value.

    Args:
        contract_id: the contract id, e.g. K001
    """
    c = _contract(world, contract_id)
    return _card(c) | {"annual_value": c.annual_value, "currency": c.currency,
                       "clauses": [{"id": x.id, "type": x.type, "heading": x.heading} for x in c.clauses]}


@tool("read", pre=[_contract_exists()])
def list_clauses(world: WorkspaceWorld, contract_id: str) -> list[dict[str, Any]]:
    """A contract's clauses with their key terms (no full text; see get_clause).

    Args:
        contract_id: the contract
    """
    return [{"id": x.id, "type": x.type, "heading": x.heading, "terms": x.terms} for x in _contract(world, contract_id).clauses]


@tool("read", pre=[_contract_exists()])
def get_clause(world: WorkspaceWorld, contract_id: str, clause_id: str) -> dict[str, Any]:
    """One clause in full: heading, text and key terms.

    Args:
        contract_id: the contract
        clause_id: the clause id within it, e.g. C3
    """
    return {"contract_id": contract_id} | _clause(_contract(world, contract_id), clause_id).model_dump(mode="json")


@tool("read")
def find_clauses_by_type(world: WorkspaceWorld, clause_type: ClauseType, status: ContractStatus | None = None) -> list[dict[str, Any]]:
    """Every contract's clause of one type, with its terms.

    Args:
        clause_type: limitation_of_liability, term_and_renewal, governing_law, confidentiality, payment, termination, indemnity or data_protection
        status: only contracts with this status
    """
    return [{"contract_id": c.id, "title": c.title, "clause_id": x.id, "terms": x.terms}
            for c in world.table("legal_contracts") if status is None or c.status == status
            for x in c.clauses if x.type == clause_type]


@tool("read")
def list_standard_clauses(world: WorkspaceWorld) -> list[dict[str, Any]]:
    """The firm's standard clause positions (type, terms, and how each term may deviate: eq, min or max)."""
    return [{"type": s.id, "heading": s.heading, "terms": s.terms, "rules": s.rules} for s in world.table("legal_standard_clauses")]


@tool("read")
def get_standard_clause(world: WorkspaceWorld, clause_type: ClauseType) -> dict[str, Any]:
    """The standard wording, terms and guidance for one clause type.

    Args:
        clause_type: the clause type
    """
    return _standard(world, clause_type).model_dump(mode="json")


@tool("read", pre=[_contract_exists()])
def compare_clause_to_standard(world: WorkspaceWorld, contract_id: str, clause_id: str) -> dict[str, Any]:
    """Compare a clause's key terms with the firm's standard: per term matches, acceptable (within a min / max rule),
    deviates or missing; overall conforms or deviates.

    Args:
        contract_id: the contract
        clause_id: the clause
    """
    clause = _clause(_contract(world, contract_id), clause_id)
    return {"contract_id": contract_id} | compare_terms(clause, _standard(world, clause.type))


@tool("read", pre=[_contract_exists()])
def flag_risk(world: WorkspaceWorld, contract_id: str) -> dict[str, Any]:
    """Rule-based risk flags of a contract (high first): uncapped liability, long auto-renewal, long notice, governing
    law mismatch, one-sided indemnity, slow breach notice, no termination for convenience, short confidentiality, high
    late interest, an imminent notice deadline.

    Args:
        contract_id: the contract
    """
    flags = risk_flags(world, _contract(world, contract_id))
    counts = {s: sum(1 for f in flags if f["severity"] == s) for s in ("high", "medium", "low")}
    return {"contract_id": contract_id, "flags": flags, "counts": counts}


@tool("read")
def draft_standard_text(world: WorkspaceWorld, clause_type: ClauseType, terms: dict[str, TermValue] | None = None) -> dict[str, Any]:
    """The firm's wording of a clause type with the standard terms, overridden by ``terms`` (for redlines).

    Args:
        clause_type: the clause type
        terms: term -> value to use instead of the standard, e.g. {"cap_months_fees": 18}
    """
    std = _standard(world, clause_type)
    t = {**std.terms, **_check_terms(clause_type, terms or {})}
    return {"type": clause_type, "terms": t, "text": clause_text(clause_type, t)}


# ---- dates ----------------------------------------------------------------------------------

@tool("read", pre=[_contract_exists()])
def contract_key_dates(world: WorkspaceWorld, contract_id: str) -> dict[str, Any]:
    """Effective date, end of the current term, and for auto-renewing contracts the last day to give non-renewal
    notice (moved back to a business day of the governing-law jurisdiction), with days from today.

    Args:
        contract_id: the contract
    """
    return key_dates(world, _contract(world, contract_id))


@tool("read")
def compute_deadline(world: WorkspaceWorld, start: str, days: int, jurisdiction: Jurisdiction = "England and Wales",
                     business_days: bool = False) -> dict[str, Any]:
    """A deadline ``days`` after ``start`` (negative: before). Calendar days: a due date on a weekend or public holiday
    moves to the next business day (the previous one when counting back). Business days: counts only business days.

    Args:
        start: the trigger date, YYYY-MM-DD
        days: how many days after it (negative for before)
        jurisdiction: England and Wales, New York, California or Germany (its public holidays)
        business_days: count business days instead of calendar days
    """
    if abs(days) > 3650:
        raise ToolError("days must be within +-3650")
    j = _jurisdiction(jurisdiction)
    s = parse_day(start, "start")
    if business_days:
        due, raw = add_business_days(s, days, j), None
    else:
        raw = s + timedelta(days=days)
        due = roll(raw, j, 1 if days >= 0 else -1)
    skipped = []
    lo, hi = (s, due) if due >= s else (due, s)
    d = lo
    while d <= hi:
        name = holiday_name(d, j)
        if name:
            skipped.append({"date": d.isoformat(), "holiday": name})
        d += timedelta(days=1)
    return {"start": s.isoformat(), "days": days, "business_days": business_days, "jurisdiction": j, "due": due.isoformat(),
            "weekday": due.strftime("%A"), "moved_from": raw.isoformat() if raw is not None and raw != due else None,
            "holidays_in_range": skipped}


@tool("read")
def business_days_between(world: WorkspaceWorld, start: str, end: str, jurisdiction: Jurisdiction = "England and Wales") -> dict[str, Any]:
    """Business days after ``start`` up to and including ``end`` (weekends and public holidays excluded).

    Args:
        start: YYYY-MM-DD
        end: YYYY-MM-DD, not before start
        jurisdiction: whose public holidays
    """
    j = _jurisdiction(jurisdiction)
    a, b = parse_day(start, "start"), parse_day(end, "end")
    if b < a:
        raise ToolError("end is before start")
    if (b - a).days > 3650:
        raise ToolError("the range is longer than ten years")
    n = sum(1 for i in range(1, (b - a).days + 1) if is_business_day(a + timedelta(days=i), j))
    return {"start": a.isoformat(), "end": b.isoformat(), "jurisdiction": j, "business_days": n, "calendar_days": (b - a).days}


# ---- matters, notes, deadlines --------------------------------------------------------------

@tool("read")
def list_matters(world: WorkspaceWorld, status: Literal["open", "closed"] | None = None) -> list[dict[str, Any]]:
    """Matters (id, name, client, jurisdiction, practice area, status).

    Args:
        status: open or closed
    """
    return [m.model_dump(mode="json") for m in world.table("legal_matters") if status is None or m.status == status]


@tool("read", pre=[_matter_exists()])
def get_matter(world: WorkspaceWorld, matter_id: str) -> dict[str, Any]:
    """A matter with its contracts, open deadlines and number of case notes.

    Args:
        matter_id: the matter id, e.g. M001
    """
    m = world.table("legal_matters").require(matter_id)
    return m.model_dump(mode="json") | {
        "contracts": [_card(c) for c in world.table("legal_contracts") if c.matter_id == matter_id],
        "open_deadlines": [d.model_dump(mode="json") for d in sorted(world.table("legal_deadlines"), key=lambda d: d.due)
                           if d.matter_id == matter_id and d.status == "open"],
        "case_notes": sum(1 for n in world.table("legal_case_notes") if n.matter_id == matter_id)}


@tool("write", pre=[_matter_exists()])
def add_case_note(world: WorkspaceWorld, matter_id: str, text: str, contract_id: str = "", tags: list[str] | None = None) -> dict[str, Any]:
    """Add a note to a matter (optionally about one of its contracts).

    Args:
        matter_id: the matter
        text: the note
        contract_id: a contract of the matter the note is about
        tags: short labels
    """
    if len(text.split()) < 3:
        raise ToolError("text must be at least three words")
    if contract_id:
        c = _contract(world, contract_id)
        if c.matter_id != matter_id:
            raise ToolError(f"contract {c.id} belongs to matter {c.matter_id}, not {matter_id}")
    table = world.table("legal_case_notes")
    n = CaseNote(id=new_id(table, world.ids, "N"), matter_id=matter_id, contract_id=contract_id, text=text.strip(),
                 author=world.extra.get("owner", ""), tags=[t.strip().lower() for t in tags or [] if t.strip()],
                 time=world.clock.text())
    return table.insert(n).model_dump(mode="json")


@tool("read")
def list_case_notes(world: WorkspaceWorld, matter_id: str | None = None, contract_id: str | None = None) -> list[dict[str, Any]]:
    """Case notes, oldest first.

    Args:
        matter_id: only this matter's
        contract_id: only notes about this contract
    """
    return [n.model_dump(mode="json") for n in world.table("legal_case_notes")
            if (matter_id is None or n.matter_id == matter_id) and (contract_id is None or n.contract_id == contract_id)]


@tool("write", pre=[_matter_exists()])
def add_deadline(world: WorkspaceWorld, matter_id: str, title: str, due: str,
                 kind: Literal["notice", "filing", "review", "signing", "other"] = "other", contract_id: str = "") -> dict[str, Any]:
    """Add a deadline to a matter (due today or later).

    Args:
        matter_id: the matter
        title: what is due
        due: YYYY-MM-DD
        kind: notice, filing, review, signing or other
        contract_id: a contract of the matter it concerns
    """
    d = parse_day(due, "due")
    if d < world.clock.now.date():
        raise ToolError(f"due {d} is in the past")
    if not title.strip():
        raise ToolError("title must not be empty")
    if contract_id and _contract(world, contract_id).matter_id != matter_id:
        raise ToolError(f"contract {contract_id} is not part of matter {matter_id}")
    table = world.table("legal_deadlines")
    row = Deadline(id=new_id(table, world.ids, "D"), matter_id=matter_id, contract_id=contract_id, title=title.strip(),
                   due=d.isoformat(), kind=kind, created=world.clock.text())
    return table.insert(row).model_dump(mode="json")


@tool("read")
def list_deadlines(world: WorkspaceWorld, matter_id: str | None = None, status: Literal["open", "done"] | None = "open",
                   before: str | None = None) -> list[dict[str, Any]]:
    """Deadlines by due date, with days from today (negative: overdue).

    Args:
        matter_id: only this matter's
        status: open (default) or done; null for both
        before: only those due on or before this date, YYYY-MM-DD
    """
    b = parse_day(before, "before").isoformat() if before else "9999"
    today = world.clock.now.date()
    rows = [d for d in world.table("legal_deadlines") if (matter_id is None or d.matter_id == matter_id)
            and (status is None or d.status == status) and d.due <= b]
    return [d.model_dump(mode="json") | {"days_left": (parse_day(d.due) - today).days}
            for d in sorted(rows, key=lambda d: (d.due, d.id))]


@tool("write", pre=[exists("legal_deadlines", "deadline_id", "deadline", ["list_deadlines", "add_deadline"]),
                    field_in("legal_deadlines", "deadline_id", "deadline", ["open"])])
def complete_deadline(world: WorkspaceWorld, deadline_id: str) -> dict[str, Any]:
    """Mark an open deadline done.

    Args:
        deadline_id: the deadline id, e.g. D001
    """
    return world.table("legal_deadlines").update(deadline_id, status="done").model_dump(mode="json")


# ---- redlines and status --------------------------------------------------------------------

@tool("write", pre=[_contract_exists(), field_in("legal_contracts", "contract_id", "contract", EDITABLE),
                    rule("the clause must have been read with get_clause or compare_clause_to_standard",
                         _clause_looked_up, CLAUSE_LOOKUPS)])
def redline_clause(world: WorkspaceWorld, contract_id: str, clause_id: str, proposed_text: str, rationale: str,
                   proposed_terms: dict[str, TermValue] | None = None) -> dict[str, Any]:
    """Propose replacement wording (and terms) for a clause of a contract under negotiation; stored as a redline.

    Args:
        contract_id: the contract
        clause_id: the clause
        proposed_text: the replacement wording
        rationale: why (shown to the other side)
        proposed_terms: the clause's key terms under the new wording, e.g. {"capped": true, "cap_months_fees": 12}
    """
    c = _contract(world, contract_id)
    clause = _clause(c, clause_id)
    if not proposed_text.strip() or not rationale.strip():
        raise ToolError("proposed_text and rationale must not be empty")
    if proposed_text.strip() == clause.text:
        raise ToolError("the proposed text is the clause's current text")
    terms = _check_terms(clause.type, proposed_terms or {})
    if any(r.contract_id == c.id and r.clause_id == clause.id and r.status == "proposed" for r in world.table("legal_redlines")):
        raise ToolError(f"clause {clause.id} already has an open redline; withdraw it first")
    table = world.table("legal_redlines")
    r = Redline(id=new_id(table, world.ids, "RL"), contract_id=c.id, clause_id=clause.id, original_text=clause.text,
                proposed_text=proposed_text.strip(), proposed_terms=terms, rationale=rationale.strip(), time=world.clock.text())
    return table.insert(r).model_dump(mode="json")


@tool("read")
def list_redlines(world: WorkspaceWorld, contract_id: str | None = None,
                  status: Literal["proposed", "accepted", "withdrawn"] | None = None) -> list[dict[str, Any]]:
    """Redlines, oldest first.

    Args:
        contract_id: only this contract's
        status: proposed, accepted or withdrawn
    """
    return [r.model_dump(mode="json") for r in world.table("legal_redlines")
            if (contract_id is None or r.contract_id == contract_id) and (status is None or r.status == status)]


@tool("write", pre=[exists("legal_redlines", "redline_id", "redline", ["list_redlines", "redline_clause"]),
                    field_in("legal_redlines", "redline_id", "redline", ["proposed"])])
def withdraw_redline(world: WorkspaceWorld, redline_id: str) -> dict[str, Any]:
    """Withdraw a proposed redline.

    Args:
        redline_id: the redline id, e.g. RL001
    """
    return world.table("legal_redlines").update(redline_id, status="withdrawn").model_dump(mode="json")


@tool("write", pre=[exists("legal_redlines", "redline_id", "redline", ["list_redlines", "redline_clause"]),
                    field_in("legal_redlines", "redline_id", "redline", ["proposed"])])
def accept_redline(world: WorkspaceWorld, redline_id: str) -> dict[str, Any]:
    """Record that the other side accepted a redline: the clause takes the proposed text and terms.

    Args:
        redline_id: the redline
    """
    r = world.table("legal_redlines").require(redline_id)
    c = _contract(world, r.contract_id)
    if c.status not in EDITABLE:
        raise ToolError(f"contract {c.id} is {c.status}; its clauses can no longer change")
    clauses = [x.model_copy(update={"text": r.proposed_text, "terms": {**x.terms, **r.proposed_terms}}) if x.id == r.clause_id else x
               for x in c.clauses]
    world.table("legal_contracts").update(c.id, clauses=clauses)
    return world.table("legal_redlines").update(redline_id, status="accepted").model_dump(mode="json")


def _may_sign(world: World, history: History, args: dict[str, Any]) -> str | None:
    if args.get("status") != "signed":
        return None
    if not history.called("flag_risk", args.get("contract_id")):
        return f"run flag_risk on {args.get('contract_id')!r} before marking it signed"
    return None


def _no_open_redlines(world: World, history: History, args: dict[str, Any]) -> str | None:
    if args.get("status") != "signed":
        return None
    open_rl = [r.id for r in world.table("legal_redlines") if r.contract_id == args.get("contract_id") and r.status == "proposed"]
    return f"redlines {', '.join(open_rl)} are still open; accept or withdraw them first" if open_rl else None


@tool("write", pre=[_contract_exists(),
                    rule("flag_risk must have run on the contract before it is marked signed", _may_sign, ["flag_risk"]),
                    rule("no redline of the contract may be open when it is marked signed", _no_open_redlines,
                         ["accept_redline", "withdraw_redline"])])
def set_contract_status(world: WorkspaceWorld, contract_id: str, status: ContractStatus, reason: str = "") -> dict[str, Any]:
    """Move a contract along its lifecycle (draft -> under_review -> negotiation -> signed -> terminated / expired).
    Signing is refused while a redline is open or a high-severity risk flag remains.

    Args:
        contract_id: the contract
        status: the new status
        reason: why (recorded as a case note on the matter)
    """
    c = _contract(world, contract_id)
    if status not in TRANSITIONS[c.status]:
        allowed = ", ".join(TRANSITIONS[c.status]) or "none"
        raise ToolError(f"contract {c.id} is {c.status}; it can move to: {allowed}")
    if status == "signed":
        high = [f["rule"] for f in risk_flags(world, c) if f["severity"] == "high"]
        if high:
            raise ToolError(f"high-severity risks remain: {', '.join(high)}")
    row = world.table("legal_contracts").update(c.id, status=status)
    if reason.strip():
        notes = world.table("legal_case_notes")
        notes.insert(CaseNote(id=new_id(notes, world.ids, "N"), matter_id=c.matter_id, contract_id=c.id,
                              text=f"Status set to {status}: {reason.strip()}", author=world.extra.get("owner", ""),
                              tags=["status"], time=world.clock.text()))
    return _card(row)


@tool("write", pre=[_contract_exists()])
def export_clause_summary(world: WorkspaceWorld, path: str, contract_id: str, overwrite: bool = False) -> dict[str, Any]:
    """Write a Markdown summary of a contract: parties and key dates, a table of its clauses (type, key terms,
    comparison with the standard) and its risk flags.

    Args:
        path: workspace path ending in .md or .txt
        contract_id: the contract
        overwrite: replace an existing file
    """
    c = _contract(world, contract_id)
    kd = key_dates(world, c)
    rows = []
    for x in c.clauses:
        std = world.table("legal_standard_clauses").get(x.type)
        verdict = compare_terms(x, std)["overall"] if std else "no standard"
        rows.append([x.id, x.heading, "; ".join(f"{k}={v}" for k, v in x.terms.items()), verdict])
    flags = risk_flags(world, c)
    lines = [f"# {c.title} ({c.id})", "", f"- parties: {c.client} (client) and {c.counterparty}", f"- status: {c.status}",
             f"- effective: {c.effective}", f"- current term ends: {kd.get('current_term_end') or 'n/a'}",
             f"- non-renewal notice deadline: {kd.get('notice_deadline') or 'n/a'}", "", "## Clauses", "",
             render_table(["clause", "heading", "key terms", "against standard"], rows, "markdown"), "## Risk flags", ""]
    lines += [f"- [{f['severity']}] {f['rule']} ({f['clause_id'] or 'contract'}): {f['detail']}" for f in flags] or ["- none"]
    text = "\n".join(lines) + "\n"
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "clauses": len(rows), "flags": len(flags), "chars": len(text)}


TOOLS: list[ToolSpec] = [
    search_contracts, get_contract, list_clauses, get_clause, find_clauses_by_type, list_standard_clauses,
    get_standard_clause, compare_clause_to_standard, flag_risk, draft_standard_text, contract_key_dates,
    compute_deadline, business_days_between, list_matters, get_matter, add_case_note, list_case_notes, add_deadline,
    list_deadlines, complete_deadline, redline_clause, list_redlines, withdraw_redline, accept_redline,
    set_contract_status, export_clause_summary,
]

PROFILE: dict[str, Any] = {
    "key": "legal", "title": "legal intern", "owner": "Amara Osei", "owner_email": "amara.osei@fairmont-legal.com",
    "organization": "Fairmont Legal", "domain": "fairmont-legal.com", "start": SEED_START_TIME,
}


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
