//! `cairn remove REF…` or `cairn remove --retain-…` (alias `rm`).

use cairn_lib::ops::remove::{RemoveOptions, RemoveResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn remove`.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// Snapshots to remove: ids, unique id prefixes, names or `latest`.
    refs: Vec<String>,
    /// Keep this many newest snapshots of each target and remove the rest.
    #[arg(long, value_name = "N")]
    retain_recent: Option<u64>,
    /// Keep snapshots younger than this (e.g. 24h, 7d) and remove the rest.
    #[arg(long, value_name = "DURATION")]
    retain_for: Option<String>,
    /// Remove snapshots created before this time (RFC 3339, e.g. 2026-06-01T00:00:00Z).
    #[arg(long, value_name = "TIME")]
    before_date: Option<String>,
    /// Only snapshots of this target.
    #[arg(long)]
    target: Option<String>,
    /// Print what would be removed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// The session (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: RemoveArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let result = store.remove(&RemoveOptions {
        refs: args.refs,
        retain_recent: args.retain_recent,
        retain_for: args.retain_for,
        before_date: args.before_date,
        target: args.target,
        dry_run: args.dry_run,
        session: session_choice(args.session.as_deref()),
    })?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &RemoveResult) -> String {
    let verb = if r.dry_run { "would remove" } else { "removed" };
    let mut out = format!("{verb} {} snapshot(s)\n", r.removed.len());
    for s in &r.removed {
        out.push_str(&format!("  {} {}\n", format::label(s), s.target));
    }
    if !r.dry_run && !r.removed.is_empty() {
        out.push_str("run `cairn gc` to reclaim the space their data used\n");
    }
    out
}
