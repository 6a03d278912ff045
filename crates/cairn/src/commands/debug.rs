//! `cairn debug run|list|diff|delete`: debugger captures of a paused program.
//!
//! Each subcommand checks its arguments, makes one engine call (`debug_run`, `debug_list`,
//! `debug_diff`, `debug_delete`) and prints the result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_dap::{CaptureDiff, SourceBreakpoints};
use cairn_lib::ops::debug::{
    DebugDeleteOptions, DebugDeleteResult, DebugDiffOptions, DebugList, DebugListOptions, DebugRunOptions,
    DebugRunResult,
};
use clap::{Args, Subcommand};

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// The `debug` subcommands.
#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// Run a program under its debug adapter (debugpy for `.py`, lldb-dap otherwise), stop at
    /// each breakpoint, optionally capture its variables, and print what changed between stops.
    Run(RunArgs),
    /// List the stored captures.
    #[command(alias = "ls")]
    List(ListArgs),
    /// Show what changed between two stored captures.
    Diff(DiffArgs),
    /// Delete one stored capture, or all of them with --all.
    #[command(alias = "rm")]
    Delete(DeleteArgs),
}

/// Arguments of `cairn debug run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program: a Python script, or an executable built with debug information.
    program: PathBuf,
    /// A line breakpoint, `FILE:LINE`; repeat for more.
    #[arg(long = "break", value_name = "FILE:LINE", required = true)]
    breaks: Vec<String>,
    /// Capture the top frame's variables at each stop and diff consecutive captures.
    #[arg(long)]
    capture_each_stop: bool,
    /// Levels of children to expand in each capture (0 = top-level variables only).
    #[arg(long, default_value_t = 0)]
    depth: u32,
    /// Compare object addresses and pointer values raw instead of masking them.
    #[arg(long)]
    exact: bool,
    /// Stop the program after this many stops.
    #[arg(long, default_value_t = 100)]
    max_stops: usize,
    /// How long to wait for each stop and each capture (`30s`, `2m`).
    #[arg(long, default_value = "60s")]
    timeout: String,
    /// The session to save the captures into (name or id).
    #[arg(long)]
    session: Option<String>,
    /// Arguments passed to the program.
    #[arg(last = true)]
    args: Vec<String>,
}

/// Arguments of `cairn debug list`: the engine's options.
pub type ListArgs = DebugListOptions;

/// Arguments of `cairn debug diff`: the engine's options.
pub type DiffArgs = DebugDiffOptions;

/// Arguments of `cairn debug delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The capture to delete.
    id: Option<String>,
    /// Delete every capture of the session.
    #[arg(long, conflicts_with = "id")]
    all: bool,
    /// The session to delete from (name or id).
    #[arg(long)]
    session: Option<String>,
}

/// Runs a `debug` subcommand.
pub fn run(global: &GlobalArgs, command: DebugCommand, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let context = call_context();
    match command {
        DebugCommand::Run(args) => {
            let result = store.debug_run(&run_options(args)?, &context)?;
            printer.result(&result, human_run);
        }
        DebugCommand::List(args) => {
            let result = store.debug_list(&args, &context)?;
            printer.result(&result, human_list);
        }
        DebugCommand::Diff(args) => {
            let result = store.debug_diff(&args, &context)?;
            printer.result(&result, |d| human_diff(d, ""));
        }
        DebugCommand::Delete(args) => {
            if args.id.is_none() && !args.all {
                return Err(crate::error::usage(
                    "name the capture to delete, or pass --all to delete every one",
                ));
            }
            let options = DebugDeleteOptions {
                snapshot_id: args.id,
                session: args.session,
                ..DebugDeleteOptions::default()
            };
            let result = store.debug_delete(&options, &context)?;
            printer.result(&result, human_delete);
        }
    }
    Ok(())
}

/// Checks and resolves the arguments of `run`; the engine does the rest.
fn run_options(args: RunArgs) -> CommandResult<DebugRunOptions> {
    let cwd = std::env::current_dir()
        .map_err(|e| crate::error::usage(format!("cannot read the current directory: {e}")))?;
    Ok(DebugRunOptions {
        program: existing_file(&args.program)?,
        args: args.args,
        cwd: Some(cwd),
        breakpoints: parse_breakpoints(&args.breaks)?,
        timeout: cairn_lib::parse_duration("timeout", &args.timeout)?,
        capture_each_stop: args.capture_each_stop,
        depth: args.depth,
        exact: args.exact,
        max_stops: args.max_stops,
        session: args.session,
    })
}

