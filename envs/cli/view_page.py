"""The HTML, CSS and JavaScript of ``servicegym view``'s page (one file, no network at view time).

Kept as Python strings so the page ships inside the package like any module. ``render`` fills
the template's ``@@NAME@@`` markers in one pass (inserted text is never scanned again). The script
reads the JSON blocks ``sg-meta``, ``sg-index``, ``sg-tools`` and, per opened episode, one line
of a ``sg-records`` block; every piece of record text reaches the DOM through ``textContent``.

Deep links: ``view.html#episode=N`` opens the episode of index N (0-based, file order of the
records kept), ``#task=ID`` (optionally ``&trial=K``) the first episode of that task; ``env``,
``policy``, ``outcome`` (``ok``, ``bad``, ``err``), ``reason`` and ``q`` (task id search) preset the
filters. A page of several runs (``sg-meta``'s ``runs``; the index rows' last column is the run)
adds ``run=K`` (0-based, or the run's label): it presets the run filter and is the run whose
``episode=N`` (file order of that run) or ``task=ID`` is meant; an episode links to the same task
(same trial, else its first) in each other run. Keys: j/k or the arrow keys move through the filtered list, / focuses the task search.
Once loaded, ``<body>`` carries ``data-ready="1"``, ``data-load-ms`` (since navigation started),
``data-script-ms`` and, after an episode is opened, ``data-episode`` (its index over all runs),
``data-open-ms`` and, with several runs, ``data-run``.

Layout: ``view_style`` holds the stylesheet (``CSS``) and ``view_script`` the script (``JS``: the
list side of the page there, the score panel and the episode in ``view_script_episode``); this module holds the HTML skeleton (``TEMPLATE``) and ``render``, which fills it, and
re-exports ``CSS`` and ``JS`` (``__all__``).
"""

from __future__ import annotations

import re

from servicegym.envs.cli.view_script import JS
from servicegym.envs.cli.view_style import CSS

__all__ = ["render", "CSS", "JS", "TEMPLATE"]

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@@TITLE@@</title>
<style>@@CSS@@</style>
</head>
<body>
<header class="top"><h1 id="title">servicegym view</h1><span class="src" id="src"></span><span class="stat" id="stat"></span></header>
<div class="banner" id="banner" hidden></div>
<div id="app">
<aside id="side">
<div class="filters">
<label class="wide" id="f-run-wrap" hidden>run<select id="f-run"></select></label>
<label>env<select id="f-env"></select></label>
<label>policy<select id="f-policy"></select></label>
<label>outcome<select id="f-success"></select></label>
<label>termination<select id="f-reason"></select></label>
<label class="wide">task id<input id="f-task" type="search" placeholder="search task ids (space: and)" list="task-ids" autocomplete="off"></label>
<datalist id="task-ids"></datalist>
</div>
<div class="count"><span id="count"></span><button id="clear" type="button">clear filters</button></div>
<div id="list"></div>
</aside>
<main id="main"><div class="placeholder">Loading...</div></main>
</div>
<noscript><p style="padding:16px">This page needs JavaScript (it runs locally; nothing is fetched).</p></noscript>
<script type="application/json" id="sg-meta">@@META@@</script>
<script type="application/json" id="sg-index">@@INDEX@@</script>
<script type="application/json" id="sg-tools">@@TOOLS@@</script>
@@RECORDS@@
<script>@@JS@@</script>
</body>
</html>
"""

_MARK = re.compile(r"@@([A-Z]+)@@")


def render(title: str, meta: str, index: str, tools: str, records: str) -> str:
    """The page: ``title`` HTML-escaped, the four blocks already script-safe JSON text."""
    parts = {"TITLE": title, "CSS": CSS, "JS": JS, "META": meta, "INDEX": index, "TOOLS": tools, "RECORDS": records}
    return _MARK.sub(lambda m: parts[m.group(1)], TEMPLATE)
