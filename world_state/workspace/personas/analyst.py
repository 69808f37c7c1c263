"""Persona: financial analyst. Company financial statements per fiscal year (income statement,
balance sheet, cash flow, in millions), month-end closing prices, portfolios (cash and holdings)
with a trade log, and a watchlist.

Formulas (every ratio rounded to 4 places, growth and returns in percent to 2 places):
gross_margin = (revenue - cost_of_revenue) / revenue; operating_margin = operating_income /
revenue; net_margin = net_income / revenue; current_ratio = current_assets / current_liabilities;
quick_ratio = (current_assets - inventory) / current_liabilities; debt_to_equity = total_debt /
equity; roe = net_income / equity; roa = net_income / total_assets; asset_turnover = revenue /
total_assets; interest_coverage = operating_income / interest_expense; equity_multiplier =
total_assets / equity; eps = net_income / shares_outstanding; free_cash_flow = operating_cash_flow
- capex. A ratio with a zero denominator is null. Prices: the close on the given date or, if none,
the latest close before it.

This module holds the tools (with their pre-conditions) and the registration (``TOOLS``,
``PROFILE``); ``analyst_model`` holds the entities and ``SCHEMA``, the computations and the seeded
data (``seed_tables``), re-exported here with the other names that code outside reads from this
module.
"""

from __future__ import annotations

import statistics
from typing import Annotated, Any, Literal

from pydantic import Field

from servicegym.world_state.core import History, World
from servicegym.world_state.tools import ToolError, ToolSpec, exists, requires_prior_call, rule, tool
from servicegym.world_state.workspace.personas.analyst_model import (
    LINE_ITEMS,
    RATIOS,
    SCHEMA,
    Company,
    Holding,
    Portfolio,
    Price,
    Statement,
    WatchItem,
    _apply_trade,
    _company,
    _holdings,
    _metric,
    _portfolio,
    _ratios,
    _statement,
    growth_pct,
    plan_rebalance,
    price_on,
    ratios_of,
    seed_tables,
    valuation,
)
from servicegym.world_state.workspace.personas.formats import SEED_START_TIME, parse_day, ratio, render_table
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

# what the persona registry reads (``SCHEMA``, ``TOOLS``, ``PROFILE``, ``seed_tables``) and the
# names of ``analyst_model`` that other code reads from this module
__all__ = ["PROFILE", "SCHEMA", "TOOLS", "Company", "Holding", "Portfolio", "Price", "Statement", "seed_tables"]


Fmt = Literal["csv", "markdown"]
COMPANY_SOURCES = ("list_companies", "screen_companies")
PORTFOLIO_SOURCES = ("list_portfolios",)


# ---- pre-conditions -------------------------------------------------------------------------

def _tickers_exist(world: World, history: History, args: dict[str, Any]) -> str | None:
    for t in args.get("tickers") or []:
        if not isinstance(t, str) or t.strip().upper() not in world.table("fin_companies"):
            return f"no company {t!r}; find tickers with list_companies"
    return None


def _ticker_known(world: World, history: History, args: dict[str, Any]) -> str | None:
    t = args.get("ticker")
    if isinstance(t, str) and t.strip().upper() in world.table("fin_companies"):
        return None
    return f"no company {t!r}; find tickers with list_companies"


TICKER = rule("the ticker must be a covered company", _ticker_known, COMPANY_SOURCES)


def _portfolio_exists():
    return exists("fin_portfolios", "portfolio_id", "portfolio", PORTFOLIO_SOURCES)


# ---- companies and statements ---------------------------------------------------------------

@tool("read")
def list_companies(world: WorkspaceWorld, sector: str | None = None) -> list[dict[str, Any]]:
    """Covered companies (ticker, name, sector, shares outstanding in millions).

    Args:
        sector: only this sector, e.g. technology
    """
    return [c.model_dump(mode="json") for c in world.table("fin_companies") if sector is None or c.sector == sector.lower()]


