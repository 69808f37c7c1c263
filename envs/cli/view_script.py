"""The script of ``servicegym view``'s page: ``JS``, which ``view_page.render`` puts in the page's
last ``<script>`` element (``@@JS@@`` of ``view_page.TEMPLATE``).

One function run at load (no library, nothing fetched), written in two Python strings joined here:
this module's part, the list side of the page, and ``view_script_episode.JS_EPISODE``, the episode
side. It reads the JSON blocks ``sg-meta``, ``sg-index`` and ``sg-tools`` and takes the text of the
``sg-records`` blocks out of the DOM, parsing one record when its episode opens; every piece of
record text reaches the DOM through ``textContent``. Its sections, in order: helpers and the runs;
the header and banner; the filters; the virtual list (and the j/k keys); JSON, pretty and coloured;
the conversation (messages, tool calls with their results, env events, the system prompt and tool
folds) here; then, in ``view_script_episode``, the score panel; an episode (its head, the same task
in other runs), the placeholder's overview tables and the deep links of the hash (``view_page``'s
docstring lists them).
"""

from __future__ import annotations

from servicegym.envs.cli.view_script_episode import JS_EPISODE

__all__ = ["JS"]

_JS_LIST = r"""
(function () {
  "use strict";
  var T0 = performance.now();
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) { for (var i = 1; i < arguments.length; i++) { var c = arguments[i]; if (c) parent.appendChild(c); } return parent; }
  function readJSON(id) { return JSON.parse(document.getElementById(id).textContent); }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function fmt(v) {
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
    if (typeof v === "boolean") return v ? "true" : "false";
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v);
  }
  function textOf(content) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.map(function (p) { return isObj(p) && typeof p.text === "string" ? p.text : JSON.stringify(p); }).join("\n");
    return JSON.stringify(content);
  }

  var META = readJSON("sg-meta"), INDEX = readJSON("sg-index"), TOOLS = readJSON("sg-tools");
  var C = { env: 0, domain: 1, task: 2, trial: 3, policy: 4, success: 5, reason: 6, ret: 7, steps: 8, errs: 9, err: 10, head: 11, run: 12 };
  var N = INDEX.length;
  // the runs (one, or several on one page): label, where from, first index, headline numbers
  // counted as the report counts them (an errored episode a failure)
  var RUNS = Array.isArray(META.runs) && META.runs.length ? META.runs : [{ label: "", first: 0, episodes: N }];
  var MULTI = RUNS.length > 1;
  function runOf(i) { return MULTI ? (INDEX[i][C.run] || 0) : 0; }
  function posIn(i) { return i - (RUNS[runOf(i)].first || 0); }
  function epHash(i) { return MULTI ? "#run=" + runOf(i) + "&episode=" + posIn(i) : "#episode=" + i; }
  function epName(i) { return "#" + posIn(i); }
  function runColor(k) { return "hsl(" + ((k * 137 + 210) % 360) + ", 55%, 40%)"; }
  function runTag(k, cls) {
    var t = el("span", "rtag" + (cls ? " " + cls : ""), RUNS[k].label);
    t.style.background = runColor(k);
    t.title = RUNS[k].label + " \u00b7 " + RUNS[k].source;
    return t;
  }
  function runIndex(v) {  // a run named in the hash: its 0-based number or its label; null: none such
    if (v === null || v === undefined) return null;
    if (/^\d+$/.test(v) && Number(v) < RUNS.length) return Number(v);
    for (var k = 0; k < RUNS.length; k++) if (RUNS[k].label === v) return k;
    return null;
  }
  var lowerTask = INDEX.map(function (r) { return String(r[C.task]).toLowerCase(); });
  // the records: JSON arrays written one record a line, in blocks of up to 1000; their text is
  // taken out of the DOM (one copy in memory, a light DOM) and one record is parsed when opened
  var CHUNKS = Array.prototype.map.call(document.querySelectorAll("script.sg-records"), function (node) {
    var chunk = { first: Number(node.dataset.first), text: node.textContent, lines: null };
    node.remove();
    return chunk;
  });
  function record(i) {
    var lo = 0, hi = CHUNKS.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (CHUNKS[mid].first <= i) lo = mid; else hi = mid - 1; }
    var chunk = CHUNKS[lo];
    if (!chunk) throw new Error("no record " + i);
    if (!chunk.lines) chunk.lines = chunk.text.split("\n");
    var line = chunk.lines[i - chunk.first + 1];
    if (line === undefined || line === "]") throw new Error("no record " + i);
    if (line.charAt(line.length - 1) === ",") line = line.slice(0, -1);
    return JSON.parse(line);
  }
  function shortEnv(e) { return String(e).replace(/^servicegym\//, ""); }
  function status(r) { return r[C.err] ? "err" : r[C.success] === true ? "ok" : r[C.success] === false ? "bad" : "none"; }

  // ----- header and banner -----
  document.title = META.title;
  document.getElementById("title").textContent = META.heading || "servicegym view";
  document.getElementById("src").textContent = MULTI ? RUNS.length + " runs: " + RUNS.map(function (r) { return r.label; }).join(" \u00b7 ") : META.source;
  document.getElementById("src").title = META.source + " (generated " + META.generated + ", servicegym " + META.servicegym_version + ")";
  // one definition with the report: an errored episode is a failure, and the errors are shown beside
  function isOk(r) { return r[C.success] === true && !r[C.err]; }
  var okCount = INDEX.filter(isOk).length;
  var errCount = INDEX.filter(function (r) { return !!r[C.err]; }).length;
  function pct(a, b) { return (b ? Math.round(100 * a / b) : 0) + "%"; }
  var stat = document.getElementById("stat");
  if (MULTI) {
    stat.textContent = RUNS.map(function (r) {
      return r.label + " " + r.successes + "/" + r.episodes + " (" + pct(r.successes, r.episodes) + ")" + (r.errors ? ", " + r.errors + " errored" : "");
    }).join(" \u00b7 ");
    stat.title = "successes / episodes per run; an errored episode counts as a failure";
  } else {
    stat.textContent = N + (N === 1 ? " episode \u00b7 " : " episodes \u00b7 ") + okCount + " succeeded (" + pct(okCount, N) + ")" +
      (errCount ? " \u00b7 " + errCount + " errored (" + pct(errCount, N) + "), counted as failures" : "");
  }
  var banner = document.getElementById("banner");
  if (META.skipped.length || META.notes.length) {
    banner.hidden = false;
    var d = el("details");
    var parts = [];
    if (META.skipped.length) parts.push(META.skipped.length + (META.skipped.length === 1 ? " line" : " lines") + (MULTI ? " of the files" : " of the file") + " skipped (not an episode record)");
    META.notes.forEach(function (n) { parts.push(n); });
    add(d, el("summary", null, "\u26a0 " + parts.join("; ") + (META.skipped.length ? " \u2014 details" : "")));
    if (META.skipped.length) {
      var ul = el("ul");
      META.skipped.slice(0, 200).forEach(function (s) {
        add(ul, el("li", null, (s.length > 2 && RUNS[s[2]] ? RUNS[s[2]].label + ", " : "") + "line " + s[0] + ": " + s[1]));
      });
      if (META.skipped.length > 200) add(ul, el("li", null, "... and " + (META.skipped.length - 200) + " more"));
      add(d, ul);
    }
    add(banner, d);
  }

  // ----- filters -----
  var fEnv = document.getElementById("f-env"), fPolicy = document.getElementById("f-policy"), fSuccess = document.getElementById("f-success"),
      fReason = document.getElementById("f-reason"), fTask = document.getElementById("f-task"), fRun = document.getElementById("f-run");
  var SELECTS = [fEnv, fPolicy, fSuccess, fReason, fRun];
  function fillSelect(sel, col, label) {
    var counts = new Map();
    INDEX.forEach(function (r) { var v = r[col]; counts.set(v, (counts.get(v) || 0) + 1); });
    add(sel, el("option", null, "all " + label + " (" + counts.size + ")"));
    sel.lastChild.value = "\u0000all";
    Array.from(counts.keys()).sort().forEach(function (v) {
      var o = el("option", null, (v === "" ? "(none)" : (col === C.env ? shortEnv(v) : v)) + "  \u00b7 " + counts.get(v));
      o.value = v; add(sel, o);
    });
  }
  fillSelect(fEnv, C.env, "envs"); fillSelect(fPolicy, C.policy, "policies"); fillSelect(fReason, C.reason, "reasons");
  add(fRun, el("option", null, "all runs (" + RUNS.length + ")"));
  fRun.lastChild.value = "\u0000all";
  RUNS.forEach(function (r, k) { var o = el("option", null, r.label + "  \u00b7 " + r.episodes); o.value = String(k); add(fRun, o); });
  document.getElementById("f-run-wrap").hidden = !MULTI;
  [["\u0000all", "all"], ["ok", "succeeded"], ["bad", "failed"], ["err", "errored (error set)"]].forEach(function (p) {
    var o = el("option", null, p[1]); o.value = p[0]; add(fSuccess, o);
  });
  var taskSet = new Set(INDEX.map(function (r) { return r[C.task]; }));
  if (taskSet.size <= 2000) {
    var dl = document.getElementById("task-ids");
    Array.from(taskSet).sort().forEach(function (t) { var o = el("option"); o.value = t; add(dl, o); });
  }

  var view = [];
  function applyFilters() {
    var env = fEnv.value, pol = fPolicy.value, suc = fSuccess.value, rea = fReason.value, run = fRun.value;
    var terms = fTask.value.toLowerCase().split(/\s+/).filter(Boolean);
    view = [];
    for (var i = 0; i < N; i++) {
      var r = INDEX[i];
      if (run !== "\u0000all" && String(r[C.run] || 0) !== run) continue;
      if (env !== "\u0000all" && r[C.env] !== env) continue;
      if (pol !== "\u0000all" && r[C.policy] !== pol) continue;
      if (rea !== "\u0000all" && r[C.reason] !== rea) continue;
      if (suc !== "\u0000all") {
        var st = status(r);
        if (suc === "bad" ? (st !== "bad" && st !== "err") : st !== suc) continue;
      }
      var ok = true;
      for (var t = 0; t < terms.length; t++) if (lowerTask[i].indexOf(terms[t]) < 0) { ok = false; break; }
      if (ok) view.push(i);
    }
    document.getElementById("count").textContent = (view.length === N ? String(N) : view.length + " of " + N) + (N === 1 ? " episode" : " episodes");
    spacer.style.height = (view.length * ROW) + "px";
    listEl.scrollTop = 0;
    renderRows();
  }
  SELECTS.forEach(function (s) { s.addEventListener("change", applyFilters); });
  var typing = null;
  fTask.addEventListener("input", function () { clearTimeout(typing); typing = setTimeout(applyFilters, N > 20000 ? 200 : 60); });
  document.getElementById("clear").addEventListener("click", function () {
    SELECTS.forEach(function (s) { s.value = "\u0000all"; }); fTask.value = ""; applyFilters();
  });

  // ----- the virtual list -----
  var ROW = 48, listEl = document.getElementById("list"), spacer = el("div", "spacer"), rowsEl = el("div");
  add(listEl, spacer, rowsEl);
  var current = -1, pending = false;
  function makeRow(i, pos) {
    var r = INDEX[i], row = el("div", "row" + (i === current ? " sel" : ""));
    row.style.top = (pos * ROW) + "px";
    row.dataset.index = i;
    var l1 = el("div", "l1");
    add(l1, el("span", "tid", r[C.task]), el("span", "head", r[C.head]));
    var bits = [shortEnv(r[C.env])];
    if (r[C.policy]) bits.push(r[C.policy]);
    if (r[C.trial] !== null) bits.push("trial " + r[C.trial]);
    if (r[C.reason]) bits.push(r[C.reason]);
    if (r[C.steps] !== null) bits.push(r[C.steps] + " steps");
    var l2 = el("div", "l2");
    if (MULTI) add(l2, runTag(runOf(i)));
    l2.appendChild(document.createTextNode(epName(i) + " \u00b7 " + bits.join(" \u00b7 ")));
    add(row, el("span", "dot " + status(r)), l1, l2);
    row.title = r[C.task];
    return row;
  }
  function renderRows() {
    pending = false;
    var top = listEl.scrollTop, h = listEl.clientHeight || 800;
    var a = Math.max(0, Math.floor(top / ROW) - 8), b = Math.min(view.length, Math.ceil((top + h) / ROW) + 8);
    var frag = document.createDocumentFragment();
    for (var p = a; p < b; p++) frag.appendChild(makeRow(view[p], p));
    rowsEl.replaceChildren(frag);
    if (!view.length) add(rowsEl, el("div", "empty", "No episode matches the filters."));
  }
  listEl.addEventListener("scroll", function () { if (!pending) { pending = true; requestAnimationFrame(renderRows); } });
  window.addEventListener("resize", function () { renderRows(); });
  rowsEl.addEventListener("click", function (ev) {
    var row = ev.target.closest(".row");
    if (row) openEpisode(Number(row.dataset.index), true);
  });
  function scrollToRow(i) {
    var pos = view.indexOf(i);
    if (pos < 0) return;
    var top = pos * ROW, h = listEl.clientHeight || 800;
    if (top < listEl.scrollTop || top + ROW > listEl.scrollTop + h) listEl.scrollTop = Math.max(0, top - h / 3);
  }
  document.addEventListener("keydown", function (ev) {
    var tag = (ev.target && ev.target.tagName) || "";
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "/") { ev.preventDefault(); fTask.focus(); return; }
    var step = (ev.key === "j" || ev.key === "ArrowDown") ? 1 : (ev.key === "k" || ev.key === "ArrowUp") ? -1 : 0;
    if (!step || !view.length) return;
    ev.preventDefault();
    var pos = view.indexOf(current);
    pos = pos < 0 ? 0 : Math.min(view.length - 1, Math.max(0, pos + step));
    openEpisode(view[pos], true);
  });

  // ----- JSON, pretty and coloured -----
  var TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  function jsonNode(text) {
    var pre = el("pre", "json");
    if (text.length > 400000) { pre.textContent = text; return pre; }
    var last = 0, m, frag = document.createDocumentFragment();
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(text)) !== null) {
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var cls = m[1] ? (m[2] ? "k" : "s") : m[3] ? "lit" : "num";
      frag.appendChild(el("span", cls, m[1] ? m[1] : m[0]));
      if (m[2]) frag.appendChild(document.createTextNode(m[2]));
      last = TOKEN.lastIndex;
    }
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    pre.appendChild(frag);
    return pre;
  }
  function prettyNode(text) {
    var t = String(text).trim();
    if (t && (t.charAt(0) === "{" || t.charAt(0) === "[")) {
      try { return jsonNode(JSON.stringify(JSON.parse(t), null, 2)); } catch (e) { /* not JSON */ }
    }
    return el("pre", "plain", text);
  }
  function argsNode(args) {
    if (typeof args === "string") {
      var s = args;
      for (var k = 0; k < 2 && typeof s === "string"; k++) { try { s = JSON.parse(s); } catch (e) { break; } }
      if (typeof s !== "string") return jsonNode(JSON.stringify(s, null, 2));
      return el("pre", "plain", args);
    }
    return jsonNode(JSON.stringify(args === undefined ? {} : args, null, 2));
  }
  function lazyDetails(details, build) {
    var done = false;
    function fill() { if (!done && details.open) { done = true; add(details, build()); } }
    details.addEventListener("toggle", fill);
    fill();
    return details;
  }

  // ----- the conversation -----
  var ERR_RESULT = /^(unknown tool |arguments of |argument '|invalid arguments for |[\w.\-]+ (refused|failed)\b)/;
  var EVENT = /^\s*<(error|event|notification|notice|session|system|warning)\b/;
  function resultNode(m, callName) {
    var text = textOf(m.content), isErr = ERR_RESULT.test(text);
    var d = el("details", "result" + (isErr ? " err" : ""));
    d.open = text.length <= (isErr ? 2000 : 300);
    var sum = el("summary");
    add(sum, el("span", "lbl", isErr ? "error" : "result"), el("span", null, text.length + " chars"),
        el("span", "preview", text.replace(/\s+/g, " ").slice(0, 160)));
    add(d, sum);
    return lazyDetails(d, function () { return prettyNode(text); });
  }
  function callNode(tc, results, used) {
    var fn = isObj(tc) && isObj(tc.function) ? tc.function : (isObj(tc) ? tc : {});
    var name = fn.name === undefined ? "(no name)" : String(fn.name);
    var box = el("div", "call");
    var head = el("div", "call-head");
    add(head, el("span", null, "\u2192"), el("span", "call-name", name), isObj(tc) && tc.id ? el("span", "call-id", tc.id) : null);
    add(box, head, argsNode(fn.arguments));
    var res = isObj(tc) && tc.id !== undefined ? results.get(String(tc.id)) : undefined;
    if (res && !used.has(res)) { used.add(res); add(box, resultNode(res, name)); }
    return box;
  }
  function eventNode(text) {
    var re = /<(\w+)((?:\s[^>]*)?)>([\s\S]*?)<\/\1>/g, m, blocks = [], rest = text;
    while ((m = re.exec(text)) !== null) blocks.push([m[1], m[3]]);
    rest = text.replace(re, "").trim();
    var isError = blocks.some(function (b) { return b[0] === "error"; }) || !blocks.length;
    var box = el("div", "msg event" + (isError ? "" : " info"));
    add(box, el("div", "who", "env \u00b7 " + (blocks.length ? Array.from(new Set(blocks.map(function (b) { return b[0]; }))).join(", ") : "event")));
    blocks.forEach(function (b) { add(box, el("div", "block", b[1])); });
    if (rest) add(box, el("div", "block", rest));
    return box;
  }
  function renderChat(rec, chat) {
    var msgs = Array.isArray(rec.messages) ? rec.messages : [];
    var results = new Map();
    msgs.forEach(function (m) { if (isObj(m) && m.role === "tool" && m.tool_call_id !== undefined && !results.has(String(m.tool_call_id))) results.set(String(m.tool_call_id), m); });
    var nAsst = msgs.filter(function (m) { return isObj(m) && m.role === "assistant"; }).length;
    var offset = typeof rec.steps === "number" && rec.steps >= nAsst ? rec.steps - nAsst : 0;
    var used = new Set(), k = 0, firstSystem = true;
    if (!msgs.length) add(chat, el("div", "note", "This record holds no messages."));
    msgs.forEach(function (m) {
      if (!isObj(m)) return;
      var role = String(m.role), text = textOf(m.content);
      if (role === "system" && firstSystem) { firstSystem = false; return; }
      if (role === "assistant") {
        k += 1;
        var box = el("div", "msg assistant");
        box.dataset.step = offset + k;
        var who = el("div", "who");
        add(who, el("span", null, "assistant"), el("span", "step", "step " + (offset + k)));
        add(box, who);
        if (text) add(box, el("div", "text", text));
        (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach(function (tc) { add(box, callNode(tc, results, used)); });
        add(chat, box);
      } else if (role === "tool") {
        if (used.has(m)) return;
        var orphan = el("div", "msg other");
        add(orphan, el("div", "who", "tool result" + (m.tool_call_id ? " \u00b7 " + m.tool_call_id : "")));
        var res = resultNode(m);
        add(orphan, res);
        add(chat, orphan);
      } else if (role === "user" && EVENT.test(text)) {
        add(chat, eventNode(text));
      } else if (role === "user") {
        var u = el("div", "msg user");
        add(u, el("div", "who", "user"), el("div", "text", text));
        add(chat, u);
      } else {
        var o = el("div", "msg other");
        add(o, el("div", "who", role), el("div", "text", text));
        add(chat, o);
      }
    });
  }
  function systemFold(rec) {
    var msgs = Array.isArray(rec.messages) ? rec.messages : [];
    var sys = msgs.find(function (m) { return isObj(m) && m.role === "system"; });
    if (!sys) return null;
    var text = textOf(sys.content);
    var d = el("details", "fold");
    var s = el("summary", null, "System prompt");
    add(s, el("span", "n", text.length + " chars"));
    add(d, s);
    return lazyDetails(d, function () { var b = el("div", "fold-body"); add(b, el("pre", "sys", text)); return b; });
  }
  function toolsFold(rec) {
    var tools = typeof rec.tools === "number" ? TOOLS[rec.tools] : null;
    var d = el("details", "fold");
    var s = el("summary", null, "Tools");
    add(s, el("span", "n", Array.isArray(tools) ? tools.length + " tools" : "not in the file"));
    add(d, s);
    if (!Array.isArray(tools)) return d;
    return lazyDetails(d, function () {
      var b = el("div", "fold-body");
      tools.forEach(function (t) {
        var fn = isObj(t) && isObj(t.function) ? t.function : (isObj(t) ? t : {});
        var td = el("details", "tool");
        var ts = el("summary", null, fn.name === undefined ? "(no name)" : String(fn.name));
        var desc = typeof fn.description === "string" ? fn.description : "";
        add(ts, el("span", "d", desc.split("\n")[0].slice(0, 90)));
        add(td, ts);
        lazyDetails(td, function () {
          var box = el("div");
          if (desc) add(box, el("div", "tool-desc", desc));
          add(box, jsonNode(JSON.stringify(fn.parameters === undefined ? {} : fn.parameters, null, 2)));
          return box;
        });
        add(b, td);
      });
      return b;
    });
  }

"""

JS = _JS_LIST + JS_EPISODE
