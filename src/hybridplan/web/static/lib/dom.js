// Small DOM helpers: build elements from text only (user input is never parsed as HTML), find, empty, and say
// things to screen readers through the page's live status line.

// an element with attributes (text: its text; false/null/undefined: left out) and children (strings become text)
export function el(tag, attrs) {
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
export function $(id) { return document.getElementById(id); }
export function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
export function each(sel, fn) { Array.prototype.forEach.call(document.querySelectorAll(sel), fn); }

// an SVG element with attributes (null/undefined: left out)
var SVGNS = "http://www.w3.org/2000/svg";
export function svg(tag, attrs) {
  var n = document.createElementNS(SVGNS, tag);
  Object.keys(attrs || {}).forEach(function (k) { if (attrs[k] !== null && attrs[k] !== undefined) n.setAttribute(k, String(attrs[k])); });
  return n;
}

// the page's polite live region (#status): what a screen reader hears after an answer
export function announce(text) { $("status").textContent = text; }
