//! `cairn show REF`: a snapshot, or a moment when REF names one.

use cairn_lib::Snapshot;
use cairn_lib::ops::list::ShowOptions;

use crate::commands::GlobalArgs;
use crate::context::{call_context, open_store};
use crate::error::CommandResult;
use crate::format;
use crate::printer::Printer;

/// Arguments of `cairn show`: the engine's options as they are.
pub type ShowArgs = ShowOptions;

pub fn run(global: &GlobalArgs, args: ShowArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    if super::moment::show_if_moment(&store, &args, printer)? {
        return Ok(());
    }
    let snapshot = store.show(&args, &call_context())?;
    printer.result(&snapshot, human);
    Ok(())
}

pub fn human(s: &Snapshot) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    line("id", s.id.to_string());
    line("name", s.name.as_deref().map_or("-".into(), |n| format::path(n).into_owned()));
    line("target", format!("{} ({})", format::path(&s.target), s.kind));
    line("created", s.created_at.clone());
    if let Some(d) = &s.description {
        line("description", format::text(d).into_owned());
    }
    if s.safety {
        line("safety", "yes (taken before a restore)".into());
    }
    line(
        "files",
        format!(
            "{} ({}), {} dirs, {} links",
            s.stats.files,
            format::bytes(s.stats.bytes),
            s.stats.dirs,
            s.stats.symlinks
        ),
    );
    line(
        "stored",
        format!(
            "{} new, {} after compression, in {}",
            format::bytes(s.stats.new_bytes),
            format::bytes(s.stats.stored_bytes),
            format::millis(s.stats.duration_ms)
        ),
    );
    let nc = format::not_covered(&s.not_covered);
    out.push_str(if nc.is_empty() { "not covered: nothing\n" } else { &nc });
    out
}
