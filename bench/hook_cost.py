#!/usr/bin/env python3
"""Cost per event of cairn's agent hooks on a large generated tree, for every agent cairn
supports, beside a shadow-git checkpoint (`git add -A && git commit` into a separate git dir)
of the same tree in the same run. Prints one Markdown table.

For each agent, one after another, with a store and a shadow git dir of its own:
1. `cairn hooks install AGENT` at the user scope of a HOME made for the run, and the hook
   command read back from the file it wrote (the settings file's command line, run with
   `sh -c` as the agent runs it; for Pi and OpenCode, whose hook is a code file cairn writes,
   the program and store named in that file, spawned with the event on stdin as the file does);
2. the tree read once (the page cache warm), then the first checkpoint (a prompt event: the
   whole tree read) beside the shadow repository's first commit;
3. rounds that each change 20 files and grow the agent's session file where it keeps one, then
   time, in alternating order:
   - the prompt event (a moment of the tree, and of the conversation where cairn keeps it),
     and a shadow commit of the same state;
   - a shell-tool event after 20 more changed files, and a shadow commit;
   - a shell-tool event with nothing changed, and `git add -A && git diff --cached --quiet`.
Each event's payload is the agent's own shape (crates/cairn-lib/src/agents/*.rs and the
end-to-end tests crates/cairn/tests/agents_*.rs drive the same), in the environment the agent
gives its hooks; each hook's line in the store's hook log is checked (a prompt or a changed
tree saved a moment, an unchanged one saved nothing), so a hook that misread its event cannot
look fast.

    bench/hook_cost.py [--cairn target/release/cairn] [--work DIR] [--files 50000]
                       [--agents claude-code,codex,...] [--rounds 7] [--quick]

`--quick`: 5,000 files and 3 rounds. Also run by `bench/run --only hooks` (suite_hooks.py),
whose report holds the same table; that is the way to the published figures, as bench/run
works in a fresh ext4 image (scratchfs.py) where this command works in `--work` on the host's
filesystem, whose `discard` makes deleting trees (and git's first commit of 50,000 loose
objects beside it) slow and uneven.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workload  # noqa: E402
from measure import Cmd, Measurement, Runner, SetupError, remove_tree, uptime, warm  # noqa: E402

AGENTS = ["claude-code", "gemini-cli", "codex", "cursor", "copilot-cli", "opencode", "pi"]
NAMES = {"claude-code": "Claude Code", "gemini-cli": "Gemini CLI", "codex": "Codex CLI", "cursor": "Cursor",
         "copilot-cli": "GitHub Copilot CLI", "opencode": "OpenCode", "pi": "Pi"}
EVENTS = [
    ("first", "first checkpoint (prompt; the whole tree read)"),
    ("prompt", "prompt, 20 files changed"),
    ("tool", "shell tool, 20 files changed"),
    ("nothing", "shell tool, nothing changed"),
]
CHANGED = 20
SESSION = "7a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
FULL_FILES, QUICK_FILES = 50_000, 5_000
FULL_ROUNDS, QUICK_ROUNDS = 7, 3
WATCH_FROM = 10_000  # hooks.watch_from's default: from this many entries a hook starts the watcher


# ------------------------------------------------------------------------------ the agents

class Agent:
    """One agent as its hooks see it: where `hooks install` writes, the command it runs for an
    event, the payload of each kind of event and the session file it grows."""

    name = ""
    prompt_event = ""
    tool_event = ""
    conversation = False  # whether its prompt moments hold the conversation too

    def __init__(self, binary: Path, home: Path, root: Path, store: Path, env: dict[str, str]):
        self.binary, self.home, self.root, self.store = binary, home, root, store
        self.base_env = env
        self.entries = 0
        self.turn = 0

    # --- installing, and reading back what was installed
    def install_env(self) -> dict[str, str]:
        return self.base_env

    def settings(self) -> Path:
        raise NotImplementedError

    def install(self, runner: Runner) -> None:
        self.settings().parent.mkdir(parents=True, exist_ok=True)
        runner.check(Cmd([str(self.binary), "--store", str(self.store), "hooks", "install", self.name],
                         self.install_env(), self.root), f"cairn hooks install {self.name}")
        if not self.settings().is_file():
            raise SetupError(f"cairn hooks install {self.name} wrote no {self.settings()}")

    def command(self, event: str) -> str:
        """The command line the settings file holds for `event` (a cairn hook's)."""
        raise NotImplementedError

    def hook_env(self) -> dict[str, str]:
        return self.base_env

    def hook_cwd(self) -> Path:
        return self.root

    def invoke(self, event: str, payload: dict) -> Cmd:
        return Cmd(self.command(event), self.hook_env(), self.hook_cwd(), json.dumps(payload).encode())

    # --- the events
    def prompt(self, text: str) -> Cmd:
        raise NotImplementedError

    def shell(self, command: str) -> Cmd:
        raise NotImplementedError

    # --- the session file
    def user_said(self, text: str) -> None:
        """The prompt, written into the session file (after the prompt's hook: the agents that
        write it first are given it in `prompt`)."""

    def assistant_said(self, text: str) -> None:
        """The answer to the last prompt."""

    def append(self, path: Path, entry: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(json.dumps(entry) + "\n")


def _nested_command(settings: Path, event: str) -> str:
    """Claude Code, Gemini CLI and Codex CLI: `hooks[EVENT][group].hooks[n].command`."""
    value = json.loads(settings.read_text())
    for group in value["hooks"][event]:
        for hook in group.get("hooks", []):
            if " hook " in hook.get("command", ""):
                return hook["command"]
    raise SetupError(f"no cairn hook for {event} in {settings}")


def _flat_command(settings: Path, event: str, key: str) -> str:
    """Cursor and Copilot CLI (version 1): `hooks[EVENT][n].command` (Copilot's `bash`)."""
    value = json.loads(settings.read_text())
    for hook in value["hooks"][event]:
        if " hook " in hook.get(key, ""):
            return hook[key]
    raise SetupError(f"no cairn hook for {event} in {settings}")


def _constant(settings: Path, name: str):
    """Pi's and OpenCode's hook file: the value of its `const NAME = JSON;` line."""
    for line in settings.read_text().splitlines():
        if line.startswith(f"const {name} = ") and line.endswith(";"):
            return json.loads(line[len(f"const {name} = "):-1])
    raise SetupError(f"{settings} has no `const {name}` line")


class ClaudeCode(Agent):
    name, prompt_event, tool_event, conversation = "claude-code", "UserPromptSubmit", "PostToolUse", True

    def settings(self) -> Path:
        return self.home / ".claude/settings.json"

    @property
    def transcript(self) -> Path:
        project = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(self.root))
        return self.home / ".claude/projects" / project / f"{SESSION}.jsonl"

    def command(self, event: str) -> str:
        return _nested_command(self.settings(), event)

    def hook_env(self) -> dict[str, str]:
        return self.base_env | {"CLAUDE_PROJECT_DIR": str(self.root)}

    def payload(self, event: str, **extra) -> dict:
        return {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.root),
                "permission_mode": "default", "hook_event_name": event, **extra}

    def _say(self, role: str, text: str) -> None:
        self.entries += 1
        n = self.entries
        self.append(self.transcript, {
            "parentUuid": f"00000000-0000-4000-8000-{n - 1:012}" if n > 1 else None, "isSidechain": False,
            "type": role, "sessionId": SESSION, "cwd": str(self.root), "version": "2.1.88",
            "uuid": f"00000000-0000-4000-8000-{n:012}", "timestamp": "2026-10-01T12:00:00.000Z",
            "message": {"role": role, "content": text}})

    def prompt(self, text: str) -> Cmd:
        self._say("user", text)  # Claude Code writes the prompt before the hook runs
        return self.invoke("UserPromptSubmit", self.payload("UserPromptSubmit", prompt=text))

    def shell(self, command: str) -> Cmd:
        return self.invoke("PostToolUse", self.payload(
            "PostToolUse", tool_name="Bash", tool_input={"command": command, "description": "run"},
            tool_response={"stdout": "", "stderr": "", "interrupted": False}, tool_use_id="toolu_01"))

    def assistant_said(self, text: str) -> None:
        self._say("assistant", text)


