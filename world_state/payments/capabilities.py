"""The business-capability catalogue behind ``call_capability``: hundreds of named operations
(reads over every collection, derived reads, and the writes of the payment workflows), each with
an argument schema, a kind and pre-conditions. The agent finds names through
``search_capabilities`` or the documents, reads a schema with ``describe_capability``, and only
then may call it.

A capability is ``fn(world, **arguments)``; business refusals raise ``ToolError`` and the
resident ``call_capability`` tool rolls the world back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from itertools import islice
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from operator import attrgetter
from typing import Any, Literal

from pydantic import ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from servicegym.world_state.core import Entity, unvalidated
from servicegym.world_state.payments.platform import PLATFORM_SCHEMA
from servicegym.world_state.payments.world import (
    APPROVAL_TERMS,
    PAYMENTS_SCHEMA,
    Application,
    Approval,
    Case,
    Event,
    FxConversion,
    Hold,
    PaymentsWorld,
    Payout,
    Receipt,
    Refund,
    TextIndex,
    canonical_terms,
    money,
)
from servicegym.world_state.tools import (
    RawJson,
    ToolError,
    _clean_schema,
    _compile_plan,
    _plan,
    _validation_message,
    dumps,
    json_array,
)


@dataclass
class Capability:
    name: str
    kind: Literal["read", "write"]
    summary: str
    fields: dict[str, tuple[Any, Any]]
    fn: Callable[..., Any]
    pre: tuple[str, ...] = ()
    # what a write changes, stated for the agent, and the record it writes: (collection, the argument
    # naming it), which the checker reads to tell the task's records from protected ones
    post: tuple[str, ...] = ()
    target: tuple[str, str] | None = None
    # the JSON text of a result as ``dumps`` gives it, written out for the result's one shape (the
    # payout and refund writes: the encoder's walk and its row callback cost more than the write's
    # own work); ``call`` answers with it. None: ``call`` answers with the result, for the encoder
    result_json: Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        self.model = create_model(
            "cap_" + self.name.replace(".", "_"), __config__=ConfigDict(extra="forbid", allow_inf_nan=False),
            **{k: (t, FieldInfo(default=d)) for k, (t, d) in self.fields.items()},
        )
        self.plan = _plan(self.model)  # plain arguments are taken as parsed (``validate_arguments``)
        self.fast_args: Any = None  # that check written out for this capability, at its first call (``invoke``)
        self.parameters = _clean_schema(self.model.model_json_schema())
        self.text = f"{self.name} {self.summary}".casefold()

    def describe(self) -> dict[str, Any]:
        out = {"name": self.name, "kind": self.kind, "summary": self.summary, "parameters": self.parameters,
               "preconditions": list(self.pre)}
        if self.post:
            out["postconditions"] = list(self.post)
        return out

    def invoke(self, world: PaymentsWorld, arguments: dict[str, Any]) -> Any:
        """``fn`` on ``arguments`` validated by the capability's schema (refused with ``ToolError``)."""
        fast = self.fast_args
        if fast is None and self.plan is not None:
            fast = self.fast_args = _compile_plan(self.plan)
        # ``validate_with`` written out: plain arguments of the right types are taken as they are
        args = fast(arguments) if fast is not None else None
        if args is None:
            try:
                args = self.model.model_validate(arguments).__dict__
            except ValidationError as err:
                raise ToolError(f"invalid arguments for capability {self.name}: {_validation_message(err)}; "
                                f"parameters: {json.dumps(self.parameters)}") from None
        return self.fn(world, **args)

    def call(self, world: PaymentsWorld, arguments: dict[str, Any]) -> Any:
        """``invoke`` as ``call_capability`` answers it: the result's JSON text when the capability
        writes it out (``result_json``), else the result (which the tool's caller encodes)."""
        out = self.invoke(world, arguments)
        encode = self.result_json
        return out if encode is None else RawJson(encode(out))


REQ = ...
CATALOGUE: dict[str, Capability] = {}


def _add(cap: Capability) -> None:
    if cap.name in CATALOGUE:
        raise ValueError(f"duplicate capability {cap.name}")
    CATALOGUE[cap.name] = cap


# ----- generated reads over every collection ---------------------------------------------------

def _rows_view(rows: list[Entity]) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in rows]


