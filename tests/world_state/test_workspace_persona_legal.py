"""Legal persona: deadlines over weekends and public holidays, contract key dates, comparison with
the standard positions, risk flags, the redline -> sign workflow and its refusals, notes,
deadlines and the clause summary, on hand-written contracts."""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace.personas import legal as lg


def _clause(i: int, ctype: str, **terms) -> lg.Clause:
    return lg.Clause(id=f"C{i}", type=ctype, heading=lg.HEADINGS[ctype], text=lg.clause_text(ctype, terms), terms=terms)


def _term(months=12, auto=True, renewal=12, notice=30):
    return dict(initial_term_months=months, auto_renew=auto, renewal_term_months=renewal, non_renewal_notice_days=notice)


RISKY = [
    _clause(1, "limitation_of_liability", capped=False, cap_months_fees=12),
    _clause(2, "term_and_renewal", **_term(24, True, 24, 120)),
    _clause(3, "governing_law", law="New York"),
    _clause(4, "confidentiality", survival_years=1),
    _clause(5, "indemnity", mutual=False),
    _clause(6, "data_protection", breach_notice_hours=96),
    _clause(7, "termination", for_convenience=False, convenience_notice_days=30),
    _clause(8, "payment", payment_days=45, late_interest_pct=10.0),
]
SAFE = [_clause(1, "limitation_of_liability", capped=True, cap_months_fees=12), _clause(3, "governing_law", law="England and Wales")]


def _contract(cid, status, effective, clauses, matter="M001"):
    return lg.Contract(id=cid, title=f"MSA {cid}", type="msa", client="Ellison Retail Group", counterparty=f"Vendor {cid}",
                       matter_id=matter, effective=effective, status=status, clauses=clauses)


def make_world() -> WorkspaceWorld:
    contracts = [
        _contract("K001", "negotiation", "2026-04-01", RISKY),
        _contract("K002", "signed", "2025-04-01", [SAFE[0], _clause(2, "term_and_renewal", **_term(notice=20)), SAFE[1]]),
        _contract("K003", "signed", "2025-04-12", [SAFE[0], _clause(2, "term_and_renewal", **_term(notice=27)), SAFE[1]]),
        _contract("K004", "signed", "2023-01-10", [SAFE[0], _clause(2, "term_and_renewal", **_term(notice=30)), SAFE[1]]),
        _contract("K005", "draft", "2026-05-01", SAFE, matter="M002"),
    ]
    standards = {t: lg.StandardClause(id=t, heading=lg.HEADINGS[t], text=lg.clause_text(t, terms), terms=terms, rules=rules)
                 for t, (terms, rules, _) in lg.STANDARD_TERMS.items()}
    matters = [lg.Matter(id="M001", name="Ellison - contracts", client="Ellison Retail Group", client_jurisdiction="England and Wales",
                         practice_area="commercial", responsible="Omar Quinn"),
               lg.Matter(id="M002", name="Bluefin - tech", client="Bluefin Health Inc.", client_jurisdiction="New York",
                         practice_area="technology", responsible="Omar Quinn")]
    return WorkspaceWorld(
        datetime(2026, 3, 2, 9),
        tables={"legal_contracts": {c.id: c for c in contracts}, "legal_standard_clauses": standards,
                "legal_matters": {m.id: m for m in matters}},
        extra={"persona": "legal", "owner": "Nadia Castillo", "owner_email": "nadia@example.org"},
    )


@pytest.fixture
def env():
    return make_world(), History(), Toolkit(lg.TOOLS)


def call(env, tool_name, **args):
    w, h, kit = env
    r = kit.call(w, h, tool_name, args)
    return r.outcome, (json.loads(r.content) if r.ok else r.content)


def test_deadlines_skip_weekends_and_holidays(env):
    d = call(env, "compute_deadline", start="2026-03-27", days=1)[1]  # Friday + 1 = Saturday -> Monday
    assert (d["due"], d["weekday"], d["moved_from"]) == ("2026-03-30", "Monday", "2026-03-28")
    d = call(env, "compute_deadline", start="2026-04-02", days=1)[1]  # Good Friday, weekend, Easter Monday (England)
    assert d["due"] == "2026-04-07" and [h["holiday"] for h in d["holidays_in_range"]] == ["Good Friday", "Easter Monday"]
    assert call(env, "compute_deadline", start="2026-04-02", days=1, jurisdiction="New York")[1]["due"] == "2026-04-03"
    d = call(env, "compute_deadline", start="2026-05-27", days=-2, jurisdiction="New York")[1]  # Memorial Day -> back to Friday
    assert (d["due"], d["moved_from"]) == ("2026-05-22", "2026-05-25")
    assert call(env, "compute_deadline", start="2026-03-31", days=5, business_days=True)[1]["due"] == "2026-04-09"
    assert call(env, "compute_deadline", start="2026-03-31", days=5, business_days=True, jurisdiction="California")[1]["due"] == "2026-04-07"
    assert call(env, "compute_deadline", start="2026-02-30", days=1)[0] == "rejected"
    assert call(env, "compute_deadline", start="2026-03-01", days=1, jurisdiction="Mars")[0] == "rejected"


