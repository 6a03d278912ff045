"""Churn: many saves in a row, each after rewriting a region of 1% of the files, and how much
each store grows for it. It continues with the source tree and the stores the source suite
left, after one unmeasured save per tool: the in-place restores before it left stat caches
stale (restic rewrites every file), and the first churn save should not pay for that.
"""

from __future__ import annotations

from common import Context, rotated
from measure import Cmd, Measurement, SetupError
from peers import Tool
from report import size
from workload import Tree, change_files


def save(ctx: Context, tool: Tool, m: Measurement | None = None) -> None:
    """One save, timed into `m`; a failure is recorded in `m` (which stops this tool)."""
    m = m if m is not None else Measurement()
    try:
        cmd = tool.save()
        outcome = ctx.runner.run(cmd)
        if not outcome.ok:
            m.fail(outcome.error_text(cmd))
            return
        m.add(outcome)
        tool.saved(ctx.runner, outcome)
    except SetupError as e:
        m.fail(str(e))


def run(ctx: Context, tree: Tree, tools: list[Tool]) -> None:
    saves = ctx.scale.churn_saves
    per_step = max(1, len(tree.files) // 100)
    ms = {tool.name: Measurement() for tool in tools}
    for tool in tools:
        save(ctx, tool)
    before = {tool.name: tool.store_size() for tool in tools}

    ctx.log(f"churn: {saves} saves, {per_step} files changed before each")
    file_bytes = region_bytes = 0
    for step in range(saves):
        change = change_files(tree, ctx.pool, ctx.seed, f"churn:{step}", per_step)
        file_bytes += change.file_bytes
        region_bytes += change.region_bytes
        for tool in rotated(tools, step):
            if ms[tool.name].error is None:
                save(ctx, tool, ms[tool.name])
    after = {tool.name: tool.store_size() for tool in tools}
    growth = {name: after[name] - before[name] for name in after if ms[name].error is None}

    # One tar.gz of the tree stands for each of the full copies a tar-per-save scheme keeps.
    archive = ctx.scratch("churn.tar.gz")
    cmd_tar = Cmd(f"tar -C '{tree.root.parent}' -czf '{archive}' '{tree.root.name}'", ctx.env)
    tar_m = Measurement()
    outcome = ctx.runner.run(cmd_tar)
    one = None
    if outcome.ok:
        tar_m.add(outcome)
        one = archive.stat().st_size
        archive.unlink()
    else:
        tar_m.fail(outcome.error_text(cmd_tar))

    ctx.results.facts["churn"] = {
        "saves": saves, "files_per_save": per_step, "changed_file_bytes": file_bytes,
        "region_bytes": region_bytes, "growth": growth, "tar_gz_bytes": one,
    }
    section = ctx.results.section(
        f"Churn: {saves} saves, {per_step:,} files (1%) changed before each",
        f"The source tree again, with the stores the operations above left. Before each save a "
        f"region (256 B–4 kB) of {per_step:,} files is rewritten: {size(region_bytes)} rewritten in "
        f"all, in files totalling {size(file_bytes)}, the \"bytes changed\" the target is measured "
        f"against (a file-level store must take each changed file in). Time is the median of one "
        f"save; store is the store's size after the last save; growth is what the {saves} saves "
        f"added.")
    notes = {name: f"grew {size(g)} = {g / file_bytes:.2f}× the bytes changed" for name, g in growth.items()}
    section.add("churn.save", f"save, {per_step:,} files changed", ms, stores=after, extra=notes)
    if one is not None:
        label = "tar.gz per save"
        section.add("churn.save", f"save, {per_step:,} files changed", {label: tar_m},
                    stores={label: one * saves},
                    extra={label: f"{saves} × one `tar -czf` archive of {size(one)} (one archive "
                                  f"made and timed; {saves} × is what the scheme would keep)"})
