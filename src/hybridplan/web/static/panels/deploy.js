// Deploy: the cookbook page and its selection -> `cookbook render --json`, drawn as chip rows, the command and its
// notes; and the pipeline every change of the selection runs: render -> explain on the card (Memory picture) ->
// ratio at (L, C) (Calculator) -> Plan and Compare, each stage dropped when a newer state has started.

import { api } from "../lib/api.js";
import { radioKeys } from "../lib/chips.js";
import { wireCopy } from "../lib/copy.js";
import { $, announce, clear, each, el } from "../lib/dom.js";
import { fieldError, showError, wholeNumber } from "../lib/errors.js";
import { fmtInt, isNum, short } from "../lib/format.js";
import { dropParam, intParam, isPick, noteLink, params, setParams } from "../lib/url-state.js";
import { drawCalculator, drawCHint } from "./calculator.js";
import { explainHref, markedLines } from "./commands.js";
import { openInExplain } from "./explain.js";
import { drawMemory } from "./memory.js";
import { followPlan } from "./plan.js";
import { S, analysisPH, changedFlags, commandOf, hardware, optionLabel, pageC, pageL, rowTitle,
         selectionText } from "./selection.js";

var DEFAULT_PAGE = "qwen3.8-27b";  // the project's flagship page
var MRR = "--max-running-requests";