def test_business_days_between(env):
    # Dec 25 (Fri) and the substitute Boxing Day (Mon 28) are English holidays; New York only closes on the 25th
    assert call(env, "business_days_between", start="2026-12-24", end="2026-12-31")[1]["business_days"] == 3
    assert call(env, "business_days_between", start="2026-12-24", end="2026-12-31", jurisdiction="New York")[1]["business_days"] == 4
    assert call(env, "business_days_between", start="2026-12-31", end="2026-12-24")[0] == "rejected"


def test_add_months_clamps_to_month_end():
    assert lg.add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    assert lg.add_months(date(2025, 11, 30), 3) == date(2026, 2, 28)


def test_contract_key_dates(env):
    k = call(env, "contract_key_dates", contract_id="K002")[1]
    # 12 months from 2025-04-01 end on 2026-03-31; 20 days' notice -> 2026-03-11 (a Wednesday)
    assert (k["current_term_end"], k["notice_deadline"], k["days_to_notice_deadline"]) == ("2026-03-31", "2026-03-11", 9)
    k = call(env, "contract_key_dates", contract_id="K003")[1]
    # term ends Sat 2026-04-11; 27 days before is Sunday 2026-03-15 -> back to Friday 2026-03-13
    assert (k["notice_deadline"], k["notice_deadline_moved_from"]) == ("2026-03-13", "2026-03-15")
    k = call(env, "contract_key_dates", contract_id="K004")[1]
    assert k["current_term_end"] == "2027-01-09"  # renewed three times since 2023


def test_compare_clause_to_standard(env):
    c = call(env, "compare_clause_to_standard", contract_id="K001", clause_id="C2")[1]
    assert {t["term"]: t["status"] for t in c["terms"]} == {"initial_term_months": "matches", "auto_renew": "deviates",
                                                           "renewal_term_months": "deviates", "non_renewal_notice_days": "deviates"}
    c = call(env, "compare_clause_to_standard", contract_id="K001", clause_id="C8")[1]
    assert {t["term"]: t["status"] for t in c["terms"]} == {"payment_days": "acceptable", "late_interest_pct": "deviates"}
    c = call(env, "compare_clause_to_standard", contract_id="K001", clause_id="C1")[1]
    assert c["overall"] == "deviates" and all(t["status"] == "deviates" for t in c["terms"])  # uncapped: the cap is moot
    assert call(env, "compare_clause_to_standard", contract_id="K002", clause_id="C1")[1]["overall"] == "conforms"
    assert call(env, "compare_clause_to_standard", contract_id="K001", clause_id="C9")[0] == "rejected"


def test_flag_risk_rules(env):
    r = call(env, "flag_risk", contract_id="K001")[1]
    assert [(f["severity"], f["clause_id"], f["rule"]) for f in r["flags"]] == [
        ("high", "C1", "uncapped_liability"),
        ("medium", "C2", "long_auto_renewal"), ("medium", "C2", "long_notice_period"),
        ("medium", "C3", "governing_law_mismatch"), ("medium", "C5", "one_sided_indemnity"),
        ("medium", "C6", "slow_breach_notice"),
        ("low", "C4", "short_confidentiality"), ("low", "C7", "no_termination_for_convenience"),
        ("low", "C8", "high_late_interest")]
    assert r["counts"] == {"high": 1, "medium": 5, "low": 3}
    assert [f["rule"] for f in call(env, "flag_risk", contract_id="K002")[1]["flags"]] == ["notice_deadline_soon"]
    # K005 is governed by English law but belongs to a New York client's matter
    assert [f["rule"] for f in call(env, "flag_risk", contract_id="K005")[1]["flags"]] == ["governing_law_mismatch"]
    gone = lg.Contract.model_validate({**make_world().table("legal_contracts").get("K005").model_dump(), "clauses": []})
    assert [f["rule"] for f in lg.risk_flags(make_world(), gone)] == ["missing_liability_cap"]


def test_find_and_search(env):
    laws = call(env, "find_clauses_by_type", clause_type="governing_law")[1]
    assert [(x["contract_id"], x["terms"]["law"]) for x in laws][:2] == [("K001", "New York"), ("K002", "England and Wales")]
    assert [c["id"] for c in call(env, "search_contracts", query="exclusive jurisdiction new york")[1]] == ["K001"]
    assert [c["id"] for c in call(env, "search_contracts", status="signed")[1]] == ["K002", "K003", "K004"]


