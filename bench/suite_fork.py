"""Forking a session that holds many snapshots. cairn copies snapshot records, never data;
arcave copies every byte the source session holds, which is reported beside it."""

from __future__ import annotations

from cairn import Cairn
from common import Context, rounds
from measure import Measurement, Outcome, SetupError
from report import size
from workload import change_files, generate_small_tree


def run(ctx: Context) -> None:
    n = ctx.scale.fork_snapshots
    tree = generate_small_tree(ctx.data("fork"), ctx.seed, ctx.pool, ctx.scale.fork_tree_files)
    cairn = Cairn(ctx.cairn_binary, tree.root, ctx.store("cairn-fork"), ctx.env, ctx.cairn_unavailable)
    section = ctx.results.section(
        f"Fork a session holding {n:,} snapshots",
        f"The session is filled with {n:,} saves of a {len(tree.files)}-file tree "
        f"({size(tree.bytes)}), one file changed before each. The fork is "
        f"`cairn session create NAME --from SRC`.")

    ctx.log(f"fork: {n:,} saves to fill a session")
    saves = Measurement()
    referenced = 0
    for i in range(n):
        change_files(tree, ctx.pool, ctx.seed, f"fork:{i}", 1)
        try:
            cmd = cairn.save()
            outcome = ctx.runner.run(cmd)
            if not outcome.ok:
                saves.fail(outcome.error_text(cmd))
                break
            saves.add(outcome)
            cairn.saved(ctx.runner, outcome)
            referenced += int(cairn.last_record.get("stats", {}).get("bytes") or 0)
        except SetupError as e:
            saves.fail(str(e))
            break
    section.add("fork.fill", f"save ({len(tree.files)}-file tree, 1 file changed), {n:,} times",
                {"cairn": saves})

    source = "baseline"
    copied = referenced
    try:
        if saves.error is None:
            for s in cairn.sessions(ctx.runner):
                if s.get("snapshot_count") == n:
                    source = s.get("name", source)
                    copied = int(s.get("size_bytes") or referenced)
    except SetupError as e:
        ctx.log(f"  {e}")

    checked = []

    def after(tool, run: int, outcome: Outcome) -> str | None:
        if checked:
            return None
        checked.append(run)
        for s in cairn.sessions(ctx.runner):
            if s.get("name") == f"fork-{run}":
                got = s.get("snapshot_count")
                return None if got == n else f"the fork holds {got} snapshots, not {n}"
        return f"cairn session list does not show fork-{run}"

    ctx.log("fork: session create --from")
    current = {"run": 0}
    ms, notes = rounds(ctx, [cairn], lambda tool: cairn.fork(f"fork-{current['run']}", source), ctx.runs,
                       before_run=lambda run: current.update(run=run),
                       after=after if saves.error is None else None)
    if saves.error is not None:
        ms["cairn"].fail(f"the session could not be filled: {saves.error}")
    ctx.results.facts["fork"] = {"snapshots": n, "arcave_copies_bytes": copied}
    section.add("fork.create", f"fork a session holding {n:,} snapshots", ms, notes,
                extra={"cairn": "copies snapshot records only"})
    section.add("fork.create", f"fork a session holding {n:,} snapshots", {"arcave": Measurement()},
                stores={"arcave": copied},
                extra={"arcave": f"not run: it copies every byte the source session holds, "
                                 f"{size(copied)} here (the session's `size_bytes`, else the sum of "
                                 f"its snapshots' bytes)"})
