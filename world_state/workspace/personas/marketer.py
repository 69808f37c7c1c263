"""Persona: marketer. Campaigns (brief, objective, channels, budget, dates, lifecycle draft ->
scheduled / active <-> paused -> completed), daily channel metrics, audiences and segments, and
scheduled posts.

KPI formulas (ratios to 4 places, money to 2): CTR = clicks / impressions; CPC = spend / clicks;
CPA = spend / conversions; ROAS = revenue / spend; conversion_rate = conversions / clicks;
CPM = spend / impressions x 1000. A KPI with a zero denominator is null.
"""

from __future__ import annotations

import math
import random
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.tools import (
    ToolError,
    ToolSpec,
    exists,
    field_in,
    requires_prior_call,
    rule,
    time_not_past,
    tool,
)
from servicegym.world_state.workspace.personas.formats import (
    SEED_START,
    SEED_START_TIME,
    day,
    new_id,
    parse_day,
    ratio,
    render_table,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

Channel = Literal["search", "social", "email", "display", "video"]
CHANNELS = ("search", "social", "email", "display", "video")
CampaignStatus = Literal["draft", "scheduled", "active", "paused", "completed"]
KPI = Literal["ctr", "cpc", "cpa", "roas", "conversion_rate", "cpm"]
KPI_NAMES = ("ctr", "cpc", "cpa", "roas", "conversion_rate", "cpm")
LOWER_IS_BETTER = ("cpc", "cpa", "cpm")
TOTALS = ("impressions", "clicks", "conversions", "spend", "revenue")
POST_LIMITS = {"search": 150, "social": 280, "email": 2000, "display": 100, "video": 500}
AllocationRule = Literal["equal", "by_conversions", "by_roas", "by_inverse_cpa"]


class Campaign(Entity):
    id: str
    name: str
    objective: Literal["awareness", "traffic", "conversions"]
    brief: str = ""
    channels: list[str]
    budget: float
    channel_budgets: dict[str, float] = {}
    start: str  # YYYY-MM-DD
    end: str
    status: CampaignStatus = "draft"
    audience_id: str = ""
    owner: str = ""
    status_reason: str = ""


class DailyMetric(Entity):
    id: str  # CAMPAIGN-channel-YYYY-MM-DD
    campaign_id: str
    channel: str
    date: str
    impressions: int
    clicks: int
    conversions: int
    spend: float
    revenue: float


class Audience(Entity):
    id: str
    name: str
    description: str = ""
    size: int
    age_min: int
    age_max: int
    regions: list[str]
    interests: list[str]
    parent_id: str = ""


class Post(Entity):
    id: str
    campaign_id: str
    channel: str
    text: str
    publish_at: str  # YYYY-MM-DD HH:MM:SS
    status: Literal["scheduled", "published", "cancelled"] = "scheduled"


SCHEMA: dict[str, type[Entity]] = {
    "mkt_campaigns": Campaign,
    "mkt_metrics": DailyMetric,
    "mkt_audiences": Audience,
    "mkt_posts": Post,
}

CAMPAIGN_SOURCES = ("list_campaigns", "create_campaign")
AUDIENCE_SOURCES = ("list_audiences", "create_segment")


# ---- computations ---------------------------------------------------------------------------

def kpis(t: dict[str, float]) -> dict[str, float | None]:
    return {"ctr": ratio(t["clicks"], t["impressions"]), "cpc": ratio(t["spend"], t["clicks"], 2),
            "cpa": ratio(t["spend"], t["conversions"], 2), "roas": ratio(t["revenue"], t["spend"]),
            "conversion_rate": ratio(t["conversions"], t["clicks"]),
            "cpm": ratio(t["spend"] * 1000, t["impressions"], 2)}


def _campaign(world: WorkspaceWorld, cid: str) -> Campaign:
    c = world.table("mkt_campaigns").get(cid)
    if c is None:
        raise ToolError(f"no campaign {cid!r}; find ids with list_campaigns")
    return c


def _rows(world: WorkspaceWorld, cid: str, channel: str | None = None, start: str | None = None,
          end: str | None = None) -> list[DailyMetric]:
    a = parse_day(start, "start").isoformat() if start else ""
    b = parse_day(end, "end").isoformat() if end else "9999"
    return sorted((m for m in world.table("mkt_metrics") if m.campaign_id == cid and (channel is None or m.channel == channel)
                   and a <= m.date <= b), key=lambda m: (m.date, m.channel))


def totals(rows: list[DailyMetric]) -> dict[str, float]:
    t = {k: sum(getattr(r, k) for r in rows) for k in TOTALS}
    t["spend"], t["revenue"] = round(t["spend"], 2), round(t["revenue"], 2)
    return t


def _today(world: WorkspaceWorld) -> str:
    return world.clock.now.date().isoformat()


def allocate(total: float, weights: dict[str, float]) -> dict[str, float]:
    """Split ``total`` in proportion to ``weights`` to the cent, by largest remainder (ties: key order), so the
    parts sum to ``total`` exactly; all-zero weights split equally."""
    cents = round(total * 100)
    keys = list(weights)
    w = weights if any(v > 0 for v in weights.values()) else {k: 1.0 for k in keys}
    s = sum(max(0.0, v) for v in w.values())
    raw = {k: cents * max(0.0, w[k]) / s for k in keys}
    base = {k: math.floor(v) for k, v in raw.items()}
    left = cents - sum(base.values())
    for k in sorted(keys, key=lambda k: (-(raw[k] - base[k]), keys.index(k)))[:left]:
        base[k] += 1
    return {k: base[k] / 100 for k in keys}


def _not_completed(world: World, history: History, args: dict[str, Any]) -> str | None:
    c = world.table("mkt_campaigns").get(args.get("campaign_id"))
    if c is not None and c.status == "completed":
        return f"campaign {c.id} is completed"
    return None


NOT_COMPLETED = rule("the campaign must not be completed", _not_completed)


def _campaign_exists():
    return exists("mkt_campaigns", "campaign_id", "campaign", CAMPAIGN_SOURCES)


def _channel_of_campaign(world: WorkspaceWorld, c: Campaign, channel: str | None) -> None:
    if channel is not None and channel not in c.channels:
        raise ToolError(f"campaign {c.id} does not run on {channel}; its channels: {', '.join(c.channels)}")


# ---- campaigns and metrics ------------------------------------------------------------------

@tool("read")
def list_campaigns(world: WorkspaceWorld, status: CampaignStatus | None = None, channel: Channel | None = None) -> list[dict[str, Any]]:
    """Campaigns (id, name, objective, status, channels, budget, dates), by start date.

    Args:
        status: draft, scheduled, active, paused or completed
        channel: only campaigns running on this channel
    """
    rows = [c for c in world.table("mkt_campaigns") if (status is None or c.status == status)
            and (channel is None or channel in c.channels)]
    return [{"id": c.id, "name": c.name, "objective": c.objective, "status": c.status, "channels": c.channels,
             "budget": c.budget, "start": c.start, "end": c.end} for c in sorted(rows, key=lambda c: (c.start, c.id))]


@tool("read", pre=[_campaign_exists()])
def get_campaign(world: WorkspaceWorld, campaign_id: str) -> dict[str, Any]:
    """One campaign in full, with spend to date and the remaining budget.

    Args:
        campaign_id: the campaign id, e.g. CMP001
    """
    c = _campaign(world, campaign_id)
    spent = totals(_rows(world, c.id))["spend"]
    return c.model_dump(mode="json") | {"spent": spent, "remaining_budget": round(c.budget - spent, 2)}


@tool("read", pre=[_campaign_exists()])
def channel_metrics(world: WorkspaceWorld, campaign_id: str, channel: Channel | None = None, start: str | None = None,
                    end: str | None = None) -> dict[str, Any]:
    """Daily metrics (impressions, clicks, conversions, spend, revenue) of a campaign, with totals.

    Args:
        campaign_id: the campaign
        channel: only this channel
        start: first day, YYYY-MM-DD
        end: last day, YYYY-MM-DD
    """
    c = _campaign(world, campaign_id)
    _channel_of_campaign(world, c, channel)
    rows = _rows(world, c.id, channel, start, end)
    return {"campaign_id": c.id, "days": [r.model_dump(mode="json", exclude={"id", "campaign_id"}) for r in rows],
            "totals": totals(rows)}


@tool("read", pre=[_campaign_exists()])
def compute_kpis(world: WorkspaceWorld, campaign_id: str, channel: Channel | None = None, start: str | None = None,
                 end: str | None = None) -> dict[str, Any]:
    """KPIs over a campaign's metrics: CTR, CPC, CPA, ROAS, conversion rate, CPM (formulas in the persona docs).

    Args:
        campaign_id: the campaign
        channel: only this channel
        start: first day, YYYY-MM-DD
        end: last day, YYYY-MM-DD
    """
    c = _campaign(world, campaign_id)
    _channel_of_campaign(world, c, channel)
    t = totals(_rows(world, c.id, channel, start, end))
    return {"campaign_id": c.id, "channel": channel, "totals": t, "kpis": kpis(t)}


@tool("read", pre=[_campaign_exists()])
def compare_channels(world: WorkspaceWorld, campaign_id: str, metric: KPI = "roas", start: str | None = None,
                     end: str | None = None) -> dict[str, Any]:
    """Rank a campaign's channels by one KPI (best first: lowest for cpc, cpa, cpm; highest otherwise; nulls last).

    Args:
        campaign_id: the campaign
        metric: ctr, cpc, cpa, roas, conversion_rate or cpm
        start: first day, YYYY-MM-DD
        end: last day, YYYY-MM-DD
    """
    c = _campaign(world, campaign_id)
    rows = []
    for ch in c.channels:
        t = totals(_rows(world, c.id, ch, start, end))
        rows.append({"channel": ch, metric: kpis(t)[metric], "spend": t["spend"], "conversions": t["conversions"]})
    sign = 1 if metric in LOWER_IS_BETTER else -1
    rows.sort(key=lambda r: (r[metric] is None, sign * (r[metric] or 0), CHANNELS.index(r["channel"]) if r["channel"] in CHANNELS else 9))
    return {"campaign_id": c.id, "metric": metric, "ranking": [r | {"rank": i} for i, r in enumerate(rows, 1)]}


@tool("read", pre=[rule("every campaign must exist", lambda w, h, a: next(
    (f"no campaign {c!r}" for c in a.get("campaign_ids") or [] if c not in w.table("mkt_campaigns")), None), CAMPAIGN_SOURCES)])
def compare_campaigns(world: WorkspaceWorld, campaign_ids: list[str], metric: KPI = "roas") -> list[dict[str, Any]]:
    """Rank campaigns by one KPI over all their metrics (best first, nulls last).

    Args:
        campaign_ids: the campaigns
        metric: ctr, cpc, cpa, roas, conversion_rate or cpm
    """
    if not campaign_ids:
        raise ToolError("give at least one campaign")
    rows = []
    for cid in dict.fromkeys(campaign_ids):
        t = totals(_rows(world, cid))
        rows.append({"campaign_id": cid, "name": _campaign(world, cid).name, metric: kpis(t)[metric], "spend": t["spend"]})
    sign = 1 if metric in LOWER_IS_BETTER else -1
    rows.sort(key=lambda r: (r[metric] is None, sign * (r[metric] or 0), r["campaign_id"]))
    return [r | {"rank": i} for i, r in enumerate(rows, 1)]


@tool("read", pre=[_campaign_exists()])
def daily_trend(world: WorkspaceWorld, campaign_id: str, metric: Literal["impressions", "clicks", "conversions", "spend", "revenue", "ctr", "roas", "cpa"] = "conversions",
                channel: Channel | None = None) -> dict[str, Any]:
    """One metric per day, and the change in percent from the first half of the days' mean to the second half's.

    Args:
        campaign_id: the campaign
        metric: a daily total or ctr, roas, cpa
        channel: only this channel (default: all channels summed per day)
    """
    c = _campaign(world, campaign_id)
    _channel_of_campaign(world, c, channel)
    by_day: dict[str, list[DailyMetric]] = {}
    for r in _rows(world, c.id, channel):
        by_day.setdefault(r.date, []).append(r)
    series = []
    for d, rows in sorted(by_day.items()):
        t = totals(rows)
        series.append({"date": d, metric: t[metric] if metric in TOTALS else kpis(t)[metric]})
    vals = [s[metric] for s in series if s[metric] is not None]
    change = None
    if len(vals) >= 2:
        half = len(vals) // 2
        a, b = sum(vals[:half]) / half, sum(vals[-half:]) / half
        change = None if a == 0 else round((b - a) / abs(a) * 100, 2)
    return {"campaign_id": c.id, "metric": metric, "series": series, "change_pct": change}


@tool("read", pre=[_campaign_exists()])
def budget_pacing(world: WorkspaceWorld, campaign_id: str) -> dict[str, Any]:
    """Spend against a straight-line plan: expected = budget x days elapsed / campaign days (days counted inclusive,
    up to yesterday); pacing = spent / expected; under below 0.9, over above 1.1, else on track.

    Args:
        campaign_id: the campaign
    """
    c = _campaign(world, campaign_id)
    start, end, today = parse_day(c.start), parse_day(c.end), world.clock.now.date()
    days = (end - start).days + 1
    elapsed = max(0, min(days, (today - start).days))
    spent = totals(_rows(world, c.id))["spend"]
    expected = round(c.budget * elapsed / days, 2) if days > 0 else 0.0
    pace = ratio(spent, expected)
    state = "not started" if elapsed == 0 else ("under" if pace < 0.9 else "over" if pace > 1.1 else "on track")
    return {"campaign_id": c.id, "budget": c.budget, "spent": spent, "days_total": days, "days_elapsed": elapsed,
            "expected_spend": expected, "pacing": pace, "state": state, "remaining_budget": round(c.budget - spent, 2),
            "budget_exhausted": spent >= c.budget}


@tool("read", pre=[_campaign_exists()])
def budget_allocation(world: WorkspaceWorld, campaign_id: str, total: Annotated[float, Field(gt=0, le=10_000_000)],
                      rule_name: AllocationRule = "by_roas") -> dict[str, Any]:
    """Split a budget over a campaign's channels: equal, in proportion to conversions, to ROAS, or to 1 / CPA
    (channels with no conversions get 0 under the last); to the cent, summing exactly to total.

    Args:
        campaign_id: the campaign
        total: the amount to split
        rule_name: equal, by_conversions, by_roas or by_inverse_cpa
    """
    c = _campaign(world, campaign_id)
    weights: dict[str, float] = {}
    for ch in c.channels:
        t = totals(_rows(world, c.id, ch))
        k = kpis(t)
        weights[ch] = {"equal": 1.0, "by_conversions": float(t["conversions"]), "by_roas": k["roas"] or 0.0,
                       "by_inverse_cpa": (1 / k["cpa"]) if k["cpa"] else 0.0}[rule_name]
    return {"campaign_id": c.id, "rule": rule_name, "total": round(total, 2), "allocation": allocate(total, weights)}


@tool("write", pre=[_campaign_exists(), NOT_COMPLETED])
def set_channel_budgets(world: WorkspaceWorld, campaign_id: str, budgets: dict[str, float]) -> dict[str, Any]:
    """Set the per-channel budgets of a campaign (non-negative, only its channels, summing to at most its budget).

    Args:
        campaign_id: the campaign
        budgets: channel -> amount, e.g. {"search": 600, "social": 400}
    """
    c = _campaign(world, campaign_id)
    for ch, v in budgets.items():
        _channel_of_campaign(world, c, ch)
        if v < 0 or not math.isfinite(v):
            raise ToolError(f"budget of {ch} must be a non-negative number")
    s = round(sum(budgets.values()), 2)
    if s > c.budget + 1e-6:
        raise ToolError(f"channel budgets sum to {s:.2f}, above the campaign budget {c.budget:.2f}")
    return world.table("mkt_campaigns").update(c.id, channel_budgets={k: round(v, 2) for k, v in budgets.items()}).model_dump(mode="json")


@tool("write", pre=[exists("mkt_audiences", "audience_id", "audience", AUDIENCE_SOURCES)])
def create_campaign(world: WorkspaceWorld, name: str, objective: Literal["awareness", "traffic", "conversions"],
                    channels: list[Channel], budget: Annotated[float, Field(gt=0, le=10_000_000)], start: str, end: str,
                    audience_id: str, brief: str = "") -> dict[str, Any]:
    """Create a campaign as a draft; launch it with launch_campaign.

    Args:
        name: campaign name (unique)
        objective: awareness, traffic or conversions
        channels: channels it runs on
        budget: total budget
        start: first day, YYYY-MM-DD (today or later)
        end: last day, YYYY-MM-DD (on or after start)
        audience_id: the target audience or segment
        brief: the creative brief
    """
    a, b = parse_day(start, "start"), parse_day(end, "end")
    if a < world.clock.now.date():
        raise ToolError(f"start {a} is in the past (today is {_today(world)})")
    if b < a:
        raise ToolError("end must be on or after start")
    if not channels:
        raise ToolError("give at least one channel")
    if not name.strip() or any(c.name.lower() == name.strip().lower() for c in world.table("mkt_campaigns")):
        raise ToolError(f"campaign name {name!r} is empty or already used")
    table = world.table("mkt_campaigns")
    c = Campaign(id=new_id(table, world.ids, "CMP"), name=name.strip(), objective=objective, brief=brief.strip(),
                 channels=list(dict.fromkeys(channels)), budget=round(budget, 2), start=a.isoformat(), end=b.isoformat(),
                 audience_id=audience_id, owner=world.extra.get("owner", ""))
    return table.insert(c).model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), NOT_COMPLETED])
