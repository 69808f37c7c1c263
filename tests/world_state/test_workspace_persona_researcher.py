"""Researcher persona: citation formats, the citation graph, run comparisons and exports, on a
hand-written library."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from servicegym.world_state.core import History
from servicegym.world_state.tools import Toolkit
from servicegym.world_state.workspace import WorkspaceWorld
from servicegym.world_state.workspace.personas import researcher as res

P1 = res.Paper(id="PAP001", title="Sparse Attention for Passage Ranking", authors=["Lena Maria Okafor", "Kofi Tanaka"],
               year=2021, venue="Conference on Learning Systems", keywords=["sparse attention", "passage ranking"],
               pages="12-20")
P2 = res.Paper(id="PAP002", title="The Limits of Ranking", authors=["Zoe Walsh"], year=2019, venue="Journal of Ranking",
               venue_type="journal", keywords=["passage ranking"])
P3 = res.Paper(id="PAP003", title="A Survey of Retrieval", authors=[f"Author{i} Name{i}" for i in range(7)], year=2023,
               venue="Open Archive", venue_type="preprint", citations=["PAP001", "PAP002"], keywords=["passage ranking"])
DS = res.Dataset(id="DS01", name="RankBench", domain="retrieval", rows=1000, license="MIT")
R1 = res.Run(id="RUN001", name="base", project="rank", dataset_id="DS01", config={"lr": 0.001, "batch_size": 32},
             metrics={"accuracy": 0.80, "val_loss": 0.50}, started="2026-02-01 09:00:00")
R2 = res.Run(id="RUN002", name="big", project="rank", dataset_id="DS01", config={"lr": 0.001, "batch_size": 64},
             metrics={"accuracy": 0.84, "val_loss": 0.55}, started="2026-02-02 09:00:00")
R3 = res.Run(id="RUN003", name="crash", project="rank", dataset_id="DS01", status="failed", started="2026-02-03 09:00:00")


def make_world() -> WorkspaceWorld:
    return WorkspaceWorld(
        datetime(2026, 3, 2, 9),
        tables={"res_papers": {p.id: p for p in (P1, P2, P3)}, "res_datasets": {DS.id: DS},
                "res_runs": {r.id: r for r in (R1, R2, R3)},
                "res_reading_list": {"PAP002": res.ReadingItem(paper_id="PAP002", added="2026-03-01 10:00:00")}},
        extra={"persona": "researcher", "owner": "Dr. Lena Okafor", "owner_email": "lena@example.org"},
    )


@pytest.fixture
def env():
    return make_world(), History(), Toolkit(res.TOOLS)


def call(env, tool_name, **args):
    w, h, kit = env
    r = kit.call(w, h, tool_name, args)
    return r.outcome, (json.loads(r.content) if r.ok else r.content)


def test_apa_ieee_and_bibtex_formats():
    assert res.format_reference(P1, "apa") == ("Okafor, L. M., & Tanaka, K. (2021). Sparse Attention for Passage Ranking. "
                                               "Conference on Learning Systems, 12-20.")
    assert res.format_reference(P1, "ieee") == ('L. M. Okafor and K. Tanaka, "Sparse Attention for Passage Ranking," '
                                                "in Conference on Learning Systems, 2021, pp. 12-20.")
    assert res.format_reference(P2, "ieee") == 'Z. Walsh, "The Limits of Ranking," Journal of Ranking, 2019.'
    assert res.format_reference(P3, "ieee").startswith("A. Name0 et al.,")
    bib = res.format_reference(P1, "bibtex")
    assert bib.startswith("@inproceedings{okafor2021sparse,\n")
    assert "  author = {Okafor, Lena Maria and Tanaka, Kofi}" in bib and "  pages = {12--20}" in bib
    assert res.format_reference(P2, "bibtex").startswith("@article{walsh2019limits,")  # "The" skipped
    assert "howpublished = {Open Archive}" in res.format_reference(P3, "bibtex")


def test_citation_graph(env):
    assert [p["id"] for p in call(env, "list_citations", paper_id="PAP003")[1]] == ["PAP002", "PAP001"]
    assert [p["id"] for p in call(env, "cited_by", paper_id="PAP001")[1]] == ["PAP003"]
    assert call(env, "get_paper", paper_id="PAP002")[1]["cited_by_count"] == 1
    top = call(env, "most_cited_papers", limit=2)[1]
    assert [(p["id"], p["cited_by_count"]) for p in top] == [("PAP002", 1), ("PAP001", 1)]  # tie: older first
    rel = call(env, "related_papers", paper_id="PAP001")[1]
    assert rel[0] == {**rel[0], "id": "PAP003", "relatedness": 3}  # 1 keyword + 2 citation link


def test_search_ranks_title_hits_first(env):
    hits = call(env, "search_papers", query="ranking")[1]
    # title hit 3 + text hits 2 each for PAP001 and PAP002 (tie: newer first); PAP003 only by keyword
    assert [(h["id"], h["score"]) for h in hits] == [("PAP001", 5), ("PAP002", 5), ("PAP003", 1)]
    assert call(env, "search_papers", query="ranking", year_from=2020, year_to=2022)[1][0]["id"] == "PAP001"
    assert call(env, "search_papers", query="zzz")[1] == []


def test_export_bibliography_writes_the_file(env):
    out, r = call(env, "export_bibliography", path="drafts/refs.md", paper_ids=["PAP001", "PAP002", "PAP001"], style="ieee")
    assert out == "executed" and r["entries"] == 2
    text = env[0].table("files").get("drafts/refs.md").content
    assert text.startswith("[1] L. M. Okafor and K. Tanaka,") and "\n[2] Z. Walsh," in text
    call(env, "export_bibliography", path="refs_apa.txt", paper_ids=["PAP001", "PAP002"], style="apa")
    apa = env[0].table("files").get("refs_apa.txt").content
    assert apa.index("Okafor") < apa.index("Walsh")  # alphabetical
    out, msg = call(env, "export_bibliography", path="drafts/refs.md", paper_ids=["PAP001"])
    assert out == "rejected" and "overwrite" in msg
    out, msg = call(env, "export_bibliography", path="../x.md", paper_ids=["PAP001"])
    assert out == "rejected" and "leaves the workspace" in msg
    assert call(env, "export_bibliography", path="a.md", paper_ids=["PAP999"])[0] == "rejected"


def test_bibtex_keys_are_made_unique():
    twin = P1.model_copy(update={"id": "PAP009", "title": "Sparse Attention Revisited"})
    text = res.bibliography_text([P1, twin], "bibtex")
    assert "{okafor2021sparse," in text and "{okafor2021sparsea," in text


def test_compare_runs_best_run_and_summary(env):
    cmp = call(env, "compare_runs", run_a="RUN001", run_b="RUN002")[1]
    assert cmp["metrics"]["accuracy"] == {"a": 0.8, "b": 0.84, "delta": 0.04, "relative_pct": 5.0, "better": "RUN002"}
    assert cmp["metrics"]["val_loss"]["better"] == "RUN001"  # lower loss is better
    assert cmp["config_differences"] == {"batch_size": {"a": 32, "b": 64}}
    assert call(env, "best_run", metric="accuracy")[1]["id"] == "RUN002"
    assert call(env, "best_run", metric="val_loss", direction="min")[1]["id"] == "RUN001"
    s = call(env, "summarize_metrics", metric="accuracy")[1]
    assert s["count"] == 2 and s["mean"] == 0.82 and s["std"] == 0.02 and s["max_run"] == "RUN002"  # failed run excluded
    assert call(env, "best_run", metric="bleu")[0] == "rejected"


def test_register_run_and_export_table(env):
    out, r = call(env, "register_run", name="tuned", project="rank", dataset_id="DS01", config={"lr": 0.0003},
                  metrics={"accuracy": 0.9})
    assert out == "executed" and r["id"] == "RUN004"
    assert call(env, "register_run", name="x", project="rank", dataset_id="DS09", config={}, metrics={})[0] == "rejected"
    call(env, "export_experiment_table", path="t.csv", run_ids=["RUN001", "RUN004"], metrics=["accuracy", "val_loss"], fmt="csv")
    assert env[0].table("files").get("t.csv").content == (
        "run,name,dataset,accuracy,val_loss\nRUN001,base,DS01,0.8,0.5\nRUN004,tuned,DS01,0.9,\n")


def test_reading_list_transitions(env):
    w = env[0]
    out, msg = call(env, "mark_paper_read", paper_id="PAP001", summary="useful ranking baseline")
    assert out == "rejected" and "add_to_reading_list" in msg
    assert call(env, "add_to_reading_list", paper_id="PAP001", priority="high")[0] == "executed"
    assert [r["paper_id"] for r in call(env, "list_reading_list")[1]] == ["PAP001", "PAP002"]
    assert call(env, "mark_paper_read", paper_id="PAP001", summary="a solid ranking baseline")[0] == "executed"
    assert w.table("res_reading_list").get("PAP001").status == "read"
    assert call(env, "mark_paper_read", paper_id="PAP002", summary="two")[0] == "rejected"
    assert call(env, "add_to_reading_list", paper_id="PAP001")[0] == "rejected"  # already read


def test_add_and_tag_paper(env):
    out, r = call(env, "add_paper", title="New  Work", authors=["Ann Lee"], year=2025, venue="V", citations=["PAP001"])
    assert out == "executed" and r["id"] == "PAP004" and r["title"] == "New Work"
    assert call(env, "add_paper", title="new work", authors=["X Y"], year=2025, venue="V")[0] == "rejected"
    assert call(env, "add_paper", title="Other", authors=["X Y"], year=2025, venue="V", citations=["PAP404"])[0] == "rejected"
    assert call(env, "tag_paper", paper_id="PAP004", tags=["To-Cite", "to-cite", "survey"])[1]["tags"] == ["to-cite", "survey"]
    assert call(env, "search_papers", tag="survey")[1][0]["id"] == "PAP004"
    assert call(env, "untag_paper", paper_id="PAP004", tag="nope")[0] == "rejected"
    assert call(env, "untag_paper", paper_id="PAP004", tag="survey")[1]["tags"] == ["to-cite"]
