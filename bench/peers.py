"""The peers cairn is compared with, each bound to one tree and one store.

A tool answers "what command does X" with a `Cmd` (or None when it has no such operation);
the suites time those commands. Setup that is not measured (creating an empty repository,
finding the id of what was just saved) happens in the tools' other methods.

Every peer runs at its defaults, with no user or system configuration (HOME is a fresh
directory), except where a note in the report says otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from measure import Cmd, Outcome, Runner, SetupError, remove_tree, tree_bytes

# Debian package that provides each program the harness runs.
PACKAGES = {
    "git": "git", "zstd": "zstd", "restic": "restic", "tar": "tar", "gzip": "gzip",
    "find": "findutils", "cp": "coreutils", "du": "coreutils",
    "rm": "coreutils", "time": "time", "fdfind": "fd-find",
}


def ensure_installed(log=print) -> dict[str, str]:
    """Install missing peers from Debian's packages. Returns program -> why it is missing,
    for the ones that could not be installed."""
    missing = sorted({p for p in PACKAGES if shutil.which(p) is None})
    if not missing:
        return {}
    packages = sorted({PACKAGES[p] for p in missing})
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return {p: "not installed (install it, or run as root where apt-get exists)" for p in missing}
    log(f"installing {' '.join(packages)} with apt-get")
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", *packages]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        subprocess.run(install, env=env, capture_output=True)
    return {p: "apt-get could not install it" for p in missing if shutil.which(p) is None}


def versions() -> dict[str, str]:
    """Version lines of the peers, as they print them."""
    found = {}
    for name, argv in [("git", ["git", "--version"]), ("restic", ["restic", "version"]),
                       ("zstd", ["zstd", "--version"]), ("tar", ["tar", "--version"]),
                       ("gzip", ["gzip", "--version"]), ("cp", ["cp", "--version"]),
                       ("find", ["find", "--version"]), ("fd", ["fdfind", "--version"])]:
        try:
            out = subprocess.run(argv, capture_output=True, text=True).stdout.strip().splitlines()
            found[name] = out[0].strip("* ") if out else "unknown"
        except OSError:
            found[name] = "not installed"
    return found


def base_env(home: Path) -> dict[str, str]:
    """The whole environment a measured command sees: nothing inherited but PATH."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "NO_COLOR": "1",
    }


class Tool:
    """A tool bound to a tree and a store. Subclasses override what they support."""

    name = "tool"

    def __init__(self, tree: Path, store: Path, env: dict[str, str]):
        self.tree = tree
        self.store = store
        self.env = env
        self.refs: list[str] = []  # what each save produced, oldest first

    def fresh_store(self, runner: Runner) -> None:
        remove_tree(self.store)
        self.store.parent.mkdir(parents=True, exist_ok=True)
        self.refs.clear()

    def store_size(self) -> int:
        return tree_bytes(self.store)

    def save(self) -> Cmd | None:
        return None

    def saved(self, runner: Runner, outcome: Outcome) -> None:
        """Record what the save that just succeeded produced."""

    def restore_to(self, dest: Path) -> Cmd | None:
        """Restore the latest save into the empty directory `dest`; the tree lands at
        `restored_root(dest)`."""
        return None

    def restored_root(self, dest: Path) -> Path:
        return dest

    def restore_in_place(self) -> Cmd | None:
        return None

    def diff(self, a: str, b: str) -> Cmd | None:
        return None

    def accept(self, outcome: Outcome) -> str | None:
        """Decide about a non-zero exit: None if it is a failure, else a note on why the run
        still counts."""
        return None

    def ref(self, index: int) -> str:
        return self.refs[index]

    @property
    def latest(self) -> str:
        if not self.refs:
            raise SetupError(f"{self.name} has no earlier save to work from (it failed)")
        return self.refs[-1]


class Git(Tool):
    """git with its directory outside the tree: GIT_DIR=<store>, GIT_WORK_TREE=<tree>."""

    name = "git"

    def _env(self, work_tree: Path | None = None) -> dict[str, str]:
        return self.env | {
            "GIT_DIR": str(self.store),
            "GIT_WORK_TREE": str(work_tree or self.tree),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }

    def fresh_store(self, runner: Runner) -> None:
        super().fresh_store(runner)
        runner.check(Cmd(["git", "init", "-q", "-b", "main"], self._env()), "git init")
        # Automatic gc would start in the background in the middle of later measurements.
        runner.check(Cmd(["git", "config", "gc.auto", "0"], self._env()), "git config")

    def save(self) -> Cmd:
        # --allow-empty: a save with nothing changed still records a commit, as cairn records
        # a snapshot (git commit would otherwise exit 1).
        return Cmd("git add -A && git commit -q --allow-empty -m save", self._env(), self.tree)

    def saved(self, runner: Runner, outcome: Outcome) -> None:
        out = runner.check(Cmd(["git", "rev-parse", "HEAD"], self._env()), "git rev-parse")
        self.refs.append(out.stdout.strip())

    def restore_to(self, dest: Path) -> Cmd:
        # A checkout into another work tree, with its own index so the real one is untouched.
        env = self._env(dest) | {"GIT_INDEX_FILE": str(dest.parent / f"{dest.name}.index")}
        return Cmd(["git", "checkout", "-q", self.latest, "--", "."], env, dest)

    def restore_in_place(self) -> Cmd:
        return Cmd(["git", "reset", "-q", "--hard", self.latest], self._env(), self.tree)

    def diff(self, a: str, b: str) -> Cmd:
        return Cmd(["git", "diff", "--stat", a, b], self._env(), self.tree)


