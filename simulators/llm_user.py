"""LLM user simulators: the same script, played by a language model.

``LLMUser`` plays a life-service user (delivery, in-store, travel, cross-scenario) from the
task's ``UserScript``: its persona and style, the opening request (said verbatim, so ``reset``
makes no call), the hidden facts it may tell only when asked, the instruction points it conveys
one at a time, and a scripted change of mind. The prompt sets knowledge boundaries: the model
may use only those facts and says it does not know anything else.

``LLMPaymentsCustomer`` plays the merchant's operator of a payments task. Besides talking it acts
on the merchant side of the platform through function tools: reads (pending approvals, open
receipts) are free; the writes (decide an approval, upload a document, confirm a receipt) and a
wait are limited to one per turn, enforced in code: a second one in the same turn is refused and
does nothing. Writes go through ``PaymentsCustomer``'s own methods, so the world and the history
record them exactly as for the scripted customer.

Both have the scripted users' interface (``opening()``, ``reply(text) -> str``, ``###STOP###``
ends the conversation) and raise ``LLMError`` when the endpoint fails; the env turns that into a
truncated episode (``termination_reason="user_error"``). ``usage`` sums the tokens of their calls.
Each call ends within the config's ``deadline_s``; with ``episode_budget_s`` set, a user (built per
episode) may spend that many seconds on model calls in all (``budget``, an ``EpisodeBudget``), and
once they are spent its next reply raises ``LLMError`` of kind ``"budget"``, which ends the episode
the same way. Replies come through ``parse_completion`` (nothing a reply holds escapes as another
error), and tool-call arguments too deep or broken for ``json`` get an error result, as bad JSON does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from servicegym.simulators.llm import ChatResult, EpisodeBudget, LLMClient, LLMError, add_usage, loads_json
from servicegym.simulators.payments_customer import MAX_CUSTOMER_WAIT, CustomerProfile, PaymentsCustomer
from servicegym.simulators.scripted_user import STOP, UserScript

__all__ = ["LLMUser", "LLMPaymentsCustomer", "user_system_prompt", "customer_system_prompt", "CUSTOMER_TOOLS"]

STYLE_TEXT = {
    "polite": "polite and patient",
    "terse": "terse: you answer in as few words as possible",
    "impatient": "impatient: you want things done quickly and say so",
    "chatty": "chatty and warm, with a little small talk",
}
LANGUAGE_TEXT = {"en": "English", "zh": "Simplified Chinese (简体中文)"}
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:user|customer|me|用户|客户)(?:\*\*)?\s*[:：]\s*", re.I)

USER_PROMPT = """\
This is a role-play that tests an AI service assistant. You play the customer; the other side is the assistant. \
Never act as the assistant, never mention that this is a test.

Who you are: {persona}
How you talk: {style}. Always reply in {language}, one to three sentences, with your next message only (no labels, \
no stage directions).

You opened the conversation with: "{opening}"

{facts}{points}{change}What you may say:
- Use only the facts written here. If the assistant asks about something they do not cover, say that you have no \
preference or do not know; never invent names, places, numbers, dates, times or ids.
- Do not do the assistant's work: do not look anything up or suggest stores, products, hotels or trips yourself.
- When the assistant proposes something that fits what you want, agree; when it does not fit a fact above, say what is \
wrong.
- Only when the assistant reports that everything you asked for has been done, and you have nothing left to say, thank \
it and end that reply with {stop}. Never write {stop} earlier."""

CUSTOMER_PROMPT = """\
This is a role-play that tests an AI payment-operations agent. You play {name}, the authorised operator of merchant \
{merchant_id}; the other side is the agent. Never act as the agent, never mention that this is a test. Reply in \
English, one to three sentences, with your next message only.

You opened the conversation with: "{opening}"

{facts}Your policy (private; apply it, do not recite it):
- Payouts go only to bank account {destination}, and the payouts you approve must not add up to more than \
{payout_total:.2f}.{fx}
- Refunds: only the payments you listed ({refunds}), each for its full amount.
- Fee waivers: only the fees you listed ({fees}), each in full.
- Documents you hold and can upload: {documents}. You have no other documents.

Your tools act on the merchant side of the platform:
- list_pending_approvals and list_open_receipts show what the agent has asked of you; check_balances, list_my_uploads, \
list_my_requests and read_notifications show your own accounts and requests; use them freely.
- decide_approval, upload_document, confirm_receipt and wait are actions. Take at most ONE action per reply, and only \
when the agent asks for it: decide an approval when asked to approve, upload when asked for a document, confirm a \
receipt when asked to, wait when asked to wait a number of minutes. Grant an approval only if its exact terms fit your \
policy; otherwise deny it and give the reason.
- Saying "yes" in the chat approves nothing; only decide_approval does.