def update_campaign_brief(world: WorkspaceWorld, campaign_id: str, brief: str) -> dict[str, Any]:
    """Replace a campaign's creative brief.

    Args:
        campaign_id: the campaign
        brief: the new brief (key message, audience, call to action)
    """
    if not brief.strip():
        raise ToolError("brief must not be empty")
    return world.table("mkt_campaigns").update(campaign_id, brief=brief.strip()).model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), NOT_COMPLETED])
def set_campaign_budget(world: WorkspaceWorld, campaign_id: str, budget: Annotated[float, Field(gt=0, le=10_000_000)]) -> dict[str, Any]:
    """Change a campaign's total budget (not below what it has spent, nor below its channel budgets' sum).

    Args:
        campaign_id: the campaign
        budget: the new total budget
    """
    c = _campaign(world, campaign_id)
    spent = totals(_rows(world, c.id))["spend"]
    if budget < spent:
        raise ToolError(f"campaign {c.id} has already spent {spent:.2f}")
    if budget + 1e-6 < sum(c.channel_budgets.values()):
        raise ToolError(f"its channel budgets sum to {sum(c.channel_budgets.values()):.2f}; lower them first")
    return world.table("mkt_campaigns").update(c.id, budget=round(budget, 2)).model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), field_in("mkt_campaigns", "campaign_id", "campaign", ["draft"])])
