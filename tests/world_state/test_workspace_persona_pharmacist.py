"""Pharmacist persona: dose limits (adult, weight-based, renal), allergies, interactions, and the
review workflow's transitions and refusals, on a hand-written pharmacy."""

from __future__ import annotations

import json
import random
from datetime import datetime

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace.personas import pharmacist as rx


def _catalogue() -> dict:
    rows = {d["id"]: rx.Drug.model_validate(d) for d in rx.seed_tables(random.Random(0))["rx_drugs"]}
    return {k: v.model_copy(update={"stock_units": 100}) for k, v in rows.items()}


def _interactions() -> dict:
    return {i["id"]: rx.Interaction.model_validate(i) for i in rx.seed_tables(random.Random(0))["rx_interactions"]}


ADULT = rx.Patient(id="PT001", name="Omar Haddad", age=70, sex="male", weight_kg=80, serum_creatinine_mg_dl=1.0,
                   egfr=77.8, allergies=[], conditions=["atrial fibrillation"])
CHILD = rx.Patient(id="PT002", name="Zoe Walsh", age=8, sex="female", weight_kg=25, serum_creatinine_mg_dl=0.5,
                   egfr=110, allergies=["penicillin"])
RENAL = rx.Patient(id="PT003", name="Uma Santos", age=82, sex="female", weight_kg=60, serum_creatinine_mg_dl=2.0,
                   egfr=20.5, allergies=["nsaid"])


def _rx(i: str, pid: str, drug: str, dose: float, freq: int, status: str = "pending", days: int = 7) -> rx.Prescription:
    return rx.Prescription(id=i, patient_id=pid, drug=drug, dose_mg=dose, frequency_per_day=freq, duration_days=days,
                           prescriber="Dr. Bruno Eze", written="2026-03-01", status=status)


PRESCRIPTIONS = [
    _rx("RX001", "PT001", "warfarin", 5, 1, "dispensed", 28),
    _rx("RX002", "PT001", "ibuprofen", 400, 3),         # major interaction with warfarin -> needs_review
    _rx("RX003", "PT001", "paracetamol", 1000, 4),      # 4000 mg = adult max -> clear
    _rx("RX004", "PT002", "paracetamol", 500, 4),       # 2000 > 60 mg/kg x 25 kg = 1500 -> unsafe
    _rx("RX005", "PT002", "cephalexin", 250, 2),        # cross-reactive with penicillin -> needs_review
    _rx("RX006", "PT003", "metformin", 500, 2),         # eGFR 20.5 < 30 -> avoid -> unsafe
    _rx("RX007", "PT003", "naproxen", 250, 2),          # nsaid allergy -> unsafe
    _rx("RX008", "PT001", "simvastatin", 20, 1, "dispensed", 28),
    _rx("RX009", "PT001", "clarithromycin", 500, 2),    # contraindicated with simvastatin
]


def make_world() -> WorkspaceWorld:
    return WorkspaceWorld(
        datetime(2026, 3, 2, 9),
        tables={"rx_drugs": _catalogue(), "rx_interactions": _interactions(),
                "rx_patients": {p.id: p for p in (ADULT, CHILD, RENAL)},
                "rx_prescriptions": {r.id: r for r in PRESCRIPTIONS}},
        extra={"persona": "pharmacist", "owner": "Priya Rahman", "owner_email": "priya@example.org"},
    )


@pytest.fixture
def env():
    return make_world(), History(), Toolkit(rx.TOOLS)


def call(env, tool_name, **args):
    w, h, kit = env
    r = kit.call(w, h, tool_name, args)
    return r.outcome, (json.loads(r.content) if r.ok else r.content)


def test_check_interactions_lists_pairs_by_severity(env):
    out = call(env, "check_interactions", drugs=["Ibuprofen", "warfarin", "aspirin", "omeprazole"])[1]
    pairs = [(p["drugs"], p["severity"]) for p in out["pairs"]]
    # aspirin + ibuprofen: both nsaid (duplication, major); both with warfarin: major; sorted by names within severity
    assert pairs == [(["aspirin", "ibuprofen"], "major"), (["aspirin", "warfarin"], "major"),
                     (["ibuprofen", "warfarin"], "major")]
    assert out["worst"] == "major"
    assert call(env, "check_interactions", drugs=["paracetamol", "omeprazole"])[1]["worst"] == "none"
    assert call(env, "check_interactions", drugs=["paracetamol", "unobtainium"])[0] == "rejected"
    assert call(env, "check_interactions", drugs=["paracetamol"])[0] == "rejected"


