"""cairn itself: building the binary and driving its CLI the way the peers are driven.

Always `--store DIR` explicitly, with CAIRN_STORE unset (the environment is built from
nothing), so no run can touch a store outside bench/work.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from measure import Cmd, Outcome, Runner, SetupError
from peers import Tool


def build(workspace: Path, log=print) -> tuple[Path | None, str]:
    """`cargo build --release -p cairn`. Returns (binary, "") or (None, why it failed)."""
    log("building cairn: cargo build --release -p cairn")
    proc = subprocess.run(["cargo", "build", "--release", "-p", "cairn"], cwd=workspace,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " / ".join(line.strip() for line in proc.stderr.strip().splitlines()[-4:])
        return None, f"cargo build --release -p cairn failed: {tail}"
    target = Path(os.environ.get("CARGO_TARGET_DIR") or workspace / "target")
    if not target.is_absolute():
        target = workspace / target
    binary = target / "release" / "cairn"
    if not binary.exists():
        return None, f"cargo build succeeded but {binary} does not exist"
    return binary, ""


def version(binary: Path | None, workspace: Path, given: bool = False) -> str:
    """`cairn --version`, and the commit of the workspace it was built from (for a binary given
    with --cairn, its path: the workspace's commit says nothing about it)."""
    if binary is None:
        return "not built"
    try:
        said = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip() or "cairn (no --version output)"
    except (OSError, subprocess.TimeoutExpired) as e:
        said = f"cairn (--version failed: {e})"
    if given:
        return f"{said} (`{binary}`, given with --cairn)"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=workspace,
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "crates", "Cargo.toml", "Cargo.lock"],
                           cwd=workspace, capture_output=True, text=True).stdout.strip()
    where = f"commit {commit}" if commit else "no commit yet"
    if dirty:
        where += ", with uncommitted changes"
    return f"{said} ({where})"


class Cairn(Tool):
    """cairn bound to one tree and one store."""

    name = "cairn"

    def __init__(self, binary: Path | None, tree: Path, store: Path, env: dict[str, str],
                 unavailable: str = ""):
        super().__init__(tree, store, env)
        self.binary = binary
        self.unavailable = unavailable
        self.last_record: dict = {}

    def _cmd(self, *args: str) -> Cmd:
        if self.binary is None:
            raise SetupError(self.unavailable or "cairn is not built")
        return Cmd([str(self.binary), "--store", str(self.store), *args], self.env, self.tree)

    def fresh_store(self, runner: Runner) -> None:
        # cairn creates its store on first use.
        super().fresh_store(runner)

    def save(self, session: str | None = None) -> Cmd:
        extra = ["--session", session] if session else []
        return self._cmd("save", str(self.tree), "--json", *extra)

    def saved(self, runner: Runner, outcome: Outcome) -> None:
        self.last_record = parse_json(outcome.stdout, "cairn save --json")
        snapshot_id = self.last_record.get("id")
        if not isinstance(snapshot_id, str):
            raise SetupError(f"cairn save --json printed no \"id\": {outcome.stdout.strip()[:200]}")
        self.refs.append(snapshot_id)

    def restore_to(self, dest: Path) -> Cmd:
        return self._cmd("restore", self.latest, "--to", str(dest))

    def restore_in_place(self) -> Cmd:
        return self._cmd("restore", self.latest)

    def diff(self, a: str, b: str) -> Cmd:
        return self._cmd("diff", a, b, "--stat")

    def fork(self, name: str, source: str) -> Cmd:
        return self._cmd("session", "create", name, "--from", source, "--json")

    def sessions(self, runner: Runner) -> list[dict]:
        out = runner.check(self._cmd("session", "list", "--json"), "cairn session list --json")
        sessions = parse_json(out.stdout, "cairn session list --json").get("sessions")
        if not isinstance(sessions, list):
            raise SetupError("cairn session list --json printed no \"sessions\" list")
        return sessions


def parse_json(text: str, what: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise SetupError(f"{what} printed something that is not JSON ({e}): {text.strip()[:200]}")
    if not isinstance(value, dict):
        raise SetupError(f"{what} printed JSON that is not an object: {text.strip()[:200]}")
    return value


class WatchedCairn(Cairn):
    """cairn with `cairn watch` running for its store: saves and the safety snapshot of an
    in-place restore look only at the directories the watcher's journal names."""

    name = "cairn+watch"

    def start_watcher(self, runner: Runner) -> None:
        runner.check(self._cmd("watch", str(self.tree), "--detach"), "cairn watch --detach")

    def stop_watcher(self, runner: Runner) -> None:
        runner.run(self._cmd("watch", "--stop"))

    def used_journal(self) -> bool:
        """Whether the last save looked only at what the journal named."""
        report = (self.last_record.get("stats") or {}).get("change_journal") or {}
        return bool(report.get("used"))
