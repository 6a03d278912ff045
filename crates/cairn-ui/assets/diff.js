// cairn ui: one file of a diff, drawn from the rows the server cut into spans (syntax class,
// changed word) and folded. Split (old beside new) or unified (old lines above new ones),
// remembered in this browser; folds open in place; images shown old beside new.
"use strict";

const VIEW_KEY = "cairn-ui-diff-view";
const diffView = () => (localStorage.getItem(VIEW_KEY) === "unified" ? "unified" : "split");

// The spans of one side of a line: a changed word is a <mark> (w-del on the old side, w-add on
// the new), a token a <span> with its syntax class; text is always set as text.
function lineNodes(spans, side) {
  return (spans || []).map((s) => {
    const cls = [s.w ? (side === "old" ? "w-del" : "w-add") : "", s.c || ""].filter(Boolean).join(" ");
    if (s.w) return el("mark", { class: cls }, s.t);
    return s.c ? el("span", { class: cls }, s.t) : s.t;
  });
}

// A fold: "N unchanged lines", a button that puts the rows it holds in its place.
function foldRow(fold, cols, draw) {
  const row = el("tr", { class: "fold" });
  const open = () => {
    const rows = draw(fold.rows);
    row.replaceWith(...rows);
    const first = rows[0] && rows[0].querySelector("td:not(.no)");
    if (first) { first.tabIndex = -1; first.focus(); }
  };
  row.append(el("td", { colspan: cols }, el("button", { class: "unfold", onclick: open, "aria-label": `show ${plural(fold.count, "unchanged line")}` },
    `⋯ ${plural(fold.count, "unchanged line")}`)));
  return row;
}

function splitRows(rows) {
  const out = [];
  for (const r of rows) {
    if (r.tag === "fold") { out.push(foldRow(r, 4, splitRows)); continue; }
    out.push(el("tr", { class: r.tag },
      el("td", { class: "no" }, r.old_line ?? ""), el("td", { class: "old" }, lineNodes(r.old, "old")),
      el("td", { class: "no" }, r.new_line ?? ""), el("td", { class: "new" }, lineNodes(r.new, "new"))));
  }
  return out;
}

// Unified: each run of changed rows is its old lines, then its new lines.
function unifiedRows(rows) {
  const out = [];
  const line = (cls, sign, oldNo, newNo, spans, side) => el("tr", { class: cls },
    el("td", { class: "no" }, oldNo ?? ""), el("td", { class: "no" }, newNo ?? ""),
    el("td", { class: "sign", "aria-hidden": "true" }, sign), el("td", { class: "text" }, lineNodes(spans, side)));
  let run = [];
  const flush = () => {
    for (const r of run) if (r.old) out.push(line("del", "−", r.old_line, null, r.old, "old"));
    for (const r of run) if (r.new) out.push(line("add", "+", null, r.new_line, r.new, "new"));
    run = [];
  };
  for (const r of rows) {
    if (r.tag === "equal") { flush(); out.push(line("ctx", " ", r.old_line, r.new_line, r.new, "new")); }
    else if (r.tag === "fold") { flush(); out.push(foldRow(r, 4, unifiedRows)); }
    else run.push(r);
  }
  flush();
  return out;
}

function rowsTable(f) {
  const unified = diffView() === "unified";
  const caption = el("caption", { class: "visually-hidden" }, `${f.path}, ${unified ? "unified" : "side by side"}`);
  const head = unified
    ? el("tr", {}, el("th", { scope: "col", class: "no" }, "old"), el("th", { scope: "col", class: "no" }, "new"), el("th", { scope: "col", class: "sign" }, el("span", { class: "visually-hidden" }, "change")), el("th", { scope: "col" }, "line"))
    : el("tr", {}, el("th", { scope: "col", class: "no" }, "old"), el("th", { scope: "col" }, "before"), el("th", { scope: "col", class: "no" }, "new"), el("th", { scope: "col" }, "after"));
  // Column widths from a colgroup: with a fixed layout the first row would set them, and that
  // row may be a fold spanning every column.
  const cols = el("colgroup", {}, (unified ? ["no", "no", "sign", "text"] : ["no", "text", "no", "text"]).map((c) => el("col", { class: c })));
  return el("table", { class: unified ? "uni code" : "sbs code" }, caption, cols, el("thead", { class: "visually-hidden" }, head),
    el("tbody", {}, unified ? unifiedRows(f.rows) : splitRows(f.rows)));
}

// The split/unified switch: two pressed-or-not buttons; the choice is kept for next time.
function viewSwitch(redraw) {
  const b = (which, label) => el("button", { class: "view-" + which, "aria-pressed": String(diffView() === which),
    onclick: () => { localStorage.setItem(VIEW_KEY, which); redraw(); document.querySelector(".diff-view-switch .view-" + which).focus(); } }, label);
  return el("span", { class: "diff-view-switch", role: "group", "aria-label": "diff layout" }, b("split", "split"), b("unified", "unified"));
}

function toggleDiffView() {
  const other = diffView() === "unified" ? "split" : "unified";
  const button = document.querySelector(".diff-view-switch .view-" + other);
  if (button) button.click(); else localStorage.setItem(VIEW_KEY, other);
}

// An image, old beside new, each through the guarded raw endpoint.
function imagePair(f, p, path) {
  const side = (label, snapshot, size) => el("figure", { class: "image-side" },
    size === null || size === undefined ? el("p", { class: "muted" }, `not there ${label}`)
      : el("img", { src: "/api/file-raw?" + new URLSearchParams({ ref: snapshot, path, session: state.session }), alt: `${path}, ${label}` }),
    el("figcaption", {}, `${label}` + (size === null || size === undefined ? "" : `, ${bytes(size)}`)));
  return el("div", { class: "image-pair" }, side("before", p.from.id, f.size_before), side("after", p.to.id, f.size_after));
}

// Draws the file `f` (the server's view of it) into `box`.
function drawFile(box, f, p, e) {
  const title = el("h3", { id: "file-title" }, e.path);
  const draw = () => {
    const note = f.language ? el("span", { class: "muted" }, f.language) : f.plain ? el("span", { class: "muted" }, f.plain) : null;
    const parts = [el("div", { class: "file-head" }, title, note, f.rows.length ? viewSwitch(draw) : null)];
    if (f.image) parts.push(imagePair(f, p, e.path));
    if (f.binary) parts.push(el("p", { class: "binary" }, `binary, ${f.size_before ?? 0} → ${f.size_after ?? 0} bytes`));
    else if (f.too_large) parts.push(el("p", {}, `too large for a line diff (${bytes(Math.max(f.size_before || 0, f.size_after || 0))})`));
    else if (!f.rows.length && !f.image) parts.push(el("p", {}, `same text (${e.what.join(", ")} changed)`));
    else if (f.rows.length) parts.push(rowsTable(f));
    box.replaceChildren(...parts);
  };
  draw();
}
