// Command blocks (Calculator's, Plan's, Compare's): the command with its changed lines marked, its own copy button
// and an "Open in Explain" link that carries the command, card and engine in its URL (a new tab follows it) and,
// clicked in place, fills the Explain form and runs it.

import { el } from "../lib/dom.js";
import { wireCopy } from "../lib/copy.js";
import { isNum } from "../lib/format.js";
import { openInExplain } from "./explain.js";

// opts (optional): {engine: "vllm", memory: GiB} for a command of another engine or with its memory input
export function explainHref(command, gpu, opts) {
  var q = new URLSearchParams();
  q.set("cmd", command);
  if (gpu) q.set("egpu", gpu);
  if (opts && opts.engine && opts.engine !== "sglang") q.set("eng", opts.engine);
  if (opts && isNum(opts.memory)) q.set("budget", String(opts.memory));
  if (opts && opts.version) q.set(opts.engine === "vllm" ? "vver" : "ever", opts.version);
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
// the lines of `command` into `pre`, each line naming one of `changed` marked as a change from the recipe
export function markedLines(pre, command, changed) {
  command.split("\n").forEach(function (line, i) {
    if (i) pre.appendChild(document.createTextNode("\n"));
    var hit = (changed || []).some(function (f) { return line.indexOf(f) >= 0; });
    pre.appendChild(hit ? el("mark", {title: "changed from the recipe", text: line}) : document.createTextNode(line));
  });
  return pre;
}
// a command block: its own copy button, "open in Explain", and the text wrapping inside its own box
export function commandBlock(id, command, gpu, changed, explainCommand, opts) {
  var status = el("span", {class: "muted copied", role: "status", id: id + "-copied"});
  var pre = markedLines(el("pre", {id: id, class: "command", tabindex: "0", "aria-label": "launch command"}), command, changed);
  var copy = el("button", {type: "button", class: "ghost copy", id: id + "-copy", text: "Copy"});
  wireCopy(copy, pre, status);
  return el("div", {class: "cmdblock"}, el("div", {class: "cmdbar"}, copy, explainLink(id + "-explain", explainCommand || command, gpu, opts), status), pre);
}