@tool("read", pre=[TICKER])
def get_company(world: WorkspaceWorld, ticker: str) -> dict[str, Any]:
    """One company with the periods it has statements for and its latest close.

    Args:
        ticker: the ticker, e.g. NRVA
    """
    c = _company(world, ticker)
    periods = sorted(s.period for s in world.table("fin_statements") if s.ticker == c.ticker)
    prices = sorted((p for p in world.table("fin_prices") if p.ticker == c.ticker), key=lambda p: p.date)
    last = prices[-1] if prices else None
    return c.model_dump(mode="json") | {"periods": periods, "latest_close": last.close if last else None,
                                        "latest_close_date": last.date if last else None}


@tool("read", pre=[TICKER])
def get_statement(world: WorkspaceWorld, ticker: str, period: str) -> dict[str, Any]:
    """A company's financial statement for one fiscal year (amounts in millions).

    Args:
        ticker: the ticker
        period: fiscal year, e.g. FY2025
    """
    return _statement(world, ticker, period).model_dump(mode="json")


@tool("read", pre=[TICKER])
def compute_ratios(world: WorkspaceWorld, ticker: str, period: str) -> dict[str, Any]:
    """Financial ratios of one statement: margins, liquidity, leverage, returns, coverage, EPS and free cash flow
    (formulas in the persona's documentation: e.g. current_ratio = current_assets / current_liabilities).

    Args:
        ticker: the ticker
        period: fiscal year, e.g. FY2025
    """
    c = _company(world, ticker)
    return {"ticker": c.ticker, "period": period.strip().upper(), "ratios": _ratios(world, c.ticker, period)}


@tool("read", pre=[TICKER])
def dupont_analysis(world: WorkspaceWorld, ticker: str, period: str) -> dict[str, Any]:
    """DuPont decomposition: ROE = net margin x asset turnover x equity multiplier.

    Args:
        ticker: the ticker
        period: fiscal year
    """
    r = _ratios(world, ticker, period)
    s = _statement(world, ticker, period)
    product = None if s.revenue == 0 or s.total_assets == 0 or s.equity == 0 else round(
        s.net_income / s.revenue * (s.revenue / s.total_assets) * (s.total_assets / s.equity), 4)
    return {"ticker": s.ticker, "period": s.period, "net_margin": r["net_margin"], "asset_turnover": r["asset_turnover"],
            "equity_multiplier": r["equity_multiplier"], "roe": product}


@tool("read", pre=[TICKER])
def compare_periods(world: WorkspaceWorld, ticker: str, period_from: str, period_to: str,
                    metrics: list[str] | None = None) -> dict[str, Any]:
    """Change of line items or ratios between two fiscal years: both values and growth in percent of the earlier
    ((to - from) / |from| x 100, 2 places; null when the earlier value is 0).

    Args:
        ticker: the ticker
        period_from: the earlier fiscal year
        period_to: the later fiscal year
        metrics: line items or ratios (default: revenue, operating_income, net_income, eps, roe)
    """
    names = metrics or ["revenue", "operating_income", "net_income", "eps", "roe"]
    out = {}
    for m in names:
        a, b = _metric(world, ticker, period_from, m), _metric(world, ticker, period_to, m)
        out[m] = {"from": a, "to": b, "growth_pct": growth_pct(a, b)}
    return {"ticker": _company(world, ticker).ticker, "period_from": period_from, "period_to": period_to, "metrics": out}


@tool("read", pre=[TICKER])
def cagr(world: WorkspaceWorld, ticker: str, metric: str, period_from: str, period_to: str) -> dict[str, Any]:
    """Compound annual growth rate of a line item between two fiscal years: (to / from)^(1 / years) - 1, in percent.

    Args:
        ticker: the ticker
        metric: a line item, e.g. revenue
        period_from: the earlier fiscal year, e.g. FY2023
        period_to: the later fiscal year, e.g. FY2025
    """
    if metric not in LINE_ITEMS:
        raise ToolError(f"cagr needs a line item: {', '.join(LINE_ITEMS)}")
    a, b = _statement(world, ticker, period_from), _statement(world, ticker, period_to)
    years = int(b.period[2:]) - int(a.period[2:])
    if years <= 0:
        raise ToolError("period_to must be later than period_from")
    va, vb = getattr(a, metric), getattr(b, metric)
    if va <= 0 or vb <= 0:
        raise ToolError(f"CAGR is undefined for non-positive values ({metric}: {va:g} -> {vb:g})")
    return {"ticker": a.ticker, "metric": metric, "from": va, "to": vb, "years": years,
            "cagr_pct": round(((vb / va) ** (1 / years) - 1) * 100, 2)}


