//! `cairn import FILE [--target DIR]`.

use cairn_lib::ops::archive::{ImportOptions, ImportResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    options: ImportOptions,
}

pub fn run(global: &GlobalArgs, args: ImportArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let options = args.options;
    let result = store.import(&options, &call_context())?;
    printer.result(&result, human);
    Ok(())
}

fn human(r: &ImportResult) -> String {
    let s = &r.snapshot;
    let file = r.file.display().to_string();
    format!("imported {} as {} of {}\n", format::path(&file), format::label(s), format::path(&s.target))
        + &format::capture_stats(s, false)
}