class GeminiCli(Agent):
    name, prompt_event, tool_event, conversation = "gemini-cli", "BeforeAgent", "AfterTool", True

    def settings(self) -> Path:
        return self.home / ".gemini/settings.json"

    @property
    def transcript(self) -> Path:
        return self.home / ".gemini/tmp/bench/chats/session-2026-11-30T14-02-7a1d2c3b.jsonl"

    def command(self, event: str) -> str:
        return _nested_command(self.settings(), event)

    def hook_env(self) -> dict[str, str]:
        return self.base_env | {"GEMINI_PROJECT_DIR": str(self.root), "CLAUDE_PROJECT_DIR": str(self.root)}

    def payload(self, event: str, **extra) -> dict:
        return {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.root),
                "hook_event_name": event, "timestamp": "2026-11-30T14:02:31.118Z", **extra}

    def _say(self, kind: str, text: str) -> None:
        if not self.transcript.exists():
            self.append(self.transcript, {"sessionId": SESSION, "projectHash": "0" * 64,
                                          "startTime": "2026-11-30T14:02:10.221Z",
                                          "lastUpdated": "2026-11-30T14:02:10.221Z", "kind": "main"})
        self.entries += 1
        content = [{"text": text}] if kind == "user" else text
        self.append(self.transcript, {"id": f"00000000-0000-4000-8000-{self.entries:012}",
                                      "timestamp": "2026-11-30T14:02:31.118Z", "type": kind, "content": content})

    def prompt(self, text: str) -> Cmd:
        self._say("user", text)
        return self.invoke("BeforeAgent", self.payload("BeforeAgent", prompt=text))

    def shell(self, command: str) -> Cmd:
        return self.invoke("AfterTool", self.payload(
            "AfterTool", tool_name="run_shell_command", tool_input={"command": command, "description": "run"},
            tool_response={"llmContent": f"Command: {command}\nExit Code: 0", "returnDisplay": ""},
            mcp_context=None))

    def assistant_said(self, text: str) -> None:
        self._say("gemini", text)