@tool("read", pre=[rule("every ticker must exist", _tickers_exist, COMPANY_SOURCES)])
def compare_companies(world: WorkspaceWorld, tickers: list[str], period: str, metric: str,
                      direction: Literal["desc", "asc"] = "desc") -> list[dict[str, Any]]:
    """Rank companies by one ratio or line item in a fiscal year (nulls last).

    Args:
        tickers: the companies
        period: fiscal year
        metric: ratio or line item, e.g. roe
        direction: desc (highest first) or asc
    """
    if not tickers:
        raise ToolError("give at least one ticker")
    rows = [(t.strip().upper(), _metric(world, t, period, metric)) for t in dict.fromkeys(tickers)]
    sign = -1 if direction == "desc" else 1
    rows.sort(key=lambda r: (r[1] is None, sign * (r[1] or 0), r[0]))
    return [{"rank": i, "ticker": t, metric: v} for i, (t, v) in enumerate(rows, 1)]


@tool("read")
def screen_companies(world: WorkspaceWorld, period: str, min_values: dict[str, float] | None = None,
                     max_values: dict[str, float] | None = None, sector: str | None = None) -> list[dict[str, Any]]:
    """Companies whose ratios or line items in a fiscal year meet every bound (inclusive); a null value fails.

    Args:
        period: fiscal year
        min_values: metric -> lowest allowed value, e.g. {"current_ratio": 1.5}
        max_values: metric -> highest allowed value, e.g. {"debt_to_equity": 1.0}
        sector: only this sector
    """
    mins, maxs = min_values or {}, max_values or {}
    for m in list(mins) + list(maxs):
        if m not in RATIOS and m not in LINE_ITEMS:
            raise ToolError(f"unknown metric {m!r}; ratios: {', '.join(RATIOS)}")
    out = []
    for c in world.table("fin_companies"):
        if sector is not None and c.sector != sector.lower():
            continue
        s = world.table("fin_statements").get(f"{c.ticker}-{period.strip().upper()}")
        if s is None:
            continue
        vals = ratios_of(s, c.shares_outstanding) | {k: getattr(s, k) for k in LINE_ITEMS}
        ok = all(vals[m] is not None and vals[m] >= v for m, v in mins.items()) and \
            all(vals[m] is not None and vals[m] <= v for m, v in maxs.items())
        if ok:
            out.append({"ticker": c.ticker, "name": c.name, "sector": c.sector} | {m: vals[m] for m in {**mins, **maxs}})
    return out


@tool("read")
def sector_summary(world: WorkspaceWorld, sector: str, period: str) -> dict[str, Any]:
    """Mean and median of each ratio over a sector's companies in a fiscal year (nulls skipped), 4 places.

    Args:
        sector: the sector
        period: fiscal year
    """
    rows = [ratios_of(s, c.shares_outstanding) for c in world.table("fin_companies") if c.sector == sector.lower()
            for s in [world.table("fin_statements").get(f"{c.ticker}-{period.strip().upper()}")] if s is not None]
    if not rows:
        raise ToolError(f"no statements for sector {sector!r} in {period!r}")
    stats = {}
    for k in RATIOS:
        vals = [r[k] for r in rows if r[k] is not None]
        stats[k] = {"mean": round(statistics.fmean(vals), 4) if vals else None,
                    "median": round(statistics.median(vals), 4) if vals else None}
    return {"sector": sector.lower(), "period": period.strip().upper(), "companies": len(rows), "ratios": stats}


# ---- prices -----------------------------------------------------------------------------------

@tool("read", pre=[TICKER])
def get_price(world: WorkspaceWorld, ticker: str, date: str) -> dict[str, Any]:
    """The closing price on a date, or the latest close before it.

    Args:
        ticker: the ticker
        date: YYYY-MM-DD
    """
    p = price_on(world, ticker, date)
    return {"ticker": p.ticker, "date": p.date, "close": p.close}


