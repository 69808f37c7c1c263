"""Every persona module: the registry contract, seeded tables, tool schemas, and the property that
random calls through the Toolkit never raise and leave the world unchanged unless executed.

Call arguments are drawn from each tool's own JSON schema, with strings biased towards the ids,
names and dates of the seeded world, so many calls pass validation and pre-conditions and the
writes that execute change the state later calls run against.
"""

from __future__ import annotations

import json
import random
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servicegym.world_state.core import Entity, History
from servicegym.world_state.tools import Toolkit, dependency_graph
from servicegym.world_state.workspace import COMMON_SCHEMA, WorkspaceWorld
from servicegym.world_state.workspace.personas import (
    PERSONA_SCHEMA,
    PERSONAS,
    build_persona_tables,
    persona_profile,
    persona_tools,
)

PREFIXES = {"researcher": "res_", "marketer": "mkt_", "legal": "legal_", "pharmacist": "rx_", "analyst": "fin_"}
NAMES = sorted(PERSONAS)


def persona_world(persona: str, seed: int = 0) -> WorkspaceWorld:
    prof = persona_profile(persona)
    return WorkspaceWorld(
        datetime.strptime(prof["start"], "%Y-%m-%d %H:%M:%S"),
        tables=build_persona_tables(persona, random.Random(seed)),
        extra={"persona": persona, "owner": prof["owner"], "owner_email": prof["owner_email"]},
    )


def test_every_persona_is_registered_with_prefixed_tables():
    assert set(PERSONAS) == set(PREFIXES)
    for persona, module in PERSONAS.items():
        assert module.SCHEMA, persona
        for name in module.SCHEMA:
            assert name.startswith(PREFIXES[persona]), name
            assert name in PERSONA_SCHEMA and name in WorkspaceWorld.schema
        assert not set(module.SCHEMA) & set(COMMON_SCHEMA)


@pytest.mark.parametrize("persona", NAMES)
def test_profile_names_an_owner(persona):
    prof = persona_profile(persona)
    assert prof["key"] == persona
    assert prof["owner"] and "@" in prof["owner_email"] and prof["organization"] and prof["title"]
    datetime.strptime(prof["start"], "%Y-%m-%d %H:%M:%S")


@pytest.mark.parametrize("persona", NAMES)
def test_seed_tables_are_deterministic_and_vary_with_the_seed(persona):
    module = PERSONAS[persona]
    a = module.seed_tables(random.Random(7))
    b = module.seed_tables(random.Random(7))
    assert a == b
    others = [module.seed_tables(random.Random(s)) for s in (8, 9)]
    assert all(o != a for o in others)
    assert set(a) == set(module.SCHEMA), "every persona table gets seeded rows"
    for name, rows in a.items():
        assert 1 <= len(rows) <= 80, (name, len(rows))


@pytest.mark.parametrize("persona", NAMES)
@pytest.mark.parametrize("seed", range(12))
def test_seeded_rows_validate_for_many_seeds(persona, seed):
    tables = build_persona_tables(persona, random.Random(seed))
    for name, rows in tables.items():
        assert all(isinstance(r, PERSONAS[persona].SCHEMA[name]) for r in rows.values())
        assert all(k == r.key for k, r in rows.items())


