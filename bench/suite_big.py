"""Big files: a few files of hundreds of MB; between saves 1 MB in the middle of the biggest
one is overwritten. What matters is how long a save takes and how much it stores."""

from __future__ import annotations

from cairn import Cairn
from common import Context, rounds
from measure import Outcome
from peers import Git, Restic, Tool
from report import size
from workload import edit_big, generate_big


def run(ctx: Context) -> None:
    spec = ctx.scale.big
    root = ctx.data("big")
    ctx.log("big files: generating")
    entries = generate_big(root, spec, ctx.seed)
    total = sum(e.size for e in entries)
    tools: list[Tool] = [
        Cairn(ctx.cairn_binary, root, ctx.store("cairn-big"), ctx.env, ctx.cairn_unavailable),
        Git(root, ctx.store("git-big.git"), ctx.env),
        Restic(root, ctx.store("restic-big"), ctx.env),
    ]
    section = ctx.results.section(
        f"Big files ({len(entries)} file{'s' if len(entries) > 1 else ''}, {size(total)})",
        f"The edited file is {size(spec.edited_bytes)}; before each measured save {size(spec.edit_bytes)} "
        f"in its middle is overwritten with new random bytes (a fresh spot each time). All data is "
        f"incompressible. \"stored\" is the growth of the store's `du -sb` for that save (median).")

    ctx.log("big files: first save")
    ms, notes = rounds(ctx, tools, lambda tool: tool.save(), 1,
                       setup=lambda tool, run: tool.fresh_store(ctx.runner),
                       after=lambda tool, run, outcome: tool.saved(ctx.runner, outcome))
    stores = {tool.name: tool.store_size() for tool in tools if ms[tool.name].error is None}
    section.add("big.first", f"first save ({size(total)})", ms, notes, stores)

    ctx.log("big files: save after a 1 MB edit")
    before: dict[str, int] = {}
    stored: dict[str, list[int]] = {tool.name: [] for tool in tools}

    def setup(tool: Tool, run: int) -> None:
        before[tool.name] = tool.store_size()

    def after(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        stored[tool.name].append(tool.store_size() - before[tool.name])
        return None

    # At most 2 runs: each costs git a full re-compression of the edited file (16 s of a full
    # run's 15 minutes), and the tools' times differ by far more than their spread.
    ms, notes = rounds(ctx, tools, lambda tool: tool.save(), min(ctx.runs, 2),
                       before_run=lambda run: edit_big(root, spec, ctx.seed, run),
                       setup=setup, after=after)
    extra = {}
    for name, values in stored.items():
        if values:
            values = sorted(values)
            extra[name] = f"stored {size(values[len(values) // 2])} per save"
    stores = {tool.name: tool.store_size() for tool in tools if ms[tool.name].error is None}
    ctx.results.facts["big"] = {name: sorted(v) for name, v in stored.items()}
    section.add("big.edit", f"save after a {size(spec.edit_bytes)} edit in a {size(spec.edited_bytes)} file",
                ms, notes, stores, extra)
