"""Persona: researcher. A library of papers with a citation graph, a reading list, datasets and
experiment runs (config, metrics, training log), with deterministic citation formatters (APA,
IEEE, BibTeX) and metric comparisons."""

from __future__ import annotations

import math
import random
import re
import statistics
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from servicegym.world_state.core import Entity, History, World
from servicegym.world_state.tools import Query, ToolError, ToolSpec, exists, rule, tool
from servicegym.world_state.workspace.personas.formats import (
    SEED_START_TIME,
    clamp_limit,
    day,
    new_id,
    person_names,
    render_table,
)
from servicegym.world_state.workspace.world import WorkspaceWorld, put_file

CitationStyle = Literal["apa", "ieee", "bibtex"]
ConfigValue = float | int | str


class Paper(Entity):
    id: str
    title: str
    authors: list[str]  # "First Last"
    year: int
    venue: str
    venue_type: Literal["conference", "journal", "preprint"] = "conference"
    abstract: str = ""
    keywords: list[str] = []
    citations: list[str] = []  # ids of the library papers this one cites
    tags: list[str] = []
    pages: str = ""


class Dataset(Entity):
    id: str
    name: str
    domain: str
    rows: int
    license: str
    splits: dict[str, int] = {}
    description: str = ""


class Run(Entity):
    id: str
    name: str
    project: str
    dataset_id: str
    config: dict[str, ConfigValue] = {}
    metrics: dict[str, float] = {}
    status: Literal["running", "finished", "failed"] = "finished"
    started: str = ""
    log: list[str] = []
    notes: str = ""


class ReadingItem(Entity):
    key_field: ClassVar[str] = "paper_id"
    paper_id: str
    priority: Literal["low", "normal", "high"] = "normal"
    status: Literal["to_read", "read"] = "to_read"
    added: str = ""
    summary: str = ""


SCHEMA: dict[str, type[Entity]] = {
    "res_papers": Paper,
    "res_datasets": Dataset,
    "res_runs": Run,
    "res_reading_list": ReadingItem,
}

PAPER_SOURCES = ("search_papers", "papers_by_author", "add_paper", "list_citations", "cited_by")
RUN_SOURCES = ("list_experiments", "register_run", "best_run")
LOWER_IS_BETTER = ("loss", "error", "perplexity", "latency", "wer", "rmse", "mae")


# ---- formatting -----------------------------------------------------------------------------

def _split_name(author: str) -> tuple[list[str], str]:
    parts = author.split()
    return (parts[:-1], parts[-1]) if len(parts) > 1 else ([], author)


def _initials(given: list[str]) -> str:
    return " ".join(f"{g[0]}." for g in given if g)


def _apa_author(author: str) -> str:
    given, last = _split_name(author)
    return f"{last}, {_initials(given)}" if given else last


def _ieee_author(author: str) -> str:
    given, last = _split_name(author)
    return f"{_initials(given)} {last}" if given else last


def bibtex_key(paper: Paper) -> str:
    _, last = _split_name(paper.authors[0]) if paper.authors else ([], "anon")
    word = next((w for w in re.findall(r"[A-Za-z]+", paper.title) if w.lower() not in {"a", "an", "the", "on", "of"}), "x")
    return re.sub(r"[^a-z0-9]", "", f"{last}{paper.year}{word}".lower())