def launch_campaign(world: WorkspaceWorld, campaign_id: str) -> dict[str, Any]:
    """Launch a draft: active if it starts today or earlier, else scheduled. Needs a brief of at least ten words,
    an audience and an end date not in the past.

    Args:
        campaign_id: the campaign
    """
    c = _campaign(world, campaign_id)
    if len(c.brief.split()) < 10:
        raise ToolError("the brief has fewer than ten words; write it with update_campaign_brief first")
    if c.audience_id not in world.table("mkt_audiences"):
        raise ToolError("the campaign has no valid audience")
    if c.end < _today(world):
        raise ToolError(f"the campaign ended on {c.end}")
    status = "active" if c.start <= _today(world) else "scheduled"
    return world.table("mkt_campaigns").update(c.id, status=status, status_reason="launched").model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), field_in("mkt_campaigns", "campaign_id", "campaign", ["active", "scheduled"])])
def pause_campaign(world: WorkspaceWorld, campaign_id: str, reason: str) -> dict[str, Any]:
    """Pause an active or scheduled campaign.

    Args:
        campaign_id: the campaign
        reason: why (e.g. CPA above target)
    """
    if not reason.strip():
        raise ToolError("reason must not be empty")
    return world.table("mkt_campaigns").update(campaign_id, status="paused", status_reason=reason.strip()).model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), field_in("mkt_campaigns", "campaign_id", "campaign", ["paused"]),
                    requires_prior_call("budget_pacing", "campaign_id", "campaign")])
