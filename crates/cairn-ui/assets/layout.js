// cairn ui: the timeline's width and whether it is shown, kept in this browser. The edge
// between the timeline and the details is a separator: drag it, or focus it and use the
// arrows (Enter hides the timeline); the header's "timeline" button and t hide and show it.
"use strict";

const LAYOUT_KEY = "cairn-ui-layout";
function layout() { try { return { width: 32, shown: true, ...JSON.parse(localStorage.getItem(LAYOUT_KEY)) }; } catch { return { width: 32, shown: true }; } }
function saveLayout(l) { try { localStorage.setItem(LAYOUT_KEY, JSON.stringify(l)); } catch { /* private mode: not kept */ } }

function applyLayout(l) {
  const timeline = document.getElementById("timeline");
  const edge = document.getElementById("splitter");
  // Through the CSSOM: the page's CSP allows no inline style attribute.
  timeline.style.width = l.width + "%";
  timeline.hidden = !l.shown;
  edge.hidden = !l.shown;
  edge.setAttribute("aria-valuenow", String(Math.round(l.width)));
  const toggle = document.getElementById("timeline-toggle");
  toggle.setAttribute("aria-expanded", String(l.shown));
}

function toggleTimeline() {
  const l = layout();
  l.shown = !l.shown;
  saveLayout(l);
  applyLayout(l);
  if (!l.shown) document.getElementById("timeline-toggle").focus();
}

function resizeTimeline(width) {
  const l = layout();
  l.width = Math.max(15, Math.min(70, width));
  saveLayout(l);
  applyLayout(l);
}

function layoutControls() {
  const edge = document.getElementById("splitter");
  applyLayout(layout());
  document.getElementById("timeline-toggle").addEventListener("click", toggleTimeline);
  edge.addEventListener("keydown", (ev) => {
    const steps = { ArrowLeft: -5, ArrowRight: 5, Home: -100, End: 100 };
    if (ev.key in steps) resizeTimeline(layout().width + steps[ev.key]);
    else if (ev.key === "Enter") toggleTimeline();
    else return;
    ev.preventDefault();
    ev.stopPropagation();
  });
  edge.addEventListener("pointerdown", (ev) => {
    edge.setPointerCapture(ev.pointerId);
    const main = edge.parentElement.getBoundingClientRect();
    const move = (m) => resizeTimeline(((m.clientX - main.left) * 100) / main.width);
    const stop = () => { edge.removeEventListener("pointermove", move); edge.removeEventListener("pointerup", stop); };
    edge.addEventListener("pointermove", move);
    edge.addEventListener("pointerup", stop);
  });
}
