"""The scale series: how the cost of each operation grows with the tree, cairn beside git.

For each size a tree is generated as packages of 10,000 files, each one a source tree of its own
(about 6 kB a file, a directory per 50 files, no `.git`; workload.generate_monorepo), measured,
and deleted with its stores before the next size, so the disk holds one size
at a time. Within a size the tools take turns as in every other suite. The big sizes get fewer
runs: at 1,000,000 files one git first save writes a million loose objects.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from cairn import Cairn, WatchedCairn
from common import Context, compare, manifest, rounds, undo_rounds, without_content
from measure import Outcome, SetupError, remove_tree
from peers import Git, TarZstd, Tool
from report import scale_key, size
from suite_source import cairn_count_check, save_all
from workload import Tree, change_files, generate_monorepo

SIZES = [10_000, 50_000, 200_000, 1_000_000]
QUICK_SIZES = [2_000, 10_000]
BYTES_PER_FILE = 6_000
# Each size is made of packages of this many files (workload.generate_monorepo says why).
PACKAGE_FILES = 10_000
CHANGED = 20


key = scale_key  # the report finds the rows by these keys


def disk_bytes(files: int) -> int:
    """What one size needs on the scratch filesystem at its peak, with room to spare: the
    tree, two cairn stores, git's loose objects, the archive and one restored copy, each file
    rounded up to whole 4 kB blocks."""
    return files * 40_000


def inodes(files: int) -> int:
    """The tree, git's loose objects and one restored copy: three per file, and headroom."""
    return files * 4


# Up to this size the sources (the tree, and for restores the stores) are read once before each
# tool's run; above it they do not fit the page cache together, and reading them would only
# evict what the tool is about to read.
WARM_UP_TO = 200_000


def warm_paths(files: int, *paths: Path) -> list[Path]:
    return list(paths) if files <= WARM_UP_TO else []


def runs_for(ctx: Context, files: int) -> tuple[int, int]:
    """(runs of the quick operations, runs of the first save and the restore into an empty
    directory) at this size."""
    if files >= 1_000_000:
        return 1, 1
    if files >= 200_000:
        return min(ctx.runs, 3), 1
    return ctx.runs, ctx.heavy_runs


def watched_runs(ctx: Context, files: int) -> int:
    """Runs of the watched operations at this size: they take milliseconds even at the largest,
    so three times as many as the smaller sizes' quick operations, as the small repository's
    operations run, and one slow moment of a shared machine is not the figure (with three runs
    at 200,000 files, one run of 34 ms against some 25 was the median the flatness target
    read)."""
    return max(runs_for(ctx, files)[0], ctx.runs) * 3


def run(ctx: Context, sizes: list[int], after_size=None, git_up_to: int | None = None) -> None:
    """`after_size()` runs when a size is done (the run writes what it has so far, as the
    largest size alone can take most of an hour). Above `git_up_to` files git is left out:
    where the page cache cannot hold the tree and a million loose objects, git's first save
    reads the tree back from disk one small file at a time (it ran for over 25 minutes at
    1,000,000 files on a virtual disk)."""
    ctx.results.facts["scale"] = {"sizes": [], "bytes": {}, "dirs": {}, "runs": {}, "watcher_rss_kib": {},
                                  "without_git": []}
    for files in sizes:
        run_size(ctx, files, git_up_to is None or files <= git_up_to)
        if after_size is not None:
            after_size()


