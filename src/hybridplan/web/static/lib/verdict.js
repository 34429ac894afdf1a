// The verdict, as the CLI prints it and every panel shows it: serves, or the phase it fails in and why; the numbers
// behind it (graph capture's need, the blocks, ...), the engine's own message and rule where it refuses, what it
// rests on (confidence and evidence), what to change, and vLLM's startup checks. Every value is the payload's
// `verdict` object (one computation, server side): nothing is recomputed here.

import { el } from "./dom.js";
import { confidenceLine, stat } from "./figures.js";
import { fmtInt, isNum } from "./format.js";

// a verdict figure's label (keys of the verdict object; any other one shows under its own name)
var LABELS = {
  slack_gib: "slack outside the pools", capture_need_gib: "graph capture needs", serve_need_gib: "serving needs",
  max_mamba_cache_size: "state slots", max_total_num_tokens: "KV tokens", max_running_requests: "running requests",
  available_kv_gib: "available KV memory", requested_gib: "requested", free_at_startup_gib: "free at startup",
  weights_gib: "weights / rank", num_blocks: "blocks", kv_cache_tokens: "KV tokens", max_concurrency: "concurrency",
  max_model_len: "max_model_len", max_num_seqs: "max_num_seqs", cudagraph_mode: "CUDA graphs"
};
var SHOWN_APART = {serves: 1, phase: 1, why: 1, message: 1, rule: 1, confidence: 1};

function figureText(key, v) {
  if (/_gib$/.test(key)) return v.toFixed(2) + " GiB";
  if (key === "max_concurrency") return v.toFixed(2) + "x";
  return isNum(v) ? fmtInt(v) : String(v);
}
// the figures behind a verdict, each with its exact value (data-value; data-key "verdict-<name>"), in the payload's order
function figures(id, v) {
  var keys = Object.keys(v).filter(function (k) { return !SHOWN_APART[k] && v[k] !== null && v[k] !== undefined; });
  if (!keys.length) return null;
  return el("div", {class: "stats", id: id + "-figures"}, keys.map(function (k) {
    return stat("verdict-" + k, LABELS[k] || k, figureText(k, v[k]), v[k], {source: "verdict", note: v.why}, k === "capture_need_gib" ? "binding" : null,
                /_gib$/.test(k) ? "GiB" : null);
  }));
}
// vLLM's startup checks in its order: phase, check, passed (ok / fails / -), detail and rule
export function checksTable(id, checks) {
  if (!checks || !checks.length) return null;
  var mark = function (p) { return p === true ? "ok" : p === false ? "fails" : "-"; };
  return el("div", {class: "table-wrap"}, el("table", {id: id, "aria-label": "the engine's startup checks, in its order"},
    el("caption", {text: "Startup checks, in the engine's order"}),
    el("thead", {}, el("tr", {}, ["phase", "check", "", "detail"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
    el("tbody", {}, checks.map(function (c) {
      return el("tr", {"data-phase": c.phase, "data-passed": String(c.passed), class: c.passed === false ? "fails" : null, title: c.rule},
        el("td", {text: c.phase}), el("td", {text: c.name}), el("td", {text: mark(c.passed)}), el("td", {text: c.detail}));
    }))));
}
// the whole verdict block: id (its element's), v (the payload's verdict, or null: nothing is drawn), opts:
// {where: "on H200", fix: [what to change, ...] or a cheapest change {change, command, reaches, why}, checks, fixBlock}
export function verdictBlock(id, v, opts) {
  if (!v) return null;
  opts = opts || {};
  var where = opts.where ? " " + opts.where : "";
  var head = v.serves ? "Boots and serves" + where : "Fails" + (v.phase ? " at " + v.phase : "") + where;
  var box = el("div", {class: "verdict " + (v.serves ? "serves" : "fails"), id: id, role: "group", "aria-label": "verdict",
                       "data-serves": String(v.serves), "data-phase": v.phase || ""},
    el("p", {class: "verdict-line", id: id + "-line"}, el("strong", {text: head}), " — " + v.why));
  if (v.message) {
    box.appendChild(el("p", {class: "verdict-message", id: id + "-message"}, el("strong", {text: "The engine's message: "}), v.message,
      v.rule ? el("span", {class: "muted"}, " (rule: ", el("code", {text: v.rule}), ")") : null));
  }
  var figs = figures(id, v);
  if (figs) box.appendChild(figs);
  var conf = confidenceLine(id + "-confidence", v.confidence);
  if (conf) box.appendChild(conf);
  var basis = (v.confidence || {}).basis || [];
  if (basis.length) {
    box.appendChild(el("details", {id: id + "-evidence"}, el("summary", {text: "Evidence (" + basis.length + ")"}),
      el("ul", {}, basis.map(function (b) { return el("li", {text: b}); }))));
  }
  var fix = fixBlock(id + "-fix", opts.fix);
  if (fix) box.appendChild(fix);
  if (opts.fixBlock) box.appendChild(opts.fixBlock);
  var checks = checksTable(id + "-checks", opts.checks);
  if (checks) box.appendChild(checks);
  return box;
}
// what to change: the payload's own advice (a list of lines), or a leg's cheapest change
function fixBlock(id, fix) {
  if (!fix || (Array.isArray(fix) && !fix.length)) return null;
  if (Array.isArray(fix)) {
    return el("div", {class: "verdict-fix", id: id}, el("strong", {text: "What to change: "}),
      el("ul", {}, fix.map(function (w) { return el("li", {text: w}); })));
  }
  return el("div", {class: "verdict-fix", id: id, "data-serves": String(!!fix.serves)},
    el("strong", {text: "Cheapest change: "}), el("code", {text: fix.change || "none found"}),
    fix.reaches ? " — reaches " + fix.reaches : "", fix.why && !fix.serves ? el("p", {class: "muted", text: fix.why}) : null);
}
