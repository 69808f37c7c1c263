"""Analyst persona: ratios, growth, valuation, portfolio value and weights, rebalancing and its
execution, exports, on two hand-written companies with round numbers."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace.personas import analyst as fin

BASE = dict(revenue=1000, cost_of_revenue=600, operating_expenses=200, operating_income=200, interest_expense=20,
            net_income=144, total_assets=2000, current_assets=500, inventory=100, cash=150, current_liabilities=250,
            total_liabilities=1200, total_debt=600, equity=800, operating_cash_flow=250, capex=50)


def _st(ticker: str, period: str, **over) -> fin.Statement:
    return fin.Statement(id=f"{ticker}-{period}", ticker=ticker, period=period, **{**BASE, **over})


STATEMENTS = [
    _st("ACME", "FY2023"),
    _st("ACME", "FY2024", revenue=1100),
    _st("ACME", "FY2025", revenue=1210, cost_of_revenue=726, operating_expenses=242, operating_income=242, net_income=180,
        total_assets=2200, current_assets=550, inventory=110, cash=200, equity=1000, operating_cash_flow=300, capex=60),
    _st("BETA", "FY2025", revenue=500, cost_of_revenue=200, operating_expenses=100, operating_income=200, interest_expense=0,
        net_income=158, total_assets=1000, current_assets=300, inventory=50, cash=100, current_liabilities=300,
        total_liabilities=400, total_debt=0, equity=600, operating_cash_flow=170, capex=20),
]
PRICES = [("ACME", "2026-01-30", 20.0), ("ACME", "2026-02-27", 25.0), ("BETA", "2026-01-30", 50.0), ("BETA", "2026-02-27", 40.0)]


def make_world() -> WorkspaceWorld:
    companies = [fin.Company(ticker="ACME", name="Acme Systems", sector="technology", shares_outstanding=100),
                 fin.Company(ticker="BETA", name="Beta Power", sector="energy", shares_outstanding=50)]
    return WorkspaceWorld(
        datetime(2026, 3, 2, 9),
        tables={"fin_companies": {c.ticker: c for c in companies},
                "fin_statements": {s.id: s for s in STATEMENTS},
                "fin_prices": {f"{t}-{d}": fin.Price(id=f"{t}-{d}", ticker=t, date=d, close=c) for t, d, c in PRICES},
                "fin_portfolios": {"PF1": fin.Portfolio(id="PF1", name="Core", cash=1000)},
                "fin_holdings": {"PF1-ACME": fin.Holding(id="PF1-ACME", portfolio_id="PF1", ticker="ACME", shares=100, cost_basis=18),
                                 "PF1-BETA": fin.Holding(id="PF1-BETA", portfolio_id="PF1", ticker="BETA", shares=50, cost_basis=45)}},
        extra={"persona": "analyst", "owner": "Mateo Lindqvist", "owner_email": "mateo@example.org"},
    )


@pytest.fixture
def env():
    return make_world(), History(), Toolkit(fin.TOOLS)


def call(env, tool_name, **args):
    w, h, kit = env
    r = kit.call(w, h, tool_name, args)
    return r.outcome, (json.loads(r.content) if r.ok else r.content)


def test_compute_ratios_hand_values(env):
    r = call(env, "compute_ratios", ticker="acme", period="FY2023")[1]["ratios"]
    assert r == {"gross_margin": 0.4, "operating_margin": 0.2, "net_margin": 0.144, "current_ratio": 2.0, "quick_ratio": 1.6,
                 "debt_to_equity": 0.75, "roe": 0.18, "roa": 0.072, "asset_turnover": 0.5, "interest_coverage": 10.0,
                 "equity_multiplier": 2.5, "eps": 1.44, "free_cash_flow": 200}
    beta = call(env, "compute_ratios", ticker="BETA", period="FY2025")[1]["ratios"]
    assert beta["interest_coverage"] is None and beta["debt_to_equity"] == 0.0 and beta["roe"] == 0.2633
    out, msg = call(env, "compute_ratios", ticker="ACME", period="FY2019")
    assert out == "rejected" and "FY2023, FY2024, FY2025" in msg
    assert call(env, "compute_ratios", ticker="ZZZ", period="FY2025")[0] == "rejected"


def test_dupont_growth_and_cagr(env):
    d = call(env, "dupont_analysis", ticker="ACME", period="FY2023")[1]
    assert (d["net_margin"], d["asset_turnover"], d["equity_multiplier"], d["roe"]) == (0.144, 0.5, 2.5, 0.18)
    g = call(env, "compare_periods", ticker="ACME", period_from="FY2023", period_to="FY2025",
             metrics=["revenue", "net_income", "current_ratio"])[1]["metrics"]
    assert g["revenue"] == {"from": 1000, "to": 1210, "growth_pct": 21.0}
    assert g["net_income"]["growth_pct"] == 25.0 and g["current_ratio"] == {"from": 2.0, "to": 2.2, "growth_pct": 10.0}
    assert call(env, "cagr", ticker="ACME", metric="revenue", period_from="FY2023", period_to="FY2025")[1]["cagr_pct"] == 10.0
    assert call(env, "cagr", ticker="ACME", metric="revenue", period_from="FY2025", period_to="FY2023")[0] == "rejected"
    assert call(env, "compare_periods", ticker="ACME", period_from="FY2023", period_to="FY2025", metrics=["vibes"])[0] == "rejected"


def test_compare_and_screen(env):
    ranked = call(env, "compare_companies", tickers=["ACME", "BETA"], period="FY2025", metric="roe")[1]
    assert [(r["rank"], r["ticker"]) for r in ranked] == [(1, "BETA"), (2, "ACME")]
    ic = call(env, "compare_companies", tickers=["BETA", "ACME"], period="FY2025", metric="interest_coverage")[1]
    assert [r["ticker"] for r in ic] == ["ACME", "BETA"]  # null last
    hits = call(env, "screen_companies", period="FY2025", min_values={"current_ratio": 2.0}, max_values={"debt_to_equity": 0.7})[1]
    assert [h["ticker"] for h in hits] == ["ACME"] and hits[0]["current_ratio"] == 2.2
    assert call(env, "screen_companies", period="FY2025", min_values={"interest_coverage": 0})[1][0]["ticker"] == "ACME"
    assert call(env, "screen_companies", period="FY2025", min_values={"nonsense": 1})[0] == "rejected"


def test_prices_returns_and_multiples(env):
    assert call(env, "get_price", ticker="ACME", date="2026-02-15")[1] == {"ticker": "ACME", "date": "2026-01-30", "close": 20.0}
    assert call(env, "get_price", ticker="ACME", date="2025-01-01")[0] == "rejected"
    assert call(env, "price_return", ticker="ACME", start="2026-01-30", end="2026-02-27")[1]["return_pct"] == 25.0
    assert call(env, "price_return", ticker="BETA", start="2026-01-30", end="2026-03-01")[1]["return_pct"] == -20.0
    v = call(env, "valuation_multiples", ticker="ACME", period="FY2025", date="2026-02-27")[1]
    assert (v["market_cap"], v["pe"], v["pb"], v["ps"], v["enterprise_value"], v["ev_ebit"]) == (2500, 13.89, 2.5, 2.07, 2900, 11.98)


def test_portfolio_value_weights_and_pnl(env):
    v = call(env, "portfolio_value", portfolio_id="PF1", date="2026-02-27")[1]
    assert (v["invested_value"], v["cash"], v["total_value"]) == (4500, 1000, 5500)
    w = call(env, "position_weights", portfolio_id="PF1", date="2026-02-27")[1]["weights"]
    assert w == {"ACME": 0.4545, "BETA": 0.3636, "CASH": 0.1818}
    p = call(env, "unrealized_pnl", portfolio_id="PF1", date="2026-02-27")[1]
    assert [(x["ticker"], x["pnl"], x["pnl_pct"]) for x in p["positions"]] == [("ACME", 700, 38.89), ("BETA", -250, -11.11)]
    assert (p["total_pnl"], p["total_pnl_pct"]) == (450, 11.11)


def test_rebalance_plan_whole_shares(env):
    plan = call(env, "rebalance_plan", portfolio_id="PF1", target_weights={"ACME": 0.5, "BETA": 0.5}, date="2026-02-27")[1]
    assert [(t["ticker"], t["side"], t["shares"]) for t in plan["trades"]] == [("ACME", "buy", 10), ("BETA", "buy", 18)]
    assert plan["cash_after"] == 30
    plan = call(env, "rebalance_plan", portfolio_id="PF1", target_weights={"ACME": 0.8}, date="2026-02-27")[1]
    assert [(t["ticker"], t["side"], t["shares"]) for t in plan["trades"]] == [("BETA", "sell", 50), ("ACME", "buy", 76)]
    assert plan["cash_after"] == 1100 and plan["target_cash_weight"] == 0.2
    assert call(env, "rebalance_plan", portfolio_id="PF1", target_weights={"ACME": 0.7, "BETA": 0.4}, date="2026-02-27")[0] == "rejected"


def test_execute_rebalance_needs_a_plan_and_updates_holdings(env):
    w = env[0]
    args = {"portfolio_id": "PF1", "target_weights": {"ACME": 0.8}, "date": "2026-02-27"}
    out, msg = call(env, "execute_rebalance", **args)
    assert out == "rejected" and "rebalance_plan" in msg
    call(env, "rebalance_plan", **args)
    r = call(env, "execute_rebalance", **args)[1]
    assert len(r["trade_ids"]) == 2 and r["cash_after"] == 1100
    assert w.table("fin_holdings").get("PF1-ACME").shares == 176
    assert w.table("fin_holdings").get("PF1-ACME").cost_basis == 21.0227  # (100 x 18 + 76 x 25) / 176
    assert w.table("fin_holdings").get("PF1-BETA").shares == 0
    assert [t["side"] for t in call(env, "list_trades", portfolio_id="PF1")[1]] == ["sell", "buy"]
    assert call(env, "get_holdings", portfolio_id="PF1")[1]["holdings"] == [{"ticker": "ACME", "shares": 176, "cost_basis": 21.0227}]


def test_record_trade_refusals_leave_state(env):
    w = env[0]
    before = w.state_dict()
    out, msg = call(env, "record_trade", portfolio_id="PF1", ticker="BETA", side="buy", shares=100, date="2026-02-27")
    assert out == "rejected" and "4000.00" in msg and w.state_dict() == before
    assert call(env, "record_trade", portfolio_id="PF1", ticker="ACME", side="sell", shares=101, date="2026-02-27")[0] == "rejected"
    t = call(env, "record_trade", portfolio_id="PF1", ticker="ACME", side="sell", shares=40, date="2026-02-27")[1]
    assert t["price"] == 25.0 and w.table("fin_portfolios").get("PF1").cash == 2000


def test_exports(env):
    w = env[0]
    call(env, "export_ratios_table", path="out/ratios.csv", tickers=["ACME", "BETA"], period="FY2025",
         ratios=["current_ratio", "interest_coverage"], fmt="csv")
    assert w.table("files").get("out/ratios.csv").content == "ticker,current_ratio,interest_coverage\nACME,2.2,12.1\nBETA,1.0,\n"
    call(env, "export_holdings_table", path="out/pf1.md", portfolio_id="PF1", date="2026-02-27")
    md = w.table("files").get("out/pf1.md").content.splitlines()
    assert md[0] == "| ticker | shares | price | value | weight |"
    assert md[2] == "| ACME | 100 | 25.0 | 2500.0 | 0.4545 |" and md[-1] == "| CASH |  |  | 1000.0 | 0.1818 |"
    assert call(env, "export_ratios_table", path="out/ratios.csv", tickers=["ACME"], period="FY2025")[0] == "rejected"
    assert call(env, "export_ratios_table", path="x.md", tickers=["ACME"], period="FY2025", ratios=["pe"])[0] == "rejected"


def test_watchlist(env):
    call(env, "add_to_watchlist", ticker="beta", note="cheap after the drop", target_price=45)
    rows = call(env, "list_watchlist", date="2026-02-27")[1]
    assert rows[0]["ticker"] == "BETA" and rows[0]["close"] == 40.0 and rows[0]["at_or_below_target"] is True
    call(env, "add_to_watchlist", ticker="BETA", target_price=30)
    assert env[0].table("fin_watchlist").get("BETA").note == "cheap after the drop"
    assert call(env, "list_watchlist", date="2026-02-27")[1][0]["at_or_below_target"] is False
