// Explain's boot-log box: `logs check` (SGLang: predicted vs observed against the command; vLLM: each number the
// log states beside the prediction, the log's own launch line winning). A log the other engine wrote is not sent:
// the box says which engine wrote it and offers the switch. The URL keeps the log's digest, never the log.

import { api } from "../lib/api.js";
import { gpus } from "../lib/catalogs.js";
import { $, clear, el } from "../lib/dom.js";
import { showError } from "../lib/errors.js";
import { listBlock, stat } from "../lib/figures.js";
import { exactText, fmtCell, fmtInt } from "../lib/format.js";
import { dropParam, params, setParams } from "../lib/url-state.js";
import { ENGINES, explainEngine } from "./explain-engine.js";

function renderLogCheck(d) {
  var out = clear($("logcheck-out"));
  out.appendChild(el("h3", {text: "Boot log: predicted vs observed"}));
  var px = d.proxies || {};
  out.appendChild(el("div", {class: "stats", id: "logcheck-proxies"}, Object.keys(px).filter(function (k) {
    return px[k] && px[k].value !== null;
  }).map(function (k) { return stat(k, k, fmtCell(px[k].value), px[k].value, px[k]); })));
  var rows = (d.rows || []).map(function (r) {
    return el("tr", {"data-quantity": r.quantity, class: r.match ? null : "diff"},
      el("td", {}, el("code", {text: r.quantity})), el("td", {class: "num", text: fmtCell(r.observed), title: exactText(r.observed)}),
      el("td", {class: "num", text: fmtCell(r.predicted), title: exactText(r.predicted)}), el("td", {text: r.rule}),
      el("td", {class: "muted", text: r.explanation || ""}));
  });
  if (rows.length) {
    out.appendChild(el("div", {class: "table-wrap"}, el("table", {id: "logcheck-rows"}, el("thead", {}, el("tr", {},
      ["quantity", "observed", "predicted", "rule", "why"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
      el("tbody", {}, rows))));
  }
  if (d.refusal) {
    out.appendChild(el("div", {class: "alert error", id: "logcheck-refusal"},
      el("strong", {text: "Refusal (" + d.refusal.kind + "): "}), d.refusal.observed,
      el("div", {text: d.refusal.explanation})));
  } else if (d.failure) {
    out.appendChild(failureBlock("Failed in phase " + d.failure.phase + ": ", d.failure.message, d.failure.chained));
  }
  var notes = listBlock("logcheck-notes", "Notes", d.notes);
  if (notes) out.appendChild(notes);
  appendMissing(out, d);
  out.appendChild(el("p", {id: "logcheck-verdict", class: d.explained ? "alert info" : "alert warn",
    text: d.explained ? "Every difference is explained." : d.compared ? "Some differences stay unexplained." :
      nothingCompared(d)}));
}
// the root error, and what was raised after it (while handling it, or carrying it out of the engine process)
function failureBlock(head, message, chained) {
  var after = chained ? [].concat(chained) : [];
  return el("div", {class: "alert error", id: "logcheck-failure"}, el("strong", {text: head}), message,
    after.length ? el("div", {class: "muted", text: "then raised: " + after.join(" / ")}) : null);
}
// the lines a check needs that the log lacks: a check on nothing never passes
function appendMissing(out, d) {
  var missing = listBlock("logcheck-missing", "Not in the log", d.missing);
  if (missing) out.appendChild(missing);
}
function nothingCompared(d) {
  return "Nothing compared: the log states none of the figures the check holds against the model" +
    (d.failure ? " (the boot failed first)." : ".");
}
// `logs check --engine vllm --json`: each number the vLLM log states beside the prediction, or the rule that differs
var VLLM_UNITS = {block_size: " tokens", max_model_len: " tokens", kv_cache_tokens: " tokens", max_concurrency: "x",
                  padding_pct: " %", requested_gib: " GiB", kv_cache_memory_gib: " GiB"};
function renderVllmLogCheck(d) {
  var out = clear($("logcheck-out"));
  var unit = function (q, v) { return fmtCell(v) + (VLLM_UNITS[q] || ""); };
  out.appendChild(el("h3", {text: "Boot log: predicted vs logged (vLLM)"}));
  out.appendChild(el("p", {id: "logcheck-vllm-about"}, "vLLM log (release " + (d.log_release || "not stated") +
    "), checked by hybridplan's vLLM " + d.modelled_release + " model on sm" + d.sm +
    (d.gpu ? " (" + ((gpus[d.gpu] || {}).name || d.gpu) + ")" : " (no GPU picked)") + " from " +
    (d.available_kv_gib === null ? "no logged available KV memory." : d.available_kv_gib + " GiB of available KV memory.")));
  if (d.available_kv_gib !== null) out.appendChild(el("div", {class: "stats", id: "logcheck-vllm-figures"},
    stat("available_kv_gib", "available KV memory (logged)", d.available_kv_gib + " GiB", d.available_kv_gib, {source: "input", note: "the log's Available KV cache memory (the smallest worker's)"}),
    stat("blocks_per_request", "blocks / request", fmtInt(d.blocks_per_request), d.blocks_per_request, {source: "engine rule", note: "at the logged max_model_len"}),
    stat("state_pages_per_request", "of them state pages", fmtInt(d.state_pages_per_request), d.state_pages_per_request, {source: "engine rule"})));
  var rows = (d.checks || []).map(function (c) {
    var pred = Array.isArray(c.predicted) ? c.predicted : [c.predicted];
    return el("tr", {"data-quantity": c.quantity, class: c.match ? null : "diff"},
      el("td", {}, el("code", {text: c.quantity})),
      el("td", {class: "num", "data-value": JSON.stringify(c.logged), title: exactText(c.logged), text: unit(c.quantity, c.logged)}),
      el("td", {class: "num", "data-value": JSON.stringify(c.predicted), text: pred.map(function (v) { return unit(c.quantity, v); }).join(" / "),
                title: pred.length > 1 ? "every value vLLM logs for a memory that rounds to the logged GiB" : exactText(pred[0])}),
      el("td", {text: c.match ? "predicted" : "differs: " + c.rule}));
  });
  if (rows.length) {
    // focusable: at phone width the table scrolls sideways, and a keyboard must reach it
    out.appendChild(el("div", {class: "table-wrap", tabindex: "0", role: "region", "aria-label": "logged vs predicted"},
      el("table", {id: "logcheck-rows"}, el("thead", {}, el("tr", {},
      ["quantity", "logged", "predicted", "rule"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
      el("tbody", {}, rows))));
  }
  var est = (d.memory || {}).estimates;
  if (est && est.terms.length) {  // the card-alone timeline beside what the boot measured (estimates, not checks)
    var gib = function (v) { return v === null ? "-" : v.toFixed(2) + " GiB"; };
    out.appendChild(el("div", {class: "table-wrap", tabindex: "0", role: "region", "aria-label": "card-alone estimate vs the boot"},
      el("table", {id: "logcheck-vllm-estimates"},
        el("caption", {text: "The card-alone memory timeline (explain --engine vllm --gpu) against what this boot measured"}),
        el("thead", {}, el("tr", {}, ["term", "estimate", "logged", "error", "from"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
        el("tbody", {}, est.terms.map(function (t) {
          return el("tr", {"data-term": t.term},
            el("td", {}, el("code", {text: t.term})),
            el("td", {class: "num", "data-value": String(t.estimate_gib), title: t.note, text: gib(t.estimate_gib)}),
            el("td", {class: "num", "data-value": t.logged_gib === null ? "" : String(t.logged_gib), text: gib(t.logged_gib)}),
            el("td", {class: "num", text: t.error_gib === null ? "-" : (t.error_gib > 0 ? "+" : "") + t.error_gib.toFixed(2)}),
            el("td", {text: t.source}));
        })))));
  } else if (est) {
    out.appendChild(el("p", {id: "logcheck-vllm-estimates-note", class: "muted", text: "No card-alone estimate: " + est.note}));
  }
  out.appendChild(el("details", {id: "logcheck-launch"}, el("summary", {text: "The launch it was read with"}),
    el("pre", {class: "command", tabindex: "0", "aria-label": "launch", text: d.launch})));
  if (d.failure) out.appendChild(failureBlock("Failed: " + d.failure.type + ": ", d.failure.message, d.failure.chained));
  appendMissing(out, d);
  out.appendChild(el("p", {id: "logcheck-verdict", class: d.explained ? "alert info" : "alert warn",
    text: d.explained ? "Every logged number is predicted." :
      rows.length ? "Some logged numbers differ from the prediction: the rule behind each is named." : nothingCompared(d)}));
}

// which engine wrote a pasted log, by lines only that engine prints (null: neither); a log of the other engine is
// not sent, so it never reads as a confusing error of the selected one
var LOG_MARKS = {vllm: ["non-default args:", "Available KV cache memory:", "GPU KV cache size:", "Maximum concurrency for",
                        "Free memory on device ("],
                 sglang: ["Load weight begin", "Load weight end", "max_total_num_tokens=", "KV Cache is allocated", "max_mamba_cache_size"]};
function logEngine(text) {
  var hit = null;
  ["vllm", "sglang"].some(function (name) {
    var mark = LOG_MARKS[name].filter(function (m) { return text.indexOf(m) >= 0; })[0];
    if (mark) hit = {engine: name, mark: mark};
    return !!mark;
  });
  return hit;
}
// the note that the log is the other engine's (null: hidden), with a button switching Explain to that engine
export function showLogEngine(wrote) {
  var box = clear($("logcheck-engine"));
  box.hidden = !wrote;
  if (!wrote) return;
  var name = ENGINES[wrote.engine].name;
  var button = el("button", {type: "button", class: "ghost small", id: "logcheck-switch", text: "Check it as " + name});
  button.addEventListener("click", function () {
    // the engine chip's own click: the same switch as picking the engine by hand
    document.querySelector('#explain-engine [data-engine="' + wrote.engine + '"]').click();
    runLogCheck($("explain-command").value.trim() || null);
  });
  box.appendChild(document.createTextNode("This is a " + name + " boot log (it has \u201c" + wrote.mark + "\u201d) and Explain is on " +
    ENGINES[explainEngine].name + ": not checked. "));
  box.appendChild(button);
}

// "sha256:<16 hex>" of the log text, or null where the browser has no WebCrypto (a non-local plain-http page)
function digest(text) {
  if (!(window.crypto && crypto.subtle)) return Promise.resolve(null);
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then(function (buf) {
    return "sha256:" + Array.prototype.map.call(new Uint8Array(buf).slice(0, 8), function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  });
}
var linkDigest = null;  // the digest a link carried (its log is not in the link)
function drawDigest(current) {
  var box = $("explain-log-digest");
  if (!linkDigest && !current) { box.textContent = ""; return; }
  if (linkDigest && !current) box.textContent = "This link was made with a boot log (" + linkDigest + "); paste the same log to check it again.";
  else if (linkDigest && current !== linkDigest) box.textContent = "This log (" + current + ") is not the one the link was made with (" + linkDigest + ").";
  else box.textContent = "Log digest " + current + (linkDigest ? ": the link's log." : " (kept in the link; the log itself is not).");
}
// the link's log digest (ld): the box opens and says which log the link was made with
export function readLinkDigest() {
  if (!params.has("ld")) return;
  if (/^sha256:[0-9a-f]{16}$/.test(params.get("ld"))) { linkDigest = params.get("ld"); $("explain-log-box").open = true; drawDigest(null); }
  else dropParam("ld", "not a log digest");
}

// check the pasted log (if any) with Explain's engine; `command` is the launch it is held against (vLLM: only where
// the log has no launch line of its own). Resolves with the API answer, or undefined when nothing was sent.
export function runLogCheck(command) {
  var log = $("explain-log").value;
  var errBox = $("logcheck-error");
  showLogEngine(null);
  if (!log.trim()) { clear($("logcheck-out")); showError(errBox, null); setParams({ld: linkDigest}); drawDigest(null); return Promise.resolve(); }
  digest(log).then(function (dg) { if (dg) { setParams({ld: dg}); drawDigest(dg); } });
  var wrote = logEngine(log);
  if (wrote && wrote.engine !== explainEngine) {
    clear($("logcheck-out")); showError(errBox, null); showLogEngine(wrote);
    return Promise.resolve();
  }
  var vllm = explainEngine === "vllm";
  // vLLM: the log's own launch line wins (the CLI's `logs check --engine vllm LOG`); the command only stands in for it
  var body = vllm ? {log: log, engine: "vllm", gpu: $("explain-gpu").value || null,
                     command: log.indexOf("non-default args:") >= 0 ? null : command} :
    {log: log, command: command, engine_version: $("explain-version").value || null,
     log_version: $("explain-log-version").value.trim() || null};
  return api("/api/logs/check", body).then(function (res) {
    showError(errBox, res.status === 200 ? null : res.data.error);
    if (res.status !== 200) clear($("logcheck-out"));
    else if (vllm) renderVllmLogCheck(res.data); else renderLogCheck(res.data);
    return res;
  });
}
