//! `cairn transcript save|load|export|list|delete`: snapshots of agent conversations.
//!
//! `HOME`, the current directory and whether stdin is a terminal are read here and passed to
//! the engine, which reads no environment.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use cairn_lib::ops::transcript::{
    AgentPlaces, TranscriptDeleteOptions, TranscriptDeleteResult, TranscriptDiff, TranscriptExportOptions,
    TranscriptList, TranscriptListOptions, TranscriptLoadOptions, TranscriptSaveOptions,
    TranscriptSaveResult, TranscriptWritten,
};
use clap::{Args, Subcommand};

use cairn_lib::OpenMode;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The `transcript` subcommands.
#[derive(Debug, Subcommand)]
pub enum TranscriptCommand {
    /// Save the active path of a Pi or Claude Code session (default: the newest session of the
    /// current directory).
    Save(SaveArgs),
    /// Write a saved conversation as a new session in the agent's directory for the current
    /// directory, and print the command that resumes it.
    Load(LoadArgs),
    /// Write a saved conversation to a file (for Pi, one that `pi --fork FILE` opens).
    Export(ExportArgs),
    /// Show where transcript snapshots are stored, and the saved ones.
    #[command(alias = "ls")]
    List(ListArgs),
    /// Delete a transcript snapshot (needs --force when stdin is not a terminal).
    #[command(alias = "rm")]
    Delete(DeleteArgs),
}

/// Where the agents keep their sessions.
#[derive(Debug, Args)]
pub struct PlaceArgs {
    /// Pi's sessions directory (default: ~/.pi/agent/sessions).
    #[arg(long, value_name = "DIR")]
    pi_dir: Option<PathBuf>,
    /// Claude Code's projects directory (default: ~/.claude/projects).
    #[arg(long, value_name = "DIR")]
    claude_dir: Option<PathBuf>,
}

/// Arguments of `cairn transcript save`.
#[derive(Debug, Args)]
pub struct SaveArgs {
    /// The session file, then the name. With one argument, it is the file when it names an
    /// existing file, and the name otherwise.
    #[arg(value_name = "FILE|NAME", num_args = 0..=2)]
    args: Vec<String>,
    /// Replace the transcript snapshot that already holds the name.
    #[arg(long, short)]
    force: bool,
    /// What this snapshot is being taken before.
    #[arg(long, short)]
    description: Option<String>,
    /// Refuse a file with a line that is not JSON (by default such lines are left out, as the
    /// agents leave them out, and listed).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    places: PlaceArgs,
    /// The session to save into (name or id).
    #[arg(long)]
    session: Option<String>,
}

/// Arguments of `cairn transcript load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The transcript snapshot: a name, an id or a unique id prefix.
    name: String,
    /// A message to deliver once in the new session (kept next to it as `<session>.prompt`).
    #[arg(long)]
    prompt: Option<String>,
    #[command(flatten)]
    places: PlaceArgs,
    /// The session to look the snapshot up in (name or id).
    #[arg(long)]
    session: Option<String>,
}

/// Arguments of `cairn transcript export`: the engine's options.
pub type ExportArgs = TranscriptExportOptions;

/// Arguments of `cairn transcript list`: the engine's options.
pub type ListArgs = TranscriptListOptions;

/// Arguments of `cairn transcript delete`: the engine's options, and the confirmation only a
/// terminal can give.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// Delete without asking (required when stdin is not a terminal).
    #[arg(long, short)]
    force: bool,
    #[command(flatten)]
    options: TranscriptDeleteOptions,
}

/// Runs a `transcript` subcommand.
pub fn run(global: &GlobalArgs, command: TranscriptCommand, printer: &Printer) -> CommandResult {
    let context = call_context();
    match command {
        TranscriptCommand::Save(args) => {
            let store = open_store(global)?;
            let (file, name) = split_file_and_name(args.args)?;
            let options = TranscriptSaveOptions {
                file,
                name,
                description: args.description,
                force: args.force,
                places: places(&args.places)?,
                session: args.session,
                strict: args.strict,
                ..TranscriptSaveOptions::default()
            };
            let result = store.transcript_save(&options, &context)?;
            printer.result(&result, human_save);
        }
        TranscriptCommand::Load(args) => {
            let store = open_store(global)?;
            let options = TranscriptLoadOptions {
                name: args.name,
                places: places(&args.places)?,
                prompt: args.prompt,
                session: args.session,
                ..TranscriptLoadOptions::default()
            };
            let result = store.transcript_load(&options, &context)?;
            printer.result(&result, |r| human_written("loaded", r));
        }
        TranscriptCommand::Export(mut options) => {
            let store = open_store(global)?;
            // Absolute, so the printed fork command works from any directory.
            options.output = std::path::absolute(&options.output).unwrap_or(options.output);
            let result = store.transcript_export(&options, &context)?;
            printer.result(&result, |r| human_written("exported", r));
        }
        TranscriptCommand::List(args) => return list(global, args, printer),
        TranscriptCommand::Delete(args) => {
            let store = open_store(global)?;
            if !args.force && !confirm(&args.options.name)? {
                return Err(crate::error::usage(format!(
                    "not deleting transcript snapshot {:?}; pass --force to delete without asking",
                    args.options.name
                )));
            }
            let result = store.transcript_delete(&args.options, &context)?;
            printer.result(&result, human_delete);
        }
    }
    Ok(())
}