class Codex(Agent):
    name, prompt_event, tool_event, conversation = "codex", "UserPromptSubmit", "PostToolUse", True

    def settings(self) -> Path:
        return self.home / ".codex/hooks.json"

    @property
    def rollout(self) -> Path:
        return self.home / f".codex/sessions/2026/04/24/rollout-2026-04-24T08-00-00-{SESSION}.jsonl"

    def command(self, event: str) -> str:
        return _nested_command(self.settings(), event)

    def payload(self, event: str, **extra) -> dict:
        return {"session_id": SESSION, "turn_id": str(self.turn), "transcript_path": str(self.rollout),
                "cwd": str(self.root), "hook_event_name": event, "model": "gpt-5.4",
                "permission_mode": "default", **extra}

    def _line(self, kind: str, payload: dict) -> None:
        self.append(self.rollout, {"timestamp": "2026-04-24T08:00:00.000Z", "type": kind, "payload": payload})

    def prompt(self, text: str) -> Cmd:
        self.turn += 1
        if not self.rollout.exists():
            self._line("session_meta", {"id": SESSION, "timestamp": "2026-04-24T08:00:00.000Z",
                                        "cwd": str(self.root), "originator": "codex_cli_rs",
                                        "cli_version": "0.125.0", "source": "cli", "model_provider": "openai"})
        return self.invoke("UserPromptSubmit", self.payload("UserPromptSubmit", prompt=text))

    def user_said(self, text: str) -> None:  # Codex writes the prompt after the hook
        self._line("event_msg", {"type": "task_started", "turn_id": str(self.turn), "model_context_window": 272000})
        self._line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": text}]})
        self._line("event_msg", {"type": "user_message", "message": text, "local_images": [], "text_elements": []})

    def shell(self, command: str) -> Cmd:
        return self.invoke("PostToolUse", self.payload(
            "PostToolUse", tool_name="Bash", tool_input={"command": command},
            tool_response="Exit code: 0\nOutput:\n", tool_use_id="call_s"))

    def assistant_said(self, text: str) -> None:
        self._line("response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": text}]})
        self._line("event_msg", {"type": "task_complete", "turn_id": str(self.turn), "last_agent_message": text})


class Cursor(Agent):
    name, prompt_event, tool_event = "cursor", "beforeSubmitPrompt", "afterShellExecution"

    def settings(self) -> Path:
        return self.home / ".cursor/hooks.json"

    def command(self, event: str) -> str:
        return _flat_command(self.settings(), event, "command")

    def hook_cwd(self) -> Path:
        return self.home / ".cursor"  # Cursor runs user hooks from the hooks file's directory

    def payload(self, event: str, **extra) -> dict:
        return {"hook_event_name": event, "conversation_id": SESSION,
                "generation_id": f"3f9d2c10-aaaa-4bbb-8ccc-{self.turn:012}", "model": "default",
                "cursor_version": "3.18.25", "workspace_roots": [str(self.root)], "user_email": None,
                "transcript_path": str(self.home / f".cursor/projects/bench/agent-transcripts/{SESSION}.jsonl"),
                **extra}

    def prompt(self, text: str) -> Cmd:
        self.turn += 1
        return self.invoke("beforeSubmitPrompt", self.payload("beforeSubmitPrompt", prompt=text, attachments=[]))

    def shell(self, command: str) -> Cmd:
        return self.invoke("afterShellExecution", self.payload(
            "afterShellExecution", command=command, output="", duration=12, sandbox=False, cwd=str(self.root)))


