// The Deploy selection: one state (page, selection, placeholders, L, C) drives every panel. Deploy renders the
// command; the Memory picture and the Calculator analyse that same command (node 0's view of a multi-node one) on
// the selected card; Plan and Compare follow the same card and workload until their own fields are edited. This
// module holds that state and what the panels read from it.

export var S = {page: null, layout: null, picks: {}, run: "pip", L: null, C: null, ph: {}, seq: 0,
                shown: null, pip: null, analysis: null, explain: null, served: null};

// the selected hardware row of the page (its gpu and label), or {}
export function hardware() {
  var hw = S.picks.hw;
  return ((S.layout || {}).hardware || []).filter(function (x) { return x.id === hw; })[0] || {};
}
export function optionLabel(d, dim, id) {
  var o = ((d.options || {})[dim] || []).filter(function (x) { return x.id === id; })[0];
  return o ? o.label : id;
}
export function rowTitle(dim) {
  var r = (S.layout.rows || []).filter(function (x) { return x.id === dim; })[0];
  return r ? r.title : dim;
}
export function selectionText(d) {
  return Object.keys(d.selection || {}).map(function (k) { return optionLabel(d, k, d.selection[k]); }).join(" · ");
}

// a render's command and flags: the effective ones (the Calculator's C in them) where there are
export function commandOf(d) { return d.effective ? d.effective.command : d.command; }
export function flagsOf(d) { return d.effective ? d.effective.flags : d.flags || []; }
// the flags the Calculator's C changed from the recipe
export function changedFlags(d) {
  return S.C === null || !d.effective ? [] : d.effective.flags.filter(function (f) { return (d.flags || []).indexOf(f) < 0; });
}

// the placeholders the panels analyse with: the user's, NODE_RANK 0 where it is not a number
export function analysisPH() {
  var ph = Object.assign({}, S.ph);
  var keys = ((S.layout || {}).placeholders || []).map(function (p) { return p.key; });
  if (keys.indexOf("NODE_RANK") >= 0 && !/^[0-9]+$/.test(ph.NODE_RANK || "")) ph.NODE_RANK = "0";
  return ph;
}
// the page's own workload
export function pageL() { return ((S.layout || {}).workload || {}).request_length || null; }
export function pageC() { return ((S.layout || {}).workload || {}).concurrency || null; }