def resume_campaign(world: WorkspaceWorld, campaign_id: str) -> dict[str, Any]:
    """Resume a paused campaign (refused once its end date has passed or its budget is spent).

    Args:
        campaign_id: the campaign
    """
    c = _campaign(world, campaign_id)
    if c.end < _today(world):
        raise ToolError(f"campaign {c.id} ended on {c.end}; complete it instead")
    spent = totals(_rows(world, c.id))["spend"]
    if spent >= c.budget:
        raise ToolError(f"campaign {c.id} has spent its budget ({spent:.2f} of {c.budget:.2f}); raise it with set_campaign_budget")
    status = "active" if c.start <= _today(world) else "scheduled"
    return world.table("mkt_campaigns").update(c.id, status=status, status_reason="resumed").model_dump(mode="json")


@tool("write", pre=[_campaign_exists(), field_in("mkt_campaigns", "campaign_id", "campaign", ["active", "paused", "scheduled"])])
def complete_campaign(world: WorkspaceWorld, campaign_id: str) -> dict[str, Any]:
    """End a campaign; its scheduled posts are cancelled.

    Args:
        campaign_id: the campaign
    """
    posts = world.table("mkt_posts")
    cancelled = [p.id for p in list(posts) if p.campaign_id == campaign_id and p.status == "scheduled"]
    for pid in cancelled:
        posts.update(pid, status="cancelled")
    row = world.table("mkt_campaigns").update(campaign_id, status="completed", status_reason="completed")
    return row.model_dump(mode="json") | {"cancelled_posts": cancelled}