class CopilotCli(Agent):
    name, prompt_event, tool_event = "copilot-cli", "userPromptSubmitted", "postToolUse"

    def settings(self) -> Path:
        return self.home / ".copilot/hooks/cairn.json"

    def command(self, event: str) -> str:
        return _flat_command(self.settings(), event, "bash")

    def hook_env(self) -> dict[str, str]:
        return self.base_env | {"COPILOT_CLI": "1"}

    def payload(self, **extra) -> dict:
        self.entries += 1
        return {"sessionId": SESSION, "timestamp": 1_767_000_000_000 + self.entries, "cwd": str(self.root), **extra}

    def prompt(self, text: str) -> Cmd:
        return self.invoke("userPromptSubmitted", self.payload(prompt=text))

    def shell(self, command: str) -> Cmd:
        return self.invoke("postToolUse", self.payload(
            toolName="bash", toolArgs={"command": command, "description": "run"},
            toolResult={"resultType": "success", "textResultForLlm": ""}))


class OpenCode(Agent):
    name, prompt_event, tool_event = "opencode", "chat.message", "tool.execute.after"

    def settings(self) -> Path:
        return Path(self.base_env.get("XDG_CONFIG_HOME") or self.home / ".config") / "opencode/plugin/cairn.ts"

    def invoke(self, event: str, payload: dict) -> Cmd:
        # The plugin spawns CAIRN `hook opencode [--store S]` in the directory, the payload on stdin.
        argv = [_constant(self.settings(), "CAIRN"), "hook", "opencode"]
        store = _constant(self.settings(), "STORE")
        if store is not None:
            argv += ["--store", store]
        return Cmd(argv, self.hook_env(), self.root, json.dumps(payload).encode())

    def payload(self, event: str, **extra) -> dict:
        # `worktree`: the top of the git repository (the tree has one of its own).
        return {"event": event, "sessionID": "ses_2b1f0c3d4e5fAbCdEfGhIjKlMn", "directory": str(self.root),
                "worktree": str(self.root), **extra}

    def prompt(self, text: str) -> Cmd:
        self.turn += 1
        return self.invoke("chat.message", self.payload(
            "chat.message", messageID=f"msg_d4e0c1a2b{self.turn:04}AbCdEfGhIjKlMn", prompt=text))

    def shell(self, command: str) -> Cmd:
        return self.invoke("tool.execute.after", self.payload("tool.execute.after", tool="bash"))


class Pi(Agent):
    name, prompt_event, tool_event, conversation = "pi", "before_agent_start", "tool_result", True

    def settings(self) -> Path:
        return self.home / ".pi/agent/extensions/cairn.ts"

    @property
    def session_file(self) -> Path:
        slug = "--" + str(self.root).strip("/").replace("/", "-") + "--"
        return self.home / ".pi/agent/sessions" / slug / f"2026-03-15T10-00-00-000Z_{SESSION}.jsonl"

    def invoke(self, event: str, payload: dict) -> Cmd:
        # The extension spawns CAIRN `hook pi [--store S]` in Pi's cwd, the payload on stdin.
        argv = [_constant(self.settings(), "CAIRN"), "hook", "pi"]
        store = _constant(self.settings(), "STORE")
        if store is not None:
            argv += ["--store", store]
        return Cmd(argv, self.hook_env(), self.root, json.dumps(payload).encode())

    def payload(self, event: str, **extra) -> dict:
        return {"event": event, "sessionId": SESSION, "sessionFile": str(self.session_file),
                "cwd": str(self.root), **extra}

    def _say(self, message: dict) -> None:
        if not self.session_file.exists():
            self.append(self.session_file, {"type": "session", "version": 3, "id": SESSION,
                                            "timestamp": "2026-03-15T10:00:00.000Z", "cwd": str(self.root)})
        self.entries += 1
        n = self.entries
        self.append(self.session_file, {"type": "message", "id": f"e{n:07x}",
                                        "parentId": f"e{n - 1:07x}" if n > 1 else None,
                                        "timestamp": "2026-03-15T10:00:00.000Z", "message": message})

    def prompt(self, text: str) -> Cmd:
        return self.invoke("before_agent_start", self.payload("before_agent_start", prompt=text))

    def user_said(self, text: str) -> None:  # Pi records the prompt after the awaited event
        self._say({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1773568800000})

    def shell(self, command: str) -> Cmd:
        return self.invoke("tool_result", self.payload("tool_result", toolName="bash"))

    def assistant_said(self, text: str) -> None:
        self._say({"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                   "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                   "timestamp": 1773568800000})


