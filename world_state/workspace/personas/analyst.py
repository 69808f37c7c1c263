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
"""

from __future__ import annotations

import math
import random
import statistics
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.tools import ToolError, ToolSpec, exists, requires_prior_call, rule, tool
from servicegym.world_state.workspace.personas.formats import SEED_START_TIME, new_id, parse_day, ratio, render_table
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

RATIOS = ("gross_margin", "operating_margin", "net_margin", "current_ratio", "quick_ratio", "debt_to_equity", "roe",
          "roa", "asset_turnover", "interest_coverage", "equity_multiplier", "eps", "free_cash_flow")
LINE_ITEMS = ("revenue", "cost_of_revenue", "operating_expenses", "operating_income", "interest_expense", "net_income",
              "total_assets", "current_assets", "inventory", "cash", "current_liabilities", "total_liabilities",
              "total_debt", "equity", "operating_cash_flow", "capex")
Fmt = Literal["csv", "markdown"]


class Company(Entity):
    key_field: ClassVar[str] = "ticker"
    ticker: str
    name: str
    sector: str
    currency: str = "USD"
    shares_outstanding: float  # millions


class Statement(Entity):
    id: str  # TICKER-FY2025
    ticker: str
    period: str  # FY2025
    revenue: float
    cost_of_revenue: float
    operating_expenses: float
    operating_income: float
    interest_expense: float
    net_income: float
    total_assets: float
    current_assets: float
    inventory: float
    cash: float
    current_liabilities: float
    total_liabilities: float
    total_debt: float
    equity: float
    operating_cash_flow: float
    capex: float


class Price(Entity):
    id: str  # TICKER-YYYY-MM-DD
    ticker: str
    date: str
    close: float


class Portfolio(Entity):
    id: str
    name: str
    cash: float
    benchmark: str = ""


class Holding(Entity):
    id: str  # PORTFOLIO-TICKER
    portfolio_id: str
    ticker: str
    shares: int
    cost_basis: float  # average price paid per share


class Trade(Entity):
    id: str
    portfolio_id: str
    ticker: str
    side: Literal["buy", "sell"]
    shares: int
    price: float
    date: str


class WatchItem(Entity):
    key_field: ClassVar[str] = "ticker"
    ticker: str
    note: str = ""
    target_price: float | None = None
    added: str = ""


SCHEMA: dict[str, type[Entity]] = {
    "fin_companies": Company,
    "fin_statements": Statement,
    "fin_prices": Price,
    "fin_portfolios": Portfolio,
    "fin_holdings": Holding,
    "fin_trades": Trade,
    "fin_watchlist": WatchItem,
}

COMPANY_SOURCES = ("list_companies", "screen_companies")
PORTFOLIO_SOURCES = ("list_portfolios",)


# ---- computations ---------------------------------------------------------------------------

def _company(world: WorkspaceWorld, ticker: str) -> Company:
    c = world.table("fin_companies").get(ticker.strip().upper()) if isinstance(ticker, str) else None
    if c is None:
        raise ToolError(f"no company {ticker!r}; find tickers with list_companies")
    return c


def _statement(world: WorkspaceWorld, ticker: str, period: str) -> Statement:
    c = _company(world, ticker)
    s = world.table("fin_statements").get(f"{c.ticker}-{period.strip().upper()}")
    if s is None:
        have = sorted(x.period for x in world.table("fin_statements") if x.ticker == c.ticker)
        raise ToolError(f"{c.ticker} has no statement for {period!r}; periods: {', '.join(have)}")
    return s


def ratios_of(s: Statement, shares: float) -> dict[str, float | None]:
    return {
        "gross_margin": ratio(s.revenue - s.cost_of_revenue, s.revenue),
        "operating_margin": ratio(s.operating_income, s.revenue),
        "net_margin": ratio(s.net_income, s.revenue),
        "current_ratio": ratio(s.current_assets, s.current_liabilities),
        "quick_ratio": ratio(s.current_assets - s.inventory, s.current_liabilities),
        "debt_to_equity": ratio(s.total_debt, s.equity),
        "roe": ratio(s.net_income, s.equity),
        "roa": ratio(s.net_income, s.total_assets),
        "asset_turnover": ratio(s.revenue, s.total_assets),
        "interest_coverage": ratio(s.operating_income, s.interest_expense),
        "equity_multiplier": ratio(s.total_assets, s.equity),
        "eps": ratio(s.net_income, shares),
        "free_cash_flow": round(s.operating_cash_flow - s.capex, 4),
    }


def _ratios(world: WorkspaceWorld, ticker: str, period: str) -> dict[str, float | None]:
    c = _company(world, ticker)
    return ratios_of(_statement(world, c.ticker, period), c.shares_outstanding)


def _metric(world: WorkspaceWorld, ticker: str, period: str, metric: str) -> float | None:
    if metric in LINE_ITEMS:
        return getattr(_statement(world, ticker, period), metric)
    if metric in RATIOS:
        return _ratios(world, ticker, period)[metric]
    raise ToolError(f"unknown metric {metric!r}; use a line item ({', '.join(LINE_ITEMS)}) or a ratio ({', '.join(RATIOS)})")


def growth_pct(old: float | None, new: float | None) -> float | None:
    if old is None or new is None or old == 0:
        return None
    return round((new - old) / abs(old) * 100, 2)


def price_on(world: WorkspaceWorld, ticker: str, on: str) -> Price:
    c = _company(world, ticker)
    d = parse_day(on).isoformat()
    rows = [p for p in world.table("fin_prices") if p.ticker == c.ticker and p.date <= d]
    if not rows:
        raise ToolError(f"no price for {c.ticker} on or before {d}")
    return max(rows, key=lambda p: p.date)


def _portfolio(world: WorkspaceWorld, pid: str) -> Portfolio:
    p = world.table("fin_portfolios").get(pid)
    if p is None:
        raise ToolError(f"no portfolio {pid!r}; see list_portfolios")
    return p


def _holdings(world: WorkspaceWorld, pid: str) -> list[Holding]:
    return sorted((h for h in world.table("fin_holdings") if h.portfolio_id == pid and h.shares > 0), key=lambda h: h.ticker)


def valuation(world: WorkspaceWorld, pid: str, on: str) -> dict[str, Any]:
    p = _portfolio(world, pid)
    positions = []
    for h in _holdings(world, pid):
        px = price_on(world, h.ticker, on)
        positions.append({"ticker": h.ticker, "shares": h.shares, "price": px.close, "price_date": px.date,
                          "value": round(h.shares * px.close, 2), "cost": round(h.shares * h.cost_basis, 2)})
    invested = round(sum(x["value"] for x in positions), 2)
    return {"portfolio_id": p.id, "date": parse_day(on).isoformat(), "cash": round(p.cash, 2), "positions": positions,
            "invested_value": invested, "total_value": round(invested + p.cash, 2)}


def plan_rebalance(world: WorkspaceWorld, pid: str, targets: dict[str, float], on: str) -> dict[str, Any]:
    """Whole-share trades towards target weights of total value (cash keeps the rest): target shares =
    floor(total x weight / price); sells are listed before buys; the resulting cash is never negative."""
    norm: dict[str, float] = {}
    for t, w in targets.items():
        c = _company(world, t)
        if not (0 <= w <= 1) or not math.isfinite(w):
            raise ToolError(f"weight of {t} must be between 0 and 1")
        norm[c.ticker] = w
    total_w = sum(norm.values())
    if total_w > 1 + 1e-9:
        raise ToolError(f"target weights sum to {total_w:g}; they must sum to at most 1 (the rest stays cash)")
    val = valuation(world, pid, on)
    total = val["total_value"]
    held = {x["ticker"]: x["shares"] for x in val["positions"]}
    trades = []
    cash = val["cash"]
    for t in sorted(set(held) | set(norm)):
        px = price_on(world, t, on).close
        want = math.floor(total * norm.get(t, 0.0) / px + 1e-9)
        diff = want - held.get(t, 0)
        if diff:
            trades.append({"ticker": t, "side": "buy" if diff > 0 else "sell", "shares": abs(diff), "price": px,
                           "amount": round(abs(diff) * px, 2), "target_shares": want})
            cash -= diff * px
    trades.sort(key=lambda x: (x["side"] != "sell", x["ticker"]))
    return {"portfolio_id": pid, "date": val["date"], "total_value": total, "trades": trades,
            "cash_after": round(cash, 2), "target_cash_weight": round(1 - total_w, 4)}


def _apply_trade(world: WorkspaceWorld, pid: str, ticker: str, side: str, shares: int, price: float, on: str) -> Trade:
    p = _portfolio(world, pid)
    hkey = f"{pid}-{ticker}"
    h = world.table("fin_holdings").get(hkey)
    have = h.shares if h else 0
    cost = round(shares * price, 2)
    if side == "sell":
        if shares > have:
            raise ToolError(f"{pid} holds {have} shares of {ticker}; cannot sell {shares}")
        world.table("fin_holdings").update(hkey, shares=have - shares)
        world.table("fin_portfolios").update(pid, cash=round(p.cash + cost, 2))
    else:
        if cost > p.cash + 0.01:  # a cent of slack for the rounding of a plan's earlier trades
            raise ToolError(f"buying {shares} {ticker} costs {cost:.2f}; {pid} has {p.cash:.2f} cash")
        basis = price if not h or have == 0 else (h.cost_basis * have + price * shares) / (have + shares)
        world.table("fin_holdings").put(Holding(id=hkey, portfolio_id=pid, ticker=ticker, shares=have + shares,
                                                cost_basis=round(basis, 4)))
        world.table("fin_portfolios").update(pid, cash=max(0.0, round(p.cash - cost, 2)))
    table = world.table("fin_trades")
    return table.insert(Trade(id=new_id(table, world.ids, "TR"), portfolio_id=pid, ticker=ticker, side=side,
                              shares=shares, price=price, date=on))


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


# ---- seeded data ----------------------------------------------------------------------------------

# sector: (gross margin range, opex share of revenue range, inventory share of current assets, capex share)
_SECTORS = {
    "technology": ((0.55, 0.75), (0.25, 0.40), 0.05, 0.06),
    "healthcare": ((0.45, 0.70), (0.25, 0.40), 0.15, 0.05),
    "industrials": ((0.22, 0.35), (0.10, 0.18), 0.35, 0.07),
    "consumer": ((0.30, 0.45), (0.18, 0.30), 0.40, 0.04),
    "energy": ((0.20, 0.40), (0.06, 0.14), 0.15, 0.15),
}
_NAME_A = ("Northwind", "Aster", "Bellhaven", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Halcyon", "Ironleaf",
           "Juniper", "Kestrel", "Lumen", "Meridian")
_NAME_B = {"technology": "Systems", "healthcare": "Therapeutics", "industrials": "Machinery", "consumer": "Brands",
           "energy": "Power"}
PRICE_DATES = ("2025-09-30", "2025-10-31", "2025-11-28", "2025-12-31", "2026-01-30", "2026-02-27")
PERIODS = ("FY2023", "FY2024", "FY2025")


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    sectors = sorted(_SECTORS)
    companies, statements, prices = [], [], []
    names = rng.sample(_NAME_A, 8)
    for i, base in enumerate(names):
        sector = sectors[i % len(sectors)] if i < 5 else rng.choice(sectors)
        ticker = (base[:3] + _NAME_B[sector][0]).upper()
        shares = float(rng.randint(50, 900))
        companies.append({"ticker": ticker, "name": f"{base} {_NAME_B[sector]}", "sector": sector, "currency": "USD",
                          "shares_outstanding": shares})
        gm_rng, opex_rng, inv_share, capex_share = _SECTORS[sector]
        revenue = float(rng.randint(800, 20000))
        debt = round(revenue * rng.uniform(0.1, 0.9), 1)
        for period in PERIODS:
            revenue = round(revenue * (1 + rng.uniform(-0.08, 0.22)), 1)
            cogs = round(revenue * (1 - rng.uniform(*gm_rng)), 1)
            opex = round(revenue * rng.uniform(*opex_rng), 1)
            op_inc = round(revenue - cogs - opex, 1)
            debt = round(max(0.0, debt * rng.uniform(0.85, 1.15)), 1)
            interest = round(debt * rng.uniform(0.03, 0.07), 1)
            net = round((op_inc - interest) * (0.79 if op_inc > interest else 1.0), 1)
            assets = round(revenue * rng.uniform(0.8, 2.0), 1)
            current = round(assets * rng.uniform(0.25, 0.5), 1)
            cur_liab = round(current / rng.uniform(0.8, 2.6), 1)
            liabilities = round(max(cur_liab + debt, assets * rng.uniform(0.35, 0.75)), 1)
            if liabilities >= assets:
                assets = round(liabilities * 1.25, 1)
            statements.append({
                "id": f"{ticker}-{period}", "ticker": ticker, "period": period, "revenue": revenue, "cost_of_revenue": cogs,
                "operating_expenses": opex, "operating_income": op_inc, "interest_expense": interest, "net_income": net,
                "total_assets": assets, "current_assets": current, "inventory": round(current * inv_share, 1),
                "cash": round(current * rng.uniform(0.15, 0.45), 1), "current_liabilities": cur_liab,
                "total_liabilities": liabilities, "total_debt": debt, "equity": round(assets - liabilities, 1),
                "operating_cash_flow": round(net * rng.uniform(1.0, 1.4) + revenue * 0.03, 1),
                "capex": round(revenue * capex_share * rng.uniform(0.7, 1.3), 1),
            })
        eps = statements[-1]["net_income"] / shares
        px = round(max(4.0, eps * rng.uniform(10, 30)), 2)
        for d in PRICE_DATES:
            px = round(max(1.0, px * (1 + rng.gauss(0.01, 0.06))), 2)
            prices.append({"id": f"{ticker}-{d}", "ticker": ticker, "date": d, "close": px})
    tickers = [c["ticker"] for c in companies]
    portfolios, holdings = [], []
    for j, (pid, pname) in enumerate((("PF1", "Core Growth"), ("PF2", "Income and Value"))):
        portfolios.append({"id": pid, "name": pname, "cash": float(rng.randint(5, 60) * 1000), "benchmark": "broad market index"})
        for t in sorted(rng.sample(tickers, 4 if j == 0 else 3)):
            first = next(p["close"] for p in prices if p["ticker"] == t)
            holdings.append({"id": f"{pid}-{t}", "portfolio_id": pid, "ticker": t, "shares": rng.randint(2, 40) * 10,
                             "cost_basis": round(first * rng.uniform(0.8, 1.05), 2)})
    watch = [{"ticker": t, "note": "valuation looks stretched; revisit after results", "target_price": None, "added": "2026-02-20 10:00:00"}
             for t in rng.sample(tickers, 2)]
    trades = [{"id": "TR001", "portfolio_id": holdings[0]["portfolio_id"], "ticker": holdings[0]["ticker"], "side": "buy",
               "shares": holdings[0]["shares"], "price": holdings[0]["cost_basis"], "date": PRICE_DATES[0]}]
    return {"fin_companies": companies, "fin_statements": statements, "fin_prices": prices, "fin_portfolios": portfolios,
            "fin_holdings": holdings, "fin_trades": trades, "fin_watchlist": watch}