def _collection_reads(coll: str, model: type[Entity]) -> None:
    if coll == "documents":
        return
    fields = {k: f.annotation for k, f in model.model_fields.items()}
    _add(Capability(f"{coll}.get", "read", f"Fetch one {coll} record by id.", {"id": (str, REQ)},
                    lambda w, id, c=coll: w.tables[c].get(id) or _missing(c, id)))
    _add(Capability(f"{coll}.list", "read", f"List {coll} records (first `limit`).", {"limit": (int, 50)},
                    lambda w, limit, c=coll: _rows_view(list(w.tables[c])[: max(0, min(limit, 200))])))
    _add(Capability(f"{coll}.count", "read", f"Count {coll} records.", {}, lambda w, c=coll: len(w.tables[c])))
    for fname, ann in fields.items():
        if ann in (int, float):
            for agg, fn in (("total", sum), ("max", max), ("min", min)):
                _add(Capability(f"{coll}.{agg}_{fname}", "read", f"The {agg} of {fname} over all {coll} records (null when there are none).", {},
                                lambda w, c=coll, f=fname, fn=fn: _aggregate(w.tables[c], f, fn)))
        if fname == "id" or ann not in (str, int, float, bool):
            continue
        _add(Capability(f"{coll}.find_by_{fname}", "read", f"List {coll} records whose {fname} equals `value`.",
                        {"value": (ann, REQ)},
                        lambda w, value, c=coll, f=fname: _rows_view([r for r in w.tables[c] if getattr(r, f) == value])))
        if ann is str:
            _add(Capability(f"{coll}.count_by_{fname}", "read", f"Count {coll} records per distinct {fname}.", {},
                            lambda w, c=coll, f=fname: _count_by(w.tables[c], f)))
            for num, nann in fields.items():
                if nann is float:
                    _add(Capability(f"{coll}.sum_{num}_by_{fname}", "read",
                                    f"Sum of {num} over {coll} records whose {fname} equals `value`.", {"value": (str, REQ)},
                                    lambda w, value, c=coll, f=fname, n=num: money(sum(getattr(r, n) for r in w.tables[c] if getattr(r, f) == value))))


def _aggregate(rows: Any, field: str, fn: Callable[[list[Any]], Any]) -> Any:
    values = [getattr(r, field) for r in rows]
    if not values:
        return None
    out = fn(values)
    return money(out) if isinstance(out, float) else out


def _missing(coll: str, key: str) -> Any:
    raise ToolError(f"{coll}: no record with id {key!r}")


