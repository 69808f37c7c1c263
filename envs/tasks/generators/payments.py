"""Long-horizon payments tasks (BizBench-style) with golden traces and checker counterexamples.

One merchant asks for three coupled workflows at once:

- refunds of several customer payments, paid from a reserve account that must stay above its
  governing floor at every ledger entry: some refunds fit now, the last needs a settlement that
  arrives later on the clock; one requested payment may lie outside the governing refund window;
- a review case whose hold blocks the requested payout: the merchant must upload the document
  the *current* review policy requires, the case must be submitted before its deadline (which
  falls before the settlement: waiting for the settlement first lets the case expire), and the
  review completes only after a wait;
- a payout above the single-payout limit, so it is split, each part approved for its exact
  terms; a new version of the payout policy (a lower limit) takes effect while the agent waits
  for the review, so the limit read earlier is superseded by the time the payout runs; from
  difficulty 3 a higher reserve floor also takes effect as the settlement arrives;
- from difficulty 3, a conversion of a fixed amount into the merchant's second-currency account
  and a payout of the converted amount to its bank account in that currency: the rate moves
  while the agent waits for the review, so it must quote at the moment of conversion and have
  the converted (not the source) amount approved;
- at difficulty 4 the merchant wants the payout as a single transfer above every policy limit:
  a limit-increase application with the document the payout policy requires must be submitted
  at the start, and the payout may run only after the application's decision (a scheduled event
  after the review) took effect.

Operations workflows join from difficulty 1, each with its own governing policy (pinned in the
merchant's scope beside a superseded version whose rule differs) and coupled to the rest through
the clock, approvals and the customer's one write a turn:

- from difficulty 1, last month's statement of the operating account, generated from the ledger
  and issued;
- from difficulty 2, a chargeback to contest before its response deadline (which falls before the
  settlement: contesting after the final wait is too late), with the evidence document the
  current disputes policy names (the superseded version names another, and the card network
  decides by the current one, later on the clock); at difficulty 4 a second, small dispute below
  the policy's automatic-acceptance amount, which is accepted, not contested;
- from difficulty 3, the chargeback fee(s) the merchant wants waived: a waiver above the fees
  policy's limit needs the merchant's approval of its exact terms first;
- at difficulty 4, a settlement whose lines and net differ by more than the reconciliation
  tolerance (break recorded, investigated, resolved, then reconciled), and a business (KYB)
  verification with every document the current verifications policy lists (the superseded
  version lists fewer), decided later on the clock.

``payments_plan(scn, **flags)`` writes the golden trace and, with flags, its counterexamples
(violations the checker must reject) and legal alternatives (reorderings, idempotent retries);
``payments_variants`` lists them all with the checks each must fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from servicegym.envs.tasks.generators.common import IdPool, task_rng
from servicegym.envs.tasks.model import Task
from servicegym.simulators.scripted_user import HiddenFact, UserScript
from servicegym.world_state.core import TIME_FORMAT, parse_time
from servicegym.world_state.payments.knowledge import EVIDENCE_DOC_TYPES, policy_document_row
from servicegym.world_state.payments.world import (
    CURRENCIES,
    DEFAULT_FX_RATES,
    DOC_TYPES,
    REGIONS,
    TIERS,
    money,
)
from servicegym.world_state.tools import dumps

VERSION = 3
DOMAIN = "payments"
NAMES = ("Avery Chen", "Jordan Patel", "Sam Okafor", "Riley Novak", "Morgan Silva", "Casey Nguyen", "Taylor Brooks")
SHOPS = ("Lumen Coffee", "Northwind Books", "Harbor Bikes", "Juniper Florals", "Atlas Outdoor", "Pixel Repair", "Mosaic Tea")
BANKS = ("First Harbor Bank", "Summit Credit Union", "Crescent Bank")
PRODUCTS_DESC = {"payouts": "payout", "refunds": "refund", "reserves": "reserve", "reviews": "review"}
# the procedure document (knowledge.PROCEDURES) of each operations product a task uses
OPS_PROCEDURES = {"disputes": "KB-P07", "fees": "KB-P08", "settlements": "KB-P09", "verifications": "KB-P10"}


@dataclass
class Scenario:
    now: str
    kb_seed: int
    merchant: dict[str, Any]
    ops: str
    reserve: str
    banks: list[str]
    destination: str
    others: list[dict[str, Any]]
    tables: dict[str, list[dict[str, Any]]]
    docs: dict[str, str]  # role -> doc id: payouts_v2, payouts_v3, refunds, reserves, reviews
    limits: dict[str, float]  # v2, v3
    threshold: float
    floor: float
    required_doc: str
    refunds_now: list[tuple[str, float]]
    refund_later: tuple[str, float]
    ineligible: tuple[str, float] | None
    parts: list[float]
    payout_total: float
    case_id: str
    hold_id: str
    customer_name: str
    review_minutes: int
    settle_after: int
    app: dict[str, Any] | None = None  # difficulty 4: a payout-limit increase application (doc, wrong, minutes, limit)
    fx: dict[str, Any] | None = None  # difficulty 3+: a conversion into a second-currency account, paid out from there
    # the operations workflows (statement, dispute, accept, fees, settlement, kyb), each only from its difficulty
    work: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _t(base: Any, **delta: float) -> str:
    t = base + timedelta(**delta)
    # ``isoformat(" ")`` is ``strftime(TIME_FORMAT)``'s text for whole seconds in years 1000-9999, at a
    # fraction of its cost (a task writes dozens of times)
    return t.isoformat(" ") if not t.microsecond and t.year >= 1000 and t.tzinfo is None else t.strftime(TIME_FORMAT)


def build_scenario(seed: int, difficulty: int, split: str) -> Scenario:
    rng = task_rng(DOMAIN, split, seed, difficulty, VERSION)
    ids = IdPool(rng)
    now_dt = parse_time("2026-03-02 09:00:00") + timedelta(days=rng.randint(0, 200), minutes=15 * rng.randint(0, 24))
    now = now_dt.strftime(TIME_FORMAT)
    region, tier, cur = rng.choice(REGIONS), rng.choice(TIERS), rng.choice(CURRENCIES)
    mid = ids.new("M", 5)
    shop = rng.choice(SHOPS)
    person = rng.choice(NAMES)
    tables: dict[str, list[dict[str, Any]]] = {k: [] for k in ("merchants", "accounts", "bank_accounts", "ledger", "holds", "payments", "cases", "events", "documents")}
    seq = 0

    def ledger(acc: str, amount: float, kind: str) -> None:
        nonlocal seq
        seq += 1
        tables["ledger"].append({"id": f"LE{seq:05d}", "seq": seq, "time": _t(now_dt, days=-3), "step": 0, "account_id": acc,
                                 "amount": money(amount), "kind": kind, "ref": "opening"})

    tables["merchants"].append({"id": mid, "name": shop, "region": region, "tier": tier, "currency": cur})
    ops, reserve = ids.new("AC", 6), ids.new("AC", 6)
    tables["accounts"] += [{"id": ops, "merchant_id": mid, "kind": "operating", "currency": cur},
                           {"id": reserve, "merchant_id": mid, "kind": "reserve", "currency": cur}]
    banks = [ids.new("BA", 5) for _ in range(2)]
    for b in banks:
        tables["bank_accounts"].append({"id": b, "merchant_id": mid, "bank": rng.choice(BANKS), "last4": f"{rng.randrange(10000):04d}"})
    destination = rng.choice(banks)
    others = []
    for _ in range(3):
        oid = ids.new("M", 5)
        oacc = ids.new("AC", 6)
        tables["merchants"].append({"id": oid, "name": rng.choice(SHOPS) + " " + rng.choice(("West", "East", "Central")),
                                    "region": rng.choice(REGIONS), "tier": rng.choice(TIERS), "currency": rng.choice(CURRENCIES)})
        tables["accounts"].append({"id": oacc, "merchant_id": oid, "kind": "operating", "currency": cur})
        ledger(oacc, rng.randint(200, 900), "opening")
        others.append({"id": oid, "ops": oacc})

    # --- policies of the merchant's scope (pinned; every other scope is background) -------
    floor = float(rng.choice((20, 25, 30)))
    n_parts = 2 + min(2, difficulty // 2) + (1 if difficulty >= 4 else 0)
    n_parts = min(n_parts, 4)
    l3 = float(rng.choice((100, 150, 200, 250)))
    part = l3 - rng.choice((10, 20))
    total = money(part * n_parts)
    l2 = float(math.ceil(total / (n_parts - 1) / 50) * 50)
    l1 = l2 + 200
    review_minutes = rng.choice((8, 10, 12))
    required_doc, old_doc = rng.sample(DOC_TYPES, 2)
    k = 2 + min(2, difficulty // 2)
    amounts = [float(rng.randrange(10, 45)) for _ in range(k)]
    while len(set(amounts)) == 1:
        amounts[0] += 5
    threshold = float(sorted(amounts)[len(amounts) // 2 - 1 if len(amounts) > 2 else 0])
    window = rng.choice((21, 30, 45))
    later_amt = amounts[-1]
    slack = float(rng.randint(max(1, int(later_amt - floor)), int(later_amt) - 1))
    r0 = money(floor + sum(amounts[:-1]) + slack)
    ineligible_amt = float(rng.randrange(10, 30)) if difficulty >= 1 else 0.0
    settlement = money(later_amt + ineligible_amt + rng.randint(5, 20))
    settle_after = rng.choice((40, 45, 50))
    deadline_after = rng.choice((25, 30))
    change_after = rng.randint(2, review_minutes - 1)
    # difficulty 4: the merchant wants the payout as one transfer, above every policy limit, so
    # a limit-increase application must be submitted early and decided before the payout runs
    app = None
    app_rules: dict[str, Any] = {}
    if difficulty >= 4:
        app_doc = rng.choice([d for d in DOC_TYPES if d != required_doc])
        app = {"doc": app_doc, "wrong": required_doc, "minutes": review_minutes + rng.choice((3, 4, 5)), "limit": total}
        app_rules = {"limit_increase_document": app_doc, "limit_increase_minutes": app["minutes"]}
    # difficulty 3+: a second-currency account and bank account; the rate moves while the agent
    # waits for the review, so a quote taken at the start is stale by the time of the conversion
    fx = None
    if difficulty >= 3:
        c2 = rng.choice([c for c in CURRENCIES if c != cur])
        moved = c2 if c2 != "USD" else cur
        rates1 = {**DEFAULT_FX_RATES, moved: round(DEFAULT_FX_RATES[moved] * rng.choice((0.97, 0.98, 1.02, 1.03)), 4)}
        fx_amt = float(rng.randrange(40, 71))
        rate0 = round(DEFAULT_FX_RATES[c2] / DEFAULT_FX_RATES[cur], 6)
        rate1 = round(rates1[c2] / rates1[cur], 6)
        fx = {"currency": c2, "amount": fx_amt, "moved": moved, "new_rate": rates1[moved], "change_after": rng.randint(1, review_minutes - 1),
              "rate": rate1, "converted": money(fx_amt * rate1), "stale_rate": rate0, "stale_converted": money(fx_amt * rate0),
              "account": ids.new("AC", 6), "bank": ids.new("BA", 5)}
        tables["accounts"].append({"id": fx["account"], "merchant_id": mid, "kind": "operating", "currency": c2})
        tables["bank_accounts"].append({"id": fx["bank"], "merchant_id": mid, "bank": rng.choice(BANKS),
                                        "last4": f"{rng.randrange(10000):04d}", "currency": c2})

    def pin(product: str, version: int, eff: str, sup: str, rules: dict[str, Any]) -> str:
        did = ids.new("DOC-", 5)
        tables["documents"].append(policy_document_row(did, product, region, tier, cur, version, eff, sup, rules))
        return did

    old = lambda days: _t(now_dt, days=-days)  # noqa: E731
    p1 = pin("payouts", 1, old(rng.randint(300, 500)), "", {"single_payout_limit": l1})
    p2 = pin("payouts", 2, old(rng.randint(40, 200)), p1, {"single_payout_limit": l2, **app_rules})
    p3 = pin("payouts", 3, _t(now_dt, minutes=change_after), p2, {"single_payout_limit": l3, **app_rules})
    r1 = pin("refunds", 1, old(rng.randint(300, 500)), "", {"refund_window_days": 90, "approval_threshold": threshold + 50})
    r2 = pin("refunds", 2, old(rng.randint(20, 200)), r1, {"refund_window_days": window, "approval_threshold": threshold})
    s1 = pin("reserves", 1, old(rng.randint(300, 500)), "", {"reserve_floor": floor - 10})
    s2 = pin("reserves", 2, old(rng.randint(20, 200)), s1, {"reserve_floor": floor})
    # from difficulty 3 the reserve floor also rises, just as the settlement has arrived
    s3 = pin("reserves", 3, _t(now_dt, minutes=settle_after + 1), s2, {"reserve_floor": floor + 5}) if difficulty >= 3 else ""
    v1 = pin("reviews", 1, old(rng.randint(300, 500)), "", {"required_document": old_doc, "review_minutes": review_minutes})
    v2 = pin("reviews", 2, old(rng.randint(20, 200)), v1, {"required_document": required_doc, "review_minutes": review_minutes})

    # --- money on the accounts --------------------------------------------------------------
    b_ops = money(total + rng.randint(5, 50))
    hold_amt = money(b_ops - total + rng.randint(50, 150))
    ledger(ops, money(b_ops + (fx["amount"] if fx else 0.0)), "opening")
    ledger(reserve, r0, "opening")
    hold_id, case_id = ids.new("HD", 5), ids.new("CS", 5)
    tables["holds"].append({"id": hold_id, "account_id": ops, "amount": hold_amt, "reason": f"compliance review {case_id}", "case_id": case_id, "status": "active"})
    tables["cases"].append({"id": case_id, "merchant_id": mid, "hold_id": hold_id, "deadline": _t(now_dt, minutes=deadline_after)})

    pay_ids = []
    for a in amounts:
        pid = ids.new("PY", 6)
        pay_ids.append(pid)
        tables["payments"].append({"id": pid, "merchant_id": mid, "amount": a, "created_at": _t(now_dt, days=-rng.randint(1, window - 2)),
                                   "description": f"order {rng.randrange(1000, 9999)}"})
    ineligible = None
    if ineligible_amt:
        pid = ids.new("PY", 6)
        tables["payments"].append({"id": pid, "merchant_id": mid, "amount": ineligible_amt,
                                   "created_at": _t(now_dt, days=-rng.randint(window + 2, 88)), "description": f"order {rng.randrange(1000, 9999)}"})
        ineligible = (pid, ineligible_amt)
    for _ in range(3):
        tables["payments"].append({"id": ids.new("PY", 6), "merchant_id": mid, "amount": float(rng.randrange(10, 80)),
                                   "created_at": _t(now_dt, days=-rng.randint(1, 60)), "description": f"order {rng.randrange(1000, 9999)}"})

    tables["events"] += [
        {"id": "EV001", "time": _t(now_dt, minutes=change_after), "kind": "rule_effective", "ref": p3,
         "note": f"payouts policy {p3} (version 3) takes effect for {tier} merchants in {region} ({cur})"},
        {"id": "EV002", "time": _t(now_dt, minutes=deadline_after), "kind": "case_deadline", "ref": case_id},
        {"id": "EV003", "time": _t(now_dt, minutes=settle_after), "kind": "settlement", "ref": reserve, "amount": settlement,
         "note": "card settlement batch"},
    ]
    if s3:
        tables["events"].append({"id": "EV004", "time": _t(now_dt, minutes=settle_after + 1), "kind": "rule_effective", "ref": s3,
                                 "note": f"reserves policy {s3} (version 3) takes effect for {tier} merchants in {region} ({cur})"})
    if fx:
        tables["events"].append({"id": "EV005", "time": _t(now_dt, minutes=fx["change_after"]), "kind": "fx_rate", "ref": fx["moved"],
                                 "amount": fx["new_rate"], "note": f"{fx['moved']} rate update"})
    docs = {"payouts_v2": p2, "payouts_v3": p3, "refunds": r2, "reserves": s2, "reviews": v2}
    if s3:
        docs["reserves_v3"] = s3
    work = _operations_work(rng, ids, difficulty, now_dt, mid, ops, cur, tables, pin, old, docs, settle_after, ledger)
    return Scenario(
        now=now, kb_seed=rng.randrange(10**6), merchant=tables["merchants"][0], ops=ops, reserve=reserve, banks=banks,
        destination=destination, others=others, tables=tables,
        docs=docs,
        limits={"v2": l2, "v3": l3}, threshold=threshold, floor=floor, required_doc=required_doc,
        refunds_now=list(zip(pay_ids[:-1], amounts[:-1])), refund_later=(pay_ids[-1], amounts[-1]), ineligible=ineligible,
        parts=[total] if app else [part] * n_parts, payout_total=total, case_id=case_id, hold_id=hold_id, customer_name=person,
        review_minutes=review_minutes, settle_after=settle_after, app=app, fx=fx, work=work,
    )


def _operations_work(rng: Any, ids: IdPool, difficulty: int, now_dt: Any, mid: str, ops: str, cur: str,
                     tables: dict[str, list[dict[str, Any]]], pin: Any, old: Any, docs: dict[str, str], settle_after: int,
                     ledger: Any) -> dict[str, Any]:
    """The operations workflows of a task (see the module docstring), their records, pinned
    policies (a superseded version whose rule differs, then the governing one) and events."""
    work: dict[str, Any] = {}
    if difficulty >= 1:
        month = (now_dt.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
        work["statement"] = {"account": ops, "period": month}
    if difficulty >= 2:
        evidence, old_evidence = rng.sample(EVIDENCE_DOC_TYPES, 2)
        accept_below = float(rng.choice((15, 20, 25)))
        d1 = pin("disputes", 1, old(rng.randint(300, 500)), "",
                 {"dispute_response_days": 10, "dispute_evidence_document": old_evidence, "dispute_auto_accept_below": accept_below + 10})
        docs["disputes"] = pin("disputes", 2, old(rng.randint(20, 200)), d1,
                               {"dispute_response_days": 10, "dispute_evidence_document": evidence, "dispute_auto_accept_below": accept_below})
        pay_of = [p["id"] for p in tables["payments"]][-3:]  # the merchant's other payments (never a refund's)
        respond_after = settle_after - rng.randint(6, 12)  # before the final wait ends, after the review
        contest = {"id": ids.new("DP", 5), "payment": pay_of[0], "amount": float(rng.randrange(40, 120)), "evidence": evidence,
                   "old_evidence": old_evidence, "respond_by": _t(now_dt, minutes=respond_after)}
        disputes = [contest]
        if difficulty >= 4:  # a second chargeback to contest, on another payment
            second = {**contest, "id": ids.new("DP", 5), "payment": pay_of[2], "amount": float(rng.randrange(40, 120))}
            disputes.append(second)
            work["dispute2"] = second
        if difficulty >= 4:
            small = {"id": ids.new("DP", 5), "payment": pay_of[1], "amount": float(rng.randrange(5, int(accept_below))),
                     "respond_by": _t(now_dt, minutes=respond_after)}
            disputes.append(small)
            work["accept"] = small
        tables.setdefault("disputes", [])
        for d in disputes:
            tables["disputes"].append({"id": d["id"], "merchant_id": mid, "payment_id": d["payment"], "amount": d["amount"],
                                       "currency": cur, "reason_code": rng.choice(("fraudulent", "product_not_received")),
                                       "network": rng.choice(("visa", "mastercard")), "opened_at": _t(now_dt, days=-rng.randint(2, 5)),
                                       "respond_by": d["respond_by"]})
            ledger(ops, d["amount"], "opening")  # the chargeback left the operating account: the opening covered it
            ledger(ops, -d["amount"], "dispute")
            tables["events"].append({"id": f"EVX{len(tables['events']) + 1:02d}", "time": d["respond_by"], "kind": "dispute_deadline",
                                     "ref": d["id"], "note": f"response deadline of dispute {d['id']}"})
        work["dispute"] = contest
    if difficulty >= 3:
        limit = float(rng.choice((20, 25, 30)))
        f1 = pin("fees", 1, old(rng.randint(300, 500)), "", {"fee_waiver_limit": limit + 30, "fee_refund_days": 60})
        docs["fees"] = pin("fees", 2, old(rng.randint(20, 200)), f1, {"fee_waiver_limit": limit, "fee_refund_days": 60})
        amounts = [float(rng.randrange(int(limit) + 5, int(limit) + 25))] + ([float(rng.randrange(5, int(limit) - 4))] if difficulty >= 4 else [])
        fees = []
        tables.setdefault("fees", [])
        for amt in amounts:
            fid = ids.new("FE", 5)
            fees.append({"id": fid, "amount": amt, "approve": amt > limit})
            tables["fees"].append({"id": fid, "merchant_id": mid, "kind": "chargeback", "amount": amt, "currency": cur,
                                   "ref": work["dispute"]["id"], "created_at": _t(now_dt, days=-1)})
        extra = {"id": ids.new("FE", 5), "amount": float(rng.randrange(5, int(limit) - 4)), "approve": False}  # nobody asked to waive it
        tables["fees"].append({"id": extra["id"], "merchant_id": mid, "kind": "monthly", "amount": extra["amount"],
                               "currency": cur, "created_at": _t(now_dt, days=-2)})
        work["fees"] = {"items": fees, "limit": limit, "other": extra}
    if difficulty >= 4:
        tolerance = float(rng.choice((0.5, 1.0, 2.0)))
        t1 = pin("settlements", 1, old(rng.randint(300, 500)), "", {"reconciliation_tolerance": tolerance * 20, "settlement_delay_days": 2})
        docs["settlements"] = pin("settlements", 2, old(rng.randint(20, 200)), t1,
                                  {"reconciliation_tolerance": tolerance, "settlement_delay_days": 2})
        sid = ids.new("ST", 5)
        lines = [float(rng.randrange(30, 150)) for _ in range(rng.randint(3, 5))]
        fees_ = [money(a * 0.02) for a in lines]
        expected = money(sum(lines) - sum(fees_))
        diff = money(tolerance + rng.randint(2, 9) + rng.choice((0.25, 0.5, 0.75)))  # above today's tolerance, within the old one
        tables.setdefault("settlements", []).append({"id": sid, "merchant_id": mid, "account_id": ops, "batch_date": _t(now_dt, days=-2)[:10],
                                                     "gross": money(sum(lines)), "fees": money(sum(fees_)), "net": money(expected - diff)})
        for k, (a, f) in enumerate(zip(lines, fees_)):
            tables.setdefault("settlement_lines", []).append({"id": f"{sid}-L{k + 1}", "settlement_id": sid,
                                                              "payment_id": tables["payments"][k]["id"], "amount": a, "fee": f})
        work["settlement"] = {"id": sid, "difference": diff, "tolerance": tolerance}
        base = rng.sample(DOC_TYPES, 3)
        minutes = rng.choice((15, 20, 25))
        k1 = pin("verifications", 1, old(rng.randint(300, 500)), "", {"kyb_required_documents": base[:1], "verification_review_minutes": minutes})
        docs["verifications"] = pin("verifications", 2, old(rng.randint(20, 200)), k1,
                                    {"kyb_required_documents": base, "verification_review_minutes": minutes})
        vid = ids.new("VF", 5)
        tables.setdefault("verifications", []).append({"id": vid, "merchant_id": mid, "kind": "kyb"})
        work["kyb"] = {"id": vid, "documents": base, "old_documents": base[:1], "minutes": minutes}
    return work


def _split(total: float, limit: float) -> list[float]:
    n = math.ceil(total / limit)
    base = money(math.floor(total / n))
    parts = [base] * n
    parts[-1] = money(total - base * (n - 1))
    return parts


class Plan:
    """Writes actions while predicting the ids the world will assign (seeded counters)."""

    def __init__(self) -> None:
        self.actions: list[str] = []
        self.counts: dict[str, int] = {}

    def next_id(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]:03d}"

    def tool(self, tool_name: str, /, **args: Any) -> None:
        self.actions.append(dumps({"name": tool_name, "arguments": args}))

    def cap(self, cap_name: str, /, **args: Any) -> None:
        self.actions.append(dumps({"name": "call_capability", "arguments": {"name": cap_name, "arguments": args}}))

    def say(self, text: str) -> None:
        self.actions.append(text)


def payments_plan(s: Scenario, *, approval_after: bool = False, approval_removed: bool = False, terms_changed: bool = False,
                  dip: bool = False, superseded_limit: bool = False, skip_reread: bool = False, skip_receipt: bool = False,
                  refund_ineligible: bool = False, untouched: bool = False, reordered: bool = False, retry: bool = False,
                  payout_early: bool = False, wrong_application_document: bool = False, fx_stale: bool = False,
                  fx_stale_amount: bool = False, fx_unconverted: bool = False, fx_extra: bool = False, fx_skip_payout: bool = False,
                  statement_skipped: bool = False, dispute_wrong_evidence: bool = False, dispute_late: bool = False,
                  dispute_contest_small: bool = False, fee_unapproved: bool = False, fee_extra: bool = False,
                  settlement_unread: bool = False, kyb_superseded: bool = False) -> list[str]:
    p = Plan()
    m = s.merchant
    scope = {"region": m["region"], "tier": m["tier"], "currency": m["currency"]}
    p.tool("search_documents", query="procedure capability")
    for i in range(1, 5):
        p.tool("read_document", doc_id=f"KB-P{i:02d}")
    p.tool("query_records", collection="merchants", filters={"id": m["id"]})
    p.tool("query_records", collection="accounts", filters={"merchant_id": m["id"]})
    p.tool("query_records", collection="bank_accounts", filters={"merchant_id": m["id"]})
    p.tool("query_records", collection="cases", filters={"merchant_id": m["id"]})
    p.tool("query_records", collection="payments", filters={"merchant_id": m["id"]})
    p.tool("query_records", collection="events", filters={"status": "scheduled"})
    reads = [("refunds", s.docs["refunds"]), ("reserves", s.docs["reserves"]), ("reviews", s.docs["reviews"]), ("payouts", s.docs["payouts_v2"])]
    if reordered:
        reads.reverse()
    for product, did in reads:
        p.tool("search_documents", query=f"{PRODUCTS_DESC[product]} policy", product=product, **scope)
        p.tool("read_document", doc_id=did)
    caps = ["cases.attach_document", "cases.submit", "approvals.request", "refunds.create", "accounts.balance",
            "holds.release", "payouts.create", "receipts.issue"]
    if s.app:
        caps.append("applications.submit")
    if s.fx:
        caps += ["fx.quote", "fx.convert"]
    W = s.work
    ops_reads = [(k, c) for k, c in (("dispute", "disputes"), ("fees", "fees"), ("settlement", "settlements"), ("kyb", "verifications"))
                 if k in W]
    for _, coll in ops_reads:
        p.tool("query_records", collection=coll, filters={"merchant_id": m["id"]})
    for _, product in ops_reads:
        if product == "settlements" and settlement_unread:
            continue
        p.tool("search_documents", query=f"{product} policy", product=product, **scope)
        p.tool("read_document", doc_id=s.docs[product])
        p.tool("read_document", doc_id=OPS_PROCEDURES[product])
    if "statement" in W:
        caps += ["statements.generate", "statements.issue"]
    if "dispute" in W:
        caps += ["disputes.attach_evidence", "disputes.submit_evidence"]
    if "accept" in W:
        caps.append("disputes.accept")
    if "fees" in W:
        caps.append("fees.waive")
    if "settlement" in W:
        caps += ["settlements.check", "reconciliation.open_break", "reconciliation.investigate", "reconciliation.resolve",
                 "settlements.reconcile"]
    if "kyb" in W:
        caps += ["verifications.requirements", "verifications.attach_document", "verifications.submit"]
    for c in (reversed(caps) if reordered else caps):
        p.tool("describe_capability", name=c)

    def ask_destination() -> None:
        p.say("Which bank account should receive the payout? Please give me its id.")

    def upload_and_submit() -> None:
        up = p.next_id("UP")
        p.say(f"To complete review case {s.case_id}, please upload your {s.required_doc.replace('_', ' ')}.")
        p.cap("cases.attach_document", case_id=s.case_id, upload_id=up)
        p.cap("cases.submit", case_id=s.case_id)

    f = s.fx
    if f and (fx_stale or fx_stale_amount):  # quoted now, converted after the rate has moved
        p.cap("fx.quote", from_currency=m["currency"], to_currency=f["currency"], amount=f["amount"])
    # the application goes first: its decision must have taken effect by the time the payout runs;
    # with an application task, ``superseded_limit`` pays the one transfer with no application at all
    # (the limit read earlier, never raised)
    apply = bool(s.app) and not superseded_limit
    if apply:
        doc = s.app["wrong"] if wrong_application_document else s.app["doc"]
        up = p.next_id("UP")
        p.say(f"To apply for a payout-limit increase, please upload your {doc.replace('_', ' ')}.")
        p.cap("applications.submit", merchant_id=m["id"], kind="payout_limit_increase", requested_limit=s.app["limit"], upload_ids=[up])
        app_id = p.next_id("APP")
    if reordered:
        ask_destination()
        upload_and_submit()
    else:
        upload_and_submit()
        ask_destination()
    if retry:
        p.cap("holds.release", hold_id=s.hold_id)  # refused: the case is not approved yet (no side effect)
    p.cap("accounts.balance", account_id=s.reserve)

    def refund(pid: str, amount: float) -> None:
        if amount > s.threshold:
            apr = p.next_id("APR")
            p.cap("approvals.request", operation="refunds.create", terms={"payment_id": pid, "amount": amount})
            p.say(f"Please approve request {apr}: a refund of {amount:.2f} for payment {pid}.")
        p.cap("refunds.create", payment_id=pid, amount=amount, idempotency_key=f"rf-{pid}")
        p.next_id("RF")

    now_refunds = list(s.refunds_now)
    if reordered and len(now_refunds) >= 2:
        now_refunds[0], now_refunds[1] = now_refunds[1], now_refunds[0]
    for pid, amount in now_refunds:
        refund(pid, amount)
    if dip:
        refund(*s.refund_later)
    if s.ineligible and not refund_ineligible:
        p.say(f"Payment {s.ineligible[0]} is outside the refund window of the current refund policy, so it cannot be refunded.")

    def contest(d: dict[str, Any]) -> None:
        up = p.next_id("UP")
        evidence = d["old_evidence"] if dispute_wrong_evidence else d["evidence"]
        p.say(f"To contest dispute {d['id']}, please upload your {evidence.replace('_', ' ')}.")
        p.cap("disputes.attach_evidence", dispute_id=d["id"], upload_id=up)
        p.cap("disputes.submit_evidence", dispute_id=d["id"])

    if "dispute" in W and not dispute_late:
        contest(W["dispute"])
    if "dispute2" in W:
        contest(W["dispute2"])
    if "accept" in W:
        if dispute_contest_small:
            contest({**W["accept"], "evidence": W["dispute"]["evidence"], "old_evidence": W["dispute"]["old_evidence"]})
        else:
            p.cap("disputes.accept", dispute_id=W["accept"]["id"])
    if "fees" in W:
        for fee in list(W["fees"]["items"]) + ([W["fees"]["other"]] if fee_extra else []):
            amount = fee["amount"]
            if fee["approve"] and not fee_unapproved:
                apr = p.next_id("APR")
                p.cap("approvals.request", operation="fees.waive", terms={"fee_id": fee["id"], "amount": amount})
                p.say(f"Please approve request {apr}: waiving fee {fee['id']} of {amount:.2f}.")
            p.cap("fees.waive", fee_id=fee["id"], amount=amount, reason="chargeback fee waived at the merchant's request")
    if "kyb" in W:
        k = W["kyb"]
        p.cap("verifications.requirements", merchant_id=m["id"], kind="kyb")
        for doc in (k["old_documents"] if kyb_superseded else k["documents"]):
            up = p.next_id("UP")
            p.say(f"For business verification {k['id']}, please upload your {doc.replace('_', ' ')}.")
            p.cap("verifications.attach_document", verification_id=k["id"], upload_id=up)
        p.cap("verifications.submit", verification_id=k["id"])
    if "settlement" in W:
        st = W["settlement"]["id"]
        p.cap("settlements.check", settlement_id=st)
        p.cap("reconciliation.open_break", settlement_id=st)
        rb = p.next_id("RB")
        p.cap("reconciliation.investigate", break_id=rb, note="lines exceed the net paid; asked the acquirer for the missing amount")
        p.cap("reconciliation.resolve", break_id=rb, resolution="acquirer confirmed the short payment; adjustment booked")
        p.cap("settlements.reconcile", settlement_id=st)
    if "statement" in W and not statement_skipped:
        p.cap("statements.generate", account_id=W["statement"]["account"], period=W["statement"]["period"])
        p.cap("statements.issue", statement_id=p.next_id("SM"))
    p.tool("wait", minutes=float(s.review_minutes))
    if not skip_reread:
        p.tool("search_documents", query="payout policy", product="payouts", **scope)
        p.tool("read_document", doc_id=s.docs["payouts_v3"])
    p.cap("holds.release", hold_id=s.hold_id)
    p.cap("accounts.balance", account_id=s.ops)
    elapsed = float(s.review_minutes)
    if apply and not payout_early:
        p.tool("wait", minutes=float(s.app["minutes"] - s.review_minutes))
        elapsed = float(s.app["minutes"])
        p.tool("query_records", collection="applications", filters={"id": app_id})

    parts = list(s.parts) if s.app or not superseded_limit else _split(s.payout_total, s.limits["v2"])
    executed = list(parts)
    if terms_changed and len(parts) == 1:
        parts[0] = money(parts[0] - 5)  # approved for less than is then paid out
    elif terms_changed:
        executed[0], executed[1] = money(executed[0] + 5), money(executed[1] - 5)
    for j, (asked, amount) in enumerate(zip(parts, executed), 1):
        terms = {"merchant_id": m["id"], "account_id": s.ops, "bank_account_id": s.destination, "amount": asked}
        do = {**terms, "amount": amount}

        def approve(terms: dict[str, Any] = terms, asked: float = asked) -> None:
            apr = p.next_id("APR")
            p.cap("approvals.request", operation="payouts.create", terms=terms)
            p.say(f"Please approve request {apr}: a payout of {asked:.2f} from account {s.ops} to bank account {s.destination}.")

        if not approval_removed and not (approval_after and j == 1):
            approve()
        p.cap("payouts.create", **do, idempotency_key=f"po-{s.case_id}-{j}")
        po = p.next_id("PO")
        if retry and j == 1:
            p.cap("payouts.create", **do, idempotency_key=f"po-{s.case_id}-{j}")
        if approval_after and j == 1:
            approve()
        rc = p.next_id("RC")
        p.cap("receipts.issue", payout_id=po)
        if not (skip_receipt and j == len(parts)):
            p.say(f"Please confirm receipt {rc} for payout {po} of {amount:.2f}.")
    if f:
        if not (fx_stale or fx_stale_amount):
            p.cap("fx.quote", from_currency=m["currency"], to_currency=f["currency"], amount=f["amount"])
        p.cap("fx.convert", from_account_id=s.ops, to_account_id=f["account"], amount=f["amount"], idempotency_key=f"fx-{s.case_id}")
        p.next_id("FX")
        if fx_extra:
            p.cap("fx.convert", from_account_id=s.ops, to_account_id=f["account"], amount=1.0, idempotency_key=f"fx-{s.case_id}-extra")
            p.next_id("FX")
        paid = f["stale_converted"] if fx_stale_amount else f["converted"]
        asked = f["amount"] if fx_unconverted else paid
        if not fx_skip_payout:
            apr = p.next_id("APR")
            p.cap("approvals.request", operation="payouts.create",
                  terms={"merchant_id": m["id"], "account_id": f["account"], "bank_account_id": f["bank"], "amount": asked})
            p.say(f"Please approve request {apr}: a payout of {asked:.2f} {f['currency']} from account {f['account']} to bank account {f['bank']}.")
            p.cap("payouts.create", merchant_id=m["id"], account_id=f["account"], bank_account_id=f["bank"], amount=paid,
                  idempotency_key=f"po-fx-{s.case_id}")
            if paid <= f["converted"]:  # a stale amount above the converted funds is refused
                po = p.next_id("PO")
                rc = p.next_id("RC")
                p.cap("receipts.issue", payout_id=po)
                p.say(f"Please confirm receipt {rc} for payout {po} of {paid:.2f} {f['currency']}.")
    p.tool("wait", minutes=float(s.settle_after + 1 - elapsed))
    # the scheduled decisions have fired by now: confirm them (the last refund stays the route's last call)
    if "dispute" in W:
        if dispute_late:
            contest(W["dispute"])  # refused: the response deadline has passed
        p.tool("query_records", collection="disputes", filters={"merchant_id": m["id"]})
    if "kyb" in W:
        p.tool("query_records", collection="verifications", filters={"id": W["kyb"]["id"]})
    if "reserves_v3" in s.docs:
        p.tool("search_documents", query="reserve policy", product="reserves", **scope)
        p.tool("read_document", doc_id=s.docs["reserves_v3"])
    p.cap("accounts.balance", account_id=s.reserve)
    if not dip:
        refund(*s.refund_later)
    if refund_ineligible and s.ineligible:
        refund(*s.ineligible)
    if untouched:
        p.tool("describe_capability", name="holds.place")
        p.cap("holds.place", account_id=s.others[0]["ops"], amount=1.0, reason="verification")
    p.say("Everything is completed: the review case is approved and its hold released, the refunds are paid, "
          "and the payout has been made. ###STOP###")
    return p.actions


VARIANTS: dict[str, tuple[dict[str, bool], list[str]]] = {
    "approval_removed": ({"approval_removed": True}, ["process.approval"]),
    "approval_after": ({"approval_after": True}, ["process.approval"]),
    "terms_changed": ({"terms_changed": True}, ["process.approval"]),
    "dip_repaired": ({"dip": True}, ["protection.reserve_floor"]),
    "superseded_limit": ({"superseded_limit": True}, ["protection.payout_limit"]),
    "skip_reread": ({"skip_reread": True}, ["process.governing_document"]),
    "skip_receipt": ({"skip_receipt": True}, ["goal.receipts"]),
    "refund_ineligible": ({"refund_ineligible": True}, ["protection.refund_window"]),
    "untouched": ({"untouched": True}, ["protection.untouched"]),
    "reordered": ({"reordered": True}, []),
    "retry": ({"retry": True}, []),
    # difficulty 4 (limit-increase application) only
    "payout_before_decision": ({"payout_early": True}, ["process.application"]),
    "application_wrong_document": ({"wrong_application_document": True}, ["process.application", "protection.payout_limit"]),
    # difficulty 3+ (currency conversion) only
    "fx_stale_quote": ({"fx_stale": True}, ["process.fx_quote"]),
    "fx_stale_amount": ({"fx_stale_amount": True}, ["goal.fx", "process.fx_quote"]),
    "fx_unconverted_approval": ({"fx_unconverted": True}, ["process.approval"]),
    "fx_extra": ({"fx_extra": True}, ["protection.untouched"]),
    "fx_not_paid": ({"fx_skip_payout": True}, ["goal.fx"]),
    # the operations workflows, from their difficulty
    "statement_skipped": ({"statement_skipped": True}, ["goal.statement"]),
    "dispute_superseded_evidence": ({"dispute_wrong_evidence": True}, ["goal.disputes"]),
    "dispute_after_deadline": ({"dispute_late": True}, ["goal.disputes"]),
    "dispute_small_contested": ({"dispute_contest_small": True}, ["goal.disputes"]),
    "fee_waiver_unapproved": ({"fee_unapproved": True}, ["process.approval"]),
    "fee_not_requested": ({"fee_extra": True}, ["protection.untouched"]),
    "settlement_policy_unread": ({"settlement_unread": True}, ["process.governing_document"]),
    "kyb_superseded_documents": ({"kyb_superseded": True}, ["goal.verification"]),
}
# the workflow each operations variant needs (``Scenario.work`` key)
WORK_VARIANTS = {"statement_skipped": "statement", "dispute_superseded_evidence": "dispute", "dispute_after_deadline": "dispute",
                 "dispute_small_contested": "accept", "fee_waiver_unapproved": "fees", "fee_not_requested": "fees",
                 "settlement_policy_unread": "settlement", "kyb_superseded_documents": "kyb"}
APPLICATION_VARIANTS = ("payout_before_decision", "application_wrong_document")
FX_VARIANTS = ("fx_stale_quote", "fx_stale_amount", "fx_unconverted_approval", "fx_extra", "fx_not_paid")
# the violation kept on the task (one per checked item, as ``verify_task`` expects)
TASK_VIOLATIONS = {"process.approval": "approval_after", "process.governing_document": "skip_reread",
                   "protection.reserve_floor": "dip_repaired", "protection.payout_limit": "superseded_limit",
                   "protection.refund_window": "refund_ineligible", "protection.untouched": "untouched", "goal.receipts": "skip_receipt",
                   "process.application": "payout_before_decision", "process.fx_quote": "fx_stale_quote", "goal.fx": "fx_not_paid",
                   "goal.statement": "statement_skipped", "goal.disputes": "dispute_superseded_evidence", "goal.verification": "kyb_superseded_documents"}


def _applies(label: str, s: Scenario) -> bool:
    if label == "refund_ineligible":
        return s.ineligible is not None
    if label in APPLICATION_VARIANTS:
        return s.app is not None
    if label in FX_VARIANTS:
        return s.fx is not None
    if label in WORK_VARIANTS:
        return WORK_VARIANTS[label] in s.work
    return True


def payments_variants(seed: int, difficulty: int, split: str = "test") -> dict[str, tuple[list[str], list[str]]]:
    """label -> (actions, checks the checker must fail); an empty list means a legal route."""
    s = build_scenario(seed, difficulty, split)
    out = {}
    for label, (flags, expected) in VARIANTS.items():
        if not _applies(label, s):
            continue
        out[label] = (payments_plan(s, **flags), expected)
    return out


def _work_request(w: dict[str, Any]) -> str:
    """The opening's requests for the operations workflows (what the merchant knows and says)."""
    out = ""
    if "dispute" in w:
        ids = [w["dispute"]["id"]] + ([w["dispute2"]["id"]] if "dispute2" in w else [])
        out += (f" Customers opened chargebacks, disputes {' and '.join(ids)}; please contest them, I have the paperwork." if len(ids) > 1
                else f" A customer opened a chargeback, dispute {ids[0]}; please contest it, I have the paperwork.")
    if "accept" in w:
        out += f" There is also a small dispute {w['accept']['id']}: handle it the way your dispute policy says."
    if "fees" in w:
        ids = [f["id"] for f in w["fees"]["items"]]
        out += f" Please waive the chargeback fee{'s' if len(ids) > 1 else ''} {', '.join(ids)} you charged me for the dispute."
    if "settlement" in w:
        out += f" My settlement {w['settlement']['id']} does not add up: please reconcile it."
    if "kyb" in w:
        out += f" And please complete my business verification {w['kyb']['id']}."
    if "statement" in w:
        out += f" Finally, issue the statement of my operating account for {w['statement']['period']}."
    return out


