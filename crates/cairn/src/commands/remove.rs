//! `cairn remove REF…` or `cairn remove --retain-…` (alias `rm`).

use cairn_lib::ops::remove::{RemoveOptions, RemoveResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn remove`: the engine's options.
#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    options: RemoveOptions,
}

pub fn run(global: &GlobalArgs, args: RemoveArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    if super::moment::remove_if_moments(&store, &args.options, printer)? {
        return Ok(());
    }
    let result = store.remove(&args.options, &call_context())?;
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
        out.push_str("run `cairn gc --now` to reclaim the space their data used (a plain `cairn gc` keeps data written within the last gc.grace, 1h by default)\n");
    }
    out
}
