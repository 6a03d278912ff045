// cairn ui: the page. Plain DOM, no framework; every text from the store is set as text, never
// as HTML. Data comes from the JSON API of the same server, a page at a time.
"use strict";

const $ = (id) => document.getElementById(id);
// The timeline is a window of loaded pages: `start` is the index (newest first) of its first
// row, `offset` the index after its last; a jump (the scrubber, g, G) loads a new window.
const state = { session: "", start: 0, offset: 0, total: 0, loading: false, marks: { A: null, B: null }, open: null, entries: [] };
const PAGE = 100;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

function bytes(n) {
  if (n === null || n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}
const when = (t) => new Date(t).toLocaleString(undefined, { dateStyle: "short", timeStyle: "medium" });

async function api(path, params, body) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch("/api/" + path + (q.toString() ? "?" + q : ""), { credentials: "same-origin", ...init });
  const text = await res.text();
  let data;
  try { data = JSON.parse(text); } catch { data = { error: text.trim() }; }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function toast(message, error) {
  const line = el("div", { class: error ? "error" : "" }, message);
  $("toast").append(line);
  setTimeout(() => line.remove(), error ? 12000 : 6000);
}

// ---- one point ----

async function openEntry(e, row) {
  for (const r of document.querySelectorAll(".entry.open")) r.classList.remove("open");
  row.classList.add("open");
  state.open = e;
  const shown = await api("show", { ref: e.id, session: state.session }).catch((err) => toast(err.message, true));
  if (!shown) return;
  const pane = $("pane");
  const acts = el("div", { class: "actions" });
  const prev = previousEntry(row);
  if (prev) acts.append(el("button", { id: "diff-previous", onclick: () => showDiff(prev.id, e.id) }, "diff with the previous entry"));
  if (e.turn && e.turn.trigger === "prompt") acts.append(el("button", { id: "rewind", class: "danger", onclick: () => rewind(e) }, `rewind to turn ${e.turn.number}`));
  acts.append(el("button", { id: "restore", class: "danger", onclick: () => restore(e) }, "restore in place"));
  const to = el("input", { type: "text", id: "restore-to", placeholder: "/new/or/empty/dir", size: 24, "aria-label": "restore to: a new or empty directory, as a whole path" });
  acts.append(to, el("button", { id: "restore-dir", onclick: () => restore(e, to.value.trim()) }, "restore to directory"));
  acts.append(el("button", { id: "remove", class: "danger", onclick: () => remove(e) }, "remove"));
  const fork = el("input", { type: "text", id: "fork-name", placeholder: "new session name", size: 16, "aria-label": "new session name" });
  acts.append(fork, el("button", { id: "fork", onclick: () => forkSession(fork.value) }, "fork session"));
  pane.replaceChildren(
    el("h2", {}, entryTitle(e)),
    el("p", { class: "muted" }, `${e.entry} ${e.id} · ${when(e.created_at)}` + (e.description && e.turn ? ` · ${e.description}` : "")),
    acts,
    ...shown.snapshots.map(snapshotBlock));
}

function snapshotBlock(s) {
  const nc = s.not_covered;
  const name = el("input", { type: "text", value: s.name || "", placeholder: "name", size: 16, "data-name-for": s.id, "aria-label": `name of snapshot ${s.id}` });
  return el("div", { class: "snapshot" },
    el("h3", {}, `${s.kind} ${s.target}`),
    el("table", { class: "figures" },
      el("tr", {}, el("td", {}, "snapshot"), el("td", {}, s.id + (s.safety ? " (safety)" : ""))),
      el("tr", {}, el("td", {}, "captured"), el("td", {}, `${s.stats.files} files, ${s.stats.dirs} dirs, ${s.stats.symlinks} links, ${bytes(s.stats.bytes)}`)),
      el("tr", {}, el("td", {}, "added to the store"), el("td", {}, `${bytes(s.stats.stored_bytes)} (read ${bytes(s.stats.read_bytes)} in ${s.stats.duration_ms} ms)`)),
      el("tr", {}, el("td", {}, "not covered"), el("td", { class: "not-covered" }, notCovered(nc)))),
    el("div", { class: "actions" }, name,
      el("button", { onclick: () => rename(s, name.value) }, "set name"),
      s.kind === "dir" ? el("button", { onclick: () => showPlan(s) }, "what a restore would change") : null));
}

function notCovered(nc) {
  if (!nc.ignored && !nc.skipped.length && !(nc.secrets || []).length) return "nothing: the snapshot holds the whole target";
  const out = [];
  if (nc.ignored) out.push(el("div", {}, `${nc.ignored} ignored paths` + (nc.ignored_paths.length ? ` (${nc.ignored_paths.slice(0, 8).join(", ")}${nc.ignored_paths.length > 8 ? ", …" : ""})` : "")));
  for (const s of nc.skipped) out.push(el("div", {}, `${s.path}: ${s.reason}`));
  for (const s of nc.secrets || []) out.push(el("div", {}, `${s.path}: secret (${s.rule})`));
  return out;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : (many || one + "s")}`;
const underGit = (path) => path === ".git" || path.startsWith(".git/") || path.includes("/.git/");

// A plan in words and counts, as the CLI's --dry-run counts it: what is put back, what is
// kept or merged because someone changed it since, and whether a git commit goes back.
function planWords(plan, held) {
  held = held || [];
  const heldPaths = new Set(held.map((h) => h.path));
  const written = plan.filter((p) => !heldPaths.has(p.path));
  const git = written.filter((p) => underGit(p.path));
  const files = written.filter((p) => !underGit(p.path) && p.kind !== "dir");
  const count = (list, ...actions) => list.filter((p) => actions.includes(p.action)).length;
  const bits = [];
  const back = count(files, "create", "rewrite", "replace", "chmod");
  if (back) bits.push(`${plural(back, "file")} put back`);
  const gone = count(files, "remove");
  if (gone) bits.push(`${gone} removed (not there then)`);
  const kept = count(held, "keep");
  if (kept) bits.push(`${kept} kept because you changed ${kept === 1 ? "it" : "them"}`);
  const merged = count(held, "merge");
  if (merged) bits.push(`${merged} merged`);
  const conflicts = count(held, "conflict");
  if (conflicts) bits.push(plural(conflicts, "conflict"));
  const words = bits.length ? bits.join(", ") : "no file changes";
  const lines = [el("p", { class: "plan-words" }, words)];
  if (git.length) lines.push(el("p", { class: "plan-git" }, `${plural(git.length, "entry", "entries")} under .git: a commit will be undone`));
  return lines;
}

function planList(plan) {
  if (!plan.length) return el("p", {}, "nothing would change: the live tree is the snapshot");
  return el("div", { class: "plan" }, plan.slice(0, 500).map((p) => el("div", {}, `${p.action || p.op || ""} ${p.path || JSON.stringify(p)}`)),
    plan.length > 500 ? el("div", { class: "muted" }, `… and ${plan.length - 500} more`) : null);
}

async function showPlan(s) {
  try {
    const r = await api("plan", { ref: s.id, session: state.session });
    await confirmBox(`Restoring ${s.id} in place would change ${plural(r.plan.length, "entry", "entries")}`, [...planWords(r.plan), planList(r.plan)], true);
  } catch (e) { toast(e.message, true); }
}

// ---- acting, each behind a confirmation ----

function confirmBox(title, body, infoOnly) {
  const d = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-body").replaceChildren(...body);
  $("confirm-ok").hidden = !!infoOnly;
  $("confirm-cancel").textContent = infoOnly ? "close" : "cancel";
  d.returnValue = "";
  d.showModal();
  (infoOnly ? $("confirm-cancel") : $("confirm-ok")).focus();
  return new Promise((resolve) => d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true }));
}

async function act(title, body, call, done) {
  if (!(await confirmBox(title, body))) return;
  try {
    const r = await call();
    const result = done(r);
    if (typeof result === "string") toast(result); else record(result.title, result.lines);
    await reload();
  } catch (e) { toast(e.message, true); }
}

// ---- activity: what each action did, kept (in this browser) until cleared ----

const ACTIVITY = "cairn-ui-activity";
function activity() { try { return JSON.parse(localStorage.getItem(ACTIVITY)) || []; } catch { return []; } }

function record(title, lines) {
  const items = [{ time: new Date().toISOString(), title, lines }, ...activity()].slice(0, 100);
  try { localStorage.setItem(ACTIVITY, JSON.stringify(items)); } catch { /* private mode: shown, not kept */ }
  drawActivity(items);
  toast(title + " (see activity)");
}

function drawActivity(items) {
  $("activity-list").replaceChildren(...items.map((a) => el("li", { class: "activity-item" },
    el("div", {}, el("strong", {}, a.title), " ", el("span", { class: "muted" }, when(a.time))),
    a.lines.map((l) => el("div", { class: "activity-line", "data-what": l.what || "" },
      el("span", { class: "muted" }, l.label + ": "),
      l.command ? [el("code", {}, l.text), " ", copyButton(l.text, l.label)] : l.text)))));
  $("activity-empty").hidden = items.length > 0;
  $("activity-clear").hidden = items.length === 0;
}

function copyButton(text, label) {
  const b = el("button", { class: "copy", "aria-label": `copy the ${label} command`, onclick: async () => {
    try { await navigator.clipboard.writeText(text); }
    catch {
      // Without clipboard access, select the command so Ctrl+C copies it.
      const range = document.createRange(); range.selectNodeContents(b.previousElementSibling);
      getSelection().removeAllRanges(); getSelection().addRange(range);
    }
    b.textContent = "copied";
    setTimeout(() => { b.textContent = "copy"; }, 1500);
  } }, "copy");
  return b;
}

// The lines a restore or rewind leaves: per part, what was written, the safety snapshot and
// the command that goes back to it, the command that resumes a new conversation.
function partLines(parts, notes) {
  const lines = [];
  for (const p of parts) {
    const where = `${p.kind} ${p.target}`;
    if (p.files_written !== undefined && p.files_written !== null) lines.push({ label: where, text: `${plural(p.files_written, "file")} written` });
    if (p.safety_snapshot) {
      const id = typeof p.safety_snapshot === "string" ? p.safety_snapshot : p.safety_snapshot.id;
      lines.push({ label: "safety snapshot", text: id, what: "safety" });
      // The CLI looks in the current session; another one is named.
      const session = state.session && state.session !== state.currentSession ? ` --session ${state.session}` : "";
      lines.push({ label: "undo", text: `cairn restore ${id}${session}`, command: true, what: "undo" });
    }
    if (p.resume_command) lines.push({ label: "resume", text: p.resume_command, command: true, what: "resume" });
    if (p.note) lines.push({ label: where, text: p.note });
  }
  for (const n of notes || []) lines.push({ label: "note", text: n });
  return lines;
}

async function restore(e, to) {
  if (to && !to.startsWith("/")) {
    return toast(`"restore to" ${to} is a relative path, and the server cannot know which directory it is relative to; give the whole path, e.g. /home/you/restored`, true);
  }
  const dirPart = e.parts.find((p) => p.kind === "dir");
  const body = [el("p", {}, to ? `Everything of this ${e.entry} is written into ${to}, which must be new or empty.` :
    "Every part is put back in place. A safety snapshot of each live target is taken first, so this can be undone.")];
  if (dirPart && !to) {
    try {
      const plan = (await api("plan", { ref: dirPart.snapshot, session: state.session })).plan;
      body.push(el("h3", {}, `files of ${dirPart.target}`), ...planWords(plan), planList(plan));
    }
    catch (err) { body.push(el("p", { class: "muted" }, err.message)); }
  }
  await act(to ? `Restore into ${to}?` : `Restore ${entryTitle(e)} in place?`, body,
    // Into a directory, a moment's files go: its directory part is the snapshot restored.
    () => api("restore", {}, { ref: to && dirPart ? dirPart.snapshot : e.id, to: to || null, session: state.session }),
    (r) => ({
      title: `restored ${entryTitle(e)}` + (to ? ` into ${to}` : ""),
      lines: r.parts ? partLines(r.parts, r.notes)
        : [{ label: "into", text: r.destination }, ...partLines([{ kind: "dir", target: r.snapshot.target, files_written: r.files_written, safety_snapshot: r.safety_snapshot }])],
    }));
}

async function rewind(e) {
  const ask = { turn: e.id, workspace: e.turn.workspace, session: state.session };
  const body = [el("p", {}, `What the agent changed in ${e.turn.workspace} since just before prompt ${e.turn.number} goes back (a safety snapshot is taken first); files changed by anyone else since are kept, or merged when the agent changed them too. The conversation is written as a new session that ends before that prompt.`)];
  // The same rewind as a dry run: its plan is what the confirmation shows.
  try {
    const preview = await api("rewind", {}, { ...ask, dry_run: true });
    for (const part of preview.parts.filter((p) => p.kind === "dir")) {
      body.push(el("h3", {}, `files of ${part.target}`), ...planWords(part.plan || [], part.held), planList(part.plan || []));
      const held = part.held || [];
      if (held.length) body.push(el("h3", {}, "left to you"),
        el("ul", { class: "plan" }, ...held.map((h) => el("li", {}, `${h.action === "keep" ? "kept" : h.action === "merge" ? "merged" : "conflict"}: ${h.path}`))));
    }
  } catch (err) { body.push(el("p", { class: "muted" }, err.message)); }
  await act(`Rewind to turn ${e.turn.number}?`, body,
    () => api("rewind", {}, ask),
    (r) => ({ title: `rewound to turn ${e.turn.number}`, lines: partLines(r.parts, r.notes) }));
}

async function remove(e) {
  const body = { session: state.session, moments: e.entry === "moment" ? [e.id] : [], snapshots: e.entry === "snapshot" ? [e.id] : [] };
  await act(`Remove ${entryTitle(e)}?`, [el("p", {}, "Its records leave this session; gc reclaims data no snapshot holds any more.")],
    () => api("remove", {}, body), () => "removed");
}

async function rename(s, name) {
  await act(name ? `Name ${s.id} "${name}"?` : `Take the name of ${s.id} away?`, [],
    () => api("name", {}, { ref: s.id, name: name || null, session: state.session }), (r) => `named ${r.name || "(none)"}`);
}

async function forkSession(name) {
  await act(`Fork session ${state.session}${name ? ` as ${name}` : ""}?`, [el("p", {}, "The new session starts with this one's snapshots; no data is copied.")],
    () => api("fork", {}, { name: name || null, from: state.session }),
    (r) => `forked as ${r.name}`);
  await loadSessions();
}

// ---- diff ----

async function showDiff(from, to) {
  const pane = $("pane");
  pane.replaceChildren(el("p", { class: "muted" }, "comparing…"));
  let d;
  try { d = await api("diff", { from, to, session: state.session }); }
  catch (e) { pane.replaceChildren(el("p", {}, e.message)); return; }
  pane.replaceChildren(el("h2", { id: "diff-title" }, `${d.from.label} → ${d.to.label}`),
    el("p", { class: "muted" }, `${when(d.from.created_at)} → ${when(d.to.created_at)}`),
    ...d.parts.map((p, i) => partView(d, p, i)));
}

function partView(d, p, i) {
  const head = el("h3", {}, `${p.kind} ${p.target}: ${p.change}`);
  if (p.change === "added" || p.change === "removed" || p.change === "unchanged") return el("div", { class: "part" }, head);
  if (p.kind === "dir") return el("div", { class: "part" }, head, dirView(d, p, i));
  if (p.kind === "transcript") return el("div", { class: "part" }, head, talkView(p.transcript));
  if (p.kind === "compose") return el("div", { class: "part" }, head, composeView(p.from, p.to, p.compose));
  if (p.kind === "debug") return el("div", { class: "part" }, head, debugView(p.debug));
  return el("div", { class: "part" }, head);
}

function dirView(d, p, i) {
  const s = p.summary;
  const file = el("div", { class: "file-view" }, el("p", { class: "muted" }, "pick a file"));
  const treeBox = el("div", { class: "tree" });
  const entries = p.entries.slice();
  const moreBtn = el("button", { onclick: async () => {
    const page = await api("diff/entries", { from: d.from.id, to: d.to.id, session: state.session, part: i, offset: entries.length });
    entries.push(...page.entries); draw();
  } }, "show more");
  const draw = () => {
    treeBox.replaceChildren(buildTree(entries, (e, node) => openFile(p, e, node, file)));
    moreBtn.hidden = entries.length >= p.entries_total;
    moreBtn.textContent = `show more (${entries.length} of ${p.entries_total})`;
  };
  draw();
  return el("div", {}, el("p", {}, `${s.added} added, ${s.removed} removed, ${s.modified} changed, ${s.unchanged} unchanged`),
    el("div", { class: "split" }, el("div", { class: "tree" }, treeBox, moreBtn), file));
}

function buildTree(entries, onpick) {
  const root = { dirs: new Map(), files: [] };
  for (const e of entries) {
    if (e.kind === "dir" && e.change === "modified") continue;
    const parts = e.path.split("/");
    let node = root;
    for (const name of parts.slice(0, -1)) {
      if (!node.dirs.has(name)) node.dirs.set(name, { dirs: new Map(), files: [] });
      node = node.dirs.get(name);
    }
    node.files.push({ name: parts[parts.length - 1], e });
  }
  const render = (node) => el("ul", {},
    [...node.dirs].map(([name, sub]) => el("li", {}, el("details", { open: true }, el("summary", {}, name + "/"), render(sub)))),
    node.files.map(({ name, e }) => {
      const size = e.change === "removed" ? e.size_before : e.size_after;
      const item = el("li", { class: `file ${e.change}`, "data-path": e.path, title: `${e.change} ${e.what.join(", ")}`, tabindex: 0 },
        name, el("span", { class: "muted" }, ` ${e.change}` + (size !== null && size !== undefined ? `, ${bytes(size)}` : "")));
      item.addEventListener("click", () => onpick(e, item));
      return item;
    }));
  return render(root);
}

async function openFile(p, e, node, box) {
  for (const n of document.querySelectorAll(".tree .file.open")) n.classList.remove("open");
  node.classList.add("open");
  if (e.kind !== "file") {
    box.replaceChildren(el("p", {}, `${e.kind} ${e.path}: ${e.change}` + (e.link_after || e.link_before ? ` (→ ${e.link_after || e.link_before})` : "")));
    return;
  }
  box.replaceChildren(el("p", { class: "muted" }, "reading…"));
  try {
    const f = await api("file-diff", { from: p.from.id, to: p.to.id, path: e.path, session: state.session });
    drawFile(box, f, p, e);
  } catch (err) { box.replaceChildren(el("p", {}, err.message)); }
}

function talkView(t) {
  if (!t) return el("p", { class: "muted" }, "no conversation diff");
  const line = (cls) => (x) => el("li", { class: cls }, el("span", { class: "role" }, (cls === "added" ? "+ " : "− ") + x.role), x.preview);
  return el("div", {}, el("p", {}, `${t.added.length} entries added, ${t.removed.length} dropped, ${t.unchanged} kept`),
    el("ul", { class: "talk" }, t.removed.map(line("removed")), t.added.map(line("added"))));
}

function composeView(a, b, d) {
  if (!d) return el("p", { class: "muted" }, "no Compose diff");
  const sizes = (x, y) => `${bytes(x && x.bytes)} → ${bytes(y && y.bytes)}`;
  const stat = (s, src) => (((s && s.details) || {}).stats || []).find((v) => v.source === src);
  const rows = [];
  for (const v of d.volumes) {
    rows.push(el("tr", { class: v.change }, el("td", {}, `volume ${v.source}`), el("td", {}, v.change),
      el("td", {}, sizes(stat(a, v.source), stat(b, v.source)))));
    for (const f of v.files) {
      rows.push(el("tr", { class: f.change }, el("td", {}, `  ${f.path}`), el("td", {}, f.change),
        el("td", {}, `${bytes(f.old_size)} → ${bytes(f.new_size)}`)));
    }
  }
  for (const l of d.layers) {
    rows.push(el("tr", { class: l.change }, el("td", {}, `layer ${l.container}`), el("td", {}, l.change),
      el("td", {}, `${l.paths_added.length} paths newly changed, ${l.paths_dropped.length} no longer`)));
  }
  for (const i of d.images_added) rows.push(el("tr", { class: "added" }, el("td", {}, `image ${i}`), el("td", {}, "added"), el("td", {}, "")));
  for (const i of d.images_removed) rows.push(el("tr", { class: "removed" }, el("td", {}, `image ${i}`), el("td", {}, "removed"), el("td", {}, "")));
  for (const f of d.spec_files_changed) rows.push(el("tr", { class: "changed" }, el("td", {}, `compose file ${f}`), el("td", {}, "changed"), el("td", {}, "")));
  if (!rows.length) return el("p", { class: "muted" }, "no change in volumes, layers, images or compose files");
  return el("table", {}, rows);
}
function debugView(d) {
  if (!d) return el("p", { class: "muted" }, "no capture diff");
  const row = (sign, e, text) => el("tr", {}, el("td", {}, sign), el("td", {}, e.path), el("td", {}, text));
  return el("div", {}, el("p", {}, `${d.summary.added} added, ${d.summary.removed} removed, ${d.summary.modified} changed`),
    el("table", {}, d.added.map((e) => row("+", e, e.value)), d.removed.map((e) => row("−", e, e.value)),
      d.modified.map((e) => row("~", e, `${e.oldValue} → ${e.newValue}`))));
}

// ---- store figures ----

async function showStats() {
  let s;
  try { s = await api("stats", { points: 60 }); } catch (e) { return toast(e.message, true); }
  $("pane").replaceChildren(el("h2", {}, "store"),
    el("table", { class: "figures", id: "store-figures" },
      el("tr", {}, el("td", {}, "on disk"), el("td", {}, bytes(s.stored_bytes))),
      el("tr", {}, el("td", {}, "held by snapshots"), el("td", {}, bytes(s.logical_bytes))),
      el("tr", {}, el("td", {}, "dedup ratio"), el("td", {}, s.dedup_ratio.toFixed(1) + "×")),
      el("tr", {}, el("td", {}, "snapshots"), el("td", {}, s.snapshots)),
      el("tr", {}, el("td", {}, "sessions"), el("td", {}, s.sessions))),
    el("h3", {}, "growth"), chart(s.growth),
    el("p", { class: "muted" }, "solid: bytes saves added to the store; dashed: bytes the snapshots hold, counted whole."));
}

function chart(points) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "chart"); svg.setAttribute("viewBox", "0 0 640 180");
  if (points.length < 2) { svg.append(svgText(ns, 10, 90, "not enough saves yet")); return svg; }
  const max = Math.max(...points.map((p) => p.logical_bytes), 1);
  const x = (i) => 50 + (i * 580) / (points.length - 1);
  const y = (v) => 160 - (v * 145) / max;
  for (const [key, cls] of [["logical_bytes", "logical"], ["stored_bytes", "stored"]]) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("class", cls);
    path.setAttribute("d", points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(""));
    svg.append(path);
  }
  svg.append(svgText(ns, 2, 18, bytes(max)), svgText(ns, 2, 162, "0"),
    svgText(ns, 50, 176, when(points[0].time)), svgText(ns, 470, 176, when(points[points.length - 1].time)));
  return svg;
}
function svgText(ns, x, y, text) { const t = document.createElementNS(ns, "text"); t.setAttribute("x", x); t.setAttribute("y", y); t.textContent = text; return t; }

// ---- start ----

addEventListener("DOMContentLoaded", async () => {
  for (const id of ["target", "kind", "auto", "safety"]) $(id).addEventListener("change", reload);
  $("session").addEventListener("change", () => { state.session = $("session").value; $("target").replaceChildren(el("option", { value: "" }, "all")); reload(); });
  $("compare").addEventListener("click", () => showDiff(state.marks.A, state.marks.B));
  $("show-stats").addEventListener("click", showStats);
  $("show-help").addEventListener("click", () => $("help").showModal());
  $("search").addEventListener("input", applySearch);
  $("activity-clear").addEventListener("click", () => { localStorage.removeItem(ACTIVITY); drawActivity([]); });
  $("confirm").addEventListener("keydown", confirmKeys);
  document.addEventListener("keydown", keys);
  drawActivity(activity());
  new IntersectionObserver((seen) => { if (seen.some((s) => s.isIntersecting)) more(); }).observe($("more"));
  new IntersectionObserver((seen) => { if (seen.some((s) => s.isIntersecting)) newer(); }).observe($("newer"));
  let queued = false;
  $("timeline").addEventListener("scroll", () => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; syncScrubber(); }); }
  });
  $("scrubber").addEventListener("input", () => { $("scrubber-at").textContent = scrubLabel(+$("scrubber").value); });
  $("scrubber").addEventListener("change", () => jump(+$("scrubber").value));
  layoutControls();
  // The sessions and the first page at once: with no session named, the server reads the
  // current one, which the list then selects.
  try { await Promise.all([loadSessions(), reload()]); } catch (e) { toast(e.message, true); }
});

// ---- keyboard ----

function rows() { return [...document.querySelectorAll("#entries .entry:not([hidden])")]; }
function currentRow() {
  const a = document.activeElement;
  return (a && a.closest && a.closest(".entry")) || document.querySelector(".entry.open");
}

function moveRow(delta) {
  const list = rows();
  if (!list.length) return;
  const cur = currentRow();
  const at = cur ? list.indexOf(cur) : -1;
  const next = list[Math.max(0, Math.min(list.length - 1, at < 0 ? 0 : at + delta))];
  next.focus();
  next.scrollIntoView({ block: "nearest" });
  if (list.indexOf(next) >= list.length - 3) more();
  if (list.indexOf(next) <= 2) newer();
}

function moveFile(delta) {
  const files = [...document.querySelectorAll(".tree .file")];
  const next = files[files.indexOf(document.activeElement) + delta];
  if (next) { next.focus(); next.scrollIntoView({ block: "nearest" }); }
}

function applySearch() {
  const words = $("search").value.trim().toLowerCase();
  for (const row of document.querySelectorAll("#entries .entry")) {
    const folded = !!row.promptRow && !row.promptRow.expanded;
    row.hidden = words ? !row.textContent.toLowerCase().includes(words) : folded;
  }
}

// In the confirmation, Enter confirms wherever the focus is but on "cancel"; Escape cancels
// (the dialog's own behaviour).
function confirmKeys(ev) {
  if (ev.key !== "Enter" || ev.target.id === "confirm-cancel") return;
  ev.preventDefault();
  $("confirm").close($("confirm-ok").hidden ? "cancel" : "ok");
}

function keys(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey || $("confirm").open || $("help").open) return;
  const t = ev.target;
  if (t.matches("input, select, textarea")) {
    if (ev.key === "Escape") t.blur();
    return;
  }
  const onFile = t.classList.contains("file");
  const row = currentRow();
  const entry = row && row.entry;
  switch (ev.key) {
    case "j": case "ArrowDown": if (onFile) moveFile(1); else moveRow(1); break;
    case "k": case "ArrowUp": if (onFile) moveFile(-1); else moveRow(-1); break;
    case "Enter":
      if (t.tagName === "BUTTON" || t.tagName === "SUMMARY" || t.tagName === "A") return;
      if (onFile || t.classList.contains("entry")) t.click(); else return;
      break;
    case "l": case "ArrowRight": fold(row && (row.promptRow || row), true); break;
    case "h": case "ArrowLeft":
      if (row && row.promptRow && !row.hidden) row.promptRow.focus();
      fold(row && (row.promptRow || row), false);
      break;
    case "a": case "b": if (entry) setMark(ev.key.toUpperCase(), entry.id); break;
    case "c":
      if (!$("compare").disabled) showDiff(state.marks.A, state.marks.B);
      else if (row && previousEntry(row)) showDiff(previousEntry(row).id, entry.id);
      else toast("mark two rows with a and b, or move to a row that has an older one below it", true);
      break;
    case "r": if (entry) restore(entry); break;
    case "w":
      if (entry && entry.turn && entry.turn.trigger === "prompt") rewind(entry);
      else if (entry) toast("a rewind goes back to an agent's prompt: move to a row titled turn N", true);
      break;
    case "/": $("search").focus(); break;
    case "g": jump(0, true); break;
    case "G": jump(state.total - 1, true); break;
    case "u": toggleDiffView(); break;
    case "t": toggleTimeline(); break;
    case "?": $("help").showModal(); break;
    default: return;
  }
  ev.preventDefault();
}
