"""The source tree: first save, saves with nothing or 20 files changed, diff, restore into an
empty directory and in place.

All tools work on the same tree, one after another within each run. The stores left by the
last first-save run are the ones every later operation (and the churn suite) continues with.
"""

from __future__ import annotations

from pathlib import Path

from cairn import Cairn, WatchedCairn
from common import Context, compare, manifest, rounds, undo_rounds, without_content
from measure import Measurement, Outcome, SetupError, remove_tree
from peers import Copy, Git, Restic, TarZstd, Tool, stat_walks
from workload import Tree, change_files


class SourceTools:
    def __init__(self, ctx: Context, tree: Tree):
        self.cairn = Cairn(ctx.cairn_binary, tree.root, ctx.store("cairn-src"), ctx.env, ctx.cairn_unavailable)
        self.watched = WatchedCairn(ctx.cairn_binary, tree.root, ctx.store("cairn-watched"), ctx.env,
                                    ctx.cairn_unavailable)
        self.git = Git(tree.root, ctx.store("git-src.git"), ctx.env)
        self.tar = TarZstd(tree.root, ctx.store("tar-src"), ctx.env)
        self.restic = Restic(tree.root, ctx.store("restic-src"), ctx.env)
        self.copy = Copy(tree.root, ctx.store("cp-keeps-nothing"), ctx.env)

    @property
    def savers(self) -> list[Tool]:
        """The tools that keep history (tar keeps one archive)."""
        return [self.cairn, self.git, self.restic]


def save_all(ctx: Context, tools: list[Tool]) -> None:
    """An unmeasured save with each tool, so they all hold the tree's current state."""
    for tool in tools:
        try:
            cmd = tool.save()
            outcome = ctx.runner.run(cmd)
            if outcome.ok:
                tool.saved(ctx.runner, outcome)
            else:
                ctx.log(f"  {tool.name}: {outcome.error_text(cmd)}")
        except SetupError as e:
            ctx.log(f"  {tool.name}: {e}")


