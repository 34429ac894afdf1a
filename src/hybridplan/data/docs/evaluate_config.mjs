// Evaluates one SGLang docs cookbook config module (read from stdin) inside a fresh vm context that has only the
// JavaScript builtins (no require, no process, no fetch, no import), then prints JSON: the literal data (functions
// replaced by their source), the selection space, and the value of every selection-dependent function on every
// selection. Run by hybridplan.cookbook.docs.node_eval under Node's permission model with a wall-time and heap limit.
import vm from "node:vm";

const [maxSelections, timeoutMs] = process.argv.slice(2).map(Number);

// Runs inside the page's context (compiled there from its source text), so the vm timeout covers every call.
function enumerate(config, maxSelections) {
  const out = { data: null, dims: [], selections: 0, functions: [], helpers: [], errors: [] };
  const LEGACY = [["variants", "variant"], ["quantizations", "quant"], ["strategies", "strategy"],
                  ["nodesOptions", "nodes"]];
  const TOP_FUNCTIONS = ["curl", "dockerRunCommand", "runModes"];
  const fns = [];
  const seen = new Set();
  const plain = (value, path, depth) => {
    if (depth > 24) throw new Error("nesting deeper than 24 at " + path.join("."));
    if (typeof value === "function") {
      if (path.length) fns.push({ path, fn: value });
      return { $fn: String(value) };
    }
    if (value === undefined) return { $undefined: true };
    if (typeof value === "symbol" || typeof value === "bigint") return { $unsupported: typeof value };
    if (value === null || typeof value !== "object") {
      return typeof value === "number" && !isFinite(value) ? { $number: String(value) } : value;
    }
    if (seen.has(value)) return { $cycle: path.join(".") };
    const proto = Object.getPrototypeOf(value);
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
      return { $unsupported: (value.constructor && value.constructor.name) || "object" };
    }
    seen.add(value);
    let res;
    if (Array.isArray(value)) {
      res = value.map((v, i) => plain(v, path.concat([i]), depth + 1));
    } else {
      res = {};
      for (const key of Object.keys(value)) {
        const desc = Object.getOwnPropertyDescriptor(value, key);
        if (desc && typeof desc.get === "function") { res[key] = { $getter: String(desc.get) }; continue; }
        let v;
        try { v = value[key]; } catch (e) { res[key] = { $error: String(e && e.message) }; continue; }
        res[key] = plain(v, path.concat([key]), depth + 1);
      }
    }
    seen.delete(value);
    return res;
  };
  const data = {};
  for (const key of Object.keys(config)) {
    const desc = Object.getOwnPropertyDescriptor(config, key);
    if (desc && typeof desc.get === "function") { out.helpers.push(key); data[key] = { $getter: String(desc.get) }; continue; }
    const value = config[key];
    if (typeof value === "function" && !TOP_FUNCTIONS.includes(key)) {
      out.helpers.push(key); data[key] = { $fn: String(value) }; continue;
    }
    data[key] = plain(value, [key], 0);
  }
  out.data = data;
  const dims = [{ id: "hw", kind: "hw", options: (config.supportedHardware || []).map(String) }];
  const match = Array.isArray(config.matchDims) ? config.matchDims
    : LEGACY.filter(([k]) => Array.isArray(config[k])).map(([k, id]) => ({ id, options: config[k] }));
  for (const d of match) dims.push({ id: String(d.id), kind: "match", options: (d.options || []).map((o) => String(o.id)) });
  for (const d of config.overlayDims || []) {
    if (d.kind === "number") { out.errors.push("overlay dim " + d.id + " is numeric"); continue; }
    dims.push({ id: String(d.id), kind: "overlay", options: (d.options || []).map((o) => String(o.id)) });
  }
  out.dims = dims;
  let total = 1;
  for (const d of dims) total *= Math.max(d.options.length, 1);
  if (total > maxSelections) throw new Error("the page has " + total + " selections, over the bound of " + maxSelections);
  out.selections = total;
  const sels = [];
  const idx = dims.map(() => 0);
  for (let n = 0; n < total; n++) {
    const sel = {};
    dims.forEach((d, k) => { if (d.options.length) sel[d.id] = d.options[idx[k]]; });
    sels.push(sel);
    for (let k = dims.length - 1; k >= 0; k--) {
      idx[k] += 1;
      if (idx[k] < dims[k].options.length) break;
      idx[k] = 0;
    }
  }
  const cells = config.cells || [];
  const cellOf = (sel) => cells.find((c) => c && c.match && dims.every((d) => d.kind === "overlay" || c.match[d.id] === sel[d.id])) || null;
  for (const { path, fn } of fns) {
    const top = path[0];
    if (!["matchDims", "overlayDims", "cells", ...LEGACY.map(([k]) => k), ...TOP_FUNCTIONS].includes(top)) continue;
    const values = [];
    const keys = new Map();
    const at = new Array(total);
    for (let n = 0; n < total; n++) {
      let v;
      try {
        const r = top === "curl" ? fn(sels[n], cellOf(sels[n])) : fn(sels[n]);
        v = JSON.stringify(r === undefined ? { $undefined: true } : r);
      } catch (e) {
        v = JSON.stringify({ $error: String(e && e.message) });
      }
      if (v === undefined) v = JSON.stringify({ $error: "not serializable" });
      if (!keys.has(v)) { keys.set(v, values.length); values.push(JSON.parse(v)); }
      at[n] = keys.get(v);
    }
    out.functions.push({ path, values, at });
  }
  return JSON.stringify(out);
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const source = Buffer.concat(chunks).toString("utf8");
const context = vm.createContext({}, { codeGeneration: { strings: false, wasm: false } });
try {
  const mod = new vm.SourceTextModule(source, { context, identifier: "config.jsx" });
  await mod.link(() => { throw new Error("a config module may not import anything"); });
  await mod.evaluate({ timeout: timeoutMs });
  const config = mod.namespace.config;
  if (!config || typeof config !== "object") throw new Error("the module has no `export const config` object");
  context.__enumerate = vm.runInContext("(" + enumerate.toString() + ")", context);
  context.__config = config;
  context.__max = maxSelections;
  const text = vm.runInContext("__enumerate(__config, __max)", context, { timeout: timeoutMs });
  process.stdout.write(JSON.stringify({ ok: true, node: process.version, result: JSON.parse(text) }));
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, error: String(e && e.message ? e.message : e) }));
}
