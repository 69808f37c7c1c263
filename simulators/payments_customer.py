"""The payments customer (a merchant's authorised operator), scripted and deterministic.

It holds private facts (which bank account receives payouts, which documents it has) and an
approval policy (payouts only to its own destination, up to the total it asked for; payouts from
its own accounts to its second-currency bank account, when it asked for a converted payout; full
refunds of the payments it listed). It discloses a fact only when asked about its topic; per turn it
performs at most one customer-side write, then replies:

- grant or deny the oldest pending approval request, when the agent asks for an approval;
- upload a document of a type the agent names, when asked to upload;
- confirm a receipt, when asked to confirm one;
- or, instead of a write, wait N minutes when asked to ("please wait 10 minutes"): the clock
  moves and due events fire, reported in the reply.

Generic consent ("yes, go ahead") is only words: it creates no approval. Each write is logged in
the history as an ``event`` with role ``customer``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from servicegym.simulators.scripted_user import STOP, ScriptedUser, UserScript
from servicegym.world_state.core import History
from servicegym.world_state.payments.world import Approval, PaymentsWorld, Upload, money

APPROVE_RE = re.compile(r"\bapprov")
UPLOAD_RE = re.compile(r"\bupload")
RECEIPT_RE = re.compile(r"\breceipt")
CONFIRM_RE = re.compile(r"\bconfirm")
DONE_RE = re.compile(r"\b(all done|completed|everything is done)\b")
WAIT_RE = re.compile(r"\bwait(?: for)? (\d+(?:\.\d+)?) ?min")
MAX_CUSTOMER_WAIT = 240.0


class CustomerProfile(BaseModel):
    """The private side of the customer: facts, documents, approval policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    merchant_id: str
    destination: str  # the bank account payouts must go to
    payout_total: float
    refund_payments: list[str]
    documents: list[str]
    fx_destination: str = ""  # a bank account in a second currency, for a converted payout
    fee_waivers: list[str] = []  # fees the merchant asked to have waived (whole)