def _count_by(rows: Any, field: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[getattr(r, field)] = out.get(getattr(r, field), 0) + 1
    return out


for _coll, _model in PAYMENTS_SCHEMA.items():
    if _coll not in PLATFORM_SCHEMA:  # the platform's other objects are only queried (query_records), never operated on
        _collection_reads(_coll, _model)


# ----- derived reads ---------------------------------------------------------------------------

def _amounts_by_account(entries: Any) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for e in entries:
        amounts = out.get(e.account_id)
        if amounts is None:
            out[e.account_id] = [e.amount]
        else:
            amounts.append(e.amount)
    return out


def _books(w: PaymentsWorld, account_id: str) -> tuple[float, float, float]:
    """``(w.balance(account_id), w.held(account_id), w.available(account_id))``, the same sums of the
    same amounts in the same order, without a scan of the whole ledger: the ledger is append-only,
    so the amounts of the rows the task's world started with are indexed once per task
    (``World.prefix_cached``) and only the entries posted since are read; a ledger changed otherwise
    is scanned as before. The figures are kept per account while the ledger and the holds keep their
    content (their stamps, as ``World.cached_text`` keeps text, for every world of the lineage): a
    payout or refund reads the figures the balance read before it left (an agent checks the balance
    before it moves money), and figures asked again of the same books are read, not summed again."""
    ledger = w.tables["ledger"]
    holds = w.tables["holds"]
    key = ("_books", account_id)
    stamps = (ledger.stamp, holds.stamp)
    kept = w._texts.get(key)
    if kept is not None and kept[0] == stamps:
        return kept[1]
    books = _books_summed(w, ledger, holds, account_id)
    w._texts[key] = (stamps, books, None)
    return books


def _available(w: PaymentsWorld, account_id: str) -> float:
    """``w.available(account_id)`` (``_books``'s third figure)."""
    return _books(w, account_id)[2]


def _books_summed(w: PaymentsWorld, ledger: Any, holds: Any, account_id: str) -> tuple[float, float, float]:
    """``_books`` summed from the ledger's indexed prefix and the entries posted since."""
    base = ledger.base
    if base is None:
        base = (ledger.stamp, len(ledger.rows))  # unchanged since copied: all its rows (``prefix_cached``'s test)
    hit = w._texts.get("_ledger_amounts") if base is not False else None
    if hit is not None and hit[0] == base:
        index, n = hit[1], base[1]  # ``prefix_cached``'s hit, without its call
    else:
        cached = w.prefix_cached("_ledger_amounts", "ledger", _amounts_by_account)
        if cached is None:
            return w.balance(account_id), w.held(account_id), w.available(account_id)
        index, n = cached
    amounts = index.get(account_id, [])
    rows = ledger.rows
    tail = len(rows) - n
    if tail > 0:
        # the entries posted since, read from the end (the indexed prefix is not walked again to
        # reach them), then put back in posting order: the same amounts summed in the same order
        posted = [e.amount for e in islice(reversed(rows.values()), tail) if e.account_id == account_id]
        if posted:
            posted.reverse()
            amounts = amounts + posted
    balance = money(sum(amounts))
    # ``w.held(account_id)``, the same list summed, without its call
    held = money(sum([h.amount for h in holds.rows.values() if h.account_id == account_id and h.status == "active"]))
    return balance, held, money(balance - held)


def _account_of(w: PaymentsWorld, merchant_id: str, kind: str) -> Any:
    """``w.account_of(merchant_id, kind)`` (the first such account in table order), from an index of
    the accounts table while this episode has not changed it (a world's copies share the index:
    ``World.cached_text``, valid while the table carries the same stamp), instead of a scan."""
    accounts = w.tables["accounts"]
    if not accounts.shared:
        return w.account_of(merchant_id, kind)
    kept = w._texts.get("_accounts_by_kind")
    if kept is not None and kept[0] == accounts.stamp and kept[2] is None:
        index = kept[1]  # ``cached_text``'s hit, without its call
    else:
        index = w.cached_text("_accounts_by_kind", ("accounts",), partial(_accounts_by_kind, accounts))
    acc = index.get((merchant_id, kind))
    return acc if acc is not None else w.account_of(merchant_id, kind)  # none: the world's own refusal


def _accounts_by_kind(accounts: Any) -> dict[tuple[str, str], Any]:
    """The first account of each ``(merchant_id, kind)`` in table order (``_account_of``'s index)."""
    out: dict[tuple[str, str], Any] = {}
    for a in accounts.rows.values():
        out.setdefault((a.merchant_id, a.kind), a)
    return out


def _balance(w: PaymentsWorld, account_id: str) -> dict[str, Any]:
    acc = w.tables["accounts"].get(account_id) or _missing("accounts", account_id)
    balance, held, available = _books(w, acc.id)
    return {"account_id": acc.id, "kind": acc.kind, "currency": acc.currency, "balance": balance,
            "held": held, "available": available}


_add(Capability("accounts.balance", "read", "Balance (derived from the ledger), held amount and available amount of an account.",
                {"account_id": (str, REQ)}, _balance))


def _statement(w: PaymentsWorld, account_id: str) -> list[dict[str, Any]]:
    return _rows_view([e for e in w.tables["ledger"] if e.account_id == account_id])


_add(Capability("accounts.statement", "read", "Ledger entries of one account in posting order.", {"account_id": (str, REQ)}, _statement))


def _refundable(w: PaymentsWorld, payment_id: str) -> dict[str, Any]:
    p = w.tables["payments"].get(payment_id) or _missing("payments", payment_id)
    done = money(sum(r.amount for r in w.tables["refunds"] if r.payment_id == p.id))
    return {"payment_id": p.id, "amount": p.amount, "refunded": done, "refundable": money(p.amount - done), "created_at": p.created_at}


_add(Capability("payments.refundable", "read", "How much of a payment is still refundable (ignores policy windows).",
                {"payment_id": (str, REQ)}, _refundable))


# ----- writes ----------------------------------------------------------------------------------

def _step(w: PaymentsWorld) -> int:
    return int(w.extra.get("_step", 0))


_PAYOUT_FIELDS = tuple(Payout.model_fields)
_REFUND_FIELDS = tuple(Refund.model_fields)


def _approvals_request(w: PaymentsWorld, operation: str, terms: dict[str, Any]) -> dict[str, Any]:
    if operation not in APPROVAL_TERMS:
        raise ToolError(f"operation must be one of {sorted(APPROVAL_TERMS)}")
    want = set(APPROVAL_TERMS[operation])
    if set(terms) != want:
        raise ToolError(f"terms of {operation} must have exactly the keys {sorted(want)}")
    if "amount" in terms and (not isinstance(terms["amount"], (int, float)) or isinstance(terms["amount"], bool) or terms["amount"] <= 0):
        raise ToolError("terms.amount must be a positive number")
    for k, v in terms.items():
        if k != "amount" and not isinstance(v, str):
            raise ToolError(f"terms.{k} must be a string id")
    apr = Approval(id=w.ids.next("APR"), operation=operation, terms=canonical_terms(operation, terms), requested_step=_step(w))
    w.tables["approvals"].insert(apr)
    return {"approval": apr, "note": "ask the merchant to approve or deny this request"}


_add(Capability("approvals.request", "write", "Create an approval request for the exact terms of one operation; the merchant decides it.",
                {"operation": (str, REQ), "terms": (dict[str, Any], REQ)}, _approvals_request,
                ("operation is payouts.create, refunds.create or fees.waive", "terms carry exactly the operation's term keys"),
                ("a pending approval binds the exact terms; the merchant grants or denies it when asked",)))


def _replay(table: Any, key: str, terms: Callable[[Any], tuple[Any, ...]], given: tuple[Any, ...]) -> Any:
    """The record of ``table`` made earlier with idempotency key ``key`` (None if none): a repeated
    key returns it when its ``terms`` (an ``attrgetter`` of the term fields) equal ``given``, and is
    refused otherwise."""
    for r in table.rows.values():  # (a ``Table``: its rows in order, without its iterator's call)
        if r.idempotency_key == key:
            if terms(r) != given:
                raise ToolError(f"idempotency_key {key!r} was already used with different terms")
            return r
    return None


# the terms a repeated idempotency key must match, per record kind (read in one call)
_PAYOUT_TERMS = attrgetter("merchant_id", "account_id", "bank_account_id", "amount")
_REFUND_TERMS = attrgetter("payment_id", "amount")
_FX_TERMS = attrgetter("from_account_id", "to_account_id", "amount")


def _payouts_create(w: PaymentsWorld, merchant_id: str, account_id: str, bank_account_id: str, amount: float, idempotency_key: str) -> dict[str, Any]:
    amount = money(amount)
    if not idempotency_key:
        raise ToolError("idempotency_key must be a non-empty string")
    tables = w.tables
    payouts = tables["payouts"]
    if payouts.rows:  # (none yet: no key to repeat)
        old = _replay(payouts, idempotency_key, _PAYOUT_TERMS, (merchant_id, account_id, bank_account_id, amount))
        if old is not None:
            return {"payout": old, "idempotent_replay": True}
    acc = tables["accounts"].rows.get(account_id)
    if acc is None or acc.merchant_id != merchant_id or acc.kind != "operating":
        raise ToolError(f"{account_id!r} is not an operating account of merchant {merchant_id!r}")
    bank = tables["bank_accounts"].rows.get(bank_account_id)
    if bank is None or bank.merchant_id != merchant_id:
        raise ToolError(f"{bank_account_id!r} is not a bank account of merchant {merchant_id!r}")
    if bank.currency and bank.currency != acc.currency:
        raise ToolError(f"bank account {bank_account_id} takes {bank.currency}; account {account_id} holds {acc.currency}")
    changes = tables["account_changes"].rows
    if changes:
        for change in changes.values():
            if change.bank_account_id == bank_account_id and change.status == "requested":
                raise ToolError(f"bank account {bank_account_id} is in the cooling period of change {change.id} until {change.effective_at}")
    if amount <= 0:
        raise ToolError("amount must be positive")
    if _available(w, account_id) < amount:
        raise ToolError(f"available balance of {account_id} is {w.available(account_id):.2f}, below {amount:.2f}")
    # the record as ``Payout(...)`` makes it, without validating again what is validated (the
    # capability's arguments are strings, ``amount`` is ``money``'s float)
    po = unvalidated(Payout, {"id": w.ids.next("PO"), "merchant_id": merchant_id, "account_id": account_id,
                              "bank_account_id": bank_account_id, "amount": amount, "idempotency_key": idempotency_key,
                              "time": w.clock.text(), "step": _step(w)}, set(_PAYOUT_FIELDS))
    payouts.insert(po)
    w.post_cents(account_id, -amount, "payout", po.id)  # (``post``'s entry: -amount is to the cent too)
    return {"payout": po, "idempotent_replay": False}


_enc = encode_basestring  # a string's JSON text, as the encoder writes it (``ensure_ascii=False``)

# the rows the two texts below write out, field by field in this order: a change to either class
# must change the text too (a test could not catch every field; the import does)
if _PAYOUT_FIELDS != ("id", "merchant_id", "account_id", "bank_account_id", "amount", "idempotency_key", "time", "step"):
    raise RuntimeError(f"Payout's fields changed ({_PAYOUT_FIELDS}): update _payout_json")
if _REFUND_FIELDS != ("id", "payment_id", "amount", "idempotency_key", "time", "step"):
    raise RuntimeError(f"Refund's fields changed ({_REFUND_FIELDS}): update _refund_json")


def _payout_json(out: dict[str, Any]) -> str:
    """``dumps(out)`` of ``payouts.create``'s result. A new payout's fields are the capability's
    string arguments, ids and the clock's text (each a string's JSON), ``money``'s float (its repr,
    as the encoder writes a finite float) and the step (an int); a replayed one is a stored row
    (a task's own, perhaps), encoded as any row."""
    if out["idempotent_replay"] is not False:
        return dumps(out)
    f = out["payout"].__dict__
    return (f'{{"payout": {{"id": {_enc(f["id"])}, "merchant_id": {_enc(f["merchant_id"])}, '
            f'"account_id": {_enc(f["account_id"])}, "bank_account_id": {_enc(f["bank_account_id"])}, '
            f'"amount": {float.__repr__(f["amount"])}, "idempotency_key": {_enc(f["idempotency_key"])}, '
            f'"time": {_enc(f["time"])}, "step": {int.__repr__(f["step"])}}}, "idempotent_replay": false}}')


def _refund_json(out: dict[str, Any]) -> str:
    """``dumps(out)`` of ``refunds.create``'s result, as ``_payout_json`` writes a payout's."""
    if out["idempotent_replay"] is not False:
        return dumps(out)
    f = out["refund"].__dict__
    return (f'{{"refund": {{"id": {_enc(f["id"])}, "payment_id": {_enc(f["payment_id"])}, '
            f'"amount": {float.__repr__(f["amount"])}, "idempotency_key": {_enc(f["idempotency_key"])}, '
            f'"time": {_enc(f["time"])}, "step": {int.__repr__(f["step"])}}}, "idempotent_replay": false}}')


_add(Capability("payouts.create", "write", "Pay out funds from an operating account to the merchant's bank account.",
                {"merchant_id": (str, REQ), "account_id": (str, REQ), "bank_account_id": (str, REQ), "amount": (float, REQ), "idempotency_key": (str, REQ)},
                _payouts_create, ("the account is the merchant's operating account", "the bank account belongs to the merchant",
                                  "a bank account with a currency takes payouts only from an account in that currency",
                                  "no bank-account change naming the bank account is in its cooling period",
                                  "available balance (balance minus active holds) covers the amount",
                                  "a repeated idempotency_key with the same terms returns the first payout"),
                ("a payout record to the bank account; a payout ledger entry debits the operating account",),
                ("merchants", "merchant_id"), _payout_json))


def _refunds_create(w: PaymentsWorld, payment_id: str, amount: float, idempotency_key: str) -> dict[str, Any]:
    amount = money(amount)
    if not idempotency_key:
        raise ToolError("idempotency_key must be a non-empty string")
    tables = w.tables
    refunds = tables["refunds"]
    if refunds.rows:  # (none yet: no key to repeat)
        old = _replay(refunds, idempotency_key, _REFUND_TERMS, (payment_id, amount))
        if old is not None:
            return {"refund": old, "idempotent_replay": True}
    p = tables["payments"].rows.get(payment_id) or _missing("payments", payment_id)
    if amount <= 0:
        raise ToolError("amount must be positive")
    # what ``payments.refundable`` reports as ``refundable``, without building its record (nothing
    # refunded yet: its amount less 0.0, which is its amount)
    done = [r.amount for r in refunds.rows.values() if r.payment_id == payment_id]
    left = money(p.amount - money(sum(done))) if done else money(p.amount)
    if amount > left:
        raise ToolError(f"payment {payment_id} has only {left:.2f} left to refund")
    reserve = _account_of(w, p.merchant_id, "reserve")
    if _available(w, reserve.id) < amount:
        raise ToolError(f"reserve account {reserve.id} holds only {w.available(reserve.id):.2f}")
    rf = unvalidated(Refund, {"id": w.ids.next("RF"), "payment_id": payment_id, "amount": amount,  # as Payout above
                              "idempotency_key": idempotency_key, "time": w.clock.text(), "step": _step(w)},
                     set(_REFUND_FIELDS))
    refunds.insert(rf)
    w.post_cents(reserve.id, -amount, "refund", rf.id)
    return {"refund": rf, "idempotent_replay": False}


_add(Capability("refunds.create", "write", "Refund (part of) a customer payment; the money leaves the merchant's reserve account.",
                {"payment_id": (str, REQ), "amount": (float, REQ), "idempotency_key": (str, REQ)}, _refunds_create,
                ("amount does not exceed what is left to refund", "the reserve account balance covers the amount",
                 "a repeated idempotency_key with the same terms returns the first refund"),
                ("a refund record; a refund ledger entry debits the reserve account",), ("payments", "payment_id"),
                _refund_json))


def _holds_place(w: PaymentsWorld, account_id: str, amount: float, reason: str) -> Hold:
    if w.tables["accounts"].get(account_id) is None:
        raise ToolError(f"no account {account_id!r}")
    if money(amount) <= 0:
        raise ToolError("amount must be positive")
    return w.tables["holds"].insert(Hold(id=w.ids.next("HD"), account_id=account_id, amount=money(amount), reason=reason))


_add(Capability("holds.place", "write", "Place a hold on an account (reduces its available balance).",
                {"account_id": (str, REQ), "amount": (float, REQ), "reason": (str, REQ)}, _holds_place,
                ("the account exists", "amount is positive"), ("an active hold reduces the account's available balance",),
                ("accounts", "account_id")))


def _holds_release(w: PaymentsWorld, hold_id: str) -> Hold:
    h = w.tables["holds"].get(hold_id) or _missing("holds", hold_id)
    if h.status != "active":
        raise ToolError(f"hold {hold_id} is already released")
    if h.case_id:
        case = w.tables["cases"].require(h.case_id)
        if case.status != "approved":
            raise ToolError(f"hold {hold_id} is tied to case {case.id}, which is {case.status}; it can be released only once the case is approved")
    return w.tables["holds"].update(hold_id, status="released")


_add(Capability("holds.release", "write", "Release an active hold.", {"hold_id": (str, REQ)}, _holds_release,
                ("the hold is active", "a hold tied to a review case needs the case approved"),
                ("the hold is released; the available balance rises by its amount",), ("holds", "hold_id")))


def _cases_attach(w: PaymentsWorld, case_id: str, upload_id: str) -> Case:
    case = w.tables["cases"].get(case_id) or _missing("cases", case_id)
    up = w.tables["uploads"].get(upload_id) or _missing("uploads", upload_id)
    if case.status != "open":
        raise ToolError(f"case {case_id} is {case.status}; documents can be attached only to open cases")
    if up.merchant_id != case.merchant_id:
        raise ToolError(f"upload {upload_id} belongs to another merchant")
    if upload_id in case.attachments:
        return case
    return w.tables["cases"].update(case_id, attachments=(*case.attachments, upload_id))


_add(Capability("cases.attach_document", "write", "Attach a customer upload to an open review case.",
                {"case_id": (str, REQ), "upload_id": (str, REQ)}, _cases_attach, ("the case is open", "the upload is the merchant's"),
                ("the upload is among the case's attachments",), ("cases", "case_id")))


def _cases_submit(w: PaymentsWorld, case_id: str) -> dict[str, Any]:
    case = w.tables["cases"].get(case_id) or _missing("cases", case_id)
    if case.status != "open":
        raise ToolError(f"case {case_id} is {case.status}; only open cases can be submitted")
    if not case.attachments:
        raise ToolError(f"case {case_id} has no attached document")
    doc = w.governing("reviews", case.merchant_id)
    required = doc.rules.get("required_document", "") if doc else ""
    minutes = int(doc.rules.get("review_minutes", 10)) if doc else 10
    case = w.tables["cases"].update(case_id, status="submitted", required_document=required, submitted_at=w.clock.text())
    when = (w.clock.now + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M:%S")
    w.tables["events"].insert(Event(id=w.ids.next("EVR"), time=when, kind="review_complete", ref=case_id))
    return {"case": case, "review_completes_at": when}


_add(Capability("cases.submit", "write", "Submit an open review case with its attachments; the review completes later.",
                {"case_id": (str, REQ)}, _cases_submit, ("the case is open", "at least one document is attached"),
                ("the case is submitted", "a review completion event decides it later on the clock"), ("cases", "case_id")))


def _applications_submit(w: PaymentsWorld, merchant_id: str, kind: str, requested_limit: float, upload_ids: list[str]) -> dict[str, Any]:
    if w.tables["merchants"].get(merchant_id) is None:
        _missing("merchants", merchant_id)
    if kind != "payout_limit_increase":
        raise ToolError("kind must be payout_limit_increase")
    limit = money(requested_limit)
    current = w.payout_limit(merchant_id)
    if current is not None and limit <= current:
        raise ToolError(f"requested_limit {limit:.2f} is not above the limit in force ({current:.2f})")
    if not upload_ids:
        raise ToolError("an application needs at least one uploaded document")
    for u in upload_ids:
        up = w.tables["uploads"].get(u) or _missing("uploads", u)
        if up.merchant_id != merchant_id:
            raise ToolError(f"upload {u} belongs to another merchant")
    for a in w.tables["applications"]:
        if a.merchant_id == merchant_id and a.status == "submitted":
            raise ToolError(f"application {a.id} of merchant {merchant_id} is still under review")
    doc = w.governing("payouts", merchant_id)
    required = doc.rules.get("limit_increase_document", "") if doc else ""
    minutes = int(doc.rules.get("limit_increase_minutes", 15)) if doc else 15
    when = (w.clock.now + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M:%S")
    app = Application(id=w.ids.next("APP"), merchant_id=merchant_id, kind="payout_limit_increase", requested_limit=limit,
                      attachments=tuple(dict.fromkeys(upload_ids)), required_document=required, submitted_at=w.clock.text(),
                      decides_at=when)
    w.tables["applications"].insert(app)
    w.tables["events"].insert(Event(id=w.ids.next("EVA"), time=when, kind="application_decision", ref=app.id))
    return {"application": app, "decided_at": when}


_add(Capability("applications.submit", "write", "Apply for a higher single-payout limit with uploaded documents; an institutional review decides it later.",
                {"merchant_id": (str, REQ), "kind": (str, REQ), "requested_limit": (float, REQ), "upload_ids": (list[str], REQ)},
                _applications_submit, ("kind is payout_limit_increase", "requested_limit is above the limit in force",
                                       "the uploads are the merchant's", "no other application of the merchant is under review",
                                       "the governing payout policy names the required document and the review time"),
                ("the application is under review", "its decision takes effect at decides_at"), ("merchants", "merchant_id")))


def _receipts_issue(w: PaymentsWorld, payout_id: str) -> Receipt:
    po = w.tables["payouts"].get(payout_id) or _missing("payouts", payout_id)
    for r in w.tables["receipts"]:
        if r.payout_id == payout_id:
            return r
    return w.tables["receipts"].insert(Receipt(id=w.ids.next("RC"), payout_id=po.id, amount=po.amount))


_add(Capability("receipts.issue", "write", "Issue the receipt of a payout (idempotent); the merchant confirms it.",
                {"payout_id": (str, REQ)}, _receipts_issue, ("the payout exists",),
                ("the payout has one receipt; the merchant confirms it",), ("payouts", "payout_id")))


def _fx_quote(w: PaymentsWorld, from_currency: str, to_currency: str, amount: float) -> dict[str, Any]:
    rate = w.fx_rate(from_currency, to_currency)
    return {"from_currency": from_currency, "to_currency": to_currency, "amount": money(amount), "rate": rate,
            "converted": money(amount * rate)}


_add(Capability("fx.quote", "read", "Quote a currency conversion at the current rate.",
                {"from_currency": (str, REQ), "to_currency": (str, REQ), "amount": (float, REQ)}, _fx_quote))


def _fx_convert(w: PaymentsWorld, from_account_id: str, to_account_id: str, amount: float, idempotency_key: str) -> dict[str, Any]:
    amount = money(amount)
    if not idempotency_key:
        raise ToolError("idempotency_key must be a non-empty string")
    old = _replay(w.tables["fx_conversions"], idempotency_key, _FX_TERMS, (from_account_id, to_account_id, amount))
    if old is not None:
        return {"conversion": old, "idempotent_replay": True}
    src = w.tables["accounts"].get(from_account_id) or _missing("accounts", from_account_id)
    dst = w.tables["accounts"].get(to_account_id) or _missing("accounts", to_account_id)
    if src.merchant_id != dst.merchant_id:
        raise ToolError("both accounts must belong to the same merchant")
    if src.currency == dst.currency:
        raise ToolError(f"both accounts hold {src.currency}; nothing to convert")
    if amount <= 0:
        raise ToolError("amount must be positive")
    if _available(w, src.id) < amount:
        raise ToolError(f"available balance of {src.id} is {w.available(src.id):.2f}, below {amount:.2f}")
    rate = w.fx_rate(src.currency, dst.currency)
    fx = FxConversion(id=w.ids.next("FX"), merchant_id=src.merchant_id, from_account_id=src.id, to_account_id=dst.id, amount=amount,
                      rate=rate, converted=money(amount * rate), idempotency_key=idempotency_key, time=w.clock.text(), step=_step(w))
    w.tables["fx_conversions"].insert(fx)
    w.post(src.id, -amount, "fx_out", fx.id)
    w.post(dst.id, fx.converted, "fx_in", fx.id)
    return {"conversion": fx, "idempotent_replay": False}


_add(Capability("fx.convert", "write", "Convert funds between two of a merchant's accounts in different currencies at the current rate.",
                {"from_account_id": (str, REQ), "to_account_id": (str, REQ), "amount": (float, REQ), "idempotency_key": (str, REQ)},
                _fx_convert, ("both accounts belong to the same merchant and hold different currencies",
                              "available balance of the source covers the amount",
                              "a repeated idempotency_key with the same terms returns the first conversion"),
                ("a conversion record; ledger entries debit the source and credit the destination at the rate",),
                ("accounts", "from_account_id")))


def _catalogue_hits(query: str, limit: int) -> list[int]:
    """Positions in the catalogue index of the best ``limit`` capabilities for ``query``: scored by
    occurrences of its words in name and summary, best first, then by name."""
    global _INDEX
    index = _INDEX
    if index is None or len(index.items) != len(CATALOGUE):  # built once (again if the catalogue grew)
        index = _INDEX = TextIndex(CATALOGUE.values(), lambda c: c.name, lambda c: c.text, lambda c: dumps(_summary(c)))
    words = [t for t in query.casefold().replace(".", " ").replace("_", " ").split() if t]
    if not words:
        return []
    keys = index.keys
    hits = sorted((-s, keys[i], i) for i, s in index.scores(words).items())
    return [i for _, _, i in hits[: max(1, min(limit, 50))]]


def _summary(cap: Capability) -> dict[str, Any]:
    return {"name": cap.name, "kind": cap.kind, "summary": cap.summary}


_INDEX: TextIndex | None = None


def search_catalogue(query: str, limit: int = 10) -> list[dict[str, Any]]:
    index_hits = _catalogue_hits(query, limit)
    return [_summary(_INDEX.items[i]) for i in index_hits]


def search_catalogue_json(query: str, limit: int = 10) -> RawJson:
    """``dumps(search_catalogue(query, limit))``, from each capability's JSON encoded once."""
    index_hits = _catalogue_hits(query, limit)
    return json_array([_INDEX.json(i) for i in index_hits])
