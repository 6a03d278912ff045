//! `cairn restore REF [--to DIR]` (alias `rollback`).

use std::path::PathBuf;

use cairn_lib::ops::restore::{RestoreOptions, RestoreResult};
use cairn_lib::ops::save::Progress;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The snapshot: an id, a unique id prefix, a name, or `latest`.
    #[arg(required_unless_present_any = ["continue_interrupted", "abort_interrupted"])]
    reference: Option<String>,
    /// Restore into this new or empty directory instead of in place.
    #[arg(long, value_name = "DIR")]
    to: Option<PathBuf>,
    /// The target the reference is resolved among (for names and `latest`).
    #[arg(long)]
    target: Option<String>,
    /// Print the plan and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Give rewritten files the snapshot's mtimes instead of the current time.
    #[arg(long)]
    preserve_mtime: bool,
    /// The session (name or id).
    #[arg(long)]
    session: Option<String>,
    /// Finish a restore that was killed half way (the tree as found is saved first).
    #[arg(long = "continue", conflicts_with_all = ["reference", "abort_interrupted", "dry_run", "to"])]
    continue_interrupted: bool,
    /// Roll back a restore that was killed half way (the tree as found is saved first).
    #[arg(long = "abort", conflicts_with_all = ["reference", "dry_run", "to"])]
    abort_interrupted: bool,
    /// A moment: put back only these part kinds (dir, transcript, compose).
    #[arg(long, value_delimiter = ',', value_name = "KIND[,KIND]", conflicts_with_all = ["to", "dry_run"])]
    only: Vec<String>,
}

pub fn run(global: &GlobalArgs, args: RestoreArgs, printer: &Printer) -> CommandResult {
    if let Some(reference) = &args.reference
        && args.to.is_none()
        && !args.dry_run
        && super::moment::restore_if_moment(global, reference, args.session.as_deref(), &args.only, printer)?
    {
        return Ok(());
    }
    let store = open_store(global)?;
    let options = RestoreOptions {
        reference: args.reference.unwrap_or_default(),
        target: args.target,
        to: args.to,
        dry_run: args.dry_run,
        preserve_mtime: args.preserve_mtime,
        session: session_choice(args.session.as_deref()),
        continue_interrupted: args.continue_interrupted,
        abort_interrupted: args.abort_interrupted,
    };
    let progress = Progress::default();
    let result = printer
        .with_counts("restoring", Some(&progress), || store.restore_with_progress(&options, &progress))?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &RestoreResult) -> String {
    let mut out = String::new();
    if let Some(found) = &r.interrupted_restore {
        out.push_str(&format::recovered(found));
        if found.found.target == r.destination && r.safety_snapshot.is_none() {
            return out;
        }
    }
    if r.dry_run {
        let count = match (r.mode.as_str(), r.plan.len()) {
            (_, 0) => "nothing differs".to_owned(),
            ("new_directory", 1) => "1 entry to create".to_owned(),
            ("new_directory", n) => format!("{n} entries to create"),
            (_, 1) => "1 change".to_owned(),
            (_, n) => format!("{n} changes"),
        };
        out.push_str(&format!(
            "would restore {} into {}: {count}\n",
            format::label(&r.snapshot),
            r.destination
        ));
    } else {
        out.push_str(&format!(
            "restored {} into {}: {} files written ({})\n",
            format::label(&r.snapshot),
            r.destination,
            r.files_written,
            format::bytes(r.bytes_written)
        ));
    }
    if let Some(safety) = &r.safety_snapshot {
        out.push_str(&format!("safety snapshot of the previous state: {}\n", safety.id));
    }
    if r.mode == "in_place" && !r.dry_run && r.plan.is_empty() && r.files_written == 0 {
        out.push_str("nothing differed\n");
    }
    // A restore into a new directory lists its entries only when asked for a dry run: a real
    // one creates them all, which the counts above already say.
    if r.mode == "in_place" || r.dry_run {
        for entry in &r.plan {
            out.push_str(&format!("  {:<8} {} ({})\n", entry.action, format::path(&entry.path), entry.kind));
        }
    }
    out
}