CLASSES = {c.name: c for c in [ClaudeCode, GeminiCli, Codex, Cursor, CopilotCli, OpenCode, Pi]}


# ------------------------------------------------------------------------------ measuring

@dataclass
class AgentResult:
    agent: str
    cairn: dict[str, Measurement] = field(default_factory=dict)
    git: dict[str, Measurement] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    layers: str = ""  # the parts of its last prompt moment, as the hook log says them
    error: str | None = None


@dataclass
class HookRun:
    files: int
    bytes: int
    rounds: int
    load_before: str
    load_after: str = ""
    results: list[AgentResult] = field(default_factory=list)


def measure(runner: Runner, binary: Path, work: Path, tree: workload.Tree, env: dict[str, str],
            agents: list[str], rounds: int, seed: int, pool: workload.TextPool, log=print) -> HookRun:
    """Every agent in turn on `tree`; its stores, shadow git dirs and HOMEs under `work`."""
    run = HookRun(len(tree.files), tree.bytes, rounds, uptime())
    for name in agents:
        log(f"hooks: {name}")
        result = AgentResult(name)
        run.results.append(result)
        try:
            measure_agent(runner, binary, work / name, tree, env, name, rounds, seed, pool, result, log)
        except SetupError as e:
            result.error = str(e)
            log(f"  {name}: {e}")
        for kind, _ in EVENTS:
            if kind in result.cairn and result.cairn[kind].median is not None:
                git = result.git.get(kind)
                log(f"  {kind}: cairn {result.cairn[kind].median * 1000:.1f} ms, shadow git "
                    f"{git.median * 1000:.1f} ms" if git and git.median else f"  {kind}: cairn only")
    run.load_after = uptime()
    return run


def measure_agent(runner: Runner, binary: Path, work: Path, tree: workload.Tree, base_env: dict[str, str],
                  name: str, rounds: int, seed: int, pool: workload.TextPool, result: AgentResult, log) -> None:
    remove_tree(work)
    home, store, shadow = work / "home", work / "store", work / "shadow.git"
    home.mkdir(parents=True)
    env = base_env | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                      "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache")}
    agent = CLASSES[name](binary, home, tree.root, store, env)
    agent.install(runner)
    genv = workload.git_env(home)
    git = f"git --git-dir='{shadow}' --work-tree='{tree.root}'"
    runner.check(Cmd(["git", "init", "-q", "--bare", str(shadow)], genv), "git init")
    runner.check(Cmd(f"{git} config gc.auto 0", genv), "git config")
    commit = Cmd(f"{git} add -A && {git} commit -q -m turn", genv, tree.root)
    unchanged = Cmd(f"{git} add -A && {git} diff --cached --quiet", genv, tree.root)
    lines = 0

    def hook(cmd: Cmd, kind: str, first: bool = False) -> float:
        nonlocal lines
        outcome = runner.run(cmd)
        if not outcome.ok:
            raise SetupError(f"the {name} hook exited {outcome.returncode}: {outcome.stderr.strip()[:300]}")
        said = outcome.stderr.strip()
        if said and not (first and said.startswith("note:")):
            raise SetupError(f"the {name} hook said: {said[:300]}")
        if said:
            result.notes.append(f"the first checkpoint went on in the background past the hook's budget ({said[:120]})")
        line, lines = wait_for_log(store / "logs/hooks.log", lines)
        expect = "nothing changed" if kind == "nothing" else "saved moment"
        if expect not in line.get("outcome", ""):
            raise SetupError(f"the {name} {kind} event: the hook log says {line.get('kind')}: {line.get('outcome')!r}, "
                             f"not {expect!r}")
        if kind == "prompt":  # "saved moment ID (turn N: dir + transcript)": what the last one held
            result.layers = line["outcome"].rsplit(":", 1)[-1].strip(" )")
        return outcome.seconds

    def timed(cmd: Cmd) -> float:
        outcome = runner.run(cmd)
        if not outcome.ok:
            raise SetupError(f"`{cmd.display()}` exited {outcome.returncode}: {outcome.stderr.strip()[:300]}")
        return outcome.seconds

    def pair(kind: str, ours, theirs, order: int) -> None:
        steps = [("cairn", ours), ("git", theirs)]
        for who, step in (steps if order % 2 == 0 else steps[::-1]):
            seconds = step()
            target = result.cairn if who == "cairn" else result.git
            target.setdefault(kind, Measurement()).seconds.append(seconds)

    try:
        rounds_of(agent, runner, binary, tree, store, env, name, rounds, seed, pool, result, hook, timed, pair,
                  commit, unchanged)
    finally:
        runner.run(Cmd([str(binary), "--store", str(store), "watch", "--stop"], env, tree.root))
    remove_tree(work)