def run_size(ctx: Context, files: int, with_git: bool = True) -> None:
    facts = ctx.results.facts["scale"]
    root = ctx.data(f"scale-{files}")
    stores = [ctx.store(f"scale-{name}") for name in ("cairn", "cairn-watched", "git.git", "tar")]
    ctx.log(f"scale {files:,}: generating the tree")
    t0 = time.monotonic()
    tree = generate_monorepo(root, files, BYTES_PER_FILE, PACKAGE_FILES, ctx.seed, ctx.pool)
    ctx.log(f"scale {files:,}: {len(tree.files):,} files, {tree.dirs:,} directories, "
            f"{size(tree.bytes)} in {time.monotonic() - t0:.0f} s")
    runs, heavy = runs_for(ctx, files)
    facts["sizes"].append(files)
    facts["bytes"][files] = tree.bytes
    facts["dirs"][files] = tree.dirs
    facts["runs"][files] = [runs, heavy]
    if not with_git:
        facts["without_git"].append(files)
    section = ctx.results.section(
        f"Scale: {files:,} files ({size(tree.bytes)})",
        f"{len(tree.files):,} files in {tree.dirs:,} directories, {tree.symlinks} symlinks, no `.git` of its "
        f"own; {runs} run{'s' if runs != 1 else ''} of each operation, {heavy} of the first save and "
        f"the restore into an empty directory." + ("" if with_git else " git was not measured at this size."))
    cairn = Cairn(ctx.cairn_binary, root, stores[0], ctx.env, ctx.cairn_unavailable)
    # Above git's limit the page cache cannot hold the tree either: a second first save (for a
    # store of the watcher's own) read it back from disk at 2 MB/s. There the watcher is started
    # on cairn's store once cairn's own rounds are done, and the watched rounds follow.
    watched = WatchedCairn(ctx.cairn_binary, root, stores[0] if not with_git else stores[1], ctx.env,
                           ctx.cairn_unavailable)
    git = Git(root, stores[2], ctx.env) if with_git else None
    tar = TarZstd(root, stores[3], ctx.env)
    try:
        measure_size(ctx, files, tree, section, cairn, watched, git, tar, runs, heavy)
    finally:
        watched.stop_watcher(ctx.runner)
        ctx.log(f"scale {files:,}: removing the tree and its stores")
        for path in [root, *stores, ctx.work / "scratch"]:
            remove_tree(path)


