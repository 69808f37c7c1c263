"""Persona pharmacist: its records and rules (the tools that use them are in ``pharmacist``).

- the entity rows and ``SCHEMA``: patients, the drug catalogue (with renal rules), interactions,
  prescriptions and counselling notes, with the severities and prescription statuses;
- the rules: look-ups of a drug, prescription or patient, interaction pairs, the dose limit and
  dose report, the allergy report, a patient's active drugs, a prescription's verification and the
  units it needs;
- the seeded data (``seed_tables``): the project's own simplified catalogue, not clinical guidance.

``pharmacist``'s docstring states the rules; it re-exports ``SCHEMA``, ``seed_tables`` and the
names other code reads from here.
"""

from __future__ import annotations

import math
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from servicegym.world_state.core import Entity
from servicegym.world_state.tools import ToolError
from servicegym.world_state.workspace.personas.formats import day, person_names
from servicegym.world_state.workspace.world import WorkspaceWorld

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
