"""Running one command and measuring it: wall time, peak memory, exit status.

Every figure in the report comes from `Runner.run`: wall time around the child process, and
its peak memory from GNU time (`/usr/bin/time -f %M`), which is the `ru_maxrss` of the
command: the largest resident set of it or of any descendant it waited for, so for a shell
pipeline (`tar | zstd`) the peak of the biggest process in the tree.

Why not `os.wait4` on our own child: Linux carries `ru_maxrss` across `execve`, so a child
forked from this Python process (tens of MB, holding the text pool) would report at least
our size. GNU time is small, and the command it forks starts from its footprint instead.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Cmd:
    """A command to run: argv (or a shell line), environment, working directory."""

    argv: list[str] | str
    env: dict[str, str]
    cwd: Path | None = None
    stdin: bytes | None = None  # given to the command from a file (an agent's hook event)

    @property
    def shell(self) -> bool:
        return isinstance(self.argv, str)

    def display(self) -> str:
        if self.shell:
            return self.argv
        return " ".join(self.argv)


@dataclass
class Outcome:
    """What one run of a command did."""

    seconds: float
    max_rss_kib: int
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def error_text(self, cmd: Cmd) -> str:
        """One line naming the command, its exit status and the tail of what it printed."""
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()[-3:]
        said = " / ".join(line.strip() for line in tail) or "(no output)"
        return f"`{cmd.display()}` exited {self.returncode}: {said}"


class Runner:
    """Runs commands with their output sent to files under `log_dir` (never to pipes, so a
    chatty command can neither block on a full pipe nor be slowed by us reading it)."""

    def __init__(self, log_dir: Path, verbose: bool = False):
        self.log_dir = log_dir
        self.verbose = verbose
        self.count = 0
        self.gnu_time = shutil.which("time", path="/usr/bin:/bin")
        log_dir.mkdir(parents=True, exist_ok=True)

    def run(self, cmd: Cmd, keep_stdout: bool = True) -> Outcome:
        self.count += 1
        out_path = self.log_dir / f"{self.count:05d}.out"
        err_path = self.log_dir / f"{self.count:05d}.err"
        rss_path = self.log_dir / f"{self.count:05d}.rss"
        in_path = self.log_dir / f"{self.count:05d}.in"
        if cmd.stdin is not None:
            in_path.write_bytes(cmd.stdin)
        if self.verbose:
            print(f"    $ {cmd.display()}", flush=True)
        argv = ["/bin/sh", "-c", cmd.argv] if cmd.shell else list(cmd.argv)
        if self.gnu_time:
            argv = [self.gnu_time, "-f", "%M", "-o", str(rss_path), "--", *argv]
        with open(out_path if keep_stdout else os.devnull, "wb") as out, open(err_path, "wb") as err, \
                open(in_path if cmd.stdin is not None else os.devnull, "rb") as given:
            start = time.perf_counter()
            try:
                proc = subprocess.Popen(argv, env=cmd.env, cwd=cmd.cwd, stdin=given,
                                        stdout=out, stderr=err)
            except OSError as e:
                return Outcome(0.0, 0, 127, "", f"could not start {argv[0]}: {e.strerror}")
            proc.wait()
            seconds = time.perf_counter() - start
        stdout = out_path.read_text(errors="replace") if keep_stdout else ""
        stderr = err_path.read_text(errors="replace")
        max_rss = 0
        if self.gnu_time:
            # The last line is %M; a line before it says so if the command was killed.
            lines = rss_path.read_text().split() if rss_path.exists() else []
            max_rss = int(lines[-1]) if lines and lines[-1].isdigit() else 0
        for path in (out_path, err_path, rss_path, in_path):
            path.unlink(missing_ok=True)
        return Outcome(seconds, max_rss, proc.returncode, stdout, stderr)

    def check(self, cmd: Cmd, what: str) -> Outcome:
        """Run a setup step that must succeed (it is not measured)."""
        outcome = self.run(cmd)
        if not outcome.ok:
            raise SetupError(f"{what} failed: {outcome.error_text(cmd)}")
        return outcome


class SetupError(Exception):
    """An unmeasured step that a measurement depends on went wrong."""


@dataclass
class Measurement:
    """All runs of one tool doing one operation, or why it could not be measured."""

    seconds: list[float] = field(default_factory=list)
    max_rss_kib: list[int] = field(default_factory=list)
    error: str | None = None

    def add(self, outcome: Outcome) -> None:
        self.seconds.append(outcome.seconds)
        self.max_rss_kib.append(outcome.max_rss_kib)

    def fail(self, message: str) -> None:
        # Keep the first error: later ones are usually its consequences.
        if self.error is None:
            self.error = message

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and self.error is None else None

    @property
    def peak_rss_kib(self) -> int | None:
        return max(self.max_rss_kib) if self.max_rss_kib else None


def drop_caches(path: Path) -> str | None:
    """Write back the dirty pages of the filesystem holding `path` (only those: the clean
    pages of everything are what gets dropped) and drop the page, dentry and inode caches.

    Returns None when done, or the reason it could not be done."""
    subprocess.run(["sync", "--file-system", str(path)], check=False)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        return f"/proc/sys/vm/drop_caches is not writable ({e.strerror})"
    return None


def tree_bytes(path: Path) -> int:
    """Apparent size of everything under `path`, as `du -sb` counts it (each hard-linked
    inode once, directories and symlinks included)."""
    if not path.exists():
        return 0
    out = subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def remove_tree(path: Path) -> None:
    """Delete a directory tree (rm -rf is several times faster than shutil.rmtree here)."""
    if path.exists() or path.is_symlink():
        subprocess.run(["rm", "-rf", "--", str(path)], check=True)


def warm(*paths: Path) -> None:
    """Read every file under `paths` once, so the page cache holds them before a warm run:
    the harness generated the tree, but a tool that ran since (or another process on the
    machine) may have pushed part of it out."""
    for path in paths:
        if path.exists():
            subprocess.run(f"find '{path}' -type f -print0 | xargs -0 -r cat > /dev/null", shell=True,
                           check=False, stderr=subprocess.DEVNULL)


def uptime() -> str:
    """`uptime`'s line: the time, how long the machine has run and its load averages."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        load = os.getloadavg()
        return f"load average: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}"