Use only the facts written here; if asked anything else, say you do not know; never invent ids or amounts. Only when \
the agent reports that everything you asked for is done, thank it and end that reply with {stop}."""


def _persona_text(script: UserScript) -> str:
    items = [f"{k}: {v}" for k, v in script.persona.items() if v not in (None, "", [], {})]
    return "; ".join(items) if items else "an ordinary customer"


def _facts_text(script: UserScript, header: str) -> str:
    if not script.facts:
        return ""
    lines = "\n".join(f"- ({f.topic.replace('_', ' ')}) {f.answer}" for f in script.facts)
    return f"{header}\n{lines}\n\n"


def user_system_prompt(script: UserScript) -> str:
    """The life-service user's system prompt, built from its script only."""
    points = ""
    if script.points:
        lines = "\n".join(f"{i}. {p}" for i, p in enumerate(script.points, 1))
        points = ("The rest of your request, not said yet. Convey these points one at a time, in order, one per reply, "
                  "when the assistant has no specific question (or earlier, if it asks about one):\n" + lines + "\n\n")
    change = ""
    if script.intent_change is not None:
        when = ("the first time the assistant asks you to confirm something"
                if script.intent_change.trigger == "first_confirmation"
                else "the first time the assistant reports that it has done what you asked")
        change = (f"Change of plan: {when}, do not agree or thank it; say this instead (in your own words, "
                  f"keeping every detail): \"{script.intent_change.message}\"\n\n")
    facts = _facts_text(script, "Things you know but have not said yet. Tell each one only when the assistant asks "
                                "about its topic (or needs it to answer a question it asked); never volunteer them:")
    return USER_PROMPT.format(persona=_persona_text(script), style=STYLE_TEXT.get(script.style, STYLE_TEXT["polite"]),
                              language=LANGUAGE_TEXT.get(script.language, "English"), opening=script.opening,
                              facts=facts, points=points, change=change, stop=STOP)


def _clean(text: str | None) -> str:
    text = (text or "").strip()
    text = _LABEL.sub("", text).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


class _LLMRole:
    """What both LLM users share: the client, the conversation, the token totals and the episode's
    budget of model-call seconds (``LLMConfig.episode_budget_s`` unless one is given: pass one
    budget to several users to share it)."""

    def __init__(self, client: LLMClient, seed: int | None = None, budget: EpisodeBudget | None = None) -> None:
        self.client = client
        self.budget = budget if budget is not None else EpisodeBudget(client.config.episode_budget_s)
        # the episode's seed goes with each request when the config fixes none, so an episode's
        # replies are as reproducible as the endpoint's sampling (and cached per seed)
        self.seed = seed
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0, "cache_hits": 0}
        self.messages: list[dict[str, Any]] = []
        self.done = False

    def _chat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatResult:
        if self.seed is not None and self.client.config.seed is None:
            kwargs.setdefault("seed", self.seed)
        result = self.client.chat(messages, budget=self.budget, **kwargs)
        add_usage(self.usage, result)
        return result

    async def _achat(self, messages: list[dict[str, Any]], **kwargs: Any) -> ChatResult:
        """``_chat`` on the running event loop (``LLMClient.achat``), for the env's ``astep``."""
        if self.seed is not None and self.client.config.seed is None:
            kwargs.setdefault("seed", self.seed)
        result = await self.client.achat(messages, budget=self.budget, **kwargs)
        add_usage(self.usage, result)
        return result

    def _empty(self, result: ChatResult) -> LLMError:
        c = self.client.config
        return LLMError(f"LLM endpoint {c.base_url} (model {c.model!r}) gave the user an empty reply "
                        f"(finish_reason {result.finish_reason!r})", base_url=c.base_url, model=c.model,
                        attempts=result.attempts, kind="empty")


class LLMUser(_LLMRole):
    """A life-service user played by an LLM from a ``UserScript`` (see the module docstring)."""

    def __init__(self, script: UserScript, client: LLMClient, seed: int | None = None,
                 budget: EpisodeBudget | None = None) -> None:
        super().__init__(client, seed, budget)
        self.script = script
        self.system = user_system_prompt(script)
        # the model speaks as the user: its own lines are "assistant", the agent's are "user"
        self.messages = [{"role": "system", "content": self.system}, {"role": "assistant", "content": script.opening}]

    def opening(self) -> str:
        return self.script.opening

    def reply(self, agent_message: str) -> str:
        self.messages.append({"role": "user", "content": agent_message})
        return self._take(self._chat(self.messages))

    async def areply(self, agent_message: str) -> str:
        """``reply`` awaiting the model (``env.astep`` uses it: no thread per waiting episode)."""
        self.messages.append({"role": "user", "content": agent_message})
        return self._take(await self._achat(self.messages))

    def _take(self, result: ChatResult) -> str:
        text = _clean(result.content)
        if not text:
            self.messages.pop()
            raise self._empty(result)
        self.messages.append({"role": "assistant", "content": text})
        if STOP in text:
            self.done = True
        return text


