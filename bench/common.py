"""What every suite shares: the run's context, the loop that times one operation across
tools, and checks that a restore really produced the tree."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from measure import Cmd, Measurement, Outcome, Runner, SetupError, drop_caches, warm as read_once
from peers import Tool
from report import Results
from scratchfs import syncfs
from workload import BigSpec, TextPool, Tree, TreeSpec, apply_change, plan_change


@dataclass(frozen=True)
class VolumeSpec:
    """The compose suite's Docker volume: its size, how many files hold it, and how many
    bytes change between savepoints."""

    total_bytes: int
    files: int
    change_bytes: int = 1_000_000


@dataclass(frozen=True)
class Scale:
    """How big the workloads are: the full run, or --quick."""

    tree: TreeSpec
    big: BigSpec
    churn_saves: int
    fork_snapshots: int
    fork_tree_files: int
    volume: VolumeSpec
    changed_files: int = 20
    diff_files: int = 3


FULL = Scale(
    tree=TreeSpec(files=50_000, dirs=1_000, total_bytes=300_000_000),
    big=BigSpec(edited_bytes=500_000_000, other_bytes=[300_000_000, 200_000_000]),
    churn_saves=100,
    fork_snapshots=1_000,
    fork_tree_files=200,
    volume=VolumeSpec(total_bytes=1_000_000_000, files=1_000),
)
QUICK = Scale(
    tree=TreeSpec(files=5_000, dirs=100, total_bytes=30_000_000),
    big=BigSpec(edited_bytes=100_000_000, other_bytes=[]),
    churn_saves=20,
    fork_snapshots=100,
    fork_tree_files=100,
    volume=VolumeSpec(total_bytes=100_000_000, files=100),
)


@dataclass
class Context:
    """Everything a suite needs from the run."""

    runner: Runner
    results: Results
    work: Path
    env: dict[str, str]
    seed: int
    runs: int
    heavy_runs: int  # for operations that take seconds a run: first save, restore into a new dir
    cold_runs: int
    scale: Scale
    pool: TextPool
    cairn_binary: Path | None
    cairn_unavailable: str
    log: Callable[[str], None] = print
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)

    def data(self, name: str) -> Path:
        return self.work / "data" / name

    def store(self, name: str) -> Path:
        return self.work / "stores" / name

    def scratch(self, name: str) -> Path:
        path = self.work / "scratch" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def rotated(tools: list[Tool], run: int) -> list[Tool]:
    """Each run starts with a different tool, so no tool always runs right after another."""
    k = run % len(tools)
    return tools[k:] + tools[:k]


def rounds(
    ctx: Context,
    tools: list[Tool],
    command: Callable[[Tool], Cmd | None],
    runs: int,
    setup: Callable[[Tool, int], None] | None = None,
    before_run: Callable[[int], None] | None = None,
    after: Callable[[Tool, int, Outcome], str | None] | None = None,
    cold: bool = False,
    warm: list[Path] | None = None,
) -> tuple[dict[str, Measurement], dict[str, str]]:
    """Time `command(tool)` for each tool, `runs` times, interleaving the tools.

    `before_run(run)` prepares what all tools share (e.g. edits the tree); `setup(tool, run)`
    prepares one tool (e.g. an empty store); `after(tool, run, outcome)` records or checks
    what the command did and returns an error message if it went wrong. None of that is
    timed. A tool that fails is not run again for this operation.

    `warm`: the tools' sources (the tree, their stores), read once before each tool's run,
    after its setup, so every tool reads from a warm page cache whichever ran before it.
    Before every timed command the scratch filesystem is synced, so no tool pays for the
    writeback of what the one before it wrote (a git index renamed into place is written out
    by the next journal commit, whoever's flush that is)."""
    measurements = {t.name: Measurement() for t in tools}
    notes: dict[str, str] = {}
    for run in range(runs):
        if before_run is not None:
            before_run(run)
        for tool in rotated(tools, run):
            m = measurements[tool.name]
            if m.error is not None:
                continue
            try:
                if setup is not None:
                    setup(tool, run)
                cmd = command(tool)
                if cmd is None:
                    m.fail(f"{tool.name} has no such operation")
                    continue
                if warm and not cold:
                    read_once(*warm)
                if cold:
                    reason = drop_caches(ctx.work)
                    if reason:
                        raise SetupError(reason)
                else:
                    syncfs(ctx.work)
                outcome = ctx.runner.run(cmd)
                if not outcome.ok:
                    note = tool.accept(outcome)
                    if note is None:
                        m.fail(outcome.error_text(cmd))
                        continue
                    notes[tool.name] = note
                m.add(outcome)
                if after is not None:
                    problem = after(tool, run, outcome)
                    if problem:
                        m.fail(problem)
            except SetupError as e:
                m.fail(str(e))
            except Exception as e:  # a harness bug must not cost the rest of the run
                ctx.log(f"  harness error while measuring {tool.name}: {e!r}")
                m.fail(f"harness error: {e!r}")
    return measurements, notes


def manifest(root: Path, skip_git: bool = False, content: bool = True) -> dict[str, tuple]:
    """Path -> (kind, mode, size, digest) for every file and symlink under root; without
    `content` the digest of a file is left out (reading every byte takes a while)."""
    found: dict[str, tuple] = {}
    for directory, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        if skip_git and rel_dir == ".":
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(directory, d))]:
            path = os.path.join(directory, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, 0, os.readlink(path))
            elif content:
                with open(path, "rb") as f:
                    digest = hashlib.file_digest(f, "blake2b").hexdigest()
                found[rel] = ("file", st.st_mode & 0o777, st.st_size, digest)
            else:
                found[rel] = ("file", st.st_mode & 0o777, st.st_size, None)
    return found


