// hybridplan page: calls the JSON API (the CLI's functions) and shows the dicts it returns. No model logic here:
// every number on the page is a value from an API payload, only formatted for reading.
(function () {
  "use strict";

  var GIB = 1073741824;

  // ---- small DOM helpers (text only: user input is never parsed as HTML) ----
  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "text") node.textContent = String(v);
        else if (k === "class") node.className = v;
        else node.setAttribute(k, v === true ? "" : String(v));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) node.appendChild(x); });
      else node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  // ---- formatting (display only; raw values stay in data-value) ----
  function fmtInt(n) { return n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US"); }
  function fmtGiB(bytes) { return bytes === null || bytes === undefined ? "-" : (bytes / GIB).toFixed(2) + " GiB"; }
  function fmtBytes(n) { return n === null || n === undefined ? "-" : fmtInt(n) + " B"; }
  function provText(p) {
    if (!p) return "";
    return p.source + (p.note ? ": " + p.note : "");
  }
  // one figure: label, formatted value, raw value and provenance (title = hover, aria-description = focus)
  function stat(key, label, shown, raw, prov, extraClass) {
    var tip = provText(prov);
    return el("div", {class: "stat" + (extraClass ? " " + extraClass : ""), "data-key": key,
                      "data-value": raw === null || raw === undefined ? "" : String(raw), title: tip || null,
                      tabindex: tip ? "0" : null, "aria-description": tip || null},
      el("span", {class: "k", text: label}), el("span", {class: "v", text: shown}));
  }

  // ---- API ----
  function api(path, body) {
    return fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)})
      .then(function (res) {
        return res.text().then(function (text) {
          var data;
          try { data = JSON.parse(text); } catch (e) { data = {error: {message: "server answered " + res.status, type: "HTTPError"}}; }
          return {status: res.status, data: data};
        });
      }, function () {
        return {status: 0, data: {error: {message: "the server is not reachable", type: "NetworkError"}}};
      });
  }
  function showError(box, err) {
    if (!err) { box.hidden = true; clear(box); return; }
    clear(box);
    box.appendChild(el("strong", {text: err.type === "EngineRefusal" || err.rule ? "The engine would refuse to start: " : "Error: "}));
    box.appendChild(document.createTextNode(err.message));
    if (err.rule) box.appendChild(el("div", {class: "muted", text: "rule: " + err.rule}));
    box.hidden = false;
  }

  // ---- URL state: the query string holds every input, so a link reproduces the page ----
  var params = new URLSearchParams(window.location.search);
  function setParams(updates) {
    Object.keys(updates).forEach(function (k) {
      var v = updates[k];
      if (v === null || v === undefined || v === "") params.delete(k); else params.set(k, v);
    });
    var q = params.toString();
    history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
  }

  // ---- Explain ----
  function explainFigures(r) {
    var prov = r.provenance || {};
    var out = [
      stat("slots_per_request", "S state slots / request", fmtInt(r.slots_per_request), r.slots_per_request, prov.slots_per_request),
      stat("draft_states_per_request", "D verify states / request", fmtInt(r.draft_states_per_request), r.draft_states_per_request, prov.draft_states_per_request),
      stat("state_bytes_per_slot", "state / slot", fmtBytes(r.state_bytes_per_slot), r.state_bytes_per_slot, prov.state_bytes_per_slot),
      stat("kv_bytes_per_token", "KV / token", fmtBytes(r.kv_bytes_per_token), r.kv_bytes_per_token, prov.kv_bytes_per_token)
    ];
    return el("div", {class: "stats", id: "explain-geometry"}, out);
  }

  function explainPools(r) {
    if (r.max_mamba_cache_size === null || r.max_mamba_cache_size === undefined) return null;
    var rule = {source: "engine rule"};
    var binding = r.binding_limit;
    return el("div", {},
      el("h3", {text: "Pools"}),
      el("div", {class: "stats", id: "explain-pools"},
        stat("pool_budget_gib", "pool budget", r.pool_budget_gib.toFixed(2) + " GiB", r.pool_budget_gib, {source: "input", note: "total_rest_memory"}),
        stat("max_mamba_cache_size", "K max_mamba_cache_size", fmtInt(r.max_mamba_cache_size), r.max_mamba_cache_size, {source: "engine rule", note: r.mamba_pool_branch + " branch"}),
        stat("state_pool_bytes", "state pool", fmtGiB(r.state_pool_bytes), r.state_pool_bytes, {source: "engine rule", note: "(K + 1) x state/slot"}),
        r.spec_scratch_bytes ? stat("spec_scratch_bytes", "verify scratch", fmtGiB(r.spec_scratch_bytes), r.spec_scratch_bytes, {source: "engine rule", note: r.spec_scratch_rows + " rows x D x state/slot"}) : null,
        stat("kv_budget_bytes", "KV budget", fmtGiB(r.kv_budget_bytes), r.kv_budget_bytes, rule),
        stat("max_total_num_tokens", "KV tokens", fmtInt(r.max_total_num_tokens), r.max_total_num_tokens, {source: "engine rule", note: "KV budget // KV/token, page-floored"}),
        stat("max_running_requests", "max running requests", fmtInt(r.max_running_requests), r.max_running_requests, {source: "engine rule", note: "bound by " + binding}, "binding")),
      limitsTable(r.limits || {}, binding));
  }

  // binding_limit names the flag for the requested cap; the limits object calls it "requested"
  var LIMIT_FOR_BINDING = {max_running_requests: "requested"};
  function limitsTable(limits, binding) {
    var names = {requested: "requested (--max-running-requests or default)", context_estimate: "context estimate",
                 kv_pool: "KV pool", state_pool: "state pool (K // S)"};
    var rows = Object.keys(limits).map(function (k) {
      var isBinding = (LIMIT_FOR_BINDING[binding] || binding) === k;
      return el("tr", {"data-limit": k, class: isBinding ? "binding" : null},
        el("td", {text: names[k] || k}), el("td", {class: "num", "data-value": limits[k] === null ? "" : String(limits[k]), text: fmtInt(limits[k])}),
        el("td", {text: isBinding ? "binding" : ""}));
    });
    return el("table", {id: "explain-limits", "aria-label": "request limits"},
      el("thead", {}, el("tr", {}, el("th", {scope: "col", text: "limit on running requests"}), el("th", {scope: "col", text: "requests"}), el("th", {scope: "col", text: ""}))),
      el("tbody", {}, rows));
  }

  function argsTable(args) {
    var rows = Object.keys(args || {}).map(function (name) {
      var a = args[name];
      return el("tr", {"data-arg": name}, el("td", {}, el("code", {text: name})),
        el("td", {class: "mono", text: a.value === null ? "None" : JSON.stringify(a.value)}),
        el("td", {text: a.source}), el("td", {class: "muted", text: a.rule || ""}));
    });
    return el("details", {}, el("summary", {text: "Resolved engine arguments (" + rows.length + ")"}),
      el("table", {}, el("thead", {}, el("tr", {}, ["argument", "value", "source", "rule"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
        el("tbody", {}, rows)));
  }

  function listBlock(id, title, items, cls) {
    if (!items || !items.length) return null;
    return el("div", {id: id}, el("h3", {text: title}),
      el("ul", {class: cls || ""}, items.map(function (w) { return el("li", {text: w}); })));
  }

  function renderExplain(r) {
    var out = clear($("explain-out"));
    var m = r.model || {};
    out.appendChild(el("p", {id: "explain-model"},
      el("strong", {text: m.architecture || ""}),
      " (" + (m.family || "?") + ", " + (m.linear_layer_ids || []).length + " state + " +
      (m.full_attention_layer_ids || []).length + " full-attention layers) from " + (m.source || "?") +
      " — sglang " + ((r.engine || {}).version || "")));
    out.appendChild(explainFigures(r));
    var pools = explainPools(r);
    if (pools) out.appendChild(pools);
    var warn = listBlock("explain-warnings", "Warnings and silent caps", r.warnings, "warnings");
    if (warn) out.appendChild(warn);
    var notes = listBlock("explain-notes", "Model notes", m.notes);
    if (notes) out.appendChild(notes);
    if (r.log_lines && r.log_lines.length) {
      out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
      out.appendChild(el("pre", {id: "explain-log-lines", text: r.log_lines.join("\n")}));
    }
    out.appendChild(argsTable(r.args));
  }

  // ---- boot log: `logs check` (predicted vs observed, with the rule behind each difference) ----
  function fmtCell(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v === "number") return Number.isInteger(v) ? fmtInt(v) : String(Math.round(v * 10000) / 10000);
    return String(v);
  }

  function renderLogCheck(d) {
    var out = clear($("logcheck-out"));
    out.appendChild(el("h3", {text: "Boot log: predicted vs observed"}));
    var px = d.proxies || {};
    out.appendChild(el("div", {class: "stats", id: "logcheck-proxies"}, Object.keys(px).filter(function (k) {
      return px[k] && px[k].value !== null;
    }).map(function (k) { return stat(k, k, fmtCell(px[k].value), px[k].value, px[k]); })));
    var rows = (d.rows || []).map(function (r) {
      return el("tr", {"data-quantity": r.quantity, class: r.match ? null : "diff"},
        el("td", {}, el("code", {text: r.quantity})), el("td", {class: "num", text: fmtCell(r.observed)}),
        el("td", {class: "num", text: fmtCell(r.predicted)}), el("td", {text: r.rule}),
        el("td", {class: "muted", text: r.explanation || ""}));
    });
    if (rows.length) {
      out.appendChild(el("table", {id: "logcheck-rows"}, el("thead", {}, el("tr", {},
        ["quantity", "observed", "predicted", "rule", "why"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
        el("tbody", {}, rows)));
    }
    if (d.refusal) {
      out.appendChild(el("div", {class: "alert error", id: "logcheck-refusal"},
        el("strong", {text: "Refusal (" + d.refusal.kind + "): "}), d.refusal.observed,
        el("div", {text: d.refusal.explanation})));
    } else if (d.failure) {
      out.appendChild(el("div", {class: "alert error", id: "logcheck-failure"},
        el("strong", {text: "Failed in phase " + d.failure.phase + ": "}), d.failure.message));
    }
    var notes = listBlock("logcheck-notes", "Notes", d.notes);
    if (notes) out.appendChild(notes);
    out.appendChild(el("p", {id: "logcheck-verdict", class: d.explained ? "alert info" : "alert warn",
      text: d.explained ? "Every difference is explained." : "Some differences stay unexplained."}));
  }

  function runLogCheck(command) {
    var log = $("explain-log").value;
    var errBox = $("logcheck-error");
    if (!log.trim()) { clear($("logcheck-out")); showError(errBox, null); return Promise.resolve(); }
    return api("/api/logs/check", {log: log, command: command, engine_version: $("explain-version").value || null,
                                   log_version: $("explain-log-version").value.trim() || null})
      .then(function (res) {
        showError(errBox, res.status === 200 ? null : res.data.error);
        if (res.status === 200) renderLogCheck(res.data); else clear($("logcheck-out"));
      });
  }

  function runExplain() {
    var command = $("explain-command").value.trim();
    var budgetText = $("explain-budget").value.trim();
    var errBox = $("explain-error");
    if (!command) { showError(errBox, {message: "paste a launch command first", type: "BadInput"}); return Promise.resolve(); }
    var body = {command: command, engine_version: $("explain-version").value || null};
    if (budgetText) {
      var b = Number(budgetText);
      if (!isFinite(b)) { showError(errBox, {message: "the pool budget must be a finite number", type: "BadInput"}); return Promise.resolve(); }
      body.pool_budget_gib = b;
    }
    setParams({cmd: command, budget: budgetText});
    $("explain-run").disabled = true;
    return Promise.all([api("/api/explain", body), runLogCheck(command)]).then(function (all) {
      $("explain-run").disabled = false;
      var d = all[0].data;
      showError(errBox, d.error || null);
      if (d.model) renderExplain(d); else clear($("explain-out"));
    });
  }

  function initExplain() {
    var form = $("explain-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) { ev.preventDefault(); runExplain(); });
    $("explain-command").addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runExplain(); }
    });
    if (params.get("cmd")) {
      $("explain-command").value = params.get("cmd");
      $("explain-budget").value = params.get("budget") || "";
      runExplain();
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    initExplain();
  });
})();
