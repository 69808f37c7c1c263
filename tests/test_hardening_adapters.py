"""Every trainer adapter under the loopback server's endpoint faults (issue 30): the episode ends with
a reason the trainer reads, within the endpoint's deadline (plus slack), and no exception escapes.

Where a model endpoint enters each adapter's episode (``ROLES``):

- ``user``: the LLM user simulator (``user="llm"``), reached when the agent talks to the user (TRL,
  verl, SkyRL, NeMo-Gym, the gateway ``rollout()``, verifiers' tool server);
- ``judge``: the LLM judge (``judge="llm"``), reached when the episode ends;
- ``policy``: the agent itself served behind a chat-completions URL (the gateway ``rollout()``, and
  verifiers' harness through its interception server).

Every request to the faulty endpoint gets the same fault (``FAULTS``): no reply before the timeout,
HTTP 429 with ``Retry-After``, HTTP 500, a body that is not JSON, a tool call whose arguments are
not JSON, a reply trickled a byte at a time, the connection reset mid-reply or before any reply, and
nothing listening at all. The client runs with short timeouts (``ENDPOINT``), so each call ends
within about a second; ``HANG_S`` is the hang bound, far above that and far below any test timeout.

What each adapter reports (``Outcome``: the trainer-visible reason, reward and error text):

- user faults end the episode truncated with ``termination_reason == "user_error"``, reward 0, the
  error said in the text the agent reads (TRL, NeMo-Gym) or carried with the result;
- judge faults end it with the env's own reason (``agent_stop``), reward 0 and ``judge_error``;
- policy faults end ``rollout()`` with ``"policy_error"`` and ``error`` (the ``LLMError`` as JSON),
  except a tool call with broken arguments, which is the model's bad action: the env answers it
  with a tool error, and the episode ends at ``max_errors``.

Under verifiers the policy's calls go through verifiers' own interception server and client, so
verifiers reports a failing policy endpoint itself (``trace.stop_condition`` ``provider_error`` and
``trace.errors``; a stall ends at the rollout deadline, ``load_environment(rollout_timeout_s=)``,
``agent_timeout``); tool calls with broken arguments never reach the env and end at the adapter's
``turns_without_env_steps`` stop. Those cases need ``servicegym[verifiers]`` (verifiers 0.4 pins
openai<3: CI's second venv), run all at once (``verifiers_traces``) and skip elsewhere, saying so;
each adapter's other cases skip without its extra likewise."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import servicegym  # noqa: F401  (registers the ids)
from servicegym.envs.environments.base import STOP, USER_TOOL
from servicegym.simulators.llm import aclose_clients
from servicegym.simulators.loopback import Fault, LoopbackServer, text_reply, tool_call_reply

DELIVERY = "servicegym/Delivery-v0"
ASK = "Which address should the order go to?"
# the endpoint's client: 0.3 s per read, 0.8 s per call in all (retries and waits included), one retry
ENDPOINT = {"timeout_s": 0.3, "deadline_s": 0.8, "max_retries": 1, "backoff_base_s": 0.01, "retry_after_max_s": 1.0}
HANG_S = 20.0  # a hang check: each case makes at most a few calls of 0.8 s; the faults that stall stop only at the deadline

FAULTS: dict[str, Callable[[], Fault | None]] = {
    "timeout": lambda: Fault.slow(30.0),
    "429-retry-after": lambda: Fault.status(429, retry_after=0),
    "500": lambda: Fault.status(500),
    "malformed-json": Fault.garbage,
    "malformed-tool-args": lambda: Fault.malformed_tool_call(USER_TOOL, '{"message": "Two of '),
    "trickle": lambda: Fault.trickle(0.05),
    "reset-mid-reply": lambda: Fault.reset(8),
    "reset-before-reply": lambda: Fault.reset(None),
    "refused": lambda: None,  # nothing listens at the URL
}
ERROR_KINDS = {"status", "timeout", "deadline", "reset", "connection", "malformed", "empty", "budget"}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-hardening-adapters")
    for var in ("SERVICEGYM_BASE_URL", "SERVICEGYM_MODEL", "SERVICEGYM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)


@dataclass
class Outcome:
    """What the trainer gets back: the end reason, the reward, and the text that says what failed."""

    reason: str
    reward: float
    error: str = ""  # the judge's error, the policy error's JSON, or the user error as the agent read it
    error_kind: str = ""  # the LLMError kind, where the adapter hands the error over as data
    done: bool = True


class FaultyEndpoint:
    """A loopback server answering every request with one fault (``refused``: a closed server's URL)."""

    def __init__(self, fault: str) -> None:
        self.fault = fault
        make = FAULTS[fault]
        self.server = LoopbackServer(handler=lambda body: make())
        self.url = ""

    def __enter__(self) -> FaultyEndpoint:
        self.server.start()
        self.url = self.server.base_url
        if self.fault == "refused":
            self.server.close()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.close()

    def llm(self) -> dict[str, Any]:
        return {"base_url": self.url, "model": self.server.model, **ENDPOINT}

    def env_kwargs(self, role: str) -> dict[str, Any]:
        return {"user": "llm", "llm": self.llm()} if role == "user" else {"judge": "llm", "llm": self.llm()}


def bounded(fn: Callable[[], Any], limit: float = HANG_S) -> tuple[Any, float]:
    """``fn()`` in a thread, failing the test if it has not returned within ``limit`` seconds
    (a hang then fails here instead of holding the run); its exception, if any, is raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001  re-raised in the test's thread
            box["error"] = err

    start = time.monotonic()
    thread = threading.Thread(target=target, name="adapter-under-fault", daemon=True)
    thread.start()
    thread.join(limit)
    elapsed = time.monotonic() - start
    if thread.is_alive():
        pytest.fail(f"the adapter hung: no return after {limit:.0f} s")
    if "error" in box:
        raise box["error"]
    return box["value"], elapsed


def run_async(coro_fn: Callable[[], Any]) -> Any:
    async def main() -> Any:
        try:
            return await coro_fn()
        finally:
            await aclose_clients()

    return asyncio.run(main())


@functools.cache
def delivery_row() -> dict[str, Any]:
    from servicegym.envs.integrations.dataset import task_rows

    return task_rows(DELIVERY, "test", 1, 0, {"user_tool": True})[0]


# ----- the adapters, each driven as its trainer drives it ------------------------------------------

def drive_trl(endpoint: FaultyEndpoint, role: str) -> Outcome:
    """TRL's tool loop: ``reset(**row)``, the ``respond`` tool (user role), then ``get_reward()``
    (which ends an open episode with ###STOP###, so the judge runs)."""
    pytest.importorskip("trl", reason="the TRL adapter needs trl: pip install -e '.[trl]'")
    from servicegym.envs.integrations.trl import environment_factory, trl_rows

    env = environment_factory(DELIVERY, **endpoint.env_kwargs(role))()
    row = trl_rows(DELIVERY, "test", 1)[0]
    env.reset(**row)
    said = getattr(env, USER_TOOL)(message=ASK) if role == "user" else ""
    reward = env.get_reward()
    error = said if role == "user" else (env.judge_error or "")
    return Outcome(env.termination_reason, reward, error)


@functools.cache
def _verl_tokenizer() -> Any:
    from tests.envs.test_verl import build_tokenizer

    return build_tokenizer()


def drive_verl(endpoint: FaultyEndpoint, role: str) -> Outcome:
    """verl's agent loop with a stand-in server manager that answers every turn with one
    completion: a message to the user (user role) or ###STOP### (judge role)."""
    pytest.importorskip("verl", reason="the verl adapter needs verl: pip install 'servicegym[verl]'")
    from verl.workers.rollout.replica import TokenOutput

    from servicegym.envs.integrations.verl import AGENT_NAME, ServiceGymAgentLoop
    from tests.envs.test_verl import completion_ids, config, loop_kwargs, sampling

    tokenizer = _verl_tokenizer()
    ids = completion_ids(tokenizer, ASK if role == "user" else STOP)

    class OneReply:
        async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
            return TokenOutput(token_ids=ids[: sampling_params["max_tokens"]], log_probs=None, num_preempted=0)

    row = {"env_id": DELIVERY, "task_id": delivery_row()["task_id"], "seed": 0, "raw_prompt": [],
           "agent_name": AGENT_NAME}

    async def episode():
        loop = ServiceGymAgentLoop(**loop_kwargs(tokenizer, OneReply(), config()),
                                   env_kwargs=endpoint.env_kwargs(role), max_turns=4)
        return await loop.run(sampling(), **row)

    out = run_async(episode)
    extra = out.extra_fields
    return Outcome(extra["termination_reason"], out.reward_score, extra.get("judge_error") or "",
                   done=extra["termination_reason"] not in ("max_turns", "response_length"))


def drive_skyrl(endpoint: FaultyEndpoint, role: str) -> Outcome:
    """SkyRL's generator: ``skyrl_gym.make(env_class, env_config, extras=row)``, ``init``, ``step``."""
    skyrl_gym = pytest.importorskip("skyrl_gym", reason='skyrl-gym not installed (pip install "servicegym[skyrl]")')
    from servicegym.envs.integrations.skyrl import skyrl_rows

    row = skyrl_rows(DELIVERY, "test", 1)[0]
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config=endpoint.env_kwargs(role), extras={**extras, "max_turns": 4})
    try:
        env.init(row["prompt"])
        out = env.step(ASK if role == "user" else STOP)
    finally:
        env.close()
    meta = out["metadata"]
    json.dumps(meta)  # SkyRL logs it
    error = meta.get("judge_error") or "" if role == "judge" else ""
    return Outcome(meta.get("termination_reason", ""), out["reward"], error, done=out["done"])


def drive_nemo_gym(endpoint: FaultyEndpoint, role: str) -> Outcome:
    """The resources server's session registry as its endpoints call it: ``/seed_session``, a
    ``/respond`` tool call (user role), ``/verify`` (which ends an open episode: the judge runs)."""
    from servicegym.envs.integrations import nemo_gym as ng

    row = ng.nemo_gym_rows(DELIVERY, "test", 1)[0]
    registry = ng.SessionRegistry(DELIVERY, endpoint.env_kwargs(role))

    async def episode():
        await registry.aseed("s", row)
        said = await registry.acall("s", USER_TOOL, {"message": ASK}) if role == "user" else ""
        return said, await registry.averify("s")

    said, result = run_async(episode)
    json.dumps(result)  # the /verify body
    error = said if role == "user" else result.get("judge_error") or ""
    return Outcome(result["termination_reason"], result["reward"], error)


def drive_rollout(endpoint: FaultyEndpoint, role: str) -> Outcome:
    """The gateway ``rollout()``: the policy at the faulty endpoint (policy role), or a healthy
    policy that talks to the user (user role) or ends at once (judge role) with the env's LLM user
    or judge at the faulty one."""
    from servicegym.envs.integrations.rollout import rollout

    task_id = delivery_row()["task_id"]
    if role == "policy":
        result = run_async(lambda: rollout(DELIVERY, task_id, 0, base_url=endpoint.url, model="loopback-model",
                                           llm=dict(ENDPOINT)))
    else:
        with LoopbackServer(handler=lambda body: text_reply(ASK if role == "user" else STOP)) as policy:
            result = run_async(lambda: rollout(DELIVERY, task_id, 0, base_url=policy.base_url, model=policy.model,
                                               llm={"timeout_s": 5.0}, env_kwargs=endpoint.env_kwargs(role)))
    json.dumps(result.to_json())
    if role == "policy":
        error = json.dumps(result.error) if result.error else ""
        kind = (result.error or {}).get("kind", "")
    else:
        error = result.info.get("judge_error") or "" if role == "judge" else ""
        kind = ""
    return Outcome(result.termination_reason, result.reward, error, kind, done=result.termination_reason != "")


DRIVERS: dict[str, Callable[[FaultyEndpoint, str], Outcome]] = {
    "trl": drive_trl, "verl": drive_verl, "skyrl": drive_skyrl, "nemo_gym": drive_nemo_gym, "rollout": drive_rollout,
}
ROLES = {"trl": ("user", "judge"), "verl": ("user", "judge"), "skyrl": ("user", "judge"),
         "nemo_gym": ("user", "judge"), "rollout": ("policy", "user", "judge")}
CASES = [(a, r) for a, roles in ROLES.items() for r in roles]


def ready(adapter: str) -> None:
    """Import what the adapter needs (skipping without its extra) and build what its driver caches,
    outside the timed call: a first import of verl or TRL takes seconds, none of them the endpoint's."""
    extra = {"trl": "trl", "verl": "verl", "skyrl": "skyrl_gym"}.get(adapter)
    if extra:
        pytest.importorskip(extra, reason=f"the {adapter} adapter needs its extra: pip install -e '.[{adapter}]'")
    delivery_row()
    if adapter == "trl":
        import servicegym.envs.integrations.trl  # noqa: F401
    elif adapter == "verl":
        import servicegym.envs.integrations.verl  # noqa: F401
        _verl_tokenizer()
    elif adapter == "skyrl":
        import servicegym.envs.integrations.skyrl  # noqa: F401


def check(outcome: Outcome, role: str, fault: str) -> None:
    """The reason and reward every adapter owes the trainer for a fault at ``role``'s endpoint."""
    assert outcome.done, f"the episode was left open ({outcome.reason!r})"
    assert outcome.reward == 0.0
    if role == "user":
        assert outcome.reason == "user_error", outcome
        assert "could not reply" in outcome.error or outcome.error == "", outcome
    elif role == "judge" and fault == "malformed-tool-args":
        # a reply without a verdict is the judge's documented "malformed reply": the items are kept
        # unchanged and the problem logged in info["judge"]; the judge itself did not fail
        assert outcome.reason == "agent_stop" and not outcome.error, outcome
    elif role == "judge":
        assert outcome.reason == "agent_stop", outcome
        assert "window 0" in outcome.error, "the judge's failure is not reported"
    elif fault == "malformed-tool-args":  # the model's bad action: answered with tool errors until max_errors
        assert outcome.reason == "max_errors", outcome
    else:
        assert outcome.reason == "policy_error", outcome
        assert outcome.error_kind in ERROR_KINDS, outcome


@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize(("adapter", "role"), CASES, ids=[f"{a}-{r}" for a, r in CASES])
def test_adapter_ends_the_episode_with_a_reason_under_an_endpoint_fault(adapter, role, fault):
    ready(adapter)
    with FaultyEndpoint(fault) as endpoint:
        outcome, elapsed = bounded(lambda: DRIVERS[adapter](endpoint, role))
    check(outcome, role, fault)
    if role == "user" and adapter in ("trl", "nemo_gym"):  # the agent read why in the tool's result
        assert "could not reply" in outcome.error and "[The conversation has ended (user_error).]" in outcome.error
    assert elapsed < HANG_S


def test_a_transient_fault_is_retried_and_the_episode_goes_on():
    """One 429 (Retry-After 0) then a reply: the user's reply arrives, nothing ends (the retry is the
    client's, under every adapter alike)."""
    from servicegym.envs.integrations import nemo_gym as ng

    row = ng.nemo_gym_rows(DELIVERY, "test", 1)[0]
    with LoopbackServer(script=[Fault.status(429, retry_after=0), "It is for two people."]) as server:
        registry = ng.SessionRegistry(DELIVERY, {"user": "llm", "llm": server.config(**ENDPOINT)})

        async def episode():
            await registry.aseed("s", row)
            return await registry.acall("s", USER_TOOL, {"message": ASK})

        said, _ = bounded(lambda: run_async(episode))
        assert said == "It is for two people." and len(server.requests) == 2
    assert not registry.get("s").done


# ----- verifiers: its own rollout loop, in CI's verifiers venv -------------------------------------

KEY_VAR = "SERVICEGYM_LOOPBACK_KEY"
ROLLOUT_S = 30.0  # load_environment(rollout_timeout_s=): verifiers' own deadline for the agent (its client has none)
# the policy under every fault; the LLM user (the same env.step in the rollout's tool server as under the
# other adapters) under one of each family: an error status, a stall, a dead endpoint
VERIFIERS_CASES = [("policy", f) for f in FAULTS] + [("user", f) for f in ("500", "trickle", "refused")]


@pytest.fixture(scope="module")
def verifiers_traces():
    """Every verifiers case at once: each fault's episode in its own ``serving()`` (the tool servers
    are subprocesses, seconds each), all concurrently, each against its own endpoint. The policy
    role: verifiers' harness calls the faulty endpoint through its interception server; the user
    role: a healthy policy that talks to the user through ``respond``, the LLM user faulty."""
    vf = pytest.importorskip("verifiers.v1", reason="needs servicegym[verifiers] (verifiers>=0.4,<0.5, which "
                                                    "pins openai<3): CI runs it in a venv of its own")
    from contextlib import AsyncExitStack

    from servicegym.envs.integrations.verifiers import load_environment

    os.environ.setdefault(KEY_VAR, "loopback")
    endpoints = {k: FaultyEndpoint(k[1]).__enter__() for k in VERIFIERS_CASES}
    policy = LoopbackServer(handler=lambda body: tool_call_reply([(USER_TOOL, {"message": ASK})])).start()

    def context(url: str, model: str) -> Any:
        return vf.ModelContext(model=model, client=vf.EvalClientConfig(base_url=url, api_key_var=KEY_VAR))

    async def main():
        async with AsyncExitStack() as stack:
            runs = []
            for (role, _fault), ep in endpoints.items():
                kwargs = ep.env_kwargs("user") if role == "user" else {}
                venv = load_environment(DELIVERY, split="test", n=1, max_steps=4, rollout_timeout_s=ROLLOUT_S, **kwargs)
                await stack.enter_async_context(venv.serving())
                ctx = context(ep.url, ep.server.model) if role == "policy" else context(policy.base_url, policy.model)
                runs.append(venv.run_episode(next(iter(venv.taskset)), ctx))
            return await asyncio.gather(*runs)

    try:
        episodes, _ = bounded(lambda: run_async(main), limit=HANG_S * 6)
    finally:
        policy.close()
        for ep in endpoints.values():
            ep.__exit__()
    return {k: episode.traces[0] for k, episode in zip(VERIFIERS_CASES, episodes)}


@pytest.mark.parametrize(("role", "fault"), VERIFIERS_CASES, ids=[f"{r}-{f}" for r, f in VERIFIERS_CASES])
def test_verifiers_ends_the_episode_with_a_reason_under_an_endpoint_fault(verifiers_traces, role, fault):
    trace = verifiers_traces[(role, fault)]
    state = trace.state
    assert not trace.reward  # 0.0, or None where verifiers scored nothing (the model's endpoint failed)
    if role == "user":
        assert state.done and state.termination_reason == "user_error" and trace.stop_condition == "episode_ended"
    elif fault == "malformed-tool-args":  # the calls never reach the env: the adapter's own stop ends the rollout
        assert trace.stop_condition == "turns_without_env_steps" and state.done and not state.success
    elif fault in ("timeout", "trickle"):  # no reply, or one too slow: verifiers' rollout deadline
        assert trace.stop_condition in ("agent_timeout", "provider_error"), trace.stop_condition
    else:  # verifiers reports the endpoint's failure itself
        assert trace.stop_condition == "provider_error" and trace.errors, trace.stop_condition