/// `list`: a reader, so it makes no store; where there is none it says so, and still shows the
/// snapshot files the Pi extension wrote itself.
fn list(global: &GlobalArgs, mut args: ListArgs, printer: &Printer) -> CommandResult {
    // Without a home, Pi's folder cannot be found: the listing then leaves its files out.
    args.places = places(&PlaceArgs { pi_dir: None, claude_dir: None }).ok();
    let existing =
        GlobalArgs { store: global.store.clone(), json: global.json, open_mode: OpenMode::Existing };
    let result = match open_store(&existing) {
        Ok(store) => store.transcript_list(&args, &call_context())?,
        Err(err) if err.code() == Some(cairn_lib::NO_STORE) => {
            TranscriptList::without_store(crate::context::store_path(global)?, args.places.as_ref())?
        }
        Err(err) => return Err(err),
    };
    printer.result(&result, human_list);
    Ok(())
}

/// The agents' directories and the current directory: `--pi-dir` / `--claude-dir`, else the
/// agents' own `PI_CODING_AGENT_DIR` / `CLAUDE_CONFIG_DIR`, else their defaults under `HOME`.
fn places(args: &PlaceArgs) -> CommandResult<AgentPlaces> {
    let cwd = std::env::current_dir()
        .map_err(|e| crate::error::usage(format!("cannot read the current directory: {e}")))?;
    let cwd = cwd.to_string_lossy().into_owned();
    AgentPlaces::from_env_and_dirs(
        &crate::context::process_env(),
        cwd,
        args.pi_dir.as_deref(),
        args.claude_dir.as_deref(),
    )
}

/// `save [FILE] [NAME]`: two arguments are file then name. One argument is the file only when
/// such a file exists; anything else is a name, so `../x` or `a b` is refused by the name rule
/// rather than reported as a missing file.
fn split_file_and_name(mut args: Vec<String>) -> CommandResult<(Option<PathBuf>, Option<String>)> {
    match args.len() {
        0 => Ok((None, None)),
        1 => {
            let only = args.remove(0);
            if Path::new(&only).is_file() {
                return Ok((Some(PathBuf::from(only)), None));
            }
            cairn_lib::validate_name("snapshot", &only).map_err(|e| {
                crate::error::usage(format!(
                    "{} (no file {only:?} exists, so it was read as the name)",
                    crate::error::render(&e)
                ))
            })?;
            // A valid name that looks like a session file is most likely a mistyped path:
            // saving the newest session under it would hide the mistake.
            if only.ends_with(".jsonl") {
                return Err(crate::error::usage(format!(
                    "{only} does not exist; pass an existing session file, or a name that does not end in .jsonl"
                )));
            }
            Ok((None, Some(only)))
        }
        _ => {
            let name = args.remove(1);
            Ok((Some(PathBuf::from(args.remove(0))), Some(name)))
        }
    }
}

