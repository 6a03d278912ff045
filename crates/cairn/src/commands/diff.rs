//! `cairn diff A [B]`.

use cairn_lib::ops::diff::{DiffOptions, DiffResult};
use clap::Args;

use crate::commands::GlobalArgs;
use crate::context::{open_store, session_choice};
use crate::error::CommandResult;
use crate::printer::Printer;

/// Arguments of `cairn diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older snapshot.
    from: String,
    /// The newer snapshot; omit it to compare with the live state.
    to: Option<String>,
    /// The target the references are resolved among.
    #[arg(long)]
    target: Option<String>,
    /// Show unified diffs of text files.
    #[arg(long, short)]
    patch: bool,
    /// Show per-file line counts, like `git diff --stat`.
    #[arg(long)]
    stat: bool,
    /// The session (name or id).
    #[arg(long)]
    session: Option<String>,
}

pub fn run(global: &GlobalArgs, args: DiffArgs, printer: &Printer) -> CommandResult {
    let store = open_store(global)?;
    let (patch, stat) = (args.patch, args.stat);
    let result = store.diff(&DiffOptions {
        from: args.from,
        to: args.to,
        target: args.target,
        patch,
        stat,
        session: session_choice(args.session.as_deref()),
    })?;
    printer.result(&result, |r| human(r, patch, stat));
    Ok(())
}

fn human(r: &DiffResult, patch: bool, stat: bool) -> String {
    let mut out = String::new();
    let to = r.to.as_ref().map(|s| s.id.to_string()).unwrap_or_else(|| "the live tree".into());
    out.push_str(&format!("diff {} → {} of {}\n", r.from.id, to, r.target));
    if let Some(transcript) = &r.transcript {
        out.push_str(&super::transcript::human_diff(transcript));
        return out;
    }
    let width = r.entries.iter().map(|e| e.path.chars().count()).max().unwrap_or(0);
    for e in &r.entries {
        let mark = match e.change.as_str() {
            "added" => "A",
            "removed" => "D",
            "type_changed" => "T",
            _ => "M",
        };
        if stat {
            let counts = match (e.lines_added, e.lines_removed) {
                (Some(a), Some(d)) => format!(
                    "{:>5} {}{}",
                    a + d,
                    "+".repeat(a.min(40) as usize),
                    "-".repeat(d.min(40) as usize)
                ),
                _ => "  Bin".to_owned(),
            };
            out.push_str(&format!(" {mark} {:<width$} | {counts}\n", e.path));
        } else {
            let what =
                if e.change == "modified" { format!(" ({})", e.what.join(", ")) } else { String::new() };
            out.push_str(&format!("{mark} {}{what}\n", e.path));
        }
        if let (true, Some(p)) = (patch, &e.patch) {
            out.push_str(p);
        }
    }
    let s = &r.summary;
    out.push_str(&format!(
        "{} added, {} removed, {} modified, {} unchanged\n",
        s.added, s.removed, s.modified, s.unchanged
    ));
    out
}