class PaymentsCustomer:
    """Replies to agent messages; ``bind`` gives it the episode's world and history."""

    def __init__(self, script: UserScript, profile: CustomerProfile) -> None:
        self.script = script
        self.profile = profile
        self.facts = ScriptedUser(script, seed=0)
        self.world: PaymentsWorld | None = None
        self.history: History | None = None
        self.step = 0

    def bind(self, world: PaymentsWorld, history: History, step: int) -> None:
        self.world, self.history, self.step = world, history, step

    def opening(self) -> str:
        return self.script.opening

    def _log(self, name: str, arguments: dict[str, Any], content: str) -> None:
        self.history.append(step=self.step, time=self.world.clock.text(), kind="event", role="customer", name=name,
                            arguments=arguments, content=content)

    def _decide(self, apr: Approval) -> tuple[bool, str]:
        p = self.profile
        terms = json.loads(apr.terms)
        if apr.operation == "payouts.create":
            granted = sum(json.loads(a.terms)["amount"] for a in self.world.table("approvals")
                          if a.status == "granted" and a.operation == "payouts.create" and json.loads(a.terms)["bank_account_id"] == p.destination)
            if p.fx_destination and terms["merchant_id"] == p.merchant_id and terms["bank_account_id"] == p.fx_destination:
                acc = self.world.table("accounts").get(terms["account_id"])
                if acc is None or acc.merchant_id != p.merchant_id:
                    return False, "that is not my account"
                return True, ""
            if terms["merchant_id"] != p.merchant_id or terms["bank_account_id"] != p.destination:
                return False, "that is not the bank account I want the money in"
            acc = self.world.table("accounts").get(terms["account_id"])
            if acc is None or acc.merchant_id != p.merchant_id:
                return False, "that is not my account"
            if money(granted + terms["amount"]) > money(p.payout_total):
                return False, f"that would take my approved payouts above the {p.payout_total:.2f} I asked for"
            return True, ""
        if apr.operation == "fees.waive":
            fee = self.world.table("fees").get(terms["fee_id"])
            if fee is None or fee.id not in p.fee_waivers:
                return False, "I did not ask for that fee to be waived"
            if money(terms["amount"]) != fee.amount:
                return False, f"the fee is {fee.amount:.2f}; waive all of it"
            return True, ""
        pay = self.world.table("payments").get(terms["payment_id"])
        if pay is None or pay.id not in p.refund_payments:
            return False, "I did not ask for that payment to be refunded"
        if money(terms["amount"]) != pay.amount:
            return False, f"I want the full {pay.amount:.2f} refunded"
        return True, ""

    # ----- the customer-side writes (one per turn; the LLM customer calls these too) -------------
    def decide_approval(self, apr: Approval, ok: bool, why: str = "") -> str:
        """Grant or deny one requested approval, logged as a customer event."""
        self.world.table("approvals").update(apr.id, status="granted" if ok else "denied", approver=self.profile.name,
                                             decided_step=self.step)
        self._log("approval_granted" if ok else "approval_denied", {"approval_id": apr.id}, apr.terms)
        return f"I approve request {apr.id}." if ok else f"I deny request {apr.id}: {why}."

    def upload_document(self, doc_type: str) -> str:
        """Upload one of the customer's documents (``doc_type`` must be one it holds)."""
        w = self.world
        up = Upload(id=w.ids.next("UP"), merchant_id=self.profile.merchant_id, doc_type=doc_type, time=w.clock.text())
        w.table("uploads").insert(up)
        self._log("document_uploaded", {"upload_id": up.id, "doc_type": doc_type}, doc_type)
        return f"I have uploaded my {doc_type.replace('_', ' ')} as {up.id}."

    def confirm_receipt(self, rc: Any) -> str:
        self.world.table("receipts").update(rc.id, confirmed=True)
        self._log("receipt_confirmed", {"receipt_id": rc.id}, rc.payout_id)
        return f"I confirm receipt {rc.id}."

    def wait(self, minutes: float) -> str:
        """Let ``minutes`` (capped at ``MAX_CUSTOMER_WAIT``) pass; due events fire."""
        w = self.world
        minutes = min(float(minutes), MAX_CUSTOMER_WAIT)
        fired = w.advance(minutes)
        self._log("customer_wait", {"minutes": minutes}, json.dumps(fired))
        notes = "; ".join(f"{e['time']} {e['note']}" for e in fired)
        return f"I waited {minutes:g} minutes (now {w.clock.text()})." + (f" Notifications: {notes}." if notes else "")

    def _one_write(self, text: str) -> str | None:
        w = self.world
        if APPROVE_RE.search(text):
            pending = [a for a in w.table("approvals") if a.status == "requested"]
            named = [a for a in pending if a.id.casefold() in text]
            if named or pending:
                apr = (named or pending)[0]
                ok, why = self._decide(apr)
                return self.decide_approval(apr, ok, why)
        if UPLOAD_RE.search(text):
            for doc_type in self.profile.documents:
                if doc_type.replace("_", " ") in text or doc_type in text:
                    return self.upload_document(doc_type)
            return "I don't have that document. I have: " + ", ".join(d.replace("_", " ") for d in self.profile.documents) + "."
        if RECEIPT_RE.search(text) and CONFIRM_RE.search(text):
            open_ = [r for r in w.table("receipts") if not r.confirmed]
            named = [r for r in open_ if r.id.casefold() in text]
            if named or open_:
                return self.confirm_receipt((named or open_)[0])
        m = WAIT_RE.search(text)
        if m:
            minutes = min(float(m.group(1)), MAX_CUSTOMER_WAIT)
            if minutes > 0:
                return self.wait(minutes)
        return None

    def reply(self, agent_message: str) -> str:
        text = agent_message.casefold()
        answers = self.facts._asked_facts(text)
        did = self._one_write(text)
        parts = answers + ([did] if did else [])
        if parts:
            return " ".join(parts)
        if DONE_RE.search(text):
            return f"Thank you, that's all. {STOP}"
        if "?" in text:
            return "Yes, go ahead."
        return "Please take care of what I asked for."
