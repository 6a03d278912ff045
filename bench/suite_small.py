"""The small repository: what most agent sessions run in. A generated tree of the source
workload's shape at about 3,000 files, with a real `.git` (a pack and loose objects, as
workload.add_git_history writes it), measured at the everyday operations where a command's
fixed cost dominates (issue #41): saves with nothing or 20 files changed and an in-place
restore, without and with the watcher, beside git on the same tree; and the first save and a
restore into an empty directory beside tar+zstd and cp -a.

What git runs (its directory outside the tree, as in the other suites, so the tree's own
`.git` is never touched by the peer):
- save, nothing changed: `git add -A && git diff --cached --quiet`: what a checkpoint does
  when nothing changed (stage, find nothing to commit, record nothing); cairn's `save` records
  a snapshot even then, so `git add -A && git commit --allow-empty` into the same repository is
  shown beside it, not judged;
- save, 20 files changed: `git add -A && git commit -q -m save`;
- in-place restore: `git reset -q --hard REF`, REF the commit before the 20 files changed;
- first save: `git add -A && git commit` into an empty repository; restore into an empty
  directory: `git checkout REF -- .` into an empty work tree.
"""

from __future__ import annotations

from pathlib import Path

from cairn import Cairn, WatchedCairn
from common import Context, compare, manifest, rounds, undo_rounds, without_content
from measure import Cmd, Outcome, SetupError, remove_tree
from peers import Copy, Git, TarZstd, Tool
from suite_source import cairn_count_check, save_all
from workload import Tree, TreeSpec, add_git_history, apply_change, generate_tree, plan_change

SPEC = TreeSpec(files=3_000, dirs=150, total_bytes=24_000_000, binary_share=0.05, git_share=0.6)
CHANGED = 20


class CheckpointGit(Git):
    """git as a checkpoint: a commit when something changed, nothing recorded otherwise."""

    def save(self) -> Cmd:
        return Cmd("git add -A && git commit -q -m save", self._env(), self.tree)

    def nothing_changed(self) -> Cmd:
        return Cmd("git add -A && git diff --cached --quiet", self._env(), self.tree)


class EmptyCommitGit(Git):
    """The same repository, committing even when nothing changed (`--allow-empty`), as cairn's
    `save` records a snapshot even then: shown beside the no-change save, not judged."""

    name = "git commit --allow-empty"


def light_runs(ctx: Context) -> int:
    """Runs of every operation here. Each takes a tenth of a second or less, as long as a few
    page-cache writebacks or a burst of load, so they run three times as often as the source
    tree's: with five runs, two full runs of the same build gave the first save 1.12× and
    1.36× tar+zstd (with three, ratios moved by a tenth from one run to the next)."""
    return max(ctx.runs, ctx.heavy_runs) * 3


def generate(ctx: Context) -> Tree:
    tree = generate_tree(ctx.data("small"), SPEC, ctx.seed, ctx.pool)
    add_git_history(tree, SPEC, ctx.seed, ctx.work / "home")
    return tree


def describe(tree: Tree) -> str:
    return (f"**Small repository:** {len(tree.files):,} files ({sum(f.binary for f in tree.files)} of them "
            f"incompressible binaries), {tree.symlinks} symlinks, {tree.dirs:,} directories, "
            f"{tree.bytes / 1e6:.0f} MB, with a `.git` of {tree.git_files} files (a pack of "
            f"{int(SPEC.git_share * 100)}% of the text files in two commits, and the loose objects of a third "
            f"commit): "
            f"the source tree's shape at the size of most repositories an agent works in.")


def run(ctx: Context, tree: Tree) -> None:
    section = ctx.results.section(
        f"Small repository ({len(tree.files):,} files, {tree.bytes / 1e6:.0f} MB, with its `.git`)",
        "The everyday operations of an agent's turn on a small repository, where the fixed cost of a "
        "command dominates. git's directory is outside the tree (it never adds the tree's own `.git`; "
        "cairn saves it). Before each run every tool's source is read once: the tree for saves and "
        "`cp -a`, the tree and each tool's store for restores. git's no-change save is "
        "`git add -A && git diff --cached --quiet` (stage, find nothing to commit: no commit is "
        "made; cairn's `save` records a snapshot even then, so the same repository committing with "
        "`--allow-empty` is shown beside it), its 20-file save `git add -A && git commit -q -m save`, its "
        "in-place restore `git reset -q --hard REF`.")
    cairn = Cairn(ctx.cairn_binary, tree.root, ctx.store("small-cairn"), ctx.env, ctx.cairn_unavailable)
    watched = WatchedCairn(ctx.cairn_binary, tree.root, ctx.store("small-watched"), ctx.env, ctx.cairn_unavailable)
    git = CheckpointGit(tree.root, ctx.store("small-git.git"), ctx.env)
    tar = TarZstd(tree.root, ctx.store("small-tar"), ctx.env)
    copy = Copy(tree.root, ctx.store("small-cp-keeps-nothing"), ctx.env)
    try:
        measure(ctx, tree, section, cairn, watched, git, tar, copy)
    finally:
        watched.stop_watcher(ctx.runner)


