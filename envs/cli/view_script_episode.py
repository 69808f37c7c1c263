"""The episode side of the script of ``servicegym view``'s page (``view_script.JS`` is the list
side followed by this): the score panel (tiles, checks, rubric items and their verdicts,
unrequested writes, sessions), an episode (its head, the conversation, the same task in other runs), the placeholder's
overview tables, the deep links of the hash and the start-up that opens them. It continues the one
function ``view_script``'s part opens, and closes it.
"""

from __future__ import annotations

__all__ = ["JS_EPISODE"]

JS_EPISODE = r"""  // ----- the score -----
  function num(v) { return typeof v === "number" ? v : typeof v === "boolean" ? (v ? 1 : 0) : null; }
  function tile(label, v, help) {
    var n = num(v), cls = n === null ? "" : n >= 1 ? " ok" : n <= 0 ? " bad" : " mid";
    var t = el("div", "tile" + cls);
    add(t, el("div", "v", n === null ? fmt(v) : (Number.isInteger(n) ? String(n) : n.toFixed(2))), el("div", "k", label));
    if (help) t.title = help;
    return t;
  }
  function item(name, v, side) {
    var n = num(v), pass = n !== null && n >= 1;
    var li = el("li", pass ? "pass" : "fail");
    add(li, el("span", "ic", pass ? "\u2713" : "\u2717"), el("span", null, name), side ? el("span", "side", side) : null);
    return li;
  }
  function card(title, n) {
    var c = el("div", "card"), h = el("h3", null, title);
    if (n !== undefined) add(h, el("span", "n", n));
    add(c, h);
    return c;
  }
  function flashStep(step) {
    var target = document.querySelector('.msg.assistant[data-step="' + step + '"]');
    if (!target) return;
    target.scrollIntoView({ block: "center" });
    target.classList.add("flash");
    setTimeout(function () { target.classList.remove("flash"); }, 1600);
  }
  function renderScore(rec, panel) {
    var s = isObj(rec.score) ? rec.score : {}, used = new Set();
    var oc = card("Outcome"), row = el("div", "outcome");
    var succ = rec.success === true ? "ok" : rec.success === false ? "bad" : "none";
    add(row, el("span", "big " + succ, rec.success === true ? "SUCCESS" : rec.success === false ? "FAILURE" : "NO RESULT"));
    var sub = [];
    if (typeof rec["return"] === "number") sub.push("return " + fmt(rec["return"]));
    if (rec.termination_reason) sub.push(String(rec.termination_reason));
    add(row, el("span", "sub", sub.join(" \u00b7 ")));
    add(oc, row);
    if (!Object.keys(s).length) add(oc, el("div", "note", "No score: the episode did not finish."));
    add(panel, oc);

    var keys = Object.keys(s);
    // G/P/F (payments)
    if ("goal" in s || "process" in s || "protection" in s) {
      var c1 = card("Goal \u00b7 Process \u00b7 Protection", "strict " + fmt(s.strict !== undefined ? s.strict : ""));
      var tl = el("div", "tiles");
      add(tl, tile("G goal", s.goal, "requested outcomes hold in the final state"), tile("P process", s.process, "ordered obligations over the history"),
          tile("F protection", s.protection, "no forbidden side effect, invariants at every step"));
      add(c1, tl);
      ["goal", "process", "protection", "strict"].forEach(function (k) { used.add(k); });
      add(panel, c1);
    }
    if (Array.isArray(s.violations)) {
      used.add("violations");
      var cv = card("Violations", String(s.violations.length));
      if (!s.violations.length) add(cv, el("div", "note", "None."));
      s.violations.forEach(function (v) {
        var box = el("div", "viol");
        if (!isObj(v)) { add(box, el("div", "d", fmt(v))); add(cv, box); return; }
        var top = el("div");
        add(top, el("span", "c", v.check === undefined ? "violation" : String(v.check)));
        if (typeof v.step === "number") {
          var a = el("a", null, "step " + v.step);
          a.addEventListener("click", function () { flashStep(v.step); });
          add(top, a);
        }
        add(box, top);
        if (v.detail !== undefined) add(box, el("div", "d", fmt(v.detail)));
        add(cv, box);
      });
      add(panel, cv);
    }
    // PROC / COMP (workspace)
    var sessions = new Map();
    keys.forEach(function (k) {
      var m = /^s(\d+)\/(proc|own_proc|comp)$/.exec(k) || /^s(\d+)\/(check|intent)\/(.+)$/.exec(k) || /^rubric\/s(\d+)$/.exec(k);
      if (!m) return;
      var idx = Number(m[1]);
      if (!sessions.has(idx)) sessions.set(idx, { checks: [], intents: [] });
      var o = sessions.get(idx);
      if (k.indexOf("rubric/") === 0) o.success = s[k];
      else if (m[2] === "check") o.checks.push([m[3], s[k]]);
      else if (m[2] === "intent") o.intents.push([m[3], s[k]]);
      else o[m[2]] = s[k];
      used.add(k);
    });
    if ("proc" in s || "comp" in s) {
      var c2 = card("Proactivity \u00b7 Completeness");
      var t2 = el("div", "tiles");
      add(t2, tile("PROC", s.proc, "(Completed + Inferred) / hidden intents"), tile("COMP", s.comp, "weighted checklist over the artifacts"));
      if ("sessions_passed" in s) add(t2, tile("sessions passed", s.sessions_passed, "fraction of the sessions passed"));
      add(c2, t2);
      ["proc", "comp", "sessions_passed", "sessions"].forEach(function (k) { used.add(k); });
      add(panel, c2);
    }
    var finals = new Map();
    var det = isObj(rec.details) && Array.isArray(rec.details.sessions) ? rec.details.sessions : [];
    det.forEach(function (e) { if (isObj(e) && typeof e.index === "number") finals.set(e.index, e); });
    if (sessions.size) {
      var ids = Array.from(sessions.keys()).sort(function (a, b) { return a - b; });
      var passed = ids.filter(function (i) { return num(sessions.get(i).success) >= 1; }).length;
      var c3 = card("Sessions", passed + " of " + ids.length + " passed");
      ids.forEach(function (i) {
        var o = sessions.get(i), ok = num(o.success) >= 1;
        var d = el("details", "sess " + (ok ? "pass" : "fail"));
        d.open = !ok;
        var sm = el("summary");
        var met = [];
        if (o.proc !== undefined) met.push("PROC " + fmt(o.proc));
        if (o.comp !== undefined) met.push("COMP " + fmt(o.comp));
        add(sm, el("span", "ic", ok ? "\u2713" : "\u2717"), el("span", null, "session " + i), el("span", "m", met.join(" \u00b7 ")));
        add(d, sm);
        var b = el("div", "sbody");
        if (o.own_proc !== undefined) add(b, el("div", "group-name", "own PROC " + fmt(o.own_proc)));
        if (o.checks.length) {
          add(b, el("div", "group-name", "checks (COMP)"));
          var ul = el("ul", "items");
          o.checks.forEach(function (c) { add(ul, item(c[0], c[1])); });
          add(b, ul);
        }
        // the final state of each intent, where the record keeps it (``details.sessions``)
        var end = finals.get(i), states = end && isObj(end.intents) ? end.intents : null;
        if (states && Object.keys(states).length) {
          add(b, el("div", "group-name", "hidden intents (PROC)"));
          var us = el("ul", "items");
          Object.keys(states).forEach(function (id) {
            var st = String(states[id]);
            add(us, item(id.split(".").slice(-1)[0], st === "completed" || st === "inferred" ? 1 : 0, st));
          });
          add(b, us);
        } else if (o.intents.length) {
          add(b, el("div", "group-name", "hidden intents (PROC)"));
          var ui = el("ul", "items");
          o.intents.forEach(function (c) { add(ui, item(c[0], c[1], num(c[1]) >= 1 ? "completed / inferred" : "provided / pending")); });
          add(b, ui);
        }
        add(d, b);
        add(c3, d);
      });
      add(panel, c3);
    }
    // natural-language rubric items of a VitaBench-file task (``details.rubric``): how each was checked
    var nlr = isObj(rec.details) && isObj(rec.details.rubric) && Array.isArray(rec.details.rubric.items) ? rec.details.rubric : null;
    if (nlr) {
      var checked = nlr.items.filter(function (e) { return isObj(e) && e.verdict !== null && e.verdict !== undefined; });
      var met = checked.filter(function (e) { return e.verdict === true; }).length;
      var c7 = card("Rubric items" + (nlr.scoring ? " (scoring: " + nlr.scoring + ")" : ""),
                    met + " of " + checked.length + " checked items met, " + (nlr.items.length - checked.length) + " unchecked");
      var t7 = el("div", "tiles");
      add(t7, tile("rubric mode", s.success_rubric, "the rubric's items plus no unrequested write"),
          tile("strict mode", s.success_strict, "also the gold end state"),
          tile("unrequested writes", s.unrequested_writes === undefined ? "-" : String(s.unrequested_writes), "writes the user never asked for"));
      add(c7, t7);
      ["success_rubric", "success_strict", "unrequested_writes", "rubric_items_code", "rubric_items_judge",
       "rubric_items_unchecked", "rubric_nl_coverage"].forEach(function (k) { used.add(k); });
      keys.forEach(function (k) { if (/^item\/\d+$/.test(k)) used.add(k); });
      var ul7 = el("ul", "items");
      nlr.items.forEach(function (e) {
        if (!isObj(e)) return;
        var unchecked = e.verdict === null || e.verdict === undefined;
        var li = unchecked ? el("li", "unchecked") : item("", e.verdict ? 1 : 0);
        if (unchecked) add(li, el("span", "ic", "?"));
        var body = el("span", null, String(e.text === undefined ? "" : e.text));
        (Array.isArray(e.checks) ? e.checks : []).forEach(function (c) {
          if (isObj(c) && c.check) add(body, el("span", "chk", String(c.name || "") + ": " + String(c.check)));
        });
        // item() put an empty name span first: the text replaces it
        if (!unchecked && li.children.length > 1) li.removeChild(li.children[1]);
        add(li, body, el("span", "side", String(e.source || "")));
        add(ul7, li);
      });
      add(c7, ul7);
      var writes = Array.isArray(nlr.unrequested_writes) ? nlr.unrequested_writes : [];
      if (writes.length) {
        add(c7, el("div", "group-name", "unrequested writes"));
        var uw = el("ul", "items");
        writes.forEach(function (w) { add(uw, item(String(w), 0)); });
        add(c7, uw);
      }
      add(panel, c7);
    }
    // rubric items
    var rub = keys.filter(function (k) { return k.indexOf("rubric/") === 0 && !used.has(k); });
    if (rub.length || "rubric_fraction" in s) {
      var npass = rub.filter(function (k) { return num(s[k]) >= 1; }).length;
      var c4 = card("Rubric", rub.length ? npass + " of " + rub.length + " passed" : "fraction " + fmt(s.rubric_fraction));
      var groups = new Map();
      rub.forEach(function (k) {
        var name = k.slice(7), dot = name.indexOf("."), g = dot > 0 ? name.slice(0, dot) : "";
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g).push([dot > 0 ? name.slice(dot + 1) : name, s[k]]);
        used.add(k);
      });
      groups.forEach(function (list, g) {
        if (g) add(c4, el("div", "group-name", g));
        var ul = el("ul", "items");
        list.forEach(function (p) { add(ul, item(g ? p[0] : p[0], p[1])); });
        add(c4, ul);
      });
      ["rubric_fraction", "rubric_items"].forEach(function (k) { used.add(k); });
      add(panel, c4);
    }
    // everything else
    var rest = keys.filter(function (k) { return !used.has(k); });
    if (rest.length) {
      var c5 = card("Other components", String(rest.length));
      var tb = el("table", "kv");
      rest.forEach(function (k) {
        var tr = el("tr"), v = s[k];
        add(tr, el("td", null, k));
        var td = el("td");
        if (isObj(v) || Array.isArray(v)) { td.style.textAlign = "left"; add(td, jsonNode(JSON.stringify(v, null, 2))); } else td.textContent = fmt(v);
        add(tr, td);
        add(tb, tr);
      });
      add(c5, tb);
      add(panel, c5);
    }
    var c6 = card("Episode");
    var kv = el("table", "kv");
    [["env", rec.env_id], ["domain", rec.domain], ["policy", rec.policy], ["trial", rec.trial], ["seed", rec.seed], ["steps", rec.steps],
     ["tool errors", rec.tool_errors], ["elapsed s", rec.elapsed_s], ["servicegym", rec.servicegym_version]].forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") return;
      var tr = el("tr"); add(tr, el("td", null, p[0]), el("td", null, fmt(p[1]))); add(kv, tr);
    });
    add(c6, kv);
    add(panel, c6);
  }

  // ----- an episode -----
  var main = document.getElementById("main");
  function badge(text, cls) { return el("span", "badge" + (cls ? " " + cls : ""), text); }
  function renderEpisode(i) {
    var t1 = performance.now();
    var rec;
    try { rec = record(i); } catch (e) {
      var box = el("div", "placeholder"); add(box, el("h2", null, "Episode #" + i), el("div", "ep-error", "This record could not be read: " + e.message));
      return box;
    }
    if (!isObj(rec)) rec = {};
    var wrap = el("div", "episode");
    wrap.dataset.index = i;
    var head = el("div", "ep-head");
    add(head, el("h1", "ep-title", rec.task_id === undefined ? "(no task id)" : String(rec.task_id)));
    var b = el("div", "badges");
    if (MULTI) add(b, runTag(runOf(i), "badge"));
    add(b, rec.error ? badge("errored", "warn") : rec.success === true ? badge("\u2713 success", "ok") : rec.success === false ? badge("\u2717 failure", "bad") : badge("no result"));
    if (rec.env_id) add(b, badge(shortEnv(rec.env_id)));
    if (rec.policy) add(b, badge("policy " + rec.policy));
    if (rec.trial !== undefined) add(b, badge("trial " + fmt(rec.trial)));
    if (rec.termination_reason) add(b, badge(String(rec.termination_reason)));
    if (rec.steps !== undefined) add(b, badge(fmt(rec.steps) + " steps"));
    if (typeof rec.tool_errors === "number") add(b, badge(rec.tool_errors + " tool errors", rec.tool_errors ? "warn" : ""));
    add(b, badge(epName(i)));
    add(head, b);
    if (MULTI) add(head, sameTaskNav(i));
    if (rec.error) add(head, el("div", "ep-error", String(rec.error)));
    add(wrap, head);
    var body = el("div", "ep-body"), chat = el("div", "chat"), panel = el("div", "score");
    try {
      add(chat, systemFold(rec), toolsFold(rec));
      var nSess = isObj(rec.score) && typeof rec.score.sessions === "number" ? rec.score.sessions : 0;
      if (nSess > 1) add(chat, el("div", "note", "The chat resets between sessions: the record holds the last session's conversation (steps " +
        "numbered over the whole episode); every session's score is on the right."));
      renderChat(rec, chat);
    } catch (e) { add(chat, el("div", "ep-error", "Rendering the conversation failed: " + e.message)); }
    try { renderScore(rec, panel); } catch (e) { add(panel, el("div", "ep-error", "Rendering the score failed: " + e.message)); }
    add(body, chat, panel);
    add(wrap, body);
    document.body.dataset.openMs = String(Math.round(performance.now() - t1));
    return wrap;
  }
  // the same task in each other run: the same trial, else the task's first (lowest) trial
  var BY_TASK = null;
  function sameTask(i) {
    if (!BY_TASK) {
      BY_TASK = new Map();
      for (var j = 0; j < N; j++) {
        var t = INDEX[j][C.task], l = BY_TASK.get(t);
        if (!l) { l = []; BY_TASK.set(t, l); }
        l.push(j);
      }
    }
    var r = INDEX[i], list = BY_TASK.get(r[C.task]) || [], best = RUNS.map(function () { return null; });
    list.forEach(function (j) {
      var m = runOf(j), b = best[m];
      if (b === null) { best[m] = j; return; }
      var bt = INDEX[b][C.trial], jt = INDEX[j][C.trial];
      if (bt === r[C.trial]) return;
      if (jt === r[C.trial] || (jt !== null && (bt === null || jt < bt))) best[m] = j;
    });
    return best;
  }
  function sameTaskNav(i) {
    var nav = el("div", "same"), best = sameTask(i), k = runOf(i), trial = INDEX[i][C.trial];
    best.forEach(function (j, m) {
      if (m === k) return;
      if (j === null) { add(nav, el("span", "none", "task not in " + RUNS[m].label)); return; }
      var a = el("a", "same-task");
      a.href = epHash(j);
      a.dataset.run = String(m);
      a.dataset.index = String(j);
      var t = INDEX[j][C.trial];
      add(a, el("span", "dot " + status(INDEX[j])), el("span", null, "same task in " + RUNS[m].label + (t !== trial && t !== null ? " (trial " + t + ")" : "")));
      add(nav, a);
    });
    return nav;
  }
  function openEpisode(i, fromUser) {
    if (!(i >= 0 && i < N)) return;
    current = i;
    main.replaceChildren(renderEpisode(i));
    main.scrollTop = 0;
    document.body.dataset.episode = String(i);
    if (MULTI) document.body.dataset.run = String(runOf(i));
    if (fromUser && history.replaceState) history.replaceState(null, "", epHash(i));
    renderRows();
    scrollToRow(i);
  }
  function placeholder() {
    var box = el("div", "placeholder");
    add(box, el("h2", null, "Select an episode"));
    add(box, el("div", null, "Pick one in the list (filter by " + (MULTI ? "run, " : "") + "env, policy, outcome, reason or task id). " +
      "Keys: j / k or the arrows move, / searches. Link to one with " + (MULTI ? "#run=K&episode=N (both 0-based)." : "#episode=N.")));
    if (MULTI) {
      var rt = el("table", "overview runs"), rh = el("tr");
      ["run", "label", "from", "model / policy", "env", "tasks", "episodes", "succeeded", "rate", "errored (failures)"].forEach(function (h) { add(rh, el("th", null, h)); });
      add(rt, rh);
      RUNS.forEach(function (r, k) {
        var tr = el("tr"), pick = el("a", null, r.label), who = [r.model, r.policy].filter(Boolean).join(" \u00b7 ");
        pick.addEventListener("click", function () { fRun.value = String(k); applyFilters(); });
        var lab = el("td"); add(lab, pick);
        add(tr, el("td", null, String(k)), lab, el("td", null, r.source), el("td", null, who || "-"),
            el("td", null, (r.env_ids || []).map(shortEnv).join(", ")), el("td", "n", r.tasks), el("td", "n", r.episodes),
            el("td", "n", r.successes), el("td", "n", (r.episodes ? 100 * r.successes / r.episodes : 0).toFixed(1) + "%"),
            el("td", "n", r.errors ? r.errors + " (" + (100 * r.errors / r.episodes).toFixed(1) + "%)" : "0"));
        add(rt, tr);
      });
      add(box, rt);
    }
    var groups = new Map();
    INDEX.forEach(function (r) {
      var key = (MULTI ? r[C.run] + "\u0000" : "") + r[C.env] + "\u0000" + r[C.policy];
      if (!groups.has(key)) groups.set(key, [r[C.env], r[C.policy], 0, 0, new Set(), 0, r[C.run] || 0]);
      var g = groups.get(key); g[2] += 1; if (isOk(r)) g[3] += 1; g[4].add(r[C.task]); if (r[C.err]) g[5] += 1;
    });
    var t = el("table", "overview"), hr = el("tr");
    (MULTI ? ["run"] : []).concat(["env", "policy", "tasks", "episodes", "succeeded", "rate", "errored (failures)"]).forEach(function (h) { add(hr, el("th", null, h)); });
    add(t, hr);
    groups.forEach(function (g) {
      var tr = el("tr");
      if (MULTI) add(tr, el("td", null, RUNS[g[6]].label));
      add(tr, el("td", null, g[0]), el("td", null, g[1]), el("td", "n", g[4].size), el("td", "n", g[2]), el("td", "n", g[3]),
          el("td", "n", (100 * g[3] / g[2]).toFixed(1) + "%"),
          el("td", "n", g[5] ? g[5] + " (" + (100 * g[5] / g[2]).toFixed(1) + "%)" : "0"));
      add(t, tr);
    });
    add(box, t);
    return box;
  }
  function fromHash() {
    var h = location.hash.replace(/^#/, ""), p = new URLSearchParams(h);
    // several runs: run=K (number or label) names the run of episode=N (its file order) or task=ID
    var k = MULTI && p.has("run") ? runIndex(p.get("run")) : null;
    if (MULTI && p.has("run") && k === null) return false;
    var lo = MULTI ? RUNS[k === null ? 0 : k].first : 0, size = MULTI ? RUNS[k === null ? 0 : k].episodes : N;
    if (p.has("episode")) { var i = parseInt(p.get("episode"), 10); if (i >= 0 && i < size) { follow(lo + i); return true; } }
    if (p.has("task")) {
      var task = p.get("task"), trial = p.has("trial") ? parseInt(p.get("trial"), 10) : null;
      for (var j = 0; j < N; j++) {
        if (k !== null && runOf(j) !== k) continue;
        if (INDEX[j][C.task] === task && (trial === null || INDEX[j][C.trial] === trial)) { follow(j); return true; }
      }
    }
    return false;
  }
  function follow(i) {  // open an episode named by the hash; a run filter set to another run follows it
    if (MULTI && fRun.value !== "\u0000all" && fRun.value !== String(runOf(i))) { fRun.value = String(runOf(i)); applyFilters(); }
    openEpisode(i, false);
  }
  window.addEventListener("hashchange", fromHash);
  function filtersFromHash() {  // #env=..&policy=..&outcome=ok|bad|err&reason=..&q=.. preset the filters
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (MULTI && p.has("run") && runIndex(p.get("run")) !== null) fRun.value = String(runIndex(p.get("run")));
    [[fEnv, "env"], [fPolicy, "policy"], [fSuccess, "outcome"], [fReason, "reason"]].forEach(function (f) {
      if (!p.has(f[1])) return;
      var v = p.get(f[1]);
      if (f[1] === "env" && v.indexOf("/") < 0) v = "servicegym/" + v;
      if (Array.prototype.some.call(f[0].options, function (o) { return o.value === v; })) f[0].value = v;
    });
    if (p.has("q")) fTask.value = p.get("q");
  }

  filtersFromHash();
  applyFilters();
  if (!fromHash()) main.replaceChildren(placeholder());
  document.body.dataset.scriptMs = String(Math.round(performance.now() - T0));
  document.body.dataset.loadMs = String(Math.round(performance.now()));  // since navigation started
  document.body.dataset.ready = "1";
})();
"""
