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
    if options.target.is_empty() {
        // By default the snapshot is of a directory named after the archive, here: an
        // in-place restore of it then extracts the archive as `tar xf` into that directory.
        options.target = default_target(&options.file);
    }
    let result = store.import(&options)?;
    printer.result(&result, human);
    Ok(())
}

/// `proj.tar.gz` → `proj`, in the current directory.
fn default_target(file: &std::path::Path) -> String {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let lower = name.to_ascii_lowercase();
    let stem_len = [".tar.gz", ".tar.zst", ".tgz", ".tzst", ".tar"]
        .iter()
        .find(|ext| lower.ends_with(*ext) && lower.len() > ext.len())
        .map(|ext| name.len() - ext.len())
        .unwrap_or(name.len());
    name[..stem_len].to_owned()
}

fn human(r: &ImportResult) -> String {
    let s = &r.snapshot;
    format!("imported {} as {} of {}\n", r.file.display(), format::label(s), s.target)
        + &format::capture_stats(s, false)
}
