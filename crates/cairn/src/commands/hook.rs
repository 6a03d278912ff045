//! `cairn hook AGENT`: the command cairn's hook entries run at each of the agent's events.
//!
//! It must never break the agent: it always exits 0, prints no text on stdout (both agents
//! read a hook's stdout, Claude Code even adds plain text to the prompt), says what went wrong
//! in one line on stderr, and logs each run to `<store>/logs/hooks.log`, an event it could not
//! read included (its agent, the reason and its size; never its text).
//!
//! One thing the agent's user must see: a workspace an interrupted restore left mixed, which
//! gets no checkpoint until they resolve it. Stderr of a hook that exits 0 is shown only in a
//! verbose mode, so the hook then also prints one JSON object on stdout whose `systemMessage`
//! both agents show their user without adding it to the model's context, and without
//! blocking anything (Claude Code 2.0's hooks reference, Gemini CLI's `docs/hooks/reference.md`
//! at 0.56.0-nightly: "Common output fields").
//!
//! It must also not hold the turn up. The checkpoint runs in a child process (this binary,
//! with the hidden `--background` flag) that the hook waits for up to `hooks.budget`. A
//! checkpoint that takes longer (a first save of a large tree) goes on in the background and
//! the turn goes on; the child logs its outcome as usual. The child talks to the hook over
//! its stdout, one line per step: `budget MS` once the store is open, then `done TEXT`,
//! `error TEXT`, or `paused TEXT` (no checkpoint until an interrupted restore is resolved).
//! With `hooks.budget = 0s` the turn never waits for the checkpoint, only for the store to open.
//! The child is told when the hook started (`--hook-started`), so it knows when the agent went
//! on; a checkpoint that begins after that (it waited on a busy store) is recorded as inexact
//! (see `agents::agent_waits_until`). The child also reads the agent's project directory from
//! the environment it inherits from the hook.
//!
//! A checkpoint of a workspace of `hooks.watch_from` entries or more starts a change-journal
//! watcher for it (`hooks.watch = false` turns that off), so that the next ones stat only what
//! changed. A target that another checkpoint still holds is waited for, not skipped.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cairn_lib::agents::{self, Agent, CheckpointOutcome, HookEvent, HookInvocation, HookLogLine};
use cairn_lib::ops::interrupted;
use cairn_lib::ops::watch::{AutoWatch, WatchOptions, wants_watcher};
use cairn_lib::{ErrorKind, Repository};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{store_address, store_path};
use crate::error::{CommandResult, usage};
use crate::printer::Printer;

const MAX_EVENT_BYTES: u64 = 64 << 20;

/// How long a checkpoint waits for a target another checkpoint holds.
const LOCK_WAIT: Duration = Duration::from_secs(600);

/// How long the hook waits for the child to open the store before the budget starts counting
/// against the turn anyway (a remote store's first open reads the bucket).
const OPEN_WAIT: Duration = Duration::from_secs(30);

/// Arguments of `cairn hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent that runs the hook (claude-code, gemini-cli, ...). Its event is read on stdin.
    pub agent: String,
    /// The event, for an agent whose payloads do not name it (copilot-cli).
    #[arg(long)]
    pub event: Option<String>,
    /// Run the checkpoint itself, reporting to the hook on stdout (the hook starts this).
    #[arg(long, hide = true)]
    pub background: bool,
    /// With `--background`: when the hook started, in milliseconds since the Unix epoch, from
    /// which the child knows when the agent stops waiting for it.
    #[arg(long, hide = true, requires = "background")]
    pub hook_started: Option<u64>,
}

pub fn run(global: &GlobalArgs, args: HookArgs) -> CommandResult {
    let outcome = if args.background {
        let started = args.hook_started.map(|ms| UNIX_EPOCH + Duration::from_millis(ms));
        background(global, &args.agent, args.event.as_deref(), started)
    } else {
        foreground(global, &args.agent, args.event.as_deref())
    };
    if let Err(err) = outcome {
        // Never `--json` here: stdout belongs to the agent (or, in the child, to the hook).
        if args.background {
            say(&format!("error {}", crate::error::render(&err.context("cairn hook"))));
        } else {
            Printer::new(false).error(&err.context("cairn hook"));
        }
    }
    Ok(())
}

