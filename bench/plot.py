"""Line charts of the scale series as SVG, formatted by hand (no plotting package): file count
on a log x axis, time or memory on a log y axis, one line per tool and operation. Colour says
the operation, the line's style the tool: cairn solid, git dashed, tar+zstd dotted."""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#555555"]
# tool -> (stroke-dasharray, stroke width, marker)
STYLES = {
    "cairn": ("", 2.0, "circle"),
    "cairn+watch": ("", 3.0, "square"),
    "git": ("7 4", 2.0, "triangle"),
    "tar+zstd": ("2 3", 2.0, "none"),
    "watcher": ("", 2.0, "diamond"),
}
TOOL_LABELS = {"cairn": "cairn", "cairn+watch": "cairn with the watcher", "git": "git",
               "tar+zstd": "tar | zstd -1 -T0", "watcher": "the watcher process"}

WIDTH, HEIGHT = 900, 480
LEFT, RIGHT, TOP, BOTTOM = 72, 310, 44, 56


@dataclass
class Series:
    op: str      # the operation's label (its colour)
    tool: str    # a key of STYLES (its line style)
    points: list[tuple[float, float]]


def _ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 steps of each decade between lo and hi."""
    out = []
    for exp in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if lo <= v <= hi:
                out.append(v)
    return out


def _count(files: float) -> str:
    return f"{files / 1e6:g}M" if files >= 1e6 else f"{files / 1e3:g}k" if files >= 1e3 else f"{files:g}"


def seconds_label(v: float) -> str:
    return f"{v * 1000:g} ms" if v < 1 else f"{v:g} s"


def mib_label(v: float) -> str:
    return f"{v:g} MiB"


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="white" stroke="{colour}" stroke-width="2"/>'
    if kind == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}"/>'
    if kind == "triangle":
        return (f'<path d="M{x:.1f},{y - 4.5:.1f} L{x + 4.5:.1f},{y + 3.5:.1f} L{x - 4.5:.1f},{y + 3.5:.1f} Z" '
                f'fill="white" stroke="{colour}" stroke-width="1.5"/>')
    if kind == "diamond":
        return (f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z" '
                f'fill="{colour}"/>')
    return ""


def chart(title: str, y_label: str, series: list[Series], y_format, x_ticks: list[int],
          hline: tuple[float, str] | None = None) -> str:
    """An SVG document: the series on log-log axes, a legend of operations (colours) and tools
    (line styles) on the right, and an optional labelled horizontal line (a limit)."""
    series = [s for s in series if s.points]
    xs = [x for s in series for x, _ in s.points] or x_ticks
    ys = [y for s in series for _, y in s.points if y > 0]
    if hline:
        ys.append(hline[0])
    if not ys:
        ys = [1.0]
    x_lo, x_hi = min(xs) / 1.25, max(xs) * 1.25
    y_lo = 10 ** math.floor(math.log10(min(ys)))
    y_hi = 10 ** math.ceil(math.log10(max(ys)))
    if y_hi <= y_lo:
        y_hi = y_lo * 10
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * pw

    def py(y: float) -> float:
        return TOP + ph - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT + pw / 2:.1f}" y="24" text-anchor="middle" font-size="15" font-weight="bold">'
           f'{escape(title)}</text>']
    # Grid and tick labels.
    for v in _ticks(y_lo, y_hi):
        y = py(v)
        major = math.isclose(math.log10(v) % 1, 0, abs_tol=1e-9) or math.isclose(math.log10(v) % 1, 1, abs_tol=1e-9)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" '
                   f'stroke="{"#cccccc" if major else "#eeeeee"}" stroke-width="1"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="#333">{escape(y_format(v))}</text>')
    for v in x_ticks:
        x = px(v)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#dddddd" stroke-width="1"/>')
        out.append(f'<text x="{x:.1f}" y="{TOP + ph + 18}" text-anchor="middle" fill="#333">{_count(v)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333" stroke-width="1"/>')
    out.append(f'<text x="{LEFT + pw / 2:.1f}" y="{HEIGHT - 14}" text-anchor="middle">'
               f'files in the tree (log scale)</text>')
    out.append(f'<text transform="translate(18,{TOP + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)} (log scale)</text>')
    if hline:
        y = py(hline[0])
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#000" '
                   f'stroke-width="1.5" stroke-dasharray="10 3 2 3"/>')
        out.append(f'<text x="{LEFT + 6}" y="{y - 6:.1f}" fill="#000">{escape(hline[1])}</text>')

    ops = list(dict.fromkeys(s.op for s in series))
    colour = {op: COLOURS[i % len(COLOURS)] for i, op in enumerate(ops)}
    for s in series:
        dash, width, marker = STYLES.get(s.tool, ("", 2.0, "none"))
        c = colour[s.op]
        pts = sorted((x, y) for x, y in s.points if y > 0)
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(pts))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<path d="{path}" fill="none" stroke="{c}" stroke-width="{width}"{dash_attr} '
                   f'stroke-linejoin="round"><title>{escape(TOOL_LABELS.get(s.tool, s.tool))}: {escape(s.op)}</title></path>')
        out.extend(_marker(marker, px(x), py(y), c) for x, y in pts)

    # Legend: operations by colour, then tools by line style.
    lx, ly = LEFT + pw + 18, TOP + 6
    out.append(f'<text x="{lx}" y="{ly + 4}" font-weight="bold">operation</text>')
    ly += 20
    for op in ops:
        out.append(f'<line x1="{lx}" y1="{ly:.1f}" x2="{lx + 26}" y2="{ly:.1f}" stroke="{colour[op]}" stroke-width="3"/>')
        out.append(f'<text x="{lx + 34}" y="{ly + 4:.1f}">{escape(op)}</text>')
        ly += 18
    ly += 12
    out.append(f'<text x="{lx}" y="{ly + 4}" font-weight="bold">tool</text>')
    ly += 20
    used = {s.tool for s in series}
    for tool in [t for t in STYLES if t in used] + sorted(used - set(STYLES)):
        dash, width, marker = STYLES.get(tool, ("", 2.0, "none"))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{lx}" y1="{ly:.1f}" x2="{lx + 26}" y2="{ly:.1f}" stroke="#333" '
                   f'stroke-width="{width}"{dash_attr}/>')
        out.append(_marker(marker, lx + 13, ly, "#333"))
        out.append(f'<text x="{lx + 34}" y="{ly + 4:.1f}">{escape(TOOL_LABELS.get(tool, tool))}</text>')
        ly += 18
    out.append("</svg>")
    return "\n".join(out) + "\n"
