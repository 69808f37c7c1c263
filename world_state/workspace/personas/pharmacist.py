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
"""

from __future__ import annotations

import math
import random
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.tools import Query, ToolError, ToolSpec, exists, field_in, rule, tool
from servicegym.world_state.workspace.personas.formats import (
    SEED_START_TIME,
    day,
    last_call_index,
    new_id,
    person_names,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

Severity = Literal["minor", "moderate", "major", "contraindicated"]
SEVERITY_RANK = {"minor": 1, "moderate": 2, "major": 3, "contraindicated": 4}
RxStatus = Literal["pending", "on_hold", "approved", "rejected", "dispensed"]
ACTIVE = ("approved", "dispensed")


class RenalRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    egfr_below: float
    max_daily_mg: float  # 0: avoid


class Patient(Entity):
    id: str
    name: str
    age: int
    sex: Literal["female", "male"]
    weight_kg: float
    serum_creatinine_mg_dl: float
    egfr: float  # mL/min/1.73m2, the lab's latest value
    allergies: list[str] = []  # allergy groups, e.g. penicillin
    conditions: list[str] = []


class Drug(Entity):
    id: str  # lower-case generic name
    name: str
    drug_class: str
    purpose: str  # what it is used for, e.g. pain, infection
    strength_mg: float  # one tablet / capsule
    max_daily_mg: float
    max_mg_per_kg_day: float | None = None
    renal: list[RenalRule] = []
    allergy_groups: list[str] = []
    cross_reactive: list[str] = []
    stock_units: int = 0
    counseling: list[str] = []


class Interaction(Entity):
    id: str  # "drug_a+drug_b", names sorted
    drug_a: str
    drug_b: str
    severity: Severity
    effect: str
    advice: str


class Prescription(Entity):
    id: str
    patient_id: str
    drug: str
    dose_mg: float
    frequency_per_day: int
    duration_days: int
    prescriber: str
    written: str
    status: RxStatus = "pending"
    decision_reason: str = ""
    dispensed_units: int = 0
    notes: str = ""


class CounselingNote(Entity):
    id: str
    prescription_id: str
    patient_id: str
    text: str
    topics: list[str] = []
    time: str


SCHEMA: dict[str, type[Entity]] = {
    "rx_patients": Patient,
    "rx_drugs": Drug,
    "rx_interactions": Interaction,
    "rx_prescriptions": Prescription,
    "rx_counseling_notes": CounselingNote,
}

RX_SOURCES = ("list_prescriptions", "get_patient_medications")
PATIENT_SOURCES = ("search_patients", "get_prescription")
DRUG_SOURCES = ("search_drugs", "get_prescription")
CHECK_TOOLS = ("verify_prescription", "check_prescription_interactions")


# ---- rules ----------------------------------------------------------------------------------

def _drug(world: WorkspaceWorld, name: str) -> Drug:
    d = world.table("rx_drugs").get(name.strip().lower()) if isinstance(name, str) else None
    if d is None:
        raise ToolError(f"no drug {name!r} in the catalogue; find names with search_drugs")
    return d


def _rx(world: WorkspaceWorld, rx_id: str) -> Prescription:
    r = world.table("rx_prescriptions").get(rx_id)
    if r is None:
        raise ToolError(f"no prescription {rx_id!r}; find ids with list_prescriptions")
    return r


def _patient(world: WorkspaceWorld, pid: str) -> Patient:
    p = world.table("rx_patients").get(pid)
    if p is None:
        raise ToolError(f"no patient {pid!r}; find ids with search_patients")
    return p


def interaction_pairs(world: WorkspaceWorld, drugs: list[str]) -> list[dict[str, Any]]:
    """Every listed interaction and same-class duplication among ``drugs``, most severe first."""
    names = list(dict.fromkeys(_drug(world, d).id for d in drugs))
    table = world.table("rx_interactions")
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = sorted((a, b))
            row = table.get(f"{x}+{y}")
            if row is not None:
                out.append({"drugs": [x, y], "severity": row.severity, "effect": row.effect, "advice": row.advice})
            da, db = world.table("rx_drugs").get(a), world.table("rx_drugs").get(b)
            if da.drug_class == db.drug_class:
                out.append({"drugs": [x, y], "severity": "major", "effect": f"duplicate therapy: both are {da.drug_class}",
                            "advice": "use one drug of the class, not both"})
    out.sort(key=lambda p: (-SEVERITY_RANK[p["severity"]], p["drugs"]))
    return out


def dose_limit(drug: Drug, patient: Patient) -> tuple[float, str]:
    """The patient's daily limit for ``drug`` in mg and what it is based on."""
    limit, basis = drug.max_daily_mg, "adult maximum"
    if patient.age < 18 and drug.max_mg_per_kg_day is not None:
        wlimit = round(drug.max_mg_per_kg_day * patient.weight_kg, 1)
        if wlimit < limit:
            limit, basis = wlimit, f"weight-based: {drug.max_mg_per_kg_day:g} mg/kg/day x {patient.weight_kg:g} kg"
    for r in sorted(drug.renal, key=lambda r: r.egfr_below):
        if patient.egfr < r.egfr_below and r.max_daily_mg < limit:
            limit, basis = r.max_daily_mg, f"renal: eGFR {patient.egfr:g} < {r.egfr_below:g}"
            break
    return limit, basis


