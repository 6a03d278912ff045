"""The agent hooks' cost per event, for every agent cairn supports (hook_cost.py, which also
runs on its own): on a generated tree the size of the source tree (50,000 files; 5,000 with
--quick) with an empty `.git` of its own, each agent's installed hook beside a shadow-git checkpoint."""

from __future__ import annotations

import hook_cost
from common import Context
from measure import Measurement, remove_tree


def run(ctx: Context, agents: list[str], rounds: int | None = None) -> None:
    files = ctx.scale.tree.files
    rounds = rounds or (hook_cost.QUICK_ROUNDS if files < hook_cost.FULL_FILES else hook_cost.FULL_ROUNDS)
    section = ctx.results.section(f"Agent hooks: cost per event ({files:,} files)", kind="hooks")
    if ctx.cairn_binary is None:
        for agent in agents:
            m = Measurement()
            m.fail(ctx.cairn_unavailable or "cairn is not built")
            section.add(f"hooks.{agent}.first", "hook", {"cairn": m})
        return
    ctx.log(f"hooks: generating a {files:,}-file tree with an empty .git")
    tree = hook_cost.generate(ctx.data("hooks"), files, ctx.seed, ctx.pool)
    env = {k: v for k, v in ctx.env.items() if not k.startswith("XDG_") and k != "HOME"}
    try:
        run_ = hook_cost.measure(ctx.runner, ctx.cairn_binary, ctx.work / "hooks", tree, env, agents, rounds,
                                 ctx.seed, ctx.pool, ctx.log)
    finally:
        remove_tree(tree.root)
        remove_tree(ctx.work / "hooks")
    section.intro = " ".join(hook_cost.describe(run_))
    ctx.results.facts["hooks"] = {"files": run_.files, "rounds": run_.rounds, "agents": agents,
                                  "load_before": run_.load_before, "load_after": run_.load_after}
    for result in run_.results:
        if result.error:
            m = Measurement()
            m.fail(result.error)
            section.add(f"hooks.{result.agent}.first", "hook", {"cairn": m})
            continue
        for kind, label in hook_cost.EVENTS:
            found = {}
            if kind in result.cairn:
                found["cairn"] = result.cairn[kind]
            if kind in result.git:
                found["shadow git"] = result.git[kind]
            section.add(f"hooks.{result.agent}.{kind}", f"{hook_cost.NAMES[result.agent]}: {label}", found)