// a note's markdown links to the page's own anchors ([text](#id)) as links, the rest as text
function withLinks(text) {
  var out = [], re = /\[([^\]]+)\]\((#[A-Za-z0-9_-]+)\)/g, last = 0, m;
  while ((m = re.exec(text)) !== null) {
    out.push(document.createTextNode(text.slice(last, m.index)));
    out.push(el("a", {href: m[2], text: m[1]}));
    last = re.lastIndex;
  }
  out.push(document.createTextNode(text.slice(last)));
  return out;
}

// ---- the selection's rows: chips are a radio group; greyed chips explain why ----
function chip(dim, o, selected) {
  var b = el("button", {type: "button", class: "chip", role: "radio", "data-dim": dim, "data-option": o.id,
                        "aria-checked": selected ? "true" : "false", "aria-disabled": o.disabled ? "true" : null,
                        tabindex: selected ? "0" : "-1", title: o.disabled ? o.reason : null}, o.label);
  b.addEventListener("click", function () { pickChip(b, o); });
  b.addEventListener("focus", function () { if (o.disabled) explainGreyed(dim, o); });
  b._option = o;
  return b;
}
function explainGreyed(dim, o) {
  $("reason-" + dim).textContent = o.label + ": " + (o.reason || "not available for this selection");
}
function pickChip(b, o) {
  var dim = b.getAttribute("data-dim");
  if (o.disabled) { explainGreyed(dim, o); return; }
  $("reason-" + dim).textContent = "";
  if (b.getAttribute("aria-checked") === "true") return;
  var picks = Object.assign({}, S.picks);
  picks[dim] = o.id;
  S.picks = picks;
  update();
}

function drawRows(d) {
  var active = document.activeElement;
  var focusDim = active && active.getAttribute && active.closest && active.closest("#deploy-rows") ? active.getAttribute("data-dim") : null;
  var focusOpt = focusDim ? active.getAttribute("data-option") : null;
  var box = clear($("deploy-rows"));
  (S.layout.rows || []).forEach(function (r) {
    var opts = (d.options || {})[r.id];
    if (!opts) return;  // hidden row for this selection
    var group = el("div", {class: "chips", role: "radiogroup", "aria-labelledby": "legend-" + r.id},
      opts.map(function (o) { return chip(r.id, o, d.selection[r.id] === o.id); }));
    if (!group.querySelector("[tabindex='0']") && group.firstChild) group.firstChild.tabIndex = 0;
    radioKeys(group, function (c) { pickChip(c, c._option); });
    box.appendChild(el("fieldset", {id: "row-" + r.id, "data-kind": r.kind},
      el("legend", {id: "legend-" + r.id, text: r.title}), group,
      el("p", {class: "reason", id: "reason-" + r.id, "aria-live": "polite"})));
  });
  // keep the keyboard where it was: the same chip, else the row's chosen one
  if (focusDim) {
    var same = box.querySelector('.chip[data-dim="' + CSS.escape(focusDim) + '"][data-option="' + CSS.escape(focusOpt) + '"]') ||
               box.querySelector('.chip[data-dim="' + CSS.escape(focusDim) + '"][aria-checked="true"]');
    if (same) {
      Array.prototype.forEach.call(same.parentNode.children, function (c) { c.tabIndex = c === same ? 0 : -1; });
      same.focus();
    }
  }
}

// the evidence behind the badge (cookbook.badge): its confidence on hover, and beside it when it does not back it
function drawBadgeEvidence(badge, ev) {
  badge.title = ev && ev.level ? "Evidence: " + ev.level + " - " + ev.note : "";
  var note = $("deploy-badge-evidence");
  var unbacked = !!ev && !ev.backs_badge;
  note.textContent = unbacked ? ev.says : "";
  note.setAttribute("data-level", ev && ev.level ? ev.level : "none");
  note.hidden = !unbacked;
}

function drawDeploy(d) {
  drawRows(d);
  var res = clear($("deploy-reseated"));
  (d.reseated || []).forEach(function (m) {
    res.appendChild(el("li", {class: "alert info", "data-dim": m.dim},
      rowTitle(m.dim) + " moved from " + (m.from === null ? "(none)" : optionLabel(d, m.dim, m.from)) + " to " +
      optionLabel(d, m.dim, m.to) + ": " + m.reason));
  });
  var badge = $("deploy-badge");
  badge.className = "badge " + d.badge;
  badge.textContent = d.badge_label;
  badge.setAttribute("data-badge", d.badge);
  badge.hidden = false;
  drawBadgeEvidence(badge, d.badge_evidence);
  var changed = changedFlags(d);
  markedLines(clear($("deploy-command")), d.redirect ? "" : commandOf(d), changed);
  $("deploy-copy").disabled = d.redirect || !d.cell;
  var link = $("deploy-explain");
  link.hidden = d.redirect || !d.cell;
  link.setAttribute("href", explainHref(commandOf(S.analysis || d), hardware().gpu, {version: (S.analysis || d).engine_version}));
  var change = clear($("deploy-change"));
  change.hidden = !changed.length;
  if (changed.length) {
    change.appendChild(el("strong", {text: "Changed from the recipe: "}));
    change.appendChild(el("code", {text: changed.join(" ")}));
    change.appendChild(document.createTextNode(" (the Calculator's C = " + fmtInt(S.C) + ") "));
    var back = el("button", {type: "button", class: "ghost", id: "deploy-reset", text: "Back to the recipe"});
    back.addEventListener("click", function () { resetC(); });
    change.appendChild(back);
  }
  var w = clear($("deploy-warnings"));
  (d.warnings || []).forEach(function (t) { w.appendChild(el("div", {class: "alert warn"}, withLinks(t))); });
  (d.notes || []).forEach(function (t) { w.appendChild(el("div", {class: "alert info"}, withLinks(t))); });
  if (d.nnodes > 1) {
    w.appendChild(el("div", {class: "alert info", id: "deploy-per-node"}, "Multi-node (" + d.nnodes + " nodes): " +
      "the panels below analyse node " + analysisPH().NODE_RANK + "'s command (NODE_RANK filled in; each node holds the same share). " +
      "Fill the placeholders under “Placeholders” to get the command for each node."));
  }
  var v = clear($("deploy-verification"));
  var ver = d.verification || {};
  v.appendChild(el("p", {}, "Model: ", el("code", {text: d.model_name || "-"}),
    d.docker_image ? el("span", {}, " · image ", el("code", {text: d.docker_image})) : null,
    ver.build ? el("span", {}, " · pins measured on build ", el("code", {text: ver.build})) : null));
  (ver.measurements || []).forEach(function (m) {
    v.appendChild(el("p", {class: "muted", text: [m.date, m.outcome, m.protocol, m.source].filter(Boolean).join(" · ")}));
  });
  var inst = S.layout.install || {};
  if (inst.pip && inst.pip.length) v.appendChild(el("pre", {class: "command", text: inst.pip.join("\n")}));
  if (inst.note) v.appendChild(el("p", {class: "muted", text: inst.note}));
}

// ---- placeholders: the user's values fill the shown command; node 0's view fills what the panels analyse ----
function drawPlaceholders() {
  var box = clear($("deploy-ph-fields"));
  var list = ((S.layout || {}).placeholders || []).filter(function (p) { return p.target === "command"; });
  $("deploy-ph").hidden = !list.length;
  list.forEach(function (p) {
    var input = el("input", {id: "ph-" + p.key, type: "text", maxlength: "256", placeholder: p.default,
                             "data-key": p.key, autocomplete: "off", spellcheck: "false"});
    input.value = S.ph[p.key] || "";
    input.addEventListener("input", function () {
      var v = input.value.trim();
      if (p.key === "NODE_RANK" && v && !/^[0-9]+$/.test(v)) {
        fieldError(input, "NODE_RANK: a whole number (0 on the first node)", function () { return /^[0-9]*$/.test(input.value.trim()); });
        return;
      }
      fieldError(input, null);
      if (v) S.ph[p.key] = v; else delete S.ph[p.key];
      schedule();
    });
    box.appendChild(el("label", {}, p.label + " (" + p.key + ")", input));
  });
}
function samePH(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

function renderBody(docker, ph, setFlags) {
  var body = {page: S.page, picks: S.picks, docker: docker, placeholders: ph};
  if (S.L !== null) body.request_length = S.L;
  if (S.C !== null) body.concurrency = S.C;
  if (setFlags && setFlags.length) body.set_flags = setFlags;
  return body;
}
// the Calculator's C in the command: --max-running-requests C, and the pin for C where the recipe pins
function setFlagsFor(d) {
  if (S.C === null) return [];
  var out = [MRR + " " + S.C];
  var pinned = (d.flags || []).some(function (f) { return f.indexOf("--max-mamba-cache-size") === 0; });
  var base = (d.ratio || {}).base;
  if (pinned && base && isNum(base.max_mamba_cache_size_pin)) out.push("--max-mamba-cache-size " + base.max_mamba_cache_size_pin);
  return out;
}

var timer = null;
function schedule() { clearTimeout(timer); timer = setTimeout(update, 250); }

// the whole pipeline for one state: render -> explain on the card -> ratio at (L, C) -> Plan
function update() {
  var seq = ++S.seq;
  var userPH = Object.assign({}, S.ph), anaPH = analysisPH();
  var first = S.C === null ? [] : [MRR + " " + S.C];
  return api("/api/render", renderBody(false, userPH, first)).then(function (res) {
    if (seq !== S.seq) return null;
    if (res.status !== 200) {
      showError($("deploy-error"), res.data.error);
      if (Object.keys(S.picks).length) {  // a selection the page cannot render: its defaults, said so
        noteLink("the selection (" + short(res.data.error.message) + ")");
        S.picks = {};
        return update();
      }
      return null;
    }
    var flags = setFlagsFor(res.data);
    var sameFlags = flags.join("|") === first.join("|");
    var calls = [sameFlags ? Promise.resolve(res) : api("/api/render", renderBody(false, userPH, flags)),
                 samePH(userPH, anaPH) ? null : api("/api/render", renderBody(false, anaPH, flags)),
                 S.run === "docker" ? api("/api/render", renderBody(true, userPH, flags)) : null];
    return Promise.all(calls).then(function (all) {
      if (seq !== S.seq) return null;
      var bad = all.filter(function (x) { return x && x.status !== 200; })[0];
      if (bad) { showError($("deploy-error"), bad.data.error); return null; }
      showError($("deploy-error"), null);
      S.pip = all[0].data;
      S.analysis = all[1] ? all[1].data : S.pip;
      S.shown = all[2] ? all[2].data : S.pip;
      S.picks = S.pip.selection;
      drawDeploy(S.shown);
      writeDeployParams();
      return analyse(seq);
    });
  });
}

function writeDeployParams() {
  var q = {page: S.page, run: S.run === "pip" ? null : S.run, L: S.L === pageL() ? null : S.L, C: S.C};
  params.forEach(function (v, k) { if (isPick(k) || k.indexOf("ph:") === 0) q[k] = null; });
  Object.keys(S.picks).forEach(function (k) { if (isPick(k)) q[k] = S.picks[k]; });
  Object.keys(S.ph).forEach(function (k) { q["ph:" + k] = S.ph[k]; });
  setParams(q);
}

// Memory and Calculator: the same command (node 0's view), the same card
function analyse(seq) {
  var d = S.analysis;
  var hw = hardware();
  var about = aboutText(d, hw);
  $("memory-about").textContent = about;
  $("calc-about").textContent = about;
  if (!d.cell || d.redirect) {
    clear($("memory-out")).appendChild(el("p", {class: "muted", text: "No command to size for this selection."}));
    clear($("calc-out")).appendChild(el("p", {class: "muted", text: "No command for this selection."}));
    S.served = null;
    return followPlan();
  }
  var command = commandOf(d);
  return api("/api/explain", {command: command, gpu: hw.gpu || null, engine_version: d.engine_version || null}).then(function (res) {
    if (seq !== S.seq) return null;
    S.explain = res.data;
    drawMemory(res.data, hw);
    S.served = isNum(res.data.max_running_requests) ? res.data.max_running_requests : null;
    var C = S.C !== null ? S.C : S.served !== null ? S.served : pageC();
    $("calc-C").value = C || "";
    drawCHint(resetC);
    if (!S.L || !C) {
      clear($("calc-out")).appendChild(el("p", {class: "muted", text: "Give L and C."}));
      return followPlan();
    }
    return api("/api/ratio", {command: command, request_length: S.L, concurrency: C, gpu: hw.gpu || null,
                              engine_version: d.engine_version || null}).then(function (q) {
      if (seq !== S.seq) return null;
      if (q.status !== 200) { showError($("calc-error"), q.data.error); clear($("calc-out")); return followPlan(); }
      showError($("calc-error"), null);
      drawCalculator(q.data, d, hw);
      announce("Command for " + selectionText(d) + ": serves " + fmtInt(S.explain.max_running_requests) +
               " requests on " + (hw.label || "the card") + "; at C = " + fmtInt(C) + " the state pool pin " +
               (q.data.pin_fits === false ? "does not fit" : "fits") + ".");
      return followPlan();
    });
  });
}
function aboutText(d, hw) {
  var t = "About: the Deploy command (" + selectionText(d) + ")";
  if (S.C !== null) t += ", changed for C = " + fmtInt(S.C);
  if (d.nnodes > 1) t += ", node " + analysisPH().NODE_RANK + "'s view of " + d.nnodes + " nodes";
  return t + (hw.gpu ? ", on one " + (hw.label || hw.gpu) + "." : "; the selected hardware names no GPU in the catalog.");
}

// ---- the Calculator's workload: L, and C once typed (it goes into the command until "Back to the recipe") ----
var cTyped = false;
function resetC() {
  S.C = null;
  cTyped = false;
  fieldError($("calc-C"), null);
  update();
}
function onWorkload(ev) {
  if (ev && ev.target === $("calc-C")) cTyped = true;
  var L = wholeNumber($("calc-L"), "L");
  var C = wholeNumber($("calc-C"), "C");
  if (L === null || C === null) return;
  S.L = L;
  if (cTyped) S.C = C;
  schedule();
}

function loadPage(pageId, picks) {
  S.page = pageId;
  return api("/api/pages/" + encodeURIComponent(pageId)).then(function (res) {
    if (res.status !== 200) { showError($("deploy-error"), res.data.error); return null; }
    S.layout = res.data;
    $("deploy-desc").textContent = S.layout.description || "";
    S.picks = validPicks(picks);
    if (S.L === null) S.L = pageL();
    $("calc-L").value = S.L || "";
    drawPlaceholders();
    return update();
  });
}
// the link's picks, each checked against the page's rows: a bad one is dropped alone, with a note
function validPicks(picks) {
  var out = {};
  Object.keys(picks).forEach(function (k) {
    var row = (S.layout.rows || []).filter(function (r) { return r.id === k; })[0];
    if (!row) dropParam(k, "page " + S.page + " has no row " + short(k));
    else if ((row.options || []).indexOf(picks[k]) < 0) dropParam(k, "not an option of " + row.title);
    else out[k] = picks[k];
  });
  return out;
}

// the link's Deploy state (run form, L, C, placeholders, page and picks), the panel's handlers, then the page
export function initDeploy() {
  var run = params.get("run");
  if (run !== null && run !== "pip" && run !== "docker") { dropParam("run", "pip or docker"); run = null; }
  S.run = run || "pip";
  var runGroup = $("deploy-run");
  each("#deploy-run .chip", function (b) {
    var on = b.getAttribute("data-run") === S.run;
    b.setAttribute("aria-checked", on ? "true" : "false");
    b.tabIndex = on ? 0 : -1;
    b.addEventListener("click", function () { pickRun(b); });
  });
  radioKeys(runGroup, pickRun);
  wireCopy($("deploy-copy"), $("deploy-command"), $("deploy-copied"));
  $("deploy-explain").addEventListener("click", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button || !S.analysis) return;
    ev.preventDefault();
    openInExplain(commandOf(S.analysis), hardware().gpu, {version: S.analysis.engine_version});
  });
  $("calc-L").addEventListener("input", onWorkload);
  $("calc-C").addEventListener("input", onWorkload);
  S.L = intParam("L", 10000000);
  S.C = intParam("C", 1000000);
  cTyped = S.C !== null;
  params.forEach(function (v, k) {
    if (k.indexOf("ph:") === 0) {
      var key = k.slice(3);
      if (/^[A-Z][A-Z0-9_]{0,63}$/.test(key) && v.length <= 256) S.ph[key] = v; else dropParam(k, "not a placeholder");
    }
  });
  return api("/api/pages").then(function (res) {
    var pages = res.data.pages || [];
    var sel = clear($("deploy-page"));
    pages.forEach(function (p) { sel.appendChild(el("option", {value: p.id, text: p.model + " (" + p.id + ")"})); });
    var ids = pages.map(function (p) { return p.id; });
    var wanted = params.get("page");
    var picks = {};
    params.forEach(function (v, k) { if (isPick(k)) picks[k] = v; });
    if (wanted !== null && ids.indexOf(wanted) < 0) {
      dropParam("page", "no bundled page of that id");
      Object.keys(picks).forEach(function (k) { dropParam(k, "a pick for the unknown page"); });
      picks = {};
      wanted = null;
    }
    var first = wanted || (ids.indexOf(DEFAULT_PAGE) >= 0 ? DEFAULT_PAGE : ids[0]);
    if (!first) return null;
    sel.value = first;
    sel.addEventListener("change", function () {
      S.L = null; S.C = null; S.ph = {}; cTyped = false;
      fieldError($("calc-C"), null); fieldError($("calc-L"), null);
      loadPage(sel.value, {});
    });
    return loadPage(first, picks);
  });
}
function pickRun(b) {
  S.run = b.getAttribute("data-run");
  each("#deploy-run .chip", function (x) {
    x.setAttribute("aria-checked", x === b ? "true" : "false");
    x.tabIndex = x === b ? 0 : -1;
  });
  update();
}
