//! `cairn save [TARGET] [MORE…]`: the engine's one save entry point ([`Store::save_targets`])
//! decides whether it is a snapshot or a moment; this renders what it made. A directory the
//! store's watcher watches is saved by the watcher ([`save_by_watcher`]), which has the store
//! open already; this command then only prints its snapshot.
//!
//! [`Store::save_targets`]: cairn_lib::Store::save_targets

use cairn_lib::ops::save::{Progress, SaveOptions, SaveResult, Saved};
use cairn_lib::ops::transcript::AgentPlaces;
use cairn_lib::ops::watch::save_by_watcher;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store, store_path};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn save`: the engine's options.
#[derive(Debug, Args)]
pub struct SaveArgs {
    #[command(flatten)]
    options: SaveOptions,
}

pub fn run(global: &GlobalArgs, args: SaveArgs, printer: &Printer) -> CommandResult {
    let options = &args.options;
    // Before the store is opened: the watcher has it open.
    if let Ok(dir) = store_path(global)
        && let Some(saved) =
            printer.with_progress("saving", || save_by_watcher(&dir, options, &call_context()))
    {
        for line in &saved.notices {
            Printer::notice(line);
        }
        printer.result(&saved.result, human);
        return Ok(());
    }
    let store = open_store(global)?;
    // Only `transcript:auto` asks where the agents are, so a save without it needs no HOME.
    let places = if options.targets.iter().any(|t| t == "transcript:auto") {
        super::moment::transcript_places()?
    } else {
        AgentPlaces::default()
    };
    let progress = Progress::default();
    let save = || store.save_targets(options, &places, &call_context(), &progress);
    // One target shows a directory scan's counts; a moment shows that it is under way.
    let saved = if options.targets.is_empty() {
        printer.with_counts("saving", Some(&progress), save)?
    } else {
        printer.with_progress("saving", save)?
    };
    match saved {
        Saved::Snapshot(result) => printer.result(&result, human),
        Saved::Moment(result) => printer.result(&result, super::moment::human_save),
    }
    Ok(())
}

fn human(r: &SaveResult) -> String {
    let s = &r.snapshot;
    let mut out = format!("saved {} of {}\n", format::label(s), s.target) + &format::capture_stats(s, true);
    out.push_str(&format::not_covered(&s.not_covered));
    for removed in &r.removed_by_policy {
        out.push_str(&format!("removed by the keep policy: {}\n", format::label(removed)));
    }
    out
}