# ---- posts ----------------------------------------------------------------------------------

@tool("write", pre=[_campaign_exists(), NOT_COMPLETED, time_not_past("publish_at")])
def schedule_post(world: WorkspaceWorld, campaign_id: str, channel: Channel, text: str, publish_at: str) -> dict[str, Any]:
    """Schedule a post or ad text on one of the campaign's channels, within its dates. Length limits: search 150,
    social 280, email 2000, display 100, video 500 characters.

    Args:
        campaign_id: the campaign
        channel: the channel
        text: the post text
        publish_at: YYYY-MM-DD HH:MM:SS
    """
    c = _campaign(world, campaign_id)
    _channel_of_campaign(world, c, channel)
    text = text.strip()
    if not text:
        raise ToolError("text must not be empty")
    if len(text) > POST_LIMITS[channel]:
        raise ToolError(f"text is {len(text)} characters; {channel} allows {POST_LIMITS[channel]}")
    d = publish_at.strip()[:10]
    if not (c.start <= d <= c.end):
        raise ToolError(f"publish_at must fall within the campaign's dates {c.start} to {c.end}")
    table = world.table("mkt_posts")
    post = Post(id=new_id(table, world.ids, "POST"), campaign_id=c.id, channel=channel, text=text, publish_at=publish_at.strip())
    return table.insert(post).model_dump(mode="json")


