"""Persona: pharmacist. Patients (age, weight, renal function, allergies), a drug catalogue (class,
strength, adult maximum daily dose, weight-based paediatric limit, renal limits, allergy groups,
stock), an interaction table, prescriptions with a review workflow (pending -> on_hold /
approved / rejected; approved -> dispensed) and counselling notes.

The catalogue is the project's own simplified simulation data for an agent benchmark, not
clinical guidance. Rules, all deterministic:
- daily dose = dose_mg x frequency_per_day; the limit is the adult maximum, lowered to
  max_mg_per_kg_day x weight for patients under 18, and to the strictest renal rule whose
  ``egfr_below`` exceeds the patient's eGFR (a renal limit of 0 means "avoid");
- an allergy conflict when a patient's allergy group is one of the drug's groups; a caution when
  it is one of the drug's cross-reactive groups;
- interactions come from the table (minor < moderate < major < contraindicated); two active drugs
  of the same class are a duplication (major);
- verdict: ``unsafe`` (contraindicated interaction, allergy, dose over the limit, renal "avoid"),
  ``needs_review`` (major interaction, duplication, cross-reactivity caution), else ``clear``.

This module holds the tools (with their pre-conditions) and the registration (``TOOLS``,
``PROFILE``); ``pharmacist_model`` holds the entities and ``SCHEMA``, the rules and the seeded data
(``seed_tables``), re-exported here with the other names that code outside reads from this module.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import Query, ToolError, ToolSpec, exists, field_in, rule, tool
from servicegym.world_state.workspace.personas.formats import SEED_START_TIME, last_call_index, new_id
from servicegym.world_state.workspace.personas.pharmacist_model import (
    ACTIVE,
    SCHEMA,
    SEVERITY_RANK,
    CounselingNote,
    Drug,
    Interaction,
    Patient,
    Prescription,
    RxStatus,
    _drug,
    _patient,
    _rx,
    active_drugs,
    allergy_report,
    dose_limit,
    dose_report,
    interaction_pairs,
    rx_interactions,
    seed_tables,
    units_needed,
    verification,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

# what the persona registry reads (``SCHEMA``, ``TOOLS``, ``PROFILE``, ``seed_tables``) and the
# names of ``pharmacist_model`` that other code reads from this module
__all__ = [
    "PROFILE", "SCHEMA", "TOOLS", "Drug", "Interaction", "Patient", "Prescription", "dose_limit", "seed_tables",
]


RX_SOURCES = ("list_prescriptions", "get_patient_medications")
PATIENT_SOURCES = ("search_patients", "get_prescription")
DRUG_SOURCES = ("search_drugs", "get_prescription")
CHECK_TOOLS = ("verify_prescription", "check_prescription_interactions")


# ---- pre-conditions -------------------------------------------------------------------------

def _checked_since_amendment(world: World, history: History, args: dict[str, Any]) -> str | None:
    rx_id = args.get("prescription_id")
    checked = last_call_index(history, CHECK_TOOLS, prescription_id=rx_id)
    if checked < 0:
        return f"run verify_prescription (or check_prescription_interactions) for {rx_id!r} first"
    if last_call_index(history, ("amend_prescription",), prescription_id=rx_id) > checked:
        return f"prescription {rx_id} was amended after its last check; run verify_prescription again"
    return None


def _has_counseling(world: World, history: History, args: dict[str, Any]) -> str | None:
    rx_id = args.get("prescription_id")
    if any(n.prescription_id == rx_id for n in world.table("rx_counseling_notes")):
        return None
    return f"record a counselling note for {rx_id!r} with add_counseling_note before dispensing"


def _exists_rx(produced=RX_SOURCES):
    return exists("rx_prescriptions", "prescription_id", "prescription", produced)


# ---- look-ups -------------------------------------------------------------------------------

@tool("read")
def search_patients(world: WorkspaceWorld, name: Query = "", condition: str | None = None) -> list[dict[str, Any]]:
    """Patients whose name contains ``name`` (case-insensitive), optionally with a condition.

    Args:
        name: part of the name (empty: all)
        condition: a condition the patient has, e.g. hypertension
    """
    n = name.strip().lower()
    return [{"id": p.id, "name": p.name, "age": p.age, "sex": p.sex} for p in world.table("rx_patients")
            if n in p.name.lower() and (condition is None or condition.lower() in p.conditions)]


@tool("read", pre=[exists("rx_patients", "patient_id", "patient", PATIENT_SOURCES)])
def get_patient(world: WorkspaceWorld, patient_id: str) -> dict[str, Any]:
    """A patient's record: age, sex, weight, serum creatinine, eGFR, allergies and conditions.

    Args:
        patient_id: the patient id, e.g. PT001
    """
    return _patient(world, patient_id).model_dump(mode="json")


@tool("read", pre=[exists("rx_patients", "patient_id", "patient", PATIENT_SOURCES)])
def get_patient_medications(world: WorkspaceWorld, patient_id: str) -> dict[str, Any]:
    """A patient's prescriptions split into active (approved or dispensed) and awaiting review (pending, on hold).

    Args:
        patient_id: the patient
    """
    rows = [r for r in world.table("rx_prescriptions") if r.patient_id == patient_id]
    card = lambda r: {"id": r.id, "drug": r.drug, "dose_mg": r.dose_mg, "frequency_per_day": r.frequency_per_day,  # noqa: E731
                      "status": r.status}
    return {"patient_id": patient_id, "active": [card(r) for r in rows if r.status in ACTIVE],
            "awaiting_review": [card(r) for r in rows if r.status in ("pending", "on_hold")]}


@tool("read", pre=[_exists_rx()])
def get_prescription(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """One prescription in full.

    Args:
        prescription_id: the prescription id, e.g. RX001
    """
    return _rx(world, prescription_id).model_dump(mode="json")


@tool("read")
def list_prescriptions(world: WorkspaceWorld, status: RxStatus | None = None, patient_id: str | None = None,
                       prescriber: str | None = None) -> list[dict[str, Any]]:
    """Prescriptions, oldest written first.

    Args:
        status: pending, on_hold, approved, rejected or dispensed
        patient_id: only this patient's
        prescriber: only this prescriber's (exact name)
    """
    rows = [r for r in world.table("rx_prescriptions") if (status is None or r.status == status)
            and (patient_id is None or r.patient_id == patient_id) and (prescriber is None or r.prescriber == prescriber)]
    return [r.model_dump(mode="json") for r in sorted(rows, key=lambda r: (r.written, r.id))]


@tool("read")
def search_drugs(world: WorkspaceWorld, query: Query = "", drug_class: str | None = None,
                 purpose: str | None = None) -> list[dict[str, Any]]:
    """Catalogue drugs whose name or class contains ``query``.

    Args:
        query: part of a name or class (empty: all)
        drug_class: exact class, e.g. nsaid
        purpose: exact purpose, e.g. pain
    """
    q = query.strip().lower()
    return [{"id": d.id, "name": d.name, "drug_class": d.drug_class, "purpose": d.purpose, "strength_mg": d.strength_mg}
            for d in world.table("rx_drugs") if (q in d.id or q in d.drug_class)
            and (drug_class is None or d.drug_class == drug_class) and (purpose is None or d.purpose == purpose)]


@tool("read")
def get_drug(world: WorkspaceWorld, drug: str) -> dict[str, Any]:
    """One catalogue drug: class, strength, dose limits, renal rules, allergy groups, stock and counselling points.

    Args:
        drug: generic name, e.g. ibuprofen
    """
    return _drug(world, drug).model_dump(mode="json")


@tool("read")
def check_stock(world: WorkspaceWorld, drug: str) -> dict[str, Any]:
    """Units in stock of a drug and units committed to approved, not yet dispensed prescriptions.

    Args:
        drug: generic name
    """
    d = _drug(world, drug)
    committed = sum(units_needed(world, r) for r in world.table("rx_prescriptions") if r.drug == d.id and r.status == "approved")
    return {"drug": d.id, "stock_units": d.stock_units, "committed_units": committed,
            "available_units": d.stock_units - committed}


@tool("write")
def restock_drug(world: WorkspaceWorld, drug: str, units: Annotated[int, Field(ge=1, le=10000)]) -> dict[str, Any]:
    """Record a delivery of stock.

    Args:
        drug: generic name
        units: tablets or capsules received (1-10000)
    """
    d = _drug(world, drug)
    d = world.table("rx_drugs").update(d.id, stock_units=d.stock_units + units)
    return {"drug": d.id, "stock_units": d.stock_units}


# ---- checks ---------------------------------------------------------------------------------

@tool("read")
def check_interactions(world: WorkspaceWorld, drugs: list[str]) -> dict[str, Any]:
    """Interactions among a list of drugs (and same-class duplications), most severe first.

    Args:
        drugs: generic names, at least two
    """
    if len(set(d.strip().lower() for d in drugs)) < 2:
        raise ToolError("give at least two different drugs")
    pairs = interaction_pairs(world, drugs)
    worst = pairs[0]["severity"] if pairs else "none"
    return {"drugs": [_drug(world, d).id for d in drugs], "pairs": pairs, "worst": worst}


@tool("read", pre=[_exists_rx()])
def check_prescription_interactions(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """Interactions between a prescription's drug and the patient's active medications.

    Args:
        prescription_id: the prescription
    """
    return rx_interactions(world, _rx(world, prescription_id))


@tool("read", pre=[_exists_rx()])
def check_dose(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """Daily dose (dose x frequency) against the patient's limit: the adult maximum, the weight-based limit under 18,
    or the renal limit for the patient's eGFR.

    Args:
        prescription_id: the prescription
    """
    return dose_report(world, _rx(world, prescription_id))


@tool("read", pre=[_exists_rx()])
def check_allergy(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """Whether the prescribed drug belongs to one of the patient's allergy groups (or a cross-reactive one).

    Args:
        prescription_id: the prescription
    """
    return allergy_report(world, _rx(world, prescription_id))


@tool("read", pre=[_exists_rx()])
def verify_prescription(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """All checks at once (interactions with active medications, dose, allergy) with a verdict: clear, needs_review or unsafe.

    Args:
        prescription_id: the prescription
    """
    return verification(world, _rx(world, prescription_id))


@tool("read")
def renal_dose_limit(world: WorkspaceWorld, drug: str, egfr: Annotated[float, Field(ge=0, le=200)]) -> dict[str, Any]:
    """The adult daily limit of a drug at a given eGFR (0 means avoid).

    Args:
        drug: generic name
        egfr: estimated glomerular filtration rate, mL/min/1.73m2
    """
    d = _drug(world, drug)
    limit, basis = d.max_daily_mg, "adult maximum"
    for r in sorted(d.renal, key=lambda r: r.egfr_below):
        if egfr < r.egfr_below:
            limit, basis = r.max_daily_mg, f"renal: eGFR {egfr:g} < {r.egfr_below:g}"
            break
    return {"drug": d.id, "egfr": egfr, "limit_mg": limit, "basis": basis, "avoid": limit == 0}


@tool("read", pre=[exists("rx_patients", "patient_id", "patient", PATIENT_SOURCES)])
def creatinine_clearance(world: WorkspaceWorld, patient_id: str) -> dict[str, Any]:
    """Cockcroft-Gault creatinine clearance: (140 - age) x weight_kg / (72 x serum creatinine mg/dL), x 0.85 for
    female patients; rounded to 0.1 mL/min.

    Args:
        patient_id: the patient
    """
    p = _patient(world, patient_id)
    crcl = (140 - p.age) * p.weight_kg / (72 * p.serum_creatinine_mg_dl) * (0.85 if p.sex == "female" else 1.0)
    return {"patient_id": p.id, "crcl_ml_min": round(crcl, 1), "egfr": p.egfr}


@tool("read", pre=[_exists_rx()])
def suggest_alternatives(world: WorkspaceWorld, prescription_id: str) -> list[dict[str, Any]]:
    """Catalogue drugs with the same purpose that this patient could take instead: no allergy conflict, no major or
    contraindicated interaction with the active medications, not "avoid" for the patient's kidneys.

    Args:
        prescription_id: the prescription
    """
    rx = _rx(world, prescription_id)
    drug, patient = _drug(world, rx.drug), _patient(world, rx.patient_id)
    others = active_drugs(world, rx.patient_id, exclude=rx.id)
    out = []
    for d in world.table("rx_drugs"):
        if d.purpose != drug.purpose or d.id == drug.id or d.id in others:
            continue
        if set(patient.allergies) & set(d.allergy_groups):
            continue
        pairs = [p for p in interaction_pairs(world, [d.id, *others]) if d.id in p["drugs"]]
        if any(SEVERITY_RANK[p["severity"]] >= 3 for p in pairs):
            continue
        limit, basis = dose_limit(d, patient)
        if limit == 0:
            continue
        out.append({"drug": d.id, "drug_class": d.drug_class, "limit_mg": limit, "basis": basis,
                    "interactions": [f"{p['severity']}: {' + '.join(p['drugs'])}" for p in pairs]})
    return out


@tool("read", pre=[_exists_rx()])
def dispense_quantity(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """Units to dispense: ceil(dose / strength) x frequency x duration days.

    Args:
        prescription_id: the prescription
    """
    rx = _rx(world, prescription_id)
    return {"prescription_id": rx.id, "drug": rx.drug, "units": units_needed(world, rx),
            "strength_mg": _drug(world, rx.drug).strength_mg}


# ---- decisions ------------------------------------------------------------------------------

@tool("write", pre=[_exists_rx(), field_in("rx_prescriptions", "prescription_id", "prescription", ["pending", "on_hold"]),
                    rule("verify_prescription or check_prescription_interactions must have run for this prescription "
                         "after its last amendment", _checked_since_amendment, CHECK_TOOLS)])
def approve_prescription(world: WorkspaceWorld, prescription_id: str, override_reason: str = "") -> dict[str, Any]:
    """Approve a prescription for dispensing. Refused when the verdict is unsafe; a needs_review verdict needs an
    override_reason (e.g. the prescriber confirmed and monitoring is arranged).

    Args:
        prescription_id: the prescription
        override_reason: why a needs_review prescription is approved anyway
    """
    rx = _rx(world, prescription_id)
    v = verification(world, rx)
    if v["verdict"] == "unsafe":
        raise ToolError("cannot approve an unsafe prescription: " + "; ".join(v["problems"]) + ". Hold or reject it")
    if v["verdict"] == "needs_review" and not override_reason.strip():
        raise ToolError("the prescription needs review (" + "; ".join(v["problems"]) + "); give override_reason to approve")
    reason = override_reason.strip() or "verified clear"
    return world.table("rx_prescriptions").update(rx.id, status="approved", decision_reason=reason).model_dump(mode="json")


@tool("write", pre=[_exists_rx(), field_in("rx_prescriptions", "prescription_id", "prescription", ["pending"])])
def hold_prescription(world: WorkspaceWorld, prescription_id: str, reason: str) -> dict[str, Any]:
    """Put a pending prescription on hold (e.g. while the prescriber is contacted).

    Args:
        prescription_id: the prescription
        reason: why it is held
    """
    if not reason.strip():
        raise ToolError("reason must not be empty")
    return world.table("rx_prescriptions").update(prescription_id, status="on_hold",
                                                   decision_reason=reason.strip()).model_dump(mode="json")


@tool("write", pre=[_exists_rx(), field_in("rx_prescriptions", "prescription_id", "prescription", ["pending", "on_hold"])])
def reject_prescription(world: WorkspaceWorld, prescription_id: str, reason: str) -> dict[str, Any]:
    """Reject a pending or held prescription.

    Args:
        prescription_id: the prescription
        reason: why it is rejected (shown to the prescriber)
    """
    if not reason.strip():
        raise ToolError("reason must not be empty")
    return world.table("rx_prescriptions").update(prescription_id, status="rejected",
                                                   decision_reason=reason.strip()).model_dump(mode="json")


@tool("write", pre=[_exists_rx(), field_in("rx_prescriptions", "prescription_id", "prescription", ["pending", "on_hold"])])
def amend_prescription(world: WorkspaceWorld, prescription_id: str,
                       dose_mg: Annotated[float, Field(gt=0, le=10000)] | None = None,
                       frequency_per_day: Annotated[int, Field(ge=1, le=12)] | None = None,
                       duration_days: Annotated[int, Field(ge=1, le=365)] | None = None,
                       note: str = "") -> dict[str, Any]:
    """Change a pending or held prescription's dose, frequency or duration (as agreed with the prescriber); it must be
    verified again before approval.

    Args:
        prescription_id: the prescription
        dose_mg: new dose per administration, mg
        frequency_per_day: new administrations per day
        duration_days: new course length in days
        note: what was agreed, appended to the notes
    """
    changes = {k: v for k, v in (("dose_mg", dose_mg), ("frequency_per_day", frequency_per_day),
                                 ("duration_days", duration_days)) if v is not None}
    if not changes:
        raise ToolError("give dose_mg, frequency_per_day or duration_days")
    rx = _rx(world, prescription_id)
    if note.strip():
        changes["notes"] = f"{rx.notes}\n{note.strip()}".strip()
    return world.table("rx_prescriptions").update(prescription_id, **changes).model_dump(mode="json")


@tool("write", pre=[_exists_rx()])
def add_counseling_note(world: WorkspaceWorld, prescription_id: str, text: str, topics: list[str] | None = None) -> dict[str, Any]:
    """Record what the patient was counselled on for a prescription.

    Args:
        prescription_id: the prescription
        text: the counselling given
        topics: short topic labels, e.g. ["take with food", "bleeding signs"]
    """
    if len(text.split()) < 3:
        raise ToolError("text must be at least three words")
    rx = _rx(world, prescription_id)
    table = world.table("rx_counseling_notes")
    note = CounselingNote(id=new_id(table, world.ids, "CN"), prescription_id=rx.id, patient_id=rx.patient_id,
                          text=text.strip(), topics=[t.strip() for t in topics or [] if t.strip()], time=world.clock.text())
    return table.insert(note).model_dump(mode="json")


@tool("read")
def list_counseling_notes(world: WorkspaceWorld, patient_id: str | None = None,
                          prescription_id: str | None = None) -> list[dict[str, Any]]:
    """Counselling notes, oldest first.

    Args:
        patient_id: only this patient's
        prescription_id: only this prescription's
    """
    return [n.model_dump(mode="json") for n in world.table("rx_counseling_notes")
            if (patient_id is None or n.patient_id == patient_id)
            and (prescription_id is None or n.prescription_id == prescription_id)]


@tool("write", pre=[_exists_rx(), field_in("rx_prescriptions", "prescription_id", "prescription", ["approved"]),
                    rule("a counselling note must exist for the prescription", _has_counseling, ["add_counseling_note"])])
def dispense(world: WorkspaceWorld, prescription_id: str) -> dict[str, Any]:
    """Dispense an approved prescription: takes dispense_quantity units from stock (refused if stock is short).

    Args:
        prescription_id: the prescription
    """
    rx = _rx(world, prescription_id)
    drug = _drug(world, rx.drug)
    units = units_needed(world, rx)
    if drug.stock_units < units:
        raise ToolError(f"only {drug.stock_units} units of {drug.id} in stock, {units} needed; restock_drug first")
    world.table("rx_drugs").update(drug.id, stock_units=drug.stock_units - units)
    row = world.table("rx_prescriptions").update(rx.id, status="dispensed", dispensed_units=units)
    return row.model_dump(mode="json") | {"stock_left": drug.stock_units - units}


@tool("write", pre=[rule("every prescription must exist", lambda w, h, a: next(
    (f"no prescription {r!r}" for r in a.get("prescription_ids") or [] if r not in w.table("rx_prescriptions")), None),
    RX_SOURCES)])
def export_verification_report(world: WorkspaceWorld, path: str, prescription_ids: list[str],
                               overwrite: bool = False) -> dict[str, Any]:
    """Write a Markdown report of the verification of each prescription (verdict, dose, allergy, interactions).

    Args:
        path: workspace path ending in .md or .txt
        prescription_ids: the prescriptions, in order
        overwrite: replace an existing file
    """
    ids = list(dict.fromkeys(prescription_ids))
    if not ids:
        raise ToolError("prescription_ids must name at least one prescription")
    lines = ["# Prescription verification report", ""]
    for rid in ids:
        rx = _rx(world, rid)
        v = verification(world, rx)
        d = v["dose"]
        lines += [f"## {rx.id}: {rx.drug} {rx.dose_mg:g} mg x {rx.frequency_per_day}/day for {rx.patient_id}",
                  f"- verdict: {v['verdict']}", f"- status: {rx.status}",
                  f"- daily dose: {d['daily_mg']:g} mg (limit {d['limit_mg']:g} mg, {d['basis']})",
                  f"- allergy conflicts: {', '.join(v['allergy']['conflicts']) or 'none'}"]
        lines += [f"- interaction: {p['severity']} {' + '.join(p['drugs'])}: {p['advice']}" for p in v["interactions"]]
        lines += [f"- problem: {p}" for p in v["problems"]] + [""]
    text = "\n".join(lines)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "prescriptions": len(ids), "chars": len(text)}


TOOLS: list[ToolSpec] = [
    search_patients, get_patient, get_patient_medications, get_prescription, list_prescriptions, search_drugs,
    get_drug, check_stock, restock_drug, check_interactions, check_prescription_interactions, check_dose,
    check_allergy, verify_prescription, renal_dose_limit, creatinine_clearance, suggest_alternatives,
    dispense_quantity, approve_prescription, hold_prescription, reject_prescription, amend_prescription,
    add_counseling_note, list_counseling_notes, dispense, export_verification_report,
]

PROFILE: dict[str, Any] = {
    "key": "pharmacist", "title": "clinical pharmacist", "owner": "Hana Sato", "owner_email": "hana.sato@greenway-pharmacy.com",
    "organization": "Greenway Pharmacy", "domain": "greenway-pharmacy.com", "start": SEED_START_TIME,
}