/// The hook itself: reads the event, hands it to a child and waits for it within the budget.
fn foreground(global: &GlobalArgs, agent: &str, event: Option<&str>) -> CommandResult {
    let started = Instant::now();
    // The same instant on the wall clock, which the child shares.
    let started_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let kind = agent_named(agent)?;
    let bytes = read_stdin()?;
    let parsed = match std::str::from_utf8(&bytes) {
        Ok(text) => agents::parse_hook_event(kind, text, event).map(|invocation| (text, invocation)),
        Err(_) => {
            Err(cairn_lib::Error::invalid(format!("the {kind} hook event was turned away: it is not UTF-8")))
        }
    };
    let (text, invocation) = match parsed {
        Ok(parsed) => parsed,
        Err(err) => {
            // Logged as well as said: the stderr of a hook that exits 0 is seldom seen. The
            // reason quotes nothing of the event, which may hold the prompt.
            let line = HookLogLine::rejected(agent, &err.message(), bytes.len() as u64);
            if let Ok(address) = store_address(global) {
                let _ = agents::append_hook_log(&address.local_dir().join("logs").join("hooks.log"), &line);
            }
            return Err(err);
        }
    };
    // What the agent reads on stdout: only where it reads a decision there, and never more
    // than one line (Cursor waits for `{"continue": true}` before a prompt goes out).
    let outcome = checkpoint_within_budget(global, agent, event, started, started_ms, text, &invocation);
    let paused = match &outcome {
        Ok(paused) => paused.as_deref(),
        Err(_) => None,
    };
    if let Some(reply) = kind.reply(&invocation, paused) {
        let _ = writeln!(std::io::stdout().lock(), "{reply}");
    }
    if let Some(rest) = paused {
        let _ = writeln!(std::io::stderr().lock(), "error: {rest}");
    }
    outcome.map(|_| ())
}

/// Hands the event to a child and waits for it within the budget; the sentence of an
/// interrupted restore when one stops the checkpoint.
fn checkpoint_within_budget(
    global: &GlobalArgs,
    agent: &str,
    event: Option<&str>,
    started: Instant,
    started_ms: u128,
    text: &str,
    invocation: &HookInvocation,
) -> CommandResult<Option<String>> {
    if nothing_to_save(&invocation.event) {
        // Do not even open the store.
        let said =
            if invocation.event == HookEvent::TurnEnded { "turn ended; nothing to save" } else { "ignored" };
        return log(global, invocation, said).map(|()| None);
    }
    let exe = std::env::current_exe().map_err(|e| usage(format!("cannot find cairn's own binary: {e}")))?;
    let mut command = Command::new(exe);
    command.arg("--store").arg(store_path(global)?).args(["hook", agent, "--background"]);
    if let Some(event) = event {
        command.arg("--event").arg(event);
    }
    command.arg("--hook-started").arg(started_ms.to_string());
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    // Its own process group: the agent may kill the hook's group when the turn is cancelled,
    // and a checkpoint cut short mid-write only costs the next command a clean-up.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| usage(format!("cannot start the checkpoint: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that died before reading says so below, through its missing report.
        let _ = stdin.write_all(text.as_bytes());
    }
    let stdout = child.stdout.take().ok_or_else(|| usage("cannot read the checkpoint's report"))?;
    let (lines, reports) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut deadline = started + OPEN_WAIT;
    loop {
        match reports.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let (step, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
                match step {
                    "budget" => {
                        let budget = Duration::from_millis(rest.parse().unwrap_or(0));
                        deadline = started + budget;
                    }
                    "done" => return Ok(None),
                    "paused" => return Ok(Some(rest.to_owned())),
                    // Already rendered in the CLI's words by the child.
                    _ => {
                        let _ = writeln!(std::io::stderr().lock(), "error: {rest}");
                        return Ok(None);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let waited = started.elapsed().as_secs_f64();
                if deadline == started {
                    // A budget of 0: the user asked for the checkpoint never to be waited for.
                    return Ok(None);
                }
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "note: cairn hook: the checkpoint is still running after {waited:.1}s and goes on in the background (pid {}); its outcome goes to the hook log",
                    child.id()
                );
                return Ok(None);
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| e.to_string());
                return Err(usage(format!("the checkpoint stopped without a report ({status})")));
            }
        }
    }
}