@pytest.mark.parametrize("persona", NAMES)
def test_tool_schemas_are_typed_and_documented(persona):
    tools = persona_tools(persona)
    assert 20 <= len(tools) <= 30
    kit = Toolkit(tools)  # duplicate names raise
    kinds = {s.kind for s in tools}
    assert kinds == {"read", "write"}
    for spec in tools:
        fn = spec.schema["function"]
        assert fn["name"] == spec.name and len(fn["description"]) > 20, spec.name
        params = fn["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False, spec.name
        for pname, prop in params["properties"].items():
            assert prop.get("description"), f"{spec.name}.{pname} has no description"
    assert dependency_graph(kit).edges, "pre-conditions give the graph edges"


@pytest.mark.parametrize("persona", NAMES)
def test_persona_tools_sit_beside_the_common_tools(persona):
    from servicegym.world_state import workspace

    common = list(getattr(workspace, "COMMON_TOOLS", []))
    kit = Toolkit(common + persona_tools(persona))  # a name clash raises
    assert len(kit) == len(common) + len(persona_tools(persona))


@pytest.mark.parametrize("persona", NAMES)
def test_state_is_json_and_rebuilds_identically(persona):
    w = persona_world(persona, 4)
    text = json.dumps(w.state_dict(), sort_keys=True)
    assert json.loads(text)["extra"]["persona"] == persona
    assert json.dumps(persona_world(persona, 4).state_dict(), sort_keys=True) == text


def test_tool_names_are_unique_across_personas():
    seen: dict[str, str] = {}
    for persona in NAMES:
        for spec in persona_tools(persona):
            assert spec.name not in seen, f"{spec.name} in {persona} and {seen.get(spec.name)}"
            seen[spec.name] = persona


@pytest.mark.parametrize("persona", NAMES)
def test_world_builds_with_only_its_persona_tables_filled(persona):
    w = persona_world(persona, 3)
    for name, t in w.tables.items():
        if name in PERSONAS[persona].SCHEMA:
            assert len(t) > 0, name
        else:
            assert len(t) == 0, name


# ---- property: random calls never raise; a call that is not executed changes nothing ----------

def _world_strings(w: WorkspaceWorld) -> list[str]:
    out: set[str] = set()
    for t in w.tables.values():
        for row in list(t)[:12]:
            out.add(row.key)
            for v in row.model_dump().values():
                if isinstance(v, str) and 0 < len(v) <= 40:
                    out.add(v)
                elif isinstance(v, list):
                    out.update(x for x in v[:3] if isinstance(x, str) and len(x) <= 40)
    return sorted(out)


EXTRA_STRINGS = ["", "nope", "reports/out.md", "out.csv", "../escape.md", "/abs.txt", "2026-03-06", "2026-02-28",
                 "2026-03-02 10:00:00", "2026-13-40", "csv", "markdown"]


def _value(schema: dict[str, Any], strings: list[str]) -> st.SearchStrategy:
    if "enum" in schema:
        return st.one_of(st.sampled_from(schema["enum"]), st.text(max_size=5))
    if "anyOf" in schema:
        return st.one_of(*[_value(s, strings) for s in schema["anyOf"]])
    t = schema.get("type")
    if t == "string":
        return st.one_of(st.sampled_from(strings), st.text(max_size=10))
    if t == "integer":
        return st.one_of(st.integers(-3, 40), st.integers())
    if t == "number":
        return st.one_of(st.floats(-5, 5000, allow_nan=False), st.floats(allow_nan=True, allow_infinity=True))
    if t == "boolean":
        return st.booleans()
    if t == "array":
        return st.lists(_value(schema.get("items", {"type": "string"}), strings), max_size=4)
    if t == "object":
        return st.dictionaries(st.sampled_from(strings[:30] + ["lr", "accuracy", "current_ratio"]),
                               st.one_of(st.floats(-2, 100, allow_nan=False), st.integers(0, 50), st.text(max_size=4)),
                               max_size=3)
    if t == "null":
        return st.none()
    return st.one_of(st.none(), st.integers(), st.text(max_size=5))


def _call(spec, strings: list[str]) -> st.SearchStrategy:
    params = spec.parameters
    props = params.get("properties", {})
    required = set(params.get("required", []))
    fixed = {k: _value(v, strings) for k, v in props.items() if k in required}
    optional = {k: _value(v, strings) for k, v in props.items() if k not in required}
    return st.fixed_dictionaries(fixed, optional=optional)


def _templates(persona: str, w: WorkspaceWorld) -> list[tuple[str, dict[str, Any]]]:
    """Well-formed calls on the seeded world: the writes of the persona and the reads that unlock them, so a
    sequence often executes writes and later failed calls are checked against a changed state."""
    def ids(table: str) -> list[str]:
        return [r.key for r in w.table(table)][:4]

    out: list[tuple[str, dict[str, Any]]] = []
    if persona == "researcher":
        p, r = ids("res_papers"), ids("res_runs")
        out += [("add_paper", {"title": "A New Result", "authors": ["Ann Lee"], "year": 2025, "venue": "V", "citations": p[:2]}),
                ("tag_paper", {"paper_id": p[0], "tags": ["survey"]}), ("untag_paper", {"paper_id": p[0], "tag": "survey"}),
                ("add_to_reading_list", {"paper_id": p[1], "priority": "high"}),
                ("mark_paper_read", {"paper_id": p[1], "summary": "a useful and clear baseline"}),
                ("register_run", {"name": "r", "project": "p", "dataset_id": ids("res_datasets")[0], "config": {"lr": 0.1},
                                  "metrics": {"accuracy": 0.5}}),
                ("annotate_run", {"run_id": r[0], "note": "rerun with seed 2"}),
                ("export_bibliography", {"path": "refs.md", "paper_ids": p[:3], "style": "ieee"}),
                ("export_experiment_table", {"path": "runs.csv", "run_ids": r, "metrics": ["accuracy"], "fmt": "csv"})]
    elif persona == "pharmacist":
        for rx in ids("rx_prescriptions") + [r.key for r in w.table("rx_prescriptions") if r.status == "pending"][:4]:
            out += [("verify_prescription", {"prescription_id": rx}), ("approve_prescription", {"prescription_id": rx}),
                    ("approve_prescription", {"prescription_id": rx, "override_reason": "prescriber confirmed"}),
                    ("hold_prescription", {"prescription_id": rx, "reason": "call prescriber"}),
                    ("reject_prescription", {"prescription_id": rx, "reason": "unsafe dose"}),
                    ("amend_prescription", {"prescription_id": rx, "dose_mg": 250.0}),
                    ("add_counseling_note", {"prescription_id": rx, "text": "take with food twice daily"}),
                    ("dispense", {"prescription_id": rx})]
        out += [("restock_drug", {"drug": "paracetamol", "units": 20}),
                ("export_verification_report", {"path": "review.md", "prescription_ids": ids("rx_prescriptions")[:2]})]
    elif persona == "analyst":
        t = ids("fin_companies")
        targets = {t[0]: 0.4, t[1]: 0.3}
        for pf in ids("fin_portfolios"):
            out += [("rebalance_plan", {"portfolio_id": pf, "target_weights": targets, "date": "2026-02-27"}),
                    ("execute_rebalance", {"portfolio_id": pf, "target_weights": targets, "date": "2026-02-27"}),
                    ("record_trade", {"portfolio_id": pf, "ticker": t[2], "side": "buy", "shares": 5, "date": "2026-01-30"}),
                    ("record_trade", {"portfolio_id": pf, "ticker": t[2], "side": "sell", "shares": 5, "date": "2026-02-27"}),
                    ("export_holdings_table", {"path": f"{pf}.md", "portfolio_id": pf, "date": "2026-02-27"})]
        out += [("add_to_watchlist", {"ticker": t[3], "note": "watch", "target_price": 10.0}),
                ("export_ratios_table", {"path": "ratios.csv", "tickers": t, "period": "FY2025", "fmt": "csv"})]
    elif persona == "marketer":
        for cid in ids("mkt_campaigns"):
            out += [("budget_pacing", {"campaign_id": cid}), ("resume_campaign", {"campaign_id": cid}),
                    ("pause_campaign", {"campaign_id": cid, "reason": "CPA too high"}),
                    ("update_campaign_brief", {"campaign_id": cid, "brief": " ".join(["word"] * 12)}),
                    ("launch_campaign", {"campaign_id": cid}), ("set_campaign_budget", {"campaign_id": cid, "budget": 5000.0}),
                    ("complete_campaign", {"campaign_id": cid}),
                    ("schedule_post", {"campaign_id": cid, "channel": w.table("mkt_campaigns").get(cid).channels[0],
                                       "text": "New gear is in.", "publish_at": "2026-03-04 09:00:00"})]
        out += [("create_segment", {"parent_id": ids("mkt_audiences")[0], "name": "seg", "age_min": 18, "age_max": 80}),
                ("cancel_post", {"post_id": (ids("mkt_posts") or ["POST001"])[0]}),
                ("export_kpi_report", {"path": "kpis.md", "campaign_ids": ids("mkt_campaigns")})]
    elif persona == "legal":
        for c in list(w.table("legal_contracts"))[:4]:
            cl = c.clauses[0]
            out += [("get_clause", {"contract_id": c.id, "clause_id": cl.id}), ("flag_risk", {"contract_id": c.id}),
                    ("redline_clause", {"contract_id": c.id, "clause_id": cl.id, "proposed_text": "New wording here.",
                                        "rationale": "standard", "proposed_terms": {"capped": True}}),
                    ("set_contract_status", {"contract_id": c.id, "status": "signed"}),
                    ("set_contract_status", {"contract_id": c.id, "status": "under_review", "reason": "sent for review"}),
                    ("export_clause_summary", {"path": f"{c.id}.md", "contract_id": c.id})]
        m = ids("legal_matters")[0]
        out += [("accept_redline", {"redline_id": "RL001"}), ("withdraw_redline", {"redline_id": "RL002"}),
                ("add_case_note", {"matter_id": m, "text": "client called about renewal"}),
                ("add_deadline", {"matter_id": m, "title": "notice", "due": "2026-03-20", "kind": "notice"}),
                ("complete_deadline", {"deadline_id": "D001"})]
    return out


def _calls(kit: Toolkit, strings: list[str], templates: list[tuple[str, dict[str, Any]]]) -> st.SearchStrategy:
    well = st.one_of(*[st.tuples(st.just(name), _call(spec, strings)) for name, spec in kit.specs.items()])
    garbage = st.tuples(st.sampled_from(kit.names + ["no_such_tool"]),
                        st.one_of(st.none(), st.text(max_size=5), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)))
    planned = st.sampled_from(templates)
    # one_of flattens nested one_ofs into equally likely branches, so weight the three kinds explicitly
    return st.integers(0, 9).flatmap(lambda i: planned if i < 6 else (well if i < 9 else garbage))


