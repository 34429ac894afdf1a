// Explain on vLLM: `explain --engine vllm --json`: the block size, pages and KV cache groups, the pool where the
// KV memory is known (given or from the card's timeline), the boot-log lines to expect and the resolved arguments.

import { cardName, gpus } from "../lib/catalogs.js";
import { $, clear, el } from "../lib/dom.js";
import { listBlock, stat } from "../lib/figures.js";
import { exactText, fmtBytes, fmtGiB, fmtInt, isNum } from "../lib/format.js";
import { timelineTable } from "../lib/memory-picture.js";
import { verdictBlock } from "../lib/verdict.js";

export function renderVllmExplain(r) {
  var out = clear($("explain-out"));
  clear($("explain-memory"));
  var m = r.model || {}, res = r.resolved || {}, prov = r.provenance || {}, pl = r.platform || {};
  var rule = function (k, note) { return {source: "engine rule", note: (prov[k] || "") + (note ? "; " + note : "")}; };
  out.appendChild(el("p", {id: "explain-model"}, el("strong", {text: m.architecture || ""}),
    " (" + (m.family || "?") + ", " + m.state_layers + " state + " + m.attention_layers + " attention layers) — vllm " +
    ((r.engine || {}).version || "") + (pl.gpu ? " on " + ((gpus[pl.gpu] || {}).name || pl.gpu) : "") + ", sm" + pl.sm));
  // the verdict, with vLLM's message and block count where it refuses, and every startup check in its order
  var where = pl.gpu || pl.gpu_memory_gib ? "on " + cardName(pl.gpu, pl.gpu_memory_gib) : "on this memory";
  var verdict = verdictBlock("explain-verdict", r.verdict, {where: where, checks: r.checks});
  if (verdict) out.appendChild(verdict);
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
