//! `cairn gc [--now] [--prune-orphans]`: what it freed, and what the grace period held.

use cairn_lib::ops::gc::{GcOptions, GcResult};

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn gc`: the engine's options as they are.
pub type GcArgs = GcOptions;

pub fn run(global: &GlobalArgs, args: GcArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let result = printer.with_progress("collecting garbage", || store.gc(&args))?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &GcResult) -> String {
    let mut out = format!(
        "removed {} pack(s), rewrote {}, dropped {} blob(s): freed {}, the store holds {} ({})\n",
        r.packs_removed,
        r.packs_rewritten,
        r.blobs_removed,
        format::bytes(r.bytes_freed),
        format::bytes(r.bytes_kept),
        format::millis(r.duration_ms)
    );
    if r.records_removed > 0 {
        out.push_str(&format!("deleted {} snapshot record(s) no catalog needs\n", r.records_removed));
    }
    if r.stat_caches_dropped > 0 {
        out.push_str(&format!(
            "dropped {} stat cache(s) of directories that no longer exist\n",
            r.stat_caches_dropped
        ));
    }
    if r.bytes_held > 0 {
        // Else a gc right after a remove reads as one that found nothing to free.
        out.push_str(&format!(
            "held {} of unreferenced data in {} pack(s) written within gc.grace; a gc after {} frees it, or `cairn gc --now` at once\n",
            format::bytes(r.bytes_held),
            r.packs_held,
            r.held_until.as_deref().unwrap_or("the grace period"),
        ));
    }
    for line in &r.kept {
        out.push_str(&format!("{line}\n"));
    }
    out
}