@pytest.mark.parametrize("persona", NAMES)
def test_random_calls_never_raise_and_failures_change_nothing(persona):
    base = persona_world(persona, 5)
    kit = Toolkit(persona_tools(persona))
    strings = _world_strings(base)
    templates = _templates(persona, base)

    @settings(max_examples=80, deadline=None)
    @given(st.lists(_calls(kit, strings, templates), min_size=1, max_size=12))
    def run(calls):
        w = base.copy()
        h = History()
        for name, args in calls:
            before = w.state_dict()
            res = kit.call(w, h, name, args)
            assert res.outcome in ("executed", "rejected", "error")
            assert res.outcome != "error", res.content
            if not res.ok:
                assert w.state_dict() == before, (name, args, res.content)
        assert len(h) == len(calls)

    run()


@pytest.mark.parametrize("persona", NAMES)
def test_call_templates_reach_the_writes(persona):
    """The property's planned calls are not all refusals: run in order, most persona writes execute and change state."""
    w = persona_world(persona, 5)
    kit = Toolkit(persona_tools(persona))
    h = History()
    start = w.state_dict()
    executed = set()
    for name, args in _templates(persona, w):
        res = kit.call(w, h, name, args)
        assert res.outcome != "error", res.content
        if res.ok and kit.specs[name].kind == "write":
            executed.add(name)
    writes = {s.name for s in persona_tools(persona) if s.kind == "write"}
    assert len(executed) >= min(5, len(writes)), sorted(executed)
    assert w.state_dict() != start


def test_build_persona_tables_rejects_bad_rows(monkeypatch):
    module = PERSONAS["researcher"]
    good = module.seed_tables

    def bad(rng):
        t = good(rng)
        t["res_papers"][0] = {**t["res_papers"][0], "unexpected": 1}
        return t

    monkeypatch.setattr(module, "seed_tables", bad)
    with pytest.raises(ValueError):
        build_persona_tables("researcher", random.Random(0))
    assert issubclass(module.SCHEMA["res_papers"], Entity)