class Restic(Tool):
    """restic, backing up the tree as `.` from inside it so snapshots hold the tree at their
    root (restore --target DIR puts the tree at DIR)."""

    name = "restic"
    PENDING = "?"

    def _cmd(self, *args: str) -> Cmd:
        cache = self.store.parent / f"{self.store.name}.cache"
        env = self.env | {"RESTIC_PASSWORD": "bench"}
        return Cmd(["restic", "-r", str(self.store), "--cache-dir", str(cache), *args], env, self.tree)

    def fresh_store(self, runner: Runner) -> None:
        super().fresh_store(runner)
        self.runner = runner
        remove_tree(self.store.parent / f"{self.store.name}.cache")
        runner.check(self._cmd("init", "-q"), "restic init")

    def save(self) -> Cmd:
        return self._cmd("backup", "-q", "--host", "bench", ".")

    def saved(self, runner: Runner, outcome: Outcome) -> None:
        # Asking restic for the new id costs a second (it opens the repository); ids are looked
        # up only when a restore or diff needs one.
        self.refs.append(self.PENDING)

    def _resolve(self) -> None:
        if self.PENDING not in self.refs:
            return
        out = self.runner.check(self._cmd("snapshots", "--json", "--host", "bench"), "restic snapshots")
        ids = [s["id"] for s in sorted(json.loads(out.stdout), key=lambda s: s["time"])]
        if len(ids) != len(self.refs):
            raise SetupError(f"restic holds {len(ids)} snapshots, the harness saved {len(self.refs)}")
        self.refs[:] = ids

    @property
    def latest(self) -> str:
        self._resolve()
        return super().latest

    def ref(self, index: int) -> str:
        self._resolve()
        return self.refs[index]

    def restore_to(self, dest: Path) -> Cmd:
        return self._cmd("restore", "-q", self.latest, "--target", str(dest))

    def restore_in_place(self) -> Cmd:
        return self._cmd("restore", "-q", self.latest, "--target", str(self.tree))

    def diff(self, a: str, b: str) -> Cmd:
        return self._cmd("diff", a, b)

    def accept(self, outcome: Outcome) -> str | None:
        # restic 0.14 restores over a tree by rewriting every file, and fails on each symlink
        # that is already there; the files themselves are restored.
        lines = [line for line in outcome.stderr.splitlines() if line.strip()]
        benign = all(("Symlink" in line and "file exists" in line) or line.startswith("Fatal: There were")
                     for line in lines)
        if lines and benign:
            return "restic rewrites every file and reports each existing symlink as an error"
        return None


class TarZstd(Tool):
    """`tar -c | zstd -1 -T0` into one archive; restore is `zstd -d | tar -x`."""

    name = "tar+zstd"

    def fresh_store(self, runner: Runner) -> None:
        super().fresh_store(runner)
        self.store.mkdir(parents=True)

    @property
    def archive(self) -> Path:
        return self.store / "tree.tar.zst"

    def save(self) -> Cmd:
        return Cmd(f"tar -C '{self.tree.parent}' -cf - '{self.tree.name}' | zstd -1 -T0 -q -f -o '{self.archive}'",
                   self.env)

    def saved(self, runner: Runner, outcome: Outcome) -> None:
        self.refs.append(str(self.archive))

    def restore_to(self, dest: Path) -> Cmd:
        return Cmd(f"zstd -dcq '{self.archive}' | tar -C '{dest}' -xf -", self.env)

    def restored_root(self, dest: Path) -> Path:
        return dest / self.tree.name


class Copy(Tool):
    """`cp -a`: the floor for writing a tree of files."""

    name = "cp -a"

    def restore_to(self, dest: Path) -> Cmd:
        return Cmd(["cp", "-a", str(self.tree), str(dest / self.tree.name)], self.env)

    def restored_root(self, dest: Path) -> Path:
        return dest / self.tree.name


def stat_walks(tree: Path, env: dict[str, str], threads: int) -> dict[str, Cmd]:
    """The floor for a save with nothing changed: visiting every entry and reading its
    metadata, without reading any file. find stats each entry because of `%s %T@`; fd (a
    parallel walker built on the `ignore` crate) because a time filter needs metadata."""
    walks = {"find -printf (1 thread)": Cmd(f"find '{tree}' -printf '%s %T@\\n' > /dev/null", env)}
    fd = shutil.which("fdfind") or shutil.which("fd")
    if fd:
        walks[f"fd -u --changed-before ({threads} threads)"] = Cmd(
            f"'{fd}' -u --threads {threads} --changed-before '2999-01-01 00:00:00' . '{tree}' > /dev/null", env)
    return walks