def test_dose_limits_adult_weight_and_renal(env):
    d = call(env, "check_dose", prescription_id="RX003")[1]
    assert (d["daily_mg"], d["limit_mg"], d["ok"], d["percent_of_limit"]) == (4000, 4000, True, 100.0)
    d = call(env, "check_dose", prescription_id="RX004")[1]
    assert (d["daily_mg"], d["limit_mg"], d["ok"]) == (2000, 1500, False)
    assert d["basis"] == "weight-based: 60 mg/kg/day x 25 kg"
    d = call(env, "check_dose", prescription_id="RX006")[1]
    assert d["avoid"] and d["limit_mg"] == 0 and not d["ok"]
    # metformin's renal tiers: below 45 -> 1000 mg, below 30 -> avoid
    assert call(env, "renal_dose_limit", drug="metformin", egfr=40)[1]["limit_mg"] == 1000
    assert call(env, "renal_dose_limit", drug="metformin", egfr=29.9)[1]["avoid"] is True
    assert call(env, "renal_dose_limit", drug="metformin", egfr=60)[1]["limit_mg"] == 2550


def test_allergy_and_cross_reactivity(env):
    a = call(env, "check_allergy", prescription_id="RX007")[1]
    assert a["conflicts"] == ["nsaid"] and a["ok"] is False
    a = call(env, "check_allergy", prescription_id="RX005")[1]
    assert a["conflicts"] == [] and a["cross_reactivity_cautions"] == ["penicillin"] and a["ok"] is True


def test_verdicts(env):
    verdict = {r: call(env, "verify_prescription", prescription_id=r)[1]["verdict"]
               for r in ("RX002", "RX003", "RX004", "RX005", "RX006", "RX007", "RX009")}
    assert verdict == {"RX002": "needs_review", "RX003": "clear", "RX004": "unsafe", "RX005": "needs_review",
                       "RX006": "unsafe", "RX007": "unsafe", "RX009": "unsafe"}
    inter = call(env, "check_prescription_interactions", prescription_id="RX009")[1]
    assert inter["active_medications"] == ["warfarin", "simvastatin"]
    assert [(p["drugs"], p["severity"]) for p in inter["pairs"]] == [
        (["clarithromycin", "simvastatin"], "contraindicated"), (["clarithromycin", "warfarin"], "major")]


def test_creatinine_clearance_cockcroft_gault(env):
    # (140 - 82) x 60 / (72 x 2.0) x 0.85 = 20.54...
    assert call(env, "creatinine_clearance", patient_id="PT003")[1]["crcl_ml_min"] == 20.5
    # (140 - 70) x 80 / 72 = 77.77...
    assert call(env, "creatinine_clearance", patient_id="PT001")[1]["crcl_ml_min"] == 77.8


def test_approve_needs_a_check_first_and_refuses_unsafe(env):
    w = env[0]
    out, msg = call(env, "approve_prescription", prescription_id="RX003")
    assert out == "rejected" and "verify_prescription" in msg
    call(env, "check_dose", prescription_id="RX003")  # not an interaction check: still refused
    assert call(env, "approve_prescription", prescription_id="RX003")[0] == "rejected"
    call(env, "verify_prescription", prescription_id="RX003")
    assert call(env, "approve_prescription", prescription_id="RX003")[1]["status"] == "approved"
    assert call(env, "approve_prescription", prescription_id="RX003")[0] == "rejected"  # already approved

    call(env, "verify_prescription", prescription_id="RX004")
    before = w.state_dict()
    out, msg = call(env, "approve_prescription", prescription_id="RX004")
    assert out == "rejected" and "unsafe" in msg and "1500" in msg
    assert w.state_dict() == before

    call(env, "check_prescription_interactions", prescription_id="RX002")
    out, msg = call(env, "approve_prescription", prescription_id="RX002")
    assert out == "rejected" and "override_reason" in msg
    ok = call(env, "approve_prescription", prescription_id="RX002", override_reason="prescriber confirmed; INR check booked")
    assert ok[1]["status"] == "approved" and ok[1]["decision_reason"].startswith("prescriber confirmed")


def test_amendment_requires_a_new_check(env):
    w = env[0]
    call(env, "verify_prescription", prescription_id="RX004")
    assert call(env, "amend_prescription", prescription_id="RX004", dose_mg=375, note="agreed 375 mg qds")[0] == "executed"
    out, msg = call(env, "approve_prescription", prescription_id="RX004")
    assert out == "rejected" and "amended after" in msg
    assert call(env, "verify_prescription", prescription_id="RX004")[1]["verdict"] == "clear"  # 1500 = limit
    assert call(env, "approve_prescription", prescription_id="RX004")[0] == "executed"
    assert w.table("rx_prescriptions").get("RX004").notes == "agreed 375 mg qds"
    assert call(env, "amend_prescription", prescription_id="RX004", dose_mg=250)[0] == "rejected"  # approved now