@tool("read", pre=[TICKER])
def price_history(world: WorkspaceWorld, ticker: str, start: str = "1900-01-01", end: str = "2999-12-31") -> list[dict[str, Any]]:
    """Closing prices between two dates (inclusive), oldest first.

    Args:
        ticker: the ticker
        start: first date, YYYY-MM-DD
        end: last date, YYYY-MM-DD
    """
    c = _company(world, ticker)
    a, b = parse_day(start, "start").isoformat(), parse_day(end, "end").isoformat()
    return [{"date": p.date, "close": p.close} for p in sorted(world.table("fin_prices"), key=lambda p: p.date)
            if p.ticker == c.ticker and a <= p.date <= b]


@tool("read", pre=[TICKER])
def price_return(world: WorkspaceWorld, ticker: str, start: str, end: str) -> dict[str, Any]:
    """Price return between two dates in percent: (close at end / close at start - 1) x 100, 2 places.

    Args:
        ticker: the ticker
        start: YYYY-MM-DD
        end: YYYY-MM-DD
    """
    a, b = price_on(world, ticker, start), price_on(world, ticker, end)
    return {"ticker": a.ticker, "start": a.date, "start_close": a.close, "end": b.date, "end_close": b.close,
            "return_pct": round((b.close / a.close - 1) * 100, 2)}


@tool("read", pre=[TICKER])
def valuation_multiples(world: WorkspaceWorld, ticker: str, period: str, date: str) -> dict[str, Any]:
    """Market multiples at a date's close on a fiscal year's figures: market cap (price x shares, millions), P/E, P/B,
    P/S and EV/EBIT with EV = market cap + total debt - cash.

    Args:
        ticker: the ticker
        period: fiscal year
        date: price date, YYYY-MM-DD
    """
    c = _company(world, ticker)
    s = _statement(world, c.ticker, period)
    px = price_on(world, c.ticker, date)
    cap = round(px.close * c.shares_outstanding, 2)
    ev = round(cap + s.total_debt - s.cash, 2)
    return {"ticker": c.ticker, "period": s.period, "price": px.close, "price_date": px.date, "market_cap": cap,
            "pe": ratio(cap, s.net_income, 2), "pb": ratio(cap, s.equity, 2), "ps": ratio(cap, s.revenue, 2),
            "enterprise_value": ev, "ev_ebit": ratio(ev, s.operating_income, 2)}


# ---- portfolios -------------------------------------------------------------------------------

@tool("read")
def list_portfolios(world: WorkspaceWorld) -> list[dict[str, Any]]:
    """The portfolios managed (id, name, cash, benchmark, number of positions)."""
    return [p.model_dump(mode="json") | {"positions": len(_holdings(world, p.id))} for p in world.table("fin_portfolios")]


@tool("read", pre=[_portfolio_exists()])
def get_holdings(world: WorkspaceWorld, portfolio_id: str) -> dict[str, Any]:
    """A portfolio's cash and positions (shares, average cost per share).

    Args:
        portfolio_id: the portfolio id, e.g. PF1
    """
    p = _portfolio(world, portfolio_id)
    return {"portfolio_id": p.id, "cash": p.cash,
            "holdings": [{"ticker": h.ticker, "shares": h.shares, "cost_basis": h.cost_basis} for h in _holdings(world, p.id)]}


@tool("read", pre=[_portfolio_exists()])
def portfolio_value(world: WorkspaceWorld, portfolio_id: str, date: str) -> dict[str, Any]:
    """Market value of each position and of the whole portfolio (positions + cash) at a date's closes.

    Args:
        portfolio_id: the portfolio
        date: YYYY-MM-DD
    """
    return valuation(world, portfolio_id, date)


@tool("read", pre=[_portfolio_exists()])
def position_weights(world: WorkspaceWorld, portfolio_id: str, date: str) -> dict[str, Any]:
    """Each position's (and cash's) share of total value at a date, 4 places; largest first.

    Args:
        portfolio_id: the portfolio
        date: YYYY-MM-DD
    """
    v = valuation(world, portfolio_id, date)
    total = v["total_value"]
    weights = {x["ticker"]: ratio(x["value"], total) for x in v["positions"]}
    weights["CASH"] = ratio(v["cash"], total)
    ordered = dict(sorted(weights.items(), key=lambda kv: (-(kv[1] or 0), kv[0])))
    return {"portfolio_id": portfolio_id, "date": v["date"], "total_value": total, "weights": ordered}


