"""The stylesheet of ``servicegym view``'s page: ``CSS``, which ``view_page.render`` puts in the
page's ``<style>`` element (``@@CSS@@`` of ``view_page.TEMPLATE``).

One Python string, so it ships inside the package like any module; the page fetches nothing. It
styles, top to bottom, the header and banner, the side bar (filters, count, the virtual list's
rows), the overview tables of the placeholder, an episode's head (badges, links to the same task in
other runs), its conversation (messages, tool calls, results, env events) and its score panel
(tiles, checklists, violations, sessions, rubric items).
"""

from __future__ import annotations

__all__ = ["CSS"]

CSS = r"""
:root {
  --bg: #f5f6f8; --panel: #ffffff; --line: #e3e6ea; --text: #1f2328; --muted: #656d76;
  --ok: #1a7f37; --ok-bg: #dafbe1; --bad: #cf222e; --bad-bg: #ffebe9; --warn: #9a6700; --warn-bg: #fff8c5;
  --accent: #0969da; --accent-bg: #ddf4ff; --user-bg: #eef2f7; --asst-bg: #ffffff; --tool-bg: #f6f8fa;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", "Liberation Sans", Arial, sans-serif;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { height: 100%; margin: 0; }
body { font: 14px/1.45 var(--sans); color: var(--text); background: var(--bg); display: flex; flex-direction: column; }
header.top { display: flex; align-items: baseline; gap: 14px; padding: 9px 16px; background: #24292f; color: #f0f3f6; flex: none; }
header.top h1 { font-size: 15px; margin: 0; font-weight: 600; letter-spacing: .2px; }
header.top .src { color: #c9d1d9; font: 12px var(--mono); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1; }
header.top .stat { color: #c9d1d9; font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 60%; }
.banner { flex: none; padding: 6px 16px; background: var(--warn-bg); color: #4d2d00; border-bottom: 1px solid #eac54f; font-size: 13px; }
.banner details summary { cursor: pointer; }
.banner ul { margin: 4px 0 2px 18px; padding: 0; font: 12px var(--mono); }
#app { flex: 1; display: flex; min-height: 0; }
#side { width: 340px; flex: none; display: flex; flex-direction: column; border-right: 1px solid var(--line); background: var(--panel); min-height: 0; }
.filters { padding: 10px 12px 8px; display: grid; grid-template-columns: 1fr 1fr; gap: 6px; border-bottom: 1px solid var(--line); }
.filters label { display: flex; flex-direction: column; font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; gap: 2px; min-width: 0; }
.filters select, .filters input { font: 13px var(--sans); padding: 4px 6px; border: 1px solid #d0d7de; border-radius: 6px; background: #fff; color: var(--text); min-width: 0; width: 100%; }
.filters .wide { grid-column: 1 / 3; }
.count { padding: 6px 12px; font-size: 12px; color: var(--muted); border-bottom: 1px solid var(--line); display: flex; justify-content: space-between; }
.count button { font-size: 12px; border: 0; background: none; color: var(--accent); cursor: pointer; padding: 0; }
#list { flex: 1; overflow-y: auto; position: relative; min-height: 0; }
#list .spacer { width: 1px; }
.row { position: absolute; left: 0; right: 0; height: 48px; padding: 5px 12px 5px 28px; border-bottom: 1px solid #eef0f2; cursor: pointer; overflow: hidden; }
.row:hover { background: #f6f8fa; }
.row.sel { background: var(--accent-bg); box-shadow: inset 3px 0 0 var(--accent); }
.row .dot { position: absolute; left: 11px; top: 11px; width: 9px; height: 9px; border-radius: 50%; background: #8c959f; }
.row .dot.ok { background: var(--ok); } .row .dot.bad { background: var(--bad); } .row .dot.err { background: var(--warn); }
.row .l1 { display: flex; gap: 8px; align-items: baseline; }
.row .tid { font: 12.5px var(--mono); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; flex: 1; }
.row .head { font: 11px var(--mono); color: var(--muted); white-space: nowrap; }
.row .l2 { font-size: 11.5px; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.empty { padding: 24px 14px; color: var(--muted); }
#main { flex: 1; overflow-y: auto; min-width: 0; }
.placeholder { padding: 28px 32px; color: var(--muted); max-width: 820px; }
.placeholder h2 { color: var(--text); font-size: 18px; margin: 0 0 8px; }
table.overview { border-collapse: collapse; margin-top: 14px; font-size: 13px; color: var(--text); background: var(--panel); }
table.overview th, table.overview td { border: 1px solid var(--line); padding: 5px 10px; text-align: left; }
table.overview td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ep-head { padding: 14px 22px 12px; background: var(--panel); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.ep-title { font: 600 17px var(--mono); margin: 0 0 7px; word-break: break-all; }
.badges { display: flex; flex-wrap: wrap; gap: 6px; }
.badge { font-size: 12px; padding: 1px 8px; border-radius: 999px; background: #eaeef2; color: #424a53; white-space: nowrap; }
.badge b { font-weight: 600; }
.badge.ok { background: var(--ok-bg); color: var(--ok); font-weight: 600; }
.badge.bad { background: var(--bad-bg); color: var(--bad); font-weight: 600; }
.badge.warn { background: var(--warn-bg); color: var(--warn); font-weight: 600; }
.ep-error { margin-top: 8px; padding: 6px 10px; border-radius: 6px; background: var(--bad-bg); color: var(--bad); font: 12px var(--mono); white-space: pre-wrap; word-break: break-word; }
.ep-body { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 18px; padding: 16px 22px 40px; align-items: start; }
.chat { display: flex; flex-direction: column; gap: 10px; min-width: 0; }
.score { position: sticky; top: 96px; display: flex; flex-direction: column; gap: 12px; max-height: calc(100vh - 150px); overflow-y: auto; padding-bottom: 8px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.card h3 { margin: 0 0 8px; font-size: 12px; text-transform: uppercase; letter-spacing: .5px; color: var(--muted); display: flex; justify-content: space-between; }
.card h3 .n { text-transform: none; letter-spacing: 0; }
details.fold { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
details.fold > summary { padding: 7px 12px; cursor: pointer; font-weight: 600; font-size: 13px; color: #424a53; }
details.fold > summary .n { font-weight: 400; color: var(--muted); margin-left: 6px; }
details.fold > .fold-body { padding: 4px 12px 10px; border-top: 1px solid var(--line); }
.note { font-size: 12.5px; color: var(--muted); background: var(--accent-bg); border-radius: 6px; padding: 6px 10px; }
.msg { border-radius: 10px; padding: 8px 12px; max-width: 92%; border: 1px solid var(--line); position: relative; }
.msg .who { font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: .5px; color: var(--muted); margin-bottom: 3px; display: flex; gap: 8px; }
.msg .who .step { font-weight: 400; text-transform: none; letter-spacing: 0; }
.msg .text { white-space: pre-wrap; word-break: break-word; }
.msg.user { background: var(--user-bg); align-self: flex-start; border-color: #d8dee4; }
.msg.assistant { background: var(--asst-bg); align-self: flex-end; width: 92%; border-color: #c8d7ea; }
.msg.assistant .who { color: var(--accent); }
.msg.flash { box-shadow: 0 0 0 3px #f2cc60; }
.msg.event { align-self: center; width: 86%; background: var(--bad-bg); border-color: #ffcecb; color: #82071e; font-size: 13px; }
.msg.event.info { background: var(--warn-bg); border-color: #eac54f; color: #4d2d00; }
.msg.event .who { color: inherit; }
.msg.event .block { white-space: pre-wrap; word-break: break-word; font: 12.5px var(--mono); }
.msg.other { background: var(--tool-bg); align-self: flex-start; }
.call { margin-top: 7px; border: 1px solid var(--line); border-radius: 8px; background: var(--tool-bg); overflow: hidden; }
.call-head { padding: 5px 10px; font: 12.5px var(--mono); display: flex; gap: 8px; align-items: baseline; border-bottom: 1px solid var(--line); background: #eef1f4; }
.call-name { font-weight: 700; color: #6639ba; }
.call-id { color: var(--muted); font-size: 11px; margin-left: auto; }
pre.json, pre.plain { margin: 0; padding: 7px 10px; font: 12px/1.45 var(--mono); white-space: pre-wrap; word-break: break-word; overflow-x: auto; }
pre.json .k { color: #0550ae; } pre.json .s { color: #0a3069; } pre.json .num { color: #953800; } pre.json .lit { color: #cf222e; }
details.result { border-top: 1px dashed #d0d7de; }
details.result > summary { padding: 4px 10px; cursor: pointer; font-size: 12px; color: var(--muted); display: flex; gap: 8px; align-items: baseline; list-style-position: inside; }
details.result > summary .lbl { font-weight: 700; color: var(--ok); text-transform: uppercase; font-size: 10.5px; letter-spacing: .5px; }
details.result.err > summary .lbl { color: var(--bad); }
details.result.err { background: #fff5f5; }
details.result > summary .preview { font: 11.5px var(--mono); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; flex: 1; min-width: 0; }
details.result[open] > summary .preview { display: none; }
details.result > pre { max-height: 480px; overflow-y: auto; border-top: 1px solid var(--line); background: #fff; }
details.result.err > pre { color: #82071e; background: #fff5f5; }
.tiles { display: grid; grid-template-columns: repeat(3, 1fr); gap: 6px; }
.tile { border-radius: 8px; padding: 6px 8px; text-align: center; background: #eaeef2; }
.tile .v { font: 700 18px var(--mono); }
.tile .k { font-size: 11px; text-transform: uppercase; letter-spacing: .4px; color: #424a53; }
.tile.ok { background: var(--ok-bg); color: var(--ok); } .tile.bad { background: var(--bad-bg); color: var(--bad); }
.tile.mid { background: var(--warn-bg); color: var(--warn); }
.outcome { display: flex; align-items: center; gap: 10px; }
.outcome .big { font-size: 15px; font-weight: 700; padding: 3px 10px; border-radius: 6px; }
.outcome .big.ok { background: var(--ok-bg); color: var(--ok); } .outcome .big.bad { background: var(--bad-bg); color: var(--bad); }
.outcome .big.none { background: #eaeef2; color: #424a53; }
.outcome .sub { font-size: 12px; color: var(--muted); }
ul.items { list-style: none; margin: 0; padding: 0; }
ul.items li { display: flex; gap: 7px; align-items: baseline; padding: 2px 0; font: 12.5px var(--mono); word-break: break-word; }
ul.items li .ic { flex: none; width: 16px; height: 16px; border-radius: 50%; display: inline-flex; align-items: center; justify-content: center; font: 700 10px var(--sans); color: #fff; transform: translateY(2px); }
ul.items li.pass .ic { background: var(--ok); } ul.items li.fail .ic { background: var(--bad); }
ul.items li.fail { color: var(--bad); }
ul.items li .side { margin-left: auto; color: var(--muted); font-size: 11px; white-space: nowrap; }
ul.items li.unchecked { color: var(--muted); } ul.items li.unchecked .ic { background: #afb8c1; }
ul.items li .chk { display: block; color: var(--muted); font-size: 11px; }
.group-name { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; margin: 6px 0 2px; }
.viol { border-left: 3px solid var(--bad); padding: 3px 0 3px 8px; margin: 6px 0; font-size: 12.5px; }
.viol .c { font: 600 12px var(--mono); color: var(--bad); }
.viol a { font-size: 11.5px; margin-left: 6px; color: var(--accent); cursor: pointer; text-decoration: underline; }
.viol .d { word-break: break-word; }
details.sess { border-top: 1px solid #eef0f2; }
details.sess > summary { cursor: pointer; padding: 4px 0; font: 12.5px var(--mono); display: flex; gap: 7px; align-items: baseline; list-style: none; }
details.sess > summary::-webkit-details-marker { display: none; }
details.sess > summary .ic { flex: none; width: 16px; height: 16px; border-radius: 50%; display: inline-flex; align-items: center; justify-content: center; font: 700 10px var(--sans); color: #fff; transform: translateY(2px); }
details.sess.pass > summary .ic { background: var(--ok); } details.sess.fail > summary .ic { background: var(--bad); }
details.sess > summary .m { margin-left: auto; color: var(--muted); font-size: 11.5px; }
details.sess .sbody { padding: 0 0 6px 23px; }
table.kv { border-collapse: collapse; width: 100%; font-size: 12px; }
table.kv td { padding: 2px 4px; border-bottom: 1px solid #eef0f2; vertical-align: top; word-break: break-word; }
table.kv td:first-child { font-family: var(--mono); color: #424a53; }
table.kv td:last-child { text-align: right; font-family: var(--mono); }
.tool-desc { font-size: 12.5px; color: #424a53; white-space: pre-wrap; margin: 4px 0; }
details.tool { border-bottom: 1px solid #eef0f2; }
details.tool > summary { cursor: pointer; padding: 4px 0; font: 12.5px var(--mono); }
details.tool > summary .d { font-family: var(--sans); color: var(--muted); margin-left: 8px; }
pre.sys { margin: 0; white-space: pre-wrap; word-break: break-word; font: 12.5px/1.5 var(--mono); max-height: 420px; overflow-y: auto; }
.more { font-size: 12px; color: var(--accent); cursor: pointer; border: 0; background: none; padding: 4px 0; }
.rtag { display: inline-block; max-width: 150px; overflow: hidden; text-overflow: ellipsis; vertical-align: bottom; color: #fff; border-radius: 4px; padding: 0 5px; margin-right: 6px; font: 600 10.5px/16px var(--sans); white-space: nowrap; }
.badge.rtag { font-size: 12px; line-height: inherit; padding: 1px 8px; border-radius: 999px; max-width: 260px; margin: 0; }
.same { margin-top: 8px; display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 12.5px; align-items: baseline; }
.same a { color: var(--accent); text-decoration: underline; cursor: pointer; }
.same .none { color: var(--muted); }
.same .dot { display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: 4px; background: #8c959f; }
.same .dot.ok { background: var(--ok); } .same .dot.bad { background: var(--bad); } .same .dot.err { background: var(--warn); }
table.overview a { color: var(--accent); cursor: pointer; text-decoration: underline; }
kbd { font: 11px var(--mono); border: 1px solid #d0d7de; border-bottom-width: 2px; border-radius: 4px; padding: 0 4px; background: #f6f8fa; }
"""
