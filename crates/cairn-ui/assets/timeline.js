// cairn ui: the timeline. A window of pages of the session's entries (the position slider, g
// and G jump it anywhere; scrolling extends it), each turn's tool checkpoints folded under its
// prompt, marks for comparing. Uses app.js's helpers; every text is set as text.
"use strict";

// ---- timeline ----

function filters() {
  return {
    session: state.session, target: $("target").value, kind: $("kind").value,
    include_safety_snapshots: $("safety").checked, no_auto: !$("auto").checked,
  };
}

async function loadSessions() {
  const { sessions } = await api("sessions");
  const select = $("session");
  select.replaceChildren(...sessions.map((s) => el("option", { value: s.name, selected: s.current }, `${s.name} (${s.snapshot_count})`)));
  state.session = select.value;
  state.currentSession = (sessions.find((s) => s.current) || {}).name;
}

async function reload() {
  state.marks = { A: null, B: null };
  state.total = 0;
  $("entries").replaceChildren();
  updateCompare();
  await jump(0);
}

// Loads the window around entry `at` (0 is the newest) and moves the focus to its row.
async function jump(at, focus) {
  const known = rowAt(at);
  if (known) return showRow(known, focus);
  state.start = Math.max(0, Math.min(at - 5, state.total - PAGE));
  state.offset = state.start; state.entries = [];
  $("entries").replaceChildren();
  await more();
  const row = rowAt(Math.min(at, state.total - 1));
  if (row) showRow(row, focus);
}

function rowAt(index) { return [...document.querySelectorAll("#entries .entry")].find((r) => r.index === index); }

function showRow(row, focus) {
  if (row.hidden && row.promptRow) row = row.promptRow;
  row.scrollIntoView({ block: "center" });
  if (focus) row.focus();
  $("scrubber").value = row.index;
  $("scrubber-at").textContent = scrubLabel(row.index);
}

async function loadPage(offset) {
  const page = await api("timeline", { ...filters(), offset, limit: PAGE });
  state.total = page.total;
  const target = $("target");
  if (target.options.length === 1) target.append(...page.targets.map((t) => el("option", { value: t }, t)));
  page.entries.forEach((e, i) => { state.entries[offset + i] = e; });
  $("timeline-count").textContent = `${page.total} entries in ${page.session}`;
  const scrubber = $("scrubber");
  scrubber.max = Math.max(0, page.total - 1);
  scrubber.disabled = page.total < 2;
  return page.entries.map((e, i) => entryRow(e, offset + i));
}

// The next older page, below the window.
async function more() {
  if (state.loading || (state.offset > state.start && state.offset >= state.total)) return;
  state.loading = true;
  try {
    const rows = await loadPage(state.offset);
    $("entries").append(...rows);
    state.offset += rows.length;
    windowChanged();
  } catch (e) { toast(e.message, true); }
  finally { state.loading = false; }
}

// The next newer page, above the window; what is on screen stays where it is.
async function newer() {
  if (state.loading || state.start === 0) return;
  state.loading = true;
  try {
    const from = Math.max(0, state.start - PAGE);
    const rows = await loadPage(from);
    const box = $("timeline");
    const height = box.scrollHeight;
    $("entries").prepend(...rows.slice(0, state.start - from));
    state.start = from;
    box.scrollTop += box.scrollHeight - height;
    windowChanged();
  } catch (e) { toast(e.message, true); }
  finally { state.loading = false; }
}

function windowChanged() {
  groupTurns();
  applySearch();
  $("newer").textContent = state.start > 0 ? `${state.start} newer entries; scroll up for them, or press g for the newest` : "";
  $("more").textContent = state.offset < state.total ? `${state.offset - state.start} of ${state.total} shown; scroll for more, or press G for the oldest` : "";
  syncScrubber();
}

// ---- the scrubber: a position in the whole session, following the scroll ----

function scrubLabel(at) {
  const e = state.entries[at];
  return `entry ${at + 1} of ${state.total}` + (e ? `, ${when(e.created_at)}` : "");
}

function syncScrubber() {
  // The first row below the slider's bar, which stays stuck at the top of the timeline.
  const top = $("scrub").getBoundingClientRect().bottom;
  const row = rows().find((r) => r.getBoundingClientRect().bottom > top + 4);
  if (!row) return;
  $("scrubber").value = row.index;
  $("scrubber-at").textContent = scrubLabel(row.index);
  $("scrubber").setAttribute("aria-valuetext", scrubLabel(row.index));
}

function partLine(p) {
  const bits = [p.kind, bytes(p.bytes)];
  if (p.kind === "dir") bits.push(`${p.files} files`);
  if (p.files_changed !== null && p.files_changed !== undefined) bits.push(`${p.files_changed} changed`);
  if (p.not_covered) bits.push(`${p.not_covered} not covered`);
  // Unchanged since an earlier snapshot, which has its own row.
  if (p.reused) bits.push(`unchanged: reuses ${p.name || "snapshot " + p.snapshot.slice(0, 8)}`);
  return bits.join(" · ");
}