def rounds_of(agent: Agent, runner: Runner, binary: Path, tree: workload.Tree, store: Path, env: dict[str, str],
              name: str, rounds: int, seed: int, pool: workload.TextPool, result: AgentResult, hook, timed, pair,
              commit: Cmd, unchanged: Cmd) -> None:
    warm(tree.root)
    text = "Add a --verbose flag and test it"
    first = agent.prompt(text)
    pair("first", lambda: hook(first, "first", first=True), lambda: timed(commit), 0)
    agent.user_said(text)
    agent.assistant_said("Done: the flag and its test.")
    entries = len(tree.files) + tree.symlinks + tree.dirs
    watcher = watcher_state(runner, binary, store, env, wait=entries >= WATCH_FROM)
    if watcher:
        result.notes.append(watcher)
    for r in range(rounds):
        workload.change_files(tree, pool, seed, f"hooks:{name}:prompt:{r}", CHANGED)
        text = f"prompt {r}: go on with the next step"
        cmd = agent.prompt(text)
        pair("prompt", lambda: hook(cmd, "prompt"), lambda: timed(commit), r)
        agent.user_said(text)
        workload.change_files(tree, pool, seed, f"hooks:{name}:tool:{r}", CHANGED)
        cmd = agent.shell("make test")
        pair("tool", lambda: hook(cmd, "tool"), lambda: timed(commit), r)
        cmd = agent.shell("ls")
        pair("nothing", lambda: hook(cmd, "nothing"), lambda: timed(unchanged), r)
        agent.assistant_said(f"answer {r}")


def wait_for_log(path: Path, seen: int, timeout: float = 900) -> tuple[dict, int]:
    """The hook log's line for the event after its first `seen` lines, once it is there (a
    checkpoint past the hook's time budget finishes in the background and logs then), and the
    lines read so far. The line saying the hook started the watcher is not the event's."""
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        for n in range(seen, len(lines)):
            line = json.loads(lines[n])
            if not line.get("outcome", "").startswith("watching "):
                return line, n + 1
        if time.monotonic() > deadline:
            raise SetupError(f"{path} has no line for the event after {timeout:.0f} s")
        time.sleep(0.05)


def watcher_state(runner: Runner, binary: Path, store: Path, env: dict[str, str], wait: bool) -> str:
    """Whether the hook started the change journal's watcher (it does at `hooks.watch_from`
    entries); when it should have, waits up to 10 s for it, as the next turn would come later."""
    for _ in range(100 if wait else 1):
        out = runner.run(Cmd([str(binary), "--store", str(store), "watch", "--status", "--json"], env))
        try:
            status = json.loads(out.stdout) if out.ok and out.stdout.strip() else {}
        except json.JSONDecodeError:
            status = {}
        if status.get("pid") or status.get("running"):
            return "the hook started `cairn watch` for the tree (the later events use its journal)"
        time.sleep(0.1)
    return ""


# ------------------------------------------------------------------------------ the table

def ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.0f} ms" if value >= 0.1 else f"{value * 1000:.1f} ms"


