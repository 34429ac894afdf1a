// Formatting for people (display only: the exact value stays in data-value and the hover title), and the short
// form of any input an error or note echoes.

export var GIB = 1073741824;
var MAX_SHOWN = 200;  // an error never echoes more than this many characters of input

export function isNum(n) { return typeof n === "number" && isFinite(n); }
export function fmtInt(n) { return isNum(n) ? Math.round(n).toLocaleString("en-US") : "-"; }
export function fmtGiBv(gib) { return isNum(gib) ? gib.toFixed(Math.abs(gib) >= 100 ? 0 : 1) + " GiB" : "-"; }
export function fmtGiB(bytes) { return isNum(bytes) ? fmtGiBv(bytes / GIB) : "-"; }
export function fmtBytes(n) { return isNum(n) ? (n >= GIB / 4 ? fmtGiB(n) : n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : fmtInt(n) + " B") : "-"; }
// 0.8999999 -> 0.90, 0.968 -> 0.968: at least two decimals, at most three
export function fmtFrac(x) {
  if (!isNum(x)) return "-";
  var t = x.toFixed(3).replace(/0$/, "");
  return t;
}
// a table cell's value: whole numbers grouped, others to four decimals, "-" for none
export function fmtCell(v) {
  if (v === null || v === undefined) return "-";
  if (typeof v === "number") return Number.isInteger(v) ? fmtInt(v) : String(Math.round(v * 10000) / 10000);
  return String(v);
}
export function exactText(raw, unit) {
  if (raw === null || raw === undefined || raw === "") return "";
  return "exact: " + (isNum(raw) ? String(raw) : raw) + (unit ? " " + unit : "");
}
export function short(text) {
  text = String(text === null || text === undefined ? "" : text);
  return text.length > MAX_SHOWN ? text.slice(0, MAX_SHOWN - 1) + "…" : text;
}
export function provText(p) { return p ? p.source + (p.note ? ": " + p.note : "") : ""; }
