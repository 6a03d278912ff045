//! `cairn export REF --to FILE`.

use cairn_lib::ops::archive::{ExportOptions, ExportResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    options: ExportOptions,
    /// The session to look the snapshot up in (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: ExportArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let mut options = args.options;
    options.session = session_choice(args.session.as_deref());
    let result = store.export(&options)?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &ExportResult) -> String {
    format!(
        "exported {} of {} to {}\n  {} entries, {} of content, compression: {}\n",
        format::label(&r.snapshot),
        r.snapshot.target,
        r.file.display(),
        r.entries,
        format::bytes(r.bytes),
        r.compression
    )
}