@tool("read")
def list_posts(world: WorkspaceWorld, campaign_id: str | None = None,
               status: Literal["scheduled", "published", "cancelled"] | None = None) -> list[dict[str, Any]]:
    """Posts by publish time.

    Args:
        campaign_id: only this campaign's
        status: scheduled, published or cancelled
    """
    rows = [p for p in world.table("mkt_posts") if (campaign_id is None or p.campaign_id == campaign_id)
            and (status is None or p.status == status)]
    return [p.model_dump(mode="json") for p in sorted(rows, key=lambda p: (p.publish_at, p.id))]


@tool("write", pre=[exists("mkt_posts", "post_id", "post", ["list_posts", "schedule_post"]),
                    field_in("mkt_posts", "post_id", "post", ["scheduled"])])
def cancel_post(world: WorkspaceWorld, post_id: str) -> dict[str, Any]:
    """Cancel a scheduled post.

    Args:
        post_id: the post id, e.g. POST001
    """
    return world.table("mkt_posts").update(post_id, status="cancelled").model_dump(mode="json")


# ---- audiences ------------------------------------------------------------------------------

@tool("read")
def list_audiences(world: WorkspaceWorld) -> list[dict[str, Any]]:
    """Audiences and segments (id, name, size, ages, regions, interests)."""
    return [a.model_dump(mode="json") for a in world.table("mkt_audiences")]


@tool("read", pre=[exists("mkt_audiences", "audience_id", "audience", AUDIENCE_SOURCES)])
def get_audience(world: WorkspaceWorld, audience_id: str) -> dict[str, Any]:
    """One audience with the campaigns that target it.

    Args:
        audience_id: the audience id, e.g. AUD01
    """
    a = world.table("mkt_audiences").require(audience_id)
    used = [c.id for c in world.table("mkt_campaigns") if c.audience_id == audience_id]
    return a.model_dump(mode="json") | {"campaigns": used}


def age_overlap(a_min: int, a_max: int, b_min: int, b_max: int) -> int:
    return max(0, min(a_max, b_max) - max(a_min, b_min) + 1)


@tool("write", pre=[exists("mkt_audiences", "parent_id", "audience", AUDIENCE_SOURCES)])
def create_segment(world: WorkspaceWorld, parent_id: str, name: str, age_min: Annotated[int, Field(ge=13, le=100)],
                   age_max: Annotated[int, Field(ge=13, le=100)], regions: list[str] | None = None,
                   interests: list[str] | None = None) -> dict[str, Any]:
    """Narrow an audience into a segment. Estimated size = parent size x (shared ages / parent ages) x (kept regions /
    parent regions) x (kept interests / parent interests), rounded down; regions and interests must be the parent's.

    Args:
        parent_id: the audience to narrow
        name: segment name
        age_min: youngest age
        age_max: oldest age
        regions: regions to keep (default: all of the parent's)
        interests: interests to keep (default: all of the parent's)
    """
    p = world.table("mkt_audiences").require(parent_id)
    regs, ints = list(dict.fromkeys(regions or p.regions)), list(dict.fromkeys(interests or p.interests))
    bad = [r for r in regs if r not in p.regions] + [i for i in ints if i not in p.interests]
    if bad:
        raise ToolError(f"{bad[0]!r} is not in the parent audience ({', '.join(p.regions + p.interests)})")
    shared = age_overlap(p.age_min, p.age_max, age_min, age_max)
    if age_max < age_min or shared == 0:
        raise ToolError(f"ages {age_min}-{age_max} do not overlap the parent's {p.age_min}-{p.age_max}")
    if not name.strip():
        raise ToolError("name must not be empty")
    size = math.floor(p.size * shared / (p.age_max - p.age_min + 1) * len(regs) / len(p.regions) * len(ints) / len(p.interests))
    table = world.table("mkt_audiences")
    seg = Audience(id=new_id(table, world.ids, "AUD", 2), name=name.strip(), description=f"segment of {p.name}", size=size,
                   age_min=max(age_min, p.age_min), age_max=min(age_max, p.age_max), regions=regs, interests=ints, parent_id=p.id)
    return table.insert(seg).model_dump(mode="json")


@tool("read", pre=[exists("mkt_audiences", "audience_a", "audience", AUDIENCE_SOURCES),
                   exists("mkt_audiences", "audience_b", "audience", AUDIENCE_SOURCES)])
