#!/usr/bin/env python3
"""Cost per event of `cairn hook claude-code` on a large generated tree, beside a shadow-git
checkpoint (`git add -A && git commit` into a separate git dir) of the same tree in the same
run. Prints a Markdown table for docs/benchmarks.md.

Each round changes 20 files and grows the transcript, then times, in alternating order:
- the prompt event (`UserPromptSubmit`: a moment of the tree and the transcript) and a shadow
  commit of the same state;
- a `Bash` tool event after 20 more changed files, and a shadow commit;
- a tool event with nothing changed, and `git add -A` + `git diff --cached --quiet`.

Usage: bench/hook_cost.py --cairn target/release/cairn --work /scratch/dir [--files 50000]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import workload

SESSION = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def claude_dir_name(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def timed(cmd, env, stdin=None, cwd=None, shell=False) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, input=stdin, cwd=cwd, shell=shell, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or (not shell and proc.stderr.strip()):
        raise SystemExit(f"{cmd if not shell else cmd[:60]} failed: {proc.stderr.strip()[:300]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", type=Path, required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--dirs", type=int, default=1_000)
    ap.add_argument("--bytes", type=int, default=300_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    work = args.work.resolve()
    if work.exists():
        shutil.rmtree(work)
    home, store, shadow = work / "home", work / "store", work / "shadow.git"
    home.mkdir(parents=True)
    pool = workload.TextPool(random.Random(f"pool:{args.seed}"), 8 << 20)
    spec = workload.TreeSpec(files=args.files, dirs=args.dirs, total_bytes=args.bytes, git_share=0)
    tree = workload.generate_tree(work / "tree", spec, args.seed, pool)
    root = str(tree.root)
    transcript = home / ".claude/projects" / claude_dir_name(root) / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CAIRN_STORE": str(store)}
    genv = workload.git_env(home)
    git = f"git --git-dir={shadow} --work-tree={root}"
    subprocess.run(["git", "init", "-q", "--bare", str(shadow)], env=genv, check=True)

    line_no = 0

    def say(kind: str, text: str) -> None:
        nonlocal line_no
        line_no += 1
        parent = f"00000000-0000-4000-8000-{line_no - 1:012}" if line_no > 1 else None
        entry = {"parentUuid": parent, "isSidechain": False, "type": kind, "sessionId": SESSION,
                 "cwd": root, "uuid": f"00000000-0000-4000-8000-{line_no:012}",
                 "timestamp": "2025-10-01T12:00:00.000Z", "message": {"role": kind, "content": text}}
        with transcript.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def event(name: str, **extra) -> str:
        payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": root,
                   "hook_event_name": name, **extra}
        return json.dumps(payload)

    def hook(payload: str) -> float:
        return timed([str(args.cairn), "hook", "claude-code"], env, stdin=payload, cwd=root)

    def shadow_commit() -> float:
        return timed(f"{git} add -A && {git} commit -q -m turn", genv, shell=True)

    def shadow_nothing() -> float:
        return timed(f"{git} add -A && {git} diff --cached --quiet", genv, shell=True)

    # The first checkpoint of each reads the whole tree: timed on its own.
    say("user", "first prompt")
    first_cairn = hook(event("UserPromptSubmit", prompt="first prompt"))
    first_git = shadow_commit()

    rows = {k: [] for k in ("prompt", "tool", "nothing", "git_prompt", "git_tool", "git_nothing")}
    for r in range(args.rounds):
        say("assistant", f"answer {r}")
        workload.change_files(tree, pool, args.seed, f"prompt-{r}", 20)
        say("user", f"prompt {r}")
        pairs = [("prompt", lambda: hook(event("UserPromptSubmit", prompt=f"prompt {r}"))),
                 ("git_prompt", shadow_commit)]
        for name, run in (pairs if r % 2 == 0 else pairs[::-1]):
            rows[name].append(run())
        workload.change_files(tree, pool, args.seed, f"tool-{r}", 20)
        pairs = [("tool", lambda: hook(event("PostToolUse", tool_name="Bash", tool_input={"command": "make"}))),
                 ("git_tool", shadow_commit)]
        for name, run in (pairs if r % 2 == 0 else pairs[::-1]):
            rows[name].append(run())
        pairs = [("nothing", lambda: hook(event("PostToolUse", tool_name="Bash", tool_input={"command": "ls"}))),
                 ("git_nothing", shadow_nothing)]
        for name, run in (pairs if r % 2 == 0 else pairs[::-1]):
            rows[name].append(run())

    log = (store / "logs/hooks.log").read_text().splitlines()
    outcomes = [json.loads(line)["outcome"] for line in log]
    assert sum("nothing changed" in o for o in outcomes) == args.rounds, outcomes
    ms = lambda xs: statistics.median(xs) * 1000
    print(f"Tree: {len(tree.files):,} files, {tree.bytes / 1e6:.0f} MB; {args.rounds} rounds, medians.\n")
    print("| event | cairn hook | shadow git | cairn / git |")
    print("|---|---|---|---|")
    print(f"| first checkpoint (whole tree read) | {first_cairn * 1000:.0f} ms | {first_git * 1000:.0f} ms | {first_cairn / first_git:.2f} |")
    for label, a, b in [("prompt: moment of tree + transcript, 20 files changed", "prompt", "git_prompt"),
                        ("Bash tool: workspace, 20 files changed", "tool", "git_tool"),
                        ("Bash tool: nothing changed", "nothing", "git_nothing")]:
        print(f"| {label} | {ms(rows[a]):.0f} ms | {ms(rows[b]):.0f} ms | {ms(rows[a]) / ms(rows[b]):.2f} |")
    print(f"\nStore: {sum(f.stat().st_size for f in store.rglob('*') if f.is_file()) / 1e6:.0f} MB; "
          f"shadow git dir: {sum(f.stat().st_size for f in shadow.rglob('*') if f.is_file()) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