def format_reference(paper: Paper, style: CitationStyle, key: str | None = None) -> str:
    """One reference in ``style``: APA 7 (authors "Last, F. M.", ``&`` before the last, up to 20),
    IEEE (``F. M. Last``, "and" before the last; more than six authors become "et al."), or a
    BibTeX entry (``@inproceedings`` / ``@article`` / ``@misc`` by venue type)."""
    if style == "apa":
        names = [_apa_author(a) for a in paper.authors[:20]]
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]
        pages = f", {paper.pages}" if paper.pages else ""
        return f"{who} ({paper.year}). {paper.title}. {paper.venue}{pages}."
    if style == "ieee":
        names = [_ieee_author(a) for a in paper.authors]
        if len(names) > 6:
            who = f"{names[0]} et al."
        elif len(names) > 2:
            who = ", ".join(names[:-1]) + ", and " + names[-1]
        else:
            who = " and ".join(names)
        where = "in " if paper.venue_type == "conference" else ""
        pages = f", pp. {paper.pages}" if paper.pages else ""
        return f'{who}, "{paper.title}," {where}{paper.venue}, {paper.year}{pages}.'
    if style == "bibtex":
        entry, venue_field = {"conference": ("inproceedings", "booktitle"), "journal": ("article", "journal"),
                              "preprint": ("misc", "howpublished")}[paper.venue_type]
        fields = [("author", " and ".join(f"{_split_name(a)[1]}, {' '.join(_split_name(a)[0])}".rstrip(", ")
                                          for a in paper.authors)),
                  ("title", "{" + paper.title + "}"), (venue_field, paper.venue), ("year", str(paper.year))]
        if paper.pages:
            fields.append(("pages", paper.pages.replace("-", "--")))
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        return f"@{entry}{{{key or bibtex_key(paper)},\n{body}\n}}"
    raise ToolError(f"unknown style {style!r}; use apa, ieee or bibtex")


# ---- helpers --------------------------------------------------------------------------------

def _paper(world: WorkspaceWorld, paper_id: str) -> Paper:
    p = world.table("res_papers").get(paper_id)
    if p is None:
        raise ToolError(f"no paper {paper_id!r}; find ids with search_papers")
    return p


def _run(world: WorkspaceWorld, run_id: str) -> Run:
    r = world.table("res_runs").get(run_id)
    if r is None:
        raise ToolError(f"no run {run_id!r}; find ids with list_experiments")
    return r


def _card(p: Paper) -> dict[str, Any]:
    return {"id": p.id, "title": p.title, "authors": p.authors, "year": p.year, "venue": p.venue, "tags": p.tags}


def _norm_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for t in tags:
        t = t.strip().lower()
        if not t:
            raise ToolError("tags must be non-empty")
        if t not in out:
            out.append(t)
    return out


def _papers_exist(arg: str):
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        missing = [p for p in args.get(arg) or [] if p not in world.table("res_papers")]
        return f"no paper {missing[0]!r}; find ids with search_papers" if missing else None

    return rule("every paper id must exist", check, PAPER_SOURCES)


def _runs_exist(arg: str):
    def check(world: World, history: History, args: dict[str, Any]) -> str | None:
        missing = [r for r in args.get(arg) or [] if r not in world.table("res_runs")]
        return f"no run {missing[0]!r}; find ids with list_experiments" if missing else None

    return rule("every run id must exist", check, RUN_SOURCES)


def _on_reading_list(world: World, history: History, args: dict[str, Any]) -> str | None:
    if args.get("paper_id") in world.table("res_reading_list"):
        return None
    return f"paper {args.get('paper_id')!r} is not on the reading list; add it with add_to_reading_list"


# ---- papers ---------------------------------------------------------------------------------