def dose_report(world: WorkspaceWorld, rx: Prescription) -> dict[str, Any]:
    drug, patient = _drug(world, rx.drug), _patient(world, rx.patient_id)
    daily = round(rx.dose_mg * rx.frequency_per_day, 2)
    limit, basis = dose_limit(drug, patient)
    avoid = limit == 0
    return {"prescription_id": rx.id, "drug": drug.id, "daily_mg": daily, "limit_mg": limit, "basis": basis,
            "percent_of_limit": None if avoid else round(daily / limit * 100, 1),
            "ok": (not avoid) and daily <= limit, "avoid": avoid}


def allergy_report(world: WorkspaceWorld, rx: Prescription) -> dict[str, Any]:
    drug, patient = _drug(world, rx.drug), _patient(world, rx.patient_id)
    conflicts = sorted(set(patient.allergies) & set(drug.allergy_groups))
    cautions = sorted(set(patient.allergies) & set(drug.cross_reactive))
    return {"prescription_id": rx.id, "drug": drug.id, "patient_allergies": patient.allergies, "conflicts": conflicts,
            "cross_reactivity_cautions": cautions, "ok": not conflicts}


def active_drugs(world: WorkspaceWorld, patient_id: str, exclude: str = "") -> list[str]:
    return list(dict.fromkeys(r.drug for r in world.table("rx_prescriptions")
                              if r.patient_id == patient_id and r.status in ACTIVE and r.id != exclude))


def rx_interactions(world: WorkspaceWorld, rx: Prescription) -> dict[str, Any]:
    others = active_drugs(world, rx.patient_id, exclude=rx.id)
    pairs = [p for p in interaction_pairs(world, [rx.drug, *others]) if rx.drug in p["drugs"]]
    return {"prescription_id": rx.id, "drug": rx.drug, "active_medications": others, "pairs": pairs}


