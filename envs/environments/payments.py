"""The payments environment (BizBench: compliant long-horizon payment operations)."""

from __future__ import annotations

import math
from typing import Any

from servicegym.envs.environments.base import ToolUseEnv
from servicegym.envs.environments.parsing import parse_action
from servicegym.envs.tasks.generators.payments import generate_payments_task
from servicegym.envs.tasks.model import Task
from servicegym.envs.tasks.sources import GeneratedSource, TaskSource
from servicegym.envs.tasks.suites import suite_path
from servicegym.rewards.payments import check_payments
from servicegym.rewards.rubric import EpisodeView
from servicegym.simulators.payments_customer import CustomerProfile, PaymentsCustomer
from servicegym.simulators.scripted_user import STOP
from servicegym.world_state.payments import RESIDENT_TOOLS, PaymentsWorld, build_payments_world, prepare_backgrounds
from servicegym.world_state.payments.capabilities import CATALOGUE
from servicegym.world_state.payments.world import document_summary
from servicegym.world_state.tools import dumps

__all__ = ["DISCLOSURES", "GOLD_DOCUMENTS_MAX_CHARS", "PaymentsEnv", "SUITE_PATH", "disclosed_opening", "gold_document_ids",
           "golden_calls"]

SUITE_PATH = suite_path("payments")

PROMPT = (
    "You are a payment-operations agent acting for merchant {merchant} ({region}, {tier} tier, {currency}). "
    "Current time: {time}.\n"
    "Business rules live in the knowledge base: documents are scoped (product, region, tier, currency) and versioned; "
    "the rule that governs an action is the highest version whose scope matches the merchant and whose effective_from is "
    "not after the moment of the action. Read the governing document before any action that depends on it.\n"
    "Business operations are capabilities: find them with search_capabilities or in the documents, read each one's "
    "schema with describe_capability, then run it with call_capability. Writes that need the merchant's approval must "
    "be approved for their exact terms before they run (approvals.request, then ask the merchant); agreement in "
    "conversation is not an approval. Time passes only when you wait; scheduled events are reported when they fire.\n"
    "Call a tool by replying with {form}; several such blocks may go in one reply. Any other reply is sent to the "
    "merchant. Reply ###STOP### when you are finished."
)


DISCLOSURES = ("minimal", "full")
# the gold documents' block in the first observation is cut at this many characters (a note says so)
GOLD_DOCUMENTS_MAX_CHARS = 16_000


def golden_calls(task: Task) -> int:
    """The tool calls of ``task``'s golden trace (what ``call_cap`` multiplies); a lone
    ``ask_customer``/``finish`` is a message, as the env reads it."""
    return sum(len(parse_action(_conversation_call(a) if isinstance(a, str) else a).tool_calls) for a in task.golden_actions)


def gold_document_ids(task: Task) -> list[str]:
    """The documents that govern ``task``: those its golden route reads (``read_document``), in
    the order it first reads them (procedures, then the merchant's scoped policies, including a
    version that takes effect during the episode)."""
    out: list[str] = []
    for a in task.golden_actions:
        for call in parse_action(a).tool_calls:
            doc = call.arguments.get("doc_id") if call.name == "read_document" and isinstance(call.arguments, dict) else None
            if isinstance(doc, str) and doc not in out:
                out.append(doc)
    return out


def disclosed_opening(task: Task) -> str:
    """The merchant's opening under ``disclosure="full"``: the usual request followed by every
    private fact (each hidden fact's answer and the documents it can upload)."""
    facts = [f.answer for f in task.user.facts]
    docs = (task.world.get("customer") or {}).get("documents") or []
    if docs:
        facts.append("Documents I can upload if you need them: " + ", ".join(d.replace("_", " ") for d in docs) + ".")
    return " ".join([task.user.opening, *facts])


