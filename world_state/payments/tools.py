"""The ten resident tools of the payments agent, in front of the capability catalogue."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from servicegym.world_state.core import History, World
from servicegym.world_state.payments.capabilities import CATALOGUE, search_catalogue_json
from servicegym.world_state.payments.world import PAYMENTS_SCHEMA, PaymentsWorld, document_search, document_summary
from servicegym.world_state.tools import Query, RawJson, ToolError, dumps, rule, tool

# every collection but the knowledge base (searched and read with its own tools)
QUERYABLE = tuple(n for n in PAYMENTS_SCHEMA if n != "documents")


_doc_summary = document_summary


@tool("read")
def search_documents(world: PaymentsWorld, query: Query, product: str | None = None, region: str | None = None,
                     tier: str | None = None, currency: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
    """Search the knowledge base, best match first (BM25 ranking of the query's words in title and
    body, ties by id). Filters match a document's scope exactly (or its "*" scope). A match is not a
    rule: the governing document is the highest version of the merchant's exact scope whose
    effective_from is not after now; superseded versions and other scopes' documents look alike.

    Args:
        query: keywords
        product: payouts, refunds, reserves, reviews, disputes, fees, settlements, verifications, fx, account_changes or limits
        region: US, EU, UK or APAC
        tier: standard, plus or enterprise
        currency: USD, EUR or GBP
        limit: most results (1-50)
    """
    # Okapi BM25 (k1 1.2, b 0.75; title words count twice; statistics of the shared background
    # knowledge base) over lower-cased letter/digit runs with a plural s/ies stripped, best first,
    # then by id; the background is indexed once per knowledge base and the task's own documents once
    # per world (knowledge.DocumentIndex), never rescanned per call
    words = [t for t in query.casefold().split() if t]
    filters = [(k, v) for k, v in (("product", product), ("region", region), ("tier", tier), ("currency", currency)) if v is not None]
    return document_search(world, words, filters, max(1, min(limit, 50)))


@tool("read")
def read_document(world: PaymentsWorld, doc_id: str) -> dict[str, Any]:
    """Read one knowledge-base document in full.

    Args:
        doc_id: the document id from search_documents
    """
    d = world.table("documents").get(doc_id)
    if d is None:
        raise ToolError(f"no document {doc_id!r}; find ids with search_documents")
    # a document is read again and again while an agent works a case: its text is kept while the
    # documents table is unchanged
    return world.cached_text(("read_document", doc_id), ("documents",),
                             lambda: RawJson(dumps({**_doc_summary(d), "body": d.body})))


@tool("read")
def query_records(world: PaymentsWorld, collection: str, filters: dict[str, Any] | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """List records of one collection whose fields equal every value in ``filters``.

    Args:
        collection: merchants, accounts, bank_accounts, ledger, holds, payments, refunds, payouts, receipts, cases, uploads, approvals, applications, events, fx_conversions, disputes, fees, fee_schedules, settlements, settlement_lines, reconciliation_breaks, statements, verifications, account_changes, limits, payout_schedules, risk_reviews, webhooks, notifications, or one of the platform's other collections (customers, invoices, subscriptions, charges, card networks, compliance checks, team members, api keys and the like; an unknown name lists them all)
        filters: field -> value, all must match
        limit: most records (1-200)
    """
    if collection not in QUERYABLE:
        raise ToolError(f"unknown collection {collection!r}; choose from {', '.join(QUERYABLE)}")
    filters = filters or {}
    fields = world.table(collection).model.model_fields
    bad = [k for k in filters if k not in fields]
    if bad:
        raise ToolError(f"{collection} has no field {bad[0]!r}; fields: {', '.join(fields)}")
    rows = [r for r in world.table(collection) if all(getattr(r, k) == v for k, v in filters.items())]
    return [r.model_dump(mode="json") for r in rows[: max(1, min(limit, 200))]]


@tool("read")
def search_capabilities(world: PaymentsWorld, query: Query, limit: int = 10) -> list[dict[str, Any]]:
    """Search the catalogue of business capabilities by keywords.

    Args:
        query: keywords, e.g. "payout create"
        limit: most results (1-50)
    """
    return search_catalogue_json(query, limit)


@tool("read")
def describe_capability(world: PaymentsWorld, name: str) -> dict[str, Any]:
    """Describe a capability: kind, parameters and pre-conditions (required before calling it).

    Args:
        name: the capability name, e.g. accounts.balance
    """
    cap = CATALOGUE.get(name)
    if cap is None:
        raise ToolError(f"unknown capability {name!r}; find names with search_capabilities or in the documents")
    return cap.describe()


def _described(world: World, history: History, args: dict[str, Any]) -> str | None:
    name = args.get("name")
    if name not in CATALOGUE:
        return f"unknown capability {name!r}; find names with search_capabilities or in the documents"
    if not history.called("describe_capability", name):
        return f"describe {name!r} with describe_capability before calling it"
    return None


@tool("write", pre=[rule("the capability exists and was described earlier with describe_capability", _described, ["describe_capability"])])
def call_capability(world: PaymentsWorld, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call a business capability by name with its arguments.

    Args:
        name: the capability name
        arguments: the capability's arguments (see describe_capability)
    """
    return CATALOGUE[name].call(world, arguments or {})


@tool("read")
def read_clock(world: PaymentsWorld) -> dict[str, Any]:
    """The current simulated time and the time of the next scheduled event."""
    nxt = min((e.time for e in world.table("events") if e.status == "scheduled"), default=None)
    return {"now": world.clock.text(), "next_event_at": nxt}


@tool("write")
def wait(world: PaymentsWorld, minutes: Annotated[float, Field(gt=0, le=1440)]) -> dict[str, Any]:
    """Let simulated time pass; scheduled events that fall due fire in order and are reported.

    Args:
        minutes: how long to wait (0 < minutes <= 1440)
    """
    fired = world.advance(minutes)
    return {"now": world.clock.text(), "notifications": fired}


CONVERSATION_TOOLS = ("ask_customer", "finish")


@tool("read")
def ask_customer(world: PaymentsWorld, message: str) -> str:
    """Send a message to the merchant and get its reply (the same as replying with plain text).
    It must be the only call of its action.

    Args:
        message: what to say or ask
    """
    raise ToolError("ask_customer must be the only tool call of its action; or reply with plain text")


@tool("read")
def finish(world: PaymentsWorld, summary: str) -> str:
    """End the conversation with a final summary to the merchant (the same as a message with ###STOP###).
    It must be the only call of its action.

    Args:
        summary: what was done
    """
    raise ToolError("finish must be the only tool call of its action; or reply with a message containing ###STOP###")


RESIDENT_TOOLS = [search_documents, read_document, query_records, search_capabilities, describe_capability,
                  call_capability, read_clock, wait, ask_customer, finish]