def verification(world: WorkspaceWorld, rx: Prescription) -> dict[str, Any]:
    inter, dose, allergy = rx_interactions(world, rx), dose_report(world, rx), allergy_report(world, rx)
    problems: list[str] = []
    unsafe = False
    for p in inter["pairs"]:
        if SEVERITY_RANK[p["severity"]] >= 3:
            problems.append(f"{p['severity']} interaction {' + '.join(p['drugs'])}: {p['effect']}")
            unsafe |= p["severity"] == "contraindicated"
    if dose["avoid"]:
        problems.append(f"{rx.drug} should be avoided ({dose['basis']})")
        unsafe = True
    elif not dose["ok"]:
        problems.append(f"daily dose {dose['daily_mg']:g} mg exceeds the limit {dose['limit_mg']:g} mg ({dose['basis']})")
        unsafe = True
    for g in allergy["conflicts"]:
        problems.append(f"patient is allergic to {g}")
        unsafe = True
    for g in allergy["cross_reactivity_cautions"]:
        problems.append(f"possible cross-reactivity with the patient's {g} allergy")
    verdict = "unsafe" if unsafe else ("needs_review" if problems else "clear")
    return {"prescription_id": rx.id, "patient_id": rx.patient_id, "drug": rx.drug, "verdict": verdict,
            "problems": problems, "interactions": inter["pairs"], "dose": dose, "allergy": allergy}


def units_needed(world: WorkspaceWorld, rx: Prescription) -> int:
    drug = _drug(world, rx.drug)
    return math.ceil(rx.dose_mg / drug.strength_mg - 1e-9) * rx.frequency_per_day * rx.duration_days


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


# ---- seeded data ----------------------------------------------------------------------------

def _r(*pairs: tuple[float, float]) -> list[dict[str, float]]:
    return [{"egfr_below": e, "max_daily_mg": m} for e, m in pairs]


# id, class, purpose, strength, adult max/day, mg/kg/day, renal rules, allergy groups, cross-reactive, counselling
_DRUGS = [
    ("paracetamol", "analgesic", "pain", 500, 4000, 60, _r((30, 3000)), [], [], ["do not combine with other paracetamol products"]),
    ("ibuprofen", "nsaid", "pain", 400, 2400, 30, _r((30, 0)), ["nsaid"], [], ["take with food", "stop if stomach pain"]),
    ("naproxen", "nsaid", "pain", 250, 1000, 10, _r((30, 0)), ["nsaid"], [], ["take with food"]),
    ("tramadol", "opioid", "pain", 50, 400, None, _r((30, 200)), ["opioid"], [], ["may cause drowsiness; no alcohol"]),
    ("amoxicillin", "penicillin", "infection", 500, 3000, 90, _r((30, 1500)), ["penicillin"], [], ["finish the course"]),
    ("cephalexin", "cephalosporin", "infection", 500, 4000, 100, _r((30, 2000)), ["cephalosporin"], ["penicillin"],
     ["finish the course"]),
    ("clarithromycin", "macrolide", "infection", 500, 1000, 15, _r((30, 500)), ["macrolide"], [], ["finish the course"]),
    ("ciprofloxacin", "fluoroquinolone", "infection", 500, 1500, None, _r((30, 750)), ["fluoroquinolone"], [],
     ["avoid antacids within two hours"]),
    ("warfarin", "anticoagulant", "anticoagulation", 5, 15, None, [], [], [], ["keep INR appointments", "report bleeding"]),
    ("simvastatin", "statin", "cholesterol", 20, 40, None, [], [], [], ["take in the evening"]),
    ("atorvastatin", "statin", "cholesterol", 20, 80, None, [], [], [], ["report muscle pain"]),
    ("lisinopril", "ace inhibitor", "blood pressure", 10, 40, None, _r((30, 20)), ["ace inhibitor"], [],
     ["may cause a dry cough"]),
    ("amlodipine", "calcium channel blocker", "blood pressure", 5, 10, None, [], [], [], ["ankle swelling is common"]),
    ("spironolactone", "potassium-sparing diuretic", "blood pressure", 25, 100, None, _r((30, 0)), [], [],
     ["avoid potassium supplements"]),
    ("metformin", "biguanide", "diabetes", 500, 2550, None, _r((30, 0), (45, 1000)), [], [], ["take with meals"]),
    ("sertraline", "ssri", "depression", 50, 200, None, [], [], [], ["may take weeks to work"]),
    ("omeprazole", "proton pump inhibitor", "stomach acid", 20, 40, None, [], [], [], ["take before breakfast"]),
    ("pantoprazole", "proton pump inhibitor", "stomach acid", 40, 80, None, [], [], [], ["take before breakfast"]),
    ("clopidogrel", "antiplatelet", "anticoagulation", 75, 75, None, [], [], [], ["report bleeding"]),
    ("aspirin", "nsaid", "anticoagulation", 75, 4000, None, _r((10, 0)), ["nsaid"], [], ["take with food"]),
]

