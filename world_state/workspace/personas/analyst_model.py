"""Persona analyst: its records and computations (the tools that use them are in ``analyst``).

- the entity rows and ``SCHEMA``: companies, financial statements, prices, portfolios, holdings,
  trades and the watchlist, with the ratio and line-item names;
- computations: look-ups of a company, statement or portfolio, the ratios, growth, the price on a
  date, a portfolio's valuation, a rebalance plan and applying a trade;
- the seeded data (``seed_tables``).

``analyst``'s docstring states the formulas; it re-exports ``SCHEMA``, ``seed_tables`` and the names
other code reads from here.
"""

from __future__ import annotations

import math
import random
from typing import Any, ClassVar, Literal

from servicegym.world_state.core import Entity
from servicegym.world_state.tools import ToolError
from servicegym.world_state.workspace.personas.formats import new_id, parse_day, ratio
from servicegym.world_state.workspace.world import WorkspaceWorld

RATIOS = ("gross_margin", "operating_margin", "net_margin", "current_ratio", "quick_ratio", "debt_to_equity", "roe",
          "roa", "asset_turnover", "interest_coverage", "equity_multiplier", "eps", "free_cash_flow")
LINE_ITEMS = ("revenue", "cost_of_revenue", "operating_expenses", "operating_income", "interest_expense", "net_income",
              "total_assets", "current_assets", "inventory", "cash", "current_liabilities", "total_liabilities",
              "total_debt", "equity", "operating_cash_flow", "capex")


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