// A snapshot saved on its own that agent checkpoints then took as their part.
function reusedLine(e) {
  if (!e.reused_by || !e.reused_by.length) return null;
  const by = e.reused_by.map((r) => (r.turn ? `turn ${r.turn}` : `moment ${r.moment.slice(0, 8)}`));
  return el("div", { class: "reused" }, `part of ${[...new Set(by)].join(", ")} (its checkpoint found nothing changed and reused this snapshot)`);
}

function entryTitle(e) {
  if (e.turn) return `turn ${e.turn.number}` + (e.turn.prompt ? `: ${e.turn.prompt}` : ` (${e.turn.trigger})`);
  return e.name || e.description || changedTitle(e);
}

// A plain snapshot without a name or description is titled by what changed, not by its path
// (which a thousand snapshots of one directory share).
function changedTitle(e) {
  return e.parts.map((p) => {
    const name = p.target.split("/").filter(Boolean).pop() || p.target;
    if (p.files_changed === null || p.files_changed === undefined) return `${p.kind} ${name}, first snapshot`;
    return p.files_changed ? `${plural(p.files_changed, "file")} changed in ${name}` : `no file changed in ${name}`;
  }).join("; ");
}

// ---- turns: an agent's tool checkpoints fold under the prompt that began their turn ----

const turnKey = (e) => `${e.turn.agent_session}#${e.turn.number}`;
const isPrompt = (e) => !!e.turn && e.turn.trigger === "prompt";

// The hue that tells one agent session from another at a glance.
function sessionHue(id) {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) % 360;
  return h;
}

// Moves each tool checkpoint under its turn's prompt (oldest first, as they happened), once
// the prompt's row is loaded; until then, or without one, it stays a row of its own.
function groupTurns() {
  const prompts = new Map();
  for (const row of document.querySelectorAll("#entries > .entry")) if (isPrompt(row.entry)) prompts.set(turnKey(row.entry), row);
  for (const row of [...document.querySelectorAll("#entries > .entry.tool")]) {
    const prompt = !row.promptRow && prompts.get(turnKey(row.entry));
    if (!prompt) continue;
    let after = prompt;
    while (after.nextElementSibling && after.nextElementSibling.promptRow === prompt && after.nextElementSibling.index > row.index) after = after.nextElementSibling;
    after.after(row);
    row.promptRow = prompt;
    prompt.tools = [...(prompt.tools || []), row];
    drawFold(prompt);
  }
}

function drawFold(prompt) {
  let box = prompt.querySelector(".tools");
  if (!box) {
    box = el("div", { class: "tools" }, el("button", { class: "fold", onclick: (ev) => { ev.stopPropagation(); fold(prompt, !prompt.expanded); } }));
    prompt.append(box);
  }
  const names = [...new Set(prompt.tools.map((t) => t.entry.turn.trigger))].join(", ");
  const button = box.firstChild;
  button.textContent = `${prompt.expanded ? "▾" : "▸"} ${plural(prompt.tools.length, "tool checkpoint")}: ${names}`;
  button.setAttribute("aria-expanded", String(!!prompt.expanded));
}

function fold(prompt, expanded) {
  if (!prompt || !prompt.tools) return;
  prompt.expanded = expanded;
  drawFold(prompt);
  applySearch();
}

// The entry just before `row`'s, in time: what "diff with the previous entry" compares with.
const previousEntry = (row) => state.entries[row.index + 1];

function entryRow(e, index) {
  const mark = (which) => el("button", {
    class: state.marks[which] === e.id ? "on" : "", title: `compare: mark as ${which}`, "data-mark": which,
    onclick: (ev) => { ev.stopPropagation(); setMark(which, e.id); },
  }, which);
  const kind = isPrompt(e) ? " prompt" : e.turn ? " tool" : "";
  const row = el("li", { class: "entry" + kind + (e.auto ? " auto" : "") + (e.safety ? " safety" : ""), "data-id": e.id, "data-entry": e.entry, tabindex: 0, onclick: () => openEntry(e, row) },
    el("span", { class: "time" }, when(e.created_at)),
    el("span", { class: "title" },
      e.auto ? el("span", { class: "badge auto" }, "auto") : null,
      e.safety ? el("span", { class: "badge safety" }, "safety") : null,
      e.name && e.turn ? el("span", { class: "badge" }, e.name) : null,
      entryTitle(e)),
    el("span", { class: "marks" }, mark("A"), " ", mark("B")),
    el("span", { class: "parts" },
      isPrompt(e) ? el("div", { class: "agent", title: `${e.turn.agent} session ${e.turn.agent_session}` }, `${e.turn.agent} · session ${e.turn.agent_session.slice(0, 8)}`) : null,
      e.parts.map((p) => el("div", { title: p.target }, partLine(p))), reusedLine(e)));
  row.entry = e;
  row.index = index;
  // Set through the CSSOM: the page's CSP allows no inline style attribute.
  if (e.turn) row.style.setProperty("--session-hue", sessionHue(e.turn.agent_session));
  return row;
}

function setMark(which, id) {
  state.marks[which] = state.marks[which] === id ? null : id;
  for (const b of document.querySelectorAll(`button[data-mark="${which}"]`)) b.classList.toggle("on", b.closest(".entry").dataset.id === state.marks[which]);
  updateCompare();
}

function updateCompare() { $("compare").disabled = !(state.marks.A && state.marks.B && state.marks.A !== state.marks.B); }