_INTERACTIONS = [
    ("warfarin", "ibuprofen", "major", "raises bleeding risk", "avoid; paracetamol is preferred for pain"),
    ("warfarin", "naproxen", "major", "raises bleeding risk", "avoid; paracetamol is preferred for pain"),
    ("warfarin", "aspirin", "major", "raises bleeding risk", "only with specialist agreement; monitor closely"),
    ("warfarin", "clarithromycin", "major", "raises INR", "check INR within 3-5 days or choose another antibiotic"),
    ("warfarin", "ciprofloxacin", "moderate", "may raise INR", "monitor INR during the course"),
    ("simvastatin", "clarithromycin", "contraindicated", "high risk of muscle damage",
     "pause simvastatin during the course or choose another antibiotic"),
    ("atorvastatin", "clarithromycin", "moderate", "raises statin levels", "limit atorvastatin to 20 mg a day"),
    ("simvastatin", "amlodipine", "moderate", "raises statin levels", "limit simvastatin to 20 mg a day"),
    ("lisinopril", "spironolactone", "major", "high potassium", "check potassium and kidney function"),
    ("lisinopril", "ibuprofen", "moderate", "reduced blood-pressure control and kidney strain", "short courses only"),
    ("sertraline", "tramadol", "major", "serotonin toxicity and seizures", "avoid; choose another analgesic"),
    ("clopidogrel", "omeprazole", "moderate", "weaker antiplatelet effect", "prefer pantoprazole"),
    ("sertraline", "aspirin", "moderate", "raises bleeding risk", "consider stomach protection"),
    ("metformin", "ciprofloxacin", "minor", "blood sugar changes", "monitor blood sugar"),
    ("clopidogrel", "ibuprofen", "moderate", "raises bleeding risk", "avoid regular use"),
]

_CONDITIONS = ["hypertension", "type 2 diabetes", "atrial fibrillation", "high cholesterol", "depression",
               "osteoarthritis", "reflux", "chronic kidney disease"]
_LONG_TERM = ["warfarin", "simvastatin", "atorvastatin", "lisinopril", "amlodipine", "metformin", "sertraline",
              "clopidogrel", "spironolactone", "omeprazole"]