@tool("read", pre=[_portfolio_exists()])
def unrealized_pnl(world: WorkspaceWorld, portfolio_id: str, date: str) -> dict[str, Any]:
    """Unrealized gain or loss per position (value - cost) and in percent of cost, plus the total.

    Args:
        portfolio_id: the portfolio
        date: YYYY-MM-DD
    """
    v = valuation(world, portfolio_id, date)
    rows = [{"ticker": x["ticker"], "value": x["value"], "cost": x["cost"], "pnl": round(x["value"] - x["cost"], 2),
             "pnl_pct": growth_pct(x["cost"], x["value"])} for x in v["positions"]]
    total_cost = round(sum(x["cost"] for x in v["positions"]), 2)
    return {"portfolio_id": portfolio_id, "date": v["date"], "positions": rows,
            "total_pnl": round(v["invested_value"] - total_cost, 2), "total_pnl_pct": growth_pct(total_cost, v["invested_value"])}


@tool("read", pre=[_portfolio_exists()])
def rebalance_plan(world: WorkspaceWorld, portfolio_id: str, target_weights: dict[str, float], date: str) -> dict[str, Any]:
    """Whole-share trades that move a portfolio towards target weights of its total value at a date's closes
    (target shares = floor(total x weight / price); positions not named go to 0; the rest of the value stays cash).

    Args:
        portfolio_id: the portfolio
        target_weights: ticker -> weight between 0 and 1, summing to at most 1
        date: pricing date, YYYY-MM-DD
    """
    return plan_rebalance(world, portfolio_id, target_weights, date)


@tool("write", pre=[_portfolio_exists(), requires_prior_call("rebalance_plan", "portfolio_id", "portfolio")])
def execute_rebalance(world: WorkspaceWorld, portfolio_id: str, target_weights: dict[str, float], date: str) -> dict[str, Any]:
    """Carry out the trades of rebalance_plan for the same targets and date, recording each trade.

    Args:
        portfolio_id: the portfolio
        target_weights: ticker -> weight, as given to rebalance_plan
        date: pricing date, YYYY-MM-DD
    """
    plan = plan_rebalance(world, portfolio_id, target_weights, date)
    ids = [_apply_trade(world, portfolio_id, t["ticker"], t["side"], t["shares"], t["price"], plan["date"]).id
           for t in plan["trades"]]
    return plan | {"trade_ids": ids, "cash_after": _portfolio(world, portfolio_id).cash}


@tool("write", pre=[_portfolio_exists(), TICKER])
def record_trade(world: WorkspaceWorld, portfolio_id: str, ticker: str, side: Literal["buy", "sell"],
                 shares: Annotated[int, Field(ge=1, le=10_000_000)], date: str) -> dict[str, Any]:
    """Buy or sell whole shares at a date's close (a buy needs the cash; a sell at most the shares held).

    Args:
        portfolio_id: the portfolio
        ticker: the ticker
        side: buy or sell
        shares: number of shares
        date: trade date, YYYY-MM-DD
    """
    px = price_on(world, ticker, date)
    return _apply_trade(world, portfolio_id, px.ticker, side, shares, px.close, px.date).model_dump(mode="json")


@tool("read")
def list_trades(world: WorkspaceWorld, portfolio_id: str | None = None) -> list[dict[str, Any]]:
    """Recorded trades, in order.

    Args:
        portfolio_id: only this portfolio's
    """
    return [t.model_dump(mode="json") for t in world.table("fin_trades") if portfolio_id is None or t.portfolio_id == portfolio_id]


# ---- watchlist and exports ----------------------------------------------------------------------