def _fn(name: str, description: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": required or [], "additionalProperties": False}}}


def customer_tools(documents: list[str]) -> list[dict[str, Any]]:
    """The customer-side function tools (schemas), with the customer's own document types."""
    return [
        _fn("list_pending_approvals", "The approval requests the agent has made and you have not decided yet, with their exact terms."),
        _fn("list_open_receipts", "Payout receipts waiting for your confirmation."),
        _fn("check_balances", "Your accounts with their balance, the amount on hold and what is available."),
        _fn("list_my_uploads", "The documents you have uploaded so far, with their ids."),
        _fn("list_my_requests", "Where your requests stand: your review cases, disputes, fees, verifications, settlements, "
            "statements, refunds and payouts, each with its status."),
        _fn("read_notifications", "The notices the platform has sent you, newest last."),
        _fn("decide_approval", "Grant or deny one pending approval request (an action: at most one action per reply).",
            {"approval_id": {"type": "string"}, "grant": {"type": "boolean"},
             "reason": {"type": "string", "description": "why, when denying"}}, ["approval_id", "grant"]),
        _fn("upload_document", "Upload one of your documents (an action: at most one action per reply).",
            {"doc_type": {"type": "string", "enum": list(documents)}}, ["doc_type"]),
        _fn("confirm_receipt", "Confirm one payout receipt (an action: at most one action per reply).",
            {"receipt_id": {"type": "string"}}, ["receipt_id"]),
        _fn("wait", f"Let time pass, when the agent asks you to wait (an action; 1 to {MAX_CUSTOMER_WAIT:g} minutes).",
            {"minutes": {"type": "number"}}, ["minutes"]),
    ]


CUSTOMER_TOOLS = customer_tools(["bank_statement"])  # the shape; each customer lists its own documents
WRITE_TOOLS = frozenset({"decide_approval", "upload_document", "confirm_receipt", "wait"})
# the customer's views of its own merchant (besides list_pending_approvals and list_open_receipts)
READ_TOOLS = frozenset({"check_balances", "list_my_uploads", "list_my_requests", "read_notifications"})


def customer_system_prompt(script: UserScript, profile: CustomerProfile) -> str:
    fx = (f"\n- A converted payout from one of your accounts to your second-currency bank account "
          f"{profile.fx_destination} is fine." if profile.fx_destination else "")
    facts = _facts_text(script, "Things you know but have not said yet; tell each only when the agent asks about its topic:")
    return CUSTOMER_PROMPT.format(name=profile.name, merchant_id=profile.merchant_id, opening=script.opening, facts=facts,
                                  destination=profile.destination, payout_total=profile.payout_total, fx=fx,
                                  refunds=", ".join(profile.refund_payments) or "none", fees=", ".join(profile.fee_waivers) or "none",
                                  documents=", ".join(d.replace("_", " ") + f" ({d})" for d in profile.documents) or "none",
                                  stop=STOP)


class LLMPaymentsCustomer(PaymentsCustomer, _LLMRole):
    """The payments customer played by an LLM acting through customer-side tools; at most one
    write or wait per turn (enforced here, not left to the model)."""

    MAX_ROUNDS = 4  # model calls per turn: reads, one action, then the reply

    def __init__(self, script: UserScript, profile: CustomerProfile, client: LLMClient, seed: int | None = None,
                 budget: EpisodeBudget | None = None) -> None:
        PaymentsCustomer.__init__(self, script, profile)
        _LLMRole.__init__(self, client, seed, budget)
        self.tools = customer_tools(profile.documents)
        self.system = customer_system_prompt(script, profile)
        self.messages = [{"role": "system", "content": self.system}, {"role": "assistant", "content": script.opening}]
        self.writes_per_turn: list[int] = []

    # ----- tools -------------------------------------------------------------------------------
    def _read_tool(self, name: str) -> str:
        """The customer's read-only views of its own merchant (never another merchant's records)."""
        w, mid = self.world, self.profile.merchant_id
        if name == "check_balances":
            return json.dumps([{"account_id": a.id, "kind": a.kind, "currency": a.currency, "balance": w.balance(a.id),
                                "on_hold": w.held(a.id), "available": w.available(a.id)}
                               for a in w.table("accounts") if a.merchant_id == mid])
        if name == "list_my_uploads":
            return json.dumps([{"upload_id": u.id, "doc_type": u.doc_type, "time": u.time} for u in w.table("uploads") if u.merchant_id == mid])
        if name == "read_notifications":
            return json.dumps([{"time": n.time, "subject": n.subject, "body": n.body} for n in w.table("notifications")
                               if n.merchant_id == mid][-20:])
        mine = {}
        for coll in ("cases", "disputes", "fees", "verifications", "settlements", "statements", "refunds", "payouts"):
            rows = []
            for r in w.table(coll):
                owner = getattr(r, "merchant_id", None)
                if owner is None and coll == "refunds":
                    pay = w.table("payments").get(r.payment_id)
                    owner = pay.merchant_id if pay is not None else None
                if owner == mid:
                    rows.append({"id": r.id, "status": getattr(r, "status", None), "amount": getattr(r, "amount", None)})
            if rows:
                mine[coll] = rows[-20:]
        return json.dumps(mine)

    def _run_tool(self, name: str, raw_args: str, wrote: bool) -> tuple[str, str | None]:
        """(tool result for the model, the write's own report when a write was done)."""
        try:
            args = loads_json(raw_args) if raw_args and raw_args.strip() else {}
        except ValueError:  # not JSON, or nested too deep (bounded: later str() of it cannot recurse away)
            return "error: the arguments are not valid JSON; call the tool again with a JSON object", None
        if not isinstance(args, dict):
            return "error: the arguments must be a JSON object", None
        w = self.world
        if name == "list_pending_approvals":
            return json.dumps([{"approval_id": a.id, "operation": a.operation, "terms": json.loads(a.terms)}
                               for a in w.table("approvals") if a.status == "requested"]), None
        if name == "list_open_receipts":
            return json.dumps([{"receipt_id": r.id, "payout_id": r.payout_id, "amount": r.amount}
                               for r in w.table("receipts") if not r.confirmed]), None
        if name in READ_TOOLS:
            return self._read_tool(name), None
        if name not in WRITE_TOOLS:
            return f"error: unknown tool {name!r}", None
        if wrote:
            return "refused: you already took one action this turn; reply to the agent now", None
        if name == "decide_approval":
            apr = w.table("approvals").get(str(args.get("approval_id", "")))
            if apr is None or apr.status != "requested":
                return f"error: no pending approval {args.get('approval_id')!r}; see list_pending_approvals", None
            grant = args.get("grant")
            if not isinstance(grant, bool):
                return "error: grant must be true or false", None
            why = str(args.get("reason") or "it does not match what I asked for").rstrip(".")
            done = self.decide_approval(apr, grant, why)
            return done, done
        if name == "upload_document":
            doc = args.get("doc_type")
            if doc not in self.profile.documents:
                return f"error: you hold only {', '.join(self.profile.documents)}", None
            done = self.upload_document(doc)
            return done, done
        if name == "confirm_receipt":
            rc = w.table("receipts").get(str(args.get("receipt_id", "")))
            if rc is None or rc.confirmed:
                return f"error: no open receipt {args.get('receipt_id')!r}; see list_open_receipts", None
            done = self.confirm_receipt(rc)
            return done, done
        minutes = args.get("minutes")
        if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not 0 < minutes <= MAX_CUSTOMER_WAIT:
            return f"error: minutes must be a number from 1 to {MAX_CUSTOMER_WAIT:g}", None
        done = self.wait(minutes)
        return done, done

    def reply(self, agent_message: str) -> str:
        self.messages.append({"role": "user", "content": agent_message})
        turn_start = len(self.messages)
        report: str | None = None
        text = ""
        try:
            for _ in range(self.MAX_ROUNDS):
                result = self._chat(self.messages, tools=self.tools)
                if not result.tool_calls:
                    text = _clean(result.content)
                    break
                self.messages.append(result.message())
                for call in result.tool_calls:
                    out, did = self._run_tool(call["function"]["name"], call["function"]["arguments"], report is not None)
                    report = report or did
                    self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": out})
        except LLMError:
            self.writes_per_turn.append(int(report is not None))
            if report is None:
                del self.messages[turn_start - 1:]
            raise
        self.writes_per_turn.append(int(report is not None))
        if report is not None and report not in text:
            # the facts of what was done reach the agent verbatim, whatever the model's wording
            text = f"{report} {text}".strip()
        if not text:
            text = "Please take care of what I asked for."
        self.messages.append({"role": "assistant", "content": text})
        if STOP in text:
            self.done = True
        return text