def measure(ctx: Context, tree: Tree, section, cairn: Cairn, watched: WatchedCairn, git: CheckpointGit,
            tar: TarZstd, copy: Copy) -> None:
    journal_note = {"cairn+watch": "with `cairn watch` running"}

    def fresh(tool: Tool, run: int) -> None:
        tool.fresh_store(ctx.runner)

    def saved(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        return cairn_count_check(cairn, tree) if tool is cairn else None

    for variant, cold in [("warm", False), ("cold", True)]:
        runs = light_runs(ctx) if not cold else ctx.cold_runs
        if runs == 0:
            continue
        tools = [cairn, git, tar] if not cold else [cairn, tar]
        ctx.log(f"small: first save ({variant} cache)")
        ms, notes = rounds(ctx, tools, lambda tool: tool.save(), runs, setup=fresh, after=saved,
                           cold=cold, warm=[] if cold else [tree.root])
        stores = {tool.name: tool.store_size() for tool in tools if ms[tool.name].error is None}
        section.add(f"small.first.{variant}", f"first save ({variant} cache)", ms, notes, stores,
                    extra={"git": "`git add -A && git commit` into an empty repository",
                           "tar+zstd": "`tar -c | zstd -1 -T0`"})

    watch = [watched]
    try:
        watched.fresh_store(ctx.runner)
        watched.start_watcher(ctx.runner)
        save_all(ctx, [watched, watched])
    except SetupError as e:
        ctx.log(f"  cairn+watch: {e}")
        watch = []
    savers = [cairn, *watch, git]

    def saved_checked(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        if tool is watched and not watched.used_journal():
            return f"the save walked the tree: {watched.last_record.get('stats', {}).get('change_journal')}"
        return None

    ctx.log("small: save, nothing changed")
    empty = EmptyCommitGit(tree.root, git.store, ctx.env)
    ms, notes = rounds(ctx, [*savers, empty], lambda tool: tool.nothing_changed() if tool is git else tool.save(),
                       light_runs(ctx), after=saved_checked, warm=[tree.root])
    section.add("small.nochange", "save, nothing changed", ms, notes,
                extra=journal_note | {"cairn": "records a snapshot",
                                      "git": "`git add -A && git diff --cached --quiet` (no commit)",
                                      empty.name: "`git add -A && git commit -q --allow-empty` (a commit, as "
                                                  "cairn records a snapshot; not judged)"})

    ctx.log(f"small: save, {CHANGED} files changed")
    ms, notes = rounds(ctx, savers, lambda tool: tool.save(), light_runs(ctx),
                       before_run=lambda run: apply_change(tree, plan_change(tree, ctx.pool, ctx.seed,
                                                                             f"small:save:{run}", CHANGED)),
                       after=saved_checked, warm=[tree.root])
    section.add("small.save20", f"save, {CHANGED} files changed", ms, notes,
                extra=journal_note | {"git": "`git add -A && git commit -q -m save`"})

    ctx.log(f"small: in-place restore after {CHANGED} files changed")
    in_place(ctx, tree, section, savers)

    ctx.log("small: restore into an empty directory")
    restore_empty(ctx, tree, section, cairn, git, tar, copy)


def in_place(ctx: Context, tree: Tree, section, tools: list[Tool]) -> None:
    """Every tool undoes exactly the same 20 edits: back to its latest save."""
    ms, notes = undo_rounds(ctx, tree, tools, "small:inplace:", CHANGED, light_runs(ctx),
                            warm=[tree.root, *(tool.store for tool in tools)])
    section.add("small.inplace", f"in-place restore after {CHANGED} files changed", ms, notes,
                extra={"cairn": "`cairn restore REF` (takes a safety snapshot first)",
                       "cairn+watch": "the same, with `cairn watch` running",
                       "git": "`git reset -q --hard REF`"})


def restore_empty(ctx: Context, tree: Tree, section, cairn: Cairn, git: Git, tar: TarZstd, copy: Copy) -> None:
    try:  # the archive holds the tree as it is now, as the others' latest saves do
        tar.fresh_store(ctx.runner)
        tar.saved(ctx.runner, ctx.runner.check(tar.save(), "tar | zstd"))
    except SetupError as e:
        ctx.log(f"  tar+zstd: {e}")
    expected = manifest(tree.root)
    expected_meta = without_content(expected)
    expected_git = {k: v for k, v in expected_meta.items() if not k.startswith(".git/")}
    checked: set[str] = set()
    tools = [cairn, copy, tar, git]

    def dest_for(tool: Tool, run: int) -> Path:
        return ctx.scratch(f"small-restore-{tool.name.replace(' ', '').replace('+', '-')}-{run}")

    def setup(tool: Tool, run: int) -> None:
        dest = dest_for(tool, run)
        remove_tree(dest)
        dest.mkdir()

    def after(tool: Tool, run: int, outcome: Outcome) -> str | None:
        dest = dest_for(tool, run)
        problem = None
        if tool.name not in checked:
            checked.add(tool.name)
            root = tool.restored_root(dest)
            if tool is cairn:
                problem = compare(expected, manifest(root))
            else:
                got = manifest(root, skip_git=tool is git, content=False)
                problem = compare(expected_git if tool is git else expected_meta, got)
        remove_tree(dest)
        (dest.parent / f"{dest.name}.index").unlink(missing_ok=True)
        return problem

    current = {"run": 0}
    for variant, cold in [("warm", False), ("cold", True)]:
        runs = light_runs(ctx) if not cold else ctx.cold_runs
        if runs == 0:
            continue
        ms, notes = rounds(ctx, tools, lambda tool: tool.restore_to(dest_for(tool, current["run"])), runs,
                           before_run=lambda run: current.update(run=run), setup=setup, after=after,
                           cold=cold, warm=[] if cold else [tree.root, *(t.store for t in tools)])
        section.add(f"small.restore_empty.{variant}", f"restore into an empty directory ({variant} cache)", ms,
                    notes, extra={"git": "`git checkout REF -- .` into an empty work tree (no `.git` to write)",
                                  "tar+zstd": "`zstd -d | tar -x`", "cp -a": "`cp -a` of the tree"})