def test_redline_accept_and_sign(env):
    w = env[0]
    std = call(env, "draft_standard_text", clause_type="limitation_of_liability")[1]
    args = dict(contract_id="K001", clause_id="C1", proposed_text=std["text"], rationale="firm standard cap",
                proposed_terms={"capped": True, "cap_months_fees": 12})
    out, msg = call(env, "redline_clause", **args)
    assert out == "rejected" and "get_clause" in msg
    call(env, "get_clause", contract_id="K001", clause_id="C1")
    assert call(env, "redline_clause", **{**args, "proposed_terms": {"cap": 1}})[0] == "rejected"
    r = call(env, "redline_clause", **args)[1]
    assert r["id"] == "RL001" and r["original_text"] == RISKY[0].text
    assert call(env, "redline_clause", **args)[0] == "rejected"  # one open redline per clause

    assert call(env, "set_contract_status", contract_id="K001", status="signed")[1].endswith("before marking it signed.")
    call(env, "flag_risk", contract_id="K001")
    out, msg = call(env, "set_contract_status", contract_id="K001", status="signed")
    assert out == "rejected" and "RL001" in msg
    call(env, "accept_redline", redline_id="RL001")
    clause = w.table("legal_contracts").get("K001").clauses[0]
    assert clause.text == std["text"] and clause.terms == {"capped": True, "cap_months_fees": 12}
    assert call(env, "accept_redline", redline_id="RL001")[0] == "rejected"
    s = call(env, "set_contract_status", contract_id="K001", status="signed", reason="all comments agreed")[1]
    assert s["status"] == "signed"
    assert w.table("legal_case_notes").get("N001").text == "Status set to signed: all comments agreed"
    call(env, "get_clause", contract_id="K001", clause_id="C2")
    assert call(env, "redline_clause", contract_id="K001", clause_id="C2", proposed_text="x y z", rationale="r")[0] == "rejected"


def test_signing_refused_with_high_risk_and_bad_transitions(env):
    w = env[0]
    call(env, "flag_risk", contract_id="K001")
    before = w.state_dict()
    out, msg = call(env, "set_contract_status", contract_id="K001", status="signed")
    assert out == "rejected" and "uncapped_liability" in msg and w.state_dict() == before
    out, msg = call(env, "set_contract_status", contract_id="K005", status="signed")
    assert out == "rejected"
    assert "under_review" in call(env, "set_contract_status", contract_id="K005", status="negotiation")[1]
    assert call(env, "set_contract_status", contract_id="K002", status="terminated")[1]["status"] == "terminated"
    assert call(env, "set_contract_status", contract_id="K002", status="signed")[0] == "rejected"


def test_withdraw_redline(env):
    call(env, "compare_clause_to_standard", contract_id="K001", clause_id="C4")
    call(env, "redline_clause", contract_id="K001", clause_id="C4", rationale="three years is standard",
         proposed_text=lg.clause_text("confidentiality", {"survival_years": 3}), proposed_terms={"survival_years": 3})
    assert call(env, "withdraw_redline", redline_id="RL001")[1]["status"] == "withdrawn"
    assert call(env, "withdraw_redline", redline_id="RL001")[0] == "rejected"
    assert env[0].table("legal_contracts").get("K001").clauses[3].terms == {"survival_years": 1}


def test_notes_and_deadlines(env):
    assert call(env, "add_case_note", matter_id="M001", text="Vendor wants a longer term.", contract_id="K005")[0] == "rejected"
    n = call(env, "add_case_note", matter_id="M001", text="Vendor wants a longer term.", contract_id="K001", tags=["Terms"])[1]
    assert n["id"] == "N001" and n["author"] == "Nadia Castillo" and n["tags"] == ["terms"]
    assert call(env, "add_deadline", matter_id="M001", title="Notice", due="2026-03-01")[0] == "rejected"
    call(env, "add_deadline", matter_id="M001", title="Send non-renewal notice for K002", due="2026-03-11", kind="notice",
         contract_id="K002")
    call(env, "add_deadline", matter_id="M001", title="Comments on K001", due="2026-03-05", kind="review")
    rows = call(env, "list_deadlines", matter_id="M001")[1]
    assert [(d["id"], d["days_left"]) for d in rows] == [("D002", 3), ("D001", 9)]
    assert call(env, "complete_deadline", deadline_id="D002")[1]["status"] == "done"
    assert call(env, "complete_deadline", deadline_id="D002")[0] == "rejected"
    assert [d["id"] for d in call(env, "list_deadlines")[1]] == ["D001"]
    m = call(env, "get_matter", matter_id="M001")[1]
    assert m["case_notes"] == 1 and [d["id"] for d in m["open_deadlines"]] == ["D001"] and len(m["contracts"]) == 4


def test_export_clause_summary(env):
    out, r = call(env, "export_clause_summary", path="summaries/K001.md", contract_id="K001")
    assert out == "executed" and (r["clauses"], r["flags"]) == (8, 9)
    text = env[0].table("files").get("summaries/K001.md").content
    assert text.startswith("# MSA K001 (K001)\n")
    assert "| C1 | Limitation of Liability | capped=False; cap_months_fees=12 | deviates |" in text
    assert "- [high] uncapped_liability (C1): liability is not capped" in text
    assert "- non-renewal notice deadline: 2027-12-02" in text  # term ends 2028-03-31; 120 days before, a Thursday