_ACUTE = ["paracetamol", "ibuprofen", "naproxen", "tramadol", "amoxicillin", "cephalexin", "clarithromycin",
          "ciprofloxacin", "aspirin"]


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    drugs = []
    for (name, cls, purpose, strength, mx, perkg, renal, groups, cross, couns) in _DRUGS:
        drugs.append({"id": name, "name": name.capitalize(), "drug_class": cls, "purpose": purpose, "strength_mg": strength,
                      "max_daily_mg": mx, "max_mg_per_kg_day": perkg, "renal": renal, "allergy_groups": groups,
                      "cross_reactive": cross, "stock_units": rng.randint(6, 30) * 10, "counseling": couns})
    by_id = {d["id"]: d for d in drugs}
    interactions = [{"id": "+".join(sorted((a, b))), "drug_a": min(a, b), "drug_b": max(a, b), "severity": s,
                     "effect": e, "advice": adv} for a, b, s, e, adv in _INTERACTIONS]
    names = person_names(rng, 10)
    patients = []
    for i, name in enumerate(names):
        child = i == 0 or rng.random() < 0.1
        age = rng.randint(4, 16) if child else rng.randint(24, 88)
        sex = rng.choice(["female", "male"])
        weight = round(rng.uniform(16, 55), 1) if child else round(rng.uniform(48, 110), 1)
        scr = round(rng.uniform(0.5, 0.9), 2) if child else round((rng.uniform(1.4, 2.6) if rng.random() < 0.25 else rng.uniform(0.6, 1.2)), 2)
        if child:
            egfr = float(rng.randint(90, 125))
        else:
            egfr = round((140 - age) * weight / (72 * scr) * (0.85 if sex == "female" else 1.0), 1)
        allergies = rng.sample(["penicillin", "nsaid", "macrolide", "opioid"], rng.choice([0, 0, 0, 1, 1, 2]))
        conds = [] if child else sorted(rng.sample(_CONDITIONS, rng.randint(1, 3)))
        if egfr < 45 and "chronic kidney disease" not in conds and not child:
            conds = sorted(conds + ["chronic kidney disease"])
        patients.append({"id": f"PT{i + 1:03d}", "name": name, "age": age, "sex": sex, "weight_kg": weight,
                         "serum_creatinine_mg_dl": scr, "egfr": egfr, "allergies": sorted(allergies), "conditions": conds})
    prescribers = [f"Dr. {n}" for n in person_names(rng, 4)]
    rxs = []

    def add(pid: str, drug: str, status: str, written: int, overdose: bool = False) -> None:
        d = by_id[drug]
        per = rng.choice([1, 1, 2]) * d["strength_mg"]
        freq = rng.choice([1, 2, 3]) if d["max_daily_mg"] >= per * 3 else 1
        if overdose:
            freq = max(freq, 2)
            per = math.ceil(d["max_daily_mg"] * 1.25 / freq / d["strength_mg"]) * d["strength_mg"]
        while per * freq > d["max_daily_mg"] and not overdose and per > d["strength_mg"]:
            per -= d["strength_mg"]
        while per * freq > d["max_daily_mg"] and not overdose and freq > 1:
            freq -= 1
        rxs.append({"id": f"RX{len(rxs) + 1:03d}", "patient_id": pid, "drug": drug, "dose_mg": per, "frequency_per_day": freq,
                    "duration_days": 28 if drug in _LONG_TERM else rng.choice([5, 7, 10]), "prescriber": rng.choice(prescribers),
                    "written": day(written), "status": status, "decision_reason": "verified clear" if status in ACTIVE else "",
                    "dispensed_units": 0, "notes": ""})

    for p in patients:
        if p["age"] >= 18:
            for drug in rng.sample(_LONG_TERM, rng.randint(1, 2)):
                add(p["id"], drug, "dispensed", -rng.randint(20, 60))
    for k, p in enumerate(rng.sample(patients, 8)):
        drug = rng.choice(_ACUTE)
        if k == 1:  # one pending prescription that interacts with what the patient already takes
            risky = [(r["patient_id"], a if b == r["drug"] else b) for r in rxs for a, b, sev, _, _ in _INTERACTIONS
                     if r["drug"] in (a, b) and sev in ("major", "contraindicated") and {a, b} & set(_ACUTE)]
            if risky:
                pid, drug = rng.choice(sorted(risky))
                p = next(x for x in patients if x["id"] == pid)
        add(p["id"], drug, "pending", -rng.randint(0, 2), overdose=(k == 2))
    for r in rxs:
        if r["status"] == "dispensed":
            r["dispensed_units"] = math.ceil(r["dose_mg"] / by_id[r["drug"]]["strength_mg"]) * r["frequency_per_day"] * r["duration_days"]
    notes = [{"id": f"CN{j + 1:03d}", "prescription_id": r["id"], "patient_id": r["patient_id"],
              "text": f"Explained how to take {r['drug']}: {by_id[r['drug']]['counseling'][0]}.",
              "topics": [by_id[r["drug"]]["counseling"][0]], "time": f"{r['written']} 11:00:00"}
             for j, r in enumerate(x for x in rxs if x["status"] == "dispensed")][:6]
    return {"rx_patients": patients, "rx_drugs": drugs, "rx_interactions": interactions, "rx_prescriptions": rxs,
            "rx_counseling_notes": notes}
