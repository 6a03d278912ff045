//! `cairn export REF --to FILE`.

use cairn_lib::ops::archive::{ExportOptions, ExportResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    options: ExportOptions,
}

pub fn run(global: &GlobalArgs, args: ExportArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let options = args.options;
    let result = store.export(&options, &call_context())?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &ExportResult) -> String {
    format!(
        "exported {} of {} to {}\n  {} entries, {} of content, compression: {}\n",
        format::label(&r.snapshot),
        format::path(&r.snapshot.target),
        format::path(&r.file.display().to_string()),
        r.entries,
        format::bytes(r.bytes),
        r.compression
    )
}