@tool("write", pre=[TICKER])
def add_to_watchlist(world: WorkspaceWorld, ticker: str, note: str = "", target_price: Annotated[float, Field(gt=0)] | None = None) -> dict[str, Any]:
    """Add a company to the watchlist (or update its note and target price).

    Args:
        ticker: the ticker
        note: why it is watched
        target_price: price that would trigger a look
    """
    c = _company(world, ticker)
    old = world.table("fin_watchlist").get(c.ticker)
    row = WatchItem(ticker=c.ticker, note=note.strip() or (old.note if old else ""),
                    target_price=target_price if target_price is not None else (old.target_price if old else None),
                    added=old.added if old else world.clock.text())
    return world.table("fin_watchlist").put(row).model_dump(mode="json")


@tool("read")
def list_watchlist(world: WorkspaceWorld, date: str | None = None) -> list[dict[str, Any]]:
    """The watchlist, with each company's close at a date (default: latest) and whether it is at or below target.

    Args:
        date: price date, YYYY-MM-DD
    """
    out = []
    for w in world.table("fin_watchlist"):
        try:
            px = price_on(world, w.ticker, date or "2999-12-31")
        except ToolError:
            px = None
        close = px.close if px else None
        out.append(w.model_dump(mode="json") | {"close": close, "at_or_below_target":
                                                None if close is None or w.target_price is None else close <= w.target_price})
    return out


@tool("write", pre=[rule("every ticker must exist", _tickers_exist, COMPANY_SOURCES)])
def export_ratios_table(world: WorkspaceWorld, path: str, tickers: list[str], period: str, ratios: list[str] | None = None,
                        fmt: Fmt = "markdown", overwrite: bool = False) -> dict[str, Any]:
    """Write a table of ratios (one row per company, a column per ratio; nulls blank) to a workspace file.

    Args:
        path: workspace path ending in .csv or .md
        tickers: the companies, in row order
        period: fiscal year
        ratios: ratio columns (default: all)
        fmt: csv or markdown
        overwrite: replace an existing file
    """
    cols = ratios or list(RATIOS)
    bad = [r for r in cols if r not in RATIOS]
    if bad or not tickers:
        raise ToolError(f"unknown ratio {bad[0]!r}; choose from {', '.join(RATIOS)}" if bad else "give at least one ticker")
    rows = []
    for t in dict.fromkeys(x.strip().upper() for x in tickers):
        r = _ratios(world, t, period)
        rows.append([t] + [r[c] for c in cols])
    text = render_table(["ticker"] + cols, rows, fmt)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "rows": len(rows), "chars": len(text)}


@tool("write", pre=[_portfolio_exists()])
def export_holdings_table(world: WorkspaceWorld, path: str, portfolio_id: str, date: str, fmt: Fmt = "markdown",
                          overwrite: bool = False) -> dict[str, Any]:
    """Write a portfolio's positions at a date (ticker, shares, price, value, weight) and a cash row to a file.

    Args:
        path: workspace path ending in .csv or .md
        portfolio_id: the portfolio
        date: YYYY-MM-DD
        fmt: csv or markdown
        overwrite: replace an existing file
    """
    v = valuation(world, portfolio_id, date)
    total = v["total_value"]
    rows = [[x["ticker"], x["shares"], x["price"], x["value"], ratio(x["value"], total)] for x in v["positions"]]
    rows.append(["CASH", "", "", v["cash"], ratio(v["cash"], total)])
    text = render_table(["ticker", "shares", "price", "value", "weight"], rows, fmt)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "rows": len(rows), "total_value": total}


TOOLS: list[ToolSpec] = [
    list_companies, get_company, get_statement, compute_ratios, dupont_analysis, compare_periods, cagr,
    compare_companies, screen_companies, sector_summary, get_price, price_history, price_return, valuation_multiples,
    list_portfolios, get_holdings, portfolio_value, position_weights, unrealized_pnl, rebalance_plan,
    execute_rebalance, record_trade, list_trades, add_to_watchlist, list_watchlist, export_ratios_table,
    export_holdings_table,
]

PROFILE: dict[str, Any] = {
    "key": "analyst", "title": "financial analyst", "owner": "Ravi Iyer", "owner_email": "ravi.iyer@kestrel-capital.com",
    "organization": "Kestrel Capital", "domain": "kestrel-capital.com", "start": SEED_START_TIME,
}
