"""Marketer persona: KPI formulas, channel comparison, pacing, budget allocation to the cent, the
campaign lifecycle and its refusals, posts, segments and the KPI export, on a hand-written account."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace.personas import marketer as mkt

BRIEF = "Promote the trail shoe to runners who hike; key message: grip on wet rock; call to action: shop now."


def _m(cid, ch, d, imps, clicks, conv, spend, rev):
    return mkt.DailyMetric(id=f"{cid}-{ch}-{d}", campaign_id=cid, channel=ch, date=d, impressions=imps, clicks=clicks,
                           conversions=conv, spend=spend, revenue=rev)


METRICS = [
    _m("CMP001", "search", "2026-02-27", 10000, 300, 15, 300, 1500),
    _m("CMP001", "search", "2026-02-28", 10000, 200, 5, 200, 500),
    _m("CMP001", "social", "2026-02-27", 20000, 200, 4, 100, 200),
    _m("CMP001", "social", "2026-02-28", 20000, 200, 6, 100, 400),
    _m("CMP002", "email", "2026-02-27", 5000, 400, 30, 300, 2400),
]


def _c(cid, status, start, end, channels, budget, brief=BRIEF):
    return mkt.Campaign(id=cid, name=f"Campaign {cid}", objective="conversions", brief=brief, channels=channels,
                        budget=budget, start=start, end=end, status=status, audience_id="AUD01")


def make_world() -> WorkspaceWorld:
    camps = [_c("CMP001", "active", "2026-02-23", "2026-03-14", ["search", "social"], 1000),
             _c("CMP002", "paused", "2026-02-20", "2026-03-20", ["email"], 300),
             _c("CMP003", "draft", "2026-03-10", "2026-03-31", ["social"], 2000, brief="Short brief"),
             _c("CMP004", "completed", "2026-01-01", "2026-01-31", ["display"], 500)]
    auds = [mkt.Audience(id="AUD01", name="Hikers", size=100000, age_min=20, age_max=39, regions=["north", "south"],
                         interests=["hiking", "camping", "running", "travel"]),
            mkt.Audience(id="AUD02", name="Riders", size=50000, age_min=30, age_max=49, regions=["north", "east"],
                         interests=["hiking", "cycling"])]
    return WorkspaceWorld(
        datetime(2026, 3, 2, 9),
        tables={"mkt_campaigns": {c.id: c for c in camps}, "mkt_metrics": {m.id: m for m in METRICS},
                "mkt_audiences": {a.id: a for a in auds}},
        extra={"persona": "marketer", "owner": "Jasmin Moreau", "owner_email": "jasmin@example.org"},
    )


@pytest.fixture
def env():
    return make_world(), History(), Toolkit(mkt.TOOLS)


def call(env, tool_name, **args):
    w, h, kit = env
    r = kit.call(w, h, tool_name, args)
    return r.outcome, (json.loads(r.content) if r.ok else r.content)


def test_kpi_formulas(env):
    k = call(env, "compute_kpis", campaign_id="CMP001")[1]
    assert k["totals"] == {"impressions": 60000, "clicks": 900, "conversions": 30, "spend": 700, "revenue": 2600}
    assert k["kpis"] == {"ctr": 0.015, "cpc": 0.78, "cpa": 23.33, "roas": 3.7143, "conversion_rate": 0.0333, "cpm": 11.67}
    s = call(env, "compute_kpis", campaign_id="CMP001", channel="search")[1]["kpis"]
    assert s == {"ctr": 0.025, "cpc": 1.0, "cpa": 25.0, "roas": 4.0, "conversion_rate": 0.04, "cpm": 25.0}
    one_day = call(env, "compute_kpis", campaign_id="CMP001", start="2026-02-28", end="2026-02-28")[1]["totals"]
    assert one_day["conversions"] == 11
    assert call(env, "compute_kpis", campaign_id="CMP001", channel="email")[0] == "rejected"
    assert call(env, "compute_kpis", campaign_id="CMP003")[1]["kpis"]["ctr"] is None  # nothing served: null, not inf


def test_compare_channels_and_campaigns(env):
    r = call(env, "compare_channels", campaign_id="CMP001", metric="roas")[1]["ranking"]
    assert [(x["channel"], x["roas"]) for x in r] == [("search", 4.0), ("social", 3.0)]
    r = call(env, "compare_channels", campaign_id="CMP001", metric="cpa")[1]["ranking"]
    assert [x["channel"] for x in r] == ["social", "search"]  # lower CPA is better
    r = call(env, "compare_campaigns", campaign_ids=["CMP001", "CMP002", "CMP003"], metric="roas")[1]
    assert [x["campaign_id"] for x in r] == ["CMP002", "CMP001", "CMP003"]  # 8.0, 3.71, null last


def test_pacing_trend_and_forecast(env):
    p = call(env, "budget_pacing", campaign_id="CMP001")[1]
    # Feb 23 - Mar 14 is 20 days; 7 have passed by Mar 2: expected 1000 x 7 / 20 = 350, spent 700
    assert (p["days_total"], p["days_elapsed"], p["expected_spend"], p["pacing"], p["state"]) == (20, 7, 350, 2.0, "over")
    t = call(env, "daily_trend", campaign_id="CMP001", metric="conversions")[1]
    assert [s["conversions"] for s in t["series"]] == [19, 11] and t["change_pct"] == -42.11
    f = call(env, "forecast_conversions", campaign_id="CMP001", extra_spend=100)[1]
    assert (f["extra_conversions"], f["extra_revenue"]) == (4, 371.43)
    assert call(env, "forecast_conversions", campaign_id="CMP003", extra_spend=100)[0] == "rejected"


def test_budget_allocation_sums_to_the_cent(env):
    a = call(env, "budget_allocation", campaign_id="CMP001", total=1000, rule_name="by_roas")[1]["allocation"]
    assert a == {"search": 571.43, "social": 428.57}
    a = call(env, "budget_allocation", campaign_id="CMP001", total=1000, rule_name="by_inverse_cpa")[1]["allocation"]
    assert a == {"search": 444.44, "social": 555.56}
    a = call(env, "budget_allocation", campaign_id="CMP001", total=1000, rule_name="by_conversions")[1]["allocation"]
    assert a == {"search": 666.67, "social": 333.33}
    assert mkt.allocate(100, {"a": 1, "b": 1, "c": 1}) == {"a": 33.34, "b": 33.33, "c": 33.33}
    assert mkt.allocate(10, {"a": 0, "b": 0}) == {"a": 5.0, "b": 5.0}


def test_channel_and_campaign_budgets(env):
    w = env[0]
    assert call(env, "set_channel_budgets", campaign_id="CMP001", budgets={"search": 700, "social": 400})[0] == "rejected"
    assert call(env, "set_channel_budgets", campaign_id="CMP001", budgets={"email": 10})[0] == "rejected"
    assert call(env, "set_channel_budgets", campaign_id="CMP001", budgets={"search": 600, "social": 400})[0] == "executed"
    assert call(env, "set_campaign_budget", campaign_id="CMP001", budget=900)[0] == "rejected"  # below channel budgets
    assert call(env, "set_campaign_budget", campaign_id="CMP002", budget=200)[0] == "rejected"  # below spent 300
    assert call(env, "set_campaign_budget", campaign_id="CMP004", budget=900)[0] == "rejected"  # completed
    assert call(env, "set_campaign_budget", campaign_id="CMP001", budget=1500)[1]["budget"] == 1500
    assert w.table("mkt_campaigns").get("CMP001").channel_budgets == {"search": 600, "social": 400}


def test_pause_and_resume(env):
    w = env[0]
    out, msg = call(env, "resume_campaign", campaign_id="CMP002")
    assert out == "rejected" and "budget_pacing" in msg
    assert call(env, "budget_pacing", campaign_id="CMP002")[1]["budget_exhausted"] is True
    before = w.state_dict()
    out, msg = call(env, "resume_campaign", campaign_id="CMP002")
    assert out == "rejected" and "spent its budget" in msg and w.state_dict() == before
    call(env, "set_campaign_budget", campaign_id="CMP002", budget=500)
    assert call(env, "resume_campaign", campaign_id="CMP002")[1]["status"] == "active"
    assert call(env, "pause_campaign", campaign_id="CMP002", reason="")[0] == "rejected"
    assert call(env, "pause_campaign", campaign_id="CMP002", reason="CPA above target")[1]["status"] == "paused"
    assert call(env, "pause_campaign", campaign_id="CMP004", reason="x")[0] == "rejected"  # completed


def test_create_and_launch(env):
    out, msg = call(env, "launch_campaign", campaign_id="CMP003")
    assert out == "rejected" and "ten words" in msg
    call(env, "update_campaign_brief", campaign_id="CMP003", brief=BRIEF)
    assert call(env, "launch_campaign", campaign_id="CMP003")[1]["status"] == "scheduled"  # starts Mar 10
    assert call(env, "launch_campaign", campaign_id="CMP003")[0] == "rejected"
    assert call(env, "update_campaign_brief", campaign_id="CMP004", brief="new")[0] == "rejected"
    args = dict(name="Spring Tents", objective="awareness", channels=["social", "video"], budget=2500,
                start="2026-03-02", end="2026-03-30", audience_id="AUD02", brief=BRIEF)
    out, c = call(env, "create_campaign", **args)
    assert out == "executed" and c["id"] == "CMP005" and c["status"] == "draft"
    assert call(env, "create_campaign", **args)[0] == "rejected"  # name taken
    assert call(env, "create_campaign", **{**args, "name": "B", "start": "2026-02-01"})[0] == "rejected"
    assert call(env, "create_campaign", **{**args, "name": "C", "end": "2026-03-01"})[0] == "rejected"
    assert call(env, "create_campaign", **{**args, "name": "D", "audience_id": "AUD99"})[0] == "rejected"
    assert call(env, "launch_campaign", campaign_id="CMP005")[1]["status"] == "active"


def test_posts(env):
    ok = dict(campaign_id="CMP001", channel="social", text="Grip on wet rock. New trail shoe out now.",
              publish_at="2026-03-05 12:00:00")
    assert call(env, "schedule_post", **{**ok, "text": "x" * 281})[0] == "rejected"
    assert call(env, "schedule_post", **{**ok, "publish_at": "2026-03-01 12:00:00"})[0] == "rejected"  # past
    assert call(env, "schedule_post", **{**ok, "publish_at": "2026-03-20 12:00:00"})[0] == "rejected"  # after end
    assert call(env, "schedule_post", **{**ok, "channel": "email"})[0] == "rejected"
    assert call(env, "schedule_post", **ok)[1]["id"] == "POST001"
    call(env, "schedule_post", **{**ok, "publish_at": "2026-03-06 12:00:00"})
    assert call(env, "cancel_post", post_id="POST002")[1]["status"] == "cancelled"
    assert call(env, "cancel_post", post_id="POST002")[0] == "rejected"
    done = call(env, "complete_campaign", campaign_id="CMP001")[1]
    assert done["status"] == "completed" and done["cancelled_posts"] == ["POST001"]
    assert call(env, "schedule_post", **ok)[0] == "rejected"


def test_segments_and_overlap(env):
    seg = call(env, "create_segment", parent_id="AUD01", name="Young hikers north", age_min=30, age_max=45,
               regions=["north"], interests=["hiking", "camping"])[1]
    # 100000 x 10 / 20 ages x 1 / 2 regions x 2 / 4 interests
    assert seg["size"] == 12500 and seg["id"] == "AUD03" and (seg["age_min"], seg["age_max"]) == (30, 39)
    assert call(env, "create_segment", parent_id="AUD01", name="x", age_min=50, age_max=60)[0] == "rejected"
    assert call(env, "create_segment", parent_id="AUD01", name="x", age_min=20, age_max=30, regions=["west"])[0] == "rejected"
    o = call(env, "audience_overlap", audience_a="AUD01", audience_b="AUD02")[1]
    assert (o["interest_jaccard"], o["region_jaccard"], o["shared_ages"], o["estimated_overlap"]) == (0.2, 0.3333, 10, 2500)


def test_export_kpi_report(env):
    call(env, "export_kpi_report", path="reports/kpis.csv", campaign_ids=["CMP001"], by_channel=True, fmt="csv")
    assert env[0].table("files").get("reports/kpis.csv").content == (
        "campaign,channel,spend,revenue,conversions,ctr,cpc,cpa,roas\n"
        "CMP001,search,500.0,2000.0,20,0.025,1.0,25.0,4.0\n"
        "CMP001,social,200.0,600.0,10,0.01,0.5,20.0,3.0\n")
    call(env, "export_kpi_report", path="reports/kpis.md", campaign_ids=["CMP001", "CMP002"])
    md = env[0].table("files").get("reports/kpis.md").content.splitlines()
    assert len(md) == 4 and md[2].startswith("| CMP001 | all | 700")
    assert call(env, "export_kpi_report", path="r.md", campaign_ids=["CMP999"])[0] == "rejected"