def without_content(entries: dict[str, tuple]) -> dict[str, tuple]:
    return {k: v if v[0] == "link" else v[:3] + (None,) for k, v in entries.items()}


def compare(expected: dict[str, tuple], actual: dict[str, tuple]) -> str | None:
    """None if the trees match, else a sentence saying how they differ."""
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    differ = sorted(p for p in set(expected) & set(actual) if expected[p] != actual[p])
    if not (missing or extra or differ):
        return None
    parts = []
    for what, paths in [("missing", missing), ("unexpected", extra), ("different", differ)]:
        if paths:
            parts.append(f"{len(paths)} {what} (e.g. {paths[0]})")
    return "restored tree differs from the source: " + ", ".join(parts)


def undo_rounds(
    ctx: Context, tree: Tree, tools: list[Tool], label: str, count: int, runs: int, warm: list[Path]
) -> tuple[dict[str, Measurement], dict[str, str]]:
    """Each run changes `count` files of `tree` (the change named `label` and the run), and
    every tool in turn puts the tree back in place: every tool undoes exactly the same edits,
    and one that leaves any of them is reported (and the tree put right for the next)."""
    changes = {}
    originals: dict[str, bytes] = {}

    def before_run(run: int) -> None:
        changes[run] = plan_change(tree, ctx.pool, ctx.seed, f"{label}{run}", count)
        originals.clear()
        for rel in changes[run].files:
            originals[rel] = (tree.root / rel).read_bytes()

    def setup(tool: Tool, run: int) -> None:
        apply_change(tree, changes[run])

    def after(tool: Tool, run: int, outcome: Outcome) -> str | None:
        wrong = [rel for rel, data in originals.items() if (tree.root / rel).read_bytes() != data]
        if not wrong:
            return None
        for rel, data in originals.items():  # put the tree right for the next tool
            (tree.root / rel).write_bytes(data)
        return f"after the restore {len(wrong)} of the changed files still differ (e.g. {wrong[0]})"

    return rounds(ctx, tools, lambda tool: tool.restore_in_place(), runs,
                  before_run=before_run, setup=setup, after=after, warm=warm)