@tool("read")
def search_papers(world: WorkspaceWorld, query: Query = "", year_from: int | None = None, year_to: int | None = None,
                  venue: str | None = None, tag: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
    """Search the paper library by words in title, abstract and keywords; best matches first (ties by year, newest first).

    Args:
        query: words to look for (empty lists every paper that passes the filters)
        year_from: earliest publication year
        year_to: latest publication year
        venue: exact venue name
        tag: a tag the paper must carry
        limit: most results (1-100)
    """
    words = [w for w in re.findall(r"\w+", query.lower())]
    hits = []
    for p in world.table("res_papers"):
        if (year_from is not None and p.year < year_from) or (year_to is not None and p.year > year_to):
            continue
        if (venue and p.venue.lower() != venue.lower()) or (tag and tag.lower() not in p.tags):
            continue
        title = p.title.lower()
        text = " ".join([title, p.abstract.lower(), " ".join(p.keywords)])
        score = sum(3 * title.count(w) + text.count(w) + (2 if w in p.keywords else 0) for w in words)
        if score or not words:
            hits.append((-score, -p.year, p.id, p))
    hits.sort(key=lambda h: h[:3])
    return [_card(p) | {"score": -s} for s, _, _, p in hits[: clamp_limit(limit)]]


@tool("read", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def get_paper(world: WorkspaceWorld, paper_id: str) -> dict[str, Any]:
    """One paper in full, with how often the library cites it.

    Args:
        paper_id: the paper id, e.g. PAP001
    """
    p = _paper(world, paper_id)
    cited = sum(1 for q in world.table("res_papers") if paper_id in q.citations)
    return p.model_dump(mode="json") | {"cited_by_count": cited}


@tool("read")
def papers_by_author(world: WorkspaceWorld, author: str) -> list[dict[str, Any]]:
    """Papers with an author whose name contains ``author`` (case-insensitive), newest first.

    Args:
        author: a name or part of one, e.g. "Tanaka"
    """
    a = author.strip().lower()
    if not a:
        raise ToolError("author must not be empty")
    rows = [p for p in world.table("res_papers") if any(a in x.lower() for x in p.authors)]
    return [_card(p) for p in sorted(rows, key=lambda p: (-p.year, p.id))]


@tool("read", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def list_citations(world: WorkspaceWorld, paper_id: str) -> list[dict[str, Any]]:
    """The library papers that ``paper_id`` cites (its references), oldest first.

    Args:
        paper_id: the citing paper
    """
    refs = [world.table("res_papers").get(c) for c in _paper(world, paper_id).citations]
    return [_card(p) for p in sorted((r for r in refs if r), key=lambda p: (p.year, p.id))]


@tool("read", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def cited_by(world: WorkspaceWorld, paper_id: str) -> list[dict[str, Any]]:
    """The library papers that cite ``paper_id``, newest first.

    Args:
        paper_id: the cited paper
    """
    rows = [p for p in world.table("res_papers") if paper_id in p.citations]
    return [_card(p) for p in sorted(rows, key=lambda p: (-p.year, p.id))]


@tool("read")
def most_cited_papers(world: WorkspaceWorld, limit: int = 5, year_from: int | None = None) -> list[dict[str, Any]]:
    """Library papers ranked by how many library papers cite them (ties: older first, then id).

    Args:
        limit: most results (1-100)
        year_from: only papers published in or after this year
    """
    counts: dict[str, int] = {}
    for p in world.table("res_papers"):
        for c in p.citations:
            counts[c] = counts.get(c, 0) + 1
    rows = [p for p in world.table("res_papers") if year_from is None or p.year >= year_from]
    rows.sort(key=lambda p: (-counts.get(p.id, 0), p.year, p.id))
    return [_card(p) | {"cited_by_count": counts.get(p.id, 0)} for p in rows[: clamp_limit(limit)]]


@tool("read", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def related_papers(world: WorkspaceWorld, paper_id: str, limit: int = 5) -> list[dict[str, Any]]:
    """Papers related to ``paper_id``: score = shared keywords + 2 x direct citation link + shared references.

    Args:
        paper_id: the paper to start from
        limit: most results (1-100)
    """
    base = _paper(world, paper_id)
    out = []
    for p in world.table("res_papers"):
        if p.id == base.id:
            continue
        link = 2 if (p.id in base.citations or base.id in p.citations) else 0
        score = len(set(p.keywords) & set(base.keywords)) + link + len(set(p.citations) & set(base.citations))
        if score:
            out.append((-score, p.id, p))
    out.sort(key=lambda x: x[:2])
    return [_card(p) | {"relatedness": -s} for s, _, p in out[: clamp_limit(limit)]]


@tool("write", pre=[_papers_exist("citations")])
def add_paper(world: WorkspaceWorld, title: str, authors: list[str], year: Annotated[int, Field(ge=1900, le=2100)],
              venue: str, venue_type: Literal["conference", "journal", "preprint"] = "conference", abstract: str = "",
              keywords: list[str] | None = None, citations: list[str] | None = None, pages: str = "") -> dict[str, Any]:
    """Add a paper to the library; its id is returned. A paper whose title and year match one already there is refused.

    Args:
        title: the title
        authors: author names, "First Last", in order
        year: publication year
        venue: conference, journal or preprint server
        venue_type: conference, journal or preprint
        abstract: the abstract
        keywords: lower-case keywords
        citations: ids of library papers it cites
        pages: page range, e.g. 101-110
    """
    title = " ".join(title.split())
    if not title or not authors or any(not a.strip() for a in authors) or not venue.strip():
        raise ToolError("title, venue and at least one non-empty author are required")
    for p in world.table("res_papers"):
        if p.title.lower() == title.lower() and p.year == year:
            raise ToolError(f"the library already holds this paper as {p.id}")
    table = world.table("res_papers")
    paper = Paper(id=new_id(table, world.ids, "PAP"), title=title, authors=[" ".join(a.split()) for a in authors],
                  year=year, venue=venue.strip(), venue_type=venue_type, abstract=abstract,
                  keywords=_norm_tags(keywords or []), citations=list(dict.fromkeys(citations or [])), pages=pages)
    table.insert(paper)
    return _card(paper)


@tool("write", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def tag_paper(world: WorkspaceWorld, paper_id: str, tags: list[str]) -> dict[str, Any]:
    """Add tags to a paper (lower-cased; tags it already has are kept once).

    Args:
        paper_id: the paper
        tags: tags to add, e.g. ["survey", "to-cite"]
    """
    p = _paper(world, paper_id)
    new = _norm_tags(tags)
    if not new:
        raise ToolError("give at least one tag")
    p = world.table("res_papers").update(paper_id, tags=list(dict.fromkeys(p.tags + new)))
    return _card(p)


@tool("write", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def untag_paper(world: WorkspaceWorld, paper_id: str, tag: str) -> dict[str, Any]:
    """Remove one tag from a paper.

    Args:
        paper_id: the paper
        tag: the tag to remove
    """
    p = _paper(world, paper_id)
    t = tag.strip().lower()
    if t not in p.tags:
        raise ToolError(f"paper {paper_id} has no tag {t!r}; its tags: {p.tags}")
    return _card(world.table("res_papers").update(paper_id, tags=[x for x in p.tags if x != t]))


@tool("read", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def format_citation(world: WorkspaceWorld, paper_id: str, style: CitationStyle = "apa") -> dict[str, str]:
    """Format one paper as a reference: APA 7, IEEE or a BibTeX entry.

    Args:
        paper_id: the paper
        style: apa, ieee or bibtex
    """
    p = _paper(world, paper_id)
    return {"paper_id": p.id, "style": style, "citation": format_reference(p, style)}


def bibliography_text(papers: list[Paper], style: CitationStyle) -> str:
    """APA: sorted by first author's last name, then year; IEEE: numbered [1].. in the given order;
    BibTeX: entries in the given order, clashing keys suffixed a, b, ..."""
    if style == "apa":
        papers = sorted(papers, key=lambda p: (_split_name(p.authors[0])[1].lower() if p.authors else "", p.year, p.title))
        return "\n\n".join(format_reference(p, "apa") for p in papers) + "\n"
    if style == "ieee":
        return "\n".join(f"[{i}] {format_reference(p, 'ieee')}" for i, p in enumerate(papers, 1)) + "\n"
    keys: dict[str, int] = {}
    entries = []
    for p in papers:
        k = bibtex_key(p)
        n = keys.get(k, 0)
        keys[k] = n + 1
        entries.append(format_reference(p, "bibtex", k if n == 0 else k + "abcdefghijklmnopqrstuvwxyz"[min(n, 25) - 1]))
    return "\n\n".join(entries) + "\n"


@tool("write", pre=[_papers_exist("paper_ids")])
def export_bibliography(world: WorkspaceWorld, path: str, paper_ids: list[str], style: CitationStyle = "apa",
                        overwrite: bool = False) -> dict[str, Any]:
    """Write a bibliography of the given papers to a workspace file (.md or .txt).

    Args:
        path: workspace path, e.g. drafts/references.md
        paper_ids: the papers, in citation order (duplicates are dropped)
        style: apa (alphabetical), ieee (numbered in the given order) or bibtex
        overwrite: replace an existing file
    """
    ids = list(dict.fromkeys(paper_ids))
    if not ids:
        raise ToolError("paper_ids must name at least one paper")
    text = bibliography_text([_paper(world, i) for i in ids], style)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "entries": len(ids), "style": style, "chars": len(text)}


# ---- reading list ---------------------------------------------------------------------------

@tool("write", pre=[exists("res_papers", "paper_id", "paper", PAPER_SOURCES)])
def add_to_reading_list(world: WorkspaceWorld, paper_id: str, priority: Literal["low", "normal", "high"] = "normal") -> dict[str, Any]:
    """Put a paper on the reading list (or change its priority if it is there and unread).

    Args:
        paper_id: the paper
        priority: low, normal or high
    """
    table = world.table("res_reading_list")
    old = table.get(paper_id)
    if old is not None and old.status == "read":
        raise ToolError(f"paper {paper_id} is already read")
    item = ReadingItem(paper_id=paper_id, priority=priority, added=old.added if old else world.clock.text())
    return table.put(item).model_dump(mode="json")


@tool("read")
def list_reading_list(world: WorkspaceWorld, status: Literal["to_read", "read"] | None = None) -> list[dict[str, Any]]:
    """The reading list: high priority first, then by when added.

    Args:
        status: to_read or read (default: both)
    """
    order = {"high": 0, "normal": 1, "low": 2}
    rows = [r for r in world.table("res_reading_list") if status is None or r.status == status]
    rows.sort(key=lambda r: (order[r.priority], r.added, r.paper_id))
    papers = world.table("res_papers")
    return [r.model_dump(mode="json") | {"title": papers.get(r.paper_id).title if papers.get(r.paper_id) else ""}
            for r in rows]


@tool("write", pre=[rule("the paper must be on the reading list", _on_reading_list, ["add_to_reading_list"])])
def mark_paper_read(world: WorkspaceWorld, paper_id: str, summary: str) -> dict[str, Any]:
    """Mark a reading-list paper as read, with a short summary of it.

    Args:
        paper_id: the paper
        summary: what you took from it (at least a few words)
    """
    if len(summary.split()) < 3:
        raise ToolError("summary must be at least three words")
    return world.table("res_reading_list").update(paper_id, status="read", summary=summary.strip()).model_dump(mode="json")


# ---- datasets and experiments ---------------------------------------------------------------

@tool("read")
def list_datasets(world: WorkspaceWorld, domain: str | None = None) -> list[dict[str, Any]]:
    """The datasets the group uses.

    Args:
        domain: only this domain, e.g. vision
    """
    return [d.model_dump(mode="json") for d in world.table("res_datasets") if domain is None or d.domain == domain]


@tool("read", pre=[exists("res_datasets", "dataset_id", "dataset", ["list_datasets"])])
def get_dataset(world: WorkspaceWorld, dataset_id: str) -> dict[str, Any]:
    """One dataset with the runs trained on it.

    Args:
        dataset_id: the dataset id, e.g. DS01
    """
    d = world.table("res_datasets").require(dataset_id)
    runs = [r.id for r in world.table("res_runs") if r.dataset_id == dataset_id]
    return d.model_dump(mode="json") | {"runs": runs}


def _run_card(r: Run) -> dict[str, Any]:
    return {"id": r.id, "name": r.name, "project": r.project, "dataset_id": r.dataset_id, "status": r.status,
            "started": r.started, "metrics": r.metrics}


@tool("read")
def list_experiments(world: WorkspaceWorld, project: str | None = None, dataset_id: str | None = None,
                     status: Literal["running", "finished", "failed"] | None = None) -> list[dict[str, Any]]:
    """Experiment runs with their final metrics, oldest first.

    Args:
        project: only this project
        dataset_id: only runs on this dataset
        status: running, finished or failed
    """
    rows = [r for r in world.table("res_runs") if (project is None or r.project == project)
            and (dataset_id is None or r.dataset_id == dataset_id) and (status is None or r.status == status)]
    return [_run_card(r) for r in sorted(rows, key=lambda r: (r.started, r.id))]


@tool("read", pre=[exists("res_runs", "run_id", "run", RUN_SOURCES)])
def get_experiment_log(world: WorkspaceWorld, run_id: str, tail: int = 0) -> dict[str, Any]:
    """A run's config, metrics, notes and training log.

    Args:
        run_id: the run id, e.g. RUN001
        tail: only the last this many log lines (0: all)
    """
    r = _run(world, run_id)
    log = r.log[-tail:] if tail > 0 else r.log
    return r.model_dump(mode="json") | {"log": log}


@tool("read", pre=[exists("res_runs", "run_a", "run", RUN_SOURCES), exists("res_runs", "run_b", "run", RUN_SOURCES)])
def compare_runs(world: WorkspaceWorld, run_a: str, run_b: str) -> dict[str, Any]:
    """Compare two runs: per shared metric the delta b - a (rounded to 4 places), the relative change in percent of a
    (2 places) and which run is better (lower is better for loss, error, perplexity, latency, wer, rmse, mae);
    plus the config keys whose values differ.

    Args:
        run_a: the baseline run
        run_b: the run compared with it
    """
    a, b = _run(world, run_a), _run(world, run_b)
    metrics = {}
    for m in sorted(set(a.metrics) & set(b.metrics)):
        va, vb = a.metrics[m], b.metrics[m]
        lower = any(t in m.lower() for t in LOWER_IS_BETTER)
        better = "tie" if va == vb else (run_b if (vb < va) == lower else run_a)
        metrics[m] = {"a": va, "b": vb, "delta": round(vb - va, 4),
                      "relative_pct": None if va == 0 else round((vb - va) / abs(va) * 100, 2), "better": better}
    keys = sorted(set(a.config) | set(b.config))
    config = {k: {"a": a.config.get(k), "b": b.config.get(k)} for k in keys if a.config.get(k) != b.config.get(k)}
    return {"run_a": run_a, "run_b": run_b, "metrics": metrics, "config_differences": config,
            "only_in_a": sorted(set(a.metrics) - set(b.metrics)), "only_in_b": sorted(set(b.metrics) - set(a.metrics))}


@tool("read")
def best_run(world: WorkspaceWorld, metric: str, direction: Literal["max", "min"] = "max", project: str | None = None,
             dataset_id: str | None = None) -> dict[str, Any]:
    """The finished run with the highest (max) or lowest (min) value of ``metric``; ties go to the earlier run.

    Args:
        metric: metric name, e.g. accuracy
        direction: max or min
        project: only this project
        dataset_id: only runs on this dataset
    """
    rows = [r for r in world.table("res_runs") if r.status == "finished" and metric in r.metrics
            and (project is None or r.project == project) and (dataset_id is None or r.dataset_id == dataset_id)]
    if not rows:
        raise ToolError(f"no finished run reports {metric!r} under these filters")
    sign = -1 if direction == "max" else 1
    best = min(rows, key=lambda r: (sign * r.metrics[metric], r.started, r.id))
    return _run_card(best) | {"metric": metric, "value": best.metrics[metric], "compared": len(rows)}


@tool("read")
def summarize_metrics(world: WorkspaceWorld, metric: str, project: str | None = None,
                      dataset_id: str | None = None) -> dict[str, Any]:
    """Statistics of one metric over finished runs: count, mean, median, population standard deviation, min, max
    (each rounded to 4 places) and the runs holding the min and max.

    Args:
        metric: metric name
        project: only this project
        dataset_id: only runs on this dataset
    """
    rows = [r for r in world.table("res_runs") if r.status == "finished" and metric in r.metrics
            and (project is None or r.project == project) and (dataset_id is None or r.dataset_id == dataset_id)]
    if not rows:
        raise ToolError(f"no finished run reports {metric!r} under these filters")
    vals = [r.metrics[metric] for r in rows]
    lo = min(rows, key=lambda r: (r.metrics[metric], r.id))
    hi = min(rows, key=lambda r: (-r.metrics[metric], r.id))
    return {"metric": metric, "count": len(vals), "mean": round(statistics.fmean(vals), 4),
            "median": round(statistics.median(vals), 4), "std": round(statistics.pstdev(vals), 4),
            "min": round(min(vals), 4), "max": round(max(vals), 4), "min_run": lo.id, "max_run": hi.id}


@tool("write", pre=[exists("res_datasets", "dataset_id", "dataset", ["list_datasets"])])
def register_run(world: WorkspaceWorld, name: str, project: str, dataset_id: str, config: dict[str, ConfigValue],
                 metrics: dict[str, float], status: Literal["running", "finished", "failed"] = "finished",
                 notes: str = "") -> dict[str, Any]:
    """Record an experiment run (config and final metrics); its id is returned.

    Args:
        name: a short run name
        project: the project it belongs to
        dataset_id: the dataset it used
        config: hyper-parameters, e.g. {"lr": 0.001, "batch_size": 64}
        metrics: final metrics, e.g. {"accuracy": 0.91}
        status: running, finished or failed
        notes: free text
    """
    if not name.strip() or not project.strip():
        raise ToolError("name and project must not be empty")
    if any(not math.isfinite(v) for v in metrics.values()):
        raise ToolError("metric values must be finite numbers")
    table = world.table("res_runs")
    run = Run(id=new_id(table, world.ids, "RUN"), name=name.strip(), project=project.strip(), dataset_id=dataset_id,
              config=config, metrics=metrics, status=status, started=world.clock.text(),
              log=[f"registered by hand at {world.clock.text()}"], notes=notes)
    table.insert(run)
    return _run_card(run)


@tool("write", pre=[exists("res_runs", "run_id", "run", RUN_SOURCES)])
def annotate_run(world: WorkspaceWorld, run_id: str, note: str) -> dict[str, Any]:
    """Append a note to a run's notes (one line per note).

    Args:
        run_id: the run
        note: the note
    """
    if not note.strip():
        raise ToolError("note must not be empty")
    r = _run(world, run_id)
    notes = f"{r.notes}\n{note.strip()}" if r.notes else note.strip()
    return world.table("res_runs").update(run_id, notes=notes).model_dump(mode="json")


@tool("write", pre=[_runs_exist("run_ids")])
def export_experiment_table(world: WorkspaceWorld, path: str, run_ids: list[str], metrics: list[str],
                            fmt: Literal["csv", "markdown"] = "markdown", overwrite: bool = False) -> dict[str, Any]:
    """Write a table of runs (columns: run, name, dataset, then the metrics; a missing metric is blank) to a file.

    Args:
        path: workspace path ending in .csv or .md
        run_ids: the runs, one row each in this order
        metrics: the metric columns
        fmt: csv or markdown
        overwrite: replace an existing file
    """
    if not run_ids or not metrics:
        raise ToolError("give at least one run and one metric")
    rows = []
    for rid in dict.fromkeys(run_ids):
        r = _run(world, rid)
        rows.append([r.id, r.name, r.dataset_id] + [r.metrics.get(m) for m in metrics])
    text = render_table(["run", "name", "dataset"] + list(metrics), rows, fmt)
    f = put_file(world, path, text, overwrite=overwrite)
    return {"path": f.path, "rows": len(rows), "chars": len(text)}


TOOLS: list[ToolSpec] = [
    search_papers, get_paper, papers_by_author, list_citations, cited_by, most_cited_papers, related_papers, add_paper,
    tag_paper, untag_paper, format_citation, export_bibliography, add_to_reading_list, list_reading_list,
    mark_paper_read, list_datasets, get_dataset, list_experiments, get_experiment_log, compare_runs, best_run,
    summarize_metrics, register_run, annotate_run, export_experiment_table,
]

PROFILE: dict[str, Any] = {
    "key": "researcher", "title": "research scientist", "owner": "Dr. Mira Okafor", "owner_email": "mira.okafor@northlake-lab.org",
    "organization": "Northlake Lab", "domain": "northlake-lab.org", "start": SEED_START_TIME,
}


# ---- seeded data ----------------------------------------------------------------------------

_TOPICS = {
    "retrieval": ["dense retrieval", "query expansion", "passage ranking", "index compression"],
    "vision": ["image segmentation", "object detection", "self-supervised pretraining", "data augmentation"],
    "speech": ["speech recognition", "speaker diarization", "noise robustness", "streaming decoding"],
    "graphs": ["graph neural networks", "link prediction", "node classification", "message passing"],
}
_TITLE_FORMS = ("{A} for {B}", "Revisiting {A} under {B}", "Scaling {A} with {B}", "On the Limits of {A} in {B}",
                "Efficient {A} via {B}", "A Study of {A} and {B}")
_VENUES = (("Conference on Learning Systems", "conference"), ("Journal of Applied Machine Intelligence", "journal"),
           ("Workshop on Efficient Models", "conference"), ("Open Research Archive", "preprint"),
           ("Transactions on Data and Signals", "journal"))
_METHODS = ("contrastive training", "low-rank adapters", "curriculum sampling", "sparse attention", "knowledge distillation",
            "mixture of experts", "label smoothing")


def _title_case(text: str) -> str:
    small = {"a", "an", "and", "for", "in", "of", "on", "the", "under", "via", "with"}
    words = text.split()
    return " ".join(w if (i and w in small) else w[:1].upper() + w[1:] for i, w in enumerate(words))


def seed_tables(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    authors = person_names(rng, 18)
    domains = rng.sample(sorted(_TOPICS), 3)
    papers: list[dict[str, Any]] = []
    for i in range(16):
        dom = domains[i % 3]
        topic = rng.choice(_TOPICS[dom])
        method = rng.choice(_METHODS)
        title = rng.choice(_TITLE_FORMS).format(A=_title_case(method), B=_title_case(topic))
        if any(p["title"] == title for p in papers):
            title = f"{title}: A Second Look"
        year = 2016 + i // 2 + rng.randint(0, 1)
        venue, vtype = rng.choice(_VENUES)
        earlier = [p["id"] for p in papers if p["year"] < year]
        cites = sorted(rng.sample(earlier, min(len(earlier), rng.randint(0, 4))))
        start = rng.randint(1, 300)
        papers.append({
            "id": f"PAP{i + 1:03d}", "title": title, "authors": rng.sample(authors, rng.randint(1, 7)), "year": year,
            "venue": venue, "venue_type": vtype,
            "abstract": (f"We study {method} for {topic}. On {rng.randint(2, 6)} benchmarks the approach improves the "
                         f"strongest baseline by {rng.randint(5, 40) / 10:.1f} points while using "
                         f"{rng.randint(20, 70)}% less compute."),
            "keywords": sorted({method, topic, dom}), "citations": cites, "tags": [],
            "pages": "" if vtype == "preprint" else f"{start}-{start + rng.randint(7, 14)}",
        })
    datasets = []
    for j, dom in enumerate(domains):
        n = rng.randint(20, 900) * 1000
        datasets.append({"id": f"DS{j + 1:02d}", "name": f"{dom.title()}Bench-{rng.randint(1, 9)}k", "domain": dom,
                         "rows": n, "license": rng.choice(["CC-BY-4.0", "internal", "MIT"]),
                         "splits": {"train": n * 8 // 10, "validation": n // 10, "test": n - n * 8 // 10 - n // 10},
                         "description": f"Labelled {dom} examples collected by the lab."})
    runs = []
    for k in range(12):
        ds = datasets[k % 3]
        lr = rng.choice([0.0001, 0.0003, 0.001, 0.003])
        bs = rng.choice([16, 32, 64, 128])
        epochs = rng.randint(3, 6)
        acc = round(rng.uniform(0.62, 0.93), 4)
        loss = round(rng.uniform(0.2, 1.1), 4)
        status = "failed" if k in (4, 9) else "finished"
        log, cur = [], loss * 2.2
        for e in range(1, epochs + 1):
            cur = round(cur - (cur - loss) * 0.55, 4)
            log.append(f"epoch {e}/{epochs} train_loss={cur:.4f}")
        if status == "failed":
            log.append(f"error: out of memory at batch size {bs}")
        metrics = {} if status == "failed" else {"accuracy": acc, "val_loss": loss, "f1": round(acc - rng.uniform(0.01, 0.05), 4)}
        runs.append({"id": f"RUN{k + 1:03d}", "name": f"{ds['domain']}-{rng.choice(_METHODS).split()[0]}-{k + 1}",
                     "project": f"{ds['domain']}-2026", "dataset_id": ds["id"],
                     "config": {"lr": lr, "batch_size": bs, "epochs": epochs, "optimizer": rng.choice(["adamw", "sgd"])},
                     "metrics": metrics, "status": status, "started": f"{day(-30 + 2 * k)} {8 + k % 9:02d}:00:00",
                     "log": log, "notes": ""})
    reading = [{"paper_id": p["id"], "priority": rng.choice(["low", "normal", "high"]), "status": "to_read",
                "added": f"{day(-10 + n)} 10:00:00", "summary": ""}
               for n, p in enumerate(rng.sample(papers, 3))]
    return {"res_papers": papers, "res_datasets": datasets, "res_runs": runs, "res_reading_list": reading}
