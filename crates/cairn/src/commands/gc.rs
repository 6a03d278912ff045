//! `cairn gc`.

use cairn_lib::ops::gc::GcResult;
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::open_store;
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn gc`.
#[derive(Debug, Args)]
pub struct GcArgs {}

pub fn run(global: &GlobalArgs, _args: GcArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let result = printer.with_progress("collecting garbage", || store.gc())?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &GcResult) -> String {
    format!(
        "removed {} pack(s), rewrote {}, dropped {} blob(s): freed {}, the store holds {} ({})\n",
        r.packs_removed,
        r.packs_rewritten,
        r.blobs_removed,
        format::bytes(r.bytes_freed),
        format::bytes(r.bytes_kept),
        format::millis(r.duration_ms)
    )
}