def run(ctx: Context, tree: Tree) -> list[Tool]:
    """Returns the tools that keep history, with their stores, for the churn suite."""
    t = SourceTools(ctx, tree)
    section = ctx.results.section(
        f"Source tree ({len(tree.files):,} files, {tree.bytes / 1e6:.0f} MB)",
        "Stores are directories' `du -sb` after the first save. git does not store the tree's own "
        "`.git` (it never adds a directory named `.git`); the others do.")

    ctx.log("source: bare stat walk")
    walks = stat_walks(tree.root, ctx.env, ctx.threads)
    floor: dict[str, Measurement] = {}
    for name, cmd in walks.items():
        m = floor[name] = Measurement()
        for _ in range(ctx.runs):
            outcome = ctx.runner.run(cmd)
            if outcome.ok:
                m.add(outcome)
            else:
                m.fail(outcome.error_text(cmd))
                break
    section.add("source.statwalk", "stat walk, the floor for a save with nothing changed", floor)

    first_tools = [t.cairn, t.git, t.tar, t.restic]

    def fresh(tool: Tool, run: int) -> None:
        tool.fresh_store(ctx.runner)

    def saved(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        return cairn_count_check(t.cairn, tree) if tool is t.cairn else None

    for variant, cold in [("warm", False), ("cold", True)]:
        runs = ctx.heavy_runs if not cold else ctx.cold_runs
        if runs == 0:
            continue
        # Cold, only cairn and the target's peer: git's and restic's cold first saves took 22
        # and 15 s, a minute of the run's 15 with the store clean-ups, for figures no target uses.
        tools = first_tools if not cold else [x for x in first_tools if x.name in ("cairn", "tar+zstd")]
        ctx.log(f"source: first save ({variant} cache)")
        ms, notes = rounds(ctx, tools, lambda tool: tool.save(), runs, setup=fresh, after=saved,
                           cold=cold, warm=[tree.root])
        stores = {tool.name: tool.store_size() for tool in tools if ms[tool.name].error is None}
        section.add(f"source.first.{variant}", f"first save ({variant} cache)", ms, notes, stores)

    # The watched store: a watcher, then two unmeasured saves (the first walks the tree and
    # leaves the directory summaries the journal saves after it start from).
    watched = [t.watched]
    try:
        t.watched.fresh_store(ctx.runner)
        t.watched.start_watcher(ctx.runner)
        save_all(ctx, [t.watched, t.watched])
    except SetupError as e:
        ctx.log(f"  cairn+watch: {e}")
        watched = []
    journal_note = {"cairn+watch": "with `cairn watch` running"}

    def saved_checked(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        if tool is t.watched and not t.watched.used_journal():
            return f"the save walked the tree: {t.watched.last_record.get('stats', {}).get('change_journal')}"
        return None

    ctx.log("source: save, nothing changed")
    ms, notes = rounds(ctx, t.savers + watched, lambda tool: tool.save(), ctx.runs, after=saved_checked,
                       warm=[tree.root])
    section.add("source.nochange", "save, nothing changed", ms, notes, extra=journal_note)

    ctx.log(f"source: save, {ctx.scale.changed_files} files changed")
    ms, notes = rounds(ctx, t.savers + watched, lambda tool: tool.save(), ctx.runs,
                       before_run=lambda run: change_files(tree, ctx.pool, ctx.seed, f"save:{run}", ctx.scale.changed_files),
                       after=saved_checked, warm=[tree.root])
    section.add("source.save20", f"save, {ctx.scale.changed_files} files changed", ms, notes, extra=journal_note)

    ctx.log(f"source: diff of two snapshots, {ctx.scale.diff_files} files changed")
    before = {tool.name: len(tool.refs) for tool in t.savers}
    change_files(tree, ctx.pool, ctx.seed, "diff", ctx.scale.diff_files)
    save_all(ctx, t.savers + watched)

    def diff(tool: Tool):
        n = before[tool.name]
        if n == 0 or len(tool.refs) != n + 1:
            raise SetupError(f"{tool.name} has no two snapshots to compare (a save failed)")
        return tool.diff(tool.ref(n - 1), tool.ref(n))

    ms, notes = rounds(ctx, t.savers, diff, ctx.runs)
    section.add("source.diff", f"diff of two snapshots, {ctx.scale.diff_files} files changed", ms, notes,
                extra={"cairn": "`cairn diff A B --stat`", "git": "`git diff --stat A B`",
                       "restic": "`restic diff A B`"})

    restore_empty(ctx, t, tree, section)
    restore_in_place(ctx, t, tree, section, watched)
    return t.savers


def cairn_count_check(cairn: Cairn, tree: Tree) -> str | None:
    """cairn must have captured the whole tree; a save that skipped files would look fast."""
    files = cairn.last_record.get("stats", {}).get("files")
    expected = len(tree.files) + tree.symlinks + tree.git_files
    if isinstance(files, int) and files not in (expected, len(tree.files) + tree.git_files):
        return f"cairn save reported {files:,} files; the tree holds {expected:,} (symlinks included)"
    return None


def restore_empty(ctx: Context, t: SourceTools, tree: Tree, section) -> None:
    tools = [t.cairn, t.copy, t.tar, t.git, t.restic]
    # The archive must hold the state the others restore: the tree as it is now.
    try:
        t.tar.fresh_store(ctx.runner)
        outcome = ctx.runner.check(t.tar.save(), "tar | zstd")
        t.tar.saved(ctx.runner, outcome)
    except SetupError as e:
        ctx.log(f"  tar+zstd: {e}")
    # cairn's restore is compared byte for byte; the peers' (which are not under test) by
    # names, sizes, modes and link targets, to catch a harness mistake cheaply.
    expected = manifest(tree.root)
    expected_meta = without_content(expected)
    expected_git = {k: v for k, v in expected_meta.items() if not k.startswith(".git/")}
    checked: set[str] = set()

    def dest_for(tool: Tool, run: int) -> Path:
        return ctx.scratch(f"restore-{tool.name.replace(' ', '').replace('+', '-')}-{run}")

    def setup(tool: Tool, run: int) -> None:
        dest = dest_for(tool, run)
        remove_tree(dest)
        dest.mkdir()

    def after(tool: Tool, run: int, outcome: Outcome) -> str | None:
        dest = dest_for(tool, run)
        problem = None
        if tool.name not in checked:  # the full comparison once per tool is enough
            checked.add(tool.name)
            root = tool.restored_root(dest)
            if tool is t.cairn:
                problem = compare(expected, manifest(root))
            else:
                got = manifest(root, skip_git=tool is t.git, content=False)
                problem = compare(expected_git if tool is t.git else expected_meta, got)
        remove_tree(dest)
        index = dest.parent / f"{dest.name}.index"
        index.unlink(missing_ok=True)
        return problem

    current = {"run": 0}

    def command(tool: Tool):
        return tool.restore_to(dest_for(tool, current["run"]))

    for variant, cold in [("warm", False), ("cold", True)]:
        runs = ctx.heavy_runs if not cold else ctx.cold_runs
        if runs == 0:
            continue
        ctx.log(f"source: restore into an empty directory ({variant} cache)")
        ms, notes = rounds(ctx, tools, command, runs,
                           before_run=lambda run: current.update(run=run),
                           setup=setup, after=after, cold=cold,
                           warm=[tree.root, *(tool.store for tool in tools)])
        section.add(f"source.restore_empty.{variant}", f"restore into an empty directory ({variant} cache)", ms,
                    notes, extra={"git": "`git checkout REF -- .` into an empty work tree (no `.git` to write)",
                                  "tar+zstd": "`zstd -d | tar -x`"})


def restore_in_place(ctx: Context, t: SourceTools, tree: Tree, section, watched: list[Tool]) -> None:
    """Change files, then put the tree back with each tool in turn: every tool gets exactly
    the same 20 edits to undo."""
    ctx.log(f"source: in-place restore after {ctx.scale.changed_files} files changed")
    # restic rewrites every file of the tree, which leaves every other tool's stat cache (and
    # git's index) stale; so it goes last, after the others have done all their runs.
    for tools in ([t.cairn, *watched, t.git], [t.restic]):
        ms, notes = undo_rounds(ctx, tree, tools, "inplace:", ctx.scale.changed_files, ctx.runs,
                                warm=[tree.root, *(tool.store for tool in tools)])
        section.add("source.restore_inplace", f"in-place restore after {ctx.scale.changed_files} files changed",
                    ms, notes, extra={"cairn": "`cairn restore REF` (takes a safety snapshot first)",
                                      "cairn+watch": "the same, with `cairn watch` running",
                                      "git": "`git reset --hard REF`"})
    t.watched.stop_watcher(ctx.runner)