/// Asks on the terminal whether to delete; refuses outright when stdin is not a terminal.
/// The question goes to stderr so that stdout keeps only the result.
fn confirm(name: &str) -> CommandResult<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(crate::error::usage(format!(
            "deleting transcript snapshot {name:?} needs --force when not run interactively"
        )));
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "delete transcript snapshot {name:?}? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| crate::error::usage(format!("cannot read the answer: {e}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn human_save(r: &TranscriptSaveResult) -> String {
    let s = &r.snapshot;
    let mut out = format!(
        "saved {} of {}\n  {} session, {} entries on the active path, {}\n",
        format::label(s),
        r.file.display(),
        r.summary.format,
        r.summary.entry_count,
        format::bytes(s.stats.bytes),
    );
    if let Some(first) = &r.summary.first_user_message {
        out.push_str(&format!("  first message: {}\n", format::text(first)));
    }
    if !r.subagent_files.is_empty() {
        out.push_str(&format!("  with its subagents' transcripts: {}\n", r.subagent_files.join(", ")));
    }
    if r.off_path > 0 {
        out.push_str(&format!("  left out: {} entries on other branches of the conversation\n", r.off_path));
    }
    if !r.skipped_lines.is_empty() {
        let lines: Vec<String> = r.skipped_lines.iter().map(|s| s.line.to_string()).collect();
        out.push_str(&format!(
            "  skipped {} line(s) that are not valid JSON, as the agent skips them: line {} (see not_covered; --strict refuses such a file)\n",
            lines.len(),
            lines.join(", ")
        ));
    }
    if let Some(old) = &r.replaced {
        out.push_str(&format!("replaced {}\n", format::label(old)));
    }
    for s in &r.secrets {
        let entry = s.entry.as_deref().map(|e| format!(" (entry {e})")).unwrap_or_default();
        out.push_str(&format!(
            "  secret-shaped strings on line {}{entry}: {}; `cairn transcript export --redact` leaves them out\n",
            s.line,
            s.rules.join(", ")
        ));
    }
    out
}

fn human_written(verb: &str, r: &TranscriptWritten) -> String {
    let mut out = format!(
        "{verb} {} as a {} session\n  file: {}\n  session id: {}\n",
        format::label(&r.snapshot),
        r.format,
        r.file.display(),
        r.session_id
    );
    if let Some(cmd) = &r.resume_command {
        out.push_str(&format!("resume with: {cmd}\n"));
    }
    if let Some(cmd) = &r.fork_command {
        out.push_str(&format!("or start a new session from it: {cmd}\n"));
    }
    for file in &r.subagent_files {
        out.push_str(&format!("  subagent transcript: {}\n", file.display()));
    }
    if let Some(file) = &r.prompt_file {
        out.push_str(&format!("the message to send first is in {}\n", file.display()));
    }
    out
}

fn human_list(r: &TranscriptList) -> String {
    let mut out = match &r.session {
        Some(session) if r.store_exists => {
            let mut out = format!("transcript snapshots in {} (session {session})\n", r.store.display());
            if r.snapshots.is_empty() {
                out.push_str("none yet; save one with `cairn transcript save [FILE] NAME`\n");
            } else {
                out.push_str(&snapshot_table(r));
            }
            out
        }
        _ => format!(
            "there is no store at {} yet, so no transcript snapshots; save one with `cairn transcript save [FILE] NAME`\n",
            r.store.display()
        ),
    };
    if let Some(first) = r.extension_files.first() {
        let folder = first.file.parent().unwrap_or(&first.file);
        out.push_str(&format!(
            "\nsaved by the pi-session-snapshot extension in {} (the pi profile's snapshot_restore takes one by name; saving over one needs force):\n",
            folder.display()
        ));
        for f in &r.extension_files {
            let note = if f.in_store {
                "  (a store snapshot has this name too: it is the one restored)"
            } else {
                ""
            };
            out.push_str(&format!("  {}{note}\n", f.name));
        }
    }
    out
}

fn snapshot_table(r: &TranscriptList) -> String {
    let mut out = String::new();
    let rows: Vec<Vec<String>> = r
        .snapshots
        .iter()
        .map(|e| {
            let s = &e.snapshot;
            let (agent, entries, first) = match &e.summary {
                Some(sum) => (
                    sum.format.to_string(),
                    sum.entry_count.to_string(),
                    sum.first_user_message.clone().unwrap_or_default(),
                ),
                None => (String::new(), String::new(), String::new()),
            };
            vec![
                s.name.clone().unwrap_or_else(|| "-".into()),
                format::created(&s.created_at),
                agent,
                entries,
                first,
            ]
        })
        .collect();
    out.push_str(&format::table(&["NAME", "CREATED (UTC)", "AGENT", "ENTRIES", "FIRST MESSAGE"], &rows));
    out
}

fn human_delete(r: &TranscriptDeleteResult) -> String {
    format!(
        "deleted {} of {}\nrun `cairn gc` to reclaim the space its data used\n",
        format::label(&r.removed),
        r.removed.target
    )
}

/// The entries a transcript diff adds and removes, for `cairn diff`.
pub fn human_diff(d: &TranscriptDiff) -> String {
    let mut out = String::new();
    for (mark, entries) in [("-", &d.removed), ("+", &d.added)] {
        for e in entries {
            out.push_str(&format!("{mark} {} {:<12} {}\n", e.id, e.role, format::text(&e.preview)));
        }
    }
    out.push_str(&format!(
        "{} entries added, {} removed, {} unchanged\n",
        d.added.len(),
        d.removed.len(),
        d.unchanged
    ));
    out
}
