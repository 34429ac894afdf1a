// Chips as radio groups: one tab stop (the checked chip), arrow keys and Home/End move and select; and the engine
// selectors (Explain's, Plan's), whose chips carry data-engine.

import { each } from "./dom.js";

// arrow keys, Home and End on a group's [role=radio] chips: move the tab stop and focus, then onPick(chip)
export function radioKeys(group, onPick) {
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
// an engine selector's chips (Explain's, Plan's): `name` checked and the one tab stop
export function checkEngine(group, name) {
  each("#" + group + " .chip", function (x) {
    var on = x.getAttribute("data-engine") === name;
    x.setAttribute("aria-checked", on ? "true" : "false");
    x.tabIndex = on ? 0 : -1;
  });
}