/// `FILE:LINE` arguments grouped by file, files made absolute (adapters match them by path).
fn parse_breakpoints(breaks: &[String]) -> CommandResult<Vec<SourceBreakpoints>> {
    let mut by_file: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
    for spec in breaks {
        let parsed = spec.rsplit_once(':').and_then(|(file, line)| {
            let line = line.parse::<u32>().ok().filter(|l| *l > 0)?;
            (!file.is_empty()).then(|| (PathBuf::from(file), line))
        });
        let Some((file, line)) = parsed else {
            return Err(crate::error::usage(format!(
                "--break {spec:?} is not FILE:LINE; write it like `--break loop.py:12`"
            )));
        };
        by_file.entry(existing_file(&file)?).or_default().push(line);
    }
    Ok(by_file.into_iter().map(|(path, lines)| SourceBreakpoints { path, lines }).collect())
}

fn existing_file(path: &Path) -> CommandResult<PathBuf> {
    match std::fs::canonicalize(path) {
        Ok(p) if p.is_file() => Ok(p),
        _ => Err(crate::error::usage(format!("{} is not a file; pass an existing file", path.display()))),
    }
}

fn human_run(r: &DebugRunResult) -> String {
    let mut out = String::new();
    let mut diffs = r.diffs.iter();
    for (i, stop) in r.stops.iter().enumerate() {
        let file = stop.path.as_deref().and_then(Path::file_name).map(|f| f.to_string_lossy().into_owned());
        let place = format!("{}:{}", file.unwrap_or_else(|| "?".to_owned()), stop.line);
        out.push_str(&format!("stop {} in {} at {place}", i + 1, stop.function_name));
        if let Some(s) = &stop.snapshot {
            out.push_str(&format!(": captured {} variables as {}", s.variable_count, s.id));
            if i > 0
                && let Some(diff) = diffs.next()
            {
                out.push('\n');
                out.push_str(&human_diff(diff, "  "));
            }
        }
        out.push('\n');
    }
    let end = match (r.stopped_early, r.exit_code) {
        (true, _) => "stopped the program at --max-stops".to_owned(),
        (false, Some(code)) => format!("the program exited with code {code}"),
        (false, None) => "the program ended".to_owned(),
    };
    out.push_str(&format!("{} stops; {end}", r.stops.len()));
    out
}

fn human_diff(d: &CaptureDiff, indent: &str) -> String {
    let s = &d.summary;
    let mut lines = vec![format!(
        "{indent}{} modified, {} added, {} removed, {} unchanged",
        s.modified, s.added, s.removed, s.unchanged
    )];
    lines.extend(
        d.modified.iter().map(|m| format!("{indent}  ~ {}: {} -> {}", m.path, m.old_value, m.new_value)),
    );
    lines.extend(d.added.iter().map(|a| format!("{indent}  + {} = {}", a.path, a.value)));
    lines.extend(d.removed.iter().map(|r| format!("{indent}  - {} = {}", r.path, r.value)));
    if d.thread_mismatch {
        lines.push(format!("{indent}  (the captures come from different threads)"));
    }
    lines.join("\n")
}

fn human_list(l: &DebugList) -> String {
    if l.snapshots.is_empty() {
        return "no debug captures; take some with `cairn debug run PROGRAM --break FILE:LINE --capture-each-stop`"
            .to_owned();
    }
    let rows: Vec<Vec<String>> = l
        .snapshots
        .iter()
        .map(|s| {
            vec![
                s.id.to_string(),
                s.label.clone(),
                s.function_name.clone(),
                s.variable_count.to_string(),
                format::created(&s.created_at),
            ]
        })
        .collect();
    format::table(&["ID", "LABEL", "FUNCTION", "VARIABLES", "CREATED (UTC)"], &rows)
}

fn human_delete(r: &DebugDeleteResult) -> String {
    format!("deleted {}; {} captures remain", r.deleted, r.remaining)
}