def audience_overlap(world: WorkspaceWorld, audience_a: str, audience_b: str) -> dict[str, Any]:
    """How much two audiences overlap: Jaccard similarity of interests and of regions (4 places), shared ages, and an
    estimate = smaller size x interest Jaccard x shared regions / the smaller's regions x shared ages / the smaller's ages.

    Args:
        audience_a: one audience
        audience_b: the other
    """
    a, b = world.table("mkt_audiences").require(audience_a), world.table("mkt_audiences").require(audience_b)
    small = a if a.size <= b.size else b
    ji = ratio(len(set(a.interests) & set(b.interests)), len(set(a.interests) | set(b.interests))) or 0.0
    jr = ratio(len(set(a.regions) & set(b.regions)), len(set(a.regions) | set(b.regions))) or 0.0
    ages = age_overlap(a.age_min, a.age_max, b.age_min, b.age_max)
    est = math.floor(small.size * ji * len(set(a.regions) & set(b.regions)) / len(small.regions)
                     * ages / (small.age_max - small.age_min + 1))
    return {"audience_a": a.id, "audience_b": b.id, "interest_jaccard": ji, "region_jaccard": jr, "shared_ages": ages,
            "estimated_overlap": est}


@tool("read", pre=[_campaign_exists()])
def forecast_conversions(world: WorkspaceWorld, campaign_id: str, extra_spend: Annotated[float, Field(gt=0, le=10_000_000)],
                         channel: Channel | None = None) -> dict[str, Any]:
    """Extra conversions and revenue if extra_spend is spent at the observed CPA and ROAS: conversions = floor(extra /
    CPA), revenue = extra x ROAS.

    Args:
        campaign_id: the campaign
        extra_spend: additional spend
        channel: use this channel's figures (default: the whole campaign)
    """
    c = _campaign(world, campaign_id)
    _channel_of_campaign(world, c, channel)
    k = kpis(totals(_rows(world, c.id, channel)))
    if not k["cpa"] or k["roas"] is None:
        raise ToolError("no conversions or spend recorded yet, so there is nothing to extrapolate from")
    return {"campaign_id": c.id, "channel": channel, "cpa": k["cpa"], "roas": k["roas"],
            "extra_conversions": math.floor(extra_spend / k["cpa"] + 1e-9), "extra_revenue": round(extra_spend * k["roas"], 2)}


@tool("write", pre=[rule("every campaign must exist", lambda w, h, a: next(
    (f"no campaign {c!r}" for c in a.get("campaign_ids") or [] if c not in w.table("mkt_campaigns")), None), CAMPAIGN_SOURCES)])
def export_kpi_report(world: WorkspaceWorld, path: str, campaign_ids: list[str], by_channel: bool = False,
                      fmt: Literal["csv", "markdown"] = "markdown", overwrite: bool = False) -> dict[str, Any]:
    """Write a KPI table (spend, revenue, conversions, CTR, CPC, CPA, ROAS) per campaign, or per campaign and channel.

    Args:
        path: workspace path ending in .csv or .md
        campaign_ids: the campaigns, in row order
        by_channel: one row per channel instead of per campaign
        fmt: csv or markdown
        overwrite: replace an existing file
    """
    if not campaign_ids:
        raise ToolError("give at least one campaign")
    rows = []
    for cid in dict.fromkeys(campaign_ids):
        c = _campaign(world, cid)
        for ch in (c.channels if by_channel else [None]):
            t = totals(_rows(world, c.id, ch))
            k = kpis(t)
            rows.append([c.id, ch or "all", t["spend"], t["revenue"], t["conversions"], k["ctr"], k["cpc"], k["cpa"], k["roas"]])
    text = render_table(["campaign", "channel", "spend", "revenue", "conversions", "ctr", "cpc", "cpa", "roas"], rows, fmt)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "rows": len(rows), "chars": len(text)}


TOOLS: list[ToolSpec] = [
    list_campaigns, get_campaign, channel_metrics, compute_kpis, compare_channels, compare_campaigns, daily_trend,
    budget_pacing, budget_allocation, set_channel_budgets, create_campaign, update_campaign_brief, set_campaign_budget,
    launch_campaign, pause_campaign, resume_campaign, complete_campaign, schedule_post, list_posts, cancel_post,
    list_audiences, get_audience, create_segment, audience_overlap, forecast_conversions, export_kpi_report,
]

# the colleague who ran the seeded (past) campaigns; campaigns the owner creates carry the owner's name
CAMPAIGN_MANAGER = "Jasmin Moreau"

PROFILE: dict[str, Any] = {
    "key": "marketer", "title": "marketing manager", "owner": "Jonas Keller", "owner_email": "jonas.keller@brightfold.co",
    "organization": "Brightfold", "domain": "brightfold.co", "start": SEED_START_TIME,
}


# ---- seeded data ----------------------------------------------------------------------------