/// The child: opens the store, reports the budget, checkpoints, logs, reports the outcome,
/// then starts a watcher if the workspace is large.
///
/// It tells the engine two things the event does not say: the agent's project directory,
/// from the environment the agent gave the hook, and when the agent stops waiting (from
/// when the hook `started`, the budget and when the store opened), so that a checkpoint
/// taken later is marked inexact.
fn background(
    global: &GlobalArgs,
    agent: &str,
    event: Option<&str>,
    started: Option<SystemTime>,
) -> CommandResult {
    let (_, mut invocation) = read_event(agent, event)?;
    if let Some(dir) = project_dir(invocation.agent) {
        invocation.project_dir = Some(dir);
    }
    let store = match crate::context::open_store(global) {
        Ok(store) => store,
        Err(err) => {
            let said = crate::error::render(&err);
            log(global, &invocation, &said)?;
            return Err(err);
        }
    };
    let config = store.config();
    let budget = config.hooks_budget();
    invocation.agent_waits_until = started.map(|at| agents::agent_waits_until(at, SystemTime::now(), budget));
    say(&format!("budget {}", budget.as_millis()));
    let outcome = checkpoint(&store, &invocation);
    let said = match &outcome {
        Ok(done) => done.said.clone(),
        Err(e) => crate::error::render(e),
    };
    log(global, &invocation, &said)?;
    let entries = match outcome {
        Ok(done) => {
            say(&format!("done {}", done.said));
            done.workspace_entries
        }
        Err(err) if err.code() == Some(interrupted::REFUSAL_CODE) => {
            say(&format!("paused {}", paused(&err)));
            return Ok(());
        }
        Err(err) => return Err(err),
    };
    if wants_watcher(config, AutoWatch::Hooks, entries)
        && let Some(dir) = invocation.project_dir.as_ref().or(invocation.cwd.as_ref())
    {
        // The turn no longer waits for this; a failure only shows in the log.
        let options = WatchOptions { dirs: vec![dir.clone()] };
        let said = match super::watch::ensure_detached(global, &store, &options) {
            Ok(()) => format!("watching {} for the next checkpoints", dir.display()),
            Err(e) => format!("could not start a watcher: {}", crate::error::render(&e)),
        };
        log(global, &invocation, &said)?;
    }
    Ok(())
}

/// What the agent's user reads when an interrupted restore stops the checkpoints: the
/// refusal, then the two commands that resolve it (the user runs them, in a terminal).
fn paused(err: &cairn_lib::Error) -> String {
    crate::error::fit_line(&format!(
        "{}; run `cairn restore --continue` or `cairn restore --abort`; until then no checkpoint is saved",
        err.render_message(&cairn_mcp::words::CliWords)
    ))
}

/// Saves what the event calls for, waiting for a target another checkpoint holds.
fn checkpoint(store: &Repository, invocation: &HookInvocation) -> CommandResult<CheckpointOutcome> {
    let context = crate::context::call_context();
    let waited = Instant::now();
    loop {
        match store.hook_checkpoint(invocation, &context) {
            Err(e) if e.kind() == ErrorKind::Locked && waited.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

fn read_event(agent: &str, event: Option<&str>) -> CommandResult<(String, HookInvocation)> {
    let agent = agent_named(agent)?;
    let text = String::from_utf8(read_stdin()?).map_err(|_| usage("the hook event on stdin is not UTF-8"))?;
    let invocation = agents::parse_hook_event(agent, &text, event)?;
    Ok((text, invocation))
}

/// The project directory the agent names in the hook's environment, in the variable its
/// module names: Claude Code's `CLAUDE_PROJECT_DIR` (its project root, whatever directory its
/// shell is in) or Gemini CLI's `GEMINI_PROJECT_DIR` (the directory it runs in). Gemini CLI
/// also sets `CLAUDE_PROJECT_DIR`, for compatibility, so each agent's own is read. An agent
/// that names it in the event instead (Cursor's `workspace_roots`) keeps the event's.
fn project_dir(agent: Agent) -> Option<PathBuf> {
    let var = agent.project_dir_var()?;
    std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn agent_named(agent: &str) -> CommandResult<Agent> {
    Agent::ALL.into_iter().find(|a| a.as_str() == agent).ok_or_else(|| {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        usage(format!("unknown agent {agent:?}; use {}", or_list(&names)))
    })
}

/// `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn read_stdin() -> CommandResult<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| usage(format!("cannot read the hook event on stdin: {e}")))?;
    Ok(bytes)
}

fn nothing_to_save(event: &HookEvent) -> bool {
    matches!(event, HookEvent::TurnEnded | HookEvent::Other { .. })
}

fn log(global: &GlobalArgs, invocation: &HookInvocation, said: &str) -> CommandResult {
    let line = HookLogLine::new(invocation, said);
    let file = store_address(global)?.local_dir().join("logs").join("hooks.log");
    agents::append_hook_log(&file, &line)
}

/// One report line to the hook; a hook that has gone (the budget ran out) is not an error.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