def table(run: HookRun) -> list[str]:
    out = ["| agent | event | cairn hook | shadow git | cairn ÷ git |", "|---|---|--:|--:|--:|"]
    for result in run.results:
        label = NAMES[result.agent]
        if result.error:
            out.append(f"| {label} | **error** | {result.error.replace('|', '/')[:300]} | | |")
            continue
        for kind, text in EVENTS:
            c, g = result.cairn.get(kind), result.git.get(kind)
            cm, gm = (c.median if c else None), (g.median if g else None)
            ratio = f"{cm / gm:.2f}×" if cm is not None and gm else "—"
            out.append(f"| {label} | {text} | {ms(cm)} | {ms(gm)} | {ratio} |")
    return out


def describe(run: HookRun) -> list[str]:
    notes = []
    layers: dict[str, list[str]] = {}
    for result in run.results:
        if result.layers:
            layers.setdefault(result.layers, []).append(NAMES[result.agent])
    if layers:
        notes.append("Their prompt moments hold (the hook log of the last): " + "; ".join(
            f"{', '.join(names)}: {what}" for what, names in layers.items()) + ".")
    for result in run.results:
        for note in dict.fromkeys(result.notes):
            notes.append(f"{NAMES[result.agent]}: {note}.")
    return [
        f"A generated tree of {run.files:,} files ({run.bytes / 1e6:.0f} MB) with an empty `.git` of its own "
        f"(`git init`, nothing committed: a project's repository, found by the hooks that look for it); "
        f"each agent's hooks "
        f"installed with `cairn hooks install AGENT` into a HOME of their own and run as the installed file "
        f"says; {run.rounds} rounds, medians (the first checkpoint once). Cache warm: the tree was read once "
        f"before each agent's first checkpoint, and every later event follows a change the harness just "
        f"wrote. Load (`uptime`) before: {run.load_before.split('load average:')[-1].strip()}; after: "
        f"{run.load_after.split('load average:')[-1].strip()}.",
        *notes,
    ]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/hook_cost.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--cairn", type=Path, default=HERE.parent / "target/release/cairn")
    ap.add_argument("--work", type=Path, default=HERE / "work" / "hooks",
                    help="scratch directory, emptied first and removed after (default bench/work/hooks)")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_FILES:,} files, {QUICK_ROUNDS} rounds")
    ap.add_argument("--files", type=int, help=f"files in the tree (default {FULL_FILES:,})")
    ap.add_argument("--rounds", type=int, help=f"rounds per agent (default {FULL_ROUNDS})")
    ap.add_argument("--agents", default=",".join(AGENTS), help=f"comma-separated, of {','.join(AGENTS)}")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in CLASSES]
    if unknown:
        ap.error(f"unknown agent(s) {', '.join(unknown)}; choose from {', '.join(AGENTS)}")
    files = args.files or (QUICK_FILES if args.quick else FULL_FILES)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else FULL_ROUNDS)
    binary = args.cairn.resolve()
    if not binary.exists():
        ap.error(f"{binary}: no such file (build it with cargo build --release -p cairn)")
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    os.umask(0o022)
    work = args.work.resolve()
    remove_tree(work)
    work.mkdir(parents=True)
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TZ": "UTC"}
        pool = workload.TextPool(random.Random(f"pool:{args.seed}"), 8 << 20)
        log(f"generating {files:,} files")
        tree = generate(work / "tree", files, args.seed, pool)
        run = measure(Runner(work / "logs"), binary, work / "agents", tree, env, agents, rounds, args.seed, pool, log)
    finally:
        if not args.keep:
            remove_tree(work)
    print(f"`{shlex.join(['bench/hook_cost.py', *argv])}`\n")
    print("\n".join(describe(run)))
    print()
    print("\n".join(table(run)))
    return 1 if any(r.error for r in run.results) else 0


def generate(root: Path, files: int, seed: int, pool: workload.TextPool) -> workload.Tree:
    """The source workload's shape, with an empty repository of its own (`git init`): Codex
    CLI's and Copilot CLI's hooks take the top of the git repository the event's `cwd` is in
    as the project, and a tree inside another repository (this one's, under bench/work) would
    be taken for that whole repository. Nothing is committed into it: the shadow repository
    is the only history here."""
    spec = workload.TreeSpec(files=files, dirs=max(10, files // 50), total_bytes=files * 6_000, git_share=0)
    tree = workload.generate_tree(root, spec, seed, pool)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], env=workload.git_env(root.parent), check=True,
                   capture_output=True)
    tree.git_files = sum(len(names) for _, _, names in os.walk(root / ".git"))
    return tree


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
