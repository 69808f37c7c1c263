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

This module holds the tools (with their pre-conditions) and the registration (``TOOLS``,
``PROFILE``); ``legal_model`` holds the entities and ``SCHEMA``, the clause text, the dates, the
comparisons and risk flags and the seeded data (``seed_tables``), re-exported here with the other
names that code outside reads from this module.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import Query, ToolError, ToolSpec, exists, field_in, rule, tool
from servicegym.world_state.workspace.personas.formats import (
    SEED_START_TIME,
    last_call_index,
    new_id,
    parse_day,
    render_table,
)
from servicegym.world_state.workspace.personas.legal_model import (
    EDITABLE,
    HEADINGS,
    SCHEMA,
    STANDARD_TERMS,
    TRANSITIONS,
    CaseNote,
    Clause,
    ClauseType,
    Contract,
    ContractStatus,
    Deadline,
    Jurisdiction,
    Matter,
    Redline,
    StandardClause,
    TermValue,
    _check_terms,
    _jurisdiction,
    add_business_days,
    add_months,
    clause_text,
    compare_terms,
    holiday_name,
    is_business_day,
    key_dates,
    risk_flags,
    roll,
    seed_tables,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

# what the persona registry reads (``SCHEMA``, ``TOOLS``, ``PROFILE``, ``seed_tables``) and the
# names of ``legal_model`` that other code reads from this module
__all__ = [
    "HEADINGS", "PROFILE", "SCHEMA", "STANDARD_TERMS", "TOOLS", "Clause", "Contract", "Matter", "StandardClause",
    "add_months", "clause_text", "risk_flags", "seed_tables",
]


CONTRACT_SOURCES = ("search_contracts", "get_matter", "find_clauses_by_type")
MATTER_SOURCES = ("list_matters", "get_contract")
CLAUSE_LOOKUPS = ("get_clause", "compare_clause_to_standard")


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
