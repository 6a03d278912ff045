//! `cairn import FILE [--target DIR]`.

use cairn_lib::ops::archive::{ImportOptions, ImportResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    options: ImportOptions,
    /// The session to import into (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: ImportArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let mut options = args.options;
    options.session = session_choice(args.session.as_deref());
    let result = store.import(&options)?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &ImportResult) -> String {
    let s = &r.snapshot;
    format!("imported {} as {} of {}\n", r.file.display(), format::label(s), s.target)
        + &format::capture_stats(s, false)
}