_PRODUCTS = ("trail running shoe", "ultralight tent", "insulated bottle", "rain shell jacket", "camp stove", "hiking backpack")
_SEASONS = ("Spring", "Summer", "Autumn", "Winter", "Weekend", "Launch")
_REGIONS = ("north", "south", "east", "west", "central")
_INTERESTS = ("hiking", "camping", "running", "cycling", "climbing", "travel", "fitness", "sustainability")
# channel -> (ctr range, conversion rate range, cpc range, order value range)
_CHANNEL_MODEL = {"search": ((0.03, 0.07), (0.04, 0.09), (0.6, 1.6), (60, 120)),
                  "social": ((0.008, 0.02), (0.015, 0.04), (0.4, 1.1), (50, 100)),
                  "email": ((0.02, 0.05), (0.05, 0.12), (0.05, 0.2), (55, 110)),
                  "display": ((0.002, 0.006), (0.005, 0.02), (0.3, 0.9), (50, 90)),
                  "video": ((0.004, 0.01), (0.008, 0.025), (0.5, 1.4), (60, 110))}


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    audiences = []
    for i in range(4):
        lo = rng.choice([18, 21, 25, 30, 35])
        audiences.append({"id": f"AUD{i + 1:02d}", "name": f"{rng.choice(_INTERESTS).title()} enthusiasts {chr(65 + i)}",
                          "description": "customers and look-alikes from the loyalty programme",
                          "size": rng.randint(20, 400) * 1000, "age_min": lo, "age_max": lo + rng.choice([14, 20, 29]),
                          "regions": sorted(rng.sample(_REGIONS, rng.randint(2, 4))),
                          "interests": sorted(rng.sample(_INTERESTS, rng.randint(3, 5))), "parent_id": ""})
    # (status, start offset, end offset)
    plan = [("active", -10, 20), ("active", -6, 25), ("paused", -8, 14), ("completed", -40, -31), ("draft", 7, 37)]
    rng.shuffle(plan)
    campaigns, metrics = [], []
    for i, (status, a, b) in enumerate(plan):
        product = _PRODUCTS[(i + rng.randint(0, 5)) % len(_PRODUCTS)]
        cid = f"CMP{i + 1:03d}"
        chans = sorted(rng.sample(CHANNELS, 2), key=CHANNELS.index)
        objective = rng.choice(["awareness", "traffic", "conversions"])
        brief = (f"Promote the {product} to active outdoor customers. Key message: built to last a whole season. "
                 f"Call to action: shop the {product} range with free returns.") if status != "draft" else ""
        campaigns.append({"id": cid, "name": f"{rng.choice(_SEASONS)} {product.title()} {2026}", "objective": objective,
                          "brief": brief, "channels": chans, "budget": 0.0, "channel_budgets": {}, "start": day(a),
                          "end": day(b), "status": status, "audience_id": rng.choice(audiences)["id"],
                          "owner": CAMPAIGN_MANAGER, "status_reason": "CPA above target" if status == "paused" else ""})
        if status == "draft":
            campaigns[-1]["budget"] = float(rng.randint(4, 20) * 500)
            continue
        last = min(b, -1)
        for ch in chans:
            ctr_r, cvr_r, cpc_r, aov_r = _CHANNEL_MODEL[ch]
            ctr, cvr, cpc, aov = rng.uniform(*ctr_r), rng.uniform(*cvr_r), rng.uniform(*cpc_r), rng.uniform(*aov_r)
            for off in range(a, last + 1):
                imps = rng.randint(4, 30) * 200
                clicks = max(1, round(imps * ctr * rng.uniform(0.8, 1.2)))
                conv = round(clicks * cvr * rng.uniform(0.6, 1.4))
                spend = round(clicks * cpc * rng.uniform(0.9, 1.1), 2)
                metrics.append({"id": f"{cid}-{ch}-{day(off)}", "campaign_id": cid, "channel": ch, "date": day(off),
                                "impressions": imps, "clicks": clicks, "conversions": conv, "spend": spend,
                                "revenue": round(conv * aov * rng.uniform(0.9, 1.1), 2)})
        # budget: the observed daily spend over the whole run, give or take (so pacing varies around on track)
        spent = sum(m["spend"] for m in metrics if m["campaign_id"] == cid)
        per_day = spent / (last - a + 1)
        campaigns[-1]["budget"] = float(max(500, math.ceil(per_day * (b - a + 1) * rng.uniform(0.8, 1.3) / 100) * 100))
    posts = []
    for c in campaigns:
        if c["status"] in ("active", "paused"):
            when = SEED_START + timedelta(days=rng.randint(1, 6))
            posts.append({"id": f"POST{len(posts) + 1:03d}", "campaign_id": c["id"], "channel": c["channels"][0],
                          "text": f"New season, same trusted gear: {c['name']} starts now.",
                          "publish_at": f"{when.isoformat()} {rng.choice(['09', '12', '18'])}:00:00", "status": "scheduled"})
    return {"mkt_campaigns": campaigns, "mkt_metrics": metrics, "mkt_audiences": audiences, "mkt_posts": posts}