def _conversation_call(action: str) -> str:
    """A lone ``ask_customer(message)`` or ``finish(summary)`` call is that message (``finish``
    adds ``###STOP###``); anything else is left for the ordinary path."""
    parsed = parse_action(action)
    if len(parsed.tool_calls) != 1 or parsed.errors:
        return action
    call = parsed.tool_calls[0]
    args = call.arguments if isinstance(call.arguments, dict) else {}
    key = {"ask_customer": "message", "finish": "summary"}.get(call.name)
    if key is None or set(args) != {key} or not isinstance(args[key], str) or not args[key].strip():
        return action
    text = args[key]
    if call.name == "finish" and STOP not in text:
        text = f"{text} {STOP}"
    return text


class PaymentsEnv(ToolUseEnv):
    """
    ## Description
    Compliant payment operations after BizBench: an agent serves a merchant's operator who asks
    for several coupled workflows at once (refunds paid from a reserve that must stay above its
    floor at every ledger entry, a review case whose hold blocks a payout, a payout that must be
    split under a single-payout limit that changes while the agent waits). The world has
    merchants, accounts whose balances derive from an append-only ledger, holds, payouts,
    refunds, FX conversions, receipts, review cases, limit-increase applications, uploads,
    approvals, the operations records (disputes, fees, settlements and their lines,
    reconciliation breaks, statements, KYC/KYB verifications, bank-account changes, limits,
    payout schedules, risk reviews, webhooks, notifications), 178 collections of the platform's
    other objects that only ``query_records`` reads (208 collections, about 3,600 records, most
    of them other merchants'), and scheduled events (settlements, rule versions, review,
    application, dispute and verification decisions, dispute deadlines, FX rate moves) on a
    simulated clock that moves only when the agent waits. A knowledge base of about 1,040
    versioned, scoped documents (superseded and current guidance side by side, near-duplicates,
    versions not yet in force, neighbouring scopes) holds the rules. Ten
    resident tools (``search_documents``, ``read_document``, ``query_records``,
    ``search_capabilities``, ``describe_capability``, ``call_capability``, ``read_clock``,
    ``wait``, and ``ask_customer``/``finish``, tool-call spellings of a message to the
    merchant and of ``###STOP###``) stand in front of a catalogue of 600 business capabilities; a
    capability must be described before it is called. Messages go to the merchant (a scripted
    customer with private facts and an approval policy; at most one customer-side write a turn).

    ## Action Space
    ``UnicodeText``: the raw assistant completion; JSON calls, OpenAI ``tool_calls`` or
    ``<tool_call>`` blocks call tools, anything else is a message to the merchant.

    ## Observation Space
    ``UnicodeText``: ``<tool_result>``/``<tool_error>`` blocks (``wait`` reports fired events as
    notifications), ``<user>`` for the merchant's reply, ``<error>`` for unreadable actions.

    ## Starting State
    The task's world and the merchant's opening request.

    ## Reward
    0 on every step; on the final step 1 if G and P and F all hold, else 0 (strict success).
    G: requested outcomes in the final state. P: ordered obligations over the history (the
    governing document read before each rule-dependent write; an approval of exactly the
    executed terms granted before each payout and each refund above the threshold; a
    limit-increase application carrying the document its governing policy requires, and a payout
    that relies on it only after its decision; a conversion quoted at the rate in force when it
    runs; the governing disputes, fees, settlements or verifications document read before a
    dispute is contested or accepted, a fee waived, a break written off or investigated, a
    verification submitted; the merchant's approval before a fee waiver above the fees policy's
    limit). Goal checks of the operations workflows a task holds: ``goal.statement`` (issued),
    ``goal.disputes`` (contested ones won, small ones accepted), ``goal.fees`` (waived),
    ``goal.settlement`` (reconciled), ``goal.verification`` (approved). F: the reserve floor after
    every ledger entry, the payout limit in force (governing limit, raised by an approved
    application) and the refund window, no writes on objects outside the task (a conversion the
    task does not ask for, a capability no workflow of the task needs, a workflow's write on a
    record it does not name, a write whose target record belongs to another merchant). Rejected calls, approval requests (proposals) and
    idempotent retries have no effect on the score.

    ## Episode End
    Terminated when the agent or the merchant says ``###STOP###``; truncated after
    ``max_steps`` (200) actions or ``max_errors`` (20) failed calls, and with ``call_cap`` when the
    agent's tool calls reach the cap (``termination_reason`` ``"call_cap"``).

    ## Information
    ``reset``: ``task_id``, ``domain``, ``system_prompt``, ``tools``; with experiment options also
    ``env_options`` (those that differ from their defaults), and with ``call_cap`` ``golden_calls``
    and ``call_limit``. Every step with ``call_cap``: ``tool_calls`` (run so far) and ``call_limit``.
    Final step: ``success`` and ``score``: ``goal``, ``process``, ``protection``, ``strict``,
    ``rubric/<check>`` per check and ``violations`` (each ``{"check", "step", "detail"}``, the step
    where it happened).

    ## Arguments
    ```python
    env = gym.make("servicegym/Payments-v0")                # generated train tasks (difficulty 2)
    env = gym.make("servicegym/Payments-v0", split="test")  # the frozen 50-task suite
    ```
    ``difficulty`` 0-4 (more refunds and payout parts, an out-of-window payment from 1; from 3 a
    second-currency account and a converted payout while the rate moves; at 4 the payout is one
    transfer above every policy limit, so a limit-increase application must be submitted early
    and decided first; operations workflows join by difficulty: last month's statement from 1,
    a chargeback to contest before its deadline from 2, chargeback fees to waive from 3, and at 4
    a second chargeback, a small one to accept, a settlement break to investigate and a KYB
    verification; golden routes average 46, 50, 64, 80 and 111 tool calls at 0 to 4),
    ``max_steps``, ``max_errors``, ``render_mode`` (``ansi``), ``tasks`` (a task file or list),
    ``user`` (``scripted``, or ``llm``: the merchant played by a model that acts through
    customer-side tools, one write or wait a turn; endpoint ``llm={"base_url": ..., "model": ...}``
    or ``SERVICEGYM_BASE_URL``/``SERVICEGYM_MODEL``).

    BizBench's experiments (each checked at ``make``, a bad value a one-line ``ValueError``; each
    recorded in ``info["env_options"]``, ``env.unwrapped.env_options`` and a rollout record's
    ``env_options``, so reports label and keep apart runs made with different ones;
    ``scripts/bizbench_grid.py`` runs them all):

    * ``call_cap`` (None, or a positive multiple such as 1.2 or 2.0): the episode ends, truncated
      with ``termination_reason="call_cap"``, at the step where the agent's tool calls reach
      ``ceil(call_cap x golden_calls(task))`` (the golden trace's tool calls; a message, a lone
      ``ask_customer``/``finish`` and ``respond`` are not calls, a failed call is); calls of that
      action beyond the cap are not run. Scored as any other ended episode. The oracle fits
      ``call_cap=1.0`` exactly and fails below it.
    * ``disclosure`` (``"minimal"``, the default: facts only on request; ``"full"``): the merchant
      states every private fact in its opening (``disclosed_opening``: the bank account payouts go
      to, the documents it can upload); the LLM merchant's persona prompt opens with the same words
      and holds nothing back.
    * ``gold_documents`` (False; True): the documents that govern the task (those its golden route
      reads, ``gold_document_ids``: the procedures and the merchant's scoped policies, a version
      that takes effect later included) follow the opening in the first observation, in a
      ``<documents>`` block of whole documents up to ``GOLD_DOCUMENTS_MAX_CHARS`` (16,000)
      characters; the history records them as read at step 0, so discovery can be skipped.

    ```python
    env = gym.make("servicegym/Payments-v0", split="test", call_cap=1.2)
    env = gym.make("servicegym/Payments-v0", split="test", disclosure="full", gold_documents=True)
    ```

    Every servicegym env also takes ``user_tool`` (``True``: the simulated user is also the tool
    ``respond(message)``, whose result is the reply, for trainer loops that end at a reply
    without a tool call), and offers ``astep``/``areset`` (awaitable), ``turn_messages()`` (the
    OpenAI messages a step added) and ``score_keys`` (the components of ``info["score"]`` every
    finished episode reports as floats).

    ## References
    BizBench (compliant long-horizon business execution), tau2-bench banking knowledge.

    ## Version History
    * v0: initial release (generator v1, frozen suite of 50 tasks); generator v2 (suite rebuilt):
      limit-increase applications at difficulty 4, FX conversions inside tasks from difficulty 3
      (required FX legal, any other FX a forbidden side effect), checks ``process.application``,
      ``process.fx_quote`` and ``goal.fx``.
    * v0, before the first published release: action limits at the edge (1 MiB, 32 calls, 256 KiB
      an argument, 1,000-character search queries), lone surrogates replaced by U+FFFD, the
      user reads the first 8,000 characters of a message, ``score_keys`` always present as
      floats; generated tasks, suites and their scores unchanged.
    * v0: BizBench's experiments as options, ``call_cap``, ``disclosure="full"`` and
      ``gold_documents=True`` (off by default: the default env, its tasks, suites and scores are
      unchanged).
    * v0, generator v3 (suite rebuilt): BizBench's scale (600 capabilities, about 1,040 documents
      a world, 208 collections) and the operations workflows above; checks ``goal.statement``,
      ``goal.disputes``, ``goal.fees``, ``goal.settlement``, ``goal.verification``; the LLM
      merchant's ten tools. Tasks, suite and golden routes changed; scores of the old suite are
      not comparable with the new one.
    """

    domain = "payments"
    tool_specs = RESIDENT_TOOLS
    score_keys = ("goal", "process", "protection", "strict")
    default_difficulty = 2

    def __init__(self, *args: Any, max_steps: int = 200, max_errors: int = 20, call_cap: float | None = None,
                 disclosure: str = "minimal", gold_documents: bool = False, **kwargs: Any) -> None:
        if kwargs.get("judge", "code") == "llm":
            # payments is scored by G/P/F over the history; there are no rubric items for a judge to read
            raise ValueError("judge='llm' does not apply to Payments-v0 (scored by the G/P/F checker); use judge='code'")
        # BizBench's experiments (see the docstring): checked here, so a bad value fails at make()
        if call_cap is not None and (isinstance(call_cap, bool) or not isinstance(call_cap, (int, float))
                                     or not math.isfinite(call_cap) or call_cap <= 0):
            raise ValueError(f"call_cap must be None or a positive number (a multiple of the golden trace's tool calls, "
                             f"e.g. 1.2), got {call_cap!r}")
        if disclosure not in DISCLOSURES:
            raise ValueError(f"disclosure must be 'minimal' (facts on request) or 'full' (every fact in the opening), got {disclosure!r}")
        if not isinstance(gold_documents, bool):
            raise ValueError(f"gold_documents must be True or False, got {gold_documents!r}")
        self.call_cap = None if call_cap is None else float(call_cap)
        self.disclosure = disclosure
        self.gold_documents = gold_documents
        self._disclosed: dict[int, tuple[Task, Task]] = {}  # id(task) -> (task, its full-disclosure copy)
        super().__init__(*args, max_steps=max_steps, max_errors=max_errors, **kwargs)
        # the shared background records of every knowledge-base variant, once per process: no reset
        # to a new task then builds one (a variant's first reset would pay tens of milliseconds)
        prepare_backgrounds()

    @property
    def env_options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.call_cap is not None:
            out["call_cap"] = self.call_cap
        if self.disclosure != "minimal":
            out["disclosure"] = self.disclosure
        if self.gold_documents:
            out["gold_documents"] = True
        return out

    def _choose_task(self, options: dict[str, Any]) -> Task:
        task = super()._choose_task(options)
        if self.disclosure == "minimal":
            return task
        # disclosure="full": the same task whose merchant opens with every private fact (one copy per task
        # object, sharing its built world)
        hit = self._disclosed.get(id(task))
        if hit is None or hit[0] is not task:
            if len(self._disclosed) >= 1024:
                self._disclosed.clear()
            user = task.user.model_copy(update={"opening": disclosed_opening(task)})
            hit = self._disclosed[id(task)] = (task, task.model_copy(update={"user": user}))
        return hit[1]

    def default_source(self, difficulty: int | None) -> TaskSource:
        return GeneratedSource(self.domain, generate_payments_task, SUITE_PATH,
                               self.default_difficulty if difficulty is None else int(difficulty))

    def build_world(self, task: Task) -> PaymentsWorld:
        # a generated task's own records are built as its generator made them, unvalidated
        return build_payments_world(task.world, vouched=task.vouched_world)

    def system_prompt(self, task: Task, world: PaymentsWorld) -> str:
        m = world.table("merchants").require(world.extra["merchant_id"])
        return PROMPT.format(merchant=m.id, region=m.region, tier=m.tier, currency=m.currency, time=world.clock.text(),
                             form=self.tool_call_form)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        if not self._llm_user:  # user="llm": make_llm_user built the LLM customer already
            self._user = PaymentsCustomer(self.task.user, CustomerProfile(**self.task.world["customer"]))
        self._user.bind(self.world, self.history, 0)
        info["capabilities"] = len(CATALOGUE)
        self._call_limit = None
        if self.call_cap is not None:
            golden = golden_calls(self.task)
            if not golden:
                raise ValueError(f"call_cap needs the task's golden trace: task {self.task.task_id} has no golden tool calls")
            self._call_limit = math.ceil(round(self.call_cap * golden, 9))
            info["golden_calls"], info["call_limit"] = golden, self._call_limit
        if self.gold_documents:
            obs = self._with_gold_documents(obs)
        if self.env_options:
            info["env_options"] = self.env_options
        return obs, info

    def _with_gold_documents(self, opening: str) -> str:
        """``gold_documents=True``: the first observation is the opening followed by the documents the
        golden route reads, in full (cut at ``GOLD_DOCUMENTS_MAX_CHARS``); the history records them as
        read at step 0 (event ``gold_documents``), so the checker counts them as read."""
        docs = self.world.table("documents")
        ids, lines, left = [], [], []
        size = 0
        for d in gold_document_ids(self.task):
            doc = docs.get(d)
            if doc is None:
                continue
            line = dumps({**document_summary(doc), "body": doc.body})
            if size + len(line) + 1 > GOLD_DOCUMENTS_MAX_CHARS:  # whole documents only
                left.append(d)
                continue
            size += len(line) + 1
            ids.append(d)
            lines.append(line)
        if left:
            lines.append(f"[{len(left)} more over the {GOLD_DOCUMENTS_MAX_CHARS}-character limit: {', '.join(left)}; read them with read_document]")
        text = "\n".join(lines)
        self.history.append(step=0, time=self.world.clock.text(), kind="event", role="env", name="gold_documents",
                            arguments={"doc_ids": ids}, content=f"{len(ids)} documents given in the first observation")
        obs = f"{opening}\n<documents>\nThe documents that govern this request (read them; no search needed):\n{text}\n</documents>"
        self._log[1] = ("user", obs)
        self._transcript[1] = ("[user] ", obs)
        return obs

    def _before_step(self, action: Any) -> Any:
        if isinstance(action, str) and ("ask_customer" in action or "finish" in action):
            action = _conversation_call(action)
        if not self._done and self.world is not None:
            self.world.extra["_step"] = self._steps + 1
            self._user.bind(self.world, self.history, self._steps + 1)
        return action

    def make_llm_user(self, task: Task, seed: int) -> Any:
        from servicegym.simulators.llm_user import LLMPaymentsCustomer

        # disclosure="full": the opening it said holds every fact, so none is left to hold back
        script = task.user if self.disclosure == "minimal" else task.user.model_copy(update={"facts": []})
        return LLMPaymentsCustomer(script, CustomerProfile(**task.world["customer"]), self.llm_client(), seed=seed)

    def score(self, task: Task, view: EpisodeView) -> tuple[bool, dict[str, Any]]:
        return check_payments(view.world, view.history, task.world["goal"])
