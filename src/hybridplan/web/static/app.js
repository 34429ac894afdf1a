// hybridplan page: calls the JSON API (the CLI's functions) and shows the dicts it returns. No model logic here:
// every number on the page is a value from an API payload, only formatted for reading.
//
// One state (page, selection, placeholders, L, C) drives every panel: Deploy renders the command, the Memory
// picture and the Calculator analyse that same command (node 0's view of a multi-node one) on the selected card, and
// Plan follows the same card and workload until its own fields are edited. The query string holds every input.
(function () {
  "use strict";

  var GIB = 1073741824;
  var DEFAULT_PAGE = "qwen3.8-27b";  // the project's flagship page
  var MAX_SHOWN = 200;  // an error never echoes more than this many characters of input
  var SIZING = ["--mamba-full-memory-ratio", "--max-mamba-cache-size"];
  var MRR = "--max-running-requests";

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
      if (Array.isArray(c)) c.forEach(function (x) { if (x) node.appendChild(typeof x === "string" ? document.createTextNode(x) : x); });
      else node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }
  function $(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function each(sel, fn) { Array.prototype.forEach.call(document.querySelectorAll(sel), fn); }

  // ---- formatting for people (display only; the exact value stays in data-value and the hover title) ----
  function isNum(n) { return typeof n === "number" && isFinite(n); }
  function fmtInt(n) { return isNum(n) ? Math.round(n).toLocaleString("en-US") : "-"; }
  function fmtGiBv(gib) { return isNum(gib) ? gib.toFixed(Math.abs(gib) >= 100 ? 0 : 1) + " GiB" : "-"; }
  function fmtGiB(bytes) { return isNum(bytes) ? fmtGiBv(bytes / GIB) : "-"; }
  function fmtBytes(n) { return isNum(n) ? (n >= GIB / 4 ? fmtGiB(n) : n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : fmtInt(n) + " B") : "-"; }
  // 0.8999999 -> 0.90, 0.968 -> 0.968: at least two decimals, at most three
  function fmtFrac(x) {
    if (!isNum(x)) return "-";
    var t = x.toFixed(3).replace(/0$/, "");
    return t;
  }
  function exactText(raw, unit) {
    if (raw === null || raw === undefined || raw === "") return "";
    return "exact: " + (isNum(raw) ? String(raw) : raw) + (unit ? " " + unit : "");
  }
  function short(text) {
    text = String(text === null || text === undefined ? "" : text);
    return text.length > MAX_SHOWN ? text.slice(0, MAX_SHOWN - 1) + "…" : text;
  }
  function provText(p) { return p ? p.source + (p.note ? ": " + p.note : "") : ""; }

  // one figure: label, formatted value, raw value and provenance (title = hover, aria-description = focus)
  function stat(key, label, shown, raw, prov, extraClass, unit) {
    var tip = [exactText(raw, unit), provText(prov)].filter(Boolean).join(" · ");
    return el("div", {class: "stat" + (extraClass ? " " + extraClass : ""), "data-key": key,
                      "data-value": raw === null || raw === undefined ? "" : String(raw), title: tip || null,
                      tabindex: tip ? "0" : null, "aria-description": tip || null},
      el("span", {class: "k"}, label), el("span", {class: "v", text: shown}));
  }
  // a term with its glossary popover (S, D, K, ratio, pin): the button opens the definition in index.html
  function term(key, text) {
    return el("span", {class: "term"}, text, " ",
      el("button", {type: "button", class: "gloss", popovertarget: "gloss-" + key, "aria-label": "What is " + key + "?",
                    text: "?"}));
  }

  // ---- API ----
  function api(path, body) {
    var init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
    return fetch(path, init).then(function (res) {
      return res.text().then(function (text) {
        var data;
        try { data = JSON.parse(text); } catch (e) { data = {error: {message: "server answered " + res.status, type: "HTTPError"}}; }
        return {status: res.status, data: data};
      });
    }, function () {
      return {status: 0, data: {error: {message: "the server is not reachable", type: "NetworkError"}}};
    });
  }

  // ---- errors: next to the field they are about, short, gone when fixed ----
  function showError(box, err) {
    clear(box);
    if (!err) { box.hidden = true; return; }
    box.appendChild(el("strong", {text: err.type === "EngineRefusal" || err.rule ? "The engine would refuse to start: " : "Error: "}));
    box.appendChild(document.createTextNode(short(err.message)));
    if (err.rule) box.appendChild(el("div", {class: "muted", text: "rule: " + short(err.rule)}));
    box.hidden = false;
  }
  // an input's own error line (aria-invalid + aria-describedby); null clears it
  function fieldError(input, message) {
    var id = input.id + "-err";
    var box = $(id);
    if (!box) {
      box = el("p", {class: "field-error", id: id, role: "alert", hidden: true});
      (input.closest("label") || input).insertAdjacentElement("afterend", box);
    }
    if (message) {
      box.textContent = short(message);
      box.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", ((input.getAttribute("aria-describedby") || "").replace(id, "") + " " + id).trim());
    } else {
      box.textContent = "";
      box.hidden = true;
      input.removeAttribute("aria-invalid");
      var rest = (input.getAttribute("aria-describedby") || "").replace(id, "").trim();
      if (rest) input.setAttribute("aria-describedby", rest); else input.removeAttribute("aria-describedby");
    }
  }
  // a positive whole number typed into an input, or null with the field's error shown
  function wholeNumber(input, what) {
    var text = input.value.trim();
    var n = Number(text);
    if (!/^[0-9]+$/.test(text) || !(n >= 1) || n > Number(input.getAttribute("max") || 1e7)) {
      fieldError(input, what + ": a whole number from 1 to " + fmtInt(Number(input.getAttribute("max") || 1e7)) +
                 (text ? " (got " + short(JSON.stringify(text)) + ")" : ""));
      return null;
    }
    fieldError(input, null);
    return n;
  }
  function announce(text) { $("status").textContent = text; }

  // ---- copy buttons and "open in Explain" links ----
  function copyText(text, status) {
    var done = function () { status.textContent = "Copied."; };
    var fail = function () { status.textContent = "Copy failed: select the text and press Ctrl+C."; };
    if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done, fail); return; }
    var area = el("textarea", {class: "offscreen", "aria-hidden": "true"});
    area.value = text;
    document.body.appendChild(area);
    area.select();
    try { if (document.execCommand("copy")) done(); else fail(); } catch (e) { fail(); }
    document.body.removeChild(area);
  }
  function wireCopy(button, source, status) {
    button.addEventListener("click", function () { copyText(source.textContent, status); });
  }
  // opts (optional): {engine: "vllm", memory: GiB} for a command of another engine or with its memory input
  function explainHref(command, gpu, opts) {
    var q = new URLSearchParams();
    q.set("cmd", command);
    if (gpu) q.set("egpu", gpu);
    if (opts && opts.engine && opts.engine !== "sglang") q.set("eng", opts.engine);
    if (opts && isNum(opts.memory)) q.set("budget", String(opts.memory));
    if (opts && opts.engine === "vllm" && opts.version) q.set("vver", opts.version);
    return "?" + q.toString() + "#explain";
  }
  function explainLink(id, command, gpu, opts) {
    var a = el("a", {id: id, class: "to-explain", href: explainHref(command, gpu, opts), text: "Open in Explain"});
    a.addEventListener("click", function (ev) {
      if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button) return;  // a new tab gets the link itself
      ev.preventDefault();
      openInExplain(command, gpu, opts);
    });
    return a;
  }
  // a command block: its own copy button, "open in Explain", and the text wrapping inside its own box
  function commandBlock(id, command, gpu, changed, explainCommand, opts) {
    var status = el("span", {class: "muted copied", role: "status", id: id + "-copied"});
    var pre = el("pre", {id: id, class: "command", tabindex: "0", "aria-label": "launch command"});
    command.split("\n").forEach(function (line, i) {
      if (i) pre.appendChild(document.createTextNode("\n"));
      var hit = (changed || []).some(function (f) { return line.indexOf(f) >= 0; });
      pre.appendChild(hit ? el("mark", {title: "changed from the recipe", text: line}) : document.createTextNode(line));
    });
    var copy = el("button", {type: "button", class: "ghost copy", id: id + "-copy", text: "Copy"});
    wireCopy(copy, pre, status);
    return el("div", {class: "cmdblock"}, el("div", {class: "cmdbar"}, copy, explainLink(id + "-explain", explainCommand || command, gpu, opts), status), pre);
  }

  // ---- URL state: the query string holds every input, so a link reproduces the page ----
  var params = new URLSearchParams(window.location.search);
  var linkNotes = [];
  function setParams(updates) {
    Object.keys(updates).forEach(function (k) {
      var v = updates[k];
      if (v === null || v === undefined || v === "" || v === false) params.delete(k); else params.set(k, v === true ? "1" : v);
    });
    var q = params.toString();
    history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
  }
  // a value the link carried that the page cannot use: dropped alone, with a note saying so
  function dropParam(key, why) {
    linkNotes.push(key + "=" + short(params.get(key)) + " (" + why + ")");
    params.delete(key);
    setParams({});
    drawLinkNotes();
  }
  function drawLinkNotes() {
    var box = $("link-notes");
    clear(box);
    box.hidden = !linkNotes.length;
    if (!linkNotes.length) return;
    box.appendChild(el("strong", {text: "Ignored from the link: "}));
    box.appendChild(el("ul", {}, linkNotes.map(function (n) { return el("li", {text: n}); })));
  }
  function intParam(key, max) {
    if (!params.has(key)) return null;
    var v = params.get(key);
    var n = Number(v);
    if (/^[0-9]+$/.test(v) && n >= 1 && n <= max) return n;
    dropParam(key, "not a whole number from 1 to " + fmtInt(max));
    return null;
  }

  // ---- reserved query keys; every other key is a dimension pick (ph:KEY is a placeholder value) ----
  var PLAN_KEYS = {pm: "plan-model", pq: "plan-quant", ps: "plan-spec", pg: "plan-gpu", ptp: "plan-tp", pL: "plan-L",
                   pC: "plan-C", ppin: "plan-pin", pe: "plan-engine", pcmd: "plan-vllm-command", pkv: "plan-kv",
                   pver: "plan-vllm-version"};
  var COMPARE_KEYS = {cm: "compare-model", cg: "compare-gpu", cmem: "compare-memory", cL: "compare-L", ctp: "compare-tp",
                      ckv: "compare-kv"};
  var RESERVED = {page: 1, run: 1, L: 1, C: 1, cmd: 1, budget: 1, egpu: 1, ever: 1, lv: 1, ld: 1, eng: 1};
  Object.keys(PLAN_KEYS).forEach(function (k) { RESERVED[k] = 1; });
  Object.keys(COMPARE_KEYS).forEach(function (k) { RESERVED[k] = 1; });
  function isPick(k) { return !RESERVED[k] && k.indexOf("ph:") !== 0; }

  var gpus = {};  // catalog id -> GPU (for labels)
  var S = {page: null, layout: null, picks: {}, run: "pip", L: null, C: null, ph: {}, seq: 0,
           shown: null, pip: null, analysis: null, explain: null, served: null};


  // ---- Deploy: the selection -> `cookbook render --json` ----
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
  function optionLabel(d, dim, id) {
    var o = ((d.options || {})[dim] || []).filter(function (x) { return x.id === id; })[0];
    return o ? o.label : id;
  }
  function rowTitle(dim) {
    var r = (S.layout.rows || []).filter(function (x) { return x.id === dim; })[0];
    return r ? r.title : dim;
  }
  function hardware() {
    var hw = S.picks.hw;
    return ((S.layout || {}).hardware || []).filter(function (x) { return x.id === hw; })[0] || {};
  }

  // chips are a radio group: one tab stop (the checked chip), arrow keys move and select, greyed chips explain
  function radioKeys(group, onPick) {
    group.addEventListener("keydown", function (ev) {
      var keys = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: "first", End: "last"};
      if (!(ev.key in keys)) return;
      var chips = Array.prototype.slice.call(group.querySelectorAll("[role=radio]"));
      var i = chips.indexOf(document.activeElement);
      if (i < 0) return;
      ev.preventDefault();
      var k = keys[ev.key];
      var next = k === "first" ? 0 : k === "last" ? chips.length - 1 : (i + k + chips.length) % chips.length;
      chips.forEach(function (c, j) { c.tabIndex = j === next ? 0 : -1; });
      chips[next].focus();
      onPick(chips[next]);
    });
  }
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

  function changedFlags(d) {
    return S.C === null || !d.effective ? [] : d.effective.flags.filter(function (f) { return (d.flags || []).indexOf(f) < 0; });
  }
  function commandOf(d) { return d.effective ? d.effective.command : d.command; }
  function flagsOf(d) { return d.effective ? d.effective.flags : d.flags || []; }

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
    var changed = changedFlags(d);
    var cmd = $("deploy-command");
    clear(cmd);
    var text = d.redirect ? "" : commandOf(d);
    text.split("\n").forEach(function (line, i) {
      if (i) cmd.appendChild(document.createTextNode("\n"));
      var hit = changed.some(function (f) { return line.indexOf(f) >= 0; });
      cmd.appendChild(hit ? el("mark", {title: "changed from the recipe", text: line}) : document.createTextNode(line));
    });
    $("deploy-copy").disabled = d.redirect || !d.cell;
    var link = $("deploy-explain");
    link.hidden = d.redirect || !d.cell;
    link.setAttribute("href", explainHref(commandOf(S.analysis || d), hardware().gpu));
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
          fieldError(input, "NODE_RANK: a whole number (0 on the first node)");
          return;
        }
        fieldError(input, null);
        if (v) S.ph[p.key] = v; else delete S.ph[p.key];
        schedule();
      });
      box.appendChild(el("label", {}, p.label + " (" + p.key + ")", input));
    });
  }
  function analysisPH() {
    var ph = Object.assign({}, S.ph);
    var keys = ((S.layout || {}).placeholders || []).map(function (p) { return p.key; });
    if (keys.indexOf("NODE_RANK") >= 0 && !/^[0-9]+$/.test(ph.NODE_RANK || "")) ph.NODE_RANK = "0";
    return ph;
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
          linkNotes.push("the selection (" + short(res.data.error.message) + ")");
          drawLinkNotes();
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
  function pageL() { return ((S.layout || {}).workload || {}).request_length || null; }
  function pageC() { return ((S.layout || {}).workload || {}).concurrency || null; }

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
      drawCHint();
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
  function selectionText(d) {
    return Object.keys(d.selection || {}).map(function (k) { return optionLabel(d, k, d.selection[k]); }).join(" · ");
  }
  function aboutText(d, hw) {
    var t = "About: the Deploy command (" + selectionText(d) + ")";
    if (S.C !== null) t += ", changed for C = " + fmtInt(S.C);
    if (d.nnodes > 1) t += ", node " + analysisPH().NODE_RANK + "'s view of " + d.nnodes + " nodes";
    return t + (hw.gpu ? ", on one " + (hw.label || hw.gpu) + "." : "; the selected hardware names no GPU in the catalog.");
  }
  function drawCHint() {
    var hint = clear($("calc-C-hint"));
    if (S.C === null) {
      hint.appendChild(document.createTextNode(S.served !== null ? "What the command serves (" + fmtInt(S.served) +
        " requests, bound by " + (S.explain.binding_limit || "?") + "). Change it to set --max-running-requests." :
        "The page's workload."));
    } else {
      hint.appendChild(document.createTextNode("Changed from the recipe" + (S.served !== null ? " (the command now serves " + fmtInt(S.served) + ")" : "") + ". "));
      var back = el("button", {type: "button", class: "ghost small", id: "calc-reset", text: "Back to the recipe"});
      back.addEventListener("click", resetC);
      hint.appendChild(back);
    }
  }
  function resetC() {
    S.C = null;
    cTyped = false;
    fieldError($("calc-C"), null);
    update();
  }

  // ---- Memory picture: the `breakdown` of `explain --gpu` as a stacked SVG bar ----
  var SVGNS = "http://www.w3.org/2000/svg";
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
    var parts = SEGMENTS.filter(function (s) { return isNum(b[s[0]]); });
    var positive = parts.reduce(function (a, s) { return a + Math.max(0, b[s[0]]); }, 0);
    var total = Math.max(b.capacity_gib || 0, positive);  // an over-committed card draws past its capacity line
    var wrap = el("figure", {class: "memory", id: id});
    wrap.appendChild(el("figcaption", {text: title + (b.capacity_gib ? " — " + fmtGiBv(b.capacity_gib) : "")}));
    var box = svg("svg", {viewBox: "0 0 1000 64", role: "list", "aria-label": title, preserveAspectRatio: "none"});
    var tip = el("p", {class: "tip", "aria-live": "polite"});
    var x = 0;
    parts.forEach(function (s) {
      var gib = b[s[0]];
      var bytes = Math.round(gib * GIB);
      var src = (b.sources || {})[s[0]] || "";
      var note = s[3] && timeline && timeline[s[3]] ? timeline[s[3]].note : POOL_NOTES[s[0]] || "";
      var text = s[1] + ": " + fmtGiBv(gib) + " (" + fmtInt(bytes) + " B) — " + src + (note ? ": " + note : "");
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
      return el("span", {"data-segment": s[0], title: exactText(b[s[0]], "GiB")}, el("span", {class: "sw " + s[2]}), s[1] + " " + fmtGiBv(b[s[0]]));
    })));
    wrap.appendChild(tip);
    if (isNum(b.free_gib) && b.free_gib < 0) {
      wrap.appendChild(el("div", {class: "alert warn", text: "Over by " + fmtGiBv(-b.free_gib) + ": the planner's " +
        "estimate of CUDA graphs + activations (" + fmtGiBv(b.cuda_graphs_activations_gib) + ") is more than the " +
        "pools leave; the line marks the card's capacity."}));
    }
    return wrap;
  }
  function timelineTable(tl) {
    var rows = Object.keys(tl || {}).filter(function (k) { return tl[k] && typeof tl[k] === "object" && "value" in tl[k]; });
    return el("details", {class: "timeline"}, el("summary", {text: "Memory timeline (one GPU)"}),
      el("div", {class: "table-wrap"}, el("table", {}, el("tbody", {}, rows.map(function (k) {
        var v = tl[k];
        var shown = isNum(v.value) ? (k.indexOf("fraction") >= 0 ? fmtFrac(v.value) : fmtGiBv(v.value)) : String(v.value);
        return el("tr", {"data-step": k}, el("td", {}, el("code", {text: k})),
          el("td", {class: "num", title: exactText(v.value), text: shown}),
          el("td", {text: v.source}), el("td", {class: "muted", text: v.note || ""}));
      })))));
  }
  function drawMemory(d, hw) {
    var out = clear($("memory-out"));
    showError($("memory-error"), d.error || null);
    if (!d.memory || !d.memory.breakdown) {
      if (!hw.gpu) out.appendChild(el("p", {class: "muted", text: "The selected hardware names no GPU in the catalog."}));
      return;
    }
    out.appendChild(memoryPicture(d.memory.breakdown, d.memory.timeline, (hw.label || hw.gpu) + " running the Deploy command", "memory-deploy"));
    out.appendChild(el("div", {class: "stats", id: "memory-pools"},
      stat("max_mamba_cache_size", term("K", "K state slots"), fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule", note: d.mamba_pool_branch + " branch"}),
      stat("max_total_num_tokens", "KV pool", fmtInt(d.max_total_num_tokens) + " tokens", d.max_total_num_tokens, {source: "engine rule"}),
      stat("max_running_requests", "serves", fmtInt(d.max_running_requests) + " requests", d.max_running_requests, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding")));
    var conf = confidenceLine("memory-confidence", (d.memory.verdict || {}).confidence);
    if (conf) out.appendChild(conf);
    (d.memory.warnings || []).forEach(function (w) { out.appendChild(el("div", {class: "alert warn", text: w})); });
    out.appendChild(timelineTable(d.memory.timeline));
  }

  // ---- Calculator: `ratio --json --gpu <card> -L L -C C -- <the command>` ----
  function drawCalculator(q, d, hw) {
    var out = clear($("calc-out"));
    var f = q.formula || {};
    var r = d.ratio || {};
    var own = d.effective ? r.effective : r.base;  // the ratio the render put into the command shown
    var base = r.base, cell = r.cell;
    var card = hw.label || hw.gpu || "this card";
    var ring = (S.explain || {}).replayssm_ring_bytes_per_request || 0;
    out.appendChild(el("div", {class: "stats", id: "calc-geometry"},
      stat("slots_per_request", term("S", "S slots / request"), fmtInt(q.slots_per_request), q.slots_per_request, {source: "engine rule", note: "_calculate_mamba_ratio"}),
      stat("draft_states_per_request", term("D", "D verify states"), fmtInt(q.draft_states_per_request), q.draft_states_per_request, {source: "engine rule"}),
      stat("state_bytes_per_slot", ring ? "state / slot (+ ring)" : "state / slot", fmtBytes(q.state_bytes_per_slot), q.state_bytes_per_slot, {source: "engine rule", note: "from config"}, null, "B"),
      stat("kv_bytes_per_token", "KV / token", fmtBytes(q.kv_bytes_per_token), q.kv_bytes_per_token, {source: "engine rule", note: "draft KV folded in"}, null, "B")));
    if (ring) {  // explain counts the ReplaySSM ring apart; the formula prices it per slot: say how the two add up
      out.appendChild(el("p", {class: "muted", id: "calc-ring", "data-state": String(S.explain.state_bytes_per_slot), "data-ring": String(ring)},
        "State / slot in the formula = " + fmtInt(S.explain.state_bytes_per_slot) + " B of conv + SSM state + " +
        fmtInt(ring) + " B of ReplaySSM ring per request."));
    }
    var pinned = r.pinned;
    var sizing = flagsOf(d).filter(function (x) { return SIZING.some(function (s) { return x.indexOf(s) === 0; }); });
    var hasRatio = sizing.some(function (x) { return x.indexOf(SIZING[0]) === 0; });
    var inCommand = sizing.length ? sizing.join(" ") : null;
    out.appendChild(el("div", {class: "stats", id: "calc-answer"},
      inCommand ? stat("in_command", "in the command (" + (pinned === "calculator" || pinned === null ? "calculator" : "pinned by the " + pinned) + ")",
                       inCommand, inCommand, {source: pinned === "cell" || pinned === "overlay" ? "input" : "engine rule", note: pinned === "cell" || pinned === "overlay" ? "the recipe's own pin" : f.text || ""}, "binding") : null,
      stat("pinned_ratio", term("ratio", "balanced ratio for L = " + fmtInt(q.request_length)), own && own.text !== null ? own.text : "-",
           own ? own.mamba_full_memory_ratio : null, {source: "engine rule", note: f.text || ""}),
      stat("max_mamba_cache_size_pin", term("pin", "or pin for C = " + fmtInt(q.concurrency)), fmtInt(q.max_mamba_cache_size_pin) + " slots", q.max_mamba_cache_size_pin, {source: "engine rule", note: f.pin_text || ""}),
      isNum(q.mamba_full_memory_ratio) ? stat("exact_ratio", "exact on " + card, q.mamba_full_memory_ratio_text, q.mamba_full_memory_ratio,
                      {source: (q.budget || {}).source, note: "search over the engine's sizing; binding: " + q.binding_pool}) : null,
      q.pin_fits === null || q.pin_fits === undefined ? null :
        stat("pin_fits", "C = " + fmtInt(q.concurrency) + " fits on " + card, q.pin_fits ? "yes" : "no", q.pin_fits, {source: "engine rule", note: (q.pin_check || {}).reason || ""})));
    var status;
    if (pinned === "cell") status = "The recipe's cell sizes the state pool itself; the balanced value stands beside it.";
    else if (pinned === "overlay") status = "An overlay pick sizes the state pool with its own pin; the balanced value for the base command stands beside it.";
    else if (hasRatio) status = "The recipe sizes nothing itself, so the command carries the balanced ratio " + (own || {}).text + " for L = " + fmtInt(q.request_length) + ".";
    else status = "No ratio is pinned into the command.";
    out.appendChild(el("p", {id: "calc-status", text: status}));
    if (cell && base && cell.text !== base.text) {
      out.appendChild(el("p", {id: "calc-base", "data-value": String(cell.text)},
        "The overlays change it: the cell's own command balances at ", el("code", {text: cell.text}),
        ", the command with your overlays at ", el("code", {text: base.text}), "."));
    }
    if (q.pin_fits === false && q.pin_check && q.pin_check.reason) {
      out.appendChild(el("div", {class: "alert warn", id: "calc-pin-warning", text: "At C = " + fmtInt(q.concurrency) + " on " + card + ": " + q.pin_check.reason}));
    }
    // the exact search's reason only where the command does not already carry a ratio (it would contradict it)
    if (q.reason && !hasRatio) out.appendChild(el("div", {class: "alert info", id: "calc-reason", text: q.reason}));
    var warn = listBlock("calc-warnings", "Notes", q.warnings);
    if (warn) out.appendChild(warn);
    out.appendChild(commandBlock("calc-command", commandOf(S.pip), hw.gpu, changedFlags(S.pip), commandOf(d)));
    out.appendChild(el("details", {id: "calc-formula"}, el("summary", {text: "Formula"}),
      el("p", {}, el("code", {text: f.text || ""})),
      el("p", {class: "mono", text: "(" + f.S + " + " + f.D + ") x " + fmtInt(f.state_bytes_per_slot) + " / (" +
        fmtInt(f.L) + " x " + fmtInt(f.kv_bytes_per_token) + ") = " + (f.value === null ? "-" : String(f.value))}),
      el("p", {}, el("code", {text: f.pin_text || ""})),
      el("p", {class: "mono", text: "C = " + f.C + ", attn_dp_size = " + f.attn_dp_size + " -> pin " + fmtInt(f.pin)})));
  }

  var cTyped = false;  // C was typed: it goes into the command (until "Back to the recipe")
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

  function initDeploy() {
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
      openInExplain(commandOf(S.analysis), hardware().gpu);
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


  // ---- Explain ----
  function explainFigures(r) {
    var prov = r.provenance || {};
    return el("div", {class: "stats", id: "explain-geometry"},
      stat("slots_per_request", term("S", "S state slots / request"), fmtInt(r.slots_per_request), r.slots_per_request, prov.slots_per_request),
      stat("draft_states_per_request", term("D", "D verify states / request"), fmtInt(r.draft_states_per_request), r.draft_states_per_request, prov.draft_states_per_request),
      stat("state_bytes_per_slot", "state / slot", fmtBytes(r.state_bytes_per_slot), r.state_bytes_per_slot, prov.state_bytes_per_slot, null, "B"),
      stat("kv_bytes_per_token", "KV / token", fmtBytes(r.kv_bytes_per_token), r.kv_bytes_per_token, prov.kv_bytes_per_token, null, "B"));
  }
  function explainPools(r) {
    if (!isNum(r.max_mamba_cache_size)) return null;
    var binding = r.binding_limit;
    return el("div", {},
      el("h3", {text: "Pools"}),
      el("div", {class: "stats", id: "explain-pools"},
        stat("pool_budget_gib", "pool budget", fmtGiBv(r.pool_budget_gib), r.pool_budget_gib, {source: "input", note: "total_rest_memory"}, null, "GiB"),
        stat("max_mamba_cache_size", term("K", "K max_mamba_cache_size"), fmtInt(r.max_mamba_cache_size), r.max_mamba_cache_size, {source: "engine rule", note: r.mamba_pool_branch + " branch"}),
        stat("state_pool_bytes", "state pool", fmtGiB(r.state_pool_bytes), r.state_pool_bytes, {source: "engine rule", note: "(K + 1) x state/slot"}, null, "B"),
        r.spec_scratch_bytes ? stat("spec_scratch_bytes", "verify scratch", fmtGiB(r.spec_scratch_bytes), r.spec_scratch_bytes, {source: "engine rule", note: r.spec_scratch_rows + " rows x D x state/slot"}, null, "B") : null,
        stat("kv_budget_bytes", "KV budget", fmtGiB(r.kv_budget_bytes), r.kv_budget_bytes, {source: "engine rule"}, null, "B"),
        stat("max_total_num_tokens", "KV pool", fmtInt(r.max_total_num_tokens) + " tokens", r.max_total_num_tokens, {source: "engine rule", note: "KV budget // KV/token, page-floored"}),
        stat("max_running_requests", "serves", fmtInt(r.max_running_requests) + " requests", r.max_running_requests, {source: "engine rule", note: "bound by " + binding}, "binding")),
      limitsTable(r.limits || {}, binding));
  }
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
    return el("div", {class: "table-wrap"}, el("table", {id: "explain-limits", "aria-label": "request limits"},
      el("thead", {}, el("tr", {}, el("th", {scope: "col", text: "limit on running requests"}), el("th", {scope: "col", text: "requests"}), el("th", {scope: "col", text: "binding?"}))),
      el("tbody", {}, rows)));
  }
  function argsTable(args) {
    var rows = Object.keys(args || {}).map(function (name) {
      var a = args[name];
      return el("tr", {"data-arg": name}, el("td", {}, el("code", {text: name})),
        el("td", {class: "mono", text: a.value === null ? "None" : JSON.stringify(a.value)}),
        el("td", {text: a.source}), el("td", {class: "muted", text: a.rule || ""}));
    });
    return el("details", {}, el("summary", {text: "Resolved engine arguments (" + rows.length + ")"}),
      el("div", {class: "table-wrap"}, el("table", {}, el("thead", {}, el("tr", {}, ["argument", "value", "source", "rule"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
        el("tbody", {}, rows))));
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
      out.appendChild(el("pre", {id: "explain-log-lines", tabindex: "0", "aria-label": "boot-log lines", text: r.log_lines.join("\n")}));
    }
    out.appendChild(argsTable(r.args));
    var mem = clear($("explain-memory"));
    if (r.memory && r.memory.breakdown) {
      mem.appendChild(memoryPicture(r.memory.breakdown, r.memory.timeline, (r.memory.timeline.gpu || "GPU") + " running this command", "memory-explain"));
      mem.appendChild(timelineTable(r.memory.timeline));
    }
  }

  // ---- Explain on vLLM: `explain --engine vllm --json` (block size, pages, groups; with the KV memory, the pool) ----
  function renderVllmExplain(r) {
    var out = clear($("explain-out"));
    clear($("explain-memory"));
    var m = r.model || {}, res = r.resolved || {}, prov = r.provenance || {}, pl = r.platform || {};
    var rule = function (k, note) { return {source: "engine rule", note: (prov[k] || "") + (note ? "; " + note : "")}; };
    out.appendChild(el("p", {id: "explain-model"}, el("strong", {text: m.architecture || ""}),
      " (" + (m.family || "?") + ", " + m.state_layers + " state + " + m.attention_layers + " attention layers) — vllm " +
      ((r.engine || {}).version || "") + (pl.gpu ? " on " + ((gpus[pl.gpu] || {}).name || pl.gpu) : "") + ", sm" + pl.sm));
    out.appendChild(el("div", {class: "stats", id: "explain-vllm-layout"},
      stat("block_size", "attention block", fmtInt(r.block_size) + " tokens", r.block_size, rule("block_size")),
      stat("mamba_cache_mode", "mamba cache mode", String(res.mamba_cache_mode), res.mamba_cache_mode, rule("mamba_cache_mode")),
      stat("bytes_per_block", "bytes / block (all groups)", fmtBytes(r.bytes_per_block), r.bytes_per_block, rule("pages", "one page per layer of a group"), null, "B"),
      stat("blocks_per_request", "blocks / request", fmtInt(r.blocks_per_request), r.blocks_per_request, rule("groups", "at " + fmtInt(r.max_model_len) + " tokens")),
      stat("state_pages_per_request", "of them state pages", fmtInt(r.state_pages_per_request), r.state_pages_per_request, rule("state_pages_per_request", (res.mamba_cache_mode || "") + " mode"))));
    if (isNum(r.kv_cache_tokens)) {
      out.appendChild(el("h3", {text: "Pool"}));
      out.appendChild(el("div", {class: "stats", id: "explain-vllm-pool"},
        stat("available_kv_memory_bytes", r.memory ? "available KV memory (card alone)" : "available KV memory", fmtGiB(r.available_kv_memory_bytes), r.available_kv_memory_bytes,
             r.memory ? r.memory.timeline.available_gib : {source: "input", note: "the boot log's Available KV cache memory"}, null, "B"),
        stat("num_blocks", "blocks", fmtInt(r.num_blocks), r.num_blocks, rule("num_blocks")),
        stat("kv_cache_tokens", "GPU KV cache size", fmtInt(r.kv_cache_tokens) + " tokens", r.kv_cache_tokens, rule("kv_cache_tokens")),
        stat("max_concurrency", "concurrency at " + fmtInt(r.max_model_len) + " tokens", r.max_concurrency.toFixed(2) + "x", r.max_concurrency, rule("max_concurrency"), "binding")));
    }
    out.appendChild(el("div", {class: "table-wrap"}, el("table", {id: "explain-vllm-groups", "aria-label": "KV cache groups"},
      el("thead", {}, el("tr", {}, ["group", "layers", "block size", "blocks / request"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
      el("tbody", {}, (r.groups || []).map(function (g, i) {
        return el("tr", {"data-kind": g.kind}, el("td", {text: i + ": " + g.kind}), el("td", {class: "num", text: fmtInt(g.layers)}),
          el("td", {class: "num", text: fmtInt(g.block_size)}), el("td", {class: "num", text: fmtInt(g.blocks_per_request)}));
      })))));
    var pages = r.pages || {};
    out.appendChild(el("details", {id: "explain-vllm-pages"}, el("summary", {text: "Pages before and after unification"}),
      el("div", {class: "table-wrap"}, el("table", {}, el("tbody", {}, Object.keys(pages).map(function (k) {
        var v = pages[k];
        return el("tr", {"data-page": k}, el("td", {}, el("code", {text: k})),
          el("td", {class: "num", title: exactText(v), text: k.indexOf("pct") >= 0 ? String(v) + " %" : fmtBytes(v)}));
      }))))));
    var notes = listBlock("explain-notes", "Notes", (res.notes || []).concat(r.notes || []));
    if (notes) out.appendChild(notes);
    if (r.predicted_lines && r.predicted_lines.length) {
      out.appendChild(el("h3", {text: "Boot-log lines to expect"}));
      out.appendChild(el("pre", {id: "explain-log-lines", tabindex: "0", "aria-label": "boot-log lines", text: r.predicted_lines.join("\n")}));
    }
    if (r.memory && r.memory.timeline) $("explain-memory").appendChild(timelineTable(r.memory.timeline));
    var keys = Object.keys(res).filter(function (k) { return k !== "notes"; });
    out.appendChild(el("details", {}, el("summary", {text: "Resolved vLLM arguments (" + keys.length + ")"}),
      el("div", {class: "table-wrap"}, el("table", {}, el("tbody", {}, keys.map(function (k) {
        return el("tr", {"data-arg": k}, el("td", {}, el("code", {text: k})),
          el("td", {class: "mono", text: res[k] === null ? "None" : JSON.stringify(res[k])}));
      }))))));
  }

  // ---- Explain's engine: the same form for SGLang or vLLM, each with its own memory input ----
  var ENGINES = {
    sglang: {budget: "Pool budget (GiB, the engine's total_rest_memory)", example: "e.g. 66.5", field: "pool_budget_gib",
             gpu: "GPU (sizes the pools from its memory timeline)",
             placeholder: "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --mem-fraction-static 0.85",
             name: "SGLang", log: "[2026-04-14 16:08:44 TP0] Load weight begin. avail mem=22.93 GB ..."},
    vllm: {budget: "Available KV cache memory (GiB, vLLM's boot log; empty: from the GPU)", example: "e.g. 40",
           field: "kv_memory_gib", gpu: "GPU (its sm, batch defaults and memory timeline)",
           placeholder: "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768",
           name: "vLLM", log: "(APIServer pid=1) INFO ... non-default args: {'model_tag': ...}\n... GPU KV cache size: 569,878 tokens"}
  };
  var explainEngine = "sglang";
  // an engine selector's chips (Explain's, Plan's): `name` checked and the one tab stop
  function checkEngine(group, name) {
    each("#" + group + " .chip", function (x) {
      var on = x.getAttribute("data-engine") === name;
      x.setAttribute("aria-checked", on ? "true" : "false");
      x.tabIndex = on ? 0 : -1;
    });
  }
  function setEngine(name) {
    explainEngine = name;
    checkEngine("explain-engine", name);
    var e = ENGINES[name];
    $("explain-budget-label").textContent = e.budget;
    $("explain-gpu-label").textContent = e.gpu;
    $("explain-budget").placeholder = e.example;
    $("explain-budget").name = e.field;
    $("explain-command").placeholder = e.placeholder;
    $("explain-version-label").hidden = name !== "sglang";  // a vLLM log check models the release the log names
    $("explain-vllm-version-label").hidden = name !== "vllm";
    $("explain-log-version-label").hidden = name !== "sglang";
    $("explain-log").placeholder = e.log;
    each("#explain-log-box p[data-engine]", function (p) { p.hidden = p.getAttribute("data-engine") !== name; });
  }
  function pickEngine(b) {
    var name = b.getAttribute("data-engine");
    if (name === explainEngine) return;
    setEngine(name);
    clear($("explain-out")); clear($("explain-memory")); clear($("logcheck-out"));
    showError($("explain-error"), null); showError($("logcheck-error"), null); showLogEngine(null);
    fieldError($("explain-command"), null); fieldError($("explain-budget"), null);
    setParams({eng: name === "sglang" ? null : name});
    announce("Explain now reads " + (name === "vllm" ? "vLLM" : "SGLang") + " launch commands.");
  }

  // ---- boot log: `logs check` (predicted vs observed); the URL keeps the log's digest, never the log ----
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
      out.appendChild(el("div", {class: "alert error", id: "logcheck-failure"},
        el("strong", {text: "Failed in phase " + d.failure.phase + ": "}), d.failure.message));
    }
    var notes = listBlock("logcheck-notes", "Notes", d.notes);
    if (notes) out.appendChild(notes);
    out.appendChild(el("p", {id: "logcheck-verdict", class: d.explained ? "alert info" : "alert warn",
      text: d.explained ? "Every difference is explained." : "Some differences stay unexplained."}));
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
      (d.gpu ? " (" + ((gpus[d.gpu] || {}).name || d.gpu) + ")" : " (no GPU picked)") + " from " + d.available_kv_gib +
      " GiB of available KV memory."));
    out.appendChild(el("div", {class: "stats", id: "logcheck-vllm-figures"},
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
    out.appendChild(el("p", {id: "logcheck-verdict", class: d.explained ? "alert info" : "alert warn",
      text: d.explained ? "Every logged number is predicted." :
        rows.length ? "Some logged numbers differ from the prediction: the rule behind each is named." : "The log states no number to check."}));
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
  function showLogEngine(wrote) {
    var box = clear($("logcheck-engine"));
    box.hidden = !wrote;
    if (!wrote) return;
    var name = ENGINES[wrote.engine].name;
    var button = el("button", {type: "button", class: "ghost small", id: "logcheck-switch", text: "Check it as " + name});
    button.addEventListener("click", function () {
      pickEngine(document.querySelector('#explain-engine [data-engine="' + wrote.engine + '"]'));
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
  function runLogCheck(command) {
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
  function runExplain() {
    var command = $("explain-command").value.trim();
    var budgetInput = $("explain-budget");
    var budgetText = budgetInput.value.trim();
    var errBox = $("explain-error");
    showError(errBox, null);
    var vllm = explainEngine === "vllm";
    if (!command && vllm && $("explain-log").value.trim()) return runVllmLogAlone();
    if (!command) { fieldError($("explain-command"), "paste a launch command first"); return Promise.resolve(); }
    fieldError($("explain-command"), null);
    var body = vllm ? {command: command, engine: "vllm", gpu: $("explain-gpu").value || null,
                       engine_version: $("explain-vllm-version").value || null} :
      {command: command, engine_version: $("explain-version").value || null, gpu: $("explain-gpu").value || null};
    if (budgetText) {
      var b = Number(budgetText);
      if (!isFinite(b)) { fieldError(budgetInput, (vllm ? "available KV memory" : "pool budget") + ": a number of GiB"); return Promise.resolve(); }
      body[ENGINES[explainEngine].field] = b;
    }
    fieldError(budgetInput, null);
    setParams({cmd: command, budget: budgetText, egpu: body.gpu, eng: vllm ? "vllm" : null,
               ever: vllm || body.engine_version === $("explain-version").getAttribute("data-default") ? null : body.engine_version,
               vver: vllm ? body.engine_version : null,
               lv: vllm ? null : $("explain-log-version").value.trim()});
    $("explain-run").disabled = true;
    return Promise.all([api("/api/explain", body), runLogCheck(command)]).then(function (all) {
      $("explain-run").disabled = false;
      var d = all[0].data;
      if (d.error && !d.model) {  // bad input: next to the field it names, else the command it is about
        var onBudget = (d.error.message || "").indexOf(ENGINES[explainEngine].field + ":") === 0;
        fieldError(onBudget ? budgetInput : $("explain-command"), d.error.message);
        showError(errBox, null);
      } else showError(errBox, d.error || null);
      if (d.model) { if (vllm) renderVllmExplain(d); else renderExplain(d); }
      else { clear($("explain-out")); clear($("explain-memory")); }
      announce(!d.model ? "Explain: " + short((d.error || {}).message) :
        vllm ? "Explained on vLLM: " + (isNum(d.kv_cache_tokens) ? fmtInt(d.kv_cache_tokens) + " KV tokens, " + d.max_concurrency.toFixed(2) + "x at " + fmtInt(d.max_model_len) + " tokens." : "block size " + fmtInt(d.block_size) + " tokens.") :
        "Explained: serves " + fmtInt(d.max_running_requests) + " requests.");
    });
  }
  // vLLM with a boot log and no command: the log's own launch line is the command, so only the log is checked
  function runVllmLogAlone() {
    fieldError($("explain-command"), null);
    clear($("explain-out")); clear($("explain-memory"));
    setParams({cmd: null, budget: null, egpu: $("explain-gpu").value || null, eng: "vllm", ever: null, lv: null});
    $("explain-run").disabled = true;
    return runLogCheck(null).then(function (res) {
      $("explain-run").disabled = false;
      announce(!res ? "" : res.status !== 200 ? "Boot log: " + short(res.data.error.message) :
        res.data.explained ? "Boot log checked on vLLM: every logged number is predicted." :
        "Boot log checked on vLLM: some logged numbers differ.");
    });
  }
  function openInExplain(command, gpu, opts) {
    var engine = (opts && opts.engine) || "sglang";
    if (engine !== explainEngine) { setEngine(engine); clear($("logcheck-out")); }
    $("explain-command").value = command;
    if (gpu && $("explain-gpu").querySelector('option[value="' + CSS.escape(gpu) + '"]')) $("explain-gpu").value = gpu;
    $("explain-budget").value = opts && isNum(opts.memory) ? String(opts.memory) : "";
    if (engine === "vllm") $("explain-vllm-version").value = (opts && opts.version) || "";
    $("explain").scrollIntoView();
    $("explain-h").focus();
    return runExplain();
  }
  function selectParam(key, select, what) {
    if (!params.has(key)) return;
    var v = params.get(key);
    if (Array.prototype.some.call(select.options, function (o) { return o.value === v; })) select.value = v;
    else dropParam(key, "not a known " + what);
  }
  // the Explain form answers from the first moment (before the catalogs load), so an early click never submits natively
  function wireExplain() {
    var form = $("explain-form");
    form.addEventListener("submit", function (ev) { ev.preventDefault(); runExplain(); });
    $("explain-command").addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runExplain(); }
    });
    $("explain-command").addEventListener("input", function () { if ($("explain-command").value.trim()) fieldError($("explain-command"), null); });
    $("explain-budget").addEventListener("input", function () { if (isFinite(Number($("explain-budget").value.trim()))) fieldError($("explain-budget"), null); });
    each("#explain-engine .chip", function (b) { b.addEventListener("click", function () { pickEngine(b); }); });
    radioKeys($("explain-engine"), pickEngine);
  }
  // the link's Explain state, once the GPU list it may name has loaded
  function initExplain() {
    $("explain-version").setAttribute("data-default", $("explain-version").value);
    if (params.has("eng")) {
      if (Object.prototype.hasOwnProperty.call(ENGINES, params.get("eng"))) setEngine(params.get("eng")); else dropParam("eng", "sglang or vllm");
    }
    selectParam("egpu", $("explain-gpu"), "GPU");
    selectParam("ever", $("explain-version"), "engine version");
    selectParam("vver", $("explain-vllm-version"), "vLLM release");
    if (params.get("lv")) $("explain-log-version").value = params.get("lv").slice(0, 120);
    if (params.has("ld")) {
      if (/^sha256:[0-9a-f]{16}$/.test(params.get("ld"))) { linkDigest = params.get("ld"); $("explain-log-box").open = true; drawDigest(null); }
      else dropParam("ld", "not a log digest");
    }
    if (params.has("budget") && !isFinite(Number(params.get("budget")))) dropParam("budget", "not a number");
    if (params.get("cmd")) {
      $("explain-command").value = params.get("cmd");
      $("explain-budget").value = params.get("budget") || "";
      runExplain();
    }
  }


  // a verdict's confidence (planner.evidence): measured, calibrated (margin shown) or extrapolated (what is unknown)
  function confidenceLine(id, c) {
    if (!c) return null;
    return el("p", {id: id, class: "confidence", "data-level": c.level}, el("strong", {text: "Confidence: " + c.level}),
      " — " + c.note + "." + (c.unknowns && c.unknowns.length ? " Unknown: " + c.unknowns.join("; ") + "." : ""));
  }

  // ---- Plan: `plan --json`; it follows the Deploy command, card and workload until its own fields are edited ----
  var plan = {follow: true, seq: 0, command: null, version: null};
  var SPEC_FOR_ALGORITHM = {DSPARK: "dspark", DFLASH: "dflash", NGRAM: "ngram", EAGLE: "mtp", NEXTN: "mtp"};
  function renderPlan(d, gpu) {
    var out = clear($("plan-out"));
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
    var m = d.mem_fraction || {};
    var changes = d.changes || [];
    out.appendChild(el("p", {class: "muted", id: "plan-changes-made"}, changes.length ?
      "Changes to " + (d.target && d.target.command ? "the Deploy command" : "the catalog command") + ":" :
      "No changes: the command serves the target as it is."));
    if (changes.length) {
      out.appendChild(el("ul", {id: "plan-change-list"}, changes.map(function (c) {
        return el("li", {"data-flag": c.flag}, el("code", {text: c.flag}), " " + (c.old === null ? "unset" : c.old || "on") +
          " → " + (c.new === null ? "removed" : c.new || "on") + (c.why ? ": " + c.why : ""));
      })));
    }
    out.appendChild(el("h3", {text: "Best command"}));
    out.appendChild(commandBlock("plan-command", d.command, gpu, null));
    var up = m.step_up || {};
    out.appendChild(el("div", {class: "stats", id: "plan-fraction"},
      isNum(m.engine_default) ? stat("engine_default", "engine default fraction", fmtFrac(m.engine_default), m.engine_default, {source: "engine rule", note: "the release's own --mem-fraction-static for this command"}) : null,
      stat("mem_fraction_static", "--mem-fraction-static", fmtFrac(d.mem_fraction_static), d.mem_fraction_static, {source: "estimate", note: "fits from " + d.min_mem_fraction_static}),
      isNum(m.ceiling) ? stat("ceiling", "evidence ceiling", fmtFrac(m.ceiling), m.ceiling, {source: "estimate", note: m.rule}) : null,
      isNum(up.kv_tokens) ? stat("step_up", "the step up buys", (up.kv_tokens >= 0 ? "+" : "") + fmtInt(up.kv_tokens) + " KV tokens, " + (up.state_slots >= 0 ? "+" : "") + fmtInt(up.state_slots) + " slots, " + (up.requests >= 0 ? "+" : "") + fmtInt(up.requests) + " requests", up.kv_tokens, {source: "engine rule", note: up.serves_at_default ? "the default serves the target too" : "the default does not serve the target"}) :
        up.why ? stat("step_up", "at the engine default", "does not start", null, {source: "engine rule", note: up.why}) : null));
    var conf = confidenceLine("plan-confidence", d.confidence);
    if (conf) out.appendChild(conf);
    out.appendChild(el("div", {class: "stats", id: "plan-figures"},
      s.kind === "ratio" ? stat("mamba_full_memory_ratio", term("ratio", "--mamba-full-memory-ratio"), s.mamba_full_memory_ratio_text, s.mamba_full_memory_ratio, {source: "engine rule", note: (s.kept ? "the command's own" : "balanced") + "; binding " + s.binding_pool}) : null,
      stat("max_mamba_cache_size_pin", term("pin", "--max-mamba-cache-size pin"), fmtInt(s.max_mamba_cache_size_pin), s.max_mamba_cache_size_pin, {source: "engine rule"}),
      stat("max_mamba_cache_size", term("K", "K state slots"), fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule"}),
      stat("max_total_num_tokens", "KV pool", fmtInt(d.max_total_num_tokens) + " tokens", d.max_total_num_tokens, {source: "engine rule"}),
      // what the command serves is the engine's max_running_requests (its cap included); the pools may hold more
      stat("max_running_requests", "serves", fmtInt(d.max_running_requests) + " requests", d.max_running_requests, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding"),
      d.pool_capacity !== d.max_running_requests ? stat("pool_capacity", "the pools would hold", fmtInt(d.pool_capacity) + " requests", d.pool_capacity, {source: "engine rule", note: "min(K // S, KV pool / L): more than the command's --max-running-requests lets run"}) : null));
    out.appendChild(memoryPicture(d.breakdown, d.timeline, (((d.target || {}).gpu || {}).name || "GPU") + " running the plan", "memory-plan"));
    var warn = listBlock("plan-warnings", "Warnings", d.warnings, "warnings");
    if (warn) out.appendChild(warn);
    if (d.log_lines && d.log_lines.length) {
      out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
      out.appendChild(el("pre", {id: "plan-log-lines", tabindex: "0", "aria-label": "boot-log lines", text: d.log_lines.join("\n")}));
    }
  }
  function planBody() {
    if (plan.follow && plan.command) {  // the Deploy command itself, answered with the fewest changes
      var cmd = {command: plan.command, gpu: $("plan-gpu").value || null, request_length: wholeNumber($("plan-L"), "L"),
                 concurrency: wholeNumber($("plan-C"), "C"), pin: $("plan-pin").checked};
      if (plan.version) cmd.engine_version = plan.version;
      return cmd.request_length === null || cmd.concurrency === null ? null : cmd;
    }
    var body = {model: $("plan-model").value.trim(), gpu: $("plan-gpu").value || null,
                quant: $("plan-quant").value || null, spec: $("plan-spec").value || null,
                tp: wholeNumber($("plan-tp"), "TP"), request_length: wholeNumber($("plan-L"), "L"),
                concurrency: wholeNumber($("plan-C"), "C"), pin: $("plan-pin").checked};
    if (body.tp === null || body.request_length === null || body.concurrency === null) return null;
    if (!body.model) { fieldError($("plan-model"), "model: a catalog id or Hub id"); return null; }
    fieldError($("plan-model"), null);
    var draft = $("plan-draft").value.trim();
    if (draft) body.draft = draft;
    return body;
  }
  function writePlanParams(body) {
    var q = {};
    Object.keys(PLAN_KEYS).forEach(function (k) { q[k] = null; });
    if (body.engine === "vllm") {
      q = {pe: "vllm", pcmd: body.command, pkv: body.kv_memory_gib === null ? null : String(body.kv_memory_gib),
           pver: body.engine_version, pg: body.gpu, pL: body.request_length, pC: body.concurrency};
    } else if (!plan.follow) {
      q = {pm: body.model, pq: body.quant, ps: body.spec, pg: body.gpu, ptp: body.tp === 1 ? null : body.tp,
           pL: body.request_length, pC: body.concurrency, ppin: body.pin};
    }
    setParams(q);
  }
  function runPlan() {
    var vllm = planEngine === "vllm";
    var body = vllm ? vllmPlanBody() : planBody();
    if (!body) return Promise.resolve();
    if (!body.gpu) { fieldError($("plan-gpu"), "GPU: pick a card"); return Promise.resolve(); }
    fieldError($("plan-gpu"), null);
    writePlanParams(body);
    var seq = ++plan.seq;
    $("plan-run").disabled = true;
    return api("/api/plan", body).then(function (res) {
      if (seq !== plan.seq) return null;
      $("plan-run").disabled = false;
      if (vllm) { vllmPlanAnswer(res, body); return null; }
      if (res.status !== 200) {
        var err = res.data.error || {};
        var field = /^model|model/.test(err.message || "") ? $("plan-model") : null;
        if (field) { fieldError(field, err.message); showError($("plan-error"), null); } else showError($("plan-error"), err);
        clear($("plan-out"));
        return null;
      }
      showError($("plan-error"), null);
      fieldError($("plan-model"), null);
      renderPlan(res.data, body.gpu);
      return null;
    });
  }
  // Plan's fields from the Deploy state: the Deploy command itself (node 0's view, as Memory and Calculator see it),
  // its card and the Calculator's L and C; the model, TP and speculative fields show what it names
  function followPlan() { return Promise.all([followCompare(), followPlanOnly()]); }
  function followPlanOnly() {
    if (!plan.follow || !S.analysis || !S.analysis.cell || S.analysis.redirect) return Promise.resolve();
    var hw = hardware();
    if (!hw.gpu) return Promise.resolve();
    var args = (S.explain || {}).args || {};
    var val = function (k) { return (args[k] || {}).value; };
    var alg = val("speculative_algorithm");
    var spec = alg ? SPEC_FOR_ALGORITHM[String(alg).toUpperCase()] || "" : "";
    $("plan-model").value = S.analysis.model_name || $("plan-model").value;
    $("plan-gpu").value = hw.gpu;
    $("plan-quant").value = "";
    $("plan-spec").value = spec;
    $("plan-draft").value = spec && spec !== "mtp" && spec !== "ngram" ? val("speculative_draft_model_path") || "" : "";
    $("plan-tp").value = val("tp_size") || 1;
    $("plan-L").value = S.L || pageL() || "";
    $("plan-C").value = S.C !== null ? S.C : S.served !== null ? S.served : pageC() || "";
    $("plan-pin").checked = false;  // the command's own ratio or pin is kept when it serves
    plan.command = commandOf(S.analysis);
    plan.version = S.analysis.engine_version || null;
    $("plan-follow").textContent = "Plan answers the Deploy command (" + (hw.label || hw.gpu) + ", L and C of the Calculator) with the fewest changes. Edit a field to plan something else.";
    $("plan-refollow").hidden = true;
    return runPlan();
  }
  // Plan and Compare follow the Deploy state until one of their own fields is edited; a link carrying their keys
  // starts them detached. f: {state, id ("plan": #plan-form, #plan-follow, #plan-refollow), name, keys, write,
  // follow, run}. Returns whether the link gave their fields.
  function detach(f) {
    if (!f.state.follow) return;
    f.state.follow = false;
    $(f.id + "-follow").textContent = f.name + " no longer follows the Deploy selection.";
    $(f.id + "-refollow").hidden = false;
  }
  function wireFollower(f) {
    var off = function () { detach(f); };
    $(f.id + "-form").addEventListener("submit", function (ev) { ev.preventDefault(); off(); f.run(); });
    Object.keys(f.keys).forEach(function (k) {
      $(f.keys[k]).addEventListener("input", off);
      $(f.keys[k]).addEventListener("change", off);
    });
    $(f.id + "-refollow").addEventListener("click", function () { f.state.follow = true; f.write({}); f.follow(); });
    if (!Object.keys(f.keys).some(function (k) { return params.has(k); })) return false;
    f.state.follow = false;
    $(f.id + "-follow").textContent = f.name + " as the link gave it.";
    $(f.id + "-refollow").hidden = false;
    return true;
  }
  // a model reference from the link into its field (at most 256 characters, as the API takes)
  function modelParam(key, input) {
    if (!params.has(key)) return;
    if (params.get(key).length <= 256) input.value = params.get(key); else dropParam(key, "longer than 256 characters");
  }
  function initPlan() {
    var f = planFollower = {state: plan, id: "plan", name: "Plan", keys: PLAN_KEYS, write: writePlanParams, follow: followPlan, run: runPlan};
    $("plan-draft").addEventListener("input", function () { detach(f); });
    each("#plan-engine .chip", function (b) { b.addEventListener("click", function () { pickPlanEngine(b); }); });
    radioKeys($("plan-engine"), pickPlanEngine);
    // following the Deploy selection is planning its SGLang command (wired before the follower's own handler)
    $("plan-refollow").addEventListener("click", function () { if (planEngine !== "sglang") pickPlanEngine(document.querySelector('#plan-engine [data-engine="sglang"]')); });
    if (!wireFollower(f)) return;
    if (params.has("pe")) {
      if (params.get("pe") === "vllm") setPlanEngine("vllm"); else dropParam("pe", "vllm, or left out for sglang");
    }
    if (params.has("pcmd")) {
      if (params.get("pcmd").length <= 16384) $("plan-vllm-command").value = params.get("pcmd"); else dropParam("pcmd", "longer than 16,384 characters");
    }
    if (params.has("pkv")) {
      if (isFinite(Number(params.get("pkv"))) && Number(params.get("pkv")) > 0) $("plan-kv").value = params.get("pkv");
      else dropParam("pkv", "not a positive number of GiB");
    }
    selectParam("pver", $("plan-vllm-version"), "vLLM release");
    selectParam("pg", $("plan-gpu"), "GPU");
    selectParam("pq", $("plan-quant"), "quantization");
    selectParam("ps", $("plan-spec"), "speculative decoding");
    modelParam("pm", $("plan-model"));
    [["ptp", 1024], ["pL", 10000000], ["pC", 1000000]].forEach(function (p) {
      var n = intParam(p[0], p[1]);
      if (n !== null) $(PLAN_KEYS[p[0]]).value = n;
    });
    $("plan-pin").checked = params.get("ppin") === "1";
    runPlan();
  }

  // ---- Plan on vLLM: `plan --engine vllm --json` for the launch typed here (it never follows the SGLang Deploy
  // command): the baseline and the candidates, cheapest first, the best one's command and why each change ----
  var planEngine = "sglang";
  var planFollower = null;
  var PLAN_VLLM_FIELDS = {command: "plan-vllm-command", kv_memory_gib: "plan-kv", engine_version: "plan-vllm-version",
                          "--engine-version": "plan-vllm-version", gpu: "plan-gpu", request_length: "plan-L",
                          concurrency: "plan-C"};
  function setPlanEngine(name) {
    planEngine = name;
    checkEngine("plan-engine", name);
    each("#plan [data-engine]:not(.chip)", function (n) { n.hidden = n.getAttribute("data-engine") !== name; });
  }
  function pickPlanEngine(b) {
    var name = b.getAttribute("data-engine");
    if (name === planEngine) return;
    setPlanEngine(name);
    if (name === "vllm") {
      detach(planFollower);
      var model = $("plan-model").value.trim();  // a start: the model Plan had, launched with vLLM's defaults
      if (!$("plan-vllm-command").value.trim() && model) $("plan-vllm-command").value = "vllm serve " + model;
    }
    clear($("plan-out"));
    showError($("plan-error"), null);
    Object.keys(PLAN_VLLM_FIELDS).forEach(function (k) { fieldError($(PLAN_VLLM_FIELDS[k]), null); });
    fieldError($("plan-model"), null);
    announce("Plan now plans " + (name === "vllm" ? "a vLLM launch command." : "SGLang deployments."));
  }
  function vllmPlanBody() {
    var cmdInput = $("plan-vllm-command"), kvInput = $("plan-kv");
    var command = cmdInput.value.trim(), kvText = kvInput.value.trim(), kv = kvText ? Number(kvText) : null;
    var L = wholeNumber($("plan-L"), "L"), C = wholeNumber($("plan-C"), "C");
    if (!command) { fieldError(cmdInput, "command: paste a vLLM launch (vllm serve MODEL ...)"); return null; }
    fieldError(cmdInput, null);
    if (kvText && !(isFinite(kv) && kv > 0)) {
      fieldError(kvInput, "kv_memory_gib: a positive number of GiB (got " + short(JSON.stringify(kvText)) + ")");
      return null;
    }
    fieldError(kvInput, null);
    if (L === null || C === null) return null;
    return {engine: "vllm", command: command, gpu: $("plan-gpu").value || null, kv_memory_gib: kv, request_length: L,
            concurrency: C, engine_version: $("plan-vllm-version").value || null};
  }
  // an answer: the plan, or the error on the field it names (a bad launch on the command; a refusal in the box)
  function vllmPlanAnswer(res, body) {
    Object.keys(PLAN_VLLM_FIELDS).forEach(function (k) { fieldError($(PLAN_VLLM_FIELDS[k]), null); });
    showError($("plan-error"), null);
    if (res.status === 200) {
      renderVllmPlan(res.data, body);
      var b = res.data.best;
      announce(b ? "Planned on vLLM: " + b.max_concurrency.toFixed(2) + "x at " + fmtInt(body.request_length) + " tokens." :
               "Planned on vLLM: no candidate serves the target.");
      return;
    }
    clear($("plan-out"));
    var err = res.data.error || {};
    var msg = err.message || "";
    var name = (/^([a-z_-]+): /.exec(msg) || [])[1];
    if (err.rule || err.type === "EngineRefusal") showError($("plan-error"), err);
    else fieldError($(PLAN_VLLM_FIELDS[name] || (/--gpu is required/.test(msg) ? "plan-gpu" : "plan-vllm-command")), msg);
    announce("Plan: " + short(msg));
  }
  function vllmChanges(r) {
    var parts = Object.keys(r.changes).map(function (k) { return (k + " " + r.changes[k]).trim(); });
    return parts.length ? parts.join(" ") : "(as launched)";
  }
  function renderVllmPlan(d, body) {
    var out = clear($("plan-out"));
    var t = d.target, m = d.measured, best = d.best;
    out.appendChild(el("p", {id: "plan-vllm-evidence", "data-source": m.source},
      el("strong", {text: fmtInt(t.concurrency) + " requests of " + fmtInt(t.request_length) + " tokens"}),
      m.source === "boot" ? ", from the boot measured at gpu_memory_utilization " + m.gpu_memory_utilization + " (" +
        m.available_kv_gib + " GiB available KV memory)" :
        ", from the card alone (no boot log; utilization up to " + m.ceiling + "): " + m.rule));
    if (best) {
      out.appendChild(el("h3", {text: "Best command"}));
      // its Explain link models the same release (the newest: none named)
      out.appendChild(commandBlock("plan-command", d.command, body.gpu, null, null,
                                   {engine: "vllm", memory: m.source === "boot" ? best.available_kv_gib : null,
                                    version: body.engine_version}));
      var why = best.why || {};
      var flags = Object.keys(why);
      out.appendChild(el("p", {class: "muted", id: "plan-changes-made", text: flags.length ? "Why each change:" :
        "No changes: the launch serves the target at " + fmtInt(t.request_length) + " tokens as it is."}));
      if (flags.length) {
        out.appendChild(el("ul", {id: "plan-vllm-why"}, flags.map(function (f) {
          return el("li", {"data-flag": f}, el("code", {text: (f + " " + best.changes[f]).trim()}), ": " + why[f]);
        })));
      }
      out.appendChild(el("div", {class: "stats", id: "plan-vllm-figures"},
        stat("gpu_memory_utilization", "--gpu-memory-utilization", String(best.gpu_memory_utilization), best.gpu_memory_utilization, {source: m.source === "boot" ? "input" : "estimate", note: m.source === "boot" ? "from the measured boot" : m.rule}),
        stat("available_kv_gib", "available KV memory", best.available_kv_gib.toFixed(2) + " GiB", best.available_kv_gib, {source: m.source === "boot" ? "input" : "estimate", note: m.source === "boot" ? "the boot's, at this utilization" : "the card alone"}, null, "GiB"),
        stat("block_size", "attention block", fmtInt(best.block_size) + " tokens", best.block_size, {source: "engine rule", note: best.mamba_cache_mode + " mode"}),
        stat("kv_cache_tokens", "GPU KV cache size", fmtInt(best.kv_cache_tokens) + " tokens", best.kv_cache_tokens, {source: "engine rule"}),
        stat("state_pages_per_request", "state pages / request", fmtInt(best.state_pages_per_request), best.state_pages_per_request, {source: "engine rule"}),
        stat("max_concurrency", "concurrency at " + fmtInt(t.request_length) + " tokens", best.max_concurrency.toFixed(2) + "x", best.max_concurrency, {source: "engine rule", note: "max_num_seqs " + fmtInt(best.max_num_seqs)}, "binding")));
    } else {
      out.appendChild(el("div", {class: "alert warn", id: "plan-why"}, el("strong", {text: "Nothing fits: "}),
        "no candidate serves " + fmtInt(t.concurrency) + " requests of " + fmtInt(t.request_length) + " tokens within --max-util (the highest gpu_memory_utilization proposed)."));
    }
    var cell = function (text, raw) { return el("td", {class: "num", text: text, "data-value": raw === null || raw === undefined ? "" : String(raw), title: exactText(raw) || null}); };
    var rows = (d.baseline ? [["baseline", d.baseline]] : []).concat(d.candidates.map(function (r, i) { return [String(i), r]; }));
    out.appendChild(el("div", {class: "table-wrap", tabindex: "0", role: "region", "aria-label": "vLLM plan candidates"}, el("table", {id: "plan-vllm-candidates"},
      el("caption", {text: "The launch at " + fmtInt(t.request_length) + " tokens (baseline), then the candidates, cheapest change first"}),
      el("thead", {}, el("tr", {}, ["changes", "util", "KV GiB", "mode", "block", "KV tokens", "concurrency", "fits"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
      el("tbody", {}, rows.map(function (x) {
        var r = x[1], isBest = best && x[0] !== "baseline" && JSON.stringify(r) === JSON.stringify(best);
        return el("tr", {"data-row": x[0], class: isBest ? "best" : null, title: isBest ? "the best command's candidate" : null},
          el("td", {}, el("code", {text: x[0] === "baseline" ? "baseline " + vllmChanges(r) : vllmChanges(r)})),
          cell(String(r.gpu_memory_utilization), r.gpu_memory_utilization), cell(r.available_kv_gib.toFixed(2), r.available_kv_gib),
          el("td", {text: r.mamba_cache_mode}), cell(fmtInt(r.block_size), r.block_size), cell(fmtInt(r.kv_cache_tokens), r.kv_cache_tokens),
          cell(r.max_concurrency.toFixed(2) + "x", r.max_concurrency), el("td", {text: r.fits ? "yes" : "no", "data-value": String(r.fits)}));
      })))));
    var warn = listBlock("plan-warnings", "Warnings", d.warnings, "warnings");
    if (warn) out.appendChild(warn);
  }

  // ---- Compare: `compare --json`; it follows the Deploy model, card and L, with the pool budget SGLang finds for the
  // Deploy command on that card as both engines' cache memory, until its own fields are edited ----
  var cmp = {follow: true, seq: 0};
  function compareBody() {
    var model = $("compare-model").value.trim();
    if (!model) { fieldError($("compare-model"), "model: a catalog id or Hub id"); return null; }
    fieldError($("compare-model"), null);
    var memText = $("compare-memory").value.trim(), mem = memText ? Number(memText) : null;
    if (memText ? !isFinite(mem) || mem <= 0 : !$("compare-gpu").value) {
      fieldError($("compare-memory"), memText ? "cache memory: a positive number of GiB per rank (got " + short(JSON.stringify(memText)) + ")"
                                              : "cache memory: a number of GiB per rank, or choose a GPU to size each engine from the card");
      return null;
    }
    fieldError($("compare-memory"), null);
    var L = wholeNumber($("compare-L"), "L"), tp = wholeNumber($("compare-tp"), "TP");
    if (L === null || tp === null) return null;
    return {model: model, memory_gib: mem, request_length: L, tp: tp, kv_cache_dtype: $("compare-kv").value,
            gpu: $("compare-gpu").value || null};
  }
  function writeCompareParams(body) {
    var q = {};
    Object.keys(COMPARE_KEYS).forEach(function (k) { q[k] = null; });
    if (!cmp.follow) {
      q = {cm: body.model, cg: body.gpu, cmem: body.memory_gib === null ? null : String(body.memory_gib), cL: body.request_length, ctp: body.tp === 1 ? null : body.tp,
           ckv: body.kv_cache_dtype === "auto" ? null : body.kv_cache_dtype};
    }
    setParams(q);
  }
  var COMPARE_FIELDS = {model: "compare-model", memory_gib: "compare-memory", request_length: "compare-L", tp: "compare-tp",
                        gpu: "compare-gpu", kv_cache_dtype: "compare-kv"};
  function runCompare() {
    var body = compareBody();
    if (!body) return Promise.resolve();
    writeCompareParams(body);
    var seq = ++cmp.seq;
    $("compare-run").disabled = true;
    return api("/api/compare", body).then(function (res) {
      if (seq !== cmp.seq) return null;
      $("compare-run").disabled = false;
      Object.keys(COMPARE_FIELDS).forEach(function (k) { fieldError($(COMPARE_FIELDS[k]), null); });
      if (res.status !== 200) {
        var err = res.data.error || {};
        var name = (/^([a-z_]+): /.exec(err.message || "") || [])[1];
        var field = COMPARE_FIELDS[name] ? $(COMPARE_FIELDS[name]) : /^model /.test(err.message || "") ? $("compare-model") : null;
        clear($("compare-out"));
        if (cmp.follow) {  // the Deploy selection has no side-by-side (a model vLLM does not model): a note, not an error
          showError($("compare-error"), null);
          $("compare-out").appendChild(el("p", {class: "alert info", id: "compare-none"}, el("strong", {text: "No side-by-side for this selection: "}), short(err.message)));
        } else if (field) { fieldError(field, err.message); showError($("compare-error"), null); } else showError($("compare-error"), err);
        return null;
      }
      showError($("compare-error"), null);
      renderCompare(res.data);
      announce("Compared at " + fmtInt(body.request_length) + " tokens: SGLang serves " + fmtInt(res.data.sglang.requests_at_length) +
               " requests, vLLM " + fmtInt(res.data.vllm.requests_at_length) + ".");
      return null;
    });
  }
  // one row of the side-by-side table: the quantity, then each engine's value (exact value in data-value and the title)
  function compareRow(key, label, s, v) {
    var cell = function (engine, x) {
      return el("td", {"data-engine": engine, "data-value": x.raw === null || x.raw === undefined ? "" : String(x.raw),
                       title: [exactText(x.raw, x.unit), x.note].filter(Boolean).join(" · ") || null},
        el("span", {class: "v", text: x.shown}), x.note ? el("span", {class: "sub muted", text: x.note}) : null);
    };
    return el("tr", {"data-key": key}, el("th", {scope: "row", text: label}), cell("sglang", s), cell("vllm", v));
  }
  function renderCompare(d) {
    var out = clear($("compare-out"));
    var s = d.sglang, v = d.vllm;
    var L = fmtInt(d.request_length), card = d.gpu ? (gpus[d.gpu] || {}).name || d.gpu : null, own = d.memory_gib === null;
    out.appendChild(el("div", {class: "table-wrap"}, el("table", {id: "compare-table", class: "side"},
      el("caption", {text: d.model + " at L = " + L + " tokens from " + (own ? "each engine's own cache memory" : fmtGiBv(d.memory_gib) + " of cache memory per rank") +
        (card ? " on " + card : "") + (d.tp > 1 ? ", TP " + d.tp : "")}),
      el("thead", {}, el("tr", {}, el("td", {}), el("th", {scope: "col", text: "SGLang " + s.version}), el("th", {scope: "col", text: "vLLM " + v.version}))),
      el("tbody", {},
        own ? compareRow("cache_memory_gib", "cache memory / rank", {shown: fmtGiBv(s.cache_memory_gib), raw: s.cache_memory_gib, unit: "GiB", note: s.memory_source},
          {shown: fmtGiBv(v.cache_memory_gib), raw: v.cache_memory_gib, unit: "GiB", note: v.memory_source}) : null,
        compareRow("requests_at_length", "requests of " + L + " tokens", 
          {shown: fmtInt(s.requests_at_length), raw: s.requests_at_length, note: "bound by " + s.binding_limit},
          {shown: fmtInt(v.requests_at_length), raw: v.requests_at_length, note: "max concurrency " + v.max_concurrency.toFixed(2) + "x"}),
        compareRow("kv_tokens", "KV tokens", {shown: fmtInt(s.kv_tokens), raw: s.kv_tokens, note: "KV pool (max_total_num_tokens)"},
          {shown: fmtInt(v.kv_tokens), raw: v.kv_tokens, note: "GPU KV cache size"}),
        compareRow("state", "state", {shown: fmtInt(s.state_slots) + " slots", raw: s.state_slots, note: "a pool of its own, " + fmtInt(s.slots_per_request) + " per request"},
          {shown: fmtInt(v.state_pages_per_request) + " pages / request", raw: v.state_pages_per_request, note: v.mamba_cache_mode + " mode, in the one paged pool"}),
        compareRow("state_bytes_per_request", "state / request", {shown: fmtBytes(s.state_bytes_per_request), raw: s.state_bytes_per_request, unit: "B"},
          {shown: fmtBytes(v.state_bytes_per_request), raw: v.state_bytes_per_request, unit: "B"}),
        compareRow("paging", "KV paging", {shown: fmtBytes(s.kv_bytes_per_request), raw: s.kv_bytes_per_request, unit: "B", note: "KV of one request at L"},
          {shown: fmtInt(v.block_size) + "-token blocks", raw: v.block_size, note: fmtInt(v.blocks_per_request) + " blocks / request of " + fmtBytes(v.bytes_per_block)}),
        compareRow("running_cap", "running-request cap", {shown: fmtInt(s.max_running_requests), raw: s.max_running_requests, note: "max_running_requests"},
          {shown: v.max_num_seqs === null ? "-" : fmtInt(v.max_num_seqs), raw: v.max_num_seqs, note: "max_num_seqs"})))));
    var why = listBlock("compare-why", "Why they differ", d.why);
    if (why) out.appendChild(why);
    out.appendChild(el("h3", {text: "The commands compared"}));
    out.appendChild(el("p", {class: "muted", text: "SGLang, with " + fmtGiBv(own ? s.cache_memory_gib : d.memory_gib) + " as its pool budget" + (own ? " (" + s.memory_source + "):" : ":")}));
    out.appendChild(commandBlock("compare-sglang-command", s.command, d.gpu, null, null, {engine: "sglang", memory: d.memory_gib}));
    out.appendChild(el("p", {class: "muted", text: "vLLM, with " + fmtGiBv(own ? v.cache_memory_gib : d.memory_gib) + " as its available KV memory" + (own ? " (" + v.memory_source + "):" : ":")}));
    out.appendChild(commandBlock("compare-vllm-command", v.command, d.gpu, null, null, {engine: "vllm", memory: d.memory_gib}));
  }
  function followCompare() {
    if (!cmp.follow || !S.analysis || !S.analysis.cell || S.analysis.redirect) return Promise.resolve();
    var hw = hardware(), e = S.explain || {};
    if (!hw.gpu || !isNum(e.pool_budget_gib) || e.pool_budget_gib <= 0) {
      $("compare-follow").textContent = "Compare follows the Deploy selection once it names a card with room for the pools.";
      return Promise.resolve();
    }
    var args = e.args || {};
    var val = function (k) { return (args[k] || {}).value; };
    var memory = Math.floor(e.pool_budget_gib * 100) / 100;  // the input shows GiB to two decimals, never more than the budget
    $("compare-model").value = S.analysis.model_name || $("compare-model").value;
    $("compare-gpu").value = $("compare-gpu").querySelector('option[value="' + CSS.escape(hw.gpu) + '"]') ? hw.gpu : "";
    $("compare-memory").value = String(memory);
    $("compare-L").value = S.L || pageL() || "";
    $("compare-tp").value = val("tp_size") || 1;
    $("compare-kv").value = /^fp8/.test(String(val("kv_cache_dtype") || "")) ? "fp8" : "auto";
    $("compare-follow").textContent = "Compare takes the Deploy model on " + (hw.label || hw.gpu) + ", the pool budget SGLang finds " +
      "there for the Deploy command (" + fmtGiBv(memory) + ") as both engines' cache memory, and the Calculator's L. Edit a field to compare something else.";
    $("compare-refollow").hidden = true;
    return runCompare();
  }
  function initCompare() {
    if (!wireFollower({state: cmp, id: "compare", name: "Compare", keys: COMPARE_KEYS, write: writeCompareParams,
                       follow: followCompare, run: runCompare})) return;
    selectParam("cg", $("compare-gpu"), "GPU");
    selectParam("ckv", $("compare-kv"), "KV cache dtype");
    modelParam("cm", $("compare-model"));
    if (params.has("cmem")) {
      if (isFinite(Number(params.get("cmem"))) && Number(params.get("cmem")) > 0) $("compare-memory").value = params.get("cmem");
      else dropParam("cmem", "not a positive number of GiB");
    }
    [["ctp", 1024], ["cL", 10000000]].forEach(function (p) {
      var n = intParam(p[0], p[1]);
      if (n !== null) $(COMPARE_KEYS[p[0]]).value = n;
    });
    runCompare();
  }

  function initCatalogs() {
    return api("/api/gpus").then(function (res) {
      ["explain-gpu", "plan-gpu", "compare-gpu"].forEach(function (id) {
        (res.data.gpus || []).forEach(function (g) {
          gpus[g.id] = g;
          $(id).appendChild(el("option", {value: g.id, text: g.name + " (" + fmtGiBv(g.memory_gib) + ")"}));
        });
      });
      return api("/api/models");
    }).then(function (res) {
      (res.data.models || []).forEach(function (m) { $("plan-models").appendChild(el("option", {value: m.id})); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    drawLinkNotes();
    // until a form's own handler is wired, a submit stays on the page (a native GET would reload it)
    document.addEventListener("submit", function (ev) { ev.preventDefault(); });
    wireExplain();
    var ready = function () { document.documentElement.setAttribute("data-ready", "true"); };
    initCatalogs().then(function () {
      initExplain();
      initPlan();
      initCompare();
      return initDeploy();
    }).then(ready, ready);
  });
})();
