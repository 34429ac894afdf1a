// Fleet: `fleet --json`. The layouts each engine runs a model in on a card, ranked by the GPUs they need for C
// sessions of L tokens (then headroom), the chosen layout's command for every role and node with the engine's
// verdict on each, and its manifests. Every number shown is the payload's; the panel only lays it out.

import { api } from "../lib/api.js";
import { wireCopy } from "../lib/copy.js";
import { $, announce, clear, el } from "../lib/dom.js";
import { fieldError, showError, wholeNumber } from "../lib/errors.js";
import { listBlock } from "../lib/figures.js";
import { fmtBytes, fmtInt, short } from "../lib/format.js";
import { FLEET_KEYS, intParam, modelParam, params, selectParam, setParams } from "../lib/url-state.js";

var SHOWN = 12;  // rows before "Show every layout"
var fleet = {seq: 0, all: false, data: null, manifest: "kubernetes"};
var FIELDS = {model: "fleet-model", gpu: "fleet-gpu", request_length: "fleet-L", concurrency: "fleet-C",
              gpus_available: "fleet-n", gpus_per_node: "fleet-per-node", engine: "fleet-engine"};

function fleetBody() {
  var model = $("fleet-model").value.trim();
  fieldError($("fleet-model"), model ? null : "model: a catalog id or Hub id");
  fieldError($("fleet-gpu"), $("fleet-gpu").value ? null : "GPU: pick the servers' card");
  if (!model || !$("fleet-gpu").value) return null;
  var L = wholeNumber($("fleet-L"), "L"), C = wholeNumber($("fleet-C"), "C");
  var per = wholeNumber($("fleet-per-node"), "GPUs a node");
  var n = $("fleet-n").value.trim() ? wholeNumber($("fleet-n"), "GPUs available") : undefined;
  if (L === null || C === null || per === null || n === null) return null;
  if (n === undefined) fieldError($("fleet-n"), null);
  return {model: model, gpu: $("fleet-gpu").value, request_length: L, concurrency: C, gpus_available: n === undefined ? null : n,
          gpus_per_node: per, engine: $("fleet-engine").value};
}
function writeFleetParams(b) {
  setParams({fm: b.model, fg: b.gpu, fL: b.request_length, fC: b.concurrency, fn: b.gpus_available,
             fk: b.gpus_per_node === 8 ? null : b.gpus_per_node, fe: b.engine === "both" ? null : b.engine});
}
export function runFleet() {
  var body = fleetBody();
  if (!body) return Promise.resolve();
  writeFleetParams(body);
  var seq = ++fleet.seq;
  $("fleet-run").disabled = true;
  $("fleet-busy").hidden = false;
  return api("/api/fleet", body).then(function (res) {
    if (seq !== fleet.seq) return null;
    $("fleet-run").disabled = false;
    $("fleet-busy").hidden = true;
    Object.keys(FIELDS).forEach(function (k) { fieldError($(FIELDS[k]), null); });
    if (res.status !== 200) {
      var err = res.data.error || {};
      var name = (/^-*([a-z_]+)[: ]/.exec(err.message || "") || [])[1];
      clear($("fleet-out"));
      if (FIELDS[name]) { fieldError($(FIELDS[name]), err.message); showError($("fleet-error"), null); } else showError($("fleet-error"), err);
      return null;
    }
    showError($("fleet-error"), null);
    fleet.data = res.data;
    renderFleet();
    var chosen = res.data.chosen ? res.data.rows[res.data.chosen - 1] : null;
    announce(chosen ? "Fleet: " + chosen.engine + " " + chosen.layout + " on " + fmtInt(chosen.gpus) + " GPUs serves " +
             fmtInt(res.data.concurrency) + " sessions." : "Fleet: no layout chosen.");
    return null;
  });
}
function servers(s) {
  return Object.keys(s || {}).map(function (role) { return s[role] + " " + role + (s[role] === 1 ? "" : "s"); }).join(" + ") || "-";
}
function rowCells(r, chosen) {
  var what = r.refusal ? "refused: " + r.refusal : !r.feasible ? r.why || "" : r.binding || "";
  var cells = [String(r.rank), r.engine, r.layout, fmtInt(r.gpus), servers(r.servers), fmtInt(r.requests_per_server),
               r.requests_per_gpu === null ? "-" : String(r.requests_per_gpu), fmtInt(r.kv_tokens_per_server),
               r.state_slots_per_server === null ? "-" : fmtInt(r.state_slots_per_server), short(what), r.confidence || "-",
               r.headroom === null ? "-" : (r.headroom >= 0 ? "+" : "") + Math.round(r.headroom * 100) + "%"];
  return el("tr", {"data-rank": r.rank, "data-engine": r.engine, class: r.rank === chosen ? "chosen" : r.feasible ? null : "muted",
                   title: r.binding_why || r.why || r.refusal || null},
            cells.map(function (c, i) { return i === 0 ? el("th", {scope: "row", text: c}) : el("td", {text: c}); }));
}
function fleetTable(d) {
  var rows = fleet.all ? d.rows : d.rows.slice(0, SHOWN);
  var head = ["#", "engine", "layout", "GPUs", "servers", "req/server", "req/GPU", "KV tokens/server", "state slots/server",
              "binds", "confidence", "headroom"];
  return el("div", {class: "table-wrap"}, el("table", {id: "fleet-table"},
    el("caption", {text: d.model + " on " + d.gpu + ": " + fmtInt(d.concurrency) + " sessions of " + fmtInt(d.request_length) +
                         " tokens, " + d.gpus_per_node + " GPUs a node" + (d.gpus_available ? ", " + d.gpus_available + " available" : "")}),
    el("thead", {}, el("tr", {}, head.map(function (h) { return el("th", {scope: "col", text: h}); }))),
    el("tbody", {}, rows.map(function (r) { return rowCells(r, d.chosen); }))));
}
function rankBlock(role, rank) {
  var text = rank.env.map(function (kv) { return kv[0] + "=" + kv[1]; }).concat(rank.argv).join(" ");
  var pre = el("pre", {class: "command", tabindex: "0", id: "fleet-cmd-" + role.role + "-" + rank.node_rank, text: text,
                       "aria-label": role.role + " node " + rank.node_rank + " command"});
  var copy = el("button", {type: "button", class: "ghost copy", text: "Copy"});
  var status = el("span", {class: "muted copied", role: "status"});
  wireCopy(copy, pre, status);
  return el("div", {class: "fleet-rank", "data-role": role.role, "data-node": rank.node_rank},
    el("div", {class: "cmdbar"}, el("strong", {text: role.ranks.length > 1 ? "node " + rank.node_rank : role.role}), copy, status),
    pre,
    rank.serves === null ? null : el("p", {class: rank.serves ? "verdict ok" : "verdict bad", "data-serves": String(rank.serves),
                                            text: "verdict: " + rank.verdict}));
}
function launchBlock(d) {
  var row = d.rows[d.chosen - 1], launch = d.launch;
  var out = el("div", {id: "fleet-launch"},
    el("h3", {text: "Row " + row.rank + ": " + launch.engine + " " + launch.version + " " + launch.layout + ", " + fmtInt(row.gpus) +
                    " GPUs, " + fmtInt(row.sessions) + " sessions held"}));
  launch.roles.forEach(function (role) {
    out.appendChild(el("h4", {text: role.role + " x" + role.servers + (role.gpus_per_node ? ", " + role.gpus_per_node + " GPUs a node" : "") +
                                    (role.requests ? ", " + fmtInt(role.requests) + " sessions each" : "") + " (" + role.image + ")"}));
    role.ranks.forEach(function (rank) { out.appendChild(rankBlock(role, rank)); });
  });
  var notes = launch.notes.concat(row.notes);
  if (row.handover) notes.push("handover per session: " + fmtBytes(row.handover.state_bytes) + " of state + " +
                               fmtBytes(row.handover.kv_bytes) + " of KV over " + row.handover.ranks + " prefill ranks");
  var n = listBlock("fleet-notes", "Notes", notes);
  if (n) out.appendChild(n);
  var lim = listBlock("fleet-limits", "Likely to bind first (not modelled)", row.limits);
  if (lim) out.appendChild(lim);
  return out;
}
function manifestBlock(m) {
  var kinds = [["kubernetes", "Kubernetes"], ["compose", "compose"]];
  if (!m[fleet.manifest]) fleet.manifest = "kubernetes";
  var pre = el("pre", {class: "command", id: "fleet-manifest", tabindex: "0", text: m[fleet.manifest], "aria-label": "manifest"});
  var copy = el("button", {type: "button", class: "ghost copy", text: "Copy manifest"});
  var status = el("span", {class: "muted copied", role: "status"});
  wireCopy(copy, pre, status);
  var chips = el("div", {class: "chips", role: "radiogroup", "aria-label": "Manifest"}, kinds.map(function (k) {
    var b = el("button", {type: "button", class: "chip", role: "radio", "data-manifest": k[0], text: k[1],
                          "aria-checked": String(fleet.manifest === k[0]), disabled: !m[k[0]], title: m[k[0]] ? null : m.compose_why});
    b.addEventListener("click", function () { fleet.manifest = k[0]; renderFleet(); });
    return b;
  }));
  return el("div", {id: "fleet-manifests"}, el("h3", {text: "Manifest"}), chips,
            m.compose ? null : el("p", {class: "muted", text: "compose: " + m.compose_why}), el("div", {class: "cmdbar"}, copy, status), pre);
}
function renderFleet() {
  var d = fleet.data, out = clear($("fleet-out"));
  if (!d) return;
  out.appendChild(fleetTable(d));
  if (d.rows.length > SHOWN) {
    var more = el("button", {type: "button", class: "ghost small", id: "fleet-all",
                             text: fleet.all ? "Show the first " + SHOWN : "Show every layout (" + d.rows.length + ")"});
    more.addEventListener("click", function () { fleet.all = !fleet.all; renderFleet(); });
    out.appendChild(more);
  }
  out.appendChild(el("p", {class: "muted", text: d.ranking}));
  d.tried.forEach(function (t) {
    out.appendChild(el("p", {class: "alert warn", text: "Row " + t.row + " (" + t.engine + " " + t.layout + ") was not launched: " + t.not_serving.join("; ")}));
  });
  if (!d.launch) { out.appendChild(el("p", {class: "alert info", id: "fleet-none", text: "No layout chosen: " + (d.why || "no launch serves")})); return; }
  out.appendChild(launchBlock(d));
  out.appendChild(manifestBlock(d.manifests));
}
// the panel's handler, and the link's Fleet state (a link that names a model runs it)
export function initFleet() {
  $("fleet-form").addEventListener("submit", function (ev) { ev.preventDefault(); runFleet(); });
  modelParam("fm", $("fleet-model"));
  selectParam("fg", $("fleet-gpu"), "GPU");
  selectParam("fe", $("fleet-engine"), "engine");
  [["fL", 10000000], ["fC", 1000000], ["fn", 1024], ["fk", 16]].forEach(function (p) {
    var n = intParam(p[0], p[1]);
    if (n !== null) $(FLEET_KEYS[p[0]]).value = n;
  });
  if (params.has("fm")) runFleet();
}