def _work_goal(w: dict[str, Any]) -> dict[str, Any]:
    """The checker's view of the operations workflows (``rewards.payments``)."""
    goal: dict[str, Any] = {}
    if "statement" in w:
        goal["statement"] = {"account": w["statement"]["account"], "period": w["statement"]["period"]}
    if "dispute" in w:
        goal["disputes"] = {"contest": [w["dispute"]["id"]] + ([w["dispute2"]["id"]] if "dispute2" in w else []),
                            "accept": [w["accept"]["id"]] if "accept" in w else []}
    if "fees" in w:
        goal["fees"] = [f["id"] for f in w["fees"]["items"]]
    if "settlement" in w:
        goal["settlement"] = w["settlement"]["id"]
    if "kyb" in w:
        goal["verification"] = w["kyb"]["id"]
    return goal


def generate_payments_task(seed: int, difficulty: int = 2, split: str = "train", violations: bool = True) -> Task:
    s = build_scenario(seed, difficulty, split)
    m = s.merchant
    refund_ids = [pid for pid, _ in s.refunds_now] + [s.refund_later[0]]
    requested = refund_ids + ([s.ineligible[0]] if s.ineligible else [])
    opening = (
        f"Hi, this is {s.customer_name} from {m['name']} (merchant {m['id']}). I need three things today: please refund "
        f"my customers' payments {', '.join(requested)} in full; get the hold on my account released (there is a review case "
        f"open); and pay out {s.payout_total:.2f} {m['currency']} from my operating account to my bank account"
        + (" in a single transfer." if s.app else ".")
        + (f" Also convert {s.fx['amount']:.2f} {m['currency']} from my operating account into my {s.fx['currency']} account "
           f"{s.fx['account']} and pay the converted amount out to my {s.fx['currency']} bank account {s.fx['bank']}." if s.fx else "")
        + _work_request(s.work)
    )
    bank_words = list(s.banks)
    fact = HiddenFact(topic="destination", keywords=["bank account", "which account", "destination", "receive the payout"],
                      answer=f"Please send the payout to bank account {s.destination}.")
    user = UserScript(opening=opening, facts=[fact], persona={"name": s.customer_name, "banks": bank_words})
    world = {
        "now": s.now, "kb_seed": s.kb_seed, "merchant_id": m["id"], "tables": s.tables, "counters": {},
        "goal": {"merchant_id": m["id"], "operating_account": s.ops, "reserve_account": s.reserve, "destination": s.destination,
                 "payout_total": s.payout_total, "refund_eligible": refund_ids, "refund_requested": requested,
                 "case_id": s.case_id, "hold_id": s.hold_id, **({"max_payouts": 1} if s.app else {}),
                 **({"fx": {"from_account": s.ops, "to_account": s.fx["account"], "amount": s.fx["amount"], "bank": s.fx["bank"]}} if s.fx else {}),
                 **_work_goal(s.work)},
        "customer": {"name": s.customer_name, "merchant_id": m["id"], "destination": s.destination, "payout_total": s.payout_total,
                     "refund_payments": requested,
                     "documents": sorted({s.required_doc, *DOC_TYPES[:2], *([s.app["doc"]] if s.app else []),
                                          *([s.work["dispute"]["evidence"], s.work["dispute"]["old_evidence"]] if "dispute" in s.work else []),
                                          *(s.work["kyb"]["documents"] if "kyb" in s.work else [])}),
                     "fee_waivers": [f["id"] for f in s.work["fees"]["items"]] if "fees" in s.work else [],
                     **({"fx_destination": s.fx["bank"]} if s.fx else {})},
    }
    viol: dict[str, list[str]] = {}
    if violations:
        for check, label in TASK_VIOLATIONS.items():
            if not _applies(label, s):
                continue
            viol[check] = payments_plan(s, **VARIANTS[label][0])
    task = Task(
        task_id=f"{DOMAIN}/{split}/{seed}/d{difficulty}", domain=DOMAIN, difficulty=difficulty,
        reasoning_points=len(requested) + len(s.parts) + 3, world=world, user=user, rubric=[],
        violations=viol, notes=[(f"one payout of {s.payout_total:.2f} above limit {s.limits['v3']:.2f} after a limit-increase application "
                                 f"({s.app['doc']}, decided after {s.app['minutes']} min)" if s.app else
                                 f"payout split into {len(s.parts)} x {s.parts[0]:.2f} under limit {s.limits['v3']:.2f} "
                                 f"(superseded {s.limits['v2']:.2f})") + f"; reserve floor {s.floor:.2f}; settlement after {s.settle_after} min"],
    )
    # the golden route is a pure function of the scenario: made on first read (a reset reads none)
    return task.defer_golden(lambda: payments_plan(s)).vouch_world()
