#!/usr/bin/env python3
"""Transcript growth: what a store adds per turn as an agent's session file grows.

A Claude Code session file grows by about `--turn-bytes` each turn (a prompt, tool calls whose
results hold source text, an answer) to `--turns` turns; after each turn
`cairn transcript save FILE` stores it. Per turn, the growth of the store's packs is compared
with the bytes appended to the file and with those bytes compressed alone (`zstd -1`, the
level cairn's packs use): a store that keeps only the new tail grows by about the latter.
Prints a Markdown table for docs/benchmarks.md.

Usage: bench/transcript_growth.py --cairn target/release/cairn --work /scratch/dir
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
from pathlib import Path

import workload

SESSION = "5b2e9c1d-7f3a-4c6b-9d8e-1a2b3c4d5e6f"


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def zstd_len(data: bytes) -> int:
    return len(subprocess.run(["zstd", "-1", "-c", "-q"], input=data, capture_output=True, check=True).stdout)


class Session:
    """Writes Claude Code lines, each the child of the one before."""

    def __init__(self, path: Path, cwd: str, rng: random.Random, pool: workload.TextPool):
        self.path, self.cwd, self.rng, self.pool = path, cwd, rng, pool
        self.n = 0
        self.parent = None

    def _ids(self) -> tuple[str, str]:
        self.n += 1
        return f"00000000-0000-4000-8000-{self.n:012}", f"2026-03-01T{self.n // 3600 % 24:02}:{self.n // 60 % 60:02}:{self.n % 60:02}.000Z"

    def line(self, kind: str, message: dict, **extra) -> bytes:
        uuid, stamp = self._ids()
        entry = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                 "sessionId": SESSION, "version": "2.0.14", "gitBranch": "main", "type": kind,
                 "message": message, "uuid": uuid, "timestamp": stamp, **extra}
        self.parent = uuid
        return (json.dumps(entry) + "\n").encode()

    def turn(self, index: int, size: int) -> bytes:
        """One turn of about `size` bytes: a prompt, tool calls and their results, an answer."""
        rng, out = self.rng, []
        words = lambda n: self.pool.take(rng, n).decode(errors="replace").replace("\n", " ")
        out.append(self.line("user", {"role": "user", "content": f"turn {index}: {words(rng.randint(80, 400))}"}))
        while sum(map(len, out)) < size:
            call = f"toolu_{rng.getrandbits(96):024x}"
            name, args = rng.choice([("Read", {"file_path": f"{self.cwd}/src/m{rng.randrange(500)}.rs"}),
                                     ("Bash", {"command": f"cargo test -p m{rng.randrange(30)}"}),
                                     ("Grep", {"pattern": (words(40).split() or ["fn"])[0], "path": self.cwd})])
            out.append(self.line("assistant", {
                "id": f"msg_{rng.getrandbits(96):024x}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": words(rng.randint(100, 600))},
                            {"type": "tool_use", "id": call, "name": name, "input": args}],
                "usage": {"input_tokens": rng.randrange(100000), "output_tokens": rng.randrange(2000)}},
                requestId=f"req_{rng.getrandbits(96):024x}"))
            result = self.pool.take(rng, rng.randint(2000, 40000)).decode(errors="replace")
            out.append(self.line("user", {"role": "user", "content": [
                {"tool_use_id": call, "type": "tool_result", "content": result}]}))
        out.append(self.line("assistant", {
            "id": f"msg_{rng.getrandbits(96):024x}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": words(rng.randint(300, 2000))}]}))
        data = b"".join(out)
        with self.path.open("ab") as f:
            f.write(data)
        return data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--turn-bytes", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    work = args.work.resolve()
    if work.exists():
        shutil.rmtree(work)
    home, store, project = work / "home", work / "store", work / "project"
    home.mkdir(parents=True)
    project.mkdir()
    file = home / ".claude/projects/-project" / f"{SESSION}.jsonl"
    file.parent.mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CAIRN_STORE": str(store)}
    pool = workload.TextPool(random.Random(f"pool:{args.seed}"), 8 << 20)
    session = Session(file, str(project), random.Random(f"transcript:{args.seed}"), pool)

    packs = store / "objects" / "packs"
    rows = []
    for turn in range(1, args.turns + 1):
        appended = session.turn(turn, args.turn_bytes)
        before = tree_bytes(packs)
        proc = subprocess.run([str(args.cairn), "transcript", "save", str(file)], env=env, cwd=project,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"cairn transcript save failed: {proc.stderr.strip()[:400]}")
        growth = tree_bytes(packs) - before
        rows.append((turn, len(appended), zstd_len(appended), growth))

    whole = file.read_bytes()
    later = rows[1:]  # the first save stores the whole first turn
    raw = [g / a for _, a, _, g in later]
    alone = [g / z for _, _, z, g in later]
    mb = lambda b: f"{b / 1e6:.2f} MB"
    print(f"Session file: {len(whole) / 1e6:.1f} MB after {args.turns} turns of about "
          f"{args.turn_bytes / 1e6:g} MB; the whole file compressed alone (`zstd -1`): {mb(zstd_len(whole))}.\n")
    print("| per turn (turns 2 to %d) | median | mean | max |" % args.turns)
    print("|---|---|---|---|")
    print(f"| bytes appended | {mb(statistics.median(a for _, a, _, _ in later))} | "
          f"{mb(statistics.mean(a for _, a, _, _ in later))} | {mb(max(a for _, a, _, _ in later))} |")
    print(f"| appended bytes compressed alone | {mb(statistics.median(z for _, _, z, _ in later))} | "
          f"{mb(statistics.mean(z for _, _, z, _ in later))} | {mb(max(z for _, _, z, _ in later))} |")
    print(f"| store growth (pack bytes) | {mb(statistics.median(g for *_, g in later))} | "
          f"{mb(statistics.mean(g for *_, g in later))} | {mb(max(g for *_, g in later))} |")
    print(f"| growth ÷ bytes appended | {statistics.median(raw):.2f}× | "
          f"{sum(g for *_, g in later) / sum(a for _, a, _, _ in later):.2f}× | {max(raw):.2f}× |")
    print(f"| growth ÷ appended compressed alone | {statistics.median(alone):.2f}× | "
          f"{sum(g for *_, g in later) / sum(z for _, _, z, _ in later):.2f}× | {max(alone):.2f}× |")
    print(f"\nStore after {args.turns} turns: {mb(tree_bytes(store))} "
          f"(packs {mb(tree_bytes(packs))}).")


if __name__ == "__main__":
    main()