def test_hold_reject_and_dispense(env):
    w = env[0]
    assert call(env, "hold_prescription", prescription_id="RX007", reason="asking prescriber about allergy")[1]["status"] == "on_hold"
    assert call(env, "hold_prescription", prescription_id="RX007", reason="again")[0] == "rejected"
    assert call(env, "reject_prescription", prescription_id="RX007", reason="documented nsaid allergy")[1]["status"] == "rejected"
    assert call(env, "reject_prescription", prescription_id="RX007", reason="x")[0] == "rejected"

    call(env, "verify_prescription", prescription_id="RX003")
    call(env, "approve_prescription", prescription_id="RX003")
    assert call(env, "dispense_quantity", prescription_id="RX003")[1]["units"] == 2 * 4 * 7  # 1000 mg = 2 x 500 mg tablets
    assert call(env, "check_stock", drug="paracetamol")[1] == {"drug": "paracetamol", "stock_units": 100,
                                                                "committed_units": 56, "available_units": 44}
    out, msg = call(env, "dispense", prescription_id="RX003")
    assert out == "rejected" and "add_counseling_note" in msg
    assert call(env, "add_counseling_note", prescription_id="RX003", text="ok")[0] == "rejected"
    call(env, "add_counseling_note", prescription_id="RX003", text="Max eight tablets a day; no other paracetamol.",
         topics=["maximum dose"])
    d = call(env, "dispense", prescription_id="RX003")[1]
    assert d["status"] == "dispensed" and d["dispensed_units"] == 56 and d["stock_left"] == 44
    assert w.table("rx_drugs").get("paracetamol").stock_units == 44
    assert call(env, "dispense", prescription_id="RX003")[0] == "rejected"


def test_dispense_refused_when_stock_is_short(env):
    w = env[0]
    w.table("rx_drugs").update("paracetamol", stock_units=10)
    call(env, "verify_prescription", prescription_id="RX003")
    call(env, "approve_prescription", prescription_id="RX003")
    call(env, "add_counseling_note", prescription_id="RX003", text="take with water as directed")
    before = w.state_dict()
    out, msg = call(env, "dispense", prescription_id="RX003")
    assert out == "rejected" and "only 10 units" in msg and w.state_dict() == before
    call(env, "restock_drug", drug="paracetamol", units=50)
    assert call(env, "dispense", prescription_id="RX003")[1]["stock_left"] == 4


def test_alternatives_avoid_allergy_and_interactions(env):
    alts = [a["drug"] for a in call(env, "suggest_alternatives", prescription_id="RX002")[1]]
    # pain drugs for a warfarin patient: naproxen is major with warfarin, so paracetamol and tramadol remain
    assert alts == ["paracetamol", "tramadol"]
    alts = [a["drug"] for a in call(env, "suggest_alternatives", prescription_id="RX005")[1]]
    assert "amoxicillin" not in alts and "clarithromycin" in alts  # penicillin allergy


def test_export_verification_report(env):
    out, r = call(env, "export_verification_report", path="reports/review.md", prescription_ids=["RX002", "RX004"])
    assert out == "executed" and r["prescriptions"] == 2
    text = env[0].table("files").get("reports/review.md").content
    assert "## RX002: ibuprofen 400 mg x 3/day for PT001" in text and "- verdict: needs_review" in text
    assert "- interaction: major ibuprofen + warfarin: avoid; paracetamol is preferred for pain" in text
    assert "daily dose: 2000 mg (limit 1500 mg, weight-based: 60 mg/kg/day x 25 kg)" in text
    assert call(env, "export_verification_report", path="r.md", prescription_ids=["RX404"])[0] == "rejected"


def test_weight_limit_applies_to_every_minor_and_only_when_lower():
    drugs = _catalogue()
    teen = CHILD.model_copy(update={"age": 17, "weight_kg": 40})
    assert rx.dose_limit(drugs["ibuprofen"], teen) == (1200, "weight-based: 30 mg/kg/day x 40 kg")
    heavy = CHILD.model_copy(update={"age": 16, "weight_kg": 90})  # 30 x 90 = 2700 is above the adult 2400
    assert rx.dose_limit(drugs["ibuprofen"], heavy) == (2400, "adult maximum")
    adult = teen.model_copy(update={"age": 18})
    assert rx.dose_limit(drugs["ibuprofen"], adult) == (2400, "adult maximum")
    assert rx.dose_limit(drugs["warfarin"], teen) == (15, "adult maximum")  # no weight rule for it
    renal_teen = teen.model_copy(update={"egfr": 25})
    assert rx.dose_limit(drugs["amoxicillin"], renal_teen)[0] == 1500  # renal 1500 below 90 x 40 = 3600 and 3000
