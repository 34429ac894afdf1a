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


  // ---- Deploy: a cookbook page's selection -> `cookbook render --json` ----
  // reserved query keys; every other key is a dimension pick (the docs' hash holds the selection the same way)
  var RESERVED = {page: 1, run: 1, L: 1, C: 1, cmd: 1, budget: 1, egpu: 1, pm: 1, pq: 1, ps: 1, pg: 1, ptp: 1,
                  pL: 1, pC: 1};
  var deploy = {page: null, layout: null, picks: {}, run: "pip", L: null, C: null, last: null, seq: 0};

  // cell warnings may link to an anchor on the page, written [label](#anchor); nothing else becomes markup
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

  function urlPicks() {
    var picks = {};
    params.forEach(function (v, k) { if (!RESERVED[k]) picks[k] = v; });
    return picks;
  }

  function optionLabel(d, dim, id) {
    var o = ((d.options || {})[dim] || []).filter(function (x) { return x.id === id; })[0];
    return o ? o.label : id;
  }

  function rowTitle(dim) {
    var r = (deploy.layout.rows || []).filter(function (x) { return x.id === dim; })[0];
    return r ? r.title : dim;
  }

  function chip(dim, o, selected) {
    var b = el("button", {type: "button", class: "chip", "data-dim": dim, "data-option": o.id,
                          "aria-pressed": selected ? "true" : "false", "aria-disabled": o.disabled ? "true" : null,
                          title: o.disabled ? o.reason : null}, o.label);
    b.addEventListener("click", function () {
      var reason = $("reason-" + dim);
      if (o.disabled) { reason.textContent = o.label + ": " + (o.reason || "not available for this selection"); return; }
      reason.textContent = "";
      if (selected) return;
      var picks = Object.assign({}, deploy.picks);
      picks[dim] = o.id;
      renderDeploy(picks);
    });
    b.addEventListener("focus", function () {
      if (o.disabled) $("reason-" + dim).textContent = o.label + ": " + (o.reason || "not available for this selection");
    });
    return b;
  }

  function drawRows(d) {
    var box = clear($("deploy-rows"));
    (deploy.layout.rows || []).forEach(function (r) {
      var opts = (d.options || {})[r.id];
      if (!opts) return;  // hidden row for this selection
      box.appendChild(el("fieldset", {id: "row-" + r.id, "data-kind": r.kind},
        el("legend", {text: r.title}),
        el("div", {class: "chips", role: "group", "aria-label": r.title},
          opts.map(function (o) { return chip(r.id, o, d.selection[r.id] === o.id); })),
        el("p", {class: "reason", id: "reason-" + r.id, "aria-live": "polite"})));
    });
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
    $("deploy-command").textContent = d.redirect ? "" : d.command;
    $("deploy-copy").disabled = d.redirect || !d.cell;
    var w = clear($("deploy-warnings"));
    (d.warnings || []).forEach(function (t) { w.appendChild(el("div", {class: "alert warn"}, withLinks(t))); });
    (d.notes || []).forEach(function (t) { w.appendChild(el("div", {class: "alert info"}, withLinks(t))); });
    var v = clear($("deploy-verification"));
    var ver = d.verification || {};
    v.appendChild(el("p", {}, "Model: ", el("code", {text: d.model_name || "-"}),
      d.docker_image ? el("span", {}, " · image ", el("code", {text: d.docker_image})) : null,
      ver.build ? el("span", {}, " · pins measured on build ", el("code", {text: ver.build})) : null));
    (ver.measurements || []).forEach(function (m) {
      v.appendChild(el("p", {class: "muted", text: [m.date, m.outcome, m.protocol, m.source].filter(Boolean).join(" · ")}));
    });
    var inst = deploy.layout.install || {};
    if (inst.pip && inst.pip.length) v.appendChild(el("pre", {text: inst.pip.join("\n")}));
    if (inst.note) v.appendChild(el("p", {class: "muted", text: inst.note}));
  }

  function deployBody(picks, docker) {
    return {page: deploy.page, picks: picks, docker: docker, request_length: deploy.L, concurrency: deploy.C};
  }

  function renderDeploy(picks, fromUrl, stale) {
    var seq = ++deploy.seq;
    var docker = deploy.run === "docker";
    var calls = [api("/api/render", deployBody(picks, false))];
    if (docker) calls.push(api("/api/render", deployBody(picks, true)));
    return Promise.all(calls).then(function (all) {
      if (seq !== deploy.seq) return null;  // a newer selection is on its way
      var pip = all[0];
      if (pip.status !== 200) {
        showError($("deploy-error"), pip.data.error);
        if (fromUrl) return renderDeploy({}, false, pip.data.error);  // a stale link: show the page's defaults
        return null;
      }
      showError($("deploy-error"), stale ? {message: stale.message + " (the link's selection; showing the page's defaults)",
                                            type: stale.type} : null);
      var shown = docker ? all[1].data : pip.data;
      deploy.picks = pip.data.selection;
      deploy.last = pip.data;
      drawDeploy(shown);
      var q = {page: deploy.page, run: deploy.run === "pip" ? null : deploy.run, L: deploy.L, C: deploy.C};
      params.forEach(function (v, k) { if (!RESERVED[k]) q[k] = null; });
      Object.keys(deploy.picks).forEach(function (k) { if (!RESERVED[k]) q[k] = deploy.picks[k]; });
      setParams(q);
      return Promise.all([runCalculator(pip.data, seq), runMemory(pip.data, seq)]);
    });
  }

  function loadPage(pageId, picks, fromUrl) {
    deploy.page = pageId;
    return fetch("/api/pages/" + encodeURIComponent(pageId)).then(function (r) { return r.json(); }).then(function (layout) {
      if (layout.error) { showError($("deploy-error"), layout.error); return null; }
      deploy.layout = layout;
      $("deploy-desc").textContent = layout.description || "";
      var w = layout.workload || {};
      if (deploy.L === null || !fromUrl) deploy.L = w.request_length || null;
      if (deploy.C === null || !fromUrl) deploy.C = w.concurrency || null;
      $("calc-L").value = deploy.L || "";
      $("calc-C").value = deploy.C || "";
      return renderDeploy(picks, fromUrl);
    });
  }

  function hardware() {
    var hw = deploy.picks.hw;
    return ((deploy.layout || {}).hardware || []).filter(function (x) { return x.id === hw; })[0] || {};
  }


  // ---- Memory picture: the `breakdown` of `explain --gpu` / `plan` as a stacked SVG bar ----
  var SVGNS = "http://www.w3.org/2000/svg";
  // segment key -> label, colour class, and the timeline entry whose note says where the number comes from
  var SEGMENTS = [
    ["driver_reserved_gib", "driver reserved", "seg-slack", "visible_gib"],
    ["context_gib", "CUDA context", "seg-slack", "context_gib"],
    ["weights_gib", "weights", "seg-weights", "target_weights_gib"],
    ["draft_weights_gib", "draft weights", "seg-draft", "draft_weights_gib"],
    ["state_pool_gib", "state pool", "seg-state", null],
    ["spec_scratch_gib", "spec verify scratch", "seg-scratch", null],
    ["kv_pool_gib", "KV pool", "seg-kv", null],
    ["cuda_graphs_activations_gib", "CUDA graphs + activations", "seg-graphs", "headroom_gib"],
    ["free_gib", "slack left", "seg-free", null]
  ];
  var POOL_NOTES = {
    state_pool_gib: "conv + SSM state as the engine allocates them ((K + 1) rows)",
    spec_scratch_gib: "intermediate SSM / conv-window verify buffers",
    kv_pool_gib: "K + V caches for max_total_num_tokens (+ one page of padding)",
    free_gib: "the card less everything else"
  };

  function svg(tag, attrs) {
    var n = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] !== null && attrs[k] !== undefined) n.setAttribute(k, String(attrs[k])); });
    return n;
  }

  function memoryPicture(b, timeline, title, id) {
    var parts = SEGMENTS.filter(function (s) { return b[s[0]] !== null && b[s[0]] !== undefined; });
    var positive = parts.reduce(function (a, s) { return a + Math.max(0, b[s[0]]); }, 0);
    var total = Math.max(b.capacity_gib || 0, positive);  // an over-committed card draws past its capacity line
    var wrap = el("figure", {class: "memory", id: id});
    wrap.appendChild(el("figcaption", {text: title + (b.capacity_gib ? " — " + b.capacity_gib.toFixed(2) + " GiB" : "")}));
    var box = svg("svg", {viewBox: "0 0 1000 64", role: "list", "aria-label": title, preserveAspectRatio: "none"});
    var tip = el("p", {class: "tip", "aria-live": "polite"});
    var x = 0;
    parts.forEach(function (s) {
      var gib = b[s[0]];
      var bytes = Math.round(gib * GIB);
      var src = (b.sources || {})[s[0]] || "";
      var note = s[3] && timeline && timeline[s[3]] ? timeline[s[3]].note : POOL_NOTES[s[0]] || "";
      var text = s[1] + ": " + gib.toFixed(2) + " GiB (" + fmtInt(bytes) + " B) — " + src + (note ? ": " + note : "");
      var w = total > 0 ? Math.max(0, gib) / total * 1000 : 0;
      var r = svg("rect", {x: x, y: 0, width: w, height: 64, class: s[2], tabindex: w > 0 ? 0 : null, role: "listitem",
                           "aria-label": text, "data-segment": s[0], "data-gib": gib, "data-bytes": bytes, "data-source": src});
      var t = svg("title", {}); t.textContent = text; r.appendChild(t);
      var show = function () { tip.textContent = text; };
      r.addEventListener("mouseenter", show); r.addEventListener("focus", show);
      box.appendChild(r);
      x += w;
    });
    if (b.capacity_gib && positive > b.capacity_gib) {
      var cx = b.capacity_gib / total * 1000;
      box.appendChild(svg("line", {x1: cx, x2: cx, y1: 0, y2: 64, class: "capacity", "data-capacity": b.capacity_gib}));
    }
    wrap.appendChild(box);
    wrap.appendChild(el("div", {class: "legend"}, parts.map(function (s) {
      return el("span", {"data-segment": s[0]}, el("span", {class: "sw " + s[2]}), s[1] + " " + b[s[0]].toFixed(2) + " GiB");
    })));
    wrap.appendChild(tip);
    if (b.free_gib !== null && b.free_gib < 0) {
      wrap.appendChild(el("div", {class: "alert warn", text: "Over by " + (-b.free_gib).toFixed(2) + " GiB: the planner's " +
        "estimate of CUDA graphs + activations (" + b.cuda_graphs_activations_gib.toFixed(2) + " GiB) is more than the " +
        "pools leave; the line marks the card's capacity."}));
    }
    return wrap;
  }

  function timelineTable(tl) {
    var rows = Object.keys(tl || {}).filter(function (k) { return tl[k] && typeof tl[k] === "object" && "value" in tl[k]; });
    return el("details", {class: "timeline"}, el("summary", {text: "Memory timeline (one GPU)"}),
      el("table", {}, el("tbody", {}, rows.map(function (k) {
        var v = tl[k];
        return el("tr", {"data-step": k}, el("td", {}, el("code", {text: k})),
          el("td", {class: "num", text: typeof v.value === "number" ? (k.indexOf("fraction") >= 0 ? String(v.value) : v.value.toFixed(2)) : String(v.value)}),
          el("td", {text: v.source}), el("td", {class: "muted", text: v.note || ""}));
      }))));
  }

  function runMemory(r, seq) {
    var out = clear($("memory-out"));
    var hw = hardware();
    if (!r.cell || r.redirect || !hw.gpu) {
      out.appendChild(el("p", {class: "muted", text: !hw.gpu && r.cell ? "The selected hardware names no GPU in the catalog." : "No command to size."}));
      return Promise.resolve();
    }
    return api("/api/explain", {command: r.command, gpu: hw.gpu, engine_version: r.engine_version || null}).then(function (res) {
      if (seq !== deploy.seq) return;
      var d = res.data;
      showError($("memory-error"), d.error || null);
      clear(out);
      if (!d.memory || !d.memory.breakdown) return;
      out.appendChild(memoryPicture(d.memory.breakdown, d.memory.timeline, hw.label + " running the Deploy command", "memory-deploy"));
      out.appendChild(el("div", {class: "stats", id: "memory-pools"},
        stat("max_mamba_cache_size", "K state slots", fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule", note: d.mamba_pool_branch + " branch"}),
        stat("max_total_num_tokens", "KV tokens", fmtInt(d.max_total_num_tokens), d.max_total_num_tokens, {source: "engine rule"}),
        stat("max_running_requests", "max running requests", fmtInt(d.max_running_requests), d.max_running_requests, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding")));
      (d.memory.warnings || []).forEach(function (w) { out.appendChild(el("div", {class: "alert warn", text: w})); });
      out.appendChild(timelineTable(d.memory.timeline));
    });
  }

  // ---- Calculator: `ratio --json --gpu <card> -L L -C C -- <the Deploy command>` ----
  function runCalculator(r, seq) {
    var out = clear($("calc-out"));
    var errBox = $("calc-error");
    if (!r.cell || r.redirect || !deploy.L || !deploy.C) {
      showError(errBox, null);
      out.appendChild(el("p", {class: "muted", text: r.redirect ? "This selection points elsewhere; no command to size." :
        !r.cell ? "No command for this selection." : "Give L and C."}));
      return Promise.resolve();
    }
    var hw = hardware();
    var gpu = hw.gpu || null;
    var body = {command: r.command, request_length: deploy.L, concurrency: deploy.C, gpu: gpu,
                engine_version: r.engine_version || null};
    return api("/api/ratio", body).then(function (res) {
      if (seq !== deploy.seq) return;  // an answer for a selection the user already left
      if (res.status !== 200) { showError(errBox, res.data.error); return; }
      showError(errBox, null);
      drawCalculator(res.data, r, hw.label || gpu);
    });
  }

  function drawCalculator(q, r, card) {
    var out = clear($("calc-out"));
    var f = q.formula || {};
    var base = (r.ratio || {}).base || null;
    var cell = (r.ratio || {}).cell || null;
    out.appendChild(el("div", {class: "stats", id: "calc-geometry"},
      stat("slots_per_request", "S slots / request", fmtInt(q.slots_per_request), q.slots_per_request, {source: "engine rule", note: "_calculate_mamba_ratio"}),
      stat("draft_states_per_request", "D verify states", fmtInt(q.draft_states_per_request), q.draft_states_per_request, {source: "engine rule"}),
      stat("state_bytes_per_slot", "state / slot", fmtBytes(q.state_bytes_per_slot), q.state_bytes_per_slot, {source: "engine rule", note: "from config"}),
      stat("kv_bytes_per_token", "KV / token", fmtBytes(q.kv_bytes_per_token), q.kv_bytes_per_token, {source: "engine rule", note: "draft KV folded in"})));
    var pinned = (r.ratio || {}).pinned;
    // the state-pool flag the command carries (the payload's own flag string, shown as it is)
    var sizing = (r.flags || []).filter(function (x) {
      return x.indexOf("--mamba-full-memory-ratio") === 0 || x.indexOf("--max-mamba-cache-size") === 0;
    });
    var inCommand = sizing.length ? sizing.join(" ") : null;
    out.appendChild(el("div", {class: "stats", id: "calc-answer"},
      inCommand ? stat("in_command", "in the command (" + (pinned === "calculator" ? "calculator" : "pinned by the " + pinned) + ")",
                       inCommand, inCommand, {source: pinned === "calculator" ? "engine rule" : "input", note: pinned === "calculator" ? f.text || "" : "the recipe's own pin"}, "binding") : null,
      stat("pinned_ratio", "balanced ratio (the base command)", base && base.text !== null ? base.text : "-",
           base ? base.mamba_full_memory_ratio : null, {source: "engine rule", note: f.text || ""}),
      stat("max_mamba_cache_size_pin", "or --max-mamba-cache-size", fmtInt(q.max_mamba_cache_size_pin), q.max_mamba_cache_size_pin, {source: "engine rule", note: f.pin_text || ""}),
      q.budget ? stat("exact_ratio", "exact on " + (card || "this card"), q.mamba_full_memory_ratio_text || "none", q.mamba_full_memory_ratio,
                      {source: q.budget.source, note: "search over the engine's sizing; binding: " + q.binding_pool}) : null,
      q.pin_fits === null || q.pin_fits === undefined ? null :
        stat("pin_fits", "pin fits on " + (card || "this card"), q.pin_fits ? "yes" : "no", q.pin_fits, {source: "engine rule", note: (q.pin_check || {}).reason || ""})));
    var status;
    if (pinned === "calculator") status = "The recipe sizes nothing itself, so the command carries the balanced ratio " + (base || {}).text + ".";
    else if (pinned === "cell") status = "The recipe's cell sizes the state pool itself; the calculator's balanced value stands beside it.";
    else if (pinned === "overlay") status = "An overlay pick replaces the calculator's value with its own pin; the balanced value for the base command stands beside it.";
    else status = "No ratio is pinned into the command.";
    out.appendChild(el("p", {id: "calc-status", text: status}));
    if (cell && base && cell.text !== base.text) {
      out.appendChild(el("p", {id: "calc-base", "data-value": String(cell.text)},
        "The overlays change it: the cell's own command balances at ", el("code", {text: cell.text}),
        ", the command with your overlays at ", el("code", {text: base.text}), "."));
    }
    if (q.pin_fits === false && q.pin_check && q.pin_check.reason) {
      out.appendChild(el("div", {class: "alert warn", text: "The pin for C = " + q.concurrency + " does not fit: " + q.pin_check.reason}));
    }
    if (q.reason) out.appendChild(el("div", {class: "alert info", text: q.reason}));
    var warn = listBlock("calc-warnings", "Notes", q.warnings);
    if (warn) out.appendChild(warn);
    var details = el("details", {id: "calc-formula"}, el("summary", {text: "Formula"}),
      el("p", {}, el("code", {text: f.text || ""})),
      el("p", {class: "mono", text: "(" + f.S + " + " + f.D + ") x " + fmtInt(f.state_bytes_per_slot) + " / (" +
        fmtInt(f.L) + " x " + fmtInt(f.kv_bytes_per_token) + ") = " + (f.value === null ? "-" : String(f.value))}),
      el("p", {}, el("code", {text: f.pin_text || ""})),
      el("p", {class: "mono", text: "C = " + f.C + ", attn_dp_size = " + f.attn_dp_size + " -> pin " + fmtInt(f.pin)}));
    out.appendChild(details);
  }

  var calcTimer = null;
  function onWorkload() {
    var L = parseInt($("calc-L").value, 10), C = parseInt($("calc-C").value, 10);
    if (!(L >= 1) || !(C >= 1)) { showError($("calc-error"), {message: "L and C must be positive whole numbers", type: "BadInput"}); return; }
    deploy.L = L; deploy.C = C;
    clearTimeout(calcTimer);
    calcTimer = setTimeout(function () { renderDeploy(deploy.picks); }, 200);
  }

  function initDeploy() {
    if (!$("deploy")) return Promise.resolve();
    deploy.run = params.get("run") === "docker" ? "docker" : "pip";
    Array.prototype.forEach.call(document.querySelectorAll("#deploy-run .chip"), function (b) {
      b.setAttribute("aria-pressed", b.getAttribute("data-run") === deploy.run ? "true" : "false");
      b.addEventListener("click", function () {
        deploy.run = b.getAttribute("data-run");
        Array.prototype.forEach.call(document.querySelectorAll("#deploy-run .chip"), function (x) {
          x.setAttribute("aria-pressed", x === b ? "true" : "false");
        });
        renderDeploy(deploy.picks);
      });
    });
    $("deploy-copy").addEventListener("click", function () {
      var text = $("deploy-command").textContent;
      var done = function () { $("deploy-copied").textContent = "Copied."; };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, function () { $("deploy-copied").textContent = "Copy failed: select the text."; });
      else {
        var range = document.createRange(); range.selectNodeContents($("deploy-command"));
        var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        try { document.execCommand("copy"); done(); } catch (e) { $("deploy-copied").textContent = "Selected: press Ctrl+C."; }
      }
    });
    $("calc-L").addEventListener("input", onWorkload);
    $("calc-C").addEventListener("input", onWorkload);
    var L = parseInt(params.get("L"), 10), C = parseInt(params.get("C"), 10);
    deploy.L = L >= 1 ? L : null;
    deploy.C = C >= 1 ? C : null;
    return fetch("/api/pages").then(function (r) { return r.json(); }).then(function (d) {
      var sel = clear($("deploy-page"));
      (d.pages || []).forEach(function (p) { sel.appendChild(el("option", {value: p.id, text: p.model + " (" + p.id + ")"})); });
      var wanted = params.get("page");
      var ids = (d.pages || []).map(function (p) { return p.id; });
      var first = ids.indexOf(wanted) >= 0 ? wanted : ids[0];
      if (!first) return null;
      sel.value = first;
      sel.addEventListener("change", function () { deploy.L = null; deploy.C = null; loadPage(sel.value, {}, false); });
      return loadPage(first, ids.indexOf(wanted) >= 0 ? urlPicks() : {}, ids.indexOf(wanted) >= 0);
    });
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
    var warn = listBlock("explain-warnings", "Silent caps, warnings and what to change", r.warnings, "warnings");
    if (warn) out.appendChild(warn);
    var notes = listBlock("explain-notes", "Model notes", m.notes);
    if (notes) out.appendChild(notes);
    if (r.log_lines && r.log_lines.length) {
      out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
      out.appendChild(el("pre", {id: "explain-log-lines", text: r.log_lines.join("\n")}));
    }
    out.appendChild(argsTable(r.args));
    var mem = clear($("explain-memory"));
    if (r.memory && r.memory.breakdown) {
      mem.appendChild(memoryPicture(r.memory.breakdown, r.memory.timeline, (r.memory.timeline.gpu || "GPU") + " running this command", "memory-explain"));
      mem.appendChild(timelineTable(r.memory.timeline));
    }
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
    var body = {command: command, engine_version: $("explain-version").value || null,
                gpu: $("explain-gpu").value || null};
    if (budgetText) {
      var b = Number(budgetText);
      if (!isFinite(b)) { showError(errBox, {message: "the pool budget must be a finite number", type: "BadInput"}); return Promise.resolve(); }
      body.pool_budget_gib = b;
    }
    setParams({cmd: command, budget: budgetText, egpu: body.gpu});
    $("explain-run").disabled = true;
    return Promise.all([api("/api/explain", body), runLogCheck(command)]).then(function (all) {
      $("explain-run").disabled = false;
      var d = all[0].data;
      showError(errBox, d.error || null);
      if (d.model) renderExplain(d); else { clear($("explain-out")); clear($("explain-memory")); }
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
      $("explain-gpu").value = params.get("egpu") || "";
      runExplain();
    }
  }


  // ---- Plan: `plan --json` ----
  function renderPlan(d) {
    var out = clear($("plan-out"));
    var t = d.target || {};
    out.appendChild(el("p", {id: "plan-checkpoint"}, "Checkpoint ", el("code", {text: (d.checkpoint || {}).model_path || "-"}),
      (d.checkpoint || {}).note ? " — " + d.checkpoint.note : ""));
    if (!d.fits) {
      out.appendChild(el("div", {class: "alert warn", id: "plan-why"}, el("strong", {text: "Nothing fits: "}), d.why || ""));
      if (d.changes_that_fit && d.changes_that_fit.length) {
        out.appendChild(el("h3", {text: "Changes that would fit (cheapest first)"}));
        out.appendChild(el("ol", {id: "plan-changes"}, d.changes_that_fit.map(function (c) { return el("li", {text: c.change}); })));
      }
      return;
    }
    var s = d.split || {};
    out.appendChild(el("div", {class: "cmdbar"}, el("strong", {text: "Best command"}),
      el("span", {class: "muted", text: (d.changes || []).length ? "changes: " + d.changes.join(", ") : ""})));
    out.appendChild(el("pre", {id: "plan-command", tabindex: "0", text: d.command}));
    out.appendChild(el("div", {class: "stats", id: "plan-figures"},
      stat("mem_fraction_static", "--mem-fraction-static", String(d.mem_fraction_static), d.mem_fraction_static, {source: "estimate", note: "fits from " + d.min_mem_fraction_static}),
      s.kind === "ratio" ? stat("mamba_full_memory_ratio", "--mamba-full-memory-ratio", s.mamba_full_memory_ratio_text, s.mamba_full_memory_ratio, {source: "engine rule", note: "balanced; binding " + s.binding_pool}) : null,
      stat("max_mamba_cache_size_pin", "--max-mamba-cache-size pin", fmtInt(s.max_mamba_cache_size_pin), s.max_mamba_cache_size_pin, {source: "engine rule"}),
      stat("max_mamba_cache_size", "K state slots", fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule"}),
      stat("max_total_num_tokens", "KV tokens", fmtInt(d.max_total_num_tokens), d.max_total_num_tokens, {source: "engine rule"}),
      stat("served_concurrency", "serves", fmtInt(d.served_concurrency) + " requests", d.served_concurrency, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding")));
    out.appendChild(memoryPicture(d.breakdown, d.timeline, ((t.gpu || {}).name || "GPU") + " running the plan", "memory-plan"));
    var warn = listBlock("plan-warnings", "Warnings", d.warnings, "warnings");
    if (warn) out.appendChild(warn);
    if (d.log_lines && d.log_lines.length) {
      out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
      out.appendChild(el("pre", {text: d.log_lines.join("\n")}));
    }
  }

  function runPlan() {
    var body = {model: $("plan-model").value.trim(), gpu: $("plan-gpu").value || null,
                quant: $("plan-quant").value || null, spec: $("plan-spec").value || null,
                tp: parseInt($("plan-tp").value, 10) || 1, request_length: parseInt($("plan-L").value, 10),
                concurrency: parseInt($("plan-C").value, 10), tune_mrr: $("plan-mrr").checked, pin: $("plan-pin").checked};
    if (!(body.request_length >= 1) || !(body.concurrency >= 1)) {
      showError($("plan-error"), {message: "L and C must be positive whole numbers", type: "BadInput"});
      return Promise.resolve();
    }
    setParams({pm: body.model, pq: body.quant, ps: body.spec, pg: body.gpu, ptp: body.tp === 1 ? null : body.tp,
               pL: body.request_length, pC: body.concurrency});
    $("plan-run").disabled = true;
    return api("/api/plan", body).then(function (res) {
      $("plan-run").disabled = false;
      showError($("plan-error"), res.status === 200 ? null : res.data.error);
      if (res.status === 200) renderPlan(res.data); else clear($("plan-out"));
    });
  }

  function initCatalogs() {
    var gpus = fetch("/api/gpus").then(function (r) { return r.json(); }).then(function (d) {
      ["explain-gpu", "plan-gpu"].forEach(function (id) {
        var sel = $(id);
        if (!sel) return;
        (d.gpus || []).forEach(function (g) {
          sel.appendChild(el("option", {value: g.id, text: g.name + " (" + g.memory_gib.toFixed(1) + " GiB)"}));
        });
      });
    });
    var models = fetch("/api/models").then(function (r) { return r.json(); }).then(function (d) {
      var list = $("plan-models");
      if (list) (d.models || []).forEach(function (m) { list.appendChild(el("option", {value: m.id})); });
    });
    return Promise.all([gpus, models]);
  }

  function initPlan() {
    var form = $("plan-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) { ev.preventDefault(); runPlan(); });
    var keys = {pm: "plan-model", pq: "plan-quant", ps: "plan-spec", pg: "plan-gpu", ptp: "plan-tp", pL: "plan-L", pC: "plan-C"};
    Object.keys(keys).forEach(function (k) { if (params.get(k)) $(keys[k]).value = params.get(k); });
    if (!params.get("pg")) $("plan-gpu").value = "rtx5090";
    if (params.get("pm") && params.get("pg")) runPlan();
  }

  document.addEventListener("DOMContentLoaded", function () {
    initDeploy();
    initCatalogs().then(function () { initExplain(); initPlan(); });
  });
})();
