//! `cairn restore REF [--to DIR]` (alias `rollback`), and `cairn restore --continue|--abort`:
//! the engine's one restore entry point ([`Store::restore_ref`]) decides whether `REF` is a
//! moment or a snapshot; this renders what it put back. A directory snapshot put back in place
//! is restored by the store's watcher when one runs ([`restore_by_watcher`]), which has the
//! store open already; this command then only prints what it did.
//!
//! [`Store::restore_ref`]: cairn_lib::Store::restore_ref

use cairn_lib::ops::restore::{RestoreMode, RestoreOptions, RestoreResult, Restored};
use cairn_lib::ops::save::Progress;
use cairn_lib::ops::watch::restore_by_watcher;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store, scope, store_path};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn restore`: the engine's options.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    options: RestoreOptions,
}

pub fn run(global: &GlobalArgs, args: RestoreArgs, printer: &Printer) -> CommandResult {
    let mut args = args;
    args.options.paths = paths_from_here(std::mem::take(&mut args.options.paths));
    // Before the store is opened: the watcher has it open.
    if let Ok(dir) = store_path(global)
        && let Some(restored) = printer
            .with_progress("restoring", || restore_by_watcher(&dir, &args.options, &call_context(), scope()))
    {
        for line in &restored.notices {
            Printer::notice(line);
        }
        printer.result(&restored.result, human);
        return Ok(());
    }
    let store = open_store(global)?;
    let places = super::moment::transcript_places();
    let progress = Progress::default();
    let restored = printer.with_counts("restoring", Some(&progress), || {
        store.restore_ref(&args.options, places, &call_context(), &progress)
    })?;
    match restored {
        Restored::Snapshot(result) => printer.result(result.as_ref(), human),
        Restored::Moment(result) => printer.result(result.as_ref(), super::moment::human_restore),
    }
    Ok(())
}

/// Paths given after `--`, as a shell user means them: relative to the current directory (the
/// engine takes absolute paths inside the target, and relative ones from the target's top).
pub fn paths_from_here(paths: Vec<String>) -> Vec<String> {
    use std::path::{Component, PathBuf};
    let Ok(here) = std::env::current_dir() else { return paths };
    paths
        .into_iter()
        .map(|p| {
            // `..` is folded by name, as the shell user wrote it, without following links.
            let mut out = PathBuf::new();
            for part in here.join(&p).components() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other),
                }
            }
            out.display().to_string()
        })
        .collect()
}

fn human(r: &RestoreResult) -> String {
    let mut out = String::new();
    if let Some(found) = &r.interrupted_restore {
        out.push_str(&format::recovered(found));
        // What `--continue` and `--abort` left as it was: the files written since the kill,
        // which the user must be able to see are still there.
        let kept: Vec<_> = r.plan.iter().filter(|e| e.action == "keep").collect();
        if !kept.is_empty() {
            out.push_str(&format!(
                "left as found, written since the restore began ({}):\n",
                match kept.len() {
                    1 => "1 entry".to_owned(),
                    n => format!("{n} entries"),
                }
            ));
            for entry in kept {
                out.push_str(&format!(
                    "  {:<8} {} ({})\n",
                    entry.action,
                    format::path(&entry.path),
                    entry.kind
                ));
            }
        }
        return out;
    }
    if r.dry_run {
        let count = match (r.mode, r.plan.len()) {
            (_, 0) => "nothing differs".to_owned(),
            (RestoreMode::NewDirectory, 1) => "1 entry to create".to_owned(),
            (RestoreMode::NewDirectory, n) => format!("{n} entries to create"),
            (_, 1) => "1 change".to_owned(),
            (_, n) => format!("{n} changes"),
        };
        out.push_str(&format!(
            "would restore {} into {}: {count}\n",
            format::label(&r.snapshot),
            format::path(&r.destination)
        ));
    } else {
        out.push_str(&format!(
            "restored {} into {}: {} files written ({})\n",
            format::label(&r.snapshot),
            format::path(&r.destination),
            r.files_written,
            format::bytes(r.bytes_written)
        ));
    }
    if let Some(safety) = &r.safety_snapshot {
        out.push_str(&format!("safety snapshot of the previous state: {}\n", safety.id));
    }
    if r.mode == RestoreMode::InPlace && !r.dry_run && r.plan.is_empty() && r.files_written == 0 {
        out.push_str("nothing differed\n");
    }
    // A restore into a new directory lists its entries only when asked for a dry run: a real
    // one creates them all, which the counts above already say.
    if r.mode == RestoreMode::InPlace || r.dry_run {
        for entry in &r.plan {
            out.push_str(&format!("  {:<8} {} ({})\n", entry.action, format::path(&entry.path), entry.kind));
        }
    }
    out
}