def measure_size(ctx: Context, files: int, tree: Tree, section, cairn: Cairn, watched: WatchedCairn,
                 git: Git | None, tar: TarZstd, runs: int, heavy: int) -> None:
    label = f"scale {files:,}"
    peers = [git] if git is not None else []
    journal_note = {"cairn+watch": "with `cairn watch` running"}

    def report(op: str) -> None:
        for row in section.rows:
            if row.key == key(files, op):
                rss = f"{row.m.peak_rss_kib / 1024:.1f} MiB" if row.m.peak_rss_kib else "—"
                median = f"{row.m.median:.3f} s" if row.m.median is not None else (row.m.error or "—")
                ctx.log(f"  {row.tool}: {median}, peak RSS {rss}")

    def fresh(tool: Tool, run: int) -> None:
        tool.fresh_store(ctx.runner)

    def saved(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        return cairn_count_check(cairn, tree) if tool is cairn else None

    ctx.log(f"{label}: first save")
    big = git is None
    first = [cairn, *peers] + ([] if big else [tar])  # tar too would read the tree from disk
    ms, notes = rounds(ctx, first, lambda tool: tool.save(), heavy, setup=fresh, after=saved,
                       warm=warm_paths(files, tree.root))
    sizes = {tool.name: tool.store_size() for tool in first if ms[tool.name].error is None}
    section.add(key(files, "first"), "first save", ms, notes, sizes)
    report("first")
    remove_tree(tar.store)  # only the first save needs the archive; the space is better free

    def start_watching() -> list[Tool]:
        """The watcher, then unmeasured saves (on a fresh store the first reads the whole tree;
        the last leaves the answer the journal saves after it compare with)."""
        try:
            if big:
                watched.refs[:] = cairn.refs
                watched.start_watcher(ctx.runner)
                save_all(ctx, [watched])
            else:
                watched.fresh_store(ctx.runner)
                watched.start_watcher(ctx.runner)
                save_all(ctx, [watched, watched])
            return [watched]
        except SetupError as e:
            ctx.log(f"  cairn+watch: {e}")
            return []

    def saved_checked(tool: Tool, run: int, outcome: Outcome) -> str | None:
        tool.saved(ctx.runner, outcome)
        if tool is watched and not watched.used_journal():
            return f"the save walked the tree: {watched.last_record.get('stats', {}).get('change_journal')}"
        return None

    def phase(savers: list[Tool], tag: str, runs: int = runs) -> None:
        ctx.log(f"{label}: save, nothing changed")
        ms, notes = rounds(ctx, savers, lambda tool: tool.save(), runs, after=saved_checked,
                           warm=warm_paths(files, tree.root))
        section.add(key(files, "nochange"), "save, nothing changed", ms, notes, extra=journal_note)
        report("nochange")

        ctx.log(f"{label}: save, {CHANGED} files changed")
        ms, notes = rounds(ctx, savers, lambda tool: tool.save(), runs,
                           before_run=lambda run: change_files(tree, ctx.pool, ctx.seed,
                                                               f"scale:{files}:save:{tag}{run}", CHANGED),
                           after=saved_checked, warm=warm_paths(files, tree.root))
        section.add(key(files, "save20"), f"save, {CHANGED} files changed", ms, notes, extra=journal_note)
        report("save20")

        ctx.log(f"{label}: in-place restore after {CHANGED} files changed")
        in_place(ctx, files, tree, section, savers, runs, tag)
        report("inplace")

    if big:
        phase([cairn], "")
        with_watch = start_watching()
        if with_watch:
            phase(with_watch, "watched:", watched_runs(ctx, files))
            cairn.refs[:] = watched.refs
    else:
        with_watch = start_watching()
        if with_watch and watched_runs(ctx, files) > runs:
            # The peers' runs take seconds here: the watched ones, milliseconds, run more often.
            phase([cairn, *peers], "")
            phase(with_watch, "watched:", watched_runs(ctx, files))
            # The watched rounds changed the tree since the others' last saves: each saves it
            # as it is now, so their restores into an empty directory put back this tree.
            save_all(ctx, [cairn, *peers])
        else:
            phase([cairn, *with_watch, *peers], "")

    ctx.log(f"{label}: restore into an empty directory")
    restore_empty(ctx, files, tree, section, [cairn, *peers], heavy, content=not big)
    report("restore_empty")

    facts = ctx.results.facts["scale"]
    if with_watch:
        hwm = watcher_peak_kib(ctx, watched)
        if hwm:
            facts["watcher_rss_kib"][files] = hwm
            ctx.log(f"  the watcher's own peak RSS: {hwm / 1024:.1f} MiB")


def in_place(ctx: Context, files: int, tree: Tree, section, tools: list[Tool], runs: int, tag: str = "") -> None:
    """Every tool undoes exactly the same edits, as in the source suite."""
    ms, notes = undo_rounds(ctx, tree, tools, f"scale:{files}:inplace:{tag}", CHANGED, runs,
                            warm=warm_paths(files, tree.root, *(tool.store for tool in tools)))
    section.add(key(files, "inplace"), f"in-place restore after {CHANGED} files changed", ms, notes,
                extra={"cairn": "`cairn restore REF` (takes a safety snapshot first)",
                       "cairn+watch": "the same, with `cairn watch` running",
                       "git": "`git reset --hard REF`"})


def restore_empty(ctx: Context, files: int, tree: Tree, section, tools: list[Tool], runs: int,
                  content: bool = True) -> None:
    """cairn's first restore is compared byte for byte with the tree (by names, sizes and modes
    without `content`: where the tree no longer fits the page cache, reading it again would take
    longer than the rest of the size), git's by names, sizes and modes; each restored copy is
    deleted before the next run, so one copy is on disk at a time."""
    expected = manifest(tree.root, content=content)
    checked: set[str] = set()

    def dest_for(tool: Tool, run: int) -> Path:
        return ctx.scratch(f"scale-restore-{tool.name}-{run}")

    def setup(tool: Tool, run: int) -> None:
        dest = dest_for(tool, run)
        remove_tree(dest)
        dest.mkdir()

    def after(tool: Tool, run: int, outcome: Outcome) -> str | None:
        dest = dest_for(tool, run)
        problem = None
        if tool.name not in checked:
            checked.add(tool.name)
            if isinstance(tool, Cairn):
                problem = compare(expected, manifest(dest, content=content))
            else:
                problem = compare(without_content(expected), manifest(dest, content=False))
        remove_tree(dest)
        (dest.parent / f"{dest.name}.index").unlink(missing_ok=True)
        return problem

    current = {"run": 0}
    ms, notes = rounds(ctx, tools, lambda tool: tool.restore_to(dest_for(tool, current["run"])), runs,
                       before_run=lambda run: current.update(run=run), setup=setup, after=after,
                       warm=warm_paths(files, tree.root, *(tool.store for tool in tools)))
    section.add(key(files, "restore_empty"), "restore into an empty directory", ms, notes,
                extra={"git": "`git checkout REF -- .` into an empty work tree"})


def watcher_peak_kib(ctx: Context, watched: WatchedCairn) -> int | None:
    """The watcher's own high-water resident set (VmHWM), read from /proc before it stops."""
    try:
        out = ctx.runner.check(watched._cmd("watch", "--status", "--json"), "cairn watch --status")
        pid = json.loads(out.stdout).get("pid")
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (SetupError, OSError, ValueError, json.JSONDecodeError) as e:
        ctx.log(f"  the watcher's peak RSS is unknown: {e}")
    return None
